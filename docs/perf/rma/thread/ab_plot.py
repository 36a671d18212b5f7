#!/usr/bin/env python3
"""Plots ab.csv (main vs branch, alternating, shaped 1/1 Gbit/s, 1+1): each
run's RMA latency in microseconds per part, main and branch side by side.
Usage: ab_plot.py [CSV] [PNG]; defaults ab.csv, ab.png next to this file."""
import csv
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

here = os.path.dirname(os.path.abspath(__file__))
src = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "ab.csv")
dst = sys.argv[2] if len(sys.argv) > 2 else os.path.join(here, "ab.png")
rows = list(csv.DictReader(open(src)))
parts = ["osu_latency", "put_latency", "get_latency", "fop_latency", "cas_latency"]
fig, ax = plt.subplots(figsize=(8, 4))
for k, (build, colour) in enumerate((("main", "tab:gray"), ("branch", "tab:blue"))):
    for i, part in enumerate(parts):
        ys = [float(r["value_us"]) for r in rows if r["build"] == build and r["part"] == part]
        xs = [i + (k - 0.5) * 0.3] * len(ys)
        ax.scatter(xs, ys, color=colour, label=build if i == 0 else None)
ax.set_xticks(range(len(parts)), parts)
ax.set_ylabel("latency, µs (8 B, -s flush; osu_latency is half a round trip)")
ax.set_title("RMA latency, main vs try-lock progress thread, 3 alternating rounds")
ax.set_ylim(bottom=0)
ax.legend()
fig.tight_layout()
fig.savefig(dst, dpi=100)
