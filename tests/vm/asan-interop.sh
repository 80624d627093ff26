#!/usr/bin/env bash
# asan-interop: the core of kernel-client-interop against an ASan + UBSan
# build of rpcrdma-nfsd: the six test files (0 B to 16 MiB) written through
# the kernel client, read back after a remount and compared byte for byte;
# ls -l of a 200-entry directory; mkdir, rm, rmdir; unmount; SIGTERM.  Fails
# on any AddressSanitizer / LeakSanitizer / UBSan report (report files under
# the scratch directory, or in the server log) or a non-zero exit status.
#
# The sanitizer build is <checkout>/build-asan (`make asan`), or
# $RPCRDMA_ASAN_BUILD_DIR; without it the test is skipped (status 77).
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
vm_require_guest

ASAN_DIR=${RPCRDMA_ASAN_BUILD_DIR:-$RPCRDMA_CHECKOUT/build-asan}
NFSD=$ASAN_DIR/rpcrdma-nfsd
[[ -x "$NFSD" && -f "$NFSD" ]] ||
	skip "no sanitizer build of rpcrdma-nfsd at $NFSD (run 'make asan', or set RPCRDMA_ASAN_BUILD_DIR)"
grep -qa '__asan_init' "$NFSD" ||
	skip "$NFSD is not built with AddressSanitizer (configure with -DRPCRDMA_SANITIZE=ON)"

EXPORT=$SCRATCH/export
ORIG=/tmp/orig
MNT=/mnt/x
SLOG=$SCRATCH/rpcrdma-nfsd.log
REPORTS=$SCRATCH/asan
MOPTS=mountport=$MOUNT_PORT,mountproto=tcp
mkdir -p "$REPORTS"

# sanitizer_reports: print the report files the runtimes wrote and the report
# lines found in the server log; status 0 when there is any.  (Checked in the
# guest: ASan/LSan reports go to log_path; with gcc's separate libubsan, UBSan
# reports go to stderr, i.e. the server log, whatever UBSAN_OPTIONS log_path
# says, so both places are searched.)
sanitizer_reports() {
	local f found=0
	for f in "$REPORTS"/*; do
		[[ -e "$f" ]] || continue
		found=1
		echo "---- sanitizer report $f ----"
		head -n 80 "$f"
	done
	if grep -E 'ERROR: (Address|Leak)Sanitizer|runtime error:|SUMMARY: [A-Za-z]*Sanitizer' "$SLOG" 2>/dev/null; then
		found=1
	fi
	return $((!found))
}
on_failure "sanitizer_reports || true"

mount_export() {
	kmount "$SERVER_ADDR:$EXPORT" "$MNT" "$MOPTS"
	local xprt
	xprt=$(mountstats_xprt "$MNT")
	[[ "$xprt" == "xprt:"*"rdma"* ]] || fail "mount $MNT is not over RDMA: '$xprt'"
}

make_test_files "$ORIG"
ASAN_OPTIONS=detect_leaks=1:halt_on_error=1:log_path=$REPORTS/asan \
UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:log_path=$REPORTS/ubsan \
	rnfsd_start "$NFSD" "$EXPORT" "$SLOG" --no-root-squash --stats --threads 4 \
		--handle-key "$SCRATCH/handle.key"

# ---- the six files in, remount, out
mount_export
pass "kernel client mounted the ASan/UBSan rpcrdma-nfsd over RDMA"
for s in "${TEST_FILE_SIZES[@]}"; do
	bounded 180 "cp $s.bin to the mount" cp "$ORIG/$s.bin" "$MNT/$s.bin"
done
bounded 180 "sync after writing" sync
kumount "$MNT"
drop_caches
mount_export
for s in "${TEST_FILE_SIZES[@]}"; do
	compare_files "$ORIG/$s.bin" "$EXPORT/$s.bin"
	compare_files "$ORIG/$s.bin" "$MNT/$s.bin"
done
pass "six files (0 B to 16 MiB) written, read back after a remount: all match"

# ---- 200 entries
mkdir "$EXPORT/many"
for ((i = 0; i < 200; i++)); do
	printf -v name 'entry-%03d-with-a-longer-name-to-fill-the-reply' "$i"
	: >"$EXPORT/many/$name"
done
printf 'abc' >"$EXPORT/many/entry-123-with-a-longer-name-to-fill-the-reply"
listing=$(timeout -k 10 120 ls -l "$MNT/many") || fail "ls -l $MNT/many failed or timed out"
n=$(awk 'NR > 1' <<<"$listing" | wc -l)
((n == 200)) || fail "ls -l of a 200-entry directory shows $n entries"
awk '$NF == "entry-123-with-a-longer-name-to-fill-the-reply" && $5 == 3 { f = 1 } END { exit !f }' \
	<<<"$listing" || fail "ls -l does not show entry-123 with size 3"
pass "ls -l of a directory with 200 entries"

# ---- mkdir, rm, rmdir
bounded 30 "mkdir d on the mount" mkdir "$MNT/d"
bounded 30 "write d/f" sh -c "echo hello >'$MNT/d/f'"
[[ "$(cat "$EXPORT/d/f")" == hello ]] || fail "server does not have d/f with the written contents"
bounded 30 "rm d/f" rm "$MNT/d/f"
bounded 30 "rmdir d" rmdir "$MNT/d"
[[ ! -e "$EXPORT/d" ]] || fail "d still exists on the server after rm and rmdir"
bounded 120 "rm -rf many" rm -rf "$MNT/many"
[[ ! -e "$EXPORT/many" ]] || fail "many still exists on the server after rm -rf"
pass "mkdir, create, rm, rmdir, rm -rf"
kumount "$MNT"

# ---- exit: status 0, no sanitizer report, pools at baseline
rnfsd_term 60
if sanitizer_reports; then
	fail "the sanitizers reported errors (above)"
fi
pass "no AddressSanitizer, LeakSanitizer or UBSan report"
rnfsd_check_final_stats
