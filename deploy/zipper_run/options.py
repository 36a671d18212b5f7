"""zipper-run's command line: parsing, validation and --help.

Parsing mirrors the historical bash launcher: `--opt value` and `--opt=value`,
`-xN`/`-yN`, option values may start with '-', the first word that is not an
option (or everything after `--`) is the program.
"""

import os
import re
from dataclasses import dataclass, field

from . import addresses, hydra, placement_options
from . import slurm_options
from .errors import PROG, Fatal, UsageError
from .integers import is_posint, is_u64, is_uint
from .processes import KILL_AFTER

DEFAULT_PORT = 7470
MAX_ZIPPERS = 64
MAX_SITES = 64

USAGE = f"""\
Usage: {PROG} -x NP_LOW -y NP_HIGH [options] -- PROGRAM [ARGS...]
       {PROG} --local --sites NAME:N,NAME:N[,...] [options] -- PROGRAM [ARGS...]

Run PROGRAM (linked with libmmpi) as one zipper job: 'mpirun -np NP_LOW' in
cluster A (low group, virtual ranks 0..NP_LOW-1) and 'mpirun -np NP_HIGH' in
cluster B (high group), both started concurrently, talking through zipperd.

Ranks:
  -x, --np-low N          ranks in cluster A / low group (required, unless
                          --rank-map gives it)
  -y, --np-high N         ranks in cluster B / high group (required, unless
                          --rank-map gives it)
  --sites NAME:N,...      instead of -x/-y: 2 to {MAX_SITES} sites, N ranks each, in
                          world-rank order (e.g. A:4,B:4,C:2; -x X -y Y is the
                          two-site shorthand A:X,B:Y). --local only so far: one
                          mpirun per site and one zipperd per bridge node with a
                          leg per site (docs/sites.md)

Placement (docs/placement.md):
  --profile FILE          every rank counts the bytes and messages it sends to
                          each other rank (point-to-point, collectives, one-sided,
                          MPI-IO coordination); at MPI_Finalize MPI_COMM_WORLD
                          rank 0 writes the job's communication matrix to FILE
                          (zipper-comm-matrix JSON, for zipper-place and
                          zipper-place-view). Sets MMPI_PROFILE on every rank.
                          In --local/--emulated mode zipper-run checks after the
                          run that FILE was written (exit 1 if not).
  --rank-map FILE         run each MPI_COMM_WORLD rank in the cluster a
                          zipper-place map (zipper-rank-map JSON, sites A and B)
                          names; the program sees the same MPI_COMM_WORLD ranks
                          as without it. -x/-y default to the map's counts.
                          Sets MMPI_RANK_MAP on every rank.
  Neither goes with --standalone (each cluster would be its own world).

Modes (default --emulated):
  --emulated              two emulated clusters in network namespaces (needs root).
                          Uses the zipper-emulate topology; creates it with
                          'zipper-emulate up --nodes-a N --nodes-b M --zippers K'
                          only if it is missing. Forwarder: A=10.201.0.254:PORT,
                          B=10.202.0.254:PORT (bridge node i: .255-i).
    --nodes-a N           emulated nodes for cluster A (default 1); ranks are
    --nodes-b M           spread round-robin over them (default 1)
    --no-pin              do not pin emulated nodes to CPUs with taskset
  --local                 everything on this host, no namespaces (no root needed);
                          zipperd listens on 127.0.0.1:PORT for both clusters
                          (--sites: bridge node i's leg for site s on
                          127.0.0.1:PORT+(i-1)*SITES+s).
  --zippers K             bridge nodes (zipperd instances) in --emulated and
                          --local modes (default 1). Emulated: one per zipper
                          namespace; local: ports PORT..PORT+K-1 on loopback.
  --hostfile-a FILE --hostfile-b FILE --forwarder-a ADDRS --forwarder-b ADDRS
                          real clusters: mpirun --hostfile per cluster; zipperd is
                          assumed to be serving already (e.g. a systemd service on
                          the bridge nodes) unless --zipper-host is given.
    --zipper-host HOST    start zipperd on HOST over ssh for this run (one bridge
                          node: ADDRS must then be single addresses)
  ADDR is [tcp:|verbs:]HOST:PORT; verbs: selects the InfiniBand/RoCE link
  (docs/verbs.md). ADDRS is one ADDR or a comma-separated list, index i on
  each side being bridge node i. With --local, --forwarder-a/--forwarder-b
  replace the 127.0.0.1 address (e.g. verbs addresses of two local RDMA devices).
    --ssh CMD             ssh command for --zipper-host (default $ZIPPER_SSH or ssh)

Slurm (docs/slurm.md):
  --slurm                 inside a Slurm allocation: ranks started with srun, nodes
                          and tasks from Slurm; -x/-y default to each allocation's
                          task count. One heterogeneous job (component 0 = cluster
                          A, 1 = cluster B, optional 2 = bridge nodes with a
                          per-job zipperd), or two allocations:
    --slurm-job-b ID      cluster B's allocation (job id); cluster A's is
    --slurm-job-a ID      $SLURM_JOB_ID unless given
    --slurm-conf-a FILE   SLURM_CONF of each cluster (default: the environment's)
    --slurm-conf-b FILE
    --slurm-wait SECONDS  wait for both allocations to run (default 300); if one
                          does not, zipper-run fails and cancels nothing unless:
    --slurm-cancel-on-failure
                          cancel both allocations when one never runs or ended
    --slurm-site FILE     site configuration: bridge nodes, addresses, host keys
                          (default $ZIPPER_SLURM_SITE, else PREFIX/etc/zipper/slurm.toml)
    --slurm-mpi TYPE      srun --mpi type (default: the site's, else pmix, which
                          Debian's Open MPI takes; see srun --mpi=list)
    --srun-args "ARGS"    extra srun arguments for both clusters (also -a / -b forms:
    --srun-args-a/-b      --srun-args-a "ARGS", --srun-args-b "ARGS")
  The job secret reaches the ranks on srun's standard input, never in the
  environment Slurm records: an exported MMPI_JOB_SECRET is refused (use
  MMPI_JOB_SECRET_FILE, or let zipper-run make the secret).

zipperd:
  --port PORT             forwarder port in emulated/local mode (default {DEFAULT_PORT})
  --zipperd PATH          zipperd binary (default: $ZIPPERD, else next to {PROG},
                          else PATH; with --zipper-host: the path on that host)
  --zipperd-arg ARG       extra zipperd argument (repeatable), e.g.
                          --zipperd-arg=--log-level --zipperd-arg=debug
  --zipperd-listen SPEC   replace the default --listen arguments (repeatable),
                          e.g. A=0.0.0.0:7470 (only with one bridge node)
  --zipperd-log PATH      zipperd stdout/stderr (default: in the temp dir, shown
                          when the run fails; with K > 1, PATH.1 .. PATH.K)
  --zipperd-wait SECONDS  how long to wait for zipperd's pid file (default 10)
  --zipper-emulate PATH   zipper-emulate to use (default: $ZIPPER_EMULATE, else next
                          to {PROG}, else PATH)
  --netns-rsh PATH        plm_rsh_agent for emulated nodes (default:
                          $ZIPPER_NETNS_RSH, else zipper-netns-rsh next to {PROG}, else PATH)
  --no-zipperd            use a zipperd this run did not start (a site's, serving
                          already); its key is required: --forwarder-keys, else
                          MMPI_FORWARDER_KEYS or a known_forwarders entry
  --forwarder-keys KEYS   host keys of those zipperd, one per bridge node in
                          --forwarder-a order (`zipperctl host-key` prints one)
  --standalone            no zipperd and MMPI_FORWARDER unset: each cluster runs
                          on its own (libmmpi standalone mode); with -y 0 only
                          cluster A runs, with -x 0 only cluster B (a plain
                          single-cluster baseline, as zipper-bench uses it)
  Without --no-zipperd, {PROG} starts every zipperd it uses, pins each one's
  host key, and stops it (SIGTERM, SIGKILL after {KILL_AFTER} s) when it exits.
  A forwarder port that is already taken is an error naming the port and,
  where readable, the process holding it: {PROG} never uses a listener it
  did not start. MMPI_FORWARDER_KEY_CHECK=accept (ranks use unpinned
  forwarders) is printed once and logged by every rank.

MPI:
  --job-id ID             MMPI_JOB_ID, decimal u64 (default: random). Visible in
                          ps like every argument: prefer MMPI_JOB_ID in the
                          environment. The job secret that admits the ranks
                          at zipperd is MMPI_JOB_SECRET (64 hex digits) or
                          MMPI_JOB_SECRET_FILE (a 0600 file) from the caller's
                          environment, else a fresh random one per run; it
                          reaches the ranks through the environment only
                          (docs/security.md).
  --env VAR=VAL           export VAR=VAL to every rank (repeatable); '--env VAR'
                          passes the caller's value. MMPI_* variables of the
                          caller's environment are passed on automatically.
  --transparent           run an unmodified MPI program: LD_PRELOAD every rank
                          with libmmpi_transparent.so (found next to libmmpi, or
                          $MMPI_TRANSPARENT_LIB) and set MMPI_TRANSPARENT=1
  --mpi openmpi|mpich     the clusters' MPI (default openmpi): mpich launches each
                          site with Hydra (mpiexec -n NP -genv ...) and a program
                          built with MPICH's mpicc against libmmpi-mpich
                          (docs/mpi.md); --emulated and --slurm are Open MPI only
  --mpirun PATH           mpirun to use (default $MPIRUN, else mpirun; with
                          --mpi mpich mpiexec.mpich, mpiexec.hydra or mpiexec)
  --mpirun-args "ARGS"    extra mpirun arguments for both clusters (split on
                          whitespace; repeatable)
  --mpirun-args-a "ARGS"  extra mpirun arguments for cluster A only
  --mpirun-args-b "ARGS"  extra mpirun arguments for cluster B only
  --tag-output            pass --tag-output to mpirun (default: output unmodified)

Control:
  --timeout SECONDS       kill everything after SECONDS and exit 124 (default 0: none)
  --grace SECONDS         when one cluster fails, kill the other after SECONDS
                          (default 10)
  --dry-run               print the commands instead of running them
  --version               print the version and exit
  -h, --help              show this help

Environment: ZIPPERD, ZIPPER_EMULATE, ZIPPER_NETNS_RSH, MPIRUN, ZIPPER_SSH (see
above); TMPDIR (temp dir); MMPI_* (passed to every rank); MMPI_TRANSPARENT_LIB
(see --transparent); OMPI_MCA_* (read by mpirun as usual).

Exit status: 0 if both mpiruns exit 0, else the first non-zero status
(124 on --timeout, 128+N on signal N, 1 on launcher errors, 2 on usage errors).
SIGINT/SIGTERM/SIGHUP are forwarded to both mpiruns (and zipperd is stopped).
Emulated nodes each get an equal CPU share (a cgroup per node, else a session
per mpirun).

Examples:
  {PROG} -x 2 -y 2 -- ./osu_latency
  {PROG} -x 4 -y 4 --nodes-a 2 --nodes-b 2 --timeout 600 -- ./app
  {PROG} --local -x 1 -y 1 --zipperd build/bin/zipperd -- ./app
  {PROG} -x 64 -y 64 --hostfile-a hosts.a --hostfile-b hosts.b \\
      --forwarder-a zip-a:7470 --forwarder-b zip-b:7470 -- ./app
"""


@dataclass
class Options:
    """The parsed command line (strings as given until validate())."""

    np_low: str = ""
    np_high: str = ""
    sites: str = ""
    mode: str = ""  # emulated | local | cluster
    mode_flag: str = ""
    nodes_a: str = ""
    nodes_b: str = ""
    hostfile_a: str = ""
    hostfile_b: str = ""
    forwarder_a: str = ""
    forwarder_b: str = ""
    zipper_host: str = ""
    zippers: str = ""
    port: str = ""
    zipperd: str = ""
    zipper_emulate: str = ""
    netns_rsh: str = ""
    mpi: str = "openmpi"
    mpirun: str = ""  # validate(): --mpirun, $MPIRUN or the MPI's launcher
    ssh: str = field(default_factory=lambda: os.environ.get("ZIPPER_SSH") or "ssh")
    zipperd_args: list = field(default_factory=list)
    zipperd_listen: list = field(default_factory=list)
    zipperd_log: str = ""
    zipperd_wait: str = "10"
    no_zipperd: bool = False
    forwarder_keys: str = ""
    standalone: bool = False
    transparent: bool = False
    job_id: str = ""
    env: list = field(default_factory=list)
    mpirun_args: list = field(default_factory=list)
    mpirun_args_a: list = field(default_factory=list)
    mpirun_args_b: list = field(default_factory=list)
    tag_output: bool = False
    no_pin: bool = False
    timeout: str = "0"
    grace: str = "10"
    dry_run: bool = False
    slurm_job_a: str = ""
    slurm_job_b: str = ""
    slurm_conf_a: str = ""
    slurm_conf_b: str = ""
    slurm_wait: str = ""
    slurm_site: str = ""
    slurm_mpi: str = ""
    slurm_cancel_on_failure: bool = False
    srun_args: list = field(default_factory=list)
    srun_args_a: list = field(default_factory=list)
    srun_args_b: list = field(default_factory=list)
    program: list = field(default_factory=list)
    profile: str = ""
    rank_map: str = ""
    # Filled by validate():
    rank_map_sites: list = field(default_factory=list)  # [ranks of A, ranks of B] of --rank-map
    fwd_a: list = field(default_factory=list)  # [Address] for --forwarder-a
    fwd_b: list = field(default_factory=list)
    site_list: list = field(default_factory=list)  # [(name, ranks)] of --sites, else A, B of -x/-y

    @property
    def site_table(self):
        """True when the sites came from --sites (ranks get MMPI_SITES and
        MMPI_SITE), False for the two-site shorthand -x/-y."""
        return bool(self.sites)

    @property
    def total_ranks(self):
        return sum(int(n) for _, n in self.site_list)

    def set_mode(self, mode, flag):
        if self.mode and self.mode != mode:
            raise UsageError(f"{flag} conflicts with {self.mode_flag}")
        self.mode, self.mode_flag = mode, flag


# option -> (attribute, kind): kind "flag", "value", "append", "words", "mode:M"
_OPTIONS = {
    "-x": ("np_low", "value"), "--np-low": ("np_low", "value"),
    "-y": ("np_high", "value"), "--np-high": ("np_high", "value"),
    "--sites": ("sites", "value"),
    "--emulated": ("emulated", "mode"), "--local": ("local", "mode"),
    "--nodes-a": ("nodes_a", "value"), "--nodes-b": ("nodes_b", "value"),
    "--no-pin": ("no_pin", "flag"),
    "--hostfile-a": ("hostfile_a", "value+cluster"), "--hostfile-b": ("hostfile_b", "value+cluster"),
    "--forwarder-a": ("forwarder_a", "value"), "--forwarder-b": ("forwarder_b", "value"),
    "--zipper-host": ("zipper_host", "value+cluster"),
    "--zippers": ("zippers", "value"),
    "--ssh": ("ssh", "value"), "--port": ("port", "value"),
    "--zipperd": ("zipperd", "value"), "--zipper-emulate": ("zipper_emulate", "value"),
    "--netns-rsh": ("netns_rsh", "value"),
    "--zipperd-arg": ("zipperd_args", "append"), "--zipperd-listen": ("zipperd_listen", "append"),
    "--zipperd-log": ("zipperd_log", "value"), "--zipperd-wait": ("zipperd_wait", "value"),
    "--no-zipperd": ("no_zipperd", "flag"), "--forwarder-keys": ("forwarder_keys", "value"), "--standalone": ("standalone", "flag"),
    "--transparent": ("transparent", "flag"),
    "--job-id": ("job_id", "value"), "--env": ("env", "append"),
    "--mpi": ("mpi", "value"), "--mpirun": ("mpirun", "value"),
    "--mpirun-args": ("mpirun_args", "words"), "--mpirun-args-a": ("mpirun_args_a", "words"),
    "--mpirun-args-b": ("mpirun_args_b", "words"),
    "--tag-output": ("tag_output", "flag"),
    "--timeout": ("timeout", "value"), "--grace": ("grace", "value"),
    "--dry-run": ("dry_run", "flag"),
    "--slurm": ("slurm", "mode"),
    "--slurm-job-a": ("slurm_job_a", "value"), "--slurm-job-b": ("slurm_job_b", "value"),
    "--slurm-conf-a": ("slurm_conf_a", "value"), "--slurm-conf-b": ("slurm_conf_b", "value"),
    "--slurm-wait": ("slurm_wait", "value"), "--slurm-site": ("slurm_site", "value"),
    "--slurm-mpi": ("slurm_mpi", "value"), "--slurm-cancel-on-failure": ("slurm_cancel_on_failure", "flag"),
    "--srun-args": ("srun_args", "words"), "--srun-args-a": ("srun_args_a", "words"),
    "--srun-args-b": ("srun_args_b", "words"),
    "--profile": ("profile", "value"), "--rank-map": ("rank_map", "value"),
}


class HelpRequested(Exception):
    """-h/--help or --version: print and exit 0."""

    def __init__(self, what):
        super().__init__(what)
        self.what = what


def parse_args(argv):
    """Parse argv (without the program name) into Options; raises UsageError."""
    o = Options()
    args = list(argv)
    i = 0
    while i < len(args):
        opt = args[i]
        val = None
        if opt.startswith("--") and "=" in opt:
            opt, val = opt.split("=", 1)
        elif re.fullmatch(r"-[xy].+", opt):
            opt, val = opt[:2], opt[2:]
        if opt in ("-h", "--help", "--version"):
            if val is not None:
                raise UsageError(f"option {opt} takes no value")
            raise HelpRequested("version" if opt == "--version" else "help")
        if opt == "--":
            o.program = args[i + 1:]
            return o
        if opt not in _OPTIONS:
            if opt.startswith("-"):
                raise UsageError(f"unknown option '{opt}'")
            o.program = args[i:]
            return o
        attr, kind = _OPTIONS[opt]
        if kind in ("flag", "mode"):
            if val is not None:
                raise UsageError(f"option {opt} takes no value")
            if kind == "mode":
                o.set_mode(attr, opt)
            else:
                setattr(o, attr, True)
            i += 1
            continue
        if val is None:
            if i + 1 >= len(args):
                raise UsageError(f"option {opt} needs a value")
            val = args[i + 1]
            i += 2
        else:
            i += 1
        if kind == "append":
            getattr(o, attr).append(val)
        elif kind == "words":
            getattr(o, attr).extend(val.split())
        else:
            setattr(o, attr, val)
            if kind == "value+cluster":
                o.set_mode("cluster", opt)
    return o


def _addr_list(opt, text, single=False):
    lst = addresses.parse_list(text)
    if lst is None or (single and len(lst) != 1):
        what = "[tcp:|verbs:]HOST:PORT" if single else "[tcp:|verbs:]HOST:PORT[,...]"
        raise UsageError(f"{opt} must be {what}, got '{text}'")
    return lst


_SITE_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_-]{0,31}")


def _validate_sites(o):
    """--sites NAME:N,...: 2 to MAX_SITES sites of positive rank counts,
    distinct names, not with -x/-y or the options of one leg per cluster."""
    if o.np_low or o.np_high:
        raise UsageError("--sites replaces -x/-y: give one or the other")
    for opt, given in (("--standalone", o.standalone), ("--no-zipperd", o.no_zipperd),
                       ("--forwarder-a/--forwarder-b", o.forwarder_a or o.forwarder_b),
                       ("--zipperd-listen", o.zipperd_listen)):
        if given:
            raise UsageError(f"--sites does not take {opt} yet: {PROG} starts the zipperd of "
                             "every bridge node with a leg per site")
    out = []
    for item in o.sites.split(","):
        name, sep, n = item.partition(":")
        if not sep or not _SITE_NAME.fullmatch(name) or not is_posint(n):
            raise UsageError(f"--sites must be NAME:N,NAME:N[,...] (a name of letters, digits, "
                             f"'_' or '-', N ranks >= 1), got '{item}' in '{o.sites}'")
        if any(name == m for m, _ in out):
            raise UsageError(f"--sites names site {name} twice")
        out.append((name, n))
    if not 2 <= len(out) <= MAX_SITES:
        raise UsageError(f"--sites takes 2 to {MAX_SITES} sites, got {len(out)}")
    if sum(int(n) for _, n in out) > 1 << 24:
        raise UsageError("--sites: at most 16777216 ranks in all")
    o.site_list = out


def validate(o):
    """Check and complete Options in place (defaults per mode); raises UsageError/Fatal."""
    if o.mpi not in ("openmpi", "mpich"):
        raise UsageError(f"--mpi must be openmpi or mpich, got '{o.mpi}'")
    if o.mpi == "mpich":
        if o.mode == "slurm":
            raise UsageError("--mpi mpich: --slurm is not supported yet (srun --mpi=pmi2)")
        o.mpirun = o.mpirun or hydra.default_launcher()
    else:
        o.mpirun = o.mpirun or os.environ.get("MPIRUN") or "mpirun"
    if o.mode == "slurm":
        if o.sites:
            raise UsageError("--sites needs --local (Slurm takes two sites so far: -x/-y)")
        return slurm_options.validate(o)
    if (o.slurm_job_a or o.slurm_job_b or o.slurm_conf_a or o.slurm_conf_b or o.slurm_site
            or o.slurm_cancel_on_failure):
        raise UsageError("--slurm-* options need --slurm")
    if (o.profile or o.rank_map) and o.standalone:
        raise UsageError("--profile and --rank-map are for one job over both clusters, "
                         "not --standalone")
    if o.sites and o.rank_map:
        raise UsageError("--rank-map places ranks on two sites (A and B) so far; not with --sites")
    placement_options.validate(o)
    if o.sites:
        _validate_sites(o)
    else:
        if not o.np_low:
            raise UsageError("-x/--np-low is required")
        if not o.np_high:
            raise UsageError("-y/--np-high is required")
        for name, v in (("-x/--np-low", o.np_low), ("-y/--np-high", o.np_high)):
            if not (is_posint(v) or (v == "0" and o.standalone)):
                raise UsageError(f"{name} must be a positive integer (0 only with --standalone), got '{v}'")
        if int(o.np_low) + int(o.np_high) == 0:
            raise UsageError("-x and -y cannot both be 0")
        o.site_list = [("A", o.np_low), ("B", o.np_high)]
    if not o.program:
        raise UsageError("no PROGRAM given (put it after '--')")
    if not is_uint(o.timeout):
        raise UsageError(f"--timeout must be a whole number of seconds, got '{o.timeout}'")
    if not is_uint(o.grace):
        raise UsageError(f"--grace must be a whole number of seconds, got '{o.grace}'")
    if not is_posint(o.zipperd_wait):
        raise UsageError(f"--zipperd-wait must be a positive integer, got '{o.zipperd_wait}'")
    if o.job_id and not is_u64(o.job_id):
        raise UsageError(f"--job-id must be a decimal u64, got '{o.job_id}'")
    if o.port and not (is_posint(o.port) and int(o.port) <= 65535):
        raise UsageError(f"--port must be in 1..65535, got '{o.port}'")
    for e in o.env:
        name = e.split("=", 1)[0]
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
            raise UsageError(f"--env: bad variable name in '{e}'")
        if "=" not in e and e not in os.environ:
            raise UsageError(f"--env {e}: {e} is not set in the environment")
    if o.no_zipperd and o.standalone:
        raise UsageError("--no-zipperd and --standalone are exclusive")

    if o.forwarder_a and o.mode != "local":
        o.set_mode("cluster", "--forwarder-a")
    if o.forwarder_b and o.mode != "local":
        o.set_mode("cluster", "--forwarder-b")
    o.mode = o.mode or "emulated"
    if o.mpi == "mpich":
        hydra.validate(o)
    if o.sites and o.mode != "local":
        raise UsageError("--sites needs --local (emulated clusters, real clusters and Slurm take "
                         "two sites so far: -x/-y)")
    if o.mode != "emulated":
        if o.nodes_a or o.nodes_b:
            raise UsageError("--nodes-a/--nodes-b are for --emulated mode")
        if o.no_pin:
            raise UsageError("--no-pin is for --emulated mode")
    if o.zippers:
        if o.mode == "cluster":
            raise UsageError("--zippers is for --emulated/--local; on real clusters give "
                             "one address per bridge node in --forwarder-a/--forwarder-b")
        if not (is_posint(o.zippers) and int(o.zippers) <= MAX_ZIPPERS):
            raise UsageError(f"--zippers must be an integer in 1..{MAX_ZIPPERS}, got '{o.zippers}'")
    o.zippers = o.zippers or "1"
    if int(o.zippers) > 1 and o.zipperd_listen:
        raise UsageError("--zipperd-listen is for one bridge node (not with --zippers > 1)")

    if o.mode == "emulated":
        o.nodes_a = o.nodes_a or "1"
        o.nodes_b = o.nodes_b or "1"
        if not is_posint(o.nodes_a):
            raise UsageError(f"--nodes-a must be a positive integer, got '{o.nodes_a}'")
        if not is_posint(o.nodes_b):
            raise UsageError(f"--nodes-b must be a positive integer, got '{o.nodes_b}'")
        o.port = o.port or str(DEFAULT_PORT)
    elif o.mode == "local":
        o.port = o.port or str(DEFAULT_PORT)
        legs = len(o.site_list) if o.sites else 1
        if int(o.port) + int(o.zippers) * legs - 1 > 65535:
            raise UsageError(f"--port {o.port} with --zippers {o.zippers}"
                             f"{f' and {legs} sites' if o.sites else ''} runs past port 65535")
        if o.forwarder_a or o.forwarder_b:
            if not (o.forwarder_a and o.forwarder_b):
                raise UsageError("--local with explicit forwarders needs both --forwarder-a and --forwarder-b")
            o.fwd_a = _addr_list("--forwarder-a", o.forwarder_a)
            o.fwd_b = _addr_list("--forwarder-b", o.forwarder_b)
            if len(o.fwd_a) != len(o.fwd_b):
                raise UsageError("--forwarder-a and --forwarder-b must name the same number of bridge nodes")
            if o.zippers != "1" and len(o.fwd_a) != int(o.zippers):
                raise UsageError("--zippers does not match the number of --forwarder-a addresses")
            o.zippers = str(len(o.fwd_a))
    else:  # cluster
        if not (o.hostfile_a and o.hostfile_b and o.forwarder_a and o.forwarder_b):
            raise UsageError("real-cluster mode needs all of --hostfile-a, --hostfile-b, --forwarder-a, --forwarder-b")
        if o.port:
            raise UsageError("--port is for --emulated/--local; give the ports in --forwarder-a/--forwarder-b")
        if not os.access(o.hostfile_a, os.R_OK):
            raise Fatal(f"--hostfile-a: cannot read '{o.hostfile_a}'")
        if not os.access(o.hostfile_b, os.R_OK):
            raise Fatal(f"--hostfile-b: cannot read '{o.hostfile_b}'")
        single = bool(o.zipper_host)
        o.fwd_a = _addr_list("--forwarder-a", o.forwarder_a, single)
        o.fwd_b = _addr_list("--forwarder-b", o.forwarder_b, single)
        if len(o.fwd_a) != len(o.fwd_b):
            raise UsageError("--forwarder-a and --forwarder-b must name the same number of bridge nodes")
        o.zippers = str(len(o.fwd_a))
    return o
