// SPDX-License-Identifier: MIT
/*
 * test_clnt_resend.c - calls in flight when the connection goes are sent
 * again on the next connection with their xids (cf_retries), oldest
 * first and only as the new grant allows (RFC 8166 3.3.1: one credit
 * until the first reply), synchronous and asynchronous alike.
 *
 * The reconnect runs clnt_reconnect() with its connection step replaced
 * (cl_open): a fresh fake QP, the slab registered again, every Receive
 * posted, the peer's private data applied.  Every Send's xid is recorded
 * as the fake device executes it.
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

#include "clnt/clnt_internal.h"

#include "clnt_fixture.h"

static struct {
	uint32_t xids[64];
	uint32_t read_handle[64];  /* the Read chunk's handle, or 0 */
	uint64_t read_addr[64];
	uint32_t read_len[64];
	unsigned n;
	unsigned opens;
	unsigned fail_opens;
} sent;

static bool record_send(const uint8_t *msg, uint32_t len, const struct fv_wr *w, void *arg)
{
	(void)w;
	(void)arg;
	assert_true(len >= 4);
	if (sent.n >= 64)
		return false;
	sent.xids[sent.n] = get32(msg); /* the transport header's xid */
	/* RFC 8166 4.2.1: xid, vers, credits, proc, then the Read list: a
	 * present read segment is position, handle, length, offset. */
	sent.read_handle[sent.n] = 0;
	if (len >= 44 && get32(msg + 16) == 1) {
		sent.read_handle[sent.n] = get32(msg + 24);
		sent.read_len[sent.n] = get32(msg + 28);
		sent.read_addr[sent.n] = (uint64_t)get32(msg + 32) << 32 | get32(msg + 36);
	}
	sent.n++;
	return false;
}

static int fake_open(struct rpcrdma_clnt *cl)
{
	static struct ibv_qp qp;
	static struct ibv_cq cq;

	sent.opens++;
	if (sent.fail_opens) {
		sent.fail_opens--;
		return -ECONNREFUSED;
	}
	fv_qp_reset();
	cl->cl_qp = &qp;
	cl->cl_cq = &cq;
	assert_int_equal(clnt_register_slab(cl), 0);
	assert_int_equal(clnt_post_all_recvs(cl), 0);
	clnt_fixture_set_peer(cl, 4096, 4096);
	pthread_mutex_lock(&cl->cl_lock);
	cl->cl_connected = true;
	cl->cl_credits = 1; /* until the first reply on this connection */
	pthread_mutex_unlock(&cl->cl_lock);
	return 0;
}

static struct rpcrdma_clnt *make_clnt(void **state, unsigned retries)
{
	struct rpcrdma_clnt_config cfg = {
		.cf_max_credits = 4, .cf_inline_size = 4096, .cf_auth_none = true,
		.cf_log = stderr, .cf_retries = retries, .cf_reg = RPCRDMA_CLNT_REG_PER_CALL,
	};
	struct rpcrdma_clnt *cl = clnt_fixture_new(&cfg);

	*state = cl;
	assert_int_equal(clnt_post_all_recvs(cl), 0);
	clnt_fixture_set_peer(cl, 4096, 4096);
	cl->cl_connected = true;
	cl->cl_next_xid = 0x100;
	cl->cl_credits = 4;
	cl->cl_open = fake_open;
	return cl;
}

static int setup(void **state)
{
	fv_reset();
	memset(&sent, 0, sizeof(sent));
	fv.fv_on_send = record_send;
	*state = NULL;
	return 0;
}

static int teardown(void **state)
{
	if (*state)
		clnt_free(*state);
	fv_uninstall();
	return 0;
}

/* An inline RDMA_MSG reply granting @grant credits (RFC 8166 4.2.1),
 * an accepted RPC reply and a 4-byte @result. */
static void deliver_reply(struct rpcrdma_clnt *cl, uint32_t xid, uint32_t grant,
			  uint32_t result)
{
	uint8_t buf[64], *p = buf;

	p = put32(p, xid);
	p = put32(p, 1);
	p = put32(p, grant);
	p = put32(p, RDMA_MSG);
	p = put32(p, 0);
	p = put32(p, 0);
	p = put32(p, 0);
	p = put32(p, xid);
	p = put32(p, 1);
	p = put32(p, 0);
	p = put32(p, 0);
	p = put32(p, 0);
	p = put32(p, 0);
	p = put32(p, result);
	assert_int_equal(fv_deliver(buf, (uint32_t)(p - buf)), 0);
	clnt_poll(cl);
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

static void lose_connection(struct rpcrdma_clnt *cl)
{
	assert_true(clnt_cm_event(cl, RDMA_CM_EVENT_DISCONNECTED));
	assert_false(cl->cl_connected);
}

/* Three asynchronous calls in flight, one with a Write chunk (registered
 * per call), and a fourth aborted while it waits: after the reconnect the
 * three go out again with xids 0x100, 0x101, 0x102, one at a time until
 * the first reply grants more, and each callback runs once with its own
 * reply. */
static void test_resend_async_same_xids(void **state)
{
	struct rpcrdma_clnt *cl = make_clnt(state, 3);
	static uint8_t data[4096];
	uint8_t res[4][64];
	struct rpcrdma_clnt_call ca[4];
	struct seen s[4];
	uint32_t xid[4], i;

	memset(s, 0, sizeof(s));
	for (i = 0; i < 4; i++) {
		ca[i] = (struct rpcrdma_clnt_call){ .ca_prog = 1, .ca_vers = 1,
						    .ca_res = res[i], .ca_res_cap = 64 };
		if (i == 1) {
			ca[i].ca_rddp = data;
			ca[i].ca_rddp_cap = sizeof(data);
		}
		assert_int_equal(rpcrdma_clnt_call_async(cl, &ca[i], done_cb, &s[i], &xid[i]),
				 0);
		assert_int_equal(xid[i], 0x100 + i);
	}
	assert_int_equal(sent.n, 4);
	lose_connection(cl);
	for (i = 0; i < 4; i++)
		assert_int_equal(s[i].calls, 0);
	assert_true(clnt_resend_waiting(cl));
	assert_int_equal(cl->cl_outstanding, 0);
	assert_int_equal(rpcrdma_clnt_abort(cl, xid[3]), 0);
	assert_int_equal(s[3].calls, 1);
	assert_int_equal(s[3].status, -ECANCELED);

	assert_int_equal(clnt_reconnect(cl), 0);
	assert_int_equal(sent.opens, 1);
	assert_int_equal(cl->cl_stats.cs_reconnects, 1);
	/* a grant of 1 until the first reply: only the oldest went */
	assert_int_equal(sent.n, 5);
	assert_int_equal(sent.xids[4], 0x100);
	assert_int_equal(cl->cl_outstanding, 1);
	assert_non_null(cl->cl_ready);

	deliver_reply(cl, 0x100, 4, 10);
	assert_int_equal(s[0].calls, 1);
	assert_int_equal(s[0].status, 0);
	assert_int_equal(s[0].result, 10);
	assert_int_equal(sent.n, 7);
	assert_int_equal(sent.xids[5], 0x101);
	assert_int_equal(sent.xids[6], 0x102);
	assert_null(cl->cl_ready);
	deliver_reply(cl, 0x102, 4, 12);
	deliver_reply(cl, 0x101, 4, 11);
	for (i = 0; i < 3; i++) {
		assert_int_equal(s[i].calls, 1);
		assert_int_equal(s[i].status, 0);
		assert_int_equal(s[i].result, 10 + i);
	}
	assert_int_equal(cl->cl_stats.cs_retransmits, 3);
	assert_int_equal(cl->cl_outstanding, 0);
	assert_int_equal(cl->cl_rpc_busy, 0);
	assert_int_equal(fv_live_mrs(), 1); /* the Write chunk's region is gone */
}

/* A synchronous call lost with its connection is sent again with its xid
 * and its caller gets the reply. */
static void test_resend_sync_same_xid(void **state)
{
	struct rpcrdma_clnt *cl = make_clnt(state, 2);
	uint8_t res[64];
	struct rpcrdma_clnt_call ca = { .ca_prog = 1, .ca_vers = 1, .ca_res = res,
					.ca_res_cap = sizeof(res) };
	struct clnt_req *rl;

	assert_int_equal(clnt_call_start(cl, &ca, &rl), 0);
	assert_int_equal(rl->rl_xid, 0x100);
	lose_connection(cl);
	assert_int_equal(rl->rl_state, RL_RESEND);
	assert_int_equal(clnt_reconnect(cl), 0);
	assert_int_equal(sent.n, 2);
	assert_int_equal(sent.xids[1], 0x100);
	deliver_reply(cl, 0x100, 4, 77);
	assert_int_equal(clnt_call_wait(cl, rl, 1000), 0);
	assert_int_equal(get32(res + ca.ca_res_off), 77);
	assert_int_equal(cl->cl_stats.cs_retransmits, 1);
}

/* Retries are counted per call: lost once, then a failed reconnect is its
 * second try (cf_retries 2: sent again on the next connection); with
 * cf_retries 1 the failed reconnect ends it with that reconnect's error. */
static void test_resend_budget(void **state)
{
	struct rpcrdma_clnt *cl = make_clnt(state, 2);
	uint8_t res[2][64];
	struct rpcrdma_clnt_call ca[2];
	struct seen s[2];
	uint32_t xid;

	memset(s, 0, sizeof(s));
	ca[0] = (struct rpcrdma_clnt_call){ .ca_prog = 1, .ca_vers = 1, .ca_res = res[0],
					    .ca_res_cap = 64 };
	ca[1] = ca[0];
	ca[1].ca_res = res[1];
	assert_int_equal(rpcrdma_clnt_call_async(cl, &ca[0], done_cb, &s[0], &xid), 0);
	lose_connection(cl);
	sent.fail_opens = 1;
	assert_int_equal(clnt_reconnect(cl), -ECONNREFUSED);
	assert_int_equal(s[0].calls, 0);
	assert_true(clnt_resend_waiting(cl));
	cl->cl_backoff_ms = 0; /* no need to wait in a unit test */
	assert_int_equal(clnt_reconnect(cl), 0);
	assert_int_equal(sent.xids[sent.n - 1], xid);
	deliver_reply(cl, xid, 4, 5);
	assert_int_equal(s[0].calls, 1);
	assert_int_equal(s[0].status, 0);

	cl->cl_cfg.cf_retries = 1;
	assert_int_equal(rpcrdma_clnt_call_async(cl, &ca[1], done_cb, &s[1], &xid), 0);
	lose_connection(cl);
	sent.fail_opens = 1;
	assert_int_equal(clnt_reconnect(cl), -ECONNREFUSED);
	assert_int_equal(s[1].calls, 1);
	assert_int_equal(s[1].status, -ECONNREFUSED);
	assert_false(clnt_resend_waiting(cl));
	assert_int_equal(cl->cl_rpc_busy, 0);
}

struct starter {
	struct rpcrdma_clnt *cl;
	struct rpcrdma_clnt_call ca;
	uint8_t res[64];
	struct clnt_req *rl;
	int rc;
};

static void *start_call(void *arg)
{
	struct starter *st = arg;

	st->rc = clnt_call_start(st->cl, &st->ca, &st->rl);
	return NULL;
}

/* With retries (a connect worker running) a call started while the
 * connection is down waits for the reconnect instead of failing with
 * -ENOTCONN; without a worker it fails at once. */
static void test_new_call_waits_for_reconnect(void **state)
{
	struct rpcrdma_clnt *cl = make_clnt(state, 3);
	struct starter st = { .cl = cl };
	pthread_t t;
	unsigned waiters = 0, spins;

	st.ca = (struct rpcrdma_clnt_call){ .ca_prog = 1, .ca_vers = 1, .ca_res = st.res,
					    .ca_res_cap = sizeof(st.res) };
	lose_connection(cl);
	assert_int_equal(clnt_call_start(cl, &st.ca, &st.rl), -ENOTCONN);

	cl->cl_worker_started = true; /* stands for the worker: we reconnect */
	assert_int_equal(pthread_create(&t, NULL, start_call, &st), 0);
	for (spins = 0; !waiters && spins < 100000000u; spins++) {
		pthread_mutex_lock(&cl->cl_lock);
		waiters = cl->cl_conn_waiters;
		pthread_mutex_unlock(&cl->cl_lock);
		sched_yield();
	}
	assert_int_equal(waiters, 1);
	assert_int_equal(clnt_reconnect(cl), 0);
	pthread_join(t, NULL);
	cl->cl_worker_started = false;
	assert_int_equal(st.rc, 0);
	assert_int_equal(sent.xids[sent.n - 1], 0x100);
	deliver_reply(cl, 0x100, 4, 3);
	assert_int_equal(clnt_call_wait(cl, st.rl, 1000), 0);
}

/* clnt_reconnect_wanted() under the lock. */
static bool reconnect_wanted(struct rpcrdma_clnt *cl)
{
	bool w;

	pthread_mutex_lock(&cl->cl_lock);
	w = clnt_reconnect_wanted(cl);
	pthread_mutex_unlock(&cl->cl_lock);
	return w;
}

/* Stop the connect worker a test started (as rpcrdma_clnt_destroy()
 * does); the client is marked stopping. */
static void stop_worker(struct rpcrdma_clnt *cl)
{
	pthread_mutex_lock(&cl->cl_lock);
	cl->cl_stopping = true;
	pthread_cond_broadcast(&cl->cl_work_cond);
	pthread_mutex_unlock(&cl->cl_lock);
	assert_int_equal(pthread_join(cl->cl_worker, NULL), 0);
	cl->cl_worker_started = false;
}

/* rpcrdma_clnt_try_call_async() while the connection is down and the
 * connect worker (clnt_worker) runs: -EAGAIN at once, nothing sent, and
 * the worker reconnects for it (a caller that only tries would otherwise
 * wait forever: nothing else asks), after which the call goes.  Without
 * a worker, or while the client stops: -ENOTCONN. */
static void test_try_call_reconnects(void **state)
{
	struct rpcrdma_clnt *cl = make_clnt(state, 3);
	uint8_t res[64];
	struct rpcrdma_clnt_call ca = { .ca_prog = 1, .ca_vers = 1, .ca_res = res,
					.ca_res_cap = sizeof(res) };
	struct seen s = { 0 };
	uint32_t xid = 0, reconnects;
	bool connected = false, wanted;

	lose_connection(cl);
	assert_false(reconnect_wanted(cl)); /* nothing to resend, nobody waits */
	/* without a worker, no connection is coming */
	assert_int_equal(rpcrdma_clnt_try_call_async(cl, &ca, done_cb, &s, &xid), -ENOTCONN);
	assert_false(reconnect_wanted(cl));
	assert_int_equal(sent.opens, 0);

	assert_int_equal(pthread_create(&cl->cl_worker, NULL, clnt_worker, cl), 0);
	cl->cl_worker_started = true;
	/* the worker sleeps: nothing asks for a connection (its only
	 * trigger; an open without it would show below as a try that is
	 * not -EAGAIN, or as a second reconnect) */
	assert_false(reconnect_wanted(cl));
	assert_int_equal(sent.opens, 0);
	assert_int_equal(rpcrdma_clnt_try_call_async(cl, &ca, done_cb, &s, &xid), -EAGAIN);
	assert_int_equal(sent.n, 0);
	assert_int_equal(s.calls, 0);
	for (uint64_t end = clnt_fixture_ms() + CLNT_WAIT_MS;
	     !connected && clnt_fixture_ms() <= end;) {
		usleep(1000);
		pthread_mutex_lock(&cl->cl_lock);
		connected = cl->cl_connected && !cl->cl_reconnecting;
		reconnects = cl->cl_stats.cs_reconnects;
		wanted = cl->cl_conn_wanted;
		pthread_mutex_unlock(&cl->cl_lock);
	}
	if (!connected)
		stop_worker(cl); /* (so that the failure below ends the test) */
	assert_true(connected);
	assert_int_equal(reconnects, 1);
	assert_int_equal(sent.opens, 1);
	assert_false(wanted); /* served: the next loss reconnects only if asked */

	assert_int_equal(rpcrdma_clnt_try_call_async(cl, &ca, done_cb, &s, &xid), 0);
	assert_int_equal(sent.n, 1);
	assert_int_equal(sent.xids[0], xid);
	deliver_reply(cl, xid, 4, 5);
	assert_int_equal(s.calls, 1);
	assert_int_equal(s.status, 0);
	assert_int_equal(s.result, 5);

	stop_worker(cl);
	cl->cl_worker_started = true; /* (joined: only the stop says no) */
	lose_connection(cl);
	assert_int_equal(rpcrdma_clnt_try_call_async(cl, &ca, done_cb, &s, &xid), -ENOTCONN);
	cl->cl_worker_started = false;
	cl->cl_stopping = false;
	assert_int_equal(sent.opens, 1);
}

/* Without retries nothing is kept: the call fails with -ECONNRESET. */
static void test_no_retries_no_resend(void **state)
{
	struct rpcrdma_clnt *cl = make_clnt(state, 0);
	uint8_t res[64];
	struct rpcrdma_clnt_call ca = { .ca_prog = 1, .ca_vers = 1, .ca_res = res,
					.ca_res_cap = sizeof(res) };
	struct seen s = { 0 };
	uint32_t xid;

	assert_int_equal(rpcrdma_clnt_call_async(cl, &ca, done_cb, &s, &xid), 0);
	lose_connection(cl);
	assert_int_equal(s.calls, 1);
	assert_int_equal(s.status, -ECONNRESET);
	assert_false(clnt_resend_waiting(cl));
}

/* Fake window objects of the requests, made again at each connection (a
 * reconnect frees them with ibv_dealloc_mw, which invalidates them). */
static struct ibv_mw fake_mws[8][CLNT_NMAPS]; /* up to 8 requests */
static uint32_t fake_mw_gen;

static void fake_mws_install(struct rpcrdma_clnt *cl)
{
	uint32_t i, j;

	fake_mw_gen++;
	for (i = 0; i < cl->cl_nreqs; i++)
		for (j = 0; j < CLNT_NMAPS; j++) {
			fake_mws[i][j].context = &fv_mw_context;
			fake_mws[i][j].rkey = (0x50 + fake_mw_gen) << 24 | (i << 12) | (j << 8);
			cl->cl_reqs[i].rl_mw[j] = &fake_mws[i][j];
			cl->cl_reqs[i].rl_mw_rkey[j] = fake_mws[i][j].rkey;
		}
}

/* As fake_open, and as clnt_conn_open does with windows: the registered
 * buffers registered again and fresh windows. */
static int fake_open_mw(struct rpcrdma_clnt *cl)
{
	int rc = fake_open(cl);

	if (rc)
		return rc;
	assert_int_equal(clnt_buffers_register(cl), 0);
	cl->cl_mw_enabled = true;
	fake_mws_install(cl);
	return 0;
}

/* Send @k carried a Read chunk through a window bound on the second
 * connection over the 8 KiB at @piece, which the peer can read. */
static void check_resent_window(unsigned k, const uint8_t *piece)
{
	const uint8_t *peer;

	assert_int_equal(sent.read_handle[k] >> 24, 0x52);
	assert_int_equal(sent.read_addr[k], (uintptr_t)piece);
	assert_int_equal(sent.read_len[k], 8192);
	peer = fv_remote_ptr(sent.read_handle[k], sent.read_addr[k], 8192,
			     IBV_ACCESS_REMOTE_READ);
	assert_ptr_equal(peer, piece);
}

/* rpcrdma-nfs put's configuration: memory windows over a buffer kept
 * registered, WRITE data (8 KiB pieces, more than the 4 KiB inline
 * threshold) in Read chunks, three asynchronous calls in flight.  The
 * connection goes: after the reconnect the three are sent again with xids
 * 0x100, 0x101, 0x102, each Read chunk through a window bound on the new
 * connection over the same bytes (the old windows are gone), and each
 * callback runs once with its own reply. */
static void test_resend_async_windows_read_chunks(void **state)
{
	struct rpcrdma_clnt_config cfg = {
		.cf_max_credits = 4, .cf_inline_size = 4096, .cf_auth_none = true,
		.cf_log = stderr, .cf_retries = 3, .cf_reg = RPCRDMA_CLNT_REG_WINDOWS,
	};
	static uint8_t data[3 * 8192];
	struct rpcrdma_clnt *cl = clnt_fixture_new(&cfg);
	uint8_t res[3][64], args[8] = { 0 };
	struct rpcrdma_clnt_call ca[3];
	uint32_t xid[3], old_handle[3], i, j;
	struct seen s[3];

	*state = cl;
	assert_int_equal(clnt_post_all_recvs(cl), 0);
	clnt_fixture_set_peer(cl, 4096, 4096);
	cl->cl_connected = true;
	cl->cl_next_xid = 0x100;
	cl->cl_credits = 4;
	cl->cl_open = fake_open_mw;
	cl->cl_mw_enabled = true;
	fake_mws_install(cl);
	assert_int_equal(rpcrdma_clnt_register_buffer(cl, data, sizeof(data)), 0);

	memset(s, 0, sizeof(s));
	for (i = 0; i < 3; i++) {
		ca[i] = (struct rpcrdma_clnt_call){ .ca_prog = 100003, .ca_vers = 3, .ca_proc = 7,
						    .ca_args = args, .ca_args_len = sizeof(args),
						    .ca_ddp = data + i * 8192, .ca_ddp_len = 8192,
						    .ca_res = res[i], .ca_res_cap = 64 };
		assert_int_equal(rpcrdma_clnt_call_async(cl, &ca[i], done_cb, &s[i], &xid[i]),
				 0);
		assert_int_equal(xid[i], 0x100 + i);
		/* a Read chunk through a window over this piece */
		old_handle[i] = sent.read_handle[i];
		assert_int_equal(old_handle[i] >> 24, 0x51);
		assert_int_equal(sent.read_addr[i], (uintptr_t)(data + i * 8192));
		assert_int_equal(sent.read_len[i], 8192);
		assert_non_null(fv_remote_ptr(old_handle[i], sent.read_addr[i], 8192,
					      IBV_ACCESS_REMOTE_READ));
	}
	assert_int_equal(sent.n, 3);
	assert_int_equal(cl->cl_stats.cs_reg_persistent, 3);

	lose_connection(cl);
	for (i = 0; i < 3; i++)
		assert_int_equal(s[i].calls, 0);
	assert_true(clnt_resend_waiting(cl));

	assert_int_equal(clnt_reconnect(cl), 0);
	assert_int_equal(cl->cl_stats.cs_reconnects, 1);
	/* the old windows were freed with the old connection */
	for (i = 0; i < 3; i++)
		assert_false(fv_window_valid(old_handle[i]));
	/* one credit until the first reply: the oldest went alone */
	assert_int_equal(sent.n, 4);
	assert_int_equal(sent.xids[3], 0x100);
	check_resent_window(3, data);
	deliver_reply(cl, 0x100, 4, 20);
	/* its window is invalidated once its reply is in */
	assert_false(fv_window_valid(sent.read_handle[3]));
	assert_int_equal(sent.n, 6);
	assert_int_equal(sent.xids[4], 0x101);
	assert_int_equal(sent.xids[5], 0x102);
	check_resent_window(4, data + 8192);
	check_resent_window(5, data + 2 * 8192);
	deliver_reply(cl, 0x102, 4, 22);
	deliver_reply(cl, 0x101, 4, 21);
	for (i = 0; i < 3; i++) {
		assert_int_equal(s[i].calls, 1);
		assert_int_equal(s[i].status, 0);
		assert_int_equal(s[i].result, 20 + i);
	}
	assert_int_equal(cl->cl_stats.cs_retransmits, 3);
	assert_int_equal(cl->cl_outstanding, 0);
	assert_int_equal(cl->cl_rpc_busy, 0);
	assert_int_equal(rpcrdma_clnt_unregister_buffer(cl, data), 0);
	for (i = 0; i < cl->cl_nreqs; i++) /* fake windows: the test owns them */
		for (j = 0; j < CLNT_NMAPS; j++)
			cl->cl_reqs[i].rl_mw[j] = NULL;
}

/* The opening step of a reconnect that also aborts abort_xid: the calls
 * to send again are being marshalled (RL_REBINDING) at that moment. */
static uint32_t abort_xid;
static int abort_rc;

static int fake_open_abort(struct rpcrdma_clnt *cl)
{
	int rc = fake_open(cl);

	abort_rc = rpcrdma_clnt_abort(cl, abort_xid);
	return rc;
}

/* A call aborted while the reconnect marshals it again: the abort
 * succeeds (no -EBUSY), the reconnect completes it with -ECANCELED instead
 * of sending it, and the other call lost with the connection goes out
 * again and gets its reply. */
static void test_abort_while_rebinding(void **state)
{
	struct rpcrdma_clnt *cl = make_clnt(state, 2);
	uint8_t res[2][64];
	struct rpcrdma_clnt_call ca[2];
	struct seen s[2];
	uint32_t xid[2], i;

	memset(s, 0, sizeof(s));
	for (i = 0; i < 2; i++) {
		ca[i] = (struct rpcrdma_clnt_call){ .ca_prog = 1, .ca_vers = 1, .ca_res = res[i],
						    .ca_res_cap = 64 };
		assert_int_equal(rpcrdma_clnt_call_async(cl, &ca[i], done_cb, &s[i], &xid[i]),
				 0);
	}
	lose_connection(cl);
	abort_xid = xid[1];
	abort_rc = 1;
	cl->cl_open = fake_open_abort;
	assert_int_equal(clnt_reconnect(cl), 0);
	assert_int_equal(abort_rc, 0);
	assert_int_equal(s[1].calls, 1);
	assert_int_equal(s[1].status, -ECANCELED);
	assert_int_equal(cl->cl_stats.cs_aborts, 1);
	assert_int_equal(sent.n, 3);
	assert_int_equal(sent.xids[2], xid[0]);
	deliver_reply(cl, xid[0], 4, 6);
	assert_int_equal(s[0].calls, 1);
	assert_int_equal(s[0].status, 0);
	assert_int_equal(s[0].result, 6);
	assert_int_equal(sent.n, 3); /* the aborted call never went again */
	assert_int_equal(s[1].calls, 1);
	assert_int_equal(cl->cl_outstanding, 0);
	assert_int_equal(cl->cl_rpc_busy, 0);
	/* an xid no longer known */
	assert_int_equal(rpcrdma_clnt_abort(cl, xid[1]), -ENOENT);
}

struct sync_caller {
	struct rpcrdma_clnt *cl;
	struct rpcrdma_clnt_call ca;
	uint8_t res[64];
	int rc;
};

static void *sync_call(void *arg)
{
	struct sync_caller *sc = arg;

	sc->rc = rpcrdma_clnt_call(sc->cl, &sc->ca);
	return NULL;
}

/* cf_retries counts per call, also across the requests a synchronous call
 * goes through: with cf_retries 2, a call lost once with its connection
 * (sent again: try 1) that then times out (try 2: reconnect and send
 * again) may not start over with a fresh budget; its second timeout ends
 * it: three sends of xid 0x100 in all, not four.  (The loss is made right
 * after the first send, well within the 1 s timeout.) */
static void test_sync_retries_span_requests(void **state)
{
	struct rpcrdma_clnt *cl = make_clnt(state, 2);
	struct sync_caller sc = { .cl = cl };
	unsigned n = 0, spins;
	pthread_t t;

	sc.ca = (struct rpcrdma_clnt_call){ .ca_prog = 1, .ca_vers = 1, .ca_res = sc.res,
					    .ca_res_cap = sizeof(sc.res), .ca_timeout_ms = 1000 };
	assert_int_equal(pthread_create(&t, NULL, sync_call, &sc), 0);
	for (spins = 0; !n && spins < 100000000u; spins++) {
		pthread_mutex_lock(&cl->cl_lock);
		n = sent.n;
		pthread_mutex_unlock(&cl->cl_lock);
		sched_yield();
	}
	assert_int_equal(n, 1);
	lose_connection(cl);
	assert_int_equal(clnt_reconnect(cl), 0);
	pthread_join(t, NULL);
	assert_int_equal(sc.rc, -ETIMEDOUT);
	assert_int_equal(sent.n, 3);
	assert_int_equal(sent.xids[0], 0x100);
	assert_int_equal(sent.xids[1], 0x100);
	assert_int_equal(sent.xids[2], 0x100);
	assert_int_equal(cl->cl_stats.cs_timeouts, 2);
	assert_int_equal(sent.opens, 2);
	assert_int_equal(cl->cl_rpc_busy, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_resend_async_same_xids, setup, teardown),
		cmocka_unit_test_setup_teardown(test_resend_async_windows_read_chunks, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_resend_sync_same_xid, setup, teardown),
		cmocka_unit_test_setup_teardown(test_resend_budget, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_retries_no_resend, setup, teardown),
		cmocka_unit_test_setup_teardown(test_new_call_waits_for_reconnect, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_try_call_reconnects, setup, teardown),
		cmocka_unit_test_setup_teardown(test_abort_while_rebinding, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sync_retries_span_requests, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
