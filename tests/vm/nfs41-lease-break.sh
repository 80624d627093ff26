#!/usr/bin/env bash
# nfs41-lease-break: a read delegation of rpcrdma-nfsd --nfs4 (posix export)
# recalled for a change made on the server by a LOCAL process, not through
# NFS (RFC 8881 10.4.4): the delegation holds a kernel read lease
# (F_SETLEASE F_RDLCK) on the file, whose break the server turns into a
# CB_RECALL over the RDMA backchannel of the kernel NFSv4.1 client.
#   - /proc/sys/fs/lease-break-time is lowered to LBT (20 s): a local
#     writer the recall did not release would wait that long, then the
#     kernel would take the lease away; each local change below must end
#     in less than half of it (the time it waited is printed);
#   - for each case a file created locally (so no NFS write left the
#     server a write descriptor, which would refuse the lease) is opened
#     for reading on the NFSv4.1 mount and kept open: the server logs a
#     read delegation granted and holds a LEASE on the file (/proc/locks);
#   - write: a local process writes the file (open O_WRONLY|O_TRUNC,
#     blocking; the time its system calls took is printed):
#     the lease breaks, the server sends CB_RECALL, the client returns the
#     delegation (DELEGRETURN in /proc/self/mountstats and the server's
#     log), the lease is gone, the writer goes on; the client then reads
#     the new data byte-exact (reopened, no cache dropped);
#   - truncate(2) by path (blocking): the same;
#   - truncate(1) (`truncate -s`, which opens O_WRONLY|O_NONBLOCK): its
#     first try fails at once with EAGAIN ("Resource temporarily
#     unavailable") and starts the break; tried again every 0.1 s, it
#     succeeds once the recall gave the lease back;
#   - rename(2) and unlink(2) of the file: Linux does not break an
#     F_SETLEASE lease for them (they break only the kernel nfsd's own
#     delegations, FL_DELEG): they end at once, the lease stays ACTIVE and
#     no CB_RECALL is sent;
#   - the server's counters: backchannel calls all answered, no timeout.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
vm_require_guest

NFSD=$(rpcrdma_bin rpcrdma-nfsd)
EXPORT=$SCRATCH/export
SLOG=$SCRATCH/rpcrdma-nfsd.log
MA=/mnt/a
LBT=20

on_failure "echo '---- /proc/locks ----'; cat /proc/locks"
on_failure "echo '---- mountstats ----'; cat /proc/self/mountstats"

vm_kmod nfsv4 rpcrdma
LBT0=$(cat /proc/sys/fs/lease-break-time)
echo "$LBT" >/proc/sys/fs/lease-break-time || fail "cannot set lease-break-time"
at_exit "echo $LBT0 >/proc/sys/fs/lease-break-time"
[[ "$(cat /proc/sys/fs/leases-enable)" == 1 ]] || fail "leases are disabled in the guest"

rm -rf "$EXPORT"
mkdir -p "$EXPORT"
rnfsd_start "$NFSD" "$EXPORT" "$SLOG" --nfs4 --no-root-squash --stats -v -v \
	--handle-key "$SCRATCH/handle.key"
kmount41 "$SERVER_ADDR:$EXPORT" "$MA"
# a test that fails with the file open (fd 3) closes it while the server
# still runs: closed at exit, after the kill, the hard mount's CLOSE would
# hold this shell (and the guest) until the harness' timeout
at_exit "exec 3<&-"
[[ "$(mountstats_xprt "$MA")" == "xprt:"*"rdma"* ]] || fail "$MA is not over RDMA"

now_ms() { date +%s%3N; }

# localop OP PATH [ARG]: a local process does OP on PATH and prints how
# long its system calls took, in ms (python's start-up is not counted):
# write (open O_WRONLY|O_TRUNC, blocking, then ARG's bytes), truncate
# (truncate(2) to ARG bytes), rename (to ARG), unlink.
cat >"$SCRATCH/localop.py" <<'PY'
import os, sys, time
op, path = sys.argv[1], sys.argv[2]
data = open(sys.argv[3], "rb").read() if op == "write" else b""
t = time.monotonic()
if op == "write":
    fd = os.open(path, os.O_WRONLY | os.O_TRUNC)
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]
    os.close(fd)
elif op == "truncate":
    os.truncate(path, int(sys.argv[3]))
elif op == "rename":
    os.rename(path, sys.argv[3])
elif op == "unlink":
    os.unlink(path)
else:
    sys.exit("localop: unknown op " + op)
print(int((time.monotonic() - t) * 1000))
PY
localop() { timeout -k 10 120 python3 "$SCRATCH/localop.py" "$@"; }
nlog() { grep -c -e "$1" "$SLOG" || true; }
GRANT='^nfs4: read delegation granted to client '
RECALL='^nfs4: CB_RECALL of a read delegation to client .*: sent$'
RETURN='^nfs4: DELEGRETURN from client .*: NFS4_OK$'
BROKE='^nfs4: a lease broke (a change from outside): recalling$'

# lease_state FILE: the state (ACTIVE, BREAKING, ...) of the server's LEASE
# on FILE's inode in /proc/locks, empty when it holds none; lease_state_ino
# INO: the same for inode number INO (of a file removed).
lease_state() { lease_state_ino "$(stat -c %i "$1")"; }
lease_state_ino() {
	local ino=$1
	awk -v pid="$RNFSD_PID" -v ino="$ino" '
		$2 == "LEASE" && $5 == pid { n = split($6, a, ":"); if (a[n] == ino) { print $3; exit } }' /proc/locks
}

# hold_delegation NAME: create EXPORT/NAME locally with random data (also
# kept in SCRATCH/NAME.old), open it for reading on the mount as fd 3,
# read it; fail unless the server granted a read delegation for it and
# holds an active lease on the file.
hold_delegation() {
	local f=$1 g0
	head -c 70001 /dev/urandom >"$SCRATCH/$f.old"
	cp "$SCRATCH/$f.old" "$EXPORT/$f"
	chmod 644 "$EXPORT/$f"
	g0=$(nlog "$GRANT")
	exec 3<"$MA/$f" || fail "open $MA/$f for reading"
	bounded 30 "read $MA/$f" cmp "$MA/$f" "$SCRATCH/$f.old"
	(($(nlog "$GRANT") > g0)) || fail "$f: no read delegation granted for the open (server log)"
	[[ "$(lease_state "$EXPORT/$f")" == ACTIVE ]] ||
		fail "$f: the server holds no active lease on the file: '$(lease_state "$EXPORT/$f")'"
}

# recall_checks WHAT NAME MS R0 D0 B0: after a local change of NAME that
# took MS ms: a lease break logged (B0 before), a CB_RECALL sent (R0 before),
# the client's DELEGRETURN (D0 before in its mountstats), the lease gone,
# the change done well within lease-break-time.
recall_checks() {
	local what=$1 f=$2 ms=$3 r0=$4 d0=$5 b0=$6 d1
	log "$what: the local change took $ms ms (lease-break-time $LBT s)"
	(($(nlog "$BROKE") > b0)) || fail "$what: no lease break logged by the server"
	(($(nlog "$RECALL") > r0)) || fail "$what: no CB_RECALL sent (server log)"
	d1=$(mountstats_ops "$MA" DELEGRETURN)
	((${d1:-0} > d0)) || fail "$what: the client sent no DELEGRETURN (mountstats ${d0} -> ${d1})"
	grep -q "$RETURN" "$SLOG" || fail "$what: no DELEGRETURN NFS4_OK in the server log"
	[[ -z "$(lease_state "$EXPORT/$f")" ]] ||
		fail "$what: the server still holds a lease on $f: $(lease_state "$EXPORT/$f")"
	((ms < LBT * 1000 / 2)) ||
		fail "$what: the local change waited $ms ms, not well within lease-break-time ($LBT s): the recall did not give the lease back"
}

# nfs_reads NAME EXPECTED: the client (fd 3 closed, the file opened again,
# no cache dropped) reads EXPECTED's bytes.
nfs_reads() {
	exec 3<&-
	bounded 30 "read $MA/$1 after the change" cmp "$MA/$1" "$2"
}

declare -A WAITED

# ---------------------------------------------------------------- a local write
hold_delegation w
head -c 100003 /dev/urandom >"$SCRATCH/w.new"
r0=$(nlog "$RECALL") b0=$(nlog "$BROKE") d0=$(mountstats_ops "$MA" DELEGRETURN)
ms=$(localop write "$EXPORT/w" "$SCRATCH/w.new") || fail "the local write failed or timed out"
recall_checks "local write" w "$ms" "$r0" "${d0:-0}" "$b0"
compare_files "$EXPORT/w" "$SCRATCH/w.new"
nfs_reads w "$SCRATCH/w.new"
WAITED[write]=$ms
pass "a local write of a file with a read delegation out: lease broken, CB_RECALL sent, DELEGRETURN; the writer waited $ms ms (lease-break-time $LBT s); the client reads the new data"

# ---------------------------------------------------------------- truncate(2)
hold_delegation t
head -c 4097 "$SCRATCH/t.old" >"$SCRATCH/t.new"
r0=$(nlog "$RECALL") b0=$(nlog "$BROKE") d0=$(mountstats_ops "$MA" DELEGRETURN)
ms=$(localop truncate "$EXPORT/t" 4097) || fail "truncate(2) of the file failed or timed out"
recall_checks "truncate(2)" t "$ms" "$r0" "${d0:-0}" "$b0"
[[ "$(stat -c %s "$EXPORT/t")" == 4097 ]] || fail "truncate(2): size $(stat -c %s "$EXPORT/t")"
nfs_reads t "$SCRATCH/t.new"
WAITED[truncate2]=$ms
pass "truncate(2) by path of a file with a read delegation out: recalled and returned; it waited $ms ms; the client reads the 4097 bytes left"

# ---------------------------------------------------------------- truncate(1)
hold_delegation u
head -c 333 "$SCRATCH/u.old" >"$SCRATCH/u.new"
r0=$(nlog "$RECALL") b0=$(nlog "$BROKE") d0=$(mountstats_ops "$MA" DELEGRETURN)
t0=$(now_ms)
tries=0
while :; do
	tries=$((tries + 1))
	rc=0
	timeout -k 10 30 truncate -s 333 "$EXPORT/u" 2>"$SCRATCH/u.err" || rc=$?
	((rc == 0)) && break
	grep -q 'Resource temporarily unavailable' "$SCRATCH/u.err" ||
		fail "truncate -s: status $rc, not EAGAIN: $(cat "$SCRATCH/u.err")"
	(($(now_ms) - t0 < 60000)) || fail "truncate -s still refused after 60 s ($tries tries)"
	sleep 0.1
done
ms=$(($(now_ms) - t0))
log "truncate -s: $tries tries; the wall time includes starting truncate(1) each time"
((tries >= 2)) || fail "truncate -s succeeded at once: the lease did not refuse its O_NONBLOCK open"
recall_checks "truncate -s" u "$ms" "$r0" "${d0:-0}" "$b0"
[[ "$(stat -c %s "$EXPORT/u")" == 333 ]] || fail "truncate -s: size $(stat -c %s "$EXPORT/u")"
nfs_reads u "$SCRATCH/u.new"
WAITED[truncate1]=$ms
pass "truncate -s (O_NONBLOCK open): refused with EAGAIN while the delegation was out (the break started), through after $tries tries, $ms ms; the client reads the 333 bytes left"

# ---------------------------------------------------------------- rename, unlink
hold_delegation n
ino=$(stat -c %i "$EXPORT/n")
r0=$(nlog "$RECALL") b0=$(nlog "$BROKE")
ms_mv=$(localop rename "$EXPORT/n" "$EXPORT/n2") || fail "rename(2) of the file failed or timed out"
sleep 2
[[ "$(lease_state_ino "$ino")" == ACTIVE ]] ||
	fail "rename: the server's lease is '$(lease_state_ino "$ino")', expected ACTIVE (not broken)"
ms_rm=$(localop unlink "$EXPORT/n2") || fail "unlink(2) of the file failed or timed out"
sleep 2
[[ "$(lease_state_ino "$ino")" == ACTIVE ]] ||
	fail "unlink: the server's lease is '$(lease_state_ino "$ino")', expected ACTIVE (not broken)"
(($(nlog "$BROKE") == b0)) || fail "rename/unlink: the server saw a lease break"
(($(nlog "$RECALL") == r0)) || fail "rename/unlink: a CB_RECALL was sent"
((ms_mv < 1000 && ms_rm < 1000)) || fail "rename took $ms_mv ms, unlink $ms_rm ms: they waited"
exec 3<&-
pass "rename(2) ($ms_mv ms) and unlink(2) ($ms_rm ms) of a file with a read delegation out: not waited for, the kernel lease stays ACTIVE, no recall (Linux breaks only the kernel nfsd's FL_DELEG delegations there, not F_SETLEASE leases)"

# ---------------------------------------------------------------- the end
kumount "$MA"
rnfsd_term 30
rnfsd_check_final_stats
[[ "$(rnfsd_stat bc_timeouts)" == 0 ]] || fail "backchannel calls timed out: $(rnfsd_stat bc_timeouts)"
[[ "$(rnfsd_stat bc_calls)" == "$(rnfsd_stat bc_replies)" ]] ||
	fail "backchannel calls $(rnfsd_stat bc_calls), replies $(rnfsd_stat bc_replies)"
log "local writers waited (ms): write ${WAITED[write]}, truncate(2) ${WAITED[truncate2]}, truncate -s ${WAITED[truncate1]} (lease-break-time $LBT s)"
pass "local changes recalled read delegations through kernel leases; $(nlog "$RECALL") CB_RECALL, $(rnfsd_stat bc_calls) backchannel calls all answered"
