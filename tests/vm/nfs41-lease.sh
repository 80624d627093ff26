#!/usr/bin/env bash
# nfs41-lease: NFSv4.1 leases and courtesy clients of rpcrdma-nfsd --lease 10
# (issue 33, finding 6), with a client that stops renewing
# (vm-nfs41-holder, tests/vm/nfs41-holder.c) and the kernel client:
#   - the holder opens and write-locks bytes 0..9 of a file, then sends
#     nothing; the kernel client's lock of those bytes is refused;
#   - a lease and two seconds later the holder is a courtesy client: a
#     process on the server still cannot lock the bytes (local lockers do
#     not expire a courtesy client); the holder's SEQUENCE then succeeds
#     (it resumes with its state) and the kernel client is still refused;
#   - a lease and two seconds after that, the kernel client's lock is
#     granted (the courtesy client expired by the conflict), the holder's
#     next SEQUENCE is NFS4ERR_BADSESSION, and the kernel client's mount
#     works on.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
vm_require_guest

NFSD=$(rpcrdma_bin rpcrdma-nfsd)
HOLDER=$(rpcrdma_bin vm-nfs41-holder)
EXPORT=$SCRATCH/export
SLOG=$SCRATCH/rpcrdma-nfsd.log
HDIR=$SCRATCH/holder
LOCKER=$VM_TEST_DIR/locker.py
LEASE=10
MB=/mnt/b

on_failure "echo '---- dmesg (last 40 lines) ----'; dmesg | tail -n 40"
on_failure "echo '---- holder ----'; ls -l '$HDIR'; cat '$HDIR'/status-* 2>/dev/null; cat '$HDIR/log' 2>/dev/null"

rm -rf "$EXPORT" "$HDIR"
mkdir -p "$EXPORT" "$HDIR"
head -c 4096 /dev/zero >"$EXPORT/f"
chmod 666 "$EXPORT/f"
rnfsd_start "$NFSD" "$EXPORT" "$SLOG" --no-root-squash --lease $LEASE -v -v \
	--handle-key "$SCRATCH/handle.key" --listen 0.0.0.0 --state-dir "$SCRATCH/state"

# lock_status FILE: locker.py's status for a non-blocking write lock of
# bytes 0..9 (0 granted and released, 3 refused).
lock_status() {
	local rc=0
	timeout -k 10 60 python3 "$LOCKER" "$1" w 0 10 nb >&2 || rc=$?
	echo "$rc"
}

# probe K: the holder's K-th SEQUENCE; its nfsstat4.
probe() {
	local i
	touch "$HDIR/probe-$1"
	for ((i = 0; i < 300; i++)); do
		[[ -s "$HDIR/status-$1" ]] && { cat "$HDIR/status-$1"; return; }
		sleep 0.1
	done
	fail "the holder did not answer probe $1"
}

# the kernel client first: its mount takes longer than a lease here
kmount41 "$SERVER_ADDR:$EXPORT" "$MB"
"$HOLDER" "$SERVER_ADDR" "$CLIENT_ADDR" "$EXPORT" f "$HDIR" >"$HDIR/log" 2>&1 &
HOLDER_PID=$!
at_exit "kill -KILL $HOLDER_PID 2>/dev/null"
for ((i = 0; i < 300; i++)); do
	[[ -e "$HDIR/ready" ]] && break
	kill -0 "$HOLDER_PID" 2>/dev/null || fail "the holder exited: $(cat "$HDIR/log")"
	sleep 0.1
done
[[ -e "$HDIR/ready" ]] || fail "the holder did not lock within 30 s"
T0=$SECONDS
[[ "$(lock_status "$EXPORT/f")" == 3 ]] || fail "the holder's lock is not on the server's file"
pass "the holder locked bytes 0..9 and went silent"

[[ "$(lock_status "$MB/f")" == 3 ]] || fail "the kernel client got the holder's bytes within its lease"
pass "the kernel client is refused while the holder's lease runs"

sleep $((LEASE + 2 - (SECONDS - T0) > 0 ? LEASE + 2 - (SECONDS - T0) : 0))
[[ "$(lock_status "$EXPORT/f")" == 3 ]] ||
	fail "a local process got the bytes of a courtesy client (its lock was dropped without a conflict)"
pass "past its lease the holder keeps its lock while no client conflicts (a local locker is refused)"
st=$(probe 1)
[[ $st == 0 ]] || fail "the courtesy client's SEQUENCE: status $st, want NFS4_OK"
[[ "$(lock_status "$MB/f")" == 3 ]] || fail "the kernel client got the bytes of a client that came back"
pass "the holder came back with SEQUENCE before any conflict: it keeps its lock"
T1=$SECONDS

sleep $((LEASE + 2 - (SECONDS - T1) > 0 ? LEASE + 2 - (SECONDS - T1) : 0))
[[ "$(lock_status "$MB/f")" == 0 ]] ||
	fail "the kernel client is still refused $((SECONDS - T1)) s after the holder's last renewal (lease $LEASE s)"
pass "the kernel client's lock is granted $((SECONDS - T1)) s after the holder's last renewal (lease $LEASE s)"
st=$(probe 2)
[[ $st == 10052 ]] || fail "the expired holder's SEQUENCE: status $st, want NFS4ERR_BADSESSION (10052)"
pass "the expired holder gets NFS4ERR_BADSESSION"
[[ "$(lock_status "$MB/f")" == 0 ]] || fail "the kernel client cannot lock again"
timeout -k 10 30 ls -l "$MB" >/dev/null || fail "the kernel client's mount does not answer"
pass "the kernel client's mount works on"
