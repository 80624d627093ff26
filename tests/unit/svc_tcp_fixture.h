/* SPDX-License-Identifier: MIT */
/*
 * svc_tcp_fixture.h - what the TCP transport's unit tests share
 * (test_svc_tcp.c, test_svc_tcp_splice.c, test_svc_tcp_idle.c): a server
 * serving one end of a socketpair, the group's run loop turned by hand,
 * records written and read on the client's end, loopback clients.
 * Header-only (static inline), as test_words.h: each test program
 * includes it.
 *
 * No device and no VM: the server's end of a socketpair is handed to the
 * transport (svc_tcp_adopt()) as if accepted from 192.0.2.1 (RFC 5737
 * TEST-NET-1), and tcp_fixture_pump() runs the group's loop on the test's
 * thread: its epoll set, then the worker step, then the done queue.
 */
#ifndef RPCRDMA_SVC_TCP_FIXTURE_H
#define RPCRDMA_SVC_TCP_FIXTURE_H

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "test_words.h"

#include "svc/svc_internal.h"

/* One server and the client's end of its one adopted connection. */
struct tcp_fixture {
	struct rpcrdma_svc tf_svc;
	int tf_peer;                 /* the client's end */
	struct sockaddr_in tf_addr;  /* the client's address as the server sees it */
};

/*
 * A server made with @cfg serving program @prog version 1 with @dispatch,
 * and one connection: the server's end of a socketpair adopted from
 * 192.0.2.1.  Fails the test on any error; never NULL.  Free with
 * tcp_fixture_close() then tcp_fixture_free().
 */
static inline struct tcp_fixture *
tcp_fixture_new(const struct rpcrdma_svc_config *cfg, uint32_t prog,
		int (*dispatch)(struct rpcrdma_svc_req *req, void *arg))
{
	struct tcp_fixture *f = calloc(1, sizeof(*f));
	int sv[2];

	assert_non_null(f);
	assert_int_equal(svc_init(&f->tf_svc, cfg), 0);
	assert_int_equal(rpcrdma_svc_register(&f->tf_svc, prog, 1, dispatch, NULL), 0);
	f->tf_addr.sin_family = AF_INET;
	f->tf_addr.sin_addr.s_addr = htonl(0xc0000201); /* 192.0.2.1 */
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	assert_int_equal(svc_tcp_adopt(&f->tf_svc.sv_groups[0], sv[0],
				       (struct sockaddr *)&f->tf_addr), 0);
	f->tf_peer = sv[1];
	return f;
}

/* Close the client's end (unless a test did) and every TCP connection of
 * the group; the server stays for the caller's checks. */
static inline void tcp_fixture_close(struct tcp_fixture *f)
{
	if (f->tf_peer >= 0)
		close(f->tf_peer);
	f->tf_peer = -1;
	svc_tcp_class.xc_close_all(&f->tf_svc.sv_groups[0]);
}

/* Finish the server and free @f. */
static inline void tcp_fixture_free(struct tcp_fixture *f)
{
	svc_fini(&f->tf_svc);
	free(f);
}

/* One turn of @grp's run loop for up to @ms milliseconds: TCP events,
 * then the calls queued for the workers run here, then their replies go. */
static inline void tcp_group_pump(struct svc_group *grp, int ms)
{
	struct epoll_event evs[8];
	int n, i;

	n = epoll_wait(grp->gr_epoll, evs, 8, ms);
	for (i = 0; i < n; i++)
		if (svc_tcp_is_tag(evs[i].data.ptr))
			svc_tcp_event(grp, evs[i].data.ptr, evs[i].events);
	while (svc_worker_run_one(grp))
		;
	svc_take_done(grp);
}

/* One turn of the fixture's server's run loop (tcp_group_pump()). */
static inline void tcp_fixture_pump(struct tcp_fixture *f, int ms)
{
	tcp_group_pump(&f->tf_svc.sv_groups[0], ms);
}

/* Pump (5 ms turns, at most @turns) until @n bytes came from @fd; read
 * them into @buf.  Return: bytes read (less on end of file or when the
 * turns ran out: a hang bound, not a time asserted). */
static inline size_t tcp_fixture_pump_read(struct tcp_fixture *f, int fd, uint8_t *buf,
					   size_t n, int turns)
{
	size_t got = 0;

	while (turns-- > 0 && got < n) {
		ssize_t r;

		tcp_fixture_pump(f, 5);
		r = recv(fd, buf + got, n - got, MSG_DONTWAIT);
		if (r == 0)
			break;
		if (r > 0)
			got += (size_t)r;
	}
	return got;
}

/* Write all @n bytes of @buf to @fd (blocking). */
static inline void tcp_write_all(int fd, const void *buf, size_t n)
{
	const uint8_t *p = buf;

	while (n) {
		ssize_t w = write(fd, p, n);

		assert_true(w > 0);
		p += w;
		n -= (size_t)w;
	}
}

/* @n words @w into @out as big-endian XDR (RFC 4506 4.1); bytes. */
static inline size_t tcp_words(uint8_t *out, const uint32_t *w, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		put32(out + 4 * i, w[i]);
	return 4 * n;
}

/*
 * A blocking TCP connection to 127.0.0.1:@port from 127.0.0.@host (0: the
 * kernel's choice), with TCP_NODELAY, and a receive buffer of @rcvbuf
 * bytes set before connecting (0: the default).  Fails the test on error.
 */
static inline int tcp_connect_loopback(uint16_t port, unsigned host, int rcvbuf)
{
	struct sockaddr_in me = { .sin_family = AF_INET,
				  .sin_addr.s_addr = htonl(0x7f000000u | host) };
	struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons(port),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;

	assert_true(fd >= 0);
	if (rcvbuf)
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	if (host)
		assert_int_equal(bind(fd, (struct sockaddr *)&me, sizeof(me)), 0);
	assert_int_equal(connect(fd, (struct sockaddr *)&to, sizeof(to)), 0);
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

/*
 * Listen on 127.0.0.1 (an ephemeral port, into *@port) and connect a
 * second client there with a small receive buffer (4096 bytes: replies
 * back up in the server), pumping until the server has both connections.
 * Return: the client's descriptor.  Stop listening with svc_tcp_unlisten().
 */
static inline int tcp_fixture_second_client(struct tcp_fixture *f, uint16_t *port)
{
	int fd, turns;

	*port = 0;
	assert_int_equal(svc_tcp_listen(&f->tf_svc, "127.0.0.1", 0, port), 0);
	assert_true(*port != 0);
	fd = tcp_connect_loopback(*port, 0, 4096);
	for (turns = 0; turns < 100 && atomic_load(&f->tf_svc.sv_ct.tcp_connections) < 2;
	     turns++)
		tcp_fixture_pump(f, 5);
	return fd;
}

/* Reset @fd's connection: SO_LINGER 0, then close (an RST, not a FIN). */
static inline void tcp_reset(int fd)
{
	struct linger lg = { .l_onoff = 1, .l_linger = 0 };

	setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	close(fd);
}

/*
 * The second client (tcp_fixture_second_client()), its replies backed up
 * in the server, reads a few bytes and resets its connection: the server
 * must close that connection and take every call context back, the
 * fixture's own connection staying.  Stops listening.
 */
static inline void tcp_fixture_reset_second(struct tcp_fixture *f, int fd)
{
	uint8_t b[16];
	int turns;

	assert_int_equal(recv(fd, b, sizeof(b), 0), (ssize_t)sizeof(b));
	tcp_reset(fd);
	for (turns = 0;
	     turns < 200 && atomic_load(&f->tf_svc.sv_ct.conns_open[SVC_XPRT_TCP]) > 1;
	     turns++)
		tcp_fixture_pump(f, 5);
	assert_int_equal(atomic_load(&f->tf_svc.sv_ct.conns_open[SVC_XPRT_TCP]), 1);
	assert_int_equal(atomic_load(&f->tf_svc.sv_ct.tcp_calls_in_use), 0);
	svc_tcp_unlisten(&f->tf_svc);
}

#endif /* RPCRDMA_SVC_TCP_FIXTURE_H */
