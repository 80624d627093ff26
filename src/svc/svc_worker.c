// SPDX-License-Identifier: MIT
/*
 * svc_worker.c - worker threads that run dispatch functions.
 *
 * Every transport thread (group) has its own workers, work queue and done
 * queue: groups share nothing on this path.  The hand-off costs as few
 * system calls as the threads' sleeping allows (issue 36: under qemu TCG
 * one costs ~16 us, a context switch more):
 *
 *  - Run loop -> workers.  The run loop collects the calls of one
 *    completion drain (or one TCP event) and appends them to the work
 *    queue under one acquisition of gr_wq_lock (svc_work_flush()).  Each
 *    idle worker sleeps on a semaphore of its own, listed on
 *    gr_wq_idle_list; the flusher takes one of them off the list per call
 *    it hands over and posts their semaphores only after it let go of the
 *    lock.  So exactly one futex wake per sleeping worker needed, none
 *    when every worker is busy (a busy worker looks at the queue again
 *    before it sleeps), and the woken worker finds the lock free, where a
 *    condition variable signalled under the lock had it block on the mutex
 *    its waker still held (two more futex calls and a context switch).
 *  - Workers -> run loop.  A worker pushes the finished call on the done
 *    queue, a lock-free stack (gr_done: one compare-and-swap, no lock),
 *    and writes the run loop's eventfd only when the stack was empty: the
 *    push that made it non-empty wakes the loop, the others ride along.
 *    The eventfd is edge-triggered in the loop's epoll set and never
 *    read (svc_group_init()).  The run loop takes the whole stack with
 *    one atomic exchange and reverses it (oldest first).  Under load, many
 *    replies come back per wake-up.  With sc_poll the loop spins and looks
 *    at gr_done itself, and no worker writes the eventfd: the hand-off
 *    makes no system call.
 *
 * One call in flight thus costs a futex wake and wait and an eventfd
 * write (besides the epoll_wait the loop sleeps in): three system calls
 * and two context switches, where the calls a program serves on the transport
 * thread (RPCRDMA_SVC_TRY_TRANSPORT, rq_transport) cost none.  A call that
 * must run on a worker (credentials, the disk) is never run on the run-loop
 * thread instead, not even when the group is idle: while it waited for the
 * disk every other connection of the group would wait with it, and the
 * run-loop thread must never change its credentials (docs/design.md).
 */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "svc/svc_internal.h"

/* Take the oldest queued call, or NULL; gr_wq_lock held. */
static struct svc_call *svc_wq_take(struct svc_group *grp)
{
	struct svc_call *cc = grp->gr_wq_head;

	if (cc) {
		grp->gr_wq_head = cc->cc_next;
		if (!grp->gr_wq_head)
			grp->gr_wq_tail = NULL;
		cc->cc_next = NULL;
	}
	return cc;
}

/* Push @cc on @grp's done queue; wake the run loop when it was empty
 * (and the loop sleeps: not with sc_poll). */
static void svc_done_push(struct svc_group *grp, struct svc_call *cc)
{
	struct svc_call *old = atomic_load_explicit(&grp->gr_done, memory_order_relaxed);

	do {
		cc->cc_next = old;
	} while (!atomic_compare_exchange_weak_explicit(&grp->gr_done, &old, cc,
							memory_order_release,
							memory_order_relaxed));
	/* A push onto a non-empty stack needs no wake: the push that made
	 * it non-empty wrote the eventfd (or is about to), and the loop
	 * takes the whole stack after reading it. */
	if (!old && !grp->gr_svc->sv_cfg.sc_poll)
		svc_group_wake(grp);
}

/* Run @cc's dispatch function and put it on the done queue; called
 * without gr_wq_lock. */
static void svc_worker_serve(struct svc_group *grp, struct svc_call *cc)
{
	cc->cc_status = cc->cc_fn(&cc->cc_req, cc->cc_fn_arg);
	/* Where the provider posts from user space, the reply goes now,
	 * from this thread: no hand-back, no wake-up of the run loop. */
	if (cc->cc_xprt->xc_worker_posts && svc_send_by_worker(cc))
		return;
	svc_done_push(grp, cc);
}

bool svc_worker_run_one(struct svc_group *grp)
{
	struct svc_call *cc;

	pthread_mutex_lock(&grp->gr_wq_lock);
	cc = svc_wq_take(grp);
	pthread_mutex_unlock(&grp->gr_wq_lock);
	if (!cc)
		return false;
	svc_worker_serve(grp, cc);
	return true;
}

static void *svc_worker_main(void *arg)
{
	struct svc_worker *wk = arg;
	struct svc_group *grp = wk->wk_grp;
	struct svc_call *cc;

	pthread_mutex_lock(&grp->gr_wq_lock);
	for (;;) {
		cc = svc_wq_take(grp);
		if (cc) {
			pthread_mutex_unlock(&grp->gr_wq_lock);
			svc_worker_serve(grp, cc);
			pthread_mutex_lock(&grp->gr_wq_lock);
			continue;
		}
		/* After a quit, the queue is drained before the thread ends. */
		if (grp->gr_wq_quit)
			break;
		wk->wk_next_idle = grp->gr_wq_idle_list;
		grp->gr_wq_idle_list = wk;
		grp->gr_wq_idle++;
		pthread_mutex_unlock(&grp->gr_wq_lock);
		/* Posted once by whoever took this worker off the list. */
		while (sem_wait(&wk->wk_sem) && errno == EINTR)
			;
		pthread_mutex_lock(&grp->gr_wq_lock);
	}
	pthread_mutex_unlock(&grp->gr_wq_lock);
	return NULL;
}

int svc_workers_start(struct svc_group *grp, unsigned n)
{
	unsigned i;
	int rc;

	if (!n)
		return 0; /* calls are served on the run-loop thread */
	grp->gr_workers = calloc(n, sizeof(*grp->gr_workers));
	if (!grp->gr_workers)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		struct svc_worker *wk = &grp->gr_workers[i];

		wk->wk_grp = grp;
		if (sem_init(&wk->wk_sem, 0, 0)) {
			rc = errno;
			goto fail;
		}
		rc = pthread_create(&wk->wk_thread, NULL, svc_worker_main, wk);
		if (rc) {
			sem_destroy(&wk->wk_sem);
			goto fail;
		}
		grp->gr_nworkers = i + 1;
	}
	return 0;
fail:
	svc_workers_stop(grp);
	return -rc;
}

/* Take up to @max idle workers off @grp's list (gr_wq_lock held); return
 * the first, linked by wk_next_idle. */
static struct svc_worker *svc_idle_take(struct svc_group *grp, unsigned max)
{
	struct svc_worker *first = grp->gr_wq_idle_list, *last = NULL, *wk;

	for (wk = first; wk && max; wk = wk->wk_next_idle, max--) {
		last = wk;
		grp->gr_wq_idle--;
		grp->gr_wq_wakes++;
	}
	if (!last)
		return NULL;
	grp->gr_wq_idle_list = last->wk_next_idle;
	last->wk_next_idle = NULL;
	return first;
}

/* Post the semaphores of the workers svc_idle_take() took (no lock). */
static void svc_idle_post(struct svc_worker *wk)
{
	struct svc_worker *next;

	for (; wk; wk = next) {
		next = wk->wk_next_idle; /* the worker may relist itself at once */
		sem_post(&wk->wk_sem);
	}
}

void svc_workers_stop(struct svc_group *grp)
{
	struct svc_worker *idle;
	unsigned i;

	pthread_mutex_lock(&grp->gr_wq_lock);
	grp->gr_wq_quit = true;
	idle = svc_idle_take(grp, grp->gr_nworkers);
	pthread_mutex_unlock(&grp->gr_wq_lock);
	svc_idle_post(idle);
	for (i = 0; i < grp->gr_nworkers; i++) {
		pthread_join(grp->gr_workers[i].wk_thread, NULL);
		sem_destroy(&grp->gr_workers[i].wk_sem);
	}
	free(grp->gr_workers);
	grp->gr_workers = NULL;
	grp->gr_nworkers = 0;
	grp->gr_wq_quit = false; /* a restart (unit tests) starts afresh */
}

void svc_work_enqueue(struct svc_group *grp, struct svc_call *cc)
{
	cc->cc_state = CC_WORKING;
	svc_call_append(&grp->gr_batch_head, &grp->gr_batch_tail, cc);
	grp->gr_batch_n++;
}

void svc_work_flush(struct svc_group *grp)
{
	unsigned n = grp->gr_batch_n;
	struct svc_worker *wake;

	if (!n)
		return;
	pthread_mutex_lock(&grp->gr_wq_lock);
	if (grp->gr_wq_tail)
		grp->gr_wq_tail->cc_next = grp->gr_batch_head;
	else
		grp->gr_wq_head = grp->gr_batch_head;
	grp->gr_wq_tail = grp->gr_batch_tail;
	/* A worker that is busy now looks at the queue again before it
	 * sleeps: only sleeping ones need a wake, one per call. */
	wake = svc_idle_take(grp, n);
	pthread_mutex_unlock(&grp->gr_wq_lock);
	svc_idle_post(wake);
	grp->gr_batch_head = grp->gr_batch_tail = NULL;
	grp->gr_batch_n = 0;
}

struct svc_call *svc_done_take_all(struct svc_group *grp)
{
	struct svc_call *cc, *next, *list = NULL;

	if (!svc_done_pending(grp))
		return NULL; /* the common empty case: no write to the line */
	cc = atomic_exchange_explicit(&grp->gr_done, NULL, memory_order_acquire);
	/* The stack is newest first: reverse it. */
	for (; cc; cc = next) {
		next = cc->cc_next;
		cc->cc_next = list;
		list = cc;
	}
	return list;
}

void svc_work_drop_all(struct svc_group *grp)
{
	struct svc_call *cc, *next;

	svc_work_flush(grp);
	pthread_mutex_lock(&grp->gr_wq_lock);
	cc = grp->gr_wq_head;
	grp->gr_wq_head = grp->gr_wq_tail = NULL;
	pthread_mutex_unlock(&grp->gr_wq_lock);
	for (; cc; cc = next) {
		next = cc->cc_next;
		cc->cc_next = NULL;
		SVC_INC(grp->gr_svc, drops, 1);
		cc->cc_xprt->xc_release(cc);
	}
}
