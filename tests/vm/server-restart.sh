#!/usr/bin/env bash
# server-restart: rpcrdma-nfsd SIGKILLed and restarted under a mounted kernel
# client (issue 7).  The kernel NFSv3 client mounts over RDMA (hard mount,
# the default); in each of two rounds it writes a 64 MiB file of known
# content (dd conv=fsync) and reads an existing 64 MiB file (after a cache
# drop), both at once.  The server is SIGKILLed mid-transfer (round 1 once
# the server's copy of the write has 4 MiB, round 2 once the read has
# fetched 16 MiB) and, two seconds later, started again with the same export
# and the same handle key file, so the client's file handles stay valid.
# Without any intervention the client reconnects, both transfers finish, and
# the written file (on the server and read back through the mount after a
# cache drop) and the read data have the sha256 of their sources.  Finally,
# after unmount and SIGTERM, the restarted server's counters are at
# baseline.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
vm_require_guest

NFSD=$(rpcrdma_bin rpcrdma-nfsd)
EXPORT=$SCRATCH/export
SLOG=$SCRATCH/rpcrdma-nfsd.log
MNT=/mnt/x
MOPTS=mountport=$MOUNT_PORT,mountproto=tcp,hard
MIB=1048576
SRC=$SCRATCH/src.bin

sha() { sha256sum <"$1" | cut -d' ' -f1; }

mountstats_dump() {
	echo "---- /proc/self/mountstats for $1 ----"
	awk -v m="$1" '$1 == "device" { on = ($5 == m) } on' /proc/self/mountstats
}
on_failure "mountstats_dump '$MNT'"

mkdir -p "$EXPORT"
head -c $((64 * MIB)) /dev/urandom >"$SRC" || fail "make the 64 MiB file"
cp "$SRC" "$EXPORT/existing.bin"
SUM=$(sha "$SRC")

start_server() {
	rnfsd_start "$NFSD" "$EXPORT" "$SLOG.$1" --no-root-squash --stats \
		--handle-key "$SCRATCH/handle.key"
}

# wait_size FILE BYTES: wait (120 s at most) until FILE has BYTES bytes.
wait_size() {
	local i
	for ((i = 0; i < 1200; i++)); do
		(($(stat -c %s "$1" 2>/dev/null || echo 0) >= $2)) && return 0
		sleep 0.1
	done
	fail "$1 did not reach $2 bytes within 120 s"
}

start_server 0
kmount "$SERVER_ADDR:$EXPORT" "$MNT" "$MOPTS"
[[ "$(mountstats_xprt "$MNT")" == "xprt:"*"rdma"* ]] || fail "mount $MNT is not over RDMA"

for round in 1 2; do
	drop_caches
	out=$MNT/written.$round
	back=$SCRATCH/read.$round
	# Both transfers bounded; SIGKILL ends them even in the NFS client's
	# killable sleep.
	timeout -k 10 300 dd if="$SRC" of="$out" bs=1M conv=fsync status=none </dev/null &
	writer=$!
	timeout -k 10 300 dd if="$MNT/existing.bin" of="$back" bs=1M status=none </dev/null &
	reader=$!
	# The transfer that triggers the kill is the one that must be cut
	# (the other may have finished by then).
	if ((round == 1)); then
		# Early: the client's writeback has many 1 MiB WRITEs in
		# flight (the grant grows to 128), and under TCG one turn of
		# wait_size's polling can outlast the rest of a 64 MiB write.
		wait_size "$EXPORT/written.$round" $((4 * MIB))
		what=mid-write cut=$writer
	else
		wait_size "$back" $((16 * MIB))
		what=mid-read cut=$reader
	fi
	kill -KILL "$RNFSD_PID"
	wait "$RNFSD_PID" || true
	log "round $round: SIGKILLed rpcrdma-nfsd $what: server copy $(($(stat -c %s "$EXPORT/written.$round") / MIB)) MiB, read $(($(stat -c %s "$back") / MIB)) MiB"
	kill -0 "$cut" 2>/dev/null || fail "round $round: the transfer ended ($what) before the server was killed"
	sleep 2
	t0=$SECONDS
	start_server "$round"
	rc=0
	wait "$writer" || rc=$?
	((rc == 0)) || fail "round $round: dd write across the server restart: status $rc"
	rc=0
	wait "$reader" || rc=$?
	((rc == 0)) || fail "round $round: dd read across the server restart: status $rc"
	log "round $round: both transfers finished $((SECONDS - t0)) s after the restart"
	[[ "$(sha "$EXPORT/written.$round")" == "$SUM" ]] ||
		fail "round $round: the server's copy of the written file differs from its source"
	[[ "$(sha "$back")" == "$SUM" ]] ||
		fail "round $round: the data read across the restart differ from the server's file"
	drop_caches
	[[ "$(bounded 120 "read back" sha256sum <"$out" | cut -d' ' -f1)" == "$SUM" ]] ||
		fail "round $round: the written file read back through the mount differs"
	pass "round $round: server SIGKILLed $what and restarted; the client recovered, 64 MiB written and 64 MiB read match their sources (sha256)"
done
# "xprt: rdma srcport bind_count connect_count ...": the initial connect and
# one reconnect per restart at least.
xprt=$(mountstats_xprt "$MNT")
connects=$(awk '{ print $5 }' <<<"$xprt")
((${connects:-0} >= 3)) || fail "the client's connect count is '$connects' after two restarts ($xprt)"
pass "the kernel client reconnected by itself: $connects connects ($xprt)"
rnfsd_wait_baseline 1 60
kumount "$MNT"
rnfsd_wait_baseline 0 60
rnfsd_term
rnfsd_check_final_stats
