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
# a kill counts only when it killed the client (status 137) before the
# destination held the whole source (compared byte for byte; up to three
# tries per point, else the test fails); the get writes through a reader
# paced at 20 MiB/s and the put sends 64 KiB WRITEs two at a time (still
# with Read chunks), or either would be over before the kill here;
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

# kill_when_grows PID FILE BYTES SRC [MAXCS]: SIGKILL PID once FILE has
# at least BYTES bytes (polled every 20 ms), plus a random 0..MAXCS
# hundredths of a second (default 30); wait for PID (bounded: 120 s for it
# to reach BYTES).  Returns 0 when PID died of that SIGKILL before FILE
# held all of SRC (compared half a second after the kill; KILLED_AT:
# FILE's size just before the kill), 1 when the transfer was over first:
# PID ended before, or FILE was whole already (a kill while the client only
# closed or committed is not a kill with I/O in flight).  The content, not
# the size, tells: a put's WRITEs land out of order, so the server's file
# can be 64 MiB long while earlier parts are still on their way.
kill_when_grows() {
	local pid=$1 file=$2 bytes=$3 src=$4 maxcs=${5:-30} i rc=0
	for ((i = 0; i < 6000; i++)); do
		kill -0 "$pid" 2>/dev/null || break
		(($(stat -c %s "$file" 2>/dev/null || echo 0) >= bytes)) && break
		sleep 0.02
	done
	((i < 6000)) || fail "$file did not reach $bytes bytes within 120 s"
	sleep "$(random_delay 0 "$maxcs")"
	KILLED_AT=$(stat -c %s "$file" 2>/dev/null || echo 0)
	kill -KILL "$pid" 2>/dev/null || true
	wait "$pid" || rc=$?
	((rc == 0 || rc == 137)) || fail "the client (pid $pid) exited with status $rc before its SIGKILL"
	((rc == 137)) || return 1
	sleep 0.5
	! cmp -s "$file" "$src"
}

# kill_mid WHAT FILE RMFILE BYTES SRC CMD...: remove RMFILE (FILE, or its
# name through the mount when FILE is the server's copy of a file the
# kernel client writes), run CMD in the background and kill_when_grows it
# at BYTES of FILE, up to 3 times until the kill lands mid-transfer (FILE
# not yet all of SRC); fails when none did (so a pass below counts only
# kills with I/O in flight).  KILLS gets "WHAT at N MiB" appended; after
# each try the server must be alive.
KILLS=()
kill_mid() {
	local what=$1 file=$2 rmfile=$3 bytes=$4 src=$5 total try
	shift 5
	total=$(stat -c %s "$src")
	for ((try = 1; try <= 3; try++)); do
		rm -f "$rmfile"
		"$@" </dev/null &
		# the random delay on the first try only: a fast transfer
		# (64 MiB go in well under a second here) is over before
		# 0.3 s more
		if kill_when_grows $! "$file" "$bytes" "$src" $((try == 1 ? 30 : 0)); then
			KILLS+=("$what at $((KILLED_AT / MIB)) MiB")
			log "$what SIGKILLed with $((KILLED_AT / MIB)) MiB of $((total / MIB)) in its file, not all of it (try $try)"
			return 0
		fi
		log "$what of $((total / MIB)) MiB was over before its SIGKILL at $((bytes / MIB)) MiB (try $try)"
		kill -0 "$RNFSD_PID" 2>/dev/null || fail "rpcrdma-nfsd died after $what"
	done
	fail "$what: no SIGKILL landed mid-transfer in 3 tries"
}

# paced_get OUT: rpcrdma-nfs get of /src.bin to its standard output, a
# FIFO that a reader copies into OUT at most 1 MiB per 50 ms (20 MiB/s):
# an unpaced get of 64 MiB is over between two polls of kill_when_grows
# here, so the kill would land after it.  The function becomes rpcrdma-nfs
# (exec), so the background job's pid is the client's; the reader ends at
# the FIFO's end of file when the client dies.
paced_get() {
	local fifo=$SCRATCH/get.fifo
	rm -f "$fifo"
	mkfifo "$fifo"
	python3 -c '
import sys, time
src = open(sys.argv[1], "rb")
out = open(sys.argv[2], "wb", buffering=0)
while True:
    b = src.read(1 << 20)
    if not b:
        break
    out.write(b)
    time.sleep(0.05)
' "$fifo" "$1" &
	exec "$NFS" "${COPTS[@]}" "$SPEC" get /src.bin - >"$fifo"
}

# ---- rpcrdma-nfs SIGKILLed mid-get and mid-put
KILLS=()
for at in 1 8 24; do
	kill_mid "get" "$SCRATCH/got" "$SCRATCH/got" $((at * MIB)) "$BIG" \
		paced_get "$SCRATCH/got"
	kill -0 "$RNFSD_PID" 2>/dev/null || fail "rpcrdma-nfsd died after a client was killed mid-get"
	rnfsd_wait_baseline 0 60
done
pass "rpcrdma-nfs SIGKILLed mid-get three times (${KILLS[*]}): server alive, pools at baseline"
KILLS=()
for at in 1 8 24; do
	kill_mid "put" "$EXPORT/put.bin" "$EXPORT/put.bin" $((at * MIB)) "$BIG" \
		"$NFS" "${COPTS[@]}" --wsize 65536 --streams 2 "$SPEC" put "$BIG" /put.bin
	kill -0 "$RNFSD_PID" 2>/dev/null || fail "rpcrdma-nfsd died after a client was killed mid-put"
	rnfsd_wait_baseline 0 60
done
pass "rpcrdma-nfs SIGKILLed mid-put three times (${KILLS[*]}): server alive, pools at baseline"

# ---- the kernel client: a process doing O_DIRECT I/O SIGKILLed mid-transfer
kmount "$SERVER_ADDR:$EXPORT" "$MNT" "$MOPTS"
[[ "$(mountstats_xprt "$MNT")" == "xprt:"*"rdma"* ]] || fail "mount $MNT is not over RDMA"
KILLS=()
kill_mid "dd oflag=direct" "$EXPORT/dio.bin" "$MNT/dio.bin" $((8 * MIB)) "$BIG" \
	dd if="$BIG" of="$MNT/dio.bin" bs=1M oflag=direct status=none
kill_mid "dd iflag=direct" "$SCRATCH/dio-back" "$SCRATCH/dio-back" $((8 * MIB)) "$BIG" \
	dd if="$MNT/src.bin" of="$SCRATCH/dio-back" bs=1M iflag=direct status=none
kill -0 "$RNFSD_PID" 2>/dev/null || fail "rpcrdma-nfsd died after an O_DIRECT process was killed"
mountpoint -q "$MNT" || fail "$MNT is no longer mounted"
rnfsd_wait_baseline 1 60
pass "O_DIRECT dd write and read SIGKILLed mid-transfer (${KILLS[*]}): mount and server fine, pools at one idle connection"

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
