! MPI-IO from Fortran through mpif.h, unmodified: each rank owns a column
! block of a global N x (4*NP) INTEGER array, written with a subarray file
! view and MPI_FILE_WRITE_AT_ALL, then read back whole and checked.
! Usage: fortran_io_itest FILE
program fortran_io_itest
  implicit none
  include 'mpif.h'
  integer, parameter :: n = 8, w = 4
  integer :: ierr, rank, np, fh, filetype, i, j
  integer :: sizes(2), subsizes(2), starts(2), status(MPI_STATUS_SIZE)
  integer(kind=MPI_OFFSET_KIND) :: disp
  integer, allocatable :: mine(:, :), all(:, :)
  character(len=512) :: path
  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, np, ierr)
  call get_command_argument(1, path)
  allocate(mine(n, w), all(n, w * np))
  do j = 1, w
    do i = 1, n
      mine(i, j) = i * 1000 + rank * w + j
    end do
  end do
  sizes = (/ n, w * np /)
  subsizes = (/ n, w /)
  starts = (/ 0, rank * w /)
  call MPI_TYPE_CREATE_SUBARRAY(2, sizes, subsizes, starts, MPI_ORDER_FORTRAN, &
                                MPI_INTEGER, filetype, ierr)
  call MPI_TYPE_COMMIT(filetype, ierr)
  call MPI_FILE_OPEN(MPI_COMM_WORLD, trim(path), MPI_MODE_CREATE + MPI_MODE_RDWR, &
                     MPI_INFO_NULL, fh, ierr)
  if (ierr /= MPI_SUCCESS) call fail('open')
  disp = 0
  call MPI_FILE_SET_VIEW(fh, disp, MPI_INTEGER, filetype, 'native', MPI_INFO_NULL, ierr)
  if (ierr /= MPI_SUCCESS) call fail('set_view')
  call MPI_FILE_WRITE_AT_ALL(fh, disp, mine, n * w, MPI_INTEGER, status, ierr)
  if (ierr /= MPI_SUCCESS) call fail('write_at_all')
  call MPI_FILE_SYNC(fh, ierr)
  call MPI_BARRIER(MPI_COMM_WORLD, ierr)
  call MPI_FILE_SYNC(fh, ierr)
  call MPI_FILE_SET_VIEW(fh, disp, MPI_INTEGER, MPI_INTEGER, 'native', MPI_INFO_NULL, ierr)
  call MPI_FILE_READ_AT(fh, disp, all, n * w * np, MPI_INTEGER, status, ierr)
  if (ierr /= MPI_SUCCESS) call fail('read_at')
  do j = 1, w * np
    do i = 1, n
      if (all(i, j) /= i * 1000 + j) call fail('value')
    end do
  end do
  call MPI_FILE_CLOSE(fh, ierr)
  if (fh /= MPI_FILE_NULL) call fail('close')
  call MPI_TYPE_FREE(filetype, ierr)
  if (rank == 0) print '(a,i0,a)', 'PASS fortran ', np, ' ranks'
  call MPI_FINALIZE(ierr)
contains
  subroutine fail(what)
    character(len=*), intent(in) :: what
    integer :: e
    print *, 'FAIL rank ', rank, ': ', what
    call MPI_ABORT(MPI_COMM_WORLD, 1, e)
  end subroutine fail
end program fortran_io_itest
