// SPDX-License-Identifier: MIT
/*
 * nfsd_check.c - what rpcrdma-nfsd checks before serving: options that
 * go together, and --check, which reads the configuration and the exports
 * and tells every problem with its file and line, without a device or root.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <rpcrdma/nfs3.h>

#include "nfsd_opts.h"

/* "--lease" or "lease (FILE:LINE)": how the messages name an option */
static const char *named(const struct nfsd_conf *cf, enum nfsd_id id, char *buf, size_t len)
{
	const struct nfsd_val *v = &cf->nc_v[nfsd_opts[id].no_slot];

	if (v->nv_from == NFSD_FROM_FILE)
		snprintf(buf, len, "%s (%s:%u)", nfsd_opts[id].no_key, cf->nc_path, v->nv_line);
	else
		snprintf(buf, len, "--%s", nfsd_opts[id].no_long);
	return buf;
}

void nfsd_conf_cross(struct nfsd_conf *cf)
{
	static const enum nfsd_id nfs4_only[] = { NFSD_LEASE, NFSD_NFS4_CLIENTS };
	static const enum nfsd_id capture_ones[] = {
		NFSD_CAPTURE_SIZE, NFSD_CAPTURE_FILES, NFSD_CAPTURE_DATA,
	};
	static const enum nfsd_id export_ones[] = {
		NFSD_ALLOW, NFSD_NO_ROOT_SQUASH, NFSD_ASYNC, NFSD_BACKEND,
	};
	char a[600], b[600];

	if (nfsd_flag(cf, NFSD_NO_NFS4)) {
		if (nfsd_flag(cf, NFSD_NO_DELEG) && nfsd_is_set(cf, NFSD_NO_DELEG))
			nfsd_problem(cf, NULL, 0, "%s and %s: delegations are NFSv4.1's",
				     named(cf, NFSD_NO_DELEG, a, sizeof(a)),
				     named(cf, NFSD_NO_NFS4, b, sizeof(b)));
		for (size_t i = 0; i < sizeof(nfs4_only) / sizeof(nfs4_only[0]); i++)
			if (nfsd_is_set(cf, nfs4_only[i]))
				nfsd_problem(cf, NULL, 0, "%s and %s: %s NFSv4.1's",
					     named(cf, nfs4_only[i], a, sizeof(a)),
					     named(cf, NFSD_NO_NFS4, b, sizeof(b)),
					     nfs4_only[i] == NFSD_LEASE ? "leases are" :
					     "the tables are");
	}
	if (!nfsd_is_set(cf, NFSD_CAPTURE))
		for (size_t i = 0; i < sizeof(capture_ones) / sizeof(capture_ones[0]); i++)
			if (nfsd_is_set(cf, capture_ones[i]))
				nfsd_problem(cf, NULL, 0, "%s needs --capture FILE",
					     named(cf, capture_ones[i], a, sizeof(a)));
	if (nfsd_is_set(cf, NFSD_EXPORT) && nfsd_is_set(cf, NFSD_EXPORTS))
		nfsd_problem(cf, NULL, 0, "give one of --export DIR and --exports FILE: %s and %s",
			     named(cf, NFSD_EXPORT, a, sizeof(a)),
			     named(cf, NFSD_EXPORTS, b, sizeof(b)));
	else if (!nfsd_is_set(cf, NFSD_EXPORT))
		for (size_t i = 0; i < sizeof(export_ones) / sizeof(export_ones[0]); i++)
			if (nfsd_is_set(cf, export_ones[i]) &&
			    (export_ones[i] != NFSD_NO_ROOT_SQUASH ||
			     nfsd_flag(cf, NFSD_NO_ROOT_SQUASH)))
				nfsd_problem(cf, NULL, 0, "%s goes with --export DIR; with an "
					     "exports file the file gives clients and options",
					     named(cf, export_ones[i], a, sizeof(a)));
}

void nfsd_exports_note(void *arg, bool error, const char *msg)
{
	struct nfsd_conf *cf = arg;

	if (error)
		cf->nc_problems++;
	if (cf->nc_log)
		fprintf(cf->nc_log, "%s\n", msg);
}

/* --check's notes: warnings are problems too */
static void check_note(void *arg, bool error, const char *msg)
{
	(void)error;
	nfsd_exports_note(arg, true, msg);
}

int nfsd_check(struct nfsd_conf *cf, const char *default_exports)
{
	struct rpcrdma_nfs3_exports_notes notes = {
		.xn_note = check_note, .xn_arg = cf, .xn_keep_going = true,
		.xn_check_paths = true,
	};
	struct rpcrdma_nfs3_exports *xt = NULL;
	const char *dir = nfsd_s(cf, NFSD_EXPORT), *file = nfsd_s(cf, NFSD_EXPORTS);
	const char *backend = nfsd_s(cf, NFSD_BACKEND);
	char msg[1024], real[PATH_MAX];
	struct stat st;
	unsigned before;
	int err;

	if (dir) {
		/* --export DIR: a directory of this machine (posix) */
		if (backend && strcmp(backend, "posix") && strncmp(backend, "posix:", 6)) {
			if (dir[0] != '/')
				nfsd_problem(cf, NULL, 0, "--export %s: --backend %s needs an "
					     "absolute path", dir, backend);
		} else if (!realpath(dir, real) || stat(real, &st) < 0) {
			nfsd_problem(cf, NULL, 0, "export directory %s: %s", dir, strerror(errno));
		} else if (!S_ISDIR(st.st_mode)) {
			nfsd_problem(cf, NULL, 0, "export %s: not a directory", dir);
		}
	} else if (!nfsd_is_set(cf, NFSD_EXPORT)) {
		if (!file)
			file = default_exports;
		before = cf->nc_problems;
		err = rpcrdma_nfs3_exports_load_notes(file, &notes, &xt, msg, sizeof(msg));
		if (err && cf->nc_problems == before) /* unreadable: "FILE: why" */
			nfsd_exports_note(cf, true, msg[0] ? msg : strerror(-err));
		if (!err && !rpcrdma_nfs3_exports_count(xt))
			nfsd_problem(cf, file, 0, "no exports (the file is empty, or only comments)");
		rpcrdma_nfs3_exports_free(xt);
	}
	if (cf->nc_problems) {
		fprintf(stdout, NFSD_PROG " --check: %u problem%s\n", cf->nc_problems,
			cf->nc_problems == 1 ? "" : "s");
		return 2;
	}
	fprintf(stdout, NFSD_PROG " --check: %s%s%s: no problems\n",
		cf->nc_path ? cf->nc_path : "no configuration file", dir ? ", --export " : ", ",
		dir ? dir : file);
	return 0;
}
