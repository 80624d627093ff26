// SPDX-License-Identifier: MIT
/*
 * fs_instance.c - the server's identity across restarts (its state
 * directory) and the end of its grace period after this start, for
 * backends that must find their previous incarnation's state in a cluster
 * and tell the cluster's other servers (rpcrdma/nfs3.h, fs.h
 * "fs_instance.c"); fs_cluster_grace(), the protocols' question whether
 * another server of an export's cluster is in grace.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fs.h"
#include "fs_backend.h"

static char *g_instance;
static _Atomic int64_t g_grace_end; /* CLOCK_REALTIME s; 0 none */

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

int rpcrdma_nfs3_set_instance_grace(uint32_t sec)
{
	struct timespec now;

	if (sec > RPCRDMA_NFS3_INSTANCE_GRACE_MAX)
		return -EINVAL;
	if (!sec) {
		g_grace_end = 0;
		return 0;
	}
	clock_gettime(CLOCK_REALTIME, &now);
	g_grace_end = (int64_t)now.tv_sec + sec;
	return 0;
}

int64_t fs_instance_grace_end(void)
{
	return g_grace_end;
}

int fs_cluster_grace(struct rpcrdma_nfs3_export *exp)
{
	if (!exp || !exp->ex_be || !exp->ex_be->be_cluster_grace)
		return 0;
	return exp->ex_be->be_cluster_grace(exp);
}
