#!/usr/bin/env bash
# ipv6-mount: rpcrdma-nfsd listening on an IPv6 address (RDMA and MOUNT);
# the kernel client mounts it with proto=rdma6 and mountproto=tcp6, writes a
# file (RDMA Read of a Read chunk) and reads it back after a remount;
# rpcrdma-nfs gets it through an nfs://[ADDRESS]:PORT/export URL.  With
# --rpcbind, NFS v3 is registered under netid rdma6 at the IPv6 address (and
# not under rdma), and under tcp6 at port 2049 for NFS over TCP (not tcp),
# MOUNT and NLM under tcp6 (and not under tcp: the socket
# takes IPv6 only), so the remount asks rpcbind for the MOUNT port over
# tcp6 (no mountport=), as does rpcrdma-nfs given [ADDRESS]:/export; all
# unregistered at exit.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
vm_require_guest

NFSD=$(rpcrdma_bin rpcrdma-nfsd)
EXPORT=$SCRATCH/export
MNT=/mnt/x
SLOG=$SCRATCH/rpcrdma-nfsd.log
V6S=2001:db8::1
V6C=2001:db8::2

ip -6 addr add $V6S/64 dev "$RPCRDMA_NETDEV" nodad || fail "add $V6S"
ip -6 addr add $V6C/64 dev "$RPCRDMA_NETDEV" nodad || fail "add $V6C"
mkdir -p "$EXPORT" "$MNT"
mkdir -p /run/rpcbind
rpcbind -w -f &
rpcbind_pid=$!
at_exit "kill $rpcbind_pid 2>/dev/null"
for _ in $(seq 50); do [[ -S /run/rpcbind.sock ]] && break; sleep 0.2; done
[[ -S /run/rpcbind.sock ]] || fail "rpcbind did not start"
"$NFSD" --export "$EXPORT" --listen $V6S --allow 2001:db8::/64 --no-root-squash --stats --rpcbind \
	--handle-key "$SCRATCH/key" >"$SLOG" 2>&1 &
spid=$!
at_exit "kill -KILL $spid 2>/dev/null"
on_failure "echo '---- rpcrdma-nfsd log ----'; cat '$SLOG'"
for ((i = 0; i < 150; i++)); do
	grep -q '^rpcrdma-nfsd: serving ' "$SLOG" && break
	kill -0 $spid 2>/dev/null || fail "rpcrdma-nfsd exited before serving"
	sleep 0.2
done
grep -q "serving .* on $V6S:20049" "$SLOG" || fail "rpcrdma-nfsd does not say it serves $V6S:20049"
reg=$(bounded 20 "rpcinfo" rpcinfo 127.0.0.1 | awk '$1 == 100003 { print $3, $4 }' | sort | tr '\n' ' ')
want="rdma6 $V6S.78.81 tcp6 $V6S.$((NFS_TCP_PORT >> 8)).$((NFS_TCP_PORT & 255)) "
[[ "$reg" == "$want" ]] || fail "rpcbind has NFS v3 as '$reg', expected '$want'"
pass "NFS v3 registered with rpcbind under netid rdma6 at $V6S.78.81 and tcp6 at port $NFS_TCP_PORT"
reg=$(bounded 20 "rpcinfo" rpcinfo 127.0.0.1 | awk '$1 == 100005 || $1 == 100021 { print $1, $2, $3, $4 }' | sort)
mport_ua="$V6S.$((MOUNT_PORT >> 8)).$((MOUNT_PORT & 255))"
grep -qx "100005 3 tcp6 $mport_ua" <<<"$reg" || fail "MOUNT v3 not under tcp6 at $mport_ua: '$reg'"
grep -q "^100021 4 tcp6 $V6S\." <<<"$reg" || fail "NLM v4 not under tcp6 at $V6S: '$reg'"
! grep -q " tcp " <<<"$reg" || fail "a side program under tcp although the socket takes IPv6 only: '$reg'"
pass "MOUNT v3 and NLM v4 registered under tcp6 at $V6S (not tcp)"

opts=vers=3,proto=rdma6,port=20049,mountport=$MOUNT_PORT,mountproto=tcp6,nolock
vm_kmod rpcrdma nfsv3
bounded 60 "mount over rdma6" mount -t nfs -o $opts "[$V6S]:$EXPORT" "$MNT"
at_exit "umount -f $MNT 2>/dev/null"
[[ "$(mountstats_xprt "$MNT")" == "xprt:"*"rdma"* ]] || fail "mount is not over RDMA"
head -c 300001 /dev/urandom >"$SCRATCH/orig"
bounded 60 "cp in" cp "$SCRATCH/orig" "$MNT/f"
kumount "$MNT"
drop_caches
# no mountport=: the kernel asks the server's rpcbind over tcp6
bounded 60 "remount over rdma6" mount -t nfs -o "${opts/mountport=$MOUNT_PORT,/}" "[$V6S]:$EXPORT" "$MNT"
compare_files "$SCRATCH/orig" "$EXPORT/f"
compare_files "$SCRATCH/orig" "$MNT/f"
kumount "$MNT"
pass "kernel client over IPv6 (rdma6): 300001 bytes written and read back (the remount found MOUNT through rpcbind over tcp6)"

# rpcrdma-nfs with the export named by an nfs:// URL with an IPv6 address
NFS=$(rpcrdma_bin rpcrdma-nfs)
bounded 60 "rpcrdma-nfs get through an IPv6 URL" "$NFS" --source $V6C --quiet \
	"nfs://[$V6S]:20049$EXPORT?mountport=$MOUNT_PORT" get /f "$SCRATCH/back6"
compare_files "$SCRATCH/orig" "$SCRATCH/back6"
pass "rpcrdma-nfs get through nfs://[$V6S]:20049$EXPORT?mountport=$MOUNT_PORT"
out=$(bounded 60 "rpcrdma-nfs ls through rpcbind over IPv6" "$NFS" --source $V6C "[$V6S]:$EXPORT" ls /)
grep -qw f <<<"$out" || fail "rpcrdma-nfs [$V6S]:$EXPORT ls / (MOUNT port from rpcbind) did not list f: $out"
pass "rpcrdma-nfs [$V6S]:$EXPORT without a MOUNT port: found through rpcbind over tcp6"

kill -TERM $spid
rc=0
timeout 30 tail --pid=$spid -f /dev/null || fail "rpcrdma-nfsd still running after SIGTERM"
wait $spid || rc=$?
((rc == 0)) || fail "rpcrdma-nfsd exited with $rc"
grep -q '"conns_open":0' "$SLOG" && grep -q '"ctx_in_use":0' "$SLOG" ||
	fail "server counters not at baseline: $(grep '^{' "$SLOG" | tail -n 1)"
pass "SIGTERM exit 0, counters at baseline"
reg=$(bounded 20 "rpcinfo" rpcinfo 127.0.0.1 | awk '$1 == 100003 { print $3, $4 }')
[[ -z "$reg" ]] || fail "NFS still registered with rpcbind after exit: $reg"
reg=$(bounded 20 "rpcinfo" rpcinfo 127.0.0.1 | awk '$1 == 100005 || $1 == 100021 { print $1, $2, $3, $4 }')
[[ -z "$reg" ]] || fail "MOUNT or NLM still registered with rpcbind after exit: $reg"
pass "rdma6 and tcp6 of NFS, and MOUNT's and NLM's tcp6 registrations removed at exit"
