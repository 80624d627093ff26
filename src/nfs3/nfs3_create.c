// SPDX-License-Identifier: MIT
/*
 * nfs3_create.c - the procedures of NFS version 3 that make a new name:
 * CREATE, MKDIR, SYMLINK, MKNOD (RFC 1813 3.3.8 to 3.3.11).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "common/be.h"
#include "nfs3_internal.h"

int nfs3_proc_create(struct nfs3_call *c)
{
	struct nfs3_dirop d;
	const uint8_t *dfh, *verf = NULL;
	uint32_t dfhlen, how, stat;
	struct nfs3_sattr sa;
	struct stat st;
	mode_t mode;
	int fd = -1, err;
	bool created = false;

	nfs3_dirop_decode(c, &d, &dfh, &dfhlen);
	how = rpcrdma_xdr_get_u32(c->c_args);
	memset(&sa, 0, sizeof(sa));
	if (how == NFS3_EXCLUSIVE)
		verf = rpcrdma_xdr_get_fixed(c->c_args, 8);
	else if (how <= NFS3_GUARDED)
		nfs3_get_sattr(c->c_args, &sa);
	if (!rpcrdma_xdr_ok(c->c_args) || how > NFS3_EXCLUSIVE)
		return RPCRDMA_SVC_GARBAGE_ARGS;

	stat = nfs3_dirop_open(c, &d, dfh, dfhlen);
	if (stat)
		goto out;
	if (nfs3_is_dot_or_dotdot(&d.d_name)) {
		stat = NFS3ERR_EXIST;
		goto out;
	}
	err = nfs3_become_caller(c);
	if (err)
		goto out_err;
	nfs3_cred_no_umask(); /* the mode as sent */
	if (how == NFS3_EXCLUSIVE)
		mode = 0600;
	else
		mode = sa.sa_set_mode ? (sa.sa_mode & 07777) : 0644;
	if (mknodat(d.d_fd, d.d_name.n_buf, S_IFREG | mode, 0) == 0)
		created = true;
	else if (errno != EEXIST || how == NFS3_GUARDED)
		goto out_errno;
	err = nfs3_lookup_at(c->c_exp, d.d_fd, &d.d_pre, d.d_name.n_buf, &fd, &st);
	if (err)
		goto out_err;
	if (!created && !S_ISREG(st.st_mode)) {
		stat = NFS3ERR_EXIST;
		goto out;
	}
	if (how == NFS3_EXCLUSIVE) {
		/* the verifier lives in atime/mtime seconds until SETATTR */
		struct nfs3_sattr vs = {
			.sa_atime_how = NFS3_SET_TO_CLIENT_TIME,
			.sa_mtime_how = NFS3_SET_TO_CLIENT_TIME,
			.sa_atime = { .tv_sec = load_be32(verf) },
			.sa_mtime = { .tv_sec = load_be32(verf + 4) },
		};

		if (!created) {
			stat = (st.st_atim.tv_sec == vs.sa_atime.tv_sec &&
				st.st_mtim.tv_sec == vs.sa_mtime.tv_sec) ?
				       NFS3_OK : NFS3ERR_EXIST;
			goto out;
		}
		err = nfs3_set_times(fd, &vs);
	} else {
		/* UNCHECKED on an existing file: only its size may change */
		if (!created) {
			sa.sa_set_mode = sa.sa_set_uid = sa.sa_set_gid = false;
			sa.sa_atime_how = sa.sa_mtime_how = NFS3_DONT_CHANGE;
		}
		err = nfs3_sattr_apply(c, fd, &st, &sa, true, NULL);
	}
	if (err)
		goto out_err;
	stat = NFS3_OK;
	goto out;

out_errno:
	err = -errno;
out_err:
	stat = nfs3_errno_to_stat(err);
out:
	nfs3_put_create_res(c, &d, stat, fd);
	nfs3_close_fd(fd);
	nfs3_dirop_put(&d);
	return RPCRDMA_SVC_SUCCESS;
}

int nfs3_proc_mkdir(struct nfs3_call *c)
{
	struct nfs3_dirop d;
	const uint8_t *dfh;
	uint32_t dfhlen, stat;
	struct nfs3_sattr sa;
	struct stat st;
	int fd = -1, err;

	nfs3_dirop_decode(c, &d, &dfh, &dfhlen);
	nfs3_get_sattr(c->c_args, &sa);
	if (!rpcrdma_xdr_ok(c->c_args))
		return RPCRDMA_SVC_GARBAGE_ARGS;

	stat = nfs3_dirop_open(c, &d, dfh, dfhlen);
	if (stat)
		goto out;
	if (nfs3_is_dot_or_dotdot(&d.d_name)) {
		stat = NFS3ERR_EXIST;
		goto out;
	}
	err = nfs3_become_caller(c);
	if (!err)
		nfs3_cred_no_umask(); /* the mode as sent */
	if (!err && mkdirat(d.d_fd, d.d_name.n_buf,
			    sa.sa_set_mode ? (sa.sa_mode & 07777) : 0755) < 0)
		err = -errno;
	if (!err)
		err = nfs3_lookup_at(c->c_exp, d.d_fd, &d.d_pre, d.d_name.n_buf,
				     &fd, &st);
	if (!err)
		err = nfs3_sattr_apply(c, fd, &st, &sa, true, NULL);
	stat = nfs3_errno_to_stat(err);
out:
	nfs3_put_create_res(c, &d, stat, fd);
	nfs3_close_fd(fd);
	nfs3_dirop_put(&d);
	return RPCRDMA_SVC_SUCCESS;
}

int nfs3_proc_symlink(struct nfs3_call *c)
{
	struct nfs3_dirop d;
	const uint8_t *dfh, *tp;
	uint32_t dfhlen, tlen, stat;
	struct nfs3_sattr sa;
	char target[NFS3_WIRE_PATH_MAX + 1];
	struct stat st;
	int fd = -1, err;

	nfs3_dirop_decode(c, &d, &dfh, &dfhlen);
	nfs3_get_sattr(c->c_args, &sa);
	tp = rpcrdma_xdr_get_opaque(c->c_args, NFS3_WIRE_PATH_MAX, &tlen);
	if (!rpcrdma_xdr_ok(c->c_args))
		return RPCRDMA_SVC_GARBAGE_ARGS;
	memcpy(target, tp, tlen);
	target[tlen] = '\0';

	stat = nfs3_dirop_open(c, &d, dfh, dfhlen);
	if (stat)
		goto out;
	if (nfs3_is_dot_or_dotdot(&d.d_name)) {
		stat = NFS3ERR_EXIST;
		goto out;
	}
	if (tlen == 0 || strlen(target) != tlen) {
		stat = NFS3ERR_INVAL;
		goto out;
	}
	err = nfs3_become_caller(c);
	/* the target is stored, never resolved by the server */
	if (!err && symlinkat(target, d.d_fd, d.d_name.n_buf) < 0)
		err = -errno;
	if (!err)
		err = nfs3_lookup_at(c->c_exp, d.d_fd, &d.d_pre, d.d_name.n_buf,
				     &fd, &st);
	stat = nfs3_errno_to_stat(err);
out:
	nfs3_put_create_res(c, &d, stat, fd);
	nfs3_close_fd(fd);
	nfs3_dirop_put(&d);
	return RPCRDMA_SVC_SUCCESS;
}

/* Largest major and minor numbers a Linux dev_t holds (12 and 20 bits). */
#define NFS3_MAJOR_MAX 0xfffu
#define NFS3_MINOR_MAX 0xfffffu

/*
 * MKNOD (RFC 1813 3.3.11): FIFOs and sockets for any caller the directory
 * lets create names (checked first: NFS3ERR_ACCES, as knfsd, also for a
 * device node); character and block devices only for a caller that is
 * root after squashing (NFS3ERR_PERM otherwise, knfsd's answer: its
 * threads, like ours, lose CAP_MKNOD with the other file system
 * capabilities when the fsuid leaves 0; checked here as well so the
 * answer never depends on the server's capabilities).  Regular files, directories and
 * symbolic links have procedures of their own: NFS3ERR_BADTYPE, as for a
 * type number outside ftype3.  A device number the kernel cannot hold is
 * NFS3ERR_INVAL.  The attributes are set as given (the mode exactly, not
 * under the server's umask); without a mode the node gets 0, as knfsd's.
 */
int nfs3_proc_mknod(struct nfs3_call *c)
{
	struct nfs3_dirop d;
	const uint8_t *dfh;
	uint32_t dfhlen, type, major = 0, minor = 0, stat;
	struct nfs3_sattr sa;
	struct stat st;
	mode_t fmt;
	int fd = -1, err;

	nfs3_dirop_decode(c, &d, &dfh, &dfhlen);
	type = rpcrdma_xdr_get_u32(c->c_args);
	memset(&sa, 0, sizeof(sa));
	switch (type) {
	case NF3CHR:
	case NF3BLK:
		nfs3_get_sattr(c->c_args, &sa);
		major = rpcrdma_xdr_get_u32(c->c_args);
		minor = rpcrdma_xdr_get_u32(c->c_args);
		break;
	case NF3SOCK:
	case NF3FIFO:
		nfs3_get_sattr(c->c_args, &sa);
		break;
	default: /* void arm: answered NFS3ERR_BADTYPE below */
		break;
	}
	if (!rpcrdma_xdr_ok(c->c_args))
		return RPCRDMA_SVC_GARBAGE_ARGS;

	stat = nfs3_dirop_open(c, &d, dfh, dfhlen);
	if (stat)
		goto out;
	switch (type) {
	case NF3CHR: fmt = S_IFCHR; break;
	case NF3BLK: fmt = S_IFBLK; break;
	case NF3SOCK: fmt = S_IFSOCK; break;
	case NF3FIFO: fmt = S_IFIFO; break;
	default:
		stat = NFS3ERR_BADTYPE;
		goto out;
	}
	/* may the caller add a name: before the other checks, as knfsd */
	err = nfs3_become_caller(c);
	if (!err)
		err = nfs3_dir_may_write(d.d_fd);
	if (err) {
		stat = nfs3_errno_to_stat(err);
		goto out;
	}
	if (nfs3_is_dot_or_dotdot(&d.d_name)) {
		stat = NFS3ERR_EXIST;
		goto out;
	}
	if (fmt == S_IFCHR || fmt == S_IFBLK) {
		if (c->c_cred.cr_uid != 0) {
			stat = NFS3ERR_PERM;
			goto out;
		}
		if (major > NFS3_MAJOR_MAX || minor > NFS3_MINOR_MAX) {
			stat = NFS3ERR_INVAL;
			goto out;
		}
	}
	if (sa.sa_set_size) { /* only regular files have a size to set */
		stat = NFS3ERR_INVAL;
		goto out;
	}
	if (mknodat(d.d_fd, d.d_name.n_buf,
		    fmt | (sa.sa_set_mode ? (sa.sa_mode & 07777) : 0),
		    makedev(major, minor)) < 0)
		err = -errno;
	if (!err)
		err = nfs3_lookup_at(c->c_exp, d.d_fd, &d.d_pre, d.d_name.n_buf,
				     &fd, &st);
	if (!err)
		err = nfs3_sattr_apply(c, fd, &st, &sa, false, NULL);
	stat = nfs3_errno_to_stat(err);
out:
	nfs3_put_create_res(c, &d, stat, fd);
	nfs3_close_fd(fd);
	nfs3_dirop_put(&d);
	return RPCRDMA_SVC_SUCCESS;
}
