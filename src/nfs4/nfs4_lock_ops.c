// SPDX-License-Identifier: MIT
/*
 * nfs4_lock_ops.c - byte-range locks of NFSv4.1: LOCK (RFC 8881 18.10),
 * LOCKT (18.11), LOCKU (18.12).
 *
 * Each lock-owner's locks on a file belong to a description of the file
 * of its own (struct fs_lockd, fs_lock_open(): on the posix backend an
 * open file description and its OFD locks), kept with its lock state
 * (nfs4_state.c): the layer's lock table splits and merges ranges, finds
 * conflicts between owners, and the locks conflict with those of local
 * processes and of NLM clients as well.  Freeing the lock state
 * (FREE_STATEID, or the client's end) closes the description, which
 * releases what the owner still held.  Blocking types (READW_LT, WRITEW_LT)
 * are tried once: a conflict is NFS4ERR_DENIED and the client polls (no
 * CB_NOTIFY_LOCK without a backchannel).  A conflict with a courtesy
 * client's lock (its lease expired) expires that client and the lock is
 * tried once more (nfs4_state_revoke_file()).  LOCK asks nfs4_grace_gate()
 * first: a reclaim only in the grace period, anything else only outside
 * it (nfs4_recover.c); LOCKT is NFS4ERR_GRACE in it.  The owner in
 * LOCK4denied is not known to the lock table and is sent empty (clientid 0).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>

#include "nfs4_internal.h"

/* A byte range to lock, test or unlock (fs_lock()). */
struct lock_req {
	int lr_type;        /* F_RDLCK, F_WRLCK */
	uint64_t lr_start;
	uint64_t lr_len;    /* 0: to the end of the file */
};

/* lock_range - offset4/length4 to a range (RFC 8881 18.10.4). */
static uint32_t lock_range(uint32_t type, uint64_t offset, uint64_t length,
			   struct lock_req *lr)
{
	memset(lr, 0, sizeof(*lr));
	if (type < READ_LT || type > WRITEW_LT)
		return NFS4ERR_INVAL;
	if (length == 0 || (length != UINT64_MAX && length > UINT64_MAX - offset))
		return NFS4ERR_INVAL;
	if (offset > (uint64_t)INT64_MAX)
		return NFS4ERR_BAD_RANGE;
	lr->lr_type = (type == READ_LT || type == READW_LT) ? F_RDLCK : F_WRLCK;
	lr->lr_start = offset;
	/* to the end of the file: all ones, or past what off_t holds */
	lr->lr_len = length == UINT64_MAX || length > (uint64_t)INT64_MAX - offset ?
		     0 : length;
	return NFS4_OK;
}

/* put_denied - LOCK4denied for the conflicting lock @cf. */
static void put_denied(struct rpcrdma_xdr *r, const struct fs_lock_conflict *cf)
{
	rpcrdma_xdr_put_u64(r, cf->cf_start);
	rpcrdma_xdr_put_u64(r, cf->cf_len == 0 ? UINT64_MAX : cf->cf_len);
	rpcrdma_xdr_put_u32(r, cf->cf_type == F_WRLCK ? WRITE_LT : READ_LT);
	rpcrdma_xdr_put_u64(r, 0);
	rpcrdma_xdr_put_u32(r, 0);
}

/* denied - NFS4ERR_DENIED with LOCK4denied of @cf, or NFS4ERR_DELAY when
 * no lock is named (F_UNLCK: released meanwhile, try again). */
static uint32_t denied(struct nfs4_compound *cp, const struct fs_lock_conflict *cf)
{
	if (cf->cf_type != F_RDLCK && cf->cf_type != F_WRLCK)
		return NFS4ERR_DELAY;
	cp->cp_keep_body = true; /* LOCK4denied follows the status */
	put_denied(cp->cp_res, cf);
	return NFS4ERR_DENIED;
}

/* no_lockd - a struct fs_lockd that holds nothing. */
static void no_lockd(struct fs_lockd *ld)
{
	*ld = (struct fs_lockd){ .ld_be = NULL, .ld_fd = -1 };
}

/* owner_open - a description of @fe for a new lock-owner's locks
 * (fs_lock_open(): server identity, as the open state already stands for
 * the caller's right to the file).  Return: NFS4_OK or its error. */
static uint32_t owner_open(struct nfs4_compound *cp, struct fs_fentry *fe,
			   struct fs_lockd *ld)
{
	int acc, err = fs_lock_open(&cp->cp_c, fe, ld, &acc);

	if (err) {
		no_lockd(ld);
		return nfs4_errno(err);
	}
	return NFS4_OK;
}

uint32_t nfs4_op_lock(struct nfs4_compound *cp)
{
	struct rpcrdma_xdr *a = cp->cp_args;
	struct nfs4_state *st = cp->cp_srv->s4_state;
	struct fs_fentry local, *fe = NULL;
	struct nfs4_stateid open_sid, lock_sid, out;
	const uint8_t *owner = NULL;
	uint32_t type, ownerlen = 0, access = 0, status;
	uint64_t offset, length;
	bool reclaim, new_owner;
	struct fs_lock_conflict cf;
	struct fs_lockd ld, nld;
	struct lock_req lr;
	struct stat st_;
	int rc, trc;

	no_lockd(&ld);
	no_lockd(&nld);
	type = rpcrdma_xdr_get_u32(a);
	reclaim = rpcrdma_xdr_get_bool(a);
	offset = rpcrdma_xdr_get_u64(a);
	length = rpcrdma_xdr_get_u64(a);
	new_owner = rpcrdma_xdr_get_bool(a);
	if (new_owner) {
		(void)rpcrdma_xdr_get_u32(a);        /* open_seqid */
		nfs4_get_stateid(a, &open_sid);
		(void)rpcrdma_xdr_get_u32(a);        /* lock_seqid */
		(void)rpcrdma_xdr_get_u64(a);        /* the session's clientid */
		owner = rpcrdma_xdr_get_opaque(a, NFS4_OPAQUE_LIMIT, &ownerlen);
	} else {
		nfs4_get_stateid(a, &lock_sid);
		(void)rpcrdma_xdr_get_u32(a);        /* lock_seqid */
	}
	if (!rpcrdma_xdr_ok(a))
		return NFS4ERR_BADXDR;
	status = nfs4_grace_gate(cp, reclaim);
	if (status)
		return status;
	status = lock_range(type, offset, length, &lr);
	if (!status)
		status = nfs4_cur_file(cp, false, &local, &fe, &st_);
	if (status)
		goto out;
	if (new_owner) {
		status = owner_open(cp, fe, &nld);
		if (!status)
			status = nfs4_lock_owner(st, cp->cp_clientid, &open_sid, owner,
						 ownerlen, cp->cp_cur.fh_data,
						 cp->cp_cur.fh_len, st_.st_dev, st_.st_ino,
						 &nld, &lock_sid, &access);
		if (status)
			goto out;
	}
	status = nfs4_lock_get(st, cp->cp_clientid, &lock_sid, cp->cp_cur.fh_data,
			       cp->cp_cur.fh_len, &ld, &access);
	if (status)
		goto out;
	if (!(access & (lr.lr_type == F_WRLCK ? OPEN4_SHARE_ACCESS_WRITE :
						OPEN4_SHARE_ACCESS_READ))) {
		status = NFS4ERR_OPENMODE;
		goto out;
	}
	/* the conflict is asked for only once the lock is refused for good */
	rc = fs_lock(&ld, lr.lr_type, lr.lr_start, lr.lr_len, false, NULL);
	if (rc == -EAGAIN) {
		if (nfs4_state_revoke_file(st, cp->cp_clientid, st_.st_dev, st_.st_ino) > 0)
			/* courtesy clients held locks of the file: they are
			 * gone with all their state; once more (RFC 8881 8.3) */
			rc = fs_lock(&ld, lr.lr_type, lr.lr_start, lr.lr_len, false, &cf);
		else if ((trc = fs_lock(&ld, lr.lr_type, lr.lr_start, lr.lr_len, true,
					&cf)) == 0)
			cf.cf_type = F_UNLCK; /* released meanwhile */
		else if (trc != -EAGAIN)
			rc = trc;
	}
	if (rc < 0) {
		status = rc == -EAGAIN ? denied(cp, &cf) :
			 rc == -EBADF ? NFS4ERR_OPENMODE :
			 rc == -ENOLCK ? NFS4ERR_RESOURCE : nfs4_errno(rc);
		goto out;
	}
	status = nfs4_lock_bump(st, cp->cp_clientid, &lock_sid, &out);
	if (!status)
		nfs4_put_stateid(cp->cp_res, &out);
	if (!status && reclaim)
		nfs4_grace_note(cp, NFS4_REC_LOCK_RECLAIM);
out:
	fs_lock_close(&nld);
	fs_lock_close(&ld);
	fs_fcache_put(fe);
	return status;
}

uint32_t nfs4_op_lockt(struct nfs4_compound *cp)
{
	struct rpcrdma_xdr *a = cp->cp_args;
	struct fs_fentry local, *fe = NULL;
	uint32_t type, ownerlen, status;
	const uint8_t *owner;
	uint64_t offset, length;
	struct fs_lock_conflict cf;
	struct fs_lockd ld;
	struct lock_req lr;
	struct stat st_;
	int rc;

	no_lockd(&ld);
	type = rpcrdma_xdr_get_u32(a);
	offset = rpcrdma_xdr_get_u64(a);
	length = rpcrdma_xdr_get_u64(a);
	(void)rpcrdma_xdr_get_u64(a);
	owner = rpcrdma_xdr_get_opaque(a, NFS4_OPAQUE_LIMIT, &ownerlen);
	if (!rpcrdma_xdr_ok(a))
		return NFS4ERR_BADXDR;
	/* a test during the grace period could miss a lock yet to be
	 * reclaimed (RFC 8881 18.11.4) */
	if (nfs4_recover_in_grace(cp->cp_srv->s4_recover, nfs4_mono_sec()))
		return NFS4ERR_GRACE;
	status = nfs4_grace_cluster(cp); /* ... or one another gateway is to reclaim */
	if (status)
		return status;
	status = lock_range(type, offset, length, &lr);
	if (!status)
		status = nfs4_cur_file(cp, false, &local, &fe, &st_);
	if (status)
		goto out;
	/* the owner's own locks do not conflict: test on its description */
	if (nfs4_lock_find_owner(cp->cp_srv->s4_state, cp->cp_clientid, owner,
				 ownerlen, cp->cp_cur.fh_data, cp->cp_cur.fh_len,
				 &ld) != NFS4_OK) {
		status = owner_open(cp, fe, &ld);
		if (status)
			goto out;
	}
	rc = fs_lock(&ld, lr.lr_type, lr.lr_start, lr.lr_len, true, &cf);
	status = rc == 0 ? NFS4_OK : rc == -EAGAIN ? denied(cp, &cf) : nfs4_errno(rc);
out:
	fs_lock_close(&ld);
	fs_fcache_put(fe);
	return status;
}

uint32_t nfs4_op_locku(struct nfs4_compound *cp)
{
	struct rpcrdma_xdr *a = cp->cp_args;
	struct nfs4_state *st = cp->cp_srv->s4_state;
	struct fs_fentry local, *fe = NULL;
	struct nfs4_stateid sid, out;
	uint32_t type, status, access;
	uint64_t offset, length;
	struct fs_lock_conflict cf;
	struct fs_lockd ld;
	struct lock_req lr;
	struct stat st_;
	int rc;

	no_lockd(&ld);
	type = rpcrdma_xdr_get_u32(a);
	(void)rpcrdma_xdr_get_u32(a); /* seqid */
	nfs4_get_stateid(a, &sid);
	offset = rpcrdma_xdr_get_u64(a);
	length = rpcrdma_xdr_get_u64(a);
	if (!rpcrdma_xdr_ok(a))
		return NFS4ERR_BADXDR;
	status = lock_range(type, offset, length, &lr);
	if (!status)
		status = nfs4_cur_file(cp, false, &local, &fe, &st_);
	if (!status)
		status = nfs4_lock_get(st, cp->cp_clientid, &sid, cp->cp_cur.fh_data,
				       cp->cp_cur.fh_len, &ld, &access);
	if (status)
		goto out;
	rc = fs_lock(&ld, F_UNLCK, lr.lr_start, lr.lr_len, false, &cf);
	if (rc < 0) {
		status = nfs4_errno(rc);
		goto out;
	}
	status = nfs4_lock_bump(st, cp->cp_clientid, &sid, &out);
	if (!status)
		nfs4_put_stateid(cp->cp_res, &out);
out:
	fs_lock_close(&ld);
	fs_fcache_put(fe);
	return status;
}
