# shellcheck shell=bash
# tests/vm/workout.sh: the kernel-client workout against an NFS server, in
# phases, shared by vm/kernel-client-interop (NFSv3), vm/nfs41-interop
# (NFSv4.1) and `make bench`'s nfs41 section (bench/bench-inside.sh), which
# times each phase against the kernel's nfsd and against rpcrdma-nfsd.
# Source it after lib.sh; not a test itself (tests/vm/CMakeLists.txt leaves
# it out).
#
# Every check ends the caller with fail (lib.sh); the bench runs each phase
# in a subshell, where a failed check ends the phase and becomes an error in
# its results.  No phase depends on a shell variable set by an earlier one
# (only on files), so each can run in a subshell of its own.
#
# The caller sets:
#   WK_MNT         the kernel client's mount point (the workout's directory;
#                  its /proc/self/mountstats entry is read)
#   WK_EXPORT      the same directory on the server's side (the checks read
#                  the server's copies there)
#   WK_LOCAL       a local directory: originals (orig/), copies read back
#                  (back/, tree-back/), the tree (tree/), expected contents
#   WK_ODD_BS      1: also dd with odd block sizes (4097; 65537 for 16 MiB)
#   WK_READDIR_OP  the procedure that lists a directory: READDIRPLUS (NFSv3)
#                  or READDIR (NFSv4.1), as /proc/self/mountstats names it
#
# Phases, in this order; the caller remounts (unmount, drop_caches, mount)
# before wk_read and before wk_tree_out, so that what the client sees then
# comes from the server:
#   wk_setup            local files (once)
#   wk_write            7 sizes, 0 B to 16 MiB, by cp and dd oflag=direct
#   wk_read             read back by cmp and dd iflag=direct (after a remount)
#   wk_readdir_prepare  2000 entries made on the server's side
#   wk_readdir          ls -l of them
#   wk_namespace        symlink, mkdir/rmdir, rename, O_EXCL create, hard
#                       link, chmod, truncate, rm
#   wk_tree_in          cp -a of a tree into the mount
#   wk_tree_out         after a remount: symlink, modes, sizes; cp -a out
#   wk_rm               rm -rf of the 2000 entries and of the tree

# The seven sizes: 0 B, 1 B, one page -1/+1, 64 KiB + 1, 1 MiB + 3, 16 MiB.
WK_SIZES=(0 1 4095 4097 65537 1048579 16777216)
# A 1000-byte symlink target (printf is a builtin: no exec).
printf -v WK_TARGET 'd/%.0s' {1..500}

# odd_bs SIZE: the odd block size for direct I/O on a file of SIZE bytes:
# 4097 (unaligned offsets, requests straddling pages), 65537 for 16 MiB
# (256 calls rather than 4096).
odd_bs() { if (($1 >= 16777216)); then echo 65537; else echo 4097; fi; }

# size_of PATH: st_size, bounded (PATH may be on the mount).
size_of() { timeout -k 10 30 stat -c %s -- "$1" || fail "stat $1"; }

# wk_variants: the names the files are written under: cp, d1m (dd bs=1M),
# dodd (dd with the odd block size, WK_ODD_BS=1).
wk_variants() {
	if ((WK_ODD_BS)); then echo cp d1m dodd; else echo cp d1m; fi
}

# wk_setup: the originals (WK_SIZES bytes of random data, WK_LOCAL/orig/
# SIZE.bin) and the tree for cp -a (WK_LOCAL/tree: directories, an empty one,
# files of several sizes and modes, one owned by 1000:1000, a relative and a
# 1000-byte symlink, set mtimes) with its manifest (manifest-orig).
wk_setup() {
	local o=$WK_LOCAL/orig t=$WK_LOCAL/tree
	mkdir -p "$WK_LOCAL/back"
	make_test_files "$o"
	head -c 65537 /dev/urandom >"$o/65537.bin"
	rm -rf "$t"
	mkdir -p "$t/a/b/c" "$t/empty" "$t/a/private"
	head -c 5000 /dev/urandom >"$t/a/b/c/deep.bin"
	head -c 70001 /dev/urandom >"$t/a/b/mid.bin"
	: >"$t/zero"
	printf 'hello\n' >"$t/a/hello.txt"
	cp "$o/1048579.bin" "$t/a/big.bin"
	printf '#!/bin/sh\necho hi\n' >"$t/a/run.sh"
	chmod 755 "$t/a/run.sh"
	chmod 600 "$t/a/hello.txt"
	chmod 700 "$t/a/private"
	head -c 123 /dev/urandom >"$t/a/private/owned"
	chown 1000:1000 "$t/a/private/owned"
	ln -s b/c/deep.bin "$t/a/link-to-deep"
	ln -s "$WK_TARGET" "$t/long-link"
	touch -d '2001-02-03 04:05:06.123456789' "$t/a/b/mid.bin" "$t/a/b/c"
	touch -d '2011-12-13 14:15:16.5' "$t/zero" "$t/a/private"
	tree_manifest "$t" >"$WK_LOCAL/manifest-orig"
}

# wk_write: every size written with cp and dd oflag=direct bs=1M (and the
# odd block size), synced, compared with the server's copies; WRITE calls
# counted on the mount.
wk_write() {
	local o=$WK_LOCAL/orig s v bs
	for s in "${WK_SIZES[@]}"; do
		bounded 120 "cp $s.bin to the mount" cp "$o/$s.bin" "$WK_MNT/cp-$s.bin"
		bounded 120 "dd oflag=direct bs=1M of $s.bin to the mount" \
			dd if="$o/$s.bin" of="$WK_MNT/d1m-$s.bin" bs=1M oflag=direct status=none
		if ((WK_ODD_BS)); then
			bs=$(odd_bs "$s")
			bounded 120 "dd oflag=direct bs=$bs of $s.bin to the mount" \
				dd if="$o/$s.bin" of="$WK_MNT/dodd-$s.bin" bs="$bs" oflag=direct status=none
		fi
	done
	bounded 120 "sync after writing" sync
	for s in "${WK_SIZES[@]}"; do
		for v in $(wk_variants); do
			compare_files "$o/$s.bin" "$WK_EXPORT/$v-$s.bin"
		done
	done
	(($(mountstats_ops "$WK_MNT" WRITE) > 0)) || fail "no WRITE calls counted on $WK_MNT"
	pass "wrote ${#WK_SIZES[@]} files (0 B to 16 MiB) with cp, dd oflag=direct bs=1M$( ((WK_ODD_BS)) && echo ' and odd bs'): the server's copies match"
}

# wk_read (after a remount): sizes as the client sees them; every file read
# back by cmp, and by dd iflag=direct bs=1M (and the odd block size) into
# WK_LOCAL/back, compared with the originals; READ calls counted.
wk_read() {
	local o=$WK_LOCAL/orig b=$WK_LOCAL/back s bs
	for s in "${WK_SIZES[@]}"; do
		[[ "$(size_of "$WK_MNT/cp-$s.bin")" == "$s" ]] ||
			fail "$WK_MNT/cp-$s.bin has size $(size_of "$WK_MNT/cp-$s.bin") on the client, expected $s"
		compare_files "$o/$s.bin" "$WK_MNT/cp-$s.bin"
		rm -f "$b/"*
		bounded 120 "dd iflag=direct bs=1M of d1m-$s.bin from the mount" \
			dd if="$WK_MNT/d1m-$s.bin" of="$b/d1m-$s.bin" bs=1M iflag=direct status=none
		compare_files "$o/$s.bin" "$b/d1m-$s.bin"
		if ((WK_ODD_BS)); then
			bs=$(odd_bs "$s")
			bounded 120 "dd iflag=direct bs=$bs of dodd-$s.bin from the mount" \
				dd if="$WK_MNT/dodd-$s.bin" of="$b/dodd-$s.bin" bs="$bs" iflag=direct status=none
			compare_files "$o/$s.bin" "$b/dodd-$s.bin"
		fi
	done
	rm -f "$b/"*
	(($(mountstats_ops "$WK_MNT" READ) > 0)) || fail "no READ calls counted on $WK_MNT"
	pass "read back after remount (cached read, dd iflag=direct bs=1M$( ((WK_ODD_BS)) && echo ' and odd bs')): all match the originals"
}

# wk_readdir_prepare: WK_EXPORT/many with 2000 entries with long names, made
# on the server's side (fast); entries 0000, 1234 and 1999 hold 65537, 3
# and 4097 bytes.
wk_readdir_prepare() {
	local i name d=$WK_EXPORT/many
	mkdir "$d" || fail "mkdir $d"
	for ((i = 0; i < 2000; i++)); do
		printf -v name 'entry-%04d-with-a-longer-name-to-fill-the-reply' "$i"
		: >"$d/$name"
	done
	printf 'abc' >"$d/entry-1234-with-a-longer-name-to-fill-the-reply"
	head -c 4097 /dev/urandom >"$d/entry-1999-with-a-longer-name-to-fill-the-reply"
	head -c 65537 /dev/urandom >"$d/entry-0000-with-a-longer-name-to-fill-the-reply"
	log "created 2000 entries in $d"
}

# wk_readdir: ls -l of the 2000 entries: count, names (against the server's
# directory) and four sizes; the listing took several WK_READDIR_OP calls
# (cookies used; replies larger than the inline threshold need Reply chunks).
wk_readdir() {
	local listing n e name size rd0 rd l=$WK_LOCAL
	rd0=$(mountstats_ops "$WK_MNT" "$WK_READDIR_OP")
	listing=$(timeout -k 10 120 ls -l "$WK_MNT/many") || fail "ls -l $WK_MNT/many failed or timed out"
	n=$(awk 'NR > 1' <<<"$listing" | wc -l)
	((n == 2000)) || fail "ls -l of a 2000-entry directory shows $n entries"
	for e in 0000:65537 0001:0 1234:3 1999:4097; do
		name="entry-${e%%:*}-with-a-longer-name-to-fill-the-reply" size=${e#*:}
		awk -v n="$name" -v s="$size" '$NF == n && $5 == s { f = 1 } END { exit !f }' <<<"$listing" ||
			fail "ls -l does not show $name with size $size: $(grep -F -- "$name" <<<"$listing" || echo 'no such line')"
	done
	awk 'NR > 1 { print $NF }' <<<"$listing" | LC_ALL=C sort >"$l/ls-client"
	(cd "$WK_EXPORT/many" && LC_ALL=C ls) >"$l/ls-server"
	if ! cmp -s "$l/ls-client" "$l/ls-server"; then
		fail "ls -l names differ from the server's (client < > server): $(diff "$l/ls-client" "$l/ls-server" | head -n 10)"
	fi
	rd=$(($(mountstats_ops "$WK_MNT" "$WK_READDIR_OP") - ${rd0:-0}))
	log "ls -l of 2000 entries took $rd $WK_READDIR_OP calls"
	((rd >= 2)) || fail "2000 entries listed with $rd $WK_READDIR_OP calls: expected several (cookies unused?)"
	pass "ls -l of a directory with 2000 entries: count, names and sizes match ($rd $WK_READDIR_OP calls)"
}

# wk_namespace: a symlink with a 1000-byte target; mkdir -p, rmdir, rmdir of
# a non-empty directory (ENOTEMPTY); rename in a directory, across
# directories, of a directory, over an existing file; O_EXCL create; a hard
# link; chmod; truncate (grow, shrink, 0); rm.  Leaves link, moved (mode
# 640, 4097 bytes), d2 (mode 711), trunc (WK_LOCAL/trunc-expect) for
# wk_tree_out.
wk_namespace() {
	local m=$WK_MNT x=$WK_EXPORT o=$WK_LOCAL/orig te=$WK_LOCAL/trunc-expect out got now p nl owner emode emtime eatime
	((${#WK_TARGET} == 1000)) || fail "symlink target is ${#WK_TARGET} bytes, expected 1000"
	bounded 30 "ln -s (1000-byte target) on the mount" ln -s "$WK_TARGET" "$m/link"
	[[ "$(readlink "$x/link")" == "$WK_TARGET" ]] ||
		fail "server's symlink target differs: $(readlink "$x/link" | wc -c) bytes"
	pass "symlink created with a 1000-byte target"

	bounded 30 "mkdir -p d1/sub/deeper" mkdir -p "$m/d1/sub/deeper"
	[[ -d "$x/d1/sub/deeper" ]] || fail "mkdir -p d1/sub/deeper: not on the server"
	bounded 30 "rmdir d1/sub/deeper" rmdir "$m/d1/sub/deeper"
	[[ ! -e "$x/d1/sub/deeper" ]] || fail "rmdir d1/sub/deeper: still on the server"
	if timeout -k 10 30 stat "$m/d1/sub/deeper" >/dev/null 2>&1; then
		fail "rmdir d1/sub/deeper: still visible on the client"
	fi
	if out=$(timeout -k 10 30 rmdir "$m/d1" 2>&1); then
		fail "rmdir of the non-empty d1 succeeded"
	fi
	[[ "$out" == *"not empty"* ]] || fail "rmdir of the non-empty d1: '$out', expected 'Directory not empty'"
	[[ -d "$x/d1/sub" ]] || fail "rmdir of the non-empty d1 removed something on the server"
	pass "mkdir -p, rmdir; rmdir of a non-empty directory fails with ENOTEMPTY"

	bounded 60 "cp 4097.bin into d1" cp "$o/4097.bin" "$m/d1/f"
	bounded 30 "mv d1/f d1/g" mv "$m/d1/f" "$m/d1/g"
	[[ -f "$x/d1/g" && ! -e "$x/d1/f" ]] || fail "mv d1/f d1/g: not renamed on the server"
	bounded 30 "mv d1/g moved" mv "$m/d1/g" "$m/moved"
	[[ -f "$x/moved" && ! -e "$x/d1/g" ]] || fail "mv d1/g moved: not moved on the server"
	compare_files "$o/4097.bin" "$x/moved"
	bounded 30 "mv d1 d2" mv "$m/d1" "$m/d2"
	[[ -d "$x/d2/sub" && ! -e "$x/d1" ]] || fail "mv d1 d2: directory not renamed on the server"
	bounded 30 "write x" sh -c "printf 'content of x' >'$m/x'"
	bounded 30 "write y" sh -c "printf 'content of y' >'$m/y'"
	bounded 30 "mv x y (replace)" mv -f "$m/x" "$m/y"
	[[ "$(cat "$x/y")" == "content of x" && ! -e "$x/x" ]] ||
		fail "mv x y over an existing y: server has y='$(cat "$x/y")', x $([[ -e "$x/x" ]] && echo exists || echo gone)"
	pass "rename: in a directory, across directories, a directory, over an existing file"

	# O_EXCL (NFSv3 CREATE EXCLUSIVE, NFSv4.1 OPEN EXCLUSIVE4_1), then the
	# mode and times, which must replace a verifier kept in atime/mtime
	bounded 30 "O_EXCL create of excl" bash -c "set -C; printf new >'$m/excl'"
	if timeout -k 10 30 bash -c "set -C; printf again >'$m/excl'" 2>/dev/null; then
		fail "O_EXCL create of the existing excl succeeded"
	fi
	[[ "$(cat "$x/excl")" == new ]] || fail "O_EXCL create: server's excl holds '$(cat "$x/excl")', expected 'new'"
	read -r emode emtime eatime <<<"$(stat -c '%a %Y %X' "$x/excl")"
	now=$(date +%s)
	[[ "$emode" == 644 ]] || fail "O_EXCL create: server's excl has mode $emode, expected 644 (umask 022)"
	# both times hold the verifier until the client's SETATTR (NFSv4.1:
	# only when OPEN's attrset names them); a WRITE replaces neither atime
	# nor, on CephFS, an mtime in the future
	((emtime > now - 600 && emtime <= now + 5)) ||
		fail "O_EXCL create: server's excl has mtime $(date -d "@$emtime"), now is $(date -d "@$now") (verifier left in the times?)"
	((eatime > now - 600 && eatime <= now + 5)) ||
		fail "O_EXCL create: server's excl has atime $(date -d "@$eatime"), now is $(date -d "@$now") (verifier left in the times?)"
	bounded 30 "rm excl" rm "$m/excl"
	pass "O_EXCL create: created once, refused the second time, mode, mtime and atime set"

	bounded 30 "ln moved d2/hard" ln "$m/moved" "$m/d2/hard"
	for p in "$m/moved" "$m/d2/hard" "$x/moved" "$x/d2/hard"; do
		nl=$(timeout -k 10 30 stat -c %h "$p") || fail "stat $p"
		[[ "$nl" == 2 ]] || fail "hard link: $p has link count $nl, expected 2"
	done
	[[ "$(stat -c %i "$x/moved")" == "$(stat -c %i "$x/d2/hard")" ]] ||
		fail "hard link: moved and d2/hard are different inodes on the server"
	[[ "$(stat -c %i "$m/moved")" == "$(stat -c %i "$m/d2/hard")" ]] ||
		fail "hard link: moved and d2/hard have different fileids on the client"
	compare_files "$o/4097.bin" "$m/d2/hard"
	pass "hard link: link count 2 on both names (client and server), same inode"

	bounded 30 "chmod 640 moved" chmod 640 "$m/moved"
	[[ "$(stat -c %a "$x/moved")" == 640 ]] || fail "chmod 640 moved: server mode is $(stat -c %a "$x/moved")"
	bounded 30 "chmod 711 d2" chmod 0711 "$m/d2"
	[[ "$(stat -c %a "$x/d2")" == 711 ]] || fail "chmod 711 d2: server mode is $(stat -c %a "$x/d2")"
	owner=$(stat -c %u:%g "$x/moved")
	[[ "$owner" == 0:0 ]] || fail "with no root squash the client's root created moved as $owner on the server, expected 0:0"
	pass "chmod of a file and a directory: modes visible on the server; root not squashed"

	bounded 60 "cp 65537.bin to trunc" cp "$o/65537.bin" "$m/trunc"
	cp "$o/65537.bin" "$te"
	truncate -s 100000 "$te"
	bounded 30 "truncate -s 100000 (grow)" truncate -s 100000 "$m/trunc"
	[[ "$(size_of "$m/trunc")" == 100000 ]] || fail "truncate grow: client size $(size_of "$m/trunc"), expected 100000"
	compare_files "$te" "$x/trunc"
	compare_files "$te" "$m/trunc"
	truncate -s 4095 "$te"
	bounded 30 "truncate -s 4095 (shrink)" truncate -s 4095 "$m/trunc"
	[[ "$(size_of "$m/trunc")" == 4095 ]] || fail "truncate shrink: client size $(size_of "$m/trunc"), expected 4095"
	compare_files "$te" "$x/trunc"
	compare_files "$te" "$m/trunc"
	cmp -s -n 4095 "$o/65537.bin" "$te" || fail "test bug: expected shrink content"
	bounded 30 "cp 4097.bin to trunc0" cp "$o/4097.bin" "$m/trunc0"
	bounded 30 "truncate -s 0" truncate -s 0 "$m/trunc0"
	[[ "$(size_of "$x/trunc0")" == 0 ]] || fail "truncate -s 0: server size $(size_of "$x/trunc0")"
	pass "truncate: grow to 100000 (zero filled), shrink to 4095, to 0: sizes and contents match"

	bounded 30 "rm d2/hard" rm "$m/d2/hard"
	[[ ! -e "$x/d2/hard" ]] || fail "rm d2/hard: still on the server"
	[[ "$(stat -c %h "$x/moved")" == 1 ]] || fail "after rm d2/hard, moved has link count $(stat -c %h "$x/moved") on the server"
	bounded 30 "rm trunc0 y" rm "$m/trunc0" "$m/y"
	[[ ! -e "$x/trunc0" && ! -e "$x/y" ]] || fail "rm trunc0 y: still on the server"
	pass "rm: names gone on the server, link count back to 1"
}

# wk_tree_in: cp -a of WK_LOCAL/tree into the mount (WK_MNT/tree): diff -r,
# and the manifests (path, type, mode, owner, size, mtime, symlink target,
# sha256) on the client and on the server equal the original's.
wk_tree_in() {
	local t=$WK_LOCAL/tree l=$WK_LOCAL out
	bounded 120 "cp -a $t into the mount" cp -a "$t" "$WK_MNT/tree"
	if ! out=$(timeout -k 10 120 diff -r --no-dereference "$t" "$WK_MNT/tree" 2>&1); then
		fail "diff -r of the tree and its copy on the mount: $(head -n 10 <<<"$out")"
	fi
	tree_manifest "$WK_MNT/tree" >"$l/manifest-mnt" || fail "walking $WK_MNT/tree"
	if ! out=$(diff "$l/manifest-orig" "$l/manifest-mnt"); then
		fail "cp -a in: tree on the client differs (path type mode owner size mtime / sha256; < original > client): $(head -n 12 <<<"$out")"
	fi
	tree_manifest "$WK_EXPORT/tree" >"$l/manifest-srv" || fail "walking $WK_EXPORT/tree"
	if ! out=$(diff "$l/manifest-orig" "$l/manifest-srv"); then
		fail "cp -a in: tree on the server differs (< original > server): $(head -n 12 <<<"$out")"
	fi
	pass "cp -a of a tree into the mount: diff -r, modes, owner, mtimes, symlinks and sha256 match (client and server)"
}

# wk_tree_out (after a remount): the 1000-byte symlink read back (READLINK),
# what wk_namespace left (modes, link count, sizes, the truncated contents,
# d1 gone); cp -a of the tree out of the mount (WK_LOCAL/tree-back, which
# must not exist) equal to the original.
wk_tree_out() {
	local m=$WK_MNT l=$WK_LOCAL got out
	got=$(timeout -k 10 30 readlink "$m/link") || fail "readlink $m/link"
	[[ "$got" == "$WK_TARGET" ]] || fail "readlink of the 1000-byte symlink gives ${#got} bytes, not the target"
	timeout -k 10 30 ls -l "$m/link" | grep -qF -- "-> $WK_TARGET" || fail "ls -l link does not show the 1000-byte target"
	(($(mountstats_ops "$m" READLINK) > 0)) || fail "no READLINK call counted after the remount"
	pass "symlink with a 1000-byte target: readlink after a remount gives it back (READLINK)"

	got=$(timeout -k 10 30 stat -c '%a %h %s' "$m/moved") || fail "stat $m/moved"
	[[ "$got" == "640 1 4097" ]] || fail "after remount moved is '$got' (mode links size), expected '640 1 4097'"
	got=$(timeout -k 10 30 stat -c %a "$m/d2") || fail "stat $m/d2"
	[[ "$got" == 711 ]] || fail "after remount d2 has mode $got, expected 711"
	compare_files "$l/trunc-expect" "$m/trunc"
	if timeout -k 10 30 stat "$m/d1" >/dev/null 2>&1; then
		fail "after remount d1 (renamed to d2) still exists"
	fi
	pass "after remount: modes, link counts, sizes and truncated contents as left"

	[[ ! -e "$l/tree-back" ]] || fail "test bug: $l/tree-back exists before cp -a out"
	bounded 120 "cp -a the tree out of the mount" cp -a "$m/tree" "$l/tree-back"
	if ! out=$(timeout -k 10 120 diff -r --no-dereference "$l/tree" "$l/tree-back" 2>&1); then
		fail "diff -r of the tree and the copy taken out of the mount: $(head -n 10 <<<"$out")"
	fi
	tree_manifest "$l/tree-back" >"$l/manifest-back"
	if ! out=$(diff "$l/manifest-orig" "$l/manifest-back"); then
		fail "cp -a out: tree differs (< original > copied back): $(head -n 12 <<<"$out")"
	fi
	pass "cp -a of the tree out of the mount: diff -r, modes, owner, mtimes, symlinks and sha256 match"
}

# wk_rm: rm -rf of the 2000-entry directory (READDIR while entries
# disappear) and of the tree; both gone on the server.
wk_rm() {
	bounded 300 "rm -rf many (2000 entries) on the mount" rm -rf "$WK_MNT/many"
	[[ ! -e "$WK_EXPORT/many" ]] || fail "rm -rf many: $(find "$WK_EXPORT/many" -mindepth 1 | wc -l) entries left on the server"
	bounded 60 "rm -rf tree" rm -rf "$WK_MNT/tree"
	[[ ! -e "$WK_EXPORT/tree" ]] || fail "rm -rf tree: still on the server"
	pass "rm -rf of the 2000-entry directory and of the tree"
}
