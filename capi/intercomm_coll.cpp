// Collectives on inter-communicators (MPI-3.1 §5.2.2), as schedules
// (collectives/schedule.h) on the hidden merged communicator
// (client/intercomm.h), so that each has a non-blocking form and the
// blocking one is it plus a wait. Rooted operations: the root passes
// MPI_ROOT, the rest of its group MPI_PROC_NULL, the other group the root's
// rank. All-to-all operations take their data from the remote group.
// Algorithms are linear (each member talks to each remote member, or to
// the remote leader for reductions that end scattered): inter-communicator
// collectives couple codes, they are not the bandwidth path.
#include <mmpi.h>
#include <mmpi_impl_generated.h>

#include <algorithm>
#include <climits>
#include <vector>

#include "../collectives/typed_buffer.h"
#include "coll_checks.h"
#include "coll_table.h"
#include "handles.h"
#include "intercomm.h"
#include "nbc_launch.h"

using zipper::client::Comm;
using zipper::client::InterInfo;
using zipper::client::Runtime;
using zipper::coll::copy_typed;
using zipper::coll::elem;
using zipper::coll::extent_of;
using zipper::coll::Schedule;
using zipper::coll::Topology;

namespace zipper::capi {

namespace {

struct Inter {
  std::shared_ptr<Comm> c;
  const InterInfo* in = nullptr;
  Topology t;  // of the merged communicator
  int rank = 0, local_size = 0, remote_size = 0;
  int local(int r) const { return in->merged_of_local(r); }
  int remote(int r) const { return in->merged_of_remote(r); }
};

int enter_inter(MPI_Comm comm, MPI_Request* request, Inter* x) {
  Runtime* rt;
  if (int rc = lookup(comm, &rt, &x->c)) return rc;
  if (!x->c->inter) return MPI_ERR_COMM;
  if (request == nullptr) return MPI_ERR_REQUEST;
  x->in = x->c->inter.get();
  x->t = Topology::of(rt->engine(), x->in->merged);
  x->rank = x->c->rank();
  x->local_size = x->in->local_size();
  x->remote_size = x->c->size();
  return MPI_SUCCESS;
}

enum class Role { kRoot, kIdle, kLeaf };

int role_of(const Inter& x, int root, Role* role) {
  if (root == MPI_ROOT)
    *role = Role::kRoot;
  else if (root == MPI_PROC_NULL)
    *role = Role::kIdle;
  else if (root >= 0 && root < x.remote_size)
    *role = Role::kLeaf;
  else
    return MPI_ERR_ROOT;
  return MPI_SUCCESS;
}

void* at(const void* buf, MPI_Aint index, MPI_Datatype type) {
  return const_cast<void*>(elem(buf, index, type));
}

// Calls f(first, n) over elements [0, count) in runs of at most INT_MAX (the
// largest count one MPI call takes); once, with n = 0, for count 0. Stops at
// the first non-zero return and gives it.
template <class F>
int for_int_runs(MPI_Aint count, F f) {
  MPI_Aint done = 0;
  do {
    const int n = static_cast<int>(std::min<MPI_Aint>(INT_MAX, count - done));
    if (int rc = f(done, n)) return rc;
    done += n;
  } while (done < count);
  return MPI_SUCCESS;
}

// Folds blocks 0..m-1 of `blocks` (count elements each) into `out` in rank
// order, out = b0 op (b1 op (... op b[m-1])), in runs of at most INT_MAX
// elements (a count may pass it).
void fold(Schedule& s, void* blocks, int m, void* out, MPI_Aint count, MPI_Datatype type,
          MPI_Op op) {
  const MPI_Datatype kt = s.keep(type);
  s.local([=] {
    return for_int_runs(count, [&](MPI_Aint done, int n) {
      void* o = at(out, done, kt);
      if (int rc = copy_typed(at(blocks, (m - 1) * count + done, kt), o, n, kt)) return rc;
      for (int i = m - 2; i >= 0; --i)
        if (int rc = MPI_Reduce_local(at(blocks, i * count + done, kt), o, n, kt, op)) return rc;
      return MPI_SUCCESS;
    });
  });
}

// `count` elements as messages of at most INT_MAX elements each (one, of 0
// elements, for count 0); both sides cut them the same way.
void send_pieces(Schedule& s, const void* buf, MPI_Aint count, MPI_Datatype type, int peer) {
  for_int_runs(count, [&](MPI_Aint done, int n) {
    s.send(at(buf, done, type), n, type, peer);
    return MPI_SUCCESS;
  });
}

void recv_pieces(Schedule& s, void* buf, MPI_Aint count, MPI_Datatype type, int peer) {
  for_int_runs(count, [&](MPI_Aint done, int n) {
    s.recv(at(buf, done, type), n, type, peer);
    return MPI_SUCCESS;
  });
}

}  // namespace

// Igather(v) and Iscatter(v): the root exchanges one block with each remote
// member (counts null: the uniform form, all_count elements each), each leaf
// its own block with the root; MPI_PROC_NULL ranks take no part.
int inter_irooted(const Rooted& a, int root, MPI_Comm comm, MPI_Request* request) {
  Inter x;
  Role role;
  if (int rc = enter_inter(comm, request, &x)) return rc;
  if (int rc = role_of(x, root, &role)) return rc;
  auto s = nbc_schedule(x.t);
  if (role == Role::kRoot) {
    if (a.counts != nullptr) {
      if (a.displs == nullptr) return MPI_ERR_ARG;
      if (int rc = check_bufs(x.remote_size, a.counts, a.all_type)) return rc;
    } else if (int rc = check_buf(a.all_count, a.all_type)) {
      return rc;
    }
    for (int j = 0; j < x.remote_size; ++j) {
      const int n = a.counts ? a.counts[j] : a.all_count;
      const MPI_Aint d = a.counts ? a.displs[j] : static_cast<MPI_Aint>(j) * a.all_count;
      void* block = at(a.all, d, a.all_type);
      if (a.to_root())
        s->recv(block, n, a.all_type, x.remote(j));
      else
        s->send(block, n, a.all_type, x.remote(j));
    }
  } else if (role == Role::kLeaf) {
    if (int rc = check_buf(a.own_count, a.own_type)) return rc;
    if (a.to_root())
      s->send(a.own, a.own_count, a.own_type, x.remote(root));
    else
      s->recv(const_cast<void*>(a.own), a.own_count, a.own_type, x.remote(root));
  }
  return nbc_launch(a.to_root() ? "MMPI_Igather(v) (inter-communicator)"
                                : "MMPI_Iscatter(v) (inter-communicator)",
                    std::move(s), request);
}

int inter_wait(int rc, MPI_Request* request) {
  return rc == MPI_SUCCESS ? mmpi_impl_Wait(request, MPI_STATUS_IGNORE) : rc;
}

int inter_ibarrier(MPI_Comm comm, MPI_Request* request) {
  Inter x;
  if (int rc = enter_inter(comm, request, &x)) return rc;
  auto s = nbc_schedule(x.t);
  void* token = s->scratch(1, MPI_BYTE);
  // Local members report to their leader, the leaders swap, then release.
  if (x.rank == 0)
    for (int r = 1; r < x.local_size; ++r) s->recv(token, 0, MPI_BYTE, x.local(r));
  else
    s->send(token, 0, MPI_BYTE, x.local(0));
  s->end_round();
  if (x.rank == 0) {
    s->recv(token, 0, MPI_BYTE, x.remote(0));
    s->send(token, 0, MPI_BYTE, x.remote(0));
    s->end_round();
    for (int r = 1; r < x.local_size; ++r) s->send(token, 0, MPI_BYTE, x.local(r));
  } else {
    s->recv(token, 0, MPI_BYTE, x.local(0));
  }
  return nbc_launch("MMPI_Ibarrier (inter-communicator)", std::move(s), request);
}

int inter_ibcast(void* buf, int count, MPI_Datatype type, int root, MPI_Comm comm,
                 MPI_Request* request) {
  Inter x;
  Role role;
  if (int rc = enter_inter(comm, request, &x)) return rc;
  if (int rc = role_of(x, root, &role)) return rc;
  if (role != Role::kIdle)
    if (int rc = check_buf(count, type)) return rc;
  auto s = nbc_schedule(x.t);
  if (role == Role::kRoot)
    for (int j = 0; j < x.remote_size; ++j) s->send(buf, count, type, x.remote(j));
  else if (role == Role::kLeaf)
    s->recv(buf, count, type, x.remote(root));
  return nbc_launch("MMPI_Ibcast (inter-communicator)", std::move(s), request);
}

int inter_ireduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
                  int root, MPI_Comm comm, MPI_Request* request) {
  Inter x;
  Role role;
  if (int rc = enter_inter(comm, request, &x)) return rc;
  if (int rc = role_of(x, root, &role)) return rc;
  if (role != Role::kIdle) {
    if (int rc = check_buf(count, type)) return rc;
    if (int rc = check_op(op)) return rc;
  }
  auto s = nbc_schedule(x.t);
  if (role == Role::kRoot) {
    void* blocks = s->scratch(static_cast<MPI_Aint>(count) * x.remote_size, type);
    for (int j = 0; j < x.remote_size; ++j)
      s->recv(at(blocks, static_cast<MPI_Aint>(j) * count, type), count, type, x.remote(j));
    s->end_round();
    fold(*s, blocks, x.remote_size, recvbuf, count, type, op);
  } else if (role == Role::kLeaf) {
    s->send(sendbuf, count, type, x.remote(root));
  }
  return nbc_launch("MMPI_Ireduce (inter-communicator)", std::move(s), request);
}

int inter_iallreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
                     MPI_Comm comm, MPI_Request* request) {
  Inter x;
  if (int rc = enter_inter(comm, request, &x)) return rc;
  if (int rc = check_buf(count, type)) return rc;
  if (int rc = check_op(op)) return rc;
  if (sendbuf == MPI_IN_PLACE) return MPI_ERR_BUFFER;  // not defined on inter-communicators
  auto s = nbc_schedule(x.t);
  void* blocks = s->scratch(static_cast<MPI_Aint>(count) * x.remote_size, type);
  for (int j = 0; j < x.remote_size; ++j)
    s->recv(at(blocks, static_cast<MPI_Aint>(j) * count, type), count, type, x.remote(j));
  for (int j = 0; j < x.remote_size; ++j) s->send(sendbuf, count, type, x.remote(j));
  s->end_round();
  fold(*s, blocks, x.remote_size, recvbuf, count, type, op);
  return nbc_launch("MMPI_Iallreduce (inter-communicator)", std::move(s), request);
}

int inter_iallgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                      const int recvcounts[], const int displs[], int recvcount,
                      MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  Inter x;
  if (int rc = enter_inter(comm, request, &x)) return rc;
  if (sendbuf == MPI_IN_PLACE) return MPI_ERR_BUFFER;
  if (int rc = check_buf(sendcount, sendtype)) return rc;
  if (recvcounts != nullptr) {
    if (displs == nullptr) return MPI_ERR_ARG;
    if (int rc = check_bufs(x.remote_size, recvcounts, recvtype)) return rc;
  } else if (int rc = check_buf(recvcount, recvtype)) {
    return rc;
  }
  auto s = nbc_schedule(x.t);
  for (int j = 0; j < x.remote_size; ++j) {
    const int n = recvcounts ? recvcounts[j] : recvcount;
    const MPI_Aint d = recvcounts ? displs[j] : static_cast<MPI_Aint>(j) * recvcount;
    s->recv(at(recvbuf, d, recvtype), n, recvtype, x.remote(j));
  }
  for (int j = 0; j < x.remote_size; ++j) s->send(sendbuf, sendcount, sendtype, x.remote(j));
  return nbc_launch("MMPI_Iallgather(v) (inter-communicator)", std::move(s), request);
}

int inter_ialltoallw(const void* sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                     const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                     const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                     MPI_Request* request) {
  Inter x;
  if (int rc = enter_inter(comm, request, &x)) return rc;
  if (sendbuf == MPI_IN_PLACE) return MPI_ERR_BUFFER;
  if (sendcounts == nullptr || sdispls == nullptr || sendtypes == nullptr ||
      recvcounts == nullptr || rdispls == nullptr || recvtypes == nullptr)
    return MPI_ERR_ARG;
  for (int j = 0; j < x.remote_size; ++j) {
    if (int rc = check_buf(sendcounts[j], sendtypes[j])) return rc;
    if (int rc = check_buf(recvcounts[j], recvtypes[j])) return rc;
  }
  auto s = nbc_schedule(x.t);
  auto* out = static_cast<char*>(recvbuf);
  const auto* in = static_cast<const char*>(sendbuf);
  for (int j = 0; j < x.remote_size; ++j)
    s->recv(out + rdispls[j], recvcounts[j], recvtypes[j], x.remote(j));
  for (int j = 0; j < x.remote_size; ++j)
    s->send(in + sdispls[j], sendcounts[j], sendtypes[j], x.remote(j));
  return nbc_launch("MMPI_Ialltoall(v,w) (inter-communicator)", std::move(s), request);
}

int inter_ialltoallw_int(const void* sendbuf, const int sendcounts[], const int sdispls[],
                         const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                         const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                         MPI_Request* request) {
  Runtime* rt;
  std::shared_ptr<Comm> c;
  if (int rc = lookup(comm, &rt, &c)) return rc;
  if (sdispls == nullptr || rdispls == nullptr) return MPI_ERR_ARG;
  const int m = c->size();
  const std::vector<MPI_Aint> sd(sdispls, sdispls + m), rd(rdispls, rdispls + m);
  return inter_ialltoallw(sendbuf, sendcounts, sd.data(), sendtypes, recvbuf, recvcounts, rd.data(),
                          recvtypes, comm, request);
}

int inter_ialltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
                     MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                     const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                     MPI_Request* request) {
  Runtime* rt;
  std::shared_ptr<Comm> c;
  if (int rc = lookup(comm, &rt, &c)) return rc;
  const int m = c->size();
  if (int rc = check_type(sendtype)) return rc;
  if (int rc = check_type(recvtype)) return rc;
  if (sendcounts == nullptr || sdispls == nullptr || recvcounts == nullptr || rdispls == nullptr)
    return MPI_ERR_ARG;
  const MPI_Aint se = extent_of(sendtype), re = extent_of(recvtype);
  std::vector<MPI_Aint> sd(static_cast<std::size_t>(m)), rd(static_cast<std::size_t>(m));
  for (int j = 0; j < m; ++j) sd[static_cast<std::size_t>(j)] = sdispls[j] * se;
  for (int j = 0; j < m; ++j) rd[static_cast<std::size_t>(j)] = rdispls[j] * re;
  std::vector<MPI_Datatype> st(static_cast<std::size_t>(m), sendtype),
      rtypes(static_cast<std::size_t>(m), recvtype);
  return inter_ialltoallw(sendbuf, sendcounts, sd.data(), st.data(), recvbuf, recvcounts, rd.data(),
                          rtypes.data(), comm, request);
}

int inter_ialltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                    int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  Runtime* rt;
  std::shared_ptr<Comm> c;
  if (int rc = lookup(comm, &rt, &c)) return rc;
  if (sendcount < 0 || recvcount < 0) return MPI_ERR_COUNT;
  if (int rc = check_type(sendtype)) return rc;
  if (int rc = check_type(recvtype)) return rc;
  const int m = c->size();
  // Byte displacements as MPI_Aint: j * count elements may pass INT_MAX.
  const MPI_Aint se = extent_of(sendtype), re = extent_of(recvtype);
  const auto n = static_cast<std::size_t>(m);
  std::vector<int> sc(n, sendcount), rc(n, recvcount);
  std::vector<MPI_Aint> sd(n), rd(n);
  for (std::size_t j = 0; j < n; ++j) {
    sd[j] = static_cast<MPI_Aint>(j) * sendcount * se;
    rd[j] = static_cast<MPI_Aint>(j) * recvcount * re;
  }
  std::vector<MPI_Datatype> st(n, sendtype), rtypes(n, recvtype);
  return inter_ialltoallw(sendbuf, sc.data(), sd.data(), st.data(), recvbuf, rc.data(), rd.data(),
                          rtypes.data(), comm, request);
}

int inter_ireduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[], int block,
                          MPI_Datatype type, MPI_Op op, MPI_Comm comm, MPI_Request* request) {
  Inter x;
  if (int rc = enter_inter(comm, request, &x)) return rc;
  if (sendbuf == MPI_IN_PLACE) return MPI_ERR_BUFFER;
  if (int rc = check_op(op)) return rc;
  std::vector<int> counts(static_cast<std::size_t>(x.local_size), block);
  if (recvcounts != nullptr) counts.assign(recvcounts, recvcounts + x.local_size);
  if (int rc = check_bufs(x.local_size, counts.data(), type)) return rc;
  // The vector may pass INT_MAX elements (each block is an int): offsets as
  // MPI_Aint, the vector in messages of at most INT_MAX elements.
  std::vector<MPI_Aint> first(static_cast<std::size_t>(x.local_size) + 1, 0);
  for (int i = 0; i < x.local_size; ++i)
    first[static_cast<std::size_t>(i) + 1] =
        first[static_cast<std::size_t>(i)] + counts[static_cast<std::size_t>(i)];
  const MPI_Aint total = first.back();  // MPI: the same in both groups
  auto s = nbc_schedule(x.t);
  // Every member sends its whole vector to the remote leader; each leader
  // reduces the remote group's vectors and scatters the result in its group.
  void* blocks = nullptr;
  void* result = nullptr;
  if (x.rank == 0) {
    blocks = s->scratch(total * x.remote_size, type);
    result = s->scratch(total, type);
    for (int j = 0; j < x.remote_size; ++j)
      recv_pieces(*s, at(blocks, j * total, type), total, type, x.remote(j));
  }
  send_pieces(*s, sendbuf, total, type, x.remote(0));
  s->end_round();
  if (x.rank == 0) {
    fold(*s, blocks, x.remote_size, result, total, type, op);
    s->end_round();
    for (int i = 1; i < x.local_size; ++i)
      s->send(at(result, first[static_cast<std::size_t>(i)], type),
              counts[static_cast<std::size_t>(i)], type, x.local(i));
    const MPI_Datatype kt = s->keep(type);
    const int mine = counts[0];
    s->local([=] { return copy_typed(result, recvbuf, mine, kt); });
  } else {
    s->recv(recvbuf, counts[static_cast<std::size_t>(x.rank)], type, x.local(0));
  }
  return nbc_launch("MMPI_Ireduce_scatter (inter-communicator)", std::move(s), request);
}

}  // namespace zipper::capi
