/* SPDX-License-Identifier: MIT */
/*
 * svc_stats.h - per-operation and per-connection statistics of the
 * Responder (private to src/svc; the unit tests include it).
 *
 * Threading: every thread that records (today the run loop; later each
 * transport thread) owns a shard of counters that only it writes, with
 * relaxed atomic stores, and readers sum the shards: nothing on the call
 * path takes a lock shared by all threads.  A thread finds its shard
 * through a thread-local cache keyed by the server's generation number;
 * only a thread's first record for a server takes the registry lock.
 * Connection figures live in a block per connection, written by the thread
 * that owns the connection, read under the registry lock (taken only at
 * connection open and close and by readers).
 *
 * Rows: one per registered program/version (its index in sv_progs) and
 * procedure below SVC_STATS_PROCS; higher procedure numbers share one
 * "other" row per program, and calls to no registered program or version
 * (or unreadable RPC headers) one more row.
 *
 * Owner prefixes: st_ registry, sh_ shard, so_ operation row, sk_ status
 * slot, sn_ connection block, sc_ per-call state, os_ summed row, cs_
 * summed connection, ss_ snapshot, nm_ names.
 */
#ifndef RPCRDMA_SVC_STATS_H
#define RPCRDMA_SVC_STATS_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>

#include <rpcrdma/svc.h>

#include "svc/svc_counters.h"

struct rpcrdma_svc;
struct svc_call;
struct svc_conn;
struct svc_program;

/* Procedures with a row of their own per program (NFSv3 has 22). */
#define SVC_STATS_PROCS 32u
/* Programs with rows: the registered ones, plus one for calls to none. */
#define SVC_STATS_PROGS 9u
#define SVC_STATS_UNMATCHED (SVC_STATS_PROGS - 1u)
/* Rows per program: one per procedure, and "other". */
#define SVC_STATS_ROWS_PER_PROG (SVC_STATS_PROCS + 1u)
/* Reply outcomes counted per row: accept_stat 0..5 (RFC 5531 9), then
 * MSG_DENIED AUTH_ERROR and MSG_DENIED RPC_MISMATCH. */
#define SVC_STATS_ACCEPT_AUTH 6u
#define SVC_STATS_ACCEPT_RPC_MISMATCH 7u
#define SVC_STATS_ACCEPTS 8u
/* Latency buckets: upper bounds 1 us << i for i < SVC_STATS_LAT_FINITE,
 * then +Inf (1 us to 2^24 us = 16.8 s). */
#define SVC_STATS_LAT_FINITE 25u
#define SVC_STATS_LAT_BUCKETS (SVC_STATS_LAT_FINITE + 1u)
/* Distinct program statuses (nfsstat3 ...) kept per row; more are
 * counted together in so_status_other. */
#define SVC_STATS_STATUS_SLOTS 8u

/* One program status and how often it was reported.  sk_key is status + 1
 * (0: free slot), written once by the shard's owner before its first
 * count, with release; readers load it with acquire. */
struct svc_stats_status {
	_Atomic uint64_t sk_key;
	_Atomic uint64_t sk_count;
};

/* One program/version/procedure in one shard; written by its owner only. */
struct svc_stats_op {
	_Atomic uint64_t so_calls;      /* decoded calls */
	_Atomic uint64_t so_replies;    /* replies sent (any outcome) */
	_Atomic uint64_t so_bytes_in;   /* RPC call bytes (chunk data included) */
	_Atomic uint64_t so_bytes_out;  /* RPC reply bytes (chunk data included) */
	_Atomic uint64_t so_lat_sum_ns; /* sum of reply latencies */
	_Atomic uint64_t so_accept[SVC_STATS_ACCEPTS];
	_Atomic uint64_t so_lat[SVC_STATS_LAT_BUCKETS]; /* not cumulative */
	struct svc_stats_status so_status[SVC_STATS_STATUS_SLOTS];
	_Atomic uint64_t so_status_other;
};

struct svc_stats_shard {
	struct svc_stats_shard *sh_next;
	pid_t sh_tid;
	struct svc_stats_op sh_ops[SVC_STATS_PROGS * SVC_STATS_ROWS_PER_PROG];
};

/* A connection's figures; written by the connection's thread. */
struct svc_stats_conn {
	struct svc_stats_conn *sn_next, *sn_prev;
	uint32_t sn_id;                 /* the connection's number in the logs */
	struct sockaddr_storage sn_peer;
	uint32_t sn_qp_num;             /* our QP */
	_Atomic uint64_t sn_credits;    /* last grant sent */
	_Atomic uint64_t sn_calls;      /* replies sent */
	_Atomic uint64_t sn_bytes_in;
	_Atomic uint64_t sn_bytes_out;
	_Atomic uint64_t sn_rdma_errors; /* RDMA_ERROR replies sent */
};

/* Names given by rpcrdma_svc_set_proc_names() for one program row. */
struct svc_stats_names {
	const char *const *nm_procs;
	uint32_t nm_nprocs;
	rpcrdma_svc_status_name_fn nm_status;
};

struct svc_stats {
	uint64_t st_gen;                /* unique per server, for the TLS cache */
	pthread_mutex_t st_lock;        /* shards list, connection list */
	struct svc_stats_shard *st_shards;
	struct svc_stats_conn *st_conns;
	uint32_t st_nconns;
	struct svc_stats_names st_names[SVC_STATS_PROGS];
	_Atomic uint64_t st_lost;       /* records dropped: no shard memory */
};

/* Per-call state, inside struct svc_call. */
struct svc_stats_call {
	uint64_t sc_t0_ns;      /* CLOCK_MONOTONIC at the Receive */
	uint8_t sc_group;       /* row group: index in sv_progs, or SVC_STATS_UNMATCHED */
};

/* A row summed over every shard. */
struct svc_stats_sum {
	uint32_t os_prog, os_vers, os_proc; /* os_proc UINT32_MAX: "other" */
	uint32_t os_group;                  /* index in sv_progs or SVC_STATS_UNMATCHED */
	uint64_t os_calls, os_replies, os_bytes_in, os_bytes_out, os_lat_sum_ns;
	uint64_t os_accept[SVC_STATS_ACCEPTS];
	uint64_t os_lat[SVC_STATS_LAT_BUCKETS];
	uint32_t os_nstatus;
	uint32_t os_status[SVC_STATS_STATUS_SLOTS * 4]; /* distinct values */
	uint64_t os_status_count[SVC_STATS_STATUS_SLOTS * 4];
	uint64_t os_status_other;
};

struct svc_stats_conn_sum {
	uint32_t cs_id;
	struct sockaddr_storage cs_peer;
	uint32_t cs_qp_num;
	uint64_t cs_credits, cs_calls, cs_bytes_in, cs_bytes_out, cs_rdma_errors;
};

/* Everything a reader sees at once. */
struct svc_stats_snap {
	struct rpcrdma_svc_stats ss_svc;     /* the public transport counters */
	struct svc_ct_vals ss_ct;            /* every counter, per transport too */
	struct svc_stats_sum *ss_rows;       /* rows with calls or replies */
	uint32_t ss_nrows;
	struct svc_stats_conn_sum *ss_conns; /* open connections */
	uint32_t ss_nconns;
	struct svc_stats_names ss_names[SVC_STATS_PROGS];
	uint64_t ss_lost;
};

/*
 * svc_stats_create - give @svc its statistics (rpcrdma_svc_create() calls
 * it; servers made with svc_init() alone, as in unit tests, record nothing
 * until it is called).  Return: 0 or -ENOMEM.
 */
int svc_stats_create(struct rpcrdma_svc *svc);
/* svc_stats_destroy - free the statistics of @svc (shards and blocks of
 * connections still open included); no thread may record any more. */
void svc_stats_destroy(struct rpcrdma_svc *svc);

/* Hooks on the call path; each is a no-op when the server has no statistics. */
/* svc_stats_call_begin - a message arrived for @cc: note the time. */
void svc_stats_call_begin(struct svc_call *cc);
/* svc_stats_call_decoded - @cc's RPC header decoded; @match: its program
 * entry, NULL when no program or version is registered for it. */
void svc_stats_call_decoded(struct svc_call *cc, const struct svc_program *match);
/* svc_stats_reply - @cc's reply of cc_reply_len bytes goes out with
 * outcome @status (an accept_stat, RPCRDMA_SVC_AUTH_ERROR, or negative
 * for RPC_MISMATCH): counts it with its latency and program status. */
void svc_stats_reply(struct svc_call *cc, int status);
/* svc_stats_rdma_error - @cc is answered with RDMA_ERROR. */
void svc_stats_rdma_error(struct svc_call *cc);
/* svc_stats_conn_open - @conn was accepted: its block (NULL without
 * statistics or memory). */
struct svc_stats_conn *svc_stats_conn_open(struct svc_conn *conn);
/* svc_stats_conn_close - @sn's connection is gone (NULL: no-op). */
void svc_stats_conn_close(struct rpcrdma_svc *svc, struct svc_stats_conn *sn);

/*
 * svc_stats_record - count one reply in the caller's shard of @st (the
 * hooks' core, also driven directly by unit tests): row @group (index in
 * sv_progs, or SVC_STATS_UNMATCHED) and procedure @proc; @outcome: index
 * in so_accept; @lat_ns: latency; @status: program status when @has_status.
 * @decoded: also count a call.  Return: false when the shard could not be
 * allocated (counted in st_lost).
 */
bool svc_stats_record(struct svc_stats *st, unsigned group, uint32_t proc, bool decoded,
		      unsigned outcome, uint64_t bytes_in, uint64_t bytes_out,
		      uint64_t lat_ns, bool has_status, uint32_t status);
/* svc_stats_count_call - count a decoded call (no reply yet). */
bool svc_stats_count_call(struct svc_stats *st, unsigned group, uint32_t proc);

/* svc_stats_lat_bucket - the bucket of a latency of @ns nanoseconds: the
 * first whose upper bound (1 us << i) is at least @ns, else the +Inf one. */
unsigned svc_stats_lat_bucket(uint64_t ns);
/* svc_stats_lat_bound_us - upper bound of finite bucket @i, microseconds. */
static inline uint64_t svc_stats_lat_bound_us(unsigned i)
{
	return 1ull << i;
}
/*
 * svc_stats_percentile_us - the @q quantile (0 < q <= 1) of the latency
 * histogram @lat (per-bucket counts), in microseconds, interpolated
 * linearly inside the bucket that holds rank q * total as Prometheus'
 * histogram_quantile() does (the lowest bucket's lower bound is 0; a rank
 * in the +Inf bucket gives the largest finite bound).  0 when empty.
 */
double svc_stats_percentile_us(const uint64_t lat[SVC_STATS_LAT_BUCKETS], double q);

/*
 * svc_stats_snapshot - sum every shard and copy every connection block of
 * @svc into @out (allocated: svc_stats_snap_free()).  Works, with no rows,
 * on a server without statistics.  Return: 0 or -ENOMEM.
 */
int svc_stats_snapshot(struct rpcrdma_svc *svc, struct svc_stats_snap *out);
void svc_stats_snap_free(struct svc_stats_snap *s);
/* svc_stats_proc_name - the name of @row's procedure, or NULL. */
const char *svc_stats_proc_name(const struct svc_stats_snap *s, const struct svc_stats_sum *row);
/* svc_stats_status_name - the name of program status @status in @row, or NULL. */
const char *svc_stats_status_name(const struct svc_stats_snap *s,
				  const struct svc_stats_sum *row, uint32_t status);
/* svc_stats_accept_name - "SUCCESS", "PROC_UNAVAIL", ... for outcome @i. */
const char *svc_stats_accept_name(unsigned i);
/* svc_stats_peer_str - @peer as text (address only) into @buf. */
const char *svc_stats_peer_str(const struct sockaddr_storage *peer, char *buf, size_t len);

/* Renderers (svc_stats_fmt.c, svc_stats_prom.c). */
void svc_stats_write_json(const struct svc_stats_snap *s, FILE *f);
void svc_stats_write_table(const struct svc_stats_snap *s, FILE *f);
void svc_stats_write_prometheus(const struct svc_stats_snap *s, FILE *f);

#endif /* RPCRDMA_SVC_STATS_H */
