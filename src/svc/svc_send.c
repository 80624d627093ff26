// SPDX-License-Identifier: MIT
/*
 * svc_send.c - the Responder's reply path (RFC 8166 3.5.3, 4.3.2, 4.5.3):
 * DDP-eligible result data by RDMA Write into the first Write chunk, the
 * rest inline in one Send when header + body fit the Requester's inline
 * threshold, otherwise by RDMA Write into the Reply chunk with an
 * RDMA_NOMSG header; ERR_CHUNK when it fits nowhere.  Writes are
 * unsignalled and chained before the signalled Send: one post, one
 * completion per reply.
 */
#include <errno.h>
#include <string.h>

#include "svc/svc_internal.h"

/*
 * Send With Invalidate (RFC 8797 section 5): allowed when the Requester set
 * the flag in its private data, and used only when every segment of the
 * call's chunks carries one handle, so exactly that registration goes.
 * Return: true with *@handle set when the reply may invalidate it.
 */
static bool svc_send_inv_handle(const struct svc_call *cc, uint32_t *handle)
{
	const struct rpcrdma_hdr *call = &cc->cc_hdr;
	uint32_t i;

	if (!cc->cc_conn->sx_peer_rsi || !call->rh_nsegs)
		return false;
	*handle = call->rh_segs[0].rs_handle;
	for (i = 1; i < call->rh_nsegs; i++)
		if (call->rh_segs[i].rs_handle != *handle)
			return false;
	return true;
}

/* On a worker making a reply: set once its chain is posted, when the
 * context may already be back in its pool (the Send completion is the
 * transport thread's): the worker must not look at it again. */
static __thread bool svc_worker_posted;

/*
 * On the worker (cc_by_worker): post @cc's chain cc_wr[0 .. nwr] now.  The
 * slots were taken before the reply was made (svc_send_by_worker(), as
 * many as the longest chain); the ones this chain does not use go back.
 */
static void svc_send_post_worker(struct svc_call *cc, uint32_t nwr)
{
	struct svc_conn *conn = cc->cc_conn;
	struct rpcrdma_svc *svc = conn->sx_svc;
	struct ibv_send_wr *bad = NULL, *chain;
	struct ibv_qp *qp;
	int err;

	if (atomic_load(&conn->sx_closing)) {
		cc->cc_worker_fail = SVC_WORKER_PUT;
		return;
	}
	if (cc->cc_sq_used > nwr + 1) {
		atomic_fetch_add(&conn->sx_sq_free, cc->cc_sq_used - (nwr + 1));
		cc->cc_sq_used = nwr + 1;
	}
	cc->cc_by_worker = false;
	SVC_INC(svc, worker_posts, 1);
	/* Once the Send is on the queue it may complete and @cc come back
	 * before the provider returns from the post; until this thread is
	 * out of it, the connection (its QP) is not freed. */
	atomic_fetch_add(&conn->sx_worker_posting, 1);
	/* What this thread wrote into @cc, or read from it, comes before
	 * its completion, which the transport thread handles
	 * (svc_conn_handle_wc()). */
	qp = conn->sx_id->qp;
	chain = &cc->cc_wr[0];
	SVC_TSAN_RELEASE(&cc->cc_cqe);
	err = rpcrdma_verbs_post_send(qp, chain, &bad);
	if (!err) {
		svc_worker_posted = true; /* @cc is the transport thread's now */
		atomic_fetch_sub_explicit(&conn->sx_worker_posting, 1, memory_order_release);
		return;
	}
	atomic_fetch_sub(&conn->sx_worker_posting, 1);
	/* Its Send, the chain's last, was not posted: @cc is still ours. */
	SVC_DEC(svc, worker_posts, 1);
	cc->cc_by_worker = true;
	cc->cc_worker_fail = err;
	cc->cc_worker_bad = bad ? bad : &cc->cc_wr[0];
}

void svc_call_drop(struct svc_call *cc)
{
	if (cc->cc_by_worker)
		cc->cc_worker_fail = SVC_WORKER_PUT;
	else
		svc_call_put(cc);
}

/*
 * Post cc_wr[0 .. nwr]: the chained RDMA Writes, then the Send at index
 * nwr, once the send queue has room for them; @reply: a normal reply (not
 * RDMA_ERROR), which may invalidate.
 */
static void svc_send_post(struct svc_call *cc, uint32_t nwr, bool reply)
{
	struct svc_conn *conn = cc->cc_conn;
	struct ibv_send_wr *send = &cc->cc_wr[nwr];
	uint32_t handle;

	send->next = NULL;
	send->opcode = IBV_WR_SEND;
	if (reply && svc_send_inv_handle(cc, &handle)) {
		send->opcode = IBV_WR_SEND_WITH_INV;
		send->invalidate_rkey = handle;
		SVC_INC(conn->sx_svc, send_invalidates, 1);
	}
	send->send_flags = IBV_SEND_SIGNALED;
	send->wr_id = (uintptr_t)&cc->cc_cqe;
	cc->cc_send_wr = send;
	if (nwr)
		cc->cc_wr[nwr - 1].next = send;
	cc->cc_state = CC_SENDING;
	cc->cc_cqe.ce_type = RPCRDMA_CQE_SEND;
	cc->cc_cqe.ce_id = atomic_fetch_add_explicit(&conn->sx_cqe_ids, 1,
						     memory_order_relaxed) + 1;
	if (cc->cc_by_worker) {
		svc_send_post_worker(cc, nwr);
		return;
	}
	if (conn->sx_closing) {
		svc_call_put(cc);
		return;
	}
	if (!svc_conn_sq_reserve(conn, cc, nwr + 1, false))
		return; /* svc_send_resume() posts it */
	svc_send_resume(cc);
}

/*
 * The capture records a reply when it is posted: the replies of @wr's
 * chain up to @end (the first not posted, or NULL), each with its RDMA
 * Writes.  On the transport thread, before it polls again: no context of
 * the chain can have come back yet.
 */
static void svc_send_capture_posted(struct svc_conn *conn, const struct ibv_send_wr *wr,
				    const struct ibv_send_wr *end)
{
	if (!conn->sx_capture)
		return;
	for (; wr && wr != end; wr = wr->next) {
		struct svc_call *cc;

		if (wr->opcode != IBV_WR_SEND && wr->opcode != IBV_WR_SEND_WITH_INV)
			continue;
		cc = rpcrdma_container_of((struct rpcrdma_cqe *)(uintptr_t)wr->wr_id,
					  struct svc_call, cc_cqe);
		svc_capture_chain(cc, (uint32_t)(wr - cc->cc_wr));
	}
}

/*
 * After a failed post of @chain: every call whose Send is at or after @bad
 * was not posted and gets no completion, so it is given back here, once
 * the connection is going down (no waiter may be handed buffers that a
 * posted part of a chain may still target).  A Read chain (its last work
 * request is the signalled one) not posted is one Read the call no longer
 * waits for; the call goes back once it waits for none.
 */
static void svc_send_post_failed(struct svc_conn *conn, struct ibv_send_wr *bad, int err)
{
	struct ibv_send_wr *wr, *next;
	struct svc_call *cc;

	SVC_INC(conn->sx_svc, post_errors, 1);
	svc_log(conn->sx_svc, "conn %u: post failed at %s: %s", conn->sx_id_num,
		bad->opcode == IBV_WR_RDMA_READ ? "an RDMA Read" :
		bad->opcode == IBV_WR_RDMA_WRITE ? "an RDMA Write" : "a Send",
		strerror(-err));
	svc_conn_disconnected(conn);
	for (wr = bad; wr; wr = next) {
		next = wr->next;
		if (wr->opcode == IBV_WR_RDMA_READ) {
			if (!(wr->send_flags & IBV_SEND_SIGNALED))
				continue;
			cc = rpcrdma_container_of((struct rpcrdma_cqe *)(uintptr_t)wr->wr_id,
						  struct svc_call, cc_cqe);
			cc->cc_failed = true;
			if (conn->sx_reads_out)
				conn->sx_reads_out--;
			if (!--cc->cc_reads_pending)
				svc_call_put(cc);
		} else if (wr->opcode == IBV_WR_SEND || wr->opcode == IBV_WR_SEND_WITH_INV) {
			svc_call_put(rpcrdma_container_of((struct rpcrdma_cqe *)(uintptr_t)wr->wr_id,
							  struct svc_call, cc_cqe));
		}
	}
}

/*
 * Post @chain (linked work requests of @conn) now.  On failure the
 * connection goes down and every call whose Send or signalled Read was not
 * posted is given back (svc_send_post_failed()).  Return: true when posted.
 */
static bool svc_send_post_now(struct svc_conn *conn, struct ibv_send_wr *chain)
{
	struct ibv_send_wr *bad = chain; /* should a failing post not say */
	int err;

	err = rpcrdma_verbs_post_send(conn->sx_id->qp, chain, &bad);
	svc_send_capture_posted(conn, chain, err ? bad : NULL);
	if (err) {
		svc_send_post_failed(conn, bad, err);
		return false;
	}
	return true;
}

void svc_send_submit(struct svc_conn *conn, struct ibv_send_wr *first, struct ibv_send_wr *last)
{
	struct svc_group *grp = conn->sx_grp;

	if (!grp->gr_post_batch) {
		svc_send_post_now(conn, first);
		return;
	}
	/* Chained after the connection's other work of this batch: one post
	 * (one doorbell, a system call with Soft-RoCE) for all of it. */
	if (conn->sx_post_tail)
		conn->sx_post_tail->next = first;
	else
		conn->sx_post_head = first;
	conn->sx_post_tail = last;
	if (!conn->sx_post_queued) {
		conn->sx_post_queued = true;
		conn->sx_post_next = grp->gr_post_conns;
		grp->gr_post_conns = conn;
	}
}

void svc_send_resume(struct svc_call *cc)
{
	cc->cc_state = CC_SENDING;
	svc_send_submit(cc->cc_conn, &cc->cc_wr[0], cc->cc_send_wr);
}

void svc_send_flush(struct svc_group *grp)
{
	struct svc_conn *conn;
	struct ibv_send_wr *chain;

	grp->gr_post_batch = false;
	while ((conn = grp->gr_post_conns)) {
		grp->gr_post_conns = conn->sx_post_next;
		conn->sx_post_next = NULL;
		conn->sx_post_queued = false;
		chain = conn->sx_post_head;
		conn->sx_post_head = conn->sx_post_tail = NULL;
		if (!chain)
			continue;
		if (conn->sx_closing) {
			/* Went down after these were queued: none is posted. */
			svc_send_post_failed(conn, chain, -ESHUTDOWN);
			continue;
		}
		if (svc_send_post_now(conn, chain))
			SVC_INC(grp->gr_svc, send_batches, 1);
	}
}

/* Prepare the Send at cc_wr[nwr] with SGEs: header, then @pieces. */
static void svc_send_prepare(struct svc_call *cc, uint32_t nwr, uint32_t hdr_len,
			     const struct rpcrdma_rw_piece *pieces, unsigned npieces)
{
	struct ibv_send_wr *send = &cc->cc_wr[nwr];
	struct ibv_sge *sge = &cc->cc_sge[nwr * RPCRDMA_RW_MAX_SGE];
	uint64_t bytes = hdr_len;
	unsigned i;

	memset(send, 0, sizeof(*send));
	send->sg_list = sge;
	sge[0].addr = (uintptr_t)cc->cc_hdrbuf;
	sge[0].length = hdr_len;
	sge[0].lkey = cc->cc_lkey;
	send->num_sge = 1;
	for (i = 0; i < npieces; i++) {
		if (!pieces[i].rp_len)
			continue;
		sge[send->num_sge].addr = (uintptr_t)pieces[i].rp_addr;
		sge[send->num_sge].length = pieces[i].rp_len;
		sge[send->num_sge].lkey = cc->cc_reply_lkey;
		send->num_sge++;
		bytes += pieces[i].rp_len;
	}
	SVC_XINC(cc->cc_conn->sx_svc, send_bytes, SVC_XPRT_RDMA, bytes);
}

void svc_send_rdma_error(struct svc_call *cc, uint32_t xid, uint32_t code)
{
	int len = rpcrdma_wire_encode_error(cc->cc_hdrbuf, cc->cc_hdr_cap, xid,
					    cc->cc_conn->sx_credits, code);

	if (len < 0) {
		svc_call_drop(cc);
		return;
	}
	SVC_INC(cc->cc_conn->sx_svc, rdma_errors_sent, 1);
	svc_stats_rdma_error(cc);
	svc_send_prepare(cc, 0, (uint32_t)len, NULL, 0);
	svc_send_post(cc, 0, false);
}

/* Copy the call's chunk @src into the reply header as @dst, with lengths. */
static void svc_echo_chunk(struct rpcrdma_hdr *rh, struct rpcrdma_chunk *dst,
			   const struct rpcrdma_hdr *call,
			   const struct rpcrdma_chunk *src, const uint32_t *written)
{
	uint32_t i;

	dst->rc_position = 0;
	dst->rc_first = rh->rh_nsegs;
	dst->rc_nsegs = src->rc_nsegs;
	dst->rc_length = 0;
	for (i = 0; i < src->rc_nsegs; i++) {
		struct rpcrdma_segment *seg = &rh->rh_segs[rh->rh_nsegs++];

		*seg = call->rh_segs[src->rc_first + i];
		seg->rs_length = written ? written[i] : 0;
		dst->rc_length += seg->rs_length;
	}
}

void svc_send_reply(struct svc_call *cc)
{
	struct svc_conn *conn = cc->cc_conn;
	struct rpcrdma_svc *svc = conn->sx_svc;
	const struct rpcrdma_hdr *call = &cc->cc_hdr;
	struct rpcrdma_hdr *rh = &cc->cc_rhdr;
	struct rpcrdma_svc_req *req = &cc->cc_req;
	struct rpcrdma_rw_piece pieces[2];
	uint32_t lkey = cc->cc_reply_lkey, nwr = 0, i;
	unsigned npieces;
	uint64_t body = 0;
	bool ddp_written = false;
	int n, hdr_len;

	rpcrdma_wire_hdr_init(rh, call->rh_xid, conn->sx_credits, RDMA_MSG);

	/* DDP-eligible data goes into the first Write chunk, pad omitted. */
	if (req->rq_ddp && call->rh_nwrite > 0) {
		const struct rpcrdma_chunk *wc = &call->rh_write[0];
		struct rpcrdma_rw_piece data = {
			.rp_addr = cc->cc_reply + req->rq_ddp_pos,
			.rp_len = (uint32_t)req->rq_ddp_len,
		};

		n = rpcrdma_rw_build_writes(&data, 1, &call->rh_segs[wc->rc_first],
					    wc->rc_nsegs, lkey, cc->cc_wr, cc->cc_sge,
					    svc_call_max_wr(cc) - 1, cc->cc_written);
		if (n < 0)
			goto err_chunk;
		nwr = (uint32_t)n;
		ddp_written = true;
		SVC_INC(svc, rdma_write_bytes, req->rq_ddp_len);
		pieces[0].rp_addr = cc->cc_reply;
		pieces[0].rp_len = (uint32_t)req->rq_ddp_pos;
		pieces[1].rp_addr = cc->cc_reply + req->rq_ddp_pos +
				    RPCRDMA_XDR_ALIGN(req->rq_ddp_len);
		pieces[1].rp_len = cc->cc_reply_len - (uint32_t)req->rq_ddp_pos -
				   (uint32_t)RPCRDMA_XDR_ALIGN(req->rq_ddp_len);
		npieces = 2;
	} else {
		pieces[0].rp_addr = cc->cc_reply;
		pieces[0].rp_len = cc->cc_reply_len;
		npieces = 1;
	}
	for (i = 0; i < npieces; i++)
		body += pieces[i].rp_len;

	/* The Write list echoes every Write chunk with the bytes written. */
	for (i = 0; i < call->rh_nwrite; i++)
		svc_echo_chunk(rh, &rh->rh_write[rh->rh_nwrite++], call, &call->rh_write[i],
			       i == 0 && ddp_written ? cc->cc_written : NULL);

	if (rpcrdma_wire_hdr_size(rh) + body <= conn->sx_inline_send) {
		hdr_len = rpcrdma_wire_encode(cc->cc_hdrbuf, cc->cc_hdr_cap, rh);
		if (hdr_len < 0)
			goto err_chunk;
		svc_send_prepare(cc, nwr, (uint32_t)hdr_len, pieces, npieces);
		if (ddp_written)
			SVC_INC(svc, replies_write_chunk, 1);
		else
			SVC_XINC(svc, replies_inline, SVC_XPRT_RDMA, 1);
		svc_send_post(cc, nwr, true);
		return;
	}
	if (!call->rh_has_reply)
		goto err_chunk;

	/* Too large for inline: the whole (remaining) reply goes into the Reply chunk. */
	n = rpcrdma_rw_build_writes(pieces, npieces, &call->rh_segs[call->rh_reply.rc_first],
				    call->rh_reply.rc_nsegs, lkey, &cc->cc_wr[nwr],
				    &cc->cc_sge[nwr * RPCRDMA_RW_MAX_SGE],
				    svc_call_max_wr(cc) - 1 - nwr, cc->cc_written);
	if (n < 0)
		goto err_chunk;
	if (nwr && n)
		cc->cc_wr[nwr - 1].next = &cc->cc_wr[nwr];
	nwr += (uint32_t)n;
	SVC_INC(svc, rdma_write_bytes, body);
	rh->rh_proc = RDMA_NOMSG;
	rh->rh_has_reply = true;
	svc_echo_chunk(rh, &rh->rh_reply, call, &call->rh_reply, cc->cc_written);
	/* RFC 8166 4.5.3: the transport header itself must fit the
	 * Requester's Receive, or the reply cannot be delivered at all. */
	if (rpcrdma_wire_hdr_size(rh) > conn->sx_inline_send)
		goto err_chunk;
	hdr_len = rpcrdma_wire_encode(cc->cc_hdrbuf, cc->cc_hdr_cap, rh);
	if (hdr_len < 0)
		goto err_chunk;
	svc_send_prepare(cc, nwr, (uint32_t)hdr_len, NULL, 0);
	SVC_INC(svc, replies_reply_chunk, 1);
	svc_send_post(cc, nwr, true);
	return;

err_chunk:
	/* RFC 8166 4.5.3: a reply that fits nowhere the Requester offered. */
	if (svc->sv_cfg.sc_verbose)
		svc_log(svc, "conn %u: reply of %u bytes fits no chunk: ERR_CHUNK",
			conn->sx_id_num, cc->cc_reply_len);
	svc_send_rdma_error(cc, call->rh_xid, ERR_CHUNK);
}

void svc_send_complete(struct svc_call *cc, const struct ibv_wc *wc)
{
	struct svc_conn *conn = cc->cc_conn;

	(void)wc;
	/* The Send was the chain's last, signalled work request: every slot
	 * the chain held is free again. */
	svc_conn_sq_release(conn, cc);
	svc_call_put(cc);
}

bool svc_send_by_worker(struct svc_call *cc)
{
	struct svc_conn *conn = cc->cc_conn;
	uint32_t want = svc_call_max_wr(cc);

	/* The transport thread's own queues come first: a call parked for
	 * slots, a capture (its endpoints are the thread's), a closing
	 * connection all send the call back to it. */
	if (!cc->cc_dev->dv_worker_posts || conn->sx_capture ||
	    atomic_load(&conn->sx_closing) || atomic_load(&conn->sx_sq_waiting) ||
	    !svc_conn_sq_take(conn, want))
		return false;
	cc->cc_sq_used = want;
	cc->cc_by_worker = true;
	cc->cc_worker_fail = 0;
	cc->cc_worker_bad = NULL;
	svc_worker_posted = false;
	svc_rpc_finish(cc);
	if (svc_worker_posted)
		return true; /* not a word more about @cc here */
	/* Not posted: the slots go back; the transport thread finishes. */
	cc->cc_by_worker = false;
	atomic_fetch_add(&conn->sx_sq_free, cc->cc_sq_used);
	cc->cc_sq_used = 0;
	return false;
}

void svc_send_worker_failed(struct svc_call *cc)
{
	int fail = cc->cc_worker_fail;

	cc->cc_worker_fail = 0;
	if (fail == SVC_WORKER_PUT)
		svc_call_put(cc);
	else
		svc_send_post_failed(cc->cc_conn, cc->cc_worker_bad, fail);
}
