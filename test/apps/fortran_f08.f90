! Fortran BSP test, use mpi_f08 style: N iterations of an 8-byte
! MPI_Allreduce on MPI_COMM_WORLD plus one MPI_Barrier on a split half.
program fortran_f08
  use mpi_f08
  implicit none
  integer :: rank, i, n
  type(MPI_Comm) :: half
  double precision :: x, y
  character(len=16) :: arg
  n = 12
  if (command_argument_count() > 0) then
    call get_command_argument(1, arg)
    read(arg, *) n
  end if
  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_split(MPI_COMM_WORLD, mod(rank, 2), rank, half)
  do i = 1, n
    x = dble(i)
    call MPI_Allreduce(x, y, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD)
    call MPI_Barrier(half)
  end do
  call MPI_Comm_free(half)
  call MPI_Finalize()
end program fortran_f08
