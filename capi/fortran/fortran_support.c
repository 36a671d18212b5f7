/* Helpers of the generated Fortran bindings; see fortran_support.h. */
#include "fortran_support.h"

#include <string.h>

/* Open MPI's Fortran sentinels: common blocks defined in libmpi
 * (mpif-sentinels.h, mpif-c-constants-decl.h). Only their addresses matter. */
extern int mpi_fortran_bottom_;
extern int mpi_fortran_in_place_;
extern int mpi_fortran_status_ignore_;
extern int mpi_fortran_statuses_ignore_;
extern int mpi_fortran_unweighted_;
extern int mpi_fortran_weights_empty_;

/* MPI_STATUS_SIZE of Open MPI's mpif-config.h: a Fortran status is the C one. */
enum { kStatusSize = 6 };

_Static_assert(sizeof(MPI_Fint) == sizeof(int), "INTEGER arrays are passed to C as int arrays");
_Static_assert(sizeof(MPI_Status) == kStatusSize * sizeof(MPI_Fint), "MPI_STATUS_SIZE changed");

void* mmpif_buf(void* f) {
  if (f == (void*)&mpi_fortran_in_place_) return MPI_IN_PLACE;
  if (f == (void*)&mpi_fortran_bottom_) return MPI_BOTTOM;
  return f;
}

int* mmpif_weights(MPI_Fint* f) {
  if ((void*)f == (void*)&mpi_fortran_unweighted_) return MPI_UNWEIGHTED;
  if ((void*)f == (void*)&mpi_fortran_weights_empty_) return MPI_WEIGHTS_EMPTY;
  return (int*)f;
}

MPI_Fint mmpif_native_comm(MPI_Fint f) {
  const MPI_Comm c = MMPI_Comm_f2c(f);
  return c == MPI_COMM_NULL ? MMPIF_COMM_NULL : MPI_Comm_c2f(c);
}

int mmpif_comm_size(MPI_Comm comm) {
  int n = 0;
  return MMPI_Comm_size(comm, &n) == MPI_SUCCESS ? n : 0;
}

MPI_Datatype* mmpif_types_in(const MPI_Fint* f, int n) {
  MPI_Datatype* c = malloc(sizeof *c * (size_t)(n > 0 ? n : 1));
  for (int i = 0; c != NULL && i < n; ++i) c[i] = MPI_Type_f2c(f[i]);
  return c;
}

MPI_Request* mmpif_requests_in(const MPI_Fint* f, int n) {
  /* Second half: the requests before the call, to see which changed. */
  const size_t m = (size_t)(n > 0 ? n : 1);
  MPI_Request* c = malloc(sizeof *c * 2 * m);
  for (int i = 0; c != NULL && i < n; ++i) c[i] = c[m + i] = MMPI_Request_f2c(f[i]);
  return c;
}

void mmpif_requests_out(MPI_Request* c, MPI_Fint* f, int n) {
  const size_t m = (size_t)(n > 0 ? n : 1);
  for (int i = 0; i < n; ++i) f[i] = mmpi_f_request_update(f[i], c[m + i], c[i]);
  free(c);
}

MPI_Status* mmpif_status_out_ptr(MPI_Fint* f, MPI_Status* tmp) {
  return (void*)f == (void*)&mpi_fortran_status_ignore_ ? MPI_STATUS_IGNORE : tmp;
}

void mmpif_status_out(const MPI_Status* c, MPI_Fint* f) {
  if (c != MPI_STATUS_IGNORE) MPI_Status_c2f(c, f);
}

int mmpif_statuses_in(MPI_Fint* f, int n, MPI_Status** c) {
  if ((void*)f == (void*)&mpi_fortran_statuses_ignore_) {
    *c = MPI_STATUSES_IGNORE;
    return 1;
  }
  *c = calloc((size_t)(n > 0 ? n : 1), sizeof(MPI_Status));
  return *c != NULL;
}

void mmpif_statuses_out(MPI_Status* c, MPI_Fint* f, int n) {
  if (c == MPI_STATUSES_IGNORE) return;
  for (int i = 0; i < n; ++i) MPI_Status_c2f(&c[i], f + (size_t)i * kStatusSize);
  free(c);
}

char* mmpif_str_in(const char* f, size_t len) {
  while (len > 0 && f[len - 1] == ' ') --len;
  char* c = malloc(len + 1);
  if (c == NULL) return NULL;
  memcpy(c, f, len);
  c[len] = '\0';
  return c;
}

void mmpif_str_out(const char* c, char* f, size_t len) {
  size_t n = strnlen(c, MMPIF_STRING_MAX);
  if (n > len) n = len;
  memcpy(f, c, n);
  memset(f + n, ' ', len - n);
}

int mmpif_is_predefined_keyval(int keyval) {
  return keyval == MPI_TAG_UB || keyval == MPI_HOST || keyval == MPI_IO ||
         keyval == MPI_WTIME_IS_GLOBAL || keyval == MPI_APPNUM || keyval == MPI_UNIVERSE_SIZE ||
         keyval == MPI_LASTUSEDCODE;
}
