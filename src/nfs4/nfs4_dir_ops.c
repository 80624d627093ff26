// SPDX-License-Identifier: MIT
/*
 * nfs4_dir_ops.c - the directory operations of NFSv4.1: CREATE (RFC 8881
 * 18.4: directories, symlinks, devices, sockets, FIFOs), REMOVE (18.25),
 * RENAME (18.26), LINK (18.9), READLINK (18.24) and READDIR (18.23).
 * Each runs with the caller's identity through the operations of the
 * file-serving layer (fs.h), on the directories of its caches, as the
 * NFSv3 procedures do.  On a sync
 * export entry on a disk, CREATE, REMOVE, RENAME and LINK commit the
 * directories they changed before the reply (fs_commit.c, as NFSv3's
 * namespace procedures and knfsd's commit_metadata do); a failed fsync is
 * the operation's error.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/sysmacros.h>

#include "nfs4_internal.h"

/* dir_begin - the current (or saved) handle as a directory for a change. */
static uint32_t dir_begin(struct nfs4_compound *cp, const struct nfs4_fh *fh,
			  bool modifies, struct fs_fentry *local,
			  struct fs_fentry **fe, struct stat *st)
{
	uint32_t status;

	*fe = NULL;
	if (!fh->fh_len)
		return NFS4ERR_NOFILEHANDLE;
	if (fh->fh_pseudo)
		return modifies ? NFS4ERR_ROFS : NFS4ERR_ISDIR;
	status = nfs4_op_begin(cp, fh, modifies);
	if (!status)
		status = nfs4_cur_dir(cp, fh, local, fe, st);
	return status;
}

uint32_t nfs4_op_create(struct nfs4_compound *cp)
{
	struct rpcrdma_xdr *a = cp->cp_args, *r = cp->cp_res;
	struct fs_call *c = &cp->cp_c;
	struct fs_fentry local, olocal, *fe = NULL, *obj = NULL;
	char target[NFS4_LINK_MAX + 1];
	uint32_t type, spec1 = 0, spec2 = 0, len, status;
	const uint8_t *lp = NULL;
	struct nfs4_sattr sa;
	struct fs_name n;
	struct stat dst, st;
	mode_t mode;
	int err;

	type = rpcrdma_xdr_get_u32(a);
	switch (type) {
	case NF4LNK:
		lp = rpcrdma_xdr_get_opaque(a, NFS4_LINK_MAX, &len);
		if (!lp)
			return NFS4ERR_BADXDR;
		if (len == 0 || memchr(lp, 0, len))
			return NFS4ERR_INVAL;
		memcpy(target, lp, len);
		target[len] = 0;
		break;
	case NF4BLK:
	case NF4CHR:
		spec1 = rpcrdma_xdr_get_u32(a);
		spec2 = rpcrdma_xdr_get_u32(a);
		break;
	case NF4SOCK:
	case NF4FIFO:
	case NF4DIR:
		break;
	default:
		return rpcrdma_xdr_ok(a) ? NFS4ERR_BADTYPE : NFS4ERR_BADXDR;
	}
	status = nfs4_get_component(a, &n);
	if (status)
		return status;
	status = nfs4_decode_sattr(a, &sa);
	if (status)
		return status;
	status = dir_begin(cp, &cp->cp_cur, true, &local, &fe, &dst);
	if (status)
		goto out;
	err = fs_become_caller(c);
	if (err)
		goto out_err;
	mode = (sa.sa3.sa_set_mode ? sa.sa3.sa_mode : (type == NF4DIR ? 0755 : 0644)) & 07777;
	switch (type) {
	case NF4DIR:
		err = fs_mkdir(c, fe, &dst, n.n_buf, mode, &olocal, &obj, &st);
		break;
	case NF4LNK:
		err = fs_symlink(c, fe, &dst, n.n_buf, target, &olocal, &obj, &st);
		break;
	case NF4BLK:
		err = fs_mknod(c, fe, &dst, n.n_buf, S_IFBLK | mode, makedev(spec1, spec2),
			       &olocal, &obj, &st);
		break;
	case NF4CHR:
		err = fs_mknod(c, fe, &dst, n.n_buf, S_IFCHR | mode, makedev(spec1, spec2),
			       &olocal, &obj, &st);
		break;
	case NF4SOCK:
		err = fs_mknod(c, fe, &dst, n.n_buf, S_IFSOCK | mode, 0, &olocal, &obj, &st);
		break;
	default:
		err = fs_mknod(c, fe, &dst, n.n_buf, S_IFIFO | mode, 0, &olocal, &obj, &st);
		break;
	}
	if (err)
		goto out_err;
	/* owner, group, times; the mode went with the creation */
	sa.sa3.sa_set_size = false;
	err = fs_setattr(c, obj, &st, &sa.sa3, true);
	/* the new object (its attributes), then its name: fs_commit.c */
	if (!err)
		err = fs_commit_obj(c, obj);
	if (!err)
		err = fs_commit_dir(c, fe);
	if (err)
		goto out_err;
	status = nfs4_fh_set_real(cp, &cp->cp_cur, cp->cp_cur.fh_xi, obj, "");
	if (status)
		goto out;
	nfs4_put_change_info(r, c, &dst, fe);
	sa.sa_set[0] &= ~(1u << FATTR4_SIZE);
	nfs4_put_bitmap(r, sa.sa_set, NFS4_BITMAP_WORDS);
	goto out;
out_err:
	status = nfs4_errno(err);
out:
	fs_fcache_put(obj);
	fs_fcache_put(fe);
	return status;
}

uint32_t nfs4_op_remove(struct nfs4_compound *cp)
{
	struct fs_call *c = &cp->cp_c;
	struct fs_fentry local, *fe = NULL;
	uint32_t status;
	struct fs_name n;
	struct stat dst, st;
	int err;

	status = nfs4_get_component(cp->cp_args, &n);
	if (status)
		return status;
	if (nfs4_recover_in_grace(cp->cp_srv->s4_recover, nfs4_mono_sec()))
		return NFS4ERR_GRACE; /* a file yet to be reclaimed stays */
	status = dir_begin(cp, &cp->cp_cur, true, &local, &fe, &dst);
	if (status)
		goto out;
	/* REMOVE takes either a directory or another name: its type says
	 * which (fs_remove() drops the object from the caches) */
	err = fs_become_caller(c);
	if (!err)
		err = fs_lookup_attr(c, fe, &dst, n.n_buf, &st);
	if (!err)
		err = fs_remove(c, fe, n.n_buf, S_ISDIR(st.st_mode));
	if (!err)
		err = fs_commit_dir(c, fe);
	if (err)
		goto out_err;
	nfs4_put_change_info(cp->cp_res, c, &dst, fe);
	goto out;
out_err:
	status = nfs4_errno(err);
out:
	fs_fcache_put(fe);
	return status;
}

uint32_t nfs4_op_rename(struct nfs4_compound *cp)
{
	struct fs_call *c = &cp->cp_c;
	struct fs_fentry sl, tl, *sfe = NULL, *tfe = NULL;
	uint32_t status;
	struct fs_name from, to;
	struct stat sdst, tdst;
	bool two_dirs;
	int err;

	status = nfs4_get_component(cp->cp_args, &from);
	if (!status)
		status = nfs4_get_component(cp->cp_args, &to);
	if (status)
		return status;
	if (nfs4_recover_in_grace(cp->cp_srv->s4_recover, nfs4_mono_sec()))
		return NFS4ERR_GRACE; /* a file yet to be reclaimed keeps its name */
	if (!cp->cp_saved.fh_len || !cp->cp_cur.fh_len)
		return NFS4ERR_NOFILEHANDLE;
	if (!cp->cp_saved.fh_pseudo && !cp->cp_cur.fh_pseudo &&
	    cp->cp_saved.fh_xi != cp->cp_cur.fh_xi)
		return NFS4ERR_XDEV;
	status = dir_begin(cp, &cp->cp_saved, true, &sl, &sfe, &sdst);
	if (!status)
		status = dir_begin(cp, &cp->cp_cur, true, &tl, &tfe, &tdst);
	if (status)
		goto out;
	err = fs_become_caller(c);
	if (err)
		goto out_err;
	/* may the caller change both directories: the backend asks, as for
	 * NFSv3's RENAME; an object replaced leaves the caches */
	two_dirs = sdst.st_dev != tdst.st_dev || sdst.st_ino != tdst.st_ino;
	err = fs_rename(c, sfe, from.n_buf, tfe, to.n_buf, two_dirs);
	if (err)
		goto out_err;
	/* both directories, or the one once */
	err = fs_commit_dir(c, sfe);
	if (!err && two_dirs)
		err = fs_commit_dir(c, tfe);
	if (err)
		goto out_err;
	nfs4_put_change_info(cp->cp_res, c, &sdst, sfe);
	nfs4_put_change_info(cp->cp_res, c, &tdst, tfe);
	goto out;
out_err:
	status = nfs4_errno(err);
out:
	fs_fcache_put(sfe);
	fs_fcache_put(tfe);
	return status;
}

uint32_t nfs4_op_link(struct nfs4_compound *cp)
{
	struct fs_call *c = &cp->cp_c;
	struct fs_fentry ol, dl, *ofe = NULL, *dfe = NULL;
	uint32_t status;
	struct fs_name n;
	struct stat ost, dst;
	int err;

	status = nfs4_get_component(cp->cp_args, &n);
	if (status)
		return status;
	if (!cp->cp_saved.fh_len || !cp->cp_cur.fh_len)
		return NFS4ERR_NOFILEHANDLE;
	if (cp->cp_saved.fh_pseudo)
		return NFS4ERR_ISDIR;
	if (!cp->cp_cur.fh_pseudo && cp->cp_saved.fh_xi != cp->cp_cur.fh_xi)
		return NFS4ERR_XDEV;
	status = dir_begin(cp, &cp->cp_cur, true, &dl, &dfe, &dst);
	if (!status)
		status = nfs4_cur_obj(cp, &cp->cp_saved, &ol, &ofe, &ost);
	if (status)
		goto out;
	if (S_ISDIR(ost.st_mode)) {
		status = NFS4ERR_ISDIR;
		goto out;
	}
	/* may the caller add a name (write and search permission): first,
	 * as NFSv3's LINK and knfsd, so a caller without it hears ACCESS
	 * where the link itself would find another reason (EPERM) */
	err = fs_become_caller(c);
	if (!err)
		err = fs_access(c, dfe, &dst, W_OK | X_OK);
	if (!err)
		err = fs_link(c, ofe, dfe, n.n_buf);
	if (!err)
		err = fs_commit_dir(c, dfe);
	if (err)
		goto out_err;
	nfs4_put_change_info(cp->cp_res, c, &dst, dfe);
	goto out;
out_err:
	status = nfs4_errno(err);
out:
	fs_fcache_put(ofe);
	fs_fcache_put(dfe);
	return status;
}

uint32_t nfs4_op_readlink(struct nfs4_compound *cp)
{
	struct fs_fentry local, *fe = NULL;
	char buf[NFS4_LINK_MAX];
	uint32_t status;
	struct stat st;
	uint8_t *data;
	ssize_t n;

	if (!cp->cp_cur.fh_len)
		return NFS4ERR_NOFILEHANDLE;
	if (cp->cp_cur.fh_pseudo)
		return NFS4ERR_INVAL;
	status = nfs4_op_begin(cp, &cp->cp_cur, false);
	if (!status)
		status = nfs4_cur_obj(cp, &cp->cp_cur, &local, &fe, &st);
	if (status)
		goto out;
	if (!S_ISLNK(st.st_mode)) {
		status = NFS4ERR_INVAL;
		goto out;
	}
	/* read as the server, for any caller (as NFSv3's READLINK) */
	n = fs_readlink(&cp->cp_c, fe, buf, sizeof(buf));
	if (n < 0) {
		status = nfs4_errno((int)n);
		goto out;
	}
	rpcrdma_xdr_put_u32(cp->cp_res, (uint32_t)n);
	data = rpcrdma_svc_ddp_begin(cp->cp_req, (size_t)n);
	if (data) {
		memcpy(data, buf, (size_t)n);
		rpcrdma_svc_ddp_end(cp->cp_req, (size_t)n);
	} else {
		rpcrdma_xdr_put_fixed(cp->cp_res, buf, (size_t)n);
	}
out:
	fs_fcache_put(fe);
	return status;
}

/* ---- READDIR ---- */

/* Bytes of an entry4 besides its attributes: follows, cookie, name. */
static size_t entry_bytes(size_t namelen)
{
	return 4 + 8 + 4 + RPCRDMA_XDR_ALIGN(namelen);
}

/*
 * put_entry - one entry4 if it fits @budget (from @start): 0, or -ENOSPC
 * with nothing encoded.
 */
static int put_entry(struct nfs4_compound *cp, size_t start, size_t budget,
		     uint64_t cookie, const char *name,
		     const uint32_t *req, uint32_t nreq,
		     const struct nfs4_attr_src *src)
{
	struct rpcrdma_xdr *r = cp->cp_res;
	size_t at = r->xs_pos;

	rpcrdma_xdr_put_u32(r, 1);
	rpcrdma_xdr_put_u64(r, cookie);
	rpcrdma_xdr_put_opaque(r, name, (uint32_t)strlen(name));
	nfs4_encode_fattr(r, req, nreq, src);
	if (!rpcrdma_xdr_ok(r) || r->xs_pos - start + 8 > budget) {
		r->xs_err = false;
		r->xs_pos = at;
		return -ENOSPC;
	}
	return 0;
}

/* pseudo_readdir - the children of a pseudo directory (cookies from 3). */
static uint32_t pseudo_readdir(struct nfs4_compound *cp, uint64_t cookie,
			       size_t budget, const uint32_t *req, uint32_t nreq)
{
	struct rpcrdma_xdr *r = cp->cp_res;
	struct fs_snap *sn = cp->cp_snap;
	const struct nfs4_fh *dir = &cp->cp_cur;
	const char *here = sn->sn_exp[dir->fh_xi]->ex_path;
	size_t start = r->xs_pos;
	unsigned nent = 0;
	bool eof = true;

	rpcrdma_xdr_put_u64(r, 0); /* cookieverf */
	for (unsigned j = 0; j < sn->sn_xt->xt_n; j++) {
		const char *path = sn->sn_exp[j]->ex_path, *c;
		char name[NFS4_NAME_MAX + 1];
		struct nfs4_fh fh = { 0 };
		struct fs_fentry rlocal, *root;
		struct fs_call rc = { .c_exp = sn->sn_exp[j], .c_req = cp->cp_req };
		struct nfs4_attr_src src;
		struct stat st;
		bool dup = false;
		int full;
		size_t len;

		if (j + 3 <= cookie ||
		    !rpcrdma_nfs3_exports_match(sn->sn_xt, j,
						(const struct sockaddr *)&cp->cp_req->rq_peer, NULL) ||
		    !nfs4_same_prefix(here, path, dir->fh_depth))
			continue;
		c = nfs4_path_comp(path, dir->fh_depth, &len);
		if (!c || len > NFS4_NAME_MAX)
			continue;
		memcpy(name, c, len);
		name[len] = 0;
		/* two exports under one name: list it once */
		for (unsigned k = 0; k < j && !dup; k++) {
			size_t l2;
			const char *c2 = nfs4_path_comp(sn->sn_exp[k]->ex_path,
							dir->fh_depth, &l2);

			dup = c2 && l2 == len && !memcmp(c2, c, len) &&
			      nfs4_same_prefix(here, sn->sn_exp[k]->ex_path, dir->fh_depth);
		}
		if (dup)
			continue;
		/* a pseudo node, or export j's root: its attributes and
		 * counts through the directory cache, with a call of its own
		 * (no operation began) */
		if (nfs4_fh_node(cp, &fh, j, dir->fh_depth + 1))
			continue;
		root = NULL;
		if (fh.fh_pseudo)
			nfs4_fh_pseudo_stat(cp, &fh, &st);
		else if (fs_get_dir(&rc, fh.fh_data, fh.fh_len, &rlocal, &root, &st))
			continue;
		nfs4_attr_src_init(cp, &src, &st, &fh, root);
		src.as_call = &rc;
		full = put_entry(cp, start, budget, j + 3, name, req, nreq, &src);
		fs_fcache_put(root);
		if (full) {
			if (nent == 0) {
				r->xs_pos = start;
				return NFS4ERR_TOOSMALL;
			}
			eof = false;
			break;
		}
		nent++;
	}
	rpcrdma_xdr_put_u32(r, 0);
	rpcrdma_xdr_put_u32(r, eof);
	return NFS4_OK;
}

/* What READDIR's entries are encoded with (rd_entry()). */
struct rd_ctx {
	struct nfs4_compound *rc_cp;
	struct fs_fentry *rc_dir;
	const struct stat *rc_dst;
	const uint32_t *rc_req;
	uint32_t rc_nreq;
	size_t rc_start, rc_budget;
	unsigned rc_nent;
	uint32_t rc_status;  /* NFS4ERR_TOOSMALL: not even one entry fit */
};

/*
 * rd_entry - fs_readdir()'s callback: one entry4 of @name (file id @ino,
 * @cookie the position after it), its attributes as the caller sees them
 * (fs_lookup_attr(): a symlink not followed; a failure is the entry's
 * rdattr_error) and its handle when it lies in the export's file system.
 * Return: 0 (encoded, or "." and ".." left out), 1 (the reply is full:
 * the entry is left for the next READDIR).
 */
static int rd_entry(void *arg, const char *name, uint64_t ino, uint64_t cookie)
{
	struct rd_ctx *x = arg;
	struct nfs4_compound *cp = x->rc_cp;
	struct nfs4_attr_src src;
	struct nfs4_fh fh = { 0 };
	struct stat st;
	int err;

	if (!strcmp(name, ".") || !strcmp(name, ".."))
		return 0;
	memset(&st, 0, sizeof(st));
	nfs4_attr_src_init(cp, &src, &st, &fh, NULL);
	err = fs_lookup_attr(&cp->cp_c, x->rc_dir, x->rc_dst, name, &st);
	if (err) {
		src.as_rdattr_error = nfs4_errno(err);
		st.st_ino = (ino_t)ino;
	} else {
		src.as_fe = x->rc_dir;
		if (st.st_dev == cp->cp_c.c_exp->ex_dev &&
		    nfs4_fh_set_real(cp, &fh, cp->cp_cur.fh_xi, x->rc_dir, name) != NFS4_OK)
			fh.fh_len = 0;
	}
	if (entry_bytes(strlen(name)) > x->rc_budget ||
	    put_entry(cp, x->rc_start, x->rc_budget, cookie, name, x->rc_req,
		      x->rc_nreq, &src)) {
		if (x->rc_nent == 0)
			x->rc_status = NFS4ERR_TOOSMALL;
		return 1;
	}
	x->rc_nent++;
	return 0;
}

uint32_t nfs4_op_readdir(struct nfs4_compound *cp)
{
	struct rpcrdma_xdr *a = cp->cp_args, *r = cp->cp_res;
	uint32_t req[NFS4_BITMAP_WORDS], nreq, dircount, maxcount, status;
	struct fs_fentry local, *fe = NULL;
	struct rd_ctx x;
	struct stat dst;
	uint64_t cookie;
	size_t budget;
	bool eof = false;
	int err;

	cookie = rpcrdma_xdr_get_u64(a);
	(void)rpcrdma_xdr_get_fixed(a, NFS4_VERIFIER_SIZE);
	dircount = rpcrdma_xdr_get_u32(a);
	maxcount = rpcrdma_xdr_get_u32(a);
	nreq = nfs4_get_bitmap(a, req, NFS4_BITMAP_WORDS);
	if (!rpcrdma_xdr_ok(a))
		return NFS4ERR_BADXDR;
	(void)dircount; /* a hint (RFC 8881 18.23.4): maxcount bounds the reply */
	if (cookie == 1 || cookie == 2)
		return NFS4ERR_BAD_COOKIE;
	budget = rpcrdma_xdr_remaining(r);
	if (maxcount < budget)
		budget = maxcount;
	if (budget < 8 + 8 + 64)
		return NFS4ERR_TOOSMALL;
	if (!cp->cp_cur.fh_len)
		return NFS4ERR_NOFILEHANDLE;
	if (cp->cp_cur.fh_pseudo)
		return pseudo_readdir(cp, cookie, budget, req, nreq);
	status = dir_begin(cp, &cp->cp_cur, false, &local, &fe, &dst);
	if (status)
		goto out;
	err = fs_become_caller(&cp->cp_c);
	if (err)
		goto out_err;
	memset(&x, 0, sizeof(x));
	x.rc_cp = cp;
	x.rc_dir = fe;
	x.rc_dst = &dst;
	x.rc_req = req;
	x.rc_nreq = nreq;
	x.rc_start = r->xs_pos;
	x.rc_budget = budget;
	rpcrdma_xdr_put_u64(r, 0); /* cookieverf: cookies are positions */
	err = fs_readdir(&cp->cp_c, fe, &dst, cookie, rd_entry, &x, &eof);
	if (err < 0 || x.rc_status) {
		r->xs_pos = x.rc_start;
		if (x.rc_status) {
			status = x.rc_status;
			goto out;
		}
		goto out_err;
	}
	rpcrdma_xdr_put_u32(r, 0);
	rpcrdma_xdr_put_u32(r, eof);
	goto out;
out_err:
	status = nfs4_errno(err);
out:
	fs_fcache_put(fe);
	return status;
}
