// SPDX-License-Identifier: MIT
/*
 * test_nfs3_exports.c - the exports(5) parser (every option, every error)
 * and the per-call checks of rpcrdma_nfs3_server_dispatch(): the export a
 * handle names, the caller's entry (ACCES), ro (ROFS), squashing, a reload
 * that removes a client or an export, handles across exports.
 * The parser tests need nothing; the server tests run on each backend
 * (posix as root: file handles; memory, root or not).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netdb.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "test_nfs3_harness.h"

#include "nfs3/nfs3_internal.h"
#include "fs/fs_backend.h"

/* ---- parser ---- */

static struct rpcrdma_nfs3_exports *parse_ok(const char *text)
{
	struct rpcrdma_nfs3_exports *xt = NULL;
	char err[256];
	int ret = rpcrdma_nfs3_exports_parse("t", text, &xt, err, sizeof(err));

	if (ret)
		fail_msg("parse of \"%s\": %d %s", text, ret, err);
	return xt;
}

/* parse_err - @text must fail with @ret and a message containing @want. */
static void parse_err(const char *text, int ret, const char *want)
{
	struct rpcrdma_nfs3_exports *xt = NULL;
	char err[256];

	assert_int_equal(rpcrdma_nfs3_exports_parse("t", text, &xt, err,
						    sizeof(err)), ret);
	assert_null(xt);
	if (!strstr(err, want))
		fail_msg("error for \"%s\" is \"%s\", want \"%s\"", text, err, want);
}

static struct sockaddr_storage addr(const char *s, uint16_t port)
{
	struct sockaddr_storage ss = { 0 };
	struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;

	if (inet_pton(AF_INET, s, &s4->sin_addr) == 1) {
		s4->sin_family = AF_INET;
		s4->sin_port = htons(port);
	} else {
		assert_int_equal(inet_pton(AF_INET6, s, &s6->sin6_addr), 1);
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(port);
	}
	return ss;
}

static bool match(const struct rpcrdma_nfs3_exports *xt, unsigned i,
		  const char *a, struct rpcrdma_nfs3_xopts *o)
{
	struct sockaddr_storage ss = addr(a, 700);

	return rpcrdma_nfs3_exports_match(xt, i, (struct sockaddr *)&ss, o);
}

static void test_parse_defaults_and_options(void **state)
{
	struct rpcrdma_nfs3_exports *xt;
	struct rpcrdma_nfs3_xopts o;

	(void)state;
	/* exports(5) defaults: ro, root_squash, secure, anon 65534 */
	xt = parse_ok("/srv/a 10.0.0.1\n");
	assert_int_equal(rpcrdma_nfs3_exports_count(xt), 1);
	assert_string_equal(rpcrdma_nfs3_exports_path(xt, 0), "/srv/a");
	assert_true(match(xt, 0, "10.0.0.1", &o));
	assert_true(o.xo_ro);
	assert_int_equal(o.xo_squash, RPCRDMA_NFS3_ROOT_SQUASH);
	assert_false(o.xo_insecure);
	assert_int_equal(o.xo_anonuid, 65534);
	assert_int_equal(o.xo_anongid, 65534);
	assert_false(match(xt, 0, "10.0.0.2", &o));
	rpcrdma_nfs3_exports_free(xt);

	/* every option, each the last word on it */
	xt = parse_ok("/e1 h*.invalid.example(rw) 10.0.0.1(rw,no_root_squash,insecure,anonuid=7,anongid=8,sec=sys,fsid=42)\n"
		      "/e2 10.0.0.1(ro,all_squash) 10.0.0.2(rw,all_squash,no_all_squash,secure,sync,async,wdelay,no_wdelay,subtree_check,no_subtree_check,fsid=root)\n"
		      "/e3 10.0.0.1(no_root_squash,root_squash,insecure,secure,ro,rw)\n"
		      "/e4 10.0.0.1(sec=sys:sys)\n");
	assert_true(match(xt, 0, "10.0.0.1", &o));
	assert_false(o.xo_ro);
	assert_int_equal(o.xo_squash, RPCRDMA_NFS3_NO_ROOT_SQUASH);
	assert_true(o.xo_insecure);
	assert_int_equal(o.xo_anonuid, 7);
	assert_int_equal(o.xo_anongid, 8);
	assert_int_equal(xt->xt_specs[0].xs_id, 42);
	assert_true(xt->xt_specs[0].xs_have_fsid);
	assert_true(match(xt, 1, "10.0.0.1", &o));
	assert_true(o.xo_ro);
	assert_int_equal(o.xo_squash, RPCRDMA_NFS3_ALL_SQUASH);
	assert_true(match(xt, 1, "10.0.0.2", &o));
	assert_false(o.xo_ro);
	assert_int_equal(o.xo_squash, RPCRDMA_NFS3_ROOT_SQUASH); /* no_all_squash */
	assert_false(o.xo_insecure);
	assert_int_equal(xt->xt_specs[1].xs_id, 0);              /* fsid=root */
	assert_true(match(xt, 2, "10.0.0.1", &o));
	assert_false(o.xo_ro);
	assert_int_equal(o.xo_squash, RPCRDMA_NFS3_ROOT_SQUASH);
	assert_false(o.xo_insecure);
	assert_true(match(xt, 3, "10.0.0.1", &o));
	/* without fsid= an id from the path, never 0, distinct here */
	assert_int_not_equal(xt->xt_specs[2].xs_id, 0);
	assert_int_not_equal(xt->xt_specs[2].xs_id, xt->xt_specs[3].xs_id);
	rpcrdma_nfs3_exports_free(xt);
}

static void test_parse_syntax(void **state)
{
	struct rpcrdma_nfs3_exports *xt;
	struct rpcrdma_nfs3_xopts o;

	(void)state;
	/* comments, blank lines, continuations, quotes, escapes, defaults,
	 * trailing slashes, CRLF, a path with no client (the world) */
	xt = parse_ok("# comment\n"
		      "\n"
		      "   \t \n"
		      "\"/srv/with space\" -rw,no_root_squash 10.0.0.0/8 \\\n"
		      "    192.168.1.0/255.255.255.0(ro) # trailing comment\n"
		      "/srv/esc\\040aped/ (rw,insecure)\r\n"
		      "/srv/world\n"
		      "/srv/v6 fe80::/10(rw) ::1(ro)");
	assert_int_equal(rpcrdma_nfs3_exports_count(xt), 4);
	assert_string_equal(rpcrdma_nfs3_exports_path(xt, 0), "/srv/with space");
	assert_int_equal(xt->xt_specs[0].xs_line, 4);
	assert_true(match(xt, 0, "10.9.9.9", &o));
	assert_false(o.xo_ro);                              /* from -rw */
	assert_int_equal(o.xo_squash, RPCRDMA_NFS3_NO_ROOT_SQUASH);
	assert_true(match(xt, 0, "192.168.1.77", &o));
	assert_true(o.xo_ro);                               /* its own ro */
	assert_int_equal(o.xo_squash, RPCRDMA_NFS3_NO_ROOT_SQUASH);
	assert_false(match(xt, 0, "192.168.2.1", &o));
	assert_string_equal(rpcrdma_nfs3_exports_path(xt, 1), "/srv/esc aped");
	assert_int_equal(xt->xt_specs[1].xs_line, 6);
	assert_true(match(xt, 1, "203.0.113.5", &o));       /* "(opts)": everyone */
	assert_false(o.xo_ro);
	assert_true(o.xo_insecure);
	assert_true(match(xt, 2, "198.51.100.1", &o));      /* no client: everyone */
	assert_true(o.xo_ro);
	assert_true(match(xt, 3, "fe80::1", &o));
	assert_false(o.xo_ro);
	assert_true(match(xt, 3, "::1", &o));
	assert_true(o.xo_ro);
	assert_false(match(xt, 3, "10.0.0.1", &o));
	/* an IPv4-mapped peer matches an IPv4 entry */
	assert_true(match(xt, 0, "::ffff:10.1.2.3", &o));
	rpcrdma_nfs3_exports_free(xt);

	/* first match wins, in file order; host names and '*' */
	xt = parse_ok("/a 10.0.0.0/8(rw) 10.0.0.1(ro) localhost(rw,no_root_squash) *(ro,all_squash)\n");
	assert_false(xt->xt_wild); /* no wildcard: no name needed */
	assert_true(match(xt, 0, "10.0.0.1", &o));
	assert_false(o.xo_ro);
	assert_true(match(xt, 0, "127.0.0.1", &o));        /* localhost resolved */
	assert_int_equal(o.xo_squash, RPCRDMA_NFS3_NO_ROOT_SQUASH);
	assert_true(match(xt, 0, "203.0.113.9", &o));
	assert_int_equal(o.xo_squash, RPCRDMA_NFS3_ALL_SQUASH);
	rpcrdma_nfs3_exports_free(xt);

	/* a wildcard matches the confirmed name, with libc's resolver:
	 * "localhost" (test_names_* check the rules with a fake one) */
	xt = parse_ok("/a local*(rw) nomatch*.invalid(ro)\n");
	if (match(xt, 0, "127.0.0.1", &o)) { /* needs a resolver that knows it */
		assert_false(o.xo_ro);
		assert_true(match(xt, 0, "127.0.0.1", &o)); /* from the cache */
	}
	assert_true(xt->xt_wild);
	rpcrdma_nfs3_exports_free(xt);

	/* empty text: an empty table (the server refuses it) */
	xt = parse_ok("# nothing\n\n");
	assert_int_equal(rpcrdma_nfs3_exports_count(xt), 0);
	rpcrdma_nfs3_exports_free(xt);
}

static void test_parse_errors(void **state)
{
	char big[RPCRDMA_NFS3_EXPORTS_LINE_MAX + 16];
	char *many;
	size_t n = 0;

	(void)state;
	parse_err("/a 10.0.0.1(rw,bogus)\n", -EINVAL, "t:1: unknown option 'bogus'");
	parse_err("\n\n/a 10.0.0.1(nohide)\n", -EINVAL, "t:3: unknown option 'nohide'");
	parse_err("/a 10.0.0.1(rw=1)\n", -EINVAL, "unknown option 'rw=1'");
	parse_err("/a 10.0.0.1(anonuid=x)\n", -EINVAL, "t:1: anonuid=x");
	parse_err("/a 10.0.0.1(anonuid=-1)\n", -EINVAL, "anonuid=-1");
	parse_err("/a 10.0.0.1(anonuid=4294967295)\n", -EINVAL, "anonuid=4294967295");
	parse_err("/a 10.0.0.1(anongid=)\n", -EINVAL, "anongid=");
	parse_err("/a 10.0.0.1(anongid=99999999999)\n", -EINVAL, "anongid=");
	parse_err("/a 10.0.0.1(sec=krb5)\n", -EINVAL, "sec=krb5: only sec=sys");
	parse_err("/a 10.0.0.1(sec=sys:krb5p)\n", -EINVAL, "sec=krb5p");
	parse_err("/a 10.0.0.1(fsid=65536)\n", -EINVAL, "fsid=65536");
	parse_err("/a 10.0.0.1(fsid=0a1b2c3d-0000-0000-0000-000000000000)\n", -EINVAL,
		  "UUIDs are not supported");
	parse_err("/a 10.0.0.1(fsid=1) 10.0.0.2(fsid=2)\n", -EINVAL,
		  "already has fsid=1");
	parse_err("/a 10.0.0.1(fsid=5)\n/b *(fsid=5)\n", -EINVAL,
		  "t:2: /b and /a (line 1) have the same id 5");
	parse_err("/a 10.0.0.1()\n", -EINVAL, "empty option list");
	parse_err("/a 10.0.0.1(rw\n", -EINVAL, "unterminated");
	parse_err("/a 10.0.0.1)rw(\n", -EINVAL, "unterminated");
	parse_err("\"/a 10.0.0.1\n", -EINVAL, "unterminated");
	parse_err("/a 10.0.0.1(rw)(ro)\n", -EINVAL, "expected CLIENT(OPTIONS)");
	parse_err("/a 10.0.0.1(rw)x\n", -EINVAL, "expected CLIENT(OPTIONS)");
	parse_err("a 10.0.0.1\n", -EINVAL, "t:1: a: the export path must be absolute");
	parse_err("/a\\09x *\n", -EINVAL, "bad \\ooo escape");
	parse_err("/a\\000 *\n", -EINVAL, "bad \\ooo escape");
	parse_err("/a *\n/a/ 10.0.0.1\n", -EINVAL, "t:2: /a is exported twice (line 1)");
	parse_err("/a 10.0.0.1 -rw\n", -EINVAL, "default options must come before");
	parse_err("/a -bogus 10.0.0.1\n", -EINVAL, "unknown option 'bogus'");
	parse_err("/a @trusted(rw)\n", -EINVAL, "netgroups are not supported");
	parse_err("/a 10.0.0.0/33\n", -EINVAL, "10.0.0.0/33: not ADDR/PREFIX");
	parse_err("/a 10.0.0.0/255.0.255.0\n", -EINVAL, "not ADDR/PREFIX or ADDR/NETMASK");
	parse_err("/a fe80::/ffff::\n", -EINVAL, "not ADDR/PREFIX or ADDR/NETMASK");
	parse_err("/a no-such-host.invalid\n", -ENOENT, "t:1: client no-such-host.invalid");

	memset(big, 'x', sizeof(big) - 1);
	big[0] = '/';
	big[sizeof(big) - 1] = '\0';
	parse_err(big, -E2BIG, "t:1: line longer than");

	many = malloc(65536);
	assert_non_null(many);
	for (unsigned i = 0; i <= RPCRDMA_NFS3_EXPORTS_MAX; i++)
		n += (size_t)sprintf(many + n, "/e%u *(fsid=%u)\n", i, i + 1);
	parse_err(many, -E2BIG, "more than 256 exports");
	n = (size_t)sprintf(many, "/a");
	for (unsigned i = 0; i <= RPCRDMA_NFS3_CLIENTS_MAX; i++)
		n += (size_t)sprintf(many + n, " 10.0.%u.%u", i / 256, i % 256);
	parse_err(many, -E2BIG, "more than 256 clients for /a");
	free(many);
}

/*
 * backend=NAME: an option of the whole export (every entry of a line that
 * names one names the same), posix when no entry names one; an unknown
 * name is refused naming it; rpcrdma_nfs3_export_open() takes nc_backend.
 */
static void test_parse_backend(void **state)
{
	struct rpcrdma_nfs3_config cfg = { 0 };
	struct rpcrdma_nfs3_export *exp = NULL;
	struct rpcrdma_nfs3_exports *xt;
	struct rpcrdma_nfs3_xopts o;
	char dir[] = "/tmp/rpcrdma-xbackend-XXXXXX";

	(void)state;
	xt = parse_ok("/a 10.0.0.1(rw,backend=posix) 10.0.0.2(ro)\n"
		      "/b 10.0.0.1\n"
		      "/c -backend=posix,rw 10.0.0.1(backend=posix) 10.0.0.2\n");
	assert_ptr_equal(xt->xt_specs[0].xs_be, &fs_posix_backend);
	assert_ptr_equal(xt->xt_specs[1].xs_be, &fs_posix_backend); /* the default */
	assert_ptr_equal(xt->xt_specs[2].xs_be, &fs_posix_backend);
	/* not a client option: both entries keep their own */
	assert_true(match(xt, 0, "10.0.0.1", &o));
	assert_false(o.xo_ro);
	assert_true(match(xt, 0, "10.0.0.2", &o));
	assert_true(o.xo_ro);
	rpcrdma_nfs3_exports_free(xt);

	parse_err("/a 10.0.0.1(backend=ceph)\n", -EINVAL,
		  "t:1: backend=ceph: no such backend");
	parse_err("/a *\n/b 10.0.0.1(rw) 10.0.0.2(backend=)\n", -EINVAL,
		  "t:2: backend=: no such backend");
	parse_err("/a -backend=Posix 10.0.0.1\n", -EINVAL, "backend=Posix: no such backend");
	/* two backends for one export (with a second backend built in) */
	if (fs_backend_find("memory")) {
		parse_err("/a 10.0.0.1(backend=posix) 10.0.0.2(backend=memory)\n",
			  -EINVAL, "t:1: backend=memory: the export already has backend=posix");
		parse_err("/a -backend=memory 10.0.0.1 10.0.0.2(backend=posix)\n",
			  -EINVAL, "t:1: backend=posix: the export already has backend=memory");
		/* the backend's own options, after colons; one export, one set */
		xt = parse_ok("/m 10.0.0.1(rw,backend=memory:bytes=1M:nodes=64) 10.0.0.2\n"
			      "/n -backend=memory 10.0.0.1\n");
		assert_ptr_equal(xt->xt_specs[0].xs_be, fs_backend_find("memory"));
		assert_string_equal(xt->xt_specs[0].xs_be_opts, "bytes=1M,nodes=64");
		assert_string_equal(xt->xt_specs[1].xs_be_opts, "");
		rpcrdma_nfs3_exports_free(xt);
		parse_err("/a 10.0.0.1(backend=memory:bytes=1M) 10.0.0.2(backend=memory:bytes=2M)\n",
			  -EINVAL, "t:1: backend=memory:bytes=2M: the export already has backend=memory with bytes=1M");
		/* options are the backend's to judge: at export open */
		cfg.nc_export = "/m";
		cfg.nc_fcache_entries = RPCRDMA_NFS3_FCACHE_OFF;
		cfg.nc_backend = "memory:bytes=1M:nodes=64";
		assert_int_equal(rpcrdma_nfs3_export_open(&cfg, &exp), 0);
		assert_string_equal(exp->ex_be_opts, "bytes=1M,nodes=64");
		{
			/* a second export of the path (a reload with new
			 * limits): its limits become the shared tree's */
			struct rpcrdma_nfs3_export *exp2 = NULL;
			struct fs_fentry local, *root = NULL;
			struct fs_statfs sf;
			struct fs_call c = { 0 };
			struct stat st;

			cfg.nc_backend = "memory:bytes=2M";
			assert_int_equal(rpcrdma_nfs3_export_open(&cfg, &exp2), 0);
			c.c_exp = exp;
			assert_int_equal(fs_root(exp, &local, &root, &st), 0);
			assert_int_equal(fs_statfs(&c, root, &sf), 0);
			assert_int_equal(sf.sf_bytes, 2u << 20);
			assert_int_equal(sf.sf_files, 64);
			fs_fcache_put(root);
			rpcrdma_nfs3_export_close(exp2);
		}
		rpcrdma_nfs3_export_close(exp);
		cfg.nc_backend = "memory:colour=blue";
		assert_int_equal(rpcrdma_nfs3_export_open(&cfg, &exp), -EINVAL);
		cfg.nc_backend = "memory:bytes=0";
		assert_int_equal(rpcrdma_nfs3_export_open(&cfg, &exp), -EINVAL);
	} else {
		parse_err("/a 10.0.0.1(backend=posix) 10.0.0.2(backend=memory)\n",
			  -EINVAL, "t:1: backend=memory: no such backend");
	}
	{
		char big[FS_BE_OPTS_MAX + 40];

		snprintf(big, sizeof(big), "/a 10.0.0.1(backend=memory:bytes=%0*d)\n",
			 (int)FS_BE_OPTS_MAX, 1);
		parse_err(big, -EINVAL, "options over 127 bytes");
	}
	assert_ptr_equal(fs_backend_find("posix"), &fs_posix_backend);
	assert_null(fs_backend_find("ceph"));
	assert_null(fs_backend_find(NULL));

	/* the configuration's backend: NULL and "posix" are posix */
	assert_non_null(mkdtemp(dir));
	cfg.nc_export = dir;
	cfg.nc_fcache_entries = RPCRDMA_NFS3_FCACHE_OFF;
	cfg.nc_backend = "ceph";
	assert_int_equal(rpcrdma_nfs3_export_open(&cfg, &exp), -EINVAL);
	cfg.nc_backend = "posix:bytes=1M"; /* posix takes no options */
	assert_int_equal(rpcrdma_nfs3_export_open(&cfg, &exp), -EINVAL);
	cfg.nc_backend = "posix";
	if (rpcrdma_nfs3_export_open(&cfg, &exp) == 0) { /* as root */
		assert_ptr_equal(exp->ex_be, &fs_posix_backend);
		rpcrdma_nfs3_export_close(exp);
		cfg.nc_backend = NULL;
		assert_int_equal(rpcrdma_nfs3_export_open(&cfg, &exp), 0);
		assert_ptr_equal(exp->ex_be, &fs_posix_backend);
		rpcrdma_nfs3_export_close(exp);
	}
	rmdir(dir);
}

/*
 * An export path cephfs://[USER@]FSNAME/PATH selects the cephfs backend:
 * clients mount /PATH, the backend gets "fs=FSNAME,user=USER" (USER
 * "admin" when none) and then backend=cephfs:...'s own options.  Built
 * without libcephfs, both forms are refused saying so.
 */
static void test_parse_cephfs_url(void **state)
{
	const struct fs_backend *ceph = fs_backend_find("cephfs");
	struct rpcrdma_nfs3_exports *xt;

	(void)state;
	if (!ceph) {
		parse_err("cephfs://cephfs/projects 10.0.0.1(rw)\n", -EINVAL,
			  "t:1: cephfs://cephfs/projects: rpcrdma was built without libcephfs");
		parse_err("/p 10.0.0.1(backend=cephfs:conf=/etc/ceph/ceph.conf)\n", -EINVAL,
			  "t:1: backend=cephfs:conf=/etc/ceph/ceph.conf: rpcrdma was built without libcephfs");
		parse_err("/p -backend=cephfs *\n", -EINVAL,
			  "t:1: backend=cephfs: rpcrdma was built without libcephfs");
		return;
	}
	xt = parse_ok("cephfs://cephfs/projects 192.0.2.0/24(rw,fsid=7)\n"
		      "cephfs://nfs@fs2/a/b/ *\n"
		      "cephfs://fs.3 *\n"
		      "cephfs://gw_1@fs-4/x -backend=cephfs:conf=/etc/ceph/c.conf:keyring=/k *\n"
		      "/p 10.0.0.1(backend=cephfs:fs=cephfs)\n");
	assert_int_equal(xt->xt_n, 5);
	assert_string_equal(xt->xt_specs[0].xs_path, "/projects");
	assert_ptr_equal(xt->xt_specs[0].xs_be, ceph);
	assert_string_equal(xt->xt_specs[0].xs_be_opts, "fs=cephfs,user=admin");
	assert_int_equal(xt->xt_specs[0].xs_id, 7);
	assert_string_equal(xt->xt_specs[1].xs_path, "/a/b");
	assert_string_equal(xt->xt_specs[1].xs_be_opts, "fs=fs2,user=nfs");
	assert_string_equal(xt->xt_specs[2].xs_path, "/");
	assert_string_equal(xt->xt_specs[2].xs_be_opts, "fs=fs.3,user=admin");
	assert_string_equal(xt->xt_specs[3].xs_path, "/x");
	assert_string_equal(xt->xt_specs[3].xs_be_opts,
			    "fs=fs-4,user=gw_1,conf=/etc/ceph/c.conf,keyring=/k");
	assert_ptr_equal(xt->xt_specs[4].xs_be, ceph);
	assert_string_equal(xt->xt_specs[4].xs_be_opts, "fs=cephfs");
	rpcrdma_nfs3_exports_free(xt);

	parse_err("cephfs:///x *\n", -EINVAL,
		  "t:1: cephfs:///x: expected cephfs://[USER@]FSNAME/PATH");
	parse_err("cephfs://@fs/x *\n", -EINVAL, "t:1: cephfs://@fs/x: expected");
	parse_err("cephfs://u@/x *\n", -EINVAL, "t:1: cephfs://u@/x: expected");
	parse_err("cephfs://a!b/x *\n", -EINVAL, "t:1: cephfs://a!b/x: expected");
	parse_err("cephfs://u@v@fs/x *\n", -EINVAL, "t:1: cephfs://u@v@fs/x: expected");
	parse_err("cephfs:// *\n", -EINVAL, "t:1: cephfs://: expected");
	parse_err("cephfs://fs/x 10.0.0.1(backend=posix)\n", -EINVAL,
		  "t:1: cephfs://fs/x: a cephfs:// export cannot have backend=posix");
	parse_err("cephfs://fs/x *\ncephfs://other/x *\n", -EINVAL,
		  "t:2: /x is exported twice (line 1)");
}

static void test_load_file(void **state)
{
	char path[] = "/tmp/nfs3exports.XXXXXX";
	struct rpcrdma_nfs3_exports *xt = NULL;
	char err[256];
	int fd;

	(void)state;
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "/x 10.0.0.1(rw)\n/y 10.0.0.1(wat)\n", 33), 33);
	close(fd);
	assert_int_equal(rpcrdma_nfs3_exports_load(path, &xt, err, sizeof(err)), -EINVAL);
	/* the message names the file and the line */
	assert_true(strncmp(err, path, strlen(path)) == 0);
	assert_non_null(strstr(err, ":2: unknown option 'wat'"));
	fd = open(path, O_WRONLY | O_TRUNC);
	assert_int_equal(write(fd, "/x 10.0.0.1(rw)\n", 16), 16);
	close(fd);
	assert_int_equal(rpcrdma_nfs3_exports_load(path, &xt, err, sizeof(err)), 0);
	assert_int_equal(rpcrdma_nfs3_exports_count(xt), 1);
	rpcrdma_nfs3_exports_free(xt);
	/* a NUL byte, and a file over 1 MiB */
	fd = open(path, O_WRONLY | O_TRUNC);
	assert_int_equal(write(fd, "/x *\n\0/y *\n", 11), 11);
	close(fd);
	assert_int_equal(rpcrdma_nfs3_exports_load(path, &xt, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "NUL"));
	assert_int_equal(truncate(path, (1 << 20) + 1), 0);
	assert_int_equal(rpcrdma_nfs3_exports_load(path, &xt, err, sizeof(err)), -EFBIG);
	assert_non_null(strstr(err, path));
	unlink(path);
	assert_int_equal(rpcrdma_nfs3_exports_load(path, &xt, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, path));
}

/* ---- the server: per-call checks ---- */

struct s_env {
	char dir[64];           /* export A (rw for 10.0.0.1, ro for 10.0.0.2) */
	char sub[96];           /* export B, inside A (all_squash for 10.0.0.1) */
	struct rpcrdma_nfs3_server *srv;
	struct t_call c;
};

/*
 * s_table - the table @fmt (export A's directory, then B's) describes, on
 * the backend under test: each line's first options name it
 * (backend=NAME).
 */
static struct rpcrdma_nfs3_exports *s_table(struct s_env *e, const char *fmt)
{
	struct rpcrdma_nfs3_exports *xt = NULL;
	char text[512], be[1024], err[256];
	size_t n = 0;

	snprintf(text, sizeof(text), fmt, e->dir, e->sub);
	for (const char *line = text; *line; ) {
		const char *end = strchr(line, '\n');
		const char *paren = memchr(line, '(', end ? (size_t)(end - line) : strlen(line));
		size_t len = end ? (size_t)(end - line) + 1 : strlen(line);

		if (paren && line[0] != '#') { /* "...(" backend=NAME, "...)" */
			n += (size_t)snprintf(be + n, sizeof(be) - n, "%.*sbackend=%s,",
					      (int)(paren + 1 - line), line,
					      t_be_names[t_be_cur]);
			len -= (size_t)(paren + 1 - line);
			line = paren + 1;
		}
		n += (size_t)snprintf(be + n, sizeof(be) - n, "%.*s", (int)len, line);
		line += len;
		assert_true(n < sizeof(be));
	}
	be[n] = '\0';
	if (rpcrdma_nfs3_exports_parse("test", be, &xt, err, sizeof(err)))
		fail_msg("%s", err);
	return xt;
}

#define S_TABLE "%s 10.0.0.1(rw,no_root_squash,fsid=1) 10.0.0.2(ro,no_root_squash)\n" \
		"%s 10.0.0.1(rw,all_squash,anonuid=1234,anongid=4321,fsid=2)\n"

/* s_setup_idle - the server of S_TABLE, its caches swept every @idle_ms. */
static int s_setup_idle(void **state, uint32_t idle_ms)
{
	struct s_env *e = calloc(1, sizeof(*e));
	struct rpcrdma_nfs3_config cfg = { .nc_fcache_idle_ms = idle_ms };
	struct rpcrdma_nfs3_exports *xt;

	if (!e)
		return -1;
	if (t_make_dir(e->dir, sizeof(e->dir), "/tmp", "nfs3exp"))
		return -1;
	/* posix: B is a directory of A's file system; memory: its own tree */
	snprintf(e->sub, sizeof(e->sub), "%s/sub", e->dir);
	if (!t_memory() && (mkdir(e->sub, 0777) || chmod(e->sub, 0777)))
		return -1;
	for (unsigned i = 0; i < sizeof(cfg.nc_key); i++)
		cfg.nc_key[i] = (uint8_t)(i * 5 + 3);
	xt = s_table(e, S_TABLE);
	if (rpcrdma_nfs3_server_create(&cfg, xt, &e->srv, NULL, 0))
		return -1;
	rpcrdma_nfs3_exports_free(xt);
	*state = e;
	return 0;
}

static int s_setup(void **state)
{
	return s_setup_idle(state, 0);
}

static int s_setup_sweep(void **state)
{
	return s_setup_idle(state, 200);
}

static int s_teardown(void **state)
{
	struct s_env *e = *state;

	rpcrdma_nfs3_server_destroy(e->srv);
	t_fs_remove_tree(e->dir);
	t_free(&e->c);
	free(e);
	return 0;
}

/* s_begin - a call of @proc as @uid from @peer. */
static struct t_call *s_begin(struct s_env *e, uint32_t proc, uint32_t uid,
			      const char *peer)
{
	struct t_call *c = &e->c;

	t_begin(c, proc, uid, uid);
	c->req.rq_peer = addr(peer, 800);
	return c;
}

/* s_dispatch - t_run() through rpcrdma_nfs3_server_dispatch(). */
static int s_dispatch(struct t_call *c, struct rpcrdma_nfs3_server *srv)
{
	memset(c->res, 0xee, T_RES_BYTES);
	rpcrdma_xdr_init(&c->req.rq_args, c->args, c->alen);
	rpcrdma_xdr_init(&c->req.rq_res, c->res, T_RES_BYTES);
	c->ret = rpcrdma_nfs3_server_dispatch(&c->req, srv);
	/* the test's own file operations run as root */
	rpcrdma_nfs3_thread_release();
	c->rlen = c->req.rq_res.xs_pos;
	c->rpos = 0;
	return c->ret;
}

static int s_run(struct s_env *e)
{
	return s_dispatch(&e->c, e->srv) == RPCRDMA_SVC_SUCCESS ? 0 : -1;
}

/* s_export - the export of @path in the table in force (the server's
 * table keeps it while the test runs). */
static struct rpcrdma_nfs3_export *s_export(struct s_env *e, const char *path)
{
	struct fs_snap *sn = fs_snap_get(e->srv);
	struct rpcrdma_nfs3_export *exp = NULL;

	for (unsigned i = 0; i < sn->sn_xt->xt_n; i++)
		if (!strcmp(sn->sn_exp[i]->ex_path, path))
			exp = sn->sn_exp[i];
	fs_snap_put(sn);
	assert_non_null(exp);
	return exp;
}

/*
 * The root handle of export @path as MNT makes it: the export's id in
 * bytes 2..3 under the server's MAC.  Made from the export the server has
 * open, through the internal table.
 */
static void root_fh(struct s_env *e, const char *path, uint8_t *fh, uint32_t *len)
{
	struct fs_snap *sn = fs_snap_get(e->srv);
	bool found = false;

	for (unsigned i = 0; i < sn->sn_xt->xt_n; i++) {
		if (strcmp(sn->sn_exp[i]->ex_path, path))
			continue;
		assert_int_equal(rpcrdma_nfs3_root_fh(sn->sn_exp[i], fh, len), 0);
		found = true;
	}
	fs_snap_put(sn);
	assert_true(found);
}

/* CREATE (UNCHECKED, mode 0644) of @name in @dir: status; @fh, @attr out. */
static uint32_t s_create(struct s_env *e, const uint8_t *dir, uint32_t dirlen,
			 const char *name, uint32_t uid, const char *peer,
			 uint8_t *fh, uint32_t *fhlen, struct t_fattr *a)
{
	struct t_call *c = s_begin(e, 8, uid, peer);
	uint32_t st;

	t_opaque(c, dir, dirlen);
	t_str(c, name);
	t_u32(c, 0);
	t_sattr_mode(c, 0644);
	assert_int_equal(s_run(e), 0);
	st = r_u32(c);
	if (st == 0) {
		uint32_t n;
		const uint8_t *p;

		assert_int_equal(r_u32(c), 1);
		p = r_opaque(c, &n);
		if (fh) {
			memcpy(fh, p, n);
			*fhlen = n;
		}
		assert_true(r_post_op(c, a));
	}
	r_wcc(c, NULL);
	assert_int_equal(c->rpos, c->rlen);
	return st;
}

/* GETATTR of @fh from @peer: status (@a filled on success). */
static uint32_t s_getattr(struct s_env *e, const uint8_t *fh, uint32_t fhlen,
			  const char *peer, struct t_fattr *a)
{
	struct t_call *c = s_begin(e, 1, 1000, peer);
	struct t_fattr dummy;
	uint32_t st;

	t_opaque(c, fh, fhlen);
	assert_int_equal(s_run(e), 0);
	st = r_u32(c);
	if (st == 0)
		r_fattr(c, a ? a : &dummy);
	assert_int_equal(c->rpos, c->rlen);
	return st;
}

/* LOOKUP @name in @dir from @peer: status (@fh out). */
static uint32_t s_lookup(struct s_env *e, const uint8_t *dir, uint32_t dirlen,
			 const char *name, const char *peer, uint8_t *fh,
			 uint32_t *fhlen)
{
	struct t_call *c = s_begin(e, 3, 1000, peer);
	uint32_t st;

	t_opaque(c, dir, dirlen);
	t_str(c, name);
	assert_int_equal(s_run(e), 0);
	st = r_u32(c);
	if (st == 0) {
		uint32_t n;
		const uint8_t *p = r_opaque(c, &n);

		memcpy(fh, p, n);
		*fhlen = n;
	}
	return st;
}

static void test_access_ro_squash(void **state)
{
	struct s_env *e = *state;
	uint8_t a[64], b[64], fh[64];
	uint32_t alen, blen, fhlen;
	struct t_fattr at;
	struct stat st;
	struct t_call *c;

	root_fh(e, e->dir, a, &alen);
	root_fh(e, e->sub, b, &blen);
	assert_int_equal(a[3], 1); /* fsid=1 */
	assert_int_equal(b[3], 2);

	/* rw entry, no_root_squash: root creates as root */
	assert_int_equal(s_create(e, a, alen, "f", 0, "10.0.0.1", fh, &fhlen, &at), 0);
	assert_int_equal(at.uid, 0);
	/* ro entry: NFS3ERR_ROFS, nothing made; reading still works */
	assert_int_equal(s_create(e, a, alen, "g", 0, "10.0.0.2", NULL, NULL, NULL), 30);
	assert_int_equal(t_fs_lstat(s_export(e, e->dir), e->dir, "g", &st), -ENOENT);
	assert_int_equal(s_getattr(e, fh, fhlen, "10.0.0.2", &at), 0);
	/* ro: WRITE, SETATTR, REMOVE, COMMIT refused */
	c = s_begin(e, 7, 0, "10.0.0.2");
	t_opaque(c, fh, fhlen);
	t_u64(c, 0);
	t_u32(c, 3);
	t_u32(c, 2);
	t_opaque(c, "abc", 3);
	assert_int_equal(s_run(e), 0);
	assert_int_equal(r_u32(c), 30);
	c = s_begin(e, 2, 0, "10.0.0.2");
	t_opaque(c, fh, fhlen);
	t_sattr_mode(c, 0600);
	t_u32(c, 0);
	assert_int_equal(s_run(e), 0);
	assert_int_equal(r_u32(c), 30);
	c = s_begin(e, 12, 0, "10.0.0.2");
	t_opaque(c, a, alen);
	t_str(c, "f");
	assert_int_equal(s_run(e), 0);
	assert_int_equal(r_u32(c), 30);
	c = s_begin(e, 21, 0, "10.0.0.2");
	t_opaque(c, fh, fhlen);
	t_u64(c, 0);
	t_u32(c, 0);
	assert_int_equal(s_run(e), 0);
	assert_int_equal(r_u32(c), 30);
	assert_int_equal(t_fs_lstat(s_export(e, e->dir), e->dir, "f", &st), 0);
	/* ro: ACCESS grants read but no modify/extend/delete, even to root */
	c = s_begin(e, 4, 0, "10.0.0.2");
	t_opaque(c, a, alen);
	t_u32(c, 0x3f);
	assert_int_equal(s_run(e), 0);
	assert_int_equal(r_u32(c), 0);
	assert_true(r_post_op(c, NULL));
	assert_int_equal(r_u32(c), 0x01 | 0x02); /* READ, LOOKUP */
	c = s_begin(e, 4, 0, "10.0.0.1");
	t_opaque(c, a, alen);
	t_u32(c, 0x3f);
	assert_int_equal(s_run(e), 0);
	assert_int_equal(r_u32(c), 0);
	assert_true(r_post_op(c, NULL));
	assert_int_equal(r_u32(c), 0x1f); /* a directory has no EXECUTE */

	/* a client no entry lists: NFS3ERR_ACCES, also on B */
	assert_int_equal(s_getattr(e, a, alen, "10.0.0.3", NULL), 13);
	assert_int_equal(s_getattr(e, b, blen, "10.0.0.2", NULL), 13);

	/* all_squash with anonuid/anongid on B: root and 1000 both 1234:4321 */
	assert_int_equal(s_create(e, b, blen, "r", 0, "10.0.0.1", NULL, NULL, &at), 0);
	assert_int_equal(at.uid, 1234);
	assert_int_equal(at.gid, 4321);
	assert_int_equal(s_create(e, b, blen, "u", 1000, "10.0.0.1", NULL, NULL, &at), 0);
	assert_int_equal(at.uid, 1234);
	assert_int_equal(at.gid, 4321);
	assert_int_equal(t_fs_lstat(s_export(e, e->sub), e->sub, "u", &st), 0);
	assert_int_equal(st.st_uid, 1234);
}

static void test_handles_across_exports(void **state)
{
	struct s_env *e = *state;
	uint8_t a[64], b[64], viaA[64], forged[64], fh[64];
	uint32_t alen, blen, vlen, fhlen;
	struct t_fattr x, y;
	struct t_call *c;

	root_fh(e, e->dir, a, &alen);
	root_fh(e, e->sub, b, &blen);

	/*
	 * B's root reached from A is a handle of A (id 1), not of B.  (On
	 * memory B is a tree of its own: A's "sub" is only a directory of A,
	 * made here, the same path.)
	 */
	if (t_memory())
		assert_int_equal(t_fs_mkdir(s_export(e, e->dir), e->dir, "sub", 0777), 0);
	assert_int_equal(s_lookup(e, a, alen, "sub", "10.0.0.1", viaA, &vlen), 0);
	assert_int_equal(viaA[3], 1);
	assert_int_equal(s_getattr(e, viaA, vlen, "10.0.0.2", &x), 0); /* A lists .2 */
	assert_int_equal(s_getattr(e, b, blen, "10.0.0.1", &y), 0);
	if (!t_memory()) /* one directory: A's "sub" is B's root */
		assert_true(x.fileid == y.fileid);
	/* ".." of B's root stays in B: the nested export never leads out */
	assert_int_equal(s_lookup(e, b, blen, "..", "10.0.0.1", fh, &fhlen), 0);
	assert_int_equal(fhlen, blen);
	assert_memory_equal(fh, b, blen);

	/* A's handle relabelled as B's (id 2): the MAC fails, BADHANDLE */
	memcpy(forged, viaA, vlen);
	forged[3] = 2;
	assert_int_equal(s_getattr(e, forged, vlen, "10.0.0.1", NULL), 10001);
	/* an id no export has: STALE */
	forged[3] = 9;
	assert_int_equal(s_getattr(e, forged, vlen, "10.0.0.1", NULL), 70);

	/* RENAME from A into B: a second handle of another export, XDEV */
	assert_int_equal(s_create(e, a, alen, "mv", 0, "10.0.0.1", NULL, NULL, NULL), 0);
	c = s_begin(e, 14, 0, "10.0.0.1");
	t_opaque(c, a, alen);
	t_str(c, "mv");
	t_opaque(c, b, blen);
	t_str(c, "mv");
	assert_int_equal(s_run(e), 0);
	assert_int_equal(r_u32(c), 18);
}

static void test_reload(void **state)
{
	struct s_env *e = *state;
	struct rpcrdma_nfs3_exports *xt;
	uint8_t a[64], b[64], fh[64];
	uint32_t alen, blen, fhlen;
	struct sockaddr_storage p1 = addr("10.0.0.1", 1), p2 = addr("10.0.0.2", 1);
	struct sockaddr_storage p9 = addr("10.0.0.9", 1);
	struct fs_snap *held;
	char err[256];

	root_fh(e, e->dir, a, &alen);
	root_fh(e, e->sub, b, &blen);
	assert_int_equal(s_create(e, a, alen, "keep", 0, "10.0.0.1", fh, &fhlen, NULL), 0);
	assert_true(rpcrdma_nfs3_server_allows((struct sockaddr *)&p2, e->srv));
	assert_false(rpcrdma_nfs3_server_allows((struct sockaddr *)&p9, e->srv));

	/* a call in progress keeps the table it started with */
	held = fs_snap_get(e->srv);

	/* 10.0.0.2 loses A; B is removed; A keeps its id */
	xt = s_table(e, "%s 10.0.0.1(rw,no_root_squash,fsid=1)\n");
	assert_int_equal(rpcrdma_nfs3_server_reload(e->srv, xt, err, sizeof(err)), 0);
	rpcrdma_nfs3_exports_free(xt);
	assert_int_equal(s_getattr(e, fh, fhlen, "10.0.0.2", NULL), 13); /* ACCES */
	assert_int_equal(s_getattr(e, fh, fhlen, "10.0.0.1", NULL), 0);  /* same handle */
	assert_int_equal(s_getattr(e, b, blen, "10.0.0.1", NULL), 70);   /* STALE */
	assert_false(rpcrdma_nfs3_server_allows((struct sockaddr *)&p2, e->srv));
	assert_true(rpcrdma_nfs3_server_allows((struct sockaddr *)&p1, e->srv));
	/* the old table's exports are still open for the call holding it */
	assert_int_equal(held->sn_xt->xt_n, 2);
	if (!t_memory())
		assert_true(held->sn_exp[1]->ex_fd >= 0);
	else
		assert_non_null(held->sn_exp[1]->ex_be_priv);
	fs_snap_put(held);

	/*
	 * B back with the same fsid: its old handles work again.  A memory
	 * tree lives while an export serves it: B's went with its export
	 * (the call holding the old table let it go), and B comes back empty.
	 */
	xt = s_table(e, S_TABLE);
	assert_int_equal(rpcrdma_nfs3_server_reload(e->srv, xt, err, sizeof(err)), 0);
	rpcrdma_nfs3_exports_free(xt);
	assert_int_equal(s_getattr(e, b, blen, "10.0.0.1", NULL), t_memory() ? 70 : 0);
	if (t_memory())
		root_fh(e, e->sub, b, &blen);

	/* a table that cannot be served leaves the old one in force (posix:
	 * a directory that is not there; a memory export needs none) */
	if (!t_memory()) {
		xt = s_table(e, "%s/none *(fsid=3)\n");
		assert_int_equal(rpcrdma_nfs3_server_reload(e->srv, xt, err, sizeof(err)),
				 -ENOENT);
		assert_non_null(strstr(err, "/none"));
		rpcrdma_nfs3_exports_free(xt);
	}
	xt = s_table(e, "# no exports\n");
	assert_int_equal(rpcrdma_nfs3_server_reload(e->srv, xt, err, sizeof(err)), -EINVAL);
	rpcrdma_nfs3_exports_free(xt);
	assert_int_equal(s_getattr(e, b, blen, "10.0.0.1", NULL), 0);
}

/*
 * Four threads call GETATTR from 10.0.0.2 while the main thread reloads
 * between two tables: S_TABLE, which exports the directory to 10.0.0.2
 * (read-only), and one that exports it to 10.0.0.1 only.  Every answer
 * must be OK (0) or ACCES (13) -- whichever table a call saw whole --
 * and nothing else (a call that saw half a table, a freed export, a
 * dispatch error); both answers must have been seen, so the calls did
 * overlap both tables.  A thread stops at the first other answer and
 * keeps it in r_bad.
 */
struct r_arg {
	struct s_env *e;
	uint8_t fh[64];
	uint32_t fhlen;
	atomic_bool *stop;
	atomic_uint *ok, *acces;
	int r_bad;       /* -1: none; else the status, or 1000 + dispatch's */
};

static void *r_thread(void *p)
{
	struct r_arg *r = p;
	struct t_call c = { 0 };

	r->r_bad = -1;
	while (!atomic_load(r->stop)) {
		uint32_t st;
		int d;

		t_begin(&c, 1, 1000, 1000);
		c.req.rq_peer = addr("10.0.0.2", 1);
		t_opaque(&c, r->fh, r->fhlen);
		d = s_dispatch(&c, r->e->srv);
		if (d != RPCRDMA_SVC_SUCCESS) {
			r->r_bad = 1000 + d;
			break;
		}
		st = r_u32(&c);
		if (st == 0) {
			atomic_fetch_add(r->ok, 1);
		} else if (st == 13) {
			atomic_fetch_add(r->acces, 1);
		} else {
			r->r_bad = (int)st;
			break;
		}
	}
	t_free(&c);
	return NULL;
}

static void test_reload_concurrent(void **state)
{
	struct s_env *e = *state;
	struct rpcrdma_nfs3_exports *x1 = s_table(e, S_TABLE);
	struct rpcrdma_nfs3_exports *x2 = s_table(e, "%s 10.0.0.1(rw,fsid=1)\n");
	atomic_bool stop = false;
	atomic_uint ok = 0, acces = 0;
	struct r_arg r[4];
	pthread_t th[4];
	int i;

	for (i = 0; i < 4; i++) {
		memset(&r[i], 0, sizeof(r[i]));
		r[i].e = e;
		r[i].stop = &stop;
		r[i].ok = &ok;
		r[i].acces = &acces;
		root_fh(e, e->dir, r[i].fh, &r[i].fhlen);
		assert_int_equal(pthread_create(&th[i], NULL, r_thread, &r[i]), 0);
	}
	/* 400 reloads at least; then on until both answers were seen (a
	 * bound of 20000 reloads, not a time: a slow machine only takes
	 * longer) */
	for (i = 0; i < 20000; i++) {
		if (i >= 400 && atomic_load(&ok) && atomic_load(&acces))
			break;
		assert_int_equal(rpcrdma_nfs3_server_reload(e->srv, i % 2 ? x1 : x2,
							    NULL, 0), 0);
		if (i % 64 == 63)
			sched_yield();
	}
	atomic_store(&stop, true);
	for (i = 0; i < 4; i++) {
		pthread_join(th[i], NULL);
		if (r[i].r_bad != -1)
			print_error("thread %d: answer %d\n", i, r[i].r_bad);
		assert_int_equal(r[i].r_bad, -1);
	}
	assert_true(atomic_load(&ok) > 0);
	assert_true(atomic_load(&acces) > 0);
	rpcrdma_nfs3_exports_free(x1);
	rpcrdma_nfs3_exports_free(x2);
}

/* wait_swept - poll the server's counters until no entry is cached
 * (10 s at most); the counters, and the ms waited in *@ms. */
static struct rpcrdma_nfs3_fcache_stats wait_swept(struct s_env *e, long *ms)
{
	struct rpcrdma_nfs3_fcache_stats s;
	struct timespec t0, t1;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int i = 0; i < 2000; i++) {
		assert_int_equal(rpcrdma_nfs3_server_fcache_stats(e->srv, &s), 0);
		if (!s.fcs_entries && !s.fcs_dir_entries)
			break;
		usleep(5000);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	*ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
	return s;
}

/*
 * The server's sweeper (200 ms period) closes what no call uses, with no
 * call to prompt it: a file CREATE left in the open-file cache, and the
 * directory it was made in, are still cached right after the call and
 * gone within a few periods, not before one has passed (a sweeper that
 * spun, or took the period for seconds, fails here); the file's handle
 * still answers.  After a reload that brings in a new export object, the
 * sweeper sweeps that one too (it follows the table in force).
 */
static void test_idle_sweeper(void **state)
{
	struct s_env *e = *state;
	struct rpcrdma_nfs3_fcache_stats s;
	struct rpcrdma_nfs3_exports *xt;
	uint8_t a[64], b[64], fh[64];
	uint32_t alen, blen, fhlen;
	char err[256];
	long ms;

	root_fh(e, e->dir, a, &alen);
	assert_int_equal(s_create(e, a, alen, "swept", 0, "10.0.0.1", fh, &fhlen, NULL), 0);
	assert_int_equal(rpcrdma_nfs3_server_fcache_stats(e->srv, &s), 0);
	assert_int_equal(s.fcs_entries, 1);
	assert_int_equal(s.fcs_dir_entries, 1);
	s = wait_swept(e, &ms);
	assert_int_equal(s.fcs_entries, 0);
	assert_int_equal(s.fcs_dir_entries, 0);
	assert_int_equal(s.fcs_expired, 1);
	assert_true(s.fcs_dir_expired >= 1);
	assert_true(ms >= 100);
	assert_int_equal(s_getattr(e, fh, fhlen, "10.0.0.1", NULL), 0);

	/* export B under another fsid: a new export object */
	xt = s_table(e, "%s 10.0.0.1(rw,no_root_squash,fsid=1) 10.0.0.2(ro,no_root_squash)\n"
		     "%s 10.0.0.1(rw,all_squash,anonuid=1234,anongid=4321,fsid=3)\n");
	assert_int_equal(rpcrdma_nfs3_server_reload(e->srv, xt, err, sizeof(err)), 0);
	rpcrdma_nfs3_exports_free(xt);
	root_fh(e, e->sub, b, &blen);
	assert_int_equal(s_create(e, b, blen, "new", 0, "10.0.0.1", NULL, NULL, NULL), 0);
	assert_int_equal(rpcrdma_nfs3_server_fcache_stats(e->srv, &s), 0);
	assert_int_equal(s.fcs_entries, 2); /* and "swept" again, by GETATTR */
	s = wait_swept(e, &ms);
	assert_int_equal(s.fcs_entries, 0);
	assert_int_equal(s.fcs_expired, 3); /* A's two, and B's new one */
}


/* ---- host names for wildcard entries (fs_hostname.c), with a fake
 * resolver: a reverse table, a forward table, a gate that holds reverse
 * lookups, and a clock ---- */

struct fk_ptr {
	const char *fp_addr;
	const char *fp_name; /* NULL: EAI_NONAME; "AGAIN": EAI_AGAIN */
};

struct fk_fwd {
	const char *ff_name;
	const char *ff_addrs[3];
};

static struct {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct fk_ptr ptr[16];
	struct fk_fwd fwd[8];
	bool gate_closed;
	bool closing;                  /* the test ends: nothing is held or hangs */
	unsigned active;               /* calls of the fake under way */
	unsigned hang_epoch;           /* a hanging lookup ends when it changes */
	const char *released[8];       /* hanging addresses let go */
	char log[32][INET6_ADDRSTRLEN]; /* the addresses of the reverse lookups, in order */
	unsigned ptr_calls, fwd_calls, inline_calls;
	pthread_t test_thread;
	_Atomic uint64_t now;
	/* The callers' waits for a lookup (fk_cond_timedwait): with
	 * wait_seam set, a wait returns at once as if its deadline had come,
	 * counted in waits, its deadline kept in wait_dl; only the test's
	 * own thread waits then (transport threads never do). */
	bool wait_seam;
	unsigned waits;
	struct timespec wait_dl[4];
} fk = { .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER };

static _Thread_local bool fk_transport; /* "this thread is a transport thread" */

/* Reverse zones that do not answer: 198.51.100.0/24 and 10.0.0.0/8; their
 * lookups hang until let go (fk_release) or the test ends, then fail for
 * now (EAI_AGAIN).  fk.lock held. */
static bool fk_hangs(const char *a)
{
	return !fk.closing && (!strncmp(a, "198.51.100.", 11) || !strncmp(a, "10.", 3));
}

static bool fk_released(const char *a)
{
	for (unsigned i = 0; i < 8 && fk.released[i]; i++)
		if (!strcmp(fk.released[i], a))
			return true;
	return false;
}

static int fk_getnameinfo(const struct sockaddr *sa, socklen_t salen, char *host,
			  socklen_t hostlen, char *serv, socklen_t servlen, int flags)
{
	char a[INET6_ADDRSTRLEN];
	struct timespec dl;
	int rc = EAI_NONAME;

	(void)salen;
	(void)serv;
	(void)servlen;
	assert_true(flags & NI_NAMEREQD);
	inet_ntop(sa->sa_family, sa->sa_family == AF_INET ?
		  (const void *)&((const struct sockaddr_in *)sa)->sin_addr :
		  (const void *)&((const struct sockaddr_in6 *)sa)->sin6_addr, a, sizeof(a));
	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_sec += 10; /* a lookup that ran where it must not fails the test, not hangs it */
	pthread_mutex_lock(&fk.lock);
	if (fk.ptr_calls < 32)
		snprintf(fk.log[fk.ptr_calls], sizeof(fk.log[0]), "%s", a);
	fk.ptr_calls++;
	if (pthread_equal(pthread_self(), fk.test_thread) || fk_transport)
		fk.inline_calls++;
	fk.active++;
	pthread_cond_broadcast(&fk.cond);
	while (fk.gate_closed && !fk.closing)
		if (pthread_cond_timedwait(&fk.cond, &fk.lock, &dl) == ETIMEDOUT)
			break;
	if (fk_hangs(a)) {
		unsigned epoch = fk.hang_epoch;

		while (fk.hang_epoch == epoch && !fk_released(a) && !fk.closing)
			if (pthread_cond_timedwait(&fk.cond, &fk.lock, &dl) == ETIMEDOUT)
				break;
		fk.active--;
		pthread_mutex_unlock(&fk.lock);
		return EAI_AGAIN;
	}
	for (unsigned i = 0; i < 16 && fk.ptr[i].fp_addr; i++) {
		if (strcmp(fk.ptr[i].fp_addr, a))
			continue;
		if (!fk.ptr[i].fp_name)
			break;
		if (!strcmp(fk.ptr[i].fp_name, "AGAIN")) {
			rc = EAI_AGAIN;
			break;
		}
		snprintf(host, hostlen, "%s", fk.ptr[i].fp_name);
		rc = 0;
		break;
	}
	fk.active--;
	pthread_mutex_unlock(&fk.lock);
	return rc;
}

static int fk_getaddrinfo(const char *node, const char *service,
			  const struct addrinfo *hints, struct addrinfo **res)
{
	struct addrinfo *head = NULL, **tail = &head;
	int rc = EAI_NONAME;

	(void)service;
	(void)hints;
	pthread_mutex_lock(&fk.lock);
	fk.fwd_calls++;
	if (pthread_equal(pthread_self(), fk.test_thread) || fk_transport)
		fk.inline_calls++;
	fk.active++; /* a call under way: fk_teardown checks none is left */
	for (unsigned i = 0; i < 8 && fk.fwd[i].ff_name; i++) {
		if (strcasecmp(fk.fwd[i].ff_name, node))
			continue;
		for (unsigned j = 0; j < 3 && fk.fwd[i].ff_addrs[j]; j++) {
			struct addrinfo *ai = calloc(1, sizeof(*ai) + sizeof(struct sockaddr_storage));
			struct sockaddr_storage *ss = (struct sockaddr_storage *)(ai + 1);

			assert_non_null(ai);
			*ss = addr(fk.fwd[i].ff_addrs[j], 0);
			ai->ai_family = ss->ss_family;
			ai->ai_socktype = SOCK_STREAM;
			ai->ai_addr = (struct sockaddr *)ss;
			ai->ai_addrlen = ss->ss_family == AF_INET ? sizeof(struct sockaddr_in) :
								    sizeof(struct sockaddr_in6);
			*tail = ai;
			tail = &ai->ai_next;
		}
		rc = head ? 0 : EAI_NODATA;
		break;
	}
	fk.active--;
	pthread_mutex_unlock(&fk.lock);
	*res = head;
	return rc;
}

static void fk_freeaddrinfo(struct addrinfo *ai)
{
	while (ai) {
		struct addrinfo *next = ai->ai_next;

		free(ai);
		ai = next;
	}
}

static uint64_t fk_now(void)
{
	return atomic_load(&fk.now);
}

static bool fk_on_transport(void)
{
	return fk_transport;
}

/* A caller's wait for a lookup: the real one, or with fk.wait_seam the
 * deadline reached at once (recorded), so that no test waits for time. */
static int fk_cond_timedwait(pthread_cond_t *cond, pthread_mutex_t *mutex,
			     const struct timespec *abstime)
{
	if (!fk.wait_seam)
		return pthread_cond_timedwait(cond, mutex, abstime);
	assert_true(pthread_equal(pthread_self(), fk.test_thread));
	if (fk.waits < 4)
		fk.wait_dl[fk.waits] = *abstime;
	fk.waits++;
	return ETIMEDOUT;
}

static const struct fs_resolver fk_resolver = {
	.nr_getnameinfo = fk_getnameinfo,
	.nr_getaddrinfo = fk_getaddrinfo,
	.nr_freeaddrinfo = fk_freeaddrinfo,
	.nr_now_ns = fk_now,
	.nr_on_transport = fk_on_transport,
	.nr_cond_timedwait = fk_cond_timedwait,
};

#define SEC 1000000000ull

/* The test zone (RFC 5737 / 3849 addresses): good.example.com is
 * 192.0.2.10 and 2001:db8::10 both ways; 192.0.2.66's reverse zone claims
 * good.example.com too, but the name's forward lookup does not list it;
 * 192.0.2.67 claims a name without a forward record; 192.0.2.68's
 * reverse record is an address; 192.0.2.11 is host.other.org both ways;
 * 192.0.2.12 has no reverse record; 192.0.2.13's lookups fail for now. */
static unsigned fk_count(const unsigned *field);

static void fk_reset(void)
{
	static const struct fk_ptr ptr[] = {
		{ "192.0.2.10", "good.example.com" },
		{ "2001:db8::10", "good.example.com" },
		{ "192.0.2.66", "good.example.com" },
		{ "192.0.2.67", "evil.example.com" },
		{ "192.0.2.68", "192.0.2.68" },
		{ "192.0.2.11", "host.other.org" },
		{ "192.0.2.12", NULL },
		{ "192.0.2.13", "AGAIN" },
	};
	static const struct fk_fwd fwd[] = {
		{ "good.example.com", { "192.0.2.10", "2001:db8::10" } },
		{ "host.other.org", { "192.0.2.11" } },
		{ "late.example.com", { "192.0.2.12" } },
	};

	pthread_mutex_lock(&fk.lock);
	memset(fk.ptr, 0, sizeof(fk.ptr));
	memset(fk.fwd, 0, sizeof(fk.fwd));
	memcpy(fk.ptr, ptr, sizeof(ptr));
	memcpy(fk.fwd, fwd, sizeof(fwd));
	fk.gate_closed = false;
	fk.closing = false;
	memset(fk.released, 0, sizeof(fk.released));
	memset(fk.log, 0, sizeof(fk.log));
	fk.ptr_calls = fk.fwd_calls = fk.inline_calls = 0;
	fk.test_thread = pthread_self();
	fk.wait_seam = false;
	fk.waits = 0;
	memset(fk.wait_dl, 0, sizeof(fk.wait_dl));
	pthread_mutex_unlock(&fk.lock);
	atomic_store(&fk.now, 1000 * SEC);
	fk_transport = false;
	fs_names_set_resolver(&fk_resolver);
	/* nothing of an earlier test's lookups is under way in the fake:
	 * its calls and log are this test's alone */
	assert_int_equal(fk_count(&fk.active), 0);
}

static int fk_setup(void **state)
{
	(void)state;
	fk_reset();
	return 0;
}

/*
 * fk_teardown - every lookup held or hanging ends, and none begun from
 * here on is held (a resolver finishing one may take the next queued
 * before the cache is reset: it must not hang into the next test); the
 * cache reset waits until the fake is left (fs_names_set_resolver()), so
 * the next test's counts and log are its own.
 */
static int fk_teardown(void **state)
{
	(void)state;
	pthread_mutex_lock(&fk.lock);
	fk.gate_closed = false;
	fk.closing = true;
	fk.hang_epoch++; /* hanging lookups end */
	pthread_cond_broadcast(&fk.cond);
	pthread_mutex_unlock(&fk.lock);
	fk_transport = false;
	fs_names_set_resolver(NULL);
	assert_int_equal(fk_count(&fk.active), 0);
	return 0;
}

static void fk_set_ptr(const char *a, const char *name)
{
	pthread_mutex_lock(&fk.lock);
	for (unsigned i = 0; i < 16; i++) {
		if (!fk.ptr[i].fp_addr || !strcmp(fk.ptr[i].fp_addr, a)) {
			fk.ptr[i].fp_addr = a;
			fk.ptr[i].fp_name = name;
			break;
		}
	}
	pthread_mutex_unlock(&fk.lock);
}

static void fk_gate(bool closed)
{
	pthread_mutex_lock(&fk.lock);
	fk.gate_closed = closed;
	pthread_cond_broadcast(&fk.cond);
	pthread_mutex_unlock(&fk.lock);
}

/* fk_release - the hanging lookup of @a ends (EAI_AGAIN). */
static void fk_release(const char *a)
{
	pthread_mutex_lock(&fk.lock);
	for (unsigned i = 0; i < 8; i++) {
		if (!fk.released[i]) {
			fk.released[i] = a;
			break;
		}
	}
	pthread_cond_broadcast(&fk.cond);
	pthread_mutex_unlock(&fk.lock);
}

/* fk_logged - the address of the @i-th reverse lookup ("" if none yet). */
static const char *fk_logged(unsigned i)
{
	static char a[INET6_ADDRSTRLEN];

	pthread_mutex_lock(&fk.lock);
	memcpy(a, fk.log[i], sizeof(a));
	pthread_mutex_unlock(&fk.lock);
	return a;
}

static unsigned fk_count(const unsigned *field)
{
	unsigned v;

	pthread_mutex_lock(&fk.lock);
	v = *field;
	pthread_mutex_unlock(&fk.lock);
	return v;
}

/* fk_wait_ptr_calls - wait (10 s at most) until @n reverse lookups began. */
static void fk_wait_ptr_calls(unsigned n)
{
	struct timespec dl;

	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_sec += 10;
	pthread_mutex_lock(&fk.lock);
	while (fk.ptr_calls < n)
		if (pthread_cond_timedwait(&fk.cond, &fk.lock, &dl) == ETIMEDOUT)
			break;
	pthread_mutex_unlock(&fk.lock);
	assert_int_equal(fk_count(&fk.ptr_calls), n);
}

/* names_wait_resolved - wait (10 s at most) until @n lookups ended. */
static void names_wait_resolved(uint64_t n)
{
	struct fs_names_stats st;
	struct timespec ts = { 0, 1000000 };

	for (unsigned i = 0; i < 10000; i++) {
		fs_names_get_stats(&st);
		if (st.ns_confirmed + st.ns_no_name >= n)
			return;
		nanosleep(&ts, NULL);
	}
	fail_msg("%llu of %llu lookups ended in 10 s",
		 (unsigned long long)(st.ns_confirmed + st.ns_no_name), (unsigned long long)n);
}

/* names_wait_confirmed - wait (10 s at most) until @n lookups gave a name. */
static void names_wait_confirmed(uint64_t n)
{
	struct fs_names_stats st;
	struct timespec ts = { 0, 1000000 };

	for (unsigned i = 0; i < 10000; i++) {
		fs_names_get_stats(&st);
		if (st.ns_confirmed >= n)
			return;
		nanosleep(&ts, NULL);
	}
	fail_msg("%llu of %llu names confirmed in 10 s", (unsigned long long)st.ns_confirmed,
		 (unsigned long long)n);
}

/* fs_name_of(@a): its result, the name in @buf. */
static enum fs_name_result name_of(const char *a, bool wait, char *buf, size_t len)
{
	struct sockaddr_storage ss = addr(a, 700);

	buf[0] = '\0';
	return fs_name_of((struct sockaddr *)&ss, wait, buf, len);
}

/* A wildcard matches a confirmed name only: the reverse lookup's name
 * must list the address in its forward lookup.  An address whose reverse
 * zone claims good.example.com without the forward zone agreeing, a name
 * with no forward record and an address literal as a name match nothing;
 * the entries after the wildcard still apply to them. */
static void test_names_confirmed(void **state)
{
	struct rpcrdma_nfs3_exports *xt;
	struct rpcrdma_nfs3_xopts o;
	struct fs_names_stats st;

	(void)state;
	xt = parse_ok("/a *.example.com(rw,no_root_squash) 192.0.2.0/24(ro)\n");
	assert_true(xt->xt_wild);
	assert_true(match(xt, 0, "192.0.2.10", &o));
	assert_false(o.xo_ro);
	assert_int_equal(o.xo_squash, RPCRDMA_NFS3_NO_ROOT_SQUASH);
	assert_true(match(xt, 0, "2001:db8::10", &o));
	assert_false(o.xo_ro);
	/* the spoofed reverse record: not the wildcard's entry, the net's */
	assert_true(match(xt, 0, "192.0.2.66", &o));
	assert_true(o.xo_ro);
	assert_true(match(xt, 0, "192.0.2.67", &o));
	assert_true(o.xo_ro);
	assert_true(match(xt, 0, "192.0.2.68", &o));
	assert_true(o.xo_ro);
	assert_true(match(xt, 0, "192.0.2.11", &o)); /* confirmed, other domain */
	assert_true(o.xo_ro);
	assert_true(match(xt, 0, "192.0.2.12", &o));
	assert_true(o.xo_ro);
	rpcrdma_nfs3_exports_free(xt);

	xt = parse_ok("/a *.example.com(rw)\n");
	assert_true(match(xt, 0, "192.0.2.10", &o));
	assert_false(match(xt, 0, "192.0.2.66", &o));
	assert_false(match(xt, 0, "192.0.2.67", &o));
	assert_false(match(xt, 0, "192.0.2.68", &o));
	assert_false(match(xt, 0, "192.0.2.12", &o));
	/* the same address mapped in IPv6: the same entry, no new lookup */
	assert_true(match(xt, 0, "::ffff:192.0.2.10", &o));
	rpcrdma_nfs3_exports_free(xt);
	fs_names_get_stats(&st);
	/* .10, ::10, .11 confirmed; .66, .67, .68, .12 not */
	assert_int_equal(st.ns_confirmed, 3);
	assert_int_equal(st.ns_no_name, 4);
	assert_int_equal(st.ns_queued, 7);
	assert_int_equal(fk_count(&fk.ptr_calls), 7);
	/* forward lookups: for .10, ::10, .66, .67, .11; none for the
	 * literal and for .12 */
	assert_int_equal(fk_count(&fk.fwd_calls), 5);
	assert_int_equal(fk_count(&fk.inline_calls), 0);
}

/* Answers are kept for their time to live, then looked up again: 300 s
 * for a name, 60 s for none, 5 s after a temporary failure.  A name past
 * its TTL is still served while it is looked up again (test_names_stale). */
static void test_names_ttl(void **state)
{
	struct rpcrdma_nfs3_exports *xt;
	struct rpcrdma_nfs3_xopts o;

	(void)state;
	assert_int_equal(FS_NAMES_TTL_SEC, 300);
	assert_int_equal(FS_NAMES_NEG_TTL_SEC, 60);
	assert_int_equal(FS_NAMES_AGAIN_TTL_SEC, 5);
	xt = parse_ok("/a *.example.com(rw)\n");

	/* a name: 300 s */
	assert_true(match(xt, 0, "192.0.2.10", &o));
	assert_int_equal(fk_count(&fk.ptr_calls), 1);
	fk_set_ptr("192.0.2.10", "host.other.org"); /* moved away */
	atomic_fetch_add(&fk.now, 299 * SEC);
	assert_true(match(xt, 0, "192.0.2.10", &o)); /* still cached */
	assert_int_equal(fk_count(&fk.ptr_calls), 1);
	atomic_fetch_add(&fk.now, 1 * SEC);
	assert_true(match(xt, 0, "192.0.2.10", &o)); /* served, looked up again */
	names_wait_resolved(2);
	assert_false(match(xt, 0, "192.0.2.10", &o)); /* the new answer */
	assert_int_equal(fk_count(&fk.ptr_calls), 2);

	/* none: 60 s */
	assert_false(match(xt, 0, "192.0.2.12", &o));
	assert_int_equal(fk_count(&fk.ptr_calls), 3);
	fk_set_ptr("192.0.2.12", "late.example.com");
	atomic_fetch_add(&fk.now, 59 * SEC);
	assert_false(match(xt, 0, "192.0.2.12", &o));
	assert_int_equal(fk_count(&fk.ptr_calls), 3);
	atomic_fetch_add(&fk.now, 1 * SEC);
	assert_true(match(xt, 0, "192.0.2.12", &o));
	assert_int_equal(fk_count(&fk.ptr_calls), 4);

	/* a temporary failure: 5 s */
	assert_false(match(xt, 0, "192.0.2.13", &o));
	assert_int_equal(fk_count(&fk.ptr_calls), 5);
	atomic_fetch_add(&fk.now, 4 * SEC);
	assert_false(match(xt, 0, "192.0.2.13", &o));
	assert_int_equal(fk_count(&fk.ptr_calls), 5);
	atomic_fetch_add(&fk.now, 1 * SEC);
	assert_false(match(xt, 0, "192.0.2.13", &o));
	assert_int_equal(fk_count(&fk.ptr_calls), 6);
	/* a reload keeps the cache: names belong to addresses */
	rpcrdma_nfs3_exports_free(xt);
	xt = parse_ok("/b good*.example.com(rw)\n");
	assert_true(match(xt, 0, "192.0.2.12", &o) == false); /* late.example.com */
	assert_int_equal(fk_count(&fk.ptr_calls), 6);
	rpcrdma_nfs3_exports_free(xt);
	assert_int_equal(fk_count(&fk.inline_calls), 0);
}

/* Stale while looked up again: a confirmed name past its 300 s TTL is
 * answered at once (a worker does not wait, a transport thread gets a
 * name, not "not known yet") while one lookup runs, for at most 300 s
 * more; a temporary failure of that lookup keeps the name (asked again
 * 5 s later), a final answer replaces it. */
static void test_names_stale(void **state)
{
	struct rpcrdma_nfs3_exports *xt;
	struct sockaddr_storage p10 = addr("192.0.2.10", 1);
	struct rpcrdma_nfs3_xopts o;
	struct fs_names_stats st;

	(void)state;
	assert_int_equal(FS_NAMES_STALE_SEC, 300);
	xt = parse_ok("/a *.example.com(rw)\n");
	assert_true(match(xt, 0, "192.0.2.10", &o)); /* t 1000: until 1300, stale until 1600 */
	assert_int_equal(fk_count(&fk.ptr_calls), 1);

	/* t 1300: past the TTL, the lookup held at the gate */
	fk_gate(true);
	atomic_fetch_add(&fk.now, 300 * SEC);
	fk_transport = true;
	assert_int_equal(fs_exports_match_peer(xt, 0, (struct sockaddr *)&p10, true, &o),
			 FS_XM_YES);
	fk_transport = false;
	fk_wait_ptr_calls(2);
	atomic_fetch_add(&fk.now, 299 * SEC); /* t 1599 */
	assert_true(match(xt, 0, "192.0.2.10", &o));
	fs_names_get_stats(&st);
	assert_int_equal(st.ns_stale, 2);
	assert_int_equal(st.ns_queued, 2); /* one lookup again, not one a call */
	/* t 1600: 300 s past the TTL, no longer served */
	atomic_fetch_add(&fk.now, 1 * SEC);
	fk_transport = true;
	assert_int_equal(fs_exports_match_peer(xt, 0, (struct sockaddr *)&p10, true, &o),
			 FS_XM_UNKNOWN);
	fk_transport = false;
	fk_gate(false);
	names_wait_resolved(2); /* t 1600: until 1900, stale until 2200 */
	assert_true(match(xt, 0, "192.0.2.10", &o));
	fs_names_get_stats(&st);
	assert_int_equal(st.ns_stale, 2);
	assert_int_equal(st.ns_confirmed, 2);

	/* t 1900: the lookup fails for now: the name is kept, asked again
	 * at 1905 */
	fk_set_ptr("192.0.2.10", "AGAIN");
	atomic_fetch_add(&fk.now, 300 * SEC);
	assert_true(match(xt, 0, "192.0.2.10", &o));
	names_wait_resolved(3);
	assert_true(match(xt, 0, "192.0.2.10", &o));
	assert_int_equal(fk_count(&fk.ptr_calls), 3);
	atomic_fetch_add(&fk.now, 5 * SEC); /* t 1905 */
	assert_true(match(xt, 0, "192.0.2.10", &o));
	names_wait_resolved(4);
	assert_int_equal(fk_count(&fk.ptr_calls), 4);
	/* t 1910: the reverse record is gone: served until the answer
	 * comes, then no name */
	fk_set_ptr("192.0.2.10", NULL);
	atomic_fetch_add(&fk.now, 5 * SEC);
	assert_true(match(xt, 0, "192.0.2.10", &o));
	names_wait_resolved(5);
	assert_false(match(xt, 0, "192.0.2.10", &o));
	assert_int_equal(fk_count(&fk.ptr_calls), 5);
	assert_int_equal(fk_count(&fk.inline_calls), 0);
	rpcrdma_nfs3_exports_free(xt);
}

/* The reviewer's case: 8 addresses of one network whose reverse zone does
 * not answer, asked again and again, must not keep a wildcard client from
 * its name.  One network holds one resolver (the others stay free) and 8
 * queued entries (a ninth address is not queued); the client's lookup is
 * taken at once, and 300 s later its name is served while looked up
 * again, the hanging zone still hanging. */
static void test_names_hanging_zone(void **state)
{
	char a[32], buf[FS_NAME_MAX + 1];
	struct fs_names_stats st;

	(void)state;
	assert_int_equal(FS_NAMES_NET_PENDING, 8);
	assert_int_equal(FS_NAMES_NET_RESOLVERS, 1);
	fk_transport = true; /* the attacker's calls come on a transport thread */
	for (unsigned round = 0; round < 3; round++) {
		for (unsigned i = 1; i <= 9; i++) {
			snprintf(a, sizeof(a), "198.51.100.%u", i);
			assert_int_equal(name_of(a, false, buf, sizeof(buf)), FS_NAME_PENDING);
		}
	}
	fs_names_get_stats(&st);
	assert_int_equal(st.ns_queued, 8);
	assert_int_equal(st.ns_net_full, 3); /* .9, each round */
	fk_wait_ptr_calls(1);
	assert_string_equal(fk_logged(0), "198.51.100.1");

	/* the client, on a transport thread: not known yet, queued, and
	 * taken by a free resolver while .1 hangs */
	assert_int_equal(name_of("192.0.2.10", false, buf, sizeof(buf)), FS_NAME_PENDING);
	names_wait_confirmed(1);
	assert_int_equal(name_of("192.0.2.10", false, buf, sizeof(buf)), FS_NAME_OK);
	assert_string_equal(buf, "good.example.com");
	assert_int_equal(fk_count(&fk.ptr_calls), 2);
	assert_string_equal(fk_logged(1), "192.0.2.10");

	/* 300 s on, the zone still hanging: the name at once, looked up again */
	atomic_fetch_add(&fk.now, 300 * SEC);
	for (unsigned i = 1; i <= 9; i++) {
		snprintf(a, sizeof(a), "198.51.100.%u", i);
		assert_int_equal(name_of(a, false, buf, sizeof(buf)), FS_NAME_PENDING);
	}
	assert_int_equal(name_of("192.0.2.10", false, buf, sizeof(buf)), FS_NAME_OK);
	assert_string_equal(buf, "good.example.com");
	names_wait_confirmed(2);
	assert_int_equal(name_of("192.0.2.10", false, buf, sizeof(buf)), FS_NAME_OK);
	assert_int_equal(fk_count(&fk.ptr_calls), 3);
	assert_string_equal(fk_logged(2), "192.0.2.10");
	fs_names_get_stats(&st);
	assert_int_equal(st.ns_queued, 10); /* 8 of the zone's, the client's twice */
	assert_int_equal(st.ns_stale, 1);
	assert_int_equal(fk_count(&fk.inline_calls), 0);
}

/* Hanging zones in 8 networks hold every resolver: a client queued after
 * them is the first lookup a resolver takes when one of them ends, before
 * a lookup queued later in a lower cache entry (oldest first), so it
 * waits for one hanging lookup at most. */
static void test_names_oldest_first(void **state)
{
	char a[32], buf[FS_NAME_MAX + 1];

	(void)state;
	assert_int_equal(FS_NAMES_RESOLVERS, 8);
	/* 192.0.2.11 in cache entry 0, named */
	assert_int_equal(name_of("192.0.2.11", true, buf, sizeof(buf)), FS_NAME_OK);
	assert_string_equal(buf, "host.other.org");
	fk_transport = true;
	for (unsigned i = 1; i <= 8; i++) {
		snprintf(a, sizeof(a), "10.%u.0.1", i);
		assert_int_equal(name_of(a, false, buf, sizeof(buf)), FS_NAME_PENDING);
	}
	fk_wait_ptr_calls(9); /* every resolver hangs */
	/* the client (entry 9), then 192.0.2.11 again (entry 0), 600 s
	 * later: past its TTL and stale bound */
	assert_int_equal(name_of("192.0.2.10", false, buf, sizeof(buf)), FS_NAME_PENDING);
	atomic_fetch_add(&fk.now, 600 * SEC);
	assert_int_equal(name_of("192.0.2.11", false, buf, sizeof(buf)), FS_NAME_PENDING);
	/* one hanging lookup ends: its resolver takes the client first */
	fk_release("10.1.0.1");
	names_wait_confirmed(3);
	assert_int_equal(fk_count(&fk.ptr_calls), 11);
	assert_string_equal(fk_logged(9), "192.0.2.10");
	assert_string_equal(fk_logged(10), "192.0.2.11");
	assert_int_equal(name_of("192.0.2.10", false, buf, sizeof(buf)), FS_NAME_OK);
	assert_string_equal(buf, "good.example.com");
	assert_int_equal(fk_count(&fk.inline_calls), 0);
}

/* Nanoseconds from @a to @b (CLOCK_REALTIME readings). */
static int64_t ts_diff_ns(const struct timespec *a, const struct timespec *b)
{
	return (int64_t)(b->tv_sec - a->tv_sec) * 1000000000 + (b->tv_nsec - a->tv_nsec);
}

/*
 * On a transport thread a miss does not wait and looks nothing up there:
 * "not known yet" at once, the lookup queued for a resolver thread (held
 * here at the gate); once it is answered, the transport thread matches
 * from the cache.  Off the transport thread a caller waits at most
 * FS_NAMES_WAIT_MS from when the lookup was queued.  No clock is waited
 * for: the callers' waits go through the seam (fk_cond_timedwait), which
 * records each wait's deadline and ends it at once, so the test asserts
 * whether a caller waited and until when, not how long it took.
 */
static void test_names_transport_thread(void **state)
{
	struct rpcrdma_nfs3_exports *xt;
	struct sockaddr_storage p10 = addr("192.0.2.10", 1), p11 = addr("192.0.2.11", 1);
	struct rpcrdma_nfs3_xopts o;
	struct fs_names_stats st;
	struct timespec before, after;
	const int64_t wait_ns = FS_NAMES_WAIT_MS * 1000000ll;

	(void)state;
	xt = parse_ok("/a *.example.com(rw) *.other.org(ro)\n");
	fk.wait_seam = true;
	fk_gate(true);
	fk_transport = true;
	assert_int_equal(fs_exports_match_peer(xt, 0, (struct sockaddr *)&p10, true, &o),
			 FS_XM_UNKNOWN);
	assert_false(rpcrdma_nfs3_exports_match(xt, 0, (struct sockaddr *)&p10, &o));
	/* never waited for the gate: no wait began, none timed out */
	assert_int_equal(fk.waits, 0);
	fs_names_get_stats(&st);
	assert_int_equal(st.ns_timeouts, 0);
	/* one lookup queued (not two), taken by a resolver thread */
	fk_wait_ptr_calls(1);
	fs_names_get_stats(&st);
	assert_int_equal(st.ns_queued, 1);
	fk_gate(false);
	names_wait_resolved(1);
	assert_int_equal(fs_exports_match_peer(xt, 0, (struct sockaddr *)&p10, false, &o),
			 FS_XM_YES);
	assert_false(o.xo_ro);
	assert_int_equal(fk_count(&fk.ptr_calls), 1);
	assert_int_equal(fk_count(&fk.inline_calls), 0);
	assert_int_equal(fk.waits, 0);

	/* a worker waits, but not for ever: the gate held, it waits once,
	 * until FS_NAMES_WAIT_MS after the lookup was queued (during its
	 * call), then "not known yet" */
	fk_transport = false;
	fk_gate(true);
	clock_gettime(CLOCK_REALTIME, &before);
	assert_int_equal(fs_exports_match_peer(xt, 0, (struct sockaddr *)&p11, true, &o),
			 FS_XM_UNKNOWN);
	clock_gettime(CLOCK_REALTIME, &after);
	assert_int_equal(fk.waits, 1);
	assert_true(ts_diff_ns(&before, &fk.wait_dl[0]) >= wait_ns);
	assert_true(ts_diff_ns(&after, &fk.wait_dl[0]) <= wait_ns);
	fs_names_get_stats(&st);
	assert_int_equal(st.ns_timeouts, 1);
	/* the next caller of the hanging lookup waits for the same deadline,
	 * not a new one: the wait counts from when the lookup was queued */
	assert_int_equal(fs_exports_match_peer(xt, 0, (struct sockaddr *)&p11, true, &o),
			 FS_XM_UNKNOWN);
	assert_int_equal(fk.waits, 2);
	assert_int_equal(fk.wait_dl[1].tv_sec, fk.wait_dl[0].tv_sec);
	assert_int_equal(fk.wait_dl[1].tv_nsec, fk.wait_dl[0].tv_nsec);
	fs_names_get_stats(&st);
	assert_int_equal(st.ns_timeouts, 2);
	assert_int_equal(st.ns_queued, 2);
	fk_gate(false);
	/* once answered, the answer, without waiting */
	names_wait_resolved(2);
	assert_int_equal(fs_exports_match_peer(xt, 0, (struct sockaddr *)&p11, true, &o),
			 FS_XM_YES);
	assert_true(o.xo_ro);
	assert_int_equal(fk.waits, 2);
	assert_int_equal(fk_count(&fk.ptr_calls), 2);
	assert_int_equal(fk_count(&fk.inline_calls), 0);
	rpcrdma_nfs3_exports_free(xt);
}

/* GETATTR of @fh from @peer, on the transport thread or a worker: its
 * nfsstat3, or -1 for RPCRDMA_SVC_DEFER. */
static int names_getattr(struct s_env *e, const uint8_t *fh, uint32_t fhlen,
			 const char *peer, bool transport)
{
	struct t_call *c = s_begin(e, 1, 0, peer);
	int ret;

	c->req.rq_transport = transport;
	fk_transport = transport;
	t_opaque(c, fh, fhlen);
	ret = s_dispatch(c, e->srv);
	fk_transport = false;
	if (ret == RPCRDMA_SVC_DEFER)
		return -1;
	assert_int_equal(ret, RPCRDMA_SVC_SUCCESS);
	return (int)r_u32(c);
}

/* The per-call check of a wildcard entry: on the transport thread a
 * caller whose name is not known yet is handed to a worker
 * (RPCRDMA_SVC_DEFER, nothing looked up on the transport thread) and its
 * connection let in; a worker waits FS_NAMES_WAIT_MS at most, then
 * answers NFS3ERR_JUKEBOX (RFC 1813 2.6: try again later); once the name
 * is confirmed both serve the call from the cache; the address whose
 * reverse record is not confirmed gets NFS3ERR_ACCES and no connection. */
static void test_names_dispatch(void **state)
{
	struct s_env *e = *state;
	struct rpcrdma_nfs3_exports *xt;
	struct sockaddr_storage p10 = addr("192.0.2.10", 1), p66 = addr("192.0.2.66", 1);
	uint8_t a[64];
	uint32_t alen;
	char err[256];

	fk_reset();
	xt = s_table(e, "%s *.example.com(rw,no_root_squash,fsid=1)\n"
		     "%s 10.0.0.1(rw,all_squash,anonuid=1234,anongid=4321,fsid=2)\n");
	assert_int_equal(rpcrdma_nfs3_server_reload(e->srv, xt, err, sizeof(err)), 0);
	rpcrdma_nfs3_exports_free(xt);
	root_fh(e, e->dir, a, &alen);

	fk_gate(true);
	fk_transport = true; /* a connection request, on the transport thread */
	assert_true(rpcrdma_nfs3_server_allows((struct sockaddr *)&p10, e->srv));
	fk_transport = false;
	assert_int_equal(names_getattr(e, a, alen, "192.0.2.10", true), -1);
	fk_wait_ptr_calls(1);
	assert_int_equal(names_getattr(e, a, alen, "192.0.2.10", false), 10008); /* JUKEBOX */
	fk_gate(false);
	names_wait_resolved(1);
	assert_int_equal(names_getattr(e, a, alen, "192.0.2.10", false), 0);
	assert_int_equal(names_getattr(e, a, alen, "192.0.2.10", true), 0);
	assert_int_equal(fk_count(&fk.ptr_calls), 1);

	assert_int_equal(names_getattr(e, a, alen, "192.0.2.66", false), 13); /* ACCES */
	assert_false(rpcrdma_nfs3_server_allows((struct sockaddr *)&p66, e->srv));
	fk_transport = true; /* known now: refused on the transport thread too */
	assert_false(rpcrdma_nfs3_server_allows((struct sockaddr *)&p66, e->srv));
	fk_transport = false;
	assert_int_equal(names_getattr(e, a, alen, "192.0.2.66", true), 13);
	assert_int_equal(fk_count(&fk.ptr_calls), 2);
	assert_int_equal(fk_count(&fk.inline_calls), 0);
	fk_teardown(NULL);
}

int main(void)
{
	const struct CMUnitTest parser[] = {
		cmocka_unit_test(test_parse_defaults_and_options),
		cmocka_unit_test(test_parse_syntax),
		cmocka_unit_test(test_parse_errors),
		cmocka_unit_test(test_parse_backend),
		cmocka_unit_test(test_parse_cephfs_url),
		cmocka_unit_test(test_load_file),
		cmocka_unit_test_setup_teardown(test_names_confirmed, fk_setup, fk_teardown),
		cmocka_unit_test_setup_teardown(test_names_ttl, fk_setup, fk_teardown),
		cmocka_unit_test_setup_teardown(test_names_transport_thread, fk_setup, fk_teardown),
		cmocka_unit_test_setup_teardown(test_names_stale, fk_setup, fk_teardown),
		cmocka_unit_test_setup_teardown(test_names_hanging_zone, fk_setup, fk_teardown),
		cmocka_unit_test_setup_teardown(test_names_oldest_first, fk_setup, fk_teardown),
	};
	static const struct t_case server[] = {
		T_CASE(test_access_ro_squash, s_setup, s_teardown, T_ANY),
		T_CASE(test_handles_across_exports, s_setup, s_teardown, T_ANY),
		T_CASE(test_reload, s_setup, s_teardown, T_ANY),
		T_CASE(test_reload_concurrent, s_setup, s_teardown, T_ANY),
		T_CASE(test_idle_sweeper, s_setup_sweep, s_teardown, T_ANY),
		T_CASE(test_names_dispatch, s_setup, s_teardown, T_ANY),
	};
	int fails = cmocka_run_group_tests_name("exports parser", parser, NULL, NULL);

	for (int be = 0; be < T_BE_COUNT; be++)
		fails += t_run_cases(be, "exports server", server, T_NCASES(server),
				     NULL, NULL);
	return t_exit(fails);
}
