// SPDX-License-Identifier: MIT
/*
 * tprog.c - the server tests' test program (see tprog.h).  No test
 * framework calls here: the fuzz target builds it without cmocka.
 */
#include <stdint.h>
#include <string.h>

#include "tprog.h"

int tprog_dispatch(struct rpcrdma_svc_req *req, void *arg)
{
	const uint8_t *p;
	uint32_t len;
	uint8_t *dst;

	(void)arg;
	switch (req->rq_msg.rm_proc) {
	case TP_NULL:
		return RPCRDMA_SVC_SUCCESS;
	case TP_ECHO:
	case TP_ECHO_DDP:
		p = rpcrdma_xdr_get_opaque(&req->rq_args, 1u << 20, &len);
		if (!rpcrdma_xdr_ok(&req->rq_args))
			return RPCRDMA_SVC_GARBAGE_ARGS;
		if (req->rq_msg.rm_proc == TP_ECHO) {
			rpcrdma_xdr_put_opaque(&req->rq_res, p, len);
			return RPCRDMA_SVC_SUCCESS;
		}
		rpcrdma_xdr_put_u32(&req->rq_res, len);
		dst = rpcrdma_svc_ddp_begin(req, len);
		if (!dst)
			return RPCRDMA_SVC_SYSTEM_ERR;
		memcpy(dst, p, len);
		rpcrdma_svc_ddp_end(req, len);
		rpcrdma_xdr_put_u32(&req->rq_res, TPROG_TRAILER); /* after the data */
		return RPCRDMA_SVC_SUCCESS;
	case TP_BIG:
		len = rpcrdma_xdr_get_u32(&req->rq_args);
		if (!rpcrdma_xdr_ok(&req->rq_args))
			return RPCRDMA_SVC_GARBAGE_ARGS;
		len %= TPROG_BIG_MAX;
		dst = rpcrdma_xdr_reserve(&req->rq_res, len);
		if (dst) /* NULL: no room, rq_res marks the overflow */
			memset(dst, 0x5a, len);
		return RPCRDMA_SVC_SUCCESS;
	default:
		return RPCRDMA_SVC_PROC_UNAVAIL;
	}
}
