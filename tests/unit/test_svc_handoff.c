// SPDX-License-Identifier: MIT
/*
 * test_svc_handoff.c - the hand-off between a group's run loop and its
 * worker threads (svc_worker.c), with real worker threads: each idle
 * worker sleeps on its own semaphore and svc_work_flush() wakes exactly
 * one per call it hands over, none when every worker is busy (counted
 * in gr_wq_wakes); a call queued while every worker is busy is still
 * served; the done queue gives the calls back oldest first and wakes the
 * run loop once per push onto an empty queue; a stop serves what is
 * queued before the workers end; the loop's eventfd is edge-triggered.
 * Expected counts are worked out by hand from those rules.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>
#include <cmocka.h>

#include "fake_verbs.h"
#include "svc/svc_internal.h"

/* Calls that wait at a gate until the test opens it, and count. */
static struct gate {
	pthread_mutex_t g_lock;
	pthread_cond_t g_cond;
	bool g_open;
	unsigned g_started; /* calls that entered the dispatch function */
} g_gate = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, false, 0 };

static struct svc_dev g_dev;

struct ran {
	unsigned rn_calls;
};

static int gated(struct rpcrdma_svc_req *req, void *arg)
{
	struct ran *r = arg;

	(void)req;
	pthread_mutex_lock(&g_gate.g_lock);
	g_gate.g_started++;
	pthread_cond_broadcast(&g_gate.g_cond);
	while (!g_gate.g_open)
		pthread_cond_wait(&g_gate.g_cond, &g_gate.g_lock);
	pthread_mutex_unlock(&g_gate.g_lock);
	r->rn_calls++;
	return RPCRDMA_SVC_SUCCESS;
}

static void gate_set(bool open)
{
	pthread_mutex_lock(&g_gate.g_lock);
	g_gate.g_open = open;
	if (!open)
		g_gate.g_started = 0;
	pthread_cond_broadcast(&g_gate.g_cond);
	pthread_mutex_unlock(&g_gate.g_lock);
}

/* Wait until @n gated calls have started (no bound: ctest's timeout
 * fails a hung test; no time is measured). */
static void gate_wait_started(unsigned n)
{
	pthread_mutex_lock(&g_gate.g_lock);
	while (g_gate.g_started < n)
		pthread_cond_wait(&g_gate.g_cond, &g_gate.g_lock);
	pthread_mutex_unlock(&g_gate.g_lock);
}

/* Wait until @n of @grp's workers sleep on the idle list. */
static void wait_idle(struct svc_group *grp, unsigned n)
{
	for (;;) {
		unsigned idle;

		pthread_mutex_lock(&grp->gr_wq_lock);
		idle = grp->gr_wq_idle;
		pthread_mutex_unlock(&grp->gr_wq_lock);
		if (idle == n)
			return;
		sched_yield();
	}
}

static uint64_t wakes(struct svc_group *grp)
{
	uint64_t w;

	pthread_mutex_lock(&grp->gr_wq_lock);
	w = grp->gr_wq_wakes;
	pthread_mutex_unlock(&grp->gr_wq_lock);
	return w;
}

static void init(struct rpcrdma_svc *svc, unsigned workers)
{
	struct rpcrdma_svc_config cfg = {
		.sc_threads = workers,
		.sc_transport_threads = 1,
		.sc_log = stderr,
	};

	memset(svc, 0, sizeof(*svc));
	assert_int_equal(svc_init(svc, &cfg), 0);
	assert_int_equal(svc_workers_start(&svc->sv_groups[0], workers), 0);
	wait_idle(&svc->sv_groups[0], workers);
}

static struct svc_call *new_call(struct ran *r)
{
	struct svc_call *cc = calloc(1, sizeof(*cc));

	assert_non_null(cc);
	cc->cc_fn = gated;
	cc->cc_fn_arg = r;
	cc->cc_dev = &g_dev;
	cc->cc_xprt = &svc_rdma_class;
	return cc;
}

/* Take @n calls off @grp's done queue, as the run loop does after each
 * wake of its eventfd, and check they are @cc[0 .. n) in order. */
static void take_in_order(struct svc_group *grp, struct svc_call **cc, unsigned n)
{
	struct pollfd pfd = { .fd = grp->gr_wake_fd, .events = POLLIN };
	struct svc_call *done, *next;
	unsigned got = 0;
	uint64_t v;

	while (got < n) {
		assert_int_equal(poll(&pfd, 1, -1), 1);
		assert_int_equal(read(grp->gr_wake_fd, &v, sizeof(v)), sizeof(v));
		for (done = svc_done_take_all(grp); done; done = next) {
			next = done->cc_next;
			assert_true(got < n);
			assert_ptr_equal(done, cc[got++]);
		}
	}
	assert_false(svc_done_pending(grp));
}

/* Take @n calls off @grp's done queue in whatever order several workers
 * finished them. */
static void take_any(struct svc_group *grp, unsigned n)
{
	struct pollfd pfd = { .fd = grp->gr_wake_fd, .events = POLLIN };
	struct svc_call *done;
	unsigned got = 0;
	uint64_t v;

	while (got < n) {
		assert_int_equal(poll(&pfd, 1, -1), 1);
		assert_int_equal(read(grp->gr_wake_fd, &v, sizeof(v)), sizeof(v));
		for (done = svc_done_take_all(grp); done; done = done->cc_next)
			got++;
	}
	assert_int_equal(got, n);
}

#define K 3 /* workers */
#define N 5 /* calls in the first batch: more than K */

/*
 * K = 3 idle workers.  A batch of 2 calls wakes exactly 2 (not every
 * idle worker).  Then, gate closed, a batch of N = 5 wakes exactly 3 (one
 * per idle worker, no more); the 3 block at the gate, and a batch of 2
 * more handed over while every worker is busy wakes none.  Opening the
 * gate, all 7 are served, once each (the workers go back to the queue
 * before they sleep).  With every worker idle
 * again one call wakes exactly one.
 */
static void test_wakes_per_call(void **state)
{
	struct rpcrdma_svc svc;
	struct svc_group *grp;
	struct svc_call *cc[N + 2];
	struct ran ran[N + 2];
	unsigned i;

	(void)state;
	init(&svc, K);
	grp = &svc.sv_groups[0];
	assert_int_equal(wakes(grp), 0);

	/* 2 calls, 3 idle: 2 wakes. */
	memset(ran, 0, sizeof(ran));
	gate_set(true);
	for (i = 0; i < 2; i++) {
		cc[i] = new_call(&ran[i]);
		svc_work_enqueue(grp, cc[i]);
	}
	svc_work_flush(grp);
	assert_int_equal(wakes(grp), 2);
	take_any(grp, 2);
	for (i = 0; i < 2; i++) {
		assert_int_equal(ran[i].rn_calls, 1);
		free(cc[i]);
	}
	wait_idle(grp, K);

	/* 5 calls, 3 idle: 3 wakes; then 2 more, none idle: no wake. */
	memset(ran, 0, sizeof(ran));
	gate_set(false);
	for (i = 0; i < N; i++) {
		cc[i] = new_call(&ran[i]);
		svc_work_enqueue(grp, cc[i]);
	}
	svc_work_flush(grp);
	assert_int_equal(wakes(grp), 2 + K);
	gate_wait_started(K);
	for (i = N; i < N + 2; i++) {
		cc[i] = new_call(&ran[i]);
		svc_work_enqueue(grp, cc[i]);
	}
	svc_work_flush(grp);
	assert_int_equal(wakes(grp), 2 + K);
	gate_set(true);
	/* Three workers run them, so they finish in any order. */
	take_any(grp, N + 2);
	for (i = 0; i < N + 2; i++) {
		assert_int_equal(ran[i].rn_calls, 1);
		free(cc[i]);
	}
	wait_idle(grp, K);
	assert_int_equal(wakes(grp), 2 + K);

	/* All idle again: one call, one wake. */
	memset(ran, 0, sizeof(ran));
	cc[0] = new_call(&ran[0]);
	svc_work_enqueue(grp, cc[0]);
	svc_work_flush(grp);
	assert_int_equal(wakes(grp), 2 + K + 1);
	take_in_order(grp, cc, 1);
	assert_int_equal(ran[0].rn_calls, 1);
	free(cc[0]);

	svc_workers_stop(grp);
	assert_int_equal(grp->gr_nworkers, 0);
	svc_fini(&svc);
}

/* svc_workers_stop() of a group, on its own thread (it joins). */
static void *stopper(void *arg)
{
	svc_workers_stop(arg);
	return NULL;
}

/*
 * One worker, blocked at the gate in the first of 5 calls; a stop is
 * asked meanwhile (its thread waits in the join).  The 4 calls still on
 * the work queue are served before the worker ends, and all 5 come back
 * in order.  Then with 3 idle workers a stop wakes and ends them all.
 */
static void test_quit_drains(void **state)
{
	struct rpcrdma_svc svc;
	struct svc_group *grp;
	struct svc_call *cc[5];
	struct ran ran[5];
	pthread_t t;
	unsigned i;
	bool quit = false;

	(void)state;
	init(&svc, 1);
	grp = &svc.sv_groups[0];
	memset(ran, 0, sizeof(ran));
	gate_set(false);
	for (i = 0; i < 5; i++) {
		cc[i] = new_call(&ran[i]);
		svc_work_enqueue(grp, cc[i]);
	}
	svc_work_flush(grp);
	gate_wait_started(1);
	assert_int_equal(pthread_create(&t, NULL, stopper, grp), 0);
	while (!quit) {
		pthread_mutex_lock(&grp->gr_wq_lock);
		quit = grp->gr_wq_quit;
		pthread_mutex_unlock(&grp->gr_wq_lock);
		sched_yield();
	}
	gate_set(true);
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_int_equal(grp->gr_nworkers, 0);
	assert_null(grp->gr_wq_head);
	take_in_order(grp, cc, 5);
	for (i = 0; i < 5; i++) {
		assert_int_equal(ran[i].rn_calls, 1);
		free(cc[i]);
	}
	svc_fini(&svc);

	init(&svc, K);
	assert_int_equal(svc.sv_groups[0].gr_wq_idle, K);
	svc_workers_stop(&svc.sv_groups[0]);
	assert_int_equal(svc.sv_groups[0].gr_wq_idle, 0);
	assert_int_equal(svc.sv_groups[0].gr_nworkers, 0);
	svc_fini(&svc);
}

/*
 * The done queue without threads: svc_worker_run_one() serves queued
 * calls on this thread; the first push onto the empty done queue writes
 * the eventfd once, the next two ride along (count 1); the take gives
 * them oldest first and empties it, and the next push wakes again.
 */
static void test_done_queue(void **state)
{
	struct rpcrdma_svc_config cfg = { .sc_threads = 1, .sc_transport_threads = 1,
					  .sc_log = stderr };
	struct rpcrdma_svc svc;
	struct svc_group *grp;
	struct svc_call *cc[3], *done;
	struct ran ran[3];
	uint64_t v;
	unsigned i;

	(void)state;
	memset(&svc, 0, sizeof(svc));
	assert_int_equal(svc_init(&svc, &cfg), 0);
	grp = &svc.sv_groups[0];
	gate_set(true);
	memset(ran, 0, sizeof(ran));
	assert_null(svc_done_take_all(grp));
	for (i = 0; i < 3; i++) {
		cc[i] = new_call(&ran[i]);
		svc_work_enqueue(grp, cc[i]);
	}
	svc_work_flush(grp);
	assert_int_equal(wakes(grp), 0); /* no worker sleeps */
	for (i = 0; i < 3; i++)
		assert_true(svc_worker_run_one(grp));
	assert_false(svc_worker_run_one(grp));
	assert_int_equal(read(grp->gr_wake_fd, &v, sizeof(v)), sizeof(v));
	assert_int_equal(v, 1);
	done = svc_done_take_all(grp);
	for (i = 0; i < 3; i++, done = done->cc_next)
		assert_ptr_equal(done, cc[i]);
	assert_null(done);
	assert_null(svc_done_take_all(grp));
	svc_work_enqueue(grp, cc[0]);
	svc_work_flush(grp);
	assert_true(svc_worker_run_one(grp));
	assert_int_equal(read(grp->gr_wake_fd, &v, sizeof(v)), sizeof(v));
	assert_int_equal(v, 1);
	assert_ptr_equal(svc_done_take_all(grp), cc[0]);
	for (i = 0; i < 3; i++)
		free(cc[i]);
	svc_fini(&svc);
}

/*
 * The run loop's eventfd is edge-triggered and never read: each wake
 * (svc_group_wake(), a worker's first push) is reported by epoll once,
 * and nothing more is until the next wake, although the eventfd stays
 * readable (its count, 1 then 2, is never taken).  Level-triggered and
 * unread, every epoll_wait would report it again: the loop would spin.
 */
static void test_wake_edge(void **state)
{
	struct rpcrdma_svc_config cfg = { .sc_threads = 1, .sc_transport_threads = 1,
					  .sc_log = stderr };
	struct rpcrdma_svc svc;
	struct svc_group *grp;
	struct epoll_event ev[4];
	struct pollfd pfd;
	unsigned i;

	(void)state;
	memset(&svc, 0, sizeof(svc));
	assert_int_equal(svc_init(&svc, &cfg), 0);
	grp = &svc.sv_groups[0];
	assert_int_equal(epoll_wait(grp->gr_epoll, ev, 4, 0), 0);
	for (i = 0; i < 2; i++) {
		svc_group_wake(grp);
		assert_int_equal(epoll_wait(grp->gr_epoll, ev, 4, 0), 1);
		assert_int_equal(epoll_wait(grp->gr_epoll, ev, 4, 0), 0);
	}
	pfd.fd = grp->gr_wake_fd;
	pfd.events = POLLIN;
	assert_int_equal(poll(&pfd, 1, 0), 1);
	svc_fini(&svc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_wakes_per_call),
		cmocka_unit_test(test_quit_drains),
		cmocka_unit_test(test_done_queue),
		cmocka_unit_test(test_wake_edge),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
