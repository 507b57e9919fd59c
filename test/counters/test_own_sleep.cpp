// The context-switch records tell a thread's own blocking (a sleep, a join:
// its switch-out left it waiting for an event) from preemption (switched out
// while runnable). The recorder leaves only the own blocking out of a
// segment's off-CPU time, so preemption counted as sleep would hide
// interference, and a sleep counted as preemption would invent it.
#include <catch2/catch.hpp>

#include <chrono>
#include <cstdint>
#include <thread>

#include "busy_work.hpp"
#include "switch_record_testing.hpp"
#include "tremor/counters/counter_source.hpp"

using tremor::counters::CounterSource;
using tremor::counters::open_counter_source;
using tremor::counters::detail::read_thread_cputime_ns;
using namespace std::chrono_literals;
using namespace tremor::counters::testing;

namespace {

constexpr std::uint64_t ns_per_ms = 1'000'000;

// The calling thread's own blocking since the last take, up to a read made now.
std::uint64_t slept_since_last_take(const CounterSource& source) {
  REQUIRE(source.tells_own_blocking());
  (void)source.read();
  return CounterSource::take_slept();
}

}  // namespace

TEST_CASE("a thread's sleep and its wait for a joined thread are its own blocking", "[counters][own_sleep][perf]") {
  require_perf();
  for (const char* spec : {"cputime", "oncpu"}) {
    INFO(spec);
    const CounterSource source = switch_record_source(spec);
    (void)slept_since_last_take(source);
    const std::uint64_t wall_before = wall_ns();
    std::this_thread::sleep_for(40ms);
    std::thread helper([] { spin_cpu(40 * ns_per_ms); });  // the helper's CPU time, 40 ms
    helper.join();
    const std::uint64_t slept = slept_since_last_take(source);
    const std::uint64_t wall = wall_ns() - wall_before;
    INFO("slept " << slept << " ns of " << wall << " ns");
    CHECK(slept >= 75 * ns_per_ms);
    CHECK(slept <= wall);
  }
}

TEST_CASE("a preempted thread did not block of its own accord", "[counters][own_sleep][perf][threads]") {
  require_perf();
  const CounterSource source = switch_record_source("cputime");
  const int cpu = first_allowed_cpu();
  struct Measured {
    std::uint64_t slept = 0;
    std::uint64_t off_cpu = 0;
  };
  Measured a;
  Measured b;
  // Two threads spin for 300 ms of wall time on one CPU: each is preempted
  // about half of the time and never blocks.
  auto spin = [&](Measured& out) {
    pin_to(cpu);
    (void)slept_since_last_take(source);
    const std::uint64_t cpu_before = read_thread_cputime_ns();
    const std::uint64_t wall_before = wall_ns();
    const std::uint64_t end = wall_before + 300 * ns_per_ms;
    volatile std::uint64_t sink = 0;
    while (wall_ns() < end) sink = sink + 1;
    out.slept = slept_since_last_take(source);
    out.off_cpu = (wall_ns() - wall_before) - (read_thread_cputime_ns() - cpu_before);
  };
  std::thread first([&] { spin(a); });
  std::thread second([&] { spin(b); });
  first.join();
  second.join();
  for (const Measured& m : {a, b}) {
    INFO("slept " << m.slept << " ns, off the CPU " << m.off_cpu << " ns");
    CHECK(m.off_cpu >= 60 * ns_per_ms);  // preempted for real, or the case proves nothing
    CHECK(m.slept <= m.off_cpu / 10 + 2 * ns_per_ms);
  }
}

TEST_CASE("without context-switch records the own blocking is not told apart", "[counters][own_sleep]") {
  CHECK_FALSE(open_counter_source("cputime_syscall").source.tells_own_blocking());
  CHECK_FALSE(open_counter_source("cputime", {.switch_records = false}).source.tells_own_blocking());
  if (!perf_refuses()) CHECK(open_counter_source("cputime").source.tells_own_blocking());
}
