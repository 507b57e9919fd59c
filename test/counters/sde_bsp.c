/* Bulk-synchronous MPI test application with a software-defined counter, for
 * the profiler's integration test: iteration i adds 1000*(i%3+1) to the SDE
 * counter sde:::TremorTest::work, then calls MPI_Barrier (a segment
 * boundary). So the profiler, with TREMOR_COUNTERS=sde:::TremorTest::work,
 * must record these exact work deltas per segment. Usage: sde_bsp [N=20].
 * Prints nothing on success. */
#include <mpi.h>
#include <sde_lib.h>
#include <stdio.h>
#include <stdlib.h>

/* Read by PAPI's sde component through the registered address. */
static long long work_done = 0;

int main(int argc, char** argv) {
  /* Registered before MPI_Init, where the profiler opens its counter source. */
  papi_handle_t library = papi_sde_init("TremorTest");
  int registered =
      papi_sde_register_counter(library, "work", PAPI_SDE_RO | PAPI_SDE_DELTA, PAPI_SDE_long_long, &work_done);
  MPI_Init(&argc, &argv);
  if (registered != 0) {
    fprintf(stderr, "sde_bsp: papi_sde_register_counter failed (%d)\n", registered);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  long iterations = 20;
  if (argc > 1) {
    char* end = NULL;
    iterations = strtol(argv[1], &end, 10);
    if (*end != '\0' || iterations < 0) {
      fprintf(stderr, "sde_bsp: iteration count must be a non-negative integer, not '%s'\n", argv[1]);
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
  }
  for (long i = 0; i < iterations; ++i) {
    work_done += 1000 * (i % 3 + 1);
    MPI_Barrier(MPI_COMM_WORLD);
  }
  MPI_Finalize();
  return 0;
}
