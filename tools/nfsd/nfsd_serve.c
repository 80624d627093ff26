// SPDX-License-Identifier: MIT
/*
 * nfsd_serve.c - rpcrdma-nfsd serving, step by step from its options
 * (nfsd_opts.h): the instance and its grace period, the exports
 * (nfsd_exports.c), the handle key and NFSv3, the reload thread, the RDMA
 * and TCP transports, NFSv4.1, the capture, the lock manager, MOUNT,
 * rpcbind, the control socket and metrics; then the serving loop, and the
 * shutdown in reverse order with the final report (nfsd_report.c).  See
 * man/rpcrdma-nfsd.8.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
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
#include "nfsd_exports.h"
#include "nfsd_opts.h"
#include "nfsd_report.h"
#include "nfsd_serve.h"
#include "nfsd_statelock.h"

#define PROG NFSD_PROG
#define DEFAULT_KEY_FILE "/var/lib/rpcrdma/nfsd-handle.key"
/* the largest READ/WRITE payload NFSv3 and NFSv4.1 announce (bytes) */
#define NFSD_MAX_PAYLOAD (1u << 20)

/* the server the signal handlers stop and dump (serve_transport() to the
 * shutdown) */
static struct rpcrdma_svc *g_svc;

/*
 * What nfsd_serve() starts, in order, and stops in reverse (owner prefix
 * sv_).  Each serve_*() step below starts one service from sv_cf and
 * returns 0, or non-zero after telling why on stderr.
 */
struct serve {
	const struct nfsd_conf *sv_cf;
	const char *sv_exports_file;  /* NULL: --export DIR (sv_export_path) */
	const char *sv_listen;        /* NULL: every address */
	unsigned long sv_port;        /* NFS over RDMA */
	unsigned long sv_mport;       /* MOUNT over TCP */
	int sv_verbose;
	int sv_state_fd;              /* the state directory's lock */
	struct rpcrdma_nfs3_exports *sv_xt;
	struct rpcrdma_nfs3_server *sv_srv;
	struct rpcrdma_nfs4_server *sv_srv4;
	struct nfsd_reloader sv_rel;
	struct rpcrdma_capture_config sv_ccfg;
	struct rpcrdma_capture *sv_capture;
	struct rpcrdma_nlm *sv_nlm;
	struct rpcrdma_mnt *sv_mnt;
	bool sv_rpcbind;              /* NFS over RDMA registered with rpcbind */
	bool sv_tcp_rpcbind;          /* NFS over TCP too */
	struct rpcrdma_svc_control *sv_control;
	struct rpcrdma_svc_metrics *sv_metrics;
	char sv_export_path[PATH_MAX];
};

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

/* grace_sec - --grace as the lock manager's lc_grace_sec: 0 its default,
 * UINT32_MAX none (--grace 0) */
static uint32_t grace_sec(const struct nfsd_conf *cf)
{
	if (!nfsd_is_set(cf, NFSD_GRACE))
		return 0;
	return nfsd_u(cf, NFSD_GRACE, 0) ? (uint32_t)nfsd_u(cf, NFSD_GRACE, 0) : UINT32_MAX;
}

/* state_dir - --state-dir, or the default (NLM's and NFSv4.1's records) */
static const char *state_dir(const struct nfsd_conf *cf)
{
	return nfsd_s(cf, NFSD_STATE_DIR) ? nfsd_s(cf, NFSD_STATE_DIR) : RPCRDMA_NLM_STATE_DIR;
}

/*
 * serve_state_lock - the state directory for this process alone, before
 * anything in it is read or written: a second server on the same
 * directory is refused naming the first one's pid (nfsd_statelock.h).
 * Return: 0, or 1 (held elsewhere, or not creatable).
 */
static int serve_state_lock(struct serve *sv)
{
	const char *dir = state_dir(sv->sv_cf);
	pid_t pid;
	int fd = nfsd_state_lock(dir, &pid);

	if (fd == -EBUSY) {
		fprintf(stderr, PROG ": state directory %s is in use by another rpcrdma-nfsd"
			" (pid %ld); each server needs its own --state-dir\n", dir, (long)pid);
		return 1;
	}
	if (fd < 0) {
		fprintf(stderr, PROG ": state directory %s: %s%s\n", dir, strerror(-fd),
			(fd == -EACCES || fd == -EPERM) && geteuid() ?
				" (rpcrdma-nfsd runs as root)" : "");
		return 1;
	}
	sv->sv_state_fd = fd;
	return 0;
}

/*
 * serve_instance - the gateway's identity across restarts (cephfs resets
 * its old session) and how long this start's grace period lasts, the
 * longest of NLM's and NFSv4.1's: a cephfs export with grace=DIR tells
 * the other gateways before it resets its previous session
 * (docs/cephfs.md).  Return: 0, or 2 (a bad --state-dir).
 */
static int serve_instance(const struct serve *sv)
{
	const struct nfsd_conf *cf = sv->sv_cf;
	uint32_t g = grace_sec(cf), g4, lease = (uint32_t)nfsd_u(cf, NFSD_LEASE, 0);
	int err;

	err = rpcrdma_nfs3_set_instance(state_dir(cf));
	if (err) {
		fprintf(stderr, PROG ": --state-dir: %s\n", strerror(-err));
		return 2;
	}
	if (g == UINT32_MAX) {
		g = 0;
	} else if (g == 0) {
		g4 = lease ? lease : 90; /* NFSv4.1: the lease */
		g = !nfsd_flag(cf, NFSD_NO_LOCKING) ? RPCRDMA_NLM_GRACE_DEFAULT : 0;
		if (!nfsd_flag(cf, NFSD_NO_NFS4) && g4 > g)
			g = g4;
	}
	(void)rpcrdma_nfs3_set_instance_grace(g); /* --grace <= 86400 */
	return 0;
}

/*
 * serve_nfs3 - the handle key (created at the default place when missing)
 * and the NFSv3 server of sv_xt with the open-file and directory caches
 * (--file-cache, --file-cache-idle).  Return: 0, or 1.
 */
static int serve_nfs3(struct serve *sv)
{
	const struct nfsd_conf *cf = sv->sv_cf;
	const char *key_file = nfsd_s(cf, NFSD_HANDLE_KEY);
	struct rpcrdma_nfs3_config ncfg = { 0 };
	char msg[512];
	int err;

	if (load_key(key_file ? key_file : DEFAULT_KEY_FILE, ncfg.nc_key, !key_file))
		return 1;
	ncfg.nc_max_payload = NFSD_MAX_PAYLOAD;
	ncfg.nc_log = stderr;
	ncfg.nc_verbose = sv->sv_verbose;
	if (nfsd_is_set(cf, NFSD_FILE_CACHE))
		ncfg.nc_fcache_entries = nfsd_u(cf, NFSD_FILE_CACHE, 0) ?
					 (uint32_t)nfsd_u(cf, NFSD_FILE_CACHE, 0) :
					 RPCRDMA_NFS3_FCACHE_OFF;
	if (nfsd_is_set(cf, NFSD_FILE_CACHE_IDLE))
		ncfg.nc_fcache_idle_ms = nfsd_u(cf, NFSD_FILE_CACHE_IDLE, 0) ?
					 (uint32_t)nfsd_u(cf, NFSD_FILE_CACHE_IDLE, 0) * 1000u :
					 RPCRDMA_NFS3_FCACHE_IDLE_NEVER;
	err = rpcrdma_nfs3_server_create(&ncfg, sv->sv_xt, &sv->sv_srv, msg, sizeof(msg));
	if (err) {
		fprintf(stderr, PROG ": %s%s\n", msg, err == -EPERM ?
			" (file handles need CAP_DAC_READ_SEARCH: run as root)" : "");
		return 1;
	}
	return 0;
}

/*
 * serve_reload - SIGHUP blocked in this thread and so in every thread
 * started from here on (the server's workers too), then, with an exports
 * file, the thread that takes SIGHUP and reloads it.  Return: 0, or 1.
 */
static int serve_reload(struct serve *sv)
{
	sigset_t hup;

	sigemptyset(&hup);
	sigaddset(&hup, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &hup, NULL);
	if (!sv->sv_exports_file)
		return 0;
	return nfsd_reloader_start(&sv->sv_rel, sv->sv_srv, sv->sv_exports_file);
}

/* svc_config - the transport's settings from @sv's options into @scfg. */
static void svc_config(const struct serve *sv, struct rpcrdma_svc_config *scfg)
{
	const struct nfsd_conf *cf = sv->sv_cf;
	const char *rp = nfsd_s(cf, NFSD_REPLY_POST);
	unsigned long idle = nfsd_u(cf, NFSD_IDLE_TIMEOUT, RPCRDMA_SVC_IDLE_DEFAULT);

	memset(scfg, 0, sizeof(*scfg));
	scfg->sc_transport_threads = (unsigned)nfsd_u(cf, NFSD_TRANSPORT_THREADS, 0);
	if (rp)
		scfg->sc_reply_post = !strcmp(rp, "transport") ? RPCRDMA_SVC_POST_TRANSPORT :
				      !strcmp(rp, "worker") ? RPCRDMA_SVC_POST_WORKER :
				      RPCRDMA_SVC_POST_AUTO;
	scfg->sc_listen = sv->sv_listen;
	scfg->sc_port = (uint16_t)sv->sv_port;
	scfg->sc_max_payload = NFSD_MAX_PAYLOAD;
	scfg->sc_threads = (unsigned)nfsd_u(cf, NFSD_THREADS, 0);
	scfg->sc_credits = (uint32_t)nfsd_u(cf, NFSD_CREDITS, 128);
	scfg->sc_memory = nfsd_u(cf, NFSD_MEMORY, 0);
	scfg->sc_max_connections = (uint32_t)nfsd_u(cf, NFSD_MAX_CONNS, 0);
	/* 0: the library's share */
	scfg->sc_max_conns_per_host = (uint32_t)nfsd_u(cf, NFSD_MAX_CONNS_HOST, 0);
	scfg->sc_idle_timeout = idle ? (uint32_t)idle : RPCRDMA_SVC_IDLE_NEVER;
	scfg->sc_poll = nfsd_flag(cf, NFSD_POLL);
	scfg->sc_accept = rpcrdma_nfs3_server_allows;
	scfg->sc_accept_arg = sv->sv_srv;
	scfg->sc_log = stderr;
	scfg->sc_verbose = sv->sv_verbose;
}

/*
 * serve_transport - the RPC-over-RDMA listener (g_svc), NFS over TCP
 * beside it (unless --no-tcp), and NFSv3 registered on both, served on the
 * transport thread unless --workers-only.  Return: 0, or 1.
 */
static int serve_transport(struct serve *sv)
{
	const struct nfsd_conf *cf = sv->sv_cf;
	unsigned long tcp_port = nfsd_u(cf, NFSD_TCP_PORT, RPCRDMA_SVC_TCP_PORT);
	struct rpcrdma_svc_config scfg;
	const char *const *names;
	uint32_t nnames;
	struct rlimit rl;
	int err;

	svc_config(sv, &scfg);
	/* Each connection's cm_id costs no descriptor, but the files being
	 * served do: take the hard limit.  MOUNT's, NLM's and NSM's TCP
	 * connections are capped apart (1024 in all and at most a quarter of
	 * this limit, 16 per address: src/common/rpc_tcp.h), so peers cannot
	 * take the open-file cache's descriptors. */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	err = rpcrdma_svc_create(&scfg, &g_svc);
	if (err) {
		fprintf(stderr, PROG ": cannot listen on %s port %lu: %s%s\n",
			sv->sv_listen ? sv->sv_listen : "any address", sv->sv_port,
			strerror(-err), err == -ENODEV ? " (" CLI_NO_RDMA_DEVICE_HINT ")" :
			err == -EADDRINUSE || (err == -EADDRNOTAVAIL && !sv->sv_listen) ?
				" (is another NFS/RDMA server, such as the kernel's nfsd "
				"with an rdma port, already listening on this port?)" : "");
		return 1;
	}
	if (!nfsd_flag(cf, NFSD_NO_TCP)) {
		/* NFS over TCP beside RDMA: the same programs and exports.
		 * The default port taken (the kernel's nfsd, say) is not an
		 * error: RDMA is served all the same, and the log says so. */
		err = rpcrdma_svc_listen_tcp(g_svc, sv->sv_listen, (uint16_t)tcp_port, NULL);
		if (err && (nfsd_is_set(cf, NFSD_TCP_PORT) || err != -EADDRINUSE)) {
			fprintf(stderr, PROG ": cannot listen on TCP port %lu: %s%s\n", tcp_port,
				strerror(-err), err == -EADDRINUSE ?
				" (another NFS server, such as the kernel's nfsd? --no-tcp serves "
				"RDMA only)" : "");
			return 1;
		}
		if (err)
			fprintf(stderr, PROG ": TCP port %lu in use (another NFS server?): "
				"serving NFS over RDMA only (--tcp-port N, or --no-tcp)\n", tcp_port);
	}
	err = rpcrdma_svc_register_flags(g_svc, RPCRDMA_NFS3_PROGRAM, RPCRDMA_NFS3_VERSION,
					 rpcrdma_nfs3_server_dispatch, sv->sv_srv,
					 nfsd_flag(cf, NFSD_WORKERS_ONLY) ? 0 :
					 RPCRDMA_SVC_TRY_TRANSPORT);
	if (err) {
		fprintf(stderr, PROG ": register NFSv3: %s\n", strerror(-err));
		return 1;
	}
	names = rpcrdma_nfs3_proc_names(&nnames);
	rpcrdma_svc_set_proc_names(g_svc, RPCRDMA_NFS3_PROGRAM, RPCRDMA_NFS3_VERSION,
				   names, nnames, rpcrdma_nfs3_stat_name);
	return 0;
}

/*
 * serve_nfs4 - NFSv4.1 beside NFSv3 (unless --no-nfs4): its state tables
 * sized by --nfs4-clients (or from --memory), its client records beside
 * NLM's, registered on the transport, the connections of back channels
 * spared by --idle-timeout.  Too little memory for the tables leaves
 * NFSv4.1 out (the library says so).  Return: 0, or 1.
 */
static int serve_nfs4(struct serve *sv)
{
	const struct nfsd_conf *cf = sv->sv_cf;
	uint32_t nfs4_clients = (uint32_t)nfsd_u(cf, NFSD_NFS4_CLIENTS, 0);
	struct rpcrdma_nfs4_config n4 = {
		.n4_max_payload = NFSD_MAX_PAYLOAD,
		.n4_log = stderr,
		.n4_verbose = sv->sv_verbose,
		/* the client records beside NLM's, one --grace for both */
		.n4_state_dir = state_dir(cf),
		.n4_grace_sec = grace_sec(cf),
		.n4_no_delegations = nfsd_flag(cf, NFSD_NO_DELEG),
		.n4_lease_sec = (uint32_t)nfsd_u(cf, NFSD_LEASE, 0),
		.n4_max_clients = nfs4_clients ? nfs4_clients :
				  nfs4_default_clients(nfsd_u(cf, NFSD_MEMORY, 0)),
	};
	struct rpcrdma_nfs4_limits n4l;
	const char *const *names;
	uint32_t nnames;
	int err;

	if (nfsd_flag(cf, NFSD_NO_NFS4))
		return 0;
	err = rpcrdma_nfs4_server_create(sv->sv_srv, &n4, &sv->sv_srv4);
	if (err && err != -ENOMEM) {
		fprintf(stderr, PROG ": NFSv4.1 client records %s/nfs4-clients: %s%s\n",
			n4.n4_state_dir, err == -E2BIG ? "too many records" :
			err == -EBADMSG ? "damaged" : strerror(-err),
			err == -E2BIG ? " (more than twice --nfs4-clients: raise it, or move "
			"the file away to start without reclaims)" :
			err == -EBADMSG ? " (move it away to start without reclaims)" : "");
		return 1;
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
						 rpcrdma_nfs4_server_dispatch, sv->sv_srv4,
						 nfsd_flag(cf, NFSD_WORKERS_ONLY) ? 0 :
						 RPCRDMA_SVC_TRY_TRANSPORT);
	if (err) {
		fprintf(stderr, PROG ": register NFSv4.1: %s\n", strerror(-err));
		return 1;
	}
	names = rpcrdma_nfs4_proc_names(&nnames);
	rpcrdma_svc_set_proc_names(g_svc, RPCRDMA_NFS3_PROGRAM, RPCRDMA_NFS4_VERSION,
				   names, nnames, rpcrdma_nfs4_stat_name);
	/* --idle-timeout spares the connections of back channels */
	rpcrdma_svc_set_conn_state(g_svc, rpcrdma_nfs4_server_conn_has_state, sv->sv_srv4);
	return 0;
}

/*
 * serve_capture - the packet capture (--capture FILE, its size, files and
 * data bytes) given to the transport.  Return: 0 (none asked too), or 1.
 */
static int serve_capture(struct serve *sv)
{
	const struct nfsd_conf *cf = sv->sv_cf;
	struct rpcrdma_capture_config *c = &sv->sv_ccfg;
	int err;

	c->cc_path = nfsd_s(cf, NFSD_CAPTURE);
	if (nfsd_is_set(cf, NFSD_CAPTURE_SIZE)) /* 0: no limit */
		c->cc_max_bytes = nfsd_u(cf, NFSD_CAPTURE_SIZE, 0) ?
				  nfsd_u(cf, NFSD_CAPTURE_SIZE, 0) : RPCRDMA_CAPTURE_UNLIMITED;
	c->cc_max_files = (uint32_t)nfsd_u(cf, NFSD_CAPTURE_FILES, 0);
	c->cc_data_bytes = (uint32_t)nfsd_u(cf, NFSD_CAPTURE_DATA, 0);
	if (!c->cc_path)
		return 0;
	err = rpcrdma_capture_open(c, &sv->sv_capture);
	if (err) {
		fprintf(stderr, PROG ": --capture %s: %s%s\n", c->cc_path, strerror(-err),
			err == -EEXIST ? " and is not an earlier capture of this server "
			"(a symlink, a directory, another user's or another kind of "
			"file): give a new name or remove it" : "");
		return 1;
	}
	rpcrdma_svc_set_capture(g_svc, sv->sv_capture);
	return 0;
}

/*
 * serve_locking - the lock manager (NLM and NSM; unless --no-locking) on
 * libtirpc's TCP thread, which MOUNT shares (src/nfs3/rpc_tcp.c): opens
 * through NFSv3, NFSv4.1's expired clients' locks revoked on conflict,
 * other gateways' grace periods (cephfs grace=DIR).  Return: 0, or 1.
 */
static int serve_locking(struct serve *sv)
{
	const struct nfsd_conf *cf = sv->sv_cf;
	struct rpcrdma_nlm_config lcfg = {
		.lc_port = (uint16_t)nfsd_u(cf, NFSD_NLM_PORT, 0),
		.lc_nsm_port = (uint16_t)nfsd_u(cf, NFSD_NSM_PORT, 0),
		.lc_state_dir = nfsd_s(cf, NFSD_STATE_DIR),
		.lc_grace_sec = grace_sec(cf),
		.lc_max_locks = (uint32_t)nfsd_u(cf, NFSD_MAX_LOCKS, 0),
		.lc_nsm_name = nfsd_s(cf, NFSD_NSM_NAME),
		.lc_listen = sv->sv_listen,
		.lc_rpcbind = nfsd_flag(cf, NFSD_RPCBIND),
		.lc_open = rpcrdma_nlm_nfs3_open,
		.lc_open_arg = sv->sv_srv,
		.lc_allow = rpcrdma_nfs3_server_allows,
		.lc_allow_arg = sv->sv_srv,
		/* an NLM LOCK against expired NFSv4.1 clients' locks wins */
		.lc_conflict = sv->sv_srv4 ? rpcrdma_nfs4_server_revoke_file : NULL,
		.lc_conflict_arg = sv->sv_srv4,
		/* another gateway's grace period (cephfs grace=DIR) */
		.lc_cluster_grace = rpcrdma_nlm_nfs3_cluster_grace,
		.lc_log = stderr,
		.lc_verbose = sv->sv_verbose,
	};
	int err;

	if (nfsd_flag(cf, NFSD_NO_LOCKING))
		return 0;
	err = rpcrdma_nlm_start(&lcfg, &sv->sv_nlm);
	if (err) {
		fprintf(stderr, PROG ": lock manager (state in %s): %s%s\n", state_dir(cf),
			strerror(-err), err == -ECONNREFUSED ?
			" (rpcbind refused NLM: not running, or another lock "
			"manager, such as the kernel's lockd, has it; or use "
			"--no-locking)" : "");
		return 1;
	}
	return 0;
}

/* serve_mount - MOUNT v3 on TCP port sv_mport (registered with rpcbind
 * with --rpcbind).  Return: 0, or 1. */
static int serve_mount(struct serve *sv)
{
	bool rpcbind = nfsd_flag(sv->sv_cf, NFSD_RPCBIND);
	int err;

	err = rpcrdma_mnt_start(sv->sv_srv, sv->sv_listen, (uint16_t)sv->sv_mport, rpcbind,
				&sv->sv_mnt);
	if (err) {
		fprintf(stderr, PROG ": MOUNT on TCP port %lu: %s%s\n", sv->sv_mport,
			strerror(-err), rpcbind && err == -ECONNREFUSED ?
			" (--rpcbind: is rpcbind running?)" : err == -EADDRINUSE ?
			" (another MOUNT server, such as rpc.mountd or a second rpcrdma-nfsd? --mount-port N)" : "");
		return 1;
	}
	return 0;
}

/* serve_rpcbind - with --rpcbind, NFS over RDMA (and over TCP when it
 * listens) registered with rpcbind.  Return: 0, or 1. */
static int serve_rpcbind(struct serve *sv)
{
	int err;

	if (!nfsd_flag(sv->sv_cf, NFSD_RPCBIND))
		return 0;
	err = rpcrdma_nfs3_rpcbind_set(sv->sv_listen, (uint16_t)sv->sv_port);
	if (err) {
		fprintf(stderr, PROG ": rpcbind registration of NFS over rdma: %s\n",
			strerror(-err));
		return 1;
	}
	sv->sv_rpcbind = true;
	if (rpcrdma_svc_tcp_socket(g_svc) >= 0) {
		err = rpcrdma_nfs3_rpcbind_set_tcp(rpcrdma_svc_tcp_socket(g_svc));
		if (err) {
			fprintf(stderr, PROG ": rpcbind registration of NFS over tcp: %s\n",
				strerror(-err));
			return 1;
		}
		sv->sv_tcp_rpcbind = true;
	}
	return 0;
}

/* rpcbind_unset - undo serve_rpcbind(). */
static void rpcbind_unset(struct serve *sv)
{
	if (sv->sv_tcp_rpcbind)
		rpcrdma_nfs3_rpcbind_unset_tcp();
	if (sv->sv_rpcbind)
		rpcrdma_nfs3_rpcbind_unset();
}

/*
 * serve_control - the control socket rpcrdma-stat asks: --control PATH,
 * none with "none", else RPCRDMA_SVC_CONTROL_DIR/PORT.sock, whose failure
 * is only a warning.  Return: 0, or 1 (--control PATH failed).
 */
static int serve_control(struct serve *sv)
{
	const char *path = nfsd_s(sv->sv_cf, NFSD_CONTROL);
	char buf[108];
	int err;

	if (!path) {
		/* The default: a warning only when it cannot be had. */
		snprintf(buf, sizeof(buf), RPCRDMA_SVC_CONTROL_DIR "/%lu.sock", sv->sv_port);
		err = rpcrdma_svc_control_start(g_svc, buf, &sv->sv_control);
		if (err)
			fprintf(stderr, PROG ": no control socket %s: %s (rpcrdma-stat will not "
				"reach this server)\n", buf, strerror(-err));
		return 0;
	}
	if (!strcmp(path, "none"))
		return 0;
	err = rpcrdma_svc_control_start(g_svc, path, &sv->sv_control);
	if (err) {
		fprintf(stderr, PROG ": --control %s: %s%s\n", path, strerror(-err),
			err == -EADDRINUSE ? " (another server answers there)" : "");
		return 1;
	}
	return 0;
}

/* serve_metrics - the Prometheus endpoint of --metrics ADDR:PORT (none
 * without it).  Return: 0, or 1. */
static int serve_metrics(struct serve *sv)
{
	const char *addr = nfsd_s(sv->sv_cf, NFSD_METRICS);
	int err;

	if (!addr)
		return 0;
	err = rpcrdma_svc_metrics_start(g_svc, addr, &sv->sv_metrics);
	if (err) {
		fprintf(stderr, PROG ": --metrics %s: %s\n", addr,
			err == -EINVAL ? "expected ADDR:PORT, [ADDR]:PORT or :PORT" :
			strerror(-err));
		return 1;
	}
	return 0;
}

/*
 * serve_loop - the signals (SIGTERM and SIGINT stop, SIGUSR1 dumps the
 * counters, SIGPIPE ignored), the "serving" line on stdout and READY=1 to
 * systemd, then the transport's loop until it stops; STOPPING=1 and, with
 * --stats, the counters as JSON on stdout.  Return: 0 (stopped by a
 * signal), or 1 (the loop failed, or the RDMA device went away).
 */
static int serve_loop(struct serve *sv)
{
	const char *what = sv->sv_exports_file ? sv->sv_exports_file : sv->sv_export_path;
	struct sigaction sa = { 0 };
	char msg[512];
	int err, ret = 1;

	sa.sa_handler = on_stop;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sa.sa_handler = on_usr1;
	sigaction(SIGUSR1, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	printf(PROG ": serving %s on %s:%lu (mount port %lu; %s)\n", what,
	       sv->sv_listen ? sv->sv_listen : "*", sv->sv_port, sv->sv_mport,
	       !nfsd_flag(sv->sv_cf, NFSD_NO_NFS4) ? "NFSv3 and NFSv4.1" : "NFSv3");
	fflush(stdout);
	/* a status line for systemd: the path cut to fit */
	snprintf(msg, sizeof(msg), "serving %.300s on %.64s:%lu", what,
		 sv->sv_listen ? sv->sv_listen : "*", sv->sv_port);
	nfsd_notify_ready(msg);

	err = rpcrdma_svc_run(g_svc);
	nfsd_notify_stopping();
	if (err == -ENODEV)
		fprintf(stderr, PROG ": the RDMA device serving %s was removed: "
			"every connection closed, stopping\n",
			sv->sv_listen ? sv->sv_listen : "the listen address");
	else if (err)
		fprintf(stderr, PROG ": server loop failed: %s\n", strerror(-err));
	else
		ret = 0;
	if (nfsd_flag(sv->sv_cf, NFSD_STATS))
		rpcrdma_svc_stats_write(g_svc, RPCRDMA_SVC_STATS_JSON, stdout);
	return ret;
}

/*
 * nfsd_serve - the steps in order; a step that fails unwinds what the
 * ones before it started (the labels, in reverse), and the end of the
 * loop goes through the same unwinding with the final report.
 */
int nfsd_serve(const struct nfsd_conf *cf, const char *default_exports)
{
	static struct serve sv; /* the path buffer: off the stack */
	int ret = 1;

	memset(&sv, 0, sizeof(sv));
	sv.sv_state_fd = -1;
	sv.sv_cf = cf;
	sv.sv_exports_file = nfsd_s(cf, NFSD_EXPORTS);
	if (!nfsd_s(cf, NFSD_EXPORT) && !sv.sv_exports_file)
		sv.sv_exports_file = default_exports;
	sv.sv_listen = nfsd_s(cf, NFSD_LISTEN);
	sv.sv_port = nfsd_u(cf, NFSD_PORT, RPCRDMA_NFS_PORT);
	sv.sv_mport = nfsd_u(cf, NFSD_MOUNT_PORT, RPCRDMA_MNT_PORT);
	sv.sv_verbose = (int)nfsd_u(cf, NFSD_VERBOSE, 0);

	ret = serve_instance(&sv);
	if (ret)
		return ret;
	ret = nfsd_exports_load(cf, sv.sv_exports_file, &sv.sv_xt, sv.sv_export_path,
				sizeof(sv.sv_export_path));
	if (ret)
		return ret;
	ret = 1;
	if (serve_state_lock(&sv))
		goto out_xt;
	if (serve_nfs3(&sv))
		goto out_xt;
	if (serve_reload(&sv))
		goto out_export;
	if (serve_transport(&sv) || serve_nfs4(&sv) || serve_capture(&sv) ||
	    serve_locking(&sv))
		goto out_svc;
	if (serve_mount(&sv))
		goto out_nlm;
	if (serve_rpcbind(&sv))
		goto out_rpcbind;
	if (serve_control(&sv))
		goto out_rpcbind;
	if (serve_metrics(&sv))
		goto out_control;

	ret = serve_loop(&sv);
	nfsd_report_caches_nfs4(sv.sv_srv, sv.sv_srv4);
	rpcrdma_svc_metrics_stop(sv.sv_metrics);
out_control:
	rpcrdma_svc_control_stop(sv.sv_control);
out_rpcbind:
	rpcbind_unset(&sv);
	rpcrdma_mnt_stop(sv.sv_mnt);
out_nlm:
	if (sv.sv_nlm) {
		nfsd_report_locks(sv.sv_nlm);
		rpcrdma_nlm_stop(sv.sv_nlm);
	}
out_svc:
	rpcrdma_svc_destroy(g_svc);
	g_svc = NULL;
	nfsd_report_capture(sv.sv_capture, sv.sv_ccfg.cc_path);
out_export:
	nfsd_reloader_stop(&sv.sv_rel);
	rpcrdma_nfs4_server_destroy(sv.sv_srv4);
	rpcrdma_nfs3_server_destroy(sv.sv_srv);
out_xt:
	rpcrdma_nfs3_exports_free(sv.sv_xt);
	if (sv.sv_state_fd >= 0)
		close(sv.sv_state_fd);
	return ret;
}
