// SPDX-License-Identifier: MIT
/*
 * nlm_fh.c - the one place the lock manager meets the file-serving layer
 * (src/fs): an NFS file handle of an export made into a lock description
 * the lock manager can lock through, under the export's rules for the
 * caller, as knfsd's lockd opens files through nfsd_open(): the export the
 * handle names must list the caller, a ro entry allows no write access,
 * and the caller's squashed identity must have the access the lock needs.
 * NLM SHARE's reservations join the layer's table here too
 * (nlm_fs_share()), where NFSv4.1 opens and other servers meet them, and
 * the grace period of the export's other gateways is asked here
 * (rpcrdma_nlm_nfs3_cluster_grace()).
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>

#include "nlm_internal.h" /* fs/fs.h, and through it <rpcrdma/nfs3.h> */

/* @who's identity as the export entry @opts squashes it (fs_cred_from_req
 * on a call header made of it).  Return: 0, or -EPERM (flavor refused). */
static int caller_cred(const struct rpcrdma_nfs3_xopts *opts,
		       const struct rpcrdma_nlm_caller *who, struct fs_cred *cr)
{
	struct rpcrdma_svc_req req;
	struct rpcrdma_rpc_authsys *as = &req.rq_msg.rm_authsys;

	memset(&req, 0, sizeof(req));
	req.rq_msg.rm_cred_flavor = who->nc_flavor;
	if (who->nc_flavor == RPC_AUTH_SYS) {
		if (who->nc_ngids > RPC_AUTH_SYS_MAX_GIDS)
			return -EPERM;
		req.rq_msg.rm_has_authsys = true;
		as->as_uid = who->nc_uid;
		as->as_gid = who->nc_gid;
		as->as_ngids = who->nc_ngids;
		memcpy(as->as_gids, who->nc_gids, who->nc_ngids * sizeof(as->as_gids[0]));
	}
	return fs_cred_from_req(opts, &req, cr) ? -EPERM : 0;
}

/*
 * Whether the caller (fs_become_caller() done) has access @acc to regular
 * file @fe, as an open for it checks: fs_open() takes one direction at a
 * time, so O_RDWR is read, then write.  Return: 0 or fs_open()'s errors.
 */
static int caller_may(struct fs_call *c, struct fs_fentry *fe,
		      const struct stat *st, int acc)
{
	int err;

	if (acc != O_RDWR)
		return fs_open(c, fe, st, acc);
	err = fs_open(c, fe, st, O_RDONLY);
	return err ? err : fs_open(c, fe, st, O_WRONLY);
}

int rpcrdma_nlm_nfs3_open(void *server, const struct rpcrdma_nlm_caller *who,
			  const uint8_t *fh, uint32_t len, int acc,
			  struct rpcrdma_nlm_file *file)
{
	struct rpcrdma_nfs3_server *srv = server;
	struct rpcrdma_nfs3_xopts opts;
	struct fs_fentry local, *fe = NULL;
	struct fs_call c;
	struct fs_snap *sn;
	struct stat st;
	unsigned id, i;
	int ldacc, err;

	memset(file, 0, sizeof(*file));
	acc &= O_ACCMODE;
	if (len < FS_FH_OVERHEAD || fh[0] != FS_FH_VERSION)
		return -EBADMSG;
	if (!who || !who->nc_peer)
		return -EACCES;
	id = (uint32_t)fh[2] << 8 | fh[3];
	sn = fs_snap_get(srv);
	i = fs_snap_index(sn, id);
	if (i == sn->sn_xt->xt_n) {
		err = -ESTALE;
		goto out;
	}
	/* the export's client list, then its ro, before the handle is
	 * looked at: a host not listed learns nothing about the file */
	if (!rpcrdma_nfs3_exports_match(sn->sn_xt, i, who->nc_peer, &opts)) {
		err = -EACCES;
		goto out;
	}
	memset(&c, 0, sizeof(c));
	c.c_srv = srv;
	c.c_exp = sn->sn_exp[i];
	c.c_ro = opts.xo_ro;
	c.c_modifies = acc != O_RDONLY;
	err = caller_cred(&opts, who, &c.c_cred);
	if (err)
		goto out;
	if (c.c_ro && c.c_modifies) {
		err = -EROFS;
		goto out;
	}
	/* the handle as the server, the MAC and the export's own checks */
	fs_cred_restore();
	err = fs_open_handle(&c, fh, len, &local, &fe, &st);
	if (err)
		goto out;
	if (!S_ISREG(st.st_mode)) {
		err = S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
		goto out;
	}
	/* the caller's access, as an open for it checks */
	err = fs_become_caller(&c);
	if (err)
		goto out_restore;
	err = caller_may(&c, fe, &st, acc);
	if (err)
		goto out_restore;
	/* the lock description: opened by the server (be_lock_open), the
	 * caller's access being checked */
	err = fs_lock_open(&c, fe, &file->nf_ld, &ldacc);
	if (err)
		goto out_restore;
	file->nf_dev = st.st_dev;
	file->nf_ino = st.st_ino;
	file->nf_srv = srv;
out_restore:
	fs_cred_restore();
out:
	fs_fcache_put(fe);
	fs_snap_put(sn);
	return err;
}

int rpcrdma_nlm_nfs3_cluster_grace(void *server, const uint8_t *fh, uint32_t len)
{
	struct fs_snap *sn;
	unsigned i;
	int in = 0;

	if (len < FS_FH_OVERHEAD || fh[0] != FS_FH_VERSION)
		return 0;
	sn = fs_snap_get(server);
	i = fs_snap_index(sn, (uint32_t)fh[2] << 8 | fh[3]);
	if (i < sn->sn_xt->xt_n)
		in = fs_cluster_grace(sn->sn_exp[i]);
	fs_snap_put(sn);
	return in;
}

int nlm_fs_share(struct rpcrdma_nfs3_server *srv, const uint8_t *fh, uint32_t len,
		 uint64_t id, uint32_t access, uint32_t mode)
{
	struct fs_call c;
	struct fs_snap *sn;
	unsigned i;
	int err;

	if (len < FS_FH_OVERHEAD || fh[0] != FS_FH_VERSION)
		return -EBADMSG;
	sn = fs_snap_get(srv);
	i = fs_snap_index(sn, (uint32_t)fh[2] << 8 | fh[3]);
	if (i == sn->sn_xt->xt_n) {
		fs_snap_put(sn);
		return -ESTALE;
	}
	/* the caller's rights were checked by the open (SHARE's file_open) */
	memset(&c, 0, sizeof(c));
	c.c_srv = srv;
	c.c_exp = sn->sn_exp[i];
	err = fs_share_set_fh(&c, NULL, fh, len, fs_share_owner(FS_SHARE_TAG_NLM, id),
			      access, mode);
	fs_snap_put(sn);
	return err;
}

void nlm_fs_unshare(struct rpcrdma_nfs3_server *srv, uint64_t id)
{
	fs_share_drop(srv, fs_share_owner(FS_SHARE_TAG_NLM, id));
}
