// SPDX-License-Identifier: MIT
/*
 * stat_rates.c - rpcrdma-stat --watch's arithmetic: the server's
 * Prometheus text read back into a snapshot, and the rates between two
 * snapshots (stat_rates.h).
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "stat/stat_rates.h"

/* The value of label @key in @labels ("a=\"x\",b=\"y\"", escapes \\ \"
 * \n) into @out.  Return: true when present. */
static bool stat_label(const char *labels, const char *key, char *out, size_t cap)
{
	size_t klen = strlen(key), n = 0;
	const char *p = labels;

	while (*p) {
		bool hit = !strncmp(p, key, klen) && p[klen] == '=' && p[klen + 1] == '"';

		p = strchr(p, '"');
		if (!p)
			return false;
		for (p++; *p && *p != '"'; p++) {
			char c = *p;

			if (c == '\\' && p[1]) {
				p++;
				c = *p == 'n' ? '\n' : *p;
			}
			if (hit && n + 1 < cap)
				out[n++] = c;
		}
		if (hit) {
			out[n] = '\0';
			return true;
		}
		if (*p)
			p++;
		if (*p == ',')
			p++;
	}
	return false;
}

/* Split sample line @line into @name, @labels (inside the braces, may be
 * empty) and the value's text.  Return: the value's text, or NULL. */
static const char *stat_split(const char *line, char *name, size_t ncap, char *labels,
			      size_t lcap)
{
	const char *p = line;
	size_t n = 0;
	bool quoted = false;

	while (*p && *p != '{' && *p != ' ')
		if (n + 1 < ncap)
			name[n++] = *p++;
		else
			return NULL;
	name[n] = '\0';
	n = 0;
	if (*p == '{') {
		for (p++; *p && (quoted || *p != '}'); p++) {
			if (*p == '\\' && quoted && p[1]) {
				if (n + 2 < lcap) {
					labels[n++] = p[0];
					labels[n++] = p[1];
				}
				p++;
				continue;
			}
			if (*p == '"')
				quoted = !quoted;
			if (n + 1 < lcap)
				labels[n++] = *p;
		}
		if (*p != '}')
			return NULL;
		p++;
	}
	labels[n] = '\0';
	if (*p != ' ' || !name[0])
		return NULL;
	return p + 1;
}

static struct stat_op *stat_op_get(struct stat_snap *sn, const char *labels)
{
	char prog[16], vers[16], proc[64], key[96];
	unsigned i;

	if (!stat_label(labels, "program", prog, sizeof(prog)) ||
	    !stat_label(labels, "version", vers, sizeof(vers)) ||
	    !stat_label(labels, "procedure", proc, sizeof(proc)))
		return NULL;
	snprintf(key, sizeof(key), "%s/%s %s", prog, vers, proc);
	for (i = 0; i < sn->sn_nops; i++)
		if (!strcmp(sn->sn_ops[i].so_key, key))
			return &sn->sn_ops[i];
	if (sn->sn_nops == STAT_MAX_OPS)
		return NULL;
	memset(&sn->sn_ops[i], 0, sizeof(sn->sn_ops[i]));
	snprintf(sn->sn_ops[i].so_key, sizeof(sn->sn_ops[i].so_key), "%s", key);
	sn->sn_nops++;
	return &sn->sn_ops[i];
}

static struct stat_xprt *stat_xprt_get(struct stat_snap *sn, const char *labels)
{
	char name[16];
	unsigned i;

	if (!stat_label(labels, "transport", name, sizeof(name)))
		return NULL;
	for (i = 0; i < sn->sn_nxprts; i++)
		if (!strcmp(sn->sn_xprts[i].sx_name, name))
			return &sn->sn_xprts[i];
	if (sn->sn_nxprts == STAT_MAX_XPRTS)
		return NULL;
	memset(&sn->sn_xprts[i], 0, sizeof(sn->sn_xprts[i]));
	snprintf(sn->sn_xprts[i].sx_name, sizeof(sn->sn_xprts[i].sx_name), "%s", name);
	sn->sn_nxprts++;
	return &sn->sn_xprts[i];
}

/* The histogram bucket whose upper bound is @le ("0.000004", "+Inf"), or -1. */
static int stat_bucket_of(const char *le)
{
	double s;
	unsigned k;

	if (!strcmp(le, "+Inf"))
		return SVC_STATS_LAT_FINITE;
	s = strtod(le, NULL);
	for (k = 0; k < SVC_STATS_LAT_FINITE; k++) {
		double b = (double)svc_stats_lat_bound_us(k) / 1e6;

		if (fabs(s - b) <= b * 1e-6)
			return (int)k;
	}
	return -1;
}

int stat_snap_parse(const char *text, struct stat_snap *sn)
{
	static const char lat[] = "rpcrdma_svc_call_duration_seconds";
	const char *line = text;
	unsigned i, k;

	memset(sn, 0, sizeof(*sn));
	while (*line) {
		const char *eol = strchr(line, '\n'), *val;
		char buf[1024], name[128], labels[768];
		size_t len = eol ? (size_t)(eol - line) : strlen(line);
		struct stat_op *op;
		struct stat_xprt *sx;
		uint64_t v;

		if (len && line[0] != '#') {
			if (len >= sizeof(buf))
				return -EINVAL;
			memcpy(buf, line, len);
			buf[len] = '\0';
			val = stat_split(buf, name, sizeof(name), labels, sizeof(labels));
			if (!val)
				return -EINVAL;
			v = strtoull(val, NULL, 10);
			if (!strncmp(name, "rpcrdma_svc_procedure_", 22) ||
			    !strncmp(name, lat, sizeof(lat) - 1)) {
				char le[32];
				int b;

				op = stat_op_get(sn, labels);
				if (!op)
					goto next;
				if (!strcmp(name, "rpcrdma_svc_procedure_calls_total"))
					op->so_calls = v;
				else if (!strcmp(name, "rpcrdma_svc_procedure_received_bytes_total"))
					op->so_bytes_in = v;
				else if (!strcmp(name, "rpcrdma_svc_procedure_sent_bytes_total"))
					op->so_bytes_out = v;
				else if (!strcmp(name, "rpcrdma_svc_call_duration_seconds_count"))
					op->so_replies = v;
				else if (!strcmp(name, "rpcrdma_svc_call_duration_seconds_sum"))
					op->so_lat_sum_s = strtod(val, NULL);
				else if (!strcmp(name, "rpcrdma_svc_call_duration_seconds_bucket") &&
					 stat_label(labels, "le", le, sizeof(le)) &&
					 (b = stat_bucket_of(le)) >= 0) {
					op->so_lat[b] = v; /* cumulative until the end */
					op->so_seen |= 1u << b;
				}
			} else if (!strcmp(name, "rpcrdma_svc_rdma_read_bytes_total")) {
				sn->sn_rdma_read_bytes = v;
			} else if (!strcmp(name, "rpcrdma_svc_rdma_write_bytes_total")) {
				sn->sn_rdma_write_bytes = v;
			} else if ((sx = stat_xprt_get(sn, labels))) {
				if (!strcmp(name, "rpcrdma_svc_calls_total"))
					sx->sx_calls = v;
				else if (!strcmp(name, "rpcrdma_svc_recv_bytes_total"))
					sx->sx_recv_bytes = v;
				else if (!strcmp(name, "rpcrdma_svc_send_bytes_total"))
					sx->sx_send_bytes = v;
				else if (!strcmp(name, "rpcrdma_svc_conns_open"))
					sx->sx_conns_open = v;
			}
		}
next:
		if (!eol)
			break;
		line = eol + 1;
	}
	/* Cumulative bucket counts to per-bucket ones; a bucket without a
	 * sample holds what the one below it holds. */
	for (i = 0; i < sn->sn_nops; i++) {
		uint64_t *l = sn->sn_ops[i].so_lat;

		for (k = 1; k < SVC_STATS_LAT_BUCKETS; k++)
			if (!(sn->sn_ops[i].so_seen & (1u << k)))
				l[k] = l[k - 1];

		for (k = SVC_STATS_LAT_BUCKETS - 1; k > 0; k--)
			l[k] = l[k] >= l[k - 1] ? l[k] - l[k - 1] : 0;
	}
	return 0;
}

uint64_t stat_delta(uint64_t prev, uint64_t cur)
{
	return cur >= prev ? cur - prev : cur;
}

void stat_op_rate(const struct stat_op *prev, const struct stat_op *cur, double secs,
		  struct stat_rate *out)
{
	static const struct stat_op zero;
	uint64_t lat[SVC_STATS_LAT_BUCKETS];
	double sum;
	unsigned k;

	if (!prev || cur->so_calls < prev->so_calls || cur->so_replies < prev->so_replies)
		prev = &zero; /* new row, or the server restarted */
	memset(out, 0, sizeof(*out));
	out->rt_calls_s = (double)(cur->so_calls - prev->so_calls) / secs;
	out->rt_mb_in_s = (double)stat_delta(prev->so_bytes_in, cur->so_bytes_in) / secs / 1e6;
	out->rt_mb_out_s = (double)stat_delta(prev->so_bytes_out, cur->so_bytes_out) / secs / 1e6;
	out->rt_replies = cur->so_replies - prev->so_replies;
	for (k = 0; k < SVC_STATS_LAT_BUCKETS; k++)
		lat[k] = stat_delta(prev->so_lat[k], cur->so_lat[k]);
	out->rt_p50_us = svc_stats_percentile_us(lat, 0.5);
	out->rt_p99_us = svc_stats_percentile_us(lat, 0.99);
	sum = cur->so_lat_sum_s - prev->so_lat_sum_s;
	if (out->rt_replies && sum > 0)
		out->rt_mean_us = sum * 1e6 / (double)out->rt_replies;
}

const struct stat_op *stat_snap_find(const struct stat_snap *sn, const char *key)
{
	unsigned i;

	for (i = 0; i < sn->sn_nops; i++)
		if (!strcmp(sn->sn_ops[i].so_key, key))
			return &sn->sn_ops[i];
	return NULL;
}

static const struct stat_xprt *stat_xprt_find(const struct stat_snap *sn, const char *name)
{
	unsigned i;

	for (i = 0; i < sn->sn_nxprts; i++)
		if (!strcmp(sn->sn_xprts[i].sx_name, name))
			return &sn->sn_xprts[i];
	return NULL;
}

void stat_print_rates(const struct stat_snap *prev, const struct stat_snap *cur, double secs,
		      FILE *f)
{
	unsigned i, shown = 0;

	fprintf(f, "  %-10s %10s %12s %12s %8s\n", "transport", "calls/s", "recv MB/s",
		"send MB/s", "conns");
	for (i = 0; i < cur->sn_nxprts; i++) {
		const struct stat_xprt *c = &cur->sn_xprts[i], *p = stat_xprt_find(prev, c->sx_name);
		static const struct stat_xprt zero;

		if (!p)
			p = &zero;
		fprintf(f, "  %-10s %10.1f %12.3f %12.3f %8llu\n", c->sx_name,
			(double)stat_delta(p->sx_calls, c->sx_calls) / secs,
			(double)stat_delta(p->sx_recv_bytes, c->sx_recv_bytes) / secs / 1e6,
			(double)stat_delta(p->sx_send_bytes, c->sx_send_bytes) / secs / 1e6,
			(unsigned long long)c->sx_conns_open);
	}
	fprintf(f, "  RDMA Read %.3f MB/s, RDMA Write %.3f MB/s\n\n",
		(double)stat_delta(prev->sn_rdma_read_bytes, cur->sn_rdma_read_bytes) / secs / 1e6,
		(double)stat_delta(prev->sn_rdma_write_bytes, cur->sn_rdma_write_bytes) / secs / 1e6);
	fprintf(f, "  %-24s %10s %10s %10s %10s %10s %10s\n", "program/version proc", "calls/s",
		"MB/s in", "MB/s out", "p50_us", "p99_us", "mean_us");
	for (i = 0; i < cur->sn_nops; i++) {
		const struct stat_op *c = &cur->sn_ops[i];
		struct stat_rate r;

		stat_op_rate(stat_snap_find(prev, c->so_key), c, secs, &r);
		if (r.rt_calls_s <= 0 && !r.rt_replies)
			continue;
		fprintf(f, "  %-24s %10.1f %10.3f %10.3f %10.1f %10.1f %10.1f\n", c->so_key,
			r.rt_calls_s, r.rt_mb_in_s, r.rt_mb_out_s, r.rt_p50_us, r.rt_p99_us,
			r.rt_mean_us);
		shown++;
	}
	if (!shown)
		fprintf(f, "  (no calls in the interval)\n");
}
