// SPDX-License-Identifier: MIT
/*
 * nfsd_notify - tell the service manager what rpcrdma-nfsd is doing
 * (sd_notify(3): the rpcrdma-nfsd.service unit is Type=notify).
 *
 * Built with libsystemd (CMake RPCRDMA_SYSTEMD, AUTO by default) these send
 * the state to $NOTIFY_SOCKET; without it they do nothing, and
 * nfsd_notify_ready() says once on stderr that a Type=notify unit will
 * not see the server start when $NOTIFY_SOCKET is set.  Outside systemd
 * ($NOTIFY_SOCKET unset) every call is a no-op either way.
 */
#ifndef RPCRDMA_NFSD_NOTIFY_H
#define RPCRDMA_NFSD_NOTIFY_H

/**
 * nfsd_notify_ready - the listeners are up and the exports loaded:
 * READY=1, with @status (a line for `systemctl status`, may be NULL) as
 * STATUS=.  Also ends a reload begun by nfsd_notify_reloading().
 * Errors are ignored: the server serves whether or not the manager heard.
 */
void nfsd_notify_ready(const char *status);

/**
 * nfsd_notify_reloading - SIGHUP: the exports file is being read again
 * (RELOADING=1); nfsd_notify_ready() follows when it is done, whether
 * the new exports were taken or the old ones kept.
 */
void nfsd_notify_reloading(void);

/**
 * nfsd_notify_stopping - the server is shutting down (STOPPING=1): the
 * connections are being closed and the counters written.
 */
void nfsd_notify_stopping(void);

#endif
