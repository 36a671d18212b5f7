/* Starts Open MPI by PMPI_Init directly, as Open MPI's Fortran bindings and
 * PMPI tools do: under libmmpi_transparent that would bypass the layer, so it
 * must stop with "PMPI_Init was called directly" (ctest
 * transparent_stops_bypass). Prints "BYPASSED" if it ever gets past. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char** argv) {
  if (PMPI_Init(&argc, &argv) != MPI_SUCCESS) return 2;
  printf("BYPASSED: PMPI_Init returned under the transparent layer\n");
  PMPI_Finalize();
  return 0;
}
