/* SPDX-License-Identifier: MIT */
/*
 * rpcrdma/nlm.h - the lock manager of rpcrdma-nfsd: NLM version 4
 * (program 100021, XNFS chapter 10 / RFC 1813 appendix) and the server's
 * side of NSM (program 100024, XNFS chapter 11), over TCP with libtirpc.
 *
 * Locks are held through the file-serving layer's lock descriptions, one
 * per lock owner and file: on a local file system (the posix backend)
 * open file description (OFD) locks, so local processes and other file
 * servers see them.  Hosts holding locks are
 * recorded in a state directory; a restarted server notifies them
 * (SM_NOTIFY) and runs a grace period in which only reclaims are granted.
 * See docs/nfs3.md, "Locking".
 */
#ifndef RPCRDMA_NLM_H
#define RPCRDMA_NLM_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>

#ifdef __cplusplus
extern "C" {
#endif

#define RPCRDMA_NLM_PROGRAM 100021u
#define RPCRDMA_NLM_VERSION 4u
#define RPCRDMA_NSM_PROGRAM 100024u
#define RPCRDMA_NSM_VERSION 1u
/** Default state directory (NSM state number and monitored hosts). */
#define RPCRDMA_NLM_STATE_DIR "/var/lib/rpcrdma/nlm"
/** Default grace period in seconds (the kernel's lockd: 90). */
#define RPCRDMA_NLM_GRACE_DEFAULT 90u
/** Default bound on lock records (byte ranges) and on blocked requests. */
#define RPCRDMA_NLM_MAX_LOCKS_DEFAULT 4096u

/** The most supplementary groups an AUTH_SYS credential carries (RFC 5531). */
#define RPCRDMA_NLM_MAX_GIDS 16u

/**
 * Who an NLM call acts for: the address it came from and its RPC
 * credential as sent (not yet squashed).  Passed to rpcrdma_nlm_open_fn,
 * which applies the export's client list, ro and squashing to it.
 */
struct rpcrdma_nlm_caller {
	const struct sockaddr *nc_peer; /* the caller's transport address */
	uint32_t nc_flavor;             /* AUTH_NONE (0) or AUTH_SYS (1) */
	uint32_t nc_uid, nc_gid;        /* AUTH_SYS */
	uint32_t nc_ngids;              /* at most RPCRDMA_NLM_MAX_GIDS */
	uint32_t nc_gids[RPCRDMA_NLM_MAX_GIDS];
};

/**
 * struct rpcrdma_nlm_file - what an open function gives the lock manager:
 * a lock description of one regular file (the file-serving layer's, in
 * src/fs: its locks belong to it, closing it releases them) and the
 * file's identity (device and inode number, as its attributes give
 * them).  Opaque outside the library: only rpcrdma_nlm_nfs3_open() fills
 * one, so an application's own open function (a filter, a logger) ends
 * by passing the lock manager's storage on to it.
 */
struct rpcrdma_nlm_file;

/**
 * rpcrdma_nlm_open_fn - the lock description of the regular file an NFS
 * file handle names, for @who, once @who is found to have the access a
 * lock needs (what knfsd's lockd asks of nfsd_open: read access for a
 * read lock, write access for a write lock).
 * @arg: lc_open_arg.
 * @who: the caller (never NULL).
 * @fh, @len: the handle from the NLM call (opaque, at most 64 bytes).
 * @acc: the access @who must have: O_RDWR, O_RDONLY or O_WRONLY (bits
 *       outside O_ACCMODE are ignored).
 * @file: the lock manager's storage: on success it holds a new lock
 *        description of the file, which the lock manager then owns (it
 *        locks through it and closes it); on error it holds nothing.
 * Return: 0; -ESTALE (the file or its export is gone); -EBADMSG (not a
 * handle of this server); -EISDIR or -EINVAL (not a regular file);
 * -EACCES (@who is not on the client list of the handle's export, or
 * lacks @acc on the file); -EROFS (write access on a read-only export);
 * -ETXTBSY (write access to a file being executed); -EPERM (a credential
 * flavor or identity the server cannot act as); -ENOMEM, -EMFILE, -ENFILE
 * (no description could be made); -EIO.
 */
typedef int (*rpcrdma_nlm_open_fn)(void *arg, const struct rpcrdma_nlm_caller *who,
				   const uint8_t *fh, uint32_t len, int acc,
				   struct rpcrdma_nlm_file *file);

/** Lock manager configuration; zero fields take the defaults noted. */
struct rpcrdma_nlm_config {
	const char *lc_listen;   /* numeric address to bind (NULL: any) */
	uint16_t lc_port;        /* NLM TCP port (0: any free port) */
	uint16_t lc_nsm_port;    /* NSM TCP port (0: any free port) */
	bool lc_rpcbind;         /* register NLM v4 and NSM v1 (tcp) with rpcbind */
	const char *lc_state_dir; /* NULL: RPCRDMA_NLM_STATE_DIR (created 0700) */
	/** Grace period after start, seconds; 0: RPCRDMA_NLM_GRACE_DEFAULT;
	 *  UINT32_MAX: none. */
	uint32_t lc_grace_sec;
	uint32_t lc_max_locks;   /* 0: RPCRDMA_NLM_MAX_LOCKS_DEFAULT */
	/** Our name in SM_NOTIFY (what clients mounted us as); NULL:
	 *  lc_listen, else the host name. */
	const char *lc_nsm_name;
	rpcrdma_nlm_open_fn lc_open;
	void *lc_open_arg;
	/** Optional: false refuses NLM and NSM calls from @peer (AUTH_ERROR,
	 *  AUTH_TOOWEAK; counted in ns_refused). */
	bool (*lc_allow)(const struct sockaddr *peer, void *arg);
	void *lc_allow_arg;
	/** Optional: a LOCK met a conflict on the file @dev/@ino (under the
	 *  lock table's mutex: it must not call into the lock manager).  A
	 *  value > 0 says state that held the file was released (expired
	 *  NFSv4.1 clients': rpcrdma_nfs4_server_revoke_file()): the LOCK is
	 *  tried once more. */
	int (*lc_conflict)(void *arg, dev_t dev, ino_t ino);
	void *lc_conflict_arg;
	/** Optional: is another server of the cluster behind the file NFS
	 *  handle @fh (@len bytes) names in its grace period?  1 (or a
	 *  negative errno: cannot tell) refuses a LOCK that is no reclaim,
	 *  a TEST and a SHARE that is no reclaim with
	 *  NLM4_DENIED_GRACE_PERIOD, as this server's own grace period does;
	 *  0 lets them through.  @arg: lc_open_arg.
	 *  rpcrdma_nlm_nfs3_cluster_grace() for the NFSv3 server's handles. */
	int (*lc_cluster_grace)(void *arg, const uint8_t *fh, uint32_t len);
	FILE *lc_log;            /* NULL: stderr */
	int lc_verbose;
};

/** Counters since start (gauges marked). */
struct rpcrdma_nlm_stats {
	uint64_t ns_calls;          /* NLM calls served */
	uint64_t ns_granted;        /* LOCK answered NLM4_GRANTED (incl. reclaims) */
	uint64_t ns_reclaimed;      /* of which reclaims */
	uint64_t ns_denied;         /* LOCK/TEST answered NLM4_DENIED (conflict) */
	uint64_t ns_blocked;        /* LOCK answered NLM4_BLOCKED */
	uint64_t ns_grace_refused;  /* answered NLM4_DENIED_GRACE_PERIOD */
	uint64_t ns_nolocks;        /* refused NLM4_DENIED_NOLOCKS (table full) */
	uint64_t ns_stale;          /* answered NLM4_STALE_FH */
	uint64_t ns_callbacks;      /* GRANTED callbacks the client accepted */
	uint64_t ns_callback_fail;  /* undeliverable or refused (lock released) */
	uint64_t ns_notified;       /* SM_NOTIFY delivered after a restart */
	uint64_t ns_freed_hosts;    /* hosts whose locks FREE_ALL/SM_NOTIFY released */
	uint64_t ns_refused;        /* calls from peers lc_allow refused */
	uint64_t ns_ranges;         /* gauge: lock records held */
	uint64_t ns_holders;        /* gauge: lock descriptions (owner, file) */
	uint64_t ns_waiting;        /* gauge: blocked requests waiting */
	uint32_t ns_state;          /* our NSM state number (odd) */
	bool ns_in_grace;
};

struct rpcrdma_nlm;

/**
 * rpcrdma_nlm_start - start the lock manager.
 * @cfg: configuration (copied); lc_open is required.
 * @out: the lock manager (rpcrdma_nlm_stop()).
 *
 * Reads and advances the NSM state number in the state directory, starts
 * the grace period, creates the NLM and NSM TCP transports and registers
 * them with libtirpc.  Calls are served by the process's libtirpc loop,
 * the MOUNT thread (rpcrdma_mnt_start(), which must be called after this
 * function).  A thread of its own retries blocked locks, delivers GRANTED
 * callbacks and sends SM_NOTIFY to every host recorded before the restart.
 *
 * Stop it with rpcrdma_nlm_stop() after rpcrdma_mnt_stop().
 *
 * Return: 0; -EINVAL (no lc_open, bad lc_listen); -EBUSY (one runs
 * already); -ENOMEM; -errno of the state directory (mkdir, open, read,
 * write); -errno of socket/bind/listen/pthread_create; -EIO (libtirpc
 * refused the transport); -ECONNREFUSED (lc_rpcbind and rpcbind refused
 * the registration: not running, or the program is registered by another
 * lock manager on this host).
 */
int rpcrdma_nlm_start(const struct rpcrdma_nlm_config *cfg,
		      struct rpcrdma_nlm **out);

/** rpcrdma_nlm_stop - release every lock, unregister and free (NULL: no-op).
 *  Host records stay in the state directory for the next start. */
void rpcrdma_nlm_stop(struct rpcrdma_nlm *nlm);

/** rpcrdma_nlm_get_stats - read the counters (thread-safe). */
void rpcrdma_nlm_get_stats(struct rpcrdma_nlm *nlm, struct rpcrdma_nlm_stats *out);

/** rpcrdma_nlm_ports - the bound NLM and NSM TCP ports. */
void rpcrdma_nlm_ports(const struct rpcrdma_nlm *nlm, uint16_t *nlm_port,
		       uint16_t *nsm_port);

/**
 * rpcrdma_nlm_nfs3_open - an rpcrdma_nlm_open_fn for the NFSv3 server's
 * handles: @server is the struct rpcrdma_nfs3_server (the exports table in
 * force).  The handle's export is found by the id it carries; @who must
 * be on that export's client list (the first entry that matches gives
 * the options, as for NFS calls); write access (@acc O_WRONLY or O_RDWR)
 * on a ro entry is refused; the handle is decoded as NFS calls decode it
 * (server credentials, the export's backend) and must name a regular
 * file; then @who's identity squashed by the entry (root_squash,
 * all_squash, anonuid) must have @acc on it, checked as an open for that
 * access is (NFSv3 READ and WRITE check the same), with knfsd's
 * overrides: the owner of the file may open it whatever its mode bits,
 * and read access is granted with execute permission.  The lock
 * description is then opened by the server (read-write where the file
 * allows, else read-only).  The calling thread runs as the server again
 * on return.
 * Return: 0; -EBADMSG (not one of the server's handles); -ESTALE (the
 * file or its export is gone); -EACCES (@who not listed, or no
 * permission); -EROFS (write access, ro entry); -ETXTBSY; -EPERM (a
 * flavor other than AUTH_NONE/AUTH_SYS, or the identity could not be
 * taken); -EISDIR/-EINVAL (not a regular file); -ENOMEM, -EMFILE,
 * -ENFILE; -EIO.
 */
int rpcrdma_nlm_nfs3_open(void *server, const struct rpcrdma_nlm_caller *who,
			  const uint8_t *fh, uint32_t len, int acc,
			  struct rpcrdma_nlm_file *file);

/**
 * rpcrdma_nlm_nfs3_cluster_grace - an lc_cluster_grace for the NFSv3
 * server's handles (@server as for rpcrdma_nlm_nfs3_open()): whether
 * another gateway of the export's storage is in its grace period, as the
 * export's backend tells (cephfs with grace=DIR; never for posix or
 * memory).  Return: 1 (in grace); 0 (not, or not one of the server's
 * handles: the LOCK then fails as it would); -EAGAIN (cannot tell now).
 */
int rpcrdma_nlm_nfs3_cluster_grace(void *server, const uint8_t *fh, uint32_t len);

#ifdef __cplusplus
}
#endif
#endif /* RPCRDMA_NLM_H */
