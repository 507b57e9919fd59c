// Shared core of the generated wrappers: symbol resolution, the depth guard
// and the hot-path test that decides whether a call may be delayed.
#pragma once

#include <dlfcn.h>

#include <atomic>

#include "tremor/inject_config.hpp"

#define TREMOR_INJECT_EXPORT extern "C" __attribute__((visibility("default")))

namespace tremor::inject {

// Families eligible for delay or traced in this process; 0 until MPI_Init
// returns with a configuration that injects or traces, and again after
// MPI_Finalize begins. A zero mask is the whole cost of an idle injector: one
// relaxed load.
extern std::atomic<unsigned> g_active_families;

// Calls of this thread currently inside an intercepted function. Only the
// outermost one may be delayed, so MPI_X -> PMPI_X, and POSIX I/O issued by
// MPI-IO, is delayed at most once. initial-exec: the library is preloaded,
// so its TLS is in the static block and access costs no function call.
extern thread_local unsigned t_depth __attribute__((tls_model("initial-exec")));

// Non-zero while this thread is inside dlsym(): a wrapper re-entered from
// dlsym must not recurse into resolution again.
extern thread_local unsigned t_resolving __attribute__((tls_model("initial-exec")));

// Slow path: window, probability draw, delay and log. Called only for the
// outermost call of an active (injected or traced) family. Returns the log
// row of the call, or kNoRow when it was neither delayed nor traced.
inline constexpr long long kNoRow = -1;
long long maybe_delay(const char* call_name, unsigned family) noexcept;
// Notes when the call of a logged row returned (its entry and return times
// give the rank's arrival at the call and its wait there) and the thread's
// run-queue delay then.
void note_return(long long row, double returned_s) noexcept;

// TREMOR_INJECT_SLOWDOWN is on: written once before injection starts. The
// slowdown of a call is proportional to the time since this thread's previous
// outermost intercepted call returned (CLOCK_MONOTONIC seconds, 0 before any).
extern bool g_slowdown;
extern thread_local double t_last_return_s __attribute__((tls_model("initial-exec")));
double monotonic_seconds() noexcept;

// Notes the return of an outermost call, also for void-returning calls.
struct ReturnStamp {
  long long row = kNoRow;
  ~ReturnStamp() {
    t_last_return_s = monotonic_seconds();
    if (row != kNoRow) note_return(row, t_last_return_s);
  }
};

// Resolves the next definition of `symbol` after this library, once.
void* resolve_next(const char* symbol) noexcept;

// The cache holds void* because function types from libc headers carry
// attributes that template arguments would drop (-Wignored-attributes).
inline void* next_definition(std::atomic<void*>& cache, const char* symbol) noexcept {
  void* function = cache.load(std::memory_order_acquire);
  if (function == nullptr) [[unlikely]] {
    function = resolve_next(symbol);
    cache.store(function, std::memory_order_release);
  }
  return function;
}

struct DepthGuard {
  DepthGuard() noexcept { ++t_depth; }
  ~DepthGuard() { --t_depth; }
  DepthGuard(const DepthGuard&) = delete;
  DepthGuard& operator=(const DepthGuard&) = delete;
  bool outermost() const noexcept { return t_depth == 1; }
};

// The body of every wrapper: maybe delay, then forward. `forward` receives
// the resolved next definition and calls it with the wrapper's arguments;
// `eligible` says whether this call may be delayed or traced at all (the
// POSIX family: only calls on regular files, the file I/O the profiler
// counts), asked only when the family is active.
template <typename Forward, typename Eligible>
inline auto intercept_if(unsigned family, const char* call_name, void* next, Forward&& forward, Eligible&& eligible) {
  const unsigned active = g_active_families.load(std::memory_order_relaxed);
  if (active == 0) [[likely]]
    return forward(next);
  DepthGuard guard;
  if (!guard.outermost()) return forward(next);
  const long long row = (active & family) != 0 && eligible() ? maybe_delay(call_name, family) : kNoRow;
  if (!g_slowdown && row == kNoRow) return forward(next);
  ReturnStamp stamp{row};
  return forward(next);
}

template <typename Forward>
inline auto intercept(unsigned family, const char* call_name, void* next, Forward&& forward) {
  return intercept_if(family, call_name, next, static_cast<Forward&&>(forward), [] { return true; });
}

// Lifecycle hooks called by the MPI_Init*/MPI_Finalize wrappers.
void start_after_init() noexcept;
void finish_before_finalize() noexcept;

}  // namespace tremor::inject
