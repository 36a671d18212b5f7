// RMA target datatypes of 2 GiB and more: rma::TypeMap describes a
// target datatype by its constructors and walks it lazily. Every block the
// walk gives, over the whole type and over ranges cut anywhere, must be the
// typemap MPI_Pack itself reads (a buffer whose bytes hold their own offsets,
// packed); a vector of 4 GiB and more is a few records, walked in the middle
// without allocating; and a hostile description is refused with a reason,
// never walked out of bounds or forever.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "client/rma_typemap.h"
#include "tests/unit/committed_type.h"

namespace rma = zipper::client::rma;

namespace {

using Type = zipper::test::CommittedType;

// The reference: one offset per packed byte, read off MPI_Pack.
std::vector<std::int64_t> pack_offsets(MPI_Datatype t, int count) {
  MPI_Count size, lb, extent, tlb, textent;
  MPI_Type_size_x(t, &size);
  MPI_Type_get_extent_x(t, &lb, &extent);
  MPI_Type_get_true_extent_x(t, &tlb, &textent);
  const std::int64_t reach = static_cast<std::int64_t>(count - 1) * extent;
  const std::int64_t lo = tlb + std::min<std::int64_t>(0, reach);
  const std::int64_t span = textent + (reach < 0 ? -reach : reach);
  const std::size_t total = static_cast<std::size_t>(size) * static_cast<std::size_t>(count);
  // An image whose every byte holds one byte of its own offset, packed once
  // per offset byte (spans below 16 MiB).
  std::vector<std::int64_t> out(total);
  std::vector<unsigned char> img(static_cast<std::size_t>(span)), packed(total);
  for (int p = 0; p < 3; ++p) {
    for (std::size_t i = 0; i < img.size(); ++i) img[i] = static_cast<unsigned char>(i >> (8 * p));
    int at = 0;
    EXPECT_EQ(MPI_Pack(img.data() - lo, count, t, packed.data(), static_cast<int>(total), &at,
                       MPI_COMM_SELF),
              MPI_SUCCESS);
    for (std::size_t i = 0; i < total; ++i)
      out[i] |= static_cast<std::int64_t>(packed[i]) << (8 * p);
  }
  for (auto& o : out) o += lo;
  return out;
}

std::vector<rma::Block> merge(const std::vector<std::int64_t>& offs, std::size_t from,
                              std::size_t n) {
  std::vector<rma::Block> b;
  for (std::size_t i = from; i < from + n; ++i) {
    if (!b.empty() && b.back().offset + static_cast<std::int64_t>(b.back().len) == offs[i])
      ++b.back().len;
    else
      b.push_back(rma::Block{offs[i], 1});
  }
  return b;
}

std::vector<rma::Block> walked(const rma::TypeMap& m, std::uint64_t from, std::uint64_t n) {
  std::vector<rma::Block> b;
  EXPECT_TRUE(m.walk(from, n, [&](rma::TypeWide o, std::uint64_t len) {
    b.push_back(rma::Block{static_cast<std::int64_t>(o), len});
    return true;
  }));
  return b;
}

bool same(const std::vector<rma::Block>& a, const std::vector<rma::Block>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (a[i].offset != b[i].offset || a[i].len != b[i].len) return false;
  return true;
}

// The description of `count` of `t`, sent through parse() as a target would,
// against MPI_Pack: whole, and cut at several places.
void check(MPI_Datatype t, int count, const std::string& what) {
  SCOPED_TRACE(what + " x" + std::to_string(count));
  rma::TypeMap origin;
  ASSERT_EQ(origin.describe(t, count), MPI_SUCCESS);
  rma::TypeMap target;
  ASSERT_EQ(target.parse(reinterpret_cast<const std::byte*>(origin.nodes().data()),
                         origin.nodes().size()),
            nullptr);
  const std::vector<std::int64_t> offs = pack_offsets(t, count);
  ASSERT_EQ(target.bytes(), offs.size());
  if (offs.empty()) return;
  EXPECT_TRUE(same(walked(target, 0, offs.size()), merge(offs, 0, offs.size())));
  std::int64_t lo = offs[0], hi = offs[0] + 1;
  for (auto o : offs) lo = std::min(lo, o), hi = std::max(hi, o + 1);
  EXPECT_EQ(origin.lo(), lo);
  EXPECT_EQ(origin.hi(), hi);
  const std::size_t n = offs.size();
  for (std::size_t cut : {std::size_t{1}, n / 3, n / 2 + 1, n - 1})
    for (std::size_t len : {std::size_t{1}, std::size_t{7}, n / 4 + 1, n})
      if (cut < n) {
        const std::size_t l = std::min(len, n - cut);
        EXPECT_TRUE(same(walked(target, cut, l), merge(offs, cut, l)))
            << "range " << cut << "+" << l;
      }
}

}  // namespace

TEST(RmaTypeMap, EveryConstructorMatchesMpiPack) {
  MPI_Datatype t;
  for (int count : {1, 3}) {
    check(MPI_INT, count, "int");
    check(MPI_SHORT_INT, count, "short_int (hole)");
    check(MPI_LONG_DOUBLE_INT, count, "long_double_int (hole)");
    MPI_Type_contiguous(5, MPI_DOUBLE, &t);
    check(Type(t).t, count, "contiguous");
    MPI_Type_vector(4, 3, 5, MPI_INT, &t);
    check(Type(t).t, count, "vector");
    MPI_Type_create_hvector(4, 2, -24, MPI_SHORT_INT, &t);
    check(Type(t).t, count, "hvector negative stride of a pair type");
    const int bl[3] = {2, 0, 3}, disp[3] = {7, 1, 0};
    MPI_Type_indexed(3, bl, disp, MPI_INT, &t);
    check(Type(t).t, count, "indexed out of order, an empty block");
    const MPI_Aint hd[3] = {40, 0, 13};
    MPI_Type_create_hindexed(3, bl, hd, MPI_CHAR, &t);
    check(Type(t).t, count, "hindexed");
    const int ib[3] = {4, 0, 9};
    MPI_Type_create_indexed_block(3, 2, ib, MPI_DOUBLE, &t);
    check(Type(t).t, count, "indexed_block");
    MPI_Type_create_hindexed_block(3, 1, hd, MPI_INT, &t);
    check(Type(t).t, count, "hindexed_block");
    {
      MPI_Type_vector(2, 1, 3, MPI_FLOAT, &t);
      Type inner(t);
      const int sl[4] = {1, 2, 1, 0};
      const MPI_Aint sd[4] = {0, 16, 64, 8};
      MPI_Datatype st[4] = {MPI_CHAR, inner.t, MPI_2INT, MPI_DOUBLE};
      MPI_Type_create_struct(4, sl, sd, st, &t);
      check(Type(t).t, count, "struct of mixed types");
      MPI_Type_create_struct(4, sl, sd, st, &t);
      Type s(t);
      MPI_Type_create_resized(s.t, -8, 200, &t);
      check(Type(t).t, count, "resized struct");
      MPI_Type_vector(3, 2, 3, s.t, &t);
      check(Type(t).t, count, "vector of structs");
    }
    const int sizes[3] = {4, 5, 6}, subs[3] = {2, 3, 4}, starts[3] = {1, 2, 1};
    MPI_Type_create_subarray(3, sizes, subs, starts, MPI_ORDER_C, MPI_INT, &t);
    check(Type(t).t, count, "subarray C");
    MPI_Type_create_subarray(3, sizes, subs, starts, MPI_ORDER_FORTRAN, MPI_SHORT, &t);
    check(Type(t).t, count, "subarray Fortran");
    const int full[2] = {3, 4}, zero[2] = {0, 0};
    MPI_Type_create_subarray(2, full, full, zero, MPI_ORDER_C, MPI_INT, &t);
    check(Type(t).t, count, "subarray of the whole array");
    const int gs[2] = {8, 6}, distr[2] = {MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_BLOCK},
              dargs[2] = {2, MPI_DISTRIBUTE_DFLT_DARG}, ps[2] = {2, 2};
    MPI_Type_create_darray(4, 1, 2, gs, distr, dargs, ps, MPI_ORDER_C, MPI_INT, &t);
    check(Type(t).t, count, "darray (through MPI_Pack)");
    MPI_Type_dup(MPI_DOUBLE_INT, &t);
    check(Type(t).t, count, "dup of a pair type");
  }
}

TEST(RmaTypeMap, ContiguousIsOneLeaf) {
  rma::TypeMap m;
  ASSERT_EQ(m.describe(MPI_INT, 1000), MPI_SUCCESS);
  ASSERT_EQ(m.nodes().size(), 1u);
  EXPECT_EQ(m.bytes(), 4000u);
  MPI_Datatype t;
  MPI_Type_vector(10, 4, 4, MPI_INT, &t);  // dense: one block
  Type v(t);
  ASSERT_EQ(m.describe(v.t, 7), MPI_SUCCESS);
  EXPECT_EQ(walked(m, 0, m.bytes()).size(), 1u);
}

TEST(RmaTypeMap, HugeVectorIsFewRecordsAndWalksInTheMiddle) {
  // 2^22 blocks of 1 KiB, 2 KiB apart, x 3: 12 GiB of data over 24 GiB,
  // described without touching memory.
  MPI_Datatype t;
  MPI_Type_vector(1 << 22, 1024, 2048, MPI_BYTE, &t);
  Type v(t);
  rma::TypeMap m;
  ASSERT_EQ(m.describe(v.t, 3), MPI_SUCCESS);
  EXPECT_LE(m.nodes().size(), 4u);
  EXPECT_EQ(m.bytes(), std::uint64_t{3} << 32);
  const std::int64_t ext = (std::int64_t{1} << 33) - 1024;  // last block's end
  EXPECT_EQ(m.lo(), 0);
  EXPECT_EQ(m.hi(), 2 * ext + ext);
  // 3 KiB from the middle of the second element's 5th block.
  const std::uint64_t from = (std::uint64_t{1} << 32) + 4 * 1024 + 512;
  const auto b = walked(m, from, 3 * 1024);
  ASSERT_EQ(b.size(), 4u);
  EXPECT_EQ(b[0].offset, ext + 4 * 2048 + 512);
  EXPECT_EQ(b[0].len, 512u);
  EXPECT_EQ(b[1].offset, ext + 5 * 2048);
  EXPECT_EQ(b[3].len, 512u);
}

TEST(RmaTypeMap, HostileDescriptionsAreRefused) {
  auto parse = [](std::vector<rma::TypeNode> n) {
    rma::TypeMap m;
    const char* why = m.parse(reinterpret_cast<const std::byte*>(n.data()), n.size());
    return std::string(why == nullptr ? "" : why);
  };
  auto leaf = [](std::int64_t len) {
    rma::TypeNode n;
    n.kind = rma::NodeKind::kLeaf;
    n.a = len;
    return n;
  };
  auto node = [](rma::NodeKind k, std::uint32_t child, std::int64_t a, std::int64_t b,
                 std::int64_t c = 0, std::int64_t d = 0) {
    rma::TypeNode n;
    n.kind = k;
    n.child = child;
    n.a = a;
    n.b = b;
    n.c = c;
    n.d = d;
    return n;
  };
  using K = rma::NodeKind;
  EXPECT_EQ(parse({leaf(16)}), "");
  EXPECT_NE(parse({leaf(-1)}), "");
  EXPECT_NE(parse({node(K::kVector, 0, 1, 1)}), "");                    // its own child
  EXPECT_NE(parse({leaf(1), node(K::kVector, 2, 1, 1), leaf(1)}), "");  // a later child
  EXPECT_NE(parse({leaf(1), node(K::kVector, 0, -1, 1)}), "");
  EXPECT_EQ(parse({leaf(1), node(K::kVector, 0, std::int64_t{1} << 61, 2)}), "");
  EXPECT_NE(parse({leaf(2), node(K::kVector, 0, std::int64_t{1} << 61, 2)}), "");  // > 2^62
  EXPECT_NE(parse({leaf(1), node(K::kVector, 0, std::int64_t{1} << 40, std::int64_t{1} << 40)}),
            "");
  // Structs: entries right before, each with data, none elsewhere.
  EXPECT_EQ(parse({leaf(4), node(K::kEntry, 0, 8, 2, 0, 4), node(K::kStruct, 1, 0, 0)}), "");
  EXPECT_NE(parse({leaf(0), node(K::kEntry, 0, 8, 2), node(K::kStruct, 1, 0, 0)}), "");
  EXPECT_NE(parse({leaf(4), node(K::kEntry, 0, 8, 0), node(K::kStruct, 1, 0, 0)}), "");
  EXPECT_NE(parse({leaf(4), node(K::kEntry, 0, 8, 1), node(K::kStruct, 2, 0, 0)}), "");
  EXPECT_NE(parse({leaf(4), node(K::kEntry, 0, 8, 1)}), "");           // no struct
  EXPECT_NE(parse({leaf(4), node(K::kEntry, 0, 8, 1), leaf(4)}), "");  // dangling
  EXPECT_NE(parse({leaf(4), node(K::kEntry, 0, 8, 1), node(K::kEntry, 1, 0, 1),
                   node(K::kStruct, 2, 0, 0)}),
            "");  // an entry as a child
  EXPECT_NE(parse({node(K::kStruct, 0, 0, 0)}), "");
  rma::TypeNode bad = leaf(1);
  bad.kind = static_cast<K>(9);
  EXPECT_NE(parse({bad}), "");
  // Depth: a chain of vectors, allowed up to kMaxRecordDepth records.
  std::vector<rma::TypeNode> chain{leaf(8)};
  for (int k = 1; k < rma::kMaxRecordDepth; ++k)
    chain.push_back(node(K::kVector, static_cast<std::uint32_t>(k - 1), 1, 1));
  EXPECT_EQ(parse(chain), "");
  chain.push_back(node(K::kVector, static_cast<std::uint32_t>(chain.size() - 1), 1, 1));
  EXPECT_NE(parse(chain), "");
  // Offsets past 2^64: the walk stops (a refusal), no overflow.
  rma::TypeMap m;
  std::vector<rma::TypeNode> far{
      leaf(1), node(K::kVector, 0, std::int64_t{1} << 61, 1, std::int64_t{1} << 62, 1)};
  ASSERT_EQ(m.parse(reinterpret_cast<const std::byte*>(far.data()), far.size()), nullptr);
  int calls = 0;
  EXPECT_FALSE(m.walk((std::uint64_t{1} << 61) - 4, 4, [&](rma::TypeWide, std::uint64_t) {
    ++calls;
    return true;
  }));
  EXPECT_EQ(calls, 0);
  // A range past the type's bytes is refused by walk itself.
  EXPECT_FALSE(
      m.walk(std::uint64_t{1} << 61, 1, [](rma::TypeWide, std::uint64_t) { return true; }));
}
