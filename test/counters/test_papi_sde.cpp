// The PAPI path, for real, through PAPI's software-defined events: this
// program links libsde and registers its own counters, so PAPI's sde
// component is enabled here even on a machine without a PMU.
#include <catch2/catch.hpp>

#include <sde_lib.h>

#include <atomic>
#include <ctime>
#include <latch>
#include <thread>
#include <vector>

#include "busy_work.hpp"
#include "tremor/counters/counter_source.hpp"

using tremor::counters::CounterSource;
using tremor::counters::open_counter_source;
using tremor::CounterKind;
using tremor::counters::testing::busy_and_sleeping_thread_deltas;
using tremor::counters::testing::ThreadDeltas;

namespace {

// Counters the "library" TremorCountersTest exposes; PAPI reads them directly.
long long work_counter = 0;
long long other_counter = 0;

// The reading thread's own CPU time, ns: PAPI calls it in the thread that reads.
long long reading_thread_cpu_ns(void*) {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return static_cast<long long>(now.tv_sec) * 1'000'000'000LL + now.tv_nsec;
}

void register_test_counters() {
  static const bool registered = [] {
    papi_handle_t handle = papi_sde_init("TremorCountersTest");
    papi_sde_register_counter(handle, "work", PAPI_SDE_RO | PAPI_SDE_DELTA, PAPI_SDE_long_long, &work_counter);
    papi_sde_register_counter(handle, "other", PAPI_SDE_RO | PAPI_SDE_DELTA, PAPI_SDE_long_long, &other_counter);
    papi_sde_register_counter_cb(handle, "thread_cpu_ns", PAPI_SDE_RO | PAPI_SDE_DELTA, PAPI_SDE_long_long,
                                 &reading_thread_cpu_ns, nullptr);
    return true;
  }();
  (void)registered;
}

constexpr const char* work_event = "sde:::TremorCountersTest::work";
constexpr const char* other_event = "sde:::TremorCountersTest::other";
constexpr const char* thread_cpu_event = "sde:::TremorCountersTest::thread_cpu_ns";

}  // namespace

TEST_CASE("an SDE counter is read back with exact deltas", "[counters][papi][sde]") {
  register_test_counters();
  const auto opened = open_counter_source(work_event);
  REQUIRE(opened.source.kind() == CounterKind::papi);
  CHECK(opened.source.name() == "papi");
  CHECK(opened.source.events() == std::vector<std::string>{work_event});
  CHECK_FALSE(opened.source.unit().empty());
  CHECK(opened.rejections.empty());
  CHECK(opened.explanation.empty());

  std::uint64_t before = opened.source.read();
  for (const long long phase : {1000LL, 2500LL, 7LL, 0LL, 123456LL}) {
    work_counter += phase;
    const std::uint64_t after = opened.source.read();
    CHECK(after - before == static_cast<std::uint64_t>(phase));
    before = after;
  }
}

TEST_CASE("events are tried in order and the first usable one wins", "[counters][papi][sde]") {
  register_test_counters();
  const auto opened = open_counter_source(std::string("PAPI_NO_SUCH_EVENT, ") + other_event + "," + work_event);
  REQUIRE(opened.source.kind() == CounterKind::papi);
  CHECK(opened.source.events() == std::vector<std::string>{other_event});
  REQUIRE(opened.rejections.size() == 1);
  CHECK(opened.rejections[0].event == "PAPI_NO_SUCH_EVENT");
  CHECK_THAT(opened.explanation, Catch::Contains(other_event));

  const std::uint64_t before = opened.source.read();
  other_counter += 42;
  work_counter += 1000;  // not the chosen event
  CHECK(opened.source.read() - before == 42);
}

TEST_CASE("threads build their own event sets lazily and concurrently", "[counters][papi][sde][threads]") {
  register_test_counters();
  const CounterSource source = open_counter_source(work_event).source;
  REQUIRE(source.kind() == CounterKind::papi);
  constexpr int thread_count = 4;
  std::latch first_reads_done(thread_count + 1);
  std::latch counter_advanced(1);
  std::vector<std::uint64_t> deltas(thread_count, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < thread_count; ++t) {
    threads.emplace_back([&, t] {
      const std::uint64_t before = source.read();  // builds this thread's event set
      first_reads_done.arrive_and_wait();
      counter_advanced.wait();
      deltas[static_cast<std::size_t>(t)] = source.read() - before;
    });
  }
  first_reads_done.arrive_and_wait();
  work_counter += 5000;
  counter_advanced.count_down();
  for (auto& thread : threads) thread.join();
  for (const std::uint64_t delta : deltas) CHECK(delta == 5000);
  CHECK(tremor::counters::papi_thread_failures() == 0);
}

// perf::TASK-CLOCK's per-thread counting (below) with PAPI's SDE standing in
// for perf: a counter of the reading thread's CPU time, read through Tremor's
// per-thread event sets; each thread must see only its own time.
TEST_CASE("an SDE counter of the reading thread's CPU time counts per thread", "[counters][papi][sde][threads]") {
  register_test_counters();
  const auto opened = open_counter_source(thread_cpu_event);
  REQUIRE(opened.source.kind() == CounterKind::papi);
  const ThreadDeltas deltas = busy_and_sleeping_thread_deltas(opened.source);
  CHECK(deltas.busy >= 10'000'000);
  CHECK(deltas.busy <= 200'000'000);
  CHECK(deltas.sleeping < 5'000'000);
}

TEST_CASE("switching sources on a thread keeps its reads monotonic", "[counters][papi][sde]") {
  register_test_counters();
  const CounterSource work = open_counter_source(work_event).source;
  const CounterSource other = open_counter_source(other_event).source;
  REQUIRE(work.kind() == CounterKind::papi);
  REQUIRE(other.kind() == CounterKind::papi);
  work_counter += 10;
  const std::uint64_t first = work.read();
  const std::uint64_t second = other.read();  // rebuilds this thread's event set
  work_counter += 30;
  const std::uint64_t third = work.read();  // and again
  CHECK(second >= first);
  CHECK(third >= second);
  work_counter += 5;
  CHECK(work.read() - third == 5);
}

// Where PAPI's perf_event component is disabled (no PMU libpfm4 knows) CTest
// reports this case skipped (perf_required_main.cpp); the SDE case above
// checks the same per-thread reading on every machine.
TEST_CASE("a perf_event software event counts per thread where it starts", "[counters][papi][threads][papi_perf]") {
  const auto opened = open_counter_source("perf::TASK-CLOCK");
  INFO(opened.explanation);
  REQUIRE(opened.source.kind() == CounterKind::papi);
  const ThreadDeltas deltas = busy_and_sleeping_thread_deltas(opened.source);
  // TASK-CLOCK counts ns of the thread's CPU time.
  CHECK(deltas.busy >= 10'000'000);
  CHECK(deltas.busy <= 200'000'000);
  CHECK(deltas.sleeping < 5'000'000);
}
