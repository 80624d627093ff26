// SPDX-License-Identifier: MIT
/*
 * test_svc_tcp_idle.c - thousands of idle TCP connections against
 * sc_max_connections (rpcrdma-nfsd's --max-connections), issue 36: the
 * server runs as rpcrdma-nfsd runs it (rpcrdma_svc_run() on its own
 * thread, two transport threads, a worker) listening on 127.0.0.1; the
 * test opens 3,000 connections that never send a byte against a limit of
 * 1,000, from 30 loopback addresses (127.0.0.2 .. 127.0.0.31: about 100
 * each, under the per-host share of 125, so the server-wide limit is the
 * one met).
 *
 * Expected, from docs/design.md "TCP connections" and svc_tcp_adopt():
 * admission is the RDMA transport's, so a connection past the limit is
 * accepted and closed at once (the peer reads end of file), counted in
 * conns_refused and not in conns_refused_host; the connections within
 * the limit stay open (no idle timeout here); a client already served is
 * served between the batches of connections; when some idle ones close,
 * a new client gets a place and is served; when all close, no connection,
 * call context out, host place or buffer byte is left, and only the free
 * call contexts the groups keep for reuse stay registered.  Each open
 * connection holds its 4 KiB read-ahead buffer in the budget's receive
 * share: 1,000 x 4 KiB at the limit, nothing when all are gone.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cmocka.h>

#include "fake_verbs.h"
#include "tprog.h"

#include "svc/svc_internal.h"
#include "svc/svc_xprt.h"
#include "svc_tcp_fixture.h"

#define LIMIT 1000u
#define IDLE 3000u
#define HOSTS 30u
#define BATCH 100u

static struct rpcrdma_svc g_svc;
static pthread_t g_thread;
static int g_run_rc = 1;
static uint16_t g_port;
static bool g_thread_joined;

static void *run_main(void *arg)
{
	(void)arg;
	g_run_rc = rpcrdma_svc_run(&g_svc);
	return NULL;
}

static int setup(void **state)
{
	struct rpcrdma_svc_config cfg = {
		.sc_credits = 4,
		.sc_inline_size = 1024,
		.sc_max_payload = 65536,
		.sc_memory = 64u << 20,
		.sc_threads = 1,
		.sc_transport_threads = 2,
		.sc_max_connections = LIMIT,
		.sc_idle_timeout = RPCRDMA_SVC_IDLE_NEVER,
		.sc_log = stderr,
	};
	struct rlimit rl;

	(void)state;
	/* both ends of every connection live in this process */
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &rl), 0);
	if (rl.rlim_cur < 2 * IDLE + LIMIT + 256) {
		rl.rlim_cur = 2 * IDLE + LIMIT + 256;
		if (rl.rlim_max < rl.rlim_cur) {
			fprintf(stderr, "RLIMIT_NOFILE hard limit %lu: too low\n",
				(unsigned long)rl.rlim_max);
			return -1;
		}
		assert_int_equal(setrlimit(RLIMIT_NOFILE, &rl), 0);
	}
	fv_reset();
	assert_int_equal(svc_init(&g_svc, &cfg), 0);
	assert_int_equal(rpcrdma_svc_register(&g_svc, TPROG, 1, tprog_dispatch, NULL), 0);
	assert_int_equal(svc_tcp_listen(&g_svc, "127.0.0.1", 0, &g_port), 0);
	assert_int_equal(pthread_create(&g_thread, NULL, run_main, NULL), 0);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	if (!g_thread_joined) {
		rpcrdma_svc_stop(&g_svc);
		pthread_join(g_thread, NULL);
		assert_int_equal(g_run_rc, 0);
	}
	svc_tcp_unlisten(&g_svc);
	svc_fini(&g_svc);
	fv_uninstall();
	return 0;
}

/* A connection to the server from 127.0.0.@host (blocking). */
static int connect_from(unsigned host)
{
	return tcp_connect_loopback(g_port, host, 0);
}

/* Read exactly @n bytes (poll bound: 20 s, a hang only).  Return: bytes
 * read before end of file or the bound. */
static size_t read_n(int fd, uint8_t *buf, size_t n)
{
	size_t got = 0;

	while (got < n) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t r;

		if (poll(&p, 1, 20000) != 1)
			break;
		r = recv(fd, buf + got, n - got, 0);
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	return got;
}

/*
 * An ECHO of 8 bytes (RFC 5531 9 call, AUTH_NONE, one record of one
 * fragment, RFC 5531 11) on @fd; the reply must be the record RFC 5531
 * says: xid, REPLY, MSG_ACCEPTED, AUTH_NONE verifier, SUCCESS, the opaque.
 * Return: true when that reply came.
 */
static bool echo(int fd, uint32_t xid)
{
	uint8_t call[4 + 52], want[4 + 36], got[sizeof(want)], *p = call;
	const uint32_t w[] = { 0x80000000u | 52, xid, 0, 2, TPROG, 1, TP_ECHO, 0, 0, 0, 0, 8 };
	const uint32_t r[] = { 0x80000000u | 36, xid, 1, 0, 0, 0, 0, 8 };

	for (unsigned i = 0; i < 12; i++)
		p = put32(p, w[i]);
	memcpy(p, "idle-8b!", 8);
	p = want;
	for (unsigned i = 0; i < 8; i++)
		p = put32(p, r[i]);
	memcpy(p, "idle-8b!", 8);
	if (send(fd, call, sizeof(call), MSG_NOSIGNAL) != (ssize_t)sizeof(call))
		return false;
	return read_n(fd, got, sizeof(got)) == sizeof(got) &&
	       !memcmp(got, want, sizeof(want));
}

/* Has the server closed @fd's connection (end of file or a reset)?
 * Waits up to 20 s for it when @wait, else looks once. */
static bool closed_by_server(int fd, bool wait)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	uint8_t b;
	ssize_t r;

	if (poll(&p, 1, wait ? 20000 : 0) != 1)
		return false;
	r = recv(fd, &b, 1, MSG_DONTWAIT);
	return r == 0 || (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK);
}

static uint64_t ct(_Atomic uint64_t *c)
{
	return atomic_load(c);
}

/* Wait (up to 20 s: a hang only) until *@c is @v. */
static void wait_for(_Atomic uint64_t *c, uint64_t v)
{
	for (int t = 0; t < 4000 && atomic_load(c) != v; t++)
		usleep(5000);
	assert_int_equal(atomic_load(c), v);
}

static void test_idle_flood(void **state)
{
	static int idle[IDLE];
	struct svc_counters *c = &g_svc.sv_ct;
	unsigned open_n = 0, shut = 0, i;
	uint64_t mem0, nfree;
	uint32_t xid = 1;
	int served, late, later;

	(void)state;
	/* a client served before the flood: the baseline after its call */
	served = connect_from(1);
	assert_true(echo(served, xid++));
	wait_for(&c->tcp_calls_in_use, 0);
	/* the connection's read-ahead buffer (4 KiB, rpcrdma-nfsd(8)
	 * --memory) is in the receive share and the budget; the rest is one
	 * call context's */
	assert_int_equal(ct(&g_svc.sv_recv_bytes_held), 4096);
	mem0 = ct(&g_svc.sv_mem_registered) - 4096;
	assert_true(mem0 > 0);
	assert_int_equal(ct(&c->conns_open[SVC_XPRT_TCP]), 1);

	/* 3,000 connections that never send; the served client between
	 * every batch of them */
	for (i = 0; i < IDLE; i++) {
		idle[i] = connect_from(2 + i % HOSTS);
		if (i % BATCH == BATCH - 1)
			assert_true(echo(served, xid++));
	}
	/* the first 999 took the places left; 2,001 were refused (closed at
	 * once), all by the server-wide limit, none by a host's */
	wait_for(&c->conns_refused, IDLE - (LIMIT - 1));
	assert_int_equal(ct(&c->conns_open[SVC_XPRT_TCP]), LIMIT);
	assert_int_equal(ct(&c->conns_refused_host), 0);
	assert_int_equal(atomic_load(&g_svc.sv_nconns), LIMIT);
	assert_int_equal(ct(&g_svc.sv_recv_bytes_held), LIMIT * 4096ull);
	/* a refused one may be seen closed a moment after it was counted:
	 * look again (up to 20 s in all: a hang only) */
	for (int t = 0; t < 400 && shut < IDLE - (LIMIT - 1); t++) {
		for (i = 0; i < IDLE; i++)
			if (idle[i] >= 0 && closed_by_server(idle[i], false)) {
				shut++;
				close(idle[i]);
				idle[i] = -1;
			}
		if (shut < IDLE - (LIMIT - 1))
			usleep(50000);
	}
	assert_int_equal(shut, IDLE - (LIMIT - 1));
	for (i = 0; i < IDLE; i++)
		open_n += idle[i] >= 0;
	assert_int_equal(open_n, LIMIT - 1);
	assert_true(echo(served, xid++));

	/* full: a new client is refused (end of file, nothing served) */
	late = connect_from(1);
	assert_true(closed_by_server(late, true));
	close(late);
	wait_for(&c->conns_refused, IDLE - (LIMIT - 1) + 1);

	/* ten idle ones leave: a new client gets a place and is served */
	for (i = 0, shut = 0; i < IDLE && shut < 10; i++)
		if (idle[i] >= 0) {
			close(idle[i]);
			idle[i] = -1;
			shut++;
		}
	wait_for(&c->conns_open[SVC_XPRT_TCP], LIMIT - 10);
	later = connect_from(1);
	assert_true(echo(later, xid++));
	assert_int_equal(ct(&c->conns_open[SVC_XPRT_TCP]), LIMIT - 9);
	assert_true(echo(served, xid++));

	/* all leave: nothing is left of them */
	for (i = 0; i < IDLE; i++)
		if (idle[i] >= 0)
			close(idle[i]);
	close(later);
	close(served);
	wait_for(&c->conns_open[SVC_XPRT_TCP], 0);
	assert_int_equal(atomic_load(&g_svc.sv_nconns), 0);
	assert_int_equal(ct(&c->tcp_calls_in_use), 0);
	assert_int_equal(ct(&c->buf_bytes_in_use), 0);
	assert_int_equal(ct(&g_svc.sv_recv_bytes_held), 0);
	/* the call contexts the two served clients used are kept free for
	 * reuse by their groups (at most one each here): nothing else */
	assert_true(ct(&g_svc.sv_mem_registered) <= 2 * mem0);
	for (unsigned h = 1; h < 2 + HOSTS; h++) {
		struct sockaddr_in a = { .sin_family = AF_INET,
					 .sin_addr.s_addr = htonl(0x7f000000u | h) };

		assert_int_equal(svc_host_count(&g_svc, (struct sockaddr *)&a), 0);
	}
	assert_int_equal(ct(&c->conns_idle_closed[SVC_XPRT_TCP]), 0);
	assert_int_equal(ct(&c->tcp_connections), LIMIT + 1);

	/* stopped, the groups are this thread's: what is registered is their
	 * free contexts, and freeing them leaves nothing */
	rpcrdma_svc_stop(&g_svc);
	pthread_join(g_thread, NULL);
	g_thread_joined = true;
	assert_int_equal(g_run_rc, 0);
	nfree = g_svc.sv_groups[0].gr_tcp_nfree + g_svc.sv_groups[1].gr_tcp_nfree;
	assert_true(nfree >= 1 && nfree <= 2);
	assert_int_equal(ct(&g_svc.sv_mem_registered), nfree * mem0);
	svc_tcp_free_calls(&g_svc.sv_groups[0]);
	svc_tcp_free_calls(&g_svc.sv_groups[1]);
	assert_int_equal(ct(&g_svc.sv_mem_registered), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_idle_flood, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
