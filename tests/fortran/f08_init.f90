! `use mpi_f08` is not covered by libmmpi_transparent: under it this program
! must stop in MPI_Init with a message naming mpi_f08 (ctest
! fortran_f08_transparent_stops). Prints BYPASSED if it ever gets past.
program f08_init
  use mpi_f08
  implicit none
  call MPI_Init()
  print '(A)', 'BYPASSED: MPI_Init (mpi_f08) returned under the transparent layer'
  call MPI_Finalize()
end program f08_init
