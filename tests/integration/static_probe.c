/* A statically linked program (no MPI): zipper-transparent-check must refuse
 * it, since LD_PRELOAD cannot reach a static binary (ctest
 * transparent_check_static). */
#include <stdio.h>

int main(void) {
  puts("static probe");
  return 0;
}
