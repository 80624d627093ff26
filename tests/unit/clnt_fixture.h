/* SPDX-License-Identifier: MIT */
/*
 * clnt_fixture.h - a Requester set up on the fake device (fake_verbs.c)
 * for the client unit tests.  Header-only: each test program includes it
 * after cmocka.h, fake_verbs.h and clnt/clnt_internal.h.
 */
#ifndef RPCRDMA_TEST_CLNT_FIXTURE_H
#define RPCRDMA_TEST_CLNT_FIXTURE_H

#include <stdint.h>
#include <stdlib.h>

/*
 * A client made from @cfg (clnt_init) on a fake QP and CQ, its request and
 * receive pools registered.  No Receive is posted yet and it is not
 * connected; the caller frees it with clnt_free().
 */
static inline struct rpcrdma_clnt *
clnt_fixture_new(const struct rpcrdma_clnt_config *cfg)
{
	static struct ibv_qp fake_qp;
	static struct ibv_cq fake_cq;
	struct rpcrdma_clnt *cl = calloc(1, sizeof(*cl));

	assert_non_null(cl);
	assert_int_equal(clnt_init(cl, cfg), 0);
	cl->cl_qp = &fake_qp;
	cl->cl_cq = &fake_cq;
	assert_int_equal(clnt_alloc_pools(cl), 0);
	return cl;
}

/*
 * Hand @cl the private data a peer would accept with (RFC 8797 section 4):
 * version 1, @send_size and @recv_size bytes of inline send and receive.
 */
static inline void clnt_fixture_set_peer(struct rpcrdma_clnt *cl, uint32_t send_size,
					 uint32_t recv_size)
{
	struct rpcrdma_cm_private peer = {
		.cp_version = 1, .cp_send_size = send_size, .cp_recv_size = recv_size,
	};
	uint8_t pdata[RPCRDMA_CM_PRIVATE_BYTES];

	rpcrdma_wire_encode_private(pdata, &peer);
	clnt_set_peer(cl, pdata, sizeof(pdata));
}

#endif /* RPCRDMA_TEST_CLNT_FIXTURE_H */
