// SPDX-License-Identifier: MIT
/*
 * svc_stats.c - per-operation and per-connection statistics: per-thread
 * shards written without a shared lock, summed by readers (svc_stats.h).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "svc/svc_internal.h"
#include "svc/svc_stats.h"

static _Atomic uint64_t svc_stats_gens;

/* The calling thread's shard of the server whose generation is tls_gen. */
static __thread uint64_t svc_stats_tls_gen;
static __thread struct svc_stats_shard *svc_stats_tls_shard;

#define RELAXED memory_order_relaxed

/* Single-writer increment: only the owner thread stores, so a load and a
 * store need no read-modify-write; readers never see a torn value. */
static inline void svc_stats_add(_Atomic uint64_t *a, uint64_t n)
{
	atomic_store_explicit(a, atomic_load_explicit(a, RELAXED) + n, RELAXED);
}

static uint64_t svc_stats_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int svc_stats_create(struct rpcrdma_svc *svc)
{
	struct svc_stats *st = calloc(1, sizeof(*st));

	if (!st)
		return -ENOMEM;
	st->st_gen = atomic_fetch_add(&svc_stats_gens, 1) + 1;
	pthread_mutex_init(&st->st_lock, NULL);
	svc->sv_stats = st;
	return 0;
}

void svc_stats_destroy(struct rpcrdma_svc *svc)
{
	struct svc_stats *st = svc->sv_stats;
	struct svc_stats_shard *sh, *nsh;
	struct svc_stats_conn *sn, *nsn;

	if (!st)
		return;
	for (sh = st->st_shards; sh; sh = nsh) {
		nsh = sh->sh_next;
		free(sh);
	}
	for (sn = st->st_conns; sn; sn = nsn) {
		nsn = sn->sn_next;
		free(sn);
	}
	pthread_mutex_destroy(&st->st_lock);
	free(st);
	svc->sv_stats = NULL;
}

/* The caller's shard: from the thread-local cache, else found or created
 * under the registry lock (once per thread and server). */
static struct svc_stats_shard *svc_stats_shard(struct svc_stats *st)
{
	struct svc_stats_shard *sh;
	pid_t tid;

	if (svc_stats_tls_gen == st->st_gen)
		return svc_stats_tls_shard;
	tid = gettid();
	pthread_mutex_lock(&st->st_lock);
	for (sh = st->st_shards; sh; sh = sh->sh_next)
		if (sh->sh_tid == tid)
			break;
	if (!sh) {
		sh = calloc(1, sizeof(*sh));
		if (sh) {
			sh->sh_tid = tid;
			sh->sh_next = st->st_shards;
			st->st_shards = sh;
		}
	}
	pthread_mutex_unlock(&st->st_lock);
	if (!sh) {
		atomic_fetch_add_explicit(&st->st_lost, 1, RELAXED);
		return NULL;
	}
	svc_stats_tls_gen = st->st_gen;
	svc_stats_tls_shard = sh;
	return sh;
}

static struct svc_stats_op *svc_stats_row(struct svc_stats_shard *sh, unsigned group,
					  uint32_t proc)
{
	unsigned r;

	if (group >= SVC_STATS_UNMATCHED)
		return &sh->sh_ops[SVC_STATS_UNMATCHED * SVC_STATS_ROWS_PER_PROG];
	r = proc < SVC_STATS_PROCS ? proc : SVC_STATS_PROCS;
	return &sh->sh_ops[group * SVC_STATS_ROWS_PER_PROG + r];
}

unsigned svc_stats_lat_bucket(uint64_t ns)
{
	uint64_t us = ns / 1000u + (ns % 1000u != 0); /* rounded up */
	unsigned i;

	if (us <= 1)
		return 0;
	i = 64u - (unsigned)__builtin_clzll(us - 1); /* smallest i: us <= 1 << i */
	return i < SVC_STATS_LAT_FINITE ? i : SVC_STATS_LAT_FINITE;
}

static void svc_stats_add_status(struct svc_stats_op *op, uint32_t status)
{
	uint64_t key = (uint64_t)status + 1;
	unsigned i;

	for (i = 0; i < SVC_STATS_STATUS_SLOTS; i++) {
		uint64_t k = atomic_load_explicit(&op->so_status[i].sk_key, RELAXED);

		if (k == key) {
			svc_stats_add(&op->so_status[i].sk_count, 1);
			return;
		}
		if (!k) {
			atomic_store_explicit(&op->so_status[i].sk_count, 1, RELAXED);
			atomic_store_explicit(&op->so_status[i].sk_key, key, memory_order_release);
			return;
		}
	}
	svc_stats_add(&op->so_status_other, 1);
}

bool svc_stats_count_call(struct svc_stats *st, unsigned group, uint32_t proc)
{
	struct svc_stats_shard *sh = svc_stats_shard(st);

	if (!sh)
		return false;
	svc_stats_add(&svc_stats_row(sh, group, proc)->so_calls, 1);
	return true;
}

bool svc_stats_record(struct svc_stats *st, unsigned group, uint32_t proc, bool decoded,
		      unsigned outcome, uint64_t bytes_in, uint64_t bytes_out,
		      uint64_t lat_ns, bool has_status, uint32_t status)
{
	struct svc_stats_shard *sh = svc_stats_shard(st);
	struct svc_stats_op *op;

	if (!sh)
		return false;
	op = svc_stats_row(sh, group, proc);
	if (decoded)
		svc_stats_add(&op->so_calls, 1);
	svc_stats_add(&op->so_replies, 1);
	svc_stats_add(&op->so_accept[outcome < SVC_STATS_ACCEPTS ? outcome : RPCRDMA_SVC_SYSTEM_ERR], 1);
	svc_stats_add(&op->so_bytes_in, bytes_in);
	svc_stats_add(&op->so_bytes_out, bytes_out);
	svc_stats_add(&op->so_lat_sum_ns, lat_ns);
	svc_stats_add(&op->so_lat[svc_stats_lat_bucket(lat_ns)], 1);
	if (has_status)
		svc_stats_add_status(op, status);
	return true;
}

/* ---------- hooks ---------- */

void svc_stats_call_begin(struct svc_call *cc)
{
	cc->cc_st.sc_group = SVC_STATS_UNMATCHED;
	cc->cc_st.sc_t0_ns = cc->cc_svc->sv_stats ? svc_stats_now_ns() : 0;
}

void svc_stats_call_decoded(struct svc_call *cc, const struct svc_program *match)
{
	struct rpcrdma_svc *svc = cc->cc_svc;

	if (!svc->sv_stats)
		return;
	cc->cc_st.sc_group = match ? (uint8_t)(match - svc->sv_progs) : SVC_STATS_UNMATCHED;
	svc_stats_count_call(svc->sv_stats, cc->cc_st.sc_group, cc->cc_req.rq_msg.rm_proc);
}

void svc_stats_reply(struct svc_call *cc, int status)
{
	struct svc_conn *conn = cc->cc_conn; /* NULL: TCP, no per-connection block */
	struct svc_stats *st = cc->cc_svc->sv_stats;
	const struct rpcrdma_svc_req *req = &cc->cc_req;
	struct svc_stats_conn *sn = conn ? conn->sx_stats : NULL;
	uint64_t now, lat = 0;
	unsigned outcome;

	if (!st)
		return;
	if (status < 0)
		outcome = SVC_STATS_ACCEPT_RPC_MISMATCH;
	else if (status == RPCRDMA_SVC_AUTH_ERROR)
		outcome = SVC_STATS_ACCEPT_AUTH;
	else
		outcome = status <= RPCRDMA_SVC_SYSTEM_ERR ? (unsigned)status : RPCRDMA_SVC_SYSTEM_ERR;
	now = svc_stats_now_ns();
	if (cc->cc_st.sc_t0_ns && now > cc->cc_st.sc_t0_ns)
		lat = now - cc->cc_st.sc_t0_ns;
	svc_stats_record(st, cc->cc_st.sc_group, req->rq_msg.rm_proc, false, outcome,
			 cc->cc_call_len, cc->cc_reply_len, lat,
			 req->rq_has_status && outcome == RPCRDMA_SVC_SUCCESS, req->rq_status);
	if (sn) {
		atomic_store_explicit(&sn->sn_credits, conn->sx_credits, RELAXED);
		atomic_fetch_add_explicit(&sn->sn_calls, 1, RELAXED);
		atomic_fetch_add_explicit(&sn->sn_bytes_in, cc->cc_call_len, RELAXED);
		atomic_fetch_add_explicit(&sn->sn_bytes_out, cc->cc_reply_len, RELAXED);
	}
}

void svc_stats_rdma_error(struct svc_call *cc)
{
	struct svc_stats_conn *sn = cc->cc_conn->sx_stats;

	if (sn)
		atomic_fetch_add_explicit(&sn->sn_rdma_errors, 1, RELAXED);
}

struct svc_stats_conn *svc_stats_conn_open(struct svc_conn *conn)
{
	struct svc_stats *st = conn->sx_svc->sv_stats;
	struct svc_stats_conn *sn;
	struct sockaddr *peer;

	if (!st)
		return NULL;
	sn = calloc(1, sizeof(*sn));
	if (!sn)
		return NULL;
	sn->sn_id = conn->sx_id_num;
	peer = conn->sx_id ? rdma_get_peer_addr(conn->sx_id) : NULL;
	if (peer && (peer->sa_family == AF_INET || peer->sa_family == AF_INET6))
		memcpy(&sn->sn_peer, peer, peer->sa_family == AF_INET ?
		       sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6));
	if (conn->sx_id && conn->sx_id->qp)
		sn->sn_qp_num = conn->sx_id->qp->qp_num;
	atomic_store_explicit(&sn->sn_credits, conn->sx_credits, RELAXED);
	pthread_mutex_lock(&st->st_lock);
	sn->sn_next = st->st_conns;
	if (st->st_conns)
		st->st_conns->sn_prev = sn;
	st->st_conns = sn;
	st->st_nconns++;
	pthread_mutex_unlock(&st->st_lock);
	return sn;
}

void svc_stats_conn_close(struct rpcrdma_svc *svc, struct svc_stats_conn *sn)
{
	struct svc_stats *st = svc->sv_stats;

	if (!sn || !st)
		return;
	pthread_mutex_lock(&st->st_lock);
	if (sn->sn_prev)
		sn->sn_prev->sn_next = sn->sn_next;
	else
		st->st_conns = sn->sn_next;
	if (sn->sn_next)
		sn->sn_next->sn_prev = sn->sn_prev;
	st->st_nconns--;
	pthread_mutex_unlock(&st->st_lock);
	free(sn);
}

/* ---------- readers ---------- */

double svc_stats_percentile_us(const uint64_t lat[SVC_STATS_LAT_BUCKETS], double q)
{
	uint64_t total = 0, cum = 0;
	double rank, lower, upper;
	unsigned i;

	for (i = 0; i < SVC_STATS_LAT_BUCKETS; i++)
		total += lat[i];
	if (!total || q <= 0)
		return 0;
	if (q > 1)
		q = 1;
	rank = q * (double)total;
	for (i = 0; i < SVC_STATS_LAT_BUCKETS; i++) {
		if (lat[i] && (double)(cum + lat[i]) >= rank)
			break;
		cum += lat[i];
	}
	if (i >= SVC_STATS_LAT_FINITE)
		return (double)svc_stats_lat_bound_us(SVC_STATS_LAT_FINITE - 1);
	lower = i ? (double)svc_stats_lat_bound_us(i - 1) : 0.0;
	upper = (double)svc_stats_lat_bound_us(i);
	return lower + (upper - lower) * (rank - (double)cum) / (double)lat[i];
}

static void svc_stats_sum_status(struct svc_stats_sum *row, uint32_t status, uint64_t n)
{
	uint32_t i;

	for (i = 0; i < row->os_nstatus; i++)
		if (row->os_status[i] == status) {
			row->os_status_count[i] += n;
			return;
		}
	if (row->os_nstatus == SVC_STATS_STATUS_SLOTS * 4) {
		row->os_status_other += n;
		return;
	}
	row->os_status[row->os_nstatus] = status;
	row->os_status_count[row->os_nstatus++] = n;
}

static void svc_stats_sum_op(struct svc_stats_sum *row, struct svc_stats_op *op)
{
	unsigned i;

	row->os_calls += atomic_load_explicit(&op->so_calls, RELAXED);
	row->os_replies += atomic_load_explicit(&op->so_replies, RELAXED);
	row->os_bytes_in += atomic_load_explicit(&op->so_bytes_in, RELAXED);
	row->os_bytes_out += atomic_load_explicit(&op->so_bytes_out, RELAXED);
	row->os_lat_sum_ns += atomic_load_explicit(&op->so_lat_sum_ns, RELAXED);
	for (i = 0; i < SVC_STATS_ACCEPTS; i++)
		row->os_accept[i] += atomic_load_explicit(&op->so_accept[i], RELAXED);
	for (i = 0; i < SVC_STATS_LAT_BUCKETS; i++)
		row->os_lat[i] += atomic_load_explicit(&op->so_lat[i], RELAXED);
	for (i = 0; i < SVC_STATS_STATUS_SLOTS; i++) {
		uint64_t key = atomic_load_explicit(&op->so_status[i].sk_key,
						    memory_order_acquire);

		if (!key)
			break;
		svc_stats_sum_status(row, (uint32_t)(key - 1),
				     atomic_load_explicit(&op->so_status[i].sk_count, RELAXED));
	}
	row->os_status_other += atomic_load_explicit(&op->so_status_other, RELAXED);
}

int svc_stats_snapshot(struct rpcrdma_svc *svc, struct svc_stats_snap *out)
{
	struct svc_stats *st = svc->sv_stats;
	const unsigned nslots = SVC_STATS_PROGS * SVC_STATS_ROWS_PER_PROG;
	struct svc_stats_shard *sh;
	struct svc_stats_conn *sn;
	struct svc_stats_sum *rows;
	unsigned i, n = 0;

	memset(out, 0, sizeof(*out));
	svc_counters_read(&svc->sv_ct, &out->ss_ct);
	svc_counters_public(&out->ss_ct, &out->ss_svc);
	if (!st)
		return 0;
	rows = calloc(nslots, sizeof(*rows));
	if (!rows)
		return -ENOMEM;
	pthread_mutex_lock(&st->st_lock);
	for (sh = st->st_shards; sh; sh = sh->sh_next)
		for (i = 0; i < nslots; i++)
			svc_stats_sum_op(&rows[i], &sh->sh_ops[i]);
	out->ss_conns = calloc(st->st_nconns ? st->st_nconns : 1, sizeof(*out->ss_conns));
	if (!out->ss_conns) {
		pthread_mutex_unlock(&st->st_lock);
		free(rows);
		return -ENOMEM;
	}
	for (sn = st->st_conns; sn; sn = sn->sn_next) {
		struct svc_stats_conn_sum *cs = &out->ss_conns[out->ss_nconns++];

		cs->cs_id = sn->sn_id;
		cs->cs_peer = sn->sn_peer;
		cs->cs_qp_num = sn->sn_qp_num;
		cs->cs_credits = atomic_load_explicit(&sn->sn_credits, RELAXED);
		cs->cs_calls = atomic_load_explicit(&sn->sn_calls, RELAXED);
		cs->cs_bytes_in = atomic_load_explicit(&sn->sn_bytes_in, RELAXED);
		cs->cs_bytes_out = atomic_load_explicit(&sn->sn_bytes_out, RELAXED);
		cs->cs_rdma_errors = atomic_load_explicit(&sn->sn_rdma_errors, RELAXED);
	}
	memcpy(out->ss_names, st->st_names, sizeof(out->ss_names));
	pthread_mutex_unlock(&st->st_lock);
	out->ss_lost = atomic_load_explicit(&st->st_lost, RELAXED);

	/* Keep the rows that saw traffic, in program then procedure order. */
	for (i = 0; i < nslots; i++) {
		struct svc_stats_sum *r = &rows[i];
		unsigned g = i / SVC_STATS_ROWS_PER_PROG, p = i % SVC_STATS_ROWS_PER_PROG;

		if (!r->os_calls && !r->os_replies)
			continue;
		r->os_group = g;
		if (g < svc->sv_nprogs) {
			r->os_prog = svc->sv_progs[g].sp_prog;
			r->os_vers = svc->sv_progs[g].sp_vers;
		}
		r->os_proc = g == SVC_STATS_UNMATCHED || p == SVC_STATS_PROCS ? UINT32_MAX : p;
		rows[n++] = *r;
	}
	out->ss_rows = rows;
	out->ss_nrows = n;
	return 0;
}

void svc_stats_snap_free(struct svc_stats_snap *s)
{
	free(s->ss_rows);
	free(s->ss_conns);
	memset(s, 0, sizeof(*s));
}

const char *svc_stats_proc_name(const struct svc_stats_snap *s, const struct svc_stats_sum *row)
{
	const struct svc_stats_names *nm;

	if (row->os_group >= SVC_STATS_UNMATCHED || row->os_proc == UINT32_MAX)
		return NULL;
	nm = &s->ss_names[row->os_group];
	return nm->nm_procs && row->os_proc < nm->nm_nprocs ? nm->nm_procs[row->os_proc] : NULL;
}

const char *svc_stats_status_name(const struct svc_stats_snap *s,
				  const struct svc_stats_sum *row, uint32_t status)
{
	const struct svc_stats_names *nm;

	if (row->os_group >= SVC_STATS_UNMATCHED)
		return NULL;
	nm = &s->ss_names[row->os_group];
	return nm->nm_status ? nm->nm_status(status) : NULL;
}

const char *svc_stats_accept_name(unsigned i)
{
	static const char *const names[SVC_STATS_ACCEPTS] = {
		"SUCCESS", "PROG_UNAVAIL", "PROG_MISMATCH", "PROC_UNAVAIL",
		"GARBAGE_ARGS", "SYSTEM_ERR", "AUTH_ERROR", "RPC_MISMATCH",
	};

	return i < SVC_STATS_ACCEPTS ? names[i] : "UNKNOWN";
}

const char *svc_stats_peer_str(const struct sockaddr_storage *peer, char *buf, size_t len)
{
	const void *a;

	if (peer->ss_family == AF_INET)
		a = &((const struct sockaddr_in *)peer)->sin_addr;
	else if (peer->ss_family == AF_INET6)
		a = &((const struct sockaddr_in6 *)peer)->sin6_addr;
	else
		a = NULL;
	if (!a || !inet_ntop(peer->ss_family, a, buf, (socklen_t)len))
		snprintf(buf, len, "unknown");
	return buf;
}

int rpcrdma_svc_set_proc_names(struct rpcrdma_svc *svc, uint32_t prog, uint32_t vers,
			       const char *const *names, uint32_t n,
			       rpcrdma_svc_status_name_fn status_name)
{
	unsigned i;

	for (i = 0; i < svc->sv_nprogs; i++)
		if (svc->sv_progs[i].sp_prog == prog && svc->sv_progs[i].sp_vers == vers)
			break;
	if (i == svc->sv_nprogs)
		return -ENOENT;
	if (!svc->sv_stats)
		return 0;
	pthread_mutex_lock(&svc->sv_stats->st_lock);
	svc->sv_stats->st_names[i] = (struct svc_stats_names){
		.nm_procs = names, .nm_nprocs = n, .nm_status = status_name,
	};
	pthread_mutex_unlock(&svc->sv_stats->st_lock);
	return 0;
}

int rpcrdma_svc_stats_write(struct rpcrdma_svc *svc, enum rpcrdma_svc_stats_format fmt,
			    FILE *f)
{
	struct svc_stats_snap s;
	int rc;

	if (fmt != RPCRDMA_SVC_STATS_JSON && fmt != RPCRDMA_SVC_STATS_TABLE &&
	    fmt != RPCRDMA_SVC_STATS_PROMETHEUS)
		return -EINVAL;
	rc = svc_stats_snapshot(svc, &s);
	if (rc)
		return rc;
	if (fmt == RPCRDMA_SVC_STATS_JSON)
		svc_stats_write_json(&s, f);
	else if (fmt == RPCRDMA_SVC_STATS_TABLE)
		svc_stats_write_table(&s, f);
	else
		svc_stats_write_prometheus(&s, f);
	svc_stats_snap_free(&s);
	return fflush(f) || ferror(f) ? -EIO : 0;
}
