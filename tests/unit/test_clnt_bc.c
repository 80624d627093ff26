// SPDX-License-Identifier: MIT
/*
 * test_clnt_bc.c - the client's backchannel (RFC 8167) through the fake
 * device: Receives reserved for it, a call served by a registered program
 * and answered inline with our backchannel credit, a call racing a
 * forward reply, calls beyond our credit, calls with chunks (ERR_CHUNK),
 * programs not registered, and a disconnect with backchannel calls
 * outstanding.  Expected bytes are worked out by hand from RFC 8166 4.2,
 * RFC 8167 4 and 5 and RFC 5531 9.
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

#define CBPROG 0x40000000u

static unsigned g_served;

/* The program: one uint32 in, that value + 1 out. */
static int cb_dispatch(const struct rpcrdma_rpc_msg *call, struct rpcrdma_xdr *args,
		       struct rpcrdma_xdr *res, void *arg)
{
	uint32_t v = rpcrdma_xdr_get_u32(args);

	(void)arg;
	g_served++;
	if (call->rm_proc != 1 || !rpcrdma_xdr_ok(args))
		return RPC_ACCEPT_GARBAGE_ARGS;
	rpcrdma_xdr_put_u32(res, v + 1);
	return RPC_ACCEPT_SUCCESS;
}

static int setup(void **state)
{
	fv_reset();
	fv.fv_script_sends = true;
	g_served = 0;
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

/* A connected client: 4 forward credits, 2 backchannel slots. */
static struct rpcrdma_clnt *make_clnt(void **state)
{
	struct rpcrdma_clnt_config cfg = {
		.cf_max_credits = 4,
		.cf_inline_size = 1024,
		.cf_auth_none = true,
		.cf_log = stderr,
		.cf_bc_slots = 2,
	};
	struct rpcrdma_clnt *cl = clnt_fixture_new(&cfg);

	*state = cl;
	assert_int_equal(clnt_post_all_recvs(cl), 0);
	/* RFC 8167 4.2.1: forward credits + 2 spare + 2 for backchannel calls */
	assert_int_equal(fv.fv_nrecv_posted, 8);
	clnt_fixture_set_peer(cl, 1024, 1024);
	cl->cl_connected = true;
	cl->cl_next_xid = 0x100;
	assert_int_equal(rpcrdma_clnt_bc_register(cl, CBPROG, 1, cb_dispatch, NULL), 0);
	assert_int_equal(rpcrdma_clnt_bc_register(cl, CBPROG, 1, cb_dispatch, NULL), -EEXIST);
	return cl;
}

static void deliver(const uint8_t *msg, uint32_t len)
{
	assert_int_equal(fv_deliver(msg, len), 0);
}

/* A backchannel call from the server: RDMA_MSG, no chunks, asking for
 * @credits; RPC call of CBPROG v1 @proc, AUTH_NONE, one word @v. */
static uint32_t bc_call(uint8_t *msg, uint32_t xid, uint32_t credits, uint32_t proc,
			uint32_t prog, uint32_t v)
{
	uint8_t *p = msg;

	p = put32(p, xid);
	p = put32(p, 1);
	p = put32(p, credits);
	p = put32(p, RDMA_MSG);
	p = put32(p, 0);
	p = put32(p, 0);
	p = put32(p, 0);
	p = put32(p, xid);
	p = put32(p, 0); /* CALL */
	p = put32(p, 2);
	p = put32(p, prog);
	p = put32(p, 1);
	p = put32(p, proc);
	p = put32(p, 0);
	p = put32(p, 0);
	p = put32(p, 0);
	p = put32(p, 0);
	p = put32(p, v);
	return (uint32_t)(p - msg);
}

/* Our reply: xid, vers 1, our backchannel credit 2, RDMA_MSG, three
 * empty lists; REPLY, MSG_ACCEPTED, AUTH_NONE verifier, @stat. */
static void assert_reply(uint32_t xid, uint32_t stat, const uint32_t *res, unsigned nres)
{
	const uint32_t head[] = { xid, 1, 2, RDMA_MSG, 0, 0, 0, xid, 1, 0, 0, 0, stat };
	unsigned i;

	assert_int_equal(fv.fv_sent_len, 4 * (13 + nres));
	for (i = 0; i < 13; i++)
		assert_int_equal(get32(fv.fv_sent + 4 * i), head[i]);
	for (i = 0; i < nres; i++)
		assert_int_equal(get32(fv.fv_sent + 52 + 4 * i), res[i]);
}

/* A call is served and answered; its credit field does not touch our
 * forward credits; its Receive goes back; the request is free after the
 * reply's Send completes. */
static void test_call_served(void **state)
{
	struct rpcrdma_clnt *cl = make_clnt(state);
	uint8_t msg[128];
	static const uint32_t want[] = { 42 };

	deliver(msg, bc_call(msg, 0x500, 7, 1, CBPROG, 41));
	clnt_poll(cl);
	assert_int_equal(g_served, 1);
	assert_int_equal(fv.fv_nsends, 1);
	assert_reply(0x500, RPC_ACCEPT_SUCCESS, want, 1);
	assert_int_equal(cl->cl_credits, 1);
	assert_int_equal(cl->cl_recvs_posted, 8);
	assert_int_equal(cl->cl_bc[0].br_owners, CLNT_BC_OWNER_SEND);
	fv_push(fv.fv_send_wr_id, IBV_WC_SUCCESS, IBV_WC_SEND, 0, 0);
	clnt_poll(cl);
	assert_int_equal(cl->cl_bc[0].br_owners, 0);
	assert_int_equal(cl->cl_stats.cs_bc_calls, 1);
	assert_int_equal(cl->cl_stats.cs_bc_replies, 1);
	assert_int_equal(cl->cl_stats.cs_bad_replies, 0);
}

/* A program not registered: PROG_UNAVAIL; another version: PROG_MISMATCH
 * with the versions we serve (1..1). */
static void test_prog_unavail(void **state)
{
	struct rpcrdma_clnt *cl = make_clnt(state);
	uint8_t msg[128];
	static const uint32_t range[] = { 1, 1 };

	deliver(msg, bc_call(msg, 0x501, 1, 1, 0x40000001u, 0));
	clnt_poll(cl);
	assert_reply(0x501, RPC_ACCEPT_PROG_UNAVAIL, NULL, 0);
	fv_push(fv.fv_send_wr_id, IBV_WC_SUCCESS, IBV_WC_SEND, 0, 0);
	bc_call(msg, 0x502, 1, 1, CBPROG, 0);
	put32(msg + 28 + 16, 4); /* version 4 */
	deliver(msg, 28 + 44);
	clnt_poll(cl);
	assert_reply(0x502, RPC_ACCEPT_PROG_MISMATCH, range, 2);
	assert_int_equal(g_served, 0);
}

/* A backchannel call and a forward reply in one completion batch: each
 * goes its way; the forward grant comes from the reply only. */
static void test_racing_forward_reply(void **state)
{
	struct rpcrdma_clnt *cl = make_clnt(state);
	uint8_t args[4] = { 0 }, res[64], msg[128], rep[128], *p;
	struct rpcrdma_clnt_call ca = {
		.ca_prog = 100003, .ca_vers = 3, .ca_proc = 0,
		.ca_args = args, .ca_args_len = 4, .ca_res = res, .ca_res_cap = sizeof(res),
	};
	struct clnt_req *rl;
	static const uint32_t want[] = { 10 };

	assert_int_equal(clnt_call_start(cl, &ca, &rl), 0);
	fv_push(fv.fv_send_wr_id, IBV_WC_SUCCESS, IBV_WC_SEND, 0, 0);
	deliver(msg, bc_call(msg, 0x100, 9, 1, CBPROG, 9)); /* same xid value, other direction */
	p = rep;
	p = put32(p, 0x100);
	p = put32(p, 1);
	p = put32(p, 3);
	p = put32(p, RDMA_MSG);
	p = put32(p, 0);
	p = put32(p, 0);
	p = put32(p, 0);
	p = put32(p, 0x100);
	p = put32(p, 1);
	p = put32(p, 0);
	p = put32(p, 0);
	p = put32(p, 0);
	p = put32(p, 0);
	deliver(rep, (uint32_t)(p - rep));
	clnt_poll(cl);
	assert_int_equal(clnt_call_wait(cl, rl, 1000), 0);
	assert_int_equal(cl->cl_credits, 3);
	assert_int_equal(g_served, 1);
	assert_reply(0x100, RPC_ACCEPT_SUCCESS, want, 1);
	assert_int_equal(cl->cl_stats.cs_unknown_xid, 0);
}

/* More calls than our backchannel credit: the extra one is dropped
 * (counted), its Receive reposted. */
static void test_credits_exhausted(void **state)
{
	struct rpcrdma_clnt *cl = make_clnt(state);
	uint8_t msg[128];

	deliver(msg, bc_call(msg, 0x601, 1, 1, CBPROG, 1));
	deliver(msg, bc_call(msg, 0x602, 1, 1, CBPROG, 2));
	deliver(msg, bc_call(msg, 0x603, 1, 1, CBPROG, 3));
	clnt_poll(cl);
	assert_int_equal(g_served, 2);
	assert_int_equal(fv.fv_nsends, 2);
	assert_int_equal(cl->cl_stats.cs_bc_drops, 1);
	assert_int_equal(cl->cl_recvs_posted, 8);
}

/* The server may send the next calls as soon as it has our replies, which
 * can be before we have polled those replies' Send completions: the new
 * calls are served (our credit counts calls being served, not Sends in
 * flight), and our reply still grants 2. */
static void test_calls_while_reply_sends_pending(void **state)
{
	struct rpcrdma_clnt *cl = make_clnt(state);
	uint8_t msg[128];
	static const uint32_t want[] = { 5 };

	deliver(msg, bc_call(msg, 0x701, 1, 1, CBPROG, 1));
	deliver(msg, bc_call(msg, 0x702, 1, 1, CBPROG, 2));
	clnt_poll(cl);
	assert_int_equal(fv.fv_nsends, 2); /* their completions not yet in */
	deliver(msg, bc_call(msg, 0x703, 1, 1, CBPROG, 3));
	deliver(msg, bc_call(msg, 0x704, 1, 1, CBPROG, 4));
	clnt_poll(cl);
	assert_int_equal(g_served, 4);
	assert_int_equal(fv.fv_nsends, 4);
	assert_int_equal(cl->cl_stats.cs_bc_drops, 0);
	assert_reply(0x704, RPC_ACCEPT_SUCCESS, want, 1);
	/* every request now waits for its Send: one more call is dropped */
	deliver(msg, bc_call(msg, 0x705, 1, 1, CBPROG, 5));
	clnt_poll(cl);
	assert_int_equal(g_served, 4);
	assert_int_equal(cl->cl_stats.cs_bc_drops, 1);
	assert_int_equal(cl->cl_recvs_posted, 8);
}

/* RFC 8167 5.1: a backchannel call with chunks is answered RDMA_ERROR
 * ERR_CHUNK: xid, vers 1, credits 2, RDMA_ERROR, ERR_CHUNK (20 bytes). */
static void test_call_with_chunks(void **state)
{
	struct rpcrdma_clnt *cl = make_clnt(state);
	uint8_t msg[160], *p = msg;

	p = put32(p, 0x700);
	p = put32(p, 1);
	p = put32(p, 1);
	p = put32(p, RDMA_MSG);
	p = put32(p, 0);       /* no Read list */
	p = put32(p, 1);       /* a Write chunk of one segment */
	p = put32(p, 1);
	p = put32(p, 0x1234);  /* handle, length, offset */
	p = put32(p, 512);
	p = put32(p, 0);
	p = put32(p, 0x1000);
	p = put32(p, 0);       /* end of Write list */
	p = put32(p, 0);       /* no Reply chunk: 52 bytes of header */
	{
		uint8_t body[128];
		uint32_t n = bc_call(body, 0x700, 1, 1, CBPROG, 5);

		memcpy(p, body + 28, n - 28); /* the RPC call follows */
		p += n - 28;
	}
	deliver(msg, (uint32_t)(p - msg));
	clnt_poll(cl);
	assert_int_equal(g_served, 0);
	assert_int_equal(fv.fv_sent_len, 20);
	assert_int_equal(get32(fv.fv_sent), 0x700);
	assert_int_equal(get32(fv.fv_sent + 4), 1);
	assert_int_equal(get32(fv.fv_sent + 8), 2);
	assert_int_equal(get32(fv.fv_sent + 12), RDMA_ERROR);
	assert_int_equal(get32(fv.fv_sent + 16), ERR_CHUNK);
	assert_int_equal(cl->cl_stats.cs_bc_errors, 1);
}

/*
 * Disconnect with backchannel calls outstanding: one whose reply Send is
 * posted and not completed, one received but not yet served.  The second
 * is dropped unanswered; the first stays owned by its Send until the flush
 * (or the teardown) releases it.
 */
static void test_disconnect_outstanding(void **state)
{
	struct rpcrdma_clnt *cl = make_clnt(state);
	uint8_t msg[128];
	struct ibv_wc wc;

	deliver(msg, bc_call(msg, 0x801, 1, 1, CBPROG, 1));
	clnt_poll(cl);
	assert_int_equal(cl->cl_bc[0].br_owners, CLNT_BC_OWNER_SEND);
	/* The next call is received, the connection goes before it is served. */
	deliver(msg, bc_call(msg, 0x802, 1, 1, CBPROG, 2));
	assert_int_equal(rpcrdma_verbs_poll(cl->cl_cq, 1, &wc), 1);
	pthread_mutex_lock(&cl->cl_lock);
	clnt_handle_wc(cl, &wc);
	assert_int_equal(cl->cl_bc[1].br_owners, CLNT_BC_OWNER_UPPER);
	clnt_disconnected(cl);
	pthread_mutex_unlock(&cl->cl_lock);
	clnt_bc_run(cl);
	assert_int_equal(g_served, 2); /* served, but not sent */
	assert_int_equal(fv.fv_nsends, 1);
	assert_int_equal(cl->cl_bc[1].br_owners, 0);
	assert_int_equal(cl->cl_bc[0].br_owners, CLNT_BC_OWNER_SEND);
	/* Its flush releases the first. */
	fv_push(fv.fv_send_wr_id, IBV_WC_WR_FLUSH_ERR, IBV_WC_SEND, 0, 0);
	clnt_poll(cl);
	assert_int_equal(cl->cl_bc[0].br_owners, 0);

	/* A Send that never completes: the teardown releases it before
	 * the slab's registration goes. */
	cl->cl_connected = true;
	deliver(msg, bc_call(msg, 0x803, 1, 1, CBPROG, 3));
	clnt_poll(cl);
	assert_int_equal(cl->cl_bc[0].br_owners, CLNT_BC_OWNER_SEND);
	pthread_mutex_lock(&cl->cl_lock);
	clnt_bc_release_all(cl);
	pthread_mutex_unlock(&cl->cl_lock);
	assert_int_equal(cl->cl_bc[0].br_owners, 0);
}

/* RPC version 3 in a backchannel call: MSG_DENIED, RPC_MISMATCH 2..2
 * (RFC 5531 9): xid, REPLY, DENIED 1, RPC_MISMATCH 0, low 2, high 2. */
static void test_rpc_mismatch(void **state)
{
	struct rpcrdma_clnt *cl = make_clnt(state);
	uint8_t msg[128];
	static const uint32_t want[] = { 0xa00, 1, 2, RDMA_MSG, 0, 0, 0, 0xa00, 1, 1, 0, 2, 2 };
	unsigned i;

	bc_call(msg, 0xa00, 1, 1, CBPROG, 0);
	put32(msg + 28 + 8, 3);
	deliver(msg, 28 + 44);
	clnt_poll(cl);
	assert_int_equal(g_served, 0);
	assert_int_equal(fv.fv_sent_len, sizeof(want));
	for (i = 0; i < 13; i++)
		assert_int_equal(get32(fv.fv_sent + 4 * i), want[i]);
}

/* A backchannel call sent as RDMA_NOMSG with a position-zero Read chunk
 * (a long call): chunks are not used on the backchannel, ERR_CHUNK. */
static void test_nomsg_call(void **state)
{
	struct rpcrdma_clnt *cl = make_clnt(state);
	uint8_t msg[128], *p = msg;

	p = put32(p, 0xb00);
	p = put32(p, 1);
	p = put32(p, 1);
	p = put32(p, RDMA_NOMSG);
	p = put32(p, 1);      /* Read chunk: position 0, one segment */
	p = put32(p, 0);
	p = put32(p, 0x4321);
	p = put32(p, 44);
	p = put32(p, 0);
	p = put32(p, 0x2000);
	p = put32(p, 0);      /* end of Read list */
	p = put32(p, 0);      /* no Write list */
	p = put32(p, 0);      /* no Reply chunk */
	deliver(msg, (uint32_t)(p - msg));
	clnt_poll(cl);
	assert_int_equal(fv.fv_sent_len, 20);
	assert_int_equal(get32(fv.fv_sent), 0xb00);
	assert_int_equal(get32(fv.fv_sent + 12), RDMA_ERROR);
	assert_int_equal(get32(fv.fv_sent + 16), ERR_CHUNK);
	assert_int_equal(cl->cl_stats.cs_bad_replies, 0);
}

/* Registration limits. */
static void test_register(void **state)
{
	struct rpcrdma_clnt *cl = make_clnt(state);
	uint32_t v;

	assert_int_equal(rpcrdma_clnt_bc_register(cl, CBPROG, 2, NULL, NULL), -EINVAL);
	for (v = 2; v <= RPCRDMA_CLNT_BC_MAX_PROGS; v++)
		assert_int_equal(rpcrdma_clnt_bc_register(cl, CBPROG, v, cb_dispatch, NULL), 0);
	assert_int_equal(rpcrdma_clnt_bc_register(cl, CBPROG, 99, cb_dispatch, NULL), -ENOSPC);
}

/* Without cf_bc_slots: no program may register, a call is dropped. */
static void test_no_backchannel(void **state)
{
	struct rpcrdma_clnt_config cfg = {
		.cf_max_credits = 4, .cf_inline_size = 1024, .cf_auth_none = true,
	};
	struct rpcrdma_clnt *cl = clnt_fixture_new(&cfg);
	uint8_t msg[128];

	*state = cl;
	assert_int_equal(clnt_post_all_recvs(cl), 0);
	assert_int_equal(fv.fv_nrecv_posted, 6);
	cl->cl_connected = true;
	assert_int_equal(rpcrdma_clnt_bc_register(cl, CBPROG, 1, cb_dispatch, NULL), -EOPNOTSUPP);
	deliver(msg, bc_call(msg, 0x900, 1, 1, CBPROG, 1));
	clnt_poll(cl);
	assert_int_equal(fv.fv_nsends, 0);
	assert_int_equal(cl->cl_stats.cs_bc_drops, 1);
	assert_int_equal(cl->cl_recvs_posted, 6);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_call_served, setup, teardown),
		cmocka_unit_test_setup_teardown(test_prog_unavail, setup, teardown),
		cmocka_unit_test_setup_teardown(test_racing_forward_reply, setup, teardown),
		cmocka_unit_test_setup_teardown(test_credits_exhausted, setup, teardown),
		cmocka_unit_test_setup_teardown(test_calls_while_reply_sends_pending, setup, teardown),
		cmocka_unit_test_setup_teardown(test_call_with_chunks, setup, teardown),
		cmocka_unit_test_setup_teardown(test_disconnect_outstanding, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rpc_mismatch, setup, teardown),
		cmocka_unit_test_setup_teardown(test_nomsg_call, setup, teardown),
		cmocka_unit_test_setup_teardown(test_register, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_backchannel, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
