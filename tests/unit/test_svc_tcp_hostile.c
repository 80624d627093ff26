// SPDX-License-Identifier: MIT
/*
 * test_svc_tcp_hostile.c - the service layer's TCP transport (svc_tcp.c)
 * against a hostile peer, issue 36's adversarial review.
 *
 * Out of descriptors: when the process has no file descriptor left
 * (RLIMIT_NOFILE reached: EMFILE), a connection waiting in the listening
 * socket's backlog cannot be accepted.  The listening socket is
 * level-triggered on group 0's epoll set, so before the fix it stayed
 * readable: every turn of the run loop tried accept4() again, failed and
 * logged a line (100 % of a CPU and a log line per turn while a flood of
 * connections lasts), and the peer waited in the backlog with no answer.
 * The answer now (docs/design.md "TCP connections"): the peer is accepted
 * with the descriptor the transport keeps in reserve for this and closed
 * at once (it reads end of file, as past --max-connections), counted in
 * conns_refused; the shortage is logged once while it lasts; the backlog
 * empties, so the listening socket is quiet; once descriptors are free
 * again connections are served.
 *
 * No device, no thread: the group's run loop is turned by hand, as in
 * test_svc_tcp.c; calls and replies are written word by word from RFC
 * 5531 (section 9 call and accepted reply, section 11 record marking)
 * and the test program's definition (tprog.h: ECHO returns its opaque).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cmocka.h>

#include "tprog.h"

#include "svc/svc_internal.h"
#include "svc/svc_xprt.h"

struct hfix {
	struct rpcrdma_svc svc;
	uint16_t port;
	char *log;      /* what the server logged (open_memstream) */
	size_t log_len;
	FILE *logf;
};

static int h_setup(void **state)
{
	struct hfix *f = calloc(1, sizeof(*f));
	struct rpcrdma_svc_config cfg = {
		.sc_credits = 4,
		.sc_inline_size = 1024,
		.sc_max_payload = 65536,
		.sc_memory = 64u << 20,
		.sc_threads = 1,
		.sc_transport_threads = 1,
		.sc_max_connections = 8,
		.sc_max_conns_per_host = 8,
	};

	assert_non_null(f);
	f->logf = open_memstream(&f->log, &f->log_len);
	assert_non_null(f->logf);
	cfg.sc_log = f->logf;
	assert_int_equal(svc_init(&f->svc, &cfg), 0);
	assert_int_equal(rpcrdma_svc_register(&f->svc, TPROG, 1, tprog_dispatch, NULL), 0);
	assert_int_equal(svc_tcp_listen(&f->svc, "127.0.0.1", 0, &f->port), 0);
	*state = f;
	return 0;
}

static int h_teardown(void **state)
{
	struct hfix *f = *state;
	struct svc_group *grp = &f->svc.sv_groups[0];

	svc_tcp_class.xc_close_all(grp);
	svc_tcp_reap(grp);
	assert_int_equal(atomic_load(&f->svc.sv_ct.conns_open[SVC_XPRT_TCP]), 0);
	assert_int_equal(atomic_load(&f->svc.sv_ct.tcp_calls_in_use), 0);
	assert_int_equal(atomic_load(&f->svc.sv_nconns), 0);
	svc_tcp_unlisten(&f->svc);
	svc_fini(&f->svc);
	fclose(f->logf);
	free(f->log);
	free(f);
	return 0;
}

/* One turn of the run loop for up to @ms: TCP events, the calls queued for
 * the workers run here, their replies sent.  Return: how many of the
 * events were the listening socket's. */
static int h_pump(struct hfix *f, int ms)
{
	struct svc_group *grp = &f->svc.sv_groups[0];
	struct epoll_event evs[8];
	int n, i, listener = 0;

	n = epoll_wait(grp->gr_epoll, evs, 8, ms);
	for (i = 0; i < n; i++) {
		if (!svc_tcp_is_tag(evs[i].data.ptr))
			continue;
		if (!((uintptr_t)evs[i].data.ptr & 1u))
			listener++;
		svc_tcp_event(grp, evs[i].data.ptr, evs[i].events);
	}
	while (svc_worker_run_one(grp))
		;
	svc_take_done(grp);
	svc_tcp_reap(grp);
	return listener;
}

static void h_put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/* A socket, not connected yet (made before descriptors run out). */
static int h_socket(void)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	return fd;
}

static void h_connect(struct hfix *f, int fd)
{
	struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons(f->port),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };

	assert_int_equal(connect(fd, (struct sockaddr *)&to, sizeof(to)), 0);
}

/* Turn the loop until @fd reads end of file (or a reset): true; false
 * when it did not within 200 turns. */
static bool h_sees_eof(struct hfix *f, int fd)
{
	uint8_t b[16];

	for (int turns = 0; turns < 200; turns++) {
		ssize_t r;

		h_pump(f, 5);
		r = recv(fd, b, sizeof(b), MSG_DONTWAIT);
		if (r == 0 || (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK))
			return true;
	}
	return false;
}

/* An ECHO of 8 bytes of 0x5a, xid @xid, as one record; its reply read
 * back and checked word by word (RFC 5531 9: xid, REPLY, MSG_ACCEPTED,
 * AUTH_NONE verifier of length 0, SUCCESS; the opaque). */
static void h_echo(struct hfix *f, int fd, uint32_t xid)
{
	const uint32_t call[] = { 0x80000000u | 52, xid, 0, 2, TPROG, 1, TP_ECHO, 0, 0, 0, 0,
				  8, 0x5a5a5a5au, 0x5a5a5a5au };
	const uint32_t want[] = { 0x80000000u | 36, xid, 1, 0, 0, 0, 0, 8, 0x5a5a5a5au,
				  0x5a5a5a5au };
	uint8_t w[sizeof(call)], r[sizeof(want)], e[sizeof(want)];
	size_t got = 0;

	for (size_t i = 0; i < sizeof(call) / 4; i++)
		h_put32(w + 4 * i, call[i]);
	for (size_t i = 0; i < sizeof(want) / 4; i++)
		h_put32(e + 4 * i, want[i]);
	assert_int_equal(send(fd, w, sizeof(w), MSG_NOSIGNAL), (ssize_t)sizeof(w));
	for (int turns = 0; turns < 400 && got < sizeof(r); turns++) {
		ssize_t n;

		h_pump(f, 5);
		n = recv(fd, r + got, sizeof(r) - got, MSG_DONTWAIT);
		if (n == 0)
			break;
		if (n > 0)
			got += (size_t)n;
	}
	assert_int_equal(got, sizeof(r));
	assert_memory_equal(r, e, sizeof(r));
}

/* Lines of the server's log that hold @what. */
static unsigned h_log_count(struct hfix *f, const char *what)
{
	unsigned n = 0;

	fflush(f->logf);
	for (const char *p = f->log; p && (p = strstr(p, what)); p += strlen(what))
		n++;
	return n;
}

/* The lowest descriptor free now (the next one open() would return). */
static int h_lowest_free(void)
{
	int fd = dup(0);

	assert_true(fd >= 0);
	close(fd);
	return fd;
}

/*
 * Out of descriptors (EMFILE): three peers connect while the process can
 * open none; each reads end of file (the server does not leave it in the
 * backlog), each is counted in conns_refused, the shortage is logged once,
 * and the listening socket is quiet afterwards (no event for it, where
 * before the fix every turn had one).  A peer that was being served before
 * is served meanwhile, and once descriptors are free again a new peer is
 * served too.
 */
static void test_accept_out_of_fds(void **state)
{
	struct hfix *f = *state;
	int served = h_socket(), late = h_socket(), shut[3];
	struct rlimit rl, low;
	unsigned i;

	h_connect(f, served);
	h_echo(f, served, 0x100);
	assert_int_equal(atomic_load(&f->svc.sv_ct.conns_open[SVC_XPRT_TCP]), 1);
	for (i = 0; i < 3; i++)
		shut[i] = h_socket();

	/* No descriptor left: the soft limit at the lowest free one. */
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &rl), 0);
	low = rl;
	low.rlim_cur = (rlim_t)h_lowest_free();
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
	assert_int_equal(dup(0), -1);
	assert_int_equal(errno, EMFILE);

	for (i = 0; i < 3; i++) {
		h_connect(f, shut[i]); /* the kernel completes it: the backlog */
		assert_true(h_sees_eof(f, shut[i]));
	}
	assert_int_equal(atomic_load(&f->svc.sv_ct.conns_refused), 3);
	assert_int_equal(atomic_load(&f->svc.sv_ct.conns_open[SVC_XPRT_TCP]), 1);
	/* the backlog is empty: no event for the listening socket */
	for (i = 0; i < 5; i++)
		assert_int_equal(h_pump(f, 1), 0);
	assert_int_equal(h_log_count(f, "out of file descriptors"), 1);
	h_echo(f, served, 0x101);

	/* Descriptors again: a new peer is served. */
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &rl), 0);
	h_connect(f, late);
	h_echo(f, late, 0x102);
	assert_int_equal(atomic_load(&f->svc.sv_ct.conns_open[SVC_XPRT_TCP]), 2);
	assert_int_equal(atomic_load(&f->svc.sv_ct.conns_refused), 3);

	for (i = 0; i < 3; i++)
		close(shut[i]);
	close(served);
	close(late);
	for (i = 0; i < 20 && atomic_load(&f->svc.sv_ct.conns_open[SVC_XPRT_TCP]); i++)
		h_pump(f, 5);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_accept_out_of_fds, h_setup, h_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
