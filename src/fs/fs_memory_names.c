// SPDX-License-Identifier: MIT
/*
 * fs_memory_names.c - the memory backend's operations on names: create,
 * mkdir, mknod, symlink (and readlink), link, unlink, rename.
 *
 * Permission checks follow knfsd's order where it checks before the
 * system call (search, then write and search of the directory before a
 * name is added or taken away), and the kernel's rules after it: sticky
 * directories, protected hard links, set-group-id directories.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fs_memory.h"

/* ---- making names ---- */

/*
 * new_name_locked - may the caller add @name to @d: a directory (-ENOTDIR)
 * it may search (-EACCES), a usable name (-ENAMETOOLONG, -EINVAL for ""
 * or '/'), a directory not removed (-ENOENT), a name not taken (-EEXIST,
 * the object in *@old when not NULL), write permission (-EACCES).
 * Return: 0 with the name's length in *@len, or the error.
 */
static int new_name_locked(const struct fs_cred *cr, struct fsm_node *d,
			   const char *name, size_t *len, struct fsm_node **old)
{
	struct fsm_dirent *e;
	ssize_t l;
	int err;

	if (!S_ISDIR(d->mn_mode))
		return -ENOTDIR;
	err = fsm_may(cr, d, FSM_X);
	if (err)
		return err;
	l = fsm_name_check(name);
	if (l == -ENOENT)
		return -EINVAL;
	if (l < 0)
		return (int)l;
	if (!d->mn_nlink)
		return -ENOENT;
	if (fsm_is_dot(name) || fsm_is_dotdot(name)) {
		if (old)
			*old = fsm_is_dot(name) ? d : d->mn_dir.dr_parent;
		return -EEXIST;
	}
	e = fsm_ent_find(d, name, (size_t)l);
	if (e) {
		if (old)
			*old = e->de_node;
		return -EEXIST;
	}
	err = fsm_may(cr, d, FSM_W | FSM_X);
	if (err)
		return err;
	*len = (size_t)l;
	return 0;
}

/*
 * make_locked - a new object of @mode named @name (@len) in @d for the
 * caller: owned by the caller's uid, and its gid unless @d is
 * set-group-id (then @d's gid, and a directory inherits S_ISGID; a file
 * keeps S_ISGID with group execute only for a member of that group or
 * uid 0).  @target: a symlink's.  Return: 0 (*@out, one name, no
 * reference); -EMLINK (@d has too many subdirectories); -ENOSPC; -ENOMEM.
 */
static int make_locked(const struct fs_cred *cr, struct fsm_node *d,
		       const char *name, size_t len, mode_t mode,
		       dev_t rdev, const char *target, struct fsm_node **out)
{
	struct fsm_export *mx = d->mn_mx;
	uint32_t gid = cr->cr_gid;
	struct fsm_node *n;
	size_t tlen = 0;
	int err;

	if (S_ISDIR(mode) && d->mn_nlink >= FSM_LINK_MAX)
		return -EMLINK;
	if (d->mn_mode & S_ISGID) {
		gid = d->mn_gid;
		if (S_ISDIR(mode))
			mode |= S_ISGID;
		else if ((mode & (S_ISGID | S_IXGRP)) == (S_ISGID | S_IXGRP) &&
			 cr->cr_uid != 0 && !fs_cred_in_group(cr, gid))
			mode &= ~(mode_t)S_ISGID;
	}
	n = fsm_node_new_locked(mx, mode, cr->cr_uid, gid, &err);
	if (!n)
		return err;
	if (S_ISLNK(mode)) {
		tlen = strlen(target);
		err = fsm_charge_locked(mx, tlen);
		if (err)
			goto out_free;
		n->mn_target = strdup(target);
		if (!n->mn_target) {
			fsm_uncharge_locked(mx, tlen);
			err = -ENOMEM;
			goto out_free;
		}
	} else if (S_ISCHR(mode) || S_ISBLK(mode)) {
		n->mn_rdev = rdev;
	}
	err = fsm_ent_add_locked(d, name, len, n);
	if (err)
		goto out_free;
	if (S_ISDIR(mode)) {
		n->mn_nlink = 2;
		n->mn_dir.dr_parent = d;
		d->mn_nlink++;
	} else {
		n->mn_nlink = 1;
	}
	fsm_dir_changed(d, &n->mn_ctime);
	*out = n;
	return 0;

out_free:
	fsm_node_maybe_free_locked(n); /* no name, no reference: freed */
	return err;
}

/* The common part of mkdir, mknod and symlink. */
static int make_op(struct fs_call *c, struct fs_fentry *dir, const char *name,
		   mode_t mode, dev_t rdev, const char *target,
		   struct fs_fentry *out, struct stat *st)
{
	const struct fs_cred *cr = &c->c_cred;
	struct fsm_node *d = fsm_fe(dir), *n;
	struct fsm_export *mx = d->mn_mx;
	size_t len;
	int err;

	pthread_mutex_lock(&mx->mx_lock);
	err = new_name_locked(cr, d, name, &len, NULL);
	if (!err && (S_ISCHR(mode) || S_ISBLK(mode)) && cr->cr_uid != 0)
		err = -EPERM; /* CAP_MKNOD */
	if (!err)
		err = make_locked(cr, d, name, len, mode, rdev, target, &n);
	if (!err) {
		fsm_hold_locked(n, out);
		fsm_stat_locked(n, st);
	}
	pthread_mutex_unlock(&mx->mx_lock);
	return err;
}

/* The first 4 bytes of @p, big-endian. */
static uint32_t be32_at(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

int fsm_be_create(struct fs_call *c, struct fs_fentry *dir,
		  const struct stat *dst, const char *name, mode_t mode,
		  bool excl, const uint8_t *verf, struct fs_fentry *out,
		  struct stat *st, bool *created)
{
	const struct fs_cred *cr = &c->c_cred;
	struct fsm_node *d = fsm_fe(dir), *n = NULL;
	struct fsm_export *mx = d->mn_mx;
	size_t len;
	int err;

	(void)dst;
	*created = false;
	pthread_mutex_lock(&mx->mx_lock);
	err = new_name_locked(cr, d, name, &len, &n);
	if (err == -EEXIST && !excl) {
		/* an existing object is looked up, never truncated, whatever
		 * its type (the protocol answers for one not regular) */
		err = 0;
	} else if (!err) {
		err = make_locked(cr, d, name, len, S_IFREG | (mode & 07777), 0,
				  NULL, &n);
		*created = !err;
		if (!err && verf) {
			/* an exclusive create's verifier, in the times'
			 * seconds until the client's SETATTR */
			n->mn_atime = (struct timespec){ .tv_sec = be32_at(verf) };
			n->mn_mtime = (struct timespec){ .tv_sec = be32_at(verf + 4) };
		}
	}
	if (!err) {
		fsm_hold_locked(n, out);
		fsm_stat_locked(n, st);
	}
	pthread_mutex_unlock(&mx->mx_lock);
	return err;
}

int fsm_be_mkdir(struct fs_call *c, struct fs_fentry *dir,
		 const struct stat *dst, const char *name, mode_t mode,
		 struct fs_fentry *out, struct stat *st)
{
	(void)dst;
	return make_op(c, dir, name, S_IFDIR | (mode & 07777), 0, NULL, out, st);
}

int fsm_be_mknod(struct fs_call *c, struct fs_fentry *dir,
		 const struct stat *dst, const char *name, mode_t mode,
		 dev_t rdev, struct fs_fentry *out, struct stat *st)
{
	mode_t type = mode & S_IFMT;

	(void)dst;
	if (type != S_IFCHR && type != S_IFBLK && type != S_IFIFO &&
	    type != S_IFSOCK)
		return -EINVAL;
	return make_op(c, dir, name, type | (mode & 07777),
		       type == S_IFCHR || type == S_IFBLK ? rdev : 0, NULL,
		       out, st);
}

int fsm_be_symlink(struct fs_call *c, struct fs_fentry *dir,
		   const struct stat *dst, const char *name,
		   const char *target, struct fs_fentry *out, struct stat *st)
{
	size_t tlen = strnlen(target, FSM_PATH_MAX);

	(void)dst;
	if (tlen == 0)
		return -ENOENT;
	if (tlen >= FSM_PATH_MAX)
		return -ENAMETOOLONG;
	return make_op(c, dir, name, S_IFLNK | 0777, 0, target, out, st);
}

ssize_t fsm_be_readlink(struct fs_call *c, struct fs_fentry *fe, char *buf,
			size_t len)
{
	struct fsm_node *n = fsm_fe(fe);
	struct fsm_export *mx = n->mn_mx;
	ssize_t ret;
	size_t tlen;

	(void)c;
	pthread_mutex_lock(&mx->mx_lock);
	if (!S_ISLNK(n->mn_mode)) {
		ret = -EINVAL;
	} else {
		tlen = strlen(n->mn_target);
		if (len == 0 || tlen > len - 1) {
			ret = -ENAMETOOLONG;
		} else {
			memcpy(buf, n->mn_target, tlen);
			ret = (ssize_t)tlen;
		}
	}
	pthread_mutex_unlock(&mx->mx_lock);
	return ret;
}

/*
 * may_hardlink - the kernel's protected_hardlinks: a caller who is not
 * the owner (nor uid 0) may link only a regular file without set-id
 * privileges that it may read and write.
 */
static bool may_hardlink(const struct fs_cred *cr, const struct fsm_node *n)
{
	if (fsm_is_owner(cr, n))
		return true;
	if (!S_ISREG(n->mn_mode) || (n->mn_mode & S_ISUID) ||
	    (n->mn_mode & (S_ISGID | S_IXGRP)) == (S_ISGID | S_IXGRP))
		return false;
	return fsm_may(cr, n, FSM_R | FSM_W) == 0;
}

int fsm_be_link(struct fs_call *c, struct fs_fentry *fe, struct fs_fentry *dir,
		const char *name)
{
	const struct fs_cred *cr = &c->c_cred;
	struct fsm_node *n = fsm_fe(fe), *d = fsm_fe(dir);
	struct fsm_export *mx = d->mn_mx;
	struct timespec now = fsm_now();
	size_t len;
	int err;

	pthread_mutex_lock(&mx->mx_lock);
	/* knfsd's order: write and search on the directory first */
	if (!S_ISDIR(d->mn_mode))
		err = -ENOTDIR;
	else
		err = fsm_may(cr, d, FSM_W | FSM_X);
	if (!err)
		err = new_name_locked(cr, d, name, &len, NULL);
	if (!err && S_ISDIR(n->mn_mode))
		err = -EPERM;
	if (!err && !n->mn_nlink)
		err = -ENOENT;
	if (!err && !may_hardlink(cr, n))
		err = -EPERM;
	if (!err && n->mn_nlink >= FSM_LINK_MAX)
		err = -EMLINK;
	if (!err)
		err = fsm_ent_add_locked(d, name, len, n);
	if (!err) {
		n->mn_nlink++;
		n->mn_ctime = now;
		fsm_dir_changed(d, &now);
	}
	pthread_mutex_unlock(&mx->mx_lock);
	return err;
}

/* ---- taking names away ---- */

/* The sticky rule: in a S_ISVTX directory only the owner of the object or
 * of the directory (or uid 0) may take its name away. */
static bool sticky_denies(const struct fs_cred *cr, const struct fsm_node *d,
			  const struct fsm_node *n)
{
	return (d->mn_mode & S_ISVTX) && cr->cr_uid != 0 &&
	       cr->cr_uid != n->mn_uid && cr->cr_uid != d->mn_uid;
}

/* Name @e of @d is gone: the object loses a link (a directory both of
 * its own, and its parent the one of its ".."), and is freed when
 * nothing holds it. */
static void unlinked_locked(struct fsm_node *d, struct fsm_node *n,
			    const struct timespec *now)
{
	if (S_ISDIR(n->mn_mode)) {
		n->mn_nlink = 0;
		n->mn_dir.dr_parent = NULL;
		d->mn_nlink--;
	} else {
		n->mn_nlink--;
	}
	n->mn_ctime = *now;
	fsm_node_maybe_free_locked(n);
}

int fsm_be_unlink(struct fs_call *c, struct fs_fentry *dir, const char *name,
		  bool rmdir)
{
	const struct fs_cred *cr = &c->c_cred;
	struct fsm_node *d = fsm_fe(dir), *n;
	struct fsm_export *mx = d->mn_mx;
	struct timespec now = fsm_now();
	struct fsm_dirent *e = NULL;
	uint64_t gone = 0;
	ssize_t len;
	int err;

	pthread_mutex_lock(&mx->mx_lock);
	if (!S_ISDIR(d->mn_mode))
		err = -ENOTDIR;
	else
		err = fsm_may(cr, d, FSM_W | FSM_X);
	if (err)
		goto out;
	/* as rmdir(2) and unlink(2) answer for "." and ".." */
	if (fsm_is_dot(name) || fsm_is_dotdot(name)) {
		err = !rmdir ? -EISDIR : fsm_is_dot(name) ? -EINVAL : -ENOTEMPTY;
		goto out;
	}
	len = fsm_name_check(name);
	if (len < 0) {
		err = (int)len;
		goto out;
	}
	e = fsm_ent_find(d, name, (size_t)len);
	if (!e) {
		err = -ENOENT;
		goto out;
	}
	n = e->de_node;
	if (sticky_denies(cr, d, n))
		err = -EPERM;
	else if (rmdir && !S_ISDIR(n->mn_mode))
		err = -ENOTDIR;
	else if (!rmdir && S_ISDIR(n->mn_mode))
		err = -EISDIR;
	else if (rmdir && n->mn_dir.dr_count)
		err = -ENOTEMPTY;
	if (err)
		goto out;
	gone = n->mn_id;
	fsm_ent_del_locked(d, e);
	fsm_dir_changed(d, &now);
	unlinked_locked(d, n, &now);
out:
	pthread_mutex_unlock(&mx->mx_lock);
	fsm_lease_break(c->c_exp, mx, gone); /* after the fact: it went on */
	return err;
}

/* ---- rename ---- */

/* The id @name names in @d now (no permission asked), 0: none. */
static uint64_t peek_id_locked(struct fsm_node *d, const char *name)
{
	struct fsm_node *n;

	return fsm_dir_find_locked(d, name, &n) ? 0 : n->mn_id;
}

/* Is @n @d or one of its ancestors (walking ".." up to the root)? */
static bool is_ancestor(const struct fsm_node *n, const struct fsm_node *d)
{
	const struct fsm_node *root = d->mn_mx->mx_root;

	for (; d; d = d->mn_dir.dr_parent) {
		if (d == n)
			return true;
		if (d == root)
			break;
	}
	return false;
}

/*
 * rename_locked - rename(2) of @fname in @fd to @tname in @td for @cr.
 * *@replaced: the id of the object @tname named and lost (0: none).
 */
static int rename_locked(const struct fs_cred *cr, struct fsm_node *fd,
			 const char *fname, struct fsm_node *td,
			 const char *tname, uint64_t *replaced)
{
	struct fsm_dirent *fe, *te;
	struct fsm_node *src, *tgt;
	struct timespec now;
	ssize_t flen, tlen;
	int err;

	*replaced = 0;
	if (!S_ISDIR(fd->mn_mode) || !S_ISDIR(td->mn_mode))
		return -ENOTDIR;
	/* knfsd's order: both directories writable and searchable first */
	err = fsm_may(cr, fd, FSM_W | FSM_X);
	if (!err)
		err = fsm_may(cr, td, FSM_W | FSM_X);
	if (err)
		return err;
	if (fsm_is_dot(fname) || fsm_is_dotdot(fname) ||
	    fsm_is_dot(tname) || fsm_is_dotdot(tname))
		return -EBUSY; /* as rename(2) */
	flen = fsm_name_check(fname);
	if (flen < 0)
		return (int)flen;
	tlen = fsm_name_check(tname);
	if (tlen < 0)
		return tlen == -ENOENT ? -EINVAL : (int)tlen;
	if (!fd->mn_nlink || !td->mn_nlink)
		return -ENOENT;
	fe = fsm_ent_find(fd, fname, (size_t)flen);
	if (!fe)
		return -ENOENT;
	src = fe->de_node;
	te = fsm_ent_find(td, tname, (size_t)tlen);
	tgt = te ? te->de_node : NULL;
	if (tgt == src)
		return 0; /* two names of one object (or one name): nothing */
	if (S_ISDIR(src->mn_mode) && is_ancestor(src, td))
		return -EINVAL; /* into its own subtree */
	if (tgt && S_ISDIR(tgt->mn_mode) && is_ancestor(tgt, fd))
		return -ENOTEMPTY; /* onto an ancestor of the source */
	if (sticky_denies(cr, fd, src) || (tgt && sticky_denies(cr, td, tgt)))
		return -EPERM;
	if (S_ISDIR(src->mn_mode)) {
		if (tgt && !S_ISDIR(tgt->mn_mode))
			return -ENOTDIR;
		if (tgt && tgt->mn_dir.dr_count)
			return -ENOTEMPTY;
		/* moving a directory rewrites its "..": write permission on it */
		if (fd != td) {
			err = fsm_may(cr, src, FSM_W);
			if (err)
				return err;
			if (!tgt && td->mn_nlink >= FSM_LINK_MAX)
				return -EMLINK;
		}
	} else if (tgt && S_ISDIR(tgt->mn_mode)) {
		return -EISDIR;
	}

	/* the new name first: the only step that can fail */
	if (te)
		te->de_node = src;
	else if ((err = fsm_ent_add_locked(td, tname, (size_t)tlen, src)))
		return err;
	fsm_ent_del_locked(fd, fe);
	now = fsm_now();
	if (S_ISDIR(src->mn_mode) && fd != td) {
		fd->mn_nlink--;
		td->mn_nlink++;
		src->mn_dir.dr_parent = td;
	}
	src->mn_ctime = now;
	fsm_dir_changed(fd, &now);
	fsm_dir_changed(td, &now);
	if (tgt) {
		*replaced = tgt->mn_id;
		unlinked_locked(td, tgt, &now);
	}
	return 0;
}

int fsm_be_rename(struct fs_call *c, struct fs_fentry *fdir, const char *fname,
		  struct fs_fentry *tdir, const char *tname, bool two_dirs,
		  uint8_t *fh, uint32_t *fhlen, bool *have_fh)
{
	struct fsm_node *fd = fsm_fe(fdir), *td = fsm_fe(tdir);
	struct fsm_export *mx = fd->mn_mx;
	uint64_t before, replaced, moved;
	bool got;
	int err;

	(void)two_dirs; /* the nodes say */
	*have_fh = false;
	for (int tries = 0;; tries++) {
		/*
		 * The handle of what @tname names, for the layer to drop from
		 * its caches (fs_fh_of() calls back into this backend: no lock
		 * held); then the rename, when @tname still names the same
		 * object (else again, a few times, then without the handle).
		 */
		got = false;
		pthread_mutex_lock(&mx->mx_lock);
		before = peek_id_locked(td, tname);
		pthread_mutex_unlock(&mx->mx_lock);
		if (before && c->c_exp->ex_fcache)
			got = fs_fh_of(c, tdir, tname, fh, fhlen) == 0;
		pthread_mutex_lock(&mx->mx_lock);
		if (peek_id_locked(td, tname) != before && tries < 3) {
			pthread_mutex_unlock(&mx->mx_lock);
			continue;
		}
		moved = peek_id_locked(fd, fname);
		err = rename_locked(&c->c_cred, fd, fname, td, tname, &replaced);
		pthread_mutex_unlock(&mx->mx_lock);
		if (!err) { /* the moved object and the one replaced */
			fsm_lease_break(c->c_exp, mx, moved);
			fsm_lease_break(c->c_exp, mx, replaced);
		}
		*have_fh = !err && got && replaced && replaced == before;
		return err;
	}
}
