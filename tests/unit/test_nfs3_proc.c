// SPDX-License-Identifier: MIT
/*
 * test_nfs3_proc.c - NFSv3 procedures against a temporary export: on the
 * posix backend once on tmpfs (/dev/shm) and once on the file system of
 * $TMPDIR (or /tmp), as root (file handles need CAP_DAC_READ_SEARCH;
 * squash tests chown); on the memory backend, root or not.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "test_nfs3_harness.h"

#include <sys/syscall.h>

#include "nfs3/nfs3_internal.h"

#define NOBODY 65534u

struct t_env {
	char dir[256];
	struct rpcrdma_nfs3_export *exp;
	struct rpcrdma_nfs3_export *exp_nosquash;
	uint8_t root[64];
	uint32_t rootlen;
	struct t_call c;
};

static const char *g_base;

static int env_setup(void **state)
{
	struct t_env *e = calloc(1, sizeof(*e));

	if (!e || t_export_dir(e->dir, sizeof(e->dir), g_base, "nfs3test", 7,
			       &e->exp, &e->exp_nosquash))
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
	rpcrdma_nfs3_export_close(e->exp_nosquash);
	t_fs_remove_tree(e->dir);
	t_free(&e->c);
	free(e);
	return 0;
}

/* make_file - @name holds @data, mode @mode (owned by root). */
static void make_file(struct t_env *e, const char *name, const char *data,
		      mode_t mode)
{
	assert_int_equal(t_fs_mkfile(e->exp, e->dir, name, data, mode), 0);
}

/* t_lstat - t_fs_lstat() in @e's export. */
static int t_lstat(struct t_env *e, const char *name, struct stat *st)
{
	return t_fs_lstat(e->exp, e->dir, name, st);
}

/* LOOKUP @name in directory handle @dir: returns the NFS status. */
static uint32_t do_lookup(struct t_env *e, const uint8_t *dir, uint32_t dirlen,
			  const char *name, uint8_t *fh, uint32_t *fhlen,
			  struct t_fattr *a)
{
	struct t_call *c = &e->c;
	uint32_t st;

	t_begin(c, 3, 1000, 1000);
	t_opaque(c, dir, dirlen);
	t_str(c, name);
	assert_int_equal(t_run(c, e->exp), RPCRDMA_SVC_SUCCESS);
	st = r_u32(c);
	if (st == 0) {
		uint32_t n;
		const uint8_t *p = r_opaque(c, &n);

		assert_true(n <= 64);
		if (fh) {
			memcpy(fh, p, n);
			*fhlen = n;
		}
		assert_true(r_post_op(c, a));
	}
	r_post_op(c, NULL); /* dir attributes */
	assert_int_equal(c->rpos, c->rlen);
	return st;
}

static void test_null_and_getattr_root(void **state)
{
	struct t_env *e = *state;
	struct t_call *c = &e->c;
	struct t_fattr a;
	struct stat st;

	t_begin(c, 0, 0, 0);
	assert_int_equal(t_run(c, e->exp), RPCRDMA_SVC_SUCCESS);
	assert_int_equal(c->rlen, 0);

	t_begin(c, 1, 1000, 1000);
	t_opaque(c, e->root, e->rootlen);
	assert_int_equal(t_run(c, e->exp), RPCRDMA_SVC_SUCCESS);
	assert_int_equal(r_u32(c), 0);
	r_fattr(c, &a);
	assert_int_equal(c->rpos, c->rlen); /* 4 + 84 bytes exactly */
	assert_int_equal(c->rlen, 88);
	assert_int_equal(t_lstat(e, ".", &st), 0);
	assert_int_equal(a.type, 2); /* NF3DIR */
	assert_int_equal(a.mode, 0777);
	assert_int_equal(a.fileid, st.st_ino);
	assert_int_equal(a.fsid, (uint64_t)st.st_dev);
}

static void test_lookup_file(void **state)
{
	struct t_env *e = *state;
	struct t_fattr a;
	struct stat st;
	uint8_t fh[64];
	uint32_t fhlen;

	make_file(e, "hello.txt", "12345", 0640);
	assert_int_equal(t_lstat(e, "hello.txt", &st), 0);
	assert_int_equal(do_lookup(e, e->root, e->rootlen, "hello.txt", fh, &fhlen, &a), 0);
	assert_int_equal(a.type, 1); /* NF3REG */
	assert_int_equal(a.mode, 0640);
	assert_int_equal(a.size, 5);
	assert_int_equal(a.nlink, 1);
	assert_int_equal(a.fileid, st.st_ino);
	assert_int_equal(a.mtime[0], (uint32_t)st.st_mtim.tv_sec);
	assert_int_equal(a.mtime[1], (uint32_t)st.st_mtim.tv_nsec);

	assert_int_equal(do_lookup(e, e->root, e->rootlen, "nope", NULL, NULL, NULL),
			 2); /* NFS3ERR_NOENT */
	assert_int_equal(do_lookup(e, e->root, e->rootlen, "a/b", NULL, NULL, NULL),
			 13); /* '/' in a name: NFS3ERR_ACCES */
	assert_int_equal(do_lookup(e, e->root, e->rootlen, "", NULL, NULL, NULL), 13);
	/* a file handle is not a directory: NFS3ERR_NOTDIR */
	assert_int_equal(do_lookup(e, fh, fhlen, "x", NULL, NULL, NULL), 20);
}

static void test_lookup_dotdot_at_root(void **state)
{
	struct t_env *e = *state;
	struct t_fattr a;
	struct stat st;
	uint8_t fh[64];
	uint32_t fhlen;

	assert_int_equal(do_lookup(e, e->root, e->rootlen, "..", fh, &fhlen, &a), 0);
	assert_int_equal(t_lstat(e, ".", &st), 0);
	assert_int_equal(a.fileid, st.st_ino);
	assert_int_equal(fhlen, e->rootlen);
	assert_memory_equal(fh, e->root, fhlen);
	assert_int_equal(do_lookup(e, e->root, e->rootlen, ".", fh, &fhlen, &a), 0);
	assert_memory_equal(fh, e->root, fhlen);
}

static void test_write_read_commit(void **state)
{
	struct t_env *e = *state;
	struct t_call *c = &e->c;
	static const char msg[] = "hello world";
	uint8_t fh[64], wverf[8];
	uint32_t fhlen, n;
	const uint8_t *p;
	struct t_fattr a;
	struct stat st;

	make_file(e, "data", "", 0644);
	assert_int_equal(do_lookup(e, e->root, e->rootlen, "data", fh, &fhlen, &a), 0);

	/* root squash: uid 0 is nobody, who may not write a 0644 root file */
	t_begin(c, 7, 0, 0);
	t_opaque(c, fh, fhlen);
	t_u64(c, 3);
	t_u32(c, 11);
	t_u32(c, 0);
	t_opaque(c, msg, 11);
	assert_int_equal(t_run(c, e->exp), RPCRDMA_SVC_SUCCESS);
	assert_int_equal(r_u32(c), 13); /* NFS3ERR_ACCES */

	t_begin(c, 7, 0, 0);
	t_opaque(c, fh, fhlen);
	t_u64(c, 3);
	t_u32(c, 11);
	t_u32(c, 0); /* UNSTABLE */
	t_opaque(c, msg, 11);
	assert_int_equal(t_run(c, e->exp_nosquash), RPCRDMA_SVC_SUCCESS);
	assert_int_equal(r_u32(c), 0);
	r_wcc(c, &a);
	assert_int_equal(a.size, 14);
	assert_int_equal(r_u32(c), 11); /* count */
	assert_int_equal(r_u32(c), 0);  /* committed: UNSTABLE */
	memcpy(wverf, c->res + c->rpos, 8);
	c->rpos += 8;
	assert_int_equal(c->rpos, c->rlen);
	assert_int_equal(t_lstat(e, "data", &st), 0);
	assert_int_equal(st.st_size, 14);

	/* READ it all back: data through the DDP item */
	t_begin(c, 6, 1000, 1000);
	t_opaque(c, fh, fhlen);
	t_u64(c, 0);
	t_u32(c, 100);
	assert_int_equal(t_run(c, e->exp), RPCRDMA_SVC_SUCCESS);
	assert_int_equal(r_u32(c), 0);
	assert_true(r_post_op(c, &a));
	assert_int_equal(a.size, 14);
	assert_int_equal(r_u32(c), 14); /* count */
	assert_int_equal(r_u32(c), 1);  /* eof */
	p = r_opaque(c, &n);
	assert_int_equal(n, 14);
	assert_int_equal(c->rpos, c->rlen);
	assert_true(c->req.rq_ddp);
	assert_int_equal(c->req.rq_ddp_len, 14);
	assert_ptr_equal(c->res + c->req.rq_ddp_pos, p);
	assert_memory_equal(p, "\0\0\0hello world", 14);
	assert_memory_equal(p + 14, "\0\0", 2); /* XDR pad */

	/* a partial READ in the middle: not eof */
	t_begin(c, 6, 1000, 1000);
	t_opaque(c, fh, fhlen);
	t_u64(c, 4);
	t_u32(c, 4);
	assert_int_equal(t_run(c, e->exp), RPCRDMA_SVC_SUCCESS);
	assert_int_equal(r_u32(c), 0);
	r_post_op(c, NULL);
	assert_int_equal(r_u32(c), 4);
	assert_int_equal(r_u32(c), 0);
	p = r_opaque(c, &n);
	assert_memory_equal(p, "ello", 4);

	/* COMMIT: same verifier as WRITE (same server instance) */
	t_begin(c, 21, 1000, 1000);
	t_opaque(c, fh, fhlen);
	t_u64(c, 0);
	t_u32(c, 0);
	assert_int_equal(t_run(c, e->exp_nosquash), RPCRDMA_SVC_SUCCESS);
	assert_int_equal(r_u32(c), 0);
	r_wcc(c, NULL);
	assert_memory_equal(c->res + c->rpos, wverf, 8);
	assert_int_equal(c->rpos + 8, c->rlen);

	/* READ of a directory: NFS3ERR_ISDIR */
	t_begin(c, 6, 1000, 1000);
	t_opaque(c, e->root, e->rootlen);
	t_u64(c, 0);
	t_u32(c, 10);
	assert_int_equal(t_run(c, e->exp), RPCRDMA_SVC_SUCCESS);
	assert_int_equal(r_u32(c), 21);
}

static void test_read_permission(void **state)
{
	struct t_env *e = *state;
	struct t_call *c = &e->c;
	uint8_t fh[64];
	uint32_t fhlen;

	make_file(e, "secret", "xyz", 0600); /* owned by root */
	assert_int_equal(do_lookup(e, e->root, e->rootlen, "secret", fh, &fhlen, NULL), 0);
	t_begin(c, 6, 1000, 1000);
	t_opaque(c, fh, fhlen);
	t_u64(c, 0);
	t_u32(c, 3);
	assert_int_equal(t_run(c, e->exp), RPCRDMA_SVC_SUCCESS);
	assert_int_equal(r_u32(c), 13); /* NFS3ERR_ACCES */
	assert_false(c->req.rq_ddp);

	/* ACCESS agrees: READ|MODIFY asked, nothing granted */
	t_begin(c, 4, 1000, 1000);
	t_opaque(c, fh, fhlen);
	t_u32(c, 0x1 | 0x4);
	assert_int_equal(t_run(c, e->exp), RPCRDMA_SVC_SUCCESS);
	assert_int_equal(r_u32(c), 0);
	assert_true(r_post_op(c, NULL));
	assert_int_equal(r_u32(c), 0);
	/* ...and the owner (uid 0, no squash) gets both */
	t_begin(c, 4, 0, 0);
	t_opaque(c, fh, fhlen);
	t_u32(c, 0x1 | 0x4);
	assert_int_equal(t_run(c, e->exp_nosquash), RPCRDMA_SVC_SUCCESS);
	assert_int_equal(r_u32(c), 0);
	assert_true(r_post_op(c, NULL));
	assert_int_equal(r_u32(c), 0x5);
}

/* CREATE/MKDIR of @name as uid/gid; returns status, fills fh. */
static uint32_t do_create(struct t_env *e, struct rpcrdma_nfs3_export *exp,
			  uint32_t proc, const char *name, uint32_t uid,
			  uint8_t *fh, uint32_t *fhlen)
{
	struct t_call *c = &e->c;
	uint32_t st;

	t_begin(c, proc, uid, uid);
	t_opaque(c, e->root, e->rootlen);
	t_str(c, name);
	if (proc == 8)
		t_u32(c, 1); /* GUARDED */
	t_sattr_mode(c, 0751);
	assert_int_equal(t_run(c, exp), RPCRDMA_SVC_SUCCESS);
	st = r_u32(c);
	if (st == 0) {
		uint32_t n;
		const uint8_t *p;

		assert_int_equal(r_u32(c), 1); /* handle follows */
		p = r_opaque(c, &n);
		memcpy(fh, p, n);
		*fhlen = n;
		assert_true(r_post_op(c, NULL));
	}
	r_wcc(c, NULL);
	assert_int_equal(c->rpos, c->rlen);
	return st;
}

static uint32_t do_remove(struct t_env *e, uint32_t proc, const char *name)
{
	struct t_call *c = &e->c;
	uint32_t st;

	t_begin(c, proc, 1000, 1000);
	t_opaque(c, e->root, e->rootlen);
	t_str(c, name);
	assert_int_equal(t_run(c, e->exp), RPCRDMA_SVC_SUCCESS);
	st = r_u32(c);
	r_wcc(c, NULL);
	assert_int_equal(c->rpos, c->rlen);
	return st;
}

static void test_create_mkdir_remove_rmdir(void **state)
{
	struct t_env *e = *state;
	struct stat st;
	uint8_t fh[64];
	uint32_t fhlen;

	assert_int_equal(do_create(e, e->exp, 8, "f1", 1000, fh, &fhlen), 0);
	assert_int_equal(t_lstat(e, "f1", &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(st.st_mode & 07777, 0751);
	assert_int_equal(st.st_uid, 1000);
	/* GUARDED on an existing name: NFS3ERR_EXIST */
	assert_int_equal(do_create(e, e->exp, 8, "f1", 1000, fh, &fhlen), 17);

	assert_int_equal(do_create(e, e->exp, 9, "d1", 1000, fh, &fhlen), 0);
	assert_int_equal(t_lstat(e, "d1", &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	assert_int_equal(st.st_mode & 07777, 0751);

	/* REMOVE of a directory fails; RMDIR of a file fails */
	assert_int_not_equal(do_remove(e, 12, "d1"), 0);
	assert_int_equal(do_remove(e, 13, "f1"), 20); /* NFS3ERR_NOTDIR */
	assert_int_equal(do_remove(e, 12, "f1"), 0);
	assert_int_equal(t_lstat(e, "f1", &st), -ENOENT);
	assert_int_equal(do_remove(e, 13, "d1"), 0);
	assert_int_equal(t_lstat(e, "d1", &st), -ENOENT);
	assert_int_equal(do_remove(e, 12, "f1"), 2); /* NFS3ERR_NOENT */
	assert_int_equal(do_remove(e, 13, "."), 22); /* NFS3ERR_INVAL */
	assert_int_equal(do_remove(e, 13, ".."), 66); /* NFS3ERR_NOTEMPTY */
}

/* CREATE EXCLUSIVE with verifier @v of "x": the status, the handle in @fh */
static uint32_t create_excl(struct t_env *e, uint64_t v, uint8_t *fh,
			    uint32_t *fhlen, struct t_fattr *a)
{
	struct t_call *c = &e->c;
	uint32_t st;

	t_begin(c, 8, 1000, 1000);
	t_opaque(c, e->root, e->rootlen);
	t_str(c, "x");
	t_u32(c, 2); /* EXCLUSIVE */
	t_u64(c, v);
	assert_int_equal(t_run(c, e->exp), RPCRDMA_SVC_SUCCESS);
	st = r_u32(c);
	if (st == 0) {
		const uint8_t *p;

		assert_int_equal(r_u32(c), 1); /* handle follows */
		p = r_opaque(c, fhlen);
		memcpy(fh, p, *fhlen);
		assert_true(r_post_op(c, a));
	}
	return st;
}

/*
 * RFC 1813 3.3.8, EXCLUSIVE: the verifier is stored with the file (atime
 * and mtime seconds until the client's SETATTR), so a retransmission of
 * the same CREATE succeeds with the same file, another verifier finds
 * NFS3ERR_EXIST, and so does the first one once SETATTR set the real
 * times.  The new file's attributes in the reply are its attributes after
 * the verifier was stored (the server's own fstat, checked against lstat).
 */
static void test_create_exclusive_verifier(void **state)
{
	struct t_env *e = *state;
	struct t_call *c = &e->c;
	uint8_t fh[64], fh2[64];
	uint32_t fhlen, fhlen2;
	struct t_fattr a, b;
	struct rpcrdma_nfs3_fcache_stats fs;
	struct stat st;

	assert_int_equal(create_excl(e, 0x0000006400000065ull, fh, &fhlen, &a), 0);
	assert_int_equal(t_lstat(e, "x", &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(st.st_mode & 07777, 0600);
	assert_int_equal(st.st_uid, 1000);
	assert_int_equal(st.st_atim.tv_sec, 100);
	assert_int_equal(st.st_mtim.tv_sec, 101);
	assert_int_equal(a.atime[0], 100);
	assert_int_equal(a.mtime[0], 101);
	assert_int_equal(a.ctime[0], (uint32_t)st.st_ctim.tv_sec);
	assert_int_equal(a.ctime[1], (uint32_t)st.st_ctim.tv_nsec);
	assert_int_equal(a.fileid, st.st_ino);
	/* the retransmission: the same file */
	assert_int_equal(create_excl(e, 0x0000006400000065ull, fh2, &fhlen2, &b), 0);
	assert_int_equal(fhlen2, fhlen);
	assert_memory_equal(fh2, fh, fhlen);
	assert_int_equal(b.fileid, st.st_ino);
	/* another client's create of the name */
	assert_int_equal(create_excl(e, 0x0000006400000066ull, fh2, &fhlen2, &b), 17);

	/* the client's SETATTR: mode 0644, both times to the server's;
	 * the file CREATE made is in the open-file cache already */
	assert_int_equal(rpcrdma_nfs3_fcache_stats(e->exp, &fs), 0);
	assert_int_equal(fs.fcs_entries, 1);
	assert_int_equal(fs.fcs_misses, 0);
	t_begin(c, 2, 1000, 1000);
	t_opaque(c, fh, fhlen);
	t_u32(c, 1); t_u32(c, 0644);
	t_u32(c, 0); t_u32(c, 0); t_u32(c, 0);
	t_u32(c, 1); t_u32(c, 1); /* atime, mtime: SET_TO_SERVER_TIME */
	t_u32(c, 0); /* no guard */
	assert_int_equal(t_run(c, e->exp), RPCRDMA_SVC_SUCCESS);
	assert_int_equal(r_u32(c), 0);
	assert_int_equal(rpcrdma_nfs3_fcache_stats(e->exp, &fs), 0);
	assert_int_equal(fs.fcs_hits, 1);
	assert_int_equal(fs.fcs_misses, 0);
	assert_int_equal(t_lstat(e, "x", &st), 0);
	assert_int_equal(st.st_mode & 07777, 0644);
	assert_true(st.st_mtim.tv_sec > 101);
	/* now a late retransmission is not recognised any more */
	assert_int_equal(create_excl(e, 0x0000006400000065ull, fh2, &fhlen2, &b), 17);
}

/*
 * CREATE and MKDIR make the mode the client sent, whatever the server's
 * umask (knfsd's threads run with umask 0; the client applied its own):
 * a server started with umask 022 still makes 0666 and 0777.
 */
static void test_create_mode_not_umasked(void **state)
{
	struct t_env *e = *state;
	struct t_call *c = &e->c;
	struct stat st;
	mode_t old = umask(022);
	uint32_t proc;

	for (proc = 8; proc <= 9; proc++) { /* CREATE UNCHECKED, MKDIR */
		t_begin(c, proc, 1000, 1000);
		t_opaque(c, e->root, e->rootlen);
		t_str(c, proc == 8 ? "f666" : "d777");
		if (proc == 8)
			t_u32(c, 0); /* UNCHECKED */
		t_sattr_mode(c, proc == 8 ? 0666 : 0777);
		assert_int_equal(t_run(c, e->exp), RPCRDMA_SVC_SUCCESS);
		assert_int_equal(r_u32(c), 0);
	}
	umask(old);
	assert_int_equal(t_lstat(e, "f666", &st), 0);
	assert_int_equal(st.st_mode & 07777, 0666);
	assert_int_equal(t_lstat(e, "d777", &st), 0);
	assert_int_equal(st.st_mode & 07777, 0777);
}

/*
 * MKNOD in the export root as @uid on @exp: type @type (ftype3), with a
 * sattr3 setting the mode when @mode is not -1, and specdata @major/@minor
 * for NF3CHR/NF3BLK.  The result is decoded by RFC 1813 3.3.11 (post_op_fh3,
 * post_op_attr on success, then wcc_data); @a: the new node's attributes.
 * Returns the NFS status.
 */
static uint32_t do_mknod(struct t_env *e, struct rpcrdma_nfs3_export *exp,
			 uint32_t uid, const char *name, uint32_t type,
			 int mode, uint32_t major, uint32_t minor,
			 struct t_fattr *a)
{
	struct t_call *c = &e->c;
	uint32_t st;

	t_begin(c, 11, uid, uid);
	t_opaque(c, e->root, e->rootlen);
	t_str(c, name);
	t_u32(c, type);
	if (type == 3 || type == 4 || type == 6 || type == 7) {
		if (mode >= 0)
			t_sattr_mode(c, (uint32_t)mode);
		else
			t_sattr_none(c);
	}
	if (type == 3 || type == 4) {
		t_u32(c, major);
		t_u32(c, minor);
	}
	assert_int_equal(t_run(c, exp), RPCRDMA_SVC_SUCCESS);
	st = r_u32(c);
	if (st == 0) {
		uint32_t n;

		assert_int_equal(r_u32(c), 1); /* handle follows */
		r_opaque(c, &n);
		assert_true(n > 0 && n <= 64);
		assert_true(r_post_op(c, a));
	}
	r_wcc(c, NULL);
	assert_int_equal(c->rpos, c->rlen);
	return st;
}

/* FIFOs and sockets: any caller allowed to write the directory. */
static void test_mknod_fifo_socket(void **state)
{
	struct t_env *e = *state;
	struct stat st;
	struct t_fattr a;
	mode_t old = umask(022); /* the mode must not pass through it */

	assert_int_equal(do_mknod(e, e->exp, 1000, "fifo", 7, 0666, 0, 0, &a), 0);
	assert_int_equal(a.type, 7);
	assert_int_equal(a.mode, 0666);
	assert_int_equal(a.uid, 1000);
	assert_int_equal(t_lstat(e, "fifo", &st), 0);
	assert_true(S_ISFIFO(st.st_mode));
	assert_int_equal(st.st_mode & 07777, 0666);
	assert_int_equal(st.st_uid, 1000);

	assert_int_equal(do_mknod(e, e->exp, 1000, "sock", 6, 0640, 0, 0, &a), 0);
	assert_int_equal(a.type, 6);
	assert_int_equal(t_lstat(e, "sock", &st), 0);
	assert_true(S_ISSOCK(st.st_mode));
	assert_int_equal(st.st_mode & 07777, 0640);

	/* no mode given: 0, as knfsd */
	assert_int_equal(do_mknod(e, e->exp, 1000, "fifo0", 7, -1, 0, 0, &a), 0);
	assert_int_equal(a.mode, 0);

	/* an existing name, "." and "..": NFS3ERR_EXIST */
	assert_int_equal(do_mknod(e, e->exp, 1000, "fifo", 7, 0666, 0, 0, NULL), 17);
	assert_int_equal(do_mknod(e, e->exp, 1000, ".", 7, 0666, 0, 0, NULL), 17);
	assert_int_equal(do_mknod(e, e->exp, 1000, "..", 7, 0666, 0, 0, NULL), 17);

	/* a directory the caller may not write: NFS3ERR_ACCES */
	assert_int_equal(t_fs_mkdir(e->exp, e->dir, "ro", 0755), 0);
	{
		uint8_t dfh[64];
		uint32_t dfhlen;
		struct t_call *c = &e->c;

		assert_int_equal(do_lookup(e, e->root, e->rootlen, "ro", dfh, &dfhlen,
					   NULL), 0);
		t_begin(c, 11, 1000, 1000);
		t_opaque(c, dfh, dfhlen);
		t_str(c, "f");
		t_u32(c, 7);
		t_sattr_mode(c, 0644);
		assert_int_equal(t_run(c, e->exp), RPCRDMA_SVC_SUCCESS);
		assert_int_equal(r_u32(c), 13);
	}
	umask(old);
}

/* Devices: root after squashing only; the device number kept. */
static void test_mknod_devices(void **state)
{
	struct t_env *e = *state;
	struct stat st;
	struct t_fattr a;

	assert_int_equal(do_mknod(e, e->exp_nosquash, 0, "null", 4, 0666, 1, 3, &a), 0);
	assert_int_equal(a.type, 4);
	assert_int_equal(a.rdev1, 1);
	assert_int_equal(a.rdev2, 3);
	assert_int_equal(a.uid, 0);
	assert_int_equal(t_lstat(e, "null", &st), 0);
	assert_true(S_ISCHR(st.st_mode));
	assert_int_equal(major(st.st_rdev), 1);
	assert_int_equal(minor(st.st_rdev), 3);
	assert_int_equal(st.st_mode & 07777, 0666);

	assert_int_equal(do_mknod(e, e->exp_nosquash, 0, "loop", 3, 0600, 7, 0, &a), 0);
	assert_int_equal(a.type, 3);
	assert_int_equal(t_lstat(e, "loop", &st), 0);
	assert_true(S_ISBLK(st.st_mode));
	assert_int_equal(st.st_rdev, makedev(7, 0));

	/* root squashed to nobody, and an ordinary user: NFS3ERR_PERM */
	assert_int_equal(do_mknod(e, e->exp, 0, "sq", 4, 0666, 1, 3, NULL), 1);
	assert_int_equal(do_mknod(e, e->exp_nosquash, 1000, "u", 3, 0666, 7, 0, NULL), 1);
	assert_int_equal(t_lstat(e, "sq", &st), -ENOENT);
	assert_int_equal(t_lstat(e, "u", &st), -ENOENT);

	/* a device number Linux cannot hold (12-bit major, 20-bit minor) */
	assert_int_equal(do_mknod(e, e->exp_nosquash, 0, "big", 4, 0600, 4096, 0, NULL), 22);
	assert_int_equal(do_mknod(e, e->exp_nosquash, 0, "big", 4, 0600, 1, 1u << 20, NULL), 22);
	assert_int_equal(do_mknod(e, e->exp_nosquash, 0, "max", 4, 0600, 4095, (1u << 20) - 1, &a), 0);
	assert_int_equal(a.rdev1, 4095);
	assert_int_equal(a.rdev2, (1u << 20) - 1);
}

/*
 * LINK, RENAME and MKNOD answer as knfsd, which checks first that the
 * caller may write the directories, so a caller without that gets
 * NFS3ERR_ACCES where the system call alone finds another reason first
 * (EPERM): a link to another user's 0600 file (fs.protected_hardlinks), a
 * rename out of a sticky directory of another user's file (RENAME asks
 * after the rename failed), a device node by a squashed root.
 */
static void test_dir_access_checked_first(void **state)
{
	struct t_env *e = *state;
	struct t_call *c = &e->c;
	uint8_t ro[64], st[64], f[64];
	uint32_t rolen, stlen, flen;
	struct stat sb;

	/* root's: nobody else may write */
	assert_int_equal(t_fs_mkdir(e->exp, e->dir, "ro", 0755), 0);
	assert_int_equal(t_fs_mkdir(e->exp, e->dir, "st", 01777), 0);
	make_file(e, "p600", "x", 0600);
	assert_int_equal(t_fs_chown(e->exp, e->dir, "p600", 2000, 2000), 0);
	make_file(e, "st/s", "x", 0666);
	assert_int_equal(t_fs_chown(e->exp, e->dir, "st/s", 2000, 2000), 0);
	assert_int_equal(do_lookup(e, e->root, e->rootlen, "ro", ro, &rolen, NULL), 0);
	assert_int_equal(do_lookup(e, e->root, e->rootlen, "st", st, &stlen, NULL), 0);
	assert_int_equal(do_lookup(e, e->root, e->rootlen, "p600", f, &flen, NULL), 0);

	/* LINK p600 -> ro/l as uid 1000 */
	t_begin(c, 15, 1000, 1000);
	t_opaque(c, f, flen);
	t_opaque(c, ro, rolen);
	t_str(c, "l");
	assert_int_equal(t_run(c, e->exp), RPCRDMA_SVC_SUCCESS);
	assert_int_equal(r_u32(c), 13);

	/* RENAME st/s -> ro/r as uid 1000 */
	t_begin(c, 14, 1000, 1000);
	t_opaque(c, st, stlen);
	t_str(c, "s");
	t_opaque(c, ro, rolen);
	t_str(c, "r");
	assert_int_equal(t_run(c, e->exp), RPCRDMA_SVC_SUCCESS);
	assert_int_equal(r_u32(c), 13);
	assert_int_equal(t_lstat(e, "st/s", &sb), 0);

	/* MKNOD ro/n, a character device, as root squashed to nobody */
	t_begin(c, 11, 0, 0);
	t_opaque(c, ro, rolen);
	t_str(c, "n");
	t_u32(c, 4); /* NF3CHR */
	t_sattr_mode(c, 0666);
	t_u32(c, 1);
	t_u32(c, 3);
	assert_int_equal(t_run(c, e->exp), RPCRDMA_SVC_SUCCESS);
	assert_int_equal(r_u32(c), 13);
	assert_int_equal(t_lstat(e, "ro/n", &sb), -ENOENT);
}

/* Regular files, directories, links and unknown types: NFS3ERR_BADTYPE. */
static void test_mknod_badtype(void **state)
{
	struct t_env *e = *state;
	struct stat st;
	const uint32_t types[] = { 0, 1, 2, 5, 8, 0xffffffffu };

	for (unsigned i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		assert_int_equal(do_mknod(e, e->exp_nosquash, 0, "bt", types[i], 0644,
					  0, 0, NULL), 10007);
		assert_int_equal(t_lstat(e, "bt", &st), -ENOENT);
	}
	/* a size in the attributes of a FIFO: NFS3ERR_INVAL, nothing made */
	{
		struct t_call *c = &e->c;

		t_begin(c, 11, 1000, 1000);
		t_opaque(c, e->root, e->rootlen);
		t_str(c, "sz");
		t_u32(c, 7);
		t_u32(c, 0); t_u32(c, 0); t_u32(c, 0);
		t_u32(c, 1); t_u64(c, 10);
		t_u32(c, 0); t_u32(c, 0);
		assert_int_equal(t_run(c, e->exp), RPCRDMA_SVC_SUCCESS);
		assert_int_equal(r_u32(c), 22);
		assert_int_equal(t_lstat(e, "sz", &st), -ENOENT);
	}
}

static void test_root_squash(void **state)
{
	struct t_env *e = *state;
	struct stat st;
	uint8_t fh[64];
	uint32_t fhlen;

	assert_int_equal(do_create(e, e->exp, 8, "sq", 0, fh, &fhlen), 0);
	assert_int_equal(t_lstat(e, "sq", &st), 0);
	assert_int_equal(st.st_uid, NOBODY);
	assert_int_equal(st.st_gid, NOBODY);

	assert_int_equal(do_create(e, e->exp_nosquash, 8, "nosq", 0, fh, &fhlen), 0);
	assert_int_equal(t_lstat(e, "nosq", &st), 0);
	assert_int_equal(st.st_uid, 0);
	assert_int_equal(st.st_gid, 0);

	/* AUTH_NONE is nobody too */
	t_begin(&e->c, 9, 0, 0);
	e->c.req.rq_msg.rm_cred_flavor = 0;
	e->c.req.rq_msg.rm_has_authsys = false;
	t_opaque(&e->c, e->root, e->rootlen);
	t_str(&e->c, "anon");
	t_sattr_none(&e->c);
	assert_int_equal(t_run(&e->c, e->exp_nosquash), RPCRDMA_SVC_SUCCESS);
	assert_int_equal(r_u32(&e->c), 0);
	assert_int_equal(t_lstat(e, "anon", &st), 0);
	assert_int_equal(st.st_uid, NOBODY);
}

static void test_readdirplus_cookies(void **state)
{
	struct t_env *e = *state;
	struct t_call *c = &e->c;
	enum { NFILES = 40 };
	int seen[NFILES + 2] = { 0 }; /* files, ".", ".." */
	uint64_t cookie = 0;
	uint8_t verf[8] = { 0 };
	unsigned calls = 0;
	bool eof = false;
	struct stat root;

	for (int i = 0; i < NFILES; i++) {
		char name[32];

		snprintf(name, sizeof(name), "file-%02d", i);
		make_file(e, name, "x", 0644);
	}
	assert_int_equal(t_lstat(e, ".", &root), 0);

	while (!eof) {
		assert_true(++calls < 100);
		t_begin(c, 17, 1000, 1000);
		t_opaque(c, e->root, e->rootlen);
		t_u64(c, cookie);
		memcpy(c->args + c->alen, verf, 8);
		c->alen += 8;
		t_u32(c, 4096); /* dircount */
		t_u32(c, 1024); /* maxcount: ~5 entries with handles */
		assert_int_equal(t_run(c, e->exp), RPCRDMA_SVC_SUCCESS);
		assert_true(c->rlen <= 1024);
		assert_int_equal(r_u32(c), 0);
		assert_true(r_post_op(c, NULL));
		memcpy(verf, c->res + c->rpos, 8);
		c->rpos += 8;
		while (r_u32(c)) {
			uint64_t fileid = r_u64(c);
			uint32_t n, fhl;
			const uint8_t *name = r_opaque(c, &n);
			char buf[256];
			struct t_fattr a;
			int idx;

			cookie = r_u64(c);
			assert_true(n < sizeof(buf));
			memcpy(buf, name, n);
			buf[n] = '\0';
			assert_true(r_post_op(c, &a));
			assert_int_equal(a.fileid, fileid);
			assert_int_equal(r_u32(c), 1); /* handle follows */
			r_opaque(c, &fhl);
			assert_true(fhl > 0 && fhl <= 64);
			if (strcmp(buf, ".") == 0) {
				idx = NFILES;
				assert_int_equal(fileid, root.st_ino);
			} else if (strcmp(buf, "..") == 0) {
				idx = NFILES + 1;
				assert_int_equal(fileid, root.st_ino);
			} else {
				assert_int_equal(sscanf(buf, "file-%d", &idx), 1);
				assert_true(idx >= 0 && idx < NFILES);
				assert_int_equal(a.size, 1);
			}
			seen[idx]++;
		}
		eof = r_u32(c);
		assert_int_equal(c->rpos, c->rlen);
	}
	assert_true(calls >= 5);
	for (int i = 0; i < NFILES + 2; i++)
		assert_int_equal(seen[i], 1);

	/* maxcount too small for one entry: NFS3ERR_TOOSMALL */
	t_begin(c, 17, 1000, 1000);
	t_opaque(c, e->root, e->rootlen);
	t_u64(c, 0);
	t_u64(c, 0);
	t_u32(c, 4096);
	t_u32(c, 120);
	assert_int_equal(t_run(c, e->exp), RPCRDMA_SVC_SUCCESS);
	assert_int_equal(r_u32(c), 10005);
}

static void test_bad_handles(void **state)
{
	struct t_env *e = *state;
	struct t_call *c = &e->c;
	uint8_t fh[64];
	uint32_t fhlen;

	/* one flipped bit anywhere: NFS3ERR_BADHANDLE */
	for (uint32_t i = 0; i < e->rootlen; i++) {
		memcpy(fh, e->root, e->rootlen);
		fh[i] ^= 0x10;
		t_begin(c, 1, 1000, 1000);
		t_opaque(c, fh, e->rootlen);
		assert_int_equal(t_run(c, e->exp), RPCRDMA_SVC_SUCCESS);
		assert_int_equal(r_u32(c), 10001);
		assert_int_equal(c->rlen, 4);
	}
	/* truncated, and empty */
	t_begin(c, 1, 1000, 1000);
	t_opaque(c, e->root, e->rootlen - 1);
	assert_int_equal(t_run(c, e->exp), RPCRDMA_SVC_SUCCESS);
	assert_int_equal(r_u32(c), 10001);
	t_begin(c, 1, 1000, 1000);
	t_opaque(c, e->root, 0);
	assert_int_equal(t_run(c, e->exp), RPCRDMA_SVC_SUCCESS);
	assert_int_equal(r_u32(c), 10001);

	/* a deleted file's handle: NFS3ERR_STALE */
	make_file(e, "gone", "", 0644);
	assert_int_equal(do_lookup(e, e->root, e->rootlen, "gone", fh, &fhlen, NULL), 0);
	assert_int_equal(t_fs_unlink(e->exp, e->dir, "gone"), 0);
	t_begin(c, 1, 1000, 1000);
	t_opaque(c, fh, fhlen);
	assert_int_equal(t_run(c, e->exp), RPCRDMA_SVC_SUCCESS);
	assert_int_equal(r_u32(c), 70);
}

static void test_symlink_not_followed(void **state)
{
	struct t_env *e = *state;
	struct t_call *c = &e->c;
	uint8_t fh[64];
	uint32_t fhlen, n;
	struct t_fattr a;
	const uint8_t *t;

	assert_int_equal(t_fs_symlink(e->exp, e->dir, "/etc/passwd", "esc"), 0);
	assert_int_equal(t_fs_symlink(e->exp, e->dir, "/etc", "escdir"), 0);

	assert_int_equal(do_lookup(e, e->root, e->rootlen, "esc", fh, &fhlen, &a), 0);
	assert_int_equal(a.type, 5); /* NF3LNK */
	assert_int_equal(a.size, strlen("/etc/passwd"));

	t_begin(c, 6, 0, 0);
	t_opaque(c, fh, fhlen);
	t_u64(c, 0);
	t_u32(c, 100);
	assert_int_equal(t_run(c, e->exp_nosquash), RPCRDMA_SVC_SUCCESS);
	assert_int_equal(r_u32(c), 22); /* NFS3ERR_INVAL: not a regular file */
	assert_false(c->req.rq_ddp);

	/* READLINK gives the text, unresolved */
	t_begin(c, 5, 1000, 1000);
	t_opaque(c, fh, fhlen);
	assert_int_equal(t_run(c, e->exp), RPCRDMA_SVC_SUCCESS);
	assert_int_equal(r_u32(c), 0);
	assert_true(r_post_op(c, NULL));
	t = r_opaque(c, &n);
	assert_int_equal(n, 11);
	assert_memory_equal(t, "/etc/passwd", 11);
	/* ... handed to the transport as DDP-eligible data (RFC 8267) */
	assert_true(c->req.rq_ddp);
	assert_int_equal(c->req.rq_ddp_len, 11);
	assert_ptr_equal(c->req.rq_res.xs_base + c->req.rq_ddp_pos, t);

	/* a symlink to a directory is no directory to LOOKUP in */
	assert_int_equal(do_lookup(e, e->root, e->rootlen, "escdir", fh, &fhlen, &a), 0);
	assert_int_equal(a.type, 5);
	assert_int_equal(do_lookup(e, fh, fhlen, "passwd", NULL, NULL, NULL), 20);

	/* SYMLINK creates one (the server never resolves the target) */
	t_begin(c, 10, 1000, 1000);
	t_opaque(c, e->root, e->rootlen);
	t_str(c, "made");
	t_sattr_none(c);
	t_str(c, "../../x");
	assert_int_equal(t_run(c, e->exp), RPCRDMA_SVC_SUCCESS);
	assert_int_equal(r_u32(c), 0);
	{
		char buf[64];
		ssize_t l = t_fs_readlink(e->exp, e->dir, "made", buf, sizeof(buf));

		assert_int_equal(l, 7);
		assert_memory_equal(buf, "../../x", 7);
	}
}

static void test_garbage_and_auth(void **state)
{
	struct t_env *e = *state;
	struct t_call *c = &e->c;

	/* GETATTR with no argument at all */
	t_begin(c, 1, 1000, 1000);
	assert_int_equal(t_run(c, e->exp), RPCRDMA_SVC_GARBAGE_ARGS);
	/* a handle longer than NFS3_FHSIZE */
	t_begin(c, 1, 1000, 1000);
	t_u32(c, 65);
	for (int i = 0; i < 17; i++)
		t_u32(c, 0);
	assert_int_equal(t_run(c, e->exp), RPCRDMA_SVC_GARBAGE_ARGS);
	/* a length that runs past the end */
	t_begin(c, 3, 1000, 1000);
	t_opaque(c, e->root, e->rootlen);
	t_u32(c, 200);
	t_u32(c, 0x41414141);
	assert_int_equal(t_run(c, e->exp), RPCRDMA_SVC_GARBAGE_ARGS);
	/* WRITE whose count exceeds its data */
	t_begin(c, 7, 1000, 1000);
	t_opaque(c, e->root, e->rootlen);
	t_u64(c, 0);
	t_u32(c, 8);
	t_u32(c, 0);
	t_opaque(c, "abcd", 4);
	assert_int_equal(t_run(c, e->exp), RPCRDMA_SVC_GARBAGE_ARGS);
	/* a bool that is not 0 or 1 in SETATTR */
	t_begin(c, 2, 1000, 1000);
	t_opaque(c, e->root, e->rootlen);
	t_u32(c, 7);
	assert_int_equal(t_run(c, e->exp), RPCRDMA_SVC_GARBAGE_ARGS);
	/* unknown procedure */
	t_begin(c, 22, 1000, 1000);
	assert_int_equal(t_run(c, e->exp), RPCRDMA_SVC_PROC_UNAVAIL);
	/* RPCSEC_GSS (6) is too weak a flavour here... */
	t_begin(c, 1, 1000, 1000);
	c->req.rq_msg.rm_cred_flavor = 6;
	c->req.rq_msg.rm_has_authsys = false;
	t_opaque(c, e->root, e->rootlen);
	assert_int_equal(t_run(c, e->exp), RPCRDMA_SVC_AUTH_ERROR);
	assert_int_equal(c->req.rq_auth_stat, RPCRDMA_AUTH_TOOWEAK);
	/* ...and a malformed AUTH_SYS credential is a bad one */
	t_begin(c, 1, 1000, 1000);
	c->req.rq_msg.rm_has_authsys = false;
	t_opaque(c, e->root, e->rootlen);
	assert_int_equal(t_run(c, e->exp), RPCRDMA_SVC_AUTH_ERROR);
	assert_int_equal(c->req.rq_auth_stat, RPCRDMA_AUTH_BADCRED);
	/* MKNOD with no arguments at all: GARBAGE_ARGS */
	t_begin(c, 11, 1000, 1000);
	assert_int_equal(t_run(c, e->exp), RPCRDMA_SVC_GARBAGE_ARGS);
	/* no room for the result: SYSTEM_ERR */
	t_begin(c, 1, 1000, 1000);
	t_opaque(c, e->root, e->rootlen);
	assert_int_equal(t_run_len(c, e->exp, 40), RPCRDMA_SVC_SYSTEM_ERR);
}

/*
 * SETATTR of mtime alone to the server's time (what the Linux client sends
 * with the size for open(O_TRUNC)) by a caller who may write the file but
 * does not own it: allowed, as knfsd allows it (write permission is enough
 * when no time is the client's); atime stays.  Without write permission:
 * NFS3ERR_ACCES, as knfsd.  (utimensat() alone asks for ownership when one
 * time is UTIME_OMIT: NFS3ERR_PERM.)
 */
static void test_setattr_mtime_now_by_writer(void **state)
{
	struct t_env *e = *state;
	struct t_call *c = &e->c;
	const char *names[2] = { "w666", "w644" };
	uint8_t fh[64];
	uint32_t fhlen;
	struct stat st;

	for (int i = 0; i < 2; i++) {
		make_file(e, names[i], "data", i == 0 ? 0666 : 0644);
		assert_int_equal(t_fs_chown(e->exp, e->dir, names[i], 2000, 2000), 0);
		assert_int_equal(t_fs_utimes(e->exp, e->dir, names[i], 500, 1000), 0);
		assert_int_equal(do_lookup(e, e->root, e->rootlen, names[i], fh, &fhlen,
					   NULL), 0);
		t_begin(c, 2, 1000, 1000);
		t_opaque(c, fh, fhlen);
		t_u32(c, 0); /* mode */
		t_u32(c, 0); /* uid */
		t_u32(c, 0); /* gid */
		t_u32(c, 0); /* size */
		t_u32(c, 0); /* atime: don't change */
		t_u32(c, 1); /* mtime: server time */
		t_u32(c, 0); /* no guard */
		assert_int_equal(t_run(c, e->exp), RPCRDMA_SVC_SUCCESS);
		assert_int_equal(r_u32(c), i == 0 ? 0 : 13);
		assert_int_equal(t_lstat(e, names[i], &st), 0);
		assert_int_equal(st.st_atim.tv_sec, 500);
		if (i == 0)
			assert_true(st.st_mtim.tv_sec > 1000);
		else
			assert_int_equal(st.st_mtim.tv_sec, 1000);
	}
}

/*
 * READDIR and READDIRPLUS of a directory its caller may read but not
 * search (0600): listed, as knfsd lists it (reading needs read permission
 * only); a directory the caller may not read (0300): NFS3ERR_ACCES.
 */
static void test_readdir_without_search(void **state)
{
	struct t_env *e = *state;
	struct t_call *c = &e->c;
	uint8_t fh[64];
	uint32_t fhlen;

	assert_int_equal(t_fs_mkdir(e->exp, e->dir, "nx", 0700), 0);
	make_file(e, "nx/f", "x", 0644);
	assert_int_equal(t_fs_chown(e->exp, e->dir, "nx", 1000, 1000), 0);
	assert_int_equal(do_lookup(e, e->root, e->rootlen, "nx", fh, &fhlen, NULL), 0);
	for (int mode = 0; mode < 2; mode++) {
		assert_int_equal(t_fs_chmod(e->exp, e->dir, "nx", mode == 0 ? 0600 : 0300), 0);
		for (uint32_t proc = 16; proc <= 17; proc++) {
			t_begin(c, proc, 1000, 1000);
			t_opaque(c, fh, fhlen);
			t_u64(c, 0); /* cookie */
			t_u64(c, 0); /* cookieverf3: zero */
			t_u32(c, 8192);
			if (proc == 17)
				t_u32(c, 8192);
			assert_int_equal(t_run(c, e->exp), RPCRDMA_SVC_SUCCESS);
			assert_int_equal(r_u32(c), mode == 0 ? 0 : 13);
		}
	}
}

static void test_setattr_and_fsinfo(void **state)
{
	struct t_env *e = *state;
	struct t_call *c = &e->c;
	uint8_t fh[64];
	uint32_t fhlen;
	struct t_fattr a;
	struct stat st;

	make_file(e, "sz", "0123456789", 0644);
	assert_int_equal(t_fs_chown(e->exp, e->dir, "sz", 1000, 1000), 0);
	assert_int_equal(do_lookup(e, e->root, e->rootlen, "sz", fh, &fhlen, NULL), 0);
	/* the owner sets size and an explicit atime */
	t_begin(c, 2, 1000, 1000);
	t_opaque(c, fh, fhlen);
	t_u32(c, 0); /* mode */
	t_u32(c, 0); /* uid */
	t_u32(c, 0); /* gid */
	t_u32(c, 1); /* size */
	t_u64(c, 3);
	t_u32(c, 2); /* atime: client time */
	t_u32(c, 1000000);
	t_u32(c, 5);
	t_u32(c, 0); /* mtime: don't change */
	t_u32(c, 0); /* no guard */
	assert_int_equal(t_run(c, e->exp), RPCRDMA_SVC_SUCCESS);
	assert_int_equal(r_u32(c), 0);
	r_wcc(c, &a);
	assert_int_equal(a.size, 3);
	assert_int_equal(a.atime[0], 1000000);
	assert_int_equal(a.atime[1], 5);
	assert_int_equal(t_lstat(e, "sz", &st), 0);
	assert_int_equal(st.st_size, 3);

	/* chmod by a non-owner: NFS3ERR_PERM */
	t_begin(c, 2, 2000, 2000);
	t_opaque(c, fh, fhlen);
	t_sattr_mode(c, 0600);
	t_u32(c, 0);
	assert_int_equal(t_run(c, e->exp), RPCRDMA_SVC_SUCCESS);
	assert_int_equal(r_u32(c), 1);

	t_begin(c, 19, 1000, 1000);
	t_opaque(c, e->root, e->rootlen);
	assert_int_equal(t_run(c, e->exp), RPCRDMA_SVC_SUCCESS);
	assert_int_equal(r_u32(c), 0);
	assert_true(r_post_op(c, NULL));
	assert_int_equal(r_u32(c), 1u << 20); /* rtmax */
	assert_int_equal(r_u32(c), 1u << 20); /* rtpref */
	assert_int_equal(r_u32(c), 4096);     /* rtmult */
	assert_int_equal(r_u32(c), 1u << 20); /* wtmax */
	assert_int_equal(r_u32(c), 1u << 20); /* wtpref */
	assert_int_equal(r_u32(c), 4096);     /* wtmult */
	assert_int_equal(r_u32(c), 65536);    /* dtpref */
	assert_int_equal(r_u64(c), 0x7fffffffffffffffull);
	assert_int_equal(r_u32(c), 0);        /* time_delta 0 s 1 ns */
	assert_int_equal(r_u32(c), 1);
	assert_int_equal(r_u32(c), 0x1b);     /* LINK|SYMLINK|HOMOGENEOUS|CANSETTIME */
	assert_int_equal(c->rpos, c->rlen);

	t_begin(c, 18, 1000, 1000);
	t_opaque(c, e->root, e->rootlen);
	assert_int_equal(t_run(c, e->exp), RPCRDMA_SVC_SUCCESS);
	assert_int_equal(r_u32(c), 0);
	assert_true(r_post_op(c, NULL));
	{
		uint64_t tbytes = r_u64(c), want;

		assert_int_equal(t_fs_total_bytes(e->exp, e->dir, &want), 0);
		assert_int_equal(tbytes, want);
	}
}

/* Every strict prefix of a well-formed argument list is GARBAGE_ARGS. */
static void check_prefixes(struct t_env *e, struct t_call *c)
{
	uint8_t full[sizeof(c->args)];
	size_t len = c->alen;
	uint32_t proc = c->req.rq_msg.rm_proc;

	memcpy(full, c->args, len);
	for (size_t n = 0; n < len; n++) {
		t_begin(c, proc, 1000, 1000);
		memcpy(c->args, full, n);
		c->alen = n;
		assert_int_equal(t_run(c, e->exp), RPCRDMA_SVC_GARBAGE_ARGS);
	}
}

static void test_truncated_args(void **state)
{
	struct t_env *e = *state;
	struct t_call *c = &e->c;

	t_begin(c, 2, 1000, 1000); /* SETATTR: every field set, guard */
	t_opaque(c, e->root, e->rootlen);
	t_u32(c, 1); t_u32(c, 0755);
	t_u32(c, 1); t_u32(c, 1000);
	t_u32(c, 1); t_u32(c, 1000);
	t_u32(c, 1); t_u64(c, 0);
	t_u32(c, 2); t_u32(c, 1); t_u32(c, 2);
	t_u32(c, 2); t_u32(c, 1); t_u32(c, 2);
	t_u32(c, 1); t_u32(c, 5); t_u32(c, 6);
	check_prefixes(e, c);

	t_begin(c, 7, 1000, 1000); /* WRITE */
	t_opaque(c, e->root, e->rootlen);
	t_u64(c, 0);
	t_u32(c, 5);
	t_u32(c, 2);
	t_opaque(c, "abcde", 5);
	check_prefixes(e, c);

	t_begin(c, 8, 1000, 1000); /* CREATE EXCLUSIVE */
	t_opaque(c, e->root, e->rootlen);
	t_str(c, "name");
	t_u32(c, 2);
	t_u64(c, 0x0102030405060708ull);
	check_prefixes(e, c);

	t_begin(c, 10, 1000, 1000); /* SYMLINK */
	t_opaque(c, e->root, e->rootlen);
	t_str(c, "ln");
	t_sattr_mode(c, 0777);
	t_str(c, "target");
	check_prefixes(e, c);

	t_begin(c, 11, 1000, 1000); /* MKNOD of a character device */
	t_opaque(c, e->root, e->rootlen);
	t_str(c, "dev");
	t_u32(c, 4); /* NF3CHR */
	t_sattr_mode(c, 0600);
	t_u32(c, 1);
	t_u32(c, 3);
	check_prefixes(e, c);

	t_begin(c, 14, 1000, 1000); /* RENAME */
	t_opaque(c, e->root, e->rootlen);
	t_str(c, "a");
	t_opaque(c, e->root, e->rootlen);
	t_str(c, "b");
	check_prefixes(e, c);

	t_begin(c, 17, 1000, 1000); /* READDIRPLUS */
	t_opaque(c, e->root, e->rootlen);
	t_u64(c, 0);
	t_u64(c, 0);
	t_u32(c, 100);
	t_u32(c, 1000);
	check_prefixes(e, c);
}

/* This thread's fsuid, fsgid (read back with an invalid id) and groups. */
static void assert_thread_ids(uint32_t uid, uint32_t gid, unsigned ngids, const gid_t *gids)
{
	gid_t got[RPC_AUTH_SYS_MAX_GIDS + 1];
	int n = getgroups(RPC_AUTH_SYS_MAX_GIDS + 1, got);

	assert_int_equal((uint32_t)syscall(SYS_setfsuid, (uid_t)-1), uid);
	assert_int_equal((uint32_t)syscall(SYS_setfsgid, (gid_t)-1), gid);
	assert_int_equal(n, (int)ngids);
	if (ngids)
		assert_memory_equal(got, gids, ngids * sizeof(gid_t));
}

/*
 * The per-thread credential cache: whatever was set before, apply leaves
 * the caller's fsuid, fsgid and groups, restore the server's ids; a root
 * server keeps the last caller's groups while it acts as itself.
 */
static void test_cred_switch_cached(void **state)
{
	const struct fs_cred a = { .cr_uid = 1000, .cr_gid = 1001, .cr_ngids = 2,
				     .cr_gids = { 7, 8 } };
	const struct fs_cred b = { .cr_uid = 1002, .cr_gid = 1003, .cr_ngids = 0 };
	const struct fs_cred root = { .cr_uid = 0, .cr_gid = 0, .cr_ngids = 0 };
	const gid_t ga[] = { 7, 8 };

	(void)state;
	assert_int_equal(fs_cred_apply(&a), 0);
	assert_thread_ids(1000, 1001, 2, ga);
	assert_int_equal(fs_cred_apply(&a), 0); /* unchanged: nothing to do */
	assert_thread_ids(1000, 1001, 2, ga);
	fs_cred_restore();
	assert_thread_ids(0, 0, 2, ga);
	assert_int_equal(fs_cred_apply(&a), 0);
	assert_thread_ids(1000, 1001, 2, ga);
	assert_int_equal(fs_cred_apply(&b), 0);
	assert_thread_ids(1002, 1003, 0, NULL);
	fs_cred_restore();
	assert_thread_ids(0, 0, 0, NULL);
	assert_int_equal(fs_cred_apply(&root), 0);
	assert_thread_ids(0, 0, 0, NULL);
	fs_cred_restore();
	assert_thread_ids(0, 0, 0, NULL);
}

static const struct t_case cases[] = {
	T_CASE(test_null_and_getattr_root, env_setup, env_teardown, T_ANY),
	T_CASE(test_lookup_file, env_setup, env_teardown, T_ANY),
	T_CASE(test_lookup_dotdot_at_root, env_setup, env_teardown, T_ANY),
	T_CASE(test_write_read_commit, env_setup, env_teardown, T_ANY),
	T_CASE(test_read_permission, env_setup, env_teardown, T_ANY),
	T_CASE(test_create_mkdir_remove_rmdir, env_setup, env_teardown, T_ANY),
	T_CASE(test_create_mode_not_umasked, env_setup, env_teardown, T_ANY),
	T_CASE(test_create_exclusive_verifier, env_setup, env_teardown, T_ANY),
	T_CASE(test_root_squash, env_setup, env_teardown, T_ANY),
	T_CASE(test_mknod_fifo_socket, env_setup, env_teardown, T_ANY),
	T_CASE(test_mknod_devices, env_setup, env_teardown, T_ANY),
	T_CASE(test_mknod_badtype, env_setup, env_teardown, T_ANY),
	T_CASE(test_dir_access_checked_first, env_setup, env_teardown, T_ANY),
	T_CASE(test_readdirplus_cookies, env_setup, env_teardown, T_ANY),
	T_CASE(test_readdir_without_search, env_setup, env_teardown, T_ANY),
	T_CASE(test_bad_handles, env_setup, env_teardown, T_ANY),
	T_CASE(test_symlink_not_followed, env_setup, env_teardown, T_ANY),
	T_CASE(test_garbage_and_auth, env_setup, env_teardown, T_ANY),
	T_CASE(test_setattr_and_fsinfo, env_setup, env_teardown, T_ANY),
	T_CASE(test_setattr_mtime_now_by_writer, env_setup, env_teardown, T_ANY),
	T_CASE(test_truncated_args, env_setup, env_teardown, T_ANY),
};

/* the procedures on backend @be, exports under @base */
static int run_on(enum t_be be, const char *base)
{
	char name[64];

	g_base = base;
	snprintf(name, sizeof(name), "nfs3_proc on %s", base);
	return t_run_cases(be, name, cases, T_NCASES(cases), NULL, NULL);
}

int main(void)
{
	const char *tmp = getenv("TMPDIR");
	/* the thread's credential switch: the posix backend's (needs root) */
	static const struct t_case cred[] = {
		{ cmocka_unit_test(test_cred_switch_cached), T_POSIX_ONLY },
	};
	struct statfs sf;
	int fails = 0;

	fails += t_run_cases(T_BE_POSIX, "nfs3 credentials", cred, T_NCASES(cred),
			     NULL, NULL);
	if (statfs("/dev/shm", &sf) == 0 && sf.f_type == 0x01021994) /* TMPFS_MAGIC */
		fails += run_on(T_BE_POSIX, "/dev/shm");
	fails += run_on(T_BE_POSIX, tmp && *tmp ? tmp : "/tmp");
	fails += run_on(T_BE_MEMORY, "/mem");
	return t_exit(fails);
}
