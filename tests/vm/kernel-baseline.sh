#!/usr/bin/env bash
# kernel-baseline: the Linux kernel's own NFSv3/RDMA server and client, over
# Soft-RoCE in the test VM.  Proves the test bed (rxe, nfs-utils, the mount
# options the other tests use) before our server is involved: the six test
# files are written through an RDMA mount, read back after a remount (so the
# data crosses the wire again) and compared byte for byte with the originals
# and with the server's copy.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
vm_require_guest

EXPORT=$SCRATCH/kexport
ORIG=/tmp/orig
MNT=/mnt/x

make_test_files "$ORIG"
knfsd_start "$EXPORT"
on_failure 'echo "---- /proc/fs/nfsd/portlist ----"; cat /proc/fs/nfsd/portlist'

kmount "$SERVER_ADDR:$EXPORT" "$MNT"
xprt=$(mountstats_xprt "$MNT")
[[ "$xprt" == "xprt:"*"rdma"* ]] || fail "mount $MNT is not over RDMA: '$xprt'"
pass "mounted over RDMA"

for s in "${TEST_FILE_SIZES[@]}"; do
	timeout -k 10 120 cp "$ORIG/$s.bin" "$MNT/$s.bin" || fail "cp $s.bin to the mount"
done
sync
writes=$(mountstats_ops "$MNT" WRITE)
((writes > 0)) || fail "no WRITE calls counted on $MNT after writing 17 MiB"
log "WRITE calls: $writes"
log "$(mountstats_xprt "$MNT")"
kumount "$MNT"
for s in "${TEST_FILE_SIZES[@]}"; do
	compare_files "$ORIG/$s.bin" "$EXPORT/$s.bin"
done
pass "server's copies match the originals"

drop_caches
kmount "$SERVER_ADDR:$EXPORT" "$MNT"
for s in "${TEST_FILE_SIZES[@]}"; do
	compare_files "$ORIG/$s.bin" "$MNT/$s.bin"
	compare_files "$EXPORT/$s.bin" "$MNT/$s.bin"
done
reads=$(mountstats_ops "$MNT" READ)
((reads > 0)) || fail "no READ calls counted on $MNT after reading back 17 MiB"
log "READ calls: $reads"
pass "six files read back over RDMA match the originals and the server's copies"
echo "$(mountstats_xprt "$MNT")"
kumount "$MNT"
