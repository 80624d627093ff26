// SPDX-License-Identifier: MIT
/*
 * test_svc.c - the Responder transport driven through the verbs seam.
 *
 * A fake device executes posted work requests against "remote" buffers
 * registered by handle: RDMA Read copies from them, RDMA Write copies to
 * them, a Send is captured.  Completions are queued and delivered when the
 * test polls, so the test controls their order and status.  Expected bytes
 * are worked out by hand from RFC 8166 and RFC 5531.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "fake_verbs.h"
#include "test_words.h"
#include "tprog.h"

#include "capture/capture.h"
#include "svc/svc_capture.h"
#include "svc/svc_internal.h"

/* ---------- the fake device (fake_verbs.c) ---------- */

/* A provider that completes work before post returns: poll inside it. */
static void reenter_poll(void *arg)
{
	svc_conn_cq_event_poll(arg);
}

static void set_reenter(struct svc_conn *conn)
{
	fv.fv_inside_post = conn ? reenter_poll : NULL;
	fv.fv_inside_post_arg = conn;
	fv.fv_faults.ff_inside_post_pct = conn ? 100 : 0;
}

/* ---------- fixture ---------- */

struct fixture {
	struct rpcrdma_svc svc;
	struct svc_conn *conn;
	struct rdma_cm_id id;
	struct ibv_qp qp;
	struct ibv_pd pd;
};

/* Most credits the fixture's connection may grow to (setup_grow: 16). */
static uint32_t g_max_credits = 4;
static uint32_t g_credits = 4;

static int setup(void **state)
{
	struct rpcrdma_svc_config cfg = {
		.sc_credits = 4,
		.sc_inline_size = 1024,
		.sc_max_payload = 65536,
		.sc_call_contexts = 2,
		.sc_small_contexts = 4, /* one per credit */
		.sc_threads = 1,
		.sc_log = stderr,
	};
	struct fixture *f = calloc(1, sizeof(*f));

	fv_reset();
	assert_int_equal(svc_init(&f->svc, &cfg), 0);
	assert_int_equal(rpcrdma_svc_register(&f->svc, TPROG, 1, tprog_dispatch, NULL), 0);
	assert_int_equal(rpcrdma_svc_register(&f->svc, TPROG, 1, tprog_dispatch, NULL), -EEXIST);
	f->id.qp = &f->qp;
	f->id.route.addr.dst_sin.sin_family = AF_INET;
	f->conn = calloc(1, sizeof(*f->conn));
	f->conn->sx_svc = &f->svc;
	f->conn->sx_grp = &f->svc.sv_groups[0];
	f->conn->sx_id = &f->id;
	f->conn->sx_dev = svc_dev_get(&f->svc.sv_groups[0], NULL, &f->pd);
	assert_non_null(f->conn->sx_dev);
	f->conn->sx_credits = g_credits;
	f->conn->sx_max_credits = g_max_credits;
	f->conn->sx_inline_recv = 1024;
	f->conn->sx_inline_send = 1024;
	assert_int_equal(svc_conn_alloc_pools(f->conn), 0);
	assert_int_equal(svc_conn_post_all_recvs(f->conn), 0);
	/* credits + 8 spare Receives, posted with one chained post */
	assert_int_equal(fv.fv_nrecv_posted, g_credits + 8);
	f->svc.sv_groups[0].gr_conns = f->conn;
	*state = f;
	return 0;
}

/* The same with a grant of @credits that may grow to @max_credits. */
static int setup_credits(void **state, uint32_t credits, uint32_t max_credits)
{
	int rc;

	g_credits = credits;
	g_max_credits = max_credits;
	rc = setup(state);
	g_credits = g_max_credits = 4;
	return rc;
}

/* A grant that may grow from 4 to 16. */
static int setup_grow(void **state)
{
	return setup_credits(state, 4, 16);
}

/* 64 credits: 72 Receives posted. */
static int setup_wide(void **state)
{
	return setup_credits(state, 64, 64);
}

/* The same, serving calls on the run-loop thread (sc_loop_dispatch). */
static int setup_loop(void **state)
{
	struct fixture *f;

	setup(state);
	f = *state;
	f->svc.sv_cfg.sc_loop_dispatch = true;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(f->svc.sv_groups[0].gr_nworkers, 0);
	if (f->conn) {
		f->conn->sx_id = NULL;
		svc_conn_destroy(f->conn);
	}
	assert_int_equal(atomic_load(&f->svc.sv_ct.buf_bytes_in_use), 0);
	svc_dev_destroy_all(&f->svc.sv_groups[0]);
	/* Every registered region went with the device's pool. */
	assert_int_equal(atomic_load(&f->svc.sv_ct.mrs_open), 0);
	assert_int_equal(atomic_load(&f->svc.sv_ct.mr_bytes), 0);
	svc_fini(&f->svc);
	free(f);
	/* Writes go unsignalled, every Send signalled. */
	assert_int_equal(fv.fv_signaled_writes, 0);
	assert_int_equal(fv.fv_unsignaled_sends, 0);
	fv_uninstall();
	return 0;
}

/* ---------- message building ---------- */

/* Transport header fixed part: xid, vers, credits, proc (RFC 8166 4.2). */
static uint8_t *put_fixed(uint8_t *p, uint32_t xid, uint32_t vers, uint32_t credits,
			  uint32_t proc)
{
	p = put32(p, xid);
	p = put32(p, vers);
	p = put32(p, credits);
	return put32(p, proc);
}

/* An RDMA_MSG header with three empty chunk lists: 28 bytes. */
static uint8_t *put_msg_nochunks(uint8_t *p, uint32_t xid, uint32_t vers)
{
	p = put_fixed(p, xid, vers, 4, RDMA_MSG);
	p = put32(p, 0);
	p = put32(p, 0);
	return put32(p, 0);
}

/* RPC call header, AUTH_NONE: 40 bytes (RFC 5531 9). */
static uint8_t *put_call(uint8_t *p, uint32_t xid, uint32_t prog, uint32_t vers,
			 uint32_t proc)
{
	p = put32(p, xid);
	p = put32(p, 0);
	p = put32(p, 2);
	p = put32(p, prog);
	p = put32(p, vers);
	p = put32(p, proc);
	p = put32(p, 0);
	p = put32(p, 0);
	p = put32(p, 0);
	return put32(p, 0);
}

/* Fill the oldest posted Receive with @len bytes and queue its completion. */
static void queue_recv(struct fixture *f, const uint8_t *msg, uint32_t len)
{
	(void)f;
	assert_int_equal(fv_deliver(msg, len), 0);
}

/* Deliver @len bytes as the next Receive completion, then poll. */
static void deliver(struct fixture *f, const uint8_t *msg, uint32_t len)
{
	queue_recv(f, msg, len);
	svc_conn_cq_event_poll(f->conn);
}

/*
 * Run every queued call's dispatch function here, as a worker thread
 * would (no worker threads in these tests), send their replies, then poll
 * once: the Send completions free the contexts, which may start calls
 * that were waiting for one (they are queued, and run on the next call).
 */
static void run_workers(struct fixture *f)
{
	if (f->svc.sv_cfg.sc_loop_dispatch) {
		/* Served, and its reply posted, on this thread already. */
		assert_null(f->svc.sv_groups[0].gr_wq_head);
		assert_false(svc_done_pending(&f->svc.sv_groups[0]));
	}
	while (svc_worker_run_one(&f->svc.sv_groups[0]))
		;
	svc_take_done(&f->svc.sv_groups[0]);
	svc_conn_cq_event_poll(f->conn);
}

/* Call contexts of the connection's device in state @st. */
static unsigned count_state(struct fixture *f, enum svc_call_state st)
{
	struct svc_call_batch *cb;
	unsigned n = 0, i;

	for (cb = f->conn->sx_dev->dv_batches; cb; cb = cb->cb_next)
		for (i = 0; i < cb->cb_n; i++)
			n += cb->cb_calls[i].cc_state == st;
	return n;
}

static void assert_baseline(struct fixture *f)
{
	assert_int_equal(f->conn->sx_calls_out, 0);
	assert_int_equal(atomic_load(&f->svc.sv_ct.ctx_in_use), 0);
	assert_int_equal(((uint32_t)atomic_load(&f->conn->sx_svc->sv_ct.large_in_use)), 0);
	assert_int_equal(atomic_load(&f->svc.sv_ct.large_in_use), 0);
	assert_null(f->conn->sx_dev->dv_cwait_head);
	assert_int_equal(f->conn->sx_recvs_posted, f->conn->sx_nrecvs);
}

/* ---------- tests ---------- */

/* An inline call gets an inline RDMA_MSG reply with our credit grant. */
static void test_inline_call(void **state)
{
	struct fixture *f = *state;
	uint8_t msg[128], *p = msg;
	static const uint8_t want[] = {
		0, 0, 0, 0x42, 0, 0, 0, 1, 0, 0, 0, 4, 0, 0, 0, 0, /* xid vers credits MSG */
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,             /* three empty lists */
		0xaa, 0xbb, 0xcc, 0xdd, 0, 0, 0, 1,             /* rpc xid, REPLY */
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,             /* accepted, verf none */
		0, 0, 0, 0,                                     /* SUCCESS */
	};

	p = put32(p, 0x42);
	p = put32(p, 1);
	p = put32(p, 32); /* the Requester asks for 32; we grant 4 */
	p = put32(p, RDMA_MSG);
	p = put32(p, 0);
	p = put32(p, 0);
	p = put32(p, 0);
	p = put_call(p, 0xaabbccdd, TPROG, 1, TP_NULL);
	deliver(f, msg, (uint32_t)(p - msg));
	run_workers(f);
	assert_int_equal(fv.fv_nsends, 1);
	assert_int_equal(fv.fv_sent_len, sizeof(want));
	assert_memory_equal(fv.fv_sent, want, sizeof(want));
	assert_baseline(f);
	assert_int_equal(atomic_load(&f->svc.sv_ct.replies_inline[SVC_XPRT_RDMA]), 1);
}

/* Bad version: ERR_VERS (1, 1), 28 bytes, and the Receive goes back. */
static void test_bad_version(void **state)
{
	struct fixture *f = *state;
	uint8_t msg[28], *p = msg;
	static const uint8_t want[] = {
		0, 0, 0, 7, 0, 0, 0, 1, 0, 0, 0, 4, 0, 0, 0, 4, /* xid vers credits ERROR */
		0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1,             /* ERR_VERS 1 1 */
	};

	p = put32(p, 7);
	p = put32(p, 2);
	p = put32(p, 1);
	p = put32(p, RDMA_MSG);
	p = put32(p, 0);
	p = put32(p, 0);
	p = put32(p, 0);
	f->conn->sx_peer_rsi = true;
	deliver(f, msg, sizeof(msg));
	svc_conn_cq_event_poll(f->conn);
	assert_int_equal(fv.fv_send_opcode, IBV_WR_SEND); /* RDMA_ERROR never invalidates */
	assert_int_equal(fv.fv_sent_len, sizeof(want));
	assert_memory_equal(fv.fv_sent, want, sizeof(want));
	assert_baseline(f);
	assert_int_equal(atomic_load(&f->svc.sv_ct.rdma_errors_sent), 1);

	/* Three bytes: no xid to answer, dropped. */
	deliver(f, msg, 3);
	assert_int_equal(fv.fv_nsends, 1);
	assert_int_equal(atomic_load(&f->svc.sv_ct.drops), 1);
	assert_baseline(f);
}

/*
 * A Read chunk of 5001 bytes (no pad on the wire) at position 44, the
 * reply too large for the 1024-byte inline threshold: it goes by RDMA
 * Write into the Reply chunk, with an RDMA_NOMSG header.
 */
static void test_read_chunk_and_reply_chunk(void **state)
{
	struct fixture *f = *state;
	static uint8_t data[5001], reply[8192];
	uint8_t msg[256], *p = msg, *rb;
	uint32_t i;

	for (i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i * 7 + 1);
	fv_add_remote(0x99, 0x10000, data, sizeof(data));
	fv_add_remote(0x77, 0x70000, reply, sizeof(reply));
	f->conn->sx_peer_rsi = true;

	p = put_fixed(p, 0x51, 1, 4, RDMA_MSG);
	p = put32(p, 1);                 /* Read list: one segment */
	p = put32(p, 44);                /* position: after header (40) + length word */
	p = put32(p, 0x99);
	p = put32(p, 5001);
	p = put32(p, 0);
	p = put32(p, 0x10000);
	p = put32(p, 0);                 /* end of Read list */
	p = put32(p, 0);                 /* no Write list */
	p = put32(p, 1);                 /* Reply chunk, one segment */
	p = put32(p, 1);
	p = put32(p, 0x77);
	p = put32(p, 8192);
	p = put32(p, 0);
	p = put32(p, 0x70000);
	p = put_call(p, 0x5151, TPROG, 1, TP_ECHO);
	p = put32(p, 5001);              /* the opaque's length; its bytes are in the chunk */
	deliver(f, msg, (uint32_t)(p - msg));
	/* One chain, one signalled completion, already queued by the fake. */
	assert_int_equal(fv.fv_nreads, 1);
	svc_conn_cq_event_poll(f->conn);
	run_workers(f);

	/* Reply chunk: RPC reply (24) + length word + 5001 data + 3 pad = 5032. */
	assert_int_equal(get32(reply), 0x5151);
	assert_int_equal(get32(reply + 20), 0); /* SUCCESS */
	assert_int_equal(get32(reply + 24), 5001);
	assert_memory_equal(reply + 28, data, 5001);
	assert_int_equal(reply[28 + 5001], 0);
	/* Header: xid 0x51, MSG? no: NOMSG, empty lists, Reply chunk echo 5032 bytes. */
	assert_int_equal(fv.fv_sent_len, 28 + 16 + 4);
	assert_int_equal(get32(fv.fv_sent + 12), RDMA_NOMSG);
	assert_int_equal(get32(fv.fv_sent + 16), 0);
	assert_int_equal(get32(fv.fv_sent + 20), 0);
	assert_int_equal(get32(fv.fv_sent + 24), 1);
	assert_int_equal(get32(fv.fv_sent + 28), 1);
	assert_int_equal(get32(fv.fv_sent + 32), 0x77);
	assert_int_equal(get32(fv.fv_sent + 36), 5032);
	rb = fv.fv_sent + 44;
	assert_int_equal(get32(rb), 0x70000);
	/* Two handles (0x99, 0x77): no single one to invalidate. */
	assert_int_equal(fv.fv_send_opcode, IBV_WR_SEND);
	assert_baseline(f);
	assert_int_equal(atomic_load(&f->svc.sv_ct.rdma_read_bytes), 5001);
	assert_int_equal(atomic_load(&f->svc.sv_ct.replies_reply_chunk), 1);
}

/*
 * DDP-eligible result of 700 bytes into a Write chunk of two 512-byte
 * segments: written 512 + 188; the inline reply keeps the length word,
 * drops data and pad, and carries what follows.
 */
static void test_write_chunk(void **state)
{
	struct fixture *f = *state;
	static uint8_t wbuf[1024];
	uint8_t msg[1024], *p = msg, *s;
	uint32_t i;

	fv_add_remote(0x55, 0x50000, wbuf, sizeof(wbuf));
	f->conn->sx_peer_rsi = true; /* the Requester accepts Send With Invalidate */
	p = put_fixed(p, 0x61, 1, 4, RDMA_MSG);
	p = put32(p, 0);                 /* no Read list */
	p = put32(p, 1);                 /* Write list: one chunk of two segments */
	p = put32(p, 2);
	p = put32(p, 0x55);
	p = put32(p, 512);
	p = put32(p, 0);
	p = put32(p, 0x50000);
	p = put32(p, 0x55);
	p = put32(p, 512);
	p = put32(p, 0);
	p = put32(p, 0x50200);
	p = put32(p, 0);                 /* end of Write list */
	p = put32(p, 0);                 /* no Reply chunk */
	p = put_call(p, 0x6161, TPROG, 1, TP_ECHO_DDP);
	p = put32(p, 700);
	for (i = 0; i < 700; i++)
		*p++ = (uint8_t)(i ^ 0x3c);
	deliver(f, msg, (uint32_t)(p - msg));
	run_workers(f);

	for (i = 0; i < 700; i++)
		assert_int_equal(wbuf[i], (uint8_t)(i ^ 0x3c));
	assert_int_equal(fv.fv_nwrites, 2);
	/* header: 16 fixed + 4 (no Read) + 4+4+2*16 (chunk) + 4 (end) + 4 (no Reply) = 68 */
	s = fv.fv_sent;
	assert_int_equal(get32(s + 12), RDMA_MSG);
	assert_int_equal(get32(s + 20), 1);
	assert_int_equal(get32(s + 24), 2);
	assert_int_equal(get32(s + 28), 0x55);
	assert_int_equal(get32(s + 32), 512);
	assert_int_equal(get32(s + 48), 188);
	assert_int_equal(get32(s + 56), 0x50200);
	assert_int_equal(get32(s + 60), 0);
	assert_int_equal(get32(s + 64), 0);
	/* body: RPC reply 24 + length word 700 + trailer word, no data */
	assert_int_equal(fv.fv_sent_len, 68 + 24 + 4 + 4);
	assert_int_equal(get32(s + 68), 0x6161);
	assert_int_equal(get32(s + 92), 700);
	assert_int_equal(get32(s + 96), TPROG_TRAILER);
	/* Both segments carry handle 0x55: the reply invalidates it. */
	assert_int_equal(fv.fv_send_opcode, IBV_WR_SEND_WITH_INV);
	assert_int_equal(fv.fv_inv_rkey, 0x55);
	assert_baseline(f);
	assert_int_equal(atomic_load(&f->svc.sv_ct.rdma_write_bytes), 700);
}

/* A 3024-byte reply with no Reply chunk fits nowhere: ERR_CHUNK (4.5.3). */
static void test_reply_fits_nowhere(void **state)
{
	struct fixture *f = *state;
	uint8_t msg[128], *p = msg;
	static const uint8_t want[] = {
		0, 0, 0, 0x71, 0, 0, 0, 1, 0, 0, 0, 4, 0, 0, 0, 4, 0, 0, 0, 2,
	};

	p = put_msg_nochunks(p, 0x71, 1);
	p = put_call(p, 0x7171, TPROG, 1, TP_BIG);
	p = put32(p, 3000);              /* 3000 bytes of results */
	deliver(f, msg, (uint32_t)(p - msg));
	run_workers(f);
	assert_int_equal(fv.fv_sent_len, sizeof(want));
	assert_memory_equal(fv.fv_sent, want, sizeof(want));
	assert_baseline(f);
}

/* Unknown program and unknown version are answered by the RPC layer. */
static void test_prog_unavail_mismatch(void **state)
{
	struct fixture *f = *state;
	uint8_t msg[128], *p;

	p = msg;
	p = put_msg_nochunks(p, 0x81, 1);
	p = put_call(p, 0x8181, 100099, 1, 0);
	deliver(f, msg, (uint32_t)(p - msg));
	assert_int_equal(fv.fv_sent_len, 28 + 24);
	assert_int_equal(get32(fv.fv_sent + 28 + 20), RPCRDMA_SVC_PROG_UNAVAIL);

	p = msg + 28;
	p = put_call(p, 0x8282, TPROG, 7, 0);
	deliver(f, msg, (uint32_t)(p - msg));
	assert_int_equal(fv.fv_sent_len, 28 + 32);
	assert_int_equal(get32(fv.fv_sent + 28 + 20), RPCRDMA_SVC_PROG_MISMATCH);
	assert_int_equal(get32(fv.fv_sent + 28 + 24), 1); /* low */
	assert_int_equal(get32(fv.fv_sent + 28 + 28), 1); /* high */
	svc_conn_cq_event_poll(f->conn);
	assert_baseline(f);
}

/*
 * Statistics through the hooks: an inline NULL call (40 call bytes, 24
 * reply bytes), a call to an unregistered program (PROG_UNAVAIL, its own
 * row), and a bad transport version (RDMA_ERROR, counted on the connection
 * and in no row).
 */
static void test_stats_hooks(void **state)
{
	struct fixture *f = *state;
	struct svc_stats_snap s;
	uint8_t msg[128], *p;

	assert_int_equal(svc_stats_create(&f->svc), 0);
	f->conn->sx_id_num = 3;
	f->qp.qp_num = 0x11;
	f->conn->sx_stats = svc_stats_conn_open(f->conn);
	assert_non_null(f->conn->sx_stats);

	p = put_msg_nochunks(msg, 0x91, 1);
	p = put_call(p, 0x9191, TPROG, 1, TP_NULL);
	deliver(f, msg, (uint32_t)(p - msg));
	run_workers(f);
	p = put_msg_nochunks(msg, 0x92, 1);
	p = put_call(p, 0x9292, 100099, 1, 4);
	deliver(f, msg, (uint32_t)(p - msg));
	svc_conn_cq_event_poll(f->conn);
	p = put_fixed(msg, 0x93, 2, 1, RDMA_MSG);
	p = put32(p, 0);
	p = put32(p, 0);
	p = put32(p, 0);
	deliver(f, msg, (uint32_t)(p - msg));
	svc_conn_cq_event_poll(f->conn);
	assert_baseline(f);

	assert_int_equal(svc_stats_snapshot(&f->svc, &s), 0);
	assert_int_equal(s.ss_nrows, 2);
	assert_int_equal(s.ss_rows[0].os_prog, TPROG);
	assert_int_equal(s.ss_rows[0].os_vers, 1);
	assert_int_equal(s.ss_rows[0].os_proc, TP_NULL);
	assert_int_equal(s.ss_rows[0].os_calls, 1);
	assert_int_equal(s.ss_rows[0].os_replies, 1);
	assert_int_equal(s.ss_rows[0].os_accept[RPCRDMA_SVC_SUCCESS], 1);
	assert_int_equal(s.ss_rows[0].os_bytes_in, 40);
	assert_int_equal(s.ss_rows[0].os_bytes_out, 24);
	assert_int_equal(s.ss_rows[1].os_group, SVC_STATS_UNMATCHED);
	assert_int_equal(s.ss_rows[1].os_calls, 1);
	assert_int_equal(s.ss_rows[1].os_accept[RPCRDMA_SVC_PROG_UNAVAIL], 1);
	assert_int_equal(s.ss_nconns, 1);
	assert_int_equal(s.ss_conns[0].cs_id, 3);
	assert_int_equal(s.ss_conns[0].cs_qp_num, 0x11);
	assert_int_equal(s.ss_conns[0].cs_credits, 4);
	assert_int_equal(s.ss_conns[0].cs_calls, 2);
	assert_int_equal(s.ss_conns[0].cs_bytes_in, 80);
	assert_int_equal(s.ss_conns[0].cs_bytes_out, 48);
	assert_int_equal(s.ss_conns[0].cs_rdma_errors, 1);
	svc_stats_snap_free(&s);
	svc_stats_conn_close(&f->svc, f->conn->sx_stats);
	f->conn->sx_stats = NULL;
	svc_stats_destroy(&f->svc);
}

/*
 * Back-pressure: with four small call contexts, a fifth inline call waits
 * (counted) and is served when a context comes back; none takes a large
 * context.
 */
static void test_context_backpressure(void **state)
{
	struct fixture *f = *state;
	uint8_t msg[128], *p;
	int i;

	for (i = 0; i < 5; i++) {
		p = msg;
		p = put_msg_nochunks(p, 0x90 + (uint32_t)i, 1);
		p = put_call(p, 0x9090 + (uint32_t)i, TPROG, 1, TP_NULL);
		deliver(f, msg, (uint32_t)(p - msg));
	}
	assert_int_equal(f->conn->sx_calls_out, 4);
	assert_int_equal(atomic_load(&f->svc.sv_ct.ctx_waits), 1);
	assert_non_null(f->conn->sx_dev->dv_rwait_head);
	run_workers(f);  /* four replies; their Send completions free the contexts */
	run_workers(f);  /* the waiting call now runs */
	assert_int_equal(fv.fv_nsends, 5);
	assert_int_equal(get32(fv.fv_sent), 0x94);
	assert_baseline(f);
	assert_int_equal(atomic_load(&f->svc.sv_ct.ctx_high), 4);
	assert_int_equal(atomic_load(&f->svc.sv_ct.large_high), 0);
}

/* A NULL call whose only chunk is a Reply chunk of @nsegs segments of @len bytes. */
static uint32_t put_reply_chunk_segs(uint8_t *msg, uint32_t xid, uint32_t nsegs, uint32_t len)
{
	uint8_t *p = msg;
	uint32_t i;

	p = put_fixed(p, xid, 1, 4, RDMA_MSG);
	p = put32(p, 0);          /* no Read list */
	p = put32(p, 0);          /* no Write list */
	p = put32(p, 1);          /* Reply chunk */
	p = put32(p, nsegs);
	for (i = 0; i < nsegs; i++) {
		p = put32(p, 0x66);       /* handle */
		p = put32(p, len);
		p = put32(p, 0);          /* offset */
		p = put32(p, 0x60000 + i * len);
	}
	p = put_call(p, xid * 0x101u, TPROG, 1, TP_NULL);
	return (uint32_t)(p - msg);
}

/* A NULL call whose only chunk is a one-segment Reply chunk of @len bytes. */
static uint32_t put_reply_chunk_call(uint8_t *msg, uint32_t xid, uint32_t len)
{
	return put_reply_chunk_segs(msg, xid, 1, len);
}

/*
 * Inline calls use small contexts: the room a call's chunks offer decides.
 * Inline threshold 1024, small reply buffer 2 x 1024: a Reply chunk of
 * 2048 bytes still fits a small context, one of 2049 needs a large one,
 * and so does a small Reply chunk of 8 segments (8 Writes + the Send is
 * more than the 8 work requests a small context may post).
 */
static void test_inline_call_small_context(void **state)
{
	struct fixture *f = *state;
	uint8_t msg[256], *p = msg;

	p = put_msg_nochunks(p, 0xd1, 1);
	p = put_call(p, 0xd1d1, TPROG, 1, TP_NULL);
	deliver(f, msg, (uint32_t)(p - msg));
	deliver(f, msg, put_reply_chunk_call(msg, 0xd2, 2048));
	assert_int_equal(f->conn->sx_calls_out, 2);
	assert_int_equal(((uint32_t)atomic_load(&f->conn->sx_svc->sv_ct.large_in_use)), 0);
	assert_int_equal(atomic_load(&f->svc.sv_ct.large_in_use), 0);
	deliver(f, msg, put_reply_chunk_call(msg, 0xd3, 2049));
	assert_int_equal(f->conn->sx_calls_out, 3);
	assert_int_equal(((uint32_t)atomic_load(&f->conn->sx_svc->sv_ct.large_in_use)), 1);
	assert_int_equal(atomic_load(&f->svc.sv_ct.large_in_use), 1);
	deliver(f, msg, put_reply_chunk_segs(msg, 0xd4, 7, 16));
	assert_int_equal(f->conn->sx_calls_out, 4);
	assert_int_equal(((uint32_t)atomic_load(&f->conn->sx_svc->sv_ct.large_in_use)), 1);
	run_workers(f);
	assert_int_equal(fv.fv_nsends, 4);
	assert_baseline(f);
	deliver(f, msg, put_reply_chunk_segs(msg, 0xd5, 8, 16));
	assert_int_equal(f->conn->sx_calls_out, 1);
	assert_int_equal(((uint32_t)atomic_load(&f->conn->sx_svc->sv_ct.large_in_use)), 1);
	run_workers(f);
	assert_int_equal(fv.fv_nsends, 5);
	assert_int_equal(atomic_load(&f->svc.sv_ct.replies_inline[SVC_XPRT_RDMA]), 5);
	assert_baseline(f);
	assert_int_equal(atomic_load(&f->svc.sv_ct.large_high), 1);
	assert_int_equal(atomic_load(&f->svc.sv_ct.ctx_high), 4);
	assert_int_equal(atomic_load(&f->svc.sv_ct.ctx_waits), 0);
}

/*
 * Large-context back-pressure: with two large contexts, a third call that
 * needs one waits holding its small context and Receive (counted), and is
 * served when a large context comes back.
 */
static void test_large_context_backpressure(void **state)
{
	struct fixture *f = *state;
	uint8_t msg[128];
	uint32_t i;

	for (i = 0; i < 3; i++)
		deliver(f, msg, put_reply_chunk_call(msg, 0xe0 + i, 4096));
	assert_int_equal(f->conn->sx_calls_out, 3);
	assert_int_equal(((uint32_t)atomic_load(&f->conn->sx_svc->sv_ct.large_in_use)), 2);
	assert_int_equal(atomic_load(&f->svc.sv_ct.large_waits), 1);
	assert_int_equal(atomic_load(&f->svc.sv_ct.ctx_waits), 0);
	assert_non_null(f->conn->sx_dev->dv_cwait_head);
	assert_int_equal(f->conn->sx_dev->dv_cwait_head->cc_state, CC_WAITING);
	/* Of 12 Receives, the two served calls' are back (posted or in the
	 * refill batch); the waiter's is held until its call is rebuilt. */
	assert_int_equal(f->conn->sx_recvs_posted + f->conn->sx_refill_count, 11);
	run_workers(f);  /* two replies; their Send completions free the large contexts */
	run_workers(f);  /* the waiting call now runs */
	assert_int_equal(fv.fv_nsends, 3);
	assert_int_equal(get32(fv.fv_sent), 0xe2);
	assert_baseline(f);
	assert_int_equal(atomic_load(&f->svc.sv_ct.large_high), 2);
}

/*
 * The connection goes while a call waits for a large context (the setup of
 * test_large_context_backpressure): the waiter is dropped (counted), the
 * two calls being served get no reply, the large contexts they give back
 * go to nobody, and once the Receives have flushed the connection is ready
 * to be freed; freeing it returns every Receive buffer it held.
 */
static void test_disconnect_while_large_waiting(void **state)
{
	struct fixture *f = *state;
	uint8_t msg[128];
	uint64_t drops;
	uint32_t i;

	for (i = 0; i < 3; i++)
		deliver(f, msg, put_reply_chunk_call(msg, 0xf0 + i, 4096));
	assert_int_equal(((uint32_t)atomic_load(&f->conn->sx_svc->sv_ct.large_in_use)), 2);
	assert_non_null(f->conn->sx_dev->dv_cwait_head);
	assert_int_equal(atomic_load(&f->svc.sv_ct.ctx_in_use), 3);
	assert_int_equal(atomic_load(&f->svc.sv_ct.large_in_use), 2);
	drops = atomic_load(&f->svc.sv_ct.drops);

	svc_conn_cm_event(&f->svc, f->conn, RDMA_CM_EVENT_DISCONNECTED);
	assert_true(fv.fv_disconnected);
	assert_true(f->conn->sx_closing);
	assert_null(f->conn->sx_dev->dv_cwait_head);
	assert_null(f->conn->sx_dev->dv_cwait_tail);
	assert_int_equal(atomic_load(&f->svc.sv_ct.drops), drops + 1);
	assert_int_equal(atomic_load(&f->svc.sv_ct.ctx_in_use), 2);
	assert_false(f->conn->sx_reap);

	run_workers(f); /* the two queued calls finish: no reply on a closing connection */
	assert_int_equal(fv.fv_nsends, 0);
	assert_int_equal(f->conn->sx_calls_out, 0);
	assert_int_equal(((uint32_t)atomic_load(&f->conn->sx_svc->sv_ct.large_in_use)), 0);
	assert_false(f->conn->sx_reap); /* Receives still posted */
	fv_flush_recvs();
	svc_conn_cq_event_poll(f->conn);
	assert_int_equal(f->conn->sx_recvs_posted, 0);
	assert_true(f->conn->sx_reap);
	assert_int_equal(atomic_load(&f->svc.sv_ct.drops), drops + 1);
	assert_int_equal(atomic_load(&f->svc.sv_ct.ctx_in_use), 0);
	assert_int_equal(atomic_load(&f->svc.sv_ct.large_in_use), 0);

	f->conn->sx_id = NULL; /* as the reaper frees it; fake cm_id and PD */
	svc_conn_destroy(f->conn);
	f->conn = NULL;
	f->svc.sv_groups[0].gr_conns = NULL;
	assert_int_equal(atomic_load(&f->svc.sv_ct.recv_in_use), 0);
}

/*
 * The Requester's handle cannot be read: the Read fails, the call is
 * dropped, the connection is disconnected, and once every Receive has
 * flushed the connection is ready to be freed with all pools at baseline.
 */
static void test_read_error_and_flush(void **state)
{
	struct fixture *f = *state;
	uint8_t msg[256], *p = msg;

	fv.fv_read_status = IBV_WC_REM_ACCESS_ERR;
	p = put_fixed(p, 0xa1, 1, 4, RDMA_MSG);
	p = put32(p, 1);
	p = put32(p, 44);
	p = put32(p, 0xdead);
	p = put32(p, 100);
	p = put32(p, 0);
	p = put32(p, 0);
	p = put32(p, 0);
	p = put32(p, 0);
	p = put32(p, 0);
	p = put_call(p, 0xa1a1, TPROG, 1, TP_ECHO);
	p = put32(p, 100);
	deliver(f, msg, (uint32_t)(p - msg));
	svc_conn_cq_event_poll(f->conn);
	assert_true(fv.fv_disconnected);
	assert_true(f->conn->sx_closing);
	assert_int_equal(f->conn->sx_calls_out, 0);
	assert_int_equal(fv.fv_nsends, 0);
	assert_false(f->conn->sx_reap);
	/* The QP is in error: every posted Receive flushes. */
	fv_flush_recvs();
	svc_conn_cq_event_poll(f->conn);
	assert_int_equal(f->conn->sx_recvs_posted, 0);
	assert_true(f->conn->sx_reap);
	assert_int_equal(atomic_load(&f->svc.sv_ct.ctx_in_use), 0);
}

/*
 * Completions delivered inside post_send: the Read chunk's completion
 * dispatches the call before the post returns, and the Send completion
 * frees the context before its post returns.  Nothing may touch the
 * context after its last post.
 */
static void test_completion_inside_post(void **state)
{
	struct fixture *f = *state;
	static uint8_t data[200];
	uint8_t msg[256], *p = msg;
	uint32_t i;

	for (i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(255 - i);
	fv_add_remote(0x42, 0x40000, data, sizeof(data));
	set_reenter(f->conn);
	p = put_fixed(p, 0xc1, 1, 4, RDMA_MSG);
	p = put32(p, 1);
	p = put32(p, 44);
	p = put32(p, 0x42);
	p = put32(p, 200);
	p = put32(p, 0);
	p = put32(p, 0x40000);
	p = put32(p, 0);
	p = put32(p, 0);
	p = put32(p, 0);
	p = put_call(p, 0xc1c1, TPROG, 1, TP_ECHO);
	p = put32(p, 200);
	deliver(f, msg, (uint32_t)(p - msg));
	/* The Read completed inside its post: the call is already queued. */
	assert_int_equal(fv.fv_nreads, 1);
	assert_int_equal(count_state(f, CC_WORKING), 1);
	run_workers(f);
	/* Inline reply: 28 header + 24 RPC + 4 length + 200 data. */
	assert_int_equal(fv.fv_sent_len, 28 + 24 + 4 + 200);
	assert_memory_equal(fv.fv_sent + 56, data, 200);
	assert_baseline(f);
	set_reenter(NULL);
}

/* Three calls completed in one poll: their Receives go back in one post. */
static void test_recv_refill_batched(void **state)
{
	struct fixture *f = *state;
	uint8_t msg[28], *p = msg;
	unsigned posts_before;
	int i;

	p = put32(p, 0xb1);
	p = put32(p, 9); /* ERR_VERS: answered without a worker */
	p = put32(p, 4);
	p = put32(p, RDMA_MSG);
	p = put32(p, 0);
	p = put32(p, 0);
	p = put32(p, 0);
	posts_before = fv.fv_nrecv_posts;
	for (i = 0; i < 2; i++)
		queue_recv(f, msg, sizeof(msg));
	queue_recv(f, msg, 3); /* dropped: too short */
	svc_conn_cq_event_poll(f->conn);
	assert_int_equal(fv.fv_nrecv_posts, posts_before + 1);
	assert_int_equal(atomic_load(&f->svc.sv_ct.recv_refills), 1);
	svc_conn_cq_event_poll(f->conn); /* Send completions */
	assert_int_equal(fv.fv_nsends, 2);
	assert_baseline(f);
}

/*
 * A long drain gives Receives back in chains of at most 4 (half the 8
 * spare Receives), so calls answered during the drain cannot leave the
 * Requester short of posted Receives: 9 messages dropped in one poll go
 * back as chains of 4, 4 and 1.
 */
static void test_recv_refill_bounded(void **state)
{
	struct fixture *f = *state;
	uint8_t msg[4] = { 0, 0, 0, 0xb2 };
	unsigned posts_before, posted_before;
	int i;

	posts_before = fv.fv_nrecv_posts;
	posted_before = fv.fv_nrecv_posted;
	for (i = 0; i < 9; i++)
		queue_recv(f, msg, 3); /* dropped: too short */
	svc_conn_cq_event_poll(f->conn);
	assert_int_equal(fv.fv_nrecv_posts, posts_before + 3);
	assert_int_equal(fv.fv_nrecv_posted, posted_before + 9);
	assert_int_equal(atomic_load(&f->svc.sv_ct.recv_refills), 3);
	assert_int_equal(atomic_load(&f->svc.sv_ct.drops), 9);
	assert_int_equal(fv.fv_nsends, 0);
	assert_baseline(f);
}

/* Queue @n dropped messages (too short), drain once: @handled of them
 * dropped, @polls polls of the CQ, and the connection marked for another
 * turn as @more says. */
static void drain_case(struct fixture *f, unsigned n, unsigned handled, unsigned polls,
		       bool more)
{
	struct svc_group *grp = &f->svc.sv_groups[0];
	uint8_t msg[4] = { 0, 0, 0, 0xb3 };
	uint64_t drops = atomic_load(&f->svc.sv_ct.drops);
	unsigned before, i;

	for (i = 0; i < n; i++)
		queue_recv(f, msg, 3);
	before = fv.fv_npolls;
	grp->gr_more = false;
	svc_conn_cq_event_poll(f->conn);
	assert_int_equal(fv.fv_npolls - before, polls);
	assert_int_equal(atomic_load(&f->svc.sv_ct.drops) - drops, handled);
	assert_int_equal(f->conn->sx_more, more);
	assert_int_equal(grp->gr_more, more);
}

/*
 * A drain takes at most SVC_POLL_BUDGET polls of SVC_POLL_BATCH (2 x 32)
 * completions, and stops at the first short poll; only a drain whose
 * last poll was full marks the connection for another turn.
 */
static void test_drain_budget(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(SVC_POLL_BATCH * SVC_POLL_BUDGET, 64);
	drain_case(f, 65, 64, 2, true);  /* 32 + 32, the budget spent on a full poll */
	drain_case(f, 0, 1, 1, false);   /* the next turn takes the 65th */
	drain_case(f, 40, 40, 2, false); /* 32 + 8: short, so no mark */
	drain_case(f, 5, 5, 1, false);   /* one short poll ends the drain */
	drain_case(f, 64, 64, 2, true);  /* exactly the budget: marked... */
	drain_case(f, 0, 0, 1, false);   /* ...and that turn finds nothing */
	assert_int_equal(atomic_load(&f->svc.sv_ct.drops), 174);
	assert_int_equal(fv.fv_nsends, 0);
	assert_baseline(f);
}

/*
 * sc_loop_dispatch: the same calls served on the run-loop thread, with no
 * worker: the reply is posted before the Receive's poll returns, nothing
 * passes through the work or done queue (run_workers() checks), and the
 * bytes on the wire are the same.
 */
static void test_loop_inline_call(void **state)
{
	test_inline_call(state);
}

static void test_loop_read_chunk(void **state)
{
	test_read_chunk_and_reply_chunk(state);
}

/*
 * RFC 8166 4.5.3: a reply whose transport header alone is larger than the
 * Requester's inline threshold cannot be delivered.  The peer receives 600
 * bytes inline; the call (one Receive of 1024 bytes) has a Write list of
 * three chunks of 12 segments and a one-segment Reply chunk.  The NULL
 * result is small, but the RDMA_NOMSG header that echoes 36 + 1 segments
 * takes 16 + 4 + (4 + 3 x (8 + 12 x 16)) + 4 + (8 + 16) = 652 bytes.  The
 * answer must be RDMA_ERROR ERR_CHUNK (20 bytes), not a 652-byte Send.
 */
static void test_reply_header_beyond_inline(void **state)
{
	struct fixture *f = *state;
	uint8_t msg[1024], *p = msg;
	static const uint8_t want[] = {
		0, 0, 0, 0x75, 0, 0, 0, 1, 0, 0, 0, 4, 0, 0, 0, 4, 0, 0, 0, 2,
	};
	uint32_t c, i;

	f->conn->sx_inline_send = 600;
	p = put_fixed(p, 0x75, 1, 4, RDMA_MSG);
	p = put32(p, 0);                  /* no Read list */
	for (c = 0; c < 3; c++) {
		p = put32(p, 1);          /* a Write chunk */
		p = put32(p, 12);
		for (i = 0; i < 12; i++) {
			p = put32(p, 0x55);
			p = put32(p, 8);
			p = put32(p, 0);
			p = put32(p, 0x50000 + (c * 12 + i) * 8);
		}
	}
	p = put32(p, 0);                  /* end of the Write list */
	p = put32(p, 1);                  /* Reply chunk */
	p = put32(p, 1);
	p = put32(p, 0x77);
	p = put32(p, 512);
	p = put32(p, 0);
	p = put32(p, 0x70000);
	p = put_call(p, 0x7575, TPROG, 1, TP_NULL);
	assert_true(p - msg <= 1024);
	deliver(f, msg, (uint32_t)(p - msg));
	run_workers(f);
	assert_int_equal(fv.fv_nsends, 1);
	assert_int_equal(fv.fv_sent_len, sizeof(want));
	assert_memory_equal(fv.fv_sent, want, sizeof(want));
	assert_int_equal(fv.fv_nwrites, 0);
	assert_int_equal(atomic_load(&f->svc.sv_ct.rdma_errors_sent), 1);
	assert_baseline(f);
}

/*
 * Send-queue slots are counted: with one slot, the second reply waits
 * (counted in sq_waits) until the first Send's completion returns the
 * slot, and the device never holds more than one work request.
 */
static void test_send_queue_slots(void **state)
{
	struct fixture *f = *state;
	uint8_t msg[128], *p;
	uint32_t i;

	f->conn->sx_sq_size = f->conn->sx_sq_free = 1;
	fv.fv_defer_sq = true;
	for (i = 0; i < 2; i++) {
		p = msg;
		p = put_msg_nochunks(p, 0x30 + i, 1);
		p = put_call(p, 0x3030 + i, TPROG, 1, TP_NULL);
		deliver(f, msg, (uint32_t)(p - msg));
	}
	run_workers(f);
	assert_int_equal(fv_sq_pending(), 1);
	assert_int_equal(atomic_load(&f->svc.sv_ct.sq_waits), 1);
	assert_int_equal(f->conn->sx_sq_free, 0);
	assert_int_equal(fv_run_sq(1), 1);       /* the first Send executes */
	assert_int_equal(get32(fv.fv_sent), 0x30);
	svc_conn_cq_event_poll(f->conn);          /* its completion frees the slot */
	assert_int_equal(fv_sq_pending(), 1);     /* the second is posted now */
	assert_int_equal(fv_run_sq(1), 1);
	assert_int_equal(get32(fv.fv_sent), 0x31);
	svc_conn_cq_event_poll(f->conn);
	assert_int_equal(fv.fv_nsends, 2);
	assert_int_equal(f->conn->sx_sq_free, 1);
	fv.fv_defer_sq = false;
	assert_baseline(f);
}

/* One Read list entry: a segment of @len bytes at 0x40000 of @handle. */
static uint8_t *put_read_entry(uint8_t *p, uint32_t position, uint32_t handle, uint32_t len)
{
	p = put32(p, 1);
	p = put32(p, position);
	p = put32(p, handle);
	p = put32(p, len);
	p = put32(p, 0);
	return put32(p, 0x40000);
}

/* A call with one Read chunk of @len bytes at position 44 (TP_ECHO). */
static uint32_t put_read_call(uint8_t *msg, uint32_t xid, uint32_t handle, uint32_t len)
{
	uint8_t *p = msg;

	p = put_fixed(p, xid, 1, 4, RDMA_MSG);
	p = put_read_entry(p, 44, handle, len);
	p = put32(p, 0);
	p = put32(p, 0);
	p = put32(p, 0);
	p = put_call(p, xid * 0x101u, TPROG, 1, TP_ECHO);
	p = put32(p, len);
	return (uint32_t)(p - msg);
}

/*
 * A failed RDMA Read post takes the connection down before the call's
 * context and buffers go back: the call waiting for a large context is
 * dropped, never handed buffers a partly posted chain may still target,
 * and nothing more is posted.  Two large contexts: A and X hold them
 * (their Reads deferred), B and C wait.  A's Read and reply complete; B
 * takes A's large context and its Read post (the fourth post) fails.
 */
static void test_read_post_failure_disconnects_first(void **state)
{
	struct fixture *f = *state;
	static uint8_t data[100];
	uint8_t msg[256];
	uint64_t drops;

	fv_add_remote(0x42, 0x40000, data, sizeof(data));
	fv.fv_defer_sq = true;
	deliver(f, msg, put_read_call(msg, 0xa0, 0x42, 100)); /* A: post 1 */
	deliver(f, msg, put_read_call(msg, 0xa1, 0x42, 100)); /* X: post 2 */
	deliver(f, msg, put_read_call(msg, 0xa2, 0x42, 100)); /* B waits */
	deliver(f, msg, put_read_call(msg, 0xa3, 0x42, 100)); /* C waits */
	assert_int_equal(atomic_load(&f->svc.sv_ct.large_waits), 2);
	assert_int_equal(fv.fv_send_post_calls, 2);
	drops = atomic_load(&f->svc.sv_ct.drops);
	fv.fv_fail_send_post_at = 4;
	assert_int_equal(fv_run_sq(1), 1);        /* A's Read */
	svc_conn_cq_event_poll(f->conn);
	while (svc_worker_run_one(&f->svc.sv_groups[0]))
		;
	svc_take_done(&f->svc.sv_groups[0]);                   /* A's reply: post 3 */
	assert_int_equal(fv.fv_send_post_calls, 3);
	fv_run_sq(2);                             /* X's Read, A's Send */
	svc_conn_cq_event_poll(f->conn);          /* B's Read post fails */
	assert_true(fv.fv_disconnected);
	assert_true(f->conn->sx_closing);
	assert_null(f->conn->sx_dev->dv_cwait_head);
	/* B's post was the last: C got nothing. */
	assert_int_equal(fv.fv_send_post_calls, 4);
	assert_int_equal(atomic_load(&f->svc.sv_ct.drops), drops + 1); /* C */
	assert_int_equal(atomic_load(&f->svc.sv_ct.post_errors), 1);  /* B */
	fv.fv_defer_sq = false;
	while (svc_worker_run_one(&f->svc.sv_groups[0]))
		;
	svc_take_done(&f->svc.sv_groups[0]);
	fv_flush_recvs();
	svc_conn_cq_event_poll(f->conn);
	assert_true(f->conn->sx_reap);
	assert_int_equal(atomic_load(&f->svc.sv_ct.ctx_in_use), 0);
	assert_int_equal(atomic_load(&f->svc.sv_ct.large_in_use), 0);
}

/*
 * The RDMA Reads of calls received in one completion batch go out with one
 * post (one doorbell: a system call with Soft-RoCE), not one per call: two
 * calls with a Read chunk each, one poll, one post_send holding both
 * chains.  Both are then served from the data read and answered.
 */
static void test_reads_of_one_batch_one_post(void **state)
{
	struct fixture *f = *state;
	static uint8_t data[100];
	uint8_t msg[256];
	unsigned posts;
	uint32_t i;

	for (i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i * 3 + 5);
	fv_add_remote(0x42, 0x40000, data, sizeof(data));
	posts = fv.fv_send_post_calls;
	queue_recv(f, msg, put_read_call(msg, 0xb0, 0x42, 100));
	queue_recv(f, msg, put_read_call(msg, 0xb1, 0x42, 100));
	svc_conn_cq_event_poll(f->conn);
	assert_int_equal(fv.fv_send_post_calls, posts + 1);
	assert_int_equal(fv.fv_nreads, 2);
	assert_int_equal(atomic_load(&f->svc.sv_ct.read_chunks), 2);
	assert_int_equal(atomic_load(&f->svc.sv_ct.rdma_read_bytes), 200);
	svc_conn_cq_event_poll(f->conn);          /* the Reads' completions */
	run_workers(f);
	assert_int_equal(fv.fv_nsends, 2);
	/* the last reply, inline: RPC reply (24), the length, the data read */
	assert_int_equal(get32(fv.fv_sent + 28 + 24), 100);
	assert_memory_equal(fv.fv_sent + 28 + 28, data, 100);
	assert_baseline(f);
}

/*
 * A batched post that holds Read chains fails: the connection goes down
 * first, then each call whose Reads were not posted is given back (no
 * completion will come for them); nothing leaks and the connection can
 * be freed.
 */
static void test_batched_read_post_failure(void **state)
{
	struct fixture *f = *state;
	static uint8_t data[100];
	uint8_t msg[256];

	fv_add_remote(0x42, 0x40000, data, sizeof(data));
	queue_recv(f, msg, put_read_call(msg, 0xc0, 0x42, 100));
	queue_recv(f, msg, put_read_call(msg, 0xc1, 0x42, 100));
	fv.fv_fail_send_post_at = fv.fv_send_post_calls + 1;
	svc_conn_cq_event_poll(f->conn);
	assert_int_equal(fv.fv_nreads, 0);
	assert_true(fv.fv_disconnected);
	assert_true(f->conn->sx_closing);
	assert_int_equal(atomic_load(&f->svc.sv_ct.post_errors), 1);
	assert_int_equal(f->conn->sx_reads_out, 0);
	assert_int_equal(f->conn->sx_calls_out, 0);
	assert_int_equal(atomic_load(&f->svc.sv_ct.large_in_use), 0);
	fv_flush_recvs();
	svc_conn_cq_event_poll(f->conn);
	assert_true(f->conn->sx_reap);
	assert_int_equal(atomic_load(&f->svc.sv_ct.ctx_in_use), 0);
}

/*
 * After a failed post took the connection down: the flushes come in, and
 * then no Read or call is outstanding, the connection can be freed, every
 * context is back and @drops calls were dropped in all.
 */
static void after_failed_post(struct fixture *f, uint64_t drops)
{
	fv_flush_recvs();
	svc_conn_cq_event_poll(f->conn);
	assert_int_equal(f->conn->sx_reads_out, 0);
	assert_int_equal(f->conn->sx_calls_out, 0);
	assert_true(f->conn->sx_reap);
	assert_int_equal(atomic_load(&f->svc.sv_ct.ctx_in_use), 0);
	assert_int_equal(atomic_load(&f->svc.sv_ct.large_in_use), 0);
	assert_int_equal(atomic_load(&f->svc.sv_ct.drops), drops);
}

/*
 * Reads posted outside a completion batch: a call with two Read chunks
 * (the second of two segments, so three RDMA Reads) waits for a large
 * context because the memory budget is short; the run loop's budget kick,
 * outside any batch, starts it, and its Reads go out at once in one post
 * (svc_send_submit()).  @mode 0: the post succeeds; 1: it fails
 * at its first work request; 2: a partial post, the first chunk and the
 * first Read of the second chunk posted, the failure at the second
 * chunk's signalled (last) Read.
 */
static void nonbatch_reads(struct fixture *f, int mode)
{
	static uint8_t data[100];
	uint8_t msg[256], *p = msg;
	struct svc_group *grp = &f->svc.sv_groups[0];
	struct svc_large *lg;
	uint64_t drops;
	unsigned posts;

	fv_add_remote(0x42, 0x40000, data, sizeof(data));
	p = put_fixed(p, 0xe0, 1, 4, RDMA_MSG);
	p = put_read_entry(p, 44, 0x42, 100);
	p = put_read_entry(p, 144, 0x42, 50);
	p = put_read_entry(p, 144, 0x42, 50);
	p = put32(p, 0);
	p = put32(p, 0);
	p = put32(p, 0);
	p = put_call(p, 0xe0e0, TPROG, 1, TP_ECHO);
	p = put32(p, 200);
	/* No large context free: the call waits (dv_cwait), as when the
	 * budget is short; the run loop's budget kick serves it later. */
	lg = f->conn->sx_dev->dv_large_free;
	f->conn->sx_dev->dv_large_free = NULL;
	deliver(f, msg, (uint32_t)(p - msg));
	assert_non_null(f->conn->sx_dev->dv_cwait_head);
	f->conn->sx_dev->dv_large_free = lg;
	posts = fv.fv_send_post_calls;
	drops = atomic_load(&f->svc.sv_ct.drops);
	if (mode) {
		fv.fv_fail_send_post_at = posts + 1;
		fv.fv_fail_post_after_wrs = mode == 2 ? 2 : 0;
	}
	assert_false(grp->gr_post_batch);
	atomic_store(&grp->gr_budget_kick, true);
	svc_budget_kick(grp);                      /* run loop, no batch */
	assert_null(f->conn->sx_dev->dv_cwait_head);
	assert_int_equal(atomic_load(&f->svc.sv_ct.read_chunks), 2);
	if (!mode) {
		assert_int_equal(fv.fv_send_post_calls, posts + 1);
		assert_int_equal(fv.fv_nreads, 3);
		assert_int_equal(f->conn->sx_reads_out, 2);
		svc_conn_cq_event_poll(f->conn);   /* both chunks' completions */
		assert_int_equal(f->conn->sx_reads_out, 0);
		run_workers(f);
		assert_int_equal(fv.fv_nsends, 1);
		assert_baseline(f);
		return;
	}
	assert_true(f->conn->sx_closing);
	assert_int_equal(atomic_load(&f->svc.sv_ct.post_errors), 1);
	if (mode == 1) {
		assert_int_equal(fv.fv_nreads, 0);
		assert_int_equal(f->conn->sx_reads_out, 0);
		assert_int_equal(f->conn->sx_calls_out, 0);  /* put at once */
	} else {
		/* chunk 1 and half of chunk 2 ran; chunk 1's completion is due */
		assert_int_equal(fv.fv_nreads, 2);
		assert_int_equal(f->conn->sx_reads_out, 1);
		assert_int_equal(f->conn->sx_calls_out, 1);
		assert_int_equal(count_state(f, CC_READING), 1);
	}
	after_failed_post(f, drops + (mode == 2));
}

static void test_nonbatch_reads_ok(void **state)
{
	nonbatch_reads(*state, 0);
}

static void test_nonbatch_reads_fail(void **state)
{
	nonbatch_reads(*state, 1);
}

static void test_nonbatch_reads_partial(void **state)
{
	nonbatch_reads(*state, 2);
}

/* A batched post of two calls' Reads fails partway, at the
 * second call's Read: the first call's Read was posted (its completion
 * puts it), the second call is given back at once; each exactly once. */
static void test_batched_read_partial_post(void **state)
{
	struct fixture *f = *state;
	static uint8_t data[100];
	uint8_t msg[256];
	uint64_t drops = atomic_load(&f->svc.sv_ct.drops);

	fv_add_remote(0x42, 0x40000, data, sizeof(data));
	queue_recv(f, msg, put_read_call(msg, 0xc0, 0x42, 100));
	queue_recv(f, msg, put_read_call(msg, 0xc1, 0x42, 100));
	fv.fv_fail_send_post_at = fv.fv_send_post_calls + 1;
	fv.fv_fail_post_after_wrs = 1;
	svc_conn_cq_event_poll(f->conn);
	assert_int_equal(fv.fv_nreads, 1);
	assert_true(f->conn->sx_closing);
	assert_int_equal(atomic_load(&f->svc.sv_ct.post_errors), 1);
	after_failed_post(f, drops + 1);
}

/*
 * Admission: once sc_max_connections are open, a connection request is
 * refused before anything is allocated, and counted.
 */
static void test_admission_limit(void **state)
{
	struct fixture *f = *state;
	struct svc_conn_param p;

	memset(&p, 0, sizeof(p));
	f->svc.sv_cfg.sc_max_connections = 1;
	f->svc.sv_nconns = 1;
	assert_int_equal(svc_conn_accept(&f->svc.sv_groups[0], &f->id, &p), -EBUSY);
	assert_int_equal(svc_conn_accept(&f->svc.sv_groups[0], &f->id, &p), -EBUSY);
	assert_int_equal(atomic_load(&f->svc.sv_ct.conns_refused), 2);
	assert_int_equal(f->svc.sv_refused_burst, 2);
	assert_int_equal(atomic_load(&f->svc.sv_ct.conns_open[SVC_XPRT_RDMA]), 0);
	f->svc.sv_nconns = 0;
}

/*
 * The grant grows with load: a connection granted 4 credits (up to 16)
 * with two calls in progress gets 4 more Receives posted, and only then
 * do replies carry 8.
 */
static void test_credit_growth(void **state)
{
	struct fixture *f = *state;
	uint8_t msg[128], *p;
	unsigned posted = fv.fv_nrecv_posted;
	uint32_t i;

	for (i = 0; i < 2; i++) {
		p = msg;
		p = put_msg_nochunks(p, 0x40 + i, 1);
		p = put_call(p, 0x4040 + i, TPROG, 1, TP_NULL);
		deliver(f, msg, (uint32_t)(p - msg));
	}
	assert_int_equal(f->conn->sx_credits, 8);
	assert_int_equal(f->conn->sx_nrecvs, 8 + 8);
	/* the two calls' Receives reposted, and four new ones */
	assert_int_equal(fv.fv_nrecv_posted, posted + 2 + 4);
	assert_int_equal(atomic_load(&f->svc.sv_ct.credit_grows), 1);
	run_workers(f);
	assert_int_equal(get32(fv.fv_sent + 8), 8); /* the grant in the reply */
	assert_baseline(f);
}

/*
 * The pool never registers more than its budget: buffers come from new
 * slabs while the budget allows, then from slabs of another class whose
 * buffers are all free, then -EAGAIN; receive buffers stop at half.
 */
static void test_pool_budget(void **state)
{
	struct fixture *f = *state;
	struct svc_dev *dev = f->conn->sx_dev;
	size_t slab = f->svc.sv_slab_bytes;
	struct svc_buf big[64], b;
	unsigned n = 0;

	f->svc.sv_cfg.sc_memory = f->svc.sv_mem_registered + 2 * slab;
	while (n < 64 && svc_buf_get(dev, slab, false, &big[n]) == 0)
		n++;
	assert_int_equal(n, 2 + 0);   /* two new slabs; none of the others is all free */
	assert_true(f->svc.sv_mem_registered <= f->svc.sv_cfg.sc_memory);
	assert_int_equal(svc_buf_get(dev, slab * 2, false, &b), -E2BIG);
	/* One slab back: a 64 KiB buffer re-carves it. */
	svc_buf_put(dev, &big[1], false);
	assert_int_equal(svc_buf_get(dev, 65536, false, &b), 0);
	assert_int_equal(svc_buf_cap(&b), 65536);
	assert_int_equal(svc_buf_get(dev, slab, false, &big[1]), -EAGAIN);
	svc_buf_put(dev, &b, false);
	svc_buf_put(dev, &big[0], false);
	/* Receive buffers: at most half of the budget. */
	f->svc.sv_cfg.sc_memory = 2 * f->svc.sv_recv_bytes_held + 8192;
	assert_int_equal(svc_buf_get(dev, 1024, true, &b), 0);
	assert_int_equal(svc_buf_get(dev, 1024, true, &big[0]), -EAGAIN);
	svc_buf_put(dev, &b, true);
	assert_baseline(f);
}

/*
 * A connection accepted but never ESTABLISHED (the peer vanished before
 * its RTU) is closed SVC_HANDSHAKE_MS after the accept, not before; an
 * established one is never touched.
 */
static void test_handshake_timeout(void **state)
{
	struct fixture *f = *state;

	f->conn->sx_accepted_ms = 5000;
	f->svc.sv_groups[0].gr_handshakes = 1;
	svc_conn_expire_handshakes(&f->svc.sv_groups[0], 5000 + SVC_HANDSHAKE_MS - 1);
	assert_false(f->conn->sx_closing);
	svc_conn_cm_event(&f->svc, f->conn, RDMA_CM_EVENT_ESTABLISHED);
	assert_int_equal(f->svc.sv_groups[0].gr_handshakes, 0);
	svc_conn_expire_handshakes(&f->svc.sv_groups[0], 5000 + SVC_HANDSHAKE_MS * 9);
	assert_false(f->conn->sx_closing);

	f->conn->sx_established = false;
	f->svc.sv_groups[0].gr_handshakes = 1;
	svc_conn_expire_handshakes(&f->svc.sv_groups[0], 5000 + SVC_HANDSHAKE_MS);
	assert_true(f->conn->sx_closing);
	assert_true(fv.fv_disconnected);
	assert_int_equal(f->svc.sv_groups[0].gr_handshakes, 0);
	fv_flush_recvs();
	svc_conn_cq_event_poll(f->conn);
	assert_true(f->conn->sx_reap);
}

/*
 * Hand-off: three calls received in one drain go to the work queue
 * together; the three replies a worker finishes before the run loop takes
 * the done queue cost one eventfd write, not three.
 */
static void test_handoff_batched(void **state)
{
	struct fixture *f = *state;
	uint8_t msg[128], *p;
	unsigned posts;
	uint64_t v = 0;
	uint32_t i;

	while (read(f->svc.sv_groups[0].gr_wake_fd, &v, sizeof(v)) > 0)
		;
	for (i = 0; i < 3; i++) {
		p = msg;
		p = put_msg_nochunks(p, 0x50 + i, 1);
		p = put_call(p, 0x5050 + i, TPROG, 1, TP_NULL);
		queue_recv(f, msg, (uint32_t)(p - msg));
	}
	svc_conn_cq_event_poll(f->conn);
	assert_null(f->svc.sv_groups[0].gr_batch_head); /* flushed at the end of the drain */
	for (i = 0; i < 3; i++)
		assert_true(svc_worker_run_one(&f->svc.sv_groups[0]));
	assert_int_equal(read(f->svc.sv_groups[0].gr_wake_fd, &v, sizeof(v)), sizeof(v));
	assert_int_equal(v, 1);
	posts = fv.fv_send_post_calls;
	svc_take_done(&f->svc.sv_groups[0]);
	assert_false(svc_done_pending(&f->svc.sv_groups[0]));
	assert_int_equal(fv.fv_nsends, 3);
	/* ... and go out chained, with one post. */
	assert_int_equal(fv.fv_send_post_calls, posts + 1);
	assert_int_equal(atomic_load(&f->svc.sv_ct.send_batches), 1);
	/* The next reply wakes the loop again. */
	p = msg;
	p = put_msg_nochunks(p, 0x53, 1);
	p = put_call(p, 0x5053, TPROG, 1, TP_NULL);
	deliver(f, msg, (uint32_t)(p - msg));
	assert_true(svc_worker_run_one(&f->svc.sv_groups[0]));
	assert_int_equal(read(f->svc.sv_groups[0].gr_wake_fd, &v, sizeof(v)), sizeof(v));
	assert_int_equal(v, 1);
	svc_take_done(&f->svc.sv_groups[0]);
	svc_conn_cq_event_poll(f->conn);
	assert_baseline(f);
}

/* Three NULL calls (rpcrdma xids @xid0 .. + 2) served by a worker; the
 * post of their three replies, batched, fails. */
static void three_replies_post_fails(struct fixture *f, uint32_t xid0)
{
	uint8_t msg[128], *p;
	uint32_t i;

	for (i = 0; i < 3; i++) {
		p = put_msg_nochunks(msg, xid0 + i, 1);
		p = put_call(p, (xid0 << 8) + xid0 + i, TPROG, 1, TP_NULL);
		queue_recv(f, msg, (uint32_t)(p - msg));
	}
	svc_conn_cq_event_poll(f->conn);
	for (i = 0; i < 3; i++)
		assert_true(svc_worker_run_one(&f->svc.sv_groups[0]));
	fv.fv_fail_send_post_at = fv.fv_send_post_calls + 1;
	svc_take_done(&f->svc.sv_groups[0]);
}

/*
 * A batched post of three replies fails: the connection goes down first,
 * then the three calls (none posted, so no completion will come) are
 * given back; nothing leaks.
 */
static void test_batched_post_failure(void **state)
{
	struct fixture *f = *state;

	three_replies_post_fails(f, 0x60);
	assert_int_equal(fv.fv_nsends, 0);
	assert_true(f->conn->sx_closing);
	assert_int_equal(f->conn->sx_calls_out, 0);
	assert_int_equal(atomic_load(&f->svc.sv_ct.post_errors), 1);
	fv_flush_recvs();
	svc_conn_cq_event_poll(f->conn);
	assert_true(f->conn->sx_reap);
	assert_int_equal(atomic_load(&f->svc.sv_ct.ctx_in_use), 0);
}

/*
 * The capture (rpcrdma-nfsd --capture) records a reply when its Send is
 * posted: a call answered normally gives two frames (the call received,
 * the reply sent), a batch whose post fails gives only its calls.
 */
static void test_capture_posted_replies_only(void **state)
{
	struct fixture *f = *state;
	struct rpcrdma_capture_config ccfg = { 0 };
	struct rpcrdma_capture_stats st;
	struct rpcrdma_capture *cap;
	char path[] = "/tmp/test_svc_capXXXXXX";
	uint8_t msg[128], *p;
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	close(fd);
	ccfg.cc_path = path;
	assert_int_equal(rpcrdma_capture_open(&ccfg, &cap), 0);
	assert_int_equal(rpcrdma_svc_set_capture(&f->svc, cap), 0);
	f->conn->sx_capture = svc_capture_conn_open(f->conn, 0x11);
	assert_non_null(f->conn->sx_capture);
	/* the endpoints rdma_cm gives an accepted connection */
	f->conn->sx_capture->ce_local.ss_family = AF_INET;
	f->conn->sx_capture->ce_peer.ss_family = AF_INET;

	/* one call, answered: its frame and its reply's */
	p = put_msg_nochunks(msg, 0x90, 1);
	p = put_call(p, 0x9090, TPROG, 1, TP_NULL);
	deliver(f, msg, (uint32_t)(p - msg));
	run_workers(f);
	assert_int_equal(fv.fv_nsends, 1);

	/* three calls whose batched reply post fails: their frames only */
	three_replies_post_fails(f, 0x91);
	assert_int_equal(fv.fv_nsends, 1);
	assert_true(f->conn->sx_closing);

	rpcrdma_capture_close(cap, &st);
	assert_int_equal(st.cs_drops, 0);
	assert_int_equal(st.cs_frames, 2 + 3);
	unlink(path);
	f->svc.sv_capture = NULL;
	fv_flush_recvs();
	svc_conn_cq_event_poll(f->conn);
	assert_true(f->conn->sx_reap);
	assert_int_equal(atomic_load(&f->svc.sv_ct.ctx_in_use), 0);
}

/* A send CQ for svc_conn_send_arm(): ibv_req_notify_cq() reaches here. */
static unsigned g_send_arms;

static int count_req_notify(struct ibv_cq *cq, int solicited_only)
{
	(void)cq;
	assert_int_equal(solicited_only, 0);
	g_send_arms++;
	return 0;
}

/*
 * The send CQ is armed only while something waits on it: with nothing
 * out, never; with only a reply's context out, not before SVC_SEND_REAP_MS
 * has passed (the run loop's sleep is bounded meanwhile); at once for an
 * RDMA Read, a closing connection, a call waiting for send-queue slots,
 * a message or call waiting for a context, or a device whose workers post.
 */
static void test_send_cq_armed_when_awaited(void **state)
{
	struct fixture *f = *state;
	struct svc_group *grp = &f->svc.sv_groups[0];
	struct ibv_context ctx;
	struct ibv_cq scq;
	struct svc_call wait_cc;
	uint64_t t0 = 5000;

	memset(&ctx, 0, sizeof(ctx));
	memset(&scq, 0, sizeof(scq));
	ctx.ops.req_notify_cq = count_req_notify;
	scq.context = &ctx;
	f->conn->sx_scq = &scq;
	g_send_arms = 0;

	/* nothing out */
	assert_false(svc_conn_send_arm(f->conn, t0));
	assert_false(grp->gr_lazy_sends);
	/* a reply's context out: lazy for SVC_SEND_REAP_MS */
	f->conn->sx_calls_out = 1;
	assert_false(svc_conn_send_arm(f->conn, t0));
	assert_true(grp->gr_lazy_sends);
	grp->gr_lazy_sends = false;
	assert_false(svc_conn_send_arm(f->conn, t0 + SVC_SEND_REAP_MS - 1));
	assert_true(grp->gr_lazy_sends);
	assert_int_equal(g_send_arms, 0);
	assert_true(svc_conn_send_arm(f->conn, t0 + SVC_SEND_REAP_MS));
	assert_int_equal(g_send_arms, 1);
	assert_int_equal(f->conn->sx_dev->dv_armed, 1);
	/* armed once: its event has not been read, no second request */
	assert_false(svc_conn_send_arm(f->conn, t0 + 2 * SVC_SEND_REAP_MS));
	assert_int_equal(g_send_arms, 1);
	/* the event read (svc_dev_cq_event() does this) */
	f->conn->sx_sarmed = false;
	f->conn->sx_dev->dv_armed--;
	/* the contexts came back: the clock starts again */
	f->conn->sx_calls_out = 0;
	assert_false(svc_conn_send_arm(f->conn, t0 + 100));
	assert_int_equal(f->conn->sx_lazy_ms, 0);

	/* each of these is awaited at once, contexts out or not */
	f->conn->sx_reads_out = 1;
	assert_true(svc_conn_send_arm(f->conn, t0));
	f->conn->sx_sarmed = false;
	f->conn->sx_reads_out = 0;

	f->conn->sx_sqwait_head = &wait_cc;
	assert_true(svc_conn_send_arm(f->conn, t0));
	f->conn->sx_sarmed = false;
	f->conn->sx_sqwait_head = NULL;

	f->conn->sx_dev->dv_cwait_head = &wait_cc;
	assert_true(svc_conn_send_arm(f->conn, t0));
	f->conn->sx_sarmed = false;
	f->conn->sx_dev->dv_cwait_head = NULL;

	f->conn->sx_dev->dv_worker_posts = true;
	assert_true(svc_conn_send_arm(f->conn, t0));
	f->conn->sx_sarmed = false;
	f->conn->sx_dev->dv_worker_posts = false;

	f->conn->sx_closing = true;
	assert_true(svc_conn_send_arm(f->conn, t0));
	f->conn->sx_sarmed = false;
	f->conn->sx_closing = false;
	assert_int_equal(g_send_arms, 6);

	/* a spinning run loop (--poll) polls every CQ and arms none */
	f->svc.sv_cfg.sc_poll = true;
	f->conn->sx_reads_out = 1;
	assert_false(svc_conn_send_arm(f->conn, t0));
	f->conn->sx_reads_out = 0;
	f->svc.sv_cfg.sc_poll = false;
	assert_int_equal(g_send_arms, 6);

	f->conn->sx_dev->dv_armed = 0;
	f->conn->sx_scq = NULL; /* not a real CQ: nothing to destroy */
}

/*
 * Calls waiting for a large context are served in arrival order: with two
 * large contexts and four calls that need one, the third and fourth wait,
 * and their replies follow in the order they arrived.
 */
static void test_large_waiters_in_order(void **state)
{
	struct fixture *f = *state;
	uint8_t msg[128];
	uint32_t i;

	for (i = 0; i < 4; i++)
		deliver(f, msg, put_reply_chunk_call(msg, 0x70 + i, 4096));
	assert_int_equal(atomic_load(&f->svc.sv_ct.large_waits), 2);
	assert_int_equal(f->conn->sx_dev->dv_cwait_head->cc_hdr.rh_xid, 0x72);
	assert_int_equal(f->conn->sx_dev->dv_cwait_tail->cc_hdr.rh_xid, 0x73);
	run_workers(f);
	run_workers(f);
	assert_int_equal(fv.fv_nsends, 4);
	for (i = 0; i < 4; i++)
		assert_int_equal(rpcrdma_container_of((struct rpcrdma_cqe *)(uintptr_t)
				 fv.fv_send_ids[i], struct svc_call, cc_cqe)->cc_hdr.rh_xid,
				 0x70 + i);
	assert_baseline(f);
}

/*
 * The default --max-connections keeps idle connections within the budget,
 * their queue rings included.  Budget 2 MiB, 128 credits, inline 4096: a
 * new connection has 16 + 8 Receives of 4 KiB (96 KiB) and, as Soft-RoCE
 * sizes them, a send queue of 256 x 512 B (192 slots rounded up), a
 * receive queue of 256 x 64 B (136) and a CQ of 512 x 64 B (328): 176 KiB.
 * 2 MiB / 272 KiB = 7 connections (the receive half alone would allow 10).
 */
static void test_default_max_connections(void **state)
{
	struct rpcrdma_svc svc;
	struct rpcrdma_svc_config cfg = {
		.sc_credits = 128,
		.sc_inline_size = 4096,
		.sc_max_payload = 65536,
		.sc_memory = 2u << 20,
		.sc_log = stderr,
	};

	(void)state;
	memset(&svc, 0, sizeof(svc));
	assert_int_equal(svc_conn_queue_bytes(128), 176u << 10);
	assert_int_equal(svc_init(&svc, &cfg), 0);
	assert_int_equal(svc.sv_cfg.sc_max_connections, 7);
	/* Given explicitly, it is taken as it is. */
	svc_fini(&svc);
	memset(&svc, 0, sizeof(svc));
	cfg.sc_max_connections = 100;
	assert_int_equal(svc_init(&svc, &cfg), 0);
	assert_int_equal(svc.sv_cfg.sc_max_connections, 100);
	svc_fini(&svc);
}

/*
 * RPCRDMA_SVC_TRY_TRANSPORT: a call is first offered to its dispatch
 * function on the transport thread (rq_transport set).  Served there, its
 * reply is posted before the Receive's poll returns, with no worker; a
 * call that answers RPCRDMA_SVC_DEFER goes to a worker and is dispatched
 * again from the start of its arguments, whatever the first try read or
 * wrote.
 */
static unsigned g_try_transport, g_try_worker;

static int try_dispatch(struct rpcrdma_svc_req *req, void *arg)
{
	if (!req->rq_transport) {
		g_try_worker++;
		return tprog_dispatch(req, arg);
	}
	g_try_transport++;
	if (req->rq_msg.rm_proc != TP_ECHO)
		return tprog_dispatch(req, arg);
	/* read and write a little, then give up: all of it must be undone */
	(void)rpcrdma_xdr_get_u32(&req->rq_args);
	rpcrdma_xdr_put_u32(&req->rq_res, 0xdeadbeef);
	return RPCRDMA_SVC_DEFER;
}

static void test_try_transport(void **state)
{
	struct fixture *f = *state;
	uint8_t msg[128], *p;
	static const uint8_t echo_tail[] = {
		0, 0, 0, 0x77, 0, 0, 0, 1, 0, 0, 0, 0, /* rpc xid, REPLY, accepted */
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,   /* verf none, SUCCESS */
		0, 0, 0, 5, 'h', 'e', 'l', 'l', 'o', 0, 0, 0,
	};

	g_try_transport = g_try_worker = 0;
	assert_int_equal(rpcrdma_svc_register_flags(&f->svc, TPROG, 2, try_dispatch, NULL, 0x2),
			 -EINVAL);
	assert_int_equal(rpcrdma_svc_register_flags(&f->svc, TPROG, 2, try_dispatch, NULL,
						    RPCRDMA_SVC_TRY_TRANSPORT), 0);
	/* NULL: served during the poll, nothing queued for a worker */
	p = put_msg_nochunks(msg, 0x61, 1);
	p = put_call(p, 0x66, TPROG, 2, TP_NULL);
	deliver(f, msg, (uint32_t)(p - msg));
	assert_int_equal(fv.fv_nsends, 1);
	assert_null(f->svc.sv_groups[0].gr_wq_head);
	assert_null(f->svc.sv_groups[0].gr_batch_head);
	assert_int_equal(g_try_transport, 1);
	assert_int_equal(g_try_worker, 0);
	assert_int_equal(atomic_load(&f->svc.sv_ct.transport_calls), 1);
	svc_conn_cq_event_poll(f->conn); /* the Send completion */
	assert_baseline(f);

	/* ECHO: deferred, then served by a worker from its first argument */
	p = put_msg_nochunks(msg, 0x62, 1);
	p = put_call(p, 0x77, TPROG, 2, TP_ECHO);
	p = put32(p, 5);
	memcpy(p, "hello\0\0\0", 8);
	p += 8;
	deliver(f, msg, (uint32_t)(p - msg));
	assert_int_equal(fv.fv_nsends, 1);
	assert_non_null(f->svc.sv_groups[0].gr_wq_head);
	assert_int_equal(atomic_load(&f->svc.sv_ct.transport_defers), 1);
	run_workers(f);
	assert_int_equal(g_try_transport, 2);
	assert_int_equal(g_try_worker, 1);
	assert_int_equal(fv.fv_nsends, 2);
	assert_int_equal(fv.fv_sent_len, 28 + sizeof(echo_tail));
	assert_memory_equal(fv.fv_sent + 28, echo_tail, sizeof(echo_tail));
	assert_int_equal(atomic_load(&f->svc.sv_ct.transport_calls), 1);
	assert_baseline(f);
	/* version 1, registered without the flag, never tries */
	p = put_msg_nochunks(msg, 0x63, 1);
	p = put_call(p, 0x78, TPROG, 1, TP_NULL);
	deliver(f, msg, (uint32_t)(p - msg));
	assert_int_equal(fv.fv_nsends, 2);
	run_workers(f);
	assert_int_equal(fv.fv_nsends, 3);
	assert_int_equal(g_try_transport, 2);
	assert_baseline(f);
}

/*
 * Calls served on the transport thread during one drain batch (here with
 * sc_loop_dispatch) have their replies chained and posted together after
 * the batch's Receives: three calls, three Sends, one post of Sends.
 */
static void test_loop_replies_batched(void **state)
{
	struct fixture *f = *state;
	uint8_t msg[128], *p;
	unsigned posts = fv.fv_send_post_calls, recv_posts;
	uint32_t i;

	for (i = 0; i < 3; i++) {
		p = put_msg_nochunks(msg, 0x70 + i, 1);
		p = put_call(p, 0x7070 + i, TPROG, 1, TP_NULL);
		queue_recv(f, msg, (uint32_t)(p - msg));
	}
	recv_posts = fv.fv_recv_post_calls;
	svc_conn_cq_event_poll(f->conn);
	assert_int_equal(fv.fv_nsends, 3);
	assert_int_equal(fv.fv_send_post_calls, posts + 1);
	assert_int_equal(atomic_load(&f->svc.sv_ct.send_batches), 1);
	/* the Receives went back first, with one post */
	assert_int_equal(fv.fv_recv_post_calls, recv_posts + 1);
	assert_true(fv.fv_last_post_was_send);
	svc_conn_cq_event_poll(f->conn); /* the Send completions */
	assert_baseline(f);
}

/* ---------- replies posted by the worker (dv_worker_posts) ---------- */

/* Empty the group's eventfd; true when it had been written. */
static bool take_wake(struct fixture *f)
{
	uint64_t v = 0;

	return read(f->svc.sv_groups[0].gr_wake_fd, &v, sizeof(v)) == sizeof(v);
}

/* A NULL call with RPC xid @rxid, handed to the work queue. */
static void queue_null_call(struct fixture *f, uint32_t xid, uint32_t rxid)
{
	uint8_t msg[128], *p = msg;

	p = put_msg_nochunks(p, xid, 1);
	p = put_call(p, rxid, TPROG, 1, TP_NULL);
	deliver(f, msg, (uint32_t)(p - msg));
	assert_non_null(f->svc.sv_groups[0].gr_wq_head);
}

/*
 * Where the device lets workers post, the worker that ran the call posts
 * its reply itself: one post from the worker, nothing on the done queue,
 * the run loop never woken; the reply is the same bytes the transport
 * thread would send, the Send completion gives everything back, and every
 * send-queue slot is free again (the unused ones went back at once).
 */
static void test_worker_posts_reply(void **state)
{
	struct fixture *f = *state;
	static const uint8_t want[] = {
		0, 0, 0, 0x81, 0, 0, 0, 1, 0, 0, 0, 4, 0, 0, 0, 0, /* xid vers credits MSG */
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,             /* three empty lists */
		0x81, 0x81, 0x81, 0x81, 0, 0, 0, 1,             /* rpc xid, REPLY */
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,             /* accepted, verf none */
		0, 0, 0, 0,                                     /* SUCCESS */
	};
	uint32_t slots = f->conn->sx_sq_size;
	unsigned posts;

	f->conn->sx_dev->dv_worker_posts = true;
	take_wake(f);
	queue_null_call(f, 0x81, 0x81818181);
	posts = fv.fv_send_post_calls;
	assert_true(svc_worker_run_one(&f->svc.sv_groups[0]));
	assert_int_equal(fv.fv_send_post_calls, posts + 1);
	assert_false(svc_done_pending(&f->svc.sv_groups[0]));
	assert_false(take_wake(f));
	assert_int_equal(atomic_load(&f->svc.sv_ct.worker_posts), 1);
	/* One slot held (the Send), not the longest chain's eight. */
	assert_int_equal(atomic_load(&f->conn->sx_sq_free), slots - 1);
	svc_conn_cq_event_poll(f->conn);
	assert_int_equal(fv.fv_nsends, 1);
	assert_int_equal(fv.fv_sent_len, sizeof(want));
	assert_memory_equal(fv.fv_sent, want, sizeof(want));
	assert_int_equal(atomic_load(&f->conn->sx_sq_free), slots);
	assert_baseline(f);
}

/*
 * The worker hands the call back, untouched, when it cannot post at once:
 * send-queue slots short of the longest chain, a closing connection.  The
 * transport thread then makes and posts the reply (or drops the call).
 */
static void test_worker_post_hands_back(void **state)
{
	struct fixture *f = *state;
	uint32_t slots = f->conn->sx_sq_size;
	unsigned posts;

	f->conn->sx_dev->dv_worker_posts = true;
	take_wake(f);
	/* Seven free slots: a small context's chain may need eight. */
	atomic_store(&f->conn->sx_sq_free, SVC_SMALL_MAX_WR - 1);
	queue_null_call(f, 0x82, 0x82828282);
	posts = fv.fv_send_post_calls;
	assert_true(svc_worker_run_one(&f->svc.sv_groups[0]));
	assert_int_equal(fv.fv_send_post_calls, posts);
	assert_true(svc_done_pending(&f->svc.sv_groups[0]));
	assert_true(take_wake(f));
	assert_int_equal(atomic_load(&f->conn->sx_sq_free), SVC_SMALL_MAX_WR - 1);
	svc_take_done(&f->svc.sv_groups[0]);
	assert_int_equal(fv.fv_send_post_calls, posts + 1);
	svc_conn_cq_event_poll(f->conn);
	assert_int_equal(fv.fv_nsends, 1);
	assert_int_equal(atomic_load(&f->svc.sv_ct.worker_posts), 0);
	atomic_store(&f->conn->sx_sq_free, slots);
	assert_baseline(f);

	/* Closing before the worker is done: the loop gives the call back. */
	queue_null_call(f, 0x83, 0x83838383);
	svc_conn_disconnected(f->conn);
	assert_true(svc_worker_run_one(&f->svc.sv_groups[0]));
	assert_int_equal(fv.fv_send_post_calls, posts + 1);
	assert_int_equal(f->conn->sx_calls_out, 1);
	svc_take_done(&f->svc.sv_groups[0]);
	assert_int_equal(f->conn->sx_calls_out, 0);
	assert_int_equal(atomic_load(&f->svc.sv_ct.worker_posts), 0);
	fv_flush_recvs();
	svc_conn_cq_event_poll(f->conn);
	assert_true(f->conn->sx_reap);
}

/*
 * The worker's post fails: the call goes back to the transport thread,
 * which closes the connection first and then gives the call back (no
 * completion will come for it); the slots are free again, nothing leaks.
 */
static void test_worker_post_failure(void **state)
{
	struct fixture *f = *state;
	uint32_t slots = f->conn->sx_sq_size;

	f->conn->sx_dev->dv_worker_posts = true;
	take_wake(f);
	queue_null_call(f, 0x84, 0x84848484);
	fv.fv_fail_send_post_at = fv.fv_send_post_calls + 1;
	assert_true(svc_worker_run_one(&f->svc.sv_groups[0]));
	assert_int_equal(atomic_load(&f->svc.sv_ct.worker_posts), 0);
	assert_true(svc_done_pending(&f->svc.sv_groups[0]));
	assert_true(take_wake(f));
	assert_int_equal(atomic_load(&f->conn->sx_sq_free), slots);
	assert_false(f->conn->sx_closing);
	svc_take_done(&f->svc.sv_groups[0]);
	assert_true(f->conn->sx_closing);
	assert_int_equal(f->conn->sx_calls_out, 0);
	assert_int_equal(atomic_load(&f->svc.sv_ct.post_errors), 1);
	assert_int_equal(fv.fv_nsends, 0);
	fv_flush_recvs();
	svc_conn_cq_event_poll(f->conn);
	assert_true(f->conn->sx_reap);
	assert_int_equal(atomic_load(&f->svc.sv_ct.ctx_in_use), 0);
}

/* A worker's reply that fits nowhere: the worker posts the ERR_CHUNK. */
static void test_worker_posts_err_chunk(void **state)
{
	struct fixture *f = *state;
	uint8_t msg[128], *p = msg;
	static const uint8_t want[] = {
		0, 0, 0, 0x85, 0, 0, 0, 1, 0, 0, 0, 4, 0, 0, 0, 4, 0, 0, 0, 2,
	};

	f->conn->sx_dev->dv_worker_posts = true;
	p = put_msg_nochunks(p, 0x85, 1);
	p = put_call(p, 0x8585, TPROG, 1, TP_BIG);
	p = put32(p, 3000);
	deliver(f, msg, (uint32_t)(p - msg));
	assert_true(svc_worker_run_one(&f->svc.sv_groups[0]));
	assert_false(svc_done_pending(&f->svc.sv_groups[0]));
	assert_int_equal(atomic_load(&f->svc.sv_ct.worker_posts), 1);
	svc_conn_cq_event_poll(f->conn);
	assert_int_equal(fv.fv_sent_len, sizeof(want));
	assert_memory_equal(fv.fv_sent, want, sizeof(want));
	assert_int_equal(atomic_load(&f->svc.sv_ct.rdma_errors_sent), 1);
	assert_baseline(f);
}

/* The run loop's part while a worker is still inside its post (the hook
 * of fv_inside_post): the peer disconnects, every Receive flushes, the
 * worker's Send completes and its context comes back, the loop reaps. */
struct inside_reap {
	struct svc_conn *ir_conn;
	bool ir_ran, ir_reap, ir_kept, ir_wait;
};

static void reap_inside_post(void *arg)
{
	struct inside_reap *ir = arg;
	struct svc_conn *conn = ir->ir_conn;
	struct svc_group *grp = conn->sx_grp;

	ir->ir_ran = true;
	svc_conn_disconnected(conn);
	fv_flush_recvs();
	svc_conn_cq_event_poll(conn);
	ir->ir_reap = conn->sx_reap;
	conn->sx_id = NULL; /* the fixture's cm_id is no real one */
	svc_conn_reap(grp);
	ir->ir_kept = grp->gr_conns == conn;
	ir->ir_wait = grp->gr_reap_wait;
}

/*
 * A worker's Send may complete, and its context come back, before the
 * provider returns from the post (it still holds the QP's lock then): a
 * connection closing meanwhile must not be freed, its QP destroyed, under
 * the worker.  The run loop leaves it for the next turn (gr_reap_wait,
 * no sleep) and frees it once the worker is out of its post.
 */
static void test_worker_post_reap_wait(void **state)
{
	struct fixture *f = *state;
	struct svc_group *grp = &f->svc.sv_groups[0];
	struct inside_reap ir = { .ir_conn = f->conn };

	f->conn->sx_dev->dv_worker_posts = true;
	queue_null_call(f, 0x86, 0x86868686);
	fv.fv_inside_post = reap_inside_post;
	fv.fv_inside_post_arg = &ir;
	fv.fv_faults.ff_inside_post_pct = 100;
	assert_true(svc_worker_run_one(grp));
	fv.fv_inside_post = NULL;
	fv.fv_faults.ff_inside_post_pct = 0;
	assert_true(ir.ir_ran);
	assert_true(ir.ir_reap);     /* everything back: drained */
	assert_true(ir.ir_kept);     /* but not freed under the worker */
	assert_true(ir.ir_wait);
	assert_int_equal(atomic_load(&f->svc.sv_ct.worker_posts), 1);
	assert_int_equal(atomic_load(&f->conn->sx_worker_posting), 0);
	/* The worker is out: the next turn frees it. */
	svc_conn_reap(grp);
	assert_null(grp->gr_conns);
	assert_false(grp->gr_reap_wait);
	f->conn = NULL;
	assert_int_equal(atomic_load(&f->svc.sv_ct.ctx_in_use), 0);
}

/* sc_reply_post decides for a device without verbs (unit tests): the
 * transport thread unless the worker is asked for. */
static void test_reply_post_config(void **state)
{
	struct fixture *f = *state;
	struct ibv_pd pd2, pd3;
	struct svc_dev *dev;

	assert_false(f->conn->sx_dev->dv_worker_posts); /* AUTO, no verbs */
	f->svc.sv_cfg.sc_reply_post = RPCRDMA_SVC_POST_WORKER;
	dev = svc_dev_get(&f->svc.sv_groups[0], NULL, &pd2);
	assert_non_null(dev);
	assert_true(dev->dv_worker_posts);
	f->svc.sv_cfg.sc_reply_post = RPCRDMA_SVC_POST_TRANSPORT;
	dev = svc_dev_get(&f->svc.sv_groups[0], NULL, &pd3);
	assert_non_null(dev);
	assert_false(dev->dv_worker_posts);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_inline_call, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_version, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stats_hooks, setup, teardown),
		cmocka_unit_test_setup_teardown(test_read_chunk_and_reply_chunk, setup, teardown),
		cmocka_unit_test_setup_teardown(test_loop_inline_call, setup_loop, teardown),
		cmocka_unit_test_setup_teardown(test_loop_read_chunk, setup_loop, teardown),
		cmocka_unit_test_setup_teardown(test_loop_replies_batched, setup_loop, teardown),
		cmocka_unit_test_setup_teardown(test_write_chunk, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reply_fits_nowhere, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reply_header_beyond_inline, setup, teardown),
		cmocka_unit_test_setup_teardown(test_send_queue_slots, setup, teardown),
		cmocka_unit_test_setup_teardown(test_read_post_failure_disconnects_first, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reads_of_one_batch_one_post, setup, teardown),
		cmocka_unit_test_setup_teardown(test_batched_read_post_failure, setup, teardown),
		cmocka_unit_test_setup_teardown(test_nonbatch_reads_ok, setup, teardown),
		cmocka_unit_test_setup_teardown(test_nonbatch_reads_fail, setup, teardown),
		cmocka_unit_test_setup_teardown(test_nonbatch_reads_partial, setup, teardown),
		cmocka_unit_test_setup_teardown(test_batched_read_partial_post, setup, teardown),
		cmocka_unit_test_setup_teardown(test_admission_limit, setup, teardown),
		cmocka_unit_test(test_default_max_connections),
		cmocka_unit_test_setup_teardown(test_handoff_batched, setup, teardown),
		cmocka_unit_test_setup_teardown(test_try_transport, setup, teardown),
		cmocka_unit_test_setup_teardown(test_large_waiters_in_order, setup, teardown),
		cmocka_unit_test_setup_teardown(test_batched_post_failure, setup, teardown),
		cmocka_unit_test_setup_teardown(test_capture_posted_replies_only, setup, teardown),
		cmocka_unit_test_setup_teardown(test_send_cq_armed_when_awaited, setup, teardown),
		cmocka_unit_test_setup_teardown(test_worker_posts_reply, setup, teardown),
		cmocka_unit_test_setup_teardown(test_worker_post_hands_back, setup, teardown),
		cmocka_unit_test_setup_teardown(test_worker_post_failure, setup, teardown),
		cmocka_unit_test_setup_teardown(test_worker_posts_err_chunk, setup, teardown),
		cmocka_unit_test_setup_teardown(test_worker_post_reap_wait, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reply_post_config, setup, teardown),
		cmocka_unit_test_setup_teardown(test_handshake_timeout, setup, teardown),
		cmocka_unit_test_setup_teardown(test_credit_growth, setup_grow, teardown),
		cmocka_unit_test_setup_teardown(test_pool_budget, setup, teardown),
		cmocka_unit_test_setup_teardown(test_prog_unavail_mismatch, setup, teardown),
		cmocka_unit_test_setup_teardown(test_context_backpressure, setup, teardown),
		cmocka_unit_test_setup_teardown(test_inline_call_small_context, setup, teardown),
		cmocka_unit_test_setup_teardown(test_large_context_backpressure, setup, teardown),
		cmocka_unit_test_setup_teardown(test_disconnect_while_large_waiting, setup, teardown),
		cmocka_unit_test_setup_teardown(test_read_error_and_flush, setup, teardown),
		cmocka_unit_test_setup_teardown(test_recv_refill_batched, setup, teardown),
		cmocka_unit_test_setup_teardown(test_recv_refill_bounded, setup, teardown),
		cmocka_unit_test_setup_teardown(test_drain_budget, setup_wide, teardown),
		cmocka_unit_test_setup_teardown(test_completion_inside_post, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
