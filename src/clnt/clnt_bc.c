// SPDX-License-Identifier: MIT
/*
 * clnt_bc.c - the client's side of the backchannel (RFC 8167): calls the
 * server sends us on our connection, served by a registered program, and
 * their replies.  Twice cf_bc_slots requests (CLNT_BC_REQS), each with a
 * registered reply buffer in the slab, of which at most cf_bc_slots
 * serve calls at once (our credit; the others' replies may still be in
 * their Sends), and cf_bc_slots Receives beyond the forward credits
 * (RFC 8167 4.2.1), re-posted with every new connection.  A call is
 * copied out of its Receive (which goes back at once), served on the
 * completion thread without the lock, and answered inline (RFC 8167 5.2:
 * RDMA_MSG, empty chunk lists, our backchannel credit in rdma_credit).
 * A request has two owners: the program until the reply is built, and
 * the reply's Send until it completes or flushes; a connection torn down
 * releases both (clnt_bc_release_all()), after the completion thread
 * stopped and before the slab's registration goes.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "clnt/clnt_internal.h"
#include "common/be.h"

int clnt_bc_alloc(struct rpcrdma_clnt *cl, uint8_t **p)
{
	uint32_t isz = cl->cl_cfg.cf_inline_size, i;

	cl->cl_nbc = CLNT_BC_REQS(cl);
	if (!cl->cl_nbc)
		return 0;
	cl->cl_bc = calloc(cl->cl_nbc, sizeof(*cl->cl_bc));
	cl->cl_bc_calls = malloc((size_t)cl->cl_nbc * isz);
	if (!cl->cl_bc || !cl->cl_bc_calls)
		return -ENOMEM;
	for (i = 0; i < cl->cl_nbc; i++) {
		struct clnt_bc_req *br = &cl->cl_bc[i];

		br->br_cqe.ce_type = RPCRDMA_CQE_BC_SEND;
		br->br_cqe.ce_id = i;
		br->br_call = cl->cl_bc_calls + (size_t)i * isz;
		br->br_buf = *p;
		*p += isz;
	}
	return 0;
}

void clnt_bc_free(struct rpcrdma_clnt *cl)
{
	free(cl->cl_bc);
	free(cl->cl_bc_calls);
	cl->cl_bc = NULL;
	cl->cl_bc_calls = NULL;
}

int rpcrdma_clnt_bc_register(struct rpcrdma_clnt *cl, uint32_t prog, uint32_t vers,
			     rpcrdma_clnt_bc_fn fn, void *arg)
{
	unsigned i;
	int rc = 0;

	if (!fn)
		return -EINVAL;
	if (!cl->cl_cfg.cf_bc_slots)
		return -EOPNOTSUPP;
	pthread_mutex_lock(&cl->cl_lock);
	for (i = 0; i < cl->cl_bc_nprogs; i++)
		if (cl->cl_bc_progs[i].bp_prog == prog && cl->cl_bc_progs[i].bp_vers == vers)
			rc = -EEXIST;
	if (!rc && cl->cl_bc_nprogs == RPCRDMA_CLNT_BC_MAX_PROGS)
		rc = -ENOSPC;
	if (!rc)
		cl->cl_bc_progs[cl->cl_bc_nprogs++] = (struct clnt_bc_prog){
			.bp_prog = prog, .bp_vers = vers, .bp_fn = fn, .bp_arg = arg,
		};
	pthread_mutex_unlock(&cl->cl_lock);
	return rc;
}

bool clnt_bc_recv(struct rpcrdma_clnt *cl, const struct clnt_recv *rr, uint32_t len,
		  bool decoded)
{
	const uint8_t *b = rr->rr_buf;
	struct rpcrdma_hdr *rh = &cl->cl_rhdr;
	struct rpcrdma_wire_err err;
	struct clnt_bc_req *br = NULL;
	uint32_t proc, i, busy;

	if (len < RPCRDMA_HDR_MIN_BYTES)
		return false;
	proc = load_be32(b + 12);
	if (proc != RDMA_MSG && proc != RDMA_NOMSG)
		return false;
	/* Not a valid reply header: perhaps a call's (a call may carry a
	 * Read list), read as one.  A valid one is used as it is. */
	if (!decoded && rpcrdma_wire_decode_call(b, len, &cl->cl_limits, rh, &err))
		return false;
	if (proc == RDMA_MSG) {
		/* RFC 8167 2: the RPC msg_type tells calls from replies. */
		if (rh->rh_inline_len < 8 ||
		    load_be32(b + rh->rh_hdr_len + 4) != RPC_DIR_CALL)
			return false;
	} else if (!rh->rh_nread) {
		return false; /* RDMA_NOMSG without a Read chunk: a long reply */
	}
	cl->cl_stats.cs_bc_calls++;
	/* Our credit bounds the calls being served: a request whose reply
	 * was sent, its Send not yet seen complete, is done for the server,
	 * which may already have sent the next call (hence twice as many
	 * requests as credits, clnt_bc_alloc()). */
	for (i = 0, busy = 0; i < cl->cl_nbc; i++) {
		if (cl->cl_bc[i].br_owners & CLNT_BC_OWNER_UPPER)
			busy++;
		else if (!cl->cl_bc[i].br_owners && !br)
			br = &cl->cl_bc[i];
	}
	if (busy >= cl->cl_cfg.cf_bc_slots)
		br = NULL;
	if (!br) {
		/* No backchannel, or the server went beyond our credits. */
		cl->cl_stats.cs_bc_drops++;
		if (cl->cl_cfg.cf_verbose)
			clnt_log(cl, "backchannel call xid 0x%08x dropped: %s", rh->rh_xid,
				 cl->cl_nbc ? "no backchannel credit left" : "no backchannel");
		return true;
	}
	br->br_owners = CLNT_BC_OWNER_UPPER;
	br->br_xid = rh->rh_xid;
	/* RFC 8167 5.1: backchannel calls carry no chunks; one that does is
	 * answered ERR_CHUNK. */
	br->br_chunks = proc != RDMA_MSG || rh->rh_nread || rh->rh_nwrite || rh->rh_has_reply;
	br->br_call_len = 0;
	if (!br->br_chunks) {
		memcpy(br->br_call, b + rh->rh_hdr_len, rh->rh_inline_len);
		br->br_call_len = rh->rh_inline_len;
	}
	br->br_next = NULL;
	if (cl->cl_bc_todo_tail)
		cl->cl_bc_todo_tail->br_next = br;
	else
		cl->cl_bc_todo = br;
	cl->cl_bc_todo_tail = br;
	return true;
}

/* RFC 5531 9: an accepted reply header with @stat, or a denied one. */
static void clnt_bc_reply_header(struct rpcrdma_xdr *xs, uint32_t xid, int stat,
				 uint32_t low, uint32_t high)
{
	rpcrdma_xdr_put_u32(xs, xid);
	rpcrdma_xdr_put_u32(xs, RPC_DIR_REPLY);
	if (stat < 0) { /* RPC version mismatch */
		rpcrdma_xdr_put_u32(xs, RPC_MSG_DENIED);
		rpcrdma_xdr_put_u32(xs, RPC_REJECT_RPC_MISMATCH);
		rpcrdma_xdr_put_u32(xs, RPC_MSG_VERSION);
		rpcrdma_xdr_put_u32(xs, RPC_MSG_VERSION);
		return;
	}
	rpcrdma_xdr_put_u32(xs, RPC_MSG_ACCEPTED);
	rpcrdma_xdr_put_u32(xs, RPC_AUTH_NONE);
	rpcrdma_xdr_put_u32(xs, 0);
	rpcrdma_xdr_put_u32(xs, (uint32_t)stat);
	if (stat == RPC_ACCEPT_PROG_MISMATCH) {
		rpcrdma_xdr_put_u32(xs, low);
		rpcrdma_xdr_put_u32(xs, high);
	}
}

/*
 * Build @br's answer in br_buf: the transport header (RFC 8167 5.2) and
 * the RPC reply, or RDMA_ERROR ERR_CHUNK.  Runs the program's handler.
 * Return: bytes to send, 0 to send nothing (an unreadable call header).
 */
static uint32_t clnt_bc_build(struct rpcrdma_clnt *cl, struct clnt_bc_req *br)
{
	uint32_t room = cl->cl_inline_send, low = UINT32_MAX, high = 0, i;
	struct clnt_bc_prog prog = { 0 };
	struct rpcrdma_rpc_msg msg;
	struct rpcrdma_xdr args, res;
	uint8_t *p = br->br_buf;
	int rc, stat;

	if (br->br_chunks) {
		rc = rpcrdma_wire_encode_error(p, room, br->br_xid, cl->cl_cfg.cf_bc_slots,
					       ERR_CHUNK);
		return rc < 0 ? 0 : (uint32_t)rc;
	}
	rc = rpcrdma_wire_decode_rpc(br->br_call, br->br_call_len, &msg);
	if (rc && rc != -EPROTO)
		return 0;
	store_be32(p, br->br_xid);
	store_be32(p + 4, RPCRDMA_VERSION);
	store_be32(p + 8, cl->cl_cfg.cf_bc_slots); /* RFC 8167 4.1: our backchannel credit */
	store_be32(p + 12, RDMA_MSG);
	store_be32(p + 16, 0);
	store_be32(p + 20, 0);
	store_be32(p + 24, 0);
	rpcrdma_xdr_init(&res, p + RPCRDMA_HDR_MIN_BYTES, room - RPCRDMA_HDR_MIN_BYTES);
	if (rc == -EPROTO) {
		clnt_bc_reply_header(&res, msg.rm_xid, -1, 0, 0);
		return RPCRDMA_HDR_MIN_BYTES + (uint32_t)res.xs_pos;
	}
	pthread_mutex_lock(&cl->cl_lock);
	for (i = 0; i < cl->cl_bc_nprogs; i++) {
		const struct clnt_bc_prog *bp = &cl->cl_bc_progs[i];

		if (bp->bp_prog != msg.rm_prog)
			continue;
		if (bp->bp_vers == msg.rm_vers)
			prog = *bp;
		low = bp->bp_vers < low ? bp->bp_vers : low;
		high = bp->bp_vers > high ? bp->bp_vers : high;
	}
	pthread_mutex_unlock(&cl->cl_lock);
	if (!prog.bp_fn) {
		clnt_bc_reply_header(&res, msg.rm_xid,
				     high ? RPC_ACCEPT_PROG_MISMATCH : RPC_ACCEPT_PROG_UNAVAIL,
				     low, high);
		return RPCRDMA_HDR_MIN_BYTES + (uint32_t)res.xs_pos;
	}
	rpcrdma_xdr_init(&args, br->br_call, br->br_call_len);
	args.xs_pos = msg.rm_hdr_len;
	res.xs_pos = 24; /* room for the accepted reply header */
	stat = prog.bp_fn(&msg, &args, &res, prog.bp_arg);
	if (stat == RPC_ACCEPT_SUCCESS && !rpcrdma_xdr_ok(&res))
		stat = RPC_ACCEPT_SYSTEM_ERR;
	if (stat != RPC_ACCEPT_SUCCESS) {
		rpcrdma_xdr_init(&res, p + RPCRDMA_HDR_MIN_BYTES, room - RPCRDMA_HDR_MIN_BYTES);
		clnt_bc_reply_header(&res, msg.rm_xid, stat, 0, 0);
		return RPCRDMA_HDR_MIN_BYTES + (uint32_t)res.xs_pos;
	}
	i = (uint32_t)res.xs_pos;
	res.xs_pos = 0;
	clnt_bc_reply_header(&res, msg.rm_xid, RPC_ACCEPT_SUCCESS, 0, 0);
	return RPCRDMA_HDR_MIN_BYTES + i;
}

void clnt_bc_run(struct rpcrdma_clnt *cl)
{
	struct clnt_bc_req *br, *next;
	struct ibv_send_wr *bad;
	uint32_t len;
	int rc;

	if (!cl->cl_nbc)
		return; /* no backchannel: nothing is ever queued */
	pthread_mutex_lock(&cl->cl_lock);
	br = cl->cl_bc_todo;
	cl->cl_bc_todo = cl->cl_bc_todo_tail = NULL;
	pthread_mutex_unlock(&cl->cl_lock);
	for (; br; br = next) {
		next = br->br_next;
		br->br_next = NULL;
		len = clnt_bc_build(cl, br);
		pthread_mutex_lock(&cl->cl_lock);
		if (!len || !cl->cl_connected || !br->br_owners) {
			/* Unreadable, or its connection went meanwhile: the
			 * server will not get this reply. */
			cl->cl_stats.cs_bc_drops++;
			br->br_owners = 0;
			pthread_mutex_unlock(&cl->cl_lock);
			continue;
		}
		memset(&br->br_wr, 0, sizeof(br->br_wr));
		br->br_sge.addr = (uintptr_t)br->br_buf;
		br->br_sge.length = len;
		br->br_sge.lkey = cl->cl_mr->lkey;
		br->br_wr.wr_id = (uintptr_t)&br->br_cqe;
		br->br_wr.sg_list = &br->br_sge;
		br->br_wr.num_sge = 1;
		br->br_wr.opcode = IBV_WR_SEND;
		br->br_wr.send_flags = IBV_SEND_SIGNALED;
		/* The Send owns it from the post; the program lets go. */
		br->br_owners = CLNT_BC_OWNER_SEND;
		clnt_capture_send(cl, &br->br_wr);
		rc = rpcrdma_verbs_post_send(cl->cl_qp, &br->br_wr, &bad);
		if (rc) {
			br->br_owners = 0;
			cl->cl_stats.cs_bc_drops++;
			clnt_log(cl, "backchannel reply Send post failed: %s: disconnecting",
				 strerror(-rc));
			clnt_disconnected(cl);
		} else if (br->br_chunks) {
			cl->cl_stats.cs_bc_errors++;
		} else {
			cl->cl_stats.cs_bc_replies++;
		}
		pthread_mutex_unlock(&cl->cl_lock);
	}
}

void clnt_bc_send_complete(struct rpcrdma_clnt *cl, struct rpcrdma_cqe *cqe,
			   const struct ibv_wc *wc)
{
	struct clnt_bc_req *br = rpcrdma_container_of(cqe, struct clnt_bc_req, br_cqe);

	br->br_owners &= ~CLNT_BC_OWNER_SEND;
	if (wc->status != IBV_WC_SUCCESS && cl->cl_connected) {
		if (wc->status != IBV_WC_WR_FLUSH_ERR)
			clnt_log(cl, "backchannel reply Send failed: %s",
				 ibv_wc_status_str(wc->status));
		clnt_disconnected(cl);
	}
}

void clnt_bc_release_all(struct rpcrdma_clnt *cl)
{
	uint32_t i;

	for (i = 0; i < cl->cl_nbc; i++) {
		if (cl->cl_bc[i].br_owners & CLNT_BC_OWNER_UPPER)
			cl->cl_stats.cs_bc_drops++;
		cl->cl_bc[i].br_owners = 0;
		cl->cl_bc[i].br_next = NULL;
	}
	cl->cl_bc_todo = cl->cl_bc_todo_tail = NULL;
}
