// Segments the work clustering strands just past a group's edge are modelled
// with that group by the primary estimate (estimators/analysis/src/stranded_segments.cpp);
// the paper's 4·MAD figure keeps its own groups.
#include <catch2/catch.hpp>

#include "synthetic_run.hpp"
#include "test_helpers.hpp"
#include "tremor/analysis/analysis.hpp"

using namespace tremor;
using namespace tremor::analysis;
using tremor::test::SyntheticGroup;
using tremor::test::SyntheticSpec;
using tremor::test::quick_parameters;

namespace {

constexpr std::size_t kDelayed = 40;
constexpr double kDelayS = 0.005;

// One group of 100 segments of 10 ms; segment kDelayed is 5 ms late and does
// `relative_work` times the others' work. The default clustering threshold
// (0.1) puts it in a cluster of its own unless its work is within 10 %.
RunData run_with_work(double relative_work, bool cpu_time) {
  SyntheticSpec spec;
  const double work = cpu_time ? 1e6 : 1e8;  // 1 ms of CPU time, or 10^8 instructions
  spec.groups = {SyntheticGroup{work, 0.010, 100}};
  spec.delays = {{kDelayed, kDelayS, 1}};
  if (cpu_time) spec.counter_source = tremor::CounterKind::thread_cputime;
  RunData run = tremor::test::synthetic_run(spec);
  if (cpu_time) run.meta.counter_unit = "ns";
  run.segments.work[kDelayed] = relative_work * work;
  return run;
}

}  // namespace

TEST_CASE("a segment stranded just past its group's work edge is charged as its group", "[analysis][primary]") {
  for (const bool cpu_time : {false, true}) {
    INFO("CPU-time counter: " << cpu_time);
    const RunData run = run_with_work(0.87, cpu_time);  // 15 % below the group: its own cluster
    const RunAnalysis result = analyze_run(run, quick_parameters());
    REQUIRE(result.estimate_possible);
    CHECK(result.primary.segment_primary_group[kDelayed] >= 0);
    CHECK(result.primary.segment_lost_s[kDelayed] == Approx(kDelayS).epsilon(0.05));
    // The paper's rule sees it in no usable group.
    CHECK(result.segment_mad4_impact_s[kDelayed] == 0.0);
  }
}

TEST_CASE("a segment far from every group stays apart", "[analysis][primary]") {
  const RunData run = run_with_work(0.6, true);  // 67 % below: beyond two thresholds
  const RunAnalysis result = analyze_run(run, quick_parameters());
  REQUIRE(result.estimate_possible);
  CHECK(result.primary.segment_primary_group[kDelayed] == -1);
  CHECK(result.primary.segment_lost_s[kDelayed] < 0.1 * kDelayS);  // nothing measured on it
}

TEST_CASE("a heavier stranded segment joins only where its extra CPU time is taken off", "[analysis][primary]") {
  // 15 % more work: with instructions counted, more work is not told from a
  // delay; with CPU time, the extra 0.15 ms is taken off its duration.
  const RunAnalysis instructions = analyze_run(run_with_work(1.15, false), quick_parameters());
  CHECK(instructions.primary.segment_primary_group[kDelayed] == -1);
  const RunAnalysis cpu_time = analyze_run(run_with_work(1.15, true), quick_parameters());
  CHECK(cpu_time.primary.segment_primary_group[kDelayed] >= 0);
  CHECK(cpu_time.primary.segment_lost_s[kDelayed] == Approx(kDelayS - 0.15e-3).epsilon(0.05));
}
