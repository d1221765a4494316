! `use mpi_f08` procedures that reach the MPI library outside the mpif.h implementation:
! MPI_Buffer_detach (calls the C function PMPI_Buffer_detach and returns a TYPE(C_PTR)),
! MPI_Aint_add/diff and MPI_F_sync_reg. Counts and values are checked by
! tests/coverage/legacy_check.py.
program legacy_f08
  use mpi_f08
  use, intrinsic :: iso_c_binding, only : c_ptr, c_loc, c_associated
  implicit none
  integer :: rank, nprocs, peer, got, size
  integer, target :: attached(64)
  integer(kind=MPI_ADDRESS_KIND) :: first, second, moved, apart
  type(c_ptr) :: detached, expected
  integer :: pair(2)

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs)
  peer = mod(rank + 1, nprocs)

  expected = c_loc(attached)
  call MPI_Buffer_attach(attached, 256)
  call MPI_Bsend(200 + rank, 1, MPI_INTEGER, peer, 3, MPI_COMM_WORLD)
  call MPI_Recv(got, 1, MPI_INTEGER, MPI_ANY_SOURCE, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
  call MPI_Buffer_detach(detached, size)  ! no ierror: the OPTIONAL argument is absent

  call MPI_Get_address(pair(1), first)
  moved = MPI_Aint_add(first, 4_MPI_ADDRESS_KIND)
  call MPI_Get_address(pair(2), second)
  apart = MPI_Aint_diff(second, first)
  call MPI_F_sync_reg(pair)
  print '(a,i0,a,i0,a,l1,a,i0,a,l1,a,i0,a)', 'rank ', rank, ': received ', got, ' detached ', &
    c_associated(detached, expected), ' size ', size, ' aint_add ', moved == second, &
    ' aint_diff ', apart, ' OK'
  call MPI_Finalize()
end program legacy_f08
