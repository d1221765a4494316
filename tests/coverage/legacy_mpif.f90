! Old MPI-1 code through mpif.h: functions removed in MPI-3.0 (MPI_ADDRESS, MPI_TYPE_STRUCT, ...,
! still in Open MPI's Fortran library) and the MPI-2-deprecated attribute functions. Each is called
! a fixed number of times (tests/coverage/legacy_check.py knows how many); the results are printed
! so that traced and untraced runs can be compared.
program legacy_mpif
  implicit none
  include 'mpif.h'
  external on_error
  integer :: ierr, rank, nprocs, peer, pair, vec, idx, keyval, attr, errh, world_errh
  integer :: addr(3), extent, lb, ub, blocklens(2), displs(2), types(2), stat(MPI_STATUS_SIZE)
  integer :: sendbuf(3), recvbuf(3)
  logical :: found

  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, nprocs, ierr)
  peer = mod(rank + 1, nprocs)

  ! A pair of the first and third integer, built the MPI-1 way.
  call MPI_ADDRESS(sendbuf(1), addr(1), ierr)
  call MPI_ADDRESS(sendbuf(3), addr(3), ierr)
  blocklens = (/1, 1/)
  displs = (/0, addr(3) - addr(1)/)
  types = (/MPI_INTEGER, MPI_INTEGER/)
  call MPI_TYPE_STRUCT(2, blocklens, displs, types, pair, ierr)
  call MPI_TYPE_COMMIT(pair, ierr)
  call MPI_TYPE_EXTENT(pair, extent, ierr)
  call MPI_TYPE_LB(pair, lb, ierr)
  call MPI_TYPE_UB(pair, ub, ierr)
  call MPI_TYPE_HVECTOR(2, 1, 8, MPI_INTEGER, vec, ierr)
  call MPI_TYPE_HINDEXED(2, blocklens, displs, MPI_INTEGER, idx, ierr)
  call MPI_TYPE_FREE(vec, ierr)
  call MPI_TYPE_FREE(idx, ierr)

  sendbuf = (/10 * rank + 1, -1, 10 * rank + 3/)
  recvbuf = 0
  call MPI_SENDRECV(sendbuf, 1, pair, peer, 7, recvbuf, 1, pair, MPI_ANY_SOURCE, 7, &
                    MPI_COMM_WORLD, stat, ierr)
  call MPI_TYPE_FREE(pair, ierr)

  call MPI_KEYVAL_CREATE(MPI_NULL_COPY_FN, MPI_NULL_DELETE_FN, keyval, 0, ierr)
  call MPI_ATTR_PUT(MPI_COMM_WORLD, keyval, 42 + rank, ierr)
  call MPI_ATTR_GET(MPI_COMM_WORLD, keyval, attr, found, ierr)
  call MPI_ATTR_DELETE(MPI_COMM_WORLD, keyval, ierr)
  call MPI_KEYVAL_FREE(keyval, ierr)

  call MPI_ERRHANDLER_GET(MPI_COMM_WORLD, world_errh, ierr)
  call MPI_ERRHANDLER_CREATE(on_error, errh, ierr)
  call MPI_ERRHANDLER_SET(MPI_COMM_WORLD, errh, ierr)
  call MPI_ERRHANDLER_SET(MPI_COMM_WORLD, world_errh, ierr)
  call MPI_ERRHANDLER_FREE(errh, ierr)

  print '(a,i0,a,i0,a,i0,a,i0,a,i0,a,i0,a,i0,a,l1,a)', 'rank ', rank, ': extent ', extent, &
    ' lb ', lb, ' ub ', ub, ' received ', recvbuf(1), ',', recvbuf(3), ' attr ', attr, &
    ' found ', found, ' OK'
  call MPI_FINALIZE(ierr)
end program legacy_mpif

subroutine on_error(comm, code)
  integer :: comm, code
  print *, 'error handler called on', comm, 'with', code
end subroutine on_error
