// SPDX-License-Identifier: MIT
/*
 * test_nlm_table.c - the lock table on files of an export, once per
 * backend of the file-serving layer (posix, as root: a temporary
 * directory; memory: always): owner matching (host, svid, oh), conflicts
 * with the holder reported, locks another owner sees (posix: a local
 * process, through the kernel's OFD locks; memory: another lock
 * description of the backend's), blocked requests granted when the
 * holder unlocks, CANCEL, refused grants released, stale handles, the
 * bounds and their counted refusals, FREE_ALL, shares, and no lock
 * description (posix: no descriptor) left behind.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "nlm/nlm_internal.h"
#include "fs/fs_backend.h"
#include "nlm_fixture.h"

/* One case's world: the backend, an export of it, the table. */
struct t_env {
	const struct nfx_backend *b;
	char dir[64];
	struct rpcrdma_nfs3_export *exp;
	struct nlm_table *t;  /* NULL: the backend cannot run here (skipped) */
};

/*
 * Lock descriptions the test's open function made and the table has not
 * closed yet: each is handed out with a copy of its backend's table whose
 * be_lock_close counts it closed (then closes it).
 */
static int live_descs;
static const struct fs_backend *real_be;
static struct fs_backend counted_be;

static void counted_close(struct fs_lockd *ld)
{
	live_descs--;
	real_be->be_lock_close(ld);
}

/* the test's "file handles" are file names in the export's root; the
 * description is the layer's (fs_lock_open), the caller not checked */
static int test_open(void *arg, const struct rpcrdma_nlm_caller *who,
		     const uint8_t *fh, uint32_t len, int acc,
		     struct rpcrdma_nlm_file *f)
{
	struct t_env *e = arg;
	struct fs_fentry local, *fe;
	struct stat st;
	struct fs_call c;
	char name[65];
	int ldacc, err;

	(void)who;
	(void)acc;
	memcpy(name, fh, len);
	name[len] = 0;
	err = nfx_lookup(e->exp, name, &local, &fe, &st);
	if (err)
		return err == -ENOENT ? -ESTALE : err;
	nfx_call(&c, e->exp);
	err = fs_lock_open(&c, fe, &f->nf_ld, &ldacc);
	fs_fcache_put(fe);
	if (err)
		return err;
	real_be = f->nf_ld.ld_be;
	counted_be = *real_be;
	counted_be.be_lock_close = counted_close;
	f->nf_ld.ld_be = &counted_be;
	live_descs++;
	f->nf_dev = st.st_dev;
	f->nf_ino = st.st_ino;
	return 0;
}

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

struct who {
	struct sockaddr_in addr;
	const char *name;
	uint32_t svid;
	const char *oh;
};

static struct who host_a = { .name = "clienta", .svid = 100, .oh = "100@clienta" };
static struct who host_b = { .name = "clientb", .svid = 200, .oh = "200@clientb" };

static struct nlm_lockargs args(struct who *w, const char *file, uint64_t off,
				uint64_t len, bool excl)
{
	struct nlm_lockargs a = {
		.la_caller = w->name,
		.la_fh = (const uint8_t *)file,
		.la_fhlen = (uint32_t)strlen(file),
		.la_oh = (const uint8_t *)w->oh,
		.la_ohlen = (uint32_t)strlen(w->oh),
		.la_svid = w->svid,
		.la_offset = off,
		.la_len = len,
		.la_excl = excl,
		.la_peer = (struct sockaddr *)&w->addr,
		.la_peerlen = sizeof(w->addr),
	};
	return a;
}

static int events_first, events_last;

static void on_event(void *arg, struct nlm_host *h, bool first)
{
	(void)arg;
	if (first) {
		events_first++;
		h->h_recorded = true;
	} else {
		events_last++;
	}
}

/* @state: in, the backend (the case's initial state); out, its t_env */
static int setup(void **state)
{
	struct t_env *e = calloc(1, sizeof(*e));
	struct rpcrdma_nfs3_config cfg = { 0 };

	assert_non_null(e);
	e->b = *state;
	*state = e;
	if (!nfx_usable(e->b))
		return 0;
	strcpy(e->dir, "/tmp/nlmtab.XXXXXX");
	assert_non_null(mkdtemp(e->dir));
	cfg.nc_export = e->dir;
	cfg.nc_backend = e->b->nb_name;
	assert_int_equal(rpcrdma_nfs3_export_open(&cfg, &e->exp), 0);
	for (const char *f = "abc"; *f; f++) {
		char name[2] = { *f, 0 };

		nfx_mkfile(e->exp, name, 0644, 0, 4096);
	}
	host_a.addr.sin_family = AF_INET;
	inet_pton(AF_INET, "192.0.2.2", &host_a.addr.sin_addr);
	host_a.addr.sin_port = htons(700);
	host_b.addr.sin_family = AF_INET;
	inet_pton(AF_INET, "192.0.2.3", &host_b.addr.sin_addr);
	host_b.addr.sin_port = htons(701);
	e->t = calloc(1, sizeof(*e->t));
	assert_non_null(e->t);
	assert_int_equal(nlm_table_init(e->t, 0, test_open, e), 0);
	e->t->t_host_event = on_event;
	events_first = events_last = 0;
	live_descs = 0;
	return 0;
}

static int teardown(void **state)
{
	struct t_env *e = *state;
	char cmd[100];

	if (e->t) {
		nlm_table_destroy(e->t);
		free(e->t);
		assert_int_equal(live_descs, 0); /* every description closed */
		rpcrdma_nfs3_export_close(e->exp);
		snprintf(cmd, sizeof(cmd), "rm -rf %s", e->dir);
		assert_int_equal(system(cmd), 0);
	}
	free(e);
	return 0;
}

/* the case's table; a backend that cannot run here skips the case */
static struct nlm_table *table_of(void **state)
{
	struct t_env *e = *state;

	if (!e->t)
		skip();
	return e->t;
}

/* can another owner take a lock on these bytes of @file? */
static bool other_can_lock(void **state, const char *file, off_t start, off_t len,
			   short type)
{
	struct t_env *e = *state;

	return nfx_can_lock(e->b, e->exp, file, start, len, type);
}

static void test_conflict_and_owner(void **state)
{
	struct nlm_table *t = table_of(state);
	struct nlm_lockargs a;
	struct nlm_conflict c;
	struct who a2 = host_a;

	/* A: write lock on bytes 0..9 */
	a = args(&host_a, "a", 0, 10, true);
	assert_int_equal(nlm_table_lock(t, &a, false, NULL, 0, NULL), NLM4_GRANTED);
	assert_int_equal(events_first, 1); /* host recorded */
	/* B tests a read of byte 5: denied, holder is A (svid, oh, 0+10) */
	a = args(&host_b, "a", 5, 1, false);
	assert_int_equal(nlm_table_test(t, &a, &c), NLM4_DENIED);
	assert_true(c.c_excl);
	assert_int_equal(c.c_svid, 100);
	assert_int_equal(c.c_ohlen, strlen("100@clienta"));
	assert_memory_equal(c.c_oh, "100@clienta", c.c_ohlen);
	assert_true(c.c_offset == 0 && c.c_len == 10);
	/* B: byte 10 is free */
	a = args(&host_b, "a", 10, 1, true);
	assert_int_equal(nlm_table_test(t, &a, &c), NLM4_GRANTED);
	/* same host, another svid: another owner, denied */
	a2.svid = 101;
	a = args(&a2, "a", 9, 1, false);
	assert_int_equal(nlm_table_lock(t, &a, false, NULL, 0, NULL), NLM4_DENIED);
	/* same host and svid, another owner handle: another owner */
	a2.svid = 100;
	a2.oh = "100@other";
	a = args(&a2, "a", 0, 1, false);
	assert_int_equal(nlm_table_lock(t, &a, false, NULL, 0, NULL), NLM4_DENIED);
	/* the owner itself: its own locks never conflict; TEST says granted */
	a = args(&host_a, "a", 0, 0, true);
	assert_int_equal(nlm_table_test(t, &a, &c), NLM4_GRANTED);
	/* same host from another port is the same host */
	host_a.addr.sin_port = htons(999);
	a = args(&host_a, "a", 5, 100, true); /* extends 0..9 to 0..104 */
	assert_int_equal(nlm_table_lock(t, &a, false, NULL, 0, NULL), NLM4_GRANTED);
	assert_int_equal(t->t_nranges, 1);
	assert_int_equal(t->t_nholders, 1);
	/* a local process sees the lock (bytes 50..50 write), not byte 200 */
	assert_false(other_can_lock(state, "a", 50, 1, F_WRLCK));
	assert_true(other_can_lock(state, "a", 200, 1, F_WRLCK));
	/* unlock the middle: two ranges; a local process can lock byte 50 */
	a = args(&host_a, "a", 40, 20, false);
	assert_int_equal(nlm_table_unlock(t, &a), NLM4_GRANTED);
	assert_int_equal(t->t_nranges, 2);
	assert_true(other_can_lock(state, "a", 50, 1, F_WRLCK));
	assert_false(other_can_lock(state, "a", 39, 1, F_RDLCK));
	/* unlock the rest: the description closes, the host goes */
	a = args(&host_a, "a", 0, 0, false);
	assert_int_equal(nlm_table_unlock(t, &a), NLM4_GRANTED);
	assert_int_equal(t->t_nranges, 0);
	assert_int_equal(t->t_nholders, 0);
	assert_int_equal(t->t_nhosts, 0);
	assert_int_equal(events_last, 1);
	/* unlocking what one does not hold: granted */
	assert_int_equal(nlm_table_unlock(t, &a), NLM4_GRANTED);
}

static void test_local_holder_blocks(void **state)
{
	struct nlm_table *t = table_of(state);
	struct t_env *e = *state;
	struct nlm_lockargs a;
	struct nlm_conflict c;
	struct nlm_grant *g;
	struct nfx_holder other;

	/* another owner (posix: a local OFD lock of another open file
	 * description) holds bytes 0..99 */
	assert_true(nfx_hold(e->b, e->exp, "b", 0, 100, F_WRLCK, &other));
	a = args(&host_a, "b", 50, 10, false);
	assert_int_equal(nlm_table_lock(t, &a, false, NULL, 0, &c), NLM4_DENIED);
	assert_true(c.c_excl && c.c_offset == 0 && c.c_len == 100);
	assert_int_equal(c.c_ohlen, 0); /* not one of ours */
	/* blocking: queued, retried without success while the holder holds */
	assert_int_equal(nlm_table_lock(t, &a, true, (const uint8_t *)"ck", 2, NULL),
			 NLM4_BLOCKED);
	assert_int_equal(t->t_nwaiters, 1);
	nlm_table_retry(t, &g);
	assert_null(g);
	/* a re-sent blocking request does not queue twice */
	assert_int_equal(nlm_table_lock(t, &a, true, (const uint8_t *)"ck", 2, NULL),
			 NLM4_BLOCKED);
	assert_int_equal(t->t_nwaiters, 1);
	/* the other holder lets go: the retry grants it, cookie kept */
	nfx_release(&other);
	nlm_table_retry(t, &g);
	assert_non_null(g);
	assert_null(g->g_next);
	assert_int_equal(g->g_w.w_cookielen, 2);
	assert_memory_equal(g->g_w.w_cookie, "ck", 2);
	assert_true(g->g_w.w_range.nr_start == 50 && g->g_w.w_range.nr_end == 59);
	assert_true(nlm_addr_equal((struct sockaddr *)&g->g_addr,
				   (struct sockaddr *)&host_a.addr));
	assert_int_equal(t->t_nwaiters, 0);
	assert_int_equal(t->t_nranges, 1);
	assert_false(other_can_lock(state, "b", 55, 1, F_WRLCK));
	/* the client refuses the grant: the lock is released */
	nlm_table_grant_refused(t, g);
	free(g);
	assert_int_equal(t->t_nranges, 0);
	assert_int_equal(t->t_nholders, 0);
	assert_true(other_can_lock(state, "b", 55, 1, F_WRLCK));
	/* posix: a local process's own POSIX lock is named by its pid (the
	 * table has no description of the file open here: closing one would
	 * release this process's POSIX locks of it) */
	if (!e->b->nb_memory) {
		struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET,
				    .l_start = 200, .l_len = 10 };
		char path[256];
		int fd;

		snprintf(path, sizeof(path), "%s/b", e->exp->ex_path);
		fd = open(path, O_RDWR | O_CLOEXEC);
		assert_true(fd >= 0);
		assert_int_equal(fcntl(fd, F_SETLK, &fl), 0);
		a = args(&host_b, "b", 205, 1, false);
		assert_int_equal(nlm_table_test(t, &a, &c), NLM4_DENIED);
		assert_int_equal(c.c_svid, (uint32_t)getpid());
		assert_int_equal(c.c_ohlen, 0);
		assert_true(c.c_excl && c.c_offset == 200 && c.c_len == 10);
		close(fd);
	}
}

static void test_block_unlock_cancel(void **state)
{
	struct nlm_table *t = table_of(state);
	struct nlm_lockargs a, b;
	struct nlm_grant *g;

	a = args(&host_a, "c", 0, 0, true);
	assert_int_equal(nlm_table_lock(t, &a, false, NULL, 0, NULL), NLM4_GRANTED);
	b = args(&host_b, "c", 100, 10, false);
	assert_int_equal(nlm_table_lock(t, &b, true, NULL, 0, NULL), NLM4_BLOCKED);
	/* cancelled: A's unlock grants nothing */
	assert_int_equal(nlm_table_cancel(t, &b), NLM4_GRANTED);
	assert_int_equal(t->t_nwaiters, 0);
	assert_int_equal(nlm_table_lock(t, &b, true, NULL, 0, NULL), NLM4_BLOCKED);
	assert_int_equal(nlm_table_unlock(t, &a), NLM4_GRANTED);
	nlm_table_retry(t, &g);
	assert_non_null(g);
	assert_int_equal(g->g_w.w_owner.o_svid, 200);
	free(g);
	/* B holds 100..109 read now; A's write on 105 is denied */
	a = args(&host_a, "c", 105, 1, true);
	assert_int_equal(nlm_table_lock(t, &a, false, NULL, 0, NULL), NLM4_DENIED);
	/* A read is fine (two read locks) */
	a.la_excl = false;
	assert_int_equal(nlm_table_lock(t, &a, false, NULL, 0, NULL), NLM4_GRANTED);
	/* FREE_ALL of clientb from its address; then of clienta by its
	 * numeric address (every host there) */
	assert_int_equal(nlm_table_free_host(t, "clientb", (struct sockaddr *)&host_b.addr), 1);
	assert_int_equal(nlm_table_free_host(t, "nobody", (struct sockaddr *)&host_a.addr), 0);
	assert_int_equal(nlm_table_free_host(t, "192.0.2.2", (struct sockaddr *)&host_a.addr), 1);
	assert_int_equal(t->t_nranges, 0);
	assert_int_equal(t->t_nholders, 0);
	assert_int_equal(t->t_nhosts, 0);
	assert_true(other_can_lock(state, "c", 0, 0, F_WRLCK));
}

static void test_bad_input(void **state)
{
	struct nlm_table *t = table_of(state);
	struct t_env *e = *state;
	struct nlm_lockargs a;
	struct nlm_conflict c;

	/* an offset beyond 2^63 - 1 */
	a = args(&host_a, "a", 1ull << 63, 1, true);
	assert_int_equal(nlm_table_lock(t, &a, false, NULL, 0, NULL), NLM4_FBIG);
	assert_int_equal(nlm_table_test(t, &a, &c), NLM4_FBIG);
	assert_int_equal(nlm_table_unlock(t, &a), NLM4_FBIG);
	/* a wrapping range locks to the end of the file */
	a = args(&host_a, "a", 100, UINT64_MAX, true);
	assert_int_equal(nlm_table_lock(t, &a, false, NULL, 0, NULL), NLM4_GRANTED);
	assert_true(t->t_holders->ho_set.rs_v[0].nr_end == NLM_OFFSET_MAX);
	assert_false(other_can_lock(state, "a", 1ll << 40, 1, F_RDLCK));
	assert_int_equal(nlm_table_unlock(t, &a), NLM4_GRANTED);
	/* a handle whose file is gone */
	nfx_unlink(e->exp, "c");
	a = args(&host_a, "c", 0, 1, true);
	assert_int_equal(nlm_table_lock(t, &a, false, NULL, 0, NULL), NLM4_STALE_FH);
	assert_int_equal(nlm_table_lock(t, &a, true, NULL, 0, NULL), NLM4_STALE_FH);
	assert_int_equal(t->t_nwaiters, 0);
	assert_int_equal(nlm_table_test(t, &a, &c), NLM4_STALE_FH);
	assert_int_equal(t->t_nhosts, 0);
	assert_int_equal(t->t_stats.ns_stale, 2);
}

static void test_waiter_file_removed(void **state)
{
	struct nlm_table *t = table_of(state);
	struct t_env *e = *state;
	struct nlm_lockargs a, b;
	struct nlm_grant *g;

	a = args(&host_a, "c", 0, 0, true);
	assert_int_equal(nlm_table_lock(t, &a, false, NULL, 0, NULL), NLM4_GRANTED);
	b = args(&host_b, "c", 0, 0, true);
	assert_int_equal(nlm_table_lock(t, &b, true, NULL, 0, NULL), NLM4_BLOCKED);
	/* the file is removed; A lets go: B's waiter is dropped, not granted */
	nfx_unlink(e->exp, "c");
	assert_int_equal(nlm_table_unlock(t, &a), NLM4_GRANTED);
	nlm_table_retry(t, &g);
	assert_null(g);
	assert_int_equal(t->t_nwaiters, 0);
	assert_int_equal(t->t_nhosts, 0);
}

static void test_bounds_and_leaks(void **state)
{
	struct nlm_table *t = table_of(state);
	struct t_env *e = *state;
	struct nlm_lockargs a;
	int fds = count_fds(), granted = 0;
	bool posix = !e->b->nb_memory;

	/* at most 6 records: each lock needs room for 2 more (one host's
	 * share, a quarter of the table: NLM_MACHINE_SHARE(24) = 6) */
	t->t_max = 24;
	for (int i = 0; i < 10; i++) {
		a = args(&host_a, "a", (uint64_t)i * 10, 1, true);
		uint32_t st = nlm_table_lock(t, &a, false, NULL, 0, NULL);

		if (st == NLM4_GRANTED)
			granted++;
		else
			assert_int_equal(st, NLM4_DENIED_NOLOCKS);
	}
	assert_int_equal(granted, 5); /* 0..4 records held: 4 + 2 <= 6 */
	assert_int_equal(t->t_nranges, 5);
	assert_int_equal(t->t_stats.ns_nolocks, 5);
	/* keep byte 0 only: one record */
	a = args(&host_a, "a", 1, 0, false);
	assert_int_equal(nlm_table_unlock(t, &a), NLM4_GRANTED);
	assert_int_equal(t->t_nranges, 1);
	/* waiters are bounded too */
	for (int i = 0; i < 10; i++) {
		struct who w = host_b;

		w.svid = 300 + (uint32_t)i;
		a = args(&w, "a", 0, 0, true);
		uint32_t st = nlm_table_lock(t, &a, true, NULL, 0, NULL);

		assert_int_equal(st, i < 6 ? NLM4_BLOCKED : NLM4_DENIED_NOLOCKS);
	}
	assert_int_equal(t->t_nwaiters, 6);
	assert_int_equal(nlm_table_free_host(t, "clientb", (struct sockaddr *)&host_b.addr), 1);
	assert_int_equal(t->t_nwaiters, 0);
	/* A's one description (posix: one descriptor) */
	assert_int_equal(live_descs, 1);
	if (posix)
		assert_int_equal(count_fds(), fds + 1);
	a = args(&host_a, "a", 0, 0, false);
	assert_int_equal(nlm_table_unlock(t, &a), NLM4_GRANTED);
	assert_int_equal(live_descs, 0);
	if (posix)
		assert_int_equal(count_fds(), fds);
	assert_int_equal(t->t_nranges, 0);
	assert_int_equal(t->t_nhosts, 0);
}

static void test_share(void **state)
{
	struct nlm_table *t = table_of(state);
	struct nlm_lockargs a = args(&host_a, "a", 0, 0, false);
	struct nlm_lockargs b = args(&host_b, "a", 0, 0, false);

	/* A: access read, deny write (fsa_R = 1, fsm_DW = 2) */
	assert_int_equal(nlm_table_share(t, &a, 2, 1, false), NLM4_GRANTED);
	/* B wants write access: denied; read with deny none: granted */
	assert_int_equal(nlm_table_share(t, &b, 0, 2, false), NLM4_DENIED);
	assert_int_equal(nlm_table_share(t, &b, 0, 1, false), NLM4_GRANTED);
	/* B now wants to deny read; A has read access: refused, and B's
	 * old share stays */
	assert_int_equal(nlm_table_share(t, &b, 1, 1, false), NLM4_DENIED);
	assert_int_equal(t->t_nshares, 2);
	/* B's share replaced by one with write access: refused by A's deny
	 * write; then by a read share denying nothing: granted, still two */
	assert_int_equal(nlm_table_share(t, &b, 0, 3, false), NLM4_DENIED);
	assert_int_equal(nlm_table_share(t, &b, 0, 1, false), NLM4_GRANTED);
	assert_int_equal(t->t_nshares, 2);
	assert_int_equal(nlm_table_share(t, &b, 0, 0, true), NLM4_GRANTED);
	assert_int_equal(t->t_nshares, 1);
	/* bad mode */
	assert_int_equal(nlm_table_share(t, &b, 4, 1, false), NLM4_FAILED);
	/* A unshares: B can take write */
	assert_int_equal(nlm_table_share(t, &a, 0, 0, true), NLM4_GRANTED);
	assert_int_equal(nlm_table_share(t, &b, 0, 2, false), NLM4_GRANTED);
	assert_int_equal(nlm_table_share(t, &b, 0, 0, true), NLM4_GRANTED);
	assert_int_equal(t->t_nshares, 0);
	assert_int_equal(t->t_nhosts, 0);
}

/*
 * Issue 33, finding 2: FREE_ALL (and SM_NOTIFY, the same call) releases a
 * host only when it comes from that host's address.  Another allowed host
 * naming it, and a clone with the same node name at another address,
 * release nothing of it.
 */
static void test_free_host_from_sender_only(void **state)
{
	struct nlm_table *t = table_of(state);
	struct who clone = { .name = "clienta", .svid = 100, .oh = "100@clienta" };
	struct nlm_lockargs a;

	clone.addr.sin_family = AF_INET;
	inet_pton(AF_INET, "192.0.2.4", &clone.addr.sin_addr);
	a = args(&host_a, "a", 0, 10, true);
	assert_int_equal(nlm_table_lock(t, &a, false, NULL, 0, NULL), NLM4_GRANTED);
	a = args(&clone, "a", 100, 10, true);
	assert_int_equal(nlm_table_lock(t, &a, false, NULL, 0, NULL), NLM4_GRANTED);
	assert_int_equal(t->t_nhosts, 2);
	/* from host B's address, naming A: nothing */
	assert_int_equal(nlm_table_free_host(t, "clienta", (struct sockaddr *)&host_b.addr), 0);
	/* from B, by A's numeric address: nothing either */
	assert_int_equal(nlm_table_free_host(t, "192.0.2.2", (struct sockaddr *)&host_b.addr), 0);
	assert_false(other_can_lock(state, "a", 0, 10, F_WRLCK));
	assert_false(other_can_lock(state, "a", 100, 10, F_WRLCK));
	/* the clone's own FREE_ALL: the clone's lock only */
	assert_int_equal(nlm_table_free_host(t, "clienta", (struct sockaddr *)&clone.addr), 1);
	assert_true(other_can_lock(state, "a", 100, 10, F_WRLCK));
	assert_false(other_can_lock(state, "a", 0, 10, F_WRLCK));
	assert_int_equal(t->t_nhosts, 1);
	assert_int_equal(t->t_nranges, 1);
	/* no sender: nothing */
	assert_int_equal(nlm_table_free_host(t, "clienta", NULL), 0);
	assert_int_equal(t->t_nranges, 1);
	/* A's own */
	assert_int_equal(nlm_table_free_host(t, "clienta", (struct sockaddr *)&host_a.addr), 1);
	assert_true(other_can_lock(state, "a", 0, 10, F_WRLCK));
	assert_int_equal(t->t_nhosts, 0);
	assert_int_equal(t->t_nranges, 0);
}

/* hosts are keyed by (address, caller_name): two hosts behind one address
 * are two lock owners even with the same svid and owner handle, and one
 * host's FREE_ALL leaves the other's locks */
static void test_hosts_by_name_and_address(void **state)
{
	struct nlm_table *t = table_of(state);
	struct who other = host_a;
	struct nlm_lockargs a;

	other.name = "clienta-twin";
	a = args(&host_a, "b", 0, 10, true);
	assert_int_equal(nlm_table_lock(t, &a, false, NULL, 0, NULL), NLM4_GRANTED);
	a = args(&other, "b", 5, 1, true);
	assert_int_equal(nlm_table_lock(t, &a, false, NULL, 0, NULL), NLM4_DENIED);
	assert_int_equal(nlm_table_test(t, &a, NULL), NLM4_DENIED);
	a = args(&other, "b", 20, 1, true);
	assert_int_equal(nlm_table_lock(t, &a, false, NULL, 0, NULL), NLM4_GRANTED);
	assert_int_equal(t->t_nhosts, 2);
	assert_int_equal(t->t_nholders, 2);
	/* the twin's FREE_ALL from the shared address */
	assert_int_equal(nlm_table_free_host(t, "clienta-twin", (struct sockaddr *)&host_a.addr), 1);
	assert_true(other_can_lock(state, "b", 20, 1, F_WRLCK));
	assert_false(other_can_lock(state, "b", 0, 10, F_WRLCK));
	/* A's UNLOCK still finds its lock */
	a = args(&host_a, "b", 0, 10, false);
	assert_int_equal(nlm_table_unlock(t, &a), NLM4_GRANTED);
	assert_true(other_can_lock(state, "b", 0, 10, F_WRLCK));
	assert_int_equal(t->t_nhosts, 0);
}

/*
 * One machine cannot take the table from the others (session 25's
 * review): with t_max 16 a peer address holds at most a quarter, 4, of
 * the ranges (a LOCK needs room for 2: 3 locks), lock descriptions,
 * waiters, shares and hosts, whatever caller_names it uses; another
 * machine still gets its own quarter.  Before, one peer took all 16
 * ranges (15 of its 20 LOCKs granted) and B got NLM4_DENIED_NOLOCKS.
 */
static void test_one_machine_share(void **state)
{
	struct nlm_table *t = table_of(state);
	struct nlm_lockargs a;
	struct who w;
	char name[32], oh[32];
	int granted = 0;

	t->t_max = 16;
	/* B, another machine, holds byte 0 */
	a = args(&host_b, "a", 0, 1, true);
	assert_int_equal(nlm_table_lock(t, &a, false, NULL, 0, NULL), NLM4_GRANTED);
	/* A's blocked requests for it: at most 4 waiters */
	for (int i = 0; i < 10; i++) {
		w = host_a;
		w.svid = 500 + (uint32_t)i;
		a = args(&w, "a", 0, 1, true);
		uint32_t st = nlm_table_lock(t, &a, true, NULL, 0, NULL);

		if (st == NLM4_BLOCKED)
			granted++;
		else
			assert_int_equal(st, NLM4_DENIED_NOLOCKS);
	}
	assert_int_equal(granted, 4);
	assert_int_equal(t->t_nwaiters, 4);
	/* A under twenty more caller_names and owners, one range each:
	 * 3 locks (4 ranges at most, a LOCK needs room for 2), and 4 hosts
	 * in all with "clienta" of the waiters */
	granted = 0;
	for (int i = 0; i < 20; i++) {
		w = host_a;
		snprintf(name, sizeof(name), "clienta-%d", i);
		snprintf(oh, sizeof(oh), "%d@clienta", i);
		w.name = name;
		w.oh = oh;
		w.svid = 100 + (uint32_t)i;
		a = args(&w, "a", 10 + (uint64_t)i * 10, 1, true);
		uint32_t st = nlm_table_lock(t, &a, false, NULL, 0, NULL);

		if (st == NLM4_GRANTED)
			granted++;
		else
			assert_int_equal(st, NLM4_DENIED_NOLOCKS);
	}
	assert_int_equal(granted, 3);
	assert_int_equal(t->t_nranges, 4);
	assert_int_equal(t->t_nhosts, 5);
	/* B has its own quarter: two more locks, not a third */
	for (int i = 0; i < 2; i++) {
		a = args(&host_b, "a", 1000 + (uint64_t)i * 10, 1, true);
		assert_int_equal(nlm_table_lock(t, &a, false, NULL, 0, NULL), NLM4_GRANTED);
	}
	a = args(&host_b, "a", 2000, 1, true);
	assert_int_equal(nlm_table_lock(t, &a, false, NULL, 0, NULL), NLM4_DENIED_NOLOCKS);
	/* shares: four owners of A's at most */
	granted = 0;
	for (int i = 0; i < 6; i++) {
		w = host_a;
		snprintf(oh, sizeof(oh), "share-%d", i);
		w.oh = oh;
		a = args(&w, "b", 0, 0, false);
		uint32_t st = nlm_table_share(t, &a, 0, 1, false);

		if (st == NLM4_GRANTED)
			granted++;
		else
			assert_int_equal(st, NLM4_DENIED_NOLOCKS);
	}
	assert_int_equal(granted, 4);
	assert_int_equal(nlm_table_free_host(t, "192.0.2.2", (struct sockaddr *)&host_a.addr), 4);
	assert_int_equal(nlm_table_free_host(t, "clientb", (struct sockaddr *)&host_b.addr), 1);
	assert_int_equal(t->t_nranges, 0);
	assert_int_equal(t->t_nwaiters, 0);
	assert_int_equal(t->t_nhosts, 0);
	assert_int_equal(live_descs, 0);
}

#define CASE(b, f) { #b ": " #f, f, setup, teardown, (void *)&nfx_##b }
#define CASES(b)                                      \
	CASE(b, test_conflict_and_owner),             \
	CASE(b, test_local_holder_blocks),            \
	CASE(b, test_block_unlock_cancel),            \
	CASE(b, test_bad_input),                      \
	CASE(b, test_waiter_file_removed),            \
	CASE(b, test_bounds_and_leaks),               \
	CASE(b, test_share),                          \
	CASE(b, test_free_host_from_sender_only),     \
	CASE(b, test_hosts_by_name_and_address),     \
	CASE(b, test_one_machine_share)

int main(void)
{
	/* every case once per backend; posix ones skip unless root */
	const struct CMUnitTest tests[] = { CASES(posix), CASES(memory) };

	return t_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
