#!/usr/bin/env python3
"""Unit tests of zipper-run --slurm's parts, no Slurm needed: host lists and
tasks-per-node strings, hetjob environments (and the errors for no allocation
and one component), `scontrol show job -o` records, the two-allocation wait
(cancel both when one never starts, with a fake clock and fake scontrol),
the site configuration's checks, the srun commands and the ranks'
environment (no secret anywhere), the per-job host keys (checked against
zipperd --print-host-key), and the C rank wrapper zipper-slurm-rank (the
secret from stdin into an inherited 0600 memfd, the rest of stdin kept).

usage: test_slurm_units.py BIN_DIR   (the build tree's bin: zipper_run, zipperd, zipper-slurm-rank)
"""

import os
import stat
import subprocess
import sys
import tempfile
import unittest

BIN = sys.argv.pop(1)
sys.path.insert(0, BIN)
from zipper_run import options, slurm, slurm_launch, slurm_site  # noqa: E402
from zipper_run.util import Fatal, UsageError  # noqa: E402

HET_ENV = {
    "SLURM_JOB_ID": "41", "SLURM_HET_SIZE": "3", "SLURM_CLUSTER_NAME": "alpha",
    "SLURM_JOB_NODELIST_HET_GROUP_0": "a[1-2]", "SLURM_NTASKS_HET_GROUP_0": "3",
    "SLURM_JOB_NODELIST_HET_GROUP_1": "b[01-02]", "SLURM_TASKS_PER_NODE_HET_GROUP_1": "3(x2)",
    "SLURM_JOB_NODELIST_HET_GROUP_2": "zip", "SLURM_JOB_NUM_NODES_HET_GROUP_2": "1",
}


def parsed(*argv):
    return options.validate(options.parse_args(list(argv)))


class Parsing(unittest.TestCase):
    def test_hostlists(self):
        self.assertEqual(slurm.expand_hostlist("n[08-10,3],login"), ["n08", "n09", "n10", "n3", "login"])
        self.assertEqual(slurm.expand_hostlist("zipper"), ["zipper"])
        for odd in ("a[1-2]b[3]", "n[3-1]", "n[x]", "n[1-2"):
            self.assertIsNone(slurm.expand_hostlist(odd), odd)

    def test_tasks_per_node(self):
        self.assertEqual(slurm.parse_tasks_per_node("2(x3),1"), [2, 2, 2, 1])
        with self.assertRaises(ValueError):
            slurm.parse_tasks_per_node("2(x)")

    def test_job_record(self):
        recs = slurm.parse_job_record("JobId=7 JobName=x y JobState=PENDING Reason=Resources NodeList=(null)\n"
                                      "JobId=8 JobState=RUNNING NodeList=b[1-2] NumTasks=5\n")
        self.assertEqual([r["JobState"] for r in recs], ["PENDING", "RUNNING"])
        self.assertEqual(recs[1]["NumTasks"], "5")


class Hetjob(unittest.TestCase):
    def test_components(self):
        c = slurm.from_hetjob(HET_ENV)
        self.assertEqual((c["A"].nodes, c["A"].ntasks, c["A"].srun_args()), (["a1", "a2"], 3, ["--het-group=0"]))
        self.assertEqual((c["B"].nodes, c["B"].ntasks), (["b01", "b02"], 6))
        self.assertEqual((c["bridge"].nodes, c["bridge"].het_group), (["zip"], 2))

    def test_errors_name_the_cause(self):
        with self.assertRaisesRegex(Fatal, "no Slurm allocation"):
            slurm.from_hetjob({})
        with self.assertRaisesRegex(Fatal, "job 9 has one component"):
            slurm.from_hetjob({"SLURM_JOB_ID": "9", "SLURM_JOB_NODELIST": "a1"})


class TwoAllocations(unittest.TestCase):
    def setUp(self):
        self.states = {}
        self.cancelled = []
        self.t = 0.0
        self._job_state, self._cancel = slurm.job_state, slurm.cancel
        slurm.job_state = lambda j, env: (self.states[j], "JobHeldUser",
                                          [{"NodeList": "n[1-2]", "NumTasks": "4", "ClusterName": env.get("SLURM_CONF", "")}])
        slurm.cancel = lambda j, env: self.cancelled.append(j) or True

    def tearDown(self):
        slurm.job_state, slurm.cancel = self._job_state, self._cancel

    def sleep(self, s):
        self.t += s
        if self.t > 2:
            self.states["5"] = "RUNNING"

    def test_waits_until_both_run_with_their_own_conf(self):
        self.states = {"4": "RUNNING", "5": "PENDING"}
        env = {"SLURM_JOB_ID": "4", "SLURM_NTASKS": "9", "SLURM_CONF": "/a"}
        c = slurm.from_jobs("4", None, "5", "/b", 10, env, sleep=self.sleep, now=lambda: self.t)
        self.assertEqual((c["A"].cluster, c["B"].cluster), ("/a", "/b"))
        self.assertEqual(c["B"].srun_args(), ["--jobid=5"])
        self.assertNotIn("SLURM_NTASKS", c["B"].env)  # the enclosing job's variables stay out
        self.assertEqual(self.cancelled, [])

    def test_never_starts_cancels_both(self):
        self.states = {"4": "RUNNING", "5": "PENDING"}
        with self.assertRaisesRegex(Fatal, r"cluster B \(job 5\) did not start within 1 s"):
            slurm.from_jobs("4", None, "5", None, 1, {}, sleep=lambda s: setattr(self, "t", self.t + s),
                            now=lambda: self.t)
        self.assertEqual(sorted(self.cancelled), ["4", "5"])


class Site(unittest.TestCase):
    def test_parse(self):
        s = slurm_site.parse('mpi = "pmix"\n[bridges.z1]\na = "10.1.0.1:7470"\nb = "10.2.0.1:7470"\n'
                             f'key = "{"ab" * 32}"\njob_a = "10.1.0.1:7471"\njob_b = "10.2.0.1:7471"\n')
        self.assertEqual((s.mpi, s.bridge("z1").a.port, s.bridge("z1").job_b.host), ("pmix", 7470, "10.2.0.1"))

    def test_errors_name_the_key(self):
        for text, key in (('[bridges.z]\na = "x"\nb = "10.2.0.1:1"\n', "bridges.z.a"),
                          ('[bridges.z]\na = "10.1.0.1:1"\n', "needs both"),
                          ('[bridges.z]\nkey = "12"\n', "key must be"),
                          ('[bridges.z]\nport = 1\n', "unknown key 'port'"),
                          ('colour = 1\n', "unknown key 'colour'")):
            with self.assertRaisesRegex(Fatal, key):
                slurm_site.parse(text)

    def test_file_others_may_write_is_refused(self):
        with tempfile.TemporaryDirectory() as d:
            p = os.path.join(d, "slurm.toml")
            with open(p, "w") as f:
                f.write("")
            os.chmod(p, 0o666)
            with self.assertRaisesRegex(Fatal, "nobody else may write"):
                slurm_site.load(p, True)
            self.assertEqual(slurm_site.load(os.path.join(d, "absent"), False).bridges, [])


class Launch(unittest.TestCase):
    def test_options(self):
        o = parsed("--slurm", "--slurm-job-b", "12", "--slurm-conf-b", "/b.conf", "--", "prog")
        self.assertEqual((o.mode, o.slurm_wait, o.np_low), ("slurm", slurm_launch.DEFAULT_WAIT, ""))
        for bad in (["--slurm", "--hostfile-a", "h"], ["--slurm", "--zippers", "2"],
                    ["--slurm", "--slurm-job-a", "3"], ["--slurm", "--slurm-wait", "0"],
                    ["--slurm-job-b", "3", "--local", "-x1", "-y1"]):
            with self.assertRaises(UsageError, msg=bad):
                parsed(*bad, "--", "prog")

    def test_srun_and_rank_environment_hold_no_secret(self):
        o = parsed("--slurm", "--srun-args", "--cpu-bind=none", "--", "prog", "arg")
        comps = slurm.from_hetjob(HET_ENV)
        site = slurm_site.parse('[bridges.zip]\njob_a = "10.1.0.1:7471"\njob_b = "10.2.0.1:7471"\n')
        p = slurm_launch.plan_bridges(o, comps, site)
        self.assertIs(p.per_job, comps["bridge"])
        p.keys = ["cd" * 32]
        cmd = slurm_launch.srun_cmd(o, comps["B"], 5, "pmix", "/w/zipper-slurm-rank")
        self.assertEqual(cmd[:8], ["srun", "--het-group=1", "--mpi=pmix", "-n", "5", "-N", "2", "--input=all"])
        self.assertEqual(cmd[-4:], ["--cpu-bind=none", "/w/zipper-slurm-rank", "prog", "arg"])
        secret = "ef" * 32
        environ = {"MMPI_JOB_SECRET": secret, "MMPI_EAGER_LIMIT": "99", "PATH": "/bin"}
        env = slurm_launch.rank_env(o, environ, "B", p, "77", 3, 5, None)
        self.assertEqual((env["MMPI_FORWARDER"], env["MMPI_FORWARDER_KEYS"], env["MMPI_GROUP"]),
                         ("10.2.0.1:7471", "cd" * 32, "high"))
        self.assertEqual((env["MMPI_NP_LOW"], env["MMPI_NP_HIGH"], env["MMPI_EAGER_LIMIT"]), ("3", "5", "99"))
        self.assertFalse(any(secret in v for v in list(env.values()) + cmd))

    def test_service_bridges_need_the_site(self):
        o = parsed("--slurm", "--", "prog")
        comps = {k: v for k, v in slurm.from_hetjob(HET_ENV).items() if k != "bridge"}
        with self.assertRaisesRegex(Fatal, "no bridge nodes"):
            slurm_launch.plan_bridges(o, comps, slurm_site.parse(""))
        p = slurm_launch.plan_bridges(o, comps, slurm_site.parse(
            f'[bridges.s]\na = "10.1.0.9:7470"\nb = "10.2.0.9:7470"\nkey = "{"01" * 32}"\n'))
        self.assertEqual((p.nodes, p.keys), (["s"], ["01" * 32]))
        # A site zipperd with no key anywhere is refused before any rank starts.
        os.environ.pop("MMPI_FORWARDER_KEYS", None)
        os.environ["MMPI_KNOWN_FORWARDERS"] = "/nonexistent"
        with self.assertRaisesRegex(Fatal, "no host key pinned"):
            slurm_launch.plan_bridges(o, comps, slurm_site.parse('[bridges.s]\na = "10.1.0.9:7470"\n'
                                                                 'b = "10.2.0.9:7470"\n'))
        del os.environ["MMPI_KNOWN_FORWARDERS"]
        with self.assertRaisesRegex(Fatal, "bridge node zip .* no job_a"):
            slurm_launch.plan_bridges(o, slurm.from_hetjob(HET_ENV), slurm_site.parse(""))

    def test_host_keys_match_zipperd(self):
        keys = slurm_launch.make_keys(None, None, type("P", (), {"nodes": ["n1", "n2"]})(), "")
        self.assertNotEqual(keys[0], keys[1])
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "host_key")
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            os.write(fd, (keys[0][0] + "\n").encode())
            os.close(fd)
            r = subprocess.run([os.path.join(BIN, "zipperd"), "--print-host-key", "--host-key", path],
                               stdout=subprocess.PIPE, text=True, check=True)
            self.assertEqual(r.stdout.strip(), keys[0][1])


class RankWrapper(unittest.TestCase):
    """zipper-slurm-rank: the job secret from stdin into a 0600 memfd the program inherits."""

    WRAPPER = os.path.join(BIN, "zipper-slurm-rank")
    PROBE = ("import os,stat,sys; fd=int(os.environ['MMPI_JOB_SECRET_FD']); st=os.fstat(fd); "
             "print(os.pread(fd,100,0).decode().strip(), oct(stat.S_IMODE(st.st_mode)), "
             "os.readlink('/proc/self/fd/%d' % fd).startswith('/memfd:'), sys.stdin.read())")

    def run_wrapper(self, stdin, *argv):
        return subprocess.run([self.WRAPPER] + list(argv), input=stdin, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)

    def test_secret_into_memfd_and_the_rest_of_stdin_kept(self):
        secret = "0f" * 32
        r = self.run_wrapper(secret + "\nrest of input", sys.executable, "-c", self.PROBE)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.split(), [secret, "0o600", "True", "rest", "of", "input"])

    def test_bad_input_is_refused(self):
        for bad in ("", "short\n", "G" * 64 + "\n", "0" * 64 + "x"):
            r = self.run_wrapper(bad, "true")
            self.assertEqual(r.returncode, 1, bad)
            self.assertIn("expected the job secret", r.stderr)
        r = self.run_wrapper("0" * 64 + "\n", "/nonexistent/prog")
        self.assertEqual(r.returncode, 127)


if __name__ == "__main__":
    unittest.main(verbosity=2)
