/* SPDX-License-Identifier: MIT */
/*
 * test_nfs4_harness.h - an NFSv4.1 server over an NFSv3 server exporting
 * a fresh directory to 127.0.0.1 with the given exports(5) options, and
 * COMPOUNDs built and results decoded by hand (RFC 8881 layouts),
 * independently of the server's encoders; a session set up with
 * EXCHANGE_ID and CREATE_SESSION.  Shared by test_nfs4.c and
 * test_nfs4_commit.c.
 */
#ifndef TEST_NFS4_HARNESS_H
#define TEST_NFS4_HARNESS_H

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <unistd.h>

#include "test_nfs3_harness.h"

#include <rpcrdma/nfs4.h>

#include "nfs4/nfs4_cb.h"
#include "nfs4/nfs4_internal.h"

struct env {
	char dir[64];
	struct rpcrdma_nfs3_server *srv3;
	struct rpcrdma_nfs4_server *srv4;
	struct t_call c;
	uint64_t clientid;
	uint8_t sid[16];
	uint32_t seq; /* slot 0's next sequence id */
	struct stat fst;
	FILE *log;
	uint32_t uid, gid; /* AUTH_SYS of the COMPOUNDs c_begin() builds */
	uint32_t peer4;    /* their IPv4 source (host order); 0: 127.0.0.1 */
};

/* The back channel's transport: none here (the unit harness's calls have
 * no connection); test_nfs4_cb.c drives the table with one. */
static inline int no_bc_get(const struct rpcrdma_svc_req *req, struct rpcrdma_svc_bc **out)
{
	(void)req;
	(void)out;
	return -ENOTCONN;
}

static inline int no_bc_call(struct rpcrdma_svc_bc *bc,
			     const struct rpcrdma_svc_bc_args *a, uint32_t *xid)
{
	(void)bc;
	(void)a;
	(void)xid;
	return -ENOTCONN;
}

static inline void no_bc_put(struct rpcrdma_svc_bc *bc)
{
	(void)bc;
}

static const struct nfs4_cb_ops no_bc = { no_bc_get, no_bc_call, no_bc_put };

/*
 * t4_setup_exports - a fresh directory (e->dir, mode 0777, holding "f":
 * "12345", mode 0640, owner 1234:5678 when run as root), and servers of
 * the exports @lines (@n of them) for 127.0.0.1: each "SUB CLIENTS(OPTS)"
 * exports e->dir/SUB (made, mode 0777), or e->dir itself when SUB is ".".
 * Return: 0, or -1.
 */
static inline int t4_setup_exports(void **state, const char *const *lines,
				   unsigned n)
{
	struct env *e = calloc(1, sizeof(*e));
	struct rpcrdma_nfs3_config cfg = { .nc_fcache_idle_ms = RPCRDMA_NFS3_FCACHE_IDLE_NEVER };
	struct rpcrdma_nfs3_exports *xt = NULL;
	char text[2048], err[256], path[128];
	size_t at = 0;
	int fd;

	if (!e)
		return -1;
	strcpy(e->dir, "/tmp/nfs4t.XXXXXX");
	if (!mkdtemp(e->dir))
		return -1;
	chmod(e->dir, 0777);
	snprintf(path, sizeof(path), "%s/f", e->dir);
	fd = open(path, O_CREAT | O_WRONLY, 0640);
	if (fd < 0 || write(fd, "12345", 5) != 5)
		return -1;
	if (geteuid() == 0 && fchown(fd, 1234, 5678))
		return -1;
	fchmod(fd, 0640);
	close(fd);
	stat(path, &e->fst);
	for (unsigned i = 0; i < n; i++) {
		size_t sub = strcspn(lines[i], " ");

		if (sub == 1 && lines[i][0] == '.') {
			at += (size_t)snprintf(text + at, sizeof(text) - at, "%s%s\n",
					       e->dir, lines[i] + 1);
		} else {
			snprintf(path, sizeof(path), "%s/%.*s", e->dir, (int)sub, lines[i]);
			if (mkdir(path, 0777) || chmod(path, 0777))
				return -1;
			at += (size_t)snprintf(text + at, sizeof(text) - at, "%s/%s\n",
					       e->dir, lines[i]);
		}
		if (at >= sizeof(text))
			return -1;
	}
	if (rpcrdma_nfs3_exports_parse("test", text, &xt, err, sizeof(err)))
		return -1;
	for (unsigned i = 0; i < sizeof(cfg.nc_key); i++)
		cfg.nc_key[i] = (uint8_t)(i * 7 + 1);
	cfg.nc_max_payload = 1u << 20;
	if (rpcrdma_nfs3_server_create(&cfg, xt, &e->srv3, NULL, 0))
		return -1;
	rpcrdma_nfs3_exports_free(xt);
	if (rpcrdma_nfs4_server_create(e->srv3, NULL, &e->srv4))
		return -1;
	nfs4_cb_table_destroy(e->srv4->s4_cb);
	if (nfs4_cb_table_create(&no_bc, &e->srv4->s4_sizes, &e->srv4->s4_cb))
		return -1;
	*state = e;
	return 0;
}

/* t4_setup - t4_setup_exports() of e->dir itself with options @opts. */
static inline int t4_setup(void **state, const char *opts)
{
	char line[256];
	const char *lines[1] = { line };

	snprintf(line, sizeof(line), ". 127.0.0.1(%s)", opts);
	return t4_setup_exports(state, lines, 1);
}

static inline int t4_teardown(void **state)
{
	struct env *e = *state;
	char cmd[128];

	t_free(&e->c);
	rpcrdma_nfs4_server_destroy(e->srv4);
	rpcrdma_nfs3_server_destroy(e->srv3);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", e->dir);
	assert_int_equal(system(cmd), 0);
	free(e);
	return 0;
}

/* ---- building COMPOUNDs ---- */

static inline void c_begin(struct env *e, uint32_t minor, uint32_t nops)
{
	struct t_call *c = &e->c;
	struct sockaddr_in *sin = (struct sockaddr_in *)&c->req.rq_peer;
	uint8_t *res = c->res;

	t_begin(c, 1, e->uid, e->gid);
	(void)res;
	c->req.rq_msg.rm_vers = 4;
	sin->sin_family = AF_INET;
	sin->sin_addr.s_addr = htonl(e->peer4 ? e->peer4 : INADDR_LOOPBACK);
	t_str(c, "tag!");
	t_u32(c, minor);
	t_u32(c, nops);
}

static inline void c_fixed(struct t_call *c, const uint8_t *p, size_t n)
{
	assert_true(c->alen + n <= sizeof(c->args));
	memcpy(c->args + c->alen, p, n);
	c->alen += n;
}

static inline void c_sequence(struct env *e, uint32_t seq, uint32_t slot)
{
	t_u32(&e->c, OP_SEQUENCE);
	c_fixed(&e->c, e->sid, 16);
	t_u32(&e->c, seq);
	t_u32(&e->c, slot);
	t_u32(&e->c, slot);
	t_u32(&e->c, 0);
}

static inline int c_run(struct env *e)
{
	struct t_call *c = &e->c;

	memset(c->res, 0xee, T_RES_BYTES);
	rpcrdma_xdr_init(&c->req.rq_args, c->args, c->alen);
	rpcrdma_xdr_init(&c->req.rq_res, c->res, T_RES_BYTES);
	c->ret = rpcrdma_nfs4_server_dispatch(&c->req, e->srv4);
	rpcrdma_nfs3_thread_release();
	c->rlen = c->req.rq_res.xs_pos;
	c->rpos = 0;
	return c->ret;
}

/* r_hdr - COMPOUND4res up to the array: its status; *@n the result count. */
static inline uint32_t r_hdr(struct t_call *c, uint32_t *n)
{
	uint32_t status = r_u32(c), len;
	const uint8_t *tag = r_opaque(c, &len);

	assert_int_equal(len, 4);
	assert_memory_equal(tag, "tag!", 4);
	*n = r_u32(c);
	return status;
}

/* r_op - one result's opnum (checked) and status. */
static inline uint32_t r_op(struct t_call *c, uint32_t op)
{
	assert_int_equal(r_u32(c), op);
	return r_u32(c);
}

static inline void r_skip(struct t_call *c, size_t n)
{
	assert_true(c->rpos + n <= c->rlen);
	c->rpos += n;
}

/* ---- session set-up ---- */

static inline void do_exchange_id(struct env *e, const char *owner,
				  uint64_t *clientid, uint32_t *seq,
				  uint32_t *flags)
{
	struct t_call *c = &e->c;
	uint32_t n, len;

	c_begin(e, 1, 1);
	t_u32(c, OP_EXCHANGE_ID);
	t_u32(c, 0x11111111);
	t_u32(c, 0x22222222);   /* co_verifier */
	t_str(c, owner);
	t_u32(c, 0);            /* eia_flags */
	t_u32(c, SP4_NONE);
	t_u32(c, 0);            /* no implementation id */
	assert_int_equal(c_run(e), RPCRDMA_SVC_SUCCESS);
	assert_int_equal(r_hdr(c, &n), NFS4_OK);
	assert_int_equal(n, 1);
	assert_int_equal(r_op(c, OP_EXCHANGE_ID), NFS4_OK);
	*clientid = r_u64(c);
	*seq = r_u32(c);
	*flags = r_u32(c);
	assert_int_equal(r_u32(c), SP4_NONE);
	(void)r_u64(c);
	(void)r_opaque(c, &len);
	(void)r_opaque(c, &len);
	assert_int_equal(r_u32(c), 1);
}

/* t4_exid - EXCHANGE_ID of @owner with verifier @v (two words;
 * the harness' usual one, 0x11111111 0x22222222, is t4_exid2()'s) from e->peer4:
 * its status; on NFS4_OK the client id and sequence in *@id and *@seq. */
static inline uint32_t t4_exid_verf(struct env *e, const char *owner, uint32_t v0, uint32_t v1,
				    uint64_t *id, uint32_t *seq)
{
	struct t_call *c = &e->c;
	uint32_t n, status;

	c_begin(e, 1, 1);
	t_u32(c, OP_EXCHANGE_ID);
	t_u32(c, v0);
	t_u32(c, v1);
	t_str(c, owner);
	t_u32(c, 0);            /* eia_flags */
	t_u32(c, SP4_NONE);
	t_u32(c, 0);            /* no implementation id */
	assert_int_equal(c_run(e), RPCRDMA_SVC_SUCCESS);
	(void)r_hdr(c, &n);
	status = r_op(c, OP_EXCHANGE_ID);
	if (status == NFS4_OK) {
		*id = r_u64(c);
		*seq = r_u32(c);
	}
	return status;
}

/* t4_exid2 - t4_exid_verf() with the harness' usual verifier. */
static inline uint32_t t4_exid2(struct env *e, const char *owner, uint64_t *id, uint32_t *seq)
{
	return t4_exid_verf(e, owner, 0x11111111, 0x22222222, id, seq);
}

static inline void put_chan(struct t_call *c, uint32_t maxreq, uint32_t maxops, uint32_t slots)
{
	t_u32(c, 0);
	t_u32(c, maxreq);
	t_u32(c, maxreq);
	t_u32(c, 0);
	t_u32(c, maxops);
	t_u32(c, slots);
	t_u32(c, 0);
}

static inline void c_create_session(struct env *e, uint64_t clientid, uint32_t seq)
{
	c_begin(e, 1, 1);
	t_u32(&e->c, OP_CREATE_SESSION);
	t_u64(&e->c, clientid);
	t_u32(&e->c, seq);
	t_u32(&e->c, CREATE_SESSION4_FLAG_CONN_BACK_CHAN | CREATE_SESSION4_FLAG_PERSIST);
	put_chan(&e->c, 1049620, 16, 64);
	put_chan(&e->c, 4096, 2, 1);
	t_u32(&e->c, 0x40000000);
	t_u32(&e->c, 1);
	t_u32(&e->c, NFS4_AUTH_NONE);
}

static inline void session(struct env *e)
{
	uint32_t seq, flags, n;
	const uint8_t *sid;

	do_exchange_id(e, "unit-test-client", &e->clientid, &seq, &flags);
	assert_int_equal(flags & EXCHGID4_FLAG_CONFIRMED_R, 0);
	c_create_session(e, e->clientid, seq);
	assert_int_equal(c_run(e), RPCRDMA_SVC_SUCCESS);
	assert_int_equal(r_hdr(&e->c, &n), NFS4_OK);
	assert_int_equal(r_op(&e->c, OP_CREATE_SESSION), NFS4_OK);
	sid = e->c.res + e->c.rpos;
	memcpy(e->sid, sid, 16);
	r_skip(&e->c, 16);
	assert_int_equal(r_u32(&e->c), seq);
	/* neither PERSIST nor the back channel is granted */
	assert_int_equal(r_u32(&e->c), 0);
	assert_int_equal(r_u32(&e->c), 0);          /* headerpadsize */
	assert_int_equal(r_u32(&e->c), 1049620);    /* maxrequestsize: as asked */
	assert_int_equal(r_u32(&e->c), 1049620);
	assert_int_equal(r_u32(&e->c), 0);          /* cached: min(asked 0, ...) */
	assert_int_equal(r_u32(&e->c), 16);         /* maxoperations: as asked */
	assert_int_equal(r_u32(&e->c), NFS4_MAX_SLOTS); /* 64 asked */
	assert_int_equal(r_u32(&e->c), 0);          /* no rdma_ird */
	e->seq = 1;
}

/* c_lookup_path - PUTROOTFH, then a LOOKUP per component of @path. */
static inline uint32_t c_lookup_ops(struct env *e, const char *path)
{
	char buf[PATH_MAX], *save = NULL, *tok;
	uint32_t n = 1;

	t_u32(&e->c, OP_PUTROOTFH);
	snprintf(buf, sizeof(buf), "%s", path);
	for (tok = strtok_r(buf, "/", &save); tok; tok = strtok_r(NULL, "/", &save)) {
		t_u32(&e->c, OP_LOOKUP);
		t_str(&e->c, tok);
		n++;
	}
	return n;
}

static inline uint32_t path_ops(const char *path)
{
	uint32_t n = 1;

	for (const char *p = path; *p; p++)
		if (*p == '/' && p[1] && p[1] != '/')
			n++;
	return n;
}

/* t4_fh_of - the handle of @rel ("" the export root) below the export, by
 * LOOKUPs from the root and GETFH */
static inline void t4_fh_of(struct env *e, const char *rel, uint8_t *fh, uint32_t *len)
{
	char path[PATH_MAX];
	uint32_t n, nops;
	const uint8_t *p;

	snprintf(path, sizeof(path), "%s%s%s", e->dir, *rel ? "/" : "", rel);
	nops = path_ops(path);
	c_begin(e, 1, 1 + nops + 1);
	c_sequence(e, e->seq++, 0);
	c_lookup_ops(e, path);
	t_u32(&e->c, OP_GETFH);
	assert_int_equal(c_run(e), RPCRDMA_SVC_SUCCESS);
	assert_int_equal(r_hdr(&e->c, &n), NFS4_OK);
	assert_int_equal(r_op(&e->c, OP_SEQUENCE), NFS4_OK);
	r_skip(&e->c, 36);
	for (uint32_t i = 0; i < nops; i++)
		assert_int_equal(r_op(&e->c, i ? OP_LOOKUP : OP_PUTROOTFH), NFS4_OK);
	assert_int_equal(r_op(&e->c, OP_GETFH), NFS4_OK);
	p = r_opaque(&e->c, len);
	memcpy(fh, p, *len);
}


#endif /* TEST_NFS4_HARNESS_H */
