// SPDX-License-Identifier: MIT
/*
 * fs_instance.c - the server's identity across restarts (its state
 * directory), for backends that must find their previous incarnation's
 * state in a cluster (rpcrdma/nfs3.h, fs.h "fs_instance.c").
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fs.h"

static char *g_instance;

int rpcrdma_nfs3_set_instance(const char *state_dir)
{
	char *dup = NULL;

	if (state_dir) {
		size_t n = strlen(state_dir);

		if (n == 0 || n >= 4096)
			return -ENAMETOOLONG;
		dup = strdup(state_dir);
		if (!dup)
			return -ENOMEM;
	}
	free(g_instance);
	g_instance = dup;
	return 0;
}

const char *fs_instance(void)
{
	return g_instance;
}
