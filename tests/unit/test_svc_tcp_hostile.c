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

/* A server made with @cfg (its log to memory) listening on 127.0.0.1. */
static int h_init(void **state, struct rpcrdma_svc_config cfg)
{
	struct hfix *f = calloc(1, sizeof(*f));

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

static int h_setup(void **state)
{
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

	return h_init(state, cfg);
}

/* Records of 1 MiB (a WRITE's), a small budget (H_MEMORY), room for the
 * hogs of test_record_memory() and two clients more. */
#define H_MEMORY (32u << 20) /* the least a 1 MiB payload allows (16 slabs of 2 MiB) */
#define H_HOGS 48u
#define H_REC (1u << 20)

static int h_setup_mem(void **state)
{
	struct rpcrdma_svc_config cfg = {
		.sc_credits = 4,
		.sc_inline_size = 1024,
		.sc_max_payload = H_REC,
		.sc_memory = H_MEMORY,
		.sc_threads = 1,
		.sc_transport_threads = 1,
		.sc_max_connections = H_HOGS + 4,
		.sc_max_conns_per_host = H_HOGS + 4,
	};

	return h_init(state, cfg);
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

/* A loopback client with small socket buffers (@buf bytes asked for its
 * send buffer, before connecting): what the server does not read stays
 * in a few KiB of kernel buffers, not megabytes. */
static int h_small_client(struct hfix *f, int buf)
{
	int fd = h_socket();

	setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &buf, sizeof(buf));
	h_connect(f, fd);
	assert_int_equal(fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK), 0);
	return fd;
}

/* Reset @fd's connection (SO_LINGER 0: an RST, not a FIN). */
static void h_reset(int fd)
{
	struct linger lg = { .l_onoff = 1, .l_linger = 0 };

	setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	close(fd);
}

/* Send what @fd takes of @buf[*@off .. @len) now; *@off moves on. */
static void h_send_some(int fd, const uint8_t *buf, size_t len, size_t *off)
{
	ssize_t n;

	while (*off < len && (n = send(fd, buf + *off, len - *off, MSG_DONTWAIT | MSG_NOSIGNAL)) > 0)
		*off += (size_t)n;
}

/*
 * Records held in mid-air count against the memory budget (the finding of
 * session 24's review): H_HOGS peers each send the mark of a 1 MiB record
 * and all of it but its last byte, with --memory at H_MEMORY (two thirds
 * of what they announce in all).  Before the fix the server read all of
 * it, growing each record's buffer to 1 MiB uncharged (48 MiB resident for
 * a 32 MiB budget; sv_mem_registered stayed at the read-ahead buffers);
 * with the charge but no wait (a build whose svc_tcp_rm_charge() always
 * says yes) the charge peaks at 50.5 MB and this test fails.  Now:
 *  - the budget's charge never passes H_MEMORY but for the read-ahead
 *    buffers and the SVC_RM_MIN_CAP every connection may hold
 *    (docs/design.md "TCP connections");
 *  - what the budget cannot hold stays in the peers' sockets: with 16 KiB
 *    socket buffers asked for, the peers got at most H_MEMORY and 256 KiB
 *    each (the kernel's buffers, generously) written, where before they
 *    wrote everything (H_HOGS MiB; measured 34.9 MB now, 50.3 MB before);
 *  - tcp_mem_waits counts the waits, logged once for the episode;
 *  - another client's small call is answered meanwhile;
 *  - half the hogs reset (closed at once, though not read: EPOLLHUP); the
 *    memory they let go of wakes the others, whose records the budget
 *    then holds (their peers write all they meant to); those are closed
 *    by the record deadline; the charge is back to where
 *    it was before the hogs came;
 *  - a legitimate 1 MiB record is then read and answered, byte-exact.
 */
static void test_record_memory(void **state)
{
	struct hfix *f = *state;
	struct rpcrdma_svc *svc = &f->svc;
	struct svc_group *grp = &svc->sv_groups[0];
	const size_t rec = 4u + 44u + H_REC; /* mark, ECHO call's header, opaque */
	uint8_t *big = malloc(rec), *got = malloc(rec);
	int hog[H_HOGS], small, legit, fin, rb = 16384, turns, idle;
	uint64_t waits;
	size_t off[H_HOGS], total = 0, have = 0;
	uint64_t base, peak = 0, bound;
	unsigned i;

	assert_non_null(big);
	assert_non_null(got);
	/* the server's accepted sockets inherit the listener's buffer */
	assert_int_equal(setsockopt(svc->sv_tcp_fd, SOL_SOCKET, SO_RCVBUF, &rb, sizeof(rb)), 0);
	/* an ECHO of H_REC bytes of 0xa7 (RFC 5531 9 and 11, tprog.h) */
	h_put32(big, 0x80000000u | (uint32_t)(rec - 4));
	{
		const uint32_t w[] = { 0x77, 0, 2, TPROG, 1, TP_ECHO, 0, 0, 0, 0, H_REC };

		for (i = 0; i < 11; i++)
			h_put32(big + 4 + 4 * i, w[i]);
	}
	memset(big + 48, 0xa7, H_REC);
	base = atomic_load(&svc->sv_mem_registered);

	for (i = 0; i < H_HOGS; i++) {
		hog[i] = h_small_client(f, 16384);
		off[i] = 0;
	}
	/* until nothing moves for 300 turns (the server reads nothing more
	 * of them: a bound on turns, not a time asserted) */
	for (turns = 0, idle = 0; turns < 20000 && idle < 300; turns++) {
		size_t before = total;
		uint64_t m;

		h_pump(f, 1);
		total = 0;
		for (i = 0; i < H_HOGS; i++) {
			h_send_some(hog[i], big, rec - 1, &off[i]);
			total += off[i];
		}
		m = atomic_load(&svc->sv_mem_registered);
		if (m > peak)
			peak = m;
		idle = total == before ? idle + 1 : 0;
	}
	assert_int_equal(atomic_load(&svc->sv_ct.conns_open[SVC_XPRT_TCP]), H_HOGS);
	/* the budget, but for what every connection always has */
	bound = H_MEMORY + (uint64_t)H_HOGS * (SVC_RM_AHEAD + SVC_RM_MIN_CAP);
	assert_true(peak <= bound);
	assert_true(peak > base); /* the records so far are charged */
	assert_true(total <= H_MEMORY + (size_t)H_HOGS * (256u << 10));
	assert_true(total < (size_t)H_HOGS * (rec - 1));
	assert_true(atomic_load(&svc->sv_ct.tcp_mem_waits) >= 1);
	assert_int_equal(h_log_count(f, "connections in mid-record are not read"), 1);

	/* another client is served meanwhile */
	small = h_socket();
	h_connect(f, small);
	h_echo(f, small, 0x200);
	assert_true(atomic_load(&svc->sv_mem_registered) <= bound + svc->sv_tcp_reply_cap + 4u + SVC_RM_MIN_CAP);

	/* A peer whose record waits for memory closes its side (FIN, not
	 * RST): noticed at once (EPOLLRDHUP), not at its record deadline (no
	 * sweep here).  Its 10,000 bytes after the mark fit the sockets'
	 * buffers, so its FIN reaches the server (a FIN behind bytes the
	 * server has not taken stays in the peer's socket, as for the hogs);
	 * the reader takes 4 KiB (what every connection may hold) and cannot
	 * grow within the budget, spent here by hand (the room the hogs left
	 * depends on the order they were read in). */
	atomic_fetch_add(&svc->sv_mem_registered, H_MEMORY);
	fin = h_socket();
	h_connect(f, fin);
	assert_int_equal(send(fin, big, 48 + 10000, MSG_NOSIGNAL), 48 + 10000);
	assert_int_equal(shutdown(fin, SHUT_WR), 0);
	waits = atomic_load(&svc->sv_ct.tcp_mem_waits);
	assert_true(h_sees_eof(f, fin));
	assert_int_equal(atomic_load(&svc->sv_ct.tcp_mem_waits), waits + 1);
	assert_int_equal(atomic_load(&svc->sv_ct.conns_open[SVC_XPRT_TCP]), H_HOGS + 1);
	assert_int_equal(atomic_load(&svc->sv_ct.tcp_record_timeouts), 0);
	close(fin);
	atomic_fetch_sub(&svc->sv_mem_registered, H_MEMORY);

	/* half the hogs reset: closed though their sockets are not read */
	for (i = 0; i < H_HOGS / 2; i++)
		h_reset(hog[i]);
	for (turns = 0; turns < 400 && atomic_load(&svc->sv_ct.conns_open[SVC_XPRT_TCP]) >
					       H_HOGS - H_HOGS / 2 + 1; turns++)
		h_pump(f, 5);
	assert_int_equal(atomic_load(&svc->sv_ct.conns_open[SVC_XPRT_TCP]),
			 H_HOGS - H_HOGS / 2 + 1);
	/* the memory they let go of wakes the others, whose records so far
	 * (24 of 1 MiB and 44 bytes) the budget now holds: read whole */
	total = 0;
	for (turns = 0; turns < 20000 && total < (H_HOGS - H_HOGS / 2) * (rec - 1); turns++) {
		h_pump(f, 1);
		total = 0;
		for (i = H_HOGS / 2; i < H_HOGS; i++) {
			h_send_some(hog[i], big, rec - 1, &off[i]);
			total += off[i];
		}
	}
	for (i = H_HOGS / 2; i < H_HOGS; i++)
		assert_int_equal(off[i], rec - 1);
	assert_true(atomic_load(&svc->sv_mem_registered) <= bound + svc->sv_tcp_reply_cap + 4u + SVC_RM_MIN_CAP);
	/* the rest: their records' deadline (a sweep as if it had passed) */
	svc_tcp_sweep(grp, svc_now_ms() + svc->sv_tcp_record_ms + 1);
	assert_int_equal(atomic_load(&svc->sv_ct.tcp_record_timeouts), H_HOGS - H_HOGS / 2);
	assert_int_equal(atomic_load(&svc->sv_ct.conns_open[SVC_XPRT_TCP]), 1);
	assert_true(h_log_count(f, "memory budget has room again") >= 1);
	for (i = H_HOGS / 2; i < H_HOGS; i++)
		close(hog[i]);
	close(small);
	for (turns = 0; turns < 100 && atomic_load(&svc->sv_ct.conns_open[SVC_XPRT_TCP]); turns++)
		h_pump(f, 5);
	svc_tcp_free_calls(grp);
	assert_int_equal(atomic_load(&svc->sv_mem_registered), base);

	/* a legitimate 1 MiB record is read whole and answered */
	legit = h_small_client(f, 1 << 20);
	off[0] = 0;
	for (turns = 0; turns < 20000 && have < rec; turns++) {
		ssize_t n;

		h_send_some(legit, big, rec, &off[0]);
		h_pump(f, 1);
		n = recv(legit, got + have, rec - have, MSG_DONTWAIT);
		if (n == 0)
			break;
		if (n > 0)
			have += (size_t)n;
	}
	assert_int_equal(have, rec - 44 + 28); /* mark, xid REPLY ACCEPTED verf SUCCESS, opaque */
	assert_int_equal(got[0], 0x80);
	assert_memory_equal(got + 4 + 24, big + 48 - 4, 4); /* the opaque's length */
	for (size_t k = 4 + 28; k < have; k++)
		if (got[k] != 0xa7)
			fail_msg("reply byte %zu is %#x", k, got[k]);
	close(legit);
	for (turns = 0; turns < 100 && atomic_load(&svc->sv_ct.conns_open[SVC_XPRT_TCP]); turns++)
		h_pump(f, 5);
	svc_tcp_free_calls(grp);
	assert_int_equal(atomic_load(&svc->sv_mem_registered), base);
	free(big);
	free(got);
}

/* ---------- fair share (slow readers) ---------- */

/* Replies of 64 KiB at most: a call context counts 64 KiB + 64 KiB of
 * slack + its 4-byte mark = 131,076 bytes (svc_tcp_call_bytes()); half of
 * a 64 MiB budget holds 33,554,432 / 131,076 = 255 of them. */
#define F_CREDITS 128u
#define F_CTX 131076u
#define F_HOGS 7u

static int h_setup_share(void **state)
{
	struct rpcrdma_svc_config cfg = {
		.sc_credits = F_CREDITS,
		.sc_inline_size = 1024,
		.sc_max_payload = 65536,
		.sc_memory = 64u << 20,
		.sc_threads = 1,
		.sc_transport_threads = 1,
		.sc_max_connections = 32,
		.sc_max_conns_per_host = 32,
	};

	return h_init(state, cfg);
}

/* An ECHO call (RFC 5531 9, tprog.h) of an opaque of @len bytes of 0x3c,
 * xid @xid, as one record, into @out; its length. */
static size_t h_echo_call(uint8_t *out, uint32_t xid, uint32_t len)
{
	const uint32_t w[] = { 0x80000000u | (44u + len), xid, 0, 2, TPROG, 1, TP_ECHO,
			       0, 0, 0, 0, len };

	for (size_t i = 0; i < 12; i++)
		h_put32(out + 4 * i, w[i]);
	memset(out + 48, 0x3c, len);
	return 48u + len;
}

/* Send @n small ECHO calls (8 bytes each) on @fd at once; turn the
 * loop's TCP events alone (no worker step: nothing comes back) until the
 * server's TCP calls in use stay the same for 20 turns, the most the
 * connection may have out at once read; then turn it whole until the @n
 * replies (40 bytes each with the mark) are read.  Return: the calls in
 * use above @base after the first part. */
static uint32_t h_burst(struct hfix *f, int fd, unsigned n, uint32_t base)
{
	struct svc_group *grp = &f->svc.sv_groups[0];
	uint8_t *w = malloc((size_t)n * 56), r[4096];
	size_t want = (size_t)n * 40, got = 0, len = 0;
	uint32_t out, last = 0;
	int same = 0;

	assert_non_null(w);
	for (unsigned i = 0; i < n; i++)
		len += h_echo_call(w + len, 0x9000 + i, 8);
	assert_int_equal(send(fd, w, len, MSG_NOSIGNAL), (ssize_t)len);
	free(w);
	for (int turns = 0; turns < 2000 && same < 20; turns++) {
		struct epoll_event evs[8];
		int k = epoll_wait(grp->gr_epoll, evs, 8, 2);

		for (int i = 0; i < k; i++)
			if (svc_tcp_is_tag(evs[i].data.ptr))
				svc_tcp_event(grp, evs[i].data.ptr, evs[i].events);
		out = (uint32_t)atomic_load(&f->svc.sv_ct.tcp_calls_in_use);
		same = out == last ? same + 1 : 0;
		last = out;
	}
	for (int turns = 0; turns < 2000 && got < want; turns++) {
		ssize_t m;

		h_pump(f, 2);
		m = recv(fd, r, sizeof(r), MSG_DONTWAIT);
		if (m == 0)
			break;
		if (m > 0)
			got += (size_t)m;
	}
	assert_int_equal(got, want);
	return last - base;
}

/*
 * An honest client alone (other connections open but idle) has all its
 * sc_credits calls out at once: its share is half the budget over the one
 * connection with calls out, 255 contexts, more than its 128 credits.
 */
static void test_share_honest(void **state)
{
	struct hfix *f = *state;
	int idle[4], c;

	for (unsigned i = 0; i < 4; i++) {
		idle[i] = h_socket();
		h_connect(f, idle[i]);
	}
	c = h_socket();
	h_connect(f, c);
	h_echo(f, c, 1);
	assert_int_equal(h_burst(f, c, F_CREDITS, 0), F_CREDITS);
	for (unsigned i = 0; i < 4; i++)
		close(idle[i]);
	close(c);
	for (int turns = 0; turns < 100 && atomic_load(&f->svc.sv_ct.conns_open[SVC_XPRT_TCP]);
	     turns++)
		h_pump(f, 5);
}

/*
 * F_HOGS slow readers each send an ECHO of 60 KiB whose reply their small
 * socket buffers cannot take (it waits in the server: the connection has a
 * call out), then 128 small calls, and read nothing.  Each may have
 * 33,554,432 / 7 / 131,076 = 36 calls out (its share among the 7 busy
 * connections); before the fix each took its 128 credits (7 x 128 x
 * 131,076 = 117 MB, more than the 64 MiB budget) and the honest client
 * then had one call at a time.  Now the hogs hold 7 x 36 = 252 contexts
 * and the honest client, the eighth busy connection, has its share out at
 * once: 33,554,432 / 8 / 131,076 = 31 calls (31.999).  The hogs take a few bytes now
 * and then (16 KiB each, less than their first reply): the send deadline is
 * not restarted by that, a sweep past it closes them (tcp_send_timeouts;
 * with the deadline restarted by any byte, as before, none is), and the budget's charge is back where
 * it was before they came.
 */
static void test_share_slow_readers(void **state)
{
	struct hfix *f = *state;
	struct rpcrdma_svc *svc = &f->svc;
	struct svc_group *grp = &svc->sv_groups[0];
	int hog[F_HOGS], c, sb = 4096, turns;
	uint8_t *w = malloc(48 + 61440), small[128 * 56], b[1024];
	size_t len, slen = 0;
	uint64_t base, t0;
	uint32_t held;

	assert_non_null(w);
	assert_int_equal(setsockopt(svc->sv_tcp_fd, SOL_SOCKET, SO_SNDBUF, &sb, sizeof(sb)), 0);
	base = atomic_load(&svc->sv_mem_registered);
	c = h_socket();
	h_connect(f, c);
	h_echo(f, c, 2);
	for (unsigned i = 0; i < 128; i++)
		slen += h_echo_call(small + slen, 0x100 + i, 8);
	len = h_echo_call(w, 0x77, 61440);
	for (unsigned i = 0; i < F_HOGS; i++) {
		int rb = 4096;

		hog[i] = h_socket();
		setsockopt(hog[i], SOL_SOCKET, SO_RCVBUF, &rb, sizeof(rb));
		h_connect(f, hog[i]);
		assert_int_equal(send(hog[i], w, len, MSG_NOSIGNAL), (ssize_t)len);
	}
	for (turns = 0; turns < 100; turns++)
		h_pump(f, 2);
	assert_int_equal(atomic_load(&svc->sv_tcp_active), F_HOGS);
	for (unsigned i = 0; i < F_HOGS; i++)
		assert_int_equal(send(hog[i], small, slen, MSG_NOSIGNAL), (ssize_t)slen);
	for (turns = 0; turns < 200; turns++)
		h_pump(f, 2);
	held = (uint32_t)atomic_load(&svc->sv_ct.tcp_calls_in_use);
	assert_int_equal(held, F_HOGS * 36u);
	/* the honest client: its share at once */
	assert_int_equal(h_burst(f, c, 64, held), 31u);

	/* the hogs take 16 KiB each after the replies began to wait, with
	 * the server writing as they do (a deadline restarted by any byte
	 * would start again here): that is not their first reply whole, no
	 * progress on the deadline's window */
	t0 = svc_now_ms();
	usleep(5000);
	for (unsigned i = 0; i < F_HOGS; i++)
		for (size_t taken = 0; taken < 16384;) {
			ssize_t m = recv(hog[i], b, sizeof(b), 0);

			assert_true(m > 0);
			taken += (size_t)m;
			h_pump(f, 1);
		}
	for (turns = 0; turns < 20; turns++)
		h_pump(f, 2);
	svc_tcp_sweep(grp, t0 + svc->sv_tcp_send_ms + 1);
	assert_int_equal(atomic_load(&svc->sv_ct.tcp_send_timeouts), F_HOGS);
	assert_int_equal(atomic_load(&svc->sv_ct.conns_open[SVC_XPRT_TCP]), 1);
	for (unsigned i = 0; i < F_HOGS; i++)
		close(hog[i]);
	for (turns = 0; turns < 20; turns++)
		h_pump(f, 2);
	assert_int_equal(atomic_load(&svc->sv_ct.tcp_calls_in_use), 0);
	assert_int_equal(atomic_load(&svc->sv_tcp_active), 0);
	h_echo(f, c, 3);
	close(c);
	free(w);
	for (turns = 0; turns < 100 && atomic_load(&svc->sv_ct.conns_open[SVC_XPRT_TCP]); turns++)
		h_pump(f, 5);
	svc_tcp_free_calls(grp);
	assert_int_equal(atomic_load(&svc->sv_mem_registered), base);
}

/* One memory-wait episode: a peer sends the first 10,000 bytes of a 1 MiB
 * ECHO record and closes its side; with the budget spent its reader waits
 * for memory, and is closed at once for the FIN. */
static void h_memwait_episode(struct hfix *f)
{
	uint8_t w[48 + 10000];
	int fd = h_socket();
	uint64_t waits = atomic_load(&f->svc.sv_ct.tcp_mem_waits);

	h_echo_call(w, 0x55, 10000);
	h_put32(w, 0x80000000u | (44u + H_REC));
	h_put32(w + 44, H_REC);
	h_connect(f, fd);
	assert_int_equal(send(fd, w, sizeof(w), MSG_NOSIGNAL), (ssize_t)sizeof(w));
	assert_int_equal(shutdown(fd, SHUT_WR), 0);
	assert_true(h_sees_eof(f, fd));
	assert_int_equal(atomic_load(&f->svc.sv_ct.tcp_mem_waits), waits + 1);
	close(fd);
}

/*
 * The memory-wait log lines are rate-limited: three episodes in a row
 * (well within SVC_TCP_MEMWAIT_LOG_MS) log one start and one end line
 * (before: three of each); the next episode logged (the limit set to 0
 * here, as if the minute had passed) says how many were not.
 */
static void test_memwait_log(void **state)
{
	struct hfix *f = *state;
	struct rpcrdma_svc *svc = &f->svc;

	atomic_fetch_add(&svc->sv_mem_registered, H_MEMORY); /* the budget spent */
	for (int i = 0; i < 3; i++)
		h_memwait_episode(f);
	assert_int_equal(h_log_count(f, "connections in mid-record are not read"), 1);
	assert_int_equal(h_log_count(f, "has room again"), 1);
	assert_int_equal(h_log_count(f, "(0 such times not logged before)"), 1);
	svc->sv_tcp_memwait_log_ms = 0;
	h_memwait_episode(f);
	assert_int_equal(h_log_count(f, "connections in mid-record are not read"), 2);
	assert_int_equal(h_log_count(f, "(2 such times not logged before)"), 1);
	assert_int_equal(h_log_count(f, "has room again"), 2);
	atomic_fetch_sub(&svc->sv_mem_registered, H_MEMORY);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_accept_out_of_fds, h_setup, h_teardown),
		cmocka_unit_test_setup_teardown(test_record_memory, h_setup_mem, h_teardown),
		cmocka_unit_test_setup_teardown(test_share_honest, h_setup_share, h_teardown),
		cmocka_unit_test_setup_teardown(test_memwait_log, h_setup_mem, h_teardown),
		cmocka_unit_test_setup_teardown(test_share_slow_readers, h_setup_share, h_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
