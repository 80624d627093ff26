#!/usr/bin/env bash
# mknod: MKNOD (RFC 1813 3.3.11) through the kernel NFSv3/RDMA client on a
# mount of rpcrdma-nfsd:
#   - with --no-root-squash: root's mkfifo makes a FIFO on the server that
#     passes data between a writer and a reader on the client; an
#     unprivileged user's mkfifo makes one owned by that user; a socket node
#     (mknod p is a FIFO; a socket is made with python's bind()); root's
#     `mknod c 1 3` and `mknod b 7 0` make device nodes with those numbers on
#     the server, and the character node behaves as /dev/null on the client;
#   - with root squashed: root's `mknod c 1 3` is refused (EPERM from the
#     server's NFS3ERR_PERM) and nothing is made; its mkfifo works and the
#     FIFO belongs to 65534.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
vm_require_guest
umask 022

NFSD=$(rpcrdma_bin rpcrdma-nfsd)
EXPORT=$SCRATCH/export
MNT=/mnt/x
MOPTS=mountport=$MOUNT_PORT,mountproto=tcp

mkdir -p "$EXPORT"
chmod 1777 "$EXPORT"

# ------------------------------------------------ 1. no_root_squash
rnfsd_start "$NFSD" "$EXPORT" "$SCRATCH/nfsd1.log" --no-root-squash --stats \
	--handle-key "$SCRATCH/key"
kmount "$SERVER_ADDR:$EXPORT" "$MNT" "$MOPTS"

bounded 30 "mkfifo on the mount" mkfifo -m 0620 "$MNT/fifo"
[[ -p "$EXPORT/fifo" ]] || fail "the server has no FIFO at $EXPORT/fifo: $(ls -l "$EXPORT")"
[[ "$(stat -c %a "$EXPORT/fifo")" == 620 ]] || fail "FIFO mode on the server: $(stat -c %a "$EXPORT/fifo"), want 620"
# a writer and a reader on the client meet in the FIFO (the data never goes
# to the server: a FIFO's contents are local to the machine that opens it)
( echo "through the fifo" >"$MNT/fifo" ) &
writer=$!
got=$(timeout -k 5 30 cat "$MNT/fifo") || fail "reading the FIFO on the mount"
wait "$writer" || fail "the FIFO's writer failed"
[[ "$got" == "through the fifo" ]] || fail "FIFO passed '$got'"
pass "mkfifo on the mount: a FIFO with mode 620 on the server, data passes through it"

bounded 30 "mkfifo as nobody" runuser -u nobody -- mkfifo "$MNT/fifo-nobody"
[[ -p "$EXPORT/fifo-nobody" && "$(stat -c %u "$EXPORT/fifo-nobody")" == 65534 ]] ||
	fail "nobody's FIFO on the server: $(stat -c '%F %u' "$EXPORT/fifo-nobody" 2>&1)"
pass "an unprivileged user's mkfifo makes a FIFO it owns"

bounded 30 "a socket node on the mount" python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.bind(sys.argv[1])' "$MNT/sock"
[[ -S "$EXPORT/sock" ]] || fail "the server has no socket node: $(stat -c %F "$EXPORT/sock" 2>&1)"
pass "bind() of a Unix socket on the mount makes a socket node on the server"

bounded 30 "mknod c 1 3 on the mount" mknod -m 0666 "$MNT/null" c 1 3
[[ "$(stat -c '%F %t %T %a' "$EXPORT/null")" == "character special file 1 3 666" ]] ||
	fail "server's node: $(stat -c '%F %t %T %a' "$EXPORT/null")"
echo discard >"$MNT/null" || fail "writing to the device node on the mount"
[[ -z "$(timeout -k 5 10 head -c 10 "$MNT/null")" ]] || fail "the node did not read as /dev/null"
bounded 30 "mknod b 7 0 on the mount" mknod "$MNT/loop" b 7 0
[[ "$(stat -c '%F %t %T' "$EXPORT/loop")" == "block special file 7 0" ]] ||
	fail "server's block node: $(stat -c '%F %t %T' "$EXPORT/loop")"
drop_caches
[[ "$(stat -c '%F %t %T' "$MNT/null")" == "character special file 1 3" ]] ||
	fail "client's view of the node: $(stat -c '%F %t %T' "$MNT/null")"
pass "root's mknod c 1 3 and b 7 0: device nodes with those numbers; the c 1 3 node is a /dev/null"

kumount "$MNT"
rnfsd_term
rnfsd_check_final_stats

# ------------------------------------------------ 2. root squashed
rm -f "$EXPORT"/*
rnfsd_start "$NFSD" "$EXPORT" "$SCRATCH/nfsd2.log" --stats --handle-key "$SCRATCH/key"
kmount "$SERVER_ADDR:$EXPORT" "$MNT" "$MOPTS"
if out=$(timeout -k 5 30 mknod "$MNT/null2" c 1 3 2>&1); then
	fail "squashed root's mknod c 1 3 succeeded"
fi
[[ "$out" == *"Operation not permitted"* ]] || fail "squashed root's mknod: '$out', want EPERM"
[[ ! -e "$EXPORT/null2" ]] || fail "a refused mknod left $(stat -c %F "$EXPORT/null2")"
bounded 30 "mkfifo as squashed root" mkfifo "$MNT/fifo2"
[[ -p "$EXPORT/fifo2" && "$(stat -c %u:%g "$EXPORT/fifo2")" == 65534:65534 ]] ||
	fail "squashed root's FIFO: $(stat -c '%F %u:%g' "$EXPORT/fifo2" 2>&1)"
pass "squashed root: mknod c refused with EPERM, mkfifo makes a FIFO owned by 65534"
kumount "$MNT"
rnfsd_term
rnfsd_check_final_stats
