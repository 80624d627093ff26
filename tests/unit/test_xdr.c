// SPDX-License-Identifier: MIT
/*
 * test_xdr.c - the bounded XDR stream (RFC 4506): big-endian words,
 * opaque round-up, and the sticky error on short buffers.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include <rpcrdma/xdr.h>

static void test_encode_bytes(void **state)
{
	uint8_t buf[32];
	const uint8_t want[] = {
		0x01, 0x02, 0x03, 0x04,                         /* u32 */
		0x00, 0x00, 0x00, 0x05, 0x06, 0x07, 0x08, 0x09, /* u64 */
		0x00, 0x00, 0x00, 0x03, 'a', 'b', 'c', 0x00,    /* opaque<> "abc" + pad */
	};
	struct rpcrdma_xdr xs;

	(void)state;
	memset(buf, 0xee, sizeof(buf));
	rpcrdma_xdr_init(&xs, buf, sizeof(buf));
	rpcrdma_xdr_put_u32(&xs, 0x01020304);
	rpcrdma_xdr_put_u64(&xs, 0x0000000506070809ull);
	rpcrdma_xdr_put_opaque(&xs, "abc", 3);
	assert_true(rpcrdma_xdr_ok(&xs));
	assert_int_equal(xs.xs_pos, sizeof(want));
	assert_memory_equal(buf, want, sizeof(want));
	/* 12 bytes left: a 9-byte opaque needs 4 + 12. */
	rpcrdma_xdr_put_opaque(&xs, "123456789", 9);
	assert_false(rpcrdma_xdr_ok(&xs));
	assert_int_equal(xs.xs_pos, sizeof(want)); /* nothing written */
}

static void test_decode_bounds(void **state)
{
	uint8_t buf[] = {
		0x00, 0x00, 0x00, 0x02, 'h', 'i', 0x00, 0x00, /* opaque "hi" */
		0x00, 0x00, 0x00, 0x01,                       /* bool true */
		0x00, 0x00, 0x00, 0x09, 'x',                  /* claims 9, has 1 */
	};
	struct rpcrdma_xdr xs;
	const uint8_t *p;
	uint32_t len;

	(void)state;
	rpcrdma_xdr_init(&xs, buf, sizeof(buf));
	p = rpcrdma_xdr_get_opaque(&xs, 16, &len);
	assert_non_null(p);
	assert_int_equal(len, 2);
	assert_ptr_equal(p, buf + 4); /* not copied */
	assert_true(rpcrdma_xdr_get_bool(&xs));
	p = rpcrdma_xdr_get_opaque(&xs, 16, &len);
	assert_null(p);
	assert_int_equal(len, 0);
	assert_false(rpcrdma_xdr_ok(&xs));
	/* Sticky: later gets return 0 and stay failed. */
	assert_int_equal(rpcrdma_xdr_get_u32(&xs), 0);
	assert_int_equal(rpcrdma_xdr_remaining(&xs), 0);
}

static void test_decode_limits(void **state)
{
	uint8_t buf[] = { 0x00, 0x00, 0x00, 0x05, 1, 2, 3, 4, 5, 0, 0, 0,
			  0x00, 0x00, 0x00, 0x02 };
	struct rpcrdma_xdr xs;
	uint32_t len;

	(void)state;
	/* Longer than the declared maximum. */
	rpcrdma_xdr_init(&xs, buf, sizeof(buf));
	assert_null(rpcrdma_xdr_get_opaque(&xs, 4, &len));
	assert_false(rpcrdma_xdr_ok(&xs));
	/* A bool of 2 is not a bool. */
	rpcrdma_xdr_init(&xs, buf + 12, 4);
	rpcrdma_xdr_get_bool(&xs);
	assert_false(rpcrdma_xdr_ok(&xs));
	/* A u64 needs 8 bytes. */
	rpcrdma_xdr_init(&xs, buf, 7);
	assert_true(rpcrdma_xdr_get_u64(&xs) == 0);
	assert_false(rpcrdma_xdr_ok(&xs));
}

static void test_reserve_pads(void **state)
{
	uint8_t buf[8];
	struct rpcrdma_xdr xs;
	uint8_t *p;

	(void)state;
	memset(buf, 0xff, sizeof(buf));
	rpcrdma_xdr_init(&xs, buf, sizeof(buf));
	p = rpcrdma_xdr_reserve(&xs, 5);
	assert_ptr_equal(p, buf);
	assert_int_equal(xs.xs_pos, 8);
	assert_int_equal(buf[5], 0);
	assert_int_equal(buf[6], 0);
	assert_int_equal(buf[7], 0);
	assert_null(rpcrdma_xdr_reserve(&xs, 1));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_encode_bytes),
		cmocka_unit_test(test_decode_bounds),
		cmocka_unit_test(test_decode_limits),
		cmocka_unit_test(test_reserve_pads),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
