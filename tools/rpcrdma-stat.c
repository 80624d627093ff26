// SPDX-License-Identifier: MIT
/*
 * rpcrdma-stat - print a running rpcrdma-nfsd's statistics through its
 * control socket: a table like nfsstat -s, JSON, or the Prometheus text.
 * See man/rpcrdma-stat.8.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <rpcrdma/svc.h>
#include <rpcrdma/wire.h>

#include "cli/cli.h"
#include "stat/stat_rates.h"

#define PROG "rpcrdma-stat"

static void usage(FILE *f)
{
	fprintf(f,
"Usage: " PROG " [options]\n"
"Print the statistics of a running rpcrdma-nfsd (per NFS procedure: calls,\n"
"errors, latency median and 99th percentile, bytes; per connection).\n"
"\n"
"  -s, --socket PATH   control socket (default " RPCRDMA_SVC_CONTROL_DIR "/PORT.sock)\n"
"  -p, --port N        the server's RPC-over-RDMA port, for the default\n"
"                      socket path (default %u)\n"
"      --json          one JSON object instead of the table\n"
"      --prometheus    the Prometheus text exposition format\n"
"  -w, --watch SECS    every SECS seconds (1..3600) until interrupted: after\n"
"                      the table, the rates of the interval (calls/s, MB/s,\n"
"                      latency percentiles per procedure, like nfsstat -Z);\n"
"                      with --json or --prometheus all again (JSON lines)\n"
"  -t, --timeout SECS  give up when the server has not answered within\n"
"                      SECS seconds (1..3600, default 10)\n"
"  -V, --version       print the version and exit\n"
"  -h, --help          this text\n", RPCRDMA_NFS_PORT);
}

/* A send, receive or connect on a socket with SO_*TIMEO that timed out. */
static bool timed_out(int err)
{
	return err == EAGAIN || err == EWOULDBLOCK || err == EINPROGRESS;
}

/* Ask the server at @path for @req, waiting at most @timeout_s seconds for
 * each step, and copy its answer to @out, ending it with a newline.
 * Return: 0, or 1 with a message. */
static int fetch(const char *path, const char *req, unsigned long timeout_s, FILE *out)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct timeval tv = { .tv_sec = (time_t)timeout_s };
	char buf[65536], last = '\n';
	bool first = true;
	ssize_t n;
	int fd;

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd >= 0 && (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) ||
			setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)))) {
		fprintf(stderr, PROG ": %s: %s\n", path, strerror(errno));
		close(fd);
		return 1;
	}
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		if (fd >= 0 && timed_out(errno))
			goto no_answer;
		fprintf(stderr, PROG ": cannot connect to %s: %s%s\n", path, strerror(errno),
			errno == ENOENT || errno == ECONNREFUSED ?
			" (is rpcrdma-nfsd running, with this --control path?)" :
			errno == EACCES ? " (the control socket is root's)" : "");
		if (fd >= 0)
			close(fd);
		return 1;
	}
	if (send(fd, req, strlen(req), MSG_NOSIGNAL) < 0) {
		if (timed_out(errno))
			goto no_answer;
		fprintf(stderr, PROG ": %s: %s\n", path, strerror(errno));
		close(fd);
		return 1;
	}
	while ((n = recv(fd, buf, sizeof(buf), 0)) > 0) {
		if (first && !strncmp(buf, "error: ", 7 < n ? 7 : (size_t)n)) {
			fprintf(stderr, PROG ": the server answered: %.*s", (int)n, buf);
			close(fd);
			return 1;
		}
		first = false;
		fwrite(buf, 1, (size_t)n, out);
		last = buf[n - 1];
	}
	if (n < 0 && timed_out(errno))
		goto no_answer;
	close(fd);
	if (n < 0 || first) {
		fprintf(stderr, PROG ": %s: %s\n", path, n < 0 ? strerror(errno) :
			"the server closed without an answer");
		return 1;
	}
	if (last != '\n')
		fputc('\n', out);
	fflush(out);
	return 0;

no_answer:
	fflush(out);
	fprintf(stderr, PROG ": %s: no answer within %lu s (is rpcrdma-nfsd stopped or stuck?)\n",
		path, timeout_s);
	close(fd);
	return 1;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The server's Prometheus text into @sn.  Return: 0, or 1 with a message. */
static int snap_fetch(const char *sock, unsigned long timeout_s, struct stat_snap *sn)
{
	char *text = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&text, &len);
	int rc;

	if (!m) {
		fprintf(stderr, PROG ": %s\n", strerror(errno));
		return 1;
	}
	rc = fetch(sock, "prometheus\n", timeout_s, m);
	fclose(m);
	if (!rc && stat_snap_parse(text, sn)) {
		fprintf(stderr, PROG ": %s: the server's metrics text is not readable\n", sock);
		rc = 1;
	}
	free(text);
	return rc;
}

/* --watch with the table: the totals once, then every @watch seconds the
 * rates of the interval (calls/s, MB/s, latency percentiles of its calls)
 * from two snapshots, like nfsstat -Z and nfsiostat.  Return: 1 on an
 * error (interrupted: never returns). */
static int watch_rates(const char *sock, unsigned long watch, unsigned long timeout_s)
{
	struct stat_snap *prev = malloc(sizeof(*prev)), *cur = malloc(sizeof(*cur)), *t;
	double t_prev, t_cur;
	int rc;

	if (!prev || !cur) {
		fprintf(stderr, PROG ": %s\n", strerror(ENOMEM));
		rc = 1;
		goto out;
	}
	rc = fetch(sock, "table\n", timeout_s, stdout);
	if (rc || (rc = snap_fetch(sock, timeout_s, prev)))
		goto out;
	t_prev = now_s();
	for (;;) {
		time_t now;
		char ts[64];

		sleep((unsigned)watch);
		if ((rc = snap_fetch(sock, timeout_s, cur)))
			goto out;
		t_cur = now_s();
		if (isatty(STDOUT_FILENO))
			fputs("\033[H\033[2J", stdout); /* home, clear screen */
		else
			putchar('\n');
		now = time(NULL);
		strftime(ts, sizeof(ts), "%Y-%m-%d %H:%M:%S", localtime(&now));
		printf("%s  %s  rates over the last %.1f s\n", ts, sock, t_cur - t_prev);
		stat_print_rates(prev, cur, t_cur - t_prev, stdout);
		fflush(stdout);
		t = prev;
		prev = cur;
		cur = t;
		t_prev = t_cur;
	}
out:
	free(prev);
	free(cur);
	return rc;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "port", required_argument, NULL, 'p' },
		{ "json", no_argument, NULL, 'j' },
		{ "prometheus", no_argument, NULL, 'P' },
		{ "watch", required_argument, NULL, 'w' },
		{ "timeout", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	const char *req = "table\n", *sock = NULL;
	unsigned long port = RPCRDMA_NFS_PORT, watch = 0, timeout_s = 10;
	bool json = false, prom = false;
	char path[108];
	int c, rc;

	while ((c = getopt_long(argc, argv, "s:p:w:t:hV", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			sock = optarg;
			break;
		case 'p':
			if (cli_uint(PROG, "port", optarg, 1, 65535, NULL, &port))
				return CLI_EXIT_USAGE;
			break;
		case 'j':
			req = "json\n";
			json = true;
			break;
		case 'P':
			req = "prometheus\n";
			prom = true;
			break;
		case 't':
			if (cli_uint(PROG, "timeout", optarg, 1, 3600, "seconds", &timeout_s))
				return CLI_EXIT_USAGE;
			break;
		case 'w':
			if (cli_uint(PROG, "watch", optarg, 1, 3600, "seconds", &watch))
				return CLI_EXIT_USAGE;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			return cli_version(PROG);
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, PROG ": unexpected argument: %s\n", argv[optind]);
		usage(stderr);
		return 2;
	}
	if (json && prom) {
		fprintf(stderr, PROG ": --json and --prometheus: give one of them\n");
		return 2;
	}
	if (sock && strlen(sock) >= sizeof(path)) {
		fprintf(stderr, PROG ": --socket: path too long: %s\n", sock);
		return 2;
	}
	if (!sock) {
		snprintf(path, sizeof(path), RPCRDMA_SVC_CONTROL_DIR "/%lu.sock", port);
		sock = path;
	}
	signal(SIGPIPE, SIG_IGN);
	if (watch && !json && !prom)
		return watch_rates(sock, watch, timeout_s);
	for (;;) {
		rc = fetch(sock, req, timeout_s, stdout);
		if (rc || !watch)
			return rc;
		sleep((unsigned)watch);
	}
}
