/* SPDX-License-Identifier: MIT */
/*
 * rpcrdma/nfs3.h - an NFSv3 (RFC 1813) and MOUNT v3 server over one
 * exported directory, for the RPC-over-RDMA server in <rpcrdma/svc.h>.
 *
 * rpcrdma_nfs3_export_open() opens the export; rpcrdma_nfs3_dispatch() is
 * the rpcrdma_svc_dispatch_fn for program 100003 version 3 (pass the
 * export as its argument); rpcrdma_mnt_start() serves MOUNT v3 over TCP
 * with libtirpc on a thread of its own.  See docs/nfs3.md for the file
 * handle format and how credentials are applied.
 */
#ifndef RPCRDMA_NFS3_H
#define RPCRDMA_NFS3_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>

#include <rpcrdma/svc.h>

#ifdef __cplusplus
extern "C" {
#endif

#define RPCRDMA_NFS3_PROGRAM 100003u
#define RPCRDMA_NFS3_VERSION 3u
#define RPCRDMA_MNT_PROGRAM 100005u
#define RPCRDMA_MNT_VERSION 3u
/** Default MOUNT port (the IANA "mountd" port used by Linux nfs-utils). */
#define RPCRDMA_MNT_PORT 20048
/** Largest NFSv3 file handle in bytes (RFC 1813 2.4, NFS3_FHSIZE). */
#define RPCRDMA_NFS3_FHSIZE 64u
/** Bytes of the file handle key (a SipHash-2-4 key). */
#define RPCRDMA_NFS3_KEY_BYTES 16u
/** The uid and gid squashed credentials map to. */
#define RPCRDMA_NFS3_NOBODY 65534u
/** Open-file cache entries when nc_fcache_entries is 0. */
#define RPCRDMA_NFS3_FCACHE_DEFAULT 1024u
/** nc_fcache_entries value that turns the open-file cache off. */
#define RPCRDMA_NFS3_FCACHE_OFF UINT32_MAX

/** Export configuration; zero fields take the defaults noted. */
struct rpcrdma_nfs3_config {
	const char *nc_export;     /* directory to export (absolute path) */
	uint32_t nc_max_payload;   /* READ/WRITE bytes (FSINFO rtmax/wtmax), default 1 MiB */
	bool nc_no_root_squash;    /* AUTH_SYS uid 0 stays root */
	/** File handle key; handles stay valid while it does. */
	uint8_t nc_key[RPCRDMA_NFS3_KEY_BYTES];
	/** Optional: false refuses MNT to @peer (MNT3ERR_ACCES). */
	bool (*nc_allow)(const struct sockaddr *peer, void *arg);
	void *nc_allow_arg;
	FILE *nc_log;              /* NULL: stderr */
	int nc_verbose;
	/**
	 * Open regular files kept across calls, keyed by file handle (up to
	 * three descriptors each; the soft RLIMIT_NOFILE is raised to fit, or
	 * the cache shrunk to what the hard limit allows).  0: the default,
	 * RPCRDMA_NFS3_FCACHE_DEFAULT; RPCRDMA_NFS3_FCACHE_OFF: no cache.
	 */
	uint32_t nc_fcache_entries;
};

struct rpcrdma_nfs3_export;

/**
 * rpcrdma_nfs3_export_open - open the export directory.
 * @cfg: configuration (copied; nc_export is duplicated).
 * @out: the export, owned by the caller (rpcrdma_nfs3_export_close()).
 *
 * The directory is opened without following a symlink in its last
 * component, and must support kernel file handles (name_to_handle_at(2)).
 *
 * Return: 0; -EINVAL (NULL or relative path); -ENOMEM; -ENOENT, -ENOTDIR,
 * -EACCES, -ELOOP from opening it; -EOPNOTSUPP when its filesystem has no
 * file handles; -EOVERFLOW when they are too long to fit an NFSv3 handle.
 */
int rpcrdma_nfs3_export_open(const struct rpcrdma_nfs3_config *cfg,
			     struct rpcrdma_nfs3_export **out);

/** rpcrdma_nfs3_export_close - free the export (NULL is a no-op). */
void rpcrdma_nfs3_export_close(struct rpcrdma_nfs3_export *exp);

/**
 * rpcrdma_nfs3_proc_names - NFSv3 procedure names indexed by procedure
 * number ("NULL", "GETATTR", ... "COMMIT", as /proc/self/mountstats spells
 * them); *@n gets their count (22).  For rpcrdma_svc_set_proc_names().
 */
const char *const *rpcrdma_nfs3_proc_names(uint32_t *n);

/**
 * rpcrdma_nfs3_stat_name - the nfsstat3 name of @status (RFC 1813 2.6:
 * "NFS3_OK", "NFS3ERR_NOENT" ...), or NULL for a value RFC 1813 does not
 * define.  A rpcrdma_svc_status_name_fn.
 */
const char *rpcrdma_nfs3_stat_name(uint32_t status);

/**
 * rpcrdma_nfs3_dispatch - the rpcrdma_svc_dispatch_fn for NFS v3.
 * @req: the call (rq_msg, rq_args positioned after the call header,
 *       rq_res after the accepted-reply header).
 * @arg: the struct rpcrdma_nfs3_export.
 *
 * Serves RFC 1813 procedures; unimplemented ones answer NFS3ERR_NOTSUPP.
 * Reports each result's nfsstat3 with rpcrdma_svc_req_set_status().
 * Thread-safe; runs the file system calls with the caller's AUTH_SYS
 * identity (root and AUTH_NONE squashed to nobody) on the calling thread.
 *
 * Return: RPCRDMA_SVC_SUCCESS, RPCRDMA_SVC_GARBAGE_ARGS (arguments do not
 * decode), RPCRDMA_SVC_PROC_UNAVAIL (procedure > 21),
 * RPCRDMA_SVC_PROG_MISMATCH (version not 3), RPCRDMA_SVC_SYSTEM_ERR (rq_res
 * too small for the result), or RPCRDMA_SVC_AUTH_ERROR with rq_auth_stat
 * RPCRDMA_AUTH_TOOWEAK (flavour not AUTH_SYS/AUTH_NONE) or
 * RPCRDMA_AUTH_BADCRED (malformed AUTH_SYS).
 */
int rpcrdma_nfs3_dispatch(struct rpcrdma_svc_req *req, void *arg);

/**
 * rpcrdma_nfs3_root_fh - the export root's file handle (what MNT returns).
 * @exp: the export.
 * @fh: out: RPCRDMA_NFS3_FHSIZE bytes.
 * @len: out: bytes used.
 * Return: 0, or a negative errno from name_to_handle_at(2).
 */
int rpcrdma_nfs3_root_fh(struct rpcrdma_nfs3_export *exp,
			 uint8_t fh[RPCRDMA_NFS3_FHSIZE], uint32_t *len);

/** Counters of the open-file cache (see nc_fcache_entries). */
struct rpcrdma_nfs3_fcache_stats {
	uint64_t fcs_capacity;  /* entries it may hold (0: the cache is off) */
	uint64_t fcs_entries;   /* entries it holds now (open files) */
	uint64_t fcs_hits;      /* lookups that found the handle's file open */
	uint64_t fcs_misses;    /* lookups that had to open the handle */
	uint64_t fcs_evictions; /* entries closed to make room (least recently used) */
	uint64_t fcs_forgotten; /* entries dropped because REMOVE or RENAME
				 * unlinked the file's last name */
};

/**
 * rpcrdma_nfs3_fcache_stats - read the open-file cache's counters.
 * @exp: the export.
 * @out: out: the counters, summed over the cache's shards (each shard is
 *       read under its lock, so the sum is not one atomic snapshot while
 *       calls run); all zero when the cache is off.  Counts since
 *       rpcrdma_nfs3_export_open(); hits and misses count the lookups of
 *       READ, WRITE, GETATTR, SETATTR and COMMIT (misses include handles
 *       of non-regular files, which are never cached).
 *
 * Thread-safe; may be called while rpcrdma_nfs3_dispatch() runs.
 * Return: 0, or -EINVAL when @exp or @out is NULL.
 */
int rpcrdma_nfs3_fcache_stats(const struct rpcrdma_nfs3_export *exp,
			      struct rpcrdma_nfs3_fcache_stats *out);

/** rpcrdma_nfs3_export_path - the exported path (owned by @exp). */
const char *rpcrdma_nfs3_export_path(const struct rpcrdma_nfs3_export *exp);

/**
 * rpcrdma_nfs3_load_key - read, or create, a file handle key file.
 * @path: the key file: RPCRDMA_NFS3_KEY_BYTES random bytes, mode 0600.
 *        When absent it is created (not its directory) from getrandom(2).
 * @key: out.
 * Return: 0; -EINVAL (the file has another size); a negative errno from
 * open/read/write/getrandom.
 */
int rpcrdma_nfs3_load_key(const char *path,
			  uint8_t key[RPCRDMA_NFS3_KEY_BYTES]);

struct rpcrdma_mnt;

/**
 * rpcrdma_mnt_start - serve MOUNT v3 (RFC 1813 5) over TCP on a thread.
 * @exp: the export (must outlive the MOUNT server).
 * @listen: numeric address to bind, NULL for any (IPv6 dual stack, else IPv4).
 * @port: TCP port (0: RPCRDMA_MNT_PORT).
 * @rpcbind: also register with rpcbind (svc_register with IPPROTO_TCP).
 * @out: the server (rpcrdma_mnt_stop()).
 *
 * MNT of the export path answers the root handle and [AUTH_SYS, AUTH_NONE];
 * other paths get MNT3ERR_NOENT; peers refused by nc_allow MNT3ERR_ACCES.
 * Only one MOUNT server may run per process (libtirpc keeps global state).
 *
 * Return: 0; -EBUSY (one is already running); -EINVAL (bad @listen);
 * -ENOMEM; a negative errno from socket/bind/listen/pthread_create;
 * -EIO when libtirpc refuses the transport or the registration.
 */
int rpcrdma_mnt_start(struct rpcrdma_nfs3_export *exp, const char *listen,
		      uint16_t port, bool rpcbind, struct rpcrdma_mnt **out);

/** rpcrdma_mnt_stop - stop the MOUNT thread and free it (NULL: no-op). */
void rpcrdma_mnt_stop(struct rpcrdma_mnt *mnt);

/**
 * rpcrdma_nfs3_cidr_parse - parse "ADDR[/PREFIX]" (IPv4 or IPv6).
 * @s: the text.
 * @addr: out: the network address (AF_INET or AF_INET6).
 * @prefix: out: prefix length (32/128 when absent).
 * Return: 0 or -EINVAL.
 */
int rpcrdma_nfs3_cidr_parse(const char *s, struct sockaddr_storage *addr,
			    unsigned *prefix);

/**
 * rpcrdma_nfs3_cidr_match - is @peer inside @net/@prefix?
 * IPv4-mapped IPv6 peers match IPv4 networks.
 */
bool rpcrdma_nfs3_cidr_match(const struct sockaddr *peer,
			     const struct sockaddr_storage *net,
			     unsigned prefix);

#ifdef __cplusplus
}
#endif
#endif /* RPCRDMA_NFS3_H */
