/* MPI_Init / MPI_Init_thread of the transparent layer (C and Fortran), and
 * the guards that keep a program from running half-transparent: Open MPI's
 * PMPI_Init reached by anything but libmmpi and `use mpi_f08`. The guard that
 * differs per MPI (Open MPI's OMPI_MCA_pml sentinel, MPICH's check that the
 * program is an MPICH one) is capi/mpi/<MPI>/transparent_guard.c. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "transparent.h"

/* True while the layer's MPI_Init runs MMPI_Init, which alone may start the native MPI. */
static int in_layer_init;

_Noreturn void mmpit_stop(const char* why) {
  fprintf(stderr,
          "mmpi transparent: %s. Stopping: this rank would run outside the zipper job "
          "(docs/transparent.md)\n",
          why);
  fflush(stderr);
  exit(1);
}

int mmpit_refuse(const char* fn, int* reported) {
  if (!*reported) {
    *reported = 1;
    fprintf(stderr,
            "mmpi transparent: %s is not supported: libmmpi offers MPI-3.1, and the native "
            "MPI's own would run on this cluster alone (returns MPI_ERR_UNSUPPORTED_OPERATION; "
            "docs/mpi.md)\n",
            fn);
    fflush(stderr);
  }
  MMPI_Comm_call_errhandler(mmpi_comm_world, MPI_ERR_UNSUPPORTED_OPERATION);
  return MPI_ERR_UNSUPPORTED_OPERATION;
}

static void name_predefined(void) {
  MMPI_Comm_set_name(mmpi_comm_world, "MPI_COMM_WORLD");
  MMPI_Comm_set_name(MPI_COMM_SELF, "MPI_COMM_SELF");
}

static int layer_init(int* argc, char*** argv, int thread, int required, int* provided) {
  in_layer_init = 1;
  const int rc = thread ? MMPI_Init_thread(argc, argv, required, provided) : MMPI_Init(argc, argv);
  in_layer_init = 0;
  if (rc == MPI_SUCCESS) name_predefined();
  return rc;
}

int MPI_Init(int* argc, char*** argv) { return layer_init(argc, argv, 0, 0, NULL); }

int MPI_Init_thread(int* argc, char*** argv, int required, int* provided) {
  return layer_init(argc, argv, 1, required, provided);
}

/* Fortran MPI_INIT / MPI_INIT_THREAD (mpif.h, `use mpi`), every mangling. */
void mpi_init(MPI_Fint* ierr) { *ierr = layer_init(NULL, NULL, 0, 0, NULL); }
MMPIT_ALIAS(mpi_init, mpi_init_)
MMPIT_ALIAS(mpi_init, mpi_init__)
MMPIT_ALIAS(mpi_init, MPI_INIT)
void mpi_init_thread(MPI_Fint* required, MPI_Fint* provided, MPI_Fint* ierr) {
  int p = 0;
  *ierr = layer_init(NULL, NULL, 1, *required, &p);
  *provided = p;
}
MMPIT_ALIAS(mpi_init_thread, mpi_init_thread_)
MMPIT_ALIAS(mpi_init_thread, mpi_init_thread__)
MMPIT_ALIAS(mpi_init_thread, MPI_INIT_THREAD)

/* `use mpi_f08` (Open MPI's libmpi_usempif08) is not covered: its handles are
 * derived types that the layer does not translate. */
static _Noreturn void f08_stop(void) {
  mmpit_stop(
      "this program uses the Fortran 2008 bindings (`use mpi_f08`), which "
      "libmmpi_transparent does not cover (only C, mpif.h and `use mpi`); build it "
      "with `use mpi`, or port it to `use mmpi`");
}
void mpi_init_f08_(MPI_Fint* ierr) {
  (void)ierr;
  f08_stop();
}
void mpi_init_thread_f08_(MPI_Fint* required, MPI_Fint* provided, MPI_Fint* ierr) {
  (void)required, (void)provided, (void)ierr;
  f08_stop();
}

/* The native MPI's own start, reached directly (its Fortran bindings call PMPI_Init,
 * as does a PMPI tool) rather than through MMPI_Init: stop. */
static void* next_symbol(const char* name) {
  void* f = dlsym(RTLD_NEXT, name);
  if (f == NULL) mmpit_stop("the native MPI's PMPI_Init was not found behind the layer");
  return f;
}

int PMPI_Init(int* argc, char*** argv) {
  if (!in_layer_init)
    mmpit_stop(
        "PMPI_Init was called directly, bypassing the layer's MPI_Init (a Fortran "
        "binding the layer does not cover, or a PMPI tool)");
  int (*f)(int*, char***);
  *(void**)&f = next_symbol("PMPI_Init"); /* POSIX: dlsym gives functions as void* */
  return f(argc, argv);
}

int PMPI_Init_thread(int* argc, char*** argv, int required, int* provided) {
  if (!in_layer_init)
    mmpit_stop(
        "PMPI_Init_thread was called directly, bypassing the layer's MPI_Init_thread "
        "(a Fortran binding the layer does not cover, or a PMPI tool)");
  int (*f)(int*, char***, int, int*);
  *(void**)&f = next_symbol("PMPI_Init_thread");
  return f(argc, argv, required, provided);
}
