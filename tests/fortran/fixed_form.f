C     Fixed-form Fortran 77 through mmpif.h, one process, standalone (no
C     zipperd). Built by mmpif90 with -ffixed-line-length-none: the M
C     prefix pushes the MMPI_SENDRECV statement below past column 72, as
C     docs/fortran.md warns. Prints "PASS fixed_form <checks>".
      program fixed
      implicit none
      include 'mmpif.h'
      integer ierr, rank, nproc, vec, tsize, cnt, i, nchk
      integer sbuf(8), rbuf(8), status(MPI_STATUS_SIZE)
      integer win, psize, elen, rlen
      character*(MPI_MAX_ERROR_STRING) estr, eref
      integer(kind=MPI_ADDRESS_KIND) wsize, aval, bref
      logical found
      double precision t0, v(3)
      nchk = 0
      call MMPI_INIT(ierr)
      call chk(ierr .eq. MPI_SUCCESS, 'MMPI_INIT', nchk)
      call MMPI_COMM_RANK(MMPI_COMM_WORLD, rank, ierr)
      call MMPI_COMM_SIZE(MMPI_COMM_WORLD, nproc, ierr)
      call chk(rank .eq. 0 .and. nproc .eq. 1, 'rank/size', nchk)
      t0 = MMPI_WTIME()
C     Pass-through: a vector of 2 INTEGERs with stride 2 holds 8 bytes.
      call MMPI_TYPE_VECTOR(2, 1, 2, MPI_INTEGER, vec, ierr)
      call MMPI_TYPE_COMMIT(vec, ierr)
      call MMPI_TYPE_SIZE(vec, tsize, ierr)
      call chk(ierr .eq. MPI_SUCCESS .and. tsize .eq. 8, 'TYPE_SIZE',
     &         nchk)
      call MMPI_TYPE_FREE(vec, ierr)
      call chk(vec .eq. MPI_DATATYPE_NULL, 'TYPE_FREE', nchk)
C     Point-to-point to itself with a real status.
      do i = 1, 8
         sbuf(i) = 31 * i - 5
         rbuf(i) = -1
      end do
      call MMPI_SENDRECV(sbuf, 8, MPI_INTEGER, 0, 9, rbuf, 8, MPI_INTEGER, 0, 9, MMPI_COMM_WORLD, status, ierr)
      call chk(ierr .eq. MPI_SUCCESS, 'SENDRECV', nchk)
      call chk(status(MPI_SOURCE) .eq. 0 .and. status(MPI_TAG) .eq. 9,
     &         'status source/tag', nchk)
      call MMPI_GET_COUNT(status, MPI_INTEGER, cnt, ierr)
      call chk(cnt .eq. 8, 'GET_COUNT', nchk)
      do i = 1, 8
         call chk(rbuf(i) .eq. 31 * i - 5, 'received element', nchk)
      end do
C     Allreduce in place over one process leaves the values.
      v(1) = 1.5d0
      v(2) = -2.0d0
      v(3) = 1.0d9
      call MMPI_ALLREDUCE(MPI_IN_PLACE, v, 3, MPI_DOUBLE_PRECISION,
     &                    MPI_SUM, MMPI_COMM_WORLD, ierr)
      call chk(ierr .eq. MPI_SUCCESS .and. v(1) .eq. 1.5d0 .and.
     &         v(2) .eq. -2.0d0 .and. v(3) .eq. 1.0d9, 'ALLREDUCE',
     &         nchk)
C     Pass-through routines with a communicator and with strings.
      call MMPI_PACK_SIZE(8, MPI_INTEGER, MMPI_COMM_WORLD, psize, ierr)
      call chk(ierr .eq. MPI_SUCCESS .and. psize .ge. 32, 'PACK_SIZE',
     &         nchk)
      call MMPI_ERROR_STRING(MPI_ERR_UNSUPPORTED_OPERATION, estr,
     &                       elen, ierr)
      call MPI_ERROR_STRING(MPI_ERR_UNSUPPORTED_OPERATION, eref,
     &                      rlen, ierr)
      call chk(elen .gt. 0 .and. elen .eq. rlen .and. estr .eq. eref,
     &         'ERROR_STRING', nchk)
      call MMPI_TYPE_CONTIGUOUS(3, MPI_DOUBLE_PRECISION, vec, ierr)
      call MMPI_TYPE_SET_NAME(vec, 'triple  ', ierr)
      call MMPI_TYPE_GET_NAME(vec, estr, elen, ierr)
      call chk(elen .eq. 6 .and. estr .eq. 'triple', 'TYPE_GET_NAME',
     &         nchk)
      call MMPI_TYPE_FREE(vec, ierr)
C     A window through the Fortran binding (handle conversion).
      wsize = 32
      call MMPI_WIN_CREATE(sbuf, wsize, 4, MPI_INFO_NULL,
     &                     MMPI_COMM_WORLD, win, ierr)
      call chk(ierr .eq. MPI_SUCCESS, 'WIN_CREATE', nchk)
C     Predefined window attributes come as address-kind values.
      call MMPI_WIN_GET_ATTR(win, MPI_WIN_SIZE, aval, found, ierr)
      call chk(found .and. aval .eq. 32, 'WIN_SIZE', nchk)
      call MMPI_WIN_GET_ATTR(win, MPI_WIN_DISP_UNIT, aval, found, ierr)
      call chk(found .and. aval .eq. 4, 'WIN_DISP_UNIT', nchk)
      call MMPI_GET_ADDRESS(sbuf, bref, ierr)
      call MMPI_WIN_GET_ATTR(win, MPI_WIN_BASE, aval, found, ierr)
      call chk(found .and. aval .eq. bref, 'WIN_BASE', nchk)
      call MMPI_WIN_GET_ATTR(win, MPI_WIN_CREATE_FLAVOR, aval, found,
     &                       ierr)
      call chk(found .and. aval .eq. MPI_WIN_FLAVOR_CREATE,
     &         'WIN_CREATE_FLAVOR', nchk)
      call MMPI_WIN_GET_ATTR(win, MPI_WIN_MODEL, aval, found, ierr)
      call chk(found .and. (aval .eq. MPI_WIN_UNIFIED .or.
     &         aval .eq. MPI_WIN_SEPARATE), 'WIN_MODEL', nchk)
      call MMPI_WIN_FREE(win, ierr)
      call chk(ierr .eq. MPI_SUCCESS .and. win .eq. MPI_WIN_NULL,
     &         'WIN_FREE', nchk)
C     Unsupported: links, sets IERROR.
      call MMPI_OPEN_PORT(MPI_INFO_NULL, estr, ierr)
      call chk(ierr .eq. MPI_ERR_UNSUPPORTED_OPERATION, 'OPEN_PORT',
     &         nchk)
      call chk(MMPI_WTIME() .ge. t0 .and. MMPI_WTICK() .gt. 0d0,
     &         'WTIME', nchk)
      call MMPI_FINALIZE(ierr)
      call chk(ierr .eq. MPI_SUCCESS, 'MMPI_FINALIZE', nchk)
      write (*, '(A,I0,A)') 'PASS fixed_form ', nchk, ' checks'
      end

      subroutine chk(ok, what, nchk)
      logical ok
      character*(*) what
      integer nchk
      nchk = nchk + 1
      if (.not. ok) then
         write (*, '(A,A)') 'FAIL fixed_form: ', what
         stop 1
      end if
      end
