"""A real Slurm on the zipper emulation, for tests/launcher/slurm_test.py.

Brings up, under one private temporary directory (mode 0700):
- one munged with its own key and socket (a unix socket: the node
  namespaces share the file system, so every daemon and client reaches it);
- cluster "alpha": slurmctld in netns `zipper` (hostname zctl-alpha) and one
  slurmd per emulated node namespace (clusterA<i>, clusterB<i>, and `zipper`
  itself as the bridge node), each in a UTS namespace of its own with the
  node's hostname (`slurmd -N NAME`), its own spool, pid and log file;
  partitions `a`, `b` and `bridge` -- the heterogeneous-job cluster;
- cluster "beta": a second slurmctld (hostname zctl-beta, another port) and a
  second slurmd in each clusterB<i> namespace -- with alpha's partition `a`
  it is the second cluster of the two-allocation form (no slurmdbd: zipper-run
  takes the two job ids and one SLURM_CONF per cluster).

Slurm runs on a management Ethernet of its own, as on a real site: bridge
brM in netns `zipper` (the login and controller node, MGMT_ADDR) and a
second NIC mgmt0 in every node namespace (10.200.1.<i> for A, 10.200.2.<i>
for B); slurm.conf's NodeAddr are these. The cluster networks are untouched
(eth0, 10.201/10.202, ip_forward=0 in `zipper`): MPI stays on eth0
(btl_tcp_if_include) and zipper traffic goes through zipperd.

Everything is stopped and removed by stop(), whatever happened.
"""

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

MGMT_NET = "10.200"
MGMT_ADDR = f"{MGMT_NET}.0.1"
SUBNET = {"A": "10.201.0", "B": "10.202.0"}
CPUS_PER_NODE = 8  # declared (config_overrides): 3+5 ranks fit on 2+2 nodes


def _run(argv, check=True, **kw):
    r = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **kw)
    if check and r.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} failed ({r.returncode}): {r.stdout.strip()}")
    return r


def missing():
    """The reason Slurm cannot be brought up here, or None."""
    if os.geteuid() != 0:
        return "needs root (network namespaces, slurmd)"
    for b in ("slurmctld", "slurmd", "srun", "salloc", "sbatch", "scontrol", "munged", "ip", "unshare"):
        if not shutil.which(b):
            return f"{b} not installed (deploy/install-deps.sh installs slurmctld slurmd slurm-client munge)"
    return None


class Cluster:
    """One Slurm cluster of the emulation: its slurm.conf and daemons."""

    def __init__(self, name, base, ctld_port, slurmd_port, nodes, partitions, munge_socket):
        self.name = name
        self.dir = os.path.join(base, name)
        self.ctld_port = ctld_port
        self.slurmd_port = slurmd_port
        self.nodes = nodes  # [(netns, address)]
        self.partitions = partitions  # {name: [netns]}
        self.conf = os.path.join(self.dir, "slurm.conf")
        self.munge_socket = munge_socket
        self.procs = []
        self.tmp_fs = os.path.join(self.dir, "nodetmp")

    def write_conf(self):
        d = self.dir
        for sub in ("state", "spool", "nodetmp"):
            os.makedirs(os.path.join(d, sub), mode=0o700, exist_ok=True)
        lines = [
            f"ClusterName={self.name}",
            f"SlurmctldHost=zctl-{self.name}({MGMT_ADDR})",
            f"SlurmctldPort={self.ctld_port}",
            f"SlurmdPort={self.slurmd_port}",
            "SlurmUser=root", "SlurmdUser=root",
            "AuthType=auth/munge", "CredType=cred/munge",
            f"AuthInfo=socket={self.munge_socket}",
            f"StateSaveLocation={d}/state",
            f"TmpFS={self.tmp_fs}",
            f"SlurmdSpoolDir={d}/spool/%n",
            f"SlurmctldPidFile={d}/slurmctld.pid",
            f"SlurmdPidFile={d}/slurmd.%n.pid",
            f"SlurmctldLogFile={d}/slurmctld.log",
            f"SlurmdLogFile={d}/slurmd.%n.log",
            "ProctrackType=proctrack/linuxproc", "TaskPlugin=task/none",
            "JobAcctGatherType=jobacct_gather/none",
            "AccountingStorageType=accounting_storage/none",
            "JobCompType=jobcomp/none",
            "SelectType=select/cons_tres", "SelectTypeParameters=CR_Core",
            "SchedulerType=sched/backfill",
            "MpiDefault=none", "SwitchType=switch/none",
            "SlurmdParameters=config_overrides",
            "ReturnToService=2",
            "SlurmctldTimeout=30", "SlurmdTimeout=60", "MessageTimeout=20",
            "InactiveLimit=0", "KillWait=5", "MinJobAge=300",
            "SchedulerParameters=sched_interval=1",
        ]
        for ns, addr in self.nodes:
            lines.append(f"NodeName={ns} NodeAddr={addr} CPUs={CPUS_PER_NODE} Boards=1 "
                         f"SocketsPerBoard=1 CoresPerSocket={CPUS_PER_NODE} ThreadsPerCore=1 "
                         "RealMemory=1000 State=UNKNOWN")
        for i, (p, members) in enumerate(self.partitions.items()):
            lines.append(f"PartitionName={p} Nodes={','.join(members)} MaxTime=INFINITE "
                         f"State=UP{' Default=YES' if i == 0 else ''}")
        with open(self.conf, "w") as f:
            f.write("\n".join(lines) + "\n")

    def _spawn(self, ns, hostname, argv, log, node_tmp=False):
        """argv in netns `ns`, in a UTS namespace named `hostname`, its own session.
        node_tmp: TmpFS is the node's own directory (a bind mount in the mount
        namespace of `ip netns exec`), as /tmp is on a real node; Slurm's PMIx
        plugin makes its per-step directory there and would collide between
        nodes sharing one."""
        pre = ""
        if node_tmp:
            own = f"{self.tmp_fs}.{hostname}"
            os.makedirs(own, mode=0o755, exist_ok=True)
            pre = f"mount --bind {own} {self.tmp_fs} && "
        # `ip netns exec` mounts a fresh /sys without /sys/fs/cgroup, and
        # slurmd 22.05 will not start without a cgroup file system there: a
        # tmpfs makes it pick cgroup/v1 with no controller, which nothing
        # uses (proctrack/linuxproc, task/none).
        cmd = ["ip", "netns", "exec", ns, "unshare", "--uts", "sh", "-c",
               pre + 'hostname "$0" && mount -t tmpfs -o size=1m,mode=755 zipper-slurm /sys/fs/cgroup '
               '&& mkdir /sys/fs/cgroup/systemd && mount -t cgroup -o none,name=systemd zipper-slurm /sys/fs/cgroup/systemd && exec "$@"', hostname] + argv
        with open(log, "ab") as f:
            p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=f, stderr=f,
                                 start_new_session=True, env=self.env())
        self.procs.append(p)
        return p

    def env(self):
        e = dict(os.environ)
        e["SLURM_CONF"] = self.conf
        for k in list(e):
            if k.startswith("SLURM_") and k != "SLURM_CONF":
                del e[k]
        return e

    @staticmethod
    def client(argv):
        """argv run on the login node (netns `zipper`), which reaches the controllers."""
        return ["ip", "netns", "exec", "zipper"] + list(argv)

    def start(self):
        self._spawn("zipper", f"zctl-{self.name}", ["slurmctld", "-D", "-f", self.conf],
                    os.path.join(self.dir, "slurmctld.out"))
        for ns, _ in self.nodes:
            os.makedirs(os.path.join(self.dir, "spool", ns), mode=0o700, exist_ok=True)
            self._spawn(ns, ns, ["slurmd", "-D", "-N", ns, "-f", self.conf],
                        os.path.join(self.dir, f"slurmd.{ns}.out"), node_tmp=True)

    def wait_idle(self, timeout=60):
        """Until every node is idle; RuntimeError with the daemons' logs if not."""
        deadline = time.monotonic() + timeout
        out = ""
        while time.monotonic() < deadline:
            for p in self.procs:
                if p.poll() is not None:
                    raise RuntimeError(f"a {self.name} daemon exited ({p.args[-3:]}): {self.logs()}")
            r = _run(self.client(["sinfo", "-h", "-N", "-o", "%N %t"]), check=False, env=self.env())
            out = r.stdout.strip()
            states = [ln.split() for ln in out.splitlines() if ln.strip()]
            if r.returncode == 0 and len({s[0] for s in states}) == len(self.nodes) and \
                    all(s[1] == "idle" for s in states):
                return
            time.sleep(0.3)
        raise RuntimeError(f"cluster {self.name}: nodes not idle within {timeout} s: {out}\n{self.logs()}")

    def logs(self, lines=15):
        out = []
        for name in sorted(os.listdir(self.dir)):
            if name.endswith((".log", ".out")):
                try:
                    with open(os.path.join(self.dir, name), errors="replace") as f:
                        tail = f.read().splitlines()[-lines:]
                except OSError:
                    continue
                out.append(f"--- {self.name}/{name}\n" + "\n".join(tail))
        return "\n".join(out)

    def stop(self):
        for p in self.procs:
            if p.poll() is None:
                try:
                    os.killpg(p.pid, signal.SIGTERM)
                except OSError:
                    pass
        deadline = time.monotonic() + 10
        for p in self.procs:
            try:
                p.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                try:
                    os.killpg(p.pid, signal.SIGKILL)
                except OSError:
                    pass
                p.wait()


class SlurmEmulation:
    """munged + clusters alpha and beta on an emulation of nodes_a + nodes_b nodes."""

    def __init__(self, bin_dir, nodes_a=2, nodes_b=2):
        self.bin = bin_dir
        self.nodes_a, self.nodes_b = nodes_a, nodes_b
        self.base = ""
        self.munged = None
        self.alpha = self.beta = None
        self.links = []  # in netns zipper, deleted at stop()
        self.emulation_made = False

    def _emulate(self, *args):
        return _run([os.path.join(self.bin, "zipper-emulate")] + list(args), check=False)

    def start(self):
        self.base = tempfile.mkdtemp(prefix="zipper-slurm.")
        os.chmod(self.base, 0o755)  # slurmd's spools are 0700 below; ranks run as root
        st = self._emulate("status")
        up = st.returncode == 0
        if not up or f"clusterA{self.nodes_a}" not in st.stdout or f"clusterB{self.nodes_b}" not in st.stdout \
                or "zipper1" in st.stdout:
            r = self._emulate("up", "--nodes-a", str(self.nodes_a), "--nodes-b", str(self.nodes_b))
            if r.returncode != 0:
                raise RuntimeError(f"zipper-emulate up failed: {r.stdout.strip()}")
        self._mgmt_network()
        self._start_munged()
        mg = self.mgmt_addrs()
        a = [(f"clusterA{i}", mg[f"clusterA{i}"]) for i in range(1, self.nodes_a + 1)]
        b = [(f"clusterB{i}", mg[f"clusterB{i}"]) for i in range(1, self.nodes_b + 1)]
        bridge = [("zipper", MGMT_ADDR)]
        sock = os.path.join(self.base, "munge", "munge.socket")
        self.alpha = Cluster("alpha", self.base, 16817, 16818, a + b + bridge,
                             {"a": [n for n, _ in a], "b": [n for n, _ in b], "bridge": ["zipper"]}, sock)
        self.beta = Cluster("beta", self.base, 16827, 16828, b, {"b": [n for n, _ in b]}, sock)
        for c in (self.alpha, self.beta):
            os.makedirs(c.dir, mode=0o755)
            c.write_conf()
        for c in (self.alpha, self.beta):
            c.start()
        for c in (self.alpha, self.beta):
            c.wait_idle()

    def _mgmt_network(self):
        """The management Ethernet a site's Slurm runs on: bridge brM in netns
        `zipper` (the login and controller node, MGMT_ADDR), a second NIC
        mgmt0 in every node namespace. Slurm's own traffic (srun, slurmd,
        slurmstepd, PMIx) goes there, as on a real site; MPI keeps to eth0
        (btl_tcp_if_include) and zipper traffic to the bridge addresses."""
        _run(["ip", "-n", "zipper", "link", "add", "brM", "type", "bridge"])
        self.links.append("brM")
        _run(["ip", "-n", "zipper", "addr", "add", f"{MGMT_ADDR}/16", "dev", "brM"])
        _run(["ip", "-n", "zipper", "link", "set", "brM", "up"])
        for ns, addr in self.mgmt_addrs().items():
            port = "m" + ns.replace("cluster", "")
            _run(["ip", "-n", "zipper", "link", "add", port, "type", "veth", "peer", "name", "mgmt0",
                  "netns", ns])
            self.links.append(port)
            _run(["ip", "-n", "zipper", "link", "set", port, "master", "brM", "up"])
            _run(["ip", "-n", ns, "addr", "add", f"{addr}/16", "dev", "mgmt0"])
            _run(["ip", "-n", ns, "link", "set", "mgmt0", "up"])

    def mgmt_addrs(self):
        """Management address of every node namespace but `zipper` (MGMT_ADDR)."""
        out = {f"clusterA{i}": f"{MGMT_NET}.1.{i}" for i in range(1, self.nodes_a + 1)}
        out.update({f"clusterB{i}": f"{MGMT_NET}.2.{i}" for i in range(1, self.nodes_b + 1)})
        return out

    def _start_munged(self):
        d = os.path.join(self.base, "munge")
        os.makedirs(d, mode=0o700)
        key = os.path.join(d, "munge.key")
        fd = os.open(key, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        os.write(fd, os.urandom(1024))
        os.close(fd)
        os.chmod(d, 0o755)  # the socket's directory must be searchable by clients
        sock = os.path.join(d, "munge.socket")
        self.munged = subprocess.Popen(
            ["munged", "--foreground", "--force", f"--socket={sock}", f"--key-file={key}",
             f"--pid-file={d}/munged.pid", f"--log-file={d}/munged.log", f"--seed-file={d}/munged.seed"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True)
        deadline = time.monotonic() + 10
        while not os.path.exists(sock):
            if self.munged.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"munged did not start: {open(d + '/munged.log').read()[-500:]}")
            time.sleep(0.05)

    def stop(self):
        for c in (self.beta, self.alpha):
            if c:
                c.stop()
        if self.munged and self.munged.poll() is None:
            self.munged.terminate()
            try:
                self.munged.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.munged.kill()
                self.munged.wait()
        for link in reversed(self.links):  # a veth's peer goes with it
            _run(["ip", "-n", "zipper", "link", "del", link], check=False)
        if self.base:
            shutil.rmtree(self.base, ignore_errors=True)

    def logs(self):
        return "\n".join(c.logs() for c in (self.alpha, self.beta) if c)


if __name__ == "__main__":  # manual use: bring it up, print the confs, wait for Enter
    emu = SlurmEmulation(sys.argv[1])
    try:
        emu.start()
        print(f"up: SLURM_CONF={emu.alpha.conf} (alpha), {emu.beta.conf} (beta)", flush=True)
        input()
    finally:
        emu.stop()
