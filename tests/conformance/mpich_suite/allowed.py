"""Tests that the MPI standard lets differ between a native run and a run
across the clusters, each with its reason. They still run and are shown in
the tables; a difference here does not fail the runner. Programs that need
MPI-4.0 are found when they do not build against Open MPI 4.1 (MPI-3.1) and
are listed with the identifiers they lack (build.MPI4_NAMES).

Keys are regular expressions matched (re.search) against a test's name,
`dir/program args`.
"""

import re

ALLOWED = {
    # MPI-3.1 section 10: dynamic process management stays refused across the
    # clusters: zipper spans two Open MPI jobs joined by
    # its own links, and connect/accept between jobs cannot cross the bridge.
    r"^spawn/": "dynamic processes (MPI-3.1 ch. 10) are refused across the clusters by design",
}

# Runs that cannot finish at some splits by the program's own design, natively
# as well: each cluster is a node here, and these programs assume every node
# holds at least two of the job's processes. Keys as above; the value is
# (predicate on the split (x, y), reason). Such runs are listed as not run,
# with the reason, instead of being run into the timeout.
NOT_RUN_AT_SPLIT = {
    # A rank whose MPI_COMM_TYPE_SHARED communicator has one member jumps to
    # its exit without joining MPI_Win_create(MPI_COMM_WORLD), so the other
    # ranks wait in it for ever (natively too, with one rank on a node).
    r"^rma/win_shared_create_(allocshm|no_allocshm)$": (
        lambda x, y: min(x, y) < 2,
        "the program skips MPI_Win_create(MPI_COMM_WORLD) on a rank alone on its node "
        "(shared-memory communicator of 1), so it hangs natively too with a node of 1 rank",
    ),
}


def not_run_at_split(name, split):
    """The reason `name` (dir/program args) cannot finish at split (x, y), or ""."""
    for rx, (cannot, why) in NOT_RUN_AT_SPLIT.items():
        if re.search(rx, name) and cannot(*split):
            return f"at {split[0]}+{split[1]}: {why}"
    return ""


# Reasons for entries that are not run at all (never silently dropped).
NOT_RUN_STRICT = "uses non-standard MPICH extensions (testlist strict=false)"
NOT_RUN_ONE = "1 process: nothing crosses the clusters (not split)"
