/* SPDX-License-Identifier: MIT */
/*
 * rpcrdma/nfs4.h - an NFSv4.1 server (RFC 8881) over the exports of an
 * NFSv3 server (<rpcrdma/nfs3.h>): same exports table, file handles,
 * credentials and open-file cache, for the RPC-over-RDMA server in
 * <rpcrdma/svc.h>.  rpcrdma_nfs4_server_dispatch() is the
 * rpcrdma_svc_dispatch_fn for program 100003 version 4.  Sessions have a
 * fore channel only (no backchannel, no delegations); see docs/nfs4.md for
 * what is served.
 */
#ifndef RPCRDMA_NFS4_H
#define RPCRDMA_NFS4_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include <rpcrdma/nfs3.h>
#include <rpcrdma/svc.h>

#ifdef __cplusplus
extern "C" {
#endif

/** RPC version of NFSv4 (program RPCRDMA_NFS3_PROGRAM, 100003). */
#define RPCRDMA_NFS4_VERSION 4u

struct rpcrdma_nfs4_server;

/** Settings of rpcrdma_nfs4_server_create(). */
struct rpcrdma_nfs4_config {
	uint32_t n4_max_payload; /* READ/WRITE bytes (maxread/maxwrite), default 1 MiB */
	FILE *n4_log;            /* NULL: stderr */
	int n4_verbose;          /* > 1: a line per COMPOUND */
	/* client records on disk (DIR/nfs4-clients, RFC 8881 8.4.2); NULL:
	 * none, and no grace period after a start */
	const char *n4_state_dir;
	/* grace period after a start, seconds: 0 the lease time,
	 * UINT32_MAX none */
	uint32_t n4_grace_sec;
	/* lease time, seconds (RFC 8881 8.3; the lease_time attribute):
	 * 0 is 90; else 10..3600 (others: -EINVAL) */
	uint32_t n4_lease_sec;
	bool n4_no_delegations;  /* grant no read delegation (RFC 8881 10.4) */
	/* client records at once (EXCHANGE_ID), from which every other
	 * table follows (rpcrdma_nfs4_limits()): as many sessions, 32 open
	 * states, 8 lock states and 8 read delegations per client, 2 client
	 * records on disk per client; allocated at create, about
	 * n4l_client_bytes (80 KiB) each once full.  0 is
	 * RPCRDMA_NFS4_CLIENTS_DEFAULT (128); else RPCRDMA_NFS4_CLIENTS_MIN..
	 * RPCRDMA_NFS4_CLIENTS_MAX (others: -EINVAL) */
	uint32_t n4_max_clients;
};

/** n4_max_clients: 0 is this; the range; the upper bound is what the
 *  delegation stateid's 16-bit index holds (8 per client). */
#define RPCRDMA_NFS4_CLIENTS_DEFAULT 128u
#define RPCRDMA_NFS4_CLIENTS_MIN 16u
#define RPCRDMA_NFS4_CLIENTS_MAX 8192u

/** The state tables of a server of n4_max_clients clients. */
struct rpcrdma_nfs4_limits {
	uint32_t n4l_clients;          /* client records */
	uint32_t n4l_sessions;         /* sessions, over all clients */
	uint32_t n4l_opens;            /* open states */
	uint32_t n4l_locks;            /* lock states (one descriptor each) */
	uint32_t n4l_delegations;      /* read delegations */
	uint32_t n4l_records;          /* client records kept for restarts */
	/* what one client may hold: today's figures (4, 1024, 256, 256),
	 * never more than a quarter of the table (at least 1) */
	uint32_t n4l_client_sessions, n4l_client_opens, n4l_client_locks,
		 n4l_client_delegations;
	uint64_t n4l_client_bytes;     /* memory of one client and its share of
					* every table, each session's slot reply
					* caches included (bytes) */
	uint64_t n4l_bytes;            /* all tables full (bytes) */
};

/**
 * rpcrdma_nfs4_limits - the table sizes and their memory for
 * @max_clients (0: RPCRDMA_NFS4_CLIENTS_DEFAULT) into @out, as
 * rpcrdma_nfs4_server_create() makes them.  Return: 0, -EINVAL (out of
 * range, @out NULL).
 */
int rpcrdma_nfs4_limits(uint32_t max_clients, struct rpcrdma_nfs4_limits *out);

/** Recovery counters of rpcrdma_nfs4_server_recovery(). */
struct rpcrdma_nfs4_recovery {
	bool n4r_in_grace;
	uint32_t n4r_loaded;          /* client records of the previous run */
	uint32_t n4r_pending;         /* of those, still without RECLAIM_COMPLETE */
	uint32_t n4r_records;         /* clients recorded in this run */
	uint64_t n4r_open_reclaims;   /* OPEN CLAIM_PREVIOUS granted */
	uint64_t n4r_lock_reclaims;   /* LOCK reclaims granted */
	uint64_t n4r_grace_refused;   /* NFS4ERR_GRACE answered */
	uint64_t n4r_no_grace;        /* NFS4ERR_NO_GRACE answered */
	uint64_t n4r_no_room;         /* clients left unrecorded: table full */
	uint64_t n4r_write_errors;    /* record file writes that failed */
};

/**
 * rpcrdma_nfs4_server_create - an NFSv4.1 server over the exports of @nfs3
 * (which must outlive it: reloads of @nfs3 are seen from the next call on).
 * @cfg: settings (copied), or NULL for the defaults.  With n4_state_dir,
 * the client records of the previous run are loaded and a grace period
 * starts when there are any (docs/nfs4.md "Restarts").
 * Return: 0, -EINVAL (@nfs3 or @out NULL), -ENOMEM, -EBADMSG (a record
 * file that cannot be read), -E2BIG (more records than the bound), the
 * -errno of creating the directory or reading the file.
 */
int rpcrdma_nfs4_server_create(struct rpcrdma_nfs3_server *nfs3,
			       const struct rpcrdma_nfs4_config *cfg,
			       struct rpcrdma_nfs4_server **out);

/**
 * rpcrdma_nfs4_server_recovery - the grace period and client record
 * counters (RFC 8881 8.4.2) into @out.  Return: 0, -EINVAL (NULL).
 */
int rpcrdma_nfs4_server_recovery(struct rpcrdma_nfs4_server *srv,
				 struct rpcrdma_nfs4_recovery *out);

/** Where the COMPOUNDs were served (rpcrdma_nfs4_server_stats()). */
struct rpcrdma_nfs4_stats {
	uint64_t n4s_transport_calls;  /* served on the transport thread */
	uint64_t n4s_transport_defers; /* tried there, sent to a worker */
	/* client IDs and sessions (RFC 8881 18.35.5, 2.10.8, 2.10.6.1.3.1):
	 * requests refused because they came from another principal than the
	 * client's, or from a connection not bound to the session */
	uint64_t n4s_clid_inuse;    /* EXCHANGE_ID, CREATE_SESSION: NFS4ERR_CLID_INUSE */
	uint64_t n4s_wrong_cred;    /* DESTROY_SESSION, DESTROY_CLIENTID,
				     * BIND_CONN_TO_SESSION: NFS4ERR_WRONG_CRED */
	uint64_t n4s_conn_unbound;  /* DESTROY_SESSION: NFS4ERR_CONN_NOT_BOUND_TO_SESSION */
	uint64_t n4s_false_retries; /* a slot's retry from another principal:
				     * NFS4ERR_SEQ_FALSE_RETRY */
};

/**
 * rpcrdma_nfs4_server_stats - the counters of @srv into @out (any
 * thread).  Return: 0, -EINVAL (NULL).
 */
int rpcrdma_nfs4_server_stats(struct rpcrdma_nfs4_server *srv,
			      struct rpcrdma_nfs4_stats *out);

/**
 * rpcrdma_nfs4_server_revoke_file - another lock manager (NLM) met a
 * conflict on the file @dev/@ino: the NFSv4.1 clients whose lease expired
 * (courtesy clients, docs/nfs4.md "Leases") and that hold locks of that
 * file lose all their state, so that a second try may succeed.  Clients
 * whose lease runs are not touched.  Any thread; may close descriptors.
 * @arg: the rpcrdma_nfs4_server (the shape of an NLM conflict hook).
 * Return: the number of clients expired (0: retrying cannot help).
 */
int rpcrdma_nfs4_server_revoke_file(void *arg, dev_t dev, ino_t ino);

/** rpcrdma_nfs4_server_destroy - free the server (NULL: no-op); no call may run. */
void rpcrdma_nfs4_server_destroy(struct rpcrdma_nfs4_server *srv);

/**
 * rpcrdma_nfs4_server_dispatch - rpcrdma_svc_dispatch_fn for NFS version 4
 * (@arg: the rpcrdma_nfs4_server): NULL and COMPOUND (RFC 8881 16.1,
 * 16.2) of minor version 1.  May be registered with
 * RPCRDMA_SVC_TRY_TRANSPORT: with rq_transport set, a COMPOUND that
 * needs no credential change and does not wait for the disk is served
 * there, any other is answered RPCRDMA_SVC_DEFER before any of its
 * operations ran (docs/nfs4.md "The transport thread").
 * Return: RPCRDMA_SVC_SUCCESS (every NFS-level error is inside the
 * COMPOUND result), RPCRDMA_SVC_DEFER (rq_transport set only),
 * RPCRDMA_SVC_PROC_UNAVAIL,
 * RPCRDMA_SVC_PROG_MISMATCH (another version), RPCRDMA_SVC_SYSTEM_ERR (the
 * result does not fit the reply buffer).
 */
int rpcrdma_nfs4_server_dispatch(struct rpcrdma_svc_req *req, void *arg);

/**
 * rpcrdma_nfs4_server_conn_has_state - rpcrdma_svc_conn_state_fn for
 * rpcrdma_svc_set_conn_state(): true when a session's back channel is
 * bound to connection @conn_id (CREATE_SESSION with
 * CREATE_SESSION4_FLAG_CONN_BACK_CHAN or BIND_CONN_TO_SESSION on it, RFC
 * 8881 18.36, 18.34), so that an idle-timeout does not cut the path of
 * its recalls.  A connection used as a fore channel only holds no state:
 * a SEQUENCE on a new connection binds that one (RFC 8881 2.10.3.1).
 * @arg: the rpcrdma_nfs4_server.  Any thread; does not block but for a
 * short lock.
 */
bool rpcrdma_nfs4_server_conn_has_state(uint32_t conn_id, void *arg);

/**
 * rpcrdma_nfs4_proc_names - "NULL", "COMPOUND" for
 * rpcrdma_svc_set_proc_names(); *@n gets 2.
 */
const char *const *rpcrdma_nfs4_proc_names(uint32_t *n);

/** rpcrdma_nfs4_stat_name - "NFS4ERR_NOENT" ... for a nfsstat4, or NULL. */
const char *rpcrdma_nfs4_stat_name(uint32_t status);

#ifdef __cplusplus
}
#endif
#endif /* RPCRDMA_NFS4_H */
