// SPDX-License-Identifier: MIT
/*
 * test_nfs4_names.c - NFSv4.1 on an export whose client entry is a
 * wildcard (issue 33, finding 7): while the peer's name is still being
 * looked up, an operation on the export is answered NFS4ERR_DELAY ("come
 * back later", RFC 8881 15.1.1.3), not NFS4ERR_ACCESS, after the worker's
 * bounded wait; once the name is confirmed the same COMPOUND succeeds.
 *
 * The resolver is a fake behind the seam of fs_hostname.c: 127.0.0.1
 * is client.example.com both ways; its reverse lookup can be held back.
 */
#include <netdb.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "test_nfs4_harness.h"

static struct {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool held;       /* reverse lookups wait while set */
	unsigned calls;  /* reverse lookups begun */
	/* a caller's wait for a lookup (fk_cond_timedwait): with wait_seam
	 * set, it returns at once as if its deadline had come, counted in
	 * waits, the deadline kept in wait_dl (only the test's thread waits) */
	bool wait_seam;
	unsigned waits;
	struct timespec wait_dl;
} fk = { .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER };

static int fk_getnameinfo(const struct sockaddr *sa, socklen_t salen, char *host,
			  socklen_t hostlen, char *serv, socklen_t servlen, int flags)
{
	const struct sockaddr_in *sin = (const struct sockaddr_in *)sa;
	struct timespec dl;

	(void)salen;
	(void)serv;
	(void)servlen;
	(void)flags;
	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_sec += 10; /* never hang the test */
	pthread_mutex_lock(&fk.lock);
	fk.calls++;
	while (fk.held)
		if (pthread_cond_timedwait(&fk.cond, &fk.lock, &dl) == ETIMEDOUT)
			break;
	pthread_mutex_unlock(&fk.lock);
	if (sa->sa_family != AF_INET || sin->sin_addr.s_addr != htonl(INADDR_LOOPBACK))
		return EAI_NONAME;
	snprintf(host, hostlen, "client.example.com");
	return 0;
}

static int fk_getaddrinfo(const char *node, const char *service,
			  const struct addrinfo *hints, struct addrinfo **res)
{
	struct addrinfo *ai;
	struct sockaddr_in *sin;

	(void)service;
	(void)hints;
	if (strcasecmp(node, "client.example.com"))
		return EAI_NONAME;
	ai = calloc(1, sizeof(*ai) + sizeof(*sin));
	assert_non_null(ai);
	sin = (struct sockaddr_in *)(ai + 1);
	sin->sin_family = AF_INET;
	sin->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ai->ai_family = AF_INET;
	ai->ai_socktype = SOCK_STREAM;
	ai->ai_addr = (struct sockaddr *)sin;
	ai->ai_addrlen = sizeof(*sin);
	*res = ai;
	return 0;
}

static void fk_freeaddrinfo(struct addrinfo *ai)
{
	free(ai);
}

static uint64_t fk_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static bool fk_on_transport(void)
{
	return false; /* the harness calls as a worker would */
}

static int fk_cond_timedwait(pthread_cond_t *cond, pthread_mutex_t *mutex,
			     const struct timespec *abstime)
{
	if (!fk.wait_seam)
		return pthread_cond_timedwait(cond, mutex, abstime);
	fk.wait_dl = *abstime;
	fk.waits++;
	return ETIMEDOUT;
}

static const struct fs_resolver fk_resolver = {
	.nr_getnameinfo = fk_getnameinfo,
	.nr_getaddrinfo = fk_getaddrinfo,
	.nr_freeaddrinfo = fk_freeaddrinfo,
	.nr_now_ns = fk_now,
	.nr_on_transport = fk_on_transport,
	.nr_cond_timedwait = fk_cond_timedwait,
};

/* ts_diff_ns - @b - @a in nanoseconds. */
static int64_t ts_diff_ns(const struct timespec *a, const struct timespec *b)
{
	return (int64_t)(b->tv_sec - a->tv_sec) * 1000000000ll +
	       (b->tv_nsec - a->tv_nsec);
}

static void fk_hold(bool held)
{
	pthread_mutex_lock(&fk.lock);
	fk.held = held;
	pthread_cond_broadcast(&fk.cond);
	pthread_mutex_unlock(&fk.lock);
}

static int setup_wild(void **state)
{
	const char *lines[1] = { ". *.example.com(rw,no_root_squash,insecure)" };

	fk_hold(false);
	fs_names_set_resolver(&fk_resolver);
	return t4_setup_exports(state, lines, 1);
}

static int teardown(void **state)
{
	fk_hold(false);
	t4_teardown(state);
	fs_names_set_resolver(NULL);
	return 0;
}

/* SEQUENCE, PUTFH @fh, GETATTR (type): the COMPOUND's status */
static uint32_t putfh_getattr(struct env *e, const uint8_t *fh, uint32_t fhlen)
{
	uint32_t n, status;

	c_begin(e, 1, 3);
	c_sequence(e, e->seq++, 0);
	t_u32(&e->c, OP_PUTFH);
	t_u32(&e->c, fhlen);
	c_fixed(&e->c, fh, (fhlen + 3) & ~3u);
	t_u32(&e->c, OP_GETATTR);
	t_u32(&e->c, 1);
	t_u32(&e->c, 1u << 1); /* FATTR4_TYPE */
	assert_int_equal(c_run(e), RPCRDMA_SVC_SUCCESS);
	status = r_hdr(&e->c, &n);
	assert_int_equal(r_op(&e->c, OP_SEQUENCE), NFS4_OK);
	r_skip(&e->c, 36);
	if (status == NFS4_OK) {
		assert_int_equal(n, 3);
		assert_int_equal(r_op(&e->c, OP_PUTFH), NFS4_OK);
		assert_int_equal(r_op(&e->c, OP_GETATTR), NFS4_OK);
		return NFS4_OK;
	}
	/* PUTFH of a real handle checks nothing; GETATTR meets the export */
	assert_int_equal(n, 3);
	assert_int_equal(r_op(&e->c, OP_PUTFH), NFS4_OK);
	assert_int_equal(r_op(&e->c, OP_GETATTR), status);
	return status;
}

/*
 * A confirmed name: served.  The cache forgotten and the reverse lookup
 * held back: NFS4ERR_DELAY after the worker's wait (before, the wait's
 * end read as "not listed": NFS4ERR_ACCESS).  Released: served again.
 */
static void test_pending_name_is_delay(void **state)
{
	struct env *e = t4_env(state);
	uint8_t fh[NFS4_FHSIZE] = { 0 };
	uint32_t fhlen;
	const int64_t wait_ns = FS_NAMES_WAIT_MS * 1000000ll;
	struct timespec t0, t1, before, after;

	session(e);
	t4_fh_of(e, "f", fh, &fhlen);
	assert_int_equal(putfh_getattr(e, fh, fhlen), NFS4_OK);

	fk_hold(true);
	fs_names_set_resolver(&fk_resolver); /* forget the name */
	/* the worker waits, boundedly: once, until FS_NAMES_WAIT_MS after
	 * the lookup was queued (during the call); the seam ends the wait
	 * at once as its deadline would, so no clock of the host's decides */
	fk.waits = 0;
	fk.wait_seam = true;
	clock_gettime(CLOCK_REALTIME, &before);
	assert_int_equal(putfh_getattr(e, fh, fhlen), NFS4ERR_DELAY);
	clock_gettime(CLOCK_REALTIME, &after);
	fk.wait_seam = false;
	assert_int_equal(fk.waits, 1);
	assert_true(ts_diff_ns(&before, &fk.wait_dl) >= wait_ns);
	assert_true(ts_diff_ns(&after, &fk.wait_dl) <= wait_ns);
	clock_gettime(CLOCK_MONOTONIC, &t0);

	/* released: served once the resolver has answered (bounded by
	 * time, not by a number of tries: a loaded host schedules the
	 * resolver late) */
	fk_hold(false);
	for (;;) {
		struct timespec ts = { 0, 10 * 1000 * 1000 };
		uint32_t st = putfh_getattr(e, fh, fhlen);

		if (st == NFS4_OK)
			return;
		assert_int_equal(st, NFS4ERR_DELAY);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		if (t1.tv_sec - t0.tv_sec > 30)
			break;
		nanosleep(&ts, NULL);
	}
	fail_msg("still NFS4ERR_DELAY 30 s after the name was released");
}

/* A peer whose name does not match the wildcard: NFS4ERR_ACCESS, as before. */
static void test_unlisted_name_is_access(void **state)
{
	struct env *e = t4_env(state);
	uint8_t fh[NFS4_FHSIZE] = { 0 };
	uint32_t fhlen;

	session(e);
	t4_fh_of(e, "f", fh, &fhlen);
	/* the export now lists another domain only */
	{
		struct rpcrdma_nfs3_exports *xt = NULL;
		char text[256], err[128];

		snprintf(text, sizeof(text), "%s *.other.org(rw,no_root_squash,insecure%s)\n",
			 e->dir, t4_be_opt(e));
		assert_int_equal(rpcrdma_nfs3_exports_parse("test", text, &xt, err, sizeof(err)), 0);
		assert_int_equal(rpcrdma_nfs3_server_reload(e->srv3, xt, err, sizeof(err)), 0);
		rpcrdma_nfs3_exports_free(xt);
	}
	assert_int_equal(putfh_getattr(e, fh, fhlen), NFS4ERR_ACCESS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		T4_BOTH(test_pending_name_is_delay, setup_wild, teardown),
		T4_BOTH(test_unlisted_name_is_access, setup_wild, teardown),
	};

	return t_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
