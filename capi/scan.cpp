// C entry points of the prefix reductions, scan and exscan (MPI-3.1 5.11):
// checked as in capi/collectives.cpp, then one of two algorithms, chosen by
// MMPI_SCAN_ALGORITHM and the layout (collectives/scan_carry.h, scan_runs.h).
#include <mmpi.h>
#include <mmpi_impl_generated.h>

#include <cstdio>

#include "../client/runtime.h"
#include "../collectives/rank_runs.h"
#include "../collectives/scan_carry.h"
#include "../collectives/scan_runs.h"
#include "coll_checks.h"
#include "many_sites.h"

using namespace zipper::capi;
using zipper::coll::Topology;

namespace {

int scan_entry(const char* what, const void* sendbuf, void* recvbuf, int count,
               MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, bool exclusive) {
  Topology t;
  if (int rc = enter(comm, &t)) return rc;
  if (beyond_two_sites(t))
    return run_schedule(exclusive ? mmpi_impl_Iexscan : mmpi_impl_Iscan, sendbuf, recvbuf, count,
                        datatype, op, comm);
  if (int rc = check_buf(count, datatype)) return rc;
  if (int rc = check_op(op)) return rc;
  if (recvbuf == MPI_IN_PLACE) return MPI_ERR_BUFFER;
  // In place: the input is recvbuf, which the leaders' gather reads before
  // the final scatter writes it.
  const void* in = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
  // MMPI_SCAN_ALGORITHM=runs (client/settings.h) asks for the run-wise fold
  // whatever the layout.
  const zipper::client::Runtime* rt = zipper::client::Runtime::get();
  const auto& calls = rt->settings().calls;
  // One run per cluster (MMPI_COMM_WORLD): native scans plus one carry;
  // interleaved clusters: the run-wise fold at the leaders.
  const bool carry = !calls.scan_runs && zipper::coll::rank_runs(t).size() <= 2;
  // MMPI_LOG_LEVEL=debug: the choice, on the communicator's rank 0, so that
  // a run (and the itests) can see which algorithm the settings gave.
  if (t.rank == 0 && calls.debug_log)
    std::fprintf(stderr, "mmpi[rank %d]: debug: %s algorithm %s\n", rt->rank(), what,
                 carry ? "scan_carry" : "scan_runs");
  if (carry)
    return finish_named(what, "scan_carry", t,
                        zipper::coll::scan_carry(t, in, recvbuf, count, datatype, op, exclusive));
  return finish_named(what, "scan_runs", t,
                      zipper::coll::scan_runs(t, in, recvbuf, count, datatype, op, exclusive));
}

}  // namespace

extern "C" {

int mmpi_impl_Scan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                   MPI_Comm comm) {
  return scan_entry("MMPI_Scan", sendbuf, recvbuf, count, datatype, op, comm, false);
}

int mmpi_impl_Exscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype,
                     MPI_Op op, MPI_Comm comm) {
  return scan_entry("MMPI_Exscan", sendbuf, recvbuf, count, datatype, op, comm, true);
}

}  // extern "C"
