#!/usr/bin/env bash
# cephfs-gateway: rpcrdma-nfsd serving CephFS through its cephfs backend
# (libcephfs; issue 35) to the kernel's NFS/RDMA client, in one guest with a
# single-node cluster (scripts/ceph-up):
#   - exports file: `cephfs://admin@cephfs/ 192.0.2.0/24(rw,no_root_squash,fsid=7)`
#     (the URL selects the cephfs backend; clients mount "/");
#   - the file system is also mounted directly with the guest kernel's CephFS
#     client: the workout's "server side" (WK_EXPORT), where it checks and
#     prepares files, is that direct mount, so every check compares what the
#     NFS client sees with what Ceph holds;
#   - NFSv3 over RDMA (vers=3,proto=rdma): the shared workout
#     (tests/vm/workout.sh, with the odd block sizes): 7 sizes by cp and
#     O_DIRECT dd, read back after a remount, 2000-entry ls -l, a 1000-byte
#     symlink, mkdir/rmdir/mv/link/chmod/truncate/rm, O_EXCL create, cp -a
#     of a tree in and out, rm -rf;
#   - the md5 of every file written, read through the direct CephFS mount
#     after its caches were dropped, equals the original's;
#   - then the same over NFSv4.1 (vers=4.1,proto=rdma) in a fresh directory
#     tree (the NFSv3 files removed through the direct mount first), but for
#     the 2000-entry directory (listed and removed over NFSv3 only);
#   - SIGTERM: the server exits 0.
# Skips (77) when rpcrdma-nfsd was built without the cephfs backend (no
# libcephfs-dev at build time) or when Ceph is not installed.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
. "$(dirname "${BASH_SOURCE[0]}")/workout.sh"
vm_require_guest
umask 022

NFSD=$(rpcrdma_bin rpcrdma-nfsd)
# (the backend is there when the binary links libcephfs; a cheap look that
# needs no cluster)
grep -q 'libcephfs\.so' "$NFSD" ||
	skip "$NFSD was built without the cephfs backend (needs libcephfs-dev at build time and the cephfs backend, issue 35)"

MNT=/mnt/nfs
DIRECT=/mnt/cephfs
EXPORTS=$SCRATCH/exports
SLOG=$SCRATCH/rpcrdma-nfsd.log
MOPTS3=mountport=$MOUNT_PORT,mountproto=tcp

mountstats_dump() {
	echo "---- /proc/self/mountstats for $1 ----"
	awk -v m="$1" '$1 == "device" { on = ($5 == m) } on' /proc/self/mountstats
}
on_failure "mountstats_dump '$MNT'"

ceph_up
ceph_kmount "$DIRECT"

# ---------------------------------------------------------------- the gateway
printf '%s\n' 'cephfs://admin@cephfs/ 192.0.2.0/24(rw,no_root_squash,fsid=7)' >"$EXPORTS"
rnfsd_start_exports "$NFSD" "$EXPORTS" "$SLOG" --stats --threads 4 \
	--handle-key "$SCRATCH/handle.key"
pass "rpcrdma-nfsd serves cephfs://admin@cephfs/ ($(grep -m1 '^rpcrdma-nfsd: serving ' "$SLOG"))"

WK_MNT=$MNT WK_EXPORT=$DIRECT WK_LOCAL=/tmp
wk_setup

# mount_nfs VERS: the export "/" on MNT with NFSv3 or NFSv4.1 over RDMA.
mount_nfs() {
	local xprt
	case $1 in
	3) kmount "$SERVER_ADDR:/" "$MNT" "$MOPTS3" ;;
	4.1) kmount41 "$SERVER_ADDR:/" "$MNT" ;;
	esac
	xprt=$(mountstats_xprt "$MNT")
	[[ "$xprt" == "xprt:"*"rdma"* ]] || fail "mount $MNT is not over RDMA: '$xprt'"
}

# md5_check: every file wk_write wrote, read through the direct CephFS mount
# with its caches dropped (so from the OSD), has the original's md5.
md5_check() {
	local s v want got n=0
	drop_caches
	for s in "${WK_SIZES[@]}"; do
		want=$(md5sum <"$WK_LOCAL/orig/$s.bin")
		for v in $(wk_variants); do
			got=$(timeout -k 10 60 md5sum <"$DIRECT/$v-$s.bin") || fail "md5sum of $DIRECT/$v-$s.bin"
			[[ "$got" == "$want" ]] ||
				fail "$v-$s.bin through the direct CephFS mount: md5 ${got%% *}, the original's ${want%% *}"
			n=$((n + 1))
		done
	done
	pass "$n files written over NFS: md5 through the direct CephFS mount equal the originals'"
}

# workout VERS: the shared workout over NFS version VERS.
workout() {
	local vers=$1
	mount_nfs "$vers"
	pass "kernel client mounted $SERVER_ADDR:/ with NFSv$vers over RDMA"
	wk_write
	kumount "$MNT"; drop_caches; mount_nfs "$vers"
	wk_read
	md5_check
	if ((WK_MANY)); then
		wk_readdir_prepare
		wk_readdir
	fi
	wk_namespace
	wk_tree_in
	kumount "$MNT"; drop_caches; mount_nfs "$vers"
	wk_tree_out
	if ((WK_MANY)); then
		wk_rm
	else
		bounded 60 "rm -rf tree" rm -rf "$MNT/tree"
		[[ ! -e "$WK_EXPORT/tree" ]] || fail "rm -rf tree: still on the server"
	fi
	kumount "$MNT"
	pass "NFSv$vers: the workout through the cephfs backend"
}

# ---------------------------------------------------------------- NFSv3
WK_ODD_BS=1 WK_READDIR_OP=READDIRPLUS WK_MANY=1
workout 3

# ---------------------------------------------------------------- NFSv4.1
# a clean tree: what the NFSv3 workout left, removed through Ceph directly
bounded 120 "rm the NFSv3 files through the direct mount" \
	find "$DIRECT" -mindepth 1 -maxdepth 1 -exec rm -rf {} +
rm -rf "$WK_LOCAL/tree-back"
# the 2000-entry directory only once, over NFSv3 (through Ceph each entry's
# create and remove is a journal wait: about 200 s under TCG for both)
WK_ODD_BS=0 WK_READDIR_OP=READDIR WK_MANY=0
workout 4.1

log "guest memory at the end: $(free -m | awk '$1 == "Mem:" { print $3 " MiB used, " $7 " MiB available" }');" \
    "rpcrdma-nfsd VmRSS $(($(rnfsd_rss_kb) / 1024)) MiB, ceph-osd VmRSS" \
    "$(awk '$1 == "VmRSS:" { print int($2 / 1024) }' "/proc/$(cat "$CEPH_BASE/run/osd.0.pid")/status") MiB"
rnfsd_term 60
