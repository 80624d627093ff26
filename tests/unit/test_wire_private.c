// SPDX-License-Identifier: MIT
/*
 * test_wire_private.c - RFC 8797 connection private data and the inline
 * threshold rule.  Layout (RFC 8797 section 4): 4-octet Format Identifier
 * 0xf6ab0e18 in network order, then one octet each: Version, Flags (bit 0
 * = Send With Invalidate accepted), Send Size, Receive Size, the sizes as
 * (bytes / 1024) - 1.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <errno.h>

#include <cmocka.h>

#include <rpcrdma/wire.h>

static void encode(uint32_t flags, uint32_t send, uint32_t recv, uint8_t out[8])
{
	struct rpcrdma_cm_private p = {
		.cp_version = 1,
		.cp_flags = flags,
		.cp_send_size = send,
		.cp_recv_size = recv,
	};

	memset(out, 0xee, 8);
	rpcrdma_wire_encode_private(out, &p);
}

static void test_encode_linux_defaults(void **state)
{
	/* 4096 bytes = 4 KiB: code 3. */
	static const uint8_t want[8] = { 0xf6, 0xab, 0x0e, 0x18, 0x01, 0x01, 0x03, 0x03 };
	uint8_t out[8];

	(void)state;
	encode(RPCRDMA_CM_FLAG_RSI, 4096, 4096, out);
	assert_memory_equal(out, want, 8);
}

static void test_encode_sizes(void **state)
{
	static const uint8_t min_max[8] = { 0xf6, 0xab, 0x0e, 0x18, 0x01, 0x00, 0x00, 0xff };
	static const uint8_t rounded[8] = { 0xf6, 0xab, 0x0e, 0x18, 0x01, 0x00, 0x01, 0x00 };
	static const uint8_t clamped[8] = { 0xf6, 0xab, 0x0e, 0x18, 0x01, 0x00, 0x00, 0xff };
	uint8_t out[8];

	(void)state;
	encode(0, 1024, 262144, out);
	assert_memory_equal(out, min_max, 8);
	/* 2047 rounds down to 1 KiB (code 0); 1023 clamps up to 1 KiB. */
	encode(0, 2048, 2047, out);
	assert_memory_equal(out, rounded, 8);
	encode(0, 1023, 1u << 30, out);
	assert_memory_equal(out, clamped, 8);
	encode(0, 0, 0xffffffff, out);
	assert_memory_equal(out, clamped, 8);
}

static void test_encode_reserved_flags_zero(void **state)
{
	static const uint8_t want[8] = { 0xf6, 0xab, 0x0e, 0x18, 0x01, 0x01, 0x1f, 0x7f };
	uint8_t out[8];

	(void)state;
	/* 32 KiB -> 31 = 0x1f; 128 KiB -> 127 = 0x7f. */
	encode(0xffffffff, 32768, 131072, out);
	assert_memory_equal(out, want, 8);
}

static void test_decode(void **state)
{
	static const uint8_t in[8] = { 0xf6, 0xab, 0x0e, 0x18, 0x01, 0x01, 0x00, 0xff };
	struct rpcrdma_cm_private p;

	(void)state;
	memset(&p, 0xa5, sizeof(p));
	assert_int_equal(rpcrdma_wire_decode_private(in, sizeof(in), &p), 0);
	assert_int_equal(p.cp_version, 1);
	assert_int_equal(p.cp_flags, RPCRDMA_CM_FLAG_RSI);
	assert_int_equal(p.cp_send_size, 1024);
	assert_int_equal(p.cp_recv_size, 262144);
}

static void test_decode_padded_and_reserved(void **state)
{
	/* CM pads private data with zeroes; reserved flag bits are ignored. */
	uint8_t in[56] = { 0xf6, 0xab, 0x0e, 0x18, 0x01, 0xfe, 0x07, 0x0f };
	struct rpcrdma_cm_private p;

	(void)state;
	assert_int_equal(rpcrdma_wire_decode_private(in, sizeof(in), &p), 0);
	assert_int_equal(p.cp_flags, 0);
	assert_int_equal(p.cp_send_size, 8192);
	assert_int_equal(p.cp_recv_size, 16384);
}

static void test_decode_absent(void **state)
{
	static const uint8_t in[8] = { 0xf6, 0xab, 0x0e, 0x18, 0x01, 0x01, 0x03, 0x03 };
	static const uint8_t bad_magic[8] = { 0x18, 0x0e, 0xab, 0xf6, 0x01, 0x01, 0x03, 0x03 };
	static const uint8_t v2[8] = { 0xf6, 0xab, 0x0e, 0x18, 0x02, 0x01, 0x03, 0x03 };
	static const uint8_t v0[8] = { 0xf6, 0xab, 0x0e, 0x18, 0x00, 0x01, 0x03, 0x03 };
	struct rpcrdma_cm_private p;

	(void)state;
	assert_int_equal(rpcrdma_wire_decode_private(NULL, 0, &p), -ENODATA);
	assert_int_equal(rpcrdma_wire_decode_private(NULL, 8, &p), -ENODATA);
	assert_int_equal(rpcrdma_wire_decode_private(in, 7, &p), -ENODATA);
	assert_int_equal(rpcrdma_wire_decode_private(in, 0, &p), -ENODATA);
	/* The magic in little-endian order is not the magic. */
	assert_int_equal(rpcrdma_wire_decode_private(bad_magic, 8, &p), -ENODATA);
	assert_int_equal(rpcrdma_wire_decode_private(v2, 8, &p), -EPROTONOSUPPORT);
	assert_int_equal(rpcrdma_wire_decode_private(v0, 8, &p), -EPROTONOSUPPORT);
}

static void test_round_trip_all_codes(void **state)
{
	struct rpcrdma_cm_private p, q;
	uint8_t out[8];
	uint32_t code;

	(void)state;
	for (code = 0; code < 256; code++) {
		p.cp_version = 1;
		p.cp_flags = code & 1;
		p.cp_send_size = (code + 1) * 1024;
		p.cp_recv_size = (256 - code) * 1024;
		rpcrdma_wire_encode_private(out, &p);
		assert_int_equal(out[6], code);
		assert_int_equal(out[7], 255 - code);
		assert_int_equal(rpcrdma_wire_decode_private(out, 8, &q), 0);
		assert_memory_equal(&p, &q, sizeof(p));
	}
}

static void test_inline_threshold(void **state)
{
	(void)state;
	assert_int_equal(rpcrdma_wire_inline_threshold(4096, 0), 1024);
	assert_int_equal(rpcrdma_wire_inline_threshold(512, 0), 512);
	assert_int_equal(rpcrdma_wire_inline_threshold(4096, 8192), 4096);
	assert_int_equal(rpcrdma_wire_inline_threshold(4096, 2048), 2048);
	assert_int_equal(rpcrdma_wire_inline_threshold(262144, 262144), 262144);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_encode_linux_defaults),
		cmocka_unit_test(test_encode_sizes),
		cmocka_unit_test(test_encode_reserved_flags_zero),
		cmocka_unit_test(test_decode),
		cmocka_unit_test(test_decode_padded_and_reserved),
		cmocka_unit_test(test_decode_absent),
		cmocka_unit_test(test_round_trip_all_codes),
		cmocka_unit_test(test_inline_threshold),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
