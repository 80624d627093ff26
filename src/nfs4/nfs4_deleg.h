/* SPDX-License-Identifier: MIT */
/*
 * nfs4_deleg.h - private to src/nfs4: read delegations (RFC 8881 10.2,
 * 10.4, 18.16.3 OPEN_DELEGATE_READ, 18.6 DELEGRETURN, 20.2 CB_RECALL).
 *
 * A delegation's life: GRANTED on an OPEN for reading of a file no one
 * has open for writing; RECALLING once another client's OPEN for writing
 * (or an NFSv3 change) conflicts: that OPEN answers NFS4ERR_DELAY and a
 * CB_RECALL is sent; gone with DELEGRETURN; REVOKED when a lease passed
 * after the recall without a return (the conflict then no longer waits
 * for it; the holder's stateid answers NFS4ERR_DELEG_REVOKED until it
 * frees it with DELEGRETURN or FREE_STATEID).
 */
#ifndef RPCRDMA_NFS4_DELEG_H
#define RPCRDMA_NFS4_DELEG_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "nfs4_prot.h"

struct nfs4_stateid;
struct nfs4_sizes;

/** Delegations one conflict can have to recall (read delegations of a
 *  file held by different clients). */
#define NFS4_DELEG_MAX_RECALL 8u

enum nfs4_deleg_state {
	NFS4_DELEG_FREE = 0,
	NFS4_DELEG_GRANTED,
	NFS4_DELEG_RECALLING,
	NFS4_DELEG_REVOKED,
};

struct nfs4_deleg_table;

/**
 * nfs4_deleg_create - an empty table; @boot (the server's start) is in
 * every delegation stateid so a restart makes them stale; @lease
 * (seconds): how long a recalled delegation is waited for; @sz: its
 * size, sz_delegs, and a client's share, sz_client_delegs (NULL: the
 * default's).  Return: 0 or -ENOMEM.
 */
int nfs4_deleg_create(uint32_t boot, uint32_t lease, const struct nfs4_sizes *sz,
		      struct nfs4_deleg_table **out);
/** nfs4_deleg_destroy - free the table (NULL ignored). */
void nfs4_deleg_destroy(struct nfs4_deleg_table *t);

/**
 * nfs4_deleg_grant - an OPEN for reading by @clientid of @fh succeeded:
 * a read delegation, unless @writers (someone has the file open for
 * writing), the file has a delegation being recalled or revoked, the
 * client holds one on it already (*@out is then that one's), the client
 * holds sz_client_delegs, or the table is full.
 * Return: true with *@out the delegation stateid.
 */
bool nfs4_deleg_grant(struct nfs4_deleg_table *t, uint64_t clientid,
		      const uint8_t *fh, uint32_t fhlen, bool writers,
		      struct nfs4_stateid *out);

/** A delegation to recall: its holder, stateid and file. */
struct nfs4_deleg_recall {
	uint64_t dr_clientid;
	uint8_t dr_other[12];
	uint32_t dr_seqid;
};

/**
 * nfs4_deleg_conflict - a change of @fh by @clientid (0: not an NFSv4
 * client, e.g. NFSv3) at @now (CLOCK_MONOTONIC seconds): every other
 * client's delegation of the file is recalled.  Those whose CB_RECALL
 * has not gone out yet are put in @rec (at most NFS4_DELEG_MAX_RECALL,
 * *@nrec of them): the caller sends their CB_RECALLs and tells which
 * went with nfs4_deleg_recall_sent() (the others are offered again by the
 * next conflict).  Delegations recalled more than a lease ago
 * are revoked here.  Return: NFS4_OK (nothing to wait for) or
 * NFS4ERR_DELAY (delegations are out: try again later).
 */
uint32_t nfs4_deleg_conflict(struct nfs4_deleg_table *t, uint64_t clientid,
			     const uint8_t *fh, uint32_t fhlen, time_t now,
			     struct nfs4_deleg_recall *rec, uint32_t *nrec);

/**
 * nfs4_deleg_return - DELEGRETURN (RFC 8881 18.6) or FREE_STATEID of a
 * delegation stateid of @clientid on @fh (@fh NULL: any file).
 * Return: NFS4_OK; NFS4ERR_BAD_STATEID (no such delegation);
 * NFS4ERR_OLD_STATEID; NFS4ERR_DELEG_REVOKED is not returned: a revoked
 * delegation is freed by its return.
 */
uint32_t nfs4_deleg_return(struct nfs4_deleg_table *t, uint64_t clientid,
			   const struct nfs4_stateid *sid, const uint8_t *fh,
			   uint32_t fhlen);

/**
 * nfs4_deleg_check - a delegation stateid used for READ (RFC 8881 8.2.2):
 * NFS4_OK when it is @clientid's on @fh (NULL: any file) and not revoked;
 * NFS4ERR_DELEG_REVOKED; NFS4ERR_BAD_STATEID.
 */
uint32_t nfs4_deleg_check(struct nfs4_deleg_table *t, uint64_t clientid,
			  const struct nfs4_stateid *sid, const uint8_t *fh,
			  uint32_t fhlen);

/**
 * nfs4_deleg_holders - the clients other than @except (0: none) that hold
 * a delegation of @fh not revoked, at most @max of them into @ids.
 * Return: how many were written.
 */
uint32_t nfs4_deleg_holders(struct nfs4_deleg_table *t, uint64_t except,
			    const uint8_t *fh, uint32_t fhlen, uint64_t *ids,
			    uint32_t max);

/** nfs4_deleg_recall_sent - the CB_RECALL of @rec went out. */
void nfs4_deleg_recall_sent(struct nfs4_deleg_table *t, const struct nfs4_deleg_recall *rec);

/** nfs4_deleg_revoked - has @clientid a revoked delegation not yet freed
 *  (SEQ4_STATUS_RECALLABLE_STATE_REVOKED, RFC 8881 18.46.3)? */
bool nfs4_deleg_revoked(struct nfs4_deleg_table *t, uint64_t clientid);

/** nfs4_deleg_forget_client - the client's state is gone: its
 *  delegations with it (may be called under the state's lock: their
 *  leases are left for nfs4_deleg_reap()).  Return: whether any of them
 *  had a lease to close. */
bool nfs4_deleg_forget_client(struct nfs4_deleg_table *t, uint64_t clientid);

/* ---- leases (fs_lease_open()): changes from outside the server ---- */

struct fs_call;
struct fs_fentry;
struct fs_lease;

/**
 * nfs4_deleg_lease - a lease of the file-serving layer on @fe's file
 * (fs_lease_open(@c, @fe, @fn, @arg)) for delegation @sid, just granted
 * by nfs4_deleg_grant(), kept in its entry; a delegation that has one
 * already keeps it.  No lock of the caller's may be held (the lease's
 * break takes the table's lock).  A lease refused takes the delegation
 * back (it is freed: the stateid must not be handed out), but for
 * -EOPNOTSUPP (the backend cannot tell of changes from outside: the
 * delegation rests on the change hook, as before leases).
 * Return: 0; -ENOENT (no such delegation now); fs_lease_open()'s errors
 * (-EAGAIN: open for writing somewhere; -EACCES; -EOPNOTSUPP; ...).
 */
int nfs4_deleg_lease(struct nfs4_deleg_table *t, const struct nfs4_stateid *sid,
		     struct fs_call *c, struct fs_fentry *fe,
		     void (*fn)(void *arg, struct fs_lease *ls), void *arg);

/**
 * nfs4_deleg_lease_broken - the lease @ls (one of this table's entries')
 * broke: its delegation is marked for recall by the lease thread
 * (nfs4_deleg_broken()).  Takes the table's lock briefly, nothing else.
 * Return: whether a delegation was marked (false: freed or revoked).
 */
bool nfs4_deleg_lease_broken(struct nfs4_deleg_table *t, struct fs_lease *ls);

/**
 * nfs4_deleg_broken - the files of delegations whose lease broke and that
 * are still out (granted or recalling), at most @max of them into @fh
 * (NFS4_FHSIZE bytes each) and @fhlen; they stay marked until returned or
 * revoked, so each pass asks again.  Return: how many were written.
 */
uint32_t nfs4_deleg_broken(struct nfs4_deleg_table *t, uint8_t (*fh)[NFS4_FHSIZE],
			   uint32_t *fhlen, uint32_t max);

/**
 * nfs4_deleg_reap - close the leases of delegations returned, revoked or
 * forgotten (fs_lease_close()).  Call with no lock held, never from a
 * lease's break callback.
 */
void nfs4_deleg_reap(struct nfs4_deleg_table *t);

/** nfs4_deleg_drop_leases - close every lease (the server stops: no call
 *  is served any more); nfs4_deleg_destroy() does it too. */
void nfs4_deleg_drop_leases(struct nfs4_deleg_table *t);

/** Counters (tests, the log, the stats). */
struct nfs4_deleg_counts {
	uint32_t dc_held;       /* delegations out now (granted or recalling) */
	uint64_t dc_granted, dc_recalled, dc_returned, dc_revoked, dc_delays;
};
void nfs4_deleg_counts(struct nfs4_deleg_table *t, struct nfs4_deleg_counts *out);

/* ---- nfs4_deleg_ops.c: the delegations in the operations ---- */

struct nfs4_compound;
struct rpcrdma_nfs4_server;

/**
 * nfs4_deleg_break - before @clientid (0: NFSv3) changes @fh: recall the
 * other clients' delegations of it over their back channels.
 * Return: NFS4_OK or NFS4ERR_DELAY (wait for their return).
 */
uint32_t nfs4_deleg_break(struct rpcrdma_nfs4_server *srv, uint64_t clientid,
			  const uint8_t *fh, uint32_t fhlen);

/**
 * nfs4_deleg_change_hook - the file-serving layer's change hook (@arg the
 * NFSv4.1 server): an NFSv3 WRITE or SETATTR of the size of @fh recalls
 * every delegation of the file.  Return: 0 or -EAGAIN (NFS3ERR_JUKEBOX).
 */
int nfs4_deleg_change_hook(void *arg, const uint8_t *fh, uint32_t fhlen);

/**
 * nfs4_deleg_put_open - the open_delegation4 of an OPEN of the current
 * file (@fe, its object) that succeeded with @access: OPEN_DELEGATE_READ
 * (a delegation granted: reading only, delegations on, no
 * OPEN4_SHARE_ACCESS_WANT_NO_DELEG in @want, not a CLAIM_DELEG_CUR open,
 * the session's back channel up, nobody has the file open for writing,
 * and the backend gave a lease on it or has no leases) or
 * OPEN_DELEGATE_NONE.
 */
void nfs4_deleg_put_open(struct nfs4_compound *cp, struct fs_fentry *fe,
			 uint32_t access, uint32_t want, bool deleg_cur);

/**
 * nfs4_deleg_on_lease_break - the break callback (fs_lease_break_fn) of a
 * delegation's lease, @arg the server: the OPEN path gives it to
 * nfs4_deleg_lease().  A local process or another gateway wants @ls's
 * file for a change; called on a backend's thread (the posix lease
 * thread, or another export's call for the memory backend), so it only
 * marks the delegation (nfs4_deleg_lease_broken()) and wakes the server's
 * lease thread, which recalls it (nfs4_deleg_lease_work()): the recall
 * path may expire a courtesy client under the state's lock, and that
 * closes leases, which a break callback must not do.
 */
void nfs4_deleg_on_lease_break(void *arg, struct fs_lease *ls);

/**
 * nfs4_deleg_lease_work - the server's lease thread: leases of
 * delegations gone are closed (nfs4_deleg_reap()), and the files whose
 * lease broke have their delegations recalled (nfs4_deleg_break() with
 * clientid 0, as an NFSv3 change), again on each pass until returned or
 * revoked a lease after the recall.
 */
void nfs4_deleg_lease_work(struct rpcrdma_nfs4_server *srv);

/** nfs4_server_kick - wake the server's lease thread now (a lease broke,
 *  a client with leased delegations was forgotten); nfs4_server.c. */
void nfs4_server_kick(struct rpcrdma_nfs4_server *srv);

#endif /* RPCRDMA_NFS4_DELEG_H */
