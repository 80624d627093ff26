#!/usr/bin/env bash
# client-faults: rpcrdma-nfsd is killed (SIGKILL) in the middle of a 64 MiB
# put and of a 64 MiB get.  Without retries the tool reports the error and
# exits 1 within its timeout; with --retries the transport reconnects to the
# restarted server (same handle key, so its file handles stay valid) and
# sends the asynchronous READs/WRITEs of the window in flight again with
# their xids (reconnect and resends required: see resent()), and the tool
# finishes with a byte-identical file.  The server is stopped, then killed,
# when the destination holds a given size (kill_at).
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

# kill_at FILE BYTES: SIGKILL the server, in the background, once FILE (the
# transfer's destination) holds BYTES.  The watcher is started and ready
# before the transfer (python starts in seconds under TCG, and a 64 MiB put
# finished before a watcher started with it could look: session 5 found the
# "put without resends" of session 4 to be that, every call answered and
# only the COMMIT meeting the restarted server).  At BYTES the server is
# first stopped (SIGSTOP), so that the calls the tool has in flight or
# sends next stay unanswered, then killed once FILE has not grown for 0.5 s
# (a get writes out the pieces already in while its next READs wait):
# calls are in flight at the kill whatever the speed, and must be resent.  After 120 s without
# BYTES it is killed anyway (the checks then say what happened).
kill_at() {
	local pid=$RNFSD_PID file=$1 bytes=$2 ready=$SCRATCH/killer.ready
	rm -f "$ready"
	# polled in one process every 5 ms (a stat(1) per poll is slower under
	# TCG than a fast transfer)
	python3 - "$pid" "$file" "$bytes" "$ready" <<'PY' &
import os, signal, sys, time
pid, path, want, ready = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), sys.argv[4]
open(ready, "w").close()
end = time.monotonic() + 120
size = 0
while time.monotonic() < end:
    try:
        size = os.stat(path).st_size
        if size >= want:
            break
    except FileNotFoundError:
        pass
    time.sleep(0.005)
def size_now():
    try:
        return os.stat(path).st_size
    except FileNotFoundError:
        return 0
try:
    os.kill(pid, signal.SIGSTOP)
    # A get may still be writing out the pieces already in: once the file
    # stops growing for 0.5 s the tool's READs in flight are the ones the
    # stopped server cannot answer.
    last, still = size_now(), time.monotonic()
    while time.monotonic() - still < 0.5 and time.monotonic() < end + 30:
        time.sleep(0.05)
        if size_now() != last:
            last, still = size_now(), time.monotonic()
    os.kill(pid, signal.SIGKILL)
except ProcessLookupError:
    pass
print("killer: server stopped and killed at %d bytes" % size, flush=True)
PY
	killer=$!
	while [[ ! -e "$ready" ]]; do
		kill -0 "$killer" 2>/dev/null || fail "the killer did not start"
		sleep 0.05
	done
}

# ---- no retries: the error is reported, exit 1, within the timeout
start_server 1
rm -f "$EXPORT/big"
kill_at "$EXPORT/big" $((8 << 20))
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
rm -f "$EXPORT/big"
kill_at "$EXPORT/big" $((36 << 20))
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
# resent LOG: the transport reconnected and sent the calls in flight again
# with their xids ("retransmits" > 0): the server was stopped, then killed,
# with calls unanswered (kill_at), so the tool must not have had to redo
# them itself.
resent() {
	grep -Eq '"reconnects":[1-9]' "$1" ||
		{ cat "$1"; fail "the transport did not reconnect"; }
	grep -Eq '"retransmits":[1-9]' "$1" ||
		{ cat "$1"; fail "reconnected, but the calls in flight were not sent again"; }
	log "calls in flight resent: $(grep -Eo '"retransmits":[0-9]+' "$1"), $(grep -Eo '"calls":[0-9]+' "$1")"
}
resent "$SCRATCH/put.log"
pass "server killed mid-put and restarted: put with --retries resent its WRITEs in flight, file identical"

# ---- retries: get survives a kill and a restart
rm -f "$SCRATCH/back"
kill_at "$SCRATCH/back" $((32 << 20))
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
pass "server killed mid-get and restarted: get with --retries resent its READs in flight, file identical"
rnfsd_term
