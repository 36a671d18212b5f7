#include "rma_typemap.h"

#include <climits>
#include <cstring>

#include "datatype.h"
#include "type_contents.h"

namespace zipper::client::rma {

namespace {
constexpr std::uint32_t kNone = UINT32_MAX;  // a type holding no data
// Types no constructor describes (element types with a hole, darray, the
// Fortran-parameter types) are flattened through MPI_Pack, up to this span.
constexpr MPI_Count kMaxPackedSpan = MPI_Count{16} << 20;

struct Extents {
  MPI_Count size = 0, lb = 0, extent = 0, tlb = 0, textent = 0;
  int read(MPI_Datatype t) {
    if (t == MPI_DATATYPE_NULL || MPI_Type_size_x(t, &size) != MPI_SUCCESS || size < 0 ||
        MPI_Type_get_extent_x(t, &lb, &extent) != MPI_SUCCESS ||
        MPI_Type_get_true_extent_x(t, &tlb, &textent) != MPI_SUCCESS)
      return MPI_ERR_TYPE;
    return MPI_SUCCESS;
  }
};
}  // namespace

// Builds the records of a datatype from its constructors (TypeContents).
class TypeMapBuilder {
 public:
  explicit TypeMapBuilder(std::vector<TypeNode>& out) : out_(out) {}

  // The record describing one element of `t` (kNone: no data).
  int add(MPI_Datatype t, int depth, std::uint32_t* idx) {
    *idx = kNone;
    if (depth > kMaxTypeDepth) return MPI_ERR_TYPE;
    Extents e;
    if (int rc = e.read(t)) return rc;
    if (e.size == 0) return MPI_SUCCESS;
    if (e.size == e.textent && in_typemap_order(t)) {  // one block
      std::uint32_t leaf = 0;
      if (int rc = push({NodeKind::kLeaf, {}, 0, e.size, 0, 0, 0}, &leaf)) return rc;
      return e.tlb == 0 ? (*idx = leaf, MPI_SUCCESS) : one_entry(e.tlb, leaf, idx);
    }
    TypeContents c;
    if (c.read(t) != MPI_SUCCESS) return MPI_ERR_TYPE;
    const std::vector<int>& I = c.ints;
    const std::vector<MPI_Aint>& A = c.addrs;
    const std::vector<MPI_Datatype>& T = c.types;
    auto ext = [](MPI_Datatype x) {
      Extents xe;
      xe.read(x);
      return xe.extent;
    };
    auto same = [&](int) { return T.empty() ? MPI_DATATYPE_NULL : T[0]; };
    switch (c.combiner) {
      case MPI_COMBINER_DUP:
      case MPI_COMBINER_RESIZED:  // the parent reads the resized extent itself
        return add(T[0], depth + 1, idx);
      case MPI_COMBINER_CONTIGUOUS:
        return vector(I[0], 1, ext(T[0]), T[0], depth, idx);
      case MPI_COMBINER_VECTOR:
        return vector(I[0], I[1], static_cast<MPI_Count>(I[2]) * ext(T[0]), T[0], depth, idx);
      case MPI_COMBINER_HVECTOR:
        return vector(I[0], I[1], A[0], T[0], depth, idx);
      case MPI_COMBINER_INDEXED: {
        const MPI_Count x = ext(T[0]);
        return entries(
            I[0], [&](int i) { return I[1 + i]; },
            [&](int i) { return static_cast<MPI_Count>(I[1 + I[0] + i]) * x; }, same, depth, idx);
      }
      case MPI_COMBINER_HINDEXED:
        return entries(
            I[0], [&](int i) { return I[1 + i]; }, [&](int i) { return MPI_Count{A[i]}; }, same,
            depth, idx);
      case MPI_COMBINER_INDEXED_BLOCK: {
        const MPI_Count x = ext(T[0]);
        return entries(
            I[0], [&](int) { return I[1]; },
            [&](int i) { return static_cast<MPI_Count>(I[2 + i]) * x; }, same, depth, idx);
      }
      case MPI_COMBINER_HINDEXED_BLOCK:
        return entries(
            I[0], [&](int) { return I[1]; }, [&](int i) { return MPI_Count{A[i]}; }, same, depth,
            idx);
      case MPI_COMBINER_STRUCT:
        return entries(
            I[0], [&](int i) { return I[1 + i]; }, [&](int i) { return MPI_Count{A[i]}; },
            [&](int i) { return T[static_cast<std::size_t>(i)]; }, depth, idx);
      case MPI_COMBINER_SUBARRAY:
        return subarray(c, depth, idx);
      default:  // named types with a hole, darray, Fortran-parameter types
        return packed(t, e, idx);
    }
  }

  // `count` blocks of `blocklen` elements of `t`, `stride` bytes apart.
  int vector(MPI_Count count, MPI_Count blocklen, MPI_Count stride, MPI_Datatype t, int depth,
             std::uint32_t* idx) {
    *idx = kNone;
    Extents e;
    if (int rc = e.read(t)) return rc;
    std::uint32_t child = kNone;
    if (int rc = add(t, depth + 1, &child)) return rc;
    return vector_of(count, blocklen, stride, child, e.extent, idx);
  }

  // The same over record `child` of extent `extent`; a dense leaf child
  // folds into one leaf (contiguous) or a vector of leaves.
  int vector_of(MPI_Count count, MPI_Count blocklen, MPI_Count stride, std::uint32_t child,
                MPI_Count extent, std::uint32_t* idx) {
    *idx = kNone;
    if (child == kNone || count <= 0 || blocklen <= 0) return MPI_SUCCESS;
    const TypeNode& c = out_[child];
    if (c.kind == NodeKind::kLeaf && (blocklen == 1 || extent == c.a)) {
      const TypeWide block = static_cast<TypeWide>(blocklen) * c.a;
      if (block > static_cast<TypeWide>(kMaxTypeBytes)) return MPI_ERR_TYPE;
      const auto b = static_cast<std::int64_t>(block);
      if (count == 1 || stride == b) {
        if (block * count > static_cast<TypeWide>(kMaxTypeBytes)) return MPI_ERR_TYPE;
        if (child + 1 == out_.size()) {  // just built for this vector alone: reuse it
          out_[child].a = b * count;
          return *idx = child, MPI_SUCCESS;
        }
        return push({NodeKind::kLeaf, {}, 0, b * count, 0, 0, 0}, idx);
      }
      std::uint32_t leaf = child;
      if (blocklen != 1)
        if (int rc = push({NodeKind::kLeaf, {}, 0, b, 0, 0, 0}, &leaf)) return rc;
      return push({NodeKind::kVector, {}, leaf, count, 1, stride, b}, idx);
    }
    return push({NodeKind::kVector, {}, child, count, blocklen, stride, extent}, idx);
  }

  // An entry list: block i is len(i) elements of type(i) at disp(i) bytes.
  template <class Len, class Disp, class Type>
  int entries(int n, Len len, Disp disp, Type type, int depth, std::uint32_t* idx) {
    *idx = kNone;
    std::vector<std::uint32_t> child(static_cast<std::size_t>(n), kNone);
    std::vector<MPI_Count> extent(static_cast<std::size_t>(n), 0);
    MPI_Datatype last = MPI_DATATYPE_NULL;  // most entries share one type: built once
    std::uint32_t last_child = kNone;
    MPI_Count last_extent = 0;
    for (int i = 0; i < n; ++i) {
      const auto u = static_cast<std::size_t>(i);
      if (len(i) <= 0) continue;
      if (last == MPI_DATATYPE_NULL || type(i) != last) {
        Extents e;
        if (int rc = e.read(type(i))) return rc;
        last_extent = e.extent;
        if (int rc = add(type(i), depth + 1, &last_child)) return rc;
        last = type(i);
      }
      child[u] = last_child;
      extent[u] = last_extent;
    }
    std::uint32_t m = 0;
    for (int i = 0; i < n; ++i) {
      const auto u = static_cast<std::size_t>(i);
      if (child[u] == kNone || len(i) <= 0) continue;  // no data: no entry
      std::uint32_t at = 0;
      if (int rc = push({NodeKind::kEntry, {}, child[u], disp(i), len(i), 0, extent[u]}, &at))
        return rc;
      ++m;
    }
    if (m == 0) return MPI_SUCCESS;
    return push({NodeKind::kStruct, {}, m, 0, 0, 0, 0}, idx);
  }

  int one_entry(MPI_Count disp, std::uint32_t child, std::uint32_t* idx) {
    std::uint32_t at = 0;
    if (int rc = push({NodeKind::kEntry, {}, child, disp, 1, 0, 0}, &at)) return rc;
    return push({NodeKind::kStruct, {}, 1, 0, 0, 0, 0}, idx);
  }

  // MPI_Type_create_subarray(ndims, sizes, subsizes, starts, order, old):
  // one vector per dimension, slowest outermost, at the starts' offset.
  int subarray(const TypeContents& c, int depth, std::uint32_t* idx) {
    *idx = kNone;
    const int nd = c.ints[0];
    const int* sizes = &c.ints[1];
    const int* subsizes = sizes + nd;
    const int* starts = subsizes + nd;
    const bool fortran = c.ints[1 + 3 * nd] == MPI_ORDER_FORTRAN;
    Extents e;
    if (int rc = e.read(c.types[0])) return rc;
    std::uint32_t inner = kNone;
    if (int rc = add(c.types[0], depth + 1, &inner)) return rc;
    MPI_Count stride = e.extent, disp = 0;
    for (int k = nd - 1; k >= 0 && inner != kNone; --k) {  // fastest dimension first
      const int d = fortran ? nd - 1 - k : k;
      disp += static_cast<MPI_Count>(starts[d]) * stride;
      if (int rc = vector_of(subsizes[d], 1, stride, inner, e.extent, &inner)) return rc;
      stride *= sizes[d];
    }
    if (inner == kNone || disp == 0) return *idx = inner, MPI_SUCCESS;
    return one_entry(disp, inner, idx);
  }

  // One element's blocks read off MPI_Pack: a buffer whose every byte holds
  // its own offset (3 passes, one per offset byte, spans up to 16 MiB).
  int packed(MPI_Datatype t, const Extents& e, std::uint32_t* idx) {
    *idx = kNone;
    if (e.textent > kMaxPackedSpan || e.size > INT_MAX) return MPI_ERR_TYPE;
    const auto span = static_cast<std::size_t>(e.textent);
    const auto total = static_cast<std::size_t>(e.size);
    std::vector<unsigned char> src(span), out(total);
    std::vector<std::uint32_t> pos(total, 0);
    for (int p = 0; p < 3; ++p) {
      for (std::size_t i = 0; i < span; ++i) src[i] = static_cast<unsigned char>(i >> (8 * p));
      int at = 0;
      if (MPI_Pack(src.data() - e.tlb, 1, t, out.data(), static_cast<int>(total), &at,
                   MPI_COMM_SELF) != MPI_SUCCESS)
        return MPI_ERR_TYPE;
      for (std::size_t i = 0; i < total; ++i) pos[i] |= std::uint32_t{out[i]} << (8 * p);
    }
    std::vector<Block> blocks;
    for (std::size_t i = 0; i < total; ++i) {
      const std::int64_t o = static_cast<std::int64_t>(pos[i]) + e.tlb;
      if (!blocks.empty() &&
          blocks.back().offset + static_cast<std::int64_t>(blocks.back().len) == o)
        ++blocks.back().len;
      else
        blocks.push_back(Block{o, 1});
    }
    std::vector<std::uint32_t> leaves(blocks.size());
    for (std::size_t i = 0; i < blocks.size(); ++i)
      if (int rc = push({NodeKind::kLeaf, {}, 0, static_cast<std::int64_t>(blocks[i].len), 0, 0, 0},
                        &leaves[i]))
        return rc;
    for (std::size_t i = 0; i < blocks.size(); ++i) {
      std::uint32_t at = 0;
      if (int rc = push({NodeKind::kEntry, {}, leaves[i], blocks[i].offset, 1, 0, 0}, &at))
        return rc;
    }
    return push({NodeKind::kStruct, {}, static_cast<std::uint32_t>(blocks.size()), 0, 0, 0, 0},
                idx);
  }

  int push(const TypeNode& n, std::uint32_t* idx) {
    if (out_.size() >= kMaxTypeNodes) return MPI_ERR_TYPE;
    *idx = static_cast<std::uint32_t>(out_.size());
    out_.push_back(n);
    return MPI_SUCCESS;
  }

 private:
  std::vector<TypeNode>& out_;
};

int TypeMap::describe(MPI_Datatype type, int count) {
  nodes_.clear();
  size_.clear();
  lo_ = hi_ = 0;
  if (count < 0) return MPI_ERR_COUNT;
  Extents e;
  if (int rc = e.read(type)) return rc;
  if (e.size == 0 || count == 0) return MPI_SUCCESS;
  TypeMapBuilder b(nodes_);
  std::uint32_t one = kNone, root = kNone;
  if (int rc = b.add(type, 0, &one)) return rc;
  if (int rc = b.vector_of(count, 1, e.extent, one, e.extent, &root)) return rc;
  if (root != nodes_.size() - 1)  // the root is the last record
    if (int rc = b.one_entry(0, root, &root)) return rc;
  if (validate() != nullptr) return MPI_ERR_TYPE;  // not reached for a valid type
  const TypeWide reach = static_cast<TypeWide>(count - 1) * e.extent;
  const TypeWide lo = e.tlb + std::min<TypeWide>(0, reach);
  const TypeWide hi = e.tlb + e.textent + std::max<TypeWide>(0, reach);
  if (lo < INT64_MIN || hi > INT64_MAX) return MPI_ERR_TYPE;
  lo_ = static_cast<std::int64_t>(lo);
  hi_ = static_cast<std::int64_t>(hi);
  return MPI_SUCCESS;
}

const char* TypeMap::parse(const std::byte* p, std::size_t n) {
  nodes_.clear();
  size_.clear();
  if (n > kMaxTypeNodes) return "type description too large";
  nodes_.resize(n);
  if (n > 0) std::memcpy(nodes_.data(), p, n * sizeof(TypeNode));
  if (const char* why = validate()) {
    nodes_.clear();
    size_.clear();
    return why;
  }
  return nullptr;
}

const char* TypeMap::validate() {
  const std::size_t n = nodes_.size();
  size_.assign(n, 0);
  std::vector<std::uint8_t> depth(n, 1);
  constexpr auto kMax = static_cast<TypeWide>(kMaxTypeBytes);
  std::uint32_t open = 0;  // entries waiting for their struct
  auto child_ok = [&](std::size_t i, std::uint32_t c) {
    return c < i && nodes_[c].kind != NodeKind::kEntry;
  };
  for (std::size_t i = 0; i < n; ++i) {
    const TypeNode& t = nodes_[i];
    if (t.kind != NodeKind::kEntry && t.kind != NodeKind::kStruct && open != 0)
      return "type entries outside a struct";
    TypeWide size = 0;
    switch (t.kind) {
      case NodeKind::kLeaf:
        if (t.a < 0 || t.a > kMax) return "bad type leaf";
        size = t.a;
        break;
      case NodeKind::kVector: {
        if (!child_ok(i, t.child) || t.a < 0 || t.b < 0) return "bad type vector";
        const TypeWide units = static_cast<TypeWide>(t.a) * t.b;
        if (units > kMax) return "type too large";
        size = units * size_[t.child];
        depth[i] = static_cast<std::uint8_t>(depth[t.child] + 1);
        break;
      }
      case NodeKind::kEntry:
        if (!child_ok(i, t.child) || t.b <= 0) return "bad type entry";
        size = static_cast<TypeWide>(t.b) * size_[t.child];
        if (size == 0) return "type entry without data";
        depth[i] = static_cast<std::uint8_t>(depth[t.child] + 1);
        ++open;
        break;
      case NodeKind::kStruct:
        if (t.child == 0 || t.child != open) return "bad type struct";
        for (std::size_t e = i - t.child; e < i; ++e) {
          size += size_[e];
          depth[i] = std::max<std::uint8_t>(depth[i], static_cast<std::uint8_t>(depth[e] + 1));
        }
        open = 0;
        break;
      default:
        return "bad type record";
    }
    if (size > kMax) return "type too large";
    if (depth[i] > kMaxRecordDepth) return "type too deep";
    size_[i] = static_cast<std::uint64_t>(size);
  }
  if (n > 0 && (open != 0 || nodes_.back().kind == NodeKind::kEntry))
    return "type entries outside a struct";
  return nullptr;
}

}  // namespace zipper::client::rma
