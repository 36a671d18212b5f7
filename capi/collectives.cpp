// The collective entry points of the C API (mmpi.h): MPI's argument checks, then the
// algorithm that selection picks. Arguments are checked before anything is
// communicated, so a bad call returns an error and changes nothing. A failure
// after communication began (a peer or zipperd gone) leaves the other ranks
// unable to finish the operation, so it aborts the job with a clear message,
// as MPI's default MPI_ERRORS_ARE_FATAL would.
#include "../collectives/collectives.h"

#include <mmpi.h>
#include <mmpi_impl_generated.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "../client/op_ref.h"
#include "../client/runtime.h"
#include "../collectives/allgather_two_level.h"
#include "../collectives/allreduce_rabenseifner.h"
#include "../collectives/allreduce_two_tier.h"
#include "../collectives/alltoallv_aggregated.h"
#include "../collectives/alltoallv_direct.h"
#include "../collectives/barrier_two_level.h"
#include "../collectives/bcast_farfirst.h"
#include "../collectives/bcast_vandegeijn.h"
#include "../collectives/gather_two_level.h"
#include "../collectives/reduce_in_order.h"
#include "../collectives/reduce_leaders.h"
#include "../collectives/reduce_scatter_leaders.h"
#include "../collectives/scatter_two_level.h"
#include "../collectives/selection.h"
#include "../collectives/topology.h"
#include "../collectives/typed_buffer.h"
#include "../collectives/uniform_blocks.h"
#include "coll_checks.h"
#include "coll_entry.h"
#include "coll_table.h"
#include "intercomm.h"
#include "many_sites.h"

using namespace zipper::coll;
using namespace zipper::capi;
using zipper::client::Runtime;

namespace {

// A non-commutative operation on a communicator whose clusters' ranks
// interleave: no cluster's partial result is a run of consecutive ranks, so
// only the linear in-order reduction gives MPI's evaluation order.
bool needs_rank_order(const Topology& t, MPI_Op op) {
  if (t.blocked()) return false;
  int commute = 1;
  MPI_Op_commutative(op, &commute);
  return !commute;
}

int allreduce_with(const Topology& t, Choice ch, const void* sendbuf, void* recvbuf, int count,
                   MPI_Datatype type, MPI_Op op) {
  if (needs_rank_order(t, op)) {
    if (int rc = reduce_in_order(t, sendbuf, recvbuf, count, type, op, 0)) return rc;
    return bcast_farfirst(t, recvbuf, count, type, 0);
  }
  if (ch.algorithm == Algorithm::kRabenseifner)
    return allreduce_rabenseifner(t, sendbuf, recvbuf, count, type, op,
                                  ch.inter_senders ? ch.inter_senders : t.max_senders(),
                                  ch.segment);
  return allreduce_two_tier(t, sendbuf, recvbuf, count, type, op, ch.segment);
}

}  // namespace

// Gather and Scatter on an intra-communicator: the two-level algorithm of
// the direction.
int zipper::capi::intra_rooted(const Rooted& a, int root, MPI_Comm comm) {
  Topology t;
  if (int rc = enter(comm, &t)) return rc;
  if (beyond_two_sites(t)) return run_schedule(intra_irooted, a, root, comm);
  if (int rc = check_rooted(t, root, a)) return rc;
  if (a.to_root()) {
    const Choice ch = selection().choose(Collective::kGather, 0, t.site_members);
    return finish("MMPI_Gather", t, ch,
                  gather_two_level(t, a.sendbuf(), a.sendcount(), a.sendtype(), a.recvbuf(),
                                   a.recvcount(), a.recvtype(), root));
  }
  const Choice ch = selection().choose(Collective::kScatter, 0, t.site_members);
  return finish("MMPI_Scatter", t, ch,
                scatter_two_level(t, a.sendbuf(), a.sendcount(), a.sendtype(), a.recvbuf(),
                                  a.recvcount(), a.recvtype(), root));
}

extern "C" {

int mmpi_impl_Barrier(MPI_Comm comm) {
  if (is_intercomm(comm)) {  // MPI-3.1 §5.2.2 (capi/intercomm_coll.cpp)
    MPI_Request r_ = MPI_REQUEST_NULL;
    return inter_wait(inter_ibarrier(comm, &r_), &r_);
  }
  Topology t;
  if (int rc = enter(comm, &t)) return rc;
  if (beyond_two_sites(t)) return run_schedule(mmpi_impl_Ibarrier, comm);
  const Choice ch = selection().choose(Collective::kBarrier, 0, t.site_members);
  return finish("MMPI_Barrier", t, ch, barrier_two_level(t));
}

int mmpi_impl_Bcast(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm) {
  if (is_intercomm(comm)) {  // MPI-3.1 §5.2.2 (capi/intercomm_coll.cpp)
    MPI_Request r_ = MPI_REQUEST_NULL;
    return inter_wait(inter_ibcast(buffer, count, datatype, root, comm, &r_), &r_);
  }
  Topology t;
  if (int rc = enter(comm, &t)) return rc;
  if (beyond_two_sites(t))
    return run_schedule(mmpi_impl_Ibcast, buffer, count, datatype, root, comm);
  if (int rc = check_buf(count, datatype)) return rc;
  if (root < 0 || root >= t.size) return MPI_ERR_ROOT;
  if (buffer == MPI_IN_PLACE) return MPI_ERR_BUFFER;
  Choice ch = selection().choose(Collective::kBcast, bytes_of(count, datatype), t.site_members);
  ch.inter_senders = senders(t, ch);
  const int rc =
      ch.algorithm == Algorithm::kVanDeGeijn
          ? bcast_vandegeijn(t, buffer, count, datatype, root, ch.inter_senders, ch.segment)
          : bcast_farfirst(t, buffer, count, datatype, root, ch.segment);
  return finish("MMPI_Bcast", t, ch, rc);
}

int mmpi_impl_Reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype,
                     MPI_Op op, int root, MPI_Comm comm) {
  if (is_intercomm(comm)) {  // MPI-3.1 §5.2.2 (capi/intercomm_coll.cpp)
    MPI_Request r_ = MPI_REQUEST_NULL;
    return inter_wait(inter_ireduce(sendbuf, recvbuf, count, datatype, op, root, comm, &r_), &r_);
  }
  Topology t;
  if (int rc = enter(comm, &t)) return rc;
  if (beyond_two_sites(t))
    return run_schedule(mmpi_impl_Ireduce, sendbuf, recvbuf, count, datatype, op, root, comm);
  if (int rc = check_buf(count, datatype)) return rc;
  if (op == MPI_OP_NULL) return MPI_ERR_OP;
  if (root < 0 || root >= t.size) return MPI_ERR_ROOT;
  if (sendbuf == MPI_IN_PLACE && t.rank != root) return MPI_ERR_BUFFER;
  const Choice ch =
      selection().choose(Collective::kReduce, bytes_of(count, datatype), t.site_members);
  const int rc = needs_rank_order(t, op)
                     ? reduce_in_order(t, sendbuf, recvbuf, count, datatype, op, root)
                     : reduce_leaders(t, sendbuf, recvbuf, count, datatype, op, root, ch.segment);
  return finish("MMPI_Reduce", t, ch, rc);
}

int mmpi_impl_Allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype,
                        MPI_Op op, MPI_Comm comm) {
  if (is_intercomm(comm)) {  // MPI-3.1 §5.2.2 (capi/intercomm_coll.cpp)
    MPI_Request r_ = MPI_REQUEST_NULL;
    return inter_wait(inter_iallreduce(sendbuf, recvbuf, count, datatype, op, comm, &r_), &r_);
  }
  Topology t;
  if (int rc = enter(comm, &t)) return rc;
  if (beyond_two_sites(t))
    return run_schedule(mmpi_impl_Iallreduce, sendbuf, recvbuf, count, datatype, op, comm);
  if (int rc = check_buf(count, datatype)) return rc;
  if (op == MPI_OP_NULL) return MPI_ERR_OP;
  Choice ch = selection().choose(Collective::kAllreduce, bytes_of(count, datatype), t.site_members);
  ch.inter_senders = senders(t, ch);
  return finish("MMPI_Allreduce", t, ch,
                allreduce_with(t, ch, sendbuf, recvbuf, count, datatype, op));
}

int mmpi_impl_Alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
                        MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                        const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm) {
  if (is_intercomm(comm)) {  // MPI-3.1 §5.2.2 (capi/intercomm_coll.cpp)
    MPI_Request r_ = MPI_REQUEST_NULL;
    return inter_wait(inter_ialltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                                       rdispls, recvtype, comm, &r_),
                      &r_);
  }
  Topology t;
  if (int rc = enter(comm, &t)) return rc;
  if (beyond_two_sites(t))
    return run_schedule(mmpi_impl_Ialltoallv, sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                        recvcounts, rdispls, recvtype, comm);
  if (int rc = check_type(recvtype)) return rc;
  const bool in_place = sendbuf == MPI_IN_PLACE;
  if (!in_place)
    if (int rc = check_type(sendtype)) return rc;
  for (int i = 0; i < t.size; ++i)
    if (recvcounts[i] < 0 || (!in_place && sendcounts[i] < 0)) return MPI_ERR_COUNT;
  // In place: the data to send is what recvbuf holds now.
  TypedBuffer copy;
  if (in_place) {
    MPI_Aint span = 0;
    for (int i = 0; i < t.size; ++i)
      if (recvcounts[i] > 0) span = std::max<MPI_Aint>(span, MPI_Aint{rdispls[i]} + recvcounts[i]);
    copy = TypedBuffer(span, recvtype);
    // span may pass INT_MAX elements (a displacement plus a count): in pieces.
    for (MPI_Aint at = 0; at < span; at += INT_MAX) {
      const int n = static_cast<int>(std::min<MPI_Aint>(INT_MAX, span - at));
      if (int rc =
              copy_typed(elem(recvbuf, at, recvtype), elem(copy.data(), at, recvtype), n, recvtype))
        return rc;
    }
    sendbuf = copy.data();
    sendcounts = recvcounts;
    sdispls = rdispls;
    sendtype = recvtype;
  }
  // The rules go by the largest block of any rank, but each rank knows only
  // its own: agree on it first (one 8-byte MAX allreduce) when the size
  // decides anything.
  std::uint64_t largest = 0;
  if (selection().depends_on_size(Collective::kAlltoallv, t.site_members)) {
    MPI_Count type_size = 0;
    MPI_Type_size_x(sendtype, &type_size);
    for (int i = 0; i < t.size; ++i)
      largest = std::max<std::uint64_t>(largest, std::uint64_t(sendcounts[i]) * type_size);
    const std::uint64_t mine = largest;
    if (int rc = allreduce_two_tier(t, &mine, &largest, 1, MPI_UINT64_T, MPI_MAX)) return rc;
  }
  Choice ch = selection().choose(Collective::kAlltoallv, largest, t.site_members);
  ch.inter_senders = senders(t, ch);
  const int rc =
      ch.algorithm == Algorithm::kAggregated
          ? alltoallv_aggregated(t, sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                                 rdispls, recvtype, ch.inter_senders, false, ch.segment)
          : alltoallv_direct(t, sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                             rdispls, recvtype);
  return finish("MMPI_Alltoallv", t, ch, rc);
}

int mmpi_impl_Alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                       int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  if (is_intercomm(comm)) {  // MPI-3.1 §5.2.2 (capi/intercomm_coll.cpp)
    MPI_Request r_ = MPI_REQUEST_NULL;
    return inter_wait(
        inter_ialltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, &r_),
        &r_);
  }
  Topology t;
  if (int rc = enter(comm, &t)) return rc;
  if (beyond_two_sites(t))
    return run_schedule(mmpi_impl_Ialltoall, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                        recvtype, comm);
  const bool in_place = sendbuf == MPI_IN_PLACE;
  if (int rc = check_buf(recvcount, recvtype)) return rc;
  if (!in_place)
    if (int rc = check_buf(sendcount, sendtype)) return rc;
  // Blocks as UniformBlocks: t.size * count may pass INT_MAX elements.
  const UniformBlocks rb(t.size, recvcount, recvtype);
  if (int rc = rb.status()) return rc;
  TypedBuffer copy;
  if (in_place) {
    copy = TypedBuffer(MPI_Aint{t.size} * recvcount, recvtype);
    if (int rc = copy_typed(recvbuf, copy.data(), rb.elements(t.size), rb.unit())) return rc;
    sendbuf = copy.data();
    sendcount = recvcount;
    sendtype = recvtype;
  }
  const UniformBlocks sb(t.size, sendcount, sendtype);
  if (int rc = sb.status()) return rc;
  const std::vector<int> sc = sb.counts(), sd = sb.displacements(), rc = rb.counts(),
                         rd = rb.displacements();
  Choice ch =
      selection().choose(Collective::kAlltoall, bytes_of(sendcount, sendtype), t.site_members);
  ch.inter_senders = senders(t, ch);
  const int err =
      ch.algorithm == Algorithm::kAggregated
          ? alltoallv_aggregated(t, sendbuf, sc.data(), sd.data(), sb.unit(), recvbuf, rc.data(),
                                 rd.data(), rb.unit(), ch.inter_senders, true, ch.segment)
          : alltoallv_direct(t, sendbuf, sc.data(), sd.data(), sb.unit(), recvbuf, rc.data(),
                             rd.data(), rb.unit());
  return finish("MMPI_Alltoall", t, ch, err);
}

int mmpi_impl_Gather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                     int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  return collectives_of(comm).rooted(
      Rooted::gather(sendbuf, sendcount, sendtype, recvbuf, nullptr, nullptr, recvcount, recvtype),
      root, comm);
}

int mmpi_impl_Scatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                      int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  return collectives_of(comm).rooted(
      Rooted::scatter(sendbuf, nullptr, nullptr, sendcount, sendtype, recvbuf, recvcount, recvtype),
      root, comm);
}

int mmpi_impl_Allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                        int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  if (is_intercomm(comm)) {  // MPI-3.1 §5.2.2 (capi/intercomm_coll.cpp)
    MPI_Request r_ = MPI_REQUEST_NULL;
    return inter_wait(inter_iallgatherv(sendbuf, sendcount, sendtype, recvbuf, nullptr, nullptr,
                                        recvcount, recvtype, comm, &r_),
                      &r_);
  }
  Topology t;
  if (int rc = enter(comm, &t)) return rc;
  if (beyond_two_sites(t))
    return run_schedule(mmpi_impl_Iallgather, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                        recvtype, comm);
  if (sendbuf != MPI_IN_PLACE)
    if (int rc = check_buf(sendcount, sendtype)) return rc;
  if (int rc = check_buf(recvcount, recvtype)) return rc;
  const Choice ch = selection().choose(Collective::kAllgather, 0, t.site_members);
  return finish("MMPI_Allgather", t, ch,
                allgather_two_level(t, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype));
}

int mmpi_impl_Reduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount,
                                   MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  if (is_intercomm(comm)) {  // MPI-3.1 §5.2.2 (capi/intercomm_coll.cpp)
    MPI_Request r_ = MPI_REQUEST_NULL;
    return inter_wait(
        inter_ireduce_scatter(sendbuf, recvbuf, nullptr, recvcount, datatype, op, comm, &r_), &r_);
  }
  Topology t;
  if (int rc = enter(comm, &t)) return rc;
  if (beyond_two_sites(t))
    return run_schedule(mmpi_impl_Ireduce_scatter_block, sendbuf, recvbuf, recvcount, datatype, op,
                        comm);
  if (int rc = check_buf(recvcount, datatype)) return rc;
  if (op == MPI_OP_NULL) return MPI_ERR_OP;
  const void* in = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
  // A vector past INT_MAX elements (an int count cannot describe it to the
  // allreduce): reduce_scatter_leaders, which reduces it in slices.
  if (MPI_Count{t.size} * recvcount > INT_MAX) {
    const std::vector<int> counts(t.size, recvcount);
    return finish_named("MMPI_Reduce_scatter_block", "reduce_scatter_leaders", t,
                        reduce_scatter_leaders(t, in, recvbuf, counts.data(), datatype, op));
  }
  // Algorithm via_allreduce: allreduce the whole vector (with the allreduce
  // selection), keep this rank's block.
  const int total = t.size * recvcount;
  Choice ch = selection().choose(Collective::kAllreduce, bytes_of(total, datatype), t.site_members);
  ch.inter_senders = senders(t, ch);
  TypedBuffer full(total, datatype);
  int rc = allreduce_with(t, ch, in, full.data(), total, datatype, op);
  if (rc == MPI_SUCCESS)
    rc = copy_typed(elem(full.data(), MPI_Aint{t.rank} * recvcount, datatype), recvbuf, recvcount,
                    datatype);
  return finish("MMPI_Reduce_scatter_block", t, ch, rc);
}

int MMPIX_Coll_set(const char* collective, const char* algorithm, int inter_senders) {
  if (Runtime::get() == nullptr) return MPI_ERR_OTHER;
  if (collective == nullptr || inter_senders < 0) return MPI_ERR_ARG;
  const auto c = collective_named(collective);
  if (!c) return MPI_ERR_ARG;
  if (algorithm == nullptr || *algorithm == '\0') {
    selection().set_override(*c, std::nullopt, 0);
    return MPI_SUCCESS;
  }
  const auto a = algorithm_named(*c, algorithm);
  if (!a) return MPI_ERR_ARG;
  selection().set_override(*c, *a, inter_senders);
  return MPI_SUCCESS;
}

int mmpi_impl_Op_create(MPI_User_function* user_fn, int commute, MPI_Op* op) {
  return MPI_Op_create(user_fn, commute, op);
}

// A non-blocking reduction still running holds the op (client/op_ref.h): its
// native free then waits for that operation to complete.
int mmpi_impl_Op_free(MPI_Op* op) {
  if (op == nullptr) return MPI_ERR_ARG;
  if (*op != MPI_OP_NULL && zipper::client::free_when_released(*op)) {
    *op = MPI_OP_NULL;
    return MPI_SUCCESS;
  }
  return MPI_Op_free(op);
}

}  // extern "C"
