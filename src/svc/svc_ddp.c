// SPDX-License-Identifier: MIT
/*
 * svc_ddp.c - marking DDP-eligible result data inside a reply (RFC 8166 3.4.6).
 */
#include <string.h>

#include <rpcrdma/svc.h>

uint8_t *rpcrdma_svc_ddp_begin(struct rpcrdma_svc_req *req, size_t max)
{
	struct rpcrdma_xdr *xs = &req->rq_res;

	if (req->rq_ddp || max > SIZE_MAX - 3 ||
	    RPCRDMA_XDR_ALIGN(max) > rpcrdma_xdr_remaining(xs))
		return NULL;
	return xs->xs_base + xs->xs_pos;
}

void rpcrdma_svc_ddp_end(struct rpcrdma_svc_req *req, size_t len)
{
	struct rpcrdma_xdr *xs = &req->rq_res;
	size_t pos = xs->xs_pos;

	/* rpcrdma_xdr_reserve() zeroes the pad and moves the cursor. */
	if (!rpcrdma_xdr_reserve(xs, len))
		return;
	req->rq_ddp = true;
	req->rq_ddp_pos = pos;
	req->rq_ddp_len = len;
}
