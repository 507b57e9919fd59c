/* An MPI program whose main thread hands work to a helper thread and waits
 * for it (as BAGEL does, and a hybrid code whose master thread sleeps at a
 * barrier): between the first two barriers it starts a thread that computes
 * for HELPER_MS of CPU time and joins it; then N iterations of US
 * microseconds of compute and an MPI_Allreduce. Nothing external delays it.
 *
 * Before MPI_Init it asks the kernel itself whether this process may record
 * its context switches (the perf event Tremor's CPU-time reader uses) and
 * prints "perf_switch_records yes" or "no: <errno text>" on rank 0, so the
 * test decides without Tremor's output whether Tremor could tell the
 * waiting apart.
 *
 * usage: helper_thread HELPER_MS N US */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/perf_event.h>
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static double thread_cpu_s(void) {
  struct timespec now;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return (double)now.tv_sec + 1e-9 * (double)now.tv_nsec;
}

/* Computes until the calling thread has used `seconds` of CPU time. */
static void compute(double seconds) {
  const double end = thread_cpu_s() + seconds;
  volatile unsigned long sink = 0;
  while (thread_cpu_s() < end) sink = sink + 1;
}

static void* helper(void* seconds) {
  compute(*(const double*)seconds);
  return NULL;
}

static const char* switch_records_refusal(void) {
  struct perf_event_attr attr;
  memset(&attr, 0, sizeof attr);
  attr.size = sizeof attr;
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = PERF_COUNT_SW_DUMMY;
  attr.sample_type = PERF_SAMPLE_TIME;
  attr.sample_id_all = 1;
  attr.context_switch = 1;
  attr.exclude_kernel = 1;
  attr.exclude_hv = 1;
  const long fd = syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
  if (fd < 0) return strerror(errno);
  close((int)fd);
  return NULL;
}

int main(int argc, char** argv) {
  double helper_s;
  long n, i;
  double us;
  int rank;
  pthread_t thread;
  if (argc != 4 || (helper_s = atof(argv[1]) * 1e-3) < 0 || (n = atol(argv[2])) < 0 || (us = atof(argv[3])) < 0) {
    fprintf(stderr, "usage: %s HELPER_MS N US\n", argv[0]);
    return 2;
  }
  const char* refusal = switch_records_refusal();
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) printf("perf_switch_records %s%s\n", refusal ? "no: " : "yes", refusal ? refusal : "");
  MPI_Barrier(MPI_COMM_WORLD);
  if (pthread_create(&thread, NULL, helper, &helper_s) != 0 || pthread_join(thread, NULL) != 0) {
    fprintf(stderr, "helper_thread: could not run the helper thread\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  for (i = 0; i < n; ++i) {
    double value = 1.0, sum = 0.0;
    compute(us * 1e-6);
    MPI_Allreduce(&value, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  }
  MPI_Finalize();
  return 0;
}
