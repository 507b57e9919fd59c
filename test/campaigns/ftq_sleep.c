/* FTQ-style sleep workload for the scale campaign.
 *
 * Each iteration every rank sleeps a Normal(mean, sd) time (truncated at 0),
 * then joins a global MPI_Allreduce (a segment boundary). Sleeping instead of
 * computing keeps weak scaling honest when ranks outnumber cores, and the
 * random sleeps give each segment a real maximum-over-ranks law, which is what
 * Tremor's extreme-value predictions extrapolate. With -t P -T US a sleep is
 * replaced, with probability P, by a long one of US microseconds (a heavy
 * tail: the "occasional long sleep" variant). With -L S the sleep is instead
 * mean × exp(S·Z − S²/2), Z standard normal: a lognormal with the same mean
 * and a continuous heavy (subexponential) tail. With -C the drawn time is
 * spent computing instead (a busy loop of fixed work per microsecond,
 * calibrated on rank 0 and broadcast, so every rank does the same work per
 * drawn microsecond): a compute-bound workload, to run on dedicated cores.
 *
 *   -n N    iterations (200)
 *   -m US   mean sleep in microseconds (2000)
 *   -s US   standard deviation in microseconds (200)
 *   -t P    probability of a long sleep per iteration and rank (0)
 *   -T US   length of a long sleep in microseconds (20000)
 *   -L S    lognormal sleeps with log-sd S (replaces -s; 0 = off)
 *   -r SEED seed; each rank draws from its own stream (SEED, rank) (1)
 *   -C      compute the drawn time instead of sleeping it
 *   -c U    compute units per microsecond (skips the calibration; with -C)
 *
 * A run's sleeps are fixed by SEED: repetitions meant as independent draws of
 * the workload need distinct seeds (scale_campaign.py --seed-option -r).
 */
#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/* splitmix64: small, seedable per rank, no global libc state. */
static uint64_t next_random(uint64_t* state) { return mix64(*state += 0x9e3779b97f4a7c15ULL); }

/* A hashed start, not seed·c + rank·γ: splitmix64 steps its state by γ, so
 * that start made rank r's stream rank 0's shifted by r draws, and ranks
 * replayed each other's sleeps (and long sleeps) a few iterations apart. */
static uint64_t stream_start(unsigned long long seed, int rank) {
  return mix64(mix64((uint64_t)seed) + (uint64_t)rank);
}

static double uniform_open(uint64_t* state) { return ((double)(next_random(state) >> 11) + 0.5) / 9007199254740992.0; }

/* Box-Muller; one draw per call keeps the stream simple to reason about. */
static double normal(uint64_t* state, double mean, double sd) {
  const double u1 = uniform_open(state), u2 = uniform_open(state);
  return mean + sd * sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static volatile double sink;
static void compute(long units) {
  double x = 1.0;
  for (long i = 0; i < units; ++i) x = x * 1.0000001 + 1e-9;
  sink = x;
}

/* Units per microsecond on an idle core: the loop timed until it takes 50 ms. */
static double calibrate_units_per_us(void) {
  for (long units = 100000;; units *= 2) {
    const double start = now_s();
    compute(units);
    const double elapsed = now_s() - start;
    if (elapsed > 0.05) return (double)units / (elapsed * 1e6);
  }
}

static void sleep_us(double us) {
  if (us <= 0.0) return;
  struct timespec t;
  t.tv_sec = (time_t)(us / 1e6);
  t.tv_nsec = (long)((us - (double)t.tv_sec * 1e6) * 1e3);
  while (nanosleep(&t, &t) != 0) {
  }
}

int main(int argc, char** argv) {
  int iterations = 200;
  double mean_us = 2000.0, sd_us = 200.0, tail_probability = 0.0, tail_us = 20000.0, log_sd = 0.0;
  unsigned long long seed = 1;
  int compute_mode = 0;
  double units_per_us = 0.0;
  int opt;
  while ((opt = getopt(argc, argv, "n:m:s:t:T:r:L:Cc:")) != -1) {
    switch (opt) {
      case 'n':
        iterations = atoi(optarg);
        break;
      case 'm':
        mean_us = atof(optarg);
        break;
      case 's':
        sd_us = atof(optarg);
        break;
      case 't':
        tail_probability = atof(optarg);
        break;
      case 'T':
        tail_us = atof(optarg);
        break;
      case 'L':
        log_sd = atof(optarg);
        break;
      case 'r':
        seed = strtoull(optarg, NULL, 10);
        break;
      case 'C':
        compute_mode = 1;
        break;
      case 'c':
        units_per_us = atof(optarg);
        break;
      default:
        fprintf(stderr, "usage: see the header of ftq_sleep.c\n");
        return 2;
    }
  }
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (compute_mode && units_per_us <= 0.0) {
    if (rank == 0) units_per_us = calibrate_units_per_us();
    MPI_Bcast(&units_per_us, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  }
  uint64_t state = stream_start(seed, rank);
  double global = 0.0;
  for (int it = 0; it < iterations; ++it) {
    double us =
        log_sd > 0.0 ? mean_us * exp(normal(&state, -0.5 * log_sd * log_sd, log_sd)) : normal(&state, mean_us, sd_us);
    if (tail_probability > 0.0 && uniform_open(&state) < tail_probability) us = tail_us;
    if (compute_mode) {
      if (us > 0.0) compute((long)(us * units_per_us));
    } else {
      sleep_us(us);
    }
    MPI_Allreduce(&us, &global, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  }
  MPI_Finalize();
  return 0;
}
