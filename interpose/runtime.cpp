#include "runtime.hpp"

#include <mutex>
#include <new>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

namespace tremor::interpose {

std::atomic<bool> g_recording{false};
extern "C" {
constinit bool tremor_forward_only = false;
}
bool g_use_tsc = false;
constinit thread_local ThreadState* t_state __attribute__((tls_model("initial-exec"))) = nullptr;
std::uint64_t g_long_call_ticks = ~std::uint64_t{0};
std::uint64_t g_refresh_ticks = ~std::uint64_t{0};
std::uint64_t g_boundary_busy_ticks = 0;

std::atomic<ThreadState*> g_threads{nullptr};

namespace {
double g_seconds_per_tick = 1e-9;

bool has_invariant_tsc() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (!__get_cpuid(0x80000000U, &eax, &ebx, &ecx, &edx) || eax < 0x80000007U) return false;
  __get_cpuid(0x80000007U, &eax, &ebx, &ecx, &edx);
  return (edx & (1U << 8)) != 0;
#else
  return false;
#endif
}
}  // namespace

ThreadState* register_current_thread() noexcept {
  // States are never freed: a thread's counts must survive the thread so the
  // segment it contributed to is complete. One state per thread ever created.
  auto* state = new (std::nothrow) ThreadState();
  if (state == nullptr) return nullptr;
  ThreadState* head = g_threads.load(std::memory_order_acquire);
  do {
    state->next = head;
  } while (!g_threads.compare_exchange_weak(head, state, std::memory_order_release, std::memory_order_acquire));
  t_state = state;
  return state;
}

double seconds_per_tick() noexcept { return g_seconds_per_tick; }

void calibrate_ticks() noexcept {
  g_use_tsc = has_invariant_tsc();
  if (!g_use_tsc) {
    g_seconds_per_tick = 1e-9;
    return;
  }
#if defined(__x86_64__) || defined(__i386__)
  // 2 ms against CLOCK_MONOTONIC: the ratio is good to ~1e-6, and
  // preemption does not bias it since both clocks are wall clocks.
  const std::uint64_t ns0 = monotonic_ns();
  const std::uint64_t tsc0 = __rdtsc();
  std::uint64_t ns1 = ns0;
  while (ns1 - ns0 < 2000000ULL) ns1 = monotonic_ns();
  const std::uint64_t tsc1 = __rdtsc();
  if (tsc1 > tsc0) {
    g_seconds_per_tick = static_cast<double>(ns1 - ns0) * 1e-9 / static_cast<double>(tsc1 - tsc0);
  } else {
    g_use_tsc = false;
    g_seconds_per_tick = 1e-9;
  }
#endif
}

}  // namespace tremor::interpose
