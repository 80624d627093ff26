// SPDX-License-Identifier: MIT
/*
 * capture_frame.c - synthesized RoCEv2 frames around RPC-over-RDMA messages
 * (layout in capture.h) and the pcap file and record headers.
 */
#include <netinet/in.h>
#include <string.h>

#include "capture/capture.h"
#include "common/be.h"

/* @ss as 4 (IPv4, IPv4-mapped IPv6 included) or 16 address bytes; 0 for
 * another family. */
static unsigned capture_addr(const struct sockaddr_storage *ss, const uint8_t **a)
{
	if (ss->ss_family == AF_INET) {
		*a = (const uint8_t *)&((const struct sockaddr_in *)ss)->sin_addr;
		return 4;
	}
	if (ss->ss_family == AF_INET6) {
		const struct in6_addr *v6 = &((const struct sockaddr_in6 *)ss)->sin6_addr;

		if (IN6_IS_ADDR_V4MAPPED(v6)) {
			*a = v6->s6_addr + 12;
			return 4;
		}
		*a = v6->s6_addr;
		return 16;
	}
	return 0;
}

static uint16_t capture_ip_checksum(const uint8_t *h, size_t len)
{
	uint32_t sum = 0;
	size_t i;

	for (i = 0; i + 1 < len; i += 2)
		sum += (uint32_t)h[i] << 8 | h[i + 1];
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

/* Locally administered MAC 02:00 + the address's last four bytes. */
static uint8_t *capture_mac(uint8_t *p, const uint8_t *a, unsigned alen)
{
	p[0] = 0x02;
	p[1] = 0x00;
	memcpy(p + 2, a + alen - 4, 4);
	return p + 6;
}

size_t capture_frame_build(uint8_t *out, size_t cap, const struct capture_hdr *h,
			   const struct iovec *iov, unsigned niov, size_t len)
{
	const uint8_t *src = NULL, *dst = NULL;
	unsigned alen = capture_addr(h->ch_src, &src), dlen = capture_addr(h->ch_dst, &dst);
	size_t ib = 12 + (h->ch_reth ? 16 : 0) + (h->ch_aeth ? 4 : 0) + (h->ch_ieth ? 4 : 0) +
		    len + 4;
	size_t udp = h->ch_tcp ? 20 + len : 8 + ib, ip = (alen == 4 ? 20 : 40),
	       total = 14 + ip + udp, left = len;
	uint8_t *p = out, *iph;
	unsigned i;

	if (!alen || alen != dlen || total > cap || udp + (alen == 4 ? 20 : 0) > 65535)
		return 0;
	/* Ethernet II */
	p = capture_mac(p, dst, dlen);
	p = capture_mac(p, src, alen);
	p = put_be16(p, alen == 4 ? 0x0800 : 0x86dd);
	/* IP */
	iph = p;
	if (alen == 4) {
		*p++ = 0x45;
		*p++ = 0;
		p = put_be16(p, (uint16_t)(20 + udp));
		p = put_be16(p, 0);          /* identification */
		p = put_be16(p, 0x4000);     /* DF */
		*p++ = 64;
		*p++ = h->ch_tcp ? IPPROTO_TCP : IPPROTO_UDP;
		p = put_be16(p, 0);          /* checksum, below */
		memcpy(p, src, 4);
		memcpy(p + 4, dst, 4);
		p += 8;
		store_be16(iph + 10, capture_ip_checksum(iph, 20));
	} else {
		p = put_be32(p, 0x60000000u);
		p = put_be16(p, (uint16_t)udp);
		*p++ = h->ch_tcp ? IPPROTO_TCP : IPPROTO_UDP;
		*p++ = 64;
		memcpy(p, src, 16);
		memcpy(p + 16, dst, 16);
		p += 32;
	}
	if (h->ch_tcp) {
		/* TCP: ports, seq, ack, data offset 5 words, PSH|ACK, window,
		 * checksum 0 (not computed), urgent pointer 0 */
		p = put_be16(p, h->ch_sport);
		p = put_be16(p, h->ch_dport);
		p = put_be32(p, h->ch_seq);
		p = put_be32(p, h->ch_ack);
		*p++ = 5 << 4;
		*p++ = 0x18;
		p = put_be16(p, 0xffff);
		p = put_be16(p, 0);
		p = put_be16(p, 0);
		for (i = 0; i < niov && left; i++) {
			size_t n = iov[i].iov_len < left ? iov[i].iov_len : left;

			if (n)
				memcpy(p, iov[i].iov_base, n);
			p += n;
			left -= n;
		}
		return left ? 0 : (size_t)(p - out);
	}
	/* UDP */
	p = put_be16(p, (uint16_t)(0xC000u | (h->ch_src_qp & 0x3fffu)));
	p = put_be16(p, CAPTURE_ROCE_PORT);
	p = put_be16(p, (uint16_t)udp);
	p = put_be16(p, 0);
	/* BTH: opcode; SE, M, pad count, TVer all 0; P_Key; reserved; QP;
	 * AckReq and reserved 0; PSN */
	*p++ = h->ch_opcode;
	*p++ = 0;
	p = put_be16(p, 0xffff);
	p = put_be32(p, h->ch_dst_qp & 0xffffffu);
	p = put_be32(p, h->ch_psn & 0xffffffu);
	if (h->ch_reth) {
		p = put_be64(p, h->ch_va);
		p = put_be32(p, h->ch_rkey);
		p = put_be32(p, h->ch_dma_len);
	}
	if (h->ch_aeth)
		p = put_be32(p, 0x1f000000u | (h->ch_msn & 0xffffffu));
	if (h->ch_ieth)
		p = put_be32(p, h->ch_inv_rkey);
	for (i = 0; i < niov && left; i++) {
		size_t n = iov[i].iov_len < left ? iov[i].iov_len : left;

		memcpy(p, iov[i].iov_base, n);
		p += n;
		left -= n;
	}
	if (left)
		return 0; /* fewer bytes than @len given */
	p = put_be32(p, 0); /* ICRC */
	return (size_t)(p - out);
}

void capture_pcap_file_header(uint8_t out[CAPTURE_PCAP_FILE_HDR])
{
	/* Written in host order; readers detect it from the magic. */
	uint32_t w[6] = { CAPTURE_PCAP_MAGIC_NS, 2u | 4u << 16, 0, 0, CAPTURE_SNAPLEN,
			  CAPTURE_LINKTYPE_ETHERNET };
	uint16_t v[2] = { 2, 4 };

	memcpy(out, &w[0], 4);
	memcpy(out + 4, &v[0], 2);
	memcpy(out + 6, &v[1], 2);
	memcpy(out + 8, &w[2], 4);
	memcpy(out + 12, &w[3], 4);
	memcpy(out + 16, &w[4], 4);
	memcpy(out + 20, &w[5], 4);
}

void capture_pcap_record_header(uint8_t out[CAPTURE_PCAP_REC_HDR], uint32_t sec,
				uint32_t nsec, uint32_t len)
{
	memcpy(out, &sec, 4);
	memcpy(out + 4, &nsec, 4);
	memcpy(out + 8, &len, 4);  /* captured */
	memcpy(out + 12, &len, 4); /* on the wire */
}
