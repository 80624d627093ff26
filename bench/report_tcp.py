"""bench/report_tcp.py: section servers_tcp of bench/report.py (issue 36):
section 2's figures over NFSv3/TCP for the kernel's nfsd, rpcrdma-nfsd and
nfs-ganesha (FSAL_VFS), the ratios rpcrdma-nfsd / each other (of the
medians, and by run), CPU per op, and the issue's aims: at least the
kernel's nfsd over TCP on every figure, 1.5x nfs-ganesha on small
operations."""

TCP_WHO = [("rnfsd-tcp", "rpcrdma-nfsd"), ("knfsd-tcp", "kernel nfsd"),
           ("ganesha-tcp", "nfs-ganesha VFS")]
TCP_SMALL = ("rand_read", "rand_write", "meta", "meta8")


def tcp_results(figs, agg, base_figs, stats, ratio):
    def paired(fig, key, a, b):
        x = {r["run"]: r.get(key) for r in figs.get(("servers_tcp", fig, a), [])}
        y = {r["run"]: r.get(key) for r in figs.get(("servers_tcp", fig, b), [])}
        return stats([x[k] / y[k] for k in sorted(x, key=str)
                      if k in y and y[k] and x[k] is not None])

    out = {}
    for fig in base_figs:
        ws = {w: agg("servers_tcp", fig, w) for w, _ in TCP_WHO}
        if not any(ws.values()):
            continue
        metric = "MBps" if fig.startswith("seq") else "iops"
        ours = ws.get("rnfsd-tcp") or {}
        e = {"metric": metric, "who": ws, "ratio": {}, "paired_ratio": {},
             "cpu_ratio": {}, "paired_cpu_ratio": {}}
        for w, _ in TCP_WHO[1:]:
            o = ws.get(w) or {}
            e["ratio"][w] = ratio(ours.get(metric), o.get(metric))
            e["paired_ratio"][w] = paired(fig, metric, "rnfsd-tcp", w)
            e["cpu_ratio"][w] = ratio(ours.get("cpu_us_per_op"), o.get("cpu_us_per_op"))
            e["paired_cpu_ratio"][w] = paired(fig, "cpu_us_per_op", "rnfsd-tcp", w)
        aims = [("at least the kernel's nfsd over TCP", e["ratio"].get("knfsd-tcp"), 1.0)]
        if fig in TCP_SMALL:
            aims.append(("1.5x nfs-ganesha", e["ratio"].get("ganesha-tcp"), 1.5))
        e["aims"] = [{"aim": a, "ratio": v, "target": t, "met": None if v is None else v >= t}
                     for a, v, t in aims]
        out[fig] = e
    return out or None


def tcp_markdown(R, fmt, fmt_ratio):
    i = R["info"]
    F = R["servers_tcp"]
    names = {"seq_write": ("sequential write, %s MiB, 1 MiB O_DIRECT" % i.get("file_mb"), "MB/s"),
             "seq_read": ("sequential read, %s MiB, 1 MiB O_DIRECT" % i.get("file_mb"), "MB/s"),
             "rand_read": ("4 KiB random read, iodepth %s, %s s" % (i.get("iodepth"), i.get("runtime_s")), "IOPS"),
             "rand_write": ("4 KiB random write, iodepth %s, %s s" % (i.get("iodepth"), i.get("runtime_s")), "IOPS"),
             "meta": ("metadata: create+stat+rename+remove of %s files" % i.get("meta_files"), "ops/s"),
             "meta8": ("metadata, 8 processes: %s files in all" % i.get("meta_files"), "ops/s")}
    L = ["## 2t. Servers over TCP: kernel nfsd vs rpcrdma-nfsd vs nfs-ganesha (kernel client, NFSv3/TCP)", ""]
    L.append("| figure | unit | %s | / kernel | by run | / ganesha | by run |" % " | ".join(n for _, n in TCP_WHO))
    L.append("| --- | --- |%s --- | --- | --- | --- |" % (" --- |" * len(TCP_WHO)))
    for fig, e in F.items():
        name, unit = names.get(fig, (fig, ""))
        m = e["metric"]
        d = 0 if m == "iops" else 1
        cells = [fmt((e["who"].get(w) or {}).get(m), d) for w, _ in TCP_WHO]
        rs = []
        for w in ("knfsd-tcp", "ganesha-tcp"):
            rs.append("**%s**" % fmt_ratio(e["ratio"].get(w)))
            rs.append(fmt(e["paired_ratio"].get(w), 2))
        L.append("| %s | %s | %s | %s |" % (name, unit, " | ".join(cells), " | ".join(rs)))
    L.append("")
    L.append("| figure | CPU µs/op rpcrdma-nfsd | kernel nfsd | nfs-ganesha | CPU ours / kernel | CPU ours / ganesha |")
    L.append("| --- | --- | --- | --- | --- | --- |")
    for fig, e in F.items():
        cells = [fmt((e["who"].get(w) or {}).get("cpu_us_per_op"), 0) for w, _ in TCP_WHO]
        L.append("| %s | %s | %s | %s |" % (fig, " | ".join(cells), fmt_ratio(e["cpu_ratio"].get("knfsd-tcp")),
                                            fmt_ratio(e["cpu_ratio"].get("ganesha-tcp"))))
    L.append("")
    aims = []
    for fig, e in F.items():
        for a in e["aims"]:
            aims.append("%s %s: %s (%s)" % (fig, a["aim"], fmt_ratio(a["ratio"]),
                                           "n/a" if a["met"] is None else ("met" if a["met"] else "NOT met")))
    L.append("Aims (issue 36), ratio of the medians: " + "; ".join(aims) + ".")
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
