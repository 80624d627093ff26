// SPDX-License-Identifier: MIT
/*
 * verbs.c - the default (real device) side of the verbs seam.
 */
#include <errno.h>
#include <string.h>

#include <rpcrdma/wire.h>

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

static struct ibv_mr *real_reg_mr(struct ibv_pd *pd, void *addr, size_t len,
				  int access)
{
	return ibv_reg_mr(pd, addr, len, access);
}

static int real_dereg_mr(struct ibv_mr *mr)
{
	return ibv_dereg_mr(mr);
}

static int real_disconnect(struct rdma_cm_id *id)
{
	return rdma_disconnect(id) ? -errno : 0;
}

static void real_destroy_id(struct rdma_cm_id *id)
{
	if (id->qp)
		rdma_destroy_qp(id);
	rdma_destroy_id(id);
}

const struct rpcrdma_verbs_ops rpcrdma_verbs_real = {
	.vo_disconnect = real_disconnect,
	.vo_destroy_id = real_destroy_id,
	.vo_reg_mr = real_reg_mr,
	.vo_dereg_mr = real_dereg_mr,
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

struct ibv_mr *rpcrdma_verbs_reg_mr(struct ibv_pd *pd, void *addr, size_t len,
				    int access)
{
	return rpcrdma_verbs->vo_reg_mr(pd, addr, len, access);
}

int rpcrdma_verbs_dereg_mr(struct ibv_mr *mr)
{
	int rc = rpcrdma_verbs->vo_dereg_mr(mr);

	return rc > 0 ? -rc : rc;
}

int rpcrdma_verbs_disconnect(struct rdma_cm_id *id)
{
	return rpcrdma_verbs->vo_disconnect(id);
}

void rpcrdma_verbs_destroy_id(struct rdma_cm_id *id)
{
	rpcrdma_verbs->vo_destroy_id(id);
}

static uint8_t verbs_depth(int v)
{
	return (uint8_t)(v > 255 ? 255 : v < 0 ? 0 : v);
}

void rpcrdma_verbs_conn_param(struct rdma_conn_param *param,
			      const struct ibv_device_attr *dev, uint8_t *pdata,
			      uint32_t send, uint32_t recv)
{
	struct rpcrdma_cm_private ours = {
		.cp_version = RPCRDMA_CM_VERSION,
		.cp_flags = 0,
		.cp_send_size = send,
		.cp_recv_size = recv,
	};

	rpcrdma_wire_encode_private(pdata, &ours);
	memset(param, 0, sizeof(*param));
	param->private_data = pdata;
	param->private_data_len = RPCRDMA_CM_PRIVATE_BYTES;
	param->responder_resources = verbs_depth(dev->max_qp_rd_atom);
	param->initiator_depth = verbs_depth(dev->max_qp_init_rd_atom);
	param->retry_count = 7;
	param->rnr_retry_count = 7;
	param->flow_control = 1;
}
