// SPDX-License-Identifier: MIT
/*
 * bc-pair.c - vm-bc-pair, our client and our server exchanging backchannel
 * calls (RFC 8167) for tests/vm/backchannel.sh.
 *
 *   vm-bc-pair server ADDR PORT [worker-posts]
 *       serve program BCFWD v1 on ADDR:PORT until SIGTERM: PING(v) starts
 *       a backchannel call CBPROG v1 proc 1 (argument v) on the caller's
 *       connection and returns the call's start status (0 or a negative
 *       errno); TALLY returns the backchannel replies received, the sum of
 *       their results and the calls that failed.  On SIGTERM print the
 *       server's backchannel counters ("bc_replies N ...").  With
 *       worker-posts, the workers post the forward replies themselves
 *       (sc_reply_post), alongside the transport thread's backchannel
 *       Sends on the same QP.
 *   vm-bc-pair client SERVER SOURCE PORT N
 *       connect with 4 backchannel slots, serve CBPROG (v -> 3v + 1), send
 *       N PINGs (again after -EAGAIN: the server's 4 slots are busy), then
 *       ask TALLY until N replies came back; check their sum and that our
 *       program served N calls.
 *   vm-bc-pair solo SERVER SOURCE PORT N
 *       as client, for several clients at once: checks only its own side
 *       (N calls served, N replies sent, none dropped), then one NULL round
 *       trip so the server has taken every reply before we leave.
 *   vm-bc-pair deaf SERVER SOURCE PORT N
 *       connect without a backchannel (its calls are dropped), send N
 *       PINGs whose backchannel calls time out after 300 ms, ask TALLY
 *       until N calls failed, check we dropped every one that reached us.
 *   vm-bc-pair vanish SERVER SOURCE PORT N
 *       the same with a 60 s timeout, and leave at once: the server ends
 *       the calls with -ENOTCONN when the connection goes.
 *
 * Exit status 0 on success, 1 on a failed check, 2 for bad usage.
 */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rpcrdma/clnt.h>
#include <rpcrdma/svc.h>

#define BCFWD 0x20000088u
#define CBPROG 0x40000088u
#define P_PING 1u
#define P_TALLY 2u

static struct rpcrdma_svc *g_svc;
static atomic_uint g_replies, g_failures, g_served, g_timedout, g_notconn;
static atomic_ullong g_sum;

static int usage(void)
{
	fprintf(stderr, "usage: vm-bc-pair server ADDR PORT [worker-posts] | "
		"client|solo|deaf|vanish SERVER SOURCE PORT N\n");
	return 2;
}

/* ---------- server ---------- */

static void bc_done(void *arg, int status, const struct rpcrdma_rpc_msg *reply,
		    const uint8_t *res, size_t res_len)
{
	(void)arg;
	if (status || reply->rm_reply_stat != RPC_MSG_ACCEPTED ||
	    reply->rm_accept_stat != RPC_ACCEPT_SUCCESS || res_len != 4) {
		if (status != -ETIMEDOUT && status != -ENOTCONN)
			fprintf(stderr, "vm-bc-pair: backchannel call failed: %s\n",
				status ? strerror(-status) : "bad reply");
		atomic_fetch_add(&g_failures, 1);
		if (status == -ETIMEDOUT)
			atomic_fetch_add(&g_timedout, 1);
		if (status == -ENOTCONN)
			atomic_fetch_add(&g_notconn, 1);
		return;
	}
	atomic_fetch_add(&g_sum, (uint32_t)res[0] << 24 | (uint32_t)res[1] << 16 |
				 (uint32_t)res[2] << 8 | res[3]);
	atomic_fetch_add(&g_replies, 1);
}

static int fwd_dispatch(struct rpcrdma_svc_req *req, void *arg)
{
	struct rpcrdma_svc_bc *bc;
	uint8_t v[4];
	int rc;

	(void)arg;
	switch (req->rq_msg.rm_proc) {
	case 0:
		return RPCRDMA_SVC_SUCCESS;
	case P_PING: {
		const uint8_t *p = rpcrdma_xdr_get_fixed(&req->rq_args, 4);
		uint32_t tmo = rpcrdma_xdr_get_u32(&req->rq_args);
		struct rpcrdma_svc_bc_args a = {
			.ba_prog = CBPROG, .ba_vers = 1, .ba_proc = 1,
			.ba_cred_flavor = RPC_AUTH_NONE,
			.ba_args = v, .ba_args_len = 4,
			.ba_timeout_ms = tmo, .ba_done = bc_done,
		};

		if (!p || !rpcrdma_xdr_ok(&req->rq_args))
			return RPCRDMA_SVC_GARBAGE_ARGS;
		memcpy(v, p, 4);
		rc = rpcrdma_svc_bc_get(req, &bc);
		if (!rc) {
			rc = rpcrdma_svc_bc_call(bc, &a, NULL);
			rpcrdma_svc_bc_put(bc);
		}
		rpcrdma_xdr_put_u32(&req->rq_res, (uint32_t)rc);
		return RPCRDMA_SVC_SUCCESS;
	}
	case P_TALLY:
		rpcrdma_xdr_put_u32(&req->rq_res, atomic_load(&g_replies));
		rpcrdma_xdr_put_u64(&req->rq_res, atomic_load(&g_sum));
		rpcrdma_xdr_put_u32(&req->rq_res, atomic_load(&g_failures));
		return RPCRDMA_SVC_SUCCESS;
	default:
		return RPCRDMA_SVC_PROC_UNAVAIL;
	}
}

static void on_term(int sig)
{
	(void)sig;
	rpcrdma_svc_stop(g_svc);
}

static int server(const char *addr, const char *port, bool worker_posts)
{
	struct rpcrdma_svc_config cfg = {
		.sc_listen = addr, .sc_port = (uint16_t)atoi(port),
		.sc_memory = 256ull << 20, .sc_threads = 2,
		.sc_reply_post = worker_posts ? RPCRDMA_SVC_POST_WORKER : RPCRDMA_SVC_POST_AUTO,
	};
	struct rpcrdma_svc_stats st;
	int rc;

	rc = rpcrdma_svc_create(&cfg, &g_svc);
	if (rc) {
		fprintf(stderr, "vm-bc-pair: server: %s\n", strerror(-rc));
		return 1;
	}
	rpcrdma_svc_register(g_svc, BCFWD, 1, fwd_dispatch, NULL);
	signal(SIGTERM, on_term);
	signal(SIGINT, on_term);
	printf("serving\n");
	fflush(stdout);
	rc = rpcrdma_svc_run(g_svc);
	rpcrdma_svc_get_stats(g_svc, &st);
	printf("bc_replies %llu bc_unmatched %llu bc_timeouts %llu failures %u "
	       "(timed out %u, connection gone %u)\n",
	       (unsigned long long)st.ss_bc_replies,
	       (unsigned long long)st.ss_bc_unmatched, (unsigned long long)st.ss_bc_timeouts,
	       atomic_load(&g_failures), atomic_load(&g_timedout), atomic_load(&g_notconn));
	printf("bc_calls %llu worker_posts %llu\n", (unsigned long long)st.ss_bc_calls,
	       (unsigned long long)st.ss_worker_posts);
	/* After the run every pool is back: these show what leaked. */
	printf("left: ctx_in_use %llu recv_in_use %llu buf_bytes_in_use %llu conns_open %llu mrs_open %llu\n",
	       (unsigned long long)st.ss_ctx_in_use, (unsigned long long)st.ss_recv_in_use,
	       (unsigned long long)st.ss_buf_bytes_in_use, (unsigned long long)st.ss_conns_open,
	       (unsigned long long)st.ss_mrs_open);
	rpcrdma_svc_destroy(g_svc);
	return rc ? 1 : 0;
}

/* ---------- client ---------- */

static int cb_dispatch(const struct rpcrdma_rpc_msg *call, struct rpcrdma_xdr *args,
		       struct rpcrdma_xdr *res, void *arg)
{
	uint32_t v = rpcrdma_xdr_get_u32(args);

	(void)arg;
	if (call->rm_proc != 1 || !rpcrdma_xdr_ok(args))
		return RPC_ACCEPT_GARBAGE_ARGS;
	rpcrdma_xdr_put_u32(res, 3 * v + 1);
	atomic_fetch_add(&g_served, 1);
	return RPC_ACCEPT_SUCCESS;
}

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

enum mode { M_NORMAL, M_SOLO, M_DEAF, M_VANISH };

static unsigned g_tmo_ms = 20000; /* PING: the backchannel call's timeout */

/* One forward call of @proc (PING carries @v and g_tmo_ms); @want bytes
 * of its results into @out.  Return: 0 or the call's negative errno. */
static int fwd_call(struct rpcrdma_clnt *cl, uint32_t proc, uint32_t v, uint8_t *out,
		    uint32_t want)
{
	uint8_t args[8] = { (uint8_t)(v >> 24), (uint8_t)(v >> 16), (uint8_t)(v >> 8), (uint8_t)v,
			    (uint8_t)(g_tmo_ms >> 24), (uint8_t)(g_tmo_ms >> 16),
			    (uint8_t)(g_tmo_ms >> 8), (uint8_t)g_tmo_ms };
	uint8_t res[256];
	struct rpcrdma_clnt_call ca = {
		.ca_prog = BCFWD, .ca_vers = 1, .ca_proc = proc,
		.ca_args = args, .ca_args_len = proc == P_PING ? 8 : 0,
		.ca_res = res, .ca_res_cap = sizeof(res),
	};
	int rc = rpcrdma_clnt_call(cl, &ca);

	if (rc)
		return rc;
	if (ca.ca_res_len < ca.ca_res_off + want)
		return -EBADMSG;
	memcpy(out, res + ca.ca_res_off, want);
	return 0;
}

static int client(enum mode mode, const char *server, const char *source, const char *port,
		  unsigned n)
{
	struct rpcrdma_clnt_config cfg = {
		.cf_server = server, .cf_source = source, .cf_port = (uint16_t)atoi(port),
		.cf_auth_none = true,
		.cf_bc_slots = mode == M_NORMAL || mode == M_SOLO ? 4 : 0,
		.cf_max_credits = 8,
	};
	struct rpcrdma_clnt_stats st;
	struct rpcrdma_clnt *cl;
	unsigned long long want_sum = 0, sum = 0, base_sum;
	uint32_t replies = 0, failures = 0, base_replies, base_failures;
	uint8_t out[16];
	unsigned i, tries, busy = 0;
	int rc, ret = 1;

	rc = rpcrdma_clnt_create(&cfg, &cl);
	if (rc) {
		fprintf(stderr, "vm-bc-pair: connect: %s\n", strerror(-rc));
		return 1;
	}
	g_tmo_ms = mode == M_DEAF ? 300 : mode == M_VANISH ? 60000 : 20000;
	rc = cfg.cf_bc_slots ? rpcrdma_clnt_bc_register(cl, CBPROG, 1, cb_dispatch, NULL) : 0;
	if (rc) {
		fprintf(stderr, "vm-bc-pair: register: %s\n", strerror(-rc));
		goto out;
	}
	/* The server's tally counts every connection: start from it. */
	rc = fwd_call(cl, P_TALLY, 0, out, 16);
	if (rc) {
		fprintf(stderr, "vm-bc-pair: TALLY: %s\n", strerror(-rc));
		goto out;
	}
	base_replies = be32(out);
	base_sum = (unsigned long long)be32(out + 4) << 32 | be32(out + 8);
	base_failures = be32(out + 12);
	for (i = 1; i <= n; i++) {
		want_sum += 3ull * i + 1;
		for (tries = 0; tries < 2000; tries++) {
			rc = fwd_call(cl, P_PING, i, out, 4);
			if (rc || (int32_t)be32(out) != -EAGAIN)
				break;
			busy++;
			usleep(5000); /* the server's slots are all busy: later */
		}
		if (rc || be32(out)) {
			fprintf(stderr, "vm-bc-pair: PING %u: %s\n", i,
				strerror(rc ? -rc : -(int32_t)be32(out)));
			goto out;
		}
	}
	if (mode == M_SOLO) {
		for (tries = 0; tries < 1000 && atomic_load(&g_served) < n; tries++)
			usleep(10000);
		/* Our replies were sent before this call on the same QP: once
		 * it is answered the server has taken them. */
		rc = fwd_call(cl, 0, 0, out, 0);
		rpcrdma_clnt_get_stats(cl, &st);
		printf("pings %u (again after EAGAIN: %u); served %u, bc_calls %llu bc_replies %llu bc_drops %llu\n",
		       n, busy, atomic_load(&g_served), (unsigned long long)st.cs_bc_calls,
		       (unsigned long long)st.cs_bc_replies, (unsigned long long)st.cs_bc_drops);
		if (rc || atomic_load(&g_served) != n || st.cs_bc_calls != n ||
		    st.cs_bc_replies != n || st.cs_bc_drops) {
			fprintf(stderr, "vm-bc-pair: FAILED: want %u calls served and answered\n", n);
			goto out;
		}
		ret = 0;
		goto out;
	}
	if (mode == M_VANISH) {
		printf("pings %u, leaving with their backchannel calls outstanding\n", n);
		ret = 0;
		goto out;
	}
	/* The replies to the last calls may still be on their way. */
	for (tries = 0; tries < 1000; tries++) {
		rc = fwd_call(cl, P_TALLY, 0, out, 16);
		if (rc) {
			fprintf(stderr, "vm-bc-pair: TALLY: %s\n", strerror(-rc));
			goto out;
		}
		replies = be32(out) - base_replies;
		sum = ((unsigned long long)be32(out + 4) << 32 | be32(out + 8)) - base_sum;
		failures = be32(out + 12) - base_failures;
		if (replies + failures >= n)
			break;
		usleep(10000);
	}
	rpcrdma_clnt_get_stats(cl, &st);
	printf("pings %u (again after EAGAIN: %u), server: replies %u sum %llu failures %u; "
	       "client: served %u, bc_calls %llu bc_replies %llu bc_drops %llu\n",
	       n, busy, replies, sum, failures, atomic_load(&g_served),
	       (unsigned long long)st.cs_bc_calls, (unsigned long long)st.cs_bc_replies,
	       (unsigned long long)st.cs_bc_drops);
	if (mode == M_DEAF) {
		/* Every call failed (timed out); each one that reached us
		 * was dropped unanswered: no backchannel here. */
		if (failures != n || replies || !st.cs_bc_calls || st.cs_bc_drops != st.cs_bc_calls ||
		    st.cs_bc_replies) {
			fprintf(stderr, "vm-bc-pair: FAILED: want %u failed calls, all dropped here\n", n);
			goto out;
		}
		ret = 0;
		goto out;
	}
	if (replies != n || failures || sum != want_sum || atomic_load(&g_served) != n ||
	    st.cs_bc_calls != n || st.cs_bc_replies != n || st.cs_bc_drops) {
		fprintf(stderr, "vm-bc-pair: FAILED: want %u replies summing to %llu\n", n, want_sum);
		goto out;
	}
	ret = 0;
out:
	rpcrdma_clnt_destroy(cl);
	return ret;
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "server"))
		return server(argv[2], argv[3], false);
	if (argc == 5 && !strcmp(argv[1], "server") && !strcmp(argv[4], "worker-posts"))
		return server(argv[2], argv[3], true);
	if (argc == 6 && !strcmp(argv[1], "client"))
		return client(M_NORMAL, argv[2], argv[3], argv[4], (unsigned)atoi(argv[5]));
	if (argc == 6 && !strcmp(argv[1], "solo"))
		return client(M_SOLO, argv[2], argv[3], argv[4], (unsigned)atoi(argv[5]));
	if (argc == 6 && !strcmp(argv[1], "deaf"))
		return client(M_DEAF, argv[2], argv[3], argv[4], (unsigned)atoi(argv[5]));
	if (argc == 6 && !strcmp(argv[1], "vanish"))
		return client(M_VANISH, argv[2], argv[3], argv[4], (unsigned)atoi(argv[5]));
	return usage();
}
