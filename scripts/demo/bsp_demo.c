/* Bulk-synchronous demo and test application.
 *
 * Each iteration: compute (two intrinsic classes: even iterations do 1x the
 * base work, odd ones 2x), a ring exchange of a known number of bytes, then a
 * global MPI_Allreduce (a segment boundary). Every K iterations each rank
 * writes a checkpoint (POSIX or MPI-IO). Options let a test plant exact
 * interference (-d) or keep all collectives on a sub-communicator (-s sub).
 *
 *   -n N      iterations (200)
 *   -u US     base work per iteration in microseconds of compute (2000)
 *   -S        sleep instead of compute (honest weak scaling on few cores)
 *   -b BYTES  bytes each rank sends to its right neighbour per iteration (4096)
 *   -k K      checkpoint every K iterations (0 = never; default 50)
 *   -z BYTES  checkpoint size per rank (65536)
 *   -m        write checkpoints with MPI-IO instead of POSIX
 *   -O DIR    checkpoint directory (default: $TMPDIR or /tmp)
 *   -d R:I1,I2,...:MS  rank R sleeps MS extra milliseconds in iterations I1,I2...
 *   -T        rank R of -d prints each planted sleep as its own clock measured
 *             it: "planted ITERATION SECONDS" lines on stdout (even with -q)
 *   -s sub    collectives only on two halves of the world (no global boundary)
 *   -q        quiet (no summary line)
 *   -t        add the elapsed time to the summary line
 *   -c UNITS  compute units per microsecond (skip the calibration, so that
 *             repeated runs do exactly the same work)
 *   -P        print the calibrated units per microsecond and exit
 *   -F HOW:I  end abnormally after iteration I's MPI_Allreduce: HOW = abort
 *             (the last rank calls MPI_Abort, code 3), exit (every rank
 *             exits without MPI_Finalize) or kill (the last rank SIGKILLs itself)
 *   -L BYTES  RLIMIT_FSIZE set right after MPI_Init (a file system that fills up
 *             during the run; MPICH's own shared-memory files at init need MBs)
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static volatile double sink;
/* Busy work calibrated in wall time on an idle core; the amount of work is
 * fixed by the iteration count, so interference shows as longer time. */
static void compute(long units) {
  double x = 1.0;
  for (long i = 0; i < units; ++i) x = x * 1.0000001 + 1e-9;
  sink = x;
}

static long calibrate_units_per_us(void) {
  long units = 100000;
  for (;;) {
    double t0 = now_s();
    compute(units);
    double dt = now_s() - t0;
    if (dt > 0.02) return (long)((double)units / (dt * 1e6)) + 1;
    units *= 2;
  }
}

static void sleep_us(double us) {
  struct timespec t;
  t.tv_sec = (time_t)(us / 1e6);
  t.tv_nsec = (long)((us - (double)t.tv_sec * 1e6) * 1e3);
  while (nanosleep(&t, &t) != 0) {
  }
}

int main(int argc, char** argv) {
  int iterations = 200, base_us = 2000, sleep_mode = 0, bytes = 4096, every = 50, ckpt = 65536;
  int use_mpiio = 0, sub_only = 0, quiet = 0, show_time = 0, print_calibration = 0, delay_rank = -1, delay_ms = 0;
  int print_planted = 0;
  char delay_iters[4096] = "";
  long fixed_units_per_us = 0;
  char fail_how[16] = "";
  int fail_at = -1;
  long long file_size_limit = -1;
  const char* dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
  int opt;
  while ((opt = getopt(argc, argv, "n:u:Sb:k:z:mO:d:s:qtTc:PF:L:")) != -1) {
    switch (opt) {
      case 'n':
        iterations = atoi(optarg);
        break;
      case 'u':
        base_us = atoi(optarg);
        break;
      case 'S':
        sleep_mode = 1;
        break;
      case 'b':
        bytes = atoi(optarg);
        break;
      case 'k':
        every = atoi(optarg);
        break;
      case 'z':
        ckpt = atoi(optarg);
        break;
      case 'm':
        use_mpiio = 1;
        break;
      case 'O':
        dir = optarg;
        break;
      case 'd': {
        char iters[4000];
        if (sscanf(optarg, "%d:%3999[0-9,]:%d", &delay_rank, iters, &delay_ms) == 3) {
          snprintf(delay_iters, sizeof delay_iters, ",%s,", iters);
        }
        break;
      }
      case 's':
        sub_only = strcmp(optarg, "sub") == 0;
        break;
      case 'q':
        quiet = 1;
        break;
      case 't':
        show_time = 1;
        break;
      case 'T':
        print_planted = 1;
        break;
      case 'c':
        fixed_units_per_us = atol(optarg);
        break;
      case 'P':
        print_calibration = 1;
        break;
      case 'L':
        file_size_limit = atoll(optarg);
        break;
      case 'F':
        if (sscanf(optarg, "%15[a-z]:%d", fail_how, &fail_at) != 2) fail_at = -1;
        break;
      default:
        fprintf(stderr, "usage: see the header of bsp_demo.c\n");
        return 2;
    }
  }
  MPI_Init(&argc, &argv);
  if (file_size_limit >= 0) {
    struct rlimit limit = {(rlim_t)file_size_limit, (rlim_t)file_size_limit};
    if (setrlimit(RLIMIT_FSIZE, &limit) != 0) perror("setrlimit");
  }
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm coll = MPI_COMM_WORLD;
  if (sub_only) MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &coll);

  long units_per_us = sleep_mode ? 0 : (fixed_units_per_us > 0 ? fixed_units_per_us : calibrate_units_per_us());
  if (print_calibration) {
    if (rank == 0) printf("units_per_us %ld\n", units_per_us);
    MPI_Finalize();
    return 0;
  }
  char* sendbuf = calloc((size_t)bytes + 1, 1);
  char* recvbuf = calloc((size_t)bytes + 1, 1);
  char* ckbuf = calloc((size_t)ckpt + 1, 1);
  memset(ckbuf, 'x', (size_t)ckpt);
  const int right = (rank + 1) % size, left = (rank + size - 1) % size;
  double checksum = 0.0, t0 = now_s();

  for (int it = 0; it < iterations; ++it) {
    const double us = (double)base_us * (1 + (it % 2));
    if (sleep_mode)
      sleep_us(us);
    else
      compute((long)(us * (double)units_per_us));
    if (rank == delay_rank && delay_ms > 0) {
      char key[32];
      snprintf(key, sizeof key, ",%d,", it);
      if (strstr(delay_iters, key)) {
        const double before = now_s();
        sleep_us(delay_ms * 1000.0);
        if (print_planted) printf("planted %d %.9f\n", it, now_s() - before);
      }
    }
    if (size > 1 && bytes > 0) {
      MPI_Sendrecv(sendbuf, bytes, MPI_CHAR, right, 1, recvbuf, bytes, MPI_CHAR, left, 1, MPI_COMM_WORLD,
                   MPI_STATUS_IGNORE);
    }
    if (every > 0 && (it + 1) % every == 0) {
      char path[4096];
      snprintf(path, sizeof path, "%s/bsp_ckpt_%d_%d.dat", dir, (int)getpid(), rank);
      if (use_mpiio) {
        MPI_File fh;
        if (MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh) == MPI_SUCCESS) {
          MPI_File_write(fh, ckbuf, ckpt, MPI_CHAR, MPI_STATUS_IGNORE);
          MPI_File_close(&fh);
        }
      } else {
        int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
        if (fd >= 0) {
          if (write(fd, ckbuf, (size_t)ckpt) < 0) perror("write");
          close(fd);
        }
      }
      unlink(path);
    }
    double local = (double)(it + rank), global = 0.0;
    MPI_Allreduce(&local, &global, 1, MPI_DOUBLE, MPI_SUM, coll);
    checksum += global;
    if (it == fail_at) {
      fflush(stdout);
      if (strcmp(fail_how, "exit") == 0) exit(0);
      if (strcmp(fail_how, "abort") == 0 && rank == size - 1) MPI_Abort(MPI_COMM_WORLD, 3);
      if (strcmp(fail_how, "kill") == 0 && rank == size - 1) raise(SIGKILL);
    }
  }
  const double elapsed = now_s() - t0;
  if (rank == 0 && !quiet) {
    printf("bsp_demo: %d iterations on %d ranks, checksum %.0f", iterations, size, checksum);
    if (show_time) printf(", %.3f s", elapsed);
    printf("\n");
  }
  if (sub_only) MPI_Comm_free(&coll);
  free(sendbuf);
  free(recvbuf);
  free(ckbuf);
  MPI_Finalize();
  return 0;
}
