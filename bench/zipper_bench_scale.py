"""zipper-bench scale: zipperd's cost as the ranks grow.

For k = 1 and 2 bridge nodes and each size N (virtual ranks per side, 16 up
to 16384 by default), zipper-bench starts k zipperds on loopback
(zipper_bench_zipperd) and runs zipper-loadgen with
  - one job of N+N ranks in a ring, 8 B messages at a fixed total rate
    (--frame-rate frames/s over all ranks, for --seconds): every rank is
    admitted on every zipperd and sends, so zipperd's per-rank costs show
    against a load of the same size at every N;
  - one pingpong job of 1+1 ranks beside it, 8 B round trips spread over the
    same seconds: the latency of an 8 B exchange at that scale.
Every message is checked and zipperd's counters are compared with what was
sent (zipper-loadgen); a size whose run fails is reported and left out of
the curves.

Writes DIR/scale.csv (one row per k and N: zipperd RSS before and after
admission and per admitted rank, CPU per relayed frame and per admitted
rank, admission time of the N+N job, p50/p99 of the 8 B exchange and of the
ring's messages), DIR/scale-raw/kK-nN.json (zipper-loadgen's report) and
DIR/scale.png (four panels against N: RSS, CPU per frame, admission time,
8 B latency). Sizes that need more file descriptors than this host allows
(2N per zipperd; root raises the limit up to fs.nr_open) are skipped with
the reason.

Runs on this host alone: no root, no namespaces. Figures are only worth
reading on an idle host.
"""

import json
import math
import os
import resource
import subprocess
import sys

from zipper_bench_zipperd import LocalZipperd, ZipperdError

FIELDS = ["k", "ranks_per_side", "ranks", "procs", "ok",
          "rss_base_mib", "rss_admitted_mib", "rss_per_rank_b",
          "cpu_per_frame_us", "cpu_admission_per_rank_us", "frames",
          "job_admission_s", "probe_p50_us", "probe_p99_us", "ring_p50_us", "ring_p99_us",
          "loadgen_cpu_s", "wall_s"]


def add_parser(sub):
    s = sub.add_parser("scale", help="zipperd's memory, CPU, admission and latency as ranks grow")
    s.add_argument("--ranks", default="",
                   help="virtual ranks per side, comma-separated (default: powers of 4 from 16 "
                        "to --max-ranks)")
    s.add_argument("--max-ranks", type=int, default=16384, help="largest N (default 16384)")
    s.add_argument("--zippers", default="1,2", help="k values (bridge nodes)")
    s.add_argument("--frame-rate", type=float, default=20000,
                   help="8 B messages per second, all ranks of the ring together")
    s.add_argument("--seconds", type=float, default=5, help="how long the ring's traffic runs")
    s.add_argument("--probe-messages", type=int, default=2000, help="8 B round trips of the probe")
    s.add_argument("--procs", type=int, default=0,
                   help="zipper-loadgen worker processes (0: one per 4096 connections, at most 8)")
    s.add_argument("--port", type=int, default=0,
                   help="first port for the zipperds (3 each: A, B, /metrics); 0: the kernel's "
                        "choice")
    s.add_argument("--out-dir", default="bench-scale")
    return s


def sizes(args):
    if args.ranks:
        try:
            out = [int(v) for v in args.ranks.split(",")]
        except ValueError:
            sys.exit(f"zipper-bench: --ranks {args.ranks}: not a list of numbers")
        if any(n < 1 for n in out):
            sys.exit("zipper-bench: --ranks: each N at least 1")
        return out
    out, n = [], 16
    while n <= args.max_ranks:
        out.append(n)
        n *= 4
    if out and out[-1] != args.max_ranks and args.max_ranks > 16:
        out.append(args.max_ranks)
    return out


def fd_room(need):
    """None when a process may open `need` descriptors here, else why not."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if need <= hard or os.geteuid() == 0:
        return None
    return f"needs {need} file descriptors per process, the hard limit is {hard} (raise it, or run as root)"


def run_one(args, tool, k, n, raw_dir):
    """One zipper-loadgen run of N+N ranks through k zipperds; the CSV row."""
    conns = 2 * n + 64  # per zipperd: the ring job, the probe, spare
    why = fd_room(conns + 64)
    if why:
        print(f"zipper-bench: skipping k={k} N={n}: zipperd {why}", file=sys.stderr)
        return None
    rate = args.frame_rate / (2 * n)  # per rank
    messages = max(1, round(rate * args.seconds))
    procs = args.procs or max(1, min(8, math.ceil(2 * n * k / 4096)))
    limits = ["--max-connections", str(conns), "--max-job-connections-share", "100",
              "--max-ranks", str(max(65536, 2 * n + 2)), "--max-jobs-per-user", "64",
              "--max-jobs-per-prefix", "64"]
    zs = [LocalZipperd(tool("zipperd"), limits, port=args.port + 3 * i if args.port else 0,
                       fds=conns) for i in range(k)]
    row = {"k": k, "ranks_per_side": n, "ranks": 2 * n, "procs": procs, "ok": 0}
    try:
        for z in zs:
            z.start()
        cmd = [tool("zipper-loadgen"), "--procs", str(procs),
               "--timeout", str(int(120 + args.seconds + n / 50))]
        for z in zs:
            cmd += ["--zipperd", z.loadgen_spec()]
        cmd += ["--job", f"name=ring,layout={n}+{n},pattern=ring,size=8,messages={messages},"
                         f"rate={rate:.6g}",
                "--job", f"name=probe,layout=1+1,pattern=pingpong,size=8,"
                         f"messages={args.probe_messages},"
                         f"rate={args.probe_messages / args.seconds:.6g}"]
        print("zipper-bench: running", " ".join(cmd), flush=True)
        p = subprocess.run(cmd, stdout=subprocess.PIPE, text=True)
    except ZipperdError as e:
        print(f"zipper-bench: k={k} N={n}: {e}", file=sys.stderr)
        return row
    finally:
        for z in zs:
            if z.proc and z.proc.poll() is not None:
                print(f"zipper-bench: zipperd {z.pid} died:\n{z.log_tail()}", file=sys.stderr)
            z.stop()
    with open(os.path.join(raw_dir, f"k{k}-n{n}.json"), "w") as f:
        f.write(p.stdout)
    try:
        rep = json.loads(p.stdout)
    except json.JSONDecodeError:
        print(f"zipper-bench: k={k} N={n}: zipper-loadgen failed with status {p.returncode}",
              file=sys.stderr)
        return row
    return row | summarize(rep, p.returncode == 0)


def summarize(rep, ok):
    groups = {g["name"]: g for g in rep["groups"]}
    zs = rep["zipperd"]

    def mean(key, scale=1.0):
        v = [z[key] for z in zs if z.get(key) is not None]
        return round(sum(v) / len(v) * scale, 3) if v else ""

    def rss(phase):
        v = [z["rss_kib"][phase] for z in zs if z["rss_kib"][phase] is not None]
        return round(sum(v) / len(v) / 1024, 2) if v else ""

    ring, probe = groups["ring"], groups["probe"]
    return {"ok": int(ok and rep["ok"]),
            "rss_base_mib": rss("base"), "rss_admitted_mib": rss("admitted"),
            "rss_per_rank_b": mean("rss_per_admitted_rank_b"),
            "cpu_per_frame_us": mean("cpu_per_frame_us"),
            "cpu_admission_per_rank_us": mean("cpu_per_admitted_rank_us"),
            "frames": sum(z["frames_traffic"] for z in zs),
            "job_admission_s": ring["job_admission_s"]["max"],
            "probe_p50_us": round(probe["latency_us"]["p50"], 2),
            "probe_p99_us": round(probe["latency_us"]["p99"], 2),
            "ring_p50_us": round(ring["latency_us"]["p50"], 2),
            "ring_p99_us": round(ring["latency_us"]["p99"], 2),
            "loadgen_cpu_s": round(rep["loadgen_cpu_s"], 3), "wall_s": round(rep["wall_s"], 2)}


def plot(pyplot, rows, path):
    plt = pyplot()
    if plt is None:
        return
    fig, ax = plt.subplots(2, 2, figsize=(11, 8))
    panels = [(ax[0][0], [("rss_per_rank_b", "")], "zipperd RSS per admitted rank (bytes)"),
              (ax[0][1], [("cpu_per_frame_us", "")], "zipperd CPU per relayed frame (us)"),
              (ax[1][0], [("job_admission_s", "")], "admission of the N+N job (s)"),
              (ax[1][1], [("probe_p50_us", " p50"), ("probe_p99_us", " p99")],
               "8 B one-way latency beside the ring (us)")]
    ks = sorted({int(r["k"]) for r in rows})
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for a, series, title in panels:
        for ki, k in enumerate(ks):
            pts = sorted((int(r["ranks_per_side"]), r) for r in rows
                         if int(r["k"]) == k and str(r["ok"]) == "1")
            for key, suffix in series:
                xy = [(n, float(r[key])) for n, r in pts if r.get(key) not in ("", None)]
                if xy:
                    a.plot([x for x, _ in xy], [y for _, y in xy], marker="o",
                           color=colors[ki % len(colors)],
                           linestyle="--" if suffix == " p99" else "-", label=f"k={k}{suffix}")
        a.set_xscale("log", base=2)
        if len(series) > 1:
            a.set_yscale("log")  # p99 may lie orders of magnitude above p50
        a.set_xlabel("virtual ranks per side (N)")
        a.set_title(title)
        a.grid(True, alpha=0.3)
        a.legend()
    fig.suptitle("zipperd as ranks grow (zipper-loadgen on loopback, 8 B messages)")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    print(f"zipper-bench: wrote {path}")


def scale(args, tool, pyplot, write_csv, read_csv):
    os.makedirs(args.out_dir, exist_ok=True)
    csv_path = os.path.join(args.out_dir, "scale.csv")
    if args.replot:
        rows = read_csv(csv_path)
    else:
        try:
            ks = [int(v) for v in args.zippers.split(",")]
        except ValueError:
            sys.exit(f"zipper-bench: --zippers {args.zippers}: not a list of numbers")
        if any(k < 1 or k > 8 for k in ks):
            sys.exit("zipper-bench: --zippers: each k from 1 to 8")
        raw = os.path.join(args.out_dir, "scale-raw")
        os.makedirs(raw, exist_ok=True)
        rows = []
        for k in ks:
            for n in sizes(args):
                row = run_one(args, tool, k, n, raw)
                if row:
                    rows.append(row)
                    write_csv(csv_path, rows, FIELDS)  # after each size: a long run keeps its rows
        print(f"zipper-bench: wrote {csv_path}")
    for r in rows:
        print("  ".join(f"{f}={r.get(f, '')}" for f in FIELDS))
    plot(pyplot, rows, os.path.join(args.out_dir, "scale.png"))
    failed = [f"k={r['k']} N={r['ranks_per_side']}" for r in rows if str(r.get("ok")) != "1"]
    if failed:
        sys.exit("zipper-bench: failed runs (ok=0, left out of the plots): " + ", ".join(failed))
    return 0
