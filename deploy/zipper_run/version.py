"""What CMake knew when it configured or installed zipper-run: the project
version and where libraries lie relative to zipper-run (build_info.py, written
by deploy/CMakeLists.txt; absent when run from the source tree)."""

import os

from .errors import Fatal

try:
    from .build_info import VERSION, LIB_DIRS  # generated
except ImportError:  # run from the source tree
    VERSION, LIB_DIRS = "unknown (not configured by CMake)", ("../lib", "../build/client")

TRANSPARENT_LIB = "libmmpi_transparent.so"  # Open MPI's; MPICH's is libmmpi_transparent-mpich.so


def transparent_lib(self_dir, mpi="openmpi"):
    """Absolute path of the transparent layer for --transparent: $MMPI_TRANSPARENT_LIB,
    else libmmpi_transparent.so beside libmmpi relative to zipper-run. Fatal if absent."""
    env = os.environ.get("MMPI_TRANSPARENT_LIB")
    if env:
        if not os.path.isfile(env):
            raise Fatal(f"--transparent: $MMPI_TRANSPARENT_LIB names '{env}', which is not a file")
        return os.path.abspath(env)
    tried = []
    name = TRANSPARENT_LIB if mpi == "openmpi" else f"libmmpi_transparent-{mpi}.so"
    for d in LIB_DIRS:
        p = os.path.normpath(os.path.join(self_dir, d, name))
        if os.path.isfile(p):
            return p
        tried.append(p)
    raise Fatal(f"--transparent: {name} not found (looked for {', '.join(tried)}); "
                "build or install it, or set $MMPI_TRANSPARENT_LIB to its path")
