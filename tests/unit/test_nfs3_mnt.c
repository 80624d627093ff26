// SPDX-License-Identifier: MIT
/*
 * test_nfs3_mnt.c - MOUNT v3 over loopback TCP, with a libtirpc client,
 * on each backend (the exports lines name it: backend=NAME).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <rpc/rpc.h>
#undef RPC_MSG_VERSION /* also defined by <rpcrdma/wire.h> */

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <rpcrdma/nfs3.h>

#include "test_nfs3_harness.h"

struct m_env {
	char dir[64];
	char dir2[80];
	struct rpcrdma_nfs3_server *srv;
	struct rpcrdma_mnt *mnt;
	uint16_t port;
};

/*
 * m_table - exports text for the test's two directories (then parsed):
 * @fmt has the first directory, the backend option of its line
 * (",backend=NAME"), the second directory and its line's backend option.
 */
static struct rpcrdma_nfs3_exports *m_table(struct m_env *e, const char *fmt)
{
	struct rpcrdma_nfs3_exports *xt = NULL;
	char text[512], err[256], be[32];

	snprintf(be, sizeof(be), ",backend=%s", t_be_names[t_be_cur]);
	snprintf(text, sizeof(text), fmt, e->dir, be, e->dir2, be);
	assert_int_equal(rpcrdma_nfs3_exports_parse("test", text, &xt, err,
						    sizeof(err)), 0);
	return xt;
}

#define M_TABLE "%s 127.0.0.1(rw,insecure,fsid=7%s) 192.0.2.9\n" \
		"%s 192.0.2.0/24(ro%s) 127.0.0.0/8(secure,fsid=8) *.invalid\n"

/* m_export - the export of the first directory in the table in force. */
static struct rpcrdma_nfs3_export *m_export(struct m_env *e)
{
	struct fs_snap *sn = fs_snap_get(e->srv);
	struct rpcrdma_nfs3_export *exp = sn->sn_exp[0];

	fs_snap_put(sn); /* the server's table keeps it while the test runs */
	return exp;
}

static int m_setup(void **state)
{
	struct m_env *e = calloc(1, sizeof(*e));
	struct rpcrdma_nfs3_config cfg = { 0 };
	struct rpcrdma_nfs3_exports *xt;
	int err = -EADDRINUSE;

	if (!e)
		return -1;
	if (t_make_dir(e->dir, sizeof(e->dir), "/tmp", "nfs3mnt"))
		return -1;
	/* a nested export (memory: a tree of its own) */
	snprintf(e->dir2, sizeof(e->dir2), "%s/sub", e->dir);
	if (!t_memory() && mkdir(e->dir2, 0755))
		return -1;
	xt = m_table(e, M_TABLE);
	if (rpcrdma_nfs3_server_create(&cfg, xt, &e->srv, NULL, 0))
		return -1;
	rpcrdma_nfs3_exports_free(xt);
	for (int i = 0; i < 20 && err == -EADDRINUSE; i++) {
		e->port = (uint16_t)(30000 + (getpid() * 7 + i * 131) % 20000);
		err = rpcrdma_mnt_start(e->srv, "127.0.0.1", e->port, false, &e->mnt);
	}
	if (err)
		return -1;
	*state = e;
	return 0;
}

static int m_teardown(void **state)
{
	struct m_env *e = *state;

	rpcrdma_mnt_stop(e->mnt);
	rpcrdma_nfs3_server_destroy(e->srv);
	t_fs_remove_tree(e->dir);
	free(e);
	return 0;
}

/* m_client_port - a MOUNT client whose TCP source port is @port (0: any). */
static CLIENT *m_client_port(struct m_env *e, uint16_t port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	struct sockaddr_in me = { .sin_family = AF_INET };
	int sock = socket(AF_INET, SOCK_STREAM, 0), one = 1;
	CLIENT *cl;

	assert_true(sock >= 0);
	setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	me.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	me.sin_port = htons(port);
	assert_int_equal(bind(sock, (struct sockaddr *)&me, sizeof(me)), 0);
	sin.sin_port = htons(e->port);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(connect(sock, (struct sockaddr *)&sin, sizeof(sin)), 0);
	cl = clnttcp_create(&sin, 100005, 3, &sock, 0, 0);
	assert_non_null(cl);
	clnt_control(cl, CLSET_FD_CLOSE, NULL);
	return cl;
}

/* an unprivileged source port (the kernel's choice: 32768 and up) */
static CLIENT *m_client(struct m_env *e)
{
	return m_client_port(e, 0);
}

/* The test's own mountres3 decoder (RFC 1813 5.2.1). */
struct t_mntres {
	u_int status;
	char fh[64];
	u_int fhlen;
	int flavors[4];
	u_int nflavors;
};

static bool_t t_xdr_mntres(XDR *x, struct t_mntres *r)
{
	char *fh = r->fh;
	char *fl = (char *)r->flavors;

	if (!xdr_u_int(x, &r->status))
		return FALSE;
	if (r->status)
		return TRUE;
	return xdr_bytes(x, &fh, &r->fhlen, 64) &&
	       xdr_array(x, &fl, &r->nflavors, 4, sizeof(int), (xdrproc_t)xdr_int);
}

static bool_t t_xdr_path(XDR *x, char **p)
{
	return xdr_string(x, p, 1024);
}

static bool_t t_xdr_none(XDR *x, void *p)
{
	(void)x;
	(void)p;
	return TRUE;
}

static u_int do_mnt(CLIENT *cl, const char *path, struct t_mntres *r)
{
	struct timeval tv = { 5, 0 };
	char *p = (char *)path;

	memset(r, 0, sizeof(*r));
	assert_int_equal(clnt_call(cl, 1, (xdrproc_t)t_xdr_path, (caddr_t)&p,
				   (xdrproc_t)t_xdr_mntres, (caddr_t)r, tv),
			 RPC_SUCCESS);
	return r->status;
}

static void test_mnt(void **state)
{
	struct m_env *e = *state;
	CLIENT *cl = m_client(e);
	struct rpcrdma_nfs3_exports *xt;
	struct t_mntres r;
	char slash[96];
	struct timeval tv = { 5, 0 };

	assert_int_equal(clnt_call(cl, 0, (xdrproc_t)t_xdr_none, NULL,
				   (xdrproc_t)t_xdr_none, NULL, tv), RPC_SUCCESS);

	/* the handle: version 1, the export's id (fsid=7) in bytes 2..3, and
	 * 16 bytes of header and MAC around the kernel's handle */
	assert_int_equal(do_mnt(cl, e->dir, &r), 0);
	assert_true(r.fhlen > 16 && r.fhlen <= 64);
	assert_int_equal((uint8_t)r.fh[0], 1);
	assert_int_equal((uint8_t)r.fh[1], r.fhlen - 16);
	assert_int_equal((uint8_t)r.fh[2], 0);
	assert_int_equal((uint8_t)r.fh[3], 7);
	assert_int_equal(r.nflavors, 2);
	assert_int_equal(r.flavors[0], 1); /* AUTH_SYS */
	assert_int_equal(r.flavors[1], 0); /* AUTH_NONE */

	snprintf(slash, sizeof(slash), "%s/", e->dir);
	assert_int_equal(do_mnt(cl, slash, &r), 0);
	assert_int_equal(do_mnt(cl, "/etc", &r), 2);  /* MNT3ERR_NOENT */
	snprintf(slash, sizeof(slash), "%s/..", e->dir);
	assert_int_equal(do_mnt(cl, slash, &r), 2);
	/* the second export is "secure" for 127/8: this port is not */
	assert_int_equal(do_mnt(cl, e->dir2, &r), 13); /* MNT3ERR_ACCES */
	/* ... and so is any directory below it (the inner export decides) */
	snprintf(slash, sizeof(slash), "%s/sub/deeper", e->dir);
	assert_int_equal(do_mnt(cl, slash, &r), 13);

	/* a reload that no longer lists 127.0.0.1: refused from then on */
	xt = m_table(e, "%s 192.0.2.9(rw%s)\n%s 192.0.2.0/24(ro%s)\n");
	assert_int_equal(rpcrdma_nfs3_server_reload(e->srv, xt, NULL, 0), 0);
	rpcrdma_nfs3_exports_free(xt);
	assert_int_equal(do_mnt(cl, e->dir, &r), 13);

	/* no such procedure */
	assert_int_equal(clnt_call(cl, 9, (xdrproc_t)t_xdr_none, NULL,
				   (xdrproc_t)t_xdr_none, NULL, tv), RPC_PROCUNAVAIL);
	clnt_destroy(cl);
}

/* "secure": from a port below 1024 the second export mounts (root only) */
/* MNT of directories below an export, as mountd allows. */
static void test_mnt_subdir(void **state)
{
	struct m_env *e = *state;
	CLIENT *cl = m_client(e);
	struct rpcrdma_nfs3_export *exp = m_export(e);
	struct t_mntres r, root;
	char p[128];

	assert_int_equal(t_fs_mkdir(exp, e->dir, "a", 0755), 0);
	assert_int_equal(t_fs_mkdir(exp, e->dir, "a/b", 0755), 0);
	assert_int_equal(t_fs_mkfile(exp, e->dir, "f", "", 0644), 0);
	assert_int_equal(t_fs_symlink(exp, e->dir, "/", "ln"), 0);
	assert_int_equal(t_fs_mkdir(exp, e->dir, "subx", 0755), 0);

	assert_int_equal(do_mnt(cl, e->dir, &root), 0);
	snprintf(p, sizeof(p), "%s/a/b", e->dir);
	assert_int_equal(do_mnt(cl, p, &r), 0);
	assert_int_equal((uint8_t)r.fh[3], 7);  /* the outer export's handle */
	assert_true(r.fhlen != root.fhlen || memcmp(r.fh, root.fh, r.fhlen));
	snprintf(p, sizeof(p), "%s//a//b/", e->dir);
	assert_int_equal(do_mnt(cl, p, &root), 0);
	assert_int_equal(root.fhlen, r.fhlen);
	assert_memory_equal(root.fh, r.fh, r.fhlen);
	/* "/sub" is an export, "/subx" a directory of the outer one */
	snprintf(p, sizeof(p), "%s/subx", e->dir);
	assert_int_equal(do_mnt(cl, p, &r), 0);
	assert_int_equal((uint8_t)r.fh[3], 7);
	snprintf(p, sizeof(p), "%s/a/../a", e->dir);
	assert_int_equal(do_mnt(cl, p, &r), 2);   /* ".." refused: NOENT */
	snprintf(p, sizeof(p), "%s/./a", e->dir);
	assert_int_equal(do_mnt(cl, p, &r), 2);
	snprintf(p, sizeof(p), "%s/none", e->dir);
	assert_int_equal(do_mnt(cl, p, &r), 2);
	snprintf(p, sizeof(p), "%s/f", e->dir);
	assert_int_equal(do_mnt(cl, p, &r), 20);  /* MNT3ERR_NOTDIR */
	snprintf(p, sizeof(p), "%s/ln", e->dir);
	assert_int_equal(do_mnt(cl, p, &r), 20);  /* a symlink is not followed */
	assert_int_equal(do_mnt(cl, "relative", &r), 2);
	clnt_destroy(cl);
}

static void test_mnt_secure(void **state)
{
	struct m_env *e = *state;
	CLIENT *cl = NULL;
	struct t_mntres r;

	for (uint16_t p = 1023; p > 600 && !cl; p--) {
		struct sockaddr_in me = { .sin_family = AF_INET,
					  .sin_port = htons(p) };
		int s = socket(AF_INET, SOCK_STREAM, 0);

		me.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		if (bind(s, (struct sockaddr *)&me, sizeof(me)) == 0) {
			close(s);
			cl = m_client_port(e, p);
		} else {
			close(s);
		}
	}
	if (!cl) { /* no port below 1024 to bind: only root may */
		assert_false(t_root());
		skip();
	}
	assert_int_equal(do_mnt(cl, e->dir2, &r), 0);
	assert_int_equal((uint8_t)r.fh[3], 8);
	clnt_destroy(cl);
}

/* The test's own decoders of exports and mountlist (RFC 1813 5.2.5, 5.2.3). */
struct t_exports {
	char *path[4];
	char *group[4][4];
	unsigned n, ngroups[4];
};

static bool_t t_xdr_name(XDR *x, char **p)
{
	return xdr_string(x, p, 255);
}

static bool_t t_xdr_exports(XDR *x, struct t_exports *t)
{
	bool_t more;

	for (;;) {
		if (!xdr_bool(x, &more))
			return FALSE;
		if (!more)
			return TRUE;
		if (t->n == 4 || !t_xdr_path(x, &t->path[t->n]))
			return FALSE;
		for (;;) {
			unsigned g = t->ngroups[t->n];

			if (!xdr_bool(x, &more))
				return FALSE;
			if (!more)
				break;
			if (g == 4 || !t_xdr_name(x, &t->group[t->n][g]))
				return FALSE;
			t->ngroups[t->n]++;
		}
		t->n++;
	}
}

struct t_mounts {
	char *host[4], *dir[4];
	unsigned n;
};

static bool_t t_xdr_mounts(XDR *x, struct t_mounts *t)
{
	bool_t more;

	for (;;) {
		if (!xdr_bool(x, &more))
			return FALSE;
		if (!more)
			return TRUE;
		if (t->n == 4 || !t_xdr_name(x, &t->host[t->n]) ||
		    !t_xdr_path(x, &t->dir[t->n]))
			return FALSE;
		t->n++;
	}
}

static void t_mounts_free(struct t_mounts *t)
{
	for (unsigned i = 0; i < t->n; i++) {
		free(t->host[i]);
		free(t->dir[i]);
	}
	memset(t, 0, sizeof(*t));
}

static void test_export_and_dump(void **state)
{
	struct m_env *e = *state;
	CLIENT *cl = m_client(e);
	struct timeval tv = { 5, 0 };
	struct t_exports x = { 0 };
	struct t_mounts m = { 0 };
	struct t_mntres r;
	char *p = e->dir;

	assert_int_equal(clnt_call(cl, 5, (xdrproc_t)t_xdr_none, NULL,
				   (xdrproc_t)t_xdr_exports, (caddr_t)&x, tv),
			 RPC_SUCCESS);
	assert_int_equal(x.n, 2);
	assert_string_equal(x.path[0], e->dir);
	assert_int_equal(x.ngroups[0], 2);
	assert_string_equal(x.group[0][0], "127.0.0.1");
	assert_string_equal(x.group[0][1], "192.0.2.9");
	assert_string_equal(x.path[1], e->dir2);
	assert_int_equal(x.ngroups[1], 3);
	assert_string_equal(x.group[1][0], "192.0.2.0/24");
	assert_string_equal(x.group[1][1], "127.0.0.0/8");
	assert_string_equal(x.group[1][2], "*.invalid");
	for (unsigned i = 0; i < x.n; i++) {
		free(x.path[i]);
		for (unsigned g = 0; g < x.ngroups[i]; g++)
			free(x.group[i][g]);
	}

	/* DUMP: empty, then the MNT made, then empty after UMNT */
	assert_int_equal(clnt_call(cl, 2, (xdrproc_t)t_xdr_none, NULL,
				   (xdrproc_t)t_xdr_mounts, (caddr_t)&m, tv), RPC_SUCCESS);
	assert_int_equal(m.n, 0);
	assert_int_equal(do_mnt(cl, e->dir, &r), 0);
	assert_int_equal(do_mnt(cl, e->dir, &r), 0); /* listed once */
	assert_int_equal(clnt_call(cl, 2, (xdrproc_t)t_xdr_none, NULL,
				   (xdrproc_t)t_xdr_mounts, (caddr_t)&m, tv), RPC_SUCCESS);
	assert_int_equal(m.n, 1);
	assert_string_equal(m.host[0], "127.0.0.1");
	assert_string_equal(m.dir[0], e->dir);
	t_mounts_free(&m);
	assert_int_equal(clnt_call(cl, 3, (xdrproc_t)t_xdr_path, (caddr_t)&p,
				   (xdrproc_t)t_xdr_none, NULL, tv), RPC_SUCCESS);
	assert_int_equal(clnt_call(cl, 2, (xdrproc_t)t_xdr_none, NULL,
				   (xdrproc_t)t_xdr_mounts, (caddr_t)&m, tv), RPC_SUCCESS);
	assert_int_equal(m.n, 0);
	/* UMNTALL forgets every mount of the host */
	assert_int_equal(do_mnt(cl, e->dir, &r), 0);
	assert_int_equal(clnt_call(cl, 4, (xdrproc_t)t_xdr_none, NULL,
				   (xdrproc_t)t_xdr_none, NULL, tv), RPC_SUCCESS);
	assert_int_equal(clnt_call(cl, 2, (xdrproc_t)t_xdr_none, NULL,
				   (xdrproc_t)t_xdr_mounts, (caddr_t)&m, tv), RPC_SUCCESS);
	assert_int_equal(m.n, 0);
	clnt_destroy(cl);
}

int main(void)
{
	static const struct t_case cases[] = {
		T_CASE(test_mnt, m_setup, m_teardown, T_ANY),
		T_CASE(test_mnt_secure, m_setup, m_teardown, T_ANY),
		T_CASE(test_mnt_subdir, m_setup, m_teardown, T_ANY),
		T_CASE(test_export_and_dump, m_setup, m_teardown, T_ANY),
	};
	int fails = 0;

	for (int be = 0; be < T_BE_COUNT; be++)
		fails += t_run_cases(be, "nfs3 MOUNT", cases, T_NCASES(cases), NULL, NULL);
	return t_exit(fails);
}
