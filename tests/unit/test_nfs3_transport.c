// SPDX-License-Identifier: MIT
/*
 * test_nfs3_transport.c - which NFSv3 calls rpcrdma_nfs3_dispatch() serves
 * on the transport thread (rq_transport set) and which it hands to a
 * worker (RPCRDMA_SVC_DEFER), on a temporary export of $TMPDIR (or /tmp).
 *
 * The rules (src/nfs3/nfs3_transport.c): the transport thread never
 * changes its credentials and never waits for the disk by design.  So
 * GETATTR serves any caller there; the other permission-checked
 * procedures only a caller the server acting as itself already is (a
 * root caller of a no_root_squash export, group 0); WRITE, COMMIT,
 * READDIR, READDIRPLUS and a SETATTR of the size always defer; READ is
 * served from the page cache only.  A deferred call must have changed
 * nothing.  The last test runs the transport calls under a seccomp filter
 * that kills the process on any credential system call.  These are the
 * posix backend's rules (as root: file handles, chown).
 *
 * The memory backend switches no identity and never waits for a disk
 * (fs_needs_identity() false, fs_never_waits() true): every call of any
 * caller is served on the transport thread but a READ or WRITE of more
 * than NFS3_TRANSPORT_MAX_IO, and no call anywhere makes a credential
 * system call (test_memory_every_call_here, test_no_credential_syscalls).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test_nfs3_harness.h"

#include "nfs3/nfs3_internal.h"

#define P_GETATTR 1u
#define P_SETATTR 2u
#define P_LOOKUP 3u
#define P_READ 6u
#define P_WRITE 7u
#define P_CREATE 8u
#define P_REMOVE 12u
#define P_READDIR 16u
#define P_COMMIT 21u
#define TMPFS_MAGIC_ 0x01021994

struct t_env {
	char dir[256];
	struct rpcrdma_nfs3_export *exp;         /* root squashed */
	struct rpcrdma_nfs3_export *exp_nosquash;
	uint8_t root[64];
	uint32_t rootlen;
	struct t_call c;
};

static int env_setup_in(void **state, const char *base)
{
	struct t_env *e = calloc(1, sizeof(*e));

	if (!e || t_export_dir(e->dir, sizeof(e->dir), base, "nfs3tr", 5,
			       &e->exp, &e->exp_nosquash))
		return -1;
	if (rpcrdma_nfs3_root_fh(e->exp, e->root, &e->rootlen))
		return -1;
	/* async exports: on a disk, sync ones commit metadata, which only a
	 * worker may wait for (test_sync_commits_on_workers) */
	e->exp->ex_async = e->exp_nosquash->ex_async = true;
	*state = e;
	return 0;
}

static int env_setup(void **state)
{
	const char *tmp = getenv("TMPDIR");

	return env_setup_in(state, tmp && *tmp ? tmp : "/tmp");
}

/* On tmpfs (/dev/shm): a file system with everything in memory. */
static int env_setup_shm(void **state)
{
	struct statfs sf;

	if (statfs("/dev/shm", &sf) != 0 || sf.f_type != TMPFS_MAGIC_) {
		*state = NULL;
		return 0;
	}
	return env_setup_in(state, "/dev/shm");
}

static int env_teardown(void **state)
{
	struct t_env *e = *state;

	if (!e)
		return 0; /* skipped */
	rpcrdma_nfs3_export_close(e->exp);
	rpcrdma_nfs3_export_close(e->exp_nosquash);
	t_fs_remove_tree(e->dir);
	t_free(&e->c);
	free(e);
	return 0;
}

static void path_of(struct t_env *e, const char *name, char *buf)
{
	snprintf(buf, PATH_MAX, "%s/%s", e->dir, name);
}

/* t_lstat - t_fs_lstat() in @e's export. */
static int t_lstat(struct t_env *e, const char *name, struct stat *st)
{
	return t_fs_lstat(e->exp, e->dir, name, st);
}

/* A call of @proc from @uid/@gid on the transport thread (or not). */
static void begin(struct t_env *e, uint32_t proc, uint32_t uid, uint32_t gid,
		  bool transport)
{
	t_begin(&e->c, proc, uid, gid);
	e->c.req.rq_transport = transport;
}

/* The handle of @name (made here, as the server makes them). */
static uint32_t fh_of(struct t_env *e, const char *name, uint8_t *fh)
{
	int len = t_fs_fh(e->exp, name, fh);

	assert_true(len > 0);
	return (uint32_t)len;
}

/* @name: @len bytes (a multiple of 4096), byte i of each 4 KiB i * 13 + 1 */
static void make_file(struct t_env *e, const char *name, size_t len)
{
	uint8_t *buf = malloc(len);

	assert_non_null(buf);
	for (size_t i = 0; i < len; i++)
		buf[i] = (uint8_t)((i % 4096) * 13 + 1);
	assert_int_equal(t_fs_write_file(e->exp, e->dir, name, buf, len, 0644), 0);
	free(buf);
}

static void create_args(struct t_env *e, const char *name)
{
	t_opaque(&e->c, e->root, e->rootlen);
	t_str(&e->c, name);
	t_u32(&e->c, 1); /* GUARDED */
	t_sattr_mode(&e->c, 0640);
}

static bool exists(struct t_env *e, const char *name)
{
	struct stat st;

	return t_lstat(e, name, &st) == 0;
}

/* An ordinary user: GETATTR here; LOOKUP and CREATE need its identity. */
static void test_user_calls(void **state)
{
	struct t_env *e = *state;
	struct t_fattr a;

	begin(e, P_GETATTR, 1000, 1000, true);
	t_opaque(&e->c, e->root, e->rootlen);
	assert_int_equal(t_run(&e->c, e->exp), RPCRDMA_SVC_SUCCESS);
	assert_int_equal(r_u32(&e->c), 0);
	r_fattr(&e->c, &a);
	assert_int_equal(a.type, 2); /* NF3DIR */
	assert_int_equal(e->c.rpos, e->c.rlen);

	make_file(e, "f", 4096);
	begin(e, P_LOOKUP, 1000, 1000, true);
	t_opaque(&e->c, e->root, e->rootlen);
	t_str(&e->c, "f");
	assert_int_equal(t_run(&e->c, e->exp), RPCRDMA_SVC_DEFER);

	begin(e, P_CREATE, 1000, 1000, true);
	create_args(e, "new");
	assert_int_equal(t_run(&e->c, e->exp), RPCRDMA_SVC_DEFER);
	assert_false(exists(e, "new"));
	/* root squashed to nobody is an ordinary user too */
	begin(e, P_CREATE, 0, 0, true);
	create_args(e, "new");
	assert_int_equal(t_run(&e->c, e->exp), RPCRDMA_SVC_DEFER);
	assert_false(exists(e, "new"));
	/* the same call on a worker is served */
	begin(e, P_CREATE, 1000, 1000, false);
	create_args(e, "new");
	assert_int_equal(t_run(&e->c, e->exp), RPCRDMA_SVC_SUCCESS);
	assert_int_equal(r_u32(&e->c), 0);
	assert_true(exists(e, "new"));
}

/* Root on a no_root_squash export: metadata calls are served here. */
static void test_root_calls(void **state)
{
	struct t_env *e = *state;
	uint8_t fh[64];
	uint32_t fhlen;
	struct stat st;

	begin(e, P_CREATE, 0, 0, true);
	create_args(e, "r1");
	assert_int_equal(t_run(&e->c, e->exp_nosquash), RPCRDMA_SVC_SUCCESS);
	assert_int_equal(r_u32(&e->c), 0);
	assert_int_equal(t_lstat(e, "r1", &st), 0);
	assert_int_equal(st.st_uid, 0);
	assert_int_equal(st.st_mode & 07777, 0640);
	/* a root caller in another group is not the server: a worker */
	begin(e, P_CREATE, 0, 5, true);
	create_args(e, "r2");
	assert_int_equal(t_run(&e->c, e->exp_nosquash), RPCRDMA_SVC_DEFER);
	assert_false(exists(e, "r2"));

	fhlen = fh_of(e, "r1", fh);
	/* SETATTR of the mode: here; of the size: a worker, nothing changed */
	begin(e, P_SETATTR, 0, 0, true);
	t_opaque(&e->c, fh, fhlen);
	t_sattr_mode(&e->c, 0600);
	t_u32(&e->c, 0); /* no guard */
	assert_int_equal(t_run(&e->c, e->exp_nosquash), RPCRDMA_SVC_SUCCESS);
	assert_int_equal(r_u32(&e->c), 0);
	assert_int_equal(t_lstat(e, "r1", &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	begin(e, P_SETATTR, 0, 0, true);
	t_opaque(&e->c, fh, fhlen);
	for (int i = 0; i < 3; i++)
		t_u32(&e->c, 0); /* mode, uid, gid not set */
	t_u32(&e->c, 1);
	t_u64(&e->c, 12345); /* size */
	t_u32(&e->c, 0);
	t_u32(&e->c, 0); /* times not set */
	t_u32(&e->c, 0);
	assert_int_equal(t_run(&e->c, e->exp_nosquash), RPCRDMA_SVC_DEFER);
	assert_int_equal(t_lstat(e, "r1", &st), 0);
	assert_int_equal(st.st_size, 0);

	/* WRITE, COMMIT and READDIR wait for the disk by design */
	begin(e, P_WRITE, 0, 0, true);
	t_opaque(&e->c, fh, fhlen);
	t_u64(&e->c, 0);
	t_u32(&e->c, 3);
	t_u32(&e->c, 2); /* FILE_SYNC */
	t_opaque(&e->c, "abc", 3);
	assert_int_equal(t_run(&e->c, e->exp_nosquash), RPCRDMA_SVC_DEFER);
	assert_int_equal(t_lstat(e, "r1", &st), 0);
	assert_int_equal(st.st_size, 0);
	begin(e, P_COMMIT, 0, 0, true);
	t_opaque(&e->c, fh, fhlen);
	t_u64(&e->c, 0);
	t_u32(&e->c, 0);
	assert_int_equal(t_run(&e->c, e->exp_nosquash), RPCRDMA_SVC_DEFER);
	begin(e, P_READDIR, 0, 0, true);
	t_opaque(&e->c, e->root, e->rootlen);
	t_u64(&e->c, 0);
	t_u64(&e->c, 0);
	t_u32(&e->c, 4096);
	assert_int_equal(t_run(&e->c, e->exp_nosquash), RPCRDMA_SVC_DEFER);

	begin(e, P_REMOVE, 0, 0, true);
	t_opaque(&e->c, e->root, e->rootlen);
	t_str(&e->c, "r1");
	assert_int_equal(t_run(&e->c, e->exp_nosquash), RPCRDMA_SVC_SUCCESS);
	assert_int_equal(r_u32(&e->c), 0);
	assert_false(exists(e, "r1"));
}

/*
 * Drop the first page of @fd's file from the page cache; whether it went,
 * as mincore() sees it (a read would bring it back).  DONTNEED leaves
 * dirty pages, pages under writeback and pages still in another CPU's LRU
 * batch, so on a busy host it is written back and tried again.
 */
static bool drop_first_page(int fd)
{
	unsigned char vec = 1;
	void *m = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);

	assert_true(m != MAP_FAILED);
	assert_int_equal(fsync(fd), 0);
	for (int i = 0; i < 100 && (vec & 1); i++) {
		assert_int_equal(posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED), 0);
		assert_int_equal(mincore(m, 4096, &vec), 0);
		if (vec & 1)
			usleep(10000);
	}
	munmap(m, 4096);
	return !(vec & 1);
}

/* READ: from the page cache here; what is not cached on a worker. */
static void test_read_cached_only(void **state)
{
	struct t_env *e = *state;
	uint8_t fh[64];
	uint32_t fhlen, n;
	const uint8_t *data;
	struct statfs sf;
	char p[PATH_MAX];
	int fd;

	make_file(e, "d", 8192);
	fhlen = fh_of(e, "d", fh);
	begin(e, P_READ, 0, 0, true);
	t_opaque(&e->c, fh, fhlen);
	t_u64(&e->c, 4096);
	t_u32(&e->c, 100);
	if (t_run(&e->c, e->exp_nosquash) == RPCRDMA_SVC_DEFER) {
		/* only when the file system has no RWF_NOWAIT: then never again */
		assert_true(e->exp_nosquash->ex_nowait_unsupported);
		begin(e, P_READ, 0, 0, true);
		t_opaque(&e->c, fh, fhlen);
		t_u64(&e->c, 0);
		t_u32(&e->c, 1);
		assert_int_equal(t_run(&e->c, e->exp_nosquash), RPCRDMA_SVC_DEFER);
		return;
	}
	assert_int_equal(e->c.ret, RPCRDMA_SVC_SUCCESS);
	assert_int_equal(r_u32(&e->c), 0);
	assert_true(r_post_op(&e->c, NULL));
	assert_int_equal(r_u32(&e->c), 100); /* count */
	assert_int_equal(r_u32(&e->c), 0);   /* not eof */
	data = r_opaque(&e->c, &n);
	assert_int_equal(n, 100);
	for (uint32_t i = 0; i < n; i++)
		assert_int_equal(data[i], (uint8_t)(i * 13 + 1)); /* 4096 % 4096 == 0 */

	/* dropped from the page cache (not possible on tmpfs): a worker */
	assert_int_equal(statfs(e->dir, &sf), 0);
	if (sf.f_type == TMPFS_MAGIC_)
		return;
	path_of(e, "d", p);
	fd = open(p, O_RDONLY);
	assert_true(fd >= 0);
	if (!drop_first_page(fd)) {
		close(fd);
		skip(); /* the host kept the page: nothing to test here */
	}
	close(fd);
	/*
	 * the open-file cache's descriptor may keep nothing cached either.
	 * The RWF_NOWAIT read that finds the page missing starts readahead;
	 * once in a while (about 1 in 40 on a fast disk) that read is done
	 * before the kernel looks again, and the call is served here after all.
	 */
	begin(e, P_READ, 0, 0, true);
	t_opaque(&e->c, fh, fhlen);
	t_u64(&e->c, 0);
	t_u32(&e->c, 4096);
	if (t_run(&e->c, e->exp_nosquash) != RPCRDMA_SVC_DEFER) {
		assert_int_equal(e->c.ret, RPCRDMA_SVC_SUCCESS);
		assert_int_equal(r_u32(&e->c), 0);
		assert_true(r_post_op(&e->c, NULL));
		assert_int_equal(r_u32(&e->c), 4096);
		return;
	}
	begin(e, P_READ, 0, 0, false);
	t_opaque(&e->c, fh, fhlen);
	t_u64(&e->c, 0);
	t_u32(&e->c, 4096);
	assert_int_equal(t_run(&e->c, e->exp_nosquash), RPCRDMA_SVC_SUCCESS);
	assert_int_equal(r_u32(&e->c), 0);
	assert_true(r_post_op(&e->c, NULL));
	assert_int_equal(r_u32(&e->c), 4096);
}

/*
 * tmpfs keeps everything in memory: a root caller's WRITE, COMMIT and
 * READDIR stay on the transport thread there (a READ too, though tmpfs has
 * no RWF_NOWAIT), but not a READ or WRITE of more than 64 KiB, nor any
 * call of an ordinary user that needs its identity.
 */
static void test_mem_fs_calls(void **state)
{
	struct t_env *e = *state;
	uint8_t fh[64];
	uint32_t fhlen, n;
	struct stat st;
	const uint8_t *data;

	if (!e)
		skip();
	make_file(e, "w", 4096);
	fhlen = fh_of(e, "w", fh);
	begin(e, P_WRITE, 0, 0, true);
	t_opaque(&e->c, fh, fhlen);
	t_u64(&e->c, 4096);
	t_u32(&e->c, 3);
	t_u32(&e->c, 2); /* FILE_SYNC */
	t_opaque(&e->c, "abc", 3);
	assert_int_equal(t_run(&e->c, e->exp_nosquash), RPCRDMA_SVC_SUCCESS);
	assert_int_equal(r_u32(&e->c), 0);
	assert_int_equal(t_lstat(e, "w", &st), 0);
	assert_int_equal(st.st_size, 4099);
	/* a READ of more than 64 KiB: a worker (a WRITE that large does not
	 * fit the harness's arguments; its check is the same) */
	begin(e, P_READ, 0, 0, true);
	t_opaque(&e->c, fh, fhlen);
	t_u64(&e->c, 0);
	t_u32(&e->c, 65540);
	assert_int_equal(t_run(&e->c, e->exp_nosquash), RPCRDMA_SVC_DEFER);
	begin(e, P_READ, 0, 0, true);
	t_opaque(&e->c, fh, fhlen);
	t_u64(&e->c, 4096);
	t_u32(&e->c, 3);
	assert_int_equal(t_run(&e->c, e->exp_nosquash), RPCRDMA_SVC_SUCCESS);
	assert_int_equal(r_u32(&e->c), 0);
	assert_true(r_post_op(&e->c, NULL));
	assert_int_equal(r_u32(&e->c), 3);
	assert_int_equal(r_u32(&e->c), 1); /* eof */
	data = r_opaque(&e->c, &n);
	assert_int_equal(n, 3);
	assert_memory_equal(data, "abc", 3);
	begin(e, P_COMMIT, 0, 0, true);
	t_opaque(&e->c, fh, fhlen);
	t_u64(&e->c, 0);
	t_u32(&e->c, 0);
	assert_int_equal(t_run(&e->c, e->exp_nosquash), RPCRDMA_SVC_SUCCESS);
	assert_int_equal(r_u32(&e->c), 0);
	begin(e, P_READDIR, 0, 0, true);
	t_opaque(&e->c, e->root, e->rootlen);
	t_u64(&e->c, 0);
	t_u64(&e->c, 0);
	t_u32(&e->c, 4096);
	assert_int_equal(t_run(&e->c, e->exp_nosquash), RPCRDMA_SVC_SUCCESS);
	assert_int_equal(r_u32(&e->c), 0);
	/* an ordinary user still needs a worker for all of these */
	begin(e, P_WRITE, 1000, 1000, true);
	t_opaque(&e->c, fh, fhlen);
	t_u64(&e->c, 0);
	t_u32(&e->c, 1);
	t_u32(&e->c, 0);
	t_opaque(&e->c, "z", 1);
	assert_int_equal(t_run(&e->c, e->exp), RPCRDMA_SVC_DEFER);
	begin(e, P_READ, 1000, 1000, true);
	t_opaque(&e->c, fh, fhlen);
	t_u64(&e->c, 0);
	t_u32(&e->c, 1);
	assert_int_equal(t_run(&e->c, e->exp), RPCRDMA_SVC_DEFER);
}

/*
 * The memory backend: an ordinary user's and a squashed root's calls, all
 * on the transport thread, namespace changes, WRITE, COMMIT, READDIR and
 * a SETATTR of the size included, each one done; a READ of more than
 * NFS3_TRANSPORT_MAX_IO bytes still goes to a worker, having done nothing.
 */
static void test_memory_every_call_here(void **state)
{
	struct t_env *e = *state;
	uint8_t fh[64];
	uint32_t fhlen, n;
	struct stat st;
	const uint8_t *data;

	begin(e, P_CREATE, 1000, 1000, true);
	create_args(e, "u");
	assert_int_equal(t_run(&e->c, e->exp), RPCRDMA_SVC_SUCCESS);
	assert_int_equal(r_u32(&e->c), 0);
	assert_int_equal(t_lstat(e, "u", &st), 0);
	assert_int_equal(st.st_uid, 1000);
	/* root squashed to nobody */
	begin(e, P_CREATE, 0, 0, true);
	create_args(e, "sq");
	assert_int_equal(t_run(&e->c, e->exp), RPCRDMA_SVC_SUCCESS);
	assert_int_equal(r_u32(&e->c), 0);
	assert_int_equal(t_lstat(e, "sq", &st), 0);
	assert_int_equal(st.st_uid, 65534);

	begin(e, P_LOOKUP, 1000, 1000, true);
	t_opaque(&e->c, e->root, e->rootlen);
	t_str(&e->c, "u");
	assert_int_equal(t_run(&e->c, e->exp), RPCRDMA_SVC_SUCCESS);
	assert_int_equal(r_u32(&e->c), 0);
	fhlen = fh_of(e, "u", fh);

	begin(e, P_SETATTR, 1000, 1000, true);
	t_opaque(&e->c, fh, fhlen);
	for (int i = 0; i < 3; i++)
		t_u32(&e->c, 0); /* mode, uid, gid not set */
	t_u32(&e->c, 1);
	t_u64(&e->c, 8192); /* size */
	t_u32(&e->c, 0);
	t_u32(&e->c, 0); /* times not set */
	t_u32(&e->c, 0);
	assert_int_equal(t_run(&e->c, e->exp), RPCRDMA_SVC_SUCCESS);
	assert_int_equal(r_u32(&e->c), 0);
	assert_int_equal(t_lstat(e, "u", &st), 0);
	assert_int_equal(st.st_size, 8192);

	begin(e, P_WRITE, 1000, 1000, true);
	t_opaque(&e->c, fh, fhlen);
	t_u64(&e->c, 8192);
	t_u32(&e->c, 3);
	t_u32(&e->c, 2); /* FILE_SYNC */
	t_opaque(&e->c, "abc", 3);
	assert_int_equal(t_run(&e->c, e->exp), RPCRDMA_SVC_SUCCESS);
	assert_int_equal(r_u32(&e->c), 0);
	assert_int_equal(t_lstat(e, "u", &st), 0);
	assert_int_equal(st.st_size, 8195);
	begin(e, P_COMMIT, 1000, 1000, true);
	t_opaque(&e->c, fh, fhlen);
	t_u64(&e->c, 0);
	t_u32(&e->c, 0);
	assert_int_equal(t_run(&e->c, e->exp), RPCRDMA_SVC_SUCCESS);
	assert_int_equal(r_u32(&e->c), 0);
	begin(e, P_READ, 1000, 1000, true);
	t_opaque(&e->c, fh, fhlen);
	t_u64(&e->c, 8192);
	t_u32(&e->c, 10);
	assert_int_equal(t_run(&e->c, e->exp), RPCRDMA_SVC_SUCCESS);
	assert_int_equal(r_u32(&e->c), 0);
	assert_true(r_post_op(&e->c, NULL));
	assert_int_equal(r_u32(&e->c), 3);
	assert_int_equal(r_u32(&e->c), 1); /* eof */
	data = r_opaque(&e->c, &n);
	assert_int_equal(n, 3);
	assert_memory_equal(data, "abc", 3);
	begin(e, P_READ, 1000, 1000, true);
	t_opaque(&e->c, fh, fhlen);
	t_u64(&e->c, 0);
	t_u32(&e->c, NFS3_TRANSPORT_MAX_IO + 4);
	assert_int_equal(t_run(&e->c, e->exp), RPCRDMA_SVC_DEFER);
	begin(e, P_READDIR, 1000, 1000, true);
	t_opaque(&e->c, e->root, e->rootlen);
	t_u64(&e->c, 0);
	t_u64(&e->c, 0);
	t_u32(&e->c, 4096);
	assert_int_equal(t_run(&e->c, e->exp), RPCRDMA_SVC_SUCCESS);
	assert_int_equal(r_u32(&e->c), 0);

	begin(e, P_REMOVE, 1000, 1000, true);
	t_opaque(&e->c, e->root, e->rootlen);
	t_str(&e->c, "u");
	assert_int_equal(t_run(&e->c, e->exp), RPCRDMA_SVC_SUCCESS);
	assert_int_equal(r_u32(&e->c), 0);
	assert_false(exists(e, "u"));
}

/* A frozen thread keeps its ids: apply only succeeds for the server. */
static void test_cred_freeze(void **state)
{
	const struct fs_cred user = { .cr_uid = 1000, .cr_gid = 1000 };
	const struct fs_cred root = { .cr_uid = 0, .cr_gid = 0, .cr_ngids = 1,
					.cr_gids = { 4 } };
	const struct fs_cred root_g5 = { .cr_uid = 0, .cr_gid = 5 };

	(void)state;
	assert_true(fs_cred_is_server(&root));
	assert_false(fs_cred_is_server(&root_g5));
	assert_false(fs_cred_is_server(&user));
	fs_cred_freeze(true);
	assert_int_equal(fs_cred_apply(&user), -EPERM);
	assert_int_equal((uint32_t)syscall(SYS_setfsuid, (uid_t)-1), 0);
	assert_int_equal(fs_cred_apply(&root), 0);
	fs_cred_restore();
	fs_cred_freeze(false);
	assert_int_equal(fs_cred_apply(&user), 0);
	assert_int_equal((uint32_t)syscall(SYS_setfsuid, (uid_t)-1), 1000);
	fs_cred_restore();
	assert_int_equal((uint32_t)syscall(SYS_setfsuid, (uid_t)-1), 0);
}

/* Kill the process on any system call that changes credentials. */
static int forbid_cred_syscalls(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_setfsuid, 6, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_setfsgid, 5, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_setgroups, 4, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_setresuid, 3, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_setresgid, 2, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_capset, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
	};
	struct sock_fprog prog = { .len = sizeof(f) / sizeof(f[0]), .filter = f };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -1;
	return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog);
}

/* t_run() without its rpcrdma_nfs3_thread_release(), which may switch. */
static int run_here(struct t_call *c, void *exp)
{
	rpcrdma_xdr_init(&c->req.rq_args, c->args, c->alen);
	rpcrdma_xdr_init(&c->req.rq_res, c->res, T_RES_BYTES);
	return rpcrdma_nfs3_dispatch(&c->req, exp);
}

struct filtered_run {
	struct t_env *fr_env;
	int fr_calls;
	int fr_bad;
	void *(*fr_fn)(void *);
};

/*
 * The calls of run_filtered(), on a thread of their own: like the
 * transport thread, it has set no credentials yet, so nothing it may skip
 * as "already set" hides a switch.
 */
static void *filtered_calls(void *arg)
{
	struct filtered_run *fr = arg;
	struct t_env *e = fr->fr_env;
	struct t_call *c = &e->c;
	int bad = 0;

	if (fr->fr_calls == 1) {
		t_begin(c, P_LOOKUP, 1000, 1000);
		t_opaque(c, e->root, e->rootlen);
		t_str(c, "x");
		(void)run_here(c, e->exp);
		return NULL;
	}
	t_begin(c, P_GETATTR, 1000, 1000);
	c->req.rq_transport = true;
	t_opaque(c, e->root, e->rootlen);
	bad |= run_here(c, e->exp) != RPCRDMA_SVC_SUCCESS;
	t_begin(c, P_CREATE, 0, 0);
	c->req.rq_transport = true;
	create_args(e, "s");
	bad |= (run_here(c, e->exp_nosquash) != RPCRDMA_SVC_SUCCESS) << 1;
	t_begin(c, P_LOOKUP, 0, 0);
	c->req.rq_transport = true;
	t_opaque(c, e->root, e->rootlen);
	t_str(c, "s");
	bad |= (run_here(c, e->exp_nosquash) != RPCRDMA_SVC_SUCCESS) << 2;
	t_begin(c, P_REMOVE, 0, 0);
	c->req.rq_transport = true;
	t_opaque(c, e->root, e->rootlen);
	t_str(c, "s");
	bad |= (run_here(c, e->exp_nosquash) != RPCRDMA_SVC_SUCCESS) << 3;
	fr->fr_bad = bad;
	return NULL;
}

/* READ of "k" by @uid on a worker: the NFS status, or 1000 + dispatch return. */
static uint32_t read_k(struct t_env *e, const uint8_t *fh, uint32_t fhlen, uint32_t uid)
{
	struct t_call *c = &e->c;
	int ret;

	t_begin(c, P_READ, uid, uid);
	t_opaque(c, fh, fhlen);
	t_u64(c, 0);
	t_u32(c, 512);
	ret = run_here(c, e->exp);
	if (ret != RPCRDMA_SVC_SUCCESS)
		return 1000u + (uint32_t)ret;
	c->rlen = c->req.rq_res.xs_pos;
	c->rpos = 0;
	return r_u32(c);
}

/*
 * A worker keeps its caller's identity: after a first READ by uid 1000,
 * the filter goes on and a second READ of the (now cached) file by the
 * same uid must make no credential system call (calls 2); a READ by
 * another uid must (calls 3: killed).
 */
static void *kept_identity_calls(void *arg)
{
	struct filtered_run *fr = arg;
	struct t_env *e = fr->fr_env;
	uint8_t fh[64];
	uint32_t fhlen = fh_of(e, "k", fh);

	if (read_k(e, fh, fhlen, 1000) != 0) {
		fr->fr_bad = 1;
		return NULL;
	}
	if (forbid_cred_syscalls()) {
		fr->fr_bad = 2;
		return NULL;
	}
	if (read_k(e, fh, fhlen, fr->fr_calls == 2 ? 1000 : 1001) != 0)
		fr->fr_bad = 4;
	return NULL;
}

/*
 * In a child under the filter, on a new thread, run @calls: 0 = the
 * transport-thread calls of a GETATTR by a user and a CREATE, LOOKUP,
 * REMOVE by root (all must be served); 1 = a LOOKUP by a user on a worker
 * (must die: this proves the filter catches a switch); 2 and 3: see
 * kept_identity_calls().  Returns the child's wait status.
 */
static int run_filtered(struct t_env *e, int calls)
{
	pid_t pid = fork();
	int status;

	assert_true(pid >= 0);
	if (pid == 0) {
		struct filtered_run fr = { .fr_env = e, .fr_calls = calls,
					   .fr_fn = filtered_calls };
		pthread_t th;

		if (calls >= 2) /* the thread installs the filter itself */
			fr.fr_fn = kept_identity_calls;
		/* the filter is inherited by threads created after it */
		else if (forbid_cred_syscalls())
			_exit(90);
		if (pthread_create(&th, NULL, fr.fr_fn, &fr) ||
		    pthread_join(th, NULL))
			_exit(91);
		_exit(fr.fr_bad ? 100 + fr.fr_bad : 0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	return status;
}

/* @status: the child exited 0 (@ok), or was killed for a system call */
static void assert_filtered(int status, bool ok)
{
	if (ok) {
		assert_true(WIFEXITED(status));
		assert_int_equal(WEXITSTATUS(status), 0);
	} else {
		assert_true(WIFSIGNALED(status));
		assert_int_equal(WTERMSIG(status), SIGSYS);
	}
}

/*
 * posix: the transport calls switch nothing, a worker's call of another
 * caller does (killed); memory: nothing ever switches, on a worker either.
 */
static void test_no_credential_syscalls(void **state)
{
	struct t_env *e = *state;

	assert_filtered(run_filtered(e, 1), t_memory());
	assert_filtered(run_filtered(e, 0), true);
	assert_false(exists(e, "s"));

	make_file(e, "k", 4096);
	assert_filtered(run_filtered(e, 2), true);
	assert_filtered(run_filtered(e, 3), t_memory());
}

int main(void)
{
	/*
	 * posix only: the identity switch, disk waits and RWF_NOWAIT of the
	 * posix backend (the memory backend has none of them:
	 * test_memory_every_call_here), and the thread's credential freeze.
	 */
	static const struct t_case cases[] = {
		T_CASE(test_user_calls, env_setup, env_teardown, T_POSIX_ONLY),
		T_CASE(test_root_calls, env_setup, env_teardown, T_POSIX_ONLY),
		T_CASE(test_read_cached_only, env_setup, env_teardown, T_POSIX_ONLY),
		T_CASE(test_mem_fs_calls, env_setup_shm, env_teardown, T_POSIX_ONLY),
		{ cmocka_unit_test(test_cred_freeze), T_POSIX_ONLY },
		T_CASE(test_no_credential_syscalls, env_setup, env_teardown, T_ANY),
	};
	static const struct t_case mem_cases[] = {
		T_CASE(test_memory_every_call_here, env_setup, env_teardown, T_ANY),
	};
	int fails;

	fails = t_run_cases(T_BE_POSIX, "nfs3 transport thread", cases,
			    T_NCASES(cases), NULL, NULL);
	fails += t_run_cases(T_BE_MEMORY, "nfs3 transport thread", cases,
			     T_NCASES(cases), NULL, NULL);
	fails += t_run_cases(T_BE_MEMORY, "nfs3 transport thread, memory rules",
			     mem_cases, T_NCASES(mem_cases), NULL, NULL);
	return t_exit(fails);
}
