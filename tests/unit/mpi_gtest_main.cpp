// main() of the unit tests that need MPI but no mpirun: MPI_Init makes the
// process a singleton (one rank, MPI_COMM_SELF-like world), enough for
// datatype construction and MPI_Pack.
#include <gtest/gtest.h>
#include <mpi.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  ::testing::InitGoogleTest(&argc, argv);
  const int rc = RUN_ALL_TESTS();
  MPI_Finalize();
  return rc;
}
