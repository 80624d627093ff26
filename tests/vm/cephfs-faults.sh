#!/usr/bin/env bash
# cephfs-faults: rpcrdma-nfsd's cephfs backend (issue 35, "Failures") under
# faults of the cluster and of the gateway, in one guest with a single-node
# cluster (scripts/ceph-up):
#   - an unreachable cluster at start: an export whose ceph.conf names a
#     monitor nobody listens on (127.0.0.1, ports 3390/6799):
#     rpcrdma-nfsd refuses to start, exits non-zero, and its message names
#     the monitors ("cephfs: cannot mount file system cephfs as
#     client.admin: the cluster (monitors [...]) did not answer: ...",
#     docs/cephfs.md "Failures"; run alongside the parts below, on ports
#     of its own, and checked after the MDS part);
#   - then one gateway serves `cephfs://admin@cephfs/` and the kernel client
#     mounts it with NFSv3 over RDMA (hard, the default).  A copy writes a
#     8 MiB + 3 B file of random bytes into the export in 256 KiB pieces,
#     each write(2) followed by fsync(2) (so every piece is a WRITE and a
#     COMMIT the gateway acknowledged: stable), 0.3 s apart, and records
#     after each fsync how many bytes are stable.  While it runs:
#       1. the MDS is SIGKILLed and started again (scripts/ceph-up --stop /
#          --start mds.a) once 512 KiB are stable;
#       2. the OSD is stopped (SIGTERM: memstore saves its data) and started
#          again; while it is down the copy does not advance by more than
#          the piece in flight (a COMMIT needs the OSD);
#       3. the gateway is SIGKILLed and started again with the same options
#          (same handle key and state directory);
#     each time the copy finishes and the file, read back through a new
#     mount after the caches were dropped, has the source's md5.
# Each part's time is logged, and the longest wait for one piece (the
# stall the fault caused).  Skips (77) when rpcrdma-nfsd was built without
# the cephfs backend or when Ceph is not installed.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
vm_require_guest
umask 022

NFSD=$(rpcrdma_bin rpcrdma-nfsd)
ceph_gateway_check "$NFSD"
command -v python3 >/dev/null || skip "python3 is not installed"

MNT=/mnt/nfs
EXPORTS=$SCRATCH/exports
KEY=$SCRATCH/handle.key
STATE=$SCRATCH/state
SRC=$SCRATCH/src.bin
MIB=1048576
SIZE=$((8 * MIB + 3))
MOPTS=mountport=$MOUNT_PORT,mountproto=tcp,hard

mountstats_dump() {
	echo "---- /proc/self/mountstats for $1 ----"
	awk -v m="$1" '$1 == "device" { on = ($5 == m) } on' /proc/self/mountstats
}
on_failure "mountstats_dump '$MNT'"

ceph_up
head -c "$SIZE" /dev/urandom >"$SRC"
SUM=$(md5sum <"$SRC")

# ---------------------------------------------------------------- unreachable
# started in the background (its own ports and state directory): it waits
# out client_mount_timeout (10 s) while the gateway and the MDS part run,
# and is checked after the MDS part
BAD=$SCRATCH/bad-ceph
mkdir -p "$BAD"
MONS='[v2:127.0.0.1:3390,v1:127.0.0.1:6799]'
printf '[global]\nmon host = %s\nauth client required = cephx\n[client]\nkeyring = /etc/ceph/ceph.client.admin.keyring\n' \
	"$MONS" >"$BAD/ceph.conf"
printf 'cephfs://admin@cephfs/ -backend=cephfs:conf=%s 192.0.2.0/24(rw,fsid=7)\n' "$BAD/ceph.conf" >"$SCRATCH/bad-exports"
(
	t0=$SECONDS rc=0
	timeout -k 10 120 "$NFSD" --exports "$SCRATCH/bad-exports" --listen "$SERVER_ADDR" \
		--port $((NFS_RDMA_PORT + 10)) --mount-port $((MOUNT_PORT + 10)) --handle-key "$KEY" \
		--state-dir "$SCRATCH/bad-state" --control none >"$SCRATCH/bad.log" 2>&1 || rc=$?
	echo "$rc $((SECONDS - t0))" >"$SCRATCH/bad.rc"
) &
BAD_PID=$!
at_exit "kill $BAD_PID 2>/dev/null"

# bad_check: the unreachable cluster's refusal, once its start has ended
bad_check() {
	local rc t_bad
	wait "$BAD_PID" || true
	read -r rc t_bad <"$SCRATCH/bad.rc" || fail "the unreachable-cluster start left no status"
	log "rpcrdma-nfsd with an unreachable cluster: status $rc after $t_bad s: $(tr '\n' '|' <"$SCRATCH/bad.log")"
	((rc != 0 && rc != 124 && rc != 137)) || fail "rpcrdma-nfsd with an unreachable cluster: status $rc, expected a refusal"
	grep -qF "cephfs: cannot mount file system cephfs as client.admin: the cluster (monitors $MONS) did not answer" "$SCRATCH/bad.log" ||
		fail "no message naming the monitors $MONS: $(cat "$SCRATCH/bad.log")"
	grep -q '^rpcrdma-nfsd: serving' "$SCRATCH/bad.log" && fail "rpcrdma-nfsd said it serves"
	pass "an unreachable cluster at start: rpcrdma-nfsd exits $rc after $t_bad s, naming the monitors $MONS"
}

# ---------------------------------------------------------------- the gateway
printf '%s\n' 'cephfs://admin@cephfs/ 192.0.2.0/24(rw,no_root_squash,fsid=7)' >"$EXPORTS"
GW_ARGS=(--handle-key "$KEY" --state-dir "$STATE" --grace 10 --threads 4 --stats --control none)
rnfsd_start_exports "$NFSD" "$EXPORTS" "$SCRATCH/gw.log.0" "${GW_ARGS[@]}"
kmount "$SERVER_ADDR:/" "$MNT" "$MOPTS"
[[ "$(mountstats_xprt "$MNT")" == "xprt:"*"rdma"* ]] || fail "mount $MNT is not over RDMA"

# copy NAME: start the copy of SRC to MNT/NAME in the background (COPY_PID);
# its stable byte count is in SCRATCH/NAME.stable after each fsync.
copy() {
	local name=$1
	: >"$SCRATCH/$name.stable"
	timeout -k 10 400 python3 - "$SRC" "$MNT/$name" "$SCRATCH/$name.stable" <<'PYEOF' &
import os, sys, time
src, dst, prog = sys.argv[1:4]
piece = 256 << 10
with open(src, "rb") as s:
    fd = os.open(dst, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    done = 0
    last = time.monotonic()
    gap = 0.0
    while True:
        b = s.read(piece)
        if not b:
            break
        n = 0
        while n < len(b):
            n += os.write(fd, b[n:])
        os.fsync(fd)
        gap = max(gap, time.monotonic() - last)
        done += len(b)
        with open(prog + ".tmp", "w") as p:
            p.write("%d\n" % done)
        os.replace(prog + ".tmp", prog)
        time.sleep(0.3)
        last = time.monotonic()
    os.close(fd)
with open(prog + ".gap", "w") as p:
    p.write("%.1f\n" % gap)
PYEOF
	COPY_PID=$!
}
stable() { local v; read -r v <"$SCRATCH/$1.stable" 2>/dev/null || v=0; echo "${v:-0}"; }
# wait_stable NAME BYTES: wait (300 s at most) until BYTES of the copy are stable
wait_stable() {
	local i
	for ((i = 0; i < 3000; i++)); do
		(($(stable "$1") >= $2)) && return 0
		kill -0 "$COPY_PID" 2>/dev/null || fail "the copy $1 ended before $2 bytes were stable"
		sleep 0.1
	done
	fail "the copy $1: $2 bytes not stable within 300 s ($(stable "$1"))"
}
# finish NAME WHAT: wait for the copy, check its md5 through a fresh mount
finish() {
	local name=$1 what=$2 rc=0 t=$SECONDS got
	wait "$COPY_PID" || rc=$?
	((rc == 0)) || fail "$what: the copy failed (status $rc, $(stable "$name") bytes stable)"
	log "$what: the copy finished $((SECONDS - t)) s after the fault was over; the longest wait for one piece (write + fsync) $(cat "$SCRATCH/$name.stable.gap") s"
	kumount "$MNT"
	drop_caches
	kmount "$SERVER_ADDR:/" "$MNT" "$MOPTS"
	got=$(timeout -k 10 120 md5sum <"$MNT/$name") || fail "md5sum $MNT/$name"
	[[ "$got" == "$SUM" ]] || fail "$what: $name read back has md5 ${got%% *}, the source ${SUM%% *}"
	pass "$what: the copy finished and reads back byte-exact (md5 ${SUM%% *})"
}
jukebox() { grep '^{"connections"' "$RNFSD_LOG" | tail -n 1 | grep -o '"NFS3ERR_JUKEBOX":[0-9]*' || echo none; }

# ---------------------------------------------------------------- 1. the MDS
t0=$SECONDS
active0=$(ceph_clog_count 'fsmap cephfs:1 \{0=a=up:active\}')
copy mds.bin
wait_stable mds.bin $((MIB / 2))
ceph_stop mds.a
s0=$(stable mds.bin)
log "MDS killed with $s0 bytes stable"
sleep 3
ceph_start mds.a
kill -0 "$COPY_PID" 2>/dev/null || fail "the copy ended before the MDS was back"
# the MDS is active again (through replay and reconnect)
for ((i = 0; i < 1200; i++)); do
	(($(ceph_clog_count 'fsmap cephfs:1 \{0=a=up:active\}') > active0)) && break
	sleep 0.2
done
(($(ceph_clog_count 'fsmap cephfs:1 \{0=a=up:active\}') > active0)) ||
	fail "the restarted MDS is not up:active after 240 s: $(grep -o 'fsmap .*' "$CEPH_BASE/log/cluster.log" | tail -n 3 | paste -sd ';' -)"
log "MDS up:active again $((SECONDS - t0)) s into the part; states seen: $(grep -o 'fsmap cephfs:1 {0=a=up:[a-z]*}' "$CEPH_BASE/log/cluster.log" | tail -n 5 | sed 's/.*up://; s/}//' | paste -sd ' ' -)"
finish mds.bin "MDS restarted mid-copy"
log "MDS part: $((SECONDS - t0)) s"
bad_check

# ---------------------------------------------------------------- 2. the OSD
t0=$SECONDS
copy osd.bin
wait_stable osd.bin $((MIB / 2))
ceph_stop osd.0
s0=$(stable osd.bin)
sleep 8
s1=$(stable osd.bin)
log "OSD stopped with $s0 bytes stable; 8 s later $s1"
((s1 - s0 <= 256 * 1024)) || fail "the copy went on by $((s1 - s0)) bytes while the OSD was down (its COMMITs cannot be stable)"
kill -0 "$COPY_PID" 2>/dev/null || fail "the copy ended while the OSD was down"
ceph_start osd.0
finish osd.bin "OSD stopped and started mid-copy"
log "OSD part: $((SECONDS - t0)) s; gateway's NFS3ERR_JUKEBOX so far: $(rnfsd_counters_now; jukebox)"

# ---------------------------------------------------------------- 3. the gateway
t0=$SECONDS
copy gw.bin
wait_stable gw.bin $((MIB / 2))
kill -KILL "$RNFSD_PID"
wait "$RNFSD_PID" 2>/dev/null || true
log "gateway SIGKILLed with $(stable gw.bin) bytes stable"
sleep 2
kill -0 "$COPY_PID" 2>/dev/null || fail "the copy ended while the gateway was down"
t1=$SECONDS
rnfsd_start_exports "$NFSD" "$EXPORTS" "$SCRATCH/gw.log.1" "${GW_ARGS[@]}"
log "gateway serving again $((SECONDS - t1)) s after its start"
finish gw.bin "gateway SIGKILLed and restarted mid-copy"
log "gateway part: $((SECONDS - t0)) s"

kumount "$MNT"
rnfsd_term 60
