// SPDX-License-Identifier: MIT
/*
 * nfsd_opts.c - rpcrdma-nfsd's values from its option table: parsing and
 * range checks shared by the command line and the configuration file,
 * which one wins, the problems told, and --help generated from the table.
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli/cli.h"
#include "common/version.h"
#include "nfsd_opts.h"

void nfsd_conf_init(struct nfsd_conf *cf, FILE *log)
{
	memset(cf, 0, sizeof(*cf));
	cf->nc_log = log;
}

static void val_clear(struct nfsd_val *v)
{
	free(v->nv_s);
	for (unsigned i = 0; i < v->nv_n; i++)
		free(v->nv_list[i]);
	free(v->nv_list);
	memset(v, 0, sizeof(*v));
}

void nfsd_conf_free(struct nfsd_conf *cf)
{
	for (unsigned i = 0; i < NFSD_NOPTS; i++)
		val_clear(&cf->nc_v[i]);
}

void nfsd_problem(struct nfsd_conf *cf, const char *file, unsigned line,
		  const char *fmt, ...)
{
	va_list ap;

	cf->nc_problems++;
	if (!cf->nc_log)
		return;
	if (!file)
		fprintf(cf->nc_log, NFSD_PROG ": ");
	else if (line)
		fprintf(cf->nc_log, "%s:%u: ", file, line);
	else
		fprintf(cf->nc_log, "%s: ", file);
	va_start(ap, fmt);
	vfprintf(cf->nc_log, fmt, ap);
	va_end(ap);
	fputc('\n', cf->nc_log);
}

/* a size as the table's ranges show it: 64M, 64K, 1G */
static const char *size_text(uint64_t v, char *buf, size_t len)
{
	static const char units[] = "KMGT";
	int u = -1;

	while (u < 3 && v && !(v & 1023)) {
		v >>= 10;
		u++;
	}
	if (u < 0)
		snprintf(buf, len, "%llu", (unsigned long long)v);
	else
		snprintf(buf, len, "%llu%c", (unsigned long long)v, units[u]);
	return buf;
}

const char *nfsd_opt_range(const struct nfsd_opt *o, char *buf, size_t len)
{
	char sz[32];

	buf[0] = '\0';
	switch (o->no_type) {
	case NFSD_UINT:
		snprintf(buf, len, "%s%llu..%llu", o->no_zero ? "0, or " : "",
			 (unsigned long long)o->no_min, (unsigned long long)o->no_max);
		break;
	case NFSD_SIZE:
		snprintf(buf, len, "%sat least %s", o->no_zero ? "0, or " : "",
			 size_text(o->no_min, sz, sizeof(sz)));
		break;
	case NFSD_CHOICE: {
		size_t n = 0;

		for (const char *c = o->no_choices; *c && n + 3 < len; c++) {
			if (*c == ',') {
				buf[n++] = ',';
				buf[n++] = ' ';
			} else {
				buf[n++] = *c;
			}
		}
		buf[n] = '\0';
		break;
	}
	case NFSD_STR:
	case NFSD_LIST:
		snprintf(buf, len, "%s", o->no_range ? o->no_range : "");
		break;
	case NFSD_COUNT:
		if (o->no_key)
			snprintf(buf, len, "%llu..%llu", (unsigned long long)o->no_min,
				 (unsigned long long)o->no_max);
		break;
	case NFSD_FLAG:
		break;
	}
	return buf;
}

const struct nfsd_opt *nfsd_opt_find_key(const char *section, const char *key,
					 const struct nfsd_opt **elsewhere)
{
	if (elsewhere)
		*elsewhere = NULL;
	for (unsigned i = 0; i < NFSD_NOPTS; i++) {
		const struct nfsd_opt *o = &nfsd_opts[i];

		if (!o->no_key || strcmp(o->no_key, key))
			continue;
		if (section && !strcmp(o->no_section, section))
			return o;
		if (elsewhere)
			*elsewhere = o;
	}
	return NULL;
}

/* SIZE: a number of bytes with an optional K, M, G or T suffix (binary). */
static int parse_size(const char *s, uint64_t *out)
{
	unsigned long long v;
	unsigned shift = 0;
	char *end;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s)
		return -EINVAL;
	switch (*end) {
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	case 't': case 'T': shift = 40; end++; break;
	default: break;
	}
	if (*end == 'i' && shift)
		end++;
	if (*end == 'B' || *end == 'b')
		end++;
	if (*end || v > (UINT64_MAX >> shift))
		return -EINVAL;
	*out = (uint64_t)v << shift;
	return 0;
}

static int parse_bool(const char *s, uint64_t *out)
{
	static const char *const yes[] = { "yes", "y", "true", "on", "1" };
	static const char *const no[] = { "no", "n", "false", "off", "0" };

	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		if (!strcasecmp(s, yes[i]))
			return *out = 1, 0;
		if (!strcasecmp(s, no[i]))
			return *out = 0, 0;
	}
	return -EINVAL;
}

static bool choice_ok(const char *choices, const char *v)
{
	size_t n = strlen(v);

	for (const char *c = choices; *c; ) {
		size_t m = strcspn(c, ",");

		if (m == n && !strncmp(c, v, n))
			return true;
		c += m + (c[m] == ',');
	}
	return false;
}

/* how a problem names the option: "--credits" or "credits" in the file */
static void tell(struct nfsd_conf *cf, const struct nfsd_opt *o, enum nfsd_from from,
		 const char *file, unsigned line, const char *v, const char *what)
{
	if (from == NFSD_FROM_CMDLINE)
		nfsd_problem(cf, NULL, 0, "--%s: %s%s%s", o->no_long, v ? v : "",
			     v ? " " : "", what);
	else
		nfsd_problem(cf, file, line, "%s: %s%s%s", o->no_key, v ? v : "",
			     v ? " " : "", what);
}

/*
 * parse_value - @v for @o into @out (a fresh slot).  Return 0, or
 * -EINVAL with the problem told.
 */
static int parse_value(struct nfsd_conf *cf, const struct nfsd_opt *o, const char *v,
		       enum nfsd_from from, const char *file, unsigned line,
		       struct nfsd_val *out)
{
	char range[128], what[256], quoted[160];
	const char *why = NULL;
	uint64_t u;

	nfsd_opt_range(o, range, sizeof(range));
	snprintf(quoted, sizeof(quoted), "'%.150s'", v ? v : "");
	/* only a flag (--no-X, "X = yes") or a count (-v) stands alone */
	if (!v && o->no_type != NFSD_FLAG && o->no_type != NFSD_COUNT) {
		tell(cf, o, from, file, line, quoted, "needs a value");
		return -EINVAL;
	}
	switch (o->no_type) {
	case NFSD_FLAG:
		if (!v) {
			out->nv_u = o->no_value;
			return 0;
		}
		if (parse_bool(v, &u)) {
			tell(cf, o, from, file, line, quoted, "is not yes or no");
			return -EINVAL;
		}
		out->nv_u = u;
		return 0;
	case NFSD_COUNT:
		if (!v) {
			out->nv_u++;
			return 0;
		}
		__attribute__((fallthrough)); /* the file's number */
	case NFSD_UINT:
		if (cli_parse_u64(v, &u)) { /* too large: not a number either */
			snprintf(what, sizeof(what), "is not a number (range %s)", range);
			tell(cf, o, from, file, line, quoted, what);
			return -EINVAL;
		}
		if ((u < o->no_min || u > o->no_max) && !(o->no_zero && u == 0)) {
			snprintf(what, sizeof(what), "is out of range %s", range);
			tell(cf, o, from, file, line, v, what);
			return -EINVAL;
		}
		out->nv_u = u;
		return 0;
	case NFSD_SIZE:
		if (parse_size(v, &u)) {
			snprintf(what, sizeof(what), "is not a size (e.g. 512M, 4G; %s)", range);
			tell(cf, o, from, file, line, quoted, what);
			return -EINVAL;
		}
		if (u < o->no_min && !(o->no_zero && u == 0)) {
			snprintf(what, sizeof(what), "is out of range: %s", range);
			tell(cf, o, from, file, line, v, what);
			return -EINVAL;
		}
		out->nv_u = u;
		return 0;
	case NFSD_CHOICE:
		if (!choice_ok(o->no_choices, v)) {
			snprintf(what, sizeof(what), "is not one of %s", range);
			tell(cf, o, from, file, line, quoted, what);
			return -EINVAL;
		}
		break;
	case NFSD_STR:
	case NFSD_LIST:
		if (strlen(v) < o->no_min || strlen(v) > o->no_max) {
			snprintf(what, sizeof(what), "is not %llu..%llu bytes long (%s)",
				 (unsigned long long)o->no_min,
				 (unsigned long long)o->no_max, range);
			tell(cf, o, from, file, line, quoted, what);
			return -EINVAL;
		}
		if (o->no_check && o->no_check(v, &why)) {
			snprintf(what, sizeof(what), "%s", why);
			tell(cf, o, from, file, line, quoted, what);
			return -EINVAL;
		}
		break;
	}
	out->nv_s = strdup(v);
	if (!out->nv_s) {
		nfsd_problem(cf, NULL, 0, "out of memory");
		return -ENOMEM;
	}
	return 0;
}

static int list_add(struct nfsd_conf *cf, struct nfsd_val *slot, const struct nfsd_opt *o,
		    char *s, enum nfsd_from from, const char *file, unsigned line)
{
	char **n;

	if (slot->nv_n >= o->no_max) {
		tell(cf, o, from, file, line, NULL, "too many (at most 64)");
		free(s);
		return -EINVAL;
	}
	n = realloc(slot->nv_list, (slot->nv_n + 1) * sizeof(*n));
	if (!n) {
		free(s);
		return -ENOMEM;
	}
	slot->nv_list = n;
	n[slot->nv_n++] = s;
	return 0;
}

/* a list option's value: blank-separated words in the file, one word on
 * the command line; each checked */
static int set_list(struct nfsd_conf *cf, const struct nfsd_opt *o, const char *v,
		    enum nfsd_from from, const char *file, unsigned line, bool take)
{
	struct nfsd_val *slot = &cf->nc_v[o->no_slot];
	char word[1024];
	int err = 0;

	if (take && slot->nv_from != from) {
		val_clear(slot); /* the command line replaces the file's list */
		slot->nv_from = from;
	}
	while (*v) {
		struct nfsd_val one = { 0 };
		size_t n;

		v += strspn(v, " \t");
		n = from == NFSD_FROM_FILE ? strcspn(v, " \t") : strlen(v);
		if (!n)
			break;
		snprintf(word, sizeof(word), "%.*s", (int)n, v);
		v += n;
		if (parse_value(cf, o, word, from, file, line, &one)) {
			err = -EINVAL;
			continue;
		}
		if (take && list_add(cf, slot, o, one.nv_s, from, file, line))
			err = -EINVAL;
		else if (!take)
			free(one.nv_s);
	}
	if (!err && take && !slot->nv_n) {
		tell(cf, o, from, file, line, NULL, "is empty");
		err = -EINVAL;
	}
	slot->nv_line = line;
	return err;
}

int nfsd_opt_set(struct nfsd_conf *cf, const struct nfsd_opt *o, const char *v,
		 enum nfsd_from from, const char *file, unsigned line)
{
	struct nfsd_val *slot = &cf->nc_v[o->no_slot];
	struct nfsd_val nv = { 0 };
	bool take = true;

	/* the command line wins; --export and --exports are one choice */
	if (from == NFSD_FROM_FILE) {
		enum nfsd_id other = o->no_slot == NFSD_EXPORT ? NFSD_EXPORTS :
				     o->no_slot == NFSD_EXPORTS ? NFSD_EXPORT : o->no_slot;

		if (slot->nv_from == NFSD_FROM_CMDLINE ||
		    cf->nc_v[other].nv_from == NFSD_FROM_CMDLINE)
			take = false;
		else if (slot->nv_from == NFSD_FROM_FILE && o->no_type != NFSD_LIST) {
			nfsd_problem(cf, file, line, "%s: given twice (line %u before)",
				     o->no_key, slot->nv_line);
			return -EINVAL;
		}
	}
	if (o->no_type == NFSD_LIST)
		return set_list(cf, o, v, from, file, line, take);
	if (from == NFSD_FROM_CMDLINE && slot->nv_from == NFSD_FROM_CMDLINE) {
		if (o->no_once) {
			nfsd_problem(cf, NULL, 0, "--%s given twice: %s", o->no_long,
				     o->no_slot == NFSD_EXPORT ?
				     "to serve several directories, list them in an exports "
				     "file (--exports FILE)" : "give it once");
			return -EINVAL;
		}
		if (o->no_type == NFSD_FLAG && slot->nv_opt != (enum nfsd_id)(o - nfsd_opts) &&
		    slot->nv_u != o->no_value) {
			nfsd_problem(cf, NULL, 0, "--%s and --%s contradict each other",
				     nfsd_opts[slot->nv_opt].no_long, o->no_long);
			return -EINVAL;
		}
	}
	if (o->no_type == NFSD_COUNT && !v)
		nv.nv_u = slot->nv_from == NFSD_FROM_CMDLINE ? slot->nv_u : 0;
	if (parse_value(cf, o, v, from, file, line, &nv))
		return -EINVAL;
	if (!take) {
		val_clear(&nv);
		return 0;
	}
	val_clear(slot);
	*slot = nv;
	slot->nv_from = from;
	slot->nv_opt = (enum nfsd_id)(o - nfsd_opts);
	slot->nv_line = line;
	return 0;
}

/* --help: the table's lines, each help wrapped at 79 columns */
void nfsd_usage(FILE *f)
{
	char range[128], head[64], text[768];

	fprintf(f,
"Usage: " NFSD_PROG " [options]\n"
"Serve the directories of an exports file (exports(5) syntax; default\n"
"/etc/rpcrdma/exports), or one --export DIR, over NFSv3 and NFSv4.1 on\n"
"RPC-over-RDMA (RFC 8166/8267) and on TCP (RFC 5531, port 2049), MOUNT v3\n"
"over TCP.  Options come from the configuration file (--config; rpcrdma.conf(5),\n"
"key = value in [SECTION]) and the command line, which overrides it.\n"
"Below: (range; default; [SECTION] key in the file).\n\n");
	for (unsigned i = 0; i < NFSD_NOPTS; i++) {
		const struct nfsd_opt *o = &nfsd_opts[i];
		const struct nfsd_opt *k = &nfsd_opts[o->no_slot];
		size_t col, n;
		const char *w;

		if (o->no_short)
			snprintf(head, sizeof(head), "  -%c, --%s%s%s", o->no_short, o->no_long,
				 o->no_arg ? " " : "", o->no_arg ? o->no_arg : "");
		else
			snprintf(head, sizeof(head), "      --%s%s%s", o->no_long,
				 o->no_arg ? " " : "", o->no_arg ? o->no_arg : "");
		nfsd_opt_range(o, range, sizeof(range));
		n = (size_t)snprintf(text, sizeof(text), "%s", o->no_help);
		if (o->no_type != NFSD_FLAG || k->no_key)
			snprintf(text + n, sizeof(text) - n, " (%s%s%s%s%s%s%s%s)",
				 range, range[0] ? "; " : "",
				 o->no_type == NFSD_FLAG ? "" : "default ",
				 o->no_type == NFSD_FLAG ? "" : o->no_default,
				 o->no_type == NFSD_FLAG || !k->no_key ? "" : "; ",
				 k->no_key ? "[" : "", k->no_key ? k->no_section : "",
				 k->no_key ? "] " : "");
		if (k->no_key) {
			n = strlen(text) - 1; /* before the ')' */
			snprintf(text + n, sizeof(text) - n, "%s)", k->no_key);
		} else if (o->no_type != NFSD_FLAG) {
			n = strlen(text);
			if (n >= 2 && text[n - 2] == ';') /* "; )": no key */
				memcpy(text + n - 2, ")", 2);
		}
		fputs(head, f);
		col = strlen(head);
		if (col >= 26) {
			fputc('\n', f);
			col = 0;
		}
		/* words, wrapped at 79 columns, indented to 26 */
		for (w = text; *w; ) {
			size_t len = strcspn(w, " ");

			if (col + 1 + len > 79 && col > 26) {
				fputc('\n', f);
				col = 0;
			}
			for (; col < 26; col++)
				fputc(' ', f);
			if (col > 26) {
				fputc(' ', f);
				col++;
			}
			fwrite(w, 1, len, f);
			col += len;
			w += len;
			w += strspn(w, " ");
		}
		fputc('\n', f);
	}
}

int nfsd_conf_load(struct nfsd_conf *cf, int argc, char **argv,
		   const char *default_path)
{
	struct option lopts[NFSD_NOPTS + 1];
	char shorts[2 * NFSD_NOPTS + 2];
	const char *path;
	size_t ns = 0;
	int c, idx, err;

	shorts[ns++] = ':'; /* a missing argument: ':' (our message) */
	for (unsigned i = 0; i < NFSD_NOPTS; i++) {
		const struct nfsd_opt *o = &nfsd_opts[i];
		bool arg = o->no_type != NFSD_FLAG && o->no_type != NFSD_COUNT;

		lopts[i] = (struct option){ o->no_long, arg ? required_argument : no_argument,
					    NULL, 256 + (int)i };
		if (o->no_short) {
			shorts[ns++] = o->no_short;
			if (arg)
				shorts[ns++] = ':';
		}
	}
	memset(&lopts[NFSD_NOPTS], 0, sizeof(lopts[0]));
	shorts[ns] = '\0';
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, shorts, lopts, &idx)) != -1) {
		const struct nfsd_opt *o = NULL;

		if (c >= 256 && c < 256 + NFSD_NOPTS) {
			o = &nfsd_opts[c - 256];
		} else {
			for (unsigned i = 0; i < NFSD_NOPTS; i++)
				if (nfsd_opts[i].no_short && nfsd_opts[i].no_short == c)
					o = &nfsd_opts[i];
		}
		if (c == ':') {
			nfsd_problem(cf, NULL, 0, "%s needs an argument", argv[optind - 1]);
			continue;
		}
		if (!o) {
			if (optopt && optopt < 256)
				nfsd_problem(cf, NULL, 0, "unknown option -%c (--help lists them)",
					     optopt);
			else
				nfsd_problem(cf, NULL, 0, "unknown option %s (--help lists them)",
					     argv[optind - 1]);
			continue;
		}
		nfsd_opt_set(cf, o, o->no_type == NFSD_FLAG || o->no_type == NFSD_COUNT ?
			     NULL : optarg, NFSD_FROM_CMDLINE, NULL, 0);
	}
	for (; optind < argc; optind++)
		nfsd_problem(cf, NULL, 0, "unexpected argument: %s", argv[optind]);
	if (nfsd_flag(cf, NFSD_HELP)) {
		nfsd_usage(stdout);
		return NFSD_EXIT_DONE;
	}
	if (nfsd_flag(cf, NFSD_VERSION)) {
		printf(NFSD_PROG " %s\n", RPCRDMA_VERSION_STRING);
		return NFSD_EXIT_DONE;
	}
	path = nfsd_s(cf, NFSD_CONFIG);
	err = nfsd_conf_read_file(cf, path ? path : default_path);
	if (err == -ENOENT && path)
		nfsd_problem(cf, path, 0, "%s (--config)", strerror(-err));
	else if (!err)
		cf->nc_path = path ? path : default_path;
	nfsd_conf_cross(cf);
	return cf->nc_problems ? 2 : 0;
}
