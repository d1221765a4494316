! coverage_c.c through mpif.h: integer handles, mandatory ierr, MPI_STATUS_SIZE status arrays,
! INTEGER(KIND=MPI_ADDRESS_KIND/MPI_OFFSET_KIND) arguments, CHARACTER names.
program coverage_mpif
  implicit none
  include 'mpif.h'
  integer :: ierr, rank, nprocs, ring, right, left, i, req, pair, win, fh
  integer :: ints(4), got(4), reqs(2), statuses(MPI_STATUS_SIZE, 2)
  integer :: sendw(64), recvw(64), counts(64), displs(64), types(64), window(4)
  double precision :: token, out(8), in(8), total
  logical :: flag
  integer(kind=MPI_ADDRESS_KIND) :: stride, winsize, disp
  integer(kind=MPI_OFFSET_KIND) :: offset

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  call MPI_Comm_dup(MPI_COMM_WORLD, ring, ierr)
  call MPI_Comm_set_name(ring, 'coverage ring', ierr)
  right = mod(rank + 1, nprocs)
  left = mod(rank + nprocs - 1, nprocs)

  ints = rank
  call MPI_Sendrecv(ints, 4, MPI_INTEGER, right, 7, got, 4, MPI_INTEGER, left, 7, ring, &
                    MPI_STATUS_IGNORE, ierr)

  do i = 1, 8
    out(i) = rank + i - 1
  end do
  call MPI_Irecv(in, 8, MPI_DOUBLE_PRECISION, left, 8, ring, reqs(1), ierr)
  call MPI_Isend(out, 8, MPI_DOUBLE_PRECISION, right, 8, ring, reqs(2), ierr)
  call MPI_Waitall(2, reqs, statuses, ierr)

  flag = .false.
  token = rank
  call MPI_Send(token, 1, MPI_DOUBLE_PRECISION, right, 9, ring, ierr)
  do while (.not. flag)
    call MPI_Iprobe(left, 9, ring, flag, MPI_STATUS_IGNORE, ierr)
  end do
  call MPI_Irecv(in(1), 1, MPI_DOUBLE_PRECISION, left, 9, ring, req, ierr)
  flag = .false.
  do while (.not. flag)
    call MPI_Test(req, flag, MPI_STATUS_IGNORE, ierr)
  end do

  total = rank
  call MPI_Allreduce(MPI_IN_PLACE, total, 1, MPI_DOUBLE_PRECISION, MPI_SUM, ring, ierr)

  do i = 1, nprocs
    sendw(i) = rank * 100 + i - 1
    counts(i) = 1
    displs(i) = (i - 1) * 4
    types(i) = MPI_INTEGER
  end do
  call MPI_Alltoallw(sendw, counts, displs, types, recvw, counts, displs, types, MPI_COMM_WORLD, ierr)

  stride = 8
  call MPI_Type_create_hvector(2, 1, stride, MPI_INTEGER, pair, ierr)
  call MPI_Type_commit(pair, ierr)
  call MPI_Type_free(pair, ierr)

  call MPI_Pcontrol(0)
  call MPI_Barrier(ring, ierr)
  call MPI_Pcontrol(1)

  window = 0
  winsize = 16
  call MPI_Win_create(window, winsize, 4, MPI_INFO_NULL, ring, win, ierr)
  call MPI_Win_fence(0, win, ierr)
  disp = 1
  call MPI_Put(ints, 2, MPI_INTEGER, right, disp, 2, MPI_INTEGER, win, ierr)
  call MPI_Win_fence(0, win, ierr)
  call MPI_Win_free(win, ierr)

  call MPI_File_open(ring, 'coverage.dat', MPI_MODE_CREATE + MPI_MODE_WRONLY, MPI_INFO_NULL, fh, ierr)
  offset = rank * 64
  call MPI_File_write_at(fh, offset, out, 8, MPI_DOUBLE_PRECISION, MPI_STATUS_IGNORE, ierr)
  call MPI_File_close(fh, ierr)
  call MPI_Barrier(ring, ierr)
  if (rank == 0) call MPI_File_delete('coverage.dat', MPI_INFO_NULL, ierr)

  call MPI_Comm_free(ring, ierr)
  if (rank == 0) print '(a, f0.0, a, i0, a, i0)', 'coverage: sum ', total, ' window ', window(2), ' ', window(3)
  call MPI_Finalize(ierr)
end program coverage_mpif
