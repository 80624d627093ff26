#!/usr/bin/env bash
# client-tree: rpcrdma-nfs put -r and get -r of a directory tree (regular
# files of 0 B to 12 MiB, nested and empty directories, symbolic links
# relative, absolute, dangling and to a directory, names with spaces, modes
# from 0444 to 4755, a read-only directory with entries) against
# rpcrdma-nfsd and against the kernel's nfsd: the copy on the server and
# the copy fetched back equal the original (diff -r, and a manifest of
# types, modes, sizes, link targets and sha256), with one connection and
# with --nconnect 4 (calls on all four connections), the export named as
# SERVER:/export and as an nfs:// URL (one that goes below the export,
# too); a bad URL exits 2 with a message.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
vm_require_guest

NFSD=$(rpcrdma_bin rpcrdma-nfsd)
NFS=$(rpcrdma_bin rpcrdma-nfs)
SRC=$SCRATCH/tree

# ---- the tree
mkdir -p "$SRC/a/b/c" "$SRC/empty" "$SRC/ro dir" "$SRC/with space"
: >"$SRC/zero"
printf x >"$SRC/one"
head -c 65537 /dev/urandom >"$SRC/a/65537.bin"
head -c $((3 << 20 | 7)) /dev/urandom >"$SRC/a/b/3M+7.bin"
head -c $((12 << 20)) /dev/urandom >"$SRC/a/b/c/12M.bin"
head -c 1000 /dev/urandom >"$SRC/with space/f ü.bin"
head -c 4097 /dev/urandom >"$SRC/ro dir/inside"
printf '#!/bin/sh\n' >"$SRC/script"
chmod 0755 "$SRC/script"
chmod 0444 "$SRC/one"
chmod 0600 "$SRC/a/65537.bin"
chmod 4755 "$SRC/a/b/3M+7.bin"
chmod 0640 "$SRC/zero"
chmod 0750 "$SRC/a/b"
ln -s ../one "$SRC/a/rel-link"
ln -s /etc/hostname "$SRC/abs-link"
ln -s does-not-exist "$SRC/dangling"
ln -s a/b "$SRC/dir-link"
chmod 0555 "$SRC/ro dir"

# manifest DIR: type, mode, size (files), target (links), sha256 (files);
# owners and times are not copied.
manifest() {
	(
		cd "$1" || exit 1
		find . -mindepth 1 -printf '%P %y %m %s %l\n' |
			awk '$2 == "d" { $4 = "-" } $2 == "l" { $3 = "-" } { print }'
		find . -type f -print0 | xargs -0 -r sha256sum
	) | LC_ALL=C sort
}
manifest "$SRC" >"$SCRATCH/want.manifest"
grep -q '^a/b d 750 ' "$SCRATCH/want.manifest" || fail "the source tree lacks its modes"

# same_tree A B WHAT: diff -r (links compared as links) and the manifests.
same_tree() {
	local out
	out=$(diff -r --no-dereference "$1" "$2" 2>&1) || fail "$3: diff -r: $out"
	manifest "$2" >"$SCRATCH/got.manifest"
	out=$(diff "$SCRATCH/want.manifest" "$SCRATCH/got.manifest") ||
		fail "$3: manifests differ (< original, > copy): $out"
}

# on_connections LOG: the --stats line says 4 connections, each with calls.
on_connections() {
	local per
	per=$(grep -Eo '"per_connection_calls":\[[0-9,]*\]' "$1") ||
		{ cat "$1"; fail "no per-connection counters"; }
	grep -Eq '^"per_connection_calls":\[[1-9][0-9]*(,[1-9][0-9]*){3}\]$' <<<"$per" ||
		fail "calls not on all 4 connections: $per"
	log "$per"
}

# run_suite NAME: EXPORT, SPEC, URL and COPTS set; the server is running.
run_suite() {
	local name=$1 back=$SCRATCH/back-$1 rc out
	rm -rf "$EXPORT/tree" "$EXPORT/nc4" "$back" "$back-nc4" "$back-url" "$back-into"

	# put -r into an existing directory: lands under the source's name
	"$NFS" "${COPTS[@]}" "$SPEC" put -r "$SRC" / || fail "$name: put -r $SRC /"
	same_tree "$SRC" "$EXPORT/tree" "$name: put -r (server's copy)"
	pass "$name: put -r: the server's copy equals the original"
	# get -r to a new name: becomes that name
	"$NFS" "${COPTS[@]}" "$SPEC" get -r /tree "$back" || fail "$name: get -r /tree"
	same_tree "$SRC" "$back" "$name: get -r"
	pass "$name: get -r: the copy equals the original"
	# into an existing directory, twice: lands under the source's name,
	# the second time over the first copy
	rm -rf "$back-into" && mkdir "$back-into"
	"$NFS" "${COPTS[@]}" "$SPEC" get -r /tree "$back-into" || fail "$name: get -r into a directory"
	"$NFS" "${COPTS[@]}" "$SPEC" get -r /tree "$back-into" || fail "$name: get -r over an earlier copy"
	same_tree "$SRC" "$back-into/tree" "$name: get -r over an earlier copy"
	pass "$name: get -r into an existing directory, then over that copy: equal"
	# again over the existing copies: replaced, still equal
	"$NFS" "${COPTS[@]}" "$SPEC" put -r "$SRC" / || fail "$name: put -r again"
	same_tree "$SRC" "$EXPORT/tree" "$name: put -r over an earlier copy"
	pass "$name: put -r over an earlier copy: equal"

	# --nconnect 4, to a new remote name and back
	"$NFS" "${COPTS[@]}" --nconnect 4 --stats "$SPEC" put -r "$SRC" /nc4 \
		2>"$SCRATCH/nc4-put.log" || { cat "$SCRATCH/nc4-put.log"; fail "$name: put -r --nconnect 4"; }
	same_tree "$SRC" "$EXPORT/nc4" "$name: put -r --nconnect 4"
	on_connections "$SCRATCH/nc4-put.log"
	"$NFS" "${COPTS[@]}" --nconnect 4 --stats "$SPEC" get -r /nc4 "$back-nc4" \
		2>"$SCRATCH/nc4-get.log" || { cat "$SCRATCH/nc4-get.log"; fail "$name: get -r --nconnect 4"; }
	same_tree "$SRC" "$back-nc4" "$name: get -r --nconnect 4"
	on_connections "$SCRATCH/nc4-get.log"
	pass "$name: put -r and get -r with --nconnect 4: byte-exact, calls on all 4 connections"

	# a URL whose path goes below the export: MOUNT takes the longest
	# part it accepts, the rest is the base of the command's paths
	"$NFS" "${COPTS[@]}" -v "$URL/tree/a" get -r / "$back-url" 2>"$SCRATCH/url.log" ||
		{ cat "$SCRATCH/url.log"; fail "$name: get -r through $URL/tree/a"; }
	out=$(diff -r --no-dereference "$SRC/a" "$back-url" 2>&1) || fail "$name: URL get -r: $out"
	grep -m1 'export ' "$SCRATCH/url.log" | sed 's/^/    /'
	out=$("$NFS" "${COPTS[@]}" "$URL/tree/a/b" cat 3M+7.bin | sha256sum)
	[[ ${out%% *} == $(sha256sum <"$SRC/a/b/3M+7.bin" | cut -d' ' -f1) ]] ||
		fail "$name: cat through $URL/tree/a/b gave other bytes"
	# a URL naming a file: cat / reads it (whether MOUNT takes the file or,
	# refusing it, its directory)
	out=$("$NFS" "${COPTS[@]}" "$URL/tree/a/65537.bin" cat / | sha256sum)
	[[ ${out%% *} == $(sha256sum <"$SRC/a/65537.bin" | cut -d' ' -f1) ]] ||
		fail "$name: cat / through $URL/tree/a/65537.bin gave other bytes"
	# a missing tail: MOUNT refuses it, its parent is the export, and the
	# command names the missing path
	rc=0
	out=$("$NFS" "${COPTS[@]}" "$URL/tree/no-such" ls 2>&1) || rc=$?
	((rc == 1)) || fail "$name: ls through $URL/tree/no-such: status $rc ($out)"
	grep -q '/no-such: No such file or directory' <<<"$out" ||
		fail "$name: ls through $URL/tree/no-such said '$out'"
	pass "$name: nfs:// URLs below the export: get -r, cat of a file, a missing path"
}

# ---- rpcrdma-nfsd
EXPORT=$SCRATCH/export
rnfsd_start "$NFSD" "$EXPORT" "$SCRATCH/rpcrdma-nfsd.log" --no-root-squash
COPTS=(--source "$CLIENT_ADDR" --quiet)
SPEC="$SERVER_ADDR:$EXPORT"
COPTS+=(--mount-port "$MOUNT_PORT")
URL="nfs://$SERVER_ADDR:$NFS_RDMA_PORT$EXPORT"
run_suite rpcrdma-nfsd
# a URL's mountport= names the MOUNT port as --mount-port does
"$NFS" --source "$CLIENT_ADDR" --quiet "nfs://$SERVER_ADDR$EXPORT?mountport=$MOUNT_PORT" \
	stat /tree/one >/dev/null || fail "URL with ?mountport="
pass "rpcrdma-nfsd: nfs://SERVER/export?mountport=N"
rnfsd_term

# ---- kernel nfsd (mountd found through rpcbind)
EXPORT=$SCRATCH/kexport
knfsd_start "$EXPORT"
COPTS=(--source "$CLIENT_ADDR" --quiet)
SPEC="$SERVER_ADDR:$EXPORT"
URL="nfs://$SERVER_ADDR$EXPORT"
run_suite kernel-nfsd

# ---- bad URLs: a message and exit 2, nothing sent
for bad in "nfs://$SERVER_ADDR" "nfs://$SERVER_ADDR:0$EXPORT" "nfs://user@$SERVER_ADDR$EXPORT" \
	   "nfs://$SERVER_ADDR$EXPORT?uid=0" "http://$SERVER_ADDR$EXPORT"; do
	rc=0
	out=$("$NFS" --source "$CLIENT_ADDR" "$bad" ls 2>&1) || rc=$?
	((rc == 2)) || fail "'$bad': status $rc, expected 2 ($out)"
	grep -q "^rpcrdma-nfs: '$bad': " <<<"$out" || fail "'$bad': message '$out'"
done
pass "bad URLs: exit 2 with a message naming the URL"
