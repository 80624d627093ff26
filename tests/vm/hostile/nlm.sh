# SPDX-License-Identifier: MIT
# hostile-peers, part nlm (sourced by tests/vm/hostile-peers.sh; issue 33,
# findings 2 and 3).  The kernel client on CLIENT_ADDR holds a lock on a
# file of export A (tests/vm/locker.py on the mount); the intruder on
# INTRUDER_ADDR, listed on A only:
#   1. FREE_ALL naming the client's caller_name, and its address, leaves
#      the client's lock held (a server-local locker is still refused);
#   2. SM_NOTIFY naming the client, and its address, leaves it held too;
#   3. NLM TEST and LOCK on a file handle of export B (which lists the
#      client only) are refused with NLM4_FAILED (9), while the client
#      TESTs that handle granted and the intruder locks a file of A;
#   4. SM_NOTIFY with the client's name from the client's own address
#      releases the lock and the client's record, as a reboot should.
# Uses the driver's variables (SERVER_ADDR, CLIENT_ADDR, INTRUDER_ADDR,
# EXPORT_A, EXPORT_B, MNT, STATE, SIG, LOCKER, NLM_PORT, NSM_PORT).

nlm_wait_file() { # PATH SECS WHAT
	local i
	for ((i = 0; i < $2 * 10; i++)); do
		[[ -e $1 ]] && return 0
		sleep 0.1
	done
	fail "$3: $1 did not appear in $2 s"
}
nlm_expect_rc() { # WANT WHAT CMD...
	local want=$1 what=$2 rc=0
	shift 2
	"$@" || rc=$?
	((rc == want)) || fail "$what: status $rc, expected $want"
}
# a server-local write lock on bytes 0..9 of export A's file: 0 taken, 3 refused
nlm_local_lock() { timeout -k 10 60 $LOCKER "$EXPORT_A/nlm-f" w 0 10 nb; }
nlm_call() { # PROC CALLER [FHFILE KIND START LEN] from INTRUDER_ADDR: prints the status
	bounded 60 "nlm_call.py $*" python3 "$VM_TEST_DIR/nlm_call.py" "$SERVER_ADDR" \
		"$NLM_PORT" "$INTRUDER_ADDR" "$@"
}
nlm_call_from() { # SOURCE PROC CALLER [...]
	local src=$1
	shift
	bounded 60 "nlm_call.py from $src $*" python3 "$VM_TEST_DIR/nlm_call.py" \
		"$SERVER_ADDR" "$NLM_PORT" "$src" "$@"
}
nlm_notify() { # SOURCE NAME STATE
	bounded 60 "SM_NOTIFY $2 from $1" python3 "$VM_TEST_DIR/sm_notify.py" \
		"$SERVER_ADDR" "$NSM_PORT" "$2" "$3" "$1"
}

FH=$(rpcrdma_bin vm-nfs3-fh)
printf '%4096s' x >"$MNT/nlm-f"
printf '%4096s' x >"$EXPORT_B/nlm-b"
printf '%4096s' x >"$EXPORT_A/nlm-a"
timeout -k 10 300 $LOCKER "$MNT/nlm-f" w 0 10 nb --ready "$SIG/nlm-h" --release "$SIG/nlm-h.go" &
nlm_holder=$!
at_exit "touch '$SIG/nlm-h.go'; kill $nlm_holder 2>/dev/null"
nlm_wait_file "$SIG/nlm-h" 60 "the client's lock on $MNT/nlm-f"
nlm_expect_rc 3 "server-local lock on the bytes the client holds" nlm_local_lock
nlm_rec=$STATE/sm/$CLIENT_ADDR
[[ -f $nlm_rec ]] || fail "no record $nlm_rec for the client: $(ls "$STATE/sm")"
nlm_name=$(sed -n 3p "$nlm_rec")
[[ -n $nlm_name ]] || fail "no caller_name in $nlm_rec"
log "the client locks as '$nlm_name' from $CLIENT_ADDR"

# ---- 1. FREE_ALL from the intruder ----
[[ $(nlm_call free_all "$nlm_name") == void ]] || fail "FREE_ALL $nlm_name was not answered"
[[ $(nlm_call free_all "$CLIENT_ADDR") == void ]] || fail "FREE_ALL $CLIENT_ADDR was not answered"
nlm_expect_rc 3 "server-local lock after the intruder's FREE_ALL naming the client" nlm_local_lock
[[ -f $nlm_rec ]] || fail "the intruder's FREE_ALL removed the client's record"
pass "FREE_ALL from $INTRUDER_ADDR naming '$nlm_name' or $CLIENT_ADDR: the client's lock held"

# ---- 2. SM_NOTIFY from the intruder ----
nlm_notify "$INTRUDER_ADDR" "$nlm_name" 101 >/dev/null
nlm_notify "$INTRUDER_ADDR" "$CLIENT_ADDR" 103 >/dev/null
grep -q "nsm: SM_NOTIFY from $nlm_name state 101 at $INTRUDER_ADDR: 0 hosts released" "$RNFSD_LOG" ||
	fail "no log line for the intruder's SM_NOTIFY (or it released a host)"
nlm_expect_rc 3 "server-local lock after the intruder's SM_NOTIFY naming the client" nlm_local_lock
[[ -f $nlm_rec ]] || fail "the intruder's SM_NOTIFY removed the client's record"
pass "SM_NOTIFY from $INTRUDER_ADDR naming '$nlm_name' or $CLIENT_ADDR: the client's lock held"

# ---- 3. NLM on a handle of export B ----
bounded 60 "vm-nfs3-fh save B" "$FH" save "$SERVER_ADDR" "$CLIENT_ADDR" "$MOUNT_PORT" \
	"$EXPORT_B" "$SCRATCH/nlm-fh-b" nlm-b
bounded 60 "vm-nfs3-fh save A" "$FH" save "$SERVER_ADDR" "$CLIENT_ADDR" "$MOUNT_PORT" \
	"$EXPORT_A" "$SCRATCH/nlm-fh-a" nlm-a
st=$(nlm_call_from "$CLIENT_ADDR" test nlm-probe "$SCRATCH/nlm-fh-b" w 0 10)
[[ $st == 0 ]] || fail "the client's TEST on B's handle: status $st, want 0 (the handle is good)"
for kind in w r; do
	st=$(nlm_call test intruder "$SCRATCH/nlm-fh-b" "$kind" 0 10)
	[[ $st == 9 ]] || fail "the intruder's TEST ($kind) on B's handle: status $st, want NLM4_FAILED (9)"
	st=$(nlm_call lock intruder "$SCRATCH/nlm-fh-b" "$kind" 0 10)
	[[ $st == 9 ]] || fail "the intruder's LOCK ($kind) on B's handle: status $st, want NLM4_FAILED (9)"
done
timeout -k 10 60 $LOCKER "$EXPORT_B/nlm-b" w 0 0 nb ||
	fail "a server-local lock on B's file after the intruder's calls"
# where it is listed (A) it locks, and lets go
st=$(nlm_call lock intruder "$SCRATCH/nlm-fh-a" w 0 10)
[[ $st == 0 ]] || fail "the intruder's LOCK on A's file: status $st, want 0"
nlm_expect_rc 3 "server-local lock on A's file the intruder holds" \
	timeout -k 10 60 $LOCKER "$EXPORT_A/nlm-a" w 0 10 nb
st=$(nlm_call unlock intruder "$SCRATCH/nlm-fh-a" w 0 10)
[[ $st == 0 ]] || fail "the intruder's UNLOCK on A's file: status $st, want 0"
pass "NLM TEST/LOCK from $INTRUDER_ADDR on export B's handle: NLM4_FAILED; on A's: granted"

# ---- 4. the client's own SM_NOTIFY ----
nlm_notify "$CLIENT_ADDR" "$nlm_name" 105 >/dev/null
grep -q "nsm: SM_NOTIFY from $nlm_name state 105 at $CLIENT_ADDR: 1 host released" "$RNFSD_LOG" ||
	fail "the client's own SM_NOTIFY did not release it: $(grep 'SM_NOTIFY' "$RNFSD_LOG" | tail -n 3)"
nlm_expect_rc 0 "server-local lock after the client's own SM_NOTIFY" nlm_local_lock
[[ -f $nlm_rec ]] && fail "the client's record $nlm_rec is still there after its SM_NOTIFY"
touch "$SIG/nlm-h.go"
wait "$nlm_holder" || fail "the client's locker (after its locks were released)"
pass "SM_NOTIFY from the client's own address: its lock and record released"
