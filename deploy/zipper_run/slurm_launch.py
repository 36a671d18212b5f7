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
import select
import signal
import subprocess
import sys
import tempfile
import time

from . import addresses, probe, site_keys, slurm, slurm_site, supervise, zipperd
from .util import PROG, Fatal, UsageError, find_bin, is_posint, is_u64, is_uint, quote_cmd

HERE = os.path.dirname(os.path.abspath(__file__))
BRIDGE_WRAPPER = os.path.join(HERE, "slurm_bridge.py")
SECRET_VARS = ("MMPI_JOB_SECRET", "MMPI_JOB_SECRET_FILE", "MMPI_JOB_SECRET_FD")
OWN_VARS = set(SECRET_VARS) | {"MMPI_FORWARDER", "MMPI_FORWARDER_KEYS", "MMPI_JOB_ID", "MMPI_GROUP",
                               "MMPI_NP_LOW", "MMPI_NP_HIGH", "MMPI_TRANSPARENT"}
DEFAULT_WAIT = "300"
PER_JOB_MEMORY = "64MiB"  # per-job zipperd's --max-memory unless --zipperd-arg sets it


def validate(o):
    """Options of --slurm mode (called by options.validate); UsageError on misuse."""
    for name, v in (("-x/--np-low", o.np_low), ("-y/--np-high", o.np_high)):
        if v and not is_posint(v):
            raise UsageError(f"{name} must be a positive integer, got '{v}'")
    if not o.program:
        raise UsageError("no PROGRAM given (put it after '--')")
    for name, v in (("--timeout", o.timeout), ("--grace", o.grace)):
        if not is_uint(v):
            raise UsageError(f"{name} must be a whole number of seconds, got '{v}'")
    o.slurm_wait = o.slurm_wait or DEFAULT_WAIT
    if not is_posint(o.slurm_wait):
        raise UsageError(f"--slurm-wait must be a positive number of seconds, got '{o.slurm_wait}'")
    if not is_posint(o.zipperd_wait):
        raise UsageError(f"--zipperd-wait must be a positive integer, got '{o.zipperd_wait}'")
    if o.job_id and not is_u64(o.job_id):
        raise UsageError(f"--job-id must be a decimal u64, got '{o.job_id}'")
    for j in (o.slurm_job_a, o.slurm_job_b):
        if j and not is_posint(j):
            raise UsageError(f"--slurm-job-a/-b must be a Slurm job id, got '{j}'")
    if (o.slurm_conf_a or o.slurm_job_a) and not o.slurm_job_b:
        raise UsageError("--slurm-job-a/--slurm-conf-a are for two allocations: give --slurm-job-b too")
    for bad, flag in ((o.hostfile_a or o.hostfile_b, "--hostfile-a/-b"), (o.zipper_host, "--zipper-host"),
                      (o.nodes_a or o.nodes_b, "--nodes-a/-b"), (o.zippers, "--zippers"),
                      (o.standalone, "--standalone"), (o.port, "--port")):
        if bad:
            raise UsageError(f"{flag} does not go with --slurm (Slurm gives the nodes, the site "
                             "configuration the bridge nodes)")
    if bool(o.forwarder_a) != bool(o.forwarder_b):
        raise UsageError("--forwarder-a and --forwarder-b go together")
    if o.forwarder_a:
        o.fwd_a = addresses.parse_list(o.forwarder_a)
        o.fwd_b = addresses.parse_list(o.forwarder_b)
        if not o.fwd_a or not o.fwd_b or len(o.fwd_a) != len(o.fwd_b):
            raise UsageError("--forwarder-a/-b must be lists of the same number of HOST:PORT")
    return o


def _components(o):
    if o.slurm_job_b:
        job_a = o.slurm_job_a or os.environ.get("SLURM_JOB_ID", "")
        if not job_a:
            raise Fatal("--slurm: no allocation for cluster A: not inside salloc/sbatch "
                        "(SLURM_JOB_ID unset) and no --slurm-job-a")
        return slurm.from_jobs(job_a, o.slurm_conf_a or None, o.slurm_job_b, o.slurm_conf_b or None,
                               int(o.slurm_wait), os.environ)
    return slurm.from_hetjob(os.environ)


def _secret():
    """The job secret (64 hex digits): the caller's MMPI_JOB_SECRET or
    MMPI_JOB_SECRET_FILE, else a fresh one."""
    if os.environ.get("MMPI_JOB_SECRET"):
        s = os.environ["MMPI_JOB_SECRET"].strip()
    elif os.environ.get("MMPI_JOB_SECRET_FILE"):
        path = os.environ["MMPI_JOB_SECRET_FILE"]
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
            with os.fdopen(fd) as f:
                if os.fstat(f.fileno()).st_mode & 0o077:
                    raise Fatal(f"MMPI_JOB_SECRET_FILE '{path}' must have mode 0600")
                s = f.read(200).strip()
        except OSError as e:
            raise Fatal(f"MMPI_JOB_SECRET_FILE '{path}': {e.strerror}") from None
    else:
        return secrets.token_hex(32)
    if len(s) != 64 or any(c not in "0123456789abcdefABCDEF" for c in s):
        raise Fatal("the job secret must be 64 hex digits")
    return s.lower()


class Plan:
    """The bridge nodes of the run: addresses per side, pinned keys, who starts them."""

    def __init__(self):
        self.nodes = []  # bridge node names (or the addresses given)
        self.fwd_a = []  # [Address]
        self.fwd_b = []
        self.keys = None  # [hex] in order, or None (the site's known_forwarders pins)
        self.per_job = None  # Component of the per-job zipperd step


def _site_pins(o, p, self_dir):
    """Keys for forwarders zipper-run does not start and the site file gives
    no key for: --forwarder-keys, else the ranks' own pins (MMPI_FORWARDER_KEYS,
    known_forwarders); Fatal when nothing pins them (site_keys)."""
    brs = [zipperd.Bridge(i, a, b) for i, (a, b) in enumerate(zip(p.fwd_a, p.fwd_b), 1)]
    return site_keys.keys_for(o, brs, self_dir)


def plan_bridges(o, comps, site, self_dir=""):
    """Where the forwarders are (Plan); Fatal when there are none, the
    site configuration lacks what the job needs, or a site zipperd's key is
    pinned nowhere."""
    p = Plan()
    if "bridge" in comps:
        comp = comps["bridge"]
        for node in comp.nodes:
            sb = site.bridge(node)
            if sb is None or sb.job_a is None:
                raise Fatal(f"--slurm: bridge node {node} (component 2) has no job_a/job_b addresses "
                            f"in the site configuration ({site.path})")
            p.nodes.append(node)
            p.fwd_a.append(sb.job_a)
            p.fwd_b.append(sb.job_b)
        p.per_job = comp
        return p
    if o.fwd_a:
        p.nodes = [a.text for a in o.fwd_a]
        p.fwd_a, p.fwd_b = list(o.fwd_a), list(o.fwd_b)
        p.keys = _site_pins(o, p, self_dir)
        return p
    serving = [b for b in site.bridges if b.a is not None]
    if not serving:
        raise Fatal(f"--slurm: no bridge nodes: none serving in the site configuration ({site.path}), "
                    "no hetjob component 2 and no --forwarder-a/-b")
    p.nodes = [b.node for b in serving]
    p.fwd_a = [b.a for b in serving]
    p.fwd_b = [b.b for b in serving]
    if all(b.key for b in serving):
        p.keys = [b.key for b in serving]
    else:
        p.keys = _site_pins(o, p, self_dir)
    return p


def check_reachable(p):
    """Every serving bridge node answers the zipper protocol from here (its
    cluster A address; its B address too when this host has a route to it).
    Fatal naming the first that does not."""
    for node, a, b in zip(p.nodes, p.fwd_a, p.fwd_b):
        va, da = zipperd.probe_addr("", a, 0)
        if va != probe.ZIPPERD:
            raise Fatal(f"bridge node {node} unreachable: no zipperd answers at {a.text} "
                        f"({da or 'not a zipperd'})")
        vb, db = zipperd.probe_addr("", b, 1)
        if vb == probe.OTHER or (vb == probe.NOTHING and "unreachable" not in db.lower()):
            raise Fatal(f"bridge node {node} unreachable: no zipperd answers at {b.text} ({db})")


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
    for kv in (preload or []) + list(o.env):
        k, _, v = kv.partition("=")
        env[k] = v if "=" in kv else environ.get(k, "")
    return env


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


def _x25519_public(secret):
    """The public half of an X25519 host key (proto/host_key.cpp) through
    Debian's libsodium, or None when it cannot be loaded."""
    import ctypes

    for name in ("libsodium.so.23", "libsodium.so"):
        try:
            lib = ctypes.CDLL(name)
            break
        except OSError:
            continue
    else:
        return None
    pk = ctypes.create_string_buffer(32)
    if lib.crypto_scalarmult_base(pk, ctypes.c_char_p(secret)) != 0:
        return None
    return pk.raw.hex()


def make_keys(o, r, p, zbin):
    """A fresh host key per bridge node for this job: [(secret hex, public hex)].
    Made here (libsodium, else `zipperd --print-host-key` in the private run
    directory) so that the ranks can start with the keys pinned while the
    per-job zipperd starts."""
    out = []
    for i, node in enumerate(p.nodes, 1):
        sk = secrets.token_bytes(32)
        pk = _x25519_public(sk)
        if pk:
            out.append((sk.hex(), pk))
            continue
        path = os.path.join(r.work, f"host_key.{i}")
        k = subprocess.run([zbin, "--print-host-key", "--host-key", path], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, timeout=30, check=False)
        if k.returncode != 0:
            raise Fatal(f"cannot make a host key for bridge node {node}: {k.stderr.strip()}")
        with open(path) as f:
            out.append((f.read().strip(), k.stdout.strip()))
        os.unlink(path)
    return out


def start_bridges(o, r, p, zbin, keys):
    """Start the per-job zipperd step (each node's secret key on its stdin);
    returns the Popen. Its READY lines are awaited by wait_bridges()."""
    comp = p.per_job
    log = os.path.join(r.work, "zipperd.log") if not o.zipperd_log else o.zipperd_log
    brs = []
    for i, (a, b) in enumerate(zip(p.fwd_a, p.fwd_b), 1):
        br = zipperd.Bridge(i, a, b)
        br.log, br.log_is_default, br.started = log, not o.zipperd_log, True
        brs.append(br)
    r.bridges = brs
    env = {k: v for k, v in (comp.env or os.environ).items() if k not in SECRET_VARS}
    with open(log, "ab") as logf:
        old = signal.pthread_sigmask(signal.SIG_BLOCK, supervise.SIGNALS)
        try:
            proc = subprocess.Popen(bridge_cmd(o, comp, p, zbin), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                    stderr=logf, env=env, start_new_session=True)
            brs[0].proc = proc
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, old)
    try:
        proc.stdin.write("".join(f"{n} {sk}\n" for n, (sk, _) in zip(p.nodes, keys)).encode())
        proc.stdin.close()
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
                        f"(srun status {supervise.status(proc.returncode)}) before it was ready")
        buf += chunk
        while b"\n" in buf:
            line, buf = buf.split(b"\n", 1)
            f = line.decode(errors="replace").split(None, 2)
            if len(f) >= 2 and f[0] == "READY" and f[1] in p.nodes:
                ready.add(f[1])
            elif len(f) >= 2 and f[0] == "FAILED":
                raise Fatal(f"bridge node {f[1]}: per-job zipperd failed: {f[2] if len(f) > 2 else ''}")


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
    comps = _components(o)
    x = int(o.np_low) if o.np_low else comps["A"].ntasks
    y = int(o.np_high) if o.np_high else comps["B"].ntasks
    site = slurm_site.load(o.slurm_site or slurm_site.default_path(r.self_dir), bool(o.slurm_site))
    site_keys.warn_if_accept(o)
    p = plan_bridges(o, comps, site, r.self_dir)
    job_id = o.job_id or os.environ.get("MMPI_JOB_ID") or str(secrets.randbits(64))
    secret = _secret()
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
    try:
        r.work = tempfile.mkdtemp(prefix="zipper-run.", dir=os.environ.get("TMPDIR") or "/tmp")
    except OSError as e:
        raise Fatal(f"cannot create a temp dir: {e.strerror}") from None
    # Everything starts at once: the ranks retry their connection until zipperd
    # listens (MMPI_CONNECT_TIMEOUT), and a bridge node that fails ends the
    # run with its own one-line error (cleanup stops the steps).
    bproc = None
    if p.per_job:
        keys = make_keys(o, r, p, zbin)
        p.keys = [pk for _, pk in keys]
        bproc = start_bridges(o, r, p, zbin, keys)
    line = (secret + "\n").encode()
    for c in ("A", "B"):
        env = rank_env(o, comps[c].env or os.environ, c, p, job_id, x, y, preload)
        proc = subprocess.Popen(cmds[c], stdin=subprocess.PIPE, env=env, start_new_session=True)
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
    return supervise.supervise(o, r.procs, r.bridges, r.sigs)

