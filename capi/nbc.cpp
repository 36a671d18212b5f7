// C entry points of the non-blocking collectives (mmpi.h). Arguments are
// checked as for the blocking collectives (capi/collectives.cpp), then the
// call builds a schedule (collectives/schedule.h), starts its first round
// and returns an MMPI_Request of kind kProgressable; MMPI_Wait/Test and every
// other progressing call advance it. A failure to start aborts the job, as
// for the blocking collectives: the other ranks could not complete it.
#include <mmpi.h>
#include <mmpi_impl_generated.h>

#include <algorithm>
#include <map>
#include <memory>
#include <vector>

#include "../client/datatype.h"
#include "../collectives/byte_type.h"
#include "../collectives/nbc_barrier_dissemination.h"
#include "../collectives/nbc_bcast_binomial.h"
#include "../collectives/nbc_direct.h"
#include "../collectives/nbc_reduce_binomial.h"
#include "../collectives/nbc_scan_doubling.h"
#include "../collectives/packed_blocks.h"
#include "../collectives/schedule.h"
#include "../collectives/tags.h"
#include "../collectives/typed_buffer.h"
#include "../collectives/uniform_blocks.h"
#include "coll_checks.h"
#include "coll_table.h"
#include "intercomm.h"
#include "nbc_launch.h"

using namespace zipper::capi;
using zipper::client::Request;
using zipper::client::RequestKind;
using zipper::coll::Block;
using zipper::coll::elem;
using zipper::coll::Schedule;
using zipper::coll::Topology;
using zipper::coll::UniformBlocks;

namespace {

Block at(const void* buf, MPI_Aint index, int count, MPI_Datatype type) {
  return Block{const_cast<void*>(elem(buf, index, type)), count, type, true};
}

int check_request(MPI_Request* request) { return request == nullptr ? MPI_ERR_REQUEST : 0; }

// Ialltoallw's schedule once the arguments are checked; displacements in
// bytes as MPI_Aint, so that Ialltoallv's element displacements times the
// extent may pass 2 GiB. With MPI_IN_PLACE (sendbuf), what recvbuf holds now
// is snapshot packed per peer and sent as MPI_PACKED (which matches any type
// signature); a block of 2 GiB and more as one element of a byte type.
int start_alltoallw(const char* what, const Topology& t, const void* sendbuf,
                    const int sendcounts[], const MPI_Aint sdispls[],
                    const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                    const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                    MPI_Request* request) {
  auto s = nbc_schedule(t);
  std::vector<Block> sends(t.size), recvs(t.size);
  auto* out = static_cast<char*>(recvbuf);
  for (int r = 0; r < t.size; ++r)
    recvs[r] = Block{out + rdispls[r], recvcounts[r], recvtypes[r], true};
  if (sendbuf == MPI_IN_PLACE) {
    // Packed straight into the schedule's scratch: one snapshot, no copy.
    // This rank's own block stays where it is (no self copy).
    std::vector<MPI_Count> at(t.size + 1, 0);
    for (int r = 0; r < t.size; ++r)
      at[r + 1] =
          at[r] + (r == t.rank ? 0 : zipper::coll::packed_size(recvcounts[r], recvtypes[r]));
    recvs[t.rank].used = false;
    auto* copy = static_cast<char*>(s->scratch(static_cast<MPI_Aint>(at[t.size]), MPI_BYTE));
    for (int r = 0; r < t.size; ++r)
      if (at[r + 1] > at[r])
        if (int rc = zipper::client::pack_into(out + rdispls[r], recvcounts[r], recvtypes[r],
                                               reinterpret_cast<std::byte*>(copy + at[r]),
                                               at[r + 1] - at[r], MPI_COMM_SELF))
          return rc;
    for (int r = 0; r < t.size; ++r) {
      const zipper::coll::ByteType block(static_cast<MPI_Count>(at[r + 1] - at[r]), MPI_PACKED);
      if (int rc = block.status()) return rc;
      // keep(): the schedule's own duplicate outlives `block`.
      sends[r] = Block{copy + at[r], block.count(), s->keep(block.type()), r != t.rank};
    }
  } else {
    const auto* in = static_cast<const char*>(sendbuf);
    for (int r = 0; r < t.size; ++r)
      sends[r] = Block{const_cast<char*>(in) + sdispls[r], sendcounts[r], sendtypes[r], true};
  }
  zipper::coll::nbc_direct(*s, sends, recvs);
  return nbc_launch(what, std::move(s), request);
}

}  // namespace

// Igatherv and Iscatterv on an intra-communicator: one direct exchange with
// the root, this rank's own block on one side and the root's blocks on the
// other.
int zipper::capi::intra_irooted_v(const Rooted& a, int root, MPI_Comm comm, MPI_Request* request) {
  Topology t;
  if (int rc = enter(comm, &t)) return rc;
  if (int rc = check_request(request)) return rc;
  if (int rc = check_rooted_v(t, root, a)) return rc;
  const bool am_root = t.rank == root, in_place = a.in_place();
  auto s = nbc_schedule(t);
  std::vector<Block> sends(t.size), recvs(t.size);
  std::vector<Block>& own = a.to_root() ? sends : recvs;
  std::vector<Block>& all = a.to_root() ? recvs : sends;
  if (!in_place) own[root] = at(a.own, 0, a.own_count, a.own_type);
  if (am_root)
    for (int r = 0; r < t.size; ++r)
      if (r != root || !in_place) all[r] = at(a.all, a.displs[r], a.counts[r], a.all_type);
  zipper::coll::nbc_direct(*s, sends, recvs);
  return nbc_launch(a.to_root() ? "MMPI_Igatherv" : "MMPI_Iscatterv", std::move(s), request);
}

// Igather and Iscatter: Igatherv and Iscatterv with uniform blocks.
int zipper::capi::intra_irooted(const Rooted& a, int root, MPI_Comm comm, MPI_Request* request) {
  Topology t;
  if (int rc = enter(comm, &t)) return rc;
  if (int rc = check_root(t, root)) return rc;
  const bool am_root = t.rank == root;
  if (am_root && a.all_count < 0) return MPI_ERR_COUNT;
  // Significant at the root only; t.size * all_count may pass INT_MAX.
  const UniformBlocks b(t.size, am_root ? a.all_count : 0, a.all_type);
  if (int rc = b.status()) return rc;
  const std::vector<int> counts = b.counts(), displs = b.displacements();
  if (a.to_root())
    return mmpi_impl_Igatherv(a.sendbuf(), a.sendcount(), a.sendtype(), a.recvbuf(), counts.data(),
                              displs.data(), b.unit(), root, comm, request);
  return mmpi_impl_Iscatterv(a.sendbuf(), counts.data(), displs.data(), b.unit(), a.recvbuf(),
                             a.recvcount(), a.recvtype(), root, comm, request);
}

extern "C" {

int mmpi_impl_Ibarrier(MPI_Comm comm, MPI_Request* request) {
  if (is_intercomm(comm)) return inter_ibarrier(comm, request);  // capi/intercomm_coll.cpp
  Topology t;
  if (int rc = enter(comm, &t)) return rc;
  if (int rc = check_request(request)) return rc;
  auto s = nbc_schedule(t);
  zipper::coll::nbc_barrier_dissemination(*s);
  return nbc_launch("MMPI_Ibarrier", std::move(s), request);
}

int mmpi_impl_Ibcast(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
                     MPI_Request* request) {
  if (is_intercomm(comm))
    return inter_ibcast(buffer, count, datatype, root, comm, request);  // capi/intercomm_coll.cpp
  Topology t;
  if (int rc = enter(comm, &t)) return rc;
  if (int rc = check_request(request)) return rc;
  if (int rc = check_buf(count, datatype)) return rc;
  if (int rc = check_root(t, root)) return rc;
  if (buffer == MPI_IN_PLACE) return MPI_ERR_BUFFER;
  auto s = nbc_schedule(t);
  zipper::coll::nbc_bcast_binomial(*s, buffer, count, datatype, root);
  return nbc_launch("MMPI_Ibcast", std::move(s), request);
}

int mmpi_impl_Ireduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype,
                      MPI_Op op, int root, MPI_Comm comm, MPI_Request* request) {
  if (is_intercomm(comm))
    return inter_ireduce(sendbuf, recvbuf, count, datatype, op, root, comm,
                         request);  // capi/intercomm_coll.cpp
  Topology t;
  if (int rc = enter(comm, &t)) return rc;
  if (int rc = check_request(request)) return rc;
  if (int rc = check_buf(count, datatype)) return rc;
  if (int rc = check_op(op)) return rc;
  if (int rc = check_root(t, root)) return rc;
  if (sendbuf == MPI_IN_PLACE && t.rank != root) return MPI_ERR_BUFFER;
  auto s = nbc_schedule(t);
  const void* in = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
  zipper::coll::nbc_reduce_binomial(*s, in, recvbuf, count, datatype, op, root);
  return nbc_launch("MMPI_Ireduce", std::move(s), request);
}

int mmpi_impl_Iallreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype,
                         MPI_Op op, MPI_Comm comm, MPI_Request* request) {
  if (is_intercomm(comm))
    return inter_iallreduce(sendbuf, recvbuf, count, datatype, op, comm,
                            request);  // capi/intercomm_coll.cpp
  Topology t;
  if (int rc = enter(comm, &t)) return rc;
  if (int rc = check_request(request)) return rc;
  if (int rc = check_buf(count, datatype)) return rc;
  if (int rc = check_op(op)) return rc;
  if (recvbuf == MPI_IN_PLACE) return MPI_ERR_BUFFER;
  auto s = nbc_schedule(t);
  const void* in = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
  // Reduce to rank 0, then broadcast from it: rank order for any operation.
  zipper::coll::nbc_reduce_binomial(*s, in, recvbuf, count, datatype, op, 0);
  s->end_round();
  zipper::coll::nbc_bcast_binomial(*s, recvbuf, count, datatype, 0);
  return nbc_launch("MMPI_Iallreduce", std::move(s), request);
}

int mmpi_impl_Ialltoallw(const void* sendbuf, const int sendcounts[], const int sdispls[],
                         const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                         const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                         MPI_Request* request) {
  if (is_intercomm(comm))
    return inter_ialltoallw_int(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts,
                                rdispls, recvtypes, comm, request);  // capi/intercomm_coll.cpp
  Topology t;
  if (int rc = enter(comm, &t)) return rc;
  if (int rc = check_request(request)) return rc;
  if (int rc = check_alltoallw(t, sendbuf, sendcounts, sdispls, sendtypes, recvcounts, rdispls,
                               recvtypes))
    return rc;
  const bool in_place = sendbuf == MPI_IN_PLACE;
  std::vector<MPI_Aint> sd(t.size, 0), rd(t.size);
  for (int r = 0; r < t.size; ++r) {
    rd[r] = rdispls[r];
    if (!in_place) sd[r] = sdispls[r];
  }
  return start_alltoallw("MMPI_Ialltoallw", t, sendbuf, sendcounts, sd.data(), sendtypes, recvbuf,
                         recvcounts, rd.data(), recvtypes, request);
}

int mmpi_impl_Ialltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
                         MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                         const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                         MPI_Request* request) {
  if (is_intercomm(comm))
    return inter_ialltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                            recvtype, comm, request);  // capi/intercomm_coll.cpp
  Topology t;
  if (int rc = enter(comm, &t)) return rc;
  if (int rc = check_request(request)) return rc;
  const bool in_place = sendbuf == MPI_IN_PLACE;
  if (int rc = check_bufs(t.size, recvcounts, recvtype)) return rc;
  if (rdispls == nullptr) return MPI_ERR_ARG;
  if (!in_place) {
    if (int rc = check_bufs(t.size, sendcounts, sendtype)) return rc;
    if (sdispls == nullptr) return MPI_ERR_ARG;
  }
  // Byte displacements and per-peer types: the alltoallw case.
  const MPI_Aint rext = zipper::coll::extent_of(recvtype);
  const MPI_Aint sext = in_place ? 0 : zipper::coll::extent_of(sendtype);
  std::vector<MPI_Aint> sd(t.size, 0), rd(t.size);
  std::vector<MPI_Datatype> st(t.size, sendtype), rt(t.size, recvtype);
  for (int r = 0; r < t.size; ++r) {
    rd[r] = rdispls[r] * rext;
    if (!in_place) sd[r] = sdispls[r] * sext;
  }
  return start_alltoallw("MMPI_Ialltoallv", t, sendbuf, sendcounts, sd.data(), st.data(), recvbuf,
                         recvcounts, rd.data(), rt.data(), request);
}

int mmpi_impl_Ialltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                        int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  if (is_intercomm(comm))
    return inter_ialltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                           request);  // capi/intercomm_coll.cpp
  Topology t;
  if (int rc = enter(comm, &t)) return rc;
  if (int rc = check_request(request)) return rc;
  const bool in_place = sendbuf == MPI_IN_PLACE;
  if (int rc = check_buf(recvcount, recvtype)) return rc;
  if (!in_place)
    if (int rc = check_buf(sendcount, sendtype)) return rc;
  // t.size * count may pass INT_MAX elements: UniformBlocks (the schedule
  // keeps its own duplicate of a block type).
  const UniformBlocks sb(t.size, in_place ? 0 : sendcount, sendtype),
      rb(t.size, recvcount, recvtype);
  if (int rc = sb.status() ? sb.status() : rb.status()) return rc;
  const std::vector<int> sc = sb.counts(), sd = sb.displacements(), rc = rb.counts(),
                         rd = rb.displacements();
  return mmpi_impl_Ialltoallv(sendbuf, sc.data(), sd.data(), sb.unit(), recvbuf, rc.data(),
                              rd.data(), rb.unit(), comm, request);
}

int mmpi_impl_Igatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                       const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                       MPI_Comm comm, MPI_Request* request) {
  return collectives_of(comm).irooted_v(
      Rooted::gather(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, 0, recvtype), root,
      comm, request);
}

int mmpi_impl_Igather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                      int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                      MPI_Request* request) {
  return collectives_of(comm).irooted(
      Rooted::gather(sendbuf, sendcount, sendtype, recvbuf, nullptr, nullptr, recvcount, recvtype),
      root, comm, request);
}

int mmpi_impl_Iscatterv(const void* sendbuf, const int sendcounts[], const int displs[],
                        MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype,
                        int root, MPI_Comm comm, MPI_Request* request) {
  return collectives_of(comm).irooted_v(
      Rooted::scatter(sendbuf, sendcounts, displs, 0, sendtype, recvbuf, recvcount, recvtype), root,
      comm, request);
}

int mmpi_impl_Iscatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                       int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                       MPI_Request* request) {
  return collectives_of(comm).irooted(
      Rooted::scatter(sendbuf, nullptr, nullptr, sendcount, sendtype, recvbuf, recvcount, recvtype),
      root, comm, request);
}

int mmpi_impl_Iallgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                          const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                          MPI_Comm comm, MPI_Request* request) {
  if (is_intercomm(comm))
    return inter_iallgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, 0, recvtype,
                             comm, request);  // capi/intercomm_coll.cpp
  Topology t;
  if (int rc = enter(comm, &t)) return rc;
  if (int rc = check_request(request)) return rc;
  const bool in_place = sendbuf == MPI_IN_PLACE;
  if (!in_place)
    if (int rc = check_buf(sendcount, sendtype)) return rc;
  if (int rc = check_bufs(t.size, recvcounts, recvtype)) return rc;
  if (displs == nullptr) return MPI_ERR_ARG;
  if (recvbuf == MPI_IN_PLACE) return MPI_ERR_BUFFER;
  auto s = nbc_schedule(t);
  std::vector<Block> sends(t.size), recvs(t.size);
  const Block mine = in_place ? at(recvbuf, displs[t.rank], recvcounts[t.rank], recvtype)
                              : at(sendbuf, 0, sendcount, sendtype);
  for (int r = 0; r < t.size; ++r) {
    sends[r] = mine;
    if (r != t.rank || !in_place) recvs[r] = at(recvbuf, displs[r], recvcounts[r], recvtype);
  }
  zipper::coll::nbc_direct(*s, sends, recvs);
  return nbc_launch("MMPI_Iallgatherv", std::move(s), request);
}

int mmpi_impl_Iallgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                         int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                         MPI_Request* request) {
  if (is_intercomm(comm))
    return inter_iallgatherv(sendbuf, sendcount, sendtype, recvbuf, nullptr, nullptr, recvcount,
                             recvtype, comm, request);  // capi/intercomm_coll.cpp
  Topology t;
  if (int rc = enter(comm, &t)) return rc;
  if (recvcount < 0) return MPI_ERR_COUNT;
  // t.size * recvcount may pass INT_MAX elements.
  const UniformBlocks rb(t.size, recvcount, recvtype);
  if (int rc = rb.status()) return rc;
  const std::vector<int> counts = rb.counts(), displs = rb.displacements();
  return mmpi_impl_Iallgatherv(sendbuf, sendcount, sendtype, recvbuf, counts.data(), displs.data(),
                               rb.unit(), comm, request);
}

int mmpi_impl_Ireduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[],
                              MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                              MPI_Request* request) {
  if (is_intercomm(comm))
    return inter_ireduce_scatter(sendbuf, recvbuf, recvcounts, 0, datatype, op, comm,
                                 request);  // capi/intercomm_coll.cpp
  Topology t;
  if (int rc = enter(comm, &t)) return rc;
  if (int rc = check_request(request)) return rc;
  if (int rc = check_bufs(t.size, recvcounts, datatype)) return rc;
  if (int rc = check_op(op)) return rc;
  if (recvbuf == MPI_IN_PLACE) return MPI_ERR_BUFFER;
  // The whole vector may pass INT_MAX elements (nbc_reduce_binomial slices it).
  std::vector<MPI_Aint> offset(t.size + 1, 0);
  for (int r = 0; r < t.size; ++r) offset[r + 1] = offset[r] + recvcounts[r];
  auto s = nbc_schedule(t);
  // Reduce the whole vector to rank 0 in rank order, then scatter the blocks.
  void* full = s->scratch(t.rank == 0 ? offset[t.size] : 0, datatype);
  const void* in = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
  zipper::coll::nbc_reduce_binomial(*s, in, full, offset[t.size], datatype, op, 0);
  s->end_round();
  std::vector<Block> sends(t.size), recvs(t.size);
  recvs[0] = at(recvbuf, 0, recvcounts[t.rank], datatype);
  if (t.rank == 0)
    for (int r = 0; r < t.size; ++r) sends[r] = at(full, offset[r], recvcounts[r], datatype);
  zipper::coll::nbc_direct(*s, sends, recvs);
  return nbc_launch("MMPI_Ireduce_scatter", std::move(s), request);
}

int mmpi_impl_Ireduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount,
                                    MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                                    MPI_Request* request) {
  if (is_intercomm(comm))
    return inter_ireduce_scatter(sendbuf, recvbuf, nullptr, recvcount, datatype, op, comm,
                                 request);  // capi/intercomm_coll.cpp
  Topology t;
  if (int rc = enter(comm, &t)) return rc;
  if (recvcount < 0) return MPI_ERR_COUNT;
  std::vector<int> counts(t.size, recvcount);
  return mmpi_impl_Ireduce_scatter(sendbuf, recvbuf, counts.data(), datatype, op, comm, request);
}

static int iscan(const char* what, const void* sendbuf, void* recvbuf, int count,
                 MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request* request,
                 bool exclusive) {
  Topology t;
  if (int rc = enter(comm, &t)) return rc;
  if (int rc = check_request(request)) return rc;
  if (int rc = check_buf(count, datatype)) return rc;
  if (int rc = check_op(op)) return rc;
  if (recvbuf == MPI_IN_PLACE) return MPI_ERR_BUFFER;
  auto s = nbc_schedule(t);
  const void* in = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
  zipper::coll::nbc_scan_doubling(*s, in, recvbuf, count, datatype, op, exclusive);
  return nbc_launch(what, std::move(s), request);
}

int mmpi_impl_Iscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                    MPI_Comm comm, MPI_Request* request) {
  return iscan("MMPI_Iscan", sendbuf, recvbuf, count, datatype, op, comm, request, false);
}

int mmpi_impl_Iexscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype,
                      MPI_Op op, MPI_Comm comm, MPI_Request* request) {
  return iscan("MMPI_Iexscan", sendbuf, recvbuf, count, datatype, op, comm, request, true);
}

}  // extern "C"
