"""Stopping child processes: the signals zipper-run passes on, the time
between SIGTERM and SIGKILL, and exit statuses as a shell reports them."""

import signal
import subprocess

KILL_AFTER = 5  # seconds between SIGTERM and SIGKILL
SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def status(rc):
    """Popen returncode as a shell would report it (128+N for signal N)."""
    return 128 - rc if rc < 0 else rc


def wait_or_kill(proc, seconds):
    """Wait for our child at most `seconds`, then SIGKILL it; returns its status (128+N on signal N)."""
    try:
        rc = proc.wait(timeout=seconds)
    except subprocess.TimeoutExpired:
        proc.kill()
        rc = proc.wait()
    return status(rc)
