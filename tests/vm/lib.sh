# shellcheck shell=bash
# tests/vm/lib.sh: helpers for the VM tests.  Source it from a test script that
# scripts/vm runs inside the guest:
#
#	#!/usr/bin/env bash
#	. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
#
# Sourcing it sets `set -euo pipefail`, an EXIT trap that runs the registered
# cleanups (in reverse order) and, when the test fails, the registered
# diagnostics (server logs, ...) and the tail of dmesg.  A test passes when it
# exits 0.  Every command that could block is bounded with `timeout`.
#
# Environment (set by scripts/vm): RPCRDMA_SERVER_ADDR, RPCRDMA_CLIENT_ADDR,
# RPCRDMA_KMOD_DIR, RPCRDMA_VM_SCRATCH, RPCRDMA_CHECKOUT; RPCRDMA_BUILD_DIR
# (default <checkout>/build) says where our binaries are.

set -euo pipefail

VM_TEST_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
VM_TEST_NAME=$(basename "${BASH_SOURCE[1]:-$0}" .sh)
RPCRDMA_CHECKOUT=${RPCRDMA_CHECKOUT:-$(cd "$VM_TEST_DIR/../.." && pwd)}
RPCRDMA_BUILD_DIR=${RPCRDMA_BUILD_DIR:-$RPCRDMA_CHECKOUT/build}
# For the test scripts:
# shellcheck disable=SC2034
SERVER_ADDR=${RPCRDMA_SERVER_ADDR:-192.0.2.1}
# shellcheck disable=SC2034
CLIENT_ADDR=${RPCRDMA_CLIENT_ADDR:-192.0.2.2}
# shellcheck disable=SC2034
SCRATCH=${RPCRDMA_VM_SCRATCH:-/tmp}
# NFS/RDMA port (IANA "nfsrdma", 20049) and the MOUNT port our server uses.
NFS_RDMA_PORT=20049
# shellcheck disable=SC2034
MOUNT_PORT=20048
# NFS over TCP (rpcrdma-nfsd --tcp-port's default, as the kernel's nfsd).
NFS_TCP_PORT=2049
# The transport kmount and kmount41 mount over: rdma, or tcp for the tests
# registered a second time with RPCRDMA_NFS_PROTO=tcp (tests/vm/CMakeLists.txt:
# the same script, the kernel client over TCP against the same server).
NFS_PROTO=${RPCRDMA_NFS_PROTO:-rdma}
[[ $NFS_PROTO == rdma || $NFS_PROTO == tcp ]] ||
	{ echo "RPCRDMA_NFS_PROTO: rdma or tcp, not '$NFS_PROTO'" >&2; exit 1; }
# The six test files: 0 B, 1 B, one page -1/+1, 1 MiB + 3 B, 16 MiB.
TEST_FILE_SIZES=(0 1 4095 4097 1048579 16777216)

_vm_t0=$SECONDS
read -r _vm_up0 _ </proc/uptime

# log MSG...: progress line with seconds since the test started.
log() { printf '[%4ds] %s\n' "$((SECONDS - _vm_t0))" "$*"; }

# pass MSG...: record one passed check.
pass() { printf '[%4ds] PASS: %s\n' "$((SECONDS - _vm_t0))" "$*"; }

# fail MSG...: report the failure on stderr and end the test (status 1).  The
# EXIT trap then prints the diagnostics and runs the cleanups.
fail() {
	printf '[%4ds] FAIL: %s\n' "$((SECONDS - _vm_t0))" "$*" >&2
	exit 1
}

# skip MSG...: end the test as skipped (status 77).
skip() {
	printf '[%4ds] SKIP: %s\n' "$((SECONDS - _vm_t0))" "$*"
	exit 77
}

# ------------------------------------------------------------------ cleanup
_vm_cleanups=()
_vm_diags=()

# at_exit CMD...: run CMD (one string, eval'd) when the test exits, last registered first.
at_exit() { _vm_cleanups+=("$*"); }

# on_failure CMD...: run CMD (one string, eval'd) when the test fails, before the cleanups.
on_failure() { _vm_diags+=("$*"); }

_vm_exit() {
	local rc=$1 i
	set +e
	trap - EXIT ERR
	if ((rc != 0 && rc != 77)); then
		echo "==== $VM_TEST_NAME FAILED (status $rc) after $((SECONDS - _vm_t0))s ===="
		for ((i = 0; i < ${#_vm_diags[@]}; i++)); do
			eval "${_vm_diags[$i]}"
		done
		echo "---- dmesg since the test started (last 60 lines) ----"
		dmesg 2>/dev/null | awk -v t0="$_vm_up0" '
			{ ts = substr($0, 2, index($0, "]") - 2) + 0 }
			ts >= t0 { print }' | tail -n 60
	fi
	for ((i = ${#_vm_cleanups[@]} - 1; i >= 0; i--)); do
		eval "${_vm_cleanups[$i]}" >/dev/null 2>&1
	done
	if ((rc == 0)); then
		echo "==== $VM_TEST_NAME PASSED in $((SECONDS - _vm_t0))s ===="
	fi
	exit "$rc"
}
trap '_vm_exit $?' EXIT
# set -e exits do not say where: name the failing command and line.
trap 'printf "[%4ds] FAIL: status %d at %s:%d: %s\n" "$((SECONDS - _vm_t0))" "$?" "${BASH_SOURCE[0]}" "$LINENO" "$BASH_COMMAND" >&2' ERR

# vm_require_guest: refuse to run outside scripts/vm (the tests load modules,
# mount and start daemons).
vm_require_guest() {
	[[ "${RPCRDMA_VM:-}" == 1 ]] ||
		fail "run me inside the test VM: scripts/vm run -- $0"
}

# ------------------------------------------------------------------ modules
# vm_kmod NAME...: load guest kernel modules (and their dependencies).
vm_kmod() {
	local kdir=${RPCRDMA_KMOD_DIR:-}
	if [[ -n "$kdir" ]]; then
		/sbin/modprobe -d "$kdir" -a "$@" || fail "modprobe -d $kdir $*"
	else
		/sbin/modprobe -a "$@" || fail "modprobe $*"
	fi
}

# drop_caches: write back and drop the guest's page, dentry and inode caches.
drop_caches() {
	sync
	echo 3 >/proc/sys/vm/drop_caches
}

# ------------------------------------------------------------------ binaries
# rpcrdma_bin NAME: print the path of our built binary NAME (looks in
# $RPCRDMA_BUILD_DIR, its tools/ and bin/); fails the test when it is missing.
rpcrdma_bin() {
	local name=$1 d
	for d in "$RPCRDMA_BUILD_DIR" "$RPCRDMA_BUILD_DIR/tools" "$RPCRDMA_BUILD_DIR/bin"; do
		if [[ -x "$d/$name" && -f "$d/$name" ]]; then
			echo "$d/$name"
			return 0
		fi
	done
	fail "$name is not built in $RPCRDMA_BUILD_DIR (run 'make build', or set RPCRDMA_BUILD_DIR)"
}

# ------------------------------------------------------------------ files
# make_test_files DIR: create the six files of TEST_FILE_SIZES bytes of
# random data, named DIR/<size>.bin.
make_test_files() {
	local dir=$1 s
	mkdir -p "$dir"
	for s in "${TEST_FILE_SIZES[@]}"; do
		head -c "$s" /dev/urandom >"$dir/$s.bin"
		[[ $(stat -c %s "$dir/$s.bin") == "$s" ]] || fail "could not create $dir/$s.bin"
	done
}

# compare_files A B: fail unless A and B have the same bytes.
compare_files() {
	local a=$1 b=$2 out
	[[ -f "$a" ]] || fail "compare: $a does not exist"
	[[ -f "$b" ]] || fail "compare: $b does not exist"
	if ! out=$(timeout -k 10 120 cmp -- "$a" "$b" 2>&1); then
		fail "$a ($(stat -c %s "$a") B) and $b ($(stat -c %s "$b") B) differ: $out"
	fi
}

# ------------------------------------------------------------------ network
# wait_tcp_listen ADDR PORT SECONDS: wait until something listens on TCP
# ADDR:PORT (or on the wildcard address); fails after SECONDS.  Uses ss, so
# it never connects to the listener.
wait_tcp_listen() {
	local addr=$1 port=$2 limit=$3 i
	for ((i = 0; i < limit * 5; i++)); do
		if ss -Hltn "sport = :$port" 2>/dev/null |
		   awk -v a="$addr:$port" -v p="$port" '
			$4 == a || $4 == "0.0.0.0:" p || $4 == "*:" p || $4 == "[::]:" p { f = 1 }
			END { exit !f }'; then
			return 0
		fi
		sleep 0.2
	done
	return 1
}

# ------------------------------------------------------------------ kernel nfsd
_knfsd_pids=()
_knfsd_dirs=()

# knfsd_start DIR: kernel nfsd exporting DIR (read-write, no root squash) to
# 192.0.2.0/24 over RDMA on port 20049 (and TCP 2049), with rpcbind and
# rpc.mountd.  knfsd_stop (registered to run at exit) undoes it.  With
# KNFSD_V4_GRACE=SECONDS (at least 10) its NFSv4 grace period after the start
# lasts SECONDS rather than the lease time (90 s), when nfsd is not running
# yet (/proc/fs/nfsd/nfsv4gracetime can only be set then).
knfsd_start() {
	local dir=$1
	mkdir -p "$dir"
	vm_kmod nfsd rpcrdma
	mountpoint -q /proc/fs/nfsd || mount -t nfsd nfsd /proc/fs/nfsd ||
		fail "mount -t nfsd nfsd /proc/fs/nfsd"
	if [[ -n "${KNFSD_V4_GRACE:-}" ]]; then
		if { echo "$KNFSD_V4_GRACE" >/proc/fs/nfsd/nfsv4gracetime; } 2>/dev/null; then
			log "kernel nfsd: NFSv4 grace period $KNFSD_V4_GRACE s"
		else
			log "kernel nfsd: could not set the NFSv4 grace period to $KNFSD_V4_GRACE s (nfsd running?)"
		fi
	fi
	mkdir -p /var/lib/nfs/rpc_pipefs /var/lib/nfs/v4recovery
	touch /var/lib/nfs/etab /var/lib/nfs/rmtab
	at_exit knfsd_stop
	if ! pidof rpcbind >/dev/null; then
		rpcbind -w -f &
		_knfsd_pids+=($!)
		for _ in 1 2 3 4 5 6 7 8 9 10; do
			[[ -S /run/rpcbind.sock ]] && break
			sleep 0.2
		done
	fi
	timeout -k 10 30 exportfs -o rw,no_root_squash,insecure,no_subtree_check,sync,fsid=0 \
		"192.0.2.0/24:$dir" || fail "exportfs $dir"
	_knfsd_dirs+=("$dir")
	rpc.mountd -F &
	_knfsd_pids+=($!)
	timeout -k 10 60 rpc.nfsd --rdma="$NFS_RDMA_PORT" 4 || fail "rpc.nfsd --rdma=$NFS_RDMA_PORT"
	grep -q "rdma $NFS_RDMA_PORT" /proc/fs/nfsd/portlist ||
		fail "kernel nfsd does not list 'rdma $NFS_RDMA_PORT' in /proc/fs/nfsd/portlist: $(cat /proc/fs/nfsd/portlist)"
	log "kernel nfsd exports $dir on rdma $NFS_RDMA_PORT"
}

# knfsd_stop: stop the kernel nfsd and the daemons knfsd_start started.
knfsd_stop() {
	local d p
	timeout -k 10 30 rpc.nfsd 0 || true
	for d in "${_knfsd_dirs[@]}"; do
		timeout -k 10 10 exportfs -u "192.0.2.0/24:$d" || true
	done
	_knfsd_dirs=()
	for p in "${_knfsd_pids[@]}"; do
		kill "$p" 2>/dev/null || true
	done
	for p in "${_knfsd_pids[@]}"; do
		timeout -k 10 10 tail --pid="$p" -f /dev/null 2>/dev/null || kill -9 "$p" 2>/dev/null || true
	done
	_knfsd_pids=()
	return 0
}

# ------------------------------------------------------------------ kernel client
# nfs_proto_opts [PROTO]: the mount options of transport PROTO (default
# NFS_PROTO): proto=rdma,port=20049 or proto=tcp,port=2049.
nfs_proto_opts() {
	case ${1:-$NFS_PROTO} in
	tcp) echo "proto=tcp,port=$NFS_TCP_PORT" ;;
	*) echo "proto=rdma,port=$NFS_RDMA_PORT" ;;
	esac
}

# kmount SERVER:DIR MNT [OPTS]: mount with the kernel NFSv3 client over RDMA
# (vers=3,proto=rdma,port=20049,nolock plus OPTS, comma separated; over TCP,
# proto=tcp,port=2049, with NFS_PROTO=tcp).  NFSv3 has
# no mount option for the local address (clientaddr= is NFSv4 only), so the
# client's source address is whatever the route to SERVER gives.
kmount() {
	local src=$1 mnt=$2 extra=${3:-}
	local opts
	opts=vers=3,$(nfs_proto_opts),nolock${extra:+,$extra}
	mkdir -p "$mnt"
	vm_kmod nfsv3 rpcrdma
	timeout -k 10 120 mount -t nfs -o "$opts" "$src" "$mnt" ||
		fail "mount -t nfs -o $opts $src $mnt"
	at_exit "kumount '$mnt'"
	log "mounted $src on $mnt ($opts)"
}

# kmount41 SERVER:DIR MNT [OPTS]: mount with the kernel NFSv4.1 client over
# RDMA (vers=4.1,proto=rdma,port=20049 plus OPTS; over TCP with
# NFS_PROTO=tcp); fail unless /proc/mounts says vers=4.1.
kmount41() {
	local src=$1 mnt=$2 extra=${3:-} line
	local opts
	opts=vers=4.1,$(nfs_proto_opts)${extra:+,$extra}
	mkdir -p "$mnt"
	vm_kmod nfsv4 rpcrdma
	timeout -k 10 120 mount -t nfs -o "$opts" "$src" "$mnt" ||
		fail "mount -t nfs -o $opts $src $mnt"
	at_exit "kumount '$mnt'"
	line=$(awk -v m="$mnt" '$2 == m' /proc/mounts)
	[[ $line == *" nfs4 "*"vers=4.1"* ]] || fail "mount $mnt is not NFSv4.1: '$line'"
	log "mounted $src on $mnt ($opts)"
}

# kumount MNT: unmount MNT if mounted (lazily and forced after 60 s).  Whether
# it is mounted comes from /proc/mounts: mountpoint(1) stats MNT, which fails
# (ESTALE, EACCES) or blocks when the server no longer serves it.
kumount() {
	local mnt=$1
	awk -v m="$mnt" '$2 == m { found = 1 } END { exit !found }' /proc/mounts || return 0
	timeout -k 10 60 umount "$mnt" && return 0
	timeout -k 10 30 umount -f -l "$mnt" || fail "cannot unmount $mnt"
}

# mountstats_xprt MNT: print the "xprt:" line of MNT from /proc/self/mountstats.
mountstats_xprt() {
	awk -v m="$1" '$1 == "device" && $5 == m { on = 1; next }
		       $1 == "device" { on = 0 }
		       on && $1 == "xprt:" { sub(/^[ \t]+/, ""); print; exit }' /proc/self/mountstats
}

# mountstats_ops MNT OP: print the number of OP calls (READ, WRITE, ...) sent on MNT.
mountstats_ops() {
	awk -v m="$1" -v op="$2:" '$1 == "device" && $5 == m { on = 1; next }
		       $1 == "device" { on = 0 }
		       on && $1 == op { print $2; exit }' /proc/self/mountstats
}

# nlm_testbed LOCKD_PORT NLM_PORT: the arrangement for kernel mounts WITH
# locking against rpcrdma-nfsd in one guest (docs/testbed.md, "Locking"):
# rpcbind and rpc.statd (stopped at exit), the client's lockd on TCP port
# LOCKD_PORT (nlm_tcpport; it owns program 100021 in rpcbind), and an
# nftables rule that sends the client's NLM connections to
# SERVER_ADDR:LOCKD_PORT to rpcrdma-nfsd's --nlm-port NLM_PORT instead
# (callbacks go to CLIENT_ADDR, which the rule leaves alone).  Skips the
# test when nft or rpc.statd is missing.
#
# In the two-host mode (scripts/vm run2) there is nothing to redirect: the
# server guest gets rpcbind only (rpcrdma-nfsd, started with --rpcbind,
# registers its NLM and NSM there), the client guest rpcbind, rpc.statd and
# its lockd on a port of its choosing; the ports are not used.
nlm_testbed() {
	local lockd_port=$1 nlm_port=$2
	if [[ "${VM_ROLE:-}" == server ]]; then
		mkdir -p /run/rpcbind
		rpcbind -w -f &
		at_exit "kill $! 2>/dev/null"
		for _ in $(seq 50); do [[ -S /run/rpcbind.sock ]] && break; sleep 0.2; done
		[[ -S /run/rpcbind.sock ]] || fail "rpcbind did not start"
		return 0
	fi
	[[ "${VM_ROLE:-}" == client ]] ||
		command -v nft >/dev/null || skip "nft is not installed (apt-get install nftables)"
	command -v rpc.statd >/dev/null || skip "rpc.statd is not installed (nfs-common)"
	mkdir -p /run/rpcbind /var/lib/nfs/sm /var/lib/nfs/sm.bak
	rpcbind -w -f &
	at_exit "kill $! 2>/dev/null"
	for _ in $(seq 50); do [[ -S /run/rpcbind.sock ]] && break; sleep 0.2; done
	[[ -S /run/rpcbind.sock ]] || fail "rpcbind did not start"
	rpc.statd --no-notify -F &
	# NLM_STATD_PID: rpc.statd's pid, for a test that SIGSTOPs it to hold
	# the reboot notifications back (cephfs-two-gateways)
	# shellcheck disable=SC2034
	NLM_STATD_PID=$!
	at_exit "kill $! 2>/dev/null"
	for _ in $(seq 100); do rpcinfo -T tcp 127.0.0.1 100024 1 >/dev/null 2>&1 && break; sleep 0.2; done
	rpcinfo -T tcp 127.0.0.1 100024 1 >/dev/null 2>&1 || fail "rpc.statd did not register"
	vm_kmod lockd nfsv3 rpcrdma
	[[ "${VM_ROLE:-}" == client ]] && return 0
	echo "$lockd_port" >/proc/sys/fs/nfs/nlm_tcpport
	nft -f - <<-EOF || fail "nft: cannot add the NLM redirect"
	table ip rpcrdma_nlm_testbed {
		chain out {
			type nat hook output priority -100; policy accept;
			ip daddr $SERVER_ADDR tcp dport $lockd_port dnat to $SERVER_ADDR:$nlm_port
		}
	}
	EOF
	at_exit "nft delete table ip rpcrdma_nlm_testbed 2>/dev/null"
}

# ------------------------------------------------------------------ two hosts
# (scripts/vm run2; docs/testbed.md "Two hosts").  The test script runs in
# both guests; RPCRDMA_VM_ROLE says which one this is.  The usual shape: the
# server guest sets up and then serves `srv` requests (vm_agent) until the
# client guest, which drives the test, exits.
VM_ROLE=${RPCRDMA_VM_ROLE:-}
# The directory both guests share (/srv/shared), and the capture of every
# frame on the link that scripts/vm writes into it (link.pcap, growing).
VM_SHARED=${RPCRDMA_VM_SHARED:-}
# shellcheck disable=SC2034
VM_LINK_PCAP=${RPCRDMA_VM_LINK_PCAP:-}

# two_host: true in the two-host mode (either guest).
two_host() { [[ -n "$VM_ROLE" ]]; }

# vm_agent: in the server guest, run the bash snippets that the client
# guest sends with `srv`, one at a time in order, each in a subshell of the
# calling script (its functions and variables are there; what it changes is
# not kept: keep state in files), with stdin /dev/null and stdout and
# stderr together sent back; returns when the client says it is done (its
# exit) or after LIMIT seconds (default 600) without it.
vm_agent() {
	local d=$VM_SHARED/agent n=0 rc t0=$SECONDS limit=${1:-600} req id
	mkdir -p "$d"
	: >"$d/ready"
	log "agent: serving the client guest's requests"
	while :; do
		req=
		for req in "$d"/req.*; do [[ -e $req && $req != *.tmp ]] && break; req=; done
		if [[ -n $req ]]; then
			id=${req##*/req.}
			rc=0
			(eval "$(cat "$req")") </dev/null >"$d/out.$id" 2>&1 &
			wait $! || rc=$?
			mv "$req" "$d/done.$id"
			echo "$rc" >"$d/rc.$id.tmp" && mv "$d/rc.$id.tmp" "$d/rc.$id"
			n=$((n + 1))
			continue
		fi
		[[ -e $d/done ]] && break
		((SECONDS - t0 < limit)) || fail "agent: the client guest did not finish within $limit s"
		sleep 0.1
	done
	log "agent: served $n requests; the client guest is done (status $(cat "$d/done"))"
}

# srv SNIPPET: run the bash SNIPPET on the server host: in the server
# guest through vm_agent (two-host mode; waits for the agent, 300 s at
# most), or here in a subshell (one guest).  Prints its output (stdout and
# stderr together in the two-host mode); returns its status.
srv() {
	if ! two_host; then
		(eval "$1")
		return
	fi
	# a name of its own (srv also runs in $(...) subshells, so no counter):
	# nanoseconds since the epoch, in order as the agent takes them
	local d=$VM_SHARED/agent n i
	n=$(date +%s%N)-$BASHPID
	if [[ ! -e $d/ready || ! -e $d/client-started ]]; then
		for ((i = 0; i < 3000; i++)); do [[ -e $d/ready ]] && break; sleep 0.1; done
		[[ -e $d/ready ]] || fail "the server guest's agent did not start in 300 s"
	fi
	if [[ -z ${_srv_done_set:-} ]]; then
		_srv_done_set=1
		: >"$d/client-started"
		at_exit "echo \$rc >'$d/done'"
	fi
	printf '%s\n' "$1" >"$d/req.$n.tmp" && mv "$d/req.$n.tmp" "$d/req.$n"
	for ((i = 0; i < 3000; i++)); do [[ -e $d/rc.$n ]] && break; sleep 0.1; done
	[[ -e $d/rc.$n ]] || fail "the server guest did not answer in 300 s: $1"
	cat "$d/out.$n"
	return "$(cat "$d/rc.$n")"
}

# ------------------------------------------------------------------ rpcrdma-nfsd
# (kernel-client-interop, asan-interop)

# bounded SECS WHAT CMD...: run CMD under `timeout -k 10 SECS` (a process
# blocked on a hard NFS mount ignores SIGTERM; the SIGKILL ends it); fail
# with "WHAT: ..." when it fails or times out.
bounded() {
	local secs=$1 what=$2 rc=0
	shift 2
	timeout -k 10 "$secs" "$@" || rc=$?
	((rc == 0)) && return 0
	((rc == 124 || rc == 137)) && fail "$what: timed out after $secs s ($*)"
	fail "$what: status $rc ($*)"
}

RNFSD_PID=
RNFSD_LOG=

# rnfsd_start BIN EXPORT LOG [ARGS...]: start rpcrdma-nfsd BIN exporting
# EXPORT on SERVER_ADDR (RDMA port 20049, MOUNT TCP port 20048, clients
# 192.0.2.0/24) with ARGS, stdout and stderr to LOG; wait (30 s at most) for
# its "serving" line, after which its signal handlers are installed.  Sets
# RNFSD_PID and RNFSD_LOG; the server is killed at exit and its log printed
# on failure.  Extra environment: put it before the call (VAR=x rnfsd_start).
# RNFSD_ADDR=ADDR (set before the call) listens on ADDR instead of
# SERVER_ADDR (a second server in the guest: cephfs-two-gateways).
rnfsd_start() {
	local bin=$1 export=$2 slog=$3
	shift 3
	mkdir -p "$export"
	"$bin" --export "$export" --listen "${RNFSD_ADDR:-$SERVER_ADDR}" --port "$NFS_RDMA_PORT" \
		--mount-port "$MOUNT_PORT" --allow 192.0.2.0/24 "$@" >"$slog" 2>&1 &
	_rnfsd_started "$bin" "$!" "$slog"
}

# rnfsd_start_exports BIN FILE LOG [ARGS...]: as rnfsd_start, serving the
# exports FILE lists (--exports FILE) instead of one directory.
rnfsd_start_exports() {
	local bin=$1 file=$2 slog=$3
	shift 3
	"$bin" --exports "$file" --listen "${RNFSD_ADDR:-$SERVER_ADDR}" --port "$NFS_RDMA_PORT" \
		--mount-port "$MOUNT_PORT" "$@" >"$slog" 2>&1 &
	_rnfsd_started "$bin" "$!" "$slog"
}

# _rnfsd_started BIN PID LOG: the wait and bookkeeping of rnfsd_start.
_rnfsd_started() {
	local bin=$1 slog=$3 i rc addr=${RNFSD_ADDR:-$SERVER_ADDR}
	RNFSD_PID=$2
	RNFSD_LOG=$slog
	at_exit "kill -KILL $RNFSD_PID 2>/dev/null"
	on_failure "echo '---- rpcrdma-nfsd log (last 150 lines) ----'; tail -n 150 '$slog'"
	for ((i = 0; ; i++)); do
		grep -q '^rpcrdma-nfsd: serving ' "$slog" 2>/dev/null && break
		if ! kill -0 "$RNFSD_PID" 2>/dev/null; then
			rc=0
			wait "$RNFSD_PID" || rc=$?
			fail "rpcrdma-nfsd exited (status $rc) before serving"
		fi
		((i < 150)) || fail "rpcrdma-nfsd not serving after 30 s"
		sleep 0.2
	done
	wait_tcp_listen "$addr" "$MOUNT_PORT" 10 ||
		fail "rpcrdma-nfsd says it serves but nothing listens on TCP $addr:$MOUNT_PORT"
	log "started $bin (pid $RNFSD_PID): $(grep -m1 '^rpcrdma-nfsd: serving ' "$slog")"
}

# rnfsd_term [SECS]: SIGTERM the server rnfsd_start started and wait (default
# 30 s) for it to exit; fail unless it exits with status 0.
rnfsd_term() {
	local limit=${1:-30} i rc=0
	kill -TERM "$RNFSD_PID" 2>/dev/null || fail "rpcrdma-nfsd (pid $RNFSD_PID) was not running at SIGTERM"
	for ((i = 0; i < limit * 5; i++)); do
		kill -0 "$RNFSD_PID" 2>/dev/null || break
		sleep 0.2
	done
	kill -0 "$RNFSD_PID" 2>/dev/null && fail "rpcrdma-nfsd still running $limit s after SIGTERM"
	wait "$RNFSD_PID" || rc=$?
	((rc == 0)) || fail "rpcrdma-nfsd exited with status $rc after SIGTERM"
	pass "rpcrdma-nfsd exited with status 0 after SIGTERM"
}

# rnfsd_stat KEY: the server's final counter KEY, from the last --stats JSON
# line of RNFSD_LOG (empty when absent).
rnfsd_stat() {
	grep '^{"connections"' "$RNFSD_LOG" | tail -n 1 |
		sed -n "s/.*\"$1\":\([0-9]*\).*/\1/p"
}

# rnfsd_check_final_stats: after rnfsd_term, with --stats: every pool back at
# its baseline (ctx_in_use, recv_in_use, conns_open 0), no RDMA_ERROR sent,
# calls served.  Prints the JSON line.
rnfsd_check_final_stats() {
	local k v
	grep -q '^{"connections"' "$RNFSD_LOG" || fail "no final counters (--stats) in the server log"
	log "server counters: $(grep '^{"connections"' "$RNFSD_LOG" | tail -n 1)"
	for k in ctx_in_use large_in_use recv_in_use conns_open mrs_open mr_bytes rdma_errors_sent; do
		v=$(rnfsd_stat "$k")
		[[ "$v" == 0 ]] || fail "server counter $k is '${v}' after unmount and SIGTERM, expected 0"
	done
	v=$(rnfsd_stat calls)
	((${v:-0} > 0)) || fail "server counter calls is '${v}': no call was served"
	pass "server counters: ctx_in_use, large_in_use, recv_in_use, conns_open, mrs_open back at 0; no RDMA_ERROR sent"
}

# tree_manifest DIR: one line per object under DIR (sorted): path, type,
# mode, owner, size (regular files), mtime (not for symlinks), link target
# (symlinks), and the sha256 of regular files.
tree_manifest() {
	local dir=$1
	(
		cd "$dir" || exit 1
		find . -mindepth 1 ! -type l -printf '%P %y %m %U:%G %s %T@\n' | sed 's/^\(.* d [0-7]* [0-9:]*\) [0-9]* /\1 - /'
		find . -mindepth 1 -type l -printf '%P %y %U:%G -> %l\n'
		find . -type f -print0 | xargs -0 -r sha256sum | sed 's/^\([0-9a-f]*\)  \.\//sha256 \1 /'
	) | LC_ALL=C sort
}

# ---- the rpcrdma-nfs client checks shared by client-vs-kernel-nfsd.sh and
# client-vs-rpcrdma-nfsd.sh: needs EXPORT, SPEC and CLIENT_OPTS.
client_suite() {
	local NFS ORIG=/tmp/orig BACK=/tmp/back s rc out listing n target i
	local sizes=("${TEST_FILE_SIZES[@]}" 65537)
	NFS=$(rpcrdma_bin rpcrdma-nfs)
	nfs() { timeout 300 "$NFS" "${CLIENT_OPTS[@]}" "$SPEC" "$@"; }

	make_test_files "$ORIG"
	head -c 65537 /dev/urandom >"$ORIG/65537.bin"
	mkdir -p "$BACK"

	# ---- put, then compare with the server's on-disk copy
	for s in "${sizes[@]}"; do
		nfs put "$ORIG/$s.bin" "/$s.bin" || fail "put $s.bin"
		compare_files "$ORIG/$s.bin" "$EXPORT/$s.bin"
	done
	pass "put ${#sizes[@]} files (0 B to 16 MiB): the server's copies match"

	# ---- get, compare with the originals
	drop_caches
	for s in "${sizes[@]}"; do
		nfs get "/$s.bin" "$BACK/$s.bin" || fail "get $s.bin"
		compare_files "$ORIG/$s.bin" "$BACK/$s.bin"
	done
	out=$(nfs cat /4097.bin | cmp - "$ORIG/4097.bin" 2>&1) || fail "cat 4097.bin differs: $out"
	pass "get ${#sizes[@]} files and cat: all match the originals"

	# ---- counters: a large get uses Write chunks, a large put Read chunks
	timeout 300 "$NFS" "${CLIENT_OPTS[@]}" --per-call-mr --stats "$SPEC" get /16777216.bin "$BACK/again" 2>/tmp/get-stats || fail "get with --stats"
	log "get 16 MiB: $(cat /tmp/get-stats)"
	grep -q '"write_chunks":[1-9]' /tmp/get-stats || fail "no Write chunks used by get"
	timeout 300 "$NFS" "${CLIENT_OPTS[@]}" --per-call-mr --stats "$SPEC" put "$ORIG/1048579.bin" /again.bin 2>/tmp/put-stats || fail "put with --stats"
	log "put 1 MiB + 3: $(cat /tmp/put-stats)"
	grep -q '"read_chunks":[1-9]' /tmp/put-stats || fail "no Read chunks used by put"
	grep -q '"reg_per_call":[1-9]' /tmp/get-stats || fail "--per-call-mr did not register per call"
	compare_files "$ORIG/16777216.bin" "$BACK/again"
	compare_files "$ORIG/1048579.bin" "$EXPORT/again.bin"
	pass "DDP: Write chunks for READ, Read chunks for WRITE (registered per call)"

	# ---- persistent registration of the transfer buffer
	timeout 300 "$NFS" "${CLIENT_OPTS[@]}" --persistent-mr --stats "$SPEC" \
		put "$ORIG/16777216.bin" /persistent.bin 2>/tmp/pp-stats || fail "put --persistent-mr"
	compare_files "$ORIG/16777216.bin" "$EXPORT/persistent.bin"
	timeout 300 "$NFS" "${CLIENT_OPTS[@]}" --persistent-mr --stats "$SPEC" \
		get /persistent.bin "$BACK/persistent.bin" 2>/tmp/pg-stats || fail "get --persistent-mr"
	compare_files "$ORIG/16777216.bin" "$BACK/persistent.bin"
	grep -q '"reg_per_call":0,"reg_persistent":[1-9]' /tmp/pg-stats ||
		fail "get --persistent-mr registered per call: $(cat /tmp/pg-stats)"
	pass "16 MiB put and get with a persistently registered buffer"

	# ---- memory windows: each piece exposed only during its call
	timeout 300 "$NFS" "${CLIENT_OPTS[@]}" --mw --stats "$SPEC" \
		put "$ORIG/1048579.bin" /mw.bin 2>/tmp/mp-stats || fail "put --mw"
	compare_files "$ORIG/1048579.bin" "$EXPORT/mw.bin"
	timeout 300 "$NFS" "${CLIENT_OPTS[@]}" --mw --stats "$SPEC" \
		get /16777216.bin "$BACK/mw.bin" 2>/tmp/mg-stats || fail "get --mw"
	compare_files "$ORIG/16777216.bin" "$BACK/mw.bin"
	grep -q '"mw_binds":[1-9]' /tmp/mp-stats /tmp/mg-stats ||
		fail "--mw bound no window: $(cat /tmp/mp-stats /tmp/mg-stats)"
	grep -q '"bad_invalidates":0' /tmp/mg-stats ||
		fail "--mw get: unexpected Send With Invalidate: $(cat /tmp/mg-stats)"
	pass "put and get through type 2 memory windows"

	# ---- remote invalidation offered (RFC 8797 section 5): each READ has
	# one handle, its Write chunk's window, which the server invalidates
	timeout 300 "$NFS" "${CLIENT_OPTS[@]}" --mw --remote-invalidate --stats "$SPEC" \
		get /16777216.bin "$BACK/rinv.bin" 2>/tmp/ri-stats || fail "get --remote-invalidate"
	compare_files "$ORIG/16777216.bin" "$BACK/rinv.bin"
	timeout 300 "$NFS" "${CLIENT_OPTS[@]}" --mw --remote-invalidate "$SPEC" \
		put "$ORIG/1048579.bin" /rinv.bin || fail "put --remote-invalidate"
	compare_files "$ORIG/1048579.bin" "$EXPORT/rinv.bin"
	grep -q '"remote_invalidates":[1-9][0-9]*,"bad_invalidates":0' /tmp/ri-stats ||
		fail "--remote-invalidate: no Send With Invalidate seen: $(cat /tmp/ri-stats)"
	pass "Send With Invalidate: the server invalidates each READ's window, checked"

	# ---- several connections: calls spread over 4 (like nconnect=4)
	timeout 300 "$NFS" "${CLIENT_OPTS[@]}" --nconnect 4 --stats "$SPEC" \
		put "$ORIG/16777216.bin" /nconnect.bin 2>/tmp/ncp-stats || fail "put --nconnect 4"
	compare_files "$ORIG/16777216.bin" "$EXPORT/nconnect.bin"
	drop_caches
	timeout 300 "$NFS" "${CLIENT_OPTS[@]}" --nconnect 4 --stats "$SPEC" \
		get /nconnect.bin "$BACK/nconnect.bin" 2>/tmp/ncg-stats || fail "get --nconnect 4"
	compare_files "$ORIG/16777216.bin" "$BACK/nconnect.bin"
	log "get --nconnect 4: $(cat /tmp/ncg-stats)"
	for s in /tmp/ncp-stats /tmp/ncg-stats; do
		grep -Eq '"connections":4,"per_connection_calls":\[[1-9][0-9]*,[1-9][0-9]*,[1-9][0-9]*,[1-9][0-9]*\]' "$s" ||
			fail "--nconnect 4 did not spread the calls over 4 connections: $(cat "$s")"
	done
	pass "--nconnect 4: 16 MiB put and get byte-exact, calls on all 4 connections"

	# ---- ls -l of 2000 entries
	mkdir -p "$EXPORT/many"
	for ((i = 0; i < 2000; i++)); do
		printf -v n '%04d' "$i"
		: >"$EXPORT/many/entry-$n-with-a-longer-name"
	done
	printf 'abc' >"$EXPORT/many/entry-1234-with-a-longer-name"
	listing=$(nfs ls -l /many) || fail "ls -l /many"
	n=$(wc -l <<<"$listing")
	((n == 2000)) || fail "ls -l /many shows $n entries, expected 2000"
	awk '$NF == "entry-1234-with-a-longer-name" && $5 == 3 { f = 1 } END { exit !f }' \
		<<<"$listing" || fail "ls -l does not show entry-1234 with size 3"
	# (no /dev/fd in the guest: no process substitution)
	nfs ls /many >/tmp/ls-client || fail "ls /many"
	(cd "$EXPORT/many" && LC_ALL=C ls) >/tmp/ls-server
	cmp -s /tmp/ls-client /tmp/ls-server || fail "ls /many does not list the server's 2000 names"
	pass "ls -l of a directory with 2000 entries"

	# ---- symlink with a 1000-byte target
	target=$(for ((i = 0; i < 500; i++)); do printf 'd/'; done)
	((${#target} == 1000)) || fail "target is ${#target} bytes"
	nfs ln -s "$target" /link || fail "ln -s"
	[[ "$(readlink "$EXPORT/link")" == "$target" ]] || fail "server's symlink target differs"
	[[ "$(nfs readlink /link)" == "$target" ]] || fail "readlink does not give back the target"
	nfs ls -l /link | grep -qF -- "-> $target" || fail "ls -l /link does not show the target"
	pass "symlink with a 1000-byte target read back"

	# ---- mkdir, mv, rm, rmdir
	nfs mkdir /d1 || fail "mkdir /d1"
	[[ -d "$EXPORT/d1" ]] || fail "no d1 on the server"
	nfs put "$ORIG/4097.bin" /d1/f || fail "put into /d1"
	nfs mv /d1/f /d1/g || fail "mv /d1/f /d1/g"
	[[ -f "$EXPORT/d1/g" && ! -e "$EXPORT/d1/f" ]] || fail "mv did not rename on the server"
	compare_files "$ORIG/4097.bin" "$EXPORT/d1/g"
	nfs mv /d1 /d2 || fail "mv /d1 /d2"
	[[ -d "$EXPORT/d2" && ! -e "$EXPORT/d1" ]] || fail "directory rename"
	rc=0
	nfs rmdir /d2 2>/dev/null || rc=$?
	((rc == 1)) || fail "rmdir of a non-empty directory: status $rc, expected 1"
	nfs rm /d2/g || fail "rm /d2/g"
	nfs rmdir /d2 || fail "rmdir /d2"
	[[ ! -e "$EXPORT/d2" ]] || fail "d2 still on the server"
	pass "mkdir, mv (file and directory), rm, rmdir"

	# ---- chmod (SETATTR) and a hard link (LINK)
	nfs chmod 0640 /4097.bin || fail "chmod"
	[[ "$(stat -c %a "$EXPORT/4097.bin")" == 640 ]] ||
		fail "mode on the server: $(stat -c %a "$EXPORT/4097.bin")"
	nfs ln /4097.bin /hard.bin || fail "ln (hard)"
	[[ "$(stat -c %h "$EXPORT/4097.bin")" == 2 ]] || fail "no second link on the server"
	[[ "$(stat -c %i "$EXPORT/4097.bin")" == "$(stat -c %i "$EXPORT/hard.bin")" ]] ||
		fail "hard.bin is not the same inode"
	nfs rm /hard.bin || fail "rm hard.bin"
	pass "chmod 0640 and a hard link"

	# ---- stat, df, errors
	nfs stat /16777216.bin | grep -q "Size: 16777216" || fail "stat size"
	nfs df | tail -n 1 | grep -q "$SPEC" || fail "df"
	rc=0
	out=$(nfs get /no-such-file "$BACK/x" 2>&1) || rc=$?
	((rc == 1)) || fail "get of a missing file: status $rc, expected 1"
	grep -q "No such file or directory" <<<"$out" || fail "missing file message: $out"
	rc=0
	"$NFS" >/dev/null 2>&1 || rc=$?
	((rc == 2)) || fail "no arguments: status $rc, expected 2"
	pass "stat, df; a missing file exits 1 with a message; usage exits 2"
}

# ---- fault-injection helpers (disconnect-storm, client-killed, server-restart)

# rnfsd_counters_now: make the running server (RNFSD_PID) print its counters
# to its log (SIGUSR1) and wait (10 s at most) for the new JSON line, after
# which rnfsd_stat reads it.  Fails when the server is gone.
rnfsd_counters_now() {
	local n i
	n=$(grep -c '^{"connections"' "$RNFSD_LOG" || true)
	kill -USR1 "$RNFSD_PID" 2>/dev/null || fail "rpcrdma-nfsd (pid $RNFSD_PID) is not running"
	for ((i = 0; i < 50; i++)); do
		(($(grep -c '^{"connections"' "$RNFSD_LOG" || true) > n)) && return 0
		sleep 0.2
	done
	kill -0 "$RNFSD_PID" 2>/dev/null || fail "rpcrdma-nfsd (pid $RNFSD_PID) died"
	fail "rpcrdma-nfsd did not print its counters within 10 s of SIGUSR1"
}

# rnfsd_wait_baseline CONNS SECS: poll the running server's counters until
# its pools are at the baseline of CONNS idle connections: conns_open CONNS,
# ctx_in_use, large_in_use and recv_in_use 0, and with no connection left no
# pool buffer handed out (buf_bytes_in_use 0; the shared pool itself stays
# registered, within the budget, while the server runs); fail after SECS
# seconds with the last counters.  Dropped connections are reaped
# asynchronously, hence the polling.
rnfsd_wait_baseline() {
	local conns=$1 limit=$2 t0=$SECONDS k v ok
	while :; do
		rnfsd_counters_now
		ok=1
		for k in ctx_in_use large_in_use recv_in_use conns_open buf_bytes_in_use; do
			v=$(rnfsd_stat "$k")
			case $k in
			large_in_use) [[ "$v" == 0 || -z "$v" ]] || ok=0 ;;
			conns_open) [[ "$v" == "$conns" ]] || ok=0 ;;
			buf_bytes_in_use) ((conns > 0)) || [[ "$v" == 0 ]] || ok=0 ;;
			*) [[ "$v" == 0 ]] || ok=0 ;;
			esac
		done
		((ok)) && break
		((SECONDS - t0 < limit)) ||
			fail "server pools not at baseline ($conns connection(s)) after $limit s: $(grep '^{"connections"' "$RNFSD_LOG" | tail -n 1)"
		sleep 1
	done
	pass "server pools at baseline: conns_open $conns, ctx_in_use, large_in_use, recv_in_use 0$( ((conns > 0)) || echo ', no pool buffer in use') (after $((SECONDS - t0)) s)"
}

# random_delay MIN_CS MAX_CS: print a random delay between MIN_CS and MAX_CS
# hundredths of a second, as seconds for sleep/timeout ("1.37").
random_delay() {
	local cs=$(($1 + RANDOM % ($2 - $1 + 1)))
	printf '%d.%02d\n' $((cs / 100)) $((cs % 100))
}

# ---- counters read generically (many-connections, connection-flood): the
# server's counter set changes, so these helpers name no counter except
# conns_open.

# rnfsd_counters_line: the newest counters JSON line in RNFSD_LOG (call
# rnfsd_counters_now first for a fresh one).
rnfsd_counters_line() {
	grep '^{.*"conns_open":' "$RNFSD_LOG" | tail -n 1
}

# RNFSD_GAUGE_RE: which counters are gauges (levels that go back down when
# the load is gone), as a Python regular expression over the JSON keys;
# high-water marks (*_high) and event counts are not gauges, and neither
# are mrs_open and mr_bytes: they measure the shared registered pool, which
# stays (within --memory) while the server runs; buf_bytes_in_use is what
# the pool has handed out.
RNFSD_GAUGE_RE=${RNFSD_GAUGE_RE:-'^(?!mrs_open$|mr_bytes$).*((_in_use|_open|_inflight|_pending|_queued|_outstanding|_used)$|_mem(_bytes)?$)'}

# rnfsd_gauges_differ BASE_LINE NOW_LINE: print the gauges (RNFSD_GAUGE_RE)
# of NOW_LINE that differ from BASE_LINE, and conns_open unless it is 0, one
# "key now (baseline base)" per line; prints nothing when all are back.
rnfsd_gauges_differ() {
	python3 - "$1" "$2" "$RNFSD_GAUGE_RE" <<'PYEOF'
import json, re, sys
base, now, gauge = json.loads(sys.argv[1]), json.loads(sys.argv[2]), re.compile(sys.argv[3])
for k, v in now.items():
    if k == "conns_open":
        if v != 0:
            print(f"conns_open {v} (expected 0)")
    elif gauge.search(k) and not k.endswith("_high") and k in base and v != base[k]:
        print(f"{k} {v} (baseline {base[k]})")
PYEOF
}

# rnfsd_gauges_list LINE: the names of the gauges in LINE (for the log).
rnfsd_gauges_list() {
	python3 -c 'import json, re, sys
print(" ".join(k for k in json.loads(sys.argv[1]) if k == "conns_open" or
      (re.search(sys.argv[2], k) and not k.endswith("_high"))))' "$1" "$RNFSD_GAUGE_RE"
}

# rnfsd_wait_gauges_baseline BASE_LINE SECS: poll the running server's
# counters until every gauge is back at its value in BASE_LINE (read right
# after the start) and conns_open is 0; fail after SECS with what differs.
rnfsd_wait_gauges_baseline() {
	local base=$1 limit=$2 t0=$SECONDS now diff
	while :; do
		rnfsd_counters_now
		now=$(rnfsd_counters_line)
		diff=$(rnfsd_gauges_differ "$base" "$now")
		[[ -z "$diff" ]] && break
		((SECONDS - t0 < limit)) ||
			fail "server gauges not back at their start values after $limit s: $(echo "$diff" | paste -sd ';' -); counters: $now"
		sleep 1
	done
	pass "server gauges back at their start values, conns_open 0 ($(rnfsd_gauges_list "$now")) after $((SECONDS - t0)) s"
}

# rnfsd_counter LINE KEY: KEY's value in the counters JSON LINE (empty when absent).
rnfsd_counter() {
	sed -n "s/.*\"$2\":\([0-9]*\).*/\1/p" <<<"$1"
}

# rnfsd_rss_kb: the running server's resident memory (VmRSS, KiB).
rnfsd_rss_kb() {
	awk '$1 == "VmRSS:" { print $2 }' "/proc/$RNFSD_PID/status"
}

# ------------------------------------------------------------------ Ceph
# (ceph-up, cephfs-gateway; docs/testbed.md "The Ceph test bed")

CEPH_BASE=$SCRATCH/ceph

# ceph_up: start the single-node cluster with scripts/ceph-up (base
# CEPH_BASE, ceph.conf and the admin keyring in /etc/ceph, file system
# "cephfs"), bounded at 300 s; the cluster is stopped at exit (after the
# mounts registered later are gone) and the daemons' logs are printed on
# failure.  Skips (77) when the Ceph packages are not installed.  Sets
# CEPH_UP_SECS to the seconds it took.
# A cluster that runs already (started before this script: vm/cephfs,
# tests/vm/cephfs.sh, runs the Ceph scripts one after another on one
# cluster) is used and left running (CEPH_SHARED=1, else 0); scripts/ceph-up
# is still called (idempotent: it says "already up" and fails when one of
# the daemons is gone).
ceph_up() {
	local t=$SECONDS
	command -v ceph-mon >/dev/null && command -v ceph-mds >/dev/null &&
		command -v ceph-osd >/dev/null && command -v ceph >/dev/null ||
		skip "Ceph is not installed (scripts/install-deps installs ceph-mon ceph-osd ceph-mds ceph-common ceph-fuse)"
	# shellcheck disable=SC2034
	CEPH_SHARED=0
	if "$RPCRDMA_CHECKOUT/scripts/ceph-up" --status -q --base "$CEPH_BASE"; then
		# shellcheck disable=SC2034
		CEPH_SHARED=1
		log "a Ceph cluster runs already in $CEPH_BASE (started before this script): using it, leaving it up"
	else
		at_exit "timeout -k 5 30 '$RPCRDMA_CHECKOUT/scripts/ceph-up' --down --base '$CEPH_BASE'"
	fi
	on_failure "_ceph_logs"
	bounded 300 "scripts/ceph-up" "$RPCRDMA_CHECKOUT/scripts/ceph-up" -v --base "$CEPH_BASE" --timeout 240
	CEPH_UP_SECS=$((SECONDS - t))
	log "Ceph cluster up in $CEPH_UP_SECS s"
}

# ceph_down_check: scripts/ceph-up --down, then check that the daemons are
# gone and that /etc/ceph/ceph.conf and CEPH_BASE were removed.
ceph_down_check() {
	local d
	bounded 60 "scripts/ceph-up --down" "$RPCRDMA_CHECKOUT/scripts/ceph-up" --down --base "$CEPH_BASE"
	for d in ceph-mon ceph-osd ceph-mds; do
		! pidof "$d" >/dev/null || fail "$d still runs after --down"
	done
	[[ ! -e /etc/ceph/ceph.conf && ! -e "$CEPH_BASE" ]] || fail "--down left /etc/ceph/ceph.conf or $CEPH_BASE"
	pass "scripts/ceph-up --down: daemons gone, files removed"
}

_ceph_logs() {
	local f
	for f in "$CEPH_BASE"/log/*; do
		[[ -s "$f" ]] || continue
		echo "---- $f (last 30 lines) ----"
		tail -n 30 "$f"
	done
}

# ceph_cli CMD...: one ceph process running each argument as a command
# (one CLI start costs 3-5 s under TCG); stdout and stderr together.
ceph_cli() {
	printf '%s\n' "$@" | timeout -k 10 120 ceph --connect-timeout 60 2>&1
}

# ceph_admin_key: client.admin's secret (from /etc/ceph).
ceph_admin_key() {
	awk '$1 == "key" && $2 == "=" { print $3; exit }' /etc/ceph/ceph.client.admin.keyring
}

# ceph_kmount MNT [PATH]: mount CephFS PATH (default /) on MNT with the
# guest kernel's client as client.admin; unmounted at exit.
ceph_kmount() {
	local mnt=$1 path=${2:-/}
	mkdir -p "$mnt"
	vm_kmod ceph
	# (mount.ceph tries modprobe itself and prints "Module ceph not found":
	# harmless, the module is loaded)
	timeout -k 10 120 mount -t ceph "127.0.0.1:6789:$path" "$mnt" \
		-o "name=admin,secret=$(ceph_admin_key)" 2>&1 | grep -v 'Module ceph not found\|failed to load ceph kernel module' || true
	awk -v m="$mnt" '$2 == m && $3 == "ceph" { f = 1 } END { exit !f }' /proc/mounts ||
		fail "mount -t ceph 127.0.0.1:6789:$path $mnt failed"
	at_exit "kumount '$mnt'"
	log "CephFS $path mounted on $mnt (kernel client)"
}

# ceph_fuse_mount MNT: mount CephFS / on MNT with ceph-fuse; unmounted at exit.
ceph_fuse_mount() {
	local mnt=$1
	mkdir -p "$mnt"
	vm_kmod fuse
	bounded 120 "ceph-fuse $mnt" ceph-fuse "$mnt" >/dev/null 2>&1
	awk -v m="$mnt" '$2 == m && $3 == "fuse.ceph-fuse" { f = 1 } END { exit !f }' /proc/mounts ||
		fail "ceph-fuse: $mnt is not mounted"
	at_exit "kumount '$mnt'"
	log "CephFS / mounted on $mnt (ceph-fuse)"
}

# ceph_stop NAME / ceph_start NAME: stop or start one daemon of the cluster
# ceph_up started (mon.a, mds.a, osd.0) with scripts/ceph-up --stop/--start:
# SIGKILL (osd.0: SIGTERM, waited for, so that memstore keeps its data),
# and a start as the first one.
ceph_stop() {
	bounded 300 "ceph-up --stop $1" "$RPCRDMA_CHECKOUT/scripts/ceph-up" --stop "$1" --base "$CEPH_BASE"
}
ceph_start() {
	bounded 60 "ceph-up --start $1" "$RPCRDMA_CHECKOUT/scripts/ceph-up" --start "$1" --base "$CEPH_BASE"
}

# ceph_clog_count PATTERN: how many lines of the mon's cluster log match
# PATTERN (grep -E).
ceph_clog_count() {
	grep -cE -- "$1" "$CEPH_BASE/log/cluster.log" 2>/dev/null || true
}

# ceph_gateway_check: skip (77) unless rpcrdma-nfsd NFSD was built with the
# cephfs backend (a cheap look that needs no cluster: the binary links
# libcephfs).
ceph_gateway_check() {
	grep -q 'libcephfs\.so' "$1" ||
		skip "$1 was built without the cephfs backend (needs libcephfs-dev at build time: cmake -DRPCRDMA_CEPHFS=AUTO or ON)"
}
