// SPDX-License-Identifier: MIT
/*
 * fs_memory_lock.c - the memory backend's byte-range locks, as POSIX
 * record locks of open file descriptions (the kernel's OFD locks, which
 * the posix backend uses): a lock description (be_lock_open()) is one
 * owner; its locks on a file are kept split and merged so that one owner
 * never holds two overlapping or adjacent ranges of one type; locks of
 * different owners conflict when they overlap and one is a write lock;
 * the last reference to a description releases its locks.
 *
 * A file's locks are a list in no particular order (a conflict reported
 * is the one that starts lowest).  At most FSM_LOCKS_MAX locks per export
 * (-ENOLCK beyond), so no peer exhausts the server's memory with them.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include "fs_memory.h"

/*
 * The last byte of @start, @len (0: to the end of any file, FSM_SIZE_MAX,
 * as the kernel's OFFSET_MAX).  Return: 0 (*@end); -EINVAL (@start or
 * @len past INT64_MAX); -EOVERFLOW (a range ending past it), as fcntl(2).
 */
static int range_end(uint64_t start, uint64_t len, uint64_t *end)
{
	if (start > (uint64_t)FSM_SIZE_MAX || len > (uint64_t)FSM_SIZE_MAX)
		return -EINVAL;
	if (len == 0) {
		*end = FSM_SIZE_MAX;
		return 0;
	}
	if (len - 1 > (uint64_t)FSM_SIZE_MAX - start)
		return -EOVERFLOW;
	*end = start + len - 1;
	return 0;
}

static bool overlaps(const struct fsm_lock *l, uint64_t s, uint64_t e)
{
	return l->lk_start <= e && l->lk_end >= s;
}

/* Does @l touch [@s, @e] without overlapping it?  (Ends are at most
 * FSM_SIZE_MAX: no overflow.) */
static bool adjacent(const struct fsm_lock *l, uint64_t s, uint64_t e)
{
	return l->lk_end + 1 == s || e + 1 == l->lk_start;
}

/* The lowest-starting lock of another owner than @o that @type over
 * [@s, @e] conflicts with, or NULL. */
static const struct fsm_lock *conflict_locked(const struct fsm_node *n,
					      const struct fsm_owner *o,
					      int type, uint64_t s, uint64_t e)
{
	const struct fsm_lock *l, *best = NULL;

	for (l = n->mn_locks; l; l = l->lk_next) {
		if (l->lk_owner == o || !overlaps(l, s, e))
			continue;
		if (type != F_WRLCK && l->lk_type != F_WRLCK)
			continue;
		if (!best || l->lk_start < best->lk_start)
			best = l;
	}
	return best;
}

static struct fsm_lock *lock_alloc_locked(struct fsm_export *mx)
{
	struct fsm_lock *l;

	if (mx->mx_nlocks >= FSM_LOCKS_MAX)
		return NULL;
	l = calloc(1, sizeof(*l));
	if (l)
		mx->mx_nlocks++;
	return l;
}

static void lock_free_locked(struct fsm_export *mx, struct fsm_lock *l)
{
	if (l) {
		mx->mx_nlocks--;
		free(l);
	}
}

/*
 * set_locked - @o's range [@s, @e] becomes @type (F_UNLCK: none), the
 * conflicts already ruled out: its own locks there are cut away (one
 * that covers both sides splits in two), and the new range merges with
 * its own locks of the same type it overlaps or touches.  Two records
 * are allocated first (the new range, a split's second half), so nothing
 * changes unless all of it can.  Return: 0; -ENOLCK.
 */
static int set_locked(struct fsm_node *n, struct fsm_owner *o, int type,
		      uint64_t s, uint64_t e)
{
	struct fsm_export *mx = n->mn_mx;
	struct fsm_lock *nl = lock_alloc_locked(mx), *split = lock_alloc_locked(mx);
	struct fsm_lock **pp, *l;

	if (!nl || !split) {
		lock_free_locked(mx, nl);
		lock_free_locked(mx, split);
		return -ENOLCK;
	}
	pp = &n->mn_locks;
	while ((l = *pp)) {
		if (l->lk_owner != o ||
		    (!overlaps(l, s, e) &&
		     (type == F_UNLCK || l->lk_type != type || !adjacent(l, s, e)))) {
			pp = &l->lk_next;
			continue;
		}
		if (l->lk_type == type) {
			/* same type, overlapping or touching: one range */
			if (l->lk_start < s)
				s = l->lk_start;
			if (l->lk_end > e)
				e = l->lk_end;
		} else if (l->lk_start < s && l->lk_end > e) {
			/* covers both sides: keep the two outer parts */
			*split = *l;
			split->lk_start = e + 1;
			split->lk_next = l->lk_next;
			l->lk_end = s - 1;
			l->lk_next = split;
			split = NULL;
			break; /* it was the only own lock over [s, e] */
		} else if (l->lk_start < s) {
			l->lk_end = s - 1;
			pp = &l->lk_next;
			continue;
		} else if (l->lk_end > e) {
			l->lk_start = e + 1;
			pp = &l->lk_next;
			continue;
		}
		*pp = l->lk_next;
		lock_free_locked(mx, l);
	}
	lock_free_locked(mx, split);
	if (type == F_UNLCK) {
		lock_free_locked(mx, nl);
		return 0;
	}
	nl->lk_owner = o;
	nl->lk_type = type;
	nl->lk_start = s;
	nl->lk_end = e;
	nl->lk_next = n->mn_locks;
	n->mn_locks = nl;
	return 0;
}

int fsm_be_lock(struct fs_lockd *ld, int type, uint64_t start, uint64_t len,
		bool test, struct fs_lock_conflict *cf)
{
	struct fsm_owner *o = ld->ld_owner;
	struct fsm_node *n = o->ow_node;
	struct fsm_export *mx = n->mn_mx;
	const struct fsm_lock *l;
	uint64_t end;
	int err;

	if (type != F_RDLCK && type != F_WRLCK && type != F_UNLCK)
		return -EINVAL;
	err = range_end(start, len, &end);
	if (err)
		return err;
	if (!test && type == F_WRLCK && o->ow_acc != O_RDWR)
		return -EBADF;
	pthread_mutex_lock(&mx->mx_lock);
	l = type == F_UNLCK ? NULL : conflict_locked(n, o, type, start, end);
	if (l) {
		if (cf) {
			cf->cf_type = l->lk_type;
			cf->cf_start = l->lk_start;
			cf->cf_len = l->lk_end == FSM_SIZE_MAX ? 0 :
				     l->lk_end - l->lk_start + 1;
			cf->cf_pid = 0; /* an owner's, not a process's */
		}
		err = -EAGAIN;
	} else if (!test) {
		err = set_locked(n, o, type, start, end);
	}
	pthread_mutex_unlock(&mx->mx_lock);
	return err;
}

int fsm_be_lock_open(struct fs_call *c, struct fs_fentry *fe,
		     struct fs_lockd *out, int *accmode)
{
	struct fsm_node *n = fsm_fe(fe);
	struct fsm_export *mx = n->mn_mx;
	struct fsm_owner *o;

	(void)c; /* the server's identity: it may read and write any file */
	o = calloc(1, sizeof(*o));
	if (!o)
		return -ENOMEM;
	o->ow_refs = 1;
	o->ow_acc = S_ISREG(n->mn_mode) ? O_RDWR : O_RDONLY;
	o->ow_node = n;
	fsm_tree_hold(mx); /* the description may outlive the export */
	pthread_mutex_lock(&mx->mx_lock);
	fsm_node_get_locked(n);
	pthread_mutex_unlock(&mx->mx_lock);
	memset(out, 0, sizeof(*out));
	out->ld_be = &fs_memory_backend;
	out->ld_fd = -1;
	out->ld_node = n;
	out->ld_owner = o;
	if (accmode)
		*accmode = o->ow_acc;
	return 0;
}

int fsm_be_lock_dup(const struct fs_lockd *ld, struct fs_lockd *out)
{
	struct fsm_owner *o = ld->ld_owner;
	struct fsm_export *mx = o->ow_node->mn_mx;

	pthread_mutex_lock(&mx->mx_lock);
	o->ow_refs++;
	pthread_mutex_unlock(&mx->mx_lock);
	*out = *ld;
	return 0;
}

void fsm_be_lock_close(struct fs_lockd *ld)
{
	struct fsm_owner *o = ld->ld_owner;
	struct fsm_node *n;
	struct fsm_export *mx;
	bool gone = false;

	if (!o)
		return;
	n = o->ow_node;
	mx = n->mn_mx;
	pthread_mutex_lock(&mx->mx_lock);
	if (--o->ow_refs == 0) {
		gone = true;
		struct fsm_lock **pp = &n->mn_locks, *l;

		while ((l = *pp)) {
			if (l->lk_owner == o) {
				*pp = l->lk_next;
				lock_free_locked(mx, l);
			} else {
				pp = &l->lk_next;
			}
		}
		fsm_node_put_locked(n);
		free(o);
	}
	pthread_mutex_unlock(&mx->mx_lock);
	if (gone)
		fsm_tree_drop(mx); /* the tree too, when its exports are gone */
	ld->ld_owner = NULL;
	ld->ld_node = NULL;
}

void fsm_locks_free_locked(struct fsm_node *n)
{
	struct fsm_lock *l = n->mn_locks, *next;

	for (; l; l = next) {
		next = l->lk_next;
		lock_free_locked(n->mn_mx, l);
	}
	n->mn_locks = NULL;
}
