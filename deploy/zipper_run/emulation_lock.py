"""The emulation's lock: zipper-emulate holds it exclusively while it builds or
removes the namespaces; zipper-run waits while it is held (a half-built
topology)."""

import fcntl
import os
import time

from .emulation_shell import PROG, Error
from .emulation_topology import state_dir
from .errors import say


class Lock:
    """The exclusive emulation lock (zipper-run waits on it while we build)."""

    def __enter__(self):
        os.makedirs(state_dir(), exist_ok=True)
        self.fd = os.open(os.path.join(state_dir(), "lock"),
                          os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
        deadline = time.monotonic() + 60
        while True:
            try:
                fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return self
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise Error(f"could not lock {state_dir()}/lock within 60 s "
                                f"(another {PROG} running?)") from None
                time.sleep(0.1)

    def __exit__(self, *exc):
        os.close(self.fd)


def wait_unlocked(timeout=60):
    """Wait while a zipper-emulate up/down holds its lock (half-built topology)."""
    lock = os.path.join(state_dir(), "lock")
    try:
        fd = os.open(lock, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
                fcntl.flock(fd, fcntl.LOCK_UN)
                return
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    say(f"warning: {lock} still locked after {timeout} s")
                    return
                time.sleep(0.1)
    finally:
        os.close(fd)
