// SPDX-License-Identifier: MIT
/*
 * verbs.c - the default (real device) side of the verbs seam.
 */
#include <errno.h>

#include "verbs/verbs.h"

static int real_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr,
			  struct ibv_send_wr **bad)
{
	return ibv_post_send(qp, wr, bad);
}

static int real_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr,
			  struct ibv_recv_wr **bad)
{
	return ibv_post_recv(qp, wr, bad);
}

static int real_poll_cq(struct ibv_cq *cq, int n, struct ibv_wc *wc)
{
	return ibv_poll_cq(cq, n, wc);
}

const struct rpcrdma_verbs_ops rpcrdma_verbs_real = {
	.vo_post_send = real_post_send,
	.vo_post_recv = real_post_recv,
	.vo_poll_cq = real_poll_cq,
};

const struct rpcrdma_verbs_ops *rpcrdma_verbs = &rpcrdma_verbs_real;

int rpcrdma_verbs_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr,
			    struct ibv_send_wr **bad)
{
	int rc = rpcrdma_verbs->vo_post_send(qp, wr, bad);

	return rc > 0 ? -rc : rc;
}

int rpcrdma_verbs_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr,
			    struct ibv_recv_wr **bad)
{
	int rc = rpcrdma_verbs->vo_post_recv(qp, wr, bad);

	return rc > 0 ? -rc : rc;
}

int rpcrdma_verbs_poll(struct ibv_cq *cq, int n, struct ibv_wc *wc)
{
	int rc = rpcrdma_verbs->vo_poll_cq(cq, n, wc);

	return rc < 0 ? -EIO : rc;
}
