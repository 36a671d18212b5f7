// A buffer cut into pipeline segments of at most `segment_bytes` bytes (whole
// elements, at least one per segment), so that a collective can send its
// inter-cluster step as several messages and overlap segment k's native step
// with the transfer of segments k+1.. (Vadhiyar, Fagg, Dongarra, "Automatically
// tuned collective communications", §3: segmented pipelining). segment_bytes
// 0 means one segment: the unsegmented algorithm.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <deque>

#include "pending.h"
#include "typed_buffer.h"

namespace zipper::coll {

class PipelineSegments {
 public:
  /// `count` elements of `type` (count >= 0); segment_bytes 0 = one segment.
  PipelineSegments(int count, MPI_Datatype type, std::uint64_t segment_bytes) : count_(count) {
    MPI_Count size = 0;
    MPI_Type_size_x(type, &size);
    per_ = count;
    if (segment_bytes > 0 && size > 0) {
      const std::uint64_t elems = segment_bytes / static_cast<std::uint64_t>(size);
      if (elems < static_cast<std::uint64_t>(count)) per_ = elems > 0 ? static_cast<int>(elems) : 1;
    }
    n_ = per_ > 0 ? (count + per_ - 1) / per_ : 1;
  }
  /// Number of segments, >= 1 (one empty segment for count 0).
  int size() const { return n_; }
  /// First element and element count of segment k, 0 <= k < size().
  int first(int k) const { return k * per_; }
  int count(int k) const { return k + 1 < n_ ? per_ : count_ - first(k); }

 private:
  int count_, per_ = 0, n_ = 1;
};

/// Posts the sends of every segment of `buf` to virtual rank `dest` on `p`.
inline void isend_segments(Pending& p, const void* buf, MPI_Datatype type,
                           const PipelineSegments& s, int dest, int tag) {
  for (int k = 0; k < s.size(); ++k)
    p.isend(elem(buf, s.first(k), type), s.count(k), type, dest, tag);
}

/// Posts the receives of every segment of `buf` from virtual rank `source` on `p`.
inline void irecv_segments(Pending& p, void* buf, MPI_Datatype type, const PipelineSegments& s,
                           int source, int tag) {
  for (int k = 0; k < s.size(); ++k)
    p.irecv(elem(buf, s.first(k), type), s.count(k), type, source, tag);
}

/// Posts one receive per segment, each on its own Pending, so that segment k
/// can be waited for (and forwarded natively) while the later ones arrive.
inline std::deque<Pending> irecv_each_segment(const Topology& t, void* buf, MPI_Datatype type,
                                              const PipelineSegments& s, int source, int tag) {
  std::deque<Pending> out;
  for (int k = 0; k < s.size(); ++k)
    out.emplace_back(t).irecv(elem(buf, s.first(k), type), s.count(k), type, source, tag);
  return out;
}

}  // namespace zipper::coll
