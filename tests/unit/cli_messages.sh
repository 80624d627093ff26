#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# The messages of the client tools (issue 37), one MODE per CTest test:
#   version    rpcrdma-nfs, -probe, -stat and -decode --version (and -V)
#              print "NAME VERSION", VERSION the project's (CMake's
#              PROJECT_VERSION, given by the test's registration), exit 0,
#              and each tool's man page has its -V, --version entry
#   options    a value outside an option's range: exit 2 and one line
#              "NAME: --OPTION: expected LO..HI[ UNIT]: VALUE" (the ranges
#              of the usage texts and man pages); the range's ends taken
#              (shown by the run going on to the host name check)
#   resolve    a host name that does not resolve (RFC 6761: .invalid never
#              does): "cannot resolve host NAME: <gai_strerror>", not a
#              connection error
#   no_device  on a host without RDMA devices: the server's hint ("no RDMA
#              device: see `rdma link show`"), before MOUNT is tried;
#              skipped (77) where a device exists
# Usage: cli_messages.sh MODE NFS PROBE STAT DECODE VERSION
set -u
MODE=${1:?usage: cli_messages.sh MODE NFS PROBE STAT DECODE VERSION}
NFS=${2:?} PROBE=${3:?} STAT=${4:?} DECODE=${5:?} VERSION=${6:?}
BAD=nosuch-rpcrdma-host.invalid
MAN=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../man" && pwd)
fails=0 n=0

# expect CODE TEXT CMD ARGS...: exit status CODE and TEXT in standard error.
expect() {
	local code=$1 text=$2 out rc
	shift 2
	n=$((n + 1))
	out=$("$@" 2>&1 >/dev/null)
	rc=$?
	if [ "$rc" != "$code" ] || [[ "$out" != *"$text"* ]]; then
		echo "FAIL: ${*##*/}: exit $rc (want $code), stderr:" >&2
		printf '%s\n' "$out" | sed 's/^/    /' >&2
		echo "    (want the text: $text)" >&2
		fails=$((fails + 1))
	fi
}

case $MODE in
version)
	for t in "$NFS" "$PROBE" "$STAT" "$DECODE"; do
		for opt in --version -V; do
			n=$((n + 1))
			out=$("$t" "$opt" 2>&1)
			rc=$?
			want="$(basename "$t") $VERSION"
			if [ $rc != 0 ] || [ "$out" != "$want" ]; then
				echo "FAIL: $(basename "$t") $opt: exit $rc, printed '$out' (want '$want')" >&2
				fails=$((fails + 1))
			fi
		done
		# and its man page documents it (man/NAME.SECTION of the source tree)
		n=$((n + 1))
		page=$(ls "$MAN/$(basename "$t")".[18] 2>/dev/null | head -n 1)
		if [ -z "$page" ] || ! grep -q '^\.BR \\-V ", " \\-\\-version' "$page"; then
			echo "FAIL: $(basename "$t"): no -V, --version entry in ${page:-its man page}" >&2
			fails=$((fails + 1))
		fi
	done
	;;
options)
	S="127.0.0.1:/x"
	resolve="cannot resolve host $BAD"
	expect 2 "rpcrdma-nfs: --credits: expected 1..1024: 5000" "$NFS" --credits 5000 $S ls
	expect 2 "rpcrdma-nfs: --credits: expected 1..1024: 0" "$NFS" --credits 0 $S ls
	expect 1 "$resolve" "$NFS" --credits 1024 $BAD:/x ls
	expect 2 "rpcrdma-nfs: --port: expected 1..65535: 65536" "$NFS" --port 65536 $S ls
	expect 2 "rpcrdma-nfs: --port: expected 1..65535: 0" "$NFS" --port 0 $S ls
	expect 2 "rpcrdma-nfs: --mount-port: expected 1..65535: -1" "$NFS" --mount-port -1 $S ls
	expect 2 "rpcrdma-nfs: --rsize: expected 1024..16777216 bytes: 1023" "$NFS" --rsize 1023 $S ls
	expect 2 "rpcrdma-nfs: --wsize: expected 1024..16777216 bytes: 16777217" "$NFS" --wsize 16777217 $S ls
	expect 1 "$resolve" "$NFS" --rsize 4096 --wsize 16777216 $BAD:/x ls
	expect 2 "rpcrdma-nfs: --streams: expected 1..16: 17" "$NFS" --streams 17 $S ls
	expect 2 "rpcrdma-nfs: --nconnect: expected 1..16: 0" "$NFS" --nconnect 0 $S ls
	expect 2 "rpcrdma-nfs: --timeout: expected 1..3600 seconds: 3601" "$NFS" --timeout 3601 $S ls
	expect 2 "rpcrdma-nfs: --timeout: expected 1..3600 seconds: 5s" "$NFS" --timeout 5s $S ls
	expect 2 "rpcrdma-nfs: --timeout: expected 1..3600 seconds: " "$NFS" --timeout "" $S ls
	expect 2 "rpcrdma-nfs: --retries: expected 0..1000: 1001" "$NFS" --retries 1001 $S ls
	expect 2 "rpcrdma-nfs: --retries: expected 0..1000: 0x10" "$NFS" --retries 0x10 $S ls
	expect 1 "$resolve" "$NFS" --retries 0 --timeout 3600 --nconnect 16 $BAD:/x ls
	expect 2 "rpcrdma-probe: --port: expected 1..65535: 0" "$PROBE" --port 0 127.0.0.1
	expect 2 "rpcrdma-probe: --mount-port: expected 1..65535: 99999" "$PROBE" --mount-port 99999 127.0.0.1
	expect 2 "rpcrdma-probe: --timeout-ms: expected 1..600000 ms: 0" "$PROBE" --timeout-ms 0 127.0.0.1
	expect 2 "rpcrdma-probe: --connections: expected 1..10000: 10001" "$PROBE" --connections 10001 127.0.0.1
	expect 2 "rpcrdma-probe: --hold: expected 0..86400 seconds: -1" "$PROBE" -c 1 --hold -1 127.0.0.1
	expect 2 "rpcrdma-probe: --parallel: expected 1..1024: 0" "$PROBE" -c 1 --parallel 0 127.0.0.1
	expect 2 "$resolve" "$PROBE" -c 10000 --hold 86400 --parallel 1024 $BAD
	;;
resolve)
	want="cannot resolve host $BAD: "
	expect 1 "rpcrdma-nfs: $want" "$NFS" $BAD:/x ls
	expect 1 "rpcrdma-nfs: $want" "$NFS" nfs://$BAD/x ls
	expect 1 "rpcrdma-nfs: $want" "$NFS" --mount-port 20048 $BAD:/x ls
	expect 1 "rpcrdma-nfs: $want" "$NFS" --source $BAD 127.0.0.1:/x ls
	expect 2 "rpcrdma-probe: $want" "$PROBE" $BAD
	expect 2 "rpcrdma-probe: $want" "$PROBE" -c 1 $BAD
	expect 2 "rpcrdma-probe: $want" "$PROBE" --source $BAD 127.0.0.1
	# and not the old words for it
	n=$((n + 1))
	if "$NFS" $BAD:/x ls 2>&1 | grep -q "No route to host\|Connection refused"; then
		echo "FAIL: rpcrdma-nfs $BAD: still a connection error" >&2
		fails=$((fails + 1))
	fi
	;;
no_device)
	if [ -n "$(ls -A /sys/class/infiniband 2>/dev/null)" ]; then
		echo "cli_messages no_device: this host has RDMA devices ($(ls /sys/class/infiniband | tr '\n' ' ')): skipped"
		exit 77
	fi
	hint='no RDMA device: see `rdma link show`'
	expect 1 "rpcrdma-nfs: 127.0.0.1:/x: cannot mount over RDMA: No such device ($hint" \
		"$NFS" 127.0.0.1:/x ls
	# before MOUNT: not "MOUNT: Connection refused" (nothing listens on port 1)
	expect 1 "$hint" "$NFS" --mount-port 1 127.0.0.1:/x ls
	expect 2 "rpcrdma-probe: cannot connect to 127.0.0.1 port 20049: " "$PROBE" 127.0.0.1
	expect 2 "$hint" "$PROBE" 127.0.0.1
	expect 2 "$hint" "$PROBE" --export /x --mount-port 1 ::1
	expect 2 "$hint" "$PROBE" -c 1 127.0.0.1
	;;
*)
	echo "cli_messages.sh: unknown MODE $MODE" >&2
	exit 2
	;;
esac

if [ $fails = 0 ]; then
	echo "cli_messages $MODE: all $n cases as expected"
else
	echo "cli_messages $MODE: $fails of $n cases FAILED"
fi
[ $fails = 0 ]
