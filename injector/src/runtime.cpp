// Process-wide injector state: start after MPI_Init, the delay slow path,
// symbol resolution and the C API for the profiler.
#include "runtime.hpp"

#include <fcntl.h>
#include <mpi.h>
#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <mutex>
#include <random>

#include "delay_log.hpp"
#include "tremor/inject_api.h"

namespace tremor::inject {

std::atomic<unsigned> g_active_families{0};
thread_local unsigned t_depth __attribute__((tls_model("initial-exec"))) = 0;
thread_local unsigned t_resolving __attribute__((tls_model("initial-exec"))) = 0;
bool g_slowdown = false;
thread_local double t_last_return_s __attribute__((tls_model("initial-exec"))) = 0.0;
// The slowdown this thread owes and has not spent yet, µs.
thread_local double t_slowdown_owed_us __attribute__((tls_model("initial-exec"))) = 0.0;

double monotonic_seconds() noexcept {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<double>(now.tv_sec) + 1e-9 * static_cast<double>(now.tv_nsec);
}

namespace {

// This thread's /proc/thread-self/schedstat, opened at its first logged call
// (-1: not yet, -2: unavailable). Raw system calls: the injector's and the
// profiler's own I/O wrappers must not see (or delay) this read.
thread_local int t_schedstat_fd __attribute__((tls_model("initial-exec"))) = -1;

// The thread's run-queue delay so far (schedstat's second field, ns), s; -1
// where the kernel does not report it.
double thread_queued_seconds() noexcept {
  if (t_schedstat_fd == -1) {
    const long fd = syscall(SYS_openat, AT_FDCWD, "/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
    t_schedstat_fd = fd >= 0 ? static_cast<int>(fd) : -2;
  }
  if (t_schedstat_fd < 0) return -1.0;
  char text[96];
  const long length = syscall(SYS_pread64, t_schedstat_fd, text, sizeof text - 1, 0L);
  if (length <= 0) return -1.0;
  text[length] = '\0';
  unsigned long long running_ns = 0;
  unsigned long long waiting_ns = 0;
  if (std::sscanf(text, "%llu %llu", &running_ns, &waiting_ns) != 2) return -1.0;
  return 1e-9 * static_cast<double>(waiting_ns);
}

// The time window, written before injection is switched on, read-only after.
// A helper thread switches g_active_families on at the window's start and
// off at its end, so calls outside the window cost what calls of an idle
// injector cost (one relaxed load): no clock read on that path. Calls inside
// re-check the precise clock, so the logged times respect the window exactly.
bool g_window = false;
// Families this rank may delay (none when it is not selected) and families it
// traces; the active mask is their union inside the window, the traced ones outside.
unsigned g_injected_families = 0;
unsigned g_traced_families = 0;
// The profiler's segment index, when the profiler is loaded (set at start).
tremor_current_segment_fn g_current_segment = nullptr;
double g_init_seconds = 0.0;
double g_window_start_s = 0.0;
double g_window_end_s = 0.0;

timespec to_timespec(double seconds) noexcept {
  timespec value{};
  value.tv_sec = static_cast<time_t>(seconds);
  value.tv_nsec = static_cast<long>((seconds - static_cast<double>(value.tv_sec)) * 1e9);
  if (value.tv_nsec >= 1000000000L) {
    value.tv_sec += 1;
    value.tv_nsec -= 1000000000L;
  }
  return value;
}

// Everything below is written once in start_after_init (before the release
// store of g_active_families) and only read afterwards, except the engine
// and the log, which the mutex protects.
struct InjectorState {
  Config config;
  int rank = -1;
  bool log_enabled = false;  // a valid configuration that injects on some rank
  std::atomic<bool> started{false};
  std::atomic<bool> finished{false};
  bool stopped = false;  // finalize began or tremor_inject_suspend(); under mutex

  std::mutex mutex;
  std::mt19937_64 engine;
  std::uniform_real_distribution<double> uniform{0.0, 1.0};
  std::normal_distribution<double> normal{0.0, 1.0};
  std::uint64_t eligible_calls = 0;
  DelayLog log;
};

InjectorState& state() noexcept {
  // Never destroyed: an application may call MPI_Finalize from its own
  // exit-time destructor, after the statics made during the run are gone.
  static InjectorState& instance = *new InjectorState();
  return instance;
}

// Normal(mean, sd) truncated at 0 by redrawing: mean >= 0 keeps the
// acceptance rate >= 1/2, so the bound on redraws is never reached in practice.
double draw_delay_us(InjectorState& s) noexcept {
  if (s.config.sd_us == 0.0) return s.config.mean_us;
  for (int attempt = 0; attempt < 200; ++attempt) {
    const double value = s.config.mean_us + s.config.sd_us * s.normal(s.engine);
    if (value >= 0.0) return value;
  }
  return 0.0;
}

void spend(DelayMode mode, double until_s) noexcept {
  if (mode == DelayMode::spin) {
    while (monotonic_seconds() < until_s) {
    }
    return;
  }
  const timespec target = to_timespec(until_s);
  // A signal (EINTR) only interrupts: sleep on to the same absolute target.
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &target, nullptr) == EINTR) {
  }
}

void sleep_until(double until_s) noexcept { spend(DelayMode::sleep, until_s); }

// Switches injection on at the window's start and off at its end, unless
// finalize or suspend came first (checked under the mutex).
void* run_window_timer(void*) {
  InjectorState& s = state();
  sleep_until(g_init_seconds + g_window_start_s);
  {
    std::lock_guard lock(s.mutex);
    if (s.stopped) return nullptr;
    g_active_families.store(g_injected_families | g_traced_families, std::memory_order_release);
  }
  if (!s.config.has_end) return nullptr;
  sleep_until(g_init_seconds + g_window_end_s);
  std::lock_guard lock(s.mutex);
  if (s.stopped) return nullptr;
  g_active_families.store(g_traced_families, std::memory_order_release);
  return nullptr;
}

// Detached, all signals blocked so the application's signals never land on it.
bool start_window_timer() noexcept {
  sigset_t all{};
  sigset_t previous{};
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &previous);
  pthread_attr_t attributes;
  pthread_attr_init(&attributes);
  pthread_attr_setdetachstate(&attributes, PTHREAD_CREATE_DETACHED);
  pthread_attr_setstacksize(&attributes, 64 * 1024);
  pthread_t thread{};
  const int error = pthread_create(&thread, &attributes, &run_window_timer, nullptr);
  pthread_attr_destroy(&attributes);
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  return error == 0;
}

}  // namespace

void* resolve_next(const char* symbol) noexcept {
  if (t_resolving != 0) return nullptr;  // dlsym re-entered a wrapper
  ++t_resolving;
  void* address = dlsym(RTLD_NEXT, symbol);
  --t_resolving;
  return address;
}

// The slowdown's share of a call's delay: the time since the thread's
// previous call returned, counted from the window's start at the earliest
// (calls outside the window leave no stamp).
double slowdown_delay_us(const Config& config) noexcept {
  const double since = std::max({t_last_return_s, g_init_seconds, g_init_seconds + g_window_start_s});
  return config.slowdown * std::max(0.0, monotonic_seconds() - since) * 1e6;
}

// Any definition of `symbol` in the process (the profiler's API), or null.
static void* resolve_next_any(const char* symbol) noexcept {
  ++t_resolving;
  void* address = dlsym(RTLD_DEFAULT, symbol);
  --t_resolving;
  return address;
}

// A slow rank's waits are paid once they add up to this, µs. A sleep costs
// about 20 µs of CPU time and overshoots by up to 80 µs on a virtual machine:
// a wait of a few µs at every call of a code that calls MPI at kHz rates
// would slow the rank several times its factor, much of it on the CPU. What
// a sleep overshoots is repaid from the next waits, so over the run the rank
// waits its factor times the time between its calls.
constexpr double kMinSlowdownSleepUs = 200.0;

long long maybe_delay(const char* call_name, unsigned family) noexcept {
  const double entered_s = monotonic_seconds();
  bool injectable = (g_injected_families & family) != 0;
  if (injectable && g_window) {
    const double now_s = entered_s - g_init_seconds;
    injectable = now_s >= g_window_start_s && now_s < g_window_end_s;
  }
  const bool traced = (g_traced_families & family) != 0;
  if (!injectable && !traced) return kNoRow;
  InjectorState& s = state();
  double random_us = 0.0;
  bool slowdown_paid = false;
  long long sequence = -1;
  bool delayed = false;
  {
    std::lock_guard lock(s.mutex);
    if (s.stopped) return kNoRow;  // finalize began
    if (injectable) {
      sequence = static_cast<long long>(s.eligible_calls++);
      if (s.config.random_delays() && (s.config.probability >= 1.0 || s.uniform(s.engine) < s.config.probability)) {
        random_us = draw_delay_us(s);
        delayed = true;
      }
      if (g_slowdown) {
        t_slowdown_owed_us += slowdown_delay_us(s.config);
        slowdown_paid = t_slowdown_owed_us >= kMinSlowdownSleepUs;
        delayed = delayed || slowdown_paid;
      }
    }
    if (!delayed && !traced) return kNoRow;
    if (!s.log.reserve_one()) return kNoRow;  // log full: stop injecting so the log stays complete
  }
  const long long segment = g_current_segment != nullptr ? g_current_segment() : -1;
  double requested_us = 0.0;
  double spent_us = 0.0;
  double begin = entered_s;
  if (delayed) {
    requested_us = random_us + (slowdown_paid ? t_slowdown_owed_us : 0.0);
    begin = monotonic_seconds();
    spend(s.config.mode, begin + requested_us * 1e-6);
    spent_us = (monotonic_seconds() - begin) * 1e6;
    if (slowdown_paid) t_slowdown_owed_us -= spent_us - random_us;  // an overshoot is repaid later
  }
  LogEntry entry{};
  entry.record.time_s = begin - g_init_seconds;
  entry.record.requested_us = requested_us;
  entry.record.spent_us = spent_us;
  std::snprintf(entry.record.call, sizeof entry.record.call, "%s", call_name);
  entry.record.segment = segment;
  entry.sequence = sequence;
  entry.entered_s = entered_s;
  entry.queued_entered_s = thread_queued_seconds();
  entry.queued_returned_s = -1.0;
  entry.delayed = delayed;
  std::lock_guard lock(s.mutex);
  return static_cast<long long>(s.log.append(entry));
}

void note_return(long long row, double returned_s) noexcept {
  const double queued_s = thread_queued_seconds();
  InjectorState& s = state();
  std::lock_guard lock(s.mutex);
  s.log.set_returned(static_cast<std::size_t>(row), returned_s, queued_s);
}

void start_after_init() noexcept {
  InjectorState& s = state();
  if (s.started.exchange(true)) return;
  g_init_seconds = monotonic_seconds();
  int initialized = 0;
  PMPI_Initialized(&initialized);
  if (!initialized) return;
  PMPI_Comm_rank(MPI_COMM_WORLD, &s.rank);
  int world_size = 1;
  PMPI_Comm_size(MPI_COMM_WORLD, &world_size);

  ParseResult parsed =
      parse_config([](const char* name) -> const char* { return std::getenv(name); }, s.rank, world_size);
  if (!parsed.ok) {
    if (s.rank == 0) std::fprintf(stderr, "%s\n", parsed.error.c_str());
    return;
  }
  s.config = std::move(parsed.config);
  Config everywhere = s.config;
  everywhere.rank_selected = true;
  s.log_enabled = everywhere.logging();
  if (!s.log_enabled) return;
  if (!s.log.open(s.config.output_dir, s.rank)) {
    if (s.rank == 0) std::fprintf(stderr, "tremor-inject: out of memory for the delay log; injection disabled.\n");
    s.log_enabled = false;
    return;
  }
  g_current_segment = reinterpret_cast<tremor_current_segment_fn>(resolve_next_any(TREMOR_CURRENT_SEGMENT_SYMBOL));
  g_window = s.config.has_window();
  g_window_start_s = s.config.after_s;
  g_window_end_s = s.config.has_end ? s.config.after_s + s.config.for_s : HUGE_VAL;
  std::seed_seq seeds{static_cast<std::uint32_t>(s.config.seed), static_cast<std::uint32_t>(s.config.seed >> 32),
                      static_cast<std::uint32_t>(s.rank)};
  s.engine.seed(seeds);
  g_injected_families = s.config.injecting() ? s.config.families : 0;
  g_traced_families = s.config.traced;
  if (!s.config.logging()) return;
  g_slowdown = g_injected_families != 0 && s.config.slowdown > 0.0;
  if (g_window && g_injected_families != 0 && !start_window_timer()) {
    if (s.rank == 0) std::fprintf(stderr, "tremor-inject: cannot start the window timer thread; injection disabled.\n");
    g_injected_families = 0;
  }
  const bool inside_window = !g_window || g_injected_families == 0;
  g_active_families.store(g_traced_families | (inside_window ? g_injected_families : 0), std::memory_order_release);
}

void finish_before_finalize() noexcept {
  InjectorState& s = state();
  if (!s.started.load() || s.finished.exchange(true)) return;
  {
    std::lock_guard lock(s.mutex);
    s.stopped = true;
    g_active_families.store(0, std::memory_order_release);
  }
  if (!s.log_enabled) return;
  std::lock_guard lock(s.mutex);
  s.log.write_csv(s.rank);
}

namespace {
// Copies under the mutex so a concurrent delay cannot reallocate the log.
std::size_t record_count() noexcept {
  InjectorState& s = state();
  std::lock_guard lock(s.mutex);
  return s.log.delays();
}
}  // namespace

}  // namespace tremor::inject

TREMOR_INJECT_EXPORT size_t tremor_inject_record_count(void) { return tremor::inject::record_count(); }

TREMOR_INJECT_EXPORT int tremor_inject_copy_records(tremor_inject_record* out, size_t max) {
  auto& s = tremor::inject::state();
  std::lock_guard lock(s.mutex);
  return static_cast<int>(s.log.copy_to(out, max));
}

TREMOR_INJECT_EXPORT int tremor_inject_is_active(void) {
  const unsigned active = tremor::inject::g_active_families.load(std::memory_order_relaxed);
  return (active & tremor::inject::g_injected_families) != 0 ? 1 : 0;
}

TREMOR_INJECT_EXPORT int tremor_inject_get_totals(tremor_inject_totals* out) {
  if (out == nullptr) return 0;
  auto& s = tremor::inject::state();
  std::lock_guard lock(s.mutex);
  out->delays = s.log.delays();
  out->requested_s = 1e-6 * s.log.requested_us_total();
  out->spent_s = 1e-6 * s.log.spent_us_total();
  return 1;
}

TREMOR_INJECT_EXPORT void tremor_inject_suspend(void) {
  auto& s = tremor::inject::state();
  std::lock_guard lock(s.mutex);
  s.stopped = true;
  tremor::inject::g_active_families.store(0, std::memory_order_release);
}
