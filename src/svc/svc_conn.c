// SPDX-License-Identifier: MIT
/*
 * svc_conn.c - one Responder connection: accept (with RFC 8797 private
 * data), the registered slab and its pools, completion dispatch, teardown.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <fcntl.h>

#include "svc/svc_internal.h"

#define SVC_EXTRA_RECVS 8u /* beyond the credit grant: headroom for bad peers */
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

/* Raise the high-water mark @high to @in_use. */
static void svc_note_high(_Atomic uint64_t *high, uint64_t in_use)
{
	uint64_t h = atomic_load_explicit(high, memory_order_relaxed);

	while (in_use > h && !atomic_compare_exchange_weak(high, &h, in_use))
		;
}

struct svc_call *svc_call_get(struct svc_conn *conn)
{
	struct rpcrdma_svc *svc = conn->sx_svc;
	struct svc_call *cc = conn->sx_call_free;

	if (!cc)
		return NULL;
	conn->sx_call_free = cc->cc_next;
	cc->cc_next = NULL;
	conn->sx_calls_out++;
	svc_note_high(&svc->sv_ct.ctx_high, SVC_INC(svc, ctx_in_use, 1) + 1);
	return cc;
}

/*
 * Reply room a call's chunks ask for: the largest reply the Requester can
 * take is its Write chunks' data plus the rest inline or in the Reply
 * chunk, whichever is larger (RFC 8166 3.5.3).
 */
static uint64_t svc_call_reply_room(const struct svc_call *cc)
{
	const struct rpcrdma_hdr *hdr = &cc->cc_hdr;
	uint64_t room = cc->cc_conn->sx_inline_send;
	uint32_t i;

	if (hdr->rh_has_reply && hdr->rh_reply.rc_length > room)
		room = hdr->rh_reply.rc_length;
	for (i = 0; i < hdr->rh_nwrite; i++)
		room += RPCRDMA_XDR_ALIGN(hdr->rh_write[i].rc_length);
	return room;
}

/* True when the decoded call in @cc needs a large call context. */
bool svc_call_needs_large(const struct svc_call *cc)
{
	const struct rpcrdma_hdr *hdr = &cc->cc_hdr;
	uint32_t nwr = 1; /* the Send */

	/* Read chunk data is rebuilt into the call buffer; an inline call
	 * always fits the small one (it is as large as a Receive). */
	if (hdr->rh_nread > 0)
		return true;
	/* Reply data goes by RDMA Write only into the first Write chunk and
	 * the Reply chunk, one work request per segment. */
	if (hdr->rh_nwrite > 0)
		nwr += hdr->rh_write[0].rc_nsegs;
	if (hdr->rh_has_reply)
		nwr += hdr->rh_reply.rc_nsegs;
	return nwr > SVC_SMALL_MAX_WR ||
	       svc_call_reply_room(cc) > cc->cc_conn->sx_inline_recv * 2u;
}

/* Send-queue work requests @cc may post at once. */
uint32_t svc_call_max_wr(const struct svc_call *cc)
{
	return cc->cc_large ? SVC_CTX_MAX_WR : SVC_SMALL_MAX_WR;
}

/* Give @cc a large context and switch it to its buffers; false: none free. */
bool svc_large_attach(struct svc_call *cc)
{
	struct svc_conn *conn = cc->cc_conn;
	struct rpcrdma_svc *svc = conn->sx_svc;
	struct svc_large *lg = conn->sx_large_free;

	if (!lg)
		return false;
	conn->sx_large_free = lg->lg_next;
	lg->lg_next = NULL;
	conn->sx_large_out++;
	svc_note_high(&svc->sv_ct.large_high, SVC_INC(svc, large_in_use, 1) + 1);
	cc->cc_large = lg;
	cc->cc_call = lg->lg_call;
	cc->cc_call_cap = conn->sx_large_cap;
	cc->cc_reply = lg->lg_reply;
	cc->cc_reply_cap = conn->sx_large_cap;
	return true;
}

/* Give the large context back and return to the small buffers. */
static void svc_large_detach(struct svc_call *cc)
{
	struct svc_conn *conn = cc->cc_conn;
	struct svc_large *lg = cc->cc_large;

	cc->cc_large = NULL;
	cc->cc_call = cc->cc_small_call;
	cc->cc_call_cap = conn->sx_inline_recv;
	cc->cc_reply = cc->cc_small_reply;
	cc->cc_reply_cap = conn->sx_inline_recv * 2u;
	lg->lg_next = conn->sx_large_free;
	conn->sx_large_free = lg;
	conn->sx_large_out--;
	SVC_DEC(conn->sx_svc, large_in_use, 1);
}

/* Queue @cc, holding the message @rc, until a large context is free. */
void svc_large_wait(struct svc_call *cc, struct svc_recv *rc)
{
	struct svc_conn *conn = cc->cc_conn;

	cc->cc_state = CC_WAITING;
	cc->cc_wait_rc = rc;
	cc->cc_next = NULL;
	if (conn->sx_lwait_tail)
		conn->sx_lwait_tail->cc_next = cc;
	else
		conn->sx_lwait_head = cc;
	conn->sx_lwait_tail = cc;
	SVC_INC(conn->sx_svc, large_waits, 1);
}

/* Closing: calls waiting for a large context are dropped. */
static void svc_conn_drop_large_waiters(struct svc_conn *conn)
{
	struct svc_call *cc = conn->sx_lwait_head, *next;

	conn->sx_lwait_head = conn->sx_lwait_tail = NULL;
	for (; cc; cc = next) {
		next = cc->cc_next;
		cc->cc_wait_rc = NULL; /* its Receive is held until the connection goes */
		SVC_INC(conn->sx_svc, drops, 1);
		svc_call_put(cc);
	}
}

void svc_call_put(struct svc_call *cc)
{
	struct svc_conn *conn = cc->cc_conn;
	struct svc_recv *rc;
	bool had_large = cc->cc_large != NULL;

	if (had_large)
		svc_large_detach(cc);
	cc->cc_state = CC_FREE;
	cc->cc_failed = false;
	cc->cc_reads_pending = 0;
	cc->cc_wait_rc = NULL;
	cc->cc_next = conn->sx_call_free;
	conn->sx_call_free = cc;
	conn->sx_calls_out--;
	SVC_DEC(conn->sx_svc, ctx_in_use, 1);

	if (conn->sx_closing) {
		svc_conn_maybe_destroy(conn);
		return;
	}
	/* The oldest call waiting for a large context takes the one freed. */
	if (had_large && conn->sx_lwait_head) {
		struct svc_call *w = conn->sx_lwait_head;

		conn->sx_lwait_head = w->cc_next;
		if (!conn->sx_lwait_head)
			conn->sx_lwait_tail = NULL;
		w->cc_next = NULL;
		rc = w->cc_wait_rc;
		w->cc_wait_rc = NULL;
		svc_large_attach(w); /* cannot fail: takes the one just freed */
		svc_recv_continue(rc, w);
		if (conn->sx_closing)
			return;
	}
	/* A message waiting for a call context takes this one. */
	rc = conn->sx_wait_head;
	if (rc) {
		conn->sx_wait_head = rc->rc_next;
		if (!conn->sx_wait_head)
			conn->sx_wait_tail = NULL;
		svc_recv_start(rc, svc_call_get(conn));
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

/*
 * Carve the registered slab into receive buffers, small call contexts
 * (call buffer of the inline size, reply buffer of twice that, reply
 * header) and large call contexts (call and reply buffers of the largest
 * payload plus slack).  Zero sx_ncalls / sx_nlarge take the configured
 * numbers.
 */
int svc_conn_alloc_pools(struct svc_conn *conn)
{
	const struct rpcrdma_svc_config *cfg = &conn->sx_svc->sv_cfg;
	uint32_t small_call = conn->sx_inline_recv, small_reply = conn->sx_inline_recv * 2u;
	size_t per_small = (size_t)small_call + small_reply + SVC_HDR_BUF;
	uint8_t *p;
	uint32_t i;

	if (!conn->sx_ncalls)
		conn->sx_ncalls = cfg->sc_small_contexts ? cfg->sc_small_contexts : conn->sx_credits;
	if (!conn->sx_nlarge)
		conn->sx_nlarge = cfg->sc_call_contexts;
	conn->sx_large_cap = cfg->sc_max_payload + SVC_PAYLOAD_SLACK;
	conn->sx_slab_len = (size_t)conn->sx_nrecvs * conn->sx_inline_recv +
			    (size_t)conn->sx_ncalls * per_small +
			    (size_t)conn->sx_nlarge * conn->sx_large_cap * 2;
	if (posix_memalign((void **)&conn->sx_slab, 4096, conn->sx_slab_len))
		return -ENOMEM;
	conn->sx_recvs = calloc(conn->sx_nrecvs, sizeof(*conn->sx_recvs));
	conn->sx_calls = calloc(conn->sx_ncalls, sizeof(*conn->sx_calls));
	conn->sx_larges = calloc(conn->sx_nlarge ? conn->sx_nlarge : 1, sizeof(*conn->sx_larges));
	if (!conn->sx_recvs || !conn->sx_calls || !conn->sx_larges)
		return -ENOMEM;
	conn->sx_mr = rpcrdma_verbs_reg_mr(conn->sx_pd, conn->sx_slab, conn->sx_slab_len,
				 IBV_ACCESS_LOCAL_WRITE);
	if (!conn->sx_mr)
		return -errno;
	SVC_INC(conn->sx_svc, mrs_open, 1);
	SVC_INC(conn->sx_svc, mr_bytes, conn->sx_slab_len);

	p = conn->sx_slab;
	for (i = 0; i < conn->sx_nlarge; i++) {
		struct svc_large *lg = &conn->sx_larges[i];

		lg->lg_call = p;
		p += conn->sx_large_cap;
		lg->lg_reply = p;
		p += conn->sx_large_cap;
		lg->lg_next = i + 1 < conn->sx_nlarge ? &conn->sx_larges[i + 1] : NULL;
	}
	conn->sx_large_free = conn->sx_nlarge ? &conn->sx_larges[0] : NULL;
	for (i = 0; i < conn->sx_ncalls; i++) {
		struct svc_call *cc = &conn->sx_calls[i];

		cc->cc_cqe.ce_type = 0; /* set per post: READ or SEND */
		cc->cc_conn = conn;
		cc->cc_small_call = p;
		cc->cc_call = p;
		cc->cc_call_cap = small_call;
		p += small_call;
		cc->cc_small_reply = p;
		cc->cc_reply = p;
		cc->cc_reply_cap = small_reply;
		p += small_reply;
		cc->cc_hdrbuf = p;
		p += SVC_HDR_BUF;
		cc->cc_next = i + 1 < conn->sx_ncalls ? &conn->sx_calls[i + 1] : NULL;
	}
	conn->sx_call_free = &conn->sx_calls[0];
	for (i = 0; i < conn->sx_nrecvs; i++) {
		struct svc_recv *rc = &conn->sx_recvs[i];

		rc->rc_cqe.ce_type = RPCRDMA_CQE_RECV;
		rc->rc_cqe.ce_id = i;
		rc->rc_conn = conn;
		rc->rc_buf = p;
		p += conn->sx_inline_recv;
		rc->rc_sge.addr = (uintptr_t)rc->rc_buf;
		rc->rc_sge.length = conn->sx_inline_recv;
		rc->rc_sge.lkey = conn->sx_mr->lkey;
		rc->rc_wr.wr_id = (uintptr_t)&rc->rc_cqe;
		rc->rc_wr.sg_list = &rc->rc_sge;
		rc->rc_wr.num_sge = 1;
	}
	return 0;
}

static int svc_conn_create_qp(struct svc_conn *conn,
			      const struct ibv_device_attr *dev)
{
	struct ibv_qp_init_attr attr;
	uint32_t send_wr = conn->sx_nlarge * SVC_CTX_MAX_WR +
			   conn->sx_ncalls * SVC_SMALL_MAX_WR + 1;
	struct rdma_cm_id *id = conn->sx_id;

	if (send_wr > (uint32_t)dev->max_qp_wr)
		send_wr = (uint32_t)dev->max_qp_wr;
	conn->sx_pd = ibv_alloc_pd(id->verbs);
	if (!conn->sx_pd)
		return -ENOMEM;
	conn->sx_channel = ibv_create_comp_channel(id->verbs);
	if (!conn->sx_channel)
		return -errno;
	if (fcntl(conn->sx_channel->fd, F_SETFL,
		  fcntl(conn->sx_channel->fd, F_GETFL) | O_NONBLOCK) < 0)
		return -errno;
	conn->sx_cq = ibv_create_cq(id->verbs, (int)(send_wr + conn->sx_credits +
						     SVC_EXTRA_RECVS),
				    conn, conn->sx_channel, 0);
	if (!conn->sx_cq)
		return -errno;
	if (ibv_req_notify_cq(conn->sx_cq, 0))
		return -EIO;

	memset(&attr, 0, sizeof(attr));
	attr.send_cq = conn->sx_cq;
	attr.recv_cq = conn->sx_cq;
	attr.qp_type = IBV_QPT_RC;
	attr.cap.max_send_wr = send_wr;
	attr.cap.max_recv_wr = conn->sx_nrecvs;
	attr.cap.max_send_sge = RPCRDMA_RW_MAX_SGE;
	attr.cap.max_recv_sge = 1;
	if (rdma_create_qp(id, conn->sx_pd, &attr))
		return -errno;
	if (conn->sx_svc->sv_cfg.sc_verbose)
		svc_log(conn->sx_svc, "conn %u: QP send queue %u (asked %u), receive queue %u, send sge %u",
			conn->sx_id_num, attr.cap.max_send_wr, send_wr, attr.cap.max_recv_wr,
			attr.cap.max_send_sge);
	return 0;
}

int svc_conn_accept(struct rpcrdma_svc *svc, struct rdma_cm_event *ev)
{
	const struct rpcrdma_svc_config *cfg = &svc->sv_cfg;
	struct rdma_cm_id *id = ev->id;
	struct rdma_conn_param param;
	struct rpcrdma_cm_private peer, ours;
	struct ibv_device_attr dev;
	struct epoll_event eev;
	uint8_t pdata[RPCRDMA_CM_PRIVATE_BYTES];
	struct svc_conn *conn;
	uint32_t peer_recv = 0;
	int rc;

	if (cfg->sc_accept && !cfg->sc_accept(rdma_get_peer_addr(id), cfg->sc_accept_arg)) {
		svc_log(svc, "refused a connection: address not allowed");
		return -EACCES;
	}
	if (ibv_query_device(id->verbs, &dev))
		return -EIO;

	conn = calloc(1, sizeof(*conn));
	if (!conn)
		return -ENOMEM;
	conn->sx_svc = svc;
	conn->sx_id = id;
	conn->sx_id_num = ++svc->sv_conn_ids;
	conn->sx_credits = cfg->sc_credits;
	conn->sx_inline_recv = cfg->sc_inline_size;
	conn->sx_nrecvs = conn->sx_credits + SVC_EXTRA_RECVS;
	conn->sx_ncalls = cfg->sc_small_contexts;
	conn->sx_nlarge = cfg->sc_call_contexts;

	memset(&peer, 0, sizeof(peer));
	rc = rpcrdma_wire_decode_private(ev->param.conn.private_data,
					 ev->param.conn.private_data_len, &peer);
	if (rc == 0) {
		peer_recv = peer.cp_recv_size;
		conn->sx_peer_rsi = peer.cp_flags & RPCRDMA_CM_FLAG_RSI;
	}
	conn->sx_inline_send = rpcrdma_wire_inline_threshold(cfg->sc_inline_size,
							     peer_recv);

	rc = svc_conn_create_qp(conn, &dev);
	if (rc)
		goto out_err;
	rc = svc_conn_alloc_pools(conn);
	if (rc)
		goto out_err;
	rc = svc_conn_post_all_recvs(conn);
	if (rc)
		goto out_err;

	memset(&eev, 0, sizeof(eev));
	eev.events = EPOLLIN;
	eev.data.ptr = conn;
	if (epoll_ctl(svc->sv_epoll, EPOLL_CTL_ADD, conn->sx_channel->fd, &eev)) {
		rc = -errno;
		goto out_err;
	}
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
	param.initiator_depth = (uint8_t)min_u32(ev->param.conn.initiator_depth,
						 (uint32_t)dev.max_qp_init_rd_atom);
	param.responder_resources = (uint8_t)min_u32(ev->param.conn.responder_resources,
						     (uint32_t)dev.max_qp_rd_atom);
	param.rnr_retry_count = 7;
	param.flow_control = 1;
	if (rdma_accept(id, &param)) {
		rc = -errno;
		epoll_ctl(svc->sv_epoll, EPOLL_CTL_DEL, conn->sx_channel->fd, NULL);
		id->context = NULL;
		goto out_err;
	}
	conn->sx_next = svc->sv_conns;
	svc->sv_conns = conn;
	SVC_INC(svc, connections, 1);
	SVC_INC(svc, conns_open, 1);
	svc_log(svc, "conn %u: accepted; peer inline receive %u (%s), our inline %u, "
		"credits %u, read depth %u",
		conn->sx_id_num, conn->sx_inline_send,
		!peer_recv ? "no private data" :
		conn->sx_peer_rsi ? "private data, Send With Invalidate ok" : "private data",
		conn->sx_inline_recv, conn->sx_credits, param.initiator_depth);
	return 0;

out_err:
	svc_log(svc, "conn %u: accept failed: %s", conn->sx_id_num, strerror(-rc));
	conn->sx_id = NULL; /* the caller rejects and destroys the cm_id */
	if (id->qp)
		rdma_destroy_qp(id);
	conn->sx_recvs_posted = 0;
	svc_conn_destroy(conn);
	return rc;
}

void svc_conn_disconnected(struct svc_conn *conn)
{
	struct svc_recv *rc;

	if (!conn->sx_closing) {
		conn->sx_closing = true;
		svc_log(conn->sx_svc, "conn %u: disconnected", conn->sx_id_num);
		rpcrdma_verbs_disconnect(conn->sx_id); /* moves the QP to error: posted work flushes */
	}
	/* Messages waiting for a call context are dropped with the connection. */
	while ((rc = conn->sx_wait_head)) {
		conn->sx_wait_head = rc->rc_next;
		SVC_INC(conn->sx_svc, drops, 1);
	}
	conn->sx_wait_tail = NULL;
	svc_conn_maybe_destroy(conn);
}

/* A closing connection can go once every posted Receive has flushed and
 * every call context is back in its pool; the run loop frees it. */
void svc_conn_maybe_destroy(struct svc_conn *conn)
{
	if (!conn->sx_closing)
		return;
	if (conn->sx_lwait_head)
		svc_conn_drop_large_waiters(conn);
	if (!conn->sx_recvs_posted && !conn->sx_calls_out)
		conn->sx_reap = true;
}

/* Release everything; the caller made sure nothing is posted any more. */
void svc_conn_destroy(struct svc_conn *conn)
{
	uint32_t held = conn->sx_nrecvs - conn->sx_recvs_posted;

	/* Receive buffers not posted were counted as held; return them. */
	if (conn->sx_recvs && conn->sx_closing)
		SVC_DEC(conn->sx_svc, recv_in_use, held);
	if (conn->sx_id) {
		if (conn->sx_id->qp)
			rdma_destroy_qp(conn->sx_id);
		rdma_destroy_id(conn->sx_id);
	}
	if (conn->sx_cq) {
		if (conn->sx_unacked_events)
			ibv_ack_cq_events(conn->sx_cq, conn->sx_unacked_events);
		ibv_destroy_cq(conn->sx_cq);
	}
	if (conn->sx_channel)
		ibv_destroy_comp_channel(conn->sx_channel);
	if (conn->sx_mr) {
		rpcrdma_verbs_dereg_mr(conn->sx_mr);
		SVC_DEC(conn->sx_svc, mrs_open, 1);
		SVC_DEC(conn->sx_svc, mr_bytes, conn->sx_slab_len);
	}
	if (conn->sx_pd)
		ibv_dealloc_pd(conn->sx_pd);
	free(conn->sx_slab);
	free(conn->sx_recvs);
	free(conn->sx_calls);
	free(conn->sx_larges);
	free(conn);
}

static void svc_conn_handle_wc(struct svc_conn *conn, const struct ibv_wc *wc)
{
	struct rpcrdma_cqe *cqe = rpcrdma_cqe_of(wc);

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
	default:
		break;
	}
	if (wc->status != IBV_WC_SUCCESS && !conn->sx_closing)
		svc_conn_disconnected(conn);
}

void svc_conn_cq_event(struct svc_conn *conn)
{
	struct ibv_cq *cq;
	void *ctx;

	if (ibv_get_cq_event(conn->sx_channel, &cq, &ctx) == 0) {
		if (++conn->sx_unacked_events >= 16) {
			ibv_ack_cq_events(conn->sx_cq, conn->sx_unacked_events);
			conn->sx_unacked_events = 0;
		}
		ibv_req_notify_cq(conn->sx_cq, 0);
	}
	svc_conn_cq_event_poll(conn);
}

void svc_conn_cq_event_poll(struct svc_conn *conn)
{
	struct ibv_wc wc[16];
	int n, i;

	/* Drain; a connection that becomes reapable is freed by the run loop
	 * only after this batch of events, so conn stays valid here. */
	while ((n = rpcrdma_verbs_poll(conn->sx_cq, 16, wc)) > 0) {
		for (i = 0; i < n; i++) {
			svc_conn_handle_wc(conn, &wc[i]);
			if (conn->sx_refill_count >= SVC_REFILL_BATCH)
				svc_conn_flush_recvs(conn);
		}
		/* Receives freed by this batch go back with one chained post,
		 * before the next batch: while calls keep arriving the drain
		 * may last, and the Requester must not run out of Receives. */
		svc_conn_flush_recvs(conn);
	}
}

void svc_conn_reap(struct rpcrdma_svc *svc)
{
	struct svc_conn **pp = &svc->sv_conns, *conn;

	while ((conn = *pp)) {
		if (!conn->sx_reap) {
			pp = &conn->sx_next;
			continue;
		}
		*pp = conn->sx_next;
		epoll_ctl(svc->sv_epoll, EPOLL_CTL_DEL, conn->sx_channel->fd, NULL);
		SVC_DEC(svc, conns_open, 1);
		svc_log(svc, "conn %u: closed, all contexts returned", conn->sx_id_num);
		svc_conn_destroy(conn);
	}
}

void svc_conn_cm_event(struct rpcrdma_svc *svc, struct svc_conn *conn,
		       enum rdma_cm_event_type type)
{
	switch (type) {
	case RDMA_CM_EVENT_ESTABLISHED:
		if (conn)
			conn->sx_established = true;
		break;
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		if (!conn) {
			/* The listener's device is gone: nothing can be
			 * accepted on it again.  Close every connection and
			 * stop the run loop, which reports the cause;
			 * rpcrdma_svc_destroy() drains. */
			svc_log(svc, "listener: device removed: closing all connections, stopping");
			for (conn = svc->sv_conns; conn; conn = conn->sx_next)
				svc_conn_disconnected(conn);
			svc->sv_stop_cause = -ENODEV;
			atomic_store(&svc->sv_stop, true);
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
