// The mmpi_traffic_X wrappers that capi/gen's mmpi_pmpi.h maps libmmpi's
// native collective calls to (native_traffic.h). Each names PMPI_X itself:
// these are the calls into Open MPI.
#include "native_traffic.h"

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <numeric>
#include <optional>
#include <vector>

namespace zipper::client {

namespace {

std::atomic<TrafficProfile*> g_profile{nullptr};
int g_local_first = 0;
int g_keyval = MPI_KEYVAL_INVALID;
// Guards the attribute lookup and set: two threads must not both attach a
// table to one communicator (the second set would delete the first's table).
std::mutex g_tables_mu;

// A native communicator's ranks as virtual ranks (-1: outside this site's
// Open MPI world, not counted). Kept on the communicator as an attribute,
// so that it goes when the communicator is freed and a handle reused for a
// new communicator never finds a stale table.
using Table = std::vector<int>;

int delete_table(MPI_Comm, int, void* attr, void*) {
  delete static_cast<Table*>(attr);
  return MPI_SUCCESS;
}

const Table* table_of(MPI_Comm c) {
  std::lock_guard<std::mutex> g(g_tables_mu);
  void* v = nullptr;
  int flag = 0;
  if (PMPI_Comm_get_attr(c, g_keyval, &v, &flag) == MPI_SUCCESS && flag)
    return static_cast<const Table*>(v);
  auto t = std::make_unique<Table>();
  int inter = 0;
  PMPI_Comm_test_inter(c, &inter);
  if (!inter) {  // libmmpi runs native collectives on intra-communicators only
    int n = 0;
    PMPI_Comm_size(c, &n);
    std::vector<int> ranks(static_cast<std::size_t>(n)), world(ranks.size());
    std::iota(ranks.begin(), ranks.end(), 0);
    MPI_Group group = MPI_GROUP_NULL, world_group = MPI_GROUP_NULL;
    PMPI_Comm_group(c, &group);
    PMPI_Comm_group(MPI_COMM_WORLD, &world_group);
    PMPI_Group_translate_ranks(group, n, ranks.data(), world_group, world.data());
    PMPI_Group_free(&group);
    PMPI_Group_free(&world_group);
    t->resize(ranks.size());
    for (std::size_t i = 0; i < ranks.size(); ++i)
      (*t)[i] = world[i] == MPI_UNDEFINED ? -1 : g_local_first + world[i];
  }
  if (PMPI_Comm_set_attr(c, g_keyval, t.get()) != MPI_SUCCESS) return nullptr;
  return t.release();
}

// The communicator as the attribution sees it, the counters locked once
// for the whole call.
struct Peers {
  TrafficProfile* profile = nullptr;
  const Table* table = nullptr;
  int rank = 0, size = 0;
  std::unique_lock<std::mutex> lock;

  /// This rank sends `bytes` to rank r of the communicator.
  void to(int r, std::uint64_t bytes) const {
    if (r == rank || r < 0 || r >= size) return;
    const int v = (*table)[static_cast<std::size_t>(r)];
    if (v >= 0) profile->sent_natively(v, bytes);
  }
};

std::optional<Peers> peers_of(TrafficProfile* p, MPI_Comm c) {
  Peers n;
  n.profile = p;
  if (PMPI_Comm_size(c, &n.size) != MPI_SUCCESS || n.size < 2) return std::nullopt;
  PMPI_Comm_rank(c, &n.rank);
  n.table = table_of(c);
  if (n.table == nullptr || static_cast<int>(n.table->size()) != n.size) return std::nullopt;
  n.lock = p->lock_native();
  return n;
}

/// nullopt when not profiling (the common case: one load and a branch).
inline std::optional<Peers> peers(MPI_Comm c) {
  TrafficProfile* p = g_profile.load(std::memory_order_acquire);
  if (p == nullptr) [[likely]]
    return std::nullopt;
  return peers_of(p, c);
}

std::uint64_t bytes_of(int count, MPI_Datatype type) {
  int size = 0;
  if (count <= 0 || PMPI_Type_size(type, &size) != MPI_SUCCESS || size <= 0) return 0;
  return static_cast<std::uint64_t>(count) * static_cast<std::uint64_t>(size);
}

// The data flows.
void from_root(const Peers& n, int root, std::uint64_t bytes) {
  if (n.rank != root) return;
  for (int r = 0; r < n.size; ++r) n.to(r, bytes);
}
void to_every(const Peers& n, std::uint64_t bytes) {
  for (int r = 0; r < n.size; ++r) n.to(r, bytes);
}
void to_higher(const Peers& n, std::uint64_t bytes) {
  for (int r = n.rank + 1; r < n.size; ++r) n.to(r, bytes);
}
template <class Bytes>
void to_each(const Peers& n, Bytes bytes) {
  for (int r = 0; r < n.size; ++r) n.to(r, bytes(r));
}

}  // namespace

void native_traffic_start(TrafficProfile* p, int local_first) {
  g_local_first = local_first;
  PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_table, &g_keyval, nullptr);
  g_profile.store(p, std::memory_order_release);
}

void native_traffic_stop() {
  g_profile.store(nullptr, std::memory_order_release);
  // Tables already attached stay until their communicators go.
  if (g_keyval != MPI_KEYVAL_INVALID) PMPI_Comm_free_keyval(&g_keyval);
}

}  // namespace zipper::client

using namespace zipper::client;  // the helpers above

// ---------------------------------------------------------------------------
// Rooted

extern "C" int mmpi_traffic_Bcast(void* buffer, int count, MPI_Datatype datatype, int root,
                                  MPI_Comm comm) {
  if (const auto n = peers(comm)) from_root(*n, root, bytes_of(count, datatype));
  return PMPI_Bcast(buffer, count, datatype, root, comm);
}

extern "C" int mmpi_traffic_Ibcast(void* buffer, int count, MPI_Datatype datatype, int root,
                                   MPI_Comm comm, MPI_Request* request) {
  if (const auto n = peers(comm)) from_root(*n, root, bytes_of(count, datatype));
  return PMPI_Ibcast(buffer, count, datatype, root, comm, request);
}

extern "C" int mmpi_traffic_Reduce(const void* sendbuf, void* recvbuf, int count,
                                   MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm) {
  if (const auto n = peers(comm)) n->to(root, bytes_of(count, datatype));
  return PMPI_Reduce(sendbuf, recvbuf, count, datatype, op, root, comm);
}

extern "C" int mmpi_traffic_Ireduce(const void* sendbuf, void* recvbuf, int count,
                                    MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm,
                                    MPI_Request* request) {
  if (const auto n = peers(comm)) n->to(root, bytes_of(count, datatype));
  return PMPI_Ireduce(sendbuf, recvbuf, count, datatype, op, root, comm, request);
}

extern "C" int mmpi_traffic_Gather(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                   void* recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                                   MPI_Comm comm) {
  if (const auto n = peers(comm)) n->to(root, bytes_of(sendcount, sendtype));
  return PMPI_Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
}

extern "C" int mmpi_traffic_Igather(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                    void* recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                                    MPI_Comm comm, MPI_Request* request) {
  if (const auto n = peers(comm)) n->to(root, bytes_of(sendcount, sendtype));
  return PMPI_Igather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm,
                      request);
}

extern "C" int mmpi_traffic_Gatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                    void* recvbuf, const int recvcounts[], const int displs[],
                                    MPI_Datatype recvtype, int root, MPI_Comm comm) {
  if (const auto n = peers(comm)) n->to(root, bytes_of(sendcount, sendtype));
  return PMPI_Gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root,
                      comm);
}

extern "C" int mmpi_traffic_Igatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                     void* recvbuf, const int recvcounts[], const int displs[],
                                     MPI_Datatype recvtype, int root, MPI_Comm comm,
                                     MPI_Request* request) {
  if (const auto n = peers(comm)) n->to(root, bytes_of(sendcount, sendtype));
  return PMPI_Igatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root,
                       comm, request);
}

extern "C" int mmpi_traffic_Scatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                    void* recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                                    MPI_Comm comm) {
  if (const auto n = peers(comm)) from_root(*n, root, bytes_of(sendcount, sendtype));
  return PMPI_Scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
}

extern "C" int mmpi_traffic_Iscatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                     void* recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                                     MPI_Comm comm, MPI_Request* request) {
  if (const auto n = peers(comm)) from_root(*n, root, bytes_of(sendcount, sendtype));
  return PMPI_Iscatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm,
                       request);
}

extern "C" int mmpi_traffic_Scatterv(const void* sendbuf, const int sendcounts[],
                                     const int displs[], MPI_Datatype sendtype, void* recvbuf,
                                     int recvcount, MPI_Datatype recvtype, int root,
                                     MPI_Comm comm) {
  if (const auto n = peers(comm); n && n->rank == root)
    to_each(*n, [&](int r) { return bytes_of(sendcounts[r], sendtype); });
  return PMPI_Scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root,
                       comm);
}

extern "C" int mmpi_traffic_Iscatterv(const void* sendbuf, const int sendcounts[],
                                      const int displs[], MPI_Datatype sendtype, void* recvbuf,
                                      int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                                      MPI_Request* request) {
  if (const auto n = peers(comm); n && n->rank == root)
    to_each(*n, [&](int r) { return bytes_of(sendcounts[r], sendtype); });
  return PMPI_Iscatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root,
                        comm, request);
}

// ---------------------------------------------------------------------------
// Every member to every other

extern "C" int mmpi_traffic_Allreduce(const void* sendbuf, void* recvbuf, int count,
                                      MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  if (const auto n = peers(comm)) to_every(*n, bytes_of(count, datatype));
  return PMPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm);
}

extern "C" int mmpi_traffic_Iallreduce(const void* sendbuf, void* recvbuf, int count,
                                       MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                                       MPI_Request* request) {
  if (const auto n = peers(comm)) to_every(*n, bytes_of(count, datatype));
  return PMPI_Iallreduce(sendbuf, recvbuf, count, datatype, op, comm, request);
}

extern "C" int mmpi_traffic_Allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                      void* recvbuf, int recvcount, MPI_Datatype recvtype,
                                      MPI_Comm comm) {
  if (const auto n = peers(comm))
    to_every(*n, sendbuf == MPI_IN_PLACE ? bytes_of(recvcount, recvtype)
                                         : bytes_of(sendcount, sendtype));
  return PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}

extern "C" int mmpi_traffic_Iallgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                       void* recvbuf, int recvcount, MPI_Datatype recvtype,
                                       MPI_Comm comm, MPI_Request* request) {
  if (const auto n = peers(comm))
    to_every(*n, sendbuf == MPI_IN_PLACE ? bytes_of(recvcount, recvtype)
                                         : bytes_of(sendcount, sendtype));
  return PMPI_Iallgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request);
}

extern "C" int mmpi_traffic_Allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                       void* recvbuf, const int recvcounts[], const int displs[],
                                       MPI_Datatype recvtype, MPI_Comm comm) {
  if (const auto n = peers(comm))
    to_every(*n, sendbuf == MPI_IN_PLACE ? bytes_of(recvcounts[n->rank], recvtype)
                                         : bytes_of(sendcount, sendtype));
  return PMPI_Allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm);
}

extern "C" int mmpi_traffic_Iallgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                        void* recvbuf, const int recvcounts[], const int displs[],
                                        MPI_Datatype recvtype, MPI_Comm comm,
                                        MPI_Request* request) {
  if (const auto n = peers(comm))
    to_every(*n, sendbuf == MPI_IN_PLACE ? bytes_of(recvcounts[n->rank], recvtype)
                                         : bytes_of(sendcount, sendtype));
  return PMPI_Iallgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm,
                          request);
}

extern "C" int mmpi_traffic_Alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                     void* recvbuf, int recvcount, MPI_Datatype recvtype,
                                     MPI_Comm comm) {
  if (const auto n = peers(comm))
    to_every(*n, sendbuf == MPI_IN_PLACE ? bytes_of(recvcount, recvtype)
                                         : bytes_of(sendcount, sendtype));
  return PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}

extern "C" int mmpi_traffic_Ialltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                      void* recvbuf, int recvcount, MPI_Datatype recvtype,
                                      MPI_Comm comm, MPI_Request* request) {
  if (const auto n = peers(comm))
    to_every(*n, sendbuf == MPI_IN_PLACE ? bytes_of(recvcount, recvtype)
                                         : bytes_of(sendcount, sendtype));
  return PMPI_Ialltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request);
}

namespace {

// Alltoallv: sendcounts of sendtype, or in place the receive side's.
void alltoallv_flow(const Peers& n, const void* sendbuf, const int sendcounts[],
                    MPI_Datatype sendtype, const int recvcounts[], MPI_Datatype recvtype) {
  const bool in_place = sendbuf == MPI_IN_PLACE;
  to_each(n, [&](int r) {
    return in_place ? bytes_of(recvcounts[r], recvtype) : bytes_of(sendcounts[r], sendtype);
  });
}

void alltoallw_flow(const Peers& n, const void* sendbuf, const int sendcounts[],
                    const MPI_Datatype sendtypes[], const int recvcounts[],
                    const MPI_Datatype recvtypes[]) {
  const bool in_place = sendbuf == MPI_IN_PLACE;
  to_each(n, [&](int r) {
    return in_place ? bytes_of(recvcounts[r], recvtypes[r]) : bytes_of(sendcounts[r], sendtypes[r]);
  });
}

}  // namespace

extern "C" int mmpi_traffic_Alltoallv(const void* sendbuf, const int sendcounts[],
                                      const int sdispls[], MPI_Datatype sendtype, void* recvbuf,
                                      const int recvcounts[], const int rdispls[],
                                      MPI_Datatype recvtype, MPI_Comm comm) {
  if (const auto n = peers(comm))
    alltoallv_flow(*n, sendbuf, sendcounts, sendtype, recvcounts, recvtype);
  return PMPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                        recvtype, comm);
}

extern "C" int mmpi_traffic_Ialltoallv(const void* sendbuf, const int sendcounts[],
                                       const int sdispls[], MPI_Datatype sendtype, void* recvbuf,
                                       const int recvcounts[], const int rdispls[],
                                       MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  if (const auto n = peers(comm))
    alltoallv_flow(*n, sendbuf, sendcounts, sendtype, recvcounts, recvtype);
  return PMPI_Ialltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                         recvtype, comm, request);
}

extern "C" int mmpi_traffic_Alltoallw(const void* sendbuf, const int sendcounts[],
                                      const int sdispls[], const MPI_Datatype sendtypes[],
                                      void* recvbuf, const int recvcounts[], const int rdispls[],
                                      const MPI_Datatype recvtypes[], MPI_Comm comm) {
  if (const auto n = peers(comm))
    alltoallw_flow(*n, sendbuf, sendcounts, sendtypes, recvcounts, recvtypes);
  return PMPI_Alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                        recvtypes, comm);
}

extern "C" int mmpi_traffic_Ialltoallw(const void* sendbuf, const int sendcounts[],
                                       const int sdispls[], const MPI_Datatype sendtypes[],
                                       void* recvbuf, const int recvcounts[], const int rdispls[],
                                       const MPI_Datatype recvtypes[], MPI_Comm comm,
                                       MPI_Request* request) {
  if (const auto n = peers(comm))
    alltoallw_flow(*n, sendbuf, sendcounts, sendtypes, recvcounts, recvtypes);
  return PMPI_Ialltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                         recvtypes, comm, request);
}

extern "C" int mmpi_traffic_Reduce_scatter(const void* sendbuf, void* recvbuf,
                                           const int recvcounts[], MPI_Datatype datatype, MPI_Op op,
                                           MPI_Comm comm) {
  if (const auto n = peers(comm))
    to_each(*n, [&](int r) { return bytes_of(recvcounts[r], datatype); });
  return PMPI_Reduce_scatter(sendbuf, recvbuf, recvcounts, datatype, op, comm);
}

extern "C" int mmpi_traffic_Ireduce_scatter(const void* sendbuf, void* recvbuf,
                                            const int recvcounts[], MPI_Datatype datatype,
                                            MPI_Op op, MPI_Comm comm, MPI_Request* request) {
  if (const auto n = peers(comm))
    to_each(*n, [&](int r) { return bytes_of(recvcounts[r], datatype); });
  return PMPI_Ireduce_scatter(sendbuf, recvbuf, recvcounts, datatype, op, comm, request);
}

extern "C" int mmpi_traffic_Reduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount,
                                                 MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  if (const auto n = peers(comm)) to_every(*n, bytes_of(recvcount, datatype));
  return PMPI_Reduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, comm);
}

extern "C" int mmpi_traffic_Ireduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount,
                                                  MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                                                  MPI_Request* request) {
  if (const auto n = peers(comm)) to_every(*n, bytes_of(recvcount, datatype));
  return PMPI_Ireduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, comm, request);
}

// ---------------------------------------------------------------------------
// Prefixes: to every higher rank

extern "C" int mmpi_traffic_Scan(const void* sendbuf, void* recvbuf, int count,
                                 MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  if (const auto n = peers(comm)) to_higher(*n, bytes_of(count, datatype));
  return PMPI_Scan(sendbuf, recvbuf, count, datatype, op, comm);
}

extern "C" int mmpi_traffic_Iscan(const void* sendbuf, void* recvbuf, int count,
                                  MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                                  MPI_Request* request) {
  if (const auto n = peers(comm)) to_higher(*n, bytes_of(count, datatype));
  return PMPI_Iscan(sendbuf, recvbuf, count, datatype, op, comm, request);
}

extern "C" int mmpi_traffic_Exscan(const void* sendbuf, void* recvbuf, int count,
                                   MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  if (const auto n = peers(comm)) to_higher(*n, bytes_of(count, datatype));
  return PMPI_Exscan(sendbuf, recvbuf, count, datatype, op, comm);
}

extern "C" int mmpi_traffic_Iexscan(const void* sendbuf, void* recvbuf, int count,
                                    MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                                    MPI_Request* request) {
  if (const auto n = peers(comm)) to_higher(*n, bytes_of(count, datatype));
  return PMPI_Iexscan(sendbuf, recvbuf, count, datatype, op, comm, request);
}
