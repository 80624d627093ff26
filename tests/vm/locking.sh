#!/bin/bash
# SPDX-License-Identifier: MIT
# locking: the kernel client mounts rpcrdma-nfsd WITHOUT nolock and locks
# through its lock manager (NLM v4 over TCP, NSM).  NFSv3 itself goes over
# RDMA, or over TCP when registered as vm/locking-tcp with
# RPCRDMA_NFS_PROTO=tcp (issue 36; /proc/self/mountstats says which); the
# NLM side is the same either way:
#   1. two client processes contend for fcntl locks: byte ranges, read and
#      write locks, a blocking wait that ends when the holder unlocks (the
#      client's lockd queues a waiter behind a lock of its own host); the
#      client's own lock table settles these, so each conflict is also
#      put to the server by another host's lock manager (nlm_call.py: NLM
#      TEST and LOCK from owner "other-host"), which must be refused;
#   2. flock (the client sends it as a whole-file NLM lock);
#   3. a lock held by a local process on the server blocks a client, whose
#      blocking wait (NLM4_BLOCKED) is granted by a GRANTED callback when
#      the local process lets go, and a
#      client's lock blocks a local process (OFD locks on the export);
#   4. rpcrdma-nfsd is SIGKILLed and restarted: it notifies the client
#      (SM_NOTIFY to its rpc.statd), the client reclaims its lock within
#      the grace period, a new locker is refused (NLM4_DENIED_GRACE_PERIOD)
#      until the grace period ends and then finds the reclaimed lock held;
#   5. SM_NOTIFY from a rebooted client (sm_notify.py, by its caller_name,
#      from its address) releases the client's locks and its record.
#
# Test-bed arrangement (docs/testbed.md, "Locking"): client and server
# share one guest, one rpcbind and one rpc.statd.  The client's lockd owns
# program 100021 in rpcbind; it listens on a fixed port (nlm_tcpport), and
# an nftables rule sends the client's NLM connections to the server
# address at that port to rpcrdma-nfsd's NLM port instead.  Callbacks go
# to the client address, which the rule leaves alone.
. "$(dirname "$0")/lib.sh"

vm_require_guest
command -v python3 >/dev/null || skip "python3 is not installed"

NFSD=$(rpcrdma_bin rpcrdma-nfsd)
LOCKER="python3 $VM_TEST_DIR/locker.py"
EXPORT=$SCRATCH/export
MNT=/mnt/locking
STATE=$SCRATCH/nlm-state
KEY=$SCRATCH/handle.key
SIG=$SCRATCH/sig            # ready/release markers (not on the mount)
LOCKD_PORT=4045             # the client lockd's port (rpcbind's answer)
NLM_PORT=4046               # rpcrdma-nfsd's NLM
NSM_PORT=4047
GRACE=20
mkdir -p "$SIG" "$EXPORT"

# ---- rpcbind, rpc.statd, lockd on a fixed port, the NAT rule ----
nlm_testbed "$LOCKD_PORT" "$NLM_PORT"

SERVER_ARGS=(--handle-key "$KEY" --state-dir "$STATE" --nlm-port "$NLM_PORT"
	     --nsm-port "$NSM_PORT" --grace "$GRACE" --no-root-squash -v)
rnfsd_start "$NFSD" "$EXPORT" "$SCRATCH/rnfsd-1.log" "${SERVER_ARGS[@]}"
LOG1=$RNFSD_LOG
grep -q "nlm: NLM v4 on TCP port $NLM_PORT" "$LOG1" || fail "no lock manager in the server log"

# the first server's grace period runs out before the client locks
wait_log() { # LOG PATTERN SECS WHAT
	local i
	for ((i = 0; i < $3 * 5; i++)); do
		grep -q -- "$2" "$1" && return 0
		sleep 0.2
	done
	fail "$4: no '$2' in $1 after $3 s"
}
wait_file() { # PATH SECS WHAT
	local i
	for ((i = 0; i < $2 * 10; i++)); do
		[[ -e $1 ]] && return 0
		sleep 0.1
	done
	fail "$3: $1 did not appear in $2 s"
}
wait_log "$LOG1" "grace period over" $((GRACE + 30)) "first grace period"

opts=vers=3,$(nfs_proto_opts),mountport=$MOUNT_PORT,mountproto=tcp
mkdir -p "$MNT"
timeout -k 10 120 mount -t nfs -o "$opts" "$SERVER_ADDR:$EXPORT" "$MNT" ||
	fail "mount -o $opts (with locking)"
at_exit "kumount '$MNT'"
at_exit stop_lockers
grep -q " $MNT nfs .*nolock" /proc/mounts && fail "the mount has nolock: $(grep " $MNT " /proc/mounts)"
xprt=$(mountstats_xprt "$MNT")
[[ "$xprt" == "xprt:"*"$NFS_PROTO"* ]] || fail "mount $MNT is not over $NFS_PROTO: '$xprt'"
log "mounted with locking: $(grep " $MNT " /proc/mounts)"

F=$MNT/f
printf '%4096s' x >"$F"
# Another host's lock manager: NLM TEST and LOCK sent straight to the
# server by tests/vm/nlm_call.py (owner svid 4242 of caller "other-host"),
# so that a conflict is settled by the server's lock table.  The kernel
# client settles conflicts between its own processes in its own table
# first (one host: its lockd queues a waiter itself), so the client-side
# checks alone would pass against a server that granted everything.
FH=$(rpcrdma_bin vm-nfs3-fh)
bounded 60 "vm-nfs3-fh save f" "$FH" save "$SERVER_ADDR" "$CLIENT_ADDR" "$MOUNT_PORT" \
	"$EXPORT" "$SCRATCH/fh-f" f >/dev/null || fail "vm-nfs3-fh save f"
other() { # PROC FHFILE KIND START LEN: the nlm4_stats the server answers
	bounded 60 "nlm_call.py $*" python3 "$VM_TEST_DIR/nlm_call.py" "$SERVER_ADDR" \
		"$NLM_PORT" "$CLIENT_ADDR" "$1" other-host "${@:2}"
}
expect_other() { # WANT WHAT PROC FHFILE KIND START LEN (0 granted, 1 denied)
	local want=$1 what=$2 got
	shift 2
	got=$(other "$@") || fail "$what: NLM $1 not answered"
	[[ $got == "$want" ]] || fail "$what: NLM $1 from another host answered $got, expected $want"
}
lk() { timeout -k 10 120 $LOCKER "$@"; }
# bg NAME ARGS...: a locker in the background; its pid in PID_NAME
BG_PIDS=()
bg() {
	local name=$1
	shift
	timeout -k 10 300 $LOCKER "$@" &
	printf -v "PID_$name" %s $!
	BG_PIDS+=($!)
}
# on the way out (before the unmount): lockers let go or are killed
stop_lockers() {
	touch "$SIG"/{p1,p2,r,fl,l1,c1,h,h2}.go
	((${#BG_PIDS[@]})) && kill -KILL "${BG_PIDS[@]}" 2>/dev/null
	return 0
}
expect_rc() { # WANT WHAT CMD...
	local want=$1 what=$2 rc=0
	shift 2
	"$@" || rc=$?
	((rc == want)) || fail "$what: status $rc, expected $want"
}
release() { touch "$SIG/$1"; }

# ---- 1. two client processes: ranges, read and write locks, blocking ----
bg P1 "$F" w 0 100 nb --ready "$SIG/p1" --release "$SIG/p1.go"
wait_file "$SIG/p1" 60 "write lock 0+100"
expect_rc 3 "write lock on byte 50 while 0..99 is write-locked" lk "$F" w 50 1 nb
expect_rc 3 "read lock on byte 99 while 0..99 is write-locked" lk "$F" r 99 1 nb
expect_rc 0 "write lock 100+10 next to the held range" lk "$F" w 100 10 nb
expect_rc 0 "read lock to the end of the file from 200" lk "$F" r 200 0 nb
expect_other 1 "another host's TEST of byte 50 while the client write-locks 0..99" \
	test "$SCRATCH/fh-f" w 50 1
expect_other 1 "another host's read LOCK of byte 99 while the client write-locks 0..99" \
	lock "$SCRATCH/fh-f" r 99 1
expect_other 0 "another host's TEST of bytes 300..309 (nobody holds them)" \
	test "$SCRATCH/fh-f" w 300 10
bg P2 "$F" w 0 100 wait --ready "$SIG/p2" --release "$SIG/p2.go"
# Two processes of one client: the client's lockd finds the conflict in its
# own lock table and queues the waiter itself (it shows in /proc/locks);
# the server sees the LOCK when the holder has let go.
for ((i = 0; i < 300; i++)); do grep -qE -- '-> (POSIX|ACCESS)' /proc/locks && break; sleep 0.2; done
grep -qE -- '-> (POSIX|ACCESS)' /proc/locks || fail "the second locker is not waiting: $(cat /proc/locks)"
[[ -e $SIG/p2 ]] && fail "the blocking locker got 0..99 while it was held"
release p1.go
wait "$PID_P1" || fail "holder P1 failed"
wait_file "$SIG/p2" 60 "blocking lock granted after the holder unlocked"
# Usually the client's lockd sends the waiter's LOCK once the holder's UNLOCK
# is answered (granted: 0); when the LOCK gets there first the server
# answers BLOCKED (3) and grants it by a GRANTED callback after the UNLOCK
# (CI run on a1b5db5): both are right.
wait_log "$LOG1" "proc 2 svid .* \\[0 +100\\] write block -> [03]" 10 "the waiter's LOCK at the server"
if grep -q "proc 2 svid .* \\[0 +100\\] write block -> 3" "$LOG1"; then
	wait_log "$LOG1" "GRANTED svid" 10 "the GRANTED callback to the waiter the server blocked"
fi
release p2.go
wait "$PID_P2" || fail "waiter P2 failed"
log "ranges, write locks and a blocking wait granted: ok"

# read locks share, a write lock is refused
bg R1 "$F" r 0 100 nb --ready "$SIG/r1" --release "$SIG/r.go"
wait_file "$SIG/r1" 60 "read lock R1"
bg R2 "$F" r 0 100 nb --ready "$SIG/r2" --release "$SIG/r.go"
wait_file "$SIG/r2" 60 "second read lock R2 (read locks share)"
expect_rc 3 "write lock under two read locks" lk "$F" w 10 1 nb
expect_other 0 "another host's TEST of a read lock under two read locks" \
	test "$SCRATCH/fh-f" r 0 10
expect_other 1 "another host's TEST of a write lock under two read locks" \
	test "$SCRATCH/fh-f" w 10 1
release r.go
wait "$PID_R1" || fail "R1"
wait "$PID_R2" || fail "R2"
expect_rc 0 "write lock after the readers left" lk "$F" w 0 0 nb
log "read locks: ok"

# ---- 2. flock ----
bg FL "$F" fx 0 0 nb --ready "$SIG/fl" --release "$SIG/fl.go"
wait_file "$SIG/fl" 60 "flock -x"
expect_rc 3 "second flock -x" lk "$F" fx 0 0 nb
expect_rc 3 "flock -s under flock -x" lk "$F" fs 0 0 nb
expect_other 1 "another host's TEST under the client's flock -x (a whole-file NLM lock)" \
	test "$SCRATCH/fh-f" r 0 0
release fl.go
wait "$PID_FL" || fail "flock holder"
expect_rc 0 "flock -x after release" lk "$F" fx 0 0 nb
log "flock: ok"

# ---- 3. a local process on the server, and the reverse ----
LF=$EXPORT/f
bg L1 "$LF" w 0 10 nb --ready "$SIG/l1" --release "$SIG/l1.go"
wait_file "$SIG/l1" 30 "local lock on the server"
expect_rc 3 "client lock on a byte a server-local process holds" lk "$F" w 5 1 nb
bg C1 "$F" w 0 10 wait --ready "$SIG/c1" --release "$SIG/c1.go"
wait_log "$LOG1" "proc 2 svid .* \[0 +10\] write block -> 3" 60 "client blocked behind a local lock"
[[ -e $SIG/c1 ]] && fail "the client got bytes a local process holds"
release l1.go
wait "$PID_L1" || fail "local holder"
wait_file "$SIG/c1" 60 "client's blocking lock granted when the local process let go"
wait_log "$LOG1" "nlm: GRANTED svid" 10 "the GRANTED callback"
expect_rc 3 "server-local lock on bytes the client holds" lk "$LF" w 0 1 nb
expect_rc 0 "server-local lock on bytes the client does not hold" lk "$LF" w 10 1 nb
release c1.go
wait "$PID_C1" || fail "client C1"
expect_rc 0 "server-local lock after the client let go" lk "$LF" w 0 10 nb
log "locks shared with server-local processes: ok"

# ---- 4. restart: notify, reclaim within the grace period, new lockers refused ----
R=$MNT/r
printf '%4096s' x >"$R"
bg H "$R" w 0 10 nb --ready "$SIG/h" --release "$SIG/h.go"
wait_file "$SIG/h" 60 "lock to reclaim"
[[ -n $(ls "$STATE/sm") ]] || fail "no host recorded in $STATE/sm"
log "recorded hosts: $(cat "$STATE"/sm/* | tr '\n' ' ')"
kill -KILL "$RNFSD_PID"
wait "$RNFSD_PID" 2>/dev/null || true
rnfsd_start "$NFSD" "$EXPORT" "$SCRATCH/rnfsd-2.log" "${SERVER_ARGS[@]}"
LOG2=$RNFSD_LOG
wait_log "$LOG2" "nsm: notified $CLIENT_ADDR" 60 "SM_NOTIFY to the client after the restart"
wait_log "$LOG2" "proc 2 svid .* \[0 +10\] write.*reclaim -> 0" $((GRACE - 2)) \
	"the client's reclaim"
grep -q "grace period over" "$LOG2" && fail "grace period over before the test could see it (raise GRACE)"
# the reclaimed lock is real on the server
expect_rc 3 "server-local lock on the reclaimed bytes" lk "$EXPORT/r" w 0 1 nb
# a new locker (bytes nobody holds): refused while the grace period runs
# (the client waits and asks again), granted once it is over
bg N "$R" w 100 10 nb
wait_log "$LOG2" "proc 2 svid .* \\[100 +10\\] write -> 4" 60 \
	"new locker refused with NLM4_DENIED_GRACE_PERIOD"
rc=0
wait "$PID_N" || rc=$?
((rc == 0)) || fail "new locker: status $rc after the grace period, expected 0"
grep -q "grace period over" "$LOG2" || fail "the new locker got its lock before the grace period ended"
grep -q "proc 2 svid .* \\[100 +10\\] write -> 0" "$LOG2" || fail "no granted LOCK for the new locker"
# a new locker on the reclaimed bytes: the client's own table has them
# (its reclaimed lock); a local process on the server is refused too
expect_rc 3 "client lock on the reclaimed bytes" lk "$R" w 5 1 nb
bounded 60 "vm-nfs3-fh save r" "$FH" save "$SERVER_ADDR" "$CLIENT_ADDR" "$MOUNT_PORT" \
	"$EXPORT" "$SCRATCH/fh-r" r >/dev/null || fail "vm-nfs3-fh save r"
expect_other 1 "another host's TEST of the reclaimed bytes (the server's table, not the client's)" \
	test "$SCRATCH/fh-r" w 5 1
expect_rc 3 "server-local lock on the reclaimed bytes after the grace period" lk "$EXPORT/r" w 0 1 nb
release h.go
wait "$PID_H" || fail "reclaimed holder"
expect_rc 0 "lock after the reclaimed holder let go" lk "$R" w 0 10 nb
log "restart: notified, reclaimed in grace, new locker refused until it ended: ok"

# ---- 5. a client that reboots: its SM_NOTIFY releases its locks ----
S=$MNT/s
printf '%4096s' x >"$S"
bg H2 "$S" w 0 10 nb --ready "$SIG/h2" --release "$SIG/h2.go"
wait_file "$SIG/h2" 60 "lock before the client's reboot"
expect_rc 3 "server-local lock on bytes the client holds" lk "$EXPORT/s" w 0 1 nb
rec=$STATE/sm/$CLIENT_ADDR
[[ -f $rec ]] || fail "no record $rec for the client"
name=$(sed -n 3p "$rec")
[[ -n $name ]] || fail "no caller_name in $rec"
# as the rebooted client's sm-notify would: from the client's address (a
# notification from any other address releases nothing: hostile-peers)
bounded 60 "SM_NOTIFY" python3 "$VM_TEST_DIR/sm_notify.py" "$SERVER_ADDR" "$NSM_PORT" \
	"$name" 7 "$CLIENT_ADDR"
wait_log "$LOG2" "nsm: SM_NOTIFY from $name state 7" 10 "SM_NOTIFY received"
expect_rc 0 "server-local lock after the client's reboot notification" lk "$EXPORT/s" w 0 10 nb
[[ -f $rec ]] && fail "the rebooted client's record $rec is still there"
release h2.go
wait "$PID_H2" || fail "H2"
log "reboot notification released the client's locks: ok"

xprt=$(mountstats_xprt "$MNT")
[[ "$xprt" == "xprt:"*"$NFS_PROTO"* ]] || fail "after the restart $MNT is not over $NFS_PROTO: '$xprt'"
kumount "$MNT"
rnfsd_term
grep "locks:" "$LOG2" || true
grep -q "locks: .* 0 held" "$LOG2" || fail "locks still held at exit"
pass "locking"
