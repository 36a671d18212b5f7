"""What `zipper-run --slurm` reads from Slurm: the allocation of each cluster.

Two forms (docs/slurm.md):
- one heterogeneous job (inside `salloc ... : ...` or an `#SBATCH hetjob`
  script): component 0 is cluster A, 1 is cluster B, and an optional
  component 2 holds bridge nodes; read from SLURM_*_HET_GROUP_n;
- two allocations, one per cluster: job ids (--slurm-job-a, default
  $SLURM_JOB_ID, and --slurm-job-b), each cluster with its own SLURM_CONF
  (--slurm-conf-a/-b), read with `scontrol show job -o`; zipper-run waits
  until both run (--slurm-wait); when one never starts or has ended it
  fails, and cancels both only when asked (--slurm-cancel-on-failure): the
  user's healthy allocation is theirs.
Node names come from `scontrol show hostnames`. Ranks are placed by srun
inside each allocation (its nodes and tasks per node).
"""

import re
import subprocess
import time
from dataclasses import dataclass, field

from .errors import Fatal, say

SCONTROL_TIMEOUT = 30


@dataclass
class Component:
    """One allocation (or hetjob component) that zipper-run launches a step in."""

    role: str  # "A", "B" or "bridge"
    job_id: str  # the job (hetjob: the leader's id)
    nodes: list  # node names, in Slurm's order
    ntasks: int  # tasks of the allocation (default rank count)
    het_group: int = -1  # hetjob component, -1 in the two-allocation form
    env: dict = field(default_factory=dict)  # environment for its srun (SLURM_CONF)
    cluster: str = ""  # Slurm cluster name, for messages
    partition: str = ""  # Slurm partition ("" when not known)

    def srun_args(self):
        """srun options that put a step into this allocation."""
        if self.het_group >= 0:
            return [f"--het-group={self.het_group}"]
        return [f"--jobid={self.job_id}"]

    def describe(self):
        where = f"job {self.job_id}" + (f" component {self.het_group}" if self.het_group >= 0 else "")
        return where + (f" on cluster {self.cluster}" if self.cluster else "")


def parse_tasks_per_node(text):
    """'2(x3),1' -> [2, 2, 2, 1] (SLURM_TASKS_PER_NODE, SLURM_JOB_CPUS_PER_NODE).
    ValueError when malformed."""
    out = []
    for part in text.split(","):
        m = re.fullmatch(r"([0-9]+)(?:\(x([0-9]+)\))?", part.strip())
        if not m:
            raise ValueError(f"bad tasks-per-node list '{text}'")
        out += [int(m.group(1))] * int(m.group(2) or 1)
    return out


def parse_job_record(text):
    """`scontrol show job -o ID` (one line per component) -> list of dicts of
    its KEY=VALUE fields (values without spaces; the rest is ignored)."""
    recs = []
    for line in text.splitlines():
        if not line.strip():
            continue
        recs.append(dict(re.findall(r"(?:^|\s)([A-Za-z][A-Za-z0-9_:/]*)=(\S*)", line)))
    return recs


def clean_env(environ, conf=None):
    """The environment for Slurm commands of another allocation: no SLURM_*
    of the enclosing job (srun would take them as its own), SLURM_CONF kept
    or replaced by `conf`."""
    env = {k: v for k, v in environ.items() if not k.startswith("SLURM_") or k == "SLURM_CONF"}
    if conf:
        env["SLURM_CONF"] = conf
    return env


def _run(argv, env, what):
    try:
        r = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           env=env, timeout=SCONTROL_TIMEOUT, check=False)
    except FileNotFoundError:
        raise Fatal(f"{argv[0]} not found: --slurm needs Slurm's client commands in PATH") from None
    except subprocess.TimeoutExpired:
        raise Fatal(f"{what}: {argv[0]} did not answer within {SCONTROL_TIMEOUT} s "
                    "(slurmctld unreachable?)") from None
    if r.returncode != 0:
        raise Fatal(f"{what}: {' '.join(argv[:3])} failed: "
                    f"{(r.stderr.strip() or r.stdout.strip()).splitlines()[-1:] or ['no output']}"[:300])
    return r.stdout


_HOSTLIST_PART = re.compile(r"([^,\[\]]*)(?:\[([0-9,\-]+)\])?([^,\[\]]*)")


def expand_hostlist(text):
    """Slurm's compact node list with at most one bracket group per name
    ('n[01-03,7],login' -> ['n01', 'n02', 'n03', 'n7', 'login']); None for
    anything else (then `scontrol show hostnames` expands it)."""
    out = []
    pos = 0
    while pos < len(text):
        m = _HOSTLIST_PART.match(text, pos)
        if not m or m.end() == pos:
            return None
        pre, ranges, post = m.groups()
        if ranges is None:
            out.append(pre + post)
        else:
            for r in ranges.split(","):
                lo, _, hi = r.partition("-")
                if not lo.isdigit() or (hi and not hi.isdigit()) or (hi and int(hi) < int(lo)):
                    return None
                for i in range(int(lo), int(hi or lo) + 1):
                    out.append(f"{pre}{i:0{len(lo)}d}{post}")
        pos = m.end()
        if pos < len(text):
            if text[pos] != ",":
                return None
            pos += 1
    return [h for h in out if h] or None


def hostnames(nodelist, env):
    """Node names of a Slurm node list ('clusterA[1-2]' -> ['clusterA1', 'clusterA2']):
    expanded here when simple (no process on the start-up path), else by
    `scontrol show hostnames`."""
    simple = expand_hostlist(nodelist)
    if simple is not None:
        return simple
    out = _run(["scontrol", "show", "hostnames", nodelist], env, f"node list '{nodelist}'")
    return [h for h in out.split() if h]


def _het_count(environ):
    n = environ.get("SLURM_HET_SIZE") or environ.get("SLURM_PACK_SIZE") or ""
    return int(n) if n.isdigit() else 0


def _ntasks(environ, sfx, nnodes):
    for var in ("SLURM_NTASKS", "SLURM_NPROCS"):
        v = environ.get(var + sfx, "")
        if v.isdigit() and int(v) > 0:
            return int(v)
    tpn = environ.get("SLURM_TASKS_PER_NODE" + sfx, "")
    if tpn:
        try:
            return sum(parse_tasks_per_node(tpn))
        except ValueError:
            pass
    return nnodes


def from_hetjob(environ):
    """Components A, B (and 'bridge' when there is a component 2) of the
    heterogeneous job zipper-run runs in. Fatal naming the cause: no
    allocation, or a job of one component."""
    job = environ.get("SLURM_JOB_ID") or environ.get("SLURM_JOBID")
    if not job:
        raise Fatal("--slurm: no Slurm allocation (SLURM_JOB_ID is not set): run inside salloc "
                    "or an sbatch script, or give --slurm-job-a/--slurm-job-b")
    n = _het_count(environ)
    if n < 2:
        raise Fatal(f"--slurm: job {job} has one component, not a heterogeneous job: allocate "
                    "cluster A and B as components 0 and 1 (salloc -p A ... : -p B ...), "
                    "or give --slurm-job-b for a second allocation")
    env = dict(environ)
    comps = {}
    for g, role in ((0, "A"), (1, "B"), (2, "bridge")):
        if g >= n:
            break
        sfx = f"_HET_GROUP_{g}"
        nodelist = environ.get("SLURM_JOB_NODELIST" + sfx) or environ.get("SLURM_NODELIST" + sfx)
        if not nodelist:
            raise Fatal(f"--slurm: job {job}: SLURM_JOB_NODELIST{sfx} is not set")
        nodes = hostnames(nodelist, env)
        comps[role] = Component(role, job, nodes, _ntasks(environ, sfx, len(nodes)), g, {},
                                environ.get("SLURM_CLUSTER_NAME", ""), environ.get("SLURM_JOB_PARTITION" + sfx, ""))
    if n > 3:
        say(f"note: job {job} has {n} components; components 3 and above are not used")
    return comps


def job_state(job_id, env):
    """(state, reason, records) of job `job_id` from `scontrol show job -o`."""
    recs = parse_job_record(_run(["scontrol", "show", "job", "-o", str(job_id)], env, f"job {job_id}"))
    if not recs:
        raise Fatal(f"--slurm: job {job_id} not found")
    return recs[0].get("JobState", "?"), recs[0].get("Reason", ""), recs


def cancel(job_id, env):
    """scancel a job zipper-run gave up on (best effort; says what it did)."""
    try:
        r = subprocess.run(["scancel", str(job_id)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True, env=env, timeout=SCONTROL_TIMEOUT, check=False)
        ok = r.returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        ok = False
    if not ok:
        say(f"warning: could not cancel job {job_id}")
    return ok


def _component_of_job(role, job_id, recs, env):
    rec = recs[0]
    nodelist = rec.get("NodeList", "")
    if not nodelist or nodelist == "(null)":
        raise Fatal(f"--slurm: job {job_id} runs but has no nodes")
    nodes = hostnames(nodelist, env)
    ntasks = rec.get("NumTasks", "")
    return Component(role, str(job_id), nodes, int(ntasks) if ntasks.isdigit() else len(nodes), -1,
                     env, rec.get("ClusterName", "") or "", rec.get("Partition", "") or "")


def from_jobs(job_a, conf_a, job_b, conf_b, wait_s, environ, sleep=time.sleep, now=time.monotonic,
              cancel_on_failure=False):
    """Components A and B of two allocations (job ids, each cluster's
    SLURM_CONF or None for the caller's). Waits until both run, at most
    wait_s seconds; if one does not, raises Fatal naming it, after
    cancelling both when cancel_on_failure."""
    envs = {"A": clean_env(environ, conf_a), "B": clean_env(environ, conf_b)}
    jobs = {"A": job_a, "B": job_b}
    deadline = now() + wait_s
    announced = False
    while True:
        states = {c: job_state(jobs[c], envs[c]) for c in ("A", "B")}
        if all(s[0] == "RUNNING" for s in states.values()):
            return {c: _component_of_job(c, jobs[c], states[c][2], envs[c]) for c in ("A", "B")}
        dead = [c for c, s in states.items() if s[0] not in ("RUNNING", "PENDING", "CONFIGURING", "RESIZING")]
        late = now() >= deadline
        if dead or late:
            c = dead[0] if dead else next(c for c, s in states.items() if s[0] != "RUNNING")
            state, reason = states[c][0], states[c][1]
            why = (f"ended ({state})" if dead else
                   f"did not start within {wait_s} s ({state}, reason {reason or 'none'})")
            if cancel_on_failure:
                for other in ("A", "B"):
                    cancel(jobs[other], envs[other])
                then = f"cancelled jobs {jobs['A']} and {jobs['B']}"
            else:
                then = "no job cancelled (--slurm-cancel-on-failure would cancel both)"
            raise Fatal(f"--slurm: the allocation of cluster {c} (job {jobs[c]}) {why}; {then}")
        if not announced:
            say(f"waiting up to {wait_s} s for both allocations to run "
                f"(A: job {jobs['A']} {states['A'][0]}, B: job {jobs['B']} {states['B'][0]})")
            announced = True
        sleep(0.5)
