// SPDX-License-Identifier: MIT
/*
 * nfs_names.c - rpcrdma-nfs commands that change names and modes: mkdir,
 * rm, rmdir, mv, ln, ln -s, chmod, and readlink.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nfs.h"

/* Split "a/b/c" into the parent's handle and "c". */
int resolve_parent(struct rpcrdma_nfsc *nc, const char *path,
			  struct rpcrdma_nfsc_fh *dir, char *name, size_t cap)
{
	char *copy = strdup(path), *slash;
	size_t len;
	int rc;

	if (!copy)
		return -ENOMEM;
	len = strlen(copy);
	while (len > 1 && copy[len - 1] == '/')
		copy[--len] = '\0';
	slash = strrchr(copy, '/');
	if (slash) {
		*slash = '\0';
		if (strlen(slash + 1) >= cap) {
			free(copy);
			return -ENAMETOOLONG;
		}
		strcpy(name, slash + 1);
		rc = rpcrdma_nfsc_lookup_path(nc, copy, dir, NULL);
	} else {
		if (len >= cap) {
			free(copy);
			return -ENAMETOOLONG;
		}
		strcpy(name, copy);
		rpcrdma_nfsc_root(nc, dir);
		rc = 0;
	}
	if (!rc && (!name[0] || !strcmp(name, ".") || !strcmp(name, "..")))
		rc = -EINVAL;
	free(copy);
	return rc;
}

/* mkdir, rm, rmdir */
int cmd_dirop(struct rpcrdma_nfsc *nc, const char *cmd, const char *path)
{
	struct rpcrdma_nfsc_fh dir;
	char name[256];
	int rc;

	rc = resolve_parent(nc, path, &dir, name, sizeof(name));
	if (!rc) {
		if (!strcmp(cmd, "mkdir"))
			rc = rpcrdma_nfsc_mkdir(nc, &dir, name, 0755, NULL);
		else if (!strcmp(cmd, "rm"))
			rc = rpcrdma_nfsc_remove(nc, &dir, name);
		else
			rc = rpcrdma_nfsc_rmdir(nc, &dir, name);
	}
	return rc ? fail(path, rc) : 0;
}

int cmd_mv(struct rpcrdma_nfsc *nc, const char *from, const char *to)
{
	struct rpcrdma_nfsc_fh fdir, tdir;
	char fname[256], tname[256];
	int rc;

	rc = resolve_parent(nc, from, &fdir, fname, sizeof(fname));
	if (rc)
		return fail(from, rc);
	rc = resolve_parent(nc, to, &tdir, tname, sizeof(tname));
	if (rc)
		return fail(to, rc);
	rc = rpcrdma_nfsc_rename(nc, &fdir, fname, &tdir, tname);
	return rc ? fail(from, rc) : 0;
}

int cmd_ln(struct rpcrdma_nfsc *nc, const char *target, const char *link)
{
	struct rpcrdma_nfsc_fh dir;
	char name[256];
	int rc;

	rc = resolve_parent(nc, link, &dir, name, sizeof(name));
	if (!rc)
		rc = rpcrdma_nfsc_symlink(nc, &dir, name, target);
	return rc ? fail(link, rc) : 0;
}

/* ln TARGET LINK: a hard link (LINK). */
int cmd_hardlink(struct rpcrdma_nfsc *nc, const char *target, const char *link)
{
	struct rpcrdma_nfsc_fh dir, fh;
	char name[256];
	int rc;

	rc = rpcrdma_nfsc_lookup_path(nc, target, &fh, NULL);
	if (rc)
		return fail(target, rc);
	rc = resolve_parent(nc, link, &dir, name, sizeof(name));
	if (!rc)
		rc = rpcrdma_nfsc_link(nc, &fh, &dir, name);
	return rc ? fail(link, rc) : 0;
}

/* chmod MODE PATH (octal mode, SETATTR). */
int cmd_chmod(struct rpcrdma_nfsc *nc, const char *mode, const char *path)
{
	struct rpcrdma_nfsc_sattr sa = { .sa_set_mode = true };
	struct rpcrdma_nfsc_fh fh;
	char *end;
	unsigned long m;
	int rc;

	errno = 0;
	m = strtoul(mode, &end, 8);
	if (errno || end == mode || *end || m > 07777) {
		fprintf(stderr, PROG ": chmod: invalid mode '%s' (octal)\n", mode);
		return EXIT_USAGE;
	}
	sa.sa_mode = (uint32_t)m;
	rc = rpcrdma_nfsc_lookup_path(nc, path, &fh, NULL);
	if (!rc)
		rc = rpcrdma_nfsc_setattr(nc, &fh, &sa);
	return rc ? fail(path, rc) : 0;
}

int cmd_readlink(struct rpcrdma_nfsc *nc, const char *path)
{
	struct rpcrdma_nfsc_fh dir, fh;
	char name[256], target[4097];
	int rc;

	rc = resolve_parent(nc, path, &dir, name, sizeof(name));
	if (!rc)
		rc = rpcrdma_nfsc_lookup(nc, &dir, name, &fh, NULL);
	if (!rc)
		rc = rpcrdma_nfsc_readlink(nc, &fh, target, sizeof(target));
	if (rc)
		return fail(path, rc);
	printf("%s\n", target);
	return 0;
}
