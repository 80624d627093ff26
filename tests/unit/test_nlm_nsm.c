// SPDX-License-Identifier: MIT
/*
 * test_nlm_nsm.c - NSM state across restarts (XNFS chapter 11): the state
 * number is odd while the server runs and grows at every start, a damaged
 * state file starts again from 1, and the recorded hosts (address, the
 * server address they called, caller_name) are read back after a restart;
 * malformed records are skipped.
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
#include <cmocka.h>

#include "nlm/nlm_internal.h"

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static struct sockaddr_storage v4(const char *s)
{
	struct sockaddr_storage ss = { 0 };
	struct sockaddr_in *a = (struct sockaddr_in *)&ss;

	a->sin_family = AF_INET;
	a->sin_port = htons(1234);
	assert_int_equal(inet_pton(AF_INET, s, &a->sin_addr), 1);
	return ss;
}

static void test_state_number(void **state)
{
	char base[] = "/tmp/nlmnsm.XXXXXX", dir[128], path[160], cmd[200];
	uint32_t st;
	struct stat sb;

	(void)state;
	assert_non_null(mkdtemp(base));
	/* a directory that does not exist yet, two levels deep */
	snprintf(dir, sizeof(dir), "%s/var/nlm", base);
	assert_int_equal(nsm_state_advance(dir, &st), 0);
	assert_int_equal(st, 1);
	assert_int_equal(stat(dir, &sb), 0);
	assert_int_equal(sb.st_mode & 0777, 0700);
	snprintf(path, sizeof(path), "%s/sm", dir);
	assert_int_equal(stat(path, &sb), 0);
	/* each start: the next odd number */
	assert_int_equal(nsm_state_advance(dir, &st), 0);
	assert_int_equal(st, 3);
	assert_int_equal(nsm_state_advance(dir, &st), 0);
	assert_int_equal(st, 5);
	/* an even number on disk (down): the next odd one */
	snprintf(path, sizeof(path), "%s/state", dir);
	write_file(path, "8\n");
	assert_int_equal(nsm_state_advance(dir, &st), 0);
	assert_int_equal(st, 9);
	/* garbage: start from 1 */
	write_file(path, "junk\n");
	assert_int_equal(nsm_state_advance(dir, &st), 0);
	assert_int_equal(st, 1);
	/* a state directory that cannot be made */
	snprintf(path, sizeof(path), "%s/file", base);
	write_file(path, "x");
	snprintf(dir, sizeof(dir), "%s/file/nlm", base);
	assert_int_equal(nsm_state_advance(dir, &st), -ENOTDIR);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", base);
	assert_int_equal(system(cmd), 0);
}

static void test_records(void **state)
{
	char dir[] = "/tmp/nlmnsm.XXXXXX", path[160], cmd[200];
	struct sockaddr_storage a = v4("192.0.2.2"), b = v4("192.0.2.3"), l = v4("192.0.2.1");
	struct sockaddr_in6 six = { .sin6_family = AF_INET6 };
	struct nsm_record *r, *p;
	uint32_t st;
	int n = 0;

	(void)state;
	assert_non_null(mkdtemp(dir));
	assert_int_equal(nsm_state_advance(dir, &st), 0);
	assert_int_equal(nsm_record_put(dir, (struct sockaddr *)&a, (struct sockaddr *)&l,
					"clienta"), 0);
	assert_int_equal(nsm_record_put(dir, (struct sockaddr *)&b, NULL, "client\nb"), 0);
	inet_pton(AF_INET6, "2001:db8::7", &six.sin6_addr);
	assert_int_equal(nsm_record_put(dir, (struct sockaddr *)&six, NULL, "six"), 0);
	/* refreshing a record replaces it */
	assert_int_equal(nsm_record_put(dir, (struct sockaddr *)&a, (struct sockaddr *)&l,
					"clienta2"), 0);
	/* a malformed record and a leftover temporary file */
	snprintf(path, sizeof(path), "%s/sm/bogus", dir);
	write_file(path, "not-an-address\n-\nx\n");
	snprintf(path, sizeof(path), "%s/sm/192.0.2.9.new", dir);
	write_file(path, "192.0.2.9\n-\nx\n");

	/* "restart": read them back */
	assert_int_equal(nsm_state_advance(dir, &st), 0);
	assert_int_equal(st, 3);
	assert_int_equal(nsm_records_load(dir, &r), 0);
	for (p = r; p; p = p->nr_next) {
		n++;
		if (nlm_addr_equal((struct sockaddr *)&p->nr_addr, (struct sockaddr *)&a)) {
			assert_string_equal(p->nr_name, "clienta2");
			assert_true(nlm_addr_equal((struct sockaddr *)&p->nr_local,
						   (struct sockaddr *)&l));
		} else if (nlm_addr_equal((struct sockaddr *)&p->nr_addr,
					  (struct sockaddr *)&b)) {
			assert_string_equal(p->nr_name, "client"); /* cut at the newline */
			assert_int_equal(p->nr_local.ss_family, AF_UNSPEC);
		} else {
			assert_true(nlm_addr_equal((struct sockaddr *)&p->nr_addr,
						   (struct sockaddr *)&six));
			assert_string_equal(p->nr_file, "2001_db8__7");
		}
	}
	assert_int_equal(n, 3);
	nsm_records_free(r);
	/* dropped records stay dropped */
	assert_int_equal(nsm_record_drop(dir, (struct sockaddr *)&b), 0);
	assert_int_equal(nsm_record_drop(dir, (struct sockaddr *)&b), 0); /* absent: fine */
	assert_int_equal(nsm_records_load(dir, &r), 0);
	n = 0;
	for (p = r; p; p = p->nr_next)
		n++;
	assert_int_equal(n, 2);
	nsm_records_free(r);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_state_number),
		cmocka_unit_test(test_records),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
