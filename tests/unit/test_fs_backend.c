// SPDX-License-Identifier: MIT
/*
 * test_fs_backend.c - every backend operation (fs_backend.h) through the
 * layer's functions (fs.h), one table of cases run on each backend:
 * "memory" always, "posix" on a fresh directory under /tmp when running
 * as root (file handles need CAP_DAC_READ_SEARCH; not root: that group is
 * reported skipped).  Expected values are worked out by hand from POSIX
 * (and, where POSIX leaves it open, Linux and knfsd); where the two
 * backends may differ, the case says so.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "fs/fs.h"
#include "fs/fs_backend.h"
#include "test_root.h"

#define KB 1024ull
#define MB (1024ull * KB)
#define GB (1024ull * MB)

struct env;

/* A case of the table. */
struct be_case {
	const char *name;
	void (*fn)(struct env *e);
};

/* One backend's export and the caller the case acts as. */
struct env {
	const struct be_case *bc;   /* the case to run */
	const char *be;             /* "memory" or "posix" */
	bool posix;
	char dir[64];               /* posix: the exported directory */
	struct rpcrdma_nfs3_export *exp;
	struct fs_call c;
	struct fs_fentry rl, *root; /* the export's root */
	struct stat rst;
};

/* An object a case holds: entry storage, the entry, its attributes. */
struct obj {
	struct fs_fentry l;
	struct fs_fentry *fe;
	struct stat st;
};

/* ---- the export ---- */

/* The export, as a server opens it: the backend by name, the default
 * open-file and directory caches (so REMOVE and RENAME drop what they
 * hold, as they must for a handle to turn stale). */
static int open_export(struct env *e)
{
	struct rpcrdma_nfs3_config cfg = {
		.nc_export = e->posix ? e->dir : "/mem",
		.nc_backend = e->be,
	};

	if (getrandom(cfg.nc_key, sizeof(cfg.nc_key), 0) != sizeof(cfg.nc_key))
		return -EIO;
	return rpcrdma_nfs3_export_open(&cfg, &e->exp);
}

static void close_export(struct env *e)
{
	rpcrdma_nfs3_export_close(e->exp);
	e->exp = NULL;
}

static int rm_one(const char *p, const struct stat *sb, int flag, struct FTW *f)
{
	(void)sb;
	(void)flag;
	(void)f;
	return remove(p);
}

/* ---- callers ---- */

/* Act as @uid:@gid with @ngids supplementary groups from @gids. */
static void as(struct env *e, uint32_t uid, uint32_t gid, uint32_t ngids,
	       const uint32_t *gids)
{
	fs_cred_restore();
	memset(&e->c.c_cred, 0, sizeof(e->c.c_cred));
	e->c.c_cred.cr_uid = uid;
	e->c.c_cred.cr_gid = gid;
	e->c.c_cred.cr_ngids = ngids;
	for (uint32_t i = 0; i < ngids; i++)
		e->c.c_cred.cr_gids[i] = gids[i];
	e->c.c_as_caller = false;
	assert_int_equal(fs_become_caller(&e->c), 0);
}

static void as_root(struct env *e)
{
	as(e, 0, 0, 0, NULL);
}

/* ---- shorthands for the layer's functions ---- */

static void put(struct obj *o)
{
	fs_fcache_put(o->fe);
	o->fe = NULL;
}

static int lookup(struct env *e, struct obj *dir, const char *name, struct obj *o)
{
	struct fs_fentry *d = dir ? dir->fe : e->root;
	const struct stat *dst = dir ? &dir->st : &e->rst;

	return fs_lookup(&e->c, d, dst, name, &o->l, &o->fe, &o->st);
}

static int create(struct env *e, struct obj *dir, const char *name,
		  mode_t mode, bool excl, struct obj *o, bool *created)
{
	struct fs_fentry *d = dir ? dir->fe : e->root;
	const struct stat *dst = dir ? &dir->st : &e->rst;
	bool cr;

	return fs_create(&e->c, d, dst, name, mode, excl, NULL, &o->l, &o->fe,
			 &o->st, created ? created : &cr);
}

static int mkdir_(struct env *e, struct obj *dir, const char *name,
		  mode_t mode, struct obj *o)
{
	struct fs_fentry *d = dir ? dir->fe : e->root;
	const struct stat *dst = dir ? &dir->st : &e->rst;

	return fs_mkdir(&e->c, d, dst, name, mode, &o->l, &o->fe, &o->st);
}

static int remove_(struct env *e, struct obj *dir, const char *name, bool rmdir)
{
	return fs_remove(&e->c, dir ? dir->fe : e->root, name, rmdir);
}

static int rename_(struct env *e, struct obj *fdir, const char *fname,
		   struct obj *tdir, const char *tname)
{
	struct fs_fentry *f = fdir ? fdir->fe : e->root;
	struct fs_fentry *t = tdir ? tdir->fe : e->root;

	return fs_rename(&e->c, f, fname, t, tname, f != t);
}

static void getattr(struct env *e, struct obj *o)
{
	assert_int_equal(fs_getattr(&e->c, o->fe, &o->st), 0);
}

static void root_attr(struct env *e)
{
	assert_int_equal(fs_getattr(&e->c, e->root, &e->rst), 0);
}

static int write_at(struct env *e, struct obj *o, uint64_t off,
		    const void *buf, size_t len, size_t *done)
{
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	size_t d;

	return fs_write(&e->c, o->fe, &iov, 1, off, FS_UNSTABLE,
			done ? done : &d);
}

static void write_ok(struct env *e, struct obj *o, uint64_t off,
		     const void *buf, size_t len)
{
	size_t done = 0;

	assert_int_equal(fs_open(&e->c, o->fe, &o->st, O_WRONLY), 0);
	assert_int_equal(write_at(e, o, off, buf, len, &done), 0);
	assert_int_equal(done, len);
}

static ssize_t read_at(struct env *e, struct obj *o, uint64_t off, void *buf,
		       size_t len)
{
	struct iovec iov = { .iov_base = buf, .iov_len = len };

	return fs_read(&e->c, o->fe, &iov, 1, off, false);
}

static int set_attr(struct env *e, struct obj *o, const struct fs_sattr *sa)
{
	int err;

	getattr(e, o);
	err = fs_setattr(&e->c, o->fe, &o->st, sa, false);
	getattr(e, o);
	return err;
}

static int chmod_(struct env *e, struct obj *o, mode_t mode)
{
	struct fs_sattr sa = { .sa_set_mode = true, .sa_mode = mode };

	return set_attr(e, o, &sa);
}

static int chown_(struct env *e, struct obj *o, int64_t uid, int64_t gid)
{
	struct fs_sattr sa = {
		.sa_set_uid = uid >= 0, .sa_uid = (uint32_t)uid,
		.sa_set_gid = gid >= 0, .sa_gid = (uint32_t)gid,
	};

	return set_attr(e, o, &sa);
}

static int truncate_(struct env *e, struct obj *o, uint64_t size)
{
	struct fs_sattr sa = { .sa_set_size = true, .sa_size = size };

	return set_attr(e, o, &sa);
}

static int set_times(struct env *e, struct obj *o, uint32_t how,
		     time_t asec, time_t msec)
{
	struct fs_sattr sa = {
		.sa_atime_how = how, .sa_mtime_how = how,
		.sa_atime = { .tv_sec = asec }, .sa_mtime = { .tv_sec = msec },
	};

	return set_attr(e, o, &sa);
}

/* The object a handle names, decoded again, not kept in a cache:
 * 0 or -ESTALE. */
static int decode_direct(struct env *e, const uint8_t *fh, uint32_t len,
			 struct stat *st)
{
	struct fs_fentry l;
	int err;

	err = fs_fh_decode(e->exp, fh, len, &l, st);
	if (!err)
		fs_fcache_put(&l);
	return err;
}

/* decode_direct() through the caches, as a protocol's call: a regular
 * file or a directory found stays cached (until REMOVE, RENAME or
 * eviction drops it). */
static int decode(struct env *e, const uint8_t *fh, uint32_t len,
		  struct stat *st)
{
	struct fs_fentry l, *fe = NULL;
	int err;

	fs_fentry_init(&l);
	err = fs_fcache_get(e->exp, fh, len, &l, &fe, st);
	if (!err)
		fs_fcache_put(fe);
	return err;
}

/* ---- readdir ---- */

struct dent {
	char name[256];
	uint64_t ino, cookie;
};

struct dlist {
	struct dent d[64];
	unsigned n;
	unsigned stop_at; /* callbacks accepted before refusing one (0: all) */
};

static int collect(void *arg, const char *name, uint64_t ino, uint64_t cookie)
{
	struct dlist *l = arg;

	if (l->stop_at && l->n == l->stop_at)
		return 1;
	assert_true(l->n < 64);
	snprintf(l->d[l->n].name, sizeof(l->d[l->n].name), "%s", name);
	l->d[l->n].ino = ino;
	l->d[l->n].cookie = cookie;
	l->n++;
	return 0;
}

static int list(struct env *e, struct obj *dir, uint64_t cookie,
		struct dlist *l, bool *eof)
{
	l->n = 0;
	return fs_readdir(&e->c, dir->fe, &dir->st, cookie, collect, l, eof);
}

static int dfind(const struct dlist *l, const char *name)
{
	for (unsigned i = 0; i < l->n; i++)
		if (!strcmp(l->d[i].name, name))
			return (int)i;
	return -1;
}

/* ---- cases ---- */

/* Old times (2001-09-09) set on an object, so a later change shows. */
#define PAST 1000000000

static void case_create_lookup(struct env *e)
{
	struct obj f, g, dot, up;
	bool created = false;
	ino_t rino;

	/* the root: a directory everyone may write, sticky, root's */
	root_attr(e);
	assert_true(S_ISDIR(e->rst.st_mode));
	assert_int_equal(e->rst.st_mode & 07777, 01777);
	assert_int_equal(e->rst.st_uid, 0);
	assert_true(fs_is_root(e->exp, &e->rst));
	rino = e->rst.st_ino;
	{
		struct fs_sattr sa = {
			.sa_atime_how = FS_SET_TO_CLIENT_TIME, .sa_atime = { .tv_sec = PAST },
			.sa_mtime_how = FS_SET_TO_CLIENT_TIME, .sa_mtime = { .tv_sec = PAST },
		};

		assert_int_equal(fs_setattr(&e->c, e->root, &e->rst, &sa, false), 0);
	}

	as(e, 1000, 1001, 0, NULL);
	assert_int_equal(create(e, NULL, "f", 0640, true, &f, &created), 0);
	assert_true(created);
	assert_true(S_ISREG(f.st.st_mode));
	assert_int_equal(f.st.st_mode & 07777, 0640); /* as given: no umask */
	assert_int_equal(f.st.st_uid, 1000);
	assert_int_equal(f.st.st_gid, 1001);
	assert_int_equal(f.st.st_nlink, 1);
	assert_int_equal(f.st.st_size, 0);
	assert_int_equal(f.st.st_dev, e->rst.st_dev);
	assert_true(f.st.st_ino != rino);
	assert_int_equal(f.fe->fe_type, S_IFREG);

	/* the directory changed: mtime and ctime moved past PAST */
	root_attr(e);
	assert_true(e->rst.st_mtim.tv_sec > PAST);
	assert_true(e->rst.st_ctim.tv_sec >= f.st.st_ctim.tv_sec);

	assert_int_equal(lookup(e, NULL, "f", &g), 0);
	assert_int_equal(g.st.st_ino, f.st.st_ino);
	assert_int_equal(g.st.st_mode, f.st.st_mode);
	getattr(e, &g);
	assert_int_equal(g.st.st_ino, f.st.st_ino);
	put(&g);

	/* "." is the directory, ".." of the root is the root */
	assert_int_equal(lookup(e, NULL, ".", &dot), 0);
	assert_int_equal(dot.st.st_ino, rino);
	put(&dot);
	assert_int_equal(lookup(e, NULL, "..", &up), 0);
	assert_int_equal(up.st.st_ino, rino);
	put(&up);

	assert_int_equal(lookup(e, NULL, "nope", &g), -ENOENT);
	/* a name in a file: not a directory */
	assert_int_equal(lookup(e, &f, "x", &g), -ENOTDIR);
	{
		char name[300];

		memset(name, 'n', 256);
		name[256] = '\0';
		assert_int_equal(lookup(e, NULL, name, &g), -ENAMETOOLONG);
		assert_int_equal(create(e, NULL, name, 0644, true, &g, NULL),
				 -ENAMETOOLONG);
		name[255] = '\0'; /* 255 bytes: fits */
		assert_int_equal(create(e, NULL, name, 0644, true, &g, NULL), 0);
		assert_int_equal(g.st.st_nlink, 1);
		put(&g);
	}
	put(&f);
}

static void case_create_exists(struct env *e)
{
	struct obj f, g, d;
	bool created = true;

	assert_int_equal(create(e, NULL, "f", 0644, true, &f, NULL), 0);
	write_ok(e, &f, 0, "hello", 5);
	assert_int_equal(create(e, NULL, "f", 0644, true, &g, NULL), -EEXIST);
	/* not exclusive: the existing file, neither opened nor truncated */
	assert_int_equal(create(e, NULL, "f", 0600, false, &g, &created), 0);
	assert_false(created);
	assert_int_equal(g.st.st_ino, f.st.st_ino);
	assert_int_equal(g.st.st_size, 5);
	assert_int_equal(g.st.st_mode & 07777, 0644);
	put(&g);
	assert_int_equal(mkdir_(e, NULL, "d", 0755, &d), 0);
	assert_int_equal(create(e, NULL, "d", 0644, true, &g, NULL), -EEXIST);
	/* whatever its type (the protocol answers for one not regular) */
	assert_int_equal(create(e, NULL, "d", 0644, false, &g, &created), 0);
	assert_false(created);
	assert_true(S_ISDIR(g.st.st_mode));
	assert_int_equal(g.st.st_ino, d.st.st_ino);
	put(&g);
	assert_int_equal(mkdir_(e, NULL, "d", 0755, &g), -EEXIST);
	assert_int_equal(mkdir_(e, NULL, "f", 0755, &g), -EEXIST);
	put(&d);
	put(&f);

	/* an exclusive create's verifier: the new file's atime and mtime
	 * seconds (big-endian halves), nanoseconds 0 */
	{
		static const uint8_t verf[8] = { 0x12, 0x34, 0x56, 0x78,
						 0x0a, 0xbc, 0xde, 0xf0 };

		assert_int_equal(fs_create(&e->c, e->root, &e->rst, "v", 0600,
					   false, verf, &g.l, &g.fe, &g.st,
					   &created), 0);
		assert_true(created);
		assert_int_equal(g.st.st_atim.tv_sec, 0x12345678);
		assert_int_equal(g.st.st_mtim.tv_sec, 0x0abcdef0);
		assert_int_equal(g.st.st_atim.tv_nsec, 0);
		assert_int_equal(g.st.st_mtim.tv_nsec, 0);
		assert_int_equal(g.st.st_mode, S_IFREG | 0600);
		put(&g);
		/* a retransmission finds the file, and the verifier in it */
		assert_int_equal(fs_create(&e->c, e->root, &e->rst, "v", 0600,
					   false, verf, &g.l, &g.fe, &g.st,
					   &created), 0);
		assert_false(created);
		assert_int_equal(g.st.st_atim.tv_sec, 0x12345678);
		assert_int_equal(g.st.st_mtim.tv_sec, 0x0abcdef0);
		put(&g);
	}
}

static void case_mkdir_rmdir(struct env *e)
{
	struct obj d, f, g;
	nlink_t n0;

	root_attr(e);
	n0 = e->rst.st_nlink;
	as(e, 1000, 1000, 0, NULL);
	assert_int_equal(mkdir_(e, NULL, "d", 0750, &d), 0);
	assert_true(S_ISDIR(d.st.st_mode));
	assert_int_equal(d.st.st_mode & 07777, 0750);
	assert_int_equal(d.st.st_nlink, 2);            /* its name and "." */
	assert_int_equal(d.st.st_uid, 1000);
	assert_int_equal(d.fe->fe_type, S_IFDIR);
	root_attr(e);
	assert_int_equal(e->rst.st_nlink, n0 + 1);     /* d's ".." */
	assert_int_equal(lookup(e, &d, "..", &g), 0);
	assert_int_equal(g.st.st_ino, e->rst.st_ino);
	put(&g);
	assert_int_equal(mkdir_(e, &d, "sub", 0700, &g), 0);
	getattr(e, &d);
	assert_int_equal(d.st.st_nlink, 3);
	put(&g);
	assert_int_equal(create(e, &d, "f", 0644, true, &f, NULL), 0);

	assert_int_equal(remove_(e, NULL, "d", true), -ENOTEMPTY);
	assert_int_equal(remove_(e, &d, "f", true), -ENOTDIR);
	assert_int_equal(remove_(e, NULL, "d", false), -EISDIR);
	assert_int_equal(remove_(e, &d, "nope", false), -ENOENT);
	assert_int_equal(remove_(e, &d, ".", true), -EINVAL);
	assert_int_equal(remove_(e, &f, "x", false), -ENOTDIR);
	assert_int_equal(remove_(e, &d, "f", false), 0);
	getattr(e, &f);
	assert_int_equal(f.st.st_nlink, 0); /* held, no name */
	put(&f);
	assert_int_equal(remove_(e, &d, "sub", true), 0);
	getattr(e, &d);
	assert_int_equal(d.st.st_nlink, 2);
	assert_int_equal(remove_(e, NULL, "d", true), 0);
	assert_int_equal(lookup(e, NULL, "d", &g), -ENOENT);
	root_attr(e);
	assert_int_equal(e->rst.st_nlink, n0);
	/* the removed directory, still held: nothing can be made in it */
	assert_int_equal(create(e, &d, "late", 0644, true, &g, NULL), -ENOENT);
	put(&d);
}

static void case_hard_links(struct env *e)
{
	struct obj a, b, d;
	char buf[16] = { 0 };

	assert_int_equal(create(e, NULL, "a", 0644, true, &a, NULL), 0);
	write_ok(e, &a, 0, "hello", 5);
	assert_int_equal(fs_link(&e->c, a.fe, e->root, "b"), 0);
	getattr(e, &a);
	assert_int_equal(a.st.st_nlink, 2);
	assert_int_equal(lookup(e, NULL, "b", &b), 0);
	assert_int_equal(b.st.st_ino, a.st.st_ino);
	assert_int_equal(b.st.st_nlink, 2);
	assert_int_equal(fs_link(&e->c, a.fe, e->root, "b"), -EEXIST);
	assert_int_equal(remove_(e, NULL, "a", false), 0);
	put(&a);
	getattr(e, &b);
	assert_int_equal(b.st.st_nlink, 1);
	assert_int_equal(fs_open(&e->c, b.fe, &b.st, O_RDONLY), 0);
	assert_int_equal(read_at(e, &b, 0, buf, sizeof(buf)), 5);
	assert_string_equal(buf, "hello");
	put(&b);
	/* a directory gets no second name */
	assert_int_equal(mkdir_(e, NULL, "d", 0755, &d), 0);
	assert_int_equal(fs_link(&e->c, d.fe, e->root, "d2"), -EPERM);
	put(&d);
}

static void case_symlink(struct env *e)
{
	struct obj l, g, f;
	char buf[64];

	as(e, 1000, 1000, 0, NULL);
	assert_int_equal(fs_symlink(&e->c, e->root, &e->rst, "l", "some/target",
				    &l.l, &l.fe, &l.st), 0);
	assert_true(S_ISLNK(l.st.st_mode));
	assert_int_equal(l.st.st_size, 11);
	assert_int_equal(l.st.st_uid, 1000);
	assert_int_equal(l.fe->fe_type, S_IFLNK);
	assert_int_equal(fs_readlink(&e->c, l.fe, buf, sizeof(buf)), 11);
	assert_memory_equal(buf, "some/target", 11);
	assert_int_equal(fs_readlink(&e->c, l.fe, buf, 5), -ENAMETOOLONG);
	/* lookup never follows it */
	assert_int_equal(lookup(e, NULL, "l", &g), 0);
	assert_true(S_ISLNK(g.st.st_mode));
	assert_int_equal(g.st.st_ino, l.st.st_ino);
	put(&g);
	assert_int_equal(fs_symlink(&e->c, e->root, &e->rst, "l", "x", &g.l,
				    &g.fe, &g.st), -EEXIST);
	assert_int_equal(create(e, NULL, "f", 0644, true, &f, NULL), 0);
	assert_int_equal(fs_readlink(&e->c, f.fe, buf, sizeof(buf)), -EINVAL);
	put(&f);
	put(&l);
}

static void case_mknod(struct env *e)
{
	struct obj p, c, g;

	assert_int_equal(fs_mknod(&e->c, e->root, &e->rst, "c",
				  S_IFCHR | 0600, makedev(1, 3), &c.l, &c.fe,
				  &c.st), 0);
	assert_true(S_ISCHR(c.st.st_mode));
	assert_int_equal(c.st.st_mode & 07777, 0600);
	assert_int_equal(c.st.st_rdev, makedev(1, 3));
	assert_int_equal(c.fe->fe_type, S_IFCHR);
	put(&c);
	as(e, 1000, 1000, 0, NULL);
	assert_int_equal(fs_mknod(&e->c, e->root, &e->rst, "p", S_IFIFO | 0640,
				  0, &p.l, &p.fe, &p.st), 0);
	assert_true(S_ISFIFO(p.st.st_mode));
	assert_int_equal(p.st.st_mode & 07777, 0640);
	assert_int_equal(p.st.st_uid, 1000);
	put(&p);
	/* a device node needs root (CAP_MKNOD) */
	assert_int_equal(fs_mknod(&e->c, e->root, &e->rst, "c2", S_IFCHR | 0600,
				  makedev(1, 3), &g.l, &g.fe, &g.st), -EPERM);
	assert_int_equal(fs_mknod(&e->c, e->root, &e->rst, "b2", S_IFBLK | 0600,
				  makedev(7, 0), &g.l, &g.fe, &g.st), -EPERM);
	assert_int_equal(fs_mknod(&e->c, e->root, &e->rst, "s", S_IFSOCK | 0600,
				  0, &g.l, &g.fe, &g.st), 0);
	assert_true(S_ISSOCK(g.st.st_mode));
	put(&g);
	assert_int_equal(lookup(e, NULL, "c2", &g), -ENOENT);
}

static void case_read_write(struct env *e)
{
	struct obj f;
	char a[2], b[10];
	struct iovec w[2] = { { "abc", 3 }, { "defg", 4 } };
	struct iovec r[2] = { { a, sizeof(a) }, { b, sizeof(b) } };
	size_t done = 0;
	char buf[16];

	assert_int_equal(create(e, NULL, "f", 0644, true, &f, NULL), 0);
	assert_int_equal(set_times(e, &f, FS_SET_TO_CLIENT_TIME, PAST, PAST), 0);
	assert_int_equal(fs_open(&e->c, f.fe, &f.st, O_WRONLY), 0);
	assert_int_equal(fs_write(&e->c, f.fe, w, 2, 0, FS_FILE_SYNC, &done), 0);
	assert_int_equal(done, 7);
	getattr(e, &f);
	assert_int_equal(f.st.st_size, 7);
	assert_true(f.st.st_mtim.tv_sec > PAST); /* a write moves mtime */
	assert_true(f.st.st_ctim.tv_sec >= f.st.st_mtim.tv_sec);
	assert_int_equal(f.st.st_atim.tv_sec, PAST);
	assert_int_equal(fs_open(&e->c, f.fe, &f.st, O_RDONLY), 0);
	assert_int_equal(fs_read(&e->c, f.fe, r, 2, 0, false), 7);
	assert_memory_equal(a, "ab", 2);
	assert_memory_equal(b, "cdefg", 5);
	assert_int_equal(read_at(e, &f, 5, buf, sizeof(buf)), 2);
	assert_memory_equal(buf, "fg", 2);
	assert_int_equal(read_at(e, &f, 7, buf, sizeof(buf)), 0);   /* at the end */
	assert_int_equal(read_at(e, &f, 100, buf, sizeof(buf)), 0); /* past it */
	/* past the end: a hole of zeros in between */
	assert_int_equal(write_at(e, &f, 10, "z", 1, &done), 0);
	assert_int_equal(read_at(e, &f, 0, buf, sizeof(buf)), 11);
	assert_memory_equal(buf, "abcdefg\0\0\0z", 11);
	assert_int_equal(write_at(e, &f, 1, "XY", 2, &done), 0); /* overwrite */
	assert_int_equal(read_at(e, &f, 0, buf, 4), 4);
	assert_memory_equal(buf, "aXYd", 4);
	for (uint32_t how = FS_UNSTABLE; how <= FS_FILE_SYNC; how++) {
		struct iovec one = { "q", 1 };

		assert_int_equal(fs_write(&e->c, f.fe, &one, 1, 11 + how, how, &done), 0);
		assert_int_equal(done, 1);
	}
	assert_int_equal(fs_commit(&e->c, f.fe, false), 0);
	assert_int_equal(fs_commit(&e->c, f.fe, true), 0);
	getattr(e, &f);
	assert_int_equal(f.st.st_size, 14);
	put(&f);
}

static void case_sparse(struct env *e)
{
	struct obj f;
	char buf[4096], three[3];

	assert_int_equal(create(e, NULL, "s", 0644, true, &f, NULL), 0);
	write_ok(e, &f, GB, "x", 1);
	getattr(e, &f);
	assert_int_equal(f.st.st_size, GB + 1);
	/* one page (4 KiB: 8 sectors) for memory; a block or a few for a disk */
	if (e->posix)
		assert_true(f.st.st_blocks > 0 && f.st.st_blocks <= 64);
	else
		assert_int_equal(f.st.st_blocks, 8);
	memset(buf, 'j', sizeof(buf));
	assert_int_equal(fs_open(&e->c, f.fe, &f.st, O_RDONLY), 0);
	assert_int_equal(read_at(e, &f, 0, buf, sizeof(buf)), 4096);
	for (size_t i = 0; i < sizeof(buf); i++)
		assert_int_equal(buf[i], 0);
	memset(buf, 'j', sizeof(buf));
	assert_int_equal(read_at(e, &f, GB / 2 + 17, buf, 100), 100);
	for (size_t i = 0; i < 100; i++)
		assert_int_equal(buf[i], 0);
	assert_int_equal(read_at(e, &f, GB - 2, three, 3), 3);
	assert_memory_equal(three, "\0\0x", 3);
	assert_int_equal(read_at(e, &f, GB + 1, buf, 10), 0);
	/* shrink into the hole, grow again: the byte is gone */
	assert_int_equal(truncate_(e, &f, GB), 0);
	assert_int_equal(f.st.st_size, GB);
	if (!e->posix)
		assert_int_equal(f.st.st_blocks, 0);
	assert_int_equal(truncate_(e, &f, GB + 1), 0);
	assert_int_equal(read_at(e, &f, GB, three, 1), 1);
	assert_int_equal(three[0], 0);
	/* truncate within a page zeroes its tail */
	write_ok(e, &f, 0, "abcdef", 6);
	assert_int_equal(truncate_(e, &f, 2), 0);
	assert_int_equal(truncate_(e, &f, 6), 0);
	assert_int_equal(read_at(e, &f, 0, buf, 6), 6);
	assert_memory_equal(buf, "ab\0\0\0\0", 6);
	put(&f);
}

static void case_rename(struct env *e)
{
	struct obj a, b, d, d2, sub, g, x;
	uint8_t fh[RPCRDMA_NFS3_FHSIZE];
	uint32_t fhlen;
	struct stat st;
	char buf[4];
	nlink_t n0;
	ino_t aino;

	assert_int_equal(create(e, NULL, "a", 0644, true, &a, NULL), 0);
	write_ok(e, &a, 0, "A", 1);
	aino = a.st.st_ino;
	put(&a);
	assert_int_equal(create(e, NULL, "b", 0644, true, &b, NULL), 0);
	write_ok(e, &b, 0, "B", 1);
	assert_int_equal(fs_fh_of(&e->c, e->root, "b", fh, &fhlen), 0);
	put(&b);
	assert_int_equal(decode(e, fh, fhlen, &st), 0);

	/* replacing a file: "b" is "a"'s object, the old "b" is gone */
	assert_int_equal(rename_(e, NULL, "a", NULL, "b"), 0);
	assert_int_equal(lookup(e, NULL, "a", &g), -ENOENT);
	assert_int_equal(lookup(e, NULL, "b", &g), 0);
	assert_int_equal(g.st.st_ino, aino);
	assert_int_equal(g.st.st_nlink, 1);
	assert_int_equal(fs_open(&e->c, g.fe, &g.st, O_RDONLY), 0);
	assert_int_equal(read_at(e, &g, 0, buf, sizeof(buf)), 1);
	assert_int_equal(buf[0], 'A');
	put(&g);
	/* memory: its node is freed once the last reference dropped; the
	 * kernel (ext4, tmpfs) refuses a handle of an inode without links
	 * too (open_by_handle_at: ESTALE) */
	assert_int_equal(decode(e, fh, fhlen, &st), -ESTALE);

	/* a rename onto the same object does nothing: both names stay */
	assert_int_equal(lookup(e, NULL, "b", &b), 0);
	assert_int_equal(fs_link(&e->c, b.fe, e->root, "c"), 0);
	assert_int_equal(rename_(e, NULL, "b", NULL, "c"), 0);
	assert_int_equal(lookup(e, NULL, "b", &g), 0);
	put(&g);
	assert_int_equal(lookup(e, NULL, "c", &g), 0);
	assert_int_equal(g.st.st_nlink, 2);
	put(&g);
	assert_int_equal(rename_(e, NULL, "b", NULL, "b"), 0);
	assert_int_equal(rename_(e, NULL, "nope", NULL, "z"), -ENOENT);

	/* directories */
	root_attr(e);
	n0 = e->rst.st_nlink;
	assert_int_equal(mkdir_(e, NULL, "d", 0777, &d), 0);
	assert_int_equal(mkdir_(e, &d, "sub", 0755, &sub), 0);
	assert_int_equal(mkdir_(e, NULL, "d2", 0777, &d2), 0);
	assert_int_equal(rename_(e, NULL, "d", &sub, "x"), -EINVAL);  /* into itself */
	assert_int_equal(rename_(e, NULL, "d", &d, "x"), -EINVAL);
	assert_int_equal(rename_(e, NULL, "b", NULL, "d"), -EISDIR);  /* file over dir */
	assert_int_equal(rename_(e, NULL, "d2", NULL, "b"), -ENOTDIR); /* dir over file */
	assert_int_equal(rename_(e, NULL, "d2", NULL, "d"), -ENOTEMPTY);
	assert_int_equal(rename_(e, NULL, ".", NULL, "y"), -EBUSY);
	/* a directory moved: its ".." and both parents' links follow */
	assert_int_equal(rename_(e, &d, "sub", &d2, "moved"), 0);
	getattr(e, &d);
	getattr(e, &d2);
	assert_int_equal(d.st.st_nlink, 2);
	assert_int_equal(d2.st.st_nlink, 3);
	assert_int_equal(lookup(e, &sub, "..", &g), 0);
	assert_int_equal(g.st.st_ino, d2.st.st_ino);
	put(&g);
	/* a directory moved to another parent needs write permission on it
	 * (its ".." changes); renamed in its own parent, it does not */
	as(e, 1001, 1001, 0, NULL);
	assert_int_equal(mkdir_(e, &d2, "ro", 0555, &x), 0);
	put(&x);
	assert_int_equal(rename_(e, &d2, "ro", &d, "ro"), -EACCES);
	assert_int_equal(rename_(e, &d2, "ro", &d2, "ro2"), 0);
	as_root(e);
	assert_int_equal(remove_(e, &d2, "ro2", true), 0);
	/* an empty directory replaced by a directory */
	assert_int_equal(rename_(e, NULL, "d", &d2, "moved"), 0);
	getattr(e, &sub);
	assert_int_equal(sub.st.st_nlink, 0);
	getattr(e, &d2);
	assert_int_equal(d2.st.st_nlink, 3);
	root_attr(e);
	assert_int_equal(e->rst.st_nlink, n0 + 1); /* d2 only */
	assert_int_equal(lookup(e, &d2, "moved", &x), 0);
	assert_int_equal(x.st.st_ino, d.st.st_ino);
	put(&x);
	put(&sub);
	put(&d);
	put(&d2);
	put(&b);
}

static void case_readdir(struct env *e)
{
	static const char *names[] = { "e1", "e2", "e3", "e4", "e5" };
	static struct dlist l, m;
	struct obj d, f;
	bool eof = false;
	int k = -1;

	l.stop_at = m.stop_at = 0;
	assert_int_equal(mkdir_(e, NULL, "d", 0755, &d), 0);
	for (unsigned i = 0; i < 5; i++) {
		assert_int_equal(create(e, &d, names[i], 0644, true, &f, NULL), 0);
		put(&f);
	}
	assert_int_equal(list(e, &d, 0, &l, &eof), 0);
	assert_true(eof);
	assert_int_equal(l.n, 7);
	assert_true(dfind(&l, ".") >= 0);
	assert_int_equal(l.d[dfind(&l, ".")].ino, d.st.st_ino);
	assert_int_equal(l.d[dfind(&l, "..")].ino, e->rst.st_ino);
	for (unsigned i = 0; i < 5; i++) {
		int j = dfind(&l, names[i]);

		assert_true(j >= 0);
		assert_int_equal(lookup(e, &d, names[i], &f), 0);
		assert_int_equal(l.d[j].ino, f.st.st_ino);
		put(&f);
	}
	if (!e->posix) {
		/* memory: ".", ".." (cookies 1, 2), then insertion order */
		assert_string_equal(l.d[0].name, ".");
		assert_int_equal(l.d[0].cookie, 1);
		assert_string_equal(l.d[1].name, "..");
		assert_int_equal(l.d[1].cookie, 2);
		for (unsigned i = 0; i < 5; i++)
			assert_string_equal(l.d[2 + i].name, names[i]);
	}

	/* a callback that stops: eof false, that entry not consumed */
	l.stop_at = 3;
	assert_int_equal(list(e, &d, 0, &l, &eof), 0);
	assert_false(eof);
	assert_int_equal(l.n, 3);
	m.stop_at = 0;
	assert_int_equal(list(e, &d, l.d[2].cookie, &m, &eof), 0);
	assert_true(eof);
	assert_int_equal(m.n, 4);
	l.stop_at = 0;

	/* resume after an entry that was removed meanwhile: the rest, in the
	 * same order, none twice, none lost */
	assert_int_equal(list(e, &d, 0, &l, &eof), 0);
	for (unsigned i = 1; i + 2 < l.n; i++)
		if (l.d[i].name[0] == 'e') {
			k = (int)i;
			break;
		}
	assert_true(k > 0);
	assert_int_equal(remove_(e, &d, l.d[k].name, false), 0);
	assert_int_equal(list(e, &d, l.d[k].cookie, &m, &eof), 0);
	assert_true(eof);
	assert_int_equal(m.n, l.n - (unsigned)k - 1);
	for (unsigned i = 0; i < m.n; i++) {
		assert_string_equal(m.d[i].name, l.d[k + 1 + (int)i].name);
		assert_int_equal(m.d[i].cookie, l.d[k + 1 + (int)i].cookie);
	}
	/* and a name added later comes after all of them */
	assert_int_equal(create(e, &d, "late", 0644, true, &f, NULL), 0);
	put(&f);
	assert_int_equal(list(e, &d, 0, &l, &eof), 0);
	assert_int_equal(l.n, 7);
	if (!e->posix)
		assert_string_equal(l.d[6].name, "late");

	/* read permission needed; not a directory */
	assert_int_equal(chmod_(e, &d, 0711), 0);
	as(e, 1000, 1000, 0, NULL);
	assert_int_equal(list(e, &d, 0, &l, &eof), -EACCES);
	assert_int_equal(lookup(e, &d, "late", &f), 0); /* search is enough */
	assert_int_equal(list(e, &f, 0, &l, &eof), -ENOTDIR);
	put(&f);
	put(&d);
}

static void case_permissions(struct env *e)
{
	static const uint32_t grp500[] = { 500 };
	struct obj d, g, f, s, t;

	/* root's 0755 directory: others may search, not write */
	assert_int_equal(mkdir_(e, NULL, "d", 0755, &d), 0);
	/* 0666: protected_hardlinks lets others link it (LINK below fails
	 * for the directory alone) */
	assert_int_equal(create(e, &d, "in", 0666, true, &f, NULL), 0);
	put(&f);
	as(e, 1000, 1000, 0, NULL);
	assert_int_equal(create(e, &d, "x", 0644, true, &f, NULL), -EACCES);
	assert_int_equal(mkdir_(e, &d, "x", 0755, &f), -EACCES);
	assert_int_equal(remove_(e, &d, "in", false), -EACCES);
	assert_int_equal(rename_(e, &d, "in", NULL, "out"), -EACCES);
	assert_int_equal(lookup(e, &d, "in", &f), 0);
	assert_int_equal(fs_link(&e->c, f.fe, d.fe, "x"), -EACCES);
	put(&f);
	assert_int_equal(fs_access(&e->c, d.fe, &d.st, R_OK | X_OK), 0);
	assert_int_equal(fs_access(&e->c, d.fe, &d.st, W_OK), -EACCES);
	as_root(e);
	assert_int_equal(chmod_(e, &d, 0700), 0);
	as(e, 1000, 1000, 0, NULL);
	assert_int_equal(lookup(e, &d, "in", &f), -EACCES); /* no search */

	/* a group's directory: the caller's group or a supplementary one */
	as_root(e);
	assert_int_equal(mkdir_(e, NULL, "g", 0770, &g), 0);
	assert_int_equal(chown_(e, &g, -1, 500), 0);
	assert_int_equal(g.st.st_gid, 500);
	as(e, 1000, 1000, 0, NULL);
	assert_int_equal(create(e, &g, "x", 0644, true, &f, NULL), -EACCES);
	as(e, 1000, 1000, 1, grp500);
	assert_int_equal(create(e, &g, "x", 0644, true, &f, NULL), 0);
	assert_int_equal(f.st.st_gid, 1000);
	put(&f);
	as(e, 1000, 500, 0, NULL);
	assert_int_equal(create(e, &g, "y", 0644, true, &f, NULL), 0);
	put(&f);

	/* the classes: owner first, then group, then other */
	as(e, 1000, 1000, 0, NULL);
	assert_int_equal(create(e, NULL, "f", 0460, true, &f, NULL), 0);
	assert_int_equal(fs_access(&e->c, f.fe, &f.st, R_OK), 0);
	assert_int_equal(fs_access(&e->c, f.fe, &f.st, W_OK), -EACCES); /* owner: r-- */
	as(e, 1001, 1002, 1, (const uint32_t[]){ 1000 });
	assert_int_equal(fs_access(&e->c, f.fe, &f.st, R_OK | W_OK), 0);  /* group: rw- */
	as(e, 1001, 1001, 0, NULL);
	assert_int_equal(fs_access(&e->c, f.fe, &f.st, R_OK), -EACCES);   /* other: --- */
	/* open: the owner whatever the mode (knfsd); read with execute */
	as(e, 1000, 1000, 0, NULL);
	assert_int_equal(chmod_(e, &f, 0000), 0);
	assert_int_equal(fs_open(&e->c, f.fe, &f.st, O_RDONLY), 0);
	assert_int_equal(fs_open(&e->c, f.fe, &f.st, O_WRONLY), 0);
	assert_int_equal(chmod_(e, &f, 0711), 0);
	as(e, 1001, 1001, 0, NULL);
	assert_int_equal(fs_open(&e->c, f.fe, &f.st, O_RDONLY), 0);
	assert_int_equal(fs_open(&e->c, f.fe, &f.st, O_WRONLY), -EACCES);
	/* root: read and write always, execute only with an x bit */
	as_root(e);
	assert_int_equal(fs_access(&e->c, f.fe, &f.st, R_OK | W_OK | X_OK), 0);
	assert_int_equal(chmod_(e, &f, 0644), 0);
	assert_int_equal(fs_access(&e->c, f.fe, &f.st, R_OK | W_OK), 0);
	assert_int_equal(fs_access(&e->c, f.fe, &f.st, X_OK), -EACCES);
	assert_int_equal(fs_access(&e->c, d.fe, &d.st, X_OK), 0); /* 0700, search */
	put(&f);

	/* the sticky root: only the file's owner (or the directory's, or
	 * root) takes its name away */
	as(e, 1000, 1000, 0, NULL);
	assert_int_equal(create(e, NULL, "s", 0666, true, &s, NULL), 0);
	as(e, 1001, 1001, 0, NULL);
	assert_int_equal(remove_(e, NULL, "s", false), -EPERM);
	assert_int_equal(rename_(e, NULL, "s", NULL, "t"), -EPERM);
	assert_int_equal(create(e, NULL, "t", 0644, true, &t, NULL), 0);
	assert_int_equal(rename_(e, NULL, "t", NULL, "s"), -EPERM); /* over s */
	assert_int_equal(remove_(e, NULL, "t", false), 0);
	put(&t);
	as(e, 1000, 1000, 0, NULL);
	assert_int_equal(rename_(e, NULL, "s", NULL, "s2"), 0);
	assert_int_equal(remove_(e, NULL, "s2", false), 0);
	put(&s);
	put(&g);
	put(&d);
}

static void case_setattr(struct env *e)
{
	struct obj f, d;
	char c;

	as(e, 1000, 1000, 0, NULL);
	assert_int_equal(create(e, NULL, "f", 0644, true, &f, NULL), 0);
	assert_int_equal(set_times(e, &f, FS_SET_TO_CLIENT_TIME, PAST, PAST + 1), 0);
	assert_int_equal(f.st.st_atim.tv_sec, PAST);
	assert_int_equal(f.st.st_mtim.tv_sec, PAST + 1);
	assert_int_equal(f.st.st_mtim.tv_nsec, 0);
	assert_true(f.st.st_ctim.tv_sec > PAST + 1);
	/* size: mtime moves */
	assert_int_equal(truncate_(e, &f, 100), 0);
	assert_int_equal(f.st.st_size, 100);
	assert_true(f.st.st_mtim.tv_sec > PAST + 1);
	assert_int_equal(chmod_(e, &f, 0600), 0);
	assert_int_equal(f.st.st_mode, S_IFREG | 0600);
	/* owner: only root gives a file away; the owner picks its groups */
	assert_int_equal(chown_(e, &f, 1001, -1), -EPERM);
	assert_int_equal(chown_(e, &f, 1000, -1), 0); /* to itself */
	assert_int_equal(chown_(e, &f, -1, 500), -EPERM);
	as(e, 1000, 1000, 1, (const uint32_t[]){ 500 });
	assert_int_equal(chown_(e, &f, -1, 500), 0);
	assert_int_equal(f.st.st_gid, 500);

	/* another caller: not a writer of 0600, not the owner */
	as(e, 1001, 1001, 0, NULL);
	assert_int_equal(truncate_(e, &f, 0), -EACCES);
	assert_int_equal(set_times(e, &f, FS_SET_TO_SERVER_TIME, 0, 0), -EACCES);
	assert_int_equal(set_times(e, &f, FS_SET_TO_CLIENT_TIME, PAST, PAST), -EPERM);
	assert_int_equal(chmod_(e, &f, 0666), -EPERM);
	as(e, 1000, 1000, 0, NULL);
	assert_int_equal(chmod_(e, &f, 0666), 0);
	/* now a writer: the server's time only */
	as(e, 1001, 1001, 0, NULL);
	assert_int_equal(set_times(e, &f, FS_SET_TO_CLIENT_TIME, PAST, PAST), -EPERM);
	assert_int_equal(set_times(e, &f, FS_SET_TO_SERVER_TIME, 0, 0), 0);
	assert_true(f.st.st_mtim.tv_sec > PAST);
	assert_int_equal(truncate_(e, &f, 10), 0);
	assert_int_equal(f.st.st_size, 10);
	/* root gives it away */
	as_root(e);
	assert_int_equal(chown_(e, &f, 1001, 1001), 0);
	assert_int_equal(f.st.st_uid, 1001);
	assert_int_equal(f.st.st_gid, 1001);

	/* S_ISGID asked by a caller outside the file's group: dropped */
	assert_int_equal(chown_(e, &f, 1000, 500), 0);
	as(e, 1000, 1000, 0, NULL);
	assert_int_equal(chmod_(e, &f, 02755), 0);
	assert_int_equal(f.st.st_mode & 07777, 0755);
	/* a write by the owner (not root) clears S_ISUID */
	as_root(e);
	assert_int_equal(chmod_(e, &f, 04755), 0);
	assert_int_equal(f.st.st_mode & 07777, 04755);
	as(e, 1000, 1000, 0, NULL);
	write_ok(e, &f, 0, "w", 1);
	getattr(e, &f);
	assert_int_equal(f.st.st_mode & 07777, 0755);
	/*
	 * S_ISGID without group execute: a write keeps it for a member of
	 * the file's group and clears it for anyone else (Linux since 6.0,
	 * what the kernel's nfsd answered in vm/memory-backend).
	 */
	as_root(e);
	assert_int_equal(chmod_(e, &f, 02666), 0);
	assert_int_equal(f.st.st_gid, 500);
	as(e, 1002, 1002, 1, (const uint32_t[]){ 500 });
	write_ok(e, &f, 0, "w", 1);
	getattr(e, &f);
	assert_int_equal(f.st.st_mode & 07777, 02666);
	as(e, 1001, 1001, 0, NULL);
	write_ok(e, &f, 0, "w", 1);
	getattr(e, &f);
	assert_int_equal(f.st.st_mode & 07777, 0666);
	/* and a chown, by anyone, too */
	as_root(e);
	assert_int_equal(chmod_(e, &f, 04755), 0);
	assert_int_equal(chown_(e, &f, 1000, -1), 0);
	assert_int_equal(f.st.st_mode & 07777, 0755);
	assert_int_equal(fs_open(&e->c, f.fe, &f.st, O_RDONLY), 0);
	assert_int_equal(read_at(e, &f, 0, &c, 1), 1);
	assert_int_equal(c, 'w');

	/* size is for regular files */
	assert_int_equal(mkdir_(e, NULL, "d", 0755, &d), 0);
	assert_int_equal(truncate_(e, &d, 0), -EISDIR);
	put(&d);
	put(&f);
}

static void case_locks(struct env *e)
{
	struct fs_lockd l1, l2, l3;
	struct fs_lock_conflict cf;
	struct obj f;
	int acc = -1;

	assert_int_equal(create(e, NULL, "f", 0644, true, &f, NULL), 0);
	assert_int_equal(fs_lock_open(&e->c, f.fe, &l1, &acc), 0);
	assert_int_equal(acc, O_RDWR);
	assert_int_equal(fs_lock_open(&e->c, f.fe, &l2, &acc), 0);

	/* write against write: the conflict's range */
	assert_int_equal(fs_lock(&l1, F_WRLCK, 0, 100, false, &cf), 0);
	memset(&cf, 0, sizeof(cf));
	assert_int_equal(fs_lock(&l2, F_WRLCK, 50, 10, false, &cf), -EAGAIN);
	assert_int_equal(cf.cf_type, F_WRLCK);
	assert_int_equal(cf.cf_start, 0);
	assert_int_equal(cf.cf_len, 100);
	assert_int_equal(fs_lock(&l2, F_RDLCK, 99, 1, true, &cf), -EAGAIN);
	assert_int_equal(fs_lock(&l2, F_WRLCK, 100, 0, true, &cf), 0); /* after it */
	assert_int_equal(fs_lock(&l1, F_WRLCK, 20, 10, false, &cf), 0); /* own: no conflict */

	/* same owner downgrades, then reads share */
	assert_int_equal(fs_lock(&l1, F_RDLCK, 0, 100, false, &cf), 0);
	assert_int_equal(fs_lock(&l2, F_RDLCK, 10, 10, false, &cf), 0);
	assert_int_equal(fs_lock(&l2, F_WRLCK, 10, 10, false, &cf), -EAGAIN);
	assert_int_equal(cf.cf_type, F_RDLCK);
	assert_int_equal(cf.cf_start, 0);
	assert_int_equal(cf.cf_len, 100);
	/* the upgrade waits for the other reader */
	assert_int_equal(fs_lock(&l1, F_WRLCK, 0, 100, false, &cf), -EAGAIN);
	assert_int_equal(cf.cf_type, F_RDLCK);
	assert_int_equal(cf.cf_start, 10);
	assert_int_equal(cf.cf_len, 10);
	assert_int_equal(fs_lock(&l2, F_UNLCK, 0, 0, false, &cf), 0);
	assert_int_equal(fs_lock(&l1, F_WRLCK, 0, 100, false, &cf), 0);

	/* unlocking the middle splits it in two */
	assert_int_equal(fs_lock(&l1, F_UNLCK, 40, 20, false, &cf), 0);
	assert_int_equal(fs_lock(&l2, F_WRLCK, 40, 20, true, &cf), 0);
	assert_int_equal(fs_lock(&l2, F_WRLCK, 39, 1, true, &cf), -EAGAIN);
	assert_int_equal(cf.cf_start, 0);
	assert_int_equal(cf.cf_len, 40);
	assert_int_equal(fs_lock(&l2, F_WRLCK, 60, 1, true, &cf), -EAGAIN);
	assert_int_equal(cf.cf_start, 60);
	assert_int_equal(cf.cf_len, 40);
	/* ranges of one type that touch merge into one */
	assert_int_equal(fs_lock(&l1, F_WRLCK, 40, 20, false, &cf), 0);
	assert_int_equal(fs_lock(&l2, F_RDLCK, 0, 0, true, &cf), -EAGAIN);
	assert_int_equal(cf.cf_start, 0);
	assert_int_equal(cf.cf_len, 100);
	/* to the end of the file (len 0) */
	assert_int_equal(fs_lock(&l1, F_RDLCK, 1000, 0, false, &cf), 0);
	assert_int_equal(fs_lock(&l2, F_WRLCK, 5000, 5, true, &cf), -EAGAIN);
	assert_int_equal(cf.cf_type, F_RDLCK);
	assert_int_equal(cf.cf_start, 1000);
	assert_int_equal(cf.cf_len, 0);
	assert_int_equal(cf.cf_pid, 0); /* an owner's lock, no process */
	assert_int_equal(fs_lock(&l1, F_UNLCK, 1000, 0, false, NULL), 0);
	/* offsets are off_t: past INT64_MAX -EINVAL, a range ending past it
	 * -EOVERFLOW; one ending at it reaches the end (len 0) */
	assert_int_equal(fs_lock(&l1, F_WRLCK, (uint64_t)INT64_MAX + 1, 1, false,
				 &cf), -EINVAL);
	assert_int_equal(fs_lock(&l1, F_WRLCK, 0, (uint64_t)INT64_MAX + 1, false,
				 &cf), -EINVAL);
	assert_int_equal(fs_lock(&l1, F_WRLCK, INT64_MAX - 1, 5, false, &cf),
			 -EOVERFLOW);
	assert_int_equal(fs_lock(&l1, F_WRLCK, INT64_MAX - 9, 10, false, &cf), 0);
	assert_int_equal(fs_lock(&l2, F_RDLCK, INT64_MAX, 1, true, &cf), -EAGAIN);
	assert_int_equal(cf.cf_start, INT64_MAX - 9);
	assert_int_equal(cf.cf_len, 0);
	assert_int_equal(fs_lock(&l1, F_UNLCK, INT64_MAX - 9, 0, false, &cf), 0);
	/* a failed set need not describe its conflict */
	assert_int_equal(fs_lock(&l2, F_WRLCK, 0, 1, false, NULL), -EAGAIN);

	/* another reference to the description: the same owner's locks, held
	 * until the last reference closes */
	assert_int_equal(fs_lock_dup(&l1, &l3), 0);
	assert_int_equal(fs_lock(&l3, F_WRLCK, 0, 50, false, &cf), 0);
	fs_lock_close(&l1);
	assert_int_equal(fs_lock(&l2, F_RDLCK, 0, 1, true, &cf), -EAGAIN);
	fs_lock_close(&l3);
	assert_int_equal(fs_lock(&l2, F_WRLCK, 0, 0, false, &cf), 0);
	fs_lock_close(&l2);
	put(&f);
}

static void case_handles(struct env *e)
{
	uint8_t fh[RPCRDMA_NFS3_FHSIZE], fh2[RPCRDMA_NFS3_FHSIZE];
	uint32_t len, len2;
	struct stat st;
	struct obj f;
	char buf[8];

	assert_int_equal(fs_fh_of(&e->c, e->root, "", fh, &len), 0);
	assert_int_equal(decode(e, fh, len, &st), 0);
	assert_int_equal(st.st_ino, e->rst.st_ino);
	assert_true(fs_is_root(e->exp, &st));
	assert_int_equal(create(e, NULL, "f", 0644, true, &f, NULL), 0);
	assert_int_equal(fs_fh_of(&e->c, e->root, "f", fh, &len), 0);
	assert_int_equal(fs_fh_of(&e->c, f.fe, "", fh2, &len2), 0);
	assert_int_equal(len, len2);
	assert_memory_equal(fh, fh2, len); /* the same on every call */
	assert_int_equal(decode(e, fh, len, &st), 0);
	assert_int_equal(st.st_ino, f.st.st_ino);
	assert_int_equal(fs_fh_of(&e->c, e->root, "nope", fh2, &len2), -ENOENT);
	write_ok(e, &f, 0, "kept", 4);
	/* no name left: memory answers -ESTALE at once; the kernel's
	 * open_by_handle_at (posix) still finds an inode someone holds open
	 * (with no links), until the last reference drops.  The held object
	 * reads in both. */
	assert_int_equal(remove_(e, NULL, "f", false), 0);
	if (e->posix) {
		assert_int_equal(decode_direct(e, fh, len, &st), 0);
		assert_int_equal(st.st_nlink, 0);
	} else {
		assert_int_equal(decode_direct(e, fh, len, &st), -ESTALE);
	}
	assert_int_equal(fs_open(&e->c, f.fe, &f.st, O_RDONLY), 0);
	assert_int_equal(read_at(e, &f, 0, buf, sizeof(buf)), 4);
	assert_memory_equal(buf, "kept", 4);
	put(&f);
	assert_int_equal(decode_direct(e, fh, len, &st), -ESTALE);
	assert_int_equal(decode(e, fh, len, &st), -ESTALE);
}

static void case_statfs(struct env *e)
{
	struct fs_statfs sf;

	assert_int_equal(fs_statfs(&e->c, e->root, &sf), 0);
	assert_true(sf.sf_bytes >= sf.sf_bfree);
	assert_true(sf.sf_bfree >= sf.sf_bavail);
	assert_true(sf.sf_files >= sf.sf_ffree);
	assert_int_equal(sf.sf_namemax, 255);
	assert_true(sf.sf_linkmax > 1);
	if (!e->posix) {
		assert_int_equal(sf.sf_bytes, 256 * MB);
		assert_int_equal(sf.sf_bfree, 256 * MB);
		assert_int_equal(sf.sf_files, 65536);
		assert_int_equal(sf.sf_ffree, 65535); /* the root */
		assert_int_equal(sf.sf_linkmax, 65000);
	}
}

/* set-group-id directories hand their group down (and S_ISGID to
 * subdirectories); protected hard links */
static void case_group_dirs(struct env *e)
{
	static const uint32_t grp500[] = { 500 };
	struct obj sg, f, sub, x;
	int prot = -1;
	FILE *fp;

	assert_int_equal(mkdir_(e, NULL, "sg", 0777, &sg), 0);
	assert_int_equal(chown_(e, &sg, -1, 500), 0);
	assert_int_equal(chmod_(e, &sg, 02777), 0);
	assert_int_equal(sg.st.st_mode & 07777, 02777);
	as(e, 1000, 1000, 0, NULL);
	assert_int_equal(create(e, &sg, "f", 0644, true, &f, NULL), 0);
	assert_int_equal(f.st.st_gid, 500);       /* the directory's group */
	assert_int_equal(f.st.st_uid, 1000);
	assert_int_equal(mkdir_(e, &sg, "sub", 0755, &sub), 0);
	assert_int_equal(sub.st.st_gid, 500);
	assert_int_equal(sub.st.st_mode & 07777, 02755); /* inherited */
	/* a file asking S_ISGID with group execute in a group the caller is
	 * not in: dropped; a member keeps it */
	assert_int_equal(create(e, &sg, "x1", 02750, true, &x, NULL), 0);
	assert_int_equal(x.st.st_mode & 07777, 0750);
	put(&x);
	as(e, 1000, 1000, 1, grp500);
	assert_int_equal(create(e, &sg, "x2", 02750, true, &x, NULL), 0);
	assert_int_equal(x.st.st_mode & 07777, 02750);
	put(&x);
	put(&sub);

	/* protected_hardlinks (memory: always; posix: as the sysctl says):
	 * a caller who is not the owner links only a file it may read and
	 * write */
	if (e->posix) {
		fp = fopen("/proc/sys/fs/protected_hardlinks", "r");
		if (fp) {
			if (fscanf(fp, "%d", &prot) != 1)
				prot = -1;
			fclose(fp);
		}
	} else {
		prot = 1;
	}
	as(e, 1001, 1001, 0, NULL);
	if (prot == 1)
		assert_int_equal(fs_link(&e->c, f.fe, e->root, "l1"), -EPERM);
	else if (prot == 0)
		assert_int_equal(fs_link(&e->c, f.fe, e->root, "l1"), 0);
	as(e, 1000, 1000, 0, NULL);
	assert_int_equal(chmod_(e, &f, 0666), 0);
	as(e, 1001, 1001, 0, NULL);
	assert_int_equal(fs_link(&e->c, f.fe, e->root, "l2"), 0);
	put(&f);
	put(&sg);
}

/* memory only: the byte and node limits (-ENOSPC past them) */
static void case_limits(struct env *e)
{
	static const char page[4096];
	struct obj f, g;
	struct fs_statfs sf;
	size_t done = 1;
	char name[16];
	uint64_t ent; /* what a name costs besides its characters */

	if (e->posix)
		skip();
	assert_int_equal(fs_memory_set_limits(e->exp, 32768, 5), 0);
	assert_int_equal(create(e, NULL, "big", 0644, true, &f, NULL), 0);
	assert_int_equal(fs_statfs(&e->c, e->root, &sf), 0);
	ent = 32768 - sf.sf_bfree - 3;
	assert_true(ent >= 32 && ent < 256);
	assert_int_equal(fs_open(&e->c, f.fe, &f.st, O_WRONLY), 0);
	for (unsigned i = 0; i < 7; i++) {
		assert_int_equal(write_at(e, &f, i * 4096ull, page, 4096, &done), 0);
		assert_int_equal(done, 4096);
	}
	/* 7 pages and a name: one more page is past 32768 */
	assert_int_equal(write_at(e, &f, 7 * 4096ull, page, 4096, &done), -ENOSPC);
	assert_int_equal(done, 0);
	assert_int_equal(write_at(e, &f, 1ull << 40, "x", 1, &done), -ENOSPC);
	/* within a page already there: no new space */
	assert_int_equal(write_at(e, &f, 100, "x", 1, &done), 0);
	getattr(e, &f);
	assert_int_equal(f.st.st_size, 7 * 4096);
	assert_int_equal(fs_statfs(&e->c, e->root, &sf), 0);
	assert_int_equal(sf.sf_bytes, 32768);
	assert_int_equal(sf.sf_bfree, 32768 - 7 * 4096 - 3 - ent);
	assert_int_equal(truncate_(e, &f, 0), 0);
	assert_int_equal(fs_statfs(&e->c, e->root, &sf), 0);
	assert_int_equal(sf.sf_bfree, 32768 - 3 - ent);

	/* nodes: the root, big, and three more */
	for (unsigned i = 0; i < 3; i++) {
		snprintf(name, sizeof(name), "n%u", i);
		assert_int_equal(create(e, NULL, name, 0644, true, &g, NULL), 0);
		put(&g);
	}
	assert_int_equal(create(e, NULL, "n3", 0644, true, &g, NULL), -ENOSPC);
	assert_int_equal(mkdir_(e, NULL, "n3", 0755, &g), -ENOSPC);
	assert_int_equal(fs_statfs(&e->c, e->root, &sf), 0);
	assert_int_equal(sf.sf_files, 5);
	assert_int_equal(sf.sf_ffree, 0);
	assert_int_equal(remove_(e, NULL, "n0", false), 0);
	assert_int_equal(create(e, NULL, "n3", 0644, true, &g, NULL), 0);
	put(&g);

	/* a write that fits in part stops short, and says so */
	assert_int_equal(fs_memory_set_limits(e->exp, 3 + 3 * 2 + 4 * ent + 2 * 4096 + 100,
						 5), 0);
	{
		static const char three[3 * 4096];

		assert_int_equal(write_at(e, &f, 0, three, sizeof(three), &done), 0);
		assert_int_equal(done, 2 * 4096);
	}
	getattr(e, &f);
	assert_int_equal(f.st.st_size, 2 * 4096);
	put(&f);
	assert_int_equal(fs_memory_set_limits(e->exp, 0, 0), 0); /* defaults */
	assert_int_equal(fs_statfs(&e->c, e->root, &sf), 0);
	assert_int_equal(sf.sf_bytes, 256 * MB);
}

/*
 * memory only: names count against bytes= by what they hold, not only by
 * their characters.  A client with one file (nodes= spent) adds names
 * to it with LINK: each costs the server a directory entry (links,
 * cookie, hash, the name) and a readdir slot, at least 32 bytes however
 * short the name.  Under a 64 KiB limit the names must stop long before
 * 64 KiB / 32 of them (counting only characters, the byte limit let
 * 64 KiB / 7 seven-character names in: ten times the memory allowed).
 */
static void case_name_limits(struct env *e)
{
	struct obj f;
	unsigned n = 0;
	char name[16];
	int err = 0;

	if (e->posix)
		skip();
	assert_int_equal(fs_memory_set_limits(e->exp, 64 * KB, 2), 0);
	assert_int_equal(create(e, NULL, "f", 0644, true, &f, NULL), 0);
	while (n < 60000) {
		snprintf(name, sizeof(name), "l%06u", n);
		err = fs_link(&e->c, f.fe, e->root, name);
		if (err)
			break;
		n++;
	}
	assert_int_equal(err, -ENOSPC);
	assert_true(n * 32ull <= 64 * KB);
	put(&f);
}

/* memory only: handles of another generation, type or length are STALE */
static void case_memory_keys(struct env *e)
{
	const struct fs_backend *be = e->exp->ex_be;
	uint8_t key[FS_BE_KEY_MAX];
	uint32_t len, type;
	struct fs_fentry l;
	struct stat st;

	if (e->posix)
		skip();
	assert_int_equal(be->be_fh_key(e->exp, e->root, "", key, &len, &type), 0);
	assert_int_equal(len, 16);
	assert_int_equal(type, 0);
	fs_fentry_init(&l);
	assert_int_equal(be->be_fh_decode(e->exp, type, key, len, &l, &st), 0);
	assert_int_equal(st.st_ino, e->rst.st_ino);
	be->be_release(&l);
	fs_fentry_init(&l);
	assert_int_equal(be->be_fh_decode(e->exp, 1, key, len, &l, &st), -ESTALE);
	assert_int_equal(be->be_fh_decode(e->exp, 0, key, len - 1, &l, &st), -ESTALE);
	key[15] ^= 1; /* another export's generation */
	assert_int_equal(be->be_fh_decode(e->exp, 0, key, len, &l, &st), -ESTALE);
	key[15] ^= 1;
	key[7] += 100; /* an id never made */
	assert_int_equal(be->be_fh_decode(e->exp, 0, key, len, &l, &st), -ESTALE);
	assert_null(l.fe_node);
	/* the backend's options */
	{
		struct rpcrdma_nfs3_export x = { 0 };

		assert_int_equal(be->be_export_open(&x, "/m", "bytes=1M,nodes=10"), 0);
		assert_true(x.ex_mem_fs);
		assert_int_equal(x.ex_fd, -1);
		x.ex_be = be;
		{
			struct fs_call c = { .c_exp = &x };
			struct fs_statfs sf;

			assert_int_equal(be->be_statfs(&c, NULL, &sf), 0);
			assert_int_equal(sf.sf_bytes, MB);
			assert_int_equal(sf.sf_files, 10);
		}
		be->be_export_close(&x);
		assert_int_equal(be->be_export_open(&x, "/m", "bytes=0"), -EINVAL);
		assert_int_equal(be->be_export_open(&x, "/m", "size=1"), -EINVAL);
		assert_int_equal(be->be_export_open(&x, "/m", "bytes"), -EINVAL);
		/* the same path, the same device number (the client's fsid) */
		assert_int_equal(be->be_export_open(&x, "/mem", NULL), 0);
		assert_int_equal(x.ex_dev, e->exp->ex_dev);
		be->be_export_close(&x);
	}
}

/* ---- leases (be_lease_open, be_lease_close) ---- */

/* The break callback: counts its calls for @arg. */
static void lease_hit(void *arg, struct fs_lease *ls)
{
	(void)ls;
	atomic_fetch_add((atomic_int *)arg, 1);
}

/* wait_hits - true once *@n reaches @want, within @ms milliseconds. */
static bool wait_hits(atomic_int *n, int want, int ms)
{
	for (int i = 0; i < ms; i++) {
		if (atomic_load(n) >= want)
			return true;
		usleep(1000);
	}
	return atomic_load(n) >= want;
}

/* A second export of the same tree (memory: "another gateway"), root
 * acting, its object @name into @o. */
struct gw {
	struct env g;
};

static void gw_open(struct env *e, struct gw *w, const char *name, struct obj *o)
{
	memset(w, 0, sizeof(*w));
	w->g.be = e->be;
	w->g.posix = e->posix;
	memcpy(w->g.dir, e->dir, sizeof(w->g.dir));
	assert_int_equal(open_export(&w->g), 0);
	w->g.c.c_exp = w->g.exp;
	w->g.c.c_as_caller = true; /* root, as the memory backend checks */
	assert_int_equal(fs_root(w->g.exp, &w->g.rl, &w->g.root, &w->g.rst), 0);
	assert_int_equal(lookup(&w->g, NULL, name, o), 0);
}

static void gw_close(struct gw *w)
{
	fs_fcache_put(w->g.root);
	close_export(&w->g);
}

/* change - a change of @name from outside this export: posix, a local
 * open(2) for writing (O_NONBLOCK: with a lease out it fails with
 * EWOULDBLOCK and starts the break); memory, a write through another
 * export of the tree.  Return: 0 or the negative errno of the open or
 * the write. */
static int change(struct env *e, const char *name)
{
	char path[128];
	int fd;

	if (e->posix) {
		snprintf(path, sizeof(path), "%s/%s", e->dir, name);
		fd = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
		if (fd < 0)
			return -errno;
		close(fd);
		return 0;
	} else {
		struct gw w;
		struct obj o;
		int err;

		gw_open(e, &w, name, &o);
		err = fs_open(&w.g.c, o.fe, &o.st, O_WRONLY);
		if (!err)
			err = write_at(&w.g, &o, 0, "z", 1, NULL);
		put(&o);
		gw_close(&w);
		return err;
	}
}

static void case_leases(struct env *e)
{
	atomic_int hits = 0, hits2 = 0;
	struct fs_lease ls, ls2;
	struct obj f, d;
	char path[128];
	int fd;

	assert_int_equal(create(e, NULL, "f", 0644, true, &f, NULL), 0);
	assert_int_equal(fs_lease_open(&e->c, f.fe, lease_hit, &hits, &ls), 0);
	assert_non_null(ls.ls_be);
	/* a reader from outside breaks nothing */
	if (e->posix) {
		snprintf(path, sizeof(path), "%s/f", e->dir);
		fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
		assert_true(fd >= 0);
		close(fd);
	}
	usleep(50 * 1000);
	assert_int_equal(atomic_load(&hits), 0);
	/* a change from outside: the holder is told within a bounded wait;
	 * posix holds the writer off (EWOULDBLOCK), memory lets it on */
	assert_int_equal(change(e, "f"), e->posix ? -EAGAIN : 0);
	assert_true(wait_hits(&hits, 1, 5000));
	fs_lease_close(&ls);
	assert_null(ls.ls_be);
	/* given back: the writer goes on, and nothing is told any more */
	int before = atomic_load(&hits);

	assert_int_equal(change(e, "f"), 0);
	usleep(100 * 1000);
	assert_int_equal(atomic_load(&hits), before);

	if (!e->posix) {
		/* memory: a change through the lease's own export is the
		 * layer's to tell (the change hook): no break */
		assert_int_equal(fs_lease_open(&e->c, f.fe, lease_hit, &hits, &ls), 0);
		write_ok(e, &f, 0, "own", 3);
		assert_int_equal(atomic_load(&hits), before);
		/* removal and rename through another export break it */
		struct gw w;
		struct obj o;

		gw_open(e, &w, "f", &o);
		assert_int_equal(fs_rename(&w.g.c, w.g.root, "f", w.g.root, "f2", false), 0);
		assert_int_equal(atomic_load(&hits), before + 1);
		assert_int_equal(fs_remove(&w.g.c, w.g.root, "f2", false), 0);
		assert_int_equal(atomic_load(&hits), before + 2);
		put(&o);
		gw_close(&w);
		fs_lease_close(&ls);
	} else {
		/* posix: a file open for writing somewhere gets no lease */
		fd = open(path, O_WRONLY | O_CLOEXEC);
		assert_true(fd >= 0);
		assert_int_equal(fs_lease_open(&e->c, f.fe, lease_hit, &hits2, &ls2), -EAGAIN);
		assert_null(ls2.ls_be);
		close(fd);
		/* two leases on one file, both told of one writer */
		assert_int_equal(fs_lease_open(&e->c, f.fe, lease_hit, &hits, &ls), 0);
		assert_int_equal(fs_lease_open(&e->c, f.fe, lease_hit, &hits2, &ls2), 0);
		before = atomic_load(&hits);
		assert_int_equal(change(e, "f"), -EAGAIN);
		assert_true(wait_hits(&hits, before + 1, 5000));
		assert_true(wait_hits(&hits2, 1, 5000));
		fs_lease_close(&ls);
		fs_lease_close(&ls2);
		assert_int_equal(change(e, "f"), 0);
		/* this server's own write open is held off too (-EAGAIN, not
		 * 45 s), and breaks the lease */
		assert_int_equal(fs_lease_open(&e->c, f.fe, lease_hit, &hits2, &ls2), 0);
		assert_int_equal(fs_open(&e->c, f.fe, &f.st, O_WRONLY), -EAGAIN);
		assert_true(wait_hits(&hits2, 2, 5000));
		fs_lease_close(&ls2);
		assert_int_equal(fs_open(&e->c, f.fe, &f.st, O_WRONLY), 0);
	}
	put(&f);
	/* not a regular file */
	assert_int_equal(mkdir_(e, NULL, "d", 0755, &d), 0);
	assert_int_equal(fs_lease_open(&e->c, d.fe, lease_hit, &hits, &ls), -EINVAL);
	put(&d);
}

/* Threads at once, each in a directory of its own under the root. */
struct worker {
	struct env *w_env;
	struct fs_fentry *w_dir;
	struct stat w_dst;
	int w_err;
};

#define WORKER_FILES 100

static void *worker_run(void *arg)
{
	struct worker *w = arg;
	struct env *e = w->w_env;
	struct fs_call c = { .c_exp = e->exp };
	char name[16], buf[16];

	c.c_as_caller = false;
	if (fs_become_caller(&c)) {
		w->w_err = -EPERM;
		return NULL;
	}
	for (int i = 0; i < WORKER_FILES && !w->w_err; i++) {
		struct fs_fentry l, *fe;
		struct stat st;
		struct iovec iov = { name, 0 };
		size_t done;
		bool created;

		iov.iov_len = (size_t)snprintf(name, sizeof(name), "f%d", i);
		w->w_err = fs_create(&c, w->w_dir, &w->w_dst, name, 0644, true,
				     NULL, &l, &fe, &st, &created);
		if (w->w_err)
			break;
		w->w_err = fs_open(&c, fe, &st, O_WRONLY);
		if (!w->w_err)
			w->w_err = fs_write(&c, fe, &iov, 1, 0, FS_UNSTABLE, &done);
		if (!w->w_err)
			w->w_err = fs_open(&c, fe, &st, O_RDONLY);
		if (!w->w_err) {
			struct iovec r = { buf, sizeof(buf) };
			ssize_t n = fs_read(&c, fe, &r, 1, 0, false);

			if (n != (ssize_t)iov.iov_len || memcmp(buf, name, (size_t)n))
				w->w_err = -EIO;
		}
		fs_fcache_put(fe);
		if (!w->w_err && i % 2)
			w->w_err = fs_remove(&c, w->w_dir, name, false);
	}
	fs_cred_restore();
	return NULL;
}

static void case_threads(struct env *e)
{
	struct worker w[4];
	struct obj d[4];
	pthread_t t[4];
	static struct dlist l; /* stop_at 0: every entry */
	bool eof;

	for (int i = 0; i < 4; i++) {
		char name[16];

		snprintf(name, sizeof(name), "w%d", i);
		assert_int_equal(mkdir_(e, NULL, name, 0777, &d[i]), 0);
		w[i] = (struct worker){ .w_env = e, .w_dir = d[i].fe, .w_dst = d[i].st };
		assert_int_equal(pthread_create(&t[i], NULL, worker_run, &w[i]), 0);
	}
	for (int i = 0; i < 4; i++) {
		assert_int_equal(pthread_join(t[i], NULL), 0);
		assert_int_equal(w[i].w_err, 0);
		assert_int_equal(list(e, &d[i], 0, &l, &eof), 0);
		assert_true(eof);
		assert_int_equal(l.n, 2 + WORKER_FILES / 2);
		put(&d[i]);
	}
}

/* ---- share reservations ---- */

#define OWN(n) fs_share_owner(FS_SHARE_TAG_TEST, (n))
enum { SR = FS_SHARE_READ, SW = FS_SHARE_WRITE, SRW = SR | SW };

/*
 * The layer's table (fs_share_set(), a server's table: this one's calls
 * have no server) on both backends: within one server a reservation
 * denies another owner whatever the backend (posix has no be_share: the
 * layer alone denies).  Worked out from RFC 8881 9.7: an OPEN is refused
 * when another open denies an access it asks for, or has an access it
 * denies.
 */
static void case_shares(struct env *e)
{
	uint8_t fh[RPCRDMA_NFS3_FHSIZE];
	struct fs_fentry dl;
	struct obj f, g, d;
	struct stat st;
	uint32_t len, base = fs_shares_count(NULL);

	if (e->posix)
		assert_null(e->exp->ex_be->be_share); /* no deny modes on Linux */
	else
		assert_non_null(e->exp->ex_be->be_share);
	assert_int_equal(create(e, NULL, "f", 0644, true, &f, NULL), 0);
	assert_int_equal(create(e, NULL, "other", 0644, true, &d, NULL), 0);

	/* A reads and denies writing: B may read, not write */
	assert_int_equal(fs_share_set(&e->c, f.fe, OWN(1), SR, SW), 0);
	assert_int_equal(fs_share_set(&e->c, f.fe, OWN(2), SW, 0), -EBUSY);
	assert_int_equal(fs_share_set(&e->c, f.fe, OWN(2), SRW, 0), -EBUSY);
	assert_int_equal(fs_share_set(&e->c, f.fe, OWN(2), SR, 0), 0);
	/* the other way: B cannot deny reading, A reads */
	assert_int_equal(fs_share_set(&e->c, f.fe, OWN(2), SR, SR), -EBUSY);
	/* B denying write: A has no write access, so that is fine */
	assert_int_equal(fs_share_set(&e->c, f.fe, OWN(2), SR, SW), 0);
	/* a refused change left B's reservation as it was: C may not write */
	assert_int_equal(fs_share_set(&e->c, f.fe, OWN(3), SW, 0), -EBUSY);
	/* another file is not concerned */
	assert_int_equal(fs_share_set(&e->c, d.fe, OWN(3), SW, SRW), 0);
	/* the same owner upgrades its own: never its own conflict */
	assert_int_equal(fs_share_set(&e->c, d.fe, OWN(3), SRW, SRW), 0);
	assert_int_equal(fs_shares_count(NULL), base + 3);

	/* key identity: another entry of the file (decoded from its handle,
	 * so with fe_fh), and a hard link's, land on the same key */
	assert_int_equal(fs_fh_of(&e->c, f.fe, "", fh, &len), 0);
	assert_int_equal(fs_fh_decode(e->exp, fh, len, &dl, &st), 0);
	assert_int_equal(fs_share_set(&e->c, &dl, OWN(3), SW, 0), -EBUSY);
	assert_int_equal(fs_share_set_fh(&e->c, NULL, fh, len, OWN(3), SW, 0), -EBUSY);
	assert_int_equal(fs_link(&e->c, f.fe, e->root, "g"), 0);
	assert_int_equal(lookup(e, NULL, "g", &g), 0);
	assert_int_equal(fs_share_set(&e->c, g.fe, OWN(3), 0, 0), 0); /* C holds none there */
	assert_int_equal(fs_share_set(&e->c, g.fe, OWN(4), SR, SR), -EBUSY);

	/* drops: A, then B (access 0), then C (by owner): writing is free */
	fs_share_drop(NULL, OWN(1));
	assert_int_equal(fs_share_set(&e->c, g.fe, OWN(4), SW, 0), -EBUSY); /* B denies */
	assert_int_equal(fs_share_set(&e->c, &dl, OWN(2), 0, SRW), 0);
	assert_int_equal(fs_share_set(&e->c, g.fe, OWN(4), SW, 0), 0);
	fs_share_drop(NULL, OWN(3));
	assert_int_equal(fs_shares_count(NULL), base + 1);

	/* full: a new reservation is refused, a change of one held is not */
	fs_share_set_max(NULL, base + 2);
	assert_int_equal(fs_share_set(&e->c, d.fe, OWN(5), SR, 0), 0);
	assert_int_equal(fs_share_set(&e->c, d.fe, OWN(6), SR, 0), -ENOLCK);
	assert_int_equal(fs_share_set(&e->c, d.fe, OWN(5), SRW, 0), 0);
	fs_share_drop(NULL, OWN(5));
	assert_int_equal(fs_share_set(&e->c, d.fe, OWN(6), SR, 0), 0);
	fs_share_set_max(NULL, 0);
	fs_share_drop(NULL, OWN(6));
	fs_share_drop(NULL, OWN(4));
	assert_int_equal(fs_shares_count(NULL), base);
	fs_fcache_put(&dl);
	put(&g);
	put(&d);
	put(&f);
}

/*
 * memory only: be_share itself, through two exports of one path (a tree
 * two servers share): a reservation made through one export denies the
 * other's callers; one export's own owners are left to the layer; a drop,
 * and the export's close, give the file back.
 */
static void case_memory_share_exports(struct env *e)
{
	int (*share)(struct fs_call *, struct fs_fentry *, uint64_t, uint32_t,
		     uint32_t) = e->exp->ex_be->be_share;
	struct rpcrdma_nfs3_config cfg = { .nc_export = "/mem", .nc_backend = "memory" };
	struct rpcrdma_nfs3_export *exp2;
	struct fs_fentry rl2, *root2, l2, *f2;
	struct stat rst2, st;
	struct fs_call c2;
	struct obj f;

	if (e->posix)
		skip();
	assert_int_equal(create(e, NULL, "f", 0644, true, &f, NULL), 0);
	assert_int_equal(getrandom(cfg.nc_key, sizeof(cfg.nc_key), 0), sizeof(cfg.nc_key));
	assert_int_equal(rpcrdma_nfs3_export_open(&cfg, &exp2), 0);
	c2 = e->c;
	c2.c_exp = exp2;
	assert_int_equal(fs_root(exp2, &rl2, &root2, &rst2), 0);
	assert_int_equal(fs_lookup(&c2, root2, &rst2, "f", &l2, &f2, &st), 0);
	assert_int_equal(st.st_ino, f.st.st_ino); /* one tree */

	/* A through export 1 denies writing: B through export 2 may not write */
	assert_int_equal(share(&e->c, f.fe, OWN(1), SR, SW), 0);
	assert_int_equal(share(&c2, f2, OWN(2), SW, 0), -EBUSY);
	assert_int_equal(share(&c2, f2, OWN(2), SR, SR), -EBUSY); /* A reads */
	assert_int_equal(share(&c2, f2, OWN(2), SR, 0), 0);
	/* export 1's other owners are the layer's to check, not the backend's */
	assert_int_equal(share(&e->c, f.fe, OWN(3), SW, 0), 0);
	assert_int_equal(share(&e->c, f.fe, OWN(3), 0, 0), 0);
	/* A drops: B writes */
	assert_int_equal(share(&e->c, f.fe, OWN(1), 0, 0), 0);
	assert_int_equal(share(&c2, f2, OWN(2), SRW, SW), 0);
	assert_int_equal(share(&e->c, f.fe, OWN(1), SW, 0), -EBUSY);
	/* through the layer: its table has no record of B (made by the
	 * backend alone, as another server's), so be_share denies */
	assert_int_equal(fs_share_set(&e->c, f.fe, OWN(1), SW, 0), -EBUSY);
	assert_int_equal(share(&c2, f2, OWN(2), 0, 0), 0);
	/* one owner through both exports of one server (one layer table):
	 * one reservation, which the backend knows by the export that made
	 * it; changed and dropped through the other, nothing is left */
	assert_int_equal(fs_share_set(&e->c, f.fe, OWN(7), SR, SW), 0);
	assert_int_equal(fs_share_set(&c2, f2, OWN(7), SR, SRW), 0);
	assert_int_equal(share(&c2, f2, OWN(8), SR, 0), -EBUSY); /* denies reading now */
	assert_int_equal(fs_share_set(&c2, f2, OWN(7), 0, 0), 0);
	assert_int_equal(share(&c2, f2, OWN(8), SW, 0), 0);
	assert_int_equal(share(&c2, f2, OWN(8), 0, 0), 0);
	assert_int_equal(share(&c2, f2, OWN(2), SRW, SW), 0);
	/* export 2 closes: its reservations go with it */
	fs_fcache_put(f2);
	fs_fcache_put(root2);
	rpcrdma_nfs3_export_close(exp2);
	assert_int_equal(share(&e->c, f.fe, OWN(1), SW, SRW), 0);
	assert_int_equal(share(&e->c, f.fe, OWN(1), 0, 0), 0);
	put(&f);
}

/* ---- the table, run on each backend ---- */

static const struct be_case g_cases[] = {
	{ "create_lookup", case_create_lookup },
	{ "create_exists", case_create_exists },
	{ "mkdir_rmdir", case_mkdir_rmdir },
	{ "hard_links", case_hard_links },
	{ "symlink", case_symlink },
	{ "mknod", case_mknod },
	{ "read_write", case_read_write },
	{ "sparse", case_sparse },
	{ "rename", case_rename },
	{ "readdir", case_readdir },
	{ "permissions", case_permissions },
	{ "group_dirs", case_group_dirs },
	{ "setattr", case_setattr },
	{ "locks", case_locks },
	{ "handles", case_handles },
	{ "statfs", case_statfs },
	{ "limits", case_limits },
	{ "name_limits", case_name_limits },
	{ "memory_keys", case_memory_keys },
	{ "threads", case_threads },
	{ "leases", case_leases },
	{ "shares", case_shares },
	{ "memory_share_exports", case_memory_share_exports },
};
#define NCASES (sizeof(g_cases) / sizeof(g_cases[0]))

static const char *g_be; /* the backend of the group running */

static int env_setup(void **state)
{
	struct env *e = calloc(1, sizeof(*e));

	assert_non_null(e);
	e->bc = *state; /* the case (initial_state) */
	e->be = g_be;
	e->posix = !strcmp(g_be, "posix");
	if (e->posix) {
		snprintf(e->dir, sizeof(e->dir), "/tmp/fsbe.XXXXXX");
		assert_non_null(mkdtemp(e->dir));
		/* as the memory backend's root: 01777, root's */
		assert_int_equal(chmod(e->dir, 01777), 0);
	}
	fs_cred_restore();
	assert_int_equal(open_export(e), 0);
	e->c.c_exp = e->exp;
	as_root(e);
	assert_int_equal(fs_root(e->exp, &e->rl, &e->root, &e->rst), 0);
	*state = e;
	return 0;
}

static int env_teardown(void **state)
{
	struct env *e = *state;

	fs_cred_restore();
	fs_fcache_put(e->root);
	close_export(e);
	if (e->posix)
		nftw(e->dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	free(e);
	return 0;
}

static void run_case(void **state)
{
	struct env *e = *state;

	e->bc->fn(e);
}

static int run_backend(const char *be)
{
	struct CMUnitTest tests[NCASES];
	static char names[NCASES][64];
	char group[64];

	g_be = be;
	for (size_t i = 0; i < NCASES; i++) {
		snprintf(names[i], sizeof(names[i]), "%s/%s", be, g_cases[i].name);
		tests[i] = (struct CMUnitTest){
			.name = names[i],
			.test_func = run_case,
			.setup_func = env_setup,
			.teardown_func = env_teardown,
			.initial_state = (void *)&g_cases[i],
		};
	}
	snprintf(group, sizeof(group), "fs backend %s", be);
	return _cmocka_run_group_tests(group, tests, NCASES, NULL, NULL);
}

int main(void)
{
	int fails = run_backend("memory");

	if (!t_root())
		fprintf(stderr, "test_fs_backend: posix backend skipped "
				"(file handles need root)\n");
	else if (fs_backend_find("posix"))
		fails += run_backend("posix");
	return t_exit(fails);
}
