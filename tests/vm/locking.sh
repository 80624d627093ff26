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
#
# Registered a second time as vm/locking-2host, run by `scripts/vm run2`
# (docs/testbed.md, "Two hosts"): the server guest runs rpcbind and
# rpcrdma-nfsd --rpcbind (its NLM and NSM registered there) and then
# serves this script's server-side steps (`srv`, tests/vm/lib.sh); the
# client guest, its own rpcbind, rpc.statd and lockd, drives the test.  No
# NAT rule: NLM calls, GRANTED callbacks and SM_NOTIFY cross the link.
# There it also checks what each host's rpcbind says, and
#   6. the capture of the link (every frame, UDP 4791 for RoCE): tshark
#      decodes an NFSv3 WRITE and READ of 12288 bytes the test made with
#      O_DIRECT as RPC-over-RDMA calls with a Read chunk and a Write chunk
#      of 12288 bytes, and the NLM LOCK of bytes 0..99 (TCP).
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
LOGDIR=$SCRATCH             # the servers' logs
if two_host; then           # both guests see these
	SIG=$VM_SHARED/sig
	LOGDIR=$VM_SHARED
fi
LOCKD_PORT=4045             # the client lockd's port (rpcbind's answer)
NLM_PORT=4046               # rpcrdma-nfsd's NLM
NSM_PORT=4047
GRACE=20
mkdir -p "$SIG" "$EXPORT"

# ---- rpcbind, rpc.statd, lockd on a fixed port, the NAT rule ----
# (two hosts: rpcbind in the server guest; rpcbind, rpc.statd, lockd in
# the client guest; no rule)
nlm_testbed "$LOCKD_PORT" "$NLM_PORT"

SERVER_ARGS=(--handle-key "$KEY" --state-dir "$STATE" --nlm-port "$NLM_PORT"
	     --nsm-port "$NSM_PORT" --grace "$GRACE" --no-root-squash -v)
two_host && SERVER_ARGS+=(--rpcbind)

# The server host's side.  srv (tests/vm/lib.sh) runs a step there: in
# this guest (one guest), or in the server guest (two hosts), where the
# server's pid is kept in a file.
RPID_FILE=$LOGDIR/rnfsd.pid
if [[ $VM_ROLE == server ]]; then
	at_exit 'kill -KILL "$(cat "$RPID_FILE" 2>/dev/null)" 2>/dev/null'
	vm_agent 480
	pass "server host: served the client guest"
	exit 0
fi
server_start() { # LOG: start rpcrdma-nfsd; sets RNFSD_PID, RNFSD_LOG
	if two_host; then
		# (a start refused "Address already in use" is tried again, 5 times
		# at most, and said in the log: see server_kill)
		# The server writes its log on the server guest's tmpfs; one tail
		# copies it to the shared directory (with the server's threads
		# writing there over 9p directly, lines came out as NUL bytes).
		local own=$SCRATCH/${1##*/}
		srv "for t in 1 2 3 4 5 6; do
			if (rnfsd_start '$NFSD' '$EXPORT' '$own' ${SERVER_ARGS[*]@Q} &&
			    echo \$RNFSD_PID >'$RPID_FILE'); then
				(tail -n +1 -F '$own' >'$1' 2>/dev/null &)
				for i in \$(seq 100); do
					((\$(stat -c %s '$1') >= \$(stat -c %s '$own'))) && exit 0
					sleep 0.1
				done
				exit 1
			fi
			cp '$own' '$1'
			grep -q 'Address already in use' '$own' || exit 1
			log \"RETRY: rpcrdma-nfsd start \$t: RDMA port in use; cm_ids: \$(rdma res show cm_id | tr '\n' ';')\"
			sleep 5
		     done; exit 1" || fail "rpcrdma-nfsd did not start in the server guest"
		RNFSD_PID=$(cat "$RPID_FILE")
		RNFSD_LOG=$1
		on_failure "echo '---- rpcrdma-nfsd log (server guest, last 150 lines) ----'; tail -n 150 '$1'"
	else
		rnfsd_start "$NFSD" "$EXPORT" "$1" "${SERVER_ARGS[@]}"
	fi
}
# server_gone: true when the server process is gone, or a zombie with no
# thread left (its files, the RDMA listener among them, are closed only
# when the last thread exits; the leader shows Z before that)
server_gone='[[ ! -e /proc/$RNFSD_PID ]] || { grep -q "^State:.*Z" /proc/$RNFSD_PID/status &&
	[[ $(ls /proc/$RNFSD_PID/task 2>/dev/null | wc -l) -le 1 ]]; }'
# Two hosts: its RDMA listener's port stays taken while the kernel tears
# down its connection to the other host (seen: "Address already in use" at
# once after the process was gone), so wait until no cm_id holds it.
server_kill() { # SIGKILL, wait until it is gone
	if two_host; then
		srv "kill -KILL $RNFSD_PID; RNFSD_PID=$RNFSD_PID
		     for i in \$(seq 100); do $server_gone && break; sleep 0.1; done
		     $server_gone || { echo 'still running 10 s after SIGKILL'; exit 1; }
		     for i in \$(seq 600); do
			rdma res show cm_id | grep -q 'src-addr $SERVER_ADDR:$NFS_RDMA_PORT ' || break
			sleep 0.1
		     done
		     log \"rdma cm_ids after the kill: \$(rdma res show cm_id | grep -c .)\"
		     ! rdma res show cm_id | grep 'src-addr $SERVER_ADDR:$NFS_RDMA_PORT '" ||
			fail "rpcrdma-nfsd or its RDMA port still there 70 s after SIGKILL"
	else
		kill -KILL "$RNFSD_PID"
		wait "$RNFSD_PID" 2>/dev/null || true
	fi
}
log_sync() { # LOG: two hosts: wait until the shared copy of LOG holds all the server wrote
	two_host || return 0
	local own=$SCRATCH/${1##*/}
	srv "for i in \$(seq 100); do
		((\$(stat -c %s '$1') >= \$(stat -c %s '$own'))) && exit 0
		sleep 0.1
	     done; exit 1" || fail "the shared copy of $1 did not catch up in 10 s"
}
server_term() { # SIGTERM, exit 0 (two hosts: gone within 30 s; its log says how)
	if two_host; then
		srv "kill -TERM $RNFSD_PID; RNFSD_PID=$RNFSD_PID
		     for i in \$(seq 300); do $server_gone && exit 0; sleep 0.1; done; exit 1" ||
			fail "rpcrdma-nfsd still running 30 s after SIGTERM"
		pass "rpcrdma-nfsd exited after SIGTERM"
	else
		rnfsd_term
	fi
}
server_start "$LOGDIR/rnfsd-1.log"
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
if two_host; then
	# each host's own rpcbind and NSM: the server's has rpcrdma-nfsd's NLM
	# and NSM, the client's its rpc.statd and lockd; no NAT rule anywhere
	rpc_port() { # HOST PROG VERS
		rpcinfo -p "$1" | awk -v p="$2" -v v="$3" '$1 == p && $2 == v && $3 == "tcp" { print $4; exit }'
	}
	[[ $(rpc_port "$SERVER_ADDR" 100021 4) == "$NLM_PORT" ]] ||
		fail "the server host's rpcbind does not give rpcrdma-nfsd's NLM port $NLM_PORT: $(rpcinfo -p "$SERVER_ADDR")"
	[[ $(rpc_port "$SERVER_ADDR" 100024 1) == "$NSM_PORT" ]] ||
		fail "the server host's rpcbind does not give rpcrdma-nfsd's NSM port $NSM_PORT: $(rpcinfo -p "$SERVER_ADDR")"
	p=$(rpc_port 127.0.0.1 100024 1)
	[[ -n $p && $p != "$NSM_PORT" ]] || fail "the client host's rpcbind has no rpc.statd of its own: $(rpcinfo -p 127.0.0.1)"
	[[ -n $(rpc_port 127.0.0.1 100021 4) ]] || fail "the client host's rpcbind has no lockd"
	! nft list tables 2>/dev/null | grep -q . || fail "a netfilter table in the client guest: $(nft list tables)"
	pass "two hosts: NLM $NLM_PORT and NSM $NSM_PORT in the server's rpcbind; the client's rpc.statd ($p) and lockd in its own; no NAT"
fi

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
# slk ARGS...: a locker on the server host (a server-local process)
slk() { srv "timeout -k 10 120 $LOCKER ${*@Q}"; }
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

# ---- 6. (two hosts) the link capture, decoded by tshark ----
# wire_checks: an O_DIRECT WRITE and READ of WIRE_SIZE bytes (one NFSv3
# call each: below wsize and rsize, above the 4 KiB inline threshold, so
# the data moves by RDMA Read and RDMA Write), then tshark over the
# capture of the link (RPCRDMA_VM_LINK_PCAP): RoCEv2 frames (UDP 4791)
# decoded as RPC-over-RDMA; the WRITE call with count WIRE_SIZE and a Read
# chunk of WIRE_SIZE bytes; the READ call with count WIRE_SIZE and a Write
# chunk of WIRE_SIZE bytes, its reply echoing WIRE_SIZE bytes; the first
# NLM LOCK (bytes 0..99, write, from the client to the server's NLM port).
WIRE_SIZE=12288
wire_checks() {
	local src=$SCRATCH/wire.src back=$SCRATCH/wire.back cap=$SCRATCH/link.pcap
	local fields=$SCRATCH/wire-fields n rc
	command -v tshark >/dev/null || fail "tshark is not installed (scripts/install-deps --vm-only)"
	head -c "$WIRE_SIZE" /dev/urandom >"$src"
	bounded 60 "O_DIRECT write of $WIRE_SIZE bytes" \
		dd if="$src" of="$MNT/wire.bin" bs="$WIRE_SIZE" count=1 oflag=direct status=none
	bounded 60 "O_DIRECT read of $WIRE_SIZE bytes" \
		dd if="$MNT/wire.bin" of="$back" bs="$WIRE_SIZE" count=1 iflag=direct status=none
	compare_files "$src" "$back"
	# a copy: qemu appends to the live file (its last frame may be half there)
	cp "$VM_LINK_PCAP" "$cap"
	log "link capture: $VM_LINK_PCAP ($(stat -c %s "$cap") bytes so far)"
	HOME=/tmp timeout -k 5 240 tshark -n -r "$cap" -d "tcp.port==$NLM_PORT,rpc" \
		-T fields -E separator='|' -E aggregator=',' \
		-e frame.number -e ip.src -e udp.dstport -e frame.protocols -e rpc.msgtyp \
		-e nfs.procedure_v3 -e nfs.count3 -e rpcordma.reads_count -e rpcordma.writes_count \
		-e rpcordma.rdma_length -e nlm.procedure_v4 -e nlm.lock.l_offset64 \
		-e nlm.lock.l_len64 -e nlm.exclusive -e tcp.dstport -e _ws.malformed \
		-e rpcordma.xid -e rpc.xid \
		>"$fields" 2>"$SCRATCH/tshark.err" || true
	[[ -s $fields ]] || fail "tshark decoded nothing from $cap: $(head -c 500 "$SCRATCH/tshark.err")"
	on_failure "echo '---- tshark fields of the RPC frames ($fields) ----'; awk -F'|' '\$5 != \"\"' '$fields' | tail -n 60"
	n=$(awk -F'|' '$3 == 4791' "$fields" | wc -l)
	((n > 0)) || fail "no RoCEv2 frame (UDP 4791) in the link capture"
	n=$(awk -F'|' '$3 == 4791 && $4 ~ /:infiniband:rpcordma/' "$fields" | wc -l)
	((n > 0)) || fail "no RoCEv2 frame decoded as RPC-over-RDMA"
	log "link capture: $(wc -l <"$fields") frames, $(awk -F'|' '$3 == 4791' "$fields" | wc -l) RoCEv2," \
	    "$n RPC-over-RDMA, $(awk -F'|' '$16 != ""' "$fields" | wc -l) malformed"
	# By XID: the RPC-over-RDMA header of a call with a Read chunk carries no
	# RPC (tshark decodes the WRITE from the reassembled RDMA Read
	# responses, a frame of its own); the READ call and reply are inline.
	awk -F'|' -v c="$CLIENT_ADDR" -v s="$SERVER_ADDR" -v w="$WIRE_SIZE" '
		function sum(l,   a, k, i, t) { k = split(l, a, ","); for (i = 1; i <= k; i++) t += a[i]; return t }
		# a READ reply whose data came by RDMA Write is decoded twice
		# (tshark 4.0: "1,1|6,6|12288,12288", the second copy marked
		# malformed): the first value is the reply header
		function first(l,   a) { split(l, a, ","); return a[1] }
		$3 != 4791 { next }
		{ $5 = first($5); $6 = first($6); $7 = first($7); $18 = first($18) }
		$2 == c && $8 >= 1 && sum($10) == w { rchunk[$17] = 1 }
		$2 == c && $5 == "0" && $6 == "7" && $7 == w { wcall[$18] = 1 }
		$2 == c && $5 == "0" && $6 == "6" && $7 == w && $9 >= 1 && sum($10) == w { rcall[$18] = 1 }
		$2 == s && $5 == "1" && $6 == "6" && $7 == w && $9 >= 1 && sum($10) == w { rrep[$18] = 1 }
		END {
			for (x in wcall) if (x in rchunk) W = 1
			for (x in rcall) if (x in rrep) R = 1
			exit !W + 2 * !R
		}' "$fields" || {
		rc=$?
		((rc & 1)) && fail "no NFSv3 WRITE call of $WIRE_SIZE bytes decoded whose RPC-over-RDMA header has a $WIRE_SIZE-byte Read chunk"
		fail "no NFSv3 READ call of $WIRE_SIZE bytes with a $WIRE_SIZE-byte Write chunk and its reply (count $WIRE_SIZE, the chunk echoed) decoded"
	}
	pass "tshark: NFSv3 WRITE call, count $WIRE_SIZE, its Read chunk $WIRE_SIZE bytes (RPC-over-RDMA on RoCEv2)"
	pass "tshark: NFSv3 READ call, count $WIRE_SIZE, Write chunk of $WIRE_SIZE bytes; its reply"
	awk -F'|' -v c="$CLIENT_ADDR" -v p="$NLM_PORT" '
		$2 == c && $15 == p && $5 == "0" && $11 == "2" && $12 == "0" && $13 == "100" { f = 1 }
		END { exit !f }' "$fields" ||
		fail "no NLM LOCK of bytes 0..99 from the client to the server's NLM port $NLM_PORT decoded"
	pass "tshark: NLM v4 LOCK of bytes 0+100 from $CLIENT_ADDR to $SERVER_ADDR:$NLM_PORT (TCP)"
}

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
# the holder in the background on the server host; its status in a file
srv "(timeout -k 10 300 $LOCKER '$LF' w 0 10 nb --ready '$SIG/l1' --release '$SIG/l1.go'
      echo \$? >'$SIG/l1.rc') >/dev/null 2>&1 &"
wait_file "$SIG/l1" 30 "local lock on the server"
expect_rc 3 "client lock on a byte a server-local process holds" lk "$F" w 5 1 nb
bg C1 "$F" w 0 10 wait --ready "$SIG/c1" --release "$SIG/c1.go"
wait_log "$LOG1" "proc 2 svid .* \[0 +10\] write block -> 3" 60 "client blocked behind a local lock"
[[ -e $SIG/c1 ]] && fail "the client got bytes a local process holds"
release l1.go
wait_file "$SIG/l1.rc" 60 "local holder's exit"
[[ $(cat "$SIG/l1.rc") == 0 ]] || fail "local holder: status $(cat "$SIG/l1.rc")"
wait_file "$SIG/c1" 60 "client's blocking lock granted when the local process let go"
wait_log "$LOG1" "nlm: GRANTED svid" 10 "the GRANTED callback"
expect_rc 3 "server-local lock on bytes the client holds" slk "$LF" w 0 1 nb
expect_rc 0 "server-local lock on bytes the client does not hold" slk "$LF" w 10 1 nb
release c1.go
wait "$PID_C1" || fail "client C1"
expect_rc 0 "server-local lock after the client let go" slk "$LF" w 0 10 nb
log "locks shared with server-local processes: ok"

# ---- 4. restart: notify, reclaim within the grace period, new lockers refused ----
R=$MNT/r
printf '%4096s' x >"$R"
bg H "$R" w 0 10 nb --ready "$SIG/h" --release "$SIG/h.go"
wait_file "$SIG/h" 60 "lock to reclaim"
[[ -n $(srv "ls '$STATE/sm'") ]] || fail "no host recorded in $STATE/sm"
log "recorded hosts: $(srv "cat '$STATE'/sm/*" | tr '\n' ' ')"
server_kill
server_start "$LOGDIR/rnfsd-2.log"
LOG2=$RNFSD_LOG
wait_log "$LOG2" "nsm: notified $CLIENT_ADDR" 60 "SM_NOTIFY to the client after the restart"
wait_log "$LOG2" "proc 2 svid .* \[0 +10\] write.*reclaim -> 0" $((GRACE - 2)) \
	"the client's reclaim"
grep -q "grace period over" "$LOG2" && fail "grace period over before the test could see it (raise GRACE)"
# the reclaimed lock is real on the server
expect_rc 3 "server-local lock on the reclaimed bytes" slk "$EXPORT/r" w 0 1 nb
# a new locker (bytes nobody holds): refused while the grace period runs
# (the client waits and asks again), granted once it is over
bg N "$R" w 100 10 nb
wait_log "$LOG2" "proc 2 svid .* \\[100 +10\\] write -> 4" 60 \
	"new locker refused with NLM4_DENIED_GRACE_PERIOD"
rc=0
wait "$PID_N" || rc=$?
((rc == 0)) || fail "new locker: status $rc after the grace period, expected 0"
log_sync "$LOG2"
grep -q "grace period over" "$LOG2" || fail "the new locker got its lock before the grace period ended"
grep -q "proc 2 svid .* \\[100 +10\\] write -> 0" "$LOG2" || fail "no granted LOCK for the new locker"
# a new locker on the reclaimed bytes: the client's own table has them
# (its reclaimed lock); a local process on the server is refused too
expect_rc 3 "client lock on the reclaimed bytes" lk "$R" w 5 1 nb
bounded 60 "vm-nfs3-fh save r" "$FH" save "$SERVER_ADDR" "$CLIENT_ADDR" "$MOUNT_PORT" \
	"$EXPORT" "$SCRATCH/fh-r" r >/dev/null || fail "vm-nfs3-fh save r"
expect_other 1 "another host's TEST of the reclaimed bytes (the server's table, not the client's)" \
	test "$SCRATCH/fh-r" w 5 1
expect_rc 3 "server-local lock on the reclaimed bytes after the grace period" slk "$EXPORT/r" w 0 1 nb
release h.go
wait "$PID_H" || fail "reclaimed holder"
expect_rc 0 "lock after the reclaimed holder let go" lk "$R" w 0 10 nb
log "restart: notified, reclaimed in grace, new locker refused until it ended: ok"

# ---- 5. a client that reboots: its SM_NOTIFY releases its locks ----
S=$MNT/s
printf '%4096s' x >"$S"
bg H2 "$S" w 0 10 nb --ready "$SIG/h2" --release "$SIG/h2.go"
wait_file "$SIG/h2" 60 "lock before the client's reboot"
expect_rc 3 "server-local lock on bytes the client holds" slk "$EXPORT/s" w 0 1 nb
rec=$STATE/sm/$CLIENT_ADDR
srv "test -f '$rec'" || fail "no record $rec for the client"
name=$(srv "sed -n 3p '$rec'")
[[ -n $name ]] || fail "no caller_name in $rec"
# as the rebooted client's sm-notify would: from the client's address (a
# notification from any other address releases nothing: hostile-peers)
bounded 60 "SM_NOTIFY" python3 "$VM_TEST_DIR/sm_notify.py" "$SERVER_ADDR" "$NSM_PORT" \
	"$name" 7 "$CLIENT_ADDR"
wait_log "$LOG2" "nsm: SM_NOTIFY from $name state 7" 10 "SM_NOTIFY received"
expect_rc 0 "server-local lock after the client's reboot notification" slk "$EXPORT/s" w 0 10 nb
srv "test -f '$rec'" && fail "the rebooted client's record $rec is still there"
release h2.go
wait "$PID_H2" || fail "H2"
log "reboot notification released the client's locks: ok"

xprt=$(mountstats_xprt "$MNT")
[[ "$xprt" == "xprt:"*"$NFS_PROTO"* ]] || fail "after the restart $MNT is not over $NFS_PROTO: '$xprt'"
two_host && wire_checks
kumount "$MNT"
server_term
log_sync "$LOG2"
grep "locks:" "$LOG2" || true
grep -q "locks: .* 0 held" "$LOG2" || fail "locks still held at exit"
pass "locking"
