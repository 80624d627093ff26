#!/usr/bin/env bash
# ceph-up: the Ceph test bed of the cephfs tests (issue 35): scripts/ceph-up
# starts a single-node cluster in the guest; then
#   - the mon answers: file system "cephfs" on pools cephfs_metadata and
#     cephfs_data, its MDS up:active; ceph.conf and the admin keyring in
#     /etc/ceph (a tmpfs: the guest's root is read-only);
#   - the guest kernel's CephFS client mounts it; files of 0 B to 16 MiB
#     written there read back byte-exact through ceph-fuse (another client:
#     the data went through the cluster), and a file ceph-fuse writes reads
#     back through the kernel client after a remount;
#   - scripts/ceph-up again: exit 0 at once, nothing started;
#   - scripts/ceph-up --down: the daemons gone, /etc/ceph's files removed
#     (when the cluster ran before the script, as in vm/cephfs, its starter
#     checks that at its end instead).
# Prints the time to up:active and the daemons' resident memory.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
vm_require_guest

KMNT=/mnt/cephfs
FMNT=/mnt/ceph-fuse
ORIG=$SCRATCH/orig
CEPH_UP=$RPCRDMA_CHECKOUT/scripts/ceph-up

mem_total=$(awk '$1 == "MemTotal:" { print $2 }' /proc/meminfo)
log "guest memory $((mem_total / 1024)) MiB; $(nproc) CPUs"
ceph_up

# ---- the cluster as the mon sees it
[[ -f /etc/ceph/ceph.conf && -f /etc/ceph/ceph.client.admin.keyring ]] ||
	fail "no ceph.conf or admin keyring in /etc/ceph: $(ls -la /etc/ceph)"
awk '$2 == "/etc/ceph" && $3 == "tmpfs" { f = 1 } END { exit !f }' /proc/mounts ||
	fail "/etc/ceph is not the tmpfs ceph-up mounts on the read-only root"
t=$SECONDS
out=$(ceph_cli "mds stat" "fs ls" "osd stat")
log "one ceph CLI run (3 commands) took $((SECONDS - t)) s:"
echo "$out"
grep -q '^cephfs:1 {0=a=up:active}' <<<"$out" || fail "mds stat does not show cephfs rank 0 up:active"
grep -q '^name: cephfs, metadata pool: cephfs_metadata, data pools: \[cephfs_data \]' <<<"$out" ||
	fail "fs ls does not show cephfs on cephfs_metadata/cephfs_data"
grep -q '1 osds: 1 up.*1 in' <<<"$out" || fail "osd stat does not show 1 OSD up and in"
how="up in $CEPH_UP_SECS s"
((CEPH_SHARED)) && how="up (started before this script; ceph-up said so in $CEPH_UP_SECS s)"
pass "cluster $how: cephfs's MDS up:active, 1 OSD up and in; /etc/ceph on a tmpfs"

# ---- data through the kernel client, read back through ceph-fuse
make_test_files "$ORIG"
ceph_kmount "$KMNT"
mkdir "$KMNT/t"
for s in "${TEST_FILE_SIZES[@]}"; do
	bounded 120 "cp $s.bin to CephFS" cp "$ORIG/$s.bin" "$KMNT/t/$s.bin"
done
bounded 120 "sync CephFS" sync
ceph_fuse_mount "$FMNT"
for s in "${TEST_FILE_SIZES[@]}"; do
	compare_files "$ORIG/$s.bin" "$FMNT/t/$s.bin"
done
pass "${#TEST_FILE_SIZES[@]} files (0 B to 16 MiB) written by the kernel client read back byte-exact through ceph-fuse"

head -c 3000001 /dev/urandom >"$ORIG/fuse.bin"
bounded 120 "cp to ceph-fuse" cp "$ORIG/fuse.bin" "$FMNT/t/fuse.bin"
bounded 60 "sync ceph-fuse" sync
kumount "$KMNT"
drop_caches
ceph_kmount "$KMNT"
compare_files "$ORIG/fuse.bin" "$KMNT/t/fuse.bin"
[[ "$(stat -c %s "$KMNT/t/16777216.bin")" == 16777216 ]] || fail "16 MiB file has the wrong size after remount"
pass "a file written through ceph-fuse read back byte-exact by the kernel client after a remount"

# ---- memory
for n in mon.a osd.0 mds.a; do
	read -r pid <"$CEPH_BASE/run/$n.pid"
	log "$n: VmRSS $(awk '$1 == "VmRSS:" { print int($2 / 1024) " MiB" }' "/proc/$pid/status")"
done
log "guest memory after the writes: $(free -m | awk '$1 == "Mem:" { print $3 " MiB used, " $7 " MiB available" }')"

# ---- again: nothing to do
t=$SECONDS
out=$(bounded 60 "scripts/ceph-up again" "$CEPH_UP" --base "$CEPH_BASE")
took=$((SECONDS - t))
grep -q 'already up' <<<"$out" || fail "scripts/ceph-up again did not say it is already up: $out"
((took <= 5)) || fail "scripts/ceph-up again took $took s (expected at once)"
[[ $(pidof ceph-mon | wc -w) == 1 && $(pidof ceph-mds | wc -w) == 1 && $(pidof ceph-osd | wc -w) == 1 ]] ||
	fail "after the second scripts/ceph-up: mon '$(pidof ceph-mon)', mds '$(pidof ceph-mds)', osd '$(pidof ceph-osd)'"
pass "scripts/ceph-up again: exit 0 in $took s, '$out', still one daemon of each"

# ---- down (a cluster this script did not start is left to its starter,
# which checks the same: vm/cephfs, tests/vm/cephfs.sh)
kumount "$FMNT"
kumount "$KMNT"
if ((CEPH_SHARED)); then
	log "the cluster was started before this script: --down is left to its starter"
else
	ceph_down_check
fi
