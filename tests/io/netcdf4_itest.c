/* NetCDF-4 parallel (HDF5 underneath), unmodified: a 3-D variable split
 * across all ranks, written collectively, read back whole and checked;
 * io_itest.py compares ncdump with a native run's. Usage: netcdf4_itest FILE */
#include <mpi.h>
#include <netcdf.h>
#include <netcdf_par.h>
#include <stdio.h>
#include <stdlib.h>

enum { Z = 2, Y = 6, X = 8 };

#define CHECK(x)                                                                      \
  do {                                                                                \
    int e_ = (x);                                                                     \
    if (e_ != NC_NOERR) {                                                             \
      fprintf(stderr, "FAIL rank %d line %d: %s\n", rank, __LINE__, nc_strerror(e_)); \
      MPI_Abort(MPI_COMM_WORLD, 1);                                                   \
    }                                                                                 \
  } while (0)

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, n, nc, dims[3], var;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  if (argc < 2) MPI_Abort(MPI_COMM_WORLD, 2);
  CHECK(nc_create_par(argv[1], NC_NETCDF4 | NC_CLOBBER, MPI_COMM_WORLD, MPI_INFO_NULL, &nc));
  CHECK(nc_def_dim(nc, "z", (size_t)n * Z, &dims[0]));
  CHECK(nc_def_dim(nc, "y", Y, &dims[1]));
  CHECK(nc_def_dim(nc, "x", X, &dims[2]));
  CHECK(nc_def_var(nc, "field", NC_DOUBLE, 3, dims, &var));
  CHECK(nc_put_att_text(nc, NC_GLOBAL, "title", 13, "zipper io 25"));
  CHECK(nc_enddef(nc));
  CHECK(nc_var_par_access(nc, var, NC_COLLECTIVE));
  double* mine = malloc(sizeof(double) * Z * Y * X);
  for (int i = 0; i < Z * Y * X; ++i) mine[i] = (rank * Z * Y * X + i) * 0.25;
  size_t start[3] = {(size_t)rank * Z, 0, 0}, count[3] = {Z, Y, X};
  CHECK(nc_put_vara_double(nc, var, start, count, mine));
  CHECK(nc_sync(nc));
  MPI_Barrier(MPI_COMM_WORLD);
  double* all = malloc(sizeof(double) * n * Z * Y * X);
  size_t s0[3] = {0, 0, 0}, c0[3] = {(size_t)n * Z, Y, X};
  CHECK(nc_get_vara_double(nc, var, s0, c0, all));
  for (int i = 0; i < n * Z * Y * X; ++i)
    if (all[i] != i * 0.25) {
      fprintf(stderr, "FAIL rank %d: value %d is %g\n", rank, i, all[i]);
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
  CHECK(nc_close(nc));
  if (rank == 0) printf("PASS netcdf4 %d ranks\n", n);
  free(mine);
  free(all);
  MPI_Finalize();
  return 0;
}
