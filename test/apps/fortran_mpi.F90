! Fortran BSP test with the pre-2008 bindings, mpif.h style or (built with
! -DUSE_MPI_MODULE) use mpi style: N iterations of an 8-byte MPI_ALLREDUCE on
! MPI_COMM_WORLD plus one MPI_BARRIER on a split half (not a boundary).
program fortran_mpi
#ifdef USE_MPI_MODULE
  use mpi
#endif
  implicit none
#ifndef USE_MPI_MODULE
  include 'mpif.h'
#endif
  integer :: ierr, rank, i, n, half
  double precision :: x, y
  character(len=16) :: arg
  n = 12
  if (command_argument_count() > 0) then
    call get_command_argument(1, arg)
    read(arg, *) n
  end if
  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SPLIT(MPI_COMM_WORLD, mod(rank, 2), rank, half, ierr)
  do i = 1, n
    x = dble(i)
    call MPI_ALLREDUCE(x, y, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
    call MPI_BARRIER(half, ierr)
  end do
  call MPI_COMM_FREE(half, ierr)
  call MPI_FINALIZE(ierr)
end program fortran_mpi
