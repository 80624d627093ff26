/* SPDX-License-Identifier: MIT */
/*
 * capture.h - the capture writer shared by the server and the client
 * (inside the library): endpoints of a connection, the frames recorded,
 * and the pure frame and pcap encoders the unit tests check byte by byte.
 *
 * Frame layout (RoCEv2, IBTA Annex A17): Ethernet II (synthesized locally
 * administered MACs 02:00 + the IPv4 address, or the last four bytes of the
 * IPv6 one), IPv4 (no options, DF, TTL 64, checksum) or IPv6 (hop limit
 * 64), UDP (source port 0xC000 | low 14 bits of the sender's QP, destination
 * 4791, checksum 0), BTH (opcode, P_Key 0xFFFF, destination QP, PSN), the
 * extension header of the opcode (RETH, AETH or IETH), payload, ICRC (zero).
 *
 * ONC RPC over TCP (a connection of the TCP transport) is recorded as
 * what it is: Ethernet II, IPv4 or IPv6 as above, TCP (20 bytes: the
 * connection's ports, sequence and acknowledgment numbers that follow the
 * bytes of each direction from 1, PSH|ACK, window 65535, checksum 0) and
 * the stream's bytes, record marks included, cut into segments of at most
 * CAPTURE_TCP_SEG bytes; no handshake.  Wireshark decodes it as RPC (and
 * NFS) on port 2049, elsewhere with "Decode As".
 *
 * Owner prefixes: ce_ endpoint, ch_ frame header fields.
 */
#ifndef RPCRDMA_CAPTURE_INTERNAL_H
#define RPCRDMA_CAPTURE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <rpcrdma/capture.h>

/* RoCEv2's UDP destination port (IANA "roce"). */
#define CAPTURE_ROCE_PORT 4791u
/* InfiniBand RC opcodes (IBTA 9.2, Table 38; 0x17: IBA 1.2.1 annex). */
#define CAPTURE_OP_SEND_FIRST 0x00u
#define CAPTURE_OP_SEND_MIDDLE 0x01u
#define CAPTURE_OP_SEND_LAST 0x02u
#define CAPTURE_OP_SEND_ONLY 0x04u
#define CAPTURE_OP_RDMA_WRITE_ONLY 0x0Au
#define CAPTURE_OP_RDMA_READ_REQUEST 0x0Cu
#define CAPTURE_OP_RDMA_READ_RESPONSE_ONLY 0x10u
#define CAPTURE_OP_SEND_LAST_INV 0x16u
#define CAPTURE_OP_SEND_ONLY_INV 0x17u
/* Send payload per frame, as a 4096-byte path MTU would carry it. */
#define CAPTURE_MTU 4096u
/* Header bytes around a payload, at most: Ethernet 14, IPv6 40, UDP 8,
 * BTH 12, RETH 16, ICRC 4. */
#define CAPTURE_MAX_HDR 94u
/* Stream bytes per TCP segment at most (an IPv4 packet is <= 65535). */
#define CAPTURE_TCP_SEG 65000u
/* pcap file header and record header (tcpdump.org "pcap" format). */
#define CAPTURE_PCAP_FILE_HDR 24u
#define CAPTURE_PCAP_REC_HDR 16u
#define CAPTURE_PCAP_MAGIC_NS 0xa1b23c4du
#define CAPTURE_LINKTYPE_ETHERNET 1u
#define CAPTURE_SNAPLEN 262144u

/* One connection as the capturing side sees it; the PSNs belong to the
 * thread that owns the connection. */
struct capture_ep {
	struct sockaddr_storage ce_local, ce_peer;
	uint32_t ce_local_qp, ce_peer_qp;
	uint32_t ce_psn_out;  /* next PSN of frames local -> peer */
	uint32_t ce_psn_in;   /* next PSN of frames peer -> local */
	/* TCP (capture_tcp()): the ports in ce_local/ce_peer, and the next
	 * sequence number of each direction */
	uint32_t ce_seq_out, ce_seq_in;
};

/* The fields of one frame. */
struct capture_hdr {
	const struct sockaddr_storage *ch_src, *ch_dst;
	uint32_t ch_src_qp, ch_dst_qp;
	uint8_t ch_opcode;
	uint32_t ch_psn;
	bool ch_reth;            /* RETH: ch_va, ch_rkey, ch_dma_len */
	uint64_t ch_va;
	uint32_t ch_rkey, ch_dma_len;
	bool ch_aeth;            /* AETH: ACK syndrome 0x1f (no credit count), ch_msn */
	uint32_t ch_msn;
	bool ch_ieth;            /* IETH: ch_inv_rkey */
	uint32_t ch_inv_rkey;
	/* a TCP segment instead of RoCEv2 (the fields above but the
	 * addresses unused): the ports, sequence and acknowledgment numbers */
	bool ch_tcp;
	uint16_t ch_sport, ch_dport;
	uint32_t ch_seq, ch_ack;
};

/*
 * capture_frame_build - encode one frame of @h around @len payload bytes
 * gathered from @iov (@niov pieces, taken in order until @len) into @out.
 * Return: bytes written; 0 when @cap is too small, the payload would not
 * fit an IP packet, or an address is neither IPv4 nor IPv6 (IPv4-mapped
 * IPv6 addresses are written as IPv4).
 */
size_t capture_frame_build(uint8_t *out, size_t cap, const struct capture_hdr *h,
			   const struct iovec *iov, unsigned niov, size_t len);
/* capture_pcap_file_header - the 24-byte pcap file header. */
void capture_pcap_file_header(uint8_t out[CAPTURE_PCAP_FILE_HDR]);
/* capture_pcap_record_header - a record header: time @sec.@nsec, @len bytes. */
void capture_pcap_record_header(uint8_t out[CAPTURE_PCAP_REC_HDR], uint32_t sec,
				uint32_t nsec, uint32_t len);

/*
 * Recording (any thread; never blocks on the file).  @out: local -> peer,
 * else peer -> local.  Frames are dropped (counted) when the queue is full.
 */
/* capture_send - a Send of @len bytes gathered from @iov; split into
 * SEND FIRST/MIDDLE/LAST at CAPTURE_MTU; @inval: Send With Invalidate of
 * @inv_rkey (SEND ONLY/LAST with IETH). */
void capture_send(struct rpcrdma_capture *cap, struct capture_ep *ep, bool out,
		  const struct iovec *iov, unsigned niov, size_t len, bool inval,
		  uint32_t inv_rkey);
/* capture_rdma_write - an RDMA Write of @len bytes to (@rkey, @va) by the
 * side @out names the sender of; the first cc_data_bytes of @iov go in. */
void capture_rdma_write(struct rpcrdma_capture *cap, struct capture_ep *ep, bool out,
			uint32_t rkey, uint64_t va, uint32_t len,
			const struct iovec *iov, unsigned niov);
/* capture_rdma_read - an RDMA Read of @len bytes from (@rkey, @va) issued
 * by the side @out names: the READ REQUEST, then the READ RESPONSE ONLY
 * (opposite direction, same PSN) with the first cc_data_bytes of the data
 * read, gathered from @iov. */
void capture_rdma_read(struct rpcrdma_capture *cap, struct capture_ep *ep, bool out,
		       uint32_t rkey, uint64_t va, uint32_t len,
		       const struct iovec *iov, unsigned niov);
/* capture_tcp - @len bytes of a TCP connection's stream gathered from
 * @iov (records with their marks), sent by the side @out names, as
 * segments of at most CAPTURE_TCP_SEG bytes.  @ep's ce_local/ce_peer carry
 * the ports; its sequence numbers move on by @len. */
void capture_tcp(struct rpcrdma_capture *cap, struct capture_ep *ep, bool out,
		 const struct iovec *iov, unsigned niov, size_t len);
/* capture_data_bytes - cc_data_bytes of @cap (0: no RDMA data frames). */
uint32_t capture_data_bytes(const struct rpcrdma_capture *cap);

#endif /* RPCRDMA_CAPTURE_INTERNAL_H */
