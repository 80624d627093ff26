// SPDX-License-Identifier: MIT
/*
 * nfs4_dir_ops.c - the directory operations of NFSv4.1: CREATE (RFC 8881
 * 18.4: directories, symlinks, devices, sockets, FIFOs), REMOVE (18.25),
 * RENAME (18.26), LINK (18.9), READLINK (18.24) and READDIR (18.23).
 * Each runs with the caller's identity on descriptors of the NFSv3
 * server's caches, as the NFSv3 procedures do (fs_file.c).  On a sync
 * export entry on a disk, CREATE, REMOVE, RENAME and LINK commit the
 * directories they changed before the reply (fs_commit.c, as NFSv3's
 * namespace procedures and knfsd's commit_metadata do); a failed fsync is
 * the operation's error.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <unistd.h>

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
	struct fs_fentry local, *fe = NULL;
	char target[NFS4_LINK_MAX + 1];
	uint32_t type, spec1 = 0, spec2 = 0, len, status;
	const uint8_t *lp = NULL;
	struct nfs4_sattr sa;
	struct fs_name n;
	struct stat dst, st;
	mode_t mode;
	int fd = -1, err, dirfd;

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
	dirfd = fe->fe_path;
	err = fs_become_caller(&cp->cp_c);
	if (err)
		goto out_err;
	mode = (sa.sa3.sa_set_mode ? sa.sa3.sa_mode : (type == NF4DIR ? 0755 : 0644)) & 07777;
	fs_cred_no_umask();
	switch (type) {
	case NF4DIR:
		err = mkdirat(dirfd, n.n_buf, mode);
		break;
	case NF4LNK:
		err = symlinkat(target, dirfd, n.n_buf);
		break;
	case NF4BLK:
		err = mknodat(dirfd, n.n_buf, S_IFBLK | mode, makedev(spec1, spec2));
		break;
	case NF4CHR:
		err = mknodat(dirfd, n.n_buf, S_IFCHR | mode, makedev(spec1, spec2));
		break;
	case NF4SOCK:
		err = mknodat(dirfd, n.n_buf, S_IFSOCK | mode, 0);
		break;
	default:
		err = mknodat(dirfd, n.n_buf, S_IFIFO | mode, 0);
		break;
	}
	if (err < 0) {
		err = -errno;
		goto out_err;
	}
	fd = openat(dirfd, n.n_buf, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0) {
		err = -errno;
		goto out_err;
	}
	/* owner, group, times; the mode went with the creation */
	sa.sa3.sa_set_size = false;
	err = fs_sattr_apply(&cp->cp_c, fd, &st, &sa.sa3, true, NULL);
	if (!err)
		err = fs_commit_dir(&cp->cp_c, fe);
	if (err)
		goto out_err;
	status = nfs4_fh_set_real(cp, &cp->cp_cur, cp->cp_cur.fh_xi, fd, "");
	if (status)
		goto out;
	nfs4_put_change_info(r, &dst, dirfd);
	sa.sa_set[0] &= ~(1u << FATTR4_SIZE);
	nfs4_put_bitmap(r, sa.sa_set, NFS4_BITMAP_WORDS);
	goto out;
out_err:
	status = nfs4_errno(err);
out:
	fs_close_fd(fd);
	fs_fcache_put(fe);
	return status;
}

uint32_t nfs4_op_remove(struct nfs4_compound *cp)
{
	struct fs_fentry local, *fe = NULL;
	uint8_t fh[RPCRDMA_NFS3_FHSIZE];
	uint32_t fhlen = 0, status;
	struct fs_name n;
	struct stat dst, st;
	bool have_fh;
	int err;

	status = nfs4_get_component(cp->cp_args, &n);
	if (status)
		return status;
	if (nfs4_recover_in_grace(cp->cp_srv->s4_recover, nfs4_mono_sec()))
		return NFS4ERR_GRACE; /* a file yet to be reclaimed stays */
	status = dir_begin(cp, &cp->cp_cur, true, &local, &fe, &dst);
	if (status)
		goto out;
	err = fs_become_caller(&cp->cp_c);
	if (!err && fstatat(fe->fe_path, n.n_buf, &st, AT_SYMLINK_NOFOLLOW) < 0)
		err = -errno;
	if (err)
		goto out_err;
	have_fh = fs_unlink_fh(&cp->cp_c, fe->fe_path, n.n_buf, fh, &fhlen);
	if (unlinkat(fe->fe_path, n.n_buf, S_ISDIR(st.st_mode) ? AT_REMOVEDIR : 0) < 0) {
		err = -errno;
		goto out_err;
	}
	if (have_fh)
		fs_fcache_forget(cp->cp_c.c_exp, fh, fhlen);
	err = fs_commit_dir(&cp->cp_c, fe);
	if (err)
		goto out_err;
	nfs4_put_change_info(cp->cp_res, &dst, fe->fe_path);
	goto out;
out_err:
	status = nfs4_errno(err);
out:
	fs_fcache_put(fe);
	return status;
}

uint32_t nfs4_op_rename(struct nfs4_compound *cp)
{
	struct fs_fentry sl, tl, *sfe = NULL, *tfe = NULL;
	uint8_t fh[RPCRDMA_NFS3_FHSIZE];
	uint32_t fhlen = 0, status;
	struct fs_name from, to;
	struct stat sdst, tdst;
	bool have_fh, two_dirs;
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
	err = fs_become_caller(&cp->cp_c);
	if (err)
		goto out_err;
	/* may the caller change both directories: the rename asks, or
	 * fs_rename() first when a name is in the way, as NFSv3's RENAME */
	two_dirs = sdst.st_dev != tdst.st_dev || sdst.st_ino != tdst.st_ino;
	err = fs_posix_rename(&cp->cp_c, sfe->fe_path, from.n_buf, tfe->fe_path, to.n_buf,
			two_dirs, fh, &fhlen, &have_fh);
	if (err)
		goto out_err;
	if (have_fh)
		fs_fcache_forget(cp->cp_c.c_exp, fh, fhlen);
	/* both directories, or the one once */
	err = fs_commit_dir(&cp->cp_c, sfe);
	if (!err && two_dirs)
		err = fs_commit_dir(&cp->cp_c, tfe);
	if (err)
		goto out_err;
	nfs4_put_change_info(cp->cp_res, &sdst, sfe->fe_path);
	nfs4_put_change_info(cp->cp_res, &tdst, tfe->fe_path);
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
	struct fs_fentry ol, dl, *ofe = NULL, *dfe = NULL;
	uint32_t status;
	struct fs_name n;
	struct stat ost, dst;
	char path[32];
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
	err = fs_become_caller(&cp->cp_c);
	if (!err)
		err = fs_dir_may_write(dfe->fe_path);
	if (err)
		goto out_err;
	fs_proc_path(path, sizeof(path), ofe->fe_path);
	if (linkat(AT_FDCWD, path, dfe->fe_path, n.n_buf, AT_SYMLINK_FOLLOW) < 0) {
		err = -errno;
		goto out_err;
	}
	err = fs_commit_dir(&cp->cp_c, dfe);
	if (err)
		goto out_err;
	nfs4_put_change_info(cp->cp_res, &dst, dfe->fe_path);
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
	n = readlinkat(fe->fe_path, "", buf, sizeof(buf));
	if (n < 0) {
		status = nfs4_errno(-errno);
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
		struct nfs4_attr_src src;
		struct stat st;
		bool dup = false;
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
		if (nfs4_fh_node(cp, &fh, j, dir->fh_depth + 1))
			continue;
		if (fh.fh_pseudo)
			nfs4_fh_pseudo_stat(cp, &fh, &st);
		else if (fstat(sn->sn_exp[j]->ex_fd, &st) < 0)
			continue;
		nfs4_attr_src_init(cp, &src, &st, &fh, fh.fh_pseudo ? -1 : sn->sn_exp[j]->ex_fd);
		if (put_entry(cp, start, budget, j + 3, name, req, nreq, &src)) {
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

uint32_t nfs4_op_readdir(struct nfs4_compound *cp)
{
	struct rpcrdma_xdr *a = cp->cp_args, *r = cp->cp_res;
	uint32_t req[NFS4_BITMAP_WORDS], nreq, dircount, maxcount, status;
	struct fs_fentry local, *fe = NULL;
	struct stat dst;
	uint64_t cookie;
	size_t start, budget;
	unsigned nent = 0;
	bool eof = false;
	char path[32];
	DIR *dir = NULL;
	int rfd, err;

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
	fs_proc_path(path, sizeof(path), fe->fe_path);
	rfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (rfd < 0) {
		err = -errno;
		goto out_err;
	}
	dir = fdopendir(rfd);
	if (!dir) {
		err = -errno;
		close(rfd);
		goto out_err;
	}
	if (cookie)
		seekdir(dir, (long)cookie);
	start = r->xs_pos;
	rpcrdma_xdr_put_u64(r, 0); /* cookieverf: cookies are positions */
	for (;;) {
		struct nfs4_attr_src src;
		struct nfs4_fh fh = { 0 };
		struct dirent *d;
		struct stat st;

		errno = 0;
		d = readdir(dir);
		if (!d) {
			if (errno) {
				err = -errno;
				r->xs_pos = start;
				goto out_err;
			}
			eof = true;
			break;
		}
		if (!strcmp(d->d_name, ".") || !strcmp(d->d_name, ".."))
			continue;
		memset(&st, 0, sizeof(st));
		nfs4_attr_src_init(cp, &src, &st, &fh, -1);
		if (fstatat(fe->fe_path, d->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			src.as_rdattr_error = nfs4_errno(-errno);
			st.st_ino = d->d_ino;
		} else {
			src.as_fd = fe->fe_path;
			if (st.st_dev == cp->cp_c.c_exp->ex_dev &&
			    nfs4_fh_set_real(cp, &fh, cp->cp_cur.fh_xi, fe->fe_path,
					     d->d_name) != NFS4_OK)
				fh.fh_len = 0;
		}
		if (entry_bytes(strlen(d->d_name)) > budget ||
		    put_entry(cp, start, budget, (uint64_t)d->d_off, d->d_name,
			      req, nreq, &src)) {
			if (nent == 0) {
				r->xs_pos = start;
				status = NFS4ERR_TOOSMALL;
				goto out;
			}
			break;
		}
		nent++;
	}
	rpcrdma_xdr_put_u32(r, 0);
	rpcrdma_xdr_put_u32(r, eof);
	goto out;
out_err:
	status = nfs4_errno(err);
out:
	if (dir)
		closedir(dir);
	fs_fcache_put(fe);
	return status;
}
