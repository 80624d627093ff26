// SPDX-License-Identifier: MIT
/*
 * nfs4_deleg.c - the table of read delegations and their states (see
 * nfs4_deleg.h).  Bounded (sz_delegs of n4_max_clients); a full table
 * grants none.
 * The stateid's "other" field: the server's start, the entry's index
 * (NFS4_DELEG_INDEX_BITS) and its generation, so a stale or forged one matches nothing.
 *
 * Leases.  A delegation may have a lease of the file-serving layer
 * (fs_lease_open(), nfs4_deleg_lease()) in its entry, so a change from
 * outside the server recalls it.  A lease is never opened or closed
 * under dt_lock (its break callback takes dt_lock, and a close waits for
 * a break in flight): an entry freed or revoked keeps its lease (dl_pin:
 * the slot is not reused, the lease's storage stays where it is) until
 * nfs4_deleg_reap() closes it from a thread that holds no lock (the
 * server's lease thread, DELEGRETURN).
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "common/be.h"
#include "nfs4_deleg.h"
#include "nfs4_internal.h"

/* Marks delegation stateids apart from open and lock ones ("DLG"). */
#define DELEG_MAGIC 0x444c4700u

struct nfs4_deleg {
	enum nfs4_deleg_state dl_state;
	uint32_t dl_gen;
	uint64_t dl_clientid;
	time_t dl_recalled;        /* when the recall began */
	bool dl_sent;              /* its CB_RECALL went out */
	bool dl_pin;               /* dl_lease holds a lease, or is being opened */
	bool dl_opening;           /* fs_lease_open() under way (no lock held) */
	bool dl_closing;           /* nfs4_deleg_reap() closing it */
	bool dl_broken;            /* the lease broke: to recall (the lease thread) */
	struct fs_lease dl_lease;  /* the file-serving layer's lease, or none */
	uint32_t dl_fhlen;
	uint8_t dl_fh[NFS4_FHSIZE];
};

struct nfs4_deleg_table {
	pthread_mutex_t dt_lock;
	uint32_t dt_boot;
	uint32_t dt_lease;
	struct nfs4_deleg_counts dt_counts;
	atomic_uint dt_nused;      /* entries not free: 0 lets a change skip the scan */
	atomic_bool dt_reap;       /* a lease of a freed or revoked entry to close */
	atomic_bool dt_broken;     /* some entry's dl_broken is set */
	uint32_t dt_n;             /* sz_delegs */
	uint32_t dt_client_max;    /* sz_client_delegs */
	uint32_t dt_hi;            /* entries at or past it never used: scans stop */
	struct nfs4_deleg *dt_d;
};

#define DELEG_IDX_MASK ((1u << NFS4_DELEG_INDEX_BITS) - 1)
#define DELEG_GEN_MASK ((1u << (32 - NFS4_DELEG_INDEX_BITS)) - 1)

size_t nfs4_deleg_bytes(const struct nfs4_sizes *sz)
{
	return sizeof(struct nfs4_deleg_table) + sz->sz_delegs * sizeof(struct nfs4_deleg);
}

int nfs4_deleg_create(uint32_t boot, uint32_t lease, const struct nfs4_sizes *sz,
		      struct nfs4_deleg_table **out)
{
	struct nfs4_deleg_table *t = calloc(1, sizeof(*t));
	struct nfs4_sizes def;

	if (!t)
		return -ENOMEM;
	if (!sz) {
		nfs4_sizes(0, &def);
		sz = &def;
	}
	t->dt_n = sz->sz_delegs;
	t->dt_client_max = sz->sz_client_delegs;
	t->dt_d = calloc(t->dt_n, sizeof(*t->dt_d));
	if (!t->dt_d) {
		free(t);
		return -ENOMEM;
	}
	pthread_mutex_init(&t->dt_lock, NULL);
	t->dt_boot = boot;
	t->dt_lease = lease;
	*out = t;
	return 0;
}

void nfs4_deleg_destroy(struct nfs4_deleg_table *t)
{
	if (!t)
		return;
	nfs4_deleg_drop_leases(t);
	pthread_mutex_destroy(&t->dt_lock);
	free(t->dt_d);
	free(t);
}

static void make_sid(const struct nfs4_deleg_table *t, uint32_t i, struct nfs4_stateid *sid)
{
	sid->si_seqid = 1;
	store_be32(sid->si_other, DELEG_MAGIC);
	store_be32(sid->si_other + 4, t->dt_boot);
	store_be32(sid->si_other + 8, t->dt_d[i].dl_gen << NFS4_DELEG_INDEX_BITS | i);
}

/* find_locked - the entry of @sid, or NULL (not a delegation stateid of
 * this start, or an entry reused since). */
static struct nfs4_deleg *find_locked(struct nfs4_deleg_table *t, const struct nfs4_stateid *sid)
{
	uint32_t w = load_be32(sid->si_other + 8), i = w & DELEG_IDX_MASK;
	struct nfs4_deleg *d;

	if (load_be32(sid->si_other) != DELEG_MAGIC ||
	    load_be32(sid->si_other + 4) != t->dt_boot || i >= t->dt_n)
		return NULL;
	d = &t->dt_d[i];
	if (d->dl_state == NFS4_DELEG_FREE || (d->dl_gen << NFS4_DELEG_INDEX_BITS | i) != w)
		return NULL;
	return d;
}

static bool same_fh(const struct nfs4_deleg *d, const uint8_t *fh, uint32_t fhlen)
{
	return d->dl_fhlen == fhlen && !memcmp(d->dl_fh, fh, fhlen);
}

static void free_locked(struct nfs4_deleg_table *t, struct nfs4_deleg *d)
{
	if (d->dl_state == NFS4_DELEG_GRANTED || d->dl_state == NFS4_DELEG_RECALLING)
		t->dt_counts.dc_held--;
	if (d->dl_pin)
		atomic_store(&t->dt_reap, true); /* its lease: nfs4_deleg_reap() */
	d->dl_broken = false;
	d->dl_state = NFS4_DELEG_FREE;
	d->dl_gen = (d->dl_gen + 1) & DELEG_GEN_MASK;
	atomic_fetch_sub(&t->dt_nused, 1);
}

bool nfs4_deleg_grant(struct nfs4_deleg_table *t, uint64_t clientid,
		      const uint8_t *fh, uint32_t fhlen, bool writers,
		      struct nfs4_stateid *out)
{
	uint32_t i, slot = t->dt_n, mine = 0;
	bool ok = false;

	if (writers || fhlen > NFS4_FHSIZE)
		return false;
	pthread_mutex_lock(&t->dt_lock);
	for (i = 0; i < t->dt_hi; i++) {
		struct nfs4_deleg *d = &t->dt_d[i];

		if (d->dl_state == NFS4_DELEG_FREE) {
			if (slot == t->dt_n && !d->dl_pin)
				slot = i;
			continue;
		}
		mine += d->dl_clientid == clientid;
		if (!same_fh(d, fh, fhlen))
			continue;
		/* a file being recalled gets no new delegation (10.4.4) */
		if (d->dl_state != NFS4_DELEG_GRANTED)
			goto out;
		if (d->dl_clientid == clientid) {
			make_sid(t, i, out); /* the one it has */
			ok = true;
			goto out;
		}
	}
	if (slot == t->dt_n && t->dt_hi < t->dt_n)
		slot = t->dt_hi;
	if (slot == t->dt_n || mine >= t->dt_client_max)
		goto out;
	if (slot >= t->dt_hi)
		t->dt_hi = slot + 1;
	atomic_fetch_add(&t->dt_nused, 1);
	t->dt_d[slot].dl_state = NFS4_DELEG_GRANTED;
	t->dt_d[slot].dl_clientid = clientid;
	t->dt_d[slot].dl_fhlen = fhlen;
	memcpy(t->dt_d[slot].dl_fh, fh, fhlen);
	make_sid(t, slot, out);
	t->dt_counts.dc_granted++;
	t->dt_counts.dc_held++;
	ok = true;
out:
	pthread_mutex_unlock(&t->dt_lock);
	return ok;
}

uint32_t nfs4_deleg_conflict(struct nfs4_deleg_table *t, uint64_t clientid,
			     const uint8_t *fh, uint32_t fhlen, time_t now,
			     struct nfs4_deleg_recall *rec, uint32_t *nrec)
{
	uint32_t status = NFS4_OK, n = 0;
	struct nfs4_stateid sid;

	/* the common case (every NFSv3 WRITE passes here): nothing delegated */
	*nrec = 0;
	if (atomic_load(&t->dt_nused) == 0)
		return NFS4_OK;
	pthread_mutex_lock(&t->dt_lock);
	for (uint32_t i = 0; i < t->dt_hi; i++) {
		struct nfs4_deleg *d = &t->dt_d[i];

		if (d->dl_state == NFS4_DELEG_FREE || d->dl_state == NFS4_DELEG_REVOKED ||
		    !same_fh(d, fh, fhlen) || (clientid && d->dl_clientid == clientid))
			continue;
		if (d->dl_state == NFS4_DELEG_RECALLING &&
		    now - d->dl_recalled >= (time_t)t->dt_lease) {
			/* a lease after the recall, no return: revoked (10.4.6) */
			d->dl_state = NFS4_DELEG_REVOKED;
			d->dl_broken = false;
			if (d->dl_pin)
				atomic_store(&t->dt_reap, true);
			t->dt_counts.dc_held--;
			t->dt_counts.dc_revoked++;
			continue;
		}
		if (d->dl_state == NFS4_DELEG_GRANTED) {
			d->dl_state = NFS4_DELEG_RECALLING;
			d->dl_recalled = now;
			d->dl_sent = false;
			t->dt_counts.dc_recalled++;
		}
		/* offered until its CB_RECALL could be sent */
		if (!d->dl_sent && n < NFS4_DELEG_MAX_RECALL) {
			make_sid(t, i, &sid);
			rec[n].dr_clientid = d->dl_clientid;
			memcpy(rec[n].dr_other, sid.si_other, sizeof(sid.si_other));
			rec[n].dr_seqid = sid.si_seqid;
			n++;
		}
		status = NFS4ERR_DELAY;
	}
	if (status == NFS4ERR_DELAY)
		t->dt_counts.dc_delays++;
	pthread_mutex_unlock(&t->dt_lock);
	*nrec = n;
	return status;
}

uint32_t nfs4_deleg_return(struct nfs4_deleg_table *t, uint64_t clientid,
			   const struct nfs4_stateid *sid, const uint8_t *fh,
			   uint32_t fhlen)
{
	struct nfs4_deleg *d;
	uint32_t status = NFS4_OK;

	pthread_mutex_lock(&t->dt_lock);
	d = find_locked(t, sid);
	if (!d || d->dl_clientid != clientid || (fh && !same_fh(d, fh, fhlen))) {
		status = NFS4ERR_BAD_STATEID;
	} else if (sid->si_seqid != 0 && sid->si_seqid != 1) {
		status = sid->si_seqid > 1 ? NFS4ERR_BAD_STATEID : NFS4ERR_OLD_STATEID;
	} else {
		if (d->dl_state != NFS4_DELEG_REVOKED)
			t->dt_counts.dc_returned++;
		free_locked(t, d);
	}
	pthread_mutex_unlock(&t->dt_lock);
	nfs4_deleg_reap(t); /* its lease: a local writer waiting goes on */
	return status;
}

uint32_t nfs4_deleg_check(struct nfs4_deleg_table *t, uint64_t clientid,
			  const struct nfs4_stateid *sid, const uint8_t *fh,
			  uint32_t fhlen)
{
	struct nfs4_deleg *d;
	uint32_t status;

	pthread_mutex_lock(&t->dt_lock);
	d = find_locked(t, sid);
	if (!d || d->dl_clientid != clientid || (fh && !same_fh(d, fh, fhlen)))
		status = NFS4ERR_BAD_STATEID;
	else if (d->dl_state == NFS4_DELEG_REVOKED)
		status = NFS4ERR_DELEG_REVOKED;
	else
		status = NFS4_OK;
	pthread_mutex_unlock(&t->dt_lock);
	return status;
}

uint32_t nfs4_deleg_holders(struct nfs4_deleg_table *t, uint64_t except,
			    const uint8_t *fh, uint32_t fhlen, uint64_t *ids,
			    uint32_t max)
{
	uint32_t n = 0;

	if (atomic_load(&t->dt_nused) == 0)
		return 0;
	pthread_mutex_lock(&t->dt_lock);
	for (uint32_t i = 0; i < t->dt_hi && n < max; i++) {
		const struct nfs4_deleg *d = &t->dt_d[i];

		if ((d->dl_state == NFS4_DELEG_GRANTED || d->dl_state == NFS4_DELEG_RECALLING) &&
		    same_fh(d, fh, fhlen) && (!except || d->dl_clientid != except))
			ids[n++] = d->dl_clientid;
	}
	pthread_mutex_unlock(&t->dt_lock);
	return n;
}

void nfs4_deleg_recall_sent(struct nfs4_deleg_table *t, const struct nfs4_deleg_recall *rec)
{
	struct nfs4_stateid sid = { .si_seqid = rec->dr_seqid };
	struct nfs4_deleg *d;

	memcpy(sid.si_other, rec->dr_other, sizeof(sid.si_other));
	pthread_mutex_lock(&t->dt_lock);
	d = find_locked(t, &sid);
	if (d && d->dl_state == NFS4_DELEG_RECALLING)
		d->dl_sent = true;
	pthread_mutex_unlock(&t->dt_lock);
}

bool nfs4_deleg_revoked(struct nfs4_deleg_table *t, uint64_t clientid)
{
	bool any = false;

	pthread_mutex_lock(&t->dt_lock);
	for (uint32_t i = 0; i < t->dt_hi && !any; i++)
		any = t->dt_d[i].dl_state == NFS4_DELEG_REVOKED &&
		      t->dt_d[i].dl_clientid == clientid;
	pthread_mutex_unlock(&t->dt_lock);
	return any;
}

bool nfs4_deleg_forget_client(struct nfs4_deleg_table *t, uint64_t clientid)
{
	bool leases = false;

	pthread_mutex_lock(&t->dt_lock);
	for (uint32_t i = 0; i < t->dt_hi; i++) {
		struct nfs4_deleg *d = &t->dt_d[i];

		if (d->dl_state != NFS4_DELEG_FREE && d->dl_clientid == clientid) {
			leases |= d->dl_pin;
			free_locked(t, d);
		}
	}
	pthread_mutex_unlock(&t->dt_lock);
	return leases;
}

/* ---- leases ---- */

int nfs4_deleg_lease(struct nfs4_deleg_table *t, const struct nfs4_stateid *sid,
		     struct fs_call *c, struct fs_fentry *fe, fs_lease_break_fn fn,
		     void *arg)
{
	struct nfs4_deleg *d;
	int err;

	pthread_mutex_lock(&t->dt_lock);
	d = find_locked(t, sid);
	if (!d || d->dl_state != NFS4_DELEG_GRANTED) {
		pthread_mutex_unlock(&t->dt_lock);
		return -ENOENT;
	}
	if (d->dl_pin) { /* the client's delegation it had: leased already */
		pthread_mutex_unlock(&t->dt_lock);
		return 0;
	}
	d->dl_pin = true;
	d->dl_opening = true;
	pthread_mutex_unlock(&t->dt_lock);
	err = fs_lease_open(c, fe, fn, arg, &d->dl_lease);
	pthread_mutex_lock(&t->dt_lock);
	d->dl_opening = false;
	if (err) {
		d->dl_pin = false;
		/* refused: the delegation is taken back, as if never granted
		 * (no one has its stateid yet); -EOPNOTSUPP keeps it */
		if (err != -EOPNOTSUPP && d->dl_state == NFS4_DELEG_GRANTED &&
		    find_locked(t, sid) == d) {
			t->dt_counts.dc_granted--;
			free_locked(t, d);
		}
	}
	pthread_mutex_unlock(&t->dt_lock);
	return err;
}

bool nfs4_deleg_lease_broken(struct nfs4_deleg_table *t, struct fs_lease *ls)
{
	struct nfs4_deleg *d = (struct nfs4_deleg *)((char *)ls -
						     offsetof(struct nfs4_deleg, dl_lease));
	bool mark;

	pthread_mutex_lock(&t->dt_lock);
	mark = d->dl_state == NFS4_DELEG_GRANTED || d->dl_state == NFS4_DELEG_RECALLING;
	if (mark) {
		d->dl_broken = true;
		atomic_store(&t->dt_broken, true);
	}
	pthread_mutex_unlock(&t->dt_lock);
	return mark;
}

uint32_t nfs4_deleg_broken(struct nfs4_deleg_table *t, uint8_t (*fh)[NFS4_FHSIZE],
			   uint32_t *fhlen, uint32_t max)
{
	uint32_t n = 0;
	bool more = false;

	if (!atomic_exchange(&t->dt_broken, false))
		return 0;
	pthread_mutex_lock(&t->dt_lock);
	for (uint32_t i = 0; i < t->dt_hi; i++) {
		struct nfs4_deleg *d = &t->dt_d[i];

		if (!d->dl_broken)
			continue;
		more = true; /* still out: asked again on the next pass */
		if (n < max) {
			memcpy(fh[n], d->dl_fh, d->dl_fhlen);
			fhlen[n++] = d->dl_fhlen;
		}
	}
	if (more)
		atomic_store(&t->dt_broken, true);
	pthread_mutex_unlock(&t->dt_lock);
	return n;
}

void nfs4_deleg_reap(struct nfs4_deleg_table *t)
{
	struct nfs4_deleg *d;

	if (!atomic_exchange(&t->dt_reap, false))
		return;
	for (;;) {
		d = NULL;
		pthread_mutex_lock(&t->dt_lock);
		for (uint32_t i = 0; i < t->dt_hi && !d; i++) {
			struct nfs4_deleg *e = &t->dt_d[i];

			if (e->dl_pin && !e->dl_opening && !e->dl_closing &&
			    (e->dl_state == NFS4_DELEG_FREE || e->dl_state == NFS4_DELEG_REVOKED))
				d = e;
			else if (e->dl_pin && e->dl_opening &&
				 (e->dl_state == NFS4_DELEG_FREE || e->dl_state == NFS4_DELEG_REVOKED))
				atomic_store(&t->dt_reap, true); /* later */
		}
		if (d)
			d->dl_closing = true;
		pthread_mutex_unlock(&t->dt_lock);
		if (!d)
			return;
		fs_lease_close(&d->dl_lease);
		pthread_mutex_lock(&t->dt_lock);
		d->dl_closing = false;
		d->dl_pin = false;
		pthread_mutex_unlock(&t->dt_lock);
	}
}

void nfs4_deleg_drop_leases(struct nfs4_deleg_table *t)
{
	if (!t)
		return;
	for (uint32_t i = 0; i < t->dt_hi; i++) {
		struct nfs4_deleg *d = &t->dt_d[i];

		if (d->dl_pin && !d->dl_opening) {
			fs_lease_close(&d->dl_lease);
			d->dl_pin = false;
		}
	}
}

void nfs4_deleg_counts(struct nfs4_deleg_table *t, struct nfs4_deleg_counts *out)
{
	pthread_mutex_lock(&t->dt_lock);
	*out = t->dt_counts;
	pthread_mutex_unlock(&t->dt_lock);
}
