/* SPDX-License-Identifier: MIT */
/*
 * stat_rates.h - rpcrdma-stat --watch: two snapshots of a server's
 * statistics, read from its Prometheus text, and the rates between them
 * (calls/s, MB/s, latency percentiles of the calls of the interval), as
 * nfsstat -Z and nfsiostat show them.
 *
 * Owner prefixes: sn_ snapshot, so_ operation, sx_ transport, rt_ rates.
 */
#ifndef RPCRDMA_STAT_RATES_H
#define RPCRDMA_STAT_RATES_H

#include <stdint.h>
#include <stdio.h>

#include "svc/svc_stats.h" /* SVC_STATS_LAT_BUCKETS, svc_stats_percentile_us() */

#define STAT_MAX_OPS 512u
#define STAT_MAX_XPRTS 4u

/* One program/version/procedure row at one instant (counters since start). */
struct stat_op {
	char so_key[96];     /* "100003/3 READ": program/version procedure */
	uint64_t so_calls;   /* rpcrdma_svc_procedure_calls_total */
	uint64_t so_bytes_in, so_bytes_out; /* chunk data included */
	uint64_t so_replies; /* the latency histogram's _count */
	double so_lat_sum_s; /* its _sum, seconds */
	uint64_t so_lat[SVC_STATS_LAT_BUCKETS]; /* per bucket, not cumulative */
	uint32_t so_seen;    /* while parsing: buckets with a sample (bit k) */
};

/* One transport's figures (the samples with transport="..."). */
struct stat_xprt {
	char sx_name[16];
	uint64_t sx_calls, sx_recv_bytes, sx_send_bytes, sx_conns_open;
};

struct stat_snap {
	struct stat_op sn_ops[STAT_MAX_OPS];
	unsigned sn_nops;
	struct stat_xprt sn_xprts[STAT_MAX_XPRTS];
	unsigned sn_nxprts;
	uint64_t sn_rdma_read_bytes, sn_rdma_write_bytes;
};

/*
 * stat_snap_parse - read the Prometheus text exposition @text (as
 * rpcrdma-nfsd serves it) into @sn.  Samples of other families are
 * skipped; rows beyond STAT_MAX_OPS are left out.
 * Return: 0; -EINVAL for a sample line that is not "name[{labels}] value".
 */
int stat_snap_parse(const char *text, struct stat_snap *sn);

/* The rates of one row over an interval. */
struct stat_rate {
	double rt_calls_s;           /* calls per second */
	double rt_mb_in_s, rt_mb_out_s; /* 10^6 bytes per second */
	double rt_p50_us, rt_p99_us; /* of the replies of the interval; 0 if none */
	double rt_mean_us;           /* their mean latency; 0 if none */
	uint64_t rt_replies;         /* replies in the interval */
};

/* A counter's growth from @prev to @cur: the difference, or @cur when
 * the counter went down (the server restarted: it counts from 0 again). */
uint64_t stat_delta(uint64_t prev, uint64_t cur);

/*
 * stat_op_rate - the rates of row @cur over @secs seconds (> 0) since
 * @prev (NULL: the row did not exist, as if all zero).  A restart (calls
 * or replies went down) takes the whole of @cur as the interval's.
 */
void stat_op_rate(const struct stat_op *prev, const struct stat_op *cur, double secs,
		  struct stat_rate *out);

/* stat_snap_find - the row @key of @sn, or NULL. */
const struct stat_op *stat_snap_find(const struct stat_snap *sn, const char *key);

/*
 * stat_print_rates - the screen of one --watch interval of @secs seconds
 * from @prev to @cur, to @f: per transport calls/s and MB/s received and
 * sent, RDMA Read and Write MB/s, then per row with calls in the interval
 * its calls/s, MB/s in and out, p50, p99 and mean latency.
 */
void stat_print_rates(const struct stat_snap *prev, const struct stat_snap *cur, double secs,
		      FILE *f);

#endif /* RPCRDMA_STAT_RATES_H */
