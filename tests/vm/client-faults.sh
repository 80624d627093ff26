#!/usr/bin/env bash
# client-faults: rpcrdma-nfsd is killed (SIGKILL) in the middle of a 64 MiB
# put and of a 64 MiB get.  Without retries the tool reports the error and
# exits 1 within its timeout; with --retries the transport reconnects to the
# restarted server (same handle key, so its file handles stay valid) and
# sends the asynchronous READs/WRITEs of the window in flight again with
# their xids (counters checked), and the tool finishes with a
# byte-identical file.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
vm_require_guest

NFSD=$(rpcrdma_bin rpcrdma-nfsd)
NFS=$(rpcrdma_bin rpcrdma-nfs)
EXPORT=$SCRATCH/export
SLOG=$SCRATCH/rpcrdma-nfsd.log
SPEC="$SERVER_ADDR:$EXPORT"
COPTS=(--source "$CLIENT_ADDR" --mount-port "$MOUNT_PORT" --quiet)
head -c 67108864 /dev/urandom >"$SCRATCH/big" || fail "make the 64 MiB file"

start_server() {
	rnfsd_start "$NFSD" "$EXPORT" "$SLOG.$1" --no-root-squash --handle-key "$SCRATCH/key"
}

# kill_soon SECS: SIGKILL the server SECS seconds from now, in the background.
kill_soon() {
	local pid=$RNFSD_PID
	(sleep "$1"; kill -KILL "$pid" 2>/dev/null) &
	killer=$!
}

# ---- no retries: the error is reported, exit 1, within the timeout
start_server 1
kill_soon 2
t0=$SECONDS
rc=0
out=$(timeout -k 10 120 "$NFS" "${COPTS[@]}" --timeout 10 "$SPEC" put "$SCRATCH/big" /big 2>&1) || rc=$?
wait "$killer"
((rc == 1)) || fail "put with the server killed: status $rc, expected 1 ($out)"
[[ -n "$out" ]] || fail "put with the server killed: no message"
((SECONDS - t0 <= 60)) || fail "put took $((SECONDS - t0)) s to give up (timeout 10 s)"
log "tool said: $(head -n 2 <<<"$out")"
pass "server killed mid-put, no retries: exit 1 with a message after $((SECONDS - t0)) s"

# ---- retries: put survives a kill and a restart
start_server 2
kill_soon 3
rc=0
# --timeout 20: the calls in flight wait (RL_RESEND) through the server's
# restart and the reconnect back-off; with 5 s they could time out first
# and the tool would redo its window with new xids instead.
timeout -k 10 300 "$NFS" "${COPTS[@]}" --timeout 20 --retries 30 --stats "$SPEC" \
	put "$SCRATCH/big" /big >"$SCRATCH/put.log" 2>&1 &
tool=$!
wait "$killer"
sleep 2
start_server 3
wait "$tool" || rc=$?
((rc == 0)) || { cat "$SCRATCH/put.log"; fail "put with retries across a server restart: status $rc"; }
compare_files "$SCRATCH/big" "$EXPORT/big"
resent() {
	grep -Eq '"reconnects":[1-9][0-9]*,"retransmits":[1-9]' "$1" ||
		{ cat "$1"; fail "no call was sent again after the reconnect"; }
}
resent "$SCRATCH/put.log"
pass "server killed mid-put and restarted: put with --retries resent its calls, file identical"

# ---- retries: get survives a kill and a restart
kill_soon 3
rc=0
timeout -k 10 300 "$NFS" "${COPTS[@]}" --timeout 20 --retries 30 --stats "$SPEC" \
	get /big "$SCRATCH/back" >"$SCRATCH/get.log" 2>&1 &
tool=$!
wait "$killer"
sleep 2
start_server 4
wait "$tool" || rc=$?
((rc == 0)) || { cat "$SCRATCH/get.log"; fail "get with retries across a server restart: status $rc"; }
compare_files "$SCRATCH/big" "$SCRATCH/back"
resent "$SCRATCH/get.log"
pass "server killed mid-get and restarted: get with --retries resent its calls, file identical"
rnfsd_term
