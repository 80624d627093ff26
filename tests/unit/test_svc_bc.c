// SPDX-License-Identifier: MIT
/*
 * test_svc_bc.c - the server's backchannel (RFC 8167) through the fake
 * device: a handle taken from a forward call, backchannel calls on it,
 * their credits, replies matched by xid (one that overtakes its Send
 * completion, one racing a forward call, one of no call), timeouts, and a
 * disconnect with calls outstanding.  Expected bytes are worked out by
 * hand from RFC 8166 4.2, RFC 8167 5.1 and RFC 5531 9.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
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

#include "svc/svc_bc.h"

#define FWDPROG 0x20000077u  /* forward program: takes the handle */
#define CBPROG 0x40000000u   /* the backchannel program called */

static struct rpcrdma_svc_bc *g_bc;
static int g_get_rc; /* the last rpcrdma_svc_bc_get()'s */

/* Take the handle of the call's connection (once: later calls of the
 * same connection find the same one). */
static int fwd_dispatch(struct rpcrdma_svc_req *req, void *arg)
{
	struct rpcrdma_svc_bc *bc;

	(void)arg;
	g_get_rc = rpcrdma_svc_bc_get(req, &bc);
	if (!g_get_rc) {
		if (g_bc) {
			assert_ptr_equal(bc, g_bc);
			rpcrdma_svc_bc_put(bc);
		} else {
			g_bc = bc;
		}
	}
	return RPCRDMA_SVC_SUCCESS;
}

/* What the completion callbacks saw, in order. */
static struct {
	unsigned n;
	int status[16];
	uint32_t reply_stat[16];
	uint32_t res_len[16];
	uint32_t res0[16];
	void *arg[16];
} g_done;

static void on_done(void *arg, int status, const struct rpcrdma_rpc_msg *reply,
		    const uint8_t *res, size_t res_len)
{
	unsigned i = g_done.n++;

	assert_true(i < 16);
	g_done.status[i] = status;
	g_done.arg[i] = arg;
	g_done.reply_stat[i] = reply ? reply->rm_reply_stat : UINT32_MAX;
	g_done.res_len[i] = (uint32_t)res_len;
	g_done.res0[i] = res_len >= 4 ? get32(res) : 0;
	if (status)
		assert_null(reply);
}

struct fixture {
	struct rpcrdma_svc svc;
	struct svc_conn *conn;
	struct rdma_cm_id id;
	struct ibv_qp qp;
	struct ibv_pd pd;
};

/* The group (transport thread) the fixture's connection belongs to. */
static unsigned g_group;

static int setup(void **state)
{
	struct rpcrdma_svc_config cfg = {
		.sc_transport_threads = 2,
		.sc_credits = 4,
		.sc_inline_size = 1024,
		.sc_max_payload = 65536,
		.sc_call_contexts = 2,
		.sc_small_contexts = 8,
		.sc_threads = 1,
		.sc_log = stderr,
	};
	struct fixture *f = calloc(1, sizeof(*f));

	fv_reset();
	memset(&g_done, 0, sizeof(g_done));
	g_bc = NULL;
	assert_int_equal(svc_init(&f->svc, &cfg), 0);
	assert_int_equal(rpcrdma_svc_register(&f->svc, FWDPROG, 1, fwd_dispatch, NULL), 0);
	f->id.qp = &f->qp;
	f->id.route.addr.dst_sin.sin_family = AF_INET;
	f->conn = calloc(1, sizeof(*f->conn));
	f->conn->sx_svc = &f->svc;
	f->conn->sx_grp = &f->svc.sv_groups[g_group];
	f->conn->sx_id = &f->id;
	f->conn->sx_id_num = 1;
	f->conn->sx_dev = svc_dev_get(f->conn->sx_grp, NULL, &f->pd);
	assert_non_null(f->conn->sx_dev);
	f->conn->sx_credits = 4;
	f->conn->sx_max_credits = 4;
	f->conn->sx_inline_recv = 1024;
	f->conn->sx_inline_send = 1024;
	assert_int_equal(svc_conn_alloc_pools(f->conn), 0);
	assert_int_equal(svc_conn_post_all_recvs(f->conn), 0);
	f->conn->sx_grp->gr_conns = f->conn;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	rpcrdma_svc_bc_put(g_bc);
	if (f->conn) {
		f->conn->sx_id = NULL;
		svc_conn_destroy(f->conn);
	}
	assert_int_equal(atomic_load(&f->svc.sv_ct.buf_bytes_in_use), 0);
	assert_int_equal(atomic_load(&f->svc.sv_groups[0].gr_bc_pending), 0);
	assert_int_equal(atomic_load(&f->svc.sv_groups[1].gr_bc_pending), 0);
	svc_dev_destroy_all(&f->svc.sv_groups[0]);
	svc_dev_destroy_all(&f->svc.sv_groups[1]);
	assert_int_equal(atomic_load(&f->svc.sv_ct.mrs_open), 0);
	svc_fini(&f->svc);
	free(f);
	fv_uninstall();
	return 0;
}

/* ---------- messages ---------- */

/* RDMA_MSG, three empty chunk lists (RFC 8166 4.2): 28 bytes. */
static uint8_t *put_hdr(uint8_t *p, uint32_t xid, uint32_t credits)
{
	p = put32(p, xid);
	p = put32(p, 1);
	p = put32(p, credits);
	p = put32(p, RDMA_MSG);
	p = put32(p, 0);
	p = put32(p, 0);
	return put32(p, 0);
}

/* A forward NULL call of FWDPROG (RFC 5531 9, AUTH_NONE): 68 bytes. */
static uint32_t fwd_call(uint8_t *msg, uint32_t xid)
{
	uint8_t *p = put_hdr(msg, xid, 8);

	p = put32(p, xid);
	p = put32(p, 0);       /* CALL */
	p = put32(p, 2);
	p = put32(p, FWDPROG);
	p = put32(p, 1);
	p = put32(p, 0);
	p = put32(p, 0);
	p = put32(p, 0);
	p = put32(p, 0);
	p = put32(p, 0);
	return (uint32_t)(p - msg);
}

/* A backchannel reply from the client: accepted, SUCCESS, one result
 * word @res, granting @credits backchannel credits (RFC 8167 4.1). */
static uint32_t bc_reply(uint8_t *msg, uint32_t xid, uint32_t credits, uint32_t res)
{
	uint8_t *p = put_hdr(msg, xid, credits);

	p = put32(p, xid);
	p = put32(p, 1);       /* REPLY */
	p = put32(p, 0);       /* MSG_ACCEPTED */
	p = put32(p, 0);       /* verifier AUTH_NONE, empty */
	p = put32(p, 0);
	p = put32(p, 0);       /* SUCCESS */
	p = put32(p, res);
	return (uint32_t)(p - msg);
}

static void deliver(struct fixture *f, const uint8_t *msg, uint32_t len)
{
	assert_int_equal(fv_deliver(msg, len), 0);
	svc_conn_cq_event_poll(f->conn);
}

static void run_workers(struct fixture *f)
{
	while (svc_worker_run_one(f->conn->sx_grp))
		;
	svc_take_done(f->conn->sx_grp);
	svc_conn_cq_event_poll(f->conn);
}

/* A forward call whose dispatch takes the handle. */
static void take_handle(struct fixture *f)
{
	uint8_t msg[128];

	deliver(f, msg, fwd_call(msg, 0x10));
	run_workers(f);
	assert_int_equal(g_get_rc, 0);
	assert_non_null(g_bc);
	assert_int_equal(fv.fv_nsends, 1); /* its reply */
	assert_true(rpcrdma_svc_bc_connected(g_bc));
}

static int call(uint32_t proc, void *arg, uint32_t *xid)
{
	static const uint8_t args[8] = { 0, 0, 0, 1, 0, 0, 0, 2 };
	struct rpcrdma_svc_bc_args a = {
		.ba_prog = CBPROG, .ba_vers = 1, .ba_proc = proc,
		.ba_cred_flavor = RPC_AUTH_NONE,
		.ba_args = args, .ba_args_len = sizeof(args),
		.ba_timeout_ms = 5000,
		.ba_done = on_done, .ba_done_arg = arg,
	};

	return rpcrdma_svc_bc_call(g_bc, &a, xid);
}

/* ---------- tests ---------- */

/*
 * A call is queued, sent by the owner thread once kicked, as RFC 8167 5.1
 * lays it out; the reply is matched by xid and its results handed over.
 * The first call goes alone (credit 1 until the client grants more).
 */
static void test_call_and_reply(void **state)
{
	struct fixture *f = *state;
	uint8_t msg[128];
	uint32_t xid, xid2, posted;
	static uint8_t want[28 + 48];
	uint8_t *p;

	take_handle(f);
	posted = fv.fv_nrecv_posted;
	assert_int_equal(call(1, (void *)1, &xid), 0);
	assert_int_equal(fv.fv_nsends, 1);        /* queued, not sent by the caller */
	assert_int_equal(atomic_load(&f->conn->sx_grp->gr_bc_kicks), 1);
	svc_bc_poll(f->conn->sx_grp);
	/* Receives for the replies went first (RFC 8167 4.2.2). */
	assert_int_equal(fv.fv_nrecv_posted, posted + SVC_BC_RECVS);
	assert_int_equal(fv.fv_nsends, 2);
	p = put_hdr(want, xid, SVC_BC_SLOTS);
	p = put32(p, xid);
	p = put32(p, 0);       /* CALL */
	p = put32(p, 2);
	p = put32(p, CBPROG);
	p = put32(p, 1);
	p = put32(p, 1);
	p = put32(p, 0);       /* AUTH_NONE credential */
	p = put32(p, 0);
	p = put32(p, 0);       /* verifier */
	p = put32(p, 0);
	p = put32(p, 1);       /* arguments */
	p = put32(p, 2);
	assert_int_equal(fv.fv_sent_len, (uint32_t)(p - want));
	assert_memory_equal(fv.fv_sent, want, fv.fv_sent_len);

	/* Credit 1: the second call waits for the first reply. */
	assert_int_equal(call(2, (void *)2, &xid2), 0);
	assert_int_equal(xid2, xid + 1);
	svc_bc_poll(f->conn->sx_grp);
	assert_int_equal(fv.fv_nsends, 2);
	svc_conn_cq_event_poll(f->conn); /* the first Send's completion */

	/* The reply grants 2: the second call goes at once. */
	deliver(f, msg, bc_reply(msg, xid, 2, 0xabcd));
	assert_int_equal(g_done.n, 1);
	assert_int_equal(g_done.status[0], 0);
	assert_ptr_equal(g_done.arg[0], (void *)1);
	assert_int_equal(g_done.reply_stat[0], RPC_MSG_ACCEPTED);
	assert_int_equal(g_done.res_len[0], 4);
	assert_int_equal(g_done.res0[0], 0xabcd);
	assert_int_equal(fv.fv_nsends, 3);
	assert_int_equal(get32(fv.fv_sent), xid2);
	assert_int_equal(g_bc->bc_credits, 2);

	svc_conn_cq_event_poll(f->conn);
	deliver(f, msg, bc_reply(msg, xid2, 2, 7));
	assert_int_equal(g_done.n, 2);
	assert_int_equal(g_done.res0[1], 7);
	svc_conn_cq_event_poll(f->conn);
	assert_int_equal(atomic_load(&f->svc.sv_ct.bc_calls), 2);
	assert_int_equal(atomic_load(&f->svc.sv_ct.bc_replies), 2);
	assert_int_equal(f->conn->sx_calls_out, 0);
	/* every Receive, the backchannel's included, is posted again */
	assert_int_equal(f->conn->sx_recvs_posted, f->conn->sx_nrecvs + SVC_BC_RECVS);
	assert_int_equal(g_bc->bc_sends, 0);
}

/*
 * The reply overtakes its Send's completion: the caller is told at once,
 * but the slot (its registered buffer) is free only when the Send
 * completes.  A forward call arriving in the same poll batch is served too.
 */
static void test_reply_before_send_completion_racing_forward(void **state)
{
	struct fixture *f = *state;
	uint8_t msg[128], fwd[128];
	uint32_t xid;
	struct svc_bc_call *bq;

	take_handle(f);
	svc_conn_cq_event_poll(f->conn);
	fv.fv_script_sends = true; /* Send completions come when the test says */
	assert_int_equal(call(0, NULL, &xid), 0);
	svc_bc_poll(f->conn->sx_grp);
	assert_int_equal(fv.fv_nsends, 2);
	bq = &g_bc->bc_calls[0];
	assert_int_equal(bq->bq_state, BQ_SENT);
	assert_true(bq->bq_send_posted);

	/* The reply and a forward call in one batch. */
	assert_int_equal(fv_deliver(msg, bc_reply(msg, xid, 1, 5)), 0);
	assert_int_equal(fv_deliver(fwd, fwd_call(fwd, 0x11)), 0);
	svc_conn_cq_event_poll(f->conn);
	assert_int_equal(g_done.n, 1);
	assert_int_equal(g_done.status[0], 0);
	assert_int_equal(bq->bq_state, BQ_ENDED);
	rpcrdma_svc_bc_put(g_bc); /* the forward dispatch takes another */
	g_bc = NULL;
	run_workers(f);
	assert_non_null(g_bc);
	assert_int_equal(fv.fv_nsends, 3); /* the forward reply */
	assert_int_equal(get32(fv.fv_sent + 28), 0x11);

	/* The backchannel Send completes last: now the slot is free. */
	fv_push(fv.fv_send_ids[2], IBV_WC_SUCCESS, IBV_WC_SEND, 0, 0); /* forward reply */
	svc_conn_cq_event_poll(f->conn);
	assert_int_equal(bq->bq_state, BQ_ENDED);
	fv_push(fv.fv_send_ids[1], IBV_WC_SUCCESS, IBV_WC_SEND, 0, 0); /* the call */
	svc_conn_cq_event_poll(f->conn);
	assert_int_equal(bq->bq_state, BQ_FREE);
	assert_int_equal(f->conn->sx_calls_out, 0);
}

/* A reply whose xid no call waits for is dropped and counted, and
 * answered with nothing; its Receive goes back. */
static void test_unknown_xid(void **state)
{
	struct fixture *f = *state;
	uint8_t msg[128];
	uint32_t posted;

	take_handle(f);
	svc_conn_cq_event_poll(f->conn);
	posted = f->conn->sx_recvs_posted;
	deliver(f, msg, bc_reply(msg, 0x7777, 1, 0));
	assert_int_equal(g_done.n, 0);
	assert_int_equal(fv.fv_nsends, 1);
	assert_int_equal(atomic_load(&f->svc.sv_ct.bc_unmatched), 1);
	assert_int_equal(atomic_load(&f->svc.sv_ct.drops), 1);
	assert_int_equal(f->conn->sx_recvs_posted, posted);
	assert_int_equal(f->conn->sx_calls_out, 0);

	/* A reply with our xid but a malformed RPC header (accept_stat 9)
	 * ends the call with -EBADMSG. */
	{
		uint32_t xid;
		uint8_t *p;

		assert_int_equal(call(0, NULL, &xid), 0);
		svc_bc_poll(f->conn->sx_grp);
		p = msg + bc_reply(msg, xid, 1, 0) - 8;
		put32(p, 9);
		deliver(f, msg, (uint32_t)(p + 4 - msg));
		assert_int_equal(g_done.n, 1);
		assert_int_equal(g_done.status[0], -EBADMSG);
	}
}

/* Slots and credits: RPCRDMA_SVC_BC_SLOTS calls may wait; one more is
 * refused with -EAGAIN; only the credit's worth is on the wire. */
static void test_credits_exhausted(void **state)
{
	struct fixture *f = *state;
	uint8_t msg[128];
	uint32_t xid[SVC_BC_SLOTS], x, i;

	take_handle(f);
	for (i = 0; i < SVC_BC_SLOTS; i++)
		assert_int_equal(call(i, NULL, &xid[i]), 0);
	assert_int_equal(call(9, NULL, &x), -EAGAIN);
	svc_bc_poll(f->conn->sx_grp);
	assert_int_equal(fv.fv_nsends, 2); /* forward reply + one call */
	assert_int_equal(g_bc->bc_in_flight, 1);
	svc_conn_cq_event_poll(f->conn);
	/* The client grants 3: three go out together. */
	deliver(f, msg, bc_reply(msg, xid[0], 3, 0));
	assert_int_equal(fv.fv_nsends, 2 + SVC_BC_SLOTS - 1);
	assert_int_equal(g_bc->bc_in_flight, SVC_BC_SLOTS - 1);
	/* A slot is free again. */
	svc_conn_cq_event_poll(f->conn);
	assert_int_equal(call(9, NULL, &x), 0);
	svc_bc_poll(f->conn->sx_grp);
	assert_int_equal(fv.fv_nsends, 2 + SVC_BC_SLOTS - 1); /* credit 3 in use */
	/* A grant of 0 is read as 1 (RFC 8166 3.3.1). */
	deliver(f, msg, bc_reply(msg, xid[1], 0, 0));
	assert_int_equal(g_bc->bc_credits, 1);
	assert_int_equal(g_done.n, 2);
}

/* Calls that get no reply end with -ETIMEDOUT, queued ones too; a reply
 * that comes later is unknown; the credit comes back. */
static void test_timeouts(void **state)
{
	struct fixture *f = *state;
	uint8_t msg[128];
	uint32_t xid1, xid2, xid3;
	uint64_t now = svc_now_ms();

	take_handle(f);
	assert_int_equal(call(0, (void *)1, &xid1), 0);
	assert_int_equal(call(0, (void *)2, &xid2), 0);
	svc_bc_poll(f->conn->sx_grp);
	svc_conn_cq_event_poll(f->conn);
	assert_int_equal(fv.fv_nsends, 2);
	/* Not yet: deadlines are 5 s after the call. */
	svc_bc_expire(f->conn->sx_grp, now);
	assert_int_equal(g_done.n, 0);
	assert_true(svc_bc_timeout(f->conn->sx_grp, -1) > 0);
	svc_bc_expire(f->conn->sx_grp, now + 60000);
	assert_int_equal(g_done.n, 2);
	assert_int_equal(g_done.status[0], -ETIMEDOUT);
	assert_int_equal(g_done.status[1], -ETIMEDOUT);
	assert_int_equal(atomic_load(&f->svc.sv_ct.bc_timeouts), 2);
	assert_int_equal(g_bc->bc_in_flight, 0);
	assert_int_equal(svc_bc_timeout(f->conn->sx_grp, -1), -1);
	deliver(f, msg, bc_reply(msg, xid1, 1, 0));
	assert_int_equal(g_done.n, 2);
	assert_int_equal(atomic_load(&f->svc.sv_ct.bc_unmatched), 1);
	/* The credit is back: a new call is sent at once. */
	assert_int_equal(call(0, (void *)3, &xid3), 0);
	svc_bc_poll(f->conn->sx_grp);
	assert_int_equal(fv.fv_nsends, 3);
	assert_int_equal(get32(fv.fv_sent), xid3);
	svc_conn_cq_event_poll(f->conn);
}

/*
 * The connection goes with one call on the wire (its Send not executed)
 * and one queued: both end with -ENOTCONN, new calls are refused, the
 * connection is freed only when the Send has flushed, and the handle
 * outlives it.
 */
static void test_disconnect_outstanding(void **state)
{
	struct fixture *f = *state;
	struct fv_faults none = { .ff_seed = 1 };
	uint32_t xid;

	take_handle(f);
	svc_conn_cq_event_poll(f->conn);
	fv_seed(&none); /* send work waits; a disconnect flushes */
	assert_int_equal(call(0, (void *)1, &xid), 0);
	assert_int_equal(call(0, (void *)2, &xid), 0);
	svc_bc_poll(f->conn->sx_grp);
	assert_int_equal(fv_sq_pending(), 1);
	svc_conn_cm_event(&f->svc, f->conn, RDMA_CM_EVENT_DISCONNECTED);
	assert_int_equal(g_done.n, 2);
	assert_int_equal(g_done.status[0], -ENOTCONN);
	assert_int_equal(g_done.status[1], -ENOTCONN);
	assert_false(rpcrdma_svc_bc_connected(g_bc));
	assert_int_equal(call(0, NULL, &xid), -ENOTCONN);
	assert_false(f->conn->sx_reap);
	svc_conn_cq_event_poll(f->conn); /* flushes: Receives and the Send */
	assert_int_equal(g_bc->bc_sends, 0);
	assert_true(f->conn->sx_reap);
	assert_int_equal(g_done.n, 2); /* told once */
	f->conn->sx_id = NULL;
	svc_conn_destroy(f->conn);
	f->conn = NULL;
	assert_int_equal(atomic_load(&f->svc.sv_ct.recv_in_use), 0);
	assert_null(g_bc->bc_conn);
	assert_int_equal(call(0, NULL, &xid), -ENOTCONN);
}

/* A backchannel Send that completes in error (not a flush): its call ends
 * with -ENOTCONN, the queued one too, and the connection goes down. */
static void test_send_error(void **state)
{
	struct fixture *f = *state;
	uint32_t xid;

	take_handle(f);
	svc_conn_cq_event_poll(f->conn);
	fv.fv_script_sends = true;
	assert_int_equal(call(0, (void *)1, &xid), 0);
	assert_int_equal(call(0, (void *)2, &xid), 0);
	svc_bc_poll(f->conn->sx_grp);
	assert_int_equal(fv.fv_nsends, 2);
	fv_push(fv.fv_send_ids[1], IBV_WC_LOC_PROT_ERR, IBV_WC_SEND, 0, 0);
	svc_conn_cq_event_poll(f->conn);
	assert_int_equal(g_done.n, 2);
	assert_int_equal(g_done.status[0], -ENOTCONN);
	assert_ptr_equal(g_done.arg[0], (void *)1);
	assert_int_equal(g_done.status[1], -ENOTCONN);
	assert_true(f->conn->sx_closing);
	assert_int_equal(g_bc->bc_sends, 0);
	assert_int_equal(g_bc->bc_calls[0].bq_state, BQ_FREE);
}

/* The device refuses the post: the call ends with -ENOTCONN at once and
 * the connection goes down; nothing is left posted. */
static void test_post_failure(void **state)
{
	struct fixture *f = *state;
	uint32_t xid;

	take_handle(f);
	svc_conn_cq_event_poll(f->conn);
	assert_int_equal(call(0, (void *)1, &xid), 0);
	fv.fv_fail_send_post_at = fv.fv_send_post_calls + 1;
	svc_bc_poll(f->conn->sx_grp);
	assert_int_equal(g_done.n, 1);
	assert_int_equal(g_done.status[0], -ENOTCONN);
	assert_true(f->conn->sx_closing);
	assert_int_equal(g_bc->bc_sends, 0);
	assert_int_equal(g_bc->bc_in_flight, 0);
	assert_int_equal(atomic_load(&f->svc.sv_ct.post_errors), 1);
}

/* The client refuses our call with RDMA_ERROR ERR_CHUNK (RFC 8166 4.5:
 * xid, vers 1, credits, RDMA_ERROR, ERR_CHUNK): the call ends with
 * -EREMOTEIO, nothing is answered, the credit comes back. */
static void test_rdma_error_for_call(void **state)
{
	struct fixture *f = *state;
	uint8_t msg[32], *p = msg;
	uint32_t xid, xid2, posted;

	take_handle(f);
	svc_conn_cq_event_poll(f->conn);
	assert_int_equal(call(0, (void *)1, &xid), 0);
	assert_int_equal(call(0, (void *)2, &xid2), 0);
	svc_bc_poll(f->conn->sx_grp);
	svc_conn_cq_event_poll(f->conn);
	assert_int_equal(fv.fv_nsends, 2);
	posted = f->conn->sx_recvs_posted;
	p = put32(p, xid);
	p = put32(p, 1);
	p = put32(p, 1);
	p = put32(p, RDMA_ERROR);
	p = put32(p, ERR_CHUNK);
	deliver(f, msg, (uint32_t)(p - msg));
	assert_int_equal(g_done.n, 1);
	assert_int_equal(g_done.status[0], -EREMOTEIO);
	assert_int_equal(fv.fv_nsends, 3);     /* the second call, not an answer */
	assert_int_equal(get32(fv.fv_sent), xid2);
	assert_int_equal(f->conn->sx_recvs_posted, posted);
	assert_false(f->conn->sx_closing);
	assert_int_equal(atomic_load(&f->svc.sv_ct.rdma_errors_sent), 0);
	svc_conn_cq_event_poll(f->conn);
}

/* The connection belongs to the second transport thread: a call made on
 * any thread wakes that group only, and only its loop sends the call. */
static int setup_group1(void **state)
{
	int rc;

	g_group = 1;
	rc = setup(state);
	g_group = 0;
	return rc;
}

static void test_other_group(void **state)
{
	struct fixture *f = *state;
	struct svc_group *g0 = &f->svc.sv_groups[0], *g1 = &f->svc.sv_groups[1];
	uint8_t msg[128];
	uint32_t xid;

	assert_ptr_equal(f->conn->sx_grp, g1);
	take_handle(f);
	assert_int_equal(call(0, NULL, &xid), 0);
	assert_int_equal(atomic_load(&g1->gr_bc_kicks), 1);
	assert_int_equal(atomic_load(&g0->gr_bc_kicks), 0);
	assert_int_equal(atomic_load(&g1->gr_bc_pending), 1);
	svc_bc_run(g0);                 /* not its connection */
	assert_int_equal(fv.fv_nsends, 1);
	svc_bc_run(g1);
	assert_int_equal(fv.fv_nsends, 2);
	assert_int_equal(get32(fv.fv_sent), xid);
	svc_conn_cq_event_poll(f->conn);
	deliver(f, msg, bc_reply(msg, xid, 1, 3));
	assert_int_equal(g_done.n, 1);
	assert_int_equal(g_done.res0[0], 3);
	assert_int_equal(atomic_load(&g1->gr_bc_pending), 0);
}

/*
 * Calls from several threads at once while this thread plays the owner:
 * every call is sent exactly once, in credit order (one at a time: each
 * reply grants 1), its reply matched to it, and every caller told once
 * with its own result (the reply echoes the argument + 1000).
 */
#define MT_THREADS 4
#define MT_CALLS 50

struct mt_caller {
	unsigned mc_id;
	atomic_uint mc_done;
	atomic_uint mc_bad;
};

static void mt_done(void *arg, int status, const struct rpcrdma_rpc_msg *reply,
		    const uint8_t *res, size_t res_len)
{
	struct mt_caller *mc = arg;

	(void)reply;
	if (status || res_len != 4 || get32(res) / 1000 != mc->mc_id + 1)
		atomic_fetch_add(&mc->mc_bad, 1);
	atomic_fetch_add(&mc->mc_done, 1);
}

static void *mt_thread(void *arg)
{
	struct mt_caller *mc = arg;
	unsigned sent = 0;
	uint8_t v[4];

	while (sent < MT_CALLS) {
		struct rpcrdma_svc_bc_args a = {
			.ba_prog = CBPROG, .ba_vers = 1, .ba_proc = 1,
			.ba_args = v, .ba_args_len = 4, .ba_timeout_ms = 600000,
			.ba_done = mt_done, .ba_done_arg = mc,
		};
		int rc;

		put32(v, mc->mc_id * 1000 + sent);
		rc = rpcrdma_svc_bc_call(g_bc, &a, NULL);
		if (rc == -EAGAIN) {
			sched_yield(); /* every slot busy: the owner frees them */
			continue;
		}
		assert_int_equal(rc, 0);
		sent++;
	}
	return NULL;
}

static void test_calls_from_threads(void **state)
{
	struct fixture *f = *state;
	struct mt_caller mc[MT_THREADS];
	pthread_t th[MT_THREADS];
	unsigned i, total = 0, replies = 0, spins = 0;
	uint8_t msg[128];

	take_handle(f);
	svc_conn_cq_event_poll(f->conn);
	for (i = 0; i < MT_THREADS; i++) {
		mc[i].mc_id = i;
		atomic_init(&mc[i].mc_done, 0);
		atomic_init(&mc[i].mc_bad, 0);
		assert_int_equal(pthread_create(&th[i], NULL, mt_thread, &mc[i]), 0);
	}
	/* fv_nsends counts the forward reply, then one Send per call. */
	while (replies < MT_THREADS * MT_CALLS) {
		svc_bc_run(f->conn->sx_grp);
		svc_conn_cq_event_poll(f->conn); /* Send completions */
		if (fv.fv_nsends == 1 + replies) {
			assert_true(++spins < 100000000u);
			sched_yield();
			continue;
		}
		/* Credit 1: one call on the wire at a time. */
		assert_int_equal(fv.fv_nsends, 1 + replies + 1);
		assert_int_equal(g_bc->bc_in_flight, 1);
		{
			uint32_t xid = get32(fv.fv_sent);
			uint32_t v = get32(fv.fv_sent + 28 + 40);

			deliver(f, msg, bc_reply(msg, xid, 1, v + 1000));
		}
		replies++;
	}
	for (i = 0; i < MT_THREADS; i++) {
		assert_int_equal(pthread_join(th[i], NULL), 0);
		total += atomic_load(&mc[i].mc_done);
		assert_int_equal(atomic_load(&mc[i].mc_done), MT_CALLS);
		assert_int_equal(atomic_load(&mc[i].mc_bad), 0);
	}
	assert_int_equal(total, MT_THREADS * MT_CALLS);
	assert_int_equal(atomic_load(&f->svc.sv_ct.bc_calls), MT_THREADS * MT_CALLS);
	assert_int_equal(atomic_load(&f->svc.sv_ct.bc_replies), MT_THREADS * MT_CALLS);
	svc_conn_cq_event_poll(f->conn);
}

/*
 * Fault profiles (fake_verbs.c): backchannel calls, their replies (some
 * twice, some for no call), forward calls, timeouts and the owner's turns
 * in a seeded random order, with Send and Receive errors, flushes, post
 * failures, reordering and completions inside post.  Whatever happens,
 * every accepted call's caller is told exactly once, and once the
 * connection is closed and drained nothing is left: no Send, no pending
 * call, every slot free, every buffer back.
 */
#define FP_CALLS 64

static struct {
	uint32_t seen[256];           /* xids of calls the "client" received */
	unsigned nseen;
	unsigned told[FP_CALLS];      /* callbacks per accepted call */
} fp;

static bool fp_on_send(const uint8_t *msg, uint32_t len, const struct fv_wr *w, void *arg)
{
	(void)w;
	(void)arg;
	/* A backchannel call: RDMA_MSG, no chunks, then an RPC CALL. */
	if (len >= 36 && get32(msg + 12) == RDMA_MSG && get32(msg + 32) == 0 &&
	    get32(msg + 36) == 2 && fp.nseen < 256)
		fp.seen[fp.nseen++] = get32(msg);
	return false;
}

static void fp_done(void *arg, int status, const struct rpcrdma_rpc_msg *reply,
		    const uint8_t *res, size_t res_len)
{
	(void)status;
	(void)reply;
	(void)res;
	(void)res_len;
	fp.told[(uintptr_t)arg]++;
}

static void fp_reenter(void *arg)
{
	svc_conn_cq_event_poll(arg);
}

static void run_fault_profile(const char *name, const struct fv_faults *faults)
{
	void *state;
	struct fixture *f;
	struct svc_conn *conn;
	unsigned accepted = 0, step, i;
	uint8_t msg[128];
	uint64_t now = svc_now_ms();

	fprintf(stderr, "svc-bc-faults: profile %s seed %llu\n", name,
		(unsigned long long)faults->ff_seed);
	memset(&fp, 0, sizeof(fp));
	setup(&state);
	f = state;
	conn = f->conn;
	take_handle(f);
	svc_conn_cq_event_poll(conn);
	fv_seed(faults);
	fv.fv_on_send = fp_on_send;
	fv.fv_inside_post = fp_reenter;
	fv.fv_inside_post_arg = conn;
	for (step = 0; step < 2000 && !conn->sx_reap; step++) {
		switch (fv_rand() % 10) {
		case 0:
		case 1: {
			struct rpcrdma_svc_bc_args a = {
				.ba_prog = CBPROG, .ba_vers = 1, .ba_proc = 1,
				.ba_timeout_ms = 5000, .ba_done = fp_done,
				.ba_done_arg = (void *)(uintptr_t)accepted,
			};

			if (accepted < FP_CALLS && rpcrdma_svc_bc_call(g_bc, &a, NULL) == 0)
				accepted++;
			break;
		}
		case 2:
			fv_run_sq(1 + (unsigned)(fv_rand() % 3));
			break;
		case 3:
			svc_bc_run(conn->sx_grp);
			break;
		case 4:
		case 5:
			svc_conn_cq_event_poll(conn);
			svc_conn_flush_recvs(conn);
			break;
		case 6:
			/* The client answers a call it got (again, sometimes). */
			if (fp.nseen) {
				i = (unsigned)(fv_rand() % fp.nseen);
				(void)fv_deliver(msg, bc_reply(msg, fp.seen[i], 1 + (uint32_t)(fv_rand() % 4), 0));
				if (fv_rand() % 4)
					fp.seen[i] = fp.seen[--fp.nseen];
			}
			break;
		case 7:
			/* A reply for no call, or a forward call. */
			if (fv_rand() % 2)
				(void)fv_deliver(msg, bc_reply(msg, (uint32_t)fv_rand(), 1, 0));
			else
				(void)fv_deliver(msg, fwd_call(msg, 0x20 + step));
			break;
		case 8:
			while (svc_worker_run_one(conn->sx_grp))
				;
			svc_take_done(conn->sx_grp);
			break;
		default:
			/* Time passes: some deadlines come. */
			now += 100;
			svc_bc_expire(conn->sx_grp, now);
			break;
		}
	}
	/* The end: every deadline, then the connection goes and drains. */
	svc_bc_expire(conn->sx_grp, now + 3600000);
	if (!conn->sx_closing)
		svc_conn_disconnected(conn);
	for (step = 0; step < 10000 && !conn->sx_reap; step++) {
		fv_run_sq(UINT32_MAX);
		while (svc_worker_run_one(conn->sx_grp))
			;
		svc_take_done(conn->sx_grp);
		svc_conn_cq_event_poll(conn);
	}
	if (!conn->sx_reap)
		fail_msg("profile %s seed %llu: not drained: %u Receives posted, %u contexts out, "
			 "%u backchannel Sends", name, (unsigned long long)faults->ff_seed,
			 conn->sx_recvs_posted, conn->sx_calls_out, g_bc->bc_sends);
	for (i = 0; i < accepted; i++)
		if (fp.told[i] != 1)
			fail_msg("profile %s seed %llu: call %u told %u times", name,
				 (unsigned long long)faults->ff_seed, i, fp.told[i]);
	assert_int_equal(g_bc->bc_sends, 0);
	assert_int_equal(g_bc->bc_in_flight, 0);
	assert_int_equal(atomic_load(&conn->sx_grp->gr_bc_pending), 0);
	for (i = 0; i < SVC_BC_SLOTS; i++)
		assert_int_equal(g_bc->bc_calls[i].bq_state, BQ_FREE);
	conn->sx_id = NULL;
	svc_conn_destroy(conn);
	f->conn = NULL;
	assert_int_equal(atomic_load(&f->svc.sv_ct.recv_in_use), 0);
	assert_int_equal(atomic_load(&f->svc.sv_ct.ctx_in_use), 0);
	fprintf(stderr, "  %u calls accepted: %llu replies matched, %llu timed out, %llu replies "
		"unmatched; injected: errors %u flushes %u post failures %u reorders %u "
		"inside post %u\n", accepted,
		(unsigned long long)atomic_load(&f->svc.sv_ct.bc_replies),
		(unsigned long long)atomic_load(&f->svc.sv_ct.bc_timeouts),
		(unsigned long long)atomic_load(&f->svc.sv_ct.bc_unmatched), fv.fv_n_errors,
		fv.fv_n_flushes, fv.fv_n_post_fails, fv.fv_n_reorders, fv.fv_n_inside);
	teardown(&state);
}

static void test_fault_profiles(void **state)
{
	(void)state;
	fv_run_profiles(2, run_fault_profile); /* Send and Receive queues */
}

/* Arguments the API refuses. */
static void test_bad_args(void **state)
{
	struct fixture *f = *state;
	static uint8_t big[1024];
	struct rpcrdma_svc_bc_args a = {
		.ba_prog = CBPROG, .ba_vers = 1, .ba_done = on_done,
		.ba_args = big, .ba_args_len = 1024 - 28 - 40 + 4,
	};

	take_handle(f);
	/* 28 + 40 + args must fit the client's 1024-byte inline receive. */
	assert_int_equal(rpcrdma_svc_bc_call(g_bc, &a, NULL), -EMSGSIZE);
	a.ba_args_len -= 4;
	assert_int_equal(rpcrdma_svc_bc_call(g_bc, &a, NULL), 0);
	a.ba_done = NULL;
	assert_int_equal(rpcrdma_svc_bc_call(g_bc, &a, NULL), -EINVAL);
	a.ba_done = on_done;
	a.ba_cred_len = 404;
	a.ba_cred = big;
	assert_int_equal(rpcrdma_svc_bc_call(g_bc, &a, NULL), -EINVAL);
	svc_bc_poll(f->conn->sx_grp);
	assert_int_equal(fv.fv_sent_len, 1024);
	svc_conn_cq_event_poll(f->conn);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_call_and_reply, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reply_before_send_completion_racing_forward,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_unknown_xid, setup, teardown),
		cmocka_unit_test_setup_teardown(test_credits_exhausted, setup, teardown),
		cmocka_unit_test_setup_teardown(test_timeouts, setup, teardown),
		cmocka_unit_test_setup_teardown(test_disconnect_outstanding, setup, teardown),
		cmocka_unit_test_setup_teardown(test_send_error, setup, teardown),
		cmocka_unit_test_setup_teardown(test_post_failure, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rdma_error_for_call, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_args, setup, teardown),
		cmocka_unit_test_setup_teardown(test_other_group, setup_group1, teardown),
		cmocka_unit_test_setup_teardown(test_calls_from_threads, setup, teardown),
		cmocka_unit_test(test_fault_profiles),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
