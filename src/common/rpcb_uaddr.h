/* SPDX-License-Identifier: MIT */
/*
 * rpcb_uaddr.h - the port of an RFC 1833 universal address, as rpcbind's
 * GETADDR answers it: shared by the MOUNT client (nfsc_rpcb_getport) and
 * NLM's callbacks to a client's rpcbind (nlm_cb.c).
 */
#ifndef RPCRDMA_COMMON_RPCB_UADDR_H
#define RPCRDMA_COMMON_RPCB_UADDR_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <rpc/types.h>
#include <rpc/xdr.h>

/* Longest universal address decoded: an IPv6 address (at most 45
 * characters) and ".255.255", with room to spare. */
#define RPCRDMA_RPCB_UADDR_MAX 128u

/*
 * rpcrdma_xdr_uaddr - XDR of GETADDR's result, a string of at most
 * RPCRDMA_RPCB_UADDR_MAX bytes: a longer one fails to decode instead of
 * making libtirpc allocate what the peer's length word asks for (what
 * xdr_wrapstring() would do).  Free with xdr_free(rpcrdma_xdr_uaddr, ...).
 */
static inline bool_t rpcrdma_xdr_uaddr(XDR *x, char **uaddr)
{
	return xdr_string(x, uaddr, RPCRDMA_RPCB_UADDR_MAX);
}

/*
 * rpcrdma_rpcb_uaddr_port - the port of universal address @uaddr,
 * "h1.h2.h3.h4.p1.p2" (IPv4: exactly four address fields) or
 * "x:...:x.p1.p2" (IPv6): the last two fields, decimal 0..255 each, port
 * p1 * 256 + p2, not 0 (RFC 1833 section 2.2).  *@port is written only on
 * success.  Return: 0, or -EINVAL for anything else.
 */
static inline int rpcrdma_rpcb_uaddr_port(const char *uaddr, uint16_t *port)
{
	const char *lo = strrchr(uaddr, '.'), *hi;
	unsigned long p1, p2;
	unsigned dots = 0;
	char *end;

	for (hi = uaddr; *hi; hi++)
		dots += *hi == '.';
	if (!lo || lo == uaddr || (!strchr(uaddr, ':') && dots != 5))
		return -EINVAL;
	for (hi = lo - 1; hi > uaddr && *hi != '.'; hi--)
		;
	if (*hi != '.')
		return -EINVAL;
	p1 = strtoul(hi + 1, &end, 10);
	if (end != lo || end == hi + 1 || p1 > 255)
		return -EINVAL;
	p2 = strtoul(lo + 1, &end, 10);
	if (*end || end == lo + 1 || p2 > 255 || !(p1 | p2))
		return -EINVAL;
	*port = (uint16_t)(p1 << 8 | p2);
	return 0;
}

#endif /* RPCRDMA_COMMON_RPCB_UADDR_H */
