// SPDX-License-Identifier: MIT
/*
 * nfsd_notify - readiness, reload and shutdown for the service manager,
 * through libsystemd's sd_notify() when built with it (see nfsd_notify.h).
 */
#include <stdio.h>
#include <stdlib.h>

#include "nfsd_notify.h"

#ifdef RPCRDMA_HAVE_SYSTEMD
#include <systemd/sd-daemon.h>

void nfsd_notify_ready(const char *status)
{
	if (status)
		sd_notifyf(0, "READY=1\nSTATUS=%s", status);
	else
		sd_notify(0, "READY=1");
}

void nfsd_notify_reloading(void)
{
	sd_notify(0, "RELOADING=1\nSTATUS=reloading the exports");
}

void nfsd_notify_stopping(void)
{
	sd_notify(0, "STOPPING=1\nSTATUS=stopping");
}

#else /* no libsystemd: nothing to tell, but say so once under systemd */

void nfsd_notify_ready(const char *status)
{
	static int warned;

	(void)status;
	if (!warned && getenv("NOTIFY_SOCKET")) {
		warned = 1;
		fprintf(stderr, "rpcrdma-nfsd: built without libsystemd: the service "
			"manager is not told the server is ready (rebuild with "
			"libsystemd-dev, or use Type=simple)\n");
	}
}

void nfsd_notify_reloading(void)
{
}

void nfsd_notify_stopping(void)
{
}
#endif
