! The polling program of poll_runs_test.py through Fortran's `use mpi` (the C program's twin for
! MPI_Test and MPI_Iprobe): rank 0 sends MESSAGES messages, one every GAP_MS milliseconds; rank 1
! polls for each one and writes how many polls found nothing to COUNT_FILE.
!
! usage: poll_runs_f MODE MESSAGES GAP_MS COUNT_FILE   (MODE: test or iprobe)
program poll_runs_f
  use mpi
  implicit none
  integer, parameter :: tag = 7
  character(len=256) :: mode, arg, count_file
  integer :: messages, gap_ms, rank, ierr, i, value, request, unit
  integer :: status(MPI_STATUS_SIZE)
  integer(kind=8) :: missed, t0, t1, rate
  logical :: flag

  call MPI_Init(ierr)
  call get_command_argument(1, mode)
  call get_command_argument(2, arg)
  read (arg, *) messages
  call get_command_argument(3, arg)
  read (arg, *) gap_ms
  call get_command_argument(4, count_file)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  missed = 0
  do i = 0, messages - 1
    if (rank == 0) then
      ! A busy wait: Fortran has no portable sleep of milliseconds.
      call system_clock(t0, rate)
      do
        call system_clock(t1)
        if ((t1 - t0) * 1000 >= gap_ms * rate) exit
      end do
      value = i
      call MPI_Send(value, 1, MPI_INTEGER, 1, tag, MPI_COMM_WORLD, ierr)
    else if (rank == 1) then
      flag = .false.
      if (mode == 'test') then
        call MPI_Irecv(value, 1, MPI_INTEGER, 0, tag, MPI_COMM_WORLD, request, ierr)
        do while (.not. flag)
          call MPI_Test(request, flag, status, ierr)
          if (.not. flag) missed = missed + 1
        end do
      else
        do while (.not. flag)
          call MPI_Iprobe(0, tag, MPI_COMM_WORLD, flag, status, ierr)
          if (.not. flag) missed = missed + 1
        end do
        call MPI_Recv(value, 1, MPI_INTEGER, 0, tag, MPI_COMM_WORLD, status, ierr)
      end if
      if (value /= i) call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
    end if
  end do
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  if (rank == 1) then
    open (newunit=unit, file=trim(count_file), status='replace', action='write')
    if (mode == 'test') then
      write (unit, '(a, 1x, i0)') 'MPI_Test', missed
      write (unit, '(a, 1x, i0)') 'MPI_Iprobe', 0
    else
      write (unit, '(a, 1x, i0)') 'MPI_Test', 0
      write (unit, '(a, 1x, i0)') 'MPI_Iprobe', missed
    end if
    close (unit)
  end if
  call MPI_Finalize(ierr)
end program poll_runs_f
