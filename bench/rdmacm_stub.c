// SPDX-License-Identifier: MIT
/*
 * rdmacm_stub.c - LD_PRELOAD stand-in for the rdma_cm calls rpcrdma-nfsd
 * makes to listen, for bench/host-meta-prof.sh on a host with no RDMA
 * device: the listener "exists" (an eventfd that never fires as its event
 * channel), so the server starts and serves NFS over TCP only.  Never for
 * a real server.
 */
#include <netinet/in.h>
#include <rdma/rdma_cma.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <unistd.h>

struct rdma_event_channel *rdma_create_event_channel(void)
{
	struct rdma_event_channel *c = calloc(1, sizeof(*c));

	if (c)
		c->fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	return c;
}

void rdma_destroy_event_channel(struct rdma_event_channel *c)
{
	close(c->fd);
	free(c);
}

int rdma_create_id(struct rdma_event_channel *ch, struct rdma_cm_id **id, void *ctx,
		   enum rdma_port_space ps)
{
	*id = calloc(1, sizeof(**id));
	if (!*id)
		return -1;
	(*id)->channel = ch;
	(*id)->context = ctx;
	(*id)->ps = ps;
	return 0;
}

int rdma_destroy_id(struct rdma_cm_id *id)
{
	free(id);
	return 0;
}

int rdma_getaddrinfo(const char *node, const char *service,
		     const struct rdma_addrinfo *hints, struct rdma_addrinfo **res)
{
	struct rdma_addrinfo *r = calloc(1, sizeof(*r));
	struct sockaddr_in6 *s = calloc(1, sizeof(*s));

	(void)node;
	(void)service;
	(void)hints;
	if (!r || !s) {
		free(r);
		free(s);
		return -1;
	}
	s->sin6_family = AF_INET6;
	r->ai_src_addr = (struct sockaddr *)s;
	r->ai_src_len = sizeof(*s);
	*res = r;
	return 0;
}

void rdma_freeaddrinfo(struct rdma_addrinfo *r)
{
	if (r) {
		free(r->ai_src_addr);
		free(r);
	}
}

int rdma_bind_addr(struct rdma_cm_id *id, struct sockaddr *addr)
{
	(void)id;
	(void)addr;
	return 0;
}

int rdma_listen(struct rdma_cm_id *id, int backlog)
{
	(void)id;
	(void)backlog;
	return 0;
}
