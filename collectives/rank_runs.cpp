#include "rank_runs.h"

#include "typed_buffer.h"

namespace zipper::coll {

std::vector<Run> rank_runs(int size, const std::function<bool(int)>& is_local) {
  std::vector<Run> runs;
  for (int r = 0; r < size; ++r) {
    const bool local = is_local(r);
    if (!runs.empty() && runs.back().local == local)
      runs.back().last = r;
    else
      runs.push_back(Run{r, r, local});
  }
  return runs;
}

std::vector<Run> rank_runs(const Topology& t) {
  return rank_runs(t.size, [&t](int r) { return t.is_local(r); });
}

int count_runs(const std::vector<Run>& runs, bool local) {
  int n = 0;
  for (const Run& run : runs) n += run.local == local;
  return n;
}

int fold_right(void* acc, bool* defined, const void* x, void* tmp, int count, MPI_Datatype type,
               MPI_Op op) {
  if (!*defined) {
    *defined = true;
    return copy_typed(x, acc, count, type);
  }
  if (count == 0) return MPI_SUCCESS;
  // MPI_Reduce_local(in, inout) computes inout = in (op) inout: acc must be
  // the left operand, so reduce into a copy of x and move the result back.
  if (int rc = copy_typed(x, tmp, count, type)) return rc;
  if (int rc = MPI_Reduce_local(acc, tmp, count, type, op)) return rc;
  return copy_typed(tmp, acc, count, type);
}

int reduce_local_runs(const Topology& t, const std::vector<Run>& runs, const void* all, void* out,
                      int count, MPI_Datatype type, MPI_Op op) {
  TypedBuffer tmp(count, type);
  MPI_Aint k = 0;
  for (const Run& run : runs) {
    if (!run.local) continue;
    void* acc = elem(out, k++ * count, type);
    bool defined = false;
    for (int r = run.first; r <= run.last; ++r) {
      const void* x = elem(all, MPI_Aint{t.index_in_cluster(r)} * count, type);
      if (int rc = fold_right(acc, &defined, x, tmp.data(), count, type, op)) return rc;
    }
  }
  return MPI_SUCCESS;
}

}  // namespace zipper::coll
