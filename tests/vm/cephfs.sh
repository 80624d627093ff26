#!/usr/bin/env bash
# cephfs: make check's one Ceph entry (vm/cephfs): the four Ceph scripts one
# after another in ONE guest on ONE single-node cluster, rather than four
# guests each starting its own cluster (a boot and 30-40 s of cluster start
# each, 90-135 s under load).
#   - scripts/ceph-up starts the cluster once (lib.sh's ceph_up);
#   - then, in this order, each a process of its own with its own checks:
#       ceph-up              the cluster, data through the kernel client and
#                            ceph-fuse, scripts/ceph-up again (idempotence)
#       cephfs-gateway       the workout over NFSv3 and NFSv4.1 through the
#                            cephfs backend
#       cephfs-two-gateways  two gateways on one CephFS (data, handles, NLM
#                            locks, grace across gateways, a delegation)
#       cephfs-faults        the MDS, the OSD and the gateway killed under a
#                            copy (last: it stops and restarts daemons)
#     each finds the cluster up (lib.sh's ceph_up: scripts/ceph-up says
#     "already up", CEPH_SHARED=1) and leaves it up;
#   - between two of them the file system is emptied through a kernel
#     CephFS mount and the scratch directory (but the cluster's) removed, so
#     each starts as on a cluster of its own; when a script failed, or the
#     cluster is not up afterwards, the cluster is stopped and started again
#     (a killed gateway's Ceph session could otherwise hold caps the next
#     one waits for);
#   - at the end scripts/ceph-up --down: daemons gone, files removed (the
#     last check of ceph-up.sh, which leaves a cluster it did not start up).
# Each script's result is printed by name ("cephfs: SCENARIO PASS|FAIL|SKIP
# in N s") and again in a summary; the test fails when one failed, is
# skipped (77) when none failed and one skipped (a missing cephfs backend),
# and passes only when all four passed.
# Each script still runs alone in a guest of its own (scripts/vm run --
# tests/vm/cephfs-faults.sh): it then starts and stops its own cluster.
# CEPHFS_SCENARIOS="ceph-up cephfs-faults" (names without .sh) runs only
# those, in the order given.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
vm_require_guest

read -ra SCENARIOS <<<"${CEPHFS_SCENARIOS:-ceph-up cephfs-gateway cephfs-two-gateways cephfs-faults}"
# Each script's bound (about its harness timeout when it ran alone, more for
# the gateway: 750-850 s at load 10-18):
# it is SIGTERMed (its EXIT trap cleans up) and then SIGKILLed 30 s later.
declare -A LIMIT=([ceph-up]=480 [cephfs-gateway]=1000 [cephfs-two-gateways]=600 [cephfs-faults]=900)
CLEAN=/mnt/cephfs-between

for s in "${SCENARIOS[@]}"; do
	[[ -f "$VM_TEST_DIR/$s.sh" && -n "${LIMIT[$s]:-}" ]] || fail "no Ceph scenario '$s' (${!LIMIT[*]})"
done

ceph_up
log "cluster up in $CEPH_UP_SECS s, shared by: ${SCENARIOS[*]}"

# between: make the next scenario's start look like a fresh cluster's
# (RC: the last scenario's status).
between() {
	local rc=$1
	if ((rc != 0 && rc != 77)) ||
	   ! "$RPCRDMA_CHECKOUT/scripts/ceph-up" --status -q --base "$CEPH_BASE"; then
		log "cluster restarted (the last scenario failed or left it down)"
		timeout -k 5 60 "$RPCRDMA_CHECKOUT/scripts/ceph-up" --down --base "$CEPH_BASE" || true
		ceph_up
	else
		ceph_kmount "$CLEAN"
		bounded 300 "empty CephFS" find "$CLEAN" -mindepth 1 -maxdepth 1 -exec rm -rf {} +
		kumount "$CLEAN"
	fi
	find "$SCRATCH" -mindepth 1 -maxdepth 1 ! -name ceph -exec rm -rf {} +
}

results=() nfail=0 nskip=0 i=0
for s in "${SCENARIOS[@]}"; do
	echo "==== cephfs: $s ===="
	t=$SECONDS rc=0
	timeout -k 30 "${LIMIT[$s]}" bash "$VM_TEST_DIR/$s.sh" || rc=$?
	case $rc in
	0) r=PASS ;;
	77) r=SKIP; nskip=$((nskip + 1)) ;;
	124 | 137) r="FAIL (timed out after ${LIMIT[$s]} s)"; nfail=$((nfail + 1)) ;;
	*) r="FAIL (status $rc)"; nfail=$((nfail + 1)) ;;
	esac
	results+=("$s $r in $((SECONDS - t)) s")
	log "cephfs: $s $r in $((SECONDS - t)) s"
	i=$((i + 1))
	if ((i < ${#SCENARIOS[@]})); then
		between "$rc"
	fi
done

# the cluster as a single test leaves it: gone (ceph-up.sh's last check)
kumount "$CLEAN"
ceph_down_check

echo "==== cephfs: ${#SCENARIOS[@]} scenarios on one cluster (start $CEPH_UP_SECS s) ===="
printf '  %s\n' "${results[@]}"
((nfail == 0)) || fail "$nfail of ${#SCENARIOS[@]} Ceph scenarios failed"
((nskip == 0)) || skip "$nskip of ${#SCENARIOS[@]} Ceph scenarios skipped (none failed)"
pass "all ${#SCENARIOS[@]} Ceph scenarios passed on one cluster"
