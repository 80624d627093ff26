// SPDX-License-Identifier: MIT
/*
 * svc_tcp_pipe.c - READ data sent over TCP from a pipe (docs/design.md,
 * "TCP connections"): a handler on a worker splices file data into its
 * call context's pipe (page-cache pages referenced, not copied) and the
 * transport thread splices it on to the socket between the reply's header
 * and its tail.  Each TCP call context makes its pipe at first use, sized
 * for the largest item asked of it, and keeps it while pooled; a pipe that
 * may still hold bytes of a reply not sent (an error reply, a connection
 * reset mid-reply) is closed rather than drained.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "svc/svc_internal.h"

void svc_tcp_pipe_close(struct svc_call *cc)
{
	if (cc->cc_pipe_cap) {
		close(cc->cc_pipe_rd);
		close(cc->cc_pipe_wr);
	}
	cc->cc_pipe_cap = 0;
	cc->cc_pipe_len = 0;
	cc->cc_pipe_dirty = false;
}

/* A pipe of at least @max bytes for @cc.  Return: 0; -EOPNOTSUPP. */
static int svc_tcp_pipe_get(struct svc_call *cc, size_t max)
{
	int fds[2], sz;

	if (cc->cc_pipe_cap >= max)
		return 0;
	if (max > (size_t)INT32_MAX)
		return -EOPNOTSUPP;
	if (!cc->cc_pipe_cap) {
		if (pipe2(fds, O_CLOEXEC | O_NONBLOCK))
			return -EOPNOTSUPP;
		cc->cc_pipe_rd = fds[0];
		cc->cc_pipe_wr = fds[1];
		cc->cc_pipe_cap = 1; /* open; its size below */
	}
	/* Empty here (never dirty between replies): resizing is allowed.
	 * Above /proc/sys/fs/pipe-max-size only with CAP_SYS_RESOURCE. */
	sz = fcntl(cc->cc_pipe_wr, F_SETPIPE_SZ, (int)max);
	if (sz < 0 || (size_t)sz < max) {
		svc_tcp_pipe_close(cc);
		return -EOPNOTSUPP;
	}
	cc->cc_pipe_cap = (uint32_t)sz;
	return 0;
}

int rpcrdma_svc_ddp_pipe(struct rpcrdma_svc_req *req, size_t max)
{
	struct svc_call *cc = req->rq_xprt;
	struct rpcrdma_xdr *xs = &req->rq_res;
	int rc;

	if (!cc || cc->cc_xprt != &svc_tcp_class || max < RPCRDMA_SVC_DDP_PIPE_MIN ||
	    svc_tcp_capturing(cc))
		return -EOPNOTSUPP;
	if (req->rq_transport)
		return -EAGAIN;
	if (req->rq_ddp || cc->cc_pipe_dirty)
		return -EBUSY;
	if (max > (size_t)UINT32_MAX || RPCRDMA_XDR_ALIGN(max) > rpcrdma_xdr_remaining(xs))
		return -ENOSPC;
	rc = svc_tcp_pipe_get(cc, max);
	if (rc)
		return rc;
	cc->cc_pipe_dirty = true;
	cc->cc_pipe_len = 0;
	return cc->cc_pipe_wr;
}

void rpcrdma_svc_ddp_piped(struct rpcrdma_svc_req *req, size_t len)
{
	struct svc_call *cc = req->rq_xprt;
	struct rpcrdma_xdr *xs = &req->rq_res;
	size_t pad = RPCRDMA_XDR_ALIGN(len) - len;

	int held;

	/* What the pipe holds is what goes on the wire: a count that is not
	 * it leaves no DDP item (the reply says what the caller encoded,
	 * without the data: the caller's bug shows, the stream stays whole). */
	if (!cc || !cc->cc_pipe_dirty || req->rq_ddp || len > cc->cc_pipe_cap ||
	    pad > rpcrdma_xdr_remaining(xs) || ioctl(cc->cc_pipe_rd, FIONREAD, &held) ||
	    (size_t)held != len)
		return;
	req->rq_ddp = true;
	req->rq_ddp_pos = xs->xs_pos;
	req->rq_ddp_len = len;
	cc->cc_pipe_pos = (uint32_t)xs->xs_pos;
	cc->cc_pipe_len = (uint32_t)len;
	memset(xs->xs_base + xs->xs_pos, 0, pad);
	xs->xs_pos += pad;
}
