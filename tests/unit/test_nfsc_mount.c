// SPDX-License-Identifier: MIT
/*
 * test_nfsc_mount.c - MOUNT v3 over TCP (RFC 1813 section 5) is tried
 * again after a connection failure, with the transport's back-off, and
 * not after a MOUNT status.  The server is a thread on 127.0.0.1 that
 * answers MNT by hand (RFC 5531 record marking and reply, RFC 1813
 * mountres3) after dropping the first connections it accepts.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
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
			/* keep it open until the client hangs up */
			while (read(c, call, sizeof(call)) > 0)
				;
		}
		close(c);
		return NULL;
	}
	return NULL;
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
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
