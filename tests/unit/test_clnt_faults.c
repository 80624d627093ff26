// SPDX-License-Identifier: MIT
/*
 * test_clnt_faults.c - the Requester under injected faults, and its
 * rdma_cm event handling.
 *
 * A responder behind the fake device (fake_verbs.c) answers every Send it
 * executes: it checks the Read chunk's bytes through the client's
 * registration, writes 100 bytes into a Write chunk, puts the reply in the
 * Reply chunk (RDMA_NOMSG) when one is offered, and queues the reply, which
 * the driver delivers later in random order (or at once, before the Send
 * completes).  The driver issues asynchronous calls of five kinds (inline,
 * Read chunk, Write chunk, Reply chunk, RDMA_NOMSG), executes send work,
 * delivers replies and polls in an order drawn from the seed, under
 * profiles of fault rates.  Invariants:
 *  - every call issued ends exactly once, with success (the right reply:
 *    the result word is the xid ^ 0x5a5a5a5a) or a negative errno:
 *    issued == succeeded + failed;
 *  - on a connection that is still up and idle, no call is left pending;
 *  - when the connection is gone, requests, credits and registrations are
 *    back at baseline, and after clnt_free() no region is left;
 *  - backchannel calls (RFC 8167) the driver sends among the replies are
 *    each answered at most once, with the right result, and every one the
 *    client received is counted answered or dropped, none left with its
 *    program.
 * Each run prints its profile and seed; FAULTS_SEED=n FAULTS_PROFILE=name
 * replays one run.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "fake_verbs.h"
#include "test_words.h"

#include "clnt/clnt_internal.h"

#include "clnt_fixture.h"

#define NSLOTS 12
#define NREPLIES 64
#define RESULT_KEY 0x5a5a5a5au
#define WRITE_BYTES 100u
#define BC_XID0 0xbc000000u
#define BC_MAX 4096u
#define BC_PROG 0x40000000u

enum kind { K_INLINE, K_READ, K_WRITE, K_REPLY, K_NOMSG, NKINDS };

struct slot {
	struct rpcrdma_clnt_call ca;
	uint8_t args[1200];
	uint8_t ddp[3000];
	uint8_t rddp[4096];
	uint8_t res[8192];
	enum kind kind;
	bool busy;
	unsigned ndone;
};

static struct {
	struct rpcrdma_clnt *cl;
	struct slot slots[NSLOTS];
	struct {
		uint8_t buf[256];
		uint32_t len;
	} replies[NREPLIES];
	unsigned nreplies;
	unsigned issued, ok, failed;
	const char *profile;
	uint64_t seed;
	/* backchannel calls from the "server" (RFC 8167): sent, and how many
	 * answers each got (by xid - BC_XID0) */
	unsigned bc_sent;
	uint8_t bc_answers[BC_MAX];
	bool batched;        /* the driver opens and closes batches */
	unsigned batch;      /* batches open (nested) */
} d;

/* Close every batch the driver holds open (the queued Sends posted). */
static void batch_close(void)
{
	while (d.batch) {
		d.batch--;
		rpcrdma_clnt_batch_end(d.cl);
	}
}

static uint8_t ddp_byte(uint32_t i)
{
	return (uint8_t)(i * 7 + 3);
}

static uint8_t args_byte(uint32_t i)
{
	return (uint8_t)(i * 5 + 1);
}

static uint8_t write_byte(uint32_t xid, uint32_t i)
{
	return (uint8_t)(xid ^ i);
}

/* The backchannel program: v in, v + 1 out. */
static int bc_serve(const struct rpcrdma_rpc_msg *call, struct rpcrdma_xdr *args,
		    struct rpcrdma_xdr *res, void *arg)
{
	(void)call;
	(void)arg;
	rpcrdma_xdr_put_u32(res, rpcrdma_xdr_get_u32(args) + 1);
	return RPC_ACCEPT_SUCCESS;
}

/* A connected client asking for 8 credits, 4096 inline receive; the peer
 * receives 1024 bytes inline, so large arguments go in Read chunks. */
static struct rpcrdma_clnt *make_clnt(void)
{
	struct rpcrdma_clnt_config cfg = {
		.cf_max_credits = 8,
		.cf_inline_size = 4096,
		.cf_auth_none = true,
		.cf_timeout_ms = 600000,
		.cf_log = stderr,
		.cf_bc_slots = 2,
	};
	struct rpcrdma_clnt *cl = clnt_fixture_new(&cfg);

	assert_int_equal(rpcrdma_clnt_bc_register(cl, BC_PROG, 1, bc_serve, NULL), 0);

	/* The first post of the Receives may be a failure the injector chose. */
	if (clnt_post_all_recvs(cl)) {
		clnt_free(cl);
		return NULL;
	}
	clnt_fixture_set_peer(cl, 4096, 1024);
	cl->cl_connected = true;
	cl->cl_credits = 8;
	return cl;
}

/* ---------- the responder ---------- */

static uint8_t *put_rpc_reply(uint8_t *p, uint32_t xid)
{
	p = put32(p, xid);
	p = put32(p, 1);  /* REPLY */
	p = put32(p, 0);  /* MSG_ACCEPTED */
	p = put32(p, 0);  /* verf AUTH_NONE */
	p = put32(p, 0);
	p = put32(p, 0);  /* SUCCESS */
	return put32(p, xid ^ RESULT_KEY);
}

static uint8_t *put_seg(uint8_t *p, const struct rpcrdma_segment *s, uint32_t len)
{
	p = put32(p, s->rs_handle);
	p = put32(p, len);
	p = put32(p, (uint32_t)(s->rs_offset >> 32));
	return put32(p, (uint32_t)s->rs_offset);
}

static void queue_reply(const uint8_t *buf, uint32_t len)
{
	assert_true(d.nreplies < NREPLIES);
	memcpy(d.replies[d.nreplies].buf, buf, len);
	d.replies[d.nreplies].len = len;
	d.nreplies++;
}

/* Deliver queued reply @i; a reply that finds no Receive waits (RNR). */
static void deliver_reply(unsigned i)
{
	int rc = fv_deliver(d.replies[i].buf, d.replies[i].len);

	if (rc == -ENOBUFS)
		return;
	d.replies[i] = d.replies[--d.nreplies];
}

static bool respond(const uint8_t *msg, uint32_t len, const struct fv_wr *w, void *arg)
{
	static struct rpcrdma_hdr h;
	struct rpcrdma_wire_err err;
	uint8_t reply[256], rpc[64], *p = reply;
	uint32_t xid, k, rpc_len;

	(void)w;
	(void)arg;
	/* Our answer to a backchannel call: RDMA_MSG without chunks carrying
	 * an RPC REPLY (its result is the argument + 1), or RDMA_ERROR. */
	if (len >= 56 && get32(msg + 12) == RDMA_MSG && !get32(msg + 16) && !get32(msg + 20) &&
	    !get32(msg + 24) && get32(msg + 32) == 1) {
		xid = get32(msg);
		assert_true(xid - BC_XID0 < BC_MAX);
		assert_int_equal(get32(msg + 52), xid - BC_XID0 + 1);
		d.bc_answers[xid - BC_XID0]++;
		return false;
	}
	assert_int_equal(rpcrdma_wire_decode_call(msg, len, NULL, &h, &err), 0);
	xid = h.rh_xid;
	/* Read chunks: the data must be readable through the client's handle. */
	for (k = 0; k < h.rh_nread; k++) {
		const struct rpcrdma_segment *s = &h.rh_segs[h.rh_read[k].rc_first];
		const uint8_t *src = fv_remote_ptr(s->rs_handle, s->rs_offset, s->rs_length,
						   IBV_ACCESS_REMOTE_READ);
		uint32_t i;

		if (!src)
			fail_msg("xid 0x%x: Read chunk not readable", xid);
		for (i = 0; i < s->rs_length; i++) {
			uint8_t want = h.rh_read[k].rc_position ? ddp_byte(i) :
				       i >= 40 ? args_byte(i - 40) : src[i];

			if (src[i] != want)
				fail_msg("xid 0x%x: Read chunk byte %u", xid, i);
		}
	}
	rpc_len = (uint32_t)(put_rpc_reply(rpc, xid) - rpc);
	p = put32(p, xid);
	p = put32(p, 1);
	p = put32(p, 8);
	p = put32(p, h.rh_has_reply ? RDMA_NOMSG : RDMA_MSG);
	p = put32(p, 0);                      /* no Read list */
	if (h.rh_nwrite) {
		const struct rpcrdma_segment *s = &h.rh_segs[h.rh_write[0].rc_first];
		uint8_t *dst = fv_remote_ptr(s->rs_handle, s->rs_offset, WRITE_BYTES,
					     IBV_ACCESS_REMOTE_WRITE);
		uint32_t i;

		if (!dst)
			fail_msg("xid 0x%x: Write chunk not writable", xid);
		for (i = 0; i < WRITE_BYTES; i++)
			dst[i] = write_byte(xid, i);
		p = put32(p, 1);
		p = put32(p, 1);
		p = put_seg(p, s, WRITE_BYTES);
	}
	p = put32(p, 0);                      /* end of Write list */
	if (h.rh_has_reply) {
		const struct rpcrdma_segment *s = &h.rh_segs[h.rh_reply.rc_first];
		uint8_t *dst = fv_remote_ptr(s->rs_handle, s->rs_offset, rpc_len,
					     IBV_ACCESS_REMOTE_WRITE);

		if (!dst)
			fail_msg("xid 0x%x: Reply chunk not writable", xid);
		memcpy(dst, rpc, rpc_len);
		p = put32(p, 1);
		p = put32(p, 1);
		p = put_seg(p, s, rpc_len);
	} else {
		p = put32(p, 0);
		memcpy(p, rpc, rpc_len);
		p += rpc_len;
	}
	queue_reply(reply, (uint32_t)(p - reply));
	/* Sometimes the Reply overtakes the Send's own completion. */
	if (fv_roll(50))
		deliver_reply(d.nreplies - 1);
	return false;
}

/* Completions before post returns: the poster holds the client lock. */
static void inside_poll(void *arg)
{
	struct ibv_wc wc[16];
	int n, i;

	(void)arg;
	while ((n = rpcrdma_verbs_poll(d.cl->cl_cq, 16, wc)) > 0)
		for (i = 0; i < n; i++)
			clnt_handle_wc(d.cl, &wc[i]);
}

/* ---------- the driver ---------- */

static void call_done(struct rpcrdma_clnt_call *ca, int status, void *arg)
{
	struct slot *s = arg;
	unsigned i;

	if (s->ndone++)
		fail_msg("profile %s seed %llu: a call ended twice", d.profile,
			 (unsigned long long)d.seed);
	assert_true(s->busy);
	s->busy = false;
	/* The call's memory is out of the Responder's reach before we hear. */
	for (i = 0; i < FV_MAX_MR; i++)
		assert_false(fv.fv_mr_live[i] && (fv.fv_mrs[i].addr == ca->ca_res ||
						  fv.fv_mrs[i].addr == ca->ca_rddp ||
						  fv.fv_mrs[i].addr == ca->ca_ddp));
	if (status) {
		assert_true(status < 0);
		d.failed++;
		return;
	}
	d.ok++;
	assert_int_equal(get32(ca->ca_res + ca->ca_res_off),
			 get32(ca->ca_res) ^ RESULT_KEY);
	if (s->kind == K_WRITE) {
		assert_true(ca->ca_rddp_used);
		assert_int_equal(ca->ca_rddp_len, WRITE_BYTES);
		for (i = 0; i < WRITE_BYTES; i++)
			assert_int_equal(s->rddp[i], write_byte(get32(ca->ca_res), i));
	}
}

static void issue(void)
{
	struct rpcrdma_clnt *cl = d.cl;
	struct slot *s = NULL;
	uint32_t xid;
	unsigned i;
	int rc;

	for (i = 0; i < NSLOTS; i++)
		if (!d.slots[i].busy) {
			s = &d.slots[i];
			break;
		}
	/* A caller without a credit would block: this driver has one thread. */
	if (!s || !cl->cl_free || cl->cl_outstanding >= cl->cl_credits)
		return;
	s->kind = (enum kind)(fv_rand() % NKINDS);
	memset(&s->ca, 0, sizeof(s->ca));
	s->ca.ca_prog = 100003;
	s->ca.ca_vers = 3;
	s->ca.ca_proc = s->kind;
	s->ca.ca_args = s->args;
	s->ca.ca_args_len = 8;
	s->ca.ca_res = s->res;
	s->ca.ca_res_cap = 256;
	switch (s->kind) {
	case K_READ:
		s->ca.ca_args_len = 16;
		s->ca.ca_ddp = s->ddp;
		s->ca.ca_ddp_len = sizeof(s->ddp);
		break;
	case K_WRITE:
		s->ca.ca_rddp = s->rddp;
		s->ca.ca_rddp_cap = sizeof(s->rddp);
		break;
	case K_REPLY:
		s->ca.ca_res_cap = sizeof(s->res);
		break;
	case K_NOMSG:
		s->ca.ca_args_len = sizeof(s->args);
		break;
	default:
		break;
	}
	for (i = 0; i < sizeof(s->args); i++)
		s->args[i] = args_byte(i);
	for (i = 0; i < sizeof(s->ddp); i++)
		s->ddp[i] = ddp_byte(i);
	s->busy = true;
	s->ndone = 0;
	d.issued++;
	rc = rpcrdma_clnt_call_async(cl, &s->ca, call_done, s, &xid);
	if (rc) {
		/* Refused at once: no callback, nothing held. */
		assert_true(rc < 0);
		assert_int_equal(s->ndone, 0);
		s->busy = false;
		d.failed++;
	}
}

static unsigned busy_slots(void)
{
	unsigned i, n = 0;

	for (i = 0; i < NSLOTS; i++)
		n += d.slots[i].busy;
	return n;
}

/* Run everything that can run until nothing changes. */
static void drain(void)
{
	unsigned rounds, i;

	for (rounds = 0; rounds < 1000; rounds++) {
		bool moved = fv_sq_pending() || fv_cq_pending();

		fv_run_sq(UINT32_MAX);
		for (i = d.nreplies; i-- > 0;) {
			unsigned before = d.nreplies;

			deliver_reply(i);
			moved |= d.nreplies != before;
		}
		clnt_poll(d.cl);
		if (!moved)
			return;
	}
	fail_msg("profile %s seed %llu: did not drain", d.profile, (unsigned long long)d.seed);
}

/* The connection is over (lost, or the run ended): check and release. */
static void end_connection(void)
{
	struct rpcrdma_clnt *cl = d.cl;

	drain();
	/* Idle and still connected, or noticed the loss: either way no call
	 * may still be waiting. */
	if (busy_slots())
		fail_msg("profile %s seed %llu: %u calls neither completed nor failed "
			 "(connected %d)", d.profile, (unsigned long long)d.seed, busy_slots(),
			 cl->cl_connected);
	pthread_mutex_lock(&cl->cl_lock);
	clnt_disconnected(cl);
	pthread_mutex_unlock(&cl->cl_lock);
	clnt_run_done(cl);
	drain();
	assert_int_equal(cl->cl_outstanding, 0);
	assert_int_equal(cl->cl_rpc_busy, 0);
	assert_int_equal(cl->cl_recvs_posted, 0);
	for (unsigned x = 0; x <= cl->cl_xid_mask; x++)
		assert_null(cl->cl_xids[x]);
	/* Sends that completed unsignalled give no flush: teardown releases. */
	pthread_mutex_lock(&cl->cl_lock);
	clnt_sq_release_all(cl);
	pthread_mutex_unlock(&cl->cl_lock);
	assert_int_equal(cl->cl_reqs_out, 0);
	/* Every backchannel call that arrived was answered or dropped, none
	 * twice; none is left with its program. */
	assert_int_equal(cl->cl_stats.cs_bc_calls, cl->cl_stats.cs_bc_replies +
			 cl->cl_stats.cs_bc_errors + cl->cl_stats.cs_bc_drops);
	for (unsigned b = 0; b < cl->cl_nbc; b++)
		assert_false(cl->cl_bc[b].br_owners & CLNT_BC_OWNER_UPPER);
	assert_null(cl->cl_bc_todo);
	assert_int_equal(fv_live_mrs(), 1); /* the slab only */
	clnt_free(cl);
	assert_int_equal(fv_live_mrs(), 0);
	d.cl = NULL;
	d.nreplies = 0;
	fv_qp_reset();
}

/* The "server" sends a backchannel call (RFC 8167 5.1): RDMA_MSG, no
 * chunks, CALL of BC_PROG v1 proc 1 with one word, its xid's index. */
static void bc_call(void)
{
	uint8_t msg[72], *p = msg;
	uint32_t xid = BC_XID0 + d.bc_sent;

	if (d.bc_sent >= BC_MAX)
		return;
	p = put32(p, xid);
	p = put32(p, 1);
	p = put32(p, 1);
	p = put32(p, RDMA_MSG);
	p = put32(p, 0);
	p = put32(p, 0);
	p = put32(p, 0);
	p = put32(p, xid);
	p = put32(p, 0);  /* CALL */
	p = put32(p, 2);
	p = put32(p, BC_PROG);
	p = put32(p, 1);
	p = put32(p, 1);
	p = put32(p, 0);  /* AUTH_NONE, verifier */
	p = put32(p, 0);
	p = put32(p, 0);
	p = put32(p, 0);
	p = put32(p, d.bc_sent);
	if (fv_deliver(msg, (uint32_t)(p - msg)) != -ENOBUFS)
		d.bc_sent++; /* no Receive posted: the "server" waits (RNR) */
}

static bool connect_new(void)
{
	unsigned tries;

	for (tries = 0; tries < 100; tries++) {
		d.cl = make_clnt();
		if (d.cl)
			return true;
		assert_int_equal(fv_live_mrs(), 0);
		fv_qp_reset();
	}
	return false;
}

static void run_one(const char *profile, const struct fv_faults *f, unsigned ncalls,
		    bool batched)
{
	unsigned q, last_issued = 0, idle = 0, bc_answered = 0;
	bool clean = true;

	for (q = 0; q < FV_NQ; q++)
		clean &= !f->ff_error_pct[q] && !f->ff_flush_pct[q];
	clean &= !f->ff_post_fail_pct[0] && !f->ff_post_fail_pct[1];

	memset(&d, 0, sizeof(d));
	d.batched = batched;
	d.profile = profile;
	d.seed = f->ff_seed;
	fprintf(stderr, "clnt-faults: profile %s seed %llu\n", profile,
		(unsigned long long)f->ff_seed);
	fv_reset();
	fv_seed(f);
	fv.fv_on_send = respond;
	fv.fv_inside_post = inside_poll;
	assert_true(connect_new());
	while (d.issued < ncalls) {
		if (d.issued != last_issued) {
			last_issued = d.issued;
			idle = 0;
		} else if (++idle > 100000) {
			struct rpcrdma_clnt *cl = d.cl;

			fail_msg("profile %s seed %llu: stalled after %u calls: credits %u "
				 "outstanding %u free %d reqs out %u pending %d; calls waiting %u, "
				 "replies queued %u, Receives posted %u, send work %u",
				 profile, (unsigned long long)f->ff_seed, d.issued, cl->cl_credits,
				 cl->cl_outstanding, cl->cl_free != NULL, cl->cl_reqs_out,
				 cl->cl_outstanding != 0, busy_slots(), d.nreplies,
				 fv_recvs_posted(), fv_sq_pending());
		}
		if (!d.cl->cl_connected) {
			batch_close();
			end_connection();
			assert_true(connect_new());
			continue;
		}
		/* Batches: Sends queued while replies, completions, send work
		 * and backchannel calls go on, nested up to two deep. */
		if (d.batched && fv_rand() % 6 == 0) {
			if (d.batch < 2 && fv_rand() % 2) {
				d.batch++;
				rpcrdma_clnt_batch_begin(d.cl);
			} else if (d.batch) {
				d.batch--;
				rpcrdma_clnt_batch_end(d.cl);
			}
		}
		switch (fv_rand() % 9) {
		case 0:
		case 1:
		case 2:
			issue();
			break;
		case 8:
			bc_call();
			break;
		case 3:
		case 4:
			fv_run_sq(1 + (unsigned)(fv_rand() % 3));
			break;
		case 5:
			if (d.nreplies)
				deliver_reply((unsigned)(fv_rand() % d.nreplies));
			break;
		default:
			clnt_poll(d.cl);
			break;
		}
	}
	batch_close();
	end_connection();
	for (q = 0; q < d.bc_sent; q++) {
		if (d.bc_answers[q] > 1)
			fail_msg("profile %s seed %llu: backchannel call %u answered %u times",
				 profile, (unsigned long long)f->ff_seed, q, d.bc_answers[q]);
		bc_answered += d.bc_answers[q];
	}
	fprintf(stderr, "  issued %u ok %u failed %u, backchannel calls %u answered %u; injected: "
		"errors %u flushes %u post failures %u reorders %u inside post %u\n", d.issued,
		d.ok, d.failed, d.bc_sent, bc_answered, fv.fv_n_errors, fv.fv_n_flushes,
		fv.fv_n_post_fails, fv.fv_n_reorders, fv.fv_n_inside);
	if (d.issued != d.ok + d.failed)
		fail_msg("profile %s seed %llu: issued %u != ok %u + failed %u", profile,
			 (unsigned long long)f->ff_seed, d.issued, d.ok, d.failed);
	if (clean && d.failed)
		fail_msg("profile %s seed %llu: %u calls failed without a fault", profile,
			 (unsigned long long)f->ff_seed, d.failed);
	fv_uninstall();
}

static void run_profile(const char *name, const struct fv_faults *f)
{
	run_one(name, f, 300, false);
}

static void test_fault_profiles(void **state)
{
	(void)state;
	fv_run_profiles(2 /* Send and Receive: the client posts no RDMA Read or Write */, run_profile);
}

static void run_profile_batched(const char *name, const struct fv_faults *f)
{
	run_one(name, f, 300, true);
}

/* The same under batches (rpcrdma_clnt_batch_begin()): queued Sends, a
 * batched post that fails, a connection lost with Sends queued, replies
 * and completions (inside the post too) while a batch is open. */
static void test_fault_profiles_batched(void **state)
{
	(void)state;
	fv_run_profiles(2, run_profile_batched);
}

/* ---------- rdma_cm events ---------- */

/* Each failure while connecting maps to one documented errno. */
static void test_cm_connect_status(void **state)
{
	const enum rdma_cm_event_type EST = RDMA_CM_EVENT_ESTABLISHED;

	(void)state;
	assert_int_equal(clnt_cm_connect_status(EST, 0, EST), 0);
	assert_int_equal(clnt_cm_connect_status(RDMA_CM_EVENT_ADDR_RESOLVED, 0,
						RDMA_CM_EVENT_ADDR_RESOLVED), 0);
	/* REJECTED's status is the reject reason (e.g. 28, no listener). */
	assert_int_equal(clnt_cm_connect_status(RDMA_CM_EVENT_REJECTED, 28, EST), -ECONNREFUSED);
	assert_int_equal(clnt_cm_connect_status(RDMA_CM_EVENT_REJECTED, 8, EST), -ECONNREFUSED);
	assert_int_equal(clnt_cm_connect_status(RDMA_CM_EVENT_UNREACHABLE, -ETIMEDOUT, EST),
			 -EHOSTUNREACH);
	assert_int_equal(clnt_cm_connect_status(RDMA_CM_EVENT_UNREACHABLE, 0, EST),
			 -EHOSTUNREACH);
	assert_int_equal(clnt_cm_connect_status(RDMA_CM_EVENT_ADDR_ERROR, -ENODEV,
						RDMA_CM_EVENT_ADDR_RESOLVED), -EHOSTUNREACH);
	assert_int_equal(clnt_cm_connect_status(RDMA_CM_EVENT_ADDR_ERROR, -EADDRNOTAVAIL,
						RDMA_CM_EVENT_ADDR_RESOLVED), -EHOSTUNREACH);
	assert_int_equal(clnt_cm_connect_status(RDMA_CM_EVENT_ADDR_ERROR, -ENETUNREACH,
						RDMA_CM_EVENT_ADDR_RESOLVED), -ENETUNREACH);
	assert_int_equal(clnt_cm_connect_status(RDMA_CM_EVENT_ROUTE_ERROR, -ETIMEDOUT,
						RDMA_CM_EVENT_ROUTE_RESOLVED), -EHOSTUNREACH);
	assert_int_equal(clnt_cm_connect_status(RDMA_CM_EVENT_ROUTE_ERROR, 5,
						RDMA_CM_EVENT_ROUTE_RESOLVED), -EHOSTUNREACH);
	assert_int_equal(clnt_cm_connect_status(RDMA_CM_EVENT_CONNECT_ERROR, 0, EST),
			 -ECONNRESET);
	assert_int_equal(clnt_cm_connect_status(RDMA_CM_EVENT_CONNECT_ERROR, -ETIMEDOUT, EST),
			 -ETIMEDOUT);
	assert_int_equal(clnt_cm_connect_status(RDMA_CM_EVENT_DISCONNECTED, 0, EST),
			 -ECONNRESET);
	assert_int_equal(clnt_cm_connect_status(RDMA_CM_EVENT_DEVICE_REMOVAL, 0, EST), -ENODEV);
	/* Another step's success is not the one awaited. */
	assert_int_equal(clnt_cm_connect_status(RDMA_CM_EVENT_ADDR_RESOLVED, 0,
						RDMA_CM_EVENT_ROUTE_RESOLVED), -EPROTO);
}

struct waiter {
	struct rpcrdma_clnt *cl;
	struct clnt_req *rl;
	int rc;
};

static void *wait_thread(void *arg)
{
	struct waiter *w = arg;

	w->rc = clnt_call_wait(w->cl, w->rl, 600000);
	return NULL;
}

/*
 * The connection goes (*@state: the rdma_cm event, one test each) with
 * three calls in flight whose Sends the device has not executed: a synchronous caller blocked in its wait, an
 * asynchronous call with a Write chunk and one with a Reply chunk.  All
 * three fail with -ECONNRESET, a new call gets -ENOTCONN, the Sends flush,
 * and every request and registration comes back.
 */
static void test_cm_loss_in_flight(void **state)
{
	enum rdma_cm_event_type type = *(const enum rdma_cm_event_type *)*state;
	struct fv_faults f = { .ff_seed = 7 };
	struct slot *s1, *s2;
	struct rpcrdma_clnt_call sync_ca = { .ca_prog = 1, .ca_vers = 1 };
	uint8_t sync_res[64];
	struct waiter w;
	pthread_t t;
	uint32_t xid;

	memset(&d, 0, sizeof(d));
	d.profile = rdma_event_str(type);
	fv_reset();
	fv_seed(&f); /* deferred Sends, flushes on disconnect; no faults */
	fv.fv_on_send = respond;
	d.cl = make_clnt();
	assert_non_null(d.cl);
	sync_ca.ca_res = sync_res;
	sync_ca.ca_res_cap = sizeof(sync_res);
	assert_int_equal(clnt_call_start(d.cl, &sync_ca, &w.rl), 0);
	w.cl = d.cl;
	w.rc = 1;
	assert_int_equal(pthread_create(&t, NULL, wait_thread, &w), 0);

	s1 = &d.slots[0];
	s2 = &d.slots[1];
	s1->ca = (struct rpcrdma_clnt_call){ .ca_prog = 1, .ca_vers = 1, .ca_res = s1->res,
		.ca_res_cap = 256, .ca_rddp = s1->rddp, .ca_rddp_cap = sizeof(s1->rddp) };
	s1->busy = true;
	s2->ca = (struct rpcrdma_clnt_call){ .ca_prog = 1, .ca_vers = 1, .ca_res = s2->res,
		.ca_res_cap = sizeof(s2->res) };
	s2->busy = true;
	assert_int_equal(rpcrdma_clnt_call_async(d.cl, &s1->ca, call_done, s1, &xid), 0);
	assert_int_equal(rpcrdma_clnt_call_async(d.cl, &s2->ca, call_done, s2, &xid), 0);
	assert_int_equal(fv_sq_pending(), 3);
	assert_int_equal(fv_live_mrs(), 3); /* slab, Write chunk, Reply chunk */

	/* An event that is not a loss changes nothing. */
	assert_false(clnt_cm_event(d.cl, RDMA_CM_EVENT_ADDR_CHANGE));
	assert_true(d.cl->cl_connected);

	assert_true(clnt_cm_event(d.cl, type));
	pthread_join(t, NULL);
	assert_int_equal(w.rc, -ECONNRESET);
	assert_int_equal(d.failed, 2);
	assert_int_equal(s1->ndone, 1);
	assert_int_equal(s2->ndone, 1);
	assert_false(d.cl->cl_connected);
	assert_true(fv.fv_disconnected);
	assert_int_equal(fv_live_mrs(), 1);
	assert_int_equal(clnt_call_start(d.cl, &sync_ca, &w.rl), -ENOTCONN);
	/* The Sends still own their requests until they flush. */
	assert_int_equal(d.cl->cl_reqs_out, 3);
	clnt_poll(d.cl);
	assert_int_equal(d.cl->cl_reqs_out, 0);
	assert_int_equal(d.cl->cl_recvs_posted, 0);
	assert_int_equal(d.cl->cl_outstanding, 0);
	assert_int_equal(d.cl->cl_rpc_busy, 0);
	assert_int_equal(fv.fv_nsends, 0); /* nothing reached the wire */
	clnt_free(d.cl);
	assert_int_equal(fv_live_mrs(), 0);
	d.cl = NULL;
	fv_uninstall();
}

/* test_cm_loss_in_flight with RDMA_CM_EVENT_@ev, named after it. */
#define CM_LOSS_TEST(ev)                                                   \
	{ "test_cm_loss_in_flight/" #ev, test_cm_loss_in_flight, NULL, NULL, \
	  &(enum rdma_cm_event_type){ RDMA_CM_EVENT_##ev } }

/* A thread in clnt_wait_drained(), as rpcrdma_clnt_destroy() waits for the
 * flushes of the connection it closes. */
struct drain_waiter {
	struct rpcrdma_clnt *cl;
	bool waiting;
	bool drained;
};

static void *drain_thread(void *arg)
{
	struct drain_waiter *w = arg;

	pthread_mutex_lock(&w->cl->cl_lock);
	w->waiting = true; /* seen by the test only once we wait (lock released) */
	w->drained = clnt_wait_drained(w->cl, 600000);
	pthread_mutex_unlock(&w->cl->cl_lock);
	return NULL;
}

/*
 * Teardown's wait for the flushes ends when the completion side handles
 * the last of them, not at a deadline: the client stops, its connection
 * goes, a thread waits; polling the flushed Receives wakes it, drained.
 */
static void test_destroy_drain_wakes(void **state)
{
	struct fv_faults f = { .ff_seed = 3 };
	struct drain_waiter w = { .waiting = false };
	pthread_t t;
	bool waiting = false;

	(void)state;
	fv_reset();
	fv_seed(&f); /* flushes on disconnect; no faults */
	w.cl = make_clnt();
	assert_non_null(w.cl);
	assert_true(w.cl->cl_recvs_posted > 0);
	pthread_mutex_lock(&w.cl->cl_lock);
	w.cl->cl_stopping = true;
	clnt_disconnected(w.cl);
	assert_false(clnt_drained(w.cl)); /* the flushes are not polled yet */
	pthread_mutex_unlock(&w.cl->cl_lock);

	assert_int_equal(pthread_create(&t, NULL, drain_thread, &w), 0);
	while (!waiting) {
		pthread_mutex_lock(&w.cl->cl_lock);
		waiting = w.waiting;
		pthread_mutex_unlock(&w.cl->cl_lock);
	}
	clnt_poll(w.cl);
	pthread_join(t, NULL);
	assert_true(w.drained);
	assert_int_equal(w.cl->cl_recvs_posted, 0);
	clnt_free(w.cl);
	fv_uninstall();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cm_connect_status),
		CM_LOSS_TEST(DISCONNECTED),
		CM_LOSS_TEST(DEVICE_REMOVAL),
		CM_LOSS_TEST(CONNECT_ERROR),
		CM_LOSS_TEST(UNREACHABLE),
		CM_LOSS_TEST(REJECTED),
		CM_LOSS_TEST(TIMEWAIT_EXIT),
		cmocka_unit_test(test_fault_profiles),
		cmocka_unit_test(test_fault_profiles_batched),
		cmocka_unit_test(test_destroy_drain_wakes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
