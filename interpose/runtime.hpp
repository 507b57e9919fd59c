// The hot path shared by every wrapper: per-thread accumulators, the
// recording switch, the re-entrancy guard and the tick clock. Everything here
// is inline, lock-free and allocation-free after a thread's first call.
#pragma once
#include <array>
#include <atomic>
#include <cstdint>

#include "tremor/metrics.hpp"

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif
#include <time.h>

// The wrappers are the library's only exported symbols.
#define TREMOR_EXPORT __attribute__((visibility("default")))

namespace tremor::interpose {
// Internal to the library: the hot path reads its globals directly, not through the GOT.
#pragma GCC visibility push(hidden)

using tremor::Feature;

// Adds to a counter only its owner thread writes: a relaxed load and store
// (no locked instruction), atomic so that a thread closing a segment may
// read it meanwhile.
[[gnu::always_inline]] inline void bump(std::uint64_t& slot, std::uint64_t amount) noexcept {
  const std::atomic_ref<std::uint64_t> counter(slot);
  counter.store(counter.load(std::memory_order_relaxed) + amount, std::memory_order_relaxed);
}

// Accumulators of one thread. Only the owner writes them (bump, and a reset
// when it closes a segment itself, under the boundary lock); another
// thread closing a segment reads them through std::atomic_ref, the owner
// plainly. Another closing thread keeps what it took, so no counter is ever
// reset by another thread.
struct ThreadState {
  alignas(16) FeatureVector features{};
  std::uint64_t mpi_ticks = 0;
  std::uint64_t io_ticks = 0;
  int depth = 0;                // > 0 inside an intercepted call or inside Tremor itself
  ThreadState* next = nullptr;  // registry list, append-only

  // Owner-only accounting of the work counter inside non-boundary MPI and
  // I/O calls (used with the CPU-time counter, see account_long_call).
  std::uint64_t short_inside_ticks = 0;   // wall time of short calls: busy, so CPU
  std::uint64_t long_inside_counter = 0;  // measured counter inside long calls
  std::uint64_t last_counter = 0;         // the thread's last counter reading
  std::uint64_t last_counter_tick = 0;    // and when it was taken

  // Written only by a thread closing a segment, under the boundary lock: the
  // part of the counts above that closed segments already hold (for the only
  // thread, the counts' starting point: Recorder::take_new_counts).
  alignas(16) FeatureVector taken_features{};
  std::uint64_t taken_mpi_ticks = 0;
  std::uint64_t taken_io_ticks = 0;

  [[gnu::always_inline]] void add(Feature feature, std::uint64_t amount) noexcept {
    bump(features[index(feature)], amount);
  }
};

extern std::atomic<bool> g_recording;
// Set once, before main, when the process runs another MPI than this build's
// (mpi_library_check.cpp): every wrapper then forwards and Tremor records nothing.
extern "C" bool tremor_forward_only;
inline bool forward_only() noexcept { return tremor_forward_only; }
extern bool g_use_tsc;
extern constinit thread_local ThreadState* t_state __attribute__((tls_model("initial-exec")));

// Registers the calling thread (allocates once); nullptr if memory ran out.
ThreadState* register_current_thread() noexcept;
// Head of the registry (for summing at segment boundaries).
extern std::atomic<ThreadState*> g_threads;
inline ThreadState* registered_threads() noexcept { return g_threads.load(std::memory_order_acquire); }

inline std::uint64_t monotonic_ns() noexcept {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<std::uint64_t>(now.tv_sec) * 1000000000ULL + static_cast<std::uint64_t>(now.tv_nsec);
}

// rdtsc costs ~11 ns here against ~28 ns for CLOCK_MONOTONIC; it is used only
// when the CPU has an invariant TSC (checked at start-up).
[[gnu::always_inline]] inline std::uint64_t ticks() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  if (g_use_tsc) return __rdtsc();
#endif
  return monotonic_ns();
}
// Seconds per tick, calibrated at start-up.
double seconds_per_tick() noexcept;
void calibrate_ticks() noexcept;

// Returns the thread's state if this call is to be recorded (recording on and
// not nested inside another recorded call), nullptr otherwise.
[[gnu::always_inline]] inline ThreadState* enter() noexcept {
  if (!g_recording.load(std::memory_order_relaxed)) return nullptr;
  ThreadState* state = t_state;
  if (state == nullptr) state = register_current_thread();
  if (state == nullptr || state->depth != 0) return nullptr;
  state->depth = 1;
  return state;
}

// Calls at least this long read the work counter at their exit (a read costs
// 0.2-1 us, so at most a few percent of such a call); shorter ones are taken
// as busy. Stays at the maximum (off) unless the counter is CPU time.
extern std::uint64_t g_long_call_ticks;
void account_long_call(ThreadState& state, std::uint64_t start, std::uint64_t end) noexcept;

// A call whose thread has not read the counter for this long reads it at
// entry, so a long call that follows a compute phase has an exact starting
// point even if the thread was descheduled while computing. At most one read
// per interval (100 us: <= 0.6 % of the thread's time); off unless CPU time.
extern std::uint64_t g_refresh_ticks;
void refresh_counter(ThreadState& state, std::uint64_t now) noexcept;
[[gnu::always_inline]] inline void refresh_if_stale(ThreadState& state, std::uint64_t now) noexcept {
  if (now - state.last_counter_tick > g_refresh_ticks) refresh_counter(state, now);
}

// A boundary whose thread read the counter less than this long ago takes the
// time since as busy instead of reading (see boundary_entry_work); 0 (always
// read) unless the counter is CPU time.
extern std::uint64_t g_boundary_busy_ticks;

[[gnu::always_inline]] inline void account_inside(ThreadState& state, std::uint64_t start, std::uint64_t end) noexcept {
  const std::uint64_t span = end - start;
  if (span >= g_long_call_ticks) {
    account_long_call(state, start, end);
  } else {
    state.short_inside_ticks += span;
  }
}
[[gnu::always_inline]] inline void leave_mpi(ThreadState& state, std::uint64_t start, std::uint64_t end) noexcept {
  bump(state.mpi_ticks, end - start);
  account_inside(state, start, end);
  state.depth = 0;
}
[[gnu::always_inline]] inline void leave_io(ThreadState& state, std::uint64_t start, std::uint64_t end) noexcept {
  bump(state.io_ticks, end - start);
  account_inside(state, start, end);
  state.depth = 0;
}
// The closing collective: its wait is measured exactly at the boundary.
[[gnu::always_inline]] inline void leave_boundary(ThreadState& state, std::uint64_t start, std::uint64_t end) noexcept {
  bump(state.mpi_ticks, end - start);
  state.depth = 0;
}

// Marks the calling thread as inside Tremor, so Tremor's own I/O and MPI
// calls (logging, the output file) are never recorded as the application's.
class InsideTremor {
 public:
  InsideTremor() noexcept : state_(t_state ? t_state : register_current_thread()) {
    if (state_) ++state_->depth;
  }
  ~InsideTremor() {
    if (state_) --state_->depth;
  }
  InsideTremor(const InsideTremor&) = delete;
  InsideTremor& operator=(const InsideTremor&) = delete;

 private:
  ThreadState* state_;
};

#pragma GCC visibility pop
}  // namespace tremor::interpose
