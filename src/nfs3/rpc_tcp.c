// SPDX-License-Identifier: MIT
/*
 * rpc_tcp.c - ONC RPC over TCP for MOUNT, NLM and NSM: one thread, every
 * connection non-blocking, a call dispatched only once its whole record
 * is here (src/common/rpc_tcp.h says what and why).
 *
 * The thread owns the connections; the listeners are shared with the
 * threads that add and remove them, under rt_mu.  Each turn of the loop:
 * listeners being removed are let go, one poll(2) over the wake pipe, the
 * listeners and the connections, then each ready connection is read
 * (at most one record) or written, the listeners accept, and the
 * deadlines are swept.  A connection with a reply not yet taken is not
 * read (its peer's next calls wait in its own socket buffer).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "../common/rpc_tcp.h"

#define RT_ACCEPT_BURST 16        /* accepts per listener per turn */
#define RT_READ_TURNS 64          /* reads per connection per turn */
#define RT_BACKOFF_MS 100         /* no accept after EMFILE with nothing to reclaim */
#define RT_POLL_MAX_MS 1000
#define RT_REPLY_MAX (16u << 20)  /* bytes of one reply */
#define RT_DEFER_RETRY_MS 20      /* a deferred call is dispatched again after */

struct rpc_tcp_listener {
	int l_fd;
	uint32_t l_prog, l_vers;
	rpc_tcp_dispatch_fn l_dispatch;
	rpc_tcp_allow_fn l_allow;
	void *l_allow_arg;
	bool l_closing;  /* rpc_tcp_unserve() waits for l_closed */
	bool l_closed;   /* the thread has let go of it */
	struct rpc_tcp_listener *l_next;
};

struct rt_conn {
	SVCXPRT c_xprt;  /* xp_p1: this */
	struct rpc_tcp_listener *c_lsn;
	int c_fd;
	bool c_dead;
	struct sockaddr_storage c_peer;
	socklen_t c_peerlen;
	uint64_t c_last_ms;  /* accepted, or its last call done */
	uint64_t c_busy_ms;  /* first byte of the call under way; 0: none */
	/* the record being read (RFC 5531 section 11) */
	uint8_t c_mark[4];
	unsigned c_markgot;
	uint32_t c_fraglen, c_fraggot;
	bool c_lastfrag;
	uint8_t *c_rec;
	uint32_t c_reclen;
	/* the call being dispatched */
	XDR c_xdr;
	uint32_t c_xid;
	char c_cred[2 * MAX_AUTH_BYTES];  /* credential, verifier */
	struct authunix_parms c_aup;
	char c_machname[MAX_MACHINE_NAME + 1];
	gid_t c_gids[NGRPS];
	bool c_deferred;        /* rpc_tcp_defer() during this dispatch */
	uint64_t c_defer_since; /* first deferral of the call under way; 0: none */
	uint64_t c_retry_ms;    /* deferred: dispatch c_rec again then; 0: not */
	/* the reply not yet written */
	uint8_t *c_out;
	size_t c_outlen, c_outoff;
};

/* the thread's own state */
struct rt_loop {
	struct rt_conn **lp_c;
	unsigned lp_n, lp_cap;
	unsigned lp_total;  /* tl_total, at most RLIMIT_NOFILE / 4 */
	struct rpc_tcp_limits lp_lim;
	uint64_t lp_backoff_until;
	struct rpc_tcp_listener **lp_l;
	unsigned lp_nl, lp_lcap;
	struct pollfd *lp_pfd;
	unsigned lp_pcap;
};

enum rt_state { RT_NONE, RT_RUNNING, RT_EXITED };

static pthread_mutex_t rt_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t rt_cv = PTHREAD_COND_INITIALIZER;
static struct rpc_tcp_listener *rt_lsns;   /* under rt_mu */
static enum rt_state rt_state;              /* under rt_mu */
static pthread_t rt_thread;
static int rt_wake[2] = { -1, -1 };
static struct rpc_tcp_limits rt_lim;        /* under rt_mu; 0: default */
static struct rpc_tcp_stats rt_stats;       /* atomic adds */
static _Thread_local bool rt_on_thread;     /* set on the serving thread */

#define RT_COUNT(field) __atomic_add_fetch(&rt_stats.field, 1, __ATOMIC_RELAXED)

static uint64_t rt_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static void rt_kick(void)
{
	char b = 0;

	if (rt_wake[1] >= 0 && write(rt_wake[1], &b, 1) < 0) {
		/* full: the thread wakes anyway */
	}
}

static void rt_limits_locked(struct rpc_tcp_limits *out)
{
	*out = rt_lim;
	if (!out->tl_per_host)
		out->tl_per_host = RPC_TCP_PER_HOST_DEFAULT;
	if (!out->tl_total)
		out->tl_total = RPC_TCP_TOTAL_DEFAULT;
	if (!out->tl_record_ms)
		out->tl_record_ms = RPC_TCP_RECORD_MS_DEFAULT;
	if (!out->tl_idle_ms)
		out->tl_idle_ms = RPC_TCP_IDLE_MS_DEFAULT;
	if (!out->tl_maxrec)
		out->tl_maxrec = RPC_TCP_MAXREC_DEFAULT;
}

/* ---- the SVCXPRT handed to dispatch functions ---- */

static bool_t rt_recv(SVCXPRT *xprt, struct rpc_msg *msg)
{
	(void)xprt;
	(void)msg;
	return FALSE; /* records come from rt_read(), never from libtirpc */
}

static enum xprt_stat rt_stat(SVCXPRT *xprt)
{
	(void)xprt;
	return XPRT_IDLE;
}

static bool_t rt_getargs(SVCXPRT *xprt, xdrproc_t xargs, void *argsp)
{
	struct rt_conn *c = xprt->xp_p1;

	return xargs(&c->c_xdr, argsp);
}

static bool_t rt_freeargs(SVCXPRT *xprt, xdrproc_t xargs, void *argsp)
{
	XDR x;

	(void)xprt;
	memset(&x, 0, sizeof(x));
	x.x_op = XDR_FREE;
	return xargs(&x, argsp);
}

/* encode @msg (its xid: the call's) after the replies already queued */
static bool_t rt_reply(SVCXPRT *xprt, struct rpc_msg *msg)
{
	struct rt_conn *c = xprt->xp_p1;
	unsigned long n;
	uint32_t len, mark;
	uint8_t *buf;
	XDR x;

	msg->rm_xid = c->c_xid;
	n = xdr_sizeof((xdrproc_t)xdr_replymsg, msg);
	if (!n || n > RT_REPLY_MAX)
		return FALSE;
	buf = realloc(c->c_out, c->c_outlen + 4 + n);
	if (!buf)
		return FALSE;
	c->c_out = buf;
	xdrmem_create(&x, (char *)buf + c->c_outlen + 4, (u_int)n, XDR_ENCODE);
	if (!xdr_replymsg(&x, msg)) {
		xdr_destroy(&x);
		return FALSE;
	}
	len = xdr_getpos(&x);
	xdr_destroy(&x);
	mark = htonl(0x80000000u | len);
	memcpy(buf + c->c_outlen, &mark, 4);
	c->c_outlen += 4 + len;
	return TRUE;
}

static void rt_destroy(SVCXPRT *xprt)
{
	struct rt_conn *c = xprt->xp_p1;

	c->c_dead = true; /* closed by the loop */
}

static bool_t rt_control(SVCXPRT *xprt, const u_int rq, void *in)
{
	(void)xprt;
	(void)rq;
	(void)in;
	return FALSE;
}

static const struct xp_ops rt_ops = {
	.xp_recv = rt_recv,
	.xp_stat = rt_stat,
	.xp_getargs = rt_getargs,
	.xp_reply = rt_reply,
	.xp_freeargs = rt_freeargs,
	.xp_destroy = rt_destroy,
};

static const struct xp_ops2 rt_ops2 = { .xp_control = rt_control };

/* ---- connections ---- */

void rpc_tcp_host_key(const struct sockaddr_storage *ss, uint8_t key[16])
{
	memset(key, 0, 16);
	if (ss->ss_family == AF_INET) {
		key[10] = key[11] = 0xff;
		memcpy(key + 12, &((const struct sockaddr_in *)ss)->sin_addr, 4);
	} else if (ss->ss_family == AF_INET6) {
		const struct in6_addr *a = &((const struct sockaddr_in6 *)ss)->sin6_addr;

		/* a /64, but the whole address when IPv4-mapped or link-local
		 * (fe80::/64 is every machine on the link) */
		memcpy(key, a, IN6_IS_ADDR_V4MAPPED(a) || IN6_IS_ADDR_LINKLOCAL(a) ? 16 : 8);
	}
}

static void rt_conn_free(struct rt_conn *c)
{
	if (c->c_fd >= 0)
		close(c->c_fd);
	free(c->c_rec);
	free(c->c_out);
	free(c);
}

/* close connection @i (the last one takes its place) */
static void rt_conn_close(struct rt_loop *lp, unsigned i)
{
	rt_conn_free(lp->lp_c[i]);
	lp->lp_c[i] = lp->lp_c[--lp->lp_n];
	__atomic_store_n(&rt_stats.ts_open, lp->lp_n, __ATOMIC_RELAXED);
}

/* write what the socket takes; all of it ends the call under way */
static void rt_flush(struct rt_conn *c, uint64_t now)
{
	while (c->c_outoff < c->c_outlen) {
		ssize_t n = send(c->c_fd, c->c_out + c->c_outoff, c->c_outlen - c->c_outoff,
				 MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (n <= 0) {
			c->c_dead = true;
			return;
		}
		c->c_outoff += (size_t)n;
	}
	free(c->c_out);
	c->c_out = NULL;
	c->c_outlen = c->c_outoff = 0;
	c->c_busy_ms = 0;
	c->c_last_ms = now;
}

/* AUTH_SYS credential body (RFC 5531 appendix A) into rq_clntcred */
static bool rt_authsys(struct rt_conn *c, struct svc_req *rq)
{
	struct authunix_parms *a = &c->c_aup;
	bool ok;
	XDR x;

	memset(a, 0, sizeof(*a));
	a->aup_machname = c->c_machname;
	a->aup_gids = c->c_gids;
	xdrmem_create(&x, rq->rq_cred.oa_base, rq->rq_cred.oa_length, XDR_DECODE);
	ok = xdr_authunix_parms(&x, a);
	xdr_destroy(&x);
	if (ok)
		rq->rq_clntcred = a;
	return ok;
}

/* the record in c_rec is complete: decode its call header, dispatch */
static void rt_call(struct rt_conn *c, uint64_t now)
{
	struct rpc_tcp_listener *l = c->c_lsn;
	SVCXPRT *xprt = &c->c_xprt;
	struct rpc_msg msg;
	struct svc_req rq;

	memset(&msg, 0, sizeof(msg));
	msg.rm_call.cb_cred.oa_base = c->c_cred;
	msg.rm_call.cb_verf.oa_base = c->c_cred + MAX_AUTH_BYTES;
	xdrmem_create(&c->c_xdr, (char *)c->c_rec, c->c_reclen, XDR_DECODE);
	if (!xdr_callmsg(&c->c_xdr, &msg)) {
		/* a reply, an RPC version other than 2, a cut header: as
		 * libtirpc, the connection is dropped */
		RT_COUNT(ts_bad_records);
		c->c_dead = true;
		goto out;
	}
	RT_COUNT(ts_calls);
	c->c_xid = msg.rm_xid;
	memset(&rq, 0, sizeof(rq));
	rq.rq_prog = (uint32_t)msg.rm_call.cb_prog;
	rq.rq_vers = (uint32_t)msg.rm_call.cb_vers;
	rq.rq_proc = (uint32_t)msg.rm_call.cb_proc;
	rq.rq_cred = msg.rm_call.cb_cred;
	rq.rq_xprt = xprt;
	xprt->xp_verf = _null_auth;
	if (rq.rq_cred.oa_flavor == AUTH_SYS) {
		if (!rt_authsys(c, &rq)) {
			svcerr_auth(xprt, AUTH_BADCRED);
			goto out;
		}
	} else if (rq.rq_cred.oa_flavor != AUTH_NONE) {
		svcerr_auth(xprt, AUTH_REJECTEDCRED);
		goto out;
	}
	if (rq.rq_prog != l->l_prog)
		svcerr_noprog(xprt);
	else if (rq.rq_vers != l->l_vers)
		svcerr_progvers(xprt, l->l_vers, l->l_vers);
	else
		l->l_dispatch(&rq, xprt);
	if (c->c_deferred) { /* the same record again in a moment */
		c->c_deferred = false;
		c->c_retry_ms = now + RT_DEFER_RETRY_MS;
		xdr_destroy(&c->c_xdr);
		return;
	}
out:
	c->c_defer_since = 0;
	xdr_destroy(&c->c_xdr);
	free(c->c_rec);
	c->c_rec = NULL;
	c->c_reclen = 0;
	if (!c->c_dead)
		rt_flush(c, now);
}

/*
 * Read what has come of the record under way, up to its end (never into
 * the next record); a complete one is dispatched.  Every byte read after
 * an idle spell starts the call's clock (c_busy_ms).
 */
static void rt_read(struct rt_conn *c, const struct rpc_tcp_limits *lim, uint64_t now)
{
	for (int turn = 0; turn < RT_READ_TURNS; turn++) {
		size_t want;
		uint8_t *dst;
		ssize_t n;

		if (c->c_markgot < 4) {
			dst = c->c_mark + c->c_markgot;
			want = 4 - c->c_markgot;
		} else {
			dst = c->c_rec + c->c_reclen;
			want = c->c_fraglen - c->c_fraggot;
		}
		n = read(c->c_fd, dst, want); /* want > 0: see the end of a fragment */
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (n <= 0) {
			c->c_dead = true; /* end of stream or error */
			return;
		}
		if (!c->c_busy_ms)
			c->c_busy_ms = now;
		if (c->c_markgot < 4) {
			uint32_t mark;
			uint8_t *rec;

			c->c_markgot += (unsigned)n;
			if (c->c_markgot < 4)
				continue;
			memcpy(&mark, c->c_mark, 4);
			mark = ntohl(mark);
			c->c_lastfrag = mark >> 31;
			c->c_fraglen = mark & 0x7fffffffu;
			c->c_fraggot = 0;
			if (c->c_fraglen > lim->tl_maxrec - c->c_reclen) {
				RT_COUNT(ts_bad_records);
				c->c_dead = true;
				return;
			}
			rec = realloc(c->c_rec, (size_t)c->c_reclen + c->c_fraglen + 1);
			if (!rec) {
				c->c_dead = true;
				return;
			}
			c->c_rec = rec;
		} else {
			c->c_fraggot += (uint32_t)n;
			c->c_reclen += (uint32_t)n;
		}
		if (c->c_fraggot == c->c_fraglen) {
			c->c_markgot = 0;
			if (c->c_lastfrag) {
				rt_call(c, now);
				return;
			}
		}
	}
}

static void rt_conn_io(struct rt_conn *c, short revents,
		       const struct rpc_tcp_limits *lim, uint64_t now)
{
	if (revents & (POLLERR | POLLNVAL)) {
		c->c_dead = true;
		return;
	}
	if (c->c_retry_ms) {
		/* a deferred call holds c_rec: nothing is read meanwhile; a
		 * peer gone both ways cannot take its reply */
		if (revents & POLLHUP)
			c->c_dead = true;
		return;
	}
	if (c->c_outoff < c->c_outlen) {
		if (revents & (POLLOUT | POLLHUP))
			rt_flush(c, now);
		return;
	}
	if (revents & (POLLIN | POLLHUP))
		rt_read(c, lim, now);
}

/*
 * Close one connection to make room: the one idle longest, or with none
 * idle the one whose call has waited longest.  Return: false when there
 * is none.
 */
static bool rt_reclaim(struct rt_loop *lp)
{
	int idle = -1, busy = -1;

	for (unsigned i = 0; i < lp->lp_n; i++) {
		const struct rt_conn *c = lp->lp_c[i];

		if (!c->c_busy_ms) {
			if (idle < 0 || c->c_last_ms < lp->lp_c[idle]->c_last_ms)
				idle = (int)i;
		} else if (busy < 0 || c->c_busy_ms < lp->lp_c[busy]->c_busy_ms) {
			busy = (int)i;
		}
	}
	if (idle < 0)
		idle = busy;
	if (idle < 0)
		return false;
	RT_COUNT(ts_reclaimed);
	rt_conn_close(lp, (unsigned)idle);
	return true;
}

static unsigned rt_host_count(const struct rt_loop *lp, const struct sockaddr_storage *ss)
{
	uint8_t key[16], k[16];
	unsigned n = 0;

	rpc_tcp_host_key(ss, key);
	for (unsigned i = 0; i < lp->lp_n; i++) {
		rpc_tcp_host_key(&lp->lp_c[i]->c_peer, k);
		n += !memcmp(k, key, 16);
	}
	return n;
}

static struct rt_conn *rt_conn_new(struct rpc_tcp_listener *l, int fd,
				   const struct sockaddr_storage *ss, socklen_t len,
				   uint64_t now)
{
	struct rt_conn *c = calloc(1, sizeof(*c));
	int one = 1;

	if (!c)
		return NULL;
	c->c_lsn = l;
	c->c_fd = fd;
	c->c_peer = *ss;
	c->c_peerlen = len;
	c->c_last_ms = now;
	c->c_xprt.xp_fd = fd;
	c->c_xprt.xp_ops = &rt_ops;
	c->c_xprt.xp_ops2 = &rt_ops2;
	c->c_xprt.xp_p1 = c;
	c->c_xprt.xp_verf = _null_auth;
	c->c_xprt.xp_rtaddr.buf = &c->c_peer;
	c->c_xprt.xp_rtaddr.len = len;
	c->c_xprt.xp_rtaddr.maxlen = sizeof(c->c_peer);
	c->c_xprt.xp_addrlen = (int)(len < sizeof(c->c_xprt.xp_raddr) ? len :
				     sizeof(c->c_xprt.xp_raddr));
	memcpy(&c->c_xprt.xp_raddr, ss, (size_t)c->c_xprt.xp_addrlen);
	c->c_xprt.xp_port = ntohs(ss->ss_family == AF_INET ?
				  ((const struct sockaddr_in *)ss)->sin_port :
				  ((const struct sockaddr_in6 *)ss)->sin6_port);
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return c;
}

static void rt_accept(struct rt_loop *lp, struct rpc_tcp_listener *l, uint64_t now)
{
	for (int i = 0; i < RT_ACCEPT_BURST; i++) {
		struct sockaddr_storage ss;
		socklen_t len = sizeof(ss);
		struct rt_conn *c;
		int fd;

		memset(&ss, 0, sizeof(ss));
		fd = accept4(l->l_fd, (struct sockaddr *)&ss, &len,
			     SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
			    errno == ENOMEM) {
				if (rt_reclaim(lp))
					continue;
				lp->lp_backoff_until = now + RT_BACKOFF_MS;
			}
			return;
		}
		/* before any byte is read: is the peer listed at all? */
		if (l->l_allow && !l->l_allow((const struct sockaddr *)&ss, l->l_allow_arg)) {
			RT_COUNT(ts_refused_addr);
			close(fd);
			continue;
		}
		if (rt_host_count(lp, &ss) >= lp->lp_lim.tl_per_host) {
			RT_COUNT(ts_refused_host);
			close(fd);
			continue;
		}
		if (lp->lp_n >= lp->lp_total)
			rt_reclaim(lp);
		if (lp->lp_n == lp->lp_cap) {
			unsigned cap = lp->lp_cap ? lp->lp_cap * 2 : 64;
			struct rt_conn **p = realloc(lp->lp_c, sizeof(*p) * cap);

			if (!p) {
				close(fd);
				continue;
			}
			lp->lp_c = p;
			lp->lp_cap = cap;
		}
		c = rt_conn_new(l, fd, &ss, len, now);
		if (!c) {
			close(fd);
			continue;
		}
		lp->lp_c[lp->lp_n++] = c;
		RT_COUNT(ts_accepted);
		__atomic_store_n(&rt_stats.ts_open, lp->lp_n, __ATOMIC_RELAXED);
	}
}

/* close the connections past their deadline; Return: ms to the next one */
static uint64_t rt_sweep(struct rt_loop *lp, uint64_t now)
{
	const struct rpc_tcp_limits *lim = &lp->lp_lim;
	uint64_t next = RT_POLL_MAX_MS;

	for (unsigned i = 0; i < lp->lp_n;) {
		const struct rt_conn *c = lp->lp_c[i];
		uint64_t due = c->c_busy_ms ? c->c_busy_ms + lim->tl_record_ms :
					      c->c_last_ms + lim->tl_idle_ms;

		if (now >= due) {
			if (c->c_busy_ms)
				RT_COUNT(ts_record_timeouts);
			else
				RT_COUNT(ts_idle_closed);
			rt_conn_close(lp, i);
			continue;
		}
		if (due - now < next)
			next = due - now;
		if (c->c_retry_ms) {
			uint64_t r = c->c_retry_ms > now ? c->c_retry_ms - now : 0;

			if (r < next)
				next = r;
		}
		i++;
	}
	if (lp->lp_backoff_until > now && lp->lp_backoff_until - now < next)
		next = lp->lp_backoff_until - now;
	return next;
}

/* under rt_mu: let go of the listeners being removed; snapshot the rest */
static bool rt_listeners_locked(struct rt_loop *lp)
{
	struct rpc_tcp_listener **pp = &rt_lsns;
	bool released = false;

	lp->lp_nl = 0;
	while (*pp) {
		struct rpc_tcp_listener *l = *pp;

		if (l->l_closing) {
			for (unsigned i = 0; i < lp->lp_n;) {
				if (lp->lp_c[i]->c_lsn == l)
					rt_conn_close(lp, i);
				else
					i++;
			}
			close(l->l_fd);
			l->l_closed = true;
			*pp = l->l_next;
			released = true;
			continue;
		}
		if (lp->lp_nl == lp->lp_lcap) {
			unsigned cap = lp->lp_lcap ? lp->lp_lcap * 2 : 4;
			struct rpc_tcp_listener **p = realloc(lp->lp_l, sizeof(*p) * cap);

			if (!p)
				break; /* served from the next turn */
			lp->lp_l = p;
			lp->lp_lcap = cap;
		}
		lp->lp_l[lp->lp_nl++] = l;
		pp = &l->l_next;
	}
	if (released)
		pthread_cond_broadcast(&rt_cv);
	return rt_lsns != NULL;
}

static void *rt_main(void *arg)
{
	struct rt_loop lp = { 0 };
	uint64_t wait = 0;
	struct rlimit rl;

	(void)arg;
	rt_on_thread = true;
	for (;;) {
		unsigned np, base;
		uint64_t now;
		char drain[64];

		pthread_mutex_lock(&rt_mu);
		if (!rt_listeners_locked(&lp)) {
			rt_state = RT_EXITED;
			pthread_mutex_unlock(&rt_mu);
			break;
		}
		rt_limits_locked(&lp.lp_lim);
		pthread_mutex_unlock(&rt_mu);
		lp.lp_total = lp.lp_lim.tl_total;
		if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
		    rl.rlim_cur / 4 < lp.lp_total)
			lp.lp_total = rl.rlim_cur / 4 ? (unsigned)(rl.rlim_cur / 4) : 1;

		np = 1 + lp.lp_nl + lp.lp_n;
		if (np > lp.lp_pcap) {
			struct pollfd *p = realloc(lp.lp_pfd, sizeof(*p) * np);

			if (!p) {
				usleep(100000);
				continue;
			}
			lp.lp_pfd = p;
			lp.lp_pcap = np;
		}
		now = rt_now_ms();
		lp.lp_pfd[0] = (struct pollfd){ .fd = rt_wake[0], .events = POLLIN };
		for (unsigned i = 0; i < lp.lp_nl; i++)
			lp.lp_pfd[1 + i] = (struct pollfd){
				.fd = lp.lp_l[i]->l_fd,
				.events = lp.lp_backoff_until > now ? 0 : POLLIN };
		base = 1 + lp.lp_nl;
		for (unsigned i = 0; i < lp.lp_n; i++) {
			const struct rt_conn *c = lp.lp_c[i];

			lp.lp_pfd[base + i] = (struct pollfd){
				.fd = c->c_fd,
				.events = c->c_retry_ms ? 0 :
					  c->c_outoff < c->c_outlen ? POLLOUT : POLLIN };
		}
		if (poll(lp.lp_pfd, np, (int)wait) < 0 && errno != EINTR) {
			usleep(10000);
			continue;
		}
		if (lp.lp_pfd[0].revents & POLLIN)
			while (read(rt_wake[0], drain, sizeof(drain)) > 0)
				;
		now = rt_now_ms();
		for (unsigned i = 0; i < lp.lp_n; i++)
			if (lp.lp_pfd[base + i].revents)
				rt_conn_io(lp.lp_c[i], lp.lp_pfd[base + i].revents,
					   &lp.lp_lim, now);
		for (unsigned i = 0; i < lp.lp_n; i++) {
			struct rt_conn *c = lp.lp_c[i];

			if (c->c_retry_ms && now >= c->c_retry_ms && !c->c_dead) {
				c->c_retry_ms = 0;
				rt_call(c, now);
			}
		}
		for (unsigned i = 0; i < lp.lp_n;) {
			if (lp.lp_c[i]->c_dead)
				rt_conn_close(&lp, i);
			else
				i++;
		}
		for (unsigned i = 0; i < lp.lp_nl; i++)
			if (lp.lp_pfd[1 + i].revents & POLLIN)
				rt_accept(&lp, lp.lp_l[i], now);
		wait = rt_sweep(&lp, rt_now_ms());
	}
	while (lp.lp_n)
		rt_conn_close(&lp, 0);
	free(lp.lp_c);
	free(lp.lp_l);
	free(lp.lp_pfd);
	return NULL;
}

/* under rt_mu: reap a thread that has ended */
static void rt_join_locked(void)
{
	if (rt_state != RT_EXITED)
		return;
	pthread_join(rt_thread, NULL);
	close(rt_wake[0]);
	close(rt_wake[1]);
	rt_wake[0] = rt_wake[1] = -1;
	rt_state = RT_NONE;
}

/* ---- the interface ---- */

int rpc_tcp_socket(const char *listen_addr, uint16_t port, int *fdp, uint16_t *bound)
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
	if (bound) {
		len = sizeof(ss);
		if (getsockname(fd, (struct sockaddr *)&ss, &len) < 0) {
			err = -errno;
			close(fd);
			return err;
		}
		*bound = ntohs(ss.ss_family == AF_INET ? s4->sin_port : s6->sin6_port);
	}
	*fdp = fd;
	return 0;
}

int rpc_tcp_serve(int fd, uint32_t prog, uint32_t vers, rpc_tcp_dispatch_fn dispatch,
		  rpc_tcp_allow_fn allow, void *allow_arg, struct rpc_tcp_listener **out)
{
	struct rpc_tcp_listener *l;
	int fl, err = 0;

	if (fd < 0 || !dispatch || !out)
		return -EINVAL;
	fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
		return -errno;
	l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	l->l_fd = fd;
	l->l_prog = prog;
	l->l_vers = vers;
	l->l_dispatch = dispatch;
	l->l_allow = allow;
	l->l_allow_arg = allow_arg;

	pthread_mutex_lock(&rt_mu);
	rt_join_locked();
	if (rt_state == RT_NONE) {
		if (pipe2(rt_wake, O_NONBLOCK | O_CLOEXEC) < 0) {
			err = -errno;
			rt_wake[0] = rt_wake[1] = -1;
			goto out_unlock;
		}
		l->l_next = rt_lsns;
		rt_lsns = l;
		err = -pthread_create(&rt_thread, NULL, rt_main, NULL);
		if (err) {
			rt_lsns = l->l_next;
			close(rt_wake[0]);
			close(rt_wake[1]);
			rt_wake[0] = rt_wake[1] = -1;
			goto out_unlock;
		}
		rt_state = RT_RUNNING;
	} else {
		l->l_next = rt_lsns;
		rt_lsns = l;
		rt_kick();
	}
out_unlock:
	pthread_mutex_unlock(&rt_mu);
	if (err) {
		free(l);
		return err;
	}
	*out = l;
	return 0;
}

void rpc_tcp_unserve(struct rpc_tcp_listener *l)
{
	if (!l)
		return;
	pthread_mutex_lock(&rt_mu);
	l->l_closing = true;
	rt_kick();
	while (!l->l_closed)
		pthread_cond_wait(&rt_cv, &rt_mu);
	rt_join_locked();
	pthread_mutex_unlock(&rt_mu);
	free(l);
}

bool rpc_tcp_on_thread(void)
{
	return rt_on_thread;
}

bool rpc_tcp_defer(SVCXPRT *xprt)
{
	struct rt_conn *c;
	uint64_t now = rt_now_ms();

	if (!xprt || xprt->xp_ops != &rt_ops)
		return false;
	c = xprt->xp_p1;
	if (!c->c_defer_since)
		c->c_defer_since = now;
	if (now - c->c_defer_since >= RPC_TCP_DEFER_MAX_MS)
		return false;
	c->c_deferred = true;
	return true;
}

int rpc_tcp_listener_fd(const struct rpc_tcp_listener *l)
{
	return l->l_fd;
}

void rpc_tcp_set_limits(const struct rpc_tcp_limits *lim)
{
	pthread_mutex_lock(&rt_mu);
	if (lim)
		rt_lim = *lim;
	else
		memset(&rt_lim, 0, sizeof(rt_lim));
	rt_kick();
	pthread_mutex_unlock(&rt_mu);
}

void rpc_tcp_get_stats(struct rpc_tcp_stats *out)
{
	out->ts_accepted = __atomic_load_n(&rt_stats.ts_accepted, __ATOMIC_RELAXED);
	out->ts_refused_addr = __atomic_load_n(&rt_stats.ts_refused_addr, __ATOMIC_RELAXED);
	out->ts_refused_host = __atomic_load_n(&rt_stats.ts_refused_host, __ATOMIC_RELAXED);
	out->ts_reclaimed = __atomic_load_n(&rt_stats.ts_reclaimed, __ATOMIC_RELAXED);
	out->ts_record_timeouts = __atomic_load_n(&rt_stats.ts_record_timeouts,
						  __ATOMIC_RELAXED);
	out->ts_idle_closed = __atomic_load_n(&rt_stats.ts_idle_closed, __ATOMIC_RELAXED);
	out->ts_bad_records = __atomic_load_n(&rt_stats.ts_bad_records, __ATOMIC_RELAXED);
	out->ts_calls = __atomic_load_n(&rt_stats.ts_calls, __ATOMIC_RELAXED);
	out->ts_open = __atomic_load_n(&rt_stats.ts_open, __ATOMIC_RELAXED);
}
