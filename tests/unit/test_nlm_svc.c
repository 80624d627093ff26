// SPDX-License-Identifier: MIT
/*
 * test_nlm_svc.c - the NLM v4 and NSM services over loopback TCP with a
 * libtirpc client, on an NFSv3 export in a temporary directory (handles
 * made by the NFS layer): NULL; LOCK/TEST/UNLOCK with the holder in the
 * TEST answer; FBIG; a forged handle and a removed file (NLM4_STALE_FH);
 * a handle longer than NFS3_FHSIZE (GARBAGE_ARGS); an unknown procedure
 * (PROC_UNAVAIL); SHARE, also against another protocol's reservation in
 * the layer's table (as NFSv4.1 OPEN makes); FREE_ALL; a peer the allow check refuses
 * (AUTH_ERROR, counted); a GRANTED callback that cannot be
 * delivered releases the lock; LOCK_MSG, TEST_MSG and UNLOCK_MSG answered
 * by _RES calls, and a GRANTED callback (cookie, lock, our name) taken by
 * a fake client lock manager found through a fake portmapper; then a restart with a grace period:
 * the state number advanced, the host's record kept, a plain LOCK refused
 * NLM4_DENIED_GRACE_PERIOD and a reclaim granted; SM_NOTIFY from the
 * host releases its locks (SM_NOTIFY naming another host does not;
 * SM_STAT is STAT_FAIL with our state; MON and the rest PROC_UNAVAIL);
 * another gateway's grace period (a backend
 * that says so) refuses a new LOCK, TEST and SHARE and lets a reclaim
 * through.  Every case runs once per backend of the
 * file-serving layer: posix (a temporary directory; as root only, for
 * file handles: skipped otherwise) and memory (always, root or not).  The
 * client calls with AUTH_SYS root: the lock manager checks files for the
 * caller.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "nlm/nlm_internal.h"
#include "nfs3/nfs3_internal.h"
#include "common/rpc_tcp.h"
#include "nlm_fixture.h"
#include "fs/fs_backend.h"

#include <rpc/pmap_prot.h>

struct s_env {
	const struct nfx_backend *b;      /* the group's backend */
	char dir[64], state[64];
	struct rpcrdma_nfs3_server *srv;  /* NULL: the backend cannot run here */
	struct rpcrdma_nfs3_export *exp;  /* its export (id 0): files, handles */
	struct rpcrdma_mnt *mnt;
	struct rpcrdma_nlm *nlm;
	uint16_t nlm_port, nsm_port;
	uint8_t fh[RPCRDMA_NFS3_FHSIZE];
	uint32_t fhlen;
};

static struct s_env env;
static bool refuse_all;

static bool allow_fn(const struct sockaddr *peer, void *arg)
{
	(void)arg;
	return peer->sa_family == AF_INET && !refuse_all;
}

/*
 * The client side of the callbacks: a portmapper (program 100000 v2,
 * served by the server's TCP thread, src/nfs3/rpc_tcp.c) that answers GETPORT for NLM v4
 * tcp with pmap_answer (0: not registered), and a bare TCP listener
 * standing for the client's lock manager, read and answered by hand.
 */
static u_long pmap_answer;
static int fake_lsn = -1;
static struct rpc_tcp_listener *fake_pmap;
static uint16_t fake_port;

static void pmap_dispatch(struct svc_req *rq, SVCXPRT *xprt)
{
	struct pmap pm;
	u_long port = pmap_answer;

	if (rq->rq_proc != PMAPPROC_GETPORT) {
		svcerr_noproc(xprt);
		return;
	}
	if (!svc_getargs(xprt, (xdrproc_t)xdr_pmap, (caddr_t)&pm)) {
		svcerr_decode(xprt);
		return;
	}
	if (pm.pm_prog != RPCRDMA_NLM_PROGRAM || pm.pm_vers != RPCRDMA_NLM_VERSION ||
	    pm.pm_prot != IPPROTO_TCP)
		port = 0;
	svc_sendreply(xprt, (xdrproc_t)xdr_u_long, (caddr_t)&port);
}

static int listener(uint16_t *port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	socklen_t len = sizeof(sin);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	inet_pton(AF_INET, "127.0.0.1", &sin.sin_addr);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sin, sizeof(sin)) < 0 ||
	    listen(fd, 8) < 0 || getsockname(fd, (struct sockaddr *)&sin, &len) < 0)
		return -1;
	*port = ntohs(sin.sin_port);
	return fd;
}

static int fake_setup(void)
{
	uint16_t pport;
	int pfd = listener(&pport);

	fake_lsn = listener(&fake_port);
	if (pfd < 0 || fake_lsn < 0)
		return -1;
	if (rpc_tcp_serve(pfd, PMAPPROG, PMAPVERS, pmap_dispatch, NULL, NULL, &fake_pmap))
		return -1;
	nlm_cb_rpcbind_port = pport;
	return 0;
}

static bool read_full(int fd, void *buf, size_t n)
{
	for (size_t got = 0; got < n;) {
		ssize_t r = read(fd, (char *)buf + got, n - got);

		if (r <= 0)
			return false;
		got += (size_t)r;
	}
	return true;
}

/*
 * Take one call on the fake client NLM: check it is @proc of NLM v4,
 * decode its argument with @xa into @arg, answer SUCCESS with @xr/@res.
 */
static void fake_serve(uint32_t proc, xdrproc_t xa, void *arg, xdrproc_t xr, void *res)
{
	struct pollfd pfd = { .fd = fake_lsn, .events = POLLIN };
	static char buf[8192];
	uint32_t mark, xid, v[5], len, zero = 0, one = 1;
	char body[400], *bp = body;
	u_int blen;
	XDR x;
	int fd;

	assert_int_equal(poll(&pfd, 1, 30000), 1);
	fd = accept(fake_lsn, NULL, NULL);
	assert_true(fd >= 0);
	assert_true(read_full(fd, &mark, 4));
	len = ntohl(mark) & 0x7fffffff;
	assert_true(len <= sizeof(buf));
	assert_true(read_full(fd, buf, len));
	xdrmem_create(&x, buf, len, XDR_DECODE);
	/* xid, CALL, rpcvers, prog, vers, proc */
	assert_true(xdr_u_int32_t(&x, &xid));
	for (int i = 0; i < 5; i++)
		assert_true(xdr_u_int32_t(&x, &v[i]));
	assert_int_equal(v[0], 0);
	assert_int_equal(v[1], 2);
	assert_int_equal(v[2], RPCRDMA_NLM_PROGRAM);
	assert_int_equal(v[3], RPCRDMA_NLM_VERSION);
	assert_int_equal(v[4], proc);
	for (int i = 0; i < 2; i++) { /* credential, verifier */
		blen = 0;
		assert_true(xdr_u_int32_t(&x, &v[0]) && xdr_bytes(&x, &bp, &blen, 400));
	}
	assert_true(xa(&x, arg));
	xdr_destroy(&x);
	/* reply: xid, REPLY, MSG_ACCEPTED, AUTH_NONE verifier, SUCCESS, result */
	xdrmem_create(&x, buf + 4, sizeof(buf) - 4, XDR_ENCODE);
	assert_true(xdr_u_int32_t(&x, &xid) && xdr_u_int32_t(&x, &one) &&
		    xdr_u_int32_t(&x, &zero) && xdr_u_int32_t(&x, &zero) &&
		    xdr_u_int32_t(&x, &zero) && xdr_u_int32_t(&x, &zero));
	assert_true(xr(&x, res));
	len = xdr_getpos(&x);
	xdr_destroy(&x);
	mark = htonl(0x80000000u | len);
	memcpy(buf, &mark, 4);
	assert_int_equal(write(fd, buf, len + 4), (ssize_t)(len + 4));
	close(fd);
}

static int start(uint32_t grace)
{
	struct rpcrdma_nlm_config cfg = {
		.lc_listen = "127.0.0.1",
		.lc_state_dir = env.state,
		.lc_grace_sec = grace,
		.lc_open = rpcrdma_nlm_nfs3_open,
		.lc_open_arg = env.srv,
		.lc_nsm_name = "testserver",
		.lc_allow = allow_fn,
		.lc_cluster_grace = rpcrdma_nlm_nfs3_cluster_grace,
	};
	int err = -EADDRINUSE;

	if (rpcrdma_nlm_start(&cfg, &env.nlm))
		return -1;
	rpcrdma_nlm_ports(env.nlm, &env.nlm_port, &env.nsm_port);
	for (int i = 0; i < 20 && err == -EADDRINUSE; i++) {
		uint16_t p = (uint16_t)(30000 + (getpid() * 11 + i * 137) % 20000);

		err = rpcrdma_mnt_start(env.srv, "127.0.0.1", p, false, &env.mnt);
	}
	return err ? -1 : 0;
}

static void stop(void)
{
	rpcrdma_mnt_stop(env.mnt);
	rpcrdma_nlm_stop(env.nlm);
	env.mnt = NULL;
	env.nlm = NULL;
}

/* the group's case: skipped when its backend cannot run here */
static void need_env(void)
{
	if (!env.srv)
		skip();
}

/* the backend of the group main() runs next */
static const struct nfx_backend *group_backend;

static int setup(void **state)
{
	struct rpcrdma_nfs3_config cfg = { 0 };
	struct rpcrdma_nfs3_exports *xt;
	struct fs_snap *sn;
	char text[160], msg[256];

	(void)state;
	memset(&env, 0, sizeof(env));
	env.b = group_backend;
	if (!nfx_usable(env.b))
		return 0;
	strcpy(env.dir, "/tmp/nlmsvc.XXXXXX");
	strcpy(env.state, "/tmp/nlmst.XXXXXX");
	if (!mkdtemp(env.dir) || !mkdtemp(env.state))
		return -1;
	/* the server of the directory as export id 0 (what rpcrdma-nfsd
	 * --export makes) */
	snprintf(text, sizeof(text), "%s *(rw,no_root_squash,fsid=0,backend=%s)\n", env.dir,
		 env.b->nb_name);
	if (rpcrdma_nfs3_exports_parse("test", text, &xt, msg, sizeof(msg)) ||
	    rpcrdma_nfs3_server_create(&cfg, xt, &env.srv, msg, sizeof(msg))) {
		fprintf(stderr, "test_nlm_svc: server: %s\n", msg);
		return -1;
	}
	rpcrdma_nfs3_exports_free(xt);
	sn = fs_snap_get(env.srv);
	env.exp = sn->sn_exp[0]; /* the server's table holds it */
	fs_snap_put(sn);
	nfx_mkfile(env.exp, "f", 0644, 0, 4096);
	nfx_fh(env.exp, "f", env.fh, &env.fhlen);
	if (fake_setup())
		return -1;
	return start(UINT32_MAX);
}

static int teardown(void **state)
{
	char cmd[200];

	(void)state;
	if (!env.srv)
		return 0;
	if (env.nlm)
		stop();
	rpc_tcp_unserve(fake_pmap);
	close(fake_lsn);
	rpcrdma_nfs3_server_destroy(env.srv);
	env.srv = NULL;
	snprintf(cmd, sizeof(cmd), "rm -rf %s %s", env.dir, env.state);
	return system(cmd) == 0 ? 0 : -1;
}

static CLIENT *client(uint16_t port, uint32_t prog, uint32_t vers)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(port) };
	int sock = RPC_ANYSOCK;
	CLIENT *cl;

	inet_pton(AF_INET, "127.0.0.1", &sin.sin_addr);
	cl = clnttcp_create(&sin, prog, vers, &sock, 0, 0);
	assert_non_null(cl);
	/* AUTH_SYS root: the export is no_root_squash, the files root's
	 * (NLM opens them as the caller) */
	auth_destroy(cl->cl_auth);
	cl->cl_auth = authunix_create("testclient", 0, 0, 0, NULL);
	assert_non_null(cl->cl_auth);
	return cl;
}

static void client_done(CLIENT *cl)
{
	auth_destroy(cl->cl_auth);
	clnt_destroy(cl);
}

static const struct timeval tmo = { 10, 0 };

static void lock_args(struct nlm_args *a, uint32_t svid, const char *oh,
		      uint64_t off, uint64_t len, bool excl)
{
	memset(a, 0, sizeof(*a));
	a->a_cookielen = 4;
	memcpy(a->a_cookie, "ck01", 4);
	strcpy(a->a_caller, "testclient");
	a->a_fhlen = env.fhlen;
	memcpy(a->a_fh, env.fh, env.fhlen);
	a->a_ohlen = (uint32_t)strlen(oh);
	memcpy(a->a_oh, oh, a->a_ohlen);
	a->a_svid = svid;
	a->a_offset = off;
	a->a_len = len;
	a->a_excl = excl;
}

static uint32_t call(CLIENT *cl, uint32_t proc, struct nlm_args *a)
{
	static struct nlm_res r;
	xdrproc_t xa = (xdrproc_t)nlm_xdr_lockargs, xr = (xdrproc_t)nlm_xdr_res;

	if (proc == NLMPROC4_TEST) {
		xa = (xdrproc_t)nlm_xdr_testargs;
		xr = (xdrproc_t)nlm_xdr_testres;
	} else if (proc == NLMPROC4_UNLOCK) {
		xa = (xdrproc_t)nlm_xdr_unlockargs;
	} else if (proc == NLMPROC4_CANCEL) {
		xa = (xdrproc_t)nlm_xdr_cancargs;
	} else if (proc == NLMPROC4_SHARE || proc == NLMPROC4_UNSHARE) {
		xa = (xdrproc_t)nlm_xdr_shareargs;
		xr = (xdrproc_t)nlm_xdr_shareres;
	}
	memset(&r, 0, sizeof(r));
	assert_int_equal(clnt_call(cl, proc, xa, (caddr_t)a, xr, (caddr_t)&r, tmo),
			 RPC_SUCCESS);
	assert_int_equal(r.r_cookielen, a->a_cookielen);
	assert_memory_equal(r.r_cookie, a->a_cookie, a->a_cookielen);
	if (proc == NLMPROC4_TEST && r.r_stat == NLM4_DENIED) {
		/* the holder: svid 7, "owner-a", bytes 0..9 write */
		assert_true(r.r_holder.c_excl);
		assert_int_equal(r.r_holder.c_svid, 7);
		assert_int_equal(r.r_holder.c_ohlen, 7);
		assert_memory_equal(r.r_holder.c_oh, "owner-a", 7);
		assert_true(r.r_holder.c_offset == 0 && r.r_holder.c_len == 10);
	}
	return r.r_stat;
}

static void test_procedures(void **state)
{
	struct nlm_args a;
	struct rpcrdma_nlm_stats st;
	CLIENT *cl;

	(void)state;
	need_env();
	cl = client(env.nlm_port, RPCRDMA_NLM_PROGRAM, RPCRDMA_NLM_VERSION);
	assert_int_equal(clnt_call(cl, NLMPROC4_NULL, (xdrproc_t)nlm_xdr_void, NULL,
				   (xdrproc_t)nlm_xdr_void, NULL, tmo), RPC_SUCCESS);
	lock_args(&a, 7, "owner-a", 0, 10, true);
	assert_int_equal(call(cl, NLMPROC4_LOCK, &a), NLM4_GRANTED);
	lock_args(&a, 8, "owner-b", 5, 1, false);
	assert_int_equal(call(cl, NLMPROC4_TEST, &a), NLM4_DENIED);
	assert_int_equal(call(cl, NLMPROC4_LOCK, &a), NLM4_DENIED);
	a.a_block = true;
	assert_int_equal(call(cl, NLMPROC4_LOCK, &a), NLM4_BLOCKED);
	assert_int_equal(call(cl, NLMPROC4_CANCEL, &a), NLM4_GRANTED);
	/* the holder is really locked on the file (another owner: posix, a
	 * local process) */
	assert_false(nfx_can_lock(env.b, env.exp, "f", 3, 1, F_WRLCK));
	assert_true(nfx_can_lock(env.b, env.exp, "f", 10, 1, F_WRLCK));
	/* an offset off_t cannot hold */
	lock_args(&a, 8, "owner-b", 1ull << 63, 1, true);
	assert_int_equal(call(cl, NLMPROC4_LOCK, &a), NLM4_FBIG);
	/* a forged handle: one bit flipped */
	lock_args(&a, 8, "owner-b", 100, 1, true);
	a.a_fh[a.a_fhlen - 1] ^= 1;
	assert_int_equal(call(cl, NLMPROC4_LOCK, &a), NLM4_STALE_FH);
	/* owner A lets go: B's TEST is granted */
	lock_args(&a, 7, "owner-a", 0, 0, false);
	assert_int_equal(call(cl, NLMPROC4_UNLOCK, &a), NLM4_GRANTED);
	lock_args(&a, 8, "owner-b", 5, 1, true);
	assert_int_equal(call(cl, NLMPROC4_TEST, &a), NLM4_GRANTED);
	/* shares: deny-write then a writer */
	lock_args(&a, 0, "owner-a", 0, 0, false);
	a.a_mode = 2;
	a.a_access = 1;
	assert_int_equal(call(cl, NLMPROC4_SHARE, &a), NLM4_GRANTED);
	lock_args(&a, 0, "owner-b", 0, 0, false);
	a.a_mode = 0;
	a.a_access = 2;
	assert_int_equal(call(cl, NLMPROC4_SHARE, &a), NLM4_DENIED);
	/* FREE_ALL of "testclient" drops owner-a's share */
	lock_args(&a, 0, "", 0, 0, false);
	strcpy(a.a_caller, "testclient");
	assert_int_equal(clnt_call(cl, NLMPROC4_FREE_ALL, (xdrproc_t)nlm_xdr_notify,
				   (caddr_t)&a, (xdrproc_t)nlm_xdr_void, NULL, tmo),
			 RPC_SUCCESS);
	lock_args(&a, 0, "owner-b", 0, 0, false);
	a.a_access = 2;
	assert_int_equal(call(cl, NLMPROC4_SHARE, &a), NLM4_GRANTED);
	assert_int_equal(call(cl, NLMPROC4_UNSHARE, &a), NLM4_GRANTED);
	/* an unknown procedure */
	assert_int_equal(clnt_call(cl, 99, (xdrproc_t)nlm_xdr_void, NULL,
				   (xdrproc_t)nlm_xdr_void, NULL, tmo), RPC_PROCUNAVAIL);
	/* a removed file */
	lock_args(&a, 7, "owner-a", 0, 1, true);
	nfx_unlink(env.exp, "f");
	assert_int_equal(call(cl, NLMPROC4_LOCK, &a), NLM4_STALE_FH);
	/* a peer the allow check refuses: AUTH_ERROR, counted; NULL answered */
	refuse_all = true;
	lock_args(&a, 7, "owner-a", 0, 1, true);
	{
		struct nlm_res r;

		assert_int_equal(clnt_call(cl, NLMPROC4_LOCK, (xdrproc_t)nlm_xdr_lockargs,
					   (caddr_t)&a, (xdrproc_t)nlm_xdr_res,
					   (caddr_t)&r, tmo), RPC_AUTHERROR);
	}
	assert_int_equal(clnt_call(cl, NLMPROC4_NULL, (xdrproc_t)nlm_xdr_void, NULL,
				   (xdrproc_t)nlm_xdr_void, NULL, tmo), RPC_SUCCESS);
	refuse_all = false;
	client_done(cl);

	rpcrdma_nlm_get_stats(env.nlm, &st);
	assert_int_equal(st.ns_refused, 1);
	assert_int_equal(st.ns_ranges, 0);
	assert_int_equal(st.ns_holders, 0);
	assert_int_equal(st.ns_waiting, 0);
	assert_int_equal(st.ns_state, 1);
	assert_false(st.ns_in_grace);
	assert_int_equal(st.ns_stale, 2);
}

/* a handle longer than 64 bytes does not decode: GARBAGE_ARGS */
static bool_t xdr_long_fh(XDR *x, void *unused)
{
	char buf[80] = { 0 }, *p = buf, cookie[4] = "abcd", *c = cookie, *name = "x";
	u_int n = 80, cn = 4;
	bool_t f = FALSE;
	uint32_t svid = 1;
	uint64_t z = 0;

	(void)unused;
	return xdr_bytes(x, &c, &cn, 4) && xdr_bool(x, &f) && xdr_bool(x, &f) &&
	       xdr_string(x, &name, 8) && xdr_bytes(x, &p, &n, 80) &&
	       xdr_bytes(x, &c, &cn, 4) && xdr_u_int32_t(x, &svid) &&
	       xdr_u_int64_t(x, &z) && xdr_u_int64_t(x, &z) && xdr_bool(x, &f) &&
	       xdr_u_int32_t(x, &svid);
}

static void test_garbage(void **state)
{
	struct nlm_res r;
	CLIENT *cl;

	(void)state;
	need_env();
	cl = client(env.nlm_port, RPCRDMA_NLM_PROGRAM, RPCRDMA_NLM_VERSION);
	assert_int_equal(clnt_call(cl, NLMPROC4_LOCK, (xdrproc_t)xdr_long_fh, NULL,
				   (xdrproc_t)nlm_xdr_res, (caddr_t)&r, tmo),
			 RPC_CANTDECODEARGS);
	client_done(cl);
}

/*
 * The NSM side of the lock manager: SM_NULL answers; SM_STAT is answered
 * STAT_FAIL (this NSM monitors nobody for other programs: MON is the
 * host's rpc.statd's job) with our state number, 1 on the first start
 * with a fresh state directory (XNFS: odd while up, counting from 1);
 * MON, UNMON, UNMON_ALL and SIMU_CRASH are PROC_UNAVAIL; SM_STAT and
 * SM_NOTIFY without their arguments are GARBAGE_ARGS; an SM_NOTIFY that
 * names another host than the lock holder releases nothing.
 */
static void test_nsm_procedures(void **state)
{
	static const uint32_t unavail[] = { SM_MON, 3, 4, 5 }; /* MON UNMON UNMON_ALL SIMU_CRASH */
	struct rpcrdma_nlm_stats st;
	struct nsm_stat_res res;
	struct nsm_args na;
	struct nlm_args a;
	uint64_t freed;
	CLIENT *cl, *ncl;

	(void)state;
	need_env();
	ncl = client(env.nsm_port, RPCRDMA_NSM_PROGRAM, RPCRDMA_NSM_VERSION);
	assert_int_equal(clnt_call(ncl, SM_NULL, (xdrproc_t)nlm_xdr_void, NULL,
				   (xdrproc_t)nlm_xdr_void, NULL, tmo), RPC_SUCCESS);
	memset(&na, 0, sizeof(na));
	strcpy(na.na_name, "testclient");
	memset(&res, 0xff, sizeof(res));
	assert_int_equal(clnt_call(ncl, SM_STAT, (xdrproc_t)nsm_xdr_sm_name, (caddr_t)&na,
				   (xdrproc_t)nsm_xdr_stat_res, (caddr_t)&res, tmo),
			 RPC_SUCCESS);
	assert_int_equal(res.sr_res, 1);   /* stat_fail */
	assert_int_equal(res.sr_state, 1); /* first start, fresh directory */
	for (size_t i = 0; i < sizeof(unavail) / sizeof(unavail[0]); i++)
		assert_int_equal(clnt_call(ncl, unavail[i], (xdrproc_t)nsm_xdr_sm_name,
					   (caddr_t)&na, (xdrproc_t)nlm_xdr_void, NULL, tmo),
				 RPC_PROCUNAVAIL);
	assert_int_equal(clnt_call(ncl, SM_STAT, (xdrproc_t)nlm_xdr_void, NULL,
				   (xdrproc_t)nsm_xdr_stat_res, (caddr_t)&res, tmo),
			 RPC_CANTDECODEARGS);
	assert_int_equal(clnt_call(ncl, SM_NOTIFY, (xdrproc_t)nlm_xdr_void, NULL,
				   (xdrproc_t)nlm_xdr_void, NULL, tmo), RPC_CANTDECODEARGS);

	/* a lock of "testclient"; "otherclient" reboots: the lock stays */
	nfx_mkfile(env.exp, "nsm", 0644, 0, 0);
	cl = client(env.nlm_port, RPCRDMA_NLM_PROGRAM, RPCRDMA_NLM_VERSION);
	lock_args(&a, 31, "owner-n", 0, 1, true);
	nfx_fh(env.exp, "nsm", a.a_fh, &a.a_fhlen);
	assert_int_equal(call(cl, NLMPROC4_LOCK, &a), NLM4_GRANTED);
	rpcrdma_nlm_get_stats(env.nlm, &st);
	assert_int_equal(st.ns_ranges, 1);
	freed = st.ns_freed_hosts;
	strcpy(na.na_name, "otherclient");
	na.na_state = 3;
	assert_int_equal(clnt_call(ncl, SM_NOTIFY, (xdrproc_t)nsm_xdr_stat_chge, (caddr_t)&na,
				   (xdrproc_t)nlm_xdr_void, NULL, tmo), RPC_SUCCESS);
	rpcrdma_nlm_get_stats(env.nlm, &st);
	assert_int_equal(st.ns_ranges, 1);
	assert_int_equal(st.ns_freed_hosts, freed);
	assert_int_equal(call(cl, NLMPROC4_UNLOCK, &a), NLM4_GRANTED);
	rpcrdma_nlm_get_stats(env.nlm, &st);
	assert_int_equal(st.ns_ranges, 0);
	client_done(cl);
	client_done(ncl);
}

/* a blocked lock becomes grantable, but the GRANTED callback cannot be
 * delivered (no NLM at the caller): the lock is released, not leaked */
static void test_callback_undeliverable(void **state)
{
	struct nlm_args a;
	struct rpcrdma_nlm_stats st;
	CLIENT *cl;

	(void)state;
	need_env();
	pmap_answer = 0; /* the client has no NLM registered */
	nfx_mkfile(env.exp, "g", 0644, 0, 0);
	nfx_fh(env.exp, "g", env.fh, &env.fhlen);
	cl = client(env.nlm_port, RPCRDMA_NLM_PROGRAM, RPCRDMA_NLM_VERSION);
	lock_args(&a, 7, "owner-a", 0, 0, true);
	assert_int_equal(call(cl, NLMPROC4_LOCK, &a), NLM4_GRANTED);
	lock_args(&a, 8, "owner-b", 0, 10, true);
	a.a_block = true;
	assert_int_equal(call(cl, NLMPROC4_LOCK, &a), NLM4_BLOCKED);
	lock_args(&a, 7, "owner-a", 0, 0, false);
	assert_int_equal(call(cl, NLMPROC4_UNLOCK, &a), NLM4_GRANTED);
	client_done(cl);
	/* the thread takes the lock for B, fails to announce it, lets go */
	for (int i = 0; i < 600; i++) {
		rpcrdma_nlm_get_stats(env.nlm, &st);
		if (st.ns_callback_fail)
			break;
		usleep(50000);
	}
	assert_int_equal(st.ns_callback_fail, 1);
	assert_int_equal(st.ns_callbacks, 0);
	assert_int_equal(st.ns_ranges, 0);
	assert_int_equal(st.ns_holders, 0);
	assert_int_equal(st.ns_waiting, 0);
	assert_true(nfx_can_lock(env.b, env.exp, "g", 0, 0, F_WRLCK)); /* nothing held */
}

static void test_msg_res(void **state)
{
	struct nlm_args a;
	struct nlm_res r;
	CLIENT *cl;

	(void)state;
	need_env();
	pmap_answer = fake_port;
	cl = client(env.nlm_port, RPCRDMA_NLM_PROGRAM, RPCRDMA_NLM_VERSION);
	/* LOCK_MSG: a void reply, then LOCK_RES (12) to the caller's NLM */
	lock_args(&a, 21, "owner-m", 1000, 1, true);
	assert_int_equal(clnt_call(cl, NLMPROC4_LOCK_MSG, (xdrproc_t)nlm_xdr_lockargs,
				   (caddr_t)&a, (xdrproc_t)nlm_xdr_void, NULL, tmo),
			 RPC_SUCCESS);
	memset(&r, 0, sizeof(r));
	fake_serve(NLMPROC4_LOCK_RES, (xdrproc_t)nlm_xdr_res, &r,
		   (xdrproc_t)nlm_xdr_void, NULL);
	assert_int_equal(r.r_stat, NLM4_GRANTED);
	assert_int_equal(r.r_cookielen, 4);
	assert_memory_equal(r.r_cookie, "ck01", 4);
	/* TEST_MSG by another owner: TEST_RES (11), denied, the holder */
	lock_args(&a, 22, "owner-n", 1000, 1, false);
	assert_int_equal(clnt_call(cl, NLMPROC4_TEST_MSG, (xdrproc_t)nlm_xdr_testargs,
				   (caddr_t)&a, (xdrproc_t)nlm_xdr_void, NULL, tmo),
			 RPC_SUCCESS);
	memset(&r, 0, sizeof(r));
	fake_serve(NLMPROC4_TEST_RES, (xdrproc_t)nlm_xdr_testres, &r,
		   (xdrproc_t)nlm_xdr_void, NULL);
	assert_int_equal(r.r_stat, NLM4_DENIED);
	assert_int_equal(r.r_holder.c_svid, 21);
	assert_int_equal(r.r_holder.c_ohlen, 7);
	assert_memory_equal(r.r_holder.c_oh, "owner-m", 7);
	assert_true(r.r_holder.c_offset == 1000 && r.r_holder.c_len == 1);
	/* UNLOCK_MSG: UNLOCK_RES (14), granted; nothing held after */
	lock_args(&a, 21, "owner-m", 1000, 1, false);
	assert_int_equal(clnt_call(cl, NLMPROC4_UNLOCK_MSG, (xdrproc_t)nlm_xdr_unlockargs,
				   (caddr_t)&a, (xdrproc_t)nlm_xdr_void, NULL, tmo),
			 RPC_SUCCESS);
	memset(&r, 0, sizeof(r));
	fake_serve(NLMPROC4_UNLOCK_RES, (xdrproc_t)nlm_xdr_res, &r,
		   (xdrproc_t)nlm_xdr_void, NULL);
	assert_int_equal(r.r_stat, NLM4_GRANTED);
	client_done(cl);
	pmap_answer = 0;
}

/* a blocked lock becomes grantable: GRANTED (5) to the caller's NLM with
 * the blocked request's cookie and lock; the client takes it */
static void test_granted_delivered(void **state)
{
	struct nlm_args a, got;
	struct nlm_res ok = { .r_cookielen = 4, .r_stat = NLM4_GRANTED };
	struct rpcrdma_nlm_stats st;
	CLIENT *cl;

	(void)state;
	need_env();
	pmap_answer = fake_port;
	cl = client(env.nlm_port, RPCRDMA_NLM_PROGRAM, RPCRDMA_NLM_VERSION);
	lock_args(&a, 7, "owner-a", 0, 0, true);
	assert_int_equal(call(cl, NLMPROC4_LOCK, &a), NLM4_GRANTED);
	lock_args(&a, 8, "owner-b", 0, 10, true);
	memcpy(a.a_cookie, "blk8", 4);
	a.a_block = true;
	assert_int_equal(call(cl, NLMPROC4_LOCK, &a), NLM4_BLOCKED);
	lock_args(&a, 7, "owner-a", 0, 0, false);
	assert_int_equal(call(cl, NLMPROC4_UNLOCK, &a), NLM4_GRANTED);
	memset(&got, 0, sizeof(got));
	memcpy(ok.r_cookie, "blk8", 4);
	fake_serve(NLMPROC4_GRANTED, (xdrproc_t)nlm_xdr_testargs, &got,
		   (xdrproc_t)nlm_xdr_res, &ok);
	assert_int_equal(got.a_cookielen, 4);
	assert_memory_equal(got.a_cookie, "blk8", 4);
	assert_true(got.a_excl);
	assert_string_equal(got.a_caller, "testserver");
	assert_int_equal(got.a_svid, 8);
	assert_int_equal(got.a_ohlen, 7);
	assert_memory_equal(got.a_oh, "owner-b", 7);
	assert_true(got.a_offset == 0 && got.a_len == 10);
	assert_int_equal(got.a_fhlen, env.fhlen);
	assert_memory_equal(got.a_fh, env.fh, env.fhlen);
	for (int i = 0; i < 600; i++) {
		rpcrdma_nlm_get_stats(env.nlm, &st);
		if (st.ns_callbacks)
			break;
		usleep(50000);
	}
	assert_int_equal(st.ns_callbacks, 1);
	assert_int_equal(st.ns_ranges, 1);
	/* B holds 0..9 on the file */
	assert_false(nfx_can_lock(env.b, env.exp, "g", 5, 1, F_WRLCK));
	lock_args(&a, 8, "owner-b", 0, 10, false);
	assert_int_equal(call(cl, NLMPROC4_UNLOCK, &a), NLM4_GRANTED);
	client_done(cl);
	rpcrdma_nlm_get_stats(env.nlm, &st);
	assert_int_equal(st.ns_ranges, 0);
	pmap_answer = 0;
}

static void test_restart_grace(void **state)
{
	struct nlm_args a;
	struct nsm_args na;
	struct rpcrdma_nlm_stats st;
	char path[128];
	struct stat sb;
	CLIENT *cl;

	(void)state;
	need_env();
	/* the file again (test_procedures removed it) and a lock on it */
	nfx_mkfile(env.exp, "f", 0644, 0, 0);
	nfx_fh(env.exp, "f", env.fh, &env.fhlen);
	cl = client(env.nlm_port, RPCRDMA_NLM_PROGRAM, RPCRDMA_NLM_VERSION);
	lock_args(&a, 7, "owner-a", 0, 10, true);
	assert_int_equal(call(cl, NLMPROC4_LOCK, &a), NLM4_GRANTED);
	client_done(cl);
	snprintf(path, sizeof(path), "%s/sm/127.0.0.1", env.state);
	assert_int_equal(stat(path, &sb), 0); /* the host is recorded */

	/* restart with a grace period of 60 s: the lock is gone with the
	 * process (released at stop), the record stays */
	stop();
	assert_int_equal(stat(path, &sb), 0);
	assert_int_equal(start(60), 0);
	rpcrdma_nlm_get_stats(env.nlm, &st);
	assert_int_equal(st.ns_state, 3);
	assert_true(st.ns_in_grace);
	cl = client(env.nlm_port, RPCRDMA_NLM_PROGRAM, RPCRDMA_NLM_VERSION);
	lock_args(&a, 9, "owner-c", 100, 1, true);
	assert_int_equal(call(cl, NLMPROC4_LOCK, &a), NLM4_DENIED_GRACE_PERIOD);
	assert_int_equal(call(cl, NLMPROC4_TEST, &a), NLM4_DENIED_GRACE_PERIOD);
	lock_args(&a, 7, "owner-a", 0, 10, true);
	a.a_reclaim = true;
	assert_int_equal(call(cl, NLMPROC4_LOCK, &a), NLM4_GRANTED);
	client_done(cl);
	rpcrdma_nlm_get_stats(env.nlm, &st);
	assert_int_equal(st.ns_reclaimed, 1);
	assert_int_equal(st.ns_grace_refused, 2);
	assert_int_equal(st.ns_ranges, 1);

	/* the client reboots: SM_NOTIFY by its caller_name */
	cl = client(env.nsm_port, RPCRDMA_NSM_PROGRAM, RPCRDMA_NSM_VERSION);
	memset(&na, 0, sizeof(na));
	strcpy(na.na_name, "testclient");
	na.na_state = 5;
	assert_int_equal(clnt_call(cl, SM_NOTIFY, (xdrproc_t)nsm_xdr_stat_chge,
				   (caddr_t)&na, (xdrproc_t)nlm_xdr_void, NULL, tmo),
			 RPC_SUCCESS);
	client_done(cl);
	rpcrdma_nlm_get_stats(env.nlm, &st);
	assert_int_equal(st.ns_ranges, 0);
	assert_int_equal(st.ns_freed_hosts, 1);
	assert_int_equal(stat(path, &sb), -1); /* record removed */
}

/* the backend of a cluster: the export's own, saying another gateway
 * is in grace when peer_grace says so (1, 0, or an error) */
static int peer_grace;
static struct fs_backend cluster_be;

static int peer_grace_fn(struct rpcrdma_nfs3_export *exp)
{
	(void)exp;
	return peer_grace;
}

/*
 * Another gateway of the export's cluster in its grace period (what
 * cephfs with grace= reports; fs_cluster_grace()): a LOCK that is no
 * reclaim, a TEST and a SHARE are NLM4_DENIED_GRACE_PERIOD, as in this
 * server's own grace (the lock they would take could be one a client of
 * that gateway is about to reclaim through it); UNLOCK is served; a
 * reclaim in this server's own grace is granted.  The backends as they
 * are (posix, memory) never say so.  Fails before the change: the LOCK
 * is GRANTED outside this server's own grace.
 */
static void test_cluster_grace(void **state)
{
	const struct fs_backend *own;
	struct rpcrdma_nlm_stats st;
	struct nlm_args a;
	CLIENT *cl;

	(void)state;
	need_env();
	assert_int_equal(fs_cluster_grace(env.exp), 0); /* posix, memory */
	own = env.exp->ex_be;
	cluster_be = *own;
	cluster_be.be_cluster_grace = peer_grace_fn;
	env.exp->ex_be = &cluster_be;
	peer_grace = 1;

	/* this server in its own grace (test_restart_grace's start): its
	 * client's reclaim goes through, a peer's grace or not */
	stop();
	assert_int_equal(start(60), 0);
	cl = client(env.nlm_port, RPCRDMA_NLM_PROGRAM, RPCRDMA_NLM_VERSION);
	lock_args(&a, 7, "owner-a", 0, 10, true);
	a.a_reclaim = true;
	assert_int_equal(call(cl, NLMPROC4_LOCK, &a), NLM4_GRANTED);
	client_done(cl);

	/* this server out of grace, the peer in it */
	stop();
	assert_int_equal(start(UINT32_MAX), 0);
	cl = client(env.nlm_port, RPCRDMA_NLM_PROGRAM, RPCRDMA_NLM_VERSION);
	lock_args(&a, 9, "owner-c", 0, 10, true);
	assert_int_equal(call(cl, NLMPROC4_LOCK, &a), NLM4_DENIED_GRACE_PERIOD);
	assert_int_equal(call(cl, NLMPROC4_TEST, &a), NLM4_DENIED_GRACE_PERIOD);
	a.a_access = 1;
	assert_int_equal(call(cl, NLMPROC4_SHARE, &a), NLM4_DENIED_GRACE_PERIOD);
	/* a reclaim here is late as ever (this server has no grace) */
	a.a_reclaim = true;
	assert_int_equal(call(cl, NLMPROC4_LOCK, &a), NLM4_DENIED_GRACE_PERIOD);
	a.a_reclaim = false;
	/* cannot tell: as in grace */
	peer_grace = -EAGAIN;
	assert_int_equal(call(cl, NLMPROC4_LOCK, &a), NLM4_DENIED_GRACE_PERIOD);
	rpcrdma_nlm_get_stats(env.nlm, &st);
	assert_int_equal(st.ns_grace_refused, 5);
	assert_int_equal(st.ns_ranges, 0);
	/* the peer's grace over: granted; UNLOCK is served in a peer's grace */
	peer_grace = 0;
	assert_int_equal(call(cl, NLMPROC4_LOCK, &a), NLM4_GRANTED);
	peer_grace = 1;
	assert_int_equal(call(cl, NLMPROC4_UNLOCK, &a), NLM4_GRANTED);
	client_done(cl);
	rpcrdma_nlm_get_stats(env.nlm, &st);
	assert_int_equal(st.ns_ranges, 0);
	env.exp->ex_be = own;
	peer_grace = 0;
}

/*
 * The operator reloads an exports table without the export while a
 * client holds a lock on one of its files: the lock manager keeps the
 * lock description (the export is gone, the lock is not), and releases
 * it when the client lets go (FREE_ALL here; UNLOCK or stop the same).
 * On the memory backend the description points into the export's tree,
 * which must outlive it (the tree freed at the export's close: a
 * use-after-free when the description is closed).
 */
static void test_reload_drops_export(void **state)
{
	struct rpcrdma_nfs3_exports *xt;
	struct rpcrdma_nlm_stats st;
	struct nlm_args a;
	char text[160], msg[256];
	CLIENT *cl;

	(void)state;
	need_env();
	/* out of test_restart_grace's grace period: a restart without one */
	stop();
	assert_int_equal(start(UINT32_MAX), 0);
	nfx_mkfile(env.exp, "rl", 0644, 0, 0);
	nfx_fh(env.exp, "rl", env.fh, &env.fhlen);
	cl = client(env.nlm_port, RPCRDMA_NLM_PROGRAM, RPCRDMA_NLM_VERSION);
	lock_args(&a, 7, "owner-a", 0, 10, true);
	assert_int_equal(call(cl, NLMPROC4_LOCK, &a), NLM4_GRANTED);
	/* the export goes: another directory takes its place */
	snprintf(text, sizeof(text), "%s *(rw,no_root_squash,fsid=1,backend=%s)\n",
		 env.state, env.b->nb_name);
	assert_int_equal(rpcrdma_nfs3_exports_parse("test", text, &xt, msg, sizeof(msg)), 0);
	assert_int_equal(rpcrdma_nfs3_server_reload(env.srv, xt, msg, sizeof(msg)), 0);
	rpcrdma_nfs3_exports_free(xt);
	env.exp = NULL; /* closed with the old table */
	/* the client lets go of everything: the description is closed */
	lock_args(&a, 0, "", 0, 0, false);
	strcpy(a.a_caller, "testclient");
	assert_int_equal(clnt_call(cl, NLMPROC4_FREE_ALL, (xdrproc_t)nlm_xdr_notify,
				   (caddr_t)&a, (xdrproc_t)nlm_xdr_void, NULL, tmo),
			 RPC_SUCCESS);
	client_done(cl);
	rpcrdma_nlm_get_stats(env.nlm, &st);
	assert_int_equal(st.ns_ranges, 0);
}

/*
 * NLM SHARE meets a reservation made by another protocol in the layer's
 * table (as NFSv4.1 OPEN makes one: fs_share_set_fh() with an NFSv4
 * owner), both ways, as RFC 8881 9.7 and XNFS's SHARE say: a share whose
 * access meets the other's deny, or whose deny meets its access, is
 * NLM4_DENIED.  FREE_ALL takes the host's shares out of the layer's table
 * too.  Fails before the change: NLM kept its shares to itself (GRANTED).
 */
static void test_share_layer(void **state)
{
	uint64_t v4 = fs_share_owner(FS_SHARE_TAG_NFS4, 42);
	uint8_t fh[RPCRDMA_NFS3_FHSIZE];
	uint32_t fhlen;
	struct nlm_args a;
	struct fs_call c;
	CLIENT *cl;

	(void)state;
	need_env();
	nfx_mkfile(env.exp, "s", 0644, 0, 16);
	nfx_fh(env.exp, "s", fh, &fhlen);
	memset(&c, 0, sizeof(c));
	c.c_srv = env.srv;
	c.c_exp = env.exp;
	/* "NFSv4" reads and denies writing */
	assert_int_equal(fs_share_set_fh(&c, NULL, fh, fhlen, v4, FS_SHARE_READ,
					 FS_SHARE_WRITE), 0);
	cl = client(env.nlm_port, RPCRDMA_NLM_PROGRAM, RPCRDMA_NLM_VERSION);
	lock_args(&a, 0, "owner-s", 0, 0, false);
	a.a_fhlen = fhlen;
	memcpy(a.a_fh, fh, fhlen);
	a.a_mode = 0;
	a.a_access = 2; /* fsa_W */
	assert_int_equal(call(cl, NLMPROC4_SHARE, &a), NLM4_DENIED);
	a.a_access = 3; /* fsa_RW */
	assert_int_equal(call(cl, NLMPROC4_SHARE, &a), NLM4_DENIED);
	a.a_access = 1;
	a.a_mode = 1; /* fsm_DR: it reads */
	assert_int_equal(call(cl, NLMPROC4_SHARE, &a), NLM4_DENIED);
	a.a_mode = 2; /* fsm_DW: fine, it only reads */
	assert_int_equal(call(cl, NLMPROC4_SHARE, &a), NLM4_GRANTED);
	assert_int_equal(fs_shares_count(env.srv), 2);
	/* the other way: NLM reads, so "NFSv4" may not deny reading */
	assert_int_equal(fs_share_set_fh(&c, NULL, fh, fhlen, v4, FS_SHARE_READ,
					 FS_SHARE_READ), -EBUSY);
	/* "NFSv4" lets go: NLM may write (its share replaced) */
	fs_share_drop(env.srv, v4);
	a.a_mode = 0;
	a.a_access = 2;
	assert_int_equal(call(cl, NLMPROC4_SHARE, &a), NLM4_GRANTED);
	assert_int_equal(fs_share_set_fh(&c, NULL, fh, fhlen, v4, FS_SHARE_READ,
					 FS_SHARE_WRITE), -EBUSY);
	/* FREE_ALL of the host: its share leaves the layer's table */
	lock_args(&a, 0, "", 0, 0, false);
	strcpy(a.a_caller, "testclient");
	assert_int_equal(clnt_call(cl, NLMPROC4_FREE_ALL, (xdrproc_t)nlm_xdr_notify,
				   (caddr_t)&a, (xdrproc_t)nlm_xdr_void, NULL, tmo),
			 RPC_SUCCESS);
	assert_int_equal(fs_shares_count(env.srv), 0);
	assert_int_equal(fs_share_set_fh(&c, NULL, fh, fhlen, v4, FS_SHARE_READ,
					 FS_SHARE_WRITE), 0);
	fs_share_drop(env.srv, v4);
	client_done(cl);
	nfx_unlink(env.exp, "s");
}

#define CASES(b)                                                  \
	{ #b ": test_share_layer", test_share_layer, NULL, NULL, NULL },    \
	{ #b ": test_procedures", test_procedures, NULL, NULL, NULL },      \
	{ #b ": test_garbage", test_garbage, NULL, NULL, NULL },            \
	{ #b ": test_nsm_procedures", test_nsm_procedures, NULL, NULL, NULL }, \
	{ #b ": test_callback_undeliverable", test_callback_undeliverable, \
	  NULL, NULL, NULL },                                           \
	{ #b ": test_msg_res", test_msg_res, NULL, NULL, NULL },            \
	{ #b ": test_granted_delivered", test_granted_delivered, NULL,     \
	  NULL, NULL },                                                 \
	{ #b ": test_restart_grace", test_restart_grace, NULL, NULL, NULL }, \
	{ #b ": test_cluster_grace", test_cluster_grace, NULL, NULL, NULL }, \
	{ #b ": test_reload_drops_export", test_reload_drops_export, NULL, \
	  NULL, NULL }

/* run @tests as one group on backend @b (its server made once) */
static int run_group(const char *name, const struct CMUnitTest *tests, size_t n,
		     const struct nfx_backend *b)
{
	group_backend = b;
	return _cmocka_run_group_tests(name, tests, n, setup, teardown);
}

int main(void)
{
	const struct CMUnitTest posix[] = { CASES(posix) };
	const struct CMUnitTest memory[] = { CASES(memory) };
	int failed = 0;

	/* posix cases skip without root (file handles: a skip each, never a
	 * pass); memory ones run everywhere */
	failed += run_group("test_nlm_svc posix", posix, sizeof(posix) / sizeof(posix[0]),
			    &nfx_posix);
	failed += run_group("test_nlm_svc memory", memory, sizeof(memory) / sizeof(memory[0]),
			    &nfx_memory);
	return t_exit(failed);
}
