// SPDX-License-Identifier: MIT
/*
 * nfs4_compound.c - the NFSv4 program (RFC 8881 16): NULL and COMPOUND.
 *
 * COMPOUND4args is decoded one operation at a time: the header first
 * (tag at most NFS4_TAG_MAX bytes, minor version 1, at most
 * NFS4_COMPOUND_MAX_OPS operations), then each operation's number and
 * arguments just before it runs; arguments that do not decode end the
 * COMPOUND with NFS4ERR_BADXDR for that operation.  An operation number
 * outside the protocol is NFS4ERR_OP_ILLEGAL (answered as OP_ILLEGAL); a
 * known operation the server does not implement is NFS4ERR_NOTSUPP.
 *
 * Sessions (RFC 8881 2.10.6): SEQUENCE must come first, except
 * EXCHANGE_ID, CREATE_SESSION, DESTROY_SESSION, DESTROY_CLIENTID and
 * BIND_CONN_TO_SESSION alone (NFS4ERR_NOT_ONLY_OP otherwise); any other
 * first operation is NFS4ERR_OP_NOT_IN_SESSION, and a SEQUENCE further on
 * is NFS4ERR_SEQUENCE_POS.  The whole COMPOUND4res of a request that held
 * a slot is kept in the slot when it fits NFS4_SLOT_CACHE_BYTES and moved
 * no data by RDMA (a READ's Write chunk); a retry gets it back byte for
 * byte, or NFS4ERR_RETRY_UNCACHED_REP after the SEQUENCE result.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "common/be.h"
#include "nfs4_cb.h"
#include "nfs4_deleg.h"
#include "nfs4_internal.h"

uint32_t nfs4_compound_decode_header(struct rpcrdma_xdr *args,
				     struct nfs4_compound_hdr *h)
{
	memset(h, 0, sizeof(*h));
	h->ch_tag = rpcrdma_xdr_get_opaque(args, NFS4_TAG_MAX, &h->ch_taglen);
	if (!rpcrdma_xdr_ok(args)) {
		h->ch_tag = NULL;
		h->ch_taglen = 0;
		return NFS4ERR_BADXDR;
	}
	h->ch_minor = rpcrdma_xdr_get_u32(args);
	h->ch_nops = rpcrdma_xdr_get_u32(args);
	if (!rpcrdma_xdr_ok(args))
		return NFS4ERR_BADXDR;
	if (h->ch_minor != NFS4_MINOR_VERSION)
		return NFS4ERR_MINOR_VERS_MISMATCH;
	if (h->ch_nops > NFS4_COMPOUND_MAX_OPS)
		return NFS4ERR_TOO_MANY_OPS;
	return NFS4_OK;
}

static uint32_t op_notsupp(struct nfs4_compound *cp)
{
	(void)cp;
	return NFS4ERR_NOTSUPP;
}

/* The operations served; every other one in range is NFS4ERR_NOTSUPP. */
static nfs4_op_fn op_table(uint32_t op)
{
	switch (op) {
	case OP_ACCESS: return nfs4_op_access;
	case OP_CLOSE: return nfs4_op_close;
	case OP_COMMIT: return nfs4_op_commit;
	case OP_CREATE: return nfs4_op_create;
	case OP_DELEGRETURN: return nfs4_op_delegreturn;
	case OP_GETATTR: return nfs4_op_getattr;
	case OP_GETFH: return nfs4_op_getfh;
	case OP_LINK: return nfs4_op_link;
	case OP_LOCK: return nfs4_op_lock;
	case OP_LOCKT: return nfs4_op_lockt;
	case OP_LOCKU: return nfs4_op_locku;
	case OP_LOOKUP: return nfs4_op_lookup;
	case OP_LOOKUPP: return nfs4_op_lookupp;
	case OP_OPEN: return nfs4_op_open;
	case OP_OPEN_DOWNGRADE: return nfs4_op_open_downgrade;
	case OP_PUTFH: return nfs4_op_putfh;
	case OP_PUTROOTFH: return nfs4_op_putrootfh;
	case OP_READ: return nfs4_op_read;
	case OP_READDIR: return nfs4_op_readdir;
	case OP_READLINK: return nfs4_op_readlink;
	case OP_REMOVE: return nfs4_op_remove;
	case OP_RENAME: return nfs4_op_rename;
	case OP_RESTOREFH: return nfs4_op_restorefh;
	case OP_SAVEFH: return nfs4_op_savefh;
	case OP_SETATTR: return nfs4_op_setattr;
	case OP_WRITE: return nfs4_op_write;
	case OP_BIND_CONN_TO_SESSION: return nfs4_op_bind_conn;
	case OP_EXCHANGE_ID: return nfs4_op_exchange_id;
	case OP_CREATE_SESSION: return nfs4_op_create_session;
	case OP_DESTROY_SESSION: return nfs4_op_destroy_session;
	case OP_FREE_STATEID: return nfs4_op_free_stateid;
	case OP_SECINFO_NO_NAME: return nfs4_op_secinfo_no_name;
	case OP_TEST_STATEID: return nfs4_op_test_stateid;
	case OP_DESTROY_CLIENTID: return nfs4_op_destroy_clientid;
	case OP_RECLAIM_COMPLETE: return nfs4_op_reclaim_complete;
	default: return op_notsupp;
	}
}

/* Operations that may open a COMPOUND without SEQUENCE, alone. */
static bool op_sessionless(uint32_t op)
{
	return op == OP_EXCHANGE_ID || op == OP_CREATE_SESSION ||
	       op == OP_DESTROY_SESSION || op == OP_DESTROY_CLIENTID ||
	       op == OP_BIND_CONN_TO_SESSION;
}

/* Internal result of SEQUENCE: the reply is a retry's, already in place. */
#define NFS4_REPLAYED 0xffffffffu

/*
 * op_sequence - SEQUENCE (RFC 8881 18.46).  On a retry the slot's reply
 * replaces everything encoded so far (NFS4_REPLAYED), or the SEQUENCE
 * result is followed by NFS4ERR_RETRY_UNCACHED_REP.
 */
static uint32_t op_sequence(struct nfs4_compound *cp, size_t res_start,
			    size_t res_cap, uint32_t nops, uint8_t *replay_buf)
{
	struct rpcrdma_xdr *a = cp->cp_args, *r = cp->cp_res;
	const uint8_t *sid;
	uint32_t seqid, slot, highest, status;
	struct nfs4_seq_res sr = { .sr_replay_buf = replay_buf };
	struct nfs4_who who;

	sid = rpcrdma_xdr_get_fixed(a, NFS4_SESSIONID_SIZE);
	seqid = rpcrdma_xdr_get_u32(a);
	slot = rpcrdma_xdr_get_u32(a);
	highest = rpcrdma_xdr_get_u32(a);
	(void)rpcrdma_xdr_get_bool(a); /* sa_cachethis: every reply that fits is kept */
	if (!rpcrdma_xdr_ok(a))
		return NFS4ERR_BADXDR;
	/* A result that cannot fit is answered before the slot is touched
	 * (its sequence id and reply stay; the lease is not renewed): the
	 * same request sent again with room is then served, not taken for
	 * a retry of this error (RFC 8881 18.46.3) */
	if (rpcrdma_xdr_remaining(r) < NFS4_SESSIONID_SIZE + 5 * 4)
		return NFS4ERR_REP_TOO_BIG;
	nfs4_who_of(cp, &who);
	status = nfs4_sequence_as(cp->cp_srv->s4_state, &who, sid, seqid, slot, highest,
			       nops, &sr);
	if (status)
		return status;
	if (sr.sr_replay && !sr.sr_uncached) {
		/* the whole buffer: the reply was kept whole when it fitted it */
		r->xs_len = res_cap;
		r->xs_pos = res_start;
		rpcrdma_xdr_put_fixed(r, replay_buf, sr.sr_replay_len);
		return NFS4_REPLAYED;
	}
	/* RFC 8881 18.46.3: the callback path's state, as it is */
	sr.sr_status_flags |= nfs4_cb_seq_flags(cp->cp_srv->s4_cb, sid, sr.sr_clientid);
	if (nfs4_deleg_revoked(cp->cp_srv->s4_deleg, sr.sr_clientid))
		sr.sr_status_flags |= SEQ4_STATUS_RECALLABLE_STATE_REVOKED;
	memcpy(cp->cp_sid, sid, NFS4_SESSIONID_SIZE);
	cp->cp_session = sr.sr_session;
	cp->cp_slot = sr.sr_slot;
	cp->cp_clientid = sr.sr_clientid;
	rpcrdma_xdr_put_fixed(r, sid, NFS4_SESSIONID_SIZE);
	rpcrdma_xdr_put_u32(r, seqid);
	rpcrdma_xdr_put_u32(r, sr.sr_slot);
	rpcrdma_xdr_put_u32(r, sr.sr_highest_slotid);
	rpcrdma_xdr_put_u32(r, sr.sr_target_highest_slotid);
	rpcrdma_xdr_put_u32(r, sr.sr_status_flags);
	if (sr.sr_replay)
		return nops > 1 ? NFS4ERR_RETRY_UNCACHED_REP : NFS4ERR_SEQ_FALSE_RETRY;
	return NFS4_OK;
}

/*
 * nfs4_compound - serve a COMPOUND; its result goes to cp_res.
 * Return: the COMPOUND's status.
 */
static uint32_t nfs4_compound(struct nfs4_compound *cp)
{
	struct rpcrdma_xdr *a = cp->cp_args, *r = cp->cp_res;
	static __thread uint8_t replay_buf[NFS4_SLOT_CACHE_BYTES];
	struct nfs4_compound_hdr h;
	size_t res_start = r->xs_pos, res_cap = r->xs_len, body, statpos;
	uint8_t *stp, *cntp;
	uint32_t status, n = 0, op = 0;

	status = nfs4_compound_decode_header(a, &h);
	stp = rpcrdma_xdr_reserve(r, 4);
	rpcrdma_xdr_put_opaque(r, h.ch_tag, h.ch_taglen);
	cntp = rpcrdma_xdr_reserve(r, 4);
	if (!stp || !cntp)
		return NFS4ERR_RESOURCE;
	for (uint32_t i = 0; status == NFS4_OK && i < h.ch_nops; i++) {
		uint32_t uncached = 0;

		cp->cp_opidx = i;
		cp->cp_keep_body = false;
		op = rpcrdma_xdr_get_u32(a);
		if (!rpcrdma_xdr_ok(a)) {
			status = NFS4ERR_BADXDR;
			break;
		}
		if (op < NFS4_OP_FIRST || op > NFS4_OP_LAST)
			op = OP_ILLEGAL;
		if (rpcrdma_xdr_remaining(r) < 2 * 4) {
			/* Only the first operation can meet a buffer without
			 * room for its number and status (every later one has
			 * what the one before held back): the reply cannot
			 * say which operation failed. */
			r->xs_err = true;
			return NFS4ERR_RESOURCE;
		}
		rpcrdma_xdr_put_u32(r, op);
		statpos = r->xs_pos;
		rpcrdma_xdr_reserve(r, 4);
		body = r->xs_pos;
		/*
		 * An operation that is not the last one encodes its result
		 * short of the buffer's end by the next operation's number
		 * and status, so that a next operation that does not fit
		 * can always be answered in place with NFS4ERR_REP_TOO_BIG
		 * (RFC 8881 2.10.6.4; NFS4ERR_RESOURCE before a session),
		 * and no status is ever stored past the buffer.
		 */
		if (i + 1 < h.ch_nops)
			r->xs_len = res_cap - body >= 2 * 4 ? res_cap - 2 * 4 : body;
		if (op == OP_ILLEGAL) {
			status = NFS4ERR_OP_ILLEGAL;
		} else if (i == 0 && op != OP_SEQUENCE && !op_sessionless(op)) {
			status = NFS4ERR_OP_NOT_IN_SESSION;
		} else if (i == 0 && op_sessionless(op) && h.ch_nops != 1) {
			status = NFS4ERR_NOT_ONLY_OP;
		} else if (op == OP_SEQUENCE) {
			if (i != 0) {
				status = NFS4ERR_SEQUENCE_POS;
			} else {
				status = op_sequence(cp, res_start, res_cap, h.ch_nops,
						     replay_buf);
				if (status == NFS4_REPLAYED) {
					r->xs_len = res_cap;
					return load_be32(r->xs_base + res_start);
				}
				if (status == NFS4ERR_RETRY_UNCACHED_REP) {
					/* SEQUENCE itself succeeded */
					uncached = status;
					status = NFS4_OK;
				}
			}
		} else if (op_sessionless(op) && op != OP_DESTROY_SESSION &&
			   i != 0) {
			status = NFS4ERR_NOT_ONLY_OP;
		} else {
			status = op_table(op)(cp);
		}
		r->xs_len = res_cap;
		if (!rpcrdma_xdr_ok(r)) {
			r->xs_err = false;
			r->xs_pos = body;
			status = cp->cp_session ? NFS4ERR_REP_TOO_BIG : NFS4ERR_RESOURCE;
		} else if (status && !cp->cp_keep_body) {
			r->xs_pos = body;
		}
		if (!rpcrdma_xdr_ok(a) && status == NFS4_OK)
			status = NFS4ERR_BADXDR;
		store_be32(r->xs_base + statpos, status);
		n++;
		if (uncached && status == NFS4_OK) {
			/* the request after SEQUENCE, answered for all of it */
			uint32_t next = rpcrdma_xdr_get_u32(a);

			rpcrdma_xdr_put_u32(r, rpcrdma_xdr_ok(a) && next >= NFS4_OP_FIRST &&
					    next <= NFS4_OP_LAST ? next : OP_ILLEGAL);
			rpcrdma_xdr_put_u32(r, uncached);
			n++;
			status = uncached;
		}
	}
	store_be32(stp, status);
	store_be32(cntp, n);
	return status;
}

static void compound_end(struct nfs4_compound *cp, size_t res_start)
{
	struct rpcrdma_xdr *r = cp->cp_res;
	bool keep = rpcrdma_xdr_ok(r) && !cp->cp_req->rq_ddp &&
		    r->xs_pos - res_start <= NFS4_SLOT_CACHE_BYTES;

	nfs4_sequence_done(cp->cp_srv->s4_state, cp->cp_session, cp->cp_slot,
			   keep ? r->xs_base + res_start : NULL,
			   (uint32_t)(r->xs_pos - res_start));
	cp->cp_session = NULL;
}

int rpcrdma_nfs4_server_dispatch(struct rpcrdma_svc_req *req, void *arg)
{
	struct rpcrdma_nfs4_server *srv = arg;
	struct nfs4_compound cp;
	size_t res_start;
	uint32_t status;

	if (req->rq_msg.rm_vers != RPCRDMA_NFS4_VERSION)
		return RPCRDMA_SVC_PROG_MISMATCH;
	if (req->rq_msg.rm_proc == 0)
		return RPCRDMA_SVC_SUCCESS;
	if (req->rq_msg.rm_proc != 1)
		return RPCRDMA_SVC_PROC_UNAVAIL;
	memset(&cp, 0, sizeof(cp));
	cp.cp_srv = srv;
	cp.cp_req = req;
	cp.cp_args = &req->rq_args;
	cp.cp_res = &req->rq_res;
	cp.cp_snap = fs_snap_get(srv->s4_nfs3);
	if (req->rq_transport) {
		/* decided before SEQUENCE touches its slot (nfs4_transport.c) */
		if (!nfs4_transport_ok(cp.cp_snap, req)) {
			fs_snap_put(cp.cp_snap);
			atomic_fetch_add_explicit(&srv->s4_transport_defers, 1,
						  memory_order_relaxed);
			return RPCRDMA_SVC_DEFER;
		}
		atomic_fetch_add_explicit(&srv->s4_transport_calls, 1, memory_order_relaxed);
		fs_cred_freeze(true);
	}
	res_start = req->rq_res.xs_pos;
	status = nfs4_compound(&cp);
	if (req->rq_transport) {
		/* a pending record flush is left to the worker that made it */
		fs_cred_freeze(false);
	} else if (nfs4_recover_pending(srv->s4_recover)) {
		/* the client records on disk before the reply that made them
		 * (an OPEN, RECLAIM_COMPLETE) is sent, as the server */
		fs_cred_restore();
		(void)nfs4_recover_flush(srv->s4_recover);
	}
	compound_end(&cp, res_start);
	fs_snap_put(cp.cp_snap);
	if (!rpcrdma_xdr_ok(&req->rq_res))
		return RPCRDMA_SVC_SYSTEM_ERR;
	rpcrdma_svc_req_set_status(req, status);
	if (srv->s4_verbose > 1)
		fprintf(srv->s4_log, "nfs4: xid %08x COMPOUND -> %u\n",
			req->rq_msg.rm_xid, status);
	return RPCRDMA_SVC_SUCCESS;
}

const char *const *rpcrdma_nfs4_proc_names(uint32_t *n)
{
	static const char *const names[] = { "NULL", "COMPOUND" };

	*n = 2;
	return names;
}

int rpcrdma_nfs4_server_stats(struct rpcrdma_nfs4_server *srv,
			      struct rpcrdma_nfs4_stats *out)
{
	if (!srv || !out)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	out->n4s_transport_calls = atomic_load(&srv->s4_transport_calls);
	out->n4s_transport_defers = atomic_load(&srv->s4_transport_defers);
	if (srv->s4_state) {
		struct nfs4_state_counts sc;

		nfs4_state_counts(srv->s4_state, &sc);
		out->n4s_clid_inuse = sc.sc_clid_inuse;
		out->n4s_wrong_cred = sc.sc_wrong_cred;
		out->n4s_conn_unbound = sc.sc_conn_unbound;
		out->n4s_false_retries = sc.sc_false_retries;
	}
	return 0;
}
