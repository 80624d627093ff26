// SPDX-License-Identifier: MIT
/*
 * clnt_marshal.c - marshalling a call (RFC 8166 3.5): inline, a Read
 * chunk at the DDP-eligible data's position, RDMA_NOMSG, Write and Reply
 * chunks; the RPC call header (RFC 5531 9).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "clnt/clnt_internal.h"
#include "common/be.h"

/* The transport header being marshalled, one per thread. */
static __thread struct rpcrdma_hdr clnt_marshal_hdr;

static void seg_of(struct rpcrdma_segment *seg, const struct clnt_mapping *m)
{
	seg->rs_handle = m->cm_rkey;
	seg->rs_length = m->cm_len;
	seg->rs_offset = (uint64_t)(uintptr_t)m->cm_addr;
}

/* The RPC call header (RFC 5531 9): xid, CALL, 2, prog, vers, proc, cred, verf. */
static uint32_t clnt_rpc_header(struct rpcrdma_clnt *cl, struct clnt_req *rl, uint8_t *p)
{
	const struct rpcrdma_clnt_call *ca = rl->rl_call;

	store_be32(p, rl->rl_xid);
	store_be32(p + 4, RPC_DIR_CALL);
	store_be32(p + 8, RPC_MSG_VERSION);
	store_be32(p + 12, ca->ca_prog);
	store_be32(p + 16, ca->ca_vers);
	store_be32(p + 20, ca->ca_proc);
	memcpy(p + 24, cl->cl_cred, cl->cl_cred_len);
	return 24 + cl->cl_cred_len;
}

/* Copy head, DDP data (+ zero pad) and tail to @dst; return bytes. */
static uint32_t clnt_copy_args(const struct rpcrdma_clnt_call *ca, uint8_t *dst)
{
	uint32_t pad = (uint32_t)RPCRDMA_XDR_ALIGN(ca->ca_ddp_len) - ca->ca_ddp_len;
	uint8_t *p = dst;

	if (ca->ca_args_len)
		memcpy(p, ca->ca_args, ca->ca_args_len);
	p += ca->ca_args_len;
	if (ca->ca_ddp_len)
		memcpy(p, ca->ca_ddp, ca->ca_ddp_len);
	p += ca->ca_ddp_len;
	memset(p, 0, pad);
	p += pad;
	if (ca->ca_tail_len)
		memcpy(p, ca->ca_tail, ca->ca_tail_len);
	p += ca->ca_tail_len;
	return (uint32_t)(p - dst);
}

/*
 * Marshal @rl's call into its header and body buffers, registering the
 * caller's memory the chunks need.  Called without the lock.  On failure
 * every registration made here is released; the request's owners are
 * left alone.
 */
int clnt_marshal(struct rpcrdma_clnt *cl, struct clnt_req *rl)
{
	struct rpcrdma_clnt_call *ca = rl->rl_call;
	uint32_t nwrite = ca->ca_rddp_cap ? 1 : 0, nreply = 0, nread = 0;
	uint32_t rpc_len, full_len, head_len, pos = 0;
	uint8_t rpchdr[24 + CLNT_RPC_HDR_MAX];
	struct rpcrdma_hdr *rh;
	uint64_t full64;
	int rc;

	full64 = (uint64_t)24 + cl->cl_cred_len + ca->ca_args_len +
		 RPCRDMA_XDR_ALIGN((uint64_t)ca->ca_ddp_len) + ca->ca_tail_len;
	if (full64 > (64u << 20))
		return -EMSGSIZE;
	rl->rl_nbind = 0;
	rpc_len = clnt_rpc_header(cl, rl, rpchdr);
	full_len = (uint32_t)full64;
	head_len = rpc_len + ca->ca_args_len;

	/* Reply chunk: when the largest reply may not fit our inline receive. */
	if ((uint64_t)ca->ca_res_cap + rpcrdma_wire_max_hdr_size(0, nwrite, nwrite, 0) >
	    cl->cl_inline_recv)
		nreply = 1;

	/* No allocation per call: the header being built is this thread's
	 * (marshalling runs without the lock, one call at a time per thread). */
	rh = &clnt_marshal_hdr;
	rpcrdma_wire_hdr_init(rh, rl->rl_xid, cl->cl_max_credits, RDMA_MSG);

	if (rpcrdma_wire_max_hdr_size(0, nwrite, nwrite, nreply) + full_len <=
	    cl->cl_inline_send) {
		/* Everything inline. */
		memcpy(rl->rl_body, rpchdr, rpc_len);
		rl->rl_body_len = rpc_len + clnt_copy_args(ca, rl->rl_body + rpc_len);
	} else if (ca->ca_ddp_len &&
		   rpcrdma_wire_max_hdr_size(1, nwrite, nwrite, nreply) + head_len +
		   ca->ca_tail_len <= cl->cl_inline_send) {
		/* DDP-eligible data in a Read chunk at its XDR position, pad omitted. */
		rc = clnt_map(cl, rl, 0, &rl->rl_read, (void *)(uintptr_t)ca->ca_ddp,
			      ca->ca_ddp_len,
			      IBV_ACCESS_REMOTE_READ);
		if (rc)
			goto err;
		memcpy(rl->rl_body, rpchdr, rpc_len);
		if (ca->ca_args_len)
			memcpy(rl->rl_body + rpc_len, ca->ca_args, ca->ca_args_len);
		if (ca->ca_tail_len)
			memcpy(rl->rl_body + head_len, ca->ca_tail, ca->ca_tail_len);
		rl->rl_body_len = head_len + ca->ca_tail_len;
		pos = head_len;
		nread = 1;
	} else {
		/* The whole call in a position-zero Read chunk (RDMA_NOMSG). */
		if (rpcrdma_wire_max_hdr_size(1, nwrite, nwrite, nreply) > cl->cl_inline_send) {
			rc = -EMSGSIZE;
			goto err;
		}
		/* The request keeps its copy buffer between calls. */
		if (full_len > rl->rl_nomsg_cap) {
			free(rl->rl_nomsg);
			rl->rl_nomsg_cap = 0;
			rl->rl_nomsg = malloc(full_len);
			if (!rl->rl_nomsg) {
				rc = -ENOMEM;
				goto err;
			}
			rl->rl_nomsg_cap = full_len;
		}
		memcpy(rl->rl_nomsg, rpchdr, rpc_len);
		clnt_copy_args(ca, rl->rl_nomsg + rpc_len);
		rc = clnt_map(cl, rl, 0, &rl->rl_read, rl->rl_nomsg, full_len,
			      IBV_ACCESS_REMOTE_READ);
		if (rc)
			goto err;
		rl->rl_body_len = 0;
		rh->rh_proc = RDMA_NOMSG;
		nread = 1;
	}
	if (nread) {
		seg_of(&rh->rh_segs[rh->rh_nsegs], &rl->rl_read);
		rh->rh_read[0] = (struct rpcrdma_chunk){
			.rc_position = pos, .rc_first = rh->rh_nsegs, .rc_nsegs = 1,
			.rc_length = rl->rl_read.cm_len,
		};
		rh->rh_nsegs++;
		rh->rh_nread = 1;
	}
	if (nwrite) {
		rc = clnt_map(cl, rl, 1, &rl->rl_write, ca->ca_rddp, ca->ca_rddp_cap,
			      IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
		if (rc)
			goto err;
		seg_of(&rh->rh_segs[rh->rh_nsegs], &rl->rl_write);
		rh->rh_write[0] = (struct rpcrdma_chunk){
			.rc_first = rh->rh_nsegs, .rc_nsegs = 1, .rc_length = ca->ca_rddp_cap,
		};
		rh->rh_nsegs++;
		rh->rh_nwrite = 1;
	}
	if (nreply) {
		rc = clnt_map(cl, rl, 2, &rl->rl_reply, ca->ca_res, ca->ca_res_cap,
			      IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
		if (rc)
			goto err;
		seg_of(&rh->rh_segs[rh->rh_nsegs], &rl->rl_reply);
		rh->rh_reply = (struct rpcrdma_chunk){
			.rc_first = rh->rh_nsegs, .rc_nsegs = 1, .rc_length = ca->ca_res_cap,
		};
		rh->rh_nsegs++;
		rh->rh_has_reply = true;
	}
	rc = rpcrdma_wire_encode(rl->rl_hdrbuf, CLNT_HDR_BUF, rh);
	if (rc < 0)
		goto err;
	rl->rl_hdr_len = (uint32_t)rc;
	rl->rl_proc = rh->rh_proc;

	memset(&rl->rl_wr, 0, sizeof(rl->rl_wr));
	rl->rl_sge[0].addr = (uintptr_t)rl->rl_hdrbuf;
	rl->rl_sge[0].length = rl->rl_hdr_len;
	rl->rl_sge[0].lkey = cl->cl_mr->lkey;
	rl->rl_sge[1].addr = (uintptr_t)rl->rl_body;
	rl->rl_sge[1].length = rl->rl_body_len;
	rl->rl_sge[1].lkey = cl->cl_mr->lkey;
	rl->rl_wr.sg_list = rl->rl_sge;
	rl->rl_wr.num_sge = rl->rl_body_len ? 2 : 1;
	rl->rl_wr.opcode = IBV_WR_SEND;
	rl->rl_wr.wr_id = (uintptr_t)&rl->rl_cqe;
	return 0;

err:
	clnt_unmap(rl);
	return rc;
}

bool clnt_call_valid(const struct rpcrdma_clnt_call *ca)
{
	if ((ca->ca_args_len & 3) || (ca->ca_tail_len & 3))
		return false;
	if ((ca->ca_args_len && !ca->ca_args) || (ca->ca_tail_len && !ca->ca_tail) ||
	    (ca->ca_ddp_len && !ca->ca_ddp))
		return false;
	if (!ca->ca_res || ca->ca_res_cap < 24)
		return false;
	if (ca->ca_rddp_cap && !ca->ca_rddp)
		return false;
	return true;
}
