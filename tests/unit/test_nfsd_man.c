// SPDX-License-Identifier: MIT
/*
 * test_nfsd_man.c - the option table (tools/nfsd/nfsd_table.c) against
 * the man pages: rpcrdma-nfsd(8) has a paragraph (.TP) for every option,
 * its tag naming --OPTION, whose text gives the option's range as the
 * table does ("1..4096", "at least 64M", "auto, transport, worker");
 * rpcrdma.conf(5) has a paragraph for every key, under the heading of its
 * [section], with the same range.  An option added to the table and not
 * documented, or a range changed in one place only, fails here.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "nfsd_opts.h"

#define MAX_PARAS 512

/* one .TP paragraph: its tag line and its text, troff escapes removed */
struct para {
	char *tag;
	char *text;
	char section[64]; /* the .SS heading it is under */
};

/* plain - @s without troff's font escapes and \- \& \e */
static void plain(char *s)
{
	char *w = s;

	for (char *r = s; *r; r++) {
		if (r[0] == '\\' && r[1] == 'f' && r[2]) {
			r += 2;
			continue;
		}
		if (r[0] == '\\' && (r[1] == '-' || r[1] == 'e')) {
			*w++ = r[1] == '-' ? '-' : '\\';
			r++;
			continue;
		}
		if (r[0] == '\\' && r[1] == '&') {
			r++;
			continue;
		}
		if (r[0] == '\\' && r[1] == '(' && r[2] && r[3]) { /* \(lq etc. */
			*w++ = '"';
			r += 3;
			continue;
		}
		*w++ = *r;
	}
	*w = '\0';
}

/* the request's words without the request and the quotes: ".BR a b" -> "a b" */
static void unrequest(char *line)
{
	char *w = line, *r = line;

	if (*r == '.') {
		while (*r && *r != ' ')
			r++;
		if (*r == ' ')
			r++;
	}
	for (; *r; r++)
		if (*r != '"')
			*w++ = *r;
	*w = '\0';
}

/* read_paras - the .TP paragraphs of @path (under the .SH named @sh,
 * NULL: all) */
static unsigned read_paras(const char *path, const char *sh, struct para *p)
{
	FILE *f = fopen(path, "r");
	char *line = NULL, section[64] = "";
	size_t cap = 0;
	ssize_t n;
	unsigned np = 0;
	bool in_sh = !sh, want_tag = false;
	size_t tlen = 0;

	if (!f)
		fail_msg("%s: %s", path, strerror(errno));
	while ((n = getline(&line, &cap, f)) >= 0) {
		if (n && line[n - 1] == '\n')
			line[--n] = '\0';
		if (!strncmp(line, ".SH", 3)) {
			in_sh = !sh || strstr(line, sh);
			want_tag = false;
			continue;
		}
		if (!in_sh)
			continue;
		if (!strncmp(line, ".SS", 3)) {
			snprintf(section, sizeof(section), "%s", line + 4);
			plain(section);
			continue;
		}
		if (!strcmp(line, ".TP")) {
			assert_true(np < MAX_PARAS);
			memset(&p[np], 0, sizeof(p[np]));
			snprintf(p[np].section, sizeof(p[np].section), "%s", section);
			np++;
			want_tag = true;
			tlen = 0;
			continue;
		}
		if (!np)
			continue;
		unrequest(line);
		plain(line);
		if (want_tag) {
			p[np - 1].tag = strdup(line);
			p[np - 1].text = strdup("");
			want_tag = false;
			continue;
		}
		if (!p[np - 1].text)
			continue;
		p[np - 1].text = realloc(p[np - 1].text, tlen + strlen(line) + 2);
		assert_non_null(p[np - 1].text);
		strcpy(p[np - 1].text + tlen, line);
		tlen += strlen(line);
		strcpy(p[np - 1].text + tlen, " ");
		tlen++;
	}
	free(line);
	fclose(f);
	return np;
}

static void free_paras(struct para *p, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		free(p[i].tag);
		free(p[i].text);
	}
}

/* does @tag name @word as a whole word ("--credits", not "--credits-x") */
static bool names(const char *tag, const char *word)
{
	size_t n = strlen(word);

	for (const char *s = strstr(tag, word); s; s = strstr(s + 1, word)) {
		char after = s[n];

		if ((s == tag || s[-1] == ' ' || s[-1] == ',') &&
		    !((after >= 'a' && after <= 'z') || (after >= '0' && after <= '9') ||
		      after == '-'))
			return true;
	}
	return false;
}

/* every option: a paragraph tagged --OPTION whose text has its range */
static void test_nfsd_8(void **state)
{
	static struct para p[MAX_PARAS];
	unsigned np = read_paras(RPCRDMA_MAN_DIR "/rpcrdma-nfsd.8", "OPTIONS", p);
	unsigned missing = 0;
	char opt[64], range[128];

	(void)state;
	for (unsigned i = 0; i < NFSD_NOPTS; i++) {
		const struct nfsd_opt *o = &nfsd_opts[i];
		unsigned j;

		snprintf(opt, sizeof(opt), "--%s", o->no_long);
		for (j = 0; j < np; j++)
			if (p[j].tag && names(p[j].tag, opt))
				break;
		if (j == np) {
			print_error("rpcrdma-nfsd.8: no paragraph (.TP) for %s\n", opt);
			missing++;
			continue;
		}
		nfsd_opt_range(o, range, sizeof(range));
		if (range[0] && !strstr(p[j].text, range)) {
			print_error("rpcrdma-nfsd.8: %s: the range \"%s\" is not in its "
				    "paragraph\n", opt, range);
			missing++;
		}
	}
	free_paras(p, np);
	assert_int_equal(missing, 0);
}

/* every key: a paragraph tagged with it under its [section], with its range */
static void test_conf_5(void **state)
{
	static struct para p[MAX_PARAS];
	unsigned np = read_paras(RPCRDMA_MAN_DIR "/rpcrdma.conf.5", NULL, p);
	unsigned missing = 0;
	char sec[64], range[128];

	(void)state;
	for (unsigned i = 0; i < NFSD_NOPTS; i++) {
		const struct nfsd_opt *o = &nfsd_opts[i];
		unsigned j;

		if (!o->no_key)
			continue;
		snprintf(sec, sizeof(sec), "[%s]", o->no_section);
		for (j = 0; j < np; j++)
			if (p[j].tag && !strncmp(p[j].tag, o->no_key, strlen(o->no_key)) &&
			    (p[j].tag[strlen(o->no_key)] == ' ' || !p[j].tag[strlen(o->no_key)]) &&
			    strstr(p[j].section, sec))
				break;
		if (j == np) {
			print_error("rpcrdma.conf.5: no paragraph for %s under %s\n",
				    o->no_key, sec);
			missing++;
			continue;
		}
		nfsd_opt_range(o, range, sizeof(range));
		if (o->no_type != NFSD_FLAG && range[0] && !strstr(p[j].text, range)) {
			print_error("rpcrdma.conf.5: %s %s: the range \"%s\" is not in its "
				    "paragraph\n", sec, o->no_key, range);
			missing++;
		}
	}
	free_paras(p, np);
	assert_int_equal(missing, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nfsd_8),
		cmocka_unit_test(test_conf_5),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
