#!/usr/bin/env bash
# disconnect-storm: clients connecting to rpcrdma-nfsd and dropping at random
# points (issue 7).  In each of ROUNDS rounds of ROUND_SECS (3 x 30 s), four
# loops run in parallel, each starting one client after the other and
# SIGKILLing it after a random delay: rpcrdma-nfs get and put of a 64 MiB
# file (0.3-14 s: under TCG the tool needs 5-10 s to MOUNT and connect, so the
# kills land in MOUNT, in the RDMA connect or with READs/WRITEs in flight),
# rpcrdma-nfs ls -l (0.3-8 s), and ucmatose opening three rdma_cm
# connections to the NFS/RDMA port that carry no message at all (0.05-3 s:
# in address resolution, mid-handshake or connected).  After each round the
# server is alive and, once the dropped connections are reaped, its pools are
# at baseline (conns_open, mrs_open, ctx_in_use, large_in_use, recv_in_use 0).
# Then a kernel NFS/RDMA mount of the same server copies a 16 MiB file in and
# back out after a cache drop (both compare equal), a clean rpcrdma-nfs get
# of the 64 MiB file is byte-exact, and after unmount and SIGTERM the final
# counters are at baseline with no RDMA_ERROR sent.
#
# The server runs four transport threads (--transport-threads 4, twice the
# guest's CPUs), so the storm's connections are spread over four run loops
# and admission and the shared memory budget are crossed between groups.
# Last, a stop during the hand-over: a kernel mount used by an ordinary user
# (whose calls need a credential switch, so they go to the workers and come
# back through the done queues) is busy creating, writing and removing small
# files when the server gets SIGTERM; it must exit with status 0 within
# 30 s with every pool at baseline.
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
ROUNDS=${RPCRDMA_STORM_ROUNDS:-3}
OUT=$SCRATCH/storm
command -v ucmatose >/dev/null || skip "ucmatose (rdmacm-utils) is not installed"

mkdir -p "$EXPORT" "$OUT"
head -c 67108864 /dev/urandom >"$SCRATCH/orig" || fail "make the 64 MiB file"
cp "$SCRATCH/orig" "$EXPORT/src.bin"
rnfsd_start "$NFSD" "$EXPORT" "$SLOG" --no-root-squash --stats --handle-key "$SCRATCH/handle.key" \
	--transport-threads 4

# storm_one KIND N: one client, SIGKILLed after a random delay unless it
# finishes first; prints "KIND N DELAY STATUS".  Under TCG the tool needs
# 5-10 s to MOUNT and connect (more with the other clients running) and a
# few seconds for 64 MiB, hence delays up to 14 s.
storm_one() {
	local kind=$1 n=$2 d rc=0
	case $kind in
	cm) d=$(random_delay 5 300) ;;
	ls) d=$(random_delay 30 800) ;;
	*) d=$(random_delay 30 1400) ;;
	esac
	case $kind in
	get) timeout -s KILL "$d" "$NFS" "${COPTS[@]}" "$SPEC" get /src.bin "$OUT/got.$n" ;;
	put) timeout -s KILL "$d" "$NFS" "${COPTS[@]}" "$SPEC" put "$SCRATCH/orig" "/put.$n" ;;
	ls) timeout -s KILL "$d" "$NFS" "${COPTS[@]}" "$SPEC" ls -l / ;;
	cm) timeout -s KILL "$d" ucmatose -s "$SERVER_ADDR" -b "$CLIENT_ADDR" -p "$NFS_RDMA_PORT" -c 3 -C 0 ;;
	esac >"$OUT/$kind.$n.log" 2>&1 </dev/null || rc=$?
	# A get's copy is not compared (the clean get below is): removed, so
	# that the copies of a fast host's many finished gets, with the puts'
	# files and the originals, do not fill the guest's /srv tmpfs (half
	# its 2 GiB: the storm after-copy once failed with ENOSPC).
	[[ $kind == get ]] && rm -f "$OUT/got.$n"
	echo "$kind $n $d $rc"
}

# storm_loop KIND UNTIL: clients of KIND one after the other until SECONDS
# reaches UNTIL (each one ends by itself or by its SIGKILL within 14 s).
storm_loop() {
	local kind=$1 until=$2 n=0
	while ((SECONDS < until)); do
		storm_one "$kind" "$n"
		n=$((n + 1))
	done
}

# ---- the storm: ROUNDS rounds of ROUND_SECS, one client loop per kind
ROUND_SECS=${RPCRDMA_STORM_SECS:-30}
killed=0
finished=0
for ((r = 1; r <= ROUNDS; r++)); do
	pids=()
	for kind in get put ls cm; do
		storm_loop "$kind" $((SECONDS + ROUND_SECS)) >"$OUT/round.$kind" &
		pids+=($!)
	done
	# Not a bare `wait`: that would wait for the server too.
	wait "${pids[@]}"
	cat "$OUT"/round.* >"$OUT/round"
	while read -r kind n d rc; do
		case $rc in
		0) finished=$((finished + 1)) ;;
		124 | 137) killed=$((killed + 1)) ;;
		*)
			# ucmatose expects its own server's messages and may give
			# up on ours by itself; our own client must not fail.
			[[ $kind == cm ]] && continue
			cat "$OUT/$kind.$n.log"
			fail "round $r: $kind client $n (kill after $d s) exited with status $rc"
			;;
		esac
	done <"$OUT/round"
	log "round $r (kind@kill-delay=status): $(awk '{ printf "%s%s@%ss=%s", sep, $1, $3, $4; sep = " " }' "$OUT/round")"
	log "round $r: connections accepted so far: $(grep -c ': accepted' "$SLOG" || true)"
	kill -0 "$RNFSD_PID" 2>/dev/null || fail "rpcrdma-nfsd died in round $r"
	rnfsd_wait_baseline 0 60
done
pass "$ROUNDS rounds: $killed clients SIGKILLed at random points, $finished finished first; the server stayed up"
log "server after the storm: $(grep -c ': accepted' "$SLOG") connections accepted, $(grep '^{"connections"' "$SLOG" | tail -n 1)"

# ---- the server still serves: the kernel client and a clean get
head -c 16777216 "$SCRATCH/orig" >"$SCRATCH/orig16"
kmount "$SERVER_ADDR:$EXPORT" "$MNT" "$MOPTS"
[[ "$(mountstats_xprt "$MNT")" == "xprt:"*"rdma"* ]] || fail "mount $MNT is not over RDMA"
bounded 120 "cp into the mount" cp "$SCRATCH/orig16" "$MNT/after-storm.bin"
bounded 60 "sync" sync
compare_files "$SCRATCH/orig16" "$EXPORT/after-storm.bin"
drop_caches
bounded 120 "cp out of the mount" cp "$MNT/after-storm.bin" "$SCRATCH/back.bin"
compare_files "$SCRATCH/orig16" "$SCRATCH/back.bin"
pass "kernel NFS/RDMA mount after the storm: 16 MiB written, read back after a cache drop, both compare equal"
rnfsd_wait_baseline 1 30
kumount "$MNT"
bounded 120 "clean get" "$NFS" "${COPTS[@]}" "$SPEC" get /src.bin "$SCRATCH/clean.bin"
compare_files "$SCRATCH/orig" "$SCRATCH/clean.bin"
pass "rpcrdma-nfs get after the storm is byte-exact"
rnfsd_wait_baseline 0 60

# ---- stop during the hand-over: SIGTERM while an ordinary user's calls are
# on the workers (uid 65534 needs a credential switch: not served on the
# transport thread)
mkdir -m 1777 "$EXPORT/users"
kmount "$SERVER_ADDR:$EXPORT" "$MNT" "$MOPTS"
rnfsd_counters_now
deferred0=$(rnfsd_stat transport_defers)
runuser -u nobody -- sh -c '
	i=0
	while :; do
		head -c 4096 /dev/zero >"$1/users/f$i" && rm -f "$1/users/f$((i - 8))"
		i=$((i + 1))
	done' sh "$MNT" >/dev/null 2>&1 &
busy=$!
at_exit "kill -KILL $busy 2>/dev/null"
sleep 8
rnfsd_counters_now
deferred1=$(rnfsd_stat transport_defers)
((${deferred1:-0} > ${deferred0:-0})) ||
	fail "the user's calls did not go to the workers (transport_defers ${deferred0:-?} -> ${deferred1:-?})"
kill -0 "$busy" 2>/dev/null || fail "the user's file loop ended before the stop"
log "stop during the hand-over: $((deferred1 - deferred0)) calls handed to the workers so far; SIGTERM now"
rnfsd_term
rnfsd_check_final_stats
kill -KILL "$busy" 2>/dev/null
wait "$busy" 2>/dev/null || true
kumount "$MNT"
pass "SIGTERM with an ordinary user's calls in the hand-over: exit status 0, pools at baseline"
