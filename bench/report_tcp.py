"""bench/report_tcp.py: section servers_tcp of bench/report.py (issue 36):
section 2's figures over NFSv3/TCP for the kernel's nfsd, rpcrdma-nfsd and
nfs-ganesha (FSAL_VFS), the ratios rpcrdma-nfsd / each other (of the
medians, and by run), CPU per op, and the issue's aims: at least the
kernel's nfsd over TCP on every figure, 1.5x nfs-ganesha on small
operations."""

from report_table import aims, aims_sentence, cpu_table, figure_names, figure_table, pairer, ways_entry

TCP_WHO = [("rnfsd-tcp", "rpcrdma-nfsd"), ("knfsd-tcp", "kernel nfsd"),
           ("ganesha-tcp", "nfs-ganesha VFS")]
TCP_SMALL = ("rand_read", "rand_write", "meta", "meta8")


def tcp_results(figs, agg, base_figs, stats, ratio):
    paired = pairer(figs, "servers_tcp", stats)
    out = {}
    for fig in base_figs:
        ws = {w: agg("servers_tcp", fig, w) for w, _ in TCP_WHO}
        if not any(ws.values()):
            continue
        e = ways_entry(fig, ws, "rnfsd-tcp", [w for w, _ in TCP_WHO[1:]], paired, ratio)
        goals = [("at least the kernel's nfsd over TCP", e["ratio"].get("knfsd-tcp"), 1.0)]
        if fig in TCP_SMALL:
            goals.append(("1.5x nfs-ganesha", e["ratio"].get("ganesha-tcp"), 1.5))
        e["aims"] = aims(goals)
        out[fig] = e
    return out or None


def tcp_markdown(R, fmt, fmt_ratio):
    i = R["info"]
    F = R["servers_tcp"]
    versus = [("knfsd-tcp", "kernel"), ("ganesha-tcp", "ganesha")]
    L = ["## 2t. Servers over TCP: kernel nfsd vs rpcrdma-nfsd vs nfs-ganesha (kernel client, NFSv3/TCP)", ""]
    L.extend(figure_table(F, TCP_WHO, versus, figure_names(i), fmt, fmt_ratio))
    L.append("")
    L.extend(cpu_table(F, "| figure | CPU µs/op rpcrdma-nfsd | kernel nfsd | nfs-ganesha | CPU ours / kernel "
                          "| CPU ours / ganesha |", [w for w, _ in TCP_WHO], [w for w, _ in versus],
                       fmt, fmt_ratio, by_run=False))
    L.append("")
    L.append("Aims (issue 36), ratio of the medians: " + aims_sentence(F, fmt_ratio) + ".")
    for w, n in TCP_WHO:
        o = (i.get("tcp_mounts") or {}).get(w)
        if o:
            L.append("")
            L.append("Mount %s: `%s`" % (n, o))
    ti = i.get("tcp_info", {})
    L.append("")
    L.append("The three in turn figure by figure, after section 2 (its rpcrdma-nfsd stopped first: the RDMA figures "
             "are measured as before). rpcrdma-nfsd `%s` with `--tcp-port`; the kernel's nfsd (%s threads, the export "
             "of section 2, TCP port 2049); nfs-ganesha %s with FSAL_VFS exporting a directory of the same file system. "
             "Ratios: rpcrdma-nfsd / the other (above 1: rpcrdma-nfsd faster); CPU ratio below 1: rpcrdma-nfsd cheaper."
             % (ti.get("rnfsd_args", "?"), ti.get("knfsd_threads", "?"), ti.get("ganesha", "?")))
    L.append("")
    return L
