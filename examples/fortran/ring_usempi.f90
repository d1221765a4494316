! ring_usempi: the `use mpi` module with non-blocking communication, where ring_mpif (mpif.h) is
! blocking. The Fortran wrappers convert request arrays, status arrays and indices (Fortran counts
! from 1), which only these calls exercise:
!   a ring of MPI_Isend/MPI_Irecv completed by MPI_Waitall (statuses checked),
!   wildcard receives on rank 0 (tag 100 + sender, sent with MPI_Ssend) completed in any order by
!   MPI_Waitany, then allreduce, bcast and a barrier on a duplicated communicator.
! Prints one line with the number of messages it sent.
program ring_usempi
  use mpi
  implicit none
  integer :: ierr, rank, nprocs, left, right, i, idx, mine, from_left, total, value, dup
  integer :: messages, all_messages, bad, all_bad
  integer :: ring(2), ring_status(MPI_STATUS_SIZE, 2), status(MPI_STATUS_SIZE)
  integer, allocatable :: got(:), wild(:)
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  left = mod(rank + nprocs - 1, nprocs)
  right = mod(rank + 1, nprocs)
  bad = 0

  ! Every rank passes its rank to the right at once.
  mine = rank
  call MPI_Irecv(from_left, 1, MPI_INTEGER, left, 10, MPI_COMM_WORLD, ring(1), ierr)
  call MPI_Isend(mine, 1, MPI_INTEGER, right, 10, MPI_COMM_WORLD, ring(2), ierr)
  call MPI_Waitall(2, ring, ring_status, ierr)
  messages = 1
  if (from_left /= left .or. ring_status(MPI_SOURCE, 1) /= left) bad = bad + 1

  if (rank == 0) then
    allocate(got(nprocs - 1), wild(nprocs - 1))
    do i = 1, nprocs - 1
      call MPI_Irecv(got(i), 1, MPI_INTEGER, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, wild(i), ierr)
    end do
    total = 0
    do i = 1, nprocs - 1
      call MPI_Waitany(nprocs - 1, wild, idx, status, ierr)
      if (idx < 1 .or. idx > nprocs - 1) then
        bad = bad + 1
      else
        if (status(MPI_TAG) /= 100 + status(MPI_SOURCE) .or. got(idx) /= status(MPI_SOURCE)) bad = bad + 1
        total = total + got(idx)
      end if
    end do
    if (total /= nprocs * (nprocs - 1) / 2) bad = bad + 1
  else
    call MPI_Ssend(rank, 1, MPI_INTEGER, 0, 100 + rank, MPI_COMM_WORLD, ierr)
    messages = messages + 1
  end if

  call MPI_Allreduce(rank, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (total /= nprocs * (nprocs - 1) / 2) bad = bad + 1
  value = 0
  if (rank == 0) value = 42
  call MPI_Bcast(value, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
  if (value /= 42) bad = bad + 1
  call MPI_Comm_dup(MPI_COMM_WORLD, dup, ierr)
  call MPI_Barrier(dup, ierr)
  call MPI_Comm_free(dup, ierr)

  call MPI_Reduce(messages, all_messages, 1, MPI_INTEGER, MPI_SUM, 0, MPI_COMM_WORLD, ierr)
  call MPI_Reduce(bad, all_bad, 1, MPI_INTEGER, MPI_SUM, 0, MPI_COMM_WORLD, ierr)
  if (rank == 0) then
    if (all_bad == 0) then
      print '(a,i0,a,i0,a)', 'ring_usempi: ranks=', nprocs, ' messages=', all_messages, ' OK'
    else
      print '(a,i0,a)', 'ring_usempi: WRONG (', all_bad, ' checks failed)'
    end if
  end if
  call MPI_Finalize(ierr)
end program ring_usempi
