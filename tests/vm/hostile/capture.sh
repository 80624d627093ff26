# SPDX-License-Identifier: MIT
# hostile-peers part "capture" (sourced by tests/vm/hostile-peers.sh; issue
# 33 finding 8): the capture file holds credentials, handles and file data,
# and whoever can write the capture directory may plant symlinks there.
#  1. the running server's capture ($CAPTURE) is a regular file, mode 0600,
#     that an unprivileged user cannot read;
#  2. a symlink planted where a restarted server's capture goes: the server
#     refuses to start ("File exists") and the link's target is unchanged
#     (before: followed and truncated, as root);
#  3. symlinks planted at $CAPTURE.1 and $CAPTURE.2, where the next rotated
#     files go (server restarted with --capture-size 64K --capture-files 3,
#     then 1 KiB O_DIRECT writes through the mount until it rotates): their
#     target is unchanged and $CAPTURE.1 becomes a regular 0600 capture;
#  4. a restart with the set-up's arguments over the earlier capture of
#     ours: it serves again (a new 0600 file) and the client's mount works.
# Uses the driver's NFSD, EXPORTS, SERVER_ARGS, CAPDIR, CAPTURE, MNT,
# SCRATCH; leaves the server serving with the driver's arguments.

# cap_mode PATH: "TYPE MODE OWNER" of PATH, not following a symlink.
cap_mode() { stat -c '%F %a %u' -- "$1" 2>/dev/null; }

# cap_restart LOG [ARGS...]: stop the server, start it again with the
# driver's arguments and ARGS (its log in LOG).
cap_restart() {
	local slog=$1
	shift
	rnfsd_term
	rnfsd_start_exports "$NFSD" "$EXPORTS" "$slog" "${SERVER_ARGS[@]}" "$@"
}

# cap_client_works WHAT: the client's mount answers (a write and a read
# through it) within 120 s, the server having been restarted under it.
cap_client_works() {
	bounded 120 "$1: write through the mount" \
		sh -c "echo capture-part >'$MNT/capture-part.txt' && sync '$MNT/capture-part.txt'"
	[[ "$(timeout -k 10 60 cat "$MNT/capture-part.txt")" == capture-part ]] ||
		fail "$1: read back through the mount"
}

# ---- 1. the running server's file
[[ "$(cap_mode "$CAPTURE")" == "regular file 600 0" ]] ||
	[[ "$(cap_mode "$CAPTURE")" == "regular empty file 600 0" ]] ||
	fail "capture $CAPTURE: $(cap_mode "$CAPTURE") (want a regular file, mode 600, owner 0)"
if setpriv --reuid=65534 --regid=65534 --clear-groups cat -- "$CAPTURE" >/dev/null 2>&1; then
	fail "uid 65534 can read the capture $CAPTURE"
fi
pass "the capture file is a regular file, mode 0600, unreadable by uid 65534"

# ---- 2. a symlink where a restarted server's capture goes
TARGET=$CAPDIR/victim
printf 'precious bytes\n' >"$TARGET"
chmod 0644 "$TARGET"
want_sum=$(md5sum <"$TARGET")
rnfsd_term
cp "$RNFSD_LOG" "$SCRATCH/rnfsd.log.before-capture" 2>/dev/null
rm -f -- "$CAPTURE"
ln -s "$TARGET" "$CAPTURE"
rc=0
timeout -k 5 60 "$NFSD" --exports "$EXPORTS" --listen "$SERVER_ADDR" --port "$NFS_RDMA_PORT" \
	--mount-port "$MOUNT_PORT" "${SERVER_ARGS[@]}" >"$SCRATCH/rnfsd-capture-link.log" 2>&1 || rc=$?
((rc == 124 || rc == 137)) &&
	fail "rpcrdma-nfsd started over a symlink at $CAPTURE (killed after 60 s): $(tail -n 5 "$SCRATCH/rnfsd-capture-link.log")"
((rc != 0)) || fail "rpcrdma-nfsd exited 0 with a symlink at $CAPTURE"
grep -q -- "--capture $CAPTURE: File exists" "$SCRATCH/rnfsd-capture-link.log" ||
	fail "no 'File exists' refusal (status $rc): $(tail -n 5 "$SCRATCH/rnfsd-capture-link.log")"
[[ -L $CAPTURE ]] || fail "the symlink at $CAPTURE is gone: $(cap_mode "$CAPTURE")"
[[ "$(md5sum <"$TARGET")" == "$want_sum" ]] ||
	fail "the symlink's target was written: $(head -c 200 "$TARGET" | od -c | head -3)"
pass "a symlink at the capture path: start refused (status $rc, 'File exists'), target unchanged"
rm -f -- "$CAPTURE"

# ---- 3. symlinks where the rotated files go
rnfsd_start_exports "$NFSD" "$EXPORTS" "$SCRATCH/rnfsd-capture-rot.log" "${SERVER_ARGS[@]}" \
	--capture-size 64K --capture-files 3
[[ "$(cap_mode "$CAPTURE")" == "regular file 600 0" ]] ||
	fail "capture after a start with no file there: $(cap_mode "$CAPTURE")"
rm -f -- "$CAPTURE.1" "$CAPTURE.2"
ln -s "$TARGET" "$CAPTURE.1"
ln -s "$TARGET" "$CAPTURE.2"
# 1 KiB writes go inline (under the 4 KiB inline threshold): each call
# and its reply are frames of about 1.2 KiB and 0.2 KiB, so 300 of them
# fill several 64 KiB files.
bounded 240 "1 KiB O_DIRECT writes through the mount" \
	dd if=/dev/zero of="$MNT/capture-rot.bin" bs=1k count=300 oflag=direct status=none
rotated=
for ((i = 0; i < 150; i++)); do
	# the writer thread writes behind: wait for the second rotation,
	# which moves the first rotated file over the link at .2
	if [[ "$(cap_mode "$CAPTURE.1")" == "regular file 600 0" ]] &&
	   [[ "$(cap_mode "$CAPTURE.2")" == "regular file 600 0" ]]; then
		rotated=1
		break
	fi
	sleep 0.2
done
[[ -n $rotated ]] ||
	fail "no two rotations after 300 writes: $CAPTURE.1: $(cap_mode "$CAPTURE.1"); $CAPTURE.2: $(cap_mode "$CAPTURE.2"); $(ls -l "$CAPDIR")"
[[ "$(md5sum <"$TARGET")" == "$want_sum" ]] ||
	fail "rotation wrote through a planted symlink: $(head -c 200 "$TARGET" | od -c | head -3)"
for f in "$CAPTURE" "$CAPTURE.1" "$CAPTURE.2"; do
	sz=$(stat -c %s -- "$f")
	((sz <= 65536)) || fail "$f: $sz bytes, over --capture-size 64K"
done
[[ -e $CAPTURE.3 ]] && fail "$CAPTURE.3 exists with --capture-files 3"
pass "symlinks at $CAPTURE.1 and .2: rotation replaced them, target unchanged, rotated files 0600 and at most 64K"
rm -f -- "$MNT/capture-rot.bin"

# ---- 4. back to the driver's arguments, over our earlier capture
cap_restart "$SCRATCH/rnfsd.log"
[[ "$(cap_mode "$CAPTURE")" == "regular file 600 0" ]] ||
	fail "capture after a restart over our earlier one: $(cap_mode "$CAPTURE")"
cap_client_works "after the restarts"
rm -f -- "$MNT/capture-part.txt" "$CAPTURE.1" "$CAPTURE.2" "$TARGET"
pass "restarted over its earlier capture: serving, the capture is a new 0600 file, the mount works"
