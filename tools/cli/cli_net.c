// SPDX-License-Identifier: MIT
/*
 * cli_net.c - the tools' words for a host that does not resolve, a host
 * without RDMA devices, and an address no RDMA device reaches (cli.h).
 */
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include <infiniband/verbs.h>

#include "cli/cli.h"
#include "verbs/verbs.h"

int cli_resolve_host(const char *prog, const char *host)
{
	struct addrinfo hints, *res = NULL;
	int rc;

	memset(&hints, 0, sizeof(hints));
	hints.ai_socktype = SOCK_STREAM;
	rc = getaddrinfo(host, NULL, &hints, &res);
	if (rc) {
		fprintf(stderr, "%s: cannot resolve host %s: %s\n", prog, host,
			rc == EAI_SYSTEM ? strerror(errno) : gai_strerror(rc));
		return rc;
	}
	freeaddrinfo(res);
	return 0;
}

int cli_rdma_devices(void)
{
	struct ibv_device **list;
	int n = 0;

	rpcrdma_verbs_preload_providers();
	list = ibv_get_device_list(&n);
	if (!list)
		return 0;
	ibv_free_device_list(list);
	return n;
}

const char *cli_rdma_hint(int err, const char *host, char *buf, size_t cap)
{
	switch (err) {
	case -ENODEV:
		return " (" CLI_NO_RDMA_DEVICE_HINT ")";
	case -EHOSTUNREACH:
	case -ENETUNREACH:
	case -EADDRNOTAVAIL:
		snprintf(buf, cap, " (no RDMA route to %s: its address resolves, but no RDMA "
			 "device here reaches it: see `rdma link show` and `ip route get` "
			 "of the address)", host);
		return buf;
	default:
		return "";
	}
}
