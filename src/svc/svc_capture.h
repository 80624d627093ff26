/* SPDX-License-Identifier: MIT */
/*
 * svc_capture.h - the server's hooks into the capture writer
 * (src/capture): each is one call at a clear point of the data path and a
 * no-op (one test of a pointer) when no capture is attached.
 */
#ifndef RPCRDMA_SVC_CAPTURE_H
#define RPCRDMA_SVC_CAPTURE_H

#include <stdint.h>

struct capture_ep;
struct svc_call;
struct svc_conn;

/* svc_capture_conn_open - @conn was accepted from the peer QP @peer_qp:
 * its endpoints for the capture (NULL without capture or memory). */
struct capture_ep *svc_capture_conn_open(struct svc_conn *conn, uint32_t peer_qp);
/* svc_capture_conn_close - free @conn's endpoints. */
void svc_capture_conn_close(struct svc_conn *conn);
/* svc_capture_recv - @len bytes of @buf were received on @conn. */
void svc_capture_recv(struct svc_conn *conn, const uint8_t *buf, uint32_t len);
/* svc_capture_send_buf - a Send of @len bytes at @buf (a backchannel call). */
void svc_capture_send_buf(struct svc_conn *conn, const uint8_t *buf, uint32_t len);
/* svc_capture_chain - @cc posted cc_wr[0 .. nwr]: RDMA Writes (their data
 * when cc_data_bytes is set), then the Send.  Called once the post has
 * succeeded (svc_send.c): a reply kept off the wire is not recorded. */
void svc_capture_chain(struct svc_call *cc, uint32_t nwr);
/* svc_capture_reads - @cc's RDMA Reads completed: each as a READ REQUEST
 * and a READ RESPONSE with its data (only when cc_data_bytes is set). */
void svc_capture_reads(struct svc_call *cc);

#endif /* RPCRDMA_SVC_CAPTURE_H */
