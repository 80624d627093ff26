/* SPDX-License-Identifier: MIT */
/*
 * test_nfs3_harness.h - build NFSv3 calls by hand, run them through
 * rpcrdma_nfs3_dispatch() and decode the results independently of the
 * server's encoders (layouts from RFC 1813).
 */
#ifndef TEST_NFS3_HARNESS_H
#define TEST_NFS3_HARNESS_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <cmocka.h>

#include <rpcrdma/nfs3.h>

#define T_RES_BYTES (2u << 20)

struct t_call {
	uint8_t args[8192];
	size_t alen;
	struct rpcrdma_svc_req req;
	uint8_t *res;
	size_t rlen; /* result bytes written */
	size_t rpos; /* decode cursor */
	int ret;
};

static inline void t_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/* t_make_dir - make @dir ("BASE/TAG.XXXXXX", mode 0777).  0, or -1. */
static inline int t_make_dir(char *dir, size_t dirlen, const char *base,
			     const char *tag)
{
	snprintf(dir, dirlen, "%s/%s.XXXXXX", base, tag);
	if (!mkdtemp(dir))
		return -1;
	return chmod(dir, 0777);
}

/*
 * t_export_cfg - a configuration exporting @dir with a key made from
 * @seed and a max payload of 1 MiB (the rest zero: defaults).
 */
static inline void t_export_cfg(struct rpcrdma_nfs3_config *cfg,
				const char *dir, unsigned seed)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->nc_export = dir;
	for (unsigned i = 0; i < sizeof(cfg->nc_key); i++)
		cfg->nc_key[i] = (uint8_t)(i * seed + 3);
	cfg->nc_max_payload = 1u << 20;
}

/*
 * t_export_dir - make @dir (t_make_dir()) and export it (t_export_cfg()):
 * into @exp (root squashed) and, when @nosquash is not NULL, @nosquash
 * (no_root_squash).  0, or -1.
 */
static inline int t_export_dir(char *dir, size_t dirlen, const char *base,
			       const char *tag, unsigned seed,
			       struct rpcrdma_nfs3_export **exp,
			       struct rpcrdma_nfs3_export **nosquash)
{
	struct rpcrdma_nfs3_config cfg;

	if (t_make_dir(dir, dirlen, base, tag))
		return -1;
	t_export_cfg(&cfg, dir, seed);
	if (rpcrdma_nfs3_export_open(&cfg, exp))
		return -1;
	cfg.nc_no_root_squash = true;
	if (nosquash && rpcrdma_nfs3_export_open(&cfg, nosquash))
		return -1;
	return 0;
}

/* ---- encoding arguments ---- */

static inline void t_u32(struct t_call *c, uint32_t v)
{
	assert_true(c->alen + 4 <= sizeof(c->args));
	t_be32(c->args + c->alen, v);
	c->alen += 4;
}

static inline void t_u64(struct t_call *c, uint64_t v)
{
	t_u32(c, (uint32_t)(v >> 32));
	t_u32(c, (uint32_t)v);
}

static inline void t_opaque(struct t_call *c, const void *p, uint32_t len)
{
	t_u32(c, len);
	assert_true(c->alen + len + 3 <= sizeof(c->args));
	memcpy(c->args + c->alen, p, len);
	c->alen += len;
	while (c->alen % 4)
		c->args[c->alen++] = 0;
}

static inline void t_str(struct t_call *c, const char *s)
{
	t_opaque(c, s, (uint32_t)strlen(s));
}

/* a sattr3 with nothing set */
static inline void t_sattr_none(struct t_call *c)
{
	for (int i = 0; i < 6; i++)
		t_u32(c, 0);
}

/* a sattr3 setting only the mode */
static inline void t_sattr_mode(struct t_call *c, uint32_t mode)
{
	t_u32(c, 1);
	t_u32(c, mode);
	for (int i = 0; i < 5; i++)
		t_u32(c, 0);
}

static inline void t_begin(struct t_call *c, uint32_t proc, uint32_t uid,
			   uint32_t gid)
{
	uint8_t *res = c->res;

	memset(c, 0, sizeof(*c));
	c->res = res ? res : malloc(T_RES_BYTES);
	assert_non_null(c->res);
	c->req.rq_msg.rm_xid = 0x1234;
	c->req.rq_msg.rm_rpcvers = 2;
	c->req.rq_msg.rm_prog = RPCRDMA_NFS3_PROGRAM;
	c->req.rq_msg.rm_vers = 3;
	c->req.rq_msg.rm_proc = proc;
	c->req.rq_msg.rm_cred_flavor = 1; /* AUTH_SYS */
	c->req.rq_msg.rm_has_authsys = true;
	c->req.rq_msg.rm_authsys.as_uid = uid;
	c->req.rq_msg.rm_authsys.as_gid = gid;
}

static inline int t_run_len(struct t_call *c, void *exp, size_t reslen)
{
	memset(c->res, 0xee, reslen);
	rpcrdma_xdr_init(&c->req.rq_args, c->args, c->alen);
	rpcrdma_xdr_init(&c->req.rq_res, c->res, reslen);
	c->ret = rpcrdma_nfs3_dispatch(&c->req, exp);
	/* the test's own file operations run as root */
	rpcrdma_nfs3_thread_release();
	c->rlen = c->req.rq_res.xs_pos;
	/* The statistics hook: every successful result but NULL's reports
	 * the nfsstat3 it starts with. */
	if (c->ret == RPCRDMA_SVC_SUCCESS && c->req.rq_msg.rm_proc != 0) {
		assert_true(c->req.rq_has_status);
		assert_int_equal(c->req.rq_status, ((uint32_t)c->res[0] << 24) |
				 ((uint32_t)c->res[1] << 16) | ((uint32_t)c->res[2] << 8) | c->res[3]);
	} else {
		assert_false(c->req.rq_has_status);
	}
	c->rpos = 0;
	return c->ret;
}

static inline int t_run(struct t_call *c, void *exp)
{
	return t_run_len(c, exp, T_RES_BYTES);
}

static inline void t_free(struct t_call *c)
{
	free(c->res);
	c->res = NULL;
}

/* ---- decoding results ---- */

static inline uint32_t r_u32(struct t_call *c)
{
	const uint8_t *p = c->res + c->rpos;

	assert_true(c->rpos + 4 <= c->rlen);
	c->rpos += 4;
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

static inline uint64_t r_u64(struct t_call *c)
{
	uint64_t hi = r_u32(c);

	return hi << 32 | r_u32(c);
}

static inline const uint8_t *r_opaque(struct t_call *c, uint32_t *len)
{
	const uint8_t *p;

	*len = r_u32(c);
	assert_true(c->rpos + *len <= c->rlen);
	p = c->res + c->rpos;
	c->rpos += (*len + 3) & ~3u;
	return p;
}

struct t_fattr {
	uint32_t type, mode, nlink, uid, gid;
	uint64_t size, used;
	uint32_t rdev1, rdev2;
	uint64_t fsid, fileid;
	uint32_t atime[2], mtime[2], ctime[2];
};

static inline void r_fattr(struct t_call *c, struct t_fattr *a)
{
	a->type = r_u32(c);
	a->mode = r_u32(c);
	a->nlink = r_u32(c);
	a->uid = r_u32(c);
	a->gid = r_u32(c);
	a->size = r_u64(c);
	a->used = r_u64(c);
	a->rdev1 = r_u32(c);
	a->rdev2 = r_u32(c);
	a->fsid = r_u64(c);
	a->fileid = r_u64(c);
	a->atime[0] = r_u32(c);
	a->atime[1] = r_u32(c);
	a->mtime[0] = r_u32(c);
	a->mtime[1] = r_u32(c);
	a->ctime[0] = r_u32(c);
	a->ctime[1] = r_u32(c);
}

/* post_op_attr: returns whether attributes followed */
static inline bool r_post_op(struct t_call *c, struct t_fattr *a)
{
	struct t_fattr dummy;
	uint32_t follows = r_u32(c);

	assert_true(follows <= 1);
	if (follows)
		r_fattr(c, a ? a : &dummy);
	return follows;
}

static inline void r_wcc(struct t_call *c, struct t_fattr *post)
{
	if (r_u32(c)) { /* pre_op_attr: size, mtime, ctime */
		r_u64(c);
		r_u64(c);
		r_u64(c);
	}
	r_post_op(c, post);
}

#endif /* TEST_NFS3_HARNESS_H */
