#!/usr/bin/env bash
# worker-posts-load: replies posted by the workers (sc_reply_post = worker)
# under a heavier load than vm/worker-posts, on two transport threads:
# three clients at once (NULL calls at 128 in flight, 1 MiB echoes at 4 in
# flight, 64 KiB echoes at 4 in flight), while other clients are killed in
# the middle of their runs (their connections go down while workers post
# on them).  With Soft-RoCE the server's default is the transport thread;
# bench_rpc's workers never change credentials, so the worker path is
# forced (--workers-only --reply-post worker), as in vm/worker-posts.
# Checks: the three clients complete with no error (echo data compared by
# the client); the server exits 0 on SIGTERM; its final counters show
# workers posting replies, connections on both transport threads, and
# every gauge back at zero.  Data races are checked only when bench_rpc is
# a ThreadSanitizer build (RPCRDMA_BUILD_DIR=build-tsan, run by hand):
# make check runs the plain build, and the same worker-post paths run
# under ThreadSanitizer in make tsan's unit tests (docs/testing.md).
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
vm_require_guest

B=$(rpcrdma_bin bench/bench_rpc)
PORT=20053
SLOG=$SCRATCH/bench_rpc-server.log

# With a ThreadSanitizer build: what Soft-RoCE's provider does unseen.
TSAN_SUPP=$(dirname "${BASH_SOURCE[0]}")/tsan-rxe.supp
export TSAN_OPTIONS="suppressions=$TSAN_SUPP ${TSAN_OPTIONS:-}"
TSAN=0
ldd "$B" 2>/dev/null | grep -q libtsan && TSAN=1
"$B" server --listen "$SERVER_ADDR" --port "$PORT" --threads 4 --transport-threads 2 \
	--workers-only --reply-post worker >"$SLOG" 2>&1 &
SRV=$!
at_exit "kill -TERM $SRV 2>/dev/null"
on_failure "tail -n 60 $SLOG"
for _ in $(seq 1 240); do
	rdma res show cm_id 2>/dev/null | grep "state LISTEN" |
		grep -qE "src-addr [^ ]*:$PORT( |$)" && break
	kill -0 "$SRV" 2>/dev/null || fail "bench_rpc server exited"
	sleep 0.25
done

# A connect that times out (a slow server: ThreadSanitizer under TCG) is
# tried again, twice at most.
client() {
	local i out
	for i in 1 2 3; do
		out=$(timeout -k 10 300 "$B" client --source "$CLIENT_ADDR" "$SERVER_ADDR" \
			--port "$PORT" "$@" 2>&1) && { echo "$out"; return 0; }
		grep -q "cannot connect" <<<"$out" || { echo "$out"; return 1; }
	done
	echo "$out"
	return 1
}

qps() { rdma res show qp 2>/dev/null | grep -c "lqpn" || true; }
QP0=$(qps)

# One after the other (a slow server, as under ThreadSanitizer, may
# otherwise let a connect time out), then all at once.
client --null --inflight 128 --seconds 20 >"$SCRATCH/null.json" 2>&1 &
C1=$!
sleep 1
client --echo 1048576 --count 40 --inflight 4 >"$SCRATCH/echo1m.json" 2>&1 &
C2=$!
sleep 1
client --echo 65536 --count 400 --inflight 4 >"$SCRATCH/echo64k.json" 2>&1 &
C3=$!
sleep 1

# Clients killed in the middle of their runs: their connections go down
# while calls are in the workers.
for i in 1 2 3 4; do
	client --null --inflight 64 --seconds 30 >/dev/null 2>&1 &
	K=$!
	sleep 2
	kill -KILL "$K" 2>/dev/null
	wait "$K" 2>/dev/null || true
	client --echo 262144 --count 1000 --inflight 4 >/dev/null 2>&1 &
	K=$!
	sleep 2
	kill -KILL "$K" 2>/dev/null
	wait "$K" 2>/dev/null || true
	log "killed two clients mid-run ($i)"
done

for c in "$C1:null" "$C2:echo1m" "$C3:echo64k"; do
	wait "${c%%:*}" || fail "client ${c#*:} failed: $(cat "$SCRATCH/${c#*:}.json")"
	out=$(cat "$SCRATCH/${c#*:}.json")
	log "${c#*:}: $out"
	[[ $(jq .errors <<<"$out") == 0 ]] || fail "${c#*:} with errors: $out"
done
pass "three clients under load, four pairs killed mid-run: no error"

# Every connection drained (the killed ones included) before the counters.
for _ in $(seq 1 240); do
	(($(qps) <= QP0)) && break
	sleep 0.25
done
(($(qps) <= QP0)) || fail "$(($(qps) - QP0)) QPs left 60 s after the last client"
kill -TERM "$SRV"
st=0
wait "$SRV" || st=$?
if ((TSAN)) && grep -q "WARNING: ThreadSanitizer" "$SLOG"; then
	grep "SUMMARY: ThreadSanitizer" "$SLOG" | sort | uniq -c
	grep -A30 "WARNING: ThreadSanitizer" "$SLOG" | head -n 400
	fail "data race reported"
fi
((st == 0)) || fail "bench_rpc server exited with status $st"
! grep -q "did not drain" "$SLOG" || fail "connections left at exit: $(grep 'did not drain' "$SLOG")"
grep -q "on transport thread 1" "$SLOG" || fail "no connection on transport thread 1"
stats=$(grep '^{' "$SLOG" | tail -n 1)
log "server counters: $stats"
(($(jq .worker_posts <<<"$stats") > 0)) || fail "no reply posted by a worker: $stats"
for g in ctx_in_use large_in_use recv_in_use conns_open buf_bytes_in_use; do
	[[ $(jq ".$g" <<<"$stats") == 0 ]] || fail "gauge $g not 0 at exit: $stats"
done
races="no race reported (ThreadSanitizer build)"
((TSAN)) || races="races not checked (not a ThreadSanitizer build)"
pass "worker_posts $(jq .worker_posts <<<"$stats") of $(jq .calls <<<"$stats") calls, every gauge at 0, $races"
