#!/usr/bin/env bash
# kernel-client-interop: the Linux kernel NFSv3/RDMA client against our server
# (rpcrdma-nfsd --no-root-squash --stats --threads 4), everything compared
# byte for byte (issue 4):
#   - files of 0, 1, 4095, 4097, 65537, 1 MiB + 3 and 16 MiB written with cp,
#     with dd oflag=direct bs=1M and with dd oflag=direct and an odd block
#     size (4097; 65537 for 16 MiB, to keep it to 256 calls); after a remount
#     and a cache drop read back with cat/cmp, dd iflag=direct bs=1M and
#     dd iflag=direct with the odd block size; also compared with the server's
#     copies;
#   - ls -l of a directory with 2000 entries (READDIRPLUS over several calls,
#     cookies, Reply chunks): count, names, a few sizes; rm -rf of it;
#   - a symlink with a 1000-byte target (READLINK after a remount);
#   - mkdir, rmdir (and of a non-empty directory), rename of files and
#     directories (also over an existing file), hard link (nlink 2 on both
#     names, on the client and the server), chmod (mode on the server),
#     truncate (grow, shrink, 0), rm;
#   - cp -a of a small tree (directories, files, modes, an owner, mtimes, a
#     symlink) in and out, compared with diff -r and by sha256;
# then unmount: the server's final counters show every pool back at its
# baseline and no RDMA_ERROR sent; SIGTERM exits with status 0.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
vm_require_guest
umask 022

NFSD=$(rpcrdma_bin rpcrdma-nfsd)
EXPORT=$SCRATCH/export
ORIG=/tmp/orig
BACK=/tmp/back
MNT=/mnt/x
SLOG=$SCRATCH/rpcrdma-nfsd.log
SIZES=(0 1 4095 4097 65537 1048579 16777216)
MOPTS=mountport=$MOUNT_PORT,mountproto=tcp

# mountstats_dump MNT: the whole /proc/self/mountstats block of MNT (transport
# and per-procedure counters): which NFS procedures ran, retransmitted, erred.
mountstats_dump() {
	echo "---- /proc/self/mountstats for $1 ----"
	awk -v m="$1" '$1 == "device" { on = ($5 == m) } on' /proc/self/mountstats
}
on_failure "mountstats_dump '$MNT'"

mount_export() {
	kmount "$SERVER_ADDR:$EXPORT" "$MNT" "$MOPTS"
	local xprt
	xprt=$(mountstats_xprt "$MNT")
	[[ "$xprt" == "xprt:"*"rdma"* ]] || fail "mount $MNT is not over RDMA: '$xprt'"
}

# remount: unmount, drop the client's caches, mount again: what the client
# sees next comes from the server.
remount() {
	kumount "$MNT"
	drop_caches
	mount_export
}

# ops_summary: the non-zero per-procedure call counts of the mount, one line.
ops_summary() {
	awk -v m="$MNT" '$1 == "device" { on = ($5 == m); next }
		on && /^[ \t]+[A-Z_]+: [0-9]+ / && $2 > 0 { printf "%s%s", sep, $1 $2; sep = " " }
		END { print "" }' /proc/self/mountstats
}

# odd_bs SIZE: the odd block size for direct I/O on a file of SIZE bytes:
# 4097 (unaligned offsets, requests straddling pages), 65537 for 16 MiB.
odd_bs() { if (($1 >= 16777216)); then echo 65537; else echo 4097; fi; }

# size_of PATH: st_size, bounded (PATH may be on the mount).
size_of() { timeout -k 10 30 stat -c %s -- "$1" || fail "stat $1"; }

# ---------------------------------------------------------------- setup
mkdir -p "$ORIG" "$BACK"
make_test_files "$ORIG"
head -c 65537 /dev/urandom >"$ORIG/65537.bin"
mkdir -p "$EXPORT"
rnfsd_start "$NFSD" "$EXPORT" "$SLOG" --no-root-squash --stats --threads 4 \
	--handle-key "$SCRATCH/handle.key"

# ---------------------------------------------------------------- 1. write
mount_export
pass "kernel client mounted $SERVER_ADDR:$EXPORT over RDMA"
for s in "${SIZES[@]}"; do
	bounded 120 "cp $s.bin to the mount" cp "$ORIG/$s.bin" "$MNT/cp-$s.bin"
	bounded 120 "dd oflag=direct bs=1M of $s.bin to the mount" \
		dd if="$ORIG/$s.bin" of="$MNT/d1m-$s.bin" bs=1M oflag=direct status=none
	bs=$(odd_bs "$s")
	bounded 120 "dd oflag=direct bs=$bs of $s.bin to the mount" \
		dd if="$ORIG/$s.bin" of="$MNT/dodd-$s.bin" bs="$bs" oflag=direct status=none
done
bounded 120 "sync after writing" sync
for s in "${SIZES[@]}"; do
	for v in cp d1m dodd; do
		compare_files "$ORIG/$s.bin" "$EXPORT/$v-$s.bin"
	done
done
log "$(mountstats_xprt "$MNT")"
log "ops: $(ops_summary)"
(($(mountstats_ops "$MNT" WRITE) > 0)) || fail "no WRITE calls counted on $MNT"
pass "wrote ${#SIZES[@]} files (0 B to 16 MiB) with cp, dd oflag=direct bs=1M and odd bs: the server's copies match"

# ---------------------------------------------------------------- 2. read back
remount
for s in "${SIZES[@]}"; do
	[[ "$(size_of "$MNT/cp-$s.bin")" == "$s" ]] ||
		fail "$MNT/cp-$s.bin has size $(size_of "$MNT/cp-$s.bin") on the client, expected $s"
	compare_files "$ORIG/$s.bin" "$MNT/cp-$s.bin"
	rm -f "$BACK/"*
	bounded 120 "dd iflag=direct bs=1M of d1m-$s.bin from the mount" \
		dd if="$MNT/d1m-$s.bin" of="$BACK/d1m-$s.bin" bs=1M iflag=direct status=none
	compare_files "$ORIG/$s.bin" "$BACK/d1m-$s.bin"
	bs=$(odd_bs "$s")
	bounded 120 "dd iflag=direct bs=$bs of dodd-$s.bin from the mount" \
		dd if="$MNT/dodd-$s.bin" of="$BACK/dodd-$s.bin" bs="$bs" iflag=direct status=none
	compare_files "$ORIG/$s.bin" "$BACK/dodd-$s.bin"
done
rm -f "$BACK/"*
(($(mountstats_ops "$MNT" READ) > 0)) || fail "no READ calls counted on $MNT"
log "ops: $(ops_summary)"
pass "read back after remount (cached read, dd iflag=direct bs=1M and odd bs): all match the originals"

# ---------------------------------------------------------------- 3. 2000 entries
# Made on the server (fast), listed by the client: READDIRPLUS over several
# calls with cookies; replies larger than the inline threshold need Reply chunks.
mkdir "$EXPORT/many"
for ((i = 0; i < 2000; i++)); do
	printf -v name 'entry-%04d-with-a-longer-name-to-fill-the-reply' "$i"
	: >"$EXPORT/many/$name"
done
log "created 2000 entries in $EXPORT/many"
printf 'abc' >"$EXPORT/many/entry-1234-with-a-longer-name-to-fill-the-reply"
head -c 4097 /dev/urandom >"$EXPORT/many/entry-1999-with-a-longer-name-to-fill-the-reply"
head -c 65537 /dev/urandom >"$EXPORT/many/entry-0000-with-a-longer-name-to-fill-the-reply"
rdp0=$(mountstats_ops "$MNT" READDIRPLUS)
listing=$(timeout -k 10 120 ls -l "$MNT/many") || fail "ls -l $MNT/many failed or timed out"
n=$(awk 'NR > 1' <<<"$listing" | wc -l)
((n == 2000)) || fail "ls -l of a 2000-entry directory shows $n entries"
for e in 0000:65537 0001:0 1234:3 1999:4097; do
	name="entry-${e%%:*}-with-a-longer-name-to-fill-the-reply" size=${e#*:}
	awk -v n="$name" -v s="$size" '$NF == n && $5 == s { f = 1 } END { exit !f }' <<<"$listing" ||
		fail "ls -l does not show $name with size $size: $(grep -F -- "$name" <<<"$listing" || echo 'no such line')"
done
awk 'NR > 1 { print $NF }' <<<"$listing" | LC_ALL=C sort >/tmp/ls-client
(cd "$EXPORT/many" && LC_ALL=C ls) >/tmp/ls-server
if ! cmp -s /tmp/ls-client /tmp/ls-server; then
	fail "ls -l names differ from the server's (client < > server): $(diff /tmp/ls-client /tmp/ls-server | head -n 10)"
fi
rdp=$(($(mountstats_ops "$MNT" READDIRPLUS) - rdp0))
log "ls -l of 2000 entries took $rdp READDIRPLUS calls"
((rdp >= 2)) || fail "2000 entries listed with $rdp READDIRPLUS calls: expected several (cookies unused?)"
pass "ls -l of a directory with 2000 entries: count, names and sizes match ($rdp READDIRPLUS calls)"

# ---------------------------------------------------------------- 4. symlink
target=$(for ((i = 0; i < 500; i++)); do printf 'd/'; done)
((${#target} == 1000)) || fail "symlink target is ${#target} bytes, expected 1000"
bounded 30 "ln -s (1000-byte target) on the mount" ln -s "$target" "$MNT/link"
[[ "$(readlink "$EXPORT/link")" == "$target" ]] ||
	fail "server's symlink target differs: $(readlink "$EXPORT/link" | wc -c) bytes"

# ---------------------------------------------------------------- 5. namespace
bounded 30 "mkdir -p d1/sub/deeper" mkdir -p "$MNT/d1/sub/deeper"
[[ -d "$EXPORT/d1/sub/deeper" ]] || fail "mkdir -p d1/sub/deeper: not on the server"
bounded 30 "rmdir d1/sub/deeper" rmdir "$MNT/d1/sub/deeper"
[[ ! -e "$EXPORT/d1/sub/deeper" ]] || fail "rmdir d1/sub/deeper: still on the server"
timeout -k 10 30 stat "$MNT/d1/sub/deeper" >/dev/null 2>&1 && fail "rmdir d1/sub/deeper: still visible on the client"
if out=$(timeout -k 10 30 rmdir "$MNT/d1" 2>&1); then
	fail "rmdir of the non-empty d1 succeeded"
fi
[[ "$out" == *"not empty"* ]] || fail "rmdir of the non-empty d1: '$out', expected 'Directory not empty'"
[[ -d "$EXPORT/d1/sub" ]] || fail "rmdir of the non-empty d1 removed something on the server"
pass "mkdir -p, rmdir; rmdir of a non-empty directory fails with ENOTEMPTY"

# rename: in a directory, across directories, a directory, over an existing file
bounded 60 "cp 4097.bin into d1" cp "$ORIG/4097.bin" "$MNT/d1/f"
bounded 30 "mv d1/f d1/g" mv "$MNT/d1/f" "$MNT/d1/g"
[[ -f "$EXPORT/d1/g" && ! -e "$EXPORT/d1/f" ]] || fail "mv d1/f d1/g: not renamed on the server"
bounded 30 "mv d1/g moved" mv "$MNT/d1/g" "$MNT/moved"
[[ -f "$EXPORT/moved" && ! -e "$EXPORT/d1/g" ]] || fail "mv d1/g moved: not moved on the server"
compare_files "$ORIG/4097.bin" "$EXPORT/moved"
bounded 30 "mv d1 d2" mv "$MNT/d1" "$MNT/d2"
[[ -d "$EXPORT/d2/sub" && ! -e "$EXPORT/d1" ]] || fail "mv d1 d2: directory not renamed on the server"
bounded 30 "write x" sh -c "printf 'content of x' >'$MNT/x'"
bounded 30 "write y" sh -c "printf 'content of y' >'$MNT/y'"
bounded 30 "mv x y (replace)" mv -f "$MNT/x" "$MNT/y"
[[ "$(cat "$EXPORT/y")" == "content of x" && ! -e "$EXPORT/x" ]] ||
	fail "mv x y over an existing y: server has y='$(cat "$EXPORT/y")', x $([[ -e "$EXPORT/x" ]] && echo exists || echo gone)"
pass "rename: in a directory, across directories, a directory, over an existing file"

# exclusive create (O_EXCL: NFS3 CREATE EXCLUSIVE, then SETATTR of mode and
# times, which must replace the verifier the server kept in atime/mtime)
bounded 30 "O_EXCL create of excl" bash -c "set -C; printf new >'$MNT/excl'"
if timeout -k 10 30 bash -c "set -C; printf again >'$MNT/excl'" 2>/dev/null; then
	fail "O_EXCL create of the existing excl succeeded"
fi
[[ "$(cat "$EXPORT/excl")" == new ]] || fail "O_EXCL create: server's excl holds '$(cat "$EXPORT/excl")', expected 'new'"
got=$(stat -c '%a %Y' "$EXPORT/excl")
now=$(date +%s)
[[ "${got% *}" == 644 ]] || fail "O_EXCL create: server's excl has mode ${got% *}, expected 644 (umask 022)"
((${got#* } > now - 600 && ${got#* } <= now + 5)) ||
	fail "O_EXCL create: server's excl has mtime $(date -d "@${got#* }"), now is $(date -d "@$now") (verifier left in the times?)"
bounded 30 "rm excl" rm "$MNT/excl"
pass "O_EXCL create: created once, refused the second time, mode and mtime set"

# hard link
bounded 30 "ln moved d2/hard" ln "$MNT/moved" "$MNT/d2/hard"
for p in "$MNT/moved" "$MNT/d2/hard" "$EXPORT/moved" "$EXPORT/d2/hard"; do
	nl=$(timeout -k 10 30 stat -c %h "$p") || fail "stat $p"
	[[ "$nl" == 2 ]] || fail "hard link: $p has link count $nl, expected 2"
done
[[ "$(stat -c %i "$EXPORT/moved")" == "$(stat -c %i "$EXPORT/d2/hard")" ]] ||
	fail "hard link: moved and d2/hard are different inodes on the server"
[[ "$(stat -c %i "$MNT/moved")" == "$(stat -c %i "$MNT/d2/hard")" ]] ||
	fail "hard link: moved and d2/hard have different fileids on the client"
compare_files "$ORIG/4097.bin" "$MNT/d2/hard"
pass "hard link: link count 2 on both names (client and server), same inode"

# chmod
bounded 30 "chmod 640 moved" chmod 640 "$MNT/moved"
[[ "$(stat -c %a "$EXPORT/moved")" == 640 ]] || fail "chmod 640 moved: server mode is $(stat -c %a "$EXPORT/moved")"
bounded 30 "chmod 711 d2" chmod 0711 "$MNT/d2"
[[ "$(stat -c %a "$EXPORT/d2")" == 711 ]] || fail "chmod 711 d2: server mode is $(stat -c %a "$EXPORT/d2")"
owner=$(stat -c %u:%g "$EXPORT/moved")
[[ "$owner" == 0:0 ]] || fail "with --no-root-squash the client's root created moved as $owner on the server, expected 0:0"
pass "chmod of a file and a directory: modes visible on the server; root not squashed"

# truncate: grow (zeros), shrink, 0
bounded 60 "cp 65537.bin to trunc" cp "$ORIG/65537.bin" "$MNT/trunc"
cp "$ORIG/65537.bin" /tmp/trunc-expect
truncate -s 100000 /tmp/trunc-expect
bounded 30 "truncate -s 100000 (grow)" truncate -s 100000 "$MNT/trunc"
[[ "$(size_of "$MNT/trunc")" == 100000 ]] || fail "truncate grow: client size $(size_of "$MNT/trunc"), expected 100000"
compare_files /tmp/trunc-expect "$EXPORT/trunc"
compare_files /tmp/trunc-expect "$MNT/trunc"
truncate -s 4095 /tmp/trunc-expect
bounded 30 "truncate -s 4095 (shrink)" truncate -s 4095 "$MNT/trunc"
[[ "$(size_of "$MNT/trunc")" == 4095 ]] || fail "truncate shrink: client size $(size_of "$MNT/trunc"), expected 4095"
compare_files /tmp/trunc-expect "$EXPORT/trunc"
compare_files /tmp/trunc-expect "$MNT/trunc"
cmp -s -n 4095 "$ORIG/65537.bin" /tmp/trunc-expect || fail "test bug: expected shrink content"
bounded 30 "cp 4097.bin to trunc0" cp "$ORIG/4097.bin" "$MNT/trunc0"
bounded 30 "truncate -s 0" truncate -s 0 "$MNT/trunc0"
[[ "$(size_of "$EXPORT/trunc0")" == 0 ]] || fail "truncate -s 0: server size $(size_of "$EXPORT/trunc0")"
pass "truncate: grow to 100000 (zero filled), shrink to 4095, to 0: sizes and contents match"

# rm
bounded 30 "rm d2/hard" rm "$MNT/d2/hard"
[[ ! -e "$EXPORT/d2/hard" ]] || fail "rm d2/hard: still on the server"
[[ "$(stat -c %h "$EXPORT/moved")" == 1 ]] || fail "after rm d2/hard, moved has link count $(stat -c %h "$EXPORT/moved") on the server"
bounded 30 "rm trunc0 y" rm "$MNT/trunc0" "$MNT/y"
[[ ! -e "$EXPORT/trunc0" && ! -e "$EXPORT/y" ]] || fail "rm trunc0 y: still on the server"
pass "rm: names gone on the server, link count back to 1"

# ---------------------------------------------------------------- 6. cp -a in
TREE=/tmp/tree
mkdir -p "$TREE/a/b/c" "$TREE/empty" "$TREE/a/private"
head -c 5000 /dev/urandom >"$TREE/a/b/c/deep.bin"
head -c 70001 /dev/urandom >"$TREE/a/b/mid.bin"
: >"$TREE/zero"
printf 'hello\n' >"$TREE/a/hello.txt"
cp "$ORIG/1048579.bin" "$TREE/a/big.bin"
printf '#!/bin/sh\necho hi\n' >"$TREE/a/run.sh"
chmod 755 "$TREE/a/run.sh"
chmod 600 "$TREE/a/hello.txt"
chmod 700 "$TREE/a/private"
head -c 123 /dev/urandom >"$TREE/a/private/owned"
chown 1000:1000 "$TREE/a/private/owned"
ln -s b/c/deep.bin "$TREE/a/link-to-deep"
ln -s "$target" "$TREE/long-link"
touch -d '2001-02-03 04:05:06.123456789' "$TREE/a/b/mid.bin" "$TREE/a/b/c"
touch -d '2011-12-13 14:15:16.5' "$TREE/zero" "$TREE/a/private"
tree_manifest "$TREE" >/tmp/manifest-orig
bounded 120 "cp -a $TREE into the mount" cp -a "$TREE" "$MNT/tree"
if ! out=$(timeout -k 10 120 diff -r --no-dereference "$TREE" "$MNT/tree" 2>&1); then
	fail "diff -r of the tree and its copy on the mount: $(head -n 10 <<<"$out")"
fi
tree_manifest "$MNT/tree" >/tmp/manifest-mnt || fail "walking $MNT/tree"
if ! out=$(diff /tmp/manifest-orig /tmp/manifest-mnt); then
	fail "cp -a in: tree on the client differs (path type mode owner size mtime / sha256; < original > client): $(head -n 12 <<<"$out")"
fi
tree_manifest "$EXPORT/tree" >/tmp/manifest-srv
if ! out=$(diff /tmp/manifest-orig /tmp/manifest-srv); then
	fail "cp -a in: tree on the server differs (< original > server): $(head -n 12 <<<"$out")"
fi
pass "cp -a of a tree into the mount: diff -r, modes, owner, mtimes, symlinks and sha256 match (client and server)"
log "ops: $(ops_summary)"

# ---------------------------------------------------------------- 7. after a remount
remount
got=$(timeout -k 10 30 readlink "$MNT/link") || fail "readlink $MNT/link"
[[ "$got" == "$target" ]] || fail "readlink of the 1000-byte symlink gives ${#got} bytes, not the target"
timeout -k 10 30 ls -l "$MNT/link" | grep -qF -- "-> $target" || fail "ls -l link does not show the 1000-byte target"
(($(mountstats_ops "$MNT" READLINK) > 0)) || fail "no READLINK call counted after the remount"
pass "symlink with a 1000-byte target: readlink after a remount gives it back (READLINK)"

got=$(timeout -k 10 30 stat -c '%a %h %s' "$MNT/moved") || fail "stat $MNT/moved"
[[ "$got" == "640 1 4097" ]] || fail "after remount moved is '$got' (mode links size), expected '640 1 4097'"
[[ "$(timeout -k 10 30 stat -c %a "$MNT/d2")" == 711 ]] || fail "after remount d2 has mode $(stat -c %a "$MNT/d2")"
compare_files /tmp/trunc-expect "$MNT/trunc"
timeout -k 10 30 stat "$MNT/d1" >/dev/null 2>&1 && fail "after remount d1 (renamed to d2) still exists"
pass "after remount: modes, link counts, sizes and truncated contents as left"

# cp -a out
bounded 120 "cp -a the tree out of the mount" cp -a "$MNT/tree" /tmp/tree-back
if ! out=$(timeout -k 10 120 diff -r --no-dereference "$TREE" /tmp/tree-back 2>&1); then
	fail "diff -r of the tree and the copy taken out of the mount: $(head -n 10 <<<"$out")"
fi
tree_manifest /tmp/tree-back >/tmp/manifest-back
if ! out=$(diff /tmp/manifest-orig /tmp/manifest-back); then
	fail "cp -a out: tree differs (< original > copied back): $(head -n 12 <<<"$out")"
fi
pass "cp -a of the tree out of the mount: diff -r, modes, owner, mtimes, symlinks and sha256 match"

# rm -rf of the big directory: READDIR(PLUS) while entries disappear
bounded 300 "rm -rf many (2000 entries) on the mount" rm -rf "$MNT/many"
[[ ! -e "$EXPORT/many" ]] || fail "rm -rf many: $(find "$EXPORT/many" -mindepth 1 | wc -l) entries left on the server"
bounded 60 "rm -rf tree" rm -rf "$MNT/tree"
[[ ! -e "$EXPORT/tree" ]] || fail "rm -rf tree: still on the server"
pass "rm -rf of the 2000-entry directory and of the tree"
log "$(mountstats_xprt "$MNT")"
log "ops: $(ops_summary)"
kumount "$MNT"
pass "unmounted"

# ---------------------------------------------------------------- 8. server exit
rnfsd_term 30
rnfsd_check_final_stats
for k in read_chunks replies_write_chunk replies_reply_chunk; do
	(($(rnfsd_stat $k) > 0)) || fail "server counter $k is 0: that path was never used"
done
pass "server used Read chunks (WRITE), Write chunks (READ) and Reply chunks (READDIRPLUS/READLINK)"
