/* SPDX-License-Identifier: MIT */
/*
 * clnt_fixture.h - a Requester set up on the fake device (fake_verbs.c)
 * for the client unit tests.  Header-only: each test program includes it
 * after cmocka.h, fake_verbs.h and clnt/clnt_internal.h.
 */
#ifndef RPCRDMA_TEST_CLNT_FIXTURE_H
#define RPCRDMA_TEST_CLNT_FIXTURE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

/* CLNT_WAIT_MS - how long a test waits for a condition another thread
 * brings about before it fails (a bound, not a measurement: generous so
 * that a loaded machine or a sanitizer build is never mistaken for a
 * defect) */
#define CLNT_WAIT_MS 30000u

/* clnt_fixture_ms - CLOCK_MONOTONIC in milliseconds (the client's clock
 * for call deadlines) */
static inline uint64_t clnt_fixture_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/*
 * CLNT_WAIT_UNTIL - poll @cond (an expression, evaluated with @lock held,
 * NULL: without a lock) every millisecond until it holds or CLNT_WAIT_MS
 * have passed; fails the test in the second case.
 */
#define CLNT_WAIT_UNTIL(lock, cond)                                             \
	do {                                                                    \
		uint64_t cw_end_ = clnt_fixture_ms() + CLNT_WAIT_MS;            \
		pthread_mutex_t *cw_lock_ = (lock);                             \
		bool cw_ok_;                                                    \
		for (;;) {                                                      \
			if (cw_lock_)                                           \
				pthread_mutex_lock(cw_lock_);                   \
			cw_ok_ = (cond);                                        \
			if (cw_lock_)                                           \
				pthread_mutex_unlock(cw_lock_);                 \
			if (cw_ok_ || clnt_fixture_ms() > cw_end_)              \
				break;                                          \
			usleep(1000);                                           \
		}                                                               \
		if (!cw_ok_)                                                    \
			fail_msg("waited %u ms for: %s", CLNT_WAIT_MS, #cond);  \
	} while (0)

/*
 * A client made from @cfg (clnt_init) on a fake QP and CQ, its request and
 * receive pools registered.  No Receive is posted yet and it is not
 * connected; the caller frees it with clnt_free().
 */
static inline struct rpcrdma_clnt *
clnt_fixture_new(const struct rpcrdma_clnt_config *cfg)
{
	static struct ibv_qp fake_qp;
	static struct ibv_cq fake_cq;
	struct rpcrdma_clnt *cl = calloc(1, sizeof(*cl));

	assert_non_null(cl);
	assert_int_equal(clnt_init(cl, cfg), 0);
	cl->cl_qp = &fake_qp;
	cl->cl_cq = &fake_cq;
	assert_int_equal(clnt_alloc_pools(cl), 0);
	return cl;
}

/*
 * Hand @cl the private data a peer would accept with (RFC 8797 section 4):
 * version 1, @send_size and @recv_size bytes of inline send and receive.
 */
static inline void clnt_fixture_set_peer(struct rpcrdma_clnt *cl, uint32_t send_size,
					 uint32_t recv_size)
{
	struct rpcrdma_cm_private peer = {
		.cp_version = 1, .cp_send_size = send_size, .cp_recv_size = recv_size,
	};
	uint8_t pdata[RPCRDMA_CM_PRIVATE_BYTES];

	rpcrdma_wire_encode_private(pdata, &peer);
	clnt_set_peer(cl, pdata, sizeof(pdata));
}

#endif /* RPCRDMA_TEST_CLNT_FIXTURE_H */
