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
 *
 * GRANTED and _RES calls are jobs for NLM_CB_WORKERS worker threads, each
 * calling one host at a time and no two the same host (see struct
 * nlm_msgres); a host whose callback timed out is put aside for
 * NLM_CB_BACKOFF_S, so that it costs a worker one timeout per period.
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

_Atomic uint16_t nlm_cb_rpcbind_port = 111; /* a test may change it while callbacks run */

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

static bool ts_before(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec < b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec < b->tv_nsec);
}

/* the record of @a while it is put aside (expired ones are cleared);
 * under n_mu */
static struct nlm_cb_dead *cb_dead_find(struct rpcrdma_nlm *n,
					const struct sockaddr_storage *a)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	for (unsigned i = 0; i < NLM_CB_DEAD_MAX; i++) {
		struct nlm_cb_dead *d = &n->n_cb_dead[i];

		if (!d->d_addr.ss_family)
			continue;
		if (ts_before(&d->d_until, &now))
			d->d_addr.ss_family = 0;
		else if (nlm_host_equal((struct sockaddr *)&d->d_addr, (struct sockaddr *)a))
			return d;
	}
	return NULL;
}

static bool cb_host_dead(struct rpcrdma_nlm *n, const struct sockaddr_storage *a)
{
	bool dead;

	pthread_mutex_lock(&n->n_mu);
	dead = cb_dead_find(n, a) != NULL;
	pthread_mutex_unlock(&n->n_mu);
	return dead;
}

/* a callback to @a timed out: put it aside (a full table forgets the
 * record that ends first) */
static void cb_host_timed_out(struct rpcrdma_nlm *n, const struct sockaddr_storage *a)
{
	struct nlm_cb_dead *d;
	char s[INET6_ADDRSTRLEN];

	pthread_mutex_lock(&n->n_mu);
	d = cb_dead_find(n, a);
	if (!d) {
		d = &n->n_cb_dead[0];
		for (unsigned i = 0; i < NLM_CB_DEAD_MAX && d->d_addr.ss_family; i++)
			if (!n->n_cb_dead[i].d_addr.ss_family ||
			    ts_before(&n->n_cb_dead[i].d_until, &d->d_until))
				d = &n->n_cb_dead[i];
		d->d_addr = *a;
		n->n_cb_backoffs++;
	}
	clock_gettime(CLOCK_MONOTONIC, &d->d_until);
	d->d_until.tv_sec += NLM_CB_BACKOFF_S;
	pthread_mutex_unlock(&n->n_mu);
	fprintf(n->n_log, "rpcrdma-nfsd: nlm: callback to %s timed out: its callbacks "
		"are not tried for %d s\n",
		nlm_addr_str((const struct sockaddr *)a, s, sizeof(s)), NLM_CB_BACKOFF_S);
}

static int cb_call(struct rpcrdma_nlm *n, const struct sockaddr_storage *addr,
		   socklen_t alen, const struct sockaddr_storage *local, uint32_t prog,
		   uint32_t vers, uint32_t proc, xdrproc_t xa, void *args, xdrproc_t xr,
		   void *res)
{
	uint16_t port = 0; /* set by cb_getport() on success; 0 quiets -Wmaybe-uninitialized at -O0 */
	int fd, err;

	if (cb_host_dead(n, addr))
		return -EHOSTDOWN;
	err = cb_getport(addr, alen, prog, vers, &port);
	if (!err) {
		fd = cb_connect(addr, alen, local, port);
		err = fd < 0 ? fd : cb_call_fd(fd, addr, alen, prog, vers, proc, xa, args,
					       xr, res);
	}
	if (err == -ETIMEDOUT)
		cb_host_timed_out(n, addr);
	return err;
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
	err = cb_call(n, &g->g_addr, g->g_addrlen, &g->g_local, RPCRDMA_NLM_PROGRAM,
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

	if (m->m_proc == NLMPROC4_TEST_RES)
		xa = (xdrproc_t)nlm_xdr_testres;
	return cb_call(n, &m->m_addr, m->m_addrlen, &m->m_local, RPCRDMA_NLM_PROGRAM,
		       RPCRDMA_NLM_VERSION, m->m_proc, xa, (void *)&m->m_res,
		       (xdrproc_t)nlm_xdr_void, NULL);
}

int nlm_cb_notify(struct rpcrdma_nlm *n, const struct nsm_record *r)
{
	struct nsm_args a;

	snprintf(a.na_name, sizeof(a.na_name), "%s", n->n_name);
	a.na_state = (int32_t)n->n_state;
	return cb_call(n, &r->nr_addr, r->nr_addrlen, &r->nr_local, RPCRDMA_NSM_PROGRAM,
		       RPCRDMA_NSM_VERSION, SM_NOTIFY, (xdrproc_t)nsm_xdr_stat_chge, &a,
		       (xdrproc_t)nlm_xdr_void, NULL);
}

/* ---- the callback queue and its workers ---- */

/* how many _RES jobs of @m's host are queued; under n_mu */
static unsigned cb_count(const struct rpcrdma_nlm *n, const struct nlm_msgres *m)
{
	unsigned c = 0;

	for (const struct nlm_msgres *q = n->n_msgq; q; q = q->m_next)
		c += nlm_host_equal((const struct sockaddr *)&q->m_addr,
				    (const struct sockaddr *)&m->m_addr);
	return c;
}

/* take *@pp off the queue whose tail pointer is @tail */
static struct nlm_msgres *cb_unlink(struct nlm_msgres ***tail, struct nlm_msgres **pp)
{
	struct nlm_msgres *m = *pp;

	*pp = m->m_next;
	if (*tail == &m->m_next)
		*tail = pp;
	m->m_next = NULL;
	return m;
}

int nlm_cb_enqueue(struct rpcrdma_nlm *n, struct nlm_msgres *m)
{
	pthread_mutex_lock(&n->n_mu);
	m->m_next = NULL;
	if (m->m_grant) {
		*n->n_grantq_tail = m;
		n->n_grantq_tail = &m->m_next;
	} else {
		unsigned same = cb_count(n, m);

		if (n->n_stop || same >= NLM_MSGQ_HOST_MAX || cb_dead_find(n, &m->m_addr))
			goto refuse;
		if (n->n_nmsgq >= NLM_MSGQ_MAX) {
			/* the oldest _RES of the host with the most queued */
			struct nlm_msgres **pp, **big = NULL;
			unsigned most = 0;

			for (pp = &n->n_msgq; *pp; pp = &(*pp)->m_next) {
				unsigned c = cb_count(n, *pp);

				if (c > most) {
					most = c;
					big = pp;
				}
			}
			if (most <= same)
				goto refuse;
			free(cb_unlink(&n->n_msgq_tail, big));
			n->n_nmsgq--;
			n->n_res_dropped++;
		}
		*n->n_msgq_tail = m;
		n->n_msgq_tail = &m->m_next;
		n->n_nmsgq++;
	}
	pthread_cond_signal(&n->n_cb_cv);
	pthread_mutex_unlock(&n->n_mu);
	return 0;

refuse:
	n->n_res_dropped++; /* the client asks again after its timeout */
	pthread_mutex_unlock(&n->n_mu);
	return -ENOSPC;
}

/* the first job on @pp's queue whose host no worker is calling; under n_mu */
static struct nlm_msgres **cb_pick(struct rpcrdma_nlm *n, struct nlm_msgres **pp)
{
	for (; *pp; pp = &(*pp)->m_next) {
		unsigned i;

		for (i = 0; i < NLM_CB_WORKERS; i++)
			if (n->n_cb_busy[i].ss_family &&
			    nlm_host_equal((struct sockaddr *)&n->n_cb_busy[i],
					   (struct sockaddr *)&(*pp)->m_addr))
				break;
		if (i == NLM_CB_WORKERS)
			return pp;
	}
	return NULL;
}

/* a GRANTED callback's outcome: a lock the client did not take is released */
static void cb_grant_done(struct rpcrdma_nlm *n, struct nlm_grant *g, int err)
{
	char addr[INET6_ADDRSTRLEN];

	nlm_addr_str((struct sockaddr *)&g->g_addr, addr, sizeof(addr));
	if (err) {
		/* the client will ask again (a Linux client re-sends a
		 * blocked LOCK every 30 s); the lock is not kept */
		nlm_table_grant_refused(&n->n_table, g);
		fprintf(n->n_log, "rpcrdma-nfsd: nlm: GRANTED to %s failed: %s\n", addr,
			strerror(-err));
		nlm_kick(n);
	} else {
		pthread_mutex_lock(&n->n_table.t_lock);
		n->n_table.t_stats.ns_callbacks++;
		pthread_mutex_unlock(&n->n_table.t_lock);
		if (n->n_cfg.lc_verbose)
			fprintf(n->n_log, "rpcrdma-nfsd: nlm: GRANTED svid %u to %s\n",
				g->g_w.w_owner.o_svid, addr);
	}
}

void *nlm_cb_worker(void *arg)
{
	struct rpcrdma_nlm *n = arg;

	pthread_mutex_lock(&n->n_mu);
	while (!n->n_stop) {
		struct nlm_msgres **pp, *m;
		unsigned slot = 0;
		int err;

		if ((pp = cb_pick(n, &n->n_grantq))) {
			m = cb_unlink(&n->n_grantq_tail, pp);
		} else if ((pp = cb_pick(n, &n->n_msgq))) {
			m = cb_unlink(&n->n_msgq_tail, pp);
			n->n_nmsgq--;
		} else {
			pthread_cond_wait(&n->n_cb_cv, &n->n_mu);
			continue;
		}
		while (n->n_cb_busy[slot].ss_family) /* one per worker */
			slot++;
		n->n_cb_busy[slot] = m->m_addr;
		pthread_mutex_unlock(&n->n_mu);
		if (m->m_grant) {
			cb_grant_done(n, m->m_grant, nlm_cb_granted(n, m->m_grant));
			free(m->m_grant);
			err = 0;
		} else {
			err = nlm_cb_res(n, m); /* lost answers are re-asked */
		}
		free(m);
		pthread_mutex_lock(&n->n_mu);
		n->n_cb_busy[slot].ss_family = 0;
		if (err == -EHOSTDOWN)
			n->n_res_dropped++;
		/* the host's next job may go now */
		pthread_cond_broadcast(&n->n_cb_cv);
	}
	pthread_mutex_unlock(&n->n_mu);
	return NULL;
}
