// SPDX-License-Identifier: MIT
/*
 * svc_counters.c - the transport counters' descriptions, generated from
 * their list, and the reader's side: load, public struct, JSON members
 * (svc_counters.h).
 */
#include <stddef.h>

#include "svc/svc_counters.h"

typedef unsigned long long ull;

#define SVC_CT_GAUGE_counter false
#define SVC_CT_GAUGE_gauge true
#define SVC_CT_BY_XPRT_all false
#define SVC_CT_BY_XPRT_xprt true
#define SVC_CT_DESC(name, type, scope, help) \
	{ #name, help, SVC_CT_GAUGE_##type, SVC_CT_BY_XPRT_##scope },
const struct svc_ct_desc svc_ct_descs[SVC_CT_N] = {
	SVC_COUNTERS_LIST(SVC_CT_DESC)
};
#undef SVC_CT_DESC

#define SVC_CT_INDEX(name, type, scope, help) SVC_CT_##name,
const uint8_t svc_ct_prom_order[SVC_CT_N] = {
	RPCRDMA_SVC_STATS_LIST_A(SVC_CT_INDEX)
	RPCRDMA_SVC_STATS_LIST_D(SVC_CT_INDEX)
	RPCRDMA_SVC_STATS_LIST_B(SVC_CT_INDEX)
	RPCRDMA_SVC_STATS_LIST_E(SVC_CT_INDEX)
	RPCRDMA_SVC_STATS_LIST_C(SVC_CT_INDEX)
	SVC_STATS_PRIVATE_LIST(SVC_CT_INDEX)
};
#undef SVC_CT_INDEX
_Static_assert(SVC_CT_N <= 256, "svc_ct_prom_order holds uint8_t indexes");

/* The public struct is the public list, field for field: its layout is the
 * ABI of rpcrdma_svc_get_stats(). */
_Static_assert(sizeof(struct rpcrdma_svc_stats) == SVC_CT_NPUBLIC * sizeof(uint64_t),
	       "struct rpcrdma_svc_stats is the public list");

const char *svc_xprt_id_name(unsigned x)
{
	return x == SVC_XPRT_RDMA ? "rdma" : x == SVC_XPRT_TCP ? "tcp" : "?";
}

#define SVC_CT_LOAD_all(name)						\
	out->cv_total[SVC_CT_##name] = atomic_load_explicit(&c->name, memory_order_relaxed);
#define SVC_CT_LOAD_xprt(name)						\
	for (x = 0; x < SVC_XPRTS; x++) {				\
		out->cv_xprt[SVC_CT_##name][x] =			\
			atomic_load_explicit(&c->name[x], memory_order_relaxed); \
		out->cv_total[SVC_CT_##name] += out->cv_xprt[SVC_CT_##name][x]; \
	}
#define SVC_CT_LOAD(name, type, scope, help) SVC_CT_LOAD_##scope(name)

void svc_counters_read(const struct svc_counters *c, struct svc_ct_vals *out)
{
	unsigned x;

	*out = (struct svc_ct_vals){ 0 };
	SVC_COUNTERS_LIST(SVC_CT_LOAD)
	(void)x;
}

void svc_counters_public(const struct svc_ct_vals *v, struct rpcrdma_svc_stats *st)
{
#define SVC_CT_COPY(name, type, scope, help) st->ss_##name = v->cv_total[SVC_CT_##name];
	RPCRDMA_SVC_STATS_LIST(SVC_CT_COPY)
#undef SVC_CT_COPY
}

void svc_counters_json_fields(const struct svc_ct_vals *v, unsigned n, FILE *f)
{
	unsigned i;

	for (i = 0; i < n && i < SVC_CT_N; i++)
		fprintf(f, "%s\"%s\":%llu", i ? "," : "", svc_ct_descs[i].cd_name,
			(ull)v->cv_total[i]);
}
