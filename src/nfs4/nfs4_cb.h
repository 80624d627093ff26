/* SPDX-License-Identifier: MIT */
/*
 * nfs4_cb.h - private to src/nfs4: the NFSv4.1 back channel (RFC 8881
 * 2.10.3.1, 18.36, 20) on the backchannel of the connection a session was
 * created or bound on: RPC-over-RDMA's (RFC 8167), or a TCP connection's
 * (ONC RPC calls in records on it, RFC 5531 11), through the service
 * layer's rpcrdma_svc_bc_* (src/svc/svc_bc.c).  The callback program's
 * encoders (CB_COMPOUND, CB_SEQUENCE, CB_RECALL) and the decoder of its
 * replies are pure functions; the table of back channels keeps, per
 * session, the connection's handle, the callback program, the one slot of
 * the back channel's slot table and whether the path is up.
 */
#ifndef RPCRDMA_NFS4_CB_H
#define RPCRDMA_NFS4_CB_H

#include <stdbool.h>
#include <stdint.h>

#include <rpcrdma/svc.h>
#include <rpcrdma/xdr.h>

struct nfs4_stateid;

/** Slots of a back channel's slot table the server uses (ca_maxrequests
 *  granted in csr_back_chan_attrs at most). */
#define NFS4_CB_SLOTS 1u
/** Operations of the server's CB_COMPOUNDs at most (CB_SEQUENCE + one). */
#define NFS4_CB_MAX_OPS 2u
/** Timeout of one callback (milliseconds): after it the path is down. */
#define NFS4_CB_TIMEOUT_MS 10000u

/* ---- encoders and decoder (RFC 8881 20.2, 20.9, 20.2 of CB_COMPOUND) ---- */

/**
 * nfs4_cb_put_compound_hdr - CB_COMPOUND4args up to its argarray count:
 * an empty tag, minorversion 1, @ident (callback_ident: ignored by
 * NFSv4.1 clients, RFC 8881 20.2.3, sent 0) and @nops.
 */
void nfs4_cb_put_compound_hdr(struct rpcrdma_xdr *xs, uint32_t ident, uint32_t nops);

/**
 * nfs4_cb_put_sequence - the CB_SEQUENCE operation (RFC 8881 20.9): its
 * opcode, the session, @seqid of @slot, @highest slot id, csa_cachethis
 * false and no referring call lists.
 */
void nfs4_cb_put_sequence(struct rpcrdma_xdr *xs, const uint8_t sid[16],
			  uint32_t seqid, uint32_t slot, uint32_t highest);

/**
 * nfs4_cb_put_recall - the CB_RECALL operation (RFC 8881 20.2): its
 * opcode, the delegation's stateid, @truncate and the file handle (@fh,
 * @fhlen bytes, at most NFS4_FHSIZE).
 */
void nfs4_cb_put_recall(struct rpcrdma_xdr *xs, const struct nfs4_stateid *sid,
			bool truncate, const uint8_t *fh, uint32_t fhlen);

/** What a CB_COMPOUND4res said. */
struct nfs4_cb_res {
	uint32_t cr_status;        /* the compound's status */
	uint32_t cr_nres;          /* results present */
	uint32_t cr_ops[NFS4_CB_MAX_OPS];
	uint32_t cr_stats[NFS4_CB_MAX_OPS];
	bool cr_have_seq;          /* a CB_SEQUENCE4resok was decoded */
	uint8_t cr_seq_sid[16];
	uint32_t cr_seq_seqid, cr_seq_slot, cr_seq_highest, cr_seq_target;
};

/**
 * nfs4_cb_decode_compound - a CB_COMPOUND4res of @len bytes at @p.
 * Return: 0; -EBADMSG when it is malformed (short, a tag over
 * NFS4_OPAQUE_LIMIT, more results than NFS4_CB_MAX_OPS, a result after a
 * failed one).
 */
int nfs4_cb_decode_compound(const uint8_t *p, size_t len, struct nfs4_cb_res *out);

/* ---- the table of back channels ---- */

/** How the table reaches the transport: the rpcrdma_svc_bc_* functions,
 *  or a unit test's.  co_connected may be NULL (the connection is taken
 *  to be there until a call fails with -ENOTCONN). */
struct nfs4_cb_ops {
	int (*co_get)(const struct rpcrdma_svc_req *req, struct rpcrdma_svc_bc **out);
	int (*co_call)(struct rpcrdma_svc_bc *bc, const struct rpcrdma_svc_bc_args *a,
		       uint32_t *xid);
	void (*co_put)(struct rpcrdma_svc_bc *bc);
	bool (*co_connected)(struct rpcrdma_svc_bc *bc);
};

/** The path of one back channel (RFC 8881 18.46.3, 2.10.3.1).  A channel
 *  whose connection closed (the client's side or the server's) is down
 *  from then on, whatever it was: the client learns it from SEQUENCE's
 *  sr_status_flags and binds a new connection (BIND_CONN_TO_SESSION). */
enum nfs4_cb_path {
	NFS4_CB_NONE = 0, /* not asked for, or not bound */
	NFS4_CB_PROBING,  /* bound; the CB_NULL probe has not answered yet */
	NFS4_CB_UP,
	NFS4_CB_DOWN,
};

struct nfs4_cb_table;
struct nfs4_sizes;

/**
 * nfs4_cb_table_create - an empty table of @sz's sz_sessions back
 * channels (NULL: the default's); @ops NULL: the transport's.
 * Return: 0 or -ENOMEM.
 */
int nfs4_cb_table_create(const struct nfs4_cb_ops *ops, const struct nfs4_sizes *sz,
			 struct nfs4_cb_table **out);
/**
 * nfs4_cb_live_fn - is session @sid live (@arg: the owner's state)?
 * Called with the table's lock held, so it must not call back into the
 * table (lock order: the table's lock, then the state's).
 */
typedef bool (*nfs4_cb_live_fn)(void *arg, const uint8_t sid[16]);

/**
 * nfs4_cb_set_live - the table asks @fn(@arg, sid) before it binds a back
 * channel for a session (nfs4_cb_bind()) and when it tells whether a
 * connection carries one (nfs4_cb_on_conn()): a session that is gone gets
 * no channel and its leftover channel holds no connection.  Without it
 * (tests of the table alone) every session counts as live.  Set before
 * the table is used.
 */
void nfs4_cb_set_live(struct nfs4_cb_table *t, nfs4_cb_live_fn fn, void *arg);

/** nfs4_cb_table_destroy - drop every channel's handle (NULL ignored);
 *  callbacks still in flight keep their channel until they end. */
void nfs4_cb_table_destroy(struct nfs4_cb_table *t);

/**
 * nfs4_cb_bind - the back channel of session @sid (of @clientid) becomes
 * the backchannel of the connection @req arrived on (CREATE_SESSION with
 * CREATE_SESSION4_FLAG_CONN_BACK_CHAN, RFC 8881 18.36.3; or
 * BIND_CONN_TO_SESSION for the back channel, 18.34.3), calling program
 * @prog (csa_cb_program) with AUTH_SYS (@authsys, the client offered it)
 * or AUTH_NONE, and a CB_NULL probe is sent.  A channel of the same
 * session before is replaced (its slot sequence kept), and so is a
 * leftover channel of a session that is gone (the table entry is the
 * session table's index).  A session that is not live
 * (nfs4_cb_set_live()) gets nothing: a CREATE_SESSION replayed after
 * DESTROY_SESSION (RFC 8881 18.36.4) must not take the entry from the
 * session that has it now, another client's.
 * Return: 0; -ENOTCONN (the connection is gone); -ENOMEM; -ENOSPC
 * (@sid is not one of the server's); -ENOENT (the session is gone: the
 * table is left as it was).  On another failure the session's path is
 * down.
 */
int nfs4_cb_bind(struct nfs4_cb_table *t, const struct rpcrdma_svc_req *req,
		 const uint8_t sid[16], uint64_t clientid, uint32_t prog, bool authsys);

/**
 * nfs4_cb_rebind - BIND_CONN_TO_SESSION for the back channel (RFC 8881
 * 18.34.3): session @sid's back channel moves to @req's connection with
 * the program and security it had, and is probed again.
 * Return: 0; -ENOENT (the session never had a back channel); the errors
 * of nfs4_cb_bind().
 */
int nfs4_cb_rebind(struct nfs4_cb_table *t, const struct rpcrdma_svc_req *req,
		   const uint8_t sid[16]);

/**
 * nfs4_cb_on_conn - is the back channel of some session bound to the
 * connection numbered @conn_id (rpcrdma_svc_req_conn_id() of the request
 * that bound it) and still live (nfs4_cb_set_live(): a session the state
 * dropped without DESTROY_SESSION, an expired or replaced client's, holds
 * no connection open)?  Any thread.  Return: false for @conn_id 0.
 */
bool nfs4_cb_on_conn(struct nfs4_cb_table *t, uint32_t conn_id);

/** nfs4_cb_unbind - session @sid is gone: its channel with it. */
void nfs4_cb_unbind(struct nfs4_cb_table *t, const uint8_t sid[16]);

/** nfs4_cb_path - the state of session @sid's back channel. */
enum nfs4_cb_path nfs4_cb_path(struct nfs4_cb_table *t, const uint8_t sid[16]);

/**
 * nfs4_cb_seq_flags - the back channel's bits of SEQUENCE's
 * sr_status_flags for session @sid of @clientid (RFC 8881 18.46.3):
 * SEQ4_STATUS_CB_PATH_DOWN_SESSION when this session's path is down,
 * SEQ4_STATUS_CB_PATH_DOWN as well when no session of the client has
 * a path up or being probed; 0 otherwise (a session that never asked for
 * a back channel is not reported down while another one of the client's
 * is up).
 */
uint32_t nfs4_cb_seq_flags(struct nfs4_cb_table *t, const uint8_t sid[16],
			   uint64_t clientid);

/**
 * nfs4_cb_done_fn - the end of a CB_RECALL: @status the nfsstat4 of
 * CB_RECALL (NFS4_OK: the client will return the delegation) or a
 * negative errno (-ETIMEDOUT, -ENOTCONN, -EBADMSG, -EREMOTEIO, -EPROTO
 * for CB_SEQUENCE failing).  Runs on a transport thread: must not block.
 */
typedef void (*nfs4_cb_done_fn)(void *arg, int status);

/**
 * nfs4_cb_recall - send CB_COMPOUND { CB_SEQUENCE, CB_RECALL } (RFC 8881
 * 20.2, 20.9) on a back channel of @clientid that is up (or being
 * probed), with the slot's next sequence id.  @done runs once when 0 is
 * returned.  Return: 0; -ENOTCONN (no usable back channel: the caller
 * treats the path as down); -EBUSY (every slot of it is in use: try
 * again later); -ENOMEM; the errors of rpcrdma_svc_bc_call().
 */
int nfs4_cb_recall(struct nfs4_cb_table *t, uint64_t clientid,
		   const struct nfs4_stateid *sid, bool truncate,
		   const uint8_t *fh, uint32_t fhlen, nfs4_cb_done_fn done, void *arg);

/** Counters (for the tests and the log). */
struct nfs4_cb_counts {
	uint64_t cc_probes, cc_probe_ok, cc_recalls, cc_recall_ok, cc_failures;
};
void nfs4_cb_counts(struct nfs4_cb_table *t, struct nfs4_cb_counts *out);

#endif /* RPCRDMA_NFS4_CB_H */
