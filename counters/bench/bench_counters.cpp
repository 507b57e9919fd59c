// Cost of one read of each computation counter source on this machine.
// Run by hand: ./bench_counters  (not part of CTest). PAPI events that cannot
// start here are reported as skipped with PAPI's reason.
#include <benchmark/benchmark.h>
#include <papi.h>
#include <sde_lib.h>

#include <ctime>
#include <string>
#include <vector>

#include "tremor/counters/counter_source.hpp"

namespace {

long long sde_work = 0;  // the benchmark's own software-defined counter
constexpr const char* sde_event = "sde:::TremorBench::work";
const std::vector<std::string> perf_events{"PAPI_TOT_INS",    "PAPI_TOT_CYC",
                                           "PAPI_L1_DCM",     "perf::TASK-CLOCK",
                                           "perf::CPU-CLOCK", "perf::PERF_COUNT_SW_CONTEXT_SWITCHES"};

void read_clock(benchmark::State& state, clockid_t clock) {
  timespec now{};
  for (auto _ : state) {
    clock_gettime(clock, &now);
    benchmark::DoNotOptimize(now);
  }
}

void BM_clock_monotonic(benchmark::State& state) { read_clock(state, CLOCK_MONOTONIC); }
void BM_clock_thread_cputime(benchmark::State& state) { read_clock(state, CLOCK_THREAD_CPUTIME_ID); }

// PAPI_read on a bare event set, the floor under the wrapper.
void BM_papi_read(benchmark::State& state, const std::string& event) {
  if (PAPI_is_initialized() == PAPI_NOT_INITED) (void)tremor::counters::open_counter_source(sde_event);
  int event_set = PAPI_NULL;
  int rc = PAPI_create_eventset(&event_set);
  if (rc == PAPI_OK) rc = PAPI_add_named_event(event_set, event.c_str());
  if (rc == PAPI_OK) rc = PAPI_start(event_set);
  if (rc != PAPI_OK) {
    state.SkipWithError(("does not start: " + std::string(PAPI_strerror(rc))).c_str());
    for (auto _ : state) {
    }
  } else {
    long long value = 0;
    for (auto _ : state) {
      PAPI_read(event_set, &value);
      benchmark::DoNotOptimize(value);
    }
    PAPI_stop(event_set, &value);
  }
  PAPI_cleanup_eventset(event_set);
  PAPI_destroy_eventset(&event_set);
}

// CounterSource::read(), with the source the spec opens.
void BM_source_read(benchmark::State& state, const std::string& spec) {
  const auto opened = tremor::counters::open_counter_source(spec);
  const bool wanted = spec.starts_with("cputime") ? opened.source.kind() == tremor::CounterKind::thread_cputime
                      : spec == "oncpu"           ? opened.source.kind() == tremor::CounterKind::thread_oncpu
                                                  : opened.source.kind() == tremor::CounterKind::papi;
  if (!wanted) {
    state.SkipWithError(opened.explanation.c_str());
    for (auto _ : state) {
    }
    return;
  }
  for (auto _ : state) benchmark::DoNotOptimize(opened.source.read());
  std::string label(opened.source.name());
  for (const std::string& event : opened.source.events()) label += " " + event;
  state.SetLabel(label);
}

void register_benchmarks() {
  papi_handle_t library = papi_sde_init("TremorBench");
  papi_sde_register_counter(library, "work", PAPI_SDE_RO | PAPI_SDE_DELTA, PAPI_SDE_long_long, &sde_work);

  benchmark::RegisterBenchmark("clock_gettime/CLOCK_MONOTONIC", BM_clock_monotonic);
  benchmark::RegisterBenchmark("clock_gettime/CLOCK_THREAD_CPUTIME_ID", BM_clock_thread_cputime);
  benchmark::RegisterBenchmark(("PAPI_read/" + std::string(sde_event)).c_str(), BM_papi_read, std::string(sde_event));
  for (const std::string& event : perf_events)
    benchmark::RegisterBenchmark(("PAPI_read/" + event).c_str(), BM_papi_read, event);
  benchmark::RegisterBenchmark("source.read/cputime", BM_source_read, std::string("cputime"));
  benchmark::RegisterBenchmark("source.read/cputime_syscall", BM_source_read, std::string("cputime_syscall"));
  benchmark::RegisterBenchmark("source.read/oncpu", BM_source_read, std::string("oncpu"));
  benchmark::RegisterBenchmark(("source.read/" + std::string(sde_event)).c_str(), BM_source_read,
                               std::string(sde_event));
  for (const std::string& event : perf_events)
    benchmark::RegisterBenchmark(("source.read/" + event).c_str(), BM_source_read, event);
}

}  // namespace

int main(int argc, char** argv) {
  register_benchmarks();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
