// SPDX-License-Identifier: MIT
/*
 * nfs4_server.c - the NFSv4.1 server object over the exports of the
 * file-serving layer (src/fs), the step every operation on a file system
 * object takes first (export, caller's options, identity, sync or async:
 * the same rules as NFSv3, see docs/nfs3.md), and errno to nfsstat4.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "nfs4_cb.h"
#include "nfs4_deleg.h"
#include "nfs4_internal.h"

/* The lease thread: once a second nfs4_state_sweep() (unconfirmed
 * records and courtesy clients past their bound), then the client
 * records written when they changed (a client expired by an NLM
 * conflict has no COMPOUND to flush its record's removal: it kicks the
 * thread).  It allocates nothing once waiting, so a fork() of the
 * process (the unit tests' seccomp children) finds no allocator lock
 * held by it. */
static void *lease_thread(void *arg)
{
	struct rpcrdma_nfs4_server *srv = arg;
	struct timespec ts;
	uint32_t n;

	pthread_mutex_lock(&srv->s4_lease_lock);
	srv->s4_lease_ready = true;
	pthread_cond_broadcast(&srv->s4_lease_cond);
	while (!srv->s4_lease_stop) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_sec += 1;
		if (!srv->s4_lease_kick)
			pthread_cond_timedwait(&srv->s4_lease_cond, &srv->s4_lease_lock, &ts);
		srv->s4_lease_kick = false;
		if (srv->s4_lease_stop)
			break;
		pthread_mutex_unlock(&srv->s4_lease_lock);
		n = nfs4_state_sweep(srv->s4_state);
		if (n && srv->s4_verbose)
			fprintf(srv->s4_log, "rpcrdma-nfsd: nfs4: %u expired client records freed\n", n);
		if (nfs4_recover_pending(srv->s4_recover))
			(void)nfs4_recover_flush(srv->s4_recover);
		nfs4_deleg_lease_work(srv); /* leases broken or to close */
		pthread_mutex_lock(&srv->s4_lease_lock);
	}
	pthread_mutex_unlock(&srv->s4_lease_lock);
	return NULL;
}

static int lease_thread_start(struct rpcrdma_nfs4_server *srv)
{
	pthread_condattr_t ca;
	int err;

	pthread_mutex_init(&srv->s4_lease_lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&srv->s4_lease_cond, &ca);
	pthread_condattr_destroy(&ca);
	err = pthread_create(&srv->s4_lease_thread, NULL, lease_thread, srv);
	if (err) {
		pthread_cond_destroy(&srv->s4_lease_cond);
		pthread_mutex_destroy(&srv->s4_lease_lock);
		return -err;
	}
	srv->s4_lease_running = true;
	/* returned once the thread waits: its start-up is over */
	pthread_mutex_lock(&srv->s4_lease_lock);
	while (!srv->s4_lease_ready)
		pthread_cond_wait(&srv->s4_lease_cond, &srv->s4_lease_lock);
	pthread_mutex_unlock(&srv->s4_lease_lock);
	return 0;
}

void nfs4_server_kick(struct rpcrdma_nfs4_server *srv)
{
	if (!srv->s4_lease_running)
		return;
	pthread_mutex_lock(&srv->s4_lease_lock);
	srv->s4_lease_kick = true;
	pthread_cond_broadcast(&srv->s4_lease_cond);
	pthread_mutex_unlock(&srv->s4_lease_lock);
}

static void lease_thread_stop(struct rpcrdma_nfs4_server *srv)
{
	if (!srv->s4_lease_running)
		return;
	pthread_mutex_lock(&srv->s4_lease_lock);
	srv->s4_lease_stop = true;
	pthread_cond_signal(&srv->s4_lease_cond);
	pthread_mutex_unlock(&srv->s4_lease_lock);
	pthread_join(srv->s4_lease_thread, NULL);
	pthread_cond_destroy(&srv->s4_lease_cond);
	pthread_mutex_destroy(&srv->s4_lease_lock);
	srv->s4_lease_running = false;
}

int rpcrdma_nfs4_server_revoke_file(void *arg, dev_t dev, ino_t ino)
{
	struct rpcrdma_nfs4_server *srv = arg;
	uint32_t n;

	if (!srv)
		return 0;
	n = nfs4_state_revoke_file(srv->s4_state, 0, dev, ino);
	if (n && srv->s4_verbose)
		fprintf(srv->s4_log, "rpcrdma-nfsd: nfs4: %u courtesy clients expired "
			"(an NLM lock conflicts)\n", n);
	if (n && srv->s4_lease_running) {
		/* their records on disk go now, not at the next COMPOUND */
		pthread_mutex_lock(&srv->s4_lease_lock);
		srv->s4_lease_kick = true;
		pthread_cond_broadcast(&srv->s4_lease_cond);
		pthread_mutex_unlock(&srv->s4_lease_lock);
	}
	return (int)n;
}

/* The state dropped client @clientid (owner @owner): its record on disk
 * and its delegations go with it. */
static void forget_client(void *arg, uint64_t clientid, const uint8_t *owner, uint32_t len)
{
	struct rpcrdma_nfs4_server *srv = arg;

	nfs4_recover_note(srv->s4_recover, owner, len, NFS4_REC_FORGET);
	/* called under the state's lock: their leases are closed by the
	 * lease thread (nfs4_deleg_reap()) */
	if (nfs4_deleg_forget_client(srv->s4_deleg, clientid))
		nfs4_server_kick(srv);
}

int rpcrdma_nfs4_limits(uint32_t max_clients, struct rpcrdma_nfs4_limits *out)
{
	struct nfs4_sizes sz;

	if (!out || (max_clients && (max_clients < RPCRDMA_NFS4_CLIENTS_MIN ||
				     max_clients > RPCRDMA_NFS4_CLIENTS_MAX)))
		return -EINVAL;
	nfs4_sizes(max_clients, &sz);
	memset(out, 0, sizeof(*out));
	out->n4l_clients = sz.sz_clients;
	out->n4l_sessions = sz.sz_sessions;
	out->n4l_opens = sz.sz_opens;
	out->n4l_locks = sz.sz_locks;
	out->n4l_delegations = sz.sz_delegs;
	out->n4l_records = sz.sz_records;
	out->n4l_client_sessions = sz.sz_client_sessions;
	out->n4l_client_opens = sz.sz_client_opens;
	out->n4l_client_locks = sz.sz_client_locks;
	out->n4l_client_delegations = sz.sz_client_delegs;
	out->n4l_bytes = nfs4_state_bytes(&sz) + nfs4_deleg_bytes(&sz) +
			 nfs4_cb_table_bytes(&sz) + nfs4_recover_bytes(&sz);
	out->n4l_client_bytes = (out->n4l_bytes + sz.sz_clients - 1) / sz.sz_clients;
	return 0;
}

int rpcrdma_nfs4_server_create(struct rpcrdma_nfs3_server *nfs3,
			       const struct rpcrdma_nfs4_config *cfg,
			       struct rpcrdma_nfs4_server **out)
{
	struct rpcrdma_nfs4_server *srv;
	struct nfs4_recover_stats rs;
	struct timespec rt;
	uint32_t grace;
	int err;

	if (!nfs3 || !out)
		return -EINVAL;
	if (cfg && cfg->n4_lease_sec &&
	    (cfg->n4_lease_sec < NFS4_LEASE_MIN || cfg->n4_lease_sec > NFS4_LEASE_MAX))
		return -EINVAL;
	if (cfg && cfg->n4_max_clients &&
	    (cfg->n4_max_clients < RPCRDMA_NFS4_CLIENTS_MIN ||
	     cfg->n4_max_clients > RPCRDMA_NFS4_CLIENTS_MAX))
		return -EINVAL;
	srv = calloc(1, sizeof(*srv));
	if (!srv)
		return -ENOMEM;
	clock_gettime(CLOCK_REALTIME, &rt);
	srv->s4_nfs3 = nfs3;
	srv->s4_boot = (uint32_t)rt.tv_sec;
	srv->s4_start = rt;
	srv->s4_max_payload = cfg && cfg->n4_max_payload ? cfg->n4_max_payload : 1u << 20;
	srv->s4_log = cfg && cfg->n4_log ? cfg->n4_log : stderr;
	srv->s4_verbose = cfg ? cfg->n4_verbose : 0;
	memcpy(srv->s4_scope, "rpcrdma-nfsd", 12);
	srv->s4_lease = cfg && cfg->n4_lease_sec ? cfg->n4_lease_sec : NFS4_LEASE_SECONDS;
	nfs4_sizes(cfg ? cfg->n4_max_clients : 0, &srv->s4_sizes);
	/* a grace period shorter than a lease could end before a client
	 * that renews on time has noticed the restart (RFC 8881 8.4.2.1) */
	grace = cfg ? cfg->n4_grace_sec : 0;
	grace = grace == 0 ? srv->s4_lease : grace == UINT32_MAX ? 0 : grace;
	err = nfs4_recover_create(cfg ? cfg->n4_state_dir : NULL, grace, srv->s4_log,
				  nfs4_mono_sec(), &srv->s4_sizes, &srv->s4_recover);
	if (err) {
		free(srv);
		return err;
	}
	err = nfs4_state_create(srv->s4_boot, srv->s4_lease, &srv->s4_sizes, &srv->s4_state);
	if (err) {
		nfs4_recover_destroy(srv->s4_recover);
		free(srv);
		return err;
	}
	srv->s4_no_deleg = cfg && cfg->n4_no_delegations;
	err = nfs4_cb_table_create(NULL, &srv->s4_sizes, &srv->s4_cb);
	if (!err)
		err = nfs4_deleg_create(srv->s4_boot, srv->s4_lease, &srv->s4_sizes,
					&srv->s4_deleg);
	if (!err)
		err = lease_thread_start(srv);
	if (err) {
		nfs4_deleg_destroy(srv->s4_deleg);
		nfs4_cb_table_destroy(srv->s4_cb);
		nfs4_state_destroy(srv->s4_state);
		nfs4_recover_destroy(srv->s4_recover);
		free(srv);
		return err;
	}
	/* back channels only for live sessions (a replayed CREATE_SESSION
	 * of a destroyed one must not take another session's entry) */
	nfs4_cb_set_live(srv->s4_cb, nfs4_state_session_live, srv->s4_state);
	/* A client the state drops loses its record and its delegations. */
	nfs4_state_set_forget(srv->s4_state, forget_client, srv);
	/* open states' share reservations mirrored in the layer's table */
	nfs4_state_set_shares(srv->s4_state, srv->s4_nfs3);
	(void)nfs4_recover_flush(srv->s4_recover); /* records no grace can use go */
	if (cfg && cfg->n4_state_dir) {
		nfs4_recover_stats(srv->s4_recover, nfs4_mono_sec(), &rs);
		fprintf(srv->s4_log, "rpcrdma-nfsd: nfs4: %u client records in %s/nfs4-clients, "
			"%s\n", rs.rs_loaded, cfg->n4_state_dir,
			rs.rs_in_grace ? "grace period on" : "no grace period");
		if (rs.rs_in_grace)
			fprintf(srv->s4_log, "rpcrdma-nfsd: nfs4: grace %u s\n", grace);
	}
	fs_server_set_change_hook(nfs3, nfs4_deleg_change_hook, srv);
	*out = srv;
	return 0;
}

int rpcrdma_nfs4_server_recovery(struct rpcrdma_nfs4_server *srv,
				 struct rpcrdma_nfs4_recovery *out)
{
	struct nfs4_recover_stats rs;

	if (!srv || !out)
		return -EINVAL;
	nfs4_recover_stats(srv->s4_recover, nfs4_mono_sec(), &rs);
	memset(out, 0, sizeof(*out));
	out->n4r_in_grace = rs.rs_in_grace;
	out->n4r_loaded = rs.rs_loaded;
	out->n4r_pending = rs.rs_pending;
	out->n4r_records = rs.rs_records;
	out->n4r_open_reclaims = rs.rs_open_reclaims;
	out->n4r_lock_reclaims = rs.rs_lock_reclaims;
	out->n4r_grace_refused = rs.rs_grace_refused;
	out->n4r_no_grace = rs.rs_no_grace;
	out->n4r_no_room = rs.rs_no_room;
	out->n4r_write_errors = rs.rs_write_errors;
	return 0;
}

void rpcrdma_nfs4_server_destroy(struct rpcrdma_nfs4_server *srv)
{
	if (!srv)
		return;
	fs_server_set_change_hook(srv->s4_nfs3, NULL, NULL);
	/* no lease break may reach the lease thread once it stops */
	nfs4_deleg_drop_leases(srv->s4_deleg);
	lease_thread_stop(srv);
	nfs4_cb_table_destroy(srv->s4_cb);
	nfs4_deleg_destroy(srv->s4_deleg);
	nfs4_state_destroy(srv->s4_state);
	/* a grace period that ran out unnoticed: its stale records go */
	(void)nfs4_recover_in_grace(srv->s4_recover, nfs4_mono_sec());
	(void)nfs4_recover_flush(srv->s4_recover);
	nfs4_recover_destroy(srv->s4_recover);
	free(srv);
}

uint32_t nfs4_errno(int err)
{
	switch (-err) {
	case 0: return NFS4_OK;
	case EPERM: return NFS4ERR_PERM;
	case ENOENT: return NFS4ERR_NOENT;
	case ENXIO: return NFS4ERR_NXIO;
	case EACCES: return NFS4ERR_ACCESS;
	case EEXIST: return NFS4ERR_EXIST;
	case EXDEV: return NFS4ERR_XDEV;
	case ENOTDIR: return NFS4ERR_NOTDIR;
	case EISDIR: return NFS4ERR_ISDIR;
	case EINVAL: return NFS4ERR_INVAL;
	case ELOOP: return NFS4ERR_SYMLINK;
	case EFBIG: return NFS4ERR_FBIG;
	case ENOSPC: return NFS4ERR_NOSPC;
	case EROFS: return NFS4ERR_ROFS;
	case EMLINK: return NFS4ERR_MLINK;
	case ENAMETOOLONG: return NFS4ERR_NAMETOOLONG;
	case ENOTEMPTY: return NFS4ERR_NOTEMPTY;
	case EDQUOT: return NFS4ERR_DQUOT;
	case ESTALE: return NFS4ERR_STALE;
	case EBADMSG: return NFS4ERR_BADHANDLE;
	case EOPNOTSUPP: return NFS4ERR_NOTSUPP;
	case EAGAIN: return NFS4ERR_DELAY;
	case ENOMEM: return NFS4ERR_SERVERFAULT;
	default: return NFS4ERR_IO;
	}
}

uint32_t nfs4_op_begin(struct nfs4_compound *cp, const struct nfs4_fh *fh,
		       bool modifies)
{
	struct fs_snap *sn = cp->cp_snap;
	struct rpcrdma_nfs3_xopts opts;
	struct fs_call *c = &cp->cp_c;
	uint32_t auth;

	if (!fh->fh_len)
		return NFS4ERR_NOFILEHANDLE;
	if (fh->fh_pseudo)
		return modifies ? NFS4ERR_ROFS : NFS4ERR_ISDIR;
	if (fh->fh_xi >= sn->sn_xt->xt_n)
		return NFS4ERR_STALE;
	/* A wildcard entry may need the peer's name (fs_hostname.c): a
	 * worker waits for it a bounded time, the transport thread never
	 * does (nfs4_transport_ok() sent such a call to a worker); still
	 * unknown, the client is asked to come back (NFS4ERR_DELAY, as
	 * NFSv3 answers NFS3ERR_JUKEBOX). */
	switch (fs_exports_match_peer(sn->sn_xt, fh->fh_xi,
				      (const struct sockaddr *)&cp->cp_req->rq_peer,
				      !cp->cp_req->rq_transport, &opts)) {
	case FS_XM_YES:
		break;
	case FS_XM_UNKNOWN:
		return NFS4ERR_DELAY;
	default:
		return NFS4ERR_ACCESS;
	}
	memset(c, 0, sizeof(*c));
	c->c_exp = sn->sn_exp[fh->fh_xi];
	c->c_req = cp->cp_req;
	c->c_args = cp->cp_args;
	c->c_res = cp->cp_res;
	c->c_ro = opts.xo_ro;
	c->c_modifies = modifies;
	/* commit_metadata before the reply (fs_commit.c): the operations
	 * that change names or attributes call fs_commit_dir/obj(), which
	 * commit only on a sync entry on a disk, as NFSv3's dispatch says;
	 * the same test as nfs4_transport_ok()'s (fs_never_waits()) */
	c->c_commit = modifies && !opts.xo_async && !fs_never_waits(c->c_exp);
	auth = fs_cred_from_req(&opts, cp->cp_req, &c->c_cred);
	if (auth)
		return auth == RPCRDMA_AUTH_TOOWEAK ? NFS4ERR_WRONGSEC : NFS4ERR_ACCESS;
	fs_cred_call_begin();
	if (c->c_ro && modifies)
		return NFS4ERR_ROFS;
	return NFS4_OK;
}

const char *rpcrdma_nfs4_stat_name(uint32_t s)
{
	switch (s) {
	case NFS4_OK: return "NFS4_OK";
	case NFS4ERR_PERM: return "NFS4ERR_PERM";
	case NFS4ERR_NOENT: return "NFS4ERR_NOENT";
	case NFS4ERR_IO: return "NFS4ERR_IO";
	case NFS4ERR_ACCESS: return "NFS4ERR_ACCESS";
	case NFS4ERR_EXIST: return "NFS4ERR_EXIST";
	case NFS4ERR_XDEV: return "NFS4ERR_XDEV";
	case NFS4ERR_NOTDIR: return "NFS4ERR_NOTDIR";
	case NFS4ERR_ISDIR: return "NFS4ERR_ISDIR";
	case NFS4ERR_INVAL: return "NFS4ERR_INVAL";
	case NFS4ERR_FBIG: return "NFS4ERR_FBIG";
	case NFS4ERR_NOSPC: return "NFS4ERR_NOSPC";
	case NFS4ERR_ROFS: return "NFS4ERR_ROFS";
	case NFS4ERR_NAMETOOLONG: return "NFS4ERR_NAMETOOLONG";
	case NFS4ERR_NOTEMPTY: return "NFS4ERR_NOTEMPTY";
	case NFS4ERR_STALE: return "NFS4ERR_STALE";
	case NFS4ERR_BADHANDLE: return "NFS4ERR_BADHANDLE";
	case NFS4ERR_NOTSUPP: return "NFS4ERR_NOTSUPP";
	case NFS4ERR_TOOSMALL: return "NFS4ERR_TOOSMALL";
	case NFS4ERR_SERVERFAULT: return "NFS4ERR_SERVERFAULT";
	case NFS4ERR_BADTYPE: return "NFS4ERR_BADTYPE";
	case NFS4ERR_DELAY: return "NFS4ERR_DELAY";
	case NFS4ERR_NOFILEHANDLE: return "NFS4ERR_NOFILEHANDLE";
	case NFS4ERR_MINOR_VERS_MISMATCH: return "NFS4ERR_MINOR_VERS_MISMATCH";
	case NFS4ERR_STALE_CLIENTID: return "NFS4ERR_STALE_CLIENTID";
	case NFS4ERR_OLD_STATEID: return "NFS4ERR_OLD_STATEID";
	case NFS4ERR_BAD_STATEID: return "NFS4ERR_BAD_STATEID";
	case NFS4ERR_SYMLINK: return "NFS4ERR_SYMLINK";
	case NFS4ERR_RESTOREFH: return "NFS4ERR_RESTOREFH";
	case NFS4ERR_ATTRNOTSUPP: return "NFS4ERR_ATTRNOTSUPP";
	case NFS4ERR_BADXDR: return "NFS4ERR_BADXDR";
	case NFS4ERR_BADOWNER: return "NFS4ERR_BADOWNER";
	case NFS4ERR_BADNAME: return "NFS4ERR_BADNAME";
	case NFS4ERR_OP_ILLEGAL: return "NFS4ERR_OP_ILLEGAL";
	case NFS4ERR_BADSESSION: return "NFS4ERR_BADSESSION";
	case NFS4ERR_BADSLOT: return "NFS4ERR_BADSLOT";
	case NFS4ERR_COMPLETE_ALREADY: return "NFS4ERR_COMPLETE_ALREADY";
	case NFS4ERR_SEQ_MISORDERED: return "NFS4ERR_SEQ_MISORDERED";
	case NFS4ERR_SEQUENCE_POS: return "NFS4ERR_SEQUENCE_POS";
	case NFS4ERR_REP_TOO_BIG: return "NFS4ERR_REP_TOO_BIG";
	case NFS4ERR_RETRY_UNCACHED_REP: return "NFS4ERR_RETRY_UNCACHED_REP";
	case NFS4ERR_TOO_MANY_OPS: return "NFS4ERR_TOO_MANY_OPS";
	case NFS4ERR_OP_NOT_IN_SESSION: return "NFS4ERR_OP_NOT_IN_SESSION";
	case NFS4ERR_CLIENTID_BUSY: return "NFS4ERR_CLIENTID_BUSY";
	case NFS4ERR_NOT_ONLY_OP: return "NFS4ERR_NOT_ONLY_OP";
	case NFS4ERR_SEQ_FALSE_RETRY: return "NFS4ERR_SEQ_FALSE_RETRY";
	case NFS4ERR_RESOURCE: return "NFS4ERR_RESOURCE";
	case NFS4ERR_WRONGSEC: return "NFS4ERR_WRONGSEC";
	case NFS4ERR_NXIO: return "NFS4ERR_NXIO";
	case NFS4ERR_MLINK: return "NFS4ERR_MLINK";
	case NFS4ERR_DQUOT: return "NFS4ERR_DQUOT";
	case NFS4ERR_BAD_COOKIE: return "NFS4ERR_BAD_COOKIE";
	case NFS4ERR_DENIED: return "NFS4ERR_DENIED";
	case NFS4ERR_SHARE_DENIED: return "NFS4ERR_SHARE_DENIED";
	case NFS4ERR_LOCKS_HELD: return "NFS4ERR_LOCKS_HELD";
	case NFS4ERR_OPENMODE: return "NFS4ERR_OPENMODE";
	case NFS4ERR_NO_GRACE: return "NFS4ERR_NO_GRACE";
	case NFS4ERR_GRACE: return "NFS4ERR_GRACE";
	case NFS4ERR_BAD_RANGE: return "NFS4ERR_BAD_RANGE";
	case NFS4ERR_NOT_SAME: return "NFS4ERR_NOT_SAME";
	case NFS4ERR_DEADLOCK: return "NFS4ERR_DEADLOCK";
	default: return NULL;
	}
}
