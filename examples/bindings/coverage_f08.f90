! coverage_c.c through `use mpi_f08`: TYPE(MPI_Comm) and friends, ierror omitted (OPTIONAL),
! TYPE(MPI_Status), handle comparison with ==, array sections, keyword arguments.
program coverage_f08
  use mpi_f08
  implicit none
  integer :: rank, nprocs, right, left, i
  type(MPI_Comm) :: ring
  type(MPI_Request) :: reqs(2), req
  type(MPI_Status) :: statuses(2)
  type(MPI_Datatype) :: pair, types(64)
  type(MPI_Win) :: win
  type(MPI_File) :: fh
  integer :: ints(4), got(4), sendw(64), recvw(64), counts(64), displs(64), window(4)
  double precision :: token, out(8), in(8), total
  logical :: flag
  integer(kind=MPI_ADDRESS_KIND) :: stride, winsize, disp
  integer(kind=MPI_OFFSET_KIND) :: offset

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs)
  call MPI_Comm_dup(MPI_COMM_WORLD, ring)
  if (ring == MPI_COMM_NULL .or. ring == MPI_COMM_WORLD) error stop 'no duplicate'
  call MPI_Comm_set_name(ring, 'coverage ring')
  right = mod(rank + 1, nprocs)
  left = mod(rank + nprocs - 1, nprocs)

  ints = rank
  call MPI_Sendrecv(ints(1:4), 4, MPI_INTEGER, right, 7, got, 4, MPI_INTEGER, left, 7, ring, &
                    MPI_STATUS_IGNORE)

  do i = 1, 8
    out(i) = rank + i - 1
  end do
  call MPI_Irecv(in, 8, MPI_DOUBLE_PRECISION, left, 8, ring, reqs(1))
  call MPI_Isend(out, 8, MPI_DOUBLE_PRECISION, right, 8, ring, reqs(2))
  call MPI_Waitall(2, reqs, statuses)
  if (statuses(1)%MPI_SOURCE /= left .or. statuses(1)%MPI_TAG /= 8) error stop 'bad status'

  flag = .false.
  token = rank
  call MPI_Send(token, 1, MPI_DOUBLE_PRECISION, right, 9, ring)
  do while (.not. flag)
    call MPI_Iprobe(left, 9, ring, flag, MPI_STATUS_IGNORE)
  end do
  call MPI_Irecv(in(1), 1, MPI_DOUBLE_PRECISION, left, 9, ring, req)
  flag = .false.
  do while (.not. flag)
    call MPI_Test(req, flag, MPI_STATUS_IGNORE)
  end do

  total = rank
  call MPI_Allreduce(MPI_IN_PLACE, total, 1, MPI_DOUBLE_PRECISION, MPI_SUM, ring)

  do i = 1, nprocs
    sendw(i) = rank * 100 + i - 1
    counts(i) = 1
    displs(i) = (i - 1) * 4
    types(i) = MPI_INTEGER
  end do
  call MPI_Alltoallw(sendw, counts, displs, types, recvw, counts, displs, types, MPI_COMM_WORLD)

  stride = 8
  call MPI_Type_create_hvector(2, 1, stride, MPI_INTEGER, pair)
  call MPI_Type_commit(pair)
  call MPI_Type_free(pair)

  call MPI_Pcontrol(0)
  call MPI_Barrier(ring)
  call MPI_Pcontrol(1)

  window = 0
  winsize = 16
  call MPI_Win_create(window, winsize, 4, MPI_INFO_NULL, ring, win)
  call MPI_Win_fence(0, win)
  disp = 1
  call MPI_Put(ints, 2, MPI_INTEGER, right, disp, 2, MPI_INTEGER, win)
  call MPI_Win_fence(0, win)
  call MPI_Win_free(win)

  call MPI_File_open(ring, 'coverage.dat', ior(MPI_MODE_CREATE, MPI_MODE_WRONLY), MPI_INFO_NULL, fh)
  offset = rank * 64
  call MPI_File_write_at(fh, offset, out, 8, MPI_DOUBLE_PRECISION, status=MPI_STATUS_IGNORE)
  call MPI_File_close(fh)
  call MPI_Barrier(ring)
  if (rank == 0) call MPI_File_delete('coverage.dat', MPI_INFO_NULL)

  call MPI_Comm_free(ring)
  if (rank == 0) print '(a, f0.0, a, i0, a, i0)', 'coverage: sum ', total, ' window ', window(2), ' ', window(3)
  call MPI_Finalize()
end program coverage_f08
