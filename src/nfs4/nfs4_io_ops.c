// SPDX-License-Identifier: MIT
/*
 * nfs4_io_ops.c - OPEN (RFC 8881 18.16), CLOSE (18.2), OPEN_DOWNGRADE
 * (18.18), READ (18.22), WRITE (18.32), COMMIT (18.3).
 *
 * OPEN creates with the caller's identity (fs_create(): the mode the
 * client sent is the file's, as NFSv3 CREATE's) and records an open state
 * per open-owner and file; share reservations hold between NFSv4 opens,
 * and through the layer's table (nfs4_share.c) against NLM SHARE and,
 * where the backend carries them (be_share), other servers of the same
 * storage (not against NFSv3 or local access), and no delegation is ever granted
 * (OPEN_DELEGATE_NONE).  EXCLUSIVE4 and EXCLUSIVE4_1 keep the verifier in
 * the new file's atime and mtime seconds, as knfsd does, so a retried
 * create finds it; the reply's attrset names time_access and time_modify
 * (RFC 8881 18.16.4: the attributes that hold the verifier), so the client
 * sets them next (Linux sends that SETATTR only for what attrset names).
 * READ data goes into the Write chunk when the client gave one (RFC 8267
 * DDP), as NFSv3's READ does.
 *
 * On a sync export entry on a disk an OPEN that made a file commits its
 * directory, one that truncated an existing file the file, before the
 * reply (fs_commit.c).  WRITE with DATA_SYNC4 or FILE_SYNC4 syncs the
 * data (fdatasync, fsync) and answers the level it reached; COMMIT
 * fsyncs the file; both whatever the export's sync option.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "common/be.h"
#include "nfs4_deleg.h"
#include "nfs4_internal.h"

/* may_open - the caller's right to open file @fe (attributes @st) for
 * @access: one access check of both rights (fs_access()). */
static int may_open(struct nfs4_compound *cp, struct fs_fentry *fe,
		    const struct stat *st, uint32_t access)
{
	struct fs_call *c = &cp->cp_c;
	int mode = 0, err;

	if (access & OPEN4_SHARE_ACCESS_READ)
		mode |= R_OK;
	if (access & OPEN4_SHARE_ACCESS_WRITE)
		mode |= W_OK;
	err = fs_access(c, fe, st, mode);
	if (err != -EACCES)
		return err;
	/* knfsd's override: the owner opens its own file whatever the mode */
	if (c->c_as_caller && c->c_cred.cr_uid == st->st_uid)
		return 0;
	return -EACCES;
}

/* type_status - OPEN of an object of type @mode that is not a regular
 * file: NFS4ERR_ISDIR, NFS4ERR_SYMLINK, else @other. */
static uint32_t type_status(mode_t mode, uint32_t other)
{
	return S_ISDIR(mode) ? NFS4ERR_ISDIR : S_ISLNK(mode) ? NFS4ERR_SYMLINK : other;
}

/* excl_matches - does @st carry the verifier @verf (atime, mtime seconds)? */
static bool excl_matches(const struct stat *st, const uint8_t *verf)
{
	return (uint32_t)st->st_atim.tv_sec == load_be32(verf) &&
	       (uint32_t)st->st_mtim.tv_sec == load_be32(verf + 4);
}

/*
 * verf_attrset - mark in @attrset the attributes an exclusive create keeps
 * its verifier in, time_access and time_modify (RFC 8881 18.16.4: the
 * client then sets them with a SETATTR; a client that is not told so
 * leaves the verifier in the times, which a WRITE does not replace on
 * every backend: CephFS moves mtime only forward on a write).
 */
static void verf_attrset(uint32_t attrset[NFS4_BITMAP_WORDS])
{
	attrset[FATTR4_TIME_ACCESS / 32] |= 1u << (FATTR4_TIME_ACCESS % 32);
	attrset[FATTR4_TIME_MODIFY / 32] |= 1u << (FATTR4_TIME_MODIFY % 32);
}

struct open_args {
	uint32_t oa_access, oa_deny;
	uint32_t oa_want;        /* OPEN4_SHARE_ACCESS_WANT_* bits */
	bool oa_deleg_cur;       /* CLAIM_DELEGATE_CUR / CLAIM_DELEG_CUR_FH */
	struct nfs4_stateid oa_deleg;
	const uint8_t *oa_owner;
	uint32_t oa_ownerlen;
	uint32_t oa_opentype, oa_createmode;
	const uint8_t *oa_verf;
	struct nfs4_sattr oa_sa;
	uint32_t oa_claim;
	struct fs_name oa_name;
};

static uint32_t open_decode(struct rpcrdma_xdr *a, struct open_args *o)
{
	uint32_t status = NFS4_OK;

	o->oa_deleg_cur = false; /* set by the CLAIM_DELEG_CUR* arms only */
	memset(&o->oa_deleg, 0, sizeof(o->oa_deleg));
	(void)rpcrdma_xdr_get_u32(a); /* seqid: not used in 4.1 */
	o->oa_access = rpcrdma_xdr_get_u32(a);
	o->oa_deny = rpcrdma_xdr_get_u32(a);
	(void)rpcrdma_xdr_get_u64(a); /* the owner's clientid: the session's */
	o->oa_owner = rpcrdma_xdr_get_opaque(a, NFS4_OPAQUE_LIMIT, &o->oa_ownerlen);
	o->oa_opentype = rpcrdma_xdr_get_u32(a);
	memset(&o->oa_sa, 0, sizeof(o->oa_sa));
	if (o->oa_opentype == OPEN4_CREATE) {
		o->oa_createmode = rpcrdma_xdr_get_u32(a);
		switch (o->oa_createmode) {
		case UNCHECKED4:
		case GUARDED4:
			status = nfs4_decode_sattr(a, &o->oa_sa);
			break;
		case EXCLUSIVE4:
			o->oa_verf = rpcrdma_xdr_get_fixed(a, NFS4_VERIFIER_SIZE);
			break;
		case EXCLUSIVE4_1:
			o->oa_verf = rpcrdma_xdr_get_fixed(a, NFS4_VERIFIER_SIZE);
			status = nfs4_decode_sattr(a, &o->oa_sa);
			break;
		default:
			return NFS4ERR_BADXDR;
		}
	} else if (o->oa_opentype != OPEN4_NOCREATE) {
		return NFS4ERR_BADXDR;
	}
	if (status)
		return status;
	o->oa_claim = rpcrdma_xdr_get_u32(a);
	switch (o->oa_claim) {
	case CLAIM_NULL:
		status = nfs4_get_component(a, &o->oa_name);
		break;
	case CLAIM_FH:
		break;
	case CLAIM_PREVIOUS:
		/* the delegation type the client held: none is granted back
		 * (OPEN_DELEGATE_NONE), the open itself is reclaimed */
		(void)rpcrdma_xdr_get_u32(a);
		break;
	case CLAIM_DELEGATE_CUR:
		/* an open the client made under its delegation, told to the
		 * server before the delegation goes (RFC 8881 18.16.3) */
		nfs4_get_stateid(a, &o->oa_deleg);
		status = nfs4_get_component(a, &o->oa_name);
		o->oa_deleg_cur = true;
		break;
	case CLAIM_DELEG_CUR_FH:
		nfs4_get_stateid(a, &o->oa_deleg);
		o->oa_deleg_cur = true;
		break;
	case CLAIM_DELEGATE_PREV:
	case CLAIM_DELEG_PREV_FH:
		status = NFS4ERR_NOTSUPP; /* delegations do not survive a restart */
		break;
	default:
		return NFS4ERR_BADXDR;
	}
	if (!rpcrdma_xdr_ok(a))
		return NFS4ERR_BADXDR;
	if (status)
		return status;
	if ((o->oa_access & OPEN4_SHARE_ACCESS_MASK) == 0 ||
	    (o->oa_deny & ~OPEN4_SHARE_DENY_MASK))
		return NFS4ERR_INVAL;
	o->oa_want = o->oa_access & OPEN4_SHARE_WANT_MASK;
	o->oa_access &= OPEN4_SHARE_ACCESS_MASK;
	return NFS4_OK;
}

/*
 * open_create - make or find the file of a CLAIM_NULL OPEN in directory
 * @dfe (attributes @dst) as the caller: fs_create(), exclusive only for
 * GUARDED4 (an existing file of EXCLUSIVE4/EXCLUSIVE4_1 is this client's
 * retry when it carries the verifier).  The file into @local (*@out, the
 * caller releases it), its attributes into @st; @attrset the attributes
 * set, with the times of an exclusive create (verf_attrset(), also on a
 * retry that matched).  An existing name that is not a regular file: NFS4ERR_ISDIR,
 * NFS4ERR_SYMLINK, else NFS4ERR_EXIST.
 */
static uint32_t open_create(struct nfs4_compound *cp, struct open_args *o,
			    struct fs_fentry *dfe, const struct stat *dst,
			    struct fs_fentry *local, struct fs_fentry **out,
			    struct stat *st, uint32_t attrset[NFS4_BITMAP_WORDS],
			    bool *created)
{
	struct fs_call *c = &cp->cp_c;
	struct fs_sattr sa = o->oa_sa.sa3;
	mode_t mode = sa.sa_set_mode ? sa.sa_mode : 0644;
	bool excl = o->oa_createmode == EXCLUSIVE4 || o->oa_createmode == EXCLUSIVE4_1;
	struct stat nst;
	int err = 0;

	*created = false;
	/* the verifier goes into the times below, with the other attributes */
	err = fs_create(c, dfe, dst, o->oa_name.n_buf, mode & 07777,
			o->oa_createmode == GUARDED4, NULL, local, out, st, created);
	if (err == -EEXIST && o->oa_createmode != GUARDED4) {
		/* the name holds something that is not a regular file */
		if (fs_lookup_attr(c, dfe, dst, o->oa_name.n_buf, &nst) == 0)
			return type_status(nst.st_mode, NFS4ERR_EXIST);
	}
	if (err)
		return nfs4_errno(err);
	if (!S_ISREG(st->st_mode))
		return type_status(st->st_mode, NFS4ERR_EXIST);
	if (excl) {
		if (!*created) {
			/* a retry: the client sets the times again */
			if (!excl_matches(st, o->oa_verf))
				return NFS4ERR_EXIST;
			verf_attrset(attrset);
			return NFS4_OK;
		}
		sa.sa_atime_how = sa.sa_mtime_how = FS_SET_TO_CLIENT_TIME;
		sa.sa_atime.tv_sec = load_be32(o->oa_verf);
		sa.sa_mtime.tv_sec = load_be32(o->oa_verf + 4);
		sa.sa_atime.tv_nsec = sa.sa_mtime.tv_nsec = 0;
	}
	if (!*created) {
		/* an existing file: only a size (O_TRUNC) is applied */
		struct fs_sattr only = { 0 };

		only.sa_set_size = sa.sa_set_size;
		only.sa_size = sa.sa_size;
		sa = only;
		memset(o->oa_sa.sa_set, 0, sizeof(o->oa_sa.sa_set));
		if (only.sa_set_size)
			o->oa_sa.sa_set[0] |= 1u << FATTR4_SIZE;
		if (only.sa_set_size) {
			/* truncating a file others hold delegations of: not
			 * before they are returned (RFC 8881 10.4.4) */
			struct nfs4_fh fh = { 0 };
			uint32_t status = nfs4_fh_set_real(cp, &fh, cp->cp_cur.fh_xi, *out, "");

			if (!status)
				status = nfs4_deleg_break(cp->cp_srv, cp->cp_clientid,
							  fh.fh_data, fh.fh_len);
			if (status)
				return status;
		}
	}
	err = fs_setattr(c, *out, st, &sa, true);
	if (err)
		return nfs4_errno(err);
	memcpy(attrset, o->oa_sa.sa_set, NFS4_BITMAP_WORDS * sizeof(uint32_t));
	if (excl)
		verf_attrset(attrset);
	err = fs_getattr(c, *out, st);
	return err ? nfs4_errno(err) : NFS4_OK;
}

/*
 * open_commit - commit_metadata (fs_commit.c) of what an OPEN with
 * create changed, before the reply, on a sync entry on a disk: when the
 * file was made (@created) the new file @fe (its createattrs, an
 * exclusive create's verifier: RFC 8881 18.16.3) and then directory @dfe,
 * as knfsd commits child then parent; else the file @fe when an existing
 * one was truncated (@attrset has the size), as a SETATTR of the size
 * commits it; nothing when nothing changed.
 */
static uint32_t open_commit(struct nfs4_compound *cp, struct fs_fentry *dfe,
			    struct fs_fentry *fe, bool created, const uint32_t *attrset)
{
	int err = 0;

	if (created) {
		err = fs_commit_obj(&cp->cp_c, fe);
		if (!err)
			err = fs_commit_dir(&cp->cp_c, dfe);
	}
	else if (attrset[0] & (1u << FATTR4_SIZE))
		err = fs_commit_obj(&cp->cp_c, fe);
	return nfs4_errno(err);
}

/*
 * open_lookup - the existing file of a CLAIM_NULL OPEN without create:
 * @name in directory @dfe into @local (*@out).  A mount inside the export
 * (fs_lookup()'s -EXDEV) answers by the type of what is mounted there, as
 * an OPEN that reached it would.
 */
static uint32_t open_lookup(struct nfs4_compound *cp, struct fs_fentry *dfe,
			    const struct stat *dst, const char *name,
			    struct fs_fentry *local, struct fs_fentry **out,
			    struct stat *st)
{
	int err = fs_lookup(&cp->cp_c, dfe, dst, name, local, out, st);

	if (err == -EXDEV && fs_lookup_attr(&cp->cp_c, dfe, dst, name, st) == 0 &&
	    !S_ISREG(st->st_mode))
		return type_status(st->st_mode, NFS4ERR_INVAL);
	return nfs4_errno(err);
}

uint32_t nfs4_op_open(struct nfs4_compound *cp)
{
	struct rpcrdma_xdr *r = cp->cp_res;
	/* fe: the current handle's object (the file, or the directory of a
	 * name); ofe: the file found or made in that directory; obj: the file */
	struct fs_fentry local, olocal, *fe = NULL, *ofe = NULL, *obj = NULL;
	uint32_t attrset[NFS4_BITMAP_WORDS] = { 0 }, status;
	struct open_args o;
	struct nfs4_stateid sid;
	struct nfs4_open_prev prev;
	struct stat dst = { 0 }, st;
	bool created = false, have_dir = false, reclaim, by_fh;
	int err;

	status = open_decode(cp->cp_args, &o);
	if (status)
		return status;
	/* CLAIM_PREVIOUS: the current handle is the file (RFC 8881 18.16.3) */
	reclaim = o.oa_claim == CLAIM_PREVIOUS;
	by_fh = o.oa_claim == CLAIM_FH || reclaim;
	status = nfs4_grace_gate(cp, reclaim);
	if (status)
		return status;
	if (!cp->cp_cur.fh_len)
		return NFS4ERR_NOFILEHANDLE;
	if (o.oa_claim == CLAIM_DELEG_CUR_FH)
		o.oa_claim = CLAIM_FH;
	else if (o.oa_claim == CLAIM_DELEGATE_CUR)
		o.oa_claim = CLAIM_NULL;
	if (cp->cp_cur.fh_pseudo)
		return by_fh ? NFS4ERR_ISDIR :
		       o.oa_opentype == OPEN4_CREATE ? NFS4ERR_ROFS : NFS4ERR_NOENT;
	status = nfs4_op_begin(cp, &cp->cp_cur,
			       o.oa_opentype == OPEN4_CREATE ||
			       (o.oa_access & OPEN4_SHARE_ACCESS_WRITE));
	if (status)
		return status;
	if (by_fh) {
		if (o.oa_opentype == OPEN4_CREATE)
			return NFS4ERR_INVAL;
		status = nfs4_cur_obj(cp, &cp->cp_cur, &local, &fe, &st);
		if (status)
			goto out;
		obj = fe;
		err = fs_become_caller(&cp->cp_c);
		if (err) {
			status = nfs4_errno(err);
			goto out;
		}
	} else {
		status = nfs4_cur_dir(cp, &cp->cp_cur, &local, &fe, &dst);
		if (status)
			goto out;
		have_dir = true;
		err = fs_become_caller(&cp->cp_c);
		if (err) {
			status = nfs4_errno(err);
			goto out;
		}
		if (o.oa_opentype == OPEN4_CREATE) {
			status = open_create(cp, &o, fe, &dst, &olocal, &ofe, &st, attrset,
					     &created);
			if (!status)
				status = open_commit(cp, fe, ofe, created, attrset);
		} else {
			status = open_lookup(cp, fe, &dst, o.oa_name.n_buf, &olocal, &ofe, &st);
		}
		if (status)
			goto out;
		obj = ofe;
	}
	if (S_ISDIR(st.st_mode)) {
		status = NFS4ERR_ISDIR;
		goto out;
	}
	if (S_ISLNK(st.st_mode)) {
		status = NFS4ERR_SYMLINK;
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		status = NFS4ERR_INVAL;
		goto out;
	}
	if (st.st_dev != cp->cp_c.c_exp->ex_dev) {
		status = NFS4ERR_XDEV;
		goto out;
	}
	if (!created) {
		err = may_open(cp, obj, &st, o.oa_access);
		if (err) {
			status = nfs4_errno(err);
			goto out;
		}
	}
	status = nfs4_fh_set_real(cp, &cp->cp_cur, cp->cp_cur.fh_xi, obj, "");
	if (status)
		goto out;
	if (o.oa_deleg_cur) {
		/* the delegation named must be the client's, of this file */
		status = nfs4_deleg_check(cp->cp_srv->s4_deleg, cp->cp_clientid, &o.oa_deleg,
					  cp->cp_cur.fh_data, cp->cp_cur.fh_len);
		if (status)
			goto out;
	}
	/* another client's delegation of the file waits for its return
	 * (RFC 8881 10.4.4): an OPEN for writing answers NFS4ERR_DELAY */
	if (o.oa_access & OPEN4_SHARE_ACCESS_WRITE) {
		status = nfs4_deleg_break(cp->cp_srv, cp->cp_clientid, cp->cp_cur.fh_data,
					  cp->cp_cur.fh_len);
		if (status)
			goto out;
	}
	status = nfs4_open_add_prev(cp->cp_srv->s4_state, cp->cp_clientid, o.oa_owner,
				    o.oa_ownerlen, cp->cp_cur.fh_data, cp->cp_cur.fh_len,
				    o.oa_access, o.oa_deny, &sid, &prev);
	if (status)
		goto out;
	/* NLM shares and other servers (the layer's table, nfs4_share.c) */
	status = nfs4_share_open(cp, obj, &sid, &prev);
	if (status)
		goto out;
	nfs4_grace_note(cp, reclaim ? NFS4_REC_OPEN_RECLAIM : NFS4_REC_OPEN);
	nfs4_put_stateid(r, &sid);
	if (have_dir) {
		nfs4_put_change_info(r, &cp->cp_c, &dst, fe);
	} else {
		rpcrdma_xdr_put_u32(r, 0);
		rpcrdma_xdr_put_u64(r, 0);
		rpcrdma_xdr_put_u64(r, 0);
	}
	rpcrdma_xdr_put_u32(r, OPEN4_RESULT_LOCKTYPE_POSIX);
	nfs4_put_bitmap(r, attrset, NFS4_BITMAP_WORDS);
	nfs4_deleg_put_open(cp, obj, o.oa_access, o.oa_want, o.oa_deleg_cur);
out:
	fs_fcache_put(ofe);
	fs_fcache_put(fe);
	return status;
}

uint32_t nfs4_op_close(struct nfs4_compound *cp)
{
	struct nfs4_stateid sid, out;
	uint32_t status;

	(void)rpcrdma_xdr_get_u32(cp->cp_args); /* seqid: not used in 4.1 */
	nfs4_get_stateid(cp->cp_args, &sid);
	if (!rpcrdma_xdr_ok(cp->cp_args))
		return NFS4ERR_BADXDR;
	if (!cp->cp_cur.fh_len)
		return NFS4ERR_NOFILEHANDLE;
	status = nfs4_open_close(cp->cp_srv->s4_state, cp->cp_clientid, &sid, 0, 0, &out);
	if (status)
		return status;
	nfs4_put_stateid(cp->cp_res, &out);
	return NFS4_OK;
}

uint32_t nfs4_op_open_downgrade(struct nfs4_compound *cp)
{
	struct rpcrdma_xdr *a = cp->cp_args;
	struct nfs4_stateid sid, out;
	uint32_t access, deny, status;

	nfs4_get_stateid(a, &sid);
	(void)rpcrdma_xdr_get_u32(a); /* seqid */
	access = rpcrdma_xdr_get_u32(a) & OPEN4_SHARE_ACCESS_MASK;
	deny = rpcrdma_xdr_get_u32(a);
	if (!rpcrdma_xdr_ok(a))
		return NFS4ERR_BADXDR;
	if (!cp->cp_cur.fh_len)
		return NFS4ERR_NOFILEHANDLE;
	if (!access || (deny & ~OPEN4_SHARE_DENY_MASK))
		return NFS4ERR_INVAL;
	status = nfs4_open_close(cp->cp_srv->s4_state, cp->cp_clientid, &sid,
				 access, deny, &out);
	if (status)
		return status;
	nfs4_share_downgrade(cp, &sid, access, deny);
	nfs4_put_stateid(cp->cp_res, &out);
	return NFS4_OK;
}

uint32_t nfs4_op_read(struct nfs4_compound *cp)
{
	struct rpcrdma_xdr *a = cp->cp_args, *r = cp->cp_res;
	struct fs_fentry local, *fe = NULL;
	struct nfs4_stateid sid;
	uint32_t count, status, access;
	uint64_t offset;
	uint8_t *eofp, *lenp, *data = NULL;
	struct stat st;
	ssize_t n = 0;
	size_t room;
	bool inline_data = false;
	int err;

	nfs4_get_stateid(a, &sid);
	offset = rpcrdma_xdr_get_u64(a);
	count = rpcrdma_xdr_get_u32(a);
	if (!rpcrdma_xdr_ok(a))
		return NFS4ERR_BADXDR;
	status = nfs4_cur_file(cp, false, &local, &fe, &st);
	if (!status)
		status = nfs4_open_find(cp->cp_srv->s4_state, cp->cp_clientid, &sid,
					cp->cp_cur.fh_data, cp->cp_cur.fh_len, &access);
	if (status == NFS4ERR_BAD_STATEID) /* a read delegation's (8.2.2) */
		status = nfs4_deleg_check(cp->cp_srv->s4_deleg, cp->cp_clientid, &sid,
					  cp->cp_cur.fh_data, cp->cp_cur.fh_len);
	else if (!status && nfs4_stateid_special(&sid) && !(access & OPEN4_SHARE_ACCESS_READ))
		status = NFS4ERR_LOCKED; /* an open denies reading (8.2.3, 9.7) */
	if (status)
		goto out;
	err = fs_become_caller(&cp->cp_c);
	if (!err)
		err = fs_open(&cp->cp_c, fe, &st, O_RDONLY);
	if (err) {
		status = nfs4_errno(err);
		goto out;
	}
	if (count > cp->cp_srv->s4_max_payload)
		count = cp->cp_srv->s4_max_payload;
	eofp = rpcrdma_xdr_reserve(r, 4);
	lenp = rpcrdma_xdr_reserve(r, 4);
	if (!lenp)
		goto out; /* REP_TOO_BIG */
	room = rpcrdma_xdr_remaining(r) & ~(size_t)3;
	if (count > room)
		count = (uint32_t)room;
	if (offset > INT64_MAX)
		count = 0;
	data = count ? rpcrdma_svc_ddp_begin(cp->cp_req, count) : NULL;
	if (count && !data) {
		data = rpcrdma_xdr_reserve(r, count); /* a second READ: inline */
		inline_data = true;
	}
	if (count && !data)
		goto out;
	if (count) {
		/* short only at the end of the file */
		struct iovec iov = { .iov_base = data, .iov_len = count };

		n = fs_read(&cp->cp_c, fe, &iov, 1, offset, false);
		if (n < 0) {
			status = nfs4_errno((int)n);
			goto out;
		}
	}
	if (count && inline_data) {
		/* inline: give back what was not read */
		r->xs_pos -= RPCRDMA_XDR_ALIGN(count);
		rpcrdma_xdr_reserve(r, (size_t)n);
	} else if (count) {
		rpcrdma_svc_ddp_end(cp->cp_req, (size_t)n);
	}
	store_be32(eofp, offset + (uint64_t)n >= (uint64_t)st.st_size);
	store_be32(lenp, (uint32_t)n);
out:
	fs_fcache_put(fe);
	return status;
}

uint32_t nfs4_special_write(struct nfs4_compound *cp, uint32_t access)
{
	if (!(access & OPEN4_SHARE_ACCESS_WRITE))
		return NFS4ERR_LOCKED;
	/* no OPEN for writing recalled the others' delegations: this does,
	 * as an OPEN would (NFS4ERR_DELAY until they are returned) */
	return nfs4_deleg_break(cp->cp_srv, cp->cp_clientid, cp->cp_cur.fh_data,
				cp->cp_cur.fh_len);
}

uint32_t nfs4_op_write(struct nfs4_compound *cp)
{
	struct rpcrdma_xdr *a = cp->cp_args, *r = cp->cp_res;
	struct fs_fentry local, *fe = NULL;
	struct nfs4_stateid sid;
	uint32_t stable, len, status, access;
	const uint8_t *data;
	uint64_t offset;
	struct stat st;
	struct iovec iov;
	size_t done = 0;
	int err;

	nfs4_get_stateid(a, &sid);
	offset = rpcrdma_xdr_get_u64(a);
	stable = rpcrdma_xdr_get_u32(a);
	data = rpcrdma_xdr_get_opaque(a, UINT32_MAX, &len);
	if (!rpcrdma_xdr_ok(a) || stable > FILE_SYNC4)
		return NFS4ERR_BADXDR;
	if (len > cp->cp_srv->s4_max_payload)
		return NFS4ERR_INVAL;
	if (offset > INT64_MAX || offset + len > (uint64_t)INT64_MAX)
		return NFS4ERR_FBIG;
	status = nfs4_cur_file(cp, true, &local, &fe, &st);
	if (!status)
		status = nfs4_open_find(cp->cp_srv->s4_state, cp->cp_clientid, &sid,
					cp->cp_cur.fh_data, cp->cp_cur.fh_len, &access);
	if (!status && nfs4_stateid_special(&sid))
		status = nfs4_special_write(cp, access);
	else if (!status && !(access & OPEN4_SHARE_ACCESS_WRITE))
		status = NFS4ERR_OPENMODE;
	if (status)
		goto out;
	err = fs_become_caller(&cp->cp_c);
	if (!err)
		err = fs_open(&cp->cp_c, fe, &st, O_WRONLY);
	if (err) {
		status = nfs4_errno(err);
		goto out;
	}
	/* as stable as asked, and answered so (18.32.3: FILE_SYNC4 would
	 * claim the attributes a data sync leaves behind) */
	iov.iov_base = (void *)data;
	iov.iov_len = len;
	err = fs_write(&cp->cp_c, fe, &iov, 1, offset, stable, &done);
	if (err) {
		status = nfs4_errno(err);
		goto out;
	}
	rpcrdma_xdr_put_u32(r, (uint32_t)done);
	rpcrdma_xdr_put_u32(r, stable);
	rpcrdma_xdr_put_fixed(r, cp->cp_c.c_exp->ex_verf, NFS4_VERIFIER_SIZE);
out:
	fs_fcache_put(fe);
	return status;
}

uint32_t nfs4_op_commit(struct nfs4_compound *cp)
{
	struct fs_fentry local, *fe = NULL;
	uint32_t status;
	struct stat st;
	int err;

	(void)rpcrdma_xdr_get_u64(cp->cp_args);
	(void)rpcrdma_xdr_get_u32(cp->cp_args);
	if (!rpcrdma_xdr_ok(cp->cp_args))
		return NFS4ERR_BADXDR;
	status = nfs4_cur_file(cp, true, &local, &fe, &st);
	if (status)
		goto out;
	/* the caller must be able to open the file for writing or else
	 * reading; then the data is synced (fsync: fs_commit()) */
	err = fs_become_caller(&cp->cp_c);
	if (!err) {
		err = fs_open(&cp->cp_c, fe, &st, O_WRONLY);
		if (err)
			err = fs_open(&cp->cp_c, fe, &st, O_RDONLY);
	}
	if (!err)
		err = fs_commit(&cp->cp_c, fe, false);
	if (err) {
		status = nfs4_errno(err);
		goto out;
	}
	rpcrdma_xdr_put_fixed(cp->cp_res, cp->cp_c.c_exp->ex_verf, NFS4_VERIFIER_SIZE);
out:
	fs_fcache_put(fe);
	return status;
}
