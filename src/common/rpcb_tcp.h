/* SPDX-License-Identifier: MIT */
/*
 * rpcb_tcp.h - registering the server's TCP side programs (MOUNT, NLM,
 * NSM) with the local rpcbind under the netids their listening socket
 * serves: "tcp" (portmap version 2, RFC 1833 section 3) when it accepts
 * IPv4 connections, "tcp6" (rpcbind version 3 SET with the socket's
 * universal address, RFC 1833 section 2.2.1) when it accepts IPv6 ones, as
 * a dual-stack socket does both.  A client over IPv6 (the kernel's
 * mountproto=tcp6, rpcrdma-nfs [ADDR]:/export without a MOUNT port) asks
 * rpcbind under tcp6 and finds nothing without the second.  Defined in
 * src/nfs3/nfs3_rpcbind.c (libtirpc).
 */
#ifndef RPCRDMA_COMMON_RPCB_TCP_H
#define RPCRDMA_COMMON_RPCB_TCP_H

#include <stdbool.h>
#include <stdint.h>

/**
 * rpcb_tcp_set - register (@prog, @vers) at listening TCP socket @fd's
 * port, under "tcp" and/or "tcp6" as the socket's family and
 * IPV6_V6ONLY say.  @replace: drop an earlier mapping of the program
 * under both netids first (a server that did not exit cleanly); without
 * it, a program another process registered (rpc.statd's NSM) stays and
 * this call fails.  A failure leaves nothing of ours registered.
 * Return: 0; -ECONNREFUSED when rpcbind is not running or refused a SET;
 * -EAFNOSUPPORT for a socket neither IPv4 nor IPv6; -errno of
 * getsockname(2).
 */
int rpcb_tcp_set(uint32_t prog, uint32_t vers, int fd, bool replace);

/** rpcb_tcp_unset - drop (@prog, @vers) under "tcp" and "tcp6". */
void rpcb_tcp_unset(uint32_t prog, uint32_t vers);

#endif /* RPCRDMA_COMMON_RPCB_TCP_H */
