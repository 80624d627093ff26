// SPDX-License-Identifier: MIT
/*
 * test_nfs4_deleg_lease.c - a read delegation recalled for a change made
 * from outside the server (RFC 8881 10.4.4): the delegation holds a lease
 * of the file-serving layer (nfs4_deleg_lease(), fs_lease_open()) whose
 * break marks it and wakes the server's lease thread, which recalls it
 * (GRANTED -> RECALLING: dc_recalled); DELEGRETURN closes the lease.
 *
 * The harness has no back channel, so OPEN grants no delegation: one is
 * granted by hand (nfs4_deleg_grant(), then nfs4_deleg_lease() with a call
 * and the file's entry of the server's own export and the server's break
 * callback, as the OPEN path does), the callback wrapped to count its
 * calls.  "From outside": posix, a local open(2) O_WRONLY|O_NONBLOCK of
 * the file (with a read lease out the kernel fails it with EWOULDBLOCK
 * and starts the break, fcntl(2) "Leases"); memory, a write through a
 * second server exporting the same path (its tree is shared, as gateways
 * of one storage would share it).  After the return: posix, the local
 * open for writing succeeds at once (no lease left, it would fail with
 * EWOULDBLOCK otherwise); memory, a further change from outside calls the
 * callback no more.
 */
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "test_nfs4_harness.h"

#include "nfs4/nfs4_deleg.h"

static int setup(void **state)
{
	return t4_setup(state, "rw,no_root_squash");
}

static int teardown(void **state)
{
	return t4_teardown(state);
}

/* The break callback the test gives nfs4_deleg_lease(): counts, then
 * the server's own (nfs4_deleg_on_lease_break). */
struct holder {
	atomic_int h_calls;
	struct rpcrdma_nfs4_server *h_srv;
};

static void counting_break(void *arg, struct fs_lease *ls)
{
	struct holder *h = arg;

	atomic_fetch_add(&h->h_calls, 1);
	nfs4_deleg_on_lease_break(h->h_srv, ls);
}

/* recalled_within - dc_recalled reaches @want within @ms milliseconds. */
static bool recalled_within(struct env *e, uint64_t want, int ms)
{
	struct nfs4_deleg_counts dc;

	for (int i = 0; i <= ms; i += 10) {
		nfs4_deleg_counts(e->srv4->s4_deleg, &dc);
		if (dc.dc_recalled >= want)
			return true;
		usleep(10 * 1000);
	}
	return false;
}

/*
 * outside_change - a change of e->dir/@rel from outside the server.
 * posix: open(2) O_WRONLY|O_NONBLOCK, closed at once.  memory: the file
 * opened for writing and "z" written at 0 through the export of the
 * same path of a second NFSv3 server (@other).  Return: 0 or the open's
 * or the write's -errno (posix, a lease out: -EAGAIN).
 */
static int outside_change(struct env *e, struct rpcrdma_nfs3_server *other,
			  const char *rel)
{
	struct iovec iov = { .iov_base = "z", .iov_len = 1 };
	struct fs_fentry l, *fe;
	struct env e2 = *e;
	char p[PATH_MAX];
	const char *rest;
	struct t4_fs f;
	struct stat st;
	size_t done = 0;
	int fd, err;

	if (!e->mem) {
		snprintf(p, sizeof(p), "%s/%s", e->dir, rel);
		fd = open(p, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
		if (fd < 0)
			return -errno;
		close(fd);
		return 0;
	}
	e2.srv3 = other;
	t4_fs_begin(&e2, rel, &f, &rest);
	assert_ptr_not_equal(f.f_c.c_exp, NULL);
	assert_int_equal(t4_fs_walk(&f, rest, false, &l, &fe, &st, NULL), 0);
	err = fs_open(&f.f_c, fe, &st, O_WRONLY);
	if (!err)
		err = fs_write(&f.f_c, fe, &iov, 1, 0, FS_UNSTABLE, &done);
	fs_fcache_put(fe);
	t4_fs_end(&f);
	return err;
}

/* other_server - memory: a second NFSv3 server exporting e->dir (the
 * same tree); posix: none (NULL). */
static struct rpcrdma_nfs3_server *other_server(struct env *e)
{
	struct rpcrdma_nfs3_config cfg = { .nc_fcache_idle_ms = RPCRDMA_NFS3_FCACHE_IDLE_NEVER };
	struct rpcrdma_nfs3_exports *xt = NULL;
	struct rpcrdma_nfs3_server *s = NULL;
	char text[256], err[256];

	if (!e->mem)
		return NULL;
	snprintf(text, sizeof(text), "%s 127.0.0.1(rw,no_root_squash,backend=memory)\n",
		 e->dir);
	assert_int_equal(rpcrdma_nfs3_exports_parse("other", text, &xt, err, sizeof(err)), 0);
	for (unsigned i = 0; i < sizeof(cfg.nc_key); i++)
		cfg.nc_key[i] = (uint8_t)(i * 11 + 3);
	cfg.nc_max_payload = 1u << 20;
	assert_int_equal(rpcrdma_nfs3_server_create(&cfg, xt, &s, NULL, 0), 0);
	rpcrdma_nfs3_exports_free(xt);
	return s;
}

/*
 * grant_leased - a read delegation of e->dir/@rel for the session's
 * client, granted by hand, and its lease taken as the OPEN path does
 * (a call and the file's entry of the server's own export, released
 * after).  Return: nfs4_deleg_lease()'s; the stateid and handle out.
 */
static int grant_leased(struct env *e, const char *rel, struct holder *h,
			struct nfs4_stateid *ds, uint8_t *fh, uint32_t *fhlen)
{
	struct fs_fentry l, *fe;
	const char *rest;
	struct t4_fs f;
	struct stat st;
	int err;

	t4_fh_of(e, rel, fh, fhlen);
	assert_true(nfs4_deleg_grant(e->srv4->s4_deleg, e->clientid, fh, *fhlen, false, ds));
	t4_fs_begin(e, rel, &f, &rest);
	assert_int_equal(t4_fs_walk(&f, rest, false, &l, &fe, &st, NULL), 0);
	err = nfs4_deleg_lease(e->srv4->s4_deleg, ds, &f.f_c, fe, counting_break, h);
	fs_fcache_put(fe);
	t4_fs_end(&f);
	return err;
}

static void test_outside_change_recalls(void **state)
{
	struct env *e = t4_env(state);
	struct rpcrdma_nfs3_server *other = other_server(e);
	struct holder h = { .h_srv = e->srv4 };
	struct nfs4_deleg_counts dc;
	struct nfs4_stateid ds;
	uint8_t fh[128];
	uint32_t fhlen;
	int calls;

	session(e);
	t4_mkfile(e, "g", 0644, "old data");
	assert_int_equal(grant_leased(e, "g", &h, &ds, fh, &fhlen), 0);
	nfs4_deleg_counts(e->srv4->s4_deleg, &dc);
	assert_int_equal(dc.dc_held, 1);
	assert_int_equal(dc.dc_recalled, 0);
	/* nothing happened yet: no break, no recall (a second of the lease
	 * thread's passes goes by) */
	usleep(1100 * 1000);
	assert_int_equal(atomic_load(&h.h_calls), 0);
	nfs4_deleg_counts(e->srv4->s4_deleg, &dc);
	assert_int_equal(dc.dc_recalled, 0);

	/* a change from outside: posix holds the writer off (EWOULDBLOCK),
	 * memory lets it on; either way the delegation is recalled by the
	 * lease thread within a bounded wait */
	assert_int_equal(outside_change(e, other, "g"), e->mem ? 0 : -EAGAIN);
	assert_true(recalled_within(e, 1, 5000));
	assert_true(atomic_load(&h.h_calls) >= 1);
	nfs4_deleg_counts(e->srv4->s4_deleg, &dc);
	assert_int_equal(dc.dc_held, 1);     /* RECALLING: still out */
	assert_int_equal(dc.dc_recalled, 1);
	assert_int_equal(dc.dc_returned, 0);
	/* an NFSv4 writer now sees the recall under way */
	{
		struct nfs4_deleg_recall rec[NFS4_DELEG_MAX_RECALL];
		uint32_t n;

		assert_int_equal(nfs4_deleg_conflict(e->srv4->s4_deleg, e->clientid + 1, fh,
						     fhlen, 0, rec, &n), NFS4ERR_DELAY);
	}
	if (!e->mem) /* posix: still held off until the return */
		assert_int_equal(outside_change(e, other, "g"), -EAGAIN);

	/* DELEGRETURN: the lease is closed */
	assert_int_equal(nfs4_deleg_return(e->srv4->s4_deleg, e->clientid, &ds, fh, fhlen),
			 NFS4_OK);
	nfs4_deleg_counts(e->srv4->s4_deleg, &dc);
	assert_int_equal(dc.dc_held, 0);
	assert_int_equal(dc.dc_returned, 1);
	calls = atomic_load(&h.h_calls);
	/* posix: a local writer goes on at once; memory: it tells nobody */
	assert_int_equal(outside_change(e, other, "g"), 0);
	usleep(200 * 1000);
	assert_int_equal(atomic_load(&h.h_calls), calls);
	nfs4_deleg_counts(e->srv4->s4_deleg, &dc);
	assert_int_equal(dc.dc_recalled, 1);
	if (other)
		rpcrdma_nfs3_server_destroy(other);
}

/* posix: a file open for writing somewhere gets no lease, and so no
 * delegation: nfs4_deleg_lease() answers -EAGAIN and takes the
 * delegation back (its stateid is unknown). */
static void test_lease_refused(void **state)
{
	struct env *e = t4_env(state);
	struct holder h = { .h_srv = e->srv4 };
	struct nfs4_deleg_counts dc;
	struct nfs4_stateid ds;
	char p[PATH_MAX];
	uint8_t fh[128];
	uint32_t fhlen;
	int fd;

	session(e);
	t4_mkfile(e, "w", 0644, "data");
	snprintf(p, sizeof(p), "%s/w", e->dir);
	fd = open(p, O_WRONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(grant_leased(e, "w", &h, &ds, fh, &fhlen), -EAGAIN);
	nfs4_deleg_counts(e->srv4->s4_deleg, &dc);
	assert_int_equal(dc.dc_held, 0);
	assert_int_equal(dc.dc_granted, 0);
	assert_int_equal(nfs4_deleg_return(e->srv4->s4_deleg, e->clientid, &ds, fh, fhlen),
			 NFS4ERR_BAD_STATEID);
	close(fd);
	/* once the writer closed it: granted and leased */
	assert_int_equal(grant_leased(e, "w", &h, &ds, fh, &fhlen), 0);
	assert_int_equal(outside_change(e, NULL, "w"), -EAGAIN);
	assert_true(recalled_within(e, 1, 5000));
	assert_int_equal(nfs4_deleg_return(e->srv4->s4_deleg, e->clientid, &ds, fh, fhlen),
			 NFS4_OK);
	assert_int_equal(outside_change(e, NULL, "w"), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		T4_BOTH(test_outside_change_recalls, setup, teardown),
		T4_CASE(test_lease_refused, setup, teardown, posix),
	};

	return t_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
