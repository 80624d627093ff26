// SPDX-License-Identifier: MIT
/*
 * test_nfs3_mnt.c - MOUNT v3 over loopback TCP, with a libtirpc client.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rpc/rpc.h>
#undef RPC_MSG_VERSION /* also defined by <rpcrdma/wire.h> */

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <rpcrdma/nfs3.h>

struct m_env {
	char dir[64];
	struct rpcrdma_nfs3_export *exp;
	struct rpcrdma_mnt *mnt;
	uint16_t port;
	bool refuse;
};

static bool allow_fn(const struct sockaddr *peer, void *arg)
{
	struct m_env *e = arg;

	return peer->sa_family == AF_INET && !e->refuse;
}

static int m_setup(void **state)
{
	struct m_env *e = calloc(1, sizeof(*e));
	struct rpcrdma_nfs3_config cfg = { 0 };
	int err = -EADDRINUSE;

	if (!e)
		return -1;
	strcpy(e->dir, "/tmp/nfs3mnt.XXXXXX");
	if (!mkdtemp(e->dir))
		return -1;
	cfg.nc_export = e->dir;
	cfg.nc_allow = allow_fn;
	cfg.nc_allow_arg = e;
	if (rpcrdma_nfs3_export_open(&cfg, &e->exp))
		return -1;
	for (int i = 0; i < 20 && err == -EADDRINUSE; i++) {
		e->port = (uint16_t)(30000 + (getpid() * 7 + i * 131) % 20000);
		err = rpcrdma_mnt_start(e->exp, "127.0.0.1", e->port, false, &e->mnt);
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
	rpcrdma_nfs3_export_close(e->exp);
	rmdir(e->dir);
	free(e);
	return 0;
}

static CLIENT *m_client(struct m_env *e)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	int sock = RPC_ANYSOCK;
	CLIENT *cl;

	sin.sin_port = htons(e->port);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	cl = clnttcp_create(&sin, 100005, 3, &sock, 0, 0);
	assert_non_null(cl);
	return cl;
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
	struct t_mntres r;
	uint8_t root[64];
	uint32_t rootlen;
	char slash[80];
	struct timeval tv = { 5, 0 };

	assert_int_equal(clnt_call(cl, 0, (xdrproc_t)t_xdr_none, NULL,
				   (xdrproc_t)t_xdr_none, NULL, tv), RPC_SUCCESS);
	assert_int_equal(rpcrdma_nfs3_root_fh(e->exp, root, &rootlen), 0);

	assert_int_equal(do_mnt(cl, e->dir, &r), 0);
	assert_int_equal(r.fhlen, rootlen);
	assert_memory_equal(r.fh, root, rootlen);
	assert_int_equal(r.nflavors, 2);
	assert_int_equal(r.flavors[0], 1); /* AUTH_SYS */
	assert_int_equal(r.flavors[1], 0); /* AUTH_NONE */

	snprintf(slash, sizeof(slash), "%s/", e->dir);
	assert_int_equal(do_mnt(cl, slash, &r), 0);
	assert_int_equal(do_mnt(cl, "/etc", &r), 2);  /* MNT3ERR_NOENT */
	snprintf(slash, sizeof(slash), "%s/..", e->dir);
	assert_int_equal(do_mnt(cl, slash, &r), 2);
	e->refuse = true;
	assert_int_equal(do_mnt(cl, e->dir, &r), 13); /* MNT3ERR_ACCES */
	e->refuse = false;

	/* no such procedure */
	assert_int_equal(clnt_call(cl, 9, (xdrproc_t)t_xdr_none, NULL,
				   (xdrproc_t)t_xdr_none, NULL, tv), RPC_PROCUNAVAIL);
	clnt_destroy(cl);
}

/* EXPORT: exactly one node, our path, no groups */
static bool_t t_xdr_exports(XDR *x, char **path)
{
	bool_t more, groups, more2;

	return xdr_bool(x, &more) && more && t_xdr_path(x, path) &&
	       xdr_bool(x, &groups) && !groups && xdr_bool(x, &more2) && !more2;
}

static void test_export_and_dump(void **state)
{
	struct m_env *e = *state;
	CLIENT *cl = m_client(e);
	struct timeval tv = { 5, 0 };
	char *path = NULL;
	bool_t more = TRUE;

	assert_int_equal(clnt_call(cl, 5, (xdrproc_t)t_xdr_none, NULL,
				   (xdrproc_t)t_xdr_exports, (caddr_t)&path, tv),
			 RPC_SUCCESS);
	assert_string_equal(path, e->dir);
	free(path);
	assert_int_equal(clnt_call(cl, 2, (xdrproc_t)t_xdr_none, NULL,
				   (xdrproc_t)xdr_bool, (caddr_t)&more, tv),
			 RPC_SUCCESS);
	assert_false(more);
	clnt_destroy(cl);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_mnt, m_setup, m_teardown),
		cmocka_unit_test_setup_teardown(test_export_and_dump, m_setup, m_teardown),
	};

	if (geteuid() != 0) {
		fprintf(stderr, "test_nfs3_mnt: needs root (file handles); skipped\n");
		return 77;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
