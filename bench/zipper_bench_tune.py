"""zipper-bench tune: zipper-tune on the emulation, with plots of its report
(the usage is in zipper_bench.py)."""

import argparse
import json
import os
import sys

from zipper_bench_common import emulate_up, pyplot, tool, zipper_run


def add_parser(sub):
    """The tune subcommand's options."""
    t = sub.add_parser("tune", help="zipper-tune on the emulation, with plots of its report",
                       formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    t.add_argument("--layout", default="4+4", help="X+Y ranks in clusters A and B")
    t.add_argument("--rate-a", default="1gbit", help="cluster A's link rate (tc rate)")
    t.add_argument("--rate-b", default="4gbit", help="cluster B's link rate (tc rate)")
    t.add_argument("--quick", action="store_true", help="zipper-tune --quick: a few minutes")
    t.add_argument("--out-dir", default="tune", help="where the tuning file, report and plots go")
    return t


def run(args, extra):
    os.makedirs(args.out_dir, exist_ok=True)
    x, y = (int(v) for v in args.layout.split("+"))
    toml = os.path.join(args.out_dir, "tuning.toml")
    report = os.path.join(args.out_dir, "tune.json")
    if not args.replot:
        emulate_up(x, y, args.rate_a, args.rate_b)
        prog = [tool("zipper-tune"), "--tuning-out", toml, "--report", report]
        prog += ["--quick"] if args.quick else []
        sys.stdout.write(zipper_run(x, y, x, y, prog + extra, timeout=3600))
    with open(report) as f:
        r = json.load(f)
    plt = pyplot()
    if not plt:
        return
    fig, ax = plt.subplots(figsize=(7, 6))
    colls = sorted({p["collective"] for p in r["points"]})
    lo, hi = 1e30, 0
    for i, c in enumerate(colls):
        pts = [(k["measured_us"], k["predicted_us"]) for p in r["points"] if p["collective"] == c
               for k in p["candidates"] if k["measured_us"] > 0 and k["predicted_us"] > 0]
        if pts:
            ax.plot([p[0] for p in pts], [p[1] for p in pts], "o", color=f"C{i}", label=c,
                    markersize=4)
            lo, hi = min(lo, *(min(p) for p in pts)), max(hi, *(max(p) for p in pts))
    if hi > 0:
        ax.plot([lo, hi], [lo, hi], "-", color="grey", linewidth=0.8, label="predicted = measured")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("measured (us)")
    ax.set_ylabel("predicted by the pLogP model (us)")
    ax.set_title(f"zipper-tune {r['layout']['x']}+{r['layout']['y']}: model median error "
                 f"{100 * r['model_median_relative_error']:.0f} %")
    ax.legend(fontsize=7)
    png = os.path.join(args.out_dir, "tune-model.png")
    fig.tight_layout()
    fig.savefig(png, dpi=110)
    plt.close(fig)
    print(f"zipper-bench: wrote {png}")
    for c in colls:
        sel = sorted((p for p in r["points"] if p["collective"] == c), key=lambda p: p["bytes"])
        if len(sel) < 2:
            continue
        fig, ax = plt.subplots(figsize=(8, 5))
        xs = [max(p["bytes"], 1) for p in sel]
        ax.plot(xs, [p["builtin_us"] for p in sel], "o--", label="built-in rules")
        ax.plot(xs, [p["tuned_us"] for p in sel], "o-", label="tuned")
        for p in sel:
            t = p["tuned"]
            ax.annotate(t["algorithm"] + (f" n={t['n']}" if t["n"] else "")
                        + (f" s={t['segment_bytes']}" if t["segment_bytes"] else ""),
                        (max(p["bytes"], 1), p["tuned_us"]), fontsize=6)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("message size (bytes)")
        ax.set_ylabel("latency (us)")
        # The verification's independent samples where the choices differ.
        ver = [p for p in sel if "verified" in p]
        if ver:
            ax.plot([max(p["bytes"], 1) for p in ver], [p["verified"]["builtin_us"] for p in ver],
                    "x", color="C0", label="built-in, verified")
            ax.plot([max(p["bytes"], 1) for p in ver], [p["verified"]["tuned_us"] for p in ver],
                    "x", color="C1", label="tuned, verified")
        per = r["figures"]["per_collective"] if "figures" in r else r["per_collective"]
        g = per[c]["speedup_vs_builtin_geomean"]
        ax.set_title(f"{c}: tuned vs built-in (geometric mean speedup {g:.2f})")
        ax.legend(fontsize=7)
        png = os.path.join(args.out_dir, f"tune-{c}.png")
        fig.tight_layout()
        fig.savefig(png, dpi=110)
        plt.close(fig)
        print(f"zipper-bench: wrote {png}")
