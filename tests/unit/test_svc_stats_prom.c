// SPDX-License-Identifier: MIT
/*
 * test_svc_stats_prom.c - the Prometheus text exposition format (version
 * 0.0.4, as specified in Prometheus' "Exposition formats" document) of the
 * statistics, checked line by line by a strict parser written here from
 * that specification, then its values against figures worked out by hand;
 * and the HTTP endpoint (libmicrohttpd) serving the same text.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include <rpcrdma/nfs3.h>

#include "svc/svc_internal.h"
#include "svc/svc_stats.h"

/* ---------- a strict parser of the text format ---------- */

/* In test_parser_refuses' children a refusal ends the process with
 * status 1; elsewhere it fails the test. */
static bool p_child;
#define P_ASSERT(x) do {						\
		if (!(x)) {						\
			if (p_child)					\
				_exit(1);				\
			fail_msg("exposition format: %s (%s:%d)", #x, __FILE__, __LINE__); \
		}							\
	} while (0)

#define P_MAX_SAMPLES 4096
#define P_MAX_FAMILIES 128
#define P_MAX_LABELS 8

struct p_label {
	char l_name[64];
	char l_value[128]; /* unescaped */
};

struct p_sample {
	char s_name[128];
	struct p_label s_labels[P_MAX_LABELS];
	unsigned s_nlabels;
	double s_value;
	int s_family;
};

struct p_family {
	char f_name[128];
	char f_type[16];
	bool f_help, f_typed, f_has_samples;
};

struct p_doc {
	struct p_sample d_s[P_MAX_SAMPLES];
	unsigned d_n;
	struct p_family d_f[P_MAX_FAMILIES];
	unsigned d_nf;
	int d_cur; /* family whose samples may follow, -1: none */
};

static bool p_name_start(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':';
}

static bool p_name_char(char c)
{
	return p_name_start(c) || (c >= '0' && c <= '9');
}

/* A metric name at *@p (label names: no ':'). */
static void p_name(const char **p, char *out, size_t cap, bool label)
{
	size_t n = 0;

	P_ASSERT(p_name_start(**p) && !(label && **p == ':'));
	while (p_name_char(**p) && !(label && **p == ':')) {
		P_ASSERT(n + 1 < cap);
		out[n++] = *(*p)++;
	}
	out[n] = '\0';
}

/* A float as the format allows: Go's ParseFloat syntax, +Inf, -Inf, NaN. */
static double p_value(const char **p)
{
	char *end;
	double v;

	if (!strncmp(*p, "+Inf", 4)) {
		*p += 4;
		return INFINITY;
	}
	if (!strncmp(*p, "-Inf", 4)) {
		*p += 4;
		return -INFINITY;
	}
	if (!strncmp(*p, "NaN", 3)) {
		*p += 3;
		return NAN;
	}
	P_ASSERT((**p >= '0' && **p <= '9') || **p == '-' || **p == '+' || **p == '.');
	errno = 0;
	v = strtod(*p, &end);
	P_ASSERT(end != *p && errno == 0);
	*p = end;
	return v;
}

static int p_family_of(struct p_doc *d, const char *name)
{
	unsigned i;

	for (i = 0; i < d->d_nf; i++)
		if (!strcmp(d->d_f[i].f_name, name))
			return (int)i;
	return -1;
}

/* "# HELP name text" or "# TYPE name type"; other comments are refused. */
static void p_comment(struct p_doc *d, const char *p)
{
	bool help = !strncmp(p, "# HELP ", 7);
	char name[128];
	int fi;

	P_ASSERT(help || !strncmp(p, "# TYPE ", 7));
	p += 7;
	p_name(&p, name, sizeof(name), false);
	P_ASSERT((*p++) == (' '));
	fi = p_family_of(d, name);
	if (fi < 0) {
		P_ASSERT(d->d_nf < P_MAX_FAMILIES);
		fi = (int)d->d_nf++;
		snprintf(d->d_f[fi].f_name, sizeof(d->d_f[fi].f_name), "%s", name);
	} else {
		/* Only this family's HELP/TYPE pair may come back, before samples. */
		P_ASSERT((fi) == (d->d_cur));
		P_ASSERT(!(d->d_f[fi].f_has_samples));
	}
	if (help) {
		P_ASSERT(!(d->d_f[fi].f_help));
		d->d_f[fi].f_help = true;
		/* Escapes in HELP: \\ and \n only. */
		for (; *p; p++)
			if (*p == '\\') {
				p++;
				P_ASSERT(*p == '\\' || *p == 'n');
			}
	} else {
		P_ASSERT(!(d->d_f[fi].f_typed));
		P_ASSERT(!strcmp(p, "counter") || !strcmp(p, "gauge") ||
			    !strcmp(p, "histogram") || !strcmp(p, "summary") ||
			    !strcmp(p, "untyped"));
		snprintf(d->d_f[fi].f_type, sizeof(d->d_f[fi].f_type), "%s", p);
		d->d_f[fi].f_typed = true;
	}
	d->d_cur = fi;
}

static bool p_suffix(const char *name, const char *fam, const char *suffix)
{
	size_t n = strlen(fam);

	return !strncmp(name, fam, n) && !strcmp(name + n, suffix);
}

static void p_sample(struct p_doc *d, const char *p)
{
	struct p_sample *s;
	struct p_family *f;
	unsigned i;

	P_ASSERT(d->d_n < P_MAX_SAMPLES);
	s = &d->d_s[d->d_n++];
	memset(s, 0, sizeof(*s));
	p_name(&p, s->s_name, sizeof(s->s_name), false);
	if (*p == '{') {
		p++;
		while (*p != '}') {
			struct p_label *l;
			size_t n = 0;

			P_ASSERT(s->s_nlabels < P_MAX_LABELS);
			l = &s->s_labels[s->s_nlabels++];
			p_name(&p, l->l_name, sizeof(l->l_name), true);
			P_ASSERT(!(l->l_name[0] == '_' && l->l_name[1] == '_')); /* reserved */
			for (i = 0; i + 1 < s->s_nlabels; i++)
				P_ASSERT(strcmp(s->s_labels[i].l_name, l->l_name));
			P_ASSERT((*p++) == ('='));
			P_ASSERT((*p++) == ('"'));
			while (*p != '"') {
				char c = *p++;

				P_ASSERT(c != '\0' && c != '\n');
				if (c == '\\') {
					c = *p++;
					P_ASSERT(c == '\\' || c == '"' || c == 'n');
					if (c == 'n')
						c = '\n';
				}
				P_ASSERT(n + 1 < sizeof(l->l_value));
				l->l_value[n++] = c;
			}
			l->l_value[n] = '\0';
			p++;
			if (*p == ',')
				p++;
			else
				P_ASSERT((*p) == ('}'));
		}
		p++;
	}
	P_ASSERT((*p++) == (' '));
	s->s_value = p_value(&p);
	P_ASSERT((*p) == ('\0')); /* no timestamp, nothing after */

	/* The sample belongs to the family just declared. */
	P_ASSERT(d->d_cur >= 0);
	f = &d->d_f[d->d_cur];
	P_ASSERT(f->f_typed);
	if (!strcmp(f->f_type, "histogram")) {
		P_ASSERT(p_suffix(s->s_name, f->f_name, "_bucket") ||
			    p_suffix(s->s_name, f->f_name, "_sum") ||
			    p_suffix(s->s_name, f->f_name, "_count"));
	} else {
		P_ASSERT(!strcmp(s->s_name, f->f_name));
	}
	if (!strcmp(f->f_type, "counter")) {
		/* Prometheus naming: counters end in _total, never go below 0. */
		P_ASSERT(strlen(f->f_name) > 6 &&
			    !strcmp(f->f_name + strlen(f->f_name) - 6, "_total"));
		P_ASSERT(s->s_value >= 0);
	}
	f->f_has_samples = true;
	s->s_family = d->d_cur;
}

static const char *p_label(const struct p_sample *s, const char *name)
{
	unsigned i;

	for (i = 0; i < s->s_nlabels; i++)
		if (!strcmp(s->s_labels[i].l_name, name))
			return s->s_labels[i].l_value;
	return NULL;
}

/* Same labels, "le" ignored. */
static bool p_same_series(const struct p_sample *a, const struct p_sample *b)
{
	unsigned i, na = 0, nb = 0;

	for (i = 0; i < a->s_nlabels; i++) {
		const char *v;

		if (!strcmp(a->s_labels[i].l_name, "le"))
			continue;
		na++;
		v = p_label(b, a->s_labels[i].l_name);
		if (!v || strcmp(v, a->s_labels[i].l_value))
			return false;
	}
	for (i = 0; i < b->s_nlabels; i++)
		nb += strcmp(b->s_labels[i].l_name, "le") != 0;
	return na == nb;
}

/* Histograms: per series, buckets with increasing le ending at +Inf and
 * non-decreasing counts, then _sum, then _count equal to the +Inf bucket. */
static void p_check_histograms(struct p_doc *d)
{
	unsigned i = 0;

	while (i < d->d_n) {
		const struct p_family *f = &d->d_f[d->d_s[i].s_family];
		double last_le = -INFINITY, last = 0;
		const char *le;
		unsigned j;
		char want[160];

		if (strcmp(f->f_type, "histogram")) {
			i++;
			continue;
		}
		snprintf(want, sizeof(want), "%s_bucket", f->f_name);
		for (j = i; j < d->d_n && !strcmp(d->d_s[j].s_name, want) &&
			    p_same_series(&d->d_s[i], &d->d_s[j]); j++) {
			const char *q;

			le = p_label(&d->d_s[j], "le");
			P_ASSERT((le) != NULL);
			q = le;
			{
				double v = p_value(&q);

				P_ASSERT((*q) == ('\0'));
				P_ASSERT(v > last_le);
				last_le = v;
			}
			P_ASSERT(d->d_s[j].s_value >= last);
			last = d->d_s[j].s_value;
		}
		P_ASSERT(j > i);
		P_ASSERT(isinf(last_le) && last_le > 0);
		snprintf(want, sizeof(want), "%s_sum", f->f_name);
		P_ASSERT(j + 1 < d->d_n);
		P_ASSERT(!strcmp(d->d_s[j].s_name, want));
		P_ASSERT(p_same_series(&d->d_s[i], &d->d_s[j]));
		snprintf(want, sizeof(want), "%s_count", f->f_name);
		P_ASSERT(!strcmp(d->d_s[j + 1].s_name, want));
		P_ASSERT(p_same_series(&d->d_s[i], &d->d_s[j + 1]));
		P_ASSERT(d->d_s[j + 1].s_value == last);
		i = j + 2;
	}
}

static void p_parse(struct p_doc *d, char *text)
{
	char *line = text, *nl;
	unsigned i, j;

	memset(d, 0, sizeof(*d));
	d->d_cur = -1;
	P_ASSERT(*text != '\0');
	while (*line) {
		nl = strchr(line, '\n');
		P_ASSERT((nl) != NULL); /* every line ends with \n */
		*nl = '\0';
		P_ASSERT(*line != '\0'); /* no empty lines */
		if (*line == '#')
			p_comment(d, line);
		else
			p_sample(d, line);
		line = nl + 1;
	}
	/* Each family typed and with samples; no series twice. */
	for (i = 0; i < d->d_nf; i++)
		P_ASSERT(d->d_f[i].f_typed && d->d_f[i].f_help);
	for (i = 0; i < d->d_n; i++)
		for (j = i + 1; j < d->d_n; j++) {
			const struct p_sample *a = &d->d_s[i], *b = &d->d_s[j];

			P_ASSERT(!(!strcmp(a->s_name, b->s_name) && p_same_series(a, b) &&
				     a->s_nlabels == b->s_nlabels &&
				     (!p_label(a, "le") ||
				      !strcmp(p_label(a, "le"), p_label(b, "le")))));
		}
	p_check_histograms(d);
}

/* The value of sample @name whose labels include every "k=v" given. */
static double p_get(const struct p_doc *d, const char *name, ...)
{
	unsigned i, hits = 0;
	double v = NAN;

	for (i = 0; i < d->d_n; i++) {
		const struct p_sample *s = &d->d_s[i];
		const char *kv;
		bool ok = !strcmp(s->s_name, name);
		va_list ap;

		va_start(ap, name);
		while (ok && (kv = va_arg(ap, const char *))) {
			const char *eq = strchr(kv, '='), *have;
			char k[64];

			snprintf(k, sizeof(k), "%.*s", (int)(eq - kv), kv);
			have = p_label(s, k);
			ok = have && !strcmp(have, eq + 1);
		}
		va_end(ap);
		if (ok) {
			v = s->s_value;
			hits++;
		}
	}
	P_ASSERT((hits) == (1));
	return v;
}

/* ---------- the statistics under test ---------- */

static const char *const weird_names[] = { "we\"ird\\name\nx" };

static struct rpcrdma_svc *make_svc(struct svc_conn *conn)
{
	struct rpcrdma_svc *svc = calloc(1, sizeof(*svc));
	const char *const *names;
	uint32_t n;

	assert_non_null(svc);
	svc->sv_progs[0] = (struct svc_program){ .sp_prog = 100003, .sp_vers = 3 };
	svc->sv_progs[1] = (struct svc_program){ .sp_prog = 400000, .sp_vers = 1 };
	svc->sv_nprogs = 2;
	atomic_store(&svc->sv_ct.calls[SVC_XPRT_RDMA], 5);
	atomic_store(&svc->sv_ct.calls[SVC_XPRT_TCP], 2);
	atomic_store(&svc->sv_ct.conns_open[SVC_XPRT_RDMA], 1);
	assert_int_equal(svc_stats_create(svc), 0);
	names = rpcrdma_nfs3_proc_names(&n);
	assert_int_equal(n, 22);
	assert_int_equal(rpcrdma_svc_set_proc_names(svc, 100003, 3, names, n,
						    rpcrdma_nfs3_stat_name), 0);
	assert_int_equal(rpcrdma_svc_set_proc_names(svc, 400000, 1, weird_names, 1, NULL), 0);
	/* READ twice: 3 us (bucket le 4 us) and 1.5 ms (bucket le 2.048 ms). */
	assert_true(svc_stats_record(svc->sv_stats, 0, 6, true, 0, 100, 4196, 3000, true, 0));
	assert_true(svc_stats_record(svc->sv_stats, 0, 6, true, 0, 100, 4196, 1500000, true, 0));
	/* LOOKUP: NFS3ERR_NOENT in 0.5 us. */
	assert_true(svc_stats_record(svc->sv_stats, 0, 3, true, 0, 120, 28, 500, true, 2));
	/* Program 400000 procedure 0: GARBAGE_ARGS. */
	assert_true(svc_stats_record(svc->sv_stats, 1, 0, true, RPCRDMA_SVC_GARBAGE_ARGS, 40,
				     24, 0, false, 0));
	assert_true(svc_stats_count_call(svc->sv_stats, SVC_STATS_UNMATCHED, 9));
	conn->sx_svc = svc;
	conn->sx_id_num = 12;
	conn->sx_credits = 64;
	conn->sx_stats = svc_stats_conn_open(conn);
	assert_non_null(conn->sx_stats);
	conn->sx_stats->sn_peer.ss_family = AF_INET6;
	assert_int_equal(inet_pton(AF_INET6, "2001:db8::2",
				   &((struct sockaddr_in6 *)&conn->sx_stats->sn_peer)->sin6_addr), 1);
	atomic_store(&conn->sx_stats->sn_rdma_errors, 3);
	return svc;
}

static void free_svc(struct rpcrdma_svc *svc, struct svc_conn *conn)
{
	svc_stats_conn_close(svc, conn->sx_stats);
	svc_stats_destroy(svc);
	free(svc);
}

static char *render(struct rpcrdma_svc *svc)
{
	char *out = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&out, &len);

	assert_non_null(m);
	assert_int_equal(rpcrdma_svc_stats_write(svc, RPCRDMA_SVC_STATS_PROMETHEUS, m), 0);
	fclose(m);
	return out;
}

static void check_values(const struct p_doc *d)
{
	const char *read[] = { "program=100003", "version=3", "procedure=READ" };
#define READ_LABELS read[0], read[1], read[2]

	/* Counted per transport: one sample each, the server's is their sum. */
	assert_true(p_get(d, "rpcrdma_svc_calls_total", "transport=rdma", NULL) == 5);
	assert_true(p_get(d, "rpcrdma_svc_calls_total", "transport=tcp", NULL) == 2);
	assert_true(p_get(d, "rpcrdma_svc_conns_open", "transport=rdma", NULL) == 1);
	assert_true(p_get(d, "rpcrdma_svc_conns_open", "transport=tcp", NULL) == 0);
	/* Every counter of the list is a family: one sample, or one per
	 * transport; gauges without _total. */
	for (unsigned i = 0; i < SVC_CT_N; i++) {
		const struct svc_ct_desc *cd = &svc_ct_descs[i];
		char name[96];

		snprintf(name, sizeof(name), "rpcrdma_svc_%s%s", cd->cd_name,
			 cd->cd_gauge ? "" : "_total");
		if (cd->cd_by_xprt) {
			assert_false(isnan(p_get(d, name, "transport=rdma", NULL)));
			assert_false(isnan(p_get(d, name, "transport=tcp", NULL)));
		} else {
			assert_false(isnan(p_get(d, name, NULL)));
		}
	}
	assert_true(p_get(d, "rpcrdma_svc_procedure_calls_total", READ_LABELS, NULL) == 2);
	assert_true(p_get(d, "rpcrdma_svc_procedure_replies_total", READ_LABELS,
			  "outcome=SUCCESS", NULL) == 2);
	assert_true(p_get(d, "rpcrdma_svc_procedure_received_bytes_total", READ_LABELS, NULL) == 200);
	assert_true(p_get(d, "rpcrdma_svc_procedure_sent_bytes_total", READ_LABELS, NULL) == 8392);
	/* Cumulative: 0 up to 2 us, 1 from 4 us to 1.024 ms, 2 from 2.048 ms. */
	assert_true(p_get(d, "rpcrdma_svc_call_duration_seconds_bucket", READ_LABELS,
			  "le=0.000002", NULL) == 0);
	assert_true(p_get(d, "rpcrdma_svc_call_duration_seconds_bucket", READ_LABELS,
			  "le=0.000004", NULL) == 1);
	assert_true(p_get(d, "rpcrdma_svc_call_duration_seconds_bucket", READ_LABELS,
			  "le=0.001024", NULL) == 1);
	assert_true(p_get(d, "rpcrdma_svc_call_duration_seconds_bucket", READ_LABELS,
			  "le=0.002048", NULL) == 2);
	assert_true(p_get(d, "rpcrdma_svc_call_duration_seconds_bucket", READ_LABELS,
			  "le=+Inf", NULL) == 2);
	assert_true(p_get(d, "rpcrdma_svc_call_duration_seconds_count", READ_LABELS, NULL) == 2);
	assert_float_equal(p_get(d, "rpcrdma_svc_call_duration_seconds_sum", READ_LABELS, NULL),
			   0.001503, 1e-12);
	assert_true(p_get(d, "rpcrdma_svc_procedure_status_total", "procedure=LOOKUP",
			  "status=NFS3ERR_NOENT", NULL) == 1);
	assert_true(p_get(d, "rpcrdma_svc_procedure_status_total", READ_LABELS,
			  "status=NFS3_OK", NULL) == 2);
	/* The escaped name comes back whole. */
	assert_true(p_get(d, "rpcrdma_svc_procedure_replies_total", "program=400000",
			  "procedure=we\"ird\\name\nx", "outcome=GARBAGE_ARGS", NULL) == 1);
	assert_true(p_get(d, "rpcrdma_svc_procedure_calls_total", "program=0",
			  "procedure=other", NULL) == 1);
	assert_true(p_get(d, "rpcrdma_svc_connection_credits", "connection=12",
			  "peer=2001:db8::2", NULL) == 64);
	assert_true(p_get(d, "rpcrdma_svc_connection_rdma_errors_total", "connection=12",
			  NULL) == 3);
#undef READ_LABELS
}

static void test_exposition_format(void **state)
{
	struct svc_conn conn = { 0 };
	struct rpcrdma_svc *svc = make_svc(&conn);
	struct p_doc *d = malloc(sizeof(*d));
	char *text = render(svc);

	(void)state;
	assert_non_null(d);
	p_parse(d, text);
	check_values(d);
	free(text);
	free(d);
	free_svc(svc, &conn);
}

/* The parser itself refuses what the format forbids. */
static void test_parser_refuses(void **state)
{
	(void)state;
	/* Run in a child each: a failed assertion there is the pass here. */
	static const char *const bad[] = {
		"x_total 1\n",                                   /* no TYPE */
		"# TYPE x_total counter\n# HELP x_total h\nx_total -1\n", /* negative counter */
		"# HELP x h\n# TYPE x counter\nx 1\n",           /* counter without _total */
		"# HELP x h\n# TYPE x gauge\nx{a=\"\\t\"} 1\n",  /* bad escape */
		"# HELP x h\n# TYPE x gauge\nx 1 123\n",         /* timestamp */
		"# HELP x h\n# TYPE x gauge\nx 1",               /* no final newline */
		"# HELP h h\n# TYPE h histogram\nh_bucket{le=\"1\"} 2\nh_bucket{le=\"+Inf\"} 1\n"
		"h_sum 1\nh_count 1\n",                          /* decreasing buckets */
		"# HELP h h\n# TYPE h histogram\nh_bucket{le=\"1\"} 1\nh_bucket{le=\"+Inf\"} 2\n"
		"h_sum 1\nh_count 1\n",                          /* count != +Inf */
		"# HELP x h\n# TYPE x gauge\n# HELP y h\n# TYPE y gauge\ny 1\nx 1\n", /* not contiguous */
	};
	unsigned i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		pid_t pid = fork();
		int st;

		assert_true(pid >= 0);
		if (pid == 0) {
			struct p_doc *d = malloc(sizeof(*d));
			char *t = strdup(bad[i]);

			p_child = true;
			p_parse(d, t);
			_exit(0);
		}
		assert_int_equal(waitpid(pid, &st, 0), pid);
		if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
			fail_msg("the parser accepted bad input %u: %s", i, bad[i]);
	}
}

/* GET /metrics over TCP: the same text, HTTP 200 and its content type. */
static void test_http_endpoint(void **state)
{
	struct svc_conn conn = { 0 };
	struct rpcrdma_svc *svc = make_svc(&conn);
	struct rpcrdma_svc_metrics *mt = NULL;
	struct sockaddr_in sa = { .sin_family = AF_INET };
	char spec[32], *buf, *body, *want;
	size_t len = 0, cap = 1 << 20;
	ssize_t n;
	unsigned port;
	int fd, rc = -1;

	(void)state;
	assert_int_equal(rpcrdma_svc_metrics_start(svc, "127.0.0.1", &mt), -EINVAL);
	assert_int_equal(rpcrdma_svc_metrics_start(svc, "127.0.0.1:0", &mt), -EINVAL);
	assert_int_equal(rpcrdma_svc_metrics_start(svc, "[::1:9100", &mt), -EINVAL);
	for (port = 20000 + (unsigned)getpid() % 20000; rc && port < 65000; port += 7) {
		snprintf(spec, sizeof(spec), "127.0.0.1:%u", port);
		rc = rpcrdma_svc_metrics_start(svc, spec, &mt);
		assert_true(rc == 0 || rc == -EADDRINUSE);
	}
	assert_int_equal(rc, 0);
	sa.sin_port = htons((uint16_t)(port - 7));
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fd = socket(AF_INET, SOCK_STREAM, 0);
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	{
		static const char get[] = "GET /metrics HTTP/1.0\r\nHost: x\r\n\r\n";

		assert_int_equal(send(fd, get, sizeof(get) - 1, 0), (ssize_t)sizeof(get) - 1);
	}
	buf = malloc(cap);
	assert_non_null(buf);
	while ((n = recv(fd, buf + len, cap - 1 - len, 0)) > 0)
		len += (size_t)n;
	buf[len] = '\0';
	close(fd);
	assert_true(!strncmp(buf, "HTTP/1.0 200", 12) || !strncmp(buf, "HTTP/1.1 200", 12));
	assert_non_null(strcasestr(buf, "\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\n"));
	body = strstr(buf, "\r\n\r\n");
	assert_non_null(body);
	body += 4;
	want = render(svc);
	assert_string_equal(body, want);
	free(want);
	/* Another method: 405 (RFC 9110 15.5.6); another path: 404 (15.5.5);
	 * HEAD is GET without the body (9.3.2). */
	{
		static const char *const reqs[] = {
			"POST /metrics HTTP/1.0\r\nHost: x\r\nContent-Length: 0\r\n\r\n",
			"GET /metric HTTP/1.0\r\nHost: x\r\n\r\n",
			"HEAD /metrics HTTP/1.0\r\nHost: x\r\n\r\n",
		};
		static const char *const codes[] = { " 405", " 404", " 200" };

		for (unsigned i = 0; i < 3; i++) {
			fd = socket(AF_INET, SOCK_STREAM, 0);
			assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
			assert_int_equal(send(fd, reqs[i], strlen(reqs[i]), 0),
					 (ssize_t)strlen(reqs[i]));
			len = 0;
			while ((n = recv(fd, buf + len, cap - 1 - len, 0)) > 0)
				len += (size_t)n;
			buf[len] = '\0';
			close(fd);
			assert_true(len > 12 && !strncmp(buf, "HTTP/1.", 7));
			assert_memory_equal(buf + 8, codes[i], 4);
			if (i == 2) { /* no body after the header */
				body = strstr(buf, "\r\n\r\n");
				assert_non_null(body);
				assert_string_equal(body + 4, "");
			}
		}
	}
	free(buf);
	rpcrdma_svc_metrics_stop(mt);
	free_svc(svc, &conn);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exposition_format),
		cmocka_unit_test(test_parser_refuses),
		cmocka_unit_test(test_http_endpoint),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
