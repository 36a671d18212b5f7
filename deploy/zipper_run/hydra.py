"""The launch command of one site whose MPI is MPICH (zipper-run --mpi mpich):
MPICH's process manager Hydra (mpiexec.hydra, Debian's mpiexec.mpich), the
counterpart of mpirun.build for Open MPI.

Hydra passes the environment with -genv NAME VALUE and -genvlist NAMES (the
caller's values): the job secret travels as a name only, never as a value on
the command line (ps), as with mpirun -x NAME.
"""

import os
import shutil

from . import addresses, placement_options
from .errors import UsageError

# The MPICH launchers looked for, in order, when --mpirun is not given.
LAUNCHERS = ("mpiexec.mpich", "mpiexec.hydra", "mpiexec")


def default_launcher():
    """$MPIRUN, else the first of LAUNCHERS on PATH, else mpiexec.mpich
    (main.py then says it is not found)."""
    env = os.environ.get("MPIRUN")
    if env:
        return env
    for name in LAUNCHERS:
        if shutil.which(name):
            return name
    return LAUNCHERS[0]


def validate(o):
    """Refuses what Hydra cannot do here yet (one line each)."""
    if o.mode == "emulated":
        raise UsageError("--mpi mpich: --emulated is not supported yet (Hydra would need "
                         "zipper-netns-rsh as its launcher); use --local or --hostfile-a/-b")
    if o.transparent and o.mode not in ("local", "cluster"):
        raise UsageError("--mpi mpich --transparent needs --local or --hostfile-a/-b")


def build(o, site, fwd, secret_var, pass_env, keys, preload):
    """argv for site `site` (see mpirun.build): mpiexec -n NP with the rank
    environment as -genv, the program last. Returns (argv, head): head is
    always "" (no emulated nodes)."""
    cluster, np = o.site_list[site][0], int(o.site_list[site][1])
    low = site == 0
    extra = (o.mpirun_args_a, o.mpirun_args_b, [])[min(site, 2)]
    m = [o.mpirun, "-n", str(np)]
    if o.mode == "cluster":
        m += ["-f", o.hostfile_a if low else o.hostfile_b]

    genv = []
    if not o.standalone:
        genv.append(("MMPI_FORWARDER", addresses.join(fwd)))
        if keys:
            genv.append(("MMPI_FORWARDER_KEYS", ",".join(keys)))
    if o.site_table:
        genv += [("MMPI_SITES", ",".join(n for _, n in o.site_list)), ("MMPI_SITE", str(site))]
    else:
        genv += [("MMPI_GROUP", "low" if low else "high"), ("MMPI_NP_LOW", o.np_low),
                 ("MMPI_NP_HIGH", o.np_high)]
    genv += list(placement_options.rank_env(o).items())
    for kv in preload or []:
        genv.append(tuple(kv.split("=", 1)))
    for v in o.env:
        genv.append(tuple(v.split("=", 1)) if "=" in v else (v, os.environ[v]))
    for name, value in genv:
        m += ["-genv", name, value]
    # By name: Hydra copies the caller's values (the secret never on argv).
    names = ["MMPI_JOB_ID", secret_var] + [v for v in pass_env
                                           if not (keys and v == "MMPI_FORWARDER_KEYS")]
    m += ["-genvlist", ",".join(names)]
    if o.tag_output:
        m.append("-prepend-rank")
    m += o.mpirun_args + extra + o.program
    return ["env"] + m, ""
