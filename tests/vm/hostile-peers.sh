#!/bin/bash
# SPDX-License-Identifier: MIT
# hostile-peers: a third address on the test link (INTRUDER_ADDR) plays a
# host that the exports allow, and tries what issue 33's review found:
# releasing another host's locks, locking files of an export it is not
# listed on, stalling MOUNT with slow or numerous TCP connections, and
# reading or redirecting the capture file.  The kernel client on
# CLIENT_ADDR is the victim; it mounts export A with locking (NLM).
#
# The checks live in tests/vm/hostile/*.sh, sourced in name order after
# the common set-up below; HOSTILE_PARTS="nlm mount" (names without .sh)
# runs only those.  Each part uses the variables set here and lib.sh's
# helpers, and must leave the server serving for the next part.
#
# Test-bed arrangement as in locking.sh (lib.sh's nlm_testbed): one guest,
# one rpcbind and one rpc.statd; the client's lockd listens on a fixed
# port and an nftables rule sends the client's NLM connections to
# rpcrdma-nfsd's NLM port.
. "$(dirname "$0")/lib.sh"

vm_require_guest
command -v python3 >/dev/null || skip "python3 is not installed"

NFSD=$(rpcrdma_bin rpcrdma-nfsd)
# shellcheck disable=SC2034
LOCKER="python3 $VM_TEST_DIR/locker.py"
INTRUDER_ADDR=192.0.2.3
EXPORT_A=$SCRATCH/a          # client and intruder
EXPORT_B=$SCRATCH/b          # client only
MNT=/mnt/hostile
STATE=$SCRATCH/nlm-state
KEY=$SCRATCH/handle.key
# shellcheck disable=SC2034
SIG=$SCRATCH/sig
CAPDIR=$SCRATCH/cap
CAPTURE=$CAPDIR/hostile.pcap
LOCKD_PORT=4045
NLM_PORT=4046
NSM_PORT=4047
EXPORTS=$SCRATCH/exports
mkdir -p "$SIG" "$EXPORT_A" "$EXPORT_B" "$CAPDIR"

# ---- the intruder's address, on the same link as the client's ----
ip addr add "$INTRUDER_ADDR/24" dev "${RPCRDMA_NETDEV:-rr0}" ||
	fail "cannot add $INTRUDER_ADDR to ${RPCRDMA_NETDEV:-rr0}"

# ---- rpcbind, rpc.statd, lockd on a fixed port, the NAT rule (lib.sh) ----
nlm_testbed "$LOCKD_PORT" "$NLM_PORT"

cat >"$EXPORTS" <<EXP
$EXPORT_A $CLIENT_ADDR(rw,no_root_squash,insecure,fsid=1) $INTRUDER_ADDR(rw,no_root_squash,insecure)
$EXPORT_B $CLIENT_ADDR(rw,no_root_squash,insecure,fsid=2)
EXP

SERVER_ARGS=(--handle-key "$KEY" --state-dir "$STATE" --nlm-port "$NLM_PORT"
	     --nsm-port "$NSM_PORT" --grace 0 --capture "$CAPTURE" -v)
rnfsd_start_exports "$NFSD" "$EXPORTS" "$SCRATCH/rnfsd.log" "${SERVER_ARGS[@]}"

opts=vers=3,proto=rdma,port=$NFS_RDMA_PORT,mountport=$MOUNT_PORT,mountproto=tcp
mkdir -p "$MNT"
timeout -k 10 120 mount -t nfs -o "$opts" "$SERVER_ADDR:$EXPORT_A" "$MNT" ||
	fail "mount -o $opts (with locking)"
at_exit "kumount '$MNT'"
grep -q " $MNT nfs .*nolock" /proc/mounts && fail "the mount has nolock: $(grep " $MNT " /proc/mounts)"
log "mounted with locking: $(grep " $MNT " /proc/mounts)"

# ---- the parts ----
parts=()
for f in "$VM_TEST_DIR"/hostile/*.sh; do
	[[ -e $f ]] || continue
	p=$(basename "$f" .sh)
	if [[ -n ${HOSTILE_PARTS:-} ]] && [[ " $HOSTILE_PARTS " != *" $p "* ]]; then
		continue
	fi
	parts+=("$p")
done
((${#parts[@]})) || fail "no part of hostile-peers to run (HOSTILE_PARTS='${HOSTILE_PARTS:-}')"
for p in "${parts[@]}"; do
	log "---- part $p ----"
	# shellcheck source=/dev/null
	. "$VM_TEST_DIR/hostile/$p.sh"
	kill -0 "$RNFSD_PID" 2>/dev/null || fail "rpcrdma-nfsd died during part $p"
	pass "part $p"
done
