/* The MPICH part of the transparent layer's guard (transparent_init.c): this
 * layer is built against MPICH's mpi.h (integer handles, MPICH's constants),
 * so a program built with Open MPI's mpicc (pointer handles) must not run
 * through it: the process is stopped before main with one line naming the
 * layer to use. MPICH has no component that could stop a rank started
 * without the layer; zipper-transparent-check --mpi mpich refuses static and
 * setuid programs before the launch instead (docs/mpi.md). */
#define _GNU_SOURCE
#include <dlfcn.h>

#include "transparent.h"

__attribute__((constructor)) static void mmpit_loaded(void) {
  /* Open MPI's predefined communicator object: present only in a process that
   * loaded Open MPI's libmpi. */
  if (dlsym(RTLD_DEFAULT, "ompi_mpi_comm_world") != NULL)
    mmpit_stop(
        "this program is built against Open MPI but the layer is libmmpi_transparent-mpich "
        "(MPICH): run it with Open MPI's libmmpi_transparent, or rebuild it with mpicc.mpich");
}
