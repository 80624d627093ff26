#!/usr/bin/env bash
# nfs41-restart: rpcrdma-nfsd --nfs4 SIGKILLed and restarted under a
# vers=4.1 mount of the kernel client with state open (issue 16, RFC 8881
# 8.4.2): one process holds a file open for writing (part A written and
# fsynced before the kill), another holds a POSIX write lock (fcntl) on a
# second file.  The restarted server finds the client's record in
# --state-dir, starts a grace period, and the client reclaims both opens
# (OPEN CLAIM_PREVIOUS) and the lock (LOCK reclaim), then sends
# RECLAIM_COMPLETE, which ends the grace period early: the server's log
# says "1 of 1 clients reclaimed", with at least 2 opens and 1 lock
# reclaimed.  After it the lock still excludes a second locker on the
# client (fcntl F_SETLK: EAGAIN) and a process on the server (OFD lock:
# EAGAIN); the writer writes part B through its same descriptor and the
# server's file is A then B byte for byte; once the lock is released the
# second locker gets it.  Finally the unmount (DESTROY_CLIENTID) empties
# the record file, and the exit counters say the same as the log.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
vm_require_guest
umask 022

NFSD=$(rpcrdma_bin rpcrdma-nfsd)
LOCKER=$(dirname "${BASH_SOURCE[0]}")/locker.py
EXPORT=$SCRATCH/export
STATE=$SCRATCH/state
SLOG=$SCRATCH/rpcrdma-nfsd.log
MNT=/mnt/x
OPTS=vers=4.1,proto=rdma,port=$NFS_RDMA_PORT
T=/tmp/nfs41-restart

on_failure "echo '---- dmesg (last 40 lines) ----'; dmesg | tail -n 40"
on_failure "ls -l '$STATE'; od -A d -c '$STATE/nfs4-clients' 2>/dev/null | head -20"

rm -rf "$T" && mkdir -p "$T" "$EXPORT" "$STATE"
head -c 300000 /dev/urandom >"$T/a" || fail "make part A"
head -c 200000 /dev/urandom >"$T/b" || fail "make part B"
cat "$T/a" "$T/b" >"$T/ab"

start_server() {
	# a long grace: the early end (every client done) is what we expect
	rnfsd_start "$NFSD" "$EXPORT" "$SLOG.$1" --nfs4 --no-root-squash --stats \
		--handle-key "$SCRATCH/handle.key" --state-dir "$STATE" --grace 300 \
		--listen 0.0.0.0
}

# A second NFSv4.1 client (another client identity, mounting the server's
# second address): its locker's LOCK reaches the server, which must refuse
# it -- a second locker on the first mount is refused by the kernel
# client's own lock table before any LOCK is sent, so it alone would pass
# against a server that granted everything.  other_locker prints nothing
# and returns the locker's status (0 granted, 3 refused); the mount is
# gone again afterwards (its DESTROY_CLIENTID leaves one record on disk).
ADDR2=192.0.2.11
MNT2=/mnt/other
ip addr add $ADDR2/24 dev "$RPCRDMA_NETDEV" || fail "add $ADDR2"
set_identity() {
	local done=0
	if [[ -w /sys/fs/nfs/net/nfs_client/identifier ]]; then
		echo "$1" >/sys/fs/nfs/net/nfs_client/identifier && done=1
	fi
	if [[ -w /sys/module/nfs/parameters/nfs4_unique_id ]]; then
		echo "$1" >/sys/module/nfs/parameters/nfs4_unique_id && done=1
	fi
	((done)) || fail "no way to set the NFSv4 client identifier"
}
other_locker() { # KIND START LEN
	local rc=0
	mkdir -p "$MNT2"
	set_identity restart-other
	timeout -k 10 120 mount -t nfs -o "$OPTS" "$ADDR2:$EXPORT" "$MNT2" ||
		fail "mount -t nfs -o $OPTS $ADDR2:$EXPORT $MNT2 (the second client)"
	timeout -k 10 120 python3 "$LOCKER" "$MNT2/lockfile" "$@" nb || rc=$?
	kumount "$MNT2"
	return $rc
}

start_server 0
grep -q 'nfs4: 0 client records' "$SLOG.0" || fail "the first start found client records"
mkdir -p "$MNT"
vm_kmod nfsv4 rpcrdma
timeout -k 10 120 mount -t nfs -o "$OPTS" "$SERVER_ADDR:$EXPORT" "$MNT" ||
	fail "mount -t nfs -o $OPTS $SERVER_ADDR:$EXPORT $MNT"
at_exit "umount -f '$MNT' 2>/dev/null; umount -l '$MNT' 2>/dev/null"
line=$(awk -v m="$MNT" '$2 == m' /proc/mounts)
[[ "$line" == *" nfs4 "*"vers=4.1"* ]] || fail "mount $MNT is not NFSv4.1: '$line'"

# The writer: part A, fsync, then waits; part B through the same open.
python3 - "$MNT/data" "$T/a" "$T/b" "$T/a-done" "$T/go" "$T/b-done" <<'PY' &
import os, sys, time
path, a, b, a_done, go, b_done = sys.argv[1:]
fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
os.write(fd, open(a, "rb").read())
os.fsync(fd)
open(a_done, "w").close()
while not os.path.exists(go):
    time.sleep(0.1)
os.write(fd, open(b, "rb").read())
os.fsync(fd)
os.close(fd)
open(b_done, "w").close()
PY
writer=$!
at_exit "touch '$T/go'; kill $writer 2>/dev/null"
python3 "$LOCKER" "$MNT/lockfile" w 0 0 nb --ready "$T/locked" --release "$T/release" &
locker=$!
at_exit "touch '$T/release'; kill $locker 2>/dev/null"
wait_file() {
	local i
	for ((i = 0; i < 1200; i++)); do
		[[ -e "$1" ]] && return 0
		kill -0 "$2" 2>/dev/null || fail "$3 exited before $1"
		sleep 0.1
	done
	fail "$1 did not appear within 120 s"
}
wait_file "$T/a-done" "$writer" "the writer"
wait_file "$T/locked" "$locker" "the locker"
cmp -s "$T/a" "$EXPORT/data" || fail "the server's file is not part A before the restart"
rc=0
timeout -k 10 60 python3 "$LOCKER" "$MNT/lockfile" w 0 0 nb || rc=$?
((rc == 3)) || fail "a second locker before the restart: status $rc (3: refused expected)"
rc=0
other_locker w 0 0 || rc=$?
((rc == 3)) || fail "a locker of a second NFSv4.1 client before the restart: status $rc (3: refused by the server expected)"
[[ -s "$STATE/nfs4-clients" ]] || fail "no client record in $STATE/nfs4-clients after an OPEN"
pass "before the restart: part A on the server, the lock excludes a second locker on the client and one of a second client (the server's refusal), a client record on disk"

kill -KILL "$RNFSD_PID"
wait "$RNFSD_PID" 2>/dev/null || true
log "SIGKILLed rpcrdma-nfsd"
sleep 2
start_server 1
grep -q 'nfs4: 1 client records' "$SLOG.1" || fail "the restarted server did not load one client record"
grep -q 'nfs4: grace 300 s' "$SLOG.1" || fail "the restarted server started no grace period"
# Any call brings the client to the new server: it finds its session gone
# and recovers (EXCHANGE_ID, CREATE_SESSION, reclaims, RECLAIM_COMPLETE).
bounded 240 "stat across the restart" stat "$MNT/data" >/dev/null
for ((i = 0; i < 2400; i++)); do
	grep -q 'nfs4: grace period over' "$SLOG.1" && break
	sleep 0.1
done
over=$(grep -m1 'nfs4: grace period over' "$SLOG.1") ||
	fail "the grace period did not end within 240 s of the client's return"
log "server: $over"
[[ "$over" == *"(every client done): 1 of 1 clients reclaimed"* ]] ||
	fail "the grace period did not end by the client's RECLAIM_COMPLETE: $over"
opens=$(sed -n 's/.* \([0-9]*\) opens and \([0-9]*\) locks reclaimed.*/\1/p' <<<"$over")
locks=$(sed -n 's/.* \([0-9]*\) opens and \([0-9]*\) locks reclaimed.*/\2/p' <<<"$over")
((${opens:-0} >= 2)) || fail "$opens opens reclaimed (2 expected: the writer's and the locker's)"
((${locks:-0} >= 1)) || fail "$locks locks reclaimed (1 expected)"
pass "the client reclaimed $opens opens and $locks locks within the grace period, which its RECLAIM_COMPLETE ended"

kill -0 "$locker" 2>/dev/null || fail "the lock holder exited across the restart"
kill -0 "$writer" 2>/dev/null || fail "the writer exited across the restart"
rc=0
timeout -k 10 120 python3 "$LOCKER" "$MNT/lockfile" w 0 0 nb || rc=$?
((rc == 3)) || fail "a second locker after the restart: status $rc (3: refused expected)"
rc=0
python3 "$LOCKER" "$EXPORT/lockfile" w 0 0 nb || rc=$?
((rc == 3)) || fail "a lock on the server's file after the restart: status $rc (3: refused expected)"
rc=0
other_locker w 5 1 || rc=$?
((rc == 3)) || fail "a locker of a second NFSv4.1 client after the restart: status $rc (3: refused by the server expected)"
pass "after the restart the reclaimed lock still excludes a second locker (on the client, of a second client, and on the server)"

touch "$T/go"
wait_file "$T/b-done" "$writer" "the writer"
wait "$writer" || fail "the writer failed after the restart"
cmp -s "$T/ab" "$EXPORT/data" || fail "the server's file is not part A then part B"
drop_caches
cmp -s "$T/ab" "$MNT/data" || fail "the file read back through the mount is not part A then part B"
pass "data written before and after the restart through one open is intact (500000 bytes)"

touch "$T/release"
wait "$locker" || fail "the lock holder failed"
bounded 120 "a second locker after the release" python3 "$LOCKER" "$MNT/lockfile" w 0 0 nb
other_locker w 0 0 || fail "a locker of the second client after the release: status $? (0 expected)"
pass "after the release a second locker gets the lock, and so does one of the second client"

kumount "$MNT"
rnfsd_term
grep -q 'nfs4 recovery: 1 of 1 clients reclaimed' "$SLOG.1" ||
	fail "the exit counters do not say 1 of 1 clients reclaimed: $(grep 'nfs4 recovery' "$SLOG.1")"
log "server: $(grep 'nfs4 recovery' "$SLOG.1")"
# the unmount destroyed the client ID: no client is left to reclaim
n=$(od -A n -t u1 -j 8 -N 4 "$STATE/nfs4-clients" | awk '{ print $1 * 16777216 + $2 * 65536 + $3 * 256 + $4 }')
[[ "$n" == 0 ]] || fail "the record file holds $n clients after the unmount (0 expected)"
pass "the unmount (DESTROY_CLIENTID) removed the client's record"
# the kernel client's own EXCHANGE_ID, CREATE_SESSION, SEQUENCE retries,
# DESTROY_SESSION and DESTROY_CLIENTID never met the principal and
# connection checks (issue 33, finding 5)
grep -q 'nfs4 clients: 0 CLID_INUSE, 0 WRONG_CRED, 0 CONN_NOT_BOUND_TO_SESSION, 0 SEQ_FALSE_RETRY refused' \
	"$SLOG.1" || fail "the kernel client was refused: $(grep 'nfs4 clients' "$SLOG.1")"
pass "no request of the kernel client refused as another principal's or an unbound connection's"
