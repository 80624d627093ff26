#!/bin/bash
# bench/host-meta-prof.sh MODE BUILD [NFILES]: rpcrdma-nfsd's single-process
# metadata path on this host, no VM, no RDMA device (bench/rdmacm_stub.c
# stands in for the listener): NFSv3 over TCP on loopback, a tmpfs export,
# bench/host_meta_client.py making NFILES x (CREATE exclusive, SETATTR,
# GETATTR, LOOKUP, RENAME, REMOVE) after 20 files of warm-up.  Figures, not
# assertions.  MODE:
#   callgrind  instructions of the server (valgrind --tool=callgrind,
#              counters zeroed after the warm-up) into $OUT/callgrind.out.1;
#              read it with callgrind_annotate --inclusive=yes
#   strace     system calls (strace -c -f) into $OUT/strace.txt
#   cpu        the server's CPU time (schedstat) and context switches per RPC
# OUT (default /tmp/host-meta-prof), PORT (22049; MOUNT on PORT-1).
set -euo pipefail
MODE=$1 B=$2 N=${3:-200}
HERE=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-/tmp/host-meta-prof} PORT=${PORT:-22049}
EXP=${EXP:-/dev/shm/host-meta-prof-exp}
mkdir -p "$OUT/state"
rm -rf "$EXP" && mkdir -p "$EXP"
cc -shared -fPIC -O2 -o "$OUT/rdmacm_stub.so" "$HERE/rdmacm_stub.c"
[[ -s $OUT/key ]] || rm -f "$OUT/key"
ARGS=(-e "$EXP" --tcp-port "$PORT" -m $((PORT - 1)) --no-nfs4 --no-locking --grace 0
	--no-root-squash --control none -k "$OUT/key" --state-dir "$OUT/state" -t 4 --memory 256M)
case $MODE in
callgrind) WRAP=(valgrind --tool=callgrind --callgrind-out-file="$OUT/callgrind.out") ;;
strace | cpu) WRAP=() ;;
*) echo "MODE: callgrind, strace or cpu" >&2; exit 2 ;;
esac
LD_PRELOAD=$OUT/rdmacm_stub.so "${WRAP[@]}" "$B/rpcrdma-nfsd" "${ARGS[@]}" >"$OUT/server.log" 2>&1 &
SRV=$!
trap 'kill $SRV 2>/dev/null; wait $SRV 2>/dev/null || true' EXIT
for _ in $(seq 300); do ss -ltn | grep -q ":$PORT " && break; sleep 0.2; done
client() { python3 "$HERE/host_meta_client.py" "$PORT" $((PORT - 1)) "$EXP" "$1"; }
client 20 >/dev/null
cpu() { cat /proc/$SRV/task/*/schedstat | awk '{ s += $1 } END { print s }'; }
csw() { grep -h ctxt_switches /proc/$SRV/task/*/status | awk '{ s += $2 } END { print s }'; }
case $MODE in
callgrind)
	callgrind_control -z $SRV >/dev/null
	client "$N"
	callgrind_control -d $SRV >/dev/null
	echo "$OUT/callgrind.out.1: $((N * 6)) RPCs" ;;
strace)
	strace -c -f -p $SRV -o "$OUT/strace.txt" & ST=$!
	sleep 1
	client "$N"
	sleep 0.3; kill -INT $ST; wait $ST || true
	echo "$((N * 6)) RPCs"; cat "$OUT/strace.txt" ;;
cpu)
	c0=$(cpu) s0=$(csw)
	client "$N"
	c1=$(cpu) s1=$(csw)
	echo "server CPU $(((c1 - c0) / N / 6)) ns per RPC, $(((s1 - s0) * 100 / N / 6)) context switches per 100 RPCs" ;;
esac
