// SPDX-License-Identifier: MIT
/*
 * svc_worker.c - worker threads that run dispatch functions.
 *
 * Every transport thread (group) has its own workers, work queue and done
 * queue, under a lock of its own: groups share nothing on this path.  The
 * run loop collects the calls of one completion drain and hands them to
 * the work queue together (svc_work_flush()), waking only as many idle
 * workers as there are calls; a worker runs the dispatch function and
 * moves the context to the done queue, and writes the run loop's eventfd
 * only when no write is pending since the loop last took the done queue:
 * under load, many replies come back per wake-up.  With sc_poll the run
 * loop spins, and a worker only sets gr_done_ready: under load (workers
 * busy, the loop spinning) the hand-off makes no system call at all.
 */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "svc/svc_internal.h"

/* Take the oldest queued call, or NULL; sv_wq_lock held. */
static struct svc_call *svc_wq_take(struct svc_group *grp)
{
	struct svc_call *cc = grp->gr_wq_head;

	if (cc) {
		grp->gr_wq_head = cc->cc_next;
		if (!grp->gr_wq_head)
			grp->gr_wq_tail = NULL;
	}
	return cc;
}

/* Run @cc's dispatch function and put it on the done queue; called
 * without sv_wq_lock, returns without it. */
static void svc_worker_serve(struct svc_group *grp, struct svc_call *cc)
{
	bool wake;

	cc->cc_status = cc->cc_fn(&cc->cc_req, cc->cc_fn_arg);
	/* Where the provider posts from user space, the reply goes now,
	 * from this thread: no hand-back, no wake-up of the run loop. */
	if (cc->cc_xprt->xc_worker_posts && svc_send_by_worker(cc))
		return;

	pthread_mutex_lock(&grp->gr_wq_lock);
	svc_call_append(&grp->gr_done_head, &grp->gr_done_tail, cc);
	if (grp->gr_svc->sv_cfg.sc_poll) {
		/* The run loop spins: a flag, no system call. */
		atomic_store_explicit(&grp->gr_done_ready, true, memory_order_release);
		wake = false;
	} else {
		wake = !grp->gr_done_woken;
		grp->gr_done_woken = true;
	}
	pthread_mutex_unlock(&grp->gr_wq_lock);
	if (wake)
		svc_group_wake(grp);
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
	struct svc_group *grp = arg;

	for (;;) {
		pthread_mutex_lock(&grp->gr_wq_lock);
		while (!grp->gr_wq_head && !grp->gr_wq_quit) {
			grp->gr_wq_idle++;
			pthread_cond_wait(&grp->gr_wq_cond, &grp->gr_wq_lock);
			grp->gr_wq_idle--;
		}
		pthread_mutex_unlock(&grp->gr_wq_lock);
		/* Another worker may take it first: then wait again.  After
		 * a quit, the queue is drained before the thread ends. */
		if (!svc_worker_run_one(grp)) {
			bool quit;

			pthread_mutex_lock(&grp->gr_wq_lock);
			quit = grp->gr_wq_quit && !grp->gr_wq_head;
			pthread_mutex_unlock(&grp->gr_wq_lock);
			if (quit)
				break;
		}
	}
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
		rc = pthread_create(&grp->gr_workers[i], NULL, svc_worker_main, grp);
		if (rc) {
			grp->gr_nworkers = i;
			svc_workers_stop(grp);
			return -rc;
		}
	}
	grp->gr_nworkers = n;
	return 0;
}

void svc_workers_stop(struct svc_group *grp)
{
	unsigned i;

	pthread_mutex_lock(&grp->gr_wq_lock);
	grp->gr_wq_quit = true;
	pthread_cond_broadcast(&grp->gr_wq_cond);
	pthread_mutex_unlock(&grp->gr_wq_lock);
	for (i = 0; i < grp->gr_nworkers; i++)
		pthread_join(grp->gr_workers[i], NULL);
	free(grp->gr_workers);
	grp->gr_workers = NULL;
	grp->gr_nworkers = 0;
}

void svc_work_enqueue(struct svc_group *grp, struct svc_call *cc)
{
	cc->cc_state = CC_WORKING;
	svc_call_append(&grp->gr_batch_head, &grp->gr_batch_tail, cc);
	grp->gr_batch_n++;
}

void svc_work_flush(struct svc_group *grp)
{
	unsigned n = grp->gr_batch_n, wake;

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
	for (wake = n < grp->gr_wq_idle ? n : grp->gr_wq_idle; wake > 0; wake--)
		pthread_cond_signal(&grp->gr_wq_cond);
	pthread_mutex_unlock(&grp->gr_wq_lock);
	grp->gr_batch_head = grp->gr_batch_tail = NULL;
	grp->gr_batch_n = 0;
}

struct svc_call *svc_done_take_all(struct svc_group *grp)
{
	struct svc_call *list;

	pthread_mutex_lock(&grp->gr_wq_lock);
	list = grp->gr_done_head;
	grp->gr_done_head = grp->gr_done_tail = NULL;
	grp->gr_done_woken = false;
	pthread_mutex_unlock(&grp->gr_wq_lock);
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
