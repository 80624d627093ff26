// SPDX-License-Identifier: MIT
/*
 * test_nfs_spec.c - rpcrdma-nfs's server-and-export argument
 * (tools/nfs/nfs_spec.c): SERVER:/export, [ADDR]:/export and
 * nfs://SERVER[:PORT]/path URLs (RFC 3986 syntax, libnfs's option names),
 * each case worked out by hand from those rules; bad arguments refused
 * with a reason.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "nfs_spec.h"

struct good {
	const char *arg, *host, *path;
	uint16_t port, mount_port;
	bool url;
};

static void test_good(void **state)
{
	static const struct good cases[] = {
		/* the forms before URLs, unchanged */
		{ "server:/export", "server", "/export", 0, 0, false },
		{ "10.0.0.1:/srv/a b", "10.0.0.1", "/srv/a b", 0, 0, false },
		{ "[2001:db8::1]:/x", "2001:db8::1", "/x", 0, 0, false },
		{ "h:/", "h", "/", 0, 0, false },
		/* URLs */
		{ "nfs://server/export", "server", "/export", 0, 0, true },
		{ "nfs://server/export/dir/file", "server", "/export/dir/file", 0, 0, true },
		{ "NFS://Server/e", "Server", "/e", 0, 0, true },
		{ "nfs://server/", "server", "/", 0, 0, true },
		{ "nfs://server:20049/export", "server", "/export", 20049, 0, true },
		{ "nfs://192.0.2.1:1/e", "192.0.2.1", "/e", 1, 0, true },
		{ "nfs://[2001:db8::1]/e", "2001:db8::1", "/e", 0, 0, true },
		{ "nfs://[2001:db8::1]:65535/e/", "2001:db8::1", "/e", 65535, 0, true },
		{ "nfs://[fe80::1%25eth0]/e", "fe80::1%eth0", "/e", 0, 0, true },
		{ "nfs://my%2Dhost/e", "my-host", "/e", 0, 0, true },
		/* %-escapes decoded; '//' and a trailing '/' dropped */
		{ "nfs://s/a%20b/c%2Fd", "s", "/a b/c/d", 0, 0, true },
		{ "nfs://s//a///b//", "s", "/a/b", 0, 0, true },
		{ "nfs://s/%41%7e", "s", "/A~", 0, 0, true },
		/* libnfs's option names */
		{ "nfs://s/e?mountport=20048", "s", "/e", 0, 20048, true },
		{ "nfs://s/e?nfsport=2049&mountport=635", "s", "/e", 2049, 635, true },
		{ "nfs://s:2049/e?nfsport=2049", "s", "/e", 2049, 0, true },
		{ "nfs://s/e?", "s", "/e", 0, 0, true },
	};
	unsigned i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct good *c = &cases[i];
		struct nfs_spec s;
		char err[128];

		if (nfs_spec_parse(c->arg, &s, err, sizeof(err)))
			fail_msg("'%s' refused: %s", c->arg, err);
		assert_string_equal(s.ns_host, c->host);
		assert_string_equal(s.ns_path, c->path);
		assert_int_equal(s.ns_port, c->port);
		assert_int_equal(s.ns_mount_port, c->mount_port);
		assert_int_equal(s.ns_url, c->url);
		nfs_spec_free(&s);
		assert_null(s.ns_host);
	}
}

struct badcase {
	const char *arg, *reason; /* a word the message must hold */
};

static void test_bad(void **state)
{
	static const struct badcase cases[] = {
		{ "server", "expected" },
		{ "server:export", "expected" },
		{ ":/export", "expected" },
		{ "[2001:db8::1/x", "expected" },
		{ "[]:/x", "expected" },
		{ "http://s/e", "only nfs://" },
		{ "nfs://", "no server" },
		{ "nfs:///export", "no server" },
		{ "nfs://:2049/e", "no server" },
		{ "nfs://server", "no path" },
		{ "nfs://server:2049", "no path" },
		{ "nfs://server?mountport=1", "no path" },
		{ "nfs://s:0/e", "bad port" },
		{ "nfs://s:65536/e", "bad port" },
		{ "nfs://s:/e", "bad port" },
		{ "nfs://s:20x/e", "bad port" },
		{ "nfs://s:1:2/e", "bad port" },
		{ "nfs://[2001:db8::1/e", "unclosed" },
		{ "nfs://[]/e", "unclosed" },
		{ "nfs://[::1]x/e", "after ']'" },
		{ "nfs://user@s/e", "user information" },
		{ "nfs://s/e#frag", "fragment" },
		{ "nfs://s/a%2", "escape" },
		{ "nfs://s/a%zz", "escape" },
		{ "nfs://s/a%00b", "%00" },
		{ "nfs://s%0/e", "escape in the URL's server" },
		{ "nfs://s/e?uid=0", "unknown URL option" },
		{ "nfs://s/e?mountport", "NAME=PORT" },
		{ "nfs://s/e?mountport=", "NAME=PORT" },
		{ "nfs://s/e?mountport=x", "NAME=PORT" },
		{ "nfs://s/e?mountport=0", "NAME=PORT" },
		{ "nfs://s/e?mountport=1&&", "NAME=PORT" },
		{ "nfs://s/e?=1", "unknown URL option" },
		{ "nfs://s:1/e?nfsport=2", "two NFS ports" },
	};
	unsigned i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct nfs_spec s;
		char err[128];
		int rc = nfs_spec_parse(cases[i].arg, &s, err, sizeof(err));

		if (rc != -EINVAL)
			fail_msg("'%s': %d, expected -EINVAL", cases[i].arg, rc);
		if (!strstr(err, cases[i].reason))
			fail_msg("'%s': message '%s' lacks '%s'", cases[i].arg, err,
				 cases[i].reason);
		assert_null(s.ns_host);
		assert_null(s.ns_path);
	}
}

static void test_join(void **state)
{
	static const char *const cases[][3] = {
		{ "/", "", "/" },
		{ "/", "/", "/" },
		{ "/", "a", "/a" },
		{ "/", "/a/b", "/a/b" },
		{ "/sub", "", "/sub" },
		{ "/sub", "/", "/sub" },
		{ "/sub", "f", "/sub/f" },
		{ "/sub", "//f", "/sub/f" },
		{ "/sub/", "d/f", "/sub/d/f" },
	};
	unsigned i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *p = nfs_spec_join(cases[i][0], cases[i][1]);

		assert_non_null(p);
		assert_string_equal(p, cases[i][2]);
		free(p);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good),
		cmocka_unit_test(test_bad),
		cmocka_unit_test(test_join),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
