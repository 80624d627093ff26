/* SPDX-License-Identifier: MIT */
/*
 * nfs4_internal.h - private to src/nfs4: the NFSv4.1 server (RFC 8881) on
 * the file-serving layer (src/fs, fs.h): its exports, file handles,
 * credentials, caches, and the operations on objects ("fs_vfs.c"), which
 * reach the export's backend.  Nothing here makes a system call on an
 * exported object.
 */
#ifndef RPCRDMA_NFS4_INTERNAL_H
#define RPCRDMA_NFS4_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <time.h>

#include <rpcrdma/nfs4.h>

#include "fs/fs.h"
#include "nfs4_prot.h"

_Static_assert(FS_UNSTABLE == UNSTABLE4 && FS_DATA_SYNC == DATA_SYNC4 &&
	       FS_FILE_SYNC == FILE_SYNC4,
	       "a decoded stable_how4 is an enum fs_stable_how");

/* ---- bounds (every table is allocated at creation, its size from
 * n4_max_clients: struct nfs4_sizes) ---- */

/** Operations in one COMPOUND before anything else is looked at. */
#define NFS4_COMPOUND_MAX_OPS 64u
/** Sessions of one client (at most; a quarter of the table when less). */
#define NFS4_MAX_CLIENT_SESSIONS 4u
/** Slots of a session's fore channel (ca_maxrequests granted at most). */
#define NFS4_MAX_SLOTS 32u
/** Reply bytes a slot keeps for a retry (ca_maxresponsesize_cached). */
#define NFS4_SLOT_CACHE_BYTES 2048u
/** Per client record, over all clients: sessions, open states, lock
 *  states (a lock-owner's locks on one file, one fs_lockd each), read
 *  delegations, client records on disk (this run's and the previous
 *  run's). */
#define NFS4_SESSIONS_PER_CLIENT 1u
#define NFS4_OPENS_PER_CLIENT 32u
#define NFS4_LOCKS_PER_CLIENT 8u
#define NFS4_DELEGS_PER_CLIENT 8u
#define NFS4_RECORDS_PER_CLIENT 2u
/** Bits of the session id's last word and of the delegation stateid's
 *  index word that hold the table index (the rest: a generation). */
#define NFS4_SESSION_INDEX_BITS 16u
#define NFS4_DELEG_INDEX_BITS 16u
/** Lease (seconds, lease_time attribute) by default (--lease). */
#define NFS4_LEASE_SECONDS 90u
/** Leases --lease accepts (seconds; the range of Linux's nfsd). */
#define NFS4_LEASE_MIN 10u
#define NFS4_LEASE_MAX 3600u
/** How long a client whose lease expired keeps its state while nothing
 *  conflicts with it (a courtesy client; Linux's nfsd: 24 hours). */
#define NFS4_COURTESY_MAX_SECONDS 86400u
/** Open states one client may hold (at most; a quarter of the table
 *  when less). */
#define NFS4_MAX_CLIENT_OPENS 1024u
/** Lock states one client may hold (idem). */
#define NFS4_MAX_CLIENT_LOCKS 256u
/** Delegations one client may hold (idem); beyond, its OPENs get none
 *  (OPEN_DELEGATE_NONE). */
#define NFS4_MAX_CLIENT_DELEGS 256u

_Static_assert(RPCRDMA_NFS4_CLIENTS_MAX * NFS4_SESSIONS_PER_CLIENT <=
	       1u << NFS4_SESSION_INDEX_BITS, "session index bits");
_Static_assert(RPCRDMA_NFS4_CLIENTS_MAX * NFS4_DELEGS_PER_CLIENT <=
	       1u << NFS4_DELEG_INDEX_BITS, "delegation index bits");
_Static_assert(RPCRDMA_NFS4_CLIENTS_MAX * NFS4_OPENS_PER_CLIENT < 0x80000000u &&
	       RPCRDMA_NFS4_CLIENTS_MAX * NFS4_LOCKS_PER_CLIENT < 0x80000000u,
	       "stateid index (NFS4_LOCK_IDX apart)");

/** The table sizes of one server (rpcrdma_nfs4_limits() of n4_max_clients). */
struct nfs4_sizes {
	uint32_t sz_clients, sz_sessions, sz_opens, sz_locks, sz_delegs, sz_records;
	/* one client's share: never more than a quarter of the table */
	uint32_t sz_client_sessions, sz_client_opens, sz_client_locks, sz_client_delegs;
};

/**
 * nfs4_sizes - the sizes for @clients client records (0: the default,
 * RPCRDMA_NFS4_CLIENTS_DEFAULT; no range check: the callers checked).
 */
void nfs4_sizes(uint32_t clients, struct nfs4_sizes *out);
/** The memory of full tables of @sz (each module its own). */
size_t nfs4_state_bytes(const struct nfs4_sizes *sz);
size_t nfs4_deleg_bytes(const struct nfs4_sizes *sz);
size_t nfs4_cb_table_bytes(const struct nfs4_sizes *sz);
size_t nfs4_recover_bytes(const struct nfs4_sizes *sz);
/** One host's share of a table of @n entries (nfs4_host_key()): client
 *  records, sessions, open and lock states of all the client IDs it
 *  makes together, so that client IDs made up in numbers from one
 *  machine cannot fill a table either. */
#define NFS4_HOST_SHARE(n) ((n) / 4u)
/** Longest COMPOUND tag accepted (bytes). */
#define NFS4_TAG_MAX 1024u
/** Longest attribute bitmap accepted (words). */
#define NFS4_BITMAP_MAX 8u
/** Words of the bitmaps the server encodes. */
#define NFS4_BITMAP_WORDS 3u
/** Longest component name (maxname). */
#define NFS4_NAME_MAX 255u
/** Longest symlink target accepted. */
#define NFS4_LINK_MAX 4096u

/* ---- nfs4_compound.c: the COMPOUND header (RFC 8881 16.2) ---- */

struct nfs4_compound_hdr {
	const uint8_t *ch_tag;
	uint32_t ch_taglen;
	uint32_t ch_minor;
	uint32_t ch_nops;
};

/**
 * nfs4_compound_decode_header - tag, minorversion and the operation count
 * of COMPOUND4args.  Return: NFS4_OK; NFS4ERR_BADXDR (short, or a tag
 * longer than NFS4_TAG_MAX: then ch_taglen is 0); NFS4ERR_MINOR_VERS_MISMATCH
 * (a minor version other than 1); NFS4ERR_TOO_MANY_OPS (more than
 * NFS4_COMPOUND_MAX_OPS operations).
 */
uint32_t nfs4_compound_decode_header(struct rpcrdma_xdr *args,
				     struct nfs4_compound_hdr *h);

/* ---- nfs4_transport.c: COMPOUNDs on the transport thread ---- */

/**
 * nfs4_transport_ok - may the COMPOUND of @req (its arguments at
 * rq_args' position, left there) be served on the transport thread
 * (rq_transport) with exports snapshot @sn?  Decided before any operation
 * runs, by a scan that changes nothing: SEQUENCE first, then only
 * operations that need no credential change and do not wait for the disk
 * (nfs4_transport.c).  False sends the whole COMPOUND to a worker.
 */
bool nfs4_transport_ok(const struct fs_snap *sn, const struct rpcrdma_svc_req *req);

/* ---- nfs4_state.c: clients, sessions, slots, open states ---- */

struct nfs4_state;
struct nfs4_cb_table;
struct nfs4_deleg_table;

/** A session's fore channel (channel_attrs4, RFC 8881 18.36). */
struct nfs4_chan_attrs {
	uint32_t ca_headerpadsize;
	uint32_t ca_maxrequestsize;
	uint32_t ca_maxresponsesize;
	uint32_t ca_maxresponsesize_cached;
	uint32_t ca_maxoperations;
	uint32_t ca_maxrequests;
	uint32_t ca_nrdma_ird;   /* 0 or 1 */
	uint32_t ca_rdma_ird;
};

/** CREATE_SESSION4resok, kept for a retry of the same csa_sequence. */
struct nfs4_cs_res {
	uint8_t cr_sessionid[NFS4_SESSIONID_SIZE];
	uint32_t cr_sequence;
	uint32_t cr_flags;
	struct nfs4_chan_attrs cr_fore;
	struct nfs4_chan_attrs cr_back;
};

/**
 * nfs4_state_create - the tables of one server: @boot (seconds, the
 * server's start) makes session ids and stateids of an earlier start
 * stale; client ids and session ids also carry at least 64 bits made with
 * keys drawn from getrandom(2) here, so they cannot be guessed and those of
 * an earlier start (or another server) are unknown (see nfs4_state.c).
 * @sz: the tables' sizes (NULL: nfs4_sizes(0)'s).
 * Return: 0; -ENOMEM; the -errno of getrandom(2) (-ENOSYS ...).
 */
int nfs4_state_create(uint32_t boot, uint32_t lease, const struct nfs4_sizes *sz,
		      struct nfs4_state **out);
/** nfs4_state_destroy - free every table (no call may run). */
void nfs4_state_destroy(struct nfs4_state *st);

/**
 * Who sends a request, as the client-ID and session rules see it (RFC 8881
 * 2.4.3, 2.10.8, 2.10.6.1.3.1, 18.35.5): the principal of the RPC
 * credential (nfs4_principal()) and the RDMA connection it came on.
 */
struct nfs4_who {
	uint64_t wh_principal; /* nfs4_principal() of the call's credential */
	uint32_t wh_conn;      /* rpcrdma_svc_req_conn_id() (0: no connection) */
	uint64_t wh_host;      /* nfs4_host_key() of the peer (0: none, no share) */
};

/**
 * nfs4_host_key - the host a peer address stands for, as the per-host
 * shares of the state tables count it: an IPv4 address (also IPv4-mapped
 * IPv6), or the /64 of an IPv6 address (one machine holds a whole /64:
 * SLAAC, privacy addresses), but a link-local address by its interface
 * identifier (fe80::/64 is every machine on the link).  Never 0 for AF_INET/AF_INET6; 0 for any
 * other family (no share applies).
 */
uint64_t nfs4_host_key(const struct sockaddr_storage *ss);

/**
 * nfs4_principal - the principal of the credential of call @m, as a keyed
 * 64-bit SipHash (key from getrandom(2) at nfs4_state_create()) of its
 * flavor and, for AUTH_SYS, uid, gid, the supplementary gids and the
 * machine name, in that order: everything of authsys_parms but the stamp
 * (RFC 5531 appendix A), which a client changes between calls.  Any other
 * flavor (AUTH_NONE) is one principal per flavor.  The peer's address is
 * not part of it (knfsd's same_creds() neither).  Two credentials are the
 * same principal when their values are equal; a peer cannot make another
 * credential hash alike without the key.
 */
uint64_t nfs4_principal(const struct nfs4_state *st, const struct rpcrdma_rpc_msg *m);

/** Result of EXCHANGE_ID. */
struct nfs4_exid_res {
	uint64_t er_clientid;
	uint32_t er_sequenceid;
	uint32_t er_flags;
};

/**
 * nfs4_exchange_id_as - RFC 8881 18.35.5, case by case, for a client with
 * owner @owner (@len bytes, at most NFS4_OPAQUE_LIMIT) and verifier @verf
 * sent by @who (its wh_principal becomes the record's principal).  A
 * confirmed record is never changed here: a new incarnation (case 5) or a
 * different principal on a record without state or with an expired lease
 * (case 3) gets a new unconfirmed record, and the confirmed one with its
 * state goes only when CREATE_SESSION confirms the new one.  At most one
 * unconfirmed record per owner: a new one replaces it (case 4).
 * Return: NFS4_OK; NFS4ERR_CLID_INUSE (case 3: another principal, and the
 * confirmed record has sessions, opens or locks in an unexpired lease; or
 * case 5 from another host (nfs4_host_key()) than the confirmed record's
 * while it has state in an unexpired lease: with AUTH_SYS the principal
 * is what any host can claim, so a new incarnation must come from the
 * old one's host until that lease runs out); NFS4ERR_RESOURCE also when
 * @who's host holds a quarter of the client table (NFS4_HOST_SHARE) already;
 * NFS4ERR_NOENT (case 7), NFS4ERR_NOT_SAME (case 8), NFS4ERR_PERM (case 9)
 * for EXCHGID4_FLAG_UPD_CONFIRMED_REC_A; NFS4ERR_RESOURCE when the client
 * table is full (no record to take back); NFS4ERR_INVAL for flags the
 * server refuses.
 */
uint32_t nfs4_exchange_id_as(struct nfs4_state *st, const struct nfs4_who *who,
			     const uint8_t verf[8],
			  const uint8_t *owner, uint32_t len, uint32_t flags,
			  struct nfs4_exid_res *res);

/**
 * nfs4_create_session_as - RFC 8881 18.36.4, sent by @who: the session is
 * bound to @who's connection.  @fore/@back: the client's channel
 * attributes; @res: the session (or, for a retry of the last
 * csa_sequence, the result given then).  csr_flags never has
 * CONN_BACK_CHAN here: the caller binds the back channel.  On an
 * unconfirmed record the session confirms it, and only then the confirmed
 * record of the same owner (the client's previous incarnation, RFC 8881
 * 18.35.5 cases 3 and 5) goes with its sessions, opens, locks and
 * stable-storage record.  Return: NFS4_OK; NFS4ERR_STALE_CLIENTID;
 * NFS4ERR_CLID_INUSE (@who is not the record's principal, or the
 * confirmed record it would replace has another principal and state in an
 * unexpired lease); NFS4ERR_DELAY (a request of that record still runs);
 * NFS4ERR_SEQ_MISORDERED; NFS4ERR_TOOSMALL (a fore channel too small to
 * carry a SEQUENCE); NFS4ERR_NOSPC (no session left);
 * NFS4ERR_SERVERFAULT (no memory for the reply cache).
 */
uint32_t nfs4_create_session_as(struct nfs4_state *st, const struct nfs4_who *who,
				uint64_t clientid,
			     uint32_t sequence, uint32_t flags,
			     const struct nfs4_chan_attrs *fore,
			     const struct nfs4_chan_attrs *back,
			     struct nfs4_cs_res *res);

struct nfs4_session;

/** What SEQUENCE decided. */
struct nfs4_seq_res {
	struct nfs4_session *sr_session; /* referenced while the compound runs */
	uint32_t sr_slot;
	uint32_t sr_highest_slotid;
	uint32_t sr_target_highest_slotid;
	uint32_t sr_status_flags;
	uint64_t sr_clientid;
	uint32_t sr_maxops;
	uint32_t sr_maxresp;
	/* a retry: the reply the slot keeps (copied out), or sr_uncached */
	bool sr_replay;
	bool sr_uncached;
	uint32_t sr_replay_len;
	uint8_t *sr_replay_buf; /* NFS4_SLOT_CACHE_BYTES, caller storage */
};

/**
 * nfs4_sequence_as - RFC 8881 18.46.4 and 2.10.6.1, for a request of @who:
 * find the session, check the slot and its sequence id, renew the
 * client's lease, bind @who's connection to the session (SP4_NONE: as
 * knfsd does).  A new request takes the slot (sr_session
 * referenced; the slot remembers @who's principal) until
 * nfs4_sequence_done(); a retry of the slot's last request by the same
 * principal gets its cached reply copied into sr_replay_buf (sr_replay),
 * or sr_uncached when it was not kept.  @nops: operations in the COMPOUND
 * (more than the session's ca_maxoperations: NFS4ERR_TOO_MANY_OPS, the
 * slot untouched).
 * Return: NFS4_OK; NFS4ERR_BADSESSION; NFS4ERR_BADSLOT;
 * NFS4ERR_TOO_MANY_OPS; NFS4ERR_SEQ_MISORDERED; NFS4ERR_SEQ_FALSE_RETRY
 * (the slot's sequence id from another principal than the request it
 * holds: RFC 8881 2.10.6.1.3.1, nothing of the cached reply given);
 * NFS4ERR_DELAY (the slot's request still runs).
 */
uint32_t nfs4_sequence_as(struct nfs4_state *st, const struct nfs4_who *who,
			  const uint8_t sid[16],
		       uint32_t seqid, uint32_t slot, uint32_t highest,
		       uint32_t nops, struct nfs4_seq_res *res);

/**
 * nfs4_sequence_done - end of the request that holds a slot: keep @len
 * bytes of its reply for a retry when @reply is not NULL and they fit
 * NFS4_SLOT_CACHE_BYTES, free the slot, drop the session's reference.
 */
void nfs4_sequence_done(struct nfs4_state *st, struct nfs4_session *se,
			uint32_t slot, const uint8_t *reply, uint32_t len);

/**
 * nfs4_destroy_session_as - RFC 8881 18.37, sent by @who.  @self: the
 * session of the COMPOUND's SEQUENCE, or NULL.  Destroying @self needs
 * nothing more (its SEQUENCE bound the connection); any other session
 * only from a connection bound to it (18.37.3) and from its client's
 * principal (2.10.8).  Return: NFS4_OK; NFS4ERR_BADSESSION;
 * NFS4ERR_WRONG_CRED (another principal); NFS4ERR_CONN_NOT_BOUND_TO_SESSION;
 * NFS4ERR_DELAY (another request is using the session).
 */
uint32_t nfs4_destroy_session_as(struct nfs4_state *st, const struct nfs4_who *who,
				 const uint8_t sid[16], const struct nfs4_session *self);

/**
 * nfs4_destroy_clientid_as - RFC 8881 18.50, sent by @who.  Return: NFS4_OK;
 * NFS4ERR_STALE_CLIENTID; NFS4ERR_WRONG_CRED (@who is not the record's
 * principal); NFS4ERR_CLIENTID_BUSY (it has sessions).
 */
uint32_t nfs4_destroy_clientid_as(struct nfs4_state *st, const struct nfs4_who *who,
				  uint64_t clientid);

/**
 * nfs4_bind_conn - the fore channel part of BIND_CONN_TO_SESSION (RFC 8881
 * 18.34.3), sent by @who: @who's connection is bound to session @sid.
 * Return: NFS4_OK; NFS4ERR_BADSESSION; NFS4ERR_WRONG_CRED (@who is not
 * the principal of the session's client, 2.10.8).
 */
uint32_t nfs4_bind_conn(struct nfs4_state *st, const struct nfs4_who *who,
			const uint8_t sid[16]);

/**
 * nfs4_reclaim_complete - RFC 8881 18.51: the client's own flag (its
 * record and the grace period: nfs4_recover_note()).  Return: NFS4_OK;
 * NFS4ERR_COMPLETE_ALREADY (a second global one); NFS4ERR_STALE_CLIENTID.
 */
uint32_t nfs4_reclaim_complete(struct nfs4_state *st, uint64_t clientid,
			       bool one_fs);

/** nfs4_session_check - is @sid a live session? NFS4_OK/NFS4ERR_BADSESSION. */
uint32_t nfs4_session_check(struct nfs4_state *st, const uint8_t sid[16]);

/**
 * nfs4_state_session_live - nfs4_session_check() as the back-channel
 * table asks it (nfs4_cb_set_live(); @st a struct nfs4_state): true when
 * @sid is a live session.  Takes the state's lock, never the table's.
 */
bool nfs4_state_session_live(void *st, const uint8_t sid[16]);

/*
 * The same for an in-process caller that has no RPC credential (unit
 * tests, the fuzzer): principal 0 (no credential hashes to it but by a
 * 2^-64 chance), no connection.
 */
#define NFS4_WHO_LOCAL (&(const struct nfs4_who){ .wh_principal = 0, .wh_conn = 0 })

static inline uint32_t nfs4_exchange_id(struct nfs4_state *st, const uint8_t verf[8],
					const uint8_t *owner, uint32_t len,
					uint32_t flags, struct nfs4_exid_res *res)
{
	return nfs4_exchange_id_as(st, NFS4_WHO_LOCAL, verf, owner, len, flags, res);
}

static inline uint32_t nfs4_create_session(struct nfs4_state *st, uint64_t clientid,
					   uint32_t sequence, uint32_t flags,
					   const struct nfs4_chan_attrs *fore,
					   const struct nfs4_chan_attrs *back,
					   struct nfs4_cs_res *res)
{
	return nfs4_create_session_as(st, NFS4_WHO_LOCAL, clientid, sequence, flags,
				      fore, back, res);
}

static inline uint32_t nfs4_sequence(struct nfs4_state *st, const uint8_t sid[16],
				     uint32_t seqid, uint32_t slot, uint32_t highest,
				     uint32_t nops, struct nfs4_seq_res *res)
{
	return nfs4_sequence_as(st, NFS4_WHO_LOCAL, sid, seqid, slot, highest, nops, res);
}

static inline uint32_t nfs4_destroy_session(struct nfs4_state *st, const uint8_t sid[16],
					    const struct nfs4_session *self)
{
	return nfs4_destroy_session_as(st, NFS4_WHO_LOCAL, sid, self);
}

static inline uint32_t nfs4_destroy_clientid(struct nfs4_state *st, uint64_t clientid)
{
	return nfs4_destroy_clientid_as(st, NFS4_WHO_LOCAL, clientid);
}

/* stateid4 */
struct nfs4_stateid {
	uint32_t si_seqid;
	uint8_t si_other[NFS4_OTHER_SIZE];
};

/**
 * nfs4_open_add - an open of the file @fh by @owner of @clientid with
 * @access/@deny: the owner's open state of that file upgraded (seqid + 1),
 * or a new one.  Share reservations are checked against the other
 * owners' opens of the file (RFC 8881 9.7).  Return: NFS4_OK;
 * NFS4ERR_STALE_CLIENTID; NFS4ERR_SHARE_DENIED; NFS4ERR_RESOURCE (the
 * open table is full).
 */
uint32_t nfs4_open_add(struct nfs4_state *st, uint64_t clientid,
		       const uint8_t *owner, uint32_t ownerlen,
		       const uint8_t *fh, uint32_t fhlen, uint32_t access,
		       uint32_t deny, struct nfs4_stateid *out);

/* What nfs4_open_add_prev() changed, for nfs4_open_undo(). */
struct nfs4_open_prev {
	bool pv_new;                 /* the open state was made by the call */
	uint32_t pv_seqid;           /* before (pv_new: none) */
	uint32_t pv_access, pv_deny;
	uint32_t pv_now_access;      /* after: the owner's union */
	uint32_t pv_now_deny;
};

/**
 * nfs4_open_add_prev - nfs4_open_add(), and what it changed into @pv
 * (NULL: not wanted), so that an OPEN a later check refuses (the layer's
 * share reservations, nfs4_share.c) takes it back.  Return: as
 * nfs4_open_add().
 */
uint32_t nfs4_open_add_prev(struct nfs4_state *st, uint64_t clientid,
			    const uint8_t *owner, uint32_t ownerlen,
			    const uint8_t *fh, uint32_t fhlen, uint32_t access,
			    uint32_t deny, struct nfs4_stateid *out,
			    struct nfs4_open_prev *pv);

/**
 * nfs4_open_undo - take back what nfs4_open_add_prev() did (@sid its
 * stateid, @pv what it reported): a new open state is freed, an upgraded
 * one gets its access, deny and seqid back; nothing when the state
 * changed since (its seqid is no longer @sid's).
 */
void nfs4_open_undo(struct nfs4_state *st, uint64_t clientid,
		    const struct nfs4_stateid *sid, const struct nfs4_open_prev *pv);

/**
 * nfs4_share_owner - the layer's owner of the share reservation of the
 * open state at index @idx, generation @gen (its stateid's "other"): one
 * per open-owner and file, as the open state (fs_share_owner()).
 */
static inline uint64_t nfs4_share_owner(uint32_t idx, uint32_t gen)
{
	return fs_share_owner(FS_SHARE_TAG_NFS4,
			      (uint64_t)(gen & 0xffffffu) << 32 | idx);
}

/**
 * nfs4_state_set_shares - the open states' share reservations are
 * mirrored in @srv's table (fs_share.c): every open state the table
 * drops (CLOSE, a client expired or destroyed, the table destroyed)
 * drops its reservation there (fs_share_drop(), under the state's lock).
 * NULL: none.
 */
void nfs4_state_set_shares(struct nfs4_state *st, struct rpcrdma_nfs3_server *srv);

/**
 * nfs4_stateid_special - is @sid the anonymous stateid (other all zero,
 * seqid 0, or 1: the current stateid taken as it), or the READ bypass one
 * (all ones) (RFC 8881 8.2.3)?
 */
bool nfs4_stateid_special(const struct nfs4_stateid *sid);

/**
 * nfs4_open_find - check a stateid for an I/O operation of @clientid on
 * @fh (RFC 8881 8.2.2): the special stateids (nfs4_stateid_special())
 * pass with the access no open of the file denies (9.7: OPEN4_SHARE_ACCESS_BOTH
 * less the union of their deny modes, deny-read not counted for the READ
 * bypass stateid), which the caller answers NFS4ERR_LOCKED when short;
 * an open state of that file: its share access in *@access.
 * Return: NFS4_OK; NFS4ERR_BAD_STATEID; NFS4ERR_OLD_STATEID (a seqid
 * other than 0 that is older than the state's).
 */
uint32_t nfs4_open_find(struct nfs4_state *st, uint64_t clientid,
			const struct nfs4_stateid *sid, const uint8_t *fh,
			uint32_t fhlen, uint32_t *access);

/**
 * nfs4_open_close - CLOSE (@access 0) or OPEN_DOWNGRADE of an open state.
 * Return: NFS4_OK with *@out the new stateid; NFS4ERR_BAD_STATEID;
 * NFS4ERR_OLD_STATEID; NFS4ERR_INVAL (a downgrade that is no downgrade).
 */
uint32_t nfs4_open_close(struct nfs4_state *st, uint64_t clientid,
			 const struct nfs4_stateid *sid, uint32_t access,
			 uint32_t deny, struct nfs4_stateid *out);

/** nfs4_open_test - TEST_STATEID of one open or lock stateid: NFS4_OK or
 *  BAD/OLD_STATEID. */
uint32_t nfs4_open_test(struct nfs4_state *st, uint64_t clientid,
			const struct nfs4_stateid *sid);

/**
 * nfs4_lock_owner - LOCK with a new lock-owner (open_to_lock_owner4):
 * the lock state of @owner on the file @fh (identity @dev, @ino: its
 * attributes' st_dev, st_ino), made from the open state @open_sid (which
 * must be @clientid's, of that file), or the owner's existing one.
 * *@ld: the owner's description of the file (fs_lock_open()): the table
 * keeps it for a new state (*@ld then holds nothing), else the caller
 * still owns it (fs_lock_close()); the owner's locks are taken on it (use
 * nfs4_lock_get()).  *@access: the open's share access.
 * Return: NFS4_OK; NFS4ERR_BAD_STATEID, NFS4ERR_OLD_STATEID (the open
 * stateid); NFS4ERR_RESOURCE (the table full, or the
 * client's share of it taken).
 */
uint32_t nfs4_lock_owner(struct nfs4_state *st, uint64_t clientid,
			 const struct nfs4_stateid *open_sid,
			 const uint8_t *owner, uint32_t ownerlen,
			 const uint8_t *fh, uint32_t fhlen, dev_t dev, ino_t ino,
			 struct fs_lockd *ld, struct nfs4_stateid *out,
			 uint32_t *access);
/**
 * nfs4_lock_get - a lock stateid of @clientid on @fh: *@out another
 * reference to the owner's description (fs_lock_dup(); the caller
 * closes it with fs_lock_close(); its locks are the owner's), *@access
 * the open's share access.  Return: NFS4_OK; NFS4ERR_BAD_STATEID;
 * NFS4ERR_OLD_STATEID; NFS4ERR_RESOURCE (no reference to be had).
 */
uint32_t nfs4_lock_get(struct nfs4_state *st, uint64_t clientid,
		       const struct nfs4_stateid *sid, const uint8_t *fh,
		       uint32_t fhlen, struct fs_lockd *out, uint32_t *access);
/**
 * nfs4_lock_find_owner - LOCKT: another reference to @owner's description
 * of @fh in *@out (the caller closes it), or NFS4ERR_BAD_STATEID (*@out
 * holds nothing) when the owner holds no state there; NFS4ERR_RESOURCE.
 */
uint32_t nfs4_lock_find_owner(struct nfs4_state *st, uint64_t clientid,
			      const uint8_t *owner, uint32_t ownerlen,
			      const uint8_t *fh, uint32_t fhlen, struct fs_lockd *out);
/** nfs4_lock_bump - a successful LOCK or LOCKU: the state's seqid + 1. */
uint32_t nfs4_lock_bump(struct nfs4_state *st, uint64_t clientid,
			const struct nfs4_stateid *sid, struct nfs4_stateid *out);
/** nfs4_lock_free - FREE_STATEID of a lock stateid: its description
 *  closed (fs_lock_close()), which releases whatever the owner still
 *  held.  NFS4_OK or BAD/OLD. */
uint32_t nfs4_lock_free(struct nfs4_state *st, uint64_t clientid,
			const struct nfs4_stateid *sid);

/** nfs4_open_writers - has anyone @fh open for writing (share access
 *  WRITE)? */
bool nfs4_open_writers(struct nfs4_state *st, const uint8_t *fh, uint32_t fhlen);

/** Counters for the tests and the log. */
struct nfs4_state_counts {
	uint32_t sc_clients, sc_sessions, sc_opens, sc_locks;
	uint32_t sc_courtesy;   /* clients whose lease expired, state kept */
	uint64_t sc_revoked;    /* courtesy clients expired by a conflict */
	uint64_t sc_reaped;     /* records freed by nfs4_state_sweep() or
				 * taken back for a new client */
	/* refusals of issue 33 finding 5 (rpcrdma_nfs4_stats) */
	uint64_t sc_clid_inuse;    /* NFS4ERR_CLID_INUSE */
	uint64_t sc_wrong_cred;    /* NFS4ERR_WRONG_CRED */
	uint64_t sc_conn_unbound;  /* NFS4ERR_CONN_NOT_BOUND_TO_SESSION */
	uint64_t sc_false_retries; /* NFS4ERR_SEQ_FALSE_RETRY */
};
void nfs4_state_counts(struct nfs4_state *st, struct nfs4_state_counts *out);

/*
 * Leases (RFC 8881 8.3) and courtesy clients.  A client's lease is
 * renewed by every SEQUENCE (and EXCHANGE_ID, CREATE_SESSION).  When it
 * has not been renewed for the lease time the client is a courtesy
 * client: it keeps its sessions, opens, locks and delegations, and comes
 * back as if nothing happened when its next SEQUENCE arrives before a
 * conflict.  A conflicting request of another client (an OPEN's share
 * reservation, a LOCK, an OPEN for writing or an NFSv3 change against a
 * delegation, an NLM LOCK through rpcrdma_nfs4_server_revoke_file())
 * expires the courtesy client: the client record goes with all its state
 * and its stable-storage record (nfs4_recover.c), its sessions with it,
 * so its next SEQUENCE is NFS4ERR_BADSESSION and its CREATE_SESSION
 * NFS4ERR_STALE_CLIENTID (what Linux's nfsd does; RFC 8881 8.4.3: the
 * client learns it lost its lease and recovers, its locks lost).
 */

/**
 * nfs4_state_revoke_file - a request of @except (0: none, an NLM or
 * NFSv3 caller) met a conflict on the file @dev/@ino: every courtesy
 * client (lease expired, no request of it running, not @except) that
 * holds a lock state on that file is expired with all its state (its
 * descriptions closed, so its locks are dropped).  Counted in
 * sc_revoked.  Return: the number of clients expired (0: nothing to
 * retry).
 */
uint32_t nfs4_state_revoke_file(struct nfs4_state *st, uint64_t except,
				dev_t dev, ino_t ino);

/**
 * nfs4_state_expire_courtesy - the delegation of @clientid conflicts with
 * another client's request: expire @clientid when it is a courtesy client
 * (its delegations go through the forget hook).  Return: true when it was
 * expired; false for a live client (recall it) or one not known.
 */
bool nfs4_state_expire_courtesy(struct nfs4_state *st, uint64_t clientid);

/**
 * nfs4_state_sweep - the periodic pass (nfs4_server.c's lease thread):
 * free unconfirmed client records whose lease expired and courtesy
 * clients expired more than NFS4_COURTESY_MAX_SECONDS ago (their records
 * dropped through the forget hook).  Return: the records freed.
 */
uint32_t nfs4_state_sweep(struct nfs4_state *st);

/** nfs4_state_lease - the lease time of @st in seconds. */
uint32_t nfs4_state_lease(const struct nfs4_state *st);

/* ---- nfs4_recover.c: client records on disk, the grace period
 * (RFC 8881 8.4.2, 18.51) ---- */

struct nfs4_recover;
struct nfs4_compound;

/** Counters of nfs4_recover_stats(). */
struct nfs4_recover_stats {
	uint32_t rs_loaded;          /* records of the previous run */
	uint32_t rs_pending;         /* of those, without RECLAIM_COMPLETE yet */
	uint32_t rs_records;         /* clients recorded in this run */
	bool rs_in_grace;
	uint64_t rs_open_reclaims;   /* OPEN CLAIM_PREVIOUS granted */
	uint64_t rs_lock_reclaims;   /* LOCK reclaims granted */
	uint64_t rs_grace_refused;   /* NFS4ERR_GRACE answered */
	uint64_t rs_no_grace;        /* NFS4ERR_NO_GRACE answered */
	uint64_t rs_no_room;         /* clients not recorded: table full */
	uint64_t rs_writes, rs_write_errors; /* the file rewritten */
};

/** What nfs4_recover_note() is told. */
enum nfs4_recover_event {
	NFS4_REC_OPEN,             /* an OPEN granted (not a reclaim) */
	NFS4_REC_OPEN_RECLAIM,     /* an OPEN CLAIM_PREVIOUS granted */
	NFS4_REC_LOCK_RECLAIM,     /* a LOCK reclaim granted */
	NFS4_REC_RECLAIM_COMPLETE, /* a global RECLAIM_COMPLETE */
	NFS4_REC_FORGET,           /* the server dropped the client */
};

/** nfs4_mono_sec - CLOCK_MONOTONIC seconds, the "now" of src/nfs4
 *  (leases, delegations, the grace period). */
time_t nfs4_mono_sec(void);
/** nfs4_clock_advance - unit tests: move nfs4_mono_sec() on by @sec
 *  seconds for the whole process (never back). */
void nfs4_clock_advance(uint32_t sec);

/**
 * nfs4_recover_create - the records of @dir/nfs4-clients (@dir created
 * 0700, and its parents 0755, when missing; NULL: nothing on disk, no
 * grace period) and a grace
 * period of @grace seconds from @now (0: none; the loaded records are then
 * dropped).  With no record loaded there is no grace period.  @sz: the
 * table's size (sz_records; NULL: the default's).  @log: where
 * the end of the grace period is told (NULL: stderr).
 * Return: 0; -EBADMSG (a record file that is truncated, of another
 * version, with a bad record length, a repeated owner or a bad sum);
 * -E2BIG (more than @sz's sz_records records); -ENOMEM; the -errno of
 * mkdir/open/read.
 */
int nfs4_recover_create(const char *dir, uint32_t grace, FILE *log, time_t now,
			const struct nfs4_sizes *sz, struct nfs4_recover **out);
/** nfs4_recover_destroy - free @rc (NULL: no-op); the file stays. */
void nfs4_recover_destroy(struct nfs4_recover *rc);

/**
 * nfs4_recover_parse - call @fn for each owner (1..NFS4_OPAQUE_LIMIT
 * bytes) of the record file image @buf (@len bytes).  Return: 0; -EBADMSG;
 * -E2BIG; what @fn returned (not 0: the walk stops).
 */
int nfs4_recover_parse(const uint8_t *buf, size_t len,
		       int (*fn)(void *arg, const uint8_t *owner, uint32_t len),
		       void *arg);

/**
 * nfs4_recover_check - may the client with owner @owner (@len bytes) take
 * a lock or an open at @now (RFC 8881 8.4.2.1, 18.16.4, 18.10.4)?
 * @reclaim: OPEN CLAIM_PREVIOUS or LOCK with reclaim.
 * Return: NFS4_OK; NFS4ERR_GRACE (not a reclaim, in the grace period);
 * NFS4ERR_NO_GRACE (a reclaim outside it, or from a client that has no
 * record of the previous run or sent RECLAIM_COMPLETE).
 */
uint32_t nfs4_recover_check(struct nfs4_recover *rc, const uint8_t *owner,
			    uint32_t len, bool reclaim, time_t now);
/**
 * nfs4_recover_note - @ev happened to the client with owner @owner:
 * record it (OPEN, RECLAIM_COMPLETE; the latter also ends its reclaims),
 * count a reclaim, or remove its record (FORGET).  Only memory changes:
 * nfs4_recover_flush() writes the file.  Safe under the state table lock.
 */
void nfs4_recover_note(struct nfs4_recover *rc, const uint8_t *owner,
		       uint32_t len, enum nfs4_recover_event ev);
/** nfs4_recover_count_grace - one more NFS4ERR_GRACE answered (for a
 *  cluster grace: rs_grace_refused). */
void nfs4_recover_count_grace(struct nfs4_recover *rc);

/** nfs4_recover_in_grace - is the grace period on at @now (ends it when due)? */
bool nfs4_recover_in_grace(struct nfs4_recover *rc, time_t now);
/** nfs4_recover_pending - has the table changed since the last write? */
bool nfs4_recover_pending(struct nfs4_recover *rc);
/**
 * nfs4_recover_flush - when the table changed, rewrite the file (a
 * temporary, fsync, rename, fsync of the directory) with the server's
 * identity on the calling thread.  Return: 0; the -errno of the write
 * (logged, counted, tried again at the next flush).
 */
int nfs4_recover_flush(struct nfs4_recover *rc);
/** nfs4_recover_stats - the counters at @now. */
void nfs4_recover_stats(struct nfs4_recover *rc, time_t now,
			struct nfs4_recover_stats *out);

/**
 * nfs4_state_set_forget - @fn(@arg, clientid, owner, len) is called
 * (under the table lock: @fn may take the delegation table's lock, never
 * the state's) for every client record the table drops.
 */
void nfs4_state_set_forget(struct nfs4_state *st,
			   void (*fn)(void *arg, uint64_t clientid, const uint8_t *owner,
				      uint32_t len),
			   void *arg);
/**
 * nfs4_client_owner - the client owner of @clientid into @buf
 * (NFS4_OPAQUE_LIMIT bytes), its length in *@len.
 * Return: NFS4_OK; NFS4ERR_STALE_CLIENTID.
 */
uint32_t nfs4_client_owner(struct nfs4_state *st, uint64_t clientid,
			   uint8_t *buf, uint32_t *len);

/**
 * nfs4_grace_gate - OPEN and LOCK (RFC 8881 8.4.2.1): nfs4_recover_check()
 * for the COMPOUND's client.  Return: NFS4_OK, NFS4ERR_GRACE,
 * NFS4ERR_NO_GRACE, NFS4ERR_STALE_CLIENTID.
 */
uint32_t nfs4_grace_gate(struct nfs4_compound *cp, bool reclaim);

/**
 * nfs4_grace_cluster - is another gateway of the current handle's export's
 * cluster in its grace period (fs_cluster_grace())?  Return: NFS4_OK (no,
 * or no export handle); NFS4ERR_GRACE (yes, or the backend cannot tell
 * now), counted as refused in grace.
 */
uint32_t nfs4_grace_cluster(struct nfs4_compound *cp);
/** nfs4_grace_note - nfs4_recover_note() for the COMPOUND's client. */
void nfs4_grace_note(struct nfs4_compound *cp, enum nfs4_recover_event ev);

/* ---- nfs4_server.c ---- */

struct rpcrdma_nfs4_server {
	struct rpcrdma_nfs3_server *s4_nfs3;
	struct nfs4_state *s4_state;
	struct nfs4_recover *s4_recover;
	struct nfs4_cb_table *s4_cb;   /* back channels (nfs4_cb.c) */
	struct nfs4_deleg_table *s4_deleg; /* delegations (nfs4_deleg.c) */
	bool s4_no_deleg;              /* --no-delegations */
	uint32_t s4_lease;             /* seconds (--lease) */
	struct nfs4_sizes s4_sizes;    /* the tables' (n4_max_clients) */
	/* the lease thread: nfs4_state_sweep() and record flushes */
	pthread_t s4_lease_thread;
	bool s4_lease_running;
	bool s4_lease_stop;            /* under s4_lease_lock */
	bool s4_lease_ready;           /* the thread waits: under s4_lease_lock */
	bool s4_lease_kick;            /* flush the records now: idem */
	pthread_mutex_t s4_lease_lock;
	pthread_cond_t s4_lease_cond;
	uint32_t s4_boot;
	uint32_t s4_max_payload;
	uint8_t s4_scope[16];
	FILE *s4_log;
	int s4_verbose;
	struct timespec s4_start; /* pseudo file system times */
	_Atomic uint64_t s4_transport_calls;  /* COMPOUNDs served on the transport thread */
	_Atomic uint64_t s4_transport_defers; /* COMPOUNDs tried there, sent to a worker */
	/* the connection number of a request: NULL is rpcrdma_svc_req_conn_id()
	 * (unit tests set their own, the harness having no connections) */
	uint32_t (*s4_conn_id)(const struct rpcrdma_svc_req *req);
};

/* ---- the current file handle ---- */

/*
 * Pseudo file system handles (RFC 8881 7.3): the directories above the
 * exports.  Byte 0 is NFS4_PSEUDO_FH_VERSION (never FS_FH_VERSION),
 * byte 1 the depth, bytes 2-3 the id of an export whose path passes
 * through the node, bytes 4-7 the server's start (so a restart makes
 * them stale).
 */
#define NFS4_PSEUDO_FH_VERSION 0x84u
#define NFS4_PSEUDO_FH_LEN 8u

struct nfs4_fh {
	uint32_t fh_len;                /* 0: no file handle */
	bool fh_pseudo;
	uint32_t fh_depth;              /* pseudo: components of the path */
	unsigned fh_xi;                 /* the export's index in the table */
	uint8_t fh_data[NFS4_FHSIZE];
};

/* One COMPOUND being served. */
struct nfs4_compound {
	struct rpcrdma_nfs4_server *cp_srv;
	struct rpcrdma_svc_req *cp_req;
	struct rpcrdma_xdr *cp_args;
	struct rpcrdma_xdr *cp_res;
	struct fs_snap *cp_snap;
	struct nfs4_fh cp_cur;
	struct nfs4_fh cp_saved;
	struct nfs4_session *cp_session;
	uint8_t cp_sid[NFS4_SESSIONID_SIZE]; /* cp_session's id */
	uint32_t cp_slot;
	uint64_t cp_clientid;
	uint32_t cp_opidx;
	bool cp_keep_body;   /* the failing op encodes a body (SETATTR) */
	struct fs_call cp_c; /* the file system side of one operation */
};

/**
 * nfs4_who_of - *@who for the request of @cp: nfs4_principal() of its
 * credential, and its connection's number (cp_srv->s4_conn_id).
 */
void nfs4_who_of(const struct nfs4_compound *cp, struct nfs4_who *who);

/**
 * nfs4_op_begin - before an operation touches the file system object of
 * the current handle: the export, the caller's options and identity.
 * @modifies: the operation changes the file system (NFS4ERR_ROFS on a
 * ro entry; on a sync entry on a disk it sets c_commit, so that
 * fs_commit_dir() and fs_commit_obj() commit the change before the
 * reply).  Return: NFS4_OK; NFS4ERR_NOFILEHANDLE; NFS4ERR_ACCESS (the
 * peer is not listed, or AUTH_NONE where it is refused); NFS4ERR_ROFS.
 */
uint32_t nfs4_op_begin(struct nfs4_compound *cp, const struct nfs4_fh *fh,
		       bool modifies);

/** nfs4_errno - an nfsstat4 for a negative errno. */
uint32_t nfs4_errno(int err);

/**
 * nfs4_fh_set_real - @fh becomes the handle of @name in directory @dir
 * ("": @dir itself) in export @xi, the export of the operation's call
 * (nfs4_op_begin() done).  Return: NFS4_OK or the nfsstat4 of fs_fh_of().
 */
uint32_t nfs4_fh_set_real(struct nfs4_compound *cp, struct nfs4_fh *fh,
			  unsigned xi, struct fs_fentry *dir, const char *name);

/* ---- nfs4_attr.c: fattr4 (RFC 8881 5) ---- */

/** The bitmap of the attributes the server supports. */
void nfs4_supported_attrs(uint32_t bm[NFS4_BITMAP_WORDS]);

/** What an attribute encoder needs to know about one object. */
struct nfs4_attr_src {
	const struct stat *as_st;
	const struct rpcrdma_nfs3_export *as_exp; /* NULL: pseudo node */
	const struct nfs4_fh *as_fh;              /* for FATTR4_FILEHANDLE */
	/* for the file system's counts (fs_statfs() of an object on it), or
	 * as_fe NULL: none (zero) */
	struct fs_call *as_call;
	struct fs_fentry *as_fe;
	uint32_t as_max_payload;
	uint32_t as_lease;     /* lease_time (seconds; 0: NFS4_LEASE_SECONDS) */
	uint32_t as_rdattr_error;
	uint64_t as_mounted_on;  /* mounted_on_fileid */
};

/**
 * nfs4_encode_fattr - a fattr4 of the requested attributes (@req, @nreq
 * words) the server supports: the bitmap of those returned, then their
 * values in bit order (RFC 8881 5.6-5.8).  Return: NFS4_OK, or
 * NFS4ERR_RESOURCE when @xs ran out of room (its error flag set).
 */
uint32_t nfs4_encode_fattr(struct rpcrdma_xdr *xs, const uint32_t *req,
			   uint32_t nreq, const struct nfs4_attr_src *src);

/** nfs4_get_bitmap - a bitmap4 of at most NFS4_BITMAP_MAX words (more
 *  sets the stream's error); words past @max are dropped. */
uint32_t nfs4_get_bitmap(struct rpcrdma_xdr *xs, uint32_t *bm, uint32_t max);
/** nfs4_put_bitmap - a bitmap4 of @n words, trailing zero words dropped. */
void nfs4_put_bitmap(struct rpcrdma_xdr *xs, const uint32_t *bm, uint32_t n);

/** Attributes a client sets (SETATTR, CREATE, OPEN). */
struct nfs4_sattr {
	struct fs_sattr sa3;
	uint32_t sa_set[NFS4_BITMAP_WORDS]; /* the attributes present */
};

/**
 * nfs4_decode_sattr - a fattr4 of settable attributes (size, mode, owner,
 * owner_group, time_access_set, time_modify_set).  Return: NFS4_OK;
 * NFS4ERR_BADXDR; NFS4ERR_ATTRNOTSUPP (an attribute the server does not
 * support); NFS4ERR_INVAL (a read-only one); NFS4ERR_BADOWNER (an owner
 * that is no number nor a known name).
 */
uint32_t nfs4_decode_sattr(struct rpcrdma_xdr *xs, struct nfs4_sattr *sa);

/** nfs4_ftype - nfs_ftype4 of @mode. */
uint32_t nfs4_ftype(mode_t mode);
/** nfs4_change - the change attribute of @st (ctime in nanoseconds). */
uint64_t nfs4_change(const struct stat *st);

/* ---- the operations: each decodes its arguments from cp_args, encodes
 * its result body (after the status) into cp_res and returns its status ---- */
typedef uint32_t (*nfs4_op_fn)(struct nfs4_compound *cp);

/* nfs4_session_ops.c */
uint32_t nfs4_op_exchange_id(struct nfs4_compound *cp);
uint32_t nfs4_op_create_session(struct nfs4_compound *cp);
uint32_t nfs4_op_destroy_session(struct nfs4_compound *cp);
uint32_t nfs4_op_destroy_clientid(struct nfs4_compound *cp);
uint32_t nfs4_op_reclaim_complete(struct nfs4_compound *cp);
uint32_t nfs4_op_bind_conn(struct nfs4_compound *cp);
uint32_t nfs4_op_test_stateid(struct nfs4_compound *cp);
uint32_t nfs4_op_free_stateid(struct nfs4_compound *cp);
/* nfs4_fh_ops.c */
uint32_t nfs4_op_putrootfh(struct nfs4_compound *cp);
uint32_t nfs4_op_putfh(struct nfs4_compound *cp);
uint32_t nfs4_op_getfh(struct nfs4_compound *cp);
uint32_t nfs4_op_savefh(struct nfs4_compound *cp);
uint32_t nfs4_op_restorefh(struct nfs4_compound *cp);
uint32_t nfs4_op_lookup(struct nfs4_compound *cp);
uint32_t nfs4_op_lookupp(struct nfs4_compound *cp);
uint32_t nfs4_op_getattr(struct nfs4_compound *cp);
uint32_t nfs4_op_access(struct nfs4_compound *cp);
uint32_t nfs4_op_secinfo_no_name(struct nfs4_compound *cp);
uint32_t nfs4_op_setattr(struct nfs4_compound *cp);
/* nfs4_io_ops.c */
uint32_t nfs4_op_open(struct nfs4_compound *cp);
uint32_t nfs4_op_close(struct nfs4_compound *cp);
uint32_t nfs4_op_open_downgrade(struct nfs4_compound *cp);
uint32_t nfs4_op_read(struct nfs4_compound *cp);
uint32_t nfs4_op_write(struct nfs4_compound *cp);
uint32_t nfs4_op_commit(struct nfs4_compound *cp);
/**
 * nfs4_special_write - may WRITE or SETATTR of the size with a special
 * stateid (nfs4_stateid_special(); @access what nfs4_open_find() gave for
 * it) change the current file?  Other clients' read delegations of it are
 * recalled first, as an OPEN for writing recalls them (RFC 8881 10.4.4).
 * Return: NFS4_OK; NFS4ERR_LOCKED (an open of the file denies writing,
 * 8.2.3, 9.7); NFS4ERR_DELAY (a delegation is being recalled).
 */
uint32_t nfs4_special_write(struct nfs4_compound *cp, uint32_t access);
/* nfs4_deleg_ops.c */
uint32_t nfs4_op_delegreturn(struct nfs4_compound *cp);
/* nfs4_lock_ops.c */
uint32_t nfs4_op_lock(struct nfs4_compound *cp);
uint32_t nfs4_op_lockt(struct nfs4_compound *cp);
uint32_t nfs4_op_locku(struct nfs4_compound *cp);
/* nfs4_dir_ops.c */
uint32_t nfs4_op_create(struct nfs4_compound *cp);
uint32_t nfs4_op_remove(struct nfs4_compound *cp);
uint32_t nfs4_op_rename(struct nfs4_compound *cp);
uint32_t nfs4_op_link(struct nfs4_compound *cp);
uint32_t nfs4_op_readlink(struct nfs4_compound *cp);
uint32_t nfs4_op_readdir(struct nfs4_compound *cp);

/* helpers shared by the operations (nfs4_fh_ops.c) */

/** nfs4_get_stateid - a stateid4. */
void nfs4_get_stateid(struct rpcrdma_xdr *xs, struct nfs4_stateid *sid);
void nfs4_put_stateid(struct rpcrdma_xdr *xs, const struct nfs4_stateid *sid);
/**
 * nfs4_get_component - a component4 into @n (NUL-terminated).
 * Return: NFS4_OK; NFS4ERR_BADXDR (longer than FS_WIRE_NAME_MAX);
 * NFS4ERR_INVAL (empty); NFS4ERR_NAMETOOLONG (over NFS4_NAME_MAX);
 * NFS4ERR_BADNAME ("/" or NUL inside, "." or "..").
 */
uint32_t nfs4_get_component(struct rpcrdma_xdr *xs, struct fs_name *n);
/**
 * nfs4_put_change_info - change_info4 of directory @dir: @before, then
 * its attributes now (fs_getattr(); when that fails, @before again and
 * atomic false).
 */
void nfs4_put_change_info(struct rpcrdma_xdr *xs, struct fs_call *c,
			  const struct stat *before, struct fs_fentry *dir);
/**
 * nfs4_cur_dir - the current handle as a directory for an operation
 * (nfs4_op_begin() done): the entry through the directory cache.
 * Return: NFS4_OK; NFS4ERR_NOTDIR; NFS4ERR_STALE ...
 */
uint32_t nfs4_cur_dir(struct nfs4_compound *cp, const struct nfs4_fh *fh,
		      struct fs_fentry *local, struct fs_fentry **fep,
		      struct stat *st);
/**
 * nfs4_cur_file - the current handle's regular file for READ, WRITE,
 * COMMIT, LOCK, LOCKT and LOCKU (nfs4_op_begin() with @modifies, then the
 * open-file cache).
 * Return: NFS4_OK; NFS4ERR_NOFILEHANDLE; NFS4ERR_ISDIR (a directory or a
 * pseudo node), NFS4ERR_SYMLINK, NFS4ERR_WRONG_TYPE (any other type:
 * RFC 8881 18.22.4, 18.32.4, 18.3.4, 18.10.4); nfs4_op_begin()'s and
 * nfs4_cur_obj()'s errors.
 */
uint32_t nfs4_cur_file(struct nfs4_compound *cp, bool modifies,
		       struct fs_fentry *local, struct fs_fentry **fep,
		       struct stat *st);
/** nfs4_cur_obj - the current handle's object through the open-file cache. */
uint32_t nfs4_cur_obj(struct nfs4_compound *cp, const struct nfs4_fh *fh,
		      struct fs_fentry *local, struct fs_fentry **fep,
		      struct stat *st);
/** nfs4_path_comp - component @k of @path (*@len bytes), NULL past the end. */
const char *nfs4_path_comp(const char *path, unsigned k, size_t *len);
/** nfs4_same_prefix - do paths @a and @b share their first @d components? */
bool nfs4_same_prefix(const char *a, const char *b, unsigned d);
/**
 * nfs4_fh_node - @fh becomes the node at @depth on export @xi's path: a
 * pseudo directory, or the export's root at its full depth.
 * Return: NFS4_OK or the nfsstat4 of making the root's handle.
 */
uint32_t nfs4_fh_node(struct nfs4_compound *cp, struct nfs4_fh *fh,
		      unsigned xi, unsigned depth);
/** nfs4_fh_pseudo_stat - the attributes of a pseudo node. */
void nfs4_fh_pseudo_stat(struct nfs4_compound *cp, const struct nfs4_fh *fh,
			 struct stat *st);
/**
 * nfs4_attr_src_init - @src for a real object of the current export (or a
 * pseudo node: @fh->fh_pseudo); @fe: an object on the same file system
 * for its counts (fs_statfs() with the operation's call), or NULL.
 */
void nfs4_attr_src_init(struct nfs4_compound *cp, struct nfs4_attr_src *src,
			const struct stat *st, const struct nfs4_fh *fh,
			struct fs_fentry *fe);

/* ---- nfs4_share.c: the layer's share reservations of NFSv4 opens ---- */

/**
 * nfs4_share_open - after nfs4_open_add_prev() made @sid (@pv) for file
 * @obj (the current handle's, @cp->cp_cur): the owner's reservation in
 * the layer becomes its union (fs_share_set_fh()), which also checks NLM
 * shares and other servers; refused, the open state is taken back
 * (nfs4_open_undo()).  Return: NFS4_OK; NFS4ERR_SHARE_DENIED;
 * NFS4ERR_RESOURCE (the layer's table is full); others of nfs4_errno().
 */
uint32_t nfs4_share_open(struct nfs4_compound *cp, struct fs_fentry *obj,
			 const struct nfs4_stateid *sid,
			 const struct nfs4_open_prev *pv);
/** nfs4_share_downgrade - OPEN_DOWNGRADE of @sid (of the current handle's
 *  file) to @access, @deny: the layer's reservation narrowed too. */
void nfs4_share_downgrade(struct nfs4_compound *cp, const struct nfs4_stateid *sid,
			  uint32_t access, uint32_t deny);

#endif /* RPCRDMA_NFS4_INTERNAL_H */
