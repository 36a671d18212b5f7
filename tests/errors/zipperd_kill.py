#!/usr/bin/env python3
"""The zipperd-killed scenario: a 1+1 point-to-point loop
(mmpi_fault_itest) under `zipper-run --local`, with zipperd started apart
from zipper-run (as on a bridge node) and killed with SIGKILL mid-run.

  zipperd_kill.py BIN_DIR MODE      MODE: default | fatal | busy | return | user

default/fatal (MPI_ERRORS_ARE_FATAL): the job must exit non-zero within
--deadline seconds (5) of the kill, each rank saying once that it aborts, and
print at most --max-lines lines in all. busy: likewise, but the rank in
cluster B makes no MMPI call any more, so only cluster A aborts and
zipper-run must stop cluster B (run with --grace 1). return/user: the program itself checks
that every call after the failure returned an error (and that the user handler
ran once per failed call) and prints PASS per rank; the job exits 0.
Exit 0 on success, 1 with the reason and the job's output otherwise.
"""
import argparse
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(pred, seconds):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if pred():
            return True
        time.sleep(0.05)
    return pred()


def read(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("bin")
    ap.add_argument("mode", choices=("default", "fatal", "busy", "return", "user"))
    ap.add_argument("--deadline", type=float, default=5.0,
                    help="seconds from the kill to the job's end (fatal modes)")
    ap.add_argument("--max-lines", type=int, default=30,
                    help="most output lines of the whole job, both ranks and both mpiruns")
    a = ap.parse_args()
    fatal = a.mode in ("default", "fatal", "busy")
    grace = ["--grace", "1"] if a.mode == "busy" else []
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    with tempfile.TemporaryDirectory(prefix="zipperd-kill.") as d:
        port = free_port()
        addr = f"127.0.0.1:{port}"
        pidfile = os.path.join(d, "zipperd.pid")
        zlog = open(os.path.join(d, "zipperd.log"), "w")
        key = os.path.join(d, "host_key")  # pinned by the ranks
        zipperd = subprocess.Popen([os.path.join(a.bin, "zipperd"), "--listen", f"A={addr}",
                                    "--pid-file", pidfile, "--host-key", key],
                                   stdout=zlog, stderr=zlog, env=env)
        out_path, err_path = os.path.join(d, "job.out"), os.path.join(d, "job.err")
        job = None
        problems = []
        try:
            if not wait_for(lambda: os.path.exists(pidfile) and os.path.getsize(pidfile) > 0, 10):
                problems.append("zipperd wrote no pid file within 10 s")
                raise StopIteration
            with open(out_path, "w") as out, open(err_path, "w") as err:
                job = subprocess.Popen(
                    [os.path.join(a.bin, "zipper-run"), "--local", "--no-zipperd",
                     "--forwarder-keys", read(key + ".pub").strip(),
                     "--forwarder-a", addr, "--forwarder-b", addr, "-x", "1", "-y", "1",
                     "--timeout", "120", *grace, "--", os.path.join(a.bin, "mmpi_fault_itest"), a.mode],
                    stdout=out, stderr=err, env=env, start_new_session=True)
            if not wait_for(lambda: "LOOPING" in read(out_path) or job.poll() is not None, 90):
                problems.append("the loop did not start within 90 s")
                raise StopIteration
            if job.poll() is not None:
                problems.append(f"the job ended before zipperd was killed (status {job.returncode})")
                raise StopIteration
            time.sleep(0.3)
            zipperd.send_signal(signal.SIGKILL)
            killed = time.monotonic()
            zipperd.wait()
            try:
                rc = job.wait(timeout=90)
            except subprocess.TimeoutExpired:
                problems.append("the job still runs 90 s after zipperd was killed")
                raise StopIteration
            took = time.monotonic() - killed
            out, err = read(out_path), read(err_path)
            lines = len(out.splitlines()) + len(err.splitlines())
            print(f"zipperd_kill {a.mode}: job exit status {rc}, {took:.1f} s after the kill, "
                  f"{lines} output lines")
            if lines > a.max_lines:
                problems.append(f"{lines} output lines (at most {a.max_lines})")
            if fatal:
                if rc == 0:
                    problems.append("the job exited 0 after a fatal error")
                if took > a.deadline:
                    problems.append(f"the job took {took:.1f} s to end (at most {a.deadline} s)")
                aborts = err.count("MPI_ERRORS_ARE_FATAL: aborting the job")
                want = (1, 1) if a.mode == "busy" else (1, 2)
                if not want[0] <= aborts <= want[1]:
                    problems.append(f"{aborts} 'aborting the job' lines (one per rank that "
                                    f"saw the failure: {want[0]} to {want[1]})")
                if "PASS" in out or "FAIL" in err:
                    problems.append("the program went on after a fatal error")
            else:
                if rc != 0:
                    problems.append(f"the job exited {rc}")
                for r in (0, 1):
                    if f"PASS {a.mode} rank {r}" not in out:
                        problems.append(f"no 'PASS {a.mode} rank {r}' line")
        except StopIteration:
            pass
        finally:
            if job is not None and job.poll() is None:
                os.killpg(job.pid, signal.SIGKILL)
                job.wait()
            if zipperd.poll() is None:
                zipperd.kill()
                zipperd.wait()
            zlog.close()
        if problems:
            for p in problems:
                print(f"zipperd_kill {a.mode}: FAIL: {p}")
            for name in ("job.out", "job.err", "zipperd.log"):
                print(f"--- {name}")
                print(read(os.path.join(d, name))[-6000:])
            return 1
        print(f"--- job output\n{read(out_path)}{read(err_path)}")
        print(f"zipperd_kill {a.mode}: OK")
        return 0


if __name__ == "__main__":
    sys.exit(main())
