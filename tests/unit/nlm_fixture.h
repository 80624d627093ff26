/* SPDX-License-Identifier: MIT */
/*
 * nlm_fixture.h - the NLM unit tests' files on either backend of the
 * file-serving layer: files made, changed and removed through the layer
 * (as root), their handles, and another lock owner beside the lock
 * manager: on the posix backend a local process (its own open file
 * description and fcntl locks, so the kernel's view is checked, not the
 * layer's), on the memory backend a lock description of the backend's
 * own (fs_lock_open), the only other locker it has.
 */
#ifndef NLM_FIXTURE_H
#define NLM_FIXTURE_H

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fs/fs.h"
#include "test_root.h"

/* One backend the tests run on. */
struct nfx_backend {
	const char *nb_name;   /* "posix", "memory": in exports, in case names */
	bool nb_memory;
	bool nb_needs_root;    /* the posix backend decodes kernel handles */
};

static const struct nfx_backend nfx_posix = { "posix", false, true };
static const struct nfx_backend nfx_memory = { "memory", true, false };

/* may this run use @b? (posix: only as root; else noted for t_exit()) */
static inline bool nfx_usable(const struct nfx_backend *b)
{
	return !b->nb_needs_root || t_root();
}

/* a call as root (no_root_squash) on @exp */
static inline void nfx_call(struct fs_call *c, struct rpcrdma_nfs3_export *exp)
{
	memset(c, 0, sizeof(*c));
	c->c_exp = exp;
}

/* @name in the export's root: its entry (into @local) and attributes.
 * Return: 0 or the layer's error */
static inline int nfx_lookup(struct rpcrdma_nfs3_export *exp, const char *name,
			     struct fs_fentry *local, struct fs_fentry **fe,
			     struct stat *st)
{
	struct fs_fentry rlocal, *root;
	struct stat rst;
	struct fs_call c;
	int err;

	fs_fentry_init(&rlocal);
	fs_fentry_init(local);
	*fe = NULL;
	err = fs_root(exp, &rlocal, &root, &rst);
	if (err)
		return err;
	nfx_call(&c, exp);
	err = fs_become_caller(&c);
	if (!err)
		err = fs_lookup(&c, root, &rst, name, local, fe, st);
	fs_cred_restore();
	fs_fcache_put(root);
	return err;
}

/* a regular file @name in the export's root: @size bytes, mode @mode,
 * owner and group @uid */
static inline void nfx_mkfile(struct rpcrdma_nfs3_export *exp, const char *name,
			      mode_t mode, uid_t uid, uint64_t size)
{
	struct fs_fentry rlocal, local, *root, *fe = NULL;
	struct fs_sattr sa;
	struct stat rst, st;
	struct fs_call c;
	bool created;

	fs_fentry_init(&rlocal);
	fs_fentry_init(&local);
	assert_int_equal(fs_root(exp, &rlocal, &root, &rst), 0);
	nfx_call(&c, exp);
	c.c_modifies = true;
	assert_int_equal(fs_become_caller(&c), 0);
	assert_int_equal(fs_create(&c, root, &rst, name, 0600, false, NULL, &local, &fe,
				   &st, &created), 0);
	memset(&sa, 0, sizeof(sa));
	sa.sa_set_size = true;
	sa.sa_size = size;
	sa.sa_set_uid = sa.sa_set_gid = true;
	sa.sa_uid = uid;
	sa.sa_gid = uid;
	sa.sa_set_mode = true;
	sa.sa_mode = mode;
	assert_int_equal(fs_setattr(&c, fe, &st, &sa, false), 0);
	fs_cred_restore();
	fs_fcache_put(fe);
	fs_fcache_put(root);
}

/* chmod of @name */
static inline void nfx_chmod(struct rpcrdma_nfs3_export *exp, const char *name,
			     mode_t mode)
{
	struct fs_fentry local, *fe;
	struct fs_sattr sa;
	struct stat st;
	struct fs_call c;

	assert_int_equal(nfx_lookup(exp, name, &local, &fe, &st), 0);
	nfx_call(&c, exp);
	c.c_modifies = true;
	assert_int_equal(fs_become_caller(&c), 0);
	memset(&sa, 0, sizeof(sa));
	sa.sa_set_mode = true;
	sa.sa_mode = mode;
	assert_int_equal(fs_setattr(&c, fe, &st, &sa, false), 0);
	fs_cred_restore();
	fs_fcache_put(fe);
}

/* remove @name */
static inline void nfx_unlink(struct rpcrdma_nfs3_export *exp, const char *name)
{
	struct fs_fentry rlocal, *root;
	struct stat rst;
	struct fs_call c;

	fs_fentry_init(&rlocal);
	assert_int_equal(fs_root(exp, &rlocal, &root, &rst), 0);
	nfx_call(&c, exp);
	c.c_modifies = true;
	assert_int_equal(fs_become_caller(&c), 0);
	assert_int_equal(fs_remove(&c, root, name, false), 0);
	fs_cred_restore();
	fs_fcache_put(root);
}

/* the handle of @name */
static inline void nfx_fh(struct rpcrdma_nfs3_export *exp, const char *name,
			  uint8_t *fh, uint32_t *len)
{
	struct fs_fentry rlocal, *root;
	struct stat rst;

	fs_fentry_init(&rlocal);
	assert_int_equal(fs_root(exp, &rlocal, &root, &rst), 0);
	assert_int_equal(fs_fh_of_exp(exp, root, name, fh, len), 0);
	fs_fcache_put(root);
}

/* A lock another owner holds: a local process's open file description
 * (posix) or a description of the backend's own (memory). */
struct nfx_holder {
	int h_fd;
	struct fs_lockd h_ld;
};

/* a lock description of @name opened by the server (memory) */
static inline int nfx_lock_open(struct rpcrdma_nfs3_export *exp, const char *name,
				struct fs_lockd *ld)
{
	struct fs_fentry local, *fe;
	struct stat st;
	struct fs_call c;
	int acc, err;

	memset(ld, 0, sizeof(*ld));
	err = nfx_lookup(exp, name, &local, &fe, &st);
	if (err)
		return err;
	nfx_call(&c, exp);
	err = fs_lock_open(&c, fe, ld, &acc);
	fs_fcache_put(fe);
	return err;
}

/*
 * Take @type (F_RDLCK, F_WRLCK) of @start, @len (0: to the end) on
 * @name as another owner, kept in @h until nfx_release().  posix: an OFD
 * lock of the test's own open of the path.  Return: whether it was taken.
 */
static inline bool nfx_hold(const struct nfx_backend *b,
			    struct rpcrdma_nfs3_export *exp, const char *name,
			    off_t start, off_t len, short type, struct nfx_holder *h)
{
	memset(h, 0, sizeof(*h));
	h->h_fd = -1;
	if (!b->nb_memory) {
		struct flock fl = { .l_type = type, .l_whence = SEEK_SET,
				    .l_start = start, .l_len = len };
		char path[256];

		snprintf(path, sizeof(path), "%s/%s", exp->ex_path, name);
		h->h_fd = open(path, O_RDWR | O_CLOEXEC);
		assert_true(h->h_fd >= 0);
		return fcntl(h->h_fd, F_OFD_SETLK, &fl) == 0;
	} else {
		struct fs_lock_conflict cf;

		assert_int_equal(nfx_lock_open(exp, name, &h->h_ld), 0);
		return fs_lock(&h->h_ld, type, (uint64_t)start, (uint64_t)len, false,
			       &cf) == 0;
	}
}

/* let go of what nfx_hold() took */
static inline void nfx_release(struct nfx_holder *h)
{
	if (h->h_fd >= 0)
		close(h->h_fd);
	fs_lock_close(&h->h_ld);
	h->h_fd = -1;
}

/*
 * Could another owner take @type of @start, @len (0: to the end) on
 * @name now?  posix: a child process's POSIX lock (fcntl F_SETLK), so the
 * kernel's view is asked; memory: a new lock description, closed after.
 */
static inline bool nfx_can_lock(const struct nfx_backend *b,
				struct rpcrdma_nfs3_export *exp, const char *name,
				off_t start, off_t len, short type)
{
	struct nfx_holder h;
	bool ok;

	if (!b->nb_memory) {
		char path[256];
		pid_t pid;
		int st;

		snprintf(path, sizeof(path), "%s/%s", exp->ex_path, name);
		pid = fork();
		if (pid == 0) {
			struct flock fl = { .l_type = type, .l_whence = SEEK_SET,
					    .l_start = start, .l_len = len };
			int fd = open(path, O_RDWR);

			_exit(fd >= 0 && fcntl(fd, F_SETLK, &fl) == 0 ? 0 : 1);
		}
		waitpid(pid, &st, 0);
		return WIFEXITED(st) && WEXITSTATUS(st) == 0;
	}
	ok = nfx_hold(b, exp, name, start, len, type, &h);
	nfx_release(&h);
	return ok;
}

#endif /* NLM_FIXTURE_H */
