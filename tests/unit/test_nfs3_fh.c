// SPDX-License-Identifier: MIT
/*
 * test_nfs3_fh.c - SipHash-2-4 against the published vectors, the file
 * handle key file, and the --allow prefix matching.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "nfs3/nfs3_internal.h"
#include "fs/fs_posix.h"
#include "test_root.h"

/*
 * Appendix A of "SipHash: a fast short-input PRF" (Aumasson, Bernstein):
 * key 00 01 .. 0f, message 00 01 .. 0e (15 bytes) -> a129ca6149be45e5;
 * the first line of the reference vectors (empty message) is
 * 31 0e 0e dd 47 db 6f 72 as little-endian bytes.
 */
static void test_siphash_vectors(void **state)
{
	uint8_t key[16], msg[15];

	(void)state;
	for (int i = 0; i < 16; i++)
		key[i] = (uint8_t)i;
	for (int i = 0; i < 15; i++)
		msg[i] = (uint8_t)i;
	assert_int_equal(fs_siphash(key, msg, 15), 0xa129ca6149be45e5ull);
	assert_int_equal(fs_siphash(key, msg, 0), 0x726fdb47dd0e0e31ull);
}

static void test_key_file(void **state)
{
	char dir[] = "/tmp/nfs3key.XXXXXX", path[64];
	uint8_t k1[16], k2[16];
	struct stat st;
	int fd;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/key", dir);
	assert_int_equal(rpcrdma_nfs3_load_key(path, k1), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_size, 16);
	assert_int_equal(st.st_mode & 0777, 0600);
	assert_int_equal(rpcrdma_nfs3_load_key(path, k2), 0);
	assert_memory_equal(k1, k2, 16); /* stable across restarts */

	fd = open(path, O_WRONLY | O_APPEND);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "x", 1), 1);
	close(fd);
	assert_int_equal(rpcrdma_nfs3_load_key(path, k2), -EINVAL);
	unlink(path);
	rmdir(dir);
}

static bool match(const char *peer, const char *net)
{
	struct sockaddr_storage n, p;
	unsigned prefix, pp;

	assert_int_equal(rpcrdma_nfs3_cidr_parse(net, &n, &prefix), 0);
	assert_int_equal(rpcrdma_nfs3_cidr_parse(peer, &p, &pp), 0);
	return rpcrdma_nfs3_cidr_match((struct sockaddr *)&p, &n, prefix);
}

static void test_cidr(void **state)
{
	struct sockaddr_storage n;
	unsigned prefix;

	(void)state;
	assert_true(match("192.168.1.77", "192.168.1.0/24"));
	assert_false(match("192.168.2.77", "192.168.1.0/24"));
	assert_true(match("10.1.2.3", "10.0.0.0/8"));
	assert_true(match("10.1.2.3", "0.0.0.0/0"));
	assert_true(match("172.16.5.4", "172.16.5.4"));
	assert_false(match("172.16.5.5", "172.16.5.4"));
	/* /23 splits inside the third byte: 10.0.2.0 - 10.0.3.255 */
	assert_true(match("10.0.3.9", "10.0.2.0/23"));
	assert_false(match("10.0.4.9", "10.0.2.0/23"));
	assert_true(match("::ffff:192.168.1.9", "192.168.1.0/24"));
	assert_true(match("fe80::1", "fe80::/10"));
	assert_false(match("fec0::1", "fe80::/10"));
	assert_false(match("192.168.1.9", "::/0"));

	assert_int_equal(rpcrdma_nfs3_cidr_parse("10.0.0.0/33", &n, &prefix), -EINVAL);
	assert_int_equal(rpcrdma_nfs3_cidr_parse("10.0.0.0/", &n, &prefix), -EINVAL);
	assert_int_equal(rpcrdma_nfs3_cidr_parse("10.0.0.0/-1", &n, &prefix), -EINVAL);
	assert_int_equal(rpcrdma_nfs3_cidr_parse("host.example", &n, &prefix), -EINVAL);
	assert_int_equal(rpcrdma_nfs3_cidr_parse("::1/129", &n, &prefix), -EINVAL);
	assert_int_equal(rpcrdma_nfs3_cidr_parse("::1", &n, &prefix), 0);
	assert_int_equal(prefix, 128);
}

/* A handle made with another key does not open (forgery). */
static void test_forged_key(void **state)
{
	char dir[] = "/tmp/nfs3fh.XXXXXX";
	struct rpcrdma_nfs3_config cfg = { .nc_export = dir };
	struct rpcrdma_nfs3_export *a, *b;
	uint8_t fh[64];
	uint32_t len;
	struct stat st;
	int fd = -1;

	(void)state;
	if (!t_root())
		skip();
	assert_non_null(mkdtemp(dir));
	memset(cfg.nc_key, 1, 16);
	assert_int_equal(rpcrdma_nfs3_export_open(&cfg, &a), 0);
	memset(cfg.nc_key, 2, 16);
	assert_int_equal(rpcrdma_nfs3_export_open(&cfg, &b), 0);
	assert_int_equal(rpcrdma_nfs3_root_fh(a, fh, &len), 0);
	assert_int_equal(fs_fh_open(a, fh, len, &fd, &st), 0);
	close(fd);
	assert_int_equal(fs_fh_open(b, fh, len, &fd, &st), -EBADMSG);
	rpcrdma_nfs3_export_close(a);
	rpcrdma_nfs3_export_close(b);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_siphash_vectors),
		cmocka_unit_test(test_key_file),
		cmocka_unit_test(test_cidr),
		cmocka_unit_test(test_forged_key),
	};

	return t_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
