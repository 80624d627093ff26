#!/usr/bin/env bash
# client-vs-rpcrdma-nfsd: our client (rpcrdma-nfs) against our own server
# (rpcrdma-nfsd), from the client address: the same checks as
# client-vs-kernel-nfsd; at the end the server must exit 0 on SIGTERM with
# every call context, receive buffer and registered region back.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
vm_require_guest

EXPORT=$SCRATCH/export
rnfsd_start "$(rpcrdma_bin rpcrdma-nfsd)" "$EXPORT" "$SCRATCH/rpcrdma-nfsd.log" \
	--no-root-squash --stats --handle-key "$SCRATCH/key"

CLIENT_OPTS=(--source "$CLIENT_ADDR" --mount-port "$MOUNT_PORT" --quiet)
SPEC="$SERVER_ADDR:$EXPORT"
client_suite

rnfsd_term
rnfsd_check_final_stats
