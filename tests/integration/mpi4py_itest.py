#!/usr/bin/env python3
"""mpi4py, unmodified, across two clusters through libmmpi_transparent:
mpi4py's MPI module is loaded by Python with dlopen and binds its
MPI_ calls to the preloaded layer. Usage: mpi4py_itest.py mpi4py|mpi4py_finalize.
Rank 0 prints "PASS <test> <checks>" when every rank passed; any mismatch aborts.

mpi4py_finalize: communicators split, duplicated and left to
MPI_Finalize with attributes whose delete callbacks free other communicators
(mpi4py's own cleanup runs from MPI_COMM_SELF's delete callback); the job
must end with exit status 0 on every rank."""
import sys

from mpi4py import MPI


def main():
    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    checks = 0

    def check(ok, what):
        nonlocal checks
        checks += 1
        if not ok:
            print(f"FAIL mpi4py rank {rank}: {what}", flush=True)
            comm.Abort(1)

    check(size >= 2, f"world size {size}: the zipper world spans both clusters")
    check(comm.Get_name() == "MPI_COMM_WORLD", f"world name {comm.Get_name()!r}")
    # Every rank's number, summed and gathered, against the reference.
    total = comm.allreduce(rank + 1, op=MPI.SUM)
    check(total == size * (size + 1) // 2, f"allreduce {total}")
    ranks = comm.allgather(rank)
    check(ranks == list(range(size)), f"allgather {ranks}")
    # Ring of pickled objects and of raw buffers, across the cluster boundary.
    nxt, prv = (rank + 1) % size, (rank - 1) % size
    got = comm.sendrecv({"from": rank, "data": list(range(rank, rank + 100))}, dest=nxt,
                        source=prv)
    check(got == {"from": prv, "data": list(range(prv, prv + 100))}, f"ring object {got!r:.60}")
    buf = bytearray(1 << 20)
    out = bytes((rank * 7 + i) & 0xFF for i in range(256)) * 4096
    comm.Sendrecv(out, dest=nxt, recvbuf=buf, source=prv)
    want = bytes((prv * 7 + i) & 0xFF for i in range(256)) * 4096
    check(bytes(buf) == want, "1 MiB ring buffer: bytes differ")
    # A split spanning both clusters (even / odd ranks).
    sub = comm.Split(rank % 2, rank)
    check(sub.Get_size() == (size + 1 - rank % 2) // 2, f"split size {sub.Get_size()}")
    check(sub.allreduce(rank) == sum(range(rank % 2, size, 2)), "split allreduce")
    sub.Free()
    root_val = comm.bcast("zipper" if rank == 0 else None, root=0)
    check(root_val == "zipper", f"bcast {root_val!r}")
    comm.Barrier()
    all_checks = comm.reduce(checks, op=MPI.SUM, root=0)
    if rank == 0:
        print(f"PASS mpi4py {all_checks} checks on {size} ranks", flush=True)
    return 0


def finalize_test():
    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    dup = comm.Dup()
    split = comm.Split(rank % 2, rank)
    inner = split.Dup()
    freed = []

    def delete(c, keyval, value):
        # Frees another communicator from inside MPI_Finalize's deletions.
        if value is not None and value != MPI.COMM_NULL:
            value.Free()
        freed.append(keyval)

    key = MPI.Comm.Create_keyval(delete_fn=delete)
    split.Set_attr(key, inner)  # split's deletion frees inner
    MPI.COMM_SELF.Set_attr(key, None)
    ok = dup.allreduce(1) == size and split.Get_attr(key) is inner
    ok = ok and MPI.COMM_SELF.Get_attr(key) is None and split.allreduce(rank) == sum(
        range(rank % 2, size, 2))
    if not comm.allreduce(ok, op=MPI.LAND):
        print(f"FAIL mpi4py_finalize rank {rank}", flush=True)
        comm.Abort(1)
    if rank == 0:
        print(f"PASS mpi4py_finalize 4 checks on {size} ranks", flush=True)
    # dup, split and inner are left to MPI_Finalize.
    return 0


if __name__ == "__main__":
    sys.exit(finalize_test() if sys.argv[1:] == ["mpi4py_finalize"] else main())
