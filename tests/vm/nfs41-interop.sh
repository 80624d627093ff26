#!/usr/bin/env bash
# nfs41-interop: the Linux kernel NFSv4.1/RDMA client against our server
# (rpcrdma-nfsd --no-root-squash --stats --threads 4: NFSv4.1 is served by
# default), mounted with
# -o vers=4.1,proto=rdma,port=20049 (issue 16), the kernel-client-interop
# workout (tests/vm/workout.sh, without the odd block sizes) compared byte
# for byte:
#   - files of 0 B to 16 MiB written with cp and dd oflag=direct, compared
#     with the server's copies; read back after a remount with cat and
#     dd iflag=direct;
#   - a directory of 2000 entries listed (several READDIR calls, cookies),
#     rm -rf;
#   - a symlink with a 1000-byte target (READLINK after a remount);
#   - mkdir, rmdir (ENOTEMPTY), rename (file, across directories, directory,
#     over an existing file), O_EXCL create, hard link, chmod, truncate
#     (grow, shrink, 0), rm;
#   - flock(1) locks: contended on the client and against a lock taken on
#     the server's file (both ways: NFS4ERR_DENIED), a blocked waiter
#     granted after the release;
#   - cp -a of a small tree in and out (diff -r; modes, owner, mtimes,
#     symlinks, sha256 on the client and the server);
# the start-up log gives the NFSv4.1 table sizes taken from --memory (at
# least 128 clients, as many sessions, 32 opens each);
# then unmount, and mount once more without vers= (the client's default
# tries 4.2 first and must settle on 4.1), with an NFSv3 mount of the same
# export beside it (each reads what the other wrote); the server's pools
# are back at their baseline, it answered NFS4ERR_DENIED at least once, and
# SIGTERM exits with status 0; the client answered the CB_NULL probes of
# its sessions' back channels (bc_replies > 0, no backchannel timeout);
# COMPOUNDs were served on the transport thread and others sent from there
# to a worker (the exit's "nfs4 transport thread" line).  Every NFSv4 mount must be NFSv4.1 (vers=4.1
# in /proc/mounts) over RDMA.  Last, restarted with --no-nfs4, a mount
# without vers= falls back to NFSv3 and reads the same file.
# Registered twice: vm/nfs41-interop over RDMA, and vm/nfs41-interop-tcp
# with RPCRDMA_NFS_PROTO=tcp, every mount over TCP (port 2049).  Over TCP
# the back channel is the session's TCP connection (RFC 8881 2.10.3.1):
# CREATE_SESSION answers with CONN_BACK_CHAN, the CB_NULL probe goes out
# on that connection as an ONC RPC call and the kernel client answers it
# there (bc_replies > 0; every mount is over TCP, so every backchannel
# call went over TCP).
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
. "$(dirname "${BASH_SOURCE[0]}")/workout.sh"
vm_require_guest
umask 022

NFSD=$(rpcrdma_bin rpcrdma-nfsd)
EXPORT=$SCRATCH/export
MNT=/mnt/x
SLOG=$SCRATCH/rpcrdma-nfsd.log
OPTS=vers=4.1,$(nfs_proto_opts)

mountstats_dump() {
	echo "---- /proc/self/mountstats for $1 ----"
	awk -v m="$1" '$1 == "device" { on = ($5 == m) } on' /proc/self/mountstats
}
on_failure "mountstats_dump '$MNT'"
on_failure "echo '---- dmesg (last 40 lines) ----'; dmesg | tail -n 40"

mount_export() {
	mkdir -p "$MNT"
	vm_kmod nfsv4 rpcrdma
	timeout -k 10 120 mount -t nfs -o "$OPTS" "$SERVER_ADDR:$EXPORT" "$MNT" ||
		fail "mount -t nfs -o $OPTS $SERVER_ADDR:$EXPORT $MNT"
	at_exit "kumount '$MNT'"
	local line xprt
	line=$(awk -v m="$MNT" '$2 == m' /proc/mounts)
	[[ "$line" == *" nfs4 "*"vers=4.1"* ]] || fail "mount $MNT is not NFSv4.1: '$line'"
	xprt=$(mountstats_xprt "$MNT")
	[[ "$xprt" == "xprt:"*"$NFS_PROTO"* ]] || fail "mount $MNT is not over $NFS_PROTO: '$xprt'"
	log "mounted: $line"
}

remount() {
	kumount "$MNT"
	drop_caches
	mount_export
}

ops_summary() {
	awk -v m="$MNT" '$1 == "device" { on = ($5 == m); next }
		on && /^[ \t]+[A-Z_]+: [0-9]+ / && $2 > 0 { printf "%s%s", sep, $1 $2; sep = " " }
		END { print "" }' /proc/self/mountstats
}

# ---------------------------------------------------------------- setup
# the workout's phases (tests/vm/workout.sh)
WK_MNT=$MNT WK_EXPORT=$EXPORT WK_LOCAL=/tmp WK_ODD_BS=0 WK_READDIR_OP=READDIR
wk_setup
mkdir -p "$EXPORT"
rnfsd_start "$NFSD" "$EXPORT" "$SLOG" --no-root-squash --stats --threads 4 \
	--handle-key "$SCRATCH/handle.key"
# the state tables' sizes, from --memory (issue 33): at least 128 clients
line=$(grep -m1 '^rpcrdma-nfsd: nfs4: [0-9]* clients, ' "$SLOG")
[[ $line =~ nfs4:\ ([0-9]+)\ clients,\ ([0-9]+)\ sessions,\ ([0-9]+)\ opens.*from\ --memory ]] &&
	(( BASH_REMATCH[1] >= 128 && BASH_REMATCH[2] == BASH_REMATCH[1] &&
	   BASH_REMATCH[3] == 32 * BASH_REMATCH[1] )) ||
	fail "no start-up line with the NFSv4.1 table sizes from --memory: ${line:-none}"
pass "$line"

# ---------------------------------------------------------------- 1. mount, write
mount_export
pass "kernel client mounted $SERVER_ADDR:$EXPORT with NFSv4.1 over $NFS_PROTO"
bounded 30 "ls of the empty export" ls -la "$MNT" >/dev/null
wk_write
log "ops: $(ops_summary)"

# ---------------------------------------------------------------- 2. read back
remount
wk_read
log "ops: $(ops_summary)"

# ---------------------------------------------------------------- 3. 2000 entries
wk_readdir_prepare
wk_readdir

# ---------------------------------------------------------------- 4., 5. symlink, namespace
wk_namespace

# ---------------------------------------------------------------- 5b. locks
# flock(1) on an NFS mount is a whole-file POSIX lock: LOCK/LOCKU/LOCKT on
# the server, which holds it as an OFD lock (conflicts with local locks).
LF=$MNT/lockfile
bounded 30 "create lockfile" sh -c "printf x >'$LF'"
bounded 30 "flock -x lockfile (uncontended)" flock -x "$LF" true
rm -f /tmp/held /tmp/release
flock -x "$LF" -c 'touch /tmp/held; while [ ! -e /tmp/release ]; do sleep 0.1; done' &
holder=$!
for ((i = 0; i < 300; i++)); do [[ -e /tmp/held ]] && break; sleep 0.1; done
[[ -e /tmp/held ]] || fail "the lock holder did not get lockfile within 30 s"
if timeout -k 10 30 flock -n -x "$LF" true; then
	fail "flock -n -x lockfile succeeded while another process holds it"
fi
python3 - "$EXPORT/lockfile" <<'PY' || fail "a lock on the server's file did not conflict with the client's lock"
import errno, fcntl, sys
f = open(sys.argv[1], "r+")
try:
    fcntl.lockf(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
except OSError as e:
    sys.exit(0 if e.errno in (errno.EAGAIN, errno.EACCES) else 1)
sys.exit(1)
PY
flock -x "$LF" -c 'touch /tmp/waiter-got-it' &
waiter=$!
touch /tmp/release
wait "$holder" || fail "the lock holder failed"
for ((i = 0; i < 600; i++)); do [[ -e /tmp/waiter-got-it ]] && break; sleep 0.1; done
[[ -e /tmp/waiter-got-it ]] || fail "a blocked flock did not get lockfile within 60 s of its release"
wait "$waiter" || fail "the blocked flock failed"
bounded 30 "flock -n -x lockfile after release" flock -n -x "$LF" true
# The client settles conflicts between its own processes before asking the
# server; a lock taken on the server's side makes the server answer
# NFS4ERR_DENIED (counted in its statistics).
rm -f /tmp/srv-held /tmp/srv-release
python3 - "$EXPORT/lockfile" <<'PY' &
import fcntl, os, sys, time
f = open(sys.argv[1], "r+")
fcntl.lockf(f, fcntl.LOCK_EX)
open("/tmp/srv-held", "w").close()
while not os.path.exists("/tmp/srv-release"):
    time.sleep(0.1)
PY
srvholder=$!
for ((i = 0; i < 300; i++)); do [[ -e /tmp/srv-held ]] && break; sleep 0.1; done
[[ -e /tmp/srv-held ]] || fail "the server-side lock holder did not start within 30 s"
if timeout -k 10 30 flock -n -x "$LF" true; then
	fail "flock -n -x lockfile succeeded while the server's file is locked"
fi
touch /tmp/srv-release
wait "$srvholder" || fail "the server-side lock holder failed"
bounded 30 "flock -n -x lockfile after the server's lock went" flock -n -x "$LF" true
bounded 30 "rm lockfile" rm "$LF"
pass "locks: a held lock refuses another process (client and server side), a blocked waiter gets it after release, a server-side lock refuses the client"

# ---------------------------------------------------------------- 6. cp -a in
wk_tree_in

# ---------------------------------------------------------------- 7. after a remount
remount
wk_tree_out
wk_rm
log "ops: $(ops_summary)"
kumount "$MNT"
pass "unmounted"

# ---------------------------------------------------------------- 8. no vers=
# The client's default: NFSv4.2 first (the server answers
# NFS4ERR_MINOR_VERS_MISMATCH), then 4.1, which must be what it ends on.
OPTS=$(nfs_proto_opts)
mount_export
compare_files "$WK_LOCAL/trunc-expect" "$MNT/trunc"
pass "a mount without vers= ends on NFSv4.1 over $NFS_PROTO and reads back a file"

# NFSv3 beside it on the same export: one server, one set of handles and
# caches; what one version writes the other reads.
kmount "$SERVER_ADDR:$EXPORT" /mnt/y "mountport=$MOUNT_PORT,mountproto=tcp"
bounded 30 "write through v3" sh -c "printf 'from v3' >/mnt/y/by-v3"
[[ "$(timeout -k 10 30 cat "$MNT/by-v3")" == "from v3" ]] || fail "the v4 mount does not read what v3 wrote"
bounded 30 "write through v4" sh -c "printf 'from v4' >'$MNT/by-v4'"
[[ "$(timeout -k 10 30 cat /mnt/y/by-v4)" == "from v4" ]] || fail "the v3 mount does not read what v4 wrote"
compare_files "$WK_LOCAL/trunc-expect" /mnt/y/trunc
kumount /mnt/y
kumount "$MNT"
pass "NFSv3 and NFSv4.1 mounts of the same export side by side read what the other wrote"

# ---------------------------------------------------------------- 9. server exit
rnfsd_term 30
rnfsd_check_final_stats
grep '^{"connections"' "$RNFSD_LOG" | tail -n 1 | grep -q '"NFS4ERR_DENIED":[1-9]' ||
	fail "the server never answered NFS4ERR_DENIED (the server-side lock conflict)"
pass "the server answered LOCK with NFS4ERR_DENIED for the server-side conflict"
# The back channel (RFC 8881 18.36; RFC 8167 over RDMA): every v4.1
# session was created with CONN_BACK_CHAN and probed with CB_NULL over its
# connection (RDMA, or TCP: every mount of the TCP run is over TCP); the
# kernel client answered each probe.
v=$(rnfsd_stat bc_replies)
((${v:-0} >= 1)) || fail "no backchannel reply: the kernel client never answered CB_NULL over $NFS_PROTO (bc_replies '${v}')"
[[ "$(rnfsd_stat bc_timeouts)" == 0 ]] || fail "backchannel calls timed out: $(rnfsd_stat bc_timeouts)"
if [[ $NFS_PROTO == tcp ]]; then
	(($(rnfsd_stat tcp_calls) > 0)) || fail "server counter tcp_calls is 0: nothing came over TCP"
fi
pass "the kernel client answered the server's CB_NULL probes over the $NFS_PROTO back channel ($v replies, no timeout)"
# The transport thread (docs/nfs4.md "The transport thread"): a root
# client of a --no-root-squash export served by a root server, so the
# COMPOUNDs of GETATTR, LOOKUP, ACCESS... ran there, the others (OPEN,
# WRITE, READ...) on a worker, and the workout above passed with both.
line=$(grep -m1 '^rpcrdma-nfsd: nfs4 transport thread: ' "$RNFSD_LOG") ||
	fail "no 'nfs4 transport thread' line at exit"
re='^rpcrdma-nfsd: nfs4 transport thread: ([0-9]+) COMPOUNDs served there, ([0-9]+) sent to a worker$'
[[ "$line" =~ $re ]] || fail "the 'nfs4 transport thread' line does not read as expected: '$line'"
n4calls=${BASH_REMATCH[1]} n4defers=${BASH_REMATCH[2]}
((${n4calls:-0} > 0)) || fail "no COMPOUND served on the transport thread: '$line'"
((${n4defers:-0} > 0)) || fail "no COMPOUND sent from the transport thread to a worker: '$line'"
pass "NFSv4.1 COMPOUNDs served on the transport thread: $n4calls, sent to a worker: $n4defers"

# ---------------------------------------------------------------- 10. --no-nfs4
# Version 4 not registered: the client's v4 attempts get PROG_MISMATCH and
# a mount without vers= falls back to NFSv3 (MOUNT on its TCP port).
rnfsd_start "$NFSD" "$EXPORT" "$SLOG.v3" --no-nfs4 --no-root-squash \
	--handle-key "$SCRATCH/handle.key"
grep -q '^rpcrdma-nfsd: serving .*; NFSv3)$' "$SLOG.v3" ||
	fail "--no-nfs4: the serving line does not say NFSv3 only: $(grep -m1 '^rpcrdma-nfsd: serving' "$SLOG.v3")"
mkdir -p /mnt/z
o=$(nfs_proto_opts),mountport=$MOUNT_PORT,mountproto=tcp,nolock
timeout -k 10 120 mount -t nfs -o "$o" "$SERVER_ADDR:$EXPORT" /mnt/z || fail "mount -o $o (no vers=) with --no-nfs4"
at_exit "kumount /mnt/z"
line=$(awk '$2 == "/mnt/z"' /proc/mounts)
[[ "$line" == *" nfs "*"vers=3"* ]] || fail "--no-nfs4: a mount without vers= is not NFSv3: '$line'"
compare_files /tmp/trunc-expect /mnt/z/trunc
kumount /mnt/z
rnfsd_term 30
pass "with --no-nfs4 a mount without vers= fell back to NFSv3 and read the file"
