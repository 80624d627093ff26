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
	struct fs_fentry local, *fe = NULL;
	char buf[NFS3_WIRE_PATH_MAX];
	ssize_t n = 0;
	int err;

	fh = nfs3_get_fh(c->c_args, &fhlen);
	if (!rpcrdma_xdr_ok(c->c_args))
		return RPCRDMA_SVC_GARBAGE_ARGS;
	err = fs_open_handle(c, fh, fhlen, &local, &fe, &st);
	if (err)
		fe = NULL;
	else if (!S_ISLNK(st.st_mode))
		err = -EINVAL;
	if (!err) {
		/* -ENAMETOOLONG: longer than the buffer holds */
		n = fs_readlink(c, fe, buf, sizeof(buf));
		if (n < 0)
			err = (int)n;
	}
	rpcrdma_xdr_put_u32(c->c_res, nfs3_errno_to_stat(err));
	nfs3_put_post_op_attr(c->c_res, c->c_exp, fe ? &st : NULL);
	if (!err) {
		/* The target is DDP-eligible (RFC 8267 section 3.1): the
		 * transport moves it into a Write chunk when the call has one. */
		uint8_t *data;

		rpcrdma_xdr_put_u32(c->c_res, (uint32_t)n);
		data = rpcrdma_svc_ddp_begin(c->c_req, (size_t)n);
		if (!data) {
			fs_fcache_put(fe);
			return RPCRDMA_SVC_SYSTEM_ERR;
		}
		memcpy(data, buf, (size_t)n);
		rpcrdma_svc_ddp_end(c->c_req, (size_t)n);
	}
	fs_fcache_put(fe);
	return RPCRDMA_SVC_SUCCESS;
}

/*
 * READ data straight from the file to the transport (a large READ on a
 * worker, over TCP from the posix backend: rpcrdma_svc_ddp_pipe()).
 * Return: bytes in the pipe (the DDP item finished); -EOPNOTSUPP when
 * that path is not open here (read into the reply instead); another
 * negative errno of the read.
 */
static ssize_t nfs3_read_piped(struct fs_call *c, struct fs_fentry *fe,
			       uint64_t offset, uint32_t count)
{
	ssize_t n;
	int pfd;

	if (c->c_nowait || count < RPCRDMA_SVC_DDP_PIPE_MIN)
		return -EOPNOTSUPP;
	/* the data leaves through the pipe: the access is checked first */
	n = fs_open_recheck(c, fe, NULL, O_RDONLY);
	if (n < 0)
		return n;
	pfd = rpcrdma_svc_ddp_pipe(c->c_req, count);
	if (pfd < 0)
		return -EOPNOTSUPP;
	n = fs_read_pipe(c, fe, pfd, offset, count);
	if (n >= 0)
		rpcrdma_svc_ddp_piped(c->c_req, (size_t)n);
	return n;
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
	bool eof, piped, have_post;
	int err;

	fh = nfs3_get_fh(c->c_args, &fhlen);
	offset = rpcrdma_xdr_get_u64(c->c_args);
	count = rpcrdma_xdr_get_u32(c->c_args);
	if (!rpcrdma_xdr_ok(c->c_args))
		return RPCRDMA_SVC_GARBAGE_ARGS;

	/* no attributes needed before the read: a hit costs no getattr */
	err = fs_get_file(c, fh, fhlen, &local, &fe, NULL);
	if (err)
		fe = NULL;
	else
		err = fs_want_regular_type(fe->fe_type);
	if (!err && offset > INT64_MAX)
		err = -EINVAL;
	if (!err)
		err = fs_become_caller(c);
	/* the access of a cached descriptor may be checked against the
	 * attributes fetched after the read (fs_open_recheck(), below) */
	c->c_check_after = true;
	if (!err)
		err = fs_open(c, fe, NULL, O_RDONLY);
	if (err)
		goto out_err;

	if (count > c->c_exp->ex_max_payload)
		count = c->c_exp->ex_max_payload;
	if (c->c_nowait && count > NFS3_TRANSPORT_MAX_IO) {
		c->c_defer = true; /* a large copy: on a worker */
		goto out_put;
	}
	start = res->xs_pos;
	rpcrdma_xdr_put_u32(res, NFS3_OK);
	attrp = rpcrdma_xdr_reserve(res, NFS3_POST_OP_ATTR_BYTES);
	countp = rpcrdma_xdr_reserve(res, 4);
	eofp = rpcrdma_xdr_reserve(res, 4);
	lenp = rpcrdma_xdr_reserve(res, 4);
	if (!lenp)
		goto out_put; /* SYSTEM_ERR: no room even for the header */
	room = rpcrdma_xdr_remaining(res) & ~(size_t)3;
	if (count > room)
		count = (uint32_t)room;
	n = nfs3_read_piped(c, fe, offset, count);
	if (n < 0 && n != -EOPNOTSUPP) {
		err = (int)n;
		res->xs_pos = start;
		goto out_err;
	}
	piped = n >= 0; /* the data is in the transport's pipe */
	if (!piped)
		n = 0;
	data = count && !piped ? rpcrdma_svc_ddp_begin(c->c_req, count) : NULL;
	if (count && !piped && !data)
		count = 0;
	if (data) {
		/* straight into the reply's buffer (the transport's, no copy);
		 * on the transport thread only what needs no disk */
		struct iovec iov = { .iov_base = data, .iov_len = count };

		n = fs_read(c, fe, &iov, 1, offset,
			    c->c_nowait && !fs_never_waits(c->c_exp));
		if (n < 0 && c->c_nowait && (n == -EAGAIN || n == -EOPNOTSUPP)) {
			/* not at hand (or no nowait read here): a worker reads it */
			if (n == -EOPNOTSUPP)
				c->c_exp->ex_nowait_unsupported = true;
			c->c_defer = true;
			goto out_put;
		}
		if (n < 0) {
			err = (int)n;
			res->xs_pos = start;
			goto out_err;
		}
	}
	have_post = fs_getattr(c, fe, &post) == 0;
	/* a check skipped for this caller's cached descriptor: now, with the
	 * attributes after the read, before the data goes (dropped if not) */
	err = fs_open_recheck(c, fe, have_post ? &post : NULL, O_RDONLY);
	if (err) {
		res->xs_pos = start;
		goto out_err;
	}
	if (data)
		rpcrdma_svc_ddp_end(c->c_req, (size_t)n);
	rpcrdma_xdr_init(&patch, attrp, NFS3_POST_OP_ATTR_BYTES);
	if (have_post) {
		nfs3_put_post_op_attr(&patch, c->c_exp, &post);
		eof = offset + (uint64_t)n >= (uint64_t)post.st_size;
	} else { /* no attributes: a short read is the end */
		nfs3_put_post_op_attr(&patch, c->c_exp, NULL);
		eof = (uint64_t)n < count;
	}
	store_be32(countp, (uint32_t)n);
	store_be32(eofp, eof);
	store_be32(lenp, (uint32_t)n);
	goto out_put;

out_err:
	rpcrdma_xdr_put_u32(res, nfs3_errno_to_stat(err));
	nfs3_put_post_op_fe(res, c, fe);
out_put:
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
	int err;

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
	if (err)
		fe = NULL;
	else
		err = fs_want_regular(&pre);
	if (!err) /* NFSv4.1 delegations of the file: recalled first */
		err = fs_change_check(c, fh, fhlen);
	if (!err && (offset > INT64_MAX || count > INT64_MAX - offset))
		err = -EFBIG;
	if (!err)
		err = fs_become_caller(c);
	if (!err)
		err = fs_open(c, fe, &pre, O_WRONLY);
	if (!err) {
		/* from the call's buffer (the transport's, no copy), as
		 * stable as asked: a short write answers what was written */
		struct iovec iov = { .iov_base = (void *)data, .iov_len = count };

		err = fs_write(c, fe, &iov, 1, offset, stable, &n);
	}

	rpcrdma_xdr_put_u32(c->c_res, nfs3_errno_to_stat(err));
	if (fe && fs_getattr(c, fe, &post) == 0)
		nfs3_put_wcc(c->c_res, c->c_exp, &pre, &post);
	else
		nfs3_put_wcc(c->c_res, c->c_exp, fe ? &pre : NULL, NULL);
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
	int err;

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
	 * from the post_op_attr).  One getattr fewer.
	 */
	err = fs_get_file(c, fh, fhlen, &local, &fe, NULL);
	if (err)
		fe = NULL;
	else
		err = fs_want_regular_type(fe->fe_type);
	if (!err && c->c_ro)
		err = -EROFS; /* as knfsd: COMMIT asks for write access */
	/* server credentials: syncing reveals and changes no data; the
	 * whole file's data and attributes (fsync), whatever the range */
	if (!err)
		err = fs_commit(c, fe, false);
	rpcrdma_xdr_put_u32(c->c_res, nfs3_errno_to_stat(err));
	if (fe && fs_getattr(c, fe, &post) == 0)
		nfs3_put_wcc(c->c_res, c->c_exp, NULL, &post);
	else
		nfs3_put_wcc(c->c_res, c->c_exp, NULL, NULL);
	if (!err)
		rpcrdma_xdr_put_fixed(c->c_res, c->c_exp->ex_verf, 8);
	fs_fcache_put(fe);
	return RPCRDMA_SVC_SUCCESS;
}
