/* SPDX-License-Identifier: MIT */
/*
 * nfsd_opts.h - rpcrdma-nfsd's options: one table (nfsd_opts.c) drives the
 * command line (getopt_long), the configuration file (rpcrdma.conf(5), INI
 * sections of "key = value"), --help and the range checks; the values,
 * where each came from, and the problems found on the way.
 */
#ifndef RPCRDMA_TOOLS_NFSD_OPTS_H
#define RPCRDMA_TOOLS_NFSD_OPTS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define NFSD_PROG "rpcrdma-nfsd"

/* what an option's argument is */
enum nfsd_type {
	NFSD_FLAG,   /* none; in the file: yes/no */
	NFSD_COUNT,  /* none, repeatable (-v -v); in the file: a number */
	NFSD_UINT,   /* a decimal number in no_min..no_max */
	NFSD_SIZE,   /* bytes with K, M, G, T (binary), at least no_min */
	NFSD_STR,    /* text, no_min..no_max bytes, checked by no_check */
	NFSD_LIST,   /* repeatable text (--allow), each checked by no_check */
	NFSD_CHOICE, /* one of no_choices (comma-separated) */
};

/* every option; the value slots are indexed by these too */
enum nfsd_id {
	NFSD_EXPORT, NFSD_EXPORTS, NFSD_LISTEN, NFSD_PORT, NFSD_MOUNT_PORT,
	NFSD_TCP_PORT, NFSD_NO_TCP, NFSD_ALLOW, NFSD_THREADS,
	NFSD_TRANSPORT_THREADS, NFSD_CREDITS, NFSD_MEMORY, NFSD_MAX_CONNS,
	NFSD_MAX_CONNS_HOST, NFSD_IDLE_TIMEOUT, NFSD_FILE_CACHE,
	NFSD_FILE_CACHE_IDLE, NFSD_POLL, NFSD_REPLY_POST, NFSD_WORKERS_ONLY,
	NFSD_NFS4, NFSD_NO_NFS4, NFSD_NO_DELEG, NFSD_LEASE, NFSD_NFS4_CLIENTS,
	NFSD_HANDLE_KEY, NFSD_NO_ROOT_SQUASH, NFSD_ASYNC, NFSD_BACKEND,
	NFSD_RPCBIND, NFSD_NO_LOCKING, NFSD_NLM_PORT, NFSD_NSM_PORT,
	NFSD_STATE_DIR, NFSD_GRACE, NFSD_MAX_LOCKS, NFSD_NSM_NAME, NFSD_STATS,
	NFSD_CONTROL, NFSD_METRICS, NFSD_CAPTURE, NFSD_CAPTURE_SIZE,
	NFSD_CAPTURE_FILES, NFSD_CAPTURE_DATA, NFSD_VERBOSE, NFSD_CONFIG,
	NFSD_CHECK, NFSD_VERSION, NFSD_HELP,
	NFSD_NOPTS
};

/* one option of the table */
struct nfsd_opt {
	const char *no_long;      /* "credits": --credits */
	char no_short;            /* 'c', or 0 */
	enum nfsd_type no_type;
	const char *no_arg;       /* the argument's name in --help ("N"); NULL: none */
	uint64_t no_min, no_max;  /* NFSD_UINT, NFSD_SIZE (no_max unused), NFSD_STR length */
	bool no_zero;             /* 0 is taken besides no_min.. (a size: no limit) */
	const char *no_choices;   /* NFSD_CHOICE: "auto,transport,worker" */
	const char *no_range;     /* NFSD_STR, NFSD_LIST: what is taken, in words */
	/* NFSD_STR, NFSD_LIST: 0 or -EINVAL for @v (set *why to what is wrong) */
	int (*no_check)(const char *v, const char **why);
	const char *no_default;   /* the default as --help and the man page say */
	const char *no_section;   /* the configuration file's section; NULL: */
	const char *no_key;       /*   command line only (or no_slot's key) */
	enum nfsd_id no_slot;     /* the value it sets: itself, or what it negates */
	bool no_value;            /* NFSD_FLAG: the value it sets */
	bool no_once;             /* twice on the command line is refused */
	const char *no_help;      /* --help's text (words; wrapped) */
};

/* the table, NFSD_NOPTS entries in enum nfsd_id order */
extern const struct nfsd_opt nfsd_opts[NFSD_NOPTS];

/* where a value came from */
enum nfsd_from { NFSD_UNSET, NFSD_FROM_FILE, NFSD_FROM_CMDLINE };

/* one value slot */
struct nfsd_val {
	enum nfsd_from nv_from;
	enum nfsd_id nv_opt;      /* the option that set it (--nfs4 or --no-nfs4) */
	uint64_t nv_u;            /* FLAG (0, 1), COUNT, UINT, SIZE */
	char *nv_s;               /* STR, CHOICE (owned) */
	char **nv_list;           /* LIST (owned) */
	unsigned nv_n;
	unsigned nv_line;         /* the file's line it came from */
};

/* the whole configuration: nfsd_conf_init(), nfsd_conf_free() */
struct nfsd_conf {
	struct nfsd_val nc_v[NFSD_NOPTS];
	const char *nc_path;      /* the configuration file read (NULL: none) */
	FILE *nc_log;             /* where problems are told (stderr) */
	unsigned nc_problems;     /* problems told so far */
};

/**
 * nfsd_conf_init - an empty configuration telling problems to @log.
 */
void nfsd_conf_init(struct nfsd_conf *cf, FILE *log);

/** nfsd_conf_free - free the values @cf holds (not @cf itself). */
void nfsd_conf_free(struct nfsd_conf *cf);

/**
 * nfsd_problem - tell one problem "FILE:LINE: text" (@file NULL: "rpcrdma-nfsd:
 * text"; @line 0: "FILE: text") to cf->nc_log and count it.
 */
void nfsd_problem(struct nfsd_conf *cf, const char *file, unsigned line,
		  const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/**
 * nfsd_opt_range - @o's range as the errors, --help and the man page give
 * it ("1..4096", "at least 64M", "0, or at least 64K", "auto, transport,
 * worker", "an absolute path") into @buf (@len bytes).  Returns @buf; ""
 * for options with no argument.
 */
const char *nfsd_opt_range(const struct nfsd_opt *o, char *buf, size_t len);

/**
 * nfsd_opt_find_key - the option of key @key in section @section, NULL
 * if none; *@elsewhere (may be NULL) the option of that key in another
 * section when it is in the wrong one.
 */
const struct nfsd_opt *nfsd_opt_find_key(const char *section, const char *key,
					 const struct nfsd_opt **elsewhere);

/**
 * nfsd_opt_set - give option @o the value @v (NULL for a flag or count
 * on the command line) from @from (@file and @line for the file, for
 * messages).  A command-line value replaces a file's; a file's value is
 * checked but not taken when the command line gave the option.  Problems
 * (out of range, twice, contradictions) are told through nfsd_problem().
 * Return: 0; -EINVAL (told).
 */
int nfsd_opt_set(struct nfsd_conf *cf, const struct nfsd_opt *o, const char *v,
		 enum nfsd_from from, const char *file, unsigned line);

/**
 * nfsd_usage - --help's text, generated from the table, on @f.
 */
void nfsd_usage(FILE *f);

/* exit statuses of nfsd_conf_load() besides 0 */
#define NFSD_EXIT_DONE  -1  /* --help or --version printed: exit 0 */

/**
 * nfsd_conf_load - the command line @argc/@argv, then the configuration
 * file (--config FILE, or @default_path when it exists), into @cf
 * (nfsd_conf_init() first); every problem is told, then the options that
 * contradict each other are.
 * Return: 0 (usable unless cf->nc_problems); NFSD_EXIT_DONE (--help or
 * --version printed); 2 (problems: told).
 */
int nfsd_conf_load(struct nfsd_conf *cf, int argc, char **argv,
		   const char *default_path);

/**
 * nfsd_conf_read_file - read the INI file @path into @cf (libinih):
 * every unknown section or key, malformed line and bad value is told with
 * the file and line; a key the command line gave is checked, not taken.
 * Return: 0; -ENOENT (no such file: not told, the caller decides); another
 * negative errno from opening it (told).
 */
int nfsd_conf_read_file(struct nfsd_conf *cf, const char *path);

/* the value accessors: is it set, its number, its text */
static inline bool nfsd_is_set(const struct nfsd_conf *cf, enum nfsd_id id)
{
	return cf->nc_v[nfsd_opts[id].no_slot].nv_from != NFSD_UNSET;
}

static inline uint64_t nfsd_u(const struct nfsd_conf *cf, enum nfsd_id id, uint64_t dflt)
{
	const struct nfsd_val *v = &cf->nc_v[nfsd_opts[id].no_slot];

	return v->nv_from != NFSD_UNSET ? v->nv_u : dflt;
}

static inline const char *nfsd_s(const struct nfsd_conf *cf, enum nfsd_id id)
{
	return cf->nc_v[nfsd_opts[id].no_slot].nv_s;
}

/* a flag: the option's own sense (--no-tcp: true when TCP is off) */
static inline bool nfsd_flag(const struct nfsd_conf *cf, enum nfsd_id id)
{
	const struct nfsd_opt *o = &nfsd_opts[id];
	const struct nfsd_val *v = &cf->nc_v[o->no_slot];

	/* the slot holds the key's sense (tcp = yes); unset: its default */
	bool sense = v->nv_from != NFSD_UNSET ? v->nv_u != 0 :
		     !strcmp(nfsd_opts[o->no_slot].no_default, "yes");

	return sense == o->no_value;
}

/**
 * nfsd_conf_cross - tell the options of @cf that go together or exclude
 * each other wrongly (--lease with --no-nfs4, --capture-size without
 * --capture, --export with --exports, --allow with --exports...).
 */
void nfsd_conf_cross(struct nfsd_conf *cf);

/**
 * nfsd_exports_note - the exports parser's notes printer for
 * rpcrdma_nfs3_exports_notes: @arg a struct nfsd_conf whose problems the
 * errors (and, in --check, warnings) count.
 */
void nfsd_exports_note(void *arg, bool error, const char *msg);

/**
 * nfsd_check - rpcrdma-nfsd --check: the exports (--export DIR or the
 * exports file) of @cf checked as well, every problem told with file and
 * line (syntax, unknown options, missing directories, an empty file, an
 * option list standing alone); needs no device and no root.
 * Return: the exit status: 0 (no problem in the configuration either), 2.
 */
int nfsd_check(struct nfsd_conf *cf, const char *default_exports);

#endif
