// SPDX-License-Identifier: MIT
/*
 * mnt.c - MOUNT version 3 (RFC 1813 section 5) over TCP with libtirpc.
 *
 * One export; MNT hands out its root handle.  The XDR routines are written
 * here with libtirpc's primitives.  libtirpc keeps its server state in
 * globals, so one MOUNT server runs per process, on its own thread, which
 * polls a private copy of svc_pollfd (svc_getreq_poll may grow the global
 * array while it walks the one it was given).
 */
#include <errno.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rpc/rpc.h>
/*
 * <rpc/rpc_msg.h> and <rpcrdma/wire.h> both define RPC_MSG_VERSION (2);
 * nothing here uses it.
 */
#undef RPC_MSG_VERSION

#include "nfs3_internal.h"


struct rpcrdma_mnt {
	struct rpcrdma_nfs3_export *m_exp;
	SVCXPRT *m_xprt;
	int m_fd;
	bool m_rpcbind;
	atomic_bool m_stop;
	pthread_t m_thread;
};

/* libtirpc's dispatch callback has no argument: the one running server */
static struct rpcrdma_mnt *mnt_current;
static atomic_flag mnt_busy = ATOMIC_FLAG_INIT;

struct mnt_res {
	uint32_t mr_status;
	uint8_t mr_fh[RPCRDMA_NFS3_FHSIZE];
	u_int mr_fhlen;
};

static bool_t xdr_dirpath(XDR *x, char **path)
{
	return xdr_string(x, path, MNT3_PATHLEN);
}

/* mountres3: status, then on MNT3_OK fhandle3 and auth_flavors<> */
static bool_t xdr_mnt_res(XDR *x, struct mnt_res *r)
{
	char *fh = (char *)r->mr_fh;
	u_int fhlen = r->mr_fhlen, nflav = 2;
	int flavors[2] = { AUTH_SYS, AUTH_NONE };

	if (!xdr_u_int(x, &r->mr_status))
		return FALSE;
	if (r->mr_status != MNT3_OK)
		return TRUE;
	if (!xdr_bytes(x, &fh, &fhlen, RPCRDMA_NFS3_FHSIZE) || !xdr_u_int(x, &nflav))
		return FALSE;
	return xdr_int(x, &flavors[0]) && xdr_int(x, &flavors[1]);
}

/* exports: one exportnode with an empty group list (RFC 1813 5.2.5) */
static bool_t xdr_exports(XDR *x, struct rpcrdma_nfs3_export *exp)
{
	bool_t yes = TRUE, no = FALSE;
	char *path = exp->ex_path;

	return xdr_bool(x, &yes) && xdr_dirpath(x, &path) &&
	       xdr_bool(x, &no) && xdr_bool(x, &no);
}

/* void results */
static bool_t xdr_nothing(XDR *x, void *unused)
{
	(void)x;
	(void)unused;
	return TRUE;
}

/* DUMP: an empty mountlist (this server keeps no mount table) */
static bool_t xdr_empty_list(XDR *x, void *unused)
{
	bool_t no = FALSE;

	(void)unused;
	return xdr_bool(x, &no);
}

/* Compare a client's path with the export, ignoring trailing slashes. */
static bool path_matches(const char *want, const char *have)
{
	size_t n = strlen(want), h = strlen(have);

	while (n > 1 && want[n - 1] == '/')
		n--;
	return n == h && memcmp(want, have, n) == 0;
}

static void mnt_mnt(struct rpcrdma_mnt *m, struct svc_req *rq, SVCXPRT *xprt)
{
	struct rpcrdma_nfs3_export *exp = m->m_exp;
	struct mnt_res res = { .mr_status = MNT3_OK };
	struct netbuf *nb = svc_getrpccaller(xprt);
	const struct sockaddr *peer = nb ? (const struct sockaddr *)nb->buf : NULL;
	char *path = NULL;

	(void)rq;
	if (!svc_getargs(xprt, (xdrproc_t)xdr_dirpath, (caddr_t)&path)) {
		svcerr_decode(xprt);
		return;
	}
	if (exp->ex_allow && (!peer || !exp->ex_allow(peer, exp->ex_allow_arg)))
		res.mr_status = MNT3ERR_ACCES;
	else if (!path_matches(path, exp->ex_path))
		res.mr_status = MNT3ERR_NOENT;
	else if (rpcrdma_nfs3_root_fh(exp, res.mr_fh, &res.mr_fhlen) < 0)
		res.mr_status = MNT3ERR_SERVERFAULT;
	if (exp->ex_verbose)
		fprintf(exp->ex_log, "rpcrdma-nfsd: MNT %s -> %u\n", path,
			res.mr_status);
	svc_sendreply(xprt, (xdrproc_t)xdr_mnt_res, (caddr_t)&res);
	svc_freeargs(xprt, (xdrproc_t)xdr_dirpath, (caddr_t)&path);
}

static void mnt_dispatch(struct svc_req *rq, SVCXPRT *xprt)
{
	struct rpcrdma_mnt *m = mnt_current;
	char *path = NULL;

	if (!m) {
		svcerr_systemerr(xprt);
		return;
	}
	switch (rq->rq_proc) {
	case MOUNTPROC3_NULL:
	case MOUNTPROC3_UMNTALL:
		svc_sendreply(xprt, (xdrproc_t)xdr_nothing, NULL);
		break;
	case MOUNTPROC3_MNT:
		mnt_mnt(m, rq, xprt);
		break;
	case MOUNTPROC3_DUMP:
		svc_sendreply(xprt, (xdrproc_t)xdr_empty_list, NULL);
		break;
	case MOUNTPROC3_UMNT:
		if (!svc_getargs(xprt, (xdrproc_t)xdr_dirpath, (caddr_t)&path)) {
			svcerr_decode(xprt);
			break;
		}
		svc_sendreply(xprt, (xdrproc_t)xdr_nothing, NULL);
		svc_freeargs(xprt, (xdrproc_t)xdr_dirpath, (caddr_t)&path);
		break;
	case MOUNTPROC3_EXPORT:
		svc_sendreply(xprt, (xdrproc_t)xdr_exports, (caddr_t)m->m_exp);
		break;
	default:
		svcerr_noproc(xprt);
		break;
	}
}

static void *mnt_thread(void *arg)
{
	struct rpcrdma_mnt *m = arg;
	struct pollfd *fds = NULL;
	int cap = 0;

	while (!atomic_load(&m->m_stop)) {
		int n = svc_max_pollfd, r;

		if (n > cap) {
			struct pollfd *p = realloc(fds, sizeof(*fds) * (size_t)n);

			if (!p) {
				usleep(100000);
				continue;
			}
			fds = p;
			cap = n;
		}
		memcpy(fds, svc_pollfd, sizeof(*fds) * (size_t)n);
		r = poll(fds, (nfds_t)n, 200);
		if (r > 0)
			svc_getreq_poll(fds, r);
	}
	free(fds);
	return NULL;
}

static int mnt_socket(const char *listen_addr, uint16_t port, int *fdp)
{
	struct sockaddr_storage ss = { 0 };
	struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
	socklen_t len;
	int fd, one = 1, zero = 0, err;

	if (!listen_addr) {
		s6->sin6_family = AF_INET6;
		s6->sin6_addr = in6addr_any;
		s6->sin6_port = htons(port);
		len = sizeof(*s6);
	} else if (inet_pton(AF_INET, listen_addr, &s4->sin_addr) == 1) {
		s4->sin_family = AF_INET;
		s4->sin_port = htons(port);
		len = sizeof(*s4);
	} else if (inet_pton(AF_INET6, listen_addr, &s6->sin6_addr) == 1) {
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(port);
		len = sizeof(*s6);
	} else {
		return -EINVAL;
	}
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 && !listen_addr && errno == EAFNOSUPPORT) {
		/* no IPv6: any IPv4 address */
		memset(&ss, 0, sizeof(ss));
		s4->sin_family = AF_INET;
		s4->sin_addr.s_addr = htonl(INADDR_ANY);
		s4->sin_port = htons(port);
		len = sizeof(*s4);
		fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	}
	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (ss.ss_family == AF_INET6 && !listen_addr)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
	if (bind(fd, (struct sockaddr *)&ss, len) < 0 || listen(fd, 64) < 0) {
		err = -errno;
		close(fd);
		return err;
	}
	*fdp = fd;
	return 0;
}

int rpcrdma_mnt_start(struct rpcrdma_nfs3_export *exp, const char *listen_addr,
		      uint16_t port, bool rpcbind, struct rpcrdma_mnt **out)
{
	struct rpcrdma_mnt *m;
	int err;

	if (atomic_flag_test_and_set(&mnt_busy))
		return -EBUSY;
	m = calloc(1, sizeof(*m));
	if (!m) {
		err = -ENOMEM;
		goto out_busy;
	}
	m->m_exp = exp;
	m->m_rpcbind = rpcbind;
	err = mnt_socket(listen_addr, port ? port : RPCRDMA_MNT_PORT, &m->m_fd);
	if (err)
		goto out_free;
	m->m_xprt = svc_vc_create(m->m_fd, 0, 0);
	if (!m->m_xprt) {
		err = -EIO;
		goto out_close;
	}
	mnt_current = m;
	/* Protocol 0: svc_register does not talk to rpcbind.  It would
	 * register the listening transport's port, which libtirpc sets to
	 * 0xffff for a rendezvous socket; we register the real port below. */
	if (!svc_register(m->m_xprt, RPCRDMA_MNT_PROGRAM, RPCRDMA_MNT_VERSION,
			  mnt_dispatch, 0)) {
		err = -EIO;
		goto out_xprt;
	}
	if (rpcbind) {
		pmap_unset(RPCRDMA_MNT_PROGRAM, RPCRDMA_MNT_VERSION);
		if (!pmap_set(RPCRDMA_MNT_PROGRAM, RPCRDMA_MNT_VERSION, IPPROTO_TCP,
			      port ? port : RPCRDMA_MNT_PORT)) {
			err = -ECONNREFUSED; /* rpcbind not running */
			goto out_xprt;
		}
	}
	err = -pthread_create(&m->m_thread, NULL, mnt_thread, m);
	if (err)
		goto out_unreg;
	*out = m;
	return 0;

out_unreg:
	if (rpcbind)
		svc_unregister(RPCRDMA_MNT_PROGRAM, RPCRDMA_MNT_VERSION);
out_xprt:
	svc_destroy(m->m_xprt); /* closes m_fd */
	m->m_fd = -1;
out_close:
	if (m->m_fd >= 0)
		close(m->m_fd);
out_free:
	mnt_current = NULL;
	free(m);
out_busy:
	atomic_flag_clear(&mnt_busy);
	return err;
}

void rpcrdma_mnt_stop(struct rpcrdma_mnt *m)
{
	if (!m)
		return;
	atomic_store(&m->m_stop, true);
	pthread_join(m->m_thread, NULL);
	/*
	 * Both libtirpc unregister calls talk to rpcbind; without --rpcbind
	 * the callout stays (mnt_dispatch refuses calls while none runs).
	 */
	if (m->m_rpcbind)
		svc_unregister(RPCRDMA_MNT_PROGRAM, RPCRDMA_MNT_VERSION);
	svc_destroy(m->m_xprt);
	mnt_current = NULL;
	free(m);
	atomic_flag_clear(&mnt_busy);
}
