"""zipper-run's main: set up, start the forwarders, run every site's ranks, clean up.

Whatever the outcome, everything zipper-run started is stopped and its
temporary directory is removed.
"""

import os
import secrets
import shutil
import subprocess
import sys
import tempfile

from . import (emulation_cgroups, emulation_lock, emulation_topology, mpirun, options, profile, site_keys,
               slurm_launch, supervise, version, zipperd)
from .errors import PROG, Fatal, UsageError, say
from .locate import find_bin
from .processes import KILL_AFTER, wait_or_kill
from .shell_quote import quote_cmd


class Run:
    """State of one run, for cleanup."""

    def __init__(self, o, self_dir):
        self.o = o
        self.self_dir = self_dir
        self.work = ""
        self.bridges = []
        self.procs = {}
        self.sigs = None
        self.keep = []  # open files to close at the very end (the unnamed zipperd log of --slurm)


def _secret_var():
    """Name of the variable that carries the job secret to the ranks; makes one if none."""
    if os.environ.get("MMPI_JOB_SECRET"):
        return "MMPI_JOB_SECRET"
    if os.environ.get("MMPI_JOB_SECRET_FILE"):
        return "MMPI_JOB_SECRET_FILE"
    os.environ["MMPI_JOB_SECRET"] = secrets.token_hex(32)
    return "MMPI_JOB_SECRET"


def _ensure_emulation(o):
    """True if the emulation must be created; Fatal if it is too small."""
    emulation_lock.wait_unlocked()
    k = int(o.zippers)
    if emulation_topology.count_zippers() == 0:
        return True
    ha, hb = emulation_topology.count_nodes("A"), emulation_topology.count_nodes("B")
    hz = emulation_topology.count_zippers()
    na, nb = int(o.nodes_a), int(o.nodes_b)
    if ha < na or hb < nb or hz < k:
        raise Fatal(f"the emulation has {ha} node(s) in cluster A, {hb} in cluster B and {hz} "
                    f"bridge node(s), but --nodes-a {na} --nodes-b {nb} --zippers {k} was asked; "
                    f"rebuild it with 'zipper-emulate up --nodes-a {max(ha, na)} --nodes-b "
                    f"{max(hb, nb)} --zippers {max(hz, k)}' (or 'zipper-emulate down' and let "
                    f"{PROG} create it)")
    return False


def _emulate_cmd(bin_, o):
    cmd = [bin_, "up", "--nodes-a", o.nodes_a, "--nodes-b", o.nodes_b]
    return cmd + (["--zippers", o.zippers] if o.zippers != "1" else [])


def _preexec(cgroup_procs):
    """In the child, before exec: join the emulated node's cgroup (if any)."""
    if not cgroup_procs:
        return None
    return lambda: emulation_cgroups.join_cgroup(cgroup_procs)


def _run(r):
    o = r.o
    if o.mode == "slurm":
        return slurm_launch.run(r, _transparent_env)
    job_id = o.job_id or os.environ.get("MMPI_JOB_ID") or str(secrets.randbits(64))
    os.environ["MMPI_JOB_ID"] = job_id
    secret_var = _secret_var()
    pass_env = mpirun.passed_env(os.environ)

    base = os.environ.get("TMPDIR") or "/tmp"
    if o.dry_run:
        r.work = os.path.join(base, "zipper-run.XXXXXX")
    else:
        try:
            r.work = tempfile.mkdtemp(prefix="zipper-run.", dir=base)
        except OSError as e:
            raise Fatal(f"cannot create a temp dir in {base}: {e.strerror}") from None

    if not o.dry_run and not shutil.which(o.mpirun):
        raise Fatal(f"mpirun not found ('{o.mpirun}'); use --mpirun PATH")

    rsh_bin = emulate_bin = None
    emu_up = False
    if o.mode == "emulated":
        if not o.dry_run and os.geteuid() != 0:
            raise Fatal("--emulated mode needs root (network namespaces); use --local to run without")
        rsh_bin = find_bin("zipper-netns-rsh", o.netns_rsh, "ZIPPER_NETNS_RSH", r.self_dir)
        if not rsh_bin:
            raise Fatal("zipper-netns-rsh not found: pass --netns-rsh PATH or set $ZIPPER_NETNS_RSH")
        emu_up = _ensure_emulation(o)
        if emu_up:
            emulate_bin = find_bin("zipper-emulate", o.zipper_emulate, "ZIPPER_EMULATE", r.self_dir)
            if not emulate_bin:
                raise Fatal("zipper-emulate not found: pass --zipper-emulate PATH or set $ZIPPER_EMULATE")

    preload = _transparent_env(o, r.self_dir) if o.transparent else None

    r.bridges, will_start, zbin = zipperd.plan(o, r.work, r.self_dir)

    def build_cmds(keys):
        # One mpirun per site, keyed by the site's name ("A", "B" with -x/-y).
        cmds, heads = {}, {}
        for site, (c, np) in enumerate(o.site_list):
            if int(np) > 0:
                fwd = [br.fwd[site] for br in r.bridges]
                cmds[c], heads[c] = mpirun.build(o, site, fwd, secret_var, pass_env, r.work, rsh_bin,
                                                 preload, keys)
        return cmds, heads

    cmds, heads = build_cmds(None)

    if o.dry_run:
        try:
            _dry_run(o, r, cmds, will_start, emu_up, emulate_bin)
            sys.stdout.flush()
        except BrokenPipeError:  # `zipper-run --dry-run ... | head`
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0

    if emu_up:
        say("no emulation found; creating it")
        if subprocess.call(_emulate_cmd(emulate_bin, o)) != 0:
            raise Fatal("zipper-emulate up failed")
    if o.mode == "emulated":
        for c in cmds:
            np = int(o.np_low if c == "A" else o.np_high)
            with open(os.path.join(r.work, f"hostfile-{c.lower()}"), "w") as f:
                f.write(mpirun.hostfile_text(c, int(o.nodes_a if c == "A" else o.nodes_b), np))
    if o.mode == "local":
        for site, (c, _) in enumerate(o.site_list):
            if c in cmds:
                os.mkdir(os.path.join(r.work, mpirun.session_dir(o, site)), 0o700)

    site_keys.warn_if_accept(o)
    if will_start:
        zipperd.start(o, r.bridges, zbin)
        # Ranks pin the host keys of the zipperd this run started (docs/security.md).
        cmds, heads = build_cmds(zipperd.host_keys(o, r.bridges))
    elif not o.standalone:
        # A site zipperd: its key is required (--forwarder-keys, or what the ranks read).
        keys = site_keys.keys_for(o, r.bridges, r.self_dir)
        if keys:
            cmds, heads = build_cmds(keys)
    if will_start or o.standalone:
        pass
    elif o.mode == "cluster":
        for br in r.bridges:
            va, _ = zipperd.probe_addr("", br.fwd_a, 0)
            vb, _ = zipperd.probe_addr("", br.fwd_b, 1)
            if va != 0 or vb != 0:
                say(f"warning: no forwarder answers at {br.fwd_a.text} / {br.fwd_b.text} from this "
                    "host (it may just be unreachable from here); continuing")
    elif o.no_zipperd:
        for br in r.bridges:
            if zipperd.probe_addr(br.probe_ns_a, br.fwd_a, 0)[0] != 0:
                say(f"warning: --no-zipperd but no zipperd answers at {br.fwd_a.text}")

    if o.mode == "emulated":
        fair = all(emulation_cgroups.node_cgroup(h) for h in heads.values())
        if not fair:
            say("note: no per-node cgroups from zipper-emulate (cgroup v2 unavailable?); "
                "each mpirun runs in a session of its own instead")
    before = profile.started(o.profile) if o.profile else None
    r.sigs.running = True
    for site, (c, _) in enumerate(o.site_list):
        if c in cmds:
            cg = emulation_cgroups.node_cgroup(heads[c]) if o.mode == "emulated" else None
            # Each mpirun in a session of its own (an autogroup of its own);
            # the first site's gets zipper-run's standard input.
            r.procs[c] = subprocess.Popen(cmds[c], stdin=None if site == 0 else subprocess.DEVNULL,
                                          start_new_session=True, preexec_fn=_preexec(cg))
    code = supervise.supervise(o, r.procs, r.bridges, r.sigs)
    # Rank 0 wrote the matrix on this host's file system here; on real
    # clusters it is rank 0's node's.
    if code == 0 and o.profile and o.mode in ("local", "emulated"):
        code = profile.check_written(o.profile, before)
    return code


def _dry_run(o, r, cmds, will_start, emu_up, emulate_bin):
    layout = (" ".join(f"{c}={n}" for c, n in o.site_list) if o.site_table
              else f"low={o.np_low} high={o.np_high}")
    print(f"# {PROG} dry run: mode {o.mode}, job id and secret in the environment, {layout}")
    if o.standalone:
        print("# standalone: no zipperd, MMPI_FORWARDER unset")
    else:
        fwd = " ".join(f"{c}=" + ",".join(b.fwd[site].text for b in r.bridges)
                       for site, (c, _) in enumerate(o.site_list))
        print(f"# forwarder: {fwd}")
    if o.mode == "emulated":
        if emu_up:
            print("# emulation missing; would create it:")
            print(quote_cmd(_emulate_cmd(emulate_bin or "zipper-emulate", o)))
        else:
            print(f"# emulation present: {emulation_topology.count_nodes('A')} node(s) in A, "
                  f"{emulation_topology.count_nodes('B')} in B, {emulation_topology.count_zippers()} bridge node(s)")
    if will_start:
        for br in r.bridges:
            if o.mode == "cluster":
                print(f"# zipperd on {o.zipper_host} (pid file in a private mktemp -d directory there):")
                cmd = zipperd._ssh(o) + ["-n", o.zipper_host, quote_cmd(br.cmd[1:])]
            else:
                taken = " / ".join(a.text for a in br.fwd[:len(o.site_list)])
                print(f"# zipperd (an error if {taken} is taken already) "
                      f"(wait for pid file, {o.zipperd_wait} s max):")
                cmd = br.cmd
            print(f"{quote_cmd(cmd)} </dev/null >{quote_cmd([br.log])} 2>&1 &")
    elif not o.standalone:
        print(f"# zipperd not started by {PROG} (assumed to be serving)")
    for c in cmds:
        if o.mode == "emulated":
            path = os.path.join(r.work, f"hostfile-{c.lower()}")
            np = int(o.np_low if c == "A" else o.np_high)
            print(f"# {path}:")
            for line in mpirun.hostfile_text(c, int(o.nodes_a if c == "A" else o.nodes_b), np).splitlines():
                print(f"#   {line}")
    for site, (c, np) in enumerate(o.site_list):
        if c in cmds:
            what = f"site {site}" if o.site_table else ("low group" if site == 0 else "high group")
            print(f"# cluster {c} ({what}, {np} rank(s)):")
            print(quote_cmd(cmds[c]) + (" &" if site == 0 else " </dev/null &"))
    if int(o.timeout):
        print(f"# timeout: {o.timeout} s (exit 124)")


def _cleanup(r, code):
    """Stop what is still running, stop our zipperd, remove the temp dir."""
    if r.sigs:
        r.sigs.ignore()
    live = [p for p in r.procs.values() if p.poll() is None]
    for p in live:
        p.terminate()
    for p in live:
        wait_or_kill(p, KILL_AFTER)
    for br in r.bridges:
        zipperd.stop(r.o, br)
    for br in r.bridges:
        if code == 0 or not br.started:
            continue
        if not br.log_is_default:
            say(f"zipperd log: {br.log}")
        elif not br.log_shown and os.path.isfile(br.log) and os.path.getsize(br.log) > 0:
            say("zipperd log (the temp dir is removed; keep the log with --zipperd-log PATH):")
            zipperd.show_log(br.log, 20)
    if r.work and not r.o.dry_run and os.path.isdir(r.work):
        shutil.rmtree(r.work, ignore_errors=True)
    for f in r.keep:
        f.close()


def _transparent_env(o, self_dir):
    """NAME=VALUE settings for every rank of a --transparent run, from
    zipper-transparent-check (docs/transparent.md): LD_PRELOAD of the layer,
    MMPI_TRANSPARENT=1 and Open MPI's stop-component sentinel, which ends a
    rank the layer did not reach in MPI_Init. The program is refused first
    when it cannot be preloaded (static, setuid)."""
    lib = version.transparent_lib(self_dir, o.mpi)
    check = find_bin("zipper-transparent-check", "", "ZIPPER_TRANSPARENT_CHECK", self_dir)
    if not check:
        raise Fatal("--transparent: zipper-transparent-check not found next to zipper-run or on PATH")
    p = subprocess.run([check, "--mpi", o.mpi, "--lib", lib, o.program[0]], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        raise Fatal(p.stderr.strip() or f"--transparent: {o.program[0]} cannot run transparently")
    p = subprocess.run([check, "--mpi", o.mpi, "--lib", lib, "--env"], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        raise Fatal(f"--transparent: zipper-transparent-check --env failed: {p.stderr.strip()}")
    return [line for line in p.stdout.splitlines() if "=" in line]


def main(argv, self_dir):
    """Entry point: returns the exit status."""
    try:
        o = options.parse_args(argv)
    except options.HelpRequested as h:
        print(options.USAGE if h.what == "help" else f"{PROG} (zipper) {version.VERSION}", end="" if h.what == "help" else "\n")
        return 0
    except UsageError as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        print(f"Try '{PROG} --help'.", file=sys.stderr)
        return e.code
    r = Run(o, self_dir)
    code = 1
    try:
        r.sigs = supervise.Signals()
        options.validate(o)
        code = _run(r)
    except UsageError as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        print(f"Try '{PROG} --help'.", file=sys.stderr)
        code = e.code
    except Fatal as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        code = e.code
    except supervise.Interrupted as e:
        code = e.code
    finally:
        try:
            _cleanup(r, code)
        except supervise.Interrupted:
            pass
    return code
