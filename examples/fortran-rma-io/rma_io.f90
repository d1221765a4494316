! One-sided communication and MPI-IO through `use mpi`, with results checked by the program:
!   window over an array of 16 integers (MPI_Win_create, disp_unit 4) on MPI_COMM_WORLD;
!   fence, MPI_Put of 4 integers to the right neighbour at displacement 0, fence;
!   MPI_Win_lock(SHARED) on rank 0, MPI_Get of 1 integer from its displacement 2, MPI_Win_unlock;
!   MPI_Win_free;
!   file 'fortran_rma_io.dat' opened by all ranks (CREATE + RDWR): MPI_File_write_at of 16
!   integers at byte offset rank * 64, MPI_File_read_at_all of the same 16 integers, close;
!   rank 0 deletes the file.
! Prints "fortran-rma-io ok ranks=N" when every value read back is right, exits 1 otherwise.
! The tests derive the expected OTF2 records from this description (tests/rma_io).
program rma_io
  use mpi
  implicit none
  integer :: ierr, rank, nprocs, right, left, win, fh, i, failures, total
  ! The window memory changes behind the compiler's back (MPI-3.1 section 17.1.17): volatile.
  integer, volatile :: slots(16)
  integer :: mine(4), got, block(16), back(16)
  integer(kind=MPI_ADDRESS_KIND) :: window_bytes, disp
  integer(kind=MPI_OFFSET_KIND) :: offset
  integer :: status(MPI_STATUS_SIZE)

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  right = mod(rank + 1, nprocs)
  left = mod(rank + nprocs - 1, nprocs)
  failures = 0

  slots = -1
  window_bytes = 16 * 4
  call MPI_Win_create(slots, window_bytes, 4, MPI_INFO_NULL, MPI_COMM_WORLD, win, ierr)
  mine = [(rank * 10 + i, i = 1, 4)]
  disp = 0
  call MPI_Win_fence(0, win, ierr)
  call MPI_Put(mine, 4, MPI_INTEGER, right, disp, 4, MPI_INTEGER, win, ierr)
  call MPI_Win_fence(0, win, ierr)
  if (slots(1) /= left * 10 + 1 .or. slots(4) /= left * 10 + 4) then
    print '(a,i0,a,2i6)', 'rank ', rank, ': Put delivered ', slots(1), slots(4)
    failures = failures + 1
  end if
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  got = -1
  disp = 2
  call MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win, ierr)
  call MPI_Get(got, 1, MPI_INTEGER, 0, disp, 1, MPI_INTEGER, win, ierr)
  call MPI_Win_unlock(0, win, ierr)
  if (got /= (nprocs - 1) * 10 + 3) then
    print '(a,i0,a,i0)', 'rank ', rank, ': Get read ', got
    failures = failures + 1
  end if
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  call MPI_Win_free(win, ierr)

  block = [(rank * 100 + i, i = 1, 16)]
  call MPI_File_open(MPI_COMM_WORLD, 'fortran_rma_io.dat', MPI_MODE_CREATE + MPI_MODE_RDWR, &
                     MPI_INFO_NULL, fh, ierr)
  offset = rank * 64
  call MPI_File_write_at(fh, offset, block, 16, MPI_INTEGER, status, ierr)
  call MPI_File_sync(fh, ierr)
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  call MPI_File_sync(fh, ierr)
  back = 0
  call MPI_File_read_at_all(fh, offset, back, 16, MPI_INTEGER, status, ierr)
  if (any(back /= block)) then
    print '(a,i0,a)', 'rank ', rank, ': file read back wrong'
    failures = failures + 1
  end if
  call MPI_File_close(fh, ierr)
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  if (rank == 0) call MPI_File_delete('fortran_rma_io.dat', MPI_INFO_NULL, ierr)

  call MPI_Allreduce(failures, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0 .and. total == 0) print '(a,i0)', 'fortran-rma-io ok ranks=', nprocs
  call MPI_Finalize(ierr)
  if (total /= 0) stop 1
end program rma_io
