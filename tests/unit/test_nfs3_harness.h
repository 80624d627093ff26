/* SPDX-License-Identifier: MIT */
/*
 * test_nfs3_harness.h - build NFSv3 calls by hand, run them through
 * rpcrdma_nfs3_dispatch() and decode the results independently of the
 * server's encoders (layouts from RFC 1813).
 *
 * Backends.  Each test program runs its cases once per backend of the
 * file-serving layer (src/fs/fs_backend.h): "posix" on a temporary
 * directory when running as root (file handles need
 * CAP_DAC_READ_SEARCH; not root: its cases are reported skipped, never
 * passed), "memory" always, root or not (t_run_cases(); each case name
 * ends with its backend, " [posix]" or " [memory]").  A case prepares
 * and checks the exported tree with the t_fs_*() helpers: system calls on
 * the directory for posix (the kernel is the independent witness), the
 * layer's operations with uid 0's credentials for memory (the tree has
 * no other door).  Cases about the posix backend's own mechanics
 * (descriptors, fsync counts, RWF_NOWAIT) are marked T_POSIX_ONLY.
 */
#ifndef TEST_NFS3_HARNESS_H
#define TEST_NFS3_HARNESS_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <rpcrdma/nfs3.h>

#include "fs/fs.h"
#include "fs/fs_backend.h"
#include "test_root.h"

#define T_RES_BYTES (2u << 20)

/* ---- the backend under test ---- */

enum t_be { T_BE_POSIX, T_BE_MEMORY, T_BE_COUNT };

static const char *const t_be_names[T_BE_COUNT] = { "posix", "memory" };

/* The backend the cases of this program run on now (t_run_cases()). */
static enum t_be t_be_cur = T_BE_POSIX;

/* t_memory - do the cases run on the memory backend? */
static inline bool t_memory(void)
{
	return t_be_cur == T_BE_MEMORY;
}

struct t_call {
	uint8_t args[8192];
	size_t alen;
	struct rpcrdma_svc_req req;
	uint8_t *res;
	size_t rlen; /* result bytes written */
	size_t rpos; /* decode cursor */
	int ret;
};

static inline void t_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/*
 * t_make_dir - make @dir ("BASE/TAG.XXXXXX", mode 0777).  On the memory
 * backend nothing is made: @dir is a fresh name for the export
 * ("BASE/TAG.mem.PID.N"), which the tree's root takes.  0, or -1.
 */
static inline int t_make_dir(char *dir, size_t dirlen, const char *base,
			     const char *tag)
{
	static unsigned n;

	if (t_memory()) {
		snprintf(dir, dirlen, "%s/%s.mem.%d.%u", base, tag, (int)getpid(), n++);
		return 0;
	}
	snprintf(dir, dirlen, "%s/%s.XXXXXX", base, tag);
	if (!mkdtemp(dir))
		return -1;
	return chmod(dir, 0777);
}

/*
 * t_export_cfg - a configuration exporting @dir on the backend under test
 * with a key made from @seed and a max payload of 1 MiB (the rest zero:
 * defaults).
 */
static inline void t_export_cfg(struct rpcrdma_nfs3_config *cfg,
				const char *dir, unsigned seed)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->nc_export = dir;
	for (unsigned i = 0; i < sizeof(cfg->nc_key); i++)
		cfg->nc_key[i] = (uint8_t)(i * seed + 3);
	cfg->nc_max_payload = 1u << 20;
	cfg->nc_backend = t_be_names[t_be_cur];
}

/* t_fs_chmod - declared here for t_export_open() (below). */
static inline int t_fs_chmod(struct rpcrdma_nfs3_export *exp, const char *dir,
			     const char *name, mode_t mode);

/*
 * t_export_open - rpcrdma_nfs3_export_open() of @cfg; a new memory tree's
 * root is given mode 0777 as t_make_dir() gives a directory (the memory
 * backend makes it 01777).  0, or -1.
 */
static inline int t_export_open(const struct rpcrdma_nfs3_config *cfg,
				struct rpcrdma_nfs3_export **exp)
{
	if (rpcrdma_nfs3_export_open(cfg, exp))
		return -1;
	if (t_memory() && t_fs_chmod(*exp, cfg->nc_export, ".", 0777))
		return -1;
	return 0;
}

/*
 * t_export_dir - make @dir (t_make_dir()) and export it (t_export_cfg()):
 * into @exp (root squashed) and, when @nosquash is not NULL, @nosquash
 * (no_root_squash): two exports of one path, which serve one tree on
 * either backend.  0, or -1.
 */
static inline int t_export_dir(char *dir, size_t dirlen, const char *base,
			       const char *tag, unsigned seed,
			       struct rpcrdma_nfs3_export **exp,
			       struct rpcrdma_nfs3_export **nosquash)
{
	struct rpcrdma_nfs3_config cfg;

	if (t_make_dir(dir, dirlen, base, tag))
		return -1;
	t_export_cfg(&cfg, dir, seed);
	if (t_export_open(&cfg, exp))
		return -1;
	cfg.nc_no_root_squash = true;
	if (nosquash && rpcrdma_nfs3_export_open(&cfg, nosquash))
		return -1;
	return 0;
}

/* ---- encoding arguments ---- */

static inline void t_u32(struct t_call *c, uint32_t v)
{
	assert_true(c->alen + 4 <= sizeof(c->args));
	t_be32(c->args + c->alen, v);
	c->alen += 4;
}

static inline void t_u64(struct t_call *c, uint64_t v)
{
	t_u32(c, (uint32_t)(v >> 32));
	t_u32(c, (uint32_t)v);
}

static inline void t_opaque(struct t_call *c, const void *p, uint32_t len)
{
	t_u32(c, len);
	assert_true(c->alen + len + 3 <= sizeof(c->args));
	memcpy(c->args + c->alen, p, len);
	c->alen += len;
	while (c->alen % 4)
		c->args[c->alen++] = 0;
}

static inline void t_str(struct t_call *c, const char *s)
{
	t_opaque(c, s, (uint32_t)strlen(s));
}

/* a sattr3 with nothing set */
static inline void t_sattr_none(struct t_call *c)
{
	for (int i = 0; i < 6; i++)
		t_u32(c, 0);
}

/* a sattr3 setting only the mode */
static inline void t_sattr_mode(struct t_call *c, uint32_t mode)
{
	t_u32(c, 1);
	t_u32(c, mode);
	for (int i = 0; i < 5; i++)
		t_u32(c, 0);
}

static inline void t_begin(struct t_call *c, uint32_t proc, uint32_t uid,
			   uint32_t gid)
{
	uint8_t *res = c->res;

	memset(c, 0, sizeof(*c));
	c->res = res ? res : malloc(T_RES_BYTES);
	assert_non_null(c->res);
	c->req.rq_msg.rm_xid = 0x1234;
	c->req.rq_msg.rm_rpcvers = 2;
	c->req.rq_msg.rm_prog = RPCRDMA_NFS3_PROGRAM;
	c->req.rq_msg.rm_vers = 3;
	c->req.rq_msg.rm_proc = proc;
	c->req.rq_msg.rm_cred_flavor = 1; /* AUTH_SYS */
	c->req.rq_msg.rm_has_authsys = true;
	c->req.rq_msg.rm_authsys.as_uid = uid;
	c->req.rq_msg.rm_authsys.as_gid = gid;
}

static inline int t_run_len(struct t_call *c, void *exp, size_t reslen)
{
	memset(c->res, 0xee, reslen);
	rpcrdma_xdr_init(&c->req.rq_args, c->args, c->alen);
	rpcrdma_xdr_init(&c->req.rq_res, c->res, reslen);
	c->ret = rpcrdma_nfs3_dispatch(&c->req, exp);
	/* the test's own file operations run as root */
	rpcrdma_nfs3_thread_release();
	c->rlen = c->req.rq_res.xs_pos;
	/* The statistics hook: every successful result but NULL's reports
	 * the nfsstat3 it starts with. */
	if (c->ret == RPCRDMA_SVC_SUCCESS && c->req.rq_msg.rm_proc != 0) {
		assert_true(c->req.rq_has_status);
		assert_int_equal(c->req.rq_status, ((uint32_t)c->res[0] << 24) |
				 ((uint32_t)c->res[1] << 16) | ((uint32_t)c->res[2] << 8) | c->res[3]);
	} else {
		assert_false(c->req.rq_has_status);
	}
	c->rpos = 0;
	return c->ret;
}

static inline int t_run(struct t_call *c, void *exp)
{
	return t_run_len(c, exp, T_RES_BYTES);
}

static inline void t_free(struct t_call *c)
{
	free(c->res);
	c->res = NULL;
}

/* ---- decoding results ---- */

static inline uint32_t r_u32(struct t_call *c)
{
	const uint8_t *p = c->res + c->rpos;

	assert_true(c->rpos + 4 <= c->rlen);
	c->rpos += 4;
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

static inline uint64_t r_u64(struct t_call *c)
{
	uint64_t hi = r_u32(c);

	return hi << 32 | r_u32(c);
}

static inline const uint8_t *r_opaque(struct t_call *c, uint32_t *len)
{
	const uint8_t *p;

	*len = r_u32(c);
	assert_true(c->rpos + *len <= c->rlen);
	p = c->res + c->rpos;
	c->rpos += (*len + 3) & ~3u;
	return p;
}

struct t_fattr {
	uint32_t type, mode, nlink, uid, gid;
	uint64_t size, used;
	uint32_t rdev1, rdev2;
	uint64_t fsid, fileid;
	uint32_t atime[2], mtime[2], ctime[2];
};

static inline void r_fattr(struct t_call *c, struct t_fattr *a)
{
	a->type = r_u32(c);
	a->mode = r_u32(c);
	a->nlink = r_u32(c);
	a->uid = r_u32(c);
	a->gid = r_u32(c);
	a->size = r_u64(c);
	a->used = r_u64(c);
	a->rdev1 = r_u32(c);
	a->rdev2 = r_u32(c);
	a->fsid = r_u64(c);
	a->fileid = r_u64(c);
	a->atime[0] = r_u32(c);
	a->atime[1] = r_u32(c);
	a->mtime[0] = r_u32(c);
	a->mtime[1] = r_u32(c);
	a->ctime[0] = r_u32(c);
	a->ctime[1] = r_u32(c);
}

/* post_op_attr: returns whether attributes followed */
static inline bool r_post_op(struct t_call *c, struct t_fattr *a)
{
	struct t_fattr dummy;
	uint32_t follows = r_u32(c);

	assert_true(follows <= 1);
	if (follows)
		r_fattr(c, a ? a : &dummy);
	return follows;
}

static inline void r_wcc(struct t_call *c, struct t_fattr *post)
{
	if (r_u32(c)) { /* pre_op_attr: size, mtime, ctime */
		r_u64(c);
		r_u64(c);
		r_u64(c);
	}
	r_post_op(c, post);
}

/* ---- the exported tree, as a local process sees it (t_fs_*) ---- */

/*
 * Each helper acts on @name, a path below the export's root ("." or "":
 * the root itself; no ".." and no symlinks on the way), of export @exp
 * whose directory is @dir: on posix a system call on "@dir/@name" with the
 * test's own identity (root), on memory the layer's operation with uid 0's
 * credentials (a local process: the export's caches are not told).
 * Return: 0 (or what the helper says), or a negative errno.
 */

/* t_path - "@dir/@name" into @buf (PATH_MAX bytes). */
static inline void t_path(char *buf, const char *dir, const char *name)
{
	snprintf(buf, PATH_MAX, "%s/%s", dir, name);
}

/*
 * A walk through the layer (the memory helpers, and t_fs_fh() on either
 * backend): the directory holding @name's last component.
 */
struct t_mwalk {
	struct fs_call w_c;          /* uid 0, no caller switch */
	struct fs_fentry w_ent[2];
	struct fs_fentry *w_dir;
	struct stat w_dst;
	char w_buf[PATH_MAX];
	const char *w_last;          /* "." for the root itself */
};

/* t_mwalk - reach the directory of @name's last component. */
static inline int t_mwalk(struct rpcrdma_nfs3_export *exp, const char *name,
			  struct t_mwalk *w)
{
	char *comp, *next, *save = NULL;
	unsigned cur = 0;
	int err;

	memset(&w->w_c, 0, sizeof(w->w_c));
	w->w_c.c_exp = exp;
	err = fs_become_caller(&w->w_c);
	if (err)
		return err;
	snprintf(w->w_buf, sizeof(w->w_buf), "%s", name);
	err = fs_root(exp, &w->w_ent[cur], &w->w_dir, &w->w_dst);
	if (err)
		return err;
	w->w_last = ".";
	comp = strtok_r(w->w_buf, "/", &save);
	while (comp) {
		struct fs_fentry *fe;
		struct stat st;

		next = strtok_r(NULL, "/", &save);
		if (!next) {
			w->w_last = comp;
			break;
		}
		err = fs_lookup(&w->w_c, w->w_dir, &w->w_dst, comp,
				&w->w_ent[cur ^ 1], &fe, &st);
		if (err) {
			fs_fcache_put(w->w_dir);
			return err;
		}
		fs_fcache_put(w->w_dir);
		w->w_dir = fe;
		w->w_dst = st;
		cur ^= 1;
		comp = next;
	}
	return 0;
}

/* t_mwalk_obj - t_mwalk() and @name's object itself into @l (*@fe). */
static inline int t_mwalk_obj(struct rpcrdma_nfs3_export *exp, const char *name,
			      struct t_mwalk *w, struct fs_fentry *l,
			      struct fs_fentry **fe, struct stat *st)
{
	int err = t_mwalk(exp, name, w);

	if (err)
		return err;
	err = fs_lookup(&w->w_c, w->w_dir, &w->w_dst, w->w_last, l, fe, st);
	if (err)
		fs_fcache_put(w->w_dir);
	return err;
}

static inline int t_errno(int ret)
{
	return ret < 0 ? -errno : 0;
}

/* t_fs_lstat - @name's attributes, not following a symlink. */
static inline int t_fs_lstat(struct rpcrdma_nfs3_export *exp, const char *dir,
			     const char *name, struct stat *st)
{
	struct t_mwalk w;
	struct fs_fentry l, *fe;
	char p[PATH_MAX];
	int err;

	if (!t_memory()) {
		t_path(p, dir, name);
		return t_errno(lstat(p, st));
	}
	err = t_mwalk_obj(exp, name, &w, &l, &fe, st);
	if (err)
		return err;
	fs_fcache_put(fe);
	fs_fcache_put(w.w_dir);
	return 0;
}

/* t_fs_msetattr - carry out @sa on @name (memory only). */
static inline int t_fs_msetattr(struct rpcrdma_nfs3_export *exp, const char *name,
				const struct fs_sattr *sa)
{
	struct t_mwalk w;
	struct fs_fentry l, *fe;
	struct stat st;
	int err;

	err = t_mwalk_obj(exp, name, &w, &l, &fe, &st);
	if (err)
		return err;
	err = fs_setattr(&w.w_c, fe, &st, sa, false);
	fs_fcache_put(fe);
	fs_fcache_put(w.w_dir);
	return err;
}

/* t_fs_chmod - @name's mode bits (07777) become @mode. */
static inline int t_fs_chmod(struct rpcrdma_nfs3_export *exp, const char *dir,
			     const char *name, mode_t mode)
{
	struct fs_sattr sa = { .sa_set_mode = true, .sa_mode = mode & 07777 };
	char p[PATH_MAX];

	if (!t_memory()) {
		t_path(p, dir, name);
		return t_errno(chmod(p, mode));
	}
	return t_fs_msetattr(exp, name, &sa);
}

/* t_fs_chown - @name's owner and group (a symlink's own, lchown). */
static inline int t_fs_chown(struct rpcrdma_nfs3_export *exp, const char *dir,
			     const char *name, uid_t uid, gid_t gid)
{
	struct fs_sattr sa = { .sa_set_uid = true, .sa_uid = uid,
			       .sa_set_gid = true, .sa_gid = gid };
	char p[PATH_MAX];

	if (!t_memory()) {
		t_path(p, dir, name);
		return t_errno(lchown(p, uid, gid));
	}
	return t_fs_msetattr(exp, name, &sa);
}

/* t_fs_utimes - @name's atime and mtime: whole seconds @atime, @mtime. */
static inline int t_fs_utimes(struct rpcrdma_nfs3_export *exp, const char *dir,
			      const char *name, time_t atime, time_t mtime)
{
	const struct timespec ts[2] = { { .tv_sec = atime }, { .tv_sec = mtime } };
	struct fs_sattr sa = {
		.sa_atime_how = FS_SET_TO_CLIENT_TIME, .sa_atime = ts[0],
		.sa_mtime_how = FS_SET_TO_CLIENT_TIME, .sa_mtime = ts[1],
	};
	char p[PATH_MAX];

	if (!t_memory()) {
		t_path(p, dir, name);
		return t_errno(utimensat(AT_FDCWD, p, ts, AT_SYMLINK_NOFOLLOW));
	}
	return t_fs_msetattr(exp, name, &sa);
}

/*
 * t_fs_write_file - @name holds the @len bytes of @data (made, or
 * truncated first), with mode @mode (exactly: chmod after).
 */
static inline int t_fs_write_file(struct rpcrdma_nfs3_export *exp, const char *dir,
				  const char *name, const void *data, size_t len,
				  mode_t mode)
{
	struct t_mwalk w;
	struct fs_fentry l, *fe;
	struct stat st;
	struct fs_sattr trunc = { .sa_set_size = true, .sa_size = 0 };
	struct iovec iov = { .iov_base = (void *)data, .iov_len = len };
	char p[PATH_MAX];
	bool created;
	size_t done = 0;
	int fd, err;

	if (!t_memory()) {
		t_path(p, dir, name);
		fd = open(p, O_CREAT | O_TRUNC | O_WRONLY, 0600);
		if (fd < 0)
			return -errno;
		err = write(fd, data, len) == (ssize_t)len ? 0 : -EIO;
		close(fd);
		return err ? err : t_errno(chmod(p, mode));
	}
	err = t_mwalk(exp, name, &w);
	if (err)
		return err;
	err = fs_create(&w.w_c, w.w_dir, &w.w_dst, w.w_last, 0600, false, NULL,
			&l, &fe, &st, &created);
	fs_fcache_put(w.w_dir);
	if (err)
		return err;
	if (!created)
		err = fs_setattr(&w.w_c, fe, &st, &trunc, false);
	if (!err)
		err = fs_open(&w.w_c, fe, &st, O_WRONLY);
	if (!err && len)
		err = fs_write(&w.w_c, fe, &iov, 1, 0, FS_UNSTABLE, &done);
	if (!err && done != len)
		err = -EIO;
	fs_fcache_put(fe);
	return err ? err : t_fs_chmod(exp, dir, name, mode);
}

/* t_fs_mkfile - t_fs_write_file() of the string @data. */
static inline int t_fs_mkfile(struct rpcrdma_nfs3_export *exp, const char *dir,
			      const char *name, const char *data, mode_t mode)
{
	return t_fs_write_file(exp, dir, name, data, strlen(data), mode);
}

/* t_fs_read - up to @len bytes of @name at @off into @buf: bytes read. */
static inline ssize_t t_fs_read(struct rpcrdma_nfs3_export *exp, const char *dir,
				const char *name, void *buf, size_t len, off_t off)
{
	struct t_mwalk w;
	struct fs_fentry l, *fe;
	struct stat st;
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	char p[PATH_MAX];
	ssize_t n;
	int fd, err;

	if (!t_memory()) {
		t_path(p, dir, name);
		fd = open(p, O_RDONLY);
		if (fd < 0)
			return -errno;
		n = pread(fd, buf, len, off);
		if (n < 0)
			n = -errno;
		close(fd);
		return n;
	}
	err = t_mwalk_obj(exp, name, &w, &l, &fe, &st);
	if (err)
		return err;
	fs_fcache_put(w.w_dir);
	err = fs_open(&w.w_c, fe, &st, O_RDONLY);
	n = err ? err : fs_read(&w.w_c, fe, &iov, 1, (uint64_t)off, false);
	fs_fcache_put(fe);
	return n;
}

/* t_fs_mkdir - directory @name with mode @mode exactly (no umask). */
static inline int t_fs_mkdir(struct rpcrdma_nfs3_export *exp, const char *dir,
			     const char *name, mode_t mode)
{
	struct t_mwalk w;
	struct fs_fentry l, *fe;
	struct stat st;
	char p[PATH_MAX];
	int err;

	if (!t_memory()) {
		t_path(p, dir, name);
		if (mkdir(p, mode) < 0)
			return -errno;
		return t_errno(chmod(p, mode));
	}
	err = t_mwalk(exp, name, &w);
	if (err)
		return err;
	err = fs_mkdir(&w.w_c, w.w_dir, &w.w_dst, w.w_last, mode & 07777, &l, &fe, &st);
	fs_fcache_put(w.w_dir);
	if (err)
		return err;
	fs_fcache_put(fe);
	return 0;
}

/* t_fs_symlink - symlink @name to @target. */
static inline int t_fs_symlink(struct rpcrdma_nfs3_export *exp, const char *dir,
			       const char *target, const char *name)
{
	struct t_mwalk w;
	struct fs_fentry l, *fe;
	struct stat st;
	char p[PATH_MAX];
	int err;

	if (!t_memory()) {
		t_path(p, dir, name);
		return t_errno(symlink(target, p));
	}
	err = t_mwalk(exp, name, &w);
	if (err)
		return err;
	err = fs_symlink(&w.w_c, w.w_dir, &w.w_dst, w.w_last, target, &l, &fe, &st);
	fs_fcache_put(w.w_dir);
	if (err)
		return err;
	fs_fcache_put(fe);
	return 0;
}

/* t_fs_readlink - the target of symlink @name into @buf: its length. */
static inline ssize_t t_fs_readlink(struct rpcrdma_nfs3_export *exp, const char *dir,
				    const char *name, char *buf, size_t len)
{
	struct t_mwalk w;
	struct fs_fentry l, *fe;
	struct stat st;
	char p[PATH_MAX];
	ssize_t n;
	int err;

	if (!t_memory()) {
		t_path(p, dir, name);
		n = readlink(p, buf, len);
		return n < 0 ? -errno : n;
	}
	err = t_mwalk_obj(exp, name, &w, &l, &fe, &st);
	if (err)
		return err;
	n = fs_readlink(&w.w_c, fe, buf, len);
	fs_fcache_put(fe);
	fs_fcache_put(w.w_dir);
	return n;
}

/* t_fs_unlink_any - take away @name (@is_dir: a directory) behind the
 * server's back (memory: the backend's own be_unlink). */
static inline int t_fs_unlink_any(struct rpcrdma_nfs3_export *exp, const char *dir,
				  const char *name, bool is_dir)
{
	struct t_mwalk w;
	char p[PATH_MAX];
	int err;

	if (!t_memory()) {
		t_path(p, dir, name);
		return t_errno(is_dir ? rmdir(p) : unlink(p));
	}
	err = t_mwalk(exp, name, &w);
	if (err)
		return err;
	err = exp->ex_be->be_unlink(&w.w_c, w.w_dir, w.w_last, is_dir);
	fs_fcache_put(w.w_dir);
	return err;
}

static inline int t_fs_unlink(struct rpcrdma_nfs3_export *exp, const char *dir,
			      const char *name)
{
	return t_fs_unlink_any(exp, dir, name, false);
}

static inline int t_fs_rmdir(struct rpcrdma_nfs3_export *exp, const char *dir,
			     const char *name)
{
	return t_fs_unlink_any(exp, dir, name, true);
}

/* t_fs_link - a new name @to for the object @from names. */
static inline int t_fs_link(struct rpcrdma_nfs3_export *exp, const char *dir,
			    const char *from, const char *to)
{
	struct t_mwalk f, t;
	struct fs_fentry l, *fe;
	struct stat st;
	char p[PATH_MAX], q[PATH_MAX];
	int err;

	if (!t_memory()) {
		t_path(p, dir, from);
		t_path(q, dir, to);
		return t_errno(link(p, q));
	}
	err = t_mwalk_obj(exp, from, &f, &l, &fe, &st);
	if (err)
		return err;
	fs_fcache_put(f.w_dir);
	err = t_mwalk(exp, to, &t);
	if (!err) {
		err = fs_link(&t.w_c, fe, t.w_dir, t.w_last);
		fs_fcache_put(t.w_dir);
	}
	fs_fcache_put(fe);
	return err;
}

/* t_fs_rename - @from becomes @to, behind the server's back. */
static inline int t_fs_rename(struct rpcrdma_nfs3_export *exp, const char *dir,
			      const char *from, const char *to)
{
	struct t_mwalk f, t;
	char p[PATH_MAX], q[PATH_MAX];
	uint8_t fh[RPCRDMA_NFS3_FHSIZE];
	uint32_t fhlen = 0;
	bool have_fh = false;
	int err;

	if (!t_memory()) {
		t_path(p, dir, from);
		t_path(q, dir, to);
		return t_errno(rename(p, q));
	}
	err = t_mwalk(exp, from, &f);
	if (err)
		return err;
	err = t_mwalk(exp, to, &t);
	if (!err) {
		err = exp->ex_be->be_rename(&f.w_c, f.w_dir, f.w_last, t.w_dir,
					    t.w_last, true, fh, &fhlen, &have_fh);
		fs_fcache_put(t.w_dir);
	}
	fs_fcache_put(f.w_dir);
	return err;
}

/*
 * t_fs_fh - the handle of @name as the server makes it (fs_fh_of() of
 * the name in its directory, reached through the layer on either
 * backend), into @fh (64 bytes): its length, or a negative errno.
 */
static inline int t_fs_fh(struct rpcrdma_nfs3_export *exp, const char *name,
			  uint8_t *fh)
{
	struct t_mwalk w;
	uint32_t len = 0;
	int err = t_mwalk(exp, name, &w);

	if (err)
		return err;
	err = fs_fh_of(&w.w_c, w.w_dir, strcmp(w.w_last, ".") ? w.w_last : "",
		       fh, &len);
	fs_fcache_put(w.w_dir);
	return err ? err : (int)len;
}

/* t_fs_total_bytes - the size of the export's file system, bytes. */
static inline int t_fs_total_bytes(struct rpcrdma_nfs3_export *exp, const char *dir,
				   uint64_t *bytes)
{
	struct t_mwalk w;
	struct fs_statfs sf;
	struct statvfs sv;
	int err;

	if (!t_memory()) {
		if (statvfs(dir, &sv) < 0)
			return -errno;
		*bytes = (uint64_t)sv.f_blocks * sv.f_frsize;
		return 0;
	}
	err = t_mwalk(exp, ".", &w);
	if (err)
		return err;
	err = fs_statfs(&w.w_c, w.w_dir, &sf);
	fs_fcache_put(w.w_dir);
	*bytes = sf.sf_bytes;
	return err;
}

/* t_fs_remove_tree - the posix export's directory and all it holds (the
 * memory tree goes with its export). */
static inline void t_fs_remove_tree(const char *dir)
{
	char cmd[PATH_MAX + 32];

	if (t_memory())
		return;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

/* ---- running the cases on each backend ---- */

enum {
	T_ANY = 0,           /* every backend */
	T_POSIX_ONLY = 1u,   /* the posix backend's own mechanics */
};

/* One case of a program's table and the backends it runs on. */
struct t_case {
	struct CMUnitTest tc_test;
	unsigned tc_flags;
};

#define T_CASE(fn, setup, teardown, flags) \
	{ cmocka_unit_test_setup_teardown(fn, setup, teardown), flags }

/* The stand-in of a posix case when not root: reported skipped. */
static void t_skip_case(void **state)
{
	(void)state;
	skip();
}

/*
 * t_run_cases - run the cases of @cases (@n) that backend @be runs, as
 * group "@group [@be]", each named "NAME [@be]", with group fixtures
 * @gsetup/@gteardown (NULL: none).  On posix without root every case is
 * reported skipped, not run.  Return: the failures.
 */
static inline int t_run_cases(enum t_be be, const char *group,
			      const struct t_case *cases, size_t n,
			      CMFixtureFunction gsetup, CMFixtureFunction gteardown)
{
	struct CMUnitTest *tests = calloc(n ? n : 1, sizeof(*tests));
	char **names = calloc(n ? n : 1, sizeof(*names));
	bool skipped = be == T_BE_POSIX && !t_root();
	char gname[256];
	size_t k = 0;
	int fails;

	assert_non_null(tests);
	assert_non_null(names);
	t_be_cur = be;
	for (size_t i = 0; i < n; i++) {
		if (be != T_BE_POSIX && (cases[i].tc_flags & T_POSIX_ONLY))
			continue;
		tests[k] = cases[i].tc_test;
		if (asprintf(&names[k], "%s [%s]", tests[k].name, t_be_names[be]) < 0)
			abort();
		tests[k].name = names[k];
		if (skipped) {
			tests[k].test_func = t_skip_case;
			tests[k].setup_func = NULL;
			tests[k].teardown_func = NULL;
		}
		k++;
	}
	snprintf(gname, sizeof(gname), "%s [%s]", group, t_be_names[be]);
	if (skipped)
		fprintf(stderr, "%s: the posix backend needs root (file handles): "
			"its cases are skipped\n", gname);
	fails = _cmocka_run_group_tests(gname, tests, k, skipped ? NULL : gsetup,
					skipped ? NULL : gteardown);
	for (size_t i = 0; i < k; i++)
		free(names[i]);
	free(names);
	free(tests);
	t_be_cur = T_BE_POSIX;
	return fails;
}

#define T_NCASES(a) (sizeof(a) / sizeof((a)[0]))

#endif /* TEST_NFS3_HARNESS_H */
