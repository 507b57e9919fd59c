/* Built with the other MPI's compiler wrapper (test/integration/wrong_mpi_preload.py):
 * predefined handles (MPI_COMM_WORLD, MPI_DOUBLE, MPI_STATUS_IGNORE) that are
 * pointers in Open MPI and ints in MPICH, a split communicator, point-to-point,
 * POSIX file I/O and a chosen exit status, so that a preloaded Tremor of the
 * wrong flavour has every kind of call to pass on untouched.
 * usage: other_mpi_app SCRATCH_FILE EXIT_STATUS (of rank 0; the others exit 0) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  if (argc != 3) return 2;
  MPI_Init(&argc, &argv);
  int rank = -1, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm half;
  MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
  double mine = rank + 1.0, sum = 0.0;
  for (int i = 0; i < 20; ++i) {
    MPI_Allreduce(&mine, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    MPI_Barrier(half);
  }
  int token = 0;
  if (size > 1 && rank == 0) MPI_Send(&mine, 1, MPI_DOUBLE, 1, 7, MPI_COMM_WORLD);
  if (size > 1 && rank == 1) {
    double got = 0.0;
    MPI_Recv(&got, 1, MPI_DOUBLE, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    token = (int)got;
  }
  if (rank == 0) {
    FILE* scratch = fopen(argv[1], "w");
    if (scratch) {
      fprintf(scratch, "%g\n", sum);
      fclose(scratch);
      remove(argv[1]);
    }
  }
  MPI_Comm_free(&half);
  printf("rank %d of %d: sum %g token %d\n", rank, size, sum, token);
  fflush(stdout);
  MPI_Finalize();
  return rank == 0 ? atoi(argv[2]) : 0;
}
