// SPDX-License-Identifier: MIT
/*
 * nfs_spec.c - the server-and-export argument of rpcrdma-nfs:
 * SERVER:/export, [ADDR]:/export, or nfs://SERVER[:PORT]/path URLs
 * (RFC 3986 syntax; the options libnfs's URLs name).  See nfs_spec.h.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "nfs_spec.h"

#define NFS_URL_SCHEME "nfs://"

static int bad(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int bad(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

void nfs_spec_free(struct nfs_spec *s)
{
	free(s->ns_host);
	free(s->ns_path);
	memset(s, 0, sizeof(*s));
}

/* "host:/path" or "[v6addr]:/path", as before URLs. */
static int parse_plain(const char *arg, struct nfs_spec *out, char *err, size_t errlen)
{
	const char *colon;

	if (arg[0] == '[') {
		const char *rb = strchr(arg, ']');

		if (!rb || rb == arg + 1 || rb[1] != ':' || rb[2] != '/')
			return bad(err, errlen, "expected SERVER:/export, [ADDRESS]:/export "
				   "or nfs://SERVER[:PORT]/path");
		out->ns_host = strndup(arg + 1, (size_t)(rb - arg - 1));
		out->ns_path = strdup(rb + 2);
	} else {
		colon = strstr(arg, ":/");
		if (!colon || colon == arg)
			return bad(err, errlen, "expected SERVER:/export, [ADDRESS]:/export "
				   "or nfs://SERVER[:PORT]/path");
		out->ns_host = strndup(arg, (size_t)(colon - arg));
		out->ns_path = strdup(colon + 1);
	}
	if (!out->ns_host || !out->ns_path) {
		nfs_spec_free(out);
		return -ENOMEM;
	}
	return 0;
}

/* A decimal port 1..65535 in [s, e); false otherwise. */
static bool port_of(const char *s, const char *e, uint16_t *port)
{
	unsigned long v = 0;

	if (s == e || e - s > 5)
		return false;
	for (; s < e; s++) {
		if (*s < '0' || *s > '9')
			return false;
		v = v * 10 + (unsigned long)(*s - '0');
	}
	if (v < 1 || v > 65535)
		return false;
	*port = (uint16_t)v;
	return true;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* [s, e): the URL's path ("/" first; @path true: '//' and a trailing '/'
 * dropped) or server (an IPv6 zone is written %25: RFC 6874), %XX
 * escapes decoded, into a new string (*@out). */
static int decode(const char *s, const char *e, bool path, char **out, char *err,
		  size_t errlen)
{
	const char *what = path ? "path" : "server";
	char *p = malloc((size_t)(e - s) + 2), *o = p;

	if (!p)
		return -ENOMEM;
	while (s < e) {
		char c = *s++;

		if (c == '%') {
			int hi = s < e ? hexval(s[0]) : -1, lo = s + 1 < e ? hexval(s[1]) : -1;

			if (hi < 0 || lo < 0) {
				free(p);
				return bad(err, errlen, "bad %%-escape in the URL's %s", what);
			}
			c = (char)(hi << 4 | lo);
			s += 2;
			if (!c) {
				free(p);
				return bad(err, errlen, "%%00 in the URL's %s", what);
			}
		}
		if (path && c == '/' && o > p && o[-1] == '/')
			continue;
		*o++ = c;
	}
	if (path && o > p + 1 && o[-1] == '/')
		o--;
	*o = '\0';
	*out = p;
	return 0;
}

/* The query [s, e): OPT=VAL pairs separated by '&'. */
static int parse_query(const char *s, const char *e, struct nfs_spec *out, char *err,
		       size_t errlen)
{
	while (s < e) {
		const char *amp = memchr(s, '&', (size_t)(e - s)), *end = amp ? amp : e;
		const char *eq = memchr(s, '=', (size_t)(end - s));
		uint16_t v;

		bool nfsport, mountport;

		if (!eq)
			return bad(err, errlen, "URL option '%.*s': expected NAME=PORT",
				   (int)(end - s), s);
		nfsport = (size_t)(eq - s) == 7 && !strncmp(s, "nfsport", 7);
		mountport = (size_t)(eq - s) == 9 && !strncmp(s, "mountport", 9);
		if (!nfsport && !mountport)
			return bad(err, errlen, "unknown URL option '%.*s' (known: nfsport, "
				   "mountport)", (int)(eq - s), s);
		if (!port_of(eq + 1, end, &v))
			return bad(err, errlen, "URL option '%.*s': expected NAME=PORT (1-65535)",
				   (int)(end - s), s);
		if (nfsport && out->ns_port && out->ns_port != v)
			return bad(err, errlen, "the URL names two NFS ports (%u and %u)",
				   out->ns_port, v);
		if (nfsport)
			out->ns_port = v;
		else
			out->ns_mount_port = v;
		s = amp ? amp + 1 : e;
	}
	return 0;
}

static int parse_url(const char *arg, struct nfs_spec *out, char *err, size_t errlen)
{
	const char *a = arg + strlen(NFS_URL_SCHEME), *auth_end, *h, *he, *q, *pe;
	int rc;

	out->ns_url = true;
	if (strchr(a, '#'))
		return bad(err, errlen, "a URL fragment ('#') means nothing here");
	auth_end = a + strcspn(a, "/?");
	if (auth_end == a)
		return bad(err, errlen, "no server in the URL");
	if (memchr(a, '@', (size_t)(auth_end - a)))
		return bad(err, errlen, "user information ('user@') is not supported in the URL");
	if (*a == '[') {
		h = a + 1;
		he = memchr(a, ']', (size_t)(auth_end - a));
		if (!he || he == h)
			return bad(err, errlen, "unclosed or empty '[' in the URL's server");
		if (he + 1 < auth_end && he[1] != ':')
			return bad(err, errlen, "unexpected text after ']' in the URL's server");
		q = he + 1;
	} else {
		h = a;
		he = memchr(a, ':', (size_t)(auth_end - a));
		if (!he)
			he = auth_end;
		if (he == h)
			return bad(err, errlen, "no server in the URL");
		q = he;
	}
	if (q < auth_end && !port_of(q + 1, auth_end, &out->ns_port))
		return bad(err, errlen, "bad port '%.*s' in the URL (1-65535)",
			   (int)(auth_end - q - 1), q + 1);
	if (*auth_end != '/')
		return bad(err, errlen, "no path in the URL: nfs://SERVER[:PORT]/path");
	pe = auth_end + strcspn(auth_end, "?");
	rc = parse_query(*pe ? pe + 1 : pe, pe + strlen(pe), out, err, errlen);
	if (rc)
		return rc;
	rc = decode(h, he, false, &out->ns_host, err, errlen);
	if (rc)
		return rc;
	rc = decode(auth_end, pe, true, &out->ns_path, err, errlen);
	if (rc) {
		nfs_spec_free(out);
		return rc;
	}
	return 0;
}

int nfs_spec_parse(const char *arg, struct nfs_spec *out, char *err, size_t errlen)
{
	int rc;

	memset(out, 0, sizeof(*out));
	if (errlen)
		err[0] = '\0';
	if (!strncasecmp(arg, NFS_URL_SCHEME, strlen(NFS_URL_SCHEME)))
		rc = parse_url(arg, out, err, errlen);
	else if (strstr(arg, "://"))
		rc = bad(err, errlen, "only nfs:// URLs are understood");
	else
		rc = parse_plain(arg, out, err, errlen);
	if (rc)
		memset(out, 0, sizeof(*out));
	return rc;
}

char *nfs_spec_join(const char *base, const char *rel)
{
	size_t bl = strlen(base);
	char *p;

	while (bl > 1 && base[bl - 1] == '/')
		bl--;
	while (*rel == '/')
		rel++;
	if (!*rel)
		return strndup(base, bl);
	if (bl == 1 && base[0] == '/')
		bl = 0;
	if (asprintf(&p, "%.*s/%s", (int)bl, base, rel) < 0)
		return NULL;
	return p;
}
