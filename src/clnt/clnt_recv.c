// SPDX-License-Identifier: MIT
/*
 * clnt_recv.c - the completion side: Receive, Send, LOCAL_INV and quiet
 * completions; replies matched by xid and checked (never trusting the
 * wire); Receives reposted.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "clnt/clnt_internal.h"
#include "common/be.h"

static void clnt_repost(struct rpcrdma_clnt *cl, struct clnt_recv *rr)
{
	struct ibv_recv_wr *bad;
	int rc;

	if (!cl->cl_connected)
		return;
	rr->rr_wr.next = NULL;
	rc = rpcrdma_verbs_post_recv(cl->cl_qp, &rr->rr_wr, &bad);
	if (rc == 0) {
		cl->cl_recvs_posted++;
		return;
	}
	/* A Receive lost for good would starve the connection: replies
	 * would wait for it forever (RNR retry is unlimited).  Close the
	 * connection instead; pending calls fail and may be retried. */
	clnt_log(cl, "Receive repost failed: %s: disconnecting", strerror(-rc));
	clnt_disconnected(cl);
}

/* Work out the outcome of a decoded reply for @rl.  Lock held. */
static int clnt_reply_result(struct rpcrdma_clnt *cl, struct clnt_req *rl,
			     const uint8_t *buf)
{
	const struct rpcrdma_hdr *rh = &cl->cl_rhdr;
	struct rpcrdma_clnt_call *ca = rl->rl_call;

	if (rh->rh_proc == RDMA_ERROR) {
		cl->cl_stats.cs_rdma_errors++;
		clnt_log(cl, "xid 0x%08x: RDMA_ERROR %s", rl->rl_xid,
			 rh->rh_err == ERR_VERS ? "ERR_VERS" :
			 rh->rh_err == ERR_CHUNK ? "ERR_CHUNK" : "(unknown code)");
		return -EIO;
	}
	/* Never trust the wire: whatever the Responder claims to have
	 * written must fit what we offered. */
	if (rh->rh_nwrite > 1 || (rh->rh_nwrite && !rl->rl_write.cm_mr))
		return -EIO;
	if (rl->rl_write.cm_mr) {
		ca->ca_rddp_used = true;
		if (rh->rh_nwrite) {
			const struct rpcrdma_chunk *wc = &rh->rh_write[0];

			/* The echo must name the segment we offered. */
			if (wc->rc_nsegs > 1 || wc->rc_length > rl->rl_write.cm_len ||
			    (wc->rc_nsegs &&
			     rh->rh_segs[wc->rc_first].rs_handle != rl->rl_write.cm_rkey))
				return -EIO;
			ca->ca_rddp_len = (uint32_t)rh->rh_write[0].rc_length;
		}
	}
	if (rh->rh_proc == RDMA_MSG) {
		if (rh->rh_inline_len > ca->ca_res_cap)
			return -EMSGSIZE;
		memcpy(ca->ca_res, buf + rh->rh_hdr_len, rh->rh_inline_len);
		ca->ca_res_len = rh->rh_inline_len;
		return 0;
	}
	/* RDMA_NOMSG: the reply is in our Reply chunk. */
	if (!rh->rh_has_reply || !rl->rl_reply.cm_mr ||
	    rh->rh_reply.rc_length > rl->rl_reply.cm_len)
		return -EIO;
	ca->ca_res_len = (uint32_t)rh->rh_reply.rc_length;
	return 0;
}

/*
 * The Receive of @wc was a Send With Invalidate (its handle in
 * wc->invalidated_rkey).  Soft-RoCE writes the kernel's flag value for it
 * (IB_WC_WITH_INVALIDATE, 1 << 2) into the user CQ, which libibverbs
 * defines as IBV_WC_IP_CSUM_OK, meaningless on an RC Receive: on an rxe
 * device (cl_rxe_inv_flag) that bit is read as the invalidation too.
 */
static bool clnt_wc_invalidated(const struct rpcrdma_clnt *cl, const struct ibv_wc *wc)
{
	return (wc->wc_flags & IBV_WC_WITH_INV) ||
	       (cl->cl_rxe_inv_flag && (wc->wc_flags & CLNT_RXE_WC_WITH_INV));
}

static void clnt_recv_complete(struct rpcrdma_clnt *cl, struct clnt_recv *rr,
			       const struct ibv_wc *wc)
{
	struct rpcrdma_hdr *rh = &cl->cl_rhdr;
	struct rpcrdma_wire_err err;
	struct clnt_req *rl;
	uint32_t credits;
	bool inv_ok, inv, decoded;
	int status;

	cl->cl_recvs_posted--;
	if (wc->status != IBV_WC_SUCCESS) {
		if (cl->cl_connected)
			clnt_disconnected(cl);
		return;
	}
	inv = clnt_wc_invalidated(cl, wc);
	if (inv && wc->byte_len < 4) {
		cl->cl_stats.cs_bad_invalidates++;
		clnt_log(cl, "Send With Invalidate of 0x%08x in a reply naming no call",
			 wc->invalidated_rkey);
	}
	clnt_capture_recv(cl, rr->rr_buf, wc->byte_len);
	decoded = !rpcrdma_wire_decode_reply(rr->rr_buf, wc->byte_len, &cl->cl_limits, rh, &err);
	if (clnt_bc_recv(cl, rr, wc->byte_len, decoded)) { /* backchannel hook: a call */
		clnt_repost(cl, rr);
		return;
	}
	if (!decoded) {
		cl->cl_stats.cs_bad_replies++;
		clnt_log(cl, "bad reply header (%s): %s", err.we_rule, err.we_detail);
		rl = wc->byte_len >= 4 ? clnt_xid_find(cl, load_be32(rr->rr_buf)) : NULL;
		/* It is that call's reply, if a bad one: the Responder is done
		 * with it. */
		if (rl) {
			clnt_wire_release(cl, rl);
			if (rl->rl_state == RL_PENDING)
				clnt_fence_complete(cl, rl, -EIO);
		}
		clnt_repost(cl, rr);
		return;
	}
	/* Credits: 0 counts as 1, more than we asked for as our maximum. */
	credits = rh->rh_credits;
	if (credits == 0)
		credits = 1;
	if (credits > cl->cl_max_credits)
		credits = cl->cl_max_credits;
	cl->cl_credits = credits;
	cl->cl_stats.cs_replies++;

	rl = clnt_xid_find(cl, rh->rh_xid);
	if (!rl && inv) {
		cl->cl_stats.cs_bad_invalidates++;
		clnt_log(cl, "Send With Invalidate of 0x%08x for unknown xid 0x%08x",
			 wc->invalidated_rkey, rh->rh_xid);
	}
	if (!rl) {
		cl->cl_stats.cs_unknown_xid++;
		if (cl->cl_cfg.cf_verbose)
			clnt_log(cl, "reply for unknown xid 0x%08x dropped", rh->rh_xid);
		clnt_repost(cl, rr);
		pthread_cond_broadcast(&cl->cl_slot_cond);
		return;
	}
	/* The Responder is done with the call: its credit comes back. */
	clnt_wire_release(cl, rl);
	inv_ok = !inv ||
		 clnt_remote_invalidated(cl, rl, wc->invalidated_rkey);
	if (rl->rl_state != RL_PENDING) {
		/* Aborted: the caller has been told and its memory may be in
		 * other use; the reply is dropped unread. */
		cl->cl_stats.cs_late_replies++;
		if (cl->cl_cfg.cf_verbose)
			clnt_log(cl, "late reply for aborted xid 0x%08x dropped", rh->rh_xid);
		clnt_repost(cl, rr);
		clnt_pump_ready(cl);
		return;
	}
	status = inv_ok ? clnt_reply_result(cl, rl, rr->rr_buf) : -EIO;
	/* Windows the Responder did not invalidate are invalidated here. */
	clnt_fence_complete(cl, rl, status);
	/* The Receive goes back before the lock is dropped, so before anyone
	 * waiting runs; a failed repost closes the connection, but this
	 * call's outcome is already in. */
	clnt_repost(cl, rr);
	/* A credit came back: calls waiting to be sent again go first. */
	clnt_pump_ready(cl);
}

static void clnt_send_complete(struct rpcrdma_clnt *cl, struct clnt_req *rl,
			       const struct ibv_wc *wc)
{
	if (wc->status != IBV_WC_SUCCESS && cl->cl_connected) {
		if (wc->status != IBV_WC_WR_FLUSH_ERR)
			clnt_log(cl, "Send xid 0x%08x failed: %s", rl->rl_xid,
				 ibv_wc_status_str(wc->status));
		clnt_disconnected(cl);
	}
	clnt_sq_complete(cl, rl);
}

/* Dispatch one work completion.  Lock held. */
void clnt_handle_wc(struct rpcrdma_clnt *cl, const struct ibv_wc *wc)
{
	struct rpcrdma_cqe *cqe = rpcrdma_cqe_of(wc);

	switch (cqe->ce_type) {
	case RPCRDMA_CQE_RECV:
		clnt_recv_complete(cl, rpcrdma_container_of(cqe, struct clnt_recv, rr_cqe), wc);
		break;
	case CLNT_CQE_LINV: {
		struct clnt_req *rl = rpcrdma_container_of(cqe, struct clnt_req, rl_inv_cqe);

		/* The last LOCAL_INV of the chain: the send queue completes
		 * in order, so the whole chain is done (or flushed). */
		if (wc->status == IBV_WC_SUCCESS) {
			clnt_windows_set(rl, false);
		} else if (cl->cl_connected) {
			if (wc->status != IBV_WC_WR_FLUSH_ERR)
				clnt_log(cl, "LOCAL_INV failed: %s: disconnecting",
					 ibv_wc_status_str(wc->status));
			/* The QP in error fences the windows. */
			clnt_disconnected(cl);
		}
		if (rl->rl_state == RL_FENCING)
			clnt_complete(cl, rl, rl->rl_status);
		clnt_req_release(cl, rl, CLNT_OWNER_INV);
		break;
	}
	case CLNT_CQE_QUIET:
		/* Unsignalled binds and LOCAL_INVs report only failures. */
		if (wc->status != IBV_WC_SUCCESS && cl->cl_connected) {
			if (wc->status != IBV_WC_WR_FLUSH_ERR)
				clnt_log(cl, "window bind/invalidate failed: %s: disconnecting",
					 ibv_wc_status_str(wc->status));
			clnt_disconnected(cl);
		}
		break;
	case RPCRDMA_CQE_SEND:
		clnt_send_complete(cl, rpcrdma_container_of(cqe, struct clnt_req, rl_cqe), wc);
		break;
	case RPCRDMA_CQE_BC_SEND: /* backchannel hook */
		clnt_bc_send_complete(cl, cqe, wc);
		break;
	default:
		break;
	}
}

/*
 * Drain the CQ.  Only the completion thread polls (unit tests stand in for
 * it), so the poll itself needs no lock: it is taken per batch, and
 * callers starting or finishing calls get in between batches.
 */
void clnt_poll(struct rpcrdma_clnt *cl)
{
	struct ibv_wc wc[32];
	int n, i;

	while ((n = rpcrdma_verbs_poll(cl->cl_cq, 32, wc)) > 0) {
		pthread_mutex_lock(&cl->cl_lock);
		for (i = 0; i < n; i++)
			clnt_handle_wc(cl, &wc[i]);
		/* rpcrdma_clnt_destroy() waits for the last flush */
		if (cl->cl_stopping && clnt_drained(cl))
			pthread_cond_broadcast(&cl->cl_slot_cond);
		pthread_mutex_unlock(&cl->cl_lock);
	}
	clnt_bc_run(cl); /* backchannel hook: serve calls, without the lock */
	/* Calls the callbacks start (rpcrdma_clnt_try_call_async()) go out
	 * with one post after them. */
	rpcrdma_clnt_batch_begin(cl);
	clnt_run_done(cl);
	rpcrdma_clnt_batch_end(cl);
}
