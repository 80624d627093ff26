// SPDX-License-Identifier: MIT
/*
 * nlm_cb.c - calls the lock manager makes to client hosts: GRANTED for a
 * blocked lock that became grantable (XNFS 10.x NLM_GRANTED), the _RES
 * answers to _MSG procedures, and SM_NOTIFY to a client's NSM after a
 * restart (XNFS 11.x).  Each looks the service's port up with the host's
 * rpcbind (PMAP GETPORT for IPv4, RPCBIND v3 GETADDR for IPv6), connects
 * over TCP from the server address the host called us at (a Linux client
 * matches a GRANTED callback with the server by address), and makes one
 * call with libtirpc.  Every step is bounded by NLM_CB_TIMEOUT_S.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/rpcb_uaddr.h"
#include "nlm_internal.h"

#include <rpc/pmap_prot.h>
#include <rpc/rpcb_prot.h>

#define NLM_CB_TIMEOUT_S 5

uint16_t nlm_cb_rpcbind_port = 111;

/* a TCP connection to @addr:@port from @local (port 0), bounded in time */
static int cb_connect(const struct sockaddr_storage *addr, socklen_t alen,
		      const struct sockaddr_storage *local, uint16_t port)
{
	struct sockaddr_storage dst = *addr;
	struct pollfd pfd;
	int fd, err = 0, fl;
	socklen_t el = sizeof(err);

	if (dst.ss_family == AF_INET)
		((struct sockaddr_in *)&dst)->sin_port = htons(port);
	else
		((struct sockaddr_in6 *)&dst)->sin6_port = htons(port);
	fd = socket(dst.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	if (local && local->ss_family == dst.ss_family) {
		struct sockaddr_storage src = *local;
		socklen_t sl = src.ss_family == AF_INET ? sizeof(struct sockaddr_in)
							: sizeof(struct sockaddr_in6);

		/* best effort: an address no longer ours is left to routing */
		if (bind(fd, (struct sockaddr *)&src, sl) < 0 && errno != EADDRNOTAVAIL) {
			err = -errno;
			goto out_close;
		}
	}
	if (connect(fd, (struct sockaddr *)&dst, alen) < 0) {
		if (errno != EINPROGRESS) {
			err = -errno;
			goto out_close;
		}
		pfd.fd = fd;
		pfd.events = POLLOUT;
		if (poll(&pfd, 1, NLM_CB_TIMEOUT_S * 1000) != 1) {
			err = -ETIMEDOUT;
			goto out_close;
		}
		if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el) < 0 || err) {
			err = err ? -err : -EIO;
			goto out_close;
		}
	}
	fl = fcntl(fd, F_GETFL);
	fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	return fd;

out_close:
	close(fd);
	return err;
}

/* one call over a connected socket (closed here) */
static int cb_call_fd(int fd, const struct sockaddr_storage *addr, socklen_t alen,
		      uint32_t prog, uint32_t vers, uint32_t proc, xdrproc_t xa,
		      void *args, xdrproc_t xr, void *res)
{
	struct timeval tv = { NLM_CB_TIMEOUT_S, 0 };
	struct netbuf nb = { .maxlen = alen, .len = alen, .buf = (void *)addr };
	enum clnt_stat st;
	CLIENT *cl;

	cl = clnt_vc_create(fd, &nb, prog, vers, 0, 0);
	if (!cl) {
		close(fd);
		return -EIO;
	}
	clnt_control(cl, CLSET_FD_CLOSE, NULL);
	st = clnt_call(cl, proc, xa, args, xr, res, tv);
	clnt_destroy(cl);
	if (st == RPC_SUCCESS)
		return 0;
	return st == RPC_TIMEDOUT ? -ETIMEDOUT : -EIO;
}

/* the TCP port of @prog/@vers at @addr, from its rpcbind */
static int cb_getport(const struct sockaddr_storage *addr, socklen_t alen,
		      uint32_t prog, uint32_t vers, uint16_t *port)
{
	int fd, err;

	fd = cb_connect(addr, alen, NULL, nlm_cb_rpcbind_port);
	if (fd < 0)
		return fd;
	if (addr->ss_family == AF_INET) {
		struct pmap pm = { .pm_prog = prog, .pm_vers = vers,
				   .pm_prot = IPPROTO_TCP };
		u_long p = 0;

		err = cb_call_fd(fd, addr, alen, PMAPPROG, PMAPVERS, PMAPPROC_GETPORT,
				 (xdrproc_t)xdr_pmap, &pm, (xdrproc_t)xdr_u_long, &p);
		if (err)
			return err;
		if (p == 0 || p > 65535)
			return -EHOSTUNREACH; /* not registered */
		*port = (uint16_t)p;
		return 0;
	} else {
		char netid[] = "tcp6", empty[] = "", *uaddr = NULL;
		struct rpcb rb = { .r_prog = prog, .r_vers = vers, .r_netid = netid,
				   .r_addr = empty, .r_owner = empty };

		err = cb_call_fd(fd, addr, alen, RPCBPROG, RPCBVERS, RPCBPROC_GETADDR,
				 (xdrproc_t)xdr_rpcb, &rb, (xdrproc_t)rpcrdma_xdr_uaddr,
				 &uaddr);
		if (err)
			return err;
		/* not registered (""), or no universal address */
		err = uaddr && !rpcrdma_rpcb_uaddr_port(uaddr, port) ? 0 : -EHOSTUNREACH;
		free(uaddr);
		return err;
	}
}

static int cb_call(const struct sockaddr_storage *addr, socklen_t alen,
		   const struct sockaddr_storage *local, uint32_t prog, uint32_t vers,
		   uint32_t proc, xdrproc_t xa, void *args, xdrproc_t xr, void *res)
{
	uint16_t port;
	int fd, err;

	err = cb_getport(addr, alen, prog, vers, &port);
	if (err)
		return err;
	fd = cb_connect(addr, alen, local, port);
	if (fd < 0)
		return fd;
	return cb_call_fd(fd, addr, alen, prog, vers, proc, xa, args, xr, res);
}

int nlm_cb_granted(struct rpcrdma_nlm *n, const struct nlm_grant *g)
{
	const struct nlm_waiter *w = &g->g_w;
	struct nlm_args *a = calloc(1, sizeof(*a));
	struct nlm_res *r = calloc(1, sizeof(*r));
	int err = -ENOMEM;

	if (!a || !r)
		goto out;
	/* nlm4_testargs: the cookie of the blocked LOCK, and the lock */
	a->a_cookielen = w->w_cookielen;
	memcpy(a->a_cookie, w->w_cookie, w->w_cookielen);
	a->a_excl = w->w_range.nr_excl;
	snprintf(a->a_caller, sizeof(a->a_caller), "%s", n->n_name);
	a->a_fhlen = w->w_fhlen;
	memcpy(a->a_fh, w->w_fh, w->w_fhlen);
	a->a_ohlen = w->w_owner.o_ohlen;
	memcpy(a->a_oh, w->w_owner.o_oh, w->w_owner.o_ohlen);
	a->a_svid = w->w_owner.o_svid;
	nlm_range_to_wire(&w->w_range, &a->a_offset, &a->a_len);
	err = cb_call(&g->g_addr, g->g_addrlen, &g->g_local, RPCRDMA_NLM_PROGRAM,
		      RPCRDMA_NLM_VERSION, NLMPROC4_GRANTED, (xdrproc_t)nlm_xdr_testargs,
		      a, (xdrproc_t)nlm_xdr_res, r);
	if (!err && r->r_stat != NLM4_GRANTED)
		err = -EPERM;
out:
	free(a);
	free(r);
	return err;
}

int nlm_cb_res(struct rpcrdma_nlm *n, const struct nlm_msgres *m)
{
	xdrproc_t xa = (xdrproc_t)nlm_xdr_res;

	(void)n;
	if (m->m_proc == NLMPROC4_TEST_RES)
		xa = (xdrproc_t)nlm_xdr_testres;
	return cb_call(&m->m_addr, m->m_addrlen, &m->m_local, RPCRDMA_NLM_PROGRAM,
		       RPCRDMA_NLM_VERSION, m->m_proc, xa, (void *)&m->m_res,
		       (xdrproc_t)nlm_xdr_void, NULL);
}

int nlm_cb_notify(struct rpcrdma_nlm *n, const struct nsm_record *r)
{
	struct nsm_args a;

	snprintf(a.na_name, sizeof(a.na_name), "%s", n->n_name);
	a.na_state = (int32_t)n->n_state;
	return cb_call(&r->nr_addr, r->nr_addrlen, &r->nr_local, RPCRDMA_NSM_PROGRAM,
		       RPCRDMA_NSM_VERSION, SM_NOTIFY, (xdrproc_t)nsm_xdr_stat_chge, &a,
		       (xdrproc_t)nlm_xdr_void, NULL);
}
