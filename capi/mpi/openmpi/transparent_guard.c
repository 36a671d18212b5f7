/* The Open MPI part of the transparent layer's guard (transparent_init.c):
 * the OMPI_MCA_pml sentinel of zipper-run --transparent (transparent.h). */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "transparent.h"

/* Drops every element of the ':'-separated list in variable `name` that
 * ends in "/zipper-mca" (the stop component's directory). */
static void drop_stop_component_dir(const char* name) {
  const char* v = getenv(name);
  if (v == NULL || strstr(v, "/zipper-mca") == NULL) return;
  char* out = calloc(strlen(v) + 1, 1);
  char* copy = strdup(v);
  if (out == NULL || copy == NULL) mmpit_stop("out of memory at start");
  char* save = NULL;
  for (char* e = strtok_r(copy, ":", &save); e != NULL; e = strtok_r(NULL, ":", &save)) {
    const size_t n = strlen(e);
    if (n >= 11 && strcmp(e + n - 11, "/zipper-mca") == 0) continue;
    if (*out) strcat(out, ":");
    strcat(out, e);
  }
  if (*out)
    setenv(name, out, 1);
  else
    unsetenv(name);
  free(copy);
  free(out);
}

/* Runs when the layer is loaded (LD_PRELOAD or linked), before main: takes the
 * stop component (OMPI_MCA_pml and its directory on the component path) away
 * again, so Open MPI starts normally here. */
__attribute__((constructor)) static void mmpit_loaded(void) {
  const char* pml = getenv("OMPI_MCA_pml");
  if (pml == NULL || strcmp(pml, MMPIT_PML_SENTINEL) != 0) return;
  const char* own = getenv("MMPI_TRANSPARENT_PML");
  if (own != NULL && *own != '\0')
    setenv("OMPI_MCA_pml", own, 1);
  else
    unsetenv("OMPI_MCA_pml");
  drop_stop_component_dir("OMPI_MCA_mca_base_component_path");
}
