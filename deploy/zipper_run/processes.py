"""Stopping child processes: the signals zipper-run passes on, the time
between SIGTERM and SIGKILL, and exit statuses as a shell reports them."""

import os
import signal
import subprocess

KILL_AFTER = 5  # seconds between SIGTERM and SIGKILL
SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def status(rc):
    """Popen returncode as a shell would report it (128+N for signal N)."""
    return 128 - rc if rc < 0 else rc


def die_with_parent():
    """A Popen preexec_fn: the child gets SIGTERM when zipper-run ends in any
    way, SIGKILL included (prctl PR_SET_PDEATHSIG). For srun steps, which
    stop their tasks on SIGTERM: a killed zipper-run leaves no step running."""
    import ctypes

    prctl = ctypes.CDLL(None, use_errno=True).prctl
    parent = os.getpid()

    def preexec():
        prctl(1, int(signal.SIGTERM), 0, 0, 0)  # PR_SET_PDEATHSIG
        if os.getppid() != parent:  # it died before prctl
            os.kill(os.getpid(), signal.SIGTERM)

    return preexec


def wait_or_kill(proc, seconds):
    """Wait for our child at most `seconds`, then SIGKILL it; returns its status (128+N on signal N)."""
    try:
        rc = proc.wait(timeout=seconds)
    except subprocess.TimeoutExpired:
        proc.kill()
        rc = proc.wait()
    return status(rc)
