// SPDX-License-Identifier: MIT
/*
 * nfs3_rpcbind.c - registering NFS version 3 over RPC-over-RDMA with the
 * local rpcbind (RFC 1833 RPCBPROC_SET/UNSET, version 3) under the netids
 * "rdma" and "rdma6" (RFC 5665 section 5.1), so that `rpcinfo` lists it.
 *
 * libtirpc's rpcb_set() wants a struct netconfig that it can turn into a
 * universal address, and /etc/netconfig has no RDMA netids; so the call
 * is made here with libtirpc's client and XDR over rpcbind's local socket
 * (where it accepts SET and UNSET from the owner), with the universal
 * address (RFC 5665 section 5.2.3.3/4: the address, then the port's two
 * bytes in decimal) written here.
 *
 * Also the TCP side programs' registration (src/common/rpcb_tcp.h): under
 * "tcp" and "tcp6", which /etc/netconfig has, through libtirpc; NFS v3
 * over the service layer's own TCP transport registers the same way.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <rpc/pmap_clnt.h>
#include <rpc/rpc.h>
#include <rpc/rpcb_clnt.h>
#include <rpc/rpcb_prot.h>
/* <rpc/rpc_msg.h> and <rpcrdma/wire.h> both define RPC_MSG_VERSION. */
#undef RPC_MSG_VERSION

#include "nfs3_internal.h"
#include "../common/rpcb_tcp.h"

/* rpcbind's local socket (libtirpc's _PATH_RPCBINDSOCK lives under /var/run) */
static const char *const rpcb_socks[] = { "/run/rpcbind.sock", _PATH_RPCBINDSOCK };

static CLIENT *rpcb_local(void)
{
	for (size_t i = 0; i < sizeof(rpcb_socks) / sizeof(rpcb_socks[0]); i++) {
		struct sockaddr_un sun = { .sun_family = AF_UNIX };
		struct netbuf nb = { .len = sizeof(sun), .maxlen = sizeof(sun),
				     .buf = &sun };
		CLIENT *cl;
		int fd;

		snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", rpcb_socks[i]);
		fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0)
			return NULL;
		if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0) {
			close(fd);
			continue;
		}
		cl = clnt_vc_create(fd, &nb, RPCBPROG, RPCBVERS, 0, 0);
		if (!cl) {
			close(fd);
			return NULL;
		}
		clnt_control(cl, CLSET_FD_CLOSE, NULL);
		return cl;
	}
	return NULL;
}

/* rpcb_call - SET or UNSET of (NFS, 3, @netid, @uaddr). */
static int rpcb_call(CLIENT *cl, u_int32_t proc, const char *netid,
		     const char *uaddr)
{
	struct timeval tv = { 10, 0 };
	char owner[16];
	bool_t ok = FALSE;
	RPCB parms = {
		.r_prog = RPCRDMA_NFS3_PROGRAM,
		.r_vers = RPCRDMA_NFS3_VERSION,
		.r_netid = (char *)netid,
		.r_addr = (char *)uaddr,
		.r_owner = owner,
	};

	snprintf(owner, sizeof(owner), "%u", (unsigned)geteuid());
	if (clnt_call(cl, proc, (xdrproc_t)xdr_rpcb, (caddr_t)&parms,
		      (xdrproc_t)xdr_bool, (caddr_t)&ok, tv) != RPC_SUCCESS)
		return -EIO;
	return ok ? 0 : -EACCES;
}

/* uaddr - "ADDR.p1.p2" of @af address @addr (NULL: any) and @port. */
static int uaddr(int af, const char *addr, uint16_t port, char *buf, size_t len)
{
	char a[INET6_ADDRSTRLEN];
	uint8_t bin[16];

	if (!addr)
		snprintf(a, sizeof(a), "%s", af == AF_INET ? "0.0.0.0" : "::");
	else if (inet_pton(af, addr, bin) != 1 || !inet_ntop(af, bin, a, sizeof(a)))
		return -EINVAL;
	snprintf(buf, len, "%s.%u.%u", a, (unsigned)port >> 8, (unsigned)port & 0xff);
	return 0;
}

int rpcrdma_nfs3_rpcbind_set(const char *listen, uint16_t port)
{
	static const struct { int af; const char *netid; } ids[] = {
		{ AF_INET, "rdma" },
		{ AF_INET6, "rdma6" },
	};
	char ua[INET6_ADDRSTRLEN + 16];
	CLIENT *cl;
	int err = 0, done = 0;

	if (port == 0)
		return -EINVAL;
	cl = rpcb_local();
	if (!cl)
		return -ECONNREFUSED;
	for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
		if (uaddr(ids[i].af, listen, port, ua, sizeof(ua)))
			continue; /* @listen is of the other family */
		/* a stale mapping (a server that did not exit cleanly) first */
		rpcb_call(cl, RPCBPROC_UNSET, ids[i].netid, "");
		err = rpcb_call(cl, RPCBPROC_SET, ids[i].netid, ua);
		if (err)
			break;
		done++;
	}
	if (!err && !done)
		err = -EINVAL;
	clnt_destroy(cl);
	if (err)
		rpcrdma_nfs3_rpcbind_unset();
	return err;
}

void rpcrdma_nfs3_rpcbind_unset(void)
{
	CLIENT *cl = rpcb_local();

	if (!cl)
		return;
	rpcb_call(cl, RPCBPROC_UNSET, "rdma", "");
	rpcb_call(cl, RPCBPROC_UNSET, "rdma6", "");
	clnt_destroy(cl);
}

int rpcrdma_nfs3_rpcbind_set_tcp(int fd)
{
	if (fd < 0)
		return -EBADF;
	return rpcb_tcp_set(RPCRDMA_NFS3_PROGRAM, RPCRDMA_NFS3_VERSION, fd, true);
}

void rpcrdma_nfs3_rpcbind_unset_tcp(void)
{
	rpcb_tcp_unset(RPCRDMA_NFS3_PROGRAM, RPCRDMA_NFS3_VERSION);
}

void rpcb_tcp_unset(uint32_t prog, uint32_t vers)
{
	struct netconfig *nc = getnetconfigent("tcp6");

	pmap_unset(prog, vers);
	if (nc) {
		rpcb_unset(prog, vers, nc);
		freenetconfigent(nc);
	}
}

int rpcb_tcp_set(uint32_t prog, uint32_t vers, int fd, bool replace)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss), olen;
	struct netbuf nb = { .buf = &ss };
	struct netconfig *nc;
	bool v4, v6, ok;
	int v6only = 0;
	uint16_t port;

	if (getsockname(fd, (struct sockaddr *)&ss, &len) < 0)
		return -errno;
	if (ss.ss_family == AF_INET) {
		v4 = true;
		v6 = false;
		port = ntohs(((struct sockaddr_in *)&ss)->sin_port);
	} else if (ss.ss_family == AF_INET6) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;

		olen = sizeof(v6only);
		if (getsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &v6only, &olen) < 0)
			v6only = 1;
		/* the wildcard of a dual-stack socket takes IPv4 too */
		v4 = !v6only && IN6_IS_ADDR_UNSPECIFIED(&s6->sin6_addr);
		v6 = true;
		port = ntohs(s6->sin6_port);
	} else {
		return -EAFNOSUPPORT;
	}
	if (replace)
		rpcb_tcp_unset(prog, vers);
	if (v4 && !pmap_set(prog, vers, IPPROTO_TCP, port))
		return -ECONNREFUSED;
	if (!v6)
		return 0;
	nc = getnetconfigent("tcp6");
	nb.len = nb.maxlen = len;
	ok = nc && rpcb_set(prog, vers, nc, &nb);
	if (nc)
		freenetconfigent(nc);
	if (ok)
		return 0;
	if (v4)
		pmap_unset(prog, vers);
	return -ECONNREFUSED;
}
