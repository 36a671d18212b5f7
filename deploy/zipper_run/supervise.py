"""Running every cluster (site): signals, --timeout, --grace, and the exit status.

Each cluster is one launcher process: an mpirun, or under --slurm an srun
step. Exit status: 0 if all exit 0, else the first non-zero one; 124 on
--timeout; 128+N when zipper-run got signal N (SIGINT, SIGTERM, SIGHUP are
forwarded to all as SIGTERM; a second signal sends SIGKILL).
"""

import os
import select
import signal
import time

from . import zipperd
from .errors import say
from .processes import KILL_AFTER, SIGNALS, status


class Interrupted(Exception):
    """A signal arrived before the ranks were started: exit 128+N after cleanup."""

    def __init__(self, signum):
        super().__init__(signum)
        self.code = 128 + signum


class Signals:
    """Signal handling in two phases: during setup a signal raises Interrupted;
    while the ranks run it is queued and wakes the supervisor's select()."""

    def __init__(self):
        self.running = False
        self.pending = []
        self.first = None
        self._r, self._w = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        signal.set_wakeup_fd(self._w, warn_on_full_buffer=False)
        for s in SIGNALS:
            signal.signal(s, self._handler)

    def _handler(self, signum, _frame):
        if self.first is None:
            self.first = signum
        if not self.running:
            raise Interrupted(signum)
        self.pending.append(signum)

    def ignore(self):
        """From cleanup on: signals no longer interrupt the stopping sequence."""
        for s in SIGNALS:
            signal.signal(s, signal.SIG_IGN)

    @property
    def fd(self):
        return self._r

    def drain(self):
        try:
            while os.read(self._r, 512):
                pass
        except BlockingIOError:
            pass
        out, self.pending = self.pending, []
        return out


def _pidfd(proc):
    try:
        return os.pidfd_open(proc.pid)
    except OSError:
        return None


def _term(procs, sig=signal.SIGTERM):
    for p in procs:
        if p.poll() is None:
            try:
                p.send_signal(sig)
            except OSError:
                pass


def _clusters(names):
    """'cluster A', or 'clusters B and C'."""
    names = sorted(names)
    if len(names) == 1:
        return f"cluster {names[0]}"
    return f"clusters {', '.join(names[:-1])} and {names[-1]}"


def _all(names):
    """'both clusters' (two), else 'all N clusters'."""
    return "both clusters" if len(names) == 2 else f"all {len(names)} clusters"


def _remaining(names, live):
    left = [n for n in names if n in live]
    return "cluster" if len(left) == 1 else f"{len(left)} clusters"


def supervise(o, clusters, bridges, sigs, rank_status=None):
    """Wait for the launchers of `clusters` ({'A': Popen, 'B': Popen}, or
    one per site by name) while watching our zipperd (`bridges`). Returns
    the exit status.
    rank_status(name): the status of the first failing rank of cluster
    `name`, when its launcher knows better than its own exit status (srun
    reports the highest status of all its tasks, such as 143 for the ranks
    it killed after the first one failed), else None."""
    live = dict(clusters)  # name -> Popen
    names = set(clusters)
    zipperds = {}  # name in `live` -> its bridge
    for br in bridges:
        if br.proc:
            zipperds[f"zipperd {br.index}"] = br
            live[f"zipperd {br.index}"] = br.proc
    fds = {name: _pidfd(p) for name, p in live.items()}
    rcs = {}
    now = time.monotonic
    timeout_at = now() + int(o.timeout) if int(o.timeout) else None
    grace_at = kill_at = None
    first_fail = None
    timed_out = terminating = False

    def launchers():
        return [p for n, p in live.items() if n in names]

    what = "srun step" if o.mode == "slurm" else "mpirun"

    try:
        while any(n in live for n in names):
            t = now()
            if timeout_at is not None and t >= timeout_at:
                timeout_at, timed_out, terminating = None, True, True
                say(f"timeout of {o.timeout} s reached; killing {_all(names)}")
                _term(launchers())
                kill_at = t + KILL_AFTER
            if grace_at is not None and t >= grace_at:
                grace_at, terminating = None, True
                say(f"killing the remaining {_remaining(names, live)} after a {o.grace} s grace period")
                _term(launchers())
                kill_at = t + KILL_AFTER
            if kill_at is not None and t >= kill_at:
                kill_at = None
                if any(p.poll() is None for p in launchers()):
                    say(f"{what} did not stop after SIGTERM; sending SIGKILL")
                _term(launchers(), signal.SIGKILL)
            for signum in sigs.drain():
                name = signal.Signals(signum).name
                if not terminating:
                    terminating = True
                    say(f"got {name}; stopping {_all(names)}")
                    _term(launchers())
                    kill_at = now() + KILL_AFTER
                else:
                    say(f"got {name} again; killing")
                    _term(launchers(), signal.SIGKILL)

            deadlines = [d for d in (timeout_at, grace_at, kill_at) if d is not None]
            wait = max(0.0, min(deadlines) - now()) if deadlines else 1.0
            watch = [sigs.fd] + [fd for fd in fds.values() if fd is not None]
            try:
                select.select(watch, [], [], min(wait, 1.0) + 0.001)
            except InterruptedError:
                pass
            for name, p in list(live.items()):
                rc = p.poll()
                if rc is None:
                    continue
                rc = status(rc)
                if rc != 0 and rank_status and name in names:
                    rc = rank_status(name) or rc
                del live[name]
                if fds.get(name) is not None:
                    os.close(fds.pop(name))
                if name in names:
                    rcs[name] = rc
                    others = sorted(n for n in names if n in live)
                    if rc != 0:
                        if first_fail is None:
                            first_fail = rc
                        if not terminating:
                            say(f"cluster {name} ({what}) exited with status {rc}")
                            if others and grace_at is None:
                                if int(o.grace) > 0:
                                    say(f"{_clusters(others)} {'gets' if len(others) == 1 else 'get'} "
                                        f"{o.grace} s to finish before {'it is' if len(others) == 1 else 'they are'} killed")
                                grace_at = now() + int(o.grace)
                else:
                    br = zipperds[name]
                    br.proc, br.died = None, True
                    if not terminating:
                        who = "the zipperd step (srun)" if br.step else "zipperd"
                        say(f"{who} exited unexpectedly with status {rc}; log ({br.log}):")
                        zipperd.show_log(br.log, 20)
                        # With other bridge nodes left the ranks fail over;
                        # with none, nothing crosses any more.
                        left = [b for b in bridges if not b.died]
                        if left:
                            say(f"{len(left)} of {len(bridges)} bridge nodes left: the ranks "
                                "move its traffic to the others")
                        elif grace_at is None:
                            grace_at = now() + int(o.grace)
    finally:
        for fd in fds.values():
            if fd is not None:
                os.close(fd)
    if timed_out:
        return 124
    if sigs.first is not None:
        return 128 + sigs.first
    return first_fail if first_fail is not None else 0
