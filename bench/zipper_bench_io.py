#!/usr/bin/env python3
"""Collective MPI-IO across the clusters against native (docs/performance.md targets).

Runs bench/io_bench (an unmodified MPI program, IOR-like: one contiguous
block per rank with MPI_File_write_at_all, then MPI_File_read_at_all, and
--opens collective open+close) alternately natively (zipper-run --standalone:
X+Y ranks on X+Y emulated nodes of cluster A, Open MPI alone) and across the
emulated clusters (zipper-run --transparent, X ranks on X nodes of A and Y on
Y nodes of B, links shaped), one rank per emulated node (each node its own
cgroup), on each file system given, for --repeat rounds. zipperd's /metrics is read by the program before and after
the collective write: the payload bytes relayed meanwhile.

Writes DIR/io.csv (round,fs,mode,open_close_s,write_Bps,read_Bps,
zipperd_write_payload_bytes, zipperd_write_received_bytes: all bytes zipperd
received meanwhile, zipperd_job_payload_bytes_before: the job's payload
bytes up to the write, which shows that the counter counts), DIR/io-ratios.csv (zipper over native per fs:
median, min, max over the rounds) and DIR/io.png.

usage: zipper_bench_io.py --bin BUILD/bin --io-bench PATH [--layout 2+2]
       [--mib 256] [--opens 20] [--repeat 3] [--fs disk=/var/tmp,tmpfs=/dev/shm]
       [--rate-a 1gbit --rate-b 4gbit] [--out-dir bench-io]
"""
import argparse
import csv
import os
import statistics
import subprocess
import sys

METRICS = "10.201.0.254:9479"  # zipperd's /metrics on cluster A's side of the emulation


def run(cmd, env=None):
    print("$ " + " ".join(cmd), flush=True)
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=900)
    vals = {}
    for line in r.stdout.splitlines():
        p = line.split(",")
        if len(p) == 3 and p[0] == "io_bench":
            vals[p[1]] = p[2]
    if r.returncode != 0 or vals.get("verified") != "yes":
        print(r.stdout[-3000:], r.stderr[-3000:])
        sys.exit(f"zipper_bench_io: run failed (exit {r.returncode})")
    return vals


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", required=True)
    ap.add_argument("--io-bench", required=True)
    ap.add_argument("--layout", default="2+2")
    ap.add_argument("--mib", type=int, default=256)
    ap.add_argument("--opens", type=int, default=20)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--fs", default="disk=/var/tmp,tmpfs=/dev/shm")
    ap.add_argument("--rate-a", default="1gbit")
    ap.add_argument("--rate-b", default="4gbit")
    ap.add_argument("--out-dir", default="bench-io")
    ap.add_argument("--replot", action="store_true",
                    help="only redraw DIR/io.png and the ratios from DIR/io.csv")
    a = ap.parse_args()
    x, y = (int(v) for v in a.layout.split("+"))
    os.makedirs(a.out_dir, exist_ok=True)
    fss = [f.split("=", 1) for f in a.fs.split(",")]
    if a.replot:
        with open(os.path.join(a.out_dir, "io.csv")) as f:
            rows = list(csv.DictReader(f))
        for row in rows:
            row["round"] = int(row["round"])
            for k in ("open_close_s", "write_Bps", "read_Bps"):
                row[k] = float(row[k])
        a.repeat = 1 + max(row["round"] for row in rows)
        return report(a, x, y, fss, rows)
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    # One rank per emulated node (each its own cgroup, equal CPU share), as
    # zipper-bench npb: native X+Y nodes of cluster A, zipper X of A and Y of B.
    subprocess.run([f"{a.bin}/zipper-emulate", "up", "--nodes-a", str(x + y), "--nodes-b", str(y),
                    "--rate-a", a.rate_a, "--rate-b", a.rate_b, "--force"], check=True,
                   stdout=subprocess.DEVNULL)
    rows = []
    for rnd in range(a.repeat):
        for fs, d in fss:
            args = [a.io_bench, d, str(a.mib), str(a.opens)]
            order = ["native", "zipper"] if rnd % 2 == 0 else ["zipper", "native"]
            for mode in order:
                if mode == "native":
                    v = run([f"{a.bin}/zipper-run", "--emulated", "-x", str(x + y), "-y", "0",
                             "--nodes-a", str(x + y), "--nodes-b", str(y), "--standalone",
                             "--"] + args, env)
                else:
                    v = run([f"{a.bin}/zipper-run", "-x", str(x), "-y", str(y), "--emulated",
                             "--nodes-a", str(x), "--nodes-b", str(y), "--transparent",
                             f"--zipperd-arg=--metrics-listen={METRICS}", "--"] + args +
                            [METRICS], env)
                rows.append({"round": rnd, "fs": fs, "mode": mode,
                             "open_close_s": float(v["open_close_s"]),
                             "write_Bps": float(v["write_Bps"]), "read_Bps": float(v["read_Bps"]),
                             "zipperd_write_payload_bytes": v.get("zipperd_write_payload_bytes",
                                                                  ""),
                             "zipperd_write_received_bytes": v.get("zipperd_write_received_bytes",
                                                                   ""),
                             "zipperd_job_payload_bytes_before":
                                 v.get("zipperd_job_payload_bytes_before", "")})
                print(rows[-1], flush=True)
    with open(os.path.join(a.out_dir, "io.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    return report(a, x, y, fss, rows)


def report(a, x, y, fss, rows):
    """Ratios (printed, DIR/io-ratios.csv) and DIR/io.png."""
    ratios = []
    for fs, _ in fss:
        for key in ("write_Bps", "read_Bps", "open_close_s"):
            r = []
            for rnd in range(a.repeat):
                nat = [row[key] for row in rows if row["fs"] == fs and row["round"] == rnd
                       and row["mode"] == "native"][0]
                zp = [row[key] for row in rows if row["fs"] == fs and row["round"] == rnd
                      and row["mode"] == "zipper"][0]
                r.append(zp / nat)
            ratios.append({"fs": fs, "metric": key, "median": statistics.median(r),
                           "min": min(r), "max": max(r)})
            print(f"{fs:6} {key:13} zipper/native median {statistics.median(r):.3f} "
                  f"(min {min(r):.3f}, max {max(r):.3f})")
    with open(os.path.join(a.out_dir, "io-ratios.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(ratios[0]))
        w.writeheader()
        w.writerows(ratios)
    zb = [row["zipperd_write_payload_bytes"] for row in rows if row["mode"] == "zipper"]
    print(f"payload bytes through zipperd during the collective writes: {', '.join(zb)}")
    before = [row["zipperd_job_payload_bytes_before"] for row in rows if row["mode"] == "zipper"]
    print(f"(the same job's payload bytes before the write, open and barriers: {', '.join(before)})")
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("zipper_bench_io: python3-matplotlib missing, no plot")
        return 0
    fig, axes = plt.subplots(1, 3, figsize=(13, 4))
    for ax, key, scale, label in ((axes[0], "write_Bps", 1e-9, "write_at_all GB/s"),
                                  (axes[1], "read_Bps", 1e-9, "read_at_all GB/s"),
                                  (axes[2], "open_close_s", 1e3, "open+close ms")):
        for i, mode in enumerate(("native", "zipper")):
            med, lo, hi = [], [], []
            for fs, _ in fss:
                v = [row[key] * scale for row in rows if row["fs"] == fs and row["mode"] == mode]
                med.append(statistics.median(v))
                lo.append(statistics.median(v) - min(v))
                hi.append(max(v) - statistics.median(v))
            pos = [j + (i - 0.5) * 0.38 for j in range(len(fss))]
            ax.bar(pos, med, 0.38, yerr=[lo, hi], capsize=4,
                   label=f"native {x + y}" if mode == "native" else f"zipper {x}+{y}")
        ax.set_xticks(range(len(fss)))
        ax.set_xticklabels([fs for fs, _ in fss])
        ax.set_ylabel(label)
        ax.legend()
    fig.suptitle(f"MPI-IO, {a.mib} MiB per rank, median of {a.repeat} (bars: min..max)")
    fig.tight_layout()
    fig.savefig(os.path.join(a.out_dir, "io.png"), dpi=110)
    return 0


if __name__ == "__main__":
    sys.exit(main())
