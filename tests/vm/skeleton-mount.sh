#!/usr/bin/env bash
# skeleton-mount: our server (rpcrdma-nfsd) with the Linux kernel NFSv3/RDMA
# client.  Write the six test files through the mount, remount, read them back
# and compare them byte for byte with the originals and the server's copies;
# check `ls -l`; mkdir / create / rm / rmdir; unmount; SIGTERM must make the
# server exit with status 0.  Default options: root is squashed to 65534.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
vm_require_guest

NFSD=$(rpcrdma_bin rpcrdma-nfsd)
EXPORT=$SCRATCH/export
ORIG=/tmp/orig
MNT=/mnt/x
SLOG=/tmp/rpcrdma-nfsd.log

# rpcrdma-nfsd squashes AUTH_SYS uid/gid 0 to 65534 by default (like the
# kernel's root_squash): the root-run client writes as nobody.
mkdir -p "$EXPORT"
chmod 1777 "$EXPORT"
make_test_files "$ORIG"

# ---- start the server
"$NFSD" --export "$EXPORT" --listen "$SERVER_ADDR" --port "$NFS_RDMA_PORT" \
	--mount-port "$MOUNT_PORT" --allow 192.0.2.0/24 --stats >"$SLOG" 2>&1 &
spid=$!
at_exit "kill -KILL $spid 2>/dev/null"
on_failure "echo '---- rpcrdma-nfsd log ----'; cat '$SLOG'"
log "started $NFSD (pid $spid)"
for ((i = 0; ; i++)); do
	wait_tcp_listen "$SERVER_ADDR" "$MOUNT_PORT" 1 && break
	kill -0 "$spid" 2>/dev/null || { wait "$spid" && rc=0 || rc=$?; fail "rpcrdma-nfsd exited (status $rc) before listening"; }
	((i < 30)) || fail "rpcrdma-nfsd not listening on TCP $SERVER_ADDR:$MOUNT_PORT after 30 s"
done
pass "rpcrdma-nfsd listens on TCP $SERVER_ADDR:$MOUNT_PORT (MOUNT)"

MOPTS=mountport=$MOUNT_PORT,mountproto=tcp

# ---- write the six files
kmount "$SERVER_ADDR:$EXPORT" "$MNT" "$MOPTS"
xprt=$(mountstats_xprt "$MNT")
[[ "$xprt" == "xprt:"*"rdma"* ]] || fail "mount $MNT is not over RDMA: '$xprt'"
pass "kernel client mounted $SERVER_ADDR:$EXPORT over RDMA"
for s in "${TEST_FILE_SIZES[@]}"; do
	timeout -k 10 120 cp "$ORIG/$s.bin" "$MNT/$s.bin" || fail "cp $s.bin to the mount"
done
timeout -k 10 120 sync || fail "sync after writing the files"
log "$(mountstats_xprt "$MNT")"
kumount "$MNT"
pass "wrote ${#TEST_FILE_SIZES[@]} files (0 B to 16 MiB) through the mount"

# ---- read them back after a remount
drop_caches
kmount "$SERVER_ADDR:$EXPORT" "$MNT" "$MOPTS"
for s in "${TEST_FILE_SIZES[@]}"; do
	compare_files "$ORIG/$s.bin" "$EXPORT/$s.bin"
	compare_files "$ORIG/$s.bin" "$MNT/$s.bin"
done
pass "read back: all six match the originals and the server's copies"
owner=$(stat -c %u:%g "$EXPORT/4097.bin")
[[ "$owner" == 65534:65534 ]] ||
	fail "server's 4097.bin is owned by $owner, expected 65534:65534 (root squashed)"
pass "files created by the client's root are owned by 65534:65534 on the server"

# ---- ls -l: names and sizes
listing=$(timeout -k 10 60 ls -l "$MNT") || fail "ls -l $MNT"
echo "$listing"
for s in "${TEST_FILE_SIZES[@]}"; do
	awk -v n="$s.bin" -v s="$s" '$NF == n && $5 == s { f = 1 } END { exit !f }' <<<"$listing" ||
		fail "ls -l does not show $s.bin with size $s"
done
n=$(awk 'NR > 1' <<<"$listing" | wc -l)
((n == ${#TEST_FILE_SIZES[@]})) || fail "ls -l shows $n entries, expected ${#TEST_FILE_SIZES[@]}"
pass "ls -l shows the six names and sizes"

# ---- directory operations
timeout -k 10 60 mkdir "$MNT/dir" || fail "mkdir on the mount"
echo hello >"$MNT/dir/file" || fail "create dir/file on the mount"
[[ -d "$EXPORT/dir" && "$(cat "$EXPORT/dir/file")" == hello ]] ||
	fail "server does not have dir/file with the written contents"
timeout -k 10 60 rm "$MNT/dir/file" || fail "rm dir/file on the mount"
timeout -k 10 60 rmdir "$MNT/dir" || fail "rmdir dir on the mount"
[[ ! -e "$EXPORT/dir" ]] || fail "$EXPORT/dir still exists on the server after rmdir"
[[ ! -e "$MNT/dir" ]] || fail "$MNT/dir still visible on the client after rmdir"
pass "mkdir, create, rm, rmdir"
echo "$(mountstats_xprt "$MNT")"
kumount "$MNT"

# ---- SIGTERM: clean exit
kill -TERM "$spid"
for ((i = 0; i < 150; i++)); do
	kill -0 "$spid" 2>/dev/null || break
	sleep 0.2
done
kill -0 "$spid" 2>/dev/null && fail "rpcrdma-nfsd still running 30 s after SIGTERM"
rc=0
wait "$spid" || rc=$?
echo "---- rpcrdma-nfsd log ----"
cat "$SLOG"
((rc == 0)) || fail "rpcrdma-nfsd exited with status $rc after SIGTERM"
pass "rpcrdma-nfsd exited with status 0 after SIGTERM"

# ---- the server's own counters: every path used, every pool back at baseline
stats=$(grep '^{"connections"' "$SLOG" | tail -n 1)
[[ -n "$stats" ]] || fail "no final counters (--stats) in the server log"
stat_of() { sed -n "s/.*\"$1\":\([0-9]*\).*/\1/p" <<<"$stats"; }
for k in ctx_in_use recv_in_use conns_open mrs_open mr_bytes; do
	[[ "$(stat_of $k)" == 0 ]] || fail "server counter $k is $(stat_of $k) after unmount, expected 0"
done
# WRITE data above the inline threshold came by RDMA Read, READ data went
# by RDMA Write into Write chunks, READDIRPLUS of the directory used inline
# or Reply chunk replies.
for k in read_chunks replies_write_chunk calls; do
	(($(stat_of $k) > 0)) || fail "server counter $k is 0: that path was never used"
done
(($(stat_of rdma_read_bytes) >= 16777216)) ||
	fail "server pulled only $(stat_of rdma_read_bytes) bytes by RDMA Read for 17 MiB of writes"
(($(stat_of rdma_errors_sent) == 0)) || fail "server sent $(stat_of rdma_errors_sent) RDMA_ERRORs"
pass "server counters: pools at baseline, Read and Write chunks used, no RDMA_ERROR"

# ---- from the configuration file alone (issue 37): rpcrdma-nfsd with no
# option reads its default rpcrdma.conf (the path --help gives) and the
# default exports file beside it, as the systemd unit starts it; --check
# first finds the "HOST (OPTS)" line and says so with file and line, the
# server warns of it at start, and the kernel client mounts and writes.
CONF=$("$NFSD" --help | tr -s '\n ' '  ' | grep -o '[^ ]*/rpcrdma/rpcrdma\.conf' | head -n 1)
ETC=${CONF%/rpcrdma/rpcrdma.conf}
[[ -n "$CONF" && -d "$ETC" && "$ETC" != /etc ]] ||
	fail "no default configuration file under a directory this test may cover: '$CONF'"
mkdir -p "$SCRATCH/etc/rpcrdma" "$SCRATCH/pub"
mount --bind "$SCRATCH/etc" "$ETC" || fail "bind $SCRATCH/etc on $ETC"
at_exit "umount '$ETC' 2>/dev/null"
cat >"$CONF" <<CONF
# written by skeleton-mount.sh
[nfsd]
listen = $SERVER_ADDR
port = $NFS_RDMA_PORT
threads = 2
[mountd]
mount-port = $MOUNT_PORT
[stats]
control = none
CONF
cat >"$ETC/rpcrdma/exports" <<EXP
$EXPORT 192.0.2.0/24(rw,insecure)
$SCRATCH/pub 192.0.2.0/24 (ro,insecure)
EXP
out=$("$NFSD" --check 2>&1) && fail "--check passed an exports file with 'HOST (OPTS)': $out"
echo "$out"
[[ "$out" == *"$ETC/rpcrdma/exports:2: warning: (ro,insecure) stands alone"* ]] ||
	fail "--check did not name exports line 2 and its option list standing alone"
pass "--check finds 'HOST (OPTS)' at $ETC/rpcrdma/exports:2 (exit 2)"
CLOG=/tmp/rpcrdma-nfsd-conf.log
"$NFSD" >"$CLOG" 2>&1 &
cpid=$!
at_exit "kill -KILL $cpid 2>/dev/null"
on_failure "echo '---- rpcrdma-nfsd (configuration file) log ----'; cat '$CLOG'"
for ((i = 0; ; i++)); do
	grep -q '^rpcrdma-nfsd: serving ' "$CLOG" 2>/dev/null && break
	kill -0 "$cpid" 2>/dev/null || fail "rpcrdma-nfsd with no options exited before serving"
	((i < 150)) || fail "rpcrdma-nfsd with no options not serving after 30 s"
	sleep 0.2
done
wait_tcp_listen "$SERVER_ADDR" "$MOUNT_PORT" 10 || fail "no MOUNT on $SERVER_ADDR:$MOUNT_PORT"
grep -q "serving $ETC/rpcrdma/exports on $SERVER_ADDR:$NFS_RDMA_PORT" "$CLOG" ||
	fail "the server does not serve the default exports file on the file's address and port"
grep -q "exports:2: warning: (ro,insecure) stands alone" "$CLOG" ||
	fail "no warning at start for exports line 2"
pass "rpcrdma-nfsd with no options: $CONF's address and ports, the default exports, the warning"
kmount "$SERVER_ADDR:$EXPORT" "$MNT" "$MOPTS"
xprt=$(mountstats_xprt "$MNT")
[[ "$xprt" == "xprt:"*"rdma"* ]] || fail "mount $MNT is not over RDMA: '$xprt'"
echo configured >"$MNT/conf.txt" || fail "write through the mount of the configured server"
kumount "$MNT"
[[ "$(cat "$EXPORT/conf.txt")" == configured ]] || fail "the server's copy of conf.txt differs"
kill -TERM "$cpid"
rc=0
wait "$cpid" || rc=$?
((rc == 0)) || fail "rpcrdma-nfsd (configuration file) exited with status $rc after SIGTERM"
pass "mounted over RDMA and wrote a file; SIGTERM: exit 0"
