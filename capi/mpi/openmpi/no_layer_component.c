/* mca_pml_MMPI_TRANSPARENT_set_but_libmmpi_transparent_not_loaded.so: the
 * "component" that zipper-run --transparent names in OMPI_MCA_pml (with its
 * directory on OMPI_MCA_mca_base_component_path). libmmpi_transparent takes
 * the pml choice away again before main; a rank that starts Open MPI without
 * the layer (static or setuid binary, LD_PRELOAD dropped on the way) makes
 * Open MPI dlopen this file in MPI_Init, and it stops the rank there with a
 * message naming the cause. Printed by the rank itself (Open MPI's own
 * "component not found" message is relayed through mpirun and is sometimes
 * lost when the rank exits at once). */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

__attribute__((constructor)) static void stop_rank(void) {
  /* Only when asked for by name: never when Open MPI scans every pml. */
  const char* pml = getenv("OMPI_MCA_pml");
  if (pml == NULL || strcmp(pml, "MMPI_TRANSPARENT_set_but_libmmpi_transparent_not_loaded") != 0)
    return;
  static const char msg[] =
      "mmpi transparent: this rank started Open MPI without libmmpi_transparent (a static or "
      "setuid binary, or LD_PRELOAD dropped on the way), so its MPI calls would bypass zipper "
      "and it would run outside the zipper job. Stopping in MPI_Init. Check the program with "
      "zipper-transparent-check; link it dynamically, or with mmpicc -transparent "
      "(docs/transparent.md)\n";
  (void)!write(STDERR_FILENO, msg, sizeof msg - 1);
  _exit(1);
}
