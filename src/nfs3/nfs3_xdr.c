// SPDX-License-Identifier: MIT
/*
 * nfs3_xdr.c - RFC 1813 result pieces: fattr3 (2.6), post_op_attr,
 * wcc_data (2.6 "Weak cache consistency"), nfsstat3 from errno.
 */
#include <errno.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "common/be.h"
#include "nfs3_internal.h"

uint32_t nfs3_errno_to_stat(int err)
{
	if (err < 0)
		err = -err;
	switch (err) {
	case 0:
		return NFS3_OK;
	case EPERM:
		return NFS3ERR_PERM;
	case ENOENT:
		return NFS3ERR_NOENT;
	case ENXIO:
		return NFS3ERR_NXIO;
	case EACCES:
		return NFS3ERR_ACCES;
	case EEXIST:
		return NFS3ERR_EXIST;
	case EXDEV:
		return NFS3ERR_XDEV;
	case ENODEV:
		return NFS3ERR_NODEV;
	case ENOTDIR:
		return NFS3ERR_NOTDIR;
	case EISDIR:
		return NFS3ERR_ISDIR;
	case EINVAL:
	case ELOOP: /* a symlink where none is followed */
		return NFS3ERR_INVAL;
	case EFBIG:
		return NFS3ERR_FBIG;
	case ENOSPC:
		return NFS3ERR_NOSPC;
	case EROFS:
		return NFS3ERR_ROFS;
	case EMLINK:
		return NFS3ERR_MLINK;
	case ENAMETOOLONG:
		return NFS3ERR_NAMETOOLONG;
	case ENOTEMPTY:
		return NFS3ERR_NOTEMPTY;
	case EDQUOT:
		return NFS3ERR_DQUOT;
	case ESTALE:
		return NFS3ERR_STALE;
	case EBADMSG:
		return NFS3ERR_BADHANDLE;
	case EOPNOTSUPP:
		return NFS3ERR_NOTSUPP;
	case EAGAIN:
	case EBUSY:
		return NFS3ERR_JUKEBOX;
	case ENOMEM:
	case EOVERFLOW:
		return NFS3ERR_SERVERFAULT;
	default:
		return NFS3ERR_IO;
	}
}

uint32_t nfs3_mode_to_ftype(mode_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFREG:
		return NF3REG;
	case S_IFDIR:
		return NF3DIR;
	case S_IFBLK:
		return NF3BLK;
	case S_IFCHR:
		return NF3CHR;
	case S_IFLNK:
		return NF3LNK;
	case S_IFSOCK:
		return NF3SOCK;
	default:
		return NF3FIFO;
	}
}

static uint8_t *put_time(uint8_t *p, const struct timespec *ts)
{
	p = put_be32(p, (uint32_t)ts->tv_sec);
	return put_be32(p, (uint32_t)ts->tv_nsec);
}

/* fattr3 (RFC 1813 2.6), 84 bytes: claimed at once and stored in place
 * (one bounds check, not one call per field: every reply carries one or
 * two). */
#define NFS3_FATTR_BYTES 84u
/* wcc_attr (RFC 1813 2.6): size, mtime, ctime. */
#define NFS3_WCC_ATTR_BYTES 24u

void nfs3_put_fattr(struct rpcrdma_xdr *xs, const struct rpcrdma_nfs3_export *exp,
		    const struct stat *st)
{
	uint8_t *p = rpcrdma_xdr_reserve(xs, NFS3_FATTR_BYTES);

	if (!p)
		return;
	p = put_be32(p, nfs3_mode_to_ftype(st->st_mode));
	p = put_be32(p, st->st_mode & 07777);
	p = put_be32(p, (uint32_t)st->st_nlink);
	p = put_be32(p, st->st_uid);
	p = put_be32(p, st->st_gid);
	p = put_be64(p, (uint64_t)st->st_size);
	p = put_be64(p, (uint64_t)st->st_blocks * 512u);
	p = put_be32(p, major(st->st_rdev));
	p = put_be32(p, minor(st->st_rdev));
	p = put_be64(p, exp->ex_fsid);
	p = put_be64(p, (uint64_t)st->st_ino);
	p = put_time(p, &st->st_atim);
	p = put_time(p, &st->st_mtim);
	put_time(p, &st->st_ctim);
}

void nfs3_put_post_op_attr(struct rpcrdma_xdr *xs,
			   const struct rpcrdma_nfs3_export *exp,
			   const struct stat *st)
{
	rpcrdma_xdr_put_u32(xs, st != NULL);
	if (st)
		nfs3_put_fattr(xs, exp, st);
}

void nfs3_put_post_op_fe(struct rpcrdma_xdr *xs, struct fs_call *c,
			 struct fs_fentry *fe)
{
	struct stat st;

	nfs3_put_post_op_attr(xs, c->c_exp,
			      fe && fs_getattr(c, fe, &st) == 0 ? &st : NULL);
}

void nfs3_put_wcc(struct rpcrdma_xdr *xs, const struct rpcrdma_nfs3_export *exp,
		  const struct stat *pre, const struct stat *post)
{
	rpcrdma_xdr_put_u32(xs, pre != NULL);
	if (pre) {
		uint8_t *p = rpcrdma_xdr_reserve(xs, NFS3_WCC_ATTR_BYTES);

		if (p) {
			p = put_be64(p, (uint64_t)pre->st_size);
			p = put_time(p, &pre->st_mtim);
			put_time(p, &pre->st_ctim);
		}
	}
	nfs3_put_post_op_attr(xs, exp, post);
}
