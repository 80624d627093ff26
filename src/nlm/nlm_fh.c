// SPDX-License-Identifier: MIT
/*
 * nlm_fh.c - the one place the lock manager meets the NFS server: an NFSv3
 * file handle of the export opened as a file the lock manager can lock.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <rpcrdma/nfs3.h>
#include <rpcrdma/nlm.h>

#include "nfs3/nfs3_internal.h"

int rpcrdma_nlm_nfs3_open(void *server, const uint8_t *fh, uint32_t len,
			  int flags, int *fdp)
{
	struct rpcrdma_nfs3_server *srv = server;
	char path[64];
	struct stat st;
	int pfd, fd, err;

	/* the export the handle names, its MAC and checks: nfs3_fh_open's */
	err = nfs3_server_fh_open(srv, fh, len, &pfd, &st);
	if (err)
		return err;
	if (!S_ISREG(st.st_mode)) {
		close(pfd);
		return S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
	}
	/* reopen the O_PATH descriptor with an access mode */
	snprintf(path, sizeof(path), "/proc/self/fd/%d", pfd);
	fd = open(path, (flags & (O_ACCMODE | O_CLOEXEC)) | O_NOCTTY | O_NONBLOCK);
	err = fd < 0 ? -errno : 0;
	close(pfd);
	if (err)
		return err;
	*fdp = fd;
	return 0;
}
