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
from zipper_run import options, slurm_allocations as slurm, slurm_options, slurm_plan, slurm_secrets, slurm_site, slurm_srun  # noqa: E402,E501
from zipper_run.errors import Fatal, UsageError  # noqa: E402

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

    def test_never_starts_cancels_both_when_asked(self):
        self.states = {"4": "RUNNING", "5": "PENDING"}
        with self.assertRaisesRegex(Fatal, r"cluster B \(job 5\) did not start within 1 s .*; cancelled jobs 4 and 5"):
            slurm.from_jobs("4", None, "5", None, 1, {}, sleep=lambda s: setattr(self, "t", self.t + s),
                            now=lambda: self.t, cancel_on_failure=True)
        self.assertEqual(sorted(self.cancelled), ["4", "5"])

    def test_healthy_allocation_is_not_cancelled(self):
        # B never starts, or B ended: A runs, and is the user's.
        for b_state, why in (("PENDING", "did not start within 1 s .*"), ("COMPLETED", r"ended \(COMPLETED\)")):
            self.states, self.t = {"4": "RUNNING", "5": b_state}, 0.0
            with self.assertRaisesRegex(Fatal, rf"cluster B \(job 5\) {why}; no job cancelled"):
                slurm.from_jobs("4", None, "5", None, 1, {}, sleep=lambda s: setattr(self, "t", self.t + s),
                                now=lambda: self.t)
            self.assertEqual(self.cancelled, [])


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

    def test_installed_example(self):
        # deploy/slurm/slurm.toml: all commented out it names nothing; uncommented it parses.
        path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "deploy", "slurm", "slurm.toml")
        with open(path) as f:
            text = f.read()
        self.assertEqual((slurm_site.parse(text).bridges, slurm_site.parse(text).clusters), ([], {}))
        lines = [ln[1:] for ln in text.splitlines() if ln.startswith("#") and not ln.startswith("# ")
                 and not ln.startswith("#  ") and ln != "#"]
        s = slurm_site.parse("\n".join(lines).replace("<64 hex digits>", "ab" * 32))
        self.assertEqual((s.mpi, s.bridge("bridge01").job_a.port, s.clusters["B"].partitions),
                         ("pmix", 7471, ["clusterB"]))
        os.environ.pop("ZIPPER_SLURM_SITE", None)
        self.assertEqual(slurm_site.default_path("/usr/bin"), "/etc/zipper/slurm.toml")
        self.assertEqual(slurm_site.default_path("/opt/z/bin"), "/opt/z/etc/zipper/slurm.toml")

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
        self.assertEqual((o.mode, o.slurm_wait, o.np_low), ("slurm", slurm_options.DEFAULT_WAIT, ""))
        for bad in (["--slurm", "--hostfile-a", "h"], ["--slurm", "--zippers", "2"],
                    ["--slurm", "--slurm-job-a", "3"], ["--slurm", "--slurm-wait", "0"],
                    ["--slurm-job-b", "3", "--local", "-x1", "-y1"]):
            with self.assertRaises(UsageError, msg=bad):
                parsed(*bad, "--", "prog")

    def test_srun_and_rank_environment_hold_no_secret(self):
        o = parsed("--slurm", "--srun-args", "--cpu-bind=none", "--", "prog", "arg")
        comps = slurm.from_hetjob(HET_ENV)
        site = slurm_site.parse('[bridges.zip]\njob_a = "10.1.0.1:7471"\njob_b = "10.2.0.1:7471"\n')
        p = slurm_plan.plan_bridges(o, comps, site)
        self.assertIs(p.per_job, comps["bridge"])
        p.keys = ["cd" * 32]
        cmd = slurm_srun.srun_cmd(o, comps["B"], 5, "pmix", "/w/zipper-slurm-rank")
        self.assertEqual(cmd[:8], ["srun", "--het-group=1", "--mpi=pmix", "-n", "5", "-N", "2", "--input=all"])
        self.assertEqual(cmd[-4:], ["--cpu-bind=none", "/w/zipper-slurm-rank", "prog", "arg"])
        secret = "ef" * 32
        environ = {"MMPI_JOB_SECRET": secret, "MMPI_EAGER_LIMIT": "99", "PATH": "/bin"}
        env = slurm_srun.rank_env(o, environ, "B", p, "77", 3, 5, None)
        self.assertEqual((env["MMPI_FORWARDER"], env["MMPI_FORWARDER_KEYS"], env["MMPI_GROUP"]),
                         ("10.2.0.1:7471", "cd" * 32, "high"))
        self.assertEqual((env["MMPI_NP_LOW"], env["MMPI_NP_HIGH"], env["MMPI_EAGER_LIMIT"]), ("3", "5", "99"))
        self.assertFalse(any(secret in v for v in list(env.values()) + cmd))
        self.assertNotIn("MMPI_RANK_MAP", env)
        o.rank_map_sites, o.profile = [[0, 3], [1, 2]], "/shared/p.json"
        env = slurm_srun.rank_env(o, dict(environ, MMPI_RANK_MAP="1;0"), "B", p, "77", 2, 2, None)
        self.assertEqual((env["MMPI_RANK_MAP"], env["MMPI_PROFILE"]), ("0,3;1-2", "/shared/p.json"))

    def test_service_bridges_need_the_site(self):
        o = parsed("--slurm", "--", "prog")
        comps = {k: v for k, v in slurm.from_hetjob(HET_ENV).items() if k != "bridge"}
        with self.assertRaisesRegex(Fatal, "no bridge nodes"):
            slurm_plan.plan_bridges(o, comps, slurm_site.parse(""))
        p = slurm_plan.plan_bridges(o, comps, slurm_site.parse(
            f'[bridges.s]\na = "10.1.0.9:7470"\nb = "10.2.0.9:7470"\nkey = "{"01" * 32}"\n'))
        self.assertEqual((p.nodes, p.keys), (["s"], ["01" * 32]))
        # A site zipperd with no key anywhere is refused before any rank starts.
        os.environ.pop("MMPI_FORWARDER_KEYS", None)
        os.environ["MMPI_KNOWN_FORWARDERS"] = "/nonexistent"
        with self.assertRaisesRegex(Fatal, "no host key pinned"):
            slurm_plan.plan_bridges(o, comps, slurm_site.parse('[bridges.s]\na = "10.1.0.9:7470"\n'
                                                                 'b = "10.2.0.9:7470"\n'))
        del os.environ["MMPI_KNOWN_FORWARDERS"]
        with self.assertRaisesRegex(Fatal, "bridge node zip .* no job_a"):
            slurm_plan.plan_bridges(o, slurm.from_hetjob(HET_ENV), slurm_site.parse(""))

    def test_host_keys_match_zipperd(self):
        keys = slurm_secrets.make_keys(None, None, type("P", (), {"nodes": ["n1", "n2"]})(), "")
        self.assertNotEqual(keys[0], keys[1])
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "host_key")
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            os.write(fd, (keys[0][0] + "\n").encode())
            os.close(fd)
            r = subprocess.run([os.path.join(BIN, "zipperd"), "--print-host-key", "--host-key", path],
                               stdout=subprocess.PIPE, text=True, check=True)
            self.assertEqual(r.stdout.strip(), keys[0][1])


class Mistakes(unittest.TestCase):
    """Each mistake gets one error in zipper's words before any rank starts."""

    SITE = ('[cluster_a]\nnodes = "a[1-4]"\npartitions = ["pa"]\n'
            '[cluster_b]\nnodes = "b[01-04]"\npartitions = ["pb"]\n')

    def test_more_ranks_than_tasks(self):
        comps = slurm.from_hetjob(HET_ENV)  # A: 3 tasks, B: 6
        slurm_plan.check_components(comps, slurm_site.parse(""), 3, 6)
        with self.assertRaisesRegex(Fatal, r"-x 4 asks for more ranks than the 3 task\(s\) of cluster A"):
            slurm_plan.check_components(comps, slurm_site.parse(""), 4, 6)
        with self.assertRaisesRegex(Fatal, r"-y 7 asks for more ranks than the 6 task\(s\) of cluster B"):
            slurm_plan.check_components(comps, slurm_site.parse(""), 1, 7)

    def test_components_in_the_wrong_order(self):
        site = slurm_site.parse(self.SITE)
        slurm_plan.check_components(slurm.from_hetjob(HET_ENV), site, 1, 1)
        swapped = dict(HET_ENV, SLURM_JOB_NODELIST_HET_GROUP_0="b[01-02]", SLURM_JOB_NODELIST_HET_GROUP_1="a[1-2]")
        with self.assertRaisesRegex(Fatal, r"component 0 \(cluster A's ranks\) has node b01, which the site "
                                           r"configuration .* names cluster B's: components in the wrong order"):
            slurm_plan.check_components(slurm.from_hetjob(swapped), site, 1, 1)
        parts = dict(HET_ENV, SLURM_JOB_PARTITION_HET_GROUP_0="pb")
        with self.assertRaisesRegex(Fatal, r"component 0 \(cluster A's ranks\) is in partition pb, which"):
            slurm_plan.check_components(slurm.from_hetjob(parts), slurm_site.parse(
                '[cluster_b]\npartitions = ["pb"]\n'), 1, 1)
        with self.assertRaisesRegex(Fatal, "cluster_a.nodes must be a Slurm host list"):
            slurm_site.parse('[cluster_a]\nnodes = "a[1-"\n')

    def test_missing_site_file_is_named(self):
        o = parsed("--slurm", "--", "prog")
        with tempfile.TemporaryDirectory() as d:
            site = slurm_site.load(os.path.join(d, "slurm.toml"), False)
            with self.assertRaisesRegex(Fatal, r"no site configuration: '.*slurm.toml' does not exist"):
                slurm_plan.plan_bridges(o, slurm.from_hetjob(HET_ENV), site)

    def test_exported_secret_is_refused(self):
        from zipper_run import slurm_secrets as sec
        with self.assertRaisesRegex(Fatal, "will not take MMPI_JOB_SECRET from the environment.*"
                                           "MMPI_JOB_SECRET_FILE"):
            sec.refuse_exported_secret({"MMPI_JOB_SECRET": "ab" * 32})
        sec.refuse_exported_secret({"MMPI_JOB_SECRET_FILE": "/x"})


class StepStatus(unittest.TestCase):
    def test_first_failing_task_from_srun_errors(self):
        # srun exits with the highest status of its tasks (143 for those it
        # killed); zipper-run reports the first failing rank's from these lines.
        t = slurm_srun.task_status
        self.assertEqual(t("srun: error: clusterA1: task 0: Exited with exit code 3"), 3)
        self.assertEqual(t("srun: error: n1: tasks 1-3: Killed"), 137)
        self.assertEqual(t("srun: error: n1: task 2: Segmentation fault (core dumped)"), 139)
        self.assertIsNone(t("srun: error: Timed out waiting for job step to complete"))
        self.assertIsNone(t("task 0: Exited with exit code 3"))  # a rank's own output


class BridgeWrapper(unittest.TestCase):
    """slurm_bridge.py with a stand-in zipperd: the key and pid file are gone
    once it reports READY, and the end of its standard input stops zipperd
    (status 0), so a step that srun SIGKILLs later leaves nothing behind."""

    FAKE = ("import os,signal,sys,time\n"
            "a=sys.argv; key=open(a[a.index('--host-key')+1]).read().strip(); pid=a[a.index('--pid-file')+1]\n"
            "open(os.environ['FAKE_OUT'],'w').write(key)\n"
            "signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))\n"
            "open(pid,'w').write(str(os.getpid()))\n"
            "while True: time.sleep(1)\n")

    def start(self, d):
        fake = os.path.join(d, "fake-zipperd")
        with open(fake, "w") as f:
            f.write(f"#!{sys.executable}\n" + self.FAKE)
        os.chmod(fake, 0o755)
        tmp = os.path.join(d, "tmp")
        os.mkdir(tmp)
        env = dict(os.environ, TMPDIR=tmp, SLURMD_NODENAME="n1", FAKE_OUT=os.path.join(d, "key-seen"))
        p = subprocess.Popen([sys.executable, os.path.join(BIN, "zipper_run", "slurm_bridge.py"), fake,
                              "n1,127.0.0.1:1,127.0.0.1:2", "--"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             env=env)
        p.stdin.write(f"n0 {'11' * 32}\nn1 {'ab' * 32}\nEND\n".encode())
        p.stdin.flush()
        self.assertEqual(p.stdout.readline(), b"READY n1\n")
        with open(env["FAKE_OUT"]) as f:
            self.assertEqual(f.read(), "ab" * 32)  # its own node's key, and only that
        self.assertEqual(os.listdir(tmp), [], "the private directory is gone once zipperd is ready")
        return p, tmp

    def test_end_of_input_stops_zipperd_and_nothing_is_left(self):
        with tempfile.TemporaryDirectory() as d:
            p, tmp = self.start(d)
            p.stdin.close()
            self.assertEqual(p.wait(timeout=20), 0)
            p.stdout.close()
            self.assertEqual(os.listdir(tmp), [])


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
