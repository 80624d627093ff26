#!/usr/bin/env bash
# connection-flood: rpcrdma-nfsd --max-connections 32
# --max-connections-per-host 24 under a flood of 100 connection attempts
# from the client's address while a kernel NFS/RDMA mount (same address) is
# writing.  A loop copies an 8 MiB file of known random content into the
# mount again and again (cp, then fsync through dd; six file names in turn);
# meanwhile `rpcrdma-probe --connections 100 --hold 30` connects.  Expected:
# the server accepts connections from that address up to 24 in all, the
# kernel client's counting (K, normally 1), so the probe has connected ==
# 24 - K, refused == 100 - connected (RDMA_CM_EVENT_REJECTED), failed 0;
# while the flood's connections are held, a probe from a second address on
# the link (OTHER_ADDR) gets the 8 places left (--connections 8: exit 0,
# all answered), so a flood from one host leaves room for another; the
# server is still running, its conns_refused and conns_refused_host
# counters are >= the flood's refused; every file the loop wrote is
# byte-exact (through the mount after a cache drop, and the server's
# copy).  After the flood the
# probe's connections are released (conns_open back to K) and a second
# `rpcrdma-probe --connections 8 --hold 0` succeeds fully (exit 0).  After
# the unmount conns_open is 0 and every gauge is back at its value right
# after the start; SIGTERM exits 0.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
vm_require_guest

NFSD=$(rpcrdma_bin rpcrdma-nfsd)
PROBE=$(rpcrdma_bin rpcrdma-probe)
EXPORT=$SCRATCH/export
SLOG=$SCRATCH/rpcrdma-nfsd.log
MNT=/mnt/flood
MOPTS=mountport=$MOUNT_PORT,mountproto=tcp
MAX=32
PER_HOST=24
FLOOD=100
HOLD=30
OTHER_ADDR=192.0.2.4
OUT=$SCRATCH/flood
mkdir -p "$OUT"

head -c 8388608 /dev/urandom >"$SCRATCH/orig" || fail "make the 8 MiB file"
grep -q -- '--max-connections' <<<"$("$NFSD" --help 2>&1)" ||
	log "note: this rpcrdma-nfsd does not list --max-connections in its --help"
# ---- a second client address on the same link
ip addr add "$OTHER_ADDR/24" dev "${RPCRDMA_NETDEV:-rr0}" ||
	fail "cannot add $OTHER_ADDR to ${RPCRDMA_NETDEV:-rr0}"
at_exit "ip addr del '$OTHER_ADDR/24' dev '${RPCRDMA_NETDEV:-rr0}' 2>/dev/null"

rnfsd_start "$NFSD" "$EXPORT" "$SLOG" --no-root-squash --stats --max-connections "$MAX" \
	--max-connections-per-host "$PER_HOST"
rnfsd_counters_now
BASE=$(rnfsd_counters_line)
log "counters at start: $BASE"

kmount "$SERVER_ADDR:$EXPORT" "$MNT" "$MOPTS"
# With the server gone, anything touching the hard mount (kumount's
# mountpoint check too) blocks: detach it first when the test fails.
on_failure "kill -0 $RNFSD_PID 2>/dev/null || { echo 'rpcrdma-nfsd is gone: lazy unmount of $MNT'; timeout -k 5 20 umount -f -l '$MNT'; }"
ls "$MNT" >/dev/null
rnfsd_counters_now
K=$(rnfsd_counter "$(rnfsd_counters_line)" conns_open)
((K >= 1)) || fail "conns_open is '$K' with the kernel mount up, expected >= 1"
log "the kernel client holds $K connection(s)"

# ---- the writer: copies of orig into the mount until told to stop
STOP=$OUT/stop
writer() {
	local i=0
	while [[ ! -e "$STOP" ]]; do
		cp "$SCRATCH/orig" "$MNT/w.$((i % 6))" || { echo "cp $i failed" >&2; return 1; }
		dd if=/dev/null of="$MNT/w.$((i % 6))" conv=notrunc,fsync status=none ||
			{ echo "fsync $i failed" >&2; return 1; }
		echo "$i"
		i=$((i + 1))
	done
}
timeout -k 10 200 bash -c "$(declare -f writer); STOP='$STOP' SCRATCH='$SCRATCH' MNT='$MNT' writer" \
	>"$OUT/written" 2>"$OUT/writer.err" &
WRITER=$!
# SIGKILL to timeout's process group: a cp blocked on the hard mount ends only so.
at_exit "touch '$STOP'; kill -KILL -- -$WRITER 2>/dev/null"
on_failure "echo '---- writer ----'; cat '$OUT/writer.err'; tail -n 3 '$OUT/written'"
# Let it get going.
for ((i = 0; i < 60; i++)); do
	[[ -s "$OUT/written" ]] && break
	kill -0 "$WRITER" 2>/dev/null || fail "the writer ended early: $(cat "$OUT/writer.err")"
	sleep 1
done
[[ -s "$OUT/written" ]] || fail "the writer wrote no file in 60 s"
log "the writer is running ($(wc -l <"$OUT/written") file(s) written)"

# ---- the flood, from the client's address, held while another address connects
rc=0
t0=$SECONDS
timeout -k 10 240 "$PROBE" --verbose --connections "$FLOOD" --hold "$HOLD" \
	--source "$CLIENT_ADDR" "$SERVER_ADDR" >"$OUT/probe.json" 2>"$OUT/probe.err" &
FLOODER=$!
at_exit "kill $FLOODER 2>/dev/null"
on_failure "echo '---- rpcrdma-probe (flood) stderr, last 30 lines ----'; tail -n 30 '$OUT/probe.err'"
# The flood's share is taken once conns_open is PER_HOST (the kernel's K
# included) and its refusals are counted.
for ((i = 0; ; i++)); do
	rnfsd_counters_now
	line=$(rnfsd_counters_line)
	open=$(rnfsd_counter "$line" conns_open)
	rh=$(rnfsd_counter "$line" conns_refused_host)
	((open == PER_HOST && rh >= FLOOD - (PER_HOST - K))) && break
	kill -0 "$FLOODER" 2>/dev/null || fail "the flood ended before its share was open (conns_open $open, conns_refused_host $rh)"
	((i < 120)) || fail "conns_open $open, conns_refused_host $rh 120 s into the flood (expected $PER_HOST, >= $((FLOOD - (PER_HOST - K))))"
	sleep 1
done
pass "the flood holds its address's share: conns_open $open, conns_refused_host $rh after $((SECONDS - t0)) s"
orc=0
timeout -k 10 120 "$PROBE" --connections $((MAX - PER_HOST)) --hold 0 --source "$OTHER_ADDR" \
	"$SERVER_ADDR" >"$OUT/other.json" 2>"$OUT/other.err" || orc=$?
log "second address during the flood: status $orc: $(cat "$OUT/other.json") $(tail -n 3 "$OUT/other.err")"
kill -0 "$FLOODER" 2>/dev/null || fail "the flood's hold had ended before the second address was done: raise HOLD"
((orc == 0)) || fail "rpcrdma-probe --connections $((MAX - PER_HOST)) from $OTHER_ADDR during the flood exited with status $orc"
pass "during the flood, $OTHER_ADDR connected $((MAX - PER_HOST)) times (the places the flood's address could not take), all answered"
rc=0
wait "$FLOODER" || rc=$?
log "flood: status $rc after $((SECONDS - t0)) s: $(cat "$OUT/probe.json")"
((rc == 0 || rc == 1)) || fail "rpcrdma-probe (flood) exited with status $rc"
python3 - "$OUT/probe.json" "$FLOOD" "$PER_HOST" "$K" <<'EOF' || fail "rpcrdma-probe's JSON after the flood: $(cat "$OUT/probe.json")"
import json, sys
d = json.load(open(sys.argv[1]))
n, mx, k = (int(a) for a in sys.argv[2:5])
want = {"connected": mx - k, "refused": n - (mx - k), "failed": 0, "null_ok": mx - k}
bad = [f"{key} {d.get(key)} (expected {v})" for key, v in want.items() if d.get(key) != v]
print("; ".join(bad))
sys.exit(1 if bad else 0)
EOF
REFUSED=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["refused"])' "$OUT/probe.json")
((rc == 1)) || fail "rpcrdma-probe (flood) exited with status $rc with $REFUSED refused (expected 1)"
pass "flood: $((PER_HOST - K)) connected (+ $K of the kernel client = $PER_HOST from $CLIENT_ADDR), $REFUSED refused, 0 failed"
kill -0 "$RNFSD_PID" 2>/dev/null || fail "rpcrdma-nfsd died in the flood"
rnfsd_counters_now
line=$(rnfsd_counters_line)
log "counters after the flood: $line"
v=$(rnfsd_counter "$line" conns_refused)
[[ -n "$v" ]] || fail "the server reports no conns_refused counter"
((v >= REFUSED)) || fail "server counter conns_refused is $v, the probe saw $REFUSED refused"
pass "server counter conns_refused $v >= $REFUSED"
v=$(rnfsd_counter "$line" conns_refused_host)
((v >= REFUSED)) || fail "server counter conns_refused_host is '$v', the probe saw $REFUSED refused by the per-host limit"
pass "server counter conns_refused_host $v >= $REFUSED"

# ---- the writer's data
touch "$STOP"
wrc=0
wait "$WRITER" || wrc=$?
((wrc == 0)) || fail "the writer failed (status $wrc): $(cat "$OUT/writer.err")"
nw=$(wc -l <"$OUT/written")
((nw >= 1)) || fail "the writer wrote no file"
drop_caches
for ((i = 0; i < nw && i < 6; i++)); do
	compare_files "$SCRATCH/orig" "$MNT/w.$i"
	compare_files "$SCRATCH/orig" "$EXPORT/w.$i"
done
pass "the kernel client wrote $nw x 8 MiB during the flood (into $((nw < 6 ? nw : 6)) files in turn), each file byte-exact (mount and server)"

# ---- after the flood: the probe's connections released, 8 more succeed
t0=$SECONDS
while :; do
	rnfsd_counters_now
	v=$(rnfsd_counter "$(rnfsd_counters_line)" conns_open)
	[[ "$v" == "$K" ]] && break
	((SECONDS - t0 < 60)) || fail "conns_open is $v 60 s after the flood, expected $K (the kernel client's)"
	sleep 1
done
pass "conns_open back at $K after the flood ($((SECONDS - t0)) s)"
rc=0
timeout -k 10 120 "$PROBE" --connections 8 --hold 0 --source "$CLIENT_ADDR" "$SERVER_ADDR" \
	>"$OUT/probe8.json" 2>"$OUT/probe8.err" || rc=$?
log "second probe: status $rc: $(cat "$OUT/probe8.json") $(cat "$OUT/probe8.err")"
((rc == 0)) || fail "rpcrdma-probe --connections 8 after the flood exited with status $rc"
pass "rpcrdma-probe --connections 8 after the flood: all connected and answered"

# ---- all gone
kumount "$MNT"
rnfsd_wait_gauges_baseline "$BASE" 60
rnfsd_term
