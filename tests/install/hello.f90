! Fortran twin of hello.c (tests/install/relocatable_install.py).
program hello
  implicit none
  include 'mmpif.h'
  integer :: ierr, rank, nproc, peer, from, outv, inv
  integer :: status(MPI_STATUS_SIZE)
  call MMPI_INIT(ierr)
  call MMPI_COMM_RANK(MMPI_COMM_WORLD, rank, ierr)
  call MMPI_COMM_SIZE(MMPI_COMM_WORLD, nproc, ierr)
  peer = mod(rank + 1, nproc)
  from = mod(rank + nproc - 1, nproc)
  outv = rank * 1000 + 7
  inv = -1
  call MMPI_SENDRECV(outv, 1, MPI_INTEGER, peer, 0, inv, 1, MPI_INTEGER, from, 0, &
                     MMPI_COMM_WORLD, status, ierr)
  if (inv == from * 1000 + 7) then
    print '(a,i0,a,i0,a,i0)', 'hello-f rank ', rank, ' of ', nproc, ' got ', inv
  else
    print '(a,i0,a,i0)', 'FAIL rank ', rank, ' got ', inv
  end if
  call MMPI_FINALIZE(ierr)
end program hello
