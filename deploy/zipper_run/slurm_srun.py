"""The srun steps of a --slurm run: one per cluster (the ranks, each through
zipper-slurm-rank, which reads the job secret from standard input) and the
per-job zipperd step on hetjob component 2 (slurm_bridge.py)."""

import os
import re
import select
import signal
import subprocess
import sys
import tempfile
import threading
import time

from . import addresses, placement_options, zipperd
from .errors import Fatal
from .processes import SIGNALS, die_with_parent, status
from .slurm_secrets import SECRET_VARS

HERE = os.path.dirname(os.path.abspath(__file__))
BRIDGE_WRAPPER = os.path.join(HERE, "slurm_bridge.py")
OWN_VARS = set(SECRET_VARS) | {"MMPI_FORWARDER", "MMPI_FORWARDER_KEYS", "MMPI_JOB_ID", "MMPI_GROUP",
                               "MMPI_NP_LOW", "MMPI_NP_HIGH", "MMPI_TRANSPARENT", "MMPI_PROFILE",
                               "MMPI_RANK_MAP"}
PER_JOB_MEMORY = "64MiB"  # per-job zipperd's --max-memory unless --zipperd-arg sets it


def rank_env(o, environ, cluster, p, job_id, x, y, preload):
    """The environment of cluster `cluster`'s srun (inherited by its ranks):
    the launch contract minus the secret."""
    low = cluster == "A"
    env = {k: v for k, v in environ.items() if k not in OWN_VARS}
    env["MMPI_FORWARDER"] = addresses.join(p.fwd_a if low else p.fwd_b)
    if p.keys:
        env["MMPI_FORWARDER_KEYS"] = ",".join(p.keys)
    elif environ.get("MMPI_FORWARDER_KEYS"):
        env["MMPI_FORWARDER_KEYS"] = environ["MMPI_FORWARDER_KEYS"]
    env.update({"MMPI_JOB_ID": job_id, "MMPI_GROUP": "low" if low else "high",
                "MMPI_NP_LOW": str(x), "MMPI_NP_HIGH": str(y)})
    env.update(placement_options.rank_env(o))
    for kv in (preload or []) + list(o.env):
        k, _, v = kv.partition("=")
        env[k] = v if "=" in kv else environ.get(k, "")
    return env


# srun's report of a task that failed: "srun: error: NODE: task 3: Exited
# with exit code 2", or the signal's description ("task 0: Segmentation
# fault (core dumped)").
_TASK_END = re.compile(r"srun: error: [^:]+: tasks? [0-9,\-]+: (.+)")
_SIGNAL_NAMES = {signal.strsignal(s): int(s) for s in signal.Signals if signal.strsignal(s)}


def task_status(line):
    """The exit status (128+N for signal N) that an srun error line reports
    for a task, or None when the line is no such report."""
    m = _TASK_END.search(line)
    if not m:
        return None
    what = m.group(1).strip()
    code = re.fullmatch(r"Exited with exit code ([0-9]+)", what)
    if code:
        return int(code.group(1))
    sig = _SIGNAL_NAMES.get(what.removesuffix(" (core dumped)"))
    return 128 + sig if sig else None


class StepErrors:
    """Copies an srun step's standard error to ours as it comes and keeps
    the first failing task's status that srun reports there."""

    def __init__(self, pipe):
        self.first = None
        self._fd = pipe.fileno()
        self._pipe = pipe
        self._thread = threading.Thread(target=self._copy, daemon=True)
        self._thread.start()

    def _copy(self):
        tail = b""
        while True:
            try:
                chunk = os.read(self._fd, 65536)
            except OSError:
                break
            if not chunk:
                break
            try:
                os.write(2, chunk)
            except OSError:
                pass
            if self.first is None:
                lines = (tail + chunk).split(b"\n")
                tail = lines.pop()[-4096:]
                for line in lines:
                    rc = task_status(line.decode(errors="replace")) if b"srun: error:" in line else None
                    if rc:
                        self.first = rc
                        break
        self._pipe.close()

    def status(self, timeout=2.0):
        """The first failing task's status once srun ended (its last words read), or None."""
        self._thread.join(timeout)
        return self.first


def srun_cmd(o, comp, np, mpi, rank_wrapper):
    """argv of the srun step of one cluster: np ranks in `comp`, each the rank
    wrapper that reads the secret from stdin and execs the program."""
    cmd = ["srun"] + comp.srun_args() + [f"--mpi={mpi}", "-n", str(np), "-N", str(min(np, len(comp.nodes))),
                                         "--input=all", "--kill-on-bad-exit=1"]
    if o.tag_output:
        cmd.append("--label")
    extra = o.srun_args_a if comp.role == "A" else o.srun_args_b
    return cmd + o.srun_args + extra + [rank_wrapper] + o.program


def bridge_cmd(o, comp, p, zbin, python=sys.executable):
    """argv of the per-job zipperd step: one slurm_bridge.py per node of component 2."""
    entries = [f"{n},{a.listen},{b.listen}" for n, a, b in zip(p.nodes, p.fwd_a, p.fwd_b)]
    # One job's zipperd: smaller pools than a shared service's 256 MiB, which
    # zipperd faults in before it listens (start-up), unless the user says.
    own = [] if any(a.startswith("--max-memory") or a.startswith("--pools") or a == "--config"
                    for a in o.zipperd_args) else ["--max-memory", PER_JOB_MEMORY]
    return (["srun"] + comp.srun_args() + ["-N", str(len(comp.nodes)), "-n", str(len(comp.nodes)),
                                           "--ntasks-per-node=1", "--input=all", "--kill-on-bad-exit=1",
                                           python, "-S", "-E", BRIDGE_WRAPPER, zbin] + entries + ["--"] + own
            + o.zipperd_args)


def start_bridges(o, r, p, zbin, keys):
    """Start the per-job zipperd step (each node's secret key on its stdin);
    returns the Popen. Its READY lines are awaited by wait_bridges()."""
    comp = p.per_job
    if o.zipperd_log:
        log = o.zipperd_log
        logf = open(log, "ab")
    else:
        # A file without a name (O_TMPFILE, else unlinked at once): nothing
        # of the job stays behind even when zipper-run is SIGKILLed; it is
        # read back through /proc/self/fd while zipper-run runs.
        logf = tempfile.TemporaryFile(dir=os.environ.get("TMPDIR") or "/tmp")
        r.keep.append(logf)
        log = f"/proc/self/fd/{logf.fileno()}"
    brs = []
    for i, (a, b) in enumerate(zip(p.fwd_a, p.fwd_b), 1):
        br = zipperd.Bridge(i, a, b)
        br.log, br.log_is_default, br.started, br.step = log, not o.zipperd_log, True, True
        brs.append(br)
    r.bridges = brs
    env = {k: v for k, v in (comp.env or os.environ).items() if k not in SECRET_VARS}
    old = signal.pthread_sigmask(signal.SIG_BLOCK, SIGNALS)
    try:
        proc = subprocess.Popen(bridge_cmd(o, comp, p, zbin), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=logf, env=env, start_new_session=True, preexec_fn=die_with_parent())
        brs[0].proc = proc
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)
        if o.zipperd_log:
            logf.close()
    # The keys, then END; standard input stays open while the job runs: its
    # end is what stops the per-job zipperd (zipperd.stop, slurm_bridge.py).
    try:
        proc.stdin.write("".join(f"{n} {sk}\n" for n, (sk, _) in zip(p.nodes, keys)).encode() + b"END\n")
        proc.stdin.flush()
    except BrokenPipeError:
        pass
    return proc


def wait_bridges(o, p, proc, log):
    """Until every bridge node's zipperd reported READY; Fatal naming the node
    that failed or did not report within --zipperd-wait (+10 s for srun)."""
    ready, buf = set(), b""
    limit = int(o.zipperd_wait) + 10
    deadline = time.monotonic() + limit
    fd = proc.stdout.fileno()
    while len(ready) < len(p.nodes):
        left = deadline - time.monotonic()
        if left <= 0:
            missing = [n for n in p.nodes if n not in ready]
            raise Fatal(f"bridge node {missing[0]} unreachable: its zipperd did not report ready "
                        f"within {limit} s (log: {log})")
        if not select.select([fd], [], [], min(left, 0.5))[0]:
            continue
        chunk = os.read(fd, 4096)
        if not chunk:
            proc.wait()
            missing = [n for n in p.nodes if n not in ready]
            raise Fatal(f"bridge node {missing[0]} unreachable: the zipperd step ended "
                        f"(srun status {status(proc.returncode)}) before it was ready")
        buf += chunk
        while b"\n" in buf:
            line, buf = buf.split(b"\n", 1)
            f = line.decode(errors="replace").split(None, 2)
            if len(f) >= 2 and f[0] == "READY" and f[1] in p.nodes:
                ready.add(f[1])
            elif len(f) >= 2 and f[0] == "FAILED":
                raise Fatal(f"bridge node {f[1]}: per-job zipperd failed: {f[2] if len(f) > 2 else ''}")
