// SPDX-License-Identifier: MIT
/*
 * test_svc_conns.c - limits on the Responder's connections (issue 33,
 * finding 9): at most sc_max_conns_per_host from one peer address, and
 * connections idle for sc_idle_timeout closed unless something is in
 * progress on them or the upper layer says they hold state.
 *
 * The fake device (fake_verbs.c) stands behind the verbs seam; the idle
 * scan takes its clock as an argument, so the times below are worked out
 * by hand: with a timeout of 60 s the scans are 15 s apart (a quarter),
 * the first one 15 s after the connection joined its group.
 */
#include <arpa/inet.h>
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
#include "tprog.h"

#include "nfs4/nfs4_cb.h"
#include "svc/svc_bc.h"
#include "svc/svc_internal.h"

struct fixture {
	struct rpcrdma_svc svc;
	struct svc_conn *conn;
	struct rdma_cm_id id;
	struct ibv_qp qp;
	struct ibv_pd pd;
};

static uint32_t g_idle_timeout = 60;

static int setup(void **state)
{
	struct rpcrdma_svc_config cfg = {
		.sc_credits = 4,
		.sc_inline_size = 1024,
		.sc_max_payload = 65536,
		.sc_call_contexts = 2,
		.sc_small_contexts = 4,
		.sc_threads = 1,
		.sc_max_connections = 100,
		.sc_max_conns_per_host = 3,
		.sc_idle_timeout = g_idle_timeout,
		.sc_log = stderr,
	};
	struct fixture *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	fv_reset();
	assert_int_equal(svc_init(&f->svc, &cfg), 0);
	assert_int_equal(rpcrdma_svc_register(&f->svc, TPROG, 1, tprog_dispatch, NULL), 0);
	f->id.qp = &f->qp;
	f->id.route.addr.dst_sin.sin_family = AF_INET;
	f->conn = calloc(1, sizeof(*f->conn));
	assert_non_null(f->conn);
	f->conn->sx_svc = &f->svc;
	f->conn->sx_grp = &f->svc.sv_groups[0];
	f->conn->sx_id = &f->id;
	f->conn->sx_id_num = 7;
	f->conn->sx_dev = svc_dev_get(&f->svc.sv_groups[0], NULL, &f->pd);
	assert_non_null(f->conn->sx_dev);
	f->conn->sx_credits = 4;
	f->conn->sx_max_credits = 4;
	f->conn->sx_inline_recv = 1024;
	f->conn->sx_inline_send = 1024;
	assert_int_equal(svc_conn_alloc_pools(f->conn), 0);
	assert_int_equal(svc_conn_post_all_recvs(f->conn), 0);
	f->svc.sv_groups[0].gr_conns = f->conn;
	*state = f;
	return 0;
}

static int setup_never(void **state)
{
	int rc;

	g_idle_timeout = RPCRDMA_SVC_IDLE_NEVER;
	rc = setup(state);
	g_idle_timeout = 60;
	return rc;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	if (f->conn) {
		f->conn->sx_id = NULL;
		svc_conn_destroy(f->conn);
	}
	assert_int_equal(atomic_load(&f->svc.sv_ct.buf_bytes_in_use), 0);
	svc_dev_destroy_all(&f->svc.sv_groups[0]);
	svc_fini(&f->svc);
	free(f);
	fv_uninstall();
	return 0;
}

/* ---------- addresses ---------- */

static void set_v4(struct rdma_cm_id *id, const char *a)
{
	memset(&id->route.addr.dst_storage, 0, sizeof(id->route.addr.dst_storage));
	id->route.addr.dst_sin.sin_family = AF_INET;
	assert_int_equal(inet_pton(AF_INET, a, &id->route.addr.dst_sin.sin_addr), 1);
}

static void set_v6(struct rdma_cm_id *id, const char *a)
{
	memset(&id->route.addr.dst_storage, 0, sizeof(id->route.addr.dst_storage));
	id->route.addr.dst_sin6.sin6_family = AF_INET6;
	assert_int_equal(inet_pton(AF_INET6, a, &id->route.addr.dst_sin6.sin6_addr), 1);
}

static const struct sockaddr *peer_of(struct rdma_cm_id *id)
{
	return (const struct sockaddr *)&id->route.addr.dst_storage;
}

/* ---------- per-host cap ---------- */

/*
 * With sc_max_conns_per_host 3, address A holding three places: A's
 * fourth connection request is refused before anything is allocated
 * (-EBUSY), counted in conns_refused and conns_refused_host, and takes no
 * place of the server's; so is one from ::ffff:A (the same host over the
 * IPv6 listener).  Address B still passes the per-host check: refused
 * here only because the server's own places are all taken, which counts
 * in conns_refused but not conns_refused_host, and its place is given
 * back.  When one of A's connections goes, A may connect again.
 */
static void test_host_cap(void **state)
{
	struct fixture *f = *state;
	struct svc_group *grp = &f->svc.sv_groups[0];
	struct rdma_cm_id a = { 0 }, a6 = { 0 }, b = { 0 };
	struct svc_host *held[3], *h;
	struct svc_conn_param p;
	unsigned i;

	memset(&p, 0, sizeof(p));
	set_v4(&a, "192.0.2.1");
	set_v6(&a6, "::ffff:192.0.2.1");
	set_v4(&b, "192.0.2.2");
	for (i = 0; i < 3; i++) {
		held[i] = svc_host_admit(&f->svc, peer_of(&a));
		assert_non_null(held[i]);
	}
	assert_int_equal(svc_host_count(&f->svc, peer_of(&a)), 3);

	assert_int_equal(svc_conn_accept(grp, &a, &p), -EBUSY);
	assert_int_equal(atomic_load(&f->svc.sv_ct.conns_refused), 1);
	assert_int_equal(atomic_load(&f->svc.sv_ct.conns_refused_host), 1);
	assert_int_equal(atomic_load(&f->svc.sv_nconns), 0);
	assert_int_equal(svc_conn_accept(grp, &a6, &p), -EBUSY);
	assert_int_equal(atomic_load(&f->svc.sv_ct.conns_refused_host), 2);
	assert_int_equal(svc_host_count(&f->svc, peer_of(&a)), 3);

	/* B: past its own check, stopped by the server's limit. */
	f->svc.sv_cfg.sc_max_connections = 5;
	atomic_store(&f->svc.sv_nconns, 5);
	assert_int_equal(svc_conn_accept(grp, &b, &p), -EBUSY);
	assert_int_equal(atomic_load(&f->svc.sv_ct.conns_refused), 3);
	assert_int_equal(atomic_load(&f->svc.sv_ct.conns_refused_host), 2);
	assert_int_equal(svc_host_count(&f->svc, peer_of(&b)), 0);
	atomic_store(&f->svc.sv_nconns, 0);
	/* ... and admitted by it, with A at its share. */
	h = svc_host_admit(&f->svc, peer_of(&b));
	assert_non_null(h);
	assert_int_equal(svc_host_count(&f->svc, peer_of(&b)), 1);
	assert_null(svc_host_admit(&f->svc, peer_of(&a)));
	assert_int_equal(errno, EBUSY);

	/* One of A's goes: A may connect once more, not twice. */
	svc_host_put(&f->svc, held[1]);
	held[1] = svc_host_admit(&f->svc, peer_of(&a6));
	assert_non_null(held[1]);
	assert_null(svc_host_admit(&f->svc, peer_of(&a)));

	for (i = 0; i < 3; i++)
		svc_host_put(&f->svc, held[i]);
	svc_host_put(&f->svc, h);
	assert_int_equal(svc_host_count(&f->svc, peer_of(&a)), 0);
	assert_int_equal(svc_host_count(&f->svc, peer_of(&b)), 0);
}

/* IPv6 hosts are told apart by their /64 (test_host_cap_ipv6_64); a
 * connection gives its place back when it is freed. */
static void test_host_place_goes_with_conn(void **state)
{
	struct fixture *f = *state;
	struct rdma_cm_id x = { 0 }, y = { 0 };
	struct svc_host *hx[3];
	unsigned i;

	set_v6(&x, "2001:db8::1");
	set_v6(&y, "2001:db8:0:1::1");
	for (i = 0; i < 3; i++)
		assert_non_null(hx[i] = svc_host_admit(&f->svc, peer_of(&x)));
	assert_null(svc_host_admit(&f->svc, peer_of(&x)));
	assert_int_equal(svc_host_count(&f->svc, peer_of(&y)), 0);

	/* The fixture's connection holds one of x's places. */
	svc_host_put(&f->svc, hx[2]);
	f->conn->sx_host = svc_host_admit(&f->svc, peer_of(&x));
	assert_non_null(f->conn->sx_host);
	assert_int_equal(svc_host_count(&f->svc, peer_of(&x)), 3);
	f->conn->sx_id = NULL;
	svc_conn_destroy(f->conn);
	f->conn = NULL;
	assert_int_equal(svc_host_count(&f->svc, peer_of(&x)), 2);
	svc_host_put(&f->svc, hx[0]);
	svc_host_put(&f->svc, hx[1]);
	assert_int_equal(svc_host_count(&f->svc, peer_of(&x)), 0);
}

/*
 * One machine may use any number of IPv6 addresses of its /64: the share
 * (3 here) is its /64's.  x, x2 and x3 (one /64) take the three places
 * between them; a fourth from any address of that /64 is refused before
 * anything is allocated, counted in conns_refused_host; y (the next /64)
 * and IPv4 addresses keep their own shares.
 */
static void test_host_cap_ipv6_64(void **state)
{
	struct fixture *f = *state;
	struct svc_group *grp = &f->svc.sv_groups[0];
	struct rdma_cm_id x = { 0 }, x2 = { 0 }, x3 = { 0 }, x4 = { 0 }, y = { 0 };
	struct svc_host *hx[3], *hy;
	struct svc_conn_param p;
	unsigned i;

	memset(&p, 0, sizeof(p));
	set_v6(&x, "2001:db8:0:5::1");
	set_v6(&x2, "2001:db8:0:5:a:b:c:d");
	set_v6(&x3, "2001:db8:0:5:ffff:ffff:ffff:ffff");
	set_v6(&x4, "2001:db8:0:5:1234::9");
	set_v6(&y, "2001:db8:0:6::1");
	assert_non_null(hx[0] = svc_host_admit(&f->svc, peer_of(&x)));
	assert_non_null(hx[1] = svc_host_admit(&f->svc, peer_of(&x2)));
	assert_non_null(hx[2] = svc_host_admit(&f->svc, peer_of(&x3)));
	assert_ptr_equal(hx[0], hx[1]); /* one entry: the /64's */
	assert_int_equal(svc_host_count(&f->svc, peer_of(&x4)), 3);
	assert_null(svc_host_admit(&f->svc, peer_of(&x4)));
	assert_int_equal(errno, EBUSY);
	assert_int_equal(svc_conn_accept(grp, &x4, &p), -EBUSY);
	assert_int_equal(atomic_load(&f->svc.sv_ct.conns_refused_host), 1);
	assert_int_equal(atomic_load(&f->svc.sv_nconns), 0);

	/* the next /64: a share of its own */
	assert_int_equal(svc_host_count(&f->svc, peer_of(&y)), 0);
	assert_non_null(hy = svc_host_admit(&f->svc, peer_of(&y)));
	assert_int_equal(svc_host_count(&f->svc, peer_of(&y)), 1);
	assert_int_equal(svc_host_count(&f->svc, peer_of(&x)), 3);

	for (i = 0; i < 3; i++)
		svc_host_put(&f->svc, hx[i]);
	svc_host_put(&f->svc, hy);
	assert_int_equal(svc_host_count(&f->svc, peer_of(&x2)), 0);
	assert_int_equal(svc_host_count(&f->svc, peer_of(&y)), 0);
}

/* The default share: sc_max_connections / 8, at least 16, at most
 * sc_max_connections (32 -> 16, 400 -> 50, 8 -> 8); the idle timeout's
 * default 360 s; values out of range refused. */
static void test_defaults(void **state)
{
	static const uint32_t maxc[] = { 32, 400, 8 }, want[] = { 16, 50, 8 };
	struct rpcrdma_svc_config cfg = {
		.sc_credits = 4, .sc_inline_size = 1024, .sc_max_payload = 65536,
		.sc_threads = 1, .sc_transport_threads = 1, .sc_memory = 64ull << 20,
		.sc_log = stderr,
	};
	struct rpcrdma_svc *svc;
	unsigned i;

	(void)state;
	for (i = 0; i < 3; i++) {
		svc = calloc(1, sizeof(*svc));
		assert_non_null(svc);
		cfg.sc_max_connections = maxc[i];
		assert_int_equal(svc_init(svc, &cfg), 0);
		assert_int_equal(svc->sv_cfg.sc_max_conns_per_host, want[i]);
		assert_int_equal(svc->sv_cfg.sc_idle_timeout, 360);
		svc_fini(svc);
		free(svc);
	}
	svc = calloc(1, sizeof(*svc));
	assert_non_null(svc);
	cfg.sc_max_conns_per_host = 65537;
	assert_int_equal(svc_init(svc, &cfg), -EINVAL);
	cfg.sc_max_conns_per_host = 0;
	cfg.sc_idle_timeout = 86401;
	assert_int_equal(svc_init(svc, &cfg), -EINVAL);
	free(svc);
}

/* ---------- idle timeout ---------- */

static uint8_t *put_null_call(uint8_t *p, uint32_t xid, uint32_t prog)
{
	p = put32(p, xid);               /* RDMA_MSG, three empty lists */
	p = put32(p, 1);
	p = put32(p, 4);
	p = put32(p, RDMA_MSG);
	p = put32(p, 0);
	p = put32(p, 0);
	p = put32(p, 0);
	p = put32(p, xid + 0x1000);      /* RPC call, AUTH_NONE, proc 0 */
	p = put32(p, 0);
	p = put32(p, 2);
	p = put32(p, prog);
	p = put32(p, 1);
	p = put32(p, 0);
	p = put32(p, 0);
	p = put32(p, 0);
	p = put32(p, 0);
	return put32(p, 0);
}

static void deliver_call(struct fixture *f, uint32_t xid, uint32_t prog)
{
	uint8_t msg[128], *end = put_null_call(msg, xid, prog);

	assert_int_equal(fv_deliver(msg, (uint32_t)(end - msg)), 0);
	svc_conn_cq_event_poll(f->conn);
}

/* Serve every queued call here, as a worker would, and take the Sends. */
static void run_workers(struct fixture *f)
{
	while (svc_worker_run_one(&f->svc.sv_groups[0]))
		;
	svc_take_done(&f->svc.sv_groups[0]);
	svc_conn_cq_event_poll(f->conn);
}

/* The connection, established, joined its group at @t ms. */
static void joined_at(struct fixture *f, uint64_t t)
{
	svc_conn_cm_event(&f->svc, f->conn, RDMA_CM_EVENT_ESTABLISHED);
	f->conn->sx_accepted_ms = f->conn->sx_idle_ms = t;
	svc_conn_idle_arm(&f->svc.sv_groups[0], t);
	assert_int_equal(f->svc.sv_groups[0].gr_idle_next_ms, t + 15000);
}

/* The scan at @t; true when it closed the connection. */
static bool scan(struct fixture *f, uint64_t t)
{
	svc_conn_expire_idle(&f->svc.sv_groups[0], t);
	return f->conn->sx_closing;
}

/* Closed and counted; it drains and is freed as any other. */
static void assert_reaped(struct fixture *f, uint64_t closed)
{
	assert_true(f->conn->sx_closing);
	assert_true(fv.fv_disconnected);
	assert_int_equal(atomic_load(&f->svc.sv_ct.conns_idle_closed[SVC_XPRT_RDMA]), closed);
	fv_flush_recvs();
	svc_conn_cq_event_poll(f->conn);
	assert_true(f->conn->sx_reap);
}

/*
 * No message at all: scans at 16, 31, 46 s leave it (idle 15, 30, 45 s),
 * the one at 61 s closes it (idle 60 s); a scan not yet due does nothing.
 */
static void test_idle_reaped(void **state)
{
	struct fixture *f = *state;

	joined_at(f, 1000);
	assert_false(scan(f, 15999));
	assert_int_equal(f->svc.sv_groups[0].gr_idle_next_ms, 16000);
	assert_false(scan(f, 16000));
	assert_int_equal(f->svc.sv_groups[0].gr_idle_next_ms, 31000);
	assert_false(scan(f, 31000));
	assert_false(scan(f, 46000));
	assert_int_equal(atomic_load(&f->svc.sv_ct.conns_idle_closed[SVC_XPRT_RDMA]), 0);
	assert_true(scan(f, 61000));
	assert_reaped(f, 1);
	/* The group has its connection still (not yet freed): scans go on. */
	assert_int_equal(f->svc.sv_groups[0].gr_idle_next_ms, 76000);
}

/*
 * A call answered between the scans at 16 and 31 s: idle from 31 s on,
 * so the scan at 76 s (idle 45 s) leaves it and the one at 91 s closes it.
 */
static void test_idle_postponed_by_a_call(void **state)
{
	struct fixture *f = *state;

	joined_at(f, 1000);
	assert_false(scan(f, 16000));
	deliver_call(f, 1, TPROG);
	run_workers(f);
	assert_int_equal(fv.fv_nsends, 1);
	assert_false(svc_conn_busy(f->conn));
	assert_false(scan(f, 31000));
	assert_false(scan(f, 46000));
	assert_false(scan(f, 61000));
	assert_false(scan(f, 76000));
	assert_true(scan(f, 91000));
	assert_reaped(f, 1);
}

/*
 * A call in progress (queued for a worker, not yet answered): never
 * closed, however long; once answered, closed a timeout later.
 */
static void test_busy_not_reaped(void **state)
{
	struct fixture *f = *state;
	uint64_t t;

	joined_at(f, 1000);
	deliver_call(f, 2, TPROG);
	assert_int_equal(f->conn->sx_calls_out, 1);
	assert_true(svc_conn_busy(f->conn));
	for (t = 16000; t <= 16000 + 3600 * 1000; t += 15000)
		assert_false(scan(f, t));
	assert_int_equal(atomic_load(&f->svc.sv_ct.conns_idle_closed[SVC_XPRT_RDMA]), 0);
	run_workers(f);
	assert_false(svc_conn_busy(f->conn));
	/* idle since the scan at 16 s: long past the timeout */
	assert_true(scan(f, t));
	assert_reaped(f, 1);
}

static uint32_t g_asked, g_asked_id;
static bool g_has_state;

static bool conn_state(uint32_t conn_id, void *arg)
{
	assert_ptr_equal(arg, &g_has_state);
	g_asked++;
	g_asked_id = conn_id;
	return g_has_state;
}

/*
 * The upper layer says the connection holds state: it stays, asked at
 * each scan past the timeout with the connection's number; once the
 * state is gone, the next scan closes it.  A busy connection is not even
 * asked.
 */
static void test_state_not_reaped(void **state)
{
	struct fixture *f = *state;

	g_asked = g_asked_id = 0;
	g_has_state = true;
	assert_int_equal(rpcrdma_svc_set_conn_state(&f->svc, conn_state, &g_has_state), 0);
	joined_at(f, 1000);
	assert_false(scan(f, 16000));
	assert_false(scan(f, 31000));
	assert_false(scan(f, 46000));
	assert_int_equal(g_asked, 0); /* not idle long enough to ask */
	assert_false(scan(f, 61000));
	assert_false(scan(f, 76000));
	assert_int_equal(g_asked, 2);
	assert_int_equal(g_asked_id, 7);
	deliver_call(f, 3, TPROG); /* in progress at the next scans */
	assert_false(scan(f, 91000));
	assert_false(scan(f, 106000 + 60000));
	assert_int_equal(g_asked, 2);
	run_workers(f);
	g_has_state = false;
	assert_true(scan(f, 181000));
	assert_int_equal(g_asked, 3);
	assert_reaped(f, 1);
}

/* Not established yet: the handshake timeout's, not the idle scan's. */
static void test_handshake_left_alone(void **state)
{
	struct fixture *f = *state;

	f->conn->sx_accepted_ms = f->conn->sx_idle_ms = 1000;
	svc_conn_idle_arm(&f->svc.sv_groups[0], 1000);
	assert_false(scan(f, 16000));
	assert_false(scan(f, 100000));
	assert_int_equal(atomic_load(&f->svc.sv_ct.conns_idle_closed[SVC_XPRT_RDMA]), 0);
}

/* RPCRDMA_SVC_IDLE_NEVER: no scan is ever scheduled, nothing closed. */
static void test_idle_never(void **state)
{
	struct fixture *f = *state;

	svc_conn_cm_event(&f->svc, f->conn, RDMA_CM_EVENT_ESTABLISHED);
	f->conn->sx_idle_ms = 1000;
	svc_conn_idle_arm(&f->svc.sv_groups[0], 1000);
	assert_int_equal(f->svc.sv_groups[0].gr_idle_next_ms, 0);
	assert_false(scan(f, 1000ull * 86400 * 30));
}

/* ---------- the connection's number ---------- */

static uint32_t g_req_id, g_bc_id;
static int g_bc_rc;
static int g_req_ddp = -1;

static int id_dispatch(struct rpcrdma_svc_req *req, void *arg)
{
	struct rpcrdma_svc_bc *bc = NULL;

	(void)arg;
	g_req_id = rpcrdma_svc_req_conn_id(req);
	g_req_ddp = rpcrdma_svc_req_ddp(req);
	g_bc_rc = rpcrdma_svc_bc_get(req, &bc);
	if (!g_bc_rc) {
		g_bc_id = rpcrdma_svc_bc_conn_id(bc);
		rpcrdma_svc_bc_put(bc);
	}
	return RPCRDMA_SVC_SUCCESS;
}

/* A dispatch function learns the number of the connection its call came
 * on, the same its backchannel handle gives; 0 without a connection. */
static void test_conn_id(void **state)
{
	struct fixture *f = *state;
	struct rpcrdma_svc_req req;

	assert_int_equal(rpcrdma_svc_register(&f->svc, TPROG + 1, 1, id_dispatch, NULL), 0);
	g_req_id = g_bc_id = 0;
	deliver_call(f, 4, TPROG + 1);
	run_workers(f);
	assert_int_equal(g_req_id, 7);
	assert_int_equal(g_bc_rc, 0);
	assert_int_equal(g_bc_id, 7);
	/* an RDMA call: its transport places DDP items (RFC 8166 3.4.6) */
	assert_int_equal(g_req_ddp, 1);
	memset(&req, 0, sizeof(req));
	assert_int_equal(rpcrdma_svc_req_conn_id(&req), 0);
	assert_true(rpcrdma_svc_req_ddp(&req));
}

/* ---------- NFSv4.1: a back channel is state ---------- */

static char g_handle; /* the fake transport's only handle */

static int f_get(const struct rpcrdma_svc_req *req, struct rpcrdma_svc_bc **out)
{
	(void)req;
	*out = (struct rpcrdma_svc_bc *)&g_handle;
	return 0;
}

/* The CB_NULL probe ends at once: no reply (the path is down). */
static int f_call(struct rpcrdma_svc_bc *bc, const struct rpcrdma_svc_bc_args *a,
		  uint32_t *xid)
{
	(void)bc;
	(void)xid;
	a->ba_done(a->ba_done_arg, -ENOTCONN, NULL, NULL, 0);
	return 0;
}

static void f_put(struct rpcrdma_svc_bc *bc)
{
	assert_ptr_equal(bc, &g_handle);
}

static const struct nfs4_cb_ops g_cb_ops = { .co_get = f_get, .co_call = f_call,
					     .co_put = f_put };
static struct nfs4_cb_table *g_cb;
static const uint8_t g_sid[16] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 0, 0, 0, 5 };

/* CREATE_SESSION with CONN_BACK_CHAN, as far as the table sees it. */
static int bind_dispatch(struct rpcrdma_svc_req *req, void *arg)
{
	(void)arg;
	assert_int_equal(nfs4_cb_bind(g_cb, req, g_sid, 0x100000002ull, 0x40000000, false), 0);
	return RPCRDMA_SVC_SUCCESS;
}

/*
 * The back channel of a session bound on connection 7 (the number its
 * request carried) makes NFSv4.1 say that connection holds state, and
 * no other; once the session is gone, neither.
 */
static void test_nfs4_back_channel_is_state(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(nfs4_cb_table_create(&g_cb_ops, NULL, &g_cb), 0);
	assert_false(nfs4_cb_on_conn(g_cb, 7));
	assert_int_equal(rpcrdma_svc_register(&f->svc, TPROG + 2, 1, bind_dispatch, NULL), 0);
	deliver_call(f, 5, TPROG + 2);
	run_workers(f);
	assert_true(nfs4_cb_on_conn(g_cb, 7));
	assert_false(nfs4_cb_on_conn(g_cb, 8));
	assert_false(nfs4_cb_on_conn(g_cb, 0));
	nfs4_cb_unbind(g_cb, g_sid);
	assert_false(nfs4_cb_on_conn(g_cb, 7));
	nfs4_cb_table_destroy(g_cb);
	g_cb = NULL;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_host_cap, setup, teardown),
		cmocka_unit_test_setup_teardown(test_host_place_goes_with_conn, setup, teardown),
		cmocka_unit_test_setup_teardown(test_host_cap_ipv6_64, setup, teardown),
		cmocka_unit_test(test_defaults),
		cmocka_unit_test_setup_teardown(test_idle_reaped, setup, teardown),
		cmocka_unit_test_setup_teardown(test_idle_postponed_by_a_call, setup, teardown),
		cmocka_unit_test_setup_teardown(test_busy_not_reaped, setup, teardown),
		cmocka_unit_test_setup_teardown(test_state_not_reaped, setup, teardown),
		cmocka_unit_test_setup_teardown(test_handshake_left_alone, setup, teardown),
		cmocka_unit_test_setup_teardown(test_idle_never, setup_never, teardown),
		cmocka_unit_test_setup_teardown(test_conn_id, setup, teardown),
		cmocka_unit_test_setup_teardown(test_nfs4_back_channel_is_state, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
