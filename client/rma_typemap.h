// An RMA target datatype on the wire (sizes past 2 GiB too).
// MPI handles are addresses inside each process's Open MPI, so the target's
// datatype travels as a description of its constructor tree: a few records
// per constructor, whatever the number of blocks (a vector of a million
// blocks is two records). The target walks it lazily, one block at a time
// with memory bounded by the type's depth, over just the packed bytes of the
// request piece that arrived, so that no list of (offset, length) per block
// is ever built and a type of any size and span works.
//
// Records, in an array where every child comes before its parent (so the
// tree has no cycle) and the root is the last record:
//   kLeaf    a bytes, contiguous, at offset 0;
//   kVector  a blocks of b copies of record `child`, block i at i * c bytes,
//            copy j of a block at j * d bytes (d: the child's extent);
//   kStruct  the `child` records just before it, all kEntry, in order;
//   kEntry   b copies of record `child` at a bytes, copy j at a + j * d.
// Every count and length is >= 0; an entry or vector of no data is legal but
// a struct's entries must each carry data (so the walk never scans an entry
// that gives nothing: bounded work per byte). parse() checks all of it.
#pragma once

#include <mpi.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace zipper::client::rma {

__extension__ typedef __int128 TypeWide;

/// One contiguous run of a typemap: `len` bytes at byte offset `offset` from
/// the target address.
struct Block {
  std::int64_t offset = 0;
  std::uint64_t len = 0;
};

enum class NodeKind : std::uint8_t { kLeaf = 1, kVector, kStruct, kEntry };

/// One record of the description, as it travels (host order, 40 bytes).
struct TypeNode {
  NodeKind kind = NodeKind::kLeaf;
  std::uint8_t pad[3] = {};
  std::uint32_t child = 0;  // kVector/kEntry: child record; kStruct: its entry count
  std::int64_t a = 0, b = 0, c = 0, d = 0;
};
static_assert(sizeof(TypeNode) == 40);

/// At most this many records (320 MiB) and this constructor depth; larger
/// descriptions are refused at the origin (MPI_ERR_TYPE) and at the target
/// (which allows kMaxRecordDepth levels of records: a constructor takes up
/// to two, an entry and its struct).
inline constexpr std::uint32_t kMaxTypeNodes = 1u << 23;
inline constexpr int kMaxTypeDepth = 64;
inline constexpr int kMaxRecordDepth = 3 * kMaxTypeDepth;
/// No description may hold more data than this (bytes), so that sizes and
/// offsets computed from it never overflow.
inline constexpr std::uint64_t kMaxTypeBytes = std::uint64_t{1} << 62;

class TypeMap {
 public:
  /// Origin: describes `count` elements of `type`. MPI_SUCCESS, MPI_ERR_COUNT
  /// (count < 0) or MPI_ERR_TYPE (not a datatype, a darray or Fortran type
  /// spanning more than 16 MiB per element, more than kMaxTypeNodes records
  /// or deeper than kMaxTypeDepth). Cost: O(records) plus, per element type
  /// with a hole or per darray, one MPI_Pack over its span.
  int describe(MPI_Datatype type, int count);

  /// Target: takes `n` records from `p`, untrusted. nullptr when they form a
  /// valid description, else the reason it is refused.
  const char* parse(const std::byte* p, std::size_t n);

  /// Bytes of data described (the packed size).
  std::uint64_t bytes() const { return nodes_.empty() ? 0 : size_.back(); }
  /// The lowest and highest byte (exclusive) any block touches, relative to
  /// the target address (origin only, after describe(); 0, 0 when empty).
  std::int64_t lo() const { return lo_; }
  std::int64_t hi() const { return hi_; }
  const std::vector<TypeNode>& nodes() const { return nodes_; }

  /// Calls fn(offset, len) -> bool for the blocks holding the packed bytes
  /// [from, from + n) (n <= bytes() - from), in typemap order, adjacent ones
  /// merged; offsets are wide (a hostile description may point anywhere).
  /// Returns false when fn does (or an offset runs past 2^64: refused).
  template <class Fn>
  bool walk(std::uint64_t from, std::uint64_t n, Fn&& fn) const {
    if (n == 0) return true;
    if (from >= bytes() || n > bytes() - from) return false;
    Merge<Fn> m{fn};
    std::uint64_t left = n;
    if (!node(static_cast<std::uint32_t>(nodes_.size() - 1), 0, from, left, m)) return false;
    return m.flush();
  }

 private:
  template <class Fn>
  struct Merge {
    Fn& fn;
    TypeWide off = 0;
    std::uint64_t len = 0;
    bool put(TypeWide o, std::uint64_t l) {
      if (l == 0) return true;
      if (len > 0 && off + static_cast<TypeWide>(len) == o) {
        len += l;
        return true;
      }
      if (!flush()) return false;
      off = o;
      len = l;
      return true;
    }
    bool flush() {
      if (len == 0) return true;
      const std::uint64_t l = std::exchange(len, 0);
      return fn(off, l);
    }
  };

  // Packed bytes [skip, skip + left) of record i placed at `base`; `left`
  // goes down by what was emitted. Only called with skip < size_[i].
  template <class M>
  bool node(std::uint32_t i, TypeWide base, std::uint64_t skip, std::uint64_t& left, M& m) const {
    constexpr TypeWide kFar = static_cast<TypeWide>(1) << 64;
    if (base > kFar || base < -kFar) return false;  // never inside a window
    const TypeNode& t = nodes_[i];
    switch (t.kind) {
      case NodeKind::kLeaf: {
        const std::uint64_t take = std::min(size_[i] - skip, left);
        left -= take;
        return m.put(base + static_cast<TypeWide>(skip), take);
      }
      case NodeKind::kVector:
        return units(t.child, base, t.a * t.b, t.b, t.c, t.d, skip, left, m);
      case NodeKind::kStruct:
        for (std::uint32_t e = i - t.child; e < i && left > 0; ++e) {
          if (skip >= size_[e]) {
            skip -= size_[e];
            continue;
          }
          const TypeNode& en = nodes_[e];
          if (!units(en.child, base + en.a, en.b, en.b, 0, en.d, skip, left, m)) return false;
          skip = 0;
        }
        return true;
      default:
        return false;
    }
  }

  // `total` copies of record `child`, `per` to a block: copy k at
  // (k / per) * stride + (k % per) * extent.
  template <class M>
  bool units(std::uint32_t child, TypeWide base, std::int64_t total, std::int64_t per,
             std::int64_t stride, std::int64_t extent, std::uint64_t skip, std::uint64_t& left,
             M& m) const {
    const std::uint64_t cs = size_[child];
    auto k = static_cast<std::int64_t>(skip / cs);
    skip %= cs;
    for (; k < total && left > 0; ++k) {
      const TypeWide at =
          base + static_cast<TypeWide>(k / per) * stride + static_cast<TypeWide>(k % per) * extent;
      if (!node(child, at, skip, left, m)) return false;
      skip = 0;
    }
    return true;
  }

  // Checks the records and computes size_; nullptr or the reason.
  const char* validate();

  std::vector<TypeNode> nodes_;
  std::vector<std::uint64_t> size_;  // packed bytes of each record
  std::int64_t lo_ = 0, hi_ = 0;

  friend class TypeMapBuilder;
};

}  // namespace zipper::client::rma
