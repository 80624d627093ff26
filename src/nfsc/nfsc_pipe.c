// SPDX-License-Identifier: MIT
/*
 * nfsc_pipe.c - pipelined READ and WRITE: a byte range cut into rsize or
 * wsize pieces, up to a chosen depth of them in flight at once on the
 * RPC-over-RDMA Requester (RFC 1813 sections 3.3.6, 3.3.7), short pieces
 * finished synchronously afterwards.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "nfsc/nfsc_internal.h"

struct nfsc_pipe;

/* One READ or WRITE in flight. */
struct nfsc_slot {
	struct nfsc_call ps_k;
	struct nfsc_pipe *ps_pipe;
	struct nfsc_slot *ps_next;   /* free list */
	uint64_t ps_piece;           /* index of the piece */
};

/* Per-piece outcome. */
struct nfsc_piece {
	uint32_t pc_done;            /* bytes read or written */
	bool pc_eof;
};

struct nfsc_pipe {
	struct rpcrdma_nfsc *np_nc;
	pthread_mutex_t np_lock;
	pthread_cond_t np_cond;
	struct nfsc_slot *np_free;
	unsigned np_inflight;
	int np_err;                  /* first error */
	bool np_write;
	uint64_t np_offset;          /* file offset of piece 0 */
	uint8_t *np_buf;
	uint64_t np_len;
	uint32_t np_piece_len;       /* rsize or wsize */
	struct nfsc_piece *np_pieces;
	uint8_t np_verf[8];
	bool np_verf_set, np_verf_changed;
};

static uint32_t piece_len(const struct nfsc_pipe *np, uint64_t i)
{
	uint64_t left = np->np_len - i * np->np_piece_len;

	return left < np->np_piece_len ? (uint32_t)left : np->np_piece_len;
}

/* Completion callback: decode the results into the piece's record. */
static void nfsc_pipe_done(struct rpcrdma_clnt_call *ca, int status, void *arg)
{
	struct nfsc_slot *ps = arg;
	struct nfsc_pipe *np = ps->ps_pipe;
	struct nfsc_call *k = &ps->ps_k;
	struct nfsc_piece *pc = &np->np_pieces[ps->ps_piece];
	uint32_t len = piece_len(np, ps->ps_piece), got = 0;
	const uint8_t *v = NULL;
	bool eof = false;
	int rc = status;

	(void)ca;
	if (!rc)
		rc = nk_status(k);
	if (!rc && !np->np_write)
		rc = nk_get_read(k, k->nk_ca.ca_rddp, len, &got, &eof);
	else if (!rc)
		rc = nk_get_write(k, len, &got, &v);
	pthread_mutex_lock(&np->np_lock);
	if (!rc) {
		pc->pc_done = got;
		pc->pc_eof = eof;
		if (v) {
			if (np->np_verf_set && memcmp(v, np->np_verf, 8))
				np->np_verf_changed = true;
			memcpy(np->np_verf, v, 8);
			np->np_verf_set = true;
		}
	} else if (!np->np_err) {
		np->np_err = rc;
	}
	ps->ps_next = np->np_free;
	np->np_free = ps;
	np->np_inflight--;
	pthread_cond_broadcast(&np->np_cond);
	pthread_mutex_unlock(&np->np_lock);
}

/* Issue every piece with up to @depth in flight; wait for all. */
static int nfsc_pipe_run(struct nfsc_pipe *np, const struct rpcrdma_nfsc_fh *fh,
			 unsigned depth, uint32_t stable)
{
	uint64_t npieces = (np->np_len + np->np_piece_len - 1) / np->np_piece_len, i;
	struct nfsc_slot *slots;
	unsigned j;
	int rc = 0;

	slots = calloc(depth, sizeof(*slots));
	np->np_pieces = calloc(npieces ? npieces : 1, sizeof(*np->np_pieces));
	if (!slots || !np->np_pieces) {
		free(slots);
		return -ENOMEM;
	}
	pthread_mutex_init(&np->np_lock, NULL);
	pthread_cond_init(&np->np_cond, NULL);
	for (j = 0; j < depth; j++) {
		slots[j].ps_pipe = np;
		slots[j].ps_next = np->np_free;
		np->np_free = &slots[j];
	}
	for (i = 0; i < npieces; i++) {
		struct nfsc_slot *ps;
		struct nfsc_call *k;
		uint32_t len = piece_len(np, i);
		uint64_t off = np->np_offset + i * np->np_piece_len;

		pthread_mutex_lock(&np->np_lock);
		while (!np->np_free && !np->np_err)
			pthread_cond_wait(&np->np_cond, &np->np_lock);
		rc = np->np_err;
		ps = np->np_free;
		if (!rc) {
			np->np_free = ps->ps_next;
			np->np_inflight++;
		}
		pthread_mutex_unlock(&np->np_lock);
		if (rc)
			break;
		ps->ps_piece = i;
		k = &ps->ps_k;
		nk_begin(k, np->np_write ? NFSPROC3_WRITE : NFSPROC3_READ);
		if (np->np_write)
			nk_put_write(k, fh, off, np->np_buf + i * np->np_piece_len, len, stable);
		else
			nk_put_read(k, fh, off, np->np_buf + i * np->np_piece_len, len);
		rc = nk_args_done(np->np_nc, k);
		if (!rc)
			rc = rpcrdma_clnt_call_async(nk_route(np->np_nc, k), &k->nk_ca,
						     nfsc_pipe_done, ps, NULL);
		if (rc) {
			pthread_mutex_lock(&np->np_lock);
			np->np_inflight--;
			ps->ps_next = np->np_free;
			np->np_free = ps;
			if (!np->np_err)
				np->np_err = rc;
			pthread_mutex_unlock(&np->np_lock);
			break;
		}
	}
	pthread_mutex_lock(&np->np_lock);
	while (np->np_inflight)
		pthread_cond_wait(&np->np_cond, &np->np_lock);
	rc = np->np_err;
	pthread_mutex_unlock(&np->np_lock);
	pthread_mutex_destroy(&np->np_lock);
	pthread_cond_destroy(&np->np_cond);
	free(slots);
	return rc;
}

int rpcrdma_nfsc_read_pipelined(struct rpcrdma_nfsc *nc, const struct rpcrdma_nfsc_fh *fh,
				uint64_t offset, void *buf, uint64_t len, unsigned depth,
				uint64_t *nread)
{
	struct nfsc_pipe np = { .np_nc = nc, .np_offset = offset, .np_buf = buf,
				.np_len = len, .np_piece_len = nc->nc_rsize };
	uint64_t npieces = (len + nc->nc_rsize - 1) / nc->nc_rsize, i, total = 0;
	int rc;

	if (!depth || (len && !buf))
		return -EINVAL;
	rc = nfsc_pipe_run(&np, fh, depth, 0);
	/* Pieces in order: fill short reads, stop at end of file. */
	for (i = 0; !rc && i < npieces; i++) {
		struct nfsc_piece *pc = &np.np_pieces[i];
		uint32_t want = piece_len(&np, i), got;

		while (!rc && pc->pc_done < want && !pc->pc_eof) {
			rc = rpcrdma_nfsc_read(nc, fh, offset + i * nc->nc_rsize + pc->pc_done,
					       np.np_buf + i * nc->nc_rsize + pc->pc_done,
					       want - pc->pc_done, &got, &pc->pc_eof);
			if (!rc && !got && !pc->pc_eof)
				rc = -EIO;
			pc->pc_done += got;
		}
		total += pc->pc_done;
		if (pc->pc_done < want)
			break; /* end of file */
	}
	free(np.np_pieces);
	if (!rc)
		*nread = total;
	return rc;
}

int rpcrdma_nfsc_write_pipelined(struct rpcrdma_nfsc *nc, const struct rpcrdma_nfsc_fh *fh,
				 uint64_t offset, const void *buf, uint64_t len,
				 unsigned depth, uint32_t stable, uint8_t verf[8],
				 bool *verf_changed)
{
	struct nfsc_pipe np = { .np_nc = nc, .np_offset = offset, .np_buf = (uint8_t *)buf,
				.np_len = len, .np_piece_len = nc->nc_wsize, .np_write = true };
	uint64_t npieces = (len + nc->nc_wsize - 1) / nc->nc_wsize, i;
	uint8_t v[8];
	int rc;

	if (!depth || (len && !buf) || stable > 2)
		return -EINVAL;
	rc = nfsc_pipe_run(&np, fh, depth, stable);
	/* Short writes: send the rest of the piece synchronously. */
	for (i = 0; !rc && i < npieces; i++) {
		struct nfsc_piece *pc = &np.np_pieces[i];
		uint32_t want = piece_len(&np, i), wrote;

		while (!rc && pc->pc_done < want) {
			rc = rpcrdma_nfsc_write(nc, fh, offset + i * nc->nc_wsize + pc->pc_done,
						np.np_buf + i * nc->nc_wsize + pc->pc_done,
						want - pc->pc_done, stable, &wrote, v);
			if (!rc && !wrote)
				rc = -EIO;
			if (!rc && np.np_verf_set && memcmp(v, np.np_verf, 8))
				np.np_verf_changed = true;
			pc->pc_done += wrote;
		}
	}
	free(np.np_pieces);
	if (!rc) {
		if (verf)
			memcpy(verf, np.np_verf, 8);
		if (verf_changed)
			*verf_changed = np.np_verf_changed;
	}
	return rc;
}
