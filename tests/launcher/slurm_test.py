#!/usr/bin/env python3
"""zipper-run --slurm on a real Slurm on the emulation (slurm_emulation.py).

    slurm_test.py BIN_DIR SOURCE_DIR CHECK

hetjob    salloc of a heterogeneous job (A: 2 nodes, B: 2 nodes, bridge: the
          zipper node); zipper-run --slurm runs mmpi_itest's suites at 2+2 and
          3+5 through a per-job zipperd on component 2, every byte checked;
          the job secret (given through MMPI_JOB_SECRET_FILE, so the test knows
          it) is in no rank's /proc/PID/environ or cmdline, not in
          `scontrol show job`, and in no file of Slurm's state and spool
          directories (where slurmctld keeps each job's environment); then
          --transparent at 2+2: the same suites built unmodified with mpicc
          (mmpi_itest_unported) through libmmpi_transparent under srun
twoalloc  two allocations on two clusters (alpha's partition a, beta's
          partition b), each with its own slurmctld and SLURM_CONF; the site's
          zipperd service named with its host key in the site configuration;
          2+2 and 3+5 as above
sbatch    sbatch of examples/zipper-slurm.sbatch: its output file holds every
          suite's PASS line; the job environment slurmctld recorded (what
          slurmdbd stores with AccountingStoreFlags=job_env) and every other
          file of Slurm's hold no secret
errors    each error gives one line naming the cause, exit non-zero, nothing
          left allocated: no allocation, a hetjob of one component, an
          unreachable bridge node, an exported MMPI_JOB_SECRET, -x larger
          than the allocation, components in the wrong order, a missing site
          file, a second allocation that never starts (cancelled only with
          --slurm-cancel-on-failure; without, the running one is kept)
ends      a hetjob with a per-job zipperd ended each way a job ends: normal
          exit (0), a rank crash (the rank's status), --timeout (124),
          scancel and a SIGKILLed zipper-run; after each, no file of the
          job in /tmp, /dev/shm or a node's TmpFS (the per-job zipperd's
          host key and pid file included), no memfd or key in any
          /proc/PID/fd, and no process of the job
Exit 77: skipped (with the reason), 0: pass, 1: fail.
"""

import os
import re
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import slurm_emulation  # noqa: E402

SUITES = ["comms", "comm_api", "ring", "pingpong", "anysource", "big", "many", "mix", "errors", "pipeline"]
RUN_TIMEOUT = 150


def fail(msg):
    print(f"FAIL: {msg}", flush=True)
    sys.exit(1)


def skip(msg):
    print(f"SKIP: {msg}", flush=True)
    sys.exit(77)


class Env:
    def __init__(self, bin_dir, src_dir, emu):
        self.bin, self.src, self.emu = bin_dir, src_dir, emu
        self.zrun = os.path.join(bin_dir, "zipper-run")
        self.itest = os.path.join(bin_dir, "mmpi_itest")
        # The same suites with no M prefix, built with plain mpicc (tests/integration).
        self.unported = os.path.join(bin_dir, "mmpi_itest_unported")
        self.tmp = tempfile.mkdtemp(prefix="zipper-slurm-test.", dir=emu.base)
        # Open MPI's TCP BTL inside each cluster: the nodes' one NIC.
        self.rank_env = {"OMPI_MCA_btl_tcp_if_include": "eth0", "OMPI_MCA_mpi_yield_when_idle": "1",
                         "MMPI_CONNECT_TIMEOUT": "60"}

    def env(self, cluster, **extra):
        e = cluster.env()
        e.update(self.rank_env)
        e.update(extra)
        return e

    def run(self, argv, cluster, timeout=RUN_TIMEOUT, **extra):
        """argv on the login node (netns zipper) with cluster's SLURM_CONF."""
        try:
            return subprocess.run(cluster.client(argv), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  text=True, env=self.env(cluster, **extra), timeout=timeout)
        except subprocess.TimeoutExpired as e:
            fail(f"{' '.join(argv[:6])} ... did not end within {timeout} s\n{e.stdout}\n{e.stderr}\n"
                 f"{self.emu.logs()}")

    def site(self, text):
        path = os.path.join(self.tmp, f"site{len(os.listdir(self.tmp))}.toml")
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        with os.fdopen(fd, "w") as f:
            f.write(text)
        return path

    def secret_file(self):
        secret = os.urandom(32).hex()
        path = os.path.join(self.tmp, "secret")
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        os.write(fd, (secret + "\n").encode())
        os.close(fd)
        return secret, path


def check_passes(r, what, np):
    out = r.stdout
    if r.returncode != 0:
        fail(f"{what}: exit {r.returncode}\nstdout:\n{out}\nstderr:\n{r.stderr[-4000:]}")
    for s in SUITES:
        if f"PASS {s} ({np} ranks)" not in out:
            fail(f"{what}: no 'PASS {s} ({np} ranks)'\nstdout:\n{out}\nstderr:\n{r.stderr[-3000:]}")
    print(f"ok: {what}: {len(SUITES)} suites passed at {np} ranks", flush=True)


def grep_tree(root, needle):
    """Files under root whose bytes contain needle."""
    hits = []
    for d, _, files in os.walk(root):
        for f in files:
            p = os.path.join(d, f)
            try:
                with open(p, "rb") as fh:
                    if needle in fh.read():
                        hits.append(p)
            except OSError:
                pass
    return hits


def dump_program(t):
    """A rank program that records its own environ and cmdline, then runs the suites."""
    d = os.path.join(t.tmp, "procs")
    os.makedirs(d, exist_ok=True)
    script = os.path.join(t.tmp, "dump-and-run.sh")
    with open(script, "w") as f:
        f.write("#!/bin/sh\n"
                f'cp /proc/$$/environ "{d}/env.$MMPI_GROUP.$SLURM_PROCID"\n'
                f'cp /proc/$$/cmdline "{d}/cmd.$MMPI_GROUP.$SLURM_PROCID"\n'
                f'exec "{t.itest}" "$@"\n')
    os.chmod(script, 0o755)
    return script, d


def check_hetjob(t):
    alpha = t.emu.alpha
    site = t.site('[bridges.zipper]\njob_a = "10.201.0.254:7571"\njob_b = "10.202.0.254:7571"\n')
    secret, sfile = t.secret_file()
    prog, procs = dump_program(t)
    out = os.path.join(t.tmp, "hetjob.out")
    # Each run's exit status in OUT.SFX.rc: one failing does not hide the others.
    inner = (f'Z={t.zrun}; S={site}; '
             f'"$Z" --slurm --slurm-site "$S" -x 2 -y 2 -- {prog} all > {out}.22 2> {out}.22.err; '
             f'echo $? > {out}.22.rc; '
             f'scontrol show job -d "$SLURM_JOB_ID" > {out}.scontrol; '
             f'"$Z" --slurm --slurm-site "$S" -- {t.itest} all > {out}.35 2> {out}.35.err; '
             f'echo $? > {out}.35.rc; '
             f'"$Z" --slurm --slurm-site "$S" --transparent -x 2 -y 2 -- {t.unported} all '
             f'> {out}.tr 2> {out}.tr.err; echo $? > {out}.tr.rc')
    if not os.access(t.unported, os.X_OK):
        fail(f"{t.unported} not built (target mmpi_itest_unported)")
    r = t.run(["salloc", "-p", "a", "-N2", "-n3", ":", "-p", "b", "-N2", "-n5", ":", "-p", "bridge", "-N1",
               "sh", "-c", inner], alpha, MMPI_JOB_SECRET_FILE=sfile)

    def result(sfx):
        def read(p):
            try:
                with open(p) as f:
                    return f.read()
            except OSError:
                return ""
        rc = read(out + sfx + ".rc").strip()
        return subprocess.CompletedProcess([], int(rc) if rc.isdigit() else 1, read(out + sfx),
                                           read(out + sfx + ".err") + r.stderr)
    check_passes(result(".22"), "hetjob 2+2", 4)
    check_passes(result(".35"), "hetjob 3+5 (tasks from the allocation)", 8)
    tr = result(".tr")
    check_passes(tr, "hetjob 2+2 --transparent (unmodified program)", 4)
    if "mmpi transparent" in tr.stderr and "started Open MPI without" in tr.stderr:
        fail(f"--transparent: a rank ran without the layer:\n{tr.stderr[-2000:]}")
    check_secret(t, secret, procs, out + ".scontrol", 4)


def check_secret(t, secret, procs, scontrol_out, nranks):
    envs = [f for f in os.listdir(procs) if f.startswith("env.")]
    if len(envs) != nranks:
        fail(f"expected {nranks} rank environments, found {sorted(envs)}")
    for f in os.listdir(procs):
        with open(os.path.join(procs, f), "rb") as fh:
            data = fh.read()
        if secret.encode() in data:
            fail(f"the job secret is in a rank's /proc/PID/{f.split('.')[0]}: {f}")
        if f.startswith("env.") and b"MMPI_JOB_SECRET_FD=" not in data:
            fail(f"{f}: the rank got no MMPI_JOB_SECRET_FD")
    with open(scontrol_out) as fh:
        sc = fh.read()
    if "JobId=" not in sc or secret in sc:
        fail(f"scontrol show job: {'holds the secret' if secret in sc else 'no output'}")
    hits = grep_tree(t.emu.base, secret.encode())
    hits = [h for h in hits if not h.startswith(t.tmp)]  # the test's own secret file
    if hits:
        fail(f"the job secret is in Slurm's records: {hits}")
    print(f"ok: secret in no rank's environ/cmdline ({nranks} ranks), not in scontrol show job, "
          "not in Slurm's state/spool/log files", flush=True)


def start_service(t):
    """A zipperd in netns zipper as the site's service would be, with a host key."""
    d = os.path.join(t.tmp, "service")
    os.makedirs(d, mode=0o700)
    key = os.path.join(d, "host_key")
    log = open(os.path.join(d, "zipperd.log"), "wb")
    p = subprocess.Popen(["ip", "netns", "exec", "zipper", os.path.join(t.bin, "zipperd"),
                          "--listen", "A=10.201.0.254:7572", "--listen", "B=10.202.0.254:7572",
                          "--pid-file", os.path.join(d, "pid"), "--host-key", key],
                         stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True)
    deadline = time.monotonic() + 15
    while not os.path.exists(os.path.join(d, "pid")):
        if p.poll() is not None or time.monotonic() > deadline:
            fail(f"site zipperd did not start: {open(log.name).read()[-1000:]}")
        time.sleep(0.05)
    with open(key + ".pub") as f:
        pub = re.search(r"[0-9a-f]{64}", f.read()).group(0)
    return p, pub


def salloc_no_shell(t, cluster, *args):
    r = t.run(["salloc", "--no-shell"] + list(args), cluster, timeout=60)
    m = re.search(r"Granted job allocation ([0-9]+)", r.stderr)
    if not m:
        fail(f"salloc --no-shell {args}: {r.stderr}\n{t.emu.logs()}")
    return m.group(1)


def job_state(t, cluster, job):
    r = t.run(["scontrol", "show", "job", "-o", job], cluster, timeout=30)
    m = re.search(r"JobState=(\S+)", r.stdout)
    return m.group(1) if m else "GONE"


def check_twoalloc(t):
    alpha, beta = t.emu.alpha, t.emu.beta
    svc, pub = start_service(t)
    try:
        site = t.site(f'[bridges.zipper]\na = "10.201.0.254:7572"\nb = "10.202.0.254:7572"\nkey = "{pub}"\n')
        ja = salloc_no_shell(t, alpha, "-p", "a", "-N2", "-n3")
        jb = salloc_no_shell(t, beta, "-p", "b", "-N2", "-n5")
        try:
            base = [t.zrun, "--slurm", "--slurm-site", site, "--slurm-job-a", ja, "--slurm-conf-a", alpha.conf,
                    "--slurm-job-b", jb, "--slurm-conf-b", beta.conf]
            check_passes(t.run(base + ["-x", "2", "-y", "2", "--", t.itest, "all"], alpha),
                         "two allocations 2+2", 4)
            check_passes(t.run(base + ["--", t.itest, "all"], alpha), "two allocations 3+5", 8)
            # A wrong pinned key: the ranks refuse the forwarder (keys do travel).
            bad = t.site(f'[bridges.zipper]\na = "10.201.0.254:7572"\nb = "10.202.0.254:7572"\n'
                         f'key = "{"0" * 64}"\n')
            r = t.run([base[0], "--slurm", "--slurm-site", bad] + base[4:] + ["-x", "1", "-y", "1", "--timeout",
                                                                          "60", "--", t.itest, "ring"],
                      alpha, MMPI_CONNECT_TIMEOUT="10")
            if r.returncode == 0 or "PASS" in r.stdout:
                fail(f"a wrong pinned host key was accepted: {r.stdout} {r.stderr[-1500:]}")
            print("ok: two allocations: a wrong pinned zipperd key is refused by the ranks", flush=True)
        finally:
            t.run(["scancel", ja], alpha, timeout=30)
            t.run(["scancel", jb], beta, timeout=30)
    finally:
        svc.terminate()
        svc.wait()


def check_sbatch(t):
    """The example script; then the job's environment as slurmctld recorded it
    (StateSaveLocation/hash.N/job.ID/environment, what slurmdbd's job_env
    would store) and every other file of Slurm's hold no secret."""
    alpha = t.emu.alpha
    site = t.site('[bridges.zipper]\njob_a = "10.201.0.254:7573"\njob_b = "10.202.0.254:7573"\n')
    secret, sfile = t.secret_file()
    script = os.path.join(t.src, "examples", "zipper-slurm.sbatch")
    out = os.path.join(t.tmp, "sbatch.out")
    r = t.run(["sbatch", "--parsable", "--wait", f"--output={out}",
               f"--export=ALL,ZIPPER_SLURM_SITE={site},PATH={t.bin}:{os.environ['PATH']}",
               script, t.itest, "all"], alpha, MMPI_JOB_SECRET_FILE=sfile)
    with open(out) if os.path.exists(out) else open(os.devnull) as f:
        text = f.read()
    check_passes(subprocess.CompletedProcess([], r.returncode, text, r.stderr), "sbatch example (2+2)", 4)
    job = r.stdout.strip().split(";")[0]
    envs = [os.path.join(d, "environment") for d, _, files in os.walk(alpha.dir)
            if os.path.basename(d) == f"job.{job}" and "environment" in files]
    if not envs:
        fail(f"no recorded environment of batch job {job} under {alpha.dir}/state")
    with open(envs[0], "rb") as f:
        recorded = f.read()
    if b"MMPI_JOB_SECRET_FILE" not in recorded:
        fail(f"{envs[0]} does not hold the job's environment")
    hits = [h for h in grep_tree(t.emu.base, secret.encode()) if not h.startswith(t.tmp)]
    if hits:
        fail(f"the job secret is in Slurm's records: {hits}")
    print(f"ok: the recorded environment of job {job} ({envs[0]}) and every other Slurm file hold "
          "no secret", flush=True)


def one_error_line(r, pattern, what):
    errs = [ln for ln in r.stderr.splitlines() if ln.startswith("zipper-run: error:")]
    if r.returncode == 0:
        fail(f"{what}: exit 0\n{r.stderr}")
    if len(errs) != 1 or not re.search(pattern, errs[0]):
        fail(f"{what}: expected one 'zipper-run: error:' line matching /{pattern}/, got:\n{r.stderr}")
    print(f"ok: {what}: exit {r.returncode}: {errs[0]}", flush=True)


def no_jobs_left(t, cluster, what, wait_s=30):
    """squeue empties within wait_s (a job may be COMPLETING while its steps are killed)."""
    deadline = time.monotonic() + wait_s
    while True:
        r = t.run(["squeue", "-h", "-o", "%i %T"], cluster, timeout=30)
        if not r.stdout.strip():
            return
        if time.monotonic() > deadline:
            fail(f"{what}: jobs left on {cluster.name} after {wait_s} s: {r.stdout.strip()}")
        time.sleep(0.5)


def check_errors(t):
    alpha, beta = t.emu.alpha, t.emu.beta
    # No allocation at all.
    r = t.run([t.zrun, "--slurm", "--", t.itest, "ring"], alpha)
    one_error_line(r, r"no Slurm allocation", "no allocation")
    # A heterogeneous job of one component: the job ends non-zero and is freed.
    r = t.run(["salloc", "-p", "a", "-N1", t.zrun, "--slurm", "--", t.itest, "ring"], alpha)
    one_error_line(r, r"has one component", "hetjob with one component")
    no_jobs_left(t, alpha, "hetjob with one component")
    # An unreachable bridge node (the site's service is not running).
    site = t.site('[bridges.zipper]\na = "10.201.0.254:7574"\nb = "10.202.0.254:7574"\n'
                  f'key = "{"1" * 64}"\n')
    r = t.run(["salloc", "-p", "a", "-N1", ":", "-p", "b", "-N1", t.zrun, "--slurm", "--slurm-site", site,
               "--", t.itest, "ring"], alpha)
    one_error_line(r, r"bridge node zipper unreachable", "unreachable bridge node")
    no_jobs_left(t, alpha, "unreachable bridge node")
    # An exported job secret: refused, since Slurm saves the job's environment.
    r = t.run(["salloc", "-p", "a", "-N1", ":", "-p", "b", "-N1", t.zrun, "--slurm", "--slurm-site", site,
               "--", t.itest, "ring"], alpha, MMPI_JOB_SECRET="ab" * 32)
    one_error_line(r, r"will not take MMPI_JOB_SECRET from the environment.*MMPI_JOB_SECRET_FILE",
                   "exported MMPI_JOB_SECRET")
    # More ranks than the allocation has tasks.
    r = t.run(["salloc", "-p", "a", "-N1", "-n2", ":", "-p", "b", "-N1", t.zrun, "--slurm", "--slurm-site", site,
               "-x", "3", "-y", "1", "--", t.itest, "ring"], alpha)
    one_error_line(r, r"-x 3 asks for more ranks than the 2 task\(s\) of cluster A", "-x above the allocation")
    # Components in the wrong order (B's nodes as component 0), the site file naming the clusters.
    named = t.site('[cluster_a]\nnodes = "clusterA[1-2]"\n[cluster_b]\nnodes = "clusterB[1-2]"\n'
                   '[bridges.zipper]\na = "10.201.0.254:7574"\nb = "10.202.0.254:7574"\n'
                   f'key = "{"1" * 64}"\n')
    r = t.run(["salloc", "-p", "b", "-N1", ":", "-p", "a", "-N1", t.zrun, "--slurm", "--slurm-site", named,
               "--", t.itest, "ring"], alpha)
    one_error_line(r, r"component 0 \(cluster A's ranks\) has node clusterB1, .*wrong order",
                   "components in the wrong order")
    # No site file where zipper-run looks for it.
    r = t.run(["salloc", "-p", "a", "-N1", ":", "-p", "b", "-N1", t.zrun, "--slurm", "--", t.itest, "ring"], alpha,
              ZIPPER_SLURM_SITE=os.path.join(t.tmp, "absent.toml"))
    one_error_line(r, r"no site configuration: '.*absent.toml' does not exist", "missing site file")
    no_jobs_left(t, alpha, "the mistakes")
    # The second allocation never starts (held): zipper-run fails and leaves
    # the running one alone, unless asked to cancel both.
    ja = salloc_no_shell(t, alpha, "-p", "a", "-N1")
    r = t.run(["sbatch", "--parsable", "--hold", "-p", "b", "-N1", "--wrap", "sleep 1"], beta, timeout=30)
    jb = r.stdout.strip().split(";")[0]
    if not jb.isdigit():
        fail(f"sbatch --hold: {r.stdout} {r.stderr}")
    two = [t.zrun, "--slurm", "--slurm-wait", "3", "--slurm-job-a", ja, "--slurm-conf-a", alpha.conf,
           "--slurm-job-b", jb, "--slurm-conf-b", beta.conf]
    r = t.run(two + ["--", t.itest, "ring"], alpha)
    one_error_line(r, rf"cluster B \(job {jb}\) did not start within 3 s .*no job cancelled",
                   "second allocation never starts")
    sa, sb = job_state(t, alpha, ja), job_state(t, beta, jb)
    if sa != "RUNNING" or sb != "PENDING":
        fail(f"without --slurm-cancel-on-failure: job {ja} {sa}, job {jb} {sb} (expected RUNNING, PENDING)")
    print(f"ok: nothing cancelled unasked (job {ja}: {sa}, job {jb}: {sb})", flush=True)
    r = t.run(two[:1] + ["--slurm", "--slurm-cancel-on-failure"] + two[2:] + ["--", t.itest, "ring"], alpha)
    one_error_line(r, rf"cluster B \(job {jb}\) did not start within 3 s .*cancelled jobs {ja} and {jb}",
                   "second allocation never starts, --slurm-cancel-on-failure")
    time.sleep(0.5)
    sa, sb = job_state(t, alpha, ja), job_state(t, beta, jb)
    if sa not in ("CANCELLED", "COMPLETED", "GONE") or sb not in ("CANCELLED", "GONE"):
        fail(f"after the second allocation never started: job {ja} {sa}, job {jb} {sb} (not cancelled)")
    print(f"ok: both allocations cancelled when asked (job {ja}: {sa}, job {jb}: {sb})", flush=True)


ENDS_PORT = 7575
SLEEP_MARK = "86399"  # `sleep 86399`: a rank that waits after its MPI work, findable in ps


def ends_program(t):
    """A rank program: the ring suite through the per-job zipperd, then a note
    that it runs, then a long sleep (holding the secret's memfd, as the shell
    that execs it inherited it)."""
    d = os.path.join(t.tmp, "started")
    os.makedirs(d, exist_ok=True)
    path = os.path.join(t.tmp, "ends-prog.sh")
    with open(path, "w") as f:
        f.write("#!/bin/sh\n"
                f'"{t.itest}" ring || exit $?\n'
                f'touch "{d}/$MMPI_GROUP.$SLURM_PROCID"\n'
                f"exec sleep {SLEEP_MARK}\n")
    os.chmod(path, 0o755)
    crash = os.path.join(t.tmp, "ends-crash.sh")
    with open(crash, "w") as f:
        f.write("#!/bin/sh\n"
                '[ "$MMPI_GROUP" = low ] && [ "$SLURM_PROCID" = 0 ] && exit 3\n'
                f'exec "{t.itest}" ring\n')
    os.chmod(crash, 0o755)
    return path, crash, d


def _tmp_dirs(t):
    """Where a job's files could be: /tmp, /dev/shm and every node's TmpFS."""
    base = os.path.dirname(t.emu.alpha.tmp_fs)
    return ["/tmp", "/dev/shm"] + [os.path.join(base, n) for n in os.listdir(base)
                                    if n.startswith(os.path.basename(t.emu.alpha.tmp_fs))]


def _entries(t):
    out = set()
    for d in _tmp_dirs(t):
        try:
            out |= {os.path.join(d, n) for n in os.listdir(d)}
        except OSError:
            pass
    return out


def _job_processes(t, marks):
    """(pid, cmdline) of processes of a zipper job: zipper-run, its srun
    steps, the rank wrapper, the per-job zipperd and its wrapper, the ranks."""
    hits = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if any(m in cmd for m in marks):
            hits.append((int(pid), cmd.strip()))
    return hits


def _job_fds():
    """/proc/PID/fd entries that are the job secret's memfd or a per-job key."""
    hits = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            continue
        for fd in fds:
            try:
                target = os.readlink(f"/proc/{pid}/fd/{fd}")
            except OSError:
                continue
            if "zipper-job-secret" in target or "zipperd-job." in target or "host_key" in target:
                hits.append(f"{pid}/fd/{fd} -> {target}")
    return hits


def _held_paths():
    """Paths some live process has open or mapped."""
    held = set()
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/maps") as f:
                held |= {ln.split(None, 5)[5].strip() for ln in f if len(ln.split(None, 5)) == 6}
            for fd in os.listdir(f"/proc/{pid}/fd"):
                held.add(os.readlink(f"/proc/{pid}/fd/{fd}"))
        except OSError:
            continue
    return held


def check_nothing_left(t, what, before, secret, wait_s=30):
    """After a job ended: no process of it (Slurm may need KillWait), no
    memfd or key in any process, and no new file of it in /tmp, /dev/shm or
    a node's TmpFS (the secret in none)."""
    marks = [t.itest, SLEEP_MARK, "slurm_bridge.py", "zipper-slurm-rank", t.zrun, f":{ENDS_PORT}"]
    deadline = time.monotonic() + wait_s
    while True:
        procs, fds = _job_processes(t, marks), _job_fds()
        if not procs and not fds:
            break
        if time.monotonic() > deadline:
            fail(f"{what}: left after {wait_s} s: processes {procs}, fds {fds}")
        time.sleep(0.5)
    # The job's TMPDIR is the test's own: everything in it is the job's.
    # In the shared /tmp, /dev/shm and TmpFS only names of the job count
    # (other users' files come and go there).
    jobtmp = os.path.join(t.tmp, "jobtmp")
    left = [os.path.join(jobtmp, n) for n in os.listdir(jobtmp)]
    new = sorted(_entries(t) - before)
    named = [p for p in new if re.search(r"zipperd-job|zipper-slurm|mmpi|ompi|pmix|vader|sm_segment|host_key",
                                         os.path.basename(p))]
    # Open MPI's names carry the host name (vader_segment.clusterA1...), which
    # any other job on the emulation shares: what a live process still maps
    # or holds, or what goes within a few seconds, is someone else's.
    deadline = time.monotonic() + 5
    while named and time.monotonic() < deadline:
        held = _held_paths()
        named = [p for p in named if os.path.exists(p) and p not in held]
        time.sleep(0.5)
    left += named
    if left:
        fail(f"{what}: files of the job left: {left}")
    hits = []
    # The secret in none of the job's files, nor in a new file of /dev/shm or a
    # node's TmpFS (new directories of /tmp may be anyone's build trees).
    shared = [p for p in new if not p.startswith("/tmp/") or re.search(r"zipper|mmpi|ompi|pmix", p)]
    for p in shared + [jobtmp]:
        if os.path.isdir(p):
            hits += grep_tree(p, secret.encode())
        elif os.path.isfile(p):
            try:
                with open(p, "rb") as fh:
                    hits += [p] if secret.encode() in fh.read() else []
            except OSError:
                pass
    if hits:
        fail(f"{what}: the job secret is in {hits}")
    print(f"ok: {what}: no process, memfd, key or file of the job left (its TMPDIR empty; "
          f"{len(new)} new entries in /tmp, /dev/shm, TmpFS, none of the job)", flush=True)


def _wait_started(t, d, n, proc, what, timeout=90):
    deadline = time.monotonic() + timeout
    while len(os.listdir(d)) < n:
        if proc.poll() is not None or time.monotonic() > deadline:
            out, err = proc.communicate(timeout=30) if proc.poll() is not None else ("", "")
            fail(f"{what}: the ranks did not start ({sorted(os.listdir(d))}): {out} {err[-2000:]}\n"
                 f"{t.emu.logs()}")
        time.sleep(0.2)


def check_ends(t):
    alpha = t.emu.alpha
    site = t.site(f'[bridges.zipper]\njob_a = "10.201.0.254:{ENDS_PORT}"\njob_b = "10.202.0.254:{ENDS_PORT}"\n')
    secret, sfile = t.secret_file()
    prog, crash, started = ends_program(t)
    jobtmp = os.path.join(t.tmp, "jobtmp")
    os.makedirs(jobtmp, mode=0o700)
    t.rank_env["TMPDIR"] = jobtmp  # zipper-run's, the zipperd step's and the ranks' temporary files
    # Two ranks in A: when one fails srun kills the other, and reports the
    # highest status of the two (143), not the failing rank's.
    het = ["salloc", "-p", "a", "-N1", "-n2", ":", "-p", "b", "-N1", "-n1", ":", "-p", "bridge", "-N1"]
    zrun = [t.zrun, "--slurm", "--slurm-site", site, "--grace", "5"]
    rcfile = os.path.join(t.tmp, "ends.rc")

    def inner(*args):
        """A shell for salloc: zipper-run with args, its status into rcfile."""
        return ["sh", "-c", f'echo $SLURM_JOB_ID > {rcfile}.job; "$@"; echo $? > {rcfile}', "sh"] + zrun + list(args)

    def rc():
        """zipper-run's status, or None when the shell did not get to write it."""
        try:
            with open(rcfile) as f:
                return int(f.read().strip())
        except (OSError, ValueError):
            return None

    def fresh():
        for p in (rcfile, rcfile + ".job"):
            if os.path.exists(p):
                os.unlink(p)
        for n in os.listdir(started):
            os.unlink(os.path.join(started, n))
        return _entries(t)

    # A normal end.
    before = fresh()
    r = t.run(het + inner("--", t.itest, "ring"), alpha, MMPI_JOB_SECRET_FILE=sfile)
    if rc() != 0 or "PASS ring" not in r.stdout:
        fail(f"normal end: zipper-run status {rc()}\n{r.stdout}\n{r.stderr[-3000:]}")
    if "did not stop" in r.stderr or "killed it" in r.stderr or "at shutdown" in r.stderr:
        fail(f"normal end: a false message about stopping zipperd:\n{r.stderr[-2000:]}")
    print("ok: normal end: status 0, no message about stopping zipperd", flush=True)
    check_nothing_left(t, "normal end", before, secret)

    # A rank that crashes (exit 3 before MPI_Init): zipper-run exits 3.
    before = fresh()
    r = t.run(het + inner("--", crash), alpha, MMPI_JOB_SECRET_FILE=sfile)
    if rc() != 3:
        fail(f"rank crash: zipper-run status {rc()}, not the rank's 3\n{r.stderr[-3000:]}\n{t.emu.logs()}")
    if "(mpirun)" in r.stderr:
        fail(f"rank crash: an srun step called mpirun:\n{r.stderr[-2000:]}")
    print(f"ok: rank crash: status 3, the rank's ({[ln for ln in r.stderr.splitlines() if 'srun step' in ln][:1]})",
          flush=True)
    check_nothing_left(t, "rank crash", before, secret)

    # --timeout while the ranks run.
    before = fresh()
    r = t.run(het + inner("--timeout", "15", "--", prog), alpha, MMPI_JOB_SECRET_FILE=sfile)
    if rc() != 124 or len(os.listdir(started)) != 3:
        fail(f"timeout: status {rc()} (expected 124), started {os.listdir(started)}\n{r.stderr[-3000:]}\n"
             f"{t.emu.logs()}")
    print("ok: --timeout: status 124", flush=True)
    check_nothing_left(t, "timeout", before, secret)

    # scancel of the job while the ranks run.
    before = fresh()
    p = subprocess.Popen(alpha.client(het + inner("--", prog)), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, env=t.env(alpha, MMPI_JOB_SECRET_FILE=sfile))
    _wait_started(t, started, 3, p, "scancel")
    with open(rcfile + ".job") as f:
        job = f.read().strip()
    t.run(["scancel", job], alpha, timeout=30)
    try:
        p.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        p.kill()
        fail("scancel: salloc did not end within 60 s")
    no_jobs_left(t, alpha, "scancel")
    print(f"ok: scancel of job {job}: salloc ended ({p.returncode})", flush=True)
    check_nothing_left(t, "scancel", before, secret)

    # zipper-run SIGKILLed while the ranks run.
    before = fresh()
    pidfile = os.path.join(t.tmp, "zrun.pid")
    killed = ["sh", "-c", f'"$@" & echo $! > {pidfile}; wait', "sh"] + zrun + ["--", prog]
    p = subprocess.Popen(alpha.client(het + killed), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env=t.env(alpha, MMPI_JOB_SECRET_FILE=sfile))
    _wait_started(t, started, 3, p, "killed zipper-run")
    with open(pidfile) as f:
        os.kill(int(f.read().strip()), 9)
    try:
        p.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        p.kill()
        fail("killed zipper-run: salloc did not end within 60 s")
    no_jobs_left(t, alpha, "killed zipper-run")
    print("ok: SIGKILL of zipper-run: the job ended", flush=True)
    check_nothing_left(t, "killed zipper-run", before, secret)


def main(argv):
    if len(argv) != 4:
        print(__doc__)
        return 2
    bin_dir, src_dir, check = argv[1], argv[2], argv[3]
    why = slurm_emulation.missing()
    if why:
        skip(why)
    r = subprocess.run([os.path.join(bin_dir, "zipper-emulate"), "check"], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True)
    if r.returncode != 0:
        skip(f"no network namespaces here: {r.stdout.strip()}")
    emu = slurm_emulation.SlurmEmulation(bin_dir)
    # ctest's TIMEOUT sends SIGTERM: stop Slurm and remove its files then too.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    try:
        try:
            emu.start()
        except RuntimeError as e:
            fail(f"Slurm did not come up: {e}")
        t = Env(bin_dir, src_dir, emu)
        {"hetjob": check_hetjob, "twoalloc": check_twoalloc, "sbatch": check_sbatch,
         "errors": check_errors, "ends": check_ends}[check](t)
    finally:
        emu.stop()
    print(f"PASS slurm {check}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
