#!/usr/bin/env python3
"""bench/report.py DIR: turn the raw results of bench/bench-inside.sh
(DIR/raw.jsonl and DIR/fio/*.json) into DIR/results.json and DIR/results.md,
and print the Markdown.  Medians with min and max over the runs; ratios
rpcrdma-nfsd / kernel nfsd, rpcrdma-nfs / kernel client, and NFS sequential
goodput / the perftest bandwidth of the matching RDMA operation (and the
bench_rpc 1 MiB echo goodput / ib_read_bw and ib_write_bw at 1 MiB).

MB/s here is 2^20 bytes per second, as perftest counts it.
"""
import json
import os
import statistics
import sys
from datetime import datetime, timezone

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
        if r.get("section") not in ("servers", "clients") or "figure" not in r or "error" in r:
            continue
        rec = {"wall_s": r["wall_s"], "cpu_s": r["cpu_s"], "rpcs": r["rpcs"]}
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
        elif r["figure"] in ("get", "put"):
            rec["bytes"] = info.get("file_mb", 0) * MB
            rec["ops"] = r["rpcs"] or None
            rec["MBps"] = rec["bytes"] / MB / r["wall_s"]
        rec["cpu_us_per_op"] = (r["cpu_s"] / rec["ops"] * 1e6) if rec.get("ops") else None
        rec["cpu_us_per_rpc"] = (r["cpu_s"] / r["rpcs"] * 1e6) if r["rpcs"] else None
        figs.setdefault((r["section"], r["figure"], r["who"]), []).append(rec)

    def agg(section, figure, who):
        rs = figs.get((section, figure, who))
        if not rs:
            return None
        out = {"runs": len(rs)}
        for k in ("MBps", "iops", "cpu_us_per_op", "cpu_us_per_rpc", "wall_s", "cpu_s", "rpcs",
                  "create_s", "stat_s", "rename_s", "remove_s", "meta_s"):
            s = stats([x.get(k) for x in rs])
            if s:
                out[k] = s
        return out

    servers = {}
    for fig in ("seq_write", "seq_read", "rand_read", "rand_write", "meta"):
        k, rn = agg("servers", fig, "knfsd"), agg("servers", fig, "rnfsd")
        if not k and not rn:
            continue
        metric = "MBps" if fig.startswith("seq") else "iops"
        servers[fig] = {"metric": metric, "knfsd": k, "rpcrdma-nfsd": rn,
                        "ratio": ratio(rn and rn.get(metric), k and k.get(metric)),
                        "cpu_ratio": ratio(rn and rn.get("cpu_us_per_op"), k and k.get("cpu_us_per_op"))}

    clients = {}
    setup = agg("clients", "setup", "rpcrdma-nfs")
    for fig in ("get", "put"):
        k, c = agg("clients", fig, "kernel"), agg("clients", fig, "rpcrdma-nfs")
        if not k and not c:
            continue
        net = None
        if c and setup:
            rs = figs[("clients", fig, "rpcrdma-nfs")]
            net = stats([x["bytes"] / MB / (x["wall_s"] - setup["wall_s"]["median"])
                         for x in rs if x["wall_s"] > setup["wall_s"]["median"]])
        clients[fig] = {"kernel": k, "rpcrdma-nfs": c, "rpcrdma-nfs_net_MBps": net,
                        "ratio": ratio(c and c.get("MBps"), k and k.get("MBps")),
                        "ratio_net": ratio(net, k and k.get("MBps"))}
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
        for k in ("calls_per_s", "lat_median_us", "lat_p99_us", "MBps"):
            st = stats([x.get(k) for x in rs])
            if st:
                t[k] = st
        if t["figure"] == "echo":
            for tool in ("ib_read_bw", "ib_write_bw"):
                w = wire.get("%s/1048576" % tool)
                t["vs_" + tool] = ratio(t.get("MBps"), w and w.get("bw_MBps"))

    # ---------------------------------------------------------- goodput / wire
    # NFS WRITE data moves by RDMA Read (the server pulls it): ib_read_bw;
    # NFS READ data by RDMA Write (the server pushes it): ib_write_bw.
    goodput = []
    match = {"seq_write": "ib_read_bw", "seq_read": "ib_write_bw", "put": "ib_read_bw", "get": "ib_write_bw"}
    for fig, entry in list(servers.items()) + list(clients.items()):
        if fig not in match:
            continue
        for who, a in entry.items():
            if who in ("metric", "ratio", "cpu_ratio", "ratio_net") or not isinstance(a, dict):
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
              "clients": clients, "transport": transport, "goodput_vs_wire": goodput, "skipped": skipped,
              "errors": errors, "units": {"MBps": "2^20 bytes/s", "cpu_us_per_op": "server CPU microseconds (utime+stime) per I/O or metadata op"}}
    sp = os.path.join(d, "rpcrdma-nfsd-stats.json")
    if os.path.exists(sp):
        try:
            result["rpcrdma_nfsd_final_stats"] = json.load(open(sp))
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
             "meta": ("metadata: create+stat+rename+remove of %s files" % i.get("meta_files"), "ops/s")}
    if S:
        L.append("| figure | unit | kernel nfsd | rpcrdma-nfsd | ratio | CPU µs/op kernel nfsd | CPU µs/op rpcrdma-nfsd | CPU ratio |")
        L.append("| --- | --- | --- | --- | --- | --- | --- | --- |")
        for fig, e in S.items():
            name, unit = names[fig]
            m = e["metric"]
            k, r = e["knfsd"] or {}, e["rpcrdma-nfsd"] or {}
            d = 0 if m == "iops" else 1
            L.append("| %s | %s | %s | %s | **%s** | %s | %s | %s |" % (
                name, unit, fmt(k.get(m), d), fmt(r.get(m), d), fmt_ratio(e["ratio"]),
                fmt(k.get("cpu_us_per_op"), 0), fmt(r.get("cpu_us_per_op"), 0), fmt_ratio(e["cpu_ratio"])))
        meta = S.get("meta")
        if meta:
            parts = []
            for who in ("knfsd", "rpcrdma-nfsd"):
                a = meta[who]
                if a:
                    parts.append("%s: create %.2f s, stat %.2f s, rename %.2f s, remove %.2f s" % (
                        "kernel nfsd" if who == "knfsd" else who,
                        a["create_s"]["median"], a["stat_s"]["median"], a["rename_s"]["median"],
                        a["remove_s"]["median"]))
            L.append("")
            L.append("Metadata phases (median): " + "; ".join(parts) + ".")
        for who, mo in R["mounts"].items():
            L.append("")
            L.append("Mount %s: `%s`" % ("kernel nfsd" if who == "knfsd" else "rpcrdma-nfsd", mo.get("opts")))
        L.append("")
        L.append("ratio = rpcrdma-nfsd / kernel nfsd (above 1: rpcrdma-nfsd faster); CPU ratio = rpcrdma-nfsd CPU per op / kernel nfsd CPU per op (below 1: cheaper). "
                 "CPU: utime+stime of the rpcrdma-nfsd process, or of the [nfsd] threads; one op = one I/O of the figure's size, or one metadata call.")
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
            who = {"knfsd": "kernel nfsd", "kernel": "kernel client", "rpcrdma-nfs_net_MBps": "rpcrdma-nfs (set-up excluded)"}.get(g["who"], g["who"])
            L.append("| %s | %s | %.1f | %s | %s | %s |" % (g["figure"], who, g["MBps"], g["perftest"],
                                                          fmt_ratio(g["vs_65536"]), fmt_ratio(g["vs_1048576"])))
        L.append("")

    # 3
    L.append("## 3. Clients compared: kernel client vs rpcrdma-nfs (same kernel nfsd)")
    L.append("")
    C = R["clients"]
    if C:
        ci = i.get("client_info", {})
        L.append("| figure | kernel client MB/s | rpcrdma-nfs MB/s (wall) | ratio | rpcrdma-nfs MB/s (set-up excluded) | ratio |")
        L.append("| --- | --- | --- | --- | --- | --- |")
        for fig, e in C.items():
            k, c = e["kernel"] or {}, e["rpcrdma-nfs"] or {}
            L.append("| %s %s MiB | %s | %s | **%s** | %s | %s |" % (
                fig, i.get("file_mb"), fmt(k.get("MBps")), fmt(c.get("MBps")), fmt_ratio(e["ratio"]),
                fmt(e["rpcrdma-nfs_net_MBps"]), fmt_ratio(e["ratio_net"])))
        L.append("")
        L.append("Kernel client: fio, 1 MiB O_DIRECT, iodepth %s, on the mount. rpcrdma-nfs `%s`: wall time of the "
                 "whole command, which includes its start, MOUNT and connection set-up; 'set-up excluded' subtracts the "
                 "median wall time of an `rpcrdma-nfs stat` of the file." %
                 (ci.get("kernel_iodepth", "?"), ci.get("args", "")))
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
            L.append("| NULL calls in flight | calls/s | latency median µs | latency 99th percentile µs |")
            L.append("| --- | --- | --- | --- |")
            for t in nulls:
                L.append("| %d | %s | %s | %s |" % (t["inflight"], fmt(t.get("calls_per_s"), 0),
                                                  fmt(t.get("lat_median_us"), 0), fmt(t.get("lat_p99_us"), 0)))
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

    if R["errors"]:
        L.append("## Errors")
        L.append("")
        for e in R["errors"]:
            L.append("- %s" % json.dumps(e))
        L.append("")
    return "\n".join(L)


if __name__ == "__main__":
    main()
