// SPDX-License-Identifier: MIT
/*
 * nfsc_mount.c - the MOUNT v3 client (RFC 1813 section 5) over TCP with
 * libtirpc: MNT to get the export's root handle, UMNT when done.  The
 * MOUNT port is given, or asked of rpcbind (RFC 1833 GETADDR).
 */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <rpc/rpc.h>
/* <rpc/rpc_msg.h> and <rpcrdma/wire.h> both define RPC_MSG_VERSION. */
#undef RPC_MSG_VERSION

#include "common/backoff.h"
#include "common/rpcb_uaddr.h"
#include "nfsc/nfsc_internal.h"

/* rpcbind's well-known port (RFC 1833). */
#define RPCRDMA_RPCBIND_PORT 111
/* MOUNT's and rpcbind's time limit when the mount gives none (nf_timeout_ms 0). */
#define NFSC_MNT_TIMEOUT_MS 10000u

static struct timeval ms_timeval(unsigned ms)
{
	struct timeval tv = { .tv_sec = ms / 1000, .tv_usec = (ms % 1000) * 1000 };

	return tv;
}

/* Connect @fd to @sa within @ms (a blocking connect() may wait for
 * minutes on an address that drops SYNs).  0 or -errno (-ETIMEDOUT). */
static int connect_within(int fd, const struct sockaddr *sa, socklen_t len, unsigned ms)
{
	struct pollfd pfd = { .fd = fd, .events = POLLOUT };
	int flags = fcntl(fd, F_GETFL), soerr = 0, n;
	socklen_t slen = sizeof(soerr);

	if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0)
		return -errno;
	if (connect(fd, sa, len) < 0) {
		if (errno != EINPROGRESS)
			return -errno;
		do
			n = poll(&pfd, 1, (int)ms);
		while (n < 0 && errno == EINTR);
		if (n < 0)
			return -errno;
		if (n == 0)
			return -ETIMEDOUT;
		if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &slen) < 0)
			return -errno;
		if (soerr)
			return -soerr;
	}
	return fcntl(fd, F_SETFL, flags) < 0 ? -errno : 0;
}

struct nfsc_mnt_res {
	uint32_t mr_status;
	struct rpcrdma_nfsc_fh mr_fh;
};

static bool_t nfsc_xdr_dirpath(XDR *x, char **path)
{
	return xdr_string(x, path, MNT3_PATHLEN);
}

/* mountres3: status; on MNT3_OK fhandle3<64> and auth_flavors<>. */
static bool_t nfsc_xdr_mnt_res(XDR *x, struct nfsc_mnt_res *r)
{
	char *fh = (char *)r->mr_fh.fh_data;
	u_int len = 0, n, i;
	int flavor;

	if (!xdr_u_int(x, &r->mr_status))
		return FALSE;
	if (r->mr_status)
		return TRUE;
	if (!xdr_bytes(x, &fh, &len, RPCRDMA_NFSC_FHSIZE))
		return FALSE;
	r->mr_fh.fh_len = len;
	if (!xdr_u_int(x, &n) || n > 64)
		return FALSE;
	for (i = 0; i < n; i++)
		if (!xdr_int(x, &flavor))
			return FALSE;
	return TRUE;
}

static int mnt_status_errno(uint32_t st)
{
	switch (st) {
	case 1: return -EPERM;
	case 2: return -ENOENT;
	case 5: return -EIO;
	case 13: return -EACCES;
	case 20: return -ENOTDIR;
	case 22: return -EINVAL;
	case 63: return -ENAMETOOLONG;
	case 10004: return -EOPNOTSUPP;
	default: return -EIO;
	}
}

/*
 * A libtirpc TCP CLIENT for @prog/@vers on @server's @port, the address
 * looked up by number (AI_NUMERICSERV): no netconfig or name service
 * lookup for the port; each address given up after @ms of connecting.
 * *@family: the address family connected over.  *@err: -ENXIO (the
 * name does not resolve: not retried, unlike an unreachable address),
 * -ENOMEM, connect()'s error, -ETIMEDOUT.
 */
static CLIENT *tcp_client(const char *server, uint16_t port, rpcprog_t prog,
			  rpcvers_t vers, unsigned ms, int *family, int *err)
{
	struct addrinfo hints, *res = NULL, *ai;
	struct netbuf nb;
	char sport[8];
	CLIENT *clnt;
	int fd = -1, rc;

	memset(&hints, 0, sizeof(hints));
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_NUMERICSERV;
	snprintf(sport, sizeof(sport), "%u", port);
	rc = getaddrinfo(server, sport, &hints, &res);
	if (rc) {
		*err = rc == EAI_MEMORY ? -ENOMEM : -ENXIO;
		return NULL;
	}
	*err = -ECONNREFUSED;
	for (ai = res; ai; ai = ai->ai_next) {
		fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0)
			continue;
		*err = connect_within(fd, ai->ai_addr, ai->ai_addrlen, ms);
		if (!*err)
			break;
		close(fd);
		fd = -1;
	}
	if (fd < 0) {
		freeaddrinfo(res);
		return NULL;
	}
	nb.buf = ai->ai_addr;
	nb.len = nb.maxlen = ai->ai_addrlen;
	*family = ai->ai_family;
	clnt = clnt_vc_create(fd, &nb, prog, vers, 0, 0);
	freeaddrinfo(res);
	if (!clnt) {
		close(fd);
		*err = -ECONNREFUSED;
		return NULL;
	}
	clnt_control(clnt, CLSET_FD_CLOSE, NULL);
	return clnt;
}

int nfsc_rpcb_getport(const char *server, uint16_t rpcb_port, uint32_t prog, uint32_t vers,
		      unsigned timeout_ms, uint16_t *port)
{
	unsigned ms = timeout_ms ? timeout_ms : NFSC_MNT_TIMEOUT_MS;
	struct timeval tv = ms_timeval(ms);
	char *uaddr = NULL;
	struct rpcb parms;
	enum clnt_stat st;
	CLIENT *clnt;
	int family = AF_INET, rc;

	clnt = tcp_client(server, rpcb_port, RPCBPROG, RPCBVERS, ms, &family, &rc);
	if (!clnt)
		return rc;
	memset(&parms, 0, sizeof(parms));
	parms.r_prog = prog;
	parms.r_vers = vers;
	parms.r_netid = family == AF_INET6 ? "tcp6" : "tcp";
	parms.r_addr = "";
	parms.r_owner = "";
	st = clnt_call(clnt, RPCBPROC_GETADDR, (xdrproc_t)xdr_rpcb, (caddr_t)&parms,
		       (xdrproc_t)rpcrdma_xdr_uaddr, (caddr_t)&uaddr, tv);
	if (st != RPC_SUCCESS)
		rc = st == RPC_TIMEDOUT ? -ETIMEDOUT : st == RPC_PROGVERSMISMATCH ||
		     st == RPC_PROGUNAVAIL || st == RPC_PROCUNAVAIL ? -EPROTONOSUPPORT :
		     -ECONNREFUSED;
	else if (!uaddr || !*uaddr)
		rc = -ECONNREFUSED; /* not registered for this transport */
	else
		rc = rpcrdma_rpcb_uaddr_port(uaddr, port) ? -EPROTO : 0;
	if (uaddr)
		xdr_free((xdrproc_t)rpcrdma_xdr_uaddr, (char *)&uaddr);
	clnt_destroy(clnt);
	return rc;
}

/*
 * A TCP CLIENT for MOUNT v3 on @port, or through rpcbind when 0: asked by
 * number (rpcbind version 3 GETADDR on port 111 of the address given),
 * which spares libtirpc's clnt_create() its netconfig, name service and
 * services lookups; only a server whose rpcbind does not speak version 3
 * (a portmap-only host) goes through clnt_create(), which falls back to
 * portmap.  Connecting and the rpcbind call are given up after @ms.
 * *@err: as tcp_client(), or nfsc_rpcb_getport()'s error (an answer that
 * is no address: -ECONNREFUSED).
 */
static CLIENT *mnt_client(const char *server, uint16_t port, unsigned ms, int *err)
{
	struct timeval tv = ms_timeval(ms);
	CLIENT *clnt;
	int family, rc;

	if (!port) {
		rc = nfsc_rpcb_getport(server, RPCRDMA_RPCBIND_PORT, RPCRDMA_MNT_PROGRAM,
				       RPCRDMA_MNT_VERSION, ms, &port);
		if (rc == -EPROTONOSUPPORT) {
			clnt = clnt_create_timed(server, RPCRDMA_MNT_PROGRAM, RPCRDMA_MNT_VERSION,
						 "tcp", &tv);
			if (!clnt)
				*err = rpc_createerr.cf_stat == RPC_TIMEDOUT ? -ETIMEDOUT :
									       -ECONNREFUSED;
			return clnt;
		}
		if (rc) {
			*err = rc == -EPROTO ? -ECONNREFUSED : rc;
			return NULL;
		}
	}
	return tcp_client(server, port, RPCRDMA_MNT_PROGRAM, RPCRDMA_MNT_VERSION, ms, &family,
			  err);
}

/* One MNT: 0 with the root handle in @nc, a MOUNT status as an errno, or
 * a connection or RPC error (which nfsc_mnt may retry). */
static int nfsc_mnt_once(struct rpcrdma_nfsc *nc, const struct rpcrdma_nfsc_config *cfg)
{
	unsigned ms = cfg->nf_timeout_ms ? cfg->nf_timeout_ms : NFSC_MNT_TIMEOUT_MS;
	struct timeval tv = ms_timeval(ms);
	struct nfsc_mnt_res res;
	char *path = (char *)cfg->nf_export;
	enum clnt_stat st;
	CLIENT *clnt;
	int rc = 0;

	clnt = mnt_client(cfg->nf_server, cfg->nf_mount_port, ms, &rc);
	if (!clnt)
		return rc;
	clnt->cl_auth = authunix_create_default();
	memset(&res, 0, sizeof(res));
	st = clnt_call(clnt, MOUNTPROC3_MNT, (xdrproc_t)nfsc_xdr_dirpath, (caddr_t)&path,
		       (xdrproc_t)nfsc_xdr_mnt_res, (caddr_t)&res, tv);
	if (st != RPC_SUCCESS) {
		/* libtirpc's words only when verbose: the caller says the
		 * failure in its own (from the errno) */
		if (nc->nc_log && nc->nc_verbose)
			fprintf(nc->nc_log, "rpcrdma-nfsc: MOUNT: %s\n", clnt_sperrno(st));
		rc = st == RPC_TIMEDOUT ? -ETIMEDOUT : -ECONNREFUSED;
		goto err;
	}
	if (res.mr_status) {
		rc = mnt_status_errno(res.mr_status);
		goto err;
	}
	nc->nc_root = res.mr_fh;
	nc->nc_mnt = clnt;
	return 0;
err:
	if (clnt->cl_auth)
		auth_destroy(clnt->cl_auth);
	clnt_destroy(clnt);
	return rc;
}

bool nfsc_mnt_retryable(int rc)
{
	return rc == -ECONNREFUSED || rc == -ETIMEDOUT || rc == -ECONNRESET ||
	       rc == -EHOSTUNREACH || rc == -ENETUNREACH;
}

int nfsc_mnt(struct rpcrdma_nfsc *nc, const struct rpcrdma_nfsc_config *cfg)
{
	unsigned attempt, delay = 0;
	int rc;

	for (attempt = 0;; attempt++) {
		nc->nc_mnt_attempts++;
		rc = nfsc_mnt_once(nc, cfg);
		if (!rc || !nfsc_mnt_retryable(rc) || attempt >= cfg->nf_retries)
			return rc;
		/* As the transport reconnects: at once, then 250 ms doubling. */
		if (nc->nc_log)
			fprintf(nc->nc_log, "rpcrdma-nfsc: MOUNT: %s (attempt %u of %u, next in "
				"%u ms)\n", strerror(-rc), attempt + 1, cfg->nf_retries + 1, delay);
		usleep(delay * 1000u);
		delay = rpcrdma_backoff_next(delay, RPCRDMA_BACKOFF_MAX_MS);
	}
}

static bool_t nfsc_xdr_void(XDR *x, void *p)
{
	(void)x;
	(void)p;
	return TRUE;
}

void nfsc_umnt(struct rpcrdma_nfsc *nc)
{
	struct timeval tv = { .tv_sec = 5 };
	CLIENT *clnt = nc->nc_mnt;
	char *path = nc->nc_export;

	if (!clnt)
		return;
	if (path)
		clnt_call(clnt, MOUNTPROC3_UMNT, (xdrproc_t)nfsc_xdr_dirpath, (caddr_t)&path,
			  (xdrproc_t)nfsc_xdr_void, NULL, tv);
	if (clnt->cl_auth)
		auth_destroy(clnt->cl_auth);
	clnt_destroy(clnt);
	nc->nc_mnt = NULL;
}
