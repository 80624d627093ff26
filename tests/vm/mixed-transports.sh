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
#   - locks across the transports: /mnt/r and /mnt/t are mounted WITH
#     locking (NLM through the client's lockd, tests/vm/lib.sh nlm_testbed);
#     an fcntl write lock held through one mount refuses a non-blocking
#     locker through the other, and a blocking locker there waits
#     (NLM4_BLOCKED) until the holder lets go, then is granted by the
#     server's GRANTED callback; both ways.  The conflict is the server's
#     to decide: with nosharecache the two mounts have separate inodes, so
#     the client's own lock table sees no conflict and sends both LOCKs
#     (the server log shows the refused and the blocked LOCK), and another
#     host's TEST (nlm_call.py, owner "other-host") finds the range held;
# then unmount: the server's counters show calls over TCP (tcp_calls) and
# over RDMA (calls beyond them), every pool and TCP call context back at 0,
# no bad TCP record; SIGTERM exits with status 0.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
vm_require_guest
umask 022

NFSD=$(rpcrdma_bin rpcrdma-nfsd)
EXPORT=$SCRATCH/export
SLOG=$SCRATCH/rpcrdma-nfsd.log
# kmount says nolock; the later "lock" wins (the NLM checks below)
MOPTS=mountport=$MOUNT_PORT,mountproto=tcp,nosharecache,lock
LOCKER=(python3 "$VM_TEST_DIR/locker.py")
SIG=$SCRATCH/sig            # ready/release markers (not on the mounts)
LOCKD_PORT=4045             # the client lockd's port (rpcbind's answer)
NLM_PORT=4046               # rpcrdma-nfsd's NLM
NSM_PORT=4047

mkdir -p "$EXPORT" "$SIG"
command -v python3 >/dev/null || skip "python3 is not installed"
nlm_testbed "$LOCKD_PORT" "$NLM_PORT"
# -v: the server logs each NLM call and GRANTED callback; --grace 0: no
# grace period to wait out before the first lock
rnfsd_start "$NFSD" "$EXPORT" "$SLOG" --no-root-squash --stats --threads 4 \
	--handle-key "$SCRATCH/handle.key" --state-dir "$SCRATCH/state" --grace 0 \
	--nlm-port "$NLM_PORT" --nsm-port "$NSM_PORT" -v
grep -q "nlm: NLM v4 on TCP port $NLM_PORT" "$SLOG" || fail "no lock manager in the server log"
grep -q "listening for ONC RPC over TCP on port $NFS_TCP_PORT" "$SLOG" ||
	fail "the server does not say it listens on TCP port $NFS_TCP_PORT"
wait_tcp_listen "$SERVER_ADDR" "$NFS_TCP_PORT" 10 || fail "nothing listens on TCP $NFS_TCP_PORT"

# over PROTO on MNT, checked in mountstats
mount_on() {
	local proto=$1 mnt=$2 xprt
	NFS_PROTO=$proto kmount "$SERVER_ADDR:$EXPORT" "$mnt" "$MOPTS"
	xprt=$(mountstats_xprt "$mnt")
	[[ "$xprt" == "xprt:"*"$proto"* ]] || fail "mount $mnt is not over $proto: '$xprt'"
	grep -q " $mnt nfs .*nolock" /proc/mounts && fail "$mnt has nolock: $(grep " $mnt " /proc/mounts)"
	return 0
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

# ---------------------------------------------------------------- locks
lk() { timeout -k 10 120 "${LOCKER[@]}" "$@"; }
BG_PIDS=()
stop_lockers() {
	touch "$SIG"/{r,t}.go
	((${#BG_PIDS[@]})) && kill -KILL "${BG_PIDS[@]}" 2>/dev/null
	return 0
}
at_exit stop_lockers
wait_file() { # PATH WHAT: PATH appears within 60 s
	for ((i = 0; i < 600; i++)); do [[ -e $1 ]] && return 0; sleep 0.1; done
	fail "$2: $1 did not appear in 60 s"
}
# nlm_count PATTERN: how many lines of the server log match PATTERN
nlm_count() { grep -c -- "$1" "$SLOG" || true; }
# wait_nlm PATTERN N WHAT: the server log has more than N lines matching PATTERN within 60 s
wait_nlm() {
	for ((i = 0; i < 300; i++)); do (($(nlm_count "$1") > $2)) && return 0; sleep 0.2; done
	fail "$3: no new '$1' in the server log after 60 s"
}
echo lock >"$EXPORT/lk"
FH=$(rpcrdma_bin vm-nfs3-fh)
bounded 60 "vm-nfs3-fh save lk" "$FH" save "$SERVER_ADDR" "$CLIENT_ADDR" "$MOUNT_PORT" \
	"$EXPORT" "$SCRATCH/fh-lk" lk >/dev/null || fail "vm-nfs3-fh save lk"
# other_test: another host's NLM TEST of bytes 5..5 (1: denied, 0: granted)
other_test() {
	bounded 60 "nlm_call.py test" python3 "$VM_TEST_DIR/nlm_call.py" "$SERVER_ADDR" \
		"$NLM_PORT" "$CLIENT_ADDR" test other-host "$SCRATCH/fh-lk" w 5 1
}
[[ $(other_test) == 0 ]] || fail "another host's TEST of an unlocked range was refused"

# cross H HOLDER_MNT W LOCKER_MNT: a write lock on 0..9 held through
# HOLDER_MNT (by a locker that was granted it, pid in PID_H, released by
# touching SIG/H.go) blocks lockers through LOCKER_MNT; the blocking one
# is left holding 0..9 (released by SIG/W.go), pid in PID_W.
cross() {
	local h=$1 hm=$2 w=$3 wm=$4 refused blocked granted rc=0
	[[ $(other_test) == 1 ]] || fail "another host's TEST while $hm holds 0..9: not refused by the server"
	refused=$(nlm_count 'proc 2 svid .* \[5 +1\] write -> 1')
	lk "$wm/lk" w 5 1 nb || rc=$?
	((rc == 3)) || fail "non-blocking lock of byte 5 through $wm while $hm holds 0..9: status $rc, expected 3"
	wait_nlm 'proc 2 svid .* \[5 +1\] write -> 1' "$refused" "the refused LOCK through $wm at the server"
	blocked=$(nlm_count 'proc 2 svid .* \[0 +10\] write block -> 3')
	granted=$(nlm_count 'nlm: GRANTED svid')
	timeout -k 10 300 "${LOCKER[@]}" "$wm/lk" w 0 10 wait --ready "$SIG/$w" --release "$SIG/$w.go" &
	PID_W=$!
	BG_PIDS+=($!)
	wait_nlm 'proc 2 svid .* \[0 +10\] write block -> 3' "$blocked" \
		"the blocking LOCK through $wm answered NLM4_BLOCKED"
	[[ -e $SIG/$w ]] && fail "the blocking locker through $wm got 0..9 while $hm held it"
	touch "$SIG/$h.go"
	wait "$PID_H" || fail "the holder through $hm failed"
	wait_file "$SIG/$w" "the blocking lock through $wm granted after the holder through $hm let go"
	wait_nlm 'nlm: GRANTED svid' "$granted" "the GRANTED callback for the locker through $wm"
	[[ $(other_test) == 1 ]] || fail "another host's TEST while $wm holds 0..9: not refused by the server"
}
timeout -k 10 300 "${LOCKER[@]}" /mnt/r/lk w 0 10 nb --ready "$SIG/r" --release "$SIG/r.go" &
PID_H=$!
BG_PIDS+=($!)
wait_file "$SIG/r" "write lock 0..9 through /mnt/r"
cross r /mnt/r t /mnt/t
pass "a lock held over RDMA refuses a non-blocking locker over TCP and blocks a waiting one until released (NLM4_BLOCKED, GRANTED)"
rm -f "$SIG/r" "$SIG/r.go"
PID_H=$PID_W
cross t /mnt/t r /mnt/r
pass "a lock held over TCP refuses a non-blocking locker over RDMA and blocks a waiting one until released (NLM4_BLOCKED, GRANTED)"
touch "$SIG/r.go"
wait "$PID_W" || fail "the last holder through /mnt/r failed"
[[ $(other_test) == 0 ]] || fail "another host's TEST after every lock was released: refused"

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
