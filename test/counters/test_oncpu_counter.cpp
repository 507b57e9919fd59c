// thread_oncpu: the thread's CPU time from context-switch records must agree
// with CLOCK_THREAD_CPUTIME_ID when the thread computes, sleeps, is preempted
// by a thread sharing its core, loses records to a full buffer, and after fork.
#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "busy_work.hpp"
#include "switch_record_testing.hpp"
#include "tremor/counters/counter_source.hpp"

using tremor::counters::CounterSource;
using tremor::counters::open_counter_source;
using tremor::CounterKind;
using tremor::counters::detail::read_thread_cputime_ns;
using namespace std::chrono_literals;
using namespace tremor::counters::testing;

namespace {

constexpr std::uint64_t ns_per_ms = 1'000'000;

CounterSource oncpu_source() {
  const auto opened = open_counter_source("oncpu");
  INFO(opened.explanation);
  REQUIRE(opened.source.kind() == CounterKind::thread_oncpu);
  return opened.source;
}

// Steal time (the hypervisor ran something else on our vCPU) of one CPU,
// or of all with cpu < 0, from /proc/stat in ns; 0 where not reported.
// thread_oncpu counts it as the thread's; the kernel's thread clock does not.
std::uint64_t steal_ns(int cpu) {
  std::ifstream stat("/proc/stat");
  const std::string wanted = cpu < 0 ? "cpu" : "cpu" + std::to_string(cpu);
  std::string line;
  while (std::getline(stat, line)) {
    std::istringstream fields(line);
    std::string name;
    fields >> name;
    if (name != wanted) continue;
    std::uint64_t value = 0;
    std::uint64_t steal = 0;
    for (int column = 1; column <= 8 && (fields >> value); ++column)
      if (column == 8) steal = value;
    return steal * (1'000'000'000U / static_cast<std::uint64_t>(sysconf(_SC_CLK_TCK)));
  }
  return 0;
}

struct deltas {
  std::uint64_t oncpu = 0;
  std::uint64_t cputime = 0;
  std::uint64_t wall = 0;
  std::uint64_t steal = 0;  // of the CPUs the thread could run on, meanwhile
};

// Runs `body` on two threads pinned to the same CPU; each measures itself.
template <typename Body>
std::pair<deltas, deltas> on_one_cpu(const CounterSource& source, Body body) {
  const int cpu = first_allowed_cpu();
  deltas a;
  deltas b;
  const std::uint64_t steal_before = steal_ns(cpu);
  auto measured = [&](deltas& out) {
    pin_to(cpu);
    (void)source.read();  // opens this thread's buffer outside the interval
    const std::uint64_t o0 = source.read();
    const std::uint64_t c0 = read_thread_cputime_ns();
    const std::uint64_t w0 = wall_ns();
    body();
    out.oncpu = source.read() - o0;
    out.cputime = read_thread_cputime_ns() - c0;
    out.wall = wall_ns() - w0;
  };
  std::thread first([&] { measured(a); });
  std::thread second([&] { measured(b); });
  first.join();
  second.join();
  a.steal = b.steal = steal_ns(cpu) - steal_before;
  return {a, b};
}

// Steal time widens the upper bound only, by a tick more than was reported
// (/proc/stat counts whole ticks).
void check_agrees(const deltas& d) {
  INFO("oncpu " << d.oncpu << " ns, CLOCK_THREAD_CPUTIME_ID " << d.cputime << " ns, wall " << d.wall << " ns, steal "
                << d.steal << " ns");
  const double tolerance = 0.03 * static_cast<double>(d.cputime) + 2.0 * ns_per_ms;
  const double steal =
      d.steal == 0 ? 0.0 : static_cast<double>(d.steal) + 1e9 / static_cast<double>(sysconf(_SC_CLK_TCK));
  CHECK(static_cast<double>(d.oncpu) >= static_cast<double>(d.cputime) - tolerance);
  CHECK(static_cast<double>(d.oncpu) <= static_cast<double>(d.cputime) + tolerance + steal);
}

}  // namespace

TEST_CASE("oncpu is chosen when asked for, or refused with perf's reason", "[counters][oncpu]") {
  const auto opened = open_counter_source("oncpu");
  if (tremor::counters::detail::probe_oncpu_source().empty()) {
    CHECK(opened.source.kind() == CounterKind::thread_oncpu);
    CHECK(opened.source.name() == "thread_oncpu");
    CHECK(opened.source.unit() == "ns");
    CHECK(opened.rejections.empty());
    CHECK(opened.explanation.empty());
  } else {
    CHECK(opened.source.kind() == CounterKind::thread_cputime);
    REQUIRE(opened.rejections.size() == 1);
    CHECK_THAT(opened.rejections[0].reason, Catch::StartsWith("perf_event_open: "));
  }
}

TEST_CASE("oncpu tracks busy time and not sleep, like the thread CPU clock", "[counters][oncpu][perf]") {
  require_perf();
  const CounterSource source = oncpu_source();
  (void)source.read();
  std::uint64_t o0 = source.read();
  std::uint64_t c0 = read_thread_cputime_ns();
  std::uint64_t s0 = steal_ns(-1);
  tremor::counters::testing::spin_cpu(50 * ns_per_ms);
  deltas busy{source.read() - o0, read_thread_cputime_ns() - c0, 0, steal_ns(-1) - s0};
  CHECK(busy.cputime >= 10 * ns_per_ms);
  check_agrees(busy);

  o0 = source.read();
  c0 = read_thread_cputime_ns();
  s0 = steal_ns(-1);
  std::this_thread::sleep_for(60ms);
  const std::uint64_t slept = source.read() - o0;
  CHECK(slept < 5 * ns_per_ms);
  check_agrees({slept, read_thread_cputime_ns() - c0, 0, steal_ns(-1) - s0});
}

TEST_CASE("oncpu leaves out the time a thread sharing the core ran", "[counters][oncpu][perf][threads]") {
  require_perf();
  const CounterSource source = oncpu_source();
  // Both spin for 300 ms of wall time on one CPU: each gets about half.
  const auto [a, b] = on_one_cpu(source, [] {
    const std::uint64_t end = wall_ns() + 300 * ns_per_ms;
    volatile std::uint64_t sink = 0;
    while (wall_ns() < end) sink = sink + 1;
  });
  for (const deltas& d : {a, b}) {
    check_agrees(d);
    // Preempted for real, or the test proves nothing.
    CHECK(d.cputime < d.wall * 8 / 10);
  }
}

TEST_CASE("a full buffer re-anchors on the thread CPU clock", "[counters][oncpu][perf][threads]") {
  require_perf();
  const CounterSource source = oncpu_source();
  const std::uint64_t before = tremor::counters::oncpu_resynchronisations();
  // 8 pages hold 2048 switch records; each yield to the other thread adds two.
  const auto [a, b] = on_one_cpu(source, [] {
    for (int i = 0; i < 20000; ++i) sched_yield();
  });
  CHECK(tremor::counters::oncpu_resynchronisations() > before);
  check_agrees(a);
  check_agrees(b);
}

TEST_CASE("oncpu reads stay monotonic", "[counters][oncpu][perf]") {
  require_perf();
  const CounterSource source = oncpu_source();
  std::uint64_t previous = source.read();
  for (int i = 0; i < 200000; ++i) {
    const std::uint64_t now = source.read();
    REQUIRE(now >= previous);
    previous = now;
  }
}

TEST_CASE("a forked child measures itself, not the parent's thread", "[counters][oncpu][perf]") {
  require_perf();
  const CounterSource source = oncpu_source();
  (void)source.read();
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    // The parent spins meanwhile: the child must not see the parent's records
    // (its clock would then run at the parent's rate, not its own).
    const std::uint64_t o0 = source.read();
    const std::uint64_t c0 = read_thread_cputime_ns();
    const std::uint64_t s0 = steal_ns(-1);
    std::this_thread::sleep_for(50ms);
    tremor::counters::testing::spin_cpu(20 * ns_per_ms);
    const std::uint64_t oncpu = source.read() - o0;
    const std::uint64_t cputime = read_thread_cputime_ns() - c0;
    const std::uint64_t steal = steal_ns(-1) - s0;
    const std::uint64_t steal_slack =
        steal == 0 ? 0 : steal + 1'000'000'000U / static_cast<std::uint64_t>(sysconf(_SC_CLK_TCK));
    const bool agrees = oncpu + 3 * ns_per_ms >= cputime && oncpu <= cputime + 3 * ns_per_ms + steal_slack;
    _exit(agrees ? 0 : 1);
  }
  tremor::counters::testing::spin_cpu(100 * ns_per_ms);
  int status = 0;
  REQUIRE(waitpid(child, &status, 0) == child);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
}

TEST_CASE("oncpu is never the automatic fallback", "[counters][oncpu]") {
  CHECK(open_counter_source("NOT_AN_EVENT").source.kind() == CounterKind::thread_cputime);
  CHECK(open_counter_source("").source.kind() != CounterKind::thread_oncpu);
}

TEST_CASE("in a list, oncpu stops the list", "[counters][oncpu][perf]") {
  require_perf();
  const auto listed = open_counter_source("NOT_AN_EVENT, ONCPU, cputime");
  CHECK(listed.source.kind() == CounterKind::thread_oncpu);
  REQUIRE(listed.rejections.size() == 1);
  CHECK(listed.rejections[0].event == "NOT_AN_EVENT");
}
