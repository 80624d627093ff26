// SPDX-License-Identifier: MIT
/*
 * nfs4_fh_ops.c - the current and saved file handles and the operations
 * that only look: PUTROOTFH, PUTFH, GETFH, SAVEFH, RESTOREFH (RFC 8881
 * 18.24, 18.19, 18.8, 18.27, 18.26), LOOKUP, LOOKUPP (18.15, 18.14),
 * GETATTR (18.7), ACCESS (18.1), SECINFO_NO_NAME (18.45), and SETATTR
 * (18.30), which on a sync export entry on a disk commits the file or
 * directory it changed before the reply, as NFSv3's SETATTR does
 * (fs_commit.c).
 *
 * Handles of real objects are the file-serving layer's (fs_fh.c: export
 * id, the backend's key, MAC), the same as NFSv3's, so a handle works in
 * both versions.  Above
 * the exports lies a read-only pseudo file system (RFC 8881 7.3): its
 * root is PUTROOTFH's handle and its directories are the components of
 * the exported paths the caller's address may see, down to each export's
 * root, where the export's own handles begin.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "common/be.h"
#include "nfs4_internal.h"

/* ---- small decoders shared by the operations ---- */

void nfs4_get_stateid(struct rpcrdma_xdr *xs, struct nfs4_stateid *sid)
{
	const uint8_t *o;

	sid->si_seqid = rpcrdma_xdr_get_u32(xs);
	o = rpcrdma_xdr_get_fixed(xs, NFS4_OTHER_SIZE);
	if (o)
		memcpy(sid->si_other, o, NFS4_OTHER_SIZE);
	else
		memset(sid->si_other, 0, NFS4_OTHER_SIZE);
}

void nfs4_put_stateid(struct rpcrdma_xdr *xs, const struct nfs4_stateid *sid)
{
	rpcrdma_xdr_put_u32(xs, sid->si_seqid);
	rpcrdma_xdr_put_fixed(xs, sid->si_other, NFS4_OTHER_SIZE);
}

uint32_t nfs4_get_component(struct rpcrdma_xdr *xs, struct fs_name *n)
{
	const uint8_t *p;
	uint32_t len;

	n->n_len = 0;
	n->n_buf[0] = 0;
	p = rpcrdma_xdr_get_opaque(xs, FS_WIRE_NAME_MAX, &len);
	if (!p)
		return NFS4ERR_BADXDR;
	if (len == 0)
		return NFS4ERR_INVAL;
	if (len > NFS4_NAME_MAX)
		return NFS4ERR_NAMETOOLONG;
	if (memchr(p, '/', len) || memchr(p, 0, len))
		return NFS4ERR_BADNAME;
	memcpy(n->n_buf, p, len);
	n->n_buf[len] = 0;
	n->n_len = len;
	if (!strcmp(n->n_buf, ".") || !strcmp(n->n_buf, ".."))
		return NFS4ERR_BADNAME;
	return NFS4_OK;
}

void nfs4_put_change_info(struct rpcrdma_xdr *xs, struct fs_call *c,
			  const struct stat *before, struct fs_fentry *dir)
{
	struct stat after;
	bool ok = fs_getattr(c, dir, &after) == 0;

	/* atomic: as NFSv3's wcc_data, which the same values give, "before"
	 * is the directory just before the change and "after" just after it.
	 * A change made in between by a local process would go unseen by
	 * the client until the directory changes again, the window NFSv3's
	 * weak cache consistency accepts; a client told "not atomic" (the
	 * Linux one) drops its cached access rights and revalidates every
	 * name in the directory after each change, an ACCESS and a LOOKUP
	 * per entry of an rm -rf (docs/nfs4.md). */
	rpcrdma_xdr_put_u32(xs, ok);
	rpcrdma_xdr_put_u64(xs, nfs4_change(before));
	rpcrdma_xdr_put_u64(xs, nfs4_change(ok ? &after : before));
}

/* ---- reaching the current handle's object ---- */

static const uint8_t *fh_bytes(const struct nfs4_fh *fh, uint32_t *len)
{
	*len = fh->fh_len;
	return fh->fh_data;
}

uint32_t nfs4_cur_dir(struct nfs4_compound *cp, const struct nfs4_fh *fh,
		      struct fs_fentry *local, struct fs_fentry **fep,
		      struct stat *st)
{
	uint32_t len;
	const uint8_t *b = fh_bytes(fh, &len);
	int err = fs_get_dir(&cp->cp_c, b, len, local, fep, st);

	if (err)
		return nfs4_errno(err);
	if (S_ISLNK(st->st_mode))
		return NFS4ERR_SYMLINK;
	if (!S_ISDIR(st->st_mode))
		return NFS4ERR_NOTDIR;
	if (st->st_nlink == 0) {
		fs_fcache_forget(cp->cp_c.c_exp, b, len);
		return NFS4ERR_STALE;
	}
	return NFS4_OK;
}

uint32_t nfs4_cur_obj(struct nfs4_compound *cp, const struct nfs4_fh *fh,
		      struct fs_fentry *local, struct fs_fentry **fep,
		      struct stat *st)
{
	uint32_t len;
	const uint8_t *b = fh_bytes(fh, &len);
	int err = fs_get_file(&cp->cp_c, b, len, local, fep, st);

	return err ? nfs4_errno(err) : NFS4_OK;
}

uint32_t nfs4_cur_file(struct nfs4_compound *cp, bool modifies,
		       struct fs_fentry *local, struct fs_fentry **fep,
		       struct stat *st)
{
	uint32_t status;

	*fep = NULL;
	if (!cp->cp_cur.fh_len)
		return NFS4ERR_NOFILEHANDLE;
	if (cp->cp_cur.fh_pseudo)
		return NFS4ERR_ISDIR;
	status = nfs4_op_begin(cp, &cp->cp_cur, modifies);
	if (!status)
		status = nfs4_cur_obj(cp, &cp->cp_cur, local, fep, st);
	if (status)
		return status;
	if (S_ISDIR(st->st_mode))
		return NFS4ERR_ISDIR;
	if (S_ISLNK(st->st_mode))
		return NFS4ERR_SYMLINK;
	return S_ISREG(st->st_mode) ? NFS4_OK : NFS4ERR_WRONG_TYPE;
}

/* ---- the pseudo file system ---- */

/* path_comp - component @k of @path: its start, *@len bytes; NULL past the end. */
const char *nfs4_path_comp(const char *path, unsigned k, size_t *len)
{
	const char *p = path;

	for (unsigned i = 0;; i++) {
		while (*p == '/')
			p++;
		if (!*p)
			return NULL;
		*len = strcspn(p, "/");
		if (i == k)
			return p;
		p += *len;
	}
}

static unsigned path_ncomp(const char *path)
{
	size_t len;
	unsigned n = 0;

	while (nfs4_path_comp(path, n, &len))
		n++;
	return n;
}

/* same_prefix - do @a and @b share their first @d components? */
bool nfs4_same_prefix(const char *a, const char *b, unsigned d)
{
	for (unsigned k = 0; k < d; k++) {
		size_t la, lb;
		const char *ca = nfs4_path_comp(a, k, &la), *cb = nfs4_path_comp(b, k, &lb);

		if (!ca || !cb || la != lb || memcmp(ca, cb, la))
			return false;
	}
	return true;
}

static bool visible(struct nfs4_compound *cp, unsigned xi)
{
	return rpcrdma_nfs3_exports_match(cp->cp_snap->sn_xt, xi,
					  (const struct sockaddr *)&cp->cp_req->rq_peer,
					  NULL);
}

static void fh_set_pseudo(struct nfs4_compound *cp, struct nfs4_fh *fh,
			  unsigned xi, unsigned depth)
{
	memset(fh, 0, sizeof(*fh));
	fh->fh_pseudo = true;
	fh->fh_depth = depth;
	fh->fh_xi = xi;
	fh->fh_len = NFS4_PSEUDO_FH_LEN;
	fh->fh_data[0] = NFS4_PSEUDO_FH_VERSION;
	fh->fh_data[1] = (uint8_t)depth;
	store_be16(fh->fh_data + 2, cp->cp_snap->sn_exp[xi]->ex_id);
	store_be32(fh->fh_data + 4, cp->cp_srv->s4_boot);
}

static void fh_set_real_len(struct nfs4_fh *fh, unsigned xi, uint32_t len)
{
	fh->fh_len = len;
	fh->fh_pseudo = false;
	fh->fh_depth = 0;
	fh->fh_xi = xi;
}

uint32_t nfs4_fh_set_real(struct nfs4_compound *cp, struct nfs4_fh *fh,
			  unsigned xi, struct fs_fentry *dir, const char *name)
{
	uint32_t len;
	int err;

	err = fs_fh_of(&cp->cp_c, dir, name, fh->fh_data, &len);
	if (err)
		return nfs4_errno(err);
	fh_set_real_len(fh, xi, len);
	return NFS4_OK;
}

/* nfs4_fh_node - the pseudo node (or export root) at @depth on @xi's path. */
uint32_t nfs4_fh_node(struct nfs4_compound *cp, struct nfs4_fh *fh,
			unsigned xi, unsigned depth)
{
	const struct rpcrdma_nfs3_export *exp = cp->cp_snap->sn_exp[xi];
	uint32_t len;
	int err;

	if (depth < path_ncomp(exp->ex_path)) {
		fh_set_pseudo(cp, fh, xi, depth);
		return NFS4_OK;
	}
	/* the root's handle (a directory entry of NULL): no object needed,
	 * nor a call (PUTROOTFH and the pseudo file system come before any
	 * nfs4_op_begin()) */
	err = fs_fh_of_exp(exp, NULL, "", fh->fh_data, &len);
	if (err)
		return nfs4_errno(err);
	fh_set_real_len(fh, xi, len);
	return NFS4_OK;
}

void nfs4_fh_pseudo_stat(struct nfs4_compound *cp, const struct nfs4_fh *fh,
			 struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_mode = S_IFDIR | 0555;
	st->st_nlink = 2;
	/* fileids of the pseudo file system (fsid 0): depth and export */
	st->st_ino = 1 + ((ino_t)fh->fh_depth << 16 | fh->fh_xi);
	if (fh->fh_depth == 0)
		st->st_ino = 1;
	st->st_atim = st->st_mtim = st->st_ctim = cp->cp_srv->s4_start;
	st->st_blksize = 4096;
}

void nfs4_attr_src_init(struct nfs4_compound *cp, struct nfs4_attr_src *src,
			const struct stat *st, const struct nfs4_fh *fh,
			struct fs_fentry *fe)
{
	memset(src, 0, sizeof(*src));
	src->as_st = st;
	src->as_exp = fh->fh_pseudo ? NULL : cp->cp_snap->sn_exp[fh->fh_xi];
	src->as_fh = fh;
	src->as_call = &cp->cp_c;
	src->as_fe = fe;
	src->as_max_payload = cp->cp_srv->s4_max_payload;
	src->as_lease = cp->cp_srv->s4_lease;
}

/* ---- the operations ---- */

uint32_t nfs4_op_putrootfh(struct nfs4_compound *cp)
{
	struct fs_snap *sn = cp->cp_snap;
	unsigned xi = 0;

	for (unsigned i = 0; i < sn->sn_xt->xt_n; i++)
		if (visible(cp, i)) {
			xi = i;
			break;
		}
	return nfs4_fh_node(cp, &cp->cp_cur, xi, 0);
}

uint32_t nfs4_op_putfh(struct nfs4_compound *cp)
{
	struct fs_snap *sn = cp->cp_snap;
	struct nfs4_fh *fh = &cp->cp_cur;
	const uint8_t *p;
	uint32_t len, id;
	unsigned xi;

	p = rpcrdma_xdr_get_opaque(cp->cp_args, NFS4_FHSIZE, &len);
	if (!p)
		return NFS4ERR_BADXDR;
	if (len < 4 || (p[0] != FS_FH_VERSION && p[0] != NFS4_PSEUDO_FH_VERSION))
		return NFS4ERR_BADHANDLE;
	id = load_be32(p) & 0xffff;
	xi = fs_snap_index(sn, id);
	if (p[0] == NFS4_PSEUDO_FH_VERSION) {
		if (len != NFS4_PSEUDO_FH_LEN)
			return NFS4ERR_BADHANDLE;
		if (xi == sn->sn_xt->xt_n || load_be32(p + 4) != cp->cp_srv->s4_boot ||
		    p[1] >= path_ncomp(sn->sn_exp[xi]->ex_path))
			return NFS4ERR_STALE;
		fh_set_pseudo(cp, fh, xi, p[1]);
		return NFS4_OK;
	}
	if (len < FS_FH_OVERHEAD || len > RPCRDMA_NFS3_FHSIZE)
		return NFS4ERR_BADHANDLE;
	if (xi == sn->sn_xt->xt_n)
		return NFS4ERR_STALE;
	memset(fh, 0, sizeof(*fh));
	memcpy(fh->fh_data, p, len);
	fh->fh_len = len;
	fh->fh_xi = xi;
	return NFS4_OK;
}

uint32_t nfs4_op_getfh(struct nfs4_compound *cp)
{
	if (!cp->cp_cur.fh_len)
		return NFS4ERR_NOFILEHANDLE;
	rpcrdma_xdr_put_opaque(cp->cp_res, cp->cp_cur.fh_data, cp->cp_cur.fh_len);
	return NFS4_OK;
}

uint32_t nfs4_op_savefh(struct nfs4_compound *cp)
{
	if (!cp->cp_cur.fh_len)
		return NFS4ERR_NOFILEHANDLE;
	cp->cp_saved = cp->cp_cur;
	return NFS4_OK;
}

uint32_t nfs4_op_restorefh(struct nfs4_compound *cp)
{
	if (!cp->cp_saved.fh_len)
		return NFS4ERR_RESTOREFH;
	cp->cp_cur = cp->cp_saved;
	return NFS4_OK;
}

/* pseudo_lookup - LOOKUP in a pseudo directory. */
static uint32_t pseudo_lookup(struct nfs4_compound *cp, const struct fs_name *n)
{
	struct fs_snap *sn = cp->cp_snap;
	const struct nfs4_fh *dir = &cp->cp_cur;
	const char *here = sn->sn_exp[dir->fh_xi]->ex_path;

	for (unsigned j = 0; j < sn->sn_xt->xt_n; j++) {
		const char *path = sn->sn_exp[j]->ex_path, *c;
		size_t len;

		if (!visible(cp, j) || !nfs4_same_prefix(here, path, dir->fh_depth))
			continue;
		c = nfs4_path_comp(path, dir->fh_depth, &len);
		if (c && len == n->n_len && !memcmp(c, n->n_buf, len))
			return nfs4_fh_node(cp, &cp->cp_cur, j, dir->fh_depth + 1);
	}
	return NFS4ERR_NOENT;
}

uint32_t nfs4_op_lookup(struct nfs4_compound *cp)
{
	struct fs_name n;
	struct fs_fentry local, olocal, *fe = NULL, *obj = NULL;
	struct stat dst, st;
	uint32_t status;
	int err;

	status = nfs4_get_component(cp->cp_args, &n);
	if (status)
		return status;
	if (!cp->cp_cur.fh_len)
		return NFS4ERR_NOFILEHANDLE;
	if (cp->cp_cur.fh_pseudo)
		return pseudo_lookup(cp, &n);
	status = nfs4_op_begin(cp, &cp->cp_cur, false);
	if (!status)
		status = nfs4_cur_dir(cp, &cp->cp_cur, &local, &fe, &dst);
	if (status)
		goto out;
	err = fs_become_caller(&cp->cp_c);
	if (!err)
		err = fs_lookup(&cp->cp_c, fe, &dst, n.n_buf, &olocal, &obj, &st);
	if (err) {
		status = nfs4_errno(err);
		goto out;
	}
	status = nfs4_fh_set_real(cp, &cp->cp_cur, cp->cp_cur.fh_xi, obj, "");
out:
	fs_fcache_put(obj);
	fs_fcache_put(fe);
	return status;
}

uint32_t nfs4_op_lookupp(struct nfs4_compound *cp)
{
	struct nfs4_fh *cur = &cp->cp_cur;
	struct fs_fentry local, plocal, *fe = NULL, *parent = NULL;
	struct stat dst, st;
	uint32_t status;
	int err;

	if (!cur->fh_len)
		return NFS4ERR_NOFILEHANDLE;
	if (cur->fh_pseudo) {
		if (cur->fh_depth == 0)
			return NFS4ERR_NOENT;
		fh_set_pseudo(cp, cur, cur->fh_xi, cur->fh_depth - 1);
		return NFS4_OK;
	}
	status = nfs4_op_begin(cp, cur, false);
	if (!status)
		status = nfs4_cur_dir(cp, cur, &local, &fe, &dst);
	if (status)
		goto out;
	if (fs_is_root(cp->cp_c.c_exp, &dst)) {
		unsigned nc = path_ncomp(cp->cp_c.c_exp->ex_path);

		status = nc == 0 ? NFS4ERR_NOENT : NFS4_OK;
		if (!status)
			fh_set_pseudo(cp, cur, cur->fh_xi, nc - 1);
		goto out;
	}
	err = fs_become_caller(&cp->cp_c);
	if (!err)
		err = fs_lookup(&cp->cp_c, fe, &dst, "..", &plocal, &parent, &st);
	if (err) {
		status = nfs4_errno(err);
		goto out;
	}
	status = nfs4_fh_set_real(cp, cur, cur->fh_xi, parent, "");
out:
	fs_fcache_put(parent);
	fs_fcache_put(fe);
	return status;
}

uint32_t nfs4_op_getattr(struct nfs4_compound *cp)
{
	uint32_t req[NFS4_BITMAP_WORDS], nreq, status;
	struct fs_fentry local, *fe = NULL;
	struct nfs4_attr_src src;
	struct stat st;

	nreq = nfs4_get_bitmap(cp->cp_args, req, NFS4_BITMAP_WORDS);
	if (!rpcrdma_xdr_ok(cp->cp_args))
		return NFS4ERR_BADXDR;
	if (!cp->cp_cur.fh_len)
		return NFS4ERR_NOFILEHANDLE;
	if (cp->cp_cur.fh_pseudo) {
		nfs4_fh_pseudo_stat(cp, &cp->cp_cur, &st);
		nfs4_attr_src_init(cp, &src, &st, &cp->cp_cur, NULL);
		return nfs4_encode_fattr(cp->cp_res, req, nreq, &src);
	}
	status = nfs4_op_begin(cp, &cp->cp_cur, false);
	if (!status)
		status = nfs4_cur_obj(cp, &cp->cp_cur, &local, &fe, &st);
	if (!status) {
		nfs4_attr_src_init(cp, &src, &st, &cp->cp_cur, fe);
		status = nfs4_encode_fattr(cp->cp_res, req, nreq, &src);
	}
	fs_fcache_put(fe);
	return status;
}

uint32_t nfs4_op_access(struct nfs4_compound *cp)
{
	struct fs_fentry local, *fe = NULL;
	uint32_t want, sup, ok = 0, status;
	struct stat st;
	bool dir;
	int err;

	want = rpcrdma_xdr_get_u32(cp->cp_args);
	if (!rpcrdma_xdr_ok(cp->cp_args))
		return NFS4ERR_BADXDR;
	if (!cp->cp_cur.fh_len)
		return NFS4ERR_NOFILEHANDLE;
	want &= ACCESS4_READ | ACCESS4_LOOKUP | ACCESS4_MODIFY | ACCESS4_EXTEND |
		ACCESS4_DELETE | ACCESS4_EXECUTE;
	if (cp->cp_cur.fh_pseudo) {
		rpcrdma_xdr_put_u32(cp->cp_res, want);
		rpcrdma_xdr_put_u32(cp->cp_res, want & (ACCESS4_READ | ACCESS4_LOOKUP));
		return NFS4_OK;
	}
	status = nfs4_op_begin(cp, &cp->cp_cur, false);
	if (!status)
		status = nfs4_cur_obj(cp, &cp->cp_cur, &local, &fe, &st);
	if (status)
		goto out;
	err = fs_become_caller(&cp->cp_c);
	if (err) {
		status = nfs4_errno(err);
		goto out;
	}
	dir = S_ISDIR(st.st_mode);
	/* LOOKUP and DELETE concern directories, EXECUTE other objects */
	sup = want & (dir ? ~ACCESS4_EXECUTE : ~(ACCESS4_LOOKUP | ACCESS4_DELETE));
#define CAN(m) (fs_access(&cp->cp_c, fe, &st, (m)) == 0)
	if ((sup & ACCESS4_READ) && CAN(R_OK))
		ok |= ACCESS4_READ;
	if ((sup & ACCESS4_LOOKUP) && CAN(X_OK))
		ok |= ACCESS4_LOOKUP;
	if ((sup & (ACCESS4_MODIFY | ACCESS4_EXTEND | ACCESS4_DELETE)) && !cp->cp_c.c_ro &&
	    CAN(dir ? (W_OK | X_OK) : W_OK))
		ok |= sup & (ACCESS4_MODIFY | ACCESS4_EXTEND | ACCESS4_DELETE);
	if ((sup & ACCESS4_EXECUTE) && CAN(X_OK))
		ok |= ACCESS4_EXECUTE;
#undef CAN
	rpcrdma_xdr_put_u32(cp->cp_res, sup);
	rpcrdma_xdr_put_u32(cp->cp_res, ok);
out:
	fs_fcache_put(fe);
	return status;
}

uint32_t nfs4_op_secinfo_no_name(struct nfs4_compound *cp)
{
	uint32_t style = rpcrdma_xdr_get_u32(cp->cp_args);

	if (!rpcrdma_xdr_ok(cp->cp_args))
		return NFS4ERR_BADXDR;
	if (style != SECINFO_STYLE4_CURRENT_FH && style != SECINFO_STYLE4_PARENT)
		return NFS4ERR_INVAL;
	if (!cp->cp_cur.fh_len)
		return NFS4ERR_NOFILEHANDLE;
	rpcrdma_xdr_put_u32(cp->cp_res, 1);
	rpcrdma_xdr_put_u32(cp->cp_res, NFS4_AUTH_SYS);
	/* the current handle is consumed (RFC 8881 18.45.3) */
	cp->cp_cur.fh_len = 0;
	return NFS4_OK;
}

uint32_t nfs4_op_setattr(struct nfs4_compound *cp)
{
	struct fs_fentry local, *fe = NULL;
	struct nfs4_stateid sid;
	struct nfs4_sattr sa;
	uint32_t status, access, none[NFS4_BITMAP_WORDS] = { 0 };
	struct stat st;
	int err;

	cp->cp_keep_body = true; /* attrsset follows the status, even an error */
	nfs4_get_stateid(cp->cp_args, &sid);
	status = nfs4_decode_sattr(cp->cp_args, &sa);
	if (!status && !rpcrdma_xdr_ok(cp->cp_args))
		status = NFS4ERR_BADXDR;
	if (status)
		goto out_none;
	if (!cp->cp_cur.fh_len) {
		status = NFS4ERR_NOFILEHANDLE;
		goto out_none;
	}
	status = nfs4_op_begin(cp, &cp->cp_cur, true);
	if (!status)
		status = nfs4_cur_obj(cp, &cp->cp_cur, &local, &fe, &st);
	if (status)
		goto out_none;
	if (sa.sa3.sa_set_size) {
		status = nfs4_open_find(cp->cp_srv->s4_state, cp->cp_clientid, &sid,
					cp->cp_cur.fh_data, cp->cp_cur.fh_len, &access);
		if (!status && nfs4_stateid_special(&sid))
			status = nfs4_special_write(cp, access);
		else if (!status && !(access & OPEN4_SHARE_ACCESS_WRITE))
			status = NFS4ERR_OPENMODE;
		if (status)
			goto out_none;
	}
	err = fs_become_caller(&cp->cp_c);
	if (!err)
		err = fs_setattr(&cp->cp_c, fe, &st, &sa.sa3, false);
	if (!err) /* commit_metadata of sync entries on a disk (fs_commit.c) */
		err = fs_commit_obj(&cp->cp_c, fe);
	if (err) {
		status = nfs4_errno(err);
		goto out_none;
	}
	fs_fcache_put(fe);
	nfs4_put_bitmap(cp->cp_res, sa.sa_set, NFS4_BITMAP_WORDS);
	return NFS4_OK;
out_none:
	fs_fcache_put(fe);
	nfs4_put_bitmap(cp->cp_res, none, NFS4_BITMAP_WORDS);
	return status;
}
