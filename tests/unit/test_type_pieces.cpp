// Counts of 2 GiB and more: client::for_each_piece splits a
// buffer/count/datatype into pieces MPI_Pack can take. Packing piece by
// piece with small limits must give exactly MPI_Pack's bytes in one call,
// for every constructor, and a type of more than 2 GiB must split into
// pieces within the limit whose sizes add up to its size (no memory touched).
#include <gtest/gtest.h>
#include <mpi.h>

#include <climits>
#include <cstddef>
#include <cstring>
#include <string>
#include <vector>

#include "client/datatype.h"
#include "client/type_pieces.h"
#include "tests/unit/committed_type.h"

namespace zc = zipper::client;

namespace {

using Type = zipper::test::CommittedType;

MPI_Datatype vec(int n, int bl, int stride, MPI_Datatype old) {
  MPI_Datatype t;
  MPI_Type_vector(n, bl, stride, old, &t);
  return t;
}

// The typed buffer's span (lb 0 assumed by the cases below).
std::size_t span(MPI_Datatype t, int count) {
  MPI_Count lb, extent, tlb, textent;
  MPI_Type_get_extent_x(t, &lb, &extent);
  MPI_Type_get_true_extent_x(t, &tlb, &textent);
  return static_cast<std::size_t>((count - 1) * extent + tlb + textent);
}

// Packs through for_each_piece at `limit` and checks the bytes and the
// unpacked buffer against MPI_Pack/MPI_Unpack in one call.
void check_pieces(MPI_Datatype t, int count, MPI_Count limit, const std::string& what) {
  const std::size_t n = span(t, count);
  std::vector<std::byte> buf(n);
  for (std::size_t i = 0; i < n; ++i) buf[i] = static_cast<std::byte>(i * 7 + 3);
  int psize = 0;
  ASSERT_EQ(MPI_Pack_size(count, t, MPI_COMM_SELF, &psize), MPI_SUCCESS);
  std::vector<std::byte> ref(static_cast<std::size_t>(psize));
  int pos = 0;
  ASSERT_EQ(MPI_Pack(buf.data(), count, t, ref.data(), psize, &pos, MPI_COMM_SELF), MPI_SUCCESS);
  ref.resize(static_cast<std::size_t>(pos));

  std::vector<std::byte> out(ref.size());
  std::size_t at = 0;
  int pieces = 0;
  ASSERT_EQ(zc::for_each_piece(buf.data(), count, t, limit,
                               [&](std::byte* p, int k, MPI_Datatype pt, MPI_Count bytes) {
                                 EXPECT_LE(bytes, std::max<MPI_Count>(limit, 16)) << what;
                                 int q = 0;
                                 const int rc =
                                     MPI_Pack(p, k, pt, out.data() + at,
                                              static_cast<int>(out.size() - at), &q, MPI_COMM_SELF);
                                 EXPECT_EQ(q, bytes) << what;
                                 at += static_cast<std::size_t>(q);
                                 ++pieces;
                                 return rc;
                               }),
            MPI_SUCCESS)
      << what;
  EXPECT_EQ(at, ref.size()) << what;
  EXPECT_EQ(0, std::memcmp(out.data(), ref.data(), ref.size())) << what << " limit " << limit;
  if (limit < static_cast<MPI_Count>(ref.size()) / 2) {
    EXPECT_GT(pieces, 1) << what;
  }

  // Unpack back piece by piece: the typed bytes come back, the gaps stay 0.
  std::vector<std::byte> want(n), got(n);
  pos = 0;
  ASSERT_EQ(MPI_Unpack(ref.data(), static_cast<int>(ref.size()), &pos, want.data(), count, t,
                       MPI_COMM_SELF),
            MPI_SUCCESS);
  at = 0;
  ASSERT_EQ(zc::for_each_piece(got.data(), count, t, limit,
                               [&](std::byte* p, int k, MPI_Datatype pt, MPI_Count) {
                                 int q = 0;
                                 const int rc =
                                     MPI_Unpack(ref.data() + at, static_cast<int>(ref.size() - at),
                                                &q, p, k, pt, MPI_COMM_SELF);
                                 at += static_cast<std::size_t>(q);
                                 return rc;
                               }),
            MPI_SUCCESS);
  EXPECT_EQ(0, std::memcmp(want.data(), got.data(), n)) << what << " unpack, limit " << limit;
}

void check_all_limits(MPI_Datatype t, int count, const std::string& what) {
  for (MPI_Count limit : {1, 5, 16, 100, 4096, 1 << 30}) check_pieces(t, count, limit, what);
}

}  // namespace

TEST(TypePieces, Named) { check_all_limits(MPI_INT, 1000, "int"); }

TEST(TypePieces, VectorAndHvector) {
  Type v(vec(37, 3, 5, MPI_INT));
  check_all_limits(v.t, 4, "vector");
  MPI_Datatype h;
  MPI_Type_create_hvector(9, 2, 40, MPI_DOUBLE, &h);
  Type ht(h);
  check_all_limits(ht.t, 3, "hvector");
}

TEST(TypePieces, IndexedFamiliesAndStruct) {
  int bl[] = {3, 1, 4, 1, 5};
  int di[] = {20, 0, 8, 30, 13};  // out of order on purpose
  MPI_Datatype t;
  MPI_Type_indexed(5, bl, di, MPI_SHORT, &t);
  Type ind(t);
  check_all_limits(ind.t, 3, "indexed");
  MPI_Aint ad[] = {96, 0, 40, 200, 120};
  MPI_Type_create_hindexed(5, bl, ad, MPI_INT, &t);
  Type hind(t);
  check_all_limits(hind.t, 2, "hindexed");
  MPI_Type_create_indexed_block(5, 2, di, MPI_INT, &t);
  Type ib(t);
  check_all_limits(ib.t, 2, "indexed_block");
  MPI_Type_create_hindexed_block(5, 2, ad, MPI_INT, &t);
  Type hib(t);
  check_all_limits(hib.t, 2, "hindexed_block");
  Type inner(vec(4, 1, 3, MPI_CHAR));
  int sbl[] = {2, 1, 3};
  MPI_Aint sd[] = {64, 0, 16};
  MPI_Datatype st[] = {MPI_DOUBLE, inner.t, MPI_INT};
  MPI_Type_create_struct(3, sbl, sd, st, &t);
  Type s(t);
  check_all_limits(s.t, 3, "struct");
}

TEST(TypePieces, NestedResizedDupContiguousSubarray) {
  Type v(vec(6, 2, 4, MPI_INT));
  MPI_Datatype t;
  MPI_Type_create_resized(v.t, 0, 200, &t);
  Type r(t);
  check_all_limits(r.t, 3, "resized");
  MPI_Type_dup(r.t, &t);
  Type d(t);
  MPI_Type_contiguous(5, d.t, &t);
  Type c(t);
  check_all_limits(c.t, 2, "contiguous of dup of resized vector");
  int sizes[] = {7, 6, 5}, subs[] = {3, 4, 2}, starts[] = {2, 1, 3};
  MPI_Type_create_subarray(3, sizes, subs, starts, MPI_ORDER_C, MPI_INT, &t);
  Type sc(t);
  check_all_limits(sc.t, 2, "subarray C");
  MPI_Type_create_subarray(3, sizes, subs, starts, MPI_ORDER_FORTRAN, MPI_DOUBLE, &t);
  Type sf(t);
  check_all_limits(sf.t, 2, "subarray Fortran");
}

// One element of 3 GiB (a vector with gaps) and 3 elements of 1.5 GiB:
// describe gives the 64-bit size and the pieces cover it within the limit.
TEST(TypePieces, LargerThanTwoGiBWithoutMemory) {
  const int blocks = 3 * (1 << 20);  // 3 Mi blocks of 1 KiB, 2 KiB apart
  Type big(vec(blocks, 1024, 2048, MPI_BYTE));
  MPI_Count size = 0;
  MPI_Type_size_x(big.t, &size);
  ASSERT_EQ(size, MPI_Count{3} << 30);
  zc::Layout l;
  ASSERT_EQ(zc::describe(nullptr, 1, big.t, &l), MPI_SUCCESS);
  EXPECT_EQ(l.bytes, std::uint64_t{3} << 30);
  EXPECT_FALSE(l.contiguous);
  for (int count : {1, 3}) {
    MPI_Count sum = 0, maxp = 0;
    MPI_Count next = 0;  // pieces go forward through the buffer
    bool ordered = true;
    ASSERT_EQ(zc::for_each_piece(nullptr, count, big.t, zc::kPackPieceLimit,
                                 [&](std::byte* p, int, MPI_Datatype, MPI_Count bytes) {
                                   const auto off = reinterpret_cast<std::intptr_t>(p);
                                   ordered = ordered && off >= next;
                                   next = off + 1;
                                   sum += bytes;
                                   maxp = std::max(maxp, bytes);
                                   return MPI_SUCCESS;
                                 }),
              MPI_SUCCESS);
    EXPECT_TRUE(ordered);
    EXPECT_EQ(sum, count * size);
    EXPECT_LE(maxp, zc::kPackPieceLimit);
  }
  // One element of 4 x (2^31 - 1) ints (32 GiB): the size stays 64-bit.
  MPI_Datatype t;
  Type chunk(vec(1, INT_MAX, INT_MAX, MPI_INT));
  MPI_Type_contiguous(4, chunk.t, &t);
  Type huge(t);
  ASSERT_EQ(zc::describe(nullptr, 1, huge.t, &l), MPI_SUCCESS);
  EXPECT_EQ(l.bytes, std::uint64_t{4} * INT_MAX * 4);
}

// A contiguous run built from chunks (BigMPI's and MPICH large_type_sendrec's
// struct of contiguous pieces) is one block: sent in place, not packed. A
// transpose and out-of-order or overlapping blocks are not.
TEST(TypePieces, ContiguousFromChunks) {
  MPI_Datatype chunk, chunks, rest, t;
  MPI_Type_contiguous(1000, MPI_CHAR, &chunk);
  MPI_Type_contiguous(3, chunk, &chunks);
  MPI_Type_contiguous(7, MPI_CHAR, &rest);
  int bl[] = {1, 1};
  MPI_Aint d[] = {0, 3000};
  MPI_Datatype ty[] = {chunks, rest};
  MPI_Type_create_struct(2, bl, d, ty, &t);
  Type s(t);
  zc::Layout l;
  ASSERT_EQ(zc::describe(nullptr, 2, s.t, &l), MPI_SUCCESS);
  EXPECT_TRUE(l.contiguous);
  EXPECT_EQ(l.bytes, 6014u);
  MPI_Aint swapped[] = {7, 0};
  MPI_Datatype ty2[] = {chunks, rest};
  MPI_Type_create_struct(2, bl, swapped, ty2, &t);
  Type back(t);
  ASSERT_EQ(zc::describe(nullptr, 1, back.t, &l), MPI_SUCCESS);
  EXPECT_FALSE(l.contiguous) << "blocks in decreasing address order";
  check_all_limits(back.t, 2, "struct out of order");
  // Columns of a 4x4 matrix of doubles, one after another: a transpose.
  MPI_Datatype col, tr;
  MPI_Type_create_hvector(4, 1, 4 * sizeof(double), MPI_DOUBLE, &col);
  MPI_Type_create_hvector(4, 1, sizeof(double), col, &tr);
  Type transpose(tr);
  ASSERT_EQ(zc::describe(nullptr, 1, transpose.t, &l), MPI_SUCCESS);
  EXPECT_FALSE(l.contiguous) << "transpose";
  MPI_Type_create_hvector(3, 2, 2 * 1000, chunk, &tr);  // back to back: one block
  Type hv(tr);
  ASSERT_EQ(zc::describe(nullptr, 1, hv.t, &l), MPI_SUCCESS);
  EXPECT_TRUE(l.contiguous);
  MPI_Type_free(&col);
  MPI_Type_free(&chunk);
  MPI_Type_free(&chunks);
  MPI_Type_free(&rest);
}
