#!/usr/bin/env bash
# client-vs-kernel-nfsd: our client (rpcrdma-nfs) against the Linux kernel's
# nfsd over RDMA, from the client address.  put and get the six test files
# plus one of 65537 B, comparing byte for byte with the originals and with
# the server's on-disk copies, in the tool's default registration mode
# (memory windows), per call and persistent; `ls -l` of a directory of 2000
# entries; a symlink with a 1000-byte target read back; mkdir / mv / rm /
# rmdir / chmod / hard link / df / stat; a missing file exits 1 with a
# message, a usage error 2.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
vm_require_guest

# ---- the client checks (the same in client-vs-kernel-nfsd.sh and
# client-vs-rpcrdma-nfsd.sh): needs EXPORT, SPEC and CLIENT_OPTS.
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
	pass "put and get through type 2 memory windows"

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

EXPORT=$SCRATCH/export
knfsd_start "$EXPORT"
# kernel mountd registers with rpcbind: no --mount-port needed.
CLIENT_OPTS=(--source "$CLIENT_ADDR" --quiet)
SPEC="$SERVER_ADDR:$EXPORT"
client_suite
