// SPDX-License-Identifier: MIT
/*
 * nfs3_attr.c - the attribute procedures of NFS version 3: GETATTR, SETATTR,
 * ACCESS (RFC 1813 3.3.1, 3.3.2, 3.3.4) and FSSTAT, FSINFO, PATHCONF
 * (3.3.18 to 3.3.20).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
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
	int fd = -1, err;

	fh = nfs3_get_fh(c->c_args, &fhlen);
	nfs3_get_sattr(c->c_args, &sa);
	check = rpcrdma_xdr_get_bool(c->c_args);
	if (check)
		nfs3_get_time(c->c_args, &guard);
	if (!rpcrdma_xdr_ok(c->c_args))
		return RPCRDMA_SVC_GARBAGE_ARGS;
	if (sa.sa_set_size && c->c_nowait && !c->c_exp->ex_mem_fs) {
		/* freeing a large file's blocks may wait: on a worker */
		c->c_defer = true;
		return RPCRDMA_SVC_SUCCESS;
	}

	err = fs_get_file(c, fh, fhlen, &local, &fe, &pre);
	if (err)
		goto out;
	fd = fe->fe_path;
	if (check && (pre.st_ctim.tv_sec != guard.tv_sec ||
		      pre.st_ctim.tv_nsec != guard.tv_nsec)) {
		rpcrdma_xdr_put_u32(c->c_res, NFS3ERR_NOT_SYNC);
		nfs3_put_wcc(c->c_res, c->c_exp, &pre, &pre);
		goto out_close;
	}
	/* a new size: NFSv4.1 delegations of the file are recalled first */
	err = sa.sa_set_size ? fs_change_check(c, fh, fhlen) : 0;
	if (!err)
		err = fs_become_caller(c);
	if (!err)
		err = fs_sattr_apply(c, fd, &pre, &sa, false, fe);
	if (!err) /* commit_metadata of sync entries on a disk */
		err = fs_commit_obj(c, fe);
out:
	rpcrdma_xdr_put_u32(c->c_res, nfs3_errno_to_stat(err));
	if (fd >= 0 && fstat(fd, &post) == 0)
		nfs3_put_wcc(c->c_res, c->c_exp, &pre, &post);
	else
		nfs3_put_wcc(c->c_res, c->c_exp, NULL, NULL);
out_close:
	fs_fcache_put(fe);
	return RPCRDMA_SVC_SUCCESS;
}

static uint32_t access_bits(int fd, const struct stat *st, uint32_t want)
{
	uint32_t got = 0;
	int fl = AT_EMPTY_PATH | AT_EACCESS;

	if ((want & NFS3_ACCESS_READ) && faccessat(fd, "", R_OK, fl) == 0)
		got |= NFS3_ACCESS_READ;
	if (S_ISDIR(st->st_mode)) {
		if ((want & NFS3_ACCESS_LOOKUP) && faccessat(fd, "", X_OK, fl) == 0)
			got |= NFS3_ACCESS_LOOKUP;
		if ((want & (NFS3_ACCESS_MODIFY | NFS3_ACCESS_EXTEND |
			     NFS3_ACCESS_DELETE)) &&
		    faccessat(fd, "", W_OK | X_OK, fl) == 0)
			got |= want & (NFS3_ACCESS_MODIFY | NFS3_ACCESS_EXTEND |
				       NFS3_ACCESS_DELETE);
	} else {
		if ((want & (NFS3_ACCESS_MODIFY | NFS3_ACCESS_EXTEND)) &&
		    faccessat(fd, "", W_OK, fl) == 0)
			got |= want & (NFS3_ACCESS_MODIFY | NFS3_ACCESS_EXTEND);
		if ((want & NFS3_ACCESS_EXECUTE) && faccessat(fd, "", X_OK, fl) == 0)
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
	int fd = -1, err;

	fh = nfs3_get_fh(c->c_args, &fhlen);
	want = rpcrdma_xdr_get_u32(c->c_args);
	if (!rpcrdma_xdr_ok(c->c_args))
		return RPCRDMA_SVC_GARBAGE_ARGS;
	/* files and directories through their caches (one fstat on a hit) */
	err = fs_get_file(c, fh, fhlen, &local, &fe, &st);
	if (!err) {
		fd = fe->fe_path;
		err = fs_become_caller(c);
	}
	if (!err)
		got = access_bits(fd, &st, want);
	/* a ro export entry grants no change, whatever the modes say */
	if (c->c_ro)
		got &= ~(NFS3_ACCESS_MODIFY | NFS3_ACCESS_EXTEND | NFS3_ACCESS_DELETE);
	rpcrdma_xdr_put_u32(c->c_res, nfs3_errno_to_stat(err));
	nfs3_put_post_op_attr(c->c_res, c->c_exp, fd >= 0 ? &st : NULL);
	if (!err)
		rpcrdma_xdr_put_u32(c->c_res, got);
	fs_fcache_put(fe);
	return RPCRDMA_SVC_SUCCESS;
}

/* FSSTAT, FSINFO, PATHCONF: a handle in, attributes and numbers out. */
static int nfs3_fs_open(struct fs_call *c, int *fdp, struct stat *st,
		   int *accept)
{
	const uint8_t *fh;
	uint32_t fhlen;
	int err;

	*fdp = -1;
	fh = nfs3_get_fh(c->c_args, &fhlen);
	if (!rpcrdma_xdr_ok(c->c_args)) {
		*accept = RPCRDMA_SVC_GARBAGE_ARGS;
		return -EINVAL;
	}
	*accept = RPCRDMA_SVC_SUCCESS;
	err = fs_open_handle_fd(c, fh, fhlen, fdp, st);
	if (err) {
		rpcrdma_xdr_put_u32(c->c_res, nfs3_errno_to_stat(err));
		nfs3_put_post_op_attr(c->c_res, c->c_exp, NULL);
	}
	return err;
}

int nfs3_proc_fsstat(struct fs_call *c)
{
	struct statvfs sv;
	struct stat st;
	int fd, accept;

	if (nfs3_fs_open(c, &fd, &st, &accept))
		return accept;
	if (fstatvfs(fd, &sv) < 0) {
		rpcrdma_xdr_put_u32(c->c_res, nfs3_errno_to_stat(-errno));
		nfs3_put_post_op_attr(c->c_res, c->c_exp, &st);
		goto out;
	}
	rpcrdma_xdr_put_u32(c->c_res, NFS3_OK);
	nfs3_put_post_op_attr(c->c_res, c->c_exp, &st);
	rpcrdma_xdr_put_u64(c->c_res, (uint64_t)sv.f_blocks * sv.f_frsize);
	rpcrdma_xdr_put_u64(c->c_res, (uint64_t)sv.f_bfree * sv.f_frsize);
	rpcrdma_xdr_put_u64(c->c_res, (uint64_t)sv.f_bavail * sv.f_frsize);
	rpcrdma_xdr_put_u64(c->c_res, sv.f_files);
	rpcrdma_xdr_put_u64(c->c_res, sv.f_ffree);
	rpcrdma_xdr_put_u64(c->c_res, sv.f_favail);
	rpcrdma_xdr_put_u32(c->c_res, 0); /* invarsec: may change any time */
out:
	fs_close_fd(fd);
	return RPCRDMA_SVC_SUCCESS;
}

int nfs3_proc_fsinfo(struct fs_call *c)
{
	struct stat st;
	uint32_t max = c->c_exp->ex_max_payload;
	int fd, accept;

	if (nfs3_fs_open(c, &fd, &st, &accept))
		return accept;
	rpcrdma_xdr_put_u32(c->c_res, NFS3_OK);
	nfs3_put_post_op_attr(c->c_res, c->c_exp, &st);
	rpcrdma_xdr_put_u32(c->c_res, max);     /* rtmax */
	rpcrdma_xdr_put_u32(c->c_res, max);     /* rtpref */
	rpcrdma_xdr_put_u32(c->c_res, 4096);    /* rtmult */
	rpcrdma_xdr_put_u32(c->c_res, max);     /* wtmax */
	rpcrdma_xdr_put_u32(c->c_res, max);     /* wtpref */
	rpcrdma_xdr_put_u32(c->c_res, 4096);    /* wtmult */
	rpcrdma_xdr_put_u32(c->c_res, 65536);   /* dtpref */
	rpcrdma_xdr_put_u64(c->c_res, (uint64_t)INT64_MAX); /* maxfilesize */
	rpcrdma_xdr_put_u32(c->c_res, 0);       /* time_delta: 1 ns */
	rpcrdma_xdr_put_u32(c->c_res, 1);
	rpcrdma_xdr_put_u32(c->c_res, NFS3_FSF_LINK | NFS3_FSF_SYMLINK |
				      NFS3_FSF_HOMOGENEOUS | NFS3_FSF_CANSETTIME);
	fs_close_fd(fd);
	return RPCRDMA_SVC_SUCCESS;
}

int nfs3_proc_pathconf(struct fs_call *c)
{
	struct stat st;
	long linkmax, namemax;
	int fd, accept;

	if (nfs3_fs_open(c, &fd, &st, &accept))
		return accept;
	linkmax = fpathconf(fd, _PC_LINK_MAX);
	namemax = fpathconf(fd, _PC_NAME_MAX);
	rpcrdma_xdr_put_u32(c->c_res, NFS3_OK);
	nfs3_put_post_op_attr(c->c_res, c->c_exp, &st);
	rpcrdma_xdr_put_u32(c->c_res, linkmax > 0 && linkmax < UINT32_MAX ?
				      (uint32_t)linkmax : 32000);
	rpcrdma_xdr_put_u32(c->c_res, namemax > 0 && namemax <= 255 ?
				      (uint32_t)namemax : 255);
	rpcrdma_xdr_put_u32(c->c_res, 1); /* no_trunc */
	rpcrdma_xdr_put_u32(c->c_res, 1); /* chown_restricted */
	rpcrdma_xdr_put_u32(c->c_res, 0); /* case_insensitive */
	rpcrdma_xdr_put_u32(c->c_res, 1); /* case_preserving */
	fs_close_fd(fd);
	return RPCRDMA_SVC_SUCCESS;
}
