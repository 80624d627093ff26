#!/usr/bin/env bash
# capture: rpcrdma-nfsd --capture under a kernel-client workout (large and
# small writes and reads, a 400-entry listing whose reply comes through the
# Reply chunk, a symlink), then tshark decodes the file with Wireshark's own
# dissectors: every frame is RPC-over-RDMA, no frame is malformed, every NFS
# procedure the client used (its /proc/self/mountstats) appears in a call,
# Read, Write and Reply chunks are shown, and the chunk lengths add up to the
# server's counters (rdma_read_bytes: the Read segments of the calls;
# rdma_write_bytes: the Write and Reply chunk segments of the replies, which
# echo the bytes written).  A second run with --capture-data 64 adds RDMA
# Write, Read Request and Read Response frames: still none malformed.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
vm_require_guest

NFSD=$(rpcrdma_bin rpcrdma-nfsd)
EXPORT=$SCRATCH/export
MNT=/mnt/c
SLOG=/tmp/rpcrdma-nfsd.log
CAP=/tmp/nfsd.pcap
MOPTS=mountport=$MOUNT_PORT,mountproto=tcp

command -v tshark >/dev/null || fail "tshark is not installed (scripts/install-deps --vm-only)"
export HOME=/tmp # tshark keeps its profile there
# tshark_n FILTER: frames of $CAP matching the display filter FILTER.
tshark_n() {
	timeout -k 5 120 tshark -n -r "$CAP" -Y "$1" 2>/dev/null | wc -l
}

mkdir -p "$EXPORT"
chmod 1777 "$EXPORT"
# Keep the capture for a look when the test fails (the build tree is the host's).
on_failure "cp '$CAP' '$RPCRDMA_BUILD_DIR/vm-capture-failed.pcap' 2>/dev/null && echo 'capture kept: $RPCRDMA_BUILD_DIR/vm-capture-failed.pcap'"
rnfsd_start "$NFSD" "$EXPORT" "$SLOG" --stats --capture "$CAP"
kmount "$SERVER_ADDR:$EXPORT" "$MNT" "$MOPTS"

# ---- workout
head -c $((4 << 20)) /dev/urandom >/tmp/big.bin
bounded 120 "write 4 MiB" cp /tmp/big.bin "$MNT/big.bin"
echo "a small write" >"$MNT/small.txt"
mkdir "$MNT/dir"
for i in $(seq 1 400); do : >"$MNT/dir/an-entry-with-a-long-name-to-fill-the-reply-$i"; done
ln -s small.txt "$MNT/link"
bounded 60 sync sync
drop_caches
n=$(bounded 60 "ls dir" ls -l "$MNT/dir" | wc -l)
((n == 401)) || fail "ls -l shows $n lines, expected 401"
[[ "$(readlink "$MNT/link")" == small.txt ]] || fail "readlink"
[[ "$(cat "$MNT/small.txt")" == "a small write" ]] || fail "small read"
compare_files /tmp/big.bin "$MNT/big.bin"
ops=()
for op in GETATTR SETATTR LOOKUP ACCESS READLINK READ WRITE CREATE MKDIR SYMLINK MKNOD \
	  REMOVE RMDIR RENAME LINK READDIR READDIRPLUS FSSTAT FSINFO PATHCONF COMMIT; do
	k=$(mountstats_ops "$MNT" "$op")
	((${k:-0} > 0)) && ops+=("$op")
done
log "procedures the client used: ${ops[*]}"
kumount "$MNT"
rnfsd_term
grep -q "capture $CAP: [0-9]* frames, [0-9]* bytes, 0 dropped, 0 write errors, 1 file" "$SLOG" ||
	fail "capture summary: $(grep 'capture ' "$SLOG")"
log "$(grep "capture $CAP" "$SLOG")"
pass "workout done; the capture lost nothing"

# ---- what tshark makes of it
frames=$(tshark_n 'frame')
log "tshark: $frames frames; the first ones:"
timeout -k 5 60 tshark -n -r "$CAP" 2>/dev/null | sed -n 1,12p
((frames > 100)) || fail "only $frames frames"
notr=$(tshark_n '!rpcordma')
((notr == 0)) || fail "$notr frames are not RPC-over-RDMA: $(timeout 60 tshark -n -r "$CAP" -Y '!rpcordma' 2>/dev/null | sed -n 1,3p)"
bad=$(tshark_n '_ws.malformed || _ws.expert.severity >= "error"')
((bad == 0)) || fail "$bad frames malformed or with errors: $(timeout 60 tshark -n -r "$CAP" -Y '_ws.malformed || _ws.expert.severity >= "error"' 2>/dev/null | sed -n 1,3p)"
pass "tshark: all $frames frames are RPC-over-RDMA, none malformed"

declare -A procnum=([GETATTR]=1 [SETATTR]=2 [LOOKUP]=3 [ACCESS]=4 [READLINK]=5 [READ]=6
	[WRITE]=7 [CREATE]=8 [MKDIR]=9 [SYMLINK]=10 [MKNOD]=11 [REMOVE]=12 [RMDIR]=13
	[RENAME]=14 [LINK]=15 [READDIR]=16 [READDIRPLUS]=17 [FSSTAT]=18 [FSINFO]=19
	[PATHCONF]=20 [COMMIT]=21)
seen=$(timeout -k 5 120 tshark -n -r "$CAP" -Y 'nfs && rpc.msgtyp == 0' -T fields \
	-e nfs.procedure_v3 2>/dev/null | sort -un | paste -sd ' ' -)
log "NFS procedures in the calls tshark decoded: $seen"
for op in "${ops[@]}"; do
	grep -qw "${procnum[$op]}" <<<"$seen" || fail "$op (${procnum[$op]}) used by the client but in no decoded call"
done
pass "every procedure the client used (${#ops[@]}) appears in a decoded NFS call"

reads=$(tshark_n 'rpcordma.reads_count > 0')
writes=$(tshark_n 'ip.src == 192.0.2.1 && rpcordma.writes_count > 0')
replies=$(tshark_n 'ip.src == 192.0.2.1 && rpcordma.reply_count > 0')
((reads > 0 && writes > 0 && replies > 0)) ||
	fail "chunks: $reads calls with Read chunks, $writes replies with Write chunks, $replies with a Reply chunk"
# Read segments come first in a call's header, one position each.
read_bytes=$(timeout -k 5 120 tshark -n -r "$CAP" -Y 'ip.src == 192.0.2.2 && rpcordma.reads_count > 0' \
	-T fields -E separator=';' -e rpcordma.position -e rpcordma.rdma_length 2>/dev/null |
	awk -F';' '{ n = split($1, p, ","); split($2, l, ","); for (i = 1; i <= n; i++) s += l[i] } END { print s + 0 }')
write_bytes=$(timeout -k 5 120 tshark -n -r "$CAP" -Y 'ip.src == 192.0.2.1' -T fields \
	-e rpcordma.rdma_length 2>/dev/null |
	awk -F',' '{ for (i = 1; i <= NF; i++) s += $i } END { print s + 0 }')
sr=$(rnfsd_stat rdma_read_bytes)
sw=$(rnfsd_stat rdma_write_bytes)
log "chunks: $reads calls with Read chunks ($read_bytes bytes), $writes replies with Write chunks, $replies with a Reply chunk ($write_bytes bytes written in all); server: rdma_read_bytes $sr, rdma_write_bytes $sw"
[[ "$read_bytes" == "$sr" ]] || fail "Read chunk lengths in the capture $read_bytes, server's rdma_read_bytes $sr"
[[ "$write_bytes" == "$sw" ]] || fail "Write and Reply chunk lengths in the replies $write_bytes, server's rdma_write_bytes $sw"
pass "Read, Write and Reply chunks shown, their lengths equal the server's counters"

# ---- second run: the first 64 bytes of every RDMA Read and Write
rm -f "$CAP"
rnfsd_start "$NFSD" "$EXPORT" "$SLOG.2" --capture "$CAP" --capture-data 64
kmount "$SERVER_ADDR:$EXPORT" "$MNT" "$MOPTS"
head -c $((1 << 20)) /dev/urandom >/tmp/one.bin
bounded 60 "write 1 MiB" cp /tmp/one.bin "$MNT/one.bin"
bounded 60 sync sync
drop_caches
compare_files /tmp/one.bin "$MNT/one.bin"
kumount "$MNT"
rnfsd_term
log "$(grep "capture $CAP" "$SLOG.2")"
wr=$(tshark_n 'infiniband.bth.opcode == 10')
rq=$(tshark_n 'infiniband.bth.opcode == 12')
rs=$(tshark_n 'infiniband.bth.opcode == 16')
((wr > 0 && rq > 0 && rq == rs)) || fail "RDMA frames: $wr WRITE ONLY, $rq READ REQUEST, $rs READ RESPONSE ONLY"
bad=$(tshark_n '_ws.malformed || _ws.expert.severity >= "error"')
((bad == 0)) || fail "with --capture-data: $bad frames malformed or with errors: $(timeout 60 tshark -n -r "$CAP" -Y '_ws.malformed || _ws.expert.severity >= "error"' 2>/dev/null | sed -n 1,3p)"
pass "--capture-data 64: $wr RDMA WRITE ONLY, $rq READ REQUEST / RESPONSE pairs, none malformed"
