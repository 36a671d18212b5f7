"""The forwarders of one run: where they are, probing them, starting and stopping
the zipperd instances zipper-run owns (locally, in an emulated namespace, or on
a remote bridge node over ssh).

zipper-run signals only processes it started: local and emulated zipperd are
its own children (subprocess.Popen); a remote zipperd is identified by pid,
/proc/PID/exe and start time when it comes up, and checked again before any
signal. The remote pid file lives in a private directory (mktemp -d, 0700).
"""

import os
import re
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field

from . import addresses, emulation_cgroups, emulation_topology, port_holder, probe
from .errors import Fatal, say
from .locate import find_bin
from .processes import KILL_AFTER, SIGNALS, wait_or_kill
from .shell_quote import quote_cmd

_PROBE_SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "probe.py")
_HOLDER_SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "port_holder.py")


@dataclass
class Bridge:
    """Bridge node i: the addresses ranks use and, if zipper-run starts it, how."""

    index: int  # 1-based
    fwd_a: addresses.Address  # site 0's (cluster A's)
    fwd_b: addresses.Address  # site 1's (cluster B's)
    probe_ns_a: str = ""  # namespace to probe from ("" = this one)
    probe_ns_b: str = ""
    cmd: list = field(default_factory=list)  # zipperd command (empty: not ours to start)
    pidfile: str = ""
    log: str = ""
    log_is_default: bool = True
    proc: subprocess.Popen = None  # our child (zipperd, ip netns exec zipperd, or ssh)
    remote_dir: str = ""  # --zipper-host: private directory on that host
    remote_id: tuple = None  # (pid, exe, start time) on the remote host
    died: bool = False
    started: bool = False
    log_shown: bool = False
    listen: list = field(default_factory=list)
    node: str = ""  # emulated bridge node namespace (its cgroup)
    step: bool = False  # proc is the srun step of per-job zipperd (slurm_bridge.py)
    more: list = field(default_factory=list)  # the addresses of sites 2, 3, ... (--sites)

    @property
    def fwd(self):
        """The address each site's ranks connect to, in site order."""
        return [self.fwd_a, self.fwd_b] + self.more


def _listen_args(specs):
    out = []
    for s in specs:
        out += ["--listen", s]
    return out


def plan(o, work, self_dir):
    """The bridge nodes of this run (list of Bridge) and whether zipper-run starts them."""
    k = int(o.zippers)
    port = int(o.port) if o.port else 0
    bridges = []
    for i in range(1, k + 1):
        if o.mode == "emulated":
            a = addresses.parse_addr(f"{emulation_topology.zipper_addr('A', i)}:{port}")
            b = addresses.parse_addr(f"{emulation_topology.zipper_addr('B', i)}:{port}")
            br = Bridge(i, a, b, "clusterA1", "clusterB1")
            listen = [f"A={a.listen}", f"B={b.listen}"]
        elif o.mode == "local" and o.site_table:
            # A leg per site: the zipperd of this bridge node joins them all.
            n = len(o.site_list)
            legs = [addresses.parse_addr(f"127.0.0.1:{port + (i - 1) * n + s}") for s in range(n)]
            br = Bridge(i, legs[0], legs[1], more=legs[2:])
            listen = [f"{name}={a.listen}" for (name, _), a in zip(o.site_list, legs)]
        elif o.mode == "local" and not o.fwd_a:
            a = addresses.parse_addr(f"127.0.0.1:{port + i - 1}")
            br = Bridge(i, a, a)
            listen = [f"A={a.listen}"]
        else:  # local with explicit forwarders, or cluster
            a, b = o.fwd_a[i - 1], o.fwd_b[i - 1]
            br = Bridge(i, a, b)
            listen = [f"A={a.listen}"]
            if o.mode == "cluster" or b.listen != a.listen:
                listen.append(f"B={b.listen}")
        if o.zipperd_listen:
            listen = list(o.zipperd_listen)
        sfx = "" if k == 1 else f"-{i}"
        br.pidfile = os.path.join(work, f"zipperd{sfx}.pid")
        if o.zipperd_log:
            br.log = o.zipperd_log if k == 1 else f"{o.zipperd_log}.{i}"
            br.log_is_default = False
        else:
            br.log = os.path.join(work, f"zipperd{sfx}.log")
        br.listen = listen
        bridges.append(br)

    will_start = not (o.standalone or o.no_zipperd) and (o.mode != "cluster" or bool(o.zipper_host))
    if not will_start:
        return bridges, False, None
    if o.mode == "cluster":
        zbin = o.zipperd or os.environ.get("ZIPPERD") or "zipperd"  # a path on that host
        br = bridges[0]
        br.cmd = (["exec", zbin] + _listen_args(br.listen) + ["--pid-file", "@DIR@/zipperd.pid",
                                                              "--host-key", "@DIR@/host_key"]
                  + o.zipperd_args)
        return bridges, True, zbin
    zbin = find_bin("zipperd", o.zipperd, "ZIPPERD", self_dir)
    if zbin is None and o.dry_run:
        say("warning: zipperd not found (use --zipperd PATH or set $ZIPPERD)")
        zbin = "zipperd"
    for br in bridges:
        pre = ["ip", "netns", "exec", emulation_topology.zipper_ns(br.index, k)] if o.mode == "emulated" else []
        br.node = emulation_topology.zipper_ns(br.index, k) if o.mode == "emulated" else ""
        # A host key of this run in the private directory (not one zipperd
        # would make in memory and only log): docs/security.md.
        key = ["--host-key", os.path.join(work, f"host_key.{br.index}")]
        br.cmd = (pre + [zbin or "zipperd"] + _listen_args(br.listen) + ["--pid-file", br.pidfile]
                  + key + o.zipperd_args)
    return bridges, True, zbin


def probe_addr(ns, addr, vrank):
    """probe.probe() for one address, from inside netns `ns` if given."""
    if addr.scheme != "tcp":
        return probe.NOTHING, "verbs listener (not probed)"
    if not ns:
        return probe.probe(addr.host, addr.port, vrank)
    r = subprocess.run(["ip", "netns", "exec", ns, sys.executable, _PROBE_SCRIPT, addr.host,
                        str(addr.port), str(vrank)], stdout=subprocess.PIPE,
                       stderr=subprocess.DEVNULL, text=True, timeout=10, check=False)
    return (r.returncode if r.returncode in (0, 1, 2) else probe.NOTHING), r.stdout.strip()


def _holder(ns, port):
    """The process holding TCP `port` (in netns `ns`), described, or ""."""
    if not ns:
        return port_holder.holder(port)
    try:
        r = subprocess.run(["ip", "netns", "exec", ns, sys.executable, _HOLDER_SCRIPT, str(port)],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                           timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return r.stdout.strip()


def port_taken(addr, ns="", remote=""):
    """The one-line error for a forwarder address someone else listens on
    (zipper-run never uses a listener it did not start; a process
    already on the port is what OpenSSH calls a changed host key)."""
    who = "" if remote else _holder(ns, addr.port)
    where = f" on {remote}" if remote else ""
    return Fatal(f"port {addr.port} is already taken at {addr.text}{where}"
                 f"{' by ' + who if who else ''}; zipper-run starts its own zipperd and never "
                 f"uses a listener it did not start: stop that process or choose another --port "
                 f"(a site zipperd: --no-zipperd with its key, --forwarder-keys)")


def check_free(br, remote=""):
    """Fatal unless nothing listens on any of bridge node br's addresses."""
    probes = [(br.fwd_a, br.probe_ns_a, 0), (br.fwd_b, br.probe_ns_b, 1)] + [(a, "", 1) for a in br.more]
    for addr, ns, vrank in probes:
        verdict, _ = probe_addr(ns, addr, vrank)
        if verdict != probe.NOTHING:
            # The holder's socket is in the bridge node's namespace (emulated).
            raise port_taken(addr, br.node or ns, remote)


def show_log(path, lines=None):
    try:
        with open(path, errors="replace") as f:
            text = f.read().splitlines()
    except OSError:
        return
    for line in text[-lines:] if lines else text:
        print(f"  | {line}", file=sys.stderr)


def _ssh(o):
    return o.ssh.split()


def _ssh_run(o, script, timeout=60):
    return subprocess.run(_ssh(o) + ["-n", o.zipper_host, script], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, timeout=timeout, check=False)


def _remote_mkdtemp(o):
    r = _ssh_run(o, 'umask 077 && mktemp -d "${TMPDIR:-/tmp}/zipperd.XXXXXXXXXX"')
    d = r.stdout.strip()
    if r.returncode != 0 or not re.fullmatch(r"/[A-Za-z0-9_./-]+", d) or ".." in d:
        raise Fatal(f"cannot create a private directory on {o.zipper_host} "
                    f"(mktemp -d: {r.stderr.strip() or d or 'no output'})")
    return d


def _remote_identity(o, br, zbin):
    """(pid, exe, start time) of the zipperd zipper-run started: the remote shell
    wrote its own pid ($$) into the private directory before exec'ing zipperd, so
    zipperd's own pid file is never trusted. Fatal unless that process runs the
    zipperd binary."""
    d = quote_cmd([br.remote_dir])
    r = _ssh_run(o, f'p=$(cat {d}/launched.pid) && case $p in ""|*[!0-9]*) exit 3;; esac && '
                    f'echo "$p" && readlink /proc/$p/exe && sed "s/.*) //" /proc/$p/stat | cut -d" " -f20 && '
                    f'readlink -f "$(command -v {quote_cmd([zbin])})"')
    f = r.stdout.split("\n")
    if r.returncode != 0 or len(f) < 4 or not f[0].isdigit() or not f[2].isdigit():
        raise Fatal(f"zipperd on {o.zipper_host}: the process zipper-run started is gone")
    if f[1] != f[3]:
        raise Fatal(f"zipperd on {o.zipper_host}: pid {f[0]} runs '{f[1]}', not '{f[3]}'; "
                    "not using (or signalling) it")
    return (f[0], f[1], f[2])


def start(o, bridges, zbin):
    """Start every bridge node's zipperd; Fatal when an address is taken
    already. (A signal meanwhile raises supervise.Interrupted out of here.)"""
    for br in bridges:  # every address first: a taken one starts nothing
        check_free(br, o.zipper_host if o.mode == "cluster" else "")
    for br in bridges:
        if o.mode != "cluster" and not zbin:
            raise Fatal("zipperd not found: pass --zipperd PATH, set $ZIPPERD, put it next to "
                        "zipper-run or in PATH")
        _start_one(o, br)


def _zipperd_env():
    """zipper-run's environment without the job's secret: zipperd never needs it."""
    return {k: v for k, v in os.environ.items() if k not in ("MMPI_JOB_SECRET", "MMPI_JOB_SECRET_FILE")}


def _start_one(o, br):
    """Start br's zipperd and wait for its pid file (written once it listens)."""
    remote = o.mode == "cluster"
    if remote:
        br.remote_dir = _remote_mkdtemp(o)
        script = quote_cmd(br.cmd[1:]).replace("@DIR@", br.remote_dir)
        d = quote_cmd([br.remote_dir])
        cmd = _ssh(o) + ["-n", o.zipper_host, f"echo $$ > {d}/launched.pid && exec {script}"]
    else:
        cmd = br.cmd
    say(f"starting zipperd: {quote_cmd(cmd)}")
    br.started = True
    try:
        logf = open(br.log, "ab")
    except OSError as e:
        raise Fatal(f"cannot write zipperd log '{br.log}': {e.strerror}") from None
    cg = emulation_cgroups.node_cgroup(br.node) if br.node else None
    # Signals wait until the child is recorded (cleanup must know it).
    old = signal.pthread_sigmask(signal.SIG_BLOCK, SIGNALS)
    try:
        with logf:
            # A session of its own: the terminal's SIGINT reaches zipper-run
            # only, which stops the ranks first, then zipperd.
            br.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=logf, stderr=logf,
                                       start_new_session=True, env=_zipperd_env(),
                                       preexec_fn=(lambda: emulation_cgroups.join_cgroup(cg)) if cg else None)
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)
    deadline = time.monotonic() + int(o.zipperd_wait)
    while True:
        if remote:
            if _ssh_run(o, f"test -s {quote_cmd([br.remote_dir + '/zipperd.pid'])}").returncode == 0:
                br.remote_id = _remote_identity(o, br, br.cmd[1])
                break
        elif os.path.isfile(br.pidfile) and os.path.getsize(br.pidfile) > 0:
            break
        if br.proc.poll() is not None:
            rc = br.proc.returncode
            br.proc, br.died = None, True
            say(f"zipperd exited during startup with status {rc}; its log ({br.log}):")
            show_log(br.log)
            br.log_shown = True
            raise Fatal("zipperd failed to start")
        if time.monotonic() >= deadline:
            say(f"zipperd did not write its pid file within {o.zipperd_wait} s; its log ({br.log}):")
            show_log(br.log)
            br.log_shown = True
            raise Fatal("zipperd failed to start")
        time.sleep(0.5 if remote else 0.05)
    say(f"zipperd running (pid {br.proc.pid}, log {br.log})")


_HEX64 = re.compile(r"[0-9a-f]{64}")


def _read_public_key(o, br):
    """The public half of the host key br's zipperd was started with (64 hex
    digits), or None when it was not started by this run or has none."""
    if not br.started or not br.cmd:
        return None
    if o.mode == "cluster":
        r = _ssh_run(o, f"cat {quote_cmd([br.remote_dir + '/host_key.pub'])}")
        text = r.stdout if r.returncode == 0 else ""
    else:
        i = max((j for j, a in enumerate(br.cmd) if a == "--host-key"), default=-1)  # the last wins
        if i < 0 or i + 1 >= len(br.cmd):
            return None
        try:
            with open(br.cmd[i + 1] + ".pub") as f:
                text = f.read()
        except OSError:
            return None
    m = _HEX64.search(text)
    return m.group(0) if m else None


def host_keys(o, bridges):
    """MMPI_FORWARDER_KEYS for this run: the host keys of every bridge node in
    order, all started by zipper-run (a --zipperd-arg --host-key of the
    user's wins over ours and is read the same way). Fatal when one cannot
    be read: ranks would refuse an unpinned forwarder anyway."""
    keys = [_read_public_key(o, br) for br in bridges]
    for br, k in zip(bridges, keys):
        if not k:
            raise Fatal(f"cannot read the host key of the zipperd started for {br.fwd_a.text}; "
                        "its ranks could not pin it")
    return keys


def _stop_remote(o, br):
    if br.remote_id:
        pid, exe, st = br.remote_id
        q = quote_cmd
        script = (f'p={pid}; [ "$(readlink /proc/$p/exe 2>/dev/null)" = {q([exe])} ] && '
                  f'[ "$(sed "s/.*) //" /proc/$p/stat 2>/dev/null | cut -d" " -f20)" = {st} ] || '
                  f'{{ echo "zipper-run: pid $p is not the zipperd this run started; not signalled" >&2; exit 3; }}; '
                  f'kill -TERM $p; for i in 1 2 3 4 5 6 7 8 9 10; do kill -0 $p 2>/dev/null || exit 0; sleep 0.5; done; '
                  f'[ "$(sed "s/.*) //" /proc/$p/stat 2>/dev/null | cut -d" " -f20)" = {st} ] && kill -KILL $p; exit 0')
        r = _ssh_run(o, script)
        if r.returncode == 3:
            say(r.stderr.strip().replace("zipper-run: ", "") or "remote zipperd not signalled")
    if br.remote_dir:
        d = quote_cmd([br.remote_dir])
        _ssh_run(o, f"rm -f {d}/zipperd.pid {d}/launched.pid {d}/host_key {d}/host_key.pub; rmdir {d}")


def _stop_step(br, proc):
    """Stop the per-job zipperd step by closing its standard input: each
    node's slurm_bridge.py then stops its zipperd and the step ends with
    status 0. SIGTERM to srun only when that takes too long (srun answers it
    with SIGKILL to the step's tasks)."""
    try:
        proc.stdin.close()
    except OSError:
        pass
    try:
        rc = proc.wait(timeout=2 * KILL_AFTER)
    except subprocess.TimeoutExpired:
        say(f"the zipperd step (srun) did not end within {2 * KILL_AFTER} s of the end of its input; "
            "stopping it with SIGTERM")
        proc.terminate()
        rc = wait_or_kill(proc, KILL_AFTER)
    rc = 128 - rc if rc < 0 else rc
    if rc != 0:
        say(f"the zipperd step (srun) ended with status {rc} at shutdown (log: {br.log})")


def stop(o, br):
    """Stop bridge node br's zipperd if zipper-run started it (TERM, KILL after 5 s)."""
    proc, br.proc = br.proc, None
    if o.mode == "cluster":
        try:
            _stop_remote(o, br)
        except (OSError, subprocess.TimeoutExpired):
            say(f"could not reach {o.zipper_host} to stop zipperd")
        if proc:
            if proc.poll() is None:
                proc.terminate()
            wait_or_kill(proc, KILL_AFTER)
        return
    if not proc:
        return
    if br.step:
        _stop_step(br, proc)
        return
    if proc.poll() is None:
        proc.terminate()
    rc = wait_or_kill(proc, KILL_AFTER)
    if rc == 137:
        say(f"zipperd did not stop within {KILL_AFTER} s of SIGTERM; killed it")
    elif rc not in (0, 143):
        say(f"zipperd exited with status {rc} at shutdown (log: {br.log})")
