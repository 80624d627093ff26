#!/usr/bin/env bash
# rpcbind-mount: with --rpcbind, rpcrdma-nfsd registers MOUNT v3 with the
# local rpcbind at its real TCP port, so the kernel client mounts with plain
# `-o vers=3,rdma` (no mountport/mountproto), and NFS v3 under netid "rdma"
# at its listen address and RDMA port (rpcinfo lists it; `rpcinfo -p`
# speaks portmapper version 2, which has only TCP and UDP), and NFS v3
# over TCP at port 2049 under "tcp" (not "tcp6": the server listens on an
# IPv4 address); a plain `-o vers=3,tcp` mount then finds everything through
# rpcbind too; on SIGTERM every registration goes away again.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
vm_require_guest

NFSD=$(rpcrdma_bin rpcrdma-nfsd)
EXPORT=$SCRATCH/export
MNT=/mnt/x

mkdir -p /run/rpcbind
rpcbind -w -f &
rpcbind_pid=$!
at_exit "kill $rpcbind_pid 2>/dev/null"
for _ in $(seq 50); do [[ -S /run/rpcbind.sock ]] && break; sleep 0.2; done
[[ -S /run/rpcbind.sock ]] || fail "rpcbind did not start"

rnfsd_start "$NFSD" "$EXPORT" "$SCRATCH/rpcrdma-nfsd.log" --rpcbind --no-root-squash \
	--stats --handle-key "$SCRATCH/key"
reg=$(bounded 20 "rpcinfo -p" rpcinfo -p 127.0.0.1 | awk '$1 == 100005 && $2 == 3 && $3 == "tcp" { print $4 }')
[[ "$reg" == "$MOUNT_PORT" ]] || fail "rpcbind has MOUNT v3/tcp at port '${reg}', expected $MOUNT_PORT"
pass "MOUNT v3 registered with rpcbind at TCP port $MOUNT_PORT"
out=$(bounded 20 "rpcinfo" rpcinfo 127.0.0.1)
log "rpcinfo: $(awk '$1 == 100003' <<<"$out" | tr '\n' '|')"
reg=$(awk '$1 == 100003 && $2 == 3 && $3 == "rdma" { print $4 }' <<<"$out")
want=$SERVER_ADDR.$((NFS_RDMA_PORT >> 8)).$((NFS_RDMA_PORT & 255))
[[ "$reg" == "$want" ]] || fail "rpcbind has NFS v3/rdma at '$reg', expected $want"
[[ -z "$(awk '$1 == 100003 && $3 == "rdma6"' <<<"$out")" ]] ||
	fail "NFS v3/rdma6 registered for an IPv4 listen address"
pass "NFS v3 registered with rpcbind under netid rdma at $want"
reg=$(bounded 20 "rpcinfo -p" rpcinfo -p 127.0.0.1 | awk '$1 == 100003 && $2 == 3 && $3 == "tcp" { print $4 }')
[[ "$reg" == "$NFS_TCP_PORT" ]] || fail "rpcbind has NFS v3/tcp at port '${reg}', expected $NFS_TCP_PORT"
[[ -z "$(awk '$1 == 100003 && $3 == "tcp6"' <<<"$out")" ]] ||
	fail "NFS v3/tcp6 registered for an IPv4 listen address"
pass "NFS v3 registered with rpcbind under netid tcp at port $NFS_TCP_PORT"
# the lock manager: NLM v4 and NSM v1 over TCP at the ports it logged
nlm_port=$(sed -n 's/.*nlm: NLM v4 on TCP port \([0-9]*\), NSM on \([0-9]*\).*/\1 \2/p' "$RNFSD_LOG")
reg=$(rpcinfo -p 127.0.0.1 | awk '$1 == 100021 && $2 == 4 && $3 == "tcp" { a = $4 }
				  $1 == 100024 && $2 == 1 && $3 == "tcp" { b = $4 } END { print a, b }')
[[ -n "$nlm_port" && "$reg" == "$nlm_port" ]] ||
	fail "rpcbind has NLM v4/tcp and NSM v1/tcp at '${reg}', the server logged '${nlm_port}'"
pass "NLM v4 and NSM v1 registered with rpcbind at TCP ports $reg"

mkdir -p "$MNT"
bounded 60 "mount -o vers=3,rdma,nolock" mount -t nfs -o vers=3,rdma,nolock \
	"$SERVER_ADDR:$EXPORT" "$MNT"
at_exit "umount -f $MNT 2>/dev/null"
[[ "$(mountstats_xprt "$MNT")" == "xprt:"*"rdma"* ]] || fail "mount is not over RDMA"
echo "rpcbind mount" >"$MNT/hello" || fail "write through the mount"
[[ "$(cat "$EXPORT/hello")" == "rpcbind mount" ]] || fail "the server's copy differs"
kumount "$MNT"
pass "plain -o vers=3,rdma mount found MOUNT through rpcbind; a file went through"
# over TCP, the NFS port found through rpcbind as well (no port=)
bounded 60 "mount -o vers=3,tcp,nolock" mount -t nfs -o vers=3,tcp,nolock \
	"$SERVER_ADDR:$EXPORT" "$MNT"
[[ "$(mountstats_xprt "$MNT")" == "xprt:"*"tcp"* ]] || fail "mount is not over TCP"
[[ "$(cat "$MNT/hello")" == "rpcbind mount" ]] || fail "the TCP mount does not read the file"
kumount "$MNT"
pass "plain -o vers=3,tcp mount found NFS and MOUNT through rpcbind; read the file"

rnfsd_term
reg=$(bounded 20 "rpcinfo -p" rpcinfo -p 127.0.0.1 | awk '$1 == 100005 || $1 == 100021 || $1 == 100024 { print $1 "/" $4 }')
[[ -z "$reg" ]] || fail "MOUNT, NLM or NSM still registered with rpcbind after exit: $reg"
reg=$(bounded 20 "rpcinfo" rpcinfo 127.0.0.1 | awk '$1 == 100003 { print $3, $4 }')
[[ -z "$reg" ]] || fail "NFS still registered with rpcbind after exit: $reg"
rnfsd_check_final_stats
pass "registration removed on exit; server counters at baseline"
