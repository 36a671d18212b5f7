#include "type_pieces.h"

#include <algorithm>
#include <climits>
#include <vector>

#include "type_contents.h"

namespace zipper::client {
namespace {

using Contents = TypeContents;

/// A committed type freed on scope exit.
struct TempType {
  MPI_Datatype t = MPI_DATATYPE_NULL;
  TempType() = default;
  TempType(const TempType&) = delete;
  TempType& operator=(const TempType&) = delete;
  ~TempType() {
    if (t != MPI_DATATYPE_NULL) MPI_Type_free(&t);
  }
};

class Walker {
 public:
  Walker(MPI_Count limit, const PieceFn& fn) : limit_(std::max<MPI_Count>(limit, 1)), fn_(fn) {}

  int walk(std::byte* base, MPI_Count count, MPI_Datatype type) {
    MPI_Count size = 0, lb = 0, extent = 0;
    if (MPI_Type_size_x(type, &size) != MPI_SUCCESS || size < 0 ||
        MPI_Type_get_extent_x(type, &lb, &extent) != MPI_SUCCESS)
      return MPI_ERR_TYPE;
    if (size == 0 || count <= 0) return MPI_SUCCESS;
    if (size <= limit_) {
      // Whole elements, as many per piece as the limit allows.
      const MPI_Count per = std::min<MPI_Count>(limit_ / size, INT_MAX);
      for (MPI_Count i = 0; i < count; i += per) {
        const MPI_Count n = std::min(per, count - i);
        if (int rc = fn_(base + i * extent, static_cast<int>(n), type, n * size)) return rc;
      }
      return MPI_SUCCESS;
    }
    for (MPI_Count i = 0; i < count; ++i)
      if (int rc = split(base + i * extent, type, size)) return rc;
    return MPI_SUCCESS;
  }

 private:
  static MPI_Count extent_of(MPI_Datatype t) {
    MPI_Count lb = 0, extent = 0;
    MPI_Type_get_extent_x(t, &lb, &extent);
    return extent;
  }

  // One element larger than the limit, by its constructor.
  int split(std::byte* base, MPI_Datatype type, MPI_Count size) {
    Contents c;
    if (int rc = c.read(type)) return rc;
    if (int rc = c.commit_parts()) return rc;
    const auto& I = c.ints;
    const auto& A = c.addrs;
    switch (c.combiner) {
      case MPI_COMBINER_NAMED:  // one basic element: cannot be split
        return fn_(base, 1, type, size);
      case MPI_COMBINER_DUP:
      case MPI_COMBINER_RESIZED:  // same typemap, other bounds
        return walk(base, 1, c.types[0]);
      case MPI_COMBINER_CONTIGUOUS:
        return walk(base, I[0], c.types[0]);
      case MPI_COMBINER_VECTOR:
        return vector(base, I[0], I[1], I[2] * extent_of(c.types[0]), c.types[0]);
      case MPI_COMBINER_HVECTOR:
        return vector(base, I[0], I[1], A[0], c.types[0]);
      case MPI_COMBINER_INDEXED: {
        const MPI_Count e = extent_of(c.types[0]);
        return blocks(
            base, I[0], [&](int i) { return MPI_Count{I[1 + i]}; },
            [&](int i) { return I[1 + I[0] + i] * e; }, [&](int) { return c.types[0]; });
      }
      case MPI_COMBINER_HINDEXED:
        return blocks(
            base, I[0], [&](int i) { return MPI_Count{I[1 + i]}; },
            [&](int i) { return MPI_Count{A[i]}; }, [&](int) { return c.types[0]; });
      case MPI_COMBINER_INDEXED_BLOCK: {
        const MPI_Count e = extent_of(c.types[0]);
        return blocks(
            base, I[0], [&](int) { return MPI_Count{I[1]}; }, [&](int i) { return I[2 + i] * e; },
            [&](int) { return c.types[0]; });
      }
      case MPI_COMBINER_HINDEXED_BLOCK:
        return blocks(
            base, I[0], [&](int) { return MPI_Count{I[1]}; },
            [&](int i) { return MPI_Count{A[i]}; }, [&](int) { return c.types[0]; });
      case MPI_COMBINER_STRUCT:
        return blocks(
            base, I[0], [&](int i) { return MPI_Count{I[1 + i]}; },
            [&](int i) { return MPI_Count{A[i]}; }, [&](int i) { return c.types[i]; });
      case MPI_COMBINER_SUBARRAY:
        return subarray(base, c);
      default:
        return MPI_ERR_TYPE;
    }
  }

  // `count` blocks of `blocklen` elements of `t`, `stride` bytes apart.
  // Blocks that fit the limit together go as one temporary hvector.
  int vector(std::byte* base, MPI_Count count, MPI_Count blocklen, MPI_Count stride,
             MPI_Datatype t) {
    MPI_Count tsize = 0;
    if (MPI_Type_size_x(t, &tsize) != MPI_SUCCESS) return MPI_ERR_TYPE;
    const MPI_Count block = blocklen * tsize;
    const MPI_Count per = block > 0 ? std::min<MPI_Count>(limit_ / block, INT_MAX) : count;
    if (per < 2 || blocklen > INT_MAX) {
      for (MPI_Count i = 0; i < count; ++i)
        if (int rc = walk(base + i * stride, blocklen, t)) return rc;
      return MPI_SUCCESS;
    }
    TempType group, rest;
    const MPI_Count full = count / per, left = count % per;
    if (full > 0) {
      if (MPI_Type_create_hvector(static_cast<int>(per), static_cast<int>(blocklen), stride, t,
                                  &group.t) != MPI_SUCCESS ||
          MPI_Type_commit(&group.t) != MPI_SUCCESS)
        return MPI_ERR_TYPE;
      for (MPI_Count g = 0; g < full; ++g)
        if (int rc = fn_(base + g * per * stride, 1, group.t, per * block)) return rc;
    }
    if (left > 0) {
      if (MPI_Type_create_hvector(static_cast<int>(left), static_cast<int>(blocklen), stride, t,
                                  &rest.t) != MPI_SUCCESS ||
          MPI_Type_commit(&rest.t) != MPI_SUCCESS)
        return MPI_ERR_TYPE;
      if (int rc = fn_(base + full * per * stride, 1, rest.t, left * block)) return rc;
    }
    return MPI_SUCCESS;
  }

  template <class Len, class Disp, class Type>
  int blocks(std::byte* base, int count, Len len, Disp disp, Type type) {
    for (int i = 0; i < count; ++i)
      if (int rc = walk(base + disp(i), len(i), type(i))) return rc;
    return MPI_SUCCESS;
  }

  // MPI_Type_create_subarray(ndims, sizes, subsizes, starts, order, old):
  // rows of the innermost dimension, slowest dimension first.
  int subarray(std::byte* base, const Contents& c) {
    const int nd = c.ints[0];
    const int* sizes = &c.ints[1];
    const int* subsizes = sizes + nd;
    const int* starts = subsizes + nd;
    const bool fortran = c.ints[1 + 3 * nd] == MPI_ORDER_FORTRAN;
    // dims[k]: the k-th dimension from the slowest.
    std::vector<int> dims(static_cast<std::size_t>(nd));
    for (int k = 0; k < nd; ++k) dims[static_cast<std::size_t>(k)] = fortran ? nd - 1 - k : k;
    std::vector<MPI_Count> stride(static_cast<std::size_t>(nd));
    MPI_Count s = extent_of(c.types[0]);
    for (int k = nd - 1; k >= 0; --k) {
      stride[static_cast<std::size_t>(k)] = s;
      s *= sizes[dims[static_cast<std::size_t>(k)]];
    }
    return sub_dim(base, 0, dims, stride, subsizes, starts, c.types[0]);
  }

  int sub_dim(std::byte* base, int k, const std::vector<int>& dims,
              const std::vector<MPI_Count>& stride, const int* subsizes, const int* starts,
              MPI_Datatype old) {
    const auto uk = static_cast<std::size_t>(k);
    const int d = dims[uk];
    std::byte* at = base + starts[d] * stride[uk];
    if (uk + 1 == dims.size()) return walk(at, subsizes[d], old);
    for (int j = 0; j < subsizes[d]; ++j)
      if (int rc = sub_dim(at + j * stride[uk], k + 1, dims, stride, subsizes, starts, old))
        return rc;
    return MPI_SUCCESS;
  }

  MPI_Count limit_;
  const PieceFn& fn_;
};

}  // namespace

int for_each_piece(std::byte* base, MPI_Count count, MPI_Datatype type, MPI_Count limit,
                   const PieceFn& fn) {
  return Walker(limit, fn).walk(base, count, type);
}

}  // namespace zipper::client
