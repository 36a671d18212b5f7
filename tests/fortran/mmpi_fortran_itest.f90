! Fortran integration test for libmmpi (use mmpi), run across two clusters by
! zipper-run: mmpi_fortran_itest fortran
!   - point-to-point: blocking ring (real statuses, a 2.4 MB rendezvous
!     message with MPI_STATUS_IGNORE), non-blocking all-to-all exchange
!     (Waitall with statuses and with MPI_STATUSES_IGNORE, Waitany, Test);
!   - every collective libmmpi has: Barrier, Bcast, Reduce, Allreduce (also
!     with MPI_IN_PLACE, MPI_LOGICAL and a Fortran user operation from
!     MMPI_OP_CREATE), Alltoall, Alltoallv, Gather, Scatter, Allgather,
!     Reduce_scatter_block;
!   - a communicator from MMPI_COMM_SPLIT (parity of the rank, keys
!     reversed): p2p and collectives on it, then MMPI_COMM_FREE;
!   - attributes: MPI_TAG_UB from MMPI_COMM_GET_ATTR, and a user keyval
!     (pass-through MMPI_COMM_CREATE_KEYVAL / SET_ATTR, Open MPI's Fortran
!     routines) read back through MMPI_COMM_GET_ATTR;
!   - persistent requests (Send_init, Recv_init, Startall, Waitsome with
!     1-based indices, Request_free), Ibcast, Gatherv and Scan.
! Every input is a function of (rank, index), so each rank computes every
! reference itself; every element received is compared. Integer data must
! match exactly; double sums are of integers (exact in binary64).
! Rank 0 prints "PASS fortran <checks>" when all ranks passed; a mismatch
! prints FAIL and aborts the job.
program mmpi_fortran_itest
  use mmpi
  implicit none
  integer :: ierr, rank, nproc, nchk
  character(len=32) :: testname

  nchk = 0
  call get_command_argument(1, testname)
  if (trim(testname) /= 'fortran') then
    write (*, '(A,A)') 'FAIL unknown test ', trim(testname)
    stop 1
  end if
  call MMPI_INIT(ierr)
  call check(ierr == MPI_SUCCESS, 'MMPI_INIT')
  call MMPI_COMM_RANK(MMPI_COMM_WORLD, rank, ierr)
  call MMPI_COMM_SIZE(MMPI_COMM_WORLD, nproc, ierr)
  call check(ierr == MPI_SUCCESS .and. rank >= 0 .and. rank < nproc, 'rank/size')

  call ring()
  call exchange()
  call collectives(MMPI_COMM_WORLD, rank, nproc, 'world')
  call split()
  call attributes()
  call ops()

  call MMPI_BARRIER(MMPI_COMM_WORLD, ierr)
  call check(ierr == MPI_SUCCESS, 'final barrier')
  if (rank == 0) write (*, '(A,I0,A,I0,A)') 'PASS fortran ', nchk, ' checks on rank 0, ', &
      nproc, ' ranks'
  call MMPI_FINALIZE(ierr)

contains

  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    integer :: e
    nchk = nchk + 1
    if (.not. ok) then
      write (0, '(A,I0,A,A)') 'FAIL rank ', rank, ': ', what
      flush (0)
      call MMPI_ABORT(MMPI_COMM_WORLD, 1, e)
      stop 1
    end if
  end subroutine check

  ! The value rank r sends as element i (any payload): distinct per (r, i).
  integer function val(r, i)
    integer, intent(in) :: r, i
    val = r * 100003 + i * 7 + 1
  end function val

  subroutine ring()
    integer :: next, prev, i, cnt, status(MPI_STATUS_SIZE)
    integer :: sbuf(1000), rbuf(1000)
    integer, parameter :: big = 300000  ! doubles: 2.4 MB, rendezvous
    double precision, allocatable :: dsend(:), drecv(:)
    next = mod(rank + 1, nproc)
    prev = mod(rank - 1 + nproc, nproc)
    do i = 1, 1000
      sbuf(i) = val(rank, i)
    end do
    rbuf = -1
    if (mod(rank, 2) == 0) then
      call MMPI_SEND(sbuf, 1000, MPI_INTEGER, next, 11, MMPI_COMM_WORLD, ierr)
      call MMPI_RECV(rbuf, 1000, MPI_INTEGER, prev, 11, MMPI_COMM_WORLD, status, ierr)
    else
      call MMPI_RECV(rbuf, 1000, MPI_INTEGER, prev, 11, MMPI_COMM_WORLD, status, ierr)
      call MMPI_SEND(sbuf, 1000, MPI_INTEGER, next, 11, MMPI_COMM_WORLD, ierr)
    end if
    call check(ierr == MPI_SUCCESS, 'ring send/recv')
    call check(status(MPI_SOURCE) == prev .and. status(MPI_TAG) == 11, 'ring status')
    call MMPI_GET_COUNT(status, MPI_INTEGER, cnt, ierr)
    call check(cnt == 1000, 'ring count')
    do i = 1, 1000
      call check(rbuf(i) == val(prev, i), 'ring element')
    end do

    allocate (dsend(big), drecv(big))
    do i = 1, big
      dsend(i) = dble(val(rank, i))
    end do
    drecv = -1d0
    call MMPI_SENDRECV(dsend, big, MPI_DOUBLE_PRECISION, next, 12, drecv, big, &
                       MPI_DOUBLE_PRECISION, prev, 12, MMPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
    call check(ierr == MPI_SUCCESS, 'big sendrecv')
    do i = 1, big
      if (drecv(i) /= dble(val(prev, i))) call check(.false., 'big sendrecv element')
    end do
    nchk = nchk + 1
    deallocate (dsend, drecv)
  end subroutine ring

  ! Every rank sends 64 INTEGERs to every other rank, non-blocking.
  subroutine exchange()
    integer, parameter :: m = 64
    integer :: sbuf(m), rbuf(m, 0:nproc - 1), reqs(2 * nproc), statuses(MPI_STATUS_SIZE, 2 * nproc)
    integer :: p, i, k, nreq, idx, status(MPI_STATUS_SIZE), round
    logical :: flag
    do i = 1, m
      sbuf(i) = val(rank, i)
    end do
    do round = 1, 2
      rbuf = -1
      nreq = 0
      do p = 0, nproc - 1
        if (p == rank) cycle
        nreq = nreq + 1
        call MMPI_IRECV(rbuf(1, p), m, MPI_INTEGER, p, 20 + p, MMPI_COMM_WORLD, reqs(nreq), ierr)
        call check(ierr == MPI_SUCCESS .and. reqs(nreq) /= MPI_REQUEST_NULL, 'irecv')
      end do
      do p = 0, nproc - 1
        if (p == rank) cycle
        nreq = nreq + 1
        call MMPI_ISEND(sbuf, m, MPI_INTEGER, p, 20 + rank, MMPI_COMM_WORLD, reqs(nreq), ierr)
        call check(ierr == MPI_SUCCESS .and. reqs(nreq) /= MPI_REQUEST_NULL, 'isend')
      end do
      if (round == 1) then
        call MMPI_WAITALL(nreq, reqs, statuses, ierr)
        call check(ierr == MPI_SUCCESS, 'waitall')
        k = 0
        do p = 0, nproc - 1
          if (p == rank) cycle
          k = k + 1
          call check(statuses(MPI_SOURCE, k) == p .and. statuses(MPI_TAG, k) == 20 + p, &
                     'waitall status')
        end do
      else
        ! Half through Waitany (1-based index), the rest through
        ! MPI_STATUSES_IGNORE; a Test on a completed request frees it.
        do k = 1, nreq / 2
          call MMPI_WAITANY(nreq, reqs, idx, status, ierr)
          call check(ierr == MPI_SUCCESS .and. idx >= 1 .and. idx <= nreq, 'waitany index')
          call check(reqs(idx) == MPI_REQUEST_NULL, 'waitany frees')
        end do
        call MMPI_WAITALL(nreq, reqs, MPI_STATUSES_IGNORE, ierr)
        call check(ierr == MPI_SUCCESS, 'waitall ignore')
      end if
      do k = 1, nreq
        call check(reqs(k) == MPI_REQUEST_NULL, 'completed request is MPI_REQUEST_NULL')
      end do
      do p = 0, nproc - 1
        if (p == rank) cycle
        do i = 1, m
          call check(rbuf(i, p) == val(p, i), 'exchange element')
        end do
      end do
    end do
    ! Test until done, on a message to itself.
    call MMPI_IRECV(rbuf(1, rank), m, MPI_INTEGER, rank, 30, MMPI_COMM_WORLD, reqs(1), ierr)
    call MMPI_ISEND(sbuf, m, MPI_INTEGER, rank, 30, MMPI_COMM_WORLD, reqs(2), ierr)
    flag = .false.
    do while (.not. flag)
      call MMPI_TEST(reqs(1), flag, status, ierr)
      call check(ierr == MPI_SUCCESS, 'test')
    end do
    call check(reqs(1) == MPI_REQUEST_NULL .and. status(MPI_SOURCE) == rank, 'test status')
    call MMPI_WAIT(reqs(2), MPI_STATUS_IGNORE, ierr)
    call check(ierr == MPI_SUCCESS .and. reqs(2) == MPI_REQUEST_NULL, 'wait')
    do i = 1, m
      call check(rbuf(i, rank) == val(rank, i), 'self element')
    end do
  end subroutine exchange

  ! Every collective on comm (my rank me of n); world ranks do not matter:
  ! inputs are functions of the rank in comm.
  subroutine collectives(comm, me, n, label)
    integer, intent(in) :: comm, me, n
    character(len=*), intent(in) :: label
    integer, parameter :: m = 37
    integer :: i, j, r, root, off
    integer :: ibuf(m), iref(m), iall(m * n), ito(m * n)
    integer :: scounts(0:n - 1), sdispls(0:n - 1), rcounts(0:n - 1), rdispls(0:n - 1)
    integer, allocatable :: vsend(:), vrecv(:)
    double precision :: dbuf(m), dref(m)
    logical :: lb(2)
    integer :: xop
    external :: xor_op

    call MMPI_BARRIER(comm, ierr)
    call check(ierr == MPI_SUCCESS, label//' barrier')

    ! Bcast from the first and the last rank.
    do root = 0, n - 1, max(1, n - 1)
      do i = 1, m
        dbuf(i) = -1d0
        if (me == root) dbuf(i) = dble(val(root, i)) / 8d0
      end do
      call MMPI_BCAST(dbuf, m, MPI_DOUBLE_PRECISION, root, comm, ierr)
      call check(ierr == MPI_SUCCESS, label//' bcast')
      do i = 1, m
        call check(dbuf(i) == dble(val(root, i)) / 8d0, label//' bcast element')
      end do
    end do

    ! Reduce (SUM of INTEGER) to the last rank.
    root = n - 1
    do i = 1, m
      ibuf(i) = val(me, i)
      iref(i) = 0
      do r = 0, n - 1
        iref(i) = iref(i) + val(r, i)
      end do
    end do
    ito = -1
    call MMPI_REDUCE(ibuf, ito, m, MPI_INTEGER, MPI_SUM, root, comm, ierr)
    call check(ierr == MPI_SUCCESS, label//' reduce')
    if (me == root) then
      do i = 1, m
        call check(ito(i) == iref(i), label//' reduce element')
      end do
    end if

    ! Allreduce in place: MAX of doubles, and SUM of doubles.
    do i = 1, m
      dbuf(i) = dble(mod(val(me, i), 1000))
      dref(i) = 0d0
      do r = 0, n - 1
        dref(i) = max(dref(i), dble(mod(val(r, i), 1000)))
      end do
    end do
    call MMPI_ALLREDUCE(MPI_IN_PLACE, dbuf, m, MPI_DOUBLE_PRECISION, MPI_MAX, comm, ierr)
    call check(ierr == MPI_SUCCESS, label//' allreduce in place')
    do i = 1, m
      call check(dbuf(i) == dref(i), label//' allreduce max element')
    end do
    do i = 1, m
      dbuf(i) = dble(val(me, i))
      dref(i) = 0d0
      do r = 0, n - 1
        dref(i) = dref(i) + dble(val(r, i))
      end do
    end do
    call MMPI_ALLREDUCE(MPI_IN_PLACE, dbuf, m, MPI_DOUBLE_PRECISION, MPI_SUM, comm, ierr)
    do i = 1, m
      call check(dbuf(i) == dref(i), label//' allreduce sum element')
    end do
    ! LOGICAL: LAND of (me >= 0) is true; LOR of (me == n - 1) is true, LAND of it
    ! is true only for one rank.
    lb(1) = me >= 0
    lb(2) = me == n - 1
    call MMPI_ALLREDUCE(MPI_IN_PLACE, lb, 2, MPI_LOGICAL, MPI_LOR, comm, ierr)
    call check(ierr == MPI_SUCCESS .and. lb(1) .and. lb(2), label//' allreduce lor')
    lb(1) = me >= 0
    lb(2) = me == n - 1
    call MMPI_ALLREDUCE(MPI_IN_PLACE, lb, 2, MPI_LOGICAL, MPI_LAND, comm, ierr)
    call check(lb(1) .and. (lb(2) .eqv. (n == 1)), label//' allreduce land')

    ! A Fortran user operation (bitwise XOR, commutative), reduced to rank 0
    ! and to all; the reference XORs every rank's input here.
    call MMPI_OP_CREATE(xor_op, .true., xop, ierr)
    call check(ierr == MPI_SUCCESS .and. xop /= MPI_OP_NULL, label//' op_create')
    do i = 1, m
      ibuf(i) = val(me, i) * 977
      iref(i) = 0
      do r = 0, n - 1
        iref(i) = ieor(iref(i), val(r, i) * 977)
      end do
    end do
    ito = -1
    call MMPI_REDUCE(ibuf, ito, m, MPI_INTEGER, xop, 0, comm, ierr)
    call check(ierr == MPI_SUCCESS, label//' reduce user op')
    if (me == 0) then
      do i = 1, m
        call check(ito(i) == iref(i), label//' reduce user op element')
      end do
    end if
    call MMPI_ALLREDUCE(MPI_IN_PLACE, ibuf, m, MPI_INTEGER, xop, comm, ierr)
    call check(ierr == MPI_SUCCESS, label//' allreduce user op')
    do i = 1, m
      call check(ibuf(i) == iref(i), label//' allreduce user op element')
    end do
    call MMPI_OP_FREE(xop, ierr)
    call check(ierr == MPI_SUCCESS .and. xop == MPI_OP_NULL, label//' op_free')

    ! Alltoall: block j of rank me is val(me, j * m + i).
    do j = 0, n - 1
      do i = 1, m
        iall(j * m + i) = val(me, j * m + i)
      end do
    end do
    ito = -1
    call MMPI_ALLTOALL(iall, m, MPI_INTEGER, ito, m, MPI_INTEGER, comm, ierr)
    call check(ierr == MPI_SUCCESS, label//' alltoall')
    do j = 0, n - 1
      do i = 1, m
        call check(ito(j * m + i) == val(j, me * m + i), label//' alltoall element')
      end do
    end do

    ! Alltoallv: rank a sends mod(a + b, 3) + 1 elements to rank b, packed in order.
    off = 0
    do j = 0, n - 1
      scounts(j) = mod(me + j, 3) + 1
      sdispls(j) = off
      off = off + scounts(j)
    end do
    allocate (vsend(off))
    do j = 0, n - 1
      do i = 1, scounts(j)
        vsend(sdispls(j) + i) = val(me, 100 * j + i)
      end do
    end do
    off = 0
    do j = 0, n - 1
      rcounts(j) = mod(j + me, 3) + 1
      rdispls(j) = off + j  ! a gap of j elements before each block: displacements matter
      off = off + rcounts(j) + j
    end do
    allocate (vrecv(off))
    vrecv = -1
    call MMPI_ALLTOALLV(vsend, scounts, sdispls, MPI_INTEGER, vrecv, rcounts, rdispls, &
                        MPI_INTEGER, comm, ierr)
    call check(ierr == MPI_SUCCESS, label//' alltoallv')
    do j = 0, n - 1
      do i = 1, rcounts(j)
        call check(vrecv(rdispls(j) + i) == val(j, 100 * me + i), label//' alltoallv element')
      end do
      do i = rdispls(j) - j + 1, rdispls(j)  ! the gaps stay untouched
        call check(vrecv(i) == -1, label//' alltoallv gap')
      end do
    end do
    deallocate (vsend, vrecv)

    ! Gather to rank 0, Scatter from the last rank, Allgather.
    do i = 1, m
      ibuf(i) = val(me, i)
    end do
    ito = -1
    call MMPI_GATHER(ibuf, m, MPI_INTEGER, ito, m, MPI_INTEGER, 0, comm, ierr)
    call check(ierr == MPI_SUCCESS, label//' gather')
    if (me == 0) then
      do j = 0, n - 1
        do i = 1, m
          call check(ito(j * m + i) == val(j, i), label//' gather element')
        end do
      end do
    end if
    root = n - 1
    do j = 0, n - 1
      do i = 1, m
        iall(j * m + i) = val(root, 1000 * j + i)
      end do
    end do
    ibuf = -1
    call MMPI_SCATTER(iall, m, MPI_INTEGER, ibuf, m, MPI_INTEGER, root, comm, ierr)
    call check(ierr == MPI_SUCCESS, label//' scatter')
    do i = 1, m
      call check(ibuf(i) == val(root, 1000 * me + i), label//' scatter element')
    end do
    do i = 1, m
      ibuf(i) = val(me, i)
    end do
    ito = -1
    call MMPI_ALLGATHER(ibuf, m, MPI_INTEGER, ito, m, MPI_INTEGER, comm, ierr)
    call check(ierr == MPI_SUCCESS, label//' allgather')
    do j = 0, n - 1
      do i = 1, m
        call check(ito(j * m + i) == val(j, i), label//' allgather element')
      end do
    end do

    ! Reduce_scatter_block: block j of the SUM goes to rank j.
    do j = 0, n - 1
      do i = 1, m
        iall(j * m + i) = val(me, j * m + i)
      end do
    end do
    ibuf = -1
    call MMPI_REDUCE_SCATTER_BLOCK(iall, ibuf, m, MPI_INTEGER, MPI_SUM, comm, ierr)
    call check(ierr == MPI_SUCCESS, label//' reduce_scatter_block')
    do i = 1, m
      iref(i) = 0
      do r = 0, n - 1
        iref(i) = iref(i) + val(r, me * m + i)
      end do
      call check(ibuf(i) == iref(i), label//' reduce_scatter_block element')
    end do
  end subroutine collectives

  ! Ranks of one parity, keys reversed: sub rank = number of same-parity
  ! world ranks above mine.
  subroutine split()
    integer :: sub, subrank, subsize, r, want_rank, want_size, sum, i
    integer :: next, prev, sbuf(16), rbuf(16), status(MPI_STATUS_SIZE)
    call MMPI_COMM_SPLIT(MMPI_COMM_WORLD, mod(rank, 2), -rank, sub, ierr)
    call check(ierr == MPI_SUCCESS .and. sub /= MPI_COMM_NULL, 'comm_split')
    want_size = 0
    want_rank = 0
    do r = 0, nproc - 1
      if (mod(r, 2) /= mod(rank, 2)) cycle
      want_size = want_size + 1
      if (r > rank) want_rank = want_rank + 1
    end do
    call MMPI_COMM_RANK(sub, subrank, ierr)
    call MMPI_COMM_SIZE(sub, subsize, ierr)
    call check(subrank == want_rank .and. subsize == want_size, 'split rank/size')
    ! The sum of the world ranks in my part, through the sub communicator.
    sum = rank
    call MMPI_ALLREDUCE(MPI_IN_PLACE, sum, 1, MPI_INTEGER, MPI_SUM, sub, ierr)
    r = 0
    do i = mod(rank, 2), nproc - 1, 2
      r = r + i
    end do
    call check(ierr == MPI_SUCCESS .and. sum == r, 'split allreduce')
    ! A ring on the sub communicator.
    next = mod(subrank + 1, subsize)
    prev = mod(subrank - 1 + subsize, subsize)
    do i = 1, 16
      sbuf(i) = val(subrank, i)
    end do
    rbuf = -1
    call MMPI_SENDRECV(sbuf, 16, MPI_INTEGER, next, 40, rbuf, 16, MPI_INTEGER, prev, 40, sub, &
                       status, ierr)
    call check(ierr == MPI_SUCCESS .and. status(MPI_SOURCE) == prev, 'split sendrecv')
    do i = 1, 16
      call check(rbuf(i) == val(prev, i), 'split sendrecv element')
    end do
    call collectives(sub, subrank, subsize, 'split')
    call MMPI_COMM_FREE(sub, ierr)
    call check(ierr == MPI_SUCCESS .and. sub == MPI_COMM_NULL, 'comm_free')
  end subroutine split

  subroutine ops()
    integer, parameter :: m = 16
    integer :: reqs(2), idx(2), statuses(MPI_STATUS_SIZE, 2), outcount, done, k, i, round
    integer :: sbuf(m), rbuf(m), next, prev, req, r, off
    integer :: counts(0:nproc - 1), displs(0:nproc - 1)
    integer, allocatable :: gath(:)
    next = mod(rank + 1, nproc)
    prev = mod(rank - 1 + nproc, nproc)
    call MMPI_SEND_INIT(sbuf, m, MPI_INTEGER, next, 50, MMPI_COMM_WORLD, reqs(2), ierr)
    call check(ierr == MPI_SUCCESS .and. reqs(2) /= MPI_REQUEST_NULL, 'send_init')
    call MMPI_RECV_INIT(rbuf, m, MPI_INTEGER, prev, 50, MMPI_COMM_WORLD, reqs(1), ierr)
    call check(ierr == MPI_SUCCESS .and. reqs(1) /= MPI_REQUEST_NULL, 'recv_init')
    do round = 1, 3
      do i = 1, m
        sbuf(i) = val(rank, 100 * round + i)
      end do
      rbuf = -1
      call MMPI_STARTALL(2, reqs, ierr)
      call check(ierr == MPI_SUCCESS, 'startall')
      done = 0
      do while (done < 2)
        call MMPI_WAITSOME(2, reqs, outcount, idx, statuses, ierr)
        call check(ierr == MPI_SUCCESS .and. outcount >= 1 .and. outcount <= 2 - done, 'waitsome')
        do k = 1, outcount
          call check(idx(k) == 1 .or. idx(k) == 2, 'waitsome index is 1-based')
          if (idx(k) == 1) call check(statuses(MPI_SOURCE, k) == prev .and. &
                                      statuses(MPI_TAG, k) == 50, 'waitsome status')
        end do
        done = done + outcount
      end do
      call check(reqs(1) /= MPI_REQUEST_NULL .and. reqs(2) /= MPI_REQUEST_NULL, &
                 'persistent requests stay allocated')
      do i = 1, m
        call check(rbuf(i) == val(prev, 100 * round + i), 'persistent element')
      end do
    end do
    do k = 1, 2
      call MMPI_REQUEST_FREE(reqs(k), ierr)
      call check(ierr == MPI_SUCCESS .and. reqs(k) == MPI_REQUEST_NULL, 'request_free')
    end do

    ! Ibcast from rank 0.
    do i = 1, m
      sbuf(i) = -1
      if (rank == 0) sbuf(i) = val(0, 7 * i)
    end do
    call MMPI_IBCAST(sbuf, m, MPI_INTEGER, 0, MMPI_COMM_WORLD, req, ierr)
    call check(ierr == MPI_SUCCESS, 'ibcast')
    call MMPI_WAIT(req, MPI_STATUS_IGNORE, ierr)
    call check(ierr == MPI_SUCCESS .and. req == MPI_REQUEST_NULL, 'ibcast wait')
    do i = 1, m
      call check(sbuf(i) == val(0, 7 * i), 'ibcast element')
    end do

    ! Gatherv to the last rank: rank r sends r + 1 elements, placed after a gap of one.
    off = 0
    do r = 0, nproc - 1
      counts(r) = r + 1
      displs(r) = off + 1
      off = off + counts(r) + 1
    end do
    allocate (gath(off))
    gath = -1
    do i = 1, rank + 1
      sbuf(i) = val(rank, 3 * i)
    end do
    call MMPI_GATHERV(sbuf, rank + 1, MPI_INTEGER, gath, counts, displs, MPI_INTEGER, &
                      nproc - 1, MMPI_COMM_WORLD, ierr)
    call check(ierr == MPI_SUCCESS, 'gatherv')
    if (rank == nproc - 1) then
      do r = 0, nproc - 1
        call check(gath(displs(r)) == -1, 'gatherv gap')
        do i = 1, counts(r)
          call check(gath(displs(r) + i) == val(r, 3 * i), 'gatherv element')
        end do
      end do
    end if
    deallocate (gath)

    ! Scan (SUM): rank r gets the sum over ranks 0..r.
    do i = 1, m
      sbuf(i) = val(rank, i)
    end do
    call MMPI_SCAN(sbuf, rbuf, m, MPI_INTEGER, MPI_SUM, MMPI_COMM_WORLD, ierr)
    call check(ierr == MPI_SUCCESS, 'scan')
    do i = 1, m
      k = 0
      do r = 0, rank
        k = k + val(r, i)
      end do
      call check(rbuf(i) == k, 'scan element')
    end do
  end subroutine ops

  subroutine attributes()
    integer(kind=MPI_ADDRESS_KIND) :: v, extra
    integer :: key
    logical :: found
    call MMPI_COMM_GET_ATTR(MMPI_COMM_WORLD, MPI_TAG_UB, v, found, ierr)
    call check(ierr == MPI_SUCCESS .and. found .and. v >= 32767, 'MPI_TAG_UB')
    extra = 0
    call MMPI_COMM_CREATE_KEYVAL(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, key, extra, ierr)
    call check(ierr == MPI_SUCCESS, 'comm_create_keyval')
    v = 4242 + rank
    call MMPI_COMM_SET_ATTR(MMPI_COMM_WORLD, key, v, ierr)
    call check(ierr == MPI_SUCCESS, 'comm_set_attr')
    v = -1
    call MMPI_COMM_GET_ATTR(MMPI_COMM_WORLD, key, v, found, ierr)
    call check(ierr == MPI_SUCCESS .and. found .and. v == 4242 + rank, 'user attribute')
    call MMPI_COMM_DELETE_ATTR(MMPI_COMM_WORLD, key, ierr)
    call MMPI_COMM_GET_ATTR(MMPI_COMM_WORLD, key, v, found, ierr)
    call check(ierr == MPI_SUCCESS .and. .not. found, 'deleted attribute')
    call MMPI_COMM_FREE_KEYVAL(key, ierr)
    call check(ierr == MPI_SUCCESS .and. key == MPI_KEYVAL_INVALID, 'comm_free_keyval')
  end subroutine attributes

end program mmpi_fortran_itest

! MPI_User_function for MMPI_OP_CREATE: inoutvec = invec XOR inoutvec.
subroutine xor_op(invec, inoutvec, len, datatype)
  implicit none
  integer, intent(in) :: len, datatype
  integer, intent(in) :: invec(len)
  integer, intent(inout) :: inoutvec(len)
  integer :: i
  if (datatype < 0) return  ! MPI_INTEGER only; keeps the argument used
  do i = 1, len
    inoutvec(i) = ieor(invec(i), inoutvec(i))
  end do
end subroutine xor_op
