!     mmpif.h -- libmmpi for Fortran programs, in the style of mpif.h.
!
!     Port a Fortran MPI program by prefixing every MPI routine with M
!     (call MPI_SEND -> call MMPI_SEND), MPI_COMM_WORLD with M, and
!     including this file instead of mpif.h (or: use mmpi). Handles are
!     INTEGERs. Constants, datatypes (MPI_INTEGER, ...), MPI_STATUS_SIZE,
!     MPI_STATUS_IGNORE, MPI_IN_PLACE and error codes are Open MPI's own,
!     from its mpif.h, which this file includes. Build with mmpif90;
!     routine status: docs/api-coverage.md; porting: docs/fortran.md.
!
      include 'mpif.h'
!
!     The world communicator spanning both clusters, and the calling
!     process alone. Sentinels that Open MPI never uses as handles;
!     libmmpi maps them to its communicators (capi/fortran/handles.h).
      integer MMPI_COMM_WORLD, MMPI_COMM_SELF
      parameter (MMPI_COMM_WORLD=-1001)
      parameter (MMPI_COMM_SELF=-1002)
!
!     Functions (every other MMPI routine is a subroutine).
      external MMPI_WTIME, MMPI_WTICK, MMPI_AINT_ADD, MMPI_AINT_DIFF
      double precision MMPI_WTIME, MMPI_WTICK
      integer(kind=MPI_ADDRESS_KIND) MMPI_AINT_ADD, MMPI_AINT_DIFF
