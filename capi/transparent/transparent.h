/* libmmpi_transparent (docs/transparent.md): the MPI_ API of unmodified
 * programs as libmmpi's MMPI_ twins. Shared by the generated wrappers
 * (mmpi_transparent_generated.c, mmpi_transparent_fortran_generated.c) and
 * the hand-written parts (init, callbacks). */
#ifndef MMPI_TRANSPARENT_H
#define MMPI_TRANSPARENT_H

#include <mmpi.h>
#include <stddef.h>

#include "handles.h" /* MMPIF_COMM_WORLD, MMPIF_COMM_SELF */

/* Open MPI's Fortran values of MPI_COMM_WORLD and MPI_COMM_SELF (mpif-handles.h). */
#define MMPIT_OMPI_F_COMM_WORLD 0
#define MMPIT_OMPI_F_COMM_SELF 1

/* The value zipper-run --transparent gives OMPI_MCA_pml in every rank, with
 * <libdir>/zipper-mca first on OMPI_MCA_mca_base_component_path
 * (zipper-transparent-check --env). The layer's constructor removes both
 * (restoring MMPI_TRANSPARENT_PML, the caller's own choice, if set); a rank
 * that starts Open MPI without the layer (static or setuid binary, LD_PRELOAD
 * dropped) loads the stop component of that name (no_layer_component.c) in
 * MPI_Init, which stops it with a message naming the cause. */
#define MMPIT_PML_SENTINEL "MMPI_TRANSPARENT_set_but_libmmpi_transparent_not_loaded"

/* A communicator going into libmmpi: the native MPI_COMM_WORLD is the zipper
 * world (MPI_COMM_NULL before MPI_Init, which libmmpi rejects). */
static inline MPI_Comm mmpit_comm_in(MPI_Comm c) {
  return c == MPI_COMM_WORLD ? mmpi_comm_world : c;
}

/* A communicator coming out of libmmpi: the zipper world is MPI_COMM_WORLD. */
static inline MPI_Comm mmpit_comm_out(MPI_Comm c) {
  return c == mmpi_comm_world && c != MPI_COMM_NULL ? MPI_COMM_WORLD : c;
}

/* The same for Fortran handles (Open MPI's values against MMPI's). */
static inline MPI_Fint mmpit_fcomm_in(MPI_Fint f) {
  return f == MMPIT_OMPI_F_COMM_WORLD  ? MMPIF_COMM_WORLD
         : f == MMPIT_OMPI_F_COMM_SELF ? MMPIF_COMM_SELF
                                       : f;
}
static inline MPI_Fint mmpit_fcomm_out(MPI_Fint f) {
  return f == MMPIF_COMM_WORLD  ? MMPIT_OMPI_F_COMM_WORLD
         : f == MMPIF_COMM_SELF ? MMPIT_OMPI_F_COMM_SELF
                                : f;
}

/* Exports the Fortran routine `fn` under a second name (asm: the name may be
 * upper case, e.g. MPI_SEND, and must not be macro-expanded). */
#define MMPIT_ALIAS(fn, alias) \
  __asm__(".globl " #alias "\n.type " #alias ", @function\n.set " #alias ", " #fn "\n");

/* A function of the native MPI beyond MPI-3.1 that libmmpi does not offer
 * (MPICH 4's MPI-4.0 calls; generated definitions, gen_transparent.refusals):
 * prints one line naming `fn` (once per function, `reported` its flag) and
 * raises MPI_ERR_UNSUPPORTED_OPERATION through the zipper world's error
 * handler (fatal by default), returning it when the handler returns. */
int mmpit_refuse(const char* fn, int* reported);

/* Prints "mmpi transparent: <why>" naming the cause and ends the process
 * with status 1 (mpirun then stops the job): never half-transparent. */
_Noreturn void mmpit_stop(const char* why);

#endif /* MMPI_TRANSPARENT_H */
