// SPDX-License-Identifier: MIT
/*
 * test_clnt.c - the Requester transport driven through the verbs seam.
 *
 * A fake device captures each Send's bytes, hands out memory regions with
 * made-up keys and counts them, and queues completions that the test
 * delivers (in the order it chooses) by polling.  Expected header bytes
 * are worked out by hand from RFC 8166 section 4 and RFC 5531 section 9.
 */
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
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

#include "capture/capture.h"
#include "clnt/clnt_internal.h"

#include "clnt_fixture.h"

/* ---------- the fake device (fake_verbs.c) ---------- */

static void cq_push(uint64_t wr_id, enum ibv_wc_status st, enum ibv_wc_opcode op,
		    uint32_t len)
{
	fv_push(wr_id, st, op, len, op == IBV_WC_RECV);
}

static struct clnt_recv *take_recv(void)
{
	return rpcrdma_container_of((struct rpcrdma_cqe *)(uintptr_t)fv_take_recv()->wr_id,
				    struct clnt_recv, rr_cqe);
}

/* Complete Sends inside post_send: the Send, then the scripted Reply. */
static struct {
	struct rpcrdma_clnt *cl;
	const uint8_t *reply;
	uint32_t reply_len;
} inl;

static bool inline_answer(const uint8_t *msg, uint32_t len, const struct fv_wr *w, void *arg)
{
	/* Completions that race ahead of the post's return: the completion
	 * side runs them under the client lock, which the poster holds here. */
	struct ibv_wc wc = { .wr_id = w->w_wr_id, .status = IBV_WC_SUCCESS,
			     .opcode = IBV_WC_SEND };
	struct clnt_recv *rr = take_recv();

	(void)msg;
	(void)len;
	(void)arg;
	clnt_handle_wc(inl.cl, &wc);
	memcpy(rr->rr_buf, inl.reply, inl.reply_len);
	memset(&wc, 0, sizeof(wc));
	wc.wr_id = (uintptr_t)&rr->rr_cqe;
	wc.opcode = IBV_WC_RECV;
	wc.byte_len = inl.reply_len;
	clnt_handle_wc(inl.cl, &wc);
	return true;
}

/* Live MRs other than the pool's (index 0, registered first). */
static unsigned live_call_mrs(void)
{
	unsigned i, n = 0;

	for (i = 1; i < FV_MAX_MR; i++)
		n += fv.fv_mr_live[i];
	return n;
}

/* ---------- fixture ---------- */

/* A connected client with 4 credits asked for; the peer advertised
 * @peer_recv bytes of inline receive and 4096 of send. */
static struct rpcrdma_clnt *make_clnt(uint32_t peer_recv)
{
	struct rpcrdma_clnt_config cfg = {
		.cf_max_credits = 4,
		.cf_inline_size = 4096,
		.cf_auth_none = true,
		.cf_log = stderr,
	};
	struct rpcrdma_clnt *cl = clnt_fixture_new(&cfg);

	assert_int_equal(clnt_post_all_recvs(cl), 0);
	/* credits + 2 spare Receives in one chained post */
	assert_int_equal(fv.fv_nrecv_posted, 6);
	clnt_fixture_set_peer(cl, 4096, peer_recv);
	assert_int_equal(cl->cl_inline_send, peer_recv);
	assert_int_equal(cl->cl_inline_recv, 4096);
	cl->cl_connected = true;
	cl->cl_next_xid = 0x100;
	return cl;
}

static int setup(void **state)
{
	fv_reset();
	fv.fv_script_sends = true; /* each test completes its Sends */
	*state = NULL;
	return 0;
}

static int teardown(void **state)
{
	struct rpcrdma_clnt *cl = *state;

	if (cl)
		clnt_free(cl);
	fv_uninstall();
	return 0;
}

/* ---------- message helpers ---------- */

/* Compare the last Send's first @n words with @w. */
static void assert_words(const uint8_t *buf, const uint32_t *w, unsigned n)
{
	unsigned i;

	for (i = 0; i < n; i++)
		if (get32(buf + 4 * i) != w[i])
			fail_msg("word %u: got 0x%08x, want 0x%08x", i, get32(buf + 4 * i), w[i]);
}

/* An accepted RPC reply header with AUTH_NONE verifier: 24 bytes. */
static uint8_t *put_rpc_reply(uint8_t *p, uint32_t xid, uint32_t accept_stat)
{
	p = put32(p, xid);
	p = put32(p, 1);  /* REPLY */
	p = put32(p, 0);  /* MSG_ACCEPTED */
	p = put32(p, 0);  /* verf flavor */
	p = put32(p, 0);  /* verf length */
	return put32(p, accept_stat);
}

/* Deliver @len bytes as the next Receive completion. */
static void deliver(struct rpcrdma_clnt *cl, const uint8_t *msg, uint32_t len)
{
	struct clnt_recv *rr = take_recv();

	(void)cl;
	memcpy(rr->rr_buf, msg, len);
	cq_push((uintptr_t)&rr->rr_cqe, IBV_WC_SUCCESS, IBV_WC_RECV, len);
}

/* The fixed words a reply's transport header opens with (RFC 8166
 * 4.2.1): @xid, version 1, a grant of @credits, @proc. */
static uint8_t *put_rdma_hdr(uint8_t *p, uint32_t xid, uint32_t credits, uint32_t proc)
{
	p = put32(p, xid);
	p = put32(p, 1);
	p = put32(p, credits);
	return put32(p, proc);
}

/* An inline RDMA_MSG reply: xid, vers 1, @credits, MSG, three empty lists,
 * then the RPC reply and a 4-byte result. */
static uint32_t build_inline_reply(uint8_t *buf, uint32_t xid, uint32_t credits,
				   uint32_t result)
{
	uint8_t *p = buf;

	p = put_rdma_hdr(p, xid, credits, RDMA_MSG);
	p = put32(p, 0);
	p = put32(p, 0);
	p = put32(p, 0);
	p = put_rpc_reply(p, xid, 0);
	p = put32(p, result);
	return (uint32_t)(p - buf); /* 28 + 24 + 4 = 56 */
}

static void send_complete(enum ibv_wc_status st)
{
	cq_push(fv.fv_send_wr_id, st, IBV_WC_SEND, 0);
}

/* Teardown of a test's connection: every Send whose completion the test
 * did not deliver is released (as closing the connection does). */
static void release_sends(struct rpcrdma_clnt *cl)
{
	pthread_mutex_lock(&cl->cl_lock);
	clnt_sq_release_all(cl);
	pthread_mutex_unlock(&cl->cl_lock);
}

/* The connection lost and closed: pending calls end (-ECONNRESET), their
 * Sends are released, their callbacks run. */
static void drop_connection(struct rpcrdma_clnt *cl)
{
	pthread_mutex_lock(&cl->cl_lock);
	clnt_disconnected(cl);
	clnt_sq_release_all(cl);
	pthread_mutex_unlock(&cl->cl_lock);
	clnt_run_done(cl);
}

/* Deliver reply[0 .. @end) as the next Receive, complete the Send, and
 * return what clnt_call_wait() then says for @rl. */
static int answer_call(struct rpcrdma_clnt *cl, struct clnt_req *rl, const uint8_t *reply,
		       const uint8_t *end)
{
	deliver(cl, reply, (uint32_t)(end - reply));
	send_complete(IBV_WC_SUCCESS);
	clnt_poll(cl);
	return clnt_call_wait(cl, rl, 1000);
}

/* ---------- tests ---------- */

/* Inline call; the Reply arrives before the Send completion. */
static void test_inline_reply_before_send(void **state)
{
	struct rpcrdma_clnt *cl = make_clnt(4096);
	uint8_t args[8] = { 0, 0, 0, 7, 0, 0, 0, 9 }, res[256], reply[64];
	struct rpcrdma_clnt_call ca = {
		.ca_prog = 100003, .ca_vers = 3, .ca_proc = 1,
		.ca_args = args, .ca_args_len = 8, .ca_res = res, .ca_res_cap = sizeof(res),
	};
	const uint32_t want[] = {
		0x100, 1, 4, RDMA_MSG, 0, 0, 0,            /* transport header, 28 bytes */
		0x100, 0, 2, 100003, 3, 1, 0, 0, 0, 0,     /* RPC call, AUTH_NONE, 40 bytes */
		7, 9,                                      /* arguments */
	};
	struct clnt_req *rl;

	*state = cl;
	assert_int_equal(clnt_call_start(cl, &ca, &rl), 0);
	assert_int_equal(fv.fv_sent_len, 28 + 40 + 8);
	assert_int_equal(fv.fv_sent_nsge, 2);
	assert_words(fv.fv_sent, want, 19);
	assert_int_equal(cl->cl_outstanding, 1);
	assert_int_equal(live_call_mrs(), 0); /* inline: nothing registered */

	deliver(cl, reply, build_inline_reply(reply, 0x100, 5, 0xfeedf00d));
	clnt_poll(cl);
	assert_int_equal(clnt_call_wait(cl, rl, 1000), 0);
	assert_int_equal(ca.ca_res_off, 24);
	assert_int_equal(ca.ca_res_len, 28);
	assert_int_equal(get32(res + 24), 0xfeedf00d);
	assert_int_equal(cl->cl_credits, 4); /* 5 granted, 4 is our maximum */
	assert_int_equal(cl->cl_outstanding, 0);
	/* The Send side still owns the request. */
	assert_int_equal(cl->cl_reqs_out, 1);
	assert_int_equal(cl->cl_recvs_posted, 6); /* reposted */
	send_complete(IBV_WC_SUCCESS);
	clnt_poll(cl);
	assert_int_equal(cl->cl_reqs_out, 0);
	assert_int_equal(cl->cl_stats.cs_inline, 1);
}

/* WRITE-like call too large for a 1024-byte inline threshold: the DDP
 * data goes in a Read chunk at its XDR position, pad omitted, the tail
 * right after the head in the inline body. */
static void test_read_chunk(void **state)
{
	struct rpcrdma_clnt *cl = make_clnt(1024);
	static uint8_t data[2001];
	uint8_t head[16] = { 0 }, tail[8] = { 0, 0, 0, 1, 0, 0, 0, 2 }, res[256];
	struct rpcrdma_clnt_call ca = {
		.ca_prog = 100003, .ca_vers = 3, .ca_proc = 7,
		.ca_args = head, .ca_args_len = 16, .ca_ddp = data, .ca_ddp_len = 2001,
		.ca_tail = tail, .ca_tail_len = 8, .ca_res = res, .ca_res_cap = sizeof(res),
	};
	uint64_t off = (uintptr_t)data;
	const uint32_t want[] = {
		0x100, 1, 4, RDMA_MSG,
		1, 56, 0xa001, 2001, (uint32_t)(off >> 32), (uint32_t)off, 0, /* Read list */
		0, 0,                                      /* Write list, Reply chunk */
	};
	struct clnt_req *rl;

	*state = cl;
	assert_int_equal(clnt_call_start(cl, &ca, &rl), 0);
	assert_int_equal(fv.fv_sent_len, 52 + 40 + 16 + 8);
	assert_words(fv.fv_sent, want, 13);
	/* body: RPC header, head, then the tail directly (no data, no pad) */
	assert_int_equal(get32(fv.fv_sent + 52 + 56), 1);
	assert_int_equal(get32(fv.fv_sent + 52 + 60), 2);
	assert_int_equal(fv.fv_mr_access[1], IBV_ACCESS_REMOTE_READ);
	assert_ptr_equal(fv.fv_mrs[1].addr, data);
	assert_int_equal(live_call_mrs(), 1);
	assert_int_equal(cl->cl_stats.cs_read_chunks, 1);

	/* The Send completes before the Reply this time. */
	send_complete(IBV_WC_SUCCESS);
	clnt_poll(cl);
	assert_int_equal(cl->cl_reqs_out, 1);
	{
		uint8_t reply[64];

		deliver(cl, reply, build_inline_reply(reply, 0x100, 1, 0));
	}
	clnt_poll(cl);
	assert_int_equal(clnt_call_wait(cl, rl, 1000), 0);
	assert_int_equal(live_call_mrs(), 0);
	assert_int_equal(cl->cl_reqs_out, 0);
}

/* A call that does not fit and has no DDP data: RDMA_NOMSG with the whole
 * call in a position-zero Read chunk; only the header is sent. */
static void test_nomsg(void **state)
{
	struct rpcrdma_clnt *cl = make_clnt(1024);
	static uint8_t args[1200];
	uint8_t res[256], *copy;
	struct rpcrdma_clnt_call ca = {
		.ca_prog = 100003, .ca_vers = 3, .ca_proc = 8,
		.ca_args = args, .ca_args_len = 1200, .ca_res = res, .ca_res_cap = sizeof(res),
	};
	struct clnt_req *rl;
	uint64_t off;

	*state = cl;
	memset(args, 0x3c, sizeof(args));
	assert_int_equal(clnt_call_start(cl, &ca, &rl), 0);
	copy = fv.fv_mrs[1].addr;
	off = (uintptr_t)copy;
	{
		const uint32_t want[] = {
			0x100, 1, 4, RDMA_NOMSG,
			1, 0, 0xa001, 1240, (uint32_t)(off >> 32), (uint32_t)off, 0,
			0, 0,
		};

		assert_words(fv.fv_sent, want, 13);
	}
	assert_int_equal(fv.fv_sent_len, 52);
	assert_int_equal(fv.fv_sent_nsge, 1);
	assert_int_equal(fv.fv_mrs[1].length, 1240);
	assert_int_equal(get32(copy), 0x100);      /* the RPC call starts the chunk */
	assert_int_equal(get32(copy + 20), 8);     /* proc */
	assert_int_equal(copy[40], 0x3c);
	assert_int_equal(copy[1239], 0x3c);
	assert_int_equal(cl->cl_stats.cs_nomsg, 1);

	clnt_disconnected(cl);
	assert_int_equal(clnt_call_wait(cl, rl, 1000), -ECONNRESET);
	assert_int_equal(live_call_mrs(), 0);
}

/* A Write chunk pointing at the caller's buffer; the Reply reports the
 * bytes written.  A second call whose Reply claims more than was offered
 * fails with -EIO. */
static void test_write_chunk(void **state)
{
	struct rpcrdma_clnt *cl = make_clnt(4096);
	static uint8_t data[8192];
	uint8_t res[256], reply[128], *p;
	struct rpcrdma_clnt_call ca = {
		.ca_prog = 100003, .ca_vers = 3, .ca_proc = 6,
		.ca_res = res, .ca_res_cap = sizeof(res),
		.ca_rddp = data, .ca_rddp_cap = sizeof(data),
	};
	uint64_t off = (uintptr_t)data;
	const uint32_t want[] = {
		0x100, 1, 4, RDMA_MSG,
		0,                                                  /* Read list */
		1, 1, 0xa001, 8192, (uint32_t)(off >> 32), (uint32_t)off, 0, /* Write list */
		0,                                                  /* Reply chunk */
	};
	struct clnt_req *rl;
	uint32_t claimed;

	*state = cl;
	for (claimed = 5000; claimed <= 9000; claimed += 4000) {
		assert_int_equal(clnt_call_start(cl, &ca, &rl), 0);
		if (claimed == 5000) {
			assert_int_equal(fv.fv_sent_len, 52 + 40);
			assert_words(fv.fv_sent, want, 13);
			assert_int_equal(fv.fv_mr_access[1],
					 IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
		}
		p = put_rdma_hdr(reply, rl->rl_xid, 4, RDMA_MSG);
		p = put32(p, 0);
		p = put32(p, 1);
		p = put32(p, 1);
		p = put32(p, fv.fv_mrs[1].rkey);
		p = put32(p, claimed);
		p = put32(p, (uint32_t)(off >> 32));
		p = put32(p, (uint32_t)off);
		p = put32(p, 0);
		p = put32(p, 0);
		p = put_rpc_reply(p, rl->rl_xid, 0);
		p = put32(p, claimed); /* the opaque's length word stays inline */
		send_complete(IBV_WC_SUCCESS);
		deliver(cl, reply, (uint32_t)(p - reply));
		clnt_poll(cl);
		if (claimed == 5000) {
			assert_int_equal(clnt_call_wait(cl, rl, 1000), 0);
			assert_true(ca.ca_rddp_used);
			assert_int_equal(ca.ca_rddp_len, 5000);
			assert_int_equal(get32(res + ca.ca_res_off), 5000);
		} else {
			assert_int_equal(clnt_call_wait(cl, rl, 1000), -EIO);
		}
		assert_int_equal(live_call_mrs(), 0);
	}
	assert_int_equal(cl->cl_reqs_out, 0);
}

/* Reply chunk offered when the largest reply exceeds our inline receive;
 * the Responder answers RDMA_NOMSG with the reply in it. */
static void test_reply_chunk(void **state)
{
	struct rpcrdma_clnt *cl = make_clnt(4096);
	static uint8_t res[8192];
	uint8_t reply[128], *p;
	struct rpcrdma_clnt_call ca = {
		.ca_prog = 100003, .ca_vers = 3, .ca_proc = 17,
		.ca_res = res, .ca_res_cap = sizeof(res),
	};
	uint64_t off = (uintptr_t)res;
	const uint32_t want[] = {
		0x100, 1, 4, RDMA_MSG, 0, 0,
		1, 1, 0xa001, 8192, (uint32_t)(off >> 32), (uint32_t)off, /* Reply chunk */
	};
	struct clnt_req *rl;

	*state = cl;
	assert_int_equal(clnt_call_start(cl, &ca, &rl), 0);
	assert_int_equal(fv.fv_sent_len, 48 + 40);
	assert_words(fv.fv_sent, want, 12);
	/* The Responder writes 100 bytes of reply into the chunk. */
	put_rpc_reply(res, rl->rl_xid, 0);
	memset(res + 24, 0x77, 76);
	p = put_rdma_hdr(reply, rl->rl_xid, 2, RDMA_NOMSG);
	p = put32(p, 0);
	p = put32(p, 0);
	p = put32(p, 1);
	p = put32(p, 1);
	p = put32(p, fv.fv_mrs[1].rkey);
	p = put32(p, 100);
	p = put32(p, (uint32_t)(off >> 32));
	p = put32(p, (uint32_t)off);
	deliver(cl, reply, (uint32_t)(p - reply));
	clnt_poll(cl);
	assert_int_equal(clnt_call_wait(cl, rl, 1000), 0);
	assert_int_equal(ca.ca_res_len, 100);
	assert_int_equal(ca.ca_res_off, 24);
	assert_int_equal(cl->cl_credits, 2);
	assert_int_equal(cl->cl_stats.cs_reply_chunks, 1);
	assert_int_equal(live_call_mrs(), 0);
}

struct starter {
	struct rpcrdma_clnt *cl;
	struct rpcrdma_clnt_call ca;
	struct clnt_req *rl;
	int rc;
	uint8_t res[64];
};

static void *start_thread(void *arg)
{
	struct starter *s = arg;

	s->rc = clnt_call_start(s->cl, &s->ca, &s->rl);
	return NULL;
}

/* Grants: 0 counts as 1, 1 is 1, a huge grant is our maximum (4); with
 * one credit a second call waits until the first is answered. */
static void test_grants(void **state)
{
	struct rpcrdma_clnt *cl = make_clnt(4096);
	static const uint32_t grants[] = { 0, 1, 0xffffffffu, 3 };
	static const uint32_t expect[] = { 1, 1, 4, 3 };
	uint8_t res[64], reply[64];
	struct rpcrdma_clnt_call ca = { .ca_prog = 1, .ca_vers = 1, .ca_res = res,
					.ca_res_cap = sizeof(res) };
	struct starter s = { .cl = cl };
	struct clnt_req *rl;
	pthread_t t;
	unsigned i;

	*state = cl;
	assert_int_equal(cl->cl_credits, 1); /* before any reply */
	for (i = 0; i < 4; i++) {
		assert_int_equal(clnt_call_start(cl, &ca, &rl), 0);
		send_complete(IBV_WC_SUCCESS);
		deliver(cl, reply, build_inline_reply(reply, rl->rl_xid, grants[i], 0));
		clnt_poll(cl);
		assert_int_equal(clnt_call_wait(cl, rl, 1000), 0);
		assert_int_equal(cl->cl_credits, expect[i]);
	}

	/* Back to a grant of 0 (= 1): the second caller waits. */
	assert_int_equal(clnt_call_start(cl, &ca, &rl), 0);
	send_complete(IBV_WC_SUCCESS);
	deliver(cl, reply, build_inline_reply(reply, rl->rl_xid, 0, 0));
	clnt_poll(cl);
	assert_int_equal(clnt_call_wait(cl, rl, 1000), 0);
	assert_int_equal(cl->cl_credits, 1);

	assert_int_equal(clnt_call_start(cl, &ca, &rl), 0);
	s.ca = ca;
	s.ca.ca_res = s.res;
	fv.fv_nsends = 0;
	assert_int_equal(pthread_create(&t, NULL, start_thread, &s), 0);
	/* the second caller is waiting for a credit, and sent nothing */
	CLNT_WAIT_UNTIL(&cl->cl_lock, cl->cl_stats.cs_credit_waits == 1);
	assert_int_equal(fv.fv_nsends, 0); /* held back by the credit limit */
	send_complete(IBV_WC_SUCCESS);
	deliver(cl, reply, build_inline_reply(reply, rl->rl_xid, 0, 0));
	clnt_poll(cl);
	pthread_join(t, NULL);
	assert_int_equal(s.rc, 0);
	assert_int_equal(fv.fv_nsends, 1);
	assert_int_equal(clnt_call_wait(cl, rl, 1000), 0);
	send_complete(IBV_WC_SUCCESS);
	deliver(cl, reply, build_inline_reply(reply, s.rl->rl_xid, 1, 0));
	clnt_poll(cl);
	assert_int_equal(clnt_call_wait(cl, s.rl, 1000), 0);
	assert_int_equal(cl->cl_reqs_out, 0);
}

/* RDMA_ERROR fails only the call it names; a reply for an unknown xid is
 * dropped and its Receive reposted; a malformed header naming a pending
 * xid fails that call. */
static void test_rdma_error_and_unknown_xid(void **state)
{
	struct rpcrdma_clnt *cl = make_clnt(4096);
	uint8_t res1[64], res2[64], res3[64], reply[64], *p;
	struct rpcrdma_clnt_call c1 = { .ca_prog = 1, .ca_vers = 1, .ca_res = res1,
					.ca_res_cap = sizeof(res1) };
	struct rpcrdma_clnt_call c2 = c1, c3 = c1;
	struct clnt_req *r1, *r2, *r3;

	*state = cl;
	c2.ca_res = res2;
	c3.ca_res = res3;
	cl->cl_credits = 4;
	assert_int_equal(clnt_call_start(cl, &c1, &r1), 0);
	send_complete(IBV_WC_SUCCESS);
	assert_int_equal(clnt_call_start(cl, &c2, &r2), 0);
	send_complete(IBV_WC_SUCCESS);
	assert_int_equal(clnt_call_start(cl, &c3, &r3), 0);
	send_complete(IBV_WC_SUCCESS);
	assert_int_equal(cl->cl_outstanding, 3);

	/* RDMA_ERROR / ERR_CHUNK for the second call: 20 bytes. */
	p = reply;
	p = put32(p, r2->rl_xid);
	p = put32(p, 1);
	p = put32(p, 4);
	p = put32(p, RDMA_ERROR);
	p = put32(p, ERR_CHUNK);
	deliver(cl, reply, 20);
	/* ERR_VERS for an xid nobody sent: 28 bytes, dropped. */
	p = reply;
	p = put32(p, 0xdead);
	p = put32(p, 1);
	p = put32(p, 4);
	p = put32(p, RDMA_ERROR);
	p = put32(p, ERR_VERS);
	p = put32(p, 1);
	p = put32(p, 1);
	deliver(cl, reply, 28);
	/* An ordinary reply for an unknown xid: dropped too. */
	deliver(cl, reply, build_inline_reply(reply, 0xbeef, 4, 0));
	clnt_poll(cl);
	assert_int_equal(clnt_call_wait(cl, r2, 1000), -EIO);
	assert_int_equal(cl->cl_stats.cs_rdma_errors, 1);
	assert_int_equal(cl->cl_stats.cs_unknown_xid, 2);
	assert_int_equal(cl->cl_outstanding, 2);
	assert_int_equal(cl->cl_recvs_posted, 6);

	/* RDMA_ERROR with an unknown code still fails only its call. */
	p = reply;
	p = put32(p, r3->rl_xid);
	p = put32(p, 1);
	p = put32(p, 4);
	p = put32(p, RDMA_ERROR);
	p = put32(p, 77);
	deliver(cl, reply, 20);
	clnt_poll(cl);
	assert_int_equal(clnt_call_wait(cl, r3, 1000), -EIO);

	/* The first call is still pending and completes normally. */
	assert_int_equal(r1->rl_state, RL_PENDING);
	deliver(cl, reply, build_inline_reply(reply, r1->rl_xid, 4, 42));
	clnt_poll(cl);
	assert_int_equal(clnt_call_wait(cl, r1, 1000), 0);
	assert_int_equal(get32(res1 + 24), 42);
	assert_int_equal(cl->cl_outstanding, 0);
	assert_int_equal(cl->cl_reqs_out, 0);
}

/* A disconnect fails the pending call; its Send completion comes back
 * flushed afterwards and only then is the request back in the pool. */
static void test_send_flushed_on_disconnect(void **state)
{
	struct rpcrdma_clnt *cl = make_clnt(4096);
	uint8_t res[64];
	struct rpcrdma_clnt_call ca = { .ca_prog = 1, .ca_vers = 1, .ca_res = res,
					.ca_res_cap = sizeof(res) };
	struct clnt_req *rl;
	unsigned i;

	*state = cl;
	assert_int_equal(clnt_call_start(cl, &ca, &rl), 0);
	pthread_mutex_lock(&cl->cl_lock);
	clnt_disconnected(cl);
	pthread_mutex_unlock(&cl->cl_lock);
	assert_true(fv.fv_disconnected);
	assert_int_equal(clnt_call_wait(cl, rl, 1000), -ECONNRESET);
	assert_int_equal(cl->cl_reqs_out, 1);
	send_complete(IBV_WC_WR_FLUSH_ERR);
	for (i = 0; i < 6; i++) {
		struct clnt_recv *rr = take_recv();

		cq_push((uintptr_t)&rr->rr_cqe, IBV_WC_WR_FLUSH_ERR, IBV_WC_RECV, 0);
	}
	clnt_poll(cl);
	assert_int_equal(cl->cl_reqs_out, 0);
	assert_int_equal(cl->cl_recvs_posted, 0);
	/* Nothing is reposted on a dead connection, and new calls fail. */
	assert_int_equal(fv.fv_nrecv_posted, 6);
	assert_int_equal(clnt_call_start(cl, &ca, &rl), -ENOTCONN);
}

/* The Send and Reply completions run before post_send returns. */
static void test_completion_before_post_returns(void **state)
{
	struct rpcrdma_clnt *cl = make_clnt(4096);
	uint8_t res[64], reply[64];
	struct rpcrdma_clnt_call ca = { .ca_prog = 1, .ca_vers = 1, .ca_res = res,
					.ca_res_cap = sizeof(res) };
	struct clnt_req *rl;

	*state = cl;
	inl.cl = cl;
	inl.reply = reply;
	inl.reply_len = build_inline_reply(reply, 0x100, 2, 99);
	fv.fv_on_send = inline_answer;
	assert_int_equal(clnt_call_start(cl, &ca, &rl), 0);
	assert_int_equal(rl->rl_state, RL_DONE);
	assert_int_equal(rl->rl_owners, CLNT_OWNER_RPC);
	assert_int_equal(clnt_call_wait(cl, rl, 1000), 0);
	assert_int_equal(get32(res + 24), 99);
	assert_int_equal(cl->cl_reqs_out, 0);
	assert_int_equal(cl->cl_credits, 2);
}

/* A marshal failure (the Write chunk cannot be registered after the Read
 * chunk was) releases what it registered and gives the credit back. */
static void test_marshal_failure(void **state)
{
	struct rpcrdma_clnt *cl = make_clnt(1024);
	static uint8_t data[2000], rbuf[4096];
	uint8_t head[16] = { 0 }, res[64];
	struct rpcrdma_clnt_call ca = {
		.ca_prog = 1, .ca_vers = 1, .ca_args = head, .ca_args_len = 16,
		.ca_ddp = data, .ca_ddp_len = 2000, .ca_res = res, .ca_res_cap = sizeof(res),
		.ca_rddp = rbuf, .ca_rddp_cap = sizeof(rbuf),
	};
	struct clnt_req *rl;

	*state = cl;
	fv.fv_fail_reg_at = 3; /* pool, Read chunk, then the Write chunk fails */
	assert_int_equal(clnt_call_start(cl, &ca, &rl), -ENOMEM);
	assert_int_equal(fv.fv_nsends, 0);
	assert_int_equal(live_call_mrs(), 0);
	assert_int_equal(fv.fv_nderegs, 1);
	assert_int_equal(cl->cl_outstanding, 0);
	assert_int_equal(cl->cl_reqs_out, 0);
	/* Unaligned argument lengths are refused before anything happens. */
	ca.ca_args_len = 15;
	assert_int_equal(clnt_call_start(cl, &ca, &rl), -EINVAL);
}

/* A call with a Write chunk times out: the call returns -ETIMEDOUT with
 * its buffer deregistered, the connection is closed, and a late Reply for
 * it is dropped as an unknown xid. */
static void test_timeout_with_write_chunk(void **state)
{
	struct rpcrdma_clnt *cl = make_clnt(4096);
	static uint8_t data[4096];
	uint8_t res[64], reply[64];
	struct rpcrdma_clnt_call ca = {
		.ca_prog = 1, .ca_vers = 1, .ca_res = res, .ca_res_cap = sizeof(res),
		.ca_rddp = data, .ca_rddp_cap = sizeof(data),
	};
	struct clnt_req *rl;
	uint32_t xid;

	*state = cl;
	assert_int_equal(clnt_call_start(cl, &ca, &rl), 0);
	xid = rl->rl_xid;
	assert_int_equal(live_call_mrs(), 1);
	assert_int_equal(clnt_call_wait(cl, rl, 30), -ETIMEDOUT);
	assert_int_equal(live_call_mrs(), 0);
	assert_true(fv.fv_disconnected);
	assert_int_equal(cl->cl_stats.cs_timeouts, 1);
	assert_int_equal(cl->cl_outstanding, 0);
	deliver(cl, reply, build_inline_reply(reply, xid, 4, 0));
	send_complete(IBV_WC_WR_FLUSH_ERR);
	clnt_poll(cl);
	assert_int_equal(cl->cl_stats.cs_unknown_xid, 1);
	assert_int_equal(cl->cl_reqs_out, 0);
}

struct async_seen {
	unsigned calls;
	int status;
	uint32_t result;
};

static void async_done(struct rpcrdma_clnt_call *ca, int status, void *arg)
{
	struct async_seen *s = arg;
	unsigned i;

	s->calls++;
	s->status = status;
	if (!status)
		s->result = get32((uint8_t *)ca->ca_res + ca->ca_res_off);
	/* This call's memory is out of the Responder's reach before we are told. */
	for (i = 1; i < FV_MAX_MR; i++)
		assert_false(fv.fv_mr_live[i] && (fv.fv_mrs[i].addr == ca->ca_res ||
					       fv.fv_mrs[i].addr == ca->ca_rddp));
}

/* Two asynchronous calls: one answered, one aborted (with its Write chunk
 * deregistered before its callback); the aborted call's late reply is
 * dropped; a third one times out. */
static void test_async_abort_timeout(void **state)
{
	struct rpcrdma_clnt *cl = make_clnt(4096);
	static uint8_t data[4096];
	uint8_t res1[64], res2[64], res3[64], reply[64];
	struct rpcrdma_clnt_call c1 = { .ca_prog = 1, .ca_vers = 1, .ca_res = res1,
					.ca_res_cap = sizeof(res1) };
	struct rpcrdma_clnt_call c2 = { .ca_prog = 1, .ca_vers = 1, .ca_res = res2,
					.ca_res_cap = sizeof(res2), .ca_rddp = data,
					.ca_rddp_cap = sizeof(data) };
	struct rpcrdma_clnt_call c3 = { .ca_prog = 1, .ca_vers = 1, .ca_res = res3,
					.ca_res_cap = sizeof(res3), .ca_timeout_ms = 10 };
	struct async_seen s1 = { 0 }, s2 = { 0 }, s3 = { 0 };
	uint64_t t0;
	uint32_t x1, x2, x3;

	*state = cl;
	cl->cl_credits = 4;
	assert_int_equal(rpcrdma_clnt_call_async(cl, &c1, async_done, &s1, &x1), 0);
	send_complete(IBV_WC_SUCCESS);
	assert_int_equal(rpcrdma_clnt_call_async(cl, &c2, async_done, &s2, &x2), 0);
	send_complete(IBV_WC_SUCCESS);
	assert_int_equal(x1, 0x100);
	assert_int_equal(x2, 0x101);
	assert_int_equal(live_call_mrs(), 1);
	assert_int_equal(cl->cl_outstanding, 2);

	deliver(cl, reply, build_inline_reply(reply, x1, 4, 1234));
	clnt_poll(cl);
	assert_int_equal(s1.calls, 1);
	assert_int_equal(s1.status, 0);
	assert_int_equal(s1.result, 1234);

	assert_int_equal(rpcrdma_clnt_abort(cl, x2), 0);
	assert_int_equal(s2.calls, 1);
	assert_int_equal(s2.status, -ECANCELED);
	assert_int_equal(rpcrdma_clnt_abort(cl, x2), -ENOENT);
	/* The server may still hold the aborted call: its credit stays
	 * taken until its reply comes (RFC 8166 3.3.1). */
	assert_int_equal(cl->cl_outstanding, 1);
	deliver(cl, reply, build_inline_reply(reply, x2, 4, 0));
	clnt_poll(cl);
	assert_int_equal(cl->cl_outstanding, 0);
	assert_int_equal(cl->cl_stats.cs_late_replies, 1);
	assert_int_equal(cl->cl_stats.cs_unknown_xid, 0);
	assert_int_equal(s2.calls, 1);

	/* c3's 10 ms: not timed out before them (checked only when the
	 * check ran within them: a slow machine may be past them), timed
	 * out once they have passed */
	t0 = clnt_fixture_ms();
	assert_int_equal(rpcrdma_clnt_call_async(cl, &c3, async_done, &s3, &x3), 0);
	send_complete(IBV_WC_SUCCESS);
	clnt_check_deadlines(cl);
	if (clnt_fixture_ms() < t0 + 10)
		assert_int_equal(s3.calls, 0); /* not yet */
	CLNT_WAIT_UNTIL(NULL,
			(clnt_check_deadlines(cl), s3.calls == 1));
	assert_true(clnt_fixture_ms() >= t0 + 10);
	assert_int_equal(s3.calls, 1);
	assert_int_equal(s3.status, -ETIMEDOUT);
	assert_true(fv.fv_disconnected);
	clnt_poll(cl);
	assert_int_equal(cl->cl_reqs_out, 0);
	assert_int_equal(cl->cl_rpc_busy, 0);
}

/* Three small calls (program 1, version 1, a 64-byte result each) for a
 * client with 4 credits in hand, and the requests they start. */
struct three_calls {
	uint8_t res[3][64];
	struct rpcrdma_clnt_call ca[3];
	struct clnt_req *rl[3];
};

/* make_clnt(4096), owned by *@state for teardown, with @t's calls ready. */
static struct rpcrdma_clnt *three_calls_clnt(void **state, struct three_calls *t)
{
	struct rpcrdma_clnt *cl = make_clnt(4096);
	unsigned i;

	*state = cl;
	cl->cl_credits = 4;
	for (i = 0; i < 3; i++)
		t->ca[i] = (struct rpcrdma_clnt_call){ .ca_prog = 1, .ca_vers = 1,
						       .ca_res = t->res[i], .ca_res_cap = 64 };
	return cl;
}

/* Sends are signalled once per half credit window (4 credits: every
 * 2nd); one completion releases every Send posted before it, in order. */
static void test_send_ring(void **state)
{
	struct three_calls t;
	struct rpcrdma_clnt *cl = three_calls_clnt(state, &t);
	struct clnt_req **rl = t.rl;
	uint8_t reply[64];
	unsigned i;

	for (i = 0; i < 3; i++)
		assert_int_equal(clnt_call_start(cl, &t.ca[i], &rl[i]), 0);
	assert_int_equal(fv.fv_send_flags[0], 0);
	assert_int_equal(fv.fv_send_flags[1], IBV_SEND_SIGNALED);
	assert_int_equal(fv.fv_send_flags[2], 0);
	for (i = 0; i < 3; i++) {
		deliver(cl, reply, build_inline_reply(reply, rl[i]->rl_xid, 4, i));
		clnt_poll(cl);
		assert_int_equal(clnt_call_wait(cl, rl[i], 1000), 0);
	}
	/* Replies are in; the Sends still hold all three requests. */
	assert_int_equal(cl->cl_reqs_out, 3);
	cq_push(fv.fv_send_ids[1], IBV_WC_SUCCESS, IBV_WC_SEND, 0);
	clnt_poll(cl);
	assert_int_equal(cl->cl_reqs_out, 1); /* the first two */
	assert_int_equal(cl->cl_sq_signaled, 0);
	/* Teardown releases the third, whose completion never comes. */
	release_sends(cl);
	assert_int_equal(cl->cl_reqs_out, 0);
}

/* The pool has a signalling interval of requests beyond the credits:
 * with every call's reply in but the last Sends still waiting for their
 * signalled completion, the whole credit window can be used again at
 * once, none of the calls waiting for a request (with one request per
 * credit, the third found none free). */
static void test_requests_beyond_credits(void **state)
{
	struct rpcrdma_clnt *cl = make_clnt(4096);
	uint8_t res[8][64], reply[64];
	struct rpcrdma_clnt_call ca[8];
	struct async_seen seen[4] = { { 0 } };
	struct clnt_req *rl[4];
	unsigned i;

	*state = cl;
	cl->cl_credits = 4;
	assert_int_equal(cl->cl_sq_every, 2);
	assert_int_equal(cl->cl_nreqs, 6);
	for (i = 0; i < 8; i++)
		ca[i] = (struct rpcrdma_clnt_call){ .ca_prog = 1, .ca_vers = 1,
						    .ca_res = res[i], .ca_res_cap = 64 };
	for (i = 0; i < 4; i++)
		assert_int_equal(clnt_call_start(cl, &ca[i], &rl[i]), 0);
	assert_int_equal(fv.fv_send_flags[1], IBV_SEND_SIGNALED);
	assert_int_equal(fv.fv_send_flags[3], IBV_SEND_SIGNALED);
	cq_push(fv.fv_send_ids[1], IBV_WC_SUCCESS, IBV_WC_SEND, 0);
	for (i = 0; i < 4; i++) {
		deliver(cl, reply, build_inline_reply(reply, rl[i]->rl_xid, 4, i));
		clnt_poll(cl);
		assert_int_equal(clnt_call_wait(cl, rl[i], 1000), 0);
	}
	assert_int_equal(cl->cl_outstanding, 0);
	assert_int_equal(cl->cl_reqs_out, 2); /* the last two wait for Send 3 */
	for (i = 0; i < 4; i++)
		assert_int_equal(rpcrdma_clnt_try_call_async(cl, &ca[4 + i], async_done,
							     &seen[i], NULL), 0);
	assert_int_equal(cl->cl_outstanding, 4);
	assert_int_equal(cl->cl_reqs_out, 6);
	drop_connection(cl);
	for (i = 0; i < 4; i++)
		assert_int_equal(seen[i].calls, 1);
	assert_int_equal(cl->cl_reqs_out, 0);
}

/* Queue sizes against the device's limits (worked out by hand): 1024
 * credits make a pool of 1536 requests (credits + credits/2), so a send
 * queue of 1536 + 4 and a receive queue of 1024 + 2; memory windows add
 * 1536 x 2 x 3 (a bind and a LOCAL_INV per chunk) = 9216 Sends. */
static void test_qp_size_fits_device(void **state)
{
	struct rpcrdma_clnt_config cfg = {
		.cf_max_credits = 1024,
		.cf_inline_size = 4096,
		.cf_auth_none = true,
		.cf_log = stderr,
		.cf_reg = RPCRDMA_CLNT_REG_WINDOWS,
	};
	struct rpcrdma_clnt *cl = calloc(1, sizeof(*cl));
	struct ibv_device_attr dev = {
		.max_qp_wr = 16384,
		.max_cqe = 32767,
		.max_mw = 8192,
		.device_cap_flags = IBV_DEVICE_MEM_WINDOW_TYPE_2B,
	};
	uint32_t sq = 0, rq = 0;

	(void)state;
	assert_non_null(cl);
	assert_int_equal(clnt_init(cl, &cfg), 0);
	/* everything fits: windows on */
	assert_int_equal(clnt_qp_size(cl, &dev, &sq, &rq), 0);
	assert_true(cl->cl_mw_enabled);
	assert_int_equal(sq, 1540 + 9216);
	assert_int_equal(rq, 1026);
	/* windows' Sends beyond max_qp_wr: registration per call instead */
	dev.max_qp_wr = 8192;
	assert_int_equal(clnt_qp_size(cl, &dev, &sq, &rq), 0);
	assert_false(cl->cl_mw_enabled);
	assert_int_equal(sq, 1540);
	assert_int_equal(rq, 1026);
	/* ... or beyond the CQ (10756 + 1026 > 11000) */
	dev.max_qp_wr = 16384;
	dev.max_cqe = 11000;
	assert_int_equal(clnt_qp_size(cl, &dev, &sq, &rq), 0);
	assert_false(cl->cl_mw_enabled);
	assert_int_equal(sq, 1540);
	/* ... or more windows (3 per request: 4608) than the device has */
	dev.max_cqe = 32767;
	dev.max_mw = 4096;
	assert_int_equal(clnt_qp_size(cl, &dev, &sq, &rq), 0);
	assert_false(cl->cl_mw_enabled);
	assert_int_equal(sq, 1540);
	dev.max_mw = 4608;
	assert_int_equal(clnt_qp_size(cl, &dev, &sq, &rq), 0);
	assert_true(cl->cl_mw_enabled);
	assert_int_equal(sq, 1540 + 9216);
	/* no windows on the device: the same sizes */
	dev.max_cqe = 32767;
	dev.device_cap_flags = 0;
	assert_int_equal(clnt_qp_size(cl, &dev, &sq, &rq), 0);
	assert_false(cl->cl_mw_enabled);
	assert_int_equal(sq, 1540);
	/* the send queue beyond max_qp_wr (1540 > 1024; the receive queue,
	 * 1026, too): no connection */
	sq = rq = 7;
	dev.max_qp_wr = 1024;
	assert_int_equal(clnt_qp_size(cl, &dev, &sq, &rq), -EINVAL);
	assert_int_equal(sq, 7);
	/* both queues fit, the CQ does not (1540 + 1026 > 2048) */
	dev.max_qp_wr = 2048;
	dev.max_cqe = 2048;
	assert_int_equal(clnt_qp_size(cl, &dev, &sq, &rq), -EINVAL);
	dev.max_cqe = 2566;
	assert_int_equal(clnt_qp_size(cl, &dev, &sq, &rq), 0);
	assert_int_equal(sq + rq, 2566);
	clnt_free(cl);
}

/* A registered buffer: a Write chunk inside it borrows its registration
 * (no per-call reg_mr); it cannot be unregistered while a call uses it. */
static void test_registered_buffer(void **state)
{
	struct rpcrdma_clnt *cl = make_clnt(4096);
	static uint8_t data[16384];
	uint8_t res[64], reply[96], *p;
	struct rpcrdma_clnt_call ca = {
		.ca_prog = 1, .ca_vers = 1, .ca_res = res, .ca_res_cap = sizeof(res),
		.ca_rddp = data + 4096, .ca_rddp_cap = 4096,
	};
	uint64_t off = (uintptr_t)(data + 4096);
	const uint32_t want[] = {
		0x100, 1, 4, RDMA_MSG, 0,
		1, 1, 0xa001, 4096, (uint32_t)(off >> 32), (uint32_t)off, 0, 0,
	};
	struct clnt_req *rl;
	unsigned regs;

	*state = cl;
	/* the default mode (windows) refuses without windows */
	assert_int_equal(rpcrdma_clnt_register_buffer(cl, data, sizeof(data)), -EOPNOTSUPP);
	cl->cl_cfg.cf_reg = RPCRDMA_CLNT_REG_PERSISTENT;
	assert_int_equal(rpcrdma_clnt_register_buffer(cl, data, sizeof(data)), 0);
	assert_int_equal(fv.fv_mr_access[1], IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ |
			 IBV_ACCESS_REMOTE_WRITE);
	assert_int_equal(rpcrdma_clnt_register_buffer(cl, data + 100, 10), -EINVAL);
	regs = fv.fv_nregs;
	assert_int_equal(clnt_call_start(cl, &ca, &rl), 0);
	assert_int_equal(fv.fv_nregs, regs); /* nothing registered for the call */
	assert_words(fv.fv_sent, want, 13);
	assert_int_equal(rpcrdma_clnt_unregister_buffer(cl, data), -EBUSY);
	p = put_rdma_hdr(reply, 0x100, 4, RDMA_MSG);
	p = put32(p, 0);
	p = put32(p, 1);
	p = put32(p, 1);
	p = put32(p, 0xa001);
	p = put32(p, 10);
	p = put32(p, (uint32_t)(off >> 32));
	p = put32(p, (uint32_t)off);
	p = put32(p, 0);
	p = put32(p, 0);
	p = put_rpc_reply(p, 0x100, 0);
	send_complete(IBV_WC_SUCCESS);
	deliver(cl, reply, (uint32_t)(p - reply));
	clnt_poll(cl);
	assert_int_equal(clnt_call_wait(cl, rl, 1000), 0);
	assert_int_equal(ca.ca_rddp_len, 10);
	assert_int_equal(live_call_mrs(), 1); /* the buffer stays registered */
	assert_int_equal(cl->cl_stats.cs_reg_persistent, 1);
	assert_int_equal(rpcrdma_clnt_unregister_buffer(cl, data), 0);
	assert_int_equal(live_call_mrs(), 0);
	assert_int_equal(rpcrdma_clnt_unregister_buffer(cl, data), -ENOENT);
}

/* Give every request of @cl fake type 2 windows from @mws (up to 8
 * requests), keys 0x5500 + 0x100 x request + 0x10 x chunk kind. */
static void fake_windows(struct rpcrdma_clnt *cl, struct ibv_mw (*mws)[CLNT_NMAPS])
{
	uint32_t i, j;

	assert_true(cl->cl_nreqs <= 8);
	cl->cl_mw_enabled = true;
	for (i = 0; i < cl->cl_nreqs; i++)
		for (j = 0; j < CLNT_NMAPS; j++) {
			mws[i][j].rkey = 0x5500 + 0x100 * i + 0x10 * j;
			cl->cl_reqs[i].rl_mw[j] = &mws[i][j];
			cl->cl_reqs[i].rl_mw_rkey[j] = mws[i][j].rkey;
			cl->cl_reqs[i].rl_inv_cqe.ce_type = CLNT_CQE_LINV;
		}
}

/* Take fake_windows()'s windows away again (fake: nothing to free). */
static void fake_windows_drop(struct rpcrdma_clnt *cl)
{
	uint32_t i, j;

	for (i = 0; i < cl->cl_nreqs; i++)
		for (j = 0; j < CLNT_NMAPS; j++)
			cl->cl_reqs[i].rl_mw[j] = NULL;
}

/* A reply to @rl whose Write list has one chunk of one segment (@key,
 * @len bytes written at @off), no Reply chunk, accept_stat SUCCESS. */
static uint32_t build_write_reply(uint8_t *reply, const struct clnt_req *rl, uint32_t key,
				  uint32_t len, uint64_t off)
{
	uint8_t *p = put_rdma_hdr(reply, rl->rl_xid, 1, RDMA_MSG);

	p = put32(p, 0);
	p = put32(p, 1);
	p = put32(p, 1);
	p = put32(p, key);
	p = put32(p, len);
	p = put32(p, (uint32_t)(off >> 32));
	p = put32(p, (uint32_t)off);
	p = put32(p, 0);
	p = put32(p, 0);
	p = put_rpc_reply(p, rl->rl_xid, 0);
	return (uint32_t)(p - reply);
}

/* Memory windows: a Write chunk inside a buffer registered for binding
 * only gets a type 2 window bound before the Send with a fresh key, and
 * the window is invalidated (LOCAL_INV, waited for) before the call
 * returns; the next call on the same request binds the next key. */
static void test_memory_window(void **state)
{
	struct rpcrdma_clnt *cl = make_clnt(4096);
	static struct ibv_mw mws[8][CLNT_NMAPS]; /* up to 8 requests */
	static uint8_t data[8192];
	uint8_t res[64], reply[96];
	struct rpcrdma_clnt_call ca = {
		.ca_prog = 1, .ca_vers = 1, .ca_res = res, .ca_res_cap = sizeof(res),
		.ca_rddp = data + 100, .ca_rddp_cap = 1000,
	};
	struct clnt_req *rl;
	uint32_t i, j, key;

	*state = cl;
	cl->cl_credits = 1;
	fake_windows(cl, mws);
	assert_int_equal(rpcrdma_clnt_register_buffer(cl, data, sizeof(data)), 0);
	/* registered for local access and binding only */
	assert_int_equal(fv.fv_mr_access[1], IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND);

	for (i = 0; i < 2; i++) {
		uint64_t off = (uintptr_t)(data + 100);

		assert_int_equal(clnt_call_start(cl, &ca, &rl), 0);
		j = (uint32_t)(rl - cl->cl_reqs);
		key = mws[j][1].rkey; /* updated to the bound key after the post */
		assert_int_equal(fv.fv_nbinds, i + 1);
		assert_ptr_equal(fv.fv_binds[i].mw, &mws[j][1]);
		assert_int_equal(fv.fv_binds[i].rkey, key);
		assert_int_equal(fv.fv_binds[i].bind_info.addr, off);
		assert_int_equal(fv.fv_binds[i].bind_info.length, 1000);
		assert_int_equal(fv.fv_binds[i].bind_info.mw_access_flags, IBV_ACCESS_REMOTE_WRITE);
		assert_ptr_equal(fv.fv_binds[i].bind_info.mr, &fv.fv_mrs[1]);
		/* the Write segment carries the window's key, not the MR's */
		assert_int_equal(get32(fv.fv_sent + 28), key);
		send_complete(IBV_WC_SUCCESS);
		deliver(cl, reply, build_write_reply(reply, rl, key, 7, off));
		clnt_poll(cl);
		assert_int_equal(clnt_call_wait(cl, rl, 1000), 0);
		assert_int_equal(ca.ca_rddp_len, 7);
		/* invalidated before the call returned */
		assert_int_equal(fv.fv_ninvs, i + 1);
		assert_int_equal(fv.fv_invs[i], key);
	}
	/* same request both times (credit 1, every Send signalled): the
	 * second bind used the next key of the same window */
	assert_int_equal(fv.fv_binds[1].rkey, ibv_inc_rkey(fv.fv_binds[0].rkey));
	assert_int_equal(cl->cl_stats.cs_mw_binds, 2);
	assert_int_equal(rpcrdma_clnt_unregister_buffer(cl, data), 0);
	fake_windows_drop(cl);
}

/* A buffer registered while windows were on (binding only, no remote
 * access), after a reconnect that dropped them (clnt_qp_size()): its
 * chunks are registered per call with remote access, never handed out
 * under the buffer's own handle. */
static void test_window_buffer_after_windows_dropped(void **state)
{
	struct rpcrdma_clnt *cl = make_clnt(4096);
	static struct ibv_mw mws[8][CLNT_NMAPS];
	static uint8_t data[8192];
	uint8_t res[64], reply[96];
	struct rpcrdma_clnt_call ca = {
		.ca_prog = 1, .ca_vers = 1, .ca_res = res, .ca_res_cap = sizeof(res),
		.ca_rddp = data + 100, .ca_rddp_cap = 1000,
	};
	struct clnt_req *rl;
	uint32_t key;
	uint64_t off = (uintptr_t)(data + 100);
	unsigned regs;

	*state = cl;
	cl->cl_credits = 1;
	fake_windows(cl, mws);
	assert_int_equal(rpcrdma_clnt_register_buffer(cl, data, sizeof(data)), 0);
	assert_int_equal(fv.fv_mr_access[1], IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND);
	/* as after a reconnect whose device could not hold the windows */
	cl->cl_mw_enabled = false;
	fake_windows_drop(cl);
	regs = fv.fv_nregs;
	assert_int_equal(clnt_call_start(cl, &ca, &rl), 0);
	assert_int_equal(fv.fv_nbinds, 0);
	assert_int_equal(fv.fv_nregs, regs + 1);      /* the chunk, for this call */
	assert_int_equal(fv.fv_mr_access[2], IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	key = fv.fv_mrs[2].rkey;
	assert_int_not_equal(key, fv.fv_mrs[1].rkey);
	assert_int_equal(get32(fv.fv_sent + 28), key); /* the Write segment's handle */
	assert_int_equal(cl->cl_stats.cs_reg_per_call, 1);
	assert_int_equal(cl->cl_stats.cs_reg_persistent, 0);
	send_complete(IBV_WC_SUCCESS);
	deliver(cl, reply, build_write_reply(reply, rl, key, 7, off));
	clnt_poll(cl);
	assert_int_equal(clnt_call_wait(cl, rl, 1000), 0);
	assert_int_equal(ca.ca_rddp_len, 7);
	assert_int_equal(fv.fv_nderegs, 1);           /* the per-call region went */
	assert_int_equal(rpcrdma_clnt_unregister_buffer(cl, data), 0);
}

/* Never trust the wire: a Write list naming another handle, RDMA_NOMSG
 * without a Reply chunk offered, an inline reply larger than the caller's
 * buffer, a Reply chunk length beyond the one offered: each fails only its
 * call, and every registration is released. */
static void test_bad_replies(void **state)
{
	struct rpcrdma_clnt *cl = make_clnt(4096);
	static uint8_t data[4096], big[8192];
	uint8_t res[32], reply[128], *p;
	struct rpcrdma_clnt_call wr = { .ca_prog = 1, .ca_vers = 1, .ca_res = res,
					.ca_res_cap = sizeof(res), .ca_rddp = data,
					.ca_rddp_cap = sizeof(data) };
	struct rpcrdma_clnt_call small = { .ca_prog = 1, .ca_vers = 1, .ca_res = res,
					   .ca_res_cap = sizeof(res) };
	struct rpcrdma_clnt_call rc = { .ca_prog = 1, .ca_vers = 1, .ca_res = big,
					.ca_res_cap = sizeof(big) };
	struct clnt_req *rl;
	unsigned i;

	*state = cl;
	/* 1: the Write list names handle 0xbad instead of 0xa001 */
	assert_int_equal(clnt_call_start(cl, &wr, &rl), 0);
	p = put_rdma_hdr(reply, rl->rl_xid, 1, RDMA_MSG);
	p = put32(p, 0);
	p = put32(p, 1);
	p = put32(p, 1);
	p = put32(p, 0xbad);
	p = put32(p, 4);
	p = put32(p, 0);
	p = put32(p, 0);
	p = put32(p, 0);
	p = put32(p, 0);
	p = put_rpc_reply(p, rl->rl_xid, 0);
	assert_int_equal(answer_call(cl, rl, reply, p), -EIO);

	/* 2: RDMA_NOMSG but no Reply chunk was offered */
	assert_int_equal(clnt_call_start(cl, &small, &rl), 0);
	p = put_rdma_hdr(reply, rl->rl_xid, 1, RDMA_NOMSG);
	p = put32(p, 0);
	p = put32(p, 0);
	p = put32(p, 1);
	p = put32(p, 1);
	p = put32(p, 0xa001);
	p = put32(p, 64);
	p = put32(p, 0);
	p = put32(p, 0);
	assert_int_equal(answer_call(cl, rl, reply, p), -EIO);

	/* 3: an inline reply of 24 + 40 bytes for a 32-byte buffer */
	assert_int_equal(clnt_call_start(cl, &small, &rl), 0);
	p = put_rdma_hdr(reply, rl->rl_xid, 1, RDMA_MSG);
	p = put32(p, 0);
	p = put32(p, 0);
	p = put32(p, 0);
	p = put_rpc_reply(p, rl->rl_xid, 0);
	for (i = 0; i < 10; i++)
		p = put32(p, i);
	assert_int_equal(answer_call(cl, rl, reply, p), -EMSGSIZE);

	/* 4: the Reply chunk comes back longer than offered (8192) */
	assert_int_equal(clnt_call_start(cl, &rc, &rl), 0);
	p = put_rdma_hdr(reply, rl->rl_xid, 1, RDMA_NOMSG);
	p = put32(p, 0);
	p = put32(p, 0);
	p = put32(p, 1);
	p = put32(p, 1);
	p = put32(p, fv.fv_mrs[1].rkey);
	p = put32(p, 8196);
	p = put32(p, 0);
	p = put32(p, 0);
	assert_int_equal(answer_call(cl, rl, reply, p), -EIO);

	assert_int_equal(live_call_mrs(), 0);
	assert_int_equal(cl->cl_reqs_out, 0);
	assert_int_equal(cl->cl_outstanding, 0);
	assert_int_equal(cl->cl_recvs_posted, 6);
}

/* Regression (found by test_clnt_faults, profile post-send-fail-10): the
 * Send whose post fails was the one due to be signalled; the next Send is
 * signalled in its place, or unsignalled Sends pile up until no request is
 * free and no completion ever comes. */
static void test_send_post_failure_keeps_signalling(void **state)
{
	struct three_calls t;
	struct rpcrdma_clnt *cl = three_calls_clnt(state, &t);
	struct clnt_req **rl = t.rl;
	uint8_t reply[64];

	assert_int_equal(clnt_call_start(cl, &t.ca[0], &rl[0]), 0);
	fv.fv_fail_send_post_at = fv.fv_send_post_calls + 1;
	assert_int_equal(clnt_call_start(cl, &t.ca[1], &rl[1]), -ENOMEM);
	assert_int_equal(cl->cl_reqs_out, 1);
	assert_int_equal(cl->cl_outstanding, 1);
	assert_int_equal(clnt_call_start(cl, &t.ca[2], &rl[2]), 0);
	assert_int_equal(fv.fv_nsends, 2);
	assert_int_equal(fv.fv_send_flags[0], 0);
	assert_int_equal(fv.fv_send_flags[1], IBV_SEND_SIGNALED);
	deliver(cl, reply, build_inline_reply(reply, rl[0]->rl_xid, 4, 1));
	deliver(cl, reply, build_inline_reply(reply, rl[2]->rl_xid, 4, 2));
	clnt_poll(cl);
	assert_int_equal(clnt_call_wait(cl, rl[0], 1000), 0);
	assert_int_equal(clnt_call_wait(cl, rl[2], 1000), 0);
	/* The one completion releases both Sends. */
	assert_int_equal(cl->cl_reqs_out, 2);
	cq_push(fv.fv_send_ids[1], IBV_WC_SUCCESS, IBV_WC_SEND, 0);
	clnt_poll(cl);
	assert_int_equal(cl->cl_reqs_out, 0);
	assert_int_equal(cl->cl_sq_signaled, 0);
}

/* Regression (found by test_clnt_faults, profile post-recv-fail-10): a
 * Receive that cannot be reposted closes the connection, so a pending call
 * fails instead of waiting forever for a reply with nowhere to land. */
static void test_recv_repost_failure_disconnects(void **state)
{
	struct rpcrdma_clnt *cl = make_clnt(4096);
	uint8_t res1[64], res2[64], reply[64];
	struct rpcrdma_clnt_call c1 = { .ca_prog = 1, .ca_vers = 1, .ca_res = res1,
					.ca_res_cap = sizeof(res1) };
	struct rpcrdma_clnt_call c2 = { .ca_prog = 1, .ca_vers = 1, .ca_res = res2,
					.ca_res_cap = sizeof(res2) };
	struct clnt_req *r1, *r2;

	*state = cl;
	cl->cl_credits = 4;
	assert_int_equal(clnt_call_start(cl, &c1, &r1), 0);
	assert_int_equal(clnt_call_start(cl, &c2, &r2), 0);
	fv.fv_fail_recv_post_at = fv.fv_recv_post_calls + 1;
	deliver(cl, reply, build_inline_reply(reply, r1->rl_xid, 4, 5));
	clnt_poll(cl);
	assert_int_equal(clnt_call_wait(cl, r1, 1000), 0); /* its reply was in */
	assert_int_equal(clnt_call_wait(cl, r2, 1000), -ECONNRESET);
	assert_true(fv.fv_disconnected);
	assert_false(cl->cl_connected);
	assert_int_equal(cl->cl_recvs_posted, 5);
}

/* A malformed reply naming a pending asynchronous call, whose Receive then
 * cannot be reposted: the call still ends exactly once. */
static void test_bad_reply_and_repost_failure(void **state)
{
	struct rpcrdma_clnt *cl = make_clnt(4096);
	uint8_t res[64], reply[12], *p = reply;
	struct rpcrdma_clnt_call ca = { .ca_prog = 1, .ca_vers = 1, .ca_res = res,
					.ca_res_cap = sizeof(res) };
	struct async_seen seen = { 0 };
	uint32_t xid;

	*state = cl;
	assert_int_equal(rpcrdma_clnt_call_async(cl, &ca, async_done, &seen, &xid), 0);
	p = put32(p, xid); /* 12 bytes: too short for a transport header */
	p = put32(p, 1);
	put32(p, 1);
	fv.fv_fail_recv_post_at = fv.fv_recv_post_calls + 1;
	deliver(cl, reply, sizeof(reply));
	clnt_poll(cl);
	assert_int_equal(seen.calls, 1);
	assert_true(seen.status < 0);
	assert_false(cl->cl_connected);
	assert_int_equal(cl->cl_outstanding, 0);
	assert_int_equal(cl->cl_rpc_busy, 0);
}

/* A batch (rpcrdma_clnt_batch_begin): the Sends of three asynchronous
 * calls are queued in Send-ring order and posted with one post_send (one
 * doorbell) at the end, signalled as if posted one by one; the replies
 * then complete them as usual. */
static void test_batch_one_post(void **state)
{
	struct three_calls t;
	struct rpcrdma_clnt *cl = three_calls_clnt(state, &t);
	struct async_seen seen[3] = { { 0 } };
	uint8_t reply[64];
	uint32_t xid[3];
	unsigned i, posts = fv.fv_send_post_calls;

	rpcrdma_clnt_batch_begin(cl);
	rpcrdma_clnt_batch_begin(cl); /* nested: the outer end posts */
	for (i = 0; i < 3; i++)
		assert_int_equal(rpcrdma_clnt_call_async(cl, &t.ca[i], async_done, &seen[i],
							 &xid[i]), 0);
	rpcrdma_clnt_batch_end(cl);
	assert_int_equal(fv.fv_send_post_calls, posts);
	assert_int_equal(fv.fv_nsends, 0);
	assert_int_equal(cl->cl_outstanding, 3); /* queued calls hold their credits */
	rpcrdma_clnt_batch_end(cl);
	assert_int_equal(fv.fv_send_post_calls, posts + 1);
	assert_int_equal(fv.fv_nsends, 3);
	for (i = 0; i < 3; i++)
		assert_int_equal(fv.fv_send_ids[i], (uintptr_t)&cl->cl_sq_ring[i]->rl_cqe);
	assert_int_equal(cl->cl_sq_ring[0]->rl_xid, xid[0]);
	assert_int_equal(cl->cl_sq_ring[2]->rl_xid, xid[2]);
	assert_int_equal(fv.fv_send_flags[0], 0);
	assert_int_equal(fv.fv_send_flags[1], IBV_SEND_SIGNALED);
	assert_int_equal(fv.fv_send_flags[2], 0);
	rpcrdma_clnt_batch_end(cl); /* unmatched: nothing */
	assert_int_equal(fv.fv_send_post_calls, posts + 1);

	for (i = 0; i < 3; i++)
		deliver(cl, reply, build_inline_reply(reply, xid[i], 4, 10 + i));
	cq_push(fv.fv_send_ids[1], IBV_WC_SUCCESS, IBV_WC_SEND, 0);
	clnt_poll(cl);
	for (i = 0; i < 3; i++) {
		assert_int_equal(seen[i].calls, 1);
		assert_int_equal(seen[i].status, 0);
		assert_int_equal(seen[i].result, 10 + i);
	}
	release_sends(cl);
	assert_int_equal(cl->cl_reqs_out, 0);
}

/* A callback that starts the next call with rpcrdma_clnt_try_call_async(). */
struct restart {
	struct async_seen seen;
	struct rpcrdma_clnt *cl;
	struct rpcrdma_clnt_call *next;
	struct async_seen *next_seen;
	int rc;
	uint32_t xid;
	unsigned posts_seen; /* post_send calls made when the callback ran */
};

static void restart_done(struct rpcrdma_clnt_call *ca, int status, void *arg)
{
	struct restart *r = arg;

	async_done(ca, status, &r->seen);
	r->posts_seen = fv.fv_send_post_calls;
	r->rc = rpcrdma_clnt_try_call_async(r->cl, r->next, async_done, r->next_seen, &r->xid);
}

/* rpcrdma_clnt_try_call_async() never waits: with the credit window full
 * it says -EAGAIN at once and sends nothing; from a completion callback
 * it takes the credit the finished call gave back, and the calls the
 * callbacks of one wake-up start go out with one post after them; with no
 * connection and none coming, -ENOTCONN. */
static void test_try_call_async(void **state)
{
	struct three_calls t;
	struct rpcrdma_clnt *cl = three_calls_clnt(state, &t);
	uint8_t res[2][64], reply[64];
	struct rpcrdma_clnt_call next[2] = {
		{ .ca_prog = 1, .ca_vers = 1, .ca_res = res[0], .ca_res_cap = 64 },
		{ .ca_prog = 1, .ca_vers = 1, .ca_res = res[1], .ca_res_cap = 64 },
	};
	struct async_seen seen3 = { 0 }, next_seen[2] = { { 0 } };
	struct restart r[2];
	uint32_t xid[2], x3 = 0;
	unsigned i, posts, sends;

	cl->cl_credits = 2;
	for (i = 0; i < 2; i++) {
		r[i] = (struct restart){ .cl = cl, .next = &next[i], .next_seen = &next_seen[i],
					 .rc = 1 };
		assert_int_equal(rpcrdma_clnt_try_call_async(cl, &t.ca[i], restart_done, &r[i],
							     &xid[i]), 0);
	}
	posts = fv.fv_send_post_calls;
	sends = fv.fv_nsends;
	/* window full: at once, nothing sent, no callback */
	assert_int_equal(rpcrdma_clnt_try_call_async(cl, &t.ca[2], async_done, &seen3, &x3),
			 -EAGAIN);
	assert_int_equal(fv.fv_send_post_calls, posts);
	assert_int_equal(fv.fv_nsends, sends);
	assert_int_equal(seen3.calls, 0);
	assert_int_equal(x3, 0);
	assert_int_equal(cl->cl_outstanding, 2);

	/* both replies in one wake-up: each callback starts a call */
	for (i = 0; i < 2; i++)
		deliver(cl, reply, build_inline_reply(reply, xid[i], 4, 20 + i));
	clnt_poll(cl);
	for (i = 0; i < 2; i++) {
		assert_int_equal(r[i].seen.calls, 1);
		assert_int_equal(r[i].seen.status, 0);
		assert_int_equal(r[i].seen.result, 20 + i);
		assert_int_equal(r[i].rc, 0);
		assert_int_equal(r[i].posts_seen, posts); /* queued, not posted, in the callback */
	}
	assert_int_equal(fv.fv_send_post_calls, posts + 1); /* one post after the callbacks */
	assert_int_equal(fv.fv_nsends, sends + 2);
	assert_int_equal(cl->cl_outstanding, 2);
	assert_int_not_equal(r[0].xid, r[1].xid);
	for (i = 0; i < 2; i++)
		deliver(cl, reply, build_inline_reply(reply, r[i].xid, 4, 30 + i));
	clnt_poll(cl);
	for (i = 0; i < 2; i++) {
		assert_int_equal(next_seen[i].calls, 1);
		assert_int_equal(next_seen[i].result, 30 + i);
	}
	/* no connection and none coming (no connect worker) */
	cl->cl_connected = false;
	assert_int_equal(rpcrdma_clnt_try_call_async(cl, &t.ca[2], async_done, &seen3, &x3),
			 -ENOTCONN);
	assert_int_equal(seen3.calls, 0);
	release_sends(cl);
	assert_int_equal(cl->cl_reqs_out, 0);
	assert_int_equal(cl->cl_outstanding, 0);
}

/* A caller outside any callback whose rpcrdma_clnt_try_call_async() finds
 * the window full while its own batch holds queued Sends: those Sends go
 * out before -EAGAIN returns, since the credits it waits for come back
 * only with their replies (else it would try forever). */
static void test_try_call_async_eagain_posts_own_batch(void **state)
{
	struct three_calls t;
	struct rpcrdma_clnt *cl = three_calls_clnt(state, &t);
	struct async_seen seen[3] = { { 0 } };
	uint8_t reply[64];
	uint32_t xid[3];
	unsigned i, posts = fv.fv_send_post_calls;

	cl->cl_credits = 2;
	rpcrdma_clnt_batch_begin(cl);
	for (i = 0; i < 2; i++)
		assert_int_equal(rpcrdma_clnt_try_call_async(cl, &t.ca[i], async_done, &seen[i],
							     &xid[i]), 0);
	assert_int_equal(fv.fv_nsends, 0); /* queued */
	assert_int_equal(rpcrdma_clnt_try_call_async(cl, &t.ca[2], async_done, &seen[2],
						     &xid[2]), -EAGAIN);
	assert_int_equal(fv.fv_send_post_calls, posts + 1); /* the two, in one post */
	assert_int_equal(fv.fv_nsends, 2);
	assert_int_equal(cl->cl_sq_ring[0]->rl_xid, xid[0]);
	assert_int_equal(cl->cl_sq_ring[1]->rl_xid, xid[1]);
	/* their replies give the credit back: the third goes (still in the
	 * batch: queued until the end) */
	deliver(cl, reply, build_inline_reply(reply, xid[0], 2, 7));
	clnt_poll(cl);
	assert_int_equal(seen[0].calls, 1);
	assert_int_equal(seen[0].result, 7);
	assert_int_equal(rpcrdma_clnt_try_call_async(cl, &t.ca[2], async_done, &seen[2],
						     &xid[2]), 0);
	assert_int_equal(fv.fv_nsends, 2);
	rpcrdma_clnt_batch_end(cl);
	assert_int_equal(fv.fv_nsends, 3);
	assert_int_equal(cl->cl_sq_ring[2]->rl_xid, xid[2]);
	drop_connection(cl);
	assert_int_equal(seen[1].calls, 1);
	assert_int_equal(seen[1].status, -ECONNRESET);
	assert_int_equal(seen[2].calls, 1);
	assert_int_equal(cl->cl_reqs_out, 0);
}

/* A batch whose connection goes before it is posted: its signalled Send
 * will never complete, so it is not awaited (rpcrdma_clnt_destroy() waits
 * for the awaited ones, up to its bound). */
static void test_batch_dropped_by_disconnect_not_awaited(void **state)
{
	struct three_calls t;
	struct rpcrdma_clnt *cl = three_calls_clnt(state, &t);
	struct async_seen seen[2] = { { 0 } };
	uint32_t xid[2], signaled;
	unsigned i, posts = fv.fv_send_post_calls;
	bool drained;

	rpcrdma_clnt_batch_begin(cl);
	for (i = 0; i < 2; i++)
		assert_int_equal(rpcrdma_clnt_call_async(cl, &t.ca[i], async_done, &seen[i],
							 &xid[i]), 0);
	assert_int_equal(cl->cl_sq_signaled, 1); /* the second of 4 requests' ring */
	pthread_mutex_lock(&cl->cl_lock);
	clnt_disconnected(cl);
	signaled = cl->cl_sq_signaled;
	cl->cl_recvs_posted = 0; /* (their flushes, which the fake device does not make) */
	drained = clnt_drained(cl);
	pthread_mutex_unlock(&cl->cl_lock);
	assert_int_equal(signaled, 0);
	assert_true(drained);
	rpcrdma_clnt_batch_end(cl);
	assert_int_equal(fv.fv_send_post_calls, posts); /* never posted */
	for (i = 0; i < 2; i++) {
		assert_int_equal(seen[i].calls, 1);
		assert_int_equal(seen[i].status, -ECONNRESET);
	}
	release_sends(cl);
	assert_int_equal(cl->cl_reqs_out, 0);
}

/* A callback of one client that starts a call on another: the other
 * client's calls that ended meanwhile get their callbacks there and then,
 * as when any thread starts a call (only a client's own callbacks skip
 * that, their clnt_run_done() picking those calls up). */
struct cross {
	struct async_seen seen;
	struct rpcrdma_clnt *other;
	struct rpcrdma_clnt_call *ca;
	struct async_seen *other_seen;
	int rc;
};

/* A second client on the fake device, connected, 4 credits, its xids
 * from @first_xid (make_clnt's Receive count check is for the first). */
static struct rpcrdma_clnt *second_clnt(uint32_t first_xid)
{
	struct rpcrdma_clnt_config cfg = { .cf_max_credits = 4, .cf_inline_size = 4096,
					   .cf_auth_none = true, .cf_log = stderr };
	struct rpcrdma_clnt *b = clnt_fixture_new(&cfg);

	assert_int_equal(clnt_post_all_recvs(b), 0);
	clnt_fixture_set_peer(b, 4096, 4096);
	b->cl_connected = true;
	b->cl_credits = 4;
	b->cl_next_xid = first_xid;
	return b;
}

/* @cl's Receive @rr brings an inline reply to @xid (result @result),
 * handled as the completion side does (not through the CQ): the call
 * ends, its callback waits for a clnt_run_done(). */
static void reply_now(struct rpcrdma_clnt *cl, struct clnt_recv *rr, uint32_t xid,
		      uint32_t result)
{
	struct ibv_wc wc = { .status = IBV_WC_SUCCESS, .opcode = IBV_WC_RECV };

	wc.byte_len = build_inline_reply(rr->rr_buf, xid, 4, result);
	wc.wr_id = (uintptr_t)&rr->rr_cqe;
	pthread_mutex_lock(&cl->cl_lock);
	clnt_handle_wc(cl, &wc);
	pthread_mutex_unlock(&cl->cl_lock);
}

static void cross_done(struct rpcrdma_clnt_call *ca, int status, void *arg)
{
	struct cross *x = arg;

	async_done(ca, status, &x->seen);
	x->rc = rpcrdma_clnt_try_call_async(x->other, x->ca, async_done, x->other_seen, NULL);
}

static void test_callback_starts_call_on_other_client(void **state)
{
	struct three_calls t;
	struct rpcrdma_clnt *a = three_calls_clnt(state, &t), *b;
	struct async_seen b_seen[2] = { { 0 } };
	struct cross x = { .ca = &t.ca[2], .other_seen = &b_seen[1], .rc = 1 };
	uint8_t reply[64];
	uint32_t xa, xb;

	/* a's call, its reply waiting on the CQ */
	assert_int_equal(rpcrdma_clnt_try_call_async(a, &t.ca[0], cross_done, &x, &xa), 0);
	deliver(a, reply, build_inline_reply(reply, xa, 4, 1));

	b = second_clnt(0x900);
	x.other = b;
	/* b's call ends (its reply handled) without its callback run yet */
	assert_int_equal(rpcrdma_clnt_call_async(b, &t.ca[1], async_done, &b_seen[0], &xb), 0);
	reply_now(b, &b->cl_recvs[0], xb, 2);
	assert_int_equal(b_seen[0].calls, 0);

	clnt_poll(a); /* a's callback starts a call on b */
	assert_int_equal(x.seen.calls, 1);
	assert_int_equal(x.rc, 0);
	assert_int_equal(b_seen[0].calls, 1); /* b's ended call reported there */
	assert_int_equal(b_seen[0].result, 2);

	drop_connection(b);
	assert_int_equal(b_seen[1].calls, 1);
	assert_int_equal(b->cl_reqs_out, 0);
	clnt_free(b);
	release_sends(a);
	assert_int_equal(a->cl_reqs_out, 0);
}

/* Callbacks across two clients, three deep: a's callback starts a call on
 * b, whose ended call's callback (run there) ends a call of a and starts
 * another on a.  a's ended call is reported after a's running callback
 * returns, never inside it: a client's callbacks do not nest, however
 * the threads' calls interleave the clients. */
static unsigned nest_depth;

struct nest {
	unsigned depth_seen;  /* nest_depth when the callback began */
	unsigned calls;
	struct rpcrdma_clnt *start_on;     /* (optional) try a call on it */
	struct rpcrdma_clnt_call *start_ca;
	struct nest *start_arg;
	struct rpcrdma_clnt *end_on;       /* (optional) end a call of it first */
	struct clnt_recv *end_rr;
	uint32_t end_xid;
	int rc;
};

static void nest_done(struct rpcrdma_clnt_call *ca, int status, void *arg)
{
	struct nest *n = arg;

	(void)ca;
	(void)status;
	n->depth_seen = nest_depth++;
	n->calls++;
	if (n->end_on)
		reply_now(n->end_on, n->end_rr, n->end_xid, 9);
	if (n->start_on)
		n->rc = rpcrdma_clnt_try_call_async(n->start_on, n->start_ca, nest_done,
						    n->start_arg, NULL);
	nest_depth--;
}

static void test_callbacks_do_not_nest_across_clients(void **state)
{
	struct three_calls t, u;
	struct rpcrdma_clnt *a = three_calls_clnt(state, &t), *b;
	struct nest a0 = { .rc = 1 }, a1 = { 0 }, a2 = { 0 }, b0 = { .rc = 1 }, b1 = { 0 };
	uint8_t reply[64];
	uint32_t x_a0, x_a1, x_b0;
	unsigned i;

	for (i = 0; i < 3; i++)
		u.ca[i] = (struct rpcrdma_clnt_call){ .ca_prog = 1, .ca_vers = 1,
						      .ca_res = u.res[i], .ca_res_cap = 64 };
	b = second_clnt(0x900);
	assert_int_equal(rpcrdma_clnt_try_call_async(a, &t.ca[0], nest_done, &a0, &x_a0), 0);
	assert_int_equal(rpcrdma_clnt_try_call_async(a, &t.ca[1], nest_done, &a1, &x_a1), 0);
	assert_int_equal(rpcrdma_clnt_try_call_async(b, &u.ca[0], nest_done, &b0, &x_b0), 0);
	reply_now(b, &b->cl_recvs[0], x_b0, 1); /* b0 ended, not yet reported */
	deliver(a, reply, build_inline_reply(reply, x_a0, 4, 2));
	/* a0's callback starts b1 on b, which reports b0; b0's callback ends
	 * a1 and starts a2 on a */
	a0.start_on = b;
	a0.start_ca = &u.ca[1];
	a0.start_arg = &b1;
	b0.end_on = a;
	b0.end_rr = take_recv();
	b0.end_xid = x_a1;
	b0.start_on = a;
	b0.start_ca = &t.ca[2];
	b0.start_arg = &a2;

	clnt_poll(a);
	assert_int_equal(a0.calls, 1);
	assert_int_equal(a0.rc, 0);
	assert_int_equal(b0.calls, 1);
	assert_int_equal(b0.depth_seen, 1); /* b's, inside a's: allowed */
	assert_int_equal(b0.rc, 0);
	assert_int_equal(a1.calls, 1);
	assert_int_equal(a1.depth_seen, 0); /* after a0's callback, not inside it */
	assert_int_equal(nest_depth, 0);

	drop_connection(a);
	drop_connection(b);
	assert_int_equal(a2.calls, 1);
	assert_int_equal(b1.calls, 1);
	assert_int_equal(a->cl_reqs_out, 0);
	assert_int_equal(b->cl_reqs_out, 0);
	clnt_free(b);
}

/* A post made outside the batch (here a synchronous call by the same
 * thread) sends the queued Sends first, so the Send ring stays in posting
 * order: a signalled Send's completion releases only Sends before it. */
static void test_batch_flushed_before_other_post(void **state)
{
	struct three_calls t;
	struct rpcrdma_clnt *cl = three_calls_clnt(state, &t);
	struct async_seen seen[2] = { { 0 } };
	uint32_t xid[2];
	struct clnt_req *rl;
	unsigned posts = fv.fv_send_post_calls;

	rpcrdma_clnt_batch_begin(cl);
	assert_int_equal(rpcrdma_clnt_call_async(cl, &t.ca[0], async_done, &seen[0], &xid[0]), 0);
	assert_int_equal(rpcrdma_clnt_call_async(cl, &t.ca[1], async_done, &seen[1], &xid[1]), 0);
	assert_int_equal(fv.fv_nsends, 0);
	assert_int_equal(clnt_call_start(cl, &t.ca[2], &rl), 0);
	assert_int_equal(fv.fv_send_post_calls, posts + 2);
	assert_int_equal(fv.fv_nsends, 3);
	assert_int_equal(fv.fv_send_ids[0], (uintptr_t)&cl->cl_sq_ring[0]->rl_cqe);
	assert_int_equal(cl->cl_sq_ring[0]->rl_xid, xid[0]);
	assert_int_equal(cl->cl_sq_ring[1]->rl_xid, xid[1]);
	assert_int_equal(fv.fv_send_ids[2], (uintptr_t)&rl->rl_cqe);
	rpcrdma_clnt_batch_end(cl); /* nothing left to post */
	assert_int_equal(fv.fv_send_post_calls, posts + 2);
	pthread_mutex_lock(&cl->cl_lock);
	clnt_disconnected(cl);
	pthread_mutex_unlock(&cl->cl_lock);
	clnt_run_done(cl);
	assert_int_equal(seen[0].status, -ECONNRESET);
	assert_int_equal(seen[1].status, -ECONNRESET);
	assert_int_equal(clnt_call_wait(cl, rl, 1000), -ECONNRESET);
	release_sends(cl);
	assert_int_equal(cl->cl_reqs_out, 0);
}

struct batch_grant {
	struct rpcrdma_clnt *bg_cl;
	unsigned bg_sends;    /* Sends posted before the grant is raised */
};

/* Raise the credit window to @credits and wake the callers waiting for one. */
static void grant_credits(struct rpcrdma_clnt *cl, uint32_t credits)
{
	pthread_mutex_lock(&cl->cl_lock);
	cl->cl_credits = credits;
	pthread_cond_broadcast(&cl->cl_slot_cond);
	pthread_mutex_unlock(&cl->cl_lock);
}

/* Raise the grant once the queued Sends are on the wire: a caller that
 * waited for a credit with its batch unposted would never get here. */
static void *batch_grant_thread(void *arg)
{
	struct batch_grant *bg = arg;

	/* (posts are made under the client's lock: read the count under it) */
	CLNT_WAIT_UNTIL(&bg->bg_cl->cl_lock, fv.fv_nsends >= bg->bg_sends);
	grant_credits(bg->bg_cl, 3);
	return NULL;
}

/* A call of the batch that must wait for a credit posts the queued Sends
 * first: their credits come back only with their replies, which their
 * Sends must be posted to bring. */
static void test_batch_flushed_before_credit_wait(void **state)
{
	struct three_calls t;
	struct rpcrdma_clnt *cl = three_calls_clnt(state, &t);
	struct async_seen seen[3] = { { 0 } };
	struct batch_grant bg = { .bg_cl = cl, .bg_sends = 2 };
	pthread_t th;
	uint32_t xid[3];
	unsigned i;

	cl->cl_credits = 2;
	assert_int_equal(pthread_create(&th, NULL, batch_grant_thread, &bg), 0);
	rpcrdma_clnt_batch_begin(cl);
	for (i = 0; i < 3; i++)
		assert_int_equal(rpcrdma_clnt_call_async(cl, &t.ca[i], async_done, &seen[i],
							 &xid[i]), 0);
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_int_equal(cl->cl_stats.cs_credit_waits, 1);
	assert_int_equal(fv.fv_nsends, 2);
	rpcrdma_clnt_batch_end(cl);
	assert_int_equal(fv.fv_nsends, 3);
	assert_int_equal(fv.fv_send_ids[2], (uintptr_t)&cl->cl_sq_ring[2]->rl_cqe);
	drop_connection(cl);
	for (i = 0; i < 3; i++)
		assert_int_equal(seen[i].calls, 1);
	assert_int_equal(cl->cl_reqs_out, 0);
}

/* A thread of a batch that waits for a credit starts two calls. */
struct batch_waiter {
	struct rpcrdma_clnt *bw_cl;
	struct rpcrdma_clnt_call *bw_ca;  /* two calls */
	struct async_seen bw_seen[2];
	int bw_rc[2];
	unsigned bw_sends_after_first;    /* fv_nsends when the first returned */
	unsigned bw_sends_before_end;     /* ... before its rpcrdma_clnt_batch_end() */
};

static void *batch_waiter_thread(void *arg)
{
	struct batch_waiter *bw = arg;
	unsigned i;

	rpcrdma_clnt_batch_begin(bw->bw_cl);
	for (i = 0; i < 2; i++) {
		bw->bw_rc[i] = rpcrdma_clnt_call_async(bw->bw_cl, &bw->bw_ca[i], async_done,
						       &bw->bw_seen[i], NULL);
		if (!i)
			bw->bw_sends_after_first = fv.fv_nsends;
	}
	bw->bw_sends_before_end = fv.fv_nsends;
	rpcrdma_clnt_batch_end(bw->bw_cl);
	return NULL;
}

/* Until the waiter's first call waits for a credit. */
static void wait_for_credit_waiter(struct rpcrdma_clnt *cl)
{
	CLNT_WAIT_UNTIL(&cl->cl_lock, cl->cl_stats.cs_credit_waits != 0);
}

/* A thread waiting for a credit does not hold its batch open meanwhile
 * (the completion thread's callbacks could not batch their calls, each
 * would be a post of its own), and takes it back after the wait: the
 * calls it starts then are queued until its rpcrdma_clnt_batch_end(). */
static void test_batch_given_up_while_waiting(void **state)
{
	struct three_calls t;
	struct rpcrdma_clnt *cl = three_calls_clnt(state, &t);
	struct async_seen seen0 = { 0 };
	struct batch_waiter bw = { .bw_cl = cl, .bw_ca = &t.ca[1] };
	pthread_t th;
	unsigned depth;

	cl->cl_credits = 1;
	assert_int_equal(rpcrdma_clnt_call_async(cl, &t.ca[0], async_done, &seen0, NULL), 0);
	assert_int_equal(fv.fv_nsends, 1);
	assert_int_equal(pthread_create(&th, NULL, batch_waiter_thread, &bw), 0);
	wait_for_credit_waiter(cl);
	pthread_mutex_lock(&cl->cl_lock);
	depth = cl->cl_batch_depth;
	pthread_mutex_unlock(&cl->cl_lock);
	grant_credits(cl, 3);
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_int_equal(depth, 0); /* given up for the wait */
	assert_int_equal(bw.bw_rc[0], 0);
	assert_int_equal(bw.bw_rc[1], 0);
	/* taken back: both of its calls queued, posted at its end */
	assert_int_equal(bw.bw_sends_after_first, 1);
	assert_int_equal(bw.bw_sends_before_end, 1);
	assert_int_equal(fv.fv_nsends, 3);
	assert_int_equal(cl->cl_batch_depth, 0);
	drop_connection(cl);
	assert_int_equal(seen0.calls + bw.bw_seen[0].calls + bw.bw_seen[1].calls, 3);
	assert_int_equal(cl->cl_reqs_out, 0);
}

/* Another thread opens a batch while the first waits for a credit: the
 * waiter cannot take its own back, so its calls after the wait are posted
 * at once (the other batch's queue first), its end posts nothing, and the
 * other thread's batch stays open and its own. */
static void test_batch_taken_while_waiting(void **state)
{
	struct three_calls t;
	struct rpcrdma_clnt *cl = three_calls_clnt(state, &t);
	struct async_seen seen0 = { 0 }, seen_mine = { 0 };
	uint8_t res[64];
	struct rpcrdma_clnt_call mine = { .ca_prog = 1, .ca_vers = 1, .ca_res = res,
					  .ca_res_cap = sizeof(res) };
	struct batch_waiter bw = { .bw_cl = cl, .bw_ca = &t.ca[1] };
	pthread_t th;

	cl->cl_credits = 1;
	assert_int_equal(rpcrdma_clnt_call_async(cl, &t.ca[0], async_done, &seen0, NULL), 0);
	assert_int_equal(pthread_create(&th, NULL, batch_waiter_thread, &bw), 0);
	wait_for_credit_waiter(cl);
	rpcrdma_clnt_batch_begin(cl); /* ours now */
	grant_credits(cl, 4);
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_int_equal(bw.bw_rc[0], 0);
	assert_int_equal(bw.bw_rc[1], 0);
	assert_int_equal(bw.bw_sends_after_first, 2); /* posted at once */
	assert_int_equal(bw.bw_sends_before_end, 3);
	assert_int_equal(fv.fv_nsends, 3);
	assert_int_equal(cl->cl_batch_depth, 1);
	assert_int_equal(rpcrdma_clnt_call_async(cl, &mine, async_done, &seen_mine, NULL), 0);
	assert_int_equal(fv.fv_nsends, 3); /* queued in our batch */
	rpcrdma_clnt_batch_end(cl);
	assert_int_equal(fv.fv_nsends, 4);
	drop_connection(cl);
	assert_int_equal(seen0.calls + bw.bw_seen[0].calls + bw.bw_seen[1].calls +
			 seen_mine.calls, 4);
	assert_int_equal(cl->cl_reqs_out, 0);
}

/* Queued Sends whose connection goes (or whose batched post fails) are
 * never posted on it: their calls end as lost with the connection, once,
 * and their requests come back when it is closed. */
static void test_batch_lost_with_connection(void **state)
{
	struct three_calls t;
	struct rpcrdma_clnt *cl = three_calls_clnt(state, &t);
	struct async_seen seen[3] = { { 0 } };
	uint32_t xid[3];
	unsigned posts = fv.fv_send_post_calls;

	rpcrdma_clnt_batch_begin(cl);
	assert_int_equal(rpcrdma_clnt_call_async(cl, &t.ca[0], async_done, &seen[0], &xid[0]), 0);
	pthread_mutex_lock(&cl->cl_lock);
	clnt_disconnected(cl);
	pthread_mutex_unlock(&cl->cl_lock);
	rpcrdma_clnt_batch_end(cl);
	assert_int_equal(fv.fv_send_post_calls, posts); /* never posted */
	assert_int_equal(seen[0].calls, 1);
	assert_int_equal(seen[0].status, -ECONNRESET);
	release_sends(cl);
	assert_int_equal(cl->cl_reqs_out, 0);

	/* A new connection; its batched post fails. */
	cl->cl_connected = true;
	cl->cl_outstanding = 0;
	rpcrdma_clnt_batch_begin(cl);
	assert_int_equal(rpcrdma_clnt_call_async(cl, &t.ca[1], async_done, &seen[1], &xid[1]), 0);
	assert_int_equal(rpcrdma_clnt_call_async(cl, &t.ca[2], async_done, &seen[2], &xid[2]), 0);
	assert_int_equal(cl->cl_sq_signaled, 1); /* one of the two Sends is signalled */
	fv.fv_fail_send_post_at = fv.fv_send_post_calls + 1;
	rpcrdma_clnt_batch_end(cl);
	assert_false(cl->cl_connected);
	/* Never posted, so never completed: not awaited by a destroy. */
	assert_int_equal(cl->cl_sq_signaled, 0);
	assert_int_equal(fv.fv_nsends, 0);
	assert_int_equal(seen[1].calls, 1);
	assert_int_equal(seen[1].status, -ECONNRESET);
	assert_int_equal(seen[2].calls, 1);
	assert_int_equal(seen[2].status, -ECONNRESET);
	assert_int_equal(cl->cl_outstanding, 0);
	release_sends(cl);
	assert_int_equal(cl->cl_reqs_out, 0);
	assert_int_equal(cl->cl_rpc_busy, 0);
}

/* The capture (cf_capture) records a Send when it is posted: a batch's
 * Sends when the batch goes out, and none that a failed post kept off
 * the wire, batched or not. */
static void test_capture_posted_sends_only(void **state)
{
	struct three_calls t;
	struct rpcrdma_clnt *cl = three_calls_clnt(state, &t);
	struct rpcrdma_capture_config cc = { 0 };
	struct rpcrdma_capture_stats st;
	struct rpcrdma_capture *cap;
	struct async_seen seen[3] = { { 0 } };
	char path[] = "/tmp/test_clnt_capXXXXXX";
	uint32_t xid[3];
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	close(fd);
	cc.cc_path = path;
	assert_int_equal(rpcrdma_capture_open(&cc, &cap), 0);
	cl->cl_cfg.cf_capture = cap;
	cl->cl_capture = calloc(1, sizeof(*cl->cl_capture));
	assert_non_null(cl->cl_capture);
	/* the endpoints clnt_capture_connected() takes from rdma_cm */
	((struct sockaddr_in *)&cl->cl_capture->ce_local)->sin_family = AF_INET;
	((struct sockaddr_in *)&cl->cl_capture->ce_peer)->sin_family = AF_INET;

	/* two queued, then posted together: two frames */
	rpcrdma_clnt_batch_begin(cl);
	assert_int_equal(rpcrdma_clnt_call_async(cl, &t.ca[0], async_done, &seen[0], &xid[0]), 0);
	assert_int_equal(rpcrdma_clnt_call_async(cl, &t.ca[1], async_done, &seen[1], &xid[1]), 0);
	rpcrdma_clnt_batch_end(cl);
	assert_int_equal(fv.fv_nsends, 2);

	/* a failed post, outside a batch: the call is not sent, no frame */
	fv.fv_fail_send_post_at = fv.fv_send_post_calls + 1;
	assert_int_not_equal(rpcrdma_clnt_call_async(cl, &t.ca[2], async_done, &seen[2], &xid[2]), 0);
	assert_int_equal(fv.fv_nsends, 2);

	/* a batch whose post fails: queued, never sent, no frame */
	rpcrdma_clnt_batch_begin(cl);
	assert_int_equal(rpcrdma_clnt_call_async(cl, &t.ca[2], async_done, &seen[2], &xid[2]), 0);
	fv.fv_fail_send_post_at = fv.fv_send_post_calls + 1;
	rpcrdma_clnt_batch_end(cl);
	assert_false(cl->cl_connected);
	assert_int_equal(seen[2].status, -ECONNRESET);
	assert_int_equal(fv.fv_nsends, 2);

	drop_connection(cl);
	cl->cl_cfg.cf_capture = NULL;
	rpcrdma_capture_close(cap, &st);
	unlink(path);
	assert_int_equal(st.cs_drops, 0);
	assert_int_equal(st.cs_frames, 2);
}

/* A queued call aborted before its batch is posted ends once with
 * -ECANCELED; its Send still goes out with the batch (it is in the Send
 * ring, in order) and its xid and credit stay until its reply, which is
 * then dropped without touching the caller's memory; the requests come
 * back once the Sends complete. */
static void test_batch_abort_queued(void **state)
{
	struct three_calls t;
	struct rpcrdma_clnt *cl = three_calls_clnt(state, &t);
	struct async_seen seen[2] = { { 0 } };
	uint8_t reply[64];
	uint32_t xid[2];
	unsigned posts = fv.fv_send_post_calls;

	rpcrdma_clnt_batch_begin(cl);
	assert_int_equal(rpcrdma_clnt_call_async(cl, &t.ca[0], async_done, &seen[0], &xid[0]), 0);
	assert_int_equal(rpcrdma_clnt_call_async(cl, &t.ca[1], async_done, &seen[1], &xid[1]), 0);
	assert_int_equal(rpcrdma_clnt_abort(cl, xid[0]), 0);
	assert_int_equal(seen[0].calls, 1);
	assert_int_equal(seen[0].status, -ECANCELED);
	assert_int_equal(rpcrdma_clnt_abort(cl, xid[0]), -ENOENT);
	assert_int_equal(fv.fv_nsends, 0);
	assert_int_equal(cl->cl_outstanding, 2);
	rpcrdma_clnt_batch_end(cl);
	assert_int_equal(fv.fv_send_post_calls, posts + 1);
	assert_int_equal(fv.fv_nsends, 2);
	memset(t.res[0], 0xee, 64);
	deliver(cl, reply, build_inline_reply(reply, xid[0], 4, 77));
	deliver(cl, reply, build_inline_reply(reply, xid[1], 4, 78));
	cq_push(fv.fv_send_ids[1], IBV_WC_SUCCESS, IBV_WC_SEND, 0);
	clnt_poll(cl);
	assert_int_equal(seen[0].calls, 1);
	assert_int_equal(t.res[0][0], 0xee); /* the late reply dropped */
	assert_int_equal(seen[1].calls, 1);
	assert_int_equal(seen[1].status, 0);
	assert_int_equal(seen[1].result, 78);
	assert_int_equal(cl->cl_outstanding, 0);
	assert_int_equal(cl->cl_reqs_out, 0);
}

struct batch_other {
	struct rpcrdma_clnt *bo_cl;
	struct rpcrdma_clnt_call *bo_ca;
	struct async_seen bo_seen;
	unsigned bo_sends;   /* Sends posted when its call returned */
};

/* Another thread while the batch is held: its begin does nothing, its
 * call is posted at once (with the holder's queued Sends before it), its
 * end leaves the holder's batch open. */
static void *batch_other_thread(void *arg)
{
	struct batch_other *bo = arg;
	uint32_t xid;

	rpcrdma_clnt_batch_begin(bo->bo_cl);
	assert_int_equal(rpcrdma_clnt_call_async(bo->bo_cl, bo->bo_ca, async_done,
						 &bo->bo_seen, &xid), 0);
	pthread_mutex_lock(&bo->bo_cl->cl_lock);
	bo->bo_sends = fv.fv_nsends;
	pthread_mutex_unlock(&bo->bo_cl->cl_lock);
	rpcrdma_clnt_batch_end(bo->bo_cl);
	rpcrdma_clnt_batch_end(bo->bo_cl); /* unmatched: nothing either */
	return NULL;
}

static void test_batch_other_thread(void **state)
{
	struct three_calls t;
	struct rpcrdma_clnt *cl = three_calls_clnt(state, &t);
	struct async_seen seen[2] = { { 0 } };
	struct batch_other bo = { .bo_cl = cl, .bo_ca = &t.ca[2] };
	uint32_t xid[2];
	pthread_t th;

	rpcrdma_clnt_batch_begin(cl);
	assert_int_equal(rpcrdma_clnt_call_async(cl, &t.ca[0], async_done, &seen[0], &xid[0]), 0);
	assert_int_equal(pthread_create(&th, NULL, batch_other_thread, &bo), 0);
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_int_equal(bo.bo_sends, 2); /* ours first, then its own */
	assert_int_equal(fv.fv_send_ids[0], (uintptr_t)&cl->cl_sq_ring[0]->rl_cqe);
	assert_int_equal(cl->cl_sq_ring[0]->rl_xid, xid[0]);
	/* still ours: the next call is queued */
	assert_int_equal(rpcrdma_clnt_call_async(cl, &t.ca[1], async_done, &seen[1], &xid[1]), 0);
	assert_int_equal(fv.fv_nsends, 2);
	rpcrdma_clnt_batch_end(cl);
	assert_int_equal(fv.fv_nsends, 3);
	assert_int_equal(cl->cl_sq_ring[2]->rl_xid, xid[1]);
	drop_connection(cl);
	assert_int_equal(seen[0].calls + seen[1].calls + bo.bo_seen.calls, 3);
	assert_int_equal(cl->cl_reqs_out, 0);
}

/* Another thread's call finds this thread's batch queued and posts it
 * first; that post fails and closes the connection: its call returns
 * -ENOTCONN, and the queued call that the failure ended has had its
 * callback by then (not at the completion thread's next wake-up). */
struct failed_flush {
	struct rpcrdma_clnt *ff_cl;
	struct rpcrdma_clnt_call *ff_ca;
	struct async_seen ff_seen;
	struct async_seen *ff_queued;  /* the batch holder's call */
	int ff_rc;
	unsigned ff_queued_calls;      /* its callbacks when ff_rc came */
};

static void *failed_flush_thread(void *arg)
{
	struct failed_flush *ff = arg;

	ff->ff_rc = rpcrdma_clnt_call_async(ff->ff_cl, ff->ff_ca, async_done, &ff->ff_seen, NULL);
	ff->ff_queued_calls = ff->ff_queued->calls;
	return NULL;
}

static void test_failed_flush_reports_before_return(void **state)
{
	struct three_calls t;
	struct rpcrdma_clnt *cl = three_calls_clnt(state, &t);
	struct async_seen seen = { 0 };
	struct failed_flush ff = { .ff_cl = cl, .ff_ca = &t.ca[1], .ff_queued = &seen, .ff_rc = 1 };
	pthread_t th;

	rpcrdma_clnt_batch_begin(cl);
	assert_int_equal(rpcrdma_clnt_call_async(cl, &t.ca[0], async_done, &seen, NULL), 0);
	assert_int_equal(fv.fv_nsends, 0); /* queued */
	fv.fv_fail_send_post_at = fv.fv_send_post_calls + 1;
	assert_int_equal(pthread_create(&th, NULL, failed_flush_thread, &ff), 0);
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_int_equal(ff.ff_rc, -ENOTCONN);
	assert_int_equal(ff.ff_queued_calls, 1);
	assert_int_equal(seen.status, -ECONNRESET);
	assert_int_equal(ff.ff_seen.calls, 0); /* not started: no callback */
	rpcrdma_clnt_batch_end(cl);
	release_sends(cl);
	assert_int_equal(cl->cl_reqs_out, 0);
	assert_int_equal(cl->cl_outstanding, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_inline_reply_before_send, setup, teardown),
		cmocka_unit_test_setup_teardown(test_read_chunk, setup, teardown),
		cmocka_unit_test_setup_teardown(test_nomsg, setup, teardown),
		cmocka_unit_test_setup_teardown(test_write_chunk, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reply_chunk, setup, teardown),
		cmocka_unit_test_setup_teardown(test_grants, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rdma_error_and_unknown_xid, setup, teardown),
		cmocka_unit_test_setup_teardown(test_send_flushed_on_disconnect, setup, teardown),
		cmocka_unit_test_setup_teardown(test_completion_before_post_returns, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_marshal_failure, setup, teardown),
		cmocka_unit_test_setup_teardown(test_timeout_with_write_chunk, setup, teardown),
		cmocka_unit_test_setup_teardown(test_async_abort_timeout, setup, teardown),
		cmocka_unit_test_setup_teardown(test_send_ring, setup, teardown),
		cmocka_unit_test_setup_teardown(test_requests_beyond_credits, setup, teardown),
		cmocka_unit_test_setup_teardown(test_qp_size_fits_device, setup, teardown),
		cmocka_unit_test_setup_teardown(test_registered_buffer, setup, teardown),
		cmocka_unit_test_setup_teardown(test_memory_window, setup, teardown),
		cmocka_unit_test_setup_teardown(test_window_buffer_after_windows_dropped, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_bad_replies, setup, teardown),
		cmocka_unit_test_setup_teardown(test_send_post_failure_keeps_signalling, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_recv_repost_failure_disconnects, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_batch_one_post, setup, teardown),
		cmocka_unit_test_setup_teardown(test_batch_flushed_before_other_post, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_batch_given_up_while_waiting, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_batch_taken_while_waiting, setup, teardown),
		cmocka_unit_test_setup_teardown(test_batch_flushed_before_credit_wait, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_batch_lost_with_connection, setup, teardown),
		cmocka_unit_test_setup_teardown(test_capture_posted_sends_only, setup, teardown),
		cmocka_unit_test_setup_teardown(test_batch_abort_queued, setup, teardown),
		cmocka_unit_test_setup_teardown(test_batch_other_thread, setup, teardown),
		cmocka_unit_test_setup_teardown(test_failed_flush_reports_before_return, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_try_call_async, setup, teardown),
		cmocka_unit_test_setup_teardown(test_try_call_async_eagain_posts_own_batch, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_batch_dropped_by_disconnect_not_awaited,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_callback_starts_call_on_other_client, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_callbacks_do_not_nest_across_clients, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_bad_reply_and_repost_failure, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
