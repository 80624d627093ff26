// SPDX-License-Identifier: MIT
/*
 * rpcrdma-nfsd - serve one directory over NFSv3 on RPC-over-RDMA, with
 * MOUNT v3 and the lock manager (NLM v4, NSM) over TCP.  See man/rpcrdma-nfsd.8.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <ifaddrs.h>
#include <limits.h>
#include <net/if.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <rpcrdma/capture.h>
#include <rpcrdma/nfs3.h>
#include <rpcrdma/nfs4.h>
#include <rpcrdma/nlm.h>
#include <rpcrdma/svc.h>

#include "notify/nfsd_notify.h"

#define PROG "rpcrdma-nfsd"
#define DEFAULT_KEY_FILE "/var/lib/rpcrdma/nfsd-handle.key"
#define MAX_NETS 64

struct allow_net {
	struct sockaddr_storage an_net;
	unsigned an_prefix;
};

struct allow_list {
	struct allow_net al_nets[MAX_NETS];
	unsigned al_n;
};

static struct rpcrdma_svc *g_svc;

/* SIGHUP: the thread that reloads the exports file (--exports). */
struct reloader {
	struct rpcrdma_nfs3_server *rl_srv;
	const char *rl_file;
	pthread_t rl_thread;
	atomic_bool rl_stop;
};

static void usage(FILE *f)
{
	fprintf(f,
"Usage: " PROG " --export DIR [options]\n"
"       " PROG " --exports FILE [options]\n"
"Serve DIR, or the exports FILE lists (exports(5) syntax), over NFSv3 and\n"
"NFSv4.1 on RPC-over-RDMA (RFC 8166/8267) and on TCP (RFC 5531, port 2049),\n"
"MOUNT v3 over TCP.\n"
"\n"
"  -e, --export DIR        one directory to export, read-write, to the\n"
"                          --allow networks\n"
"      --exports FILE      the exports and their clients and options\n"
"                          (SIGHUP reads it again)\n"
"  -l, --listen ADDR       local address for RDMA and MOUNT (default: any)\n"
"  -p, --port N            RPC-over-RDMA port (default 20049)\n"
"  -m, --mount-port N      MOUNT TCP port (default 20048)\n"
"  -a, --allow CIDR        with --export: allow clients in CIDR (repeatable;\n"
"                          default: the listen address's subnet(s), loopback)\n"
"  -t, --threads N         worker threads (default 4)\n"
"      --transport-threads N  threads that own the connections and their\n"
"                          completions, each with --threads/N workers (at\n"
"                          least one); default: one per CPU it may run on\n"
"                          (taskset), at most --threads\n"
"      --credits N         most credits granted per connection (default 128,\n"
"                          1..4096; a connection starts at 16, grows with load)\n"
"      --memory SIZE       registered-memory budget, e.g. 512M or 4G (default:\n"
"                          a quarter of the machine's memory, at least 64M)\n"
"      --max-connections N connections served at once; more are refused\n"
"                          (default: as many idle ones as the budget holds)\n"
"      --max-connections-per-host N  connections from one host at once\n"
"                          (1..65536; default: --max-connections / 8, at\n"
"                          least 16, the most a client's nconnect opens;\n"
"                          a host: an IPv4 address or an IPv6 /64)\n"
"      --idle-timeout S    close a connection no call came on for S seconds,\n"
"                          with nothing in progress and no NFSv4.1 back\n"
"                          channel on it (default 360, as knfsd; 0: never)\n"
"      --file-cache N      open files kept for READ/WRITE/GETATTR/COMMIT\n"
"                          (default 1024; 0 turns the cache off)\n"
"      --file-cache-idle S close cached files and directories no call used\n"
"                          for S to 2S seconds (default 2; 0: never)\n"
"      --poll              busy-poll completions (lower latency, one core busy)\n"
"      --reply-post MODE   who posts a worker's reply: auto (default: the\n"
"                          worker on hardware, the transport thread with\n"
"                          Soft-RoCE and siw), transport, or worker\n"
"      --workers-only      serve every call on a worker thread (default: calls\n"
"                          that need no identity switch and no disk wait run\n"
"                          on the transport thread, without a hand-off)\n"
"      --no-nfs4           serve NFSv3 only (default: also NFSv4.1, program\n"
"                          100003 version 4, over the same exports: sessions\n"
"                          with a back channel on the RDMA connection, read\n"
"                          delegations; clients recorded in --state-dir\n"
"                          reclaim in the --grace period; docs/nfs4.md)\n"
"      --nfs4              serve NFSv4.1 too (the default; kept for scripts)\n"
"      --no-delegations    grant no NFSv4.1 read delegation\n"
"      --lease SECONDS     NFSv4.1 lease time, 10..3600 (default 90): a client\n"
"                          that stops renewing keeps its state until another\n"
"                          client, or an NLM locker, conflicts with it\n"
"      --nfs4-clients N    NFSv4.1 clients at once, 16..8192; as many sessions,\n"
"                          32 opens, 8 lock states, 8 delegations per client\n"
"                          (about 79 KiB each; default: what 1/16 of --memory\n"
"                          holds, at least 128)\n"
"  -k, --handle-key FILE   file handle key (default " DEFAULT_KEY_FILE ")\n"
"      --no-root-squash    with --export: do not map uid/gid 0 to 65534\n"
"      --async             with --export: reply to CREATE, REMOVE, RENAME, SETATTR...\n"
"                          before the change is on disk (default: sync, fsync first)\n"
"      --backend NAME[:OPT=V...]  with --export: what serves DIR: posix (default:\n"
"                          the local file system) or memory (an in-memory tree\n"
"                          that DIR only names; options bytes=SIZE, nodes=N);\n"
"                          exports files: backend=NAME[:OPT=V...]\n"
"      --stats             print the final counters as JSON on exit\n"
"      --control PATH      control socket for rpcrdma-stat (default\n"
"                          " RPCRDMA_SVC_CONTROL_DIR "/PORT.sock; 'none': no socket)\n"
"      --metrics ADDR:PORT serve Prometheus metrics at http://ADDR:PORT/metrics\n"
"                          ([ADDR]:PORT for IPv6, :PORT for any address)\n"
"      --capture FILE      write every RPC-over-RDMA message to FILE (pcap,\n"
"                          for Wireshark/tshark; mode 0600: it holds credentials,\n"
"                          file handles and file data); FILE must not exist or\n"
"                          be an earlier capture (a symlink is refused)\n"
"      --capture-size SIZE start a new file at SIZE bytes (default 100M; 0: no\n"
"                          limit)\n"
"      --capture-files N   keep N files (FILE, FILE.1 ...; default 10; 1: stop\n"
"                          capturing when FILE is full)\n"
"      --capture-data N    also write the first N bytes of every RDMA Read\n"
"                          and RDMA Write (default 0: none)\n"
"      --tcp-port N        NFS over TCP port (default 2049; when not given and\n"
"                          the port is taken, RDMA only, with a warning)\n"
"      --no-tcp            serve NFS over RDMA only\n"
"      --rpcbind           register MOUNT, NLM, NSM (tcp) and NFS (rdma, rdma6,\n"
"                          and tcp, tcp6 when serving TCP)\n"
"                          with rpcbind, unregistered at exit\n"
"      --no-locking        no lock manager (clients must mount with nolock)\n"
"      --nlm-port N        NLM v4 TCP port (default: any free port)\n"
"      --nsm-port N        NSM TCP port (default: any free port)\n"
"      --state-dir DIR     lock manager state and NFSv4.1 client records\n"
"                          (default " RPCRDMA_NLM_STATE_DIR ")\n"
"      --grace SECONDS     grace period after start: only reclaims are\n"
"                          granted, by NLM and NFSv4.1 (default 90, for\n"
"                          NFSv4.1 the --lease; 0: none)\n"
"      --max-locks N       lock records, waiting locks, shares each (default 4096)\n"
"      --nsm-name NAME     our name in reboot notifications (default: the\n"
"                          --listen address, else the host name)\n"
"  -v, --verbose           more logging (repeatable)\n"
"  -h, --help              this text\n");
}

static int parse_uint(const char *s, unsigned long max, unsigned long *out)
{
	char *end;

	if (!*s || *s == '-')
		return -EINVAL;
	errno = 0;
	*out = strtoul(s, &end, 10);
	if (errno || *end || *out > max)
		return -EINVAL;
	return 0;
}

static int add_net(struct allow_list *al, const char *cidr)
{
	if (al->al_n == MAX_NETS)
		return -ENOSPC;
	if (rpcrdma_nfs3_cidr_parse(cidr, &al->al_nets[al->al_n].an_net,
				    &al->al_nets[al->al_n].an_prefix))
		return -EINVAL;
	al->al_n++;
	return 0;
}

static unsigned mask_bits(const struct sockaddr *mask)
{
	const uint8_t *p;
	unsigned n, bits = 0;

	if (mask->sa_family == AF_INET) {
		p = (const uint8_t *)&((const struct sockaddr_in *)mask)->sin_addr;
		n = 4;
	} else {
		p = ((const struct sockaddr_in6 *)mask)->sin6_addr.s6_addr;
		n = 16;
	}
	for (unsigned i = 0; i < n; i++)
		bits += (unsigned)__builtin_popcount(p[i]);
	return bits;
}

static bool same_addr(const struct sockaddr *a, const struct sockaddr_storage *b)
{
	if (a->sa_family != b->ss_family)
		return false;
	if (a->sa_family == AF_INET)
		return !memcmp(&((const struct sockaddr_in *)a)->sin_addr,
			       &((const struct sockaddr_in *)b)->sin_addr, 4);
	return !memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
		       &((const struct sockaddr_in6 *)b)->sin6_addr, 16);
}

/*
 * The default rule: loopback, plus the subnet of the listen address (of
 * every local interface address when listening on any address).
 */
static int default_allow(struct allow_list *al, const char *listen_addr)
{
	struct sockaddr_storage want;
	unsigned unused;
	struct ifaddrs *ifs, *i;

	add_net(al, "127.0.0.0/8");
	add_net(al, "::1/128");
	if (listen_addr && rpcrdma_nfs3_cidr_parse(listen_addr, &want, &unused))
		return -EINVAL;
	if (getifaddrs(&ifs) < 0)
		return 0; /* loopback only */
	for (i = ifs; i && al->al_n < MAX_NETS; i = i->ifa_next) {
		struct allow_net *n;

		if (!i->ifa_addr || !i->ifa_netmask ||
		    (i->ifa_addr->sa_family != AF_INET &&
		     i->ifa_addr->sa_family != AF_INET6) ||
		    (i->ifa_flags & IFF_LOOPBACK))
			continue;
		if (listen_addr && !same_addr(i->ifa_addr, &want))
			continue;
		n = &al->al_nets[al->al_n++];
		memset(&n->an_net, 0, sizeof(n->an_net));
		memcpy(&n->an_net, i->ifa_addr, i->ifa_addr->sa_family == AF_INET ?
		       sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6));
		n->an_prefix = mask_bits(i->ifa_netmask);
	}
	freeifaddrs(ifs);
	return 0;
}

static void print_allow(const struct allow_list *al, FILE *f)
{
	char buf[INET6_ADDRSTRLEN];

	for (unsigned i = 0; i < al->al_n; i++) {
		const struct sockaddr_storage *s = &al->al_nets[i].an_net;
		const void *a = s->ss_family == AF_INET ?
			(const void *)&((const struct sockaddr_in *)s)->sin_addr :
			(const void *)&((const struct sockaddr_in6 *)s)->sin6_addr;

		inet_ntop(s->ss_family, a, buf, sizeof(buf));
		fprintf(f, PROG ": allowing %s/%u\n", buf, al->al_nets[i].an_prefix);
	}
}

/*
 * shorthand_exports - the exports text --export DIR stands for: DIR
 * (octal-escaped where not plain) to every --allow network, read-write,
 * from any port, with fsid=0 (the id handles had before exports files),
 * served by @backend (NULL: the default).
 */
static char *shorthand_exports(const char *dir, const struct allow_list *al,
			       bool no_squash, bool async, const char *backend)
{
	size_t cap = strlen(dir) * 4 + 1 +
		     al->al_n * (INET6_ADDRSTRLEN + 64 + (backend ? strlen(backend) + 9 : 0)) + 1;
	char *t = malloc(cap), *w = t, buf[INET6_ADDRSTRLEN];

	if (!t)
		return NULL;
	for (const unsigned char *p = (const unsigned char *)dir; *p; p++) {
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		    (*p >= '0' && *p <= '9') || strchr("/._-+,:@%=", *p))
			*w++ = (char)*p;
		else
			w += sprintf(w, "\\%03o", *p);
	}
	for (unsigned i = 0; i < al->al_n; i++) {
		const struct sockaddr_storage *s = &al->al_nets[i].an_net;
		const void *a = s->ss_family == AF_INET ?
			(const void *)&((const struct sockaddr_in *)s)->sin_addr :
			(const void *)&((const struct sockaddr_in6 *)s)->sin6_addr;

		inet_ntop(s->ss_family, a, buf, sizeof(buf));
		w += sprintf(w, " %s/%u(rw,insecure,fsid=0,%s,%s%s%s)", buf,
			     al->al_nets[i].an_prefix,
			     no_squash ? "no_root_squash" : "root_squash",
			     async ? "async" : "sync", backend ? ",backend=" : "",
			     backend ? backend : "");
	}
	*w = '\0';
	return t;
}

static void *reload_thread(void *arg)
{
	struct reloader *rl = arg;
	sigset_t set;
	int sig;

	sigemptyset(&set);
	sigaddset(&set, SIGHUP);
	while (sigwait(&set, &sig) == 0 && !atomic_load(&rl->rl_stop)) {
		struct rpcrdma_nfs3_exports *xt = NULL;
		char msg[512];
		int err;

		nfsd_notify_reloading();
		err = rpcrdma_nfs3_exports_load(rl->rl_file, &xt, msg, sizeof(msg));
		if (!err)
			err = rpcrdma_nfs3_server_reload(rl->rl_srv, xt, msg, sizeof(msg));
		if (err)
			fprintf(stderr, PROG ": SIGHUP: %s; the exports in force stay\n", msg);
		else
			fprintf(stderr, PROG ": SIGHUP: %s reloaded, %u exports\n",
				rl->rl_file, rpcrdma_nfs3_exports_count(xt));
		rpcrdma_nfs3_exports_free(xt);
		nfsd_notify_ready(NULL);
	}
	return NULL;
}

static void on_stop(int sig)
{
	(void)sig;
	if (g_svc)
		rpcrdma_svc_stop(g_svc);
}

static void on_usr1(int sig)
{
	(void)sig;
	if (g_svc)
		rpcrdma_svc_dump_stats(g_svc);
}

static int load_key(const char *path, uint8_t key[RPCRDMA_NFS3_KEY_BYTES],
		    bool is_default)
{
	int err;

	if (is_default)
		mkdir("/var/lib/rpcrdma", 0700); /* may exist */
	err = rpcrdma_nfs3_load_key(path, key);
	if (err)
		fprintf(stderr, PROG ": handle key %s: %s%s\n", path, strerror(-err),
			(err == -EACCES || err == -EPERM) && geteuid() ?
				" (rpcrdma-nfsd runs as root)" : "");
	return err;
}

enum { OPT_NO_ROOT_SQUASH = 256, OPT_ASYNC, OPT_STATS, OPT_RPCBIND, OPT_CREDITS, OPT_POLL,
       OPT_MEMORY, OPT_MAX_CONNS, OPT_FILE_CACHE, OPT_FILE_CACHE_IDLE, OPT_EXPORTS, OPT_WORKERS_ONLY, OPT_NFS4,
       OPT_NO_DELEG, OPT_NO_NFS4, OPT_MAX_CONNS_HOST, OPT_IDLE_TIMEOUT,
       OPT_CONTROL, OPT_METRICS, OPT_CAPTURE, OPT_CAPTURE_SIZE, OPT_CAPTURE_FILES,
       OPT_CAPTURE_DATA,
       OPT_NO_LOCKING, OPT_NLM_PORT, OPT_NSM_PORT, OPT_STATE_DIR, OPT_GRACE,
       OPT_MAX_LOCKS, OPT_NSM_NAME, OPT_TRANSPORT_THREADS, OPT_REPLY_POST,
       OPT_LEASE, OPT_NFS4_CLIENTS, OPT_BACKEND, OPT_TCP_PORT, OPT_NO_TCP };

/* SIZE: a number of bytes with an optional K, M, G or T suffix (binary). */
static int parse_size(const char *s, uint64_t *out)
{
	unsigned long long v;
	unsigned shift = 0;
	char *end;

	if (!*s || *s == '-')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s)
		return -EINVAL;
	switch (*end) {
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	case 't': case 'T': shift = 40; end++; break;
	default: break;
	}
	if (*end == 'i' && shift)
		end++;
	if (*end == 'B' || *end == 'b')
		end++;
	if (*end || v > (UINT64_MAX >> shift))
		return -EINVAL;
	*out = (uint64_t)v << shift;
	return 0;
}

/*
 * nfs4_default_clients - NFSv4.1 clients for the registered-memory budget
 * @memory (0: the transport's default, a quarter of the machine's memory,
 * at least 64 MiB): the state tables take at most a sixteenth of it, at
 * least RPCRDMA_NFS4_CLIENTS_DEFAULT clients, at most
 * RPCRDMA_NFS4_CLIENTS_MAX.
 */
static uint32_t nfs4_default_clients(uint64_t memory)
{
	struct rpcrdma_nfs4_limits l;
	uint64_t n;

	if (!memory) {
		long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
		uint64_t phys = pages > 0 && psz > 0 ? (uint64_t)pages * (uint64_t)psz : 0;

		memory = phys / 4 > (64ull << 20) ? phys / 4 : 64ull << 20;
	}
	if (rpcrdma_nfs4_limits(0, &l) || !l.n4l_client_bytes)
		return RPCRDMA_NFS4_CLIENTS_DEFAULT;
	n = memory / 16 / l.n4l_client_bytes;
	if (n < RPCRDMA_NFS4_CLIENTS_DEFAULT)
		n = RPCRDMA_NFS4_CLIENTS_DEFAULT;
	if (n > RPCRDMA_NFS4_CLIENTS_MAX)
		n = RPCRDMA_NFS4_CLIENTS_MAX;
	return (uint32_t)n;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "export", required_argument, NULL, 'e' },
		{ "exports", required_argument, NULL, OPT_EXPORTS },
		{ "listen", required_argument, NULL, 'l' },
		{ "port", required_argument, NULL, 'p' },
		{ "mount-port", required_argument, NULL, 'm' },
		{ "allow", required_argument, NULL, 'a' },
		{ "threads", required_argument, NULL, 't' },
		{ "credits", required_argument, NULL, OPT_CREDITS },
		{ "memory", required_argument, NULL, OPT_MEMORY },
		{ "max-connections", required_argument, NULL, OPT_MAX_CONNS },
		{ "max-connections-per-host", required_argument, NULL, OPT_MAX_CONNS_HOST },
		{ "idle-timeout", required_argument, NULL, OPT_IDLE_TIMEOUT },
		{ "file-cache", required_argument, NULL, OPT_FILE_CACHE },
		{ "file-cache-idle", required_argument, NULL, OPT_FILE_CACHE_IDLE },
		{ "poll", no_argument, NULL, OPT_POLL },
		{ "workers-only", no_argument, NULL, OPT_WORKERS_ONLY },
		{ "nfs4", no_argument, NULL, OPT_NFS4 },
		{ "no-nfs4", no_argument, NULL, OPT_NO_NFS4 },
		{ "no-delegations", no_argument, NULL, OPT_NO_DELEG },
		{ "transport-threads", required_argument, NULL, OPT_TRANSPORT_THREADS },
		{ "reply-post", required_argument, NULL, OPT_REPLY_POST },
		{ "handle-key", required_argument, NULL, 'k' },
		{ "no-root-squash", no_argument, NULL, OPT_NO_ROOT_SQUASH },
		{ "async", no_argument, NULL, OPT_ASYNC },
		{ "backend", required_argument, NULL, OPT_BACKEND },
		{ "stats", no_argument, NULL, OPT_STATS },
		{ "control", required_argument, NULL, OPT_CONTROL },
		{ "metrics", required_argument, NULL, OPT_METRICS },
		{ "capture", required_argument, NULL, OPT_CAPTURE },
		{ "capture-size", required_argument, NULL, OPT_CAPTURE_SIZE },
		{ "capture-files", required_argument, NULL, OPT_CAPTURE_FILES },
		{ "capture-data", required_argument, NULL, OPT_CAPTURE_DATA },
		{ "rpcbind", no_argument, NULL, OPT_RPCBIND },
		{ "tcp-port", required_argument, NULL, OPT_TCP_PORT },
		{ "no-tcp", no_argument, NULL, OPT_NO_TCP },
		{ "no-locking", no_argument, NULL, OPT_NO_LOCKING },
		{ "nlm-port", required_argument, NULL, OPT_NLM_PORT },
		{ "nsm-port", required_argument, NULL, OPT_NSM_PORT },
		{ "state-dir", required_argument, NULL, OPT_STATE_DIR },
		{ "grace", required_argument, NULL, OPT_GRACE },
		{ "lease", required_argument, NULL, OPT_LEASE },
		{ "nfs4-clients", required_argument, NULL, OPT_NFS4_CLIENTS },
		{ "max-locks", required_argument, NULL, OPT_MAX_LOCKS },
		{ "nsm-name", required_argument, NULL, OPT_NSM_NAME },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static struct allow_list allow;
	struct rpcrdma_nfs3_config ncfg = { 0 };
	struct rpcrdma_svc_config scfg = { 0 };
	struct rpcrdma_nfs3_server *srv = NULL;
	struct rpcrdma_nfs3_exports *xt = NULL;
	struct reloader rel = { 0 };
	bool reloading = false;
	const char *exports_file = NULL;
	char msg[512];
	sigset_t hup;
	struct rpcrdma_mnt *mnt = NULL;
	const char *const *names;
	uint32_t nnames;
	struct rpcrdma_svc_control *control = NULL;
	const char *control_path = NULL, *metrics_addr = NULL;
	struct rpcrdma_svc_metrics *metrics = NULL;
	struct rpcrdma_capture_config ccfg = { 0 };
	struct rpcrdma_capture *capture = NULL;
	char control_buf[108];
	struct rpcrdma_nlm *nlm = NULL;
	struct rpcrdma_nlm_config lcfg = { 0 };
	struct rpcrdma_nlm_stats lst;
	bool locking = true;
	struct sigaction sa = { 0 };
	const char *export_arg = NULL, *listen_addr = NULL;
	const char *key_file = DEFAULT_KEY_FILE;
	unsigned long port = RPCRDMA_NFS_PORT, mport = RPCRDMA_MNT_PORT;
	unsigned long tcp_port = RPCRDMA_SVC_TCP_PORT;
	bool tcp = true, tcp_port_given = false, tcp_rpcbind = false;
	unsigned long threads = 0, credits = 128, max_conns = 0, fcache = 0, v;
	unsigned long fcache_idle = 0;
	unsigned long max_conns_host = 0, idle_timeout = RPCRDMA_SVC_IDLE_DEFAULT;
	bool fcache_set = false, fcache_idle_set = false;
	struct rpcrdma_nfs3_fcache_stats fst;
	uint64_t memory = 0;
	struct rlimit rl;
	bool stats_json = false, rpcbind = false, no_squash = false, poll_mode = false;
	bool async = false;
	const char *backend = NULL;
	bool workers_only = false, nfs4 = true, no_deleg = false, nfs4_given = false;
	uint32_t lease = 0; /* --lease: 0 the server's default (90 s) */
	uint32_t nfs4_clients = 0; /* --nfs4-clients: 0 from --memory */
	struct rpcrdma_nfs4_limits n4l;
	struct rpcrdma_nfs4_server *srv4 = NULL;
	struct sockaddr_storage tmp;
	unsigned prefix;
	bool default_key = true;
	char export_path[PATH_MAX];
	struct stat st;
	int verbose = 0, c, err, ret = 1;

	while ((c = getopt_long(argc, argv, "e:l:p:m:a:t:k:vh", opts, NULL)) != -1) {
		switch (c) {
		case 'e':
			export_arg = optarg;
			break;
		case OPT_EXPORTS:
			exports_file = optarg;
			break;
		case 'l':
			if (rpcrdma_nfs3_cidr_parse(optarg, &tmp, &prefix) ||
			    strchr(optarg, '/')) {
				fprintf(stderr, PROG ": --listen: not a numeric address: %s\n",
					optarg);
				return 2;
			}
			listen_addr = optarg;
			break;
		case 'p':
		case 'm':
			if (parse_uint(optarg, 65535, &v) || v == 0) {
				fprintf(stderr, PROG ": --%s: expected a port 1..65535: %s\n",
					c == 'p' ? "port" : "mount-port", optarg);
				return 2;
			}
			*(c == 'p' ? &port : &mport) = v;
			break;
		case 'a':
			err = add_net(&allow, optarg);
			if (err) {
				fprintf(stderr, PROG ": --allow: %s: %s\n", optarg,
					err == -ENOSPC ? "too many networks" :
					"expected ADDR[/PREFIX]");
				return 2;
			}
			break;
		case 't':
			if (parse_uint(optarg, 1024, &threads) || threads == 0) {
				fprintf(stderr, PROG ": --threads: expected 1..1024: %s\n",
					optarg);
				return 2;
			}
			break;
		case OPT_TRANSPORT_THREADS:
			if (parse_uint(optarg, RPCRDMA_SVC_MAX_TRANSPORT_THREADS, &v) || v == 0) {
				fprintf(stderr, PROG ": --transport-threads: expected 1..%u: %s\n",
					RPCRDMA_SVC_MAX_TRANSPORT_THREADS, optarg);
				return 2;
			}
			scfg.sc_transport_threads = (unsigned)v;
			break;
		case OPT_REPLY_POST:
			if (!strcmp(optarg, "auto")) {
				scfg.sc_reply_post = RPCRDMA_SVC_POST_AUTO;
			} else if (!strcmp(optarg, "transport")) {
				scfg.sc_reply_post = RPCRDMA_SVC_POST_TRANSPORT;
			} else if (!strcmp(optarg, "worker")) {
				scfg.sc_reply_post = RPCRDMA_SVC_POST_WORKER;
			} else {
				fprintf(stderr, PROG ": --reply-post: expected auto, transport or worker: %s\n",
					optarg);
				return 2;
			}
			break;
		case OPT_POLL:
			poll_mode = true;
			break;
		case OPT_WORKERS_ONLY:
			workers_only = true;
			break;
		case OPT_NO_DELEG:
			no_deleg = true;
			break;
		case OPT_NFS4:
		case OPT_NO_NFS4:
			if (nfs4_given && nfs4 != (c == OPT_NFS4)) {
				fprintf(stderr, PROG ": --nfs4 and --no-nfs4 contradict each other\n");
				return 2;
			}
			nfs4 = c == OPT_NFS4;
			nfs4_given = true;
			break;
		case OPT_CREDITS:
			if (parse_uint(optarg, 4096, &credits) || credits == 0) {
				fprintf(stderr, PROG ": --credits: expected 1..4096: %s\n",
					optarg);
				return 2;
			}
			break;
		case OPT_MEMORY:
			if (parse_size(optarg, &memory) || memory < (64ull << 20)) {
				fprintf(stderr, PROG ": --memory: expected a size of at least 64M (e.g. 512M, 4G): %s\n",
					optarg);
				return 2;
			}
			break;
		case OPT_FILE_CACHE:
			if (parse_uint(optarg, 1u << 20, &fcache)) {
				fprintf(stderr, PROG ": --file-cache: expected 0..1048576: %s\n",
					optarg);
				return 2;
			}
			fcache_set = true;
			break;
		case OPT_FILE_CACHE_IDLE:
			if (parse_uint(optarg, 86400, &fcache_idle)) {
				fprintf(stderr, PROG ": --file-cache-idle: expected 0..86400 seconds: %s\n",
					optarg);
				return 2;
			}
			fcache_idle_set = true;
			break;
		case OPT_MAX_CONNS:
			if (parse_uint(optarg, 65536, &max_conns) || max_conns == 0) {
				fprintf(stderr, PROG ": --max-connections: expected 1..65536: %s\n",
					optarg);
				return 2;
			}
			break;
		case OPT_MAX_CONNS_HOST:
			if (parse_uint(optarg, 65536, &max_conns_host) || max_conns_host == 0) {
				fprintf(stderr, PROG ": --max-connections-per-host: expected 1..65536: %s\n",
					optarg);
				return 2;
			}
			break;
		case OPT_IDLE_TIMEOUT:
			if (parse_uint(optarg, 86400, &idle_timeout)) {
				fprintf(stderr, PROG ": --idle-timeout: expected 0..86400 seconds: %s\n",
					optarg);
				return 2;
			}
			break;
		case 'k':
			key_file = optarg;
			default_key = false;
			break;
		case OPT_ASYNC:
			async = true;
			break;
		case OPT_BACKEND:
			backend = optarg;
			if (!*backend || backend[0] == ':' ||
			    strspn(backend, "abcdefghijklmnopqrstuvwxyz0123456789_-:=."
					    "ABCDEFGHIJKLMNOPQRSTUVWXYZ") != strlen(backend)) {
				fprintf(stderr, PROG ": --backend: expected a backend name (posix, memory), "
					"then its options as :OPT=VALUE: %s\n", backend);
				return 2;
			}
			break;
		case OPT_NO_ROOT_SQUASH:
			no_squash = true;
			break;
		case OPT_STATS:
			stats_json = true;
			break;
		case OPT_CONTROL:
			if (!*optarg || strlen(optarg) >= sizeof(control_buf)) {
				fprintf(stderr, PROG ": --control: expected a path shorter than %zu bytes, or 'none'\n",
					sizeof(control_buf));
				return 2;
			}
			control_path = optarg;
			break;
		case OPT_METRICS:
			if (rpcrdma_svc_metrics_parse(optarg, &tmp)) {
				fprintf(stderr, PROG ": --metrics: expected ADDR:PORT, [ADDR]:PORT "
					"or :PORT (numeric, port 1..65535): %s\n", optarg);
				return 2;
			}
			metrics_addr = optarg;
			break;
		case OPT_CAPTURE:
			ccfg.cc_path = optarg;
			break;
		case OPT_CAPTURE_SIZE:
			if (parse_size(optarg, &ccfg.cc_max_bytes) ||
			    (ccfg.cc_max_bytes && ccfg.cc_max_bytes < 65536)) {
				fprintf(stderr, PROG ": --capture-size: expected a size of at least 64K (e.g. 100M), or 0: %s\n",
					optarg);
				return 2;
			}
			if (!ccfg.cc_max_bytes) /* 0: no limit */
				ccfg.cc_max_bytes = RPCRDMA_CAPTURE_UNLIMITED;
			break;
		case OPT_CAPTURE_FILES:
			if (parse_uint(optarg, 1000, &v) || v == 0) {
				fprintf(stderr, PROG ": --capture-files: expected 1..1000: %s\n", optarg);
				return 2;
			}
			ccfg.cc_max_files = (uint32_t)v;
			break;
		case OPT_CAPTURE_DATA:
			if (parse_uint(optarg, 1u << 20, &v)) {
				fprintf(stderr, PROG ": --capture-data: expected 0..1048576 bytes: %s\n",
					optarg);
				return 2;
			}
			ccfg.cc_data_bytes = (uint32_t)v;
			break;
		case OPT_RPCBIND:
			rpcbind = true;
			break;
		case OPT_TCP_PORT:
			if (parse_uint(optarg, 65535, &v) || v == 0) {
				fprintf(stderr, PROG ": --tcp-port: expected a port 1..65535: %s\n",
					optarg);
				return 2;
			}
			tcp_port = v;
			tcp_port_given = true;
			break;
		case OPT_NO_TCP:
			tcp = false;
			break;
		case OPT_NO_LOCKING:
			locking = false;
			break;
		case OPT_NLM_PORT:
		case OPT_NSM_PORT:
			if (parse_uint(optarg, 65535, &v) || v == 0) {
				fprintf(stderr, PROG ": --%s: expected a port 1..65535: %s\n",
					c == OPT_NLM_PORT ? "nlm-port" : "nsm-port", optarg);
				return 2;
			}
			*(c == OPT_NLM_PORT ? &lcfg.lc_port : &lcfg.lc_nsm_port) = (uint16_t)v;
			break;
		case OPT_STATE_DIR:
			if (optarg[0] != '/') {
				fprintf(stderr, PROG ": --state-dir: not an absolute path: %s\n",
					optarg);
				return 2;
			}
			lcfg.lc_state_dir = optarg;
			break;
		case OPT_GRACE:
			if (parse_uint(optarg, 86400, &v)) {
				fprintf(stderr, PROG ": --grace: expected 0..86400 seconds: %s\n",
					optarg);
				return 2;
			}
			lcfg.lc_grace_sec = v ? (uint32_t)v : UINT32_MAX;
			break;
		case OPT_LEASE:
			if (parse_uint(optarg, 3600, &v) || v < 10) {
				fprintf(stderr, PROG ": --lease: expected 10..3600 seconds: %s\n",
					optarg);
				return 2;
			}
			lease = (uint32_t)v;
			break;
		case OPT_NFS4_CLIENTS:
			if (parse_uint(optarg, RPCRDMA_NFS4_CLIENTS_MAX, &v) ||
			    v < RPCRDMA_NFS4_CLIENTS_MIN) {
				fprintf(stderr, PROG ": --nfs4-clients: expected %u..%u: %s\n",
					RPCRDMA_NFS4_CLIENTS_MIN, RPCRDMA_NFS4_CLIENTS_MAX, optarg);
				return 2;
			}
			nfs4_clients = (uint32_t)v;
			break;
		case OPT_MAX_LOCKS:
			if (parse_uint(optarg, 1u << 24, &v) || v == 0) {
				fprintf(stderr, PROG ": --max-locks: expected 1..16777216: %s\n",
					optarg);
				return 2;
			}
			lcfg.lc_max_locks = (uint32_t)v;
			break;
		case OPT_NSM_NAME:
			if (!optarg[0] || strlen(optarg) > 1024) {
				fprintf(stderr, PROG ": --nsm-name: expected 1..1024 characters\n");
				return 2;
			}
			lcfg.lc_nsm_name = optarg;
			break;
		case 'v':
			verbose++;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, PROG ": unexpected argument: %s\n", argv[optind]);
		usage(stderr);
		return 2;
	}
	if (no_deleg && !nfs4) {
		fprintf(stderr, PROG ": --no-delegations and --no-nfs4: delegations are NFSv4.1's\n");
		return 2;
	}
	if (lease && !nfs4) {
		fprintf(stderr, PROG ": --lease and --no-nfs4: leases are NFSv4.1's\n");
		return 2;
	}
	if (nfs4_clients && !nfs4) {
		fprintf(stderr, PROG ": --nfs4-clients and --no-nfs4: the tables are NFSv4.1's\n");
		return 2;
	}
	if (!ccfg.cc_path && (ccfg.cc_max_bytes || ccfg.cc_max_files || ccfg.cc_data_bytes)) {
		fprintf(stderr, PROG ": --capture-size, --capture-files and --capture-data need --capture FILE\n");
		return 2;
	}
	if (!export_arg == !exports_file) {
		fprintf(stderr, PROG ": give one of --export DIR and --exports FILE\n");
		usage(stderr);
		return 2;
	}
	if (exports_file && (allow.al_n || no_squash || async || backend)) {
		fprintf(stderr, PROG ": --allow, --no-root-squash, --async and --backend go with "
			"--export; with --exports FILE the file gives clients and options\n");
		return 2;
	}
	/* the gateway's identity across restarts (cephfs resets its old session) */
	err = rpcrdma_nfs3_set_instance(lcfg.lc_state_dir ? lcfg.lc_state_dir
							   : RPCRDMA_NLM_STATE_DIR);
	if (err) {
		fprintf(stderr, PROG ": --state-dir: %s\n", strerror(-err));
		return 2;
	}
	/* how long this start's grace period lasts, the longest of NLM's and
	 * NFSv4.1's: a cephfs export with grace=DIR tells the other gateways
	 * before it resets its previous session (docs/cephfs.md) */
	{
		uint32_t g = lcfg.lc_grace_sec, g4;

		if (g == UINT32_MAX) {
			g = 0;
		} else if (g == 0) {
			g4 = lease ? lease : 90; /* NFSv4.1: the lease */
			g = locking ? RPCRDMA_NLM_GRACE_DEFAULT : 0;
			if (nfs4 && g4 > g)
				g = g4;
		}
		(void)rpcrdma_nfs3_set_instance_grace(g); /* --grace <= 86400 */
	}
	if (exports_file) {
		err = rpcrdma_nfs3_exports_load(exports_file, &xt, msg, sizeof(msg));
		if (err) {
			fprintf(stderr, PROG ": --exports: %s\n", msg);
			return err == -EINVAL || err == -E2BIG || err == -ENOENT ? 2 : 1;
		}
	} else {
		char *text;

		if (backend && strcmp(backend, "posix") && strncmp(backend, "posix:", 6)) {
			/* a name, not a directory of this machine */
			if (export_arg[0] != '/' || strlen(export_arg) >= sizeof(export_path)) {
				fprintf(stderr, PROG ": --export %s: --backend %s needs an absolute path\n",
					export_arg, backend);
				return 2;
			}
			strcpy(export_path, export_arg);
		} else if (!realpath(export_arg, export_path) || stat(export_path, &st) < 0) {
			fprintf(stderr, PROG ": export directory %s: %s\n", export_arg,
				strerror(errno));
			return 1;
		} else if (!S_ISDIR(st.st_mode)) {
			fprintf(stderr, PROG ": export %s: not a directory\n", export_arg);
			return 1;
		}
		if (!allow.al_n && default_allow(&allow, listen_addr) < 0) {
			fprintf(stderr, PROG ": --listen: bad address %s\n", listen_addr);
			return 2;
		}
		if (verbose)
			print_allow(&allow, stderr);
		text = shorthand_exports(export_path, &allow, no_squash, async, backend);
		err = text ? rpcrdma_nfs3_exports_parse("--export", text, &xt, msg,
							 sizeof(msg)) : -ENOMEM;
		free(text);
		if (err) {
			fprintf(stderr, PROG ": --export %s: %s\n", export_path,
				err == -ENOMEM ? "out of memory" : msg);
			return 1;
		}
	}

	if (load_key(key_file, ncfg.nc_key, default_key))
		goto out_xt;
	ncfg.nc_max_payload = 1u << 20;
	ncfg.nc_log = stderr;
	ncfg.nc_verbose = verbose;
	if (fcache_set)
		ncfg.nc_fcache_entries = fcache ? (uint32_t)fcache : RPCRDMA_NFS3_FCACHE_OFF;
	if (fcache_idle_set)
		ncfg.nc_fcache_idle_ms = fcache_idle ? (uint32_t)fcache_idle * 1000u :
				 RPCRDMA_NFS3_FCACHE_IDLE_NEVER;
	err = rpcrdma_nfs3_server_create(&ncfg, xt, &srv, msg, sizeof(msg));
	if (err) {
		fprintf(stderr, PROG ": %s%s\n", msg, err == -EPERM ?
			" (file handles need CAP_DAC_READ_SEARCH: run as root)" : "");
		goto out_xt;
	}
	/* SIGHUP goes to the reload thread only: every thread from here on
	 * (the server's workers too) inherits it blocked */
	sigemptyset(&hup);
	sigaddset(&hup, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &hup, NULL);
	if (exports_file) {
		rel.rl_srv = srv;
		rel.rl_file = exports_file;
		err = pthread_create(&rel.rl_thread, NULL, reload_thread, &rel);
		if (err) {
			fprintf(stderr, PROG ": reload thread: %s\n", strerror(err));
			goto out_export;
		}
		reloading = true;
	}

	scfg.sc_listen = listen_addr;
	scfg.sc_port = (uint16_t)port;
	scfg.sc_max_payload = ncfg.nc_max_payload;
	scfg.sc_threads = (unsigned)threads;
	scfg.sc_credits = (uint32_t)credits;
	scfg.sc_memory = memory;
	scfg.sc_max_connections = (uint32_t)max_conns;
	scfg.sc_max_conns_per_host = (uint32_t)max_conns_host; /* 0: the library's share */
	scfg.sc_idle_timeout = idle_timeout ? (uint32_t)idle_timeout : RPCRDMA_SVC_IDLE_NEVER;
	/* Each connection's cm_id costs no descriptor, but the files being
	 * served do: take the hard limit.  MOUNT's, NLM's and NSM's TCP
	 * connections are capped apart (1024 in all and at most a quarter of
	 * this limit, 16 per address: src/common/rpc_tcp.h), so peers cannot
	 * take the open-file cache's descriptors. */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	scfg.sc_poll = poll_mode;
	scfg.sc_accept = rpcrdma_nfs3_server_allows;
	scfg.sc_accept_arg = srv;
	scfg.sc_log = stderr;
	scfg.sc_verbose = verbose;
	err = rpcrdma_svc_create(&scfg, &g_svc);
	if (err) {
		fprintf(stderr, PROG ": cannot listen on %s port %lu: %s%s\n",
			listen_addr ? listen_addr : "any address", port, strerror(-err),
			err == -ENODEV ? " (no RDMA device: see `rdma link show`; "
					 "Soft-RoCE: `rdma link add rxe0 type rxe netdev IFACE`)" :
			err == -EADDRINUSE || (err == -EADDRNOTAVAIL && !listen_addr) ?
				" (is another NFS/RDMA server, such as the kernel's nfsd "
				"with an rdma port, already listening on this port?)" : "");
		goto out_export;
	}
	if (tcp) {
		/* NFS over TCP beside RDMA: the same programs and exports.
		 * The default port taken (the kernel's nfsd, say) is not an
		 * error: RDMA is served all the same, and the log says so. */
		err = rpcrdma_svc_listen_tcp(g_svc, listen_addr, (uint16_t)tcp_port, NULL);
		if (err && (tcp_port_given || err != -EADDRINUSE)) {
			fprintf(stderr, PROG ": cannot listen on TCP port %lu: %s%s\n", tcp_port,
				strerror(-err), err == -EADDRINUSE ?
				" (another NFS server, such as the kernel's nfsd? --no-tcp serves "
				"RDMA only)" : "");
			goto out_svc;
		}
		if (err)
			fprintf(stderr, PROG ": TCP port %lu in use (another NFS server?): "
				"serving NFS over RDMA only (--tcp-port N, or --no-tcp)\n", tcp_port);
	}
	err = rpcrdma_svc_register_flags(g_svc, RPCRDMA_NFS3_PROGRAM, RPCRDMA_NFS3_VERSION,
					 rpcrdma_nfs3_server_dispatch, srv,
					 workers_only ? 0 : RPCRDMA_SVC_TRY_TRANSPORT);
	if (err) {
		fprintf(stderr, PROG ": register NFSv3: %s\n", strerror(-err));
		goto out_svc;
	}
	if (nfs4) {
		struct rpcrdma_nfs4_config n4 = {
			.n4_max_payload = ncfg.nc_max_payload,
			.n4_log = stderr,
			.n4_verbose = verbose,
			/* the client records beside NLM's, one --grace for both */
			.n4_state_dir = lcfg.lc_state_dir ? lcfg.lc_state_dir
							  : RPCRDMA_NLM_STATE_DIR,
			.n4_grace_sec = lcfg.lc_grace_sec,
			.n4_no_delegations = no_deleg,
			.n4_lease_sec = lease,
			.n4_max_clients = nfs4_clients ? nfs4_clients : nfs4_default_clients(memory),
		};

		err = rpcrdma_nfs4_server_create(srv, &n4, &srv4);
		if (err && err != -ENOMEM) {
			fprintf(stderr, PROG ": NFSv4.1 client records %s/nfs4-clients: %s%s\n",
				n4.n4_state_dir, err == -E2BIG ? "too many records" :
				err == -EBADMSG ? "damaged" : strerror(-err),
				err == -E2BIG ? " (more than twice --nfs4-clients: raise it, or move "
				"the file away to start without reclaims)" :
				err == -EBADMSG ? " (move it away to start without reclaims)" : "");
			goto out_svc;
		}
		if (!err && !rpcrdma_nfs4_limits(n4.n4_max_clients, &n4l))
			fprintf(stderr, PROG ": nfs4: %u clients, %u sessions, %u opens, "
				"%u lock states, %u delegations, %u client records "
				"(%llu MiB when full%s)\n", n4l.n4l_clients, n4l.n4l_sessions,
				n4l.n4l_opens, n4l.n4l_locks, n4l.n4l_delegations,
				n4l.n4l_records, (unsigned long long)(n4l.n4l_bytes >> 20),
				nfs4_clients ? ", --nfs4-clients" : ", from --memory");
		if (!err)
			err = rpcrdma_svc_register_flags(g_svc, RPCRDMA_NFS3_PROGRAM,
							 RPCRDMA_NFS4_VERSION,
							 rpcrdma_nfs4_server_dispatch, srv4,
							 workers_only ? 0 :
							 RPCRDMA_SVC_TRY_TRANSPORT);
		if (err) {
			fprintf(stderr, PROG ": register NFSv4.1: %s\n", strerror(-err));
			goto out_svc;
		}
		names = rpcrdma_nfs4_proc_names(&nnames);
		rpcrdma_svc_set_proc_names(g_svc, RPCRDMA_NFS3_PROGRAM, RPCRDMA_NFS4_VERSION,
					   names, nnames, rpcrdma_nfs4_stat_name);
		/* --idle-timeout spares the connections of back channels */
		rpcrdma_svc_set_conn_state(g_svc, rpcrdma_nfs4_server_conn_has_state, srv4);
	}
	if (ccfg.cc_path) {
		err = rpcrdma_capture_open(&ccfg, &capture);
		if (err) {
			fprintf(stderr, PROG ": --capture %s: %s%s\n", ccfg.cc_path, strerror(-err),
				err == -EEXIST ? " and is not an earlier capture of this server "
				"(a symlink, a directory, another user's or another kind of "
				"file): give a new name or remove it" : "");
			goto out_svc;
		}
		rpcrdma_svc_set_capture(g_svc, capture);
	}
	names = rpcrdma_nfs3_proc_names(&nnames);
	rpcrdma_svc_set_proc_names(g_svc, RPCRDMA_NFS3_PROGRAM, RPCRDMA_NFS3_VERSION,
				   names, nnames, rpcrdma_nfs3_stat_name);
	if (locking) {
		/* NLM, NSM and MOUNT share one TCP thread (src/nfs3/rpc_tcp.c) */
		lcfg.lc_listen = listen_addr;
		lcfg.lc_rpcbind = rpcbind;
		lcfg.lc_open = rpcrdma_nlm_nfs3_open;
		lcfg.lc_open_arg = srv;
		lcfg.lc_allow = rpcrdma_nfs3_server_allows;
		lcfg.lc_allow_arg = srv;
		/* an NLM LOCK against expired NFSv4.1 clients' locks wins */
		lcfg.lc_conflict = srv4 ? rpcrdma_nfs4_server_revoke_file : NULL;
		lcfg.lc_conflict_arg = srv4;
		/* another gateway's grace period (cephfs grace=DIR) */
		lcfg.lc_cluster_grace = rpcrdma_nlm_nfs3_cluster_grace;
		lcfg.lc_log = stderr;
		lcfg.lc_verbose = verbose;
		err = rpcrdma_nlm_start(&lcfg, &nlm);
		if (err) {
			fprintf(stderr, PROG ": lock manager (state in %s): %s%s\n",
				lcfg.lc_state_dir ? lcfg.lc_state_dir : RPCRDMA_NLM_STATE_DIR,
				strerror(-err), err == -ECONNREFUSED ?
				" (rpcbind refused NLM: not running, or another lock "
				"manager, such as the kernel's lockd, has it; or use "
				"--no-locking)" : "");
			goto out_svc;
		}
	}
	err = rpcrdma_mnt_start(srv, listen_addr, (uint16_t)mport, rpcbind, &mnt);
	if (err) {
		fprintf(stderr, PROG ": MOUNT on TCP port %lu: %s%s\n", mport, strerror(-err),
			rpcbind && err == -ECONNREFUSED ? " (--rpcbind: is rpcbind running?)" : "");
		goto out_nlm;
	}
	if (rpcbind) {
		err = rpcrdma_nfs3_rpcbind_set(listen_addr, (uint16_t)port);
		if (err) {
			fprintf(stderr, PROG ": rpcbind registration of NFS over rdma: %s\n",
				strerror(-err));
			goto out_mnt;
		}
		if (rpcrdma_svc_tcp_socket(g_svc) >= 0) {
			err = rpcrdma_nfs3_rpcbind_set_tcp(rpcrdma_svc_tcp_socket(g_svc));
			if (err) {
				fprintf(stderr, PROG ": rpcbind registration of NFS over tcp: %s\n",
					strerror(-err));
				goto out_rpcbind;
			}
			tcp_rpcbind = true;
		}
	}

	if (!control_path) {
		/* The default: a warning only when it cannot be had. */
		snprintf(control_buf, sizeof(control_buf), RPCRDMA_SVC_CONTROL_DIR "/%lu.sock", port);
		err = rpcrdma_svc_control_start(g_svc, control_buf, &control);
		if (err)
			fprintf(stderr, PROG ": no control socket %s: %s (rpcrdma-stat will not reach this server)\n",
				control_buf, strerror(-err));
	} else if (strcmp(control_path, "none")) {
		err = rpcrdma_svc_control_start(g_svc, control_path, &control);
		if (err) {
			fprintf(stderr, PROG ": --control %s: %s%s\n", control_path, strerror(-err),
				err == -EADDRINUSE ? " (another server answers there)" : "");
			goto out_rpcbind;
		}
	}

	if (metrics_addr) {
		err = rpcrdma_svc_metrics_start(g_svc, metrics_addr, &metrics);
		if (err) {
			fprintf(stderr, PROG ": --metrics %s: %s\n", metrics_addr,
				err == -EINVAL ? "expected ADDR:PORT, [ADDR]:PORT or :PORT" :
				strerror(-err));
			goto out_control;
		}
	}

	sa.sa_handler = on_stop;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sa.sa_handler = on_usr1;
	sigaction(SIGUSR1, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	printf(PROG ": serving %s on %s:%lu (mount port %lu; %s)\n",
	       exports_file ? exports_file : export_path,
	       listen_addr ? listen_addr : "*", port, mport,
	       nfs4 ? "NFSv3 and NFSv4.1" : "NFSv3");
	fflush(stdout);
	/* a status line for systemd: the path cut to fit */
	snprintf(msg, sizeof(msg), "serving %.300s on %.64s:%lu",
		 exports_file ? exports_file : export_path,
		 listen_addr ? listen_addr : "*", port);
	nfsd_notify_ready(msg);

	err = rpcrdma_svc_run(g_svc);
	nfsd_notify_stopping();
	if (err == -ENODEV)
		fprintf(stderr, PROG ": the RDMA device serving %s was removed: "
			"every connection closed, stopping\n",
			listen_addr ? listen_addr : "the listen address");
	else if (err)
		fprintf(stderr, PROG ": server loop failed: %s\n", strerror(-err));
	else
		ret = 0;
	if (stats_json)
		rpcrdma_svc_stats_write(g_svc, RPCRDMA_SVC_STATS_JSON, stdout);
	if (rpcrdma_nfs3_server_fcache_stats(srv, &fst) != 0)
		memset(&fst, 0, sizeof(fst));
	if (fst.fcs_capacity)
		fprintf(stderr, PROG ": open-file cache: %llu hits, %llu misses, %llu evictions, "
			"%llu forgotten, %llu expired, %llu of %llu entries open\n",
			(unsigned long long)fst.fcs_hits, (unsigned long long)fst.fcs_misses,
			(unsigned long long)fst.fcs_evictions,
			(unsigned long long)fst.fcs_forgotten,
			(unsigned long long)fst.fcs_expired,
			(unsigned long long)fst.fcs_entries, (unsigned long long)fst.fcs_capacity);
	if (fst.fcs_dir_capacity)
		fprintf(stderr, PROG ": directory cache: %llu hits, %llu misses, %llu expired, "
			"%llu of %llu entries open, %llu committed\n",
			(unsigned long long)fst.fcs_dir_hits,
			(unsigned long long)fst.fcs_dir_misses,
			(unsigned long long)fst.fcs_dir_expired,
			(unsigned long long)fst.fcs_dir_entries,
			(unsigned long long)fst.fcs_dir_capacity,
			(unsigned long long)fst.fcs_dir_commits);
	if (srv4) {
		struct rpcrdma_nfs4_recovery rv;
		struct rpcrdma_nfs4_stats n4s;

		rpcrdma_nfs4_server_stats(srv4, &n4s);
		fprintf(stderr, PROG ": nfs4 transport thread: %llu COMPOUNDs served there, "
			"%llu sent to a worker\n",
			(unsigned long long)n4s.n4s_transport_calls,
			(unsigned long long)n4s.n4s_transport_defers);
		fprintf(stderr, PROG ": nfs4 clients: %llu CLID_INUSE, %llu WRONG_CRED, "
			"%llu CONN_NOT_BOUND_TO_SESSION, %llu SEQ_FALSE_RETRY refused\n",
			(unsigned long long)n4s.n4s_clid_inuse,
			(unsigned long long)n4s.n4s_wrong_cred,
			(unsigned long long)n4s.n4s_conn_unbound,
			(unsigned long long)n4s.n4s_false_retries);
		rpcrdma_nfs4_server_recovery(srv4, &rv);
		fprintf(stderr, PROG ": nfs4 recovery: %u of %u clients reclaimed, "
			"%llu opens and %llu locks reclaimed, %llu refused in grace, "
			"%llu refused no grace, %u clients recorded, %llu not recorded, "
			"%llu record write errors%s\n",
			rv.n4r_loaded - rv.n4r_pending, rv.n4r_loaded,
			(unsigned long long)rv.n4r_open_reclaims,
			(unsigned long long)rv.n4r_lock_reclaims,
			(unsigned long long)rv.n4r_grace_refused,
			(unsigned long long)rv.n4r_no_grace, rv.n4r_records,
			(unsigned long long)rv.n4r_no_room,
			(unsigned long long)rv.n4r_write_errors,
			rv.n4r_in_grace ? "; still in grace" : "");
	}
	rpcrdma_svc_metrics_stop(metrics);
out_control:
	rpcrdma_svc_control_stop(control);
out_rpcbind:
	if (tcp_rpcbind)
		rpcrdma_nfs3_rpcbind_unset_tcp();
	if (rpcbind)
		rpcrdma_nfs3_rpcbind_unset();
out_mnt:
	rpcrdma_mnt_stop(mnt);
out_nlm:
	if (nlm) {
		rpcrdma_nlm_get_stats(nlm, &lst);
		fprintf(stderr, PROG ": locks: %llu calls, %llu granted (%llu reclaimed), "
			"%llu denied, %llu blocked, %llu callbacks (%llu failed), "
			"%llu refused in grace, %llu refused no room, %llu stale, "
			"%llu hosts notified, %llu hosts freed, %llu calls refused; %llu held\n",
			(unsigned long long)lst.ns_calls, (unsigned long long)lst.ns_granted,
			(unsigned long long)lst.ns_reclaimed, (unsigned long long)lst.ns_denied,
			(unsigned long long)lst.ns_blocked, (unsigned long long)lst.ns_callbacks,
			(unsigned long long)lst.ns_callback_fail,
			(unsigned long long)lst.ns_grace_refused,
			(unsigned long long)lst.ns_nolocks, (unsigned long long)lst.ns_stale,
			(unsigned long long)lst.ns_notified,
			(unsigned long long)lst.ns_freed_hosts,
			(unsigned long long)lst.ns_refused,
			(unsigned long long)lst.ns_ranges);
		rpcrdma_nlm_stop(nlm);
	}
out_svc:
	rpcrdma_svc_destroy(g_svc);
	g_svc = NULL;
	if (capture) {
		struct rpcrdma_capture_stats cst;

		rpcrdma_capture_close(capture, &cst); /* writes what is queued first */
		fprintf(stderr, PROG ": capture %s: %llu frames, %llu bytes, %llu dropped, "
			"%llu write errors, %llu file(s)\n", ccfg.cc_path,
			(unsigned long long)cst.cs_frames, (unsigned long long)cst.cs_bytes,
			(unsigned long long)cst.cs_drops, (unsigned long long)cst.cs_write_errors,
			(unsigned long long)cst.cs_files);
	}
out_export:
	if (reloading) {
		atomic_store(&rel.rl_stop, true);
		pthread_kill(rel.rl_thread, SIGHUP);
		pthread_join(rel.rl_thread, NULL);
	}
	rpcrdma_nfs4_server_destroy(srv4);
	rpcrdma_nfs3_server_destroy(srv);
out_xt:
	rpcrdma_nfs3_exports_free(xt);
	return ret;
}
