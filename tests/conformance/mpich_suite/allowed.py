"""Tests that the MPI standard lets differ between a native run and a run
across the clusters, each with its reason. They still run and are shown in
the tables; a difference here does not fail the runner. Programs that need
MPI-4.0 are found when they do not build against Open MPI 4.1 (MPI-3.1) and
are listed with the identifiers they lack (build.MPI4_NAMES).

Keys are regular expressions matched (re.search) against a test's name,
`dir/program args`.
"""

ALLOWED = {
    # MPI-3.1 section 10: dynamic process management stays refused across the
    # clusters: zipper spans two Open MPI jobs joined by
    # its own links, and connect/accept between jobs cannot cross the bridge.
    r"^spawn/": "dynamic processes (MPI-3.1 ch. 10) are refused across the clusters by design",
}

# Reasons for entries that are not run at all (never silently dropped).
NOT_RUN_STRICT = "uses non-standard MPICH extensions (testlist strict=false)"
NOT_RUN_ONE = "1 process: nothing crosses the clusters (not split)"
