/* SPDX-License-Identifier: MIT */
/*
 * tprog.h - the test program the server's unit tests (test_svc.c,
 * test_svc_faults.c) and its fuzz target (tests/fuzz/fuzz_svc.c) register:
 * four procedures whose replies a test can work out from the call.
 */
#ifndef RPCRDMA_TEST_TPROG_H
#define RPCRDMA_TEST_TPROG_H

#include <rpcrdma/svc.h>

/* Program number the unit tests use (fuzz seeds carry their own). */
#define TPROG 0x20000099u

enum tprog_proc {
	TP_NULL = 0,     /* no arguments, no results */
	TP_ECHO = 1,     /* opaque<> in, the same opaque<> out, inline */
	TP_ECHO_DDP = 2, /* opaque<> in; out: its length, its bytes as DDP
			  * data (rpcrdma_svc_ddp_begin/end), then the word
			  * TPROG_TRAILER */
	TP_BIG = 3,      /* uint32 n in (n taken modulo TPROG_BIG_MAX);
			  * out: n bytes of 0x5a, no length word */
};

#define TPROG_TRAILER 0xc0ffeeu
#define TPROG_BIG_MAX (200u << 10)

/*
 * tprog_dispatch - serve one call of the test program (any program number
 * and version: the caller registers it).  @arg unused.
 * Return: RPCRDMA_SVC_SUCCESS, also when the results overflow rq_res (the
 * transport answers that, RFC 8166 4.5.3); RPCRDMA_SVC_GARBAGE_ARGS for
 * arguments that do not decode; RPCRDMA_SVC_SYSTEM_ERR when TP_ECHO_DDP
 * cannot start its DDP data; RPCRDMA_SVC_PROC_UNAVAIL for other procedures.
 */
int tprog_dispatch(struct rpcrdma_svc_req *req, void *arg);

#endif /* RPCRDMA_TEST_TPROG_H */
