#include "reduce_rank_order.h"

#include "combine.h"
#include "pending.h"
#include "rank_runs.h"
#include "tags.h"
#include "typed_buffer.h"
#include "uniform_blocks.h"

namespace zipper::coll {

namespace {

// Both leaders end with all runs folded in rank order.
int fold_runs(const Topology& t, const std::vector<Run>& runs, const void* mine, const void* theirs,
              void* result, int count, MPI_Datatype type, MPI_Op op) {
  TypedBuffer tmp(count, type);
  bool defined = false;
  MPI_Aint km = 0, kt = 0;
  for (const Run& run : runs) {
    const void* x = run.local ? elem(mine, km++ * count, type) : elem(theirs, kt++ * count, type);
    if (int rc = fold_right(result, &defined, x, tmp.data(), count, type, op)) return rc;
  }
  return MPI_SUCCESS;
}

}  // namespace

int reduce_rank_order(const Topology& t, const void* sendbuf, void* result, int count,
                      MPI_Datatype type, MPI_Op op) {
  const bool leader = t.local_rank == 0;
  const std::vector<Run> runs = rank_runs(t);
  int commute = 0;
  MPI_Op_commutative(op, &commute);
  // Native steps wait through wait_native (pending.h): progress meanwhile.
  MPI_Request r = MPI_REQUEST_NULL;
  if (commute || runs.size() <= 2) {
    if (int rc = wait_native(t, MPI_Ireduce(sendbuf, result, count, type, op, 0, t.local, &r), &r))
      return rc;
    if (!leader || t.standalone()) return MPI_SUCCESS;
    Pending p(t);
    TypedBuffer theirs(count, type);
    p.irecv(theirs.data(), count, type, t.remote_member(0), kTagReduceRuns);
    p.isend(result, count, type, t.remote_member(0), kTagReduceRuns);
    if (int rc = p.wait()) return rc;
    // Runs: [mine, theirs] or [theirs, mine] (commutative: order is free).
    return combine(!t.is_local(0), result, theirs.data(), count, type, op);
  }
  TypedBuffer all(leader ? MPI_Aint{t.local_size} * count : 0, type);
  if (int rc = wait_native(
          t, MPI_Igather(sendbuf, count, type, all.data(), count, type, 0, t.local, &r), &r))
    return rc;
  if (!leader) return MPI_SUCCESS;
  const int nmine = count_runs(runs, true), ntheirs = count_runs(runs, false);
  TypedBuffer mine(MPI_Aint{nmine} * count, type), theirs(MPI_Aint{ntheirs} * count, type);
  if (int rc = reduce_local_runs(t, runs, all.data(), mine.data(), count, type, op)) return rc;
  // Runs x count may pass INT_MAX elements: UniformBlocks.
  const UniformBlocks in(ntheirs, count, type), out(nmine, count, type);
  if (int rc = in.status() ? in.status() : out.status()) return rc;
  Pending p(t);
  p.irecv(theirs.data(), in.elements(ntheirs), in.unit(), t.remote_member(0), kTagReduceRuns);
  p.isend(mine.data(), out.elements(nmine), out.unit(), t.remote_member(0), kTagReduceRuns);
  if (int rc = p.wait()) return rc;
  return fold_runs(t, runs, mine.data(), theirs.data(), result, count, type, op);
}

}  // namespace zipper::coll
