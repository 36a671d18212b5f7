"""Per-job zipperd on a bridge node of a heterogeneous job's component 2.

    python3 slurm_bridge.py ZIPPERD NODE,A_LISTEN,B_LISTEN [...] -- [ZIPPERD ARGS...]

`zipper-run --slurm` starts this with one task per node of component 2
(`srun --het-group=2 --ntasks-per-node=1 --input=all`). It finds its own node
($SLURMD_NODENAME, else the host name) in the NODE,A_LISTEN,B_LISTEN list
(from the site configuration, docs/slurm.md). Standard input carries one
line per bridge node, "NODE SECRET_KEY_HEX", then a line "END": zipper-run
made each node's host key for this job and already gave the public halves to
the ranks, so they start at once and connect when zipperd listens. The
node's key goes into a private directory (0700; the file 0600, O_EXCL);
zipperd is started listening at the node's addresses with it, and once its
pid file is written one line goes to stdout:

    READY NODE
    FAILED NODE REASON

Then the private directory is removed: zipperd holds the key in memory and
needs neither file again. srun answers a SIGTERM with SIGKILL to its tasks
and Slurm kills a step's processes at the end of a job, so nothing may wait
for a clean-up at the end: from READY on no file of the job is left on the
node, however the step ends.

zipper-run keeps standard input open while the job runs. Its end (EOF:
zipper-run closed it, or zipper-run and its srun are gone) stops zipperd
with SIGTERM, and this program exits with zipperd's status: the step ends
normally. SIGTERM/SIGINT/SIGHUP are passed to zipperd too. zipperd's own
output goes to stderr.
"""

# Only modules Python has already loaded at start (os, sys, signal, time, select is
# a built-in extension):
# this runs on the job's start-up path (srun, then this, then zipperd, while
# the ranks wait to connect), and re, subprocess, tempfile and shutil cost
# 25-40 ms of imports on a loaded host.
import os
import select
import signal
import sys
import time

WAIT_S = 15
HEX = frozenset("0123456789abcdef")


def pick(entries, node):
    """(a_listen, b_listen) of `node` among "NODE,A,B" entries, or None."""
    for e in entries:
        parts = e.split(",")
        if len(parts) == 3 and parts[0] == node:
            return parts[1], parts[2]
    return None


def private_dir():
    """A new 0700 directory under $TMPDIR (else /tmp), as tempfile.mkdtemp makes."""
    base = os.environ.get("TMPDIR") or "/tmp"
    for _ in range(100):
        path = os.path.join(base, "zipperd-job." + os.urandom(6).hex())
        try:
            os.mkdir(path, 0o700)
            return path
        except FileExistsError:
            continue
    raise OSError(f"cannot create a private directory in {base}")


def spawn(argv):
    """Starts argv with stdin from /dev/null and stdout onto our stderr; its pid."""
    actions = [(os.POSIX_SPAWN_OPEN, 0, "/dev/null", os.O_RDONLY, 0), (os.POSIX_SPAWN_DUP2, 2, 1)]
    return os.posix_spawn(argv[0], argv, os.environ, file_actions=actions)


def read_keys(fd):
    """Lines of standard input up to the line "END" (at most 1 MiB); what
    follows stays unread. All lines when input ends before "END"."""
    buf = b""
    while len(buf) < (1 << 20):
        lines = buf.split(b"\n")
        if b"END" in lines[:-1]:
            return [ln.decode(errors="replace") for ln in lines[:lines.index(b"END")]]
        chunk = os.read(fd, 65536)
        if not chunk:
            break
        buf += chunk
    return buf.decode(errors="replace").splitlines()


def remove_dir(path):
    """The private directory and what is in it (the key, zipperd's pid file and .pub)."""
    try:
        for name in os.listdir(path):
            os.unlink(os.path.join(path, name))
        os.rmdir(path)
    except FileNotFoundError:
        pass


def main(argv):
    if "--" not in argv or len(argv) < 3:
        print("usage: slurm_bridge.py ZIPPERD NODE,A,B [...] -- [ZIPPERD ARGS]", file=sys.stderr)
        return 2
    sep = argv.index("--")
    zipperd, entries, extra = argv[0], argv[1:sep], argv[sep + 1:]
    node = os.environ.get("SLURMD_NODENAME") or os.uname().nodename.split(".")[0]
    addrs = pick(entries, node)
    if addrs is None:
        print(f"FAILED {node} no addresses for this node in the site configuration", flush=True)
        return 1
    keys = {}
    for line in read_keys(0):
        f = line.split()
        if len(f) == 2 and len(f[1]) == 64 and set(f[1]) <= HEX:
            keys[f[0]] = f[1]
    if node not in keys:
        print(f"FAILED {node} no host key for this node on standard input", flush=True)
        return 1
    work = private_dir()
    key = os.path.join(work, "host_key")
    pid_file = os.path.join(work, "zipperd.pid")
    child = None
    status = None  # the child's wait status once reaped

    def reap(block):
        nonlocal status
        if status is None:
            pid, st = os.waitpid(child, 0 if block else os.WNOHANG)
            if pid == child:
                status = st
        return status

    def forward(signum, _frame):
        if child and status is None:
            os.kill(child, signum)

    for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(s, forward)
    try:
        fd = os.open(key, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(keys[node] + "\n")
        child = spawn([zipperd, "--listen", f"A={addrs[0]}", "--listen", f"B={addrs[1]}", "--pid-file",
                       pid_file, "--host-key", key] + extra)
        deadline = time.monotonic() + WAIT_S
        while not (os.path.isfile(pid_file) and os.path.getsize(pid_file) > 0):
            if reap(False) is not None:
                print(f"FAILED {node} zipperd exited with status {os.waitstatus_to_exitcode(status)}",
                      flush=True)
                return 1
            if time.monotonic() > deadline:
                print(f"FAILED {node} zipperd did not start within {WAIT_S} s", flush=True)
                os.kill(child, signal.SIGTERM)
                reap(True)
                return 1
            time.sleep(0.02)
        remove_dir(work)
        print(f"READY {node}", flush=True)
        wait_for_end(child, reap)
        rc = os.waitstatus_to_exitcode(status)
        return 128 - rc if rc < 0 else rc
    finally:
        if child and status is None:
            os.kill(child, signal.SIGKILL)
            reap(True)
        remove_dir(work)


def wait_for_end(child, reap):
    """Until zipperd ends; EOF on standard input (zipper-run is done, or gone)
    sends it SIGTERM, and SIGKILL WAIT_S seconds later."""
    pidfd = os.pidfd_open(child)
    watch = [pidfd, 0]
    kill_at = None
    try:
        while reap(False) is None:
            left = None if kill_at is None else max(0.0, kill_at - time.monotonic())
            try:
                ready = select.select(watch, [], [], left)[0]
            except InterruptedError:
                continue
            if 0 in ready and not os.read(0, 4096):
                watch.remove(0)
                os.kill(child, signal.SIGTERM)
                kill_at = time.monotonic() + WAIT_S
            elif kill_at is not None and time.monotonic() >= kill_at:
                os.kill(child, signal.SIGKILL)
                reap(True)
    finally:
        os.close(pidfd)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
