#!/usr/bin/env bash
# client-vs-rpcrdma-nfsd: our client (rpcrdma-nfs) against our own server
# (rpcrdma-nfsd), from the client address: the same checks as
# client-vs-kernel-nfsd; at the end the server must exit 0 on SIGTERM with
# every call context, receive buffer and registered region back.  Then the
# client tools' messages where an RDMA device exists (issue 37; the host
# without one is tests/unit/cli_messages.sh): MOUNT gives up after
# --timeout on a MOUNT server that never answers, and an address that
# resolves, whose MOUNT answers, but that is on a netdev without RDMA
# (rr1, the veth peer) is "no RDMA route", from rpcrdma-nfs and
# rpcrdma-probe.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
vm_require_guest

EXPORT=$SCRATCH/export
rnfsd_start "$(rpcrdma_bin rpcrdma-nfsd)" "$EXPORT" "$SCRATCH/rpcrdma-nfsd.log" \
	--no-root-squash --stats --handle-key "$SCRATCH/key"

CLIENT_OPTS=(--source "$CLIENT_ADDR" --mount-port "$MOUNT_PORT" --quiet)
SPEC="$SERVER_ADDR:$EXPORT"
client_suite

rnfsd_term
rnfsd_check_final_stats

# ---- messages (fake MOUNT servers: tests/vm/fake_mount.py)
FAKE=$VM_TEST_DIR/fake_mount.py
NFS=$(rpcrdma_bin rpcrdma-nfs)
PROBE=$(rpcrdma_bin rpcrdma-probe)
NOROUTE=198.51.100.1   # RFC 5737 TEST-NET-2, on rr1: no rxe device on it
fake_mount() { # ADDR PORT MODE
	rm -f "$SCRATCH/fake.ready"
	python3 "$FAKE" "$1" "$2" "$3" "$SCRATCH/fake.ready" &
	at_exit "kill $! 2>/dev/null"
	for _ in $(seq 200); do
		[[ -e "$SCRATCH/fake.ready" ]] && return 0
		sleep 0.05
	done
	fail "fake MOUNT server ($3) did not start"
}

# MOUNT that never answers: --timeout 2 ends it with "timed out", exit 1
# (the old client waited 10 s whatever --timeout said; `timeout 60` only
# keeps a hang from stalling the test, no time is asserted).
fake_mount "$SERVER_ADDR" 20099 silent
rc=0
out=$(timeout -k 5 60 "$NFS" --source "$CLIENT_ADDR" --mount-port 20099 --timeout 2 \
	"$SERVER_ADDR:/x" ls 2>&1) || rc=$?
((rc == 1)) && [[ "$out" == *"mount failed: MOUNT: Connection timed out"* ]] ||
	fail "MOUNT against a silent server, --timeout 2: status $rc: $out"
pass "MOUNT honours --timeout: $out"

# An address on a netdev without RDMA: MOUNT (fake) answers, RDMA has no route.
ip addr add "$NOROUTE/24" dev rr1 || fail "ip addr add $NOROUTE/24 dev rr1"
at_exit "ip addr del $NOROUTE/24 dev rr1"
fake_mount "$NOROUTE" 20098 answer
rc=0
out=$(timeout -k 5 60 "$NFS" --mount-port 20098 --timeout 10 "$NOROUTE:/x" ls 2>&1) || rc=$?
((rc == 1)) && [[ "$out" == *"RPC-over-RDMA connection to port"*"(no RDMA route to $NOROUTE:"* ]] ||
	fail "rpcrdma-nfs to an address without RDMA: status $rc: $out"
pass "rpcrdma-nfs says there is no RDMA route: $out"
rc=0
out=$(timeout -k 5 60 "$PROBE" "$NOROUTE" 2>&1) || rc=$?
((rc == 2)) && [[ "$out" == *"(no RDMA route to $NOROUTE:"* ]] ||
	fail "rpcrdma-probe to an address without RDMA: status $rc: $out"
pass "rpcrdma-probe says there is no RDMA route: $out"
