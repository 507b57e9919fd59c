// The thread CPU-time fallback: when it is chosen, and that it measures the
// calling thread's CPU time (thread_oncpu, asked for by name only, has
// test_oncpu_counter.cpp).
#include <catch2/catch.hpp>

#include <chrono>
#include <thread>

#include "busy_work.hpp"
#include "tremor/counters/counter_source.hpp"

using tremor::counters::CounterSource;
using tremor::counters::open_counter_source;
using tremor::CounterKind;
using tremor::counters::testing::busy_and_sleeping_thread_deltas;
using tremor::counters::testing::spin_cpu;
using tremor::counters::testing::ThreadDeltas;
using namespace std::chrono_literals;

namespace {

constexpr std::uint64_t ns_per_ms = 1'000'000;

}  // namespace

TEST_CASE("a non-existent event falls back to thread CPU time with a reason", "[counters][fallback]") {
  const auto opened = open_counter_source("PAPI_NO_SUCH_EVENT_ANYWHERE");
  CHECK(opened.source.kind() == CounterKind::thread_cputime);
  CHECK(opened.source.name() == "thread_cputime");
  CHECK(opened.source.unit() == "ns");
  CHECK(opened.source.unit() == tremor::counter_unit(opened.source.kind()));  // the enum carries the unit
  CHECK(opened.source.events().front() == "CLOCK_THREAD_CPUTIME_ID");
  REQUIRE(opened.rejections.size() == 1);
  CHECK(opened.rejections[0].event == "PAPI_NO_SUCH_EVENT_ANYWHERE");
  CHECK_THAT(opened.rejections[0].reason, Catch::StartsWith("PAPI_event_name_to_code: "));
  CHECK_THAT(opened.explanation, Catch::Contains("PAPI_NO_SUCH_EVENT_ANYWHERE"));
  CHECK_THAT(opened.explanation, Catch::Contains("thread_cputime"));
}

TEST_CASE("the default spec tries PAPI_FP_INS then PAPI_TOT_INS", "[counters][fallback]") {
  const auto opened = open_counter_source("");
  if (opened.source.kind() == CounterKind::thread_cputime) {
    // The build VM has no PMU: both presets are rejected, in order.
    REQUIRE(opened.rejections.size() == 2);
    CHECK(opened.rejections[0].event == "PAPI_FP_INS");
    CHECK(opened.rejections[1].event == "PAPI_TOT_INS");
    for (const auto& rejection : opened.rejections) CHECK_THAT(rejection.reason, Catch::StartsWith("PAPI_"));
    CHECK_FALSE(opened.explanation.empty());
  } else {
    WARN("this machine has a PMU: " << opened.source.events().front());
    CHECK((opened.source.events().front() == "PAPI_FP_INS" || opened.source.events().front() == "PAPI_TOT_INS"));
  }
}

TEST_CASE("cputime forces the fallback and stops the list", "[counters][fallback]") {
  const auto forced = open_counter_source("cputime");
  CHECK(forced.source.kind() == CounterKind::thread_cputime);
  CHECK(forced.rejections.empty());
  CHECK(forced.explanation.empty());

  const auto in_list = open_counter_source("NOT_AN_EVENT, CPUTIME, sde:::Anything::x");
  CHECK(in_list.source.kind() == CounterKind::thread_cputime);
  REQUIRE(in_list.rejections.size() == 1);
  CHECK(in_list.rejections[0].event == "NOT_AN_EVENT");
}

TEST_CASE("thread CPU time reads are monotonic", "[counters][fallback]") {
  const CounterSource source = open_counter_source(GENERATE(as<std::string>{}, "cputime", "cputime_syscall")).source;
  std::uint64_t previous = source.read();
  CHECK(previous > 0);
  for (int i = 0; i < 10000; ++i) {
    const std::uint64_t now = source.read();
    REQUIRE(now >= previous);
    previous = now;
  }
}

TEST_CASE("thread CPU time tracks busy time, not sleep", "[counters][fallback]") {
  const CounterSource source = open_counter_source(GENERATE(as<std::string>{}, "cputime", "cputime_syscall")).source;
  const std::uint64_t before_busy = source.read();
  spin_cpu(20 * ns_per_ms);
  const std::uint64_t busy_delta = source.read() - before_busy;
  CHECK(busy_delta >= 10 * ns_per_ms);
  CHECK(busy_delta <= 200 * ns_per_ms);

  const std::uint64_t before_sleep = source.read();
  std::this_thread::sleep_for(50ms);
  CHECK(source.read() - before_sleep < 5 * ns_per_ms);
}

TEST_CASE("each thread reads its own CPU time", "[counters][fallback][threads]") {
  const CounterSource source = open_counter_source(GENERATE(as<std::string>{}, "cputime", "cputime_syscall")).source;
  const std::uint64_t main_before = source.read();
  const ThreadDeltas deltas = busy_and_sleeping_thread_deltas(source);
  const std::uint64_t main_delta = source.read() - main_before;
  CHECK(deltas.busy >= 10 * ns_per_ms);
  CHECK(deltas.busy <= 200 * ns_per_ms);
  CHECK(deltas.sleeping < 5 * ns_per_ms);
  CHECK(main_delta < 5 * ns_per_ms);  // blocked in join: the busy thread's time is not ours
}

TEST_CASE("the counter kind carries its unit: ns for CPU time, its event's for PAPI", "[counters]") {
  // Known wrong: a unit that differs from what the CPU-time sources write in
  // the run file ("ns"), or one fixed for PAPI, whose events differ.
  for (const CounterKind kind : tremor::kCounterKinds) {
    INFO(tremor::to_string(kind));
    CHECK(tremor::counter_unit(kind) == (tremor::measures_cpu_time(kind) ? "ns" : ""));
    CHECK(tremor::counter_kind_named(tremor::to_string(kind)) == kind);
  }
  CHECK(CounterSource{}.unit() == tremor::counter_unit(CounterKind::thread_cputime));
}
