// SPDX-License-Identifier: MIT
/*
 * test_nfs4_exports.c - the export rules NFSv4.1 shares with NFSv3
 * (docs/nfs4.md, "What is shared with NFSv3"): on one exports table, each
 * rule is checked through both versions, with the same handle, and the
 * answers compared (RFC 1813 and RFC 8881 give the two status codes the
 * same numbers: ROFS 30, ACCES 13):
 * - a ro entry refuses every change (OPEN with create or for writing,
 *   CREATE, REMOVE, SETATTR, WRITE, COMMIT: NFS4ERR_ROFS; NFSv3
 *   NFS3ERR_ROFS) and ACCESS grants no MODIFY, EXTEND or DELETE, while a
 *   read-only OPEN is served;
 * - root_squash, no_root_squash and all_squash with anonuid/anongid give a
 *   new directory the same owner in both versions (65534, 0, 1234:5678);
 * - an export not listed for the caller's address is absent from the
 *   pseudo file system (LOOKUP NFS4ERR_NOENT, not in READDIR), and its
 *   handle answers NFS4ERR_ACCESS (NFSv3: NFS3ERR_ACCES); from the listed
 *   address it is served;
 * - RENAME checks the caller may change both directories first (a file in
 *   a sticky directory moved into a directory the caller may not write:
 *   ACCESS in both, not rename(2)'s EPERM).
 * Each case runs on both backends (test_nfs4_harness.h).
 */
#include <limits.h>

#include "test_nfs4_harness.h"

/* NFSv3 procedures (RFC 1813 3) and nfsstat3 values (2.6), written out */
#define P3_GETATTR 1
#define P3_SETATTR 2
#define P3_ACCESS 4
#define P3_WRITE 7
#define P3_CREATE 8
#define P3_MKDIR 9
#define P3_REMOVE 12
#define P3_RENAME 14
#define V3_ROFS 30u
#define V3_ACCES 13u

static const char *const g_lines[] = {
	"rw 127.0.0.1(rw,root_squash,fsid=1)",
	"ro 127.0.0.1(ro,no_root_squash,fsid=2)",
	"nsq 127.0.0.1(rw,no_root_squash,fsid=3)",
	"sq 127.0.0.1(rw,all_squash,anonuid=1234,anongid=5678,fsid=4)",
	"hidden 10.9.9.9(rw,no_root_squash,fsid=5)",
};

static int setup(void **state)
{
	struct env *e;

	if (t4_setup_exports(state, g_lines, sizeof(g_lines) / sizeof(g_lines[0])))
		return -1;
	e = *state;
	if (!e)
		return 0; /* posix, not root: skipped */
	/* a file in the ro export */
	t4_mkfile(e, "ro/g", 0666, "");
	session(e);
	return 0;
}

static int teardown(void **state)
{
	return t4_teardown(state);
}

/* ---- NFSv4.1 ---- */

static void set_peer(struct env *e, uint32_t addr)
{
	((struct sockaddr_in *)&e->c.req.rq_peer)->sin_addr.s_addr = htonl(addr);
}

/* at_fh - SEQUENCE, PUTFH @fh, then @nops operations the caller appends */
static void at_fh(struct env *e, const uint8_t *fh, uint32_t len, uint32_t nops)
{
	c_begin(e, 1, 2 + nops);
	c_sequence(e, e->seq++, 0);
	t_u32(&e->c, OP_PUTFH);
	t_opaque(&e->c, fh, len);
}

/* run_op - run it; the status of @op, the operation after PUTFH */
static uint32_t run_op(struct env *e, uint32_t op)
{
	uint32_t n;

	assert_int_equal(c_run(e), RPCRDMA_SVC_SUCCESS);
	(void)r_hdr(&e->c, &n);
	assert_int_equal(r_op(&e->c, OP_SEQUENCE), NFS4_OK);
	r_skip(&e->c, 36);
	assert_int_equal(r_op(&e->c, OP_PUTFH), NFS4_OK);
	return r_op(&e->c, op);
}

/* lookup - PUTROOTFH and a LOOKUP per component of e->dir/@rel from
 * address @addr: the COMPOUND's status; on NFS4_OK the handle in @fh */
static uint32_t lookup(struct env *e, const char *rel, uint32_t addr,
		       uint8_t *fh, uint32_t *len)
{
	char path[PATH_MAX];
	uint32_t n, nops, status;
	const uint8_t *p;

	snprintf(path, sizeof(path), "%s%s%s", e->dir, *rel ? "/" : "", rel);
	nops = path_ops(path);
	c_begin(e, 1, 1 + nops + 1);
	set_peer(e, addr);
	c_sequence(e, e->seq++, 0);
	c_lookup_ops(e, path);
	t_u32(&e->c, OP_GETFH);
	assert_int_equal(c_run(e), RPCRDMA_SVC_SUCCESS);
	status = r_hdr(&e->c, &n);
	if (status)
		return status;
	assert_int_equal(n, 1 + nops + 1);
	assert_int_equal(r_op(&e->c, OP_SEQUENCE), NFS4_OK);
	r_skip(&e->c, 36);
	for (uint32_t i = 0; i < nops; i++)
		assert_int_equal(r_op(&e->c, i ? OP_LOOKUP : OP_PUTROOTFH), NFS4_OK);
	assert_int_equal(r_op(&e->c, OP_GETFH), NFS4_OK);
	p = r_opaque(&e->c, len);
	memcpy(fh, p, *len);
	return NFS4_OK;
}

static void fh_of(struct env *e, const char *rel, uint8_t *fh, uint32_t *len)
{
	assert_int_equal(lookup(e, rel, INADDR_LOOPBACK, fh, len), NFS4_OK);
}

static void no_attrs(struct t_call *c)
{
	t_u32(c, 0);
	t_u32(c, 0);
}

static const uint8_t anon_stateid[16];

/* OPEN of @name in directory @dir: @create (UNCHECKED4) or not, @access */
static uint32_t v4_open(struct env *e, const uint8_t *dir, uint32_t dlen,
			const char *name, bool create, uint32_t access)
{
	struct t_call *c = &e->c;

	at_fh(e, dir, dlen, 1);
	t_u32(c, OP_OPEN);
	t_u32(c, 0);
	t_u32(c, access);
	t_u32(c, 0);
	t_u64(c, e->clientid);
	t_str(c, "exports-owner");
	t_u32(c, create ? OPEN4_CREATE : OPEN4_NOCREATE);
	if (create) {
		t_u32(c, UNCHECKED4);
		no_attrs(c);
	}
	t_u32(c, CLAIM_NULL);
	t_str(c, name);
	return run_op(e, OP_OPEN);
}

static uint32_t v4_mkdir(struct env *e, const uint8_t *dir, uint32_t dlen,
			 const char *name)
{
	at_fh(e, dir, dlen, 1);
	t_u32(&e->c, OP_CREATE);
	t_u32(&e->c, NF4DIR);
	t_str(&e->c, name);
	no_attrs(&e->c);
	return run_op(e, OP_CREATE);
}

/* ---- NFSv3, through the server's dispatch (the table's rules) ---- */

static void v3_begin(struct env *e, uint32_t proc, uint32_t addr)
{
	struct sockaddr_in *sin = (struct sockaddr_in *)&e->c.req.rq_peer;

	t_begin(&e->c, proc, e->uid, e->gid);
	sin->sin_family = AF_INET;
	sin->sin_addr.s_addr = htonl(addr);
}

/* v3_run - the nfsstat3 */
static uint32_t v3_run(struct env *e)
{
	struct t_call *c = &e->c;

	memset(c->res, 0xee, T_RES_BYTES);
	rpcrdma_xdr_init(&c->req.rq_args, c->args, c->alen);
	rpcrdma_xdr_init(&c->req.rq_res, c->res, T_RES_BYTES);
	assert_int_equal(rpcrdma_nfs3_server_dispatch(&c->req, e->srv3), RPCRDMA_SVC_SUCCESS);
	rpcrdma_nfs3_thread_release();
	c->rlen = c->req.rq_res.xs_pos;
	c->rpos = 0;
	return r_u32(c);
}

static uint32_t v3_dirop(struct env *e, uint32_t proc, const uint8_t *dir,
			 uint32_t dlen, const char *name)
{
	v3_begin(e, proc, INADDR_LOOPBACK);
	t_opaque(&e->c, dir, dlen);
	t_str(&e->c, name);
	if (proc == P3_CREATE) {
		t_u32(&e->c, 0); /* UNCHECKED */
		t_sattr_none(&e->c);
	} else if (proc == P3_MKDIR) {
		t_sattr_none(&e->c);
	}
	return v3_run(e);
}

static void owner_of(struct env *e, const char *rel, uid_t uid, gid_t gid)
{
	struct stat st;

	assert_int_equal(t4_stat(e, rel, &st), 0);
	assert_int_equal(st.st_uid, uid);
	assert_int_equal(st.st_gid, gid);
}

/* A ro entry: every change refused in both versions, reading served. */
static void test_ro_entry(void **state)
{
	struct env *e = t4_env(state);
	uint8_t ro[128], g[128];
	uint32_t rolen, glen, sup, got;

	fh_of(e, "ro", ro, &rolen);
	fh_of(e, "ro/g", g, &glen);
	assert_int_equal(v4_open(e, ro, rolen, "x", true, OPEN4_SHARE_ACCESS_BOTH),
			 NFS4ERR_ROFS);
	assert_int_equal(v3_dirop(e, P3_CREATE, ro, rolen, "x"), V3_ROFS);
	assert_int_equal(v4_mkdir(e, ro, rolen, "d"), NFS4ERR_ROFS);
	assert_int_equal(v3_dirop(e, P3_MKDIR, ro, rolen, "d"), V3_ROFS);
	at_fh(e, ro, rolen, 1);
	t_u32(&e->c, OP_REMOVE);
	t_str(&e->c, "g");
	assert_int_equal(run_op(e, OP_REMOVE), NFS4ERR_ROFS);
	assert_int_equal(v3_dirop(e, P3_REMOVE, ro, rolen, "g"), V3_ROFS);
	/* SETATTR of g's mode */
	at_fh(e, g, glen, 1);
	t_u32(&e->c, OP_SETATTR);
	c_fixed(&e->c, anon_stateid, 16);
	t_u32(&e->c, 2);
	t_u32(&e->c, 0);
	t_u32(&e->c, 1u << (FATTR4_MODE - 32));
	t_u32(&e->c, 4);
	t_u32(&e->c, 0600);
	assert_int_equal(run_op(e, OP_SETATTR), NFS4ERR_ROFS);
	v3_begin(e, P3_SETATTR, INADDR_LOOPBACK);
	t_opaque(&e->c, g, glen);
	t_sattr_mode(&e->c, 0600);
	t_u32(&e->c, 0);
	assert_int_equal(v3_run(e), V3_ROFS);
	/* WRITE with the anonymous stateid, COMMIT */
	at_fh(e, g, glen, 1);
	t_u32(&e->c, OP_WRITE);
	c_fixed(&e->c, anon_stateid, 16);
	t_u64(&e->c, 0);
	t_u32(&e->c, FILE_SYNC4);
	t_str(&e->c, "data");
	assert_int_equal(run_op(e, OP_WRITE), NFS4ERR_ROFS);
	v3_begin(e, P3_WRITE, INADDR_LOOPBACK);
	t_opaque(&e->c, g, glen);
	t_u64(&e->c, 0);
	t_u32(&e->c, 4);
	t_u32(&e->c, 2);
	t_str(&e->c, "data");
	assert_int_equal(v3_run(e), V3_ROFS);
	at_fh(e, g, glen, 1);
	t_u32(&e->c, OP_COMMIT);
	t_u64(&e->c, 0);
	t_u32(&e->c, 0);
	assert_int_equal(run_op(e, OP_COMMIT), NFS4ERR_ROFS);
	/* OPEN for writing refused, for reading served */
	assert_int_equal(v4_open(e, ro, rolen, "g", false, OPEN4_SHARE_ACCESS_WRITE),
			 NFS4ERR_ROFS);
	assert_int_equal(v4_open(e, ro, rolen, "g", false, OPEN4_SHARE_ACCESS_READ),
			 NFS4_OK);
	/* ACCESS of the root (mode 0777, a root caller not squashed): reading
	 * and lookups, no change */
	at_fh(e, ro, rolen, 1);
	t_u32(&e->c, OP_ACCESS);
	t_u32(&e->c, ACCESS4_READ | ACCESS4_LOOKUP | ACCESS4_MODIFY | ACCESS4_EXTEND |
		     ACCESS4_DELETE);
	assert_int_equal(run_op(e, OP_ACCESS), NFS4_OK);
	sup = r_u32(&e->c);
	got = r_u32(&e->c);
	assert_int_equal(sup, ACCESS4_READ | ACCESS4_LOOKUP | ACCESS4_MODIFY |
			      ACCESS4_EXTEND | ACCESS4_DELETE);
	assert_int_equal(got, ACCESS4_READ | ACCESS4_LOOKUP);
	v3_begin(e, P3_ACCESS, INADDR_LOOPBACK);
	t_opaque(&e->c, ro, rolen);
	t_u32(&e->c, 0x1f);
	assert_int_equal(v3_run(e), 0);
	assert_true(r_u32(&e->c)); /* post_op_attr present */
	r_skip(&e->c, 84);
	assert_int_equal(r_u32(&e->c), 0x3); /* READ | LOOKUP */
}

/* Squashing: a new directory's owner, the same in both versions. */
static void test_squash(void **state)
{
	struct env *e = t4_env(state);
	uint8_t fh[128];
	uint32_t len;

	/* root_squash: root is nobody */
	fh_of(e, "rw", fh, &len);
	assert_int_equal(v4_mkdir(e, fh, len, "d4"), NFS4_OK);
	assert_int_equal(v3_dirop(e, P3_MKDIR, fh, len, "d3"), 0);
	owner_of(e, "rw/d4", 65534, 65534);
	owner_of(e, "rw/d3", 65534, 65534);
	/* no_root_squash: root */
	fh_of(e, "nsq", fh, &len);
	assert_int_equal(v4_mkdir(e, fh, len, "d4"), NFS4_OK);
	assert_int_equal(v3_dirop(e, P3_MKDIR, fh, len, "d3"), 0);
	owner_of(e, "nsq/d4", 0, 0);
	owner_of(e, "nsq/d3", 0, 0);
	/* all_squash with anonuid/anongid: any caller is 1234:5678 */
	e->uid = e->gid = 1000;
	fh_of(e, "sq", fh, &len);
	assert_int_equal(v4_mkdir(e, fh, len, "d4"), NFS4_OK);
	assert_int_equal(v3_dirop(e, P3_MKDIR, fh, len, "d3"), 0);
	owner_of(e, "sq/d4", 1234, 5678);
	owner_of(e, "sq/d3", 1234, 5678);
}

/* names - the entries of READDIR of e->dir (a pseudo directory here),
 * joined with ' ' into @buf */
static void names(struct env *e, char *buf, size_t len)
{
	uint8_t fh[128];
	uint32_t fhlen, l;
	const uint8_t *p;
	size_t at = 0;

	fh_of(e, "", fh, &fhlen);
	at_fh(e, fh, fhlen, 1);
	t_u32(&e->c, OP_READDIR);
	t_u64(&e->c, 0);
	t_u64(&e->c, 0);
	t_u32(&e->c, 4096);
	t_u32(&e->c, 8192);
	t_u32(&e->c, 0); /* no attributes */
	assert_int_equal(run_op(e, OP_READDIR), NFS4_OK);
	r_skip(&e->c, 8);
	buf[0] = 0;
	while (r_u32(&e->c)) {
		(void)r_u64(&e->c);
		p = r_opaque(&e->c, &l);
		at += (size_t)snprintf(buf + at, len - at, "%s%.*s", at ? " " : "", (int)l, p);
		assert_true(at < len);
		assert_int_equal(r_u32(&e->c), 0); /* empty bitmap */
		assert_int_equal(r_u32(&e->c), 0); /* no values */
	}
	assert_int_equal(r_u32(&e->c), 1); /* eof */
}

/* An export not listed for the caller's address. */
static void test_unlisted_address(void **state)
{
	struct env *e = t4_env(state);
	struct fs_snap *sn;
	uint8_t fh[128], got[128];
	uint32_t len, glen;
	char list[256];

	/* the pseudo file system does not show it */
	assert_int_equal(lookup(e, "hidden", INADDR_LOOPBACK, got, &glen), NFS4ERR_NOENT);
	names(e, list, sizeof(list));
	assert_string_equal(list, "rw ro nsq sq");
	/* its handle (as MOUNT would give it) answers ACCESS in both */
	sn = fs_snap_get(e->srv3);
	assert_int_equal(rpcrdma_nfs3_root_fh(sn->sn_exp[4], fh, &len), 0);
	fs_snap_put(sn);
	at_fh(e, fh, len, 1);
	t_u32(&e->c, OP_GETATTR);
	t_u32(&e->c, 1);
	t_u32(&e->c, 1u << FATTR4_TYPE);
	assert_int_equal(run_op(e, OP_GETATTR), NFS4ERR_ACCESS);
	v3_begin(e, P3_GETATTR, INADDR_LOOPBACK);
	t_opaque(&e->c, fh, len);
	assert_int_equal(v3_run(e), V3_ACCES);
	/* from the listed address: found, the same handle, served */
	assert_int_equal(lookup(e, "hidden", 0x0a090909, got, &glen), NFS4_OK);
	assert_int_equal(glen, len);
	assert_memory_equal(got, fh, len);
	at_fh(e, fh, len, 1);
	set_peer(e, 0x0a090909);
	t_u32(&e->c, OP_GETATTR);
	t_u32(&e->c, 1);
	t_u32(&e->c, 1u << FATTR4_TYPE);
	assert_int_equal(run_op(e, OP_GETATTR), NFS4_OK);
	v3_begin(e, P3_GETATTR, 0x0a090909);
	t_opaque(&e->c, fh, len);
	assert_int_equal(v3_run(e), 0);
}

/*
 * RENAME checks that the caller may change both directories before the
 * system call, as NFSv3's RENAME and knfsd do: moving another user's file
 * out of a sticky directory into one the caller may not write is
 * NFS4ERR_ACCESS (NFS3ERR_ACCES), not the EPERM rename(2) finds first.
 */
static void test_rename_checks_directories_first(void **state)
{
	struct env *e = t4_env(state);
	uint8_t sticky[128], locked[128];
	uint32_t slen, llen;

	t4_mkdir(e, "nsq/sticky", 01777);
	t4_make(e, "nsq/sticky/victim", T4_FILE, 0644, "", 0, 2000, 2000);
	t4_mkdir(e, "nsq/locked", 0755);
	e->uid = e->gid = 1000;
	fh_of(e, "nsq/sticky", sticky, &slen);
	fh_of(e, "nsq/locked", locked, &llen);
	at_fh(e, sticky, slen, 3);
	t_u32(&e->c, OP_SAVEFH);
	t_u32(&e->c, OP_PUTFH);
	t_opaque(&e->c, locked, llen);
	t_u32(&e->c, OP_RENAME);
	t_str(&e->c, "victim");
	t_str(&e->c, "x");
	assert_int_equal(run_op(e, OP_SAVEFH), NFS4_OK);
	assert_int_equal(r_op(&e->c, OP_PUTFH), NFS4_OK);
	assert_int_equal(r_op(&e->c, OP_RENAME), NFS4ERR_ACCESS);
	v3_begin(e, P3_RENAME, INADDR_LOOPBACK);
	t_opaque(&e->c, sticky, slen);
	t_str(&e->c, "victim");
	t_opaque(&e->c, locked, llen);
	t_str(&e->c, "x");
	assert_int_equal(v3_run(e), V3_ACCES);
	assert_true(t4_exists(e, "nsq/sticky/victim"));
}

/*
 * A RENAME whose two names are one file (the same name, or two hard links
 * of it) is a no-op rename(2) returns 0 for without asking whether the
 * caller may write the directory (the kernel's vfs_rename() returns before
 * its permission checks when source and target are the same inode).
 * knfsd checks first, so a caller who may not write the directory hears
 * NFS4ERR_ACCESS (NFS3ERR_ACCES) for it all the same; so must this server,
 * in both versions, with the open-file cache on (the default entry).
 */
static void test_rename_onto_itself_checks_directory(void **state)
{
	static const char *const names[][2] = { { "f", "f" }, { "f", "g" } };
	struct env *e = t4_env(state);
	uint8_t locked[128];
	uint32_t llen;
	unsigned i;

	t4_mkdir(e, "nsq/locked", 0755); /* root's: uid 1000 may not write it */
	t4_mkfile(e, "nsq/locked/f", 0666, "");
	t4_link(e, "nsq/locked/f", "nsq/locked/g");
	e->uid = e->gid = 1000;
	fh_of(e, "nsq/locked", locked, &llen);
	for (i = 0; i < 2; i++) {
		at_fh(e, locked, llen, 3);
		t_u32(&e->c, OP_SAVEFH);
		t_u32(&e->c, OP_PUTFH);
		t_opaque(&e->c, locked, llen);
		t_u32(&e->c, OP_RENAME);
		t_str(&e->c, names[i][0]);
		t_str(&e->c, names[i][1]);
		assert_int_equal(run_op(e, OP_SAVEFH), NFS4_OK);
		assert_int_equal(r_op(&e->c, OP_PUTFH), NFS4_OK);
		assert_int_equal(r_op(&e->c, OP_RENAME), NFS4ERR_ACCESS);
		v3_begin(e, P3_RENAME, INADDR_LOOPBACK);
		t_opaque(&e->c, locked, llen);
		t_str(&e->c, names[i][0]);
		t_opaque(&e->c, locked, llen);
		t_str(&e->c, names[i][1]);
		assert_int_equal(v3_run(e), V3_ACCES);
	}
	assert_true(t4_exists(e, "nsq/locked/f"));
	assert_true(t4_exists(e, "nsq/locked/g"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		T4_BOTH(test_ro_entry, setup, teardown),
		T4_BOTH(test_squash, setup, teardown),
		T4_BOTH(test_unlisted_address, setup, teardown),
		T4_BOTH(test_rename_checks_directories_first, setup, teardown),
		T4_BOTH(test_rename_onto_itself_checks_directory, setup, teardown),
	};

	return t_exit(cmocka_run_group_tests_name("nfs4 export rules", tests, NULL, NULL));
}
