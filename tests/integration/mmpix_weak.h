/* zipper's extensions (mmpi.h) for the unported test programs built against
 * plain mpi.h (unprefix.py): weak, so that they link with Open MPI alone and
 * find MMPIX_Coll_set at run time in the libmmpi that libmmpi_transparent
 * brings in. */
#ifndef MMPIX_WEAK_H
#define MMPIX_WEAK_H

int MMPIX_Coll_set(const char* collective, const char* algorithm, int inter_senders)
    __attribute__((weak));
int MMPIX_Layout(int* ranks_low, int* ranks_high, int* forwarders) __attribute__((weak));
int MMPIX_Win_comm(MPI_Win win, MPI_Comm* comm) __attribute__((weak));
int MMPIX_Win_refused(MPI_Win win, MPI_Count* refused) __attribute__((weak));

#endif /* MMPIX_WEAK_H */
