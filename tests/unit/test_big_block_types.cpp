// The collectives' types for 2 GiB and more (collectives/byte_type.h,
// collectives/uniform_blocks.h): sizes, extents and layouts as MPI reports
// them, without touching memory; and that libmmpi sees a byte type as one
// contiguous block (sent in place, no packed copy). Own main: MPI_Init as a
// singleton.
#include <gtest/gtest.h>
#include <mpi.h>

#include <climits>
#include <vector>

#include "client/datatype.h"
#include "collectives/byte_type.h"
#include "collectives/uniform_blocks.h"

using zipper::coll::ByteType;
using zipper::coll::UniformBlocks;

namespace {

struct Shape {
  MPI_Count size = 0, lb = 0, extent = 0, true_lb = 0, true_extent = 0;
};

Shape shape(MPI_Datatype t) {
  Shape s;
  MPI_Type_size_x(t, &s.size);
  MPI_Type_get_extent_x(t, &s.lb, &s.extent);
  MPI_Type_get_true_extent_x(t, &s.true_lb, &s.true_extent);
  return s;
}

}  // namespace

TEST(ByteType, SmallIsTheUnitItself) {
  for (MPI_Count n : {MPI_Count{0}, MPI_Count{1}, MPI_Count{INT_MAX}}) {
    const ByteType b(n, MPI_PACKED);
    EXPECT_EQ(b.status(), MPI_SUCCESS);
    EXPECT_EQ(b.count(), n);
    EXPECT_EQ(b.type(), MPI_PACKED);
  }
}

TEST(ByteType, PastIntMaxIsOneContiguousElement) {
  const MPI_Count g = MPI_Count{1} << 30;
  for (MPI_Count n : {MPI_Count{INT_MAX} + 1, 2 * g, 3 * g + 5, 9 * g + 123457}) {
    const ByteType b(n, MPI_BYTE);
    ASSERT_EQ(b.status(), MPI_SUCCESS) << n;
    EXPECT_EQ(b.count(), 1) << n;
    const Shape s = shape(b.type());
    EXPECT_EQ(s.size, n);
    EXPECT_EQ(s.lb, 0);
    EXPECT_EQ(s.extent, n);
    EXPECT_EQ(s.true_lb, 0);
    EXPECT_EQ(s.true_extent, n);
    // libmmpi sends it in place: one block at the buffer's start.
    std::byte base{};
    zipper::client::Layout l;
    ASSERT_EQ(zipper::client::describe(&base, 1, b.type(), &l), MPI_SUCCESS);
    EXPECT_TRUE(l.contiguous) << n;
    EXPECT_EQ(l.base, &base);
    EXPECT_EQ(l.bytes, static_cast<std::uint64_t>(n));
  }
}

TEST(ByteType, NegativeIsACountError) {
  const ByteType b(-1, MPI_BYTE);
  EXPECT_EQ(b.status(), MPI_ERR_COUNT);
  EXPECT_EQ(b.count(), 0);
}

TEST(UniformBlocks, WithinIntTheTypeItself) {
  const UniformBlocks u(4, 1000, MPI_INT);
  EXPECT_EQ(u.status(), MPI_SUCCESS);
  EXPECT_EQ(u.unit(), MPI_INT);
  EXPECT_EQ(u.per_block(), 1000);
  EXPECT_EQ(u.elements(3), 3000);
  EXPECT_EQ(u.counts(), std::vector<int>(4, 1000));
  EXPECT_EQ(u.displacements(), (std::vector<int>{0, 1000, 2000, 3000}));
}

TEST(UniformBlocks, PastIntMaxOneElementPerBlock) {
  // 3 blocks of 2^30 ints (4 GiB each): 3 * 2^30 elements passes INT_MAX.
  const int count = 1 << 30;
  const UniformBlocks u(3, count, MPI_INT);
  ASSERT_EQ(u.status(), MPI_SUCCESS);
  EXPECT_NE(u.unit(), MPI_INT);
  EXPECT_EQ(u.per_block(), 1);
  EXPECT_EQ(u.elements(3), 3);
  EXPECT_EQ(u.counts(), std::vector<int>(3, 1));
  EXPECT_EQ(u.displacements(), (std::vector<int>{0, 1, 2}));
  // Element r of the unit starts where block r of count ints does.
  const Shape s = shape(u.unit());
  EXPECT_EQ(s.size, MPI_Count{count} * 4);
  EXPECT_EQ(s.lb, 0);
  EXPECT_EQ(s.extent, MPI_Count{count} * 4);
}

TEST(UniformBlocks, KeepsAResizedTypesStride) {
  // Blocks of a type whose extent exceeds its size: a block's unit spans
  // count extents, as the user's buffer lays the blocks out.
  MPI_Datatype padded = MPI_DATATYPE_NULL;
  MPI_Type_create_resized(MPI_INT, 0, 16, &padded);
  MPI_Type_commit(&padded);
  const int count = 1 << 30;
  {
    const UniformBlocks u(2, count, padded);
    ASSERT_EQ(u.status(), MPI_SUCCESS);
    const Shape s = shape(u.unit());
    EXPECT_EQ(s.size, MPI_Count{count} * 4);
    EXPECT_EQ(s.extent, MPI_Count{count} * 16);
  }
  MPI_Type_free(&padded);
}
