#!/usr/bin/env python3
"""Plot and summarise an A/B run of ab.sh (before and after builds, alternating).

usage: plot_ab.py AB.csv OUT.png [TITLE]

Reads the CSV ab.sh writes (round,k,build,bench,value; build is "base" or
"new"), prints one Markdown table row per k (every run's value, and the
median after / before ratio with its spread: the smallest and largest ratio
of the rounds, each round's after over the same round's before) and draws
each run as a point, by round, for latency and bandwidth at each k.
"""
import csv
import statistics
import sys
from collections import defaultdict


def load(path):
    """{(k, bench, build): [value by round]}; a round that gave no value is skipped."""
    runs = defaultdict(dict)
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            if not row["value"]:
                continue
            runs[(int(row["k"]), row["bench"], row["build"])][int(row["round"])] = float(row["value"])
    return runs


def ratios(runs, k, bench):
    before, after = runs.get((k, bench, "base"), {}), runs.get((k, bench, "new"), {})
    return [after[r] / before[r] for r in sorted(before) if r in after]


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    runs = load(argv[1])
    ks = sorted({k for k, _, _ in runs})
    benches = (("latency_us", "8 B latency (µs)"), ("bw_MBps", "4 MiB bandwidth (MB/s)"))
    print("| k | bench | before | after | median after ÷ before | range of ratios |")
    print("|---|---|---|---|---|---|")
    for k in ks:
        for bench, _ in benches:
            rs = ratios(runs, k, bench)
            if not rs:
                continue
            b = runs[(k, bench, "base")]
            a = runs[(k, bench, "new")]
            fmt = lambda d: ", ".join(f"{d[r]:.2f}" for r in sorted(d))  # noqa: E731
            print(f"| {k} | {bench} | {fmt(b)} | {fmt(a)} | {statistics.median(rs):.3f} | "
                  f"{min(rs):.3f}–{max(rs):.3f} |")

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(len(benches), len(ks), figsize=(4.5 * len(ks), 6.5), squeeze=False)
    for col, k in enumerate(ks):
        for row, (bench, label) in enumerate(benches):
            ax = axes[row][col]
            for build, name, marker in (("base", "before", "o"), ("new", "after", "s")):
                d = runs.get((k, bench, build), {})
                ax.plot(sorted(d), [d[r] for r in sorted(d)], marker=marker, linestyle="-",
                        label=name)
            ax.set_xticks(sorted({r for b in ("base", "new") for r in runs.get((k, bench, b), {})}))
            ax.set_title(f"k = {k}: {label}")
            ax.set_xlabel("round")
            ax.grid(True, alpha=0.3)
            ax.legend()
    if len(argv) > 3:
        fig.suptitle(argv[3])
    fig.tight_layout()
    fig.savefig(argv[2], dpi=110)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
