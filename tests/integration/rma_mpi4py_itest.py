#!/usr/bin/env python3
"""mpi4py one-sided windows, unmodified: natively, or across the
clusters through libmmpi_transparent. Every rank checks what it holds
against a computed reference; any mismatch aborts the job. Rank 0 prints
"PASS rma_mpi4py <checks> checks on <size> ranks" and a "RESULT" line that
is the same for any layout of the same size (the driver compares it with a
native run's). Run with at least 2 ranks.

  fence     Win.Allocate: every rank puts rank + 1 into slot `rank` of every
            window (itself included) and accumulates (SUM) rank + 1 into slot
            `size`; after the fence slot i holds i + 1 and slot size the sum;
  lock      exclusive lock: 64 KiB put into the right neighbour's
            Win.Create window, checked by the target under a lock of itself;
            shared lock: Accumulate(SUM) of a 1000-element int64 array into
            rank 0 from every rank;
  lock_all  Get of every rank's slot-0 value, Flush_all, Unlock_all;
  fop       FETCH_AND_OP SUM 1, TICKETS times per rank, on the last rank:
            the tickets of all ranks are 0 .. size*TICKETS-1, each once;
  cas       Compare_and_swap increments of a counter on rank 0 (read with
            NO_OP, retried until the swap wins): the winning old values are
            0 .. size*TICKETS-1, each once.
"""
import sys

import mpi4py
import numpy as np

# Open MPI 4.1's osc/pt2pt (needed natively: osc/rdma over vader crashes in a
# compare-and-swap to self) refuses windows under MPI_THREAD_MULTIPLE,
# mpi4py's default; this program makes MPI calls from one thread only.
mpi4py.rc.thread_level = "serialized"
from mpi4py import MPI  # noqa: E402

TICKETS = 20


def main():
    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    checks = 0
    i64 = MPI.INT64_T

    def check(ok, what):
        nonlocal checks
        checks += 1
        if not ok:
            print(f"FAIL rma_mpi4py rank {rank}: {what}", flush=True)
            comm.Abort(1)

    check(size >= 2, f"world size {size}: run with at least 2 ranks")

    # fence: put and accumulate into every window
    win = MPI.Win.Allocate((size + 1) * 8, 8, comm=comm)
    mem = np.frombuffer(win.tomemory(), dtype=np.int64)
    win.Fence()
    mem[:] = 0
    win.Fence()
    me = np.array([rank + 1], dtype=np.int64)
    for t in range(size):
        win.Put([me, i64], t, target=[rank, 1, i64])
        win.Accumulate([me, i64], t, target=[size, 1, i64], op=MPI.SUM)
    win.Fence()
    want = list(range(1, size + 1)) + [size * (size + 1) // 2]
    check(mem.tolist() == want, f"fence window {mem.tolist()} != {want}")
    win.Fence(MPI.MODE_NOSUCCEED)
    flavor = win.Get_attr(MPI.WIN_CREATE_FLAVOR)
    check(flavor == MPI.WIN_FLAVOR_ALLOCATE, f"WIN_CREATE_FLAVOR {flavor}")
    win.Free()

    # lock: exclusive put of 64 KiB to the right neighbour, Win.Create
    nbytes = 64 << 10
    local = bytearray(nbytes)
    win = MPI.Win.Create(local, 1, comm=comm)
    right, left = (rank + 1) % size, (rank - 1) % size
    data = bytes((rank * 31 + i * 7) & 0xFF for i in range(nbytes))
    win.Lock(right, MPI.LOCK_EXCLUSIVE)
    win.Put([data, MPI.BYTE], right)
    win.Unlock(right)
    comm.Barrier()
    win.Lock(rank, MPI.LOCK_EXCLUSIVE)
    got = bytes(local)
    win.Unlock(rank)
    want_b = bytes((left * 31 + i * 7) & 0xFF for i in range(nbytes))
    check(got == want_b, f"64 KiB put from rank {left}: "
          f"{sum(a != b for a, b in zip(got, want_b))} bytes differ")
    win.Free()

    # lock (shared): passive-target accumulate into rank 0
    n = 1000
    acc = np.zeros(n, dtype=np.int64)
    win = MPI.Win.Create(acc, 8, comm=comm)
    contrib = np.arange(n, dtype=np.int64) * (rank + 1)
    win.Lock(0, MPI.LOCK_SHARED)
    win.Accumulate([contrib, i64], 0, op=MPI.SUM)
    win.Unlock(0)
    comm.Barrier()
    if rank == 0:
        win.Lock(0, MPI.LOCK_EXCLUSIVE)
        total = acc.copy()
        win.Unlock(0)
        want_a = np.arange(n, dtype=np.int64) * (size * (size + 1) // 2)
        check(np.array_equal(total, want_a), f"accumulated {total[:4]}... != {want_a[:4]}...")
    win.Free()

    # lock_all: get every rank's value
    vals = np.array([1000 + rank * rank], dtype=np.int64)
    win = MPI.Win.Create(vals, 8, comm=comm)
    comm.Barrier()
    out = np.full(size, -1, dtype=np.int64)
    win.Lock_all()
    for t in range(size):
        win.Get([out[t:t + 1], i64], t)
    win.Flush_all()
    win.Unlock_all()
    want_g = [1000 + t * t for t in range(size)]
    check(out.tolist() == want_g, f"lock_all gets {out.tolist()} != {want_g}")
    comm.Barrier()
    win.Free()

    # fetch-and-op tickets on the last rank, compare-and-swap on rank 0
    ctr = np.zeros(2, dtype=np.int64)
    win = MPI.Win.Create(ctr, 8, comm=comm)
    comm.Barrier()
    one, res = np.ones(1, dtype=np.int64), np.zeros(1, dtype=np.int64)
    fop, cas = [], []
    win.Lock_all()
    for _ in range(TICKETS):
        win.Fetch_and_op([one, i64], [res, i64], size - 1, 0, op=MPI.SUM)
        win.Flush(size - 1)
        fop.append(int(res[0]))
    cur, new, old = (np.zeros(1, dtype=np.int64) for _ in range(3))
    retries = 0
    for _ in range(TICKETS):
        win.Fetch_and_op([one, i64], [cur, i64], 0, 1, op=MPI.NO_OP)
        win.Flush(0)
        while True:
            new[0] = cur[0] + 1
            win.Compare_and_swap([new, i64], [cur, i64], [old, i64], 0, 1)
            win.Flush(0)
            if old[0] == cur[0]:
                break
            cur[0] = old[0]
            retries += 1
        cas.append(int(cur[0]))
    win.Unlock_all()
    comm.Barrier()
    all_fop = sorted(sum(comm.allgather(fop), []))
    all_cas = sorted(sum(comm.allgather(cas), []))
    check(all_fop == list(range(size * TICKETS)), f"fetch_and_op tickets {all_fop[:8]}...")
    check(all_cas == list(range(size * TICKETS)), f"compare_and_swap values {all_cas[:8]}...")
    win.Lock(rank, MPI.LOCK_SHARED)
    final = ctr.tolist()
    win.Unlock(rank)
    if rank == size - 1:
        check(final[0] == size * TICKETS, f"fetch_and_op counter {final[0]}")
    if rank == 0:
        check(final[1] == size * TICKETS, f"compare_and_swap counter {final[1]}")
    comm.Barrier()
    win.Free()

    total_checks = comm.reduce(checks, op=MPI.SUM, root=0)
    total_retries = comm.reduce(retries, op=MPI.SUM, root=0)
    if rank == 0:
        print(f"RESULT rma_mpi4py size={size} fence={want} counters={size * TICKETS}", flush=True)
        print(f"PASS rma_mpi4py {total_checks} checks on {size} ranks "
              f"(compare_and_swap retries: {total_retries})", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
