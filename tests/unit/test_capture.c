// SPDX-License-Identifier: MIT
/*
 * test_capture.c - the capture writer: synthesized RoCEv2 frames against
 * bytes worked out by hand (Ethernet II, IPv4 with its checksum, IPv6,
 * UDP to 4791, BTH, RETH, AETH, IETH, ICRC), the pcap headers, Sends split
 * at the MTU, rotation, and a full queue dropping and counting.
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
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "capture/capture.h"

static void v4(struct sockaddr_storage *ss, const char *a)
{
	memset(ss, 0, sizeof(*ss));
	ss->ss_family = AF_INET;
	assert_int_equal(inet_pton(AF_INET, a, &((struct sockaddr_in *)ss)->sin_addr), 1);
}

static void v6(struct sockaddr_storage *ss, const char *a)
{
	memset(ss, 0, sizeof(*ss));
	ss->ss_family = AF_INET6;
	assert_int_equal(inet_pton(AF_INET6, a, &((struct sockaddr_in6 *)ss)->sin6_addr), 1);
}

/* SEND ONLY, IPv4, 8 payload bytes in two pieces. */
static void test_send_only_v4(void **state)
{
	struct sockaddr_storage s, d;
	const uint8_t a[] = { 1, 2, 3 }, b[] = { 4, 5, 6, 7, 8 };
	struct iovec iov[2] = { { (void *)a, 3 }, { (void *)b, 5 } };
	struct capture_hdr h = {
		.ch_src = &s, .ch_dst = &d, .ch_src_qp = 0x11, .ch_dst_qp = 0x12,
		.ch_opcode = CAPTURE_OP_SEND_ONLY, .ch_psn = 5,
	};
	static const uint8_t want[] = {
		/* Ethernet: dst 02:00:192.0.2.2, src 02:00:192.0.2.1, IPv4 */
		0x02, 0x00, 0xc0, 0x00, 0x02, 0x02, 0x02, 0x00, 0xc0, 0x00, 0x02, 0x01, 0x08, 0x00,
		/* IPv4: total 52; DF; TTL 64; UDP; checksum: the ten words
		 * 4500 0034 0000 4000 4011 0000 c000 0201 c000 0202 sum to
		 * 0x24948, folded 0x494a, complement 0xb6b5 */
		0x45, 0x00, 0x00, 0x34, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0xb6, 0xb5,
		0xc0, 0x00, 0x02, 0x01, 0xc0, 0x00, 0x02, 0x02,
		/* UDP: 0xc000 | QP 0x11 -> 4791, length 32, no checksum */
		0xc0, 0x11, 0x12, 0xb7, 0x00, 0x20, 0x00, 0x00,
		/* BTH: SEND ONLY, P_Key ffff, QP 0x12, PSN 5 */
		0x04, 0x00, 0xff, 0xff, 0x00, 0x00, 0x00, 0x12, 0x00, 0x00, 0x00, 0x05,
		1, 2, 3, 4, 5, 6, 7, 8,
		0, 0, 0, 0, /* ICRC */
	};
	uint8_t out[256];

	(void)state;
	v4(&s, "192.0.2.1");
	v4(&d, "192.0.2.2");
	assert_int_equal(capture_frame_build(out, sizeof(out), &h, iov, 2, 8), sizeof(want));
	assert_memory_equal(out, want, sizeof(want));
	/* Too small a buffer, or fewer bytes than asked: nothing. */
	assert_int_equal(capture_frame_build(out, sizeof(want) - 1, &h, iov, 2, 8), 0);
	assert_int_equal(capture_frame_build(out, sizeof(out), &h, iov, 2, 9), 0);
	/* An IPv4-mapped IPv6 peer is written as IPv4: the same bytes. */
	v6(&d, "::ffff:192.0.2.2");
	assert_int_equal(capture_frame_build(out, sizeof(out), &h, iov, 2, 8), sizeof(want));
	assert_memory_equal(out, want, sizeof(want));
	/* Mixed families: nothing. */
	v6(&d, "2001:db8::2");
	assert_int_equal(capture_frame_build(out, sizeof(out), &h, iov, 2, 8), 0);
}

/* RDMA WRITE ONLY with RETH, IPv6. */
static void test_write_only_v6(void **state)
{
	struct sockaddr_storage s, d;
	const uint8_t data[] = { 0xde, 0xad, 0xbe, 0xef };
	struct iovec iov = { (void *)data, 4 };
	struct capture_hdr h = {
		.ch_src = &s, .ch_dst = &d, .ch_src_qp = 0x4321, .ch_dst_qp = 0xabcdef,
		.ch_opcode = CAPTURE_OP_RDMA_WRITE_ONLY, .ch_psn = 0x123456,
		.ch_reth = true, .ch_va = 0x1122334455667788ull, .ch_rkey = 0xaabbccdd,
		.ch_dma_len = 0x10000,
	};
	static const uint8_t want[] = {
		0x02, 0x00, 0x00, 0x00, 0x00, 0x02, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01, 0x86, 0xdd,
		/* IPv6: payload 8 + 12 + 16 + 4 + 4 = 44, UDP, hop limit 64 */
		0x60, 0x00, 0x00, 0x00, 0x00, 0x2c, 0x11, 0x40,
		0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1,
		0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2,
		/* UDP: 0xc000 | (0x4321 & 0x3fff) = 0xc321 */
		0xc3, 0x21, 0x12, 0xb7, 0x00, 0x2c, 0x00, 0x00,
		0x0a, 0x00, 0xff, 0xff, 0x00, 0xab, 0xcd, 0xef, 0x00, 0x12, 0x34, 0x56,
		/* RETH: VA, R_Key, DMA length (the whole write, not the 4 bytes) */
		0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0xaa, 0xbb, 0xcc, 0xdd,
		0x00, 0x01, 0x00, 0x00,
		0xde, 0xad, 0xbe, 0xef,
		0, 0, 0, 0,
	};
	uint8_t out[256];

	(void)state;
	v6(&s, "2001:db8::1");
	v6(&d, "2001:db8::2");
	assert_int_equal(capture_frame_build(out, sizeof(out), &h, &iov, 1, 4), sizeof(want));
	assert_memory_equal(out, want, sizeof(want));
}

/* READ RESPONSE ONLY carries an AETH, SEND ONLY INV an IETH. */
static void test_aeth_ieth(void **state)
{
	struct sockaddr_storage s, d;
	struct capture_hdr h = {
		.ch_src = &s, .ch_dst = &d, .ch_dst_qp = 7,
		.ch_opcode = CAPTURE_OP_RDMA_READ_RESPONSE_ONLY, .ch_psn = 9,
		.ch_aeth = true, .ch_msn = 3,
	};
	uint8_t out[256];

	(void)state;
	v4(&s, "10.0.0.1");
	v4(&d, "10.0.0.2");
	assert_int_equal(capture_frame_build(out, sizeof(out), &h, NULL, 0, 0), 14 + 20 + 8 + 12 + 4 + 4);
	assert_int_equal(out[42], 0x10);
	assert_memory_equal(out + 54, ((const uint8_t[]){ 0x1f, 0x00, 0x00, 0x03 }), 4);
	h.ch_aeth = false;
	h.ch_opcode = CAPTURE_OP_SEND_ONLY_INV;
	h.ch_ieth = true;
	h.ch_inv_rkey = 0x01020304;
	assert_int_equal(capture_frame_build(out, sizeof(out), &h, NULL, 0, 0), 14 + 20 + 8 + 12 + 4 + 4);
	assert_int_equal(out[42], 0x17);
	assert_memory_equal(out + 54, ((const uint8_t[]){ 1, 2, 3, 4 }), 4);
}

static void test_pcap_headers(void **state)
{
	uint8_t f[CAPTURE_PCAP_FILE_HDR], r[CAPTURE_PCAP_REC_HDR];
	uint32_t magic, snap, link;
	uint16_t maj, min;

	(void)state;
	capture_pcap_file_header(f);
	memcpy(&magic, f, 4);
	memcpy(&maj, f + 4, 2);
	memcpy(&min, f + 6, 2);
	memcpy(&snap, f + 16, 4);
	memcpy(&link, f + 20, 4);
	assert_int_equal(magic, 0xa1b23c4d); /* nanosecond pcap, host order */
	assert_int_equal(maj, 2);
	assert_int_equal(min, 4);
	assert_int_equal(snap, 262144);
	assert_int_equal(link, 1); /* LINKTYPE_ETHERNET */
	capture_pcap_record_header(r, 1700000000u, 123456789u, 66);
	{
		uint32_t w[4];

		memcpy(w, r, 16);
		assert_int_equal(w[0], 1700000000u);
		assert_int_equal(w[1], 123456789u);
		assert_int_equal(w[2], 66);
		assert_int_equal(w[3], 66);
	}
}

static char g_path[64];

static uint8_t *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf;
	long n;

	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc((size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	*len = (size_t)n;
	return buf;
}

static void make_ep(struct capture_ep *ep)
{
	memset(ep, 0, sizeof(*ep));
	v4(&ep->ce_local, "192.0.2.1");
	v4(&ep->ce_peer, "192.0.2.2");
	ep->ce_local_qp = 0x11;
	ep->ce_peer_qp = 0x12;
}

/* A 10000-byte Send: SEND FIRST (4096, PSN 0), MIDDLE (4096, PSN 1),
 * LAST (1808, PSN 2), each record framing its bytes in order; a received
 * one goes the other way with PSNs of its own. */
static void test_writer_split(void **state)
{
	struct rpcrdma_capture_config cfg = { .cc_path = g_path };
	struct rpcrdma_capture_stats st;
	struct rpcrdma_capture *cap;
	struct capture_ep ep;
	uint8_t *msg = malloc(10000), *file;
	struct iovec iov = { msg, 10000 };
	static const uint8_t ops[] = { 0x00, 0x01, 0x02, 0x04 };
	static const uint32_t lens[] = { 4096, 4096, 1808, 28 };
	size_t len, off = CAPTURE_PCAP_FILE_HDR, done = 0;
	unsigned i;

	(void)state;
	for (i = 0; i < 10000; i++)
		msg[i] = (uint8_t)(i * 7);
	make_ep(&ep);
	assert_int_equal(rpcrdma_capture_open(&cfg, &cap), 0);
	capture_send(cap, &ep, true, &iov, 1, 10000, false, 0);
	capture_send(cap, &ep, false, &iov, 1, 28, false, 0);
	rpcrdma_capture_close(cap, &st);
	assert_int_equal(st.cs_frames, 4);
	assert_int_equal(st.cs_drops, 0);
	assert_int_equal(st.cs_files, 1);
	file = slurp(g_path, &len);
	for (i = 0; i < 4; i++) {
		uint32_t caplen;
		const uint8_t *fr = file + off + CAPTURE_PCAP_REC_HDR;

		memcpy(&caplen, file + off + 8, 4);
		assert_int_equal(caplen, 14 + 20 + 8 + 12 + lens[i] + 4);
		assert_int_equal(fr[42], ops[i]);
		/* PSN: 0, 1, 2 out; 0 in */
		assert_int_equal(fr[53], i < 3 ? i : 0);
		/* destination QP: the peer's out, ours in */
		assert_int_equal(fr[49], i < 3 ? 0x12 : 0x11);
		assert_memory_equal(fr + 54, msg + (i < 3 ? done : 0), lens[i]);
		if (i < 3)
			done += lens[i];
		off += CAPTURE_PCAP_REC_HDR + caplen;
	}
	assert_int_equal(off, len);
	free(file);
	free(msg);
	unlink(g_path);
}

/* With a 64 KiB limit and two files: FILE and FILE.1, each a valid pcap
 * no larger than the limit, all frames written; with one file, the frames
 * that do not fit are dropped and counted. */
static void test_writer_rotation(void **state)
{
	struct rpcrdma_capture_config cfg = { .cc_path = g_path, .cc_max_bytes = 65536,
					      .cc_max_files = 2 };
	struct rpcrdma_capture_stats st;
	struct rpcrdma_capture *cap;
	struct capture_ep ep;
	uint8_t msg[4000] = { 0 };
	struct iovec iov = { msg, sizeof(msg) };
	char p1[80];
	struct stat sb;
	unsigned i;
	/* Each record: 16 + 14 + 20 + 8 + 12 + 4000 + 4 = 4074 bytes; a file
	 * holds (65536 - 24) / 4074 = 16 of them. */

	(void)state;
	make_ep(&ep);
	snprintf(p1, sizeof(p1), "%s.1", g_path);
	assert_int_equal(rpcrdma_capture_open(&cfg, &cap), 0);
	for (i = 0; i < 20; i++)
		capture_send(cap, &ep, true, &iov, 1, sizeof(msg), false, 0);
	rpcrdma_capture_close(cap, &st);
	assert_int_equal(st.cs_frames, 20);
	assert_int_equal(st.cs_drops, 0);
	assert_int_equal(st.cs_files, 2);
	assert_int_equal(stat(p1, &sb), 0);
	assert_int_equal(sb.st_size, 24 + 16 * 4074);
	assert_int_equal(stat(g_path, &sb), 0);
	assert_int_equal(sb.st_size, 24 + 4 * 4074);
	unlink(p1);

	cfg.cc_max_files = 1;
	assert_int_equal(rpcrdma_capture_open(&cfg, &cap), 0);
	for (i = 0; i < 20; i++)
		capture_send(cap, &ep, true, &iov, 1, sizeof(msg), false, 0);
	rpcrdma_capture_close(cap, &st);
	assert_int_equal(st.cs_frames, 16);
	assert_int_equal(st.cs_drops, 4);
	assert_int_equal(stat(p1, &sb), -1);
	unlink(g_path);
}

/* A queue smaller than one record drops every frame, counted; nothing
 * waits.  Bad configurations are refused. */
static void test_writer_drops(void **state)
{
	struct rpcrdma_capture_config cfg = { .cc_path = g_path, .cc_queue_bytes = 64 };
	struct rpcrdma_capture_stats st;
	struct rpcrdma_capture *cap;
	struct capture_ep ep;
	uint8_t msg[100] = { 0 };
	struct iovec iov = { msg, sizeof(msg) };
	unsigned i;

	(void)state;
	make_ep(&ep);
	assert_int_equal(rpcrdma_capture_open(&cfg, &cap), 0);
	for (i = 0; i < 10; i++)
		capture_send(cap, &ep, true, &iov, 1, sizeof(msg), false, 0);
	/* No RDMA data frames unless cc_data_bytes is set. */
	capture_rdma_write(cap, &ep, true, 1, 2, 100, &iov, 1);
	capture_rdma_read(cap, &ep, true, 1, 2, 100, &iov, 1);
	rpcrdma_capture_close(cap, &st);
	assert_int_equal(st.cs_frames, 0);
	assert_int_equal(st.cs_drops, 10);
	unlink(g_path);

	cfg.cc_queue_bytes = 0;
	cfg.cc_max_bytes = 1000;
	assert_int_equal(rpcrdma_capture_open(&cfg, &cap), -EINVAL);
	cfg.cc_max_bytes = 0;
	cfg.cc_path = "/nonexistent-dir/x.pcap";
	assert_int_equal(rpcrdma_capture_open(&cfg, &cap), -ENOENT);
}

/* With cc_data_bytes 16: an RDMA Write of 100 bytes is one WRITE ONLY
 * frame carrying 16; a Read is a READ REQUEST (no payload) then a READ
 * RESPONSE ONLY the other way with the same PSN and 16 bytes. */
static void test_writer_rdma_data(void **state)
{
	struct rpcrdma_capture_config cfg = { .cc_path = g_path, .cc_data_bytes = 16 };
	struct rpcrdma_capture_stats st;
	struct rpcrdma_capture *cap;
	struct capture_ep ep;
	uint8_t msg[100], *file;
	struct iovec iov = { msg, sizeof(msg) };
	size_t len, off = CAPTURE_PCAP_FILE_HDR;
	static const uint8_t ops[] = { 0x0a, 0x0c, 0x10 };
	static const uint32_t sizes[] = { 12 + 16 + 16, 12 + 16, 12 + 4 + 16 };
	unsigned i;

	(void)state;
	for (i = 0; i < sizeof(msg); i++)
		msg[i] = (uint8_t)i;
	make_ep(&ep);
	assert_int_equal(rpcrdma_capture_open(&cfg, &cap), 0);
	capture_rdma_write(cap, &ep, true, 0x77, 0x1000, 100, &iov, 1);
	capture_rdma_read(cap, &ep, true, 0x88, 0x2000, 100, &iov, 1);
	rpcrdma_capture_close(cap, &st);
	assert_int_equal(st.cs_frames, 3);
	file = slurp(g_path, &len);
	for (i = 0; i < 3; i++) {
		const uint8_t *fr = file + off + CAPTURE_PCAP_REC_HDR;
		uint32_t caplen;

		memcpy(&caplen, file + off + 8, 4);
		assert_int_equal(caplen, 14 + 20 + 8 + sizes[i] + 4);
		assert_int_equal(fr[42], ops[i]);
		off += CAPTURE_PCAP_REC_HDR + caplen;
	}
	/* The write: PSN 0 out, RETH length 100, data bytes 0..15. */
	off = CAPTURE_PCAP_FILE_HDR + CAPTURE_PCAP_REC_HDR;
	assert_int_equal(file[off + 53], 0);
	assert_int_equal(file[off + 54 + 15], 100);
	assert_memory_equal(file + off + 54 + 16, msg, 16);
	/* The read request: PSN 1 out, to the peer's QP; the response: PSN
	 * 1, to ours. */
	off += 14 + 20 + 8 + 12 + 16 + 16 + 4 + CAPTURE_PCAP_REC_HDR;
	assert_int_equal(file[off + 53], 1);
	assert_int_equal(file[off + 49], 0x12);
	off += 14 + 20 + 8 + 12 + 16 + 4 + CAPTURE_PCAP_REC_HDR;
	assert_int_equal(file[off + 53], 1);
	assert_int_equal(file[off + 49], 0x11);
	assert_memory_equal(file + off + 58, msg, 16);
	free(file);
	unlink(g_path);
}


/* clean - remove what an earlier (failed) test may have left at g_path. */
static void clean(void)
{
	static const char *const sfx[] = { "", ".1", ".2", ".target", ".dangling" };
	char p[96];

	for (size_t i = 0; i < sizeof(sfx) / sizeof(sfx[0]); i++) {
		snprintf(p, sizeof(p), "%s%s", g_path, sfx[i]);
		if (unlink(p) && errno == EISDIR)
			rmdir(p);
		rmdir(p);
	}
}

/* put_file - write @text to @path (created 0644). */
static void put_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
}

static void expect_file(const char *path, const char *text)
{
	size_t len;
	uint8_t *got = slurp(path, &len);

	assert_int_equal(len, strlen(text));
	assert_memory_equal(got, text, len);
	free(got);
}

/* wait_written - wait (at most 20 s) until the writer has taken @n frames
 * (written or dropped). */
static void wait_written(struct rpcrdma_capture *cap, uint64_t n)
{
	struct rpcrdma_capture_stats st;
	struct timespec ts = { 0, 1000000 };

	for (unsigned i = 0; i < 20000; i++) {
		rpcrdma_capture_get_stats(cap, &st);
		if (st.cs_frames + st.cs_drops + st.cs_write_errors >= n)
			return;
		nanosleep(&ts, NULL);
	}
	fail_msg("the writer took %llu of %llu frames in 20 s",
		 (unsigned long long)(st.cs_frames + st.cs_drops), (unsigned long long)n);
}

/* The capture file and a rotated one are 0600 (they hold credentials,
 * handles and file data), whatever the umask lets through: with umask 0 a
 * file created 0666 would be world-readable. */
static void test_writer_mode(void **state)
{
	struct rpcrdma_capture_config cfg = { .cc_path = g_path, .cc_max_bytes = 65536,
					      .cc_max_files = 2 };
	struct rpcrdma_capture_stats st;
	struct rpcrdma_capture *cap;
	struct capture_ep ep;
	uint8_t msg[4000] = { 0 };
	struct iovec iov = { msg, sizeof(msg) };
	char p1[80];
	struct stat sb;
	mode_t old = umask(0);

	(void)state;
	clean();
	make_ep(&ep);
	snprintf(p1, sizeof(p1), "%s.1", g_path);
	assert_int_equal(rpcrdma_capture_open(&cfg, &cap), 0);
	/* the pcap header is on disk at once (a killed server's file is
	 * still recognised as a capture at the next start) */
	assert_int_equal(stat(g_path, &sb), 0);
	assert_int_equal(sb.st_size, CAPTURE_PCAP_FILE_HDR);
	for (unsigned i = 0; i < 20; i++) /* 16 records fill a file: one rotation */
		capture_send(cap, &ep, true, &iov, 1, sizeof(msg), false, 0);
	rpcrdma_capture_close(cap, &st);
	umask(old);
	assert_int_equal(st.cs_files, 2);
	assert_int_equal(lstat(g_path, &sb), 0);
	assert_true(S_ISREG(sb.st_mode));
	assert_int_equal(sb.st_mode & 07777, 0600);
	assert_int_equal(lstat(p1, &sb), 0);
	assert_true(S_ISREG(sb.st_mode));
	assert_int_equal(sb.st_mode & 07777, 0600);
	unlink(p1);
	unlink(g_path);
}

/* A symlink planted at the capture path is not followed: the open is
 * refused with -EEXIST and the target keeps its bytes (a dangling one is
 * not created); so are a directory and a file that is not a capture.  A
 * previous capture of ours is replaced by a new one. */
static void test_writer_no_follow(void **state)
{
	struct rpcrdma_capture_config cfg = { .cc_path = g_path };
	struct rpcrdma_capture_stats st;
	struct rpcrdma_capture *cap;
	char target[96], dangling[96];
	struct capture_ep ep;
	uint8_t msg[100] = { 0 };
	struct iovec iov = { msg, sizeof(msg) };
	struct stat sb;

	(void)state;
	clean();
	make_ep(&ep);
	snprintf(target, sizeof(target), "%s.target", g_path);
	snprintf(dangling, sizeof(dangling), "%s.dangling", g_path);
	put_file(target, "precious bytes\n");
	assert_int_equal(symlink(target, g_path), 0);
	assert_int_equal(rpcrdma_capture_open(&cfg, &cap), -EEXIST);
	expect_file(target, "precious bytes\n");
	assert_int_equal(lstat(g_path, &sb), 0);
	assert_true(S_ISLNK(sb.st_mode));
	unlink(g_path);

	assert_int_equal(symlink(dangling, g_path), 0);
	assert_int_equal(rpcrdma_capture_open(&cfg, &cap), -EEXIST);
	assert_int_equal(lstat(dangling, &sb), -1);
	unlink(g_path);

	/* Not a capture: left alone. */
	put_file(g_path, "someone's notes\n");
	assert_int_equal(rpcrdma_capture_open(&cfg, &cap), -EEXIST);
	expect_file(g_path, "someone's notes\n");
	unlink(g_path);
	assert_int_equal(mkdir(g_path, 0700), 0);
	assert_int_equal(rpcrdma_capture_open(&cfg, &cap), -EEXIST);
	assert_int_equal(rmdir(g_path), 0);

	/* An empty file of ours with one link (mkstemp, touch): used, made
	 * 0600; one with a second link: refused. */
	put_file(g_path, "");
	assert_int_equal(chmod(g_path, 0644), 0);
	unlink(target);
	assert_int_equal(link(g_path, target), 0);
	assert_int_equal(rpcrdma_capture_open(&cfg, &cap), -EEXIST);
	unlink(target);
	assert_int_equal(rpcrdma_capture_open(&cfg, &cap), 0);
	rpcrdma_capture_close(cap, &st);
	assert_int_equal(lstat(g_path, &sb), 0);
	assert_int_equal(sb.st_mode & 07777, 0600);
	assert_int_equal(sb.st_size, CAPTURE_PCAP_FILE_HDR);
	unlink(g_path);

	/* An earlier capture (ours, pcap magic first): a new file replaces
	 * it, holding only the new frame; a hard link to the old one keeps
	 * the old bytes. */
	assert_int_equal(rpcrdma_capture_open(&cfg, &cap), 0);
	for (unsigned i = 0; i < 3; i++)
		capture_send(cap, &ep, true, &iov, 1, sizeof(msg), false, 0);
	rpcrdma_capture_close(cap, &st);
	assert_int_equal(st.cs_frames, 3);
	unlink(target);
	assert_int_equal(link(g_path, target), 0);
	assert_int_equal(rpcrdma_capture_open(&cfg, &cap), 0);
	capture_send(cap, &ep, true, &iov, 1, sizeof(msg), false, 0);
	rpcrdma_capture_close(cap, &st);
	assert_int_equal(st.cs_frames, 1);
	assert_int_equal(stat(g_path, &sb), 0);
	assert_int_equal(sb.st_size, 24 + 16 + 14 + 20 + 8 + 12 + 100 + 4);
	assert_int_equal(sb.st_nlink, 1);
	assert_int_equal(stat(target, &sb), 0);
	assert_int_equal(sb.st_size, 24 + 3 * (16 + 14 + 20 + 8 + 12 + 100 + 4));
	unlink(target);
	unlink(g_path);
}

/* A symlink planted at FILE.1, where the next rotation puts FILE: the
 * rotation replaces the link, its target keeps its bytes. */
static void test_writer_rotation_no_follow(void **state)
{
	struct rpcrdma_capture_config cfg = { .cc_path = g_path, .cc_max_bytes = 65536,
					      .cc_max_files = 3 };
	struct rpcrdma_capture_stats st;
	struct rpcrdma_capture *cap;
	struct capture_ep ep;
	uint8_t msg[4000] = { 0 };
	struct iovec iov = { msg, sizeof(msg) };
	char p1[80], p2[80], target[96];
	struct stat sb;

	(void)state;
	clean();
	make_ep(&ep);
	snprintf(p1, sizeof(p1), "%s.1", g_path);
	snprintf(p2, sizeof(p2), "%s.2", g_path);
	snprintf(target, sizeof(target), "%s.target", g_path);
	put_file(target, "precious bytes\n");
	assert_int_equal(rpcrdma_capture_open(&cfg, &cap), 0);
	assert_int_equal(symlink(target, p1), 0);
	assert_int_equal(symlink(target, p2), 0);
	for (unsigned i = 0; i < 20; i++)
		capture_send(cap, &ep, true, &iov, 1, sizeof(msg), false, 0);
	rpcrdma_capture_close(cap, &st);
	assert_int_equal(st.cs_frames, 20);
	assert_int_equal(st.cs_write_errors, 0);
	assert_int_equal(st.cs_files, 2);
	expect_file(target, "precious bytes\n");
	assert_int_equal(lstat(p1, &sb), 0);
	assert_true(S_ISREG(sb.st_mode));
	assert_int_equal(sb.st_size, 24 + 16 * 4074);
	/* FILE.2 was only moved over (FILE.1's link): still a link. */
	assert_int_equal(lstat(p2, &sb), 0);
	assert_true(S_ISLNK(sb.st_mode));
	unlink(p2);
	unlink(p1);

	/* FILE itself replaced by a link while the capture runs: the
	 * writer goes on into its open file, the rotation moves the link to
	 * FILE.1 and creates a new FILE; the target keeps its bytes. */
	assert_int_equal(rpcrdma_capture_open(&cfg, &cap), 0);
	assert_int_equal(unlink(g_path), 0);
	assert_int_equal(symlink(target, g_path), 0);
	for (unsigned i = 0; i < 20; i++)
		capture_send(cap, &ep, true, &iov, 1, sizeof(msg), false, 0);
	rpcrdma_capture_close(cap, &st);
	assert_int_equal(st.cs_frames, 20);
	assert_int_equal(st.cs_write_errors, 0);
	expect_file(target, "precious bytes\n");
	assert_int_equal(lstat(p1, &sb), 0);
	assert_true(S_ISLNK(sb.st_mode));
	assert_int_equal(lstat(g_path, &sb), 0);
	assert_true(S_ISREG(sb.st_mode));
	assert_int_equal(sb.st_size, 24 + 4 * 4074);
	unlink(p1);
	unlink(target);
	unlink(g_path);
}

/* With no size given the file does not grow without bound: it rotates at
 * RPCRDMA_CAPTURE_DEFAULT_MAX_BYTES (100 MiB), keeping
 * RPCRDMA_CAPTURE_DEFAULT_FILES (10).  Records of 4074 bytes: a file
 * holds floor((104857600 - 24) / 4074) = 25738 of them. */
static void test_writer_default_cap(void **state)
{
	struct rpcrdma_capture_config cfg = { .cc_path = g_path };
	const uint64_t per_file = 25738, total = per_file + 10;
	struct rpcrdma_capture_stats st;
	struct rpcrdma_capture *cap;
	struct capture_ep ep;
	uint8_t msg[4000] = { 0 };
	struct iovec iov = { msg, sizeof(msg) };
	char p1[80];
	struct stat sb;

	(void)state;
	clean();
	assert_int_equal(RPCRDMA_CAPTURE_DEFAULT_MAX_BYTES, 104857600);
	assert_int_equal(RPCRDMA_CAPTURE_DEFAULT_FILES, 10);
	make_ep(&ep);
	snprintf(p1, sizeof(p1), "%s.1", g_path);
	assert_int_equal(rpcrdma_capture_open(&cfg, &cap), 0);
	for (uint64_t i = 0; i < total; i++) {
		/* the queue holds 16 MiB: let the writer keep up */
		if (i % 2048 == 0)
			wait_written(cap, i);
		capture_send(cap, &ep, true, &iov, 1, sizeof(msg), false, 0);
	}
	rpcrdma_capture_close(cap, &st);
	assert_int_equal(st.cs_drops, 0);
	assert_int_equal(st.cs_frames, total);
	assert_int_equal(st.cs_files, 2);
	assert_int_equal(stat(p1, &sb), 0);
	assert_int_equal(sb.st_size, 24 + per_file * 4074);
	assert_int_equal(stat(g_path, &sb), 0);
	assert_int_equal(sb.st_size, 24 + 10 * 4074);
	unlink(p1);
	unlink(g_path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_send_only_v4),
		cmocka_unit_test(test_write_only_v6),
		cmocka_unit_test(test_aeth_ieth),
		cmocka_unit_test(test_pcap_headers),
		cmocka_unit_test(test_writer_split),
		cmocka_unit_test(test_writer_rotation),
		cmocka_unit_test(test_writer_drops),
		cmocka_unit_test(test_writer_rdma_data),
		cmocka_unit_test(test_writer_mode),
		cmocka_unit_test(test_writer_no_follow),
		cmocka_unit_test(test_writer_rotation_no_follow),
		cmocka_unit_test(test_writer_default_cap),
	};

	snprintf(g_path, sizeof(g_path), "/tmp/rpcrdma-capture-%d.pcap", (int)getpid());
	return cmocka_run_group_tests(tests, NULL, NULL);
}
