"""zipper-bench stripe / failover: the k-bridge-node measurements.

stripe: bandwidth through k = 1, 2, 4 ... forwarders, alternating k within
  each round: one pair (1+1) and P pairs at once (P+P, aggregate), each a
  verified zipper_stream of --messages x --size bytes per pair. The emulation
  has zipper nodes zipper1..K, their ports shaped to --rate-zipper, so that
  the bridge nodes, not the clusters, are the bottleneck. Writes
  DIR/stripe.csv (round,k,pairs,bytes,seconds,mb_s), DIR/stripe-ratios.csv
  (MB/s at k over k=1, median and spread) and DIR/stripe.png.

failover: a verified zipper_stream 1+1 through two forwarders, undisturbed
  and with one zipperd sent --signal (KILL: a dead process; STOP: a hang) at
  --kill-at seconds, alternating. Reports total time against undisturbed and
  the time from the signal to the next message completed (traffic flowing
  again). Writes DIR/failover.csv and DIR/failover.png (messages completed
  against time, the signal marked).

Wall-clock times (CLOCK_REALTIME) of the stream and of the signal share one
host, so they lie on one axis.
"""

import csv
import os
import signal
import statistics
import subprocess
import sys
import time


def add_parsers(sub):
    s = sub.add_parser("stripe", help="bandwidth through k forwarders (k=1 vs 2, 4 ...)")
    s.add_argument("--zippers", default="1,2,4", help="k values, k=1 first")
    s.add_argument("--pairs", default="1,4", help="streams at once (layout P+P)")
    s.add_argument("--size", type=int, default=4 << 20, help="bytes per message")
    s.add_argument("--messages", type=int, default=64, help="per pair")
    s.add_argument("--rate-zipper", default="1gbit", help="zipper ports ('' unshaped)")
    s.add_argument("--rate-a", default="4gbit")
    s.add_argument("--rate-b", default="4gbit")
    s.add_argument("--repeat", type=int, default=3)
    s.add_argument("--out-dir", default="bench-stripe")
    f = sub.add_parser("failover", help="a stream while one of two zipperd dies or hangs")
    f.add_argument("--signal", choices=("KILL", "STOP"), default="KILL")
    f.add_argument("--kill-at", type=float, default=10.0, help="seconds after the stream starts")
    f.add_argument("--size", type=int, default=4 << 20)
    f.add_argument("--messages", type=int, default=0,
                   help="default: about 30 s at --rate-zipper over 2 forwarders")
    f.add_argument("--rate-zipper", default="1gbit")
    f.add_argument("--rate-a", default="4gbit")
    f.add_argument("--rate-b", default="4gbit")
    f.add_argument("--repeat", type=int, default=3)
    f.add_argument("--out-dir", default="bench-failover")
    return s, f


def rate_bits(rate):
    units = {"kbit": 1e3, "mbit": 1e6, "gbit": 1e9}
    for u, m in units.items():
        if rate.endswith(u):
            return float(rate[: -len(u)]) * m
    return float(rate)


def emulate(tool, nodes, k, args):
    cmd = [tool("zipper-emulate"), "up", "--nodes-a", str(nodes), "--nodes-b", str(nodes),
           "--zippers", str(k)]
    for opt, val in (("--rate-a", args.rate_a), ("--rate-b", args.rate_b),
                     ("--rate-zipper", args.rate_zipper)):
        if val:
            cmd += [opt, val]
    print("zipper-bench: running", " ".join(cmd), flush=True)
    if subprocess.call(cmd) != 0:
        sys.exit("zipper-bench: zipper-emulate up failed")


def stream_cmd(tool, k, pairs, size, messages, timeline=None):
    cmd = [tool("zipper-run"), "--emulated", "--zippers", str(k), "-x", str(pairs), "-y",
           str(pairs), "--nodes-a", str(pairs), "--nodes-b", str(pairs), "--timeout", "900",
           "--", tool("zipper_stream"), "-m", str(size), "-n", str(messages), "-p", str(pairs)]
    return cmd + (["-o", timeline] if timeline else [])


def parse_stream(text):
    agg = [l for l in text.splitlines() if l.startswith("# zipper_stream aggregate:")]
    one = [l for l in text.splitlines() if l.startswith("# zipper_stream:")]
    if not agg:
        return None
    f = agg[-1].split()
    out = {"bytes": int(f[5]), "seconds": float(f[8]), "mb_s": float(f[10])}
    if one:
        g = one[-1].replace(",", "").split()
        out["gap"] = float(g[-4])  # "... longest gap G s, start T"
        out["start"] = float(g[-1])
    return out


def stripe(args, tool, pyplot, write_csv):
    os.makedirs(args.out_dir, exist_ok=True)
    ks = [int(v) for v in args.zippers.split(",")]
    pairs_list = [int(v) for v in args.pairs.split(",")]
    if ks[0] != 1:
        sys.exit("zipper-bench stripe: --zippers must start with 1 (the reference)")
    rows = []
    emulate(tool, max(pairs_list), max(ks), args)
    for r in range(args.repeat):
        for pairs in pairs_list:
            for k in ks:
                cmd = stream_cmd(tool, k, pairs, args.size, args.messages)
                print("zipper-bench: running", " ".join(cmd), flush=True)
                p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                   text=True)
                res = parse_stream(p.stdout)
                if p.returncode != 0 or not res:
                    sys.stdout.write(p.stdout[-4000:])
                    sys.exit(f"zipper-bench stripe: k={k} pairs={pairs} failed ({p.returncode})")
                rows.append(dict(round=r, k=k, pairs=pairs, **res))
                write_csv(os.path.join(args.out_dir, "stripe.csv"), rows,
                          ["round", "k", "pairs", "bytes", "seconds", "mb_s"])
    ratios = []
    print(f"\n{'pairs':>5} {'k':>3} {'MB/s (median)':>14} {'vs k=1 (median, min-max)':>28}")
    for pairs in pairs_list:
        for k in ks:
            rs, bw = [], []
            for r in range(args.repeat):
                base = next(x["mb_s"] for x in rows if (x["round"], x["k"], x["pairs"]) == (r, 1, pairs))
                cur = next(x["mb_s"] for x in rows if (x["round"], x["k"], x["pairs"]) == (r, k, pairs))
                rs.append(cur / base)
                bw.append(cur)
            ratios.append(dict(pairs=pairs, k=k, mb_s_median=f"{statistics.median(bw):.1f}",
                               over_k1=f"{statistics.median(rs):.3f}", over_k1_min=f"{min(rs):.3f}",
                               over_k1_max=f"{max(rs):.3f}"))
            print(f"{pairs:>5} {k:>3} {statistics.median(bw):>14.1f} "
                  f"{statistics.median(rs):>10.3f} ({min(rs):.3f}-{max(rs):.3f})")
    write_csv(os.path.join(args.out_dir, "stripe-ratios.csv"), ratios,
              ["pairs", "k", "mb_s_median", "over_k1", "over_k1_min", "over_k1_max"])
    plt = pyplot()
    if not plt:
        return
    fig, ax = plt.subplots(figsize=(6, 4))
    for i, pairs in enumerate(pairs_list):
        med = [statistics.median(x["mb_s"] for x in rows if (x["k"], x["pairs"]) == (k, pairs))
               for k in ks]
        lo = [m - min(x["mb_s"] for x in rows if (x["k"], x["pairs"]) == (k, pairs))
              for m, k in zip(med, ks)]
        hi = [max(x["mb_s"] for x in rows if (x["k"], x["pairs"]) == (k, pairs)) - m
              for m, k in zip(med, ks)]
        ax.errorbar(ks, med, yerr=[lo, hi], marker="o", capsize=3, color=f"C{i}",
                    label=f"{pairs} pair(s)")
        ax.plot(ks, [med[0] * k for k in ks], linestyle=":", color=f"C{i}",
                label=f"{pairs} pair(s): k x (k=1)")
    if args.rate_zipper:
        ax.axhline(rate_bits(args.rate_zipper) / 8e6, color="grey", linewidth=0.8,
                   label=f"one zipper port ({args.rate_zipper})")
    ax.set_xlabel("forwarders k")
    ax.set_ylabel("MB/s (aggregate)")
    ax.set_xticks(ks)
    ax.set_title(f"striping over k bridge nodes, {args.size >> 20} MiB messages")
    ax.legend(fontsize=7)
    fig.tight_layout()
    png = os.path.join(args.out_dir, "stripe.png")
    fig.savefig(png, dpi=110)
    plt.close(fig)
    print(f"zipper-bench: wrote {png}")


def zipperd_pid(ns):
    """The zipperd process inside network namespace `ns`, or None."""
    p = subprocess.run(["ip", "netns", "pids", ns], stdout=subprocess.PIPE, text=True)
    for pid in p.stdout.split():
        try:
            with open(f"/proc/{pid}/comm") as f:
                if f.read().strip() == "zipperd":
                    return int(pid)
        except OSError:
            continue
    return None


def read_timeline(path):
    with open(path, newline="") as f:
        return sorted(float(r["unix_time_s"]) for r in csv.DictReader(f))


def failover(args, tool, pyplot, write_csv):
    os.makedirs(args.out_dir, exist_ok=True)
    out = os.path.abspath(args.out_dir)
    messages = args.messages or max(8, int(30 * 2 * rate_bits(args.rate_zipper) / 8 / args.size))
    emulate(tool, 1, 2, args)
    rows, timelines = [], {}
    for r in range(args.repeat):
        for disturbed in (False, True):
            tl = os.path.join(out, f"timeline-{r}-{'signal' if disturbed else 'calm'}.csv")
            cmd = stream_cmd(tool, 2, 1, args.size, messages, tl)
            print("zipper-bench: running", " ".join(cmd), flush=True)
            proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                    text=True)
            sig_at = None
            victim = None
            if disturbed:
                deadline = time.time() + args.kill_at + 60
                # The stream starts after init; wait for both zipperd, then the mark.
                while victim is None and time.time() < deadline and proc.poll() is None:
                    victim = zipperd_pid("zipper2")
                    time.sleep(0.05)
                time.sleep(args.kill_at)
                if victim is not None and proc.poll() is None:
                    sig_at = time.time()
                    os.kill(victim, getattr(signal, "SIG" + args.signal))
            text, _ = proc.communicate()
            if args.signal == "STOP" and victim is not None:
                try:
                    os.kill(victim, signal.SIGKILL)  # a stopped zipperd never ends by itself
                except ProcessLookupError:
                    pass
            res = parse_stream(text)
            if proc.returncode != 0 or not res:
                sys.stdout.write(text[-4000:])
                sys.exit(f"zipper-bench failover: run {r} ({'signal' if disturbed else 'calm'}) "
                         f"failed with status {proc.returncode}: the stream must survive")
            times = read_timeline(tl)
            row = dict(round=r, disturbed=int(disturbed), signal=args.signal if disturbed else "",
                       messages=messages, bytes=res["bytes"], seconds=res["seconds"],
                       mb_s=res["mb_s"], signal_after_s="", resumed_after_s="")
            if sig_at is not None:
                after = [t for t in times if t > sig_at]
                row["signal_after_s"] = f"{sig_at - res['start']:.3f}"
                row["resumed_after_s"] = f"{after[0] - sig_at:.3f}" if after else ""
            rows.append(row)
            timelines[(r, disturbed)] = (res["start"], times, sig_at)
            write_csv(os.path.join(out, "failover.csv"), rows, list(row.keys()))
    print(f"\n{'round':>5} {'calm s':>8} {'signal s':>9} {'ratio':>6} {'resumed after s':>16}")
    for r in range(args.repeat):
        calm = next(x for x in rows if x["round"] == r and not x["disturbed"])
        hit = next(x for x in rows if x["round"] == r and x["disturbed"])
        print(f"{r:>5} {calm['seconds']:>8.2f} {hit['seconds']:>9.2f} "
              f"{hit['seconds'] / calm['seconds']:>6.2f} {hit['resumed_after_s']:>16}")
    plt = pyplot()
    if not plt:
        return
    fig, ax = plt.subplots(figsize=(7, 4))
    for (r, disturbed), (start, times, sig_at) in sorted(timelines.items()):
        ax.plot([t - start for t in times], range(1, len(times) + 1),
                color="C3" if disturbed else "C0", alpha=0.8,
                label=("SIG" + args.signal if disturbed else "undisturbed") if r == 0 else None)
        if sig_at is not None:
            ax.axvline(sig_at - start, color="C3", linestyle=":", linewidth=0.8)
    ax.set_xlabel("seconds since the stream started")
    ax.set_ylabel(f"messages of {args.size >> 20} MiB received (verified)")
    ax.set_title(f"failover: one of two zipperd sent SIG{args.signal} (dotted)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    png = os.path.join(out, "failover.png")
    fig.savefig(png, dpi=110)
    plt.close(fig)
    print(f"zipper-bench: wrote {png}")
