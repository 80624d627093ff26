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
# Write, Read Request and Read Response frames: still none malformed.  The
# client side: rpcrdma-nfs --capture of a put, a get and a listing, decoded
# the same way.
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
# summarize FILE: one tshark pass over FILE (no process substitution: the
# guest has no /dev/fd); prints "frames not_rpcrdma
# bad procs reads writes replies read_bytes write_bytes wr rq rs": frames
# that are not RPC-over-RDMA, frames malformed or with an expert error
# (PI_ERROR), the NFS procedures of decoded calls (comma list, - if none),
# calls with Read chunks, replies (from the server) with Write chunks and
# with a Reply chunk, the bytes of the calls' Read segments (they come first
# in a header, one position each), the bytes of every segment the replies
# echo (what was written), and the RDMA WRITE ONLY, READ REQUEST and READ
# RESPONSE ONLY frames.
summarize() {
	timeout -k 5 240 tshark -n -r "$1" -T fields -E separator='|' -e ip.src -e frame.protocols \
		-e _ws.malformed -e _ws.expert.severity -e rpc.msgtyp -e nfs.procedure_v3 \
		-e rpcordma.reads_count -e rpcordma.writes_count -e rpcordma.reply_count \
		-e rpcordma.position -e rpcordma.rdma_length -e infiniband.bth.opcode \
		>/tmp/fields 2>/dev/null || fail "tshark -r $1"
	awk -F'|' -v srv="$SERVER_ADDR" '
		{ n++ }
		$2 !~ /:rpcordma(:|$)/ { notr++ }
		{ e = 0; k = split($4, sv, ","); for (i = 1; i <= k; i++) if (sv[i] + 0 >= 8388608) e = 1 }
		$3 != "" || e { bad++ }
		$5 == "0" && $6 != "" { p[$6] = 1 }
		$1 != srv && $7 + 0 > 0 { reads++; np = split($10, ps, ","); split($11, ls, ",");
					  for (i = 1; i <= np; i++) rb += ls[i] }
		$1 == srv && $8 + 0 > 0 { writes++ }
		$1 == srv && $9 + 0 > 0 { replies++ }
		$1 == srv { k = split($11, ls, ","); for (i = 1; i <= k; i++) wb += ls[i] }
		$12 == "10" { wr++ } $12 == "12" { rq++ } $12 == "16" { rs++ }
		END { s = ""; for (k in p) s = s (s == "" ? "" : ",") k
		      printf "%d %d %d %s %d %d %d %d %d %d %d %d\n", n, notr, bad, s == "" ? "-" : s,
			     reads, writes, replies, rb, wb, wr, rq, rs }' /tmp/fields
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
log "tshark, the first frames:"
timeout -k 5 60 tshark -n -r "$CAP" -c 12 2>/dev/null || true
summarize "$CAP" >/tmp/summary
read -r frames notr bad seen reads writes replies read_bytes write_bytes _ </tmp/summary
((frames > 100)) || fail "only $frames frames"
((notr == 0)) || fail "$notr frames are not RPC-over-RDMA"
((bad == 0)) || fail "$bad frames malformed or with errors"
pass "tshark: all $frames frames are RPC-over-RDMA, none malformed"

declare -A procnum=([GETATTR]=1 [SETATTR]=2 [LOOKUP]=3 [ACCESS]=4 [READLINK]=5 [READ]=6
	[WRITE]=7 [CREATE]=8 [MKDIR]=9 [SYMLINK]=10 [MKNOD]=11 [REMOVE]=12 [RMDIR]=13
	[RENAME]=14 [LINK]=15 [READDIR]=16 [READDIRPLUS]=17 [FSSTAT]=18 [FSINFO]=19
	[PATHCONF]=20 [COMMIT]=21)
log "NFS procedures in the calls tshark decoded: $seen"
for op in "${ops[@]}"; do
	[[ ",$seen," == *",${procnum[$op]},"* ]] || fail "$op (${procnum[$op]}) used by the client but in no decoded call"
done
pass "every procedure the client used (${#ops[@]}) appears in a decoded NFS call"

((reads > 0 && writes > 0 && replies > 0)) ||
	fail "chunks: $reads calls with Read chunks, $writes replies with Write chunks, $replies with a Reply chunk"
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
# The client side: rpcrdma-nfs --capture of a put, a get and a listing.
NFS=$(rpcrdma_bin rpcrdma-nfs)
CCAP=/tmp/clnt.pcap
for c in "put /tmp/one.bin /one-again.bin" "get /one-again.bin /tmp/one-back.bin" "ls -l /"; do
	# shellcheck disable=SC2086
	bounded 120 "rpcrdma-nfs $c" "$NFS" --quiet --capture "$CCAP.${c%% *}" --mount-port "$MOUNT_PORT" \
		"$SERVER_ADDR:$EXPORT" $c >/dev/null
done
compare_files /tmp/one.bin /tmp/one-back.bin
rnfsd_term
log "$(grep "capture $CAP" "$SLOG.2")"
summarize "$CAP" >/tmp/summary
read -r frames notr bad _ _ _ _ _ _ wr rq rs </tmp/summary
((wr > 0 && rq > 0 && rq == rs)) || fail "RDMA frames: $wr WRITE ONLY, $rq READ REQUEST, $rs READ RESPONSE ONLY"
((bad == 0)) || fail "with --capture-data: $bad of $frames frames malformed or with errors"
pass "--capture-data 64: $wr RDMA WRITE ONLY, $rq READ REQUEST / RESPONSE pairs, none malformed"

for c in put get ls; do
	summarize "$CCAP.$c" >/tmp/summary
	read -r n notr bad calls _ </tmp/summary
	log "rpcrdma-nfs $c: $n frames, NFS procedures in calls: $calls"
	((n > 0 && notr == 0 && bad == 0)) ||
		fail "rpcrdma-nfs --capture ($c): $n frames, $notr not RPC-over-RDMA, $bad malformed"
	case $c in
	put) want=7 ;;  # WRITE
	get) want=6 ;;  # READ
	ls) want=17 ;;  # READDIRPLUS
	esac
	# A WRITE with a Read chunk is decoded only with its data (not in a
	# client capture: the server reads it), so put's WRITE may not show.
	[[ ",$calls," == *",$want,"* ]] || [[ $c == put ]] ||
		fail "rpcrdma-nfs --capture ($c): procedure $want not in a decoded call"
done
pass "rpcrdma-nfs --capture: put, get and ls captures all RPC-over-RDMA, none malformed, READ and READDIRPLUS calls decoded"
