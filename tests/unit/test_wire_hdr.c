// SPDX-License-Identifier: MIT
/*
 * test_wire_hdr.c - RPC-over-RDMA v1 transport header codec (RFC 8166 4).
 *
 * Messages are written out word by word: W(x) spells the four bytes of the
 * big-endian XDR word x, so each line of a message is one wire word.  The
 * expected values are worked out by hand from the RFC's layout.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>

#include <cmocka.h>

#include <rpcrdma/wire.h>

#define W(x) (uint8_t)((uint32_t)(x) >> 24), (uint8_t)((uint32_t)(x) >> 16), \
	     (uint8_t)((uint32_t)(x) >> 8), (uint8_t)(x)

/* Fixed part: xid, version 1, credits, proc. */
#define FIXED(xid, credits, proc) W(xid), W(1), W(credits), W(proc)

static struct rpcrdma_hdr hdr;
static struct rpcrdma_wire_err err;

static void put_word(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/* Expect a rejection with @answer and @rule. */
static void expect_reject(bool reply, const uint8_t *buf, size_t len,
			  const struct rpcrdma_wire_limits *lim,
			  enum rpcrdma_wire_answer answer, const char *rule)
{
	int ret;

	memset(&err, 0xa5, sizeof(err));
	if (reply)
		ret = rpcrdma_wire_decode_reply(buf, len, lim, &hdr, &err);
	else
		ret = rpcrdma_wire_decode_call(buf, len, lim, &hdr, &err);
	assert_int_equal(ret, -EBADMSG);
	assert_int_equal(err.we_answer, answer);
	assert_non_null(err.we_rule);
	assert_string_equal(err.we_rule, rule);
	assert_true(strlen(err.we_detail) > 0);
	assert_true(strlen(err.we_detail) < sizeof(err.we_detail));
}

#define REJECT_CALL(buf, answer, rule) \
	expect_reject(false, buf, sizeof(buf), NULL, answer, rule)
#define REJECT_REPLY(buf, rule) \
	expect_reject(true, buf, sizeof(buf), NULL, RPCRDMA_ANSWER_DROP, rule)

/* Decode must succeed and re-encoding must give back the header bytes. */
static void expect_round_trip(bool reply, const uint8_t *buf, size_t len,
			      size_t hdr_len)
{
	uint8_t out[8192];
	int ret;

	if (reply)
		ret = rpcrdma_wire_decode_reply(buf, len, NULL, &hdr, &err);
	else
		ret = rpcrdma_wire_decode_call(buf, len, NULL, &hdr, &err);
	if (ret)
		fail_msg("decode failed: %s: %s", err.we_rule, err.we_detail);
	assert_int_equal(hdr.rh_hdr_len, hdr_len);
	assert_int_equal(hdr.rh_inline_len, len - hdr_len);
	assert_int_equal(rpcrdma_wire_hdr_size(&hdr), hdr_len);
	memset(out, 0xee, sizeof(out));
	ret = rpcrdma_wire_encode(out, sizeof(out), &hdr);
	assert_int_equal(ret, (int)hdr_len);
	assert_memory_equal(out, buf, hdr_len);
	/* One byte short of room: nothing fits. */
	assert_int_equal(rpcrdma_wire_encode(out, hdr_len - 1, &hdr), -ENOSPC);
}

static void assert_seg(uint32_t i, uint32_t handle, uint32_t length,
		       uint64_t offset)
{
	assert_true(i < hdr.rh_nsegs);
	assert_int_equal(hdr.rh_segs[i].rs_handle, handle);
	assert_int_equal(hdr.rh_segs[i].rs_length, length);
	assert_true(hdr.rh_segs[i].rs_offset == offset);
}

static void assert_chunk(const struct rpcrdma_chunk *c, uint32_t position,
			 uint32_t first, uint32_t nsegs, uint64_t length)
{
	assert_int_equal(c->rc_position, position);
	assert_int_equal(c->rc_first, first);
	assert_int_equal(c->rc_nsegs, nsegs);
	assert_true(c->rc_length == length);
}

/* ---- valid headers ---- */

static void test_limits_default(void **state)
{
	struct rpcrdma_wire_limits lim;

	(void)state;
	rpcrdma_wire_limits_default(&lim);
	assert_int_equal(lim.wl_max_segs_per_chunk, 16);
	assert_int_equal(lim.wl_max_read_chunks, 16);
	assert_int_equal(lim.wl_max_write_chunks, 16);
	assert_true(lim.wl_max_chunk_bytes == 1114112); /* 1 MiB + 64 KiB */
}

static void test_min_msg(void **state)
{
	/* The smallest RDMA_MSG, byte by byte, with an 8-byte inline body. */
	static const uint8_t msg[] = {
		0xde, 0xad, 0xbe, 0xef, /* xid */
		0x00, 0x00, 0x00, 0x01, /* version 1 */
		0x00, 0x00, 0x00, 0x80, /* credits 128 */
		0x00, 0x00, 0x00, 0x00, /* RDMA_MSG */
		0x00, 0x00, 0x00, 0x00, /* empty Read list */
		0x00, 0x00, 0x00, 0x00, /* empty Write list */
		0x00, 0x00, 0x00, 0x00, /* no Reply chunk */
		'b', 'o', 'd', 'y', 'b', 'y', 't', 'e',
	};

	(void)state;
	assert_int_equal(rpcrdma_wire_decode_call(msg, sizeof(msg), NULL, &hdr,
						  &err), 0);
	assert_int_equal(hdr.rh_xid, 0xdeadbeef);
	assert_int_equal(hdr.rh_vers, 1);
	assert_int_equal(hdr.rh_credits, 128);
	assert_int_equal(hdr.rh_proc, RDMA_MSG);
	assert_int_equal(hdr.rh_nsegs, 0);
	assert_int_equal(hdr.rh_nread, 0);
	assert_int_equal(hdr.rh_nwrite, 0);
	assert_false(hdr.rh_has_reply);
	assert_int_equal(hdr.rh_hdr_len, 28);
	assert_int_equal(hdr.rh_inline_len, 8);
	expect_round_trip(false, msg, sizeof(msg), 28);
	expect_round_trip(true, msg, sizeof(msg), 28);
}

static void test_encode_built_header(void **state)
{
	/* Encode from a hand-filled header (not from a decode). */
	static const uint8_t want[] = {
		FIXED(0x11223344, 64, RDMA_MSG),
		W(0),                         /* Read list */
		W(1), W(1),                   /* Write chunk, 1 segment */
		W(0x0a0b0c0d), W(4096), W(0x00000001), W(0x00002000),
		W(0),                         /* end of Write list */
		W(0),                         /* no Reply chunk */
	};
	struct rpcrdma_hdr h;
	uint8_t out[64];

	(void)state;
	memset(&h, 0, sizeof(h));
	h.rh_xid = 0x11223344;
	h.rh_vers = 1;
	h.rh_credits = 64;
	h.rh_proc = RDMA_MSG;
	h.rh_nsegs = 1;
	h.rh_segs[0] = (struct rpcrdma_segment){ 0x0a0b0c0d, 4096, 0x100002000ull };
	h.rh_nwrite = 1;
	h.rh_write[0] = (struct rpcrdma_chunk){ 0, 0, 1, 4096 };
	assert_int_equal(rpcrdma_wire_hdr_size(&h), 52);
	assert_int_equal(rpcrdma_wire_encode(out, sizeof(out), &h), 52);
	assert_memory_equal(out, want, sizeof(want));
}

static void test_read_list_grouping(void **state)
{
	/*
	 * Two segments at position 8 form one chunk of 100 + 28 = 128 bytes;
	 * a segment at 136 starts a second chunk.  Inline body: 16 bytes.
	 * Chunk 2 may start at most at 16 + 128 = 144 and at least at
	 * 8 + 128 = 136.
	 */
	static const uint8_t msg[] = {
		FIXED(7, 32, RDMA_MSG),
		W(1), W(8), W(0x100), W(100), W(0), W(0x1000),
		W(1), W(8), W(0x101), W(28), W(0xffffffff), W(0xfffffff0),
		W(1), W(136), W(0x102), W(4), W(0), W(0x3000),
		W(0),
		W(0),
		W(0),
		W(0x41414141), W(0x42424242), W(0x43434343), W(0x44444444),
	};

	(void)state;
	expect_round_trip(false, msg, sizeof(msg), 16 + 3 * 24 + 4 + 4 + 4);
	assert_int_equal(hdr.rh_hdr_len, 100);
	assert_int_equal(hdr.rh_inline_len, 16);
	assert_int_equal(hdr.rh_nread, 2);
	assert_chunk(&hdr.rh_read[0], 8, 0, 2, 128);
	assert_chunk(&hdr.rh_read[1], 136, 2, 1, 4);
	assert_int_equal(hdr.rh_nsegs, 3);
	assert_seg(0, 0x100, 100, 0x1000);
	assert_seg(1, 0x101, 28, 0xfffffffffffffff0ull);
	assert_seg(2, 0x102, 4, 0x3000);
}

static void test_read_list_unaligned_length(void **state)
{
	/*
	 * A 5-byte item at position 8 whose chunk omits the XDR pad: in the
	 * rebuilt stream it takes 8 bytes, so with a 16-byte inline body the
	 * next chunk may sit anywhere in 13..24 (multiples of 4: 16, 20, 24).
	 */
	uint8_t msg[] = {
		FIXED(9, 1, RDMA_MSG),
		W(1), W(8), W(1), W(5), W(0), W(0),
		W(1), W(24), W(2), W(4), W(0), W(0),
		W(0), W(0), W(0),
		W(0), W(0), W(0), W(0),
	};

	(void)state;
	expect_round_trip(false, msg, sizeof(msg), 76);
	assert_chunk(&hdr.rh_read[0], 8, 0, 1, 5);
	assert_chunk(&hdr.rh_read[1], 24, 1, 1, 4);
	put_word(msg + 16 + 24 + 4, 16);
	expect_round_trip(false, msg, sizeof(msg), 76);
	put_word(msg + 16 + 24 + 4, 28);
	REJECT_CALL(msg, RPCRDMA_ANSWER_ERR_CHUNK, "read-position-range");
	put_word(msg + 16 + 24 + 4, 12);
	REJECT_CALL(msg, RPCRDMA_ANSWER_ERR_CHUNK, "read-overlap");
}

static void test_write_list_and_reply_chunk(void **state)
{
	static const uint8_t msg[] = {
		FIXED(0x01000000, 128, RDMA_MSG),
		W(0),
		W(1), W(2),
		W(0xaa), W(65536), W(0x00000001), W(0x00000000),
		W(0xab), W(4096), W(0xffffffff), W(0xffffffff),
		W(1), W(1),
		W(0xac), W(512), W(0), W(4),
		W(0),
		W(1), W(1),
		W(0xad), W(1024), W(0x12345678), W(0x9abcdef0),
		W(0x80000000), /* inline body: 4 bytes */
	};

	(void)state;
	expect_round_trip(false, msg, sizeof(msg), 16 + 4 + 8 + 32 + 8 + 16 + 4 + 8 + 16);
	assert_int_equal(hdr.rh_hdr_len, 112);
	assert_int_equal(hdr.rh_inline_len, 4);
	assert_int_equal(hdr.rh_nread, 0);
	assert_int_equal(hdr.rh_nwrite, 2);
	assert_chunk(&hdr.rh_write[0], 0, 0, 2, 65536 + 4096);
	assert_chunk(&hdr.rh_write[1], 0, 2, 1, 512);
	assert_true(hdr.rh_has_reply);
	assert_chunk(&hdr.rh_reply, 0, 3, 1, 1024);
	assert_int_equal(hdr.rh_nsegs, 4);
	assert_seg(0, 0xaa, 65536, 0x100000000ull);
	assert_seg(1, 0xab, 4096, UINT64_MAX);
	assert_seg(2, 0xac, 512, 4);
	assert_seg(3, 0xad, 1024, 0x123456789abcdef0ull);
}

static void test_nomsg_call(void **state)
{
	/*
	 * Long Call: the whole call (200 bytes) in a position-zero chunk of
	 * two segments, a data chunk at 200 (its end), and a Reply chunk.
	 */
	uint8_t msg[] = {
		FIXED(0x55, 8, RDMA_NOMSG),
		W(1), W(0), W(0x10), W(120), W(0), W(0x10000),
		W(1), W(0), W(0x11), W(80), W(0), W(0x20000),
		W(1), W(200), W(0x12), W(8192), W(0), W(0x30000),
		W(0),
		W(0),
		W(1), W(1), W(0x13), W(4096), W(0), W(0x40000),
	};

	(void)state;
	expect_round_trip(false, msg, sizeof(msg), sizeof(msg));
	assert_int_equal(hdr.rh_proc, RDMA_NOMSG);
	assert_int_equal(hdr.rh_inline_len, 0);
	assert_int_equal(hdr.rh_nread, 2);
	assert_chunk(&hdr.rh_read[0], 0, 0, 2, 200);
	assert_chunk(&hdr.rh_read[1], 200, 2, 1, 8192);
	assert_chunk(&hdr.rh_reply, 0, 3, 1, 4096);
	/* 204 is past the 200-byte call. */
	put_word(msg + 16 + 48 + 4, 204);
	REJECT_CALL(msg, RPCRDMA_ANSWER_ERR_CHUNK, "read-position-range");
	/* 100 is inside it. */
	put_word(msg + 16 + 48 + 4, 100);
	expect_round_trip(false, msg, sizeof(msg), sizeof(msg));
}

static void test_nomsg_reply(void **state)
{
	static const uint8_t msg[] = {
		FIXED(0x56, 128, RDMA_NOMSG),
		W(0), W(0),
		W(1), W(2),
		W(0x20), W(4096), W(0), W(0x1000),
		W(0x21), W(100), W(0), W(0x2000),
	};

	(void)state;
	expect_round_trip(true, msg, sizeof(msg), sizeof(msg));
	assert_chunk(&hdr.rh_reply, 0, 0, 2, 4196);
	/* A call like this has no position-zero chunk. */
	REJECT_CALL(msg, RPCRDMA_ANSWER_ERR_CHUNK, "nomsg-no-call-chunk");
}

static void test_reply_unused_write_chunks(void **state)
{
	/* RFC 8166 4.3.2: an unused Write chunk with zero segments... */
	static const uint8_t zero_segs[] = {
		FIXED(0x60, 128, RDMA_MSG),
		W(0),
		W(1), W(0),
		W(0),
		W(0),
	};
	/* ...or with its segments' lengths set to zero. */
	static const uint8_t zero_lens[] = {
		FIXED(0x61, 128, RDMA_MSG),
		W(0),
		W(1), W(2),
		W(0x30), W(0), W(0), W(0x1000),
		W(0x31), W(0), W(0), W(0x2000),
		W(0),
		W(0),
	};
	/* A Reply chunk that the Responder did not use. */
	static const uint8_t empty_reply[] = {
		FIXED(0x62, 128, RDMA_MSG),
		W(0), W(0),
		W(1), W(0),
	};

	(void)state;
	expect_round_trip(true, zero_segs, sizeof(zero_segs), sizeof(zero_segs));
	assert_int_equal(hdr.rh_nwrite, 1);
	assert_chunk(&hdr.rh_write[0], 0, 0, 0, 0);
	expect_round_trip(true, zero_lens, sizeof(zero_lens), sizeof(zero_lens));
	assert_int_equal(hdr.rh_nwrite, 1);
	assert_chunk(&hdr.rh_write[0], 0, 0, 2, 0);
	expect_round_trip(true, empty_reply, sizeof(empty_reply), sizeof(empty_reply));
	assert_true(hdr.rh_has_reply);
	assert_chunk(&hdr.rh_reply, 0, 0, 0, 0);
	/* Zero segments are not acceptable in a call. */
	REJECT_CALL(zero_segs, RPCRDMA_ANSWER_ERR_CHUNK, "write-chunk-empty");
	REJECT_CALL(empty_reply, RPCRDMA_ANSWER_ERR_CHUNK, "reply-chunk-empty");
}

static void test_rdma_error_decode(void **state)
{
	static const uint8_t vers[] = {
		0x00, 0x00, 0x00, 0x2a, /* xid 42 */
		0x00, 0x00, 0x00, 0x01,
		0x00, 0x00, 0x00, 0x40, /* credits 64 */
		0x00, 0x00, 0x00, 0x04, /* RDMA_ERROR */
		0x00, 0x00, 0x00, 0x01, /* ERR_VERS */
		0x00, 0x00, 0x00, 0x01, /* low 1 */
		0x00, 0x00, 0x00, 0x01, /* high 1 */
	};
	static const uint8_t chunk[] = {
		0x00, 0x00, 0x00, 0x2b,
		0x00, 0x00, 0x00, 0x01,
		0x00, 0x00, 0x00, 0x40,
		0x00, 0x00, 0x00, 0x04,
		0x00, 0x00, 0x00, 0x02, /* ERR_CHUNK */
	};
	static const uint8_t vers_range[] = {
		FIXED(0x2c, 1, RDMA_ERROR), W(ERR_VERS), W(1), W(3),
	};

	(void)state;
	expect_round_trip(true, vers, sizeof(vers), 28);
	assert_int_equal(hdr.rh_xid, 42);
	assert_int_equal(hdr.rh_credits, 64);
	assert_int_equal(hdr.rh_proc, RDMA_ERROR);
	assert_int_equal(hdr.rh_err, ERR_VERS);
	assert_int_equal(hdr.rh_vers_low, 1);
	assert_int_equal(hdr.rh_vers_high, 1);
	expect_round_trip(true, chunk, sizeof(chunk), 20);
	assert_int_equal(hdr.rh_err, ERR_CHUNK);
	expect_round_trip(true, vers_range, sizeof(vers_range), 28);
	assert_int_equal(hdr.rh_vers_low, 1);
	assert_int_equal(hdr.rh_vers_high, 3);
	/* A Responder never answers an RDMA_ERROR. */
	REJECT_CALL(vers, RPCRDMA_ANSWER_DROP, "error-to-responder");
	REJECT_CALL(chunk, RPCRDMA_ANSWER_DROP, "error-to-responder");
}

static void test_rdma_error_malformed(void **state)
{
	static const uint8_t no_code[] = { FIXED(1, 1, RDMA_ERROR) };
	static const uint8_t vers_short[] = {
		FIXED(1, 1, RDMA_ERROR), W(ERR_VERS), W(1),
	};
	static const uint8_t bad_code[] = { FIXED(1, 1, RDMA_ERROR), W(3) };
	static const uint8_t empty_range[] = {
		FIXED(1, 1, RDMA_ERROR), W(ERR_VERS), W(2), W(1),
	};

	(void)state;
	REJECT_REPLY(no_code, "error-short");
	REJECT_REPLY(vers_short, "error-short");
	REJECT_REPLY(bad_code, "error-code");
	REJECT_REPLY(empty_range, "error-vers-range");
}

static void test_encode_error(void **state)
{
	static const uint8_t vers[] = {
		0x12, 0x34, 0x56, 0x78,
		0x00, 0x00, 0x00, 0x01,
		0x00, 0x00, 0x00, 0x20,
		0x00, 0x00, 0x00, 0x04,
		0x00, 0x00, 0x00, 0x01,
		0x00, 0x00, 0x00, 0x01,
		0x00, 0x00, 0x00, 0x01,
	};
	static const uint8_t chunk[] = {
		0x12, 0x34, 0x56, 0x78,
		0x00, 0x00, 0x00, 0x01,
		0x00, 0x00, 0x00, 0x20,
		0x00, 0x00, 0x00, 0x04,
		0x00, 0x00, 0x00, 0x02,
	};
	uint8_t out[32];

	(void)state;
	memset(out, 0xee, sizeof(out));
	assert_int_equal(rpcrdma_wire_encode_error(out, sizeof(out), 0x12345678,
						   32, ERR_VERS), 28);
	assert_memory_equal(out, vers, sizeof(vers));
	assert_int_equal(out[28], 0xee);
	memset(out, 0xee, sizeof(out));
	assert_int_equal(rpcrdma_wire_encode_error(out, 20, 0x12345678, 32,
						   ERR_CHUNK), 20);
	assert_memory_equal(out, chunk, sizeof(chunk));
	assert_int_equal(out[20], 0xee);
	assert_int_equal(rpcrdma_wire_encode_error(out, 27, 1, 1, ERR_VERS), -ENOSPC);
	assert_int_equal(rpcrdma_wire_encode_error(out, 19, 1, 1, ERR_CHUNK), -ENOSPC);
	assert_int_equal(rpcrdma_wire_encode_error(out, 32, 1, 1, 0), -EINVAL);
	assert_int_equal(rpcrdma_wire_encode_error(out, 32, 1, 1, 3), -EINVAL);
}

/* ---- the fixed part ---- */

static void test_rule_xid_short(void **state)
{
	static const uint8_t b[3] = { 0, 0, 1 };
	size_t n;

	(void)state;
	for (n = 0; n < 4; n++) {
		expect_reject(false, b, n, NULL, RPCRDMA_ANSWER_DROP, "xid-short");
		expect_reject(true, b, n, NULL, RPCRDMA_ANSWER_DROP, "xid-short");
	}
	expect_reject(false, NULL, 100, NULL, RPCRDMA_ANSWER_DROP, "xid-short");
}

static void test_rule_hdr_short(void **state)
{
	/* The Linux server answers a 12-byte message with ERR_CHUNK. */
	static const uint8_t twelve[] = { W(0xcafe0001), W(1), W(16) };
	static const uint8_t four[] = { W(0xcafe0002) };
	static const uint8_t eight[] = { W(0xcafe0003), W(1) };

	(void)state;
	REJECT_CALL(twelve, RPCRDMA_ANSWER_ERR_CHUNK, "hdr-short");
	assert_int_equal(err.we_xid, 0xcafe0001);
	REJECT_CALL(four, RPCRDMA_ANSWER_ERR_CHUNK, "hdr-short");
	assert_int_equal(err.we_xid, 0xcafe0002);
	REJECT_CALL(eight, RPCRDMA_ANSWER_ERR_CHUNK, "hdr-short");
	assert_int_equal(err.we_xid, 0xcafe0003);
	REJECT_REPLY(twelve, "hdr-short");
}

static void test_rule_version(void **state)
{
	static const uint8_t v2[] = { W(0x77), W(2) };
	static const uint8_t v0[] = {
		W(0x78), W(0), W(1), W(RDMA_MSG), W(0), W(0), W(0),
	};

	(void)state;
	REJECT_CALL(v2, RPCRDMA_ANSWER_ERR_VERS, "version");
	assert_int_equal(err.we_xid, 0x77);
	REJECT_CALL(v0, RPCRDMA_ANSWER_ERR_VERS, "version");
	assert_int_equal(err.we_xid, 0x78);
	REJECT_REPLY(v2, "version");
}

static void test_rule_proc(void **state)
{
	uint8_t m[] = { FIXED(0x99, 1, RDMA_MSGP), W(0), W(0), W(0) };

	(void)state;
	REJECT_CALL(m, RPCRDMA_ANSWER_ERR_CHUNK, "proc-obsolete");
	assert_int_equal(err.we_xid, 0x99);
	REJECT_REPLY(m, "proc-obsolete");
	put_word(m + 12, RDMA_DONE);
	REJECT_CALL(m, RPCRDMA_ANSWER_ERR_CHUNK, "proc-obsolete");
	put_word(m + 12, 5);
	REJECT_CALL(m, RPCRDMA_ANSWER_ERR_CHUNK, "proc-unknown");
	put_word(m + 12, 0xffffffff);
	REJECT_CALL(m, RPCRDMA_ANSWER_ERR_CHUNK, "proc-unknown");
	REJECT_REPLY(m, "proc-unknown");
}

static void test_rule_cut_short_anywhere(void **state)
{
	/* Every prefix of a valid header, from 4 bytes on, is ERR_CHUNK. */
	static const uint8_t msg[] = {
		FIXED(0xabcdef01, 4, RDMA_MSG),
		W(1), W(4), W(1), W(8), W(0), W(0),
		W(0),
		W(1), W(1), W(2), W(16), W(0), W(0),
		W(0),
		W(1), W(1), W(3), W(32), W(0), W(0),
		W(0x01010101), W(0x02020202),
	};
	size_t hdr_len = sizeof(msg) - 8, n;

	(void)state;
	expect_round_trip(false, msg, sizeof(msg), hdr_len);
	for (n = 4; n < hdr_len; n++) {
		assert_int_equal(rpcrdma_wire_decode_call(msg, n, NULL, &hdr,
							  &err), -EBADMSG);
		assert_int_equal(err.we_answer, RPCRDMA_ANSWER_ERR_CHUNK);
		assert_int_equal(err.we_xid, 0xabcdef01);
		assert_int_equal(rpcrdma_wire_decode_reply(msg, n, NULL, &hdr,
							   &err), -EBADMSG);
		assert_int_equal(err.we_answer, RPCRDMA_ANSWER_DROP);
	}
}

/* ---- lists running past the end, bad discriminators ---- */

static void test_rule_list_overrun(void **state)
{
	static const uint8_t read_entry[] = {
		FIXED(1, 1, RDMA_MSG), W(1), W(0), W(1), W(4),
	};
	static const uint8_t read_term[] = {
		FIXED(1, 1, RDMA_MSG), W(1), W(8), W(1), W(4), W(0), W(0),
	};
	static const uint8_t write_segs[] = {
		FIXED(1, 1, RDMA_MSG), W(0),
		W(1), W(2), W(1), W(4), W(0), W(0), /* 1 of 2 segments */
		W(0), W(0),
	};
	static const uint8_t write_count[] = { FIXED(1, 1, RDMA_MSG), W(0), W(1) };
	static const uint8_t reply_segs[] = {
		FIXED(1, 1, RDMA_MSG), W(0), W(0), W(1), W(1), W(7), W(8),
	};
	static const uint8_t reply_disc[] = { FIXED(1, 1, RDMA_MSG), W(0), W(0) };

	(void)state;
	REJECT_CALL(read_entry, RPCRDMA_ANSWER_ERR_CHUNK, "read-list-overrun");
	REJECT_CALL(read_term, RPCRDMA_ANSWER_ERR_CHUNK, "read-list-overrun");
	REJECT_CALL(write_segs, RPCRDMA_ANSWER_ERR_CHUNK, "write-list-overrun");
	REJECT_CALL(write_count, RPCRDMA_ANSWER_ERR_CHUNK, "write-list-overrun");
	REJECT_CALL(reply_segs, RPCRDMA_ANSWER_ERR_CHUNK, "reply-chunk-overrun");
	REJECT_CALL(reply_disc, RPCRDMA_ANSWER_ERR_CHUNK, "reply-chunk-overrun");
	REJECT_REPLY(write_segs, "write-list-overrun");
}

static void test_rule_discriminator(void **state)
{
	static const uint8_t read[] = { FIXED(1, 1, RDMA_MSG), W(2), W(0), W(0) };
	static const uint8_t write[] = { FIXED(1, 1, RDMA_MSG), W(0), W(7), W(0) };
	static const uint8_t reply[] = {
		FIXED(1, 1, RDMA_MSG), W(0), W(0), W(0xffffffff),
	};

	(void)state;
	REJECT_CALL(read, RPCRDMA_ANSWER_ERR_CHUNK, "list-discriminator");
	REJECT_CALL(write, RPCRDMA_ANSWER_ERR_CHUNK, "list-discriminator");
	REJECT_CALL(reply, RPCRDMA_ANSWER_ERR_CHUNK, "list-discriminator");
}

static void test_rule_seg_count_wrap(void **state)
{
	/*
	 * 0x10000001 segments of 16 bytes: 0x100000010 bytes, which a 32-bit
	 * sum would see as 0x10, exactly what follows the count.
	 */
	static const uint8_t write[] = {
		FIXED(1, 1, RDMA_MSG), W(0),
		W(1), W(0x10000001), W(1), W(4), W(0), W(0),
	};
	static const uint8_t reply[] = {
		FIXED(1, 1, RDMA_MSG), W(0), W(0),
		W(1), W(0x10000001), W(1), W(4), W(0), W(0),
	};
	/* The largest count that does not wrap: runs past the end instead. */
	static const uint8_t no_wrap[] = {
		FIXED(1, 1, RDMA_MSG), W(0),
		W(1), W(0x0fffffff), W(1), W(4), W(0), W(0),
	};

	(void)state;
	REJECT_CALL(write, RPCRDMA_ANSWER_ERR_CHUNK, "seg-count-wrap");
	REJECT_CALL(reply, RPCRDMA_ANSWER_ERR_CHUNK, "seg-count-wrap");
	REJECT_CALL(no_wrap, RPCRDMA_ANSWER_ERR_CHUNK, "write-list-overrun");
	REJECT_REPLY(write, "seg-count-wrap");
}

/* ---- limits ---- */

/* Build "fixed, Read list of @nread entries, Write list, Reply 0". */
static size_t build_msg(uint8_t *buf, uint32_t nread, uint32_t read_chunk_segs,
			uint32_t nwrite, uint32_t write_segs)
{
	uint8_t *p = buf;
	uint32_t i, j;

	put_word(p, 0x1234); put_word(p + 4, 1); put_word(p + 8, 1);
	put_word(p + 12, RDMA_MSG);
	p += 16;
	for (i = 0; i < nread; i++) {
		put_word(p, 1);
		/* a new chunk every read_chunk_segs segments, zero-length */
		put_word(p + 4, 4 + 4 * (i / read_chunk_segs));
		put_word(p + 8, i); put_word(p + 12, 0);
		put_word(p + 16, 0); put_word(p + 20, 0);
		p += 24;
	}
	put_word(p, 0);
	p += 4;
	for (i = 0; i < nwrite; i++) {
		put_word(p, 1); put_word(p + 4, write_segs);
		p += 8;
		for (j = 0; j < write_segs; j++, p += 16) {
			put_word(p, j); put_word(p + 4, 8);
			put_word(p + 8, 0); put_word(p + 12, 0);
		}
	}
	put_word(p, 0); put_word(p + 4, 0);
	p += 8;
	/* inline body long enough for any position used above */
	memset(p, 0, 128);
	return (size_t)(p - buf) + 128;
}

static void test_rule_chunk_segs(void **state)
{
	static uint8_t buf[16384];
	struct rpcrdma_wire_limits lim;
	size_t n;

	(void)state;
	/* 16 segments in one chunk is fine, 17 is not. */
	n = build_msg(buf, 0, 1, 1, 16);
	expect_round_trip(false, buf, n, n - 128);
	n = build_msg(buf, 0, 1, 1, 17);
	expect_reject(false, buf, n, NULL, RPCRDMA_ANSWER_ERR_CHUNK, "chunk-segs");
	n = build_msg(buf, 16, 16, 0, 0);
	expect_round_trip(false, buf, n, n - 128);
	assert_int_equal(hdr.rh_nread, 1);
	assert_int_equal(hdr.rh_read[0].rc_nsegs, 16);
	n = build_msg(buf, 17, 17, 0, 0);
	expect_reject(false, buf, n, NULL, RPCRDMA_ANSWER_ERR_CHUNK, "chunk-segs");
	/* A configured limit below the default. */
	rpcrdma_wire_limits_default(&lim);
	lim.wl_max_segs_per_chunk = 2;
	n = build_msg(buf, 0, 1, 1, 3);
	expect_reject(false, buf, n, &lim, RPCRDMA_ANSWER_ERR_CHUNK, "chunk-segs");
	n = build_msg(buf, 0, 1, 1, 2);
	assert_int_equal(rpcrdma_wire_decode_call(buf, n, &lim, &hdr, &err), 0);
}

static void test_rule_chunk_counts(void **state)
{
	static uint8_t buf[16384];
	struct rpcrdma_wire_limits lim;
	size_t n;

	(void)state;
	n = build_msg(buf, 16, 1, 16, 1);
	expect_round_trip(false, buf, n, n - 128);
	assert_int_equal(hdr.rh_nread, 16);
	assert_int_equal(hdr.rh_nwrite, 16);
	n = build_msg(buf, 17, 1, 0, 0);
	expect_reject(false, buf, n, NULL, RPCRDMA_ANSWER_ERR_CHUNK, "read-chunks");
	n = build_msg(buf, 0, 1, 17, 1);
	expect_reject(false, buf, n, NULL, RPCRDMA_ANSWER_ERR_CHUNK, "write-chunks");
	rpcrdma_wire_limits_default(&lim);
	lim.wl_max_read_chunks = 1;
	lim.wl_max_write_chunks = 1;
	n = build_msg(buf, 2, 1, 0, 0);
	expect_reject(false, buf, n, &lim, RPCRDMA_ANSWER_ERR_CHUNK, "read-chunks");
	n = build_msg(buf, 0, 1, 2, 1);
	expect_reject(false, buf, n, &lim, RPCRDMA_ANSWER_ERR_CHUNK, "write-chunks");
	/* Limits above the compile-time capacity are clamped to it. */
	lim.wl_max_read_chunks = 1000;
	lim.wl_max_write_chunks = 1000;
	lim.wl_max_segs_per_chunk = 1000;
	n = build_msg(buf, 17, 1, 0, 0);
	expect_reject(false, buf, n, &lim, RPCRDMA_ANSWER_ERR_CHUNK, "read-chunks");
	n = build_msg(buf, 0, 1, 17, 1);
	expect_reject(false, buf, n, &lim, RPCRDMA_ANSWER_ERR_CHUNK, "write-chunks");
}

static void test_rule_total_segs(void **state)
{
	static uint8_t buf[16384];
	struct rpcrdma_wire_limits lim;
	size_t n;

	(void)state;
	/* 16 Read chunks of 16 segments: 256, exactly the capacity. */
	n = build_msg(buf, 256, 16, 0, 0);
	expect_round_trip(false, buf, n, n - 128);
	assert_int_equal(hdr.rh_nsegs, 256);
	assert_int_equal(hdr.rh_nread, 16);
	/* One Write segment more is one too many. */
	n = build_msg(buf, 256, 16, 1, 1);
	expect_reject(false, buf, n, NULL, RPCRDMA_ANSWER_ERR_CHUNK, "total-segs");
	/* With chunks allowed 256 segments, the Read list alone can overflow. */
	rpcrdma_wire_limits_default(&lim);
	lim.wl_max_segs_per_chunk = 256;
	n = build_msg(buf, 256, 200, 0, 0);
	assert_int_equal(rpcrdma_wire_decode_call(buf, n, &lim, &hdr, &err), 0);
	assert_int_equal(hdr.rh_nread, 2);
	assert_chunk(&hdr.rh_read[1], 8, 200, 56, 0);
	n = build_msg(buf, 257, 200, 0, 0);
	expect_reject(false, buf, n, &lim, RPCRDMA_ANSWER_ERR_CHUNK, "total-segs");
}

static void test_rule_chunk_length(void **state)
{
	struct rpcrdma_wire_limits lim;
	uint8_t m[] = {
		FIXED(1, 1, RDMA_MSG), W(0),
		W(1), W(2),
		W(1), W(0xffffffff), W(0), W(0),
		W(2), W(2), W(0), W(0),
		W(0), W(0),
	};
	static const uint8_t at_limit[] = {
		FIXED(1, 1, RDMA_MSG), W(0),
		W(1), W(1), W(1), W(0x00110000), W(0), W(0),
		W(0), W(0),
	};
	static const uint8_t over_limit[] = {
		FIXED(1, 1, RDMA_MSG), W(0),
		W(1), W(1), W(1), W(0x00110001), W(0), W(0),
		W(0), W(0),
	};
	static const uint8_t read_over[] = {
		FIXED(1, 1, RDMA_MSG),
		W(1), W(4), W(1), W(0x00100000), W(0), W(0),
		W(1), W(4), W(2), W(0x00010001), W(0), W(0),
		W(0), W(0), W(0), W(0),
	};

	(void)state;
	/*
	 * 0xffffffff + 2 = 0x100000001: wraps 32 bits, with or without a
	 * byte limit that would catch it too.
	 */
	rpcrdma_wire_limits_default(&lim);
	lim.wl_max_chunk_bytes = UINT64_MAX;
	expect_reject(false, m, sizeof(m), &lim, RPCRDMA_ANSWER_ERR_CHUNK,
		      "chunk-length-wrap");
	REJECT_CALL(m, RPCRDMA_ANSWER_ERR_CHUNK, "chunk-length-wrap");
	/* 0xffffffff + 1 = 0x100000000: just past. */
	put_word(m + 16 + 4 + 8 + 16 + 4, 1);
	expect_reject(false, m, sizeof(m), &lim, RPCRDMA_ANSWER_ERR_CHUNK,
		      "chunk-length-wrap");
	/* 0xfffffffe + 1 = 0xffffffff fits in 32 bits. */
	put_word(m + 16 + 4 + 8 + 4, 0xfffffffe);
	put_word(m + 16 + 4 + 8 + 16 + 4, 1);
	assert_int_equal(rpcrdma_wire_decode_call(m, sizeof(m), &lim, &hdr, &err), 0);
	assert_true(hdr.rh_write[0].rc_length == 0xffffffffull);

	expect_round_trip(false, at_limit, sizeof(at_limit), sizeof(at_limit));
	REJECT_CALL(over_limit, RPCRDMA_ANSWER_ERR_CHUNK, "chunk-too-long");
	REJECT_REPLY(over_limit, "chunk-too-long");
	/* 0x100000 + 0x10001 = 0x110001 in a Read chunk. */
	REJECT_CALL(read_over, RPCRDMA_ANSWER_ERR_CHUNK, "chunk-too-long");
}

/* ---- Read chunk positions ---- */

static void test_rule_read_positions(void **state)
{
	/* Inline body 8 bytes; a chunk at 4 (length 4), then at 8. */
	uint8_t m[] = {
		FIXED(1, 1, RDMA_MSG),
		W(1), W(4), W(1), W(4), W(0), W(0),
		W(1), W(8), W(2), W(4), W(0), W(0),
		W(0), W(0), W(0),
		W(0), W(0),
	};
	const size_t pos1 = 16 + 4, pos2 = 16 + 24 + 4;

	(void)state;
	expect_round_trip(false, m, sizeof(m), sizeof(m) - 8);
	/* At 12 = 8 + 4 the second chunk sits at the very end: fine. */
	put_word(m + pos2, 12);
	expect_round_trip(false, m, sizeof(m), sizeof(m) - 8);
	/* 16 is past the 12-byte rebuilt message. */
	put_word(m + pos2, 16);
	REJECT_CALL(m, RPCRDMA_ANSWER_ERR_CHUNK, "read-position-range");
	/* Not a multiple of 4. */
	put_word(m + pos2, 10);
	REJECT_CALL(m, RPCRDMA_ANSWER_ERR_CHUNK, "read-position-align");
	put_word(m + pos2, 8);
	put_word(m + pos1, 2);
	REJECT_CALL(m, RPCRDMA_ANSWER_ERR_CHUNK, "read-position-align");
	/* Decreasing. */
	put_word(m + pos1, 8);
	put_word(m + pos2, 4);
	REJECT_CALL(m, RPCRDMA_ANSWER_ERR_CHUNK, "read-position-order");
	/* Overlapping: the first chunk covers 4..12, the next starts at 8. */
	put_word(m + pos1, 4);
	put_word(m + pos2, 8);
	put_word(m + pos1 + 8, 8);
	REJECT_CALL(m, RPCRDMA_ANSWER_ERR_CHUNK, "read-overlap");
	/* Past the inline body from the first chunk on. */
	put_word(m + pos1, 12);
	put_word(m + pos1 + 8, 4);
	put_word(m + pos2, 16);
	REJECT_CALL(m, RPCRDMA_ANSWER_ERR_CHUNK, "read-position-range");
	/* Position zero belongs to RDMA_NOMSG. */
	put_word(m + pos1, 0);
	put_word(m + pos2, 8);
	REJECT_CALL(m, RPCRDMA_ANSWER_ERR_CHUNK, "read-position-zero");
}

static void test_rule_nomsg(void **state)
{
	static const uint8_t neither[] = { FIXED(3, 1, RDMA_NOMSG), W(0), W(0), W(0) };
	static const uint8_t reply_only[] = {
		FIXED(3, 1, RDMA_NOMSG), W(0), W(0), W(1), W(1), W(9), W(512), W(0), W(0),
	};
	static const uint8_t not_zero[] = {
		FIXED(3, 1, RDMA_NOMSG),
		W(1), W(8), W(1), W(64), W(0), W(0),
		W(0), W(0), W(0),
	};

	(void)state;
	REJECT_CALL(neither, RPCRDMA_ANSWER_ERR_CHUNK, "nomsg-no-call-chunk");
	REJECT_CALL(reply_only, RPCRDMA_ANSWER_ERR_CHUNK, "nomsg-no-call-chunk");
	REJECT_CALL(not_zero, RPCRDMA_ANSWER_ERR_CHUNK, "nomsg-no-call-chunk");
	REJECT_REPLY(neither, "nomsg-no-reply-chunk");
	expect_round_trip(true, reply_only, sizeof(reply_only), sizeof(reply_only));
}

static void test_rule_reply_read_list(void **state)
{
	static const uint8_t m[] = {
		FIXED(4, 1, RDMA_MSG),
		W(1), W(4), W(1), W(4), W(0), W(0),
		W(0), W(0), W(0),
		W(0), W(0),
	};

	(void)state;
	expect_round_trip(false, m, sizeof(m), sizeof(m) - 8);
	REJECT_REPLY(m, "reply-read-list");
	assert_int_equal(err.we_xid, 4);
}

/* ---- sizes and encoder argument checks ---- */

static void test_max_hdr_size(void **state)
{
	(void)state;
	assert_int_equal(rpcrdma_wire_max_hdr_size(0, 0, 0, 0), 28);
	/* 16 + (4 + 24) + 4 + 4 + 4 */
	assert_int_equal(rpcrdma_wire_max_hdr_size(1, 0, 0, 0), 52);
	/* 16 + 4 + (8 + 16 * 16) + 4 + (8 + 16) */
	assert_int_equal(rpcrdma_wire_max_hdr_size(0, 1, 16, 1), 312);
	/* 16 + 4 + 4 + (8 + 16) */
	assert_int_equal(rpcrdma_wire_max_hdr_size(0, 0, 0, 1), 48);
	/* 16 + 2 * 24 + 4 + 2 * 8 + 3 * 16 + 4 + 4 */
	assert_int_equal(rpcrdma_wire_max_hdr_size(2, 2, 3, 0), 140);
}

static void test_encode_invalid(void **state)
{
	struct rpcrdma_hdr h;
	uint8_t out[256];

	(void)state;
	memset(&h, 0, sizeof(h));
	h.rh_proc = RDMA_MSGP;
	assert_int_equal(rpcrdma_wire_encode(out, sizeof(out), &h), -EINVAL);
	assert_int_equal(rpcrdma_wire_hdr_size(&h), 0);
	h.rh_proc = 9;
	assert_int_equal(rpcrdma_wire_encode(out, sizeof(out), &h), -EINVAL);
	h.rh_proc = RDMA_ERROR;
	h.rh_err = 7;
	assert_int_equal(rpcrdma_wire_encode(out, sizeof(out), &h), -EINVAL);
	h.rh_proc = RDMA_MSG;
	h.rh_nsegs = 2;
	h.rh_nwrite = 1;
	h.rh_write[0] = (struct rpcrdma_chunk){ 0, 1, 2, 0 }; /* segs 1..2 of 2 */
	assert_int_equal(rpcrdma_wire_encode(out, sizeof(out), &h), -EINVAL);
	h.rh_write[0] = (struct rpcrdma_chunk){ 0, 0xffffffff, 2, 0 };
	assert_int_equal(rpcrdma_wire_encode(out, sizeof(out), &h), -EINVAL);
	h.rh_write[0] = (struct rpcrdma_chunk){ 0, 0, 2, 0 };
	assert_int_equal(rpcrdma_wire_encode(out, sizeof(out), &h), 28 + 8 + 32);
	h.rh_nwrite = RPCRDMA_WIRE_MAX_WRITE_CHUNKS + 1;
	assert_int_equal(rpcrdma_wire_encode(out, sizeof(out), &h), -EINVAL);
	h.rh_nwrite = 0;
	h.rh_nsegs = RPCRDMA_WIRE_MAX_SEGS + 1;
	assert_int_equal(rpcrdma_wire_encode(out, sizeof(out), &h), -EINVAL);
	h.rh_nsegs = 0;
	h.rh_has_reply = true;
	h.rh_reply = (struct rpcrdma_chunk){ 0, 0, 1, 0 };
	assert_int_equal(rpcrdma_wire_encode(out, sizeof(out), &h), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_limits_default),
		cmocka_unit_test(test_min_msg),
		cmocka_unit_test(test_encode_built_header),
		cmocka_unit_test(test_read_list_grouping),
		cmocka_unit_test(test_read_list_unaligned_length),
		cmocka_unit_test(test_write_list_and_reply_chunk),
		cmocka_unit_test(test_nomsg_call),
		cmocka_unit_test(test_nomsg_reply),
		cmocka_unit_test(test_reply_unused_write_chunks),
		cmocka_unit_test(test_rdma_error_decode),
		cmocka_unit_test(test_rdma_error_malformed),
		cmocka_unit_test(test_encode_error),
		cmocka_unit_test(test_rule_xid_short),
		cmocka_unit_test(test_rule_hdr_short),
		cmocka_unit_test(test_rule_version),
		cmocka_unit_test(test_rule_proc),
		cmocka_unit_test(test_rule_cut_short_anywhere),
		cmocka_unit_test(test_rule_list_overrun),
		cmocka_unit_test(test_rule_discriminator),
		cmocka_unit_test(test_rule_seg_count_wrap),
		cmocka_unit_test(test_rule_chunk_segs),
		cmocka_unit_test(test_rule_chunk_counts),
		cmocka_unit_test(test_rule_total_segs),
		cmocka_unit_test(test_rule_chunk_length),
		cmocka_unit_test(test_rule_read_positions),
		cmocka_unit_test(test_rule_nomsg),
		cmocka_unit_test(test_rule_reply_read_list),
		cmocka_unit_test(test_max_hdr_size),
		cmocka_unit_test(test_encode_invalid),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
