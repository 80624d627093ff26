#!/bin/bash
# SPDX-License-Identifier: MIT
#
# vm/idle-close: the open-file cache lets go of what no call uses
# (docs/nfs3.md, "Idle entries").  rpcrdma-nfsd exports a tmpfs
# directory; the kernel client writes a 32 MiB file and reads it back, so
# the server holds it open in its cache.  The file is then removed on the
# server, not through NFS: its space comes back only when the server
# closes it.  With the default idle period (2 s: closed 2 to 4 s after the
# last call, as the kernel's nfsd closes idle NFSv3 files) the space is
# back within 30 s without any further call, and the server counts the
# file expired at exit; the client's other file still reads afterwards.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
vm_require_guest

NFSD=$(rpcrdma_bin rpcrdma-nfsd)
FS=/srv/idle
EXP=$FS/export
MNT=/mnt/idle
SLOG=$SCRATCH/rnfsd-idle.log

mkdir -p "$FS"
mount -t tmpfs -o size=256M tmpfs "$FS" || fail "mount a tmpfs on $FS"
at_exit "umount '$FS'"
mkdir -p "$EXP"

# used_kib: the tmpfs's blocks in use, KiB
used_kib() { df -k --output=used "$FS" | tail -n 1 | tr -d ' '; }

rnfsd_start "$NFSD" "$EXP" "$SLOG" --no-root-squash --threads 2
kmount "$SERVER_ADDR:$EXP" "$MNT" "mountport=$MOUNT_PORT,mountproto=tcp"

base=$(used_kib)
bounded 120 "write big" dd if=/dev/urandom of="$MNT/big" bs=1M count=32 conv=fsync status=none
echo keep >"$MNT/small" || fail "write small"
sum_client=$(md5sum <"$MNT/big")
# read it back past the client's cache: a READ through the server
bounded 120 "read big" dd if="$MNT/big" of=/dev/null bs=1M iflag=direct status=none
held=$(used_kib)
((held - base >= 32 * 1024)) || fail "32 MiB written, the tmpfs grew by $((held - base)) KiB"
[[ $(md5sum <"$EXP/big") == "$sum_client" ]] || fail "the server's copy differs from what the client wrote"

# removed behind the server's back; the server keeps it open for now
rm "$EXP/big"
t0=$SECONDS
now=$(used_kib)
log "removed on the server: $((now - base)) KiB still in use"
while ((now - base >= 16 * 1024 && SECONDS - t0 < 30)); do
	sleep 0.5
	now=$(used_kib)
done
((now - base < 16 * 1024)) ||
	fail "the removed file's space is still in use 30 s after its last call ($((now - base)) KiB)"
pass "the space of a file removed on the server came back $((SECONDS - t0)) s after the removal, with no call"

[[ $(cat "$MNT/small") == keep ]] || fail "the other file no longer reads"
kumount "$MNT"
rnfsd_term
expired=$(sed -n 's/.*open-file cache: .*, \([0-9]*\) expired, .*/\1/p' "$SLOG" | tail -n 1)
((${expired:-0} >= 1)) || fail "the server counted ${expired:-no} files expired: $(grep 'open-file cache' "$SLOG")"
pass "rpcrdma-nfsd counted $expired cached files closed as idle"
