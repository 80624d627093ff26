// SPDX-License-Identifier: MIT
/*
 * test_svc_stats.c - the server's per-operation statistics: per-thread
 * shards summed exactly under concurrent updates, latency buckets and
 * percentiles against values worked out by hand, the JSON rendering.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "svc/svc_internal.h"
#include "svc/svc_stats.h"

#define NTHREADS 6
#define PER_THREAD 20000u

static struct rpcrdma_svc *new_svc(void)
{
	struct rpcrdma_svc *svc = calloc(1, sizeof(*svc));

	assert_non_null(svc);
	svc->sv_progs[0] = (struct svc_program){ .sp_prog = 100003, .sp_vers = 3 };
	svc->sv_progs[1] = (struct svc_program){ .sp_prog = 400000, .sp_vers = 1 };
	svc->sv_nprogs = 2;
	assert_int_equal(svc_stats_create(svc), 0);
	return svc;
}

static void free_svc(struct rpcrdma_svc *svc)
{
	svc_stats_destroy(svc);
	free(svc);
}

struct writer {
	struct rpcrdma_svc *w_svc;
	unsigned w_index;
	pthread_barrier_t *w_go;
};

/* Record i of thread t: procedure i % 3 (0, 1, 2) of program 0; outcome
 * SUCCESS except every 10th (GARBAGE_ARGS); 100 bytes in, 200 + t out;
 * latency 1500 ns (bucket 1) for even i, 3 ms (bucket 12) for odd; status
 * NFS3ERR_NOENT (2) every 4th, else 0. */
static void *writer_main(void *arg)
{
	struct writer *w = arg;
	uint32_t i;

	pthread_barrier_wait(w->w_go);
	for (i = 0; i < PER_THREAD; i++)
		assert_true(svc_stats_record(w->w_svc->sv_stats, 0, i % 3, true,
					     i % 10 == 9 ? RPCRDMA_SVC_GARBAGE_ARGS :
					     RPCRDMA_SVC_SUCCESS, 100, 200 + w->w_index,
					     i % 2 ? 3000000 : 1500, true, i % 4 == 3 ? 2 : 0));
	return NULL;
}

/* A reader summing while the writers write: every total only grows. */
static void *reader_main(void *arg)
{
	struct writer *w = arg;
	uint64_t last = 0;
	int k;

	pthread_barrier_wait(w->w_go);
	for (k = 0; k < 200; k++) {
		struct svc_stats_snap s;
		uint64_t calls = 0;
		uint32_t i;

		assert_int_equal(svc_stats_snapshot(w->w_svc, &s), 0);
		for (i = 0; i < s.ss_nrows; i++)
			calls += s.ss_rows[i].os_calls;
		assert_true(calls >= last);
		last = calls;
		svc_stats_snap_free(&s);
	}
	return NULL;
}

static void test_concurrent_sum(void **state)
{
	struct rpcrdma_svc *svc = new_svc();
	struct writer w[NTHREADS + 1];
	pthread_t th[NTHREADS + 1];
	pthread_barrier_t go;
	struct svc_stats_snap s;
	struct svc_stats_shard *sh;
	uint64_t out_bytes = 0;
	unsigned t, p, nshards = 0;

	(void)state;
	pthread_barrier_init(&go, NULL, NTHREADS + 1);
	for (t = 0; t <= NTHREADS; t++) {
		w[t] = (struct writer){ .w_svc = svc, .w_index = t, .w_go = &go };
		assert_int_equal(pthread_create(&th[t], NULL,
						t < NTHREADS ? writer_main : reader_main, &w[t]), 0);
	}
	for (t = 0; t <= NTHREADS; t++)
		pthread_join(th[t], NULL);
	pthread_barrier_destroy(&go);

	/* One shard per writing thread; the reader wrote none. */
	for (sh = svc->sv_stats->st_shards; sh; sh = sh->sh_next)
		nshards++;
	assert_int_equal(nshards, NTHREADS);

	assert_int_equal(svc_stats_snapshot(svc, &s), 0);
	assert_int_equal(s.ss_nrows, 3);
	for (t = 0; t < NTHREADS; t++)
		out_bytes += 200 + t;
	for (p = 0; p < 3; p++) {
		const struct svc_stats_sum *r = &s.ss_rows[p];
		/* Records of thread t with i % 3 == p: i = p, p + 3, ... < 20000. */
		uint64_t n = (PER_THREAD - p + 2) / 3, per = 0, even = 0, garbage = 0, noent;
		uint32_t i, k;

		for (i = p; i < PER_THREAD; i += 3) {
			per++;
			even += i % 2 == 0;
			garbage += i % 10 == 9;
		}
		assert_int_equal(per, n);
		assert_int_equal(r->os_prog, 100003);
		assert_int_equal(r->os_vers, 3);
		assert_int_equal(r->os_proc, p);
		assert_int_equal(r->os_calls, NTHREADS * n);
		assert_int_equal(r->os_replies, NTHREADS * n);
		assert_int_equal(r->os_bytes_in, NTHREADS * n * 100);
		assert_int_equal(r->os_bytes_out, n * out_bytes);
		assert_int_equal(r->os_accept[RPCRDMA_SVC_GARBAGE_ARGS], NTHREADS * garbage);
		assert_int_equal(r->os_accept[RPCRDMA_SVC_SUCCESS], NTHREADS * (n - garbage));
		assert_int_equal(r->os_lat[1], NTHREADS * even);
		assert_int_equal(r->os_lat[12], NTHREADS * (n - even));
		assert_int_equal(r->os_lat_sum_ns,
				 NTHREADS * (even * 1500 + (n - even) * 3000000ull));
		/* Statuses count even with GARBAGE_ARGS here: the record is
		 * told has_status; the hook only passes it on success. */
		for (k = 0, noent = 0; k < PER_THREAD; k++)
			noent += k % 3 == p && k % 4 == 3;
		assert_int_equal(r->os_nstatus, 2);
		for (k = 0; k < 2; k++)
			assert_int_equal(r->os_status_count[k],
					 NTHREADS * (r->os_status[k] == 2 ? noent : n - noent));
	}
	svc_stats_snap_free(&s);
	free_svc(svc);
}

/* Bucket i holds latencies in (2^(i-1), 2^i] microseconds. */
static void test_lat_buckets(void **state)
{
	(void)state;
	assert_int_equal(svc_stats_lat_bucket(0), 0);
	assert_int_equal(svc_stats_lat_bucket(1), 0);
	assert_int_equal(svc_stats_lat_bucket(1000), 0);
	assert_int_equal(svc_stats_lat_bucket(1001), 1);
	assert_int_equal(svc_stats_lat_bucket(2000), 1);
	assert_int_equal(svc_stats_lat_bucket(2001), 2);
	assert_int_equal(svc_stats_lat_bucket(4000), 2);
	assert_int_equal(svc_stats_lat_bucket(4001), 3);
	assert_int_equal(svc_stats_lat_bucket(1000000), 10); /* 1 ms <= 1024 us */
	assert_int_equal(svc_stats_lat_bucket(1024000), 10);
	assert_int_equal(svc_stats_lat_bucket(1024001), 11);
	assert_int_equal(svc_stats_lat_bucket(16777216000ull), 24);
	assert_int_equal(svc_stats_lat_bucket(16777216001ull), SVC_STATS_LAT_FINITE);
	assert_int_equal(svc_stats_lat_bucket(UINT64_MAX), SVC_STATS_LAT_FINITE);
}

static void test_percentiles(void **state)
{
	uint64_t lat[SVC_STATS_LAT_BUCKETS] = { 0 };

	(void)state;
	assert_true(svc_stats_percentile_us(lat, 0.5) == 0.0);
	/* 10 samples: 4 in (0, 1] us, 4 in (4, 8] us, 2 in (512, 1024] us. */
	lat[0] = 4;
	lat[3] = 4;
	lat[10] = 2;
	/* Median: rank 5, the 1st of 4 in (4, 8]: 4 + 4 * 1/4 = 5. */
	assert_true(svc_stats_percentile_us(lat, 0.5) == 5.0);
	/* Rank 4: the last of bucket 0: 0 + 1 * 4/4 = 1. */
	assert_true(svc_stats_percentile_us(lat, 0.4) == 1.0);
	/* p99: rank 9.9, 1.9 of 2 in (512, 1024]: 512 + 512 * 0.95 = 998.4. */
	assert_float_equal(svc_stats_percentile_us(lat, 0.99), 998.4, 1e-9);
	/* p90: rank 9: 512 + 512 * 1/2 = 768. */
	assert_true(svc_stats_percentile_us(lat, 0.9) == 768.0);
	assert_true(svc_stats_percentile_us(lat, 1.0) == 1024.0);
	/* A rank in the +Inf bucket: the largest finite bound, 2^24 us. */
	memset(lat, 0, sizeof(lat));
	lat[2] = 1;
	lat[SVC_STATS_LAT_FINITE] = 1;
	assert_true(svc_stats_percentile_us(lat, 0.99) == 16777216.0);
	/* Median of that: rank 1, bucket 2 (2, 4]: 2 + 2 * 1/1 = 4. */
	assert_true(svc_stats_percentile_us(lat, 0.5) == 4.0);
}

static const char *test_status_name(uint32_t s)
{
	return s == 2 ? "NFS3ERR_NOENT" : s == 0 ? "NFS3_OK" : NULL;
}

/* Rows of other programs, procedures past the table and unmatched calls;
 * names; connection blocks; the JSON line and the text table. */
static void test_rows_and_json(void **state)
{
	static const char *const names[] = { "NULL", "GETATTR" };
	struct rpcrdma_svc *svc = new_svc();
	struct svc_conn conn = { .sx_svc = svc, .sx_id_num = 7, .sx_credits = 32 };
	struct svc_stats_snap s;
	char *buf = NULL;
	size_t len = 0;
	FILE *m;

	(void)state;
	assert_int_equal(rpcrdma_svc_set_proc_names(svc, 100003, 3, names, 2, test_status_name), 0);
	assert_int_equal(rpcrdma_svc_set_proc_names(svc, 100003, 4, names, 2, NULL), -ENOENT);
	assert_true(svc_stats_record(svc->sv_stats, 0, 1, true, 0, 120, 100, 3000, true, 2));
	assert_true(svc_stats_record(svc->sv_stats, 1, 77, true, 3, 40, 24, 500, false, 0));
	assert_true(svc_stats_record(svc->sv_stats, 1, 99, true, 3, 40, 24, 500, false, 0));
	assert_true(svc_stats_count_call(svc->sv_stats, SVC_STATS_UNMATCHED, 5));
	conn.sx_stats = svc_stats_conn_open(&conn);
	assert_non_null(conn.sx_stats);
	conn.sx_stats->sn_peer.ss_family = AF_INET;
	((struct sockaddr_in *)&conn.sx_stats->sn_peer)->sin_addr.s_addr = htonl(0xc0000202);

	assert_int_equal(svc_stats_snapshot(svc, &s), 0);
	assert_int_equal(s.ss_nrows, 3);
	assert_int_equal(s.ss_rows[0].os_proc, 1);
	assert_string_equal(svc_stats_proc_name(&s, &s.ss_rows[0]), "GETATTR");
	/* Procedures 77 and 99 of program 400000 share its "other" row. */
	assert_int_equal(s.ss_rows[1].os_prog, 400000);
	assert_int_equal(s.ss_rows[1].os_proc, UINT32_MAX);
	assert_int_equal(s.ss_rows[1].os_calls, 2);
	assert_int_equal(s.ss_rows[1].os_accept[RPCRDMA_SVC_PROC_UNAVAIL], 2);
	assert_int_equal(s.ss_rows[2].os_group, SVC_STATS_UNMATCHED);
	assert_int_equal(s.ss_rows[2].os_calls, 1);
	assert_int_equal(s.ss_rows[2].os_replies, 0);
	assert_int_equal(s.ss_nconns, 1);
	assert_int_equal(s.ss_conns[0].cs_id, 7);
	assert_int_equal(s.ss_conns[0].cs_credits, 32);

	m = open_memstream(&buf, &len);
	assert_non_null(m);
	svc_stats_write_json(&s, m);
	fclose(m);
	/* One line, the transport counters first (the VM tests' grep). */
	assert_true(strncmp(buf, "{\"connections\":0,\"calls\":0,", 27) == 0);
	assert_non_null(strstr(buf, "\"ops\":[{\"prog\":100003,\"vers\":3,\"proc\":1,"
				    "\"name\":\"GETATTR\",\"count\":1,\"replies\":1,"
				    "\"bytes_in\":120,\"bytes_out\":100,"
				    "\"outcomes\":{\"SUCCESS\":1},\"status\":{\"NFS3ERR_NOENT\":1},"
				    "\"status_other\":0,\"lat_sum_ns\":3000,"
				    "\"lat_p50_us\":3.0,\"lat_p99_us\":4.0,"
				    "\"lat_buckets\":[0,0,1,0,"));
	/* 3000 ns is in bucket 2, (2, 4] us: p50 = 2 + 2 * 0.5 = 3, p99 = 2 + 2 * 0.99 = 3.98. */
	assert_non_null(strstr(buf, "{\"prog\":400000,\"vers\":1,\"proc\":\"other\",\"count\":2,"));
	assert_non_null(strstr(buf, "\"conns\":[{\"id\":7,\"peer\":\"192.0.2.2\",\"qp\":0,"
				    "\"credits\":32,\"count\":0,\"bytes_in\":0,\"bytes_out\":0,"
				    "\"rdma_errors\":0}]}\n"));
	assert_null(strchr(buf, '\n') + 1 == buf + len ? NULL : "more than one line");
	free(buf);

	/* The same snapshot as the table rpcrdma-stat prints: each row's
	 * fields (GETATTR: 1 call, no RPC error, 1 program error -- status 2
	 * --, p50 3.0, p99 4.0 (3.98), mean 3000 ns = 3.0 us, 120 and 100
	 * bytes; program 400000's "other" row: 2 calls, both PROC_UNAVAIL),
	 * the unmatched calls' heading, the statuses other than 0 by name,
	 * and the connection's row. */
	buf = NULL;
	len = 0;
	m = open_memstream(&buf, &len);
	assert_non_null(m);
	svc_stats_write_table(&s, m);
	fclose(m);
	{
		char name[16], peer[64];
		unsigned long long calls, rpc_err, prog_err, bin, bout, v[5];
		double p50, p99, mean;
		const char *at;

		at = strstr(buf, "\nProgram 100003 version 3:\n");
		assert_non_null(at);
		at = strstr(at, "  GETATTR ");
		assert_non_null(at);
		assert_int_equal(sscanf(at, "%15s %llu %llu %llu %lf %lf %lf %llu %llu", name, &calls,
					&rpc_err, &prog_err, &p50, &p99, &mean, &bin, &bout), 9);
		assert_true(calls == 1 && rpc_err == 0 && prog_err == 1 && bin == 120 && bout == 100);
		assert_true(p50 == 3.0 && p99 == 4.0 && mean == 3.0);
		at = strstr(buf, "\nProgram 400000 version 1:\n");
		assert_non_null(at);
		at = strstr(at, "  other ");
		assert_non_null(at);
		assert_int_equal(sscanf(at, "%15s %llu %llu %llu", name, &calls, &rpc_err,
					&prog_err), 4);
		assert_true(calls == 2 && rpc_err == 2 && prog_err == 0);
		assert_non_null(strstr(buf, "\nCalls to no registered program or version:\n"));
		assert_non_null(strstr(buf, "\nProgram statuses other than 0:\n"
					    "  100003/3 GETATTR: NFS3ERR_NOENT 1\n"));
		at = strstr(buf, "\nConnections open: 1\n");
		assert_non_null(at);
		at = strstr(at, "rdma_errors\n");
		assert_non_null(at);
		assert_int_equal(sscanf(at + 12, "%llu %63s %llu %llu %llu %llu %llu %llu", &v[0],
					peer, &v[1], &v[2], &v[3], &v[4], &bin, &bout), 8);
		assert_int_equal(v[0], 7);
		assert_string_equal(peer, "192.0.2.2");
		assert_true(v[1] == 0 && v[2] == 32 && v[3] == 0 && v[4] == 0 && bin == 0 &&
			    bout == 0);
	}
	free(buf);
	svc_stats_snap_free(&s);
	svc_stats_conn_close(svc, conn.sx_stats);
	free_svc(svc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_concurrent_sum),
		cmocka_unit_test(test_lat_buckets),
		cmocka_unit_test(test_percentiles),
		cmocka_unit_test(test_rows_and_json),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
