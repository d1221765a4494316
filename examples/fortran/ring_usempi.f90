! ring_usempi: ring_mpif through the `use mpi` module. Ring send/recv, wildcard receives on
! rank 0 (tag 100 + sender), allreduce, bcast and comm_split. Prints one line with the number of messages.
program ring_usempi
  use mpi
  implicit none
  integer :: ierr, rank, nprocs, left, right, token, i, got, total, value, half
  integer :: status(MPI_STATUS_SIZE), messages, all_messages, sub
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  left = mod(rank + nprocs - 1, nprocs)
  right = mod(rank + 1, nprocs)
  messages = 0

  if (rank == 0) then
    token = 1
    call MPI_Send(token, 1, MPI_INTEGER, right, 10, MPI_COMM_WORLD, ierr)
    call MPI_Recv(token, 1, MPI_INTEGER, left, 10, MPI_COMM_WORLD, status, ierr)
  else
    call MPI_Recv(token, 1, MPI_INTEGER, left, 10, MPI_COMM_WORLD, status, ierr)
    token = token + 1
    call MPI_Send(token, 1, MPI_INTEGER, right, 10, MPI_COMM_WORLD, ierr)
  end if
  messages = messages + 1

  if (rank == 0) then
    total = 0
    do i = 1, nprocs - 1
      call MPI_Recv(got, 1, MPI_INTEGER, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &
                    MPI_STATUS_IGNORE, ierr)
      total = total + got
    end do
  else
    call MPI_Send(rank, 1, MPI_INTEGER, 0, 100 + rank, MPI_COMM_WORLD, ierr)
    messages = messages + 1
  end if

  value = rank
  call MPI_Allreduce(value, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  value = 0
  if (rank == 0) value = 42
  call MPI_Bcast(value, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
  half = rank / 2
  call MPI_Comm_split(MPI_COMM_WORLD, mod(rank, 2), rank, sub, ierr)
  call MPI_Allreduce(rank, got, 1, MPI_INTEGER, MPI_SUM, sub, ierr)
  call MPI_Comm_free(sub, ierr)

  call MPI_Reduce(messages, all_messages, 1, MPI_INTEGER, MPI_SUM, 0, MPI_COMM_WORLD, ierr)
  if (rank == 0) then
    if (token == nprocs .and. value == 42 .and. total == nprocs * (nprocs - 1) / 2) then
      print '(a,i0,a,i0,a)', 'ring_usempi: ranks=', nprocs, ' messages=', all_messages, ' OK'
    else
      print '(a)', 'ring_usempi: WRONG'
    end if
  end if
  call MPI_Finalize(ierr)
end program ring_usempi
