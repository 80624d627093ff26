#!/usr/bin/env bash
# bench/bench-inside.sh: the measurements of `make bench` (issue 6), run where
# the RDMA device is: inside the test VM (bench/run-bench boots it) or, in
# host mode, on a host with an RDMA device.  Writes raw results, one JSON
# object per line, to $BENCH_OUT/raw.jsonl (fio's own JSON output next to it);
# bench/report.py turns them into results.json and results.md.
#
# Sections (BENCH_SECTIONS, default the first six):
#   wire       perftest ib_write_bw / ib_read_bw / ib_send_bw at 4 KiB, 64 KiB,
#              1 MiB and ib_send_lat at 64 B, rdma_cm (-R), client -> server
#   servers    the kernel NFS client against kernel nfsd and against
#              rpcrdma-nfsd (both serving at once, on ports 20049 and 20050):
#              sequential O_DIRECT write and read of a BENCH_FILE_MB file,
#              4 KiB random read and write (fio, libaio, direct, iodepth
#              BENCH_IODEPTH, BENCH_RUNTIME s), metadata mix (create, stat,
#              rename, remove of BENCH_META_FILES files); server CPU from /proc;
#              then the figures of BENCH_SPLIT_FIGURES again in split
#              placement: the workload on CPU 0, every server thread on CPU 1
#   servers_tcp section 2's figures but the NULLs over NFSv3/TCP (same kernel
#              client): kernel nfsd, rpcrdma-nfsd (its own process, after
#              section 2's stopped) and nfs-ganesha with FSAL_VFS
#              (bench/servers-tcp.sh)
#   clients    against kernel nfsd: kernel client (cp; dd O_DIRECT; fio)
#              vs rpcrdma-nfs (and --nconnect BENCH_NFS_NCONNECT), get and
#              put of the file, the kernel mount made again before each
#              (needs build/rpcrdma-nfs)
#   transport  rpcrdma client to rpcrdma server alone (build/bench/bench_rpc):
#              NULL call rate and latency at 1, 8 and 64 calls in flight
#              (BENCH_RPC_SECONDS each), each beside the raw verbs floor at
#              the same depth (build/bench/bench_verbs: the same two Sends
#              per round trip, no RPC), 1 MiB echo (Read chunk in, Write
#              chunk out) BENCH_RPC_ECHO_COUNT times
#   connections many idle connections (rpcrdma-probe --connections N --hold S)
#              to kernel nfsd and to rpcrdma-nfsd: memory per connection at
#              N = 1, 64, 256 (rpcrdma-nfsd VmRSS and mr_bytes, MemAvailable
#              for both), connections + NULL calls per second, and the most
#              connections each holds (N = 512, 1000 while BENCH_CONN_MAX s
#              last)
#   nfs41      not in the default: the kernel client mounting
#              vers=4.1,proto=rdma runs the workout of vm/nfs41-interop
#              (tests/vm/workout.sh: files of 0 B to 16 MiB by cp and O_DIRECT
#              dd, a 2000-entry listing, symlink, rename, link, chmod,
#              truncate, cp -a of a tree in and out, rm -rf, every byte
#              checked) against kernel nfsd and rpcrdma-nfsd --nfs4, each
#              phase timed, with the server's CPU
#   cephfs     not in the default: a single-node Ceph cluster
#              (scripts/ceph-up) and section 2's figures (seq_write
#              seq_read rand_read meta meta8) through rpcrdma-nfsd's cephfs
#              backend (RDMA), nfs-ganesha FSAL_CEPH (TCP), the kernel nfsd
#              re-exporting a kernel CephFS mount (RDMA) and the kernel
#              CephFS client directly
# Every figure runs BENCH_REPEAT times, the servers (and clients) alternating
# within each repeat so background noise hits both alike.
#
# Environment: see bench/README.md.  Needs root, fio, perftest, nfs-kernel-server.
. "$(dirname "${BASH_SOURCE[0]}")/../tests/vm/lib.sh"
. "$(dirname "${BASH_SOURCE[0]}")/../tests/vm/workout.sh"
. "$(dirname "${BASH_SOURCE[0]}")/servers-tcp.sh"
umask 022

BENCH_OUT=${BENCH_OUT:?set BENCH_OUT to the results directory}
REPEAT=${BENCH_REPEAT:-3}
FILE_MB=${BENCH_FILE_MB:-64}
RUNTIME=${BENCH_RUNTIME:-10}
IODEPTH=${BENCH_IODEPTH:-8}
SEQ_IODEPTH=${BENCH_SEQ_IODEPTH:-1}
CLIENT_IODEPTH=${BENCH_CLIENT_IODEPTH:-8}
META_FILES=${BENCH_META_FILES:-1000}
NULL_SECONDS=${BENCH_NULL_SECONDS:-3}
# Section 2's figures (BENCH_SERVER_FIGURES, "" for none); nullN: NFSv3
# NULL calls at N in flight for BENCH_NULL_SECONDS (bench_rpc's client).
# Split placement (section 2): these figures run a second time with the
# workload on CPU 0 and the server's threads on CPU 1, for both servers,
# as if client and server were two machines ("" to skip).
SERVER_FIGS=${BENCH_SERVER_FIGURES-seq_write seq_read rand_read rand_write meta meta8 null1 null8 null64}
SPLIT_FIGS=${BENCH_SPLIT_FIGURES-rand_read rand_write meta}
SECTIONS=${BENCH_SECTIONS:-wire servers servers_tcp clients transport connections}
PERF_ITERS=${BENCH_PERF_ITERS:-4096:2000 65536:500 1048576:64}
LAT_ITERS=${BENCH_LAT_ITERS:-1000}
# BENCH_PERF_EVENTS=1: ib_read_bw sleeps on CQ events (-e) instead of
# polling.  Under TCG polling perftest processes starve Soft-RoCE's kernel
# work of the two emulated CPUs (ib_read_bw: 11-13 MB/s polling, 22-25 MB/s
# with -e).  Only ib_read_bw: perftest refuses -e for RDMA Write ("Events
# feature not available on WRITE verb") and ib_send_bw -R -e crashed.
PERF_EVENTS=${BENCH_PERF_EVENTS:-0}
RDMA_DEV=${BENCH_RDMA_DEV:-${RPCRDMA_RDMA_DEV:-rxe0}}
ALLOW=${BENCH_ALLOW:-192.0.2.0/24}
RNFSD_PORT=${BENCH_RNFSD_PORT:-20050}
RNFSD_ARGS=(--no-root-squash --stats --threads 4)
# shellcheck disable=SC2206
RNFSD_ARGS+=(${BENCH_RNFSD_ARGS:-})
RPC_PORT=${BENCH_RPC_PORT:-20051}
RAW_PORT=${BENCH_RAW_PORT:-20052}
RPC_SECONDS=${BENCH_RPC_SECONDS:-3}
RPC_ECHO_COUNT=${BENCH_RPC_ECHO_COUNT:-32}
RPC_ECHO_INFLIGHT=${BENCH_RPC_ECHO_INFLIGHT:-1}
# shellcheck disable=SC2206
RPC_ARGS=(${BENCH_RPC_ARGS:-})
# shellcheck disable=SC2206
RPC_SERVER_ARGS=(${BENCH_RPC_SERVER_ARGS:-})
CONN_NS=${BENCH_CONN_NS:-1 64 256}
CONN_STEPS=${BENCH_CONN_STEPS:-512 1000}
CONN_HOLD=${BENCH_CONN_HOLD:-6}
CONN_MAX=${BENCH_CONN_MAX:-600}
RAW=$BENCH_OUT/raw.jsonl
FIO_DIR=$BENCH_OUT/fio
W=$SCRATCH/bench
KEXPORT=$W/knfsd-export
REXPORT=$W/rnfsd-export
KMNT=/mnt/bench-knfsd
RMNT=/mnt/bench-rnfsd
LOCAL=$W/local
MOPTS=rsize=1048576,wsize=1048576
FILE=bench.dat
FILE_BYTES=$((FILE_MB * 1048576))
CLK_TCK=$(getconf CLK_TCK)

mkdir -p "$BENCH_OUT" "$FIO_DIR" "$W" "$LOCAL"
: >"$RAW"

has() { [[ " $SECTIONS " == *" $1 "* ]]; }

# emit JSON-OBJECT-BODY: append one raw result line.
emit() { printf '{%s}\n' "$1" >>"$RAW"; }

# now: wall clock seconds with microseconds (bash builtin, no exec).
now() { echo "$EPOCHREALTIME"; }

# ticks PID...: utime + stime of the PIDs (clock ticks), bash builtins only:
# every exec of a host binary over 9p costs a few hundred ms under TCG.
ticks() {
	local p f t=0
	for p in "$@"; do
		read -r -a f <"/proc/$p/stat" 2>/dev/null || continue
		# comm (field 2) holds no space for nfsd / rpcrdma-nfsd
		((t += f[13] + f[14]))
	done
	echo "$t"
}

# knfsd_pids: the kernel nfsd threads.
knfsd_pids() {
	local d c
	for d in /proc/[0-9]*; do
		read -r c <"$d/comm" 2>/dev/null || continue
		[[ "$c" == nfsd ]] && echo "${d#/proc/}"
	done
	return 0
}

# rpcs MNT: total RPC calls sent on MNT (sum of the per-op counts).
rpcs() {
	awk -v m="$1" '$1 == "device" { on = ($5 == m); next }
		on && /^[ \t]+[A-Z_0-9]+: [0-9]+ / { n += $2 } END { print n + 0 }' /proc/self/mountstats
}

# mount_opts MNT: the mount's options as the kernel shows them.
mount_opts() { awk -v m="$1" '$2 == m { print $4; exit }' /proc/mounts; }

# wait_cm_listen PORT SECONDS PID: an rdma_cm listener on PORT (fails at
# once when PID, the server, has exited).
wait_cm_listen() {
	local i
	for ((i = 0; i < $2 * 4; i++)); do
		rdma res show cm_id 2>/dev/null | grep "state LISTEN" | grep -qE "src-addr [^ ]*:$1( |$)" && return 0
		kill -0 "$3" 2>/dev/null || return 1
		sleep 0.25
	done
	return 1
}

# ================================================================ 1. wire
# perftest TOOL SIZE ITERS RUN: one server/client pair; emits the row.
perftest() {
	local tool=$1 size=$2 iters=$3 run=$4 srv rc=0 row f log=$BENCH_OUT/perftest
	local args=(-d "$RDMA_DEV" -R -F -s "$size" -n "$iters")
	[[ $PERF_EVENTS == 1 && $tool == ib_read_bw ]] && args+=(-e)
	mkdir -p "$log"
	timeout -k 10 120 "$tool" "${args[@]}" >"$log/$tool-$size-$run-server.log" 2>&1 &
	srv=$!
	if ! wait_cm_listen 18515 30 "$srv"; then
		kill "$srv" 2>/dev/null || true
		emit "\"section\":\"wire\",\"tool\":\"$tool\",\"size\":$size,\"run\":$run,\"error\":\"server not listening\""
		return 0
	fi
	timeout -k 10 120 "$tool" "${args[@]}" --source_ip "$CLIENT_ADDR" "$SERVER_ADDR" \
		>"$log/$tool-$size-$run-client.log" 2>&1 || rc=$?
	wait "$srv" 2>/dev/null || true
	if ((rc != 0)); then
		emit "\"section\":\"wire\",\"tool\":\"$tool\",\"size\":$size,\"run\":$run,\"error\":\"client status $rc\""
		return 0
	fi
	if [[ "$tool" == *_lat ]]; then
		# #bytes #iterations t_min t_max t_typical t_avg t_stdev 99% 99.9%
		row=$(awk -v s="$size" '$1 == s && NF >= 8 { print; exit }' "$log/$tool-$size-$run-client.log")
		read -r -a f <<<"$row"
		emit "\"section\":\"wire\",\"tool\":\"$tool\",\"size\":$size,\"iters\":$iters,\"run\":$run,\"lat_min_us\":${f[2]:-null},\"lat_typical_us\":${f[4]:-null},\"lat_avg_us\":${f[5]:-null},\"lat_p99_us\":${f[7]:-null}"
	else
		# #bytes #iterations BW-peak BW-average MsgRate (MB/s = 2^20 B/s)
		row=$(awk -v s="$size" '$1 == s && NF >= 5 { print; exit }' "$log/$tool-$size-$run-client.log")
		read -r -a f <<<"$row"
		emit "\"section\":\"wire\",\"tool\":\"$tool\",\"size\":$size,\"iters\":$iters,\"run\":$run,\"bw_MiBps\":${f[3]:-null},\"peak_MiBps\":${f[2]:-null}"
	fi
	log "$tool $size B x $iters (run $run): ${row:-no result row}"
}

section_wire() {
	local r tool ent
	log "== 1. wire limit (perftest, rdma_cm, $CLIENT_ADDR -> $SERVER_ADDR on $RDMA_DEV)"
	for ((r = 1; r <= REPEAT; r++)); do
		for tool in ib_write_bw ib_read_bw ib_send_bw; do
			for ent in $PERF_ITERS; do
				perftest "$tool" "${ent%%:*}" "${ent#*:}" "$r"
			done
		done
		perftest ib_send_lat 64 "$LAT_ITERS" "$r"
	done
}

# ================================================================ 2. servers
RNFSD=
KNFSD_UP=0
# start_knfsd: kernel nfsd exporting KEXPORT (fsid=0: the NFSv4 root) to the
# VM's network and, in host mode, to BENCH_ALLOW; its NFSv4 grace period
# after the start cut to 10 s (section 6 mounts NFSv4.1).
start_knfsd() {
	mkdir -p "$KEXPORT"
	KNFSD_V4_GRACE=10 knfsd_start "$KEXPORT"
	if [[ "$ALLOW" != 192.0.2.0/24 ]]; then
		timeout -k 10 30 exportfs -o rw,no_root_squash,insecure,no_subtree_check,sync,fsid=0 \
			"$ALLOW:$KEXPORT" || fail "exportfs $ALLOW:$KEXPORT"
		at_exit "timeout -k 10 10 exportfs -u '$ALLOW:$KEXPORT'"
	fi
	KNFSD_UP=1
}

start_servers() {
	mkdir -p "$REXPORT"
	start_knfsd
	RNFSD=$(rpcrdma_bin rpcrdma-nfsd)
	NFS_RDMA_PORT=$RNFSD_PORT rnfsd_start "$RNFSD" "$REXPORT" "$W/rpcrdma-nfsd.log" \
		"${RNFSD_ARGS[@]}" --allow "$ALLOW" --handle-key "$W/handle.key"
	kmount "$SERVER_ADDR:$KEXPORT" "$KMNT" "$MOPTS"
	NFS_RDMA_PORT=$RNFSD_PORT kmount "$SERVER_ADDR:$REXPORT" "$RMNT" \
		"$MOPTS,mountport=$MOUNT_PORT,mountproto=tcp"
	emit "\"section\":\"info\",\"mount\":\"knfsd\",\"opts\":\"$(mount_opts "$KMNT")\",\"threads\":$(knfsd_pids | wc -l)"
	emit "\"section\":\"info\",\"mount\":\"rnfsd\",\"opts\":\"$(mount_opts "$RMNT")\",\"args\":\"${RNFSD_ARGS[*]}\""
}

# server_pids SERVER: the PIDs whose CPU time counts for SERVER (section
# cephfs's too: rpcrdma-nfsd's cephfs gateway, nfs-ganesha, the kernel
# nfsd re-exporting CephFS; none for the direct CephFS mount).
server_pids() {
	case $1 in
	knfsd | knfsd-tcp | ceph-kreexport | ceph-kreexport4) knfsd_pids ;;
	rnfsd-tcp) echo "$RNFSD_TCP_PID" ;;
	ganesha-tcp) echo "$GVFS_PID" ;;
	ceph-rnfsd | ceph-rnfsd4) echo "$CEPH_RNFSD_PID" ;;
	ceph-ganesha | ceph-ganesha4) echo "$GANESHA_PID" ;;
	ceph-direct) ;;
	*) echo "$RNFSD_PID" ;;
	esac
}
# mnt_of SERVER: the mount whose RPCs count for SERVER's figures.
mnt_of() {
	case $1 in
	knfsd) echo "$KMNT" ;;
	*-tcp) echo "/mnt/bench-$1" ;;
	ceph-*) echo "$(ceph_mnt "$1")" ;;
	*) echo "$RMNT" ;;
	esac
}
# dir_of SERVER: the directory SERVER's figures work in (the mount itself,
# but for section cephfs, whose clients share one CephFS: a directory of
# each's own in it).
dir_of() {
	case $1 in
	ceph-*) echo "$(ceph_mnt "$1")/$1" ;;
	*) mnt_of "$1" ;;
	esac
}

# measure SECTION FIGURE WHO RUN SERVER MNT CMD...: run CMD (bounded), with
# the server's CPU ticks, the mount's RPC count and the wall time around it;
# CMD's JSON-body output (may be empty) is merged into the emitted line.
measure() {
	local sec=$1 fig=$2 who=$3 run=$4 srv=$5 mnt=$6 pids c0 c1 r0 r1 t0 t1 out rc=0
	shift 6
	mapfile -t pids <<<"$(server_pids "$srv")"	# no /dev/fd in the guest
	sync
	r0=$(rpcs "$mnt")
	c0=$(ticks "${pids[@]}")
	t0=$(now)
	if declare -F "$1" >/dev/null; then
		out=$("$@") || rc=$?	# our functions bound their own commands
	else
		out=
		timeout -k 10 600 "$@" >/dev/null || rc=$?
	fi
	t1=$(now)
	c1=$(ticks "${pids[@]}")
	r1=$(rpcs "$mnt")
	if ((rc != 0)); then
		emit "\"section\":\"$sec\",\"figure\":\"$fig\",\"who\":\"$who\",\"run\":$run,\"error\":\"status $rc\""
		log "$fig $who run $run: FAILED (status $rc)"
		return 0
	fi
	emit "\"section\":\"$sec\",\"figure\":\"$fig\",\"who\":\"$who\",\"run\":$run,\"wall_s\":$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f", b - a }'),\"cpu_s\":$(awk -v a="$c0" -v b="$c1" -v h="$CLK_TCK" 'BEGIN { printf "%.2f", (b - a) / h }'),\"rpcs\":$((r1 - r0))${out:+,$out}"
	log "$fig $who run $run: done"
}

# fio_job OUTFILE FIO-ARGS...: run fio; print the JSON body pointing at its output.
fio_job() {
	local out=$1
	shift
	timeout -k 10 600 fio --output-format=json --output="$out" "$@" >/dev/null || return
	printf '"fio":"%s"' "${out#"$BENCH_OUT"/}"
}

# meta DIR N [CPU [PROCS]]: create, stat, rename, remove N files in DIR
# (exec'ing a tool per file would measure 9p, not NFS), on CPU alone when
# given (CPU "" for none); with PROCS > 1 (figure meta8), PROCS processes
# at once on the same mount, each on N/PROCS files of its own
# subdirectory, every phase started by all of them together (a barrier)
# and timed from its start to the last process's end; prints the JSON body.
meta() {
	timeout -k 10 600 python3 - "$1" "$2" "${3:-}" "${4:-1}" <<'EOF'
import multiprocessing as mp, os, sys, time
d, n, procs = sys.argv[1], int(sys.argv[2]), max(1, int(sys.argv[4]))
if sys.argv[3]:
    os.sched_setaffinity(0, {int(sys.argv[3])})
os.makedirs(d, exist_ok=True)
per = max(1, n // procs)
PHASES = ("create", "stat", "rename", "remove")

def work(k, bar):
    sub = os.path.join(d, "p%02d" % k) if procs > 1 else d
    if procs > 1:
        os.mkdir(sub)
    names = [os.path.join(sub, "f%05d" % i) for i in range(per)]
    for ph in PHASES:
        bar.wait()
        for p in names:
            if ph == "create":
                os.close(os.open(p, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644))
            elif ph == "stat":
                os.stat(p)
            elif ph == "rename":
                os.rename(p, p + ".r")
            else:
                os.unlink(p + ".r")
        bar.wait()
    if procs > 1:
        os.rmdir(sub)

bar = mp.Barrier(procs + 1)
kids = [mp.Process(target=work, args=(k, bar)) for k in range(procs)]
for c in kids:
    c.start()
t = []
for ph in PHASES:
    bar.wait()
    t0 = time.monotonic()
    bar.wait()
    t.append(time.monotonic() - t0)
for c in kids:
    c.join()
    if c.exitcode:
        sys.exit("meta: a process failed (exit %d)" % c.exitcode)
os.rmdir(d)
print('"ops":%d,"procs":%d,"create_s":%.6f,"stat_s":%.6f,"rename_s":%.6f,"remove_s":%.6f,"meta_s":%.6f'
      % (4 * per * procs, procs, t[0], t[1], t[2], t[3], sum(t)), end="")
EOF
}

# nfs_null SERVER DEPTH [CPU]: NFSv3 NULL calls to SERVER (knfsd, rnfsd)
# at DEPTH in flight for NULL_SECONDS from bench_rpc's client (its own
# connection, beside the mount), on CPU alone when given; prints the JSON
# body ("ops": the calls).
nfs_null() {
	local port=$NFS_RDMA_PORT out
	[[ $1 == rnfsd ]] && port=$RNFSD_PORT
	out=$(timeout -k 10 120 ${3:+taskset -c "$3"} "$RPCRDMA_BUILD_DIR/bench/bench_rpc" client \
		--source "$CLIENT_ADDR" "$SERVER_ADDR" --port "$port" --program 100003 --version 3 \
		--null --inflight "$2" --seconds "$NULL_SECONDS" 2>>"$W/nfs-null.log" | tail -n 1) || return
	jq -r '"\"ops\":\(.calls),\"calls_per_s\":\(.calls_per_s),\"lat_median_us\":\(.lat_median_us),\"null_errors\":\(.errors)"' <<<"$out"
}

# server_place SERVER CPUS: keep every thread of SERVER on CPUS (a taskset
# list): the [nfsd] kernel threads one by one, every thread of rpcrdma-nfsd.
server_place() {
	local p
	if [[ $1 == knfsd ]]; then
		for p in $(knfsd_pids); do
			taskset -p -c "$2" "$p" >/dev/null || return
		done
	else
		taskset -a -p -c "$2" "$RNFSD_PID" >/dev/null
	fi
}

# server_figure FIGURE SERVER RUN [CPU [SECTION]]: one measured run of
# FIGURE, recorded in SECTION (default servers; section cephfs uses the same
# jobs); with CPU, the workload (fio's job, the metadata script) runs on CPU
# alone and the figure is recorded as FIGURE_split.
server_figure() {
	local fig=$1 s=$2 r=$3 cpu=${4:-} sec=${5:-servers} mnt dir label base="--name=bench --direct=1 --ioengine=libaio"
	mnt=$(mnt_of "$s")
	dir=$(dir_of "$s")
	label=$fig${cpu:+_split}
	[[ -n $cpu ]] && base+=" --cpus_allowed=$cpu"
	local out=$FIO_DIR/$label-$s-$r.json
	[[ $sec == servers ]] || out=$FIO_DIR/$sec-$label-$s-$r.json
	# shellcheck disable=SC2086
	case $fig in
	seq_write)
		measure "$sec" "$label" "$s" "$r" "$s" "$mnt" fio_job "$out" \
			$base --filename="$dir/$FILE" --rw=write --bs=1M --size="${FILE_MB}M" --iodepth="$SEQ_IODEPTH" --end_fsync=1 ;;
	seq_read)
		measure "$sec" "$label" "$s" "$r" "$s" "$mnt" fio_job "$out" \
			$base --filename="$dir/$FILE" --rw=read --bs=1M --size="${FILE_MB}M" --iodepth="$SEQ_IODEPTH" ;;
	rand_read | rand_write)
		measure "$sec" "$label" "$s" "$r" "$s" "$mnt" fio_job "$out" \
			$base --filename="$dir/$FILE" --rw="${fig/_/}" --bs=4k --size="${FILE_MB}M" --iodepth="$IODEPTH" \
			--time_based --runtime="$RUNTIME" --randrepeat=0 ;;
	meta)
		measure "$sec" "$label" "$s" "$r" "$s" "$mnt" meta "$dir/meta-$label-$r" "$META_FILES" "$cpu" ;;
	meta8)
		measure "$sec" "$label" "$s" "$r" "$s" "$mnt" meta "$dir/meta8-$label-$r" "$META_FILES" "$cpu" 8 ;;
	null[0-9]*)
		measure "$sec" "$label" "$s" "$r" "$s" "$mnt" nfs_null "$s" "${fig#null}" "$cpu" ;;
	*) fail "unknown server figure $fig" ;;
	esac
}

section_servers() {
	local r s fig all split=$SPLIT_FIGS
	log "== 2. servers compared: kernel nfsd vs rpcrdma-nfsd, kernel client ($FILE_MB MiB file, $REPEAT runs)"
	all=0-$(($(nproc) - 1))
	if [[ -n $split ]] && (($(nproc) < 2)); then
		log "split placement needs two CPUs: skipped"
		split=
	fi
	emit "\"section\":\"info\",\"split_figures\":\"$split\",\"split_workload_cpu\":0,\"split_server_cpus\":\"1\""
	for ((r = 1; r <= REPEAT; r++)); do
		for fig in $SERVER_FIGS; do
			for s in knfsd rnfsd; do
				server_figure "$fig" "$s" "$r"
			done
		done
		for fig in $split; do
			for s in knfsd rnfsd; do
				server_place "$s" 1 || fail "cannot keep $s on CPU 1"
				server_figure "$fig" "$s" "$r" 0
				server_place "$s" "$all" || fail "cannot give $s back CPUs $all"
			done
		done
	done
}

# ================================================================ 3. clients
# The kernel client is measured the way a user copies a file, like the
# rpcrdma-nfs command it is compared with: `cp` from the mount to a local
# file (get) and from the local file to the mount (put; the NFS client's
# close() writes back and COMMITs the file, close-to-open, so cp returns
# with the data stable on the server: the put's WRITE and COMMIT counts go
# to the raw results).  Extra rows: `dd bs=1M` with O_DIRECT on the mount
# side (one 1 MiB call at a time, no page cache), and fio O_DIRECT, libaio,
# iodepth CLIENT_IODEPTH reading into or writing from memory (no local
# file; the figure of the first runs).  Before every kernel get and put the
# mount is made again (umount, mount: no pages, attributes or dentries of
# the file left in the kernel client), so it starts as cold as rpcrdma-nfs,
# which mounts for itself and caches nothing.  Not drop_caches: that also
# drops the programs' own pages, and reading rpcrdma-nfs's thirty shared
# libraries (13, and rdma-core's 17 providers) back over the guest's 9p root
# cost it seconds that cp does not pay (seen in the first runs of this
# section); the programs and the local files (tmpfs) stay warm for both.

# client_remount: the kernel mount of section 3 made again (cold client).
client_remount() {
	sync
	timeout -k 10 60 umount "$KMNT" || fail "umount $KMNT"
	timeout -k 10 120 mount -t nfs -o "vers=3,proto=rdma,port=$NFS_RDMA_PORT,nolock,$MOPTS" \
		"$SERVER_ADDR:$KEXPORT" "$KMNT" || fail "mount $KMNT again"
}

# client_ops MNT: "WRITE COMMIT" calls sent so far on MNT.
client_ops() {
	awk -v m="$1" '$1 == "device" { on = ($5 == m); next }
		on && $1 == "WRITE:" { w = $2 } on && $1 == "COMMIT:" { c = $2 }
		END { print w + 0, c + 0 }' /proc/self/mountstats
}

# client_put_kernel WHO RUN CMD...: one kernel put; emits the figure, then
# the WRITEs and COMMITs it sent.
client_put_kernel() {
	local who=$1 run=$2 o0 o1
	shift 2
	read -r -a o0 <<<"$(client_ops "$KMNT")"
	measure clients put "$who" "$run" knfsd "$KMNT" "$@"
	read -r -a o1 <<<"$(client_ops "$KMNT")"
	emit "\"section\":\"clients_ops\",\"figure\":\"put\",\"who\":\"$who\",\"run\":$run,\"writes\":$((o1[0] - o0[0])),\"commits\":$((o1[1] - o0[1]))"
}

# client_check FIGURE WHO RUN COPY: compare COPY with the source file.
client_check() {
	cmp -s "$LOCAL/put.dat" "$4" ||
		emit "\"section\":\"clients\",\"figure\":\"$1\",\"who\":\"$2\",\"run\":$3,\"error\":\"data differs\""
}

section_clients() {
	local nfs r who src=$LOCAL/put.dat nc=${BENCH_NFS_NCONNECT:-4}
	nfs=$RPCRDMA_BUILD_DIR/rpcrdma-nfs
	if [[ ! -x "$nfs" ]]; then
		log "== 3. clients compared: not measured: needs rpcrdma-nfs"
		emit "\"section\":\"clients\",\"skipped\":\"not measured: needs rpcrdma-nfs\""
		return 0
	fi
	log "== 3. clients compared against kernel nfsd: kernel client (cp, dd O_DIRECT, fio) vs rpcrdma-nfs (and --nconnect $nc) ($FILE_MB MiB, $REPEAT runs)"
	head -c "$FILE_BYTES" /dev/urandom >"$src"
	cp "$src" "$KEXPORT/client.dat"
	# shellcheck disable=SC2206
	local spec="$SERVER_ADDR:$KEXPORT" opts=(--source "$CLIENT_ADDR" --quiet ${BENCH_NFS_ARGS:-})
	local ncopts=("${opts[@]}" --nconnect "$nc") ncwho=rpcrdma-nfs-nconnect$nc
	local base="--name=bench --direct=1 --ioengine=libaio --bs=1M --size=${FILE_MB}M --iodepth=$CLIENT_IODEPTH"
	emit "\"section\":\"info\",\"client_tool\":\"rpcrdma-nfs\",\"args\":\"${opts[*]}\",\"nconnect\":$nc,\"kernel_iodepth\":$CLIENT_IODEPTH,\"kernel_copy\":\"cp\",\"kernel_cold\":\"remount\""
	for ((r = 1; r <= REPEAT; r++)); do
		# set-up cost of one rpcrdma-nfs run (exec, MOUNT, connect, one call)
		measure clients setup rpcrdma-nfs "$r" knfsd "$KMNT" "$nfs" "${opts[@]}" "$spec" stat /client.dat
		measure clients setup "$ncwho" "$r" knfsd "$KMNT" "$nfs" "${ncopts[@]}" "$spec" stat /client.dat

		rm -f "$LOCAL"/get-*.dat
		client_remount
		measure clients get kernel-cp "$r" knfsd "$KMNT" cp "$KMNT/client.dat" "$LOCAL/get-cp.dat"
		client_check get kernel-cp "$r" "$LOCAL/get-cp.dat"
		client_remount
		measure clients get kernel-dd-direct "$r" knfsd "$KMNT" \
			dd if="$KMNT/client.dat" of="$LOCAL/get-dd.dat" bs=1M iflag=direct status=none
		client_check get kernel-dd-direct "$r" "$LOCAL/get-dd.dat"
		client_remount
		# shellcheck disable=SC2086
		measure clients get kernel-fio "$r" knfsd "$KMNT" fio_job "$FIO_DIR/get-kernel-$r.json" \
			$base --filename="$KMNT/client.dat" --rw=read
		measure clients get rpcrdma-nfs "$r" knfsd "$KMNT" "$nfs" "${opts[@]}" "$spec" get /client.dat "$LOCAL/get-nfs.dat"
		client_check get rpcrdma-nfs "$r" "$LOCAL/get-nfs.dat"
		measure clients get "$ncwho" "$r" knfsd "$KMNT" "$nfs" "${ncopts[@]}" "$spec" get /client.dat "$LOCAL/get-nfsnc.dat"
		client_check get "$ncwho" "$r" "$LOCAL/get-nfsnc.dat"
		rm -f "$LOCAL"/get-*.dat

		client_remount
		client_put_kernel kernel-cp "$r" cp "$src" "$KMNT/put-cp.dat"
		client_check put kernel-cp "$r" "$KEXPORT/put-cp.dat"
		client_remount
		client_put_kernel kernel-dd-direct "$r" \
			dd if="$src" of="$KMNT/put-dd.dat" bs=1M oflag=direct conv=fsync status=none
		client_check put kernel-dd-direct "$r" "$KEXPORT/put-dd.dat"
		client_remount
		# shellcheck disable=SC2086
		client_put_kernel kernel-fio "$r" fio_job "$FIO_DIR/put-kernel-$r.json" \
			$base --filename="$KMNT/put-fio.dat" --rw=write --end_fsync=1
		measure clients put rpcrdma-nfs "$r" knfsd "$KMNT" "$nfs" "${opts[@]}" "$spec" put "$src" /put-nfs.dat
		client_check put rpcrdma-nfs "$r" "$KEXPORT/put-nfs.dat"
		measure clients put "$ncwho" "$r" knfsd "$KMNT" "$nfs" "${ncopts[@]}" "$spec" put "$src" /put-nfsnc.dat
		client_check put "$ncwho" "$r" "$KEXPORT/put-nfsnc.dat"
		# every client creates its file anew
		rm -f "$KMNT"/put-*.dat
	done
}

# ================================================================ 4. transport
# transport_client TOOL BIN PORT LIMIT RUN ARGS...: one client run of TOOL
# (bench_rpc, or bench_verbs: the raw verbs floor under NULL) against its
# server on PORT, killed after LIMIT s; emits each JSON object it prints
# (one per figure) as a transport row with the run added.
transport_client() {
	local tool=$1 bin=$2 port=$3 limit=$4 run=$5 out line rc=0 got=0
	shift 5
	out=$(timeout -k 10 "$limit" "$bin" client --source "$CLIENT_ADDR" "$SERVER_ADDR" \
		--port "$port" "$@" 2>>"$W/$tool-client.log") || rc=$?
	while IFS= read -r line; do
		[[ "$line" == "{"*"}" ]] || continue
		emit "\"section\":\"transport\",\"run\":$run,${line:1:${#line}-2}"
		log "$tool $* (run $run): $line"
		got=1
	done <<<"$out"
	if ((rc != 0 || !got)); then
		emit "\"section\":\"transport\",\"run\":$run,\"args\":\"$tool $*\",\"error\":\"$tool client status $rc\""
		log "$tool $* (run $run): FAILED (status $rc)"
	fi
	return 0
}

rpc_client() { transport_client bench_rpc "$RPC_BIN" "$RPC_PORT" 300 "$@"; }
raw_client() { transport_client bench_verbs "$RAW_BIN" "$RAW_PORT" 120 "$@"; }

section_transport() {
	local r n srv raw=
	RAW_BIN=$RPCRDMA_BUILD_DIR/bench/bench_verbs
	RPC_BIN=$RPCRDMA_BUILD_DIR/bench/bench_rpc
	if [[ ! -x "$RPC_BIN" ]]; then
		log "== 4. transport alone: not measured: needs build/bench/bench_rpc"
		emit "\"section\":\"transport\",\"skipped\":\"not measured: needs bench_rpc (make build)\""
		return 0
	fi
	log "== 4. transport alone: bench_rpc client -> bench_rpc server (NULL $RPC_SECONDS s at 1, 8, 64 in flight; $RPC_ECHO_COUNT x 1 MiB echo; $REPEAT runs)"
	"$RPC_BIN" server --listen "$SERVER_ADDR" --port "$RPC_PORT" "${RPC_SERVER_ARGS[@]}" \
		>"$W/bench_rpc-server.log" 2>&1 &
	srv=$!
	if ! wait_cm_listen "$RPC_PORT" 30 "$srv"; then
		kill "$srv" 2>/dev/null || true
		emit "\"section\":\"transport\",\"error\":\"bench_rpc server not listening\""
		return 0
	fi
	if [[ -x "$RAW_BIN" ]]; then
		"$RAW_BIN" server --listen "$SERVER_ADDR" --port "$RAW_PORT" >"$W/bench_verbs-server.log" 2>&1 &
		raw=$!
		wait_cm_listen "$RAW_PORT" 30 "$raw" || { kill "$raw" 2>/dev/null; raw=; }
	fi
	emit "\"section\":\"info\",\"transport_tool\":\"bench_rpc\",\"null_seconds\":$RPC_SECONDS,\"echo_count\":$RPC_ECHO_COUNT,\"echo_inflight\":$RPC_ECHO_INFLIGHT,\"args\":\"${RPC_ARGS[*]}\",\"server_args\":\"${RPC_SERVER_ARGS[*]}\""
	for ((r = 1; r <= REPEAT; r++)); do
		for n in 1 8 64; do
			rpc_client "$r" --null --inflight "$n" --seconds "$RPC_SECONDS" "${RPC_ARGS[@]}"
			[[ -n $raw ]] && raw_client "$r" --inflight "$n" --seconds "$RPC_SECONDS"
		done
		rpc_client "$r" --echo 1048576 --count "$RPC_ECHO_COUNT" --inflight "$RPC_ECHO_INFLIGHT" "${RPC_ARGS[@]}"
	done
	kill -TERM "$srv" 2>/dev/null || true
	wait "$srv" 2>/dev/null || true
	if [[ -n $raw ]]; then
		kill -TERM "$raw" 2>/dev/null || true
		wait "$raw" 2>/dev/null || true
	fi
	grep '^{' "$W/bench_rpc-server.log" | tail -n 1 >"$BENCH_OUT/bench_rpc-server-stats.json" || true
}

# ================================================================ 5. connections
# Idle connections from rpcrdma-probe's load mode (--connections N --hold S,
# one NULL call on each), to kernel nfsd (port 20049, the kernel mount of
# section 2 stays up) and to rpcrdma-nfsd: for rpcrdma-nfsd a new server
# without any mount for every probe run, so each run starts from its cold
# pool (a pool warmed by an earlier run would hide the registration).

# meminfo_kb KEY: KEY's value in /proc/meminfo (KiB), builtins only.
meminfo_kb() {
	local k v
	while read -r k v _; do
		[[ $k == "$1:" ]] && { echo "$v"; return 0; }
	done </proc/meminfo
	echo null
}

# vmrss_kb PID: VmRSS of PID (KiB), null when it is gone.
vmrss_kb() {
	local k v s
	s=$(cat "/proc/$1/status" 2>/dev/null) || true
	while read -r k v _; do
		[[ $k == VmRSS: ]] && { echo "$v"; return 0; }
	done <<<"$s"
	echo null
}

# cm_conns PORT: rdma_cm connections whose local end is SERVER_ADDR:PORT
# and that are not listeners (the server's side of each connection).
cm_conns() {
	rdma res show cm_id 2>/dev/null |
		awk -v a="$SERVER_ADDR:$1" '$0 !~ /state LISTEN/ { for (i = 1; i < NF; i++) if ($i == "src-addr" && $(i + 1) == a) { n++; break } } END { print n + 0 }'
}

# conn_counters: ask the running rpcrdma-nfsd for its counters (SIGUSR1) and
# print the new line; empty when it does not answer within 10 s (no fail:
# a server killed by the guest's OOM killer is a result here).
conn_counters() {
	local n i
	n=$(grep -c '^{"connections"' "$RNFSD_LOG" || true)
	kill -USR1 "$RNFSD_PID" 2>/dev/null || return 0
	for ((i = 0; i < 50; i++)); do
		if (($(grep -c '^{"connections"' "$RNFSD_LOG" || true) > n)); then
			rnfsd_counters_line
			return 0
		fi
		kill -0 "$RNFSD_PID" 2>/dev/null || return 0
		sleep 0.2
	done
}

# conn_rnfsd_up / conn_rnfsd_down: a new rpcrdma-nfsd (no mount) on
# RNFSD_PORT; its end, SIGKILL after 30 s, never failing the bench.
conn_rnfsd_up() {
	NFS_RDMA_PORT=$RNFSD_PORT rnfsd_start "$RNFSD" "$REXPORT" "$W/rpcrdma-nfsd-conn.log" \
		"${RNFSD_ARGS[@]}" --allow "$ALLOW" --handle-key "$W/handle.key"
	wait_cm_listen "$RNFSD_PORT" 30 "$RNFSD_PID" || log "rpcrdma-nfsd: no rdma_cm listener on $RNFSD_PORT"
}
conn_rnfsd_down() {
	local i
	kill -TERM "$RNFSD_PID" 2>/dev/null || return 0
	for ((i = 0; i < 150; i++)); do
		kill -0 "$RNFSD_PID" 2>/dev/null || break
		sleep 0.2
	done
	kill -KILL "$RNFSD_PID" 2>/dev/null || true
	wait "$RNFSD_PID" 2>/dev/null || true
}

# conn_settle PORT BASE: wait (at most 60 s) until the server on PORT has at
# most BASE connections, so the next "before" figures are not taken while
# the previous run's connections are still being torn down.
conn_settle() {
	local i c
	for ((i = 0; i < 120; i++)); do
		c=$(cm_conns "$1")
		((c <= $2)) && return 0
		sleep 0.5
	done
	log "note: $c connections still open on port $1 after 60 s (expected at most $2)"
}

# conn_probe FIGURE WHO N RUN OPEN_LIMIT: one rpcrdma-probe run, N
# connections held CONN_HOLD s, against WHO (knfsd or rnfsd); memory before
# and while they are held (sampled as soon as the probe says it holds them);
# emits one line with the probe's JSON object under "probe".  Sets
# CONN_OPEN_S (seconds until the probe held them) and CONN_OK (1 when every
# connection was established, answered and kept).
conn_probe() {
	local fig=$1 who=$2 n=$3 run=$4 limit=$5 port pid t0 t1 deadline json err out rc=0
	local ma0 ma1 rss0=null rss1=null mr0=null mr1=null bu0=null bu1=null co0=null co1=null
	local cm0 cm1=null prss=null line held=0 body
	json=$W/probe-$fig-$who-$n-$run.json
	err=$W/probe-$fig-$who-$n-$run.err
	CONN_OK=0 CONN_OPEN_S=$limit
	if [[ $who == knfsd ]]; then
		port=$NFS_RDMA_PORT
		conn_settle "$port" "$CONN_KBASE"
	else
		port=$RNFSD_PORT
		conn_rnfsd_up
		sleep 1	# let the new server's start-up allocations settle
	fi
	cm0=$(cm_conns "$port")
	if [[ $who == rnfsd ]]; then
		line=$(conn_counters)
		mr0=$(rnfsd_counter "$line" mr_bytes) bu0=$(rnfsd_counter "$line" buf_bytes_in_use)
		co0=$(rnfsd_counter "$line" conns_open)
		rss0=$(vmrss_kb "$RNFSD_PID")
	fi
	ma0=$(meminfo_kb MemAvailable)
	: >"$err"
	t0=$(now)
	"$PROBE" --verbose --connections "$n" --hold "$CONN_HOLD" --port "$port" \
		--source "$CLIENT_ADDR" "$SERVER_ADDR" >"$json" 2>"$err" &
	pid=$!
	deadline=$((SECONDS + limit))
	while kill -0 "$pid" 2>/dev/null; do
		out=$(<"$err")
		if [[ $out == *"connections opened in"* ]]; then
			held=1
			break
		fi
		if ((SECONDS >= deadline)); then
			log "rpcrdma-probe: $n connections to $who not open after $limit s: ${out##*$'\n'}"
			kill -KILL "$pid" 2>/dev/null || true
			break
		fi
		sleep 0.5
	done
	t1=$(now)
	CONN_OPEN_S=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%d", b - a + 1 }')
	if ((held)); then
		# sample while held
		prss=$(vmrss_kb "$pid")
		ma1=$(meminfo_kb MemAvailable)
		if [[ $who == rnfsd ]]; then
			# where the resident memory is, once per N (bench/README.md)
			[[ $run == 1 ]] && cat "/proc/$RNFSD_PID/smaps" >"$BENCH_OUT/connections/rpcrdma-nfsd-smaps-$fig-$n.txt" 2>/dev/null
			rss1=$(vmrss_kb "$RNFSD_PID")
			line=$(conn_counters)
			mr1=$(rnfsd_counter "$line" mr_bytes) bu1=$(rnfsd_counter "$line" buf_bytes_in_use)
			co1=$(rnfsd_counter "$line" conns_open)
		fi
		cm1=$(cm_conns "$port")
		# no VmRSS: the probe had already ended (a zombie still answers
		# kill -0), so these figures were taken after its disconnects
		# (seen once when the guest stalled for seconds under TCG)
		[[ $prss == null ]] && held=0
	else
		ma1=null
	fi
	# the probe ends by itself after the hold (and its disconnects)
	deadline=$((SECONDS + CONN_HOLD + 60 + n / 10))
	while kill -0 "$pid" 2>/dev/null && ((SECONDS < deadline)); do sleep 0.5; done
	kill -KILL "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || rc=$?
	t1=$(now)
	body=$(<"$json")
	[[ $body == "{"*"}" ]] || body=
	if [[ -n $body ]] && ((!held)); then
		body="\"probe\":$body,\"error\":\"not sampled while the connections were held\""
	elif [[ -z $body ]]; then
		out=$(tail -n 1 "$err" | tr -d '"\\')
		body="\"error\":\"no JSON from rpcrdma-probe (status $rc): $out\""
	else
		body="\"probe\":$body"
	fi
	emit "\"section\":\"connections\",\"figure\":\"$fig\",\"who\":\"$who\",\"n\":$n,\"run\":$run,\"hold_s\":$CONN_HOLD,\"status\":$rc,\"held\":$held,\"wall_s\":$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }'),\"mem_avail_kb_before\":$ma0,\"mem_avail_kb_held\":$ma1,\"cm_conns_before\":$cm0,\"cm_conns_held\":$cm1,\"probe_rss_kb\":$prss,\"rss_kb_before\":$rss0,\"rss_kb_held\":$rss1,\"mr_bytes_before\":${mr0:-null},\"mr_bytes_held\":${mr1:-null},\"buf_bytes_in_use_before\":${bu0:-null},\"buf_bytes_in_use_held\":${bu1:-null},\"conns_open_before\":${co0:-null},\"conns_open_held\":${co1:-null},$body"
	out="connections $fig $who N=$n run $run: status $rc, $body; server side held $cm1 (before $cm0); MemAvailable $ma0 -> $ma1 KiB; probe VmRSS $prss KiB"
	[[ $who == rnfsd ]] && out+="; rpcrdma-nfsd VmRSS $rss0 -> $rss1 KiB, mr_bytes $mr0 -> $mr1, buf_bytes_in_use $bu0 -> $bu1, conns_open $co0 -> $co1"
	log "$out"
	if [[ $who == rnfsd ]]; then
		if ! kill -0 "$RNFSD_PID" 2>/dev/null && dmesg | grep -q "Killed process $RNFSD_PID "; then
			log "rpcrdma-nfsd was killed by the OOM killer"
			emit "\"section\":\"connections\",\"figure\":\"$fig\",\"who\":\"$who\",\"n\":$n,\"run\":$run,\"error\":\"rpcrdma-nfsd killed by the OOM killer\""
		fi
		conn_rnfsd_down
	fi
	[[ $body == *'"refused":0,"failed":0,'* && $body == *'"dropped_during_hold":0,'* && $body == *"\"connected\":$n,"* ]] && CONN_OK=1
	return 0
}

section_connections() {
	local t0=$SECONDS r n s left est last_n last_s line
	PROBE=$(rpcrdma_bin rpcrdma-probe)
	log "== 5. connections: rpcrdma-probe --connections N --hold $CONN_HOLD, N = $CONN_NS ($REPEAT runs), then the most held (N = $CONN_STEPS; at most $CONN_MAX s for the section)"
	# rpcrdma-nfsd runs anew for every probe run, without a mount
	if [[ -n "${RNFSD_PID:-}" ]] && kill -0 "$RNFSD_PID" 2>/dev/null; then
		kumount "$RMNT"
		conn_rnfsd_down
	fi
	mkdir -p "$BENCH_OUT/connections"
	CONN_KBASE=$(cm_conns "$NFS_RDMA_PORT")
	emit "\"section\":\"info\",\"connections_tool\":\"rpcrdma-probe\",\"hold_s\":$CONN_HOLD,\"ns\":\"$CONN_NS\",\"steps\":\"$CONN_STEPS\",\"max_s\":$CONN_MAX,\"knfsd_base_conns\":$CONN_KBASE,\"mem_total_kb\":$(meminfo_kb MemTotal),\"rnfsd_args\":\"${RNFSD_ARGS[*]}\""
	for ((r = 1; r <= REPEAT; r++)); do
		for n in $CONN_NS; do
			for s in knfsd rnfsd; do
				left=$((CONN_MAX - (SECONDS - t0)))
				if ((left < CONN_HOLD + 30)); then
					emit "\"section\":\"connections\",\"figure\":\"idle\",\"who\":\"$s\",\"n\":$n,\"run\":$r,\"skipped\":\"not measured: BENCH_CONN_MAX $CONN_MAX s reached\""
					continue
				fi
				conn_probe idle "$s" "$n" "$r" "$left"
			done
		done
	done
	# the most connections held: growing N while the previous step held all
	# and the estimate (open time growing with N) fits in what is left
	for s in rnfsd knfsd; do
		last_n=0 last_s=0
		for n in $CONN_STEPS; do
			left=$((CONN_MAX - (SECONDS - t0)))
			est=$((last_n ? last_s * n / last_n + CONN_HOLD + 20 : CONN_HOLD + 30))
			if ((est > left)); then
				emit "\"section\":\"connections\",\"figure\":\"limit\",\"who\":\"$s\",\"n\":$n,\"run\":1,\"skipped\":\"not measured: BENCH_CONN_MAX $CONN_MAX s (about $est s needed, $left s left)\""
				log "connections limit $s N=$n: not measured (about $est s needed, $left s left of BENCH_CONN_MAX)"
				break
			fi
			conn_probe limit "$s" "$n" 1 "$left"
			last_n=$n last_s=$CONN_OPEN_S
			((CONN_OK)) || break
		done
	done
	# the kernel's reasons for closing connections (svc_check_conn_limits)
	dmesg | grep -iE "too many open connections|Killed process" | tail -n 5 | while IFS= read -r line; do
		log "dmesg: $line"
	done || true
	log "connections: section took $((SECONDS - t0)) s"
	emit "\"section\":\"connections\",\"figure\":\"time\",\"section_s\":$((SECONDS - t0))"
}

# ================================================================ 6. nfs41
# The kernel-client workout of vm/nfs41-interop (tests/vm/workout.sh) with
# the kernel client mounting vers=4.1,proto=rdma, against kernel nfsd (port
# 20049, KEXPORT/nfs41 under its fsid=0 root) and against rpcrdma-nfsd
# --nfs4 (port RNFSD_PORT, its own export and state directory, started for
# this section), each phase timed (wall clock) with the server's CPU and
# the RPCs the client sent.  One mount at a time; every run starts from an
# empty directory and a fresh mount, the servers alternating within each
# repeat.  A failed check ends the phase (a subshell) and the rest of that
# run: it is an error in the results, with the check's message.
NFS41_PHASES=(write read readdir namespace tree_in tree_out rm)
N41_KMNT=/mnt/bench41-knfsd
N41_RMNT=/mnt/bench41-rnfsd
N41_KEXPORT=$KEXPORT/nfs41
N41_REXPORT=$W/rnfsd41-export
N41_DIR=$BENCH_OUT/nfs41
N41_RNFSD_PID=

# n41_mnt WHO / n41_export WHO / n41_spec WHO / n41_port WHO: WHO's mount
# point, directory on the server's side, mount source and RDMA port.
n41_mnt() { if [[ $1 == knfsd ]]; then echo "$N41_KMNT"; else echo "$N41_RMNT"; fi; }
n41_export() { if [[ $1 == knfsd ]]; then echo "$N41_KEXPORT"; else echo "$N41_REXPORT"; fi; }
n41_spec() { if [[ $1 == knfsd ]]; then echo "$SERVER_ADDR:/nfs41"; else echo "$SERVER_ADDR:$N41_REXPORT"; fi; }
n41_port() { if [[ $1 == knfsd ]]; then echo "$NFS_RDMA_PORT"; else echo "$RNFSD_PORT"; fi; }
n41_pids() { if [[ $1 == knfsd ]]; then knfsd_pids; else echo "$N41_RNFSD_PID"; fi; }

# json_str TEXT: TEXT as the inside of a JSON string (one line).
json_str() {
	local t=$1
	t=${t//\\/\\\\}
	t=${t//\"/\\\"}
	t=${t//$'\t'/ }
	t=${t//$'\r'/ }
	t=${t//$'\n'/ }
	printf '%s' "$t"
}

# n41_mount WHO: mount WHO with NFSv4.1 over RDMA; returns 1, with the
# reason in N41_ERR, when the mount fails or is not NFSv4.1 over RDMA.
n41_mount() {
	local mnt opts line xprt
	mnt=$(n41_mnt "$1")
	opts=vers=4.1,proto=rdma,port=$(n41_port "$1")
	mkdir -p "$mnt"
	if ! timeout -k 10 120 mount -t nfs -o "$opts" "$(n41_spec "$1")" "$mnt"; then
		N41_ERR="mount -t nfs -o $opts $(n41_spec "$1") $mnt failed"
		return 1
	fi
	line=$(awk -v m="$mnt" '$2 == m' /proc/mounts)
	xprt=$(mountstats_xprt "$mnt")
	if [[ "$line" != *" nfs4 "*"vers=4.1"* || "$xprt" != "xprt:"*"rdma"* ]]; then
		N41_ERR="$mnt is not NFSv4.1 over RDMA: '$line' '$xprt'"
		return 1
	fi
}

# n41_remount WHO: unmount, drop the caches, mount again (not timed).
n41_remount() {
	kumount "$(n41_mnt "$1")"
	drop_caches
	n41_mount "$1"
}

# n41_ops MNT: the per-operation call counts of MNT, "OP COUNT" lines.
n41_ops() {
	awk -v m="$1" '$1 == "device" { on = ($5 == m); next }
		on && /^[ \t]+[A-Z_0-9]+: [0-9]+ / { sub(/:$/, "", $1); print $1, $2 }' /proc/self/mountstats
}

# n41_ops_delta BEFORE AFTER: the operations whose count grew, as a JSON
# object body ("OP":N,...).
n41_ops_delta() {
	local -A b
	local op n out=
	while read -r op n; do [[ -n $op ]] && b[$op]=$n; done <<<"$1"
	while read -r op n; do
		[[ -n $op ]] && ((n > ${b[$op]:-0})) && out+="${out:+,}\"$op\":$((n - ${b[$op]:-0}))"
	done <<<"$2"
	printf '%s' "$out"
}

# n41_phase WHO RUN PHASE: run the workout's wk_PHASE on WHO's mount in a
# subshell (set -e as in the VM tests; its output to N41_DIR/WHO-RUN.log),
# timed: wall clock, the server's CPU ticks, the RPCs sent on the mount
# (and per operation).  Emits the row (an error row with the failed check's
# message when it fails) and returns the phase's status.
n41_phase() {
	local who=$1 run=$2 ph=$3 mnt pids c0 c1 r0 r1 t0 t1 rc=0 msg plog o0 ops
	mnt=$(n41_mnt "$who")
	plog=$N41_DIR/$who-$run.log
	mapfile -t pids <<<"$(n41_pids "$who")"
	sync
	o0=$(n41_ops "$mnt")
	r0=$(rpcs "$mnt")
	c0=$(ticks "${pids[@]}")
	t0=$(now)
	(
		set -E
		trap 'printf "FAIL: status %d at %s:%d: %s\n" "$?" "${BASH_SOURCE[0]}" "$LINENO" "$BASH_COMMAND" >&2' ERR
		echo "---- $ph"
		"wk_$ph"
	) >>"$plog" 2>&1 &
	wait "$!" || rc=$?
	t1=$(now)
	c1=$(ticks "${pids[@]}")
	r1=$(rpcs "$mnt")
	ops=$(n41_ops_delta "$o0" "$(n41_ops "$mnt")")
	echo "---- $ph: calls {$ops}" >>"$plog"
	if ((rc != 0)); then
		msg=$(grep 'FAIL' "$plog" | tail -n 1)
		emit "\"section\":\"nfs41\",\"figure\":\"$ph\",\"who\":\"$who\",\"run\":$run,\"error\":\"status $rc: $(json_str "${msg:-no message}")\""
		log "nfs41 $ph $who run $run: FAILED (status $rc): $msg"
		return 1
	fi
	emit "\"section\":\"nfs41\",\"figure\":\"$ph\",\"who\":\"$who\",\"run\":$run,\"wall_s\":$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f", b - a }'),\"cpu_s\":$(awk -v a="$c0" -v b="$c1" -v h="$CLK_TCK" 'BEGIN { printf "%.2f", (b - a) / h }'),\"rpcs\":$((r1 - r0)),\"ops\":{$ops}"
	log "nfs41 $ph $who run $run: $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }') s"
}

# n41_run WHO RUN: one workout against WHO: an empty directory with the 2000
# entries made on the server's side, a fresh mount, the phases (a remount
# before read and tree_out, as in the VM tests), unmount.
n41_run() {
	local who=$1 run=$2 ph
	WK_MNT=$(n41_mnt "$who") WK_EXPORT=$(n41_export "$who")
	# the directory stays (rpcrdma-nfsd's export root): only what is in it goes
	mkdir -p "$WK_EXPORT"
	find "$WK_EXPORT" -mindepth 1 -delete
	rm -rf "$WK_LOCAL/tree-back" "$WK_LOCAL/back"
	mkdir -p "$WK_LOCAL/back"
	wk_readdir_prepare >/dev/null
	N41_ERR=
	if ! n41_mount "$who"; then
		emit "\"section\":\"nfs41\",\"figure\":\"mount\",\"who\":\"$who\",\"run\":$run,\"error\":\"$(json_str "$N41_ERR")\""
		log "nfs41 $who run $run: $N41_ERR"
		kumount "$WK_MNT"
		return 0
	fi
	[[ $run == 1 ]] && emit "\"section\":\"info\",\"nfs41_mount\":\"$who\",\"opts\":\"$(mount_opts "$WK_MNT")\""
	for ph in "${NFS41_PHASES[@]}"; do
		if [[ $ph == read || $ph == tree_out ]] && ! n41_remount "$who"; then
			emit "\"section\":\"nfs41\",\"figure\":\"$ph\",\"who\":\"$who\",\"run\":$run,\"error\":\"remount before $ph: $(json_str "$N41_ERR")\""
			log "nfs41 $who run $run: remount before $ph: $N41_ERR"
			break
		fi
		if ! n41_phase "$who" "$run" "$ph"; then
			log "nfs41 $who run $run: the phases after $ph not run"
			break
		fi
	done
	kumount "$WK_MNT"
}

# n41_warm WHO: mount, create and remove a file (the kernel nfsd answers
# NFS4ERR_GRACE until its grace period ends; the client waits and asks
# again), unmount; not measured.
n41_warm() {
	local t0=$SECONDS mnt
	mnt=$(n41_mnt "$1")
	mkdir -p "$(n41_export "$1")"
	N41_ERR=
	if ! n41_mount "$1"; then
		log "nfs41 warm-up $1: $N41_ERR"
		kumount "$mnt"
		return 0
	fi
	timeout -k 10 150 sh -c ": >'$mnt/warm' && rm '$mnt/warm'" ||
		log "nfs41 warm-up $1: create and remove failed or timed out"
	kumount "$mnt"
	log "nfs41 warm-up $1: $((SECONDS - t0)) s"
}

section_nfs41() {
	local r s v rc=0 t0=$SECONDS
	log "== 6. NFSv4.1 workout (tests/vm/workout.sh): kernel nfsd vs rpcrdma-nfsd --nfs4, kernel client vers=4.1,proto=rdma ($REPEAT runs)"
	mkdir -p "$N41_DIR"
	vm_kmod nfsv4 rpcrdma
	((KNFSD_UP)) || start_knfsd
	# section 2's rpcrdma-nfsd (NFSv3 only) gives way when still running
	if [[ -n "${RNFSD_PID:-}" ]] && kill -0 "$RNFSD_PID" 2>/dev/null; then
		kumount "$RMNT"
		kill -TERM "$RNFSD_PID" 2>/dev/null || true
		timeout -k 10 30 tail --pid="$RNFSD_PID" -f /dev/null 2>/dev/null || kill -KILL "$RNFSD_PID" 2>/dev/null || true
		wait "$RNFSD_PID" 2>/dev/null || true
	fi
	RNFSD=$(rpcrdma_bin rpcrdma-nfsd)
	rm -rf "$W/nfs41-state"
	NFS_RDMA_PORT=$RNFSD_PORT rnfsd_start "$RNFSD" "$N41_REXPORT" "$W/rpcrdma-nfsd-nfs41.log" \
		--nfs4 "${RNFSD_ARGS[@]}" --allow "$ALLOW" --handle-key "$W/handle.key" \
		--state-dir "$W/nfs41-state"
	N41_RNFSD_PID=$RNFSD_PID
	at_exit "kumount '$N41_KMNT'"
	at_exit "kumount '$N41_RMNT'"
	v=$(</proc/fs/nfsd/versions)
	emit "\"section\":\"info\",\"nfs41_tool\":\"workout\",\"phases\":\"${NFS41_PHASES[*]}\",\"knfsd_versions\":\"$v\",\"knfsd_threads\":$(knfsd_pids | wc -l),\"rnfsd_args\":\"--nfs4 ${RNFSD_ARGS[*]}\""
	# shellcheck disable=SC2034 # read by tests/vm/workout.sh
	WK_LOCAL=$W/nfs41-local WK_ODD_BS=0 WK_READDIR_OP=READDIR
	wk_setup >/dev/null
	for s in knfsd rnfsd; do
		n41_warm "$s"
	done
	for ((r = 1; r <= REPEAT; r++)); do
		for s in knfsd rnfsd; do
			n41_run "$s" "$r"
		done
	done
	kill -TERM "$N41_RNFSD_PID" 2>/dev/null || true
	timeout -k 10 30 tail --pid="$N41_RNFSD_PID" -f /dev/null 2>/dev/null || kill -KILL "$N41_RNFSD_PID" 2>/dev/null || true
	wait "$N41_RNFSD_PID" 2>/dev/null || rc=$?
	((rc == 0)) || emit "\"section\":\"nfs41\",\"figure\":\"exit\",\"who\":\"rnfsd\",\"error\":\"rpcrdma-nfsd --nfs4 exited with status $rc after SIGTERM\""
	grep '^{' "$W/rpcrdma-nfsd-nfs41.log" | tail -n 1 >"$BENCH_OUT/rpcrdma-nfsd-nfs41-stats.json" || true
	log "nfs41: section took $((SECONDS - t0)) s"
	emit "\"section\":\"nfs41\",\"figure\":\"time\",\"section_s\":$((SECONDS - t0))"
}

# ================================================================ 7. cephfs
# One single-node Ceph cluster (scripts/ceph-up, lib.sh's ceph_up) and the
# same figures as section 2 (server_figure: its fio jobs and metadata
# driver) through four ways to reach its file system "cephfs" from the
# guest's kernel client, each in a directory of its own (WHO under the
# file system's root):
#   ceph-rnfsd      rpcrdma-nfsd's cephfs backend (exports line
#                   cephfs://admin@cephfs/ ...(rw,no_root_squash,fsid=7),
#                   or BENCH_CEPHFS_EXPORT_OPTS in the parentheses),
#                   NFSv3 over RDMA on RNFSD_PORT
#   ceph-ganesha    nfs-ganesha's FSAL_CEPH, NFSv3 over TCP (Debian's
#                   nfs-ganesha-ceph has no RDMA), in the foreground with its
#                   configuration, log and pid file in BENCH_OUT/cephfs
#   ceph-kreexport  the kernel's nfsd re-exporting the guest kernel's CephFS
#                   mount (exportfs ...,sync,fsid=9), NFSv3 over RDMA on 20049
#   ceph-direct     the kernel CephFS client mounted directly (the ceiling)
#   ceph-rnfsd4, ceph-ganesha4, ceph-kreexport4: the same three servers
#                   (the same processes) mounted a second time with
#                   NFSv4.1: vers=4.1 over RDMA for rpcrdma-nfsd (its
#                   NFSv4.1 pseudo root "/", the state directory fresh in
#                   W) and the re-export (the CephFS mount bound under
#                   KEXPORT, knfsd's NFSv4 root, as ceph, exported fsid=10),
#                   over TCP for ganesha (pseudo path /cephfs, Graceless)
# The seven take turns figure by figure within each repeat.  CPU: the
# rpcrdma-nfsd and ganesha.nfsd processes (their libcephfs threads
# included), the [nfsd] threads (the kernel CephFS client's work in other
# kernel threads not counted); none for the direct mount.  With
# BENCH_CEPHFS_STRACE=1, one more run of BENCH_CEPHFS_STRACE_FIGURES for
# the two user-space gateways under `strace -c -f` (not a figure: strace
# slows them): system calls per operation.
CEPH_FIGS=${BENCH_CEPHFS_FIGURES-seq_write seq_read rand_read meta meta8}
# the options of ceph-rnfsd's export line (`async`: no commit_metadata, see docs/cephfs.md "Speed")
CEPH_XOPTS=${BENCH_CEPHFS_EXPORT_OPTS:-rw,no_root_squash,fsid=7}
CEPH_WHOS=${BENCH_CEPHFS_WHO-ceph-rnfsd ceph-ganesha ceph-kreexport ceph-direct ceph-rnfsd4 ceph-ganesha4 ceph-kreexport4}
CEPH_STRACE=${BENCH_CEPHFS_STRACE:-0}
CEPH_STRACE_FIGS=${BENCH_CEPHFS_STRACE_FIGURES-rand_read meta}
# 1: after every ceph-rnfsd / ceph-rnfsd4 run, the gateway's libcephfs
# counters (its admin socket's perf dump: object cacher hits and misses),
# and after the runs one more run of BENCH_CEPHFS_STRACE_FIGURES per way
# under `perf record -a -g -e cpu-clock` (BENCH_OUT/cephfs/perf-*)
CEPH_PROBE=${BENCH_CEPHFS_PROBE:-0}
# libcephfs settings for ceph-rnfsd alone, `name = value` lines separated
# by `;` (e.g. "client_oc_target_dirty = 0"): its export then names a copy
# of /etc/ceph/ceph.conf with these in its [client] section (conf=)
CEPH_RNFSD_CONF=${BENCH_CEPHFS_RNFSD_CONF:-}
GANESHA_PORT=${BENCH_GANESHA_PORT:-12049}
GANESHA_MNT_PORT=${BENCH_GANESHA_MNT_PORT:-12048}
CEPH_DIRECT=/mnt/bench-ceph
CEPH_RNFSD_PID=
GANESHA_PID=

# ceph_mnt WHO: WHO's mount point (the direct CephFS mount for ceph-direct).
ceph_mnt() { if [[ $1 == ceph-direct ]]; then echo "$CEPH_DIRECT"; else echo "/mnt/bench-$1"; fi; }

# ganesha_fsal_start FSAL DIR PROTOCOLS EXPORT_ID PATH PSEUDO PORT MNT_PORT [SECTYPE]:
# ganesha.nfsd in the foreground, configured as its documentation says
# (ganesha-core-config(8), ganesha-export-config(8)): NFS_CORE_PARAM with
# PROTOCOLS ("3", or "3, 4"), Bind_Addr SERVER_ADDR, NFS_Port PORT,
# MNT_Port MNT_PORT, no NLM, no RQUOTA; with NFSv4 in PROTOCOLS an NFSv4
# block (Graceless, Minor_Versions 1, RecoveryRoot DIR/recovery); one
# EXPORT (Export_Id, Path PATH, Pseudo PSEUDO, PROTOCOLS, Transports TCP,
# Access_Type RW, No_Root_Squash, SecType SECTYPE when given, FSAL { Name
# = FSAL; }).  Its configuration, log, pid file and output in DIR.  Waits
# (180 s at most) until it listens on PORT and MNT_PORT; its pid in
# GANESHA_STARTED.  It registers with rpcbind, taking over the kernel's NFS
# and MOUNT entries: mounts of the kernel's nfsd are made before it starts,
# and every other mount names its ports.
GANESHA_STARTED=
ganesha_fsal_start() {
	local fsal=$1 d=$2 protos=$3 id=$4 path=$5 pseudo=$6 port=$7 mport=$8 sectype=${9:-} i v4=() sec=()
	mkdir -p "$d"
	[[ $protos == *4* ]] && v4=("NFSv4 {" "	Graceless = true;" "	Minor_Versions = 1;" \
		"	RecoveryRoot = \"$d/recovery\";" "}")
	[[ -n $sectype ]] && sec=("	SecType = $sectype;")
	printf '%s\n' \
		"NFS_CORE_PARAM {" \
		"	Protocols = $protos;" \
		"	Bind_Addr = $SERVER_ADDR;" \
		"	NFS_Port = $port;" \
		"	MNT_Port = $mport;" \
		"	Enable_NLM = false;" \
		"	Enable_RQUOTA = false;" \
		"}" \
		"${v4[@]}" \
		"EXPORT {" \
		"	Export_Id = $id;" \
		"	Path = \"$path\";" \
		"	Pseudo = \"$pseudo\";" \
		"	Protocols = $protos;" \
		"	Transports = TCP;" \
		"	Access_Type = RW;" \
		"	Squash = No_Root_Squash;" \
		"${sec[@]}" \
		"	FSAL {" \
		"		Name = $fsal;" \
		"	}" \
		"}" >"$d/ganesha.conf"
	ganesha.nfsd -F -f "$d/ganesha.conf" -L "$d/ganesha.log" -p "$d/ganesha.pid" -N NIV_EVENT \
		>"$d/ganesha.out" 2>&1 &
	GANESHA_STARTED=$!
	at_exit "kill -KILL $GANESHA_STARTED 2>/dev/null"
	on_failure "echo '---- ganesha.nfsd ($fsal) log (last 60 lines) ----'; tail -n 60 '$d/ganesha.log' '$d/ganesha.out'"
	i=$((SECONDS + 180))
	# (ganesha listens on an IPv6 socket, [::ffff:ADDR]:PORT: any listener on the port)
	until ss -Hltn "sport = :$port" | grep -q .; do
		kill -0 "$GANESHA_STARTED" 2>/dev/null || fail "ganesha.nfsd ($fsal) exited before listening (see $d/ganesha.log)"
		((SECONDS < i)) || fail "ganesha.nfsd ($fsal) not listening on $SERVER_ADDR:$port after 180 s (see $d/ganesha.log)"
		sleep 0.5
	done
	sleep 1
	ss -Hltn "sport = :$mport" | grep -q . ||
		fail "ganesha.nfsd ($fsal) does not listen on $SERVER_ADDR:$mport (see $d/ganesha.log)"
	log "ganesha.nfsd (pid $GANESHA_STARTED) serves $path (FSAL_$fsal) on TCP $SERVER_ADDR:$port (MOUNT $mport)"
}

# ganesha_version: nfs-ganesha's version: the package's (dpkg), else the
# binary's own (`ganesha.nfsd -v`: "NFS-Ganesha Release = V4.3"), as the
# guest's /var is a fresh tmpfs without the dpkg database.
ganesha_version() {
	local v
	v=$(dpkg-query -W -f '${Version}' nfs-ganesha 2>/dev/null) || v=
	[[ -n $v ]] || v=$(ganesha.nfsd -v 2>/dev/null | sed -n 's/.*Release = V\{0,1\}//p' | head -n 1)
	echo "$v"
}

# ganesha_start: nfs-ganesha with FSAL_CEPH exporting the file system's
# root over NFSv3 and NFSv4.1/TCP (NFS GANESHA_PORT, MOUNT
# GANESHA_MNT_PORT; NFSv4 pseudo path /cephfs, no grace period), its
# files in BENCH_OUT/cephfs (ganesha_fsal_start).
ganesha_start() {
	ganesha_fsal_start CEPH "$BENCH_OUT/cephfs" "3, 4" 1 / /cephfs "$GANESHA_PORT" "$GANESHA_MNT_PORT"
	GANESHA_PID=$GANESHA_STARTED
}

# proc_stop PID: SIGTERM PID, wait up to 30 s, then SIGKILL.
proc_stop() {
	kill -TERM "$1" 2>/dev/null || return 0
	timeout -k 10 30 tail --pid="$1" -f /dev/null 2>/dev/null || kill -KILL "$1" 2>/dev/null || true
	wait "$1" 2>/dev/null || true
}

# ceph_warm WHO: WHO's directory made through WHO's own mount, a file
# created, written, read and removed there (not measured).
ceph_warm() {
	local d t0=$SECONDS
	d=$(dir_of "$1")
	timeout -k 10 300 sh -c "mkdir -p '$d' && echo warm >'$d/warm' && cat '$d/warm' >/dev/null && rm '$d/warm'" ||
		fail "warm-up of $1 ($d) failed or timed out"
	log "cephfs warm-up $1: $((SECONDS - t0)) s"
}

# ceph_counters WHO FIGURE RUN: rpcrdma-nfsd's libcephfs counters (its
# client admin socket's `perf dump`) into
# BENCH_OUT/cephfs/counters-WHO-FIGURE-RUN.json.
ceph_counters() {
	local a
	for a in "$CEPH_BASE"/run/*."$CEPH_RNFSD_PID".asok; do
		[[ -S $a ]] || continue
		timeout -k 5 60 ceph --admin-daemon "$a" perf dump \
			>"$BENCH_OUT/cephfs/counters-$1-$2-$3.json" 2>&1 || true
	done
}

# ceph_perf WHO FIGURE: one more run of FIGURE (run 0, section
# cephfs_perf) with the whole guest under perf record (cpu-clock, call
# graphs); the report goes to BENCH_OUT/cephfs/perf-WHO-FIGURE.txt.
ceph_perf() {
	local who=$1 fig=$2 st d=$BENCH_OUT/cephfs data=$W/perf.data
	# (the data in the guest's scratch: written to BENCH_OUT, a 9p share,
	# perf's own writes were a fifth of the samples)
	perf record -a -g -e cpu-clock --proc-map-timeout 5000 -o "$data" >/dev/null 2>&1 &
	st=$!
	sleep 2
	server_figure "$fig" "$who" 0 "" cephfs_perf
	kill -INT "$st" 2>/dev/null || true
	timeout -k 5 120 tail --pid="$st" -f /dev/null 2>/dev/null || kill -KILL "$st" 2>/dev/null || true
	wait "$st" 2>/dev/null || true
	timeout -k 5 300 perf report -i "$data" --stdio --no-children \
		--sort comm,dso,sym >"$d/perf-$who-$fig.txt" 2>&1 || true
	timeout -k 5 300 perf report -i "$data" --stdio --no-children -g none \
		--sort comm,dso,sym >"$d/perf-$who-$fig-flat.txt" 2>&1 || true
	rm -f "$data"
	log "perf $who $fig: done"
}

# ceph_strace WHO FIGURE: one more run of FIGURE (run 0, section
# cephfs_strace) with the gateway WHO, every thread, under strace -c -f;
# strace's summary goes to BENCH_OUT/cephfs/strace-WHO-FIGURE.txt, and a
# cephfs_strace row with figure "syscalls" gives its total of calls.
ceph_strace() {
	local who=$1 fig=$2 pid st f n
	pid=$(server_pids "$who")
	f=$BENCH_OUT/cephfs/strace-$who-$fig.txt
	strace -c -f -p "$pid" -o "$f" 2>/dev/null &
	st=$!
	sleep 2
	server_figure "$fig" "$who" 0 "" cephfs_strace
	kill -INT "$st" 2>/dev/null || true
	timeout -k 5 60 tail --pid="$st" -f /dev/null 2>/dev/null || kill -KILL "$st" 2>/dev/null || true
	wait "$st" 2>/dev/null || true
	n=$(awk '$NF == "total" { print ($4 ~ /^[0-9]+$/) ? $4 : $3 }' "$f" 2>/dev/null)
	emit "\"section\":\"cephfs_strace\",\"figure\":\"syscalls\",\"of\":\"$fig\",\"who\":\"$who\",\"syscalls\":${n:-null},\"strace\":\"cephfs/${f##*/}\""
	log "strace $who $fig: ${n:-?} system calls"
}

# ceph_mount41 WHO SPEC OPTS: WHO's NFSv4.1 mount; when it fails or is
# not NFSv4.1, WHO is noted (a cephfs row with "skipped") and put in
# CEPH_NOT41, which section_cephfs leaves out.
CEPH_NOT41=()
ceph_mount41() {
	local who=$1 mnt line
	mnt=$(ceph_mnt "$who")
	mkdir -p "$mnt"
	vm_kmod nfsv4 rpcrdma
	if timeout -k 10 120 mount -t nfs -o "$3" "$2" "$mnt"; then
		at_exit "kumount '$mnt'"
		line=$(awk -v m="$mnt" '$2 == m' /proc/mounts)
		if [[ $line == *" nfs4 "*"vers=4.1"* ]]; then
			log "mounted $2 on $mnt ($3)"
			return 0
		fi
		kumount "$mnt"
	fi
	emit "\"section\":\"cephfs\",\"who\":\"$who\",\"skipped\":\"$(json_str "mount -t nfs -o $3 $2 failed or is not NFSv4.1")\""
	log "cephfs: $who left out: mount -t nfs -o $3 $2 failed or is not NFSv4.1"
	CEPH_NOT41+=("$who")
}

section_cephfs() {
	local r s fig t0=$SECONDS nfsd have=() m
	log "== 7. CephFS: rpcrdma-nfsd's cephfs backend (RDMA) vs nfs-ganesha FSAL_CEPH (TCP) vs kernel nfsd re-exporting a kernel CephFS mount (RDMA) vs the kernel CephFS client, NFSv3 and NFSv4.1 ($REPEAT runs)"
	nfsd=$(rpcrdma_bin rpcrdma-nfsd)
	for s in ceph-mon ceph-osd ceph-mds ceph; do
		command -v "$s" >/dev/null || {
			emit "\"section\":\"cephfs\",\"skipped\":\"not measured: Ceph is not installed (scripts/install-deps)\""
			log "cephfs: not measured: $s not installed"
			return 0
		}
	done
	if ! grep -q 'libcephfs\.so' "$nfsd"; then
		emit "\"section\":\"cephfs\",\"skipped\":\"not measured: rpcrdma-nfsd was built without the cephfs backend (libcephfs-dev)\""
		log "cephfs: not measured: rpcrdma-nfsd built without libcephfs"
		return 0
	fi
	for s in $CEPH_WHOS; do
		if [[ $s == ceph-ganesha* ]] && ! command -v ganesha.nfsd >/dev/null; then
			log "cephfs: ceph-ganesha left out: ganesha.nfsd not installed (nfs-ganesha nfs-ganesha-ceph)"
			continue
		fi
		have+=("$s")
	done
	mkdir -p "$BENCH_OUT/cephfs"
	# (section 2's rpcrdma-nfsd has gone: MOUNT_PORT is free)
	ceph_up
	emit "\"section\":\"info\",\"cephfs_up_s\":$CEPH_UP_SECS"
	ceph_kmount "$CEPH_DIRECT"
	for s in "${have[@]}"; do
		case $s in
		ceph-rnfsd | ceph-rnfsd4)
			if [[ -z $CEPH_RNFSD_PID ]]; then
				local xo=$CEPH_XOPTS l
				if [[ -n $CEPH_RNFSD_CONF ]]; then
					cp /etc/ceph/ceph.conf "$W/rnfsd-ceph.conf"
					IFS=';' read -ra l <<<"$CEPH_RNFSD_CONF"
					printf '[client]\n' >>"$W/rnfsd-ceph.conf"
					printf '%s\n' "${l[@]}" >>"$W/rnfsd-ceph.conf"
					xo+=",backend=cephfs:conf=$W/rnfsd-ceph.conf"
					emit "\"section\":\"info\",\"cephfs_rnfsd_conf\":\"$(json_str "$CEPH_RNFSD_CONF")\""
				fi
				printf 'cephfs://admin@cephfs/ %s(%s)\n' "$ALLOW" "$xo" >"$W/cephfs.exports"
				emit "\"section\":\"info\",\"cephfs_rnfsd_export_opts\":\"$CEPH_XOPTS\""
				rm -rf "$W/cephfs-state"
				# shellcheck disable=SC2086
				NFS_RDMA_PORT=$RNFSD_PORT rnfsd_start_exports "$nfsd" "$W/cephfs.exports" "$W/rpcrdma-nfsd-cephfs.log" \
					--stats --threads 4 ${BENCH_RNFSD_ARGS:-} --handle-key "$W/handle.key" \
					--state-dir "$W/cephfs-state"
				CEPH_RNFSD_PID=$RNFSD_PID
			fi
			if [[ $s == ceph-rnfsd ]]; then
				NFS_RDMA_PORT=$RNFSD_PORT kmount "$SERVER_ADDR:/" "$(ceph_mnt "$s")" \
					"$MOPTS,mountport=$MOUNT_PORT,mountproto=tcp"
			else
				ceph_mount41 "$s" "$SERVER_ADDR:/" "vers=4.1,proto=rdma,port=$RNFSD_PORT,$MOPTS"
			fi
			;;
		ceph-kreexport)
			((KNFSD_UP)) || start_knfsd
			timeout -k 10 30 exportfs -o rw,no_root_squash,insecure,no_subtree_check,sync,fsid=9 \
				"$ALLOW:$CEPH_DIRECT" || fail "exportfs $ALLOW:$CEPH_DIRECT"
			at_exit "timeout -k 10 10 exportfs -u '$ALLOW:$CEPH_DIRECT'"
			kmount "$SERVER_ADDR:$CEPH_DIRECT" "$(ceph_mnt "$s")" "$MOPTS"
			;;
		ceph-kreexport4)
			# NFSv4 sees knfsd's fsid=0 root (KEXPORT): the CephFS
			# mount is bound under it and exported there
			((KNFSD_UP)) || start_knfsd
			mkdir -p "$KEXPORT/ceph"
			mount --bind "$CEPH_DIRECT" "$KEXPORT/ceph" || fail "mount --bind $CEPH_DIRECT $KEXPORT/ceph"
			at_exit "umount -l '$KEXPORT/ceph'"
			timeout -k 10 30 exportfs -o rw,no_root_squash,insecure,no_subtree_check,sync,fsid=10 \
				"$ALLOW:$KEXPORT/ceph" || fail "exportfs $ALLOW:$KEXPORT/ceph"
			at_exit "timeout -k 10 10 exportfs -u '$ALLOW:$KEXPORT/ceph'"
			ceph_mount41 "$s" "$SERVER_ADDR:/ceph" "vers=4.1,proto=rdma,port=$NFS_RDMA_PORT,$MOPTS"
			;;
		esac
	done
	# last: it takes over rpcbind's NFS and MOUNT entries (ganesha_start)
	if [[ " ${have[*]} " == *" ceph-ganesha"[\ 4]* ]]; then
		ganesha_start
		if [[ " ${have[*]} " == *" ceph-ganesha "* ]]; then
			m=$(ceph_mnt ceph-ganesha)
			mkdir -p "$m"
			timeout -k 10 120 mount -t nfs -o "vers=3,proto=tcp,port=$GANESHA_PORT,mountport=$GANESHA_MNT_PORT,mountproto=tcp,nolock,$MOPTS" \
				"$SERVER_ADDR:/" "$m" || fail "mount nfs-ganesha's export on $m"
			at_exit "kumount '$m'"
		fi
		if [[ " ${have[*]} " == *" ceph-ganesha4 "* ]]; then
			ceph_mount41 ceph-ganesha4 "$SERVER_ADDR:/cephfs" "vers=4.1,proto=tcp,port=$GANESHA_PORT,$MOPTS"
		fi
	fi
	# the NFSv4.1 ways whose mount failed are left out (noted), not the run
	m=()
	for s in "${have[@]}"; do
		[[ " ${CEPH_NOT41[*]} " == *" $s "* ]] || m+=("$s")
	done
	have=("${m[@]}")
	for s in "${have[@]}"; do
		emit "\"section\":\"info\",\"cephfs_mount\":\"$s\",\"opts\":\"$(mount_opts "$(ceph_mnt "$s")")\""
		ceph_warm "$s"
	done
	emit "\"section\":\"info\",\"cephfs_tool\":\"server_figure\",\"figures\":\"$CEPH_FIGS\",\"who\":\"${have[*]}\",\"rnfsd_args\":\"--stats --threads 4 ${BENCH_RNFSD_ARGS:-}\",\"knfsd_threads\":$(knfsd_pids | wc -l)"
	for ((r = 1; r <= REPEAT; r++)); do
		for fig in $CEPH_FIGS; do
			for s in "${have[@]}"; do
				server_figure "$fig" "$s" "$r" "" cephfs
				if [[ $CEPH_PROBE == 1 && $s == ceph-rnfsd* ]]; then
					ceph_counters "$s" "$fig" "$r"
				fi
			done
		done
	done
	if [[ $CEPH_STRACE == 1 ]] && command -v strace >/dev/null; then
		for fig in $CEPH_STRACE_FIGS; do
			for s in "${have[@]}"; do
				if [[ $s == ceph-rnfsd || $s == ceph-ganesha ]]; then
					ceph_strace "$s" "$fig"
				fi
			done
		done
	fi
	if [[ $CEPH_PROBE == 1 ]] && command -v perf >/dev/null; then
		for fig in $CEPH_STRACE_FIGS; do
			for s in "${have[@]}"; do
				ceph_perf "$s" "$fig"
			done
		done
	fi
	for s in "${have[@]}"; do
		[[ $s == ceph-direct ]] && continue
		kumount "$(ceph_mnt "$s")"
	done
	# (the kernel nfsd holds the CephFS mount it exports)
	if [[ " ${have[*]} " == *" ceph-kreexport "* ]]; then
		timeout -k 10 10 exportfs -u "$ALLOW:$CEPH_DIRECT" || true
	fi
	if [[ " ${have[*]} " == *" ceph-kreexport4 "* ]]; then
		timeout -k 10 10 exportfs -u "$ALLOW:$KEXPORT/ceph" || true
		umount -l "$KEXPORT/ceph" || true
	fi
	kumount "$CEPH_DIRECT"
	[[ -n $GANESHA_PID ]] && proc_stop "$GANESHA_PID"
	if [[ -n $CEPH_RNFSD_PID ]]; then
		RNFSD_PID=$CEPH_RNFSD_PID
		rnfsd_term 30
		grep '^{' "$W/rpcrdma-nfsd-cephfs.log" | tail -n 1 >"$BENCH_OUT/rpcrdma-nfsd-cephfs-stats.json" || true
	fi
	log "cephfs: section took $((SECONDS - t0)) s"
	emit "\"section\":\"cephfs\",\"figure\":\"time\",\"section_s\":$((SECONDS - t0))"
}

# ================================================================ main
emit "\"section\":\"info\",\"kernel\":\"$(uname -r)\",\"ncpu\":$(nproc),\"vm\":${RPCRDMA_VM:-0},\"server\":\"$SERVER_ADDR\",\"client\":\"$CLIENT_ADDR\",\"rdma_dev\":\"$RDMA_DEV\",\"repeat\":$REPEAT,\"file_mb\":$FILE_MB,\"runtime_s\":$RUNTIME,\"iodepth\":$IODEPTH,\"perftest_events\":$PERF_EVENTS,\"seq_iodepth\":$SEQ_IODEPTH,\"meta_files\":$META_FILES,\"clk_tck\":$CLK_TCK"
command -v fio >/dev/null || fail "fio is not installed (apt-get install fio)"
has wire && section_wire
if has servers || has clients || has connections; then
	start_servers
fi
has servers && section_servers
has clients && section_clients
has transport && section_transport
if has servers; then
	kumount "$RMNT"
	rnfsd_term 30
	grep '^{' "$W/rpcrdma-nfsd.log" | tail -n 1 >"$BENCH_OUT/rpcrdma-nfsd-stats.json" || true
fi
# after section 2's rpcrdma-nfsd stopped: its own, serving TCP
has servers_tcp && section_servers_tcp
# its own rpcrdma-nfsd (--nfs4), stopped at its end
has nfs41 && section_nfs41
# last: it restarts rpcrdma-nfsd for every probe run
has connections && section_connections
# its own cluster and servers; a failure to start them ends the run here
has cephfs && section_cephfs
log "raw results: $RAW ($(wc -l <"$RAW") lines)"
