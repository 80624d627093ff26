// SPDX-License-Identifier: MIT
/*
 * nfs3_io.c - the data procedures of NFS version 3: READLINK, READ, WRITE
 * and COMMIT (RFC 1813 3.3.5 to 3.3.7, 3.3.21).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "common/be.h"
#include "nfs3_internal.h"

int nfs3_proc_readlink(struct fs_call *c)
{
	const uint8_t *fh;
	uint32_t fhlen;
	struct stat st;
	char buf[NFS3_WIRE_PATH_MAX];
	ssize_t n = 0;
	int fd, err;

	fh = nfs3_get_fh(c->c_args, &fhlen);
	if (!rpcrdma_xdr_ok(c->c_args))
		return RPCRDMA_SVC_GARBAGE_ARGS;
	err = fs_open_handle_fd(c, fh, fhlen, &fd, &st);
	if (!err && !S_ISLNK(st.st_mode))
		err = -EINVAL;
	if (!err) {
		n = readlinkat(fd, "", buf, sizeof(buf));
		if (n < 0)
			err = -errno;
		else if ((size_t)n == sizeof(buf))
			err = -ENAMETOOLONG;
	}
	rpcrdma_xdr_put_u32(c->c_res, nfs3_errno_to_stat(err));
	nfs3_put_post_op_attr(c->c_res, c->c_exp, fd >= 0 ? &st : NULL);
	if (!err) {
		/* The target is DDP-eligible (RFC 8267 section 3.1): the
		 * transport moves it into a Write chunk when the call has one. */
		uint8_t *data;

		rpcrdma_xdr_put_u32(c->c_res, (uint32_t)n);
		data = rpcrdma_svc_ddp_begin(c->c_req, (size_t)n);
		if (!data) {
			fs_close_fd(fd);
			return RPCRDMA_SVC_SYSTEM_ERR;
		}
		memcpy(data, buf, (size_t)n);
		rpcrdma_svc_ddp_end(c->c_req, (size_t)n);
	}
	fs_close_fd(fd);
	return RPCRDMA_SVC_SUCCESS;
}

/*
 * pread_full - read @len bytes at @off, or up to the end of the file.
 * @nowait: only what the page cache holds (preadv2 RWF_NOWAIT): stops
 * short when the rest is not cached, -EAGAIN when nothing is.
 */
static ssize_t pread_full(int fd, uint8_t *buf, size_t len, off_t off,
			  bool nowait)
{
	size_t done = 0;

	while (done < len) {
		struct iovec iov = { .iov_base = buf + done, .iov_len = len - done };
		ssize_t n = preadv2(fd, &iov, 1, off + (off_t)done,
				    nowait ? RWF_NOWAIT : 0);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (nowait && errno == EAGAIN && done)
				break;
			return -errno;
		}
		if (n == 0)
			break;
		done += (size_t)n;
	}
	return (ssize_t)done;
}

int nfs3_proc_read(struct fs_call *c)
{
	struct rpcrdma_xdr *res = c->c_res, patch;
	const uint8_t *fh;
	uint32_t fhlen, count;
	uint64_t offset;
	struct stat post;
	struct fs_fentry local, *fe = NULL;
	uint8_t *attrp, *countp, *eofp, *lenp, *data;
	size_t start, room;
	ssize_t n = 0;
	bool eof;
	int rfd = -1, err;

	fh = nfs3_get_fh(c->c_args, &fhlen);
	offset = rpcrdma_xdr_get_u64(c->c_args);
	count = rpcrdma_xdr_get_u32(c->c_args);
	if (!rpcrdma_xdr_ok(c->c_args))
		return RPCRDMA_SVC_GARBAGE_ARGS;

	/* no attributes needed before the read: a hit costs no fstat */
	err = fs_get_file(c, fh, fhlen, &local, &fe, NULL);
	if (!err)
		err = fs_want_regular_type(fe->fe_type);
	if (!err && offset > INT64_MAX)
		err = -EINVAL;
	if (!err)
		err = fs_become_caller(c);
	if (!err) {
		rfd = fs_file_fd(c, fe, NULL, O_RDONLY);
		if (rfd < 0)
			err = rfd;
	}
	if (err)
		goto out_err;

	if (count > c->c_exp->ex_max_payload)
		count = c->c_exp->ex_max_payload;
	if (c->c_nowait && count > NFS3_TRANSPORT_MAX_IO) {
		c->c_defer = true; /* a large copy: on a worker */
		goto out_close;
	}
	start = res->xs_pos;
	rpcrdma_xdr_put_u32(res, NFS3_OK);
	attrp = rpcrdma_xdr_reserve(res, NFS3_POST_OP_ATTR_BYTES);
	countp = rpcrdma_xdr_reserve(res, 4);
	eofp = rpcrdma_xdr_reserve(res, 4);
	lenp = rpcrdma_xdr_reserve(res, 4);
	if (!lenp)
		goto out_close; /* SYSTEM_ERR: no room even for the header */
	room = rpcrdma_xdr_remaining(res) & ~(size_t)3;
	if (count > room)
		count = (uint32_t)room;
	data = count ? rpcrdma_svc_ddp_begin(c->c_req, count) : NULL;
	if (count && !data)
		count = 0;
	if (count) {
		n = pread_full(rfd, data, count, (off_t)offset,
			       c->c_nowait && !c->c_exp->ex_mem_fs);
		if (n < 0 && c->c_nowait && (n == -EAGAIN || n == -EOPNOTSUPP)) {
			/* not cached (or no RWF_NOWAIT here): a worker reads it */
			if (n == -EOPNOTSUPP)
				c->c_exp->ex_nowait_unsupported = true;
			c->c_defer = true;
			goto out_close;
		}
		if (n < 0) {
			err = (int)n;
			res->xs_pos = start;
			goto out_err;
		}
		rpcrdma_svc_ddp_end(c->c_req, (size_t)n);
	}
	rpcrdma_xdr_init(&patch, attrp, NFS3_POST_OP_ATTR_BYTES);
	if (fstat(rfd, &post) == 0) {
		nfs3_put_post_op_attr(&patch, c->c_exp, &post);
		eof = offset + (uint64_t)n >= (uint64_t)post.st_size;
	} else { /* no attributes: a short read is the end */
		nfs3_put_post_op_attr(&patch, c->c_exp, NULL);
		eof = (uint64_t)n < count;
	}
	store_be32(countp, (uint32_t)n);
	store_be32(eofp, eof);
	store_be32(lenp, (uint32_t)n);
	goto out_close;

out_err:
	rpcrdma_xdr_put_u32(res, nfs3_errno_to_stat(err));
	if (fe)
		nfs3_put_post_op_fd(res, c->c_exp, fe->fe_path);
	else
		nfs3_put_post_op_attr(res, c->c_exp, NULL);
out_close:
	fs_fcache_put(fe);
	return RPCRDMA_SVC_SUCCESS;
}

int nfs3_proc_write(struct fs_call *c)
{
	const uint8_t *fh, *data;
	uint32_t fhlen, count, stable, dlen;
	uint64_t offset;
	struct stat pre, post;
	struct fs_fentry local, *fe = NULL;
	size_t n = 0;
	int fd = -1, wfd = -1, err;

	fh = nfs3_get_fh(c->c_args, &fhlen);
	offset = rpcrdma_xdr_get_u64(c->c_args);
	count = rpcrdma_xdr_get_u32(c->c_args);
	stable = rpcrdma_xdr_get_u32(c->c_args);
	data = rpcrdma_xdr_get_opaque(c->c_args, UINT32_MAX, &dlen);
	if (!rpcrdma_xdr_ok(c->c_args) || stable > NFS3_FILE_SYNC || count > dlen)
		return RPCRDMA_SVC_GARBAGE_ARGS;
	if (c->c_nowait && count > NFS3_TRANSPORT_MAX_IO) {
		c->c_defer = true; /* a large copy: on a worker */
		return RPCRDMA_SVC_SUCCESS;
	}

	err = fs_get_file(c, fh, fhlen, &local, &fe, &pre);
	if (!err) {
		fd = fe->fe_path;
		err = fs_want_regular(&pre);
	}
	if (!err) /* NFSv4.1 delegations of the file: recalled first */
		err = fs_change_check(c, fh, fhlen);
	if (!err && (offset > INT64_MAX || count > INT64_MAX - offset))
		err = -EFBIG;
	if (!err)
		err = fs_become_caller(c);
	if (!err) {
		wfd = fs_file_fd(c, fe, &pre, O_WRONLY);
		if (wfd < 0)
			err = wfd;
	}
	if (!err)
		err = fs_write_data(wfd, data, count, (off_t)offset, stable, &n);

	rpcrdma_xdr_put_u32(c->c_res, nfs3_errno_to_stat(err));
	if (fd >= 0 && fstat(fd, &post) == 0)
		nfs3_put_wcc(c->c_res, c->c_exp, &pre, &post);
	else
		nfs3_put_wcc(c->c_res, c->c_exp, fd >= 0 ? &pre : NULL, NULL);
	if (!err) {
		rpcrdma_xdr_put_u32(c->c_res, (uint32_t)n);
		rpcrdma_xdr_put_u32(c->c_res, stable);
		rpcrdma_xdr_put_fixed(c->c_res, c->c_exp->ex_verf, 8);
	}
	fs_fcache_put(fe);
	return RPCRDMA_SVC_SUCCESS;
}

int nfs3_proc_commit(struct fs_call *c)
{
	const uint8_t *fh;
	uint32_t fhlen;
	struct stat post;
	struct fs_fentry local, *fe = NULL;
	char path[32];
	int fd = -1, sfd = -1, err;

	fh = nfs3_get_fh(c->c_args, &fhlen);
	(void)rpcrdma_xdr_get_u64(c->c_args); /* offset: the whole file is synced */
	(void)rpcrdma_xdr_get_u32(c->c_args); /* count */
	if (!rpcrdma_xdr_ok(c->c_args))
		return RPCRDMA_SVC_GARBAGE_ARGS;

	/*
	 * No pre-operation attributes (wcc_data's pre_op_attr is optional,
	 * RFC 1813 2.6): syncing changes no attribute, so they would equal
	 * the post-operation ones, and a client compares its cache with
	 * those alone (the Linux client's commit_done refreshes the inode
	 * from the post_op_attr).  One fstat fewer.
	 */
	err = fs_get_file(c, fh, fhlen, &local, &fe, NULL);
	if (!err) {
		fd = fe->fe_path;
		err = fs_want_regular_type(fe->fe_type);
	}
	if (!err && c->c_ro)
		err = -EROFS; /* as knfsd: COMMIT asks for write access */
	if (!err) {
		/*
		 * server credentials: syncing reveals and changes no data.  Any
		 * descriptor of the file will do (fsync syncs the inode); one
		 * opened here is kept as the entry's read descriptor, which
		 * fs_file_fd() checks against each caller before a READ uses it.
		 */
		sfd = fs_fcache_fd(fe, O_WRONLY);
		if (sfd < 0)
			sfd = fs_fcache_fd(fe, O_RDONLY);
		if (sfd < 0) {
			/* the worker may still be the previous call's caller */
			fs_cred_for_handle();
			fs_proc_path(path, sizeof(path), fd);
			sfd = open(path, O_RDONLY | O_CLOEXEC);
			if (sfd >= 0)
				sfd = fs_fcache_set_fd(fe, O_RDONLY, sfd);
		}
		err = sfd < 0 ? -errno : fs_commit_data(sfd, false);
	}
	rpcrdma_xdr_put_u32(c->c_res, nfs3_errno_to_stat(err));
	if (fd >= 0 && fstat(fd, &post) == 0)
		nfs3_put_wcc(c->c_res, c->c_exp, NULL, &post);
	else
		nfs3_put_wcc(c->c_res, c->c_exp, NULL, NULL);
	if (!err)
		rpcrdma_xdr_put_fixed(c->c_res, c->c_exp->ex_verf, 8);
	fs_fcache_put(fe);
	return RPCRDMA_SVC_SUCCESS;
}
