"""`zipper-run --slurm`: one zipper job inside Slurm allocations (docs/slurm.md).

Cluster A's and cluster B's ranks are two srun steps, one in each
allocation (hetjob components 0 and 1, or two jobs), each its own
MPI_COMM_WORLD joined by libmmpi into one of x+y ranks, as with
--hostfile-a/-b. The forwarders are either a per-job zipperd on every node
of hetjob component 2 (a third step, slurm_bridge.py) whose fresh host keys
the ranks pin, or the site's zipperd services named with their host keys in
the site configuration (slurm_site.py).

The job secret reaches the ranks through srun's standard input only
(zipper-slurm-rank puts it into a memfd): never in an environment variable, an
argument or a file. zipperd never gets it.
"""

import os
import secrets
import subprocess

from . import addresses, site_keys, slurm_allocations, slurm_site, supervise
from .errors import PROG, Fatal
from .locate import find_bin
from .processes import die_with_parent
from .shell_quote import quote_cmd
from .slurm_plan import check_components, check_reachable, plan_bridges
from .slurm_secrets import job_secret, make_keys, refuse_exported_secret
from .slurm_srun import StepErrors, bridge_cmd, rank_env, srun_cmd, start_bridges, wait_bridges


def _components(o):
    if o.slurm_job_b:
        job_a = o.slurm_job_a or os.environ.get("SLURM_JOB_ID", "")
        if not job_a:
            raise Fatal("--slurm: no allocation for cluster A: not inside salloc/sbatch "
                        "(SLURM_JOB_ID unset) and no --slurm-job-a")
        return slurm_allocations.from_jobs(job_a, o.slurm_conf_a or None, o.slurm_job_b, o.slurm_conf_b or None,
                               int(o.slurm_wait), os.environ, cancel_on_failure=o.slurm_cancel_on_failure)
    return slurm_allocations.from_hetjob(os.environ)


def _dry_run(o, comps, p, cmds, bcmd):
    print(f"# {PROG} --slurm dry run: " + ", ".join(f"{c}: {comps[c].describe()} nodes "
                                                   f"{','.join(comps[c].nodes)}" for c in comps))
    print(f"# forwarder: A={addresses.join(p.fwd_a)} B={addresses.join(p.fwd_b)}"
          + (" (per-job zipperd, keys pinned when they start)" if p.per_job else
             (" (site services, keys pinned)" if p.keys else " (keys from known_forwarders)")))
    if bcmd:
        print(quote_cmd(bcmd) + " </dev/null &")
    for c in ("A", "B"):
        print(f"# cluster {c}: the job secret on srun's standard input")
        print(quote_cmd(cmds[c]) + " <<<SECRET &")


def run(r, transparent_env=None):
    """The --slurm run of main's Run `r`; returns the exit status."""
    o = r.o
    refuse_exported_secret(os.environ)
    comps = _components(o)
    x = int(o.np_low) if o.np_low else comps["A"].ntasks
    y = int(o.np_high) if o.np_high else comps["B"].ntasks
    site = slurm_site.load(o.slurm_site or slurm_site.default_path(r.self_dir), bool(o.slurm_site))
    site_keys.warn_if_accept(o)
    check_components(comps, site, x, y)
    p = plan_bridges(o, comps, site, r.self_dir)
    job_id = o.job_id or os.environ.get("MMPI_JOB_ID") or str(secrets.randbits(64))
    secret = job_secret()
    preload = transparent_env(o, r.self_dir) if (o.transparent and transparent_env) else None
    mpi = o.slurm_mpi or site.mpi or "pmix"  # Debian's Open MPI 4.1 takes PMIx only (no s1/s2)
    # Installed, the wrapper is an internal program in libexec/zipper (no man
    # page, not a user command); in the build tree it sits beside zipper-run.
    libexec = os.path.normpath(os.path.join(r.self_dir, "..", "libexec", "zipper"))
    wrapper = find_bin("zipper-slurm-rank", "", "ZIPPER_SLURM_RANK", r.self_dir) or find_bin(
        "zipper-slurm-rank", "", "ZIPPER_SLURM_RANK", libexec)
    if not wrapper:
        raise Fatal("zipper-slurm-rank not found next to zipper-run, in PREFIX/libexec/zipper or in PATH "
                    "(set $ZIPPER_SLURM_RANK)")
    cmds = {c: srun_cmd(o, comps[c], x if c == "A" else y, mpi, wrapper) for c in ("A", "B")}
    zbin = None
    if p.per_job:
        zbin = find_bin("zipperd", o.zipperd, "ZIPPERD", r.self_dir) or "zipperd"
    if o.dry_run:
        _dry_run(o, comps, p, cmds, bridge_cmd(o, p.per_job, p, zbin) if p.per_job else None)
        return 0
    # Everything starts at once: the ranks retry their connection until zipperd
    # listens (MMPI_CONNECT_TIMEOUT), and a bridge node that fails ends the
    # run with its own one-line error (cleanup stops the steps).
    bproc = None
    if p.per_job:
        keys = make_keys(o, r, p, zbin)
        p.keys = [pk for _, pk in keys]
        bproc = start_bridges(o, r, p, zbin, keys)
    line = (secret + "\n").encode()
    errors = {}
    for c in ("A", "B"):
        env = rank_env(o, comps[c].env or os.environ, c, p, job_id, x, y, preload)
        # srun ends its step when zipper-run ends, however (die_with_parent).
        proc = subprocess.Popen(cmds[c], stdin=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                                start_new_session=True, preexec_fn=die_with_parent())
        errors[c] = StepErrors(proc.stderr)
        r.procs[c] = proc
        try:
            proc.stdin.write(line)
            proc.stdin.close()
        except BrokenPipeError:
            pass  # srun ended at once: supervise reports its status
    if bproc:
        wait_bridges(o, p, bproc, r.bridges[0].log)
    else:
        check_reachable(p)  # after the launch: its round trips overlap the ranks' start
    r.sigs.running = True
    try:
        return supervise.supervise(o, r.procs, r.bridges, r.sigs, lambda c: errors[c].status())
    finally:
        # The last of an ended step's standard error (its ranks' too) is
        # copied out before zipper-run exits.
        for c, e in errors.items():
            if r.procs[c].poll() is not None:
                e.status(5.0)
