// SPDX-License-Identifier: MIT
/*
 * test_stat_rates.c - rpcrdma-stat --watch's arithmetic (tools/stat):
 * the rates and latency percentiles of one interval from two snapshots,
 * against figures worked out by hand, and the snapshot read back from the
 * server's own Prometheus text.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <rpcrdma/nfs3.h>

#include "stat/stat_rates.h"
#include "svc/svc_internal.h"
#include "svc/svc_stats.h"

/*
 * READ, before: 10 calls, 3 replies in (4, 8] us and 7 in (2048, 4096];
 * after 2 s: 10 more, 4 in (0, 1], 4 in (4, 8], 2 in (512, 1024].  The
 * interval's median is rank 5 of its 10: the first of the 4 in (4, 8]:
 * 4 + 4 x 1/4 = 5 us; its 99th percentile rank 9.9, 1.9 of the 2 in
 * (512, 1024]: 512 + 512 x 0.95 = 998.4 us (the counts since start would
 * give a median of 4 + 4 x 6/7 = 7.43 us).  Calls: 10 / 2 s = 5/s; bytes
 * out 3,000,000 / 2 s = 1.5 MB/s, in 2,000 / 2 s = 0.001 MB/s; latency
 * sum 0.002 s over 10 replies: 200 us each.
 */
static void fill_read(struct stat_op *prev, struct stat_op *cur)
{
	memset(prev, 0, sizeof(*prev));
	memset(cur, 0, sizeof(*cur));
	strcpy(prev->so_key, "100003/3 READ");
	strcpy(cur->so_key, "100003/3 READ");
	prev->so_calls = prev->so_replies = 10;
	prev->so_bytes_in = 1000;
	prev->so_bytes_out = 1000000;
	prev->so_lat_sum_s = 0.5;
	prev->so_lat[3] = 3;   /* (4, 8] */
	prev->so_lat[12] = 7;  /* (2048, 4096] */
	cur->so_calls = cur->so_replies = 20;
	cur->so_bytes_in = 3000;
	cur->so_bytes_out = 4000000;
	cur->so_lat_sum_s = 0.502;
	cur->so_lat[0] = 4;    /* (0, 1] */
	cur->so_lat[3] = 7;
	cur->so_lat[10] = 2;   /* (512, 1024] */
	cur->so_lat[12] = 7;
}

static void test_interval_rates(void **state)
{
	struct stat_op prev, cur;
	struct stat_rate r;

	(void)state;
	fill_read(&prev, &cur);
	stat_op_rate(&prev, &cur, 2.0, &r);
	assert_float_equal(r.rt_calls_s, 5.0, 1e-9);
	assert_float_equal(r.rt_mb_out_s, 1.5, 1e-9);
	assert_float_equal(r.rt_mb_in_s, 0.001, 1e-12);
	assert_int_equal(r.rt_replies, 10);
	assert_float_equal(r.rt_p50_us, 5.0, 1e-9);
	assert_float_equal(r.rt_p99_us, 998.4, 1e-9);
	assert_float_equal(r.rt_mean_us, 200.0, 1e-6);
}

/* A row that did not exist before: all of it is the interval's.  Only 4
 * calls in (0, 1] us over 4 s: 1/s, median rank 2 of 4 in (0, 1]: 0.5 us. */
static void test_new_row(void **state)
{
	struct stat_op cur = { .so_key = "100003/3 GETATTR", .so_calls = 4, .so_replies = 4 };
	struct stat_rate r;

	(void)state;
	cur.so_lat[0] = 4;
	stat_op_rate(NULL, &cur, 4.0, &r);
	assert_float_equal(r.rt_calls_s, 1.0, 1e-9);
	assert_float_equal(r.rt_p50_us, 0.5, 1e-9);
	assert_float_equal(r.rt_mean_us, 0.0, 0); /* no latency sum */
}

/* The server restarted between the snapshots: its counters went down; the
 * interval is what it counted since (30 calls over 3 s: 10/s), not a
 * negative or wrapped figure. */
static void test_restart(void **state)
{
	struct stat_op prev, cur;
	struct stat_rate r;

	(void)state;
	fill_read(&prev, &cur);
	prev.so_calls = prev.so_replies = 100;
	cur.so_calls = cur.so_replies = 30;
	stat_op_rate(&prev, &cur, 3.0, &r);
	assert_float_equal(r.rt_calls_s, 10.0, 1e-9);
	assert_int_equal(r.rt_replies, 30);
	assert_int_equal(stat_delta(7, 5), 5);
	assert_int_equal(stat_delta(5, 7), 2);
}

/* The server's own text read back: two READs (3 us and 1.5 ms: buckets
 * le 4 us and le 2.048 ms), a name with escapes, calls per transport. */
static void test_parse_server_text(void **state)
{
	static const char *const weird[] = { "we\"ird\\name" };
	struct rpcrdma_svc *svc = calloc(1, sizeof(*svc));
	struct stat_snap *sn = malloc(sizeof(*sn));
	const struct stat_op *op;
	const char *const *names;
	char *text = NULL;
	size_t len = 0;
	FILE *m;
	uint32_t n;
	unsigned k, i;

	(void)state;
	assert_non_null(svc);
	assert_non_null(sn);
	svc->sv_progs[0] = (struct svc_program){ .sp_prog = 100003, .sp_vers = 3 };
	svc->sv_progs[1] = (struct svc_program){ .sp_prog = 400000, .sp_vers = 1 };
	svc->sv_nprogs = 2;
	atomic_store(&svc->sv_ct.calls[SVC_XPRT_RDMA], 7);
	atomic_store(&svc->sv_ct.calls[SVC_XPRT_TCP], 5);
	atomic_store(&svc->sv_ct.send_bytes[SVC_XPRT_TCP], 4096);
	atomic_store(&svc->sv_ct.rdma_write_bytes, 8192);
	assert_int_equal(svc_stats_create(svc), 0);
	names = rpcrdma_nfs3_proc_names(&n);
	assert_int_equal(rpcrdma_svc_set_proc_names(svc, 100003, 3, names, n,
						    rpcrdma_nfs3_stat_name), 0);
	assert_int_equal(rpcrdma_svc_set_proc_names(svc, 400000, 1, weird, 1, NULL), 0);
	assert_true(svc_stats_record(svc->sv_stats, 0, 6, true, 0, 100, 4196, 3000, true, 0));
	assert_true(svc_stats_record(svc->sv_stats, 0, 6, true, 0, 100, 4196, 1500000, true, 0));
	assert_true(svc_stats_record(svc->sv_stats, 1, 0, true, 0, 40, 24, 0, false, 0));
	m = open_memstream(&text, &len);
	assert_non_null(m);
	assert_int_equal(rpcrdma_svc_stats_write(svc, RPCRDMA_SVC_STATS_PROMETHEUS, m), 0);
	fclose(m);

	assert_int_equal(stat_snap_parse(text, sn), 0);
	assert_int_equal(sn->sn_nops, 2);
	op = stat_snap_find(sn, "100003/3 READ");
	assert_non_null(op);
	assert_int_equal(op->so_calls, 2);
	assert_int_equal(op->so_replies, 2);
	assert_int_equal(op->so_bytes_in, 200);
	assert_int_equal(op->so_bytes_out, 8392);
	assert_float_equal(op->so_lat_sum_s, 0.001503, 1e-12);
	for (k = 0; k < SVC_STATS_LAT_BUCKETS; k++)
		assert_int_equal(op->so_lat[k], k == 2 || k == 11 ? 1 : 0);
	op = stat_snap_find(sn, "400000/1 we\"ird\\name");
	assert_non_null(op);
	assert_int_equal(op->so_calls, 1);
	assert_int_equal(sn->sn_nxprts, 2);
	for (i = 0; i < sn->sn_nxprts; i++) {
		bool tcp = !strcmp(sn->sn_xprts[i].sx_name, "tcp");

		assert_true(tcp || !strcmp(sn->sn_xprts[i].sx_name, "rdma"));
		assert_int_equal(sn->sn_xprts[i].sx_calls, tcp ? 5 : 7);
		assert_int_equal(sn->sn_xprts[i].sx_send_bytes, tcp ? 4096 : 0);
	}
	assert_int_equal(sn->sn_rdma_write_bytes, 8192);
	assert_int_equal(stat_snap_parse("no_value_here\n", sn), -EINVAL);
	assert_int_equal(stat_snap_parse("x{a=\"unterminated} 1\n", sn), -EINVAL);
	free(text);
	free(sn);
	svc_stats_destroy(svc);
	free(svc);
}

/* A text that leaves buckets out (another exporter's, or cut short): a
 * missing bucket holds what the one below it holds, so 3 calls up to 8 us
 * are all in (4, 8] and none in +Inf: median rank 1.5: 4 + 4 x 1.5/3 = 6 us. */
static void test_parse_sparse_buckets(void **state)
{
	static const char text[] =
		"# TYPE rpcrdma_svc_call_duration_seconds histogram\n"
		"rpcrdma_svc_call_duration_seconds_bucket{program=\"1\",version=\"2\",procedure=\"X\",le=\"0.000004\"} 0\n"
		"rpcrdma_svc_call_duration_seconds_bucket{program=\"1\",version=\"2\",procedure=\"X\",le=\"0.000008\"} 3\n"
		"rpcrdma_svc_call_duration_seconds_bucket{program=\"1\",version=\"2\",procedure=\"X\",le=\"+Inf\"} 3\n";
	struct stat_snap *sn = malloc(sizeof(*sn));
	const struct stat_op *op;
	unsigned k;

	(void)state;
	assert_non_null(sn);
	assert_int_equal(stat_snap_parse(text, sn), 0);
	op = stat_snap_find(sn, "1/2 X");
	assert_non_null(op);
	for (k = 0; k < SVC_STATS_LAT_BUCKETS; k++)
		assert_int_equal(op->so_lat[k], k == 3 ? 3 : 0);
	assert_float_equal(svc_stats_percentile_us(op->so_lat, 0.5), 6.0, 1e-9);
	free(sn);
}

/* The screen: a row without calls in the interval is left out. */
static void test_print(void **state)
{
	struct stat_snap *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));
	char *out = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&out, &len);

	(void)state;
	assert_non_null(a);
	assert_non_null(b);
	fill_read(&a->sn_ops[0], &b->sn_ops[0]);
	a->sn_ops[1] = b->sn_ops[1] = (struct stat_op){ .so_key = "100003/3 LOOKUP", .so_calls = 9 };
	a->sn_nops = b->sn_nops = 2;
	stat_print_rates(a, b, 2.0, m);
	fclose(m);
	assert_non_null(strstr(out, "100003/3 READ"));
	assert_non_null(strstr(out, "       5.0      0.001      1.500        5.0      998.4      200.0"));
	assert_null(strstr(out, "LOOKUP"));
	free(out);
	free(a);
	free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_interval_rates),
		cmocka_unit_test(test_new_row),
		cmocka_unit_test(test_restart),
		cmocka_unit_test(test_parse_server_text),
		cmocka_unit_test(test_parse_sparse_buckets),
		cmocka_unit_test(test_print),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
