#!/bin/bash
# SPDX-License-Identifier: MIT
#
# vm/sync-export: commit_metadata on a disk file system (docs/nfs3.md,
# "sync and async").  rpcrdma-nfsd exports a directory of an ext4 file
# system on a loop device; the kernel client creates, links, renames and
# removes names in it.  With the default (sync) every namespace call the
# client sent (CREATE, MKDIR, SYMLINK, MKNOD, REMOVE, RMDIR, RENAME, LINK,
# counted by the client in /proc/self/mountstats), and each SETATTR (of the
# files the exclusive CREATEs made), made the server fsync one directory or
# file (two for a RENAME between directories; none here), counted
# by the server ("N committed" at exit), and none of those calls was served
# on the transport thread (transport_defers); with --async none is
# committed.  What the client did is checked on the server's disk.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
vm_require_guest
umask 022

NFSD=$(rpcrdma_bin rpcrdma-nfsd)
IMG=$SCRATCH/sync-disk.img
DISK=/srv/sync-disk
MNT=/mnt/sync
N=40
MOPTS=mountport=$MOUNT_PORT,mountproto=tcp
NSOPS="CREATE MKDIR SYMLINK MKNOD REMOVE RMDIR RENAME LINK SETATTR"

command -v mkfs.ext4 >/dev/null || skip "no mkfs.ext4 in the guest"
# the guest kernel's modules (vm_kmod's, without failing: the mount says)
/sbin/modprobe ${RPCRDMA_KMOD_DIR:+-d "$RPCRDMA_KMOD_DIR"} -a loop ext4 2>/dev/null || true
truncate -s 256M "$IMG" || fail "truncate $IMG"
mkfs.ext4 -q -F "$IMG" || fail "mkfs.ext4 $IMG"
mkdir -p "$DISK"
mount -o loop "$IMG" "$DISK" || skip "cannot mount an ext4 image on a loop device"
at_exit "umount '$DISK'"

# the client's work, in one process: names made, renamed, linked, removed
cat >"$SCRATCH/names.py" <<'EOF'
import os, sys
d, n = sys.argv[1], int(sys.argv[2])
os.mkdir(d)
names = [os.path.join(d, "f%03d" % i) for i in range(n)]
for p in names:
    os.close(os.open(p, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644))
for p in names:
    os.rename(p, p + ".r")
os.link(names[0] + ".r", os.path.join(d, "hard"))
os.symlink("f000.r", os.path.join(d, "soft"))
os.mkfifo(os.path.join(d, "fifo"))
for p in names[1:]:
    os.unlink(p + ".r")
os.mkdir(os.path.join(d, "sub"))
EOF

# namespace_calls MNT: the client's count of namespace calls on MNT
namespace_calls() {
	local op total=0 n
	for op in $NSOPS; do
		n=$(mountstats_ops "$1" "$op")
		total=$((total + ${n:-0}))
	done
	echo "$total"
}

# committed LOG: the server's count of directories committed, at exit
committed() {
	sed -n 's/.*directory cache: .*, \([0-9]*\) committed$/\1/p' "$1" | tail -n 1
}

run_mode() { # MODE [ARGS...]
	local mode=$1 export=$DISK/$1 slog=$SCRATCH/rnfsd-$1.log calls got defers
	shift
	mkdir -p "$export"
	rnfsd_start "$NFSD" "$export" "$slog" --no-root-squash --stats --threads 4 \
		--handle-key "$SCRATCH/handle.key" "$@"
	kmount "$SERVER_ADDR:$export" "$MNT" "$MOPTS"
	bounded 120 "names on $MNT" python3 "$SCRATCH/names.py" "$MNT/d" "$N"
	calls=$(namespace_calls "$MNT")
	kumount "$MNT"
	rnfsd_term
	got=$(committed "$slog")
	defers=$(rnfsd_stat transport_defers)
	log "$mode: $calls namespace calls, $got committed, $defers calls deferred"
	# what the client made is on the server's disk
	[[ -f $export/d/f000.r && -f $export/d/hard && -L $export/d/soft &&
	   -p $export/d/fifo && -d $export/d/sub && ! -e $export/d/f001.r ]] ||
		fail "$mode: the server's directory is not what the client made: $(ls -la "$export/d")"
	[[ $(stat -c %h "$export/d/hard") == 2 ]] || fail "$mode: the link count of d/hard is not 2"
	# MKDIR d, N CREATEs (exclusive: each followed by a SETATTR of the new
	# file), N RENAMEs, LINK, SYMLINK, MKNOD, N - 1 REMOVEs, MKDIR sub
	((calls == 4 * N + 4)) || fail "$mode: the client sent $calls namespace calls and SETATTRs, expected $((4 * N + 4))"
	if [[ $mode == sync ]]; then
		[[ $got == "$calls" ]] ||
			fail "sync: $got committed for $calls namespace calls and SETATTRs"
		((defers >= calls)) ||
			fail "sync: $defers calls deferred to workers, fewer than the $calls namespace calls"
		pass "sync: each of the $calls namespace calls and SETATTRs committed before the reply, on a worker"
	else
		[[ $got == 0 ]] || fail "async: $got directories committed, expected none"
		pass "async: $calls namespace calls and SETATTRs, nothing committed"
	fi
}

run_mode sync
run_mode async --async
