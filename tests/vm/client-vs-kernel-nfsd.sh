#!/usr/bin/env bash
# client-vs-kernel-nfsd: our client (rpcrdma-nfs) against the Linux kernel's
# nfsd over RDMA, from the client address.  put and get the six test files
# plus one of 65537 B, comparing byte for byte with the originals and with
# the server's on-disk copies, in the tool's default registration mode
# (memory windows), per call and persistent; `ls -l` of a directory of 2000
# entries; a symlink with a 1000-byte target read back; mkdir / mv / rm /
# rmdir / chmod / hard link / df / stat; a missing file exits 1 with a
# message, a usage error 2.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
vm_require_guest

EXPORT=$SCRATCH/export
knfsd_start "$EXPORT"
# kernel mountd registers with rpcbind: no --mount-port needed.
CLIENT_OPTS=(--source "$CLIENT_ADDR" --quiet)
SPEC="$SERVER_ADDR:$EXPORT"
client_suite
