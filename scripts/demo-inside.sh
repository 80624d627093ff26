#!/usr/bin/env bash
# The rpcrdma demo, run where an RDMA device exists (inside the test VM, or on
# a host with one; scripts/demo picks).  Serves a scratch directory with
# rpcrdma-nfsd, mounts it with the kernel's NFSv3/RDMA client, copies an 8 MiB
# random file in and back out, prints both MD5 sums, the mount's RDMA transport
# counters and the server's own (rpcrdma-stat's table), then stops the server
# (SIGTERM).  Lines for the terminal are marked "demo| " (say); scripts/demo
# shows those and puts everything in its log.
. "$(dirname "${BASH_SOURCE[0]}")/../tests/vm/lib.sh"

# say TEXT...: a line for the terminal; say_all: each line of stdin.
say() { printf 'demo| %s\n' "$*"; }
say_all() { sed 's/^/demo| /'; }

NFSD=$(rpcrdma_bin rpcrdma-nfsd)
STAT=$(rpcrdma_bin rpcrdma-stat)
EXPORT=$SCRATCH/demo-export
MNT=$SCRATCH/demo-mnt
SLOG=$SCRATCH/rpcrdma-nfsd.log
SRC=$SCRATCH/demo-in.bin
OUT=$SCRATCH/demo-out.bin
mkdir -p "$EXPORT" "$MNT"
chmod 1777 "$EXPORT"	# the server squashes root to 65534 by default

say "== rpcrdma demo: server $SERVER_ADDR, client $CLIENT_ADDR, device ${RPCRDMA_RDMA_DEV:-?}"
"$NFSD" --export "$EXPORT" --listen "$SERVER_ADDR" --port "$NFS_RDMA_PORT" \
	--mount-port "$MOUNT_PORT" --allow "${RPCRDMA_DEMO_ALLOW:-192.0.2.0/24}" --stats \
	>"$SLOG" 2>&1 &
spid=$!
at_exit "kill -KILL $spid 2>/dev/null"
on_failure "echo '---- rpcrdma-nfsd log ----'; cat '$SLOG'"
for ((i = 0; ; i++)); do
	wait_tcp_listen "$SERVER_ADDR" "$MOUNT_PORT" 1 && break
	kill -0 "$spid" 2>/dev/null || fail "rpcrdma-nfsd exited before listening"
	((i < 30)) || fail "rpcrdma-nfsd not listening after 30 s"
done
say "rpcrdma-nfsd (pid $spid) serves $EXPORT on $SERVER_ADDR:$NFS_RDMA_PORT (RDMA), MOUNT on TCP $MOUNT_PORT"

head -c $((8 * 1024 * 1024)) /dev/urandom >"$SRC"
kmount "$SERVER_ADDR:$EXPORT" "$MNT" "mountport=$MOUNT_PORT,mountproto=tcp"
t=$SECONDS
timeout -k 10 300 cp "$SRC" "$MNT/demo.bin" || fail "copy in"
timeout -k 10 120 sync
t_in=$((SECONDS - t))
kumount "$MNT"
drop_caches
kmount "$SERVER_ADDR:$EXPORT" "$MNT" "mountport=$MOUNT_PORT,mountproto=tcp"
t=$SECONDS
timeout -k 10 300 cp "$MNT/demo.bin" "$OUT" || fail "copy out"
say "the kernel's NFSv3/RDMA client copied 8 MiB in ($t_in s) and back out after a remount ($((SECONDS - t)) s)"

say "== MD5 sums"
md5sum "$SRC" "$OUT" "$EXPORT/demo.bin" | say_all
compare_files "$SRC" "$OUT"
say "== the kernel client's RDMA transport counters (/proc/self/mountstats)"
mountstats_xprt "$MNT" | say_all
kumount "$MNT"

# The whole table into the log; on the terminal without the counters that
# are not per transport and the calls to no program (the client's NFSACL
# probe): the blocks "Other counters" and "Calls to no registered ...", each
# up to its blank line.
"$STAT" --port "$NFS_RDMA_PORT" >"$SCRATCH/stat.txt" || fail "rpcrdma-stat"
cat "$SCRATCH/stat.txt"
say "== the server's counters (rpcrdma-stat; the other counters are in the log)"
sed '/^Other counters/,/^$/d; /^Calls to no registered/,/^$/d' "$SCRATCH/stat.txt" | say_all
kill -TERM "$spid"
for ((i = 0; i < 150; i++)); do
	kill -0 "$spid" 2>/dev/null || break
	sleep 0.2
done
rc=0
wait "$spid" || rc=$?
echo "== rpcrdma-nfsd log"
cat "$SLOG"
((rc == 0)) || fail "rpcrdma-nfsd exited with status $rc after SIGTERM"
pass "demo: 8 MiB in and out over RDMA, MD5 sums match"
