#!/usr/bin/env python3
"""Unit tests of the zipper_run package (no processes started): forwarder
address lists, option validation and its exit codes, the CPU of an emulated
node, zipper-emulate's argument checks, the zipper protocol probe's frames,
the mpirun command's environment (the secret only by name), and --rank-map
and --profile (the map's checks and encoding, -x/-y from it).

usage: test_zipper_run_units.py PACKAGE_PARENT_DIR
"""

import json
import os
import struct
import sys
import tempfile
import unittest

sys.path.insert(0, sys.argv.pop(1))
from zipper_run import addresses, cpus, emulation_topology as emulation, mpirun, options, probe  # noqa: E402
from zipper_run import profile, rank_map  # noqa: E402
from zipper_run.errors import Fatal, UsageError  # noqa: E402


def parsed(*argv):
    return options.validate(options.parse_args(list(argv)))


class Addresses(unittest.TestCase):
    def test_single_and_list(self):
        a = addresses.parse_addr("verbs:[fe80::1]:7471")
        self.assertEqual((a.scheme, a.host, a.port, a.listen), ("verbs", "fe80::1", 7471, "verbs:[fe80::1]:7471"))
        self.assertEqual(addresses.parse_addr("tcp:zip-a:7470").listen, "zip-a:7470")
        lst = addresses.parse_list("10.201.0.254:7470,verbs:10.201.0.253:7471")
        self.assertEqual([x.port for x in lst], [7470, 7471])
        self.assertEqual(addresses.join(lst), "10.201.0.254:7470,verbs:10.201.0.253:7471")

    def test_bad(self):
        for bad in ("host", "host:0", "host:65536", "a:1,", ",a:1", "a:1,,b:2", "ud:a:1", ""):
            self.assertIsNone(addresses.parse_list(bad), bad)


class Options(unittest.TestCase):
    def test_forms(self):
        o = parsed("-x2", "--np-high=3", "--local", "--mpirun-args", "--mca a b", "--", "prog", "-x")
        self.assertEqual((o.np_low, o.np_high, o.mode, o.port), ("2", "3", "local", "7470"))
        self.assertEqual(o.mpirun_args, ["--mca", "a", "b"])
        self.assertEqual(o.program, ["prog", "-x"])
        o = parsed("-x", "1", "-y", "1", "--zipperd-arg", "--log-level", "prog")
        self.assertEqual((o.zipperd_args, o.program, o.mode), (["--log-level"], ["prog"], "emulated"))

    def test_usage_errors(self):
        bad = [("-x", "1", "--", "p"), ("-x", "0", "-y", "1", "--", "p"), ("-x", "1", "-y", "1"),
               ("-x", "1", "-y", "1", "--local", "--emulated", "--", "p"),
               ("-x", "1", "-y", "1", "--zippers", "0", "--", "p"),
               ("-x", "1", "-y", "1", "--local", "--zippers", "2", "--port", "65535", "--", "p"),
               ("-x", "1", "-y", "1", "--zippers", "2", "--zipperd-listen", "A=h:1", "--", "p"),
               ("-x", "1", "-y", "1", "--local", "--forwarder-a", "h:1,h:2", "--forwarder-b", "h:3", "--", "p"),
               ("-x", "1", "-y", "1", "--job-id", "18446744073709551616", "--", "p"),
               ("-x", "1", "-y", "1", "--bogus", "--", "p"), ("-x", "1", "-y", "1", "--local=1", "--", "p")]
        for argv in bad:
            with self.assertRaises(UsageError, msg=argv) as cm:
                parsed(*argv)
            self.assertEqual(cm.exception.code, 2)

    def test_cluster_lists(self):
        hf = os.path.abspath(__file__)
        o = parsed("-x", "1", "-y", "1", "--hostfile-a", hf, "--hostfile-b", hf, "--forwarder-a",
                   "a1:7470,a2:7470", "--forwarder-b", "b1:7470,b2:7470", "--", "p")
        self.assertEqual((o.mode, o.zippers, [x.host for x in o.fwd_b]), ("cluster", "2", ["b1", "b2"]))
        with self.assertRaises(UsageError):  # --zipper-host starts one bridge node
            parsed("-x", "1", "-y", "1", "--hostfile-a", hf, "--hostfile-b", hf, "--forwarder-a", "a1:1,a2:1",
                   "--forwarder-b", "b1:1,b2:1", "--zipper-host", "h", "--", "p")
        with self.assertRaises(UsageError):
            parsed("-x", "1", "-y", "1", "--hostfile-a", hf, "--hostfile-b", hf, "--forwarder-a", "a:1",
                   "--forwarder-b", "b:1", "--zippers", "2", "--", "p")


class Emulation(unittest.TestCase):
    def test_cpu_for_host(self):
        n = cpus.ncpus()
        self.assertEqual(emulation.cpu_for_host("clusterA1"), 0)
        self.assertEqual(emulation.cpu_for_host("clusterB1"), 1 % n)
        self.assertEqual(emulation.cpu_for_host("clusterA3"), 2 % n)
        self.assertEqual(emulation.cpu_for_host("zipper2"), 2 % n)
        self.assertIsNone(emulation.cpu_for_host("zipper"))

    def test_bridge_addresses(self):
        self.assertEqual([emulation.zipper_addr("A", i) for i in (1, 2, 3)],
                         ["10.201.0.254", "10.201.0.253", "10.201.0.252"])
        self.assertEqual(emulation.zipper_addr("B", 1), "10.202.0.254")


class Probe(unittest.TestCase):
    def test_frames(self):
        hello = probe.hello_frame(1)
        self.assertEqual(len(hello), 64 + 28)
        magic, version, ftype, _, job, src = struct.unpack_from("<IHBBQI", hello)
        self.assertEqual((magic, version, ftype, job, src), (0x5A495050, 2, 1, 0, 1))
        self.assertEqual(struct.unpack_from("<I", hello, 40)[0], 28)  # payload_len
        # vrank 1 in site 1 of the table {1, 1} (proto/site_hello.h), no proof.
        self.assertEqual(struct.unpack_from("<IIIIIII", hello, 64), (1, 1, 2, 2, 0, 1, 1))
        # An answer in protocol 1 (a zipperd of the last release) is a zipperd too.
        old = bytearray(probe.bye_frame())
        old[4] = 1
        self.assertTrue(probe.is_zipper_header(bytes(old)))
        old[4] = 3
        self.assertFalse(probe.is_zipper_header(bytes(old)))
        self.assertTrue(probe.is_zipper_header(probe.bye_frame()))
        self.assertFalse(probe.is_zipper_header(b"HTTP/1.0 400 Bad Request\r\n" + b" " * 64))
        self.assertFalse(probe.is_zipper_header(probe.bye_frame()[:63]))


class Emulate(unittest.TestCase):
    """zipper-emulate's argument checks (they come before anything is built)."""

    def run_emulate(self, *argv):
        from zipper_run import emulation_cli as emulate
        import contextlib
        import io
        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            rc = emulate.main(list(argv))
        return rc, err.getvalue()

    def test_bad_arguments(self):
        for argv, what in ((("up", "--zippers", "0"), "--zippers"), (("up", "--zippers", "17"), "--zippers"),
                           (("up", "--rate-zipper", "fast"), "--rate-zipper"),
                           (("up", "--nodes-a", "250", "--zippers", "5"), "255 addresses"),
                           (("up", "--nodes-b=0"), "--nodes-b"), (("up", "--bogus"), "unknown argument"),
                           (("down", "--bogus"), "unknown argument")):
            rc, err = self.run_emulate(*argv)
            self.assertEqual(rc, 1, argv)
            self.assertIn(what, err, argv)
        self.assertEqual(self.run_emulate("frobnicate")[0], 2)
        self.assertEqual(self.run_emulate()[0], 2)

    def test_ours(self):
        from zipper_run import emulation_topology as emulation
        for ns in ("zipper", "zfabric", "zipper3", "clusterA12", "clusterB1"):
            self.assertTrue(emulation.is_ours(ns), ns)
        for ns in ("zipper-check-1", "clusterC1", "zipperx", "other"):
            self.assertFalse(emulation.is_ours(ns), ns)

    def test_topology_written_once(self):
        # What zipper-emulate builds is what zipper-run looks for.
        from zipper_run import emulation_topology as emulation
        self.assertEqual(emulation.namespaces(2, 1, 1), {"clusterA1", "clusterA2", "clusterB1", "zipper"})
        self.assertEqual(emulation.namespaces(1, 1, 2),
                         {"clusterA1", "clusterB1", "zfabric", "zipper1", "zipper2"})
        self.assertTrue(all(emulation.is_ours(ns) for ns in emulation.namespaces(3, 2, 4)))
        self.assertEqual(emulation.bridge_ns(1), "zipper")
        self.assertEqual(emulation.bridge_ns(3), "zfabric")
        self.assertEqual((emulation.node_addr("B", 7), emulation.zipper_addr("A", 2)),
                         ("10.202.0.7", "10.201.0.253"))
        old = emulation.NETNS_DIR
        emulation.NETNS_DIR = "/nonexistent-netns-dir"  # nothing up: the names up would make
        try:
            self.assertEqual([emulation.zipper_ns(j, 1) for j in (1,)], ["zipper"])
            self.assertEqual([emulation.zipper_ns(j, 2) for j in (1, 2)], ["zipper1", "zipper2"])
        finally:
            emulation.NETNS_DIR = old


class Mpirun(unittest.TestCase):
    def test_secret_by_name_and_forwarder_list(self):
        o = parsed("-x", "1", "-y", "2", "--local", "--zippers", "2", "--port", "7000", "--", "p")
        fwd = [addresses.parse_addr("127.0.0.1:7000"), addresses.parse_addr("127.0.0.1:7001")]
        os.environ["MMPI_JOB_SECRET"] = "ab" * 32
        cmd, _ = mpirun.build(o, 1, fwd, "MMPI_JOB_SECRET", [], "/w", None, None)
        self.assertIn("MMPI_FORWARDER=127.0.0.1:7000,127.0.0.1:7001", cmd)
        self.assertIn("MMPI_JOB_SECRET", cmd)
        self.assertFalse(any("ab" * 32 in a for a in cmd))
        self.assertIn("MMPI_GROUP=high", cmd)
        self.assertEqual(cmd[cmd.index("-np") + 1], "2")
        self.assertFalse(any(a.startswith("MMPI_SITE") for a in cmd), "-x/-y: the two-site shorthand")

    def test_sites(self):
        # Each site's mpirun gets the table and its index; its own session directory.
        o = parsed("--local", "--sites", "A:4,B:4,gpu-2:2", "--port", "7000", "--", "p")
        fwd = [addresses.parse_addr("127.0.0.1:7002")]
        cmd, _ = mpirun.build(o, 2, fwd, "MMPI_JOB_SECRET", [], "/w", None, None)
        self.assertEqual(cmd[cmd.index("-np") + 1], "2")
        for want in ("MMPI_SITES=4,4,2", "MMPI_SITE=2", "MMPI_FORWARDER=127.0.0.1:7002", "/w/ompi-2-gpu-2"):
            self.assertIn(want, cmd)
        self.assertFalse(any(a.startswith(("MMPI_GROUP", "MMPI_NP_")) for a in cmd))


class Hydra(unittest.TestCase):
    """--mpi mpich: each site launched by Hydra, the environment as -genv, the
    secret by name only (-genvlist)."""

    def test_command(self):
        o = parsed("--mpi", "mpich", "--mpirun", "mpiexec.mpich", "-x", "1", "-y", "2",
                   "--local", "--port", "7000", "--", "p", "arg")
        fwd = [addresses.parse_addr("127.0.0.1:7000")]
        os.environ["MMPI_JOB_SECRET"] = "cd" * 32
        cmd, head = mpirun.build(o, 1, fwd, "MMPI_JOB_SECRET", ["MMPI_DEBUG"], "/w", None,
                                 ["LD_PRELOAD=/l/libmmpi_transparent-mpich.so"])
        self.assertEqual(cmd[:4], ["env", "mpiexec.mpich", "-n", "2"])
        self.assertEqual(cmd[-2:], ["p", "arg"])
        self.assertEqual(head, "")
        g = {cmd[i + 1]: cmd[i + 2] for i, a in enumerate(cmd) if a == "-genv"}
        self.assertEqual((g["MMPI_GROUP"], g["MMPI_NP_LOW"], g["MMPI_NP_HIGH"]), ("high", "1", "2"))
        self.assertEqual(g["MMPI_FORWARDER"], "127.0.0.1:7000")
        self.assertEqual(g["LD_PRELOAD"], "/l/libmmpi_transparent-mpich.so")
        self.assertEqual(cmd[cmd.index("-genvlist") + 1], "MMPI_JOB_ID,MMPI_JOB_SECRET,MMPI_DEBUG")
        self.assertFalse(any("cd" * 32 in a for a in cmd))
        self.assertFalse(any("--mca" in a or a == "-x" for a in cmd), "no Open MPI options")

    def test_refused(self):
        for argv, words in ((["--mpi", "lam"], "openmpi or mpich"),
                            (["--mpi", "mpich"], "--emulated is not supported"),
                            (["--mpi", "mpich", "--slurm"], "--slurm is not supported")):
            with self.assertRaises(UsageError) as e:
                parsed(*argv, "-x", "1", "-y", "1", "--", "p")
            self.assertIn(words, str(e.exception))

    def test_default_launcher(self):
        o = parsed("--mpi", "mpich", "-x", "1", "-y", "1", "--local", "--", "p")
        self.assertIn(o.mpirun, ("mpiexec.mpich", "mpiexec.hydra", "mpiexec")
                      if not os.environ.get("MPIRUN") else (os.environ["MPIRUN"],))
        self.assertEqual(parsed("-x", "1", "-y", "1", "--local", "--", "p").mpirun,
                         os.environ.get("MPIRUN") or "mpirun")


class Sites(unittest.TestCase):
    def test_sites_and_their_legs(self):
        from zipper_run import zipperd
        o = parsed("--local", "--sites", "A:4,B:4,C:2", "--zippers", "2", "--port", "7000", "--", "p")
        self.assertEqual((o.site_list, o.total_ranks, o.site_table), ([("A", "4"), ("B", "4"), ("C", "2")], 10, True))
        bridges, start, _ = zipperd.plan(o, "/w", "/nonexistent")
        self.assertEqual([[a.port for a in br.fwd] for br in bridges], [[7000, 7001, 7002], [7003, 7004, 7005]])
        self.assertEqual(bridges[1].listen, ["A=127.0.0.1:7003", "B=127.0.0.1:7004", "C=127.0.0.1:7005"])
        # -x/-y is the two-site shorthand: one listener for both in --local.
        o = parsed("--local", "-x", "2", "-y", "3", "--port", "7000", "--", "p")
        self.assertEqual((o.site_list, o.site_table), ([("A", "2"), ("B", "3")], False))
        bridges, _, _ = zipperd.plan(o, "/w", "/nonexistent")
        self.assertEqual(bridges[0].listen, ["A=127.0.0.1:7000"])

    def test_sites_usage_errors(self):
        bad = [("--local", "--sites", "A:4", "--", "p"), ("--local", "--sites", "A:4,B:0", "--", "p"),
               ("--local", "--sites", "A:4,A:2", "--", "p"), ("--local", "--sites", "A4,B:2", "--", "p"),
               ("--local", "--sites", "A:4,B:2,", "--", "p"), ("--local", "--sites", "1x:4,B:2", "--", "p"),
               ("--sites", "A:1,B:1,C:1", "--", "p"),  # emulated: two sites so far
               ("--local", "--sites", "A:1,B:1", "-x", "1", "--", "p"),
               ("--local", "--sites", "A:1,B:1", "--standalone", "--", "p"),
               ("--local", "--sites", "A:1,B:1", "--no-zipperd", "--", "p"),
               ("--local", "--sites", "A:1,B:1,C:1", "--port", "65534", "--", "p"),
               ("--local", "--sites", ",".join(f"s{i}:1" for i in range(65)), "--", "p")]
        for argv in bad:
            with self.assertRaises(UsageError, msg=argv) as cm:
                parsed(*argv)
            self.assertEqual(cm.exception.code, 2)


def map_doc(a, b, **over):
    doc = {"format": "zipper-rank-map", "version": 1,
           "sites": [{"name": "A", "ranks": a}, {"name": "B", "ranks": b}]}
    doc.update(over)
    return doc


class Placement(unittest.TestCase):
    """--rank-map and --profile (docs/placement.md)."""

    def test_map_checks(self):
        self.assertEqual(rank_map.parse(map_doc([0, 3], [1, 2])), [[0, 3], [1, 2]])
        for doc, what in ((map_doc([0], [1], format="zipper-comm-matrix"), "not a rank map"),
                          (map_doc([0], [1], version=2), "version 2"),
                          ({"format": "zipper-rank-map", "version": 1,
                            "sites": [{"name": "B", "ranks": [0]}, {"name": "A", "ranks": [1]}]},
                           "must be A and B"),
                          (map_doc([0, 1], []), "non-empty list"),
                          (map_doc([2, 0], [1]), "not ascending"),
                          (map_doc([0, 1], [1, 2]), "exactly one site"),
                          (map_doc([0, 4], [1, 2]), "exactly one site"),
                          (map_doc([0, True], [1]), "integers"),
                          ([1, 2], "not a rank map")):
            with self.assertRaisesRegex(Fatal, what, msg=doc):
                rank_map.parse(doc)

    def test_map_encoding(self):
        self.assertEqual(rank_map.env_value([[0, 3], [1, 2]]), "0,3;1-2")
        self.assertEqual(rank_map.env_value([list(range(4)) + list(range(8, 12)),
                                             list(range(4, 8)) + list(range(12, 16))]),
                         "0-3,8-11;4-7,12-15")
        n = 2 * rank_map.MAX_ENV_BYTES  # every other rank: no ranges to fold
        with self.assertRaisesRegex(Fatal, "more than"):
            rank_map.env_value([list(range(0, n, 2)), list(range(1, n, 2))])

    def test_options_take_the_counts_from_the_map(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "m.json")
            with open(path, "w") as f:
                json.dump(map_doc([0, 3, 4], [1, 2]), f)
            o = parsed("--local", "--rank-map", path, "--profile", os.path.join(d, "p.json"), "--", "p")
            self.assertEqual((o.np_low, o.np_high), ("3", "2"))
            self.assertEqual(o.profile, os.path.join(d, "p.json"))
            cmd, _ = mpirun.build(o, 0, [addresses.parse_addr("127.0.0.1:7000")], "MMPI_JOB_SECRET",
                                  [], "/w", None, None)
            self.assertIn("MMPI_RANK_MAP=0,3-4;1-2", cmd)
            self.assertIn(f"MMPI_PROFILE={o.profile}", cmd)
            self.assertEqual(parsed("--local", "-x", "3", "--rank-map", path, "--", "p").np_high, "2")
            for bad in (("-x", "2"), ("-y", "3"), ("--standalone",)):
                with self.assertRaises(UsageError, msg=bad):
                    parsed("--local", "--rank-map", path, *bad, "--", "p")
            with self.assertRaisesRegex(Fatal, "No such file"):
                parsed("--local", "--rank-map", os.path.join(d, "absent"), "--", "p")
            # The caller's own values never reach the ranks: zipper-run sets them.
            self.assertNotIn("MMPI_RANK_MAP", mpirun.passed_env({"MMPI_RANK_MAP": "0;1"}))

    def test_profile_path(self):
        with tempfile.TemporaryDirectory() as d:
            self.assertEqual(profile.resolve(os.path.join(d, "x.json")), os.path.join(d, "x.json"))
            with self.assertRaisesRegex(UsageError, "is a directory"):
                profile.resolve(d)
            with self.assertRaisesRegex(Fatal, "no directory"):
                profile.resolve(os.path.join(d, "absent", "x.json"))
            path = os.path.join(d, "p.json")
            before = profile.started(path)
            self.assertEqual(profile.check_written(path, before), 1)  # nothing written
            with open(path, "w") as f:
                f.write("{}")
            self.assertEqual(profile.check_written(path, before), 0)
            self.assertEqual(profile.check_written(path, profile.started(path)), 1)  # the old one


class Layers(unittest.TestCase):
    """The package's modules import only modules below them (no circle)."""

    # Bottom first. A module may import only modules earlier in this list;
    # slurm_bridge.py and probe.py also run as scripts and import none.
    ORDER = ("errors", "shell_quote", "integers", "cpus", "processes", "addresses", "probe", "port_holder",
             "locate", "version", "rank_map", "profile", "placement_options", "emulation_topology", "emulation_shell", "emulation_cgroups",
             "emulation_lock", "emulation_build", "emulation_cli", "netns_rsh", "hydra", "mpirun", "site_keys",
             "slurm_allocations", "slurm_site", "slurm_options", "options", "zipperd", "supervise",
             "slurm_secrets", "slurm_plan", "slurm_srun", "slurm_bridge", "slurm_launch", "main")

    def test_no_upward_import(self):
        import ast
        import zipper_run
        pkg = os.path.dirname(zipper_run.__file__)
        mods = sorted(f[:-3] for f in os.listdir(pkg) if f.endswith(".py") and f not in ("__init__.py",
                                                                                         "build_info.py"))
        self.assertEqual(sorted(self.ORDER), mods, "every module has its place in ORDER")
        for m in mods:
            with open(os.path.join(pkg, m + ".py")) as f:
                tree = ast.parse(f.read())
            used = set()
            for node in ast.walk(tree):
                if isinstance(node, ast.ImportFrom) and node.level == 1:
                    used |= {node.module} if node.module else {a.name for a in node.names}
            used.discard("build_info")
            for u in used:
                self.assertLess(self.ORDER.index(u), self.ORDER.index(m), f"{m} imports {u}, above it")


if __name__ == "__main__":
    unittest.main(verbosity=2)
