// SPDX-License-Identifier: MIT
/*
 * svc_stats_fmt.c - the statistics as one JSON line (the SIGUSR1 and exit
 * dump) and as a table for people (rpcrdma-stat), like nfsstat -s.
 */
#include <stdlib.h>
#include <string.h>

#include "svc/svc_internal.h"
#include "svc/svc_stats.h"

typedef unsigned long long ull;

/* Program statuses other than 0 (NFS3_OK and its like). */
static uint64_t svc_fmt_status_errors(const struct svc_stats_sum *r)
{
	uint64_t n = r->os_status_other;
	uint32_t i;

	for (i = 0; i < r->os_nstatus; i++)
		if (r->os_status[i])
			n += r->os_status_count[i];
	return n;
}

static void svc_fmt_json_row(const struct svc_stats_snap *s, const struct svc_stats_sum *r,
			     FILE *f)
{
	const char *name = svc_stats_proc_name(s, r);
	bool first = true;
	unsigned i;

	fprintf(f, "{\"prog\":%u,\"vers\":%u,", r->os_prog, r->os_vers);
	if (r->os_proc == UINT32_MAX)
		fputs("\"proc\":\"other\",", f);
	else
		fprintf(f, "\"proc\":%u,", r->os_proc);
	if (name)
		fprintf(f, "\"name\":\"%s\",", name);
	fprintf(f, "\"count\":%llu,\"replies\":%llu,\"bytes_in\":%llu,\"bytes_out\":%llu,"
		"\"outcomes\":{", (ull)r->os_calls, (ull)r->os_replies, (ull)r->os_bytes_in,
		(ull)r->os_bytes_out);
	for (i = 0; i < SVC_STATS_ACCEPTS; i++) {
		if (!r->os_accept[i])
			continue;
		fprintf(f, "%s\"%s\":%llu", first ? "" : ",", svc_stats_accept_name(i),
			(ull)r->os_accept[i]);
		first = false;
	}
	fputs("},\"status\":{", f);
	for (i = 0; i < r->os_nstatus; i++) {
		const char *sn = svc_stats_status_name(s, r, r->os_status[i]);

		if (sn)
			fprintf(f, "%s\"%s\":%llu", i ? "," : "", sn, (ull)r->os_status_count[i]);
		else
			fprintf(f, "%s\"%u\":%llu", i ? "," : "", r->os_status[i],
				(ull)r->os_status_count[i]);
	}
	fprintf(f, "},\"status_other\":%llu,\"lat_sum_ns\":%llu,\"lat_p50_us\":%.1f,"
		"\"lat_p99_us\":%.1f,\"lat_buckets\":[", (ull)r->os_status_other,
		(ull)r->os_lat_sum_ns, svc_stats_percentile_us(r->os_lat, 0.5),
		svc_stats_percentile_us(r->os_lat, 0.99));
	for (i = 0; i < SVC_STATS_LAT_BUCKETS; i++)
		fprintf(f, "%s%llu", i ? "," : "", (ull)r->os_lat[i]);
	fputs("]}", f);
}

void svc_stats_write_json(const struct svc_stats_snap *s, FILE *f)
{
	uint32_t i;

	/* The transport counters as rpcrdma_svc_stats_json() prints them
	 * (the private ones after), then the rows and connections inside
	 * the same object. */
	fputc('{', f);
	svc_counters_json_fields(&s->ss_ct, SVC_CT_N, f);
	fprintf(f, ",\"stats_lost\":%llu,\"lat_bucket_bounds_us\":[", (ull)s->ss_lost);
	for (i = 0; i < SVC_STATS_LAT_FINITE; i++)
		fprintf(f, "%s%llu", i ? "," : "", (ull)svc_stats_lat_bound_us(i));
	fputs(",\"inf\"],\"ops\":[", f);
	for (i = 0; i < s->ss_nrows; i++) {
		if (i)
			fputc(',', f);
		svc_fmt_json_row(s, &s->ss_rows[i], f);
	}
	fputs("],\"conns\":[", f);
	for (i = 0; i < s->ss_nconns; i++) {
		const struct svc_stats_conn_sum *c = &s->ss_conns[i];
		char peer[64];

		fprintf(f, "%s{\"id\":%u,\"peer\":\"%s\",\"qp\":%u,\"credits\":%llu,"
			"\"count\":%llu,\"bytes_in\":%llu,\"bytes_out\":%llu,"
			"\"rdma_errors\":%llu}", i ? "," : "", c->cs_id,
			svc_stats_peer_str(&c->cs_peer, peer, sizeof(peer)), c->cs_qp_num,
			(ull)c->cs_credits, (ull)c->cs_calls, (ull)c->cs_bytes_in,
			(ull)c->cs_bytes_out, (ull)c->cs_rdma_errors);
	}
	fputs("]}\n", f);
}

/* The transport counters, from their list: those counted per transport
 * one a line with the server's figure and each transport's, then every
 * other one that is not 0, three a line. */
static void svc_fmt_counters(const struct svc_stats_snap *s, FILE *f)
{
	const struct svc_ct_vals *v = &s->ss_ct;
	unsigned i, x, col = 0;

	fprintf(f, "%-32s %12s", "Server transport:", "total");
	for (x = 0; x < SVC_XPRTS; x++)
		fprintf(f, " %12s", svc_xprt_id_name(x));
	fputc('\n', f);
	for (i = 0; i < SVC_CT_N; i++) {
		if (!svc_ct_descs[i].cd_by_xprt)
			continue;
		fprintf(f, "  %-30s %12llu", svc_ct_descs[i].cd_name, (ull)v->cv_total[i]);
		for (x = 0; x < SVC_XPRTS; x++)
			fprintf(f, " %12llu", (ull)v->cv_xprt[i][x]);
		fputc('\n', f);
	}
	fputs("Other counters (those not shown are 0):\n", f);
	for (i = 0; i < SVC_CT_N; i++) {
		if (svc_ct_descs[i].cd_by_xprt || !v->cv_total[i])
			continue;
		fprintf(f, "  %-19s %10llu", svc_ct_descs[i].cd_name,
			(ull)v->cv_total[i]);
		if (++col == 3) {
			fputc('\n', f);
			col = 0;
		}
	}
	if (col)
		fputc('\n', f);
}

void svc_stats_write_table(const struct svc_stats_snap *s, FILE *f)
{
	uint32_t i, g = UINT32_MAX;

	svc_fmt_counters(s, f);
	for (i = 0; i < s->ss_nrows; i++) {
		const struct svc_stats_sum *r = &s->ss_rows[i];
		const char *name = svc_stats_proc_name(s, r);
		uint64_t rpc_err = r->os_replies - r->os_accept[RPCRDMA_SVC_SUCCESS];
		char pname[16];

		if (r->os_group != g) {
			g = r->os_group;
			if (g == SVC_STATS_UNMATCHED)
				fprintf(f, "\nCalls to no registered program or version:\n");
			else
				fprintf(f, "\nProgram %u version %u:\n", r->os_prog, r->os_vers);
			fprintf(f, "  %-12s %10s %8s %8s %10s %10s %10s %12s %12s\n", "proc",
				"calls", "rpc_err", "prog_err", "p50_us", "p99_us", "mean_us",
				"bytes_in", "bytes_out");
		}
		if (!name) {
			if (r->os_proc == UINT32_MAX)
				snprintf(pname, sizeof(pname), "other");
			else
				snprintf(pname, sizeof(pname), "%u", r->os_proc);
			name = pname;
		}
		fprintf(f, "  %-12s %10llu %8llu %8llu %10.1f %10.1f %10.1f %12llu %12llu\n",
			name, (ull)r->os_calls, (ull)rpc_err, (ull)svc_fmt_status_errors(r),
			svc_stats_percentile_us(r->os_lat, 0.5),
			svc_stats_percentile_us(r->os_lat, 0.99),
			r->os_replies ? (double)r->os_lat_sum_ns / 1000.0 / (double)r->os_replies : 0.0,
			(ull)r->os_bytes_in, (ull)r->os_bytes_out);
	}
	/* Statuses other than success, by procedure. */
	for (i = 0, g = 0; i < s->ss_nrows; i++) {
		const struct svc_stats_sum *r = &s->ss_rows[i];
		const char *name = svc_stats_proc_name(s, r);
		uint32_t k;

		for (k = 0; k < r->os_nstatus; k++) {
			const char *sn = svc_stats_status_name(s, r, r->os_status[k]);

			if (!r->os_status[k])
				continue;
			if (!g++)
				fprintf(f, "\nProgram statuses other than 0:\n");
			fprintf(f, "  %u/%u %s: ", r->os_prog, r->os_vers, name ? name : "?");
			if (sn)
				fprintf(f, "%s %llu\n", sn, (ull)r->os_status_count[k]);
			else
				fprintf(f, "%u %llu\n", r->os_status[k], (ull)r->os_status_count[k]);
		}
	}
	fprintf(f, "\nConnections open: %u\n", s->ss_nconns);
	if (s->ss_nconns)
		fprintf(f, "  %-6s %-40s %8s %8s %10s %12s %12s %11s\n", "id", "peer", "qp",
			"credits", "calls", "bytes_in", "bytes_out", "rdma_errors");
	for (i = 0; i < s->ss_nconns; i++) {
		const struct svc_stats_conn_sum *c = &s->ss_conns[i];
		char peer[64];

		fprintf(f, "  %-6u %-40s %8u %8llu %10llu %12llu %12llu %11llu\n", c->cs_id,
			svc_stats_peer_str(&c->cs_peer, peer, sizeof(peer)), c->cs_qp_num,
			(ull)c->cs_credits, (ull)c->cs_calls, (ull)c->cs_bytes_in,
			(ull)c->cs_bytes_out, (ull)c->cs_rdma_errors);
	}
}
