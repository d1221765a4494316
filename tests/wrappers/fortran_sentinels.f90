! Fortran entry points convert Open MPI's sentinels and indices: MPI_UNWEIGHTED, MPI_STATUS(ES)_IGNORE,
! 1-based Waitany/Waitsome indices. A wrong conversion stops with a non-zero code.
program fw
  use mpi
  implicit none
  integer :: ierr, rank, size, req(2), idx, g, buf(2), rb(2), outcount, idxs(2), nin, nout
  logical :: weighted
  integer :: src(1), dst(1)
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, size, ierr)
  src(1) = mod(rank + size - 1, size); dst(1) = mod(rank + 1, size)
  call MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, src, MPI_UNWEIGHTED, 1, dst, MPI_UNWEIGHTED, &
       MPI_INFO_NULL, .false., g, ierr)
  call MPI_Dist_graph_neighbors_count(g, nin, nout, weighted, ierr)
  if (weighted) stop 5
  call MPI_Irecv(rb, 1, MPI_INTEGER, src(1), 1, MPI_COMM_WORLD, req(1), ierr)
  call MPI_Isend(buf, 1, MPI_INTEGER, dst(1), 1, MPI_COMM_WORLD, req(2), ierr)
  call MPI_Waitany(2, req, idx, MPI_STATUS_IGNORE, ierr)
  if (idx < 1 .or. idx > 2) stop 6
  call MPI_Waitsome(2, req, outcount, idxs, MPI_STATUSES_IGNORE, ierr)
  if (outcount /= 1 .or. idxs(1) /= 3 - idx) stop 7
  call MPI_Comm_free(g, ierr)
  call MPI_Finalize(ierr)
end program
