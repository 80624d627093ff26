// SPDX-License-Identifier: MIT
/*
 * fs_fcache.c - open regular files and directories kept across calls,
 * keyed by NFS file handle, so READ, WRITE, GETATTR, COMMIT and SETATTR of
 * a size do not decode the handle (open_by_handle_at), reopen it through
 * /proc/self/fd, fstat it and close two descriptors on every call, and the
 * directory operations (CREATE, MKDIR, SYMLINK, MKNOD, REMOVE, RMDIR,
 * RENAME, LINK) do not decode and close their directory's handle.  A
 * lookup by handle (fs_fcache_get()) searches both caches, so GETATTR,
 * SETATTR and ACCESS of a directory hit too; CREATE and MKDIR hand the
 * object they made to its cache (fs_fcache_adopt()), so the calls a
 * client sends next (SETATTR after an exclusive CREATE) find it open.
 *
 * An entry holds the backend's object of the handle (fs_fh_decode()),
 * released with the backend's be_release.  For the posix backend that is
 * the O_PATH descriptor of the handle and, for a regular file, once a
 * call needed them, an O_RDONLY and an O_WRONLY descriptor (never one
 * wider than the open that made it); a directory entry holds only the
 * O_PATH descriptor, which the *at() calls take as their directory
 * (searched with the caller's rights, as a decoded handle is).  The
 * descriptors are only containers: the backend checks the current
 * caller's access before every use of a cached read or write descriptor
 * (fs_open(); fs_posix_file.c, fs_file_fd()), so the cache never decides
 * a permission.
 *
 * The cache is split into shards by the handle's MAC (its last 8 bytes,
 * a keyed PRF of the rest, so entries spread evenly): each shard has its
 * own mutex, hash table and least-recently-used list.  The entries, all
 * preallocated, are the whole cache's: a shard takes a free one from the
 * cache-wide free list (fc_free, its own lock), so nothing is evicted
 * while the cache holds fewer objects than its capacity, however the
 * handles fall into shards.  Once none is free, the entry evicted is the
 * least recently used of the whole cache: every use stamps an entry with
 * the cache's clock (fc_clock, advanced by each insertion, read by each
 * hit: a hit writes no shared line), each shard's LRU tail is its oldest,
 * and the oldest tail of all goes (entries used between two insertions
 * tie).  So the shards' shares follow the working set: a new set of files
 * that fits the cache displaces the old one whatever shards it falls in.
 * A lock is held only for list and counter updates, never across a
 * system call; a shard lock may be taken before the free-list lock, never
 * after, and never two shard locks at once.
 * Up to 255 entries make one shard (an exact LRU); larger caches up to
 * FS_FCACHE_SHARDS shards, one for every 64 entries.
 *
 * Lifetime: an entry is referenced by the cache while it is hashed and by
 * every call using it (fe_refs, under the shard lock).  Eviction and
 * fs_fcache_forget() unhash it and drop the cache's reference; the last
 * reference closes its descriptors and returns it to the cache's free
 * list.  So a call never sees its descriptors closed under it.
 *
 * Idle entries: rpcrdma_nfs3_export_expire() (the server's sweeper runs it
 * once per idle period) closes the entries not used since its previous
 * sweep, so a file unlinked on the server gives its space back soon after
 * its clients stop using it.  It advances the clock itself and keeps the
 * value it left (fc_mark): any use after a sweep stamps at least that
 * value, so what is stamped below the previous sweep's mark was idle for
 * a whole period; hits still write no shared line.  Entries a call
 * holds at a sweep are in use, not idle: they stay.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "fs.h"
#include "fs_posix.h"
#include "fs_backend.h"

#define FS_FCACHE_SHARDS 16u
#define FS_FCACHE_SHARD_MIN 64u
/* descriptors left for everything else when sizing against RLIMIT_NOFILE */
#define FS_FCACHE_FD_RESERVE 256u

struct fs_fshard {
	pthread_mutex_t sh_lock;
	struct fs_fentry **sh_buckets;
	uint32_t sh_mask;             /* buckets - 1 (a power of two) */
	uint32_t sh_count;            /* hashed entries now */
	struct fs_fcache *sh_cache;
	struct fs_fentry *sh_head;  /* LRU: most recently used */
	struct fs_fentry *sh_tail;  /* LRU: next to evict */
	uint64_t sh_hits, sh_misses, sh_evictions, sh_forgotten, sh_expired;
} __attribute__((aligned(64)));

struct fs_fcache {
	uint32_t fc_nshards;
	uint32_t fc_cap;
	struct fs_fshard *fc_shards;
	struct fs_fentry *fc_entries;  /* fc_cap of them */
	_Atomic uint64_t fc_clock;       /* +1 per insertion and sweep: fe_stamp */
	pthread_mutex_t fc_sweep_lock;   /* one sweep at a time; guards fc_mark */
	uint64_t fc_mark;                /* fc_clock as the last sweep left it */
	pthread_mutex_t fc_free_lock;
	struct fs_fentry *fc_free;     /* unused entries (linked by fe_hnext) */
	/* hashed entries by (fe_dev, fe_ino), chained by fe_inext; taken
	 * after a shard lock, never before one */
	pthread_mutex_t fc_ino_lock;
	struct fs_fentry **fc_ino;
	uint32_t fc_ino_mask;
};

static uint64_t ino_hash(dev_t dev, ino_t ino)
{
	uint64_t x = (uint64_t)ino * 0x9e3779b97f4a7c15ull ^ (uint64_t)dev;

	return x ^ (x >> 29);
}

/* ino_add, ino_del - @fe into or out of the inode index; shard lock held */
static void ino_add(struct fs_fcache *fc, struct fs_fentry *fe)
{
	struct fs_fentry **b;

	pthread_mutex_lock(&fc->fc_ino_lock);
	b = &fc->fc_ino[ino_hash(fe->fe_dev, fe->fe_ino) & fc->fc_ino_mask];
	fe->fe_inext = *b;
	*b = fe;
	pthread_mutex_unlock(&fc->fc_ino_lock);
}

static void ino_del(struct fs_fcache *fc, struct fs_fentry *fe)
{
	struct fs_fentry **pp;

	pthread_mutex_lock(&fc->fc_ino_lock);
	pp = &fc->fc_ino[ino_hash(fe->fe_dev, fe->fe_ino) & fc->fc_ino_mask];
	while (*pp && *pp != fe)
		pp = &(*pp)->fe_inext;
	if (*pp)
		*pp = fe->fe_inext;
	fe->fe_inext = NULL;
	pthread_mutex_unlock(&fc->fc_ino_lock);
}

static uint64_t fh_hash(const uint8_t *fh, uint32_t len)
{
	uint64_t h = 0;

	/* the MAC; a malformed short handle just hashes what it has */
	for (uint32_t i = len >= 8 ? len - 8 : 0; i < len; i++)
		h = (h << 8) | fh[i];
	return h;
}

static struct fs_fshard *shard_of(struct fs_fcache *fc, uint64_t h)
{
	return &fc->fc_shards[h % fc->fc_nshards];
}

static struct fs_fentry **bucket_of(struct fs_fshard *sh, uint64_t h)
{
	return &sh->sh_buckets[(h >> 32) & sh->sh_mask];
}

/* Release @fe's object (no lock: nobody else can reach it). */
static void entry_close(struct fs_fentry *fe)
{
	if (fe->fe_be)
		fe->fe_be->be_release(fe);
	fe->fe_be = NULL;
	fe->fe_node = NULL;
	fe->fe_rfd = fe->fe_wfd = fe->fe_path = -1;
	fe->fe_grant.gr_acc = 0;
}

/* move_object - the object of @from into @to; @from then holds nothing. */
static void move_object(struct fs_fentry *to, struct fs_fentry *from)
{
	to->fe_path = from->fe_path;
	to->fe_rfd = from->fe_rfd;
	to->fe_wfd = from->fe_wfd;
	to->fe_node = from->fe_node;
	to->fe_be = from->fe_be;
	from->fe_path = from->fe_rfd = from->fe_wfd = -1;
	from->fe_node = NULL;
	from->fe_be = NULL;
	to->fe_grant.gr_acc = 0;
}

/* Raise the soft RLIMIT_NOFILE to hold @want descriptors; the number held. */
static uint64_t fd_budget(uint64_t want)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return want;
	if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < want) {
		rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > want ?
			      want : rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
			getrlimit(RLIMIT_NOFILE, &rl);
	}
	return rl.rlim_cur == RLIM_INFINITY ? want : rl.rlim_cur;
}

int fs_fcache_create(uint32_t entries, struct fs_fcache **out)
{
	struct fs_fcache *fc;
	uint64_t fds;
	uint32_t nsh, nb, i = 0;
	int err;

	*out = NULL;
	if (entries == RPCRDMA_NFS3_FCACHE_OFF)
		return 0;
	if (entries == 0)
		entries = RPCRDMA_NFS3_FCACHE_DEFAULT;
	/* three descriptors an entry, and room for the rest of the server */
	fds = fd_budget(3ull * entries + FS_FCACHE_FD_RESERVE);
	if (fds < 3ull * entries + FS_FCACHE_FD_RESERVE)
		entries = fds > FS_FCACHE_FD_RESERVE + 3 ?
			  (uint32_t)((fds - FS_FCACHE_FD_RESERVE) / 3) : 1;
	nsh = entries / FS_FCACHE_SHARD_MIN;
	if (entries < 4 * FS_FCACHE_SHARD_MIN || nsh == 0)
		nsh = 1;
	if (nsh > FS_FCACHE_SHARDS)
		nsh = FS_FCACHE_SHARDS;

	fc = calloc(1, sizeof(*fc));
	if (!fc)
		return -ENOMEM;
	fc->fc_cap = entries;
	fc->fc_nshards = nsh;
	/* buckets for twice a shard's share: the shares are not exact */
	for (nb = 1; nb < 2 * (entries / nsh + 1); nb <<= 1)
		;
	fc->fc_entries = calloc(entries, sizeof(*fc->fc_entries));
	fc->fc_shards = aligned_alloc(64, sizeof(*fc->fc_shards) * nsh);
	for (fc->fc_ino_mask = 1; fc->fc_ino_mask < 2 * entries;
	     fc->fc_ino_mask <<= 1)
		;
	fc->fc_ino = calloc(fc->fc_ino_mask, sizeof(*fc->fc_ino));
	fc->fc_ino_mask--;
	if (!fc->fc_entries || !fc->fc_shards || !fc->fc_ino) {
		err = -ENOMEM;
		goto out_free;
	}
	for (i = 0; i < nsh; i++) {
		struct fs_fshard *sh = &fc->fc_shards[i];

		memset(sh, 0, sizeof(*sh));
		sh->sh_cache = fc;
		sh->sh_mask = nb - 1;
		sh->sh_buckets = calloc(nb, sizeof(*sh->sh_buckets));
		if (!sh->sh_buckets) {
			err = -ENOMEM;
			goto out_shards;
		}
		pthread_mutex_init(&sh->sh_lock, NULL);
	}
	for (uint32_t j = 0; j < entries; j++) {
		fs_fentry_init(&fc->fc_entries[j]);
		fc->fc_entries[j].fe_hnext = fc->fc_free;
		fc->fc_free = &fc->fc_entries[j];
	}
	pthread_mutex_init(&fc->fc_free_lock, NULL);
	pthread_mutex_init(&fc->fc_sweep_lock, NULL);
	pthread_mutex_init(&fc->fc_ino_lock, NULL);
	*out = fc;
	return 0;

out_shards:
	while (i-- > 0) {
		pthread_mutex_destroy(&fc->fc_shards[i].sh_lock);
		free(fc->fc_shards[i].sh_buckets);
	}
out_free:
	free(fc->fc_ino);
	free(fc->fc_shards);
	free(fc->fc_entries);
	free(fc);
	return err;
}

void fs_fcache_destroy(struct fs_fcache *fc)
{
	if (!fc)
		return;
	for (uint32_t j = 0; j < fc->fc_cap; j++)
		entry_close(&fc->fc_entries[j]);
	for (uint32_t i = 0; i < fc->fc_nshards; i++) {
		pthread_mutex_destroy(&fc->fc_shards[i].sh_lock);
		free(fc->fc_shards[i].sh_buckets);
	}
	pthread_mutex_destroy(&fc->fc_free_lock);
	pthread_mutex_destroy(&fc->fc_sweep_lock);
	pthread_mutex_destroy(&fc->fc_ino_lock);
	free(fc->fc_ino);
	free(fc->fc_shards);
	free(fc->fc_entries);
	free(fc);
}

/* ---- under the shard lock ---- */

static void lru_unlink(struct fs_fshard *sh, struct fs_fentry *fe)
{
	if (fe->fe_prev)
		fe->fe_prev->fe_next = fe->fe_next;
	else
		sh->sh_head = fe->fe_next;
	if (fe->fe_next)
		fe->fe_next->fe_prev = fe->fe_prev;
	else
		sh->sh_tail = fe->fe_prev;
	fe->fe_prev = fe->fe_next = NULL;
}

static void lru_push(struct fs_fshard *sh, struct fs_fentry *fe)
{
	fe->fe_prev = NULL;
	fe->fe_next = sh->sh_head;
	if (sh->sh_head)
		sh->sh_head->fe_prev = fe;
	else
		sh->sh_tail = fe;
	sh->sh_head = fe;
}

/* touch - @fe was used now: the head of its shard's LRU, stamped. */
static void touch(struct fs_fshard *sh, struct fs_fentry *fe)
{
	fe->fe_stamp = atomic_load_explicit(&sh->sh_cache->fc_clock,
					    memory_order_relaxed);
	lru_unlink(sh, fe);
	lru_push(sh, fe);
}

static struct fs_fentry *find(struct fs_fshard *sh, uint64_t h,
			      const uint8_t *fh, uint32_t len)
{
	for (struct fs_fentry *fe = *bucket_of(sh, h); fe; fe = fe->fe_hnext)
		if (fe->fe_hash == h && fe->fe_fhlen == len &&
		    !memcmp(fe->fe_fh, fh, len))
			return fe;
	return NULL;
}

/*
 * unhash - take @fe out of the table and the LRU list and drop the cache's
 * reference.  Return: true when that was the last one (the caller closes
 * it outside the lock and gives it back with release()).
 */
static bool unhash(struct fs_fshard *sh, struct fs_fentry *fe)
{
	struct fs_fentry **pp = bucket_of(sh, fe->fe_hash);

	while (*pp != fe)
		pp = &(*pp)->fe_hnext;
	*pp = fe->fe_hnext;
	fe->fe_hnext = NULL;
	ino_del(sh->sh_cache, fe);
	lru_unlink(sh, fe);
	fe->fe_hashed = false;
	sh->sh_count--;
	return --fe->fe_refs == 0;
}

/* ---- outside the lock ---- */

/* take_free - an unused entry of @fc, or NULL; a shard lock may be held. */
static struct fs_fentry *take_free(struct fs_fcache *fc)
{
	struct fs_fentry *fe;

	pthread_mutex_lock(&fc->fc_free_lock);
	fe = fc->fc_free;
	if (fe)
		fc->fc_free = fe->fe_hnext;
	pthread_mutex_unlock(&fc->fc_free_lock);
	return fe;
}

/* give_free - put closed @fe on @fc's free list; a shard lock may be held. */
static void give_free(struct fs_fcache *fc, struct fs_fentry *fe)
{
	pthread_mutex_lock(&fc->fc_free_lock);
	fe->fe_hnext = fc->fc_free;
	fc->fc_free = fe;
	pthread_mutex_unlock(&fc->fc_free_lock);
}

/* release - close an unreferenced entry and put it on the free list. */
static void release(struct fs_fentry *fe)
{
	entry_close(fe);
	give_free(fe->fe_shard->sh_cache, fe);
}

/*
 * evict_oldest - evict the least recently used entry of @fc: the oldest
 * (fe_stamp) of the shards' LRU tails, each looked at under its own lock,
 * one at a time; the chosen shard's tail is taken when it is still
 * there (another may have come in meanwhile: close enough).  Called with
 * no lock held.  Return: the entry, closed, or NULL when the cache holds
 * none or a call still holds the one evicted (its last put frees it).
 */
static struct fs_fentry *evict_oldest(struct fs_fcache *fc)
{
	struct fs_fshard *best = NULL;
	struct fs_fentry *victim;
	uint64_t oldest = UINT64_MAX;
	bool last;

	for (uint32_t i = 0; i < fc->fc_nshards; i++) {
		struct fs_fshard *sh = &fc->fc_shards[i];

		pthread_mutex_lock(&sh->sh_lock);
		if (sh->sh_tail && (!best || sh->sh_tail->fe_stamp < oldest)) {
			best = sh;
			oldest = sh->sh_tail->fe_stamp;
		}
		pthread_mutex_unlock(&sh->sh_lock);
	}
	if (!best)
		return NULL;
	pthread_mutex_lock(&best->sh_lock);
	victim = best->sh_tail;
	if (!victim) {
		pthread_mutex_unlock(&best->sh_lock);
		return NULL;
	}
	best->sh_evictions++;
	last = unhash(best, victim);
	pthread_mutex_unlock(&best->sh_lock);
	if (!last)
		return NULL;
	entry_close(victim);
	return victim;
}

/* @local (holding an object) for one call only (not cached, or no
 * room): released by put. */
static struct fs_fentry *one_call(struct fs_fentry *local)
{
	local->fe_shard = NULL;
	local->fe_hashed = false;
	local->fe_refs = 1;
	return local;
}

/*
 * cache_find - the entry of a handle in @fc, referenced for the caller,
 * or NULL (no miss is counted: the caller may look elsewhere).
 */
static struct fs_fentry *cache_find(struct fs_fcache *fc, uint64_t h,
				    const uint8_t *fh, uint32_t len)
{
	struct fs_fshard *sh = shard_of(fc, h);
	struct fs_fentry *fe;

	pthread_mutex_lock(&sh->sh_lock);
	fe = find(sh, h, fh, len);
	if (fe) {
		fe->fe_refs++;
		sh->sh_hits++;
		touch(sh, fe);
	}
	pthread_mutex_unlock(&sh->sh_lock);
	return fe;
}

static void count_miss(struct fs_fcache *fc, uint64_t h)
{
	struct fs_fshard *sh = shard_of(fc, h);

	pthread_mutex_lock(&sh->sh_lock);
	sh->sh_misses++;
	pthread_mutex_unlock(&sh->sh_lock);
}

/*
 * cache_insert - make the object @local holds (that of handle @fh,
 * attributes @ost) an entry of @fc.  With @out: the entry is also the
 * caller's (*@out, referenced; when it cannot be cached, @local serves
 * this call only).  Without: only the cache holds it, and the object is
 * released when it cannot be cached or the handle already is.  The
 * object is taken out of @local either way, but for the one-call case.
 */
static void cache_insert(struct fs_fcache *fc, uint64_t h,
			 const uint8_t *fh, uint32_t len,
			 struct fs_fentry *local, const struct stat *ost,
			 struct fs_fentry **out)
{
	struct fs_fshard *sh = shard_of(fc, h);
	struct fs_fentry *fe;

	pthread_mutex_lock(&sh->sh_lock);
	fe = find(sh, h, fh, len);
	if (fe) { /* another thread cached it meanwhile: use that one */
		if (out) {
			fe->fe_refs++;
			touch(sh, fe);
		}
		pthread_mutex_unlock(&sh->sh_lock);
		entry_close(local);
		if (out)
			*out = fe;
		return;
	}
	/*
	 * Entries are hashed, free, or evicted but still in a call's hands.
	 * With none free, evict the least recently used one of the cache;
	 * if no call holds it, it is closed (outside every lock) and takes
	 * the new object.
	 */
	fe = take_free(fc);
	if (!fe) {
		pthread_mutex_unlock(&sh->sh_lock);
		fe = evict_oldest(fc);
		/* nothing to evict: a sweep may have freed entries meanwhile */
		if (!fe)
			fe = take_free(fc);
		pthread_mutex_lock(&sh->sh_lock);
	}
	if (fe && find(sh, h, fh, len)) {
		/* raced while the lock was dropped: rare; not cached */
		give_free(fc, fe);
		fe = NULL;
	}
	if (!fe) { /* every entry is in use by a call: not cached */
		pthread_mutex_unlock(&sh->sh_lock);
		if (out)
			*out = one_call(local);
		else
			entry_close(local);
		return;
	}
	fe->fe_shard = sh;
	fe->fe_stamp = atomic_fetch_add_explicit(&fc->fc_clock, 1,
						 memory_order_relaxed) + 1;
	fe->fe_born = fe->fe_stamp;
	fe->fe_dev = ost->st_dev;
	fe->fe_ino = ost->st_ino;
	fe->fe_hash = h;
	fe->fe_fhlen = len;
	memcpy(fe->fe_fh, fh, len);
	move_object(fe, local);
	fe->fe_type = ost->st_mode & S_IFMT;
	fe->fe_refs = out ? 2 : 1; /* the cache, and this call */
	fe->fe_hashed = true;
	fe->fe_hnext = *bucket_of(sh, h);
	*bucket_of(sh, h) = fe;
	lru_push(sh, fe);
	ino_add(fc, fe);
	sh->sh_count++;
	pthread_mutex_unlock(&sh->sh_lock);
	if (out)
		*out = fe;
}

static uint64_t clock_of(const struct fs_fcache *fc)
{
	return fc ? atomic_load_explicit(&((struct fs_fcache *)fc)->fc_clock,
					 memory_order_seq_cst) : 0;
}

void fs_fcache_mark(const struct rpcrdma_nfs3_export *exp,
		    struct fs_fcache_mark *m)
{
	m->fm_clock[0] = clock_of(exp->ex_fcache);
	m->fm_clock[1] = clock_of(exp->ex_dcache);
}

/* ino_find - fs_fcache_fh_of_ino() in one cache, born at most @mark */
static int ino_find(struct fs_fcache *fc, uint64_t mark, dev_t dev,
		    ino_t ino, uint8_t *fh, uint32_t *lenp)
{
	int err = -ENOENT;

	if (!fc)
		return -ENOENT;
	pthread_mutex_lock(&fc->fc_ino_lock);
	for (struct fs_fentry *fe = fc->fc_ino[ino_hash(dev, ino) &
					       fc->fc_ino_mask];
	     fe; fe = fe->fe_inext) {
		/* born after the mark: it may hold another object of the
		 * same number (the one seen was freed, the number reused) */
		if (fe->fe_ino != ino || fe->fe_dev != dev ||
		    fe->fe_born > mark)
			continue;
		memcpy(fh, fe->fe_fh, fe->fe_fhlen);
		*lenp = fe->fe_fhlen;
		err = 0;
		break;
	}
	pthread_mutex_unlock(&fc->fc_ino_lock);
	return err;
}

int fs_fcache_fh_of_ino(const struct rpcrdma_nfs3_export *exp,
			const struct fs_fcache_mark *m, dev_t dev, ino_t ino,
			uint8_t *fh, uint32_t *lenp)
{
	if (ino_find(exp->ex_fcache, m->fm_clock[0], dev, ino, fh, lenp) == 0)
		return 0;
	return ino_find(exp->ex_dcache, m->fm_clock[1], dev, ino, fh, lenp);
}

/* The cache of @exp that keeps objects of @type, or NULL. */
static struct fs_fcache *cache_for(struct rpcrdma_nfs3_export *exp,
				   mode_t type)
{
	if (type == S_IFREG)
		return exp->ex_fcache;
	return type == S_IFDIR ? exp->ex_dcache : NULL;
}

/*
 * cache_get - the handle's object from @fc, else from @other (NULL: none),
 * else decoded, counted as a miss of @fc, and cached in whichever of the
 * two keeps its type.
 */
static int cache_get(struct fs_fcache *fc, struct fs_fcache *other,
		     struct rpcrdma_nfs3_export *exp, const uint8_t *fh,
		     uint32_t len, struct fs_fentry *local,
		     struct fs_fentry **out, struct stat *st)
{
	struct fs_fcache *into;
	struct fs_fentry *fe = NULL;
	struct stat ost;
	uint64_t h = fh_hash(fh, len);
	bool cacheable = len <= RPCRDMA_NFS3_FHSIZE;
	int err;

	*out = NULL;
	if (cacheable && fc)
		fe = cache_find(fc, h, fh, len);
	if (!fe && cacheable && other)
		fe = cache_find(other, h, fh, len);
	if (fe) {
		if (st) {
			err = exp->ex_be->be_getattr(exp, fe, st);
			if (err) {
				fs_fcache_put(fe);
				return err;
			}
		}
		*out = fe;
		return 0;
	}
	if (cacheable && fc)
		count_miss(fc, h);

	/* a miss: decode the handle (the posix backend opens it with the
	 * server's credentials) */
	err = fs_fh_decode(exp, fh, len, local, &ost);
	if (err)
		return err;
	if (st)
		*st = ost;
	into = cache_for(exp, ost.st_mode & S_IFMT);
	if (!cacheable || !into || (into != fc && into != other)) {
		*out = one_call(local);
		return 0;
	}
	cache_insert(into, h, fh, len, local, &ost, out);
	return 0;
}

int fs_fcache_get(struct rpcrdma_nfs3_export *exp, const uint8_t *fh,
		  uint32_t len, struct fs_fentry *local,
		  struct fs_fentry **out, struct stat *st)
{
	return cache_get(exp->ex_fcache, exp->ex_dcache, exp, fh, len, local,
			 out, st);
}

int fs_dcache_get(struct rpcrdma_nfs3_export *exp, const uint8_t *fh,
		  uint32_t len, struct fs_fentry *local,
		  struct fs_fentry **out, struct stat *st)
{
	return cache_get(exp->ex_dcache, NULL, exp, fh, len, local, out, st);
}

void fs_fcache_adopt(struct rpcrdma_nfs3_export *exp, const uint8_t *fh,
		     uint32_t len, struct fs_fentry *fe, const struct stat *st)
{
	struct fs_fcache *fc = cache_for(exp, st->st_mode & S_IFMT);

	if (fe->fe_shard) /* a cache's entry already */
		return;
	if (!fc || len > RPCRDMA_NFS3_FHSIZE) {
		entry_close(fe);
		return;
	}
	cache_insert(fc, fh_hash(fh, len), fh, len, fe, st, NULL);
}

void fs_fcache_put(struct fs_fentry *fe)
{
	struct fs_fshard *sh;
	bool last;

	if (!fe)
		return;
	sh = fe->fe_shard;
	if (!sh) { /* one call's entry */
		entry_close(fe);
		return;
	}
	pthread_mutex_lock(&sh->sh_lock);
	last = --fe->fe_refs == 0;
	if (fe->fe_hashed)
		touch(sh, fe); /* its use ends now: idle from here on */
	pthread_mutex_unlock(&sh->sh_lock);
	if (last)
		release(fe);
}

static int *fd_slot(struct fs_fentry *fe, int acc)
{
	return acc == O_RDONLY ? &fe->fe_rfd : &fe->fe_wfd;
}

int fs_fcache_fd(struct fs_fentry *fe, int acc)
{
	return __atomic_load_n(fd_slot(fe, acc), __ATOMIC_ACQUIRE);
}

int fs_fcache_set_fd(struct fs_fentry *fe, int acc, int fd)
{
	int expect = -1;

	if (__atomic_compare_exchange_n(fd_slot(fe, acc), &expect, fd, false,
					__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return fd;
	close(fd); /* another call stored one first */
	return expect;
}

/* ---- access decisions of cached descriptors ---- */

static _Atomic int grant_age = FS_GRANT_CTIME_AGE;

void fs_fcache_set_grant_age(int seconds)
{
	grant_age = seconds;
}

bool fs_fcache_grant_keeps(const struct stat *st)
{
	struct timespec now;

	/* the coarse clock is read in user space (vDSO): no system call */
	return clock_gettime(CLOCK_REALTIME_COARSE, &now) == 0 &&
	       st->st_ctim.tv_sec <= now.tv_sec - grant_age;
}

static uint32_t grant_bit(int acc)
{
	return acc == O_RDONLY ? FS_GRANT_READ : FS_GRANT_WRITE;
}

static bool same_cred(const struct fs_cred *a, const struct fs_cred *b)
{
	return a->cr_uid == b->cr_uid && a->cr_gid == b->cr_gid &&
	       a->cr_ngids == b->cr_ngids &&
	       memcmp(a->cr_gids, b->cr_gids,
		      a->cr_ngids * sizeof(a->cr_gids[0])) == 0;
}

static bool same_attrs(const struct fs_grant *g, const struct stat *st)
{
	return g->gr_ctim.tv_sec == st->st_ctim.tv_sec &&
	       g->gr_ctim.tv_nsec == st->st_ctim.tv_nsec &&
	       g->gr_mode == st->st_mode && g->gr_uid == st->st_uid &&
	       g->gr_gid == st->st_gid;
}

bool fs_fcache_granted(struct fs_fentry *fe, const struct fs_cred *cr,
		       const struct stat *st, int acc)
{
	struct fs_fshard *sh = fe->fe_shard;
	const struct fs_grant *g = &fe->fe_grant;
	bool ok;

	if (!sh || !st)
		return false;
	pthread_mutex_lock(&sh->sh_lock);
	ok = (g->gr_acc & grant_bit(acc)) && same_attrs(g, st) &&
	     same_cred(&g->gr_cred, cr);
	pthread_mutex_unlock(&sh->sh_lock);
	return ok;
}

bool fs_fcache_granted_to(struct fs_fentry *fe, const struct fs_cred *cr,
			  int acc)
{
	struct fs_fshard *sh = fe->fe_shard;
	const struct fs_grant *g = &fe->fe_grant;
	bool ok;

	if (!sh)
		return false;
	pthread_mutex_lock(&sh->sh_lock);
	ok = (g->gr_acc & grant_bit(acc)) && same_cred(&g->gr_cred, cr);
	pthread_mutex_unlock(&sh->sh_lock);
	return ok;
}

void fs_fcache_grant(struct fs_fentry *fe, const struct fs_cred *cr,
		     const struct stat *st, int acc)
{
	struct fs_fshard *sh = fe->fe_shard;
	struct fs_grant *g = &fe->fe_grant;

	if (!sh || !st || cr->cr_ngids > RPC_AUTH_SYS_MAX_GIDS ||
	    !fs_fcache_grant_keeps(st))
		return;
	pthread_mutex_lock(&sh->sh_lock);
	if (!(g->gr_acc && same_attrs(g, st) && same_cred(&g->gr_cred, cr))) {
		g->gr_acc = 0; /* another caller's, or older attributes */
		g->gr_cred = *cr;
		g->gr_ctim = st->st_ctim;
		g->gr_mode = st->st_mode;
		g->gr_uid = st->st_uid;
		g->gr_gid = st->st_gid;
	}
	g->gr_acc |= grant_bit(acc);
	pthread_mutex_unlock(&sh->sh_lock);
}

static void cache_forget(struct fs_fcache *fc, const uint8_t *fh,
			 uint32_t len)
{
	struct fs_fshard *sh;
	struct fs_fentry *fe;
	uint64_t h;
	bool last = false;

	if (!fc || len > RPCRDMA_NFS3_FHSIZE)
		return;
	h = fh_hash(fh, len);
	sh = shard_of(fc, h);
	pthread_mutex_lock(&sh->sh_lock);
	fe = find(sh, h, fh, len);
	if (fe)
		fe->fe_refs++;
	pthread_mutex_unlock(&sh->sh_lock);
	if (!fe)
		return;
	pthread_mutex_lock(&sh->sh_lock);
	if (fe->fe_hashed) {
		sh->sh_forgotten++;
		unhash(sh, fe); /* our reference keeps it */
	}
	last = --fe->fe_refs == 0;
	pthread_mutex_unlock(&sh->sh_lock);
	if (last)
		release(fe);
}

void fs_fcache_forget(struct rpcrdma_nfs3_export *exp, const uint8_t *fh,
		      uint32_t len)
{
	cache_forget(exp->ex_fcache, fh, len);
	cache_forget(exp->ex_dcache, fh, len);
}

/*
 * cache_expire - one idle sweep of @fc: close the entries no call has
 * used since the previous sweep.  Each sweep advances the clock, so an
 * entry used after it is stamped at least the clock it left (fc_mark);
 * one stamped below the last sweep's mark was not used for a whole
 * period.  A shard's LRU list is in stamp order (stamps are taken under
 * its lock from a clock that only grows), so the sweep takes its tail
 * while that is older than the mark.  An entry a call holds is in use,
 * not idle (the kernel's nfsd does not close a file in use either): it
 * stays, stamped as used now, above the mark, so it is looked at once.
 */
static void cache_expire(struct fs_fcache *fc)
{
	uint64_t mark;

	if (!fc)
		return;
	pthread_mutex_lock(&fc->fc_sweep_lock);
	mark = fc->fc_mark;
	fc->fc_mark = atomic_fetch_add_explicit(&fc->fc_clock, 1,
						memory_order_relaxed) + 1;
	for (uint32_t i = 0; mark && i < fc->fc_nshards; i++) {
		struct fs_fshard *sh = &fc->fc_shards[i];
		struct fs_fentry *closing = NULL, *fe;

		pthread_mutex_lock(&sh->sh_lock);
		while ((fe = sh->sh_tail) && fe->fe_stamp < mark) {
			if (fe->fe_refs > 1) {
				touch(sh, fe); /* in use */
				continue;
			}
			sh->sh_expired++;
			unhash(sh, fe); /* the cache's was the last reference */
			fe->fe_hnext = closing;
			closing = fe;
		}
		pthread_mutex_unlock(&sh->sh_lock);
		while ((fe = closing)) { /* outside the lock: close(2) */
			closing = fe->fe_hnext;
			release(fe);
		}
	}
	pthread_mutex_unlock(&fc->fc_sweep_lock);
}

int rpcrdma_nfs3_export_expire(struct rpcrdma_nfs3_export *exp)
{
	if (!exp)
		return -EINVAL;
	cache_expire(exp->ex_fcache);
	cache_expire(exp->ex_dcache);
	return 0;
}

/* Sum @fc's shard counters (each shard read under its lock). */
static void cache_sum(const struct fs_fcache *fc, uint64_t *cap,
		      uint64_t *entries, uint64_t *hits, uint64_t *misses,
		      uint64_t *evictions, uint64_t *forgotten, uint64_t *expired)
{
	if (!fc)
		return;
	*cap = fc->fc_cap;
	for (uint32_t i = 0; i < fc->fc_nshards; i++) {
		struct fs_fshard *sh = &fc->fc_shards[i];

		pthread_mutex_lock(&sh->sh_lock);
		*hits += sh->sh_hits;
		*misses += sh->sh_misses;
		*evictions += sh->sh_evictions;
		*forgotten += sh->sh_forgotten;
		*expired += sh->sh_expired;
		*entries += sh->sh_count;
		pthread_mutex_unlock(&sh->sh_lock);
	}
}

int rpcrdma_nfs3_fcache_stats(const struct rpcrdma_nfs3_export *exp,
			      struct rpcrdma_nfs3_fcache_stats *out)
{
	uint64_t dir_evictions = 0, dir_forgotten = 0;

	if (!exp || !out)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	cache_sum(exp->ex_fcache, &out->fcs_capacity, &out->fcs_entries,
		  &out->fcs_hits, &out->fcs_misses, &out->fcs_evictions,
		  &out->fcs_forgotten, &out->fcs_expired);
	cache_sum(exp->ex_dcache, &out->fcs_dir_capacity, &out->fcs_dir_entries,
		  &out->fcs_dir_hits, &out->fcs_dir_misses, &dir_evictions,
		  &dir_forgotten, &out->fcs_dir_expired);
	out->fcs_dir_commits = atomic_load_explicit(&exp->ex_commits,
						   memory_order_relaxed);
	return 0;
}
