/* Per-call cost: times N calls of a non-boundary point-to-point call
 * (MPI_Send to MPI_PROC_NULL) and of a boundary collective (MPI_Barrier on
 * MPI_COMM_WORLD), best of R repetitions, and prints ns per call.
 * Run it on 1 process so the collective's own cost is small and stable.
 * Back-to-back barriers are segments of a few ns; with the CPU-time counter
 * Tremor skips the counter read on segments under 20 us, so the spaced loop
 * (a fixed ~30 us of arithmetic before each barrier) times the boundary with
 * its read: compare it with the unwrapped run's spaced figure.
 * Built twice: call_cost_sde also registers the SDE counter
 * sde:::TremorBench::work (before MPI_Init, where Tremor opens its counter),
 * so Tremor's PAPI path can be timed on machines without a PMU. */
#include <mpi.h>
#if defined(TREMOR_BENCH_SDE)
#include <sde_lib.h>
static long long work_done = 0;
#endif
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double clock_ns(clockid_t clock) {
  struct timespec t;
  clock_gettime(clock, &t);
  return 1e9 * (double)t.tv_sec + (double)t.tv_nsec;
}
static double now_ns(void) { return clock_ns(CLOCK_MONOTONIC); }
/* CPU time too: on a shared machine it is not inflated by descheduling. */
static double cpu_ns(void) { return clock_ns(CLOCK_PROCESS_CPUTIME_ID); }

/* Separate functions so callgrind can count each loop alone
 * (--toggle-collect=send_loop --toggle-collect=barrier_loop). */
__attribute__((noinline)) void send_loop(int n) {
  char byte = 0;
  for (int i = 0; i < n; ++i) MPI_Send(&byte, 1, MPI_CHAR, MPI_PROC_NULL, 0, MPI_COMM_WORLD);
}

__attribute__((noinline)) void barrier_loop(int n) {
  for (int i = 0; i < n; ++i) {
#if defined(TREMOR_BENCH_SDE)
    ++work_done;
#endif
    MPI_Barrier(MPI_COMM_WORLD);
  }
}

/* A dependent chain the compiler cannot shorten or hoist (it starts from a
 * volatile): the same work every call. */
static volatile double spin_seed = 1.0;
static volatile double spin_sink;

__attribute__((noinline)) double spin(int steps) {
  double x = spin_seed;
  for (int i = 0; i < steps; ++i) x = x * 1.0000001 + 1e-9;
  return x;
}

static int compare_doubles(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

/* The spaced loop also times each barrier alone (two vDSO clock reads, ~22 ns
 * each, the same in every configuration): the spin's own jitter (~1 % of
 * 30 us) then stays out of the figure, and the median drops the calls that
 * were descheduled. */
__attribute__((noinline)) void spaced_barrier_loop(int n, double* barrier_ns) {
  for (int i = 0; i < n; ++i) {
    spin_sink = spin(16000);
#if defined(TREMOR_BENCH_SDE)
    ++work_done;
#endif
    const double t0 = now_ns();
    MPI_Barrier(MPI_COMM_WORLD);
    barrier_ns[i] = now_ns() - t0;
  }
}

/* The fallback counter's own price when cold, for comparison: one
 * CLOCK_THREAD_CPUTIME_ID read after the same spin. */
__attribute__((noinline)) void spaced_cputime_read_loop(int n, double* read_ns) {
  for (int i = 0; i < n; ++i) {
    spin_sink = spin(16000);
    const double t0 = now_ns();
    spin_sink = clock_ns(CLOCK_THREAD_CPUTIME_ID);
    read_ns[i] = now_ns() - t0;
  }
}

static double median_of(double* values, int n) {
  qsort(values, (size_t)n, sizeof *values, compare_doubles);
  return values[n / 2];
}

int main(int argc, char** argv) {
#if defined(TREMOR_BENCH_SDE)
  papi_sde_register_counter(papi_sde_init("TremorBench"), "work", PAPI_SDE_RO | PAPI_SDE_DELTA, PAPI_SDE_long_long,
                            &work_done);
#endif
  MPI_Init(&argc, &argv);
  const int n = argc > 1 ? atoi(argv[1]) : 1000000;
  const int repetitions = argc > 2 ? atoi(argv[2]) : 7;
  double best_send = 1e300, best_barrier = 1e300, best_send_cpu = 1e300, best_barrier_cpu = 1e300;
  double best_spaced = 1e300, best_spaced_cpu = 1e300;
  const int spaced = n / 100 > 0 ? n / 100 : 1;
  double* spaced_call_ns = malloc((size_t)spaced * sizeof(double));
  if (spaced_call_ns == NULL) return 1;
  double best_spaced_call = 1e300, best_cputime_read = 1e300;
  for (int r = 0; r < repetitions; ++r) {
    double t0 = now_ns(), c0 = cpu_ns();
    send_loop(n);
    double t1 = now_ns(), c1 = cpu_ns();
    barrier_loop(n / 10);
    double t2 = now_ns(), c2 = cpu_ns();
    if ((t1 - t0) / n < best_send) best_send = (t1 - t0) / n;
    if ((t2 - t1) / (n / 10) < best_barrier) best_barrier = (t2 - t1) / (n / 10);
    if ((c1 - c0) / n < best_send_cpu) best_send_cpu = (c1 - c0) / n;
    if ((c2 - c1) / (n / 10) < best_barrier_cpu) best_barrier_cpu = (c2 - c1) / (n / 10);
    spaced_barrier_loop(spaced, spaced_call_ns);
    double t3 = now_ns(), c3 = cpu_ns();
    if ((t3 - t2) / spaced < best_spaced) best_spaced = (t3 - t2) / spaced;
    if ((c3 - c2) / spaced < best_spaced_cpu) best_spaced_cpu = (c3 - c2) / spaced;
    const double call = median_of(spaced_call_ns, spaced);
    if (call < best_spaced_call) best_spaced_call = call;
    spaced_cputime_read_loop(spaced / 4 > 0 ? spaced / 4 : 1, spaced_call_ns);
    const double read = median_of(spaced_call_ns, spaced / 4 > 0 ? spaced / 4 : 1);
    if (read < best_cputime_read) best_cputime_read = read;
  }
  free(spaced_call_ns);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0)
    printf(
        "send_proc_null_ns %.1f\nbarrier_ns %.1f\nsend_proc_null_cpu_ns %.1f\nbarrier_cpu_ns %.1f\n"
        "spaced_barrier_ns %.1f\nspaced_barrier_cpu_ns %.1f\nspaced_barrier_call_ns %.1f\n"
        "spaced_cputime_read_ns %.1f\n",
        best_send, best_barrier, best_send_cpu, best_barrier_cpu, best_spaced, best_spaced_cpu, best_spaced_call,
        best_cputime_read);
  MPI_Finalize();
  return 0;
}
