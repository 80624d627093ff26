/* SPDX-License-Identifier: MIT */
/*
 * nlm_internal.h - the lock manager's private interfaces: byte ranges,
 * the lock table, NSM state, XDR, and the service.
 */
#ifndef RPCRDMA_NLM_INTERNAL_H
#define RPCRDMA_NLM_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include <sys/socket.h>
#include <sys/types.h>

#include <rpc/rpc.h>
#undef RPC_MSG_VERSION /* <rpcrdma/wire.h> has its own */

#include <rpcrdma/nlm.h>

#include "fs/fs.h"

/* nlm4_stats (XNFS 10.x; RFC 1813 appendix II) */
enum nlm4_stats {
	NLM4_GRANTED = 0,
	NLM4_DENIED = 1,
	NLM4_DENIED_NOLOCKS = 2,
	NLM4_BLOCKED = 3,
	NLM4_DENIED_GRACE_PERIOD = 4,
	NLM4_DEADLCK = 5,
	NLM4_ROFS = 6,
	NLM4_STALE_FH = 7,
	NLM4_FBIG = 8,
	NLM4_FAILED = 9,
};

/* NLM v4 procedures */
enum {
	NLMPROC4_NULL = 0,
	NLMPROC4_TEST = 1,
	NLMPROC4_LOCK = 2,
	NLMPROC4_CANCEL = 3,
	NLMPROC4_UNLOCK = 4,
	NLMPROC4_GRANTED = 5,
	NLMPROC4_TEST_MSG = 6,
	NLMPROC4_LOCK_MSG = 7,
	NLMPROC4_CANCEL_MSG = 8,
	NLMPROC4_UNLOCK_MSG = 9,
	NLMPROC4_GRANTED_MSG = 10,
	NLMPROC4_TEST_RES = 11,
	NLMPROC4_LOCK_RES = 12,
	NLMPROC4_CANCEL_RES = 13,
	NLMPROC4_UNLOCK_RES = 14,
	NLMPROC4_GRANTED_RES = 15,
	NLMPROC4_SHARE = 20,
	NLMPROC4_UNSHARE = 21,
	NLMPROC4_NM_LOCK = 22,
	NLMPROC4_FREE_ALL = 23,
};

/* NSM (XNFS chapter 11) */
enum {
	SM_NULL = 0,
	SM_STAT = 1,
	SM_MON = 2,
	SM_UNMON = 3,
	SM_UNMON_ALL = 4,
	SM_SIMU_CRASH = 5,
	SM_NOTIFY = 6,
};
enum { NSM_STAT_SUCC = 0, NSM_STAT_FAIL = 1 };

#define NLM_MAXSTRLEN 1024u   /* LM_MAXSTRLEN: caller_name */
#define NLM_MAXOH 1024u       /* MAXNETOBJ_SZ: owner handle, cookie */
#define NLM_FHMAX 64u         /* an NFSv3 handle */
#define NSM_MAXSTRLEN 1024u   /* SM_MAXSTRLEN */
/** Last byte a lock can cover: struct flock offsets are signed 64-bit. */
#define NLM_OFFSET_MAX ((uint64_t)INT64_MAX)

/* ---- nlm_range.c: byte ranges (POSIX semantics) ---- */

/** A locked byte range [nr_start, nr_end], inclusive; nr_end ==
 *  NLM_OFFSET_MAX: to the end of the file. */
struct nlm_range {
	uint64_t nr_start;
	uint64_t nr_end;
	bool nr_excl;   /* write (exclusive) lock */
};

/**
 * nlm_range_from_wire - an nlm4_lock's l_offset/l_len as a range.
 * l_len 0 locks to the end of the file; a range that runs past
 * NLM_OFFSET_MAX (including one whose 64-bit end wraps) is clamped to
 * end there, as the kernel's lockd does.
 * Return: 0, or -EFBIG when l_offset is beyond NLM_OFFSET_MAX (NLM4_FBIG).
 */
int nlm_range_from_wire(uint64_t offset, uint64_t len, struct nlm_range *r);

/** nlm_range_to_wire - the inverse (l_len 0 for a range to the end). */
void nlm_range_to_wire(const struct nlm_range *r, uint64_t *offset,
		       uint64_t *len);

/** nlm_range_overlap - do @a and @b share a byte? */
bool nlm_range_overlap(const struct nlm_range *a, const struct nlm_range *b);

/** nlm_range_conflict - overlap, and at least one of them exclusive. */
bool nlm_range_conflict(const struct nlm_range *a, const struct nlm_range *b);

/**
 * A set of disjoint ranges held by one lock owner on one file, sorted by
 * start; adjacent or overlapping ranges of the same type are merged, as
 * POSIX record locks of one owner are.
 */
struct nlm_rset {
	struct nlm_range *rs_v;
	uint32_t rs_n;
	uint32_t rs_cap;
};

/**
 * nlm_rset_apply - set @r (rs_v gets @r's type over its bytes) or, with
 * @unlock, clear its bytes; splits and merges as POSIX does.
 * @max: the most ranges the set may hold afterwards (a change that does
 *       not grow the set is always made).
 * @delta: out: the new count minus the old one (-n..+2).
 * Return: 0; -ENOSPC (the set would exceed @max; unchanged); -ENOMEM
 * (unchanged).
 */
int nlm_rset_apply(struct nlm_rset *s, const struct nlm_range *r, bool unlock,
		   uint32_t max, int *delta);

/** nlm_rset_find_conflict - the first range of @s that conflicts with @r. */
const struct nlm_range *nlm_rset_find_conflict(const struct nlm_rset *s,
					       const struct nlm_range *r);

/** nlm_rset_covers - is every byte of @r held in @s with @r's type? */
bool nlm_rset_covers(const struct nlm_rset *s, const struct nlm_range *r);

void nlm_rset_free(struct nlm_rset *s);

/* ---- nlm_table.c: hosts, lock owners, lock descriptions, waiters ---- */

/**
 * A client host: the address its calls come from (port ignored) and the
 * caller_name they carry.  The pair is the key, as the transport address
 * is for knfsd's lockd (nlmsvc_lookup_host): cloned machines with one
 * node name at different addresses are different hosts, and so are two
 * hosts behind one NAT address with different names.  FREE_ALL and
 * SM_NOTIFY release a host only when they come from its address.
 */
struct nlm_host {
	struct nlm_host *h_next;
	struct sockaddr_storage h_addr;   /* port 0 */
	socklen_t h_addrlen;
	struct sockaddr_storage h_local;  /* our address it called (port 0) */
	char h_name[NLM_MAXSTRLEN + 1];   /* its caller_name */
	uint32_t h_users;                 /* holders + waiters + shares */
	bool h_recorded;                  /* in the state directory */
};

/*
 * What an open function gives the lock manager (include/rpcrdma/nlm.h):
 * the layer's lock description of the file (fs.h; nf_ld.ld_be NULL: none)
 * and the file's identity from its attributes (st_dev, st_ino), which
 * the table keys holders, waiters and shares by and passes to lc_conflict.
 */
struct rpcrdma_nlm_file {
	struct fs_lockd nf_ld;
	dev_t nf_dev;
	ino_t nf_ino;
	/* the layer's server that opened it (rpcrdma_nlm_nfs3_open()), whose
	 * share reservations NLM SHARE joins; NULL: another open function */
	struct rpcrdma_nfs3_server *nf_srv;
};

/**
 * nlm_fs_share - NLM share @id's reservation in @srv's layer table
 * (fs_share_set_fh(), owner fs_share_owner(FS_SHARE_TAG_NLM, @id)) on the
 * file handle @fh (@len bytes) names: @access (fsh4_access) and @mode
 * (fsh4_mode, what it denies) are the layer's FS_SHARE_* bits (1 read,
 * 2 write).  Checked against NFSv4.1 opens and, through the backend,
 * other servers.  Return: 0; -EBUSY (denied); -ENOLCK; -ENOMEM;
 * -ESTALE (the handle's export is gone); -EBADMSG.
 */
int nlm_fs_share(struct rpcrdma_nfs3_server *srv, const uint8_t *fh, uint32_t len,
		 uint64_t id, uint32_t access, uint32_t mode);
/** nlm_fs_unshare - share @id's reservation dropped from @srv's table. */
void nlm_fs_unshare(struct rpcrdma_nfs3_server *srv, uint64_t id);

/** nlm_file_close - close @f's description (none: nothing); it then
 *  holds nothing.  Its locks go with it. */
void nlm_file_close(struct rpcrdma_nlm_file *f);

/** A lock owner (XNFS: host, svid, oh). */
struct nlm_owner {
	struct nlm_host *o_host;
	uint32_t o_svid;
	uint32_t o_ohlen;
	uint8_t o_oh[NLM_MAXOH];
};

/** One lock owner's lock description of one file and its ranges. */
struct nlm_holder {
	struct nlm_holder *ho_next;
	struct nlm_owner ho_owner;
	dev_t ho_dev;
	ino_t ho_ino;
	uint32_t ho_fhlen;       /* the handle it was locked by */
	uint8_t ho_fh[NLM_FHMAX];
	struct fs_lockd ho_ld;   /* the ranges are its locks (fs_lock()) */
	int ho_accmode;          /* the access its owner's callers were found to have:
				  * O_RDONLY, O_WRONLY, or O_RDWR (both) */
	struct nlm_rset ho_set;
};

/**
 * A caller kept beyond its call (a blocked LOCK is retried as its
 * caller): wh_caller.nc_peer is not kept, nlm_who_caller() points it at
 * wh_peer.
 */
struct nlm_who {
	struct rpcrdma_nlm_caller wh_caller;
	struct sockaddr_storage wh_peer;
};

/** nlm_who_save - copy @c (its address too) into @w. */
void nlm_who_save(struct nlm_who *w, const struct rpcrdma_nlm_caller *c);
/** nlm_who_caller - the caller saved in @w, its nc_peer pointing into @w. */
const struct rpcrdma_nlm_caller *nlm_who_caller(struct nlm_who *w);

/** A blocked LOCK request waiting to be granted. */
struct nlm_waiter {
	struct nlm_waiter *w_next;
	struct nlm_owner w_owner;
	struct nlm_who w_who;       /* retried with its caller's identity */
	uint8_t w_fh[NLM_FHMAX];
	uint32_t w_fhlen;
	uint8_t w_cookie[NLM_MAXOH];
	uint32_t w_cookielen;
	struct nlm_range w_range;
	dev_t w_dev;
	ino_t w_ino;
};

/** A granted blocked lock to be announced by a GRANTED callback. */
struct nlm_grant {
	struct nlm_grant *g_next;
	struct nlm_waiter g_w;      /* the request, w_next unused */
	struct sockaddr_storage g_addr, g_local;
	socklen_t g_addrlen;
	char g_name[NLM_MAXSTRLEN + 1];
};

/** A DOS share reservation (NLM SHARE). */
struct nlm_share {
	struct nlm_share *sh_next;
	struct nlm_owner sh_owner;
	dev_t sh_dev;
	ino_t sh_ino;
	uint32_t sh_mode;    /* fsh4_mode: deny */
	uint32_t sh_access;  /* fsh4_access */
	/* its reservation in the layer's table (nlm_fh.c): the server's
	 * (NULL: none) and its id there */
	struct rpcrdma_nfs3_server *sh_srv;
	uint64_t sh_id;
};

/** What a host (or the state directory) learns from the table. */
typedef void (*nlm_host_event_fn)(void *arg, struct nlm_host *h, bool first);

/**
 * NLM_MACHINE_SHARE - what one machine (nlm_host_equal(): an IPv4
 * address, an IPv6 /64), all its caller_names and owners together, may
 * hold of a table bound @max (t_max): a quarter, at least 2 (a LOCK needs
 * room for two ranges), as the NFSv4.1 tables' NFS4_HOST_SHARE.  Without
 * it one peer filled every bound and the others got NLM4_DENIED_NOLOCKS
 * until it let go, which nothing but its own FREE_ALL or SM_NOTIFY makes
 * it do.
 */
#define NLM_MACHINE_SHARE(max) ((max) / 4u < 2u ? 2u : (max) / 4u)

struct nlm_table {
	pthread_mutex_t t_lock;
	struct nlm_host *t_hosts;
	struct nlm_holder *t_holders;
	struct nlm_waiter *t_waiters;
	struct nlm_share *t_shares;
	uint32_t t_max;             /* bound on ranges, waiters, shares, hosts each */
	uint32_t t_nranges, t_nholders, t_nwaiters, t_nshares, t_nhosts;
	uint64_t t_share_next;      /* the last share id given (nlm_fs_share()) */
	rpcrdma_nlm_open_fn t_open;
	void *t_open_arg;
	/* lc_conflict: a LOCK's conflict may be state that can be revoked */
	int (*t_conflict)(void *arg, dev_t dev, ino_t ino);
	void *t_conflict_arg;
	/* called under t_lock when a host gets its first user (first=true)
	 * or loses its last (first=false) */
	nlm_host_event_fn t_host_event;
	void *t_host_event_arg;
	struct rpcrdma_nlm_stats t_stats;
};

/** Arguments of one lock operation, decoded from an nlm4_lock. */
struct nlm_lockargs {
	const char *la_caller;       /* caller_name (NUL-terminated) */
	const uint8_t *la_fh;
	uint32_t la_fhlen;
	const uint8_t *la_oh;
	uint32_t la_ohlen;
	uint32_t la_svid;
	uint64_t la_offset, la_len;
	bool la_excl;
	const struct sockaddr *la_peer;  /* the caller's address */
	socklen_t la_peerlen;
	const struct sockaddr *la_local; /* our address it called, or NULL */
	socklen_t la_locallen;
	/* the caller's identity for opening the file; NULL: la_peer with
	 * AUTH_NONE */
	const struct rpcrdma_nlm_caller *la_who;
};

/** Who holds a conflicting lock (nlm4_holder). */
struct nlm_conflict {
	bool c_excl;
	uint32_t c_svid;
	uint32_t c_ohlen;
	uint8_t c_oh[NLM_MAXOH];
	uint64_t c_offset, c_len;
};

int nlm_table_init(struct nlm_table *t, uint32_t max, rpcrdma_nlm_open_fn open,
		   void *open_arg);
/** Release every lock (closing the lock descriptions) and free the table. */
void nlm_table_destroy(struct nlm_table *t);

/*
 * Each returns an nlm4_stats value; call with t_lock NOT held.  The file
 * is reached through t_open for the call's caller (la_who), who must have
 * the access the operation needs, as knfsd's lockd asks (nlm_lookup_file):
 * TEST and LOCK of a write lock need write access, of a read lock read
 * access (checked on every LOCK, whatever the owner holds; a blocked lock
 * is checked again for its caller when it is retried, unless a LOCK of
 * its owner found that access since); SHARE needs write access when
 * it asks for it (fsa_W), read access otherwise; UNLOCK, CANCEL and
 * UNSHARE read access.  A refused open is answered as knfsd's nlm_fopen
 * answers: NLM4_STALE_FH for a handle that is gone, NLM4_FAILED for
 * everything else (not listed, ro, no permission).  UNLOCK and CANCEL
 * that cannot open the file still release what the caller's own owner
 * holds or waits for under that handle.
 */
uint32_t nlm_table_test(struct nlm_table *t, const struct nlm_lockargs *a,
			struct nlm_conflict *c);
/**
 * nlm_table_lock - LOCK: take the range on the file for the owner.
 * @block: the caller waits (NLM4_BLOCKED and a waiter on a conflict).
 * @cookie/@cookielen: echoed in the GRANTED callback.
 * Return: NLM4_GRANTED, NLM4_DENIED, NLM4_BLOCKED, NLM4_DENIED_NOLOCKS,
 * NLM4_STALE_FH, NLM4_FBIG, NLM4_FAILED.
 */
uint32_t nlm_table_lock(struct nlm_table *t, const struct nlm_lockargs *a,
			bool block, const uint8_t *cookie, uint32_t cookielen,
			struct nlm_conflict *c);
uint32_t nlm_table_unlock(struct nlm_table *t, const struct nlm_lockargs *a);
uint32_t nlm_table_cancel(struct nlm_table *t, const struct nlm_lockargs *a);
uint32_t nlm_table_share(struct nlm_table *t, const struct nlm_lockargs *a,
			 uint32_t mode, uint32_t access, bool unshare);
/**
 * nlm_table_free_host - FREE_ALL or SM_NOTIFY: release every lock, waiter
 * and share of the host named @name (caller_name, or NSM mon_name) at
 * @addr, the address the request came from; @name the numeric form of
 * @addr releases every host at @addr (a client that notifies by address).
 * Hosts at other addresses are never touched, whatever their name.
 * Return: the number of hosts released (0 also when @name or @addr is
 * NULL).
 */
unsigned nlm_table_free_host(struct nlm_table *t, const char *name,
			     const struct sockaddr *addr);
/**
 * nlm_table_retry - try every waiter again; those granted move to @out
 * (the caller delivers the callbacks and frees the list).
 */
void nlm_table_retry(struct nlm_table *t, struct nlm_grant **out);
/** nlm_table_grant_refused - the client did not take a granted lock:
 *  release it (a GRANTED callback failed or was answered not granted). */
void nlm_table_grant_refused(struct nlm_table *t, const struct nlm_grant *g);

/* ---- nlm_nsm.c: NSM state on disk ---- */

struct nsm_record {
	struct nsm_record *nr_next;
	struct sockaddr_storage nr_addr, nr_local;
	socklen_t nr_addrlen;
	char nr_name[NLM_MAXSTRLEN + 1];
	char nr_file[64];
};

/**
 * nsm_state_advance - read DIR/state, make it the next odd number, write
 * it back (atomically, by rename) and return it in @state.
 * Creates DIR (0700) and DIR/sm when absent.
 * Return: 0 or -errno.
 */
int nsm_state_advance(const char *dir, uint32_t *state);
/** nsm_record_put - record (or refresh) a host in DIR/sm. */
int nsm_record_put(const char *dir, const struct sockaddr *addr,
		   const struct sockaddr *local, const char *name);
/** nsm_record_drop - remove a host's record. */
int nsm_record_drop(const char *dir, const struct sockaddr *addr);
/**
 * nsm_records_load - the hosts recorded in DIR/sm (a list the caller frees
 * with nsm_records_free); unreadable or malformed records are skipped.
 */
int nsm_records_load(const char *dir, struct nsm_record **out);
void nsm_records_free(struct nsm_record *r);

/* ---- nlm_xdr.c: NLM v4 and NSM arguments and results (libtirpc XDR) ---- */

/* Every NLM v4 argument shape, decoded into fixed buffers (no allocation:
 * each variable-length item is bounded by its protocol maximum). */
struct nlm_args {
	uint32_t a_cookielen;
	uint8_t a_cookie[NLM_MAXOH];
	bool a_block, a_excl, a_reclaim;
	int32_t a_state;                 /* lockargs: the client's NSM state */
	char a_caller[NLM_MAXSTRLEN + 1];
	uint32_t a_fhlen;
	uint8_t a_fh[NLM_FHMAX];
	uint32_t a_ohlen;
	uint8_t a_oh[NLM_MAXOH];
	uint32_t a_svid;
	uint64_t a_offset, a_len;
	uint32_t a_mode, a_access;       /* shareargs */
	uint32_t a_stat;                 /* nlm4_res (the _RES procedures) */
};

struct nlm_res {
	uint32_t r_cookielen;
	uint8_t r_cookie[NLM_MAXOH];
	uint32_t r_stat;
	struct nlm_conflict r_holder;    /* testres with NLM4_DENIED */
	int32_t r_sequence;              /* shareres */
};

bool_t nlm_xdr_testargs(XDR *x, struct nlm_args *a);   /* also GRANTED */
bool_t nlm_xdr_lockargs(XDR *x, struct nlm_args *a);
bool_t nlm_xdr_cancargs(XDR *x, struct nlm_args *a);
bool_t nlm_xdr_unlockargs(XDR *x, struct nlm_args *a);
bool_t nlm_xdr_shareargs(XDR *x, struct nlm_args *a);
bool_t nlm_xdr_notify(XDR *x, struct nlm_args *a);     /* nlm4_notify */
bool_t nlm_xdr_res_args(XDR *x, struct nlm_args *a);   /* nlm4_res as an argument */
bool_t nlm_xdr_res(XDR *x, struct nlm_res *r);
bool_t nlm_xdr_testres(XDR *x, struct nlm_res *r);
bool_t nlm_xdr_shareres(XDR *x, struct nlm_res *r);
bool_t nlm_xdr_void(XDR *x, void *unused);

/* NSM: sm_name, stat_chge, sm_stat_res */
struct nsm_args {
	char na_name[NSM_MAXSTRLEN + 1];
	int32_t na_state;
};
struct nsm_stat_res {
	uint32_t sr_res;
	int32_t sr_state;
};
bool_t nsm_xdr_sm_name(XDR *x, struct nsm_args *a);
bool_t nsm_xdr_stat_chge(XDR *x, struct nsm_args *a);
bool_t nsm_xdr_stat_res(XDR *x, struct nsm_stat_res *r);

/* ---- nlm_svc.c / nlm_cb.c: the service ---- */

/*
 * Callbacks (the _RES answers to _MSG procedures and GRANTED) are jobs on
 * one queue served by NLM_CB_WORKERS threads.  A worker takes the oldest
 * job whose host no other worker is calling, so a host that does not
 * answer holds one worker, never another host's callbacks; GRANTED jobs
 * go ahead of _RES ones.  _RES jobs are bounded in all (NLM_MSGQ_MAX) and
 * per host (NLM_MSGQ_HOST_MAX): a host over its share has its new _RES
 * dropped and counted (n_res_dropped), never another host's.  A host
 * whose callback timed out is put aside for NLM_CB_BACKOFF_S: callbacks
 * to it fail at once (-EHOSTDOWN), its _RES are dropped and counted.
 */
#define NLM_CB_WORKERS 4u
#define NLM_MSGQ_MAX 256u
#define NLM_MSGQ_HOST_MAX 16u
#define NLM_CB_BACKOFF_S 30
#define NLM_CB_DEAD_MAX 32u

/** A queued callback: a _RES answer, or (m_grant) a GRANTED. */
struct nlm_msgres {
	struct nlm_msgres *m_next;
	struct nlm_grant *m_grant;       /* GRANTED for this grant, or NULL */
	uint32_t m_proc;                 /* NLMPROC4_*_RES */
	struct nlm_res m_res;
	struct sockaddr_storage m_addr, m_local;
	socklen_t m_addrlen;
};

/** A host put aside after a callback to it timed out. */
struct nlm_cb_dead {
	struct sockaddr_storage d_addr;  /* ss_family 0: free */
	struct timespec d_until;         /* CLOCK_MONOTONIC */
};

struct rpcrdma_nlm {
	struct rpcrdma_nlm_config n_cfg;
	char *n_state_dir;
	char n_name[NLM_MAXSTRLEN + 1];  /* ours, in SM_NOTIFY and callbacks */
	FILE *n_log;
	struct nlm_table n_table;
	struct rpc_tcp_listener *n_lsn, *n_nsm_lsn; /* src/common/rpc_tcp.h */
	uint16_t n_port, n_nsm_port;
	uint32_t n_state;                /* NSM state number */
	struct timespec n_grace_end;     /* CLOCK_MONOTONIC */
	pthread_t n_thread;              /* retries waiters, queues GRANTED */
	pthread_t n_notify_thread;       /* SM_NOTIFY after a restart */
	pthread_t n_cb_thread[NLM_CB_WORKERS];
	unsigned n_ncb_threads;
	bool n_notify_started;
	/* n_kick, n_stop, n_msgq*, n_nmsgq, n_cb_busy, n_cb_dead, n_res_* */
	pthread_mutex_t n_mu;
	pthread_cond_t n_cv;             /* nlm_thread and the notifier */
	pthread_cond_t n_cb_cv;          /* a callback queued, a host freed, stop */
	bool n_stop, n_kick, n_registered, n_nsm_registered;
	_Atomic bool n_grace_logged;      /* "grace period over" printed */
	struct nlm_msgres *n_grantq, **n_grantq_tail; /* GRANTED jobs, FIFO */
	struct nlm_msgres *n_msgq, **n_msgq_tail;     /* _RES jobs, FIFO */
	uint32_t n_nmsgq;                /* _RES jobs queued */
	/* the host each worker is calling (ss_family 0: none) */
	struct sockaddr_storage n_cb_busy[NLM_CB_WORKERS];
	struct nlm_cb_dead n_cb_dead[NLM_CB_DEAD_MAX];
	uint64_t n_res_dropped;          /* _RES dropped: queue, share, backoff */
	uint64_t n_cb_backoffs;          /* hosts put aside */
	struct nsm_record *n_notify;     /* hosts still to notify */
};

/** Is the grace period running? */
bool nlm_in_grace(const struct rpcrdma_nlm *n);
/** Wake the granter thread (a lock went away). */
void nlm_kick(struct rpcrdma_nlm *n);

/**
 * nlm_cb_enqueue - queue @m for the workers (a GRANTED when m_grant is
 * set, queued always).  A _RES is refused when its host is put aside or
 * has NLM_MSGQ_HOST_MAX queued; with NLM_MSGQ_MAX queued in all, the
 * oldest _RES of the host with the most queued makes room for it when
 * that host has more than @m's, else @m is refused.  Refused and evicted
 * _RES are counted in n_res_dropped.
 * Return: 0 (@m is the queue's), or -ENOSPC (refused; @m is the caller's).
 */
int nlm_cb_enqueue(struct rpcrdma_nlm *n, struct nlm_msgres *m);

/**
 * nlm_cb_worker - a callback worker thread (@arg: the struct rpcrdma_nlm);
 * returns once n_stop is set (the jobs left are freed by the caller).
 */
void *nlm_cb_worker(void *arg);

/**
 * nlm_cb_granted - NLMPROC4_GRANTED to the host of @g (rpcbind at its
 * address, TCP, from the server address it called).
 * Return: 0 when the client answered NLM4_GRANTED; -EPERM when it
 * answered otherwise; -EHOSTUNREACH/-ETIMEDOUT/-EIO when it could not be
 * reached; -EHOSTDOWN, not tried, while the host is put aside (a callback
 * to it timed out less than NLM_CB_BACKOFF_S ago).  The same for the
 * other callbacks.
 */
int nlm_cb_granted(struct rpcrdma_nlm *n, const struct nlm_grant *g);
/** nlm_cb_res - send a queued _RES callback. Return: 0 or -errno. */
int nlm_cb_res(struct rpcrdma_nlm *n, const struct nlm_msgres *m);
/** The port callbacks ask a host's rpcbind at (111; unit tests change it). */
extern _Atomic uint16_t nlm_cb_rpcbind_port;
/** nlm_cb_notify - SM_NOTIFY (our name, state) to the host's statd. */
int nlm_cb_notify(struct rpcrdma_nlm *n, const struct nsm_record *r);

/* ---- helpers ---- */

/** Format an address without port ("192.0.2.1", "fe80::1"). */
const char *nlm_addr_str(const struct sockaddr *sa, char *buf, size_t len);
/** The same address, port ignored (IPv4-mapped IPv6 equals IPv4). */
bool nlm_addr_equal(const struct sockaddr *a, const struct sockaddr *b);
/* nlm_host_equal - the same machine, as the callbacks' per-host shares and
 * backoff count it: one IPv4 address (mapped or not), one IPv6 /64, one
 * link-local IPv6 address (fe80::/64 is every machine on the link). */
bool nlm_host_equal(const struct sockaddr *a, const struct sockaddr *b);
/** Copy @sa with its port cleared. */
socklen_t nlm_addr_copy(struct sockaddr_storage *dst, const struct sockaddr *sa);

#endif /* RPCRDMA_NLM_INTERNAL_H */
