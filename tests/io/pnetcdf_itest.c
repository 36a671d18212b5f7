/* PnetCDF, unmodified: a 3-D variable split across all ranks along its
 * first dimension (collective put), read back whole by every rank and
 * checked; io_itest.py compares ncdump with a native run's. Usage:
 * pnetcdf_itest FILE */
#include <mpi.h>
#include <pnetcdf.h>
#include <stdio.h>
#include <stdlib.h>

enum { Z = 2, Y = 6, X = 8 };

#define CHECK(x)                                                                         \
  do {                                                                                   \
    int e_ = (x);                                                                        \
    if (e_ != NC_NOERR) {                                                                \
      fprintf(stderr, "FAIL rank %d line %d: %s\n", rank, __LINE__, ncmpi_strerror(e_)); \
      MPI_Abort(MPI_COMM_WORLD, 1);                                                      \
    }                                                                                    \
  } while (0)

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, n, nc, dims[3], var;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  if (argc < 2) MPI_Abort(MPI_COMM_WORLD, 2);
  CHECK(ncmpi_create(MPI_COMM_WORLD, argv[1], NC_CLOBBER | NC_64BIT_DATA, MPI_INFO_NULL, &nc));
  CHECK(ncmpi_def_dim(nc, "z", (MPI_Offset)n * Z, &dims[0]));
  CHECK(ncmpi_def_dim(nc, "y", Y, &dims[1]));
  CHECK(ncmpi_def_dim(nc, "x", X, &dims[2]));
  CHECK(ncmpi_def_var(nc, "field", NC_INT, 3, dims, &var));
  CHECK(ncmpi_put_att_text(nc, NC_GLOBAL, "title", 13, "zipper io 25"));
  CHECK(ncmpi_enddef(nc));
  int* mine = malloc(sizeof(int) * Z * Y * X);
  for (int i = 0; i < Z * Y * X; ++i) mine[i] = (rank * Z * Y * X + i) * 3 + 1;
  MPI_Offset start[3] = {(MPI_Offset)rank * Z, 0, 0}, count[3] = {Z, Y, X};
  CHECK(ncmpi_put_vara_int_all(nc, var, start, count, mine));
  CHECK(ncmpi_sync(nc));
  MPI_Barrier(MPI_COMM_WORLD);
  int* all = malloc(sizeof(int) * n * Z * Y * X);
  MPI_Offset s0[3] = {0, 0, 0}, c0[3] = {(MPI_Offset)n * Z, Y, X};
  CHECK(ncmpi_get_vara_int_all(nc, var, s0, c0, all));
  for (int i = 0; i < n * Z * Y * X; ++i)
    if (all[i] != i * 3 + 1) {
      fprintf(stderr, "FAIL rank %d: value %d is %d\n", rank, i, all[i]);
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
  CHECK(ncmpi_close(nc));
  if (rank == 0) printf("PASS pnetcdf %d ranks\n", n);
  free(mine);
  free(all);
  MPI_Finalize();
  return 0;
}
