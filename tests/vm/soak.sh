#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# vm/soak: rpcrdma-nfsd under a random mixed load for RPCRDMA_SOAK_SECONDS
# (default 90: the short run CI does; `make soak DURATION=...` for a long one,
# docs/soak.md).  Two kernel NFS/RDMA mounts of the export (default transfer
# sizes, and 64 KiB rsize/wsize) each carry a worker doing random unaligned
# pwrite/read (buffered and O_DIRECT), append, truncate, create, rename,
# unlink, readdir; an rpcrdma-nfs worker does put/get/cat/stat/ls/mv/rm/
# mkdir/rmdir/ln -s/readlink in the same export, and crosses over with the
# kernel mount.  Every byte read is compared with a model (tests/vm/soak.py).
# Checks: no mismatch, no error, no stall; the server's RSS flat after
# warm-up; after unmount and SIGTERM, exit status 0 and every pool back at its
# baseline.
#
# Environment: RPCRDMA_SOAK_SECONDS (90), RPCRDMA_SOAK_SEED (random; printed),
# RPCRDMA_SOAK_INTERVAL (sampling period, s; default duration/120, 2..30),
# RPCRDMA_SOAK_RSS_SLACK_KIB (8192), RPCRDMA_SOAK_OUT (a directory to copy the
# summary, the time series and the server log to, for scripts/soak).
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
vm_require_guest

SECS=${RPCRDMA_SOAK_SECONDS:-90}
SEED=${RPCRDMA_SOAK_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
INTERVAL=${RPCRDMA_SOAK_INTERVAL:-$(( SECS / 120 < 2 ? 2 : (SECS / 120 > 30 ? 30 : SECS / 120) ))}
SLACK=${RPCRDMA_SOAK_RSS_SLACK_KIB:-8192}
EXPORT=$SCRATCH/export
SLOG=$SCRATCH/rpcrdma-nfsd.log
MNT_A=/mnt/soak-a
MNT_B=/mnt/soak-b
OUT=$SCRATCH/soak
mkdir -p "$OUT"
NFSD=$(rpcrdma_bin rpcrdma-nfsd)
NFS=$(rpcrdma_bin rpcrdma-nfs)
command -v python3 >/dev/null || skip "python3 is not installed"
log "soak: $SECS s, seed $SEED (RPCRDMA_SOAK_SEED=$SEED repeats the choices), sample every $INTERVAL s"

# copy_out: the results to RPCRDMA_SOAK_OUT (also when the soak fails).
copy_out() {
	[[ -n "${RPCRDMA_SOAK_OUT:-}" ]] || return 0
	mkdir -p "$RPCRDMA_SOAK_OUT"
	cp -f "$OUT"/* "$SLOG" "$RPCRDMA_SOAK_OUT"/ 2>/dev/null || true
}
at_exit copy_out

rnfsd_start "$NFSD" "$EXPORT" "$SLOG" --no-root-squash --stats --threads 4
MOPTS=mountport=$MOUNT_PORT,mountproto=tcp
kmount "$SERVER_ADDR:$EXPORT" "$MNT_A" "$MOPTS"
kmount "$SERVER_ADDR:$EXPORT" "$MNT_B" "$MOPTS,rsize=65536,wsize=65536"
on_failure "echo '---- soak summary ----'; cat '$OUT/summary.json' 2>/dev/null"

rc=0
timeout -k 10 $((SECS + 600)) python3 "$VM_TEST_DIR/soak.py" \
	--seconds "$SECS" --seed "$SEED" --kmount "$MNT_A" --kmount "$MNT_B" \
	--export "$EXPORT" --tool "$NFS" --spec "$SERVER_ADDR:$EXPORT" \
	--mount-port "$MOUNT_PORT" --server-pid "$RNFSD_PID" --server-log "$SLOG" \
	--interval "$INTERVAL" --rss-slack-kib "$SLACK" --tmp "$SCRATCH/tmp" \
	--series "$OUT/series.jsonl" --summary "$OUT/summary.json" || rc=$?
((rc != 124 && rc != 137)) || fail "soak workload still running $((SECS + 600)) s after it started (seed $SEED)"
((rc != 3)) || fail "a soak worker stalled (seed $SEED): see the HANG line above"
[[ -s "$OUT/summary.json" ]] || fail "the soak workload wrote no summary (status $rc)"
mism=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["mismatches"])' "$OUT/summary.json")
errs=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["errors"])' "$OUT/summary.json")
((mism == 0)) || fail "$mism mismatches (seed $SEED): see the MISMATCH lines above"
((errs == 0)) || fail "$errs unexpected errors (seed $SEED): see the ERROR lines above"
python3 -c 'import json,sys; sys.exit(not json.load(open(sys.argv[1]))["rss"].get("judged"))' "$OUT/summary.json" ||
	fail "memory growth not judged: $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["rss"]["note"])' "$OUT/summary.json") (RPCRDMA_SOAK_SECONDS=$SECS, sampled every $INTERVAL s)"
python3 -c 'import json,sys; sys.exit(not json.load(open(sys.argv[1]))["rss"]["ok"])' "$OUT/summary.json" ||
	fail "server RSS grew after warm-up: $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["rss"])' "$OUT/summary.json")"
((rc == 0)) || fail "soak workload status $rc"
pass "soak: $(python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); print("%d ops, %d B written, %d B read, %d B verified, 0 mismatches" % (s["ops_total"], s["bytes_written"], s["bytes_read"], s["bytes_verified"]))' "$OUT/summary.json")"
pass "server RSS flat: $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["rss"])' "$OUT/summary.json")"

# Pools back at baseline: unmount, let the connections go, then SIGTERM.
kumount "$MNT_A"
kumount "$MNT_B"
sleep 2
kill -USR1 "$RNFSD_PID"
sleep 1
log "server gauges after unmount: $(grep '^{"connections"' "$SLOG" | tail -n 1)"
rnfsd_term
rnfsd_check_final_stats
grep '^{"connections"' "$SLOG" | tail -n 1 >"$OUT/final-stats.json"
