/* The cost Tremor adds to one iteration of a bulk-synchronous loop, counted
 * with callgrind inside iteration_loop only (scripts/bench-overhead.sh
 * --callgrind): each iteration computes (a fixed dependent chain), makes
 * `exchanges` MPI_Sendrecv calls (not boundaries), closes the segment with
 * an MPI_Allreduce on MPI_COMM_WORLD (a boundary), and every `write_every`
 * iterations rewrites a small file with fopen/fwrite/fclose (0: never).
 * Usage: iteration_cost ITERATIONS EXCHANGES WRITE_EVERY DIRECTORY */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static volatile double spin_seed = 1.0;
static volatile double spin_sink;

static double spin(int steps) {
  double x = spin_seed;
  for (int i = 0; i < steps; ++i) x = x * 1.0000001 + 1e-9;
  return x;
}

__attribute__((noinline)) void iteration_loop(int iterations, int exchanges, int write_every, const char* path) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  double send = 1.0, receive = 0.0, total = 0.0;
  char line[64] = "checkpoint\n";
  for (int i = 0; i < iterations; ++i) {
    spin_sink = spin(4000);
    for (int e = 0; e < exchanges; ++e)
      MPI_Sendrecv(&send, 1, MPI_DOUBLE, rank, 1, &receive, 1, MPI_DOUBLE, rank, 1, MPI_COMM_WORLD,
                   MPI_STATUS_IGNORE);
    MPI_Allreduce(&send, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    if (write_every > 0 && (i + 1) % write_every == 0) {
      FILE* file = fopen(path, "w");
      if (file) {
        fwrite(line, 1, sizeof line, file);
        fclose(file);
      }
    }
  }
}

int main(int argc, char** argv) {
  if (argc < 5) {
    fprintf(stderr, "usage: %s ITERATIONS EXCHANGES WRITE_EVERY DIRECTORY\n", argv[0]);
    return 2;
  }
  MPI_Init(&argc, &argv);
  char path[4096];
  snprintf(path, sizeof path, "%s/iteration_cost.dat", argv[4]);
  iteration_loop(atoi(argv[1]), atoi(argv[2]), atoi(argv[3]), path);
  MPI_Finalize();
  return 0;
}
