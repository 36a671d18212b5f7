#include "scan_runs.h"

#include "pending.h"
#include "rank_runs.h"
#include "tags.h"
#include "typed_buffer.h"
#include "uniform_blocks.h"

namespace zipper::coll {

int scan_runs(const Topology& t, const void* sendbuf, void* recvbuf, int count, MPI_Datatype type,
              MPI_Op op, bool exclusive) {
  const bool leader = t.local_rank == 0;
  const MPI_Aint block = MPI_Aint{t.local_size} * count;
  TypedBuffer all(leader ? block : 0, type), prefix(leader ? block : 0, type);
  // Native steps wait through wait_native (pending.h): progress meanwhile.
  MPI_Request req = MPI_REQUEST_NULL;
  if (int rc = wait_native(
          t, MPI_Igather(sendbuf, count, type, all.data(), count, type, 0, t.local, &req), &req))
    return rc;
  if (leader) {
    const std::vector<Run> runs = rank_runs(t);
    const int ntheirs = count_runs(runs, false);
    TypedBuffer theirs(MPI_Aint{ntheirs} * count, type);
    if (!t.standalone()) {
      const int nmine = count_runs(runs, true);
      TypedBuffer mine(MPI_Aint{nmine} * count, type);
      if (int rc = reduce_local_runs(t, runs, all.data(), mine.data(), count, type, op)) return rc;
      // Runs x count may pass INT_MAX elements: UniformBlocks.
      const UniformBlocks in(ntheirs, count, type), out(nmine, count, type);
      if (int rc = in.status() ? in.status() : out.status()) return rc;
      Pending p(t);
      p.irecv(theirs.data(), in.elements(ntheirs), in.unit(), t.remote_member(0), kTagScan);
      p.isend(mine.data(), out.elements(nmine), out.unit(), t.remote_member(0), kTagScan);
      if (int rc = p.wait()) return rc;
    }
    // acc = reduction of every rank before the one being visited.
    TypedBuffer acc(count, type), tmp(count, type);
    bool defined = false;
    MPI_Aint k = 0;
    for (const Run& run : runs) {
      if (!run.local) {
        const void* x = elem(theirs.data(), k++ * count, type);
        if (int rc = fold_right(acc.data(), &defined, x, tmp.data(), count, type, op)) return rc;
        continue;
      }
      for (int r = run.first; r <= run.last; ++r) {
        const MPI_Aint at = MPI_Aint{t.index_in_cluster(r)} * count;
        if (exclusive && defined)
          if (int rc = copy_typed(acc.data(), elem(prefix.data(), at, type), count, type))
            return rc;
        const void* x = elem(all.data(), at, type);
        if (int rc = fold_right(acc.data(), &defined, x, tmp.data(), count, type, op)) return rc;
        if (!exclusive)
          if (int rc = copy_typed(acc.data(), elem(prefix.data(), at, type), count, type))
            return rc;
      }
    }
  }
  // Exscan: rank 0 keeps its recvbuf (the scatter still runs: it is collective).
  TypedBuffer ignored(exclusive && t.rank == 0 ? count : 0, type);
  void* out = exclusive && t.rank == 0 ? ignored.data() : recvbuf;
  return wait_native(
      t, MPI_Iscatter(prefix.data(), count, type, out, count, type, 0, t.local, &req), &req);
}

}  // namespace zipper::coll
