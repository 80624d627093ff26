#!/usr/bin/env bash
# nfs41-delegation: read delegations of rpcrdma-nfsd --nfs4 recalled over the
# RDMA backchannel (RFC 8167) of the kernel NFSv4.1 client (issue 16).
#   - two kernel client identities in one guest: mount A as 192.0.2.1 with
#     the client identifier "deleg-reader", mount B as a second server
#     address (192.0.2.11, the server listens on 0.0.0.0) after the
#     identifier became "deleg-writer"; the server sees two client ids;
#   - A opens a file for reading and keeps it open: the server grants a read
#     delegation (its log) over a session whose back channel answered
#     CB_NULL;
#   - B writes the file: its OPEN for writing is answered NFS4ERR_DELAY, the
#     server sends CB_RECALL to A over A's RDMA connection, A gives the
#     delegation back (DELEGRETURN in A's mountstats), B's retried OPEN goes
#     through; A then reads the new data;
#   - an NFSv3 mount writes the file: the delegation A holds again is
#     recalled first (NFS3ERR_JUKEBOX meanwhile), A reads the NFSv3 data;
#   - the server's counters: backchannel calls all answered, no timeout;
#   - again with --no-delegations: no delegation granted, no CB_RECALL.
# Registered twice: vm/nfs41-delegation, and vm/nfs41-delegation-tcp with
# RPCRDMA_NFS_PROTO=tcp, which runs the case twice more (issue 36):
#   - A over TCP, B over RDMA: A's session has its back channel on its TCP
#     connection (CB_NULL answered there), is granted the delegation, and
#     the CB_RECALL goes over TCP (A's only connection) when B writes;
#   - A over RDMA, B and the NFSv3 writer over TCP (the mixed case): the
#     delegation A holds over RDMA is recalled when the TCP client opens
#     the file for writing.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
vm_require_guest

NFSD=$(rpcrdma_bin rpcrdma-nfsd)
EXPORT=$SCRATCH/export
SLOG=$SCRATCH/rpcrdma-nfsd.log
ADDR2=192.0.2.11
MA=/mnt/a
MB=/mnt/b

on_failure "echo '---- dmesg (last 40 lines) ----'; dmesg | tail -n 40"
on_failure "echo '---- mountstats ----'; cat /proc/self/mountstats"
on_failure "echo '---- server log (nfs4 lines) ----'; grep '^nfs4' '$SCRATCH/rpcrdma-nfsd.log' | tail -n 40"

ip addr add $ADDR2/24 dev "$RPCRDMA_NETDEV" || fail "add $ADDR2"
vm_kmod nfsv4 rpcrdma

# set_identity NAME: the kernel client's NFSv4 identity for the next
# nfs_client it creates (a mount of a server address not mounted yet).
set_identity() {
	local done=0
	if [[ -w /sys/fs/nfs/net/nfs_client/identifier ]]; then
		echo "$1" >/sys/fs/nfs/net/nfs_client/identifier && done=1
	fi
	if [[ -w /sys/module/nfs/parameters/nfs4_unique_id ]]; then
		echo "$1" >/sys/module/nfs/parameters/nfs4_unique_id && done=1
	fi
	((done)) || fail "no way to set the NFSv4 client identifier"
}

mount_as() { # ADDR MNT PROTO
	local opts
	opts=vers=4.1,$(nfs_proto_opts "$3")
	mkdir -p "$2"
	timeout -k 10 120 mount -t nfs -o "$opts" "$1:$EXPORT" "$2" ||
		fail "mount -t nfs -o $opts $1:$EXPORT $2"
	at_exit "kumount '$2'"
	[[ "$(mountstats_xprt "$2")" == "xprt:"*"$3"* ]] || fail "$2 is not over $3"
}

# run_case ARGS...: start the server with ARGS, mount A over $A_PROTO and
# B over $B_PROTO, read on A, write on B, read on A again, reopen on A
# until a second delegation is granted (unless ARGS has --no-delegations),
# write over NFSv3, read on A.  Leaves the server stopped.
A_PROTO=rdma
B_PROTO=$NFS_PROTO
run_case() {
	local WANT_DELEG=1
	[[ " $* " == *" --no-delegations "* ]] && WANT_DELEG=0
	rm -rf "$EXPORT"
	mkdir -p "$EXPORT"
	printf 'old data\n' >"$EXPORT/f"
	chmod 666 "$EXPORT/f"
	rnfsd_start "$NFSD" "$EXPORT" "$SLOG" --nfs4 --no-root-squash --stats -v \
		--handle-key "$SCRATCH/handle.key" --listen 0.0.0.0 --file-cache-idle 1 "$@"
	set_identity deleg-reader
	mount_as "$SERVER_ADDR" "$MA" "$A_PROTO"
	set_identity deleg-writer
	mount_as "$ADDR2" "$MB" "$B_PROTO"

	exec 3<"$MA/f" || fail "open $MA/f for reading"
	[[ "$(timeout -k 10 30 cat "$MA/f")" == "old data" ]] || fail "A does not read the old data"
	bounded 120 "B writes the file" sh -c "printf 'new data\n' >'$MB/f'"
	[[ "$(cat "$EXPORT/f")" == "new data" ]] || fail "the server's file is not B's: '$(cat "$EXPORT/f")'"
	[[ "$(timeout -k 10 30 cat "$MA/f")" == "new data" ]] ||
		fail "A reads '$(cat "$MA/f")' after B wrote, not the new data"
	# A's second delegation, which the NFSv3 writer below must recall:
	# A closes the file and opens it again (a new OPEN), until the server
	# logs a second grant.  The server grants a read delegation only with
	# a read lease on the file, which the kernel refuses while any
	# descriptor has it open for writing -- the server's own, kept by its
	# file cache since B wrote, until it is idle for --file-cache-idle
	# (1 s here) with no open state on it; so A stays closed 3 s between
	# tries.  With delegations on, no second grant fails the case: the
	# NFSv3 recall and JUKEBOX checks are not optional.
	exec 3<&-
	if ((WANT_DELEG)); then
		local try
		for ((try = 1; try <= 20; try++)); do
			sleep 3
			exec 3<"$MA/f" || fail "open $MA/f for reading again"
			(($(grep -c '^nfs4: read delegation granted' "$SLOG") >= 2)) && break
			exec 3<&-
		done
		((try <= 20)) || fail "A was not granted a second delegation in 20 opens (server log: $(grep -c '^nfs4: read delegation granted' "$SLOG") grants; $(grep -m1 'no read delegation' "$SLOG"))"
		log "second delegation granted at A's open number $try after B's write"
	else
		exec 3<"$MA/f" || fail "open $MA/f for reading again"
	fi
	# an NFSv3 writer: A's second delegation is recalled before the
	# NFSv3 SETATTR/WRITE goes through (NFS3ERR_JUKEBOX meanwhile), and A
	# reads what it wrote
	kmount "$SERVER_ADDR:$EXPORT" /mnt/v3 "mountport=$MOUNT_PORT,mountproto=tcp"
	bounded 120 "an NFSv3 write of the file" sh -c "printf 'v3 data\n' >/mnt/v3/f"
	[[ "$(timeout -k 10 30 cat "$MA/f")" == "v3 data" ]] ||
		fail "A reads '$(cat "$MA/f")' after the NFSv3 write, not its data"
	kumount /mnt/v3
	exec 3<&-
	DELEGRETURNS=$(mountstats_ops "$MA" DELEGRETURN)
	kumount "$MB"
	kumount "$MA"
	rnfsd_term 30
	rnfsd_check_final_stats
	[[ "$(rnfsd_stat bc_timeouts)" == 0 ]] || fail "backchannel calls timed out: $(rnfsd_stat bc_timeouts)"
	[[ "$(rnfsd_stat bc_calls)" == "$(rnfsd_stat bc_replies)" ]] ||
		fail "backchannel calls $(rnfsd_stat bc_calls), replies $(rnfsd_stat bc_replies)"
	BC_CALLS=$(rnfsd_stat bc_calls)
}

# check_case WHAT: the assertions of a run_case with delegations on.
check_case() {
	ids=$(sed -n 's/^nfs4: read delegation granted to client \([0-9a-f]*\)$/\1/p' "$SLOG" | sort -u)
	[[ -n "$ids" ]] || fail "$1: no read delegation granted (server log)"
	grep -q '^nfs4: CB_RECALL of a read delegation to client .*: sent$' "$SLOG" ||
		fail "$1: no CB_RECALL sent (server log)"
	grep -q '^nfs4: DELEGRETURN from client .*: NFS4_OK$' "$SLOG" ||
		fail "$1: no DELEGRETURN (server log)"
	((${DELEGRETURNS:-0} >= 1)) ||
		fail "$1: client A sent no DELEGRETURN (mountstats: '${DELEGRETURNS}')"
	grants=$(grep -c '^nfs4: read delegation granted' "$SLOG")
	recalls=$(grep -c '^nfs4: CB_RECALL of a read delegation to client .*: sent$' "$SLOG")
	log "$1: delegations granted: $grants, recalls sent: $recalls, DELEGRETURN from A: $DELEGRETURNS"
	# the second grant is run_case's precondition of the NFSv3 part
	((grants >= 2)) || fail "$1: only $grants delegation(s) granted: the NFSv3 recall was not tested"
	((recalls >= 2)) || fail "$1: A's second delegation was not recalled for the NFSv3 write"
	grep '^{"connections"' "$SLOG" | tail -n 1 | grep -q '"NFS3ERR_JUKEBOX":[1-9]' ||
		fail "$1: the NFSv3 change was never answered NFS3ERR_JUKEBOX"
	grep '^{"connections"' "$SLOG" | tail -n 1 | grep -q '"NFS4ERR_DELAY":[1-9]' ||
		fail "$1: B's OPEN was never answered NFS4ERR_DELAY"
	# CB_NULL for each of the two sessions (both have a back channel, on
	# whichever transport), and the CB_RECALL
	((BC_CALLS >= 3)) || fail "$1: only $BC_CALLS backchannel calls"
	# every grant is A's (B opens for writing: none for it)
	(($(wc -w <<<"$ids") == 1)) || fail "$1: delegations granted to more than A's client: $ids"
}

# ---------------------------------------------------------------- delegations on
run_case
check_case "A over $A_PROTO, B over $B_PROTO"
pass "A over $A_PROTO, B over $B_PROTO: a read delegation granted to A was recalled over A's $A_PROTO back channel when B opened the file for writing; A returned it ($DELEGRETURNS DELEGRETURN), B's OPEN waited (NFS4ERR_DELAY) and A read B's data; $BC_CALLS backchannel calls all answered"
if [[ $NFS_PROTO == tcp ]]; then
	# the other way round: the holder's session is on TCP, so its
	# CB_NULL and CB_RECALL travel over its TCP connection
	A_PROTO=tcp B_PROTO=rdma run_case
	A_PROTO=tcp B_PROTO=rdma check_case "A over tcp, B over rdma"
	(($(rnfsd_stat tcp_calls) > 0)) || fail "server counter tcp_calls is 0: nothing came over TCP"
	pass "A over TCP: its session's back channel is its TCP connection; the read delegation granted over TCP was recalled there (CB_RECALL over TCP) when the RDMA client B opened for writing; A returned it ($DELEGRETURNS DELEGRETURN); $BC_CALLS backchannel calls all answered"
fi

# ---------------------------------------------------------------- --no-delegations
run_case --no-delegations
grep -q '^nfs4: read delegation granted' "$SLOG" && fail "a delegation granted with --no-delegations"
grep -q '^nfs4: CB_RECALL' "$SLOG" && fail "a CB_RECALL sent with --no-delegations"
pass "--no-delegations: no delegation granted, no recall; A still reads B's data"
