// SPDX-License-Identifier: MIT
/*
 * fs_memory_data.c - the memory backend's file data: pages of FSM_PAGE
 * bytes in a hash table per file, keyed by page index, so a file is as
 * sparse as it was written (a write at 1 TiB makes one page; a hole reads
 * as zeros).  The table's hash is keyed with the export's random key: the
 * page indexes are the client's offsets, and must not let it pile every
 * page into one chain.  Every page counts FSM_PAGE bytes against the
 * export's byte limit.  Invariant: no page lies wholly past the size, and the bytes of
 * the last page past the size are zero (truncate zeroes them), so growing
 * a file never has old data to hide.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fs_memory.h"

static uint32_t page_bucket(const struct fsm_node *n, uint32_t nbuckets,
			    uint64_t index)
{
	return (uint32_t)fs_siphash(n->mn_mx->mx_hkey, &index, sizeof(index)) &
	       (nbuckets - 1);
}

static struct fsm_page *page_find(const struct fsm_node *n, uint64_t index)
{
	const struct fsm_file *fi = &n->mn_file;
	struct fsm_page *p;

	if (!fi->fi_nbuckets)
		return NULL;
	for (p = fi->fi_buckets[page_bucket(n, fi->fi_nbuckets, index)]; p;
	     p = p->pg_next)
		if (p->pg_index == index)
			return p;
	return NULL;
}

/* Double the table when it holds more pages than buckets; only the first
 * allocation must succeed (then chains just grow longer). */
static int pages_grow(struct fsm_node *n)
{
	struct fsm_file *fi = &n->mn_file;
	uint32_t old = fi->fi_nbuckets, nb = old ? old * 2 : 8;
	struct fsm_page **b, **ob = fi->fi_buckets;

	if (old && (fi->fi_npages < old || nb < old))
		return 0;
	b = calloc(nb, sizeof(*b));
	if (!b)
		return old ? 0 : -ENOMEM;
	fi->fi_buckets = b;
	fi->fi_nbuckets = nb;
	for (uint32_t i = 0; i < old; i++) {
		struct fsm_page *p = ob[i], *next;

		for (; p; p = next) {
			uint32_t k = page_bucket(n, nb, p->pg_index);

			next = p->pg_next;
			p->pg_next = b[k];
			b[k] = p;
		}
	}
	free(ob);
	return 0;
}

/* The page @index of @n, made (zeroed, counted) when missing.
 * Return: 0 (*@out); -ENOSPC (the byte limit); -ENOMEM. */
static int page_get_locked(struct fsm_node *n, uint64_t index,
			   struct fsm_page **out)
{
	struct fsm_file *fi = &n->mn_file;
	struct fsm_page *p = page_find(n, index);
	uint32_t k;
	int err;

	if (p) {
		*out = p;
		return 0;
	}
	err = pages_grow(n);
	if (err)
		return err;
	err = fsm_charge_locked(n->mn_mx, FSM_PAGE);
	if (err)
		return err;
	p = calloc(1, sizeof(*p));
	if (!p) {
		fsm_uncharge_locked(n->mn_mx, FSM_PAGE);
		return -ENOMEM;
	}
	p->pg_index = index;
	k = page_bucket(n, fi->fi_nbuckets, index);
	p->pg_next = fi->fi_buckets[k];
	fi->fi_buckets[k] = p;
	fi->fi_npages++;
	*out = p;
	return 0;
}

void fsm_data_free_locked(struct fsm_node *n)
{
	struct fsm_file *fi = &n->mn_file;

	for (uint32_t i = 0; i < fi->fi_nbuckets; i++) {
		struct fsm_page *p = fi->fi_buckets[i], *next;

		for (; p; p = next) {
			next = p->pg_next;
			free(p);
		}
	}
	fsm_uncharge_locked(n->mn_mx, fi->fi_npages * FSM_PAGE);
	free(fi->fi_buckets);
	memset(fi, 0, sizeof(*fi));
}

void fsm_truncate_locked(struct fsm_node *n, uint64_t size)
{
	struct fsm_file *fi = &n->mn_file;
	/* pages from this index on lie wholly past the new size */
	uint64_t first = size / FSM_PAGE + (size % FSM_PAGE != 0);
	struct fsm_page *p;

	if (size < n->mn_size) {
		for (uint32_t i = 0; i < fi->fi_nbuckets; i++) {
			struct fsm_page **pp = &fi->fi_buckets[i];

			while ((p = *pp)) {
				if (p->pg_index >= first) {
					*pp = p->pg_next;
					free(p);
					fi->fi_npages--;
					fsm_uncharge_locked(n->mn_mx, FSM_PAGE);
				} else {
					pp = &p->pg_next;
				}
			}
		}
		if (size % FSM_PAGE) {
			p = page_find(n, size / FSM_PAGE);
			if (p)
				memset(p->pg_data + size % FSM_PAGE, 0,
				       FSM_PAGE - size % FSM_PAGE);
		}
	}
	n->mn_size = size;
}

/* relatime: atime moves when it is not newer than mtime or ctime, or a
 * day old, so a read marks a file read once per change (the kernel's
 * default mount option). */
static void touch_atime_locked(struct fsm_node *n)
{
	struct timespec now = fsm_now();
	const struct timespec *a = &n->mn_atime;

	if (a->tv_sec < n->mn_mtime.tv_sec ||
	    (a->tv_sec == n->mn_mtime.tv_sec && a->tv_nsec <= n->mn_mtime.tv_nsec) ||
	    a->tv_sec < n->mn_ctime.tv_sec ||
	    (a->tv_sec == n->mn_ctime.tv_sec && a->tv_nsec <= n->mn_ctime.tv_nsec) ||
	    now.tv_sec - a->tv_sec >= 24 * 3600)
		n->mn_atime = now;
}

static int want_regular(const struct fsm_node *n)
{
	if (S_ISDIR(n->mn_mode))
		return -EISDIR;
	return S_ISREG(n->mn_mode) ? 0 : -EINVAL;
}

ssize_t fsm_be_read(struct fs_call *c, struct fs_fentry *fe,
		    const struct iovec *iov, int iovcnt, uint64_t off,
		    bool nowait)
{
	struct fsm_node *n = fsm_fe(fe);
	struct fsm_export *mx = n->mn_mx;
	size_t total = 0;
	ssize_t ret;

	(void)c;
	(void)nowait; /* nothing here waits */
	pthread_mutex_lock(&mx->mx_lock);
	ret = want_regular(n);
	if (!ret && off > (uint64_t)FSM_SIZE_MAX)
		ret = -EINVAL; /* as pread(2) of a negative offset */
	if (ret)
		goto out;
	for (int i = 0; i < iovcnt && off < n->mn_size; i++) {
		uint8_t *dst = iov[i].iov_base;
		size_t left = iov[i].iov_len;

		while (left && off < n->mn_size) {
			uint64_t in = off % FSM_PAGE;
			size_t chunk = FSM_PAGE - in;
			struct fsm_page *p;

			if (chunk > left)
				chunk = left;
			if (chunk > n->mn_size - off)
				chunk = (size_t)(n->mn_size - off);
			p = page_find(n, off / FSM_PAGE);
			if (p)
				memcpy(dst, p->pg_data + in, chunk);
			else
				memset(dst, 0, chunk);
			dst += chunk;
			left -= chunk;
			off += chunk;
			total += chunk;
		}
	}
	touch_atime_locked(n);
	ret = (ssize_t)total;
out:
	pthread_mutex_unlock(&mx->mx_lock);
	return ret;
}

int fsm_be_write(struct fs_call *c, struct fs_fentry *fe,
		 const struct iovec *iov, int iovcnt, uint64_t off,
		 uint32_t stable, size_t *done)
{
	struct fsm_node *n = fsm_fe(fe);
	struct fsm_export *mx = n->mn_mx;
	struct timespec now = fsm_now();
	size_t wrote = 0, want = 0;
	int err;

	(void)stable; /* memory: every write is as stable as it gets */
	*done = 0;
	for (int i = 0; i < iovcnt; i++)
		want += iov[i].iov_len;
	fsm_lease_break(c->c_exp, mx, n->mn_id);
	pthread_mutex_lock(&mx->mx_lock);
	err = want_regular(n);
	if (err)
		goto out;
	if (want && off >= (uint64_t)FSM_SIZE_MAX) {
		err = -EFBIG;
		goto out;
	}
	for (int i = 0; i < iovcnt && !err; i++) {
		const uint8_t *src = iov[i].iov_base;
		size_t left = iov[i].iov_len;

		while (left) {
			uint64_t in = off % FSM_PAGE;
			size_t chunk = FSM_PAGE - in;
			struct fsm_page *p;

			if (off >= (uint64_t)FSM_SIZE_MAX) {
				err = -EFBIG;
				break;
			}
			if (chunk > left)
				chunk = left;
			if (chunk > (uint64_t)FSM_SIZE_MAX - off)
				chunk = (size_t)((uint64_t)FSM_SIZE_MAX - off);
			err = page_get_locked(n, off / FSM_PAGE, &p);
			if (err)
				break;
			memcpy(p->pg_data + in, src, chunk);
			src += chunk;
			left -= chunk;
			off += chunk;
			wrote += chunk;
			if (off > n->mn_size)
				n->mn_size = off;
		}
	}
	if (wrote) {
		n->mn_mtime = n->mn_ctime = now;
		fsm_kill_privs_locked(&c->c_cred, n, &now);
		err = 0; /* a short write: the client sends the rest again */
	}
	*done = wrote;
out:
	pthread_mutex_unlock(&mx->mx_lock);
	return err;
}
