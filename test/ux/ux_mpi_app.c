/* Tiny MPI program for the launcher tests, built with both MPI flavours.
 *   ux_mpi_app --print-env   prints LD_PRELOAD and every TREMOR_* variable and
 *                            exits before MPI_Init (the profiler stays inert)
 *   ux_mpi_app [N]               N global allreduces (segment boundaries), default 20
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern char** environ;

int main(int argc, char** argv) {
  if (argc > 1 && strcmp(argv[1], "--print-env") == 0) {
    for (char** entry = environ; *entry; ++entry) {
      if (strncmp(*entry, "TREMOR_", 7) == 0 || strncmp(*entry, "LD_PRELOAD=", 11) == 0) {
        puts(*entry);
      }
    }
    return 0;
  }
  int iterations = argc > 1 ? atoi(argv[1]) : 20;
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  double value = rank, total = 0.0;
  for (int i = 0; i < iterations; ++i) {
    MPI_Allreduce(&value, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  }
  if (rank == 0) {
    printf("ux_mpi_app: %d allreduces, total %g\n", iterations, total);
  }
  MPI_Finalize();
  return 0;
}
