// SPDX-License-Identifier: MIT
/*
 * fs_memory_dir.c - the memory backend's directories: their entries,
 * lookup, and readdir (the operations that add and take away names are
 * in fs_memory_names.c).
 *
 * A directory keeps its names twice: in a hash table by name (keyed with
 * the export's random key, so no client can choose names that collide),
 * and in an array in insertion order, each with a cookie from a counter
 * of the directory that only grows.  Readdir resumes after a cookie by a
 * binary search of that array; a removed name leaves a hole (compacted
 * once holes are half of it), so the cookies of the others never move.
 * "." and ".." come first, cookies 1 and 2.
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

bool fsm_is_dot(const char *name)
{
	return name[0] == '.' && name[1] == '\0';
}

bool fsm_is_dotdot(const char *name)
{
	return name[0] == '.' && name[1] == '.' && name[2] == '\0';
}

ssize_t fsm_name_check(const char *name)
{
	size_t len = strnlen(name, FSM_NAME_MAX + 1);

	if (len > FSM_NAME_MAX)
		return -ENAMETOOLONG;
	if (len == 0 || memchr(name, '/', len))
		return -ENOENT;
	return (ssize_t)len;
}

struct fsm_dirent *fsm_ent_find(const struct fsm_node *dir,
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

int fsm_ent_add_locked(struct fsm_node *dir, const char *name, size_t len,
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
	err = fsm_charge_locked(dir->mn_mx, FSM_ENT_COST(len));
	if (err)
		return err;
	e = malloc(sizeof(*e) + len + 1);
	if (!e) {
		fsm_uncharge_locked(dir->mn_mx, FSM_ENT_COST(len));
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

void fsm_ent_del_locked(struct fsm_node *dir, struct fsm_dirent *e)
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
	fsm_uncharge_locked(dir->mn_mx, FSM_ENT_COST(e->de_len));
	free(e);
}

void fsm_dir_free_locked(struct fsm_node *n)
{
	struct fsm_dir *d = &n->mn_dir;

	for (uint32_t i = 0; i < d->dr_nslots; i++) {
		struct fsm_dirent *e = d->dr_slots[i].ds_ent;

		if (e) {
			fsm_uncharge_locked(n->mn_mx, FSM_ENT_COST(e->de_len));
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
	if (fsm_is_dot(name)) {
		*out = dir;
		return 0;
	}
	if (fsm_is_dotdot(name)) {
		*out = dir->mn_dir.dr_parent;
		return 0;
	}
	len = fsm_name_check(name);
	if (len < 0)
		return (int)len;
	e = fsm_ent_find(dir, name, (size_t)len);
	if (!e)
		return -ENOENT;
	*out = e->de_node;
	return 0;
}

void fsm_dir_changed(struct fsm_node *dir, const struct timespec *now)
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
