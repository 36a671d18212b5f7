"""zipper-bench p2p: OSU-style point-to-point natively in A, in B and
forwarded through zipperd, shaped and unshaped (the usage is in zipper_bench.py)."""

import argparse
import os
import re
import statistics
import subprocess
import sys
import time

from zipper_bench_common import launch, emulate_up, pyplot, read_csv, tool, usage_error, write_csv


def mode_args(args):
    """zipper-run's options for where the job runs (p2p --local / --hostfile-a ...)."""
    if args.local:
        out = ["--local"]
        if args.forwarder_a:
            out += ["--forwarder-a", with_scheme(args.forwarder_a, args.link),
                    "--forwarder-b", with_scheme(args.forwarder_b or args.forwarder_a, args.link)]
        return out
    if args.hostfile_a:
        return ["--hostfile-a", args.hostfile_a, "--hostfile-b", args.hostfile_b,
                "--forwarder-a", with_scheme(args.forwarder_a, args.link),
                "--forwarder-b", with_scheme(args.forwarder_b, args.link), "--no-zipperd"]
    return ["--emulated", "--nodes-a", "2", "--nodes-b", "2"]


def with_scheme(addr, link):
    return addr if addr.startswith(("tcp:", "verbs:")) else f"{link}:{addr}"


def osu_rows(text):
    """{size: value} from an OSU point-to-point table."""
    out = {}
    for line in text.splitlines():
        f = line.split()
        if len(f) == 2 and re.fullmatch(r"\d+", f[0]) and re.fullmatch(r"[0-9.]+", f[1]):
            out[int(f[0])] = float(f[1])
    return out


def sweep_sizes(spec):
    """The sizes osu_p2p.h walks for -m spec (default 1:4194304; 0, then doubling)."""
    lo, hi = 1, 4194304
    if spec:
        if ":" in spec:
            a, b = spec.split(":", 1)
            lo, hi = int(a) if a else lo, int(b) if b else hi
        else:
            hi = int(spec)
    s, out = lo, []
    while s <= hi:
        out.append(s)
        s = s * 2 if s else 1
    return out


def perftest_one(args, bench, size):
    """perftest between two local RDMA devices (one hop): latency us or MB/s (10^6 B)."""
    server_dev, client_dev, server_ip = args.perftest.split(",")
    win = args.window or 64
    n = args.iterations or ((1000 if size > 8192 else 10000) if bench == "latency"
                            else (20 if size > 8192 else 100))
    n = max(5, n if bench == "latency" else n * win)  # perftest's minimum is 5
    tool_name = "ib_send_lat" if bench == "latency" else "ib_write_bw"
    opts = (["-b"] if bench == "bibw" else []) + ["-F", "-p", "18515", "-s", str(size), "-n", str(n)]
    opts += ["-x", str(args.perftest_gid)] if args.perftest_gid is not None else []
    srv = subprocess.Popen([tool_name, "-d", server_dev] + opts, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
    try:
        # The client must not connect before the server listens.
        for _ in range(300):
            ss = subprocess.run(["ss", "-Hltn", "sport = :18515"], stdout=subprocess.PIPE, text=True)
            if ss.stdout.strip() or srv.poll() is not None:
                break
            time.sleep(0.1)
        cli = subprocess.run([tool_name, "-d", client_dev] + opts + [server_ip],
                             stdout=subprocess.PIPE, text=True, timeout=args.timeout)
        srv.wait(timeout=30)
    except subprocess.TimeoutExpired:
        print(f"zipper-bench: perftest {bench} {size} B timed out", file=sys.stderr)
        return None
    finally:
        if srv.poll() is None:
            srv.terminate()
            srv.wait()
    value, col, head = None, None, False
    for line in cli.stdout.splitlines():
        f = line.split()
        if bench == "latency":
            if "t_avg[usec]" in line:
                col = next(i for i, w in enumerate(f) if w.startswith("t_avg"))
            elif col is not None and f and f[0].isdigit() and len(f) > col:
                value = float(f[col])
        else:
            if "BW average[MB/sec]" in line:
                head = True
            elif head and f and f[0].isdigit() and len(f) >= 4:
                value = float(f[3]) * 1048576 / 1e6
    return value


def busy_cpu_seconds():
    """CPU-seconds spent busy (not idle or waiting for I/O) on this host so far."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    return (sum(v) - v[3] - v[4]) / os.sysconf("SC_CLK_TCK")


def p2p_measure(args, links, path):
    """Measures one link setting; writes the per-setting CSV at path."""
    benches = args.bench.split(",")
    modes = args.modes.split(",")
    where = mode_args(args) + [f"--zipperd-arg={a}" for a in args.zipperd_arg]
    if not args.local and not args.hostfile_a:
        emulate_up(2, 2, args.rate_a if links == "shaped" else "",
                   args.rate_b if links == "shaped" else "")
    opts = (["-m", args.message_size] if args.message_size else []) + \
           (["-i", str(args.iterations)] if args.iterations else []) + \
           (["-x", str(args.warmup)] if args.warmup else [])
    values, failed, cores = {}, [], {}
    for b in benches:
        bopts = opts + (["-W", str(args.window)] if args.window and b != "latency" else [])
        runs = {"native_a": (2, 0, f"osu_{b}_native", True),
                "native_b": (0, 2, f"osu_{b}_native", True),
                "forwarded": (1, 1, f"osu_{b}", False),
                "forwarded_splice": (1, 1, f"osu_{b}", False)}
        for m in modes:
            x, y, prog, standalone = runs[m]
            # forwarded_splice: zipperd with --splice true (payloads moved by
            # splice(), not copied), beside the default copying relay.
            extra = ["--zipperd-arg", "--splice", "--zipperd-arg", "true"] \
                if m == "forwarded_splice" else []
            busy = []
            for n in range(args.repeat):
                cpu0, t0 = busy_cpu_seconds(), time.monotonic()
                rc, text = launch(where + extra, x, y, [tool(prog)] + bopts, standalone,
                                  args.timeout, args.mpirun_args)
                # Whole job, launch included: how many of the host's cores the
                # mode kept busy (all of them = CPU-bound, not link-bound).
                busy.append((busy_cpu_seconds() - cpu0) / (time.monotonic() - t0))
                if rc != 0:
                    sys.stdout.write(text)
                    failed.append(f"{b}.{m}" + (f".run{n + 1}" if args.repeat > 1 else ""))
                for size, v in osu_rows(text).items():
                    values.setdefault((b, size, m), []).append(v)
            cores[(b, m)] = statistics.median(busy)
        if args.perftest:
            for size in sweep_sizes(args.message_size):
                if size == 0:
                    continue
                v = perftest_one(args, b, size)
                if v is None:
                    failed.append(f"{b}.perftest.{size}")
                else:
                    values[(b, size, "perftest")] = [v]
    def ratio(a, c):
        return f"{a / c:.3f}" if a is not None and c else ""
    rows = []
    for b, size in sorted({(k[0], k[1]) for k in values}, key=lambda k: (benches.index(k[0]), k[1])):
        runs_of = {m: values.get((b, size, m)) for m in RUN_MODES + ("perftest",)}
        # Medians of the --repeat runs; the spread goes to <mode>_min/_max.
        v = {m: statistics.median(r) if r else None for m, r in runs_of.items()}
        f = v["forwarded"]
        rows.append({"benchmark": b, "size_bytes": size,
                     **{m: ("" if v[m] is None else v[m]) for m in v},
                     **{f"{m}_{k}": (fn(runs_of[m]) if runs_of[m] else "")
                        for m in RUN_MODES for k, fn in (("min", min), ("max", max))},
                     "fwd_over_native_a": ratio(f, v["native_a"]),
                     "fwd_over_native_b": ratio(f, v["native_b"]),
                     "fwd_over_sum_native": ratio(f, (v["native_a"] or 0) + (v["native_b"] or 0))
                     if b == "latency" and v["native_a"] and v["native_b"] else "",
                     "fwd_over_perftest": ratio(f, v["perftest"]),
                     "splice_over_native_a": ratio(v["forwarded_splice"], v["native_a"]),
                     **{f"cores_busy_{m}": f"{cores[(b, m)]:.2f}" if (b, m) in cores else ""
                        for m in ("native_a", "native_b", "forwarded", "forwarded_splice")}})
    write_csv(path, rows, P2P_FIELDS)
    if failed:
        print("zipper-bench: FAILED runs: " + ", ".join(failed), file=sys.stderr)
    return not failed


RUN_MODES = ("native_a", "native_b", "forwarded", "forwarded_splice")


P2P_FIELDS = ["benchmark", "size_bytes", "native_a", "native_b", "forwarded", "fwd_over_native_a",
              "fwd_over_native_b", "fwd_over_sum_native", "perftest", "fwd_over_perftest",
              "forwarded_splice", "splice_over_native_a", "cores_busy_native_a",
              "cores_busy_native_b", "cores_busy_forwarded", "cores_busy_forwarded_splice"] + \
    [f"{m}_{k}" for m in RUN_MODES for k in ("min", "max")]


def add_parser(sub):
    """The p2p subcommand's options."""
    p = sub.add_parser("p2p", help="point-to-point, shaped and unshaped side by side",
                       formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--links", default="shaped,unshaped",
                   help="emulated link settings to run, comma-separated: shaped (TBF at "
                   "--rate-a/--rate-b), unshaped")
    p.add_argument("--bench", default="latency,bw,bibw", help="OSU benchmarks, comma-separated")
    p.add_argument("--modes", default="native_a,native_b,forwarded",
                   help="runs per benchmark, comma-separated (also forwarded_splice)")
    p.add_argument("-m", "--message-size", default="",
                   help="[MIN:]MAX bytes (osu -m; empty: 1:4194304)")
    p.add_argument("-i", "--iterations", type=int, default=0,
                   help="timed iterations per size (osu -i; 0: OSU's default)")
    p.add_argument("-x", "--warmup", type=int, default=0,
                   help="warm-up iterations per size (osu -x; 0: OSU's default)")
    p.add_argument("-W", "--window", type=int, default=0,
                   help="messages in flight for bw/bibw (osu -W; 0: OSU's default, 64)")
    p.add_argument("--repeat", type=int, default=1,
                   help="runs of every job: the CSV gives the median and min/max, the plots "
                   "shade the spread")
    p.add_argument("--rate-a", default="1gbit", help="cluster A's link rate when shaped (tc rate)")
    p.add_argument("--rate-b", default="4gbit", help="cluster B's link rate when shaped (tc rate)")
    p.add_argument("--local", action="store_true",
                   help="everything on this host over loopback (zipper-run --local)")
    p.add_argument("--hostfile-a", default="", help="real clusters: cluster A's mpirun hostfile")
    p.add_argument("--hostfile-b", default="", help="real clusters: cluster B's mpirun hostfile")
    p.add_argument("--forwarder-a", default="", help="zipperd's address for cluster A, HOST:PORT")
    p.add_argument("--forwarder-b", default="", help="zipperd's address for cluster B, HOST:PORT")
    p.add_argument("--link", choices=("tcp", "verbs"), default="tcp",
                   help="link to zipperd for forwarder addresses without a scheme")
    p.add_argument("--mpirun-args", default="", help="extra mpirun arguments (zipper-run)")
    p.add_argument("--zipperd-arg", action="append", default=[], metavar="ARG",
                   help="extra zipperd argument (repeatable; zipper-run --zipperd-arg), e.g. "
                   "--zipperd-arg=--verbs-write-min=0")
    p.add_argument("--perftest", default="",
                   help="SERVER_DEV,CLIENT_DEV,SERVER_IP: add ib_send_lat / ib_write_bw")
    p.add_argument("--perftest-gid", type=int, default=None, help="GID index for perftest (-x)")
    p.add_argument("--timeout", type=int, default=1800, help="limit per run, seconds")
    p.add_argument("--out-dir", default="bench-p2p", help="where the CSV and plots go")
    return p


def run(args, extra):
    for b in args.bench.split(","):
        if b not in ("latency", "bw", "bibw"):
            usage_error(f"--bench takes latency, bw and bibw, not '{b}'")
    for m in args.modes.split(","):
        if m not in ("native_a", "native_b", "forwarded", "forwarded_splice"):
            usage_error("--modes takes native_a, native_b, forwarded and "
                    f"forwarded_splice, not '{m}'")
    real = [args.hostfile_a, args.hostfile_b, args.forwarder_a, args.forwarder_b]
    if any(real[:2]) and not all(real):
        usage_error("real clusters need --hostfile-a, --hostfile-b, --forwarder-a "
                    "and --forwarder-b")
    if args.local and args.hostfile_a:
        usage_error("--local and --hostfile-a/-b are exclusive")
    if args.perftest and len(args.perftest.split(",")) != 3:
        usage_error(f"--perftest wants SERVER_DEV,CLIENT_DEV,SERVER_IP, got '{args.perftest}'")
    os.makedirs(args.out_dir, exist_ok=True)
    merged, ok = [], True
    if args.repeat < 1:
        usage_error(f"--repeat must be at least 1, got {args.repeat}")
    # Named by where the runs happen: a --local run is not a real cluster.
    settings = (["local"] if args.local else ["real"] if args.hostfile_a
                else args.links.split(","))
    for links in settings:
        if links not in ("shaped", "unshaped", "real", "local"):
            usage_error(f"--links takes shaped and unshaped, not '{links}'")
        out = os.path.join(args.out_dir, f"p2p-{links}.csv")
        if not args.replot:
            ok &= p2p_measure(args, links, out)
        merged += [dict(r, links=links) for r in read_csv(out)]
    fields = ["links"] + P2P_FIELDS
    path = os.path.join(args.out_dir, "p2p.csv")
    write_csv(path, merged, fields)
    print(f"\n{'bench':8} {'size':>9} " + " ".join(f"{l + ' fwd/A':>16}" for l in settings))
    keys = sorted({(r["benchmark"], int(r["size_bytes"])) for r in merged})
    for bench, size in keys:
        cells = []
        for links in settings:
            r = next((r for r in merged if r["links"] == links and r["benchmark"] == bench
                      and r["size_bytes"] == str(size)), None)
            cells.append(f"{r['fwd_over_native_a'] if r else '':>16}")
        print(f"{bench:8} {size:>9} " + " ".join(cells))
    print(f"zipper-bench: wrote {path}")
    plt = pyplot()
    if plt:
        for bench, unit in (("bw", "MB/s"), ("bibw", "MB/s"), ("latency", "us")):
            rows = [r for r in merged if r["benchmark"] == bench]
            if not rows:
                continue
            fig, (top, bottom) = plt.subplots(2, 1, figsize=(8, 7), sharex=True,
                                              gridspec_kw={"height_ratios": [3, 2]})
            for links, style in (("shaped", "-"), ("unshaped", "--"), ("real", "-"),
                                 ("local", "-")):
                sel = sorted((r for r in rows if r["links"] == links),
                             key=lambda r: int(r["size_bytes"]))
                if not sel:
                    continue
                for col, colour in (("native_a", "tab:blue"), ("native_b", "tab:green"),
                                    ("forwarded", "tab:red"), ("forwarded_splice", "tab:orange"),
                                    ("perftest", "tab:grey")):
                    # .get: CSVs from before a column existed still plot.
                    pts = [(max(int(r["size_bytes"]), 1), float(r[col])) for r in sel
                           if r.get(col)]
                    if pts:
                        top.plot([p[0] for p in pts], [p[1] for p in pts], style, color=colour,
                                 marker=".", label=f"{col} ({links})")
                    # The spread of --repeat runs: min to max around the median.
                    spread = [(max(int(r["size_bytes"]), 1), float(r[f"{col}_min"]),
                               float(r[f"{col}_max"])) for r in sel
                              if r.get(f"{col}_min") and r.get(f"{col}_max")]
                    if spread and any(lo != hi for _, lo, hi in spread):
                        top.fill_between([p[0] for p in spread], [p[1] for p in spread],
                                         [p[2] for p in spread], color=colour, alpha=0.2,
                                         linewidth=0)
                pts = [(max(int(r["size_bytes"]), 1), float(r["fwd_over_native_a"])) for r in sel
                       if r.get("fwd_over_native_a")]
                bottom.plot([p[0] for p in pts], [p[1] for p in pts], style, color="tab:red",
                            marker=".", label=f"forwarded / native A ({links})")
            top.set_xscale("log", base=2)
            top.set_yscale("log")
            top.set_ylabel(unit)
            spread = any(r.get(f"{m}_min") != r.get(f"{m}_max") for r in rows for m in RUN_MODES)
            runs = ",\nmedian of repeated runs (shaded: min to max)" if spread else ""
            top.set_title(f"osu_{bench}: native inside a cluster vs forwarded through zipperd{runs}",
                          fontsize=9)
            top.legend(fontsize=7)
            bottom.axhline(1.0, color="grey", linewidth=0.8, label="1.0: as fast as native")
            if bench == "latency":
                bottom.axhline(2.0, color="grey", linewidth=0.8, linestyle=":",
                               label="2.0: store-and-forward (two native hops)")
            bottom.set_xlabel("message size (bytes)")
            bottom.set_ylabel("ratio")
            bottom.legend(fontsize=7)
            png = os.path.join(args.out_dir, f"p2p-{bench}.png")
            fig.tight_layout()
            fig.savefig(png, dpi=110)
            plt.close(fig)
            print(f"zipper-bench: wrote {png}")
    if not ok:
        sys.exit(1)
