#!/usr/bin/env python3
"""h5py with the mpio driver (Debian's python3-h5py-mpi), unmodified: every
rank writes its slice of one shared dataset collectively and reads every
other rank's back. Usage: h5py_itest.py FILE"""
import os
import sys

os.environ.setdefault("HDF5_MPI", "ON")  # Debian's h5py picks its MPI build
from mpi4py import MPI  # noqa: E402
import h5py  # noqa: E402
import numpy as np  # noqa: E402

comm = MPI.COMM_WORLD
rank, n = comm.Get_rank(), comm.Get_size()
ROWS, COLS = 32, 50
with h5py.File(sys.argv[1], "w", driver="mpio", comm=comm) as f:
    d = f.create_dataset("shared", (n * ROWS, COLS), dtype="i8")
    f.attrs["ranks"] = n
    block = np.arange(rank * ROWS * COLS, (rank + 1) * ROWS * COLS, dtype="i8").reshape(ROWS, COLS)
    with d.collective:
        d[rank * ROWS:(rank + 1) * ROWS] = block
    f.flush()
    comm.Barrier()
    for k in range(1, n):
        o = (rank + k) % n
        got = d[o * ROWS:(o + 1) * ROWS]
        want = np.arange(o * ROWS * COLS, (o + 1) * ROWS * COLS, dtype="i8").reshape(ROWS, COLS)
        if not np.array_equal(got, want):
            print(f"FAIL rank {rank}: block of rank {o} differs", flush=True)
            comm.Abort(1)
comm.Barrier()
if rank == 0:
    print(f"PASS h5py {n} ranks", flush=True)
