// SPDX-License-Identifier: MIT
/*
 * svc_recv.c - the Responder's receive path (RFC 8166 3.5 and 4.3.1):
 * decode the transport header, pull Read chunks with RDMA Read into the
 * call context's registered buffer, and rebuild the RPC call message:
 * inline part, chunk data at its position (XDR round-up restored), then
 * the inline content that follows the chunk.
 */
#include <errno.h>
#include <string.h>

#include "svc/svc_bc.h"

/* Hand a rebuilt call to the RPC layer with its peer's address. */
static inline void svc_recv_dispatch(struct svc_call *cc)
{
	svc_rpc_dispatch(cc, rdma_get_peer_addr(cc->cc_conn->sx_id));
}

void svc_recv_complete(struct svc_recv *rc, const struct ibv_wc *wc)
{
	struct svc_conn *conn = rc->rc_conn;
	struct svc_call *cc;

	/* A flushed or failed Receive is held until the connection goes. */
	if (wc->status != IBV_WC_SUCCESS || conn->sx_closing) {
		svc_conn_maybe_destroy(conn);
		return;
	}
	rc->rc_len = wc->byte_len;
	SVC_XINC(conn->sx_svc, recv_bytes, SVC_XPRT_RDMA, wc->byte_len);
	svc_capture_recv(conn, rc->rc_buf, rc->rc_len);
	/* In order: a message may not pass others waiting for a context. */
	cc = conn->sx_dev->dv_rwait_head ? NULL : svc_call_get(conn->sx_dev, conn);
	if (!cc) {
		svc_dev_wait_recv(conn->sx_dev, rc);
		return;
	}
	svc_recv_start(rc, cc);
}

/* Give the Receive back: queued, and posted with others in one batch. */
static void svc_recv_repost(struct svc_conn *conn, struct svc_recv *rc)
{
	svc_conn_queue_recv(conn, rc);
}

/*
 * Lay out the rebuilt call in cc_call and build the RDMA Read chains.
 * Returns the number of work requests, or -EBADMSG when the chunks do not
 * fit the inline body or the buffer (answered with ERR_CHUNK).
 */
static int svc_recv_rebuild(struct svc_call *cc, const uint8_t *body,
			    uint32_t body_len, uint32_t *chain_end)
{
	const struct rpcrdma_hdr *hdr = &cc->cc_hdr;
	uint32_t lkey = cc->cc_call_lkey;
	uint64_t out = 0, consumed = 0;
	uint32_t in = 0, k, nwr = 0;

	for (k = 0; k < hdr->rh_nread; k++) {
		const struct rpcrdma_chunk *ch = &hdr->rh_read[k];
		uint64_t padded = (ch->rc_length + 3) & ~(uint64_t)3;
		uint64_t at;
		int n;

		/* Position in the rebuilt stream -> offset in the inline body. */
		if (ch->rc_position < consumed)
			return -EBADMSG;
		at = ch->rc_position - consumed;
		if (at < in || at > body_len)
			return -EBADMSG;
		if (out + (at - in) + padded > cc->cc_call_cap)
			return -EBADMSG;
		memcpy(cc->cc_call + out, body + in, at - in);
		out += at - in;
		in = (uint32_t)at;

		n = rpcrdma_rw_build_reads(&hdr->rh_segs[ch->rc_first], ch->rc_nsegs,
					   cc->cc_call + out, lkey, &cc->cc_wr[nwr],
					   &cc->cc_sge[nwr * RPCRDMA_RW_MAX_SGE],
					   svc_call_max_wr(cc) - nwr);
		if (n < 0)
			return -EBADMSG;
		if (n == 0) {
			chain_end[k] = UINT32_MAX; /* nothing to read */
		} else {
			nwr += (uint32_t)n;
			chain_end[k] = nwr - 1;
		}
		/* XDR round-up: the pad is ours to supply when the chunk omits it. */
		memset(cc->cc_call + out + ch->rc_length, 0, padded - ch->rc_length);
		out += padded;
		consumed += padded;
	}
	if (out + (body_len - in) > cc->cc_call_cap)
		return -EBADMSG;
	memcpy(cc->cc_call + out, body + in, body_len - in);
	out += body_len - in;
	cc->cc_call_len = (uint32_t)out;
	return (int)nwr;
}

void svc_recv_post_chains(struct svc_call *cc)
{
	struct svc_conn *conn = cc->cc_conn;
	struct rpcrdma_svc *svc = conn->sx_svc;
	const uint32_t *chain_end = cc->cc_chain_end;
	struct ibv_send_wr *head = NULL, *tail = NULL;
	uint32_t k, first = 0;

	cc->cc_state = CC_READING;
	/* Their completions are awaited: the send CQ is armed for them. */
	conn->sx_reads_out += cc->cc_reads_pending;
	/* One chain of all the call's Read chunks, each chunk's last work
	 * request signalled.  Counted before the post: once the last chunk
	 * is posted the call may complete and its context be reused. */
	for (k = 0; k < cc->cc_hdr.rh_nread; k++) {
		if (chain_end[k] == UINT32_MAX)
			continue;
		if (tail)
			tail->next = &cc->cc_wr[first];
		else
			head = &cc->cc_wr[first];
		tail = &cc->cc_wr[chain_end[k]];
		tail->next = NULL;
		tail->send_flags = IBV_SEND_SIGNALED;
		tail->wr_id = (uintptr_t)&cc->cc_cqe;
		SVC_INC(svc, read_chunks, 1);
		SVC_INC(svc, rdma_read_bytes, cc->cc_hdr.rh_read[k].rc_length);
		first = chain_end[k] + 1;
	}
	if (head)
		svc_send_submit(conn, head, tail);
}

static void svc_recv_post_reads(struct svc_call *cc, uint32_t nwr)
{
	struct svc_conn *conn = cc->cc_conn;
	uint32_t k, nread = cc->cc_hdr.rh_nread;

	cc->cc_cqe.ce_type = RPCRDMA_CQE_READ;
	cc->cc_cqe.ce_id = ++conn->sx_cqe_ids;
	/* Count every chain before the first post: a completion may arrive
	 * before post returns. */
	cc->cc_reads_pending = 0;
	for (k = 0; k < nread; k++)
		if (cc->cc_chain_end[k] != UINT32_MAX)
			cc->cc_reads_pending++;
	if (!cc->cc_reads_pending) {
		svc_recv_dispatch(cc);
		return;
	}
	if (svc_conn_sq_reserve(conn, cc, nwr, true))
		svc_recv_post_chains(cc);
}

void svc_recv_start(struct svc_recv *rc, struct svc_call *cc)
{
	struct svc_conn *conn = rc->rc_conn;
	struct rpcrdma_svc *svc = conn->sx_svc;
	struct rpcrdma_wire_err err;

	svc_stats_call_begin(cc);
	if (rpcrdma_wire_decode_call(rc->rc_buf, rc->rc_len, &svc->sv_limits,
				     &cc->cc_hdr, &err)) {
		if (svc->sv_cfg.sc_verbose)
			svc_log(svc, "conn %u: bad header (%s): %s", conn->sx_id_num,
				err.we_rule, err.we_detail);
		/* backchannel hook: the client's RDMA_ERROR for our call */
		if (svc_bc_rdma_error(conn, rc->rc_buf, rc->rc_len)) {
			svc_recv_repost(conn, rc);
			svc_call_put(cc);
			return;
		}
		svc_recv_repost(conn, rc);
		if (err.we_answer == RPCRDMA_ANSWER_DROP) {
			SVC_INC(svc, drops, 1);
			svc_call_put(cc);
			return;
		}
		svc_send_rdma_error(cc, err.we_xid,
				    err.we_answer == RPCRDMA_ANSWER_ERR_VERS ? ERR_VERS : ERR_CHUNK);
		return;
	}

	/* Chunks that need more room than the small buffers: a large call
	 * context and buffers sized to them, or wait (holding the Receive)
	 * in order until they can be had. */
	if (svc_call_needs_large(cc)) {
		int err = cc->cc_dev->dv_cwait_head ? -EAGAIN : svc_large_attach(cc);

		if (err == -EAGAIN) {
			svc_large_wait(cc, rc);
			return;
		}
		if (err) {
			/* More than the largest buffer: the chunks cannot fit. */
			svc_recv_repost(conn, rc);
			svc_send_rdma_error(cc, cc->cc_hdr.rh_xid, ERR_CHUNK);
			return;
		}
	}
	svc_recv_continue(rc, cc);
}

/* Rebuild the call from @rc into @cc's buffers, give @rc back, and read
 * its chunks or dispatch it. */
void svc_recv_continue(struct svc_recv *rc, struct svc_call *cc)
{
	struct svc_conn *conn = rc->rc_conn;
	struct rpcrdma_svc *svc = conn->sx_svc;
	uint32_t *chain_end = cc->cc_chain_end;
	uint32_t body_len;
	int n;

	/* RDMA_NOMSG: the whole call is in the position-zero chunk. */
	body_len = cc->cc_hdr.rh_proc == RDMA_NOMSG ? 0 : cc->cc_hdr.rh_inline_len;
	n = svc_recv_rebuild(cc, rc->rc_buf + cc->cc_hdr.rh_hdr_len, body_len, chain_end);
	/* The inline part is copied out: the Receive can go back now. */
	svc_recv_repost(conn, rc);
	if (n < 0) {
		if (svc->sv_cfg.sc_verbose)
			svc_log(svc, "conn %u: Read chunks do not fit the call", conn->sx_id_num);
		svc_send_rdma_error(cc, cc->cc_hdr.rh_xid, ERR_CHUNK);
		return;
	}
	if (cc->cc_hdr.rh_nread == 0) {
		svc_recv_dispatch(cc);
		return;
	}
	svc_recv_post_reads(cc, (uint32_t)n);
}

void svc_read_complete(struct svc_call *cc, const struct ibv_wc *wc)
{
	struct svc_conn *conn = cc->cc_conn;

	if (wc->status != IBV_WC_SUCCESS)
		cc->cc_failed = true;
	if (conn->sx_reads_out)
		conn->sx_reads_out--;
	if (--cc->cc_reads_pending)
		return;
	svc_conn_sq_release(conn, cc);
	if (cc->cc_failed || conn->sx_closing) {
		SVC_INC(conn->sx_svc, drops, 1);
		svc_call_put(cc);
		return;
	}
	svc_capture_reads(cc);
	svc_recv_dispatch(cc);
}
