#!/usr/bin/env bash
# verbs-sanity: Soft-RoCE works for userspace verbs in the test VM.  rping
# (rdma_cm connection set-up, Send/Recv, RDMA Read and Write) from the client
# address to a server on the server address, then ib_write_bw (RDMA Write
# bandwidth, 64 KiB messages, connected with rdma_cm).
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
vm_require_guest

DEV=${RPCRDMA_RDMA_DEV:-rxe0}
OUT=/tmp/verbs-sanity
mkdir -p "$OUT"

# wait_cm_listen ADDR PORT SECONDS: an rdma_cm listener on ADDR:PORT (or any address).
wait_cm_listen() {
	local i
	for ((i = 0; i < $3 * 4; i++)); do
		if rdma res show cm_id 2>/dev/null |
		   grep -E "state LISTEN" | grep -qE "src-addr ($1|0\.0\.0\.0|::):$2( |$)"; then
			return 0
		fi
		sleep 0.25
	done
	return 1
}

# ---- rping: 10 pings with data validation
timeout -k 10 60 rping -s -a "$SERVER_ADDR" -C 10 -V >"$OUT/rping-server.log" 2>&1 &
srv=$!
at_exit "kill $srv 2>/dev/null"
on_failure "echo '---- rping server ----'; cat $OUT/rping-server.log"
wait_cm_listen "$SERVER_ADDR" 7174 30 || fail "rping server not listening on $SERVER_ADDR:7174 after 30 s"
if ! timeout -k 10 60 rping -c -a "$SERVER_ADDR" -I "$CLIENT_ADDR" -C 10 -v -V >"$OUT/rping-client.log" 2>&1; then
	cat "$OUT/rping-client.log"
	fail "rping client failed"
fi
cat "$OUT/rping-client.log"
n=$(grep -c '^ping data: rdma-ping-' "$OUT/rping-client.log" || true)
((n == 10)) || fail "rping client printed $n ping lines, expected 10"
rc=0
wait "$srv" || rc=$?
((rc == 0)) || fail "rping server exited with status $rc"
pass "rping: 10 validated pings $CLIENT_ADDR -> $SERVER_ADDR"

# ---- ib_write_bw: RDMA Write bandwidth, 64 KiB x 200, rdma_cm
bw=(ib_write_bw -d "$DEV" -R -F -s 65536 -n 200)
timeout -k 10 120 "${bw[@]}" >"$OUT/bw-server.log" 2>&1 &
srv=$!
at_exit "kill $srv 2>/dev/null"
on_failure "echo '---- ib_write_bw server ----'; cat $OUT/bw-server.log"
wait_cm_listen "$SERVER_ADDR" 18515 30 || fail "ib_write_bw server not listening on port 18515 after 30 s"
if ! timeout -k 10 120 "${bw[@]}" --source_ip "$CLIENT_ADDR" "$SERVER_ADDR" >"$OUT/bw-client.log" 2>&1; then
	cat "$OUT/bw-client.log"
	fail "ib_write_bw client failed"
fi
cat "$OUT/bw-client.log"
rc=0
wait "$srv" || rc=$?
((rc == 0)) || fail "ib_write_bw server exited with status $rc"
# result row: #bytes #iterations BW-peak BW-average MsgRate
row=$(awk '$1 == 65536 && $2 == 200 { print; exit }' "$OUT/bw-client.log")
[[ -n "$row" ]] || fail "no '65536 200 ...' result row in the ib_write_bw output"
pass "ib_write_bw: 200 x 64 KiB RDMA Writes, average $(awk '{ print $4 }' <<<"$row") MB/s"
