/* SPDX-License-Identifier: MIT */
/*
 * backoff.h - the Requester's reconnect back-off, shared by the RDMA
 * transport (clnt_reconnect) and the MOUNT client over TCP: no wait before
 * the first retry, then 250 ms, doubling up to a cap.
 */
#ifndef RPCRDMA_COMMON_BACKOFF_H
#define RPCRDMA_COMMON_BACKOFF_H

/* First delay after a failed attempt (ms). */
#define RPCRDMA_BACKOFF_FIRST_MS 250u
/* Default cap (ms): cf_backoff_max_ms's default. */
#define RPCRDMA_BACKOFF_MAX_MS 8000u

/*
 * rpcrdma_backoff_next - the delay before the next attempt (ms), after an
 * attempt that failed following a delay of @prev_ms (0 for the first):
 * 250, 500, 1000, ... capped at @cap_ms.
 */
static inline unsigned rpcrdma_backoff_next(unsigned prev_ms, unsigned cap_ms)
{
	unsigned next = prev_ms ? (prev_ms > cap_ms / 2 ? cap_ms : prev_ms * 2) :
				  RPCRDMA_BACKOFF_FIRST_MS;

	return next > cap_ms ? cap_ms : next;
}

#endif /* RPCRDMA_COMMON_BACKOFF_H */
