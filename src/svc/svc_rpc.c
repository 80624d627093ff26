// SPDX-License-Identifier: MIT
/*
 * svc_rpc.c - the ONC RPC layer of the Responder (RFC 5531 9): find the
 * program, hand the call to a worker, and encode the reply header.
 */
#include <errno.h>
#include <string.h>

#include "svc/svc_bc.h"

/* Encode the reply header into cc_reply; returns its length in bytes. */
static uint32_t svc_rpc_reply_header(struct svc_call *cc, uint32_t xid, int status,
				     uint32_t low, uint32_t high)
{
	struct rpcrdma_xdr xs;

	rpcrdma_xdr_init(&xs, cc->cc_reply, cc->cc_reply_cap);
	rpcrdma_xdr_put_u32(&xs, xid);
	rpcrdma_xdr_put_u32(&xs, RPC_DIR_REPLY);
	if (status == RPCRDMA_SVC_AUTH_ERROR) {
		rpcrdma_xdr_put_u32(&xs, RPC_MSG_DENIED);
		rpcrdma_xdr_put_u32(&xs, RPC_REJECT_AUTH_ERROR);
		rpcrdma_xdr_put_u32(&xs, cc->cc_req.rq_auth_stat);
		return (uint32_t)xs.xs_pos;
	}
	if (status < 0) { /* RPC version mismatch */
		rpcrdma_xdr_put_u32(&xs, RPC_MSG_DENIED);
		rpcrdma_xdr_put_u32(&xs, RPC_REJECT_RPC_MISMATCH);
		rpcrdma_xdr_put_u32(&xs, RPC_MSG_VERSION);
		rpcrdma_xdr_put_u32(&xs, RPC_MSG_VERSION);
		return (uint32_t)xs.xs_pos;
	}
	rpcrdma_xdr_put_u32(&xs, RPC_MSG_ACCEPTED);
	rpcrdma_xdr_put_u32(&xs, RPC_AUTH_NONE); /* verifier */
	rpcrdma_xdr_put_u32(&xs, 0);
	rpcrdma_xdr_put_u32(&xs, (uint32_t)status);
	if (status == RPCRDMA_SVC_PROG_MISMATCH) {
		rpcrdma_xdr_put_u32(&xs, low);
		rpcrdma_xdr_put_u32(&xs, high);
	}
	return (uint32_t)xs.xs_pos;
}

/* Reply without running a handler (errors found by the RPC layer). */
static void svc_rpc_reply_now(struct svc_call *cc, int status, uint32_t low, uint32_t high)
{
	cc->cc_req.rq_ddp = false;
	cc->cc_reply_len = svc_rpc_reply_header(cc, cc->cc_req.rq_msg.rm_xid, status,
						low, high);
	svc_stats_reply(cc, status);
	cc->cc_xprt->xc_send(cc);
}

void svc_rpc_dispatch(struct svc_call *cc, const struct sockaddr *peer)
{
	struct rpcrdma_svc *svc = cc->cc_svc;
	struct rpcrdma_svc_req *req = &cc->cc_req;
	struct rpcrdma_rpc_msg *msg = &req->rq_msg;
	const struct svc_program *match = NULL;
	uint32_t low = UINT32_MAX, high = 0;
	unsigned i;
	int rc;

	SVC_XINC(svc, calls, cc->cc_xprt == &svc_tcp_class ? SVC_XPRT_TCP : SVC_XPRT_RDMA, 1);
	memset(req, 0, sizeof(*req));
	rc = rpcrdma_wire_decode_rpc(cc->cc_call, cc->cc_call_len, msg);
	if (rc == -EPROTO) {
		svc_rpc_reply_now(cc, -1, 0, 0);
		return;
	}
	if (cc->cc_call_len >= 8 && msg->rm_dir == RPC_DIR_REPLY &&
	    (cc->cc_conn || cc->cc_tconn)) {
		svc_bc_reply(cc, rc); /* backchannel hook: a reply to our call? */
		return;
	}
	if (rc || msg->rm_dir != RPC_DIR_CALL) {
		/* Unreadable (or a reply on a transport without a backchannel). */
		SVC_INC(svc, drops, 1);
		cc->cc_xprt->xc_release(cc);
		return;
	}
	for (i = 0; i < svc->sv_nprogs; i++) {
		const struct svc_program *sp = &svc->sv_progs[i];

		if (sp->sp_prog != msg->rm_prog)
			continue;
		if (sp->sp_vers == msg->rm_vers)
			match = sp;
		low = sp->sp_vers < low ? sp->sp_vers : low;
		high = sp->sp_vers > high ? sp->sp_vers : high;
	}
	svc_stats_call_decoded(cc, match);
	if (!match) {
		svc_rpc_reply_now(cc, high ? RPCRDMA_SVC_PROG_MISMATCH : RPCRDMA_SVC_PROG_UNAVAIL,
				  low, high);
		return;
	}

	rpcrdma_xdr_init(&req->rq_args, cc->cc_call, cc->cc_call_len);
	req->rq_args.xs_pos = msg->rm_hdr_len;
	rpcrdma_xdr_init(&req->rq_res, cc->cc_reply, cc->cc_reply_cap);
	req->rq_res.xs_pos = SVC_RPC_REPLY_HDR;
	memcpy(&req->rq_peer, peer, peer->sa_family == AF_INET6 ?
	       sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in));
	req->rq_xprt = cc;
	cc->cc_fn = match->sp_fn;
	cc->cc_fn_arg = match->sp_arg;
	if (svc->sv_cfg.sc_loop_dispatch) {
		/* No hand-off: serve it here and send the reply now. */
		cc->cc_state = CC_WORKING;
		cc->cc_status = cc->cc_fn(req, cc->cc_fn_arg);
		svc_rpc_finish(cc);
		return;
	}
	if (match->sp_flags & RPCRDMA_SVC_TRY_TRANSPORT) {
		int status;

		cc->cc_state = CC_WORKING;
		req->rq_transport = true;
		status = cc->cc_fn(req, cc->cc_fn_arg);
		req->rq_transport = false;
		if (status != RPCRDMA_SVC_DEFER) {
			SVC_INC(svc, transport_calls, 1);
			cc->cc_status = status;
			svc_rpc_finish(cc);
			return;
		}
		/* Start again from the arguments on a worker. */
		SVC_INC(svc, transport_defers, 1);
		rpcrdma_xdr_init(&req->rq_args, cc->cc_call, cc->cc_call_len);
		req->rq_args.xs_pos = msg->rm_hdr_len;
		rpcrdma_xdr_init(&req->rq_res, cc->cc_reply, cc->cc_reply_cap);
		req->rq_res.xs_pos = SVC_RPC_REPLY_HDR;
		req->rq_auth_stat = 0;
		req->rq_has_status = false;
		req->rq_ddp = false;
		req->rq_ddp_pos = req->rq_ddp_len = 0;
	}
	svc_work_enqueue(cc->cc_grp, cc);
}

void svc_rpc_finish(struct svc_call *cc)
{
	struct rpcrdma_svc_req *req = &cc->cc_req;
	int status = cc->cc_status;

	if (svc_call_closing(cc)) {
		cc->cc_xprt->xc_release(cc);
		return;
	}
	if (status == RPCRDMA_SVC_SUCCESS && !rpcrdma_xdr_ok(&req->rq_res)) {
		/* A small context's reply buffer holds all the room the call's
		 * chunks offer (svc_call_needs_large()): a reply that overflows
		 * it fits nowhere the Requester offered (RFC 8166 4.5.3).  Over
		 * TCP (no chunks) the reply buffer holds the largest reply. */
		if (cc->cc_conn && !cc->cc_large) {
			if (cc->cc_conn->sx_svc->sv_cfg.sc_verbose)
				svc_log(cc->cc_conn->sx_svc, "conn %u: reply larger than the room offered: ERR_CHUNK",
					cc->cc_conn->sx_id_num);
			svc_send_rdma_error(cc, cc->cc_hdr.rh_xid, ERR_CHUNK);
			return;
		}
		status = RPCRDMA_SVC_SYSTEM_ERR;
	}
	if (status != RPCRDMA_SVC_SUCCESS) {
		svc_rpc_reply_now(cc, status, 0, 0);
		return;
	}
	svc_rpc_reply_header(cc, req->rq_msg.rm_xid, RPCRDMA_SVC_SUCCESS, 0, 0);
	cc->cc_reply_len = (uint32_t)req->rq_res.xs_pos;
	svc_stats_reply(cc, RPCRDMA_SVC_SUCCESS);
	cc->cc_xprt->xc_send(cc);
}
