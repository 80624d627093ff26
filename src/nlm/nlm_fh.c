// SPDX-License-Identifier: MIT
/*
 * nlm_fh.c - the one place the lock manager meets the NFS server: an NFSv3
 * file handle of the export opened as a file the lock manager can lock,
 * under the export's rules for the caller, as knfsd's lockd opens files
 * through nfsd_open(): the export the handle names must list the caller,
 * a ro entry allows no write access, and the file is opened with the
 * caller's squashed identity and only the access the lock needs.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <rpcrdma/nfs3.h>
#include <rpcrdma/nlm.h>

#include "fs/fs.h"

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

int rpcrdma_nlm_nfs3_open(void *server, const struct rpcrdma_nlm_caller *who,
			  const uint8_t *fh, uint32_t len, int flags, int *fdp)
{
	struct rpcrdma_nfs3_server *srv = server;
	struct rpcrdma_nfs3_xopts opts;
	struct fs_call c;
	struct fs_snap *sn;
	struct stat st;
	unsigned id, i;
	int acc = flags & O_ACCMODE, pfd = -1, fd, err;

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
	/* the handle as the server (open_by_handle_at), the MAC and the
	 * export's own checks: fs_fh_open's */
	fs_cred_restore();
	err = fs_fh_open(c.c_exp, fh, len, &pfd, &st);
	if (err)
		goto out;
	if (!S_ISREG(st.st_mode)) {
		err = S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
		goto out;
	}
	/* reopen the O_PATH descriptor with the access mode, as the caller */
	err = fs_become_caller(&c);
	if (err)
		goto out_restore;
	fd = fs_reopen(&c, pfd, &st, acc | O_NOCTTY | O_NONBLOCK | (flags & O_CLOEXEC));
	if (fd < 0) {
		err = fd;
		goto out_restore;
	}
	*fdp = fd;
	err = 0;
out_restore:
	fs_cred_restore();
out:
	if (pfd >= 0)
		close(pfd);
	fs_snap_put(sn);
	return err;
}
