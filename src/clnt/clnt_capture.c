// SPDX-License-Identifier: MIT
/*
 * clnt_capture.c - the client's side of the capture (cf_capture,
 * rpcrdma-nfs --capture): its endpoints, refreshed at every connect, and
 * the Sends and Receives handed to the shared writer (src/capture).
 */
#include <stdlib.h>
#include <string.h>

#include "capture/capture.h"
#include "clnt/clnt_internal.h"

static void clnt_capture_addr(struct sockaddr_storage *to, const struct sockaddr *from)
{
	memset(to, 0, sizeof(*to));
	if (from && (from->sa_family == AF_INET || from->sa_family == AF_INET6))
		memcpy(to, from, from->sa_family == AF_INET ? sizeof(struct sockaddr_in) :
		       sizeof(struct sockaddr_in6));
}

void clnt_capture_connected(struct rpcrdma_clnt *cl, uint32_t peer_qp)
{
	struct capture_ep *ep;

	if (!cl->cl_cfg.cf_capture || !cl->cl_id)
		return;
	if (!cl->cl_capture) {
		cl->cl_capture = calloc(1, sizeof(*cl->cl_capture));
		if (!cl->cl_capture)
			return;
	}
	ep = cl->cl_capture;
	clnt_capture_addr(&ep->ce_local, rdma_get_local_addr(cl->cl_id));
	clnt_capture_addr(&ep->ce_peer, rdma_get_peer_addr(cl->cl_id));
	ep->ce_local_qp = cl->cl_id->qp ? cl->cl_id->qp->qp_num : 0;
	ep->ce_peer_qp = peer_qp;
	ep->ce_psn_out = ep->ce_psn_in = 0; /* a new connection */
}

void clnt_capture_send(struct rpcrdma_clnt *cl, const struct ibv_send_wr *wr)
{
	struct iovec iov[4];
	size_t len = 0;
	unsigned n = 0;
	int i;

	if (!cl->cl_capture)
		return;
	for (i = 0; i < wr->num_sge && n < 4; i++, n++) {
		iov[n].iov_base = (void *)(uintptr_t)wr->sg_list[i].addr;
		iov[n].iov_len = wr->sg_list[i].length;
		len += wr->sg_list[i].length;
	}
	capture_send(cl->cl_cfg.cf_capture, cl->cl_capture, true, iov, n, len, false, 0);
}

void clnt_capture_recv(struct rpcrdma_clnt *cl, const uint8_t *buf, uint32_t len)
{
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };

	if (cl->cl_capture)
		capture_send(cl->cl_cfg.cf_capture, cl->cl_capture, false, &iov, 1, len, false, 0);
}
