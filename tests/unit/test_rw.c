// SPDX-License-Identifier: MIT
/*
 * test_rw.c - the chunk mover's work-request chains (RFC 8166 3.4.5/3.4.6),
 * checked against layouts worked out by hand.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "rw/rw.h"

static void test_reads_one_per_segment(void **state)
{
	struct rpcrdma_segment segs[3] = {
		{ .rs_handle = 0x11, .rs_length = 4096, .rs_offset = 0x1000 },
		{ .rs_handle = 0x22, .rs_length = 0, .rs_offset = 0x9000 },
		{ .rs_handle = 0x33, .rs_length = 100, .rs_offset = 0xffffffff00000000ull },
	};
	uint8_t dst[4196];
	struct ibv_send_wr wrs[4];
	struct ibv_sge sges[4];
	int n;

	(void)state;
	n = rpcrdma_rw_build_reads(segs, 3, dst, 0x77, wrs, sges, 4);
	/* The empty middle segment needs no Read. */
	assert_int_equal(n, 2);
	assert_int_equal(wrs[0].opcode, IBV_WR_RDMA_READ);
	assert_ptr_equal(wrs[0].next, &wrs[1]);
	assert_null(wrs[1].next);
	assert_int_equal(wrs[0].send_flags, 0);
	assert_int_equal(wrs[0].wr.rdma.rkey, 0x11);
	assert_int_equal(wrs[0].wr.rdma.remote_addr, 0x1000);
	assert_int_equal(sges[0].addr, (uintptr_t)dst);
	assert_int_equal(sges[0].length, 4096);
	assert_int_equal(sges[0].lkey, 0x77);
	/* The third segment lands right after the first. */
	assert_int_equal(wrs[1].wr.rdma.rkey, 0x33);
	assert_true(wrs[1].wr.rdma.remote_addr == 0xffffffff00000000ull);
	assert_int_equal(sges[1].addr, (uintptr_t)(dst + 4096));
	assert_int_equal(sges[1].length, 100);
}

static void test_reads_cap(void **state)
{
	struct rpcrdma_segment segs[2] = {
		{ .rs_handle = 1, .rs_length = 8, .rs_offset = 0 },
		{ .rs_handle = 2, .rs_length = 8, .rs_offset = 0 },
	};
	uint8_t dst[16];
	struct ibv_send_wr wrs[1];
	struct ibv_sge sges[1];

	(void)state;
	assert_int_equal(rpcrdma_rw_build_reads(segs, 2, dst, 1, wrs, sges, 1), -ENOSPC);
	assert_int_equal(rpcrdma_rw_build_reads(segs, 0, dst, 1, wrs, sges, 1), 0);
}

/* 10 + 6 bytes over segments of 4, 8, 100: lengths written 4, 8, 4. */
static void test_writes_scatter(void **state)
{
	uint8_t a[10], b[6];
	struct rpcrdma_rw_piece src[2] = { { a, 10 }, { b, 6 } };
	struct rpcrdma_segment segs[4] = {
		{ .rs_handle = 0xa, .rs_length = 4, .rs_offset = 1000 },
		{ .rs_handle = 0xb, .rs_length = 8, .rs_offset = 2000 },
		{ .rs_handle = 0xc, .rs_length = 100, .rs_offset = 3000 },
		{ .rs_handle = 0xd, .rs_length = 100, .rs_offset = 4000 },
	};
	struct ibv_send_wr wrs[8];
	struct ibv_sge sges[8 * RPCRDMA_RW_MAX_SGE];
	uint32_t written[4];
	int n;

	(void)state;
	n = rpcrdma_rw_build_writes(src, 2, segs, 4, 5, wrs, sges, 8, written);
	assert_int_equal(n, 3);
	assert_int_equal(written[0], 4);
	assert_int_equal(written[1], 8);
	assert_int_equal(written[2], 4);
	assert_int_equal(written[3], 0);
	/* WR 0: a[0..4) -> seg 0 */
	assert_int_equal(wrs[0].opcode, IBV_WR_RDMA_WRITE);
	assert_int_equal(wrs[0].num_sge, 1);
	assert_int_equal(wrs[0].sg_list[0].addr, (uintptr_t)a);
	assert_int_equal(wrs[0].sg_list[0].length, 4);
	assert_int_equal(wrs[0].wr.rdma.remote_addr, 1000);
	assert_int_equal(wrs[0].wr.rdma.rkey, 0xa);
	/* WR 1: a[4..10) + b[0..2) -> seg 1, gathered from two pieces */
	assert_int_equal(wrs[1].num_sge, 2);
	assert_int_equal(wrs[1].sg_list[0].addr, (uintptr_t)(a + 4));
	assert_int_equal(wrs[1].sg_list[0].length, 6);
	assert_int_equal(wrs[1].sg_list[1].addr, (uintptr_t)b);
	assert_int_equal(wrs[1].sg_list[1].length, 2);
	assert_int_equal(wrs[1].wr.rdma.remote_addr, 2000);
	/* WR 2: b[2..6) -> seg 2 */
	assert_int_equal(wrs[2].num_sge, 1);
	assert_int_equal(wrs[2].sg_list[0].addr, (uintptr_t)(b + 2));
	assert_int_equal(wrs[2].sg_list[0].length, 4);
	assert_int_equal(wrs[2].wr.rdma.remote_addr, 3000);
	assert_ptr_equal(wrs[0].next, &wrs[1]);
	assert_ptr_equal(wrs[1].next, &wrs[2]);
	assert_null(wrs[2].next);
}

static void test_writes_too_big(void **state)
{
	uint8_t a[13];
	struct rpcrdma_rw_piece src[1] = { { a, 13 } };
	struct rpcrdma_segment segs[2] = {
		{ .rs_handle = 1, .rs_length = 8, .rs_offset = 0 },
		{ .rs_handle = 2, .rs_length = 4, .rs_offset = 0 },
	};
	struct ibv_send_wr wrs[4];
	struct ibv_sge sges[4 * RPCRDMA_RW_MAX_SGE];
	uint32_t written[2];

	(void)state;
	assert_int_equal(rpcrdma_rw_build_writes(src, 1, segs, 2, 1, wrs, sges, 4, written),
			 -EMSGSIZE);
	/* Exactly 12 bytes fit. */
	src[0].rp_len = 12;
	assert_int_equal(rpcrdma_rw_build_writes(src, 1, segs, 2, 1, wrs, sges, 4, written), 2);
	assert_int_equal(written[0], 8);
	assert_int_equal(written[1], 4);
	/* Not enough work requests. */
	assert_int_equal(rpcrdma_rw_build_writes(src, 1, segs, 2, 1, wrs, sges, 1, written),
			 -ENOSPC);
}

/* Empty pieces and no data: no work requests, nothing written. */
static void test_writes_empty(void **state)
{
	struct rpcrdma_rw_piece src[2] = { { NULL, 0 }, { NULL, 0 } };
	struct rpcrdma_segment segs[1] = { { .rs_handle = 1, .rs_length = 8, .rs_offset = 0 } };
	struct ibv_send_wr wrs[1];
	struct ibv_sge sges[RPCRDMA_RW_MAX_SGE];
	uint32_t written[1] = { 99 };

	(void)state;
	assert_int_equal(rpcrdma_rw_build_writes(src, 2, segs, 1, 1, wrs, sges, 1, written), 0);
	assert_int_equal(written[0], 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reads_one_per_segment),
		cmocka_unit_test(test_reads_cap),
		cmocka_unit_test(test_writes_scatter),
		cmocka_unit_test(test_writes_too_big),
		cmocka_unit_test(test_writes_empty),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
