#!/usr/bin/env bash
# exports: rpcrdma-nfsd --exports FILE (exports(5) syntax) with the kernel
# NFSv3 client in the same guest, over RDMA, or over TCP when registered as
# vm/exports-tcp with RPCRDMA_NFS_PROTO=tcp (issue 36; every kernel mount
# checked in /proc/self/mountstats; vm-nfs3-fh, our client library, speaks
# RDMA only and stays on it) (it connects from an address of
# 192.0.2.0/24; a client "elsewhere" is 192.0.2.250, which nothing uses):
#   - showmount -e (MOUNT EXPORT through rpcbind) lists every export with
#     its clients as the file writes them; showmount -a the mounts made;
#   - rw / no_root_squash: root writes as root;
#   - ro: the write is refused (EROFS from NFS3ERR_ROFS), reading works;
#   - all_squash,anonuid=4242,anongid=4343: root's and nobody's files both
#     belong to 4242:4343 on the server;
#   - an export only for 192.0.2.250: the mount is refused;
#   - a subdirectory of an export mounts and is served with its options;
#   - nested exports: the same directory through the outer rw export takes
#     a write, through its own ro export not: a handle carries its export;
#   - SIGHUP with a file that drops our access to one export and removes
#     another, without dropping the connection: the next call on the first
#     mount is answered NFS3ERR_ACCES (the kernel client reports that on a
#     mount's root as ESTALE), on the second NFS3ERR_STALE; the others work on;
#   - a test client (vm-nfs3-fh) that sends one export's root handle over
#     a mount of another: served as its own export's while we may use it,
#     NFS3ERR_ACCES once a reload took that away; relabelled with another
#     export's id NFS3ERR_BADHANDLE (NFS3ERR_ACCES when that export does not
#     list us: the client check comes first), with an id no export has
#     NFS3ERR_STALE; RENAME from one export into another NFS3ERR_XDEV;
#   - a broken file on SIGHUP leaves the exports in force (logged).
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
vm_require_guest
umask 022

NFSD=$(rpcrdma_bin rpcrdma-nfsd)
FH=$(rpcrdma_bin vm-nfs3-fh)
S=$SCRATCH/exp
FILE=$SCRATCH/exports
SLOG=$SCRATCH/rpcrdma-nfsd.log
MOPTS=mountport=$MOUNT_PORT,mountproto=tcp
NET=192.0.2.0/24

mkdir -p "$S/rw" "$S/ro" "$S/sq" "$S/other" "$S/rw/inner"
chmod 0777 "$S/sq"
echo "read me" >"$S/ro/file"

mkdir -p /run/rpcbind
rpcbind -w -f &
rpcbind_pid=$!
at_exit "kill $rpcbind_pid 2>/dev/null"
for _ in $(seq 50); do [[ -S /run/rpcbind.sock ]] && break; sleep 0.2; done
[[ -S /run/rpcbind.sock ]] || fail "rpcbind did not start"

write_exports() {
	cat >"$FILE.new" <<-EOF
	# test exports
	$S/rw    $NET(rw,no_root_squash,insecure,fsid=1)
	$S/ro    $NET(ro,insecure,fsid=2)
	$S/sq    -rw,all_squash,anonuid=4242,anongid=4343,insecure \\
	         $NET(fsid=3)
	$S/other 192.0.2.250(rw,insecure,fsid=4)
	$S/rw/inner $NET(ro,insecure,fsid=5)
	EOF
	mv "$FILE.new" "$FILE"
}
write_exports
rnfsd_start_exports "$NFSD" "$FILE" "$SLOG" --rpcbind --stats --handle-key "$SCRATCH/key" -v -v

# ---------------------------------------------------------------- showmount -e
out=$(bounded 30 "showmount -e" showmount -e "$SERVER_ADDR")
log "showmount -e: $(tr '\n' '|' <<<"$out")"
for want in "$S/rw $NET" "$S/ro $NET" "$S/sq $NET" "$S/other 192.0.2.250" "$S/rw/inner $NET"; do
	grep -qxF "$want" <<<"$(sed 's/  */ /g' <<<"$out")" || fail "showmount -e lacks '$want': $out"
done
pass "showmount -e lists the five exports with their clients"

# ---------------------------------------------------------------- mounts
# xmount SRC MNT: kmount, then check the transport in /proc/self/mountstats
xmount() {
	local xprt
	kmount "$1" "$2" "$MOPTS"
	xprt=$(mountstats_xprt "$2")
	[[ "$xprt" == "xprt:"*"$NFS_PROTO"* ]] || fail "mount $2 is not over $NFS_PROTO: '$xprt'"
}
for d in rw ro sq; do
	xmount "$SERVER_ADDR:$S/$d" "/mnt/$d"
done
xmount "$SERVER_ADDR:$S/rw/inner" /mnt/inner
pass "four exports mounted over $NFS_PROTO"
mkdir -p /mnt/other
if timeout -k 5 60 mount -t nfs -o "vers=3,$(nfs_proto_opts),nolock,$MOPTS" \
	"$SERVER_ADDR:$S/other" /mnt/other 2>"$SCRATCH/mnt.err"; then
	umount /mnt/other
	fail "the mount of an export for 192.0.2.250 only succeeded"
fi
log "mount of $S/other: $(cat "$SCRATCH/mnt.err")"
grep -qi "denied" "$SCRATCH/mnt.err" || fail "mount of $S/other: not refused with access denied: $(cat "$SCRATCH/mnt.err")"
pass "an export for another client is refused at MNT"

out=$(bounded 30 "showmount -a" showmount -a --no-headers "$SERVER_ADDR")
for d in rw ro sq rw/inner; do
	grep -q ":$S/$d\$" <<<"$out" || fail "showmount -a lacks $S/$d: $out"
done
pass "showmount -a lists the four mounts"

# rw, no_root_squash
echo data >/mnt/rw/f || fail "write on the rw export"
[[ "$(stat -c %u:%g "$S/rw/f")" == 0:0 ]] || fail "root's file on rw: $(stat -c %u:%g "$S/rw/f")"
pass "rw,no_root_squash: root writes as root"

# ro
[[ "$(cat /mnt/ro/file)" == "read me" ]] || fail "read on the ro export"
if out=$(timeout -k 5 30 sh -c 'echo x >/mnt/ro/new' 2>&1); then
	fail "a write on the ro export succeeded"
fi
[[ "$out" == *"Read-only file system"* ]] || fail "write on ro: '$out', want EROFS"
[[ ! -e "$S/ro/new" ]] || fail "the refused write left $S/ro/new"
if out=$(timeout -k 5 30 rm /mnt/ro/file 2>&1); then
	fail "rm on the ro export succeeded"
fi
[[ -e "$S/ro/file" ]] || fail "rm on ro removed the file"
pass "ro: reading works, writing and removing are refused with EROFS"

# all_squash
echo r >/mnt/sq/by-root || fail "root's write on the all_squash export"
runuser -u nobody -- sh -c 'echo n >/mnt/sq/by-nobody' || fail "nobody's write on the all_squash export"
for f in by-root by-nobody; do
	[[ "$(stat -c %u:%g "$S/sq/$f")" == 4242:4343 ]] ||
		fail "all_squash: $f belongs to $(stat -c %u:%g "$S/sq/$f"), want 4242:4343"
done
pass "all_squash,anonuid=4242,anongid=4343: root's and nobody's files belong to 4242:4343"

# a subdirectory of an export mounts, with its export's options
mkdir -p "$S/sq/d/e"
chmod 0777 "$S/sq/d/e"
xmount "$SERVER_ADDR:$S/sq/d/e" /mnt/sqde
echo sub >/mnt/sqde/f || fail "write on the mounted subdirectory"
[[ "$(stat -c %u:%g "$S/sq/d/e/f")" == 4242:4343 ]] || fail "subdirectory mount: owner $(stat -c %u:%g "$S/sq/d/e/f")"
pass "MNT of a subdirectory of an export, served with that export's options"

# nested: the directory through the outer rw export and through its own ro one
echo outer >/mnt/rw/inner/via-outer || fail "write into inner/ through the rw export"
if out=$(timeout -k 5 30 sh -c 'echo x >/mnt/inner/via-inner' 2>&1); then
	fail "a write through the nested ro export succeeded"
fi
[[ "$out" == *"Read-only file system"* ]] || fail "write through the nested ro export: '$out'"
[[ "$(cat /mnt/inner/via-outer)" == outer ]] || fail "read through the nested ro export"
pass "nested exports: one directory is writable through the rw export, read-only through its own"

# ---------------------------------------------------------------- handles across exports
# vm-nfs3-fh mounts an export itself (from CLIENT_ADDR) and sends a handle
# of another export over that mount, printing the raw nfsstat3
fhc() { bounded 60 "vm-nfs3-fh $*" "$FH" "$1" "$SERVER_ADDR" "$CLIENT_ADDR" "$MOUNT_PORT" "${@:2}"; }
fhc save "$S/rw" "$SCRATCH/fh-rw"
[[ "$(fhc getattr "$S/sq" "$SCRATCH/fh-rw")" == 0 ]] ||
	fail "rw's root handle over a mount of sq: not served as rw's"
st=$(fhc getattr "$S/sq" "$SCRATCH/fh-rw" 3)
[[ "$st" == 10001 ]] || fail "rw's handle relabelled as sq's: status $st, want NFS3ERR_BADHANDLE"
# relabelled as the export of 192.0.2.250: refused before the MAC is checked
st=$(fhc getattr "$S/sq" "$SCRATCH/fh-rw" 4)
[[ "$st" == 13 ]] || fail "rw's handle relabelled as other's: status $st, want NFS3ERR_ACCES"
st=$(fhc getattr "$S/sq" "$SCRATCH/fh-rw" 99)
[[ "$st" == 70 ]] || fail "a handle with an id no export has: status $st, want NFS3ERR_STALE"
echo x >"$S/rw/mv"
st=$(fhc rename "$S/sq" "$SCRATCH/fh-rw" mv)
[[ "$st" == 18 ]] || fail "RENAME from rw into sq: status $st, want NFS3ERR_XDEV"
[[ -e "$S/rw/mv" && ! -e "$S/sq/mv" ]] || fail "the refused RENAME moved the file"
pass "handles across exports: relabelled -> BADHANDLE, unknown id -> STALE, RENAME across -> XDEV"

# ---------------------------------------------------------------- reload
cat >"$FILE.new" <<-EOF
$S/rw    192.0.2.250(rw,insecure,fsid=1)
$S/sq    $NET(rw,all_squash,anonuid=4242,anongid=4343,insecure,fsid=3)
$S/rw/inner $NET(ro,insecure,fsid=5)
EOF
mv "$FILE.new" "$FILE"
kill -HUP "$RNFSD_PID"
for _ in $(seq 50); do grep -q 'SIGHUP: .* reloaded' "$SLOG" && break; sleep 0.2; done
grep -q 'SIGHUP: .* reloaded, 3 exports' "$SLOG" || fail "no reload logged"
drop_caches
# answers_since_reload STATUS: the NFS status codes the server (-v -v logs
# every call) gave since the reload include STATUS
answers_since_reload() {
	sed -n '/SIGHUP: .* reloaded/,$p' "$SLOG" | grep -q "status $1\$"
}
if out=$(timeout -k 5 30 ls /mnt/rw 2>&1); then
	fail "ls on the export we lost access to succeeded: $out"
fi
log "ls on the export we lost access to: $out"
answers_since_reload 13 || fail "the server did not answer NFS3ERR_ACCES after the reload"
# (the kernel client reports NFS3ERR_ACCES on its mount's root as ESTALE)
if out=$(timeout -k 5 30 cat /mnt/ro/file 2>&1); then
	fail "read on the removed export succeeded: $out"
fi
[[ "$out" == *"Stale file handle"* ]] || fail "read on the removed export: '$out', want ESTALE"
answers_since_reload 70 || fail "the server did not answer NFS3ERR_STALE for the removed export"
echo again >/mnt/sq/again || fail "the all_squash export stopped working after the reload"
[[ "$(stat -c %u "$S/sq/again")" == 4242 ]] || fail "all_squash after the reload"
kill -0 "$RNFSD_PID" || fail "server gone after SIGHUP"
st=$(fhc getattr "$S/sq" "$SCRATCH/fh-rw")
[[ "$st" == 13 ]] || fail "rw's handle over a mount of sq after losing rw: status $st, want NFS3ERR_ACCES"
pass "SIGHUP: lost access -> NFS3ERR_ACCES, removed export -> NFS3ERR_STALE, the others work on"

# a broken file keeps the exports in force
echo "$S/sq $NET(rw,bogus_option)" >"$FILE"
kill -HUP "$RNFSD_PID"
for _ in $(seq 50); do grep -q "bogus_option" "$SLOG" && break; sleep 0.2; done
grep -q "$FILE:1: unknown option 'bogus_option'.*stay" "$SLOG" || fail "the broken file was not reported with file and line"
echo still >/mnt/sq/still || fail "the exports in force stopped working after a broken reload"
pass "SIGHUP with a broken file: error names file and line, the exports stay"

for m in rw ro sq inner sqde; do kumount "/mnt/$m"; done
rnfsd_term
rnfsd_check_final_stats
if [[ $NFS_PROTO == tcp ]]; then
	(($(rnfsd_stat tcp_calls) > 0)) || fail "server counter tcp_calls is 0: nothing came over TCP"
	[[ $(rnfsd_stat tcp_calls_in_use) == 0 ]] || fail "tcp_calls_in_use is not 0 at exit"
	[[ $(rnfsd_stat tcp_bad_records) == 0 ]] || fail "the server closed a TCP connection for a bad record"
	pass "server served $(rnfsd_stat tcp_calls) calls over TCP, every TCP call context back"
fi
reg=$(bounded 20 "rpcinfo -p" rpcinfo -p 127.0.0.1 | awk '$1 == 100005 { print $4 }')
[[ -z "$reg" ]] || fail "MOUNT still registered with rpcbind after exit"

# ---------------------------------------------------------------- bad files at start
echo "$S/rw $NET(rw,nosuchopt)" >"$FILE"
if out=$("$NFSD" --exports "$FILE" --listen "$SERVER_ADDR" 2>&1); then
	fail "rpcrdma-nfsd started with an unknown option in $FILE"
fi
[[ "$out" == *"$FILE:1: unknown option 'nosuchopt'"* ]] || fail "start with a bad file: '$out'"
pass "an unknown option at start: exit status non-zero, message names file and line"
