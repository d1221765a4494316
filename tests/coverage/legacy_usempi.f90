! `use mpi` with TYPE(C_PTR) base pointers: MPI_Alloc_mem, MPI_Win_allocate(_shared) and
! MPI_Win_shared_query then call the `_cptr` procedures of Open MPI's Fortran library, and the
! window's Put must still be recorded. Also MPI_Aint_add/diff (Fortran functions) and
! MPI_F_sync_reg (Fortran only). Counts and values are checked by tests/coverage/legacy_check.py.
program legacy_usempi
  use mpi
  use, intrinsic :: iso_c_binding, only : c_ptr, c_f_pointer, c_associated
  implicit none
  integer :: ierr, rank, nprocs, peer, win, shwin, disp_unit
  integer(kind=MPI_ADDRESS_KIND) :: bytes, first, second, moved, apart, zero, shsize
  type(c_ptr) :: mem, base, shbase, peerbase
  integer, pointer :: scratch(:), window(:)
  integer :: pair(2)

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  peer = mod(rank + 1, nprocs)

  bytes = 16
  call MPI_Alloc_mem(bytes, MPI_INFO_NULL, mem, ierr)
  call c_f_pointer(mem, scratch, (/4/))
  scratch = rank
  call MPI_Free_mem(scratch, ierr)

  ! Each rank puts 100 + rank into its right neighbour's window.
  call MPI_Win_allocate(bytes, 4, MPI_INFO_NULL, MPI_COMM_WORLD, base, win, ierr)
  call c_f_pointer(base, window, (/4/))
  window = -1
  zero = 0
  call MPI_Win_fence(0, win, ierr)
  call MPI_Put(100 + rank, 1, MPI_INTEGER, peer, zero, 1, MPI_INTEGER, win, ierr)
  call MPI_Win_fence(0, win, ierr)
  print '(a,i0,a,i0)', 'rank ', rank, ': window holds ', window(1)
  call MPI_Win_free(win, ierr)

  call MPI_Win_allocate_shared(bytes, 4, MPI_INFO_NULL, MPI_COMM_WORLD, shbase, shwin, ierr)
  call MPI_Win_shared_query(shwin, peer, shsize, disp_unit, peerbase, ierr)
  print '(a,i0,a,i0,a,i0,a,l1)', 'rank ', rank, ': shared segment of rank ', peer, ' has ', &
    shsize, ' bytes, mapped ', c_associated(peerbase)
  call MPI_Win_free(shwin, ierr)

  call MPI_Get_address(pair(1), first, ierr)
  moved = MPI_Aint_add(first, 4_MPI_ADDRESS_KIND)
  call MPI_Get_address(pair(2), second, ierr)
  apart = MPI_Aint_diff(second, first)
  call MPI_F_sync_reg(pair)
  print '(a,i0,a,l1,a,i0,a)', 'rank ', rank, ': aint_add ', moved == second, ' aint_diff ', apart, ' OK'
  call MPI_Finalize(ierr)
end program legacy_usempi
