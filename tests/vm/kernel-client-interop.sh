#!/usr/bin/env bash
# kernel-client-interop: the Linux kernel NFSv3/RDMA client against our server
# (rpcrdma-nfsd --no-root-squash --stats --threads 4), everything compared
# byte for byte (issue 4); the workout's phases are in tests/vm/workout.sh
# (shared with vm/nfs41-interop and make bench's section 6):
#   - files of 0, 1, 4095, 4097, 65537, 1 MiB + 3 and 16 MiB written with cp,
#     with dd oflag=direct bs=1M and with dd oflag=direct and an odd block
#     size (4097; 65537 for 16 MiB, to keep it to 256 calls); after a remount
#     and a cache drop read back with cat/cmp, dd iflag=direct bs=1M and
#     dd iflag=direct with the odd block size; also compared with the server's
#     copies;
#   - ls -l of a directory with 2000 entries (READDIRPLUS over several calls,
#     cookies, Reply chunks): count, names, a few sizes; rm -rf of it;
#   - a symlink with a 1000-byte target (READLINK after a remount);
#   - mkdir, rmdir (and of a non-empty directory), rename of files and
#     directories (also over an existing file), hard link (nlink 2 on both
#     names, on the client and the server), chmod (mode on the server),
#     truncate (grow, shrink, 0), rm;
#   - cp -a of a small tree (directories, files, modes, an owner, mtimes, a
#     symlink) in and out, compared with diff -r and by sha256;
# then unmount: the server's final counters show every pool back at its
# baseline and no RDMA_ERROR sent; SIGTERM exits with status 0.
# Registered twice: vm/kernel-client-interop over RDMA, and
# vm/kernel-client-interop-tcp with RPCRDMA_NFS_PROTO=tcp, the same
# workout with the client mounting over TCP (proto=tcp, port 2049: the
# service layer's TCP transport, issue 36).
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
. "$(dirname "${BASH_SOURCE[0]}")/workout.sh"
vm_require_guest
umask 022

NFSD=$(rpcrdma_bin rpcrdma-nfsd)
EXPORT=$SCRATCH/export
MNT=/mnt/x
SLOG=$SCRATCH/rpcrdma-nfsd.log
MOPTS=mountport=$MOUNT_PORT,mountproto=tcp

# mountstats_dump MNT: the whole /proc/self/mountstats block of MNT (transport
# and per-procedure counters): which NFS procedures ran, retransmitted, erred.
mountstats_dump() {
	echo "---- /proc/self/mountstats for $1 ----"
	awk -v m="$1" '$1 == "device" { on = ($5 == m) } on' /proc/self/mountstats
}
on_failure "mountstats_dump '$MNT'"

mount_export() {
	kmount "$SERVER_ADDR:$EXPORT" "$MNT" "$MOPTS"
	local xprt
	xprt=$(mountstats_xprt "$MNT")
	[[ "$xprt" == "xprt:"*"$NFS_PROTO"* ]] || fail "mount $MNT is not over $NFS_PROTO: '$xprt'"
}

# remount: unmount, drop the client's caches, mount again: what the client
# sees next comes from the server.
remount() {
	kumount "$MNT"
	drop_caches
	mount_export
}

# ops_summary: the non-zero per-procedure call counts of the mount, one line.
ops_summary() {
	awk -v m="$MNT" '$1 == "device" { on = ($5 == m); next }
		on && /^[ \t]+[A-Z_]+: [0-9]+ / && $2 > 0 { printf "%s%s", sep, $1 $2; sep = " " }
		END { print "" }' /proc/self/mountstats
}

# ---------------------------------------------------------------- setup
# the workout's phases (tests/vm/workout.sh)
WK_MNT=$MNT WK_EXPORT=$EXPORT WK_LOCAL=/tmp WK_ODD_BS=1 WK_READDIR_OP=READDIRPLUS
wk_setup
mkdir -p "$EXPORT"
rnfsd_start "$NFSD" "$EXPORT" "$SLOG" --no-root-squash --stats --threads 4 \
	--handle-key "$SCRATCH/handle.key"

# ---------------------------------------------------------------- 1. write
mount_export
pass "kernel client mounted $SERVER_ADDR:$EXPORT over $NFS_PROTO"
# The Linux client takes FSINFO's preferred sizes when the mount names none
# (RFC 1813 3.3.19 rtpref/wtpref, capped by rtmax/wtmax): 256 KiB over TCP
# (NFS3_TCP_PREF_IO), the export's 1 MiB limit otherwise.
if [[ $NFS_PROTO == tcp ]]; then
	opts=$(awk -v m="$MNT" '$2 == m { print $4 }' /proc/mounts)
	[[ ,$opts, == *,rsize=262144,* && ,$opts, == *,wsize=262144,* ]] ||
		fail "over TCP the client should use FSINFO's preferred 256 KiB: $opts"
	pass "over TCP the client took rsize and wsize 262144 from FSINFO's rtpref/wtpref"
	# Asked for 1 MiB both ways: READs of 1 MiB (rtmax, the export's
	# payload), WRITEs of 256 KiB (wtmax over TCP, NFS3_TCP_PREF_IO).
	kmount "$SERVER_ADDR:$EXPORT" /mnt/wtmax "${MOPTS:+$MOPTS,}rsize=1048576,wsize=1048576,nosharecache"
	opts=$(awk '$2 == "/mnt/wtmax" { print $4 }' /proc/mounts)
	[[ ,$opts, == *,rsize=1048576,* && ,$opts, == *,wsize=262144,* ]] ||
		fail "over TCP asking for 1 MiB should give rsize 1048576 and wsize 262144 (wtmax): $opts"
	kumount /mnt/wtmax
	pass "over TCP a 1 MiB mount took rsize 1048576 (rtmax) and wsize 262144 (wtmax)"
fi
wk_write
log "$(mountstats_xprt "$MNT")"
log "ops: $(ops_summary)"

# ---------------------------------------------------------------- 2. read back
remount
wk_read
log "ops: $(ops_summary)"

# ---------------------------------------------------------------- 3. 2000 entries
# Made on the server (fast), listed by the client: READDIRPLUS over several
# calls with cookies; replies larger than the inline threshold need Reply chunks.
wk_readdir_prepare
wk_readdir

# ---------------------------------------------------------------- 4., 5. symlink, namespace
wk_namespace

# ---------------------------------------------------------------- 6. cp -a in
wk_tree_in
log "ops: $(ops_summary)"

# ---------------------------------------------------------------- 7. after a remount
remount
wk_tree_out
# rm -rf of the big directory: READDIR(PLUS) while entries disappear
wk_rm
log "$(mountstats_xprt "$MNT")"
log "ops: $(ops_summary)"
kumount "$MNT"
pass "unmounted"

# ---------------------------------------------------------------- 8. server exit
rnfsd_term 30
rnfsd_check_final_stats
if [[ $NFS_PROTO == tcp ]]; then
	(($(rnfsd_stat tcp_calls) > 0)) || fail "server counter tcp_calls is 0: nothing came over TCP"
	[[ $(rnfsd_stat tcp_calls_in_use) == 0 ]] || fail "tcp_calls_in_use is not 0 at exit"
	[[ $(rnfsd_stat tcp_bad_records) == 0 ]] || fail "the server closed a TCP connection for a bad record"
	pass "server served $(rnfsd_stat tcp_calls) calls over TCP, every TCP call context back"
else
	for k in read_chunks replies_write_chunk replies_reply_chunk; do
		(($(rnfsd_stat $k) > 0)) || fail "server counter $k is 0: that path was never used"
	done
	pass "server used Read chunks (WRITE), Write chunks (READ) and Reply chunks (READDIRPLUS/READLINK)"
fi
