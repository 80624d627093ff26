// SPDX-License-Identifier: MIT
/*
 * nfsc_dirop.c - the NFSv3 procedures that name an entry in a directory
 * (RFC 1813 sections 3.3.3, 3.3.8-3.3.15): LOOKUP, CREATE, MKDIR,
 * SYMLINK, MKNOD, REMOVE, RMDIR, RENAME and LINK, and path lookup.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "nfsc/nfsc_internal.h"

/* Make the call unless encoding already failed (@rc); free it either way. */
static int nk_call_free(struct rpcrdma_nfsc *nc, struct nfsc_call *k, int rc)
{
	if (!rc)
		rc = nk_call(nc, k);
	free(k);
	return rc;
}

int rpcrdma_nfsc_lookup(struct rpcrdma_nfsc *nc, const struct rpcrdma_nfsc_fh *dir,
			const char *name, struct rpcrdma_nfsc_fh *fh,
			struct rpcrdma_nfsc_attr *attr)
{
	struct nfsc_call *k = nk_new(NFSPROC3_LOOKUP);
	bool have_attr;
	int rc;

	if (!k)
		return -ENOMEM;
	rc = nfsc_put_dirop(&k->nk_args, dir, name);
	if (!rc)
		rc = nk_call(nc, k);
	if (!rc) {
		if (!nfsc_get_fh(&k->nk_res, fh)) {
			rc = -EBADMSG;
			goto out;
		}
		have_attr = nfsc_get_post_op_attr(&k->nk_res, attr);
		if (!rpcrdma_xdr_ok(&k->nk_res))
			rc = -EBADMSG;
		else if (attr && !have_attr)
			rc = rpcrdma_nfsc_getattr(nc, fh, attr);
	}
out:
	free(k);
	return rc;
}

int rpcrdma_nfsc_lookup_path(struct rpcrdma_nfsc *nc, const char *path,
			     struct rpcrdma_nfsc_fh *fh, struct rpcrdma_nfsc_attr *attr)
{
	struct rpcrdma_nfsc_fh cur = nc->nc_root, next;
	char name[NFSC_NAME_MAX + 1];
	const char *p = path, *e;
	int rc;

	for (;;) {
		while (*p == '/')
			p++;
		if (!*p)
			break;
		e = strchr(p, '/');
		if (!e)
			e = p + strlen(p);
		if ((size_t)(e - p) > NFSC_NAME_MAX)
			return -ENAMETOOLONG;
		memcpy(name, p, (size_t)(e - p));
		name[e - p] = '\0';
		p = e;
		if (!strcmp(name, "."))
			continue;
		rc = rpcrdma_nfsc_lookup(nc, &cur, name, &next, NULL);
		if (rc)
			return rc;
		cur = next;
	}
	*fh = cur;
	return attr ? rpcrdma_nfsc_getattr(nc, fh, attr) : 0;
}

/*
 * CREATE, MKDIR and SYMLINK: make the call unless encoding failed (@rc),
 * then take the new handle from the results (post_op_fh3, post_op_attr,
 * wcc_data) into @fh, or LOOKUP it when the server left it out.
 */
static int nk_call_diropres(struct rpcrdma_nfsc *nc, struct nfsc_call *k, int rc,
			    const struct rpcrdma_nfsc_fh *dir, const char *name,
			    struct rpcrdma_nfsc_fh *fh)
{
	struct rpcrdma_nfsc_fh tmp;
	bool have;

	if (!rc)
		rc = nk_call(nc, k);
	if (!rc) {
		have = nfsc_get_post_op_fh(&k->nk_res, fh ? fh : &tmp);
		if (!rpcrdma_xdr_ok(&k->nk_res))
			rc = -EBADMSG;
		else if (!have && fh)
			rc = rpcrdma_nfsc_lookup(nc, dir, name, fh, NULL);
	}
	free(k);
	return rc;
}

int rpcrdma_nfsc_create(struct rpcrdma_nfsc *nc, const struct rpcrdma_nfsc_fh *dir,
			const char *name, uint32_t mode, bool truncate,
			struct rpcrdma_nfsc_fh *fh)
{
	struct nfsc_call *k = nk_new(NFSPROC3_CREATE);
	int rc;

	if (!k)
		return -ENOMEM;
	rc = nfsc_put_dirop(&k->nk_args, dir, name);
	rpcrdma_xdr_put_u32(&k->nk_args, NFS3_UNCHECKED);
	nfsc_put_sattr(&k->nk_args, true, mode, truncate);
	return nk_call_diropres(nc, k, rc, dir, name, fh);
}

int rpcrdma_nfsc_mkdir(struct rpcrdma_nfsc *nc, const struct rpcrdma_nfsc_fh *dir,
		       const char *name, uint32_t mode, struct rpcrdma_nfsc_fh *fh)
{
	struct nfsc_call *k = nk_new(NFSPROC3_MKDIR);
	int rc;

	if (!k)
		return -ENOMEM;
	rc = nfsc_put_dirop(&k->nk_args, dir, name);
	nfsc_put_sattr(&k->nk_args, true, mode, false);
	return nk_call_diropres(nc, k, rc, dir, name, fh);
}

int rpcrdma_nfsc_symlink(struct rpcrdma_nfsc *nc, const struct rpcrdma_nfsc_fh *dir,
			 const char *name, const char *target)
{
	size_t tlen = strlen(target);
	struct nfsc_call *k;
	int rc;

	if (tlen >= NFSC_PATH_MAX)
		return -ENAMETOOLONG;
	k = nk_new(NFSPROC3_SYMLINK);
	if (!k)
		return -ENOMEM;
	rc = nfsc_put_dirop(&k->nk_args, dir, name);
	nfsc_put_sattr(&k->nk_args, true, 0777, false);
	/* symlink_data: its length word ends ca_args, the bytes are DDP-eligible */
	rpcrdma_xdr_put_u32(&k->nk_args, (uint32_t)tlen);
	k->nk_ca.ca_ddp = target;
	k->nk_ca.ca_ddp_len = (uint32_t)tlen;
	return nk_call_diropres(nc, k, rc, dir, name, NULL);
}

int rpcrdma_nfsc_mknod(struct rpcrdma_nfsc *nc, const struct rpcrdma_nfsc_fh *dir,
		       const char *name, uint32_t type, uint32_t mode, uint32_t major,
		       uint32_t minor)
{
	struct nfsc_call *k;
	int rc;

	if (type != NFSC_CHR && type != NFSC_BLK && type != NFSC_SOCK && type != NFSC_FIFO)
		return -EINVAL;
	k = nk_new(NFSPROC3_MKNOD);
	if (!k)
		return -ENOMEM;
	rc = nfsc_put_dirop(&k->nk_args, dir, name);
	rpcrdma_xdr_put_u32(&k->nk_args, type);
	nfsc_put_sattr(&k->nk_args, true, mode, false);
	if (type == NFSC_CHR || type == NFSC_BLK) {
		rpcrdma_xdr_put_u32(&k->nk_args, major);
		rpcrdma_xdr_put_u32(&k->nk_args, minor);
	}
	return nk_call_free(nc, k, rc);
}

/* REMOVE and RMDIR: a diropargs3 and no results needed. */
static int remove_common(struct rpcrdma_nfsc *nc, uint32_t proc,
			 const struct rpcrdma_nfsc_fh *dir, const char *name)
{
	struct nfsc_call *k = nk_new(proc);

	if (!k)
		return -ENOMEM;
	return nk_call_free(nc, k, nfsc_put_dirop(&k->nk_args, dir, name));
}

int rpcrdma_nfsc_remove(struct rpcrdma_nfsc *nc, const struct rpcrdma_nfsc_fh *dir,
			const char *name)
{
	return remove_common(nc, NFSPROC3_REMOVE, dir, name);
}

int rpcrdma_nfsc_rmdir(struct rpcrdma_nfsc *nc, const struct rpcrdma_nfsc_fh *dir,
		       const char *name)
{
	return remove_common(nc, NFSPROC3_RMDIR, dir, name);
}

int rpcrdma_nfsc_rename(struct rpcrdma_nfsc *nc, const struct rpcrdma_nfsc_fh *from_dir,
			const char *from, const struct rpcrdma_nfsc_fh *to_dir,
			const char *to)
{
	struct nfsc_call *k = nk_new(NFSPROC3_RENAME);
	int rc;

	if (!k)
		return -ENOMEM;
	rc = nfsc_put_dirop(&k->nk_args, from_dir, from);
	nfsc_put_fh(&k->nk_args, to_dir);
	if (!rc)
		rc = nfsc_put_name(&k->nk_args, to);
	return nk_call_free(nc, k, rc);
}

int rpcrdma_nfsc_link(struct rpcrdma_nfsc *nc, const struct rpcrdma_nfsc_fh *fh,
		      const struct rpcrdma_nfsc_fh *dir, const char *name)
{
	struct nfsc_call *k = nk_new(NFSPROC3_LINK);

	if (!k)
		return -ENOMEM;
	nfsc_put_fh(&k->nk_args, fh);
	return nk_call_free(nc, k, nfsc_put_dirop(&k->nk_args, dir, name));
}
