#!/usr/bin/env python3
"""bench/report.py DIR: turn the raw results of bench/bench-inside.sh
(DIR/raw.jsonl and DIR/fio/*.json) into DIR/results.json and DIR/results.md,
and print the Markdown.  Medians with min and max over the runs; ratios
rpcrdma-nfsd / kernel nfsd, rpcrdma-nfs / kernel client, and NFS sequential
goodput / the perftest bandwidth of the matching RDMA operation (and the
bench_rpc 1 MiB echo goodput / ib_read_bw and ib_write_bw at 1 MiB),
section 5's memory per idle connection and the most connections held, and
section 6's NFSv4.1 workout phases (kernel nfsd s / rpcrdma-nfsd s).

MB/s here is 2^20 bytes per second, as perftest counts it.
"""
import json
import os
import statistics
import sys
from datetime import datetime, timezone

from report_table import aims, aims_sentence, cpu_table, figure_names, figure_table, pairer, ways_entry
from report_tcp import tcp_markdown, tcp_results

MB = 1048576.0


def load(d):
    rows = []
    with open(os.path.join(d, "raw.jsonl")) as f:
        for line in f:
            line = line.strip()
            if line:
                try:
                    rows.append(json.loads(line))
                except ValueError as e:
                    print("report: skipping bad line %r: %s" % (line, e), file=sys.stderr)
    return rows


def fio_job(d, rel):
    with open(os.path.join(d, rel)) as f:
        txt = f.read()
    # fio may print notes before the JSON
    return json.loads(txt[txt.index("{"):])["jobs"][0]


def stats(vals):
    vals = [v for v in vals if v is not None]
    if not vals:
        return None
    return {"median": statistics.median(vals), "min": min(vals), "max": max(vals), "n": len(vals),
            "runs": vals}


def fmt(s, digits=1, unit=""):
    if not s:
        return "n/a"
    f = "%%.%df" % digits
    if s["n"] == 1:
        return (f % s["median"]) + unit
    return (f + "%s (%s–%s)") % (s["median"], unit, f % s["min"], f % s["max"])


def ratio(a, b):
    if not a or not b or not b["median"]:
        return None
    return a["median"] / b["median"]


def fmt_ratio(r):
    return "n/a" if r is None else "%.2f" % r


WHO = {"knfsd": "kernel nfsd", "rnfsd": "rpcrdma-nfsd"}


# Section 3: the kernel client's ways of copying (the first is the one the
# main ratio uses) and rpcrdma-nfs's runs.
KERNEL_WAYS = [("kernel-cp", "kernel client, cp"),
               ("kernel-dd-direct", "kernel client, dd 1 MiB O_DIRECT"),
               ("kernel-fio", "kernel client, fio O_DIRECT (memory)")]


def ours_label(who):
    if who == "rpcrdma-nfs":
        return "rpcrdma-nfs"
    if who.startswith("rpcrdma-nfs-nconnect"):
        return "rpcrdma-nfs --nconnect %s" % who[len("rpcrdma-nfs-nconnect"):]
    return who


def client_results(rows, figs, agg, info):
    """Section 3: for get and put, every client's MB/s (whole command) and
    the ratios rpcrdma-nfs / kernel client (above 1: rpcrdma-nfs faster)
    against each way the kernel client copied; rpcrdma-nfs also with the
    median wall time of its `stat` (set-up) of the same options taken
    off."""
    ours = sorted({w for (sec, _, w) in figs if sec == "clients" and w.startswith("rpcrdma-nfs")},
                  key=lambda w: (w != "rpcrdma-nfs", w))
    ops = {}
    for r in rows:
        if r.get("section") == "clients_ops":
            o = ops.setdefault((r["figure"], r["who"]), {"writes": [], "commits": []})
            o["writes"].append(r["writes"])
            o["commits"].append(r["commits"])
    clients = {}
    for fig in ("get", "put"):
        kernel = {w: agg("clients", fig, w) for w, _ in KERNEL_WAYS}
        entry = {"kernel": {w: a for w, a in kernel.items() if a}, "ours": {}}
        for who in ours:
            c = agg("clients", fig, who)
            if not c:
                continue
            setup = agg("clients", "setup", who)
            net = None
            if setup:
                rs = figs[("clients", fig, who)]
                net = stats([x["bytes"] / MB / (x["wall_s"] - setup["wall_s"]["median"])
                             for x in rs if x["wall_s"] > setup["wall_s"]["median"]])
            o = {"label": ours_label(who), "run": c, "net_MBps": net,
                 "setup_s": setup and setup["wall_s"], "ratio": {}, "ratio_net": {}}
            for w, a in kernel.items():
                o["ratio"][w] = ratio(c.get("MBps"), a and a.get("MBps"))
                o["ratio_net"][w] = ratio(net, a and a.get("MBps"))
            entry["ours"][who] = o
        if not entry["kernel"] and not entry["ours"]:
            continue
        for (f, w), o in ops.items():
            if f == fig and w in entry["kernel"]:
                entry["kernel"][w]["writes"] = stats(o["writes"])
                entry["kernel"][w]["commits"] = stats(o["commits"])
        clients[fig] = entry
    return clients


def conn_run(r):
    """One probe run of section 5: per-connection figures (KiB) over the
    connections the server held when sampled (its side of the rdma_cm
    connections, minus those open before), and connections + NULL calls
    per second from the probe's open_ms."""
    p = r.get("probe") or {}
    out = {"who": r["who"], "n": r["n"], "run": r["run"], "figure": r["figure"],
           "connected": p.get("connected"), "refused": p.get("refused"), "failed": p.get("failed"),
           "null_ok": p.get("null_ok"), "dropped_during_hold": p.get("dropped_during_hold"),
           "open_ms": p.get("open_ms"), "first_failure": p.get("first_failure"), "status": r.get("status")}
    held = None
    if r.get("cm_conns_held") is not None and r.get("cm_conns_before") is not None:
        held = r["cm_conns_held"] - r["cm_conns_before"]
    elif p.get("connected") is not None:
        held = p["connected"] - (p.get("dropped_during_hold") or 0)
    out["held"] = held

    def per(a, b, scale=1.0):
        if held and r.get(a) is not None and r.get(b) is not None:
            return (r[a] - r[b]) / scale / held
        return None
    out["rss_kib_per_conn"] = per("rss_kb_held", "rss_kb_before")
    out["mr_kib_per_conn"] = per("mr_bytes_held", "mr_bytes_before", 1024.0)
    out["buf_kib_per_conn"] = per("buf_bytes_in_use_held", "buf_bytes_in_use_before", 1024.0)
    out["mem_avail_kib_per_conn"] = per("mem_avail_kb_before", "mem_avail_kb_held")
    out["probe_rss_kib"] = r.get("probe_rss_kb")
    out["conns_per_s"] = (p["connected"] * 1000.0 / p["open_ms"]) if p.get("open_ms") and p.get("connected") else None
    out["full"] = bool(p) and p.get("connected") == r["n"] and not p.get("refused") and not p.get("failed") \
        and not p.get("dropped_during_hold") and p.get("null_ok") == r["n"]
    return out


def conn_results(rows):
    runs = [conn_run(r) for r in rows
            if r.get("section") == "connections" and r.get("figure") in ("idle", "limit")
            and "error" not in r and "skipped" not in r]
    # the search for the most held (one run per N) measures the same
    # figures: its rows join the table
    idle = {}
    for x in runs:
        idle.setdefault((x["who"], x["n"]), []).append(x)
    per_n = {}
    for (who, n), xs in sorted(idle.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        e = per_n.setdefault(str(n), {"n": n})
        a = {"runs": len(xs), "held": stats([x["held"] for x in xs])}
        for k in ("rss_kib_per_conn", "mr_kib_per_conn", "buf_kib_per_conn", "mem_avail_kib_per_conn",
                  "probe_rss_kib", "conns_per_s"):
            st = stats([x[k] for x in xs])
            if st:
                a[k] = st
        e[WHO.get(who, who)] = a
    most = {}
    for who in ("rnfsd", "knfsd"):
        xs = [x for x in runs if x["who"] == who]
        if not xs:
            continue
        full = [x["n"] for x in xs if x["full"]]
        short = sorted((x for x in xs if not x["full"]), key=lambda x: x["n"])
        m = {"largest_n_held_in_full": max(full) if full else None,
             "most_held_at_once": max((x["held"] for x in xs if x["held"] is not None), default=None),
             "limit_runs": [x for x in xs if x["figure"] == "limit"]}
        if short:
            f = short[0]
            m["first_short"] = {k: f[k] for k in ("n", "connected", "refused", "failed", "dropped_during_hold",
                                                  "held", "first_failure", "status")}
        most[WHO[who]] = m
    skipped = [r for r in rows if r.get("section") == "connections" and "skipped" in r]
    errors = [r for r in rows if r.get("section") == "connections" and "error" in r]
    t = [r["section_s"] for r in rows if r.get("section") == "connections" and r.get("figure") == "time"]
    return {"per_n": per_n, "most_held": most, "runs": runs, "skipped": skipped, "errors": errors,
            "section_s": t[0] if t else None} if (runs or skipped or errors) else {}


NFS41_PHASES = ("write", "read", "readdir", "namespace", "tree_in", "tree_out", "rm")


def nfs41_results(rows):
    """Section 6: the workout's phases against kernel nfsd and rpcrdma-nfsd
    --nfs4.  Per phase and server: wall seconds and server CPU seconds
    (median, min, max over the runs), RPCs (and the median of each
    operation's calls); ratio = kernel nfsd s /
    rpcrdma-nfsd s (above 1: rpcrdma-nfsd faster), cpu_ratio = rpcrdma-nfsd
    CPU s / kernel nfsd CPU s (below 1: cheaper).  The total is per run, the
    sum of its phases, over the runs in which every phase passed."""
    ok = [r for r in rows if r.get("section") == "nfs41" and r.get("figure") in NFS41_PHASES
          and "error" not in r]
    errs = [r for r in rows if r.get("section") == "nfs41" and "error" in r]
    if not ok and not errs:
        return {}
    phases = {}
    for ph in NFS41_PHASES:
        e = {}
        for who in ("knfsd", "rnfsd"):
            rs = [r for r in ok if r["figure"] == ph and r["who"] == who]
            if rs:
                names = sorted({op for r in rs for op in (r.get("ops") or {})})
                e[WHO[who]] = {"runs": len(rs), "wall_s": stats([r["wall_s"] for r in rs]),
                               "cpu_s": stats([r["cpu_s"] for r in rs]), "rpcs": stats([r["rpcs"] for r in rs]),
                               "ops_median": {op: statistics.median([(r.get("ops") or {}).get(op, 0) for r in rs])
                                              for op in names}}
        if not e:
            continue
        k, o = e.get("kernel nfsd") or {}, e.get("rpcrdma-nfsd") or {}
        e["ratio"] = ratio(k.get("wall_s"), o.get("wall_s"))
        e["cpu_ratio"] = ratio(o.get("cpu_s"), k.get("cpu_s"))
        e["errors"] = len([r for r in errs if r.get("figure") == ph])
        phases[ph] = e
    total = {}
    for who in ("knfsd", "rnfsd"):
        runs = {}
        for r in ok:
            if r["who"] == who:
                runs.setdefault(r["run"], {})[r["figure"]] = r
        full = [x for x in runs.values() if len(x) == len(NFS41_PHASES)]
        if full:
            total[WHO[who]] = {"runs": len(full),
                               "wall_s": stats([sum(r["wall_s"] for r in x.values()) for x in full]),
                               "cpu_s": stats([sum(r["cpu_s"] for r in x.values()) for x in full]),
                               "rpcs": stats([sum(r["rpcs"] for r in x.values()) for x in full])}
    if total:
        k, o = total.get("kernel nfsd") or {}, total.get("rpcrdma-nfsd") or {}
        total["ratio"] = ratio(k.get("wall_s"), o.get("wall_s"))
        total["cpu_ratio"] = ratio(o.get("cpu_s"), k.get("cpu_s"))
    t = [r["section_s"] for r in rows if r.get("section") == "nfs41" and r.get("figure") == "time"]
    return {"phases": phases, "total": total, "errors": errs, "section_s": t[0] if t else None}


def main():
    d = sys.argv[1]
    rows = load(d)
    info = {}
    mounts = {}
    for r in rows:
        if r.get("section") == "info":
            if "mount" in r:
                mounts[r["mount"]] = r
            elif "client_tool" in r:
                info["client_info"] = r
            elif "transport_tool" in r:
                info["transport_info"] = r
            elif "connections_tool" in r:
                info["connections_info"] = r
            elif "nfs41_tool" in r:
                info["nfs41_info"] = r
            elif "nfs41_mount" in r:
                info.setdefault("nfs41_mounts", {})[r["nfs41_mount"]] = r.get("opts")
            elif "cephfs_mount" in r:
                info.setdefault("cephfs_mounts", {})[r["cephfs_mount"]] = r.get("opts")
            elif "cephfs_tool" in r:
                info["cephfs_info"] = r
            elif "cephfs_up_s" in r:
                info["cephfs_up_s"] = r["cephfs_up_s"]
            elif "tcp_mount" in r:
                info.setdefault("tcp_mounts", {})[r["tcp_mount"]] = r.get("opts")
            elif "tcp_info" in r:
                info["tcp_info"] = r
            else:
                info.update(r)
    # perftest now and then prints a 0.00 MB/s row (seen with ib_send_bw
    # under TCG): a failed run, not a measurement
    for r in rows:
        if r.get("section") == "wire" and "error" not in r and r.get("bw_MiBps") == 0:
            r["error"] = "perftest reported 0 MB/s"
    errors = [r for r in rows if "error" in r]

    # ---------------------------------------------------------- 1. wire
    wire = {}
    for r in rows:
        if r.get("section") != "wire" or "error" in r:
            continue
        key = "%s/%d" % (r["tool"], r["size"])
        w = wire.setdefault(key, {"tool": r["tool"], "size": r["size"], "iters": r.get("iters"), "_": []})
        w["_"].append(r)
    for w in wire.values():
        rs = w.pop("_")
        if w["tool"].endswith("_lat"):
            for k in ("lat_typical_us", "lat_avg_us", "lat_p99_us", "lat_min_us"):
                w[k] = stats([x.get(k) for x in rs])
        else:
            w["bw_MBps"] = stats([x.get("bw_MiBps") for x in rs])

    # ---------------------------------------------------------- 2./3. NFS figures
    figs = {}
    for r in rows:
        if r.get("section") not in ("servers", "servers_tcp", "clients", "cephfs", "cephfs_strace") or "figure" not in r \
                or "error" in r or "wall_s" not in r:
            continue
        rec = {"wall_s": r["wall_s"], "cpu_s": r["cpu_s"], "rpcs": r["rpcs"], "run": r.get("run")}
        if "fio" in r:
            j = fio_job(d, r["fio"])
            io = j["write"] if j["write"]["total_ios"] else j["read"]
            rec["ops"] = io["total_ios"]
            rec["bytes"] = io["io_bytes"]
            rec["MBps"] = io["bw_bytes"] / MB
            rec["iops"] = io["iops"]
        elif "meta_s" in r:
            rec["ops"] = r["ops"]
            rec["iops"] = r["ops"] / r["meta_s"]
            for k in ("create_s", "stat_s", "rename_s", "remove_s", "meta_s"):
                rec[k] = r[k]
        elif "calls_per_s" in r:
            rec["ops"] = r["ops"]
            rec["iops"] = r["calls_per_s"]
            rec["lat_median_us"] = r.get("lat_median_us")
        elif r["figure"] in ("get", "put"):
            rec["bytes"] = info.get("file_mb", 0) * MB
            rec["ops"] = r["rpcs"] or None
            rec["MBps"] = rec["bytes"] / MB / r["wall_s"]
        rec["cpu_us_per_op"] = (r["cpu_s"] / rec["ops"] * 1e6) if rec.get("ops") else None
        rec["cpu_us_per_rpc"] = (r["cpu_s"] / r["rpcs"] * 1e6) if r["rpcs"] else None
        who = r["who"]
        if r["section"] == "clients" and who == "kernel":
            who = "kernel-fio"  # runs before 2026-12-02 session 6: fio was the only kernel figure
        figs.setdefault((r["section"], r["figure"], who), []).append(rec)

    def agg(section, figure, who):
        rs = figs.get((section, figure, who))
        if not rs:
            return None
        out = {"runs": len(rs)}
        for k in ("MBps", "iops", "lat_median_us", "cpu_us_per_op", "cpu_us_per_rpc", "wall_s", "cpu_s", "rpcs",
                  "create_s", "stat_s", "rename_s", "remove_s", "meta_s"):
            s = stats([x.get(k) for x in rs])
            if s:
                out[k] = s
        return out

    def paired(fig, key):
        # rpcrdma-nfsd / kernel nfsd of each run: the two servers' runs of
        # one round follow each other, so a host whose speed drifts between
        # rounds moves both sides of a pair alike (a ratio of medians can
        # pair a fast round of one with a slow round of the other)
        k = {x["run"]: x.get(key) for x in figs.get(("servers", fig, "knfsd"), [])}
        o = {x["run"]: x.get(key) for x in figs.get(("servers", fig, "rnfsd"), [])}
        return stats([o[run] / k[run] for run in sorted(k, key=str)
                      if run is not None and run in o and k[run] and o[run] is not None])

    servers = {}
    # each figure, then the ones run again in split placement (FIGURE_split)
    base_figs = ("seq_write", "seq_read", "rand_read", "rand_write", "meta", "meta8", "null1", "null8", "null64")
    for fig in base_figs + tuple(f + "_split" for f in base_figs):
        k, rn = agg("servers", fig, "knfsd"), agg("servers", fig, "rnfsd")
        if not k and not rn:
            continue
        metric = "MBps" if fig.startswith("seq") else "iops"
        servers[fig] = {"metric": metric, "knfsd": k, "rpcrdma-nfsd": rn,
                        "ratio": ratio(rn and rn.get(metric), k and k.get(metric)),
                        "cpu_ratio": ratio(rn and rn.get("cpu_us_per_op"), k and k.get("cpu_us_per_op")),
                        "paired_ratio": paired(fig, metric),
                        "paired_cpu_ratio": paired(fig, "cpu_us_per_op")}

    clients = client_results(rows, figs, agg, info)
    cephfs = cephfs_results(rows, figs, agg, base_figs)
    servers_tcp = tcp_results(figs, agg, base_figs, stats, ratio)
    skipped = {r["section"]: r["skipped"] for r in rows if "skipped" in r}

    # ---------------------------------------------------------- 4. transport
    # bench_rpc: NULL calls at 1, 8, 64 in flight; 1 MiB echo, whose data
    # comes in by RDMA Read (Read chunk) and goes back by RDMA Write (Write
    # chunk): its goodput set against ib_read_bw and ib_write_bw at 1 MiB.
    transport = {}
    for r in rows:
        if r.get("section") != "transport" or "figure" not in r or "error" in r:
            continue
        key = "%s/%d" % (r["figure"], r["inflight"])
        t = transport.setdefault(key, {"figure": r["figure"], "inflight": r["inflight"],
                                       "bytes": r.get("bytes"), "_": []})
        t["_"].append(r)
    for t in transport.values():
        rs = t.pop("_")
        for k in ("calls_per_s", "lat_median_us", "lat_p99_us", "MBps", "round_trips_per_s"):
            st = stats([x.get(k) for x in rs])
            if st:
                t[k] = st
    for t in transport.values():
        if t["figure"] == "null":
            # the raw verbs limit at the same depth (bench_verbs): one
            # Send each way per round trip, as per NULL call
            raw = transport.get("raw/%d" % t["inflight"])
            t["vs_raw"] = ratio(t.get("calls_per_s"), raw and raw.get("round_trips_per_s"))
        if t["figure"] == "echo":
            for tool in ("ib_read_bw", "ib_write_bw"):
                w = wire.get("%s/1048576" % tool)
                t["vs_" + tool] = ratio(t.get("MBps"), w and w.get("bw_MBps"))

    connections = conn_results(rows)
    nfs41 = nfs41_results(rows)

    # ---------------------------------------------------------- goodput / wire
    # NFS WRITE data moves by RDMA Read (the server pulls it): ib_read_bw;
    # NFS READ data by RDMA Write (the server pushes it): ib_write_bw.
    goodput = []
    match = {"seq_write": "ib_read_bw", "seq_read": "ib_write_bw", "put": "ib_read_bw", "get": "ib_write_bw"}
    cl = [(fig, dict(list(e["kernel"].items()) +
                     [(o["label"], o["run"]) for o in e["ours"].values()] +
                     [(o["label"] + " (set-up excluded)", o["net_MBps"]) for o in e["ours"].values()]))
          for fig, e in clients.items()]
    for fig, entry in list(servers.items()) + cl:
        if fig not in match:
            continue
        for who, a in entry.items():
            if who in ("metric", "ratio", "cpu_ratio", "ratio_net", "paired_ratio",
                       "paired_cpu_ratio") or not isinstance(a, dict):
                continue
            bw = a if "median" in a else a.get("MBps")
            if not bw:
                continue
            row = {"figure": fig, "who": who, "MBps": bw["median"], "perftest": match[fig]}
            for size in (65536, 1048576):
                w = wire.get("%s/%d" % (match[fig], size))
                row["vs_%d" % size] = ratio(bw, w and w.get("bw_MBps"))
            goodput.append(row)

    result = {"generated": datetime.now(timezone.utc).isoformat(timespec="seconds"),
              "info": info, "mounts": mounts, "wire": wire, "servers": servers,
              "clients": clients, "transport": transport, "connections": connections, "nfs41": nfs41,
              "cephfs": cephfs, "servers_tcp": servers_tcp,
              "goodput_vs_wire": goodput, "skipped": skipped,
              "errors": errors, "units": {"MBps": "2^20 bytes/s", "cpu_us_per_op": "server CPU microseconds (utime+stime) per I/O or metadata op"}}
    for name, key in (("rpcrdma-nfsd-stats.json", "rpcrdma_nfsd_final_stats"),
                      ("rpcrdma-nfsd-tcp-stats.json", "rpcrdma_nfsd_tcp_final_stats"),
                      ("rpcrdma-nfsd-cephfs-stats.json", "rpcrdma_nfsd_cephfs_final_stats"),
                      ("rpcrdma-nfsd-nfs41-stats.json", "rpcrdma_nfsd_nfs41_final_stats")):
        sp = os.path.join(d, name)
        if os.path.exists(sp):
            try:
                result[key] = json.load(open(sp))
            except ValueError:
                pass
    with open(os.path.join(d, "results.json"), "w") as f:
        json.dump(result, f, indent=1)

    md = markdown(result)
    with open(os.path.join(d, "results.md"), "w") as f:
        f.write(md)
    sys.stdout.write(md)


def markdown(R):
    i = R["info"]
    L = []
    L.append("# rpcrdma bench, %s" % R["generated"])
    L.append("")
    L.append("%s, kernel %s, %s CPUs; server %s, client %s, device %s. "
             "%s runs per figure: median (min–max). MB/s = 2^20 B/s. perftest %s." %
             ("test VM (qemu TCG, Soft-RoCE)" if i.get("vm") else "host",
              i.get("kernel", "?"), i.get("ncpu", "?"), i.get("server", "?"), i.get("client", "?"),
              i.get("rdma_dev", "?"), i.get("repeat", "?"),
              "polling, ib_read_bw sleeping on CQ events (-e)" if i.get("perftest_events") else "polling"))
    L.append("")

    # 1
    L.append("## 1. Wire limit (perftest, rdma_cm)")
    L.append("")
    W = R["wire"]
    if W:
        L.append("| test | 4 KiB | 64 KiB | 1 MiB |")
        L.append("| --- | --- | --- | --- |")
        for tool in ("ib_write_bw", "ib_read_bw", "ib_send_bw"):
            cells = []
            for size in (4096, 65536, 1048576):
                w = W.get("%s/%d" % (tool, size))
                cells.append(fmt(w and w.get("bw_MBps")))
            L.append("| %s MB/s | %s |" % (tool, " | ".join(cells)))
        lat = W.get("ib_send_lat/64")
        if lat:
            L.append("")
            L.append("ib_send_lat, 64 B: typical %s µs, average %s µs, 99th percentile %s µs." %
                     (fmt(lat["lat_typical_us"], 2), fmt(lat["lat_avg_us"], 2), fmt(lat["lat_p99_us"], 2)))
    else:
        L.append("not measured")
    L.append("")

    # 2
    L.append("## 2. Servers compared: kernel nfsd vs rpcrdma-nfsd (same kernel client)")
    L.append("")
    S = R["servers"]
    names = {"seq_write": ("sequential write, %s MiB, 1 MiB O_DIRECT, iodepth %s" % (i.get("file_mb"), i.get("seq_iodepth")), "MB/s"),
             "seq_read": ("sequential read, %s MiB, 1 MiB O_DIRECT, iodepth %s" % (i.get("file_mb"), i.get("seq_iodepth")), "MB/s"),
             "rand_read": ("4 KiB random read, iodepth %s, %s s" % (i.get("iodepth"), i.get("runtime_s")), "IOPS"),
             "rand_write": ("4 KiB random write, iodepth %s, %s s" % (i.get("iodepth"), i.get("runtime_s")), "IOPS"),
             "meta": ("metadata: create+stat+rename+remove of %s files" % i.get("meta_files"), "ops/s"),
             "meta8": ("metadata, 8 processes at once on one mount: %s files in all" % i.get("meta_files"), "ops/s")}
    for n in (1, 8, 64):
        names["null%d" % n] = ("NFSv3 NULL, %d in flight (bench_rpc client)" % n, "calls/s")
    if S:
        L.append("| figure | unit | kernel nfsd | rpcrdma-nfsd | ratio | ratio by run | CPU µs/op kernel nfsd | CPU µs/op rpcrdma-nfsd | CPU ratio | CPU ratio by run |")
        L.append("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
        for fig, e in S.items():
            name, unit = names[fig.removesuffix("_split")]
            if fig.endswith("_split"):
                name += "; split: workload on CPU %s, servers on CPU %s" % (
                    i.get("split_workload_cpu", 0), i.get("split_server_cpus", "1"))
            m = e["metric"]
            k, r = e["knfsd"] or {}, e["rpcrdma-nfsd"] or {}
            d = 0 if m == "iops" else 1
            L.append("| %s | %s | %s | %s | **%s** | %s | %s | %s | %s | %s |" % (
                name, unit, fmt(k.get(m), d), fmt(r.get(m), d), fmt_ratio(e["ratio"]),
                fmt(e.get("paired_ratio"), 2), fmt(k.get("cpu_us_per_op"), 0),
                fmt(r.get("cpu_us_per_op"), 0), fmt_ratio(e["cpu_ratio"]),
                fmt(e.get("paired_cpu_ratio"), 2)))
        for mfig in ("meta", "meta_split", "meta8", "meta8_split"):
            meta = S.get(mfig)
            if not meta:
                continue
            parts = []
            for who in ("knfsd", "rpcrdma-nfsd"):
                a = meta[who]
                if a:
                    parts.append("%s: create %.2f s, stat %.2f s, rename %.2f s, remove %.2f s" % (
                        "kernel nfsd" if who == "knfsd" else who,
                        a["create_s"]["median"], a["stat_s"]["median"], a["rename_s"]["median"],
                        a["remove_s"]["median"]))
            L.append("")
            L.append("Metadata phases%s (median%s): " % (" of 8 processes" if mfig.startswith("meta8") else "",
                                                      ", split placement" if mfig.endswith("_split") else "")
                     + "; ".join(parts) + ".")
        lat = []
        for n in (1, 8, 64):
            e = S.get("null%d" % n)
            if e and (e["knfsd"] or {}).get("lat_median_us") and (e["rpcrdma-nfsd"] or {}).get("lat_median_us"):
                lat.append("%d in flight: kernel nfsd %.0f, rpcrdma-nfsd %.0f" % (
                    n, e["knfsd"]["lat_median_us"]["median"], e["rpcrdma-nfsd"]["lat_median_us"]["median"]))
        if lat:
            L.append("")
            L.append("NULL round trip, median of the runs' median latencies (µs): " + "; ".join(lat) + ".")
        for who, mo in R["mounts"].items():
            L.append("")
            L.append("Mount %s: `%s`" % ("kernel nfsd" if who == "knfsd" else "rpcrdma-nfsd", mo.get("opts")))
        L.append("")
        L.append("ratio = rpcrdma-nfsd / kernel nfsd (above 1: rpcrdma-nfsd faster); CPU ratio = rpcrdma-nfsd CPU per op / kernel nfsd CPU per op (below 1: cheaper). "
                 "Both are ratios of the medians; 'by run' = the median (min–max) of the ratios of each run, whose two servers ran one after the other, "
                 "so a host whose speed drifts between runs weighs on both alike: where the two disagree, the host moved during the figure. "
                 "CPU: utime+stime of the rpcrdma-nfsd process, or of the [nfsd] threads; one op = one I/O of the figure's size, one metadata call, or one NULL call. "
                 "Split placement: the figure again with the workload (fio's job, the metadata script) kept to one CPU and every thread of the server "
                 "(the [nfsd] threads; all of rpcrdma-nfsd's) to another, for both servers alike, as when client and server are two machines; "
                 "the other rows let the scheduler place both.")
    else:
        L.append("not measured")
    L.append("")

    # goodput
    G = R["goodput_vs_wire"]
    if G:
        L.append("### NFS sequential goodput / perftest bandwidth")
        L.append("")
        L.append("| figure | who | MB/s | RDMA op | / perftest 64 KiB | / perftest 1 MiB |")
        L.append("| --- | --- | --- | --- | --- | --- |")
        for g in G:
            who = dict([("knfsd", "kernel nfsd")] + KERNEL_WAYS).get(g["who"], g["who"])
            L.append("| %s | %s | %.1f | %s | %s | %s |" % (g["figure"], who, g["MBps"], g["perftest"],
                                                          fmt_ratio(g["vs_65536"]), fmt_ratio(g["vs_1048576"])))
        L.append("")

    # 3
    L.append("## 3. Clients compared: kernel client vs rpcrdma-nfs (same kernel nfsd)")
    L.append("")
    C = R["clients"]
    if C:
        ci = i.get("client_info", {})
        ways = [(w, n) for w, n in KERNEL_WAYS if any(w in e["kernel"] for e in C.values())]
        L.append("| figure | %s |" % " | ".join("%s MB/s" % n for _, n in ways))
        L.append("| --- |%s" % (" --- |" * len(ways)))
        for fig, e in C.items():
            L.append("| %s %s MiB | %s |" % (fig, i.get("file_mb"), " | ".join(
                fmt((e["kernel"].get(w) or {}).get("MBps")) for w, _ in ways)))
        L.append("")
        L.append("| figure | client | MB/s (whole command) | %s | MB/s (set-up excluded) | %s |" % (
            " | ".join("ratio to %s" % n for _, n in ways),
            " | ".join("ratio to %s" % n for _, n in ways)))
        L.append("| --- | --- | --- |%s --- |%s" % (" --- |" * len(ways), " --- |" * len(ways)))
        for fig, e in C.items():
            for who, o in e["ours"].items():
                L.append("| %s %s MiB | %s | %s | %s | %s | %s |" % (
                    fig, i.get("file_mb"), o["label"], fmt(o["run"].get("MBps")),
                    " | ".join(("**%s**" if k == 0 else "%s") % fmt_ratio(o["ratio"].get(w))
                               for k, (w, _) in enumerate(ways)),
                    fmt(o["net_MBps"]),
                    " | ".join(fmt_ratio(o["ratio_net"].get(w)) for w, _ in ways)))
        L.append("")
        put = C.get("put", {}).get("kernel", {})
        oc = ["%s: %s WRITEs, %s COMMITs per run" % (n, fmt(put[w].get("writes"), 0), fmt(put[w].get("commits"), 0))
              for w, n in ways if w in put and put[w].get("commits")]
        if ci.get("kernel_copy"):
            cold = ("the kernel mount made again (umount, mount) before each kernel run"
                    if ci.get("kernel_cold") == "remount" else "the guest's caches dropped before each")
            L.append("ratio = rpcrdma-nfs MB/s / kernel client MB/s (above 1: rpcrdma-nfs faster), both timed as "
                     "whole commands, %s. Kernel client on the mount (`%s`): "
                     "`cp` to or from a local file (its close() writes back and COMMITs: the put is stable on the "
                     "server when cp returns); `dd bs=1M` with O_DIRECT on the mount side; fio 1 MiB O_DIRECT, "
                     "libaio, iodepth %s, from or into memory (no local file). rpcrdma-nfs `%s` (and `--nconnect "
                     "%s`): 'set-up excluded' subtracts the median wall time of an `rpcrdma-nfs stat` of the file "
                     "with the same options (start, MOUNT, connection set-up, one call).%s" % (
                         cold, (R["mounts"].get("knfsd") or {}).get("opts", "?"), ci.get("kernel_iodepth", "?"),
                         ci.get("args", ""), ci.get("nconnect", "?"),
                         (" Kernel puts sent " + "; ".join(oc) + ".") if oc else ""))
        else:
            # runs before 2026-12-02 (session 6): fio only, caches not dropped
            L.append("ratio = rpcrdma-nfs / kernel client. Kernel client: fio, 1 MiB O_DIRECT, iodepth %s, on "
                     "the mount. rpcrdma-nfs `%s`: wall time of the whole command, which includes its start, "
                     "MOUNT and connection set-up; 'set-up excluded' subtracts the median wall time of an "
                     "`rpcrdma-nfs stat` of the file." % (ci.get("kernel_iodepth", "?"), ci.get("args", "")))
    else:
        L.append(R["skipped"].get("clients", "not measured"))
    L.append("")

    # 4
    L.append("## 4. Transport alone: rpcrdma client -> rpcrdma server (bench_rpc)")
    L.append("")
    T = R.get("transport") or {}
    nulls = sorted((t for t in T.values() if t["figure"] == "null"), key=lambda t: t["inflight"])
    echos = sorted((t for t in T.values() if t["figure"] == "echo"), key=lambda t: t["inflight"])
    if nulls or echos:
        ti = i.get("transport_info", {})
        if nulls:
            L.append("| NULL calls in flight | calls/s | latency median µs | latency 99th percentile µs "
                     "| raw verbs round trips/s | NULL / raw |")
            L.append("| --- | --- | --- | --- | --- | --- |")
            for t in nulls:
                raw = T.get("raw/%d" % t["inflight"]) or {}
                L.append("| %d | %s | %s | %s | %s | %s |" % (
                    t["inflight"], fmt(t.get("calls_per_s"), 0),
                    fmt(t.get("lat_median_us"), 0), fmt(t.get("lat_p99_us"), 0),
                    fmt(raw.get("round_trips_per_s"), 0), fmt_ratio(t.get("vs_raw"))))
            L.append("")
            L.append("Raw verbs: bench_verbs, the same depth of 68-byte messages echoed by the server, "
                     "one Send each way per round trip as per NULL call, no RPC (one thread a side, "
                     "one CQ, sleeping on its channel, Sends of a poll batch posted as one chain): "
                     "the most the device and host allow the NULL exchange.")
            L.append("")
        if echos:
            L.append("| echo | in flight | MB/s (each way) | latency median µs | / ib_read_bw 1 MiB | / ib_write_bw 1 MiB |")
            L.append("| --- | --- | --- | --- | --- | --- |")
            for t in echos:
                L.append("| %s KiB | %d | %s | %s | %s | %s |" % (
                    (t.get("bytes") or 0) // 1024, t["inflight"], fmt(t.get("MBps")),
                    fmt(t.get("lat_median_us"), 0), fmt_ratio(t.get("vs_ib_read_bw")),
                    fmt_ratio(t.get("vs_ib_write_bw"))))
            L.append("")
        L.append("bench_rpc: program 0x20000088, asynchronous calls (rpcrdma_clnt_call_async) kept in flight; "
                 "NULL for %s s per figure; echo: %s calls whose 1 MiB argument comes in through a Read chunk "
                 "(RDMA Read by the server) and goes back as DDP result data through a Write chunk (RDMA Write), "
                 "MB/s = echoed bytes per second, each way. Latency: call sent to completion callback.%s" %
                 (ti.get("null_seconds", "?"), ti.get("echo_count", "?"),
                  (" Extra client options: `%s`." % ti["args"]) if ti.get("args") else ""))
    else:
        L.append(R["skipped"].get("transport", "not measured"))
    L.append("")

    # 5
    L.extend(conn_markdown(R))
    # 2t
    if R.get("servers_tcp"):
        L.extend(tcp_markdown(R, fmt, fmt_ratio))
    # 6
    if R.get("nfs41"):
        L.extend(nfs41_markdown(R))
    # 7
    if R.get("cephfs"):
        L.extend(cephfs_markdown(R))

    if R["errors"]:
        L.append("## Errors")
        L.append("")
        for e in R["errors"]:
            L.append("- %s" % json.dumps(e))
        L.append("")
    return "\n".join(L)


# Section 7: the ways to CephFS, ours first; the ratios are ours / each other.
CEPH_WHO = [("ceph-rnfsd", "rpcrdma-nfsd cephfs backend (RDMA)"),
            ("ceph-ganesha", "nfs-ganesha FSAL_CEPH (TCP)"),
            ("ceph-kreexport", "kernel nfsd re-export (RDMA)"),
            ("ceph-direct", "kernel CephFS client, direct")]
CEPH_SHORT = {"ceph-rnfsd": "rpcrdma-nfsd", "ceph-ganesha": "nfs-ganesha",
              "ceph-kreexport": "kernel re-export", "ceph-direct": "direct",
              "ceph-rnfsd4": "rpcrdma-nfsd NFSv4.1", "ceph-ganesha4": "nfs-ganesha NFSv4.1",
              "ceph-kreexport4": "kernel re-export NFSv4.1"}
# The same servers mounted with NFSv4.1 (ganesha over TCP); the direct
# mount is the same ceiling.  Same order as CEPH_WHO.
CEPH_WHO41 = [("ceph-rnfsd4", "rpcrdma-nfsd cephfs backend, NFSv4.1 (RDMA)"),
              ("ceph-ganesha4", "nfs-ganesha FSAL_CEPH, NFSv4.1 (TCP)"),
              ("ceph-kreexport4", "kernel nfsd re-export, NFSv4.1 (RDMA)"),
              ("ceph-direct", "kernel CephFS client, direct")]
# The aims (issue 35): at or above the kernel's re-export on every
# figure, 1.5x nfs-ganesha on small operations, sequential within 80 % of
# the direct mount.
CEPH_SMALL = ("rand_read", "rand_write", "meta", "meta8")


def cephfs_results(rows, figs, agg, base_figs):
    """Section 7: every figure for each way to CephFS, the ratios
    rpcrdma-nfsd / each other (of the medians, and by run: a run measures
    the four one after the other), CPU per op and its ratios, the aims
    (met or not), and system calls per op of the strace runs."""
    paired = pairer(figs, "cephfs", stats)

    def ways_figures(who):
        res = {}
        ours_w, gan, kre, direct = (w for w, _ in who)
        for fig in base_figs:
            ws = {w: agg("cephfs", fig, w) for w, _ in who}
            if not ws.get(ours_w):
                continue
            e = ways_entry(fig, ws, ours_w, [w for w, _ in who[1:]], paired, ratio,
                           no_cpu=("ceph-direct",))
            goals = [("at or above the kernel's re-export", e["ratio"].get(kre), 1.0)]
            if fig in CEPH_SMALL:
                goals.append(("1.5x nfs-ganesha", e["ratio"].get(gan), 1.5))
            if fig.startswith("seq"):
                goals.append(("within 80 % of the direct mount", e["ratio"].get(direct), 0.8))
            e["aims"] = aims(goals)
            res[fig] = e
        return res

    out = {"figures": ways_figures(CEPH_WHO), "figures41": ways_figures(CEPH_WHO41), "strace": []}
    for r in rows:
        if r.get("section") != "cephfs_strace" or r.get("figure") != "syscalls":
            continue
        run = (figs.get(("cephfs_strace", r["of"], r["who"])) or [{}])[0]
        ops = run.get("ops")
        n = r.get("syscalls")
        out["strace"].append({"who": r["who"], "figure": r["of"], "syscalls": n, "ops": ops,
                              "per_op": (n / ops) if n and ops else None, "file": r.get("strace")})
    if not out["figures"] and not out["figures41"] and not out["strace"]:
        return None
    return out


def cephfs_phases(F, who, prefix):
    """Markdown lines: the metadata figures' phases (median seconds) of
    each way of @who in @F, after @prefix ("Metadata phases")."""
    L = []
    for mfig in ("meta", "meta8"):
        e = F.get(mfig)
        if not e:
            continue
        parts = []
        for w, _ in who:
            a = e["who"].get(w)
            if a and a.get("create_s"):
                parts.append("%s: create %.2f s, stat %.2f s, rename %.2f s, remove %.2f s" % (
                    CEPH_SHORT[w], a["create_s"]["median"], a["stat_s"]["median"],
                    a["rename_s"]["median"], a["remove_s"]["median"]))
        L.append("")
        L.append("%s%s (median): " % (prefix, " of 8 processes" if mfig == "meta8" else "") + "; ".join(parts) + ".")
    return L


def cephfs_ways_markdown(F, who, names, cpu_figure, aims_prefix, phases_prefix):
    """Markdown lines of one protocol's ways to CephFS (@who, ours first):
    the figure table with ours / re-export, ganesha and direct, the CPU
    table (its first column @cpu_figure), the aims and the metadata phases."""
    ours, gan, kre, direct = (w for w, _ in who)
    versus = [(kre, "re-export"), (gan, "ganesha"), (direct, "direct")]
    L = figure_table(F, who, versus, names, fmt, fmt_ratio)
    L.append("")
    L.extend(cpu_table(F, "| %s | CPU µs/op rpcrdma-nfsd | CPU µs/op nfs-ganesha | CPU µs/op kernel re-export | "
                          "CPU rpcrdma-nfsd / re-export | by run | CPU rpcrdma-nfsd / ganesha | by run |" % cpu_figure,
                       [ours, gan, kre], [kre, gan], fmt, fmt_ratio))
    L.append("")
    L.append(aims_prefix + aims_sentence(F, fmt_ratio) + ".")
    L.extend(cephfs_phases(F, who, phases_prefix))
    return L


def cephfs_markdown(R):
    i = R["info"]
    C = R["cephfs"]
    L = ["## 7. CephFS: rpcrdma-nfsd's cephfs backend vs nfs-ganesha, the kernel's re-export and the direct mount", ""]
    names = figure_names(i, seq_iodepth=True)
    F = C["figures"]
    if F:
        L.extend(cephfs_ways_markdown(F, CEPH_WHO, names, "figure", "Aims (issue 35), ratio of the medians: ",
                                      "Metadata phases"))
    F41 = C.get("figures41") or {}
    if F41:
        # the same figures with the three servers mounted with NFSv4.1
        L.append("")
        L.append("NFSv4.1 (the same server processes, mounted a second time):")
        L.append("")
        L.extend(cephfs_ways_markdown(F41, CEPH_WHO41, names, "figure (NFSv4.1)",
                                      "Aims over NFSv4.1, ratio of the medians: ", "NFSv4.1 metadata phases"))
    if C["strace"]:
        L.append("")
        L.append("| strace -c -f of the gateway, one extra run | figure | system calls | operations | calls per op |")
        L.append("| --- | --- | --- | --- | --- |")
        for t in C["strace"]:
            L.append("| %s | %s | %s | %s | %s |" % (CEPH_SHORT.get(t["who"], t["who"]), t["figure"],
                                                   t["syscalls"], t["ops"],
                                                   "n/a" if t["per_op"] is None else "%.1f" % t["per_op"]))
    for w, _ in CEPH_WHO + CEPH_WHO41[:3]:
        o = (i.get("cephfs_mounts") or {}).get(w)
        if o:
            L.append("")
            L.append("Mount %s: `%s`" % (CEPH_SHORT[w], o))
    L.append("")
    ci = i.get("cephfs_info", {})
    L.append("One single-node cluster (scripts/ceph-up: one mon, a memstore OSD, one MDS; up in %s s), "
             "the ways in turn figure by figure, each in a directory of its own under the file system's root, "
             "with section 2's fio jobs and metadata driver. rpcrdma-nfsd `%s` exporting `cephfs://admin@cephfs/` "
             "(NFSv3 over RDMA; NFSv4.1 over RDMA for its second mount); nfs-ganesha with FSAL_CEPH (NFSv3, and "
             "NFSv4.1 for its second mount, over TCP: Debian's has no RDMA); the kernel nfsd "
             "(%s threads) exporting the guest kernel's CephFS mount (`sync,fsid=9`, NFSv3 over RDMA); the kernel "
             "CephFS client itself. Ratios: rpcrdma-nfsd / the other (above 1: rpcrdma-nfsd faster); CPU ratio below 1: "
             "rpcrdma-nfsd cheaper. CPU: the rpcrdma-nfsd and ganesha.nfsd processes, libcephfs's threads included; "
             "the [nfsd] threads for the re-export, without the kernel CephFS client's work in other kernel threads "
             "(a lower bound)." % (i.get("cephfs_up_s", "?"), ci.get("rnfsd_args", "?"), ci.get("knfsd_threads", "?")))
    L.append("")
    return L


def conn_markdown(R):
    L = ["## 5. Connections: many idle connections (rpcrdma-probe load mode)", ""]
    C = R.get("connections") or {}
    ci = R["info"].get("connections_info", {})
    if not C:
        L.append("not measured")
        L.append("")
        return L
    if C["per_n"]:
        L.append("| N | rpcrdma-nfsd VmRSS KiB/conn | rpcrdma-nfsd registered (mr_bytes) KiB/conn | "
                 "rpcrdma-nfsd buffers in use KiB/conn | MemAvailable drop KiB/conn, rpcrdma-nfsd | "
                 "MemAvailable drop KiB/conn, kernel nfsd | connections + NULL/s, rpcrdma-nfsd | "
                 "connections + NULL/s, kernel nfsd | probe VmRSS KiB |")
        L.append("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
        for e in C["per_n"].values():
            r, k = e.get("rpcrdma-nfsd") or {}, e.get("kernel nfsd") or {}
            n = e["n"]

            def held(a):
                h = a.get("held")
                if h and h["median"] != n:
                    return " (held %d)" % h["median"]
                return ""
            L.append("| %d | %s | %s | %s | %s%s | %s%s | %s | %s | %s |" % (
                n, fmt(r.get("rss_kib_per_conn"), 0), fmt(r.get("mr_kib_per_conn"), 0),
                fmt(r.get("buf_kib_per_conn"), 0), fmt(r.get("mem_avail_kib_per_conn"), 0), held(r),
                fmt(k.get("mem_avail_kib_per_conn"), 0), held(k),
                fmt(r.get("conns_per_s"), 0), fmt(k.get("conns_per_s"), 0),
                fmt((r or k).get("probe_rss_kib"), 0)))
        L.append("")
    M = C["most_held"]
    if M:
        L.append("| server | largest N held in full | most held at once | first N not held in full |")
        L.append("| --- | --- | --- | --- |")
        for who, m in M.items():
            f = m.get("first_short")
            if f:
                fs = "%d: connected %s, refused %s, failed %s, dropped during the hold %s, held %s%s" % (
                    f["n"], f["connected"], f["refused"], f["failed"], f["dropped_during_hold"], f["held"],
                    (" (%s)" % f["first_failure"]) if f.get("first_failure") else "")
            else:
                fs = "none up to %d" % max(x["n"] for x in C["runs"] if WHO.get(x["who"]) == who)
            L.append("| %s | %s | %s | %s |" % (who, m["largest_n_held_in_full"], m["most_held_at_once"], fs))
        for sk in C["skipped"]:
            if sk.get("figure") == "limit":
                L.append("")
                L.append("%s N=%s: %s." % (WHO.get(sk["who"], sk["who"]), sk["n"], sk["skipped"]))
        L.append("")
    L.append("Targets (issue): an idle connection costs rpcrdma-nfsd at most 256 KiB registered and 512 KiB "
             "resident in all; 1,000 connections in the 2 GiB guest.")
    L.append("")
    L.append("Each run: `rpcrdma-probe --connections N --hold %s` (one NFSv3 NULL call on each connection, "
             "%d parallel attempts), sampled as soon as the probe holds them, minus the same figures just before; "
             "divided by the connections the server held then (its side of the rdma_cm connections). "
             "rpcrdma-nfsd is started anew, without a mount, for every run (a cold pool: registration comes in "
             "2 MiB slabs, so N = 1 shows whole slabs); the kernel nfsd keeps the section-2 mount (1 connection). "
             "MemAvailable (/proc/meminfo) is the whole guest's: it includes the probe's side (its VmRSS while "
             "holding them: last column; and its QPs and CQs in the kernel) for both servers alike, and is noisy: median of the runs. "
             "Connections + NULL/s: connections established and NULL calls answered per second of the probe's "
             "open_ms (first address resolution to the last NULL reply; not the probe's start, the hold or the "
             "disconnects). The most held: N growing (%s) while each N was held in full and time was left "
             "(BENCH_CONN_MAX %s s); the section took %s s." % (
                 ci.get("hold_s", "?"), 32, ci.get("steps", "?"), ci.get("max_s", "?"), C.get("section_s") or "?"))
    L.append("")
    return L


NFS41_NAMES = {
    "write": "write: 7 files, 0 B to 16 MiB, by cp and dd oflag=direct bs=1M; compared on the server",
    "read": "read back after a remount: cmp and dd iflag=direct bs=1M",
    "readdir": "ls -l of 2000 entries",
    "namespace": "symlink, mkdir/rmdir, rename x4, O_EXCL create, hard link, chmod, truncate x3, rm",
    "tree_in": "cp -a of a tree in; diff -r and manifests (client and server)",
    "tree_out": "after a remount: readlink, stat; cp -a of the tree out",
    "rm": "rm -rf of the 2000 entries and the tree",
}


def nfs41_markdown(R):
    N = R["nfs41"]
    ni = R["info"].get("nfs41_info", {})
    L = ["## 6. NFSv4.1 workout: kernel nfsd vs rpcrdma-nfsd --nfs4 (same kernel client, vers=4.1,proto=rdma)", ""]
    L.append("| phase | kernel nfsd s | rpcrdma-nfsd s | ratio | CPU s kernel nfsd | CPU s rpcrdma-nfsd | CPU ratio | RPCs kernel nfsd / rpcrdma-nfsd |")
    L.append("| --- | --- | --- | --- | --- | --- | --- | --- |")

    def row(name, e, bold=False):
        k, o = e.get("kernel nfsd") or {}, e.get("rpcrdma-nfsd") or {}
        b = "**" if bold else ""
        rp = "%s / %s" % (fmt(k.get("rpcs"), 0) if k else "n/a", fmt(o.get("rpcs"), 0) if o else "n/a")
        err = (" (failed in %d run%s)" % (e["errors"], "s" if e["errors"] > 1 else "")) if e.get("errors") else ""
        L.append("| %s%s%s%s | %s | %s | %s%s%s | %s | %s | %s | %s |" % (
            b, name, b, err, fmt(k.get("wall_s"), 2), fmt(o.get("wall_s"), 2), b, fmt_ratio(e.get("ratio")), b,
            fmt(k.get("cpu_s"), 2), fmt(o.get("cpu_s"), 2), fmt_ratio(e.get("cpu_ratio")), rp))
    for ph in NFS41_PHASES:
        if ph in N["phases"]:
            row(NFS41_NAMES[ph], N["phases"][ph])
    if N["total"]:
        T = N["total"]
        row("total: per run, the sum of its phases (runs in which every phase passed: %s)" % ", ".join(
            "%s %d" % (w, T[w]["runs"]) for w in ("kernel nfsd", "rpcrdma-nfsd") if w in T), T, bold=True)
    L.append("")
    diffs = []
    for ph in NFS41_PHASES:
        e = N["phases"].get(ph) or {}
        k = (e.get("kernel nfsd") or {}).get("ops_median") or {}
        o = (e.get("rpcrdma-nfsd") or {}).get("ops_median") or {}
        if not k or not o:
            continue
        d = ["%s %g / %g" % (op, k.get(op, 0), o.get(op, 0)) for op in sorted(set(k) | set(o))
             if abs(k.get(op, 0) - o.get(op, 0)) >= max(10, 0.2 * max(k.get(op, 0), o.get(op, 0)))]
        if d:
            diffs.append("%s: %s" % (ph, ", ".join(d)))
    if diffs:
        L.append("Calls that differ (median per run, kernel nfsd / rpcrdma-nfsd): " + "; ".join(diffs) + ".")
        L.append("")
    mo = R["info"].get("nfs41_mounts", {})
    for who in ("knfsd", "rnfsd"):
        if who in mo:
            L.append("Mount %s: `%s`" % (WHO[who], mo[who]))
            L.append("")
    L.append("ratio = kernel nfsd s / rpcrdma-nfsd s (above 1: rpcrdma-nfsd faster); CPU ratio = rpcrdma-nfsd CPU s / "
             "kernel nfsd CPU s (below 1: cheaper), CPU as in section 2 (utime+stime of rpcrdma-nfsd, or of the "
             "[nfsd] threads). Wall time of each phase as run by tests/vm/workout.sh, checks included: every file "
             "compared byte for byte with the original and the server's copy, so each phase also counts the "
             "programs it runs (cp, dd, cmp, stat, diff, under TCG a few hundred ms each), alike for both servers. "
             "The remounts before `read` and `tree_out` are not timed. rpcrdma-nfsd `%s`; kernel nfsd versions "
             "`%s`, %s threads. The section took %s s." % (
                 ni.get("rnfsd_args", "?"), ni.get("knfsd_versions", "?"), ni.get("knfsd_threads", "?"),
                 N.get("section_s") or "?"))
    L.append("")
    return L


if __name__ == "__main__":
    main()
