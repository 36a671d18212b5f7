"""The mpirun commands of one run: one per site, cluster A (low group, site 0)
and cluster B (high group, site 1) with -x/-y, or each site of --sites.

The job id and the secret travel by environment: `mpirun -x NAME` exports
zipper-run's own value and never shows it on a command line (ps).
"""

import os
import re

from . import addresses, emulation_topology, hydra, placement_options
from .cpus import ncpus

SITE_ENV = ("OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1")
# Set by zipper-run itself; the caller's values are not passed on.
OWN_VARS = {"MMPI_FORWARDER", "MMPI_JOB_ID", "MMPI_GROUP", "MMPI_NP_LOW", "MMPI_NP_HIGH",
            "MMPI_SITES", "MMPI_SITE", "MMPI_JOB_SECRET", "MMPI_JOB_SECRET_FILE", "MMPI_TRANSPARENT",
            "MMPI_PROFILE", "MMPI_RANK_MAP"}


def passed_env(environ):
    """MMPI_* variables of the caller that every rank gets (sorted)."""
    return sorted(v for v in environ if v.startswith("MMPI_") and v not in OWN_VARS)


def _user_has(o, pattern):
    rx = re.compile(pattern)
    return any(rx.search(a) for a in o.mpirun_args + o.mpirun_args_a + o.mpirun_args_b)


def session_dir(o, site):
    """The name of site `site`'s Open MPI session directory base in a local
    run's private directory (ompi-a, ompi-b; --sites: ompi-0-NAME, ...)."""
    name = o.site_list[site][0]
    return f"ompi-{site}-{name.lower()}" if o.site_table else f"ompi-{name.lower()}"


def hostfile_text(cluster, nodes, np):
    slots = (np + nodes - 1) // nodes
    return "".join(f"cluster{cluster}{i} slots={slots}\n" for i in range(1, nodes + 1))


def build(o, site, fwd, secret_var, pass_env, work, rsh_bin, preload, keys=None):
    """argv for site `site` (0-based in o.site_list; with -x/-y 0 is cluster
    A, 1 cluster B). `fwd` is the list of that site's Addresses
    (MMPI_FORWARDER), `preload` the NAME=VALUE settings of --transparent or None,
    `keys` the host keys of the bridge nodes in `fwd`'s order (MMPI_FORWARDER_KEYS:
    64 hex digits each) or None to leave pinning to the site's known_forwarders."""
    if o.mpi == "mpich":
        return hydra.build(o, site, fwd, secret_var, pass_env, keys, preload)
    cluster, np = o.site_list[site][0], int(o.site_list[site][1])
    low = site == 0
    extra = (o.mpirun_args_a, o.mpirun_args_b, [])[min(site, 2)]
    env = list(SITE_ENV)
    m = [o.mpirun, "-np", str(np), "--oversubscribe"]
    x = []
    if not o.standalone:
        x += ["-x", f"MMPI_FORWARDER={addresses.join(fwd)}"]
        if keys:
            x += ["-x", f"MMPI_FORWARDER_KEYS={','.join(keys)}"]
    x += ["-x", "MMPI_JOB_ID", "-x", secret_var]
    if o.site_table:
        x += ["-x", f"MMPI_SITES={','.join(n for _, n in o.site_list)}", "-x", f"MMPI_SITE={site}"]
    else:  # the two-site shorthand
        x += ["-x", f"MMPI_GROUP={'low' if low else 'high'}", "-x", f"MMPI_NP_LOW={o.np_low}",
              "-x", f"MMPI_NP_HIGH={o.np_high}"]
    for name, value in placement_options.rank_env(o).items():
        x += ["-x", f"{name}={value}"]
    if preload:
        for kv in preload:
            x += ["-x", kv]
    for v in pass_env:
        if keys and v == "MMPI_FORWARDER_KEYS":
            continue  # the keys of the zipperd this run started win
        x += ["-x", v]
    for v in o.env:
        x += ["-x", v if "=" in v else f"{v}={os.environ[v]}"]

    head = ""
    if o.mode == "emulated":
        nodes = int(o.nodes_a if low else o.nodes_b)
        head = f"cluster{cluster}1"
        hf = os.path.join(work, f"hostfile-{cluster.lower()}")
        m += ["--hostfile", hf, "--mca", "plm_rsh_agent", rsh_bin, "--mca", "plm_rsh_no_tree_spawn", "1",
              "--mca", "btl", "tcp,vader,self", "--mca", "btl_tcp_if_include", "eth0",
              "--mca", "oob_tcp_if_include", "eth0"]
        if not _user_has(o, r"^-?-(bind-to|bind_to|bind-to-core|bind-to-socket)"):
            m += ["--bind-to", "none"]
        if not _user_has(o, r"^-?-(map-by|npernode|npersocket|ppr|bynode|byslot|rankfile|rf)$"):
            m += ["--map-by", "node"]
        if o.no_pin:
            env.append("ZIPPER_RSH_NO_PIN=1")
        # For zipper-netns-rsh: the node cgroups as seen from outside the namespaces.
        env.append(f"ZIPPER_RSH_ROOT=/proc/{os.getpid()}/root")
    elif o.mode == "local":
        if not _user_has(o, r"^-?-(bind-to|bind_to)"):
            m += ["--bind-to", "none"]
        # Both mpiruns run on this host at once: each gets its own session
        # directory base, or their mkdir of /tmp/ompi.HOST.UID races and one
        # fails with "File exists" (orte_session_dir).
        m += ["--mca", "orte_tmpdir_base", os.path.join(work, session_dir(o, site))]
    else:
        m += ["--hostfile", o.hostfile_a if low else o.hostfile_b]
    # All emulated/local ranks share this host's cores: waiting ranks that
    # spin would starve the others (a 4-rank barrier: 10 ms instead of 0.2-2).
    if (o.mode != "cluster" and o.total_ranks > ncpus()
            and not _user_has(o, r"^mpi_yield_when_idle$")):
        m += ["--mca", "mpi_yield_when_idle", "1"]
    if o.tag_output:
        m.append("--tag-output")
    m += x + o.mpirun_args + extra + o.program

    cmd = []
    if o.mode == "emulated":
        cmd = ["ip", "netns", "exec", head, "unshare", "--uts"]
        cpu = None if o.no_pin else emulation_topology.cpu_for_host(head)
        if cpu is not None:
            cmd += ["taskset", "-c", str(cpu)]
        cmd += ["sh", "-c", 'hostname "$0" && exec "$@"', head]
    return cmd + ["env"] + env + m, head
