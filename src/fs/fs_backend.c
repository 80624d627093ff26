// SPDX-License-Identifier: MIT
/*
 * fs_backend.c - the backends an export may name (exports(5) option
 * backend=NAME, rpcrdma_nfs3_config nc_backend): posix, memory, and
 * cephfs when built with libcephfs.
 */
#include <string.h>

#include "fs_backend.h"
#ifdef RPCRDMA_HAVE_CEPHFS
/* fs_cephfs.c (its header needs libcephfs' and 64-bit file offsets) */
extern const struct fs_backend fs_cephfs_backend;
#endif

static const struct fs_backend *const g_backends[] = {
	&fs_posix_backend,
	&fs_memory_backend,
#ifdef RPCRDMA_HAVE_CEPHFS
	&fs_cephfs_backend, /* built with libcephfs (CMake RPCRDMA_CEPHFS) */
#endif
};

const struct fs_backend *fs_backend_find(const char *name)
{
	if (!name)
		return NULL;
	for (size_t i = 0; i < sizeof(g_backends) / sizeof(g_backends[0]); i++)
		if (!strcmp(g_backends[i]->be_name, name))
			return g_backends[i];
	return NULL;
}

const struct fs_backend *fs_backend_parse(const char *spec,
					  char opts[FS_BE_OPTS_MAX])
{
	const char *colon = strchr(spec, ':');
	char name[32];
	size_t n = colon ? (size_t)(colon - spec) : strlen(spec);

	opts[0] = '\0';
	if (n >= sizeof(name))
		return NULL;
	memcpy(name, spec, n);
	name[n] = '\0';
	if (colon) {
		if (strlen(colon + 1) >= FS_BE_OPTS_MAX)
			return NULL;
		strcpy(opts, colon + 1);
		for (char *p = opts; *p; p++)
			if (*p == ':')
				*p = ',';
	}
	return fs_backend_find(name);
}
