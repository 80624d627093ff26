// SPDX-License-Identifier: MIT
/*
 * svc_capture.c - the server's side of the capture (rpcrdma-nfsd
 * --capture): endpoints per connection, and the messages and RDMA data
 * each hook hands to the writer (src/capture).
 */
#include <stdlib.h>
#include <string.h>

#include "capture/capture.h"
#include "svc/svc_internal.h"

int rpcrdma_svc_set_capture(struct rpcrdma_svc *svc, struct rpcrdma_capture *cap)
{
	svc->sv_capture = cap;
	return 0;
}

static void svc_capture_addr(struct sockaddr_storage *to, const struct sockaddr *from)
{
	if (from && (from->sa_family == AF_INET || from->sa_family == AF_INET6))
		memcpy(to, from, from->sa_family == AF_INET ? sizeof(struct sockaddr_in) :
		       sizeof(struct sockaddr_in6));
}

struct capture_ep *svc_capture_conn_open(struct svc_conn *conn, uint32_t peer_qp)
{
	struct capture_ep *ep;

	if (!conn->sx_svc->sv_capture)
		return NULL;
	ep = calloc(1, sizeof(*ep));
	if (!ep)
		return NULL;
	if (conn->sx_id) {
		svc_capture_addr(&ep->ce_local, rdma_get_local_addr(conn->sx_id));
		svc_capture_addr(&ep->ce_peer, rdma_get_peer_addr(conn->sx_id));
		if (conn->sx_id->qp)
			ep->ce_local_qp = conn->sx_id->qp->qp_num;
	}
	ep->ce_peer_qp = peer_qp;
	return ep;
}

void svc_capture_conn_close(struct svc_conn *conn)
{
	free(conn->sx_capture);
	conn->sx_capture = NULL;
}

void svc_capture_recv(struct svc_conn *conn, const uint8_t *buf, uint32_t len)
{
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };

	if (conn->sx_capture)
		capture_send(conn->sx_svc->sv_capture, conn->sx_capture, false, &iov, 1, len,
			     false, 0);
}

void svc_capture_send_buf(struct svc_conn *conn, const uint8_t *buf, uint32_t len)
{
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };

	if (conn->sx_capture)
		capture_send(conn->sx_svc->sv_capture, conn->sx_capture, true, &iov, 1, len,
			     false, 0);
}

/* The scatter list of @wr as an iovec (at most @max pieces); its bytes. */
static size_t svc_capture_sges(const struct ibv_send_wr *wr, struct iovec *iov,
			       unsigned max, unsigned *n)
{
	size_t len = 0;
	int i;

	*n = 0;
	for (i = 0; i < wr->num_sge && *n < max; i++) {
		iov[*n].iov_base = (void *)(uintptr_t)wr->sg_list[i].addr;
		iov[*n].iov_len = wr->sg_list[i].length;
		len += wr->sg_list[i].length;
		(*n)++;
	}
	return len;
}

void svc_capture_chain(struct svc_call *cc, uint32_t nwr)
{
	struct svc_conn *conn = cc->cc_conn;
	struct rpcrdma_capture *cap = conn->sx_svc->sv_capture;
	const struct ibv_send_wr *send = &cc->cc_wr[nwr];
	struct iovec iov[RPCRDMA_RW_MAX_SGE + 2];
	unsigned n;
	uint32_t i;
	size_t len;

	if (!conn->sx_capture)
		return;
	if (capture_data_bytes(cap))
		for (i = 0; i < nwr; i++) {
			const struct ibv_send_wr *wr = &cc->cc_wr[i];

			if (wr->opcode != IBV_WR_RDMA_WRITE)
				continue;
			len = svc_capture_sges(wr, iov, RPCRDMA_RW_MAX_SGE + 2, &n);
			capture_rdma_write(cap, conn->sx_capture, true, wr->wr.rdma.rkey,
					   wr->wr.rdma.remote_addr, (uint32_t)len, iov, n);
		}
	len = svc_capture_sges(send, iov, RPCRDMA_RW_MAX_SGE + 2, &n);
	capture_send(cap, conn->sx_capture, true, iov, n, len,
		     send->opcode == IBV_WR_SEND_WITH_INV, send->invalidate_rkey);
}

void svc_capture_reads(struct svc_call *cc)
{
	struct svc_conn *conn = cc->cc_conn;
	struct rpcrdma_capture *cap = conn->sx_svc->sv_capture;
	struct iovec iov[RPCRDMA_RW_MAX_SGE + 2];
	uint32_t k, i, end = 0;
	unsigned n;
	size_t len;

	if (!conn->sx_capture || !capture_data_bytes(cap))
		return;
	for (k = 0; k < cc->cc_hdr.rh_nread; k++)
		if (cc->cc_chain_end[k] != UINT32_MAX && cc->cc_chain_end[k] + 1 > end)
			end = cc->cc_chain_end[k] + 1;
	for (i = 0; i < end; i++) {
		const struct ibv_send_wr *wr = &cc->cc_wr[i];

		if (wr->opcode != IBV_WR_RDMA_READ)
			continue;
		len = svc_capture_sges(wr, iov, RPCRDMA_RW_MAX_SGE + 2, &n);
		capture_rdma_read(cap, conn->sx_capture, true, wr->wr.rdma.rkey,
				  wr->wr.rdma.remote_addr, (uint32_t)len, iov, n);
	}
}

struct capture_ep *svc_capture_tcp_open(struct rpcrdma_svc *svc, int fd,
					const struct sockaddr *peer)
{
	struct sockaddr_storage local;
	socklen_t len = sizeof(local);
	struct capture_ep *ep;

	if (!svc->sv_capture || getsockname(fd, (struct sockaddr *)&local, &len) ||
	    (local.ss_family != AF_INET && local.ss_family != AF_INET6))
		return NULL;
	ep = calloc(1, sizeof(*ep));
	if (!ep)
		return NULL;
	svc_capture_addr(&ep->ce_local, (const struct sockaddr *)&local);
	svc_capture_addr(&ep->ce_peer, peer);
	/* each direction's stream from 1, as after a handshake at 0 */
	ep->ce_seq_out = ep->ce_seq_in = 1;
	return ep;
}

void svc_capture_tcp_record(struct rpcrdma_svc *svc, struct capture_ep *ep, bool out,
			    const uint8_t *buf, uint32_t len)
{
	uint8_t mark[4];
	uint32_t m = 0x80000000u | len;
	struct iovec iov[2];

	if (!ep || !svc->sv_capture)
		return;
	if (out) {
		iov[0].iov_base = (void *)(buf - 4);
		iov[0].iov_len = len + 4u;
		capture_tcp(svc->sv_capture, ep, true, iov, 1, len + 4u);
		return;
	}
	mark[0] = (uint8_t)(m >> 24);
	mark[1] = (uint8_t)(m >> 16);
	mark[2] = (uint8_t)(m >> 8);
	mark[3] = (uint8_t)m;
	iov[0].iov_base = mark;
	iov[0].iov_len = 4;
	iov[1].iov_base = (void *)buf;
	iov[1].iov_len = len;
	capture_tcp(svc->sv_capture, ep, false, iov, 2, len + 4u);
}
