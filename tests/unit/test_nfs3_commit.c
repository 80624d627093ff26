// SPDX-License-Identifier: MIT
/*
 * test_nfs3_commit.c - commit_metadata (src/fs/fs_commit.c): after a
 * successful CREATE, MKDIR, SYMLINK, MKNOD, REMOVE, RMDIR, RENAME or LINK
 * on a sync export entry the directory (each of RENAME's two) is fsynced
 * before the reply, exactly once, a new regular file or directory (CREATE,
 * MKDIR) before it, as knfsd commits child then parent, and after SETATTR
 * its file or directory; nothing for a failed call, an async
 * entry or a file system in memory; a failed fsync is the call's error
 * (NFS3ERR_IO, as knfsd answers); a caller who may write a directory but
 * not read it is committed all the same; and these calls are never served
 * on the transport thread of a sync export on a disk.
 *
 * WRITE's data (fs_write_data()): one pwritev2 with RWF_SYNC or
 * RWF_DSYNC for a stable write, a plain write and an fsync where the file
 * system refuses the flag, short on a later error.
 *
 * The fsync goes through the test hook fs_commit_fsync, which records
 * the inode of each descriptor it is given (fstat), so every test checks
 * which directory was committed against lstat() of the path, not only how
 * many calls were made.
 *
 * All of that is the posix backend's (as root: file handles); the memory
 * backend has no disk: a sync export on it commits nothing and never
 * calls the hook (test_memory_commits_nothing).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "test_nfs3_harness.h"

#include "nfs3/nfs3_internal.h"
#include "fs/fs_posix.h"

#define P_LOOKUP 3
#define P_CREATE 8
#define P_MKDIR 9
#define P_SYMLINK 10
#define P_MKNOD 11
#define P_REMOVE 12
#define P_RMDIR 13
#define P_RENAME 14
#define P_LINK 15
#define P_GETATTR 1
#define P_SETATTR 2
#define S_IO 5

struct t_env {
	char dir[256];
	struct rpcrdma_nfs3_export *exp;         /* root squashed */
	struct rpcrdma_nfs3_export *exp_nosquash;
	uint8_t root[64];
	uint32_t rootlen;
	struct t_call c;
};

/* what the hook saw */
static unsigned g_syncs;
static ino_t g_ino[8];
static int g_fail; /* errno to fail with, 0: sync for real */

static int record_fsync(int fd)
{
	struct stat st;

	assert_int_equal(fstat(fd, &st), 0);
	assert_true(S_ISDIR(st.st_mode) || S_ISREG(st.st_mode));
	if (g_syncs < 8)
		g_ino[g_syncs] = st.st_ino;
	g_syncs++;
	if (g_fail) {
		errno = g_fail;
		return -1;
	}
	return fsync(fd);
}

static const char *g_base;

static int env_setup(void **state)
{
	struct t_env *e = calloc(1, sizeof(*e));

	if (!e || t_export_dir(e->dir, sizeof(e->dir), g_base, "nfs3commit", 9,
			       &e->exp, &e->exp_nosquash))
		return -1;
	if (rpcrdma_nfs3_root_fh(e->exp, e->root, &e->rootlen))
		return -1;
	/* posix: a disk, whatever the test directory is on (tmpfs commits
	 * nothing: test_async_and_memory_fs_commit_nothing) */
	if (!t_memory())
		e->exp->ex_mem_fs = e->exp_nosquash->ex_mem_fs = false;
	fs_commit_fsync = record_fsync;
	g_syncs = 0;
	g_fail = 0;
	*state = e;
	return 0;
}

static int env_teardown(void **state)
{
	struct t_env *e = *state;

	fs_commit_fsync = fsync;
	fs_commit_pwritev2 = pwritev2;
	rpcrdma_nfs3_export_close(e->exp);
	rpcrdma_nfs3_export_close(e->exp_nosquash);
	t_fs_remove_tree(e->dir);
	t_free(&e->c);
	free(e);
	return 0;
}

static ino_t ino_of(struct t_env *e, const char *name)
{
	char p[PATH_MAX];
	struct stat st;

	snprintf(p, sizeof(p), "%s/%s", e->dir, name);
	assert_int_equal(lstat(p, &st), 0);
	return st.st_ino;
}

static void begin(struct t_env *e, uint32_t proc, uint32_t uid)
{
	t_begin(&e->c, proc, uid, uid);
}

static void diropargs(struct t_env *e, const uint8_t *fh, uint32_t len,
		      const char *name)
{
	t_opaque(&e->c, fh, len);
	t_str(&e->c, name);
}

/* run on @exp; the nfsstat3 */
static uint32_t run(struct t_env *e, struct rpcrdma_nfs3_export *exp)
{
	assert_int_equal(t_run(&e->c, exp), RPCRDMA_SVC_SUCCESS);
	return r_u32(&e->c);
}

/* LOOKUP @name in @dir: its handle */
static void lookup(struct t_env *e, const uint8_t *dir, uint32_t dirlen,
		   const char *name, uint8_t *fh, uint32_t *len)
{
	const uint8_t *p;

	begin(e, P_LOOKUP, 0);
	diropargs(e, dir, dirlen, name);
	assert_int_equal(run(e, e->exp), 0);
	p = r_opaque(&e->c, len);
	memcpy(fh, p, *len);
}

static uint32_t do_create(struct t_env *e, struct rpcrdma_nfs3_export *exp,
			  const char *name)
{
	begin(e, P_CREATE, 1000);
	diropargs(e, e->root, e->rootlen, name);
	t_u32(&e->c, 1); /* GUARDED */
	t_sattr_mode(&e->c, 0644);
	return run(e, exp);
}

static uint32_t do_remove(struct t_env *e, const char *name)
{
	begin(e, P_REMOVE, 1000);
	diropargs(e, e->root, e->rootlen, name);
	return run(e, e->exp);
}

/* Each namespace procedure: one fsync, of the directory it changed. */
static void test_each_procedure_commits_its_directory(void **state)
{
	struct t_env *e = *state;
	ino_t root = ino_of(e, ".");
	struct rpcrdma_nfs3_fcache_stats s;
	uint8_t sub[64], file[64];
	uint32_t sublen, filelen;

	/* CREATE and MKDIR: the new object, then the directory (knfsd's
	 * nfsd_create_setattr(): child, then parent) */
	assert_int_equal(do_create(e, e->exp, "f"), 0);
	assert_int_equal(g_syncs, 2);
	assert_int_equal(g_ino[0], ino_of(e, "f"));
	assert_int_equal(g_ino[1], root);

	begin(e, P_MKDIR, 1000);
	diropargs(e, e->root, e->rootlen, "d");
	t_sattr_mode(&e->c, 0755);
	assert_int_equal(run(e, e->exp), 0);
	assert_int_equal(g_syncs, 4);
	assert_int_equal(g_ino[2], ino_of(e, "d"));
	assert_int_equal(g_ino[3], root);
	g_syncs = 0;

	begin(e, P_SYMLINK, 1000);
	diropargs(e, e->root, e->rootlen, "s");
	t_sattr_none(&e->c);
	t_str(&e->c, "f");
	assert_int_equal(run(e, e->exp), 0);
	assert_int_equal(g_syncs, 1); /* a symlink has nothing to sync */
	assert_int_equal(g_ino[0], root);

	/* MKNOD of a FIFO, in the subdirectory: that one is committed */
	lookup(e, e->root, e->rootlen, "d", sub, &sublen);
	begin(e, P_MKNOD, 1000);
	diropargs(e, sub, sublen, "p");
	t_u32(&e->c, 7); /* NF3FIFO */
	t_sattr_mode(&e->c, 0600);
	assert_int_equal(run(e, e->exp), 0);
	assert_int_equal(g_syncs, 2);
	assert_int_equal(g_ino[1], ino_of(e, "d"));

	/* LINK f into d: d changed */
	lookup(e, e->root, e->rootlen, "f", file, &filelen);
	begin(e, P_LINK, 1000);
	t_opaque(&e->c, file, filelen);
	diropargs(e, sub, sublen, "f2");
	assert_int_equal(run(e, e->exp), 0);
	assert_int_equal(g_syncs, 3);
	assert_int_equal(g_ino[2], ino_of(e, "d"));

	/* RENAME within the root: one directory, one fsync */
	begin(e, P_RENAME, 1000);
	diropargs(e, e->root, e->rootlen, "s");
	diropargs(e, e->root, e->rootlen, "s2");
	assert_int_equal(run(e, e->exp), 0);
	assert_int_equal(g_syncs, 4);
	assert_int_equal(g_ino[3], root);

	/* RENAME from the root into d: both */
	begin(e, P_RENAME, 1000);
	diropargs(e, e->root, e->rootlen, "s2");
	diropargs(e, sub, sublen, "s3");
	assert_int_equal(run(e, e->exp), 0);
	assert_int_equal(g_syncs, 6);
	assert_int_equal(g_ino[4], root);
	assert_int_equal(g_ino[5], ino_of(e, "d"));

	g_syncs = 0;
	begin(e, P_REMOVE, 1000);
	diropargs(e, sub, sublen, "s3");
	assert_int_equal(run(e, e->exp), 0);
	begin(e, P_REMOVE, 1000);
	diropargs(e, sub, sublen, "f2");
	assert_int_equal(run(e, e->exp), 0);
	begin(e, P_REMOVE, 1000);
	diropargs(e, sub, sublen, "p");
	assert_int_equal(run(e, e->exp), 0);
	assert_int_equal(g_syncs, 3);
	assert_int_equal(g_ino[0], ino_of(e, "d"));
	assert_int_equal(g_ino[2], ino_of(e, "d"));

	begin(e, P_RMDIR, 1000);
	diropargs(e, e->root, e->rootlen, "d");
	assert_int_equal(run(e, e->exp), 0);
	assert_int_equal(g_syncs, 4);
	assert_int_equal(g_ino[3], root);
	assert_int_equal(rpcrdma_nfs3_fcache_stats(e->exp, &s), 0);
	assert_int_equal(s.fcs_dir_commits, 14);
}

/* SETATTR @fh to mode @mode: the status */
static uint32_t do_chmod(struct t_env *e, const uint8_t *fh, uint32_t len,
			 uint32_t mode)
{
	begin(e, P_SETATTR, 1000);
	t_opaque(&e->c, fh, len);
	t_sattr_mode(&e->c, mode);
	t_u32(&e->c, 0); /* no guard */
	return run(e, e->exp);
}

/*
 * SETATTR commits the object it changed (knfsd's commit_metadata after
 * setattr): a regular file, a directory; a symbolic link has no
 * descriptor to sync and is left alone; a refused SETATTR commits nothing.
 */
static void test_setattr_commits_its_object(void **state)
{
	struct t_env *e = *state;
	uint8_t fh[64];
	uint32_t len;
	char p[PATH_MAX];

	assert_int_equal(do_create(e, e->exp, "f"), 0);
	lookup(e, e->root, e->rootlen, "f", fh, &len);
	g_syncs = 0;
	assert_int_equal(do_chmod(e, fh, len, 0640), 0);
	assert_int_equal(g_syncs, 1);
	assert_int_equal(g_ino[0], ino_of(e, "f"));

	begin(e, P_MKDIR, 1000);
	diropargs(e, e->root, e->rootlen, "d");
	t_sattr_mode(&e->c, 0755);
	assert_int_equal(run(e, e->exp), 0);
	lookup(e, e->root, e->rootlen, "d", fh, &len);
	g_syncs = 0;
	assert_int_equal(do_chmod(e, fh, len, 0700), 0);
	assert_int_equal(g_syncs, 1);
	assert_int_equal(g_ino[0], ino_of(e, "d"));

	snprintf(p, sizeof(p), "%s/l", e->dir);
	assert_int_equal(symlink("f", p), 0);
	assert_int_equal(lchown(p, 1000, 1000), 0);
	lookup(e, e->root, e->rootlen, "l", fh, &len);
	g_syncs = 0;
	begin(e, P_SETATTR, 1000);
	t_opaque(&e->c, fh, len);
	t_sattr_none(&e->c);
	t_u32(&e->c, 0);
	assert_int_equal(run(e, e->exp), 0);
	assert_int_equal(g_syncs, 0);

	/* another user may not chmod f: refused, nothing committed */
	lookup(e, e->root, e->rootlen, "f", fh, &len);
	begin(e, P_SETATTR, 1001);
	t_opaque(&e->c, fh, len);
	t_sattr_mode(&e->c, 0777);
	t_u32(&e->c, 0);
	assert_int_equal(run(e, e->exp), 1); /* NFS3ERR_PERM */
	assert_int_equal(g_syncs, 0);
	e->exp->ex_async = true;
	lookup(e, e->root, e->rootlen, "f", fh, &len);
	assert_int_equal(do_chmod(e, fh, len, 0600), 0);
	assert_int_equal(g_syncs, 0);
}

/* A call that fails changed nothing: nothing to commit. */
static void test_failure_commits_nothing(void **state)
{
	struct t_env *e = *state;

	assert_int_equal(do_remove(e, "missing"), 2); /* NFS3ERR_NOENT */
	assert_int_equal(do_create(e, e->exp, "x"), 0);
	assert_int_equal(g_syncs, 2);
	assert_int_equal(do_create(e, e->exp, "x"), 17); /* GUARDED: EXIST */
	assert_int_equal(g_syncs, 2);
	/* and calls that change no name never commit */
	begin(e, P_GETATTR, 1000);
	t_opaque(&e->c, e->root, e->rootlen);
	assert_int_equal(run(e, e->exp), 0);
	assert_int_equal(g_syncs, 2);
}

/* An async entry, and a file system in memory: never. */
static void test_async_and_memory_fs_commit_nothing(void **state)
{
	struct t_env *e = *state;

	e->exp->ex_async = true;
	assert_int_equal(do_create(e, e->exp, "a"), 0);
	assert_int_equal(do_remove(e, "a"), 0);
	assert_int_equal(g_syncs, 0);
	e->exp->ex_async = false;
	e->exp->ex_mem_fs = true;
	assert_int_equal(do_create(e, e->exp, "a"), 0);
	assert_int_equal(do_remove(e, "a"), 0);
	assert_int_equal(g_syncs, 0);
	e->exp->ex_mem_fs = false;
	assert_int_equal(do_create(e, e->exp, "a"), 0);
	assert_int_equal(g_syncs, 2); /* the new file, its directory */
}

/* The exports(5) option reaches the call: "async" on the entry. */
static void test_exports_option(void **state)
{
	struct t_env *e = *state;
	struct rpcrdma_nfs3_exports *xt;
	struct rpcrdma_nfs3_xopts o;
	struct sockaddr_in peer = { .sin_family = AF_INET };
	char err[256];

	peer.sin_addr.s_addr = htonl(0x0a000001);
	(void)e;
	assert_int_equal(rpcrdma_nfs3_exports_parse("t", "/x 10.0.0.1(rw,async) *(rw)\n",
						    &xt, err, sizeof(err)), 0);
	assert_true(rpcrdma_nfs3_exports_match(xt, 0, (struct sockaddr *)&peer, &o));
	assert_true(o.xo_async);
	peer.sin_addr.s_addr = htonl(0x0a000002);
	assert_true(rpcrdma_nfs3_exports_match(xt, 0, (struct sockaddr *)&peer, &o));
	assert_false(o.xo_async); /* sync is the default */
	rpcrdma_nfs3_exports_free(xt);
	assert_int_equal(rpcrdma_nfs3_exports_parse("t", "/x *(rw,async,sync)\n",
						    &xt, err, sizeof(err)), 0);
	assert_true(rpcrdma_nfs3_exports_match(xt, 0, (struct sockaddr *)&peer, &o));
	assert_false(o.xo_async); /* the last one given wins */
	rpcrdma_nfs3_exports_free(xt);
}

/* fsync fails: the call answers the error (the name was made). */
static void test_fsync_error_is_the_answer(void **state)
{
	struct t_env *e = *state;
	struct stat st;
	char p[PATH_MAX];

	g_fail = EIO;
	assert_int_equal(do_create(e, e->exp, "e"), S_IO);
	assert_int_equal(g_syncs, 1);
	snprintf(p, sizeof(p), "%s/e", e->dir);
	assert_int_equal(lstat(p, &st), 0);
}

/*
 * A directory the caller may write and search but not read (0333): its
 * commit opens it with the server's identity; the caller's own rights
 * still decide the operation (a second user is refused).
 */
static void test_write_only_directory(void **state)
{
	struct t_env *e = *state;
	char p[PATH_MAX];
	uint8_t sub[64];
	uint32_t sublen;

	snprintf(p, sizeof(p), "%s/drop", e->dir);
	assert_int_equal(mkdir(p, 0700), 0);
	assert_int_equal(chown(p, 1000, 1000), 0);
	assert_int_equal(chmod(p, 0333), 0);
	lookup(e, e->root, e->rootlen, "drop", sub, &sublen);
	begin(e, P_CREATE, 1000);
	diropargs(e, sub, sublen, "in");
	t_u32(&e->c, 0); /* UNCHECKED */
	t_sattr_mode(&e->c, 0600);
	assert_int_equal(run(e, e->exp), 0);
	assert_int_equal(g_syncs, 2);
	assert_int_equal(g_ino[0], ino_of(e, "drop/in"));
	assert_int_equal(g_ino[1], ino_of(e, "drop"));
	/* the descriptor is kept: the next commit opens nothing */
	begin(e, P_REMOVE, 1000);
	diropargs(e, sub, sublen, "in");
	assert_int_equal(run(e, e->exp), 0);
	assert_int_equal(g_syncs, 3);
	assert_int_equal(g_ino[2], ino_of(e, "drop"));
	assert_int_equal(chmod(p, 0700), 0);
	begin(e, P_CREATE, 1001);
	diropargs(e, sub, sublen, "no");
	t_u32(&e->c, 0);
	t_sattr_mode(&e->c, 0600);
	assert_int_equal(run(e, e->exp), 13); /* NFS3ERR_ACCES */
	assert_int_equal(g_syncs, 3);
}

/*
 * On the transport thread: a root caller's namespace call of a sync entry
 * on a disk moves to a worker (it waits for the disk), and nothing is done
 * before; async, or in memory, it is served there.
 */
static void test_transport_defers_commits(void **state)
{
	struct t_env *e = *state;
	static const uint32_t procs[] = { P_CREATE, P_MKDIR, P_SYMLINK, P_MKNOD,
					  P_REMOVE, P_RMDIR, P_RENAME, P_LINK,
					  P_SETATTR };

	for (size_t i = 0; i < sizeof(procs) / sizeof(procs[0]); i++) {
		begin(e, procs[i], 0);
		e->c.req.rq_transport = true;
		t_opaque(&e->c, e->root, e->rootlen); /* the rest is never read */
		assert_int_equal(t_run(&e->c, e->exp_nosquash), RPCRDMA_SVC_DEFER);
	}
	begin(e, P_GETATTR, 0);
	e->c.req.rq_transport = true;
	t_opaque(&e->c, e->root, e->rootlen);
	assert_int_equal(run(e, e->exp_nosquash), 0);

	begin(e, P_CREATE, 0);
	e->c.req.rq_transport = true;
	diropargs(e, e->root, e->rootlen, "t");
	t_u32(&e->c, 1);
	t_sattr_mode(&e->c, 0644);
	e->exp_nosquash->ex_async = true;
	assert_int_equal(run(e, e->exp_nosquash), 0);
	e->exp_nosquash->ex_async = false;
	e->exp_nosquash->ex_mem_fs = true;
	begin(e, P_REMOVE, 0);
	e->c.req.rq_transport = true;
	diropargs(e, e->root, e->rootlen, "t");
	assert_int_equal(run(e, e->exp_nosquash), 0);
	assert_int_equal(g_syncs, 0);
}

/*
 * The memory backend: a sync export entry, every namespace procedure and
 * SETATTR done, nothing committed (no fsync hook call, no commit counted),
 * and a root caller's namespace calls served on the transport thread.
 */
static void test_memory_commits_nothing(void **state)
{
	struct t_env *e = *state;
	struct rpcrdma_nfs3_fcache_stats s;
	uint8_t fh[64];
	uint32_t len;

	assert_false(e->exp->ex_async);
	assert_int_equal(do_create(e, e->exp, "f"), 0);
	begin(e, P_MKDIR, 1000);
	diropargs(e, e->root, e->rootlen, "d");
	t_sattr_mode(&e->c, 0755);
	assert_int_equal(run(e, e->exp), 0);
	lookup(e, e->root, e->rootlen, "f", fh, &len);
	assert_int_equal(do_chmod(e, fh, len, 0600), 0);
	begin(e, P_RENAME, 1000);
	diropargs(e, e->root, e->rootlen, "f");
	diropargs(e, e->root, e->rootlen, "g");
	assert_int_equal(run(e, e->exp), 0);
	assert_int_equal(do_remove(e, "g"), 0);
	begin(e, P_RMDIR, 1000);
	diropargs(e, e->root, e->rootlen, "d");
	assert_int_equal(run(e, e->exp), 0);
	begin(e, P_CREATE, 0);
	e->c.req.rq_transport = true;
	diropargs(e, e->root, e->rootlen, "t");
	t_u32(&e->c, 1);
	t_sattr_mode(&e->c, 0644);
	assert_int_equal(run(e, e->exp_nosquash), 0);
	assert_int_equal(g_syncs, 0);
	assert_int_equal(rpcrdma_nfs3_fcache_stats(e->exp, &s), 0);
	assert_int_equal(s.fcs_dir_commits, 0);
}

/*
 * fs_write_data(), through the pwritev2 hook: what it is asked for each
 * stable_how, a file system that refuses the flag, a write an error stops
 * short, an error before anything was written.
 */
static int g_pw_flags[8];
static unsigned g_pw_calls;
static int g_pw_refuse; /* refuse any flag with EOPNOTSUPP */
static size_t g_pw_max;  /* write at most this much per call (0: all) */
static int g_pw_fail_at; /* fail call number g_pw_fail_at (1-based) with EIO */

static ssize_t script_pwritev2(int fd, const struct iovec *iov, int cnt,
			       off_t off, int flags)
{
	struct iovec one = iov[0];

	assert_int_equal(cnt, 1);
	if (g_pw_calls < 8)
		g_pw_flags[g_pw_calls] = flags;
	g_pw_calls++;
	if (g_pw_refuse && flags) {
		errno = EOPNOTSUPP;
		return -1;
	}
	if (g_pw_fail_at && g_pw_calls == (unsigned)g_pw_fail_at) {
		errno = EIO;
		return -1;
	}
	if (g_pw_max && one.iov_len > g_pw_max)
		one.iov_len = g_pw_max;
	return pwritev2(fd, &one, 1, off, 0);
}

static void test_write_data(void **state)
{
	struct t_env *e = *state;
	char p[PATH_MAX], back[16] = { 0 };
	const uint8_t data[10] = "0123456789";
	size_t done;
	int fd;

	snprintf(p, sizeof(p), "%s/wd", e->dir);
	fd = open(p, O_RDWR | O_CREAT, 0644);
	assert_true(fd >= 0);
	fs_commit_pwritev2 = script_pwritev2;

	/* each stable_how: one call with its flag, no separate sync */
	for (uint32_t how = 0; how <= 2; how++) {
		g_pw_calls = 0;
		g_syncs = 0;
		assert_int_equal(fs_write_data(fd, data, 10, 0, how, &done), 0);
		assert_int_equal(done, 10);
		assert_int_equal(g_pw_calls, 1);
		assert_int_equal(g_pw_flags[0], how == 2 ? RWF_SYNC : how == 1 ? RWF_DSYNC : 0);
		assert_int_equal(g_syncs, 0);
	}
	assert_int_equal(pread(fd, back, 10, 0), 10);
	assert_memory_equal(back, data, 10);

	/* a stable write of nothing still commits (fsync: FILE_SYNC) */
	g_pw_calls = 0;
	assert_int_equal(fs_write_data(fd, data, 0, 0, 2, &done), 0);
	assert_int_equal(done, 0);
	assert_int_equal(g_pw_calls, 0);
	assert_int_equal(g_syncs, 1);

	/* the flag refused: the same bytes written plainly, then one fsync */
	g_pw_calls = 0;
	g_syncs = 0;
	g_pw_refuse = 1;
	assert_int_equal(fs_write_data(fd, data + 2, 4, 20, 2, &done), 0);
	assert_int_equal(done, 4);
	assert_int_equal(g_pw_calls, 2);
	assert_int_equal(g_pw_flags[0], RWF_SYNC);
	assert_int_equal(g_pw_flags[1], 0);
	assert_int_equal(g_syncs, 1);
	assert_int_equal(pread(fd, back, 4, 20), 4);
	assert_memory_equal(back, "2345", 4);
	g_pw_refuse = 0;

	/* 3 bytes a call, the second call fails: a short write of 3 */
	g_pw_calls = 0;
	g_syncs = 0;
	g_pw_max = 3;
	g_pw_fail_at = 2;
	assert_int_equal(fs_write_data(fd, data, 10, 40, 1, &done), 0);
	assert_int_equal(done, 3);
	assert_int_equal(g_pw_calls, 2);

	/* the first call fails: the error, nothing written */
	g_pw_calls = 0;
	g_pw_fail_at = 1;
	assert_int_equal(fs_write_data(fd, data, 10, 60, 0, &done), -EIO);
	assert_int_equal(done, 0);
	g_pw_max = 0;
	g_pw_fail_at = 0;

	/* a sync error of a write of nothing is the answer */
	g_fail = EIO;
	assert_int_equal(fs_write_data(fd, data, 0, 0, 2, &done), -EIO);
	g_fail = 0;

	fs_commit_pwritev2 = pwritev2;
	close(fd);
}

int main(void)
{
	const char *tmp = getenv("TMPDIR");
	/* posix only: the posix backend's fsyncs and pwritev2 (see the top) */
	static const struct t_case cases[] = {
		T_CASE(test_each_procedure_commits_its_directory, env_setup, env_teardown, T_POSIX_ONLY),
		T_CASE(test_failure_commits_nothing, env_setup, env_teardown, T_POSIX_ONLY),
		T_CASE(test_setattr_commits_its_object, env_setup, env_teardown, T_POSIX_ONLY),
		T_CASE(test_async_and_memory_fs_commit_nothing, env_setup, env_teardown, T_POSIX_ONLY),
		T_CASE(test_exports_option, env_setup, env_teardown, T_ANY),
		T_CASE(test_fsync_error_is_the_answer, env_setup, env_teardown, T_POSIX_ONLY),
		T_CASE(test_write_only_directory, env_setup, env_teardown, T_POSIX_ONLY),
		T_CASE(test_transport_defers_commits, env_setup, env_teardown, T_POSIX_ONLY),
		T_CASE(test_write_data, env_setup, env_teardown, T_POSIX_ONLY),
	};
	static const struct t_case mem_cases[] = {
		T_CASE(test_memory_commits_nothing, env_setup, env_teardown, T_ANY),
	};
	int fails;

	g_base = tmp && *tmp ? tmp : "/tmp";
	fails = t_run_cases(T_BE_POSIX, "nfs3 commit_metadata", cases,
			    T_NCASES(cases), NULL, NULL);
	fails += t_run_cases(T_BE_MEMORY, "nfs3 commit_metadata", cases,
			     T_NCASES(cases), NULL, NULL);
	fails += t_run_cases(T_BE_MEMORY, "nfs3 commit_metadata, memory",
			     mem_cases, T_NCASES(mem_cases), NULL, NULL);
	return t_exit(fails);
}
