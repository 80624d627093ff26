# SPDX-License-Identifier: MIT
# hostile-peers, part mount (sourced by tests/vm/hostile-peers.sh; issue 33,
# finding 4).  MOUNT, NLM and NSM share one TCP thread (src/nfs3/rpc_tcp.c).
# While the intruder on INTRUDER_ADDR (listed on export A)
#   - drip-feeds a MOUNT call, one byte per 100 ms of a 2000-byte record,
#   - stops after the first byte of a record on another connection,
#   - opens 300 more connections and leaves them idle,
# and 20 unlisted addresses open 10 connections each, the client on
# CLIENT_ADDR gets MOUNT NULL (its own client) and a real kernel mount of export B
# no slower than before the intruder started (bounds: +1 s for NULL, +2 s
# for the mount), and then:
#   - the intruder holds at most 16 connections (the per-address cap), the
#     rest closed at once; every unlisted connection closed at once;
#   - the drip-feeder and the silent peer are closed 10 s (the record
#     deadline) after their first byte, give or take 3 s;
#   - the client's mount of export A still works.
# Uses the driver's variables (SERVER_ADDR, CLIENT_ADDR, INTRUDER_ADDR,
# MOUNT_PORT, NFS_RDMA_PORT, EXPORT_A, EXPORT_B, MNT, SCRATCH).

MT_DIR=$SCRATCH/mount-part
MT_MNT=/mnt/hostile-mount-b
MT_UNLISTED=()
mkdir -p "$MT_DIR" "$MT_MNT"
for i in $(seq 100 119); do
	ip addr add "192.0.2.$i/24" dev "${RPCRDMA_NETDEV:-rr0}" ||
		fail "cannot add 192.0.2.$i"
	at_exit "ip addr del 192.0.2.$i/24 dev ${RPCRDMA_NETDEV:-rr0} 2>/dev/null"
	MT_UNLISTED+=("192.0.2.$i")
done

# mt_ms FUNC: run FUNC (its commands bounded), print the milliseconds it took
mt_ms() {
	local t0 t1
	t0=$(date +%s%N)
	"$1" >/dev/null || fail "$1 failed"
	t1=$(date +%s%N)
	echo $(((t1 - t0) / 1000000))
}
# mt_null: MOUNT NULL from CLIENT_ADDR on a new connection, its reply
# checked; prints the milliseconds from connect to reply (rpcinfo -n asks
# rpcbind, where this server is not registered)
mt_null() {
	timeout -k 10 60 python3 - "$SERVER_ADDR" "$MOUNT_PORT" "$CLIENT_ADDR" <<'PY'
import socket, struct, sys, time
s = socket.socket()
t0 = time.monotonic()
s.bind((sys.argv[3], 0))
s.connect((sys.argv[1], int(sys.argv[2])))
s.sendall(struct.pack(">IIIIIIIIIII", 0x80000028, 9, 0, 2, 100005, 3, 0, 0, 0, 0, 0))
want = struct.pack(">IIIIIII", 0x80000018, 9, 1, 0, 0, 0, 0)
got = b""
while len(got) < len(want):
    b = s.recv(len(want) - len(got))
    if not b:
        sys.exit("closed after %r" % got)
    got += b
if got != want:
    sys.exit("reply %r" % got)
print(int((time.monotonic() - t0) * 1000))
PY
}
mt_mount() {
	timeout -k 10 60 mount -t nfs -o "vers=3,proto=rdma,port=$NFS_RDMA_PORT,mountport=$MOUNT_PORT,mountproto=tcp,nolock" \
		"$SERVER_ADDR:$EXPORT_B" "$MT_MNT" && ls "$MT_MNT" >/dev/null &&
		timeout -k 10 60 umount "$MT_MNT"
}
at_exit "kumount '$MT_MNT'"

# ---- before: the times without the intruder ----
base_null=$(mt_null) || fail "MOUNT NULL without the intruder"
base_mount=$(mt_ms mt_mount)
log "without the intruder: MOUNT NULL $base_null ms, mount of B $base_mount ms"

# ---- the intruder ----
python3 - "$SERVER_ADDR" "$MOUNT_PORT" "$INTRUDER_ADDR" "$MT_DIR" "${MT_UNLISTED[@]}" \
	>"$MT_DIR/peer.log" 2>&1 <<'PY' &
import os, select, socket, struct, sys, threading, time

server, port, me, out = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
unlisted = sys.argv[5:]

stalled = 0  # connects that timed out (a server that stopped accepting)

def conn(src):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    s.bind((src, 0))
    s.settimeout(3)
    s.connect((server, port))
    s.settimeout(None)
    return s

def more(src, n, into):
    """n more connections from src, until three connects have timed out"""
    global stalled
    for _ in range(n):
        if stalled >= 3:
            return
        try:
            into.append(conn(src))
        except OSError:
            stalled += 1

def closed(s):
    """has the server closed s (EOF or reset)?"""
    r, _, _ = select.select([s], [], [], 0)
    if not r:
        return False
    try:
        return s.recv(1, socket.MSG_DONTWAIT) == b""
    except (ConnectionResetError, BrokenPipeError):
        return True
    except BlockingIOError:
        return False

# a MOUNT v3 NULL call (RFC 5531 section 9) in a 2000-byte last fragment
rec = struct.pack(">IIIIIIIIIII", 0x80000000 | 2000, 0x1234, 0, 2, 100005, 3, 0,
                  0, 0, 0, 0) + bytes(1960)
res = {}

def drip(s):
    t0 = time.monotonic()
    res["drip_sent"] = 0
    for b in rec:
        try:
            s.send(bytes([b]))
        except (BrokenPipeError, ConnectionResetError):
            break
        res["drip_sent"] += 1
        time.sleep(0.1)
        if closed(s):
            break
    res["drip_closed_after"] = time.monotonic() - t0

def silent(s):
    s.send(rec[:1])
    t0 = time.monotonic()
    while time.monotonic() - t0 < 40 and not closed(s):
        time.sleep(0.05)
    res["silent_closed_after"] = time.monotonic() - t0

# these two first: the idle ones beyond the cap are the ones refused
threads = [threading.Thread(target=drip, args=(conn(me),)),
           threading.Thread(target=silent, args=(conn(me),))]
for t in threads:
    t.start()
idle = []
more(me, 300, idle)
others = []
for a in unlisted:
    more(a, 10, others)
res["connects_stalled"] = stalled
time.sleep(2)  # the server's closes at once have arrived by then
res["idle_held"] = sum(1 for s in idle if not closed(s))
res["unlisted_held"] = sum(1 for s in others if not closed(s))
while res.get("drip_sent", 0) < 30 and "drip_closed_after" not in res:
    time.sleep(0.05)
open(os.path.join(out, "ready"), "w").close()
for t in threads:
    t.join()
with open(os.path.join(out, "result"), "w") as f:
    for k, v in sorted(res.items()):
        f.write("%s=%s\n" % (k, v if isinstance(v, int) else "%.1f" % v))
PY
mt_peer=$!
at_exit "kill $mt_peer 2>/dev/null"
for _ in $(seq 300); do [[ -e $MT_DIR/ready ]] && break; sleep 0.1; done
[[ -e $MT_DIR/ready ]] || fail "the intruder did not get going: $(cat "$MT_DIR/peer.log")"

# ---- during: the client's calls ----
null_ms=$(mt_null) || fail "MOUNT NULL beside the intruder"
mount_ms=$(mt_ms mt_mount)
log "beside the intruder: MOUNT NULL $null_ms ms, mount of B $mount_ms ms"
((null_ms <= base_null + 1000)) ||
	fail "MOUNT NULL took $null_ms ms beside the intruder ($base_null ms without)"
((mount_ms <= base_mount + 2000)) ||
	fail "the mount of B took $mount_ms ms beside the intruder ($base_mount ms without)"
pass "a drip-feeding, a silent and 300 idle MOUNT peers do not delay the client's MOUNT NULL or mount"

# ---- after: what the server did with the intruder's connections ----
for _ in $(seq 400); do [[ -e $MT_DIR/result ]] && break; sleep 0.1; done
[[ -e $MT_DIR/result ]] || fail "the intruder did not finish: $(cat "$MT_DIR/peer.log")"
log "intruder: $(tr '\n' ' ' <"$MT_DIR/result")"
declare -A mt
while IFS='=' read -r k v; do mt[$k]=$v; done <"$MT_DIR/result"
((${mt[idle_held]} <= 14)) ||
	fail "the intruder holds ${mt[idle_held]} idle connections (cap 16 with its two others)"
((${mt[connects_stalled]} == 0)) ||
	fail "${mt[connects_stalled]} of the intruder's connects timed out (the server stopped accepting)"
((${mt[unlisted_held]} == 0)) ||
	fail "${mt[unlisted_held]} connections from unlisted addresses were not closed"
for k in drip_closed_after silent_closed_after; do
	s=${mt[$k]%.*}
	((s >= 7 && s <= 13)) || fail "$k=${mt[$k]} s, expected the record deadline (10 s)"
done
pass "the intruder held ${mt[idle_held]} idle connections, unlisted ones none; drip closed after ${mt[drip_closed_after]} s, silent after ${mt[silent_closed_after]} s"
bounded 30 "ls $MNT after the mount part" ls "$MNT" >/dev/null
