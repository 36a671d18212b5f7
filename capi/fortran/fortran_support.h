/* Helpers of the generated Fortran bindings (mmpi_fortran_generated.c):
 * Open MPI's Fortran sentinels, statuses, strings and handle arrays. */
#ifndef MMPI_FORTRAN_SUPPORT_H
#define MMPI_FORTRAN_SUPPORT_H

#include <mmpi.h>
#include <stddef.h>
#include <stdlib.h>

#include "handles.h"

/* Room for any string an MPI function returns (MPI_MAX_* are <= 1024). */
#define MMPIF_STRING_MAX 4096

/* A choice buffer: Open MPI's Fortran MPI_IN_PLACE / MPI_BOTTOM (common
 * blocks) become the C constants; any other address is returned as is. */
void* mmpif_buf(void* f);

/* A dist-graph weights array: Open MPI's Fortran MPI_UNWEIGHTED /
 * MPI_WEIGHTS_EMPTY become the C constants; any other array is returned as is. */
int* mmpif_weights(MPI_Fint* f);

/* The native Fortran handle of an MMPI communicator's cluster-local part
 * (Open MPI's MPI_COMM_NULL value if f is no MMPI communicator). */
MPI_Fint mmpif_native_comm(MPI_Fint f);

/* MMPI_Comm_size of comm, or 0 if it fails. */
int mmpif_comm_size(MPI_Comm comm);

/* A malloc'd array of n datatypes converted from f (n <= 0: one element). */
MPI_Datatype* mmpif_types_in(const MPI_Fint* f, int n);

/* Requests: converts n Fortran requests to a malloc'd C array (NULL if out
 * of memory); _out writes them back, releasing completed ones, and frees. */
MPI_Request* mmpif_requests_in(const MPI_Fint* f, int n);
void mmpif_requests_out(MPI_Request* c, MPI_Fint* f, int n);

/* Status: MPI_STATUS_IGNORE for Open MPI's Fortran MPI_STATUS_IGNORE, else tmp;
 * _out converts the C status into the Fortran one unless ignored. */
MPI_Status* mmpif_status_out_ptr(MPI_Fint* f, MPI_Status* tmp);
void mmpif_status_out(const MPI_Status* c, MPI_Fint* f);

/* Status arrays of n: sets *c to MPI_STATUSES_IGNORE (which is NULL) or a
 * malloc'd array; returns 0 if out of memory. _out converts into f and frees. */
int mmpif_statuses_in(MPI_Fint* f, int n, MPI_Status** c);
void mmpif_statuses_out(MPI_Status* c, MPI_Fint* f, int n);

/* CHARACTER(len) arguments: _in returns a malloc'd copy without trailing
 * blanks (NULL if out of memory); _out copies c into f, blank-padded or
 * truncated to len. */
char* mmpif_str_in(const char* f, size_t len);
void mmpif_str_out(const char* c, char* f, size_t len);

/* True for MPI_TAG_UB, MPI_HOST, MPI_IO, MPI_WTIME_IS_GLOBAL, MPI_APPNUM,
 * MPI_UNIVERSE_SIZE and MPI_LASTUSEDCODE (int-valued predefined attributes). */
int mmpif_is_predefined_keyval(int keyval);

#endif /* MMPI_FORTRAN_SUPPORT_H */
