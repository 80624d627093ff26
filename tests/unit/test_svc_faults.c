// SPDX-License-Identifier: MIT
/*
 * test_svc_faults.c - the Responder under injected faults, and its rdma_cm
 * event handling.
 *
 * The fake device (fake_verbs.c) holds posted work until the driver runs
 * it; the driver delivers calls of five kinds (NULL, inline echo, Read
 * chunk with a Reply chunk, Write chunk, large reply into a Reply chunk),
 * runs send work, runs the dispatch function as a worker would, polls and
 * reposts Receives, in an order drawn from the seed, under profiles of
 * fault rates on the Send, Receive, RDMA Read and RDMA Write queues.
 * The server has two transport threads (groups); successive connections
 * of a profile run alternate between them, each group with its own
 * device objects and pools under the one shared memory budget; on group
 * 1 the worker posts its reply itself (dv_worker_posts), on group 0 it
 * hands the call back to the transport thread.
 * Invariants:
 *  - on a connection that stays up, every call delivered gets exactly one
 *    reply Send; on any connection no call gets two;
 *  - once a connection is torn down and its work has flushed, it is ready
 *    to be freed, and after freeing it every gauge is back at baseline:
 *    call contexts and Receives in use, regions open, bytes registered.
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
#include <unistd.h>
#include <cmocka.h>

#include "fake_verbs.h"
#include "test_words.h"
#include "tprog.h"

#include "svc/svc_internal.h"

enum kind { K_NULL, K_ECHO, K_READ, K_WRITE, K_BIG, NKINDS };

#define XID0 0x10000000u
#define MAX_CALLS 4096
#define CREDITS 4u

static struct {
	struct rpcrdma_svc svc;
	struct svc_conn *conn;
	struct rdma_cm_id id;
	struct ibv_qp qp;
	struct ibv_pd pd;
	uint8_t read_src[3000];
	uint8_t write_dst[1024];
	uint8_t reply_dst[8192];
	uint8_t replies[MAX_CALLS];   /* reply Sends seen per call */
	enum kind kinds[MAX_CALLS];
	uint32_t conn_first;          /* first call of the current connection */
	uint32_t ncalls;              /* calls delivered */
	uint32_t conn_replies;        /* replies on the current connection */
	unsigned conns;
	const char *profile;
	uint64_t seed;
} d;

/* ---------- the device side ---------- */

/* The reply to call @xid of @kind, as worked out from the call: the RPC
 * reply header (24 bytes, SUCCESS), then the results. */
static void check_reply(uint32_t xid, enum kind kind, const uint8_t *msg, uint32_t len)
{
	const uint8_t *rpc;
	uint32_t i;

	switch (kind) {
	case K_READ:
	case K_BIG:
		/* RDMA_NOMSG: header 28 + Reply chunk echo 4 + 16; the reply
		 * is in the Reply chunk, written just before this Send. */
		assert_int_equal(get32(msg + 12), RDMA_NOMSG);
		assert_int_equal(len, 28 + 4 + 16);
		rpc = d.reply_dst;
		break;
	case K_WRITE:
		/* Write list echo: 16 + 4 + 4 + 4 + 2 * 16 + 4 + 4 = 68;
		 * inline: RPC reply header, length word, trailer word. */
		assert_int_equal(get32(msg + 12), RDMA_MSG);
		assert_int_equal(get32(msg + 48), 700 - 512);
		rpc = msg + 68;
		assert_int_equal(len, 68 + 24 + 4 + 4);
		break;
	default:
		assert_int_equal(get32(msg + 12), RDMA_MSG);
		rpc = msg + 28;
		break;
	}
	assert_int_equal(get32(rpc), xid);
	assert_int_equal(get32(rpc + 4), 1);   /* REPLY */
	assert_int_equal(get32(rpc + 20), 0);  /* SUCCESS */
	switch (kind) {
	case K_NULL:
		assert_int_equal(len, 28 + 24);
		break;
	case K_ECHO:
		assert_int_equal(len, 28 + 24 + 4 + 200);
		assert_int_equal(get32(rpc + 24), 200);
		for (i = 0; i < 200; i++)
			assert_int_equal(rpc[28 + i], (uint8_t)(i ^ 0x5c));
		break;
	case K_READ:
		assert_int_equal(get32(rpc + 24), 3000);
		assert_memory_equal(rpc + 28, d.read_src, 3000);
		break;
	case K_WRITE:
		assert_int_equal(get32(rpc + 24), 700);
		assert_int_equal(get32(rpc + 28), TPROG_TRAILER);
		for (i = 0; i < 700; i++)
			assert_int_equal(d.write_dst[i], (uint8_t)i);
		break;
	case K_BIG:
		for (i = 0; i < 3000; i++)
			assert_int_equal(rpc[24 + i], 0x5a);
		break;
	default:
		break;
	}
}

static bool on_send(const uint8_t *msg, uint32_t len, const struct fv_wr *w, void *arg)
{
	uint32_t xid = len >= 4 ? get32(msg) : 0;

	(void)w;
	(void)arg;
	if (xid - XID0 < d.ncalls) {
		check_reply(xid, d.kinds[xid - XID0], msg, len);
		if (xid - XID0 < d.conn_first)
			fail_msg("profile %s seed %llu: reply for call 0x%x of an old connection",
				 d.profile, (unsigned long long)d.seed, xid);
		if (d.replies[xid - XID0]++)
			fail_msg("profile %s seed %llu: call 0x%x answered twice", d.profile,
				 (unsigned long long)d.seed, xid);
		d.conn_replies++;
	}
	return false;
}

/* A provider that completes work before post returns: poll inside it. */
static void reenter_poll(void *arg)
{
	(void)arg;
	svc_conn_cq_event_poll(d.conn);
}

/* ---------- fixture ---------- */

static void add_remotes(void)
{
	uint32_t i;

	for (i = 0; i < sizeof(d.read_src); i++)
		d.read_src[i] = (uint8_t)(i * 3 + 1);
	fv_add_remote(0x99, 0x10000, d.read_src, sizeof(d.read_src));
	fv_add_remote(0x55, 0x50000, d.write_dst, sizeof(d.write_dst));
	fv_add_remote(0x77, 0x70000, d.reply_dst, sizeof(d.reply_dst));
}

static void svc_setup(void)
{
	struct rpcrdma_svc_config cfg = {
		.sc_credits = CREDITS,
		.sc_inline_size = 1024,
		.sc_max_payload = 65536,
		.sc_call_contexts = 2,
		.sc_small_contexts = 2,
		/* The smallest budget allowed: 16 slabs of 128 KiB. */
		.sc_memory = 16u << 17,
		/* Two transport threads: the profile runs put successive
		 * connections on alternate groups (own devices and pools, one
		 * shared budget); the driver plays both threads in turn. */
		.sc_threads = 2,
		.sc_transport_threads = 2,
		.sc_log = stderr,
	};

	memset(&d.svc, 0, sizeof(d.svc));
	assert_int_equal(svc_init(&d.svc, &cfg), 0);
	assert_int_equal(rpcrdma_svc_register(&d.svc, TPROG, 1, tprog_dispatch, NULL), 0);
	d.id.qp = &d.qp;
	d.id.route.addr.dst_sin.sin_family = AF_INET;
}

static void svc_teardown(void)
{
	assert_int_equal(atomic_load(&d.svc.sv_ct.buf_bytes_in_use), 0);
	svc_dev_destroy_all(&d.svc.sv_groups[0]);
	svc_dev_destroy_all(&d.svc.sv_groups[1]);
	assert_int_equal(atomic_load(&d.svc.sv_ct.mrs_open), 0);
	assert_int_equal(atomic_load(&d.svc.sv_ct.mr_bytes), 0);
	assert_int_equal(fv_live_mrs(), 0);
	svc_fini(&d.svc);
}

/* A connection as svc_conn_accept() builds it on group @g, without
 * rdma_cm; NULL when the injector failed the first post of the Receives. */
static struct svc_conn *conn_new(unsigned g)
{
	struct svc_conn *conn = calloc(1, sizeof(*conn));
	struct svc_group *grp = &d.svc.sv_groups[g];

	assert_non_null(conn);
	conn->sx_svc = &d.svc;
	conn->sx_grp = grp;
	conn->sx_id = &d.id;
	conn->sx_dev = svc_dev_get(grp, NULL, &d.pd);
	assert_non_null(conn->sx_dev);
	/* Group 1's workers post their own replies (dv_worker_posts), as
	 * with a hardware provider; group 0's hand them back. */
	conn->sx_dev->dv_worker_posts = g == 1;
	conn->sx_id_num = ++d.conns;
	conn->sx_credits = CREDITS;
	conn->sx_max_credits = CREDITS;
	conn->sx_inline_recv = 1024;
	conn->sx_inline_send = 1024;
	conn->sx_peer_rsi = true;
	assert_int_equal(svc_conn_alloc_pools(conn), 0);
	if (svc_conn_post_all_recvs(conn)) {
		conn->sx_id = NULL;
		conn->sx_recvs_posted = 0; /* as svc_conn_accept() unwinds */
		svc_conn_destroy(conn);
		return NULL;
	}
	grp->gr_conns = conn;
	return conn;
}

static void assert_baseline(void)
{
	assert_int_equal(atomic_load(&d.svc.sv_ct.ctx_in_use), 0);
	assert_int_equal(atomic_load(&d.svc.sv_ct.large_in_use), 0);
	assert_int_equal(atomic_load(&d.svc.sv_ct.recv_in_use), 0);
	/* No buffer handed out; the registered pool stays within budget. */
	assert_int_equal(atomic_load(&d.svc.sv_ct.buf_bytes_in_use), 0);
	assert_true(atomic_load(&d.svc.sv_ct.mr_bytes) <= d.svc.sv_cfg.sc_memory);
	assert_int_equal(atomic_load(&d.svc.sv_ct.mrs_open), fv_live_mrs());
}

/* Free a drained connection, as the run loop's reaper does. */
static void conn_free(struct svc_conn *conn)
{
	assert_true(conn->sx_reap);
	assert_int_equal(conn->sx_calls_out, 0);
	assert_int_equal(atomic_load(&conn->sx_svc->sv_ct.large_in_use), 0);
	assert_null(conn->sx_dev->dv_cwait_head);
	assert_null(conn->sx_dev->dv_cwait_tail);
	assert_null(conn->sx_dev->dv_rwait_head);
	conn->sx_id = NULL; /* the fake cm_id and PD are not rdma_cm's */
	if (conn->sx_grp->gr_conns == conn)
		conn->sx_grp->gr_conns = NULL;
	svc_conn_destroy(conn);
}

/* ---------- message building ---------- */

static uint8_t *put_fixed(uint8_t *p, uint32_t xid, uint32_t proc)
{
	p = put32(p, xid);
	p = put32(p, 1);
	p = put32(p, CREDITS);
	return put32(p, proc);
}

/* RPC call header, AUTH_NONE: 40 bytes (RFC 5531 9). */
static uint8_t *put_call(uint8_t *p, uint32_t xid, uint32_t proc)
{
	p = put32(p, xid);
	p = put32(p, 0);
	p = put32(p, 2);
	p = put32(p, TPROG);
	p = put32(p, 1);
	p = put32(p, proc);
	p = put32(p, 0);
	p = put32(p, 0);
	p = put32(p, 0);
	return put32(p, 0);
}

static uint8_t *put_seg(uint8_t *p, uint32_t handle, uint32_t len, uint64_t off)
{
	p = put32(p, handle);
	p = put32(p, len);
	p = put32(p, (uint32_t)(off >> 32));
	return put32(p, (uint32_t)off);
}

/* Build call @xid of @kind into @msg; its length. */
static uint32_t build_call(uint8_t *msg, uint32_t xid, enum kind kind)
{
	uint8_t *p = put_fixed(msg, xid, RDMA_MSG);
	uint32_t i;

	switch (kind) {
	case K_READ:
		/* 3000 bytes by RDMA Read at position 44; the echo goes back
		 * through the Reply chunk. */
		p = put32(p, 1);
		p = put32(p, 44);
		p = put_seg(p, 0x99, 3000, 0x10000);
		p = put32(p, 0);
		p = put32(p, 0);
		p = put32(p, 1);
		p = put32(p, 1);
		p = put_seg(p, 0x77, 8192, 0x70000);
		p = put_call(p, xid, TP_ECHO);
		return (uint32_t)(put32(p, 3000) - msg);
	case K_WRITE:
		p = put32(p, 0);
		p = put32(p, 1);
		p = put32(p, 2);
		p = put_seg(p, 0x55, 512, 0x50000);
		p = put_seg(p, 0x55, 512, 0x50200);
		p = put32(p, 0);
		p = put32(p, 0);
		p = put_call(p, xid, TP_ECHO_DDP);
		p = put32(p, 700);
		for (i = 0; i < 700; i++)
			*p++ = (uint8_t)i;
		return (uint32_t)(p - msg);
	case K_BIG:
		p = put32(p, 0);
		p = put32(p, 0);
		p = put32(p, 1);
		p = put32(p, 1);
		p = put_seg(p, 0x77, 8192, 0x70000);
		p = put_call(p, xid, TP_BIG);
		return (uint32_t)(put32(p, 3000) - msg);
	case K_ECHO:
		p = put32(p, 0);
		p = put32(p, 0);
		p = put32(p, 0);
		p = put_call(p, xid, TP_ECHO);
		p = put32(p, 200);
		for (i = 0; i < 200; i++)
			*p++ = (uint8_t)(i ^ 0x5c);
		return (uint32_t)(p - msg);
	default:
		p = put32(p, 0);
		p = put32(p, 0);
		p = put32(p, 0);
		return (uint32_t)(put_call(p, xid, TP_NULL) - msg);
	}
}

/* ---------- the driver ---------- */

/* Deliver the next call of @kind; false when the device refused it. */
static bool deliver_call(enum kind kind)
{
	uint8_t msg[1024];
	uint32_t xid = XID0 + d.ncalls;
	int rc;

	assert_true(d.ncalls < MAX_CALLS);
	d.kinds[d.ncalls] = kind;
	rc = fv_deliver(msg, build_call(msg, xid, kind));
	if (rc == -ENOTCONN)
		return false; /* the QP is in error; the server will notice */
	if (rc)
		fail_msg("profile %s seed %llu: call 0x%x not delivered: %d (%u Receives posted)",
			 d.profile, (unsigned long long)d.seed, xid, rc, fv_recvs_posted());
	d.ncalls++;
	return true;
}

/* What a worker thread does with one queued call, then the run loop's
 * handling of the done queue (the reply is posted). */
static bool run_worker(void)
{
	unsigned g;

	for (g = 0; g < d.svc.sv_ngroups; g++) {
		if (!svc_worker_run_one(&d.svc.sv_groups[g]))
			continue;
		svc_take_done(&d.svc.sv_groups[g]);
		return true;
	}
	return false;
}

/* Run everything that can run until nothing moves. */
static void drain(struct svc_conn *conn)
{
	unsigned rounds;

	for (rounds = 0; rounds < 10000; rounds++) {
		bool moved = fv_sq_pending() || fv_cq_pending();

		fv_run_sq(UINT32_MAX);
		while (run_worker())
			moved = true;
		svc_conn_cq_event_poll(conn);
		svc_conn_flush_recvs(conn);
		if (!moved)
			return;
	}
	fail_msg("profile %s seed %llu: did not drain", d.profile, (unsigned long long)d.seed);
}

/* The connection is over (lost, or the run ended): check and free it. */
static void conn_end(void)
{
	struct svc_conn *conn = d.conn;
	uint32_t i;

	drain(conn);
	if (!conn->sx_closing) {
		/* Never torn down: every call was answered. */
		for (i = d.conn_first; i < d.ncalls; i++)
			if (d.replies[i] != 1)
				fail_msg("profile %s seed %llu: call 0x%x got %u replies on a live "
					 "connection", d.profile, (unsigned long long)d.seed,
					 XID0 + i, d.replies[i]);
		svc_conn_disconnected(conn);
		drain(conn);
	}
	if (!conn->sx_reap)
		fail_msg("profile %s seed %llu: closed connection not drained: %u Receives "
			 "posted, %u contexts out", d.profile, (unsigned long long)d.seed,
			 conn->sx_recvs_posted, conn->sx_calls_out);
	assert_int_equal(conn->sx_calls_out, 0);
	assert_int_equal(atomic_load(&d.svc.sv_ct.ctx_in_use), 0);
	conn_free(conn);
	assert_baseline();
	d.conn = NULL;
	fv_qp_reset();
}

static void conn_start(void)
{
	unsigned tries;

	for (tries = 0; tries < 100 && !d.conn; tries++) {
		/* Profile runs alternate the groups; the rdma_cm cases use
		 * group 0, the listener's. */
		d.conn = conn_new(strcmp(d.profile, "cm") ? (unsigned)((d.conns + d.seed) % 2) : 0);
		if (!d.conn) {
			assert_baseline();
			fv_qp_reset();
		}
	}
	assert_non_null(d.conn);
	d.conn_first = d.ncalls;
	d.conn_replies = 0;
}

static void run_one(const char *profile, const struct fv_faults *f, unsigned ncalls)
{
	unsigned idle = 0, last = 0;
	bool clean = true;
	unsigned q;

	for (q = 0; q < FV_NQ; q++)
		clean &= !f->ff_error_pct[q] && !f->ff_flush_pct[q];
	clean &= !f->ff_post_fail_pct[0] && !f->ff_post_fail_pct[1];

	memset(d.replies, 0, sizeof(d.replies));
	d.ncalls = 0;
	d.conns = 0;
	d.conn = NULL;
	d.profile = profile;
	d.seed = f->ff_seed;
	fprintf(stderr, "svc-faults: profile %s seed %llu\n", profile,
		(unsigned long long)f->ff_seed);
	fv_reset();
	add_remotes();
	fv_seed(f);
	fv.fv_on_send = on_send;
	fv.fv_inside_post = reenter_poll;
	svc_setup();
	conn_start();
	while (d.ncalls < ncalls) {
		struct svc_conn *conn = d.conn;

		if (d.ncalls != last) {
			last = d.ncalls;
			idle = 0;
		} else if (++idle > 100000) {
			fail_msg("profile %s seed %llu: stalled after %u calls: %u contexts out, "
				 "%u Receives posted, %u replies on this connection, send work %u",
				 profile, (unsigned long long)f->ff_seed, d.ncalls,
				 conn->sx_calls_out, fv_recvs_posted(), d.conn_replies,
				 fv_sq_pending());
		}
		if (conn->sx_closing) {
			conn_end();
			conn_start();
			continue;
		}
		switch (fv_rand() % 8) {
		case 0:
		case 1:
			/* The Requester keeps within its credits. */
			if (d.ncalls - d.conn_first - d.conn_replies < CREDITS)
				deliver_call((enum kind)(fv_rand() % NKINDS));
			break;
		case 2:
		case 3:
			fv_run_sq(1 + (unsigned)(fv_rand() % 3));
			break;
		case 4:
			run_worker();
			break;
		case 5:
		case 6:
			svc_conn_cq_event_poll(conn);
			break;
		default:
			svc_conn_flush_recvs(conn);
			break;
		}
	}
	conn_end();
	fprintf(stderr, "  calls %u on %u connections; injected: errors %u flushes %u "
		"post failures %u reorders %u inside post %u; replies posted by workers %llu\n",
		d.ncalls, d.conns, fv.fv_n_errors, fv.fv_n_flushes, fv.fv_n_post_fails,
		fv.fv_n_reorders, fv.fv_n_inside,
		(unsigned long long)atomic_load(&d.svc.sv_ct.worker_posts));
	if (clean && d.conns != 1)
		fail_msg("profile %s seed %llu: %u connections without a fault", profile,
			 (unsigned long long)f->ff_seed, d.conns);
	svc_teardown();
	fv_uninstall();
}

static void run_profile(const char *name, const struct fv_faults *f)
{
	run_one(name, f, 300);
}

static void test_fault_profiles(void **state)
{
	(void)state;
	fv_run_profiles(FV_NQ, run_profile);
}

/* ---------- rdma_cm events ---------- */

static void cm_setup(void)
{
	struct fv_faults none = { .ff_seed = 3 };

	memset(d.replies, 0, sizeof(d.replies));
	d.ncalls = 0;
	d.profile = "cm";
	fv_reset();
	add_remotes();
	fv_seed(&none); /* work waits for the driver; a disconnect flushes */
	fv.fv_on_send = on_send;
	svc_setup();
	d.conn = NULL;
	conn_start();
}

/*
 * The connection goes (@type) with a call whose RDMA Read is outstanding
 * and one whose reply Send is posted, neither executed: both contexts stay
 * out until their work flushes, then everything comes back.
 */
static void cm_loss_with_work_outstanding(enum rdma_cm_event_type type)
{
	struct svc_conn *conn;

	cm_setup();
	conn = d.conn;
	assert_true(deliver_call(K_READ));
	svc_conn_cq_event_poll(conn);
	assert_true(deliver_call(K_NULL));
	svc_conn_cq_event_poll(conn);
	assert_true(run_worker());
	assert_false(run_worker());
	assert_int_equal(fv_sq_pending(), 2); /* one RDMA Read, one Send */
	assert_int_equal(atomic_load(&d.svc.sv_ct.ctx_in_use), 2);

	svc_conn_cm_event(&d.svc, conn, type);
	assert_true(conn->sx_closing);
	assert_true(fv.fv_disconnected);
	/* Released only when their work has flushed. */
	assert_int_equal(atomic_load(&d.svc.sv_ct.ctx_in_use), 2);
	assert_false(conn->sx_reap);
	svc_conn_cq_event_poll(conn);
	assert_true(conn->sx_reap);
	assert_int_equal(conn->sx_calls_out, 0);
	assert_int_equal(fv.fv_nreads, 0);
	assert_int_equal(fv.fv_nsends, 0);
	assert_int_equal(d.replies[0] + d.replies[1], 0);
	conn_free(conn);
	assert_baseline();
	svc_teardown();
	fv_uninstall();
}

static void test_cm_disconnected_with_work(void **state)
{
	(void)state;
	cm_loss_with_work_outstanding(RDMA_CM_EVENT_DISCONNECTED);
}

static void test_cm_device_removal_conn(void **state)
{
	(void)state;
	cm_loss_with_work_outstanding(RDMA_CM_EVENT_DEVICE_REMOVAL);
}

static void test_cm_other_losses(void **state)
{
	(void)state;
	cm_loss_with_work_outstanding(RDMA_CM_EVENT_CONNECT_ERROR);
	cm_loss_with_work_outstanding(RDMA_CM_EVENT_UNREACHABLE);
	cm_loss_with_work_outstanding(RDMA_CM_EVENT_REJECTED);
}

/* ESTABLISHED marks the connection; an event of no consequence is ignored;
 * a second DISCONNECTED after the first changes nothing. */
static void test_cm_established_and_repeats(void **state)
{
	struct svc_conn *conn;

	(void)state;
	cm_setup();
	conn = d.conn;
	assert_false(conn->sx_established);
	svc_conn_cm_event(&d.svc, conn, RDMA_CM_EVENT_ESTABLISHED);
	assert_true(conn->sx_established);
	svc_conn_cm_event(&d.svc, conn, RDMA_CM_EVENT_ADDR_CHANGE);
	assert_false(conn->sx_closing);
	svc_conn_cm_event(&d.svc, conn, RDMA_CM_EVENT_DISCONNECTED);
	assert_int_equal(fv.fv_ndisconnects, 1);
	svc_conn_cm_event(&d.svc, conn, RDMA_CM_EVENT_DISCONNECTED);
	assert_int_equal(fv.fv_ndisconnects, 1);
	svc_conn_cq_event_poll(conn);
	conn_free(conn);
	assert_baseline();
	/* Connection events never stop the server; a stop returns 0. */
	assert_false(atomic_load(&d.svc.sv_stop));
	rpcrdma_svc_stop(&d.svc);
	assert_int_equal(rpcrdma_svc_run(&d.svc), 0);
	svc_teardown();
	fv_uninstall();
}

/* The listener's device goes: every connection closes and drains, and the
 * run loop stops, returning -ENODEV. */
static void test_cm_device_removal_listener(void **state)
{
	struct svc_conn *c1, *c2;

	(void)state;
	cm_setup();
	c1 = d.conn;
	assert_true(deliver_call(K_NULL));
	svc_conn_cq_event_poll(c1);
	assert_true(run_worker()); /* reply posted, not executed */
	/* A second connection on the same (fake) device, idle. */
	d.conn = NULL;
	c2 = conn_new(0);
	assert_non_null(c2);
	c2->sx_next = c1;
	d.svc.sv_groups[0].gr_conns = c2;

	/* Both share the one fake QP: flush by hand, each to its owner. */
	fv.fv_auto_flush = false;
	svc_conn_cm_event(&d.svc, NULL, RDMA_CM_EVENT_DEVICE_REMOVAL);
	assert_true(atomic_load(&d.svc.sv_stop));
	assert_true(c1->sx_closing);
	assert_true(c2->sx_closing);
	assert_int_equal(fv.fv_ndisconnects, 2);
	assert_int_equal(c1->sx_calls_out, 1); /* its reply Send is still posted */
	fv.fv_qp_error = true;
	fv_run_sq(UINT32_MAX);
	svc_conn_cq_event_poll(c1);
	while (fv_recvs_posted()) {
		struct ibv_recv_wr *r = fv_take_recv();
		struct svc_recv *rc = rpcrdma_container_of((struct rpcrdma_cqe *)(uintptr_t)
							   r->wr_id, struct svc_recv, rc_cqe);

		fv_push(r->wr_id, IBV_WC_WR_FLUSH_ERR, IBV_WC_RECV, 0, 1);
		svc_conn_cq_event_poll(rc->rc_conn);
	}
	assert_true(c1->sx_reap);
	assert_true(c2->sx_reap);
	d.svc.sv_groups[0].gr_conns = NULL;
	conn_free(c1);
	conn_free(c2);
	assert_baseline();
	/* The loop sees the stop at once, stops its worker and says why. */
	assert_int_equal(rpcrdma_svc_run(&d.svc), -ENODEV);
	svc_teardown();
	fv_uninstall();
}

/*
 * A stop whose connections' flushes never come (seen with Soft-RoCE on a
 * loaded guest, which flushed a user QP's Receives seconds late): after
 * the drain's time the QP is destroyed, which ends the device's use of
 * every posted buffer, and the connection is freed and counted closed.
 * Here one connection per group, each with every Receive posted and one
 * reply Send still on the send queue, on a device that flushes nothing.
 */
static void test_stop_without_flushes(void **state)
{
	struct svc_conn *c0, *c1;
	uint32_t posted;

	(void)state;
	cm_setup();
	c0 = d.conn;
	assert_true(deliver_call(K_NULL));
	svc_conn_cq_event_poll(c0);
	assert_true(run_worker()); /* its reply Send posted, not executed */
	d.conn = NULL;
	c1 = conn_new(1);
	assert_non_null(c1);
	/* As svc_conn_admit() and svc_conn_accept() count them. */
	atomic_store(&d.svc.sv_groups[0].gr_nconns, 1);
	atomic_store(&d.svc.sv_groups[1].gr_nconns, 1);
	atomic_store(&d.svc.sv_nconns, 2);
	atomic_store(&d.svc.sv_ct.conns_open[SVC_XPRT_RDMA], 2);
	assert_int_equal(c0->sx_calls_out, 1);
	posted = c0->sx_recvs_posted + c1->sx_recvs_posted;
	assert_int_equal(posted, 2 * (CREDITS + SVC_EXTRA_RECVS)); /* the call's refilled */
	assert_int_equal(fv_recvs_posted(), posted);

	fv.fv_auto_flush = false; /* the disconnect flushes nothing */
	d.svc.sv_drain_ms = 50;
	rpcrdma_svc_stop(&d.svc);
	assert_int_equal(rpcrdma_svc_run(&d.svc), 0);
	/* Both were disconnected, waited for, then destroyed with their QPs. */
	assert_int_equal(fv.fv_ndisconnects, 2);
	assert_int_equal(fv.fv_ndestroys, 2);
	assert_int_equal(fv.fv_destroyed_recvs, posted);
	assert_null(d.svc.sv_groups[0].gr_conns);
	assert_null(d.svc.sv_groups[1].gr_conns);
	assert_int_equal(atomic_load(&d.svc.sv_ct.conns_open[SVC_XPRT_RDMA]), 0);
	assert_int_equal(atomic_load(&d.svc.sv_nconns), 0);
	assert_int_equal(atomic_load(&d.svc.sv_ct.recv_in_use), 0);
	assert_int_equal(atomic_load(&d.svc.sv_ct.ctx_in_use), 0); /* the reply's context */
	assert_int_equal(atomic_load(&d.svc.sv_ct.buf_bytes_in_use), 0);
	assert_int_equal(atomic_load(&d.svc.sv_ct.mrs_open), 0);
	d.conn = NULL;
	svc_teardown();
	fv_uninstall();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cm_disconnected_with_work),
		cmocka_unit_test(test_cm_device_removal_conn),
		cmocka_unit_test(test_cm_other_losses),
		cmocka_unit_test(test_cm_established_and_repeats),
		cmocka_unit_test(test_cm_device_removal_listener),
		cmocka_unit_test(test_stop_without_flushes),
		cmocka_unit_test(test_fault_profiles),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
