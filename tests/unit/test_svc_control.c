// SPDX-License-Identifier: MIT
/*
 * test_svc_control.c - the control socket: its answers are the statistics
 * rpcrdma_svc_stats_write() prints, byte for byte; bad requests get an
 * error line; the socket is mode 0600 in a directory made 0700; a stale
 * socket file is replaced, a live one refused; a peer of another user
 * (SO_PEERCRED), let through the file modes, is refused (as root only:
 * the case needs setuid; skipped otherwise, exit 77).
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "test_root.h"

#include "svc/svc_internal.h"
#include "svc/svc_stats.h"

static char g_dir[48], g_path[96];

/* Send @req, read the answer into a malloc'd string. */
static char *ask(const char *req)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	size_t len = 0, cap = 1 << 16;
	char *buf = malloc(cap);
	ssize_t n;
	int fd;

	assert_non_null(buf);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", g_path);
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_true(fd >= 0);
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(send(fd, req, strlen(req), 0), (ssize_t)strlen(req));
	/* A request without its newline ends with the stream. */
	shutdown(fd, SHUT_WR);
	while ((n = recv(fd, buf + len, cap - 1 - len, 0)) > 0) {
		len += (size_t)n;
		if (len == cap - 1) {
			cap *= 2;
			buf = realloc(buf, cap);
			assert_non_null(buf);
		}
	}
	close(fd);
	buf[len] = '\0';
	return buf;
}

/*
 * A process of another user (uid 65534) that gets past the file modes
 * (opened up here: the directory 0711, the socket 0666) asks for the
 * table: the server checks the peer's credentials itself and answers only
 * "error: permission denied".  The child reports what it read through a
 * pipe.
 */
static void other_user_refused(void)
{
	char got[128] = "";
	ssize_t n, len = 0;
	int p[2], status;
	pid_t pid;

	if (!t_root())
		return;
	assert_int_equal(chmod(g_dir, 0711), 0);
	assert_int_equal(chmod(g_path, 0666), 0);
	assert_int_equal(pipe(p), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct sockaddr_un sa = { .sun_family = AF_UNIX };
		char buf[128];
		ssize_t r, k = 0;
		int fd;

		close(p[0]);
		if (setgid(65534) || setuid(65534))
			_exit(2);
		snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", g_path);
		fd = socket(AF_UNIX, SOCK_STREAM, 0);
		if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)))
			_exit(3);
		/* the server may have answered and closed already */
		(void)send(fd, "table\n", 6, MSG_NOSIGNAL);
		while ((r = recv(fd, buf + k, sizeof(buf) - 1 - (size_t)k, 0)) > 0)
			k += r;
		if (write(p[1], buf, (size_t)k) != k)
			_exit(5);
		_exit(0);
	}
	close(p[1]);
	while ((n = read(p[0], got + len, sizeof(got) - 1 - (size_t)len)) > 0)
		len += n;
	close(p[0]);
	got[len] = '\0';
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_string_equal(got, "error: permission denied\n");
	assert_int_equal(chmod(g_path, 0600), 0);
	assert_int_equal(chmod(g_dir, 0700), 0);
}

static char *expected(struct rpcrdma_svc *svc, enum rpcrdma_svc_stats_format fmt)
{
	char *out = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&out, &len);

	assert_non_null(m);
	assert_int_equal(rpcrdma_svc_stats_write(svc, fmt, m), 0);
	fclose(m);
	return out;
}

static void test_control(void **state)
{
	struct rpcrdma_svc *svc = calloc(1, sizeof(*svc));
	struct rpcrdma_svc_control *ct, *ct2;
	struct stat st;
	char *got, *want;
	int fd;

	(void)state;
	assert_non_null(svc);
	svc->sv_progs[0] = (struct svc_program){ .sp_prog = 100003, .sp_vers = 3 };
	svc->sv_nprogs = 1;
	assert_int_equal(svc_stats_create(svc), 0);
	assert_true(svc_stats_record(svc->sv_stats, 0, 6, true, 0, 100, 65636, 250000, true, 0));

	snprintf(g_dir, sizeof(g_dir), "/tmp/rpcrdma-ctl-%d", (int)getpid());
	snprintf(g_path, sizeof(g_path), "%s/20049.sock", g_dir);
	assert_int_equal(rpcrdma_svc_control_start(svc, g_path, &ct), 0);
	assert_int_equal(stat(g_dir, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0700);
	assert_int_equal(lstat(g_path, &st), 0);
	assert_true(S_ISSOCK(st.st_mode));
	assert_int_equal(st.st_mode & 0777, 0600);
	/* A second server on the same path: refused, the first keeps it. */
	assert_int_equal(rpcrdma_svc_control_start(svc, g_path, &ct2), -EADDRINUSE);

	got = ask("json\n");
	want = expected(svc, RPCRDMA_SVC_STATS_JSON);
	assert_string_equal(got, want);
	assert_non_null(strstr(got, "\"proc\":6,\"count\":1,"));
	free(got);
	free(want);
	got = ask("table\n");
	want = expected(svc, RPCRDMA_SVC_STATS_TABLE);
	assert_string_equal(got, want);
	assert_non_null(strstr(got, "Program 100003 version 3:"));
	free(got);
	free(want);
	got = ask("prometheus");
	want = expected(svc, RPCRDMA_SVC_STATS_PROMETHEUS);
	assert_string_equal(got, want);
	free(got);
	free(want);
	got = ask("stats please\n");
	assert_string_equal(got, "error: unknown request (table, json or prometheus)\n");
	free(got);
	other_user_refused();

	rpcrdma_svc_control_stop(ct);
	assert_int_equal(lstat(g_path, &st), -1);

	/* A socket file nobody listens on (a server that died) is replaced. */
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	{
		struct sockaddr_un sa = { .sun_family = AF_UNIX };

		snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", g_path);
		assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	}
	close(fd);
	assert_int_equal(rpcrdma_svc_control_start(svc, g_path, &ct), 0);
	got = ask("json\n");
	assert_true(strncmp(got, "{\"connections\":", 15) == 0);
	free(got);
	rpcrdma_svc_control_stop(ct);

	/* Not a socket: left alone. */
	fd = open(g_path, O_CREAT | O_WRONLY, 0600);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(rpcrdma_svc_control_start(svc, g_path, &ct), -EEXIST);
	unlink(g_path);
	assert_int_equal(rpcrdma_svc_control_start(svc, "", &ct), -EINVAL);
	rmdir(g_dir);

	svc_stats_destroy(svc);
	free(svc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_control),
	};

	return t_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
