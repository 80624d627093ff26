"""bench/report_table.py: what the report's sections that set rpcrdma-nfsd
against other servers share (section 2t, NFSv3 over TCP: bench/report_tcp.py;
section 7, CephFS, NFSv3 and NFSv4.1: bench/report.py): one figure's ratios
rpcrdma-nfsd / each other (of the medians, and by run: the servers of one
run measured one after the other), its aims, and the Markdown of the
figure table, the CPU table and the aims sentence."""


def figure_names(i, seq_iodepth=False):
    """The figures' long names and units from the run's info @i (with the
    sequential figures' iodepth when @seq_iodepth)."""
    depth = (", iodepth %s" % i.get("seq_iodepth")) if seq_iodepth else ""
    return {"seq_write": ("sequential write, %s MiB, 1 MiB O_DIRECT%s" % (i.get("file_mb"), depth), "MB/s"),
            "seq_read": ("sequential read, %s MiB, 1 MiB O_DIRECT%s" % (i.get("file_mb"), depth), "MB/s"),
            "rand_read": ("4 KiB random read, iodepth %s, %s s" % (i.get("iodepth"), i.get("runtime_s")), "IOPS"),
            "rand_write": ("4 KiB random write, iodepth %s, %s s" % (i.get("iodepth"), i.get("runtime_s")), "IOPS"),
            "meta": ("metadata: create+stat+rename+remove of %s files" % i.get("meta_files"), "ops/s"),
            "meta8": ("metadata, 8 processes: %s files in all" % i.get("meta_files"), "ops/s")}


def pairer(figs, section, stats):
    """paired(fig, key, a, b): the ratios a / b of @key run by run in
    @section's figures @figs (stats of them: median, min, max), for runs
    both have."""
    def paired(fig, key, a, b):
        x = {r["run"]: r.get(key) for r in figs.get((section, fig, a), [])}
        y = {r["run"]: r.get(key) for r in figs.get((section, fig, b), [])}
        return stats([x[k] / y[k] for k in sorted(x, key=str)
                      if k in y and y[k] and x[k] is not None])
    return paired


def ways_entry(fig, ws, ours_w, others, paired, ratio, no_cpu=()):
    """One figure's entry: its metric (MB/s for the sequential figures,
    else IOPS), each server's aggregate @ws, and the ratios ours / each
    of @others (of the medians, by run; CPU per op too, but for @no_cpu)."""
    metric = "MBps" if fig.startswith("seq") else "iops"
    ours = ws.get(ours_w) or {}
    e = {"metric": metric, "who": ws, "ratio": {}, "paired_ratio": {},
         "cpu_ratio": {}, "paired_cpu_ratio": {}}
    for w in others:
        o = ws.get(w) or {}
        e["ratio"][w] = ratio(ours.get(metric), o.get(metric))
        e["paired_ratio"][w] = paired(fig, metric, ours_w, w)
        if w not in no_cpu:
            e["cpu_ratio"][w] = ratio(ours.get("cpu_us_per_op"), o.get("cpu_us_per_op"))
            e["paired_cpu_ratio"][w] = paired(fig, "cpu_us_per_op", ours_w, w)
    return e


def aims(entries):
    """The aims [(aim, ratio, target)] as the report keeps them: met when
    the ratio reaches the target, None when there is no ratio."""
    return [{"aim": a, "ratio": v, "target": t, "met": None if v is None else v >= t}
            for a, v, t in entries]


def figure_table(F, who, versus, names, fmt, fmt_ratio):
    """Markdown lines: a row per figure of @F, each server of @who [(key,
    label)] (its median, min–max), then for each of @versus [(key, label)]
    ours / it (bold, of the medians) and by run."""
    L = ["| figure | unit | %s | %s |" % (" | ".join(n for _, n in who),
                                          " | ".join("/ %s | by run" % n for _, n in versus)),
         "|" + " --- |" * (2 + len(who) + 2 * len(versus))]
    for fig, e in F.items():
        name, unit = names.get(fig, (fig, ""))
        m = e["metric"]
        d = 0 if m == "iops" else 1
        cells = [fmt((e["who"].get(w) or {}).get(m), d) for w, _ in who]
        for w, _ in versus:
            cells.append("**%s**" % fmt_ratio(e["ratio"].get(w)))
            cells.append(fmt(e["paired_ratio"].get(w), 2))
        L.append("| %s | %s | %s |" % (name, unit, " | ".join(cells)))
    return L


def cpu_table(F, header, who, versus, fmt, fmt_ratio, by_run=True):
    """Markdown lines: @header (its columns: figure, @who's CPU µs per op,
    then for each of @versus the CPU ratio ours / it, and by run when
    @by_run), and a row per figure of @F."""
    n = 1 + len(who) + len(versus) * (2 if by_run else 1)
    L = [header, "|" + " --- |" * n]
    for fig, e in F.items():
        cells = [fmt((e["who"].get(w) or {}).get("cpu_us_per_op"), 0) for w in who]
        for w in versus:
            cells.append(fmt_ratio(e["cpu_ratio"].get(w)))
            if by_run:
                cells.append(fmt(e["paired_cpu_ratio"].get(w), 2))
        L.append("| %s | %s |" % (fig, " | ".join(cells)))
    return L


def aims_sentence(F, fmt_ratio):
    """Each figure's aims of @F: "FIG AIM: RATIO (met|NOT met|n/a)", joined by "; "."""
    out = []
    for fig, e in F.items():
        for a in e["aims"]:
            out.append("%s %s: %s (%s)" % (fig, a["aim"], fmt_ratio(a["ratio"]),
                                           "n/a" if a["met"] is None else ("met" if a["met"] else "NOT met")))
    return "; ".join(out)
