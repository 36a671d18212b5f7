#!/usr/bin/env python3
"""Command-line contract of the installed tools (docs/operations.md
"Exit status"): --version prints NAME VERSION and exits 0; a usage or
settings error exits 2; a failure at run time exits 1; --help shows defaults
and units. zipper-bench --replot on synthetic data draws the plots: bars for
one collective size (measured beside the model), the spread of --repeat runs,
the 1.0 / 2.0 references on latency ratios, and a --local run labelled
"local", never "(real)".

  test_cli.py BIN_DIR VERSION
"""
import csv
import json
import os
import subprocess
import sys
import tempfile
import unittest

BIN = VERSION = None


def run(*cmd, env=None):
    return subprocess.run(list(cmd), capture_output=True, text=True, timeout=120,
                          env=dict(os.environ, **(env or {})))


def tool(name):
    return os.path.join(BIN, name)


class Versions(unittest.TestCase):
    def test_version(self):
        for name in ("zipperd", "zipperctl", "zipper-tune", "zipper-bench", "zipper-place",
                     "zipper-loadgen", "zipper-place-view"):
            r = run(tool(name), "--version")
            self.assertEqual(r.returncode, 0, f"{name} --version: {r.stderr}")
            self.assertEqual(r.stdout.strip(), f"{name} {VERSION}", name)

    def test_usage_errors_exit_2(self):
        for name in ("zipperd", "zipperctl", "zipper-tune", "zipper-bench", "zipper-place",
                     "zipper-loadgen", "zipper-place-view"):
            r = run(tool(name), "--no-such-option")
            self.assertEqual(r.returncode, 2, f"{name}: {r.stdout}{r.stderr}")
        self.assertEqual(run(tool("zipperd"), "--listen", "A=127.0.0.1:0", "--conn-credits",
                             "1", "--check-config").returncode, 2)
        self.assertEqual(run(tool("zipperd")).returncode, 2)  # no listener
        self.assertEqual(run(tool("zipper-bench"), "p2p", "--bench", "nope").returncode, 2)
        self.assertEqual(run(tool("zipper-bench"), "p2p", "--repeat", "0", "--local",
                             "--replot").returncode, 2)
        self.assertEqual(run(tool("zipper-tune"), "--reevaluate", "/nonexistent").returncode, 2)
        key = "ab" * 32
        for bad in (["--job", "layout=0+4"], ["--job", "pattern=star"],
                    ["--job", "layout=16384+16384,pattern=alltoall"]):
            r = run(tool("zipper-loadgen"), "--zipperd",
                    f"low=127.0.0.1:1,high=127.0.0.1:2,key={key}", *bad)
            self.assertEqual(r.returncode, 2, f"zipper-loadgen {bad}: {r.stderr}")
            self.assertIn("zipper-loadgen: --job", r.stderr)

    def test_runtime_failures_exit_1(self):
        r = run(tool("zipperctl"), "--socket", "/nonexistent/zipperd.sock", "status")
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("cannot connect", r.stderr)
        # A listener that cannot bind: the settings are fine, the run fails.
        with tempfile.TemporaryDirectory() as d:
            r = run(tool("zipperd"), "--listen", "A=192.0.2.1:1", "--pid-file",
                    os.path.join(d, "pid"))
            self.assertEqual(r.returncode, 1, r.stdout + r.stderr)

    def test_help_shows_defaults_and_units(self):
        r = run(tool("zipperd"), "--help")
        self.assertEqual(r.returncode, 0)
        for text in ("--conn-credits N=64", "--max-memory BYTES=", "--ready-timeout SECONDS=",
                     "--metrics-listen HOST:PORT", "(default: none)", "Exit status"):
            self.assertIn(text, r.stdout)
        self.assertNotIn(" TEXT ", r.stdout)
        r = run(tool("zipper-tune"), "--help")
        for text in ("--max-bytes BYTES=4194304", "--report PATH=zipper-tune.json", "Exit status"):
            self.assertIn(text, r.stdout)
        r = run(tool("zipper-loadgen"), "--help")
        for text in ("--procs N=1", "--timeout SECONDS=120", "--format json|csv=json",
                     "Exit status"):
            self.assertIn(text, r.stdout)
        r = run(tool("zipper-bench"), "p2p", "--help")
        self.assertIn("(default: 1800)", r.stdout)
        self.assertIn("--repeat", r.stdout)


class Place(unittest.TestCase):
    """zipper-place on a 2 x 8 halo numbered row-major: block order 8 + 8
    cuts all 8 columns, the placed map cuts 2 edges."""

    def matrix(self, d):
        rows, cols, traffic = 2, 8, []
        for i in range(rows):
            for j in range(cols):
                r = i * cols + j
                if j + 1 < cols:
                    traffic += [[r, r + 1, 65536, 16], [r + 1, r, 65536, 16]]
                if i + 1 < rows:
                    traffic += [[r, r + cols, 65536, 16], [r + cols, r, 65536, 16]]
        path = os.path.join(d, "halo.json")
        with open(path, "w") as f:
            json.dump({"format": "zipper-comm-matrix", "version": 1,
                       "sites": [{"name": "A", "ranks": 8}, {"name": "B", "ranks": 8}],
                       "site_of": [0] * 8 + [1] * 8, "traffic": traffic}, f)
        return path

    def test_places_halo_along_the_cheap_cut(self):
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "halo.map")
            r = run(tool("zipper-place"), self.matrix(d), "-o", out)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn("block order:             crossing 1048576 bytes in 256 messages", r.stdout)
            self.assertIn("crossing 262144 bytes in 64 messages", r.stdout)
            with open(out) as f:
                m = json.load(f)
            self.assertEqual([s["name"] for s in m["sites"]], ["A", "B"])
            a, b = set(m["sites"][0]["ranks"]), set(m["sites"][1]["ranks"])
            self.assertEqual(a | b, set(range(16)))
            self.assertEqual((len(a), len(b)), (8, 8))
            # Each column stays whole: rank j and j + 8 on one site.
            for j in range(8):
                self.assertEqual(j in a, j + 8 in a, m)

    def test_bad_matrix_exits_1_with_one_line(self):
        with tempfile.TemporaryDirectory() as d:
            bad = os.path.join(d, "bad.json")
            with open(bad, "w") as f:
                json.dump({"format": "zipper-comm-matrix", "version": 9}, f)
            r = run(tool("zipper-place"), bad, "-o", os.path.join(d, "m"))
            self.assertEqual(r.returncode, 1)
            self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
            self.assertIn("version 9", r.stderr)
            self.assertFalse(os.path.exists(os.path.join(d, "m")))
            r = run(tool("zipper-place"), self.matrix(d), "-o", os.path.join(d, "m"),
                    "--link", "A,C,5,10")
            self.assertEqual(r.returncode, 1)
            self.assertIn('no site named "C"', r.stderr)


class PlaceView(unittest.TestCase):
    """zipper-place-view: the 2 x 8 halo drawn with block order's sites and
    with zipper-place's; a file it cannot use exits 1 with one line."""

    def setUp(self):
        with open(tool("zipper-place-view")) as f:
            python = f.readline()[2:].strip()
        if run(python, "-c", "import matplotlib").returncode != 0:
            self.skipTest(f"python3-matplotlib not installed for {python}")

    def test_draws_block_order_and_a_map(self):
        with tempfile.TemporaryDirectory() as d:
            matrix, out = Place().matrix(d), os.path.join(d, "halo.map")
            self.assertEqual(run(tool("zipper-place"), matrix, "-o", out).returncode, 0)
            for extra, crossing in (([], "1048576 of 2883584 bytes"),
                                    (["--map", out], "262144 of 2883584 bytes"),
                                    (["--messages", "--max-cells", "4"], "256 of 704 messages")):
                png = os.path.join(d, "v.png")
                r = run(tool("zipper-place-view"), matrix, "-o", png, *extra)
                self.assertEqual(r.returncode, 0, r.stderr)
                self.assertIn(crossing, r.stdout)
                with open(png, "rb") as f:
                    self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")
                self.assertGreater(os.path.getsize(png), 5000)
                os.unlink(png)

    def test_bad_files_exit_1_with_one_line(self):
        with tempfile.TemporaryDirectory() as d:
            bad = os.path.join(d, "bad.json")
            with open(bad, "w") as f:
                json.dump({"format": "zipper-comm-matrix", "version": 9}, f)
            png = os.path.join(d, "v.png")
            for args, says in (([bad], "version 9"), ([os.path.join(d, "none.json")], "No such file"),
                               ([Place().matrix(d), "--map", bad], "not a rank map")):
                r = run(tool("zipper-place-view"), *args, "-o", png)
                self.assertEqual(r.returncode, 1, r.stderr)
                self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
                self.assertIn(says, r.stderr)
                self.assertFalse(os.path.exists(png))


def bench_python():
    """The interpreter zipper-bench runs with (its #! line)."""
    with open(tool("zipper-bench")) as f:
        return f.readline()[2:].strip()


class Plots(unittest.TestCase):
    def setUp(self):
        if run(bench_python(), "-c", "import matplotlib").returncode != 0:
            self.skipTest("python3-matplotlib not installed for zipper-bench's interpreter")

    def test_coll_one_size_draws_bars(self):
        with tempfile.TemporaryDirectory() as d:
            rows = [dict(bench="bcast", algorithm=a, n=n, size=1048576, avg_us=us,
                         predicted_us=p, ratio_vs_native="")
                    for a, n, us, p in (("native", "", 900.0, ""), ("auto", "", 1500.0, ""),
                                        ("vandegeijn", "", 1400.0, 1300.0),
                                        ("two_level", 2, 1700.0, 1600.0))]
            with open(os.path.join(d, "coll.json"), "w") as f:
                json.dump({"layout": "2+2", "rate_a": "1gbit", "rate_b": "4gbit", "rows": rows,
                           "predictions": []}, f)
            r = run(tool("zipper-bench"), "coll", "--replot", "--out-dir", d)
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            self.assertGreater(os.path.getsize(os.path.join(d, "coll-bcast.png")), 1000)
            # The coll family lives in its own module beside zipper-bench.
            with open(tool("zipper_bench_coll.py")) as f:
                self.assertIn("coll_bars", f.read())

    def test_p2p_local_with_spread(self):
        with tempfile.TemporaryDirectory() as d:
            fields = ["benchmark", "size_bytes", "native_a", "native_b", "forwarded",
                      "fwd_over_native_a", "forwarded_min", "forwarded_max", "native_a_min",
                      "native_a_max"]
            with open(os.path.join(d, "p2p-local.csv"), "w", newline="") as f:
                w = csv.DictWriter(f, fieldnames=fields, restval="")
                w.writeheader()
                for size in (1, 1024, 65536):
                    w.writerow(dict(benchmark="latency", size_bytes=size, native_a=2.0,
                                    native_b=2.1, forwarded=5.0, fwd_over_native_a="2.500",
                                    forwarded_min=4.5, forwarded_max=6.0, native_a_min=1.9,
                                    native_a_max=2.2))
            r = run(tool("zipper-bench"), "p2p", "--local", "--replot", "--bench", "latency",
                    "--out-dir", d)
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            self.assertGreater(os.path.getsize(os.path.join(d, "p2p-latency.png")), 1000)
            with open(os.path.join(d, "p2p.csv")) as f:
                merged = list(csv.DictReader(f))
            self.assertEqual({m["links"] for m in merged}, {"local"})

    def test_scale_curves(self):
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "scale.csv"), "w", newline="") as f:
                w = csv.DictWriter(f, fieldnames=["k", "ranks_per_side", "ok", "rss_per_rank_b",
                                                  "cpu_per_frame_us", "job_admission_s",
                                                  "probe_p50_us", "probe_p99_us"])
                w.writeheader()
                for k in (1, 2):
                    for n in (16, 64, 256):
                        w.writerow(dict(k=k, ranks_per_side=n, ok=1, rss_per_rank_b=3000 + n,
                                        cpu_per_frame_us=5.0 + k, job_admission_s=n / 1000,
                                        probe_p50_us=30.0, probe_p99_us=90.0))
            r = run(tool("zipper-bench"), "scale", "--replot", "--out-dir", d)
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            self.assertGreater(os.path.getsize(os.path.join(d, "scale.png")), 1000)

    def test_placement_replot_and_crossing(self):
        with tempfile.TemporaryDirectory() as d:
            fields = ["program", "layout", "crossing_bytes_block", "crossing_msgs_block",
                      "crossing_bytes_placed", "crossing_msgs_placed", "crossing_bytes_ratio",
                      "placed_over_block_median", "placed_over_block_min",
                      "placed_over_block_max", "profiled_over_block_median",
                      "profiled_over_block_min", "profiled_over_block_max"]
            with open(os.path.join(d, "placement-summary.csv"), "w", newline="") as f:
                w = csv.DictWriter(f, fieldnames=fields)
                w.writeheader()
                w.writerow(dict(program="halo", layout="8+8", crossing_bytes_block=51200,
                                crossing_msgs_block=32, crossing_bytes_placed=6400,
                                crossing_msgs_placed=8, crossing_bytes_ratio="0.125",
                                placed_over_block_median="0.400", placed_over_block_min="0.350",
                                placed_over_block_max="0.450", profiled_over_block_median="1.002",
                                profiled_over_block_min="0.990", profiled_over_block_max="1.010"))
            r = run(tool("zipper-bench"), "placement", "--replot", "--out-dir", d)
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            self.assertIn("halo 8+8: crossing 51200 B / 32 msgs in block order, 6400 B / 8",
                          r.stdout)
            self.assertGreater(os.path.getsize(os.path.join(d, "placement.png")), 1000)
        # The crossing traffic of an order, from a matrix: only pairs split by it count.
        sys.path.insert(0, BIN)
        import zipper_bench_placement as zp
        matrix = {"traffic": [[0, 1, 100, 1], [1, 2, 1000, 2], [2, 3, 10, 1], [3, 0, 7, 1]]}
        self.assertEqual(zp.crossing(matrix, [0, 0, 1, 1]), (1007, 3))
        self.assertEqual(zp.crossing(matrix, [0, 1, 1, 0]), (110, 2))
        self.assertEqual(zp.crossing(matrix, [0, 0, 0, 0]), (0, 0))


if __name__ == "__main__":
    BIN, VERSION = sys.argv[1], sys.argv[2]
    unittest.main(argv=sys.argv[:1], verbosity=2)
