// SPDX-License-Identifier: MIT
/*
 * nlm_svc.c - the NLM v4 and NSM services over TCP with libtirpc, and the
 * lock manager's own thread.
 *
 * The listeners created here are served by the TCP side's one thread
 * (src/nfs3/rpc_tcp.c, with MOUNT): a call is dispatched once its whole
 * record has come, peers lc_allow refuses are closed at accept.  Calls never
 * block: a LOCK that has to wait is answered NLM4_BLOCKED and queued, and
 * the thread here retries the queue when a lock is released (and every
 * NLM_RETRY_MS, for locks held by local processes, which tell nobody) and
 * queues the GRANTED callbacks; the callback workers (nlm_cb.c) send them
 * and the _RES answers, a host at a time each; a thread of its own
 * notifies the hosts recorded before a restart.  No callback waits for
 * another host's.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nlm_internal.h"
#include "../common/rpc_tcp.h"
#include "../common/rpcb_tcp.h"

#define NLM_RETRY_MS 200
#define NLM_NOTIFY_RETRY_S 5

static struct rpcrdma_nlm *nlm_current;
static atomic_flag nlm_busy = ATOMIC_FLAG_INIT;

static void ts_now(struct timespec *ts)
{
	clock_gettime(CLOCK_MONOTONIC, ts);
}

bool nlm_in_grace(const struct rpcrdma_nlm *n)
{
	struct timespec now;
	bool in;

	ts_now(&now);
	in = now.tv_sec < n->n_grace_end.tv_sec ||
	     (now.tv_sec == n->n_grace_end.tv_sec &&
	      now.tv_nsec < n->n_grace_end.tv_nsec);
	/* the first to see it over says so, before answering anything */
	if (!in && !atomic_exchange(&((struct rpcrdma_nlm *)n)->n_grace_logged, true)) {
		fprintf(n->n_log, "rpcrdma-nfsd: nlm: grace period over\n");
		fflush(n->n_log);
	}
	return in;
}

/* nlm_grace_for - this server's grace period, or another gateway's of the
 * file's cluster (lc_cluster_grace; cannot tell: as in grace) */
static bool nlm_grace_for(struct rpcrdma_nlm *n, const struct nlm_args *a)
{
	if (nlm_in_grace(n))
		return true;
	return n->n_cfg.lc_cluster_grace &&
	       n->n_cfg.lc_cluster_grace(n->n_cfg.lc_open_arg, a->a_fh, a->a_fhlen) != 0;
}

void nlm_kick(struct rpcrdma_nlm *n)
{
	pthread_mutex_lock(&n->n_mu);
	n->n_kick = true;
	pthread_cond_broadcast(&n->n_cv);
	pthread_mutex_unlock(&n->n_mu);
}

/* the table's host events: keep DIR/sm in step (called under t_lock) */
static void nlm_host_event(void *arg, struct nlm_host *h, bool first)
{
	struct rpcrdma_nlm *n = arg;
	char a[INET6_ADDRSTRLEN];
	int err;

	if (first) {
		err = nsm_record_put(n->n_state_dir, (struct sockaddr *)&h->h_addr,
				     (struct sockaddr *)&h->h_local, h->h_name);
		h->h_recorded = err == 0;
		if (err)
			fprintf(n->n_log, "rpcrdma-nfsd: nlm: cannot record host %s in %s: %s\n",
				nlm_addr_str((struct sockaddr *)&h->h_addr, a, sizeof(a)),
				n->n_state_dir, strerror(-err));
	} else {
		/* DIR/sm has one record per address: it stays while another
		 * host at the address (another caller_name) is recorded */
		struct nlm_host *o;

		for (o = n->n_table.t_hosts; o; o = o->h_next)
			if (o != h && o->h_recorded &&
			    nlm_addr_equal((struct sockaddr *)&o->h_addr,
					   (struct sockaddr *)&h->h_addr))
				break;
		if (o)
			nsm_record_put(n->n_state_dir, (struct sockaddr *)&o->h_addr,
				       (struct sockaddr *)&o->h_local, o->h_name);
		else
			nsm_record_drop(n->n_state_dir, (struct sockaddr *)&h->h_addr);
		h->h_recorded = false;
	}
}

/* ---- NLM dispatch ---- */

/*
 * The caller of @rq: its address and credential.  Return: false for a
 * flavor the lock manager does not serve (neither AUTH_NONE nor AUTH_SYS).
 */
static bool caller_of(struct svc_req *rq, SVCXPRT *xprt, struct rpcrdma_nlm_caller *who)
{
	struct netbuf *nb = svc_getrpccaller(xprt);
	const struct authunix_parms *au;

	memset(who, 0, sizeof(*who));
	who->nc_peer = nb && nb->len ? (const struct sockaddr *)nb->buf : NULL;
	who->nc_flavor = (uint32_t)rq->rq_cred.oa_flavor;
	switch (rq->rq_cred.oa_flavor) {
	case AUTH_NONE:
		return true;
	case AUTH_UNIX: /* AUTH_SYS: decoded by libtirpc (_svcauth_unix) */
		au = (const struct authunix_parms *)rq->rq_clntcred;
		if (!au || au->aup_len > RPCRDMA_NLM_MAX_GIDS)
			return false;
		who->nc_uid = (uint32_t)au->aup_uid;
		who->nc_gid = (uint32_t)au->aup_gid;
		who->nc_ngids = au->aup_len;
		for (u_int i = 0; i < au->aup_len; i++)
			who->nc_gids[i] = (uint32_t)au->aup_gids[i];
		return true;
	default:
		return false;
	}
}

static void lockargs_of(struct nlm_lockargs *la, const struct nlm_args *a,
			SVCXPRT *xprt, struct sockaddr_storage *local,
			const struct rpcrdma_nlm_caller *who)
{
	struct netbuf *nb = svc_getrpccaller(xprt);
	socklen_t ll = sizeof(*local);

	memset(la, 0, sizeof(*la));
	la->la_caller = a->a_caller;
	la->la_fh = a->a_fh;
	la->la_fhlen = a->a_fhlen;
	la->la_oh = a->a_oh;
	la->la_ohlen = a->a_ohlen;
	la->la_svid = a->a_svid;
	la->la_offset = a->a_offset;
	la->la_len = a->a_len;
	la->la_excl = a->a_excl;
	la->la_peer = (const struct sockaddr *)nb->buf;
	la->la_peerlen = nb->len;
	la->la_who = who;
	if (getsockname(xprt->xp_fd, (struct sockaddr *)local, &ll) == 0) {
		la->la_local = (const struct sockaddr *)local;
		la->la_locallen = ll;
	}
}

/* queue the _RES answer of a _MSG call for the thread to send */
static void queue_res(struct rpcrdma_nlm *n, uint32_t proc, const struct nlm_res *r,
		      const struct nlm_lockargs *la)
{
	struct nlm_msgres *m = calloc(1, sizeof(*m));

	if (!m)
		return; /* the caller resends after its timeout */
	m->m_proc = proc;
	m->m_res = *r;
	m->m_addrlen = nlm_addr_copy(&m->m_addr, la->la_peer);
	if (la->la_local)
		nlm_addr_copy(&m->m_local, la->la_local);
	if (nlm_cb_enqueue(n, m))
		free(m); /* over its host's share, or the host is put aside */
}

static void count_stat(struct rpcrdma_nlm *n, uint32_t stat)
{
	pthread_mutex_lock(&n->n_table.t_lock);
	if (stat == NLM4_DENIED_GRACE_PERIOD)
		n->n_table.t_stats.ns_grace_refused++;
	pthread_mutex_unlock(&n->n_table.t_lock);
}

/* may @xprt's peer call us?  Refused calls get AUTH_TOOWEAK (counted) */
static bool peer_allowed(struct rpcrdma_nlm *n, SVCXPRT *xprt)
{
	struct netbuf *nb = svc_getrpccaller(xprt);

	if (!n->n_cfg.lc_allow)
		return true;
	if (nb && nb->len && n->n_cfg.lc_allow((struct sockaddr *)nb->buf,
					       n->n_cfg.lc_allow_arg))
		return true;
	pthread_mutex_lock(&n->n_table.t_lock);
	n->n_table.t_stats.ns_refused++;
	pthread_mutex_unlock(&n->n_table.t_lock);
	svcerr_weakauth(xprt);
	return false;
}

static void nlm_dispatch(struct svc_req *rq, SVCXPRT *xprt)
{
	struct rpcrdma_nlm *n = nlm_current;
	struct nlm_args *a = NULL;
	struct nlm_res *r = NULL;
	struct nlm_lockargs la;
	struct rpcrdma_nlm_caller who;
	struct sockaddr_storage local;
	char addr[INET6_ADDRSTRLEN];
	xdrproc_t xa, xr = (xdrproc_t)nlm_xdr_res;
	uint32_t proc = rq->rq_proc, res_proc = 0;
	bool msg = false;

	if (!n) {
		svcerr_systemerr(xprt);
		return;
	}
	if (proc != NLMPROC4_NULL && !peer_allowed(n, xprt))
		return;
	if (proc != NLMPROC4_NULL && !caller_of(rq, xprt, &who)) {
		svcerr_weakauth(xprt);
		return;
	}
	switch (proc) {
	case NLMPROC4_NULL:
		svc_sendreply(xprt, (xdrproc_t)nlm_xdr_void, NULL);
		return;
	case NLMPROC4_TEST_MSG: case NLMPROC4_LOCK_MSG:
	case NLMPROC4_CANCEL_MSG: case NLMPROC4_UNLOCK_MSG:
		msg = true;
		res_proc = proc - NLMPROC4_TEST_MSG + NLMPROC4_TEST_RES;
		proc -= NLMPROC4_TEST_MSG - NLMPROC4_TEST;
		break;
	case NLMPROC4_GRANTED_MSG:
		msg = true;
		res_proc = NLMPROC4_GRANTED_RES;
		proc = NLMPROC4_GRANTED;
		break;
	default:
		break;
	}
	switch (proc) {
	case NLMPROC4_TEST: case NLMPROC4_GRANTED:
		xa = (xdrproc_t)nlm_xdr_testargs;
		break;
	case NLMPROC4_LOCK: case NLMPROC4_NM_LOCK:
		xa = (xdrproc_t)nlm_xdr_lockargs;
		break;
	case NLMPROC4_CANCEL:
		xa = (xdrproc_t)nlm_xdr_cancargs;
		break;
	case NLMPROC4_UNLOCK:
		xa = (xdrproc_t)nlm_xdr_unlockargs;
		break;
	case NLMPROC4_SHARE: case NLMPROC4_UNSHARE:
		xa = (xdrproc_t)nlm_xdr_shareargs;
		xr = (xdrproc_t)nlm_xdr_shareres;
		break;
	case NLMPROC4_FREE_ALL:
		xa = (xdrproc_t)nlm_xdr_notify;
		break;
	case NLMPROC4_TEST_RES: case NLMPROC4_LOCK_RES: case NLMPROC4_CANCEL_RES:
	case NLMPROC4_UNLOCK_RES: case NLMPROC4_GRANTED_RES:
		/* answers to calls this server does not make (its GRANTED
		 * callbacks are synchronous): accepted and dropped */
		xa = (xdrproc_t)nlm_xdr_res_args;
		break;
	default:
		svcerr_noproc(xprt);
		return;
	}
	a = calloc(1, sizeof(*a));
	r = calloc(1, sizeof(*r));
	if (!a || !r) {
		svcerr_systemerr(xprt);
		goto out;
	}
	if (!svc_getargs(xprt, xa, (caddr_t)a)) {
		svcerr_decode(xprt);
		goto out;
	}
	pthread_mutex_lock(&n->n_table.t_lock);
	n->n_table.t_stats.ns_calls++;
	pthread_mutex_unlock(&n->n_table.t_lock);
	lockargs_of(&la, a, xprt, &local, &who);
	r->r_cookielen = a->a_cookielen;
	memcpy(r->r_cookie, a->a_cookie, a->a_cookielen);
	switch (proc) {
	case NLMPROC4_TEST:
		xr = (xdrproc_t)nlm_xdr_testres;
		r->r_stat = nlm_grace_for(n, a) ? NLM4_DENIED_GRACE_PERIOD
						: nlm_table_test(&n->n_table, &la, &r->r_holder);
		break;
	case NLMPROC4_LOCK: case NLMPROC4_NM_LOCK:
		if (!a->a_reclaim && nlm_grace_for(n, a))
			r->r_stat = NLM4_DENIED_GRACE_PERIOD; /* ours or a peer's */
		else if (!nlm_in_grace(n) && a->a_reclaim)
			r->r_stat = NLM4_DENIED_GRACE_PERIOD; /* too late to reclaim */
		else
			r->r_stat = nlm_table_lock(&n->n_table, &la,
						   a->a_block && proc == NLMPROC4_LOCK,
						   a->a_cookie, a->a_cookielen, NULL);
		if (r->r_stat == NLM4_GRANTED && a->a_reclaim) {
			pthread_mutex_lock(&n->n_table.t_lock);
			n->n_table.t_stats.ns_reclaimed++;
			pthread_mutex_unlock(&n->n_table.t_lock);
		}
		break;
	case NLMPROC4_CANCEL:
		r->r_stat = nlm_in_grace(n) ? NLM4_DENIED_GRACE_PERIOD
					    : nlm_table_cancel(&n->n_table, &la);
		break;
	case NLMPROC4_UNLOCK:
		r->r_stat = nlm_in_grace(n) ? NLM4_DENIED_GRACE_PERIOD
					    : nlm_table_unlock(&n->n_table, &la);
		if (r->r_stat == NLM4_GRANTED)
			nlm_kick(n);
		break;
	case NLMPROC4_GRANTED:
		r->r_stat = NLM4_DENIED; /* we wait for no lock */
		break;
	case NLMPROC4_SHARE: case NLMPROC4_UNSHARE:
		la.la_svid = 0;
		if (!a->a_reclaim && proc == NLMPROC4_SHARE && nlm_grace_for(n, a))
			r->r_stat = NLM4_DENIED_GRACE_PERIOD;
		else
			r->r_stat = nlm_table_share(&n->n_table, &la, a->a_mode,
						    a->a_access, proc == NLMPROC4_UNSHARE);
		break;
	case NLMPROC4_FREE_ALL:
		/* only the host at the sender's address with that name, as
		 * knfsd's lockd finds it (nlmsvc_lookup_host) */
		if (nlm_table_free_host(&n->n_table, a->a_caller, la.la_peer))
			nlm_kick(n);
		else if (n->n_cfg.lc_verbose)
			fprintf(n->n_log, "rpcrdma-nfsd: nlm: FREE_ALL %s from %s: no such host there\n",
				a->a_caller, nlm_addr_str(la.la_peer, addr, sizeof(addr)));
		svc_sendreply(xprt, (xdrproc_t)nlm_xdr_void, NULL);
		goto out;
	default: /* the _RES procedures */
		svc_sendreply(xprt, (xdrproc_t)nlm_xdr_void, NULL);
		goto out;
	}
	count_stat(n, r->r_stat);
	if (n->n_cfg.lc_verbose)
		fprintf(n->n_log, "rpcrdma-nfsd: nlm: proc %u%s svid %u [%llu +%llu] %s%s%s -> %u\n",
			proc, msg ? " (msg)" : "", a->a_svid,
			(unsigned long long)a->a_offset, (unsigned long long)a->a_len,
			a->a_excl ? "write" : "read", a->a_block ? " block" : "",
			a->a_reclaim ? " reclaim" : "", r->r_stat);
	if (msg) {
		queue_res(n, res_proc, r, &la);
		svc_sendreply(xprt, (xdrproc_t)nlm_xdr_void, NULL);
	} else {
		svc_sendreply(xprt, xr, (caddr_t)r);
	}
out:
	free(a);
	free(r);
}

/* ---- NSM dispatch ---- */

static void nsm_dispatch(struct svc_req *rq, SVCXPRT *xprt)
{
	struct rpcrdma_nlm *n = nlm_current;
	struct nsm_args a;
	struct nsm_stat_res res;
	struct netbuf *nb;
	char addr[INET6_ADDRSTRLEN];
	unsigned freed;

	if (!n) {
		svcerr_systemerr(xprt);
		return;
	}
	if (rq->rq_proc != SM_NULL && !peer_allowed(n, xprt))
		return;
	switch (rq->rq_proc) {
	case SM_NULL:
		svc_sendreply(xprt, (xdrproc_t)nlm_xdr_void, NULL);
		break;
	case SM_STAT:
		if (!svc_getargs(xprt, (xdrproc_t)nsm_xdr_sm_name, (caddr_t)&a)) {
			svcerr_decode(xprt);
			break;
		}
		/* this NSM monitors nobody for others: STAT_FAIL, our state */
		res.sr_res = NSM_STAT_FAIL;
		res.sr_state = (int32_t)n->n_state;
		svc_sendreply(xprt, (xdrproc_t)nsm_xdr_stat_res, (caddr_t)&res);
		break;
	case SM_NOTIFY:
		if (!svc_getargs(xprt, (xdrproc_t)nsm_xdr_stat_chge, (caddr_t)&a)) {
			svcerr_decode(xprt);
			break;
		}
		/* the host rebooted: its locks died with its processes.  The
		 * notification counts only from the host's own address (the
		 * address it locked from), as rpc.statd matches the sender's
		 * address before it tells the kernel's lockd: another host
		 * naming it, or a clone with its node name elsewhere, frees
		 * nothing. */
		nb = svc_getrpccaller(xprt);
		freed = nb && nb->len ? nlm_table_free_host(&n->n_table, a.na_name,
							    (struct sockaddr *)nb->buf) : 0;
		if (freed)
			nlm_kick(n);
		if (n->n_cfg.lc_verbose)
			fprintf(n->n_log, "rpcrdma-nfsd: nsm: SM_NOTIFY from %s state %d at %s: "
				"%u host%s released\n", a.na_name, a.na_state,
				nb && nb->len ? nlm_addr_str((struct sockaddr *)nb->buf, addr,
							     sizeof(addr)) : "?",
				freed, freed == 1 ? "" : "s");
		svc_sendreply(xprt, (xdrproc_t)nlm_xdr_void, NULL);
		break;
	default:
		/* MON, UNMON, UNMON_ALL, SIMU_CRASH: the local statd's job */
		svcerr_noproc(xprt);
		break;
	}
}

/* ---- the lock manager's thread ---- */

/* the granted waiters' GRANTED callbacks, for the workers */
static void send_grants(struct rpcrdma_nlm *n)
{
	struct nlm_grant *g, *gn;

	nlm_table_retry(&n->n_table, &g);
	for (; g; g = gn) {
		struct nlm_msgres *m = calloc(1, sizeof(*m));

		gn = g->g_next;
		if (!m) {
			nlm_table_grant_refused(&n->n_table, g);
			free(g);
			continue;
		}
		m->m_grant = g;
		m->m_addr = g->g_addr;
		m->m_addrlen = g->g_addrlen;
		nlm_cb_enqueue(n, m); /* GRANTED jobs are always queued */
	}
}

/* SM_NOTIFY to each host recorded before the restart; retried while the
 * grace period lasts, then given up (the record stays for the next start) */
static void send_notify(struct rpcrdma_nlm *n)
{
	struct nsm_record **pp = &n->n_notify, *r;
	char addr[INET6_ADDRSTRLEN];
	bool last = !nlm_in_grace(n);

	while ((r = *pp)) {
		int err = nlm_cb_notify(n, r);

		nlm_addr_str((struct sockaddr *)&r->nr_addr, addr, sizeof(addr));
		if (err && !last) {
			pp = &r->nr_next;
			continue;
		}
		if (err) {
			fprintf(n->n_log, "rpcrdma-nfsd: nsm: SM_NOTIFY to %s failed: %s\n",
				addr, strerror(-err));
		} else {
			pthread_mutex_lock(&n->n_table.t_lock);
			n->n_table.t_stats.ns_notified++;
			/* forgotten unless it reclaimed already */
			bool back = false;

			for (struct nlm_host *h = n->n_table.t_hosts; h; h = h->h_next)
				if (nlm_addr_equal((struct sockaddr *)&h->h_addr,
						   (struct sockaddr *)&r->nr_addr))
					back = true;
			if (!back)
				nsm_record_drop(n->n_state_dir, (struct sockaddr *)&r->nr_addr);
			pthread_mutex_unlock(&n->n_table.t_lock);
			if (n->n_cfg.lc_verbose)
				fprintf(n->n_log, "rpcrdma-nfsd: nsm: notified %s (state %u)\n",
					addr, n->n_state);
		}
		*pp = r->nr_next;
		free(r);
	}
}

static void *nlm_thread(void *arg)
{
	struct rpcrdma_nlm *n = arg;

	for (;;) {
		struct timespec dl;

		pthread_mutex_lock(&n->n_mu);
		if (!n->n_kick && !n->n_stop) {
			ts_now(&dl);
			dl.tv_nsec += NLM_RETRY_MS * 1000000L;
			if (dl.tv_nsec >= 1000000000L) {
				dl.tv_sec++;
				dl.tv_nsec -= 1000000000L;
			}
			pthread_cond_timedwait(&n->n_cv, &n->n_mu, &dl);
		}
		n->n_kick = false;
		if (n->n_stop) {
			pthread_mutex_unlock(&n->n_mu);
			break;
		}
		pthread_mutex_unlock(&n->n_mu);

		nlm_in_grace(n); /* logs its end */
		send_grants(n);
	}
	return NULL;
}

/* SM_NOTIFY until every recorded host is notified or the grace period is
 * over, every NLM_NOTIFY_RETRY_S */
static void *nlm_notify_thread(void *arg)
{
	struct rpcrdma_nlm *n = arg;
	bool stop = false;

	while (!stop) {
		struct timespec dl;

		send_notify(n);
		ts_now(&dl);
		dl.tv_sec += NLM_NOTIFY_RETRY_S;
		pthread_mutex_lock(&n->n_mu);
		while (n->n_notify && !n->n_stop &&
		       pthread_cond_timedwait(&n->n_cv, &n->n_mu, &dl) != ETIMEDOUT)
			;
		stop = !n->n_notify || n->n_stop;
		pthread_mutex_unlock(&n->n_mu);
	}
	return NULL;
}

/* stop and join the threads started */
static void stop_threads(struct rpcrdma_nlm *n, bool main_thread)
{
	pthread_mutex_lock(&n->n_mu);
	n->n_stop = true;
	pthread_cond_broadcast(&n->n_cv);
	pthread_cond_broadcast(&n->n_cb_cv);
	pthread_mutex_unlock(&n->n_mu);
	if (main_thread)
		pthread_join(n->n_thread, NULL);
	if (n->n_notify_started)
		pthread_join(n->n_notify_thread, NULL);
	for (unsigned i = 0; i < n->n_ncb_threads; i++)
		pthread_join(n->n_cb_thread[i], NULL);
}

/* start the lock manager's thread, the callback workers and the notifier */
static int start_threads(struct rpcrdma_nlm *n)
{
	int err = -pthread_create(&n->n_thread, NULL, nlm_thread, n);

	if (err)
		return err;
	for (; n->n_ncb_threads < NLM_CB_WORKERS && !err; n->n_ncb_threads++)
		err = -pthread_create(&n->n_cb_thread[n->n_ncb_threads], NULL,
				      nlm_cb_worker, n);
	if (err)
		n->n_ncb_threads--;
	else if (n->n_notify) {
		err = -pthread_create(&n->n_notify_thread, NULL, nlm_notify_thread, n);
		n->n_notify_started = err == 0;
	}
	if (err)
		stop_threads(n, true);
	return err;
}

/* ---- start, stop ---- */

/*
 * a listener for @prog/@vers on the TCP side's thread (src/nfs3/rpc_tcp.c,
 * shared with MOUNT): peers lc_allow refuses are closed at accept; with
 * @rpcbind, registered with rpcbind (TCP, the bound port)
 */
static int serve(struct rpcrdma_nlm *n, uint16_t port, uint32_t prog, uint32_t vers,
		 rpc_tcp_dispatch_fn dispatch, bool rpcbind,
		 struct rpc_tcp_listener **lp, uint16_t *bound, bool *registered)
{
	int fd = -1, err;

	err = rpc_tcp_socket(n->n_cfg.lc_listen, port, &fd, bound);
	if (err)
		return err;
	err = rpc_tcp_serve(fd, prog, vers, dispatch, n->n_cfg.lc_allow,
			    n->n_cfg.lc_allow_arg, lp);
	if (err) {
		close(fd);
		return err;
	}
	if (rpcbind) { /* under tcp and tcp6, as the socket listens */
		err = rpcb_tcp_set(prog, vers, fd, false);
		if (err)
			return err;
		*registered = true;
	}
	return 0;
}

/* stop both listeners: no nlm_dispatch or nsm_dispatch runs after this */
static void unserve(struct rpcrdma_nlm *n)
{
	if (n->n_lsn) {
		if (n->n_registered)
			rpcb_tcp_unset(RPCRDMA_NLM_PROGRAM, RPCRDMA_NLM_VERSION);
		rpc_tcp_unserve(n->n_lsn);
		n->n_lsn = NULL;
	}
	if (n->n_nsm_lsn) {
		if (n->n_nsm_registered)
			rpcb_tcp_unset(RPCRDMA_NSM_PROGRAM, RPCRDMA_NSM_VERSION);
		rpc_tcp_unserve(n->n_nsm_lsn);
		n->n_nsm_lsn = NULL;
	}
}

static void nlm_free(struct rpcrdma_nlm *n)
{
	unserve(n);
	nsm_records_free(n->n_notify);
	/* jobs not sent: a granted lock stays held until the table goes */
	while (n->n_grantq) {
		struct nlm_msgres *m = n->n_grantq->m_next;

		free(n->n_grantq->m_grant);
		free(n->n_grantq);
		n->n_grantq = m;
	}
	while (n->n_msgq) {
		struct nlm_msgres *m = n->n_msgq->m_next;

		free(n->n_msgq);
		n->n_msgq = m;
	}
	free(n->n_state_dir);
	free(n);
}

int rpcrdma_nlm_start(const struct rpcrdma_nlm_config *cfg, struct rpcrdma_nlm **out)
{
	struct rpcrdma_nlm *n;
	uint32_t grace;
	int err;

	if (!cfg || !cfg->lc_open || !out)
		return -EINVAL;
	if (atomic_flag_test_and_set(&nlm_busy))
		return -EBUSY;
	n = calloc(1, sizeof(*n));
	if (!n) {
		err = -ENOMEM;
		goto out_busy;
	}
	n->n_cfg = *cfg;
	n->n_log = cfg->lc_log ? cfg->lc_log : stderr;
	n->n_state_dir = strdup(cfg->lc_state_dir ? cfg->lc_state_dir : RPCRDMA_NLM_STATE_DIR);
	if (!n->n_state_dir) {
		err = -ENOMEM;
		goto out_free;
	}
	if (cfg->lc_nsm_name)
		snprintf(n->n_name, sizeof(n->n_name), "%s", cfg->lc_nsm_name);
	else if (cfg->lc_listen)
		snprintf(n->n_name, sizeof(n->n_name), "%s", cfg->lc_listen);
	else if (gethostname(n->n_name, sizeof(n->n_name) - 1) < 0)
		snprintf(n->n_name, sizeof(n->n_name), "localhost");
	err = nsm_state_advance(n->n_state_dir, &n->n_state);
	if (err)
		goto out_free;
	err = nsm_records_load(n->n_state_dir, &n->n_notify);
	if (err)
		goto out_free;
	err = nlm_table_init(&n->n_table, cfg->lc_max_locks, cfg->lc_open, cfg->lc_open_arg);
	if (err)
		goto out_free;
	n->n_table.t_host_event = nlm_host_event;
	n->n_table.t_host_event_arg = n;
	n->n_table.t_conflict = cfg->lc_conflict;
	n->n_table.t_conflict_arg = cfg->lc_conflict_arg;
	n->n_table.t_stats.ns_state = n->n_state;
	pthread_mutex_init(&n->n_mu, NULL);
	{
		pthread_condattr_t ca;

		pthread_condattr_init(&ca);
		pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
		pthread_cond_init(&n->n_cv, &ca);
		pthread_condattr_destroy(&ca);
	}
	pthread_cond_init(&n->n_cb_cv, NULL);
	n->n_grantq_tail = &n->n_grantq;
	n->n_msgq_tail = &n->n_msgq;
	grace = cfg->lc_grace_sec ? cfg->lc_grace_sec : RPCRDMA_NLM_GRACE_DEFAULT;
	ts_now(&n->n_grace_end);
	if (grace != UINT32_MAX)
		n->n_grace_end.tv_sec += grace;

	nlm_current = n;
	err = serve(n, cfg->lc_port, RPCRDMA_NLM_PROGRAM, RPCRDMA_NLM_VERSION,
		    nlm_dispatch, cfg->lc_rpcbind, &n->n_lsn, &n->n_port,
		    &n->n_registered);
	if (err)
		goto out_table;
	err = serve(n, cfg->lc_nsm_port, RPCRDMA_NSM_PROGRAM,
		    RPCRDMA_NSM_VERSION, nsm_dispatch, false, &n->n_nsm_lsn,
		    &n->n_nsm_port, &n->n_nsm_registered);
	if (err)
		goto out_table;
	/* the host's statd may own NSM: then reboot notifications go to it */
	if (cfg->lc_rpcbind) {
		if (rpcb_tcp_set(RPCRDMA_NSM_PROGRAM, RPCRDMA_NSM_VERSION,
				 rpc_tcp_listener_fd(n->n_nsm_lsn), false) == 0)
			n->n_nsm_registered = true;
		else
			fprintf(n->n_log, "rpcrdma-nfsd: nsm: rpcbind has program %u "
				"(rpc.statd?): clients' reboot notifications go there\n",
				RPCRDMA_NSM_PROGRAM);
	}
	err = start_threads(n);
	if (err)
		goto out_table;
	fprintf(n->n_log, "rpcrdma-nfsd: nlm: NLM v4 on TCP port %u, NSM on %u, state %u, "
		"grace %u s, %s\n", n->n_port, n->n_nsm_port, n->n_state,
		grace == UINT32_MAX ? 0 : grace, n->n_state_dir);
	fflush(n->n_log);
	*out = n;
	return 0;

out_table:
	unserve(n); /* no call uses the table after this */
	nlm_current = NULL;
	nlm_table_destroy(&n->n_table);
	pthread_cond_destroy(&n->n_cb_cv);
	pthread_cond_destroy(&n->n_cv);
	pthread_mutex_destroy(&n->n_mu);
out_free:
	nlm_free(n);
out_busy:
	atomic_flag_clear(&nlm_busy);
	return err;
}

void rpcrdma_nlm_stop(struct rpcrdma_nlm *n)
{
	if (!n)
		return;
	unserve(n); /* no call uses the table after this */
	stop_threads(n, true);
	nlm_current = NULL;
	nlm_table_destroy(&n->n_table);
	pthread_cond_destroy(&n->n_cb_cv);
	pthread_cond_destroy(&n->n_cv);
	pthread_mutex_destroy(&n->n_mu);
	nlm_free(n);
	atomic_flag_clear(&nlm_busy);
}

void rpcrdma_nlm_get_stats(struct rpcrdma_nlm *n, struct rpcrdma_nlm_stats *out)
{
	pthread_mutex_lock(&n->n_table.t_lock);
	*out = n->n_table.t_stats;
	out->ns_ranges = n->n_table.t_nranges;
	out->ns_holders = n->n_table.t_nholders;
	out->ns_waiting = n->n_table.t_nwaiters;
	pthread_mutex_unlock(&n->n_table.t_lock);
	out->ns_state = n->n_state;
	out->ns_in_grace = nlm_in_grace(n);
}

void rpcrdma_nlm_ports(const struct rpcrdma_nlm *n, uint16_t *nlm_port,
		       uint16_t *nsm_port)
{
	*nlm_port = n->n_port;
	*nsm_port = n->n_nsm_port;
}
