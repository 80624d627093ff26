// SPDX-License-Identifier: MIT
/*
 * test_svc_budget.c - connections refused by the memory budget before
 * the connection count is reached (issue 38): the RDMA admission path of
 * svc_conn_accept() up to the QP (svc_conn_new(): places, the connection,
 * its receive buffers from the budget's receive share) and after
 * rdma_accept() (svc_conn_opened()), on the fake device (the QP, the
 * device query and rdma_accept() itself are the real verbs').
 *
 * The expected count is worked out by hand from the documented costs,
 * not from the server's arithmetic: rpcrdma-nfsd(8) --memory ("receive
 * buffers may take half of it"), --credits ("a connection starts with
 * 16") and --max-connections ("each counted with its 24 Receives of
 * 4 KiB"); docs/design.md "Receive buffers come from the pool, one of the
 * inline size per credit plus 8 spares".  With --memory 64M, the default
 * inline size (4096) and --max-connections 1024:
 *
 *   receive share  = 64 MiB / 2            = 32768 KiB
 *   one connection = (16 + 8) x 4 KiB      = 96 KiB
 *   admitted       = floor(32768 / 96)     = 341   (341 x 96 = 32736 KiB;
 *                                                   342 x 96 = 32832 KiB)
 *
 * so the 342nd connection is refused for memory, 683 places short of the
 * count.  The documented answer (rpcrdma-nfsd(8) --max-connections): the
 * request is refused (the caller rejects it), counted in conns_refused,
 * logged once per burst; open connections are not disturbed; one going
 * makes room for one more, and "accepting again after N refused
 * connections" ends the burst.  At the end, every connection closed,
 * nothing is held: no buffer, no byte of the receive share, no place.
 *
 * TCP connections share the receive share: each counts its read-ahead
 * buffer of 4 KiB (rpcrdma-nfsd(8) --memory; docs/design.md "TCP
 * connections").  With 340 RDMA connections open:
 *
 *   RDMA           = 340 x 96 KiB          = 32640 KiB
 *   left           = 32768 - 32640         = 128 KiB
 *   TCP admitted   = floor(128 / 4)        = 32    (the share then full)
 *
 * so the 33rd TCP connection is refused (closed at once, conns_refused),
 * and with the 32 gone the 341st RDMA connection fits again (32736 KiB)
 * while the 342nd does not.
 */
#include <arpa/inet.h>
#include <errno.h>
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
#include "tprog.h"

#include "svc/svc_internal.h"
#include "svc/svc_xprt.h"
#include "svc_tcp_fixture.h"

#define MIB (1024ull * 1024)
#define ADMITTED 341u       /* worked out above */
#define TCP_ADMITTED 32u    /* beside 340 RDMA connections, worked out above */
#define MAX_CONNS 1024u

struct fixture {
	struct rpcrdma_svc svc;
	struct ibv_qp qp;
	struct ibv_pd pd;
	struct rdma_cm_id id[ADMITTED + 4];
	struct svc_conn *conn[ADMITTED + 4];
	char *log;
	size_t log_len;
	FILE *logf;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	struct rpcrdma_svc_config cfg = {
		.sc_credits = 128,           /* the default */
		.sc_inline_size = 4096,      /* the default */
		.sc_memory = 64 * MIB,       /* the smallest --memory */
		.sc_max_connections = MAX_CONNS,
		.sc_max_conns_per_host = MAX_CONNS,
		.sc_threads = 1,
		.sc_transport_threads = 1,
	};

	assert_non_null(f);
	f->logf = open_memstream(&f->log, &f->log_len);
	assert_non_null(f->logf);
	cfg.sc_log = f->logf;
	fv_reset();
	assert_int_equal(svc_init(&f->svc, &cfg), 0);
	assert_int_equal(rpcrdma_svc_register(&f->svc, TPROG, 1, tprog_dispatch, NULL), 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	svc_dev_destroy_all(&f->svc.sv_groups[0]);
	assert_int_equal(fv_live_mrs(), 0);
	svc_fini(&f->svc);
	fv_uninstall();
	fclose(f->logf);
	free(f->log);
	free(f);
	return 0;
}

/* Lines of the log containing @s. */
static unsigned log_count(struct fixture *f, const char *s)
{
	unsigned n = 0;

	fflush(f->logf);
	for (const char *p = f->log; p && (p = strstr(p, s)); p += strlen(s))
		n++;
	return n;
}

/* Connection request @i from 192.0.2.1 (no private data): 0 and opened,
 * or the admission's error.  The fake device has one receive queue and
 * one completion queue: connection 0 (the one served below) posts its
 * Receives there; the others' QPs are the test's: their Receives count
 * as posted (as svc_conn_post_all_recvs() counts them), and close_one()
 * flushes them as a device does when the QP goes to error. */
static int connect_one(struct fixture *f, unsigned i)
{
	struct svc_conn_param p;
	struct rdma_cm_id *id = &f->id[i];
	int rc;

	memset(&p, 0, sizeof(p));
	memset(id, 0, sizeof(*id));
	id->qp = &f->qp;
	id->route.addr.dst_sin.sin_family = AF_INET;
	assert_int_equal(inet_pton(AF_INET, "192.0.2.1", &id->route.addr.dst_sin.sin_addr), 1);
	rc = svc_conn_new(&f->svc.sv_groups[0], id, &f->pd, &p, &f->conn[i]);
	if (rc) {
		f->conn[i] = NULL;
		return rc;
	}
	if (i == 0)
		assert_int_equal(svc_conn_post_all_recvs(f->conn[0]), 0);
	else
		f->conn[i]->sx_recvs_posted = f->conn[i]->sx_nrecvs;
	svc_conn_opened(f->conn[i], &p, 0);
	return 0;
}

/* Connection @i closes (the client disconnects) and the run loop frees
 * it once its Receives flushed. */
static void close_one(struct fixture *f, unsigned i)
{
	struct svc_conn *conn = f->conn[i];

	svc_conn_cm_event(&f->svc, conn, RDMA_CM_EVENT_DISCONNECTED);
	assert_false(conn->sx_reap);
	if (i == 0)
		fv_flush_recvs();
	else
		for (uint32_t r = 0; r < conn->sx_nrecvs; r++)
			fv_push(conn->sx_recvs[r].rc_wr.wr_id, IBV_WC_WR_FLUSH_ERR, IBV_WC_RECV, 0, 1);
	svc_conn_cq_event_poll(conn);
	assert_true(conn->sx_reap);
	conn->sx_id = NULL; /* the fake rdma_cm_id is the test's */
	svc_conn_reap(&f->svc.sv_groups[0]);
	f->conn[i] = NULL;
	/* the fake device has one QP for all: the others' stays up */
	fv.fv_disconnected = false;
}

/* A NULL call of the test program on connection 0 is answered there:
 * RDMA_MSG, its xid, an accepted reply (RFC 8166 4.2, RFC 5531 9). */
static void served(struct fixture *f, uint32_t xid)
{
	struct svc_group *grp = &f->svc.sv_groups[0];
	uint8_t msg[128], *p = msg;
	unsigned sends = fv.fv_nsends;

	p = put32(p, xid);
	p = put32(p, 1);
	p = put32(p, 16);
	p = put32(p, 0);         /* RDMA_MSG, three empty lists */
	p = put32(p, 0);
	p = put32(p, 0);
	p = put32(p, 0);
	p = put32(p, xid);       /* CALL, RPC 2, TPROG 1, TP_NULL */
	p = put32(p, 0);
	p = put32(p, 2);
	p = put32(p, TPROG);
	p = put32(p, 1);
	p = put32(p, TP_NULL);
	for (int i = 0; i < 4; i++)
		p = put32(p, 0); /* AUTH_NONE credential and verifier */
	assert_int_equal(fv_deliver(msg, (uint32_t)(p - msg)), 0);
	svc_conn_cq_event_poll(f->conn[0]);
	while (svc_worker_run_one(grp))
		;
	svc_take_done(grp);
	svc_conn_cq_event_poll(f->conn[0]);
	assert_int_equal(fv.fv_nsends, sends + 1);
	assert_int_equal(get32(fv.fv_sent), xid);
	assert_int_equal(get32(fv.fv_sent + 12), 0);      /* RDMA_MSG */
	assert_int_equal(get32(fv.fv_sent + 28), xid);
	assert_int_equal(get32(fv.fv_sent + 32), 1);      /* REPLY */
	assert_int_equal(get32(fv.fv_sent + 36), 0);      /* MSG_ACCEPTED */
	assert_int_equal(get32(fv.fv_sent + 48), 0);      /* SUCCESS */
}

static void test_refused_by_memory(void **state)
{
	struct fixture *f = *state;
	struct svc_counters *ct = &f->svc.sv_ct;
	const struct sockaddr *peer = (const struct sockaddr *)&f->id[0].route.addr.dst_storage;
	unsigned i;

	for (i = 0; i < ADMITTED; i++)
		assert_int_equal(connect_one(f, i), 0);
	/* the next: refused for memory, far from the count */
	assert_int_equal(connect_one(f, ADMITTED), -EAGAIN);
	assert_int_equal(atomic_load(&ct->conns_refused), 1);
	assert_int_equal(atomic_load(&ct->conns_refused_host), 0);
	assert_int_equal(atomic_load(&f->svc.sv_nconns), ADMITTED);
	assert_int_equal(svc_host_count(&f->svc, peer), ADMITTED);
	assert_true(ADMITTED < MAX_CONNS);
	assert_int_equal(log_count(f, "refusing connections: memory budget's receive share "
				   "in use (341 open)"), 1);
	assert_int_equal(log_count(f, "--max-connections reached"), 0);
	/* the share holds 341 connections' 24 Receives of 4 KiB */
	assert_int_equal(atomic_load(&f->svc.sv_recv_bytes_held), ADMITTED * 24ull * 4096);
	/* again: refused, counted, not logged again in the burst */
	assert_int_equal(connect_one(f, ADMITTED), -EAGAIN);
	assert_int_equal(atomic_load(&ct->conns_refused), 2);
	assert_int_equal(log_count(f, "refusing connections"), 1);

	/* the connected are served meanwhile */
	served(f, 0x5001);

	/* one goes: one more comes, which ends the burst */
	close_one(f, 7);
	assert_int_equal(atomic_load(&f->svc.sv_nconns), ADMITTED - 1);
	assert_int_equal(connect_one(f, 7), 0);
	assert_int_equal(log_count(f, "accepting again after 2 refused connections"), 1);
	assert_int_equal(atomic_load(&f->svc.sv_nconns), ADMITTED);
	/* and the next is refused again, a new burst */
	assert_int_equal(connect_one(f, ADMITTED), -EAGAIN);
	assert_int_equal(atomic_load(&ct->conns_refused), 3);
	assert_int_equal(log_count(f, "refusing connections: memory budget's receive share "
				   "in use (341 open)"), 2);
	served(f, 0x5002);

	/* all go: nothing held */
	for (i = 0; i < ADMITTED; i++)
		close_one(f, i);
	assert_int_equal(atomic_load(&f->svc.sv_nconns), 0);
	assert_int_equal(svc_host_count(&f->svc, peer), 0);
	assert_int_equal(atomic_load(&f->svc.sv_recv_bytes_held), 0);
	assert_int_equal(atomic_load(&ct->buf_bytes_in_use), 0);
	assert_int_equal(atomic_load(&ct->recv_in_use), 0);
	assert_int_equal(atomic_load(&ct->ctx_in_use), 0);
	assert_null(f->svc.sv_groups[0].gr_conns);
	/* registered slabs, all idle, trimmed to a quarter of the budget as
	 * connections closed (docs/design.md: "more than 64 MiB (or a
	 * quarter of the budget, if less)") */
	assert_true(atomic_load(&f->svc.sv_mem_registered) <= 16 * MIB);
	/* and a connection is admitted as on the first day */
	assert_int_equal(connect_one(f, 0), 0);
	served(f, 0x5003);
	close_one(f, 0);
	assert_int_equal(atomic_load(&f->svc.sv_recv_bytes_held), 0);
}

/* A TCP connection from 192.0.2.1 adopted by group 0: the result of
 * svc_tcp_adopt(); the client's end in *@peer_fd (-1 when refused). */
static int adopt_tcp(struct fixture *f, int *peer_fd)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	int sv[2], rc;

	assert_int_equal(inet_pton(AF_INET, "192.0.2.1", &sin.sin_addr), 1);
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	rc = svc_tcp_adopt(&f->svc.sv_groups[0], sv[0], (struct sockaddr *)&sin);
	*peer_fd = sv[1];
	if (rc) {
		uint8_t b;

		/* refused: the server's end closed at once, the client reads EOF */
		assert_int_equal(recv(sv[1], &b, 1, 0), 0);
		close(sv[1]);
		*peer_fd = -1;
	}
	return rc;
}

/* TCP connections' read-ahead buffers in the receive share, beside RDMA
 * connections' Receives: the counts worked out at the top. */
static void test_tcp_read_ahead_counted(void **state)
{
	struct fixture *f = *state;
	struct svc_counters *ct = &f->svc.sv_ct;
	struct svc_group *grp = &f->svc.sv_groups[0];
	int peer[TCP_ADMITTED + 1];
	unsigned i;

	for (i = 0; i < ADMITTED - 1; i++)
		assert_int_equal(connect_one(f, i), 0);
	for (i = 0; i < TCP_ADMITTED; i++)
		assert_int_equal(adopt_tcp(f, &peer[i]), 0);
	assert_int_equal(atomic_load(&f->svc.sv_recv_bytes_held), 32 * MIB);
	/* the 33rd: refused for memory, counted, logged */
	assert_int_equal(adopt_tcp(f, &peer[TCP_ADMITTED]), -EAGAIN);
	assert_int_equal(atomic_load(&ct->conns_refused), 1);
	assert_int_equal(atomic_load(&ct->conns_refused_host), 0);
	assert_int_equal(atomic_load(&f->svc.sv_nconns), ADMITTED - 1 + TCP_ADMITTED);
	assert_int_equal(log_count(f, "refusing connections: memory budget's receive share "
				   "in use (372 open)"), 1);
	/* an RDMA connection neither (96 KiB wanted, nothing left) */
	assert_int_equal(connect_one(f, ADMITTED - 1), -EAGAIN);
	assert_int_equal(atomic_load(&ct->conns_refused), 2);
	/* one TCP connection goes (the client closes): one more comes */
	close(peer[5]);
	for (i = 0; i < 100 && atomic_load(&ct->conns_open[SVC_XPRT_TCP]) == TCP_ADMITTED; i++)
		tcp_group_pump(grp, 5);
	assert_int_equal(atomic_load(&ct->conns_open[SVC_XPRT_TCP]), TCP_ADMITTED - 1);
	assert_int_equal(atomic_load(&f->svc.sv_recv_bytes_held), 32 * MIB - 4096);
	assert_int_equal(adopt_tcp(f, &peer[5]), 0);
	assert_int_equal(atomic_load(&f->svc.sv_recv_bytes_held), 32 * MIB);
	/* all TCP ones go: the 341st RDMA connection fits, the 342nd not */
	for (i = 0; i < TCP_ADMITTED; i++)
		close(peer[i]);
	svc_tcp_class.xc_close_all(grp);
	assert_int_equal(atomic_load(&ct->conns_open[SVC_XPRT_TCP]), 0);
	assert_int_equal(atomic_load(&f->svc.sv_recv_bytes_held), (ADMITTED - 1) * 96 * 1024ull);
	assert_int_equal(connect_one(f, ADMITTED - 1), 0);
	assert_int_equal(connect_one(f, ADMITTED), -EAGAIN);
	served(f, 0x6001);
	for (i = 0; i < ADMITTED; i++)
		close_one(f, i);
	assert_int_equal(atomic_load(&f->svc.sv_recv_bytes_held), 0);
	assert_int_equal(atomic_load(&f->svc.sv_nconns), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_refused_by_memory, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tcp_read_ahead_counted, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
