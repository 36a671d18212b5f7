#include "alltoallv_aggregated.h"

#include <climits>
#include <cstdint>
#include <cstring>
#include <vector>

#include "../client/datatype.h"
#include "alltoallv_direct.h"
#include "pending.h"
#include "pipeline_segments.h"
#include "tags.h"
#include "typed_buffer.h"

namespace zipper::coll {
namespace {

using Bytes = std::vector<std::byte>;

// Packs count elements of type into dst (exactly count * type size bytes).
int pack_block(const void* buf, int count, MPI_Datatype type, std::byte* dst, int bytes,
               MPI_Comm comm) {
  if (bytes == 0) return MPI_SUCCESS;
  client::Layout l;
  if (int rc = client::describe(buf, count, type, &l)) return rc;
  if (l.contiguous) {
    std::memcpy(dst, l.base, static_cast<std::size_t>(bytes));
    return MPI_SUCCESS;
  }
  int pos = 0;
  return MPI_Pack(buf, count, type, dst, bytes, &pos, comm);
}

int unpack_block(const std::byte* src, int bytes, void* buf, int count, MPI_Datatype type,
                 MPI_Comm comm) {
  if (bytes == 0) return MPI_SUCCESS;
  client::Layout l;
  if (int rc = client::describe(buf, count, type, &l)) return rc;
  if (l.contiguous) {
    std::memcpy(l.base, src, static_cast<std::size_t>(bytes));
    return MPI_SUCCESS;
  }
  int pos = 0;
  return MPI_Unpack(src, bytes, &pos, buf, count, type, comm);
}

}  // namespace

int alltoallv_aggregated(const Topology& t, const void* sendbuf, const int* sendcounts,
                         const int* sdispls, MPI_Datatype sendtype, void* recvbuf,
                         const int* recvcounts, const int* rdispls, MPI_Datatype recvtype, int n,
                         bool uniform, std::uint64_t segment_bytes) {
  if (t.standalone())
    return alltoallv_direct(t, sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                            recvtype);
  n = t.clamp_senders(n);
  const int m = t.local_size, nr = t.remote_size, me = t.local_rank;
  const auto ro = [&](int h) { return t.remote_member(h); };
  // _x: a type of 2 GiB and more (the blocks past INT_MAX go direct below).
  const MPI_Count ssize = client::type_size(sendtype), rsize = client::type_size(recvtype);

  // Row i (local rank i): bytes it sends to each remote rank, then bytes it
  // expects from each remote rank.
  const std::size_t row = 2 * static_cast<std::size_t>(nr);
  std::vector<std::int64_t> counts(row * static_cast<std::size_t>(m));
  std::vector<std::int64_t> my_row(row);
  for (int h = 0; h < nr; ++h) {
    my_row[h] = std::int64_t{sendcounts[ro(h)]} * ssize;
    my_row[nr + h] = std::int64_t{recvcounts[ro(h)]} * rsize;
  }
  if (uniform) {
    for (int i = 0; i < m; ++i) std::copy(my_row.begin(), my_row.end(), counts.begin() + i * row);
  } else {
    // Native steps wait through wait_native (pending.h): progress meanwhile.
    MPI_Request r = MPI_REQUEST_NULL;
    if (int rc = wait_native(
            t,
            MPI_Iallgather(my_row.data(), static_cast<int>(row), MPI_INT64_T, counts.data(),
                           static_cast<int>(row), MPI_INT64_T, t.local, &r),
            &r))
      return rc;
  }
  auto sends = [&](int i, int h) { return counts[i * row + h]; };         // local i -> remote h
  auto expects = [&](int i, int h) { return counts[i * row + nr + h]; };  // remote h -> local i

  // Aggregator j's outgoing and incoming inter-cluster message sizes. The far
  // cluster computes the same two lists (swapped), so both sides take the
  // same fallback decision below.
  std::vector<std::int64_t> cross_out(n, 0), cross_in(n, 0);
  for (int i = 0; i < m; ++i)
    for (int h = 0; h < nr; ++h) cross_out[i % n] += sends(i, h);
  for (int h = 0; h < nr; ++h)
    for (int i = 0; i < m; ++i) cross_in[h % n] += expects(i, h);
  for (int j = 0; j < n; ++j)
    if (cross_out[j] > INT_MAX || cross_in[j] > INT_MAX)
      return alltoallv_direct(t, sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                              rdispls, recvtype);

  // This cluster's members' entries, alive until the native exchange completes.
  auto lsc = t.local_slice(sendcounts), lrc = t.local_slice(recvcounts);
  const auto lsd = t.local_slice(sdispls), lrd = t.local_slice(rdispls);
  // A block of zero bytes is no block: Open MPI's Ialltoallv would post a
  // receive for count 1 of a zero-size type that no send matches (sender
  // count 0 of MPI_INT), and hang (coll/alltoallw_zeros).
  for (auto& c : lsc)
    if (ssize == 0) c = 0;
  for (auto& c : lrc)
    if (rsize == 0) c = 0;
  Pending p(t);
  MPI_Request req = MPI_REQUEST_NULL;
  p.add(MPI_Ialltoallv(sendbuf, lsc.data(), lsd.data(), sendtype, recvbuf, lrc.data(), lrd.data(),
                       recvtype, t.local, &req),
        &req);

  // Phase 1: my remote-bound blocks, in remote rank order, to aggregator me % n.
  std::int64_t out_bytes = 0;
  for (int h = 0; h < nr; ++h) out_bytes += sends(me, h);
  Bytes out(static_cast<std::size_t>(out_bytes));
  for (int h = 0, pos = 0; h < nr; ++h) {
    const int b = static_cast<int>(sends(me, h));
    if (int rc = pack_block(elem(sendbuf, sdispls[ro(h)], sendtype), sendcounts[ro(h)], sendtype,
                            out.data() + pos, b, t.local))
      return rc;
    pos += b;
  }
  std::vector<int> sc(m, 0), sd(m, 0), rc1(m, 0), rd(m, 0);
  sc[me % n] = static_cast<int>(out_bytes);
  int gathered_bytes = 0;
  for (int i = 0; i < m; ++i) {
    rd[i] = gathered_bytes;
    if (me < n && i % n == me)
      for (int h = 0; h < nr; ++h) rc1[i] += static_cast<int>(sends(i, h));
    gathered_bytes += rc1[i];
  }
  Bytes gathered(static_cast<std::size_t>(gathered_bytes));
  MPI_Request r = MPI_REQUEST_NULL;
  if (int rc =
          wait_native(t,
                      MPI_Ialltoallv(out.data(), sc.data(), sd.data(), MPI_BYTE, gathered.data(),
                                     rc1.data(), rd.data(), MPI_BYTE, t.local, &r),
                      &r))
    return rc;

  // Phase 2: one message each way between aggregator pairs.
  Bytes in;
  if (me < n) {
    in.resize(static_cast<std::size_t>(cross_in[me]));
    const PipelineSegments in_pieces(static_cast<int>(cross_in[me]), MPI_BYTE, segment_bytes);
    const PipelineSegments out_pieces(gathered_bytes, MPI_BYTE, segment_bytes);
    irecv_segments(p, in.data(), MPI_BYTE, in_pieces, ro(me), kTagAlltoall);
    isend_segments(p, gathered.data(), MPI_BYTE, out_pieces, ro(me), kTagAlltoall);
  }
  if (int rc = p.wait()) return rc;

  // Phase 3: `in` holds, for each remote h = me, me+n, ..., h's blocks for
  // local ranks 0..m-1 in order; deal them out destination-major.
  std::vector<int> dc(m, 0), dd(m, 0), rc3(m, 0), rd3(m, 0);
  Bytes deal;
  if (me < n) {
    deal.resize(in.size());
    std::vector<std::int64_t> from(nr, 0);  // offset of remote h's part in `in`
    for (std::int64_t h = me, at = 0; h < nr; h += n) {
      from[h] = at;
      for (int i = 0; i < m; ++i) at += expects(i, static_cast<int>(h));
    }
    std::int64_t pos = 0;
    for (int i = 0; i < m; ++i) {
      dd[i] = static_cast<int>(pos);
      for (int h = me; h < nr; h += n) {
        std::int64_t within = 0;
        for (int k = 0; k < i; ++k) within += expects(k, h);
        const std::int64_t b = expects(i, h);
        if (b)
          std::memcpy(deal.data() + pos, in.data() + from[h] + within, static_cast<std::size_t>(b));
        pos += b;
      }
      dc[i] = static_cast<int>(pos) - dd[i];
    }
  }
  int recvd_bytes = 0;
  for (int j = 0; j < m; ++j) {
    rd3[j] = recvd_bytes;
    if (j < n)
      for (int h = j; h < nr; h += n) rc3[j] += static_cast<int>(expects(me, h));
    recvd_bytes += rc3[j];
  }
  Bytes recvd(static_cast<std::size_t>(recvd_bytes));
  if (int rc = wait_native(t,
                           MPI_Ialltoallv(deal.data(), dc.data(), dd.data(), MPI_BYTE, recvd.data(),
                                          rc3.data(), rd3.data(), MPI_BYTE, t.local, &r),
                           &r))
    return rc;
  for (int j = 0; j < n; ++j) {
    int pos = rd3[j];
    for (int h = j; h < nr; h += n) {
      const int b = static_cast<int>(expects(me, h));
      if (int rc = unpack_block(recvd.data() + pos, b, elem(recvbuf, rdispls[ro(h)], recvtype),
                                recvcounts[ro(h)], recvtype, t.local))
        return rc;
      pos += b;
    }
  }
  return MPI_SUCCESS;
}

}  // namespace zipper::coll
