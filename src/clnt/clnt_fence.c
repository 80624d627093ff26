// SPDX-License-Identifier: MIT
/*
 * clnt_fence.c - keeping the caller's memory out of the Responder's
 * reach: LOCAL_INV of a call's windows, the call completed by its
 * completion; Send With Invalidate checked against the handles expected
 * (RFC 8797 section 5).
 */
#include <stdint.h>
#include <string.h>

#include "clnt/clnt_internal.h"

/* Post LOCAL_INV for every window of @rl still bound, the last one
 * signalled (tagged rl_inv_cqe, the others quiet).  Return: true when
 * posted (the completion finishes the fencing), false when nothing was
 * bound or the connection is gone (then nothing can reach the windows: a
 * type 2 window is reachable only through the QP it was bound on, which
 * is in error).  A failed post closes the connection.  Lock held. */
static bool clnt_post_local_inv(struct rpcrdma_clnt *cl, struct clnt_req *rl)
{
	struct clnt_mapping *maps[CLNT_NMAPS] = { &rl->rl_read, &rl->rl_write, &rl->rl_reply };
	struct ibv_send_wr *bad, *prev = NULL, *first = NULL;
	unsigned i, n = 0;

	if (!cl->cl_connected)
		return false;
	for (i = 0; i < CLNT_NMAPS; i++) {
		struct ibv_send_wr *wr = &rl->rl_inv_wr[n];

		if (!maps[i]->cm_mw || !maps[i]->cm_bound)
			continue;
		memset(wr, 0, sizeof(*wr));
		wr->opcode = IBV_WR_LOCAL_INV;
		wr->invalidate_rkey = maps[i]->cm_rkey;
		wr->wr_id = (uintptr_t)&cl->cl_quiet_cqe;
		if (prev)
			prev->next = wr;
		else
			first = wr;
		prev = wr;
		n++;
	}
	if (!n)
		return false;
	prev->send_flags = IBV_SEND_SIGNALED;
	prev->wr_id = (uintptr_t)&rl->rl_inv_cqe;
	rl->rl_inv_cqe.ce_type = CLNT_CQE_LINV;
	rl->rl_inv_cqe.ce_id = ++cl->cl_cqe_ids;
	if (rpcrdma_verbs_post_send(cl->cl_qp, first, &bad)) {
		clnt_log(cl, "LOCAL_INV post failed: disconnecting");
		clnt_disconnected(cl);
		return false;
	}
	rl->rl_owners |= CLNT_OWNER_INV;
	return true;
}

/* Mark @rl's windows bound (@bound: its binds were posted) or
 * invalidated (a successful LOCAL_INV). */
void clnt_windows_set(struct clnt_req *rl, bool bound)
{
	struct clnt_mapping *maps[CLNT_NMAPS] = { &rl->rl_read, &rl->rl_write, &rl->rl_reply };
	unsigned i;

	for (i = 0; i < CLNT_NMAPS; i++)
		maps[i]->cm_bound = bound && maps[i]->cm_mw;
}

/*
 * The outcome of @rl is @status: fence its windows, then complete it.
 * With windows still bound on a live connection the completion waits for
 * the LOCAL_INV completion (RL_FENCING); otherwise it is immediate.
 * Per-call regions are deregistered by the RPC side before it reports
 * (clnt_call_finish).  Lock held.
 */
void clnt_fence_complete(struct rpcrdma_clnt *cl, struct clnt_req *rl, int status)
{
	rl->rl_status = status;
	if (clnt_post_local_inv(cl, rl)) {
		rl->rl_state = RL_FENCING;
		return;
	}
	clnt_complete(cl, rl, status);
}

/* @rl has a chunk inside a buffer registered for remote access: only
 * closing the connection takes it out of the Responder's reach. */
bool clnt_req_persistent(const struct clnt_req *rl)
{
	const struct clnt_mapping *maps[CLNT_NMAPS] = { &rl->rl_read, &rl->rl_write,
							&rl->rl_reply };
	unsigned i;

	for (i = 0; i < CLNT_NMAPS; i++)
		if (maps[i]->cm_buf && !maps[i]->cm_mw)
			return true;
	return false;
}

/*
 * A reply for @rl arrived as a Send With Invalidate of @rkey (RFC 8797
 * section 5).  Only a window bound for this call may be named, and only
 * when we offered remote invalidation: that window is then no longer
 * bound.  Any other handle is a protocol error (counted, logged): the
 * call fails with -EIO and its own windows are invalidated locally as if
 * none had been.  Return: true when @rkey was one of @rl's windows.
 * Lock held.
 */
bool clnt_remote_invalidated(struct rpcrdma_clnt *cl, struct clnt_req *rl,
				    uint32_t rkey)
{
	struct clnt_mapping *maps[CLNT_NMAPS] = { &rl->rl_read, &rl->rl_write, &rl->rl_reply };
	unsigned i;

	for (i = 0; cl->cl_rsi && i < CLNT_NMAPS; i++) {
		if (maps[i]->cm_mw && maps[i]->cm_bound && maps[i]->cm_rkey == rkey) {
			maps[i]->cm_bound = false;
			cl->cl_stats.cs_remote_invalidates++;
			return true;
		}
	}
	cl->cl_stats.cs_bad_invalidates++;
	clnt_log(cl, "xid 0x%08x: Send With Invalidate of 0x%08x, not a handle of this call%s",
		 rl->rl_xid, rkey, cl->cl_rsi ? "" : " (remote invalidation not offered)");
	return false;
}
