// SPDX-License-Identifier: MIT
/*
 * test_verbs_provider.c - which verbs providers are loaded before the
 * first device listing (src/verbs/verbs_provider.c): the provider names
 * read from RDMA device names and kernel driver names, the provider file
 * found in a provider directory, and the scan over a made-up
 * /sys/class/infiniband (device directories, "device/driver" links) with
 * a loader that records instead of dlopen'ing.
 */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "verbs/verbs.h"

static void test_of_device(void **state)
{
	static const struct {
		const char *dev, *prov;
	} cases[] = {
		{ "rxe0", "rxe" },       { "rxe12", "rxe" },    { "mlx5_0", "mlx5" },
		{ "mlx5_11", "mlx5" },   { "bnxt_re3", "bnxt_re" }, { "siw_eth0", "siw_eth" },
		{ "efa_0", "efa" },      { "rocep1s0f0", "rocep1s0f" }, { "qedr", "qedr" },
		{ "mlx5_", "mlx5_" }, /* an '_' only goes with the digits it ends */
	};
	char out[64];
	unsigned i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_true(verbs_provider_of_device(cases[i].dev, out, sizeof(out)));
		assert_string_equal(out, cases[i].prov);
	}
	assert_false(verbs_provider_of_device("0", out, sizeof(out)));
	assert_false(verbs_provider_of_device("_0", out, sizeof(out)));
	assert_false(verbs_provider_of_device("", out, sizeof(out)));
	/* "rxe" and its NUL need 4 bytes */
	assert_false(verbs_provider_of_device("rxe0", out, 3));
	assert_true(verbs_provider_of_device("rxe0", out, 4));
}

static void test_of_driver(void **state)
{
	static const struct {
		const char *drv, *prov;
	} cases[] = {
		{ "mlx5_core", "mlx5" }, { "mlx5_ib.rdma", "mlx5" }, { "mlx4_core", "mlx4" },
		{ "bnxt_en", "bnxt_re" }, { "irdma", "irdma" },      { "efa", "efa" },
		{ "ib_qib", "ipathverbs" }, { "hfi1", "hfi1verbs" }, { "rdma_rxe", "rxe" },
		{ "mlx5_core2", "mlx5_core2" }, /* whole names only */
	};
	char out[64];
	unsigned i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_true(verbs_provider_of_driver(cases[i].drv, out, sizeof(out)));
		assert_string_equal(out, cases[i].prov);
	}
	assert_false(verbs_provider_of_driver("", out, sizeof(out)));
	assert_false(verbs_provider_of_driver(".x", out, sizeof(out)));
	assert_false(verbs_provider_of_driver("mlx5_core", out, 4));
}

/* A scratch directory tree; removed with "rm -rf" at the end. */
static char tmpdir[64];

static void mkfile(const char *rel)
{
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, rel);
	f = fopen(path, "w");
	assert_non_null(f);
	fclose(f);
}

static void mkdirs(const char *rel)
{
	char cmd[PATH_MAX + 32];

	snprintf(cmd, sizeof(cmd), "mkdir -p '%s/%s'", tmpdir, rel);
	assert_int_equal(system(cmd), 0);
}

static void mklink(const char *target, const char *rel)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", tmpdir, rel);
	assert_int_equal(symlink(target, path), 0);
}

static int setup_tree(void **state)
{
	(void)state;
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/test_verbs_provider.XXXXXX");
	assert_non_null(mkdtemp(tmpdir));
	return 0;
}

static int teardown_tree(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

static void test_file(void **state)
{
	char dir[PATH_MAX - 64], out[PATH_MAX], want[PATH_MAX];

	(void)state;
	mkdirs("prov");
	mkfile("prov/librxe-rdmav34.so");
	mkfile("prov/libmlx5-rdmav34.so.bak");
	mkfile("prov/libmlx5-rdmav.so");
	mkfile("prov/libmlx4-rdmavX.so");
	mkfile("prov/libsiw.so");
	snprintf(dir, sizeof(dir), "%s/prov", tmpdir);
	assert_true(verbs_provider_file(dir, "rxe", out, sizeof(out)));
	snprintf(want, sizeof(want), "%s/librxe-rdmav34.so", dir);
	assert_string_equal(out, want);
	/* only lib<name>-rdmav<digits>.so */
	assert_false(verbs_provider_file(dir, "mlx5", out, sizeof(out)));
	assert_false(verbs_provider_file(dir, "mlx4", out, sizeof(out)));
	assert_false(verbs_provider_file(dir, "siw", out, sizeof(out)));
	assert_false(verbs_provider_file(dir, "rx", out, sizeof(out)));
	/* a path that does not fit */
	assert_false(verbs_provider_file(dir, "rxe", out, strlen(want)));
	assert_false(verbs_provider_file("/nonexistent/dir", "rxe", out, sizeof(out)));
}

struct loads {
	char l_paths[8][PATH_MAX];
	unsigned l_n;
	int l_rc;     /* what the loader returns */
};

static int record_load(const char *path, void *arg)
{
	struct loads *l = arg;

	assert_true(l->l_n < 8);
	snprintf(l->l_paths[l->l_n++], PATH_MAX, "%s", strrchr(path, '/') + 1);
	return l->l_rc;
}

static bool loaded(const struct loads *l, const char *file)
{
	unsigned i;

	for (i = 0; i < l->l_n; i++)
		if (!strcmp(l->l_paths[i], file))
			return true;
	return false;
}

static void test_scan(void **state)
{
	char sys[PATH_MAX], prov[PATH_MAX];
	struct loads l = { .l_n = 0 };

	(void)state;
	mkdirs("scan/prov");
	mkfile("scan/prov/librxe-rdmav34.so");
	mkfile("scan/prov/libmlx5-rdmav34.so");
	mkfile("scan/prov/libsiw-rdmav34.so");
	mkfile("scan/prov/libbnxt_re-rdmav34.so");
	/* rxe0 and rxe1: no device link, the name says rxe (loaded once) */
	mkdirs("scan/sys/rxe0");
	mkdirs("scan/sys/rxe1");
	/* a renamed device whose kernel driver says mlx5 */
	mkdirs("scan/sys/rocep1s0f0/device");
	mkdirs("scan/drivers/mlx5_core");
	mklink("../../../drivers/mlx5_core", "scan/sys/rocep1s0f0/device/driver");
	/* a renamed device of a driver with no provider file: nothing */
	mkdirs("scan/sys/ibp2s0/device");
	mkdirs("scan/drivers/foo_core");
	mklink("../../../drivers/foo_core", "scan/sys/ibp2s0/device/driver");
	snprintf(sys, sizeof(sys), "%s/scan/sys", tmpdir);
	snprintf(prov, sizeof(prov), "%s/scan/prov", tmpdir);

	assert_int_equal(verbs_provider_scan(sys, prov, record_load, &l), 2);
	assert_int_equal(l.l_n, 2);
	assert_true(loaded(&l, "librxe-rdmav34.so"));
	assert_true(loaded(&l, "libmlx5-rdmav34.so"));
	assert_false(loaded(&l, "libsiw-rdmav34.so"));

	/* failed loads are tried once each and not counted */
	memset(&l, 0, sizeof(l));
	l.l_rc = -1;
	assert_int_equal(verbs_provider_scan(sys, prov, record_load, &l), 0);
	assert_int_equal(l.l_n, 2);

	/* no sysfs directory: nothing */
	memset(&l, 0, sizeof(l));
	assert_int_equal(verbs_provider_scan("/nonexistent/sys", prov, record_load, &l), 0);
	assert_int_equal(l.l_n, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_of_device),
		cmocka_unit_test(test_of_driver),
		cmocka_unit_test(test_file),
		cmocka_unit_test(test_scan),
	};

	return cmocka_run_group_tests(tests, setup_tree, teardown_tree);
}
