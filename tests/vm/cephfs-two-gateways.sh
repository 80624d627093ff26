#!/usr/bin/env bash
# cephfs-two-gateways: two rpcrdma-nfsd on one CephFS (issue 35, "Several
# gateways"), in one guest with a single-node cluster (scripts/ceph-up):
#   - gateway A listens on 192.0.2.1, gateway B on a second address,
#     192.0.2.11; both serve `cephfs://admin@cephfs/` (fsid=7) with the SAME
#     --handle-key file and each its own --state-dir, NLM and NSM ports and
#     control socket (docs/cephfs.md, "Several gateways");
#   - data: a 5 MiB + 3 B file written through A (NFSv3 over RDMA, cp, so
#     closed) reads byte-exact through B, and one written through B through
#     A; a file B has read and cached, rewritten through A (same size), reads
#     as A's bytes when B opens it again (close-to-open through two gateways);
#   - handles: the NFSv3 handle of a file is the same whether A or B gave it
#     (our test client, vm-nfs3-fh, LOOKUPs it through each); A's handle sent
#     to B: GETATTR NFS3_OK and READ of the whole file byte-exact.  This is
#     what a client moving from A to B with its open files needs: the kernel
#     client can not be told to send a mount's handles to another server,
#     so the handles are carried by hand; the kernel mounts of A and B show
#     the same fileid for the file too;
#   - locks: the kernel client mounts A and B with locking (NLM over TCP,
#     as tests/vm/locking.sh arranges it: one rpc.statd, the client's lockd
#     on a fixed port, an nftables rule per gateway address sending the
#     client's NLM connections to that gateway's NLM port).  A write lock
#     held through A (tests/vm/locker.py, fcntl F_SETLK) refuses a write lock
#     through B on an overlapping byte (NLM4_DENIED: B's ceph_ll_setlk meets
#     A's lock at the MDS) and leaves a lock through B on other bytes alone;
#     a blocking locker through B (F_SETLKW) waits (B answers NLM4_BLOCKED)
#     and is granted (B's GRANTED callback) once A's holder unlocks; then the
#     other way round;
#   - NFSv4.1: a read delegation that A granted (a file made through a
#     kernel CephFS mount, kept open on an NFSv4.1 mount of A) is recalled when the file is written through an
#     NFSv4.1 mount of B: B's libcephfs wants the write caps, the MDS
#     revokes A's, libcephfs calls the delegation's break callback, A sends
#     CB_RECALL, the client returns the delegation, B's write goes through
#     and A's mount reads B's bytes;
#   - grace across gateways (docs/cephfs.md "Grace across gateways"): both
#     serve with grace=/.rpcrdma-grace.  A client of A holds a write lock;
#     the client's rpc.statd is stopped (so A's reboot notification, and
#     with it the reclaim, waits: the window made wide), A is SIGKILLed and
#     restarted with --grace $GRACE_A: it writes its grace record, then
#     resets its old Ceph session (the MDS drops the lock).  A client of B
#     asks for the same bytes, non-blocking: B answers
#     NLM4_DENIED_GRACE_PERIOD (the kernel client waits and asks again).
#     statd continued: A's client reclaims (granted).  Once A's grace is
#     over B's answer is NLM4_DENIED, the locker through B is refused, and
#     again afterwards; the reclaimed holder still holds until it lets go.
#     Without the cluster grace B grants the lock in the window (its log
#     "-> 0") and A's client's reclaim is refused: the lock is lost;
#   - SIGTERM: both gateways exit 0.
# Skips (77) when rpcrdma-nfsd was built without the cephfs backend, when
# Ceph is not installed, or without nft / rpc.statd / python3.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
vm_require_guest
umask 022

NFSD=$(rpcrdma_bin rpcrdma-nfsd)
ceph_gateway_check "$NFSD"
command -v nft >/dev/null || skip "nft is not installed (apt-get install nftables)"
command -v rpc.statd >/dev/null || skip "rpc.statd is not installed (nfs-common)"
command -v python3 >/dev/null || skip "python3 is not installed"
FH=$(rpcrdma_bin vm-nfs3-fh)

ADDR_A=$SERVER_ADDR
ADDR_B=192.0.2.11
EXPORTS=$SCRATCH/exports
KEY=$SCRATCH/handle.key
LOCKER="python3 $VM_TEST_DIR/locker.py"
SIG=$SCRATCH/sig
LOCKD_PORT=4045             # the client lockd's port (rpcbind's answer)
NLM_A=4046 NSM_A=4047 NLM_B=4048 NSM_B=4049
GRACE_A=45                  # A's --grace at its restart (its record: + 10 s)
GRACE_DIR=/.rpcrdma-grace   # the gateways' grace records, in the file system
MA=/mnt/a MB=/mnt/b
ORIG=$SCRATCH/orig
mkdir -p "$SIG" "$ORIG"

ip addr add "$ADDR_B/24" dev "$RPCRDMA_NETDEV" || fail "add $ADDR_B"
at_exit "ip addr del '$ADDR_B/24' dev '$RPCRDMA_NETDEV' 2>/dev/null"
# connections to B come from the client address, as scripts/vm arranges it
# for 192.0.2.1: B's GRANTED callbacks then go to the client's lockd at
# 192.0.2.2 (a callback to 192.0.2.1's lockd port would be sent to A's NLM
# port by the NAT rule below)
ip route replace local "$ADDR_B" dev "$RPCRDMA_NETDEV" table local proto kernel scope host \
	src "$CLIENT_ADDR" || fail "ip route: source $CLIENT_ADDR for $ADDR_B"
ceph_up
t_up=$SECONDS

# ---- rpcbind, rpc.statd, the client's lockd on a fixed port, NAT rules ----
# (lib.sh's nlm_testbed: its rule sends the client's NLM connections to
# A's address to A's NLM port; the rule for B's address is added here)
nlm_testbed "$LOCKD_PORT" "$NLM_A"
statd_pid=$NLM_STATD_PID
vm_kmod nfsv4
nft -f - <<EOF || fail "nft: cannot add the NLM redirect for B"
table ip rpcrdma_cephfs2 {
	chain out {
		type nat hook output priority -100; policy accept;
		ip daddr $ADDR_B tcp dport $LOCKD_PORT dnat to $ADDR_B:$NLM_B
	}
}
EOF
at_exit "nft delete table ip rpcrdma_cephfs2 2>/dev/null"

# ---- the two gateways ----
# the grace directory, made through Ceph (docs/cephfs.md)
ceph_kmount /mnt/cephfs
mkdir -p "/mnt/cephfs$GRACE_DIR" || fail "mkdir $GRACE_DIR in CephFS"
kumount /mnt/cephfs
printf '%s\n' "cephfs://admin@cephfs/ 192.0.2.0/24(rw,no_root_squash,insecure,fsid=7,backend=cephfs:grace=$GRACE_DIR)" >"$EXPORTS"
# (--grace 0: nothing to reclaim on a first start; the fault test restarts)
RNFSD_ADDR=$ADDR_A rnfsd_start_exports "$NFSD" "$EXPORTS" "$SCRATCH/gw-a.log" \
	--handle-key "$KEY" --state-dir "$SCRATCH/state-a" --nlm-port "$NLM_A" --nsm-port "$NSM_A" \
	--control "$SCRATCH/gw-a.sock" --grace 0 --threads 4 --stats -v
PID_A=$RNFSD_PID LOG_A=$RNFSD_LOG
A_ARGS=(--handle-key "$KEY" --state-dir "$SCRATCH/state-a" --nlm-port "$NLM_A" --nsm-port "$NSM_A"
	--control "$SCRATCH/gw-a.sock" --threads 4 --stats -v)
RNFSD_ADDR=$ADDR_B rnfsd_start_exports "$NFSD" "$EXPORTS" "$SCRATCH/gw-b.log" \
	--handle-key "$KEY" --state-dir "$SCRATCH/state-b" --nlm-port "$NLM_B" --nsm-port "$NSM_B" \
	--control "$SCRATCH/gw-b.sock" --grace 0 --threads 4 --stats -v
PID_B=$RNFSD_PID LOG_B=$RNFSD_LOG
pass "two gateways on one CephFS: A on $ADDR_A (pid $PID_A), B on $ADDR_B (pid $PID_B), one handle key, state in $SCRATCH/state-a and state-b"

opts3=vers=3,proto=rdma,port=$NFS_RDMA_PORT,mountport=$MOUNT_PORT,mountproto=tcp
mount3() { # ADDR MNT: NFSv3 over RDMA, with locking (no nolock)
	mkdir -p "$2"
	timeout -k 10 120 mount -t nfs -o "$opts3" "$1:/" "$2" || fail "mount -t nfs -o $opts3 $1:/ $2"
	at_exit "kumount '$2'"
	[[ "$(mountstats_xprt "$2")" == "xprt:"*"rdma"* ]] || fail "$2 is not over RDMA"
	grep -q " $2 nfs .*nolock" /proc/mounts && fail "$2 has nolock"
	return 0
}
mount3 "$ADDR_A" "$MA"
mount3 "$ADDR_B" "$MB"
log "NFSv3 over RDMA with locking: $ADDR_A:/ on $MA, $ADDR_B:/ on $MB"

# ---------------------------------------------------------------- data
t0=$SECONDS
mkdir "$MA/two" || fail "mkdir through A"
head -c $((5 * 1048576 + 3)) /dev/urandom >"$ORIG/ab.bin"
head -c 1048579 /dev/urandom >"$ORIG/ba.bin"
bounded 300 "cp through A" cp "$ORIG/ab.bin" "$MA/two/ab.bin"
compare_files "$ORIG/ab.bin" "$MB/two/ab.bin"
pass "5 MiB + 3 B written through A (closed) reads byte-exact through B"
bounded 300 "cp through B" cp "$ORIG/ba.bin" "$MB/two/ba.bin"
compare_files "$ORIG/ba.bin" "$MA/two/ba.bin"
pass "1 MiB + 3 B written through B reads byte-exact through A"
# B caches the file; A rewrites it (same size); B's next open sees A's bytes
head -c 65536 /dev/urandom >"$ORIG/c1.bin"
head -c 65536 /dev/urandom >"$ORIG/c2.bin"
cp "$ORIG/c1.bin" "$MA/two/c.bin"
compare_files "$ORIG/c1.bin" "$MB/two/c.bin"
sleep 1
cp "$ORIG/c2.bin" "$MA/two/c.bin"
compare_files "$ORIG/c2.bin" "$MB/two/c.bin"
pass "a file B had read, rewritten through A at the same size: B's next open reads A's bytes"
log "data part: $((SECONDS - t0)) s"

# ---------------------------------------------------------------- handles
t0=$SECONDS
fhc() { # ADDR CMD ARGS...: vm-nfs3-fh CMD against gateway ADDR, export "/"
	local addr=$1 cmd=$2
	shift 2
	timeout -k 10 120 "$FH" "$cmd" "$addr" "$CLIENT_ADDR" "$MOUNT_PORT" / "$@"
}
fhc "$ADDR_A" save "$SCRATCH/fh-a" two/ab.bin >/dev/null || fail "vm-nfs3-fh save through A"
fhc "$ADDR_B" save "$SCRATCH/fh-b" two/ab.bin >/dev/null || fail "vm-nfs3-fh save through B"
fh_a=$(<"$SCRATCH/fh-a") fh_b=$(<"$SCRATCH/fh-b")
log "handle of two/ab.bin: A $fh_a, B $fh_b"
[[ -n "$fh_a" && "$fh_a" == "$fh_b" ]] || fail "the handles of two/ab.bin differ: A $fh_a, B $fh_b"
[[ "$(fhc "$ADDR_B" getattr "$SCRATCH/fh-a")" == 0 ]] || fail "GETATTR of A's handle through B is not NFS3_OK"
out=$(fhc "$ADDR_B" read "$SCRATCH/fh-a" "$SCRATCH/read-b.bin") || fail "READ of A's handle through B: $out"
[[ "$out" == 0 ]] || fail "READ of A's handle through B: $out"
compare_files "$ORIG/ab.bin" "$SCRATCH/read-b.bin"
ino_a=$(stat -c %i "$MA/two/ab.bin") ino_b=$(stat -c %i "$MB/two/ab.bin")
[[ "$ino_a" == "$ino_b" ]] || fail "fileid through A $ino_a, through B $ino_b"
pass "A and B give one handle for two/ab.bin; A's handle through B: GETATTR NFS3_OK, READ byte-exact; fileid $ino_a on both mounts"
log "handles part: $((SECONDS - t0)) s"

# ---------------------------------------------------------------- locks
t0=$SECONDS
BG_PIDS=()
bg() { # NAME LOCKER-ARGS...: a locker in the background, its pid in PID_NAME
	local name=$1
	shift
	timeout -k 10 300 $LOCKER "$@" &
	printf -v "PID_$name" %s $!
	BG_PIDS+=($!)
}
stop_lockers() {
	touch "$SIG"/{ha,wb,hb,wa,hg}.go
	((${#BG_PIDS[@]})) && kill -KILL "${BG_PIDS[@]}" 2>/dev/null
	return 0
}
at_exit stop_lockers
lk() { timeout -k 10 120 $LOCKER "$@"; }
expect_rc() { # WANT WHAT CMD...
	local want=$1 what=$2 rc=0
	shift 2
	"$@" || rc=$?
	((rc == want)) || fail "$what: status $rc, expected $want"
}
wait_file() { # PATH SECS WHAT
	local i
	for ((i = 0; i < $2 * 10; i++)); do
		[[ -e $1 ]] && return 0
		sleep 0.1
	done
	fail "$3: $1 did not appear in $2 s"
}
wait_log() { # LOG PATTERN SECS WHAT
	local i
	for ((i = 0; i < $3 * 5; i++)); do
		grep -q -- "$2" "$1" && return 0
		sleep 0.2
	done
	fail "$4: no '$2' in $1 after $3 s"
}
printf '%4096s' x >"$MA/two/lk"

# A holds 0..99 for writing
bg HA "$MA/two/lk" w 0 100 nb --ready "$SIG/ha" --release "$SIG/ha.go"
wait_file "$SIG/ha" 60 "write lock 0+100 through A"
wait_log "$LOG_A" "proc 2 svid .* \\[0 +100\\] write -> 0" 10 "A's LOCK granted at A"
expect_rc 3 "write lock on byte 50 through B while A holds 0..99" lk "$MB/two/lk" w 50 1 nb
grep -q "proc 2 svid .* \\[50 +1\\] write -> 1" "$LOG_B" ||
	fail "B did not answer the conflicting LOCK NLM4_DENIED (its log: $(grep 'proc 2' "$LOG_B" | tail -n 3))"
expect_rc 0 "write lock on bytes 100..109 through B (not held)" lk "$MB/two/lk" w 100 10 nb
expect_rc 3 "read lock on byte 99 through B while A write-locks it" lk "$MB/two/lk" r 99 1 nb
pass "a write lock held through A refuses overlapping locks through B (NLM4_DENIED) and leaves other bytes alone"

# a blocking locker through B waits for A's holder
bg WB "$MB/two/lk" w 0 100 wait --ready "$SIG/wb" --release "$SIG/wb.go"
wait_log "$LOG_B" "proc 2 svid .* \\[0 +100\\] write block -> 3" 60 "B's blocking LOCK answered NLM4_BLOCKED"
sleep 2
[[ -e $SIG/wb ]] && fail "the locker through B got 0..99 while A held it"
touch "$SIG/ha.go"
wait "$PID_HA" || fail "holder through A failed"
t_rel=$SECONDS
wait_file "$SIG/wb" 60 "B's blocking lock granted after A's holder unlocked"
wait_log "$LOG_B" "nlm: GRANTED svid" 10 "B's GRANTED callback"
pass "a blocking lock through B waited (NLM4_BLOCKED) and was granted by B's GRANTED callback $((SECONDS - t_rel)) s after A's holder unlocked"

# and the other way round: B holds, A waits
expect_rc 3 "write lock through A while B holds 0..99" lk "$MA/two/lk" w 10 1 nb
bg WA "$MA/two/lk" w 0 10 wait --ready "$SIG/wa" --release "$SIG/wa.go"
wait_log "$LOG_A" "proc 2 svid .* \\[0 +10\\] write block -> 3" 60 "A's blocking LOCK answered NLM4_BLOCKED"
[[ -e $SIG/wa ]] && fail "the locker through A got 0..9 while B held 0..99"
touch "$SIG/wb.go"
wait "$PID_WB" || fail "holder through B failed"
wait_file "$SIG/wa" 60 "A's blocking lock granted after B's holder unlocked"
touch "$SIG/wa.go"
wait "$PID_WA" || fail "holder through A failed"
expect_rc 0 "write lock through B after everyone let go" lk "$MB/two/lk" w 0 0 nb
pass "the same the other way round: a lock through B blocks a locker through A until it is released"
log "locks part: $((SECONDS - t0)) s"

# ---------------------------------------------------------------- grace
t0=$SECONDS
printf '%4096s' x >"$MA/two/gr"
bg HG "$MA/two/gr" w 0 100 nb --ready "$SIG/hg" --release "$SIG/hg.go"
wait_file "$SIG/hg" 60 "write lock 0+100 through A before A's restart"
# the client's reboot notifications wait (A's SM_NOTIFY, hence its reclaim)
kill -STOP "$statd_pid" || fail "SIGSTOP rpc.statd"
at_exit "kill -CONT $statd_pid 2>/dev/null"
kill -KILL "$PID_A"
wait "$PID_A" 2>/dev/null || true
# B's locker asks as soon as A has reset its old session (the lock is gone
# at the MDS: without a cluster grace B would grant it now), not after
# rnfsd_start's wait for "serving", which takes long in a loaded guest
(
	for ((i = 0; i < 3000; i++)); do
		grep -q "cephfs: reset the previous session of " "$SCRATCH/gw-a2.log" 2>/dev/null && break
		sleep 0.1
	done
	exec timeout -k 10 300 $LOCKER "$MB/two/gr" w 0 100 nb
) &
PID_GB=$!
BG_PIDS+=($!)
RNFSD_ADDR=$ADDR_A rnfsd_start_exports "$NFSD" "$EXPORTS" "$SCRATCH/gw-a2.log" "${A_ARGS[@]}" \
	--grace "$GRACE_A"
PID_A=$RNFSD_PID LOG_A=$RNFSD_LOG
t_a=$SECONDS
grep -q "cephfs: grace period announced in $GRACE_DIR/" "$LOG_A" || fail "A did not announce its grace period"
grep -q "cephfs: reset the previous session of " "$LOG_A" || fail "A did not reset its killed predecessor's session"
# the announcement came before the reset (the lock's drop)
# (a record whose write waited is written twice: the first line counts)
[[ $(grep -n "grace period announced" "$LOG_A" | head -n 1 | cut -d: -f1) -lt \
   $(grep -n "reset the previous session" "$LOG_A" | head -n 1 | cut -d: -f1) ]] ||
	fail "A reset its old session before it announced its grace period"
# B, the same bytes, in A's grace: refused, not granted
wait_log "$LOG_B" "proc 2 svid .* \\[0 +100\\] write -> 4" 30 \
	"B refuses a new lock with NLM4_DENIED_GRACE_PERIOD during A's grace"
grep -q "proc 2 svid .* \\[0 +100\\] write -> 0" "$LOG_B" &&
	fail "B granted the lock A's client is to reclaim"
pass "A restarted (SIGKILL): its grace announced, then its old session reset; B refused a new lock on A's client's bytes with NLM4_DENIED_GRACE_PERIOD $((SECONDS - t_a)) s after A's start"
kill -CONT "$statd_pid" || fail "SIGCONT rpc.statd"
wait_log "$LOG_A" "nsm: notified $CLIENT_ADDR" 60 "A's SM_NOTIFY to the client"
wait_log "$LOG_A" "proc 2 svid .* \\[0 +100\\] write.*reclaim -> 0" $((GRACE_A - 1)) \
	"A's client's reclaim granted"
rc=0
wait "$PID_GB" || rc=$?
((rc == 3)) || fail "the locker through B: status $rc, expected 3 (refused: A's client holds the bytes again)"
grep -q "proc 2 svid .* \\[0 +100\\] write -> 1" "$LOG_B" ||
	fail "B did not answer NLM4_DENIED once A's grace was over"
grep -q "proc 2 svid .* \\[0 +100\\] write -> 0" "$LOG_B" && fail "B granted the lock"
expect_rc 3 "write lock on byte 50 through B after A's grace" lk "$MB/two/gr" w 50 1 nb
pass "A's client reclaimed its lock through A; after A's grace ($((SECONDS - t_a)) s after its start) B answers NLM4_DENIED: the lock is still held"
touch "$SIG/hg.go"
wait "$PID_HG" || fail "the reclaimed holder through A"
expect_rc 0 "write lock through B once A's client let go" lk "$MB/two/gr" w 0 100 nb
log "grace part: $((SECONDS - t0)) s"

kumount "$MA"
kumount "$MB"

# ---------------------------------------------------------------- NFSv4.1
t0=$SECONDS
M4A=/mnt/a4 M4B=/mnt/b4
# the file is made through Ceph directly (a kernel CephFS mount): a file a
# gateway wrote stays open for writing there (its Fh is read-write), and a
# gateway grants no delegation of a file it has open for writing
ceph_kmount /mnt/cephfs
printf 'old data\n' >/mnt/cephfs/two/d
sync
kumount /mnt/cephfs
mount4() { # ADDR MNT
	mkdir -p "$2"
	timeout -k 10 120 mount -t nfs -o "vers=4.1,proto=rdma,port=$NFS_RDMA_PORT" "$1:/" "$2" ||
		fail "mount -t nfs -o vers=4.1,proto=rdma $1:/ $2"
	at_exit "kumount '$2'"
	[[ "$(mountstats_xprt "$2")" == "xprt:"*"rdma"* ]] || fail "$2 is not over RDMA"
}
mount4 "$ADDR_A" "$M4A"
mount4 "$ADDR_B" "$M4B"
exec 3<"$M4A/two/d" || fail "open $M4A/two/d for reading"
[[ "$(timeout -k 10 30 cat "$M4A/two/d")" == "old data" ]] || fail "A does not read the old data"
wait_log "$LOG_A" "^nfs4: read delegation granted" 10 "a read delegation from A"
t_w=$SECONDS
bounded 120 "B writes the file" sh -c "printf 'new data\n' >'$M4B/two/d'"
t_w=$((SECONDS - t_w))
wait_log "$LOG_A" '^nfs4: CB_RECALL of a read delegation to client .*: sent$' 10 "A's CB_RECALL"
wait_log "$LOG_A" '^nfs4: DELEGRETURN from client .*: NFS4_OK$' 30 "the client's DELEGRETURN to A"
[[ "$(timeout -k 10 30 cat "$M4A/two/d")" == "new data" ]] ||
	fail "A reads '$(cat "$M4A/two/d")' after B wrote, not the new data"
exec 3<&-
pass "NFSv4.1: A's read delegation recalled (CB_RECALL, DELEGRETURN) when B wrote the file (B's write took $t_w s); A reads B's data"
log "NFSv4.1 part: $((SECONDS - t0)) s"
kumount "$M4A"
kumount "$M4B"

# ---------------------------------------------------------------- the end
RNFSD_PID=$PID_A RNFSD_LOG=$LOG_A rnfsd_term 60
RNFSD_PID=$PID_B RNFSD_LOG=$LOG_B rnfsd_term 60
log "after the cluster was up: $((SECONDS - t_up)) s (cluster start $CEPH_UP_SECS s)"
