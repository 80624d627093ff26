// SPDX-License-Identifier: MIT
/*
 * test_nfsd_conf.c - rpcrdma-nfsd's configuration (tools/nfsd/): the
 * command line and rpcrdma.conf(5) through the option table, which wins,
 * each class of problem told with its file and line, every problem told
 * (not just the first), and --check on exports files (a missing
 * directory, an empty file, "HOST (OPTS)" with a space, a syntax error).
 * The expected messages and numbers are worked out from the ranges the
 * man page gives (credits 1..4096, threads 1..1024, ports 1..65535).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "nfsd_opts.h"

struct fx {
	char dir[64];
	char conf[96], exports[96];
	char *log;
	size_t loglen;
	FILE *logf;
	struct nfsd_conf cf;
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	strcpy(f->dir, "/tmp/test_nfsd_conf.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->conf, sizeof(f->conf), "%s/rpcrdma.conf", f->dir);
	snprintf(f->exports, sizeof(f->exports), "%s/exports", f->dir);
	f->logf = open_memstream(&f->log, &f->loglen);
	assert_non_null(f->logf);
	nfsd_conf_init(&f->cf, f->logf);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	char cmd[128];

	nfsd_conf_free(&f->cf);
	fclose(f->logf);
	free(f->log);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
	assert_int_equal(system(cmd), 0);
	free(f);
	return 0;
}

static void write_file(const char *path, const char *text)
{
	FILE *fp = fopen(path, "w");

	assert_non_null(fp);
	fputs(text, fp);
	fclose(fp);
}

/* load with @argv (NULL-terminated, without the program name) */
static int load(struct fx *f, const char *const *args)
{
	char *argv[32] = { "rpcrdma-nfsd" };
	int argc = 1, ret;

	for (; args && *args; args++)
		argv[argc++] = (char *)*args;
	ret = nfsd_conf_load(&f->cf, argc, argv, f->conf);
	fflush(f->logf);
	return ret;
}

static void assert_told(struct fx *f, const char *text)
{
	if (!f->log || !strstr(f->log, text))
		fail_msg("not told: \"%s\"; told:\n%s", text, f->log ? f->log : "");
}

/* the file gives values, the command line overrides some of them */
static void test_cmdline_overrides_file(void **state)
{
	struct fx *f = *state;
	const char *args[] = { "--credits", "32", "--no-tcp", "--allow", "10.1.0.0/16", NULL };

	write_file(f->conf, "# a comment\n[nfsd]\ncredits = 64\nthreads = 8\n"
		   "tcp = yes\nallow = 10.0.0.0/8 192.168.0.0/16\nexport = /srv\n"
		   "[lockd]\ngrace = 0\n[statd]\nnsm-port = 32765\n");
	assert_int_equal(load(f, args), 0);
	assert_int_equal(f->cf.nc_problems, 0);
	assert_int_equal(nfsd_u(&f->cf, NFSD_CREDITS, 0), 32);
	assert_int_equal(f->cf.nc_v[NFSD_CREDITS].nv_from, NFSD_FROM_CMDLINE);
	assert_int_equal(nfsd_u(&f->cf, NFSD_THREADS, 0), 8);
	assert_int_equal(f->cf.nc_v[NFSD_THREADS].nv_from, NFSD_FROM_FILE);
	assert_int_equal(f->cf.nc_v[NFSD_THREADS].nv_line, 4);
	assert_true(nfsd_flag(&f->cf, NFSD_NO_TCP)); /* tcp = yes lost to --no-tcp */
	/* the command line's --allow replaces the file's list */
	assert_int_equal(f->cf.nc_v[NFSD_ALLOW].nv_n, 1);
	assert_string_equal(f->cf.nc_v[NFSD_ALLOW].nv_list[0], "10.1.0.0/16");
	assert_string_equal(nfsd_s(&f->cf, NFSD_EXPORT), "/srv");
	assert_true(nfsd_is_set(&f->cf, NFSD_GRACE));
	assert_int_equal(nfsd_u(&f->cf, NFSD_GRACE, 90), 0);
	assert_int_equal(nfsd_u(&f->cf, NFSD_NSM_PORT, 0), 32765);
	/* unset: the defaults */
	assert_int_equal(nfsd_u(&f->cf, NFSD_PORT, 20049), 20049);
	assert_false(nfsd_flag(&f->cf, NFSD_NO_NFS4));
	assert_false(nfsd_flag(&f->cf, NFSD_POLL));
	assert_string_equal(f->cf.nc_path, f->conf);
}

/* the file's list, blank-separated; --export on the command line beats
 * the file's exports (one choice) */
static void test_file_list_and_export_choice(void **state)
{
	struct fx *f = *state;
	const char *args[] = { "--export", "/srv", NULL };

	write_file(f->conf, "[nfsd]\nexports = /x/exports\n");
	assert_int_equal(load(f, args), 0);
	assert_string_equal(nfsd_s(&f->cf, NFSD_EXPORT), "/srv");
	assert_null(nfsd_s(&f->cf, NFSD_EXPORTS));
}

/* each class of problem in the file, all told, each with its line */
static void test_file_problems(void **state)
{
	struct fx *f = *state;
	char want[256];

	write_file(f->conf,
		   "credits = 8\n"                  /* 1: before any section */
		   "[nfsd]\n"                        /* 2 */
		   "credits = 5000\n"                /* 3: out of range */
		   "threads = four\n"                /* 4: not a number */
		   "colour = blue\n"                 /* 5: unknown key */
		   "grace = 10\n"                    /* 6: a key of [lockd] */
		   "poll = maybe\n"                  /* 7: not yes or no */
		   "listen\n"                        /* 8: no '=' */
		   "[bogus]\n"                       /* 9 */
		   "x = 1\n"                         /* 10: unknown section */
		   "[lockd\n"                        /* 11: no ']' */
		   "[nfsd]\n"                        /* 12 */
		   "port = 20050\n"                  /* 13 */
		   "port = 20051\n"                  /* 14: twice */
		   "reply-post = sometimes\n"        /* 15: not a choice */
		   "memory = 1M\n");                 /* 16: below 64M */
	assert_int_equal(load(f, NULL), 2);
	assert_int_equal(f->cf.nc_problems, 12);
	snprintf(want, sizeof(want), "%s:1: credits: before any section (it belongs in [nfsd])", f->conf);
	assert_told(f, want);
	snprintf(want, sizeof(want), "%s:3: credits: 5000 is out of range 1..4096", f->conf);
	assert_told(f, want);
	snprintf(want, sizeof(want), "%s:4: threads: 'four' is not a number (range 1..1024)", f->conf);
	assert_told(f, want);
	snprintf(want, sizeof(want), "%s:5: unknown key 'colour' in [nfsd]", f->conf);
	assert_told(f, want);
	snprintf(want, sizeof(want), "%s:6: grace: not a key of [nfsd] (it belongs in [lockd])", f->conf);
	assert_told(f, want);
	snprintf(want, sizeof(want), "%s:7: poll: 'maybe' is not yes or no", f->conf);
	assert_told(f, want);
	snprintf(want, sizeof(want), "%s:8: expected KEY = VALUE or [SECTION]: listen", f->conf);
	assert_told(f, want);
	snprintf(want, sizeof(want), "%s:10: [bogus] x: unknown section", f->conf);
	assert_told(f, want);
	snprintf(want, sizeof(want), "%s:11: expected [SECTION]: no closing ']'", f->conf);
	assert_told(f, want);
	snprintf(want, sizeof(want), "%s:14: port: given twice (line 13 before)", f->conf);
	assert_told(f, want);
	snprintf(want, sizeof(want), "%s:15: reply-post: 'sometimes' is not one of auto, transport, worker", f->conf);
	assert_told(f, want);
	snprintf(want, sizeof(want), "%s:16: memory: 1M is out of range: at least 64M", f->conf);
	assert_told(f, want);
	/* the first port stays */
	assert_int_equal(nfsd_u(&f->cf, NFSD_PORT, 0), 20050);
}

/* a bad value in the file is told even where the command line wins */
static void test_file_checked_when_overridden(void **state)
{
	struct fx *f = *state;
	const char *args[] = { "--credits", "16", NULL };
	char want[256];

	write_file(f->conf, "[nfsd]\ncredits = 0\n");
	assert_int_equal(load(f, args), 2);
	snprintf(want, sizeof(want), "%s:2: credits: 0 is out of range 1..4096", f->conf);
	assert_told(f, want);
	assert_int_equal(nfsd_u(&f->cf, NFSD_CREDITS, 0), 16);
}

/* the command line's problems, all told; the option and range named */
static void test_cmdline_problems(void **state)
{
	struct fx *f = *state;
	const char *args[] = { "--credits", "5000", "--export", "/a", "--export", "/b",
			       "--nfs4", "--no-nfs4", "--bogus", "--port", "0", "extra", NULL };

	assert_int_equal(load(f, args), 2);
	assert_int_equal(f->cf.nc_problems, 6);
	assert_told(f, "rpcrdma-nfsd: --credits: 5000 is out of range 1..4096\n");
	assert_told(f, "rpcrdma-nfsd: --export given twice");
	assert_told(f, "rpcrdma-nfsd: --nfs4 and --no-nfs4 contradict each other\n");
	assert_told(f, "rpcrdma-nfsd: unknown option --bogus");
	assert_told(f, "rpcrdma-nfsd: --port: 0 is out of range 1..65535\n");
	assert_told(f, "rpcrdma-nfsd: unexpected argument: extra\n");
	/* the first --export stays */
	assert_string_equal(nfsd_s(&f->cf, NFSD_EXPORT), "/a");
}

/* options that need others, from the file and the command line */
static void test_cross(void **state)
{
	struct fx *f = *state;
	const char *args[] = { "--no-nfs4", NULL };
	char want[256];

	write_file(f->conf, "[nfsd]\nlease = 30\nexports = /e\nallow = 10.0.0.0/8\n"
		   "[capture]\ncapture-files = 3\n");
	assert_int_equal(load(f, args), 2);
	snprintf(want, sizeof(want), "lease (%s:2) and --no-nfs4: leases are NFSv4.1's", f->conf);
	assert_told(f, want);
	snprintf(want, sizeof(want), "capture-files (%s:6) needs --capture FILE", f->conf);
	assert_told(f, want);
	snprintf(want, sizeof(want), "allow (%s:4) goes with --export DIR", f->conf);
	assert_told(f, want);
	assert_int_equal(f->cf.nc_problems, 3);
}

/* --config FILE must exist; the default file need not */
static void test_config_missing(void **state)
{
	struct fx *f = *state;
	char path[128];
	const char *args[] = { "--config", path, NULL };

	assert_int_equal(load(f, NULL), 0); /* no default file: nothing read */
	assert_null(f->cf.nc_path);
	snprintf(path, sizeof(path), "%s/none.conf", f->dir);
	assert_int_equal(load(f, args), 2);
	assert_told(f, "none.conf: No such file or directory (--config)");
}

/* --check: the exports file's every problem with its line, exit 2 */
static void test_check_exports(void **state)
{
	struct fx *f = *state;
	char text[512], want[256];

	snprintf(text, sizeof(text), "[nfsd]\nexports = %s\n", f->exports);
	write_file(f->conf, text);
	snprintf(text, sizeof(text),
		 "# line 1\n"
		 "%s/missing 10.0.0.0/8(rw)\n"      /* 2: no such directory */
		 "%s 192.0.2.0/24 (rw,insecure)\n"  /* 3: the space */
		 "%s/x host(rw\n"                   /* 4: syntax */
		 "/tmp *(colour=blue)\n",           /* 5: unknown option */
		 f->dir, f->dir, f->dir);
	write_file(f->exports, text);
	assert_int_equal(load(f, NULL), 0);
	assert_int_equal(nfsd_check(&f->cf, "/nonexistent"), 2);
	fflush(f->logf);
	snprintf(want, sizeof(want), "%s:2: %s/missing: No such file or directory", f->exports, f->dir);
	assert_told(f, want);
	snprintf(want, sizeof(want), "%s:3: warning: (rw,insecure) stands alone: %s is exported to every host (*)",
		 f->exports, f->dir);
	assert_told(f, want);
	assert_told(f, "write 192.0.2.0/24(rw,insecure) without a space");
	snprintf(want, sizeof(want), "%s:4: unterminated quote or parenthesis", f->exports);
	assert_told(f, want);
	snprintf(want, sizeof(want), "%s:5: unknown option 'colour=blue'", f->exports);
	assert_told(f, want);
	assert_int_equal(f->cf.nc_problems, 4);
}

/* --check: an empty exports file is a problem; a clean one is not */
static void test_check_empty_and_clean(void **state)
{
	struct fx *f = *state;
	const char *args[] = { "--exports", f->exports, NULL };
	char text[256], want[256];

	write_file(f->exports, "# nothing\n\n");
	assert_int_equal(load(f, args), 0);
	assert_int_equal(nfsd_check(&f->cf, "/nonexistent"), 2);
	fflush(f->logf);
	snprintf(want, sizeof(want), "%s: no exports", f->exports);
	assert_told(f, want);

	nfsd_conf_free(&f->cf);
	nfsd_conf_init(&f->cf, f->logf);
	snprintf(text, sizeof(text), "%s 192.0.2.0/24(rw,no_root_squash) *(ro)\n", f->dir);
	write_file(f->exports, text);
	assert_int_equal(load(f, args), 0);
	assert_int_equal(nfsd_check(&f->cf, "/nonexistent"), 0);
	assert_int_equal(f->cf.nc_problems, 0);
}

/* --check with --export DIR: the directory must be there */
static void test_check_export_dir(void **state)
{
	struct fx *f = *state;
	const char *args[] = { "--export", "/nonexistent-rpcrdma-dir", NULL };

	assert_int_equal(load(f, args), 0);
	assert_int_equal(nfsd_check(&f->cf, "/nonexistent"), 2);
	fflush(f->logf);
	assert_told(f, "export directory /nonexistent-rpcrdma-dir: No such file or directory");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_cmdline_overrides_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_file_list_and_export_choice, setup, teardown),
		cmocka_unit_test_setup_teardown(test_file_problems, setup, teardown),
		cmocka_unit_test_setup_teardown(test_file_checked_when_overridden, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cmdline_problems, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cross, setup, teardown),
		cmocka_unit_test_setup_teardown(test_config_missing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_check_exports, setup, teardown),
		cmocka_unit_test_setup_teardown(test_check_empty_and_clean, setup, teardown),
		cmocka_unit_test_setup_teardown(test_check_export_dir, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
