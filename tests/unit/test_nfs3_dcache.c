// SPDX-License-Identifier: MIT
/*
 * test_nfs3_dcache.c - the directory cache beside the open-file cache
 * (src/fs/fs_fcache.c): LOOKUP and the directory operations keep their
 * directory open between calls instead of decoding its handle each time.
 * Each rule against a temporary export of $TMPDIR (or /tmp) on the posix
 * backend (as root: file handles, chown), and on the memory backend:
 *  - a second operation in the same directory is a hit;
 *  - a cached directory never skips the caller's search and write
 *    permission checks (the kernel makes them on every *at() call);
 *  - a directory removed behind the server's back is STALE, as its handle
 *    would be without a cache, and is dropped from the cache;
 *  - RMDIR through NFS drops the directory from the cache;
 *  - a rename that replaces nothing (tried with RENAME_NOREPLACE first)
 *    and one that replaces a cached file both leave the cache right.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test_nfs3_harness.h"

#define P_LOOKUP 3u
#define P_READ 6u
#define P_CREATE 8u
#define P_MKDIR 9u
#define P_REMOVE 12u
#define P_RMDIR 13u
#define P_RENAME 14u
#define ERR_ACCES 13u
#define ERR_STALE 70u

struct t_env {
	char dir[256];
	struct rpcrdma_nfs3_export *exp;
	uint8_t root[64];
	uint32_t rootlen;
	struct t_call c;
};

static int env_setup(void **state)
{
	struct t_env *e = calloc(1, sizeof(*e));
	const char *tmp = getenv("TMPDIR");

	if (!e || t_export_dir(e->dir, sizeof(e->dir), tmp && *tmp ? tmp : "/tmp",
			       "nfs3dc", 3, &e->exp, NULL))
		return -1;
	if (rpcrdma_nfs3_root_fh(e->exp, e->root, &e->rootlen))
		return -1;
	*state = e;
	return 0;
}

static int env_teardown(void **state)
{
	struct t_env *e = *state;

	rpcrdma_nfs3_export_close(e->exp);
	t_fs_remove_tree(e->dir);
	t_free(&e->c);
	free(e);
	return 0;
}

static struct rpcrdma_nfs3_fcache_stats stats(struct t_env *e)
{
	struct rpcrdma_nfs3_fcache_stats s;

	assert_int_equal(rpcrdma_nfs3_fcache_stats(e->exp, &s), 0);
	return s;
}

/* The status of a call on (@dir, @name) by @uid, with @extra arguments. */
static uint32_t dirop(struct t_env *e, uint32_t proc, const uint8_t *dir,
		      uint32_t dirlen, const char *name, uint32_t uid)
{
	t_begin(&e->c, proc, uid, uid);
	t_opaque(&e->c, dir, dirlen);
	t_str(&e->c, name);
	if (proc == P_CREATE) {
		t_u32(&e->c, 1); /* GUARDED */
		t_sattr_mode(&e->c, 0644);
	} else if (proc == P_MKDIR) {
		t_sattr_mode(&e->c, 0755);
	}
	assert_int_equal(t_run(&e->c, e->exp), RPCRDMA_SVC_SUCCESS);
	return r_u32(&e->c);
}

/* LOOKUP @name in the root as root: its handle in @fh, the status. */
static uint32_t lookup_root(struct t_env *e, const char *name, uint8_t *fh,
			    uint32_t *fhlen)
{
	uint32_t st = dirop(e, P_LOOKUP, e->root, e->rootlen, name, 0);

	if (st == 0) {
		const uint8_t *p = r_opaque(&e->c, fhlen);

		memcpy(fh, p, *fhlen);
	}
	return st;
}

static void test_second_op_hits(void **state)
{
	struct t_env *e = *state;
	struct rpcrdma_nfs3_fcache_stats s;

	s = stats(e);
	assert_int_equal(s.fcs_dir_capacity, 256); /* 1024 / 4 */
	assert_int_equal(dirop(e, P_CREATE, e->root, e->rootlen, "a", 1000), 0);
	assert_int_equal(dirop(e, P_CREATE, e->root, e->rootlen, "b", 1000), 0);
	assert_int_equal(dirop(e, P_LOOKUP, e->root, e->rootlen, "a", 1000), 0);
	assert_int_equal(dirop(e, P_REMOVE, e->root, e->rootlen, "b", 1000), 0);
	s = stats(e);
	assert_int_equal(s.fcs_dir_misses, 1);
	assert_int_equal(s.fcs_dir_hits, 3);
	assert_int_equal(s.fcs_dir_entries, 1);
	/* files never go into the directory cache, nor directories into
	 * the file cache; CREATE keeps its new file there ("a"; "b" was
	 * forgotten by its REMOVE) */
	assert_int_equal(s.fcs_entries, 1);
	assert_int_equal(s.fcs_forgotten, 1);
}

static void test_permissions_still_checked(void **state)
{
	struct t_env *e = *state;
	uint8_t fh[64];
	uint32_t fhlen;

	assert_int_equal(dirop(e, P_MKDIR, e->root, e->rootlen, "priv", 0), 0);
	assert_int_equal(lookup_root(e, "priv", fh, &fhlen), 0);
	/* cached by root's call ... */
	assert_int_equal(dirop(e, P_CREATE, fh, fhlen, "mine", 0), 0);
	assert_int_equal(t_fs_chmod(e->exp, e->dir, "priv", 0700), 0);
	/* ... and still closed to others: no write, no search */
	assert_int_equal(dirop(e, P_CREATE, fh, fhlen, "theirs", 1000), ERR_ACCES);
	assert_int_equal(dirop(e, P_LOOKUP, fh, fhlen, "mine", 1000), ERR_ACCES);
	assert_int_equal(stats(e).fcs_dir_hits >= 3, 1);
	assert_int_equal(t_fs_chmod(e->exp, e->dir, "priv", 0777), 0);
	assert_int_equal(dirop(e, P_CREATE, fh, fhlen, "theirs", 1000), 0);
}

static void test_removed_behind_is_stale(void **state)
{
	struct t_env *e = *state;
	uint8_t fh[64];
	uint32_t fhlen, before;

	assert_int_equal(dirop(e, P_MKDIR, e->root, e->rootlen, "gone", 0), 0);
	assert_int_equal(lookup_root(e, "gone", fh, &fhlen), 0);
	assert_int_equal(dirop(e, P_CREATE, fh, fhlen, "x", 0), 0);
	assert_int_equal(t_fs_unlink(e->exp, e->dir, "gone/x"), 0);
	before = (uint32_t)stats(e).fcs_dir_entries;
	/* a local process, not NFS */
	assert_int_equal(t_fs_rmdir(e->exp, e->dir, "gone"), 0);
	assert_int_equal(dirop(e, P_CREATE, fh, fhlen, "y", 0), ERR_STALE);
	assert_int_equal(stats(e).fcs_dir_entries, before - 1);
	assert_int_equal(dirop(e, P_CREATE, fh, fhlen, "y", 0), ERR_STALE);
}

static void test_rmdir_forgets(void **state)
{
	struct t_env *e = *state;
	uint8_t fh[64];
	uint32_t fhlen, before;

	assert_int_equal(dirop(e, P_MKDIR, e->root, e->rootlen, "d", 0), 0);
	assert_int_equal(lookup_root(e, "d", fh, &fhlen), 0);
	assert_int_equal(dirop(e, P_CREATE, fh, fhlen, "f", 0), 0);
	assert_int_equal(dirop(e, P_REMOVE, fh, fhlen, "f", 0), 0);
	before = (uint32_t)stats(e).fcs_dir_entries;
	assert_int_equal(dirop(e, P_RMDIR, e->root, e->rootlen, "d", 0), 0);
	assert_int_equal(stats(e).fcs_dir_entries, before - 1);
	assert_int_equal(dirop(e, P_CREATE, fh, fhlen, "f", 0), ERR_STALE);
}

/* RENAME onto a new name and onto a cached file (which is forgotten). */
static void test_rename_both_ways(void **state)
{
	struct t_env *e = *state;
	uint8_t fh[64];
	uint32_t fhlen;
	struct stat st;
	struct t_fattr post[2] = { 0 };

	assert_int_equal(dirop(e, P_CREATE, e->root, e->rootlen, "a", 0), 0);
	assert_int_equal(dirop(e, P_CREATE, e->root, e->rootlen, "t", 0), 0);
	assert_int_equal(lookup_root(e, "t", fh, &fhlen), 0);
	/* CREATE put "a" and "t" into the file cache: READ finds "t" */
	assert_int_equal(stats(e).fcs_entries, 2);
	t_begin(&e->c, P_READ, 0, 0);
	t_opaque(&e->c, fh, fhlen);
	t_u64(&e->c, 0);
	t_u32(&e->c, 10);
	assert_int_equal(t_run(&e->c, e->exp), RPCRDMA_SVC_SUCCESS);
	assert_int_equal(r_u32(&e->c), 0);
	assert_int_equal(stats(e).fcs_entries, 2);
	assert_int_equal(stats(e).fcs_hits, 1);

	t_begin(&e->c, P_RENAME, 0, 0);
	t_opaque(&e->c, e->root, e->rootlen);
	t_str(&e->c, "a");
	t_opaque(&e->c, e->root, e->rootlen);
	t_str(&e->c, "b"); /* nothing there */
	assert_int_equal(t_run(&e->c, e->exp), RPCRDMA_SVC_SUCCESS);
	assert_int_equal(r_u32(&e->c), 0);
	/* fromdir_wcc and todir_wcc: the same directory, both with pre- and
	 * post-operation attributes, which match the directory after it */
	for (int i = 0; i < 2; i++) {
		assert_int_equal(r_u32(&e->c), 1); /* pre_op_attr follows */
		r_u64(&e->c);
		r_u64(&e->c);
		r_u64(&e->c);
		assert_true(r_post_op(&e->c, &post[i]));
	}
	assert_int_equal(e->c.rpos, e->c.rlen);
	assert_int_equal(t_fs_lstat(e->exp, e->dir, ".", &st), 0);
	assert_memory_equal(&post[0], &post[1], sizeof(post[0]));
	assert_int_equal(post[0].fileid, st.st_ino);
	assert_int_equal(post[0].mtime[0], (uint32_t)st.st_mtim.tv_sec);
	assert_int_equal(post[0].mtime[1], (uint32_t)st.st_mtim.tv_nsec);
	assert_int_equal(t_fs_lstat(e->exp, e->dir, "b", &st), 0);
	assert_int_equal(stats(e).fcs_forgotten, 0);

	t_begin(&e->c, P_RENAME, 0, 0);
	t_opaque(&e->c, e->root, e->rootlen);
	t_str(&e->c, "b");
	t_opaque(&e->c, e->root, e->rootlen);
	t_str(&e->c, "t"); /* replaces the cached file */
	assert_int_equal(t_run(&e->c, e->exp), RPCRDMA_SVC_SUCCESS);
	assert_int_equal(r_u32(&e->c), 0);
	assert_int_equal(stats(e).fcs_forgotten, 1);
	/* left: the file made as "a", now "t" */
	assert_int_equal(stats(e).fcs_entries, 1);
	assert_int_equal(t_fs_lstat(e->exp, e->dir, "b", &st), -ENOENT);
}

int main(void)
{
	static const struct t_case cases[] = {
		T_CASE(test_second_op_hits, env_setup, env_teardown, T_ANY),
		T_CASE(test_permissions_still_checked, env_setup, env_teardown, T_ANY),
		T_CASE(test_removed_behind_is_stale, env_setup, env_teardown, T_ANY),
		T_CASE(test_rmdir_forgets, env_setup, env_teardown, T_ANY),
		T_CASE(test_rename_both_ways, env_setup, env_teardown, T_ANY),
	};
	int fails = 0;

	for (int be = 0; be < T_BE_COUNT; be++)
		fails += t_run_cases(be, "nfs3 directory cache", cases,
				     T_NCASES(cases), NULL, NULL);
	return t_exit(fails);
}
