// SPDX-License-Identifier: MIT
/*
 * fuzz_svc.c - libFuzzer target over the Responder's whole receive path,
 * through the verbs seam: transport header decode, Read chunk layout and
 * RDMA Reads, call rebuild, RPC dispatch, and the reply path (inline, Write
 * chunk, Reply chunk, RDMA_ERROR).
 *
 * Input: one control byte, then the received message (at most the inline
 * size).  Control bits: 0x01 the RDMA Reads fail (remote access error),
 * 0x02 completions arrive inside post_send, 0x04 the Send completions
 * are flushed instead of succeeding.  A fake device executes Reads and
 * Writes against a zero-filled 2 MiB "remote" area whatever the handle;
 * dispatch runs on this thread.
 *
 * After each input every call context and every Receive must be back
 * (or, when the connection broke, it must be ready to free); anything else
 * is a leak and aborts.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "svc/svc_internal.h"

#define REMOTE_BYTES (2u << 20)
#define MAX_CQ 4096

static uint8_t remote[REMOTE_BYTES];
static struct ibv_wc cq[MAX_CQ];
static unsigned cq_head, cq_tail;
static uint64_t posted_recvs[256];
static unsigned nposted;
static unsigned ctl;
static bool in_post;
static struct ibv_mr mr;
static struct svc_conn *conn;
static struct rpcrdma_svc svc;
static struct rdma_cm_id id;
static struct ibv_qp qp;
static struct ibv_pd pd;

static void cq_push(uint64_t wr_id, enum ibv_wc_status st, uint32_t len)
{
	struct ibv_wc *wc;

	if (cq_tail - cq_head >= MAX_CQ)
		abort(); /* more outstanding work than any queue allows */
	wc = &cq[cq_tail++ % MAX_CQ];
	memset(wc, 0, sizeof(*wc));
	wc->wr_id = wr_id;
	wc->status = st;
	wc->byte_len = len;
}

/* The local address must lie inside the registered slab. */
static void check_local(const struct ibv_sge *sge)
{
	uintptr_t a = (uintptr_t)sge->addr, base = (uintptr_t)mr.addr;

	if (sge->lkey != mr.lkey || a < base || a + sge->length > base + mr.length ||
	    a + sge->length < a)
		abort();
}

static uint8_t *remote_at(uint64_t addr, uint32_t len)
{
	return remote + (addr % (REMOTE_BYTES - len + 1));
}

static int fk_post_send(struct ibv_qp *q, struct ibv_send_wr *wr, struct ibv_send_wr **bad)
{
	(void)q;
	(void)bad;
	for (; wr; wr = wr->next) {
		uint64_t raddr = wr->wr.rdma.remote_addr;
		int i;

		if (wr->num_sge > (int)RPCRDMA_RW_MAX_SGE)
			abort();
		for (i = 0; i < wr->num_sge; i++)
			check_local(&wr->sg_list[i]);
		switch (wr->opcode) {
		case IBV_WR_RDMA_READ:
			if (wr->num_sge != 1 || wr->sg_list[0].length > REMOTE_BYTES)
				abort();
			if (!(ctl & 1))
				memcpy((void *)(uintptr_t)wr->sg_list[0].addr,
				       remote_at(raddr, wr->sg_list[0].length),
				       wr->sg_list[0].length);
			if (wr->send_flags & IBV_SEND_SIGNALED)
				cq_push(wr->wr_id, ctl & 1 ? IBV_WC_REM_ACCESS_ERR : IBV_WC_SUCCESS, 0);
			break;
		case IBV_WR_RDMA_WRITE:
			for (i = 0; i < wr->num_sge; i++) {
				uint32_t len = wr->sg_list[i].length;

				if (len > REMOTE_BYTES)
					abort();
				memcpy(remote_at(raddr, len), (void *)(uintptr_t)wr->sg_list[i].addr, len);
				raddr += len;
			}
			if (wr->send_flags & IBV_SEND_SIGNALED)
				abort(); /* Writes are never signalled */
			break;
		case IBV_WR_SEND:
		case IBV_WR_SEND_WITH_INV:
			if (!(wr->send_flags & IBV_SEND_SIGNALED))
				abort();
			cq_push(wr->wr_id, ctl & 4 ? IBV_WC_WR_FLUSH_ERR : IBV_WC_SUCCESS, 0);
			break;
		default:
			abort();
		}
	}
	if ((ctl & 2) && !in_post) {
		in_post = true;
		svc_conn_cq_event_poll(conn);
		in_post = false;
	}
	return 0;
}

static int fk_post_recv(struct ibv_qp *q, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
	(void)q;
	(void)bad;
	for (; wr; wr = wr->next) {
		if (nposted == sizeof(posted_recvs) / sizeof(posted_recvs[0]))
			abort();
		posted_recvs[nposted++] = wr->wr_id;
	}
	return 0;
}

static int fk_poll(struct ibv_cq *c, int n, struct ibv_wc *wc)
{
	int got = 0;

	(void)c;
	while (got < n && cq_head != cq_tail)
		wc[got++] = cq[cq_head++ % MAX_CQ];
	return got;
}

static struct ibv_mr *fk_reg_mr(struct ibv_pd *p, void *addr, size_t len, int access)
{
	(void)p;
	(void)access;
	mr.addr = addr;
	mr.length = len;
	mr.lkey = 0x5a5a;
	return &mr;
}

static int fk_dereg_mr(struct ibv_mr *m)
{
	(void)m;
	return 0;
}

static int fk_disconnect(struct rdma_cm_id *i)
{
	(void)i;
	return 0;
}

static const struct rpcrdma_verbs_ops fk_ops = {
	.vo_post_send = fk_post_send,
	.vo_post_recv = fk_post_recv,
	.vo_poll_cq = fk_poll,
	.vo_reg_mr = fk_reg_mr,
	.vo_dereg_mr = fk_dereg_mr,
	.vo_disconnect = fk_disconnect,
};

/* A test program: 0 NULL, 1 echo inline, 2 echo as DDP data, 3 N zero bytes. */
static int fz_dispatch(struct rpcrdma_svc_req *req, void *arg)
{
	const uint8_t *p;
	uint32_t len;
	uint8_t *dst;

	(void)arg;
	switch (req->rq_msg.rm_proc) {
	case 0:
		return RPCRDMA_SVC_SUCCESS;
	case 1:
	case 2:
		p = rpcrdma_xdr_get_opaque(&req->rq_args, 1u << 20, &len);
		if (!rpcrdma_xdr_ok(&req->rq_args))
			return RPCRDMA_SVC_GARBAGE_ARGS;
		if (req->rq_msg.rm_proc == 1) {
			rpcrdma_xdr_put_opaque(&req->rq_res, p, len);
			return RPCRDMA_SVC_SUCCESS;
		}
		rpcrdma_xdr_put_u32(&req->rq_res, len);
		dst = rpcrdma_svc_ddp_begin(req, len);
		if (!dst)
			return RPCRDMA_SVC_SYSTEM_ERR;
		memcpy(dst, p, len);
		rpcrdma_svc_ddp_end(req, len);
		return RPCRDMA_SVC_SUCCESS;
	case 3:
		len = rpcrdma_xdr_get_u32(&req->rq_args);
		if (!rpcrdma_xdr_ok(&req->rq_args))
			return RPCRDMA_SVC_GARBAGE_ARGS;
		if (!rpcrdma_xdr_reserve(&req->rq_res, len % (200u << 10)))
			return RPCRDMA_SVC_SYSTEM_ERR;
		return RPCRDMA_SVC_SUCCESS;
	default:
		return RPCRDMA_SVC_PROC_UNAVAIL;
	}
}

static void conn_new(void)
{
	conn = calloc(1, sizeof(*conn));
	if (!conn)
		abort();
	conn->sx_svc = &svc;
	conn->sx_id = &id;
	conn->sx_pd = &pd;
	conn->sx_credits = svc.sv_cfg.sc_credits;
	conn->sx_inline_recv = svc.sv_cfg.sc_inline_size;
	conn->sx_inline_send = svc.sv_cfg.sc_inline_size;
	conn->sx_peer_rsi = true;
	conn->sx_nrecvs = conn->sx_credits + 8;
	conn->sx_ncalls = svc.sv_cfg.sc_call_contexts;
	nposted = 0;
	if (svc_conn_alloc_pools(conn) || svc_conn_post_all_recvs(conn))
		abort();
	svc.sv_conns = conn;
}

static void conn_free(void)
{
	conn->sx_id = NULL;
	conn->sx_pd = NULL;
	svc_conn_destroy(conn);
	svc.sv_conns = NULL;
	conn = NULL;
	cq_head = cq_tail = 0;
}

static void setup(void)
{
	struct rpcrdma_svc_config cfg = {
		.sc_credits = 8,
		.sc_inline_size = 1024,
		.sc_max_payload = 128u << 10,
		.sc_call_contexts = 2,
		.sc_threads = 1,
		.sc_log = fopen("/dev/null", "w"),
	};

	rpcrdma_verbs = &fk_ops;
	if (svc_init(&svc, &cfg) || rpcrdma_svc_register(&svc, 0x20000077, 1, fz_dispatch, NULL))
		abort();
	id.qp = &qp;
	id.route.addr.dst_sin.sin_family = AF_INET;
	conn_new();
}

/* Run queued calls here and finish them, until nothing is left to do. */
static void run_queued(void)
{
	for (;;) {
		struct svc_call *cc = svc.sv_wq_head;

		if (!cc)
			break;
		svc.sv_wq_head = cc->cc_next;
		if (!svc.sv_wq_head)
			svc.sv_wq_tail = NULL;
		cc->cc_status = cc->cc_fn(&cc->cc_req, cc->cc_fn_arg);
		svc_rpc_finish(cc);
		svc_conn_cq_event_poll(conn);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct svc_recv *rc;
	uint64_t wr_id;
	unsigned i;

	if (!conn)
		setup();
	if (size < 1 || size - 1 > conn->sx_inline_recv || !nposted)
		return 0;
	ctl = data[0];

	/* The oldest posted Receive takes the message. */
	wr_id = posted_recvs[0];
	memmove(posted_recvs, posted_recvs + 1, --nposted * sizeof(posted_recvs[0]));
	rc = rpcrdma_container_of((struct rpcrdma_cqe *)(uintptr_t)wr_id, struct svc_recv, rc_cqe);
	memcpy(rc->rc_buf, data + 1, size - 1);
	cq_push(wr_id, IBV_WC_SUCCESS, (uint32_t)(size - 1));
	svc_conn_cq_event_poll(conn);
	run_queued();
	svc_conn_cq_event_poll(conn);

	if (conn->sx_closing) {
		/* The QP is in error: every posted Receive flushes. */
		for (i = 0; i < nposted; i++)
			cq_push(posted_recvs[i], IBV_WC_WR_FLUSH_ERR, 0);
		nposted = 0;
		svc_conn_cq_event_poll(conn);
		run_queued();
		if (!conn->sx_reap || conn->sx_calls_out)
			abort(); /* a context or Receive leaked */
		conn_free();
		if (atomic_load(&svc.sv_ct.ctx_in_use) || atomic_load(&svc.sv_ct.mrs_open))
			abort();
		conn_new();
		return 0;
	}
	if (conn->sx_calls_out || conn->sx_wait_head ||
	    conn->sx_recvs_posted != conn->sx_nrecvs || nposted != conn->sx_nrecvs)
		abort(); /* a context or Receive did not come back */
	return 0;
}
