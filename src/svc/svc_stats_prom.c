// SPDX-License-Identifier: MIT
/*
 * svc_stats_prom.c - the statistics in the Prometheus text exposition
 * format 0.0.4: "# HELP" and "# TYPE" once per family, before its samples,
 * which follow each other; units in the names (seconds, bytes); counters
 * end in _total; the latency histogram has cumulative _bucket samples with
 * an "le" label up to "+Inf", then _sum and _count.
 */
#include <string.h>

#include "svc/svc_internal.h"
#include "svc/svc_stats.h"

typedef unsigned long long ull;


static void svc_prom_family(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* Label value with \, " and newline escaped. */
static void svc_prom_value(FILE *f, const char *v)
{
	for (; *v; v++) {
		if (*v == '\\' || *v == '"')
			fputc('\\', f);
		if (*v == '\n') {
			fputs("\\n", f);
			continue;
		}
		fputc(*v, f);
	}
}

/* program="..",version="..",procedure=".." (no braces). */
static void svc_prom_row_labels(FILE *f, const struct svc_stats_snap *s,
				const struct svc_stats_sum *r)
{
	const char *name = svc_stats_proc_name(s, r);

	fprintf(f, "program=\"%u\",version=\"%u\",procedure=\"", r->os_prog, r->os_vers);
	if (name)
		svc_prom_value(f, name);
	else if (r->os_proc == UINT32_MAX)
		fputs("other", f);
	else
		fprintf(f, "%u", r->os_proc);
	fputc('"', f);
}

static void svc_prom_conn_labels(FILE *f, const struct svc_stats_conn_sum *c)
{
	char peer[64];

	fprintf(f, "connection=\"%u\",peer=\"", c->cs_id);
	svc_prom_value(f, svc_stats_peer_str(&c->cs_peer, peer, sizeof(peer)));
	fputc('"', f);
}

enum svc_prom_row_field { PR_CALLS, PR_IN, PR_OUT };

static void svc_prom_rows(FILE *f, const struct svc_stats_snap *s, const char *name,
			  const char *help, enum svc_prom_row_field which)
{
	uint32_t i;

	svc_prom_family(f, name, "counter", help);
	for (i = 0; i < s->ss_nrows; i++) {
		const struct svc_stats_sum *r = &s->ss_rows[i];
		uint64_t v = which == PR_CALLS ? r->os_calls :
			     which == PR_IN ? r->os_bytes_in : r->os_bytes_out;

		fprintf(f, "%s{", name);
		svc_prom_row_labels(f, s, r);
		fprintf(f, "} %llu\n", (ull)v);
	}
}

enum svc_prom_conn_field { PC_CREDITS, PC_CALLS, PC_IN, PC_OUT, PC_ERRORS };

static void svc_prom_conns(FILE *f, const struct svc_stats_snap *s, const char *name,
			   const char *type, const char *help, enum svc_prom_conn_field which)
{
	uint32_t i;

	svc_prom_family(f, name, type, help);
	for (i = 0; i < s->ss_nconns; i++) {
		const struct svc_stats_conn_sum *c = &s->ss_conns[i];
		uint64_t v = which == PC_CREDITS ? c->cs_credits : which == PC_CALLS ? c->cs_calls :
			     which == PC_IN ? c->cs_bytes_in : which == PC_OUT ? c->cs_bytes_out :
			     c->cs_rdma_errors;

		fprintf(f, "%s{", name);
		svc_prom_conn_labels(f, c);
		fprintf(f, "} %llu\n", (ull)v);
	}
}

void svc_stats_write_prometheus(const struct svc_stats_snap *s, FILE *f)
{
	const char *lat = "rpcrdma_svc_call_duration_seconds";
	uint32_t i, k;

	/* The transport counters, from their list (svc_counters.h); those
	 * counted per transport as one sample per transport. */
	for (i = 0; i < SVC_CT_N; i++) {
		unsigned id = svc_ct_prom_order[i], x;
		const struct svc_ct_desc *cd = &svc_ct_descs[id];
		char name[96];

		snprintf(name, sizeof(name), "rpcrdma_svc_%s%s", cd->cd_name,
			 cd->cd_gauge ? "" : "_total");
		svc_prom_family(f, name, cd->cd_gauge ? "gauge" : "counter", cd->cd_help);
		if (!cd->cd_by_xprt) {
			fprintf(f, "%s %llu\n", name, (ull)s->ss_ct.cv_total[id]);
			continue;
		}
		for (x = 0; x < SVC_XPRTS; x++)
			fprintf(f, "%s{transport=\"%s\"} %llu\n", name, svc_xprt_id_name(x),
				(ull)s->ss_ct.cv_xprt[id][x]);
	}
	svc_prom_family(f, "rpcrdma_svc_stats_lost_total", "counter",
			"Statistics records lost for lack of memory.");
	fprintf(f, "rpcrdma_svc_stats_lost_total %llu\n", (ull)s->ss_lost);

	svc_prom_rows(f, s, "rpcrdma_svc_procedure_calls_total",
		      "RPC calls decoded, by program, version and procedure.", PR_CALLS);
	svc_prom_family(f, "rpcrdma_svc_procedure_replies_total", "counter",
			"Replies sent, by procedure and outcome (accept_stat, AUTH_ERROR, RPC_MISMATCH).");
	for (i = 0; i < s->ss_nrows; i++)
		for (k = 0; k < SVC_STATS_ACCEPTS; k++) {
			const struct svc_stats_sum *r = &s->ss_rows[i];

			if (!r->os_accept[k] && k != RPCRDMA_SVC_SUCCESS)
				continue;
			fputs("rpcrdma_svc_procedure_replies_total{", f);
			svc_prom_row_labels(f, s, r);
			fprintf(f, ",outcome=\"%s\"} %llu\n", svc_stats_accept_name(k),
				(ull)r->os_accept[k]);
		}
	svc_prom_family(f, "rpcrdma_svc_procedure_status_total", "counter",
			"Program statuses reported with successful replies (nfsstat3 for NFS).");
	for (i = 0; i < s->ss_nrows; i++) {
		const struct svc_stats_sum *r = &s->ss_rows[i];

		for (k = 0; k < r->os_nstatus; k++) {
			const char *sn = svc_stats_status_name(s, r, r->os_status[k]);

			fputs("rpcrdma_svc_procedure_status_total{", f);
			svc_prom_row_labels(f, s, r);
			fputs(",status=\"", f);
			if (sn)
				svc_prom_value(f, sn);
			else
				fprintf(f, "%u", r->os_status[k]);
			fprintf(f, "\"} %llu\n", (ull)r->os_status_count[k]);
		}
		if (r->os_status_other) {
			fputs("rpcrdma_svc_procedure_status_total{", f);
			svc_prom_row_labels(f, s, r);
			fprintf(f, ",status=\"other\"} %llu\n", (ull)r->os_status_other);
		}
	}
	svc_prom_rows(f, s, "rpcrdma_svc_procedure_received_bytes_total",
		      "RPC call bytes received (chunk data included).", PR_IN);
	svc_prom_rows(f, s, "rpcrdma_svc_procedure_sent_bytes_total",
		      "RPC reply bytes sent (chunk data included).", PR_OUT);

	svc_prom_family(f, lat, "histogram",
			"Time from a call's Receive to its reply's post, by procedure.");
	for (i = 0; i < s->ss_nrows; i++) {
		const struct svc_stats_sum *r = &s->ss_rows[i];
		uint64_t cum = 0;

		for (k = 0; k < SVC_STATS_LAT_BUCKETS; k++) {
			cum += r->os_lat[k];
			fprintf(f, "%s_bucket{", lat);
			svc_prom_row_labels(f, s, r);
			if (k < SVC_STATS_LAT_FINITE)
				fprintf(f, ",le=\"%.6f\"} %llu\n",
					(double)svc_stats_lat_bound_us(k) / 1e6, (ull)cum);
			else
				fprintf(f, ",le=\"+Inf\"} %llu\n", (ull)cum);
		}
		fprintf(f, "%s_sum{", lat);
		svc_prom_row_labels(f, s, r);
		fprintf(f, "} %.9f\n", (double)r->os_lat_sum_ns / 1e9);
		fprintf(f, "%s_count{", lat);
		svc_prom_row_labels(f, s, r);
		fprintf(f, "} %llu\n", (ull)cum);
	}

	svc_prom_conns(f, s, "rpcrdma_svc_connection_credits", "gauge",
		       "Credits granted in the connection's last reply.", PC_CREDITS);
	svc_prom_conns(f, s, "rpcrdma_svc_connection_calls_total", "counter",
		       "Replies sent on the connection.", PC_CALLS);
	svc_prom_conns(f, s, "rpcrdma_svc_connection_received_bytes_total", "counter",
		       "RPC call bytes received on the connection.", PC_IN);
	svc_prom_conns(f, s, "rpcrdma_svc_connection_sent_bytes_total", "counter",
		       "RPC reply bytes sent on the connection.", PC_OUT);
	svc_prom_conns(f, s, "rpcrdma_svc_connection_rdma_errors_total", "counter",
		       "RDMA_ERROR replies sent on the connection.", PC_ERRORS);
}
