// SPDX-License-Identifier: MIT
/*
 * fs_exports.c - reading an exports file (the syntax of exports(5) from
 * Linux nfs-utils) into a table of exports, each with its client entries
 * and their options, and matching a caller's address against them.
 *
 * The text is split into logical lines (comments dropped, continuations
 * joined), each line into words (a double-quoted word may hold blanks;
 * \ooo octal escapes are decoded in paths), and every word after the path
 * is a client with an optional parenthesised option list, or "-OPTS" for
 * the defaults of the clients after it.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <netdb.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fs.h"
#include "fs_backend.h"

#define EXPORTS_FILE_MAX (1u << 20)

static int xerr(char *err, size_t errlen, const char *name, unsigned line,
		int ret, const char *fmt, ...) __attribute__((format(printf, 6, 7)));

static int xerr(char *err, size_t errlen, const char *name, unsigned line,
		int ret, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (!err || !errlen)
		return ret;
	n = line ? snprintf(err, errlen, "%s:%u: ", name, line) :
		   snprintf(err, errlen, "%s: ", name);
	if (n < 0 || (size_t)n >= errlen)
		return ret;
	va_start(ap, fmt);
	vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
	va_end(ap);
	return ret;
}

void rpcrdma_nfs3_exports_free(struct rpcrdma_nfs3_exports *xt)
{
	if (!xt)
		return;
	for (unsigned i = 0; i < xt->xt_n; i++) {
		struct fs_xspec *xs = &xt->xt_specs[i];

		for (unsigned j = 0; j < xs->xs_nclients; j++)
			free(xs->xs_clients[j].xc_name);
		free(xs->xs_clients);
		free(xs->xs_path);
	}
	free(xt->xt_specs);
	free(xt);
}

int fs_exports_names_init(struct rpcrdma_nfs3_exports *xt)
{
	xt->xt_wild = false;
	for (unsigned i = 0; i < xt->xt_n; i++)
		for (unsigned j = 0; j < xt->xt_specs[i].xs_nclients; j++)
			if (xt->xt_specs[i].xs_clients[j].xc_kind == FS_XC_WILDCARD)
				xt->xt_wild = true;
	return 0;
}

unsigned rpcrdma_nfs3_exports_count(const struct rpcrdma_nfs3_exports *xt)
{
	return xt ? xt->xt_n : 0;
}

const char *rpcrdma_nfs3_exports_path(const struct rpcrdma_nfs3_exports *xt,
				      unsigned i)
{
	return xt && i < xt->xt_n ? xt->xt_specs[i].xs_path : NULL;
}

/* ---- parsing one line ---- */

struct xparse {
	const char *p_name;
	unsigned p_line;
	char *p_err;
	size_t p_errlen;
	const struct rpcrdma_nfs3_exports_notes *p_notes; /* NULL: none */
	unsigned p_errors;         /* errors found so far */
};

static int px_note(struct xparse *px, bool error, int ret, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/*
 * px_note - one problem of line p_line: an error (the first one's text
 * goes to p_err) or a warning, told to the notes' callback when there is
 * one.  Returns @ret.
 */
static int px_note(struct xparse *px, bool error, int ret, const char *fmt, ...)
{
	char buf[RPCRDMA_NFS3_EXPORTS_LINE_MAX + 256];
	va_list ap;
	int n;

	n = px->p_line ? snprintf(buf, sizeof(buf), "%s:%u: ", px->p_name, px->p_line) :
			 snprintf(buf, sizeof(buf), "%s: ", px->p_name);
	if (n < 0 || (size_t)n >= sizeof(buf))
		n = 0;
	va_start(ap, fmt);
	vsnprintf(buf + n, sizeof(buf) - (size_t)n, fmt, ap);
	va_end(ap);
	if (error && !px->p_errors++ && px->p_err && px->p_errlen)
		snprintf(px->p_err, px->p_errlen, "%s", buf);
	if (px->p_notes && px->p_notes->xn_note)
		px->p_notes->xn_note(px->p_notes->xn_arg, error, buf);
	return ret;
}

#define PERR(px, ret, ...) px_note(px, true, ret, __VA_ARGS__)
#define PWARN(px, ...) px_note(px, false, 0, __VA_ARGS__)
/* keep going after an error line: --check's every problem */
#define PX_KEEP_GOING(px) ((px)->p_notes && (px)->p_notes->xn_keep_going)

/*
 * next_word - the next blank-separated word of *@sp into @buf (@cap
 * bytes), quotes removed; a word may be "quoted" in part; a '(' opens an
 * option list that runs to its ')' whatever it holds.
 * Return: 1 (a word), 0 (end of line), -EINVAL (unterminated quote or
 * parenthesis, or too long).
 */
static int next_word(const char **sp, char *buf, size_t cap)
{
	const char *s = *sp;
	size_t n = 0;
	bool quoted = false;
	int depth = 0;

	while (*s == ' ' || *s == '\t')
		s++;
	if (!*s)
		return 0;
	for (; *s; s++) {
		if (!quoted && !depth && (*s == ' ' || *s == '\t'))
			break;
		if (*s == '"' && !depth) {
			quoted = !quoted;
			continue;
		}
		if (!quoted && *s == '(')
			depth++;
		else if (!quoted && *s == ')' && --depth < 0)
			return -EINVAL;
		if (n + 1 >= cap)
			return -EINVAL;
		buf[n++] = *s;
	}
	if (quoted || depth)
		return -EINVAL;
	buf[n] = '\0';
	*sp = s;
	return 1;
}

/* unescape - decode \ooo octal escapes of a path in place. -EINVAL if bad. */
static int unescape(char *s)
{
	char *w = s;

	for (char *r = s; *r; r++) {
		if (*r == '\\') {
			unsigned v = 0;

			for (int i = 1; i <= 3; i++) {
				if (r[i] < '0' || r[i] > '7')
					return -EINVAL;
				v = v * 8 + (unsigned)(r[i] - '0');
			}
			if (v == 0 || v > 255)
				return -EINVAL;
			*w++ = (char)v;
			r += 3;
		} else {
			*w++ = *r;
		}
	}
	*w = '\0';
	return 0;
}

static int parse_u32(const char *s, uint32_t max, uint32_t *out)
{
	unsigned long v;
	char *end;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v > max)
		return -EINVAL;
	*out = (uint32_t)v;
	return 0;
}

/* the export-wide options a client's list may set */
struct xexport_opts {
	bool xe_have_fsid;
	uint32_t xe_fsid;
	const struct fs_backend *xe_be; /* backend=; NULL: not named */
	char xe_be_opts[FS_BE_OPTS_MAX];   /* its options (fs_backend_parse()) */
};

/*
 * parse_opts - apply the comma-separated options @s to @o (and fsid= and
 * backend=, options of the whole export, to @xe).  Return 0 or a PERR.
 */
static int parse_opts(struct xparse *px, char *s, struct rpcrdma_nfs3_xopts *o,
		      struct xexport_opts *xe)
{
	static const char *const no_effect[] = {
		"wdelay", "no_wdelay", "subtree_check", "no_subtree_check",
	};
	char *save = NULL, *opt;

	if (!*s)
		return PERR(px, -EINVAL, "empty option list");
	for (opt = strtok_r(s, ",", &save); opt; opt = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(opt, '=');
		const char *val = eq ? eq + 1 : NULL;
		bool known = false;

		if (eq)
			*eq = '\0';
		if (!val && !strcmp(opt, "rw")) {
			o->xo_ro = false;
		} else if (!val && !strcmp(opt, "ro")) {
			o->xo_ro = true;
		} else if (!val && !strcmp(opt, "root_squash")) {
			o->xo_squash = RPCRDMA_NFS3_ROOT_SQUASH;
		} else if (!val && (!strcmp(opt, "no_root_squash"))) {
			o->xo_squash = RPCRDMA_NFS3_NO_ROOT_SQUASH;
		} else if (!val && !strcmp(opt, "all_squash")) {
			o->xo_squash = RPCRDMA_NFS3_ALL_SQUASH;
		} else if (!val && !strcmp(opt, "no_all_squash")) {
			if (o->xo_squash == RPCRDMA_NFS3_ALL_SQUASH)
				o->xo_squash = RPCRDMA_NFS3_ROOT_SQUASH;
		} else if (!val && !strcmp(opt, "sync")) {
			o->xo_async = false;
		} else if (!val && !strcmp(opt, "async")) {
			o->xo_async = true;
		} else if (!val && !strcmp(opt, "secure")) {
			o->xo_insecure = false;
		} else if (!val && !strcmp(opt, "insecure")) {
			o->xo_insecure = true;
		} else if (val && !strcmp(opt, "anonuid")) {
			if (parse_u32(val, UINT32_MAX - 1, &o->xo_anonuid))
				return PERR(px, -EINVAL, "anonuid=%s: expected a number 0..4294967294", val);
		} else if (val && !strcmp(opt, "anongid")) {
			if (parse_u32(val, UINT32_MAX - 1, &o->xo_anongid))
				return PERR(px, -EINVAL, "anongid=%s: expected a number 0..4294967294", val);
		} else if (val && !strcmp(opt, "sec")) {
			/* a colon-separated list; only AUTH_SYS is served */
			char *v = (char *)val, *s2 = NULL, *f;

			for (f = strtok_r(v, ":", &s2); f; f = strtok_r(NULL, ":", &s2))
				if (strcmp(f, "sys"))
					return PERR(px, -EINVAL, "sec=%s: only sec=sys is supported", f);
		} else if (val && !strcmp(opt, "fsid")) {
			uint32_t v;

			if (!strcmp(val, "root") || !strcmp(val, "0"))
				v = 0;
			else if (parse_u32(val, 65535, &v))
				return PERR(px, -EINVAL, "fsid=%s: expected 0..65535 or root (UUIDs are not supported)", val);
			if (xe->xe_have_fsid && xe->xe_fsid != v)
				return PERR(px, -EINVAL, "fsid=%s: the export already has fsid=%u", val, xe->xe_fsid);
			xe->xe_have_fsid = true;
			xe->xe_fsid = v;
		} else if (val && !strcmp(opt, "backend")) {
			char bopts[FS_BE_OPTS_MAX];
			const struct fs_backend *be = fs_backend_parse(val, bopts);

			if (!be && !fs_backend_find("cephfs") &&
			    !strncmp(val, "cephfs", 6) && (!val[6] || val[6] == ':'))
				return PERR(px, -EINVAL, "backend=%s: rpcrdma was built without libcephfs", val);
			if (!be)
				return PERR(px, -EINVAL, "backend=%s: no such backend (posix, memory%s), or options over %u bytes",
					    val, fs_backend_find("cephfs") ? ", cephfs" : "",
					    FS_BE_OPTS_MAX - 1);
			if (xe->xe_be && (xe->xe_be != be || strcmp(xe->xe_be_opts, bopts)))
				return PERR(px, -EINVAL, "backend=%s: the export already has backend=%s%s%s",
					    val, xe->xe_be->be_name, xe->xe_be_opts[0] ? " with " : "",
					    xe->xe_be_opts);
			xe->xe_be = be;
			memcpy(xe->xe_be_opts, bopts, sizeof(bopts));
		} else {
			for (size_t i = 0; i < sizeof(no_effect) / sizeof(no_effect[0]); i++)
				if (!val && !strcmp(opt, no_effect[i]))
					known = true;
			if (!known)
				return PERR(px, -EINVAL, "unknown option '%s%s%s'", opt,
					    val ? "=" : "", val ? val : "");
		}
	}
	return 0;
}

static int add_client(struct xparse *px, struct fs_xspec *xs,
		      const struct fs_xclient *cl)
{
	struct fs_xclient *n;

	if (xs->xs_nclients >= RPCRDMA_NFS3_CLIENTS_MAX)
		return PERR(px, -E2BIG, "more than %u clients for %s",
			    RPCRDMA_NFS3_CLIENTS_MAX, xs->xs_path);
	n = realloc(xs->xs_clients, (xs->xs_nclients + 1) * sizeof(*n));
	if (!n)
		return -ENOMEM;
	xs->xs_clients = n;
	n[xs->xs_nclients] = *cl;
	n[xs->xs_nclients].xc_name = strdup(cl->xc_name);
	if (!n[xs->xs_nclients].xc_name)
		return -ENOMEM;
	xs->xs_nclients++;
	return 0;
}

/* netmask_bits - a dotted IPv4 netmask's prefix length, or -1. */
static int netmask_bits(const char *s)
{
	struct in_addr a;
	uint32_t m;
	int bits;

	if (inet_pton(AF_INET, s, &a) != 1)
		return -1;
	m = ntohl(a.s_addr);
	bits = __builtin_popcount(m);
	if (bits && m != ~0u << (32 - bits))
		return -1;
	return bits;
}

/*
 * parse_client - one client word @spec (no options) with options @o:
 * appended to @xs (a host name: one entry per address it resolves to).
 */
static int parse_client(struct xparse *px, struct fs_xspec *xs, char *spec,
			const struct rpcrdma_nfs3_xopts *o, bool first)
{
	struct fs_xclient cl = { .xc_opts = *o, .xc_name = spec,
				   .xc_listed = first };
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *ai, *i;
	char *slash;
	int err, bits;

	if (spec[0] == '@')
		return PERR(px, -EINVAL, "%s: netgroups are not supported", spec);
	if (!strcmp(spec, "*")) {
		cl.xc_kind = FS_XC_ANY;
		return add_client(px, xs, &cl);
	}
	if (strpbrk(spec, "*?[")) {
		cl.xc_kind = FS_XC_WILDCARD;
		return add_client(px, xs, &cl);
	}
	cl.xc_kind = FS_XC_NET;
	if (rpcrdma_nfs3_cidr_parse(spec, &cl.xc_net, &cl.xc_prefix) == 0)
		return add_client(px, xs, &cl);
	slash = strchr(spec, '/');
	if (slash) {
		/* ADDR/NETMASK */
		*slash = '\0';
		bits = netmask_bits(slash + 1);
		err = rpcrdma_nfs3_cidr_parse(spec, &cl.xc_net, &cl.xc_prefix);
		*slash = '/';
		if (err || bits < 0 || cl.xc_net.ss_family != AF_INET)
			return PERR(px, -EINVAL, "%s: not ADDR/PREFIX or ADDR/NETMASK", spec);
		cl.xc_prefix = (unsigned)bits;
		return add_client(px, xs, &cl);
	}
	/* a host name: every address it has now */
	err = getaddrinfo(spec, NULL, &hints, &ai);
	if (err)
		return PERR(px, -ENOENT, "client %s: %s", spec, gai_strerror(err));
	for (i = ai; i; i = i->ai_next) {
		if (i->ai_family != AF_INET && i->ai_family != AF_INET6)
			continue;
		memset(&cl.xc_net, 0, sizeof(cl.xc_net));
		memcpy(&cl.xc_net, i->ai_addr, i->ai_addrlen);
		cl.xc_prefix = i->ai_family == AF_INET ? 32 : 128;
		err = add_client(px, xs, &cl);
		if (err)
			break;
		cl.xc_listed = false;
	}
	freeaddrinfo(ai);
	return err;
}

#define CEPHFS_URL "cephfs://"

/* url_name_ok - @n bytes of @s make a Ceph user or file system name:
 * letters, digits, '.', '_', '-'. */
static bool url_name_ok(const char *s, size_t n)
{
	if (!n)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
		      (s[i] >= '0' && s[i] <= '9') || s[i] == '.' || s[i] == '_' ||
		      s[i] == '-'))
			return false;
	return true;
}

/*
 * parse_cephfs_url - an export path "cephfs://[USER@]FSNAME[/PATH]"
 * (@url, escapes decoded) as the path clients mount, "/PATH" ("/" when
 * none), written over @url, and the cephfs backend's options
 * "fs=FSNAME,user=USER" (USER "admin" when none) into @opts.
 * Return: 0; -EINVAL (not of that form).
 */
static int parse_cephfs_url(char *url, char opts[FS_BE_OPTS_MAX])
{
	const char *user = "admin", *fs = url + strlen(CEPHFS_URL), *at, *slash;
	size_t ulen = 5, flen;
	int n;

	slash = strchr(fs, '/');
	at = memchr(fs, '@', slash ? (size_t)(slash - fs) : strlen(fs));
	if (at) {
		user = fs;
		ulen = (size_t)(at - fs);
		fs = at + 1;
	}
	flen = slash ? (size_t)(slash - fs) : strlen(fs);
	if (!url_name_ok(user, ulen) || !url_name_ok(fs, flen) || ulen >= 64 ||
	    flen >= 64)
		return -EINVAL;
	n = snprintf(opts, FS_BE_OPTS_MAX, "fs=%.*s,user=%.*s", (int)flen, fs,
		     (int)ulen, user);
	if (n < 0 || (size_t)n >= FS_BE_OPTS_MAX)
		return -EINVAL;
	memmove(url, slash ? slash : "/", strlen(slash ? slash : "/") + 1);
	return 0;
}

/* export_id - the id of an export without fsid=: from its path, not 0. */
static uint16_t export_id(const char *path)
{
	static const uint8_t k[16] = "rpcrdma-exports";
	uint64_t h = fs_siphash(k, path, strlen(path));
	uint16_t id = (uint16_t)(h ^ (h >> 16) ^ (h >> 32) ^ (h >> 48));

	return id ? id : 1;
}

static int parse_line(struct xparse *px, struct rpcrdma_nfs3_exports *xt,
		      const char *line)
{
	struct rpcrdma_nfs3_xopts defaults = {
		.xo_ro = true,
		.xo_squash = RPCRDMA_NFS3_ROOT_SQUASH,
		.xo_anonuid = RPCRDMA_NFS3_NOBODY,
		.xo_anongid = RPCRDMA_NFS3_NOBODY,
	};
	struct xexport_opts xe = { 0 };
	struct fs_xspec *xs, *specs;
	char word[RPCRDMA_NFS3_EXPORTS_LINE_MAX];
	char url[RPCRDMA_NFS3_EXPORTS_LINE_MAX] = "";
	char url_opts[FS_BE_OPTS_MAX] = "";
	char prev[208] = ""; /* the client word before, for the warning */
	int r, err;

	r = next_word(&line, word, sizeof(word));
	if (r < 0)
		return PERR(px, -EINVAL, "unterminated quote or parenthesis");
	if (r == 0)
		return 0;
	if (!strncmp(word, CEPHFS_URL, strlen(CEPHFS_URL))) {
		/* cephfs://[USER@]FSNAME/PATH: the cephfs backend, clients
		 * mount /PATH */
		if (!fs_backend_find("cephfs"))
			return PERR(px, -EINVAL, "%s: rpcrdma was built without libcephfs", word);
		if (unescape(word))
			return PERR(px, -EINVAL, "%s: bad \\ooo escape", word);
		strcpy(url, word);
		if (parse_cephfs_url(word, url_opts))
			return PERR(px, -EINVAL, "%s: expected cephfs://[USER@]FSNAME/PATH (names of letters, digits, '.', '_', '-')",
				    url);
	} else if (word[0] != '/') {
		return PERR(px, -EINVAL, "%s: the export path must be absolute", word);
	} else if (unescape(word)) {
		return PERR(px, -EINVAL, "%s: bad \\ooo escape", word);
	}
	for (size_t n = strlen(word); n > 1 && word[n - 1] == '/'; n--)
		word[n - 1] = '\0';
	for (unsigned i = 0; i < xt->xt_n; i++)
		if (!strcmp(xt->xt_specs[i].xs_path, word))
			return PERR(px, -EINVAL, "%s is exported twice (line %u)", word,
				    xt->xt_specs[i].xs_line);
	if (xt->xt_n >= RPCRDMA_NFS3_EXPORTS_MAX)
		return PERR(px, -E2BIG, "more than %u exports", RPCRDMA_NFS3_EXPORTS_MAX);
	specs = realloc(xt->xt_specs, (xt->xt_n + 1) * sizeof(*specs));
	if (!specs)
		return -ENOMEM;
	xt->xt_specs = specs;
	xs = &specs[xt->xt_n];
	memset(xs, 0, sizeof(*xs));
	xs->xs_path = strdup(word);
	if (!xs->xs_path)
		return -ENOMEM;
	xs->xs_line = px->p_line;
	xt->xt_n++; /* freed with the table from here on */

	while ((r = next_word(&line, word, sizeof(word))) > 0) {
		struct rpcrdma_nfs3_xopts o = defaults;
		char *paren;

		if (word[0] == '-') {
			if (xs->xs_nclients)
				return PERR(px, -EINVAL, "%s: default options must come before the clients", word);
			err = parse_opts(px, word + 1, &defaults, &xe);
			if (err)
				return err;
			continue;
		}
		paren = strchr(word, '(');
		if (paren) {
			size_t n = strlen(paren);

			if (paren[n - 1] != ')' || strchr(paren + 1, '(') )
				return PERR(px, -EINVAL, "%s: expected CLIENT(OPTIONS)", word);
			paren[n - 1] = '\0';
			*paren = '\0';
			if (paren == word) { /* "(opts)" alone: the world */
				/* as exportfs: "HOST (rw)" is HOST read-only and
				 * every host read-write, surely not what was meant */
				PWARN(px, "warning: (%s) stands alone: %s is exported to every "
				      "host (*) with these options%s%s%s%s%s", paren + 1, xs->xs_path,
				      prev[0] ? "; write " : "", prev, prev[0] ? "(" : "",
				      prev[0] ? paren + 1 : "",
				      prev[0] ? ") without a space to give them to that client" : "");
			}
			err = parse_opts(px, paren + 1, &o, &xe);
			if (err)
				return err;
			if (paren == word)
				strcpy(word, "*");
		}
		snprintf(prev, sizeof(prev), "%.200s", word);
		err = parse_client(px, xs, word, &o, true);
		if (err)
			return err;
	}
	if (r < 0)
		return PERR(px, -EINVAL, "unterminated quote or parenthesis");
	if (!xs->xs_nclients) {
		char star[] = "*";

		err = parse_client(px, xs, star, &defaults, true);
		if (err)
			return err;
	}
	xs->xs_have_fsid = xe.xe_have_fsid;
	xs->xs_be = xe.xe_be ? xe.xe_be : &fs_posix_backend;
	memcpy(xs->xs_be_opts, xe.xe_be_opts, sizeof(xs->xs_be_opts));
	if (url[0]) {
		/* the URL's backend, its options first, then backend=cephfs:...'s */
		const struct fs_backend *ceph = fs_backend_find("cephfs");
		int n;

		if (xe.xe_be && xe.xe_be != ceph)
			return PERR(px, -EINVAL, "%s: a cephfs:// export cannot have backend=%s",
				    url, xe.xe_be->be_name);
		xs->xs_be = ceph;
		n = snprintf(xs->xs_be_opts, sizeof(xs->xs_be_opts), "%s%s%s",
			     url_opts, xe.xe_be_opts[0] ? "," : "", xe.xe_be_opts);
		if (n < 0 || (size_t)n >= sizeof(xs->xs_be_opts))
			return PERR(px, -EINVAL, "%s: the cephfs options are over %u bytes",
				    url, FS_BE_OPTS_MAX - 1);
	}
	xs->xs_id = xe.xe_have_fsid ? (uint16_t)xe.xe_fsid : export_id(xs->xs_path);
	for (unsigned i = 0; i + 1 < xt->xt_n; i++)
		if (xt->xt_specs[i].xs_id == xs->xs_id)
			return PERR(px, -EINVAL, "%s and %s (line %u) have the same id %u: give one of them fsid=",
				    xs->xs_path, xt->xt_specs[i].xs_path,
				    xt->xt_specs[i].xs_line, xs->xs_id);
	if (px->p_notes && px->p_notes->xn_check_paths && (xs->xs_be->be_flags & FS_BE_LOCAL_PATH)) {
		struct stat st;

		/* a directory of this machine (other backends name theirs) */
		if (stat(xs->xs_path, &st) < 0)
			return PERR(px, -ENOENT, "%s: %s", xs->xs_path, strerror(errno));
		if (!S_ISDIR(st.st_mode))
			return PERR(px, -ENOTDIR, "%s: not a directory", xs->xs_path);
	}
	return 0;
}

int rpcrdma_nfs3_exports_parse(const char *name, const char *text,
			       struct rpcrdma_nfs3_exports **out,
			       char *err, size_t errlen)
{
	return rpcrdma_nfs3_exports_parse_notes(name, text, NULL, out, err, errlen);
}

int rpcrdma_nfs3_exports_parse_notes(const char *name, const char *text,
				     const struct rpcrdma_nfs3_exports_notes *notes,
				     struct rpcrdma_nfs3_exports **out,
				     char *err, size_t errlen)
{
	struct xparse px = { .p_name = name ? name : "exports", .p_err = err,
			     .p_errlen = errlen, .p_notes = notes };
	int first_err = 0;
	struct rpcrdma_nfs3_exports *xt;
	char *line;
	unsigned lineno = 1;
	int ret = 0;

	if (err && errlen)
		err[0] = '\0';
	if (!text || !out)
		return -EINVAL;
	xt = calloc(1, sizeof(*xt));
	line = malloc(RPCRDMA_NFS3_EXPORTS_LINE_MAX);
	if (!xt || !line) {
		ret = -ENOMEM;
		goto out;
	}
	while (*text) {
		size_t n = 0;
		unsigned first = lineno;
		bool comment = false;

		/* one logical line: continuations joined, the comment dropped */
		for (; *text && *text != '\n'; text++) {
			if (*text == '\\' && text[1] == '\n') {
				text++;
				lineno++;
				continue;
			}
			if (*text == '#')
				comment = true;
			if (comment)
				continue;
			if (n + 1 >= RPCRDMA_NFS3_EXPORTS_LINE_MAX) {
				px.p_line = first;
				ret = PERR(&px, -E2BIG, "line longer than %u bytes",
					   RPCRDMA_NFS3_EXPORTS_LINE_MAX);
				if (!PX_KEEP_GOING(&px))
					goto out;
				/* the rest of this logical line is dropped */
				for (; *text && *text != '\n'; text++)
					if (*text == '\\' && text[1] == '\n') {
						text++;
						lineno++;
					}
				n = 0;
				break;
			}
			line[n++] = *text == '\r' ? ' ' : *text;
		}
		line[n] = '\0';
		if (*text == '\n') {
			text++;
			lineno++;
		}
		px.p_line = first;
		if (ret) { /* the line was too long: reported */
			first_err = first_err ? first_err : ret;
			ret = 0;
			continue;
		}
		ret = parse_line(&px, xt, line);
		if (ret && (ret == -ENOMEM || !PX_KEEP_GOING(&px)))
			goto out;
		if (ret && !first_err)
			first_err = ret;
		ret = 0;
	}
	ret = first_err ? first_err : fs_exports_names_init(xt);
out:
	free(line);
	if (ret == -ENOMEM)
		xerr(err, errlen, px.p_name, 0, ret, "out of memory");
	if (ret) {
		rpcrdma_nfs3_exports_free(xt);
		return ret;
	}
	*out = xt;
	return 0;
}

int rpcrdma_nfs3_exports_load(const char *path,
			      struct rpcrdma_nfs3_exports **out,
			      char *err, size_t errlen)
{
	return rpcrdma_nfs3_exports_load_notes(path, NULL, out, err, errlen);
}

int rpcrdma_nfs3_exports_load_notes(const char *path,
				    const struct rpcrdma_nfs3_exports_notes *notes,
				    struct rpcrdma_nfs3_exports **out,
				    char *err, size_t errlen)
{
	struct stat st;
	char *text;
	size_t got = 0;
	int fd, ret;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return xerr(err, errlen, path, 0, -errno, "%s", strerror(errno));
	if (fstat(fd, &st) < 0) {
		ret = xerr(err, errlen, path, 0, -errno, "%s", strerror(errno));
		goto out_close;
	}
	if (st.st_size > (off_t)EXPORTS_FILE_MAX) {
		ret = xerr(err, errlen, path, 0, -EFBIG, "larger than %u bytes",
			   EXPORTS_FILE_MAX);
		goto out_close;
	}
	text = malloc((size_t)st.st_size + 1);
	if (!text) {
		ret = -ENOMEM;
		goto out_close;
	}
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, text + got, (size_t)st.st_size - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ret = xerr(err, errlen, path, 0, -errno, "%s", strerror(errno));
			goto out_free;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	text[got] = '\0';
	if (strlen(text) != got) {
		ret = xerr(err, errlen, path, 0, -EINVAL, "holds a NUL byte");
		goto out_free;
	}
	ret = rpcrdma_nfs3_exports_parse_notes(path, text, notes, out, err, errlen);
out_free:
	free(text);
out_close:
	close(fd);
	return ret;
}

/* ---- matching ---- */

enum fs_xmatch fs_exports_match_peer(const struct rpcrdma_nfs3_exports *xt,
				     unsigned i, const struct sockaddr *peer,
				     bool wait, struct rpcrdma_nfs3_xopts *out)
{
	const struct fs_xspec *xs;
	char name[FS_NAME_MAX + 1];
	int have_name = -1; /* not asked yet */

	if (!xt || i >= xt->xt_n || !peer)
		return FS_XM_NO;
	xs = &xt->xt_specs[i];
	for (unsigned j = 0; j < xs->xs_nclients; j++) {
		const struct fs_xclient *cl = &xs->xs_clients[j];
		bool hit = false;

		switch (cl->xc_kind) {
		case FS_XC_ANY:
			hit = true;
			break;
		case FS_XC_NET:
			hit = rpcrdma_nfs3_cidr_match(peer, &cl->xc_net, cl->xc_prefix);
			break;
		case FS_XC_WILDCARD:
			/* only a confirmed name (fs_hostname.c), never
			 * looked up on this thread */
			if (have_name < 0) {
				enum fs_name_result r = fs_name_of(peer, wait, name,
								   sizeof(name));

				/* the first entry that may match decides:
				 * without the name, nothing after it can */
				if (r == FS_NAME_PENDING)
					return FS_XM_UNKNOWN;
				have_name = r == FS_NAME_OK;
			}
			hit = have_name &&
			      fnmatch(cl->xc_name, name, FNM_CASEFOLD) == 0;
			break;
		}
		if (hit) {
			if (out)
				*out = cl->xc_opts;
			return FS_XM_YES;
		}
	}
	return FS_XM_NO;
}

bool rpcrdma_nfs3_exports_match(const struct rpcrdma_nfs3_exports *xt,
				unsigned i, const struct sockaddr *peer,
				struct rpcrdma_nfs3_xopts *out)
{
	return fs_exports_match_peer(xt, i, peer, true, out) == FS_XM_YES;
}
