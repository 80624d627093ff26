#!/usr/bin/env bash
# worker-posts: replies posted by the workers that served the calls
# (sc_reply_post = worker), with real threads over Soft-RoCE.  With
# Soft-RoCE the server's default is the transport thread (a post is a
# system call the kernel refuses from a thread whose credentials changed),
# so the test forces the worker path on bench_rpc's server, whose workers
# never change credentials, and hands every call to a worker
# (--workers-only): several workers post on one QP while the transport
# thread posts Receives and RDMA Reads on it.
# Checks: the server logs the device's vendor and the default it chose
# (the transport thread, Soft-RoCE's 0xffffff); NULL calls at 64 in flight
# and 1 MiB echoes (Read chunk in, Write chunk out, data compared by the
# client) complete without an error; the server's final counters show
# worker_posts equal to its calls (every reply went from a worker; none
# needed handing back at this load), and every gauge at zero; SIGTERM
# exits 0.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
vm_require_guest

B=$(rpcrdma_bin bench/bench_rpc)
PORT=20052
SLOG=$SCRATCH/bench_rpc-server.log

start_server() {
	"$B" server --listen "$SERVER_ADDR" --port "$PORT" --threads 4 "$@" >"$SLOG" 2>&1 &
	SRV=$!
	at_exit "kill -TERM $SRV 2>/dev/null"
	for _ in $(seq 1 120); do
		rdma res show cm_id 2>/dev/null | grep "state LISTEN" |
			grep -qE "src-addr [^ ]*:$PORT( |$)" && return 0
		kill -0 "$SRV" 2>/dev/null || { cat "$SLOG"; fail "bench_rpc server exited"; }
		sleep 0.25
	done
	fail "bench_rpc server not listening on $PORT"
}

stop_server() {
	kill -TERM "$SRV"
	wait "$SRV" || fail "bench_rpc server exited with status $?"
}

client() {
	timeout -k 10 120 "$B" client --source "$CLIENT_ADDR" "$SERVER_ADDR" --port "$PORT" "$@"
}

# ---- the default on Soft-RoCE: the transport thread posts
start_server
out=$(client --null --inflight 8 --seconds 2) || fail "NULL calls failed: $out"
stop_server
grep -q "vendor 0xffffff): replies posted by the transport thread" "$SLOG" ||
	{ cat "$SLOG"; fail "the server did not choose the transport thread for Soft-RoCE"; }
stats=$(grep '^{' "$SLOG" | tail -n 1)
[[ $(jq .worker_posts <<<"$stats") == 0 ]] || fail "worker_posts not 0 by default: $stats"
pass "Soft-RoCE (vendor 0xffffff): replies posted by the transport thread by default"

# ---- forced: every call on a worker, every reply posted by it
start_server --workers-only --reply-post worker
null=$(client --null --inflight 64 --seconds 5) || fail "NULL calls failed: $null"
log "NULL at 64 in flight, replies from the workers: $null"
[[ $(jq .errors <<<"$null") == 0 ]] || fail "NULL calls with errors: $null"
echo=$(client --echo 1048576 --count 20 --inflight 1) || fail "echo failed: $echo"
log "1 MiB echo, replies from the workers: $echo"
[[ $(jq .errors <<<"$echo") == 0 ]] || fail "echo with errors: $echo"
[[ $(jq .read_chunks <<<"$echo") -gt 0 && $(jq .write_chunks <<<"$echo") -gt 0 ]] ||
	fail "the echo did not use Read and Write chunks: $echo"
stop_server
stats=$(grep '^{' "$SLOG" | tail -n 1)
log "server counters: $stats"
calls=$(jq .calls <<<"$stats")
posts=$(jq .worker_posts <<<"$stats")
((calls > 0 && posts == calls)) ||
	fail "worker_posts $posts, calls $calls: expected every reply from a worker"
for g in ctx_in_use large_in_use recv_in_use conns_open buf_bytes_in_use; do
	[[ $(jq ".$g" <<<"$stats") == 0 ]] || fail "gauge $g not 0 at exit: $stats"
done
pass "$calls calls, $posts replies posted by the workers, no error, every gauge at 0"
