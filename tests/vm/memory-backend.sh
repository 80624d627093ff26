#!/usr/bin/env bash
# memory-backend: vm/posix-diff with rpcrdma-nfsd's no_root_squash export
# on the memory backend (backend=memory:bytes=64M): the kernel's client,
# as root and as two users, must see the same POSIX behaviour from it as
# from the kernel's nfsd on ext4/tmpfs; then its byte limit (ENOSPC, df)
# and an NFSv4.1 mount of the same tree.  See posix-diff.sh.
POSIX_DIFF_BACKEND=memory exec "$(dirname "${BASH_SOURCE[0]}")/posix-diff.sh" "$@"
