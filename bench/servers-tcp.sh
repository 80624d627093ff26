# bench/servers-tcp.sh: section servers_tcp of `make bench` (issue 36),
# sourced by bench/bench-inside.sh (its helpers: server_figure, measure,
# start_knfsd, rnfsd_start, kmount's conventions).
#
# Section 2's figures over NFSv3/TCP, the same kernel client, three servers
# in turn figure by figure:
#   knfsd-tcp    the kernel's nfsd, TCP port 2049 (the same [nfsd] threads
#                and export as section 2's RDMA run)
#   rnfsd-tcp    rpcrdma-nfsd with the same arguments as section 2's,
#                NFS over TCP on BENCH_RNFSD_TCP_PORT (20053); a process of
#                its own, started after section 2's server stopped, so the
#                RDMA figures are measured exactly as before
#   ganesha-tcp  nfs-ganesha (Debian's nfs-ganesha + nfs-ganesha-vfs)
#                exporting a directory with FSAL_VFS, NFSv3 over TCP,
#                configured as its documentation (ganesha-export-config(8),
#                ganesha-core-config(8)) says: an EXPORT block with Path,
#                Pseudo, Protocols, Transports, Access_Type, Squash and
#                FSAL { Name = VFS; }, NFS_CORE_PARAM with the ports
# No NULL figures (bench_rpc's client speaks RPC-over-RDMA only) and no
# split placement.  Ratios in the report: rpcrdma-nfsd / each other.

RNFSD_TCP_PORT=${BENCH_RNFSD_TCP_PORT:-20053}
RNFSD_TCP_RDMA_PORT=${BENCH_RNFSD_TCP_RDMA_PORT:-20054}
GVFS_PORT=${BENCH_GANESHA_VFS_PORT:-20055}
GVFS_MNT_PORT=${BENCH_GANESHA_VFS_MNT_PORT:-20056}
TCP_FIGS=${BENCH_TCP_FIGURES-seq_write seq_read rand_read rand_write meta meta8}
TCP_WHOS=${BENCH_TCP_WHO-knfsd-tcp rnfsd-tcp ganesha-tcp}
GVFS_EXPORT=  # $W/ganesha-export, set by section_servers_tcp (W is not set yet here)
GVFS_PID=
RNFSD_TCP_PID=

# ganesha_vfs_start: ganesha.nfsd exporting GVFS_EXPORT with FSAL_VFS over
# NFSv3/TCP on SERVER_ADDR (NFS GVFS_PORT, MOUNT GVFS_MNT_PORT; no NLM,
# no RQUOTA), its files in BENCH_OUT/ganesha-vfs (bench-inside.sh's
# ganesha_fsal_start).  It registers with rpcbind, taking over the
# kernel's NFS and MOUNT entries: every mount here names its ports.
ganesha_vfs_start() {
	mkdir -p "$GVFS_EXPORT"
	ganesha_fsal_start VFS "$BENCH_OUT/ganesha-vfs" 3 2 "$GVFS_EXPORT" /ganesha-vfs \
		"$GVFS_PORT" "$GVFS_MNT_PORT" sys
	GVFS_PID=$GANESHA_STARTED
}

# tcp_mount WHO: the kernel client's NFSv3/TCP mount of WHO on /mnt/bench-WHO.
tcp_mount() {
	local m=/mnt/bench-$1 src opts=vers=3,proto=tcp,nolock,$MOPTS
	case $1 in
	knfsd-tcp) src=$SERVER_ADDR:$KEXPORT opts+=,port=2049 ;;
	rnfsd-tcp) src=$SERVER_ADDR:$REXPORT opts+=,port=$RNFSD_TCP_PORT,mountport=$MOUNT_PORT,mountproto=tcp ;;
	ganesha-tcp) src=$SERVER_ADDR:$GVFS_EXPORT opts+=,port=$GVFS_PORT,mountport=$GVFS_MNT_PORT,mountproto=tcp ;;
	*) fail "tcp_mount: unknown server $1" ;;
	esac
	mkdir -p "$m"
	vm_kmod nfsv3
	timeout -k 10 120 mount -t nfs -o "$opts" "$src" "$m" || fail "mount -t nfs -o $opts $src $m"
	at_exit "kumount '$m'"
	emit "\"section\":\"info\",\"tcp_mount\":\"$1\",\"opts\":\"$(mount_opts "$m")\""
	log "mounted $src on $m ($opts)"
}

section_servers_tcp() {
	local r s fig t0=$SECONDS
	GVFS_EXPORT=$W/ganesha-export
	log "== 2t. servers over TCP: kernel nfsd vs rpcrdma-nfsd vs nfs-ganesha (FSAL_VFS), kernel client vers=3,proto=tcp ($FILE_MB MiB file, $REPEAT runs)"
	((KNFSD_UP)) || start_knfsd
	grep -q "tcp 2049" /proc/fs/nfsd/portlist || fail "kernel nfsd does not list 'tcp 2049': $(cat /proc/fs/nfsd/portlist)"
	if [[ " $TCP_WHOS " == *" rnfsd-tcp "* ]]; then
		mkdir -p "$REXPORT"
		NFS_RDMA_PORT=$RNFSD_TCP_RDMA_PORT rnfsd_start "$(rpcrdma_bin rpcrdma-nfsd)" "$REXPORT" \
			"$W/rpcrdma-nfsd-tcp.log" "${RNFSD_ARGS[@]}" --allow "$ALLOW" \
			--handle-key "$W/handle.key" --tcp-port "$RNFSD_TCP_PORT"
		RNFSD_TCP_PID=$RNFSD_PID
		wait_tcp_listen "$SERVER_ADDR" "$RNFSD_TCP_PORT" 10 ||
			fail "rpcrdma-nfsd does not listen on TCP $SERVER_ADDR:$RNFSD_TCP_PORT"
	fi
	for s in $TCP_WHOS; do
		[[ $s == ganesha-tcp ]] || tcp_mount "$s"
	done
	# last: it takes over rpcbind's NFS and MOUNT entries
	if [[ " $TCP_WHOS " == *" ganesha-tcp "* ]]; then
		command -v ganesha.nfsd >/dev/null || fail "ganesha.nfsd is not installed (apt-get install nfs-ganesha nfs-ganesha-vfs)"
		ganesha_vfs_start
		tcp_mount ganesha-tcp
	fi
	emit "\"section\":\"info\",\"tcp_info\":1,\"figures\":\"$TCP_FIGS\",\"who\":\"$TCP_WHOS\",\"rnfsd_args\":\"${RNFSD_ARGS[*]}\",\"knfsd_threads\":$(knfsd_pids | wc -l),\"ganesha\":\"$(ganesha_version)\""
	for ((r = 1; r <= REPEAT; r++)); do
		for fig in $TCP_FIGS; do
			for s in $TCP_WHOS; do
				server_figure "$fig" "$s" "$r" "" servers_tcp
			done
		done
	done
	for s in $TCP_WHOS; do
		kumount "/mnt/bench-$s"
	done
	[[ -n $GVFS_PID ]] && proc_stop "$GVFS_PID"
	if [[ -n $RNFSD_TCP_PID ]]; then
		RNFSD_PID=$RNFSD_TCP_PID
		rnfsd_term 30
		grep '^{' "$W/rpcrdma-nfsd-tcp.log" | tail -n 1 >"$BENCH_OUT/rpcrdma-nfsd-tcp-stats.json" || true
	fi
	log "servers_tcp: section took $((SECONDS - t0)) s"
}
