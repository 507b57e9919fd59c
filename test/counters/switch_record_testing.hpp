// Helpers for the tests of the sources that read perf context-switch records
// (thread_oncpu, thread_cputime between clock reads).
#pragma once

#include <catch2/catch.hpp>

#include <pthread.h>
#include <sched.h>

#include <chrono>
#include <cstdint>
#include <string>

#include "tremor/counters/counter_source.hpp"

namespace tremor::counters::testing {

inline std::uint64_t wall_ns() {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count());
}

// Where perf refuses the event (containers, perf_event_paranoid 3 without
// CAP_PERFMON) the records cannot be tested; the selection tests check the
// refusal instead. The cases that need the records are tagged [perf]: CTest
// runs each alone with TREMOR_TEST_NEEDS=perf, and perf_required_main.cpp
// reports them skipped, with perf's reason, where perf refuses.
inline bool perf_refuses() { return !detail::probe_oncpu_source().empty(); }

// In a [perf] case: fails with perf's reason where the records are refused
// (the case was run outside CTest, which would have skipped it).
inline void require_perf() {
  const std::string reason = detail::probe_oncpu_source();
  if (!reason.empty()) FAIL("context-switch records unavailable here (run it through CTest to skip): " << reason);
}

// The source `spec` opens, which must read context-switch records (the case
// fails where it does not).
inline CounterSource switch_record_source(const char* spec) {
  const auto opened = open_counter_source(spec);
  INFO(opened.explanation << opened.switch_records_note);
  REQUIRE(opened.source.uses_switch_records());
  return opened.source;
}

// Pins the calling thread to one CPU the process may use.
inline void pin_to(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  REQUIRE(pthread_setaffinity_np(pthread_self(), sizeof set, &set) == 0);
}

inline int first_allowed_cpu() {
  cpu_set_t set;
  CPU_ZERO(&set);
  sched_getaffinity(0, sizeof set, &set);
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
    if (CPU_ISSET(cpu, &set)) return cpu;
  return 0;
}

}  // namespace tremor::counters::testing
