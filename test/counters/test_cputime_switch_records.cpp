// thread_cputime with context-switch records: the kernel's thread clock at
// most once per clock_read_period_ns, thread_oncpu's extrapolation between.
// Checks when it is chosen, that it really reads the clock that seldom and no
// more seldom, that an anchored read is the kernel's clock, and that values
// stay monotonic when an anchor comes in below an extrapolated value.
#include <catch2/catch.hpp>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <thread>

#include "switch_record_testing.hpp"
#include "tremor/counters/counter_source.hpp"

using tremor::counters::clock_read_period_ns;
using tremor::counters::CounterSource;
using tremor::counters::open_counter_source;
using tremor::CounterKind;
using tremor::counters::switch_record_clock_reads;
using tremor::counters::detail::read_thread_cputime_ns;
using namespace std::chrono_literals;
using namespace tremor::counters::testing;

namespace {

// Sleeping longer than the period makes the thread's next read an anchor.
void outlast_period() { std::this_thread::sleep_for(std::chrono::nanoseconds(2 * clock_read_period_ns)); }

// Computing for two periods of the thread's own CPU time also makes the next
// read an anchor, and one that is the clock's value: an extrapolation can be
// ahead of the clock by at most a period (what the VM stole from it).
void compute_past_period() {
  const std::uint64_t end = read_thread_cputime_ns() + 2 * clock_read_period_ns;
  const std::uint64_t give_up = wall_ns() + 5'000 * clock_read_period_ns;
  volatile std::uint64_t sink = 0;
  while (read_thread_cputime_ns() < end && wall_ns() < give_up) sink = sink + 1;
}

}  // namespace

TEST_CASE("the CPU-time fallback uses context-switch records unless told not to", "[counters][cputime]") {
  const auto automatic = open_counter_source("NOT_AN_EVENT");
  CHECK(automatic.source.kind() == CounterKind::thread_cputime);
  CHECK(automatic.source.events().front() == "CLOCK_THREAD_CPUTIME_ID");
  if (perf_refuses()) {
    CHECK_FALSE(automatic.source.uses_switch_records());
    CHECK_THAT(automatic.switch_records_note, Catch::Contains("perf_event_open: "));
  } else {
    CHECK(automatic.source.uses_switch_records());
    CHECK(automatic.source.events() == std::vector<std::string>{"CLOCK_THREAD_CPUTIME_ID", "PERF_RECORD_SWITCH"});
    CHECK(automatic.switch_records_note.empty());
  }

  const auto oversubscribed = open_counter_source("cputime", {.switch_records = false});
  CHECK(oversubscribed.source.kind() == CounterKind::thread_cputime);
  CHECK_FALSE(oversubscribed.source.uses_switch_records());
  CHECK(oversubscribed.source.events() == std::vector<std::string>{"CLOCK_THREAD_CPUTIME_ID"});
  CHECK_THAT(oversubscribed.switch_records_note, Catch::Contains("more ranks than CPUs"));

  const auto syscall = open_counter_source("NOT_AN_EVENT, cputime_syscall, oncpu");
  CHECK(syscall.source.kind() == CounterKind::thread_cputime);
  CHECK_FALSE(syscall.source.uses_switch_records());
  CHECK(syscall.switch_records_note.empty());
  REQUIRE(syscall.rejections.size() == 1);
  CHECK(syscall.rejections[0].event == "NOT_AN_EVENT");
}

TEST_CASE("the clock is read once per period of reads, and no less often", "[counters][cputime][perf]") {
  require_perf();
  const CounterSource source = switch_record_source("cputime");
  (void)source.read();
  outlast_period();

  // Back to back: the first read anchors, the rest extrapolate.
  const std::uint64_t reads_before = switch_record_clock_reads();
  const std::uint64_t start = wall_ns();
  for (int i = 0; i < 20000; ++i) (void)source.read();
  const std::uint64_t elapsed = wall_ns() - start;
  const std::uint64_t back_to_back = switch_record_clock_reads() - reads_before;
  INFO("20000 reads in " << elapsed << " ns read the clock " << back_to_back << " times");
  CHECK(back_to_back >= 1);
  CHECK(back_to_back <= 2 + elapsed / clock_read_period_ns);

  // Spaced beyond the period: every read is the clock.
  const std::uint64_t spaced_before = switch_record_clock_reads();
  for (int i = 0; i < 5; ++i) {
    outlast_period();
    (void)source.read();
  }
  CHECK(switch_record_clock_reads() - spaced_before == 5);
}

TEST_CASE("a read after the period is the kernel's thread clock", "[counters][cputime][perf]") {
  require_perf();
  const CounterSource source = switch_record_source("cputime");
  (void)source.read();
  compute_past_period();
  const std::uint64_t a0 = source.read();
  const std::uint64_t c0 = read_thread_cputime_ns();
  compute_past_period();
  const std::uint64_t a1 = source.read();
  const std::uint64_t c1 = read_thread_cputime_ns();
  const auto assisted = static_cast<double>(a1 - a0);
  const auto clock = static_cast<double>(c1 - c0);
  INFO("source " << assisted << " ns, CLOCK_THREAD_CPUTIME_ID " << clock << " ns");
  CHECK(clock >= 1e6);
  // Only the few hundred ns between each source read and its clock read.
  CHECK(std::abs(assisted - clock) <= 20e3);
}

TEST_CASE("threads sharing a core read their own CPU time within a period", "[counters][cputime][threads][perf]") {
  require_perf();
  const CounterSource source = switch_record_source("cputime");
  const int cpu = first_allowed_cpu();
  struct measured {
    std::uint64_t source = 0, clock = 0, wall = 0;
    bool monotonic = true;
  };
  measured a;
  measured b;
  auto run = [&](measured& out) {
    pin_to(cpu);
    std::uint64_t previous = source.read();
    const std::uint64_t s0 = previous;
    const std::uint64_t c0 = read_thread_cputime_ns();
    const std::uint64_t w0 = wall_ns();
    // A read every ~100 us of wall time for 300 ms: most extrapolate, and the
    // thread is switched out between many of them.
    volatile std::uint64_t sink = 0;
    for (std::uint64_t next = w0; wall_ns() < w0 + 300 * clock_read_period_ns; next += 100'000) {
      while (wall_ns() < next) sink = sink + 1;
      const std::uint64_t now = source.read();
      out.monotonic = out.monotonic && now >= previous;
      previous = now;
    }
    // The last read may be an extrapolation; read once more after a period.
    compute_past_period();
    out.source = source.read() - s0;
    out.clock = read_thread_cputime_ns() - c0;
    out.wall = wall_ns() - w0;
  };
  std::thread first([&] { run(a); });
  std::thread second([&] { run(b); });
  first.join();
  second.join();
  for (const measured& m : {a, b}) {
    INFO("source " << m.source << " ns, CLOCK_THREAD_CPUTIME_ID " << m.clock << " ns, wall " << m.wall << " ns");
    CHECK(m.monotonic);
    CHECK(m.clock < m.wall * 8 / 10);  // preempted for real, or this proves nothing
    CHECK(static_cast<double>(m.source) == Approx(static_cast<double>(m.clock)).margin(20e3));
  }
}
