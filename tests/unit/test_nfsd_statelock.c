// SPDX-License-Identifier: MIT
/*
 * test_nfsd_statelock.c - one rpcrdma-nfsd per state directory
 * (tools/nfsd/nfsd_statelock.c): the first taker gets the lock and its pid
 * in the file; a second taker, here another open file description as a
 * second process would have, is refused with -EBUSY and told the first's
 * pid; the lock is free again once the first descriptor is closed (as when
 * the process ends, however it ends); a missing directory and its parents
 * are created; a directory that cannot be created is an error, not a lock.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "nfsd_statelock.h"

static char g_dir[64];

static int setup(void **state)
{
	(void)state;
	strcpy(g_dir, "/tmp/test_nfsd_statelock.XXXXXX");
	assert_non_null(mkdtemp(g_dir));
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", g_dir);
	return system(cmd) == 0 ? 0 : -1;
}

/* the lock file's content */
static long file_pid(const char *dir)
{
	char path[160], buf[32] = "";
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, NFSD_STATELOCK_NAME);
	f = fopen(path, "r");
	assert_non_null(f);
	assert_non_null(fgets(buf, sizeof(buf), f));
	fclose(f);
	return strtol(buf, NULL, 10);
}

static void test_second_refused(void **state)
{
	pid_t holder = -1;
	int fd, fd2;

	(void)state;
	fd = nfsd_state_lock(g_dir, &holder);
	assert_true(fd >= 0);
	assert_int_equal(holder, 0);
	assert_int_equal(file_pid(g_dir), (long)getpid());
	assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);

	fd2 = nfsd_state_lock(g_dir, &holder);
	assert_int_equal(fd2, -EBUSY);
	assert_int_equal(holder, getpid());
	/* the refused taker left the holder's pid in place */
	assert_int_equal(file_pid(g_dir), (long)getpid());

	close(fd);
	fd2 = nfsd_state_lock(g_dir, &holder);
	assert_true(fd2 >= 0);
	close(fd2);
}

/* a child that took the lock and was killed leaves it free */
static void test_freed_when_holder_dies(void **state)
{
	int pfd[2], fd, status;
	pid_t child, holder;
	char c;

	(void)state;
	assert_int_equal(pipe(pfd), 0);
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		pid_t h;

		close(pfd[0]);
		if (nfsd_state_lock(g_dir, &h) < 0)
			_exit(1);
		if (write(pfd[1], "x", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	close(pfd[1]);
	assert_int_equal(read(pfd[0], &c, 1), 1);
	close(pfd[0]);
	assert_int_equal(nfsd_state_lock(g_dir, &holder), -EBUSY);
	assert_int_equal(holder, child);
	assert_int_equal(kill(child, SIGKILL), 0);
	assert_int_equal(waitpid(child, &status, 0), child);
	fd = nfsd_state_lock(g_dir, &holder);
	assert_true(fd >= 0);
	assert_int_equal(file_pid(g_dir), (long)getpid());
	close(fd);
}

static void test_creates_parents(void **state)
{
	char dir[128];
	struct stat st;
	pid_t holder;
	int fd;

	(void)state;
	snprintf(dir, sizeof(dir), "%s/a/b/state", g_dir);
	fd = nfsd_state_lock(dir, &holder);
	assert_true(fd >= 0);
	assert_int_equal(stat(dir, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	assert_int_equal(st.st_mode & 0777, 0700);
	close(fd);
}

static void test_not_a_directory(void **state)
{
	char file[128], dir[160];
	pid_t holder;
	int fd;

	(void)state;
	snprintf(file, sizeof(file), "%s/plain", g_dir);
	fd = open(file, O_CREAT | O_WRONLY, 0600);
	assert_true(fd >= 0);
	close(fd);
	snprintf(dir, sizeof(dir), "%s/sub", file);
	assert_int_equal(nfsd_state_lock(dir, &holder), -ENOTDIR);
	assert_int_equal(nfsd_state_lock("", &holder), -ENAMETOOLONG);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_second_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_freed_when_holder_dies, setup, teardown),
		cmocka_unit_test_setup_teardown(test_creates_parents, setup, teardown),
		cmocka_unit_test_setup_teardown(test_not_a_directory, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
