#!/usr/bin/env bash
# many-connections: rpcrdma-nfsd with its default limits (but the per-host
# one) holding 256 idle RPC-over-RDMA connections plus a kernel mount.  rpcrdma-probe opens 256
# connections (--connections 256 --hold H), a NULL call on each, and holds
# them; while they are held the server's counters (SIGUSR1) and resident
# memory are printed with per-connection figures ((RSS - RSS with the mount
# only) / 256, (mr_bytes - mr_bytes with the mount only) / 256), and the
# kernel mount copies a 16 MiB random file in and back out (cmp byte-exact,
# also the server's copy).  Checks: the probe exits 0 with connected 256 and
# null_ok 256 (none dropped during the hold); conns_open reached >= 257
# while they were held; after the probe has ended and the mount is gone,
# conns_open is 0 and every gauge the server reports is back at its value
# right after the start (gauges found by name, RNFSD_GAUGE_RE in lib.sh,
# not a fixed list); the connections went to every transport thread (one
# per guest CPU by default); SIGTERM exits 0.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
vm_require_guest

NFSD=$(rpcrdma_bin rpcrdma-nfsd)
PROBE=$(rpcrdma_bin rpcrdma-probe)
EXPORT=$SCRATCH/export
SLOG=$SCRATCH/rpcrdma-nfsd.log
MNT=/mnt/many
MOPTS=mountport=$MOUNT_PORT,mountproto=tcp
N=${RPCRDMA_MANY_CONNS:-256}
# Seconds the probe holds its connections once all are open: long enough
# for the samples and the 16 MiB round trip under TCG.
HOLD=${RPCRDMA_MANY_HOLD:-45}
# How long the probe may take to open them all (measured: see docs/probe.md).
OPEN_LIMIT=${RPCRDMA_MANY_OPEN_LIMIT:-150}
PJSON=$SCRATCH/probe.json
PERR=$SCRATCH/probe.err

head -c 16777216 /dev/urandom >"$SCRATCH/orig" || fail "make the 16 MiB file"
# The default limits but one: the probe and the mount share one address,
# whose default share (--max-connections / 8: 231 in the 2 GiB guest) is
# below N + 1; the test is about what N idle connections cost.
rnfsd_start "$NFSD" "$EXPORT" "$SLOG" --no-root-squash --stats \
	--max-connections-per-host $((N + 16))
rnfsd_counters_now
BASE=$(rnfsd_counters_line)
RSS0=$(rnfsd_rss_kb)
log "counters at start: $BASE"
log "gauges (compared with these at the end): $(rnfsd_gauges_list "$BASE")"
log "server VmRSS at start: $RSS0 KiB"

kmount "$SERVER_ADDR:$EXPORT" "$MNT" "$MOPTS"
# With the server gone, anything touching the hard mount (kumount's
# mountpoint check too) blocks: detach it first when the test fails.
on_failure "kill -0 $RNFSD_PID 2>/dev/null || { echo 'rpcrdma-nfsd is gone: lazy unmount of $MNT'; timeout -k 5 20 umount -f -l '$MNT'; }"
ls "$MNT" >/dev/null
rnfsd_counters_now
MOUNTED=$(rnfsd_counters_line)
RSS1=$(rnfsd_rss_kb)
CONNS1=$(rnfsd_counter "$MOUNTED" conns_open)
MR1=$(rnfsd_counter "$MOUNTED" mr_bytes)
log "with the mount: conns_open $CONNS1, mr_bytes ${MR1:-?}, VmRSS $RSS1 KiB"

# ---- the probe: N connections, held
t_probe=$SECONDS
timeout -k 10 $((OPEN_LIMIT + HOLD + 120)) "$PROBE" --verbose --connections "$N" \
	--hold "$HOLD" --source "$CLIENT_ADDR" "$SERVER_ADDR" >"$PJSON" 2>"$PERR" &
PROBE_PID=$!
at_exit "kill -TERM $PROBE_PID 2>/dev/null"
on_failure "echo '---- rpcrdma-probe stderr (last 40 lines) ----'; tail -n 40 '$PERR'; echo '---- its JSON ----'; cat '$PJSON'"

# server_alive WHEN: fail, saying so when the OOM killer did it, unless the
# server runs.
server_alive() {
	kill -0 "$RNFSD_PID" 2>/dev/null && return 0
	if dmesg | grep -q "Killed process $RNFSD_PID (rpcrdma-nfsd)"; then
		fail "rpcrdma-nfsd was killed by the OOM killer $1: $(dmesg | grep -m1 "Killed process $RNFSD_PID")"
	fi
	fail "rpcrdma-nfsd died $1"
}

# Wait for the probe to say it holds them (or to end early).
while ! grep -q 'connections opened in' "$PERR" 2>/dev/null; do
	server_alive "while the probe opened $N connections ($(tail -n 1 "$PERR"))"
	kill -0 "$PROBE_PID" 2>/dev/null || break
	((SECONDS - t_probe < OPEN_LIMIT)) ||
		fail "rpcrdma-probe has not opened its $N connections after $OPEN_LIMIT s: $(tail -n 1 "$PERR")"
	sleep 1
done
kill -0 "$PROBE_PID" 2>/dev/null ||
	fail "rpcrdma-probe ended before holding its connections: $(tail -n 3 "$PERR") $(cat "$PJSON")"
log "probe: $(grep -m1 'connections opened in' "$PERR") (after $((SECONDS - t_probe)) s)"
t_held=$SECONDS
server_alive "while the probe opened $N connections"

# sample WHAT: counters and memory now, with per-connection figures.
CONNS_MAX=0
sample() {
	local line conns mr rss
	server_alive "while $N connections were held"
	rnfsd_counters_now
	line=$(rnfsd_counters_line)
	conns=$(rnfsd_counter "$line" conns_open)
	mr=$(rnfsd_counter "$line" mr_bytes)
	rss=$(rnfsd_rss_kb)
	if ((conns > CONNS_MAX)); then CONNS_MAX=$conns; fi
	log "$1: conns_open $conns, mr_bytes ${mr:-?}, VmRSS $rss KiB;" \
		"per probe connection: VmRSS $(((rss - RSS1) / N)) KiB," \
		"mr_bytes ${mr:+$(((mr - ${MR1:-0}) / N))}"
	log "$1: $line"
}

sample "held"
# The kernel mount's round trip while the probe's connections are held.
bounded 120 "cp in through the mount" cp "$SCRATCH/orig" "$MNT/big.bin"
bounded 60 "sync" sync
drop_caches
bounded 120 "cp out through the mount" cp "$MNT/big.bin" "$SCRATCH/back"
compare_files "$SCRATCH/orig" "$SCRATCH/back"
compare_files "$SCRATCH/orig" "$EXPORT/big.bin"
pass "16 MiB in and out through the kernel mount, byte-exact, while $N connections were held ($((SECONDS - t_held)) s)"
kill -0 "$PROBE_PID" 2>/dev/null && sample "held, after the copy"
((SECONDS - t_held < HOLD - 5)) ||
	log "note: the copy ended less than 5 s before the end of the hold"

# ---- the probe's verdict
rc=0
wait "$PROBE_PID" || rc=$?
log "probe exited with status $rc after $((SECONDS - t_probe)) s: $(cat "$PJSON")"
python3 - "$PJSON" "$N" <<'EOF' || fail "rpcrdma-probe's JSON: $(cat "$PJSON")"
import json, sys
d = json.load(open(sys.argv[1]))
n = int(sys.argv[2])
bad = [f"{k} {d.get(k)} (expected {v})" for k, v in
       (("connected", n), ("null_ok", n), ("refused", 0), ("failed", 0),
        ("dropped_during_hold", 0)) if d.get(k) != v]
print("; ".join(bad))
sys.exit(1 if bad else 0)
EOF
((rc == 0)) || fail "rpcrdma-probe exited with status $rc"
pass "rpcrdma-probe: $N connections, $N NULL calls answered, none dropped while held"
((CONNS_MAX >= N + CONNS1)) ||
	fail "conns_open was at most $CONNS_MAX while the probe held $N connections (expected >= $((N + CONNS1)))"
pass "conns_open reached $CONNS_MAX while held (>= $N + $CONNS1)"
server_alive "after the probe"

# ---- spread over the transport threads (one per guest CPU by default):
# the server logs the first 64 accepts with the thread that took each.
NCPU=$(nproc)
if ((NCPU > 1)); then
	per_thread=$(grep -o 'accepted on transport thread [0-9]*' "$SLOG" | sort | uniq -c)
	log "accepts logged per transport thread:"$'\n'"$per_thread"
	nthreads=$(printf '%s\n' "$per_thread" | grep -c 'thread')
	((nthreads == NCPU)) ||
		fail "connections went to $nthreads transport threads, expected all $NCPU"
	pass "connections spread over all $NCPU transport threads"
fi

# ---- all gone: back at the start values
kumount "$MNT"
rnfsd_wait_gauges_baseline "$BASE" 60
log "server VmRSS at the end: $(rnfsd_rss_kb) KiB (start $RSS0 KiB)"
rnfsd_term
