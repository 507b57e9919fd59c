/* Per-call cost: times N calls of a non-boundary point-to-point call
 * (MPI_Send to MPI_PROC_NULL) and of a boundary collective (MPI_Barrier on
 * MPI_COMM_WORLD), best of R repetitions, and prints ns per call.
 * Run it on 1 process so the collective's own cost is small and stable. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return 1e9 * (double)t.tv_sec + (double)t.tv_nsec;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int n = argc > 1 ? atoi(argv[1]) : 1000000;
  const int repetitions = argc > 2 ? atoi(argv[2]) : 7;
  char byte = 0;
  double best_send = 1e300, best_barrier = 1e300;
  for (int r = 0; r < repetitions; ++r) {
    double t0 = now_ns();
    for (int i = 0; i < n; ++i) MPI_Send(&byte, 1, MPI_CHAR, MPI_PROC_NULL, 0, MPI_COMM_WORLD);
    double t1 = now_ns();
    for (int i = 0; i < n / 10; ++i) MPI_Barrier(MPI_COMM_WORLD);
    double t2 = now_ns();
    if ((t1 - t0) / n < best_send) best_send = (t1 - t0) / n;
    if ((t2 - t1) / (n / 10) < best_barrier) best_barrier = (t2 - t1) / (n / 10);
  }
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) printf("send_proc_null_ns %.1f\nbarrier_ns %.1f\n", best_send, best_barrier);
  MPI_Finalize();
  return 0;
}
