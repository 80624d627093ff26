#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# rpcrdma-stat against fake control sockets (the protocol of
# src/svc/svc_control.c: one request line, the answer, the server closes):
# a server that never answers is given up after --timeout with exit 1; an
# "error: " answer is exit 1 with the server's words; --json prints the
# answer as one line, and --watch --json prints JSON lines (no time stamp
# header between them); contradictory or out-of-range options exit 2.
# Usage: stat_cli.sh PATH-TO-rpcrdma-stat
set -u
STAT=${1:?usage: stat_cli.sh PATH-TO-rpcrdma-stat}
D=$(mktemp -d) || exit 1
pids=()
trap 'kill "${pids[@]}" 2>/dev/null; rm -rf "$D"' EXIT
fails=0 n=0

fail() {
	echo "FAIL: $*" >&2
	fails=$((fails + 1))
}

# serve MODE SOCK: a fake control socket in the background.  MODE silent:
# accept, read the request, never answer; error: answer "error: ..."; json:
# answer a JSON object without a final newline.  Requests go to SOCK.req.
serve() {
	python3 - "$1" "$2" <<'EOF' &
import os, socket, sys, time
mode, path = sys.argv[1], sys.argv[2]
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(path + ".tmp")
s.listen(8)
os.rename(path + ".tmp", path)
held = []
n = 0
while True:
    c, _ = s.accept()
    req = c.recv(64)
    with open(path + ".req", "ab") as f:
        f.write(req)
    n += 1
    if mode == "silent":
        held.append(c)          # keep it open, say nothing
        continue
    if mode == "error":
        c.sendall(b"error: permission denied\n")
    else:
        c.sendall(b'{"calls":%d,"ops":[]}' % n)
    c.close()
EOF
	pids+=($!)
	for _ in $(seq 100); do
		[ -S "$2" ] && return 0
		sleep 0.05
	done
	echo "fake server $1 did not start" >&2
	exit 1
}

serve silent "$D/silent"
serve error "$D/error"
serve json "$D/json"

# A server that never answers: exit 1 after about --timeout, with a message.
n=$((n + 1))
t0=$(date +%s%N)
err=$("$STAT" -s "$D/silent" --timeout 1 2>&1 >/dev/null)
rc=$?
ms=$((($(date +%s%N) - t0) / 1000000))
if [ $rc != 1 ] || [[ "$err" != *"no answer within 1 s"* ]] || ((ms < 900 || ms > 8000)); then
	fail "silent server: exit $rc after $ms ms: $err"
fi

# The server's error: exit 1, its words shown.
n=$((n + 1))
err=$("$STAT" -s "$D/error" 2>&1 >/dev/null)
rc=$?
if [ $rc != 1 ] || [[ "$err" != *"the server answered: error: permission denied"* ]]; then
	fail "error answer: exit $rc: $err"
fi

# --json: the request "json", the answer on one line of its own.
n=$((n + 1))
out=$("$STAT" -s "$D/json" --json)
rc=$?
if [ $rc != 0 ] || [ "$out" != '{"calls":1,"ops":[]}' ] ||
   ! printf 'json\n' | cmp -s -n 5 - "$D/json.req"; then
	fail "--json: exit $rc, output '$out', request '$(cat "$D/json.req")'"
fi

# --watch 1 --json for about 2.5 s: every line a JSON object (2 or 3 of them).
n=$((n + 1))
timeout -s INT 2.5 "$STAT" -s "$D/json" --json --watch 1 >"$D/watch.out" 2>"$D/watch.err"
if ! python3 - "$D/watch.out" <<'EOF'; then
import json, sys
lines = open(sys.argv[1]).read().splitlines()
assert 2 <= len(lines) <= 4, lines
for l in lines:
    assert isinstance(json.loads(l), dict), l
EOF
	fail "--watch --json: not JSON lines: $(head -c 300 "$D/watch.out")"
fi

# Usage errors: exit 2 with a message naming the option.
usage() {
	local text=$1 out rc
	shift
	n=$((n + 1))
	out=$("$STAT" "$@" 2>&1 >/dev/null)
	rc=$?
	if [ $rc != 2 ] || [[ "$out" != *"$text"* ]]; then
		fail "rpcrdma-stat $*: exit $rc (want 2): $out"
	fi
}
usage "--json and --prometheus: give one of them" -s "$D/json" --json --prometheus
usage "--timeout: expected 1..3600 seconds: 0" --timeout 0
usage "--timeout: expected 1..3600 seconds: 3601" --timeout 3601
usage "--timeout: expected 1..3600 seconds: -5" --timeout -5
usage "--watch: expected 1..3600 seconds: 0" --watch 0

# No server at the path: exit 1, a hint.
n=$((n + 1))
err=$("$STAT" -s "$D/none" 2>&1 >/dev/null)
rc=$?
if [ $rc != 1 ] || [[ "$err" != *"cannot connect to $D/none"* ]]; then
	fail "no server: exit $rc: $err"
fi

echo "stat_cli: $((n - fails)) of $n cases as expected"
[ $fails = 0 ]
