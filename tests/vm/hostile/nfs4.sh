# SPDX-License-Identifier: MIT
# hostile-peers, part nfs4 (sourced by tests/vm/hostile-peers.sh; issue 33,
# finding 5).  The kernel client on CLIENT_ADDR mounts export A with
# vers=4.1 and holds a lock on a file (tests/vm/locker.py on the mount);
# the intruder on INTRUDER_ADDR sends EXCHANGE_ID with the client's owner
# string (read from the server's record file) and a new verifier, and no
# CREATE_SESSION after it (tests/vm/nfs4-exid.c):
#   1. as uid 0 with this host's name, the client's own principal (which
#      AUTH_SYS lets any host claim): a new incarnation (RFC 8881 18.35.5
#      case 5) from another host than the client's, while the client
#      holds state in its lease: NFS4ERR_CLID_INUSE (10017), so the
#      intruder gets no client id it could confirm with CREATE_SESSION;
#      the client's lock still excludes a server-local locker, its record
#      stays on disk, and it goes on working (a file written through the
#      mount reaches the server, its lock is released and taken again);
#   2. as uid 1000, another principal: NFS4ERR_CLID_INUSE (10017), the
#      lock still held.
# Before the fix the first EXCHANGE_ID freed the client's record: its lock
# went and its record was erased while the client went on unaware.
# Uses the driver's variables (SERVER_ADDR, INTRUDER_ADDR, EXPORT_A, STATE,
# SIG, SCRATCH, LOCKER, NFS_RDMA_PORT).

vm_kmod nfsv4
v4_mnt=/mnt/hostile-v4
v4_exid=$(rpcrdma_bin vm-nfs4-exid)
mkdir -p "$v4_mnt"
bounded 120 "mount -o vers=4.1" mount -t nfs -o "vers=4.1,proto=rdma,port=$NFS_RDMA_PORT" \
	"$SERVER_ADDR:$EXPORT_A" "$v4_mnt"
at_exit "kumount '$v4_mnt'"

v4_wait_file() { # PATH SECS WHAT
	local i
	for ((i = 0; i < $2 * 10; i++)); do
		[[ -e $1 ]] && return 0
		sleep 0.1
	done
	fail "$3: $1 did not appear in $2 s"
}
# a server-local write lock on bytes 0..9 of the file: 0 taken, 3 refused
v4_local_lock() { timeout -k 10 60 $LOCKER "$EXPORT_A/v4-f" w 0 10 nb; }
v4_expect_held() { # WHEN
	local rc=0
	v4_local_lock || rc=$?
	((rc == 3)) || fail "$1: a server-local locker got the client's lock (status $rc)"
}
# the owners in the server's record file (RNC4: magic, version, count,
# then length + owner bytes), one hex string per line
v4_owners() {
	python3 - "$STATE/nfs4-clients" <<'PY'
import struct, sys
b = open(sys.argv[1], 'rb').read()
n = struct.unpack('>I', b[8:12])[0]
pos = 12
for _ in range(n):
    l = struct.unpack('>I', b[pos:pos + 4])[0]
    print(b[pos + 4:pos + 4 + l].hex())
    pos += 4 + l
PY
}

printf '%4096s' x >"$v4_mnt/v4-f"
timeout -k 10 300 $LOCKER "$v4_mnt/v4-f" w 0 10 nb --ready "$SIG/v4-h" --release "$SIG/v4-h.go" &
v4_holder=$!
at_exit "touch '$SIG/v4-h.go'; kill $v4_holder 2>/dev/null"
v4_wait_file "$SIG/v4-h" 60 "the NFSv4.1 client's lock on $v4_mnt/v4-f"
v4_expect_held "before the intruder"
[[ -f $STATE/nfs4-clients ]] || fail "no NFSv4.1 record file in $STATE"
v4_before=$(v4_owners)
[[ $(wc -l <<<"$v4_before") -eq 1 && -n $v4_before ]] ||
	fail "expected one NFSv4.1 client record, found: $v4_before"
python3 -c 'import sys; open(sys.argv[2], "wb").write(bytes.fromhex(sys.argv[1]))' \
	"$v4_before" "$SCRATCH/v4-owner"
log "the client's owner: $(tr -c '[:print:]' '.' <"$SCRATCH/v4-owner")"

# 1. the client's principal, a new verifier, no CREATE_SESSION
v4_out=$(bounded 60 "EXCHANGE_ID from $INTRUDER_ADDR as uid 0" \
	"$v4_exid" "$SERVER_ADDR" "$INTRUDER_ADDR" 0 "$SCRATCH/v4-owner" 0123456789abcdef)
[[ $v4_out == 10017 ]] ||
	fail "EXCHANGE_ID with the client's principal from another host: $v4_out, expected 10017 (CLID_INUSE)"
sleep 1 # the record file is written before a reply; nothing should change
v4_expect_held "after the intruder's EXCHANGE_ID"
[[ $(v4_owners) == "$v4_before" ]] || fail "the client's record changed: $(v4_owners)"
head -c 100000 /dev/urandom >"$SCRATCH/v4-data"
bounded 60 "write through the mount" cp "$SCRATCH/v4-data" "$v4_mnt/v4-after"
bounded 60 "sync" sync -f "$v4_mnt/v4-after"
cmp -s "$SCRATCH/v4-data" "$EXPORT_A/v4-after" ||
	fail "a file written through the mount after the intruder's EXCHANGE_ID differs on the server"
pass "an EXCHANGE_ID with the client's owner and principal and a new verifier from another host: NFS4ERR_CLID_INUSE; its lock, record and session left alone"

# 2. another principal
v4_out=$(bounded 60 "EXCHANGE_ID from $INTRUDER_ADDR as uid 1000" \
	"$v4_exid" "$SERVER_ADDR" "$INTRUDER_ADDR" 1000 "$SCRATCH/v4-owner" fedcba9876543210)
[[ $v4_out == 10017 ]] || fail "EXCHANGE_ID from another principal: $v4_out, expected 10017 (CLID_INUSE)"
v4_expect_held "after the second EXCHANGE_ID"
pass "an EXCHANGE_ID with the client's owner from another principal: NFS4ERR_CLID_INUSE"

# the client still locks: release, and lock again from the client
touch "$SIG/v4-h.go"
wait "$v4_holder" || fail "the NFSv4.1 lock holder ended with status $?"
bounded 60 "the client locks again" $LOCKER "$v4_mnt/v4-f" w 0 10 nb
pass "the NFSv4.1 client released its lock and took it again"
kumount "$v4_mnt"
