#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# rpcrdma-nfsd's command line: a value outside the range its usage text
# and man page give is refused with a message naming the option and exit 2
# (a usage error), before any device, socket or file is touched; a value
# inside the range is taken, shown by the run going on to the export check
# (a missing directory: exit 1, "export directory").  No RDMA device is
# needed.  Usage: nfsd_options.sh PATH-TO-rpcrdma-nfsd
set -u
NFSD=${1:?usage: nfsd_options.sh PATH-TO-rpcrdma-nfsd}
MISSING=/nonexistent-rpcrdma-export-$$
FILE=$(mktemp) || exit 1
# an empty configuration file: the host's /etc/rpcrdma/rpcrdma.conf stays out
CONF=$(mktemp) || exit 1
trap 'rm -f "$FILE" "$CONF"' EXIT
fails=0 n=0

# expect CODE TEXT ARGS...: exit status CODE and TEXT in standard error.
expect() {
	local code=$1 text=$2 out rc
	shift 2
	n=$((n + 1))
	out=$("$NFSD" --config "$CONF" "$@" 2>&1 >/dev/null)
	rc=$?
	if [ "$rc" != "$code" ] || [[ "$out" != *"$text"* ]]; then
		echo "FAIL: rpcrdma-nfsd $*: exit $rc (want $code), stderr:" >&2
		printf '%s\n' "$out" | sed 's/^/    /' >&2
		echo "    (want the text: $text)" >&2
		fails=$((fails + 1))
	fi
}

# Ranges from the usage text and rpcrdma-nfsd(8).
bad=2 ok=1 reached="export directory $MISSING"
E=(--export "$MISSING")

expect $bad "--file-cache-idle: 86401 is out of range 0..86400" "${E[@]}" --file-cache-idle 86401
expect $bad "--file-cache-idle: '-1' is not a number (range 0..86400)" "${E[@]}" --file-cache-idle -1
expect $bad "--file-cache-idle: '2s' is not a number (range 0..86400)" "${E[@]}" --file-cache-idle 2s
expect $bad "--file-cache-idle: '' is not a number" "${E[@]}" --file-cache-idle ""
expect $ok "$reached" "${E[@]}" --file-cache-idle 0
expect $ok "$reached" "${E[@]}" --file-cache-idle 86400
expect $bad "--file-cache: 1048577 is out of range 0..1048576" "${E[@]}" --file-cache 1048577
expect $ok "$reached" "${E[@]}" --file-cache 0
expect $bad "--threads: 0 is out of range 1..1024" "${E[@]}" --threads 0
expect $bad "--threads: 1025 is out of range 1..1024" "${E[@]}" --threads 1025
expect $bad "--transport-threads: 0 is out of range 1.." "${E[@]}" --transport-threads 0
expect $bad "--credits: 4097 is out of range 1..4096" "${E[@]}" --credits 4097
expect $bad "--credits: 0 is out of range 1..4096" "${E[@]}" --credits 0
expect $bad "--memory: 63M is out of range: at least 64M" "${E[@]}" --memory 63M
expect $ok "$reached" "${E[@]}" --memory 64M
expect $bad "--max-connections: 0 is out of range 1..65536" "${E[@]}" --max-connections 0
expect $bad "--max-connections-per-host: 0 is out of range 1..65536" "${E[@]}" --max-connections-per-host 0
expect $bad "--max-connections-per-host: 65537 is out of range 1..65536" "${E[@]}" --max-connections-per-host 65537
expect $bad "--max-connections-per-host: '-1' is not a number (range 1..65536)" "${E[@]}" --max-connections-per-host -1
expect $ok "$reached" "${E[@]}" --max-connections-per-host 1
expect $ok "$reached" "${E[@]}" --max-connections-per-host 65536
expect $bad "--idle-timeout: 86401 is out of range 0..86400" "${E[@]}" --idle-timeout 86401
expect $bad "--idle-timeout: '5m' is not a number (range 0..86400)" "${E[@]}" --idle-timeout 5m
expect $bad "--idle-timeout: '' is not a number" "${E[@]}" --idle-timeout ""
expect $ok "$reached" "${E[@]}" --idle-timeout 0
expect $ok "$reached" "${E[@]}" --idle-timeout 86400
expect $bad "--port: 0 is out of range 1..65535" "${E[@]}" --port 0
expect $bad "--mount-port: 65536 is out of range 1..65535" "${E[@]}" --mount-port 65536
expect $bad "--nlm-port: 0 is out of range 1..65535" "${E[@]}" --nlm-port 0
expect $bad "--tcp-port: 0 is out of range 1..65535" "${E[@]}" --tcp-port 0
expect $bad "--tcp-port: 65536 is out of range 1..65535" "${E[@]}" --tcp-port 65536
expect $bad "--nsm-port: 'x' is not a number (range 1..65535)" "${E[@]}" --nsm-port x
expect $bad "expected ADDR:PORT, [ADDR]:PORT or :PORT" "${E[@]}" --metrics 1.2.3.4
expect $bad "expected ADDR:PORT, [ADDR]:PORT or :PORT" "${E[@]}" --metrics :99999
expect $bad "expected ADDR:PORT, [ADDR]:PORT or :PORT" "${E[@]}" --metrics foo:80
expect $ok "$reached" "${E[@]}" --metrics :9100
expect $ok "$reached" "${E[@]}" --metrics "[::1]:9100"
expect $bad "--reply-post: 'both' is not one of auto, transport, worker" "${E[@]}" --reply-post both
expect $bad "--capture-size: 1K is out of range: 0, or at least 64K" "${E[@]}" --capture /tmp/c.pcap --capture-size 1K
expect $bad "--capture-files: 1001 is out of range 1..1000" "${E[@]}" --capture /tmp/c.pcap --capture-files 1001
expect $ok "$reached" "${E[@]}" --capture /tmp/c.pcap --capture-size 0
expect $bad "--capture-size needs --capture FILE" "${E[@]}" --capture-size 0
expect $bad "--capture-files needs --capture FILE" "${E[@]}" --capture-files 2
expect $bad "--state-dir: 'state' not an absolute path" "${E[@]}" --state-dir state
expect $bad "--grace: 86401 is out of range 0..86400" "${E[@]}" --grace 86401
expect $bad "--max-locks: 0 is out of range 1..16777216" "${E[@]}" --max-locks 0
expect $bad "--listen: '10.0.0.1/24' not a numeric address" "${E[@]}" --listen 10.0.0.1/24
expect $bad "--allow: '10.0.0.0/33' expected ADDR[/PREFIX]" "${E[@]}" --allow 10.0.0.0/33
expect $bad "--nfs4 and --no-nfs4 contradict each other" "${E[@]}" --nfs4 --no-nfs4
expect $bad "--no-delegations and --no-nfs4" "${E[@]}" --no-nfs4 --no-delegations
expect $bad "--lease: 9 is out of range 10..3600" "${E[@]}" --lease 9
expect $bad "--lease: 3601 is out of range 10..3600" "${E[@]}" --lease 3601
expect $bad "--lease: '1m' is not a number (range 10..3600)" "${E[@]}" --lease 1m
expect $bad "--lease and --no-nfs4" "${E[@]}" --no-nfs4 --lease 30
expect $ok "$reached" "${E[@]}" --lease 10
expect $ok "$reached" "${E[@]}" --lease 3600
expect $bad "--nfs4-clients: 15 is out of range 16..8192" "${E[@]}" --nfs4-clients 15
expect $bad "--nfs4-clients: 8193 is out of range 16..8192" "${E[@]}" --nfs4-clients 8193
expect $bad "--nfs4-clients: '1k' is not a number (range 16..8192)" "${E[@]}" --nfs4-clients 1k
expect $bad "--nfs4-clients: '' is not a number" "${E[@]}" --nfs4-clients ""
expect $bad "--nfs4-clients and --no-nfs4" "${E[@]}" --no-nfs4 --nfs4-clients 300
expect $ok "$reached" "${E[@]}" --nfs4-clients 16
expect $ok "$reached" "${E[@]}" --nfs4-clients 8192
expect $bad "unexpected argument: extra" "${E[@]}" extra
expect $bad "the default exports file" --threads 2
expect $bad "give one of --export DIR and --exports FILE: --export and --exports" "${E[@]}" --exports /etc/exports
expect $bad "--no-root-squash goes with --export DIR; with an exports file the file gives clients and options" --exports "$MISSING" --no-root-squash
expect $bad "unknown option --no-such-option (--help lists them)" "${E[@]}" --no-such-option
expect $bad "--exports: $MISSING: No such file or directory" --exports "$MISSING"
expect $ok "export $FILE: not a directory" --export "$FILE"
expect $ok "$reached" "${E[@]}"
# --backend NAME[:OPT=V...]: a name and options, checked by the exports
# parser and the backend; posix is the default
expect $bad "--backend: 'Posix!' expected a backend name (posix, memory), then its options as :OPT=VALUE" "${E[@]}" --backend 'Posix!'
expect $bad "--backend: '' is not 1..1023 bytes long" "${E[@]}" --backend ""
expect $bad "--backend: 'memory:bytes=1G,nodes=5' expected a backend name" "${E[@]}" --backend 'memory:bytes=1G,nodes=5'
expect $bad "--backend: ':bytes=1G' expected a backend name" "${E[@]}" --backend ':bytes=1G'
expect $ok "cannot export /scratch: backend memory does not take the options colour=blue" --export /scratch --backend memory:colour=blue
expect $ok "cannot export /: backend posix does not take the options bytes=1M" --export / --backend posix:bytes=1M
expect $bad "--backend goes with --export DIR" --exports "$MISSING" --backend posix
expect $ok "$reached" "${E[@]}" --backend posix
expect $ok "backend=nosuch: no such backend" --export / --backend nosuch
expect $bad "--backend memory needs an absolute path" --export relative --backend memory

# --export twice: refused (it used to keep the last one silently)
expect $bad "--export given twice: to serve several directories, list them in an exports file" --export /tmp --export /srv
# every problem told, not just the first
expect $bad "--credits: 5000 is out of range 1..4096" "${E[@]}" --credits 5000 --threads 0
expect $bad "--threads: 0 is out of range 1..1024" "${E[@]}" --credits 5000 --threads 0
expect $bad "2 problems" "${E[@]}" --credits 5000 --threads 0
# --version: the release, exit 0
expect 0 "" --version
n=$((n + 1))
ver=$("$NFSD" --version 2>/dev/null)
if [[ "$ver" != "rpcrdma-nfsd "[0-9]* ]]; then
	echo "FAIL: rpcrdma-nfsd --version: '$ver'" >&2
	fails=$((fails + 1))
fi

# --help: the usage text on standard output, exit 0, the idle option listed.
n=$((n + 1))
help=$("$NFSD" --help 2>/dev/null)
rc=$?
if [ $rc != 0 ] || [[ "$help" != *"--file-cache-idle SECONDS"* ]]; then
	echo "FAIL: rpcrdma-nfsd --help: exit $rc or no --file-cache-idle in the text" >&2
	fails=$((fails + 1))
fi

echo "nfsd_options: $((n - fails)) of $n cases as expected"
[ $fails = 0 ]
