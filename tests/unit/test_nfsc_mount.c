// SPDX-License-Identifier: MIT
/*
 * test_nfsc_mount.c - MOUNT v3 over TCP (RFC 1813 section 5) is tried
 * again after a connection failure, with the transport's back-off, and
 * not after a MOUNT status.  The server is a thread on 127.0.0.1 that
 * answers MNT by hand (RFC 5531 record marking and reply, RFC 1813
 * mountres3) after dropping the first connections it accepts.  The
 * rpcbind lookup of MOUNT's port (RFC 1833 GETADDR) against a fake
 * rpcbind that answers one call by hand.  The mount's time limit
 * (nf_timeout_ms) bounds MOUNT and rpcbind against a server that accepts
 * and never answers, and one whose listen queue is full (SYNs dropped).
 * A name that does not resolve is -ENXIO, not retried.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cmocka.h>

#include "test_words.h"

#include "common/backoff.h"
#include "nfsc/nfsc_internal.h"

/* A listening socket on 127.0.0.1 (port out), or, with @listen_too
 * false, a port nothing listens on. */
static int local_port(uint16_t *port, bool listen_too)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t len = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	assert_true(fd >= 0);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &len), 0);
	*port = ntohs(sa.sin_port);
	if (!listen_too) {
		close(fd);
		return -1;
	}
	assert_int_equal(listen(fd, 8), 0);
	return fd;
}

struct mnt_server {
	int ms_fd;
	unsigned ms_drop;     /* connections closed unanswered first */
	uint32_t ms_status;   /* mountres3 status of the answer */
	unsigned ms_accepted;
	unsigned ms_later;    /* calls after MNT on its connection (UMNT) */
};

static bool read_full(int fd, uint8_t *p, size_t n)
{
	while (n) {
		ssize_t r = read(fd, p, n);

		if (r <= 0)
			return false;
		p += r;
		n -= (size_t)r;
	}
	return true;
}

static void *mnt_server_run(void *arg)
{
	struct mnt_server *ms = arg;
	uint8_t mark[4], call[2048], reply[128], *p;
	uint32_t len;

	for (;;) {
		int c = accept(ms->ms_fd, NULL, NULL);

		if (c < 0)
			return NULL;
		ms->ms_accepted++;
		if (ms->ms_accepted <= ms->ms_drop) {
			close(c);
			continue;
		}
		if (read_full(c, mark, 4) && (len = get32(mark) & 0x7fffffffu) <= sizeof(call) &&
		    read_full(c, call, len)) {
			p = put32(reply + 4, get32(call)); /* xid */
			p = put32(p, 1);                   /* REPLY */
			p = put32(p, 0);                   /* MSG_ACCEPTED */
			p = put32(p, 0);                   /* verf AUTH_NONE */
			p = put32(p, 0);
			p = put32(p, 0);                   /* SUCCESS */
			p = put32(p, ms->ms_status);
			if (!ms->ms_status) {
				p = put32(p, 4);           /* fhandle3 of 4 bytes */
				p = put32(p, 0xf00dcafe);
				p = put32(p, 1);           /* one flavor: AUTH_SYS */
				p = put32(p, 1);
			}
			put32(reply, 0x80000000u | (uint32_t)(p - reply - 4));
			if (write(c, reply, (size_t)(p - reply)) < 0)
				break;
			/* later calls (UMNT) on the connection: void results,
			 * until the client hangs up */
			while (read_full(c, mark, 4) &&
			       (len = get32(mark) & 0x7fffffffu) <= sizeof(call) &&
			       read_full(c, call, len)) {
				ms->ms_later++;
				p = put32(reply + 4, get32(call));
				p = put32(p, 1);
				p = put32(p, 0);
				p = put32(p, 0);
				p = put32(p, 0);
				p = put32(p, 0);           /* SUCCESS, no result */
				put32(reply, 0x80000000u | (uint32_t)(p - reply - 4));
				if (write(c, reply, (size_t)(p - reply)) < 0)
					break;
			}
		}
		close(c);
		return NULL;
	}
	return NULL;
}

/*
 * A fake rpcbind: one connection, one call.  It keeps the call's words
 * for the test to check and answers with @rb_uaddr as the GETADDR
 * result (RFC 1833 2.2.1: a string), or with PROG_MISMATCH when
 * @rb_mismatch (an rpcbind without version 3).
 */
struct rpcb_server {
	int rb_fd;
	const char *rb_uaddr;
	bool rb_mismatch;
	uint32_t rb_call[64];  /* the call after its record mark */
	uint32_t rb_call_len;
};

static void *rpcb_server_run(void *arg)
{
	struct rpcb_server *rb = arg;
	uint8_t mark[4], call[256], reply[256], *p;
	uint32_t len, i, n;
	int c = accept(rb->rb_fd, NULL, NULL);

	if (c < 0)
		return NULL;
	if (read_full(c, mark, 4) && (len = get32(mark) & 0x7fffffffu) <= sizeof(call) &&
	    read_full(c, call, len)) {
		rb->rb_call_len = len;
		for (i = 0; i < len / 4; i++)
			rb->rb_call[i] = get32(call + 4 * i);
		p = put32(reply + 4, get32(call)); /* xid */
		p = put32(p, 1);                   /* REPLY */
		p = put32(p, 0);                   /* MSG_ACCEPTED */
		p = put32(p, 0);                   /* verf AUTH_NONE */
		p = put32(p, 0);
		if (rb->rb_mismatch) {
			p = put32(p, 2);           /* PROG_MISMATCH */
			p = put32(p, 2);           /* low */
			p = put32(p, 2);           /* high */
		} else {
			n = (uint32_t)strlen(rb->rb_uaddr);
			p = put32(p, 0);           /* SUCCESS */
			p = put32(p, n);
			memcpy(p, rb->rb_uaddr, n);
			memset(p + n, 0, (4 - n % 4) % 4);
			p += (n + 3) / 4 * 4;
		}
		put32(reply, 0x80000000u | (uint32_t)(p - reply - 4));
		if (write(c, reply, (size_t)(p - reply)) < 0)
			rb->rb_call_len = 0;
		while (read(c, call, sizeof(call)) > 0)
			;
	}
	close(c);
	return NULL;
}

static int rpcb_ask(struct rpcb_server *rb, uint16_t *port)
{
	uint16_t rport;
	pthread_t t;
	int rc;

	rb->rb_fd = local_port(&rport, true);
	assert_int_equal(pthread_create(&t, NULL, rpcb_server_run, rb), 0);
	rc = nfsc_rpcb_getport("127.0.0.1", rport, 100005, 3, 0, port);
	pthread_join(t, NULL);
	close(rb->rb_fd);
	return rc;
}

/* MOUNT's port from rpcbind: the call is RPCBPROC_GETADDR (3) of rpcbind
 * version 3 (program 100000) for program 100005 version 3 over "tcp"
 * (RFC 1833 2.2.1, worked out by hand); the universal address
 * 127.0.0.1.78.32 is port 78 * 256 + 32 = 20000. */
static void test_rpcb_getport(void **state)
{
	struct rpcb_server rb = { .rb_uaddr = "127.0.0.1.78.32" };
	uint16_t port = 0;
	const uint32_t *w = rb.rb_call;

	(void)state;
	assert_int_equal(rpcb_ask(&rb, &port), 0);
	assert_int_equal(port, 20000);
	/* xid, CALL, rpcvers 2, prog, vers, proc, cred (flavor, len, ...) */
	assert_int_equal(w[1], 0);
	assert_int_equal(w[2], 2);
	assert_int_equal(w[3], 100000);
	assert_int_equal(w[4], 3);
	assert_int_equal(w[5], 3);
	/* AUTH_NONE credential and verifier: then r_prog, r_vers, r_netid */
	assert_int_equal(w[6], 0);
	assert_int_equal(w[7], 0);
	assert_int_equal(w[8], 0);
	assert_int_equal(w[9], 0);
	assert_int_equal(w[10], 100005);
	assert_int_equal(w[11], 3);
	assert_int_equal(w[12], 3);                    /* "tcp" */
	assert_int_equal(w[13], 0x74637000u);
	assert_int_equal(w[14], 0);                    /* r_addr "" */
	assert_int_equal(w[15], 0);                    /* r_owner "" */
	assert_int_equal(rb.rb_call_len, 16 * 4);

	/* an IPv6 universal address: the port is still the last two fields */
	rb = (struct rpcb_server){ .rb_uaddr = "::1.0.111" };
	assert_int_equal(rpcb_ask(&rb, &port), 0);
	assert_int_equal(port, 111);
}

/* Not registered (""), an rpcbind without version 3, an answer that is
 * no universal address or longer than any (RPCRDMA_RPCB_UADDR_MAX),
 * nothing listening: each its own error. */
static void test_rpcb_getport_errors(void **state)
{
	struct rpcb_server rb = { .rb_uaddr = "" };
	uint16_t port = 7, nothing;

	(void)state;
	assert_int_equal(rpcb_ask(&rb, &port), -ECONNREFUSED);
	rb = (struct rpcb_server){ .rb_mismatch = true };
	assert_int_equal(rpcb_ask(&rb, &port), -EPROTONOSUPPORT);
	rb = (struct rpcb_server){ .rb_uaddr = "127.0.0.1" };
	assert_int_equal(rpcb_ask(&rb, &port), -EPROTO);
	rb = (struct rpcb_server){ .rb_uaddr = "127.0.0.1.256.1" };
	assert_int_equal(rpcb_ask(&rb, &port), -EPROTO);
	rb = (struct rpcb_server){ .rb_uaddr = "127.0.0.1.0.0" };
	assert_int_equal(rpcb_ask(&rb, &port), -EPROTO);
	assert_int_equal(port, 7);
	/* a string longer than any universal address: not decoded */
	{
		char longer[201];

		memset(longer, '1', 200);
		longer[200] = '\0';
		rb = (struct rpcb_server){ .rb_uaddr = longer };
		assert_int_equal(rpcb_ask(&rb, &port), -ECONNREFUSED);
		assert_int_equal(port, 7);
	}
	local_port(&nothing, false);
	assert_int_equal(nfsc_rpcb_getport("127.0.0.1", nothing, 100005, 3, 0, &port),
			 -ECONNREFUSED);
}

/* Nothing listens: every attempt is refused; 1 + nf_retries attempts. */
static void test_mount_refused_retried(void **state)
{
	struct rpcrdma_nfsc nc = { .nc_log = stderr };
	struct rpcrdma_nfsc_config cfg = { .nf_server = "127.0.0.1", .nf_export = "/x",
					   .nf_retries = 2 };

	(void)state;
	local_port(&cfg.nf_mount_port, false);
	assert_int_equal(nfsc_mnt(&nc, &cfg), -ECONNREFUSED);
	assert_int_equal(nc.nc_mnt_attempts, 3);
	cfg.nf_retries = 0;
	nc.nc_mnt_attempts = 0;
	assert_int_equal(nfsc_mnt(&nc, &cfg), -ECONNREFUSED);
	assert_int_equal(nc.nc_mnt_attempts, 1);
}

/* Two connections dropped, the third answered: mounted on attempt 3. */
static void test_mount_succeeds_on_retry(void **state)
{
	struct rpcrdma_nfsc nc = { .nc_log = stderr };
	struct rpcrdma_nfsc_config cfg = { .nf_server = "127.0.0.1", .nf_export = "/x",
					   .nf_retries = 5 };
	struct mnt_server ms = { .ms_drop = 2 };
	pthread_t t;

	(void)state;
	ms.ms_fd = local_port(&cfg.nf_mount_port, true);
	assert_int_equal(pthread_create(&t, NULL, mnt_server_run, &ms), 0);
	assert_int_equal(nfsc_mnt(&nc, &cfg), 0);
	assert_int_equal(nc.nc_mnt_attempts, 3);
	assert_int_equal(nc.nc_root.fh_len, 4);
	assert_int_equal(get32(nc.nc_root.fh_data), 0xf00dcafe);
	nc.nc_export = (char *)"/x";
	nfsc_umnt(&nc);
	pthread_join(t, NULL);
	close(ms.ms_fd);
}

/* A MOUNT status (NOENT) is an answer, not a failure: no retry. */
static void test_mount_status_not_retried(void **state)
{
	struct rpcrdma_nfsc nc = { .nc_log = stderr };
	struct rpcrdma_nfsc_config cfg = { .nf_server = "127.0.0.1", .nf_export = "/x",
					   .nf_retries = 5 };
	struct mnt_server ms = { .ms_status = 2 };
	pthread_t t;

	(void)state;
	ms.ms_fd = local_port(&cfg.nf_mount_port, true);
	assert_int_equal(pthread_create(&t, NULL, mnt_server_run, &ms), 0);
	assert_int_equal(nfsc_mnt(&nc, &cfg), -ENOENT);
	assert_int_equal(nc.nc_mnt_attempts, 1);
	pthread_join(t, NULL);
	close(ms.ms_fd);
}

/*
 * Which step of a mount failed (rpcrdma_nfsc_mount_step()): nothing on the
 * MOUNT port is MOUNT's refusal; a MOUNT answered but nothing serving
 * RPC-over-RDMA on the NFS port (no device at all, or a refusal) is the
 * connection's; a configuration without a server is no step's.
 */
static void test_mount_step(void **state)
{
	struct rpcrdma_nfsc_config cfg = { .nf_server = "127.0.0.1", .nf_export = "/x",
					   .nf_timeout_ms = 2000 };
	enum rpcrdma_nfsc_step step = RPCRDMA_NFSC_STEP_FSINFO;
	struct rpcrdma_nfsc *nc = NULL;
	struct mnt_server ms = { 0 };
	pthread_t t;

	(void)state;
	local_port(&cfg.nf_mount_port, false);
	assert_int_equal(rpcrdma_nfsc_mount_step(&cfg, &nc, &step), -ECONNREFUSED);
	assert_int_equal(step, RPCRDMA_NFSC_STEP_MOUNT);
	assert_null(nc);

	ms.ms_fd = local_port(&cfg.nf_mount_port, true);
	local_port(&cfg.nf_port, false);
	assert_int_equal(pthread_create(&t, NULL, mnt_server_run, &ms), 0);
	step = RPCRDMA_NFSC_STEP_FSINFO;
	assert_true(rpcrdma_nfsc_mount_step(&cfg, &nc, &step) < 0);
	assert_int_equal(step, RPCRDMA_NFSC_STEP_CONNECT);
	assert_null(nc);
	pthread_join(t, NULL);
	assert_int_equal(ms.ms_accepted, 1);
	assert_int_equal(ms.ms_later, 1);   /* the failed mount's UMNT */
	close(ms.ms_fd);

	cfg.nf_server = NULL;
	step = RPCRDMA_NFSC_STEP_MOUNT;
	assert_int_equal(rpcrdma_nfsc_mount_step(&cfg, &nc, &step), -EINVAL);
	assert_int_equal(step, RPCRDMA_NFSC_STEP_NONE);
}

/*
 * A server that accepts and then says nothing: it reads and keeps every
 * connection until the test closes its listening socket (EOF then on a
 * held one ends the thread).  ss_accepted counts connections taken.
 */
struct silent_server {
	int ss_fd;
	unsigned ss_accepted;
};

static void *silent_server_run(void *arg)
{
	struct silent_server *ss = arg;
	uint8_t buf[512];
	int c = accept(ss->ss_fd, NULL, NULL);

	if (c < 0)
		return NULL;
	ss->ss_accepted++;
	while (read(c, buf, sizeof(buf)) > 0)
		; /* the call arrives and is dropped; the client hangs up */
	close(c);
	return NULL;
}

/*
 * The watchdog of the tests below: the old MOUNT client waited 10 s for
 * any answer and connect() for minutes whatever nf_timeout_ms said; a
 * limit of 1 s must end the call long before SIGALRM (default action:
 * the test dies, reported as a failure) at 8 s.  No time is asserted.
 */
#define WATCHDOG_S 8

/*
 * MOUNT to a server that accepts and never answers, limit 1 s:
 * -ETIMEDOUT, after one connection (no retries asked).  The log stays
 * empty: libtirpc's "RPC: Timed out" is the caller's to word (the tool
 * prints its own message); with nc_verbose it is logged.
 */
static void test_mount_timeout_silent(void **state)
{
	struct rpcrdma_nfsc_config cfg = { .nf_server = "127.0.0.1", .nf_export = "/x",
					   .nf_timeout_ms = 1000 };

	(void)state;
	for (int verbose = 0; verbose <= 1; verbose++) {
		struct rpcrdma_nfsc nc = { .nc_verbose = verbose };
		struct silent_server ss = { 0 };
		char *logged = NULL;
		size_t loglen = 0;
		pthread_t t;

		nc.nc_log = open_memstream(&logged, &loglen);
		assert_non_null(nc.nc_log);
		ss.ss_fd = local_port(&cfg.nf_mount_port, true);
		assert_int_equal(pthread_create(&t, NULL, silent_server_run, &ss), 0);
		alarm(WATCHDOG_S);
		assert_int_equal(nfsc_mnt(&nc, &cfg), -ETIMEDOUT);
		alarm(0);
		pthread_join(t, NULL);
		assert_int_equal(ss.ss_accepted, 1);
		assert_int_equal(nc.nc_mnt_attempts, 1);
		assert_null(nc.nc_mnt);
		close(ss.ss_fd);
		fclose(nc.nc_log);
		if (verbose)
			assert_non_null(strstr(logged, "rpcrdma-nfsc: MOUNT: RPC: Timed out"));
		else
			assert_int_equal(loglen, 0);
		free(logged);
	}
}

/*
 * A server name that does not resolve (RFC 6761: names under .invalid
 * never do): -ENXIO, told apart from -EHOSTUNREACH (an address without a
 * route, which is retried), whether the MOUNT port is given or asked of
 * rpcbind; one attempt though retries are allowed, nothing logged.
 */
static void test_mount_unresolvable(void **state)
{
	struct rpcrdma_nfsc_config cfg = { .nf_server = "nosuch-rpcrdma-host.invalid",
					   .nf_export = "/x", .nf_retries = 3,
					   .nf_mount_port = 20048 };
	uint16_t port = 7;

	(void)state;
	for (int by_rpcbind = 0; by_rpcbind <= 1; by_rpcbind++) {
		struct rpcrdma_nfsc nc = { 0 };
		char *logged = NULL;
		size_t loglen = 0;

		if (by_rpcbind)
			cfg.nf_mount_port = 0;
		nc.nc_log = open_memstream(&logged, &loglen);
		assert_non_null(nc.nc_log);
		assert_int_equal(nfsc_mnt(&nc, &cfg), -ENXIO);
		assert_int_equal(nc.nc_mnt_attempts, 1);
		fclose(nc.nc_log);
		assert_int_equal(loglen, 0);
		free(logged);
	}
	assert_int_equal(nfsc_rpcb_getport(cfg.nf_server, 111, 100005, 3, 0, &port), -ENXIO);
	assert_int_equal(port, 7);
	assert_false(nfsc_mnt_retryable(-ENXIO));
}

/* rpcbind (MOUNT's port asked for) that accepts and never answers:
 * -ETIMEDOUT from the lookup within the limit. */
static void test_rpcb_timeout_silent(void **state)
{
	struct silent_server ss = { 0 };
	uint16_t rport, port = 7;
	pthread_t t;

	(void)state;
	ss.ss_fd = local_port(&rport, true);
	assert_int_equal(pthread_create(&t, NULL, silent_server_run, &ss), 0);
	alarm(WATCHDOG_S);
	assert_int_equal(nfsc_rpcb_getport("127.0.0.1", rport, 100005, 3, 1000, &port),
			 -ETIMEDOUT);
	alarm(0);
	pthread_join(t, NULL);
	assert_int_equal(ss.ss_accepted, 1);
	assert_int_equal(port, 7);
	close(ss.ss_fd);
}

/*
 * A MOUNT port whose listen queue is full: Linux drops the SYN of a
 * connection that finds the accept queue full (listen backlog 0 holds one
 * connection, which a first plain connect takes), so connect() would
 * retry for about two minutes (tcp_syn_retries).  With a limit of 1 s the
 * MOUNT gives up connecting: -ETIMEDOUT.
 */
static void test_mount_timeout_connect(void **state)
{
	struct rpcrdma_nfsc nc = { 0 };
	struct rpcrdma_nfsc_config cfg = { .nf_server = "127.0.0.1", .nf_export = "/x",
					   .nf_timeout_ms = 1000 };
	struct sockaddr_in sa = { .sin_family = AF_INET };
	char *logged = NULL;
	size_t loglen = 0;
	int lfd, filler;

	(void)state;
	/* a MNT call that timed out would be logged ("MOUNT: RPC: ..."): the
	 * connect must be what gave up, not a call sent on it */
	nc.nc_log = open_memstream(&logged, &loglen);
	assert_non_null(nc.nc_log);
	nc.nc_verbose = 1; /* libtirpc's words are logged only then */
	lfd = local_port(&cfg.nf_mount_port, true);
	assert_int_equal(listen(lfd, 0), 0);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sa.sin_port = htons(cfg.nf_mount_port);
	filler = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(filler >= 0);
	assert_int_equal(connect(filler, (struct sockaddr *)&sa, sizeof(sa)), 0);
	alarm(WATCHDOG_S);
	assert_int_equal(nfsc_mnt(&nc, &cfg), -ETIMEDOUT);
	alarm(0);
	fclose(nc.nc_log);
	assert_null(strstr(logged, "MOUNT: RPC"));
	free(logged);
	close(filler);
	close(lfd);
}

/* The schedule, worked out by hand: 250, 500, 1000, ..., capped. */
static void test_backoff_schedule(void **state)
{
	(void)state;
	assert_int_equal(rpcrdma_backoff_next(0, 8000), 250);
	assert_int_equal(rpcrdma_backoff_next(250, 8000), 500);
	assert_int_equal(rpcrdma_backoff_next(4000, 8000), 8000);
	assert_int_equal(rpcrdma_backoff_next(8000, 8000), 8000);
	assert_int_equal(rpcrdma_backoff_next(0, 100), 100);
	assert_int_equal(rpcrdma_backoff_next(3000, 5000), 5000);
	assert_true(nfsc_mnt_retryable(-ECONNRESET));
	assert_false(nfsc_mnt_retryable(-EACCES));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mount_refused_retried),
		cmocka_unit_test(test_mount_succeeds_on_retry),
		cmocka_unit_test(test_mount_status_not_retried),
		cmocka_unit_test(test_backoff_schedule),
		cmocka_unit_test(test_mount_step),
		cmocka_unit_test(test_rpcb_getport),
		cmocka_unit_test(test_rpcb_getport_errors),
		cmocka_unit_test(test_mount_timeout_silent),
		cmocka_unit_test(test_rpcb_timeout_silent),
		cmocka_unit_test(test_mount_timeout_connect),
		cmocka_unit_test(test_mount_unresolvable),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
