// SPDX-License-Identifier: MIT
/*
 * test_svc_groups.c - the Responder's transport threads (groups): how the
 * configuration sets their number and shares out the workers, where a new
 * connection goes, and that each group's work and done queues are its
 * own: calls handed to one group run on that group's workers, come back
 * on its done queue and wake only its run loop, with real worker threads.
 * Expected values are worked out by hand from the rules in svc.h.
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
#include <unistd.h>
#include <cmocka.h>

#include "fake_verbs.h"
#include "svc/svc_internal.h"

static void init(struct rpcrdma_svc *svc, unsigned transport, unsigned threads,
		 bool loop_dispatch, int expect)
{
	struct rpcrdma_svc_config cfg = {
		.sc_threads = threads,
		.sc_transport_threads = transport,
		.sc_loop_dispatch = loop_dispatch,
		.sc_log = stderr,
	};

	memset(svc, 0, sizeof(*svc));
	assert_int_equal(svc_init(svc, &cfg), expect);
}

/* Groups and workers per group, from sc_transport_threads and sc_threads. */
static void test_group_config(void **state)
{
	struct rpcrdma_svc svc;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned i, want;

	(void)state;
	/* 3 groups, 4 workers: 4/3 = 1 each, the remainder 1 to group 0. */
	init(&svc, 3, 4, false, 0);
	assert_int_equal(svc.sv_ngroups, 3);
	assert_int_equal(svc_group_workers(&svc, 0), 2);
	assert_int_equal(svc_group_workers(&svc, 1), 1);
	assert_int_equal(svc_group_workers(&svc, 2), 1);
	for (i = 0; i < 3; i++) {
		assert_ptr_equal(svc.sv_groups[i].gr_svc, &svc);
		assert_int_equal(svc.sv_groups[i].gr_index, i);
		assert_true(svc.sv_groups[i].gr_wake_fd >= 0);
		assert_true(svc.sv_groups[i].gr_epoll >= 0);
	}
	svc_fini(&svc);
	assert_null(svc.sv_groups);

	/* More groups than workers asked for: each still gets one. */
	init(&svc, 4, 2, false, 0);
	for (i = 0; i < 4; i++)
		assert_int_equal(svc_group_workers(&svc, i), 1);
	svc_fini(&svc);

	/* Calls served on the transport threads: no workers at all. */
	init(&svc, 2, 4, true, 0);
	assert_int_equal(svc_group_workers(&svc, 0), 0);
	assert_int_equal(svc_group_workers(&svc, 1), 0);
	svc_fini(&svc);

	/* Default: one per CPU it may run on, but never more than the workers. */
	init(&svc, 0, 1, false, 0);
	assert_int_equal(svc.sv_ngroups, 1);
	svc_fini(&svc);
	init(&svc, 0, 64, false, 0);
	want = cpus < 1 ? 1 : cpus > 64 ? 64 : (unsigned)cpus;
	assert_int_equal(svc.sv_ngroups, want);
	svc_fini(&svc);

	/* A server kept to one CPU (taskset, a cpuset) runs one transport
	 * thread however many CPUs are online. */
	{
		cpu_set_t all, one;
		int c;

		assert_int_equal(sched_getaffinity(0, sizeof(all), &all), 0);
		for (c = 0; c < CPU_SETSIZE && !CPU_ISSET(c, &all); c++)
			;
		CPU_ZERO(&one);
		CPU_SET(c, &one);
		assert_int_equal(sched_setaffinity(0, sizeof(one), &one), 0);
		init(&svc, 0, 64, false, 0);
		assert_int_equal(sched_setaffinity(0, sizeof(all), &all), 0);
		assert_int_equal(svc.sv_ngroups, 1);
		svc_fini(&svc);
	}

	/* Beyond the limit: refused. */
	init(&svc, RPCRDMA_SVC_MAX_TRANSPORT_THREADS + 1, 4, false, -EINVAL);
}

/* A new connection goes to the group with the fewest (accepted, and handed
 * over not yet accepted), lowest index on a tie. */
static void test_pick_group(void **state)
{
	struct rpcrdma_svc svc;

	(void)state;
	init(&svc, 3, 3, false, 0);
	assert_ptr_equal(svc_pick_group(&svc), &svc.sv_groups[0]);
	svc.sv_groups[0].gr_nconns = 5;
	svc.sv_groups[1].gr_nconns = 2;
	svc.sv_groups[2].gr_nconns = 2;
	assert_ptr_equal(svc_pick_group(&svc), &svc.sv_groups[1]);
	svc.sv_groups[1].gr_nconns = 3;
	assert_ptr_equal(svc_pick_group(&svc), &svc.sv_groups[2]);
	svc.sv_groups[0].gr_nconns = 1;
	assert_ptr_equal(svc_pick_group(&svc), &svc.sv_groups[0]);
	/* Handed over, not yet accepted, counts: group 0 has 1 + 2, group 1 3,
	 * group 2 2. */
	svc.sv_groups[0].gr_pending = 2;
	assert_ptr_equal(svc_pick_group(&svc), &svc.sv_groups[2]);
	svc.sv_groups[0].gr_pending = 0;
	svc.sv_groups[0].gr_nconns = svc.sv_groups[1].gr_nconns = 0;
	svc.sv_groups[2].gr_nconns = 0;
	svc_fini(&svc);
}

/* A dispatch function that records the thread it ran on. */
struct ran {
	pthread_t rn_thread;
	unsigned rn_calls;
};

static int record_thread(struct rpcrdma_svc_req *req, void *arg)
{
	struct ran *r = arg;

	(void)req;
	r->rn_thread = pthread_self();
	r->rn_calls++;
	return RPCRDMA_SVC_SUCCESS;
}

/* Wait until @fd is readable (60 s at most: a bound that fails a hung
 * test, not a measurement); return the eventfd's count. */
static uint64_t wait_wake(int fd)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	uint64_t v = 0;
	int waited = 0;

	while (poll(&pfd, 1, 1000) == 0)
		if (++waited == 60)
			fail_msg("no wake-up in %d s", waited);
	assert_int_equal(read(fd, &v, sizeof(v)), sizeof(v));
	return v;
}

static bool readable(int fd)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };

	return poll(&pfd, 1, 0) == 1;
}

#define NCALLS 8

/* The calls' device: replies go back to the transport thread. */
static struct svc_dev g_dev;

/*
 * Two groups, one worker each.  Eight calls handed to group 1 in one
 * batch run on group 1's worker only, come back on group 1's done queue
 * in order, and wake group 1's run loop (at most once per call, at least
 * once); group 0's queues stay empty and its loop is never woken.  Then
 * the same for group 0.
 */
static void test_group_queues(void **state)
{
	struct rpcrdma_svc svc;
	struct svc_call *cc[NCALLS], *done;
	struct ran ran[NCALLS];
	unsigned g, i, n;

	(void)state;
	init(&svc, 2, 2, false, 0);
	for (g = 0; g < 2; g++)
		assert_int_equal(svc_workers_start(&svc.sv_groups[g], 1), 0);
	for (g = 0; g < 2; g++) {
		struct svc_group *to = &svc.sv_groups[g], *other = &svc.sv_groups[1 - g];
		uint64_t wakes = 0;

		memset(ran, 0, sizeof(ran));
		for (i = 0; i < NCALLS; i++) {
			cc[i] = calloc(1, sizeof(*cc[i]));
			assert_non_null(cc[i]);
			cc[i]->cc_fn = record_thread;
			cc[i]->cc_fn_arg = &ran[i];
			cc[i]->cc_dev = &g_dev;
			cc[i]->cc_xprt = &svc_rdma_class;
			svc_work_enqueue(to, cc[i]);
			assert_int_equal(cc[i]->cc_state, CC_WORKING);
		}
		assert_int_equal(to->gr_batch_n, NCALLS);
		svc_work_flush(to);
		assert_int_equal(to->gr_batch_n, 0);

		/* Take the done queue as the run loop does, after each wake. */
		for (n = 0; n < NCALLS;) {
			wakes += wait_wake(to->gr_wake_fd);
			for (done = svc_done_take_all(to); done; done = done->cc_next)
				assert_ptr_equal(done, cc[n++]); /* in order */
		}
		assert_true(wakes >= 1 && wakes <= NCALLS);
		for (i = 0; i < NCALLS; i++) {
			assert_int_equal(ran[i].rn_calls, 1);
			assert_true(pthread_equal(ran[i].rn_thread, to->gr_workers[0].wk_thread));
			assert_false(pthread_equal(ran[i].rn_thread, other->gr_workers[0].wk_thread));
			free(cc[i]);
		}
		assert_false(readable(other->gr_wake_fd));
		pthread_mutex_lock(&other->gr_wq_lock);
		assert_null(other->gr_wq_head);
		assert_false(svc_done_pending(other));
		pthread_mutex_unlock(&other->gr_wq_lock);
	}
	for (g = 0; g < 2; g++) {
		svc_workers_stop(&svc.sv_groups[g]);
		assert_int_equal(svc.sv_groups[g].gr_nworkers, 0);
	}
	svc_fini(&svc);
}

/*
 * sc_poll: the run loop spins, so a worker that finishes a call only sets
 * gr_done (the loop looks at it) and never writes the eventfd: four calls come back on the
 * done queue, in order, with the eventfd never readable.
 */
static void test_poll_handoff(void **state)
{
	struct rpcrdma_svc svc;
	struct svc_call *cc[4], *done;
	struct ran ran[4];
	unsigned i, n = 0;

	(void)state;
	init(&svc, 1, 1, false, 0);
	svc.sv_cfg.sc_poll = true;
	assert_int_equal(svc_workers_start(&svc.sv_groups[0], 1), 0);
	memset(ran, 0, sizeof(ran));
	for (i = 0; i < 4; i++) {
		cc[i] = calloc(1, sizeof(*cc[i]));
		assert_non_null(cc[i]);
		cc[i]->cc_fn = record_thread;
		cc[i]->cc_fn_arg = &ran[i];
		cc[i]->cc_dev = &g_dev;
		cc[i]->cc_xprt = &svc_rdma_class;
		svc_work_enqueue(&svc.sv_groups[0], cc[i]);
	}
	svc_work_flush(&svc.sv_groups[0]);
	while (n < 4) {
		if (!svc_done_pending(&svc.sv_groups[0])) {
			/* A worker that wrote the eventfd instead fails here. */
			assert_false(readable(svc.sv_groups[0].gr_wake_fd));
			sched_yield();
			continue;
		}
		for (done = svc_done_take_all(&svc.sv_groups[0]); done; done = done->cc_next)
			assert_ptr_equal(done, cc[n++]);
	}
	assert_false(readable(svc.sv_groups[0].gr_wake_fd));
	for (i = 0; i < 4; i++) {
		assert_int_equal(ran[i].rn_calls, 1);
		free(cc[i]);
	}
	svc_workers_stop(&svc.sv_groups[0]);
	svc_fini(&svc);
}

/*
 * The memory budget is shared, but slabs belong to one group's device: a
 * group whose pool is idle must not starve another group for good.  With
 * a budget of 16 slabs of 128 KiB (sc_max_payload 64 KiB: 64 + 64 KiB of
 * slack), group 0 registers all 16 (one 128 KiB buffer each) and gives the
 * buffers back; group 1 then finds the budget spent and says so
 * (sv_budget_short bit 1).  Group 0's next run-loop turn deregisters its
 * idle slabs and wakes group 1 (eventfd, gr_budget_kick), which then gets
 * its buffer.  A group whose slabs are in use gives nothing back and
 * wakes no one; a connection's teardown trims to the keep level (a
 * quarter of the budget: 4 slabs) and wakes the group that was short.
 */
static void test_budget_shared(void **state)
{
	struct rpcrdma_svc_config cfg = {
		.sc_threads = 2,
		.sc_transport_threads = 2,
		.sc_max_payload = 65536,
		.sc_memory = 16u << 17,
		.sc_log = stderr,
	};
	struct rpcrdma_svc svc;
	struct ibv_pd pd0, pd1;
	struct svc_dev *d0, *d1;
	struct svc_buf b[16], b1, extra;
	unsigned i;

	(void)state;
	fv_reset();
	memset(&svc, 0, sizeof(svc));
	assert_int_equal(svc_init(&svc, &cfg), 0);
	assert_int_equal(svc.sv_slab_bytes, 128u << 10);
	d0 = svc_dev_get(&svc.sv_groups[0], NULL, &pd0);
	d1 = svc_dev_get(&svc.sv_groups[1], NULL, &pd1);
	assert_non_null(d0);
	assert_non_null(d1);

	for (i = 0; i < 16; i++)
		assert_int_equal(svc_buf_get(d0, 128u << 10, false, &b[i]), 0);
	assert_int_equal(atomic_load(&svc.sv_mem_registered), 16u << 17);
	for (i = 0; i < 16; i++)
		svc_buf_put(d0, &b[i], false);
	assert_int_equal(atomic_load(&svc.sv_mem_registered), 16u << 17);

	/* Group 1: nothing left to register; it asks the others. */
	assert_int_equal(svc_buf_get(d1, 128u << 10, false, &b1), -EAGAIN);
	assert_int_equal(atomic_load(&svc.sv_budget_short), 1u << 1);
	/* Its own turn gives nothing back (it has nothing) and wakes no one. */
	svc_budget_share(&svc.sv_groups[1]);
	assert_false(readable(svc.sv_groups[1].gr_wake_fd));

	/* Group 0's turn: its 16 idle slabs go, group 1 is woken. */
	svc_budget_share(&svc.sv_groups[0]);
	assert_int_equal(atomic_load(&svc.sv_mem_registered), 0);
	assert_int_equal(atomic_load(&svc.sv_budget_short), 0);
	assert_true(atomic_load(&svc.sv_groups[1].gr_budget_kick));
	assert_true(readable(svc.sv_groups[1].gr_wake_fd));
	assert_false(readable(svc.sv_groups[0].gr_wake_fd));
	svc_budget_kick(&svc.sv_groups[1]);
	assert_false(atomic_load(&svc.sv_groups[1].gr_budget_kick));
	assert_int_equal(svc_buf_get(d1, 128u << 10, false, &b1), 0);
	{
		uint64_t v;

		assert_int_equal(read(svc.sv_groups[1].gr_wake_fd, &v, sizeof(v)), sizeof(v));
	}

	/* Group 0 takes the other 15 slabs and holds one buffer: short
	 * again, group 1 finds its slabs busy, gives nothing back. */
	for (i = 0; i < 15; i++)
		assert_int_equal(svc_buf_get(d0, 128u << 10, false, &b[i]), 0);
	assert_int_equal(svc_buf_get(d1, 128u << 10, false, &extra), -EAGAIN);
	assert_int_equal(svc_buf_get(d0, 128u << 10, false, &extra), -EAGAIN);
	assert_int_equal(atomic_load(&svc.sv_budget_short), 3u);
	svc_budget_share(&svc.sv_groups[1]); /* its one slab is in use */
	assert_int_equal(atomic_load(&svc.sv_mem_registered), 16u << 17);
	assert_false(readable(svc.sv_groups[0].gr_wake_fd));
	assert_false(atomic_load(&svc.sv_groups[0].gr_budget_kick));

	/* A teardown on group 0 trims to the keep level, 4 slabs, and wakes
	 * group 1 (its own bit stays: nobody gave it anything). */
	for (i = 0; i < 15; i++)
		svc_buf_put(d0, &b[i], false);
	svc_pool_trim(d0);
	assert_int_equal(atomic_load(&svc.sv_mem_registered), 4u << 17);
	assert_int_equal(atomic_load(&svc.sv_budget_short), 1u);
	assert_true(readable(svc.sv_groups[1].gr_wake_fd));
	assert_true(atomic_load(&svc.sv_groups[1].gr_budget_kick));

	svc_buf_put(d1, &b1, false);
	svc_dev_destroy_all(&svc.sv_groups[0]);
	svc_dev_destroy_all(&svc.sv_groups[1]);
	assert_int_equal(atomic_load(&svc.sv_mem_registered), 0);
	assert_int_equal(fv_live_mrs(), 0);
	svc_fini(&svc);
}

/* Admission from several transport threads at once: exactly
 * sc_max_connections places are taken, never one more. */
struct admit_arg {
	struct rpcrdma_svc *svc;
	unsigned taken;
};

static void *admit_many(void *p)
{
	struct admit_arg *a = p;
	unsigned i;

	for (i = 0; i < 20000; i++)
		a->taken += svc_conn_admit(a->svc);
	return NULL;
}

static void test_admit_concurrent(void **state)
{
	struct rpcrdma_svc svc;
	struct admit_arg args[4];
	pthread_t th[4];
	unsigned i, total = 0;

	(void)state;
	init(&svc, 1, 1, false, 0);
	svc.sv_cfg.sc_max_connections = 1000;
	for (i = 0; i < 4; i++) {
		args[i] = (struct admit_arg){ .svc = &svc };
		assert_int_equal(pthread_create(&th[i], NULL, admit_many, &args[i]), 0);
	}
	for (i = 0; i < 4; i++) {
		pthread_join(th[i], NULL);
		total += args[i].taken;
	}
	assert_int_equal(total, 1000);
	assert_int_equal(atomic_load(&svc.sv_nconns), 1000);
	svc_fini(&svc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_group_config),
		cmocka_unit_test(test_pick_group),
		cmocka_unit_test(test_group_queues),
		cmocka_unit_test(test_poll_handoff),
		cmocka_unit_test(test_admit_concurrent),
		cmocka_unit_test(test_budget_shared),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
