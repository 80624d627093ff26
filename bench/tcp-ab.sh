#!/bin/bash
# bench/tcp-ab.sh: A/B over NFSv3/TCP in one guest (issue 36): rpcrdma-nfsd NEW
# (RPCRDMA_AB_NEW, default $RPCRDMA_BUILD_DIR) and OLD (RPCRDMA_AB_OLD: another
# build), the kernel nfsd, interleaved run by run (seq_read, seq_write, meta,
# rand_write: MB/s or ops/s, server CPU per MB/op, context switches per RPC), then
# strace -c of NEW over TCP and RDMA and of OLD.  Figures, not assertions.
# Run: vmslot env RPCRDMA_BUILD_DIR=B scripts/vm run --share DIR-OF-OLD-AND-OUT
#   --env RPCRDMA_AB_OLD=... --env RPCRDMA_AB_OUT=... -- bench/tcp-ab.sh
. "$(dirname "${BASH_SOURCE[0]}")/../tests/vm/lib.sh"
vm_require_guest
NEW=${RPCRDMA_AB_NEW:-$RPCRDMA_BUILD_DIR/rpcrdma-nfsd}
OLD=${RPCRDMA_AB_OLD:-/tmp/h/tcpperf/build-old/rpcrdma-nfsd}
REPS=${RPCRDMA_AB_REPS:-4}
MB=${RPCRDMA_AB_MB:-32}
FIGS=${RPCRDMA_AB_FIGS:-seq_read seq_write meta}
WHOS=${RPCRDMA_AB_WHOS:-new old k new256}
STRACE=${RPCRDMA_AB_STRACE:-1}
OUT=${RPCRDMA_AB_OUT:-/tmp/h/tcpperf/ab-$(date +%H%M%S)}
mkdir -p "$OUT"
CLK=$(getconf CLK_TCK)

knfsd_start "$SCRATCH/kexp"
MOUNT_PORT=20058 NFS_RDMA_PORT=20054 rnfsd_start "$NEW" "$SCRATCH/rnew" "$OUT/new.log" \
	--no-root-squash --threads 4 --tcp-port 20053 --handle-key "$SCRATCH/hk1" --stats
NEW_PID=$RNFSD_PID
if [[ " $WHOS " == *" old"* ]]; then
MOUNT_PORT=20068 NFS_RDMA_PORT=20064 rnfsd_start "$OLD" "$SCRATCH/rold" "$OUT/old.log" \
	--no-root-squash --threads 4 --tcp-port 20063 --handle-key "$SCRATCH/hk2" --stats
OLD_PID=$RNFSD_PID
fi
vm_kmod nfsv3
mnt() { # who src opts
	mkdir -p /mnt/$1
	timeout -k 10 120 mount -t nfs -o "vers=3,nolock,$3" "$2" /mnt/$1 || fail "mount $1"
	at_exit "kumount /mnt/$1"
	log "$1: $(awk -v m=/mnt/$1 '$2 == m { print $4 }' /proc/mounts)"
}
mnt k "$SERVER_ADDR:$SCRATCH/kexp" proto=tcp,port=2049
mnt new "$SERVER_ADDR:$SCRATCH/rnew" proto=tcp,port=20053,mountport=20058,mountproto=tcp
[[ -n ${OLD_PID:-} ]] && mnt old "$SERVER_ADDR:$SCRATCH/rold" proto=tcp,port=20063,mountport=20068,mountproto=tcp
# new1m / old1m: the same servers mounted again with 1 MiB calls, as make
# bench mounts them (a default mount takes FSINFO's 256 KiB preference)
[[ " $WHOS " == *" new1m "* ]] && mnt new1m "$SERVER_ADDR:$SCRATCH/rnew" proto=tcp,port=20053,mountport=20058,mountproto=tcp,rsize=1048576,wsize=1048576,nosharecache
[[ " $WHOS " == *" old1m "* ]] && mnt old1m "$SERVER_ADDR:$SCRATCH/rold" proto=tcp,port=20063,mountport=20068,mountproto=tcp,rsize=1048576,wsize=1048576,nosharecache
[[ " $WHOS " == *" new256 "* ]] && mnt new256 "$SERVER_ADDR:$SCRATCH/rnew" proto=tcp,port=20053,mountport=20058,mountproto=tcp,rsize=262144,wsize=262144,nosharecache
((${RPCRDMA_AB_RDMA:-1})) && mnt newrdma "$SERVER_ADDR:$SCRATCH/rnew" proto=rdma,port=20054,mountport=20058,mountproto=tcp,nosharecache

pids_of() { case $1 in new | new256 | new1m | newrdma) echo "$NEW_PID" ;; old | old1m) echo "$OLD_PID" ;;
	k) for d in /proc/[0-9]*; do read -r c <"$d/comm" 2>/dev/null; [[ $c == nfsd ]] && echo "${d#/proc/}"; done ;; esac; }
ticks() { local p f t=0; for p in "$@"; do read -r -a f <"/proc/$p/stat" 2>/dev/null || continue; ((t += f[13] + f[14])); done; echo $t; }
csw() { local p t s n=0; for p in "$@"; do for t in /proc/$p/task/*/status; do
	while read -r k v; do [[ $k == *ctxt_switches: ]] && ((n += v)); done <"$t"; done; done; echo $n; }
rpcs() { awk -v m="$1" '$1 == "device" { on = ($5 == m); next }
	on && /^[ \t]+[A-Z_0-9]+: [0-9]+ / { n += $2 } END { print n + 0 }' /proc/self/mountstats; }
meta() { python3 - "$1" "$2" <<'PY'
import os, sys
d, n = sys.argv[1], int(sys.argv[2])
os.makedirs(d, exist_ok=True)
names = [os.path.join(d, "f%05d" % i) for i in range(n)]
for p in names: os.close(os.open(p, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644))
for p in names: os.stat(p)
for p in names: os.rename(p, p + ".r")
for p in names: os.unlink(p + ".r")
PY
}
run() { # fig who rep
	local fig=$1 who=$2 m=/mnt/$2 p c0 c1 s0 s1 r0 r1 t0 t1 ops
	mapfile -t p <<<"$(pids_of "$who")"
	case $fig in seq_read | rand_write) [[ -f $m/f ]] || dd if=/dev/zero of=$m/f bs=1M count=$MB oflag=direct status=none ;; esac
	sync
	c0=$(ticks "${p[@]}"); s0=$(csw "${p[@]}"); r0=$(rpcs "$m"); t0=$EPOCHREALTIME
	case $fig in
	seq_read) fio --name=b --direct=1 --ioengine=libaio --filename=$m/f --rw=read --bs=1M --size=${MB}M --iodepth=1 >/dev/null; ops=$MB ;;
	seq_write) fio --name=b --direct=1 --ioengine=libaio --filename=$m/w --rw=write --bs=1M --size=${MB}M --iodepth=1 --end_fsync=1 >/dev/null; ops=$MB ;;
	meta) meta "$m/meta-$3" 200; rmdir "$m/meta-$3"; ops=800 ;;
	rand_write) ops=$(fio --name=b --direct=1 --ioengine=libaio --filename=$m/f --rw=randwrite --bs=4k --size=${MB}M --iodepth=8 \
		--time_based --runtime=${RPCRDMA_AB_RUNTIME:-10} --randrepeat=0 --output-format=json | jq '.jobs[0].write.total_ios') ;;
	esac
	t1=$EPOCHREALTIME; c1=$(ticks "${p[@]}"); s1=$(csw "${p[@]}"); r1=$(rpcs "$m")
	awk -v f=$fig -v w=$who -v r=$3 -v t0=$t0 -v t1=$t1 -v c=$((c1 - c0)) -v h=$CLK -v s=$((s1 - s0)) -v n=$((r1 - r0)) -v o=$ops \
		'BEGIN { dt = t1 - t0; u = (f ~ /^seq/ ? "MB" : "op"); printf "RESULT %s %s run %d: %.1f %s/s, cpu %.1f ms/%s, rpcs %d, csw/rpc %.2f, cpu us/rpc %.0f\n",
		f, w, r, o / dt, u, c * 1000 / h / o, u, n, s / (n ? n : 1), c * 1e6 / h / (n ? n : 1) }' | tee -a "$OUT/results.txt"
}
for ((r = 1; r <= REPS; r++)); do
	for fig in $FIGS; do
		for who in $WHOS; do run $fig $who $r; done
	done
done
if ((STRACE)); then
	for who in ${RPCRDMA_AB_STRACE_WHOS:-new newrdma ${OLD_PID:+old}}; do
		for fig in ${RPCRDMA_AB_STRACE_FIGS:-meta seq_write seq_read}; do
			p=$(pids_of $who | head -1)
			strace -c -f -q -p "$p" -o "$OUT/strace-$fig-$who.txt" & sp=$!
			sleep 2
			m=/mnt/$who; r0=$(rpcs $m)
			case $fig in
			meta) meta "$m/st" 50; rmdir "$m/st" ;;
			seq_write) fio --name=b --direct=1 --ioengine=libaio --filename=$m/w2 --rw=write --bs=1M --size=8M --iodepth=1 >/dev/null ;;
			seq_read) fio --name=b --direct=1 --ioengine=libaio --filename=$m/f --rw=read --bs=1M --size=8M --iodepth=1 >/dev/null ;;
			rand_write) fio --name=b --direct=1 --ioengine=libaio --filename=$m/f --rw=randwrite --bs=4k --size=${MB}M --iodepth=8 \
				--number_ios=500 --randrepeat=0 >/dev/null ;;
			esac
			r1=$(rpcs $m)
			kill -INT $sp; wait $sp || true
			log "STRACE $fig $who: rpcs $((r1 - r0)); $(awk '/total/ { print $4 " syscalls" }' "$OUT/strace-$fig-$who.txt")"
			echo "STRACE $fig $who rpcs $((r1 - r0))" >>"$OUT/results.txt"
			sed -n 1,40p "$OUT/strace-$fig-$who.txt" >>"$OUT/results.txt"
		done
	done
fi
pass "ab done: $OUT"
