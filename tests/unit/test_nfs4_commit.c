// SPDX-License-Identifier: MIT
/*
 * test_nfs4_commit.c - commit_metadata for NFSv4.1 (src/fs/fs_commit.c
 * through src/nfs4): on a sync export entry on a disk, OPEN that creates
 * a file and CREATE, REMOVE, RENAME (both directories when they differ,
 * else one) and LINK fsync the directory they changed before the reply,
 * exactly once each, OPEN and CREATE the new regular file or directory
 * before it (knfsd commits child, then parent); SETATTR, and OPEN that truncates an existing file,
 * fsync the object; nothing for an operation that failed or changed
 * nothing, for an async entry or a file system in memory; a failed fsync
 * is the operation's error (NFS4ERR_IO, as knfsd answers).  WRITE with
 * DATA_SYNC4 is written with RWF_DSYNC and answered DATA_SYNC4 (RFC 8881
 * 18.32.3: FILE_SYNC4 would claim the attributes too), FILE_SYNC4 with
 * RWF_SYNC, UNSTABLE4 left alone, and COMMIT fsyncs, on sync and async
 * entries alike.
 *
 * The syncs go through the hooks fs_commit_fsync / fs_commit_fdatasync
 * / fs_commit_pwritev2 (its RWF_SYNC counted as an fsync, RWF_DSYNC as
 * an fdatasync), which record the inode of each descriptor they are given (fstat): every
 * check compares it with lstat() of the path, not only how many calls were
 * made.
 *
 * The syncs and their hooks are the posix backend's own mechanics: those
 * cases run on posix only.  On the memory backend, which waits for no
 * disk, the same operations on a sync entry make no sync at all and
 * count no commit, and WRITE answers the level asked
 * (test_async_commits_nothing on its sync entry, test_memory_data_stable).
 */
#include <limits.h>
#include <sys/uio.h>

#include "test_nfs4_harness.h"

#define SYNCS_KEPT 16

/* what the hooks saw */
static unsigned g_syncs;
static struct {
	bool data_only; /* fdatasync */
	ino_t ino;
} g_sync[SYNCS_KEPT];
static int g_fail; /* errno to fail with, 0: sync for real */

static int record(int fd, bool data_only)
{
	struct stat st;

	assert_int_equal(fstat(fd, &st), 0);
	assert_true(S_ISDIR(st.st_mode) || S_ISREG(st.st_mode));
	if (g_syncs < SYNCS_KEPT) {
		g_sync[g_syncs].data_only = data_only;
		g_sync[g_syncs].ino = st.st_ino;
	}
	g_syncs++;
	if (g_fail) {
		errno = g_fail;
		return -1;
	}
	return data_only ? fdatasync(fd) : fsync(fd);
}

static int record_fsync(int fd)
{
	return record(fd, false);
}

static int record_fdatasync(int fd)
{
	return record(fd, true);
}

/* a WRITE's stable write: RWF_SYNC counts as an fsync, RWF_DSYNC as an
 * fdatasync (fs_write_data() syncs in the write itself) */
static ssize_t record_pwritev2(int fd, const struct iovec *iov, int cnt,
			       off_t off, int flags)
{
	if (flags & (RWF_SYNC | RWF_DSYNC)) {
		struct stat st;

		assert_int_equal(fstat(fd, &st), 0);
		assert_true(S_ISREG(st.st_mode));
		if (g_syncs < SYNCS_KEPT) {
			g_sync[g_syncs].data_only = !(flags & RWF_SYNC);
			g_sync[g_syncs].ino = st.st_ino;
		}
		g_syncs++;
		if (g_fail) {
			errno = g_fail;
			return -1;
		}
	}
	return pwritev2(fd, iov, cnt, off, flags);
}

/* the export the server serves (its first and only entry) */
static struct rpcrdma_nfs3_export *export_of(struct env *e)
{
	struct fs_snap *sn = fs_snap_get(e->srv3);
	struct rpcrdma_nfs3_export *exp = sn->sn_exp[0];

	fs_snap_put(sn); /* the server keeps it */
	return exp;
}

static int setup_opts(void **state, const char *opts)
{
	struct env *e;

	if (t4_setup(state, opts))
		return -1;
	e = *state;
	if (!e)
		return 0; /* posix, not root: skipped */
	/* posix: a disk, whatever /tmp is (test_memory_fs_commits_nothing) */
	if (!e->mem)
		export_of(e)->ex_mem_fs = false;
	fs_commit_fsync = record_fsync;
	fs_commit_fdatasync = record_fdatasync;
	fs_commit_pwritev2 = record_pwritev2;
	g_syncs = 0;
	g_fail = 0;
	session(e);
	return 0;
}

static int setup_sync(void **state)
{
	return setup_opts(state, "rw,no_root_squash,fsid=7");
}

static int setup_async(void **state)
{
	return setup_opts(state, "rw,no_root_squash,async,fsid=7");
}

static int teardown(void **state)
{
	fs_commit_fsync = fsync;
	fs_commit_fdatasync = fdatasync;
	fs_commit_pwritev2 = pwritev2;
	return t4_teardown(state);
}

static ino_t ino_of(struct env *e, const char *rel)
{
	struct stat st;

	assert_int_equal(t4_stat(e, rel, &st), 0);
	return st.st_ino;
}

/* the i-th sync was an fsync of @ino */
static void synced(unsigned i, ino_t ino)
{
	assert_true(i < SYNCS_KEPT && i < g_syncs);
	assert_false(g_sync[i].data_only);
	assert_true(g_sync[i].ino == ino);
}

/* ---- COMPOUNDs: SEQUENCE, PUTFH, then @nops operations ---- */

static void at_fh(struct env *e, const uint8_t *fh, uint32_t len, uint32_t nops)
{
	c_begin(e, 1, 2 + nops);
	c_sequence(e, e->seq++, 0);
	t_u32(&e->c, OP_PUTFH);
	t_opaque(&e->c, fh, len);
}

/* run it; the cursor at the first operation after PUTFH */
static void run_at_fh(struct env *e)
{
	uint32_t n;

	assert_int_equal(c_run(e), RPCRDMA_SVC_SUCCESS);
	(void)r_hdr(&e->c, &n);
	assert_int_equal(r_op(&e->c, OP_SEQUENCE), NFS4_OK);
	r_skip(&e->c, 36);
	assert_int_equal(r_op(&e->c, OP_PUTFH), NFS4_OK);
}

/* an empty fattr4: no attributes */
static void no_attrs(struct t_call *c)
{
	t_u32(c, 0);
	t_u32(c, 0);
}

/* a fattr4 with the size (word 0 bit 4) */
static void size_attr(struct t_call *c, uint64_t size)
{
	t_u32(c, 1);
	t_u32(c, 1u << FATTR4_SIZE);
	t_u32(c, 8);
	t_u64(c, size);
}

/* a fattr4 with the mode (bit 33: word 1 bit 1) */
static void mode_attr(struct t_call *c, uint32_t mode)
{
	t_u32(c, 2);
	t_u32(c, 0);
	t_u32(c, 1u << (FATTR4_MODE - 32));
	t_u32(c, 4);
	t_u32(c, mode);
}

static const uint8_t anon_stateid[16];

/*
 * c_open_create - OPEN with create (UNCHECKED4) of @name in directory
 * @dir, read-write, with a size to set when @size is not UINT64_MAX:
 * OPEN's status.
 */
static uint32_t c_open_create(struct env *e, const uint8_t *dir, uint32_t dlen,
			      const char *name, uint64_t size)
{
	struct t_call *c = &e->c;

	at_fh(e, dir, dlen, 1);
	t_u32(c, OP_OPEN);
	t_u32(c, 0);
	t_u32(c, OPEN4_SHARE_ACCESS_BOTH);
	t_u32(c, 0);
	t_u64(c, e->clientid);
	t_str(c, "commit-owner");
	t_u32(c, OPEN4_CREATE);
	t_u32(c, UNCHECKED4);
	if (size == UINT64_MAX)
		no_attrs(c);
	else
		size_attr(c, size);
	t_u32(c, CLAIM_NULL);
	t_str(c, name);
	run_at_fh(e);
	return r_op(c, OP_OPEN);
}

/* c_create - CREATE of @type (@target for a symlink) @name in @dir */
static uint32_t c_create(struct env *e, const uint8_t *dir, uint32_t dlen,
			 uint32_t type, const char *name, const char *target)
{
	struct t_call *c = &e->c;

	at_fh(e, dir, dlen, 1);
	t_u32(c, OP_CREATE);
	t_u32(c, type);
	if (type == NF4LNK)
		t_str(c, target);
	t_str(c, name);
	no_attrs(c);
	run_at_fh(e);
	return r_op(c, OP_CREATE);
}

static uint32_t c_remove(struct env *e, const uint8_t *dir, uint32_t dlen,
			 const char *name)
{
	at_fh(e, dir, dlen, 1);
	t_u32(&e->c, OP_REMOVE);
	t_str(&e->c, name);
	run_at_fh(e);
	return r_op(&e->c, OP_REMOVE);
}

/* c_two_fh - PUTFH @a, SAVEFH, PUTFH @b, then @op with @n1 (and @n2) */
static uint32_t c_two_fh(struct env *e, const uint8_t *a, uint32_t alen,
			 const uint8_t *b, uint32_t blen, uint32_t op,
			 const char *n1, const char *n2)
{
	struct t_call *c = &e->c;

	at_fh(e, a, alen, 3);
	t_u32(c, OP_SAVEFH);
	t_u32(c, OP_PUTFH);
	t_opaque(c, b, blen);
	t_u32(c, op);
	t_str(c, n1);
	if (n2)
		t_str(c, n2);
	run_at_fh(e);
	assert_int_equal(r_op(c, OP_SAVEFH), NFS4_OK);
	assert_int_equal(r_op(c, OP_PUTFH), NFS4_OK);
	return r_op(c, op);
}


/* c_setattr - SETATTR of @fh (anonymous stateid): @attrs encodes the fattr4 */
static uint32_t c_setattr(struct env *e, const uint8_t *fh, uint32_t len,
			  void (*attrs)(struct t_call *c, uint64_t v), uint64_t v)
{
	at_fh(e, fh, len, 1);
	t_u32(&e->c, OP_SETATTR);
	c_fixed(&e->c, anon_stateid, 16);
	attrs(&e->c, v);
	run_at_fh(e);
	return r_op(&e->c, OP_SETATTR);
}

static void set_mode(struct t_call *c, uint64_t v)
{
	mode_attr(c, (uint32_t)v);
}

static void set_size(struct t_call *c, uint64_t v)
{
	size_attr(c, v);
}

static void set_nothing(struct t_call *c, uint64_t v)
{
	(void)v;
	no_attrs(c);
}

/* c_write - WRITE "data" at 0 with @stable (anonymous stateid): its
 * status; *@committed and @verf from the result on NFS4_OK */
static uint32_t c_write(struct env *e, const uint8_t *fh, uint32_t len,
			uint32_t stable, uint32_t *committed, uint8_t verf[8])
{
	uint32_t status;

	at_fh(e, fh, len, 1);
	t_u32(&e->c, OP_WRITE);
	c_fixed(&e->c, anon_stateid, 16);
	t_u64(&e->c, 0);
	t_u32(&e->c, stable);
	t_str(&e->c, "data");
	run_at_fh(e);
	status = r_op(&e->c, OP_WRITE);
	if (status == NFS4_OK) {
		assert_int_equal(r_u32(&e->c), 4);
		*committed = r_u32(&e->c);
		memcpy(verf, e->c.res + e->c.rpos, 8);
	}
	return status;
}

/* c_commit - COMMIT of the whole file: its status, @verf on NFS4_OK */
static uint32_t c_commit(struct env *e, const uint8_t *fh, uint32_t len,
			 uint8_t verf[8])
{
	uint32_t status;

	at_fh(e, fh, len, 1);
	t_u32(&e->c, OP_COMMIT);
	t_u64(&e->c, 0);
	t_u32(&e->c, 0);
	run_at_fh(e);
	status = r_op(&e->c, OP_COMMIT);
	if (status == NFS4_OK)
		memcpy(verf, e->c.res + e->c.rpos, 8);
	return status;
}

/* directories committed, as the server counts them (rpcrdma-nfsd's
 * "N committed" at exit) */
static uint64_t commits(struct env *e)
{
	struct rpcrdma_nfs3_fcache_stats s;

	assert_int_equal(rpcrdma_nfs3_server_fcache_stats(e->srv3, &s), 0);
	return s.fcs_dir_commits;
}

/* Each namespace operation: one fsync per directory it changed. */
static void test_namespace_ops_commit_their_directory(void **state)
{
	struct env *e = t4_env(state);
	uint8_t root[128], d[128], n[128];
	uint32_t rootlen, dlen, nlen;
	ino_t r = ino_of(e, ".");

	t4_fh_of(e, "", root, &rootlen);
	/* OPEN that creates: the new file, then its directory (knfsd's
	 * nfsd_create_setattr(): child, then parent) */
	assert_int_equal(c_open_create(e, root, rootlen, "n", UINT64_MAX), NFS4_OK);
	assert_int_equal(g_syncs, 2);
	synced(0, ino_of(e, "n"));
	synced(1, r);
	/* opened again: it exists, nothing changed, nothing committed */
	assert_int_equal(c_open_create(e, root, rootlen, "n", UINT64_MAX), NFS4_OK);
	assert_int_equal(g_syncs, 2);

	/* CREATE of a directory: the new one, then its parent */
	assert_int_equal(c_create(e, root, rootlen, NF4DIR, "d", NULL), NFS4_OK);
	assert_int_equal(g_syncs, 4);
	synced(2, ino_of(e, "d"));
	synced(3, r);
	/* a symlink has nothing to sync: its directory only */
	assert_int_equal(c_create(e, root, rootlen, NF4LNK, "s", "n"), NFS4_OK);
	assert_int_equal(g_syncs, 5);
	synced(4, r);
	/* a FIFO in d: d is committed */
	t4_fh_of(e, "d", d, &dlen);
	assert_int_equal(c_create(e, d, dlen, NF4FIFO, "p", NULL), NFS4_OK);
	assert_int_equal(g_syncs, 6);
	synced(5, ino_of(e, "d"));

	/* LINK n into d as n2: d changed */
	t4_fh_of(e, "n", n, &nlen);
	assert_int_equal(c_two_fh(e, n, nlen, d, dlen, OP_LINK, "n2", NULL), NFS4_OK);
	assert_int_equal(g_syncs, 7);
	synced(6, ino_of(e, "d"));
	assert_true(ino_of(e, "d/n2") == ino_of(e, "n"));

	/* RENAME within the root: one directory, one fsync */
	assert_int_equal(c_two_fh(e, root, rootlen, root, rootlen, OP_RENAME, "s", "s2"),
			 NFS4_OK);
	assert_int_equal(g_syncs, 8);
	synced(7, r);
	/* RENAME from the root into d: both, the source first */
	assert_int_equal(c_two_fh(e, root, rootlen, d, dlen, OP_RENAME, "s2", "s3"),
			 NFS4_OK);
	assert_int_equal(g_syncs, 10);
	synced(8, r);
	synced(9, ino_of(e, "d"));

	assert_int_equal(c_remove(e, d, dlen, "s3"), NFS4_OK);
	assert_int_equal(g_syncs, 11);
	synced(10, ino_of(e, "d"));
	assert_int_equal(c_remove(e, d, dlen, "p"), NFS4_OK);
	assert_int_equal(c_remove(e, d, dlen, "n2"), NFS4_OK);
	assert_int_equal(g_syncs, 13);
	synced(11, ino_of(e, "d"));
	synced(12, ino_of(e, "d"));
	/* RMDIR is REMOVE of a directory: its parent */
	assert_int_equal(c_remove(e, root, rootlen, "d"), NFS4_OK);
	assert_int_equal(g_syncs, 14);
	synced(13, r);
	/* every one counted by the server */
	assert_int_equal(commits(e), 14);
}

/* Operations that fail changed nothing: nothing to commit. */
static void test_failures_commit_nothing(void **state)
{
	struct env *e = t4_env(state);
	uint8_t root[128], f[128];
	uint32_t rootlen, flen;

	t4_fh_of(e, "", root, &rootlen);
	t4_fh_of(e, "f", f, &flen);
	assert_int_equal(c_remove(e, root, rootlen, "missing"), NFS4ERR_NOENT);
	assert_int_equal(c_create(e, root, rootlen, NF4DIR, "f", NULL), NFS4ERR_EXIST);
	assert_int_equal(c_two_fh(e, root, rootlen, root, rootlen, OP_RENAME, "nope", "x"),
			 NFS4ERR_NOENT);
	assert_int_equal(c_two_fh(e, f, flen, root, rootlen, OP_LINK, "f", NULL),
			 NFS4ERR_EXIST);
	/* a size for the export's root directory */
	assert_int_equal(c_setattr(e, root, rootlen, set_size, 0), NFS4ERR_ISDIR);
	assert_int_equal(g_syncs, 0);
	assert_int_equal(commits(e), 0);
}

/*
 * SETATTR commits the object it changed: a regular file (mode, size), a
 * directory; a symbolic link has no descriptor to sync.  OPEN truncating
 * an existing file commits the file.
 */
static void test_setattr_and_truncate_commit_the_object(void **state)
{
	struct env *e = t4_env(state);
	uint8_t root[128], f[128], d[128], l[128];
	uint32_t rootlen, flen, dlen, llen;
	char p[PATH_MAX];
	struct stat st;

	t4_fh_of(e, "", root, &rootlen);
	t4_fh_of(e, "f", f, &flen);
	assert_int_equal(c_setattr(e, f, flen, set_mode, 0600), NFS4_OK);
	assert_int_equal(g_syncs, 1);
	synced(0, ino_of(e, "f"));
	assert_int_equal(c_setattr(e, f, flen, set_size, 2), NFS4_OK);
	assert_int_equal(g_syncs, 2);
	synced(1, ino_of(e, "f"));
	snprintf(p, sizeof(p), "%s/f", e->dir);
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(st.st_size, 2);
	assert_int_equal(st.st_mode & 07777, 0600);

	snprintf(p, sizeof(p), "%s/d", e->dir);
	assert_int_equal(mkdir(p, 0755), 0);
	t4_fh_of(e, "d", d, &dlen);
	assert_int_equal(c_setattr(e, d, dlen, set_mode, 0700), NFS4_OK);
	assert_int_equal(g_syncs, 3);
	synced(2, ino_of(e, "d"));

	snprintf(p, sizeof(p), "%s/l", e->dir);
	assert_int_equal(symlink("f", p), 0);
	t4_fh_of(e, "l", l, &llen);
	assert_int_equal(c_setattr(e, l, llen, set_nothing, 0), NFS4_OK);
	assert_int_equal(g_syncs, 3);

	/* OPEN of the existing f with size 0: the file is committed */
	assert_int_equal(c_open_create(e, root, rootlen, "f", 0), NFS4_OK);
	assert_int_equal(g_syncs, 4);
	synced(3, ino_of(e, "f"));
	snprintf(p, sizeof(p), "%s/f", e->dir);
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(st.st_size, 0);
	assert_int_equal(commits(e), 4);
}

/* An async entry, and a file system in memory: never. */
static void test_async_commits_nothing(void **state)
{
	struct env *e = t4_env(state);
	uint8_t root[128], f[128];
	uint32_t rootlen, flen;

	t4_fh_of(e, "", root, &rootlen);
	t4_fh_of(e, "f", f, &flen);
	assert_int_equal(c_open_create(e, root, rootlen, "n", UINT64_MAX), NFS4_OK);
	assert_int_equal(c_open_create(e, root, rootlen, "f", 0), NFS4_OK);
	assert_int_equal(c_create(e, root, rootlen, NF4DIR, "d", NULL), NFS4_OK);
	assert_int_equal(c_two_fh(e, root, rootlen, root, rootlen, OP_RENAME, "n", "n2"),
			 NFS4_OK);
	assert_int_equal(c_two_fh(e, f, flen, root, rootlen, OP_LINK, "f2", NULL), NFS4_OK);
	assert_int_equal(c_setattr(e, f, flen, set_mode, 0600), NFS4_OK);
	assert_int_equal(c_remove(e, root, rootlen, "n2"), NFS4_OK);
	assert_int_equal(g_syncs, 0);
	assert_int_equal(commits(e), 0);
}

static void test_memory_fs_commits_nothing(void **state)
{
	struct env *e = t4_env(state);
	uint8_t root[128];
	uint32_t rootlen;

	t4_fh_of(e, "", root, &rootlen);
	export_of(e)->ex_mem_fs = true;
	assert_int_equal(c_create(e, root, rootlen, NF4DIR, "d", NULL), NFS4_OK);
	assert_int_equal(c_remove(e, root, rootlen, "d"), NFS4_OK);
	assert_int_equal(g_syncs, 0);
	export_of(e)->ex_mem_fs = false;
	assert_int_equal(c_create(e, root, rootlen, NF4DIR, "d", NULL), NFS4_OK);
	assert_int_equal(g_syncs, 2); /* the new directory, its parent */
}

/* fsync fails: the operation answers NFS4ERR_IO (the change was made). */
static void test_fsync_error_is_the_answer(void **state)
{
	struct env *e = t4_env(state);
	uint8_t root[128], f[128];
	uint32_t rootlen, flen;

	t4_fh_of(e, "", root, &rootlen);
	t4_fh_of(e, "f", f, &flen);
	g_fail = EIO;
	assert_int_equal(c_create(e, root, rootlen, NF4DIR, "d", NULL), NFS4ERR_IO);
	ino_of(e, "d");
	assert_int_equal(c_open_create(e, root, rootlen, "n", UINT64_MAX), NFS4ERR_IO);
	ino_of(e, "n");
	assert_int_equal(c_remove(e, root, rootlen, "n"), NFS4ERR_IO);
	assert_int_equal(c_setattr(e, f, flen, set_mode, 0600), NFS4ERR_IO);
	assert_int_equal(g_syncs, 4);
}

/*
 * WRITE is as stable as asked and says so; COMMIT fsyncs the file; on a
 * sync and an async entry alike (async is about metadata).  Data syncs
 * are not metadata commits (the server's count stays 0).
 */
static void test_write_and_commit_sync_data(void **state)
{
	struct env *e = t4_env(state);
	uint8_t f[128], verf[8], verf2[8];
	uint32_t flen, committed;
	ino_t ino = ino_of(e, "f");

	t4_fh_of(e, "f", f, &flen);
	assert_int_equal(c_write(e, f, flen, UNSTABLE4, &committed, verf), NFS4_OK);
	assert_int_equal(committed, UNSTABLE4);
	assert_int_equal(g_syncs, 0);
	assert_int_equal(c_write(e, f, flen, DATA_SYNC4, &committed, verf), NFS4_OK);
	assert_int_equal(committed, DATA_SYNC4);
	assert_int_equal(g_syncs, 1);
	assert_true(g_sync[0].data_only);
	assert_true(g_sync[0].ino == ino);
	assert_int_equal(c_write(e, f, flen, FILE_SYNC4, &committed, verf), NFS4_OK);
	assert_int_equal(committed, FILE_SYNC4);
	assert_int_equal(g_syncs, 2);
	synced(1, ino);
	assert_int_equal(c_commit(e, f, flen, verf2), NFS4_OK);
	assert_int_equal(g_syncs, 3);
	synced(2, ino);
	assert_memory_equal(verf, verf2, 8);
	assert_int_equal(commits(e), 0);

	g_fail = EIO;
	assert_int_equal(c_write(e, f, flen, FILE_SYNC4, &committed, verf), NFS4ERR_IO);
	assert_int_equal(c_write(e, f, flen, DATA_SYNC4, &committed, verf), NFS4ERR_IO);
	assert_int_equal(c_commit(e, f, flen, verf2), NFS4ERR_IO);
	assert_int_equal(g_syncs, 6);
}

/*
 * memory: WRITE answers the stability asked (nothing there waits for a
 * disk, all is as stable as it gets), COMMIT answers the same verifier,
 * and neither syncs through the hooks or counts a commit.
 */
static void test_memory_data_stable(void **state)
{
	struct env *e = t4_env(state);
	static const uint32_t how[] = { UNSTABLE4, DATA_SYNC4, FILE_SYNC4 };
	uint8_t f[128], verf[8], verf2[8];
	uint32_t flen, committed;

	t4_fh_of(e, "f", f, &flen);
	for (unsigned i = 0; i < 3; i++) {
		assert_int_equal(c_write(e, f, flen, how[i], &committed, verf), NFS4_OK);
		assert_int_equal(committed, how[i]);
	}
	assert_int_equal(c_commit(e, f, flen, verf2), NFS4_OK);
	assert_memory_equal(verf, verf2, 8);
	assert_int_equal(g_syncs, 0);
	assert_int_equal(commits(e), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		/* posix: its fsyncs, seen through the hooks */
		T4_CASE(test_namespace_ops_commit_their_directory, setup_sync, teardown, posix),
		T4_CASE(test_failures_commit_nothing, setup_sync, teardown, posix),
		T4_CASE(test_setattr_and_truncate_commit_the_object, setup_sync, teardown,
			posix),
		T4_BOTH(test_async_commits_nothing, setup_async, teardown),
		/* memory: a sync entry commits nothing either */
		T4_CASE(test_async_commits_nothing, setup_sync, teardown, memory),
		T4_CASE(test_memory_fs_commits_nothing, setup_sync, teardown, posix),
		T4_CASE(test_fsync_error_is_the_answer, setup_sync, teardown, posix),
		T4_CASE(test_write_and_commit_sync_data, setup_sync, teardown, posix),
		T4_CASE(test_write_and_commit_sync_data, setup_async, teardown, posix),
		T4_CASE(test_memory_data_stable, setup_sync, teardown, memory),
	};

	return t_exit(cmocka_run_group_tests_name("nfs4 commit_metadata", tests, NULL, NULL));
}
