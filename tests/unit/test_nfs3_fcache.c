// SPDX-License-Identifier: MIT
/*
 * test_nfs3_fcache.c - the open-file cache behind READ, WRITE, GETATTR,
 * SETATTR and COMMIT (src/fs/fs_fcache.c), through
 * rpcrdma_nfs3_dispatch() on a temporary export (tmpfs and $TMPDIR):
 * LRU eviction, unlink and rename of cached files, descriptors never
 * wider than the access a call needs, the caller's permission checked on
 * every hit (chmod between calls, another user, supplementary groups),
 * the write verifier across restarts, and four threads at once.  The
 * cache is the layer's: its rules hold on each backend (posix as root:
 * file handles, credentials; memory, root or not); the cases about the
 * posix backend's descriptors are posix only.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include "test_nfs3_harness.h"

#include "nfs3/nfs3_internal.h"
#include "fs/fs_posix.h"

enum {
	P_GETATTR = 1, P_SETATTR = 2, P_LOOKUP = 3, P_READ = 6, P_WRITE = 7,
	P_REMOVE = 12, P_RENAME = 14, P_COMMIT = 21,
};
#define S_ACCES 13u
#define S_STALE 70u

struct t_env {
	char dir[256];
	struct rpcrdma_nfs3_export *exp;
	uint8_t root[64];
	uint32_t rootlen;
	struct t_call c;
};

struct t_fh {
	uint8_t fh[64];
	uint32_t len;
};

static const char *g_base;

static int env_open(void **state, uint32_t entries)
{
	struct t_env *e = calloc(1, sizeof(*e));
	struct rpcrdma_nfs3_config cfg = { 0 };

	if (!e || t_make_dir(e->dir, sizeof(e->dir), g_base, "fcachetest"))
		return -1;
	t_export_cfg(&cfg, e->dir, 7);
	cfg.nc_fcache_entries = entries;
	if (t_export_open(&cfg, &e->exp))
		return -1;
	if (rpcrdma_nfs3_root_fh(e->exp, e->root, &e->rootlen))
		return -1;
	*state = e;
	return 0;
}

static int setup_default(void **state)
{
	return env_open(state, 0);
}

static int setup_four(void **state)
{
	return env_open(state, 4);
}

static int setup_eight(void **state)
{
	return env_open(state, 8);
}

static int setup_300(void **state)
{
	return env_open(state, 300);
}

static int setup_off(void **state)
{
	return env_open(state, RPCRDMA_NFS3_FCACHE_OFF);
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

static void path_of(struct t_env *e, const char *name, char *buf)
{
	snprintf(buf, PATH_MAX, "%s/%s", e->dir, name);
}

/* make_file - @name with @data, owned by @uid:@gid, mode @mode. */
static void make_file(struct t_env *e, const char *name, const char *data,
		      mode_t mode, uid_t uid, gid_t gid)
{
	assert_int_equal(t_fs_mkfile(e->exp, e->dir, name, data, 0600), 0);
	assert_int_equal(t_fs_chown(e->exp, e->dir, name, uid, gid), 0);
	assert_int_equal(t_fs_chmod(e->exp, e->dir, name, mode), 0);
}

/* lookup_attr - LOOKUP of @name: its handle into @f, attributes into @a
 * (NULL: not read) */
static void lookup_attr(struct t_env *e, const char *name, struct t_fh *f,
			struct t_fattr *a)
{
	struct t_call *c = &e->c;
	const uint8_t *p;

	t_begin(c, P_LOOKUP, 0, 0);
	t_opaque(c, e->root, e->rootlen);
	t_str(c, name);
	assert_int_equal(t_run(c, e->exp), RPCRDMA_SVC_SUCCESS);
	assert_int_equal(r_u32(c), 0);
	p = r_opaque(c, &f->len);
	assert_true(f->len <= 64);
	memcpy(f->fh, p, f->len);
	if (a)
		assert_true(r_post_op(c, a));
}

static void lookup(struct t_env *e, const char *name, struct t_fh *f)
{
	lookup_attr(e, name, f, NULL);
}

static void set_groups(struct t_call *c, uint32_t n, const uint32_t *gids)
{
	c->req.rq_msg.rm_authsys.as_ngids = n;
	for (uint32_t i = 0; i < n; i++)
		c->req.rq_msg.rm_authsys.as_gids[i] = gids[i];
}

/* READ @len bytes at 0 as @uid:@gid (+ @ngids groups): the status; the data in @out. */
static uint32_t do_read_g(struct t_env *e, const struct t_fh *f, uint32_t uid,
			  uint32_t gid, uint32_t ngids, const uint32_t *gids,
			  char *out, uint32_t len)
{
	struct t_call *c = &e->c;
	const uint8_t *p;
	uint32_t st, n;

	t_begin(c, P_READ, uid, gid);
	set_groups(c, ngids, gids);
	t_opaque(c, f->fh, f->len);
	t_u64(c, 0);
	t_u32(c, len);
	assert_int_equal(t_run(c, e->exp), RPCRDMA_SVC_SUCCESS);
	st = r_u32(c);
	r_post_op(c, NULL);
	if (st == 0) {
		n = r_u32(c);
		r_u32(c); /* eof */
		p = r_opaque(c, &n);
		if (out) {
			memcpy(out, p, n);
			out[n] = '\0';
		}
	}
	return st;
}

static uint32_t do_read(struct t_env *e, const struct t_fh *f, uint32_t uid,
			char *out, uint32_t len)
{
	return do_read_g(e, f, uid, uid, 0, NULL, out, len);
}

/* WRITE @data at @off as @uid:@gid (+ @ngids groups), with @stable: the
 * status. */
static uint32_t do_write_gs(struct t_env *e, const struct t_fh *f,
			    uint32_t uid, uint32_t gid, uint32_t ngids,
			    const uint32_t *gids, uint64_t off,
			    const char *data, uint32_t stable, uint8_t verf[8])
{
	struct t_call *c = &e->c;
	uint32_t st, len = (uint32_t)strlen(data);

	t_begin(c, P_WRITE, uid, gid);
	set_groups(c, ngids, gids);
	t_opaque(c, f->fh, f->len);
	t_u64(c, off);
	t_u32(c, len);
	t_u32(c, stable);
	t_opaque(c, data, len);
	assert_int_equal(t_run(c, e->exp), RPCRDMA_SVC_SUCCESS);
	st = r_u32(c);
	r_wcc(c, NULL);
	if (st == 0) {
		assert_int_equal(r_u32(c), len);
		assert_int_equal(r_u32(c), stable);
		if (verf)
			memcpy(verf, c->res + c->rpos, 8);
	}
	return st;
}

static uint32_t do_write_s(struct t_env *e, const struct t_fh *f, uint32_t uid,
			   uint64_t off, const char *data, uint32_t stable,
			   uint8_t verf[8])
{
	return do_write_gs(e, f, uid, uid, 0, NULL, off, data, stable, verf);
}

static uint32_t do_write(struct t_env *e, const struct t_fh *f, uint32_t uid,
			 uint64_t off, const char *data)
{
	return do_write_s(e, f, uid, off, data, 0, NULL);
}

static uint32_t do_getattr(struct t_env *e, const struct t_fh *f,
			   struct t_fattr *a)
{
	struct t_call *c = &e->c;
	uint32_t st;

	t_begin(c, P_GETATTR, 1000, 1000);
	t_opaque(c, f->fh, f->len);
	assert_int_equal(t_run(c, e->exp), RPCRDMA_SVC_SUCCESS);
	st = r_u32(c);
	if (st == 0)
		r_fattr(c, a);
	return st;
}

static uint32_t do_remove(struct t_env *e, const char *name)
{
	struct t_call *c = &e->c;

	t_begin(c, P_REMOVE, 0, 0);
	t_opaque(c, e->root, e->rootlen);
	t_str(c, name);
	assert_int_equal(t_run(c, e->exp), RPCRDMA_SVC_SUCCESS);
	return r_u32(c);
}

static uint32_t do_rename(struct t_env *e, const char *from, const char *to)
{
	struct t_call *c = &e->c;

	t_begin(c, P_RENAME, 0, 0);
	t_opaque(c, e->root, e->rootlen);
	t_str(c, from);
	t_opaque(c, e->root, e->rootlen);
	t_str(c, to);
	assert_int_equal(t_run(c, e->exp), RPCRDMA_SVC_SUCCESS);
	return r_u32(c);
}

static struct rpcrdma_nfs3_fcache_stats stats(struct t_env *e)
{
	struct rpcrdma_nfs3_fcache_stats s;

	assert_int_equal(rpcrdma_nfs3_fcache_stats(e->exp, &s), 0);
	return s;
}

/* use_cached - take and put the cached entry of @f (a use, for the sweeps). */
static void use_cached(struct t_env *e, const struct t_fh *f)
{
	struct fs_fentry local, *fe;

	assert_int_equal(fs_fcache_get(e->exp, f->fh, f->len, &local, &fe, NULL), 0);
	assert_non_null(fe->fe_shard); /* a cached entry */
	fs_fcache_put(fe);
}

/* The access mode of the entry's descriptor for @acc, -1 when it has none
 * (the posix backend's descriptors). */
static int cached_mode(struct t_env *e, const struct t_fh *f, int acc)
{
	struct fs_fentry local, *fe;
	int fd, mode = -1;

	assert_int_equal(fs_fcache_get(e->exp, f->fh, f->len, &local, &fe, NULL), 0);
	assert_non_null(fe->fe_shard); /* a cached entry */
	fd = fs_fcache_fd(fe, acc);
	if (fd >= 0)
		mode = fcntl(fd, F_GETFL) & O_ACCMODE;
	fs_fcache_put(fe);
	return mode;
}

/*
 * A cache of 4: after files 0-3 and a touch of 0, file 4 evicts file 1
 * (the least recently used), not file 0 (the first one in).
 */
static void test_lru_eviction(void **state)
{
	struct t_env *e = *state;
	struct t_fh f[5];
	struct t_fattr a;
	struct rpcrdma_nfs3_fcache_stats s;
	char name[16];

	for (int i = 0; i < 5; i++) {
		snprintf(name, sizeof(name), "f%d", i);
		make_file(e, name, "x", 0644, 0, 0);
		lookup(e, name, &f[i]);
	}
	s = stats(e);
	assert_int_equal(s.fcs_capacity, 4);
	assert_int_equal(s.fcs_entries, 0);
	for (int i = 0; i < 4; i++)
		assert_int_equal(do_getattr(e, &f[i], &a), 0);
	s = stats(e);
	assert_int_equal(s.fcs_misses, 4);
	assert_int_equal(s.fcs_entries, 4);
	assert_int_equal(s.fcs_evictions, 0);
	assert_int_equal(do_getattr(e, &f[0], &a), 0); /* 0 is now the newest */
	assert_int_equal(stats(e).fcs_hits, 1);
	assert_int_equal(do_getattr(e, &f[4], &a), 0);
	s = stats(e);
	assert_int_equal(s.fcs_misses, 5);
	assert_int_equal(s.fcs_evictions, 1);
	assert_int_equal(s.fcs_entries, 4);
	/* 0, 2, 3, 4 are cached; 1 is not */
	assert_int_equal(do_getattr(e, &f[0], &a), 0);
	assert_int_equal(do_getattr(e, &f[2], &a), 0);
	assert_int_equal(do_getattr(e, &f[3], &a), 0);
	assert_int_equal(do_getattr(e, &f[4], &a), 0);
	s = stats(e);
	assert_int_equal(s.fcs_hits, 5);
	assert_int_equal(s.fcs_misses, 5);
	assert_int_equal(do_getattr(e, &f[1], &a), 0);
	s = stats(e);
	assert_int_equal(s.fcs_misses, 6);
	assert_int_equal(s.fcs_evictions, 2);
	assert_int_equal(s.fcs_entries, 4);
}

/* make_set - @n files "@prefix%04u", looked up into @f. */
static void make_set(struct t_env *e, const char *prefix, unsigned n,
		     struct t_fh *f)
{
	char name[32];

	for (unsigned i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "%s%04u", prefix, i);
		make_file(e, name, "x", 0644, 0, 0);
		lookup(e, name, &f[i]);
	}
}

/* scan - GETATTR files [@from, @to) of @f (each must succeed): the counters after. */
static struct rpcrdma_nfs3_fcache_stats scan(struct t_env *e, const struct t_fh *f,
					     unsigned from, unsigned to)
{
	struct t_fattr a;

	for (unsigned i = from; i < to; i++)
		assert_int_equal(do_getattr(e, &f[i], &a), 0);
	return stats(e);
}

/*
 * The capacity is the whole cache's, not a shard's: 1000 files in the
 * default cache of 1024 (16 shards) all stay open, however their handles
 * fall into shards (evenly spread, some shards get more than 1024/16 =
 * 64 of them), so a second scan over them hits every time.  With 1100
 * files the cache is full: it holds exactly its capacity, and evicts one
 * entry for each file it takes beyond that.
 */
static void test_capacity_cache_wide(void **state)
{
	enum { N = 1000, M = 1100, CAP = RPCRDMA_NFS3_FCACHE_DEFAULT };
	struct t_env *e = *state;
	struct t_fh *f = calloc(M, sizeof(*f));
	struct rpcrdma_nfs3_fcache_stats s;

	assert_non_null(f);
	make_set(e, "w", M, f);
	assert_int_equal(stats(e).fcs_capacity, CAP);
	s = scan(e, f, 0, N);
	assert_int_equal(s.fcs_misses, N);
	assert_int_equal(s.fcs_entries, N);
	assert_int_equal(s.fcs_evictions, 0);
	s = scan(e, f, 0, N);
	assert_int_equal(s.fcs_hits, N);
	assert_int_equal(s.fcs_misses, N);
	assert_int_equal(s.fcs_evictions, 0);
	/* beyond the capacity: full, one eviction per new file past it */
	s = scan(e, f, N, M);
	assert_int_equal(s.fcs_misses, M);
	assert_int_equal(s.fcs_entries, CAP);
	assert_int_equal(s.fcs_evictions, M - CAP);
	free(f);
}

/*
 * The shards' shares follow the working set: with the cache full of 1024
 * files scanned once, a new set of 1000 files scanned twice misses only
 * the first time, whatever shards its handles fall in (the eviction takes
 * the cache's least recently used entry, an old file, not the least
 * recently used of the shard the new file falls in, whose share was set
 * by the old set).
 */
static void test_new_working_set(void **state)
{
	enum { CAP = RPCRDMA_NFS3_FCACHE_DEFAULT, NB = 1000 };
	struct t_env *e = *state;
	struct t_fh *a = calloc(CAP, sizeof(*a)), *b = calloc(NB, sizeof(*b));
	struct rpcrdma_nfs3_fcache_stats s;

	assert_non_null(a);
	assert_non_null(b);
	make_set(e, "a", CAP, a);
	make_set(e, "b", NB, b);
	s = scan(e, a, 0, CAP);
	assert_int_equal(s.fcs_entries, CAP);
	assert_int_equal(s.fcs_evictions, 0);
	s = scan(e, b, 0, NB);
	assert_int_equal(s.fcs_misses, CAP + NB);
	assert_int_equal(s.fcs_evictions, NB);
	s = scan(e, b, 0, NB);
	assert_int_equal(s.fcs_hits, NB);
	assert_int_equal(s.fcs_misses, CAP + NB);
	assert_int_equal(s.fcs_evictions, NB);
	/* the old set's last 24 are what is left of it */
	s = scan(e, a, NB, CAP);
	assert_int_equal(s.fcs_hits, NB + (CAP - NB));
	assert_int_equal(s.fcs_misses, CAP + NB);
	free(a);
	free(b);
}

/* The shard of a default cache (16) a handle falls in: its MAC (last 8 bytes). */
static unsigned shard16(const struct t_fh *f)
{
	uint64_t h = 0;

	for (uint32_t i = f->len - 8; i < f->len; i++)
		h = (h << 8) | f->fh[i];
	return (unsigned)(h % 16);
}

/*
 * A full cache whose entries are all in other shards still takes a file
 * of an empty shard: it evicts the cache's least recently used entry,
 * which is another shard's (one eviction), and the new file is then a hit.
 */
static void test_full_cache_empty_shard(void **state)
{
	enum { CAP = RPCRDMA_NFS3_FCACHE_DEFAULT, MAX = 1400 };
	struct t_env *e = *state;
	struct t_fh *f = calloc(MAX, sizeof(*f)), lone;
	struct rpcrdma_nfs3_fcache_stats s;
	unsigned others = 0, i;
	bool have_lone = false;
	char name[16];

	assert_non_null(f);
	for (i = 0; i < MAX && (others < CAP || !have_lone); i++) {
		snprintf(name, sizeof(name), "e%04u", i);
		make_file(e, name, "x", 0644, 0, 0);
		lookup(e, name, &f[others]);
		if (shard16(&f[others]) != 0)
			others += others < CAP;
		else if (!have_lone)
			lone = f[others], have_lone = true;
	}
	assert_true(have_lone && others == CAP);
	s = scan(e, f, 0, CAP);
	assert_int_equal(s.fcs_entries, CAP);
	assert_int_equal(s.fcs_evictions, 0);
	s = scan(e, &lone, 0, 1);
	assert_int_equal(s.fcs_misses, CAP + 1);
	assert_int_equal(s.fcs_evictions, 1);
	assert_int_equal(s.fcs_entries, CAP);
	s = scan(e, &lone, 0, 1);
	assert_int_equal(s.fcs_hits, 1);
	assert_int_equal(s.fcs_misses, CAP + 1);
	free(f);
}

/* A READ hit reads through the cached descriptor: no new open. */
static void test_hit_reuses_descriptor(void **state)
{
	struct t_env *e = *state;
	struct t_fh f;
	char buf[64];
	struct rpcrdma_nfs3_fcache_stats s;

	make_file(e, "a", "alpha", 0644, 0, 0);
	lookup(e, "a", &f);
	assert_int_equal(do_read(e, &f, 1000, buf, 32), 0);
	assert_string_equal(buf, "alpha");
	assert_int_equal(do_read(e, &f, 1000, buf, 32), 0);
	assert_string_equal(buf, "alpha");
	s = stats(e);
	assert_int_equal(s.fcs_misses, 1);
	assert_int_equal(s.fcs_hits, 1);
	assert_int_equal(cached_mode(e, &f, O_RDONLY), O_RDONLY);
	assert_int_equal(cached_mode(e, &f, O_WRONLY), -1);
}

/*
 * Unlinked on the server's file system: a cached file keeps working like
 * an open descriptor; one that is not cached is STALE as before.
 */
static void test_unlink_local(void **state)
{
	struct t_env *e = *state;
	struct t_fh f, g;
	struct t_fattr a;
	char buf[64];

	make_file(e, "kept", "still here", 0666, 0, 0);
	make_file(e, "gone", "bye", 0666, 0, 0);
	lookup(e, "kept", &f);
	lookup(e, "gone", &g);
	assert_int_equal(do_read(e, &f, 1000, buf, 32), 0);
	assert_int_equal(t_fs_unlink(e->exp, e->dir, "kept"), 0);
	assert_int_equal(t_fs_unlink(e->exp, e->dir, "gone"), 0);

	assert_int_equal(do_read(e, &f, 1000, buf, 32), 0);
	assert_string_equal(buf, "still here");
	assert_int_equal(do_write(e, &f, 1000, 0, "STILL"), 0);
	assert_int_equal(do_read(e, &f, 1000, buf, 32), 0);
	assert_string_equal(buf, "STILL here");
	assert_int_equal(do_getattr(e, &f, &a), 0);
	assert_int_equal(a.nlink, 0);

	assert_int_equal(do_getattr(e, &g, &a), S_STALE);
	assert_int_equal(do_read(e, &g, 1000, buf, 32), S_STALE);
}

/*
 * NFS REMOVE of the last link drops the entry (as knfsd closes cached
 * files on unlink): the handle is STALE as without a cache.  REMOVE of
 * one of two links drops it too (links are not counted, which would cost
 * an fstat per REMOVE): the next READ opens the file again by its handle
 * (a miss) and reads it under its other name's data.
 */
static void test_remove_forgets(void **state)
{
	struct t_env *e = *state;
	struct t_fh f, h;
	char buf[64];

	make_file(e, "victim", "data", 0644, 0, 0);
	lookup(e, "victim", &f);
	assert_int_equal(do_read(e, &f, 1000, buf, 32), 0);
	assert_int_equal(stats(e).fcs_entries, 1);
	assert_int_equal(do_remove(e, "victim"), 0);
	assert_int_equal(stats(e).fcs_forgotten, 1);
	assert_int_equal(stats(e).fcs_entries, 0);
	assert_int_equal(do_read(e, &f, 1000, buf, 32), S_STALE);

	make_file(e, "one", "two names", 0644, 0, 0);
	assert_int_equal(t_fs_link(e->exp, e->dir, "one", "two"), 0);
	lookup(e, "one", &h);
	assert_int_equal(do_read(e, &h, 1000, buf, 32), 0);
	assert_int_equal(stats(e).fcs_entries, 1);
	assert_int_equal(do_remove(e, "one"), 0);
	assert_int_equal(stats(e).fcs_forgotten, 2);
	assert_int_equal(stats(e).fcs_entries, 0);
	memset(buf, 0, sizeof(buf));
	assert_int_equal(do_read(e, &h, 1000, buf, 32), 0);
	assert_string_equal(buf, "two names");
	assert_int_equal(stats(e).fcs_hits, 0);
	assert_int_equal(stats(e).fcs_entries, 1);
}

/*
 * Keyed by handle, not name: a cached file renamed (through NFS or on the
 * server) is still served; a cached file a RENAME replaced is forgotten.
 */
static void test_rename(void **state)
{
	struct t_env *e = *state;
	struct t_fh f, t;
	char buf[64];
	struct rpcrdma_nfs3_fcache_stats s;

	make_file(e, "old", "payload", 0644, 0, 0);
	make_file(e, "target", "replaced", 0644, 0, 0);
	lookup(e, "old", &f);
	lookup(e, "target", &t);
	assert_int_equal(do_read(e, &f, 1000, buf, 32), 0);
	assert_int_equal(do_read(e, &t, 1000, buf, 32), 0);

	assert_int_equal(do_rename(e, "old", "new"), 0);
	assert_int_equal(do_read(e, &f, 1000, buf, 32), 0);
	assert_string_equal(buf, "payload");
	assert_int_equal(t_fs_rename(e->exp, e->dir, "new", "newer"), 0);
	assert_int_equal(do_read(e, &f, 1000, buf, 32), 0);
	assert_string_equal(buf, "payload");
	s = stats(e);
	assert_int_equal(s.fcs_misses, 2);
	assert_int_equal(s.fcs_hits, 2);

	/* "newer" over "target": target's last link goes */
	assert_int_equal(do_rename(e, "newer", "target"), 0);
	assert_int_equal(stats(e).fcs_forgotten, 1);
	assert_int_equal(do_read(e, &t, 1000, buf, 32), S_STALE);
	assert_int_equal(do_read(e, &f, 1000, buf, 32), 0);
	assert_string_equal(buf, "payload");
}

static bool same_fh(const struct t_fh *a, const struct t_fh *b)
{
	return a->len == b->len && memcmp(a->fh, b->fh, a->len) == 0;
}

/* rdplus_find - READDIRPLUS of the root in one call: @name's handle and
 * attributes (false: not listed) */
static bool rdplus_find(struct t_env *e, const char *name, struct t_fh *f,
			struct t_fattr *a)
{
	struct t_call *c = &e->c;
	bool found = false;

	t_begin(c, 17, 0, 0);
	t_opaque(c, e->root, e->rootlen);
	t_u64(c, 0);
	t_u64(c, 0); /* cookie verifier */
	t_u32(c, 8192);
	t_u32(c, 32768);
	assert_int_equal(t_run(c, e->exp), RPCRDMA_SVC_SUCCESS);
	assert_int_equal(r_u32(c), 0);
	assert_true(r_post_op(c, NULL));
	c->rpos += 8;
	while (r_u32(c)) {
		struct t_fattr x;
		struct t_fh h = { .len = 0 };
		uint32_t n;
		const uint8_t *p;
		bool is;

		r_u64(c);
		p = r_opaque(c, &n);
		is = n == strlen(name) && memcmp(p, name, n) == 0;
		r_u64(c);
		if (!r_post_op(c, &x))
			memset(&x, 0, sizeof(x));
		if (r_u32(c)) {
			p = r_opaque(c, &h.len);
			assert_true(h.len <= 64);
			memcpy(h.fh, p, h.len);
		}
		if (is) {
			*f = h;
			*a = x;
			found = true;
		}
	}
	assert_int_equal(r_u32(c), 1); /* eof */
	return found;
}

/*
 * LOOKUP of an object a cache entry holds takes the entry's handle
 * (fs_lookup_fh): the handle must be byte for byte the one the long way
 * makes (name_to_handle_at), of the object the name names now (not of
 * the cached object the name named before), with its attributes now
 * (link count after a link, size after a write behind the server's
 * back), for files and directories; a name gone is NOENT.  READDIRPLUS
 * (which resolves its names the same way) lists the same handles.
 */
static void test_lookup_cached(void **state)
{
	struct t_env *e = *state;
	struct t_fh f, f2, g, d, d2;
	struct t_fattr a, b;
	char buf[64];

	make_file(e, "a", "abc", 0666, 0, 0);
	lookup_attr(e, "a", &f, &a);          /* not cached: the long way */
	assert_int_equal(do_read(e, &f, 1000, buf, 32), 0); /* now cached */
	assert_int_equal(stats(e).fcs_entries, 1);
	lookup_attr(e, "a", &f2, &b);         /* cached: the entry's handle */
	assert_true(same_fh(&f, &f2));
	assert_int_equal(b.size, 3);
	assert_int_equal(b.nlink, 1);
	assert_int_equal(b.mode & 07777, 0666);

	/* attributes now, not the entry's */
	assert_int_equal(t_fs_link(e->exp, e->dir, "a", "a2"), 0);
	lookup_attr(e, "a", &f2, &b);
	assert_true(same_fh(&f, &f2));
	assert_int_equal(b.nlink, 2);
	assert_int_equal(do_write(e, &f, 1000, 3, "defg"), 0);
	lookup_attr(e, "a2", &f2, &b);
	assert_true(same_fh(&f, &f2));
	assert_int_equal(b.size, 7);

	/* the name moved on: another object, another handle */
	assert_int_equal(t_fs_rename(e->exp, e->dir, "a", "b"), 0);
	make_file(e, "a", "a new file", 0604, 0, 0);
	lookup_attr(e, "a", &g, &b);
	assert_false(same_fh(&f, &g));
	assert_int_equal(b.size, 10);
	assert_int_equal(b.nlink, 1);
	assert_int_equal(b.mode & 07777, 0604);
	assert_int_equal(do_read(e, &g, 1000, buf, 32), 0); /* cache it too */
	lookup_attr(e, "a", &f2, &b);
	assert_true(same_fh(&g, &f2));
	lookup_attr(e, "b", &f2, &b);
	assert_true(same_fh(&f, &f2));
	assert_int_equal(b.size, 7);
	/* READDIRPLUS takes its handles the same way */
	assert_true(rdplus_find(e, "b", &f2, &b));
	assert_true(same_fh(&f, &f2));
	assert_int_equal(b.size, 7);
	assert_int_equal(b.nlink, 2);
	assert_true(rdplus_find(e, "a", &f2, &b));
	assert_true(same_fh(&g, &f2));
	assert_int_equal(b.size, 10);

	/* a name removed: NOENT, cached or not */
	assert_int_equal(do_remove(e, "b"), 0);
	assert_int_equal(t_fs_unlink(e->exp, e->dir, "a2"), 0);
	t_begin(&e->c, P_LOOKUP, 0, 0);
	t_opaque(&e->c, e->root, e->rootlen);
	t_str(&e->c, "b");
	assert_int_equal(t_run(&e->c, e->exp), RPCRDMA_SVC_SUCCESS);
	assert_int_equal(r_u32(&e->c), 2); /* NFS3ERR_NOENT */

	/* a directory through the directory cache */
	assert_int_equal(t_fs_mkdir(e->exp, e->dir, "d", 0755), 0);
	lookup_attr(e, "d", &d, &a);
	assert_int_equal(do_getattr(e, &d, &b), 0); /* now cached */
	lookup_attr(e, "d", &d2, &b);
	assert_true(same_fh(&d, &d2));
	assert_int_equal(b.type, 2); /* NF3DIR */
	assert_int_equal(b.nlink, a.nlink);
}

/*
 * A descriptor opened for reading never serves a write: WRITE after READ
 * opens (and keeps) an O_WRONLY one, and is refused where the caller may
 * read but not write.
 */
static void test_never_widen(void **state)
{
	struct t_env *e = *state;
	struct t_fh f, r;
	char buf[64];
	struct t_fattr a;

	make_file(e, "rw", "0123456789", 0644, 1000, 1000);
	lookup(e, "rw", &f);
	assert_int_equal(do_read(e, &f, 1000, buf, 32), 0);
	assert_int_equal(cached_mode(e, &f, O_WRONLY), -1);
	assert_int_equal(do_write(e, &f, 1000, 2, "ab"), 0);
	assert_int_equal(cached_mode(e, &f, O_RDONLY), O_RDONLY);
	assert_int_equal(cached_mode(e, &f, O_WRONLY), O_WRONLY);
	assert_int_equal(do_read(e, &f, 1000, buf, 32), 0);
	assert_string_equal(buf, "01ab456789");

	/* root's 0644 file: uid 1000 reads, may not write */
	make_file(e, "ro", "read only", 0644, 0, 0);
	lookup(e, "ro", &r);
	assert_int_equal(do_read(e, &r, 1000, buf, 32), 0);
	assert_int_equal(do_write(e, &r, 1000, 0, "X"), S_ACCES);
	assert_int_equal(cached_mode(e, &r, O_WRONLY), -1);
	assert_int_equal(do_read(e, &r, 1000, buf, 32), 0);
	assert_string_equal(buf, "read only");

	/* SETATTR size after READ: through a write descriptor, and checked */
	{
		struct t_call *c = &e->c;

		t_begin(c, P_SETATTR, 1000, 1000);
		t_opaque(c, r.fh, r.len);
		for (int i = 0; i < 3; i++)
			t_u32(c, 0);
		t_u32(c, 1);
		t_u64(c, 4);
		t_u32(c, 0);
		t_u32(c, 0);
		t_u32(c, 0); /* no guard */
		assert_int_equal(t_run(c, e->exp), RPCRDMA_SVC_SUCCESS);
		assert_int_equal(r_u32(c), S_ACCES);

		t_begin(c, P_SETATTR, 1000, 1000);
		t_opaque(c, f.fh, f.len);
		for (int i = 0; i < 3; i++)
			t_u32(c, 0);
		t_u32(c, 1);
		t_u64(c, 4);
		t_u32(c, 0);
		t_u32(c, 0);
		t_u32(c, 0);
		assert_int_equal(t_run(c, e->exp), RPCRDMA_SVC_SUCCESS);
		assert_int_equal(r_u32(c), 0);
	}
	assert_int_equal(do_getattr(e, &f, &a), 0);
	assert_int_equal(a.size, 4);
}

/*
 * The caller's permission is checked on every hit: uid B cannot read the
 * 0600 file of uid A that A's READ put in the cache, and chmod between
 * two calls of one user takes effect on the second.
 */
static void test_permission_recheck(void **state)
{
	struct t_env *e = *state;
	struct t_fh f, g, w;
	char buf[64];

	make_file(e, "private", "A's secret", 0600, 1000, 1000);
	lookup(e, "private", &f);
	assert_int_equal(do_read(e, &f, 1000, buf, 32), 0);
	assert_string_equal(buf, "A's secret");
	assert_int_equal(do_read(e, &f, 1001, buf, 32), S_ACCES);
	assert_int_equal(do_write(e, &f, 1001, 0, "B"), S_ACCES);
	assert_int_equal(do_read(e, &f, 1000, buf, 32), 0);
	assert_int_equal(stats(e).fcs_hits, 3);

	/* chmod on the server between two READs of the same user */
	make_file(e, "shared", "open to all", 0644, 0, 0);
	lookup(e, "shared", &g);
	assert_int_equal(do_read(e, &g, 1000, buf, 32), 0);
	assert_int_equal(t_fs_chmod(e->exp, e->dir, "shared", 0600), 0);
	assert_int_equal(do_read(e, &g, 1000, buf, 32), S_ACCES);
	assert_int_equal(t_fs_chmod(e->exp, e->dir, "shared", 0604), 0);
	assert_int_equal(do_read(e, &g, 1000, buf, 32), 0);

	/* and between two WRITEs */
	make_file(e, "w", "..........", 0666, 0, 0);
	lookup(e, "w", &w);
	assert_int_equal(do_write(e, &w, 1000, 0, "a"), 0);
	assert_int_equal(t_fs_chmod(e->exp, e->dir, "w", 0644), 0);
	assert_int_equal(do_write(e, &w, 1000, 1, "b"), S_ACCES);
	assert_int_equal(do_read(e, &w, 1000, buf, 32), 0);
	assert_string_equal(buf, "a.........");
}

/* Supplementary groups of the caller count on a hit, and only they. */
static void test_groups_recheck(void **state)
{
	struct t_env *e = *state;
	struct t_fh f;
	const uint32_t grp[] = { 4321 };
	char buf[64];

	make_file(e, "group", "for the group", 0640, 0, 4321);
	lookup(e, "group", &f);
	assert_int_equal(do_read_g(e, &f, 1000, 1000, 1, grp, buf, 32), 0);
	assert_string_equal(buf, "for the group");
	assert_int_equal(do_read_g(e, &f, 1000, 1000, 0, NULL, buf, 32), S_ACCES);
	assert_int_equal(do_read_g(e, &f, 1000, 4321, 0, NULL, buf, 32), 0);
	assert_int_equal(stats(e).fcs_hits, 2);
}

/* granted - does @f's cached entry remember that @uid:@gid (+ groups)
 * passed the check for @acc? */
static bool granted(struct t_env *e, const struct t_fh *f, uint32_t uid,
		    uint32_t gid, uint32_t ngids, const uint32_t *gids, int acc)
{
	struct fs_cred cr = { .cr_uid = uid, .cr_gid = gid, .cr_ngids = ngids };
	struct fs_fentry local, *fe;
	struct stat st;
	bool ok;

	for (uint32_t i = 0; i < ngids; i++)
		cr.cr_gids[i] = gids[i];
	assert_int_equal(fs_fcache_get(e->exp, f->fh, f->len, &local, &fe, &st),
			 0);
	ok = fs_fcache_granted(fe, &cr, &st, acc);
	fs_fcache_put(fe);
	return ok;
}

/*
 * The access decision a cached entry remembers (fs_fcache_grant(): READ
 * checks the caller's access after the read, with the attributes it
 * fetches then, and remembers it while the file's ctime is old enough)
 * serves its own caller only, and only while the file's permissions stay
 * as they were: another caller without permission is refused while it is
 * held, the same user without the group that gave it access too, and a
 * chmod or chgrp on the server takes effect at the next READ.
 */
static void test_grant_recheck(void **state)
{
	struct t_env *e = *state;
	const uint32_t grp[] = { 4321 };
	struct t_fh f;
	char buf[64];

	make_file(e, "g", "for the group", 0640, 0, 4321);
	lookup(e, "g", &f);
	/* a ctime of the last FS_GRANT_CTIME_AGE seconds: nothing kept */
	assert_int_equal(do_read_g(e, &f, 1000, 1000, 1, grp, buf, 32), 0);
	assert_false(granted(e, &f, 1000, 1000, 1, grp, O_RDONLY));

	fs_fcache_set_grant_age(0); /* the files need not age from here */
	assert_int_equal(do_read_g(e, &f, 1000, 1000, 1, grp, buf, 32), 0);
	assert_string_equal(buf, "for the group");
	assert_true(granted(e, &f, 1000, 1000, 1, grp, O_RDONLY));
	assert_false(granted(e, &f, 1000, 1000, 1, grp, O_WRONLY));
	assert_int_equal(do_read_g(e, &f, 1000, 1000, 1, grp, buf, 32), 0);
	assert_string_equal(buf, "for the group");

	/* other callers, the decision for 1000 held: refused, and it stays */
	assert_false(granted(e, &f, 1001, 1001, 0, NULL, O_RDONLY));
	assert_int_equal(do_read(e, &f, 1001, buf, 32), S_ACCES);
	assert_int_equal(do_read(e, &f, 1000, buf, 32), S_ACCES);
	assert_true(granted(e, &f, 1000, 1000, 1, grp, O_RDONLY));
	assert_int_equal(do_read_g(e, &f, 1000, 1000, 1, grp, buf, 32), 0);

	/* chmod on the server: the next READ of the same caller is refused */
	assert_int_equal(t_fs_chmod(e->exp, e->dir, "g", 0600), 0);
	assert_false(granted(e, &f, 1000, 1000, 1, grp, O_RDONLY));
	buf[0] = '\0';
	assert_int_equal(do_read_g(e, &f, 1000, 1000, 1, grp, buf, 32), S_ACCES);
	assert_string_equal(buf, "");

	/* allowed and remembered again, then the group changes (chgrp) */
	assert_int_equal(t_fs_chmod(e->exp, e->dir, "g", 0640), 0);
	assert_int_equal(do_read_g(e, &f, 1000, 1000, 1, grp, buf, 32), 0);
	assert_true(granted(e, &f, 1000, 1000, 1, grp, O_RDONLY));
	assert_int_equal(t_fs_chown(e->exp, e->dir, "g", 0, 4322), 0);
	assert_int_equal(do_read_g(e, &f, 1000, 1000, 1, grp, buf, 32), S_ACCES);

	/* a WRITE changes the ctime itself: its decision does not outlive it */
	assert_int_equal(t_fs_chmod(e->exp, e->dir, "g", 0666), 0);
	assert_int_equal(do_write(e, &f, 1000, 0, "F"), 0);
	assert_false(granted(e, &f, 1000, 1000, 0, NULL, O_WRONLY));
	assert_int_equal(t_fs_chmod(e->exp, e->dir, "g", 0644), 0);
	assert_int_equal(do_write(e, &f, 1000, 1, "O"), S_ACCES);
	assert_int_equal(t_fs_read(e->exp, e->dir, "g", buf, 13, 0), 13);
	buf[13] = '\0';
	assert_string_equal(buf, "For the group");
	fs_fcache_set_grant_age(FS_GRANT_CTIME_AGE);
}

/*
 * knfsd's owner override stays as it was (the owner writes its own 0400
 * file, a caller with execute permission reads), on a miss and on a hit,
 * and goes no further (another user still may not).
 */
static void test_owner_override_kept(void **state)
{
	struct t_env *e = *state;
	struct t_fh f, x;
	char buf[64];

	make_file(e, "mine", "----", 0400, 1000, 1000);
	lookup(e, "mine", &f);
	assert_int_equal(do_write(e, &f, 1000, 0, "a"), 0);
	assert_int_equal(do_write(e, &f, 1000, 1, "b"), 0);
	assert_int_equal(do_write(e, &f, 1001, 2, "c"), S_ACCES);
	assert_int_equal(do_read(e, &f, 1000, buf, 32), 0);
	assert_string_equal(buf, "ab--");

	make_file(e, "prog", "#!", 0711, 0, 0);
	lookup(e, "prog", &x);
	assert_int_equal(do_read(e, &x, 1000, buf, 32), 0);
	assert_int_equal(do_read(e, &x, 1000, buf, 32), 0);
	assert_string_equal(buf, "#!");
	assert_int_equal(do_write(e, &x, 1000, 0, "x"), S_ACCES);
}

/*
 * UNSTABLE stays unstable and COMMIT answers the WRITE verifier; a new
 * export (a server restart) has another verifier.
 */
static void test_verifier_restart(void **state)
{
	struct t_env *e = *state;
	struct rpcrdma_nfs3_config cfg = { 0 };
	struct rpcrdma_nfs3_export *again;
	struct t_call *c = &e->c;
	struct t_fh f;
	uint8_t v1[8], v2[8], v3[8];

	make_file(e, "v", "", 0666, 0, 0);
	lookup(e, "v", &f);
	assert_int_equal(do_write_s(e, &f, 1000, 0, "u", 0, v1), 0);
	assert_int_equal(do_write_s(e, &f, 1000, 1, "f", 2, v2), 0);
	assert_memory_equal(v1, v2, 8);
	t_begin(c, P_COMMIT, 1000, 1000);
	t_opaque(c, f.fh, f.len);
	t_u64(c, 0);
	t_u32(c, 0);
	assert_int_equal(t_run(c, e->exp), RPCRDMA_SVC_SUCCESS);
	assert_int_equal(r_u32(c), 0);
	r_wcc(c, NULL);
	assert_memory_equal(c->res + c->rpos, v1, 8);

	/* restart: the same export opened again */
	t_export_cfg(&cfg, e->dir, 7); /* the key env_open() gave it */
	assert_int_equal(rpcrdma_nfs3_export_open(&cfg, &again), 0);
	rpcrdma_nfs3_export_close(e->exp);
	e->exp = again;
	assert_int_equal(do_write_s(e, &f, 1000, 0, "u", 0, v3), 0);
	assert_memory_not_equal(v1, v3, 8);
}

/* The cache off: calls work, nothing is counted. */
static void test_cache_off(void **state)
{
	struct t_env *e = *state;
	struct t_fh f;
	char buf[64];
	struct rpcrdma_nfs3_fcache_stats s;

	make_file(e, "a", "alpha", 0666, 0, 0);
	lookup(e, "a", &f);
	assert_int_equal(do_read(e, &f, 1000, buf, 32), 0);
	assert_int_equal(do_write(e, &f, 1000, 0, "A"), 0);
	assert_int_equal(do_read(e, &f, 1000, buf, 32), 0);
	assert_string_equal(buf, "Alpha");
	s = stats(e);
	assert_int_equal(s.fcs_capacity, 0);
	assert_int_equal(s.fcs_hits + s.fcs_misses + s.fcs_entries, 0);
}

/* ---- four threads, 32 files, a cache of 8 ---- */

#define MT_FILES 32
#define MT_FILES_MAX 400
#define MT_THREADS 4
#define MT_ITERS 1500

struct mt_arg {
	struct t_env *ma_env;
	struct t_fh *ma_fh;
	unsigned ma_nfiles;
	unsigned ma_seed;
	int ma_fails;
};

static uint32_t mt_call(struct t_call *c, struct rpcrdma_nfs3_export *exp)
{
	rpcrdma_xdr_init(&c->req.rq_args, c->args, c->alen);
	rpcrdma_xdr_init(&c->req.rq_res, c->res, T_RES_BYTES);
	if (rpcrdma_nfs3_dispatch(&c->req, exp) != RPCRDMA_SVC_SUCCESS)
		return UINT32_MAX;
	c->rlen = c->req.rq_res.xs_pos;
	c->rpos = 0;
	return c->rlen >= 4 ? r_u32(c) : UINT32_MAX;
}

static void *mt_worker(void *p)
{
	struct mt_arg *a = p;
	struct t_call c = { 0 };

	for (int i = 0; i < MT_ITERS; i++) {
		unsigned r = rand_r(&a->ma_seed);
		const struct t_fh *f = &a->ma_fh[r % a->ma_nfiles];
		uint32_t proc = (r >> 8) % 3 == 0 ? P_WRITE :
				(r >> 8) % 3 == 1 ? P_READ : P_GETATTR;
		uint32_t uid = 1000 + (r >> 12) % 2;

		t_begin(&c, proc, uid, uid);
		t_opaque(&c, f->fh, f->len);
		if (proc != P_GETATTR) {
			t_u64(&c, 0);
			t_u32(&c, 4);
		}
		if (proc == P_WRITE) {
			t_u32(&c, 0);
			t_opaque(&c, "abcd", 4);
		}
		if (mt_call(&c, a->ma_env->exp) != 0)
			a->ma_fails++;
	}
	fs_cred_restore();
	free(c.res);
	return NULL;
}

struct sweep_arg {
	struct rpcrdma_nfs3_export *sw_exp;
	atomic_bool sw_stop;
	atomic_uint sw_sweeps;
};

static void *sweeper(void *p)
{
	struct sweep_arg *a = p;

	while (!atomic_load(&a->sw_stop)) {
		assert_int_equal(rpcrdma_nfs3_export_expire(a->sw_exp), 0);
		a->sw_sweeps++;
		usleep(100);
	}
	return NULL;
}

/*
 * threads(): four threads calling at once on @nfiles files; with @sweep,
 * a fifth sweeps the caches (rpcrdma_nfs3_export_expire()) meanwhile.
 */
static struct rpcrdma_nfs3_fcache_stats threads_sweep(struct t_env *e, unsigned nfiles,
						      bool sweep)
{
	static struct t_fh fh[MT_FILES_MAX];
	struct mt_arg args[MT_THREADS];
	pthread_t th[MT_THREADS], sw;
	struct sweep_arg sa = { .sw_exp = e->exp };
	char name[16];

	for (unsigned i = 0; i < nfiles; i++) {
		snprintf(name, sizeof(name), "m%u", i);
		make_file(e, name, "....", 0666, 0, 0);
		lookup(e, name, &fh[i]);
	}
	for (int i = 0; i < MT_THREADS; i++) {
		args[i] = (struct mt_arg){ .ma_env = e, .ma_fh = fh, .ma_nfiles = nfiles,
					   .ma_seed = 17u * (unsigned)i + 1 };
		assert_int_equal(pthread_create(&th[i], NULL, mt_worker, &args[i]), 0);
	}
	if (sweep)
		assert_int_equal(pthread_create(&sw, NULL, sweeper, &sa), 0);
	for (int i = 0; i < MT_THREADS; i++) {
		assert_int_equal(pthread_join(th[i], NULL), 0);
		assert_int_equal(args[i].ma_fails, 0);
	}
	if (sweep) {
		/* a loaded host may not have run the sweeper twice while the
		 * callers ran: it must get there (not be stuck) within 10 s */
		for (unsigned i = 0; i < 10000 && atomic_load(&sa.sw_sweeps) < 2; i++)
			usleep(1000);
		atomic_store(&sa.sw_stop, true);
		assert_int_equal(pthread_join(sw, NULL), 0);
		assert_true(atomic_load(&sa.sw_sweeps) > 1);
	}
	return stats(e);
}

static struct rpcrdma_nfs3_fcache_stats threads(struct t_env *e, unsigned nfiles)
{
	return threads_sweep(e, nfiles, false);
}

static void test_threads(void **state)
{
	struct rpcrdma_nfs3_fcache_stats s = threads(*state, MT_FILES);

	assert_int_equal(s.fcs_hits + s.fcs_misses, MT_THREADS * MT_ITERS);
	assert_true(s.fcs_entries <= 8);
	assert_true(s.fcs_evictions > 0);
	assert_true(s.fcs_hits > 0);
}

/*
 * Four shards (300 entries), 400 files, four threads: shards take from
 * and give back to the one free list at once, and evict across shards;
 * the cache ends full, never above its capacity, every call served.
 */
static void test_threads_shards(void **state)
{
	struct rpcrdma_nfs3_fcache_stats s = threads(*state, MT_FILES_MAX);

	assert_int_equal(s.fcs_capacity, 300);
	assert_int_equal(s.fcs_hits + s.fcs_misses, MT_THREADS * MT_ITERS);
	/* full, but for entries evicted while a call held them in the last
	 * misses (freed at that call's put, taken by no later miss) */
	assert_true(s.fcs_entries <= 300 && s.fcs_entries >= 300 - MT_THREADS);
	assert_true(s.fcs_misses >= 400 && s.fcs_evictions > 0);
	assert_true(s.fcs_hits > 0);
}

/* expire - one idle sweep of the export's caches. */
static struct rpcrdma_nfs3_fcache_stats expire(struct t_env *e)
{
	assert_int_equal(rpcrdma_nfs3_export_expire(e->exp), 0);
	return stats(e);
}

/*
 * Descriptors this process has open (with the directory stream's own and
 * its "." and ".."): all of them for a NULL @path, else those open on
 * @path's unlinked file.
 */
static int proc_fds(const char *path)
{
	char want[PATH_MAX + 16], link[PATH_MAX + 16], fdp[300];
	struct dirent *d;
	DIR *dir = opendir("/proc/self/fd");
	int n = 0;

	assert_non_null(dir);
	if (path)
		snprintf(want, sizeof(want), "%s (deleted)", path);
	while ((d = readdir(dir))) {
		ssize_t l;

		if (!path) {
			n++;
			continue;
		}
		snprintf(fdp, sizeof(fdp), "/proc/self/fd/%s", d->d_name);
		l = readlink(fdp, link, sizeof(link) - 1);
		if (l < 0)
			continue;
		link[l] = '\0';
		n += !strcmp(link, want);
	}
	closedir(dir);
	return n;
}

static int open_fds(void)
{
	return proc_fds(NULL);
}

/*
 * Sweeps while four threads call (300 entries, 400 files): every call
 * served, sweeps close entries under the callers' feet without a leak:
 * two sweeps after the calls close everything, and the process is left
 * with the descriptors it had before the first call.
 */
static void test_threads_sweeping(void **state)
{
	struct t_env *e = *state;
	struct rpcrdma_nfs3_fcache_stats s;
	int fds = open_fds();

	s = threads_sweep(e, MT_FILES_MAX, true);
	assert_int_equal(s.fcs_hits + s.fcs_misses, MT_THREADS * MT_ITERS);
	assert_true(s.fcs_entries <= 300);
	assert_true(s.fcs_expired > 0);
	expire(e);
	s = expire(e);
	assert_int_equal(s.fcs_entries, 0);
	assert_int_equal(s.fcs_dir_entries, 0);
	assert_int_equal(open_fds(), fds);
}

/*
 * Idle sweeps: the first only starts the period; each later one closes
 * the entries no call used since the sweep before it, and nothing else.
 * A closed file's handle still works: the next call opens it again.
 */
static void test_idle_expire(void **state)
{
	struct t_env *e = *state;
	struct t_fh a, b;
	struct rpcrdma_nfs3_fcache_stats s;
	char buf[64];

	make_file(e, "a", "aaa", 0644, 0, 0);
	make_file(e, "b", "bbb", 0644, 0, 0);
	lookup(e, "a", &a);
	lookup(e, "b", &b);
	assert_int_equal(do_read(e, &a, 1000, buf, 32), 0);
	assert_int_equal(do_read(e, &b, 1000, buf, 32), 0);
	assert_int_equal(stats(e).fcs_entries, 2);

	s = expire(e);                        /* the period starts */
	assert_int_equal(s.fcs_entries, 2);
	assert_int_equal(s.fcs_expired, 0);
	assert_int_equal(do_read(e, &a, 1000, buf, 32), 0);
	s = expire(e);                        /* b was not used: closed */
	assert_int_equal(s.fcs_expired, 1);
	assert_int_equal(s.fcs_entries, 1);
	assert_int_equal(s.fcs_hits, 1);
	assert_int_equal(s.fcs_misses, 2);

	memset(buf, 0, sizeof(buf));          /* b opens again by its handle */
	assert_int_equal(do_read(e, &b, 1000, buf, 32), 0);
	assert_string_equal(buf, "bbb");
	s = stats(e);
	assert_int_equal(s.fcs_misses, 3);
	assert_int_equal(s.fcs_entries, 2);
	s = expire(e);                        /* now a is the idle one */
	assert_int_equal(s.fcs_expired, 2);
	assert_int_equal(s.fcs_entries, 1);
	assert_int_equal(do_read(e, &a, 1000, buf, 32), 0);
	s = stats(e);
	assert_int_equal(s.fcs_misses, 4);    /* a was closed */
	assert_int_equal(s.fcs_hits, 1);
	s = expire(e);                        /* then b again */
	assert_int_equal(s.fcs_expired, 3);
	assert_int_equal(s.fcs_entries, 1);
	use_cached(e, &a);
	if (!t_memory()) /* a READ's descriptor */
		assert_int_equal(cached_mode(e, &a, O_RDONLY), O_RDONLY);
	s = expire(e);                        /* use_cached() used a */
	assert_int_equal(s.fcs_expired, 3);
	s = expire(e);
	assert_int_equal(s.fcs_expired, 4);
	assert_int_equal(s.fcs_entries, 0);
	s = expire(e);                        /* nothing left to close */
	assert_int_equal(s.fcs_expired, 4);
}

/* Descriptors of this process open on @path's unlinked file. */
static int deleted_fds(const char *path)
{
	return proc_fds(path);
}

/*
 * A cached file unlinked on the server keeps its space while the cache
 * holds it open (test_unlink_local); two sweeps without a call close it,
 * so the space comes back without any NFS call.
 */
static void test_idle_unlink_space(void **state)
{
	struct t_env *e = *state;
	struct t_fh f;
	char p[PATH_MAX], buf[64];

	make_file(e, "big", "contents", 0666, 0, 0);
	lookup(e, "big", &f);
	assert_int_equal(do_read(e, &f, 1000, buf, 32), 0);
	assert_int_equal(do_write(e, &f, 1000, 8, "more"), 0);
	path_of(e, "big", p);
	assert_int_equal(unlink(p), 0);
	/* the O_PATH, read and write descriptors */
	assert_int_equal(deleted_fds(p), 3);
	expire(e);
	assert_int_equal(deleted_fds(p), 3);
	expire(e);
	assert_int_equal(deleted_fds(p), 0);
	assert_int_equal(stats(e).fcs_entries, 0);
	assert_int_equal(do_getattr(e, &f, NULL), S_STALE);
}

/*
 * An entry a call holds is in use, not idle: sweeps leave it (knfsd does
 * not close a file in use), and it expires two sweeps after the call's
 * put; directories expire as files do.
 */
static void test_idle_held_and_dirs(void **state)
{
	struct t_env *e = *state;
	struct fs_fentry local, *fe;
	struct rpcrdma_nfs3_fcache_stats s;
	struct t_fh f;
	char p[PATH_MAX], buf[64];

	path_of(e, "held", p);
	make_file(e, "held", "x", 0644, 0, 0);
	lookup(e, "held", &f);     /* the root directory enters its cache */
	assert_int_equal(do_read(e, &f, 1000, buf, 32), 0);
	assert_int_equal(stats(e).fcs_dir_entries, 1);
	assert_int_equal(fs_fcache_get(e->exp, f.fh, f.len, &local, &fe, NULL), 0);
	assert_non_null(fe->fe_shard);
	assert_int_equal(t_fs_unlink(e->exp, e->dir, "held"), 0);
	for (int i = 0; i < 3; i++)
		s = expire(e);
	assert_int_equal(s.fcs_expired, 0);
	assert_int_equal(s.fcs_entries, 1);
	assert_int_equal(s.fcs_dir_expired, 1); /* nobody held the directory */
	assert_int_equal(s.fcs_dir_entries, 0);
	if (!t_memory()) /* posix: the O_PATH and O_RDONLY descriptors */
		assert_int_equal(deleted_fds(p), 2);
	fs_fcache_put(fe);
	s = expire(e);              /* the last sweep saw it in use */
	assert_int_equal(s.fcs_entries, 1);
	s = expire(e);
	assert_int_equal(s.fcs_expired, 1);
	assert_int_equal(s.fcs_entries, 0);
	if (!t_memory())
		assert_int_equal(deleted_fds(p), 0);
	/* closed: the unlinked file is gone */
	assert_int_equal(do_getattr(e, &f, NULL), S_STALE);
}

/*
 * posix only: the posix backend's descriptors (which access modes the
 * entry holds, descriptors left open on an unlinked file).
 */
static const struct t_case cases[] = {
	T_CASE(test_lru_eviction, setup_four, env_teardown, T_ANY),
	T_CASE(test_capacity_cache_wide, setup_default, env_teardown, T_ANY),
	T_CASE(test_full_cache_empty_shard, setup_default, env_teardown, T_ANY),
	T_CASE(test_new_working_set, setup_default, env_teardown, T_ANY),
	T_CASE(test_hit_reuses_descriptor, setup_default, env_teardown, T_POSIX_ONLY),
	T_CASE(test_unlink_local, setup_default, env_teardown, T_ANY),
	T_CASE(test_remove_forgets, setup_default, env_teardown, T_ANY),
	T_CASE(test_rename, setup_default, env_teardown, T_ANY),
	T_CASE(test_lookup_cached, setup_default, env_teardown, T_ANY),
	T_CASE(test_never_widen, setup_default, env_teardown, T_POSIX_ONLY),
	T_CASE(test_permission_recheck, setup_default, env_teardown, T_ANY),
	T_CASE(test_groups_recheck, setup_default, env_teardown, T_ANY),
	T_CASE(test_grant_recheck, setup_default, env_teardown, T_POSIX_ONLY),
	T_CASE(test_owner_override_kept, setup_default, env_teardown, T_ANY),
	T_CASE(test_verifier_restart, setup_default, env_teardown, T_ANY),
	T_CASE(test_cache_off, setup_off, env_teardown, T_ANY),
	T_CASE(test_threads, setup_eight, env_teardown, T_ANY),
	T_CASE(test_threads_shards, setup_300, env_teardown, T_ANY),
	T_CASE(test_idle_expire, setup_default, env_teardown, T_ANY),
	T_CASE(test_idle_unlink_space, setup_default, env_teardown, T_POSIX_ONLY),
	T_CASE(test_idle_held_and_dirs, setup_default, env_teardown, T_ANY),
	T_CASE(test_threads_sweeping, setup_300, env_teardown, T_ANY),
};

/* the cache on backend @be, exports under @base */
static int run_on(enum t_be be, const char *base)
{
	char name[64];

	g_base = base;
	snprintf(name, sizeof(name), "fs_fcache on %s", base);
	return t_run_cases(be, name, cases, T_NCASES(cases), NULL, NULL);
}

int main(void)
{
	const char *tmp = getenv("TMPDIR");
	struct statfs sf;
	int fails = 0;

	if (statfs("/dev/shm", &sf) == 0 && sf.f_type == 0x01021994) /* TMPFS_MAGIC */
		fails += run_on(T_BE_POSIX, "/dev/shm");
	fails += run_on(T_BE_POSIX, tmp && *tmp ? tmp : "/tmp");
	fails += run_on(T_BE_MEMORY, "/mem");
	return t_exit(fails);
}
