/* SPDX-License-Identifier: MIT */
/*
 * svc_counters.h - the server's transport counters, expanded from one
 * list (RPCRDMA_SVC_STATS_LIST in <rpcrdma/svc_stats_list.h>, then
 * SVC_STATS_PRIVATE_LIST below): the atomics the call path increments
 * (struct svc_counters), their descriptions (svc_ct_descs[]: name, type,
 * per transport, help) and a reader's copy (struct svc_ct_vals), from
 * which the public struct, the JSON, the Prometheus text and the table
 * are made.  Adding a counter is one line in a list.
 *
 * A counter of scope "xprt" is an array of SVC_XPRTS atomics, one per
 * transport (SVC_XINC()), whose sum is the server's figure: each share is
 * counted where it happens, so each is monotonic on its own.
 *
 * Owner prefixes: cd_ description, cv_ values.
 */
#ifndef RPCRDMA_SVC_COUNTERS_H
#define RPCRDMA_SVC_COUNTERS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <rpcrdma/svc.h>

/*
 * Counters that are not in the public struct rpcrdma_svc_stats (whose
 * layout is an ABI): same columns as RPCRDMA_SVC_STATS_LIST.  They follow
 * the public ones in the JSON line, the Prometheus text and the table.
 * Add a new counter at the end of this list.
 */
#define SVC_STATS_PRIVATE_LIST(X) \
	X(tcp_mem_waits, counter, all, "TCP records that waited for the memory budget to grow their buffer.")

/* Every counter: the public ones, then the private ones. */
#define SVC_COUNTERS_LIST(X) RPCRDMA_SVC_STATS_LIST(X) SVC_STATS_PRIVATE_LIST(X)

/* The transports a counter of scope "xprt" is split by. */
enum svc_xprt_id { SVC_XPRT_RDMA, SVC_XPRT_TCP, SVC_XPRTS };

/* svc_xprt_id_name - "rdma" or "tcp" (the Prometheus label value). */
const char *svc_xprt_id_name(unsigned x);

#define SVC_CT_ATOMIC_all(name) _Atomic uint64_t name;
#define SVC_CT_ATOMIC_xprt(name) _Atomic uint64_t name[SVC_XPRTS];
#define SVC_CT_ATOMIC(name, type, scope, help) SVC_CT_ATOMIC_##scope(name)

/** Counters; updated with relaxed atomics from any thread (SVC_INC,
 *  SVC_XINC in svc_internal.h). */
struct svc_counters {
	SVC_COUNTERS_LIST(SVC_CT_ATOMIC)
};

#define SVC_CT_ENUM(name, type, scope, help) SVC_CT_##name,
enum svc_ct_id {
	SVC_COUNTERS_LIST(SVC_CT_ENUM)
	SVC_CT_N
};
#undef SVC_CT_ENUM

/* What a counter is (one per line of the lists, in their order). */
struct svc_ct_desc {
	const char *cd_name;  /* as in the list: JSON key, metric stem */
	const char *cd_help;  /* Prometheus HELP */
	bool cd_gauge;        /* type gauge (else counter) */
	bool cd_by_xprt;      /* scope xprt */
};
extern const struct svc_ct_desc svc_ct_descs[SVC_CT_N];

/* The order of the Prometheus families (indexes in svc_ct_descs): the
 * list's sections A D B E C, then the private list. */
extern const uint8_t svc_ct_prom_order[SVC_CT_N];

/* A reader's copy: every counter's server figure, and its share per
 * transport (cv_xprt[i][x] for counters with cd_by_xprt; 0 otherwise). */
struct svc_ct_vals {
	uint64_t cv_total[SVC_CT_N];
	uint64_t cv_xprt[SVC_CT_N][SVC_XPRTS];
};

/* svc_counters_read - load every counter of @c into @out (relaxed: each
 * value is exact, the set is not one instant). */
void svc_counters_read(const struct svc_counters *c, struct svc_ct_vals *out);
/* svc_counters_public - the public counters of @v into @st. */
void svc_counters_public(const struct svc_ct_vals *v, struct rpcrdma_svc_stats *st);
/* svc_counters_json_fields - the first @n counters of @v (SVC_CT_NPUBLIC:
 * the public ones; SVC_CT_N: all) to @f as JSON members "name":value
 * separated by commas, in list order, without braces. */
void svc_counters_json_fields(const struct svc_ct_vals *v, unsigned n, FILE *f);

/* How many of the counters are public (struct rpcrdma_svc_stats). */
#define SVC_CT_ONE(name, type, scope, help) +1
#define SVC_CT_NPUBLIC (0 RPCRDMA_SVC_STATS_LIST(SVC_CT_ONE))

#endif /* RPCRDMA_SVC_COUNTERS_H */
