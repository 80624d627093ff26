// SPDX-License-Identifier: MIT
/*
 * svc_control.c - the control socket: a Unix stream socket through which
 * rpcrdma-stat reads the server's statistics while it runs.
 *
 * Protocol: the client sends one request line ("table", "json" or
 * "prometheus", at most 63 bytes, within 2 seconds), the server answers
 * with the statistics in that format and closes.  Anything else gets one
 * line starting with "error: ".  One thread serves one client at a time;
 * only root and the server's own user are answered (SO_PEERCRED), the
 * socket is mode 0600 and a directory created for it mode 0700.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "svc/svc_internal.h"

struct rpcrdma_svc_control {
	struct rpcrdma_svc *ct_svc;
	int ct_fd;          /* listening socket */
	int ct_stop[2];     /* pipe: a byte stops the thread */
	pthread_t ct_thread;
	char ct_path[sizeof(((struct sockaddr_un *)0)->sun_path)];
};

/* Create the socket's directory (one level) with mode 0700 if missing. */
static int svc_control_mkdir(const char *path)
{
	char dir[sizeof(((struct sockaddr_un *)0)->sun_path)];
	char *slash;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (!slash || slash == dir)
		return 0;
	*slash = '\0';
	if (mkdir(dir, 0700) && errno != EEXIST)
		return -errno;
	return 0;
}

/* A socket file left by a server that is gone: remove it; one that
 * answers belongs to a running server: -EADDRINUSE. */
static int svc_control_clear_stale(const struct sockaddr_un *sa)
{
	struct stat st;
	int fd, rc;

	if (lstat(sa->sun_path, &st))
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISSOCK(st.st_mode))
		return -EEXIST;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	rc = connect(fd, (const struct sockaddr *)sa, sizeof(*sa));
	close(fd);
	if (!rc)
		return -EADDRINUSE;
	if (unlink(sa->sun_path) && errno != ENOENT)
		return -errno;
	return 0;
}

static void svc_control_write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = send(fd, buf, len, MSG_NOSIGNAL);

		if (n <= 0) {
			if (n < 0 && errno == EINTR)
				continue;
			return;
		}
		buf += n;
		len -= (size_t)n;
	}
}

static void svc_control_serve(struct rpcrdma_svc_control *ct, int fd)
{
	struct timeval tv = { .tv_sec = 2 };
	enum rpcrdma_svc_stats_format fmt;
	struct ucred cred;
	socklen_t clen = sizeof(cred);
	char req[64], *out = NULL;
	size_t got = 0, outlen = 0;
	FILE *m;

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen) ||
	    (cred.uid != 0 && cred.uid != geteuid())) {
		static const char msg[] = "error: permission denied\n";

		svc_control_write_all(fd, msg, sizeof(msg) - 1);
		return;
	}
	while (got < sizeof(req) - 1) {
		ssize_t n = recv(fd, req + got, sizeof(req) - 1 - got, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
		if (memchr(req, '\n', got))
			break;
	}
	req[got] = '\0';
	req[strcspn(req, "\r\n")] = '\0';
	if (!strcmp(req, "table")) {
		fmt = RPCRDMA_SVC_STATS_TABLE;
	} else if (!strcmp(req, "json")) {
		fmt = RPCRDMA_SVC_STATS_JSON;
	} else if (!strcmp(req, "prometheus")) {
		fmt = RPCRDMA_SVC_STATS_PROMETHEUS;
	} else {
		static const char msg[] = "error: unknown request (table, json or prometheus)\n";

		svc_control_write_all(fd, msg, sizeof(msg) - 1);
		return;
	}
	m = open_memstream(&out, &outlen);
	if (!m)
		return;
	if (rpcrdma_svc_stats_write(ct->ct_svc, fmt, m)) {
		fclose(m);
		free(out);
		svc_control_write_all(fd, "error: out of memory\n", 21);
		return;
	}
	fclose(m);
	svc_control_write_all(fd, out, outlen);
	free(out);
}

static void *svc_control_main(void *arg)
{
	struct rpcrdma_svc_control *ct = arg;
	struct pollfd pf[2] = {
		{ .fd = ct->ct_fd, .events = POLLIN },
		{ .fd = ct->ct_stop[0], .events = POLLIN },
	};

	for (;;) {
		int fd;

		if (poll(pf, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (pf[1].revents)
			break;
		if (!(pf[0].revents & POLLIN))
			continue;
		fd = accept4(ct->ct_fd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0)
			continue;
		svc_control_serve(ct, fd);
		close(fd);
	}
	return NULL;
}

int rpcrdma_svc_control_start(struct rpcrdma_svc *svc, const char *path,
			      struct rpcrdma_svc_control **out)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct rpcrdma_svc_control *ct;
	mode_t old;
	int rc;

	if (!path || !*path || strlen(path) >= sizeof(sa.sun_path))
		return -EINVAL;
	memcpy(sa.sun_path, path, strlen(path) + 1);
	ct = calloc(1, sizeof(*ct));
	if (!ct)
		return -ENOMEM;
	ct->ct_svc = svc;
	ct->ct_fd = ct->ct_stop[0] = ct->ct_stop[1] = -1;
	snprintf(ct->ct_path, sizeof(ct->ct_path), "%s", path);
	rc = svc_control_mkdir(path);
	if (rc)
		goto err;
	rc = svc_control_clear_stale(&sa);
	if (rc)
		goto err;
	ct->ct_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (ct->ct_fd < 0) {
		rc = -errno;
		goto err;
	}
	old = umask(0177); /* the socket is born 0600 */
	rc = bind(ct->ct_fd, (struct sockaddr *)&sa, sizeof(sa)) ? -errno : 0;
	umask(old);
	if (rc)
		goto err;
	if (listen(ct->ct_fd, 8) || pipe2(ct->ct_stop, O_CLOEXEC)) {
		rc = -errno;
		goto err_unlink;
	}
	rc = -pthread_create(&ct->ct_thread, NULL, svc_control_main, ct);
	if (rc)
		goto err_unlink;
	*out = ct;
	return 0;

err_unlink:
	unlink(ct->ct_path);
err:
	if (ct->ct_fd >= 0)
		close(ct->ct_fd);
	if (ct->ct_stop[0] >= 0) {
		close(ct->ct_stop[0]);
		close(ct->ct_stop[1]);
	}
	free(ct);
	return rc;
}

void rpcrdma_svc_control_stop(struct rpcrdma_svc_control *ct)
{
	ssize_t n;

	if (!ct)
		return;
	n = write(ct->ct_stop[1], "x", 1);
	(void)n;
	pthread_join(ct->ct_thread, NULL);
	close(ct->ct_fd);
	close(ct->ct_stop[0]);
	close(ct->ct_stop[1]);
	unlink(ct->ct_path);
	free(ct);
}
