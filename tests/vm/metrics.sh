#!/usr/bin/env bash
# metrics: rpcrdma-nfsd --metrics under a kernel-client workout.  The
# Prometheus endpoint is scraped with curl after each phase (writes, a
# listing, symlinks, reads): the per-procedure counters move as the phase
# does; before unmounting, the call count of every NFS procedure equals the
# kernel client's own count for the mount (/proc/self/mountstats), and each
# latency histogram's _count equals its procedure's replies.  The live view:
# rpcrdma-stat reaches the server through its default control socket
# (/run/rpcrdma-nfsd/20049.sock) and prints the table and valid JSON with the
# same counts; --watch prints the rates of each interval.  Counters
# counted per transport carry transport="rdma" and "tcp" samples.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
vm_require_guest

NFSD=$(rpcrdma_bin rpcrdma-nfsd)
STAT=$(rpcrdma_bin rpcrdma-stat)
EXPORT=$SCRATCH/export
MNT=/mnt/m
SLOG=/tmp/rpcrdma-nfsd.log
METRICS_PORT=9100
URL=http://$SERVER_ADDR:$METRICS_PORT/metrics
SCRAPE=/tmp/scrape.txt

command -v curl >/dev/null || fail "curl is not installed (scripts/install-deps --vm-only)"
mkdir -p "$EXPORT"
chmod 1777 "$EXPORT"
rnfsd_start "$NFSD" "$EXPORT" "$SLOG" --stats --metrics "$SERVER_ADDR:$METRICS_PORT"

# scrape: fetch the metrics into $SCRAPE (fails the test on an HTTP error).
scrape() {
	timeout -k 5 30 curl -sS --fail -o "$SCRAPE" -D /tmp/scrape.hdr "$URL" ||
		fail "curl $URL"
}
# calls PROC: calls of NFSv3 procedure PROC in the last scrape (0 when absent).
calls() {
	awk -v k="rpcrdma_svc_procedure_calls_total{program=\"100003\",version=\"3\",procedure=\"$1\"}" \
		'$1 == k { v = $2 } END { print v + 0 }' "$SCRAPE"
}
# hist_count PROC: the latency histogram's _count for PROC.
hist_count() {
	awk -v k="rpcrdma_svc_call_duration_seconds_count{program=\"100003\",version=\"3\",procedure=\"$1\"}" \
		'$1 == k { v = $2 } END { print v + 0 }' "$SCRAPE"
}
# replies PROC: replies of PROC, all outcomes.
replies() {
	awk -v k="rpcrdma_svc_procedure_replies_total{program=\"100003\",version=\"3\",procedure=\"$1\"," \
		'index($1, k) == 1 { v += $2 } END { print v + 0 }' "$SCRAPE"
}

scrape
grep -qi '^content-type: text/plain; version=0.0.4' /tmp/scrape.hdr ||
	fail "content type: $(grep -i content-type /tmp/scrape.hdr)"
[[ "$(calls WRITE)" == 0 && "$(calls READ)" == 0 ]] || fail "WRITE or READ counted before any mount"
code=$(timeout -k 5 30 curl -s -o /dev/null -w '%{http_code}' "http://$SERVER_ADDR:$METRICS_PORT/other")
[[ "$code" == 404 ]] || fail "GET /other: HTTP $code, expected 404"
pass "metrics served at $URL (text format 0.0.4; other paths 404)"

kmount "$SERVER_ADDR:$EXPORT" "$MNT" "mountport=$MOUNT_PORT,mountproto=tcp"

# ---- phase 1: writes (one large file, small files), then sync
head -c $((8 << 20)) /dev/urandom >/tmp/big.bin
bounded 120 "write 8 MiB" cp /tmp/big.bin "$MNT/big.bin"
for i in $(seq 1 20); do echo "small $i" >"$MNT/small-$i"; done
bounded 60 sync sync
scrape
w1=$(calls WRITE) c1=$(calls CREATE)
((w1 > 0)) || fail "no WRITE counted after writing 8 MiB"
((c1 >= 21)) || fail "CREATE counted $c1 times after creating 21 files"
pass "after the writes: WRITE $w1, CREATE $c1"

# ---- phase 2: a directory of 300 entries listed (READDIRPLUS), symlinks
mkdir "$MNT/dir"
for i in $(seq 1 300); do : >"$MNT/dir/entry-with-a-longish-name-$i"; done
ln -s big.bin "$MNT/link"
drop_caches
n=$(bounded 60 "ls dir" ls -l "$MNT/dir" | wc -l)
((n == 301)) || fail "ls -l shows $n lines, expected 301"
target=$(readlink "$MNT/link")
[[ "$target" == big.bin ]] || fail "readlink: '$target'"
scrape
rdp=$(( $(calls READDIRPLUS) + $(calls READDIR) ))
((rdp > 0)) || fail "no READDIRPLUS or READDIR counted after listing 300 entries"
(($(calls SYMLINK) == 1)) || fail "SYMLINK counted $(calls SYMLINK) times, expected 1"
(($(calls READLINK) >= 1)) || fail "no READLINK counted"
(($(calls WRITE) == w1)) || fail "WRITE moved from $w1 to $(calls WRITE) without writes"
pass "after the listing: READDIR(PLUS) $rdp, SYMLINK 1, READLINK $(calls READLINK); WRITE unchanged"

# ---- phase 3: read the large file back
drop_caches
r0=$(calls READ)
compare_files /tmp/big.bin "$MNT/big.bin"
rm "$MNT/small-1"
bounded 60 sync sync
scrape
r1=$(calls READ)
((r1 > r0)) || fail "READ did not move ($r0 -> $r1) while reading 8 MiB"
(($(calls REMOVE) == 1)) || fail "REMOVE counted $(calls REMOVE) times, expected 1"
pass "after the reads: READ $r0 -> $r1, REMOVE 1"

# ---- per-procedure counts against the kernel client's
# The kernel counts an operation when it completes; nothing is in flight
# now (sync returned, no process uses the mount).  NULL is left out: the
# client pings on its transport's own RPC client, not the mount's.
scrape
mismatch=
compared=0
for op in GETATTR SETATTR LOOKUP ACCESS READLINK READ WRITE CREATE MKDIR SYMLINK MKNOD \
	  REMOVE RMDIR RENAME LINK READDIR READDIRPLUS FSSTAT FSINFO PATHCONF COMMIT; do
	k=$(mountstats_ops "$MNT" "$op")
	k=${k:-0}
	s=$(calls "$op")
	log "$op: kernel client $k, server $s (replies $(replies "$op"), histogram count $(hist_count "$op"))"
	[[ "$k" == "$s" ]] || mismatch+=" $op(client $k, server $s)"
	[[ "$(hist_count "$op")" == "$(replies "$op")" ]] ||
		fail "$op: histogram _count $(hist_count "$op") is not its replies $(replies "$op")"
	((k == 0)) || compared=$((compared + 1))
done
[[ -z "$mismatch" ]] || fail "per-procedure counts differ from /proc/self/mountstats:$mismatch"
((compared >= 10)) || fail "only $compared procedures used: the workout is too small to compare"
pass "the server's call counts equal the kernel client's for all $compared procedures it used"

# ---- counters per transport: one sample each, the mount is RDMA's
xprt() {
	awk -v k="rpcrdma_svc_$1{transport=\"$2\"}" '$1 == k { v = $2; n++ } END { print (n == 1 ? v : "missing") }' "$SCRAPE"
}
for m in calls_total connections_total recv_bytes_total send_bytes_total conns_open; do
	[[ "$(xprt "$m" tcp)" == 0 ]] || fail "rpcrdma_svc_$m{transport=\"tcp\"}: $(xprt "$m" tcp), expected 0 (no TCP client)"
done
(($(xprt calls_total rdma) > 0 && $(xprt conns_open rdma) == 1)) ||
	fail "rpcrdma_svc_calls_total / conns_open for transport rdma: $(xprt calls_total rdma) / $(xprt conns_open rdma)"
grep -q '^rpcrdma_svc_calls_total ' "$SCRAPE" && fail "rpcrdma_svc_calls_total has an unlabelled sample beside its transports'"
pass "per-transport samples: rdma calls $(xprt calls_total rdma), tcp 0"

# ---- every metric the Grafana dashboard queries is in the scrape
missing=
for m in $(grep -o 'rpcrdma_svc_[a-z0-9_]*' "$RPCRDMA_CHECKOUT/docs/grafana/rpcrdma-nfsd.json" | sort -u); do
	grep -q "^${m}[{ ]" "$SCRAPE" || missing+=" $m"
done
[[ -z "$missing" ]] || fail "docs/grafana/rpcrdma-nfsd.json queries metrics the server does not export:$missing"
pass "every metric docs/grafana/rpcrdma-nfsd.json queries is exported"

# ---- the live view: rpcrdma-stat through the default control socket
[[ -S /run/rpcrdma-nfsd/$NFS_RDMA_PORT.sock ]] || fail "no control socket /run/rpcrdma-nfsd/$NFS_RDMA_PORT.sock"
[[ "$(stat -c %a /run/rpcrdma-nfsd/$NFS_RDMA_PORT.sock)" == 600 ]] || fail "control socket mode $(stat -c %a /run/rpcrdma-nfsd/$NFS_RDMA_PORT.sock)"
table=$(timeout -k 5 30 "$STAT") || fail "rpcrdma-stat"
echo "$table"
awk -v w="$(calls WRITE)" '$1 == "WRITE" && $2 == w { f = 1 } END { exit !f }' <<<"$table" ||
	fail "rpcrdma-stat's table does not show WRITE with $(calls WRITE) calls"
timeout -k 5 30 "$STAT" --json >/tmp/stat.json || fail "rpcrdma-stat --json"
python3 - "$(calls READ)" /tmp/stat.json <<'PYEOF' || fail "rpcrdma-stat --json: not the expected JSON"
import json, sys
want, doc = int(sys.argv[1]), json.load(open(sys.argv[2]))
ops = {o.get("name"): o for o in doc["ops"] if o["prog"] == 100003}
assert ops["READ"]["count"] == want, (ops["READ"]["count"], want)
assert ops["READ"]["lat_p50_us"] > 0 and ops["READ"]["lat_p99_us"] >= ops["READ"]["lat_p50_us"]
assert len(doc["conns"]) >= 1 and doc["conns"][0]["peer"] == "192.0.2.2", doc["conns"]
print("rpcrdma-stat --json: READ", want, "p50", ops["READ"]["lat_p50_us"], "p99", ops["READ"]["lat_p99_us"], "us")
PYEOF
pass "rpcrdma-stat: the table and the JSON show the same counts"

# rpcrdma-stat --watch: the totals, then the rates of each interval; O_DIRECT
# writes go on all along, so WRITE is in the intervals' rows.  Watched until
# an interval shows WRITE with calls/s and a median (at most about 120 s),
# then stopped with SIGTERM (a background job of a script ignores SIGINT).
(while [[ ! -e /tmp/watch.done ]]; do
	dd if=/dev/zero of="$MNT/watch.bin" bs=64k count=16 oflag=direct status=none || exit 1
done) &
writer=$!
"$STAT" --watch 1 >/tmp/watch.out 2>/tmp/watch.err &
watcher=$!
watch_write() {
	awk '$1 == "100003/3" && $2 == "WRITE" && $3 > 0 && $6 > 0 { f = 1 } END { exit !f }' /tmp/watch.out
}
for ((i = 0; i < 120; i++)); do
	watch_write && break
	kill -0 "$watcher" 2>/dev/null || break
	sleep 1
done
kill -TERM "$watcher" 2>/dev/null || true
wait "$watcher" || true
touch /tmp/watch.done
wait "$writer" || fail "the writer during --watch failed"
cat /tmp/watch.out
grep -q '^Server transport:' /tmp/watch.out || fail "rpcrdma-stat --watch: no totals first: $(cat /tmp/watch.err)"
grep -q 'rates over the last' /tmp/watch.out || fail "rpcrdma-stat --watch: no interval: $(cat /tmp/watch.err)"
watch_write || fail "rpcrdma-stat --watch: no interval shows WRITE with calls/s and a median"
awk '$1 == "rdma" && $2 > 0 { f = 1 } END { exit !f }' /tmp/watch.out ||
	fail "rpcrdma-stat --watch: no interval shows RDMA calls/s"
rm -f "$MNT/watch.bin" /tmp/watch.done
pass "rpcrdma-stat --watch: per-interval rates (calls/s, MB/s, latency) per transport and procedure"

kumount "$MNT"
rnfsd_term
[[ ! -e /run/rpcrdma-nfsd/$NFS_RDMA_PORT.sock ]] || fail "the control socket is left after exit"
rnfsd_check_final_stats
pass "server exited cleanly; control socket removed"
