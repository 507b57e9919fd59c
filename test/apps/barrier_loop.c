/* N world barriers, nothing else: N + 1 segments as cheaply as the recording
 * path allows. After MPI_Finalize (where Tremor analyses and writes) it
 * prints the process's peak resident set size, so the caller can bound the
 * memory of the whole run including the finalize.
 *
 * usage: barrier_loop N */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long peak_rss_kb(void) {
  char line[256];
  long kb = -1;
  FILE* status = fopen("/proc/self/status", "r");
  if (!status) return -1;
  while (fgets(line, sizeof line, status)) {
    if (strncmp(line, "VmHWM:", 6) == 0) kb = strtol(line + 6, NULL, 10);
  }
  fclose(status);
  return kb;
}

int main(int argc, char** argv) {
  long long n, i;
  int rank;
  if (argc != 2 || (n = atoll(argv[1])) < 0) {
    fprintf(stderr, "usage: %s N\n", argv[0]);
    return 2;
  }
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  for (i = 0; i < n; ++i) MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  printf("rank %d barriers %lld peak_rss_kb %ld\n", rank, n, peak_rss_kb());
  return 0;
}
