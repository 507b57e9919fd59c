// Catch2's main for the counter tests, with the skip rule of the cases that
// need a capability this machine may lack: CTest runs each of them alone
// with TREMOR_TEST_NEEDS set, and where the capability is missing the case
// is reported skipped (exit 77, CTest's SKIP_RETURN_CODE) with one line
// `SKIPPED: capability <name>: <reason>` (test/common/capabilities.py lists
// the names), instead of passing without checking anything.
//   [perf]       perf's context-switch records (perf_event_open): no-perf-switch-records
//   [papi_perf]  PAPI's perf_event component (a PMU libpfm4 knows): no-pmu
// Catch2's implementation is the shared one (test/common/catch_session.cpp).
#include "../common/catch_session.hpp"

#include <cstdio>
#include <cstdlib>
#include <string>

#include "tremor/counters/counter_source.hpp"

namespace {

// Why the capability named by TREMOR_TEST_NEEDS is missing; empty when it is there.
std::string missing_capability(const std::string& needs) {
  if (needs == "perf") {
    const std::string reason = tremor::counters::detail::probe_oncpu_source();
    return reason.empty() ? "" : "perf_event_open refused: " + reason;
  }
  if (needs == "papi_perf") {
    const auto opened = tremor::counters::open_counter_source("perf::TASK-CLOCK");
    return opened.source.kind() == tremor::CounterKind::papi
               ? ""
               : "PAPI's perf_event component cannot count perf::TASK-CLOCK here: " + opened.explanation;
  }
  return "";
}

}  // namespace

int main(int argc, char* argv[]) {
  if (const char* needs = std::getenv("TREMOR_TEST_NEEDS")) {
    const std::string reason = missing_capability(needs);
    if (!reason.empty()) {
      const char* capability = std::string(needs) == "perf" ? "no-perf-switch-records" : "no-pmu";
      std::printf("SKIPPED: capability %s: %s\n", capability, reason.c_str());
      return 77;
    }
  }
  return run_catch_session(argc, argv);
}
