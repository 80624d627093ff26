// SPDX-License-Identifier: MIT
/*
 * nfs3_create.c - the procedures of NFS version 3 that make a new name:
 * CREATE, MKDIR, SYMLINK, MKNOD (RFC 1813 3.3.8 to 3.3.11).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "common/be.h"
#include "nfs3_internal.h"

/*
 * created_sattr - a sattr3 on object @fe this call just made, @st its
 * attributes (refreshed when anything changed).  Its times were set to the
 * server's time by the creation itself, so SET_TO_SERVER_TIME asks for
 * nothing more (RFC 1813 3.3.2: the server's current time); without
 * anything left to set, nothing is done.  0 or a negative errno.
 */
static int created_sattr(struct fs_call *c, struct fs_fentry *fe,
			 struct stat *st, struct fs_sattr *sa, bool skip_mode)
{
	int err;

	if (sa->sa_atime_how == NFS3_SET_TO_SERVER_TIME)
		sa->sa_atime_how = NFS3_DONT_CHANGE;
	if (sa->sa_mtime_how == NFS3_SET_TO_SERVER_TIME)
		sa->sa_mtime_how = NFS3_DONT_CHANGE;
	if (!sa->sa_set_size && !sa->sa_set_uid && !sa->sa_set_gid &&
	    (!sa->sa_set_mode || skip_mode) &&
	    sa->sa_atime_how == NFS3_DONT_CHANGE &&
	    sa->sa_mtime_how == NFS3_DONT_CHANGE)
		return 0;
	err = fs_setattr(c, fe, st, sa, skip_mode);
	if (!err)
		err = fs_getattr(c, fe, st);
	return err;
}

/*
 * create_finish - the common tail of CREATE, MKDIR, SYMLINK and MKNOD
 * (RFC 1813 3.3.8 to 3.3.11): on @stat NFS3_OK the new object is @fe with
 * attributes @st: its handle, commit_metadata (@made: this call made @fe)
 * of the new object and then of the directory, then the result (post_op_fh3, post_op_attr, the directory's wcc_data; on failure
 * wcc_data only).  A regular file or directory goes to its cache with its
 * handle (fs_fcache_adopt()), so the calls that follow (the SETATTR after
 * an exclusive CREATE, GETATTR, the new directory's operations) find it;
 * @fe (NULL: none) is released otherwise.  Releases @d.
 */
static int create_finish(struct fs_call *c, struct nfs3_dirop *d,
			 uint32_t stat, struct fs_fentry *fe,
			 const struct stat *st, bool made)
{
	uint8_t fh[RPCRDMA_NFS3_FHSIZE];
	uint32_t fhlen = 0;
	bool have_fh = false;
	int err;

	if (stat == NFS3_OK) {
		have_fh = fs_fh_of(c, fe, "", fh, &fhlen) == 0;
		/*
		 * The new object first (the attributes set after it was
		 * made: an EXCLUSIVE verifier must be on stable storage,
		 * RFC 1813 3.3.8), then its name, as knfsd commits child
		 * then parent (nfsd_create_setattr()): on a journalling
		 * file system, or CephFS (docs/cephfs.md "Speed"), the
		 * first wait covers the second.
		 */
		err = made ? fs_commit_obj(c, fe) : 0;
		if (!err)
			err = fs_commit_dir(c, d->d_fe);
		if (err)
			stat = nfs3_errno_to_stat(err);
	}
	rpcrdma_xdr_put_u32(c->c_res, stat);
	if (stat == NFS3_OK) {
		rpcrdma_xdr_put_u32(c->c_res, have_fh);
		if (have_fh)
			rpcrdma_xdr_put_opaque(c->c_res, fh, fhlen);
		nfs3_put_post_op_attr(c->c_res, c->c_exp, st);
	}
	nfs3_dirop_put_wcc(c, d);
	if (stat == NFS3_OK && have_fh)
		fs_fcache_adopt(c->c_exp, fh, fhlen, fe, st);
	else
		fs_fcache_put(fe);
	nfs3_dirop_put(d);
	return RPCRDMA_SVC_SUCCESS;
}

/*
 * CREATE (RFC 1813 3.3.8).  UNCHECKED and EXCLUSIVE make the file or find
 * the one there (fs_create() without excl: an existing name is looked up,
 * never opened or truncated), GUARDED fails on an existing name.  A name
 * that holds anything but a regular file is NFS3ERR_EXIST.  EXCLUSIVE
 * keeps the client's verifier in the new file's atime and mtime seconds
 * (fs_create() stores it) until the client's SETATTR replaces them; a
 * retransmitted EXCLUSIVE finds its file by them.
 */
int nfs3_proc_create(struct fs_call *c)
{
	struct nfs3_dirop d;
	const uint8_t *dfh, *verf = NULL;
	uint32_t dfhlen, how, stat;
	struct fs_sattr sa;
	struct fs_fentry local, *fe = NULL;
	struct stat st;
	mode_t mode;
	int err;
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
	err = fs_become_caller(c);
	if (err)
		goto out_err;
	/* the mode as sent (the client applied its umask) */
	if (how == NFS3_EXCLUSIVE)
		mode = 0600;
	else
		mode = sa.sa_set_mode ? (sa.sa_mode & 07777) : 0644;
	/* EXCLUSIVE: the verifier lives in a new file's atime/mtime
	 * seconds until SETATTR */
	err = fs_create(c, d.d_fe, &d.d_pre, d.d_name.n_buf, mode,
			how == NFS3_GUARDED, how == NFS3_EXCLUSIVE ? verf : NULL,
			&local, &fe, &st, &created);
	if (err) {
		fe = NULL;
		goto out_err;
	}
	if (!created && !S_ISREG(st.st_mode)) {
		stat = NFS3ERR_EXIST;
		goto out;
	}
	if (how == NFS3_EXCLUSIVE) {
		/* an existing file is this call's when it holds our verifier */
		stat = created || (st.st_atim.tv_sec == load_be32(verf) &&
				   st.st_mtim.tv_sec == load_be32(verf + 4)) ?
			       NFS3_OK : NFS3ERR_EXIST;
		goto out;
	}
	if (!created) {
		/* UNCHECKED on an existing file: only its size may change */
		sa.sa_set_mode = sa.sa_set_uid = sa.sa_set_gid = false;
		sa.sa_atime_how = sa.sa_mtime_how = NFS3_DONT_CHANGE;
		if (sa.sa_set_size) {
			err = fs_setattr(c, fe, &st, &sa, true);
			if (!err)
				err = fs_getattr(c, fe, &st);
		}
	} else {
		err = created_sattr(c, fe, &st, &sa, true);
	}
	if (err)
		goto out_err;
	stat = NFS3_OK;
	goto out;

out_err:
	stat = nfs3_errno_to_stat(err);
out:
	return create_finish(c, &d, stat, fe, &st, created);
}

int nfs3_proc_mkdir(struct fs_call *c)
{
	struct nfs3_dirop d;
	const uint8_t *dfh;
	uint32_t dfhlen, stat;
	struct fs_sattr sa;
	struct fs_fentry local, *fe = NULL;
	struct stat st;
	int err;

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
	err = fs_become_caller(c);
	if (!err) { /* the mode as sent (the client applied its umask) */
		err = fs_mkdir(c, d.d_fe, &d.d_pre, d.d_name.n_buf,
			       sa.sa_set_mode ? (sa.sa_mode & 07777) : 0755,
			       &local, &fe, &st);
		if (err)
			fe = NULL;
	}
	if (!err)
		err = created_sattr(c, fe, &st, &sa, true);
	stat = nfs3_errno_to_stat(err);
out:
	return create_finish(c, &d, stat, fe, &st, true);
}

int nfs3_proc_symlink(struct fs_call *c)
{
	struct nfs3_dirop d;
	const uint8_t *dfh, *tp;
	uint32_t dfhlen, tlen, stat;
	struct fs_sattr sa;
	char target[NFS3_WIRE_PATH_MAX + 1];
	struct fs_fentry local, *fe = NULL;
	struct stat st;
	int err;

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
	err = fs_become_caller(c);
	if (!err) { /* the target is stored, never resolved by the server */
		err = fs_symlink(c, d.d_fe, &d.d_pre, d.d_name.n_buf, target,
				 &local, &fe, &st);
		if (err)
			fe = NULL;
	}
	stat = nfs3_errno_to_stat(err);
out:
	return create_finish(c, &d, stat, fe, &st, true);
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
int nfs3_proc_mknod(struct fs_call *c)
{
	struct nfs3_dirop d;
	const uint8_t *dfh;
	uint32_t dfhlen, type, major = 0, minor = 0, stat;
	struct fs_sattr sa;
	struct fs_fentry local, *fe = NULL;
	struct stat st;
	mode_t fmt;
	int err;

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
	/* may the caller add a name (write and search permission on the
	 * directory): before the other checks, as knfsd */
	err = fs_become_caller(c);
	if (!err)
		err = fs_access(c, d.d_fe, &d.d_pre, W_OK | X_OK);
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
	err = fs_mknod(c, d.d_fe, &d.d_pre, d.d_name.n_buf,
		       fmt | (sa.sa_set_mode ? (sa.sa_mode & 07777) : 0),
		       makedev(major, minor), &local, &fe, &st);
	if (err)
		fe = NULL;
	else /* the mode again, exactly (whatever a umask took away) */
		err = created_sattr(c, fe, &st, &sa, false);
	stat = nfs3_errno_to_stat(err);
out:
	return create_finish(c, &d, stat, fe, &st, true);
}
