#!/usr/bin/python3
"""zipper-bench: side-by-side benchmark reports with CSV and PNG plots.

  zipper-bench p2p [--links shaped,unshaped] [--out-dir DIR] [-- DRIVER-ARGS]
      Runs zipper-bench-p2p once per link setting (shaped: A 1 Gbit/s and
      B 4 Gbit/s, or the driver's --rate-a/--rate-b; unshaped: no TBF), each
      time native A, native B and forwarded side by side. Writes DIR/p2p.csv
      (the driver's columns with a leading 'links' column), prints the
      forwarded/native ratios per setting and draws DIR/p2p-bw.png and
      DIR/p2p-latency.png.

  zipper-bench coll [--layout X+Y] [--bench LIST] [--sizes MIN:MAX]
                    [--rate-a R --rate-b R] [--out-dir DIR]
      Collective latency (osu_<bench>): native Open MPI with X+Y ranks in
      cluster A (zipper-run --standalone) against libmmpi across the clusters
      through zipperd (zipper-run), automatic choice and every algorithm and
      n the library lists (zipper-tune --list-algorithms: never a copy), on
      links shaped by zipper-emulate. zipper-tune --measure-only measures the
      links first and gives the model's prediction per algorithm. Writes
      DIR/coll.csv and DIR/coll.json, draws DIR/coll-<bench>.png (measured
      points, the model's prediction as lines, native for reference).

  zipper-bench a2a [--layout X+Y] [--out-dir DIR] [-- DRIVER-ARGS]
      Alltoall and alltoallv bandwidth: X+Y ranks through zipperd (automatic
      choice, direct and aggregated n=1) against X+Y native ranks, one per
      emulated node, on A-shaped links (zipper-bench-coll). Writes
      DIR/a2a.csv with the time per call, the ratio to native and the
      bandwidth per rank (bytes a rank sends to other ranks per second), and
      draws DIR/a2a.png.

Units: sizes in bytes, bandwidth in MB/s (10^6 B/s), latency in us.
Needs root (network namespaces) like the drivers it runs; the plots need
python3-matplotlib (without it, only the CSV and the table are written).
"""

import argparse
import csv
import json
import os
import re
import subprocess
import sys

BIN = os.path.dirname(os.path.abspath(__file__))


def run_driver(cmd):
    print("zipper-bench: running", " ".join(cmd), flush=True)
    rc = subprocess.call(cmd)
    if rc != 0:
        sys.exit(f"zipper-bench: {cmd[0]} failed with status {rc}")


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def write_csv(path, rows, fields):
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields, extrasaction="ignore")
        w.writeheader()
        w.writerows(rows)


def pyplot():
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        return plt
    except ImportError:
        print("zipper-bench: python3-matplotlib missing: no plots", file=sys.stderr)
        return None


def size_label(b):
    b = int(b)
    if b >= 1 << 20:
        return f"{b >> 20}M"
    if b >= 1 << 10:
        return f"{b >> 10}K"
    return str(b)


def p2p(args, extra):
    os.makedirs(args.out_dir, exist_ok=True)
    merged, fields = [], None
    for links in args.links.split(","):
        if links not in ("shaped", "unshaped"):
            sys.exit(f"zipper-bench: --links takes shaped and unshaped, not '{links}'")
        out = os.path.join(args.out_dir, f"p2p-{links}.csv")
        cmd = [os.path.join(BIN, "zipper-bench-p2p"), "--out", out]
        cmd += ["--unshaped"] if links == "unshaped" else []
        if not args.replot:
            run_driver(cmd + extra)
        rows = read_csv(out)
        fields = ["links"] + list(rows[0].keys()) if rows else fields
        merged += [dict(r, links=links) for r in rows]
    path = os.path.join(args.out_dir, "p2p.csv")
    write_csv(path, merged, fields)
    print(f"\n{'bench':8} {'size':>9} " + " ".join(f"{l + ' fwd/A':>16}" for l in args.links.split(",")))
    keys = sorted({(r["benchmark"], int(r["size_bytes"])) for r in merged if r["benchmark"] != "zipperd"})
    for bench, size in keys:
        cells = []
        for links in args.links.split(","):
            r = next((r for r in merged if r["links"] == links and r["benchmark"] == bench
                      and r["size_bytes"] == str(size)), None)
            cells.append(f"{r['fwd_over_native_a'] if r else '':>16}")
        print(f"{bench:8} {size:>9} " + " ".join(cells))
    print(f"zipper-bench: wrote {path}")
    plt = pyplot()
    if not plt:
        return
    for bench, unit in (("bw", "MB/s"), ("bibw", "MB/s"), ("latency", "us")):
        rows = [r for r in merged if r["benchmark"] == bench]
        if not rows:
            continue
        fig, (top, bottom) = plt.subplots(2, 1, figsize=(8, 7), sharex=True,
                                          gridspec_kw={"height_ratios": [3, 2]})
        for links, style in (("shaped", "-"), ("unshaped", "--")):
            sel = sorted((r for r in rows if r["links"] == links), key=lambda r: int(r["size_bytes"]))
            if not sel:
                continue
            x = [int(r["size_bytes"]) for r in sel]
            for col, colour in (("native_a", "tab:blue"), ("native_b", "tab:green"),
                                ("forwarded", "tab:red")):
                top.plot(x, [float(r[col]) for r in sel], style, color=colour, marker=".",
                         label=f"{col} ({links})")
            bottom.plot(x, [float(r["fwd_over_native_a"]) for r in sel], style, color="tab:red",
                        marker=".", label=f"forwarded / native A ({links})")
        top.set_xscale("log", base=2)
        top.set_yscale("log")
        top.set_ylabel(unit)
        top.set_title(f"osu_{bench}: native inside a cluster vs forwarded through zipperd")
        top.legend(fontsize=7)
        bottom.axhline(1.0, color="grey", linewidth=0.8)
        bottom.set_xlabel("message size (bytes)")
        bottom.set_ylabel("ratio")
        bottom.legend(fontsize=7)
        png = os.path.join(args.out_dir, f"p2p-{bench}.png")
        fig.tight_layout()
        fig.savefig(png, dpi=110)
        plt.close(fig)
        print(f"zipper-bench: wrote {png}")


def a2a(args, extra):
    os.makedirs(args.out_dir, exist_ok=True)
    raw = os.path.join(args.out_dir, "a2a-raw.csv")
    x, y = (int(v) for v in args.layout.split("+"))
    cmd = [os.path.join(BIN, "zipper-bench-coll"), "--layout", args.layout, "--bench",
           "alltoall,alltoallv", "--algorithms", "auto,direct,aggregated", "--inter-senders", "1",
           "-m", args.sizes, "--out", raw]
    if not args.replot:
        run_driver(cmd + extra)
    rows = read_csv(raw)
    out = []
    for r in rows:
        us = float(r["avg_us"])
        # Each rank sends one block to each of the other x+y-1 ranks per call.
        moved = int(r["size"]) * (x + y - 1)
        out.append(dict(r, mb_per_s_per_rank=f"{moved / us:.2f}" if us > 0 else ""))
    path = os.path.join(args.out_dir, "a2a.csv")
    write_csv(path, out, list(rows[0].keys()) + ["mb_per_s_per_rank"])
    print(f"\n{'bench':10} {'size':>8} {'config':>14} {'avg_us':>11} {'MB/s/rank':>10} {'vs native':>9}")
    for r in out:
        conf = r["algorithm"] + (f" n={r['n']}" if r.get("n") else "")
        print(f"{r['bench']:10} {r['size']:>8} {conf:>14} {r['avg_us']:>11} "
              f"{r['mb_per_s_per_rank']:>10} {r['ratio_vs_native']:>9}")
    print(f"zipper-bench: wrote {path}")
    plt = pyplot()
    if not plt:
        return
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.5), sharey=True)
    for ax, bench in zip(axes, ("alltoall", "alltoallv")):
        sel = [r for r in out if r["bench"] == bench and r["mb_per_s_per_rank"]]
        for conf in sorted({(r["algorithm"], r.get("n", "")) for r in sel}):
            pts = sorted((int(r["size"]), float(r["mb_per_s_per_rank"])) for r in sel
                         if (r["algorithm"], r.get("n", "")) == conf)
            label = conf[0] + (f" n={conf[1]}" if conf[1] else "")
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker=".", label=label,
                    linestyle="-" if conf[0] == "native" else "--")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_title(f"{bench}, {args.layout} through zipperd vs {x + y} native")
        ax.set_xlabel("block (bytes)")
        ax.legend(fontsize=7)
    axes[0].set_ylabel("MB/s sent per rank")
    png = os.path.join(args.out_dir, "a2a.png")
    fig.tight_layout()
    fig.savefig(png, dpi=110)
    plt.close(fig)
    print(f"zipper-bench: wrote {png}")


def tool(name):
    return os.path.join(BIN, name)


def emulate_up(nodes_a, nodes_b, rate_a, rate_b):
    """The emulated clusters with shaped links (zipper-emulate; idempotent)."""
    cmd = [tool("zipper-emulate"), "up", "--nodes-a", str(nodes_a), "--nodes-b", str(nodes_b)]
    if rate_a:
        cmd += ["--rate-a", rate_a]
    if rate_b:
        cmd += ["--rate-b", rate_b]
    run_driver(cmd)


def zipper_run(x, y, nodes_a, nodes_b, program, standalone=False, timeout=900):
    """One job through zipper-run (the one zipperd lifecycle); returns stdout."""
    cmd = [tool("zipper-run"), "-x", str(x), "-y", str(y), "--emulated", "--nodes-a",
           str(nodes_a), "--nodes-b", str(nodes_b), "--timeout", str(timeout)]
    cmd += ["--standalone"] if standalone else []
    cmd += ["--"] + program
    print("zipper-bench: running", " ".join(cmd), flush=True)
    p = subprocess.run(cmd, stdout=subprocess.PIPE, text=True)
    if p.returncode != 0:
        sys.stdout.write(p.stdout)
        sys.exit(f"zipper-bench: zipper-run failed with status {p.returncode}")
    return p.stdout


def osu_tables(text):
    """{ranks: {size: avg_us}} from OSU output (one table per '# zipper:' header)."""
    out, ranks = {}, None
    for line in text.splitlines():
        m = re.match(r"# zipper: .*?(\d+) ranks", line)
        if m:
            ranks = int(m.group(1))
            out.setdefault(ranks, {})
            continue
        f = line.split()
        if ranks is not None and len(f) >= 2 and re.fullmatch(r"\d+", f[0]):
            out[ranks][int(f[0])] = float(f[1])
        elif ranks is not None and len(f) == 1 and re.fullmatch(r"[0-9.]+", f[0]):
            out[ranks][0] = float(f[0])  # barrier: no size column
    return out


def library_algorithms(benches):
    """The library's algorithm table (MMPIX_Coll_algorithm through zipper-tune)."""
    p = subprocess.run([tool("zipper-tune"), "--list-algorithms", "--collectives",
                        ",".join(benches)], stdout=subprocess.PIPE, text=True, check=True)
    return json.loads(p.stdout)


def coll(args, extra):
    os.makedirs(args.out_dir, exist_ok=True)
    x, y = (int(v) for v in args.layout.split("+"))
    benches = args.bench.split(",")
    raw = os.path.join(args.out_dir, "coll.json")
    if not args.replot:
        algos = library_algorithms(benches)
        emulate_up(max(x + y, x), y, args.rate_a, args.rate_b)
        lo, hi = (args.sizes.split(":") + [""])[:2] if ":" in args.sizes else ("1", args.sizes)
        model = os.path.join(args.out_dir, "model.json")
        zipper_run(x, y, x, y, [tool("zipper-tune"), "--measure-only", "--quick",
                                "--collectives", ",".join(benches), "--max-bytes", hi,
                                "--max-block", hi, "--report", model])
        with open(model) as f:
            predictions = json.load(f)["predictions"]
        rows = []
        for b in benches:
            sizes = [] if b == "barrier" else ["-m", args.sizes]
            text = zipper_run(x + y, 1, max(x + y, x), y, [tool(f"osu_{b}_native")] + sizes + extra,
                              standalone=True)
            for size, us in sorted(osu_tables(text).get(x + y, {}).items()):
                rows.append(dict(bench=b, algorithm="native", n="", size=size, avg_us=us,
                                 predicted_us=""))
            configs = [("auto", 0)]
            for a in algos[b]:
                ns = range(1, min(x, y) + 1) if a["takes_senders"] else [0]
                configs += [(a["name"], n) for n in ns]
            for alg, n in configs:
                prog = [tool(f"osu_{b}")] + sizes + ["--algorithm", alg]
                prog += ["--inter-senders", str(n)] if n else []
                text = zipper_run(x, y, x, y, prog + extra)
                for size, us in sorted(osu_tables(text).get(x + y, {}).items()):
                    pred = next((p["predicted_us"] for p in predictions
                                 if p["collective"] == b and p["algorithm"] == alg
                                 and p["n"] == n and p["bytes"] == size), "")
                    rows.append(dict(bench=b, algorithm=alg, n=n or "", size=size, avg_us=us,
                                     predicted_us=pred))
        for r in rows:
            nat = next((q["avg_us"] for q in rows if q["bench"] == r["bench"]
                        and q["algorithm"] == "native" and q["size"] == r["size"]), None)
            r["ratio_vs_native"] = f"{r['avg_us'] / nat:.3f}" if nat else ""
        with open(raw, "w") as f:
            json.dump({"layout": args.layout, "rate_a": args.rate_a, "rate_b": args.rate_b,
                       "rows": rows, "predictions": predictions}, f, indent=1)
    with open(raw) as f:
        data = json.load(f)
    rows, predictions = data["rows"], data["predictions"]
    fields = ["bench", "algorithm", "n", "size", "avg_us", "predicted_us", "ratio_vs_native"]
    path = os.path.join(args.out_dir, "coll.csv")
    write_csv(path, rows, fields)
    print(f"\n{'bench':10} {'size':>8} {'config':>16} {'avg_us':>11} {'model_us':>11} {'vs native':>9}")
    for r in rows:
        conf = r["algorithm"] + (f" n={r['n']}" if r["n"] else "")
        pred = f"{r['predicted_us']:.1f}" if r["predicted_us"] != "" else ""
        print(f"{r['bench']:10} {r['size']:>8} {conf:>16} {r['avg_us']:>11.1f} {pred:>11} "
              f"{r['ratio_vs_native']:>9}")
    print(f"zipper-bench: wrote {path} and {raw}")
    plt = pyplot()
    if not plt:
        return
    for b in sorted({r["bench"] for r in rows}):
        fig, ax = plt.subplots(figsize=(8, 5))
        sel = [r for r in rows if r["bench"] == b]
        confs = sorted({(r["algorithm"], str(r["n"])) for r in sel})
        for i, (alg, n) in enumerate(confs):
            colour = f"C{i % 10}"
            pts = sorted((max(int(r["size"]), 1), float(r["avg_us"])) for r in sel
                         if (r["algorithm"], str(r["n"])) == (alg, n))
            label = alg + (f" n={n}" if n else "")
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", linestyle="none",
                    color=colour, label=f"{label} (measured)")
            model = sorted((max(p["bytes"], 1), p["predicted_us"]) for p in predictions
                           if p["collective"] == b and p["algorithm"] == alg
                           and str(p["n"] or "") == n and pts and pts[0][0] <= max(p["bytes"], 1) <= pts[-1][0])
            if model:
                ax.plot([m[0] for m in model], [m[1] for m in model], "-", color=colour,
                        linewidth=1, label=f"{label} (model)")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("message size (bytes)")
        ax.set_ylabel("latency (us)")
        ax.set_title(f"{b}, {data['layout']} through zipperd (A {data['rate_a']}, B {data['rate_b']})")
        ax.legend(fontsize=6)
        png = os.path.join(args.out_dir, f"coll-{b}.png")
        fig.tight_layout()
        fig.savefig(png, dpi=110)
        plt.close(fig)
        print(f"zipper-bench: wrote {png}")


def main():
    ap = argparse.ArgumentParser(prog="zipper-bench", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("p2p", help="point-to-point, shaped and unshaped side by side")
    p.add_argument("--links", default="shaped,unshaped")
    p.add_argument("--out-dir", default="bench-p2p")
    a = sub.add_parser("a2a", help="alltoall(v) through zipperd vs native")
    a.add_argument("--layout", default="2+2")
    a.add_argument("--sizes", default="1024:1048576", help="[MIN:]MAX block bytes")
    a.add_argument("--out-dir", default="bench-a2a")
    c = sub.add_parser("coll", help="collectives per algorithm and n vs native, with the model")
    c.add_argument("--layout", default="4+4")
    c.add_argument("--bench", default="barrier,bcast,reduce,allreduce,alltoall,alltoallv")
    c.add_argument("--sizes", default="4:1048576", help="[MIN:]MAX bytes (osu -m)")
    c.add_argument("--rate-a", default="1gbit")
    c.add_argument("--rate-b", default="4gbit")
    c.add_argument("--out-dir", default="bench-coll")
    for sp in (p, a, c):
        sp.add_argument("--replot", action="store_true",
                        help="measure nothing: report and plot the CSVs already in --out-dir")
    argv = sys.argv[1:]
    extra = []
    if "--" in argv:
        i = argv.index("--")
        argv, extra = argv[:i], argv[i + 1:]
    args = ap.parse_args(argv)
    {"p2p": p2p, "a2a": a2a, "coll": coll}[args.cmd](args, extra)


if __name__ == "__main__":
    main()
