"""The machine's CPU count."""

import os


def ncpus():
    """CPUs of the machine (not of our affinity mask: inside taskset nproc says 1)."""
    return max(1, os.cpu_count() or 1)

