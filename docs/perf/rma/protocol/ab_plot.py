#!/usr/bin/env python3
"""Folds alternating `zipper-bench rma --rounds 1` runs of two builds into one
table and plot: ab.csv (build, part, round, value, baseline, ratio, load) and
ab.png (median ratio per part and build, bars min-max).

Usage: ab_plot.py RUNS_DIR OUT_DIR, where RUNS_DIR holds BUILD-rROUND/rma.csv
(the layout docs/performance.md's A/B command writes)."""
import csv
import os
import statistics
import sys


def main(runs, out):
    rows = []
    for d in sorted(os.listdir(runs)):
        build, _, rnd = d.rpartition("-r")
        with open(os.path.join(runs, d, "rma.csv")) as f:
            for r in csv.DictReader(f):
                if r.get("ratio"):
                    rows.append(dict(build=build, part=r["part"], round=rnd, value=r["value"],
                                     baseline=r["baseline"], ratio=r["ratio"], unit=r["unit"],
                                     load1=r["load1"]))
    with open(os.path.join(out, "ab.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    parts = list(dict.fromkeys(r["part"] for r in rows))
    builds = list(dict.fromkeys(r["build"] for r in rows))
    stats = {}
    for b in builds:
        for p in parts:
            rs = [float(r["ratio"]) for r in rows if r["build"] == b and r["part"] == p]
            vs = [float(r["value"]) for r in rows if r["build"] == b and r["part"] == p]
            stats[b, p] = (statistics.median(rs), min(rs), max(rs), statistics.median(vs))
            print(f"{b:8} {p:12} value {stats[b, p][3]:8.2f}  ratio {stats[b, p][0]:.3f} "
                  f"({stats[b, p][1]:.3f}-{stats[b, p][2]:.3f}, {len(rs)} runs)")
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(7, 3.8))
    width = 0.8 / len(builds)
    for i, b in enumerate(builds):
        xs = [k + i * width for k in range(len(parts))]
        med = [stats[b, p][0] for p in parts]
        err = [[m - stats[b, p][1] for m, p in zip(med, parts)],
               [stats[b, p][2] - m for m, p in zip(med, parts)]]
        ax.bar(xs, med, width, yerr=err, capsize=3, label=b)
    ax.axhline(1.2, color="k", linestyle="--", linewidth=0.8)
    ax.set_xticks([k + width * (len(builds) - 1) / 2 for k in range(len(parts))])
    ax.set_xticklabels(parts, fontsize=8)
    ax.set_ylabel("RMA / two-sided (osu_latency, osu_bw)")
    ax.set_title("Shaped 1/1 Gbit/s, 1+1, alternating builds; median, bars min-max", fontsize=9)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "ab.png"), dpi=110)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
