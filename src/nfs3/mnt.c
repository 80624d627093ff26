// SPDX-License-Identifier: MIT
/*
 * mnt.c - MOUNT version 3 (RFC 1813 section 5) over TCP with libtirpc.
 *
 * MNT hands out an export's root handle to the clients its entries list;
 * EXPORT lists the exports, DUMP the mounts made.  The XDR routines are written
 * here with libtirpc's primitives.  The connections are served by the
 * TCP side's one thread (src/nfs3/rpc_tcp.c, with NLM and NSM): peers no
 * export lists are refused at accept, and no peer's slow or partial
 * record holds up another's call.  One MOUNT server runs per process (the
 * dispatch callback has no argument).
 */
#include <errno.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <rpc/rpc.h>
/*
 * <rpc/rpc_msg.h> and <rpcrdma/wire.h> both define RPC_MSG_VERSION (2);
 * nothing here uses it.
 */
#undef RPC_MSG_VERSION

#include "nfs3_internal.h"
#include "../common/rpc_tcp.h"
#include "../common/rpcb_tcp.h"


/* One mount DUMP lists (RFC 1813 5.2.3, mountbody). */
struct mnt_entry {
	char me_host[INET6_ADDRSTRLEN];
	char *me_path;
};

struct rpcrdma_mnt {
	struct rpcrdma_nfs3_server *m_srv;
	struct rpc_tcp_listener *m_lsn;
	bool m_rpcbind;
	/* the mount list: touched by the TCP side's thread only */
	struct mnt_entry m_mounts[RPCRDMA_NFS3_MOUNTLIST_MAX];
	unsigned m_nmounts;
	uint64_t m_unlisted; /* MNTs the full list could not record */
};

/* libtirpc's dispatch callback has no argument: the one running server */
static struct rpcrdma_mnt *mnt_current;
static atomic_flag mnt_busy = ATOMIC_FLAG_INIT;

struct mnt_res {
	uint32_t mr_status;
	uint8_t mr_fh[RPCRDMA_NFS3_FHSIZE];
	u_int mr_fhlen;
};

static bool_t xdr_dirpath(XDR *x, char **path)
{
	return xdr_string(x, path, MNT3_PATHLEN);
}

static bool_t xdr_name(XDR *x, char **name)
{
	return xdr_string(x, name, MNT3_NAMLEN);
}

/* mountres3: status, then on MNT3_OK fhandle3 and auth_flavors<> */
static bool_t xdr_mnt_res(XDR *x, struct mnt_res *r)
{
	char *fh = (char *)r->mr_fh;
	u_int fhlen = r->mr_fhlen, nflav = 2;
	int flavors[2] = { AUTH_SYS, AUTH_NONE };

	if (!xdr_u_int(x, &r->mr_status))
		return FALSE;
	if (r->mr_status != MNT3_OK)
		return TRUE;
	if (!xdr_bytes(x, &fh, &fhlen, RPCRDMA_NFS3_FHSIZE) || !xdr_u_int(x, &nflav))
		return FALSE;
	return xdr_int(x, &flavors[0]) && xdr_int(x, &flavors[1]);
}

/*
 * exports (RFC 1813 5.2.5): an exportnode per export, its groups the
 * client entries as written (a host name once, however many addresses).
 */
static bool_t xdr_exports(XDR *x, struct fs_snap *sn)
{
	bool_t yes = TRUE, no = FALSE;

	for (unsigned i = 0; i < sn->sn_xt->xt_n; i++) {
		const struct fs_xspec *xs = &sn->sn_xt->xt_specs[i];
		char *path = xs->xs_path;

		if (!xdr_bool(x, &yes) || !xdr_dirpath(x, &path))
			return FALSE;
		for (unsigned j = 0; j < xs->xs_nclients; j++) {
			char *name = xs->xs_clients[j].xc_name;

			if (!xs->xs_clients[j].xc_listed)
				continue;
			if (!xdr_bool(x, &yes) || !xdr_name(x, &name))
				return FALSE;
		}
		if (!xdr_bool(x, &no))
			return FALSE;
	}
	return xdr_bool(x, &no);
}

/* mountlist (RFC 1813 5.2.3) */
static bool_t xdr_mountlist(XDR *x, struct rpcrdma_mnt *m)
{
	bool_t yes = TRUE, no = FALSE;

	for (unsigned i = 0; i < m->m_nmounts; i++) {
		char *host = m->m_mounts[i].me_host, *path = m->m_mounts[i].me_path;

		if (!xdr_bool(x, &yes) || !xdr_name(x, &host) || !xdr_dirpath(x, &path))
			return FALSE;
	}
	return xdr_bool(x, &no);
}

/* void results */
static bool_t xdr_nothing(XDR *x, void *unused)
{
	(void)x;
	(void)unused;
	return TRUE;
}

/* Compare a client's path with an export's, ignoring trailing slashes. */
static bool path_matches(const char *want, const char *have)
{
	size_t n = strlen(want), h = strlen(have);

	while (n > 1 && want[n - 1] == '/')
		n--;
	return n == h && memcmp(want, have, n) == 0;
}

/* peer_host - the numeric address of @peer (IPv4-mapped shown as IPv4). */
static void peer_host(const struct sockaddr *peer, char *buf, size_t len)
{
	const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)peer;

	buf[0] = '\0';
	if (!peer)
		return;
	if (peer->sa_family == AF_INET)
		inet_ntop(AF_INET, &((const struct sockaddr_in *)peer)->sin_addr,
			  buf, (socklen_t)len);
	else if (IN6_IS_ADDR_V4MAPPED(&s6->sin6_addr))
		inet_ntop(AF_INET, &s6->sin6_addr.s6_addr[12], buf, (socklen_t)len);
	else
		inet_ntop(AF_INET6, &s6->sin6_addr, buf, (socklen_t)len);
}

static uint16_t peer_port(const struct sockaddr *peer)
{
	if (peer->sa_family == AF_INET)
		return ntohs(((const struct sockaddr_in *)peer)->sin_port);
	return ntohs(((const struct sockaddr_in6 *)peer)->sin6_port);
}

/* mount_forget - drop @host's mounts of @path (NULL: all of @host's). */
static void mount_forget(struct rpcrdma_mnt *m, const char *host, const char *path)
{
	unsigned w = 0;

	for (unsigned i = 0; i < m->m_nmounts; i++) {
		struct mnt_entry *e = &m->m_mounts[i];

		if (!strcmp(e->me_host, host) &&
		    (!path || path_matches(path, e->me_path))) {
			free(e->me_path);
			continue;
		}
		m->m_mounts[w++] = *e;
	}
	m->m_nmounts = w;
}

static void mount_record(struct rpcrdma_mnt *m, const char *host, const char *path)
{
	struct mnt_entry *e;

	mount_forget(m, host, path);
	if (m->m_nmounts == RPCRDMA_NFS3_MOUNTLIST_MAX) {
		m->m_unlisted++;
		return;
	}
	e = &m->m_mounts[m->m_nmounts];
	e->me_path = strdup(path);
	if (!e->me_path) {
		m->m_unlisted++;
		return;
	}
	snprintf(e->me_host, sizeof(e->me_host), "%s", host);
	m->m_nmounts++;
}

/*
 * mnt_find - the export @path lies in: the one whose path is @path or its
 * longest parent (nested exports: the inner one).  @rest: out: the part of
 * @path below it, without leading slashes ("" for the export itself).
 * Return: its index, or -1.
 */
static int mnt_find(const struct fs_snap *sn, const char *path, const char **rest)
{
	size_t blen = 0;
	int best = -1;

	for (unsigned i = 0; i < sn->sn_xt->xt_n; i++) {
		const char *ep = sn->sn_exp[i]->ex_path;
		size_t n = strlen(ep);

		if (strncmp(path, ep, n))
			continue;
		if (path[n] && path[n] != '/' && strcmp(ep, "/"))
			continue; /* "/srv/ab" is not below "/srv/a" */
		if (best < 0 || n > blen) {
			best = (int)i;
			blen = n;
		}
	}
	if (best >= 0) {
		*rest = path + blen;
		while (**rest == '/')
			(*rest)++;
	}
	return best;
}

/*
 * mnt_dir_fh - the handle of directory @rest below @exp's root, as mountd
 * lets a client mount a subdirectory of an export: each component looked
 * up (fs_lookup(): no symlink followed, no mount crossed) with the
 * server's own identity; "." and ".." are refused, so the walk never
 * leaves the export.  Return: a mountstat3.
 */
static uint32_t mnt_dir_fh(struct rpcrdma_nfs3_export *exp, const char *rest,
			   uint8_t *fh, u_int *fhlen)
{
	/*
	 * MOUNT acts as the server: no caller, no identity switch (the posix
	 * backend runs as the server's own identity); a backend that checks
	 * permissions from the call's credentials itself is given uid 0's.
	 */
	struct fs_call c = { .c_exp = exp };
	char buf[MNT3_PATHLEN + 1];
	struct fs_fentry ent[2], *dfe = NULL, *fe;
	struct stat dst, st;
	uint32_t status = MNT3_OK, len;
	char *save = NULL, *comp;
	unsigned cur = 0; /* ent[cur]: the directory's storage */
	int err;

	snprintf(buf, sizeof(buf), "%s", rest);
	if (fs_root(exp, &ent[cur], &dfe, &dst) < 0) {
		dfe = NULL;
		status = MNT3ERR_SERVERFAULT;
		goto out;
	}
	for (comp = strtok_r(buf, "/", &save); comp; comp = strtok_r(NULL, "/", &save)) {
		if (!strcmp(comp, ".") || !strcmp(comp, "..")) {
			status = MNT3ERR_NOENT;
			goto out;
		}
		if (strlen(comp) > MNT3_NAMLEN) {
			status = MNT3ERR_NAMETOOLONG;
			goto out;
		}
		err = fs_lookup(&c, dfe, &dst, comp, &ent[cur ^ 1], &fe, &st);
		if (err) {
			status = err == -EACCES ? MNT3ERR_ACCES :
				 err == -ENOENT || err == -EXDEV ? MNT3ERR_NOENT :
				 MNT3ERR_IO;
			goto out;
		}
		/* the object found is the directory searched next */
		fs_fcache_put(dfe);
		dfe = fe;
		cur ^= 1;
		dst = st;
		if (!S_ISDIR(st.st_mode)) {
			status = MNT3ERR_NOTDIR;
			goto out;
		}
	}
	if (fs_fh_of_exp(exp, dfe, "", fh, &len) < 0)
		status = MNT3ERR_SERVERFAULT;
	else
		*fhlen = len;
out:
	fs_fcache_put(dfe);
	return status;
}

static void mnt_mnt(struct rpcrdma_mnt *m, SVCXPRT *xprt)
{
	struct fs_snap *sn = fs_snap_get(m->m_srv);
	struct mnt_res res = { .mr_status = MNT3ERR_NOENT };
	struct netbuf *nb = svc_getrpccaller(xprt);
	const struct sockaddr *peer = nb ? (const struct sockaddr *)nb->buf : NULL;
	struct rpcrdma_nfs3_xopts opts;
	struct rpcrdma_nfs3_export *exp = NULL;
	char host[INET6_ADDRSTRLEN];
	const char *rest = "";
	char *path = NULL;
	int i;

	if (!svc_getargs(xprt, (xdrproc_t)xdr_dirpath, (caddr_t)&path)) {
		svcerr_decode(xprt);
		goto out;
	}
	for (size_t n = strlen(path); n > 1 && path[n - 1] == '/'; n--)
		path[n - 1] = '\0';
	i = path[0] == '/' ? mnt_find(sn, path, &rest) : -1;
	if (i >= 0) {
		enum fs_xmatch xm = peer ? fs_exports_match_peer(sn->sn_xt, (unsigned)i,
								      peer, false, &opts) :
					     FS_XM_NO;

		/* a name being looked up: answered in a moment (never waited
		 * for on this thread), refused after a second */
		if (xm == FS_XM_UNKNOWN && rpc_tcp_defer(xprt)) {
			svc_freeargs(xprt, (xdrproc_t)xdr_dirpath, (caddr_t)&path);
			goto out;
		}
		exp = sn->sn_exp[i];
		if (xm != FS_XM_YES || (!opts.xo_insecure && peer_port(peer) >= 1024))
			res.mr_status = MNT3ERR_ACCES;
		else
			res.mr_status = mnt_dir_fh(exp, rest, res.mr_fh, &res.mr_fhlen);
	}
	peer_host(peer, host, sizeof(host));
	if (res.mr_status == MNT3_OK)
		mount_record(m, host, path);
	if (exp && exp->ex_verbose)
		fprintf(exp->ex_log, "rpcrdma-nfsd: MNT %s from %s -> %u\n", path,
			host, res.mr_status);
	svc_sendreply(xprt, (xdrproc_t)xdr_mnt_res, (caddr_t)&res);
	svc_freeargs(xprt, (xdrproc_t)xdr_dirpath, (caddr_t)&path);
out:
	fs_snap_put(sn);
}

static void mnt_dispatch(struct svc_req *rq, SVCXPRT *xprt)
{
	struct rpcrdma_mnt *m = mnt_current;
	struct netbuf *nb;
	char host[INET6_ADDRSTRLEN];
	struct fs_snap *sn;
	char *path = NULL;

	if (!m) {
		svcerr_systemerr(xprt);
		return;
	}
	nb = svc_getrpccaller(xprt);
	peer_host(nb ? (const struct sockaddr *)nb->buf : NULL, host, sizeof(host));
	switch (rq->rq_proc) {
	case MOUNTPROC3_NULL:
		svc_sendreply(xprt, (xdrproc_t)xdr_nothing, NULL);
		break;
	case MOUNTPROC3_UMNTALL:
		mount_forget(m, host, NULL);
		svc_sendreply(xprt, (xdrproc_t)xdr_nothing, NULL);
		break;
	case MOUNTPROC3_MNT:
		mnt_mnt(m, xprt);
		break;
	case MOUNTPROC3_DUMP:
		svc_sendreply(xprt, (xdrproc_t)xdr_mountlist, (caddr_t)m);
		break;
	case MOUNTPROC3_UMNT:
		if (!svc_getargs(xprt, (xdrproc_t)xdr_dirpath, (caddr_t)&path)) {
			svcerr_decode(xprt);
			break;
		}
		mount_forget(m, host, path);
		svc_sendreply(xprt, (xdrproc_t)xdr_nothing, NULL);
		svc_freeargs(xprt, (xdrproc_t)xdr_dirpath, (caddr_t)&path);
		break;
	case MOUNTPROC3_EXPORT:
		sn = fs_snap_get(m->m_srv);
		svc_sendreply(xprt, (xdrproc_t)xdr_exports, (caddr_t)sn);
		fs_snap_put(sn);
		break;
	default:
		svcerr_noproc(xprt);
		break;
	}
}

int rpcrdma_mnt_start(struct rpcrdma_nfs3_server *srv, const char *listen_addr,
		      uint16_t port, bool rpcbind, struct rpcrdma_mnt **out)
{
	struct rpcrdma_mnt *m;
	int fd = -1, err;

	if (atomic_flag_test_and_set(&mnt_busy))
		return -EBUSY;
	m = calloc(1, sizeof(*m));
	if (!m) {
		err = -ENOMEM;
		goto out_busy;
	}
	m->m_srv = srv;
	m->m_rpcbind = rpcbind;
	err = rpc_tcp_socket(listen_addr, port ? port : RPCRDMA_MNT_PORT, &fd, NULL);
	if (err)
		goto out_free;
	mnt_current = m;
	/* peers no export lists are closed at accept, before any byte */
	err = rpc_tcp_serve(fd, RPCRDMA_MNT_PROGRAM, RPCRDMA_MNT_VERSION, mnt_dispatch,
			    rpcrdma_nfs3_server_allows, srv, &m->m_lsn);
	if (err)
		goto out_close;
	if (rpcbind) { /* under tcp and tcp6, as the socket listens */
		err = rpcb_tcp_set(RPCRDMA_MNT_PROGRAM, RPCRDMA_MNT_VERSION, fd, true);
		if (err)
			goto out_unserve;
	}
	*out = m;
	return 0;

out_unserve:
	rpc_tcp_unserve(m->m_lsn); /* closes fd */
	fd = -1;
out_close:
	if (fd >= 0)
		close(fd);
out_free:
	mnt_current = NULL;
	free(m);
out_busy:
	atomic_flag_clear(&mnt_busy);
	return err;
}

void rpcrdma_mnt_stop(struct rpcrdma_mnt *m)
{
	if (!m)
		return;
	rpc_tcp_unserve(m->m_lsn); /* no mnt_dispatch runs from here on */
	if (m->m_rpcbind)
		rpcb_tcp_unset(RPCRDMA_MNT_PROGRAM, RPCRDMA_MNT_VERSION);
	mnt_current = NULL;
	for (unsigned i = 0; i < m->m_nmounts; i++)
		free(m->m_mounts[i].me_path);
	free(m);
	atomic_flag_clear(&mnt_busy);
}
