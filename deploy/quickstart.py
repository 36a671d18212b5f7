#!/usr/bin/env python3
"""The first README command, after deploy/install-deps.sh --minimal.

Configures build/ (without the tests when it is new, so that no test-only
package is needed), builds the CMake target `quickstart` only (zipperd,
libmmpi, hello_ring and the OSU latency and bandwidth programs), brings up two
emulated clusters of 2 nodes each (A shaped to 1 Gbit/s, B to 4 Gbit/s) that
reach each other only through zipperd, runs hello_ring across them, then
measures osu_latency and osu_bw natively inside cluster A and across the
clusters through zipperd, and ends with a table of the two and what to try
next. Exits non-zero, with the failing command's output, when a step fails.
"""
import os
import re
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.path.join(ROOT, "build")
BIN = os.path.join(BUILD, "bin")
# (program, osu options, sizes shown in bytes): few sizes and iterations so
# that the run part takes well under a minute on a 2-core host.
LATENCY = ("osu_latency", ["-m", "8:65536", "-i", "1000", "-x", "100"], (8, 1024, 65536))
BANDWIDTH = ("osu_bw", ["-m", "65536:1048576", "-i", "10", "-x", "2"], (65536, 1048576))
EMULATED = ["--emulated", "--nodes-a", "2", "--nodes-b", "2"]


def step(title):
    print(f"\n== {title} ==", flush=True)


def run(cmd, capture=False):
    """Runs cmd; on failure prints what it wrote and exits. Returns its stdout when captured."""
    p = subprocess.run(cmd, stdout=subprocess.PIPE if capture else None, text=True)
    if p.returncode != 0:
        if capture:
            sys.stdout.write(p.stdout)
        sys.exit(f"quickstart: failed with status {p.returncode}: {' '.join(cmd)}")
    return p.stdout


def osu_rows(text):
    """{size in bytes: value} from an OSU point-to-point table."""
    out = {}
    for line in text.splitlines():
        f = line.split()
        if len(f) == 2 and re.fullmatch(r"\d+", f[0]) and re.fullmatch(r"[0-9.]+", f[1]):
            out[int(f[0])] = float(f[1])
    return out


def measure(program, opts):
    """(native in cluster A, through zipperd across A and B): {size: value} each."""
    native = run([os.path.join(BIN, "zipper-run"), *EMULATED, "-x", "2", "-y", "0",
                  "--standalone", "--timeout", "300", "--",
                  os.path.join(BIN, program + "_native"), *opts], capture=True)
    forwarded = run([os.path.join(BIN, "zipper-run"), *EMULATED, "-x", "1", "-y", "1",
                     "--timeout", "300", "--", os.path.join(BIN, program), *opts], capture=True)
    return osu_rows(native), osu_rows(forwarded)


def size_label(b):
    return f"{b >> 20} MiB" if b >= 1 << 20 else f"{b >> 10} KiB" if b >= 1 << 10 else f"{b} B"


def main():
    t0 = time.monotonic()
    step("configure and build zipperd, libmmpi, hello_ring, osu_latency, osu_bw")
    configure = ["cmake", "-S", ROOT, "-B", BUILD, "-DCMAKE_BUILD_TYPE=RelWithDebInfo"]
    if not os.path.exists(os.path.join(BUILD, "CMakeCache.txt")):
        # A new build directory: leave the tests (and their packages) to run-tests.sh.
        configure.append("-DZIPPER_BUILD_TESTS=OFF")
    run(configure, capture=True)
    run(["cmake", "--build", BUILD, f"-j{os.cpu_count() or 1}", "--target", "quickstart"])
    t_build = time.monotonic()

    step("two emulated clusters (A: 2 nodes at 1 Gbit/s, B: 2 nodes at 4 Gbit/s) and a bridge node")
    run([os.path.join(BIN, "zipper-emulate"), "up", "--nodes-a", "2", "--nodes-b", "2",
         "--rate-a", "1gbit", "--rate-b", "4gbit"])
    step("hello_ring: 2 ranks in cluster A + 2 ranks in cluster B, through zipperd")
    run([os.path.join(BIN, "zipper-run"), *EMULATED, "-x", "2", "-y", "2", "--timeout", "120",
         "--", os.path.join(BIN, "hello_ring")])
    step("osu_latency and osu_bw: natively inside cluster A, then rank 0 in A and rank 1 in B")
    rows = []
    for (program, opts, sizes), what, unit in ((LATENCY, "latency", "µs"),
                                                (BANDWIDTH, "bandwidth", "MB/s")):
        native, forwarded = measure(program, opts)
        for s in sizes:
            n, f = native.get(s), forwarded.get(s)
            if n is None or f is None:
                sys.exit(f"quickstart: {program} printed no figure for {s} bytes")
            rows.append((what, size_label(s), f"{n:.1f} {unit}", f"{f:.1f} {unit}",
                         f"{f / n:.2f}" if n else "-"))
    t_end = time.monotonic()

    print(f"\n== result (build {t_build - t0:.0f} s, run {t_end - t_build:.0f} s) ==")
    head = ("figure", "size", "native in A", "through zipperd", "zipper/native")
    width = [max(len(r[i]) for r in rows + [head]) for i in range(len(head))]
    for r in [head] + rows:
        print("  ".join(c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(r, width))))
    print("Latency crosses two links through zipperd (a ratio near 2 is store-and-forward);\n"
          "bandwidth is bounded by cluster A's 1 Gbit/s link either way.")
    bin_ = os.path.relpath(BIN)
    hints = [
        (f"{bin_}/zipper-run --emulated -x 2 -y 2 -- PROGRAM",
         "your MMPI_-ported program across the clusters (README)"),
        ("./deploy/run-tests.sh", "the test packages, the whole build and every test"),
        (f"{bin_}/zipper-bench p2p", "every size, shaped and unshaped, with plots (after run-tests.sh)"),
        ("docs/performance.md", "the measured figures and the commands that rerun them"),
        (f"{bin_}/zipper-emulate down", "remove the emulated clusters"),
    ]
    print("\nWhat to try next:")
    w = max(len(c) for c, _ in hints)
    for c, why in hints:
        print(f"  {c.ljust(w)}  {why}")


if __name__ == "__main__":
    main()
