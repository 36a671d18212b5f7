"""Bridge nodes as a scheduled resource under --slurm: `--bridges N` and the
exclusivity of a hetjob's component 2.

A per-job zipperd listens at its node's fixed job_a/job_b ports (the site
file), so a bridge node can serve one job at a time. Two jobs there would
collide on the port; instead each bridge node is exclusive to its job:
- `--bridges N` asks for N nodes of the site's `bridge_partition` as a job of
  their own (`srun --exclusive`, the per-job zipperd step is that job), so
  Slurm queues whoever comes second. Slurm cannot add a component to a
  running heterogeneous job, hence a job of its own; it ends with its step.
  zipper-run picks idle nodes of the partition with `sinfo` and names them
  (`--nodelist`), because the ranks need their addresses before the step
  runs; `--immediate` makes srun give up rather than queue behind
  another job while the ranks wait for zipperd.
- a component 2 written by the user must be exclusive too (`--exclusive`, or
  a partition with OverSubscribe=EXCLUSIVE): checked in `scontrol show job`
  before any rank starts.
"""

import subprocess

from .errors import Fatal
from .slurm_allocations import SCONTROL_TIMEOUT, Component, clean_env, parse_job_record

# sinfo's node states that take a job now (with a suffix such as '*' for
# not responding, which is then left out).
_FREE = {"idle"}


def _run(argv, env):
    try:
        r = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                           timeout=SCONTROL_TIMEOUT, check=False)
    except FileNotFoundError:
        raise Fatal(f"{argv[0]} not found: --slurm needs Slurm's client commands in PATH") from None
    except subprocess.TimeoutExpired:
        raise Fatal(f"--slurm: {argv[0]} did not answer within {SCONTROL_TIMEOUT} s (slurmctld unreachable?)") from None
    return r


def bridge_job(n, site, environ, conf=None, wait_s=30):
    """Component of n bridge nodes from the site's bridge partition, as a job
    of its own (Component.alloc_args). Fatal in zipper's words when the site
    names no partition, the partition is not there, holds fewer than n
    nodes with job_a/job_b, or fewer than n of them are idle."""
    part = site.bridge_partition
    if not part:
        raise Fatal(f"--slurm --bridges {n}: the site configuration ({site.path}) names no bridge_partition "
                    "to ask for bridge nodes from")
    env = clean_env(environ, conf)
    r = _run(["sinfo", "-h", "-N", "-p", part, "-o", "%N %t"], env)
    rows = [ln.split() for ln in r.stdout.splitlines() if len(ln.split()) == 2]
    if r.returncode != 0 or not rows:
        why = (r.stderr.strip().splitlines() or ["no nodes"])[-1] if r.returncode else "no nodes"
        raise Fatal(f"--slurm --bridges {n}: the bridge partition '{part}' that the site configuration "
                    f"({site.path}) names is not there ({why}; sinfo -p {part})")
    usable = [(node, state) for node, state in rows if site.bridge(node) and site.bridge(node).job_a]
    if len({node for node, _ in usable}) < n:
        raise Fatal(f"--slurm --bridges {n}: partition '{part}' has {len({x for x, _ in usable})} bridge "
                    f"node(s) with job_a/job_b in the site configuration ({site.path}); ask for fewer")
    idle = []
    for node, state in usable:
        if state in _FREE and node not in idle:
            idle.append(node)
    if len(idle) < n:
        busy = ", ".join(f"{node} {state}" for node, state in usable if node not in idle)
        raise Fatal(f"--slurm --bridges {n}: {len(idle)} of partition '{part}''s bridge nodes are idle "
                    f"({busy}); each serves one job at a time: try again later")
    nodes = idle[:n]
    args = [f"--partition={part}", f"--nodelist={','.join(nodes)}", "--exclusive", f"--immediate={wait_s}",
            "--job-name=zipper-bridges"]
    return Component("bridge", "", nodes, n, -1, env, "", part, alloc_args=args)


def check_exclusive(comp, environ):
    """Fatal unless hetjob component `comp` (the bridge nodes) holds its
    nodes exclusively (OverSubscribe=NO in `scontrol show job`)."""
    r = _run(["scontrol", "show", "job", "-o", comp.job_id], environ)
    for rec in parse_job_record(r.stdout):
        if rec.get("HetJobOffset") == str(comp.het_group):
            if rec.get("OverSubscribe", "") == "NO":
                return
            raise Fatal(f"--slurm: component {comp.het_group} of job {comp.job_id} (bridge nodes "
                        f"{','.join(comp.nodes)}) is not exclusive (OverSubscribe={rec.get('OverSubscribe', '?')}): "
                        "a per-job zipperd listens at the node's fixed job_a/job_b ports, so one job per bridge "
                        "node: allocate it with --exclusive, make the bridge partition OverSubscribe=EXCLUSIVE, "
                        "or use --bridges N")
    raise Fatal(f"--slurm: job {comp.job_id} has no component {comp.het_group} in scontrol show job")
