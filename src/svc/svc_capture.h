/* SPDX-License-Identifier: MIT */
/*
 * svc_capture.h - the server's hooks into the capture writer
 * (src/capture): each is one call at a clear point of the data path and a
 * no-op (one test of a pointer) when no capture is attached.
 */
#ifndef RPCRDMA_SVC_CAPTURE_H
#define RPCRDMA_SVC_CAPTURE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

struct capture_ep;
struct rpcrdma_svc;
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

/* svc_capture_tcp_open - TCP socket @fd from @peer was adopted: its
 * endpoints (local address from getsockname(2); NULL without capture, a
 * non-IP socket or memory).  Free with free(). */
struct capture_ep *svc_capture_tcp_open(struct rpcrdma_svc *svc, int fd,
					const struct sockaddr *peer);
/* svc_capture_tcp_record - one record of a TCP connection with endpoints
 * @ep: @len bytes at @buf, in one fragment behind its record mark (@out:
 * a reply or backchannel call, with the mark in the 4 bytes before @buf
 * already; else a call received, its mark rebuilt as one last fragment
 * whatever fragments it came in). */
void svc_capture_tcp_record(struct rpcrdma_svc *svc, struct capture_ep *ep, bool out,
			    const uint8_t *buf, uint32_t len);

#endif /* RPCRDMA_SVC_CAPTURE_H */
