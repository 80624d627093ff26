// SPDX-License-Identifier: MIT
/*
 * fs_memory_dir.c - the memory backend's directories and the operations
 * on names: lookup, create, mkdir, mknod, symlink, readlink, link,
 * unlink, rename, readdir.
 *
 * A directory keeps its names twice: in a hash table by name (keyed with
 * the export's random key, so no client can choose names that collide),
 * and in an array in insertion order, each with a cookie from a counter
 * of the directory that only grows.  Readdir resumes after a cookie by a
 * binary search of that array; a removed name leaves a hole (compacted
 * once holes are half of it), so the cookies of the others never move.
 * "." and ".." come first, cookies 1 and 2.
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

/* ---- entries ---- */

static uint64_t name_hash(const struct fsm_export *mx, const char *name,
			  size_t len)
{
	return fs_siphash(mx->mx_hkey, name, len);
}

static bool is_dot(const char *name)
{
	return name[0] == '.' && name[1] == '\0';
}

static bool is_dotdot(const char *name)
{
	return name[0] == '.' && name[1] == '.' && name[2] == '\0';
}

/*
 * name_check - a component that can name an entry: 1..FSM_NAME_MAX
 * bytes without '/'.  Return: its length; -ENOENT ("" or a '/': no entry
 * can have it); -ENAMETOOLONG.
 */
static ssize_t name_check(const char *name)
{
	size_t len = strnlen(name, FSM_NAME_MAX + 1);

	if (len > FSM_NAME_MAX)
		return -ENAMETOOLONG;
	if (len == 0 || memchr(name, '/', len))
		return -ENOENT;
	return (ssize_t)len;
}

static struct fsm_dirent *ent_find(const struct fsm_node *dir,
				   const char *name, size_t len)
{
	const struct fsm_dir *d = &dir->mn_dir;
	uint64_t h;
	struct fsm_dirent *e;

	if (!d->dr_nbuckets)
		return NULL;
	h = name_hash(dir->mn_mx, name, len);
	for (e = d->dr_buckets[h & (d->dr_nbuckets - 1)]; e; e = e->de_hnext)
		if (e->de_hash == h && e->de_len == len &&
		    !memcmp(e->de_name, name, len))
			return e;
	return NULL;
}

/* Double the name hash when it holds more names than buckets. */
static int buckets_grow(struct fsm_dir *d)
{
	uint32_t old = d->dr_nbuckets, n = old ? old * 2 : 8;
	struct fsm_dirent **b, **ob = d->dr_buckets;

	if (old && (d->dr_count < old || n < old))
		return 0;
	b = calloc(n, sizeof(*b));
	if (!b)
		return old ? 0 : -ENOMEM;
	d->dr_buckets = b;
	d->dr_nbuckets = n;
	for (uint32_t i = 0; i < old; i++) {
		struct fsm_dirent *e = ob[i], *next;

		for (; e; e = next) {
			next = e->de_hnext;
			e->de_hnext = b[e->de_hash & (n - 1)];
			b[e->de_hash & (n - 1)] = e;
		}
	}
	free(ob);
	return 0;
}

/* Squeeze the holes out of the slot array (cookies keep their order). */
static void slots_compact(struct fsm_dir *d)
{
	uint32_t j = 0;

	for (uint32_t i = 0; i < d->dr_nslots; i++)
		if (d->dr_slots[i].ds_ent)
			d->dr_slots[j++] = d->dr_slots[i];
	d->dr_nslots = j;
	d->dr_holes = 0;
}

/* Room for one more slot. */
static int slots_room(struct fsm_dir *d)
{
	uint32_t cap;
	struct fsm_slot *s;

	if (d->dr_nslots < d->dr_cap)
		return 0;
	if (d->dr_holes) {
		slots_compact(d);
		return 0;
	}
	cap = d->dr_cap ? d->dr_cap * 2 : 8;
	if (cap < d->dr_cap)
		return -ENOMEM;
	s = realloc(d->dr_slots, (size_t)cap * sizeof(*s));
	if (!s)
		return -ENOMEM;
	d->dr_slots = s;
	d->dr_cap = cap;
	return 0;
}

/* The first slot whose cookie is above @cookie (dr_nslots: none). */
static uint32_t slot_after(const struct fsm_dir *d, uint64_t cookie)
{
	uint32_t lo = 0, hi = d->dr_nslots;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (d->dr_slots[mid].ds_cookie <= cookie)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * ent_add_locked - name @name (@len bytes, checked) in @dir for @n, with
 * the directory's next cookie; link counts are the caller's.
 * Return: 0; -ENOSPC (the byte limit); -ENOMEM.
 */
static int ent_add_locked(struct fsm_node *dir, const char *name, size_t len,
			  struct fsm_node *n)
{
	struct fsm_dir *d = &dir->mn_dir;
	struct fsm_dirent *e;
	uint32_t k;
	int err;

	err = buckets_grow(d);
	if (!err)
		err = slots_room(d);
	if (err)
		return err;
	err = fsm_charge_locked(dir->mn_mx, len);
	if (err)
		return err;
	e = malloc(sizeof(*e) + len + 1);
	if (!e) {
		fsm_uncharge_locked(dir->mn_mx, len);
		return -ENOMEM;
	}
	memcpy(e->de_name, name, len);
	e->de_name[len] = '\0';
	e->de_len = (uint32_t)len;
	e->de_node = n;
	e->de_hash = name_hash(dir->mn_mx, name, len);
	e->de_cookie = d->dr_next_cookie++;
	k = e->de_hash & (d->dr_nbuckets - 1);
	e->de_hnext = d->dr_buckets[k];
	d->dr_buckets[k] = e;
	d->dr_slots[d->dr_nslots].ds_cookie = e->de_cookie;
	d->dr_slots[d->dr_nslots].ds_ent = e;
	d->dr_nslots++;
	d->dr_count++;
	return 0;
}

/* Take entry @e out of @dir and free it; link counts are the caller's. */
static void ent_del_locked(struct fsm_node *dir, struct fsm_dirent *e)
{
	struct fsm_dir *d = &dir->mn_dir;
	struct fsm_dirent **pp = &d->dr_buckets[e->de_hash & (d->dr_nbuckets - 1)];
	uint32_t i;

	while (*pp != e)
		pp = &(*pp)->de_hnext;
	*pp = e->de_hnext;
	i = slot_after(d, e->de_cookie - 1);
	if (i < d->dr_nslots && d->dr_slots[i].ds_ent == e) {
		d->dr_slots[i].ds_ent = NULL;
		d->dr_holes++;
	}
	d->dr_count--;
	if (d->dr_holes > 16 && d->dr_holes * 2 > d->dr_nslots)
		slots_compact(d);
	fsm_uncharge_locked(dir->mn_mx, e->de_len);
	free(e);
}

void fsm_dir_free_locked(struct fsm_node *n)
{
	struct fsm_dir *d = &n->mn_dir;

	for (uint32_t i = 0; i < d->dr_nslots; i++) {
		struct fsm_dirent *e = d->dr_slots[i].ds_ent;

		if (e) {
			fsm_uncharge_locked(n->mn_mx, e->de_len);
			free(e);
		}
	}
	free(d->dr_slots);
	free(d->dr_buckets);
	memset(d, 0, sizeof(*d));
}

int fsm_dir_find_locked(struct fsm_node *dir, const char *name,
			struct fsm_node **out)
{
	struct fsm_dirent *e;
	ssize_t len;

	if (!S_ISDIR(dir->mn_mode))
		return -ENOTDIR;
	if (!dir->mn_nlink)
		return -ENOENT; /* removed: nothing can be found in it */
	if (is_dot(name)) {
		*out = dir;
		return 0;
	}
	if (is_dotdot(name)) {
		*out = dir->mn_dir.dr_parent;
		return 0;
	}
	len = name_check(name);
	if (len < 0)
		return (int)len;
	e = ent_find(dir, name, (size_t)len);
	if (!e)
		return -ENOENT;
	*out = e->de_node;
	return 0;
}

/* The directory's modification: mtime and ctime now. */
static void dir_changed(struct fsm_node *dir, const struct timespec *now)
{
	dir->mn_mtime = dir->mn_ctime = *now;
}

/* ---- lookup ---- */

int fsm_be_lookup(struct fs_call *c, struct fs_fentry *dir,
		  const struct stat *dst, const char *name,
		  struct fs_fentry *out, struct stat *st)
{
	struct fsm_node *d = fsm_fe(dir), *n;
	struct fsm_export *mx = d->mn_mx;
	int err;

	(void)dst;
	pthread_mutex_lock(&mx->mx_lock);
	if (!S_ISDIR(d->mn_mode))
		err = -ENOTDIR;
	else
		err = fsm_may(&c->c_cred, d, FSM_X);
	if (!err)
		err = fsm_dir_find_locked(d, name, &n);
	if (!err) {
		fsm_hold_locked(n, out);
		fsm_stat_locked(n, st);
	}
	pthread_mutex_unlock(&mx->mx_lock);
	return err;
}

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
	l = name_check(name);
	if (l == -ENOENT)
		return -EINVAL;
	if (l < 0)
		return (int)l;
	if (!d->mn_nlink)
		return -ENOENT;
	if (is_dot(name) || is_dotdot(name)) {
		if (old)
			*old = is_dot(name) ? d : d->mn_dir.dr_parent;
		return -EEXIST;
	}
	e = ent_find(d, name, (size_t)l);
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
			 cr->cr_uid != 0 && !fsm_in_group(cr, gid))
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
	err = ent_add_locked(d, name, len, n);
	if (err)
		goto out_free;
	if (S_ISDIR(mode)) {
		n->mn_nlink = 2;
		n->mn_dir.dr_parent = d;
		d->mn_nlink++;
	} else {
		n->mn_nlink = 1;
	}
	dir_changed(d, &n->mn_ctime);
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

int fsm_be_create(struct fs_call *c, struct fs_fentry *dir,
		  const struct stat *dst, const char *name, mode_t mode,
		  bool excl, struct fs_fentry *out, struct stat *st,
		  bool *created)
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
		/* an existing regular file is looked up, never truncated */
		if (S_ISREG(n->mn_mode))
			err = 0;
		else if (S_ISDIR(n->mn_mode))
			err = -EISDIR;
	} else if (!err) {
		err = make_locked(cr, d, name, len, S_IFREG | (mode & 07777), 0,
				  NULL, &n);
		*created = !err;
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
		err = ent_add_locked(d, name, len, n);
	if (!err) {
		n->mn_nlink++;
		n->mn_ctime = now;
		dir_changed(d, &now);
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
	if (is_dot(name) || is_dotdot(name)) {
		err = !rmdir ? -EISDIR : is_dot(name) ? -EINVAL : -ENOTEMPTY;
		goto out;
	}
	len = name_check(name);
	if (len < 0) {
		err = (int)len;
		goto out;
	}
	e = ent_find(d, name, (size_t)len);
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
	ent_del_locked(d, e);
	dir_changed(d, &now);
	unlinked_locked(d, n, &now);
out:
	pthread_mutex_unlock(&mx->mx_lock);
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
	if (is_dot(fname) || is_dotdot(fname) || is_dot(tname) || is_dotdot(tname))
		return -EBUSY; /* as rename(2) */
	flen = name_check(fname);
	if (flen < 0)
		return (int)flen;
	tlen = name_check(tname);
	if (tlen < 0)
		return tlen == -ENOENT ? -EINVAL : (int)tlen;
	if (!fd->mn_nlink || !td->mn_nlink)
		return -ENOENT;
	fe = ent_find(fd, fname, (size_t)flen);
	if (!fe)
		return -ENOENT;
	src = fe->de_node;
	te = ent_find(td, tname, (size_t)tlen);
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
	else if ((err = ent_add_locked(td, tname, (size_t)tlen, src)))
		return err;
	ent_del_locked(fd, fe);
	now = fsm_now();
	if (S_ISDIR(src->mn_mode) && fd != td) {
		fd->mn_nlink--;
		td->mn_nlink++;
		src->mn_dir.dr_parent = td;
	}
	src->mn_ctime = now;
	dir_changed(fd, &now);
	dir_changed(td, &now);
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
	uint64_t before, replaced;
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
		err = rename_locked(&c->c_cred, fd, fname, td, tname, &replaced);
		pthread_mutex_unlock(&mx->mx_lock);
		*have_fh = !err && got && replaced && replaced == before;
		return err;
	}
}

/* ---- readdir ---- */

#define FSM_RD_BATCH 16u

struct rd_ent {
	uint64_t re_ino, re_cookie;
	char re_name[FSM_NAME_MAX + 1];
};

/*
 * rd_batch_locked - up to FSM_RD_BATCH entries of @d after @cookie into
 * @out.  Return: how many; *@more: entries are left after them.
 */
static unsigned rd_batch_locked(struct fsm_node *d, uint64_t cookie,
				struct rd_ent *out, bool *more)
{
	const struct fsm_dir *dr = &d->mn_dir;
	unsigned n = 0;
	uint32_t i;

	*more = false;
	if (!d->mn_nlink)
		return 0; /* removed: empty, not even "." */
	if (cookie < 1) {
		out[n].re_ino = d->mn_id;
		out[n].re_cookie = 1;
		strcpy(out[n++].re_name, ".");
	}
	if (cookie < 2) {
		out[n].re_ino = dr->dr_parent->mn_id;
		out[n].re_cookie = 2;
		strcpy(out[n++].re_name, "..");
	}
	for (i = slot_after(dr, cookie); i < dr->dr_nslots; i++) {
		const struct fsm_dirent *e = dr->dr_slots[i].ds_ent;

		if (!e)
			continue;
		if (n == FSM_RD_BATCH) {
			*more = true;
			break;
		}
		out[n].re_ino = e->de_node->mn_id;
		out[n].re_cookie = e->de_cookie;
		memcpy(out[n++].re_name, e->de_name, e->de_len + 1);
	}
	return n;
}

int fsm_be_readdir(struct fs_call *c, struct fs_fentry *dir,
		   const struct stat *dst, uint64_t cookie,
		   int (*fn)(void *arg, const char *name, uint64_t ino,
			     uint64_t cookie),
		   void *arg, bool *eof)
{
	struct fsm_node *d = fsm_fe(dir);
	struct fsm_export *mx = d->mn_mx;
	struct rd_ent batch[FSM_RD_BATCH];
	bool more;
	unsigned n;
	int err;

	(void)dst;
	*eof = false;
	pthread_mutex_lock(&mx->mx_lock);
	if (!S_ISDIR(d->mn_mode))
		err = -ENOTDIR;
	else
		err = fsm_may(&c->c_cred, d, FSM_R);
	if (err) {
		pthread_mutex_unlock(&mx->mx_lock);
		return err;
	}
	for (;;) {
		/* copied out under the lock, handed to @fn without it (@fn
		 * may call back into the backend: READDIRPLUS) */
		n = rd_batch_locked(d, cookie, batch, &more);
		pthread_mutex_unlock(&mx->mx_lock);
		for (unsigned i = 0; i < n; i++) {
			if (fn(arg, batch[i].re_name, batch[i].re_ino,
			       batch[i].re_cookie))
				return 0;
			cookie = batch[i].re_cookie;
		}
		if (!more) {
			*eof = true;
			return 0;
		}
		pthread_mutex_lock(&mx->mx_lock);
	}
}
