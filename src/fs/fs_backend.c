// SPDX-License-Identifier: MIT
/*
 * fs_backend.c - the backends an export may name (exports(5) option
 * backend=NAME, rpcrdma_nfs3_config nc_backend).
 */
#include <string.h>

#include "fs_backend.h"

static const struct fs_backend *const g_backends[] = {
	&fs_posix_backend,
	&fs_memory_backend,
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
