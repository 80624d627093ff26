// SPDX-License-Identifier: MIT
/*
 * nfsc_stream.c - a streamed WRITE (RFC 1813 section 3.3.7): a byte range
 * whose data comes from the caller piece by piece (a fill callback into a
 * ring of wsize slots), with up to a chosen depth of WRITEs in flight the
 * whole way.  Unlike rpcrdma_nfsc_write_pipelined() over windows, the
 * pipeline never drains between windows, and the caller's reading of the
 * next piece (e.g. from a local file) overlaps the WRITEs in flight.  A
 * short WRITE's rest is sent from its slot before the slot takes a new
 * piece.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "nfsc/nfsc_internal.h"

struct nfsc_stream;

/* One slot of the ring: its piece and the WRITE that carries it. */
struct nfsc_sslot {
	struct nfsc_call ss_k;
	struct nfsc_stream *ss_st;
	struct nfsc_sslot *ss_next;  /* st_free or st_redo list */
	uint8_t *ss_buf;             /* its wsize bytes of the ring */
	uint64_t ss_off;             /* file offset of its piece */
	uint32_t ss_len;             /* bytes of the piece */
	uint32_t ss_done;            /* bytes of it the server took */
};

struct nfsc_stream {
	pthread_mutex_t st_lock;
	pthread_cond_t st_cond;
	struct nfsc_sslot *st_free;  /* slots whose piece is written */
	struct nfsc_sslot *st_redo;  /* slots whose piece came back short */
	unsigned st_inflight;
	int st_err;                  /* first error */
	uint8_t st_verf[8];
	bool st_verf_set, st_verf_changed;
};

/* Completion callback: count what the server took; the slot goes back to
 * the free list, or to the redo list when its piece is not all written. */
static void nfsc_stream_done(struct rpcrdma_clnt_call *ca, int status, void *arg)
{
	struct nfsc_sslot *ss = arg;
	struct nfsc_stream *st = ss->ss_st;
	uint32_t sent = ss->ss_len - ss->ss_done, got = 0;
	const uint8_t *v = NULL;
	int rc = status;

	(void)ca;
	if (!rc)
		rc = nk_status(&ss->ss_k);
	if (!rc)
		rc = nk_get_write(&ss->ss_k, sent, &got, &v);
	if (!rc && !got)
		rc = -EIO; /* no progress: do not loop on it */
	pthread_mutex_lock(&st->st_lock);
	if (!rc) {
		ss->ss_done += got;
		if (st->st_verf_set && memcmp(v, st->st_verf, 8))
			st->st_verf_changed = true;
		memcpy(st->st_verf, v, 8);
		st->st_verf_set = true;
	} else if (!st->st_err) {
		st->st_err = rc;
	}
	if (ss->ss_done < ss->ss_len) {
		ss->ss_next = st->st_redo;
		st->st_redo = ss;
	} else {
		ss->ss_next = st->st_free;
		st->st_free = ss;
	}
	st->st_inflight--;
	pthread_cond_broadcast(&st->st_cond);
	pthread_mutex_unlock(&st->st_lock);
}

/* Send the unwritten part of @ss's piece.  0 or the error of starting it
 * (then the slot is back on the redo list and st_err is set). */
static int nfsc_stream_send(struct rpcrdma_nfsc *nc, struct nfsc_stream *st,
			    struct nfsc_sslot *ss, const struct rpcrdma_nfsc_fh *fh,
			    uint32_t stable)
{
	struct nfsc_call *k = &ss->ss_k;
	int rc;

	nk_begin(k, NFSPROC3_WRITE);
	nk_put_write(k, fh, ss->ss_off + ss->ss_done, ss->ss_buf + ss->ss_done,
		     ss->ss_len - ss->ss_done, stable);
	rc = nk_args_done(nc, k);
	if (!rc)
		rc = rpcrdma_clnt_call_async(nfsc_clnt_pick(nc), &k->nk_ca, nfsc_stream_done,
					     ss, NULL);
	if (rc) {
		pthread_mutex_lock(&st->st_lock);
		st->st_inflight--;
		ss->ss_next = st->st_redo;
		st->st_redo = ss;
		if (!st->st_err)
			st->st_err = rc;
		pthread_mutex_unlock(&st->st_lock);
	}
	return rc;
}

int rpcrdma_nfsc_write_stream(struct rpcrdma_nfsc *nc, const struct rpcrdma_nfsc_fh *fh,
			      uint64_t offset, uint64_t len, void *ring, unsigned depth,
			      uint32_t stable, rpcrdma_nfsc_fill_fn fill, void *arg,
			      uint64_t *written, uint8_t verf[8], bool *verf_changed)
{
	struct nfsc_stream st = { .st_err = 0 };
	struct nfsc_sslot *slots, *ss;
	uint64_t next = 0, low;
	uint32_t plen;
	unsigned j;
	int rc;

	if (written)
		*written = 0;
	if (!depth || !fill || (len && !ring) || stable > 2)
		return -EINVAL;
	slots = calloc(depth, sizeof(*slots));
	if (!slots)
		return -ENOMEM;
	pthread_mutex_init(&st.st_lock, NULL);
	pthread_cond_init(&st.st_cond, NULL);
	for (j = depth; j-- > 0;) {
		slots[j].ss_st = &st;
		slots[j].ss_buf = (uint8_t *)ring + (size_t)j * nc->nc_wsize;
		slots[j].ss_next = st.st_free;
		st.st_free = &slots[j];
	}
	pthread_mutex_lock(&st.st_lock);
	for (;;) {
		if (st.st_err)
			break;
		if (st.st_redo) {
			/* a short WRITE: the rest of its piece, from its slot */
			ss = st.st_redo;
			st.st_redo = ss->ss_next;
			st.st_inflight++;
			pthread_mutex_unlock(&st.st_lock);
			nfsc_stream_send(nc, &st, ss, fh, stable);
			pthread_mutex_lock(&st.st_lock);
			continue;
		}
		if (next < len && st.st_free) {
			ss = st.st_free;
			st.st_free = ss->ss_next;
			st.st_inflight++;
			pthread_mutex_unlock(&st.st_lock);
			plen = len - next < nc->nc_wsize ? (uint32_t)(len - next) : nc->nc_wsize;
			/* the caller fills this slot while the others are in flight */
			rc = fill(arg, offset + next, ss->ss_buf, plen);
			pthread_mutex_lock(&st.st_lock);
			if (rc) {
				st.st_inflight--;
				ss->ss_next = st.st_free;
				st.st_free = ss;
				if (!st.st_err)
					st.st_err = rc;
				continue;
			}
			ss->ss_off = offset + next;
			ss->ss_len = plen;
			ss->ss_done = 0;
			next += plen;
			pthread_mutex_unlock(&st.st_lock);
			nfsc_stream_send(nc, &st, ss, fh, stable);
			pthread_mutex_lock(&st.st_lock);
			continue;
		}
		if (next >= len && !st.st_inflight)
			break; /* every piece issued and written */
		pthread_cond_wait(&st.st_cond, &st.st_lock);
	}
	while (st.st_inflight)
		pthread_cond_wait(&st.st_cond, &st.st_lock);
	rc = st.st_err;
	pthread_mutex_unlock(&st.st_lock);
	/* Written for sure: everything before the first unwritten byte. */
	low = next;
	for (j = 0; j < depth; j++)
		if (slots[j].ss_done < slots[j].ss_len &&
		    slots[j].ss_off + slots[j].ss_done - offset < low)
			low = slots[j].ss_off + slots[j].ss_done - offset;
	if (written)
		*written = low;
	if (!rc) {
		if (verf)
			memcpy(verf, st.st_verf, 8);
		if (verf_changed)
			*verf_changed = st.st_verf_changed;
	}
	pthread_mutex_destroy(&st.st_lock);
	pthread_cond_destroy(&st.st_cond);
	free(slots);
	return rc;
}
