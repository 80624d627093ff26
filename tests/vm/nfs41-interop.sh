#!/usr/bin/env bash
# nfs41-interop: the Linux kernel NFSv4.1/RDMA client against our server
# (rpcrdma-nfsd --no-root-squash --stats --threads 4: NFSv4.1 is served by
# default), mounted with
# -o vers=4.1,proto=rdma,port=20049 (issue 16), the kernel-client-interop
# workout compared byte for byte:
#   - files of 0 B to 16 MiB written with cp and dd oflag=direct, compared
#     with the server's copies; read back after a remount with cat and
#     dd iflag=direct;
#   - a directory of 2000 entries listed (READDIR with cookies), rm -rf;
#   - a symlink with a 1000-byte target (READLINK after a remount);
#   - mkdir, rmdir (ENOTEMPTY), rename (file, across directories, directory,
#     over an existing file), O_EXCL create, hard link, chmod, truncate
#     (grow, shrink, 0), rm;
#   - flock(1) locks: contended on the client and against a lock taken on
#     the server's file (both ways: NFS4ERR_DENIED), a blocked waiter
#     granted after the release;
#   - cp -a of a small tree in and out (modes, owner, mtimes, symlinks);
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
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
vm_require_guest
umask 022

NFSD=$(rpcrdma_bin rpcrdma-nfsd)
EXPORT=$SCRATCH/export
ORIG=/tmp/orig
BACK=/tmp/back
MNT=/mnt/x
SLOG=$SCRATCH/rpcrdma-nfsd.log
SIZES=(0 1 4095 4097 65537 1048579 16777216)
OPTS=vers=4.1,proto=rdma,port=$NFS_RDMA_PORT

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
	[[ "$xprt" == "xprt:"*"rdma"* ]] || fail "mount $MNT is not over RDMA: '$xprt'"
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

size_of() { timeout -k 10 30 stat -c %s -- "$1" || fail "stat $1"; }

# ---------------------------------------------------------------- setup
mkdir -p "$ORIG" "$BACK"
make_test_files "$ORIG"
head -c 65537 /dev/urandom >"$ORIG/65537.bin"
mkdir -p "$EXPORT"
rnfsd_start "$NFSD" "$EXPORT" "$SLOG" --no-root-squash --stats --threads 4 \
	--handle-key "$SCRATCH/handle.key"

# ---------------------------------------------------------------- 1. mount, write
mount_export
pass "kernel client mounted $SERVER_ADDR:$EXPORT with NFSv4.1 over RDMA"
bounded 30 "ls of the empty export" ls -la "$MNT" >/dev/null
for s in "${SIZES[@]}"; do
	bounded 120 "cp $s.bin to the mount" cp "$ORIG/$s.bin" "$MNT/cp-$s.bin"
	bounded 120 "dd oflag=direct bs=1M of $s.bin to the mount" \
		dd if="$ORIG/$s.bin" of="$MNT/d1m-$s.bin" bs=1M oflag=direct status=none
done
bounded 120 "sync after writing" sync
for s in "${SIZES[@]}"; do
	for v in cp d1m; do
		compare_files "$ORIG/$s.bin" "$EXPORT/$v-$s.bin"
	done
done
log "ops: $(ops_summary)"
pass "wrote ${#SIZES[@]} files (0 B to 16 MiB) with cp and dd oflag=direct: the server's copies match"

# ---------------------------------------------------------------- 2. read back
remount
for s in "${SIZES[@]}"; do
	[[ "$(size_of "$MNT/cp-$s.bin")" == "$s" ]] ||
		fail "$MNT/cp-$s.bin has size $(size_of "$MNT/cp-$s.bin") on the client, expected $s"
	compare_files "$ORIG/$s.bin" "$MNT/cp-$s.bin"
	rm -f "$BACK/"*
	bounded 120 "dd iflag=direct bs=1M of d1m-$s.bin from the mount" \
		dd if="$MNT/d1m-$s.bin" of="$BACK/d1m-$s.bin" bs=1M iflag=direct status=none
	compare_files "$ORIG/$s.bin" "$BACK/d1m-$s.bin"
done
rm -f "$BACK/"*
log "ops: $(ops_summary)"
pass "read back after remount (cached read and dd iflag=direct): all match the originals"

# ---------------------------------------------------------------- 3. 2000 entries
mkdir "$EXPORT/many"
for ((i = 0; i < 2000; i++)); do
	printf -v name 'entry-%04d-with-a-longer-name-to-fill-the-reply' "$i"
	: >"$EXPORT/many/$name"
done
printf 'abc' >"$EXPORT/many/entry-1234-with-a-longer-name-to-fill-the-reply"
listing=$(timeout -k 10 120 ls -l "$MNT/many") || fail "ls -l $MNT/many failed or timed out"
n=$(awk 'NR > 1' <<<"$listing" | wc -l)
((n == 2000)) || fail "ls -l of a 2000-entry directory shows $n entries"
awk '$NF == "entry-1234-with-a-longer-name-to-fill-the-reply" && $5 == 3 { f = 1 } END { exit !f }' \
	<<<"$listing" || fail "ls -l does not show entry-1234 with size 3"
awk 'NR > 1 { print $NF }' <<<"$listing" | LC_ALL=C sort >/tmp/ls-client
(cd "$EXPORT/many" && LC_ALL=C ls) >/tmp/ls-server
cmp -s /tmp/ls-client /tmp/ls-server ||
	fail "ls -l names differ from the server's: $(diff /tmp/ls-client /tmp/ls-server | head -n 10)"
pass "ls -l of a directory with 2000 entries: count, names and a size match"

# ---------------------------------------------------------------- 4. symlink
target=$(for ((i = 0; i < 500; i++)); do printf 'd/'; done)
bounded 30 "ln -s (1000-byte target) on the mount" ln -s "$target" "$MNT/link"
[[ "$(readlink "$EXPORT/link")" == "$target" ]] ||
	fail "server's symlink target differs: $(readlink "$EXPORT/link" | wc -c) bytes"
pass "symlink created with a 1000-byte target"

# ---------------------------------------------------------------- 5. namespace
bounded 30 "mkdir -p d1/sub/deeper" mkdir -p "$MNT/d1/sub/deeper"
[[ -d "$EXPORT/d1/sub/deeper" ]] || fail "mkdir -p d1/sub/deeper: not on the server"
bounded 30 "rmdir d1/sub/deeper" rmdir "$MNT/d1/sub/deeper"
[[ ! -e "$EXPORT/d1/sub/deeper" ]] || fail "rmdir d1/sub/deeper: still on the server"
if out=$(timeout -k 10 30 rmdir "$MNT/d1" 2>&1); then
	fail "rmdir of the non-empty d1 succeeded"
fi
[[ "$out" == *"not empty"* ]] || fail "rmdir of the non-empty d1: '$out', expected 'Directory not empty'"
pass "mkdir -p, rmdir; rmdir of a non-empty directory fails with ENOTEMPTY"

bounded 60 "cp 4097.bin into d1" cp "$ORIG/4097.bin" "$MNT/d1/f"
bounded 30 "mv d1/f d1/g" mv "$MNT/d1/f" "$MNT/d1/g"
[[ -f "$EXPORT/d1/g" && ! -e "$EXPORT/d1/f" ]] || fail "mv d1/f d1/g: not renamed on the server"
bounded 30 "mv d1/g moved" mv "$MNT/d1/g" "$MNT/moved"
[[ -f "$EXPORT/moved" && ! -e "$EXPORT/d1/g" ]] || fail "mv d1/g moved: not moved on the server"
compare_files "$ORIG/4097.bin" "$EXPORT/moved"
bounded 30 "mv d1 d2" mv "$MNT/d1" "$MNT/d2"
[[ -d "$EXPORT/d2/sub" && ! -e "$EXPORT/d1" ]] || fail "mv d1 d2: directory not renamed on the server"
bounded 30 "write x" sh -c "printf 'content of x' >'$MNT/x'"
bounded 30 "write y" sh -c "printf 'content of y' >'$MNT/y'"
bounded 30 "mv x y (replace)" mv -f "$MNT/x" "$MNT/y"
[[ "$(cat "$EXPORT/y")" == "content of x" && ! -e "$EXPORT/x" ]] ||
	fail "mv x y over an existing y: server has y='$(cat "$EXPORT/y")'"
pass "rename: in a directory, across directories, a directory, over an existing file"

bounded 30 "O_EXCL create of excl" bash -c "set -C; printf new >'$MNT/excl'"
if timeout -k 10 30 bash -c "set -C; printf again >'$MNT/excl'" 2>/dev/null; then
	fail "O_EXCL create of the existing excl succeeded"
fi
[[ "$(cat "$EXPORT/excl")" == new ]] || fail "O_EXCL create: server's excl holds '$(cat "$EXPORT/excl")'"
got=$(stat -c '%a %Y' "$EXPORT/excl")
now=$(date +%s)
[[ "${got% *}" == 644 ]] || fail "O_EXCL create: server's excl has mode ${got% *}, expected 644"
((${got#* } > now - 600 && ${got#* } <= now + 5)) ||
	fail "O_EXCL create: server's excl has mtime $(date -d "@${got#* }") (verifier left in the times?)"
bounded 30 "rm excl" rm "$MNT/excl"
pass "O_EXCL create: created once, refused the second time, mode and mtime set"

bounded 30 "ln moved d2/hard" ln "$MNT/moved" "$MNT/d2/hard"
for p in "$MNT/moved" "$MNT/d2/hard" "$EXPORT/moved" "$EXPORT/d2/hard"; do
	nl=$(timeout -k 10 30 stat -c %h "$p") || fail "stat $p"
	[[ "$nl" == 2 ]] || fail "hard link: $p has link count $nl, expected 2"
done
compare_files "$ORIG/4097.bin" "$MNT/d2/hard"
pass "hard link: link count 2 on both names (client and server)"

bounded 30 "chmod 640 moved" chmod 640 "$MNT/moved"
[[ "$(stat -c %a "$EXPORT/moved")" == 640 ]] || fail "chmod 640 moved: server mode is $(stat -c %a "$EXPORT/moved")"
bounded 30 "chmod 711 d2" chmod 0711 "$MNT/d2"
[[ "$(stat -c %a "$EXPORT/d2")" == 711 ]] || fail "chmod 711 d2: server mode is $(stat -c %a "$EXPORT/d2")"
owner=$(stat -c %u:%g "$EXPORT/moved")
[[ "$owner" == 0:0 ]] || fail "the client's root created moved as $owner on the server, expected 0:0"
pass "chmod of a file and a directory: modes visible on the server; root not squashed"

bounded 60 "cp 65537.bin to trunc" cp "$ORIG/65537.bin" "$MNT/trunc"
cp "$ORIG/65537.bin" /tmp/trunc-expect
truncate -s 100000 /tmp/trunc-expect
bounded 30 "truncate -s 100000 (grow)" truncate -s 100000 "$MNT/trunc"
[[ "$(size_of "$MNT/trunc")" == 100000 ]] || fail "truncate grow: client size $(size_of "$MNT/trunc")"
compare_files /tmp/trunc-expect "$EXPORT/trunc"
truncate -s 4095 /tmp/trunc-expect
bounded 30 "truncate -s 4095 (shrink)" truncate -s 4095 "$MNT/trunc"
[[ "$(size_of "$MNT/trunc")" == 4095 ]] || fail "truncate shrink: client size $(size_of "$MNT/trunc")"
compare_files /tmp/trunc-expect "$EXPORT/trunc"
compare_files /tmp/trunc-expect "$MNT/trunc"
bounded 30 "cp 4097.bin to trunc0" cp "$ORIG/4097.bin" "$MNT/trunc0"
bounded 30 "truncate -s 0" truncate -s 0 "$MNT/trunc0"
[[ "$(size_of "$EXPORT/trunc0")" == 0 ]] || fail "truncate -s 0: server size $(size_of "$EXPORT/trunc0")"
pass "truncate: grow (zero filled), shrink, to 0: sizes and contents match"

bounded 30 "rm d2/hard" rm "$MNT/d2/hard"
[[ ! -e "$EXPORT/d2/hard" ]] || fail "rm d2/hard: still on the server"
bounded 30 "rm trunc0 y" rm "$MNT/trunc0" "$MNT/y"
[[ ! -e "$EXPORT/trunc0" && ! -e "$EXPORT/y" ]] || fail "rm trunc0 y: still on the server"
pass "rm: names gone on the server"

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
TREE=/tmp/tree
mkdir -p "$TREE/a/b/c" "$TREE/empty" "$TREE/a/private"
head -c 5000 /dev/urandom >"$TREE/a/b/c/deep.bin"
head -c 70001 /dev/urandom >"$TREE/a/b/mid.bin"
: >"$TREE/zero"
printf 'hello\n' >"$TREE/a/hello.txt"
printf '#!/bin/sh\necho hi\n' >"$TREE/a/run.sh"
chmod 755 "$TREE/a/run.sh"
chmod 600 "$TREE/a/hello.txt"
chmod 700 "$TREE/a/private"
head -c 123 /dev/urandom >"$TREE/a/private/owned"
chown 1000:1000 "$TREE/a/private/owned"
ln -s b/c/deep.bin "$TREE/a/link-to-deep"
touch -d '2001-02-03 04:05:06.123456789' "$TREE/a/b/mid.bin" "$TREE/a/b/c"
touch -d '2011-12-13 14:15:16.5' "$TREE/zero" "$TREE/a/private"
tree_manifest "$TREE" >/tmp/manifest-orig
bounded 120 "cp -a $TREE into the mount" cp -a "$TREE" "$MNT/tree"
tree_manifest "$EXPORT/tree" >/tmp/manifest-srv
if ! out=$(diff /tmp/manifest-orig /tmp/manifest-srv); then
	fail "cp -a in: tree on the server differs (< original > server): $(head -n 12 <<<"$out")"
fi
pass "cp -a of a tree into the mount: modes, owner, mtimes, symlinks and sha256 match on the server"

# ---------------------------------------------------------------- 7. after a remount
remount
got=$(timeout -k 10 30 readlink "$MNT/link") || fail "readlink $MNT/link"
[[ "$got" == "$target" ]] || fail "readlink of the 1000-byte symlink gives ${#got} bytes, not the target"
pass "symlink with a 1000-byte target: readlink after a remount gives it back"
got=$(timeout -k 10 30 stat -c '%a %h %s' "$MNT/moved") || fail "stat $MNT/moved"
[[ "$got" == "640 1 4097" ]] || fail "after remount moved is '$got' (mode links size), expected '640 1 4097'"
compare_files /tmp/trunc-expect "$MNT/trunc"
pass "after remount: modes, link counts, sizes and truncated contents as left"
bounded 120 "cp -a the tree out of the mount" cp -a "$MNT/tree" /tmp/tree-back
tree_manifest /tmp/tree-back >/tmp/manifest-back
if ! out=$(diff /tmp/manifest-orig /tmp/manifest-back); then
	fail "cp -a out: tree differs (< original > copied back): $(head -n 12 <<<"$out")"
fi
pass "cp -a of the tree out of the mount: modes, owner, mtimes, symlinks and sha256 match"
bounded 300 "rm -rf many (2000 entries) on the mount" rm -rf "$MNT/many"
[[ ! -e "$EXPORT/many" ]] || fail "rm -rf many: entries left on the server"
bounded 60 "rm -rf tree" rm -rf "$MNT/tree"
pass "rm -rf of the 2000-entry directory and of the tree"
log "ops: $(ops_summary)"
kumount "$MNT"
pass "unmounted"

# ---------------------------------------------------------------- 8. no vers=
# The client's default: NFSv4.2 first (the server answers
# NFS4ERR_MINOR_VERS_MISMATCH), then 4.1, which must be what it ends on.
OPTS=proto=rdma,port=$NFS_RDMA_PORT
mount_export
compare_files /tmp/trunc-expect "$MNT/trunc"
pass "a mount without vers= ends on NFSv4.1 over RDMA and reads back a file"

# NFSv3 beside it on the same export: one server, one set of handles and
# caches; what one version writes the other reads.
kmount "$SERVER_ADDR:$EXPORT" /mnt/y "mountport=$MOUNT_PORT,mountproto=tcp"
bounded 30 "write through v3" sh -c "printf 'from v3' >/mnt/y/by-v3"
[[ "$(timeout -k 10 30 cat "$MNT/by-v3")" == "from v3" ]] || fail "the v4 mount does not read what v3 wrote"
bounded 30 "write through v4" sh -c "printf 'from v4' >'$MNT/by-v4'"
[[ "$(timeout -k 10 30 cat /mnt/y/by-v4)" == "from v4" ]] || fail "the v3 mount does not read what v4 wrote"
compare_files /tmp/trunc-expect /mnt/y/trunc
kumount /mnt/y
kumount "$MNT"
pass "NFSv3 and NFSv4.1 mounts of the same export side by side read what the other wrote"

# ---------------------------------------------------------------- 9. server exit
rnfsd_term 30
rnfsd_check_final_stats
grep '^{"connections"' "$RNFSD_LOG" | tail -n 1 | grep -q '"NFS4ERR_DENIED":[1-9]' ||
	fail "the server never answered NFS4ERR_DENIED (the server-side lock conflict)"
pass "the server answered LOCK with NFS4ERR_DENIED for the server-side conflict"
# The back channel (RFC 8167 under RFC 8881 18.36): every v4.1 session was
# created with CONN_BACK_CHAN and probed with CB_NULL over the RDMA
# connection; the kernel client answered each probe.
v=$(rnfsd_stat bc_replies)
((${v:-0} >= 1)) || fail "no backchannel reply: the kernel client never answered CB_NULL (bc_replies '${v}')"
[[ "$(rnfsd_stat bc_timeouts)" == 0 ]] || fail "backchannel calls timed out: $(rnfsd_stat bc_timeouts)"
pass "the kernel client answered the server's CB_NULL probes over the RDMA backchannel ($v replies, no timeout)"
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
o=proto=rdma,port=$NFS_RDMA_PORT,mountport=$MOUNT_PORT,mountproto=tcp,nolock
timeout -k 10 120 mount -t nfs -o "$o" "$SERVER_ADDR:$EXPORT" /mnt/z || fail "mount -o $o (no vers=) with --no-nfs4"
at_exit "kumount /mnt/z"
line=$(awk '$2 == "/mnt/z"' /proc/mounts)
[[ "$line" == *" nfs "*"vers=3"* ]] || fail "--no-nfs4: a mount without vers= is not NFSv3: '$line'"
compare_files /tmp/trunc-expect /mnt/z/trunc
kumount /mnt/z
rnfsd_term 30
pass "with --no-nfs4 a mount without vers= fell back to NFSv3 and read the file"
