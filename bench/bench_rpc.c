// SPDX-License-Identifier: MIT
/*
 * bench_rpc.c - the RPC-over-RDMA transport alone: an rpcrdma client
 * calling an rpcrdma server, no NFS (a benchmark, not a test).
 *
 *   bench_rpc server --listen ADDR [--port N] [--threads N] [--contexts N]
 *                    [--small-contexts N] [--transport-threads N] [--workers-only]
 *                    [--reply-post auto|transport|worker]
 *   bench_rpc client [--source ADDR] SERVER [--port N]
 *             (--null --inflight N --seconds S [--program P --version V] |
 *              --echo BYTES --count N [--inflight N]) [--persistent-mr]
 *             [--main-restarts]
 *
 * The server serves program 0x20000088 version 1: procedure 0 is NULL,
 * procedure 1 "echo" takes an opaque and returns it.  The client sends the
 * opaque as DDP-eligible argument data (a Read chunk once it does not fit
 * inline) and offers a Write chunk for the result, which the server fills
 * with rpcrdma_svc_ddp_begin()/rpcrdma_svc_ddp_end(): one 1 MiB echo moves
 * 1 MiB by RDMA Read and 1 MiB by RDMA Write.  --program and --version
 * send the NULL calls to another program, any server's (NFS version 3 is
 * 100003 3: rpcrdma-nfsd's or the kernel's nfsd, port 20049).
 *
 * --contexts sets the server's large call contexts per RDMA device
 * (sc_call_contexts, default 256), which only calls with chunks beyond the
 * inline size take (the echo); every call holds one of the small ones,
 * created on demand up to sc_small_contexts (default 4096,
 * --small-contexts).  --threads 0
 * serves the calls on the server's run-loop thread (sc_loop_dispatch).
 * Otherwise, as rpcrdma-nfsd does with NFS, the program is registered with
 * RPCRDMA_SVC_TRY_TRANSPORT: NULL is served on the transport thread, and
 * echo (a copy of up to 1 MiB) is deferred to a worker; --workers-only
 * hands every call to a worker.
 *
 * The client keeps --inflight asynchronous calls in flight for --seconds
 * (NULL) or for --count calls (echo): each call's completion callback
 * starts the next one on the completion thread
 * (rpcrdma_clnt_try_call_async(); the Sends started in one wake-up are
 * posted together); the main thread starts the first calls and any the
 * callback could not (no credit free) in one batch
 * (rpcrdma_clnt_batch_begin()); with --main-restarts it starts all of them
 * (the way before 2026-12-02).  It prints one JSON object: calls per
 * second, latency median and 99th percentile (microseconds, send to
 * completion callback), and for echo the goodput in MB/s (2^20 B/s, the
 * echoed bytes per second, each way).
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <arpa/inet.h>

#include <rpcrdma/clnt.h>
#include <rpcrdma/svc.h>
#include <rpcrdma/xdr.h>

#define BENCH_PROG 0x20000088u
#define BENCH_VERS 1u
#define BENCH_PROC_NULL 0u
#define BENCH_PROC_ECHO 1u
#define BENCH_PORT 20051
#define BENCH_MAX_ECHO (1u << 20)
#define BENCH_MAX_INFLIGHT 128
#define BENCH_RES_CAP 512

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ------------------------------------------------------------------ server */

static struct rpcrdma_svc *g_svc;

static void on_signal(int sig)
{
	(void)sig;
	if (g_svc)
		rpcrdma_svc_stop(g_svc);
}

/**
 * bench_dispatch - serve NULL and echo.
 * @req: the call.  @arg: unused.
 *
 * Echo decodes opaque<BENCH_MAX_ECHO> and returns it as DDP-eligible
 * result data, so it goes back through the Write chunk the client offers.
 * Return: an accept_stat.
 */
static int bench_dispatch(struct rpcrdma_svc_req *req, void *arg)
{
	const uint8_t *data;
	uint8_t *dst;
	uint32_t len;

	(void)arg;
	switch (req->rq_msg.rm_proc) {
	case BENCH_PROC_NULL:
		return RPCRDMA_SVC_SUCCESS;
	case BENCH_PROC_ECHO:
		if (req->rq_transport)
			return RPCRDMA_SVC_DEFER; /* a large copy: a worker's job */
		data = rpcrdma_xdr_get_opaque(&req->rq_args, BENCH_MAX_ECHO, &len);
		if (!data)
			return RPCRDMA_SVC_GARBAGE_ARGS;
		rpcrdma_xdr_put_u32(&req->rq_res, len);
		dst = rpcrdma_svc_ddp_begin(req, len);
		if (!dst || !rpcrdma_xdr_ok(&req->rq_res))
			return RPCRDMA_SVC_SYSTEM_ERR;
		memcpy(dst, data, len);
		rpcrdma_svc_ddp_end(req, len);
		return RPCRDMA_SVC_SUCCESS;
	default:
		return RPCRDMA_SVC_PROC_UNAVAIL;
	}
}

static int run_server(const char *listen, uint16_t port, unsigned threads,
		      unsigned contexts, unsigned small_contexts, unsigned transport_threads,
		      bool workers_only, int reply_post)
{
	struct rpcrdma_svc_config cfg = {
		.sc_listen = listen,
		.sc_port = port,
		.sc_threads = threads,
		.sc_transport_threads = transport_threads,
		.sc_reply_post = reply_post,
		.sc_loop_dispatch = threads == 0,
		.sc_call_contexts = contexts,
		.sc_small_contexts = small_contexts,
		.sc_max_payload = BENCH_MAX_ECHO,
	};
	struct rpcrdma_svc_stats st;
	struct sigaction sa = { .sa_handler = on_signal };
	int ret;

	ret = rpcrdma_svc_create(&cfg, &g_svc);
	if (ret) {
		fprintf(stderr, "bench_rpc: cannot listen on %s port %u: %s\n",
			listen ? listen : "any", port, strerror(-ret));
		return 1;
	}
	ret = rpcrdma_svc_register_flags(g_svc, BENCH_PROG, BENCH_VERS, bench_dispatch, NULL,
					 workers_only ? 0 : RPCRDMA_SVC_TRY_TRANSPORT);
	if (ret) {
		fprintf(stderr, "bench_rpc: register: %s\n", strerror(-ret));
		rpcrdma_svc_destroy(g_svc);
		return 1;
	}
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	fprintf(stderr, "bench_rpc: serving program %#x version %u on %s port %u\n",
		BENCH_PROG, BENCH_VERS, listen ? listen : "any", port);
	ret = rpcrdma_svc_run(g_svc);
	rpcrdma_svc_get_stats(g_svc, &st);
	rpcrdma_svc_stats_json(&st, stderr);
	rpcrdma_svc_destroy(g_svc);
	if (ret) {
		fprintf(stderr, "bench_rpc: server: %s\n", strerror(-ret));
		return 1;
	}
	return 0;
}

/* ------------------------------------------------------------------ client */

/** One call slot: a call kept in flight again and again. */
struct slot {
	struct rpcrdma_clnt_call ca;
	uint32_t len_be;          /* echo: the opaque's length word */
	uint8_t *rddp;            /* echo: where the result data lands */
	uint8_t res[BENCH_RES_CAP];
	uint64_t t_sent;
	uint64_t t_done;
	int status;
	struct run *run;
	unsigned idx;
};

/** What the calls share: accounting, and the slots handed back to main. */
struct run {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	unsigned done[BENCH_MAX_INFLIGHT]; /* ring of slot indexes for main */
	unsigned head, count;
	/* restarting: set before the first call, read-only after */
	struct rpcrdma_clnt *cl;
	bool cb_restart;          /* callbacks start the next call themselves */
	bool echo;
	uint64_t deadline;        /* NULL: no call starts after it */
	unsigned long limit;      /* echo: calls to make */
	const uint8_t *src;       /* echo: the data sent */
	uint32_t bytes;
	/* under lock */
	unsigned long sent, completed, errors, cb_starts;
	int first_err;
	double *lat;
	size_t nlat, cap_lat;
};

/* One more call to start?  Counts it as sent.  Lock held. */
static bool run_more(struct run *r, uint64_t now)
{
	if (r->first_err)
		return false;
	if (r->echo ? r->sent >= r->limit : now >= r->deadline)
		return false;
	r->sent++;
	return true;
}

/* Account the outcome of slot @s's call.  Lock held. */
static void run_account(struct run *r, struct slot *s, int status)
{
	if (status) {
		if (!r->first_err)
			r->first_err = status;
		r->errors++;
		return;
	}
	if (r->echo && (s->ca.ca_rddp_len != r->bytes ||
			(r->completed == 0 && memcmp(s->rddp, r->src, r->bytes)))) {
		if (!r->first_err)
			r->first_err = -EBADMSG;
		r->errors++;
		return;
	}
	r->completed++;
	if (r->nlat == r->cap_lat) {
		size_t cap = r->cap_lat ? r->cap_lat * 2 : 4096;
		double *n = realloc(r->lat, cap * sizeof(*r->lat));

		if (!n) {
			if (!r->first_err)
				r->first_err = -ENOMEM;
			return;
		}
		r->lat = n;
		r->cap_lat = cap;
	}
	r->lat[r->nlat++] = (double)(s->t_done - s->t_sent) / 1e3;
}

static void call_done(struct rpcrdma_clnt_call *ca, int status, void *arg)
{
	struct slot *s = arg;
	struct run *r = s->run;
	bool again;

	(void)ca;
	s->t_done = now_ns();
	pthread_mutex_lock(&r->lock);
	run_account(r, s, status);
	again = r->cb_restart && run_more(r, s->t_done);
	pthread_mutex_unlock(&r->lock);
	if (again) {
		/* Without waiting: the credit this call freed is the next
		 * one's; its Send goes out with the others started during
		 * this wake-up of the completion thread. */
		/* the clock just read serves: one clock_gettime() per call */
		s->t_sent = s->t_done;
		if (!rpcrdma_clnt_try_call_async(r->cl, &s->ca, call_done, s, NULL)) {
			pthread_mutex_lock(&r->lock);
			r->cb_starts++;
			pthread_mutex_unlock(&r->lock);
			return;
		}
	}
	pthread_mutex_lock(&r->lock);
	if (again)
		r->sent--; /* the main thread decides again */
	r->done[(r->head + r->count) % BENCH_MAX_INFLIGHT] = s->idx;
	r->count++;
	pthread_cond_signal(&r->cond);
	pthread_mutex_unlock(&r->lock);
}

/* Wait for slots handed back; take all of them (at most @max) into @out. */
static unsigned wait_done_all(struct run *r, unsigned *out, unsigned max)
{
	unsigned n = 0;

	pthread_mutex_lock(&r->lock);
	while (!r->count)
		pthread_cond_wait(&r->cond, &r->lock);
	while (r->count && n < max) {
		out[n++] = r->done[r->head];
		r->head = (r->head + 1) % BENCH_MAX_INFLIGHT;
		r->count--;
	}
	pthread_mutex_unlock(&r->lock);
	return n;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* percentile of the sorted @v[0..n): nearest rank */
static double percentile(const double *v, size_t n, double p)
{
	size_t k;

	if (!n)
		return 0;
	k = (size_t)(p / 100.0 * (double)n + 0.999999);
	if (k < 1)
		k = 1;
	if (k > n)
		k = n;
	return v[k - 1];
}

struct client_opts {
	const char *server, *source;
	uint16_t port;
	bool echo, persistent, main_restarts;
	uint32_t prog, vers;            /* of the NULL calls */
	unsigned inflight;
	double seconds;
	uint32_t bytes;
	unsigned long count;
};

static int run_client(const struct client_opts *o)
{
	struct rpcrdma_clnt_config cfg = {
		.cf_server = o->server,
		.cf_port = o->port,
		.cf_source = o->source,
		.cf_max_credits = o->inflight < 32 ? 32 : o->inflight,
	};
	struct rpcrdma_clnt_stats st;
	struct rpcrdma_clnt *cl = NULL;
	struct run run = { .head = 0, .count = 0 };
	struct slot *slots = NULL;
	uint8_t *src = NULL, *arena = NULL;
	size_t arena_len = 0;
	double secs;
	unsigned i, outstanding = 0;
	uint64_t t0, t1;
	int ret, rc = 1;

	pthread_mutex_init(&run.lock, NULL);
	pthread_cond_init(&run.cond, NULL);
	ret = rpcrdma_clnt_create(&cfg, &cl);
	if (ret) {
		fprintf(stderr, "bench_rpc: cannot connect to %s port %u: %s\n",
			o->server, o->port, strerror(-ret));
		goto out;
	}
	slots = calloc(o->inflight, sizeof(*slots));
	if (!slots)
		goto out_nomem;
	if (o->echo) {
		/* one arena: the source data, then each slot's result buffer */
		size_t each = RPCRDMA_XDR_ALIGN(o->bytes) + 64;

		arena_len = each * (o->inflight + 1);
		arena = aligned_alloc(4096, (arena_len + 4095) & ~(size_t)4095);
		if (!arena)
			goto out_nomem;
		src = arena;
		for (i = 0; i < o->bytes; i++)
			src[i] = (uint8_t)(i * 131u + 7u);
		for (i = 0; i < o->inflight; i++)
			slots[i].rddp = arena + each * (i + 1);
		if (o->persistent) {
			ret = rpcrdma_clnt_register_buffer(cl, arena, arena_len);
			if (ret)
				fprintf(stderr, "bench_rpc: register_buffer: %s (registering per call)\n",
					strerror(-ret));
		}
	}
	for (i = 0; i < o->inflight; i++) {
		struct slot *s = &slots[i];

		s->run = &run;
		s->idx = i;
		s->ca.ca_prog = o->prog;
		s->ca.ca_vers = o->vers;
		s->ca.ca_res = s->res;
		s->ca.ca_res_cap = sizeof(s->res);
		if (o->echo) {
			s->len_be = htonl(o->bytes);
			s->ca.ca_proc = BENCH_PROC_ECHO;
			s->ca.ca_args = &s->len_be;
			s->ca.ca_args_len = 4;
			s->ca.ca_ddp = src;
			s->ca.ca_ddp_len = o->bytes;
			s->ca.ca_rddp = s->rddp;
			s->ca.ca_rddp_cap = o->bytes;
		} else {
			s->ca.ca_proc = BENCH_PROC_NULL;
		}
	}

	t0 = now_ns();
	run.cl = cl;
	run.cb_restart = !o->main_restarts;
	run.echo = o->echo;
	run.deadline = t0 + (uint64_t)(o->seconds * 1e9);
	run.limit = o->count;
	run.src = src;
	run.bytes = o->bytes;
	/* A slot is the main thread's while it is not in flight: at the
	 * start, and when its callback could not (or may not) start the
	 * next call; the main thread then starts the calls of the slots it
	 * got back together, their Sends posted with one post. */
	for (i = 0; i < o->inflight; i++)
		run.done[i] = i;
	run.count = o->inflight;
	outstanding = o->inflight;
	while (outstanding) {
		unsigned fin[BENCH_MAX_INFLIGHT], nfin, k;

		nfin = wait_done_all(&run, fin, BENCH_MAX_INFLIGHT);
		rpcrdma_clnt_batch_begin(cl);
		for (k = 0; k < nfin; k++) {
			struct slot *s = &slots[fin[k]];
			bool more;

			pthread_mutex_lock(&run.lock);
			more = run_more(&run, now_ns());
			pthread_mutex_unlock(&run.lock);
			if (!more) {
				outstanding--;
				continue;
			}
			s->t_sent = now_ns();
			ret = rpcrdma_clnt_call_async(cl, &s->ca, call_done, s, NULL);
			if (ret) {
				pthread_mutex_lock(&run.lock);
				run.sent--;
				if (!run.first_err)
					run.first_err = ret;
				pthread_mutex_unlock(&run.lock);
				outstanding--;
			}
		}
		rpcrdma_clnt_batch_end(cl);
	}
	t1 = now_ns();
	secs = (double)(t1 - t0) / 1e9;
	if (run.first_err == -ENOMEM)
		goto out_nomem;
	if (run.first_err)
		fprintf(stderr, "bench_rpc: %lu call(s) failed, first: %s\n", run.errors,
			strerror(-run.first_err));
	rpcrdma_clnt_get_stats(cl, &st);
	qsort(run.lat, run.nlat, sizeof(*run.lat), cmp_double);
	printf("{\"figure\":\"%s\",\"inflight\":%u,", o->echo ? "echo" : "null", o->inflight);
	if (o->echo)
		printf("\"bytes\":%u,\"MBps\":%.2f,", o->bytes,
		       (double)run.completed * o->bytes / 1048576.0 / secs);
	printf("\"calls\":%lu,\"errors\":%lu,\"seconds\":%.3f,\"calls_per_s\":%.1f,"
	       "\"lat_median_us\":%.1f,\"lat_p99_us\":%.1f,"
	       "\"read_chunks\":%llu,\"write_chunks\":%llu,\"inline\":%llu,"
	       "\"credits\":%llu,\"credit_waits\":%llu,\"persistent_mr\":%s,"
	       "\"callback_starts\":%lu}\n",
	       run.completed, run.errors, secs, (double)run.completed / secs,
	       percentile(run.lat, run.nlat, 50), percentile(run.lat, run.nlat, 99),
	       (unsigned long long)st.cs_read_chunks, (unsigned long long)st.cs_write_chunks,
	       (unsigned long long)st.cs_inline, (unsigned long long)st.cs_credits,
	       (unsigned long long)st.cs_credit_waits, o->persistent ? "true" : "false",
	       run.cb_starts);
	fflush(stdout);
	rc = run.first_err || !run.completed ? 1 : 0;
	goto out;

out_nomem:
	fprintf(stderr, "bench_rpc: out of memory\n");
out:
	if (cl && arena && o->persistent)
		rpcrdma_clnt_unregister_buffer(cl, arena);
	rpcrdma_clnt_destroy(cl);
	free(run.lat);
	free(arena);
	free(slots);
	pthread_cond_destroy(&run.cond);
	pthread_mutex_destroy(&run.lock);
	return rc;
}

/* ------------------------------------------------------------------ main */

static void usage(void)
{
	fprintf(stderr,
		"usage: bench_rpc server --listen ADDR [--port N] [--threads N] [--contexts N] [--small-contexts N]\n"
		"                 [--transport-threads N] [--workers-only] [--reply-post auto|transport|worker]\n"
		"       bench_rpc client [--source ADDR] SERVER [--port N] [--persistent-mr] [--main-restarts]\n"
		"                 (--null --inflight N --seconds S [--program P --version V] |\n"
		"                  --echo BYTES --count N [--inflight N])\n");
	exit(2);
}

static unsigned long num(const char *s, unsigned long max)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 0);
	if (errno || end == s || *end || v > max) {
		fprintf(stderr, "bench_rpc: bad number '%s' (at most %lu)\n", s, max);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "listen", required_argument, NULL, 'l' },
		{ "port", required_argument, NULL, 'p' },
		{ "threads", required_argument, NULL, 't' },
		{ "contexts", required_argument, NULL, 'C' },
		{ "small-contexts", required_argument, NULL, 'X' },
		{ "source", required_argument, NULL, 's' },
		{ "null", no_argument, NULL, 'n' },
		{ "echo", required_argument, NULL, 'e' },
		{ "count", required_argument, NULL, 'c' },
		{ "inflight", required_argument, NULL, 'i' },
		{ "seconds", required_argument, NULL, 'S' },
		{ "persistent-mr", no_argument, NULL, 'P' },
		{ "main-restarts", no_argument, NULL, 'M' },
		{ "transport-threads", required_argument, NULL, 'T' },
		{ "workers-only", no_argument, NULL, 'W' },
		{ "reply-post", required_argument, NULL, 'R' },
		{ "program", required_argument, NULL, 'G' },
		{ "version", required_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	struct client_opts o = { .port = BENCH_PORT, .inflight = 1, .seconds = 3, .count = 16,
				 .prog = BENCH_PROG, .vers = BENCH_VERS };
	bool other_prog = false;
	const char *listen = NULL;
	unsigned threads = 4, contexts = 0, small_contexts = 0, transport_threads = 0;
	bool server, mode = false, workers_only = false;
	int reply_post = RPCRDMA_SVC_POST_AUTO;
	int c;

	if (argc < 2)
		usage();
	if (!strcmp(argv[1], "server"))
		server = true;
	else if (!strcmp(argv[1], "client"))
		server = false;
	else
		usage();
	argv++;
	argc--;
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 'l':
			listen = optarg;
			break;
		case 'p':
			o.port = (uint16_t)num(optarg, 65535);
			break;
		case 't':
			threads = (unsigned)num(optarg, 256);
			break;
		case 'C':
			contexts = (unsigned)num(optarg, 1024);
			break;
		case 'X':
			small_contexts = (unsigned)num(optarg, 4096);
			break;
		case 's':
			o.source = optarg;
			break;
		case 'n':
			o.echo = false;
			mode = true;
			break;
		case 'e':
			o.echo = true;
			o.bytes = (uint32_t)num(optarg, BENCH_MAX_ECHO);
			mode = true;
			break;
		case 'c':
			o.count = num(optarg, 1000000000ul);
			break;
		case 'i':
			o.inflight = (unsigned)num(optarg, BENCH_MAX_INFLIGHT);
			break;
		case 'S':
			o.seconds = (double)num(optarg, 86400);
			break;
		case 'P':
			o.persistent = true;
			break;
		case 'M':
			o.main_restarts = true;
			break;
		case 'T':
			transport_threads = (unsigned)num(optarg, RPCRDMA_SVC_MAX_TRANSPORT_THREADS);
			break;
		case 'W':
			workers_only = true;
			break;
		case 'G':
			o.prog = (uint32_t)num(optarg, UINT32_MAX);
			other_prog = true;
			break;
		case 'V':
			o.vers = (uint32_t)num(optarg, UINT32_MAX);
			other_prog = true;
			break;
		case 'R':
			if (!strcmp(optarg, "auto"))
				reply_post = RPCRDMA_SVC_POST_AUTO;
			else if (!strcmp(optarg, "transport"))
				reply_post = RPCRDMA_SVC_POST_TRANSPORT;
			else if (!strcmp(optarg, "worker"))
				reply_post = RPCRDMA_SVC_POST_WORKER;
			else
				usage();
			break;
		default:
			usage();
		}
	}
	if (server) {
		if (optind != argc)
			usage();
		return run_server(listen, o.port, threads, contexts, small_contexts,
				  transport_threads, workers_only, reply_post);
	}
	if (optind != argc - 1 || !mode || !o.inflight || (o.echo && !o.count))
		usage();
	if (other_prog && o.echo) {
		fprintf(stderr, "bench_rpc: --program and --version go with --null only\n");
		return 2;
	}
	o.server = argv[optind];
	return run_client(&o);
}
