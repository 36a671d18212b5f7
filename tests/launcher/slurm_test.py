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
          unreachable bridge node, a second allocation that never starts
Exit 77: skipped (with the reason), 0: pass, 1: fail.
"""

import os
import re
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
        fail(f"salloc --no-shell {args}: {r.stderr}")
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
    # The second allocation never starts (held): both are cancelled.
    ja = salloc_no_shell(t, alpha, "-p", "a", "-N1")
    r = t.run(["sbatch", "--parsable", "--hold", "-p", "b", "-N1", "--wrap", "sleep 1"], beta, timeout=30)
    jb = r.stdout.strip().split(";")[0]
    if not jb.isdigit():
        fail(f"sbatch --hold: {r.stdout} {r.stderr}")
    r = t.run([t.zrun, "--slurm", "--slurm-wait", "3", "--slurm-job-a", ja, "--slurm-conf-a", alpha.conf,
               "--slurm-job-b", jb, "--slurm-conf-b", beta.conf, "--", t.itest, "ring"], alpha)
    one_error_line(r, rf"cluster B \(job {jb}\) did not start within 3 s", "second allocation never starts")
    time.sleep(0.5)
    sa, sb = job_state(t, alpha, ja), job_state(t, beta, jb)
    if sa not in ("CANCELLED", "COMPLETED", "GONE") or sb not in ("CANCELLED", "GONE"):
        fail(f"after the second allocation never started: job {ja} {sa}, job {jb} {sb} (not cancelled)")
    print(f"ok: both allocations cancelled (job {ja}: {sa}, job {jb}: {sb})", flush=True)


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
    try:
        try:
            emu.start()
        except RuntimeError as e:
            fail(f"Slurm did not come up: {e}")
        t = Env(bin_dir, src_dir, emu)
        {"hetjob": check_hetjob, "twoalloc": check_twoalloc, "sbatch": check_sbatch,
         "errors": check_errors}[check](t)
    finally:
        emu.stop()
    print(f"PASS slurm {check}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
