// The per-thread half of the PAPI source: each thread lazily builds its own
// event set on its first read and tears it down when it exits.
#include <atomic>
#include <cstdint>

#include <papi.h>

#include "tremor/counters/counter_source.hpp"

namespace tremor::counters {
namespace {

// Trivially constructible and destructible, so the read path touches it
// without a TLS init wrapper; generation 0 means "no event set yet" (open
// hands out generations from 1).
struct PapiThreadState {
  std::uint32_t generation = 0;
  int event_set = PAPI_NULL;
  bool failed = false;
  std::uint64_t offset = 0;  // value carried over a rebuild, so reads stay monotonic
  std::uint64_t last = 0;
};

// initial-exec: the profiler is LD_PRELOADed (static TLS is reserved for it),
// and this model spares the read path a __tls_get_addr call.
[[gnu::tls_model("initial-exec")]] thread_local PapiThreadState tls_state;
std::atomic<std::uint64_t> thread_failures{0};

void release_event_set(PapiThreadState& state) noexcept {
  if (state.event_set == PAPI_NULL) return;
  // After a PAPI_shutdown the handle means nothing any more.
  if (PAPI_is_initialized() != PAPI_NOT_INITED) {
    long long discarded = 0;  // PAPI_stop insists on a buffer
    PAPI_stop(state.event_set, &discarded);
    PAPI_cleanup_eventset(state.event_set);
    PAPI_destroy_eventset(&state.event_set);
  }
  state.event_set = PAPI_NULL;
}

// Built on a thread's first PAPI read: its destructor runs at thread exit.
struct PapiThreadTeardown {
  PapiThreadTeardown() = default;
  PapiThreadTeardown(const PapiThreadTeardown&) = delete;
  PapiThreadTeardown& operator=(const PapiThreadTeardown&) = delete;
  ~PapiThreadTeardown() {
    const bool had_event_set = tls_state.event_set != PAPI_NULL;
    release_event_set(tls_state);
    if (had_event_set && PAPI_is_initialized() != PAPI_NOT_INITED) PAPI_unregister_thread();
  }
};

std::uint64_t mark_failed(PapiThreadState& state) noexcept {
  state.failed = true;
  thread_failures.fetch_add(1, std::memory_order_relaxed);
  return state.last;
}

[[gnu::noinline, gnu::cold]] std::uint64_t rebuild_event_set(int event_code, std::uint32_t generation) noexcept {
  thread_local PapiThreadTeardown teardown;
  PapiThreadState& state = tls_state;
  release_event_set(state);
  state.generation = generation;
  state.failed = false;
  state.offset = state.last;  // the new event set counts from zero
  if (PAPI_is_initialized() == PAPI_NOT_INITED) return mark_failed(state);
  int event_set = PAPI_NULL;
  if (PAPI_create_eventset(&event_set) != PAPI_OK) return mark_failed(state);
  if (PAPI_add_event(event_set, event_code) != PAPI_OK || PAPI_start(event_set) != PAPI_OK) {
    PAPI_cleanup_eventset(event_set);
    PAPI_destroy_eventset(&event_set);
    return mark_failed(state);
  }
  state.event_set = event_set;
  return state.last;
}

}  // namespace

namespace detail {

std::uint64_t read_papi_on_calling_thread(int event_code, std::uint32_t generation) noexcept {
  PapiThreadState& state = tls_state;
  if (state.generation != generation) [[unlikely]]
    return rebuild_event_set(event_code, generation);
  if (state.failed) [[unlikely]]
    return state.last;
  long long value = 0;
  if (PAPI_read(state.event_set, &value) != PAPI_OK) [[unlikely]]
    return mark_failed(state);
  // A read-write SDE counter may go down; the contract says it never does.
  const std::uint64_t total = state.offset + static_cast<std::uint64_t>(value > 0 ? value : 0);
  if (total > state.last) state.last = total;
  return state.last;
}

void release_calling_thread_event_set() noexcept {
  PapiThreadState& state = tls_state;
  release_event_set(state);
  state.generation = 0;
}

}  // namespace detail

std::uint64_t papi_thread_failures() noexcept { return thread_failures.load(std::memory_order_relaxed); }

}  // namespace tremor::counters
