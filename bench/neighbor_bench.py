#!/usr/bin/env python3
"""Neighbourhood-exchange benchmarks (Neighbor_alltoall, reorder) on the emulated clusters.

  alltoall: MMPI_Neighbor_alltoall on a 2-D periodic Cartesian communicator
            against the same exchange as Isend/Irecv/Waitall (neighbor_bench
            alltoall), side by side in one job, per message size.
  reorder:  a ROWS x COLS periodic 5-point stencil with BYTES halos created
            with reorder = 0 and 1 (neighbor_bench stencil), side by side:
            halo bytes across the bridge per step and time per step.

Each configuration runs --runs times (spread reported); results go to
OUT/neighbor_alltoall.csv, OUT/neighbor_reorder.csv and a PNG each. Needs
root and network namespaces (zipper-emulate); run it under
flock /tmp/zipper-emulation.lock on a shared host.
"""

import argparse
import csv
import os
import statistics
import subprocess
import sys

BIN = os.path.dirname(os.path.abspath(__file__))


def run(args, x, y, prog_args):
    cmd = [os.path.join(args.bin, "zipper-run"), "-x", str(x), "-y", str(y), "--timeout", "300",
           "--emulated", "--nodes-a", "1", "--nodes-b", "1", "--zippers", "1", "--",
           os.path.join(args.bin, "neighbor_bench")] + [str(a) for a in prog_args]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    return [line.split(",") for line in out.splitlines() if line.startswith(("alltoall,", "stencil,"))]


def emulate(args):
    cmd = [os.path.join(args.bin, "zipper-emulate"), "up", "--force"]
    if args.rate:
        cmd += ["--rate-a", args.rate, "--rate-b", args.rate]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)


def spread(v):
    return f"{statistics.median(v):.3f} [{min(v):.3f}, {max(v):.3f}]"


def bench_alltoall(args):
    rows = []
    for size in args.sizes:
        ratios, tn, tp = [], [], []
        for _ in range(args.runs):
            (_, b, n, p, r), = run(args, 4, 4, ["alltoall", size, args.iters])
            tn.append(float(n)), tp.append(float(p)), ratios.append(float(r))
        rows.append({"bytes": size, "neighbor_us": statistics.median(tn),
                     "isend_us": statistics.median(tp), "ratio_median": statistics.median(ratios),
                     "ratio_min": min(ratios), "ratio_max": max(ratios)})
        print(f"alltoall 4+4 {size} B: neighbor/isend {spread(ratios)}", flush=True)
    write(args, "neighbor_alltoall", rows)
    plot(args, "neighbor_alltoall", [r["bytes"] / 1024 for r in rows],
         {"Neighbor_alltoall": [r["neighbor_us"] for r in rows],
          "Isend/Irecv/Waitall": [r["isend_us"] for r in rows]},
         "bytes per neighbour (KiB)", "µs per exchange (max over ranks)",
         f"2-D periodic Cartesian, 4+4, {args.rate or 'unshaped'}")


def bench_reorder(args):
    t = {0: [], 1: []}
    cut = {}
    total = 0
    for _ in range(args.runs):
        for _, r, c, tot, us in run(args, 3, 5, ["stencil", 2, 4, args.halo, args.steps]):
            t[int(r)].append(float(us))
            cut[int(r)] = int(c)
            total = int(tot)
    speedups = [a / b for a, b in zip(t[0], t[1])]
    removed = (cut[0] - cut[1]) / cut[0] if cut[0] else 0.0
    rows = [{"reorder": r, "cut_bytes": cut[r], "total_bytes": total,
             "us_per_step_median": statistics.median(t[r]), "us_min": min(t[r]), "us_max": max(t[r])}
            for r in (0, 1)]
    print(f"reorder 3+5: cut {cut[0]} -> {cut[1]} bytes/step ({removed:.1%} removed); "
          f"time {statistics.median(t[0]):.0f} -> {statistics.median(t[1]):.0f} us/step; "
          f"time fell by {1 - 1 / statistics.median(speedups):.1%} (runs: "
          f"{', '.join(f'{1 - 1 / s:.1%}' for s in speedups)})", flush=True)
    write(args, "neighbor_reorder", rows)
    plot(args, "neighbor_reorder", [0, 1], {"µs per step": [r["us_per_step_median"] for r in rows]},
         "reorder", "µs per step", f"2x4 periodic stencil, 3+5, {args.halo // 1024} KiB halos, "
         f"{args.rate or 'unshaped'}; cut {cut[0] // 1024} -> {cut[1] // 1024} KiB/step", bars=True)


def write(args, name, rows):
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, name + ".csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)


def plot(args, name, xs, series, xlabel, ylabel, title, bars=False):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("neighbor_bench: matplotlib missing, no plot", file=sys.stderr)
        return
    fig, ax = plt.subplots(figsize=(6, 4))
    for label, ys in series.items():
        if bars:
            ax.bar([str(x) for x in xs], ys, label=label)
        else:
            ax.plot(xs, ys, marker="o", label=label)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=9)
    ax.legend()
    fig.tight_layout()
    fig.savefig(os.path.join(args.out, name + ".png"), dpi=110)


def replot(args):
    def rows(name):
        with open(os.path.join(args.out, name + ".csv")) as f:
            return list(csv.DictReader(f))
    if args.what in ("alltoall", "all"):
        r = rows("neighbor_alltoall")
        plot(args, "neighbor_alltoall", [int(x["bytes"]) / 1024 for x in r],
             {"Neighbor_alltoall": [float(x["neighbor_us"]) for x in r],
              "Isend/Irecv/Waitall": [float(x["isend_us"]) for x in r]},
             "bytes per neighbour (KiB)", "µs per exchange (max over ranks)",
             f"2-D periodic Cartesian, 4+4, {args.rate or 'unshaped'}")
    if args.what in ("reorder", "all"):
        r = rows("neighbor_reorder")
        cut = [int(x["cut_bytes"]) for x in r]
        plot(args, "neighbor_reorder", [0, 1], {"µs per step": [float(x["us_per_step_median"]) for x in r]},
             "reorder", "µs per step", f"2x4 periodic stencil, 3+5, {args.halo // 1024} KiB halos, "
             f"{args.rate or 'unshaped'}; cut {cut[0] // 1024} -> {cut[1] // 1024} KiB/step", bars=True)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("what", choices=["alltoall", "reorder", "all"])
    p.add_argument("--bin", default=BIN, help="where zipper-run and neighbor_bench are")
    p.add_argument("--out", default="docs/perf")
    p.add_argument("--rate", default="1gbit", help="tc rate of every node link ('' unshaped)")
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--sizes", type=int, nargs="+", default=[4096, 65536, 262144])
    p.add_argument("--iters", type=int, default=20)
    p.add_argument("--halo", type=int, default=262144)
    p.add_argument("--steps", type=int, default=10)
    p.add_argument("--plot-only", action="store_true",
                   help="redraw the PNGs from the CSVs in --out (no runs)")
    args = p.parse_args()
    if args.plot_only:
        replot(args)
        return
    emulate(args)
    if args.what in ("alltoall", "all"):
        bench_alltoall(args)
    if args.what in ("reorder", "all"):
        bench_reorder(args)


if __name__ == "__main__":
    main()
