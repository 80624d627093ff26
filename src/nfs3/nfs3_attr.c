// SPDX-License-Identifier: MIT
/*
 * nfs3_attr.c - the attribute procedures of NFS version 3: GETATTR, SETATTR,
 * ACCESS (RFC 1813 3.3.1, 3.3.2, 3.3.4) and FSSTAT, FSINFO, PATHCONF
 * (3.3.18 to 3.3.20).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nfs3_internal.h"

int nfs3_proc_getattr(struct fs_call *c)
{
	const uint8_t *fh;
	uint32_t fhlen;
	struct fs_fentry local, *fe;
	struct stat st;
	int err;

	fh = nfs3_get_fh(c->c_args, &fhlen);
	if (!rpcrdma_xdr_ok(c->c_args))
		return RPCRDMA_SVC_GARBAGE_ARGS;
	err = fs_get_file(c, fh, fhlen, &local, &fe, &st);
	rpcrdma_xdr_put_u32(c->c_res, nfs3_errno_to_stat(err));
	if (!err)
		nfs3_put_fattr(c->c_res, c->c_exp, &st);
	fs_fcache_put(fe);
	return RPCRDMA_SVC_SUCCESS;
}

int nfs3_proc_setattr(struct fs_call *c)
{
	const uint8_t *fh;
	uint32_t fhlen;
	struct fs_sattr sa;
	struct timespec guard = { 0 };
	bool check;
	struct stat pre, post;
	struct fs_fentry local, *fe = NULL;
	int err;

	fh = nfs3_get_fh(c->c_args, &fhlen);
	nfs3_get_sattr(c->c_args, &sa);
	check = rpcrdma_xdr_get_bool(c->c_args);
	if (check)
		nfs3_get_time(c->c_args, &guard);
	if (!rpcrdma_xdr_ok(c->c_args))
		return RPCRDMA_SVC_GARBAGE_ARGS;
	if (sa.sa_set_size && c->c_nowait && !fs_never_waits(c->c_exp)) {
		/* freeing a large file's blocks may wait: on a worker */
		c->c_defer = true;
		return RPCRDMA_SVC_SUCCESS;
	}

	err = fs_get_file(c, fh, fhlen, &local, &fe, &pre);
	if (err) {
		fe = NULL;
		goto out;
	}
	if (check && (pre.st_ctim.tv_sec != guard.tv_sec ||
		      pre.st_ctim.tv_nsec != guard.tv_nsec)) {
		rpcrdma_xdr_put_u32(c->c_res, NFS3ERR_NOT_SYNC);
		nfs3_put_wcc(c->c_res, c->c_exp, &pre, &pre);
		goto out_put;
	}
	/* a new size: NFSv4.1 delegations of the file are recalled first */
	err = sa.sa_set_size ? fs_change_check(c, fh, fhlen) : 0;
	if (!err)
		err = fs_become_caller(c);
	if (!err)
		err = fs_setattr(c, fe, &pre, &sa, false);
	if (!err) /* commit_metadata of sync entries on a disk */
		err = fs_commit_obj(c, fe);
out:
	rpcrdma_xdr_put_u32(c->c_res, nfs3_errno_to_stat(err));
	if (fe && fs_getattr(c, fe, &post) == 0)
		nfs3_put_wcc(c->c_res, c->c_exp, &pre, &post);
	else
		nfs3_put_wcc(c->c_res, c->c_exp, NULL, NULL);
out_put:
	fs_fcache_put(fe);
	return RPCRDMA_SVC_SUCCESS;
}

/*
 * access_bits - the ACCESS bits of @want the caller (fs_become_caller()
 * done) has on @fe (attributes @st), one fs_access() per permission asked
 * (RFC 1813 3.3.4): a directory's LOOKUP is search, its MODIFY, EXTEND and
 * DELETE ask for write and search; a file's EXECUTE is execute.
 */
static uint32_t access_bits(struct fs_call *c, struct fs_fentry *fe,
			    const struct stat *st, uint32_t want)
{
	uint32_t got = 0;

	if ((want & NFS3_ACCESS_READ) && fs_access(c, fe, st, R_OK) == 0)
		got |= NFS3_ACCESS_READ;
	if (S_ISDIR(st->st_mode)) {
		if ((want & NFS3_ACCESS_LOOKUP) && fs_access(c, fe, st, X_OK) == 0)
			got |= NFS3_ACCESS_LOOKUP;
		if ((want & (NFS3_ACCESS_MODIFY | NFS3_ACCESS_EXTEND |
			     NFS3_ACCESS_DELETE)) &&
		    fs_access(c, fe, st, W_OK | X_OK) == 0)
			got |= want & (NFS3_ACCESS_MODIFY | NFS3_ACCESS_EXTEND |
				       NFS3_ACCESS_DELETE);
	} else {
		if ((want & (NFS3_ACCESS_MODIFY | NFS3_ACCESS_EXTEND)) &&
		    fs_access(c, fe, st, W_OK) == 0)
			got |= want & (NFS3_ACCESS_MODIFY | NFS3_ACCESS_EXTEND);
		if ((want & NFS3_ACCESS_EXECUTE) && fs_access(c, fe, st, X_OK) == 0)
			got |= NFS3_ACCESS_EXECUTE;
	}
	return got;
}

int nfs3_proc_access(struct fs_call *c)
{
	const uint8_t *fh;
	uint32_t fhlen, want, got = 0;
	struct fs_fentry local, *fe = NULL;
	struct stat st;
	bool have_attr = false;
	int err;

	fh = nfs3_get_fh(c->c_args, &fhlen);
	want = rpcrdma_xdr_get_u32(c->c_args);
	if (!rpcrdma_xdr_ok(c->c_args))
		return RPCRDMA_SVC_GARBAGE_ARGS;
	/* files and directories through their caches (a hit: one getattr) */
	err = fs_get_file(c, fh, fhlen, &local, &fe, &st);
	if (!err) {
		have_attr = true;
		err = fs_become_caller(c);
	} else {
		fe = NULL;
	}
	if (!err)
		got = access_bits(c, fe, &st, want);
	/* a ro export entry grants no change, whatever the modes say */
	if (c->c_ro)
		got &= ~(NFS3_ACCESS_MODIFY | NFS3_ACCESS_EXTEND | NFS3_ACCESS_DELETE);
	rpcrdma_xdr_put_u32(c->c_res, nfs3_errno_to_stat(err));
	nfs3_put_post_op_attr(c->c_res, c->c_exp, have_attr ? &st : NULL);
	if (!err)
		rpcrdma_xdr_put_u32(c->c_res, got);
	fs_fcache_put(fe);
	return RPCRDMA_SVC_SUCCESS;
}

/*
 * FSSTAT, FSINFO, PATHCONF: a handle in, attributes and numbers out.  The
 * object is decoded for this call only (fs_open_handle(), into @local:
 * release *@fep with fs_fcache_put()); on an error the result's status
 * and empty post_op_attr are encoded here.  Return: 0, or not 0 with
 * *@accept the accept status to return (GARBAGE_ARGS, or SUCCESS with the
 * error encoded).
 */
static int get_object(struct fs_call *c, struct fs_fentry *local,
		     struct fs_fentry **fep, struct stat *st, int *accept)
{
	const uint8_t *fh;
	uint32_t fhlen;
	int err;

	*fep = NULL;
	fh = nfs3_get_fh(c->c_args, &fhlen);
	if (!rpcrdma_xdr_ok(c->c_args)) {
		*accept = RPCRDMA_SVC_GARBAGE_ARGS;
		return -EINVAL;
	}
	*accept = RPCRDMA_SVC_SUCCESS;
	err = fs_open_handle(c, fh, fhlen, local, fep, st);
	if (err) {
		*fep = NULL;
		rpcrdma_xdr_put_u32(c->c_res, nfs3_errno_to_stat(err));
		nfs3_put_post_op_attr(c->c_res, c->c_exp, NULL);
	}
	return err;
}

int nfs3_proc_fsstat(struct fs_call *c)
{
	struct fs_statfs sf;
	struct fs_fentry local, *fe;
	struct stat st;
	int accept, err;

	if (get_object(c, &local, &fe, &st, &accept))
		return accept;
	err = fs_statfs(c, fe, &sf);
	if (err) {
		rpcrdma_xdr_put_u32(c->c_res, nfs3_errno_to_stat(err));
		nfs3_put_post_op_attr(c->c_res, c->c_exp, &st);
		goto out;
	}
	rpcrdma_xdr_put_u32(c->c_res, NFS3_OK);
	nfs3_put_post_op_attr(c->c_res, c->c_exp, &st);
	rpcrdma_xdr_put_u64(c->c_res, sf.sf_bytes);  /* tbytes */
	rpcrdma_xdr_put_u64(c->c_res, sf.sf_bfree);  /* fbytes */
	rpcrdma_xdr_put_u64(c->c_res, sf.sf_bavail); /* abytes */
	rpcrdma_xdr_put_u64(c->c_res, sf.sf_files);  /* tfiles */
	rpcrdma_xdr_put_u64(c->c_res, sf.sf_ffree);  /* ffiles */
	rpcrdma_xdr_put_u64(c->c_res, sf.sf_favail); /* afiles */
	rpcrdma_xdr_put_u32(c->c_res, 0); /* invarsec: may change any time */
out:
	fs_fcache_put(fe);
	return RPCRDMA_SVC_SUCCESS;
}

int nfs3_proc_fsinfo(struct fs_call *c)
{
	struct fs_fentry local, *fe;
	struct stat st;
	uint32_t max = c->c_exp->ex_max_payload;
	uint32_t pref = max, wmax = max;
	int accept;

	if (get_object(c, &local, &fe, &st, &accept))
		return accept;
	/* over TCP: 256 KiB preferred, and the most a WRITE should carry
	 * (NFS3_TCP_PREF_IO says why) */
	if (c->c_req && !rpcrdma_svc_req_ddp(c->c_req) && pref > NFS3_TCP_PREF_IO)
		pref = wmax = NFS3_TCP_PREF_IO;
	rpcrdma_xdr_put_u32(c->c_res, NFS3_OK);
	nfs3_put_post_op_attr(c->c_res, c->c_exp, &st);
	rpcrdma_xdr_put_u32(c->c_res, max);     /* rtmax */
	rpcrdma_xdr_put_u32(c->c_res, pref);    /* rtpref */
	rpcrdma_xdr_put_u32(c->c_res, 4096);    /* rtmult */
	rpcrdma_xdr_put_u32(c->c_res, wmax);    /* wtmax */
	rpcrdma_xdr_put_u32(c->c_res, pref);    /* wtpref */
	rpcrdma_xdr_put_u32(c->c_res, 4096);    /* wtmult */
	rpcrdma_xdr_put_u32(c->c_res, 65536);   /* dtpref */
	rpcrdma_xdr_put_u64(c->c_res, (uint64_t)INT64_MAX); /* maxfilesize */
	rpcrdma_xdr_put_u32(c->c_res, 0);       /* time_delta: 1 ns */
	rpcrdma_xdr_put_u32(c->c_res, 1);
	rpcrdma_xdr_put_u32(c->c_res, NFS3_FSF_LINK | NFS3_FSF_SYMLINK |
				      NFS3_FSF_HOMOGENEOUS | NFS3_FSF_CANSETTIME);
	fs_fcache_put(fe);
	return RPCRDMA_SVC_SUCCESS;
}

/*
 * PATHCONF (RFC 1813 3.3.20).  A limit the file system does not tell (or
 * a failed fs_statfs()) is answered as 32000 links and 255-byte names: no
 * error once the handle is good.
 */
int nfs3_proc_pathconf(struct fs_call *c)
{
	struct fs_statfs sf;
	struct fs_fentry local, *fe;
	struct stat st;
	uint32_t linkmax = 32000, namemax = 255;
	int accept;

	if (get_object(c, &local, &fe, &st, &accept))
		return accept;
	if (fs_statfs(c, fe, &sf) == 0) {
		if (sf.sf_linkmax > 0 && sf.sf_linkmax < UINT32_MAX)
			linkmax = sf.sf_linkmax;
		if (sf.sf_namemax > 0 && sf.sf_namemax <= 255)
			namemax = sf.sf_namemax;
	}
	rpcrdma_xdr_put_u32(c->c_res, NFS3_OK);
	nfs3_put_post_op_attr(c->c_res, c->c_exp, &st);
	rpcrdma_xdr_put_u32(c->c_res, linkmax);
	rpcrdma_xdr_put_u32(c->c_res, namemax);
	rpcrdma_xdr_put_u32(c->c_res, 1); /* no_trunc */
	rpcrdma_xdr_put_u32(c->c_res, 1); /* chown_restricted */
	rpcrdma_xdr_put_u32(c->c_res, 0); /* case_insensitive */
	rpcrdma_xdr_put_u32(c->c_res, 1); /* case_preserving */
	fs_fcache_put(fe);
	return RPCRDMA_SVC_SUCCESS;
}
