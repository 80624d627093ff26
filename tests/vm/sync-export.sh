#!/bin/bash
# SPDX-License-Identifier: MIT
#
# vm/sync-export: commit_metadata on a disk file system (docs/nfs3.md,
# "sync and async"; docs/nfs4.md).  rpcrdma-nfsd exports a directory of an
# ext4 file system on a loop device; the kernel client creates, links,
# renames and removes names in it, over NFSv3 and then over NFSv4.1
# (rpcrdma-nfsd --nfs4, mounted vers=4.1).  With the default (sync) every
# namespace call the client sent (NFSv3: CREATE, MKDIR, SYMLINK, MKNOD,
# REMOVE, RMDIR, RENAME, LINK; NFSv4.1: OPEN with create, CREATE, SYMLINK,
# REMOVE, RENAME, LINK; counted by the client in /proc/self/mountstats),
# and each SETATTR (of the files the exclusive creates made, a chmod,
# a truncate), made the server fsync one directory or file (two for a RENAME between
# directories; none here; a new regular file or directory is fsynced
# itself too, before its directory), counted by the server ("N committed"
# at exit),
# and none of the NFSv3 calls was served on the transport thread
# (transport_defers; NFSv4.1 COMPOUNDs are served by workers only); with
# --async none is committed.  What the client did is checked on the
# server's disk.
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
# the Linux client's NFSv4 names for them: mkdir and mknod are CREATE,
# symlink SYMLINK (a CREATE of NF4LNK), an exclusive create OPEN
NSOPS4="OPEN CREATE SYMLINK REMOVE RENAME LINK SETATTR"

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
os.chmod(os.path.join(d, "hard"), 0o600)
os.truncate(os.path.join(d, "hard"), 3)
EOF

# namespace_calls MNT OPS: the client's count of the calls OPS on MNT
namespace_calls() {
	local op total=0 n
	for op in $2; do
		n=$(mountstats_ops "$1" "$op")
		total=$((total + ${n:-0}))
	done
	echo "$total"
}

# ops_summary MNT: the client's calls on MNT with a count above 0, "OP:N ..."
ops_summary() {
	awk -v m="$1" '$1 == "device" { on = ($5 == m); next }
		on && /^[ \t]+[A-Z_0-9]+: [0-9]+ / && $2 > 0 { printf "%s%s", sep, $1 $2; sep = " " }
		END { print "" }' /proc/self/mountstats
}

# committed LOG: the server's count of directories committed, at exit
committed() {
	sed -n 's/.*directory cache: .*, \([0-9]*\) committed$/\1/p' "$1" | tail -n 1
}

run_mode() { # VERS MODE [ARGS...]
	local vers=$1 mode=$2 export=$DISK/v$1-$2 slog=$SCRATCH/rnfsd-v$1-$2.log
	local what="NFSv$1 $2" calls got defers expect
	shift 2
	mkdir -p "$export"
	if [[ $vers == 3 ]]; then
		rnfsd_start "$NFSD" "$export" "$slog" --no-root-squash --stats --threads 4 \
			--handle-key "$SCRATCH/handle.key" "$@"
		kmount "$SERVER_ADDR:$export" "$MNT" "$MOPTS"
	else
		# a state directory of its own: no client records, no grace period
		rnfsd_start "$NFSD" "$export" "$slog" --nfs4 --no-root-squash --stats \
			--threads 4 --handle-key "$SCRATCH/handle.key" \
			--state-dir "$SCRATCH/state-$mode" "$@"
		kmount41 "$SERVER_ADDR:$export" "$MNT"
	fi
	bounded 120 "names on $MNT" python3 "$SCRATCH/names.py" "$MNT/d" "$N"
	if [[ $vers == 3 ]]; then
		calls=$(namespace_calls "$MNT" "$NSOPS")
	else
		calls=$(namespace_calls "$MNT" "$NSOPS4")
	fi
	log "$what: the client's calls: $(ops_summary "$MNT")"
	kumount "$MNT"
	rnfsd_term
	got=$(committed "$slog")
	defers=$(rnfsd_stat transport_defers)
	log "$what: $calls namespace calls, $got committed, $defers calls deferred"
	# what the client made is on the server's disk
	[[ -f $export/d/f000.r && -f $export/d/hard && -L $export/d/soft &&
	   -p $export/d/fifo && -d $export/d/sub && ! -e $export/d/f001.r ]] ||
		fail "$what: the server's directory is not what the client made: $(ls -la "$export/d")"
	[[ $(stat -c %h "$export/d/hard") == 2 ]] || fail "$what: the link count of d/hard is not 2"
	[[ $(stat -c %a:%s "$export/d/hard") == 600:3 ]] ||
		fail "$what: d/hard is not mode 600 and 3 bytes: $(stat -c %a:%s "$export/d/hard")"
	# MKDIR d, N CREATEs (exclusive: each followed by a SETATTR of the new
	# file, which replaces the verifier kept in its times: over NFSv3 the
	# client always sends it; NFSv4.1's EXCLUSIVE4_1 OPEN answers the times
	# in attrset, RFC 8881 18.16.4, and the client then sets them), N
	# RENAMEs, LINK, SYMLINK, MKNOD, N - 1 REMOVEs, MKDIR sub, and two
	# SETATTRs (chmod, truncate)
	expect=$((4 * N + 6))
	((calls == expect)) || fail "$what: the client sent $calls namespace calls and SETATTRs, expected $expect"
	if [[ $mode == sync ]]; then
		# and each new regular file (the N creates) and directory (d,
		# sub) is committed itself before its directory, as knfsd
		# commits child then parent (RFC 1813 3.3.8, RFC 8881 18.16.3:
		# an exclusive create's verifier on stable storage); a symlink
		# or special file has no descriptor to sync (fs_commit.c)
		[[ $got == $((calls + N + 2)) ]] ||
			fail "$what: $got committed for $calls namespace calls and SETATTRs and $((N + 2)) new files and directories, expected $((calls + N + 2))"
		if [[ $vers == 3 ]]; then
			((defers >= calls)) ||
				fail "$what: $defers calls deferred to workers, fewer than the $calls namespace calls"
		fi
		pass "$what: each of the $calls namespace calls and SETATTRs, and the $((N + 2)) new files and directories, committed before the reply, on a worker"
	else
		[[ $got == 0 ]] || fail "$what: $got directories committed, expected none"
		pass "$what: $calls namespace calls and SETATTRs, nothing committed"
	fi
}

run_mode 3 sync
run_mode 3 async --async
run_mode 4.1 sync
run_mode 4.1 async --async
