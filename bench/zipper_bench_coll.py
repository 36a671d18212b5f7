"""zipper-bench coll: collective latency per algorithm and n against native,
with the pLogP model's prediction (the usage is in zipper_bench.py)."""

import argparse
import json
import os
import re
import subprocess

from zipper_bench_common import emulate_up, pyplot, size_label, tool, write_csv, zipper_run


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


def add_parser(sub):
    """The coll subcommand's options."""
    c = sub.add_parser("coll", help="collectives per algorithm and n vs native, with the model",
                       formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    c.add_argument("--layout", default="4+4", help="X+Y ranks in clusters A and B")
    c.add_argument("--bench", default="barrier,bcast,reduce,allreduce,alltoall,alltoallv",
                   help="OSU collective benchmarks, comma-separated")
    c.add_argument("--sizes", default="4:1048576",
                   help="[MIN:]MAX bytes (osu -m; MIN:MIN gives one size, drawn as bars)")
    c.add_argument("--rate-a", default="1gbit", help="cluster A's link rate (tc rate)")
    c.add_argument("--rate-b", default="4gbit", help="cluster B's link rate (tc rate)")
    c.add_argument("--out-dir", default="bench-coll", help="where the CSV, JSON and plots go")
    return c


def run(args, extra):
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
            text = zipper_run(x + y, 0, max(x + y, x), y, [tool(f"osu_{b}_native")] + sizes + extra,
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
        sel = [r for r in rows if r["bench"] == b]
        if len({int(r["size"]) for r in sel}) == 1:
            coll_bars(plt, args, data, b, sel, predictions)
            continue
        fig, ax = plt.subplots(figsize=(8, 5))
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


def coll_bars(plt, args, data, b, sel, predictions):
    """One size: a bar per configuration, measured beside the model."""
    size = int(sel[0]["size"])
    fig, ax = plt.subplots(figsize=(max(6, 0.6 * len(sel) + 2), 5))
    labels, measured, model = [], [], []
    for r in sel:
        labels.append(r["algorithm"] + (f" n={r['n']}" if r["n"] else ""))
        measured.append(float(r["avg_us"]))
        pred = r["predicted_us"]
        if pred == "":
            pred = next((p["predicted_us"] for p in predictions if p["collective"] == b
                         and p["algorithm"] == r["algorithm"] and str(p["n"] or "") == str(r["n"])
                         and max(p["bytes"], 1) == max(size, 1)), "")
        model.append(float(pred) if pred != "" else None)
    xs = list(range(len(labels)))
    width = 0.4
    ax.bar([x - width / 2 for x in xs], measured, width, color="tab:blue", label="measured")
    with_model = [(x, m) for x, m in zip(xs, model) if m is not None]
    if with_model:
        ax.bar([x + width / 2 for x, _ in with_model], [m for _, m in with_model], width,
               color="tab:orange", label="model (pLogP)")
    ax.set_xticks(xs)
    ax.set_xticklabels(labels, rotation=45, ha="right", fontsize=7)
    ax.set_ylabel("latency (us)")
    at = "" if b == "barrier" else f" at {size_label(max(size, 1))}B"
    ax.set_title(f"{b}{at}, {data['layout']} through zipperd "
                 f"(A {data['rate_a']}, B {data['rate_b']})", fontsize=9)
    ax.legend(fontsize=7)
    png = os.path.join(args.out_dir, f"coll-{b}.png")
    fig.tight_layout()
    fig.savefig(png, dpi=110)
    plt.close(fig)
    print(f"zipper-bench: wrote {png}")
