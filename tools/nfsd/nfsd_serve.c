// SPDX-License-Identifier: MIT
/*
 * nfsd_serve.c - rpcrdma-nfsd serving: the exports, the key, the RDMA and
 * TCP transports, NFSv3, NFSv4.1, the lock manager, MOUNT, rpcbind, the
 * control socket and metrics, started from the options (nfsd_opts.h),
 * then the loop and the final report.  See man/rpcrdma-nfsd.8.
 */
#include <arpa/inet.h>
#include <errno.h>
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

#include "cli/cli.h"
#include "notify/nfsd_notify.h"
#include "nfsd_opts.h"
#include "nfsd_serve.h"

#define PROG NFSD_PROG
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

/* the exports file's warnings and errors at start and on SIGHUP */
static void start_note(void *arg, bool error, const char *msg)
{
	if (arg && error)
		(*(unsigned *)arg)++; /* the errors told */
	fprintf(stderr, PROG ": %s\n", msg);
}

static const struct rpcrdma_nfs3_exports_notes start_notes = {
	.xn_note = start_note, .xn_keep_going = true,
};

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
		err = rpcrdma_nfs3_exports_load_notes(rl->rl_file, &start_notes, &xt, msg,
						      sizeof(msg));
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

/* the end-of-run report of the open-file and directory caches and of
 * NFSv4.1 (@srv4 NULL: none), on stderr */
static void report_caches_nfs4(struct rpcrdma_nfs3_server *srv,
			       struct rpcrdma_nfs4_server *srv4)
{
	struct rpcrdma_nfs3_fcache_stats fst;

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
}

/* the end-of-run report of the lock manager, on stderr */
static void report_locks(struct rpcrdma_nlm *nlm)
{
	struct rpcrdma_nlm_stats lst;

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
}

int nfsd_serve(const struct nfsd_conf *cf, const char *default_exports)
{
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
	bool locking = true;
	struct sigaction sa = { 0 };
	const char *export_arg = NULL, *listen_addr = NULL;
	const char *key_file = DEFAULT_KEY_FILE;
	unsigned long port = RPCRDMA_NFS_PORT, mport = RPCRDMA_MNT_PORT;
	unsigned long tcp_port = RPCRDMA_SVC_TCP_PORT;
	bool tcp = true, tcp_port_given = false, tcp_rpcbind = false;
	unsigned long threads = 0, credits = 128, max_conns = 0, fcache = 0;
	unsigned long fcache_idle = 0;
	unsigned long max_conns_host = 0, idle_timeout = RPCRDMA_SVC_IDLE_DEFAULT;
	bool fcache_set = false, fcache_idle_set = false;
	uint64_t memory = 0;
	struct rlimit rl;
	bool stats_json = false, rpcbind = false, no_squash = false, poll_mode = false;
	bool async = false;
	const char *backend = NULL;
	bool workers_only = false, nfs4 = true, no_deleg = false;
	uint32_t lease = 0; /* --lease: 0 the server's default (90 s) */
	uint32_t nfs4_clients = 0; /* --nfs4-clients: 0 from --memory */
	struct rpcrdma_nfs4_limits n4l;
	struct rpcrdma_nfs4_server *srv4 = NULL;
	bool default_key = true;
	char export_path[PATH_MAX];
	struct stat st;
	int verbose = 0, err, ret = 1;

	/* the values of the table (nfsd_opts.h) into the settings below */
	export_arg = nfsd_s(cf, NFSD_EXPORT);
	exports_file = nfsd_s(cf, NFSD_EXPORTS);
	if (!export_arg && !exports_file)
		exports_file = default_exports;
	listen_addr = nfsd_s(cf, NFSD_LISTEN);
	port = nfsd_u(cf, NFSD_PORT, RPCRDMA_NFS_PORT);
	mport = nfsd_u(cf, NFSD_MOUNT_PORT, RPCRDMA_MNT_PORT);
	tcp_port = nfsd_u(cf, NFSD_TCP_PORT, RPCRDMA_SVC_TCP_PORT);
	tcp_port_given = nfsd_is_set(cf, NFSD_TCP_PORT);
	tcp = !nfsd_flag(cf, NFSD_NO_TCP);
	for (unsigned i = 0; i < cf->nc_v[NFSD_ALLOW].nv_n; i++)
		add_net(&allow, cf->nc_v[NFSD_ALLOW].nv_list[i]); /* checked: ok */
	threads = nfsd_u(cf, NFSD_THREADS, 0);
	scfg.sc_transport_threads = (unsigned)nfsd_u(cf, NFSD_TRANSPORT_THREADS, 0);
	if (nfsd_s(cf, NFSD_REPLY_POST)) {
		const char *rp = nfsd_s(cf, NFSD_REPLY_POST);

		scfg.sc_reply_post = !strcmp(rp, "transport") ? RPCRDMA_SVC_POST_TRANSPORT :
				     !strcmp(rp, "worker") ? RPCRDMA_SVC_POST_WORKER :
				     RPCRDMA_SVC_POST_AUTO;
	}
	poll_mode = nfsd_flag(cf, NFSD_POLL);
	workers_only = nfsd_flag(cf, NFSD_WORKERS_ONLY);
	nfs4 = !nfsd_flag(cf, NFSD_NO_NFS4);
	no_deleg = nfsd_flag(cf, NFSD_NO_DELEG);
	credits = nfsd_u(cf, NFSD_CREDITS, 128);
	memory = nfsd_u(cf, NFSD_MEMORY, 0);
	fcache_set = nfsd_is_set(cf, NFSD_FILE_CACHE);
	fcache = nfsd_u(cf, NFSD_FILE_CACHE, 0);
	fcache_idle_set = nfsd_is_set(cf, NFSD_FILE_CACHE_IDLE);
	fcache_idle = nfsd_u(cf, NFSD_FILE_CACHE_IDLE, 0);
	max_conns = nfsd_u(cf, NFSD_MAX_CONNS, 0);
	max_conns_host = nfsd_u(cf, NFSD_MAX_CONNS_HOST, 0);
	idle_timeout = nfsd_u(cf, NFSD_IDLE_TIMEOUT, RPCRDMA_SVC_IDLE_DEFAULT);
	if (nfsd_s(cf, NFSD_HANDLE_KEY)) {
		key_file = nfsd_s(cf, NFSD_HANDLE_KEY);
		default_key = false;
	}
	async = nfsd_flag(cf, NFSD_ASYNC);
	backend = nfsd_s(cf, NFSD_BACKEND);
	no_squash = nfsd_flag(cf, NFSD_NO_ROOT_SQUASH);
	stats_json = nfsd_flag(cf, NFSD_STATS);
	control_path = nfsd_s(cf, NFSD_CONTROL);
	metrics_addr = nfsd_s(cf, NFSD_METRICS);
	ccfg.cc_path = nfsd_s(cf, NFSD_CAPTURE);
	if (nfsd_is_set(cf, NFSD_CAPTURE_SIZE)) /* 0: no limit */
		ccfg.cc_max_bytes = nfsd_u(cf, NFSD_CAPTURE_SIZE, 0) ?
				    nfsd_u(cf, NFSD_CAPTURE_SIZE, 0) : RPCRDMA_CAPTURE_UNLIMITED;
	ccfg.cc_max_files = (uint32_t)nfsd_u(cf, NFSD_CAPTURE_FILES, 0);
	ccfg.cc_data_bytes = (uint32_t)nfsd_u(cf, NFSD_CAPTURE_DATA, 0);
	rpcbind = nfsd_flag(cf, NFSD_RPCBIND);
	locking = !nfsd_flag(cf, NFSD_NO_LOCKING);
	lcfg.lc_port = (uint16_t)nfsd_u(cf, NFSD_NLM_PORT, 0);
	lcfg.lc_nsm_port = (uint16_t)nfsd_u(cf, NFSD_NSM_PORT, 0);
	lcfg.lc_state_dir = nfsd_s(cf, NFSD_STATE_DIR);
	if (nfsd_is_set(cf, NFSD_GRACE))
		lcfg.lc_grace_sec = nfsd_u(cf, NFSD_GRACE, 0) ?
				    (uint32_t)nfsd_u(cf, NFSD_GRACE, 0) : UINT32_MAX;
	lease = (uint32_t)nfsd_u(cf, NFSD_LEASE, 0);
	nfs4_clients = (uint32_t)nfsd_u(cf, NFSD_NFS4_CLIENTS, 0);
	lcfg.lc_max_locks = (uint32_t)nfsd_u(cf, NFSD_MAX_LOCKS, 0);
	lcfg.lc_nsm_name = nfsd_s(cf, NFSD_NSM_NAME);
	verbose = (int)nfsd_u(cf, NFSD_VERBOSE, 0);

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
		unsigned told = 0;
		struct rpcrdma_nfs3_exports_notes notes = start_notes;

		notes.xn_arg = &told;
		err = rpcrdma_nfs3_exports_load_notes(exports_file, &notes, &xt, msg,
						      sizeof(msg));
		if (err) {
			/* the lines' errors are told; the file's are not */
			if (!told)
				fprintf(stderr, PROG ": --exports: %s%s\n", msg,
					err == -ENOENT && !nfsd_is_set(cf, NFSD_EXPORTS) ?
					" (the default exports file: write it, see exports(5) "
					"and rpcrdma-nfsd(8), or give --export DIR)" : "");
			return err == -EINVAL || err == -E2BIG || err == -ENOENT ? 2 : 1;
		}
		if (!rpcrdma_nfs3_exports_count(xt))
			fprintf(stderr, PROG ": warning: %s has no exports\n", exports_file);
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
			err == -ENODEV ? " (" CLI_NO_RDMA_DEVICE_HINT ")" :
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
	report_caches_nfs4(srv, srv4);
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
		report_locks(nlm);
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
