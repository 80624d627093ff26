// SPDX-License-Identifier: MIT
/*
 * test_svc_tcp_splice.c - READ data sent over TCP from a pipe (issue 36):
 * rpcrdma_svc_ddp_pipe()/_piped(), the transport splicing the pipe's bytes
 * to the socket between a reply's head and its tail.
 *
 * No device and no VM: as test_svc_tcp.c, the server's end of a socketpair
 * or of a loopback connection is served by the group's run loop turned by
 * hand.  The test's program FILE splices bytes of a temporary file whose
 * byte i is (i * 7) mod 251 into the pipe, between the count word and a
 * trailer word, as NFS READ results are laid out (RFC 1813 3.3.6: count,
 * then opaque data with its XDR pad, RFC 4506 4.10); every expected reply
 * is written out below from RFC 5531 section 9 and that pattern.
 */
#include <arpa/inet.h>
#include <dirent.h>
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
#include <sys/socket.h>
#include <unistd.h>
#include <cmocka.h>

#include "svc/svc_internal.h"
#include "svc_tcp_fixture.h"

#define FPROG 0x20000098u
#define FP_READ 1      /* offset, count in; count, data (piped), trailer out */
#define FP_READ_ERR 2  /* the same, then SYSTEM_ERR: the pipe's bytes dropped */
#define FP_TRAILER 0xfeedf00du
#define FILE_BYTES 300000u

static int file_fd = -1;
static int seen_ddp = -1; /* rpcrdma_svc_req_ddp() of the last call */

static uint8_t pattern(uint64_t i)
{
	return (uint8_t)((i * 7u) % 251u);
}

static int fprog_dispatch(struct rpcrdma_svc_req *req, void *arg)
{
	uint32_t off, count;
	loff_t at;
	ssize_t n;
	int pfd;

	(void)arg;
	seen_ddp = rpcrdma_svc_req_ddp(req);
	off = rpcrdma_xdr_get_u32(&req->rq_args);
	count = rpcrdma_xdr_get_u32(&req->rq_args);
	if (!rpcrdma_xdr_ok(&req->rq_args))
		return RPCRDMA_SVC_GARBAGE_ARGS;
	pfd = rpcrdma_svc_ddp_pipe(req, count);
	if (pfd < 0)
		return RPCRDMA_SVC_SYSTEM_ERR;
	at = off;
	n = splice(file_fd, &at, pfd, NULL, count, 0);
	if (n < 0)
		return RPCRDMA_SVC_SYSTEM_ERR;
	rpcrdma_xdr_put_u32(&req->rq_res, (uint32_t)n);
	rpcrdma_svc_ddp_piped(req, (size_t)n);
	rpcrdma_xdr_put_u32(&req->rq_res, FP_TRAILER);
	return req->rq_msg.rm_proc == FP_READ ? RPCRDMA_SVC_SUCCESS : RPCRDMA_SVC_SYSTEM_ERR;
}

/* Descriptors open before the server was made: teardown finds as many. */
static int fds_before;

/* Descriptors this process has open now. */
static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	assert_non_null(d);
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n - 1; /* the directory's own */
}

static int setup(void **state)
{
	struct rpcrdma_svc_config cfg = {
		.sc_credits = 8,
		.sc_inline_size = 1024,
		.sc_max_payload = 262144,
		.sc_memory = 64u << 20,
		.sc_threads = 1,
		.sc_transport_threads = 1,
		.sc_max_connections = 8,
		.sc_max_conns_per_host = 4,
		.sc_log = stderr,
	};
	char path[] = "/tmp/test_svc_tcp_spliceXXXXXX";
	uint8_t *buf = malloc(FILE_BYTES);
	uint32_t i;

	assert_non_null(buf);
	file_fd = mkstemp(path);
	assert_true(file_fd >= 0);
	unlink(path);
	for (i = 0; i < FILE_BYTES; i++)
		buf[i] = pattern(i);
	assert_int_equal(write(file_fd, buf, FILE_BYTES), (ssize_t)FILE_BYTES);
	free(buf);
	fds_before = count_fds();
	*state = tcp_fixture_new(&cfg, FPROG, fprog_dispatch);
	return 0;
}

static int teardown(void **state)
{
	struct tcp_fixture *f = *state;

	tcp_fixture_close(f);
	assert_int_equal(atomic_load(&f->tf_svc.sv_ct.tcp_calls_in_use), 0);
	tcp_fixture_free(f);
	/* every pipe closed with its context */
	assert_int_equal(count_fds(), fds_before);
	close(file_fd);
	return 0;
}

/* A FILE call as one record (mark included): 52 bytes. */
static void send_call(int fd, uint32_t xid, uint32_t proc, uint32_t off, uint32_t count)
{
	uint32_t w[] = { 0x80000000u | 48, xid, 0, 2, FPROG, 1, proc, 0, 0, 0, 0, off, count };
	uint8_t b[sizeof(w)];
	unsigned i;

	for (i = 0; i < sizeof(w) / 4; i++)
		put32(b + 4 * i, w[i]);
	assert_int_equal(write(fd, b, sizeof(b)), (ssize_t)sizeof(b));
}

/* The record the server must answer FP_READ with (mark included):
 * header, count, the file's bytes, pad, trailer.  Return: its length. */
static size_t want_read(uint8_t *out, uint32_t xid, uint32_t off, uint32_t count)
{
	uint32_t n = off >= FILE_BYTES ? 0 : (FILE_BYTES - off < count ? FILE_BYTES - off : count);
	uint32_t pad = (4 - n % 4) % 4, body = 24 + 4 + n + pad + 4, i;
	uint32_t w[] = { 0x80000000u | body, xid, 1, 0, 0, 0, 0, n };
	size_t at = 0;

	for (i = 0; i < 8; i++, at += 4)
		put32(out + at, w[i]);
	for (i = 0; i < n; i++)
		out[at++] = pattern((uint64_t)off + i);
	for (i = 0; i < pad; i++)
		out[at++] = 0;
	put32(out + at, FP_TRAILER);
	return at + 4;
}

/* An accepted reply with SYSTEM_ERR (5) and no results. */
static size_t want_err(uint8_t *out, uint32_t xid)
{
	uint32_t w[] = { 0x80000000u | 24, xid, 1, 0, 0, 0, 5 };
	unsigned i;

	for (i = 0; i < 7; i++)
		put32(out + 4 * i, w[i]);
	return 28;
}

/* Pump until @n bytes came from @fd (800 turns at most); return how many. */
static size_t pump_read(struct tcp_fixture *f, int fd, uint8_t *buf, size_t n)
{
	return tcp_fixture_pump_read(f, fd, buf, n, 800);
}

/* Pipelined READs from the pipe, odd sizes (pads of 3, 2 and 0 bytes),
 * one that ends at the end of the file (short), and an error reply whose
 * piped bytes must not reach the wire, in between: every record as
 * worked out, in order. */
static void test_splice_replies(void **state)
{
	struct tcp_fixture *f = *state;
	static const uint32_t calls[][3] = {
		{ FP_READ, 3, 100001 },
		{ FP_READ, 70000, 65538 },
		{ FP_READ_ERR, 5, 70000 },
		{ FP_READ, 0, 262144 },
		{ FP_READ, FILE_BYTES - 70001, 131072 }, /* 70001 bytes left */
	};
	size_t nc = sizeof(calls) / sizeof(calls[0]), wlen = 0, i;
	uint8_t *want = malloc(nc * 270000), *got = malloc(nc * 270000);

	assert_non_null(want);
	assert_non_null(got);
	for (i = 0; i < nc; i++) {
		send_call(f->tf_peer, 0x100 + (uint32_t)i, calls[i][0], calls[i][1], calls[i][2]);
		wlen += calls[i][0] == FP_READ
			? want_read(want + wlen, 0x100 + (uint32_t)i, calls[i][1], calls[i][2])
			: want_err(want + wlen, 0x100 + (uint32_t)i);
	}
	assert_int_equal(pump_read(f, f->tf_peer, got, wlen), wlen);
	assert_memory_equal(got, want, wlen);
	assert_int_equal(atomic_load(&f->tf_svc.sv_ct.tcp_spliced_replies), 4);
	assert_int_equal(atomic_load(&f->tf_svc.sv_ct.tcp_spliced_bytes),
			 100001 + 65538 + 262144 + 70001);
	assert_int_equal(atomic_load(&f->tf_svc.sv_ct.tcp_calls_in_use), 0);
	/* TCP carries every byte in the record: no direct data placement */
	assert_int_equal(seen_ddp, 0);
	free(want);
	free(got);
}

/* A reset while spliced replies wait (the client's receive buffer small,
 * forty 256 KiB READs asked): the connection closes, every context comes
 * back, and teardown finds no pipe left open. */
static void test_splice_reset_mid_reply(void **state)
{
	struct tcp_fixture *f = *state;
	uint16_t port;
	int fd, turns;
	uint32_t x;

	fd = tcp_fixture_second_client(f, &port);
	for (x = 1; x <= 40; x++)
		send_call(fd, x, FP_READ, x * 1000, 262144);
	for (turns = 0; turns < 50; turns++)
		tcp_fixture_pump(f, 2);
	assert_true(atomic_load(&f->tf_svc.sv_ct.tcp_calls_in_use) > 0); /* replies waiting */
	assert_true(atomic_load(&f->tf_svc.sv_ct.tcp_spliced_replies) > 0);
	tcp_fixture_reset_second(f, fd);
	/* the other connection still served, from a pipe */
	{
		uint8_t *want = malloc(270000), *got = malloc(270000);
		size_t w;

		assert_non_null(want);
		assert_non_null(got);
		send_call(f->tf_peer, 0x77, FP_READ, 12345, 100000);
		w = want_read(want, 0x77, 12345, 100000);
		assert_int_equal(pump_read(f, f->tf_peer, got, w), w);
		assert_memory_equal(got, want, w);
		free(want);
		free(got);
	}
}

/* Below RPCRDMA_SVC_DDP_PIPE_MIN, and on a captured connection, there is
 * no pipe: the caller copies into the reply instead. */
static void test_splice_refused(void **state)
{
	struct tcp_fixture *f = *state;
	struct rpcrdma_svc_req req;

	memset(&req, 0, sizeof(req));
	assert_int_equal(rpcrdma_svc_ddp_pipe(&req, 1u << 20), -EOPNOTSUPP); /* no transport */
	send_call(f->tf_peer, 0x5, FP_READ, 0, RPCRDMA_SVC_DDP_PIPE_MIN - 4);
	{
		uint8_t got[28], want[28];

		want_err(want, 0x5);
		assert_int_equal(pump_read(f, f->tf_peer, got, 28), 28);
		assert_memory_equal(got, want, 28);
	}
	assert_int_equal(atomic_load(&f->tf_svc.sv_ct.tcp_spliced_replies), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_splice_replies, setup, teardown),
		cmocka_unit_test_setup_teardown(test_splice_reset_mid_reply, setup, teardown),
		cmocka_unit_test_setup_teardown(test_splice_refused, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
