// SPDX-License-Identifier: MIT
/*
 * test_nfs_writer.c - rpcrdma-nfs get's writer thread
 * (tools/nfs/nfs_writer.c): windows handed over from two alternating
 * buffers land at their offsets, each buffer is free again once the next
 * submit returns, and a write error is reported by the next submit and by
 * finish.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* before cmocka.h, whose fail() macro would take nfs.h's fail() */
#include "nfs.h"

#include <cmocka.h>

#define WIN 65536u

static void test_windows_in_order(void **state)
{
	static uint8_t half[2][WIN], back[3 * WIN];
	char path[] = "/tmp/test_nfs_writer.XXXXXX";
	struct writer w;
	unsigned k, i;
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	unlink(path);
	assert_int_equal(writer_start(&w, fd), 0);
	for (k = 0; k < 3; k++) {
		uint8_t *b = half[k % 2];

		/* the submit of window k-1 returned after window k-2 (which
		 * used this buffer) was written: it may be refilled */
		for (i = 0; i < WIN; i++)
			b[i] = (uint8_t)(k * 31 + i % 251);
		assert_int_equal(writer_submit(&w, b, k == 2 ? WIN / 2 : WIN,
					       (uint64_t)k * WIN), 0);
		/* the submit waited: window k-1 is in the file already */
		if (k)
			assert_int_equal(pread(fd, back, WIN, (off_t)(k - 1) * WIN), WIN);
	}
	assert_int_equal(writer_finish(&w), 0);
	assert_int_equal(pread(fd, back, sizeof(back), 0), 2 * WIN + WIN / 2);
	for (k = 0; k < 3; k++)
		for (i = 0; i < (k == 2 ? WIN / 2 : WIN); i++)
			if (back[k * WIN + i] != (uint8_t)(k * 31 + i % 251))
				fail_msg("window %u byte %u: %u", k, i, back[k * WIN + i]);
	close(fd);
}

/* A descriptor opened read-only: the write fails with EBADF, reported by
 * the next submit (which hands nothing over) and by finish. */
static void test_error_reported(void **state)
{
	static uint8_t buf[WIN];
	struct writer w;
	int fd = open("/dev/null", O_RDONLY);

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(writer_start(&w, fd), 0);
	assert_int_equal(writer_submit(&w, buf, WIN, 0), 0);
	assert_int_equal(writer_wait(&w), -EBADF);
	assert_int_equal(writer_submit(&w, buf, WIN, WIN), -EBADF);
	assert_int_equal(writer_finish(&w), -EBADF);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_windows_in_order),
		cmocka_unit_test(test_error_reported),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
