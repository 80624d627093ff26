// SPDX-License-Identifier: MIT
/*
 * bench_tcp_send.c - how a READ reply over TCP should leave the server
 * (issue 36): the reply header and N bytes of a file, three ways, over a
 * loopback TCP connection to a reader thread that takes and drops every
 * byte.
 *
 *   sendmsg    what svc_tcp.c does: preadv() of the file into the reply
 *              buffer (the file cache's read), then one sendmsg() of the
 *              header and the data (the kernel copies the data into the
 *              socket's buffers)
 *   zerocopy   the same preadv(), then sendmsg(MSG_ZEROCOPY) on a socket
 *              with SO_ZEROCOPY: the pages are pinned instead of copied;
 *              the buffer is not reused before its completion is read
 *              from the error queue (MSG_ERRQUEUE), as the kernel's
 *              msg_zerocopy.rst requires; a completion that says
 *              SO_EE_CODE_ZEROCOPY_COPIED (the kernel copied after all:
 *              loopback does) is counted
 *   splice     no read into user memory: send() of the header with
 *              MSG_MORE, then splice() file -> pipe -> socket
 *
 * Usage: bench_tcp_send [SIZE_BYTES [SECONDS]] (default 1048576, 3).
 * Prints one line per way: replies/s, MiB/s of data, and CPU microseconds
 * per reply of the sending thread (CLOCK_THREAD_CPUTIME_ID: its own
 * system calls; loopback's delivery to the reader runs partly in it) and
 * of both threads (CLOCK_PROCESS_CPUTIME_ID: sender and reader, the
 * whole cost of a reply on one machine).
 * A figure, not a test.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <linux/errqueue.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#ifndef SO_ZEROCOPY
#define SO_ZEROCOPY 60
#endif
#ifndef MSG_ZEROCOPY
#define MSG_ZEROCOPY 0x4000000
#endif

#define HDR 128u

static double now_s(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void *reader(void *arg)
{
	int fd = *(int *)arg;
	static char buf[1 << 20];

	while (recv(fd, buf, sizeof(buf), 0) > 0)
		;
	return NULL;
}

/* A connected loopback pair: *@snd the sender's end; a reader thread
 * drains the other. */
static int pair(int *snd, pthread_t *th, int *rcv)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t al = sizeof(a);
	int l = socket(AF_INET, SOCK_STREAM, 0), one = 1;

	if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof(a)) || listen(l, 1) ||
	    getsockname(l, (struct sockaddr *)&a, &al))
		return -1;
	*snd = socket(AF_INET, SOCK_STREAM, 0);
	if (*snd < 0 || connect(*snd, (struct sockaddr *)&a, sizeof(a)))
		return -1;
	*rcv = accept(l, NULL, NULL);
	close(l);
	if (*rcv < 0)
		return -1;
	setsockopt(*snd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return pthread_create(th, NULL, reader, rcv) ? -1 : 0;
}

static int send_all(int fd, struct iovec *iov, int n, int flags)
{
	struct msghdr m = { .msg_iov = iov, .msg_iovlen = (size_t)n };

	while (m.msg_iovlen) {
		ssize_t w = sendmsg(fd, &m, flags);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			if (errno == ENOBUFS && (flags & MSG_ZEROCOPY))
				return -ENOBUFS; /* optmem limit: reap completions */
			return -errno;
		}
		while (m.msg_iovlen && (size_t)w >= m.msg_iov->iov_len) {
			w -= (ssize_t)m.msg_iov->iov_len;
			m.msg_iov++;
			m.msg_iovlen--;
		}
		if (m.msg_iovlen) {
			m.msg_iov->iov_base = (char *)m.msg_iov->iov_base + w;
			m.msg_iov->iov_len -= (size_t)w;
		}
	}
	return 0;
}

/* Read zerocopy completions; wait (poll) until @upto sends are done.
 * Returns completions that were copies after all. */
static unsigned long zc_reap(int fd, uint32_t upto, uint32_t *done)
{
	unsigned long copied = 0;

	while (*done < upto) {
		char ctl[128];
		struct msghdr m = { .msg_control = ctl, .msg_controllen = sizeof(ctl) };
		struct cmsghdr *c;

		if (recvmsg(fd, &m, MSG_ERRQUEUE) < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK) {
				struct timespec ts = { 0, 20000 };

				nanosleep(&ts, NULL);
				continue;
			}
			perror("recvmsg(MSG_ERRQUEUE)");
			exit(1);
		}
		for (c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
			struct sock_extended_err *e = (struct sock_extended_err *)CMSG_DATA(c);

			if (e->ee_origin != SO_EE_ORIGIN_ZEROCOPY)
				continue;
			if (e->ee_code & SO_EE_CODE_ZEROCOPY_COPIED)
				copied += e->ee_data - e->ee_info + 1;
			*done = e->ee_data + 1;
		}
	}
	return copied;
}

static void run(const char *way, int file, size_t size, double secs)
{
	int snd, rcv, p[2] = { -1, -1 }, one = 1;
	pthread_t th;
	char *hdr = calloc(1, HDR), *buf = aligned_alloc(4096, (size + 4095) & ~(size_t)4095);
	unsigned long n = 0, copied = 0;
	uint32_t sent = 0, done = 0;
	double t0, c0, p0, t, c, pc;

	if (!hdr || !buf || pair(&snd, &th, &rcv)) {
		perror(way);
		exit(1);
	}
	if (!strcmp(way, "zerocopy") && setsockopt(snd, SOL_SOCKET, SO_ZEROCOPY, &one, sizeof(one))) {
		perror("SO_ZEROCOPY");
		exit(1);
	}
	if (!strcmp(way, "splice")) {
		if (pipe(p)) {
			perror("pipe");
			exit(1);
		}
		fcntl(p[1], F_SETPIPE_SZ, (int)(size < 65536 ? 65536 : size));
	}
	t0 = now_s(CLOCK_MONOTONIC);
	c0 = now_s(CLOCK_THREAD_CPUTIME_ID);
	p0 = now_s(CLOCK_PROCESS_CPUTIME_ID);
	do {
		struct iovec iov[2] = { { hdr, HDR }, { buf, size } };

		if (!strcmp(way, "splice")) {
			loff_t off = 0;
			size_t left = size;

			if (send(snd, hdr, HDR, MSG_MORE) != HDR) {
				perror("send");
				exit(1);
			}
			while (left) {
				ssize_t in = splice(file, &off, p[1], NULL, left, SPLICE_F_MOVE), out;

				if (in <= 0) {
					perror("splice in");
					exit(1);
				}
				for (out = 0; out < in;) {
					ssize_t w = splice(p[0], NULL, snd, NULL, (size_t)(in - out),
							   SPLICE_F_MOVE | (left > (size_t)in ? SPLICE_F_MORE : 0));

					if (w <= 0) {
						perror("splice out");
						exit(1);
					}
					out += w;
				}
				left -= (size_t)in;
			}
		} else {
			/* the buffer may be rewritten only when its last send is done */
			if (!strcmp(way, "zerocopy"))
				copied += zc_reap(snd, sent, &done);
			if (preadv(file, &iov[1], 1, 0) != (ssize_t)size) {
				perror("preadv");
				exit(1);
			}
			for (;;) {
				int rc = send_all(snd, iov, 2, strcmp(way, "zerocopy") ? 0 : MSG_ZEROCOPY);

				if (rc == -ENOBUFS) {
					copied += zc_reap(snd, sent, &done);
					continue;
				}
				if (rc) {
					fprintf(stderr, "sendmsg: %s\n", strerror(-rc));
					exit(1);
				}
				break;
			}
			sent++;
		}
		n++;
		t = now_s(CLOCK_MONOTONIC) - t0;
	} while (t < secs);
	if (!strcmp(way, "zerocopy"))
		copied += zc_reap(snd, sent, &done);
	c = now_s(CLOCK_THREAD_CPUTIME_ID) - c0;
	t = now_s(CLOCK_MONOTONIC) - t0;
	shutdown(snd, SHUT_WR);
	pthread_join(th, NULL);
	pc = now_s(CLOCK_PROCESS_CPUTIME_ID) - p0;
	close(snd);
	close(rcv);
	if (p[0] >= 0) {
		close(p[0]);
		close(p[1]);
	}
	printf("%-9s size %8zu: %9.0f replies/s %8.1f MiB/s  CPU us/reply: sender %7.1f, both %7.1f%s",
	       way, size, (double)n / t, (double)n * (double)size / t / 1048576.0, c / (double)n * 1e6,
	       pc / (double)n * 1e6,
	       strcmp(way, "zerocopy") ? "\n" : "");
	if (!strcmp(way, "zerocopy"))
		printf("  (%lu of %u sends copied by the kernel)\n", copied, sent);
	free(hdr);
	free(buf);
}

int main(int argc, char **argv)
{
	size_t size = argc > 1 ? strtoul(argv[1], NULL, 0) : 1048576;
	double secs = argc > 2 ? atof(argv[2]) : 3;
	char path[] = "/tmp/bench_tcp_send.XXXXXX";
	int file = mkstemp(path);
	char *data = malloc(size);

	if (file < 0 || !data || !size) {
		perror("file");
		return 1;
	}
	memset(data, 0x5a, size);
	if (write(file, data, size) != (ssize_t)size) {
		perror("write");
		return 1;
	}
	unlink(path);
	free(data);
	run("sendmsg", file, size, secs);
	run("zerocopy", file, size, secs);
	run("splice", file, size, secs);
	close(file);
	return 0;
}
