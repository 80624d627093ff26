// SPDX-License-Identifier: MIT
/*
 * test_clnt_fence.c - the Requester keeps the caller's memory out of the
 * Responder's reach once a call is reported done, in each registration
 * mode, and keeps an aborted call's credit until its late reply (RFC 8166
 * section 3.3.1).
 *
 * The fake device models what a late Responder could do: fv_peer_write()
 * is an RDMA Write arriving from the peer, which lands only through a
 * live region or a valid window with remote write, and only while the QP
 * is connected.  Each test first shows that the Write lands while the call
 * is in flight (so the later refusal is the fence's doing).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "fake_verbs.h"
#include "test_words.h"

#include "clnt/clnt_internal.h"

#include "clnt_fixture.h"

static struct ibv_mw fake_mws[8][CLNT_NMAPS]; /* up to 8 requests */

/* A connected client with 4 requests, 4 credits granted, peer inline 4096;
 * @mw: windows enabled (fake window objects). */
static struct rpcrdma_clnt *make_clnt(void **state, enum rpcrdma_clnt_reg reg, bool mw)
{
	struct rpcrdma_clnt_config cfg = {
		.cf_max_credits = 4, .cf_inline_size = 4096, .cf_auth_none = true,
		.cf_log = stderr, .cf_reg = reg, .cf_remote_invalidate = true,
	};
	struct rpcrdma_clnt *cl = clnt_fixture_new(&cfg);
	uint32_t i, j;

	*state = cl;
	assert_int_equal(clnt_post_all_recvs(cl), 0);
	clnt_fixture_set_peer(cl, 4096, 4096);
	cl->cl_connected = true;
	cl->cl_next_xid = 0x100;
	cl->cl_credits = 4;
	if (mw) {
		cl->cl_mw_enabled = true;
		for (i = 0; i < cl->cl_nreqs; i++)
			for (j = 0; j < CLNT_NMAPS; j++) {
				fake_mws[i][j].rkey = 0x5500 + 0x100 * i + 0x10 * j;
				cl->cl_reqs[i].rl_mw[j] = &fake_mws[i][j];
				cl->cl_reqs[i].rl_mw_rkey[j] = fake_mws[i][j].rkey;
			}
	}
	clnt_private_flags(cl); /* what the connect would offer */
	return cl;
}

static int setup(void **state)
{
	fv_reset();
	*state = NULL;
	return 0;
}

static int teardown(void **state)
{
	struct rpcrdma_clnt *cl = *state;
	uint32_t i, j;

	if (cl) {
		for (i = 0; i < cl->cl_nreqs; i++) /* fake windows: nothing to free */
			for (j = 0; j < CLNT_NMAPS; j++)
				cl->cl_reqs[i].rl_mw[j] = NULL;
		clnt_free(cl);
	}
	fv_uninstall();
	return 0;
}

/* An inline RDMA_MSG reply (RFC 8166 4.2.1: xid, vers 1, grant, MSG, three
 * empty lists), an accepted RPC reply and a 4-byte @result. */
static uint32_t inline_reply(uint8_t *buf, uint32_t xid, uint32_t result)
{
	uint8_t *p = buf;

	p = put32(p, xid);
	p = put32(p, 1);
	p = put32(p, 4);
	p = put32(p, RDMA_MSG);
	p = put32(p, 0);
	p = put32(p, 0);
	p = put32(p, 0);
	p = put32(p, xid);
	p = put32(p, 1); /* REPLY */
	p = put32(p, 0); /* MSG_ACCEPTED */
	p = put32(p, 0);
	p = put32(p, 0);
	p = put32(p, 0); /* SUCCESS */
	p = put32(p, result);
	return (uint32_t)(p - buf);
}

struct seen {
	unsigned calls;
	int status;
	uint32_t result;
};

static void done_cb(struct rpcrdma_clnt_call *ca, int status, void *arg)
{
	struct seen *s = arg;

	s->calls++;
	s->status = status;
	if (!status)
		s->result = get32((uint8_t *)ca->ca_res + ca->ca_res_off);
}

/* The Write chunk handle and address the last Send offered (one Write
 * chunk, no Read list: RFC 8166 4.2.1 words 4..12). */
static void offered_write(uint32_t *handle, uint64_t *addr)
{
	assert_int_equal(get32(fv.fv_sent + 16), 0); /* no Read list */
	assert_int_equal(get32(fv.fv_sent + 20), 1); /* a Write chunk */
	assert_int_equal(get32(fv.fv_sent + 24), 1); /* of one segment */
	*handle = get32(fv.fv_sent + 28);
	*addr = (uint64_t)get32(fv.fv_sent + 36) << 32 | get32(fv.fv_sent + 40);
}

static const char late[] = "LATE";

/*
 * The READ of the scenario: an asynchronous call whose Write chunk is
 * data + 100 .. + 1000; returns its xid and the handle offered, after
 * checking that a Responder Write through it lands while it is in flight.
 */
static uint32_t start_read(struct rpcrdma_clnt *cl, struct rpcrdma_clnt_call *ca,
			   uint8_t *res, uint8_t *data, struct seen *s, uint32_t *handle)
{
	uint64_t addr;
	uint32_t xid;

	*ca = (struct rpcrdma_clnt_call){ .ca_prog = 1, .ca_vers = 1, .ca_res = res,
					  .ca_res_cap = 64, .ca_rddp = data + 100,
					  .ca_rddp_cap = 1000 };
	assert_int_equal(rpcrdma_clnt_call_async(cl, ca, done_cb, s, &xid), 0);
	fv_run_sq(~0u);
	offered_write(handle, &addr);
	assert_int_equal(addr, (uintptr_t)(data + 100));
	assert_int_equal(fv_peer_write(*handle, addr, late, 4), 0);
	assert_memory_equal(data + 100, late, 4);
	memset(data, 0, 8192);
	return xid;
}

/* Persistent mode: only closing the connection fences the buffer, so the
 * abort does; the late Write never arrives. */
static void test_abort_persistent_late_write(void **state)
{
	struct rpcrdma_clnt *cl = make_clnt(state, RPCRDMA_CLNT_REG_PERSISTENT, false);
	static uint8_t data[8192];
	uint8_t res[64], zero[8] = { 0 };
	struct rpcrdma_clnt_call ca;
	struct seen s = { 0 };
	uint32_t xid, handle;

	assert_int_equal(rpcrdma_clnt_register_buffer(cl, data, sizeof(data)), 0);
	xid = start_read(cl, &ca, res, data, &s, &handle);
	assert_int_equal(rpcrdma_clnt_abort(cl, xid), 0);
	assert_int_equal(s.calls, 1);
	assert_int_equal(s.status, -ECANCELED);
	assert_true(fv.fv_disconnected);
	assert_int_equal(cl->cl_stats.cs_fence_disconnects, 1);
	assert_int_equal(fv_peer_write(handle, (uintptr_t)(data + 100), late, 4), -ENOTCONN);
	assert_memory_equal(data + 100, zero, 4);
	/* the connection is gone: the credit with it */
	assert_int_equal(cl->cl_outstanding, 0);
	assert_int_equal(rpcrdma_clnt_unregister_buffer(cl, data), 0);
}

/* Windows: the abort posts LOCAL_INV and the call is reported only once
 * it has completed; the connection stays up, the late Write faults, and
 * the credit stays taken until the late reply. */
static void test_abort_window_late_write(void **state)
{
	struct rpcrdma_clnt *cl = make_clnt(state, RPCRDMA_CLNT_REG_WINDOWS, true);
	static uint8_t data[8192];
	uint8_t res[64] = { 0 }, reply[64], zero[8] = { 0 }; /* res: compared with zero below */
	struct rpcrdma_clnt_call ca;
	struct seen s = { 0 };
	uint32_t xid, handle;

	fv.fv_defer_sq = true;
	assert_int_equal(rpcrdma_clnt_register_buffer(cl, data, sizeof(data)), 0);
	xid = start_read(cl, &ca, res, data, &s, &handle);
	assert_true(fv_window_valid(handle));
	assert_int_equal(rpcrdma_clnt_abort(cl, xid), 0);
	/* LOCAL_INV posted, not yet executed: not reported yet */
	clnt_poll(cl);
	assert_int_equal(s.calls, 0);
	assert_int_equal(fv_run_sq(~0u), 1);
	assert_int_equal(fv.fv_invs[0], handle);
	clnt_poll(cl);
	assert_int_equal(s.calls, 1);
	assert_int_equal(s.status, -ECANCELED);
	assert_int_equal(fv_peer_write(handle, (uintptr_t)(data + 100), late, 4), -EACCES);
	assert_memory_equal(data + 100, zero, 4);
	assert_true(cl->cl_connected);
	assert_false(fv.fv_disconnected);
	assert_int_equal(cl->cl_outstanding, 1);
	assert_int_equal(fv_deliver(reply, inline_reply(reply, xid, 9)), 0);
	clnt_poll(cl);
	assert_int_equal(cl->cl_outstanding, 0);
	assert_int_equal(cl->cl_stats.cs_late_replies, 1);
	assert_int_equal(s.calls, 1);
	assert_memory_equal(res, zero, 8); /* the late reply was not copied */
	assert_int_equal(rpcrdma_clnt_unregister_buffer(cl, data), 0);
}

/* Per call: the region is deregistered before the callback; the late
 * Write faults. */
static void test_abort_per_call_late_write(void **state)
{
	struct rpcrdma_clnt *cl = make_clnt(state, RPCRDMA_CLNT_REG_PER_CALL, false);
	static uint8_t data[8192];
	uint8_t res[64], zero[8] = { 0 };
	struct rpcrdma_clnt_call ca;
	struct seen s = { 0 };
	uint32_t xid, handle;

	assert_int_equal(rpcrdma_clnt_register_buffer(cl, data, sizeof(data)), -EOPNOTSUPP);
	xid = start_read(cl, &ca, res, data, &s, &handle);
	assert_int_equal(rpcrdma_clnt_abort(cl, xid), 0);
	assert_int_equal(s.calls, 1);
	assert_int_equal(s.status, -ECANCELED);
	assert_int_equal(fv_peer_write(handle, (uintptr_t)(data + 100), late, 4), -EACCES);
	assert_memory_equal(data + 100, zero, 4);
	assert_true(cl->cl_connected);
	assert_int_equal(cl->cl_outstanding, 1);
}

/* Four calls aborted: their credits stay taken (no fifth call may go out,
 * the server may still hold four), every late reply finds a Receive, and
 * the credits come back with the late replies. */
static void test_abort_keeps_credit(void **state)
{
	struct rpcrdma_clnt *cl = make_clnt(state, RPCRDMA_CLNT_REG_PER_CALL, false);
	uint8_t res[4][64], reply[64];
	struct rpcrdma_clnt_call ca[4];
	struct seen s[4];
	uint32_t xid[4], i;

	memset(s, 0, sizeof(s));
	for (i = 0; i < 4; i++) {
		ca[i] = (struct rpcrdma_clnt_call){ .ca_prog = 1, .ca_vers = 1,
						    .ca_res = res[i], .ca_res_cap = 64 };
		assert_int_equal(rpcrdma_clnt_call_async(cl, &ca[i], done_cb, &s[i], &xid[i]),
				 0);
	}
	for (i = 0; i < 4; i++) {
		assert_int_equal(rpcrdma_clnt_abort(cl, xid[i]), 0);
		assert_int_equal(s[i].status, -ECANCELED);
	}
	/* clnt_call_start would wait: the window is full */
	assert_int_equal(cl->cl_outstanding, 4);
	assert_true(cl->cl_outstanding >= cl->cl_credits);
	for (i = 0; i < 4; i++) {
		assert_true(fv_recvs_posted() >= 4 - i);
		assert_int_equal(fv_deliver(reply, inline_reply(reply, xid[i], i)), 0);
		clnt_poll(cl);
		assert_int_equal(cl->cl_outstanding, 3 - i);
	}
	assert_int_equal(cl->cl_stats.cs_late_replies, 4);
	assert_int_equal(cl->cl_stats.cs_unknown_xid, 0);
	for (i = 0; i < 4; i++)
		assert_int_equal(s[i].calls, 1);
	assert_int_equal(cl->cl_reqs_out, 0);
}

/* Requests whose outcome waits for their LOCAL_INV. */
static unsigned fencing(const struct rpcrdma_clnt *cl)
{
	unsigned i, n = 0;

	for (i = 0; i < cl->cl_nreqs; i++)
		n += cl->cl_reqs[i].rl_state == RL_FENCING;
	return n;
}

/* A reply racing an abort: whichever the client takes first decides the
 * outcome, reported exactly once.  (a) the reply waits in the CQ while the
 * abort runs: -ECANCELED, the reply is then dropped unread; (b) the reply
 * is taken first: the abort finds nothing; (c) windows: the reply is in
 * and its LOCAL_INV pending when the abort comes: the abort finds the
 * outcome decided, the reply's result is reported after the LOCAL_INV. */
static void test_reply_races_abort(void **state)
{
	struct rpcrdma_clnt *cl = make_clnt(state, RPCRDMA_CLNT_REG_WINDOWS, true);
	static uint8_t data[8192];
	uint8_t res[64], reply[64], pattern[64];
	struct rpcrdma_clnt_call ca;
	struct seen s;
	uint32_t xid, handle;

	assert_int_equal(rpcrdma_clnt_register_buffer(cl, data, sizeof(data)), 0);

	/* (a) */
	memset(&s, 0, sizeof(s));
	memset(res, 0xee, sizeof(res));
	memcpy(pattern, res, sizeof(res));
	xid = start_read(cl, &ca, res, data, &s, &handle);
	assert_int_equal(fv_deliver(reply, inline_reply(reply, xid, 7)), 0);
	assert_int_equal(rpcrdma_clnt_abort(cl, xid), 0);
	clnt_poll(cl);
	assert_int_equal(s.calls, 1);
	assert_int_equal(s.status, -ECANCELED);
	assert_memory_equal(res, pattern, sizeof(res));
	assert_int_equal(cl->cl_stats.cs_late_replies, 1);
	assert_int_equal(cl->cl_outstanding, 0);

	/* (b) */
	memset(&s, 0, sizeof(s));
	xid = start_read(cl, &ca, res, data, &s, &handle);
	assert_int_equal(fv_deliver(reply, inline_reply(reply, xid, 8)), 0);
	clnt_poll(cl);
	assert_int_equal(rpcrdma_clnt_abort(cl, xid), -ENOENT);
	assert_int_equal(s.calls, 1);
	assert_int_equal(s.status, 0);
	assert_int_equal(s.result, 8);

	/* (c) */
	memset(&s, 0, sizeof(s));
	fv.fv_defer_sq = true;
	xid = start_read(cl, &ca, res, data, &s, &handle);
	assert_int_equal(fv_deliver(reply, inline_reply(reply, xid, 9)), 0);
	clnt_poll(cl);
	assert_int_equal(fencing(cl), 1); /* reply in, LOCAL_INV not yet done */
	assert_int_equal(rpcrdma_clnt_abort(cl, xid), -ENOENT);
	assert_int_equal(s.calls, 0);
	fv_run_sq(~0u);
	clnt_poll(cl);
	assert_int_equal(s.calls, 1);
	assert_int_equal(s.status, 0);
	assert_int_equal(s.result, 9);
	assert_false(fv_window_valid(handle));
	assert_int_equal(cl->cl_stats.cs_aborts, 1);
	assert_int_equal(rpcrdma_clnt_unregister_buffer(cl, data), 0);
}

/* Send With Invalidate of the handle expected (RFC 8797 section 5): we
 * offer it with windows; the window the Responder invalidated needs no
 * LOCAL_INV, another window of the same call (its Reply chunk, per-call
 * memory behind a window) still gets one. */
static void test_swi_expected(void **state)
{
	struct rpcrdma_clnt *cl = make_clnt(state, RPCRDMA_CLNT_REG_WINDOWS, true);
	static uint8_t data[8192], big[8192];
	uint8_t res[64], reply[64];
	struct rpcrdma_clnt_call ca;
	struct seen s = { 0 };
	uint32_t xid, handle, reply_handle;

	cl->cl_cfg.cf_remote_invalidate = false; /* the default: not offered */
	assert_int_equal(clnt_private_flags(cl), 0);
	cl->cl_cfg.cf_remote_invalidate = true;
	assert_int_equal(clnt_private_flags(cl), RPCRDMA_CM_FLAG_RSI);
	assert_int_equal(rpcrdma_clnt_register_buffer(cl, data, sizeof(data)), 0);
	xid = start_read(cl, &ca, res, data, &s, &handle);
	assert_int_equal(fv_deliver_inv(reply, inline_reply(reply, xid, 5), handle), 0);
	clnt_poll(cl);
	assert_int_equal(s.calls, 1);
	assert_int_equal(s.status, 0);
	assert_int_equal(s.result, 5);
	assert_int_equal(fv.fv_ninvs, 0); /* nothing left to invalidate */
	assert_int_equal(cl->cl_stats.cs_remote_invalidates, 1);
	assert_int_equal(fv_peer_write(handle, (uintptr_t)(data + 100), late, 4), -EACCES);

	/* Write chunk in the buffer, Reply chunk (8192 > inline 4096) per call */
	memset(&s, 0, sizeof(s));
	ca = (struct rpcrdma_clnt_call){ .ca_prog = 1, .ca_vers = 1, .ca_res = big,
					 .ca_res_cap = sizeof(big), .ca_rddp = data,
					 .ca_rddp_cap = 1000 };
	assert_int_equal(rpcrdma_clnt_call_async(cl, &ca, done_cb, &s, &xid), 0);
	handle = get32(fv.fv_sent + 28);
	assert_int_equal(get32(fv.fv_sent + 48), 1); /* a Reply chunk */
	reply_handle = get32(fv.fv_sent + 56);
	assert_true(fv_window_valid(handle));
	assert_true(fv_window_valid(reply_handle));
	assert_int_equal(fv_deliver_inv(reply, inline_reply(reply, xid, 6), handle), 0);
	clnt_poll(cl);
	assert_int_equal(s.status, 0);
	assert_int_equal(fv.fv_ninvs, 1);
	assert_int_equal(fv.fv_invs[0], reply_handle);
	assert_false(fv_window_valid(reply_handle));
	assert_int_equal(fv.fv_bad_local_invs, 0);
	assert_int_equal(cl->cl_stats.cs_remote_invalidates, 2);
	assert_int_equal(cl->cl_stats.cs_bad_invalidates, 0);
	assert_int_equal(rpcrdma_clnt_unregister_buffer(cl, data), 0);
	assert_int_equal(fv_live_mrs(), 1); /* the pool's only */
}

/* Soft-RoCE reports Send With Invalidate as wc_flags bit 1 << 2 (the
 * kernel's IB_WC_WITH_INVALIDATE), not IBV_WC_WITH_INV: on an rxe device
 * that bit is the invalidation (no second LOCAL_INV of the window, which
 * rxe cannot survive); elsewhere it is not, and the window is invalidated
 * locally as usual. */
static void test_swi_rxe_flag(void **state)
{
	struct rpcrdma_clnt *cl = make_clnt(state, RPCRDMA_CLNT_REG_WINDOWS, true);
	static uint8_t data[8192];
	uint8_t res[64], reply[64];
	struct rpcrdma_clnt_call ca;
	struct seen s = { 0 };
	uint32_t xid, handle;
	struct ibv_wc *wc;

	assert_int_equal(rpcrdma_clnt_register_buffer(cl, data, sizeof(data)), 0);
	cl->cl_rxe_inv_flag = true;
	xid = start_read(cl, &ca, res, data, &s, &handle);
	assert_int_equal(fv_deliver_inv(reply, inline_reply(reply, xid, 5), handle), 0);
	wc = &fv.fv_cq[(fv.fv_cq_tail - 1) % FV_MAX_CQ];
	wc->wc_flags = 1u << 2;
	clnt_poll(cl);
	assert_int_equal(s.status, 0);
	assert_int_equal(fv.fv_ninvs, 0);
	assert_int_equal(cl->cl_stats.cs_remote_invalidates, 1);

	cl->cl_rxe_inv_flag = false;
	memset(&s, 0, sizeof(s));
	xid = start_read(cl, &ca, res, data, &s, &handle);
	assert_int_equal(fv_deliver(reply, inline_reply(reply, xid, 6)), 0);
	wc = &fv.fv_cq[(fv.fv_cq_tail - 1) % FV_MAX_CQ];
	wc->wc_flags = 1u << 2; /* IBV_WC_IP_CSUM_OK: no meaning here */
	clnt_poll(cl);
	assert_int_equal(s.status, 0);
	assert_int_equal(fv.fv_ninvs, 1);
	assert_int_equal(fv.fv_invs[0], handle);
	assert_int_equal(fv.fv_bad_local_invs, 0);
	assert_int_equal(cl->cl_stats.cs_remote_invalidates, 1);
	assert_int_equal(rpcrdma_clnt_unregister_buffer(cl, data), 0);
}

/* Send With Invalidate of a handle this call does not have: a protocol
 * error; the call fails with -EIO and its window is invalidated locally
 * all the same. */
static void test_swi_unexpected(void **state)
{
	struct rpcrdma_clnt *cl = make_clnt(state, RPCRDMA_CLNT_REG_WINDOWS, true);
	static uint8_t data[8192];
	uint8_t res[64], reply[64], zero[8] = { 0 };
	struct rpcrdma_clnt_call ca;
	struct seen s = { 0 };
	uint32_t xid, handle;

	assert_int_equal(rpcrdma_clnt_register_buffer(cl, data, sizeof(data)), 0);
	xid = start_read(cl, &ca, res, data, &s, &handle);
	assert_int_equal(fv_deliver_inv(reply, inline_reply(reply, xid, 5), 0x1234), 0);
	clnt_poll(cl);
	assert_int_equal(s.calls, 1);
	assert_int_equal(s.status, -EIO);
	assert_int_equal(cl->cl_stats.cs_bad_invalidates, 1);
	assert_int_equal(cl->cl_stats.cs_remote_invalidates, 0);
	assert_int_equal(fv.fv_ninvs, 1);
	assert_int_equal(fv.fv_invs[0], handle);
	assert_int_equal(fv_peer_write(handle, (uintptr_t)(data + 100), late, 4), -EACCES);
	assert_memory_equal(data + 100, zero, 4);
	assert_true(cl->cl_connected);
	assert_int_equal(rpcrdma_clnt_unregister_buffer(cl, data), 0);
}

/* Per-call regions (ibv_reg_mr) cannot be invalidated remotely: we do not
 * offer it, and a reply that claims to have invalidated our handle anyway
 * fails its call; the region is deregistered all the same. */
static void test_swi_not_offered(void **state)
{
	struct rpcrdma_clnt *cl = make_clnt(state, RPCRDMA_CLNT_REG_PER_CALL, false);
	static uint8_t data[8192];
	uint8_t res[64], reply[64];
	struct rpcrdma_clnt_call ca;
	struct seen s = { 0 };
	uint32_t xid, handle;

	assert_int_equal(clnt_private_flags(cl), 0);
	xid = start_read(cl, &ca, res, data, &s, &handle);
	assert_int_equal(fv_deliver_inv(reply, inline_reply(reply, xid, 5), handle), 0);
	clnt_poll(cl);
	assert_int_equal(s.calls, 1);
	assert_int_equal(s.status, -EIO);
	assert_int_equal(cl->cl_stats.cs_bad_invalidates, 1);
	assert_int_equal(fv.fv_ninvs, 0);
	assert_int_equal(fv_live_mrs(), 1);
	assert_int_equal(fv_peer_write(handle, (uintptr_t)(data + 100), late, 4), -EACCES);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_abort_persistent_late_write, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_abort_window_late_write, setup, teardown),
		cmocka_unit_test_setup_teardown(test_abort_per_call_late_write, setup, teardown),
		cmocka_unit_test_setup_teardown(test_abort_keeps_credit, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reply_races_abort, setup, teardown),
		cmocka_unit_test_setup_teardown(test_swi_expected, setup, teardown),
		cmocka_unit_test_setup_teardown(test_swi_unexpected, setup, teardown),
		cmocka_unit_test_setup_teardown(test_swi_rxe_flag, setup, teardown),
		cmocka_unit_test_setup_teardown(test_swi_not_offered, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
