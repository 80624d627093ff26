/* SPDX-License-Identifier: MIT */
/*
 * state_dir.h - the server's state directory (--state-dir), shared by the
 * NSM records (src/nlm) and the NFSv4.1 client records (src/nfs4).
 */
#ifndef RPCRDMA_COMMON_STATE_DIR_H
#define RPCRDMA_COMMON_STATE_DIR_H

#include <errno.h>
#include <string.h>
#include <sys/stat.h>

/*
 * rpcrdma_mkdir_parents - create @dir (mode 0700) and the directories
 * above it that are missing (0755); existing ones are left as they are.
 * Return: 0; -ENAMETOOLONG for an empty path or one of 4096 bytes or
 * more; the -errno of a mkdir() that failed otherwise than EEXIST.
 */
static inline int rpcrdma_mkdir_parents(const char *dir)
{
	char buf[4096];
	size_t n = strlen(dir);

	if (n == 0 || n >= sizeof(buf))
		return -ENAMETOOLONG;
	memcpy(buf, dir, n + 1);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir(buf, 0755) < 0 && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(buf, 0700) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

#endif /* RPCRDMA_COMMON_STATE_DIR_H */
