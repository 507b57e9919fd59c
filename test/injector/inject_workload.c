/* Test application for libtremor-inject: makes a known number of calls of
 * each family so the driver (inject_check.py) can compare the delay log with
 * what it must contain.
 *
 *   inject_workload mixed N DIR [EXIT]  per rank: N x (Sendrecv, Allreduce,
 *       write, pwrite, fwrite, MPI_File_write_at) + open/close, fopen/fclose,
 *       MPI_File_open/close; prints a checksum on rank 0; exits with EXIT.
 *   inject_workload barrier N           warm-up barrier, then N timed barriers;
 *       rank 0 prints "loop_seconds <s>".
 *   inject_workload independent N       barrier, N x MPI_Send to MPI_PROC_NULL,
 *       barrier; rank 0 prints "loop_seconds <s>" (the ranks do not wait on
 *       each other until the last barrier).
 *   inject_workload window N SLEEP_MS   N x (sleep, barrier); no output.
 *   inject_workload spin N US           N x (busy US microseconds, MPI_Send to
 *       MPI_PROC_NULL); prints "spin_elapsed RANK SECONDS" (the loop's wall
 *       time, injected sleeps included) to stderr.
 *   inject_workload threads N           MPI_Init_thread(MULTIPLE); 2 threads
 *       each open a file of its own in DIR and /dev/null, N x (MPI_Send to
 *       MPI_PROC_NULL, write to the file, write to /dev/null), close both,
 *       remove the file (only the file's calls are file I/O to delay).
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tremor/inject_api.h"

static void sleep_ms(long milliseconds) {
  struct timespec pause = {milliseconds / 1000, (milliseconds % 1000) * 1000000L};
  nanosleep(&pause, NULL);
}

/* Busy for `microseconds` of wall time: code between calls, at kHz rates. */
static void spin_us(double microseconds) {
  const double until = MPI_Wtime() + microseconds * 1e-6;
  while (MPI_Wtime() < until) {
  }
}

/* Reads the injector's C API the way the profiler will: dlsym, no link. */
static void report_api_records(int rank) {
  /* memcpy: ISO C has no cast from object to function pointer. */
  tremor_inject_record_count_fn count_records = NULL;
  tremor_inject_copy_records_fn copy_records = NULL;
  void* symbol = dlsym(RTLD_DEFAULT, TREMOR_INJECT_RECORD_COUNT_SYMBOL);
  memcpy(&count_records, &symbol, sizeof symbol);
  symbol = dlsym(RTLD_DEFAULT, TREMOR_INJECT_COPY_RECORDS_SYMBOL);
  memcpy(&copy_records, &symbol, sizeof symbol);
  if (count_records == NULL || copy_records == NULL) return;
  const size_t count = count_records();
  tremor_inject_record* records = calloc(count + 1, sizeof *records);
  const int copied = records != NULL ? copy_records(records, count) : 0;
  double total_us = 0.0;
  for (int i = 0; i < copied; ++i) total_us += records[i].requested_us;
  fprintf(stderr, "api_records %d %d %.6f\n", rank, copied, total_us);
  free(records);
}

static int run_mixed(int rank, int size, int iterations, const char* dir) {
  char path[4096];
  snprintf(path, sizeof path, "%s/posix_r%d.dat", dir, rank);
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  snprintf(path, sizeof path, "%s/stdio_r%d.dat", dir, rank);
  FILE* stream = fopen(path, "w");
  snprintf(path, sizeof path, "%s/mpiio.dat", dir);
  MPI_File file;
  MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_WRONLY | MPI_MODE_CREATE, MPI_INFO_NULL, &file);
  if (fd < 0 || stream == NULL) {
    fprintf(stderr, "inject_workload: cannot create files in %s\n", dir);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const int partner = (rank ^ 1) < size ? (rank ^ 1) : MPI_PROC_NULL;
  long checksum = 0;
  for (int i = 0; i < iterations; ++i) {
    int sent = rank * 1000 + i;
    int received = 0;
    MPI_Sendrecv(&sent, 1, MPI_INT, partner, 7, &received, 1, MPI_INT, partner, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    long local = sent + received;
    long total = 0;
    MPI_Allreduce(&local, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    checksum += total;
    if (write(fd, &sent, sizeof sent) != (ssize_t)sizeof sent) checksum = -1;
    if (pwrite(fd, &received, sizeof received, (off_t)(i * sizeof received)) != (ssize_t)sizeof received) checksum = -1;
    if (fwrite(&sent, sizeof sent, 1, stream) != 1) checksum = -1;
    MPI_File_write_at(file, (MPI_Offset)(((long)i * size + rank) * (long)sizeof sent), &sent, 1, MPI_INT,
                      MPI_STATUS_IGNORE);
  }
  MPI_File_close(&file);
  fclose(stream);
  close(fd);
  if (rank == 0) printf("iterations %d ranks %d checksum %ld\n", iterations, size, checksum);
  return 0;
}

static int thread_iterations = 0;
static const char* thread_directory = ".";

static void* thread_calls(void* index) {
  int payload = 0;
  char path[4096];
  snprintf(path, sizeof path, "%s/threads-%d-%d.dat", thread_directory, (int)getpid(), *(int*)index);
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  int null_fd = open("/dev/null", O_WRONLY);
  for (int i = 0; i < thread_iterations; ++i) {
    MPI_Send(&payload, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD);
    if (write(fd, &payload, sizeof payload) < 0) payload = -1;
    if (write(null_fd, &payload, sizeof payload) < 0) payload = -1;
  }
  close(null_fd);
  close(fd);
  unlink(path);
  return NULL;
}

static int run_threads(int iterations, const char* directory) {
  thread_iterations = iterations;
  thread_directory = directory;
  pthread_t threads[2];
  int indices[2] = {0, 1};
  for (int t = 0; t < 2; ++t) pthread_create(&threads[t], NULL, thread_calls, &indices[t]);
  for (int t = 0; t < 2; ++t) pthread_join(threads[t], NULL);
  return 0;
}

int main(int argc, char** argv) {
  const int threaded = argc > 1 && strcmp(argv[1], "threads") == 0;
  int provided = MPI_THREAD_SINGLE;
  if (threaded) {
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  } else {
    MPI_Init(&argc, &argv);
  }
  int rank = 0;
  int size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const char* mode = argc > 1 ? argv[1] : "";
  const int iterations = argc > 2 ? atoi(argv[2]) : 0;
  int exit_code = 0;
  if (strcmp(mode, "mixed") == 0 && argc > 3) {
    run_mixed(rank, size, iterations, argv[3]);
    report_api_records(rank);
    exit_code = argc > 4 ? atoi(argv[4]) : 0;
  } else if (strcmp(mode, "barrier") == 0) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double start = MPI_Wtime();
    for (int i = 0; i < iterations; ++i) MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) printf("loop_seconds %.6f\n", MPI_Wtime() - start);
  } else if (strcmp(mode, "independent") == 0) {
    int payload = rank;
    MPI_Barrier(MPI_COMM_WORLD);
    const double start = MPI_Wtime();
    for (int i = 0; i < iterations; ++i) MPI_Send(&payload, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) printf("loop_seconds %.6f\n", MPI_Wtime() - start);
  } else if (threaded) {
    if (provided < MPI_THREAD_MULTIPLE) {
      if (rank == 0) fprintf(stderr, "inject_workload: MPI_THREAD_MULTIPLE not provided\n");
      exit_code = 4;
    } else {
      run_threads(iterations, argc > 3 ? argv[3] : ".");
    }
  } else if (strcmp(mode, "spin") == 0 && argc > 3) {
    const double microseconds = atof(argv[3]);
    const double start = MPI_Wtime();
    for (int i = 0; i < iterations; ++i) {
      spin_us(microseconds);
      MPI_Send(NULL, 0, MPI_BYTE, MPI_PROC_NULL, 0, MPI_COMM_WORLD);
    }
    fprintf(stderr, "spin_elapsed %d %.6f\n", rank, MPI_Wtime() - start);
  } else if (strcmp(mode, "window") == 0 && argc > 3) {
    for (int i = 0; i < iterations; ++i) {
      sleep_ms(atol(argv[3]));
      MPI_Barrier(MPI_COMM_WORLD);
    }
  } else {
    if (rank == 0)
      fprintf(stderr,
              "usage: %s mixed N DIR [EXIT] | barrier N | independent N | window N SLEEP_MS | spin N US | threads N DIR\n",
              argv[0]);
    exit_code = 2;
  }
  MPI_Finalize();
  return exit_code;
}
