// SPDX-License-Identifier: MIT
/*
 * nfsc_stream.c - streamed WRITE and READ (RFC 1813 sections 3.3.7 and
 * 3.3.6): a byte range moved piece by piece through a ring of slots, with
 * up to a chosen depth of calls in flight the whole way.  A WRITE stream's
 * data comes from the caller (a fill callback into the slot the next WRITE
 * goes from); a READ stream hands each piece to the caller in file order
 * (a drain callback) as soon as it and those before it are in.  Unlike
 * rpcrdma_nfsc_{read,write}_pipelined() over windows, the pipeline never
 * drains between windows, and the caller's local I/O overlaps the calls in
 * flight.  A short WRITE's or READ's rest is asked for from its slot before
 * the slot takes a new piece.
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
	uint32_t ss_done;            /* bytes of it the server took or sent */
	bool ss_eof;                 /* READ: the server said end of file */
	bool ss_ready;               /* READ: all in (or eof), not delivered */
};

struct nfsc_stream {
	struct rpcrdma_nfsc *st_nc;
	const struct rpcrdma_nfsc_fh *st_fh;
	bool st_read;                /* READ stream, else WRITE */
	uint32_t st_stable;          /* WRITE: stable_how */
	struct nfsc_sslot *st_slots;
	unsigned st_nslots;
	pthread_mutex_t st_lock;
	pthread_cond_t st_cond;
	struct nfsc_sslot *st_free;  /* slots whose piece is written */
	struct nfsc_sslot *st_redo;  /* slots whose piece came back short */
	unsigned st_inflight;
	int st_err;                  /* first error */
	uint8_t st_verf[8];
	bool st_verf_set, st_verf_changed;
};

/* Completion callback: count what the server took (WRITE) or sent
 * (READ); a piece not all done goes to the redo list; a done WRITE slot
 * goes back to the free list, a done READ slot waits to be delivered. */
static void nfsc_stream_done(struct rpcrdma_clnt_call *ca, int status, void *arg)
{
	struct nfsc_sslot *ss = arg;
	struct nfsc_stream *st = ss->ss_st;
	uint32_t left = ss->ss_len - ss->ss_done, got = 0;
	const uint8_t *v = NULL;
	bool eof = false;
	int rc = status;

	(void)ca;
	if (!rc)
		rc = nk_status(&ss->ss_k);
	if (!rc && st->st_read)
		rc = nk_get_read(&ss->ss_k, ss->ss_buf + ss->ss_done, left, &got, &eof);
	else if (!rc)
		rc = nk_get_write(&ss->ss_k, left, &got, &v);
	if (!rc && !got && !eof)
		rc = -EIO; /* no progress: do not loop on it */
	pthread_mutex_lock(&st->st_lock);
	if (!rc) {
		ss->ss_done += got;
		ss->ss_eof = eof;
		if (v) {
			if (st->st_verf_set && memcmp(v, st->st_verf, 8))
				st->st_verf_changed = true;
			memcpy(st->st_verf, v, 8);
			st->st_verf_set = true;
		}
	} else if (!st->st_err) {
		st->st_err = rc;
	}
	if (ss->ss_done < ss->ss_len && !ss->ss_eof) {
		ss->ss_next = st->st_redo;
		st->st_redo = ss;
	} else if (st->st_read) {
		ss->ss_ready = true;
	} else {
		ss->ss_next = st->st_free;
		st->st_free = ss;
	}
	st->st_inflight--;
	pthread_cond_broadcast(&st->st_cond);
	pthread_mutex_unlock(&st->st_lock);
}

/* Send the WRITE of the unwritten part of @ss's piece, or the READ of its
 * part not yet in.  Called without the lock, st_inflight already counting
 * it.  0 or the error of starting it (then the slot is back on the redo
 * list and st_err is set). */
static int nfsc_stream_send(struct nfsc_stream *st, struct nfsc_sslot *ss)
{
	struct nfsc_call *k = &ss->ss_k;
	int rc;

	nk_begin(k, st->st_read ? NFSPROC3_READ : NFSPROC3_WRITE);
	if (st->st_read)
		nk_put_read(k, st->st_fh, ss->ss_off + ss->ss_done, ss->ss_buf + ss->ss_done,
			    ss->ss_len - ss->ss_done);
	else
		nk_put_write(k, st->st_fh, ss->ss_off + ss->ss_done, ss->ss_buf + ss->ss_done,
			     ss->ss_len - ss->ss_done, st->st_stable);
	rc = nk_args_done(st->st_nc, k);
	if (!rc)
		rc = rpcrdma_clnt_call_async(nk_route(st->st_nc, k), &k->nk_ca,
					     nfsc_stream_done, ss, NULL);
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

/* Send again the first slot of the redo list (a short WRITE's or READ's
 * rest).  Lock held; released during the send. */
static void nfsc_stream_redo(struct nfsc_stream *st)
{
	struct nfsc_sslot *ss = st->st_redo;

	st->st_redo = ss->ss_next;
	st->st_inflight++;
	pthread_mutex_unlock(&st->st_lock);
	nfsc_stream_send(st, ss);
	pthread_mutex_lock(&st->st_lock);
}

/* Set up @st over @ring: @nslots slots of @slot_len bytes, all on the
 * free list (which the WRITE stream takes from; the READ stream uses slot
 * i mod @nslots for piece i instead). */
static int nfsc_stream_init(struct nfsc_stream *st, struct rpcrdma_nfsc *nc,
			    const struct rpcrdma_nfsc_fh *fh, bool read, void *ring,
			    unsigned nslots, uint32_t slot_len)
{
	unsigned j;

	st->st_slots = calloc(nslots, sizeof(*st->st_slots));
	if (!st->st_slots)
		return -ENOMEM;
	st->st_nc = nc;
	st->st_fh = fh;
	st->st_read = read;
	st->st_nslots = nslots;
	pthread_mutex_init(&st->st_lock, NULL);
	pthread_cond_init(&st->st_cond, NULL);
	for (j = nslots; j-- > 0;) {
		st->st_slots[j].ss_st = st;
		st->st_slots[j].ss_buf = (uint8_t *)ring + (size_t)j * slot_len;
		st->st_slots[j].ss_next = st->st_free;
		st->st_free = &st->st_slots[j];
	}
	return 0;
}

/* Wait for the calls in flight.  Lock held on entry, released on return.
 * The first error or 0. */
static int nfsc_stream_wait(struct nfsc_stream *st)
{
	int rc;

	while (st->st_inflight)
		pthread_cond_wait(&st->st_cond, &st->st_lock);
	rc = st->st_err;
	pthread_mutex_unlock(&st->st_lock);
	return rc;
}

static void nfsc_stream_fini(struct nfsc_stream *st)
{
	pthread_mutex_destroy(&st->st_lock);
	pthread_cond_destroy(&st->st_cond);
	free(st->st_slots);
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
	st.st_stable = stable;
	rc = nfsc_stream_init(&st, nc, fh, false, ring, depth, nc->nc_wsize);
	if (rc)
		return rc;
	slots = st.st_slots;
	pthread_mutex_lock(&st.st_lock);
	for (;;) {
		if (st.st_err)
			break;
		if (st.st_redo) {
			/* a short WRITE: the rest of its piece, from its slot */
			nfsc_stream_redo(&st);
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
			nfsc_stream_send(&st, ss);
			pthread_mutex_lock(&st.st_lock);
			continue;
		}
		if (next >= len && !st.st_inflight)
			break; /* every piece issued and written */
		pthread_cond_wait(&st.st_cond, &st.st_lock);
	}
	rc = nfsc_stream_wait(&st);
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
	nfsc_stream_fini(&st);
	return rc;
}

int rpcrdma_nfsc_read_stream(struct rpcrdma_nfsc *nc, const struct rpcrdma_nfsc_fh *fh,
			     uint64_t offset, uint64_t len, void *ring, unsigned depth,
			     rpcrdma_nfsc_drain_fn drain, void *arg, uint64_t *delivered,
			     bool *eof)
{
	struct nfsc_stream st = { .st_err = 0 };
	uint64_t next = 0, done = 0, issued = 0, dealt = 0;
	struct nfsc_sslot *ss;
	bool at_eof = false;
	uint32_t plen;
	int rc;

	if (delivered)
		*delivered = 0;
	if (eof)
		*eof = false;
	if (!depth || !drain || (len && !ring))
		return -EINVAL;
	/* Piece i goes in slot i mod (depth + 1): up to @depth in flight or
	 * waiting for their turn, plus the one last delivered, which the
	 * caller may still be using. */
	rc = nfsc_stream_init(&st, nc, fh, true, ring, depth + 1, nc->nc_rsize);
	if (rc)
		return rc;
	pthread_mutex_lock(&st.st_lock);
	for (;;) {
		if (st.st_redo && !st.st_err) {
			/* a short READ: ask for the rest of its piece */
			nfsc_stream_redo(&st);
			continue;
		}
		/* the next piece in file order, once it is all in, comes first:
		 * good data even when a later READ failed */
		ss = &st.st_slots[dealt % st.st_nslots];
		if (dealt < issued && ss->ss_ready) {
			ss->ss_ready = false;
			pthread_mutex_unlock(&st.st_lock);
			rc = ss->ss_done ? drain(arg, ss->ss_off, ss->ss_buf, ss->ss_done) : 0;
			pthread_mutex_lock(&st.st_lock);
			if (rc) {
				if (!st.st_err)
					st.st_err = rc;
				break;
			}
			done += ss->ss_done;
			dealt++;
			if (ss->ss_eof || ss->ss_done < ss->ss_len) {
				at_eof = true;
				break;
			}
			continue;
		}
		/* after an error, only the pieces already in are delivered */
		if (st.st_err)
			break;
		if (next < len && issued - dealt < depth) {
			ss = &st.st_slots[issued % st.st_nslots];
			plen = len - next < nc->nc_rsize ? (uint32_t)(len - next) : nc->nc_rsize;
			ss->ss_off = offset + next;
			ss->ss_len = plen;
			ss->ss_done = 0;
			ss->ss_eof = false;
			ss->ss_ready = false;
			next += plen;
			issued++;
			st.st_inflight++;
			pthread_mutex_unlock(&st.st_lock);
			nfsc_stream_send(&st, ss);
			pthread_mutex_lock(&st.st_lock);
			continue;
		}
		if (dealt == issued)
			break; /* every piece asked for and delivered */
		pthread_cond_wait(&st.st_cond, &st.st_lock);
	}
	rc = nfsc_stream_wait(&st);
	/* Past the end of file, the READs still in flight do not matter. */
	if (at_eof)
		rc = 0;
	if (delivered)
		*delivered = done;
	if (eof)
		*eof = at_eof;
	nfsc_stream_fini(&st);
	return rc;
}
