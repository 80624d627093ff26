// SPDX-License-Identifier: MIT
/*
 * nfsd_conf.c - rpcrdma-nfsd's configuration file (rpcrdma.conf(5)): the
 * INI style of nfs.conf(5), "[section]" then "key = value" lines, read
 * with libinih; every key is an option of the table (nfsd_table.c).  Each
 * problem is told with the file and the line, and reading goes on.
 */
#include <errno.h>
#include <ini.h>
#include <stdlib.h>
#include <string.h>

#include "nfsd_opts.h"

struct conf_read {
	struct nfsd_conf *cr_cf;
	const char *cr_path;
	FILE *cr_f;
	unsigned cr_line;          /* the line libinih has now */
	char *cr_buf;              /* getline()'s */
	size_t cr_cap;
	char cr_bad_section[128];  /* an unknown section, told once */
};

/*
 * conf_reader - libinih's reader: one whole line at a time, so that the
 * line count is the line libinih parses; a line too long, or an opening
 * '[' with no ']', is told here and handed on as a comment.
 */
static char *conf_reader(char *str, int num, void *stream)
{
	struct conf_read *cr = stream;
	ssize_t n = getline(&cr->cr_buf, &cr->cr_cap, cr->cr_f);
	const char *s;

	if (n < 0)
		return NULL;
	cr->cr_line++;
	s = cr->cr_buf + strspn(cr->cr_buf, " \t");
	if (n >= num - 1) {
		nfsd_problem(cr->cr_cf, cr->cr_path, cr->cr_line,
			     "line longer than %d bytes", num - 3);
		snprintf(str, (size_t)num, "#\n");
	} else if (*s == '[' && !strchr(s, ']')) {
		nfsd_problem(cr->cr_cf, cr->cr_path, cr->cr_line,
			     "expected [SECTION]: no closing ']'");
		snprintf(str, (size_t)num, "#\n");
	} else {
		memcpy(str, cr->cr_buf, (size_t)n + 1);
	}
	return str;
}

/* the sections the table names */
static bool section_known(const char *section)
{
	for (unsigned i = 0; i < NFSD_NOPTS; i++)
		if (nfsd_opts[i].no_section && !strcmp(nfsd_opts[i].no_section, section))
			return true;
	return false;
}

/* libinih's handler: one "key = value" (value NULL: no '=') */
static int conf_handler(void *user, const char *section, const char *key,
			const char *value)
{
	struct conf_read *cr = user;
	struct nfsd_conf *cf = cr->cr_cf;
	const struct nfsd_opt *o, *other;

	if (!value) {
		nfsd_problem(cf, cr->cr_path, cr->cr_line,
			     "expected KEY = VALUE or [SECTION]: %s", key);
		return 1;
	}
	o = nfsd_opt_find_key(section[0] ? section : NULL, key, &other);
	if (o)
		nfsd_opt_set(cf, o, value, NFSD_FROM_FILE, cr->cr_path, cr->cr_line);
	else if (other && !section[0])
		nfsd_problem(cf, cr->cr_path, cr->cr_line,
			     "%s: before any section (it belongs in [%s])", key,
			     other->no_section);
	else if (!section_known(section) && section[0]) {
		nfsd_problem(cf, cr->cr_path, cr->cr_line, "[%s] %s: unknown section%s%s%s",
			     section, key, other ? " (" : "", other ? other->no_section : "",
			     other ? " has this key)" : "");
	} else if (other)
		nfsd_problem(cf, cr->cr_path, cr->cr_line, "%s: not a key of [%s] "
			     "(it belongs in [%s])", key, section, other->no_section);
	else
		nfsd_problem(cf, cr->cr_path, cr->cr_line, "unknown key '%s' in [%s] "
			     "(rpcrdma.conf(5) lists them)", key, section);
	return 1;
}

int nfsd_conf_read_file(struct nfsd_conf *cf, const char *path)
{
	struct conf_read cr = { .cr_cf = cf, .cr_path = path };
	unsigned before = cf->nc_problems;
	int r;

	cr.cr_f = fopen(path, "re");
	if (!cr.cr_f) {
		int err = -errno;

		if (err != -ENOENT)
			nfsd_problem(cf, path, 0, "%s", strerror(-err));
		return err;
	}
	/* values on one line only (an indented line is not a continuation),
	 * a line with no '=' reaches the handler (told there), every line is
	 * read whatever the errors before it */
	ini_allow_multiline = false;
	ini_allow_no_value = true;
	ini_stop_on_first_error = false;
	r = ini_parse_stream(conf_reader, &cr, conf_handler, &cr);
	if (r > 0 && cf->nc_problems == before)
		nfsd_problem(cf, path, (unsigned)r, "cannot parse this line");
	else if (r < 0)
		nfsd_problem(cf, path, 0, "out of memory");
	free(cr.cr_buf);
	fclose(cr.cr_f);
	return 0;
}
