"""A zipperd on loopback for zipper-bench scale and the load generator's
test: its own host key in a private temporary directory, listeners A (the
low group) and B (the high group) and /metrics on 127.0.0.1, stopped with
SIGTERM.

Ports: port=0 (the default) binds port 0 and reads the ports the kernel
chose back from zipperd's log ("listening on side A at ...", "metrics at
..."), so nothing races for a port; port=P uses P, P+1 (listeners) and P+2
(/metrics).
"""

import os
import re
import resource
import shutil
import signal
import subprocess
import tempfile
import time


class ZipperdError(RuntimeError):
    """zipperd did not start (its log's tail in the message)."""


class LocalZipperd:
    def __init__(self, zipperd, extra=(), port=0, fds=0, log_level="info"):
        """zipperd: path of the binary; extra: more zipperd options; fds:
        file descriptors it must be able to open (0: its default limit)."""
        self.zipperd = zipperd
        self.extra = list(extra)
        self.port = port
        self.fds = fds
        self.log_level = log_level
        self.dir = None
        self.proc = None
        self.low = self.high = self.metrics = None

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()

    def _limits(self):
        # Runs in the child before exec: raise its descriptor limit (root may
        # raise the hard limit too, up to fs.nr_open).
        if not self.fds:
            return
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        need = self.fds + 64
        if need > hard and os.geteuid() == 0:
            with open("/proc/sys/fs/nr_open") as f:
                hard = min(max(need, hard), int(f.read()))
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(max(need, soft), hard), hard))

    def start(self, timeout=20):
        self.dir = tempfile.mkdtemp(prefix="zipper-local-")  # 0700: the host key lives here
        p = self.port
        ports = (p, p + 1, p + 2) if p else (0, 0, 0)
        args = [self.zipperd,
                "--listen", f"A=127.0.0.1:{ports[0]}", "--listen", f"B=127.0.0.1:{ports[1]}",
                "--metrics-listen", f"127.0.0.1:{ports[2]}",
                "--host-key", os.path.join(self.dir, "host_key"),
                "--pid-file", os.path.join(self.dir, "zipperd.pid"),
                "--log-level", self.log_level] + self.extra
        self.log_path = os.path.join(self.dir, "zipperd.log")
        with open(self.log_path, "w") as log:
            self.proc = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT,
                                         stdin=subprocess.DEVNULL, preexec_fn=self._limits)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise ZipperdError(f"zipperd exited with status {self.proc.returncode} at "
                                   f"start:\n{self.log_tail()}")
            text = self.log()
            a = re.search(r"listening on side A at (?:tcp:)?(\S+)", text)
            b = re.search(r"listening on side B at (?:tcp:)?(\S+)", text)
            m = re.search(r"metrics at http://(\S+)/metrics", text)
            if a and b and m and os.path.exists(os.path.join(self.dir, "zipperd.pid")):
                self.low, self.high, self.metrics = a.group(1), b.group(1), m.group(1)
                return
            time.sleep(0.02)
        self.stop()
        raise ZipperdError(f"zipperd did not start within {timeout} s:\n{self.log_tail()}")

    def log(self):
        try:
            with open(self.log_path, errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    def log_tail(self, lines=20):
        return "\n".join(self.log().splitlines()[-lines:])

    @property
    def pid(self):
        return self.proc.pid

    @property
    def key_file(self):
        return os.path.join(self.dir, "host_key.pub")

    def loadgen_spec(self):
        """The value of zipper-loadgen's --zipperd for this zipperd."""
        return (f"low={self.low},high={self.high},key=@{self.key_file},pid={self.pid},"
                f"metrics={self.metrics}")

    def stop(self):
        """SIGTERM, then SIGKILL after 10 s; removes the key directory. The
        exit status stays in self.proc.returncode."""
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.dir:
            shutil.rmtree(self.dir, ignore_errors=True)
            self.dir = None
