#!/usr/bin/env bash
# client-killed: clients SIGKILLed with I/O in flight (issue 7).
#   - rpcrdma-nfs get of a 64 MiB file, SIGKILLed three times once its local
#     copy has reached 1, 8 and 24 MiB (READs with Write chunks in flight);
#   - rpcrdma-nfs put of a 64 MiB file, SIGKILLed three times once the
#     server's copy has reached 1, 8 and 24 MiB (WRITEs with Read chunks in
#     flight; with 8 WRITEs in flight the size runs ahead of the data);
#   after each kill the server is alive and its pools are back at baseline
#   (no connection, call context, receive or MR left behind);
#   - with the kernel client mounted: a dd oflag=direct bs=1M write and a dd
#     iflag=direct bs=1M read of 64 MiB, each SIGKILLed mid-transfer; the
#     mount stays usable and the server's pools settle at one idle
#     connection;
# then later transfers (16 MiB) are byte-exact: a full O_DIRECT write and a
# cp through the mount (compared with the server's copies), an O_DIRECT read
# of the server's file through the mount after a cache drop, an rpcrdma-nfs
# put and get.  After
# unmount and SIGTERM the final counters are at baseline, no RDMA_ERROR sent.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
vm_require_guest

NFSD=$(rpcrdma_bin rpcrdma-nfsd)
NFS=$(rpcrdma_bin rpcrdma-nfs)
EXPORT=$SCRATCH/export
SLOG=$SCRATCH/rpcrdma-nfsd.log
MNT=/mnt/x
SPEC="$SERVER_ADDR:$EXPORT"
COPTS=(--source "$CLIENT_ADDR" --mount-port "$MOUNT_PORT" --quiet --timeout 30)
MOPTS=mountport=$MOUNT_PORT,mountproto=tcp
MIB=1048576
BIG=$SCRATCH/big
SMALL=$SCRATCH/small

mkdir -p "$EXPORT"
head -c $((64 * MIB)) /dev/urandom >"$BIG" || fail "make the 64 MiB file"
cp "$BIG" "$EXPORT/src.bin"
head -c $((16 * MIB)) "$BIG" >"$SMALL"
cp "$SMALL" "$EXPORT/small.bin"
rnfsd_start "$NFSD" "$EXPORT" "$SLOG" --no-root-squash --stats --handle-key "$SCRATCH/handle.key"

# kill_when_grows PID FILE BYTES: SIGKILL PID once FILE has at least BYTES
# bytes, plus a random 0-0.3 s; wait for PID (bounded: 120 s for it to reach
# BYTES).  Returns 0 when PID died of the SIGKILL, 1 when it ended before
# (the transfer was faster than the polling).
kill_when_grows() {
	local pid=$1 file=$2 bytes=$3 i rc=0
	for ((i = 0; i < 1200; i++)); do
		kill -0 "$pid" 2>/dev/null || break
		(($(stat -c %s "$file" 2>/dev/null || echo 0) >= bytes)) && break
		sleep 0.1
	done
	((i < 1200)) || fail "$file did not reach $bytes bytes within 120 s"
	sleep "$(random_delay 0 30)"
	kill -KILL "$pid" 2>/dev/null || true
	wait "$pid" || rc=$?
	((rc == 137)) && return 0
	((rc == 0)) || fail "the client (pid $pid) exited with status $rc before its SIGKILL"
	return 1
}

# ---- rpcrdma-nfs SIGKILLed mid-get and mid-put
for at in 1 8 24; do
	rm -f "$SCRATCH/got"
	"$NFS" "${COPTS[@]}" "$SPEC" get /src.bin "$SCRATCH/got" </dev/null &
	if kill_when_grows $! "$SCRATCH/got" $((at * MIB)); then
		log "get SIGKILLed with $(($(stat -c %s "$SCRATCH/got") / MIB)) MiB of 64 written locally"
	else
		log "get of 64 MiB finished before its SIGKILL (at $at MiB)"
	fi
	kill -0 "$RNFSD_PID" 2>/dev/null || fail "rpcrdma-nfsd died after a client was killed mid-get"
	rnfsd_wait_baseline 0 60
done
pass "rpcrdma-nfs SIGKILLed mid-get three times: server alive, pools at baseline"
for at in 1 8 24; do
	rm -f "$EXPORT/put.bin"
	"$NFS" "${COPTS[@]}" "$SPEC" put "$BIG" /put.bin </dev/null &
	if kill_when_grows $! "$EXPORT/put.bin" $((at * MIB)); then
		log "put SIGKILLed with $(($(stat -c %s "$EXPORT/put.bin") / MIB)) MiB of 64 on the server"
	else
		log "put of 64 MiB finished before its SIGKILL (at $at MiB)"
	fi
	kill -0 "$RNFSD_PID" 2>/dev/null || fail "rpcrdma-nfsd died after a client was killed mid-put"
	rnfsd_wait_baseline 0 60
done
pass "rpcrdma-nfs SIGKILLed mid-put three times: server alive, pools at baseline"

# ---- the kernel client: a process doing O_DIRECT I/O SIGKILLed mid-transfer
kmount "$SERVER_ADDR:$EXPORT" "$MNT" "$MOPTS"
[[ "$(mountstats_xprt "$MNT")" == "xprt:"*"rdma"* ]] || fail "mount $MNT is not over RDMA"
dd if="$BIG" of="$MNT/dio.bin" bs=1M oflag=direct status=none </dev/null &
kill_when_grows $! "$EXPORT/dio.bin" $((8 * MIB)) &&
	log "dd oflag=direct SIGKILLed with $(($(stat -c %s "$EXPORT/dio.bin") / MIB)) MiB of 64 on the server"
rm -f "$SCRATCH/dio-back"
dd if="$MNT/src.bin" of="$SCRATCH/dio-back" bs=1M iflag=direct status=none </dev/null &
kill_when_grows $! "$SCRATCH/dio-back" $((8 * MIB)) &&
	log "dd iflag=direct SIGKILLed with $(($(stat -c %s "$SCRATCH/dio-back") / MIB)) MiB of 64 read"
kill -0 "$RNFSD_PID" 2>/dev/null || fail "rpcrdma-nfsd died after an O_DIRECT process was killed"
mountpoint -q "$MNT" || fail "$MNT is no longer mounted"
rnfsd_wait_baseline 1 60
pass "O_DIRECT dd write and read SIGKILLed mid-transfer: mount and server fine, pools at one idle connection"

# ---- later transfers are byte-exact
bounded 120 "dd oflag=direct (full)" dd if="$SMALL" of="$MNT/dio.bin" bs=1M oflag=direct status=none
compare_files "$SMALL" "$EXPORT/dio.bin"
bounded 120 "cp into the mount" cp "$SMALL" "$MNT/cp.bin"
bounded 60 "sync" sync
compare_files "$SMALL" "$EXPORT/cp.bin"
drop_caches
bounded 120 "dd iflag=direct (full)" dd if="$MNT/small.bin" of="$SCRATCH/dio-back" bs=1M iflag=direct status=none
compare_files "$SMALL" "$SCRATCH/dio-back"
pass "after the kills: 16 MiB O_DIRECT write, cp and O_DIRECT read through the mount are byte-exact"
kumount "$MNT"
bounded 120 "put" "$NFS" "${COPTS[@]}" "$SPEC" put "$SMALL" /put.bin
compare_files "$SMALL" "$EXPORT/put.bin"
bounded 120 "get" "$NFS" "${COPTS[@]}" "$SPEC" get /small.bin "$SCRATCH/got"
compare_files "$SMALL" "$SCRATCH/got"
pass "after the kills: rpcrdma-nfs put and get of 16 MiB are byte-exact"
rnfsd_wait_baseline 0 60
rnfsd_term
rnfsd_check_final_stats
