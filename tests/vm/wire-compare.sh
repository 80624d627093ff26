#!/usr/bin/env bash
# wire-compare: what the kernel's NFS/RDMA client and server put on the wire
# against what ours put there, field by field (scripts/wire-compare), for
# the same NFSv3 operations: GETATTR, LOOKUP, READ of 100 B, 3000 B and
# 1 MiB (READ counts 1024, 4096, 1 MiB), WRITE of the three sizes, NULL, READDIRPLUS of a 300-entry directory,
# READLINK.  One guest, three captures:
#   kernel.pcap  rpcrdma-nfsd --capture, the kernel client's calls
#   ours.pcap    rpcrdma-nfs --capture against rpcrdma-nfsd: our client's
#                calls and our server's replies
#   knfsd.pcap   rpcrdma-nfs --capture against the kernel's nfsd: the
#                kernel server's replies
# Client side: the calls of kernel.pcap against those of ours.pcap (same
# server); server side: the replies of knfsd.pcap against those of
# ours.pcap (same client).  Any difference that tests/vm/wire-compare.known
# does not list (with its reason) fails the test.  The kernel client reads
# and writes with O_DIRECT so that its READ and WRITE counts are the sizes
# asked for, as our client's are.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
vm_require_guest

command -v tshark >/dev/null || fail "tshark is not installed (scripts/install-deps --vm-only)"
export HOME=/tmp # tshark keeps its profile there
NFSD=$(rpcrdma_bin rpcrdma-nfsd)
NFS=$(rpcrdma_bin rpcrdma-nfs)
CMP=$RPCRDMA_CHECKOUT/scripts/wire-compare
KNOWN=$VM_TEST_DIR/wire-compare.known
EXPORT=$SCRATCH/export
KEXPORT=$SCRATCH/kexport
MNT=/mnt/w
CAPS=/tmp/wirecmp
SIZES=(100 3000 1048576)
# The READ count each file is read with, by both clients: our client asks
# for --rsize bytes (it reads to the end of file, whatever the size), the
# kernel's O_DIRECT read for what dd asks.  1024 is a READ whose reply
# fits the 4096-byte inline threshold, 4096 one that does not.
declare -A RSIZE=([100]=1024 [3000]=4096 [1048576]=1048576)
mkdir -p "$CAPS" /tmp/src
on_failure "mkdir -p '$RPCRDMA_BUILD_DIR/vm-wire-compare' && cp $CAPS/*.pcap* $CAPS/*.json '$RPCRDMA_BUILD_DIR/vm-wire-compare/' 2>/dev/null && echo 'captures kept: $RPCRDMA_BUILD_DIR/vm-wire-compare'"

for s in "${SIZES[@]}"; do head -c "$s" /dev/urandom >"/tmp/src/$s.bin"; done
# populate DIR: the files read, a directory whose listing needs more than
# the inline threshold (300 entries with long names: about 60 KiB of
# READDIRPLUS reply), a symlink.
populate() {
	local d=$1 i
	mkdir -p "$d/dir"
	chmod 1777 "$d"
	for s in "${SIZES[@]}"; do cp "/tmp/src/$s.bin" "$d/r$s.bin"; done
	for i in $(seq 1 300); do : >"$d/dir/an-entry-with-a-long-name-to-fill-the-reply-$i"; done
	ln -sfn r100.bin "$d/link"
}
populate "$EXPORT"
populate "$KEXPORT"

# ---- 1: the kernel client against rpcrdma-nfsd (captured at the server)
rnfsd_start "$NFSD" "$EXPORT" /tmp/nfsd1.log --capture "$CAPS/kernel.pcap"
kmount "$SERVER_ADDR:$EXPORT" "$MNT" "mountport=$MOUNT_PORT,mountproto=tcp"
drop_caches
stat "$MNT/r100.bin" >/dev/null
for s in "${SIZES[@]}"; do
	bounded 60 "read $s" dd if="$MNT/r$s.bin" of=/tmp/back bs="${RSIZE[$s]}" count=1 iflag=direct status=none
	cmp -s /tmp/back "/tmp/src/$s.bin" || fail "kernel client: r$s.bin read back differs"
	bounded 60 "write $s" dd if="/tmp/src/$s.bin" of="$MNT/w$s.bin" bs="$s" count=1 oflag=direct status=none
done
n=$(bounded 60 "ls dir" ls -l "$MNT/dir" | wc -l)
((n == 301)) || fail "kernel client: ls -l shows $n lines, expected 301"
[[ $(readlink "$MNT/link") == r100.bin ]] || fail "kernel client: readlink"
kumount "$MNT"
rnfsd_term

# ---- 2: our client against rpcrdma-nfsd, then against the kernel nfsd
# (captured at the client; one file per command, the capture refuses to
# append).
our_client() { # NAME SPEC [OPTS...]: the workout, captures $CAPS/NAME.*.pcap
	local name=$1 spec=$2 s
	shift 2
	nfs() { # TAG [OPTIONS...] COMMAND...: OPTIONS start with --
		local tag=$1 more=()
		shift
		while [[ $1 == --* ]]; do more+=("$1" "$2"); shift 2; done
		bounded 120 "rpcrdma-nfs $*" "$NFS" --quiet --source "$CLIENT_ADDR" "${opts[@]}" \
			"${more[@]}" --capture "$CAPS/$name.$tag.pcap" "$spec" "$@" >/tmp/out ||
			fail "$name: rpcrdma-nfs $* failed"
	}
	local opts=("$@")
	nfs null null
	nfs stat stat /r100.bin
	for s in "${SIZES[@]}"; do
		nfs "get$s" --rsize "${RSIZE[$s]}" --streams 1 get "/r$s.bin" /tmp/back
		cmp -s /tmp/back "/tmp/src/$s.bin" || fail "$name: get r$s.bin differs"
		nfs "put$s" put "/tmp/src/$s.bin" "/w$s.bin"
	done
	nfs ls ls -l /dir
	n=$(wc -l </tmp/out)
	((n >= 300)) || fail "$name: ls -l shows $n lines"
	nfs readlink readlink /link
	[[ $(cat /tmp/out) == r100.bin ]] || fail "$name: readlink: $(cat /tmp/out)"
	# one file (the connections one after the other) for one tshark run
	mergecap -a -w "$CAPS/$name.pcap" "$CAPS/$name".*.pcap || fail "mergecap $name"
}
rnfsd_start "$NFSD" "$EXPORT" /tmp/nfsd2.log
our_client ours "$SERVER_ADDR:$EXPORT" --mount-port "$MOUNT_PORT"
rnfsd_term
knfsd_start "$KEXPORT"
our_client knfsd "$SERVER_ADDR:$KEXPORT"
knfsd_stop
pass "workouts done: kernel client and rpcrdma-nfs against rpcrdma-nfsd, rpcrdma-nfs against the kernel nfsd"

# ---- 3: compare
ops=NFSv3.GETATTR,NFSv3.LOOKUP,NFSv3.READ/tiny,NFSv3.READ/near,NFSv3.READ/large
ops+=,NFSv3.WRITE/tiny,NFSv3.WRITE/near,NFSv3.WRITE/large,NFSv3.READDIRPLUS,NFSv3.READLINK
for c in kernel ours knfsd; do
	bounded 240 "wire-compare dump $c" "$CMP" dump "$CAPS/$c.pcap" >"$CAPS/$c.json"
done
pass "tshark decoded the three captures"
rc=0
log "client side: the kernel client's calls (kernel) against rpcrdma-nfs's (ours)"
"$CMP" compare --side calls --known "$KNOWN" --names kernel,ours --require "$ops,NFSv3.NULL" \
	"$CAPS/kernel.json" "$CAPS/ours.json" || rc=1
log "server side: the kernel nfsd's replies (kernel) against rpcrdma-nfsd's (ours)"
"$CMP" compare --side replies --known "$KNOWN" --names kernel,ours \
	--require "$ops,NFSv3.NULL,NFSv3.READDIRPLUS/over-inline" \
	"$CAPS/knfsd.json" "$CAPS/ours.json" || rc=1
((rc == 0)) || fail "wire-compare: differences not in $KNOWN (above)"
pass "the kernel's and our calls and replies differ only as $KNOWN lists"
