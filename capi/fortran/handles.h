/* Fortran handles of libmmpi-owned handles (communicators, groups, requests,
 * messages), for the Fortran bindings (libmmpi_mpifh). The C side of the
 * conversion is MMPI_Comm_c2f / MMPI_Comm_f2c etc. (mmpi.h). */
#ifndef MMPI_FORTRAN_HANDLES_H
#define MMPI_FORTRAN_HANDLES_H

#include <mpi.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Fortran values of MMPI_COMM_WORLD and MMPI_COMM_SELF (mmpif.h). Open MPI's
 * Fortran handles are array indices >= 0, so negative values never clash. */
#define MMPIF_COMM_WORLD (-1001)
#define MMPIF_COMM_SELF (-1002)

/* Open MPI's Fortran values of the predefined handles (mpif-handles.h). */
#define MMPIF_COMM_NULL 2
#define MMPIF_GROUP_NULL 0
#define MMPIF_GROUP_EMPTY 1
#define MMPIF_REQUEST_NULL 0
#define MMPIF_MESSAGE_NULL 0
#define MMPIF_MESSAGE_NO_PROC 1

/* The Fortran value after a call that may have replaced or freed the handle
 * `before` (known as f) by `after`: f if unchanged; otherwise f is released
 * and after's value (the null value if after is null) is returned. */
MPI_Fint mmpi_f_comm_update(MPI_Fint f, MPI_Comm before, MPI_Comm after);
MPI_Fint mmpi_f_group_update(MPI_Fint f, MPI_Group before, MPI_Group after);
MPI_Fint mmpi_f_request_update(MPI_Fint f, MPI_Request before, MPI_Request after);
MPI_Fint mmpi_f_message_update(MPI_Fint f, MPI_Message before, MPI_Message after);

/* Unsupported-operation report shared with the C twins (mmpi_generated.c):
 * prints once per function (*reported), returns MPI_ERR_UNSUPPORTED_OPERATION. */
int mmpi_report_unsupported(const char* fn, const char* reason, int* reported);

#ifdef __cplusplus
}
#endif

#endif /* MMPI_FORTRAN_HANDLES_H */
