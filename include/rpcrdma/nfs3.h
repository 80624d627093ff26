/* SPDX-License-Identifier: MIT */
/*
 * rpcrdma/nfs3.h - an NFSv3 (RFC 1813) and MOUNT v3 server over exported
 * directories, for the RPC-over-RDMA server in <rpcrdma/svc.h>.
 *
 * rpcrdma_nfs3_exports_parse() reads an exports(5) table;
 * rpcrdma_nfs3_server_create() opens its directories and
 * rpcrdma_nfs3_server_dispatch() is the rpcrdma_svc_dispatch_fn for program
 * 100003 version 3 over them (pass the server as its argument), with
 * rpcrdma_nfs3_server_reload() to replace the table while calls run;
 * rpcrdma_mnt_start() serves MOUNT v3 over TCP with libtirpc on a thread
 * of its own.  rpcrdma_nfs3_export_open() and rpcrdma_nfs3_dispatch() serve
 * one directory with fixed options (no client checks).  The protocol
 * constants are in <rpcrdma/nfs3_prot.h>.  See docs/nfs3.md for the file
 * handle format and how credentials are applied.
 */
#ifndef RPCRDMA_NFS3_H
#define RPCRDMA_NFS3_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>

#include <rpcrdma/nfs3_prot.h>
#include <rpcrdma/svc.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Default MOUNT port (the IANA "mountd" port used by Linux nfs-utils). */
#define RPCRDMA_MNT_PORT 20048
/** Bytes of the file handle key (a SipHash-2-4 key). */
#define RPCRDMA_NFS3_KEY_BYTES 16u
/** The uid and gid squashed credentials map to. */
#define RPCRDMA_NFS3_NOBODY 65534u
/** Open-file cache entries when nc_fcache_entries is 0. */
#define RPCRDMA_NFS3_FCACHE_DEFAULT 1024u
/** nc_fcache_entries value that turns the open-file cache off. */
#define RPCRDMA_NFS3_FCACHE_OFF UINT32_MAX
/** Idle period of the open-file cache when nc_fcache_idle_ms is 0. */
#define RPCRDMA_NFS3_FCACHE_IDLE_DEFAULT_MS 2000u
/** nc_fcache_idle_ms value that keeps idle files open (no sweeps). */
#define RPCRDMA_NFS3_FCACHE_IDLE_NEVER UINT32_MAX

/** Export configuration; zero fields take the defaults noted. */
struct rpcrdma_nfs3_config {
	const char *nc_export;     /* directory to export (absolute path) */
	uint32_t nc_max_payload;   /* READ/WRITE bytes (FSINFO rtmax/wtmax), default 1 MiB */
	/** rpcrdma_nfs3_dispatch() only: AUTH_SYS uid 0 stays root. */
	bool nc_no_root_squash;
	/**
	 * rpcrdma_nfs3_dispatch() only: exports(5) "async": reply to CREATE,
	 * MKDIR, SYMLINK, MKNOD, REMOVE, RMDIR, RENAME, LINK and SETATTR
	 * without committing the change to stable storage (false, "sync":
	 * fsync the directory, or SETATTR's object, first, on file systems
	 * that have a disk).
	 */
	bool nc_async;
	/** File handle key; handles stay valid while it does. */
	uint8_t nc_key[RPCRDMA_NFS3_KEY_BYTES];
	FILE *nc_log;              /* NULL: stderr */
	int nc_verbose;
	/**
	 * Open regular files kept across calls, keyed by file handle (up to
	 * three descriptors each; the soft RLIMIT_NOFILE is raised to fit, or
	 * the cache shrunk to what the hard limit allows).  0: the default,
	 * RPCRDMA_NFS3_FCACHE_DEFAULT; RPCRDMA_NFS3_FCACHE_OFF: no cache.
	 */
	uint32_t nc_fcache_entries;
	/**
	 * rpcrdma_nfs3_server_create() only: the cache's idle period in
	 * milliseconds.  A thread of the server sweeps every export's caches
	 * (rpcrdma_nfs3_export_expire()) once a period, so a file or
	 * directory no call used for one to two periods is closed (one a
	 * call holds is in use, and stays): a file unlinked on the server
	 * gives its space back soon after the clients stop using it, as the
	 * kernel's nfsd closes idle NFSv3 files.  0: the default,
	 * RPCRDMA_NFS3_FCACHE_IDLE_DEFAULT_MS; RPCRDMA_NFS3_FCACHE_IDLE_NEVER:
	 * no sweeps, entries leave only by eviction, REMOVE or RENAME.
	 */
	uint32_t nc_fcache_idle_ms;
	/**
	 * rpcrdma_nfs3_export_open() only: the backend serving nc_export,
	 * "posix" (a directory of a local kernel file system, through kernel
	 * file handles and the caller's identity; NULL means it too) or
	 * "memory" (an in-memory tree, fs_memory.c; needs no privilege),
	 * optionally followed by the backend's own options,
	 * "NAME:OPT=V[:OPT=V...]" (memory: bytes=SIZE with K, M, G, T
	 * suffixes, nodes=N; posix has none).  An unknown name or option:
	 * -EINVAL.  rpcrdma_nfs3_server_create() takes each export's from
	 * its exports line (backend=NAME[:OPT=V...]) instead.
	 */
	const char *nc_backend;
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
 * Return: 0; -EINVAL (NULL or relative path, unknown nc_backend); -ENOMEM; -ENOENT, -ENOTDIR,
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
 * identity (root and AUTH_NONE squashed to nobody) on the calling thread,
 * and leaves the thread with that identity (fsuid, fsgid, supplementary
 * groups) when it returns, so that the next call of the same caller
 * switches nothing; rpcrdma_nfs3_thread_release() gives the thread back
 * its own.  With rq_transport set (RPCRDMA_SVC_TRY_TRANSPORT) it never
 * changes the thread's credentials: it serves only the calls that need no
 * switch and no disk wait, and answers RPCRDMA_SVC_DEFER to the others
 * (docs/nfs3.md, "Calls served on the transport thread").
 *
 * Return: RPCRDMA_SVC_SUCCESS, RPCRDMA_SVC_GARBAGE_ARGS (arguments do not
 * decode), RPCRDMA_SVC_PROC_UNAVAIL (procedure > 21),
 * RPCRDMA_SVC_PROG_MISMATCH (version not 3), RPCRDMA_SVC_SYSTEM_ERR (rq_res
 * too small for the result), or RPCRDMA_SVC_AUTH_ERROR with rq_auth_stat
 * RPCRDMA_AUTH_TOOWEAK (flavour not AUTH_SYS/AUTH_NONE) or
 * RPCRDMA_AUTH_BADCRED (malformed AUTH_SYS); RPCRDMA_SVC_DEFER (only with
 * rq_transport set).
 */
int rpcrdma_nfs3_dispatch(struct rpcrdma_svc_req *req, void *arg);

/**
 * rpcrdma_nfs3_thread_release - give the calling thread back the server's
 * own file system identity (fsuid and fsgid the effective ids; no
 * supplementary groups unless the server runs as root), after
 * rpcrdma_nfs3_dispatch() left it with its last caller's.  Costs nothing
 * when the thread already has it.
 */
void rpcrdma_nfs3_thread_release(void);

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
	/* The directory cache beside it (nc_fcache_entries / 4 entries, at
	 * least 16; off with the file cache): the directories of LOOKUP and
	 * the directory operations. */
	uint64_t fcs_dir_capacity;
	uint64_t fcs_dir_entries;
	uint64_t fcs_dir_hits;
	uint64_t fcs_dir_misses;
	/* directories (and files SETATTR changed) fsynced before a reply:
	 * commit_metadata of sync export entries on a disk (docs/nfs3.md,
	 * "sync and async") */
	uint64_t fcs_dir_commits;
	/* entries closed by an idle sweep (rpcrdma_nfs3_export_expire()):
	 * files, directories */
	uint64_t fcs_expired;
	uint64_t fcs_dir_expired;
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

/**
 * rpcrdma_nfs3_export_expire - one idle sweep of @exp's open-file and
 * directory caches: close every entry that no call has used since the
 * previous sweep (the first sweep only starts the period).  Called once
 * per idle period, it closes what has been idle for one to two periods;
 * rpcrdma_nfs3_server_create() runs it on its own thread (nc_fcache_idle_ms),
 * a program serving a lone export calls it itself.  An entry a call holds
 * during the sweep is in use: it stays, as if used then.  Not an RFC
 * matter: RFC 1813 has no open or close; the handle stays valid (the next
 * call opens the file again by its handle).
 *
 * Thread-safe; may run while rpcrdma_nfs3_dispatch() runs; sweeps of one
 * export run one at a time.  Counted in fcs_expired and fcs_dir_expired.
 * Return: 0, or -EINVAL when @exp is NULL.
 */
int rpcrdma_nfs3_export_expire(struct rpcrdma_nfs3_export *exp);

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

/* ---- exports(5): several exports, options per client ---- */

/** Limits of an exports file (more is an error naming the line). */
#define RPCRDMA_NFS3_EXPORTS_MAX 256u      /* exports */
#define RPCRDMA_NFS3_CLIENTS_MAX 256u      /* client entries of one export */
#define RPCRDMA_NFS3_EXPORTS_LINE_MAX 8192u /* bytes of a (joined) line */
/** Mounts MOUNT's DUMP remembers; more MNTs are served but not listed. */
#define RPCRDMA_NFS3_MOUNTLIST_MAX 1024u

/** Squashing (exports(5)): what AUTH_SYS ids become. */
enum rpcrdma_nfs3_squash {
	RPCRDMA_NFS3_ROOT_SQUASH = 0, /* uid/gid 0 -> anonuid/anongid (default) */
	RPCRDMA_NFS3_NO_ROOT_SQUASH,  /* ids unchanged */
	RPCRDMA_NFS3_ALL_SQUASH,      /* every id -> anonuid/anongid */
};

/** The options of one client entry of an export (exports(5)). */
struct rpcrdma_nfs3_xopts {
	bool xo_ro;                 /* ro: writes refused with NFS3ERR_ROFS */
	uint8_t xo_squash;          /* enum rpcrdma_nfs3_squash */
	bool xo_insecure;           /* MNT from a port >= 1024 allowed */
	uint32_t xo_anonuid;        /* default RPCRDMA_NFS3_NOBODY */
	uint32_t xo_anongid;        /* default RPCRDMA_NFS3_NOBODY */
	/* async: namespace operations reply without commit_metadata (the
	 * default, sync, fsyncs the directory first; docs/nfs3.md) */
	bool xo_async;
};

/** A parsed exports file (rpcrdma_nfs3_exports_parse()). */
struct rpcrdma_nfs3_exports;

/**
 * rpcrdma_nfs3_exports_parse - parse exports(5) text.
 * @name: the file's name, for messages.
 * @text: the contents (NUL-terminated).
 * @out: the table, owned by the caller (rpcrdma_nfs3_exports_free()).
 * @err: out: on failure, a message "NAME:LINE: what is wrong" (NUL-
 *       terminated, truncated to @errlen).
 *
 * Syntax: one export a line, "PATH [-DEFAULTOPTS] CLIENT[(OPTS)] ...";
 * PATH absolute, in double quotes when it has blanks, octal escapes \ooo;
 * '#' starts a comment; a backslash at the end of a line continues it.
 * CLIENT: '*', an IPv4 or IPv6 address, ADDR/PREFIX or ADDR/NETMASK, a
 * host name (resolved now, every address it has), or a wildcard (with '*'
 * or '?', matched against the reverse-resolved name of the caller).  No
 * client: '*'.  OPTS: rw, ro, root_squash, no_root_squash, all_squash,
 * no_all_squash, anonuid=N, anongid=N, sec=sys, fsid=N (0..65535, or root
 * for 0: the export's id in its file handles), secure, insecure, sync,
 * async (xo_async), backend=NAME (the export's backend: posix, the
 * default, or memory; every entry of a line that names one must name the
 * same); wdelay, no_wdelay, subtree_check and no_subtree_check
 * are accepted with no effect.  Defaults: ro, root_squash, secure, sync,
 * anonuid and anongid 65534.  An export's id without fsid= is derived from its
 * path; two exports with one id are an error.
 *
 * Return: 0; -EINVAL (a syntax error, an unknown option or value, a
 * relative path, netgroups, an export given twice, colliding ids, an
 * unknown backend or two backends for one export: @err
 * says which line); -E2BIG (over a limit above); -ENOENT (a host name that
 * does not resolve); -ENOMEM.
 */
int rpcrdma_nfs3_exports_parse(const char *name, const char *text,
			       struct rpcrdma_nfs3_exports **out,
			       char *err, size_t errlen);

/**
 * rpcrdma_nfs3_set_instance - note @state_dir, the server's state
 * directory (--state-dir; copied), as its identity: the same across
 * restarts of one server, different between servers that share a cluster.
 * A backend whose file system keeps per-client state in a cluster (cephfs)
 * derives its client identity from it, to reset the session its previous
 * incarnation left (docs/cephfs.md "A restarted gateway ends its old Ceph session").  Call
 * before opening exports; NULL forgets it.
 * Return: 0; -ENAMETOOLONG (empty, or 4096 bytes or more); -ENOMEM.
 */
int rpcrdma_nfs3_set_instance(const char *state_dir);

/** Longest grace period rpcrdma_nfs3_set_instance_grace() takes, seconds. */
#define RPCRDMA_NFS3_INSTANCE_GRACE_MAX 86400u

/**
 * rpcrdma_nfs3_set_instance_grace - note that this server's grace period
 * (its longest, NLM's or NFSv4.1's) lasts @sec seconds from now (0: none).
 * A backend shared by several servers (cephfs with grace=DIR) announces
 * its end to the others when it opens its first export, before it resets
 * its previous incarnation's session, and those servers refuse new locks
 * and opens until then (docs/cephfs.md "Grace across gateways").  Call
 * before opening exports.  Return: 0; -EINVAL (@sec over
 * RPCRDMA_NFS3_INSTANCE_GRACE_MAX).
 */
int rpcrdma_nfs3_set_instance_grace(uint32_t sec);

/**
 * rpcrdma_nfs3_exports_load - read and parse an exports file.
 * Return: as rpcrdma_nfs3_exports_parse(), or a negative errno from
 * opening or reading @path (-EFBIG over 1 MiB); @err says which.
 */
int rpcrdma_nfs3_exports_load(const char *path,
			      struct rpcrdma_nfs3_exports **out,
			      char *err, size_t errlen);

/**
 * struct rpcrdma_nfs3_exports_notes - how the parser tells its problems
 * (rpcrdma_nfs3_exports_parse_notes(), rpcrdma_nfs3_exports_load_notes()).
 * @xn_note: called with each problem, in line order: @error true for an
 *           error (the table is refused), false for a warning (such as
 *           "HOST (OPTS)": an option list standing alone applies to every
 *           host, as exportfs warns); @msg "NAME:LINE: text", valid for
 *           the call only.  NULL: none told.
 * @xn_arg: passed to @xn_note.
 * @xn_keep_going: after an error line go on with the next line, so that
 *           every error is told (rpcrdma-nfsd --check); the table is
 *           refused all the same.
 * @xn_check_paths: an export of the posix backend whose path is not a
 *           directory of this machine now is an error (-ENOENT, -ENOTDIR).
 */
struct rpcrdma_nfs3_exports_notes {
	void (*xn_note)(void *arg, bool error, const char *msg);
	void *xn_arg;
	bool xn_keep_going;
	bool xn_check_paths;
};

/**
 * rpcrdma_nfs3_exports_parse_notes - rpcrdma_nfs3_exports_parse() telling
 * its warnings and errors to @notes (NULL: as rpcrdma_nfs3_exports_parse()).
 * @err holds the first error.  Return: as rpcrdma_nfs3_exports_parse(),
 * the first error's code when there are several; with xn_check_paths also
 * -ENOENT or -ENOTDIR (a missing directory).
 */
int rpcrdma_nfs3_exports_parse_notes(const char *name, const char *text,
				     const struct rpcrdma_nfs3_exports_notes *notes,
				     struct rpcrdma_nfs3_exports **out,
				     char *err, size_t errlen);

/**
 * rpcrdma_nfs3_exports_load_notes - rpcrdma_nfs3_exports_load() telling
 * its problems to @notes (see rpcrdma_nfs3_exports_parse_notes()); a file
 * that cannot be read is told in @err only.
 */
int rpcrdma_nfs3_exports_load_notes(const char *path,
				    const struct rpcrdma_nfs3_exports_notes *notes,
				    struct rpcrdma_nfs3_exports **out,
				    char *err, size_t errlen);

/** rpcrdma_nfs3_exports_free - free a parsed table (NULL: no-op). */
void rpcrdma_nfs3_exports_free(struct rpcrdma_nfs3_exports *xt);

/** rpcrdma_nfs3_exports_count - the number of exports in @xt. */
unsigned rpcrdma_nfs3_exports_count(const struct rpcrdma_nfs3_exports *xt);

/** rpcrdma_nfs3_exports_path - the path of export @i (< count). */
const char *rpcrdma_nfs3_exports_path(const struct rpcrdma_nfs3_exports *xt,
				      unsigned i);

/**
 * rpcrdma_nfs3_exports_match - the options export @i gives @peer.
 * @out: out: the options of the first client entry (in file order) that
 *       matches @peer.
 * Return: true when one matches.  A wildcard entry matches @peer's
 * confirmed host name only: the reverse lookup of its address, whose
 * forward lookup lists that address again.  Names come from a cache
 * (positive and negative answers, each with a time to live) that resolver
 * threads fill; a miss waits for them at most a second, except on a
 * transport thread (rpcrdma_svc_on_transport_thread()), where it does not
 * wait.  A name not known in time: false (not matched, for now).
 */
bool rpcrdma_nfs3_exports_match(const struct rpcrdma_nfs3_exports *xt,
				unsigned i, const struct sockaddr *peer,
				struct rpcrdma_nfs3_xopts *out);

/**
 * The served exports: a table of opened exports that a SIGHUP-style reload
 * replaces while calls run (rpcrdma_nfs3_server_reload()).
 */
struct rpcrdma_nfs3_server;

/**
 * rpcrdma_nfs3_server_create - open every export of @xt.
 * @cfg: settings every export shares (nc_export and nc_no_root_squash are
 *       not used: @xt says which paths, clients and options).
 * @xt: the table (copied; the caller still owns it).
 * @out: the server (rpcrdma_nfs3_server_destroy()).
 *
 * Unless the caches are off or cfg->nc_fcache_idle_ms is
 * RPCRDMA_NFS3_FCACHE_IDLE_NEVER, starts the server's sweeper thread
 * (all signals blocked), which closes idle cache entries once a period.
 * Return: 0; -EINVAL (an empty table); -ENOMEM; the errors of
 * rpcrdma_nfs3_export_open() for an export that does not open (@err, when
 * not NULL, names it); -EAGAIN when the sweeper thread cannot start.
 */
int rpcrdma_nfs3_server_create(const struct rpcrdma_nfs3_config *cfg,
			       const struct rpcrdma_nfs3_exports *xt,
			       struct rpcrdma_nfs3_server **out,
			       char *err, size_t errlen);

/**
 * rpcrdma_nfs3_server_reload - serve @xt from the next call on.
 * Exports whose path and id are unchanged keep their open directory and
 * open-file cache; new ones are opened; removed ones are closed once the
 * last call using them ends, and their handles then answer NFS3ERR_STALE.
 * A client no longer listed gets NFS3ERR_ACCES.  Calls in progress finish
 * with the table they started with.  Thread-safe against dispatch and MOUNT;
 * one reload at a time (serialised inside).
 * Return: 0; -EINVAL (empty table); -ENOMEM; an export's open error (the
 * old table stays in force; @err names the export).
 */
int rpcrdma_nfs3_server_reload(struct rpcrdma_nfs3_server *srv,
			       const struct rpcrdma_nfs3_exports *xt,
			       char *err, size_t errlen);

/**
 * rpcrdma_nfs3_server_destroy - stop the sweeper and close every export
 * (no call may run).
 */
void rpcrdma_nfs3_server_destroy(struct rpcrdma_nfs3_server *srv);

/**
 * rpcrdma_nfs3_server_dispatch - the rpcrdma_svc_dispatch_fn for NFS v3
 * over the exports of @arg (a struct rpcrdma_nfs3_server).
 *
 * The export is the one the call's first file handle names (every NFSv3
 * procedure but NULL starts with one); the caller's options are those of
 * the first client entry of that export matching req->rq_peer.  A handle
 * of an export no longer served answers NFS3ERR_STALE, a caller no entry
 * matches NFS3ERR_ACCES, a modifying call on a ro entry NFS3ERR_ROFS; a
 * second handle (RENAME, LINK) of another export NFS3ERR_XDEV.  When a
 * wildcard entry needs the caller's host name and it is not known yet:
 * on the transport thread RPCRDMA_SVC_DEFER (the lookup is queued), on a
 * worker NFS3ERR_JUKEBOX once it waited a second for it.
 * Return: as rpcrdma_nfs3_dispatch().
 */
int rpcrdma_nfs3_server_dispatch(struct rpcrdma_svc_req *req, void *arg);

/**
 * rpcrdma_nfs3_server_allows - does any export of the table in force list
 * @peer?  For rpcrdma_svc_config.sc_accept (@arg: the server).
 * Return: true when one does.  Thread-safe.  When only a wildcard entry
 * could let @peer in and its host name is not known yet: on a transport
 * thread (a connection request) true, without waiting (each call on the
 * connection is then checked against its export); elsewhere false after
 * waiting a second at most.
 */
bool rpcrdma_nfs3_server_allows(const struct sockaddr *peer, void *arg);

/**
 * rpcrdma_nfs3_server_fcache_stats - rpcrdma_nfs3_fcache_stats() summed
 * over the exports now served.  Return: 0 or -EINVAL.
 */
int rpcrdma_nfs3_server_fcache_stats(struct rpcrdma_nfs3_server *srv,
				     struct rpcrdma_nfs3_fcache_stats *out);

/**
 * rpcrdma_nfs3_rpcbind_set - register NFS v3 over RPC-over-RDMA with the
 * local rpcbind (RFC 1833 RPCBPROC_SET over its local socket) under netid
 * "rdma" (IPv4) and "rdma6" (IPv6, RFC 5665 section 5.1).
 * @listen: the numeric listen address, or NULL for any (both netids, with
 *          the addresses 0.0.0.0 and ::); an address registers its family's.
 * @port: the RPC-over-RDMA port.
 * Return: 0; -ECONNREFUSED (no rpcbind); -EACCES (rpcbind refused);
 * -EIO (the call failed); -EINVAL (bad @listen or @port 0).  On failure
 * nothing stays registered.
 */
int rpcrdma_nfs3_rpcbind_set(const char *listen, uint16_t port);

/** rpcrdma_nfs3_rpcbind_unset - remove both netids' NFS v3 mappings. */
void rpcrdma_nfs3_rpcbind_unset(void);

/**
 * rpcrdma_nfs3_rpcbind_set_tcp - register NFS v3 over TCP with the local
 * rpcbind at listening socket @fd's port (rpcrdma_svc_tcp_socket()), under
 * "tcp" when it takes IPv4 and "tcp6" when it takes IPv6 (a dual-stack
 * wildcard: both), replacing an earlier mapping.
 * Return: 0; -ECONNREFUSED (no rpcbind, or it refused); -EAFNOSUPPORT;
 * -EBADF for @fd < 0; -errno of getsockname(2).  On failure nothing of
 * ours stays registered.
 */
int rpcrdma_nfs3_rpcbind_set_tcp(int fd);

/** rpcrdma_nfs3_rpcbind_unset_tcp - remove NFS v3's tcp and tcp6 mappings. */
void rpcrdma_nfs3_rpcbind_unset_tcp(void);

struct rpcrdma_mnt;

/**
 * rpcrdma_mnt_start - serve MOUNT v3 (RFC 1813 5) over TCP on a thread.
 * @srv: the exports (must outlive the MOUNT server).
 * @listen: numeric address to bind, NULL for any (IPv6 dual stack, else IPv4).
 * @port: TCP port (0: RPCRDMA_MNT_PORT).
 * @rpcbind: also register with rpcbind (svc_register with IPPROTO_TCP).
 * @out: the server (rpcrdma_mnt_stop()).
 *
 * MNT of an export's path answers its root handle and [AUTH_SYS,
 * AUTH_NONE] to a client it lists (from a port below 1024 unless the
 * client's entry says insecure), MNT3ERR_ACCES to others; other paths get
 * MNT3ERR_NOENT.  EXPORT lists every export with its client entries as
 * written; DUMP the mounts made (client address and path, at most
 * RPCRDMA_NFS3_MOUNTLIST_MAX), which UMNT and UMNTALL remove.
 * Only one MOUNT server may run per process (libtirpc keeps global state).
 *
 * Return: 0; -EBUSY (one is already running); -EINVAL (bad @listen);
 * -ENOMEM; a negative errno from socket/bind/listen/pthread_create;
 * -EIO when libtirpc refuses the transport or the registration.
 */
int rpcrdma_mnt_start(struct rpcrdma_nfs3_server *srv, const char *listen,
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
