// SPDX-License-Identifier: MIT
/*
 * fuzz_svc.c - libFuzzer target over the Responder's whole receive path,
 * through the verbs seam: transport header decode, Read chunk layout and
 * RDMA Reads, call rebuild, RPC dispatch, and the reply path (inline, Write
 * chunk, Reply chunk, RDMA_ERROR).
 *
 * The device is the unit tests' shared fake (tests/unit/fake_verbs.c).
 * Input: one control byte, then the received message (at most the inline
 * size).  Control bits script the completions:
 *   0x01 the RDMA Reads fail (IBV_WC_REM_ACCESS_ERR);
 *   0x02 completions are polled inside every post_send;
 *   0x04 the Sends complete flushed (IBV_WC_WR_FLUSH_ERR);
 *   0x08 an error puts the QP in error, as on a real RC QP: everything
 *        outstanding and everything posted later flushes;
 *   0x10 half the poll batches interleave send- and receive-queue
 *        completions (each queue kept in order);
 *   0x20 one post_send or post_recv in ten fails with ENOMEM.
 * The fault generator is seeded from the input, so an input replays
 * exactly.  Every segment of the message's chunk lists (as the server's
 * own limits decode them, the first FV_MAX_REMOTE) is reachable by RDMA:
 * each maps to the start of one 2 MiB "remote" area, whatever its handle
 * and offset.  Dispatch runs on this thread.
 *
 * After each input every call context and every Receive must be back
 * (or, when the connection broke, it must drain and free to baseline:
 * contexts, Receives, registered regions); anything else is a leak and
 * aborts.  So does any work request the QP would refuse (more than
 * RPCRDMA_RW_MAX_SGE entries, a local address outside a live region, an
 * RDMA Read with more than one entry), a signalled RDMA Write or an
 * unsignalled Send.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "svc/svc_internal.h"
#include "fake_verbs.h"
#include "tprog.h"

#define REMOTE_BYTES (2u << 20)

enum {
	CTL_READ_FAIL = 0x01,
	CTL_INSIDE_POST = 0x02,
	CTL_SEND_FLUSH = 0x04,
	CTL_QP_ERROR = 0x08,
	CTL_REORDER = 0x10,
	CTL_POST_FAIL = 0x20,
};

static uint8_t remote[REMOTE_BYTES];
static struct rpcrdma_verbs_ops fz_ops;
static struct svc_conn *conn;
static struct rpcrdma_svc svc;
static struct rdma_cm_id id;
static struct ibv_qp qp;
static struct ibv_pd pd;
static struct rpcrdma_hdr hdr;

/* The QP was created with max_send_sge RPCRDMA_RW_MAX_SGE: more is refused. */
static int fz_post_send(struct ibv_qp *q, struct ibv_send_wr *wr, struct ibv_send_wr **bad)
{
	const struct ibv_send_wr *s;

	for (s = wr; s; s = s->next)
		if (s->num_sge > (int)RPCRDMA_RW_MAX_SGE)
			abort();
	return fv_ops.vo_post_send(q, wr, bad);
}

static void fz_poll_inside(void *arg)
{
	(void)arg;
	svc_conn_cq_event_poll(conn);
}

/* A new connection on a fresh, fault-free QP, its Receives all posted. */
static void conn_new(void)
{
	memset(&fv.fv_faults, 0, sizeof(fv.fv_faults));
	fv.fv_read_status = IBV_WC_SUCCESS;
	fv.fv_auto_flush = false;
	fv_qp_reset();
	conn = calloc(1, sizeof(*conn));
	if (!conn)
		abort();
	conn->sx_svc = &svc;
	conn->sx_grp = &svc.sv_groups[0];
	conn->sx_id = &id;
	conn->sx_dev = svc_dev_get(&svc.sv_groups[0], NULL, &pd);
	if (!conn->sx_dev)
		abort();
	conn->sx_credits = svc.sv_cfg.sc_credits;
	conn->sx_max_credits = svc.sv_cfg.sc_credits;
	conn->sx_inline_recv = svc.sv_cfg.sc_inline_size;
	conn->sx_inline_send = svc.sv_cfg.sc_inline_size;
	conn->sx_peer_rsi = true;
	/* Pool sizes left 0: the configured ones, as svc_conn_accept() sets
	 * them (sc_small_contexts small, sc_call_contexts large).  One call
	 * per input never empties either pool. */
	if (svc_conn_alloc_pools(conn) || svc_conn_post_all_recvs(conn))
		abort();
	svc.sv_groups[0].gr_conns = conn;
}

static void conn_free(void)
{
	conn->sx_id = NULL;
	svc_conn_destroy(conn);
	svc.sv_groups[0].gr_conns = NULL;
	conn = NULL;
}

static void setup(void)
{
	struct rpcrdma_svc_config cfg = {
		.sc_credits = 8,
		.sc_inline_size = 1024,
		.sc_max_payload = 128u << 10,
		.sc_call_contexts = 2,
		/* The smallest budget allowed: 16 slabs of 256 KiB. */
		.sc_memory = 16u << 18,
		.sc_threads = 1,
		.sc_log = fopen("/dev/null", "w"),
	};

	fv_reset();
	fz_ops = fv_ops;
	fz_ops.vo_post_send = fz_post_send;
	rpcrdma_verbs = &fz_ops;
	fv.fv_inside_post = fz_poll_inside;
	if (svc_init(&svc, &cfg) || rpcrdma_svc_register(&svc, 0x20000077, 1, tprog_dispatch, NULL))
		abort();
	id.qp = &qp;
	id.route.addr.dst_sin.sin_family = AF_INET;
	conn_new();
}

/* Script this input's completions from the control byte; the generator's
 * seed is a hash of the whole input. */
static void script(const uint8_t *data, size_t size)
{
	uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */
	unsigned ctl = data[0];
	size_t i;

	for (i = 0; i < size; i++)
		h = (h ^ data[i]) * 0x100000001b3ull;
	fv.fv_rng = h | 1;
	memset(&fv.fv_faults, 0, sizeof(fv.fv_faults));
	fv.fv_read_status = ctl & CTL_READ_FAIL ? IBV_WC_REM_ACCESS_ERR : IBV_WC_SUCCESS;
	fv.fv_faults.ff_inside_post_pct = ctl & CTL_INSIDE_POST ? 100 : 0;
	fv.fv_faults.ff_flush_pct[FV_Q_SEND] = ctl & CTL_SEND_FLUSH ? 100 : 0;
	fv.fv_auto_flush = ctl & CTL_QP_ERROR;
	fv.fv_faults.ff_reorder_pct = ctl & CTL_REORDER ? 50 : 0;
	fv.fv_faults.ff_post_fail_pct[0] = ctl & CTL_POST_FAIL ? 10 : 0;
	fv.fv_faults.ff_post_fail_pct[1] = ctl & CTL_POST_FAIL ? 10 : 0;
}

/* Make the message's segments reachable: each maps to the remote area. */
static void map_segments(const uint8_t *msg, size_t len)
{
	struct rpcrdma_wire_err err;
	uint32_t i;

	fv.fv_nremote = 0;
	if (rpcrdma_wire_decode_call(msg, len, &svc.sv_limits, &hdr, &err))
		return;
	for (i = 0; i < hdr.rh_nsegs && i < FV_MAX_REMOTE; i++) {
		const struct rpcrdma_segment *sg = &hdr.rh_segs[i];

		fv_add_remote(sg->rs_handle, sg->rs_offset, remote,
			      sg->rs_length < REMOTE_BYTES ? sg->rs_length : REMOTE_BYTES);
	}
}

/* Drain the CQ as the run loop does: again while the drain stopped at
 * its budget, and while completions came after a drain's last (short)
 * poll, which on an armed CQ raise another event (svc_dev_cq_event():
 * drain, arm, drain).  The fake device's one CQ takes the Sends' and
 * Reads' completions too, made during the drain. */
static void poll_all(void)
{
	do
		svc_conn_cq_event_poll(conn);
	while (conn->sx_more || fv_cq_pending());
}

/* Run queued calls here as a worker would, and finish them as the run
 * loop does, until nothing is left to do. */
static void run_queued(void)
{
	while (svc_worker_run_one(&svc.sv_groups[0])) {
		svc_take_done(&svc.sv_groups[0]);
		poll_all();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!conn)
		setup();
	if (size < 1 || size - 1 > conn->sx_inline_recv)
		return 0;
	script(data, size);
	map_segments(data + 1, size - 1);

	/* The oldest posted Receive takes the message. */
	if (fv_deliver(data + 1, (uint32_t)(size - 1)))
		abort();
	poll_all();
	run_queued();
	poll_all();

	if (fv_sq_pending() || fv_cq_pending() || fv.fv_signaled_writes ||
	    fv.fv_unsignaled_sends)
		abort(); /* work left behind, or a Write/Send wrongly signalled */
	if (conn->sx_closing) {
		/* The QP is in error: every posted Receive flushes. */
		fv_qp_to_error();
		poll_all();
		run_queued();
		if (!conn->sx_reap || conn->sx_calls_out)
			abort(); /* a context or Receive leaked */
		conn_free();
		/* No buffer handed out; the shared pool stays registered,
		 * within the budget, for the next connection. */
		if (atomic_load(&svc.sv_ct.ctx_in_use) ||
		    atomic_load(&svc.sv_ct.buf_bytes_in_use) ||
		    atomic_load(&svc.sv_ct.mrs_open) != fv_live_mrs() ||
		    atomic_load(&svc.sv_ct.mr_bytes) > svc.sv_cfg.sc_memory)
			abort();
		conn_new();
		return 0;
	}
	if (conn->sx_calls_out || conn->sx_dev->dv_rwait_head ||
	    conn->sx_recvs_posted != conn->sx_nrecvs || fv_recvs_posted() != conn->sx_nrecvs)
		abort(); /* a context or Receive did not come back */
	return 0;
}
