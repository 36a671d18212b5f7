"""The secrets of a --slurm run: the job secret (the caller's file or a fresh one)
and a fresh X25519 host key per bridge node for the per-job zipperd.

The job secret reaches the ranks through srun's standard input only
(zipper-slurm-rank puts it into a memfd): never in an environment variable, an
argument or a file. zipperd never gets it.
"""

import os
import secrets
import subprocess
import tempfile

from .errors import Fatal

SECRET_VARS = ("MMPI_JOB_SECRET", "MMPI_JOB_SECRET_FILE", "MMPI_JOB_SECRET_FD")


def refuse_exported_secret(environ):
    """Fatal when MMPI_JOB_SECRET is in the environment: Slurm saves the
    environment of every job (slurmctld's StateSaveLocation, slurmdbd with
    AccountingStoreFlags=job_env), so a secret there is on record."""
    if "MMPI_JOB_SECRET" in environ:
        raise Fatal("--slurm will not take MMPI_JOB_SECRET from the environment, which Slurm saves with "
                    "the job (slurmctld's state, slurmdbd's job_env): unset it and give the secret in a "
                    "mode-0600 file named by MMPI_JOB_SECRET_FILE, or let zipper-run make one")


def job_secret():
    """The job secret (64 hex digits): read from MMPI_JOB_SECRET_FILE, else a
    fresh one. (An exported MMPI_JOB_SECRET is refused first.)"""
    if os.environ.get("MMPI_JOB_SECRET_FILE"):
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
    Made here (libsodium, else `zipperd --print-host-key` in a private
    directory removed at once) so that the ranks can start with the keys
    pinned while the per-job zipperd starts."""
    out = []
    for i, node in enumerate(p.nodes, 1):
        sk = secrets.token_bytes(32)
        pk = _x25519_public(sk)
        if pk:
            out.append((sk.hex(), pk))
            continue
        with tempfile.TemporaryDirectory(prefix="zipper-run.") as d:
            path = os.path.join(d, "host_key")
            k = subprocess.run([zbin, "--print-host-key", "--host-key", path], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, timeout=30, check=False)
            if k.returncode != 0:
                raise Fatal(f"cannot make a host key for bridge node {node}: {k.stderr.strip()}")
            with open(path) as f:
                out.append((f.read().strip(), k.stdout.strip()))
    return out
