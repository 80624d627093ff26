// SPDX-License-Identifier: MIT
/*
 * nfs_tree.c - rpcrdma-nfs get -r and put -r: a directory tree copied
 * from or to the server, as cp -r names its destination (into an existing
 * directory under the source's name, otherwise as the destination).
 * Regular files, directories and symbolic links are copied with their
 * permission bits; other types are skipped with a warning (exit status 1).
 * Hard links arrive as separate files.  The first error stops the copy.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nfs.h"

/* Deepest tree copied: a bound on recursion, far beyond real trees. */
#define TREE_MAX_DEPTH 256
/* Longest symbolic link target copied (PATH_MAX). */
#define TREE_LINK_MAX 4096

struct tree {
	struct rpcrdma_nfsc *tr_nc;
	struct xfer_buf tr_xb;
	unsigned tr_skipped;        /* entries of other types */
};

/* fail() for a negative errno that is also returned. */
static int tfail(const char *what, int err)
{
	fail(what, err);
	return err;
}

/* ---- get -r ---- */

/* One entry of a remote directory. */
struct rent {
	char *re_name;
	struct rpcrdma_nfsc_fh re_fh;
	struct rpcrdma_nfsc_attr re_attr;
	bool re_have;               /* READDIRPLUS gave handle and attributes */
};

struct rlist {
	struct rent *rl_v;
	size_t rl_n, rl_cap;
	int rl_err;
};

static int rlist_add(const char *name, uint64_t fileid, const struct rpcrdma_nfsc_attr *attr,
		     const struct rpcrdma_nfsc_fh *fh, void *arg)
{
	struct rlist *l = arg;
	struct rent *e;

	(void)fileid;
	if (!strcmp(name, ".") || !strcmp(name, ".."))
		return 0;
	/* A name with '/' cannot be made locally: the server is wrong. */
	if (!name[0] || strchr(name, '/')) {
		l->rl_err = -EBADMSG;
		return 1;
	}
	if (l->rl_n == l->rl_cap) {
		size_t cap = l->rl_cap ? l->rl_cap * 2 : 32;
		struct rent *v = realloc(l->rl_v, cap * sizeof(*v));

		if (!v) {
			l->rl_err = -ENOMEM;
			return 1;
		}
		l->rl_v = v;
		l->rl_cap = cap;
	}
	e = &l->rl_v[l->rl_n];
	memset(e, 0, sizeof(*e));
	e->re_name = strdup(name);
	if (!e->re_name) {
		l->rl_err = -ENOMEM;
		return 1;
	}
	if (attr && fh) {
		e->re_attr = *attr;
		e->re_fh = *fh;
		e->re_have = true;
	}
	l->rl_n++;
	return 0;
}

static void rlist_free(struct rlist *l)
{
	size_t i;

	for (i = 0; i < l->rl_n; i++)
		free(l->rl_v[i].re_name);
	free(l->rl_v);
}

static int get_dir(struct tree *t, const struct rpcrdma_nfsc_fh *dir, const char *rpath,
		   const char *lpath, uint32_t mode, unsigned depth);

/* The remote @fh (@a) of @rpath as the new local @lpath. */
static int get_entry(struct tree *t, const struct rpcrdma_nfsc_fh *fh,
		     const struct rpcrdma_nfsc_attr *a, const char *rpath, const char *lpath,
		     unsigned depth)
{
	char target[TREE_LINK_MAX + 1];
	int rc, fd;

	switch (a->at_type) {
	case NFSC_DIR:
		return get_dir(t, fh, rpath, lpath, a->at_mode & 07777, depth + 1);
	case NFSC_LNK:
		rc = rpcrdma_nfsc_readlink(t->tr_nc, fh, target, sizeof(target));
		if (rc)
			return tfail(rpath, rc);
		/* an earlier copy is replaced */
		if (symlink(target, lpath) && (errno != EEXIST || unlink(lpath) ||
					       symlink(target, lpath)))
			return tfail(lpath, -errno);
		return 0;
	case NFSC_REG:
		fd = open(lpath, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd < 0)
			return tfail(lpath, -errno);
		rc = get_fh(t->tr_nc, &t->tr_xb, fh, rpath, a->at_size, fd);
		if (rc)
			fail(rpath, rc);
		/* the exact bits, whatever the umask */
		if (!rc && fchmod(fd, a->at_mode & 07777))
			rc = tfail(lpath, -errno);
		if (close(fd) && !rc)
			rc = tfail(lpath, -errno);
		return rc;
	default:
		fprintf(stderr, PROG ": %s: skipped: not a regular file, directory or "
			"symbolic link\n", rpath);
		t->tr_skipped++;
		return 0;
	}
}

static int get_dir(struct tree *t, const struct rpcrdma_nfsc_fh *dir, const char *rpath,
		   const char *lpath, uint32_t mode, unsigned depth)
{
	struct rlist l = { 0 };
	size_t i;
	int rc;

	if (depth > TREE_MAX_DEPTH)
		return tfail(rpath, -ELOOP);
	/* Owner access while the entries go in; the real bits at the end.
	 * An existing directory (an earlier copy) is filled again, but never
	 * through a symbolic link: a server naming an entry twice, first as a
	 * link, cannot lead the copy out of @lpath. */
	if (mkdir(lpath, 0700)) {
		struct stat st;

		if (errno != EEXIST)
			return tfail(lpath, -errno);
		if (lstat(lpath, &st))
			return tfail(lpath, -errno);
		if (!S_ISDIR(st.st_mode))
			return tfail(lpath, -ENOTDIR);
		/* a read-only earlier copy is writable while it is filled */
		if ((st.st_mode & 0700) != 0700 && chmod(lpath, (st.st_mode & 07777) | 0700))
			return tfail(lpath, -errno);
	}
	rc = rpcrdma_nfsc_readdirplus(t->tr_nc, dir, rlist_add, &l);
	if (l.rl_err)
		rc = l.rl_err;
	if (rc)
		fail(rpath, rc);
	for (i = 0; !rc && i < l.rl_n; i++) {
		struct rent *e = &l.rl_v[i];
		char *rp = NULL, *lp = NULL;

		if (asprintf(&rp, "%s/%s", strcmp(rpath, "/") ? rpath : "", e->re_name) < 0 ||
		    asprintf(&lp, "%s/%s", lpath, e->re_name) < 0) {
			rc = tfail(rpath, -ENOMEM);
		} else {
			if (!e->re_have)
				rc = rpcrdma_nfsc_lookup(t->tr_nc, dir, e->re_name, &e->re_fh,
							 &e->re_attr);
			if (rc)
				fail(rp, rc);
			else
				rc = get_entry(t, &e->re_fh, &e->re_attr, rp, lp, depth);
		}
		free(rp);
		free(lp);
	}
	rlist_free(&l);
	if (!rc && chmod(lpath, mode))
		rc = tfail(lpath, -errno);
	return rc;
}

/* "a/b/" -> "b"; "/" or "" -> "" (a malloc'd copy, or NULL). */
static char *last_name(const char *path)
{
	char *c = strdup(path), *b;
	size_t n;

	if (!c)
		return NULL;
	n = strlen(c);
	while (n > 0 && c[n - 1] == '/')
		c[--n] = '\0';
	b = strrchr(c, '/');
	b = strdup(b ? b + 1 : c);
	free(c);
	return b;
}

/* cp -r's destination: inside @dest under @src's name when @dest is an
 * existing directory (and @src has a name), otherwise @dest itself. */
static char *tree_dest(const char *src, const char *dest, bool dest_is_dir)
{
	char *name = last_name(src), *out = NULL;

	if (!name)
		return NULL;
	if (dest_is_dir && name[0] && strcmp(name, ".") && strcmp(name, "..")) {
		if (asprintf(&out, "%s/%s", strcmp(dest, "/") ? dest : "", name) < 0)
			out = NULL;
	} else {
		out = strdup(dest);
	}
	free(name);
	return out;
}

int cmd_get_tree(struct rpcrdma_nfsc *nc, const char *remote, const char *local)
{
	struct tree t = { .tr_nc = nc };
	struct rpcrdma_nfsc_attr attr;
	struct rpcrdma_nfsc_fh fh;
	struct stat st;
	char *lpath;
	int rc;

	rc = rpcrdma_nfsc_lookup_path(nc, remote, &fh, &attr);
	if (rc)
		return fail(remote, rc);
	if (attr.at_type != NFSC_DIR)
		return cmd_get(nc, remote, local, false);
	lpath = tree_dest(remote, local, stat(local, &st) == 0 && S_ISDIR(st.st_mode));
	if (!lpath)
		return fail(local, -ENOMEM);
	rc = xfer_buf_init(nc, &t.tr_xb, xfer_ring(nc, true));
	if (rc)
		fail(local, rc);
	else
		rc = get_dir(&t, &fh, remote, lpath, attr.at_mode & 07777, 0);
	xfer_buf_fini(nc, &t.tr_xb);
	free(lpath);
	return rc || t.tr_skipped ? 1 : 0;
}

/* ---- put -r ---- */

static int put_dir(struct tree *t, const char *lpath, const struct rpcrdma_nfsc_fh *pdir,
		   const char *name, const char *rpath, uint32_t mode, unsigned depth);

/* Set the permission bits of @fh to @mode. */
static int set_mode(struct tree *t, const struct rpcrdma_nfsc_fh *fh, uint32_t mode)
{
	struct rpcrdma_nfsc_sattr sa = { .sa_set_mode = true, .sa_mode = mode };

	return rpcrdma_nfsc_setattr(t->tr_nc, fh, &sa);
}

/* The local @lpath as @name in the remote directory @dir (@rpath). */
static int put_entry(struct tree *t, const char *lpath, const struct rpcrdma_nfsc_fh *dir,
		     const char *name, const char *rpath, unsigned depth)
{
	char target[TREE_LINK_MAX + 1];
	struct rpcrdma_nfsc_fh fh;
	struct stat st;
	ssize_t n;
	int rc, fd;

	if (lstat(lpath, &st))
		return tfail(lpath, -errno);
	if (S_ISDIR(st.st_mode))
		return put_dir(t, lpath, dir, name, rpath, st.st_mode & 07777, depth + 1);
	if (S_ISLNK(st.st_mode)) {
		n = readlink(lpath, target, sizeof(target));
		if (n < 0)
			return tfail(lpath, -errno);
		if ((size_t)n >= sizeof(target))
			return tfail(lpath, -ENAMETOOLONG);
		target[n] = '\0';
		rc = rpcrdma_nfsc_symlink(t->tr_nc, dir, name, target);
		if (rc == -EEXIST) { /* an earlier copy: replaced */
			rc = rpcrdma_nfsc_remove(t->tr_nc, dir, name);
			if (!rc)
				rc = rpcrdma_nfsc_symlink(t->tr_nc, dir, name, target);
		}
		return rc ? tfail(rpath, rc) : 0;
	}
	if (!S_ISREG(st.st_mode)) {
		fprintf(stderr, PROG ": %s: skipped: not a regular file, directory or "
			"symbolic link\n", lpath);
		t->tr_skipped++;
		return 0;
	}
	fd = open(lpath, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return tfail(lpath, -errno);
	/* Owner access while writing (a server may check each WRITE against
	 * the mode); the real bits after. */
	rc = rpcrdma_nfsc_create(t->tr_nc, dir, name, (st.st_mode & 0777) | 0600, true, &fh);
	if (!rc)
		rc = put_fd(t->tr_nc, &t->tr_xb, &fh, rpath, fd, (uint64_t)st.st_size);
	if (!rc)
		rc = set_mode(t, &fh, st.st_mode & 07777);
	close(fd);
	return rc ? tfail(rpath, rc) : 0;
}

static int put_dir(struct tree *t, const char *lpath, const struct rpcrdma_nfsc_fh *pdir,
		   const char *name, const char *rpath, uint32_t mode, unsigned depth)
{
	struct rpcrdma_nfsc_attr attr;
	struct rpcrdma_nfsc_fh dir;
	struct dirent *de;
	DIR *d;
	int rc;

	if (depth > TREE_MAX_DEPTH)
		return tfail(lpath, -ELOOP);
	rc = rpcrdma_nfsc_mkdir(t->tr_nc, pdir, name, 0700, &dir);
	if (rc == -EEXIST) { /* an earlier copy: filled again */
		rc = rpcrdma_nfsc_lookup(t->tr_nc, pdir, name, &dir, &attr);
		if (!rc && attr.at_type != NFSC_DIR)
			rc = -ENOTDIR;
		/* a read-only earlier copy is writable while it is filled */
		if (!rc && (attr.at_mode & 0700) != 0700)
			rc = set_mode(t, &dir, (attr.at_mode & 07777) | 0700);
	}
	if (rc)
		return tfail(rpath, rc);
	d = opendir(lpath);
	if (!d)
		return tfail(lpath, -errno);
	for (;;) {
		char *lp = NULL, *rp = NULL;

		errno = 0;
		de = readdir(d);
		if (!de) {
			if (errno)
				rc = tfail(lpath, -errno);
			break;
		}
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (asprintf(&lp, "%s/%s", lpath, de->d_name) < 0 ||
		    asprintf(&rp, "%s/%s", rpath, de->d_name) < 0)
			rc = tfail(lpath, -ENOMEM);
		else
			rc = put_entry(t, lp, &dir, de->d_name, rp, depth);
		free(lp);
		free(rp);
		if (rc)
			break;
	}
	closedir(d);
	if (!rc) {
		rc = set_mode(t, &dir, mode);
		if (rc)
			fail(rpath, rc);
	}
	return rc;
}

int cmd_put_tree(struct rpcrdma_nfsc *nc, const char *local, const char *remote)
{
	struct tree t = { .tr_nc = nc };
	struct rpcrdma_nfsc_attr attr;
	struct rpcrdma_nfsc_fh fh, pdir;
	char name[256], *rpath;
	struct stat st;
	bool is_dir;
	int rc;

	if (stat(local, &st))
		return fail(local, -errno);
	if (!S_ISDIR(st.st_mode))
		return cmd_put(nc, local, remote);
	is_dir = rpcrdma_nfsc_lookup_path(nc, remote, &fh, &attr) == 0 &&
		 attr.at_type == NFSC_DIR;
	rpath = tree_dest(local, remote, is_dir);
	if (!rpath)
		return fail(remote, -ENOMEM);
	rc = resolve_parent(nc, rpath, &pdir, name, sizeof(name));
	if (rc)
		fail(rpath, rc);
	if (!rc) {
		rc = xfer_buf_init(nc, &t.tr_xb, xfer_ring(nc, false));
		if (rc)
			fail(remote, rc);
	}
	if (!rc)
		rc = put_dir(&t, local, &pdir, name, rpath, st.st_mode & 07777, 0);
	xfer_buf_fini(nc, &t.tr_xb);
	free(rpath);
	return rc || t.tr_skipped ? 1 : 0;
}
