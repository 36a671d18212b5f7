#!/usr/bin/python3
"""zipper-bench: side-by-side benchmark reports with CSV and PNG plots.

  zipper-bench p2p [--links shaped,unshaped] [--bench latency,bw,bibw]
                   [--modes native_a,native_b,forwarded[,forwarded_splice]] [-m [MIN:]MAX]
                   [-i N] [--warmup N] [-W N] [--rate-a R --rate-b R]
                   [--local | --hostfile-a F --hostfile-b F --forwarder-a ADDR
                    --forwarder-b ADDR] [--link tcp|verbs] [--mpirun-args ARGS]
                   [--perftest SERVER_DEV,CLIENT_DEV,SERVER_IP [--perftest-gid N]]
                   [--repeat N] [--out-dir DIR]
      OSU-style point-to-point three ways, all launched by zipper-run (its
      one zipperd lifecycle): native_a = osu_<bench>_native, 2 ranks in
      cluster A (zipper-run --standalone -y 0); native_b likewise in B (-x 0);
      forwarded = osu_<bench> (libmmpi), rank 0 in A, rank 1 in B, through
      zipperd; forwarded_splice (not by default) likewise with zipperd's
      --splice true, so zipperd moves payloads by splice() instead of
      copying. Emulated (default): once per --links setting (shaped: A
      --rate-a, B --rate-b, default 1gbit / 4gbit; unshaped: no TBF).
      --local: everything on this host; --hostfile-a/-b with
      --forwarder-a/-b: real clusters, zipperd already serving (--no-zipperd).
      --perftest adds ib_send_lat / ib_write_bw between two local RDMA devices
      as the one-hop native-verbs reference (docs/verbs.md). Writes DIR/p2p.csv
      with columns links,benchmark,size_bytes,native_a,native_b,forwarded,
      fwd_over_native_a,fwd_over_native_b,fwd_over_sum_native,perftest,
      fwd_over_perftest, forwarded_splice, splice_over_native_a, and
      cores_busy_<mode> (cores this host kept busy during that mode's job,
      from /proc/stat: all of them means CPU-bound) (latency in us, bw/bibw
      in MB/s = 10^6 B/s;
      fwd_over_sum_native for latency only), prints the forwarded/native
      ratios and draws DIR/p2p-<bench>.png (forwarded vs native per size).
      --repeat N runs every job N times: the CSV holds the median and the
      <mode>_min / <mode>_max of the N runs, the plots draw the median and
      shade the spread. Latency ratio plots mark 1.0 (as fast as native)
      and 2.0 (store-and-forward: two native hops one after the other).
      Runs are labelled by where they ran: shaped, unshaped (emulated),
      local (--local) or real (--hostfile-a/-b).

  zipper-bench coll [--layout X+Y] [--bench LIST] [--sizes MIN:MAX]
                    [--rate-a R --rate-b R] [--out-dir DIR]
      Collective latency (osu_<bench>): native Open MPI with X+Y ranks in
      cluster A (zipper-run --standalone) against libmmpi across the clusters
      through zipperd (zipper-run), automatic choice and every algorithm and
      n the library lists (zipper-tune --list-algorithms: never a copy), on
      links shaped by zipper-emulate. zipper-tune --measure-only measures the
      links first and gives the model's prediction per algorithm. Writes
      DIR/coll.csv and DIR/coll.json, draws DIR/coll-<bench>.png (measured
      points, the model's prediction as lines, native for reference; with
      one size, bars per algorithm, measured beside the model).

  zipper-bench tune [--layout X+Y] [--rate-a R --rate-b R] [--quick]
                    [--out-dir DIR] [-- ZIPPER-TUNE-ARGS]
      zipper-tune in one job through zipper-run on the emulation with one
      rank per node and shaped links (docs/tuning.md): writes
      DIR/tuning.toml and DIR/tune.json, draws DIR/tune-model.png (predicted
      against measured time of every measured candidate) and
      DIR/tune-<collective>.png (tuned vs built-in rules per size).

  zipper-bench npb --npb-src DIR [--kernels ep,cg,mg,is,lu] [--classes S]
                   [--layouts 2+2] [--modes native_a,native_b,zipper]
                   [--ported-src DIR] [--repeat N] [--rate-a R --rate-b R]
                   [--out-dir DIR]
      The NAS Parallel Benchmarks comparison (docs/performance.md): builds the
      unmodified NPB-MPI tree in a copy with plain mpicc/mpif90, runs native
      in A, native in B (X+Y ranks each) and X+Y through zipperd under
      zipper-run --transparent; every run must verify. Writes DIR/npb.csv,
      DIR/npb-ratios.csv and DIR/npb.png (time against processes, one panel
      per kernel).

  zipper-bench stripe [--zippers 1,2,4] [--pairs 1,4] [--rate-zipper 1gbit]
                      [--size B] [--messages N] [--repeat N] [--out-dir DIR]
  zipper-bench failover [--signal KILL|STOP] [--kill-at S] [--repeat N]
                      [--rate-zipper 1gbit] [--out-dir DIR]
      Several bridge nodes (zipper_bench_rails.py): bandwidth through k
      forwarders against k=1, and a verified stream while one of two zipperd
      is killed or stopped (total time and time to traffic flowing again).

  zipper-bench rma [--parts ...] [--rounds 3] [--rate-a R --rate-b R]
                   [--npb-src DIR] [--progress-env VAR] [--out-dir DIR]
      One-sided communication against its targets (zipper_bench_rma.py):
      osu_put/get/fop/cas_latency against osu_latency, osu_put_bw against
      osu_bw, a Get from a computing target against an idle one, NPB EP and CG
      with the progress mechanism on against off; alternating rounds, shaped
      1/1 Gbit/s by default. Writes DIR/rma.csv, DIR/rma-summary.csv and
      DIR/rma.png.

  zipper-bench scale [--ranks N,N,... | --max-ranks N] [--zippers 1,2]
                     [--frame-rate F] [--seconds S] [--probe-messages M] [--procs P]
                     [--port P] [--out-dir DIR]
      zipperd's cost as the ranks grow (zipper_bench_scale.py): k zipperds on
      loopback and zipper-loadgen with a ring of N+N virtual ranks at a fixed
      total frame rate and an 8 B pingpong beside it, N = 16 .. 16384 per side,
      every message checked. Writes DIR/scale.csv (zipperd RSS per admitted
      rank, CPU per relayed frame, admission time of the job, p50/p99 of the
      8 B exchange) and DIR/scale.png. Loopback only: no root needed.

  zipper-bench placement [--layout 8+8] [--rows 2] [--steps N]
                         [--npb-src DIR --kernels cg,mg,is,ep,lu --classes A]
                         [--no-halo] [--repeat 3] [--rate-a R --rate-b R] [--out-dir DIR]
      Block order against zipper-place's rank map (zipper_bench_placement.py):
      halo_bench (a 2-D halo numbered row-major on R rows) and NPB kernels,
      unmodified through --transparent, one rank per emulated node, shaped
      1/1 Gbit/s by default: one profiled run, zipper-place, then rounds of
      block order, the map (--rank-map) and block order under --profile (the
      profile's overhead). Writes DIR/placement.csv,
      DIR/placement-summary.csv (crossing bytes and messages of each order,
      placed/block and profiled/block medians and spreads) and
      DIR/placement.png.

Units: sizes in bytes, bandwidth in MB/s (10^6 B/s), latency in us.
Exit status: 0 done, 1 a run failed (its output is shown; the CSV and plots
of the other runs are still written), 2 usage error.
Needs root (network namespaces) like the drivers it runs; the plots need
python3-matplotlib (without it, only the CSV and the table are written).
"""

import argparse
import sys

# One module per benchmark family, beside this file (sys.path[0] is its real directory).
import zipper_bench_coll
import zipper_bench_npb
import zipper_bench_p2p
import zipper_bench_placement
import zipper_bench_rails
import zipper_bench_rma
import zipper_bench_scale
import zipper_bench_tune
from zipper_bench_common import pyplot, read_csv, tool, write_csv

VERSION = "@PROJECT_VERSION@"  # set by CMake when built; the source tree says so


def main():
    version = VERSION if not VERSION.startswith("@") else "(source tree)"
    ap = argparse.ArgumentParser(prog="zipper-bench", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--version", action="version", version=f"zipper-bench {version}")
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = zipper_bench_p2p.add_parser(sub)
    c = zipper_bench_coll.add_parser(sub)
    t = zipper_bench_tune.add_parser(sub)
    n = zipper_bench_npb.add_parser(sub)
    st, fo = zipper_bench_rails.add_parsers(sub)
    rm = zipper_bench_rma.add_parser(sub)
    sc = zipper_bench_scale.add_parser(sub)
    pl = zipper_bench_placement.add_parser(sub)
    for sp in (p, c, t, n, st, fo, rm, sc, pl):
        sp.add_argument("--replot", action="store_true",
                        help="measure nothing: report and plot the CSVs already in --out-dir")
    argv = sys.argv[1:]
    extra = []
    if "--" in argv:
        i = argv.index("--")
        argv, extra = argv[:i], argv[i + 1:]
    args = ap.parse_args(argv)
    if args.cmd == "npb":
        return zipper_bench_npb.run(args, tool, pyplot, write_csv, read_csv)
    if args.cmd == "rma":
        return zipper_bench_rma.run(args, tool, pyplot, write_csv, read_csv)
    if args.cmd == "placement":
        return zipper_bench_placement.run(args, tool, pyplot, write_csv, read_csv)
    if args.cmd == "scale":
        return zipper_bench_scale.scale(args, tool, pyplot, write_csv, read_csv)
    if args.cmd == "stripe":
        return zipper_bench_rails.stripe(args, tool, pyplot, write_csv)
    if args.cmd == "failover":
        return zipper_bench_rails.failover(args, tool, pyplot, write_csv)
    {"p2p": zipper_bench_p2p.run, "coll": zipper_bench_coll.run,
     "tune": zipper_bench_tune.run}[args.cmd](args, extra)


if __name__ == "__main__":
    main()
