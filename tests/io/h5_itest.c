/* Parallel HDF5, unmodified (plain mpicc, Debian's libhdf5-openmpi): run
 * natively and through zipper-run --transparent; io_itest.py compares the
 * two files' h5dump. Usage: h5_itest FILE. Rank r writes rows [r*R, r*R+R)
 * of a contiguous dataset collectively (hyperslab), its chunks of a chunked
 * dataset independently, then reads every other rank's block back and checks
 * each value; file and dataset attributes are written collectively. */
#include <hdf5.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

enum { R = 16, C = 64 };

static int value(int row, int col) { return row * 1000 + col; }

#define CHECK(x)                                                         \
  do {                                                                   \
    if ((x) < 0) {                                                       \
      fprintf(stderr, "FAIL rank %d line %d: %s\n", rank, __LINE__, #x); \
      MPI_Abort(MPI_COMM_WORLD, 1);                                      \
    }                                                                    \
  } while (0)

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, n;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  if (argc < 2) MPI_Abort(MPI_COMM_WORLD, 2);
  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  CHECK(H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL));
  hid_t file = H5Fcreate(argv[1], H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
  CHECK(file);
  hsize_t dims[2] = {(hsize_t)n * R, C};
  hid_t space = H5Screate_simple(2, dims, NULL);
  hid_t dset =
      H5Dcreate2(file, "blocks", H5T_NATIVE_INT, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  CHECK(dset);
  hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  hsize_t chunk[2] = {R / 2, C / 4};
  CHECK(H5Pset_chunk(dcpl, 2, chunk));
  hid_t chunked =
      H5Dcreate2(file, "chunked", H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  CHECK(chunked);

  /* Attributes (collective metadata writes). */
  hid_t ascalar = H5Screate(H5S_SCALAR);
  hid_t attr = H5Acreate2(file, "ranks", H5T_NATIVE_INT, ascalar, H5P_DEFAULT, H5P_DEFAULT);
  CHECK(H5Awrite(attr, H5T_NATIVE_INT, &n));
  H5Aclose(attr);
  hsize_t two = 2;
  hid_t avec = H5Screate_simple(1, &two, NULL);
  double scale[2] = {0.5, 1000.0};
  attr = H5Acreate2(dset, "scale", H5T_NATIVE_DOUBLE, avec, H5P_DEFAULT, H5P_DEFAULT);
  CHECK(H5Awrite(attr, H5T_NATIVE_DOUBLE, scale));
  H5Aclose(attr);

  int* mine = malloc(sizeof(int) * R * C);
  double* dmine = malloc(sizeof(double) * R * C);
  for (int i = 0; i < R; ++i)
    for (int j = 0; j < C; ++j) {
      mine[i * C + j] = value(rank * R + i, j);
      dmine[i * C + j] = 0.5 * value(rank * R + i, j);
    }
  hsize_t start[2] = {(hsize_t)rank * R, 0}, count[2] = {R, C};
  hid_t mem = H5Screate_simple(2, count, NULL);
  hid_t fsel = H5Scopy(space);
  CHECK(H5Sselect_hyperslab(fsel, H5S_SELECT_SET, start, NULL, count, NULL));
  hid_t coll = H5Pcreate(H5P_DATASET_XFER);
  CHECK(H5Pset_dxpl_mpio(coll, H5FD_MPIO_COLLECTIVE));
  hid_t indep = H5Pcreate(H5P_DATASET_XFER);
  CHECK(H5Pset_dxpl_mpio(indep, H5FD_MPIO_INDEPENDENT));
  CHECK(H5Dwrite(dset, H5T_NATIVE_INT, mem, fsel, coll, mine));
  CHECK(H5Dwrite(chunked, H5T_NATIVE_DOUBLE, mem, fsel, indep, dmine));
  CHECK(H5Fflush(file, H5F_SCOPE_GLOBAL));
  MPI_Barrier(MPI_COMM_WORLD);

  /* Every other rank's block, independently and collectively. */
  for (int k = 1; k < n; ++k) {
    const int other = (rank + k) % n;
    hsize_t ostart[2] = {(hsize_t)other * R, 0};
    CHECK(H5Sselect_hyperslab(fsel, H5S_SELECT_SET, ostart, NULL, count, NULL));
    CHECK(H5Dread(dset, H5T_NATIVE_INT, mem, fsel, k == 1 ? coll : indep, mine));
    CHECK(H5Dread(chunked, H5T_NATIVE_DOUBLE, mem, fsel, indep, dmine));
    for (int i = 0; i < R; ++i)
      for (int j = 0; j < C; ++j)
        if (mine[i * C + j] != value(other * R + i, j) ||
            dmine[i * C + j] != 0.5 * value(other * R + i, j)) {
          fprintf(stderr, "FAIL rank %d: block of rank %d at (%d,%d): %d\n", rank, other, i, j,
                  mine[i * C + j]);
          MPI_Abort(MPI_COMM_WORLD, 1);
        }
  }
  H5Pclose(coll);
  H5Pclose(indep);
  H5Sclose(mem);
  H5Sclose(fsel);
  H5Sclose(avec);
  H5Sclose(ascalar);
  H5Sclose(space);
  H5Pclose(dcpl);
  H5Dclose(chunked);
  H5Dclose(dset);
  H5Pclose(fapl);
  CHECK(H5Fclose(file));
  free(mine);
  free(dmine);
  if (rank == 0) printf("PASS hdf5 %d ranks\n", n);
  MPI_Finalize();
  return 0;
}
