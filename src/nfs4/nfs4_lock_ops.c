// SPDX-License-Identifier: MIT
/*
 * nfs4_lock_ops.c - byte-range locks of NFSv4.1: LOCK (RFC 8881 18.10),
 * LOCKT (18.11), LOCKU (18.12).
 *
 * Each lock-owner's locks on a file are the kernel's open file
 * description locks (F_OFD_SETLK) on a descriptor of its own, kept with
 * its lock state (nfs4_state.c): the kernel splits and merges ranges,
 * finds conflicts between owners, and the locks conflict with those of
 * local processes and of NLM clients as well.  Freeing the lock state
 * (FREE_STATEID, or the client's end) closes the descriptor, which
 * releases what the owner still held.  Blocking types (READW_LT, WRITEW_LT)
 * are tried once: a conflict is NFS4ERR_DENIED and the client polls (no
 * CB_NOTIFY_LOCK without a backchannel).  A conflict with a courtesy
 * client's lock (its lease expired) expires that client and the lock is
 * tried once more (nfs4_state_revoke_file()).  LOCK asks nfs4_grace_gate()
 * first: a reclaim only in the grace period, anything else only outside
 * it (nfs4_recover.c); LOCKT is NFS4ERR_GRACE in it.  The owner in
 * LOCK4denied is not known to the kernel and is sent empty (clientid 0).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "nfs4_internal.h"

/* lock_range - offset4/length4 to a struct flock (RFC 8881 18.10.4). */
static uint32_t lock_range(uint32_t type, uint64_t offset, uint64_t length,
			   struct flock *fl)
{
	memset(fl, 0, sizeof(*fl));
	if (type < READ_LT || type > WRITEW_LT)
		return NFS4ERR_INVAL;
	if (length == 0 || (length != UINT64_MAX && length > UINT64_MAX - offset))
		return NFS4ERR_INVAL;
	if (offset > (uint64_t)INT64_MAX)
		return NFS4ERR_BAD_RANGE;
	fl->l_type = (type == READ_LT || type == READW_LT) ? F_RDLCK : F_WRLCK;
	fl->l_whence = SEEK_SET;
	fl->l_start = (off_t)offset;
	/* to the end of the file: all ones, or past what off_t holds */
	fl->l_len = length == UINT64_MAX || length > (uint64_t)INT64_MAX - offset ?
		    0 : (off_t)length;
	return NFS4_OK;
}

/* put_denied - LOCK4denied for the lock @fd's conflict test found. */
static void put_denied(struct rpcrdma_xdr *r, const struct flock *fl)
{
	rpcrdma_xdr_put_u64(r, (uint64_t)fl->l_start);
	rpcrdma_xdr_put_u64(r, fl->l_len == 0 ? UINT64_MAX : (uint64_t)fl->l_len);
	rpcrdma_xdr_put_u32(r, fl->l_type == F_WRLCK ? WRITE_LT : READ_LT);
	rpcrdma_xdr_put_u64(r, 0);
	rpcrdma_xdr_put_u32(r, 0);
}

/* conflict - the lock that keeps @want from @fd (F_OFD_GETLK). */
static uint32_t conflict(struct nfs4_compound *cp, int fd, const struct flock *want)
{
	struct flock fl = *want;

	fl.l_pid = 0;
	if (fcntl(fd, F_OFD_GETLK, &fl) < 0)
		return nfs4_errno(-errno);
	if (fl.l_type == F_UNLCK)
		return NFS4_OK;
	cp->cp_keep_body = true; /* LOCK4denied follows the status */
	put_denied(cp->cp_res, &fl);
	return NFS4ERR_DENIED;
}

/* owner_fd - a descriptor for a new lock-owner's locks (server identity:
 * the open state already stands for the caller's right to the file). */
static int owner_fd(int path_fd)
{
	char path[32];
	int fd;

	fs_cred_restore();
	fs_proc_path(path, sizeof(path), path_fd);
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		fd = open(path, O_RDONLY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
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
	struct flock fl;
	struct stat st_;
	int fd = -1, nfd = -1, rc;

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
	status = lock_range(type, offset, length, &fl);
	if (!status)
		status = nfs4_cur_file(cp, false, &local, &fe, &st_);
	if (status)
		goto out;
	if (new_owner) {
		nfd = owner_fd(fe->fe_path);
		if (nfd < 0) {
			status = nfs4_errno(nfd);
			goto out;
		}
		status = nfs4_lock_owner(st, cp->cp_clientid, &open_sid, owner, ownerlen,
					 cp->cp_cur.fh_data, cp->cp_cur.fh_len, &nfd,
					 &lock_sid, &access);
		if (status)
			goto out;
	}
	status = nfs4_lock_fd(st, cp->cp_clientid, &lock_sid, cp->cp_cur.fh_data,
			      cp->cp_cur.fh_len, &fd, &access);
	if (status)
		goto out;
	if (!(access & (fl.l_type == F_WRLCK ? OPEN4_SHARE_ACCESS_WRITE :
					       OPEN4_SHARE_ACCESS_READ))) {
		status = NFS4ERR_OPENMODE;
		goto out;
	}
	fl.l_pid = 0;
	rc = fcntl(fd, F_OFD_SETLK, &fl);
	if (rc < 0 && (errno == EAGAIN || errno == EACCES) &&
	    nfs4_state_revoke_file(st, cp->cp_clientid, st_.st_dev, st_.st_ino) > 0)
		/* courtesy clients held locks of the file: they are gone
		 * with all their state; once more (RFC 8881 8.3) */
		rc = fcntl(fd, F_OFD_SETLK, &fl);
	if (rc < 0) {
		if (errno == EAGAIN || errno == EACCES)
			status = conflict(cp, fd, &fl);
		else
			status = errno == EBADF ? NFS4ERR_OPENMODE :
			         errno == ENOLCK ? NFS4ERR_RESOURCE : nfs4_errno(-errno);
		if (status == NFS4_OK)
			status = NFS4ERR_DELAY; /* released meanwhile: try again */
		goto out;
	}
	status = nfs4_lock_bump(st, cp->cp_clientid, &lock_sid, &out);
	if (!status)
		nfs4_put_stateid(cp->cp_res, &out);
	if (!status && reclaim)
		nfs4_grace_note(cp, NFS4_REC_LOCK_RECLAIM);
out:
	fs_close_fd(nfd);
	fs_close_fd(fd);
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
	struct flock fl;
	struct stat st_;
	int fd = -1;

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
	status = lock_range(type, offset, length, &fl);
	if (!status)
		status = nfs4_cur_file(cp, false, &local, &fe, &st_);
	if (status)
		goto out;
	/* the owner's own locks do not conflict: test on its description */
	if (nfs4_lock_find_owner(cp->cp_srv->s4_state, cp->cp_clientid, owner,
				 ownerlen, cp->cp_cur.fh_data, cp->cp_cur.fh_len,
				 &fd) != NFS4_OK) {
		fd = owner_fd(fe->fe_path);
		if (fd < 0) {
			status = nfs4_errno(fd);
			fd = -1;
			goto out;
		}
	}
	status = conflict(cp, fd, &fl);
out:
	fs_close_fd(fd);
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
	struct flock fl;
	struct stat st_;
	int fd = -1;

	type = rpcrdma_xdr_get_u32(a);
	(void)rpcrdma_xdr_get_u32(a); /* seqid */
	nfs4_get_stateid(a, &sid);
	offset = rpcrdma_xdr_get_u64(a);
	length = rpcrdma_xdr_get_u64(a);
	if (!rpcrdma_xdr_ok(a))
		return NFS4ERR_BADXDR;
	status = lock_range(type, offset, length, &fl);
	if (!status)
		status = nfs4_cur_file(cp, false, &local, &fe, &st_);
	if (!status)
		status = nfs4_lock_fd(st, cp->cp_clientid, &sid, cp->cp_cur.fh_data,
				      cp->cp_cur.fh_len, &fd, &access);
	if (status)
		goto out;
	fl.l_type = F_UNLCK;
	fl.l_pid = 0;
	if (fcntl(fd, F_OFD_SETLK, &fl) < 0) {
		status = nfs4_errno(-errno);
		goto out;
	}
	status = nfs4_lock_bump(st, cp->cp_clientid, &sid, &out);
	if (!status)
		nfs4_put_stateid(cp->cp_res, &out);
out:
	fs_close_fd(fd);
	fs_fcache_put(fe);
	return status;
}
