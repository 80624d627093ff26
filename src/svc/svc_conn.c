// SPDX-License-Identifier: MIT
/*
 * svc_conn.c - one Responder connection: admission and accept (with RFC
 * 8797 private data), its receive buffers and credit grant, send-queue
 * slots, completion dispatch, teardown.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <fcntl.h>
#include <time.h>

#include "svc/svc_bc.h"

/*
 * Receives held back for one chained repost at most.  A call answered
 * during the drain (an error reply, or sc_loop_dispatch) frees its credit
 * while its Receive still waits to be reposted, so the Requester may send
 * that many more calls than we have posted Receives, up to the
 * SVC_EXTRA_RECVS headroom; beyond it the Requester would get RNR NAKs.
 */
#define SVC_REFILL_BATCH (SVC_EXTRA_RECVS / 2)

static uint32_t min_u32(uint32_t a, uint32_t b)
{
	return a < b ? a : b;
}

bool svc_conn_sq_take(struct svc_conn *conn, uint32_t n)
{
	uint32_t f = atomic_load_explicit(&conn->sx_sq_free, memory_order_relaxed);

	do {
		if (f < n)
			return false;
	} while (!atomic_compare_exchange_weak_explicit(&conn->sx_sq_free, &f, f - n,
							memory_order_acquire,
							memory_order_relaxed));
	return true;
}

bool svc_conn_sq_reserve(struct svc_conn *conn, struct svc_call *cc, uint32_t n,
			 bool reads)
{
	if (!conn->sx_sqwait_head && svc_conn_sq_take(conn, n)) {
		cc->cc_sq_used += n;
		return true;
	}
	cc->cc_state = CC_SQ_WAIT;
	cc->cc_sq_want = n;
	cc->cc_sq_reads = reads;
	svc_call_append(&conn->sx_sqwait_head, &conn->sx_sqwait_tail, cc);
	atomic_store(&conn->sx_sq_waiting, true);
	SVC_INC(conn->sx_svc, sq_waits, 1);
	return false;
}

void svc_conn_sq_release(struct svc_conn *conn, struct svc_call *cc)
{
	atomic_fetch_add(&conn->sx_sq_free, cc->cc_sq_used);
	cc->cc_sq_used = 0;
	while (conn->sx_sqwait_head && !conn->sx_closing &&
	       svc_conn_sq_take(conn, conn->sx_sqwait_head->cc_sq_want)) {
		struct svc_call *w = conn->sx_sqwait_head;

		conn->sx_sqwait_head = w->cc_next;
		if (!conn->sx_sqwait_head) {
			conn->sx_sqwait_tail = NULL;
			atomic_store(&conn->sx_sq_waiting, false);
		}
		w->cc_next = NULL;
		w->cc_sq_used += w->cc_sq_want;
		if (w->cc_sq_reads)
			svc_recv_post_chains(w);
		else
			svc_send_resume(w);
	}
}

/* Closing: calls parked for send-queue slots are dropped. */
static void svc_conn_drop_sq_waiters(struct svc_conn *conn)
{
	struct svc_call *cc = conn->sx_sqwait_head, *next;

	conn->sx_sqwait_head = conn->sx_sqwait_tail = NULL;
	atomic_store(&conn->sx_sq_waiting, false);
	for (; cc; cc = next) {
		next = cc->cc_next;
		cc->cc_next = NULL;
		SVC_INC(conn->sx_svc, drops, 1);
		svc_call_put(cc);
	}
}

void svc_conn_queue_recv(struct svc_conn *conn, struct svc_recv *rc)
{
	if (conn->sx_closing)
		return; /* held until the connection goes */
	rc->rc_wr.next = NULL;
	if (conn->sx_refill_tail)
		conn->sx_refill_tail->rc_wr.next = &rc->rc_wr;
	else
		conn->sx_refill_head = rc;
	conn->sx_refill_tail = rc;
	conn->sx_refill_count++;
}

int svc_conn_flush_recvs(struct svc_conn *conn)
{
	struct ibv_recv_wr *bad;
	uint32_t n = conn->sx_refill_count;
	int rc;

	if (!n)
		return 0;
	conn->sx_refill_tail = NULL;
	conn->sx_refill_count = 0;
	if (conn->sx_closing) {
		conn->sx_refill_head = NULL;
		return -ESHUTDOWN;
	}
	rc = rpcrdma_verbs_post_recv(conn->sx_id->qp, &conn->sx_refill_head->rc_wr, &bad);
	conn->sx_refill_head = NULL;
	if (rc) {
		SVC_INC(conn->sx_svc, post_errors, 1);
		svc_log(conn->sx_svc, "conn %u: refill of %u receives failed: %s",
			conn->sx_id_num, n, strerror(-rc));
		svc_conn_disconnected(conn);
		return rc;
	}
	conn->sx_recvs_posted += n;
	SVC_INC(conn->sx_svc, recv_refills, 1);
	SVC_DEC(conn->sx_svc, recv_in_use, n);
	return 0;
}

/* Post every receive buffer with one chained post. */
int svc_conn_post_all_recvs(struct svc_conn *conn)
{
	struct ibv_recv_wr *bad;
	uint32_t i;
	int rc;

	for (i = 0; i < conn->sx_nrecvs; i++)
		conn->sx_recvs[i].rc_wr.next =
			i + 1 < conn->sx_nrecvs ? &conn->sx_recvs[i + 1].rc_wr : NULL;
	rc = rpcrdma_verbs_post_recv(conn->sx_id->qp, &conn->sx_recvs[0].rc_wr, &bad);
	if (rc)
		return rc;
	conn->sx_recvs_posted = conn->sx_nrecvs;
	return 0;
}

/* Give receive context @i a buffer from the pool; -EAGAIN when none. */
static int svc_conn_recv_init(struct svc_conn *conn, uint32_t i)
{
	struct svc_recv *rc = &conn->sx_recvs[i];
	int err;

	err = svc_buf_get(conn->sx_dev, conn->sx_inline_recv, true, &rc->rc_mem);
	if (err)
		return err;
	rc->rc_cqe.ce_type = RPCRDMA_CQE_RECV;
	rc->rc_cqe.ce_id = i;
	rc->rc_conn = conn;
	rc->rc_buf = rc->rc_mem.sb_addr;
	rc->rc_sge.addr = (uintptr_t)rc->rc_buf;
	rc->rc_sge.length = conn->sx_inline_recv;
	rc->rc_sge.lkey = svc_buf_lkey(&rc->rc_mem);
	rc->rc_wr.wr_id = (uintptr_t)&rc->rc_cqe;
	rc->rc_wr.sg_list = &rc->rc_sge;
	rc->rc_wr.num_sge = 1;
	rc->rc_wr.next = NULL;
	return 0;
}

int svc_conn_alloc_pools(struct svc_conn *conn)
{
	uint32_t want = conn->sx_credits + SVC_EXTRA_RECVS, i;
	int err;

	if (conn->sx_max_credits < conn->sx_credits)
		conn->sx_max_credits = conn->sx_credits;
	conn->sx_recvs = calloc(conn->sx_max_credits + SVC_EXTRA_RECVS,
				sizeof(*conn->sx_recvs));
	if (!conn->sx_recvs)
		return -ENOMEM;
	for (i = 0; i < want; i++) {
		err = svc_conn_recv_init(conn, i);
		if (err)
			return err;
		conn->sx_nrecvs++;
	}
	if (!conn->sx_sq_size) {
		/* (not chained: sx_sq_free is atomic) */
		conn->sx_sq_size = svc_conn_sq_slots(conn->sx_max_credits);
		conn->sx_sq_free = conn->sx_sq_size;
	}
	return 0;
}

void svc_conn_grow_credits(struct svc_conn *conn)
{
	struct rpcrdma_svc *svc = conn->sx_svc;
	uint32_t target, first = conn->sx_nrecvs, n = 0, i;
	struct ibv_recv_wr *bad;

	if (conn->sx_closing || conn->sx_credits >= conn->sx_max_credits ||
	    conn->sx_calls_out * 2 < conn->sx_credits)
		return;
	target = min_u32(conn->sx_credits * 2, conn->sx_max_credits);
	for (i = first; i < target + SVC_EXTRA_RECVS; i++) {
		if (svc_conn_recv_init(conn, i))
			break;
		conn->sx_recvs[i].rc_wr.next = NULL;
		if (n)
			conn->sx_recvs[i - 1].rc_wr.next = &conn->sx_recvs[i].rc_wr;
		n++;
	}
	if (!n) {
		SVC_INC(svc, credit_grow_denied, 1);
		return;
	}
	/* Posted before the larger grant is ever sent. */
	if (rpcrdma_verbs_post_recv(conn->sx_id->qp, &conn->sx_recvs[first].rc_wr, &bad)) {
		for (i = first; i < first + n; i++)
			svc_buf_put(conn->sx_dev, &conn->sx_recvs[i].rc_mem, true);
		SVC_INC(svc, post_errors, 1);
		svc_conn_disconnected(conn);
		return;
	}
	conn->sx_nrecvs += n;
	conn->sx_recvs_posted += n;
	conn->sx_credits = conn->sx_nrecvs - SVC_EXTRA_RECVS;
	if (conn->sx_credits < target)
		SVC_INC(svc, credit_grow_denied, 1);
	SVC_INC(svc, credit_grows, 1);
	if (svc->sv_cfg.sc_verbose)
		svc_log(svc, "conn %u: credits raised to %u", conn->sx_id_num, conn->sx_credits);
}

static int svc_conn_create_qp(struct svc_conn *conn,
			      const struct ibv_device_attr *dev)
{
	struct ibv_qp_init_attr attr;
	struct rdma_cm_id *id = conn->sx_id;
	uint32_t recv_wr = conn->sx_max_credits + SVC_EXTRA_RECVS;

	/* Slots are counted (svc_conn_sq_reserve()): the queue never holds
	 * more than this, so a smaller device limit only means waiting, as
	 * long as the longest chain a call posts still fits. */
	if ((uint32_t)dev->max_qp_wr < SVC_CTX_MAX_WR + 1 + SVC_BC_SQ)
		return -EINVAL;
	/* backchannel hook: its own Sends and Receives (svc_bc.h) */
	recv_wr += SVC_BC_RECVS;
	if (conn->sx_sq_size + SVC_BC_SQ > (uint32_t)dev->max_qp_wr)
		conn->sx_sq_size = (uint32_t)dev->max_qp_wr - SVC_BC_SQ;
	if (recv_wr > (uint32_t)dev->max_qp_wr)
		return -EINVAL;
	conn->sx_sq_free = conn->sx_sq_size;
	conn->sx_cq = ibv_create_cq(id->verbs, (int)recv_wr, conn, conn->sx_dev->dv_channel, 0);
	if (!conn->sx_cq)
		return -errno;
	conn->sx_scq = ibv_create_cq(id->verbs, (int)(conn->sx_sq_size + SVC_BC_SQ), conn,
				     conn->sx_dev->dv_channel, 0);
	if (!conn->sx_scq)
		return -errno;
	if (svc_conn_arm(conn))
		return -EIO;

	memset(&attr, 0, sizeof(attr));
	attr.send_cq = conn->sx_scq;
	attr.recv_cq = conn->sx_cq;
	attr.qp_type = IBV_QPT_RC;
	attr.cap.max_send_wr = conn->sx_sq_size + SVC_BC_SQ;
	attr.cap.max_recv_wr = recv_wr;
	attr.cap.max_send_sge = RPCRDMA_RW_MAX_SGE;
	attr.cap.max_recv_sge = 1;
	if (rdma_create_qp(id, conn->sx_dev->dv_pd, &attr))
		return -errno;
	/* The provider may give more; we count only what we asked for. */
	if (conn->sx_svc->sv_cfg.sc_verbose)
		svc_log(conn->sx_svc, "conn %u: QP send queue %u (counted %u), receive queue %u, send sge %u",
			conn->sx_id_num, attr.cap.max_send_wr, conn->sx_sq_size,
			attr.cap.max_recv_wr, attr.cap.max_send_sge);
	return 0;
}

/* Log refusals once per burst: the first, then a count when accepting again. */
void svc_conn_refused(struct rpcrdma_svc *svc, const char *why)
{
	SVC_INC(svc, conns_refused, 1);
	if (!atomic_fetch_add(&svc->sv_refused_burst, 1))
		svc_log(svc, "refusing connections: %s (%u open)", why,
			atomic_load(&svc->sv_nconns));
}

bool svc_conn_admit(struct rpcrdma_svc *svc)
{
	if (atomic_fetch_add(&svc->sv_nconns, 1) < svc->sv_cfg.sc_max_connections)
		return true;
	atomic_fetch_sub(&svc->sv_nconns, 1);
	return false;
}

/* ---- connections per peer address ---- */

/** The connections of one peer host (sv_hosts): an IPv4 address, an IPv6 /64. */
struct svc_host {
	struct svc_host *ho_next;    /* bucket chain */
	uint32_t ho_conns;           /* places taken (sv_hosts_lock) */
	sa_family_t ho_family;       /* AF_INET (IPv4-mapped too), AF_INET6, other */
	uint8_t ho_addr[16];         /* 4 bytes, or an IPv6 /64's 8; zero for another family */
};

/* The key of @peer: its family and address bytes, an IPv4-mapped IPv6
 * address as IPv4, an IPv6 address by its /64 (the network prefix: one
 * machine may use any number of addresses in its /64, SLAAC privacy
 * addresses, so counting addresses would let it take every place). */
static void svc_host_key(const struct sockaddr *peer, sa_family_t *fam, uint8_t addr[16])
{
	memset(addr, 0, 16);
	*fam = peer ? peer->sa_family : AF_UNSPEC;
	if (*fam == AF_INET) {
		memcpy(addr, &((const struct sockaddr_in *)peer)->sin_addr, 4);
	} else if (*fam == AF_INET6) {
		const struct in6_addr *a = &((const struct sockaddr_in6 *)peer)->sin6_addr;

		if (IN6_IS_ADDR_V4MAPPED(a)) {
			*fam = AF_INET;
			memcpy(addr, a->s6_addr + 12, 4);
		} else if (IN6_IS_ADDR_LINKLOCAL(a)) {
			/* fe80::/64 is every machine on the link (RoCE's
			 * default GIDs): the whole address is the host */
			memcpy(addr, a->s6_addr, 16);
		} else {
			memcpy(addr, a->s6_addr, 8);
		}
	}
}

static uint32_t svc_host_hash(const struct rpcrdma_svc *svc, sa_family_t fam,
			      const uint8_t addr[16])
{
	uint32_t h = 2166136261u ^ svc->sv_hosts_seed ^ fam, i;

	for (i = 0; i < 16; i++)
		h = (h ^ addr[i]) * 16777619u;
	return (h ^ (h >> 15)) % SVC_HOST_BUCKETS;
}

/* The entry of a key in its bucket, or NULL; sv_hosts_lock held. */
static struct svc_host *svc_host_find(struct rpcrdma_svc *svc, uint32_t b, sa_family_t fam,
				      const uint8_t addr[16])
{
	struct svc_host *h;

	for (h = svc->sv_hosts[b]; h; h = h->ho_next)
		if (h->ho_family == fam && !memcmp(h->ho_addr, addr, 16))
			return h;
	return NULL;
}

struct svc_host *svc_host_admit(struct rpcrdma_svc *svc, const struct sockaddr *peer)
{
	uint8_t addr[16];
	sa_family_t fam;
	struct svc_host *h;
	uint32_t b;

	svc_host_key(peer, &fam, addr);
	b = svc_host_hash(svc, fam, addr);
	pthread_mutex_lock(&svc->sv_hosts_lock);
	h = svc_host_find(svc, b, fam, addr);
	if (h && h->ho_conns >= svc->sv_cfg.sc_max_conns_per_host) {
		h = NULL;
		errno = EBUSY;
	} else if (h) {
		h->ho_conns++;
	} else if (!svc->sv_cfg.sc_max_conns_per_host) {
		errno = EBUSY;
	} else if ((h = calloc(1, sizeof(*h)))) {
		h->ho_family = fam;
		memcpy(h->ho_addr, addr, 16);
		h->ho_conns = 1;
		h->ho_next = svc->sv_hosts[b];
		svc->sv_hosts[b] = h;
	} else {
		errno = ENOMEM;
	}
	pthread_mutex_unlock(&svc->sv_hosts_lock);
	return h;
}

void svc_host_put(struct rpcrdma_svc *svc, struct svc_host *h)
{
	struct svc_host **pp;
	uint32_t b;

	if (!h)
		return;
	b = svc_host_hash(svc, h->ho_family, h->ho_addr);
	pthread_mutex_lock(&svc->sv_hosts_lock);
	if (--h->ho_conns == 0) {
		for (pp = &svc->sv_hosts[b]; *pp && *pp != h; pp = &(*pp)->ho_next)
			;
		if (*pp)
			*pp = h->ho_next;
	} else {
		h = NULL;
	}
	pthread_mutex_unlock(&svc->sv_hosts_lock);
	free(h);
}

uint32_t svc_host_count(struct rpcrdma_svc *svc, const struct sockaddr *peer)
{
	uint8_t addr[16];
	sa_family_t fam;
	struct svc_host *h;
	uint32_t n;

	svc_host_key(peer, &fam, addr);
	pthread_mutex_lock(&svc->sv_hosts_lock);
	h = svc_host_find(svc, svc_host_hash(svc, fam, addr), fam, addr);
	n = h ? h->ho_conns : 0;
	pthread_mutex_unlock(&svc->sv_hosts_lock);
	return n;
}

void svc_host_fini(struct rpcrdma_svc *svc)
{
	struct svc_host *h;
	uint32_t b;

	for (b = 0; b < SVC_HOST_BUCKETS; b++)
		while ((h = svc->sv_hosts[b])) {
			svc->sv_hosts[b] = h->ho_next;
			free(h);
		}
}

/* "--max-connections-per-host (N) reached by ADDR" into @buf. */
static const char *svc_host_why(const struct rpcrdma_svc *svc, const struct sockaddr *peer,
				char *buf, size_t len)
{
	char a[INET6_ADDRSTRLEN] = "an address of another family";

	if (peer && peer->sa_family == AF_INET)
		inet_ntop(AF_INET, &((const struct sockaddr_in *)peer)->sin_addr, a, sizeof(a));
	else if (peer && peer->sa_family == AF_INET6)
		inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)peer)->sin6_addr, a, sizeof(a));
	snprintf(buf, len, "--max-connections-per-host (%u) reached by %s%s",
		 svc->sv_cfg.sc_max_conns_per_host, a,
		 peer && peer->sa_family == AF_INET6 &&
		 !IN6_IS_ADDR_V4MAPPED(&((const struct sockaddr_in6 *)peer)->sin6_addr) ?
		 " (its /64)" : "");
	return buf;
}

void svc_conn_param_of(const struct rdma_cm_event *ev, struct svc_conn_param *p)
{
	uint8_t len = ev->param.conn.private_data_len;

	memset(p, 0, sizeof(*p));
	if (!ev->param.conn.private_data)
		len = 0;
	if (len) /* memcpy's source must be valid even for 0 bytes */
		memcpy(p->cr_pdata, ev->param.conn.private_data, len);
	p->cr_pdata_len = len;
	p->cr_initiator_depth = ev->param.conn.initiator_depth;
	p->cr_responder_resources = ev->param.conn.responder_resources;
	p->cr_qp_num = ev->param.conn.qp_num;
}

int svc_admit(struct rpcrdma_svc *svc, const struct sockaddr *peer, struct svc_host **hostp)
{
	const struct rpcrdma_svc_config *cfg = &svc->sv_cfg;
	struct svc_host *host;
	char why[128];

	if (cfg->sc_accept && !cfg->sc_accept(peer, cfg->sc_accept_arg)) {
		svc_log(svc, "refused a connection: address not allowed");
		return -EACCES;
	}
	/* The places are taken before anything else, the peer's own first
	 * (a host at its share takes nothing from the others): transport
	 * threads accept at the same time, and a check then an add would
	 * let two of them take the last place. */
	host = svc_host_admit(svc, peer);
	if (!host) {
		if (errno == ENOMEM)
			return -ENOMEM;
		SVC_INC(svc, conns_refused_host, 1);
		svc_conn_refused(svc, svc_host_why(svc, peer, why, sizeof(why)));
		return -EBUSY;
	}
	if (!svc_conn_admit(svc)) {
		svc_host_put(svc, host);
		svc_conn_refused(svc, "--max-connections reached");
		return -EBUSY;
	}
	*hostp = host;
	return 0;
}

int svc_conn_new(struct svc_group *grp, struct rdma_cm_id *id, struct ibv_pd *pd,
		 const struct svc_conn_param *p, struct svc_conn **out)
{
	struct rpcrdma_svc *svc = grp->gr_svc;
	const struct rpcrdma_svc_config *cfg = &svc->sv_cfg;
	struct rpcrdma_cm_private peer;
	struct svc_conn *conn;
	struct svc_host *host;
	uint32_t peer_recv = 0;
	int rc;

	rc = svc_admit(svc, rdma_get_peer_addr(id), &host);
	if (rc)
		return rc;
	conn = calloc(1, sizeof(*conn));
	if (!conn) {
		svc_host_put(svc, host);
		atomic_fetch_sub(&svc->sv_nconns, 1); /* the place svc_conn_admit() took */
		return -ENOMEM;
	}
	conn->sx_host = host; /* given back by svc_conn_destroy() */
	conn->sx_svc = svc;
	conn->sx_grp = grp;
	conn->sx_id = id;
	conn->sx_id_num = atomic_fetch_add(&svc->sv_conn_ids, 1) + 1;
	conn->sx_max_credits = cfg->sc_credits;
	conn->sx_credits = svc_initial_credits(cfg);
	conn->sx_inline_recv = cfg->sc_inline_size;
	conn->sx_dev = svc_dev_get(grp, pd ? NULL : id->verbs, pd);
	if (!conn->sx_dev) {
		rc = -errno;
		if (rc >= 0) /* never 0 here: *out stays unset */
			rc = -ENOMEM;
		goto fail;
	}

	memset(&peer, 0, sizeof(peer));
	rc = rpcrdma_wire_decode_private(p->cr_pdata, p->cr_pdata_len, &peer);
	if (rc == 0) {
		peer_recv = peer.cp_recv_size;
		conn->sx_peer_rsi = peer.cp_flags & RPCRDMA_CM_FLAG_RSI;
	}
	conn->sx_peer_recv = peer_recv;
	conn->sx_inline_send = rpcrdma_wire_inline_threshold(cfg->sc_inline_size,
							     peer_recv);

	/* Receive buffers first: a full pool refuses before any QP exists. */
	rc = svc_conn_alloc_pools(conn);
	if (rc)
		goto fail;
	*out = conn;
	return 0;
fail:
	svc_conn_new_fail(conn, rc);
	/* logged with the place given back: "(N open)" counts the open ones */
	if (rc == -EAGAIN)
		svc_conn_refused(svc, "memory budget's receive share in use");
	return rc;
}

void svc_conn_new_fail(struct svc_conn *conn, int rc)
{
	struct rpcrdma_svc *svc = conn->sx_svc;

	if (rc != -EAGAIN)
		svc_log(svc, "conn %u: accept failed: %s", conn->sx_id_num, strerror(-rc));
	conn->sx_id = NULL; /* the caller rejects and destroys the cm_id */
	conn->sx_recvs_posted = 0;
	svc_conn_destroy(conn); /* its receive buffers and host place back */
	atomic_fetch_sub(&svc->sv_nconns, 1); /* the place svc_conn_admit() took */
}

void svc_conn_opened(struct svc_conn *conn, const struct svc_conn_param *p,
		     uint32_t read_depth)
{
	struct rpcrdma_svc *svc = conn->sx_svc;
	struct svc_group *grp = conn->sx_grp;

	conn->sx_next = grp->gr_conns;
	grp->gr_conns = conn;
	atomic_fetch_add(&grp->gr_nconns, 1); /* sv_nconns: svc_conn_admit() */
	conn->sx_accepted_ms = svc_now_ms();
	conn->sx_idle_ms = conn->sx_accepted_ms;
	svc_conn_idle_arm(grp, conn->sx_accepted_ms);
	grp->gr_handshakes++;
	if (atomic_load(&svc->sv_refused_burst)) {
		svc_log(svc, "accepting again after %llu refused connections",
			(unsigned long long)atomic_exchange(&svc->sv_refused_burst, 0));
	}
	SVC_XINC(svc, connections, SVC_XPRT_RDMA, 1);
	SVC_XINC(svc, conns_open, SVC_XPRT_RDMA, 1);
	conn->sx_stats = svc_stats_conn_open(conn);
	conn->sx_capture = svc_capture_conn_open(conn, p->cr_qp_num);
	if (svc->sv_cfg.sc_verbose || atomic_load(&svc->sv_nconns) <= 64)
		svc_log(svc, "conn %u: accepted%s%u; peer inline receive %u (%s), our inline %u, "
			"credits %u (up to %u), read depth %u",
			conn->sx_id_num, svc->sv_ngroups > 1 ? " on transport thread " : "",
			svc->sv_ngroups > 1 ? grp->gr_index : 0, conn->sx_inline_send,
			!conn->sx_peer_recv ? "no private data" :
			conn->sx_peer_rsi ? "private data, Send With Invalidate ok" : "private data",
			conn->sx_inline_recv, conn->sx_credits, conn->sx_max_credits,
			read_depth);
}

int svc_conn_accept(struct svc_group *grp, struct rdma_cm_id *id,
		    const struct svc_conn_param *p)
{
	const struct rpcrdma_svc_config *cfg = &grp->gr_svc->sv_cfg;
	struct rdma_conn_param param;
	struct rpcrdma_cm_private ours;
	struct ibv_device_attr dattr;
	uint8_t pdata[RPCRDMA_CM_PRIVATE_BYTES];
	struct svc_conn *conn;
	int rc;

	rc = svc_conn_new(grp, id, NULL, p, &conn);
	if (rc)
		return rc;
	if (ibv_query_device(id->verbs, &dattr)) {
		rc = -EIO;
		goto out_err;
	}
	rc = svc_conn_create_qp(conn, &dattr);
	if (rc)
		goto out_err;
	rc = svc_conn_post_all_recvs(conn);
	if (rc)
		goto out_err;
	id->context = conn;

	ours.cp_version = RPCRDMA_CM_VERSION;
	ours.cp_flags = 0; /* we do not take Send With Invalidate: we never register */
	ours.cp_send_size = cfg->sc_inline_size;
	ours.cp_recv_size = cfg->sc_inline_size;
	rpcrdma_wire_encode_private(pdata, &ours);
	memset(&param, 0, sizeof(param));
	param.private_data = pdata;
	param.private_data_len = sizeof(pdata);
	/* The CM reports the peer's values from our side already: its
	 * responder resources as our initiator depth (the RDMA Reads we may
	 * have outstanding) and vice versa. */
	param.initiator_depth = (uint8_t)min_u32(p->cr_initiator_depth,
						 (uint32_t)dattr.max_qp_init_rd_atom);
	param.responder_resources = (uint8_t)min_u32(p->cr_responder_resources,
						     (uint32_t)dattr.max_qp_rd_atom);
	param.rnr_retry_count = 7;
	param.flow_control = 1;
	if (rdma_accept(id, &param)) {
		rc = -errno;
		id->context = NULL;
		goto out_err;
	}
	svc_conn_opened(conn, p, param.initiator_depth);
	return 0;

out_err:
	if (id->qp)
		rdma_destroy_qp(id);
	svc_conn_new_fail(conn, rc);
	return rc;
}

void svc_conn_disconnected(struct svc_conn *conn)
{
	if (!conn->sx_closing) {
		conn->sx_closing = true;
		if (!conn->sx_established && conn->sx_accepted_ms)
			conn->sx_grp->gr_handshakes--;
		if (conn->sx_svc->sv_cfg.sc_verbose || atomic_load(&conn->sx_svc->sv_nconns) <= 64)
			svc_log(conn->sx_svc, "conn %u: disconnected", conn->sx_id_num);
		rpcrdma_verbs_disconnect(conn->sx_id); /* moves the QP to error: posted work flushes */
		svc_bc_conn_closing(conn); /* backchannel hook: its calls end */
	}
	/* Messages and calls waiting on the device are dropped with it. */
	svc_dev_drop_waiters(conn->sx_dev, conn);
	svc_conn_maybe_destroy(conn);
}

/* A closing connection can go once every posted Receive has flushed and
 * every call context is back in its pool; the run loop frees it. */
void svc_conn_maybe_destroy(struct svc_conn *conn)
{
	if (!conn->sx_closing)
		return;
	if (conn->sx_sqwait_head)
		svc_conn_drop_sq_waiters(conn);
	if (!conn->sx_recvs_posted && !conn->sx_calls_out && !svc_bc_busy(conn))
		conn->sx_reap = true;
}

/* Release everything; the caller made sure nothing is posted any more. */
void svc_conn_destroy(struct svc_conn *conn)
{
	uint32_t held = conn->sx_nrecvs - conn->sx_recvs_posted, i;

	svc_bc_conn_gone(conn); /* backchannel hook: its buffers go back */

	/* Receive buffers not posted were counted as held; return them. */
	if (conn->sx_recvs && conn->sx_closing)
		SVC_DEC(conn->sx_svc, recv_in_use, held);
	if (conn->sx_id)
		rpcrdma_verbs_destroy_id(conn->sx_id);
	if (svc_conn_split_cq(conn)) {
		if (conn->sx_sarmed)
			conn->sx_dev->dv_armed--;
		if (conn->sx_s_unacked)
			ibv_ack_cq_events(conn->sx_scq, conn->sx_s_unacked);
		ibv_destroy_cq(conn->sx_scq);
	}
	if (conn->sx_cq) {
		if (conn->sx_armed) /* its event, if any, goes with the CQ */
			conn->sx_dev->dv_armed--;
		if (conn->sx_unacked_events)
			ibv_ack_cq_events(conn->sx_cq, conn->sx_unacked_events);
		ibv_destroy_cq(conn->sx_cq);
	}
	if (conn->sx_recvs)
		for (i = 0; i < conn->sx_nrecvs; i++)
			svc_buf_put(conn->sx_dev, &conn->sx_recvs[i].rc_mem, true);
	if (conn->sx_dev)
		svc_pool_trim(conn->sx_dev);
	svc_stats_conn_close(conn->sx_svc, conn->sx_stats);
	svc_capture_conn_close(conn);
	svc_host_put(conn->sx_svc, conn->sx_host); /* svc_host_admit() */
	free(conn->sx_recvs);
	free(conn);
}

static void svc_conn_handle_wc(struct svc_conn *conn, const struct ibv_wc *wc)
{
	struct rpcrdma_cqe *cqe = rpcrdma_cqe_of(wc);

	/* A worker may have posted it (svc_send_post_worker()). */
	if (cqe)
		SVC_TSAN_ACQUIRE(cqe);
	if (wc->status != IBV_WC_SUCCESS && wc->status != IBV_WC_WR_FLUSH_ERR &&
	    !conn->sx_closing) {
		svc_log(conn->sx_svc, "conn %u: completion error %s (type %u id %u)",
			conn->sx_id_num, ibv_wc_status_str(wc->status),
			cqe ? cqe->ce_type : 0, cqe ? cqe->ce_id : 0);
	}
	/* Unsignalled work requests (chained RDMA Reads and Writes) carry no
	 * tag; they complete only as flushes, which need no action. */
	switch (cqe ? cqe->ce_type : 0) {
	case RPCRDMA_CQE_RECV: {
		struct svc_recv *rc = rpcrdma_container_of(cqe, struct svc_recv, rc_cqe);

		conn->sx_recvs_posted--;
		conn->sx_recv_seen = true; /* not idle (svc_conn_expire_idle()) */
		SVC_INC(conn->sx_svc, recv_in_use, 1);
		svc_recv_complete(rc, wc);
		break;
	}
	case RPCRDMA_CQE_READ:
		svc_read_complete(rpcrdma_container_of(cqe, struct svc_call, cc_cqe), wc);
		break;
	case RPCRDMA_CQE_SEND:
		svc_send_complete(rpcrdma_container_of(cqe, struct svc_call, cc_cqe), wc);
		break;
	case RPCRDMA_CQE_BC_SEND: /* backchannel hook */
		svc_bc_send_complete(conn, cqe, wc);
		break;
	default:
		break;
	}
	if (wc->status != IBV_WC_SUCCESS && !conn->sx_closing)
		svc_conn_disconnected(conn);
}

int svc_conn_arm(struct svc_conn *conn)
{
	if (ibv_req_notify_cq(conn->sx_cq, 0))
		return -EIO;
	if (!conn->sx_armed) {
		conn->sx_armed = true;
		conn->sx_dev->dv_armed++;
	}
	return 0;
}

static bool svc_conn_send_awaited(const struct svc_conn *conn)
{
	const struct svc_dev *dev = conn->sx_dev;

	return dev->dv_worker_posts || conn->sx_closing || conn->sx_reads_out ||
	       conn->sx_sqwait_head || dev->dv_rwait_head || dev->dv_cwait_head ||
	       svc_bc_busy(conn);
}

bool svc_conn_send_arm(struct svc_conn *conn, uint64_t now_ms)
{
	if (conn->sx_sarmed || !conn->sx_scq || conn->sx_scq == conn->sx_cq ||
	    conn->sx_svc->sv_cfg.sc_poll)
		return false;
	if (!svc_conn_send_awaited(conn)) {
		if (!conn->sx_calls_out) {
			conn->sx_lazy_ms = 0;
			return false;
		}
		/* Only replies out: the next wake-up reaps them, or a
		 * later look at this clock arms the CQ. */
		if (!conn->sx_lazy_ms) {
			conn->sx_lazy_ms = now_ms ? now_ms : 1;
			conn->sx_grp->gr_lazy_sends = true;
			return false;
		}
		if (now_ms - conn->sx_lazy_ms < SVC_SEND_REAP_MS) {
			conn->sx_grp->gr_lazy_sends = true;
			return false;
		}
	}
	if (ibv_req_notify_cq(conn->sx_scq, 0))
		return false;
	conn->sx_sarmed = true;
	conn->sx_lazy_ms = 0;
	conn->sx_dev->dv_armed++;
	return true;
}

/* An event of @cq was read: it is no longer armed (@armed), and events
 * are acknowledged 16 at a time (@unacked). */
static void svc_cq_event_read(struct svc_dev *dev, struct ibv_cq *cq, bool *armed,
			      unsigned *unacked)
{
	if (*armed) {
		*armed = false;
		dev->dv_armed--;
	}
	if (++*unacked >= 16) {
		ibv_ack_cq_events(cq, *unacked);
		*unacked = 0;
	}
}

void svc_dev_cq_event(struct svc_dev *dev)
{
	struct ibv_cq *cq;
	void *ctx;
	unsigned rearmed = 0;

	/* Every connection of the device shares the channel: read events,
	 * each naming its CQ's connection, while a CQ armed before this call
	 * may still have raised one.  An armed CQ raises at most one event,
	 * so once none of those is left the channel is empty (but for the
	 * rare event of a CQ re-armed here, found by its second drain and
	 * read on the next wake-up), and the read that would only return
	 * EAGAIN, a system call per wake-up with one connection, is not
	 * made.  The first read is always made: the channel is readable, and
	 * a count gone wrong must not leave a readable channel unread (epoll
	 * would report it again at once, forever). */
	for (bool first = true; first || dev->dv_armed > rearmed; first = false) {
		struct svc_conn *conn;

		if (ibv_get_cq_event(dev->dv_channel, &cq, &ctx))
			break;
		conn = ctx;
		if (svc_conn_split_cq(conn) && cq == conn->sx_scq)
			svc_cq_event_read(dev, cq, &conn->sx_sarmed, &conn->sx_s_unacked);
		else
			svc_cq_event_read(dev, cq, &conn->sx_armed, &conn->sx_unacked_events);
		/* Drain first, posting the replies, and only then re-arm
		 * (a system call with Soft-RoCE): the re-arm is off the
		 * path of the replies.  Completions that came between the
		 * drain and the arm raise no event; the second drain finds
		 * them.  A spinning run loop polls every CQ anyway: left
		 * unarmed, the CQ costs no more events. */
		svc_conn_cq_event_poll(conn);
		if (!conn->sx_svc->sv_cfg.sc_poll && !conn->sx_reap) {
			if (!conn->sx_armed && !svc_conn_arm(conn))
				rearmed++;
			if (svc_conn_send_arm(conn, svc_now_ms()))
				rearmed++;
			svc_conn_cq_event_poll(conn);
		}
	}
}

void svc_conn_cq_event_poll(struct svc_conn *conn)
{
	struct svc_group *grp = conn->sx_grp;
	struct ibv_wc wc[SVC_POLL_BATCH];
	int n = 0, i, budget = SVC_POLL_BUDGET;

	/* Drain, at most a few batches at a time so one busy connection does
	 * not starve the others: one that still has completions is marked and
	 * polled again by the run loop before it sleeps.  A connection that
	 * becomes reapable is freed by the run loop only after this, so conn
	 * stays valid here. */
	conn->sx_more = false;
	/* The send CQ first: the contexts its completions give back serve
	 * the calls the Receives bring. */
	if (svc_conn_split_cq(conn)) {
		while ((n = rpcrdma_verbs_poll(conn->sx_scq, SVC_POLL_BATCH, wc)) > 0) {
			grp->gr_post_batch = true;
			for (i = 0; i < n; i++)
				svc_conn_handle_wc(conn, &wc[i]);
			svc_conn_flush_recvs(conn);
			svc_send_flush(grp);
			if (n < SVC_POLL_BATCH)
				break;
		}
	}
	while (budget-- > 0 && (n = rpcrdma_verbs_poll(conn->sx_cq, SVC_POLL_BATCH, wc)) > 0) {
		/* Replies made during this batch (calls served on this
		 * thread, error replies) are chained and posted together. */
		grp->gr_post_batch = true;
		for (i = 0; i < n; i++) {
			svc_conn_handle_wc(conn, &wc[i]);
			if (conn->sx_refill_count >= SVC_REFILL_BATCH)
				svc_conn_flush_recvs(conn);
		}
		/* Receives freed by this batch go back with one chained post,
		 * before the next batch: while calls keep arriving the drain
		 * may last, and the Requester must not run out of Receives.
		 * They go before the replies, whose grants count on them. */
		svc_conn_flush_recvs(conn);
		svc_send_flush(grp);
		/* A short batch emptied the CQ: what comes after it raises
		 * an event (the drain after arming) or waits for the next. */
		if (n < SVC_POLL_BATCH)
			break;
	}
	/* Only a drain stopped by its budget, the last batch full, leaves
	 * completions behind. */
	if (n == SVC_POLL_BATCH) {
		conn->sx_more = true;
		conn->sx_grp->gr_more = true;
	}
	svc_conn_grow_credits(conn);
	/* The calls of this drain go to the workers together. */
	svc_work_flush(conn->sx_grp);
}

uint64_t svc_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

void svc_conn_expire_handshakes(struct svc_group *grp, uint64_t now_ms)
{
	struct rpcrdma_svc *svc = grp->gr_svc;
	struct svc_conn *conn;

	for (conn = grp->gr_conns; conn && grp->gr_handshakes; conn = conn->sx_next) {
		if (conn->sx_established || conn->sx_closing ||
		    now_ms - conn->sx_accepted_ms < SVC_HANDSHAKE_MS)
			continue;
		svc_log(svc, "conn %u: not established %u s after accept: closing",
			conn->sx_id_num, SVC_HANDSHAKE_MS / 1000u);
		svc_conn_disconnected(conn);
	}
}

/* The idle scan's period for a timeout of @sec seconds. */
static uint64_t svc_idle_period_ms(uint32_t sec)
{
	uint64_t p = (uint64_t)sec * 1000u / 4u;

	return p < SVC_IDLE_SCAN_MIN_MS ? SVC_IDLE_SCAN_MIN_MS : p;
}

void svc_conn_idle_arm(struct svc_group *grp, uint64_t now_ms)
{
	uint32_t sec = grp->gr_svc->sv_cfg.sc_idle_timeout;

	if (sec && sec != RPCRDMA_SVC_IDLE_NEVER && !grp->gr_idle_next_ms)
		grp->gr_idle_next_ms = now_ms + svc_idle_period_ms(sec);
}

bool svc_conn_busy(const struct svc_conn *conn)
{
	/* A message received and not yet given back (being served, or
	 * waiting for a context) holds its Receive: not all are posted. */
	return conn->sx_calls_out || conn->sx_reads_out || conn->sx_sqwait_head ||
	       conn->sx_recvs_posted + conn->sx_refill_count < conn->sx_nrecvs ||
	       svc_bc_busy(conn);
}

void svc_conn_expire_idle(struct svc_group *grp, uint64_t now_ms)
{
	struct rpcrdma_svc *svc = grp->gr_svc;
	uint32_t sec = svc->sv_cfg.sc_idle_timeout;
	uint64_t limit = (uint64_t)sec * 1000u;
	struct svc_conn *conn;

	if (!grp->gr_idle_next_ms || now_ms < grp->gr_idle_next_ms)
		return;
	grp->gr_idle_next_ms = 0;
	if (!sec || sec == RPCRDMA_SVC_IDLE_NEVER)
		return;
	for (conn = grp->gr_conns; conn; conn = conn->sx_next) {
		if (conn->sx_closing)
			continue;
		if (conn->sx_recv_seen) {
			conn->sx_recv_seen = false;
			conn->sx_idle_ms = now_ms;
			continue;
		}
		if (!conn->sx_established || now_ms - conn->sx_idle_ms < limit ||
		    svc_conn_busy(conn))
			continue;
		if (svc->sv_conn_state && svc->sv_conn_state(conn->sx_id_num,
							     svc->sv_conn_state_arg))
			continue;
		SVC_XINC(svc, conns_idle_closed, SVC_XPRT_RDMA, 1);
		if (svc->sv_cfg.sc_verbose || atomic_load(&svc->sv_nconns) <= 64)
			svc_log(svc, "conn %u: idle for %llu s (--idle-timeout %u): closing",
				conn->sx_id_num, (unsigned long long)((now_ms - conn->sx_idle_ms) / 1000u),
				sec);
		svc_conn_disconnected(conn);
	}
	if (grp->gr_conns)
		svc_conn_idle_arm(grp, now_ms);
}

int rpcrdma_svc_set_conn_state(struct rpcrdma_svc *svc, rpcrdma_svc_conn_state_fn fn,
			       void *arg)
{
	svc->sv_conn_state = fn;
	svc->sv_conn_state_arg = arg;
	return 0;
}

uint32_t rpcrdma_svc_req_conn_id(const struct rpcrdma_svc_req *req)
{
	const struct svc_call *cc = req->rq_xprt;

	if (!cc)
		return 0;
	if (cc->cc_conn)
		return cc->cc_conn->sx_id_num;
	return cc->cc_tconn ? svc_tcp_conn_id(cc) : 0;
}

bool rpcrdma_svc_req_ddp(const struct rpcrdma_svc_req *req)
{
	const struct svc_call *cc = req->rq_xprt;

	/* A request without a transport (a unit test's) is taken as RDMA's,
	 * the library's first transport. */
	return !cc || !cc->cc_xprt || cc->cc_xprt->xc_ddp;
}

void svc_conn_reap(struct svc_group *grp)
{
	struct rpcrdma_svc *svc = grp->gr_svc;
	struct svc_conn **pp = &grp->gr_conns, *conn;

	grp->gr_reap_wait = false;
	while ((conn = *pp)) {
		if (!conn->sx_reap) {
			pp = &conn->sx_next;
			continue;
		}
		if (atomic_load_explicit(&conn->sx_worker_posting, memory_order_acquire)) {
			/* A worker is still inside its post: it leaves within
			 * moments, and touches nothing of ours after. */
			grp->gr_reap_wait = true;
			pp = &conn->sx_next;
			continue;
		}
		*pp = conn->sx_next;
		atomic_fetch_sub(&grp->gr_nconns, 1);
		atomic_fetch_sub(&svc->sv_nconns, 1);
		SVC_XDEC(svc, conns_open, SVC_XPRT_RDMA, 1);
		if (svc->sv_cfg.sc_verbose || atomic_load(&svc->sv_nconns) < 64)
			svc_log(svc, "conn %u: closed, all contexts returned", conn->sx_id_num);
		svc_conn_destroy(conn);
	}
}

void svc_conn_cm_event(struct rpcrdma_svc *svc, struct svc_conn *conn,
		       enum rdma_cm_event_type type)
{
	switch (type) {
	case RDMA_CM_EVENT_ESTABLISHED:
		if (conn && !conn->sx_established) {
			conn->sx_established = true;
			if (!conn->sx_closing && conn->sx_accepted_ms)
				conn->sx_grp->gr_handshakes--;
		}
		break;
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		if (!conn) {
			/* The listener's device is gone: nothing can be
			 * accepted on it again.  Close every connection and
			 * stop the run loop, which reports the cause;
			 * rpcrdma_svc_destroy() drains. */
			svc_log(svc, "listener: device removed: closing all connections, stopping");
			svc->sv_stop_cause = -ENODEV;
			/* The listener's thread (group 0) closes its own; the
			 * other groups' are closed when their run loops have
			 * stopped (rpcrdma_svc_run() drains every group). */
			for (conn = svc->sv_groups[0].gr_conns; conn; conn = conn->sx_next)
				svc_conn_disconnected(conn);
			rpcrdma_svc_stop(svc);
			break;
		}
		/* fall through */
	case RDMA_CM_EVENT_DISCONNECTED:
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_REJECTED:
		if (conn)
			svc_conn_disconnected(conn);
		break;
	default:
		break;
	}
}
