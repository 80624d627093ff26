// SPDX-License-Identifier: MIT
/*
 * nfsd_table.c - the table of rpcrdma-nfsd's options: name, letter,
 * argument, range, default, configuration key and section, help.  The
 * command line, the configuration file, --help, the range checks and the
 * man-page test (tests/unit/test_nfsd_man.c) all read it.
 */
#include <errno.h>
#include <string.h>

#include <rpcrdma/nfs3.h>
#include <rpcrdma/nfs4.h>
#include <rpcrdma/nlm.h>
#include <rpcrdma/svc.h>

#include "nfsd_opts.h"

static int check_listen(const char *v, const char **why)
{
	struct sockaddr_storage ss;
	unsigned prefix;

	if (rpcrdma_nfs3_cidr_parse(v, &ss, &prefix) || strchr(v, '/')) {
		*why = "not a numeric address";
		return -EINVAL;
	}
	return 0;
}

static int check_cidr(const char *v, const char **why)
{
	struct sockaddr_storage ss;
	unsigned prefix;

	if (rpcrdma_nfs3_cidr_parse(v, &ss, &prefix)) {
		*why = "expected ADDR[/PREFIX]";
		return -EINVAL;
	}
	return 0;
}

static int check_absolute(const char *v, const char **why)
{
	if (v[0] != '/') {
		*why = "not an absolute path";
		return -EINVAL;
	}
	return 0;
}

static int check_backend(const char *v, const char **why)
{
	if (v[0] == ':' ||
	    strspn(v, "abcdefghijklmnopqrstuvwxyz0123456789_-:=.ABCDEFGHIJKLMNOPQRSTUVWXYZ") != strlen(v)) {
		*why = "expected a backend name (posix, memory), then its options as :OPT=VALUE";
		return -EINVAL;
	}
	return 0;
}

static int check_metrics(const char *v, const char **why)
{
	struct sockaddr_storage ss;

	if (rpcrdma_svc_metrics_parse(v, &ss)) {
		*why = "expected ADDR:PORT, [ADDR]:PORT or :PORT (numeric, port 1..65535)";
		return -EINVAL;
	}
	return 0;
}

#define PORT(def) .no_type = NFSD_UINT, .no_arg = "N", .no_min = 1, .no_max = 65535, \
	.no_default = def
#define SECONDS(lo, hi, def) .no_type = NFSD_UINT, .no_arg = "SECONDS", .no_min = lo, \
	.no_max = hi, .no_default = def
#define FLAG(slot, val) .no_type = NFSD_FLAG, .no_slot = slot, .no_value = val
#define KEY(sec, k) .no_section = sec, .no_key = k

const struct nfsd_opt nfsd_opts[NFSD_NOPTS] = {
[NFSD_EXPORT] = { "export", 'e', NFSD_STR, "DIR", .no_min = 1, .no_max = 4095,
	.no_range = "a directory", .no_default = "none", KEY("nfsd", "export"),
	.no_slot = NFSD_EXPORT, .no_once = true,
	.no_help = "one directory to export, read-write, to the --allow networks "
		   "(instead of an exports file)" },
[NFSD_EXPORTS] = { "exports", 0, NFSD_STR, "FILE", .no_min = 1, .no_max = 4095,
	.no_range = "a file in exports(5) syntax", .no_default = RPCRDMA_EXPORTS_FILE,
	KEY("nfsd", "exports"), .no_slot = NFSD_EXPORTS, .no_once = true,
	.no_help = "the exports and their clients and options (SIGHUP reads it again)" },
[NFSD_LISTEN] = { "listen", 'l', NFSD_STR, "ADDR", .no_min = 1, .no_max = 63,
	.no_range = "a numeric IPv4 or IPv6 address", .no_check = check_listen,
	.no_default = "any", KEY("nfsd", "listen"), .no_slot = NFSD_LISTEN,
	.no_help = "local address for RDMA, TCP and MOUNT" },
[NFSD_PORT] = { "port", 'p', PORT("20049"), KEY("nfsd", "port"), .no_slot = NFSD_PORT,
	.no_help = "RPC-over-RDMA port" },
[NFSD_MOUNT_PORT] = { "mount-port", 'm', PORT("20048"), KEY("mountd", "mount-port"),
	.no_slot = NFSD_MOUNT_PORT, .no_help = "MOUNT TCP port" },
[NFSD_TCP_PORT] = { "tcp-port", 0, PORT("2049"), KEY("nfsd", "tcp-port"),
	.no_slot = NFSD_TCP_PORT,
	.no_help = "NFS over TCP port (when not given and the port is taken: RDMA "
		   "only, with a warning)" },
[NFSD_NO_TCP] = { "no-tcp", 0, FLAG(NFSD_NO_TCP, false), .no_default = "yes",
	KEY("nfsd", "tcp"), .no_help = "serve NFS over RDMA only (tcp = no)" },
[NFSD_ALLOW] = { "allow", 'a', NFSD_LIST, "CIDR", .no_min = 1, .no_max = 64,
	.no_range = "ADDR[/PREFIX], at most 64", .no_check = check_cidr,
	.no_default = "the listen address's subnets and loopback", KEY("nfsd", "allow"),
	.no_slot = NFSD_ALLOW,
	.no_help = "with --export: allow clients in CIDR (repeatable; in the file: "
		   "blank-separated)" },
[NFSD_THREADS] = { "threads", 't', NFSD_UINT, "N", 1, 1024, .no_default = "4",
	KEY("nfsd", "threads"), .no_slot = NFSD_THREADS, .no_help = "worker threads" },
[NFSD_TRANSPORT_THREADS] = { "transport-threads", 0, NFSD_UINT, "N", 1,
	RPCRDMA_SVC_MAX_TRANSPORT_THREADS,
	.no_default = "one per CPU it may run on, at most --threads",
	KEY("nfsd", "transport-threads"), .no_slot = NFSD_TRANSPORT_THREADS,
	.no_help = "threads that own the connections and their completions, each "
		   "with --threads/N workers" },
[NFSD_CREDITS] = { "credits", 0, NFSD_UINT, "N", 1, 4096, .no_default = "128",
	KEY("nfsd", "credits"), .no_slot = NFSD_CREDITS,
	.no_help = "most credits granted per connection (a connection starts at 16, "
		   "grows with load)" },
[NFSD_MEMORY] = { "memory", 0, NFSD_SIZE, "SIZE", 64ull << 20, 0,
	.no_default = "a quarter of the machine's memory, at least 64M",
	KEY("nfsd", "memory"), .no_slot = NFSD_MEMORY,
	.no_help = "registered-memory budget, e.g. 512M or 4G" },
[NFSD_MAX_CONNS] = { "max-connections", 0, NFSD_UINT, "N", 1, 65536,
	.no_default = "as many idle ones as --memory holds", KEY("nfsd", "max-connections"),
	.no_slot = NFSD_MAX_CONNS, .no_help = "connections served at once; more are refused" },
[NFSD_MAX_CONNS_HOST] = { "max-connections-per-host", 0, NFSD_UINT, "N", 1, 65536,
	.no_default = "--max-connections / 8, at least 16",
	KEY("nfsd", "max-connections-per-host"), .no_slot = NFSD_MAX_CONNS_HOST,
	.no_help = "connections from one host (an IPv4 address or an IPv6 /64) at once" },
[NFSD_IDLE_TIMEOUT] = { "idle-timeout", 0, SECONDS(0, 86400, "360"),
	KEY("nfsd", "idle-timeout"), .no_slot = NFSD_IDLE_TIMEOUT,
	.no_help = "close a connection no call came on for this long, with nothing in "
		   "progress and no NFSv4.1 back channel (0: never)" },
[NFSD_FILE_CACHE] = { "file-cache", 0, NFSD_UINT, "N", 0, 1u << 20, .no_default = "1024",
	KEY("nfsd", "file-cache"), .no_slot = NFSD_FILE_CACHE,
	.no_help = "open files kept for READ/WRITE/GETATTR/COMMIT (0: no cache)" },
[NFSD_FILE_CACHE_IDLE] = { "file-cache-idle", 0, SECONDS(0, 86400, "2"),
	KEY("nfsd", "file-cache-idle"), .no_slot = NFSD_FILE_CACHE_IDLE,
	.no_help = "close cached files and directories no call used for S to 2S "
		   "seconds (0: never)" },
[NFSD_POLL] = { "poll", 0, FLAG(NFSD_POLL, true), .no_default = "no", KEY("nfsd", "poll"),
	.no_help = "busy-poll completions (lower latency, one core busy)" },
[NFSD_REPLY_POST] = { "reply-post", 0, NFSD_CHOICE, "MODE",
	.no_choices = "auto,transport,worker",
	.no_default = "auto: the worker on hardware, the transport thread on Soft-RoCE and siw",
	KEY("nfsd", "reply-post"), .no_slot = NFSD_REPLY_POST,
	.no_help = "who posts a worker's reply" },
[NFSD_WORKERS_ONLY] = { "workers-only", 0, FLAG(NFSD_WORKERS_ONLY, true), .no_default = "no",
	KEY("nfsd", "workers-only"),
	.no_help = "serve every call on a worker thread (not the quick ones on the "
		   "transport thread)" },
[NFSD_NFS4] = { "nfs4", 0, FLAG(NFSD_NFS4, true), .no_default = "yes", KEY("nfsd", "nfs4"),
	.no_help = "serve NFSv4.1 too (the default; nfs4 = yes)" },
[NFSD_NO_NFS4] = { "no-nfs4", 0, FLAG(NFSD_NFS4, false), .no_default = "yes",
	.no_help = "serve NFSv3 only (nfs4 = no)" },
[NFSD_NO_DELEG] = { "no-delegations", 0, FLAG(NFSD_NO_DELEG, false), .no_default = "yes",
	KEY("nfsd", "delegations"),
	.no_help = "grant no NFSv4.1 read delegation (delegations = no)" },
[NFSD_LEASE] = { "lease", 0, SECONDS(10, 3600, "90"), KEY("nfsd", "lease"),
	.no_slot = NFSD_LEASE, .no_help = "NFSv4.1 lease time" },
[NFSD_NFS4_CLIENTS] = { "nfs4-clients", 0, NFSD_UINT, "N", RPCRDMA_NFS4_CLIENTS_MIN,
	RPCRDMA_NFS4_CLIENTS_MAX, .no_default = "what 1/16 of --memory holds, at least 128",
	KEY("nfsd", "nfs4-clients"), .no_slot = NFSD_NFS4_CLIENTS,
	.no_help = "NFSv4.1 clients at once (about 79 KiB each)" },
[NFSD_HANDLE_KEY] = { "handle-key", 'k', NFSD_STR, "FILE", 1, 4095, .no_range = "a file",
	.no_default = "/var/lib/rpcrdma/nfsd-handle.key", KEY("nfsd", "handle-key"),
	.no_slot = NFSD_HANDLE_KEY, .no_help = "file handle key" },
[NFSD_NO_ROOT_SQUASH] = { "no-root-squash", 0, FLAG(NFSD_NO_ROOT_SQUASH, false),
	.no_default = "yes", KEY("nfsd", "root-squash"),
	.no_help = "with --export: do not map uid/gid 0 to 65534 (root-squash = no)" },
[NFSD_ASYNC] = { "async", 0, FLAG(NFSD_ASYNC, true), .no_default = "no",
	KEY("nfsd", "async"),
	.no_help = "with --export: reply to CREATE, REMOVE, RENAME, SETATTR... before "
		   "the change is on disk" },
[NFSD_BACKEND] = { "backend", 0, NFSD_STR, "NAME[:OPT=V...]", 1, 1023,
	.no_range = "posix, or memory[:bytes=SIZE,nodes=N]", .no_check = check_backend,
	.no_default = "posix", KEY("nfsd", "backend"), .no_slot = NFSD_BACKEND,
	.no_help = "with --export: what serves DIR (exports files: backend=)" },
[NFSD_RPCBIND] = { "rpcbind", 0, FLAG(NFSD_RPCBIND, true), .no_default = "no",
	KEY("nfsd", "rpcbind"),
	.no_help = "register MOUNT, NLM, NSM and NFS with rpcbind, unregistered at exit" },
[NFSD_NO_LOCKING] = { "no-locking", 0, FLAG(NFSD_NO_LOCKING, false), .no_default = "yes",
	KEY("lockd", "locking"),
	.no_help = "no lock manager: clients must mount with nolock (locking = no)" },
[NFSD_NLM_PORT] = { "nlm-port", 0, PORT("any free port"), KEY("lockd", "nlm-port"),
	.no_slot = NFSD_NLM_PORT, .no_help = "NLM v4 TCP port" },
[NFSD_NSM_PORT] = { "nsm-port", 0, PORT("any free port"), KEY("statd", "nsm-port"),
	.no_slot = NFSD_NSM_PORT, .no_help = "NSM TCP port" },
[NFSD_STATE_DIR] = { "state-dir", 0, NFSD_STR, "DIR", 1, 4095,
	.no_range = "an absolute path", .no_check = check_absolute,
	.no_default = RPCRDMA_NLM_STATE_DIR, KEY("lockd", "state-dir"),
	.no_slot = NFSD_STATE_DIR,
	.no_help = "lock manager state and NFSv4.1 client records" },
[NFSD_GRACE] = { "grace", 0, SECONDS(0, 86400, "90"), KEY("lockd", "grace"),
	.no_slot = NFSD_GRACE,
	.no_help = "grace period after start: only reclaims are granted, by NLM and "
		   "NFSv4.1 (0: none)" },
[NFSD_MAX_LOCKS] = { "max-locks", 0, NFSD_UINT, "N", 1, 1u << 24, .no_default = "4096",
	KEY("lockd", "max-locks"), .no_slot = NFSD_MAX_LOCKS,
	.no_help = "lock records, waiting locks, shares each" },
[NFSD_NSM_NAME] = { "nsm-name", 0, NFSD_STR, "NAME", 1, 1024,
	.no_range = "1..1024 characters",
	.no_default = "the --listen address, else the host name", KEY("statd", "nsm-name"),
	.no_slot = NFSD_NSM_NAME, .no_help = "our name in reboot notifications" },
[NFSD_STATS] = { "stats", 0, FLAG(NFSD_STATS, true), .no_default = "no",
	KEY("stats", "stats"), .no_help = "print the final counters as JSON on exit" },
[NFSD_CONTROL] = { "control", 0, NFSD_STR, "PATH", 1, 107,
	.no_range = "a path of 1..107 bytes, or none",
	.no_default = RPCRDMA_SVC_CONTROL_DIR "/PORT.sock", KEY("stats", "control"),
	.no_slot = NFSD_CONTROL, .no_help = "control socket for rpcrdma-stat (none: no socket)" },
[NFSD_METRICS] = { "metrics", 0, NFSD_STR, "ADDR:PORT", 1, 127,
	.no_range = "ADDR:PORT, [ADDR]:PORT or :PORT", .no_check = check_metrics,
	.no_default = "none", KEY("stats", "metrics"), .no_slot = NFSD_METRICS,
	.no_help = "serve Prometheus metrics at http://ADDR:PORT/metrics" },
[NFSD_CAPTURE] = { "capture", 0, NFSD_STR, "FILE", 1, 4095, .no_range = "a new file",
	.no_default = "none", KEY("capture", "capture"), .no_slot = NFSD_CAPTURE,
	.no_help = "write every RPC-over-RDMA message to FILE (pcap, mode 0600: it "
		   "holds credentials and data)" },
[NFSD_CAPTURE_SIZE] = { "capture-size", 0, NFSD_SIZE, "SIZE", 64u << 10, 0, .no_zero = true,
	.no_default = "100M", KEY("capture", "capture-size"), .no_slot = NFSD_CAPTURE_SIZE,
	.no_help = "start a new file at SIZE bytes (0: no limit)" },
[NFSD_CAPTURE_FILES] = { "capture-files", 0, NFSD_UINT, "N", 1, 1000, .no_default = "10",
	KEY("capture", "capture-files"), .no_slot = NFSD_CAPTURE_FILES,
	.no_help = "keep N files (FILE, FILE.1 ...; 1: stop when FILE is full)" },
[NFSD_CAPTURE_DATA] = { "capture-data", 0, NFSD_UINT, "N", 0, 1u << 20, .no_default = "0",
	KEY("capture", "capture-data"), .no_slot = NFSD_CAPTURE_DATA,
	.no_help = "also write the first N bytes of every RDMA Read and Write" },
[NFSD_VERBOSE] = { "verbose", 'v', NFSD_COUNT, NULL, 0, 9, .no_default = "0",
	KEY("nfsd", "verbose"), .no_slot = NFSD_VERBOSE,
	.no_help = "more logging (repeatable; in the file: a number)" },
[NFSD_CONFIG] = { "config", 'c', NFSD_STR, "FILE", 1, 4095, .no_range = "a file",
	.no_default = RPCRDMA_CONF_FILE, .no_slot = NFSD_CONFIG,
	.no_help = "the configuration file (rpcrdma.conf(5); the command line overrides it)" },
[NFSD_CHECK] = { "check", 0, FLAG(NFSD_CHECK, true), .no_default = "no",
	.no_help = "check the configuration and the exports, tell every problem, "
		   "exit 0 (none) or 2; no device or root needed" },
[NFSD_VERSION] = { "version", 'V', FLAG(NFSD_VERSION, true), .no_default = "no",
	.no_help = "print the version and exit" },
[NFSD_HELP] = { "help", 'h', FLAG(NFSD_HELP, true), .no_default = "no",
	.no_help = "this text" },
};
