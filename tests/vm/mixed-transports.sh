#!/usr/bin/env bash
# mixed-transports: one rpcrdma-nfsd, one export, the kernel client
# mounting it over RDMA and over TCP at once (issue 36):
#   - NFSv3 over RDMA on /mnt/r and NFSv3 over TCP on /mnt/t (nosharecache:
#     two superblocks, each its own transport, as /proc/self/mountstats
#     says): 3 MiB + 5 of random bytes written through one read back
#     byte-exact through the other after close (and a cache drop), both
#     ways, and compared with the server's copy;
#   - NFSv4.1 over TCP on /mnt/t4 beside them: it reads what RDMA wrote and
#     writes what RDMA reads; its session's back channel is that TCP
#     connection (CB_NULL answered there, no backchannel timeout);
# then unmount: the server's counters show calls over TCP (tcp_calls) and
# over RDMA (calls beyond them), every pool and TCP call context back at 0,
# no bad TCP record; SIGTERM exits with status 0.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
vm_require_guest
umask 022

NFSD=$(rpcrdma_bin rpcrdma-nfsd)
EXPORT=$SCRATCH/export
SLOG=$SCRATCH/rpcrdma-nfsd.log
MOPTS=mountport=$MOUNT_PORT,mountproto=tcp,nosharecache

mkdir -p "$EXPORT"
rnfsd_start "$NFSD" "$EXPORT" "$SLOG" --no-root-squash --stats --threads 4 \
	--handle-key "$SCRATCH/handle.key"
grep -q "listening for ONC RPC over TCP on port $NFS_TCP_PORT" "$SLOG" ||
	fail "the server does not say it listens on TCP port $NFS_TCP_PORT"
wait_tcp_listen "$SERVER_ADDR" "$NFS_TCP_PORT" 10 || fail "nothing listens on TCP $NFS_TCP_PORT"

# over PROTO on MNT, checked in mountstats
mount_on() {
	local proto=$1 mnt=$2 xprt
	NFS_PROTO=$proto kmount "$SERVER_ADDR:$EXPORT" "$mnt" "$MOPTS"
	xprt=$(mountstats_xprt "$mnt")
	[[ "$xprt" == "xprt:"*"$proto"* ]] || fail "mount $mnt is not over $proto: '$xprt'"
}
mount_on rdma /mnt/r
mount_on tcp /mnt/t
pass "the same export mounted over RDMA (/mnt/r) and over TCP (/mnt/t)"

head -c $((3 * 1048576 + 5)) /dev/urandom >/tmp/a.bin
head -c $((3 * 1048576 + 5)) /dev/urandom >/tmp/b.bin

# RDMA writes, TCP reads
bounded 60 "write over RDMA" dd if=/tmp/a.bin of=/mnt/r/a.bin bs=1M conv=fsync status=none
drop_caches
compare_files /tmp/a.bin /mnt/t/a.bin
compare_files /tmp/a.bin "$EXPORT/a.bin"
pass "a file written over RDMA reads back byte-exact over TCP"

# TCP writes, RDMA reads
bounded 60 "write over TCP" dd if=/tmp/b.bin of=/mnt/t/b.bin bs=1M conv=fsync status=none
drop_caches
compare_files /tmp/b.bin /mnt/r/b.bin
compare_files /tmp/b.bin "$EXPORT/b.bin"
pass "a file written over TCP reads back byte-exact over RDMA"

# NFSv4.1 over TCP beside them
NFS_PROTO=tcp kmount41 "$SERVER_ADDR:$EXPORT" /mnt/t4
compare_files /tmp/a.bin /mnt/t4/a.bin
bounded 60 "write over NFSv4.1/TCP" dd if=/tmp/b.bin of=/mnt/t4/c.bin bs=64k conv=fsync status=none
drop_caches
compare_files /tmp/b.bin /mnt/r/c.bin
pass "NFSv4.1 over TCP reads what NFSv3 over RDMA wrote, and the other way round"

kumount /mnt/t4
kumount /mnt/t
kumount /mnt/r

rnfsd_term 30
rnfsd_check_final_stats
tc=$(rnfsd_stat tcp_calls) c=$(rnfsd_stat calls)
((${tc:-0} > 0)) || fail "tcp_calls is '${tc}': nothing came over TCP"
((${c:-0} > tc)) || fail "calls ($c) not beyond tcp_calls ($tc): nothing came over RDMA"
for k in tcp_calls_in_use tcp_bad_records bc_timeouts; do
	[[ "$(rnfsd_stat $k)" == 0 ]] || fail "server counter $k is '$(rnfsd_stat $k)', expected 0"
done
# the NFSv4.1 session over TCP has its back channel on that connection:
# the client answered (CB_NULL), none timed out
bcr=$(rnfsd_stat bc_replies)
((${bcr:-0} >= 1)) || fail "backchannel: no reply over TCP (bc_replies '$bcr')"
pass "server: $tc calls over TCP, $((c - tc)) over RDMA; TCP contexts back, no bad record, $bcr backchannel replies, no timeout"
