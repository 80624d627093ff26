#!/usr/bin/env bash
# backchannel: our client and our server exchange backchannel calls (RFC
# 8167) over Soft-RoCE: vm-bc-pair (tests/vm/bc-pair.c) serves a forward
# program whose PING makes a backchannel call on the caller's connection;
# the client serves the backchannel program (v -> 3v + 1).  Checked: every
# call answered with the right result on both sides (sums worked out from
# the arguments), over two connections one after the other, then two at
# once (one on each transport thread); then a client without a backchannel
# (the server's calls time out after 300 ms), and one that leaves with
# calls outstanding (they end with -ENOTCONN); the server's backchannel
# counters at the end and its pools back at 0.  Then again with the
# workers posting the forward replies themselves (--reply-post worker),
# alongside the transport thread's backchannel Sends on the same QP.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
vm_require_guest

PAIR=$(rpcrdma_bin vm-bc-pair)
PORT=20061
SPID=

# server_start LOG [worker-posts]: start the vm-bc-pair server, wait for it.
server_start() {
	local slog=$1 i
	"$PAIR" server "$SERVER_ADDR" "$PORT" ${2:+"$2"} >"$slog" 2>&1 &
	SPID=$!
	at_exit "kill -9 $SPID"
	on_failure "echo '---- server log $slog'; cat $slog"
	for ((i = 0; i < 300; i++)); do
		grep -q '^serving' "$slog" && return 0
		sleep 0.1
	done
	fail "vm-bc-pair server did not start"
}

# server_stop LOG: SIGTERM, exit status 0, its final lines printed.
server_stop() {
	local slog=$1 rc=0
	kill -TERM "$SPID"
	wait "$SPID" || rc=$?
	((rc == 0)) || fail "vm-bc-pair server exited with status $rc"
	grep -v '^rpcrdma-svc: conn' "$slog"
}

# two_at_once N: two clients at once, N calls each (the second connection
# goes to the other transport thread).
two_at_once() {
	local n=$1 s1 s2 rc1=0 rc2=0
	"$PAIR" solo "$SERVER_ADDR" "$CLIENT_ADDR" "$PORT" "$n" >/tmp/vm-bc-solo1.log 2>&1 &
	s1=$!
	"$PAIR" solo "$SERVER_ADDR" "$CLIENT_ADDR" "$PORT" "$n" >/tmp/vm-bc-solo2.log 2>&1 &
	s2=$!
	at_exit "kill -9 $s1 $s2"
	wait "$s1" || rc1=$?
	wait "$s2" || rc2=$?
	cat /tmp/vm-bc-solo1.log /tmp/vm-bc-solo2.log
	((rc1 == 0 && rc2 == 0)) || fail "two clients at once: status $rc1, $rc2"
}

# ---- the transport thread posts everything
SLOG=/tmp/vm-bc-pair-server.log
server_start "$SLOG"
bounded 180 "client, 200 calls" "$PAIR" client "$SERVER_ADDR" "$CLIENT_ADDR" "$PORT" 200
pass "200 backchannel calls on one connection, results checked on both sides"
bounded 120 "client, 50 calls" "$PAIR" client "$SERVER_ADDR" "$CLIENT_ADDR" "$PORT" 50
pass "50 more on a second connection"
two_at_once 100
pass "two clients at once, 100 calls each, served and answered"
bounded 120 "client without a backchannel, 8 calls" "$PAIR" deaf "$SERVER_ADDR" "$CLIENT_ADDR" "$PORT" 8
pass "8 calls to a client without a backchannel: dropped there, timed out here"
bounded 60 "client leaving, 3 calls" "$PAIR" vanish "$SERVER_ADDR" "$CLIENT_ADDR" "$PORT" 3
pass "a client left with 3 backchannel calls outstanding"
sleep 1
server_stop "$SLOG"
grep -q '^bc_replies 450 bc_unmatched 0 bc_timeouts 8 failures 11 (timed out 8, connection gone 3)$' "$SLOG" ||
	fail "server's backchannel counters"
pass "server: 450 replies matched, none unmatched, 8 timed out, 3 ended with their connection"
if [[ $(nproc) -gt 1 ]]; then
	grep -q 'accepted on transport thread 1' "$SLOG" ||
		fail "no connection was served by the second transport thread"
	pass "connections on both transport threads"
fi
grep -q '^left: ctx_in_use 0 recv_in_use 0 buf_bytes_in_use 0 conns_open 0 mrs_open 0$' "$SLOG" ||
	fail "server's pools not back at 0 (backchannel Receives and send buffers included)"
pass "server: call contexts, Receives (the backchannel's too), buffers, regions all back"

# ---- workers post the forward replies, the transport thread the calls
SLOG=/tmp/vm-bc-pair-server-wp.log
server_start "$SLOG" worker-posts
bounded 180 "client, 200 calls, worker posts" "$PAIR" client "$SERVER_ADDR" "$CLIENT_ADDR" "$PORT" 200
two_at_once 100
server_stop "$SLOG"
grep -q '^bc_replies 400 bc_unmatched 0 bc_timeouts 0 failures 0 (timed out 0, connection gone 0)$' "$SLOG" ||
	fail "server's backchannel counters (worker posts)"
grep -q '^bc_calls 400 worker_posts [1-9]' "$SLOG" ||
	fail "no forward reply was posted by a worker"
grep -q '^left: ctx_in_use 0 recv_in_use 0 buf_bytes_in_use 0 conns_open 0 mrs_open 0$' "$SLOG" ||
	fail "server's pools not back at 0 (worker posts)"
pass "worker posts: 400 backchannel calls answered among forward replies posted by workers; pools back at 0"
