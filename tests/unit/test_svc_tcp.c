// SPDX-License-Identifier: MIT
/*
 * test_svc_tcp.c - the service layer's TCP transport (issue 36): RFC 5531
 * section 11 record marking, its limits, and that a TCP call reaches the
 * same dispatch as an RDMA one and its reply comes back byte-exact.
 *
 * No device and no VM: the server's end of a socketpair (or of a loopback
 * TCP connection, where a reset is wanted) is handed to the transport
 * (svc_tcp_adopt()), and the test runs the group's run loop by hand: its
 * epoll set, then the worker step on this thread, then the done queue.
 * Every expected reply is written out below from RFC 5531 section 9
 * (accepted reply: xid, REPLY, MSG_ACCEPTED, AUTH_NONE verifier, SUCCESS)
 * and the test program's definition (tprog.h: ECHO returns its opaque).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cmocka.h>
#include <stdio.h>
#include <rpcrdma/capture.h>

#include "tprog.h"

#include "svc/svc_bc.h"
#include "svc_tcp_fixture.h"

/* The server, its one socketpair connection from 192.0.2.1. */
static int setup(void **state)
{
	struct rpcrdma_svc_config cfg = {
		.sc_credits = 4,
		.sc_inline_size = 1024,
		.sc_max_payload = 65536,  /* record cap: 64 KiB + 64 KiB slack */
		.sc_memory = 64u << 20,
		.sc_threads = 1,
		.sc_transport_threads = 1,
		.sc_max_connections = 8,
		.sc_max_conns_per_host = 2,
		.sc_log = stderr,
	};

	*state = tcp_fixture_new(&cfg, TPROG, tprog_dispatch);
	return 0;
}

/* Everything handed back: no connection, no call context out. */
static void assert_baseline(struct tcp_fixture *f)
{
	assert_int_equal(atomic_load(&f->tf_svc.sv_ct.conns_open[SVC_XPRT_TCP]), 0);
	assert_int_equal(atomic_load(&f->tf_svc.sv_ct.tcp_calls_in_use), 0);
	assert_int_equal(atomic_load(&f->tf_svc.sv_nconns), 0);
	assert_null(f->tf_svc.sv_groups[0].gr_tconns);
	assert_int_equal(svc_host_count(&f->tf_svc, (struct sockaddr *)&f->tf_addr), 0);
}

static int teardown(void **state)
{
	struct tcp_fixture *f = *state;

	tcp_fixture_close(f);
	assert_baseline(f);
	tcp_fixture_free(f);
	return 0;
}

/* An ECHO call (RFC 5531 9: xid, CALL, rpcvers 2, prog, vers, proc,
 * AUTH_NONE cred and verifier) of @len bytes of @fill into @out; its
 * length in bytes. */
static size_t echo_call(uint8_t *out, uint32_t xid, uint32_t len, uint8_t fill)
{
	uint32_t w[] = { xid, 0, 2, TPROG, 1, TP_ECHO, 0, 0, 0, 0, len };
	size_t i, n = 0;

	for (i = 0; i < sizeof(w) / sizeof(w[0]); i++, n += 4)
		put32(out + n, w[i]);
	memset(out + n, fill, len);
	n += len;
	while (n % 4)
		out[n++] = 0;
	return n;
}

/* The reply to echo_call(): xid, REPLY, MSG_ACCEPTED, verifier
 * (AUTH_NONE, 0), SUCCESS, then the opaque. */
static size_t echo_reply(uint8_t *out, uint32_t xid, uint32_t len, uint8_t fill)
{
	uint32_t w[] = { xid, 1, 0, 0, 0, 0, len };
	size_t i, n = 0;

	for (i = 0; i < sizeof(w) / sizeof(w[0]); i++, n += 4)
		put32(out + n, w[i]);
	memset(out + n, fill, len);
	n += len;
	while (n % 4)
		out[n++] = 0;
	return n;
}

/* Send @rec as one record cut into fragments at the offsets @cuts. */
static void send_record(int fd, const uint8_t *rec, size_t len, const size_t *cuts,
			unsigned ncuts)
{
	size_t at = 0;
	unsigned i;
	uint8_t mark[4];

	for (i = 0; i <= ncuts; i++) {
		size_t end = i < ncuts ? cuts[i] : len;

		put32(mark, (uint32_t)(end - at) | (i == ncuts ? 0x80000000u : 0));
		tcp_write_all(fd, mark, 4);
		tcp_write_all(fd, rec + at, end - at);
		at = end;
	}
}

/* Pump until @n bytes came from the client's end (400 turns at most). */
static size_t pump_read(struct tcp_fixture *f, uint8_t *buf, size_t n)
{
	return tcp_fixture_pump_read(f, f->tf_peer, buf, n, 400);
}

/* Read one reply record (a single last fragment, as the server sends)
 * and compare it with @want. */
static void expect_reply(struct tcp_fixture *f, const uint8_t *want, size_t len)
{
	uint8_t *got = malloc(len + 4);

	assert_non_null(got);
	assert_int_equal(pump_read(f, got, len + 4), len + 4);
	assert_int_equal(get32(got), 0x80000000u | (uint32_t)len);
	assert_memory_equal(got + 4, want, len);
	free(got);
}

/* The client's end sees the server close: EOF (or a reset). */
static void expect_closed(struct tcp_fixture *f)
{
	uint8_t b[64];
	int turns;

	for (turns = 0; turns < 400; turns++) {
		ssize_t r;

		tcp_fixture_pump(f, 5);
		r = recv(f->tf_peer, b, sizeof(b), MSG_DONTWAIT);
		if (r == 0 || (r < 0 && errno != EAGAIN))
			return;
	}
	fail_msg("the server did not close the connection");
}

/* One record, one fragment: the echo comes back as RFC 5531 says. */
static void test_tcp_echo(void **state)
{
	struct tcp_fixture *f = *state;
	uint8_t call[256], want[256];
	size_t n = echo_call(call, 0x1234, 100, 0xab), m = echo_reply(want, 0x1234, 100, 0xab);

	send_record(f->tf_peer, call, n, NULL, 0);
	expect_reply(f, want, m);
	assert_int_equal(atomic_load(&f->tf_svc.sv_ct.tcp_calls), 1);
	assert_int_equal(atomic_load(&f->tf_svc.sv_ct.calls[SVC_XPRT_TCP]), 1);
	assert_int_equal(atomic_load(&f->tf_svc.sv_ct.tcp_calls_in_use), 0);
}

/* Fragments: the same call cut in three (10, 7, the rest bytes), sent one
 * byte at a time with the loop turning in between: only the fragment
 * whose mark has the top bit ends the record; one call, one reply. */
static void test_tcp_fragments(void **state)
{
	struct tcp_fixture *f = *state;
	uint8_t call[512], wire[600], want[512];
	size_t n = echo_call(call, 7, 301, 0x11), m = echo_reply(want, 7, 301, 0x11);
	size_t cuts[] = { 10, 17 }, at = 0, w = 0, i;
	unsigned k;

	for (k = 0; k <= 2; k++) {
		size_t end = k < 2 ? cuts[k] : n;

		put32(wire + w, (uint32_t)(end - at) | (k == 2 ? 0x80000000u : 0));
		w += 4;
		memcpy(wire + w, call + at, end - at);
		w += end - at;
		at = end;
	}
	for (i = 0; i < w; i++) {
		tcp_write_all(f->tf_peer, wire + i, 1);
		tcp_fixture_pump(f, 0);
		if (i + 1 < w)
			assert_int_equal(atomic_load(&f->tf_svc.sv_ct.tcp_calls), 0);
	}
	expect_reply(f, want, m);
	assert_int_equal(atomic_load(&f->tf_svc.sv_ct.tcp_calls), 1);
}

/* Records back to back in one write, a zero-length fragment among them:
 * every call answered, in order. */
static void test_tcp_pipelined(void **state)
{
	struct tcp_fixture *f = *state;
	uint8_t wire[2048], call[256], want[256];
	size_t w = 0, n, m;
	uint32_t x;

	for (x = 1; x <= 3; x++) {
		n = echo_call(call, x, 20 * x, (uint8_t)x);
		if (x == 2) { /* an empty fragment first: allowed, adds nothing */
			put32(wire + w, 0);
			w += 4;
		}
		put32(wire + w, 0x80000000u | (uint32_t)n);
		memcpy(wire + w + 4, call, n);
		w += 4 + n;
	}
	tcp_write_all(f->tf_peer, wire, w);
	for (x = 1; x <= 3; x++) {
		m = echo_reply(want, x, 20 * x, (uint8_t)x);
		expect_reply(f, want, m);
	}
	assert_int_equal(atomic_load(&f->tf_svc.sv_ct.tcp_calls), 3);
}

/* A mark announcing 2 GiB - 1 (31 bits all set, last fragment): closed at
 * once, nothing allocated, counted as a bad record. */
static void test_tcp_mark_2gib(void **state)
{
	struct tcp_fixture *f = *state;
	uint8_t mark[4];

	put32(mark, 0xffffffffu);
	tcp_write_all(f->tf_peer, mark, 4);
	expect_closed(f);
	assert_int_equal(atomic_load(&f->tf_svc.sv_ct.tcp_bad_records), 1);
	assert_int_equal(atomic_load(&f->tf_svc.sv_ct.tcp_calls), 0);
	assert_baseline(f);
}

/* Fragments each under the cap whose total is over it (96 KiB, then a
 * mark for 40 KiB more: 136 KiB > 128 KiB): closed at the second mark. */
static void test_tcp_record_over_cap(void **state)
{
	struct tcp_fixture *f = *state;
	size_t first = 96u << 10;
	uint8_t *body = calloc(1, first), mark[4];
	int turns;

	assert_non_null(body);
	put32(mark, (uint32_t)first); /* not the last */
	tcp_write_all(f->tf_peer, mark, 4);
	for (size_t at = 0; at < first;) {
		ssize_t w = send(f->tf_peer, body + at, first - at, MSG_DONTWAIT);

		if (w > 0)
			at += (size_t)w;
		tcp_fixture_pump(f, 0);
	}
	for (turns = 0; turns < 10; turns++)
		tcp_fixture_pump(f, 1);
	assert_int_equal(atomic_load(&f->tf_svc.sv_ct.conns_open[SVC_XPRT_TCP]), 1);
	put32(mark, 0x80000000u | (40u << 10));
	tcp_write_all(f->tf_peer, mark, 4);
	expect_closed(f);
	assert_int_equal(atomic_load(&f->tf_svc.sv_ct.tcp_bad_records), 1);
	assert_baseline(f);
	free(body);
}

/* A peer that stops mid-record is closed after the record deadline, and
 * not before; another connection is served meanwhile. */
static void test_tcp_stall(void **state)
{
	struct tcp_fixture *f = *state;
	struct svc_group *grp = &f->tf_svc.sv_groups[0];
	uint8_t call[256], want[256], mark[4];
	size_t n = echo_call(call, 9, 64, 0x77), m = echo_reply(want, 9, 64, 0x77);
	struct sockaddr_in other = f->tf_addr;
	uint64_t t0;
	int sv[2], peer1 = f->tf_peer;

	f->tf_svc.sv_tcp_record_ms = 200;
	put32(mark, 0x80000000u | (uint32_t)n);
	tcp_write_all(peer1, mark, 4);
	tcp_write_all(peer1, call, n / 2);
	tcp_fixture_pump(f, 0);
	t0 = svc_now_ms();
	/* Another client meanwhile. */
	other.sin_addr.s_addr = htonl(0xc0000202);
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	assert_int_equal(svc_tcp_adopt(grp, sv[0], (struct sockaddr *)&other), 0);
	f->tf_peer = sv[1];
	send_record(f->tf_peer, call, n, NULL, 0);
	expect_reply(f, want, m);
	/* Before the deadline: still open. */
	grp->gr_tcp_sweep_ms = 0;
	svc_tcp_sweep(grp, t0 + 150);
	assert_int_equal(atomic_load(&f->tf_svc.sv_ct.conns_open[SVC_XPRT_TCP]), 2);
	assert_int_equal(atomic_load(&f->tf_svc.sv_ct.tcp_record_timeouts), 0);
	/* After it: closed, counted, the other one untouched. */
	grp->gr_tcp_sweep_ms = 0;
	svc_tcp_sweep(grp, t0 + 1000);
	assert_int_equal(atomic_load(&f->tf_svc.sv_ct.tcp_record_timeouts), 1);
	assert_int_equal(atomic_load(&f->tf_svc.sv_ct.conns_open[SVC_XPRT_TCP]), 1);
	assert_int_equal(recv(peer1, mark, sizeof(mark), MSG_DONTWAIT), 0); /* EOF */
	close(peer1);
	send_record(f->tf_peer, call, n, NULL, 0);
	expect_reply(f, want, m);
}

/* A program whose every call the caller's credential is too weak for. */
#define WEAKPROG 0x2000009au

static int weak_dispatch(struct rpcrdma_svc_req *req, void *arg)
{
	(void)arg;
	req->rq_auth_stat = RPCRDMA_AUTH_TOOWEAK;
	return RPCRDMA_SVC_AUTH_ERROR;
}

/*
 * The replies RFC 5531 section 9 gives calls the server does not run,
 * over TCP (one record each): an RPC version other than 2 is MSG_DENIED
 * RPC_MISMATCH with low = high = 2; arguments that do not decode are
 * MSG_ACCEPTED GARBAGE_ARGS; an unknown procedure PROC_UNAVAIL; a
 * dispatch function that refuses the credential is MSG_DENIED AUTH_ERROR
 * with its auth_stat (AUTH_TOOWEAK, 5).  The connection serves on.
 */
static void test_tcp_rpc_rejects(void **state)
{
	struct tcp_fixture *f = *state;
	/* xid, CALL, rpcvers, prog, vers, proc, cred AUTH_NONE, verf AUTH_NONE */
	static const uint32_t badvers[] = { 0x31, 0, 3, TPROG, 1, TP_NULL, 0, 0, 0, 0 };
	static const uint32_t badvers_r[] = { 0x31, 1, 1, 0, 2, 2 };
	/* ECHO of an opaque said to be 1000 bytes, 4 of them there */
	static const uint32_t garbage[] = { 0x32, 0, 2, TPROG, 1, TP_ECHO, 0, 0, 0, 0, 1000, 0 };
	static const uint32_t garbage_r[] = { 0x32, 1, 0, 0, 0, 4 };
	static const uint32_t noproc[] = { 0x33, 0, 2, TPROG, 1, 9, 0, 0, 0, 0 };
	static const uint32_t noproc_r[] = { 0x33, 1, 0, 0, 0, 3 };
	static const uint32_t weak[] = { 0x34, 0, 2, WEAKPROG, 1, 0, 0, 0, 0, 0 };
	static const uint32_t weak_r[] = { 0x34, 1, 1, 1, 5 };
	uint8_t call[64], want[64], echo[256];
	size_t n, m;

	assert_int_equal(rpcrdma_svc_register(&f->tf_svc, WEAKPROG, 1, weak_dispatch, NULL), 0);
	n = tcp_words(call, badvers, 10);
	m = tcp_words(want, badvers_r, 6);
	send_record(f->tf_peer, call, n, NULL, 0);
	expect_reply(f, want, m);
	n = tcp_words(call, garbage, 12);
	m = tcp_words(want, garbage_r, 6);
	send_record(f->tf_peer, call, n, NULL, 0);
	expect_reply(f, want, m);
	n = tcp_words(call, noproc, 10);
	m = tcp_words(want, noproc_r, 6);
	send_record(f->tf_peer, call, n, NULL, 0);
	expect_reply(f, want, m);
	n = tcp_words(call, weak, 10);
	m = tcp_words(want, weak_r, 5);
	send_record(f->tf_peer, call, n, NULL, 0);
	expect_reply(f, want, m);
	/* and an echo as before */
	n = echo_call(echo, 0x35, 16, 0x11);
	send_record(f->tf_peer, echo, n, NULL, 0);
	m = echo_reply(echo, 0x35, 16, 0x11);
	expect_reply(f, echo, m);
}

/* rpcrdma_svc_conn_state_fn of the idle test: the answer it gives, and
 * the connection it was asked about */
static bool g_keep;
static uint32_t g_asked;

static bool keep_conn(uint32_t conn_id, void *arg)
{
	(void)arg;
	g_asked = conn_id;
	return g_keep;
}

/*
 * The idle timeout on TCP (sc_idle_timeout left 0: 360 s, knfsd's six
 * minutes, include/rpcrdma/svc.h): a connection whose last call was
 * answered is kept at 359 s of silence, and at 361 s while the upper
 * layer says it holds state (rpcrdma_svc_set_conn_state(): a session's
 * back channel); when it no longer does, it is closed, counted in
 * conns_idle_closed, and the peer reads end of file.  The sweep is
 * called with the times it is to see, so no clock is waited for.
 */
static void test_tcp_idle_close(void **state)
{
	struct tcp_fixture *f = *state;
	struct svc_group *grp = &f->tf_svc.sv_groups[0];
	uint8_t call[256], want[256], b[4];
	size_t n = echo_call(call, 21, 8, 0x5a), m = echo_reply(want, 21, 8, 0x5a);
	uint64_t t0;

	assert_int_equal(f->tf_svc.sv_cfg.sc_idle_timeout, 360);
	assert_int_equal(rpcrdma_svc_set_conn_state(&f->tf_svc, keep_conn, NULL), 0);
	send_record(f->tf_peer, call, n, NULL, 0);
	expect_reply(f, want, m);
	t0 = svc_now_ms(); /* the last message was before this */
	grp->gr_tcp_sweep_ms = 0;
	svc_tcp_sweep(grp, t0 + 359000 - 1000); /* under 360 s since it */
	assert_int_equal(atomic_load(&f->tf_svc.sv_ct.conns_open[SVC_XPRT_TCP]), 1);
	g_keep = true;
	g_asked = 0;
	grp->gr_tcp_sweep_ms = 0;
	svc_tcp_sweep(grp, t0 + 361000);
	assert_int_equal(atomic_load(&f->tf_svc.sv_ct.conns_open[SVC_XPRT_TCP]), 1);
	assert_int_not_equal(g_asked, 0); /* asked about this one */
	assert_int_equal(atomic_load(&f->tf_svc.sv_ct.conns_idle_closed[SVC_XPRT_TCP]), 0);
	g_keep = false;
	grp->gr_tcp_sweep_ms = 0;
	svc_tcp_sweep(grp, t0 + 361000);
	assert_int_equal(atomic_load(&f->tf_svc.sv_ct.conns_open[SVC_XPRT_TCP]), 0);
	assert_int_equal(atomic_load(&f->tf_svc.sv_ct.conns_idle_closed[SVC_XPRT_TCP]), 1);
	assert_int_equal(recv(f->tf_peer, b, sizeof(b), MSG_DONTWAIT), 0); /* EOF */
}

/*
 * A peer that sends calls and never reads the replies: once the server's
 * write would block, the reply has sv_tcp_send_ms to be taken; a sweep
 * before that keeps the connection, one after it closes it, counted in
 * tcp_send_timeouts (not as idle: its calls are out), and every context
 * comes back (the teardown's baseline).
 */
static void test_tcp_send_deadline(void **state)
{
	struct tcp_fixture *f = *state;
	struct svc_group *grp = &f->tf_svc.sv_groups[0];
	static uint8_t call[61000];
	size_t n = echo_call(call, 0, 60000, 0x33);
	int small = 4096, sv[2];
	uint64_t t0;

	/* a connection of its own with small buffers both sides */
	close(f->tf_peer);
	f->tf_peer = -1;
	tcp_fixture_pump(f, 5); /* the fixture's connection goes */
	assert_int_equal(atomic_load(&f->tf_svc.sv_ct.conns_open[SVC_XPRT_TCP]), 0);
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	assert_int_equal(setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &small, sizeof(small)), 0);
	assert_int_equal(setsockopt(sv[1], SOL_SOCKET, SO_RCVBUF, &small, sizeof(small)), 0);
	assert_int_equal(svc_tcp_adopt(grp, sv[0], (struct sockaddr *)&f->tf_addr), 0);
	f->tf_peer = sv[1];
	f->tf_svc.sv_tcp_send_ms = 60000;
	for (uint32_t i = 0; i < 2; i++) {
		put32(call, 100 + i);
		send_record(f->tf_peer, call, n, NULL, 0);
		for (int k = 0; k < 20; k++)
			tcp_fixture_pump(f, 5);
	}
	t0 = svc_now_ms();
	grp->gr_tcp_sweep_ms = 0;
	svc_tcp_sweep(grp, t0);
	assert_int_equal(atomic_load(&f->tf_svc.sv_ct.conns_open[SVC_XPRT_TCP]), 1);
	assert_int_equal(atomic_load(&f->tf_svc.sv_ct.tcp_send_timeouts), 0);
	grp->gr_tcp_sweep_ms = 0;
	svc_tcp_sweep(grp, t0 + 61000);
	assert_int_equal(atomic_load(&f->tf_svc.sv_ct.tcp_send_timeouts), 1);
	assert_int_equal(atomic_load(&f->tf_svc.sv_ct.conns_open[SVC_XPRT_TCP]), 0);
	assert_int_equal(atomic_load(&f->tf_svc.sv_ct.conns_idle_closed[SVC_XPRT_TCP]), 0);
	for (int k = 0; k < 20; k++)
		tcp_fixture_pump(f, 5); /* the replies' contexts come back */
}

/* A reset mid-reply: a loopback TCP client asks for large replies, reads
 * a few bytes, and resets the connection (SO_LINGER 0).  The server's
 * writes fail, the connection goes, and every context comes back. */
static void test_tcp_reset_mid_reply(void **state)
{
	struct tcp_fixture *f = *state;
	uint16_t port;
	uint8_t call[64];
	int fd, turns;
	uint32_t x;

	fd = tcp_fixture_second_client(f, &port);
	assert_int_equal(atomic_load(&f->tf_svc.sv_ct.conns_open[SVC_XPRT_TCP]), 2);
	/* Forty calls for 100,000 bytes each (the reply buffer holds 128 KiB): more than the socket buffers take
	 * (the client's receive buffer is small; the server's send buffer
	 * grows to 4 MiB at most by Linux's default tcp_wmem). */
	for (x = 1; x <= 40; x++) {
		uint32_t w[] = { 0x80000000u | 44, x, 0, 2, TPROG, 1, TP_BIG, 0, 0, 0, 0,
				 100000 };

		for (unsigned i = 0; i < 12; i++)
			put32(call + 4 * i, w[i]);
		tcp_write_all(fd, call, 48);
	}
	for (turns = 0; turns < 50; turns++)
		tcp_fixture_pump(f, 2);
	assert_true(atomic_load(&f->tf_svc.sv_ct.tcp_calls_in_use) > 0); /* replies waiting */
	tcp_fixture_reset_second(f, fd);
}

/* A connection has at most sc_credits (4) calls out: six records sent at
 * once are read four at a time, and all are answered. */
static void test_tcp_calls_capped(void **state)
{
	struct tcp_fixture *f = *state;
	struct svc_group *grp = &f->tf_svc.sv_groups[0];
	struct epoll_event evs[8];
	uint8_t wire[2048], call[128], want[128];
	size_t w = 0, n, m;
	uint32_t x;
	int k, i;

	for (x = 1; x <= 6; x++) {
		n = echo_call(call, x, 8, (uint8_t)x);
		put32(wire + w, 0x80000000u | (uint32_t)n);
		memcpy(wire + w + 4, call, n);
		w += 4 + n;
	}
	tcp_write_all(f->tf_peer, wire, w);
	/* The loop reads, but no worker runs: four calls out, then it stops. */
	for (k = 0; k < 5; k++) {
		int ne = epoll_wait(grp->gr_epoll, evs, 8, 5);

		for (i = 0; i < ne; i++)
			svc_tcp_event(grp, evs[i].data.ptr, evs[i].events);
	}
	assert_int_equal(atomic_load(&f->tf_svc.sv_ct.tcp_calls), 4);
	assert_int_equal(atomic_load(&f->tf_svc.sv_ct.tcp_calls_in_use), 4);
	for (x = 1; x <= 6; x++) {
		m = echo_reply(want, x, 8, (uint8_t)x);
		expect_reply(f, want, m);
	}
	assert_int_equal(atomic_load(&f->tf_svc.sv_ct.tcp_calls), 6);
}

/* The memory budget: with room for two TCP call contexts only, four
 * records sent at once are served two at a time; the connection waits
 * for contexts to come back, it is not closed. */
static void test_tcp_budget_waits(void **state)
{
	struct tcp_fixture *f = *state;
	struct svc_group *grp = &f->tf_svc.sv_groups[0];
	struct epoll_event evs[8];
	uint8_t wire[2048], call[128], want[128];
	size_t w = 0, n, m;
	uint32_t x;
	int k, i;

	/* Two contexts' reply buffers (128 KiB + 4 bytes each), not three. */
	f->tf_svc.sv_cfg.sc_memory = 3u * (128u << 10);
	for (x = 1; x <= 4; x++) {
		n = echo_call(call, x, 8, (uint8_t)x);
		put32(wire + w, 0x80000000u | (uint32_t)n);
		memcpy(wire + w + 4, call, n);
		w += 4 + n;
	}
	tcp_write_all(f->tf_peer, wire, w);
	for (k = 0; k < 5; k++) {
		int ne = epoll_wait(grp->gr_epoll, evs, 8, 5);

		for (i = 0; i < ne; i++)
			svc_tcp_event(grp, evs[i].data.ptr, evs[i].events);
	}
	assert_int_equal(atomic_load(&f->tf_svc.sv_ct.tcp_calls), 2);
	assert_int_equal(atomic_load(&f->tf_svc.sv_ct.conns_open[SVC_XPRT_TCP]), 1);
	for (x = 1; x <= 4; x++) {
		m = echo_reply(want, x, 8, (uint8_t)x);
		expect_reply(f, want, m);
	}
	assert_int_equal(atomic_load(&f->tf_svc.sv_ct.tcp_calls), 4);
	assert_true(atomic_load(&f->tf_svc.sv_mem_registered) <= 3u * (128u << 10));
}

/* An event for a connection that a reply's failed write closed earlier in
 * the same turn of the loop (epoll_wait() returned both): the connection
 * is let go of but not freed until the turn ends (ASan: no use after
 * free). */
static void test_tcp_event_after_close(void **state)
{
	struct tcp_fixture *f = *state;
	struct svc_group *grp = &f->tf_svc.sv_groups[0];
	struct epoll_event evs[8], ev = { 0 };
	uint8_t call[256];
	size_t n = echo_call(call, 3, 16, 0x33);
	int k, ne = 0, i;

	send_record(f->tf_peer, call, n, NULL, 0);
	/* read and queued for a worker, not served yet */
	for (k = 0; k < 20 && !atomic_load(&f->tf_svc.sv_ct.tcp_calls); k++) {
		ne = epoll_wait(grp->gr_epoll, evs, 8, 5);
		for (i = 0; i < ne; i++)
			svc_tcp_event(grp, evs[i].data.ptr, evs[i].events);
	}
	assert_int_equal(atomic_load(&f->tf_svc.sv_ct.tcp_calls), 1);
	close(f->tf_peer); /* the reply will not go; the socket reads EOF */
	f->tf_peer = -1;
	assert_true(svc_worker_run_one(grp));
	ne = epoll_wait(grp->gr_epoll, evs, 8, 100);
	assert_true(ne >= 1);
	ev = evs[0];
	svc_take_done(grp); /* the reply's write fails: closed, let go of */
	assert_int_equal(atomic_load(&f->tf_svc.sv_ct.conns_open[SVC_XPRT_TCP]), 0);
	svc_tcp_event(grp, ev.data.ptr, ev.events); /* the stale event */
	svc_tcp_reap(grp);
	assert_baseline(f);
}

/* Admission is shared with RDMA: sc_max_conns_per_host (2) from one
 * host, the third refused and counted. */
static void test_tcp_admission(void **state)
{
	struct tcp_fixture *f = *state;
	struct svc_group *grp = &f->tf_svc.sv_groups[0];
	int a[2], b[2];

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, a), 0);
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, b), 0);
	assert_int_equal(svc_tcp_adopt(grp, a[0], (struct sockaddr *)&f->tf_addr), 0);
	assert_int_equal(svc_tcp_adopt(grp, b[0], (struct sockaddr *)&f->tf_addr), -EBUSY);
	assert_int_equal(atomic_load(&f->tf_svc.sv_ct.conns_refused_host), 1);
	assert_int_equal(atomic_load(&f->tf_svc.sv_ct.conns_open[SVC_XPRT_TCP]), 2);
	/* b[0] was closed by the refusal: its peer reads EOF. */
	assert_int_equal(recv(b[1], a, 1, MSG_DONTWAIT), 0);
	close(a[1]);
	close(b[1]);
	for (int t = 0; t < 50 && atomic_load(&f->tf_svc.sv_ct.conns_open[SVC_XPRT_TCP]) > 1; t++)
		tcp_fixture_pump(f, 2);
	assert_int_equal(atomic_load(&f->tf_svc.sv_ct.conns_open[SVC_XPRT_TCP]), 1);
}

/* ---------- the backchannel over TCP (RFC 8881 2.10.3.1) ---------- */

/* What the dispatch function of TPROG + 1 got, and each call's outcome. */
struct bc_seen {
	int bs_get_rc;
	uint32_t bs_conn_id;
	struct rpcrdma_svc_bc *bs_bc;
	int bs_done;          /* ba_done ran this many times */
	int bs_status;        /* its last status */
	uint32_t bs_reply_stat, bs_accept_stat, bs_res_len;
	uint8_t bs_res[16];
};

/* The forward call's dispatch: take the connection's backchannel. */
static int bc_probe(struct rpcrdma_svc_req *req, void *arg)
{
	struct bc_seen *bs = arg;

	bs->bs_get_rc = rpcrdma_svc_bc_get(req, &bs->bs_bc);
	bs->bs_conn_id = rpcrdma_svc_req_conn_id(req);
	return RPCRDMA_SVC_SUCCESS;
}

static void bc_done(void *arg, int status, const struct rpcrdma_rpc_msg *msg,
		    const uint8_t *res, size_t res_len)
{
	struct bc_seen *bs = arg;

	bs->bs_done++;
	bs->bs_status = status;
	if (msg) {
		bs->bs_reply_stat = msg->rm_reply_stat;
		bs->bs_accept_stat = msg->rm_accept_stat;
	}
	bs->bs_res_len = (uint32_t)res_len;
	if (res && res_len <= sizeof(bs->bs_res))
		memcpy(bs->bs_res, res, res_len);
}

/* A forward call of TPROG + 1 (xid 5, no credential) whose dispatch takes
 * the backchannel; its reply (RFC 5531 9: accepted, SUCCESS) comes back. */
static void bc_forward(struct tcp_fixture *f, struct bc_seen *bs)
{
	uint8_t call[64], want[64];
	uint32_t w[] = { 5, 0, 2, TPROG + 1, 1, 0, 0, 0, 0, 0 };
	uint32_t r[] = { 5, 1, 0, 0, 0, 0 };

	assert_int_equal(rpcrdma_svc_register(&f->tf_svc, TPROG + 1, 1, bc_probe, bs), 0);
	for (unsigned i = 0; i < 10; i++)
		put32(call + 4 * i, w[i]);
	for (unsigned i = 0; i < 6; i++)
		put32(want + 4 * i, r[i]);
	send_record(f->tf_peer, call, 40, NULL, 0);
	expect_reply(f, want, 24);
	assert_int_equal(bs->bs_get_rc, 0);
	assert_non_null(bs->bs_bc);
	assert_true(bs->bs_conn_id > 0);
	assert_int_equal(rpcrdma_svc_bc_conn_id(bs->bs_bc), bs->bs_conn_id);
}

/* Start a callback-program call (program 0x40000000, version 1, @proc,
 * AUTH_NONE, @args) on @bs's handle. */
static uint32_t bc_start(struct bc_seen *bs, uint32_t proc, const void *args, size_t len)
{
	struct rpcrdma_svc_bc_args a = {
		.ba_prog = 0x40000000u, .ba_vers = 1, .ba_proc = proc,
		.ba_cred_flavor = 0, .ba_args = args, .ba_args_len = len,
		.ba_done = bc_done, .ba_done_arg = bs,
	};
	uint32_t xid = 0;

	assert_int_equal(rpcrdma_svc_bc_call(bs->bs_bc, &a, &xid), 0);
	return xid;
}

/* The run loop's backchannel turn, then what the client's end reads. */
static void bc_expect_call(struct tcp_fixture *f, uint32_t xid, uint32_t proc,
			   const uint8_t *args, size_t len)
{
	uint8_t got[128], want[128];
	uint32_t w[] = { xid, 0 /* CALL */, 2, 0x40000000u, 1, proc, 0, 0, 0, 0 };

	for (unsigned i = 0; i < 10; i++)
		put32(want + 4 * i, w[i]);
	if (len)
		memcpy(want + 40, args, len);
	svc_bc_run(&f->tf_svc.sv_groups[0]);
	assert_int_equal(pump_read(f, got, 4 + 40 + len), 4 + 40 + len);
	/* one record of one fragment: last-fragment bit and its length */
	assert_int_equal(get32(got), 0x80000000u | (uint32_t)(40 + len));
	assert_memory_equal(got + 4, want, 40 + len);
}

/* The client answers @xid: accepted, SUCCESS, then @res. */
static void bc_answer(struct tcp_fixture *f, uint32_t xid, const uint8_t *res, size_t len)
{
	uint8_t rep[64];
	uint32_t r[] = { xid, 1 /* REPLY */, 0 /* MSG_ACCEPTED */, 0, 0, 0 /* SUCCESS */ };

	for (unsigned i = 0; i < 6; i++)
		put32(rep + 4 * i, r[i]);
	if (len)
		memcpy(rep + 24, res, len);
	send_record(f->tf_peer, rep, 24 + len, NULL, 0);
}

/* A backchannel call goes out on the TCP connection the forward call
 * came on, record-marked, and the client's reply is matched by xid; a
 * reply with another xid is dropped as unmatched. */
static void test_tcp_backchannel(void **state)
{
	struct tcp_fixture *f = *state;
	struct bc_seen bs = { .bs_get_rc = 1 };
	const uint8_t args[8] = { 0, 0, 0, 1, 0xde, 0xad, 0xbe, 0xef };
	const uint8_t res[4] = { 0, 0, 0, 7 };
	uint32_t xid;

	bc_forward(f, &bs);
	assert_true(rpcrdma_svc_bc_connected(bs.bs_bc));
	/* CB_NULL-like: procedure 0, no arguments */
	xid = bc_start(&bs, 0, NULL, 0);
	bc_expect_call(f, xid, 0, NULL, 0);
	assert_int_equal(atomic_load(&f->tf_svc.sv_ct.bc_calls), 1);
	assert_int_equal(bs.bs_done, 0);
	/* a reply naming another xid is not this call's */
	bc_answer(f, xid + 1000, NULL, 0);
	for (int t = 0; t < 50 && !atomic_load(&f->tf_svc.sv_ct.bc_unmatched); t++)
		tcp_fixture_pump(f, 2);
	assert_int_equal(atomic_load(&f->tf_svc.sv_ct.bc_unmatched), 1);
	assert_int_equal(bs.bs_done, 0);
	bc_answer(f, xid, NULL, 0);
	for (int t = 0; t < 100 && !bs.bs_done; t++)
		tcp_fixture_pump(f, 2);
	assert_int_equal(bs.bs_done, 1);
	assert_int_equal(bs.bs_status, 0);
	assert_int_equal(bs.bs_reply_stat, RPC_MSG_ACCEPTED);
	assert_int_equal(bs.bs_accept_stat, 0);
	assert_int_equal(bs.bs_res_len, 0);
	/* procedure 1 with arguments: they follow the header; the results
	 * come back to the caller */
	xid = bc_start(&bs, 1, args, sizeof(args));
	bc_expect_call(f, xid, 1, args, sizeof(args));
	bc_answer(f, xid, res, sizeof(res));
	for (int t = 0; t < 100 && bs.bs_done < 2; t++)
		tcp_fixture_pump(f, 2);
	assert_int_equal(bs.bs_done, 2);
	assert_int_equal(bs.bs_status, 0);
	assert_int_equal(bs.bs_res_len, 4);
	assert_memory_equal(bs.bs_res, res, 4);
	assert_int_equal(atomic_load(&f->tf_svc.sv_ct.bc_replies), 2);
	assert_int_equal(atomic_load(&f->tf_svc.sv_ct.tcp_calls_in_use), 0);
	rpcrdma_svc_bc_put(bs.bs_bc);
}

/* A call out when the connection goes ends with -ENOTCONN; the handle
 * then refuses new calls, and is freed with its last reference. */
static void test_tcp_backchannel_close(void **state)
{
	struct tcp_fixture *f = *state;
	struct bc_seen bs = { .bs_get_rc = 1 };
	struct rpcrdma_svc_bc_args a = { .ba_prog = 0x40000000u, .ba_vers = 1,
					 .ba_done = bc_done, .ba_done_arg = &bs };
	uint32_t xid;

	bc_forward(f, &bs);
	xid = bc_start(&bs, 0, NULL, 0);
	bc_expect_call(f, xid, 0, NULL, 0);
	close(f->tf_peer);
	f->tf_peer = -1;
	for (int t = 0; t < 100 && !bs.bs_done; t++)
		tcp_fixture_pump(f, 2);
	assert_int_equal(bs.bs_done, 1);
	assert_int_equal(bs.bs_status, -ENOTCONN);
	assert_false(rpcrdma_svc_bc_connected(bs.bs_bc));
	assert_int_equal(rpcrdma_svc_bc_call(bs.bs_bc, &a, NULL), -ENOTCONN);
	svc_tcp_reap(&f->tf_svc.sv_groups[0]);
	rpcrdma_svc_bc_put(bs.bs_bc);
}

/* No reply within the call's timeout: -ETIMEDOUT, counted. */
static void test_tcp_backchannel_timeout(void **state)
{
	struct tcp_fixture *f = *state;
	struct bc_seen bs = { .bs_get_rc = 1 };
	struct rpcrdma_svc_bc_args a = { .ba_prog = 0x40000000u, .ba_vers = 1,
					 .ba_timeout_ms = 20,
					 .ba_done = bc_done, .ba_done_arg = &bs };
	uint32_t xid;

	bc_forward(f, &bs);
	assert_int_equal(rpcrdma_svc_bc_call(bs.bs_bc, &a, &xid), 0);
	bc_expect_call(f, xid, 0, NULL, 0);
	for (int t = 0; t < 400 && !bs.bs_done; t++) {
		usleep(2000); /* the deadline is 20 ms away: 0.8 s at most */
		tcp_fixture_pump(f, 0);
		svc_bc_run(&f->tf_svc.sv_groups[0]);
	}
	assert_int_equal(bs.bs_done, 1);
	assert_int_equal(bs.bs_status, -ETIMEDOUT);
	assert_int_equal(atomic_load(&f->tf_svc.sv_ct.bc_timeouts), 1);
	/* the late reply is dropped as unmatched */
	bc_answer(f, xid, NULL, 0);
	for (int t = 0; t < 50 && !atomic_load(&f->tf_svc.sv_ct.bc_unmatched); t++)
		tcp_fixture_pump(f, 2);
	assert_int_equal(atomic_load(&f->tf_svc.sv_ct.bc_unmatched), 1);
	assert_int_equal(bs.bs_done, 1);
	rpcrdma_svc_bc_put(bs.bs_bc);
}

/* ---------- capture of TCP traffic (docs/observability.md) ---------- */

/* Is tshark on the PATH? */
static bool have_tshark(void)
{
	return system("command -v tshark >/dev/null 2>&1") == 0;
}

/* Over a loopback TCP connection with a capture attached: two echo calls
 * (one in two fragments) and their replies are written as Ethernet/IPv4/
 * TCP frames (four), which tshark (when installed; skipped otherwise)
 * decodes as ONC RPC: each xid once as a call (msg_type 0) of program
 * TPROG and once as a reply (msg_type 1). */
static void test_tcp_capture(void **state)
{
	struct tcp_fixture *f = *state;
	char path[] = "/tmp/test_svc_tcp_capXXXXXX", cmd[512], line[256];
	struct rpcrdma_capture_config cfg = { .cc_path = path, .cc_max_files = 1 };
	struct rpcrdma_capture *cap;
	struct rpcrdma_capture_stats st;
	uint8_t call[256], want[256], got[300];
	size_t n = echo_call(call, 0x1234, 40, 0x55), m = echo_reply(want, 0x1234, 40, 0x55);
	size_t cut[] = { 20 };
	uint16_t port = 0;
	int fd, tmp, turns, calls = 0, replies = 0;
	FILE *pp;

	tmp = mkstemp(path);
	assert_true(tmp >= 0);
	close(tmp);
	unlink(path); /* the writer makes it, O_EXCL */
	assert_int_equal(rpcrdma_capture_open(&cfg, &cap), 0);
	assert_int_equal(rpcrdma_svc_set_capture(&f->tf_svc, cap), 0);
	assert_int_equal(svc_tcp_listen(&f->tf_svc, "127.0.0.1", 0, &port), 0);
	fd = tcp_connect_loopback(port, 0, 0);
	for (turns = 0; turns < 100 && atomic_load(&f->tf_svc.sv_ct.tcp_connections) < 2; turns++)
		tcp_fixture_pump(f, 5);
	send_record(fd, call, n, NULL, 0);
	n = echo_call(call, 0x1235, 40, 0x66);
	send_record(fd, call, n, cut, 1);
	for (size_t have = 0, need = 2 * (m + 4); have < need && turns < 500; turns++) {
		ssize_t r;

		tcp_fixture_pump(f, 5);
		r = recv(fd, got + have, need - have, MSG_DONTWAIT);
		if (r > 0)
			have += (size_t)r;
	}
	assert_memory_equal(got + 4, want, m);
	close(fd);
	for (turns = 0; turns < 100 && atomic_load(&f->tf_svc.sv_ct.conns_open[SVC_XPRT_TCP]) > 1; turns++)
		tcp_fixture_pump(f, 5);
	svc_tcp_unlisten(&f->tf_svc);
	f->tf_svc.sv_capture = NULL;
	rpcrdma_capture_close(cap, &st);
	assert_int_equal(st.cs_drops, 0);
	assert_int_equal(st.cs_frames, 4); /* two calls in, two replies out */
	if (!have_tshark()) {
		unlink(path);
		skip();
	}
	/* tshark's own decode: RPC over TCP on the server's port ("Decode
	 * As": it is not 2049), a program it does not know dissected too */
	snprintf(cmd, sizeof(cmd),
		 "tshark -r %s -o rpc.dissect_unknown_programs:TRUE -d tcp.port==%u,rpc "
		 "-Y rpc -T fields -e rpc.xid -e rpc.msgtyp -e rpc.program 2>/dev/null",
		 path, port);
	pp = popen(cmd, "r");
	assert_non_null(pp);
	while (fgets(line, sizeof(line), pp)) {
		unsigned xid, typ, prog = 0;

		if (sscanf(line, "0x%x %u %u", &xid, &typ, &prog) < 2)
			continue;
		assert_true(xid == 0x1234 || xid == 0x1235);
		if (typ == 0) {
			assert_int_equal(prog, TPROG);
			calls++;
		} else {
			assert_int_equal(typ, 1);
			replies++;
		}
	}
	pclose(pp);
	if (!getenv("KEEP_PCAP"))
		unlink(path);
	assert_int_equal(calls, 2);
	assert_int_equal(replies, 2);
}

/* Large records (over SVC_TCP_KEEP_CALL_BYTES): the first one's buffer is
 * kept by the group when its call ends (counted against the memory
 * budget), the second is read into that same buffer (still one kept, the
 * same one); freeing the pools takes the budget back to the one open
 * connection's read-ahead buffer. */
static void test_tcp_big_kept(void **state)
{
	struct tcp_fixture *f = *state;
	struct svc_group *grp = &f->tf_svc.sv_groups[0];
	uint32_t len = 100000, x;
	size_t n, m;
	uint8_t *call = malloc(len + 64), *want = malloc(len + 64);
	struct svc_tcp_big *kept = NULL;
	/* the connection's own charge (its read-ahead buffer) */
	uint64_t base = atomic_load(&f->tf_svc.sv_mem_registered);

	assert_non_null(call);
	assert_non_null(want);
	assert_int_equal(grp->gr_tcp_nbig, 0);
	for (x = 1; x <= 2; x++) {
		n = echo_call(call, x, len, (uint8_t)(0x40 + x));
		m = echo_reply(want, x, len, (uint8_t)(0x40 + x));
		send_record(f->tf_peer, call, n, NULL, 0);
		expect_reply(f, want, m);
		tcp_fixture_pump(f, 0);
		assert_int_equal(atomic_load(&f->tf_svc.sv_ct.tcp_calls_in_use), 0);
		assert_int_equal(grp->gr_tcp_nbig, 1);
		if (x == 1)
			kept = grp->gr_tcp_big;
		else
			assert_ptr_equal(grp->gr_tcp_big, kept); /* reused, not a second one */
		/* the kept buffer counts: at least the record's bytes */
		assert_true(atomic_load(&f->tf_svc.sv_mem_registered) >= n);
	}
	assert_int_equal(atomic_load(&f->tf_svc.sv_ct.tcp_calls), 2);
	svc_tcp_free_calls(grp);
	assert_int_equal(grp->gr_tcp_nbig, 0);
	assert_int_equal(atomic_load(&f->tf_svc.sv_mem_registered), base);
	free(call);
	free(want);
}

/* Over loopback TCP, a large record whose first 10,000 bytes come alone:
 * the server's socket is told to wake its reader only once the
 * fragment's rest is there (SO_RCVLOWAT = the record's 100,044 bytes
 * less the 10,000 - 4 of them read), and back to 1 once it is read and
 * answered; the reply is byte-exact. */
static void test_tcp_lowat(void **state)
{
	struct tcp_fixture *f = *state;
	struct svc_group *grp = &f->tf_svc.sv_groups[0];
	uint32_t len = 100000;
	uint8_t *call = malloc(len + 64), *want = malloc(len + 64), *got = malloc(len + 68);
	uint16_t port = 0;
	int fd, sfd, lowat, turns;
	socklen_t sl = sizeof(lowat);
	size_t n, m, have = 0;

	assert_non_null(call);
	assert_non_null(want);
	assert_non_null(got);
	assert_int_equal(svc_tcp_listen(&f->tf_svc, "127.0.0.1", 0, &port), 0);
	fd = tcp_connect_loopback(port, 0, 0);
	for (turns = 0; turns < 100 && atomic_load(&f->tf_svc.sv_ct.tcp_connections) < 2; turns++)
		tcp_fixture_pump(f, 5);
	assert_non_null(grp->gr_tconns);
	sfd = svc_tcp_sockfd(grp->gr_tconns); /* the newest: the loopback one */
	n = echo_call(call + 4, 9, len, 0x77);
	assert_int_equal(n, 100044);
	put32(call, 0x80000000u | (uint32_t)n);
	tcp_write_all(fd, call, 10000);
	for (turns = 0; turns < 20; turns++)
		tcp_fixture_pump(f, 2);
	assert_int_equal(getsockopt(sfd, SOL_SOCKET, SO_RCVLOWAT, &lowat, &sl), 0);
	assert_int_equal(lowat, 100044 - (10000 - 4));
	tcp_write_all(fd, call + 10000, n + 4 - 10000);
	m = echo_reply(want, 9, len, 0x77);
	for (turns = 0; turns < 400 && have < m + 4; turns++) {
		ssize_t r;

		tcp_fixture_pump(f, 5);
		r = recv(fd, got + have, m + 4 - have, MSG_DONTWAIT);
		if (r > 0)
			have += (size_t)r;
	}
	assert_int_equal(have, m + 4);
	assert_int_equal(get32(got), 0x80000000u | (uint32_t)m);
	assert_memory_equal(got + 4, want, m);
	assert_int_equal(getsockopt(sfd, SOL_SOCKET, SO_RCVLOWAT, &lowat, &sl), 0);
	assert_int_equal(lowat, 1);
	close(fd);
	for (turns = 0; turns < 200 && atomic_load(&f->tf_svc.sv_ct.conns_open[SVC_XPRT_TCP]) > 1; turns++)
		tcp_fixture_pump(f, 5);
	svc_tcp_unlisten(&f->tf_svc);
	free(call);
	free(want);
	free(got);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_tcp_echo, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tcp_fragments, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tcp_pipelined, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tcp_mark_2gib, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tcp_record_over_cap, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tcp_stall, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tcp_idle_close, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tcp_send_deadline, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tcp_rpc_rejects, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tcp_reset_mid_reply, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tcp_calls_capped, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tcp_budget_waits, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tcp_event_after_close, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tcp_admission, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tcp_backchannel, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tcp_backchannel_close, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tcp_backchannel_timeout, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tcp_capture, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tcp_big_kept, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tcp_lowat, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
