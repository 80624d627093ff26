// SPDX-License-Identifier: MIT
/*
 * test_tcp_hostile.c - the TCP side (MOUNT here; NLM and NSM share its
 * thread, src/nfs3/rpc_tcp.c) against slow and numerous peers on
 * loopback: a drip-feeding peer, a peer that stops inside a record and 200
 * idle connections do not hold up another peer's NULL and MNT; a partial
 * record, and an idle connection, are closed at their deadlines; a peer
 * over its cap is closed at once, the oldest idle connection makes room
 * when all are taken, and a peer no export lists is closed before any of
 * its bytes is read.
 *
 * Calls and replies are written and checked byte by byte here (RFC 5531
 * section 9 call header, section 11 record marking), MNT with libtirpc's
 * client and the test's own decoder (RFC 1813 section 5.2.1).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <rpc/rpc.h>
#undef RPC_MSG_VERSION /* also defined by <rpcrdma/wire.h> */

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <rpcrdma/nfs3.h>

#include "common/rpc_tcp.h"
#include "nfs3/nfs3_internal.h"
#include "test_nfs3_harness.h"

#define T_BOUND_MS 1000  /* the most a call may wait beside hostile peers */
#define T_EOF_MS 3000    /* the most a close at once may take to be seen */

struct h_env {
	char dir[64];
	struct rpcrdma_nfs3_server *srv;
	struct rpcrdma_mnt *mnt;
	uint16_t port;
};

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static const char *h_table = "%s 127.0.0.1(rw,insecure) 127.0.1.0/24(rw,insecure)\n";

/* h_table's exports: by default 127.0.0.1 and 127.0.1.0/24 are listed,
 * 127.0.0.2 is not */
static int h_setup(void **state)
{
	struct h_env *e = calloc(1, sizeof(*e));
	struct rpcrdma_nfs3_config cfg = { 0 };
	struct rpcrdma_nfs3_exports *xt;
	char text[256], msg[256];
	int err = -EADDRINUSE;

	if (!e || t_make_dir(e->dir, sizeof(e->dir), "/tmp", "tcphost"))
		return -1;
	snprintf(text, sizeof(text), h_table, e->dir);
	if (rpcrdma_nfs3_exports_parse("test", text, &xt, msg, sizeof(msg)) ||
	    rpcrdma_nfs3_server_create(&cfg, xt, &e->srv, msg, sizeof(msg)))
		return -1;
	rpcrdma_nfs3_exports_free(xt);
	rpc_tcp_set_limits(NULL);
	for (int i = 0; i < 20 && err == -EADDRINUSE; i++) {
		e->port = (uint16_t)(30000 + (getpid() * 13 + i * 151) % 20000);
		err = rpcrdma_mnt_start(e->srv, "127.0.0.1", e->port, false, &e->mnt);
	}
	if (err)
		return -1;
	*state = e;
	return 0;
}

static int h_teardown(void **state)
{
	struct h_env *e = *state;
	char cmd[128];

	rpcrdma_mnt_stop(e->mnt);
	rpc_tcp_set_limits(NULL);
	rpcrdma_nfs3_server_destroy(e->srv);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", e->dir);
	assert_int_equal(system(cmd), 0);
	free(e);
	return 0;
}

/* a connection to the server from source address @src */
static int h_connect(struct h_env *e, const char *src)
{
	struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons(e->port) };
	struct sockaddr_in me = { .sin_family = AF_INET };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;

	assert_true(fd >= 0);
	assert_int_equal(inet_pton(AF_INET, src, &me.sin_addr), 1);
	assert_int_equal(bind(fd, (struct sockaddr *)&me, sizeof(me)), 0);
	to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(connect(fd, (struct sockaddr *)&to, sizeof(to)), 0);
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

/*
 * A MOUNT v3 NULL call (RFC 5531 section 9: xid, CALL 0, rpcvers 2, prog
 * 100005, vers 3, proc 0, AUTH_NONE credential and verifier) in one
 * record of @fraglen bytes (40: exactly the call).  Return: bytes in @b.
 */
static size_t null_call(uint8_t *b, uint32_t xid, uint32_t fraglen)
{
	t_be32(b, 0x80000000u | fraglen);
	t_be32(b + 4, xid);
	t_be32(b + 8, 0);
	t_be32(b + 12, 2);
	t_be32(b + 16, 100005);
	t_be32(b + 20, 3);
	memset(b + 24, 0, 20); /* proc 0, flavor 0 length 0, flavor 0 length 0 */
	return 44;
}

/*
 * Read until the peer closes or @ms pass.  Return: the ms it took to see
 * the close, -1 if it did not come, -2 if bytes came instead.
 */
static int64_t wait_eof(int fd, int ms)
{
	uint64_t t0 = now_ms();

	for (;;) {
		int left = ms - (int)(now_ms() - t0);
		struct pollfd p = { .fd = fd, .events = POLLIN };
		char c;
		ssize_t n;

		if (left <= 0 || poll(&p, 1, left) <= 0)
			return -1;
		n = recv(fd, &c, 1, MSG_DONTWAIT);
		if (n == 0 || (n < 0 && errno == ECONNRESET))
			return (int64_t)(now_ms() - t0);
		if (n > 0)
			return -2;
	}
}

/*
 * A NULL call on @fd, its reply awaited @ms at most.  The reply must be
 * the 28 bytes RFC 5531 gives: a last fragment of 24, xid, REPLY 1,
 * MSG_ACCEPTED 0, AUTH_NONE verifier (0, 0), SUCCESS 0.
 * Return: the ms the reply took, or -1.
 */
static int64_t null_rtt(int fd, uint32_t xid, int ms)
{
	uint8_t call[44], want[28], got[28];
	uint64_t t0 = now_ms();
	size_t have = 0;

	null_call(call, xid, 40);
	t_be32(want, 0x80000000u | 24);
	t_be32(want + 4, xid);
	t_be32(want + 8, 1);
	memset(want + 12, 0, 16);
	if (send(fd, call, sizeof(call), MSG_NOSIGNAL) != (ssize_t)sizeof(call))
		return -1;
	while (have < sizeof(got)) {
		int left = ms - (int)(now_ms() - t0);
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t n;

		if (left <= 0 || poll(&p, 1, left) <= 0)
			return -1;
		n = recv(fd, got + have, sizeof(got) - have, MSG_DONTWAIT);
		if (n <= 0)
			return -1;
		have += (size_t)n;
	}
	if (memcmp(got, want, sizeof(want)))
		return -1;
	return (int64_t)(now_ms() - t0);
}

/* mountres3's status (RFC 1813 5.2.1); the rest is skipped */
static bool_t t_xdr_mntstat(XDR *x, u_int *st)
{
	return xdr_u_int(x, st);
}

static bool_t t_xdr_path(XDR *x, char **p)
{
	return xdr_string(x, p, 1024);
}

/* MNT of the export from a new connection; Return: the ms it took, or -1 */
static int64_t mnt_rtt(struct h_env *e)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(e->port) };
	struct timeval tv = { 5, 0 };
	uint64_t t0 = now_ms();
	int sock = RPC_ANYSOCK;
	char *path = e->dir;
	u_int st = 99;
	CLIENT *cl;
	enum clnt_stat rs;

	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	cl = clnttcp_create(&sin, 100005, 3, &sock, 0, 0);
	if (!cl)
		return -1;
	rs = clnt_call(cl, 1, (xdrproc_t)t_xdr_path, (caddr_t)&path,
		       (xdrproc_t)t_xdr_mntstat, (caddr_t)&st, tv);
	clnt_destroy(cl);
	close(sock);
	return rs == RPC_SUCCESS && st == 0 ? (int64_t)(now_ms() - t0) : -1;
}

/* a peer sending one byte every 100 ms of @rec */
struct drip {
	int fd;
	const uint8_t *rec;
	size_t len;
	atomic_uint sent;
	atomic_bool stop;
	pthread_t thread;
};

static void *drip_main(void *arg)
{
	struct drip *d = arg;

	for (size_t i = 0; i < d->len && !atomic_load(&d->stop); i++) {
		if (send(d->fd, d->rec + i, 1, MSG_NOSIGNAL) != 1)
			break;
		atomic_fetch_add(&d->sent, 1);
		usleep(100000);
	}
	return NULL;
}

/* wait (at most 5 s) until the drip has sent @n bytes in all */
static void drip_wait(struct drip *d, unsigned n)
{
	uint64_t t0 = now_ms();

	while (atomic_load(&d->sent) < n && now_ms() - t0 < 5000)
		usleep(10000);
	assert_true(atomic_load(&d->sent) >= n);
}

/*
 * With a drip-feeding peer (a NULL call in a 2000-byte record, one byte
 * per 100 ms), a peer that stopped after one byte, and 200 idle
 * connections from 20 addresses, NULL and MNT from another connection
 * are answered within T_BOUND_MS, three times over.  (libtirpc's blocking
 * record reads held them 35 s behind the silent peer and for the whole
 * record behind the drip.)
 */
static void test_drip_and_idle(void **state)
{
	struct h_env *e = *state;
	static uint8_t rec[2004];
	struct drip d = { .rec = rec, .len = sizeof(rec) };
	int idle[200], silent;

	for (int i = 0; i < 200; i++) {
		char src[32];

		snprintf(src, sizeof(src), "127.0.1.%d", 1 + i / 10);
		idle[i] = h_connect(e, src);
	}
	null_call(rec, 0x1234, 2000); /* the header, then zeros */
	d.fd = h_connect(e, "127.0.0.1");
	assert_int_equal(pthread_create(&d.thread, NULL, drip_main, &d), 0);
	silent = h_connect(e, "127.0.0.1");
	assert_int_equal(send(silent, rec, 1, MSG_NOSIGNAL), 1);
	drip_wait(&d, 5);

	for (unsigned round = 0; round < 3; round++) {
		int fd = h_connect(e, "127.0.0.1");
		int64_t t = null_rtt(fd, 100 + round, 5000);

		print_message("round %u: NULL %lld ms", round, (long long)t);
		assert_true(t >= 0 && t < T_BOUND_MS);
		close(fd);
		t = mnt_rtt(e);
		print_message(", MNT %lld ms\n", (long long)t);
		assert_true(t >= 0 && t < T_BOUND_MS);
		drip_wait(&d, 5 + 3 * (round + 1));
	}
	atomic_store(&d.stop, true);
	pthread_join(d.thread, NULL);
	close(d.fd);
	close(silent);
	for (int i = 0; i < 200; i++)
		close(idle[i]);
}

/*
 * A partial record is closed once its first byte is tl_record_ms old, an
 * idle connection once it has had nothing for tl_idle_ms; a connection
 * whose calls keep coming is not closed.
 */
static void test_deadlines(void **state)
{
	struct h_env *e = *state;
	struct rpc_tcp_limits lim = { .tl_record_ms = 600, .tl_idle_ms = 1500 };
	struct rpc_tcp_stats s0, s1;
	uint8_t call[44];
	int64_t t_part, t_idle;
	uint64_t t0;
	int part, idle, busy;

	rpc_tcp_get_stats(&s0);
	rpc_tcp_set_limits(&lim);
	busy = h_connect(e, "127.0.0.1");
	idle = h_connect(e, "127.0.0.1");
	part = h_connect(e, "127.0.0.1");
	t0 = now_ms();
	null_call(call, 7, 40);
	assert_int_equal(send(part, call, 10, MSG_NOSIGNAL), 10);
	t_part = wait_eof(part, 5000);
	print_message("partial record closed after %lld ms\n", (long long)t_part);
	assert_true(t_part >= 500 && t_part < 5000);
	/* calls every 300 ms keep "busy" open past the idle deadline, while
	 * "idle" is watched for its close */
	t_idle = -1;
	for (uint32_t i = 0; now_ms() - t0 < 2500 || t_idle < 0; i++) {
		assert_true(null_rtt(busy, 200 + i, 2000) >= 0);
		if (t_idle < 0 && wait_eof(idle, 300) >= 0)
			t_idle = (int64_t)(now_ms() - t0);
		else if (t_idle >= 0)
			usleep(300000);
		assert_true(now_ms() - t0 < 5000);
	}
	print_message("idle connection closed after %lld ms\n", (long long)t_idle);
	assert_true(t_idle >= 1400 && t_idle < 5000);
	assert_true(null_rtt(busy, 300, 2000) >= 0);
	rpc_tcp_get_stats(&s1);
	assert_int_equal(s1.ts_record_timeouts - s0.ts_record_timeouts, 1);
	assert_int_equal(s1.ts_idle_closed - s0.ts_idle_closed, 1);
	close(part);
	close(idle);
	close(busy);
}

/*
 * A peer that pipelines calls as fast as it can and never reads the
 * replies (2 s of them, megabytes, queued on its connection) does not
 * hold up another peer's NULL: one record per connection per turn.
 */
static void test_flood_unread(void **state)
{
	struct h_env *e = *state;
	static uint8_t calls[44 * 1024];
	int hog, other, small = 4096;
	size_t sent = 0;
	uint64_t t0;
	int64_t t;

	for (unsigned i = 0; i < 1024; i++)
		null_call(calls + 44 * i, 1000 + i, 40);
	hog = h_connect(e, "127.0.0.1");
	setsockopt(hog, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
	/* calls until neither side's buffers take more (at most 2 s) */
	t0 = now_ms();
	while (now_ms() - t0 < 2000) {
		ssize_t n = send(hog, calls + sent % sizeof(calls),
				 sizeof(calls) - sent % sizeof(calls), MSG_DONTWAIT | MSG_NOSIGNAL);

		if (n > 0) {
			sent += (size_t)n;
			continue;
		}
		if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
			break;
		struct pollfd p = { .fd = hog, .events = POLLOUT };

		if (poll(&p, 1, 200) == 0)
			break; /* the server no longer reads it */
	}
	print_message("sent %zu bytes of calls, replies unread\n", sent);
	other = h_connect(e, "127.0.0.1");
	t = null_rtt(other, 9, 5000);
	print_message("NULL beside it: %lld ms\n", (long long)t);
	assert_true(t >= 0 && t < T_BOUND_MS);
	t = null_rtt(other, 10, 5000);
	assert_true(t >= 0 && t < T_BOUND_MS);
	close(hog);
	close(other);
}

/* The fifth connection of an address capped at four is closed at once;
 * the four go on. */
static void test_per_host_cap(void **state)
{
	struct h_env *e = *state;
	struct rpc_tcp_limits lim = { .tl_per_host = 4 };
	struct rpc_tcp_stats s0, s1;
	int fd[5];
	int64_t t;

	rpc_tcp_get_stats(&s0);
	rpc_tcp_set_limits(&lim);
	for (int i = 0; i < 4; i++) {
		fd[i] = h_connect(e, "127.0.0.1");
		assert_true(null_rtt(fd[i], 10 + (uint32_t)i, 2000) >= 0);
	}
	fd[4] = h_connect(e, "127.0.0.1");
	t = wait_eof(fd[4], T_EOF_MS);
	print_message("fifth connection closed after %lld ms\n", (long long)t);
	assert_true(t >= 0);
	for (int i = 0; i < 4; i++)
		assert_true(null_rtt(fd[i], 20 + (uint32_t)i, 2000) >= 0);
	/* another address is not held to 127.0.0.1's count */
	close(fd[4]);
	fd[4] = h_connect(e, "127.0.1.1");
	assert_true(null_rtt(fd[4], 30, 2000) >= 0);
	rpc_tcp_get_stats(&s1);
	assert_int_equal(s1.ts_refused_host - s0.ts_refused_host, 1);
	for (int i = 0; i < 5; i++)
		close(fd[i]);
}

/* The per-host cap counts hosts: an IPv6 peer by its /64 (one machine
 * may use any number of addresses of it), an IPv4 one by its address, the
 * same over the IPv6 listener (IPv4-mapped).  Loopback has one IPv6
 * address, so the key is checked, against bytes written out by hand. */
static void test_host_key(void **state)
{
	static const uint8_t k64[16] = { 0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 5 };
	static const uint8_t k4[16] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 192, 0, 2, 1 };
	static const char *const same64[] = { "2001:db8:0:5::1", "2001:db8:0:5:a:b:c:d",
					      "2001:db8:0:5:ffff:ffff:ffff:ffff" };
	struct sockaddr_storage ss;
	uint8_t key[16];

	(void)state;
	for (unsigned i = 0; i < 3; i++) {
		memset(&ss, 0, sizeof(ss));
		ss.ss_family = AF_INET6;
		assert_int_equal(inet_pton(AF_INET6, same64[i],
					   &((struct sockaddr_in6 *)&ss)->sin6_addr), 1);
		rpc_tcp_host_key(&ss, key);
		assert_memory_equal(key, k64, 16);
	}
	assert_int_equal(inet_pton(AF_INET6, "2001:db8:0:6::1",
				   &((struct sockaddr_in6 *)&ss)->sin6_addr), 1);
	rpc_tcp_host_key(&ss, key);
	assert_memory_not_equal(key, k64, 16);
	/* IPv4, and the same address mapped: one key, the whole address */
	assert_int_equal(inet_pton(AF_INET6, "::ffff:192.0.2.1",
				   &((struct sockaddr_in6 *)&ss)->sin6_addr), 1);
	rpc_tcp_host_key(&ss, key);
	assert_memory_equal(key, k4, 16);
	memset(&ss, 0, sizeof(ss));
	ss.ss_family = AF_INET;
	assert_int_equal(inet_pton(AF_INET, "192.0.2.1",
				   &((struct sockaddr_in *)&ss)->sin_addr), 1);
	rpc_tcp_host_key(&ss, key);
	assert_memory_equal(key, k4, 16);
	assert_int_equal(inet_pton(AF_INET, "192.0.2.2",
				   &((struct sockaddr_in *)&ss)->sin_addr), 1);
	rpc_tcp_host_key(&ss, key);
	assert_memory_not_equal(key, k4, 16);
	/* link-local: fe80::/64 is every machine on the link (RoCE's default
	 * GIDs), so the whole address is the key: two machines differ */
	{
		static const uint8_t kll[16] = { 0xfe, 0x80, 0, 0, 0, 0, 0, 0,
						 0x02, 0x11, 0x22, 0xff, 0xfe, 0x33, 0x44, 0x55 };
		uint8_t other[16];

		memset(&ss, 0, sizeof(ss));
		ss.ss_family = AF_INET6;
		assert_int_equal(inet_pton(AF_INET6, "fe80::211:22ff:fe33:4455",
					   &((struct sockaddr_in6 *)&ss)->sin6_addr), 1);
		rpc_tcp_host_key(&ss, key);
		assert_memory_equal(key, kll, 16);
		assert_int_equal(inet_pton(AF_INET6, "fe80::211:22ff:fe33:4456",
					   &((struct sockaddr_in6 *)&ss)->sin6_addr), 1);
		rpc_tcp_host_key(&ss, other);
		assert_memory_not_equal(key, other, 16);
	}
}

/* With all four connections taken, a newcomer gets in and the one idle
 * longest is closed. */
static void test_oldest_idle_reclaimed(void **state)
{
	struct h_env *e = *state;
	struct rpc_tcp_limits lim = { .tl_total = 4 };
	struct rpc_tcp_stats s0, s1;
	int fd[5];

	rpc_tcp_get_stats(&s0);
	rpc_tcp_set_limits(&lim);
	/* fd[0] is used last, so fd[1] has been idle longest */
	for (int i = 0; i < 4; i++) {
		fd[i] = h_connect(e, "127.0.0.1");
		assert_true(null_rtt(fd[i], 40 + (uint32_t)i, 2000) >= 0);
		usleep(20000); /* distinct idle times, in ms */
	}
	assert_true(null_rtt(fd[0], 50, 2000) >= 0);
	fd[4] = h_connect(e, "127.0.1.2");
	assert_true(null_rtt(fd[4], 51, 2000) >= 0);
	assert_true(wait_eof(fd[1], T_EOF_MS) >= 0);
	assert_true(null_rtt(fd[0], 52, 2000) >= 0);
	assert_true(null_rtt(fd[2], 53, 2000) >= 0);
	assert_true(null_rtt(fd[3], 54, 2000) >= 0);
	rpc_tcp_get_stats(&s1);
	assert_int_equal(s1.ts_reclaimed - s0.ts_reclaimed, 1);
	for (int i = 0; i < 5; i++)
		close(fd[i]);
}

/* A peer no export lists is closed at accept: a silent one sees the
 * close, one that sent a whole call gets no reply, and no call is read. */
static void test_unlisted_refused(void **state)
{
	struct h_env *e = *state;
	struct rpc_tcp_stats s0, s1;
	uint8_t call[44];
	int quiet, talker;
	int64_t t;

	rpc_tcp_get_stats(&s0);
	quiet = h_connect(e, "127.0.0.2");
	t = wait_eof(quiet, T_EOF_MS);
	print_message("unlisted silent peer closed after %lld ms\n", (long long)t);
	assert_true(t >= 0);
	talker = h_connect(e, "127.0.0.2");
	null_call(call, 77, 40);
	assert_int_equal(send(talker, call, sizeof(call), MSG_NOSIGNAL), (ssize_t)sizeof(call));
	t = wait_eof(talker, T_EOF_MS);
	assert_true(t >= 0); /* -2: a reply came */
	rpc_tcp_get_stats(&s1);
	assert_int_equal(s1.ts_refused_addr - s0.ts_refused_addr, 2);
	assert_int_equal(s1.ts_calls, s0.ts_calls);
	close(quiet);
	close(talker);
}

/*
 * A fake resolver (the names seam of fs_hostname.c): 127.0.0.1 is
 * c1.example and 127.0.0.3 c3.example both ways; reverse lookups wait
 * while nm_gate is closed.
 */
static pthread_mutex_t nm_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t nm_cond = PTHREAD_COND_INITIALIZER;
static bool nm_gate_closed;

static void nm_gate(bool closed)
{
	pthread_mutex_lock(&nm_lock);
	nm_gate_closed = closed;
	pthread_cond_broadcast(&nm_cond);
	pthread_mutex_unlock(&nm_lock);
}

static int nm_getnameinfo(const struct sockaddr *sa, socklen_t salen, char *host,
			  socklen_t hostlen, char *serv, socklen_t servlen, int flags)
{
	const struct sockaddr_in *sin = (const struct sockaddr_in *)sa;
	struct timespec dl;

	(void)salen;
	(void)serv;
	(void)servlen;
	(void)flags;
	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_sec += 10;
	pthread_mutex_lock(&nm_lock);
	while (nm_gate_closed)
		if (pthread_cond_timedwait(&nm_cond, &nm_lock, &dl) == ETIMEDOUT)
			break;
	pthread_mutex_unlock(&nm_lock);
	if (sa->sa_family != AF_INET)
		return EAI_NONAME;
	if (ntohl(sin->sin_addr.s_addr) == 0x7f000001)
		snprintf(host, hostlen, "c1.example");
	else if (ntohl(sin->sin_addr.s_addr) == 0x7f000003)
		snprintf(host, hostlen, "c3.example");
	else
		return EAI_NONAME;
	return 0;
}

static int nm_getaddrinfo(const char *node, const char *service,
			  const struct addrinfo *hints, struct addrinfo **res)
{
	struct addrinfo *ai;
	struct sockaddr_in *sin;

	(void)service;
	(void)hints;
	if (strcmp(node, "c1.example") && strcmp(node, "c3.example"))
		return EAI_NONAME;
	ai = calloc(1, sizeof(*ai) + sizeof(*sin));
	assert_non_null(ai);
	sin = (struct sockaddr_in *)(ai + 1);
	sin->sin_family = AF_INET;
	sin->sin_addr.s_addr = htonl(strcmp(node, "c1.example") ? 0x7f000003 : 0x7f000001);
	ai->ai_family = AF_INET;
	ai->ai_socktype = SOCK_STREAM;
	ai->ai_addr = (struct sockaddr *)sin;
	ai->ai_addrlen = sizeof(*sin);
	*res = ai;
	return 0;
}

static void nm_freeaddrinfo(struct addrinfo *ai)
{
	free(ai);
}

static uint64_t nm_now(void)
{
	return now_ms() * 1000000u;
}

static const struct fs_resolver nm_resolver = {
	.nr_getnameinfo = nm_getnameinfo,
	.nr_getaddrinfo = nm_getaddrinfo,
	.nr_freeaddrinfo = nm_freeaddrinfo,
	.nr_now_ns = nm_now,
};

static int nm_setup(void **state)
{
	h_table = "%s *.example(rw,insecure)\n";
	nm_gate(true);
	fs_names_set_resolver(&nm_resolver);
	return h_setup(state);
}

static int nm_teardown(void **state)
{
	nm_gate(false);
	h_table = "%s 127.0.0.1(rw,insecure) 127.0.1.0/24(rw,insecure)\n";
	h_teardown(state);
	fs_names_set_resolver(NULL);
	return 0;
}

/* MNT of @path in one record (RFC 1813 5.2.1: dirpath), AUTH_NONE */
static size_t mnt_call(uint8_t *b, uint32_t xid, const char *path)
{
	uint32_t n = (uint32_t)strlen(path), pad = (4 - n % 4) % 4;

	null_call(b, xid, 40 + 4 + n + pad);
	t_be32(b + 24, 1); /* MNT */
	t_be32(b + 44, n);
	memcpy(b + 48, path, n);
	memset(b + 48 + n, 0, pad);
	return 48 + n + pad;
}

/* the mountstat3 of MNT's reply on @fd (after the 24-byte accepted
 * header), read within @ms; -1 when none came */
static int mnt_status(int fd, uint32_t xid, int ms)
{
	uint8_t got[32];
	uint64_t t0 = now_ms();
	size_t have = 0;

	while (have < sizeof(got)) {
		int left = ms - (int)(now_ms() - t0);
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t n;

		if (left <= 0 || poll(&p, 1, left) <= 0)
			return -1;
		n = recv(fd, got + have, sizeof(got) - have, MSG_DONTWAIT);
		if (n <= 0)
			return -1;
		have += (size_t)n;
	}
	if (got[4] != (uint8_t)(xid >> 24) || got[7] != (uint8_t)xid || got[11] != 1 ||
	    got[15] != 0 || got[27] != 0)
		return -1;
	return (got[28] << 24) | (got[29] << 16) | (got[30] << 8) | got[31];
}

/*
 * A wildcard export (*.example): MNT from a peer whose host name is still
 * being looked up waits for it without holding the thread (a NULL from
 * another connection meanwhile is answered at once), is answered MNT3_OK
 * once the name comes, and MNT3ERR_ACCES (13) when it has not come after
 * a second.
 */
static void test_name_lookup_deferred(void **state)
{
	struct h_env *e = *state;
	uint8_t call[1100];
	uint64_t t0;
	int64_t t;
	int m1, m3, other, st;
	size_t n;

	m1 = h_connect(e, "127.0.0.1");
	n = mnt_call(call, 501, e->dir);
	assert_int_equal(send(m1, call, n, MSG_NOSIGNAL), (ssize_t)n);
	assert_int_equal(mnt_status(m1, 501, 200), -1); /* not answered yet */
	other = h_connect(e, "127.0.1.9");
	t = null_rtt(other, 502, 5000);
	print_message("NULL beside a MNT waiting for its name: %lld ms\n", (long long)t);
	assert_true(t >= 0 && t < 300);
	nm_gate(false);
	assert_int_equal(mnt_status(m1, 501, 3000), 0);

	nm_gate(true);
	m3 = h_connect(e, "127.0.0.3");
	n = mnt_call(call, 503, e->dir);
	t0 = now_ms();
	assert_int_equal(send(m3, call, n, MSG_NOSIGNAL), (ssize_t)n);
	st = mnt_status(m3, 503, 5000);
	t = (int64_t)(now_ms() - t0);
	print_message("MNT with no name after %lld ms: %d\n", (long long)t, st);
	assert_int_equal(st, 13);
	assert_true(t >= 900 && t < 3000);
	assert_true(null_rtt(other, 504, 5000) >= 0);
	close(m1);
	close(m3);
	close(other);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_drip_and_idle, h_setup, h_teardown),
		cmocka_unit_test_setup_teardown(test_deadlines, h_setup, h_teardown),
		cmocka_unit_test_setup_teardown(test_flood_unread, h_setup, h_teardown),
		cmocka_unit_test_setup_teardown(test_per_host_cap, h_setup, h_teardown),
		cmocka_unit_test(test_host_key),
		cmocka_unit_test_setup_teardown(test_oldest_idle_reclaimed, h_setup, h_teardown),
		cmocka_unit_test_setup_teardown(test_unlisted_refused, h_setup, h_teardown),
		cmocka_unit_test_setup_teardown(test_name_lookup_deferred, nm_setup, nm_teardown),
	};

	if (geteuid() != 0) {
		fprintf(stderr, "test_tcp_hostile: needs root (file handles); skipped\n");
		return 77;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
