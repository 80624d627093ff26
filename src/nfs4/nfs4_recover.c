// SPDX-License-Identifier: MIT
/*
 * nfs4_recover.c - what lets NFSv4.1 clients reclaim their state after a
 * server restart (RFC 8881 8.4.2, 8.4.2.1, 18.51): the client records on
 * stable storage and the grace period.
 *
 * A client's record is its co_ownerid (the client owner of EXCHANGE_ID).
 * It is written when the client becomes one that may reclaim (its first
 * OPEN, or its RECLAIM_COMPLETE, whichever comes first) and removed when
 * the server drops the client (DESTROY_CLIENTID, a new incarnation of the
 * client, its expired lease taken back).  At start the records of the
 * previous run are loaded: those clients, and only those, may reclaim
 * (OPEN CLAIM_PREVIOUS, LOCK with reclaim) during the grace period; every
 * other OPEN and LOCK meanwhile is NFS4ERR_GRACE.  A client's
 * RECLAIM_COMPLETE ends its reclaims; the grace period ends at its time
 * or as soon as every loaded client has sent RECLAIM_COMPLETE (at once
 * when there is none).  Then the loaded records that were not reclaimed
 * are dropped from the file.
 *
 * The file, DIR/nfs4-clients, replaced by rename after fsync:
 *   "RNC4", version 1, count          (three 4-byte words, big endian)
 *   count times: length (1..NFS4_OPAQUE_LIMIT, 4 bytes), the owner bytes
 *   FNV-1a 32 of everything before it (4 bytes)
 * at most sz_records records (2 per client of n4_max_clients).  A file that is short, long, of
 * another version, with a bad length or sum is refused (-EBADMSG), one
 * with more records than the bound -E2BIG: the server does not start on a
 * file it cannot read (the clients in it could not reclaim).
 *
 * The table lives in memory under its own mutex (taken under the state
 * table's, never the other way); the file is rewritten by
 * nfs4_recover_flush(), outside any table lock, before the reply that
 * depends on it is sent.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/be.h"
#include "common/state_dir.h"
#include "nfs4_internal.h"

#define REC_MAGIC 0x524e4334u /* "RNC4" */
#define REC_VERSION 1u
#define REC_FILE "nfs4-clients"
#define REC_HDR 12u
/* the largest file of @n records: header, every record at its longest, the sum */
#define REC_FILE_MAX(n) (REC_HDR + (size_t)(n) * (4u + NFS4_OPAQUE_LIMIT) + 4u)

struct nfs4_rec {
	bool r_used;
	bool r_prev;   /* loaded at start: may reclaim */
	bool r_done;   /* r_prev and RECLAIM_COMPLETE seen */
	bool r_cur;    /* recorded in this run */
	uint32_t r_len;
	uint8_t r_owner[NFS4_OPAQUE_LIMIT];
};

struct nfs4_recover {
	pthread_mutex_t rc_lock;   /* the table, the grace, the counters */
	pthread_mutex_t rc_io;     /* one writer of the file at a time */
	char *rc_path;             /* NULL: nothing on disk */
	FILE *rc_log;
	bool rc_grace;             /* the grace period has not ended */
	time_t rc_grace_end;       /* CLOCK_MONOTONIC seconds */
	uint32_t rc_pending;       /* r_prev && !r_done */
	atomic_bool rc_dirty;      /* written under rc_lock, read without */
	uint8_t *rc_buf;           /* REC_FILE_MAX(rc_n) bytes for the writer */
	struct nfs4_recover_stats rc_st;
	uint32_t rc_n;             /* sz_records */
	struct nfs4_rec *rc_tab;
};

size_t nfs4_recover_bytes(const struct nfs4_sizes *sz)
{
	/* the table, and the file's image when it is on disk */
	return sizeof(struct nfs4_recover) + sz->sz_records * sizeof(struct nfs4_rec) +
	       REC_FILE_MAX(sz->sz_records);
}

/* seconds the tests moved the clock on (nfs4_clock_advance()) */
static _Atomic int64_t nfs4_clock_skew;

time_t nfs4_mono_sec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + (time_t)atomic_load_explicit(&nfs4_clock_skew,
							  memory_order_relaxed);
}

void nfs4_clock_advance(uint32_t sec)
{
	atomic_fetch_add_explicit(&nfs4_clock_skew, (int64_t)sec, memory_order_relaxed);
}

static uint32_t fnv1a(const uint8_t *p, size_t n)
{
	uint32_t h = 2166136261u;

	for (size_t i = 0; i < n; i++) {
		h ^= p[i];
		h *= 16777619u;
	}
	return h;
}

static struct nfs4_rec *rec_find(struct nfs4_recover *rc, const uint8_t *owner,
				 uint32_t len)
{
	for (unsigned i = 0; i < rc->rc_n; i++) {
		struct nfs4_rec *r = &rc->rc_tab[i];

		if (r->r_used && r->r_len == len && memcmp(r->r_owner, owner, len) == 0)
			return r;
	}
	return NULL;
}

static struct nfs4_rec *rec_add(struct nfs4_recover *rc, const uint8_t *owner,
				uint32_t len)
{
	struct nfs4_rec *r = rec_find(rc, owner, len);

	if (r)
		return r;
	if (len == 0 || len > NFS4_OPAQUE_LIMIT)
		return NULL;
	for (unsigned i = 0; i < rc->rc_n; i++) {
		r = &rc->rc_tab[i];
		if (r->r_used)
			continue;
		memset(r, 0, offsetof(struct nfs4_rec, r_owner));
		r->r_used = true;
		r->r_len = len;
		memcpy(r->r_owner, owner, len);
		return r;
	}
	rc->rc_st.rs_no_room++;
	return NULL;
}

int nfs4_recover_parse(const uint8_t *buf, size_t len,
		       int (*fn)(void *arg, const uint8_t *owner, uint32_t len),
		       void *arg)
{
	uint32_t count;
	size_t pos = REC_HDR;
	int err;

	if (len < REC_HDR + 4 || load_be32(buf) != REC_MAGIC ||
	    load_be32(buf + 4) != REC_VERSION)
		return -EBADMSG;
	if (fnv1a(buf, len - 4) != load_be32(buf + len - 4))
		return -EBADMSG;
	count = load_be32(buf + 8);
	if (count > NFS4_RECORDS_PER_CLIENT * RPCRDMA_NFS4_CLIENTS_MAX)
		return -E2BIG; /* the table's own size: load_one() */
	for (uint32_t i = 0; i < count; i++) {
		uint32_t n;

		if (len - 4 - pos < 4)
			return -EBADMSG;
		n = load_be32(buf + pos);
		pos += 4;
		if (n == 0 || n > NFS4_OPAQUE_LIMIT || len - 4 - pos < n)
			return -EBADMSG;
		err = fn(arg, buf + pos, n);
		if (err)
			return err;
		pos += n;
	}
	return pos == len - 4 ? 0 : -EBADMSG;
}

static int load_one(void *arg, const uint8_t *owner, uint32_t len)
{
	struct nfs4_recover *rc = arg;
	struct nfs4_rec *r;

	if (rec_find(rc, owner, len))
		return -EBADMSG; /* the writer never repeats an owner */
	r = rec_add(rc, owner, len);
	if (!r)
		return -E2BIG;
	r->r_prev = true;
	rc->rc_pending++;
	return 0;
}

/* rec_load - the previous run's records from rc_path. */
static int rec_load(struct nfs4_recover *rc)
{
	struct stat sb;
	ssize_t got;
	size_t off = 0;
	int fd, err;

	fd = open(rc->rc_path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	if (fstat(fd, &sb) < 0) {
		err = -errno;
		goto out;
	}
	if (sb.st_size > (off_t)REC_FILE_MAX(rc->rc_n)) {
		err = -E2BIG;
		goto out;
	}
	while (off < (size_t)sb.st_size) {
		got = read(fd, rc->rc_buf + off, (size_t)sb.st_size - off);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0) {
			err = got < 0 ? -errno : -EBADMSG;
			goto out;
		}
		off += (size_t)got;
	}
	err = nfs4_recover_parse(rc->rc_buf, off, load_one, rc);
out:
	close(fd);
	if (err) {
		/* nothing of a refused file is kept */
		memset(rc->rc_tab, 0, rc->rc_n * sizeof(*rc->rc_tab));
		rc->rc_pending = 0;
	}
	return err;
}

int nfs4_recover_create(const char *dir, uint32_t grace, FILE *log, time_t now,
			const struct nfs4_sizes *sz, struct nfs4_recover **out)
{
	struct nfs4_recover *rc;
	struct nfs4_sizes def;
	int err = -ENOMEM;

	if (!sz) {
		nfs4_sizes(0, &def);
		sz = &def;
	}
	rc = calloc(1, sizeof(*rc));
	if (!rc)
		return -ENOMEM;
	rc->rc_n = sz->sz_records;
	rc->rc_tab = calloc(rc->rc_n, sizeof(*rc->rc_tab));
	if (!rc->rc_tab) {
		free(rc);
		return -ENOMEM;
	}
	pthread_mutex_init(&rc->rc_lock, NULL);
	pthread_mutex_init(&rc->rc_io, NULL);
	rc->rc_log = log ? log : stderr;
	if (dir) {
		size_t n = strlen(dir) + sizeof("/" REC_FILE);

		rc->rc_buf = malloc(REC_FILE_MAX(rc->rc_n));
		rc->rc_path = malloc(n);
		if (!rc->rc_buf || !rc->rc_path)
			goto fail;
		snprintf(rc->rc_path, n, "%s/" REC_FILE, dir);
		err = rpcrdma_mkdir_parents(dir);
		if (err)
			goto fail;
		err = rec_load(rc);
		if (err)
			goto fail;
	}
	rc->rc_st.rs_loaded = rc->rc_pending;
	rc->rc_grace = grace != 0 && rc->rc_pending != 0;
	rc->rc_grace_end = now + (time_t)grace;
	if (!rc->rc_grace && rc->rc_pending) {
		/* no grace period: the loaded records can never be used */
		memset(rc->rc_tab, 0, rc->rc_n * sizeof(*rc->rc_tab));
		rc->rc_pending = 0;
		rc->rc_dirty = true;
	}
	rc->rc_st.rs_in_grace = rc->rc_grace;
	*out = rc;
	return 0;
fail:
	nfs4_recover_destroy(rc);
	return err;
}

void nfs4_recover_destroy(struct nfs4_recover *rc)
{
	if (!rc)
		return;
	pthread_mutex_destroy(&rc->rc_lock);
	pthread_mutex_destroy(&rc->rc_io);
	free(rc->rc_buf);
	free(rc->rc_path);
	free(rc->rc_tab);
	free(rc);
}

/* grace_locked - is the grace period on at @now?  Ends it (once). */
static bool grace_locked(struct nfs4_recover *rc, time_t now)
{
	if (!rc->rc_grace)
		return false;
	if (now < rc->rc_grace_end && rc->rc_pending)
		return true;
	rc->rc_grace = false;
	rc->rc_st.rs_in_grace = false;
	/* the loaded records that were not reclaimed go */
	for (unsigned i = 0; i < rc->rc_n; i++) {
		struct nfs4_rec *r = &rc->rc_tab[i];

		if (r->r_used && !r->r_cur)
			r->r_used = false;
		r->r_prev = r->r_done = false;
	}
	rc->rc_dirty = true;
	fprintf(rc->rc_log, "rpcrdma-nfsd: nfs4: grace period over (%s): %u of %u "
		"clients reclaimed, %llu opens and %llu locks reclaimed, "
		"%llu refused in grace\n", rc->rc_pending ? "time" : "every client done",
		rc->rc_st.rs_loaded - rc->rc_pending, rc->rc_st.rs_loaded,
		(unsigned long long)rc->rc_st.rs_open_reclaims,
		(unsigned long long)rc->rc_st.rs_lock_reclaims,
		(unsigned long long)rc->rc_st.rs_grace_refused);
	fflush(rc->rc_log);
	return false;
}

bool nfs4_recover_in_grace(struct nfs4_recover *rc, time_t now)
{
	bool in;

	pthread_mutex_lock(&rc->rc_lock);
	in = grace_locked(rc, now);
	pthread_mutex_unlock(&rc->rc_lock);
	return in;
}

void nfs4_recover_count_grace(struct nfs4_recover *rc)
{
	pthread_mutex_lock(&rc->rc_lock);
	rc->rc_st.rs_grace_refused++;
	pthread_mutex_unlock(&rc->rc_lock);
}

uint32_t nfs4_recover_check(struct nfs4_recover *rc, const uint8_t *owner,
			    uint32_t len, bool reclaim, time_t now)
{
	struct nfs4_rec *r;
	uint32_t status = NFS4_OK;

	pthread_mutex_lock(&rc->rc_lock);
	if (!grace_locked(rc, now)) {
		if (reclaim)
			status = NFS4ERR_NO_GRACE;
	} else if (!reclaim) {
		status = NFS4ERR_GRACE;
	} else {
		r = rec_find(rc, owner, len);
		if (!r || !r->r_prev || r->r_done)
			status = NFS4ERR_NO_GRACE;
	}
	if (status == NFS4ERR_GRACE)
		rc->rc_st.rs_grace_refused++;
	else if (status == NFS4ERR_NO_GRACE)
		rc->rc_st.rs_no_grace++;
	pthread_mutex_unlock(&rc->rc_lock);
	return status;
}

void nfs4_recover_note(struct nfs4_recover *rc, const uint8_t *owner,
		       uint32_t len, enum nfs4_recover_event ev)
{
	struct nfs4_rec *r;

	pthread_mutex_lock(&rc->rc_lock);
	switch (ev) {
	case NFS4_REC_OPEN_RECLAIM:
		rc->rc_st.rs_open_reclaims++;
		/* fall through */
	case NFS4_REC_OPEN:
	case NFS4_REC_RECLAIM_COMPLETE:
		r = rec_add(rc, owner, len);
		if (!r)
			break;
		if (!r->r_cur) {
			r->r_cur = true;
			rc->rc_dirty = true;
		}
		if (ev == NFS4_REC_RECLAIM_COMPLETE && r->r_prev && !r->r_done) {
			r->r_done = true;
			rc->rc_pending--;
			if (!rc->rc_pending) /* the last one: the grace ends now */
				(void)grace_locked(rc, nfs4_mono_sec());
		}
		break;
	case NFS4_REC_LOCK_RECLAIM:
		rc->rc_st.rs_lock_reclaims++;
		break;
	case NFS4_REC_FORGET:
		r = rec_find(rc, owner, len);
		if (!r || !r->r_cur)
			break;
		r->r_cur = false;
		if (!r->r_prev)
			r->r_used = false;
		rc->rc_dirty = true;
		break;
	}
	pthread_mutex_unlock(&rc->rc_lock);
}

/* rec_encode - the file's bytes of the records in force into rc_buf. */
static size_t rec_encode(struct nfs4_recover *rc)
{
	uint8_t *b = rc->rc_buf;
	size_t pos = REC_HDR;
	uint32_t count = 0;

	for (unsigned i = 0; i < rc->rc_n; i++) {
		const struct nfs4_rec *r = &rc->rc_tab[i];

		/* a loaded record stays while its client may still come back */
		if (!r->r_used || !(r->r_cur || (r->r_prev && rc->rc_grace)))
			continue;
		store_be32(b + pos, r->r_len);
		memcpy(b + pos + 4, r->r_owner, r->r_len);
		pos += 4 + r->r_len;
		count++;
	}
	store_be32(b, REC_MAGIC);
	store_be32(b + 4, REC_VERSION);
	store_be32(b + 8, count);
	store_be32(b + pos, fnv1a(b, pos));
	return pos + 4;
}

static int write_file(const char *path, const uint8_t *buf, size_t len)
{
	char tmp[4200];
	size_t off = 0;
	int fd, dfd, err = 0;
	char *slash;

	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.new", path) >= sizeof(tmp))
		return -ENAMETOOLONG;
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	while (off < len && !err) {
		ssize_t n = write(fd, buf + off, len - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			err = n < 0 ? -errno : -EIO;
		else
			off += (size_t)n;
	}
	if (!err && fsync(fd) < 0)
		err = -errno;
	if (close(fd) < 0 && !err)
		err = -errno;
	if (!err && rename(tmp, path) < 0)
		err = -errno;
	if (err) {
		unlink(tmp);
		return err;
	}
	/* the rename itself on disk: the directory */
	memcpy(tmp, path, strlen(path) + 1);
	slash = strrchr(tmp, '/');
	if (slash)
		*(slash == tmp ? slash + 1 : slash) = 0;
	dfd = open(slash ? tmp : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0) {
		if (fsync(dfd) < 0)
			err = -errno;
		close(dfd);
	}
	return err;
}

int nfs4_recover_flush(struct nfs4_recover *rc)
{
	size_t len;
	int err = 0;

	if (!rc->rc_path)
		return 0;
	pthread_mutex_lock(&rc->rc_io);
	pthread_mutex_lock(&rc->rc_lock);
	if (!rc->rc_dirty) {
		pthread_mutex_unlock(&rc->rc_lock);
		goto out;
	}
	rc->rc_dirty = false;
	len = rec_encode(rc);
	pthread_mutex_unlock(&rc->rc_lock);
	err = write_file(rc->rc_path, rc->rc_buf, len);
	pthread_mutex_lock(&rc->rc_lock);
	if (err) {
		rc->rc_dirty = true; /* tried again by the next flush */
		rc->rc_st.rs_write_errors++;
	} else {
		rc->rc_st.rs_writes++;
	}
	pthread_mutex_unlock(&rc->rc_lock);
	if (err)
		fprintf(rc->rc_log, "rpcrdma-nfsd: nfs4: cannot write the client records %s: %s\n",
			rc->rc_path, strerror(-err));
out:
	pthread_mutex_unlock(&rc->rc_io);
	return err;
}

bool nfs4_recover_pending(struct nfs4_recover *rc)
{
	/* every COMPOUND asks: no lock (a change made by another thread
	 * is written by that thread's own flush) */
	return atomic_load(&rc->rc_dirty);
}

void nfs4_recover_stats(struct nfs4_recover *rc, time_t now,
			struct nfs4_recover_stats *out)
{
	pthread_mutex_lock(&rc->rc_lock);
	(void)grace_locked(rc, now);
	*out = rc->rc_st;
	out->rs_records = 0;
	for (unsigned i = 0; i < rc->rc_n; i++)
		if (rc->rc_tab[i].r_used && rc->rc_tab[i].r_cur)
			out->rs_records++;
	out->rs_pending = rc->rc_pending;
	pthread_mutex_unlock(&rc->rc_lock);
}
