/* Cost per call of MPI_Test(MPI_REQUEST_NULL) and MPI_Send(MPI_PROC_NULL),
 * best of 7 repetitions of 10^6 calls, single rank. Run it without and with
 * LD_PRELOAD=libtremor-inject-<flavour>.so to get the injector's added cost;
 * see injector/README.md for the exact commands. */
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
  const long calls = argc > 1 ? atol(argv[1]) : 1000000L;
  double best_test = 1e30;
  double best_send = 1e30;
  int payload = 0;
  for (int repetition = 0; repetition < 7; ++repetition) {
    double start = now_ns();
    for (long i = 0; i < calls; ++i) {
      MPI_Request request = MPI_REQUEST_NULL;
      int flag = 0;
      MPI_Test(&request, &flag, MPI_STATUS_IGNORE);
    }
    double per_call = (now_ns() - start) / (double)calls;
    if (per_call < best_test) best_test = per_call;
    start = now_ns();
    for (long i = 0; i < calls; ++i) MPI_Send(&payload, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD);
    per_call = (now_ns() - start) / (double)calls;
    if (per_call < best_send) best_send = per_call;
  }
  printf("MPI_Test(MPI_REQUEST_NULL) %.2f ns/call\nMPI_Send(MPI_PROC_NULL)    %.2f ns/call\n", best_test, best_send);
  MPI_Finalize();
  return 0;
}
