// HandleTable (capi/fortran/handle_table.h): Fortran values of libmmpi-owned
// handles are stable while live, distinct, never Open MPI's small indices,
// reused after release, and unknown values convert to the null handle.
#include <gtest/gtest.h>

#include <set>
#include <vector>

#include "capi/fortran/handle_table.h"

using zipper::capi::HandleTable;

namespace {

// Distinct fake handles: addresses of an array's elements.
MPI_Request fake(std::vector<int>& store, size_t i) {
  return reinterpret_cast<MPI_Request>(&store[i]);
}

TEST(HandleTable, StableDistinctValues) {
  HandleTable<MPI_Request> t;
  std::vector<int> store(100);
  std::set<MPI_Fint> seen;
  for (size_t i = 0; i < store.size(); ++i) {
    const MPI_Fint f = t.to_f(fake(store, i), 0);
    EXPECT_GE(f, HandleTable<MPI_Request>::kBase);
    EXPECT_TRUE(seen.insert(f).second) << "value " << f << " given twice";
    EXPECT_EQ(t.to_f(fake(store, i), 0), f) << "c2f must be stable";
    EXPECT_EQ(t.to_c(f, MPI_REQUEST_NULL), fake(store, i));
  }
}

TEST(HandleTable, UnknownValuesAreNull) {
  HandleTable<MPI_Request> t;
  std::vector<int> store(1);
  t.to_f(fake(store, 0), 0);
  for (MPI_Fint f : {0, 1, 2, -1, -1001, HandleTable<MPI_Request>::kBase + 1, 0x7fffffff})
    EXPECT_EQ(t.to_c(f, MPI_REQUEST_NULL), MPI_REQUEST_NULL) << f;
}

TEST(HandleTable, ReleaseForgetsAndReuses) {
  HandleTable<MPI_Request> t;
  std::vector<int> store(3);
  const MPI_Fint a = t.to_f(fake(store, 0), 0);
  const MPI_Fint b = t.to_f(fake(store, 1), 0);
  t.release(a);
  EXPECT_EQ(t.to_c(a, MPI_REQUEST_NULL), MPI_REQUEST_NULL) << "released value still maps";
  EXPECT_EQ(t.to_c(b, MPI_REQUEST_NULL), fake(store, 1)) << "release touched another entry";
  t.release(a);  // twice: ignored
  t.release(12345);
  const MPI_Fint c = t.to_f(fake(store, 2), 0);
  EXPECT_EQ(c, a) << "the freed slot is reused, so the table stays as small as the live set";
  EXPECT_EQ(t.to_c(c, MPI_REQUEST_NULL), fake(store, 2));
  // The old handle again (e.g. the allocator reused the address) gets a fresh value.
  const MPI_Fint d = t.to_f(fake(store, 0), 0);
  EXPECT_NE(d, c);
  EXPECT_EQ(t.to_c(d, MPI_REQUEST_NULL), fake(store, 0));
}

TEST(HandleTable, ManyCyclesStayBounded) {
  HandleTable<MPI_Request> t;
  std::vector<int> store(8);
  MPI_Fint highest = 0;
  for (int round = 0; round < 10000; ++round) {
    std::vector<MPI_Fint> live;
    for (size_t i = 0; i < store.size(); ++i) live.push_back(t.to_f(fake(store, i), 0));
    for (MPI_Fint f : live) {
      highest = std::max(highest, f);
      t.release(f);
    }
  }
  EXPECT_LT(highest, HandleTable<MPI_Request>::kBase + 8);
}

}  // namespace
