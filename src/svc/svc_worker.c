// SPDX-License-Identifier: MIT
/*
 * svc_worker.c - worker threads that run dispatch functions.
 *
 * The run loop collects the calls of one completion drain and hands them
 * to the work queue together (svc_work_flush()), waking only as many idle
 * workers as there are calls; a worker runs the dispatch function and
 * moves the context to the done queue, and writes the run loop's eventfd
 * only when no write is pending since the loop last took the done queue:
 * under load, many replies come back per wake-up.  Nothing else is shared.
 */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "svc/svc_internal.h"

static void svc_wake(struct rpcrdma_svc *svc)
{
	uint64_t one = 1;
	ssize_t rc;

	rc = write(svc->sv_wake_fd, &one, sizeof(one));
	(void)rc; /* a full counter still wakes the loop */
}

/* Take the oldest queued call, or NULL; sv_wq_lock held. */
static struct svc_call *svc_wq_take(struct rpcrdma_svc *svc)
{
	struct svc_call *cc = svc->sv_wq_head;

	if (cc) {
		svc->sv_wq_head = cc->cc_next;
		if (!svc->sv_wq_head)
			svc->sv_wq_tail = NULL;
	}
	return cc;
}

/* Run @cc's dispatch function and put it on the done queue; called
 * without sv_wq_lock, returns without it. */
static void svc_worker_serve(struct rpcrdma_svc *svc, struct svc_call *cc)
{
	bool wake;

	cc->cc_status = cc->cc_fn(&cc->cc_req, cc->cc_fn_arg);

	pthread_mutex_lock(&svc->sv_wq_lock);
	svc_call_append(&svc->sv_done_head, &svc->sv_done_tail, cc);
	wake = !svc->sv_done_woken;
	svc->sv_done_woken = true;
	pthread_mutex_unlock(&svc->sv_wq_lock);
	if (wake)
		svc_wake(svc);
}

bool svc_worker_run_one(struct rpcrdma_svc *svc)
{
	struct svc_call *cc;

	pthread_mutex_lock(&svc->sv_wq_lock);
	cc = svc_wq_take(svc);
	pthread_mutex_unlock(&svc->sv_wq_lock);
	if (!cc)
		return false;
	svc_worker_serve(svc, cc);
	return true;
}

static void *svc_worker_main(void *arg)
{
	struct rpcrdma_svc *svc = arg;

	for (;;) {
		pthread_mutex_lock(&svc->sv_wq_lock);
		while (!svc->sv_wq_head && !svc->sv_wq_quit) {
			svc->sv_wq_idle++;
			pthread_cond_wait(&svc->sv_wq_cond, &svc->sv_wq_lock);
			svc->sv_wq_idle--;
		}
		pthread_mutex_unlock(&svc->sv_wq_lock);
		/* Another worker may take it first: then wait again.  After
		 * a quit, the queue is drained before the thread ends. */
		if (!svc_worker_run_one(svc)) {
			bool quit;

			pthread_mutex_lock(&svc->sv_wq_lock);
			quit = svc->sv_wq_quit && !svc->sv_wq_head;
			pthread_mutex_unlock(&svc->sv_wq_lock);
			if (quit)
				break;
		}
	}
	return NULL;
}

int svc_workers_start(struct rpcrdma_svc *svc, unsigned n)
{
	unsigned i;
	int rc;

	if (!n)
		return 0; /* calls are served on the run-loop thread */
	svc->sv_workers = calloc(n, sizeof(*svc->sv_workers));
	if (!svc->sv_workers)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		rc = pthread_create(&svc->sv_workers[i], NULL, svc_worker_main, svc);
		if (rc) {
			svc->sv_nworkers = i;
			svc_workers_stop(svc);
			return -rc;
		}
	}
	svc->sv_nworkers = n;
	return 0;
}

void svc_workers_stop(struct rpcrdma_svc *svc)
{
	unsigned i;

	pthread_mutex_lock(&svc->sv_wq_lock);
	svc->sv_wq_quit = true;
	pthread_cond_broadcast(&svc->sv_wq_cond);
	pthread_mutex_unlock(&svc->sv_wq_lock);
	for (i = 0; i < svc->sv_nworkers; i++)
		pthread_join(svc->sv_workers[i], NULL);
	free(svc->sv_workers);
	svc->sv_workers = NULL;
	svc->sv_nworkers = 0;
}

void svc_work_enqueue(struct rpcrdma_svc *svc, struct svc_call *cc)
{
	cc->cc_state = CC_WORKING;
	svc_call_append(&svc->sv_batch_head, &svc->sv_batch_tail, cc);
	svc->sv_batch_n++;
}

void svc_work_flush(struct rpcrdma_svc *svc)
{
	unsigned n = svc->sv_batch_n, wake;

	if (!n)
		return;
	pthread_mutex_lock(&svc->sv_wq_lock);
	if (svc->sv_wq_tail)
		svc->sv_wq_tail->cc_next = svc->sv_batch_head;
	else
		svc->sv_wq_head = svc->sv_batch_head;
	svc->sv_wq_tail = svc->sv_batch_tail;
	/* A worker that is busy now looks at the queue again before it
	 * sleeps: only sleeping ones need a wake, one per call. */
	for (wake = n < svc->sv_wq_idle ? n : svc->sv_wq_idle; wake > 0; wake--)
		pthread_cond_signal(&svc->sv_wq_cond);
	pthread_mutex_unlock(&svc->sv_wq_lock);
	svc->sv_batch_head = svc->sv_batch_tail = NULL;
	svc->sv_batch_n = 0;
}

struct svc_call *svc_done_take_all(struct rpcrdma_svc *svc)
{
	struct svc_call *list;

	pthread_mutex_lock(&svc->sv_wq_lock);
	list = svc->sv_done_head;
	svc->sv_done_head = svc->sv_done_tail = NULL;
	svc->sv_done_woken = false;
	pthread_mutex_unlock(&svc->sv_wq_lock);
	return list;
}

void svc_work_drop_all(struct rpcrdma_svc *svc)
{
	struct svc_call *cc, *next;

	svc_work_flush(svc);
	pthread_mutex_lock(&svc->sv_wq_lock);
	cc = svc->sv_wq_head;
	svc->sv_wq_head = svc->sv_wq_tail = NULL;
	pthread_mutex_unlock(&svc->sv_wq_lock);
	for (; cc; cc = next) {
		next = cc->cc_next;
		cc->cc_next = NULL;
		SVC_INC(svc, drops, 1);
		svc_call_put(cc);
	}
}
