// Each source of measured evidence of the primary model alone
// (estimators/analysis/src/primary/evidence.hpp), and the one place they meet.
#include <catch2/catch.hpp>
#include <numeric>
#include <vector>

#include "measured_cells_fixtures.hpp"
#include "primary/evidence.hpp"

using namespace tremor;
using namespace tremor::analysis;
using namespace tremor::analysis::detail;
using namespace tremor::test::measured;

namespace {

// One model group holding every segment of the run (none warm-up).
std::vector<PrimaryGroup> one_group(std::size_t n) {
  PrimaryGroup group;
  group.members.resize(n);
  std::iota(group.members.begin(), group.members.end(), std::size_t{0});
  return {group};
}

double sum(const std::vector<double>& values) { return std::accumulate(values.begin(), values.end(), 0.0); }

}  // namespace

TEST_CASE("rank evidence: a rank off the CPU on the critical path, less its slack", "[evidence]") {
  RunData run = cputime_run({}, 0.0);
  // Rank 1 is off the CPU 2 ms in even segments and last to arrive; rank 0
  // is off 3 ms in every segment while it waits for the others (slack).
  set_cells(run, Quantized::off_cpu_time, [](std::size_t r, std::size_t s) {
    if (r == 1 && s % 2 == 0) return 0.002;
    return r == 0 ? 0.003 : 0.0;
  });
  set_cells(run, Quantized::wait_time, [](std::size_t r, std::size_t) { return r == 0 ? 0.003 + 2e-6 : 2e-6; });
  for (double& wait : run.segments.late_wait_s) wait = 2e-6;
  const std::vector<PrimaryGroup> groups = one_group(run.segments.size());
  const std::vector<double> intrinsic{0.010};
  const std::vector<std::int32_t> membership(run.segments.size(), 0);
  const EvidenceInputs inputs{run, groups, intrinsic, {}, membership, true, false, false, 5};
  MeasuredEvidence evidence;
  rank_evidence(inputs, std::vector<std::uint8_t>(run.detail.ranks.size(), 0), evidence);
  REQUIRE(evidence.rank_s.size() == 200);
  CHECK(evidence.rank_s[0] == Approx(0.002).epsilon(0.01));
  CHECK(evidence.rank_s[1] == 0.0);  // rank 0's 3 ms off the CPU were all slack
  CHECK(sum(evidence.rank_s) == Approx(100 * 0.002).epsilon(0.01));
  // Without off-CPU time measured (a PAPI counter), no rank evidence.
  const EvidenceInputs unmeasured{run, groups, intrinsic, {}, membership, false, false, false, 5};
  MeasuredEvidence none;
  rank_evidence(unmeasured, {}, none);
  CHECK(sum(none.rank_s) == 0.0);
}

TEST_CASE("collective evidence: the least wait beyond the collective's latency", "[evidence]") {
  RunData run = cputime_run({}, 0.0);
  for (std::size_t s = 0; s < 200; ++s) run.segments.late_wait_s[s] = (s % 4 == 0 ? 0.001 : 0.0) + 5e-6;
  const std::vector<PrimaryGroup> groups = one_group(run.segments.size());
  const std::vector<double> intrinsic{0.010};
  const std::vector<std::int32_t> membership(run.segments.size(), 0);
  const EvidenceInputs inputs{run, groups, intrinsic, {}, membership, true, false, false, 5};
  double total = 0.0;
  double variance = 0.0;
  const std::vector<double> evidence = collective_evidence(inputs, &total, &variance);
  CHECK(evidence[0] == Approx(0.001).epsilon(0.01));
  CHECK(evidence[1] == 0.0);
  CHECK(total == Approx(50 * 0.001).epsilon(0.01));
  CHECK(variance >= 0.0);
}

TEST_CASE("foreign CPU evidence: what another process took on a node whose ranks take turns", "[evidence]") {
  RunData run = taking_turns_run();
  const std::vector<double> clean = run.segments.duration_s;
  for (std::size_t s = 50; s < 150; ++s) run.segments.duration_s[s] = 1.25 * clean[s];
  set_turns(run, [&](std::size_t s) { return (s >= 50 && s < 150 ? 0.6 : 0.5) * run.segments.duration_s[s]; });
  const std::vector<PrimaryGroup> groups = one_group(run.segments.size());
  const std::vector<double> intrinsic{0.010};
  const std::vector<std::int32_t> membership(run.segments.size(), 0);
  const EvidenceInputs inputs{run, groups, intrinsic, {}, membership, true, false, true, 5};
  MeasuredEvidence evidence;
  foreign_cpu_evidence(inputs, shared_node_time(run), evidence);
  double lost = 0.0;
  for (std::size_t s = 50; s < 150; ++s) lost += 0.25 * clean[s];
  CHECK(sum(evidence.foreign_cpu_s) == Approx(lost).epsilon(0.01));
  CHECK(evidence.foreign_cpu_s[10] == 0.0);
  // Not taking turns: no reading at all.
  const EvidenceInputs alone{run, groups, intrinsic, {}, membership, true, false, false, 5};
  MeasuredEvidence none;
  foreign_cpu_evidence(alone, shared_node_time(run), none);
  CHECK(sum(none.foreign_cpu_s) == 0.0);
}

TEST_CASE("slept evidence: what ranks taking turns slept, spread where they were off the CPU", "[evidence]") {
  RunData run = taking_turns_run();
  set_turns(run, [&](std::size_t s) { return 0.5 * run.segments.duration_s[s]; });
  const std::vector<std::uint8_t> oversubscribed(run.detail.ranks.size(), 1);
  CHECK(slept_evidence(run, oversubscribed).slept_s == 0.0);  // never asleep: nothing
  run.ranks[2].slept_s = 0.3;
  const SleptOnSharedCpus slept = slept_evidence(run, oversubscribed);
  CHECK(slept.slept_s == Approx(0.3).epsilon(1e-9));
  CHECK(sum(slept.where) == Approx(0.3).epsilon(1e-9));
}

TEST_CASE("combine_evidence: overlapping sources count once, never beyond the segment less its work", "[evidence]") {
  MeasuredEvidence evidence;
  evidence.rank_s = {0.002, 0.0, 0.004, 0.0};
  evidence.collective_s = {0.002, 0.001, 0.0, 0.0};
  evidence.foreign_cpu_s = {0.0, 0.0, 0.0, 0.003};
  evidence.shared_turns_s = {0.0, 0.0, 0.0, 0.005};
  const std::vector<double> duration{0.015, 0.011, 0.0105, 0.015};
  const std::vector<double> work{0.010, 0.010, 0.010, 0.010};
  const std::vector<double> measured = combine_evidence(evidence, duration, work);
  CHECK(measured[0] == Approx(0.002));  // the rank asleep inside the collective: both see it
  CHECK(measured[1] == Approx(0.001));
  CHECK(measured[2] == Approx(0.0005));  // at most the segment less its work
  CHECK(measured[3] == Approx(0.005));
}

TEST_CASE("run-queue evidence: ranks that waited for a CPU, and their waits one after another", "[evidence]") {
  // A rank whose run-queue delay is at least half its off-CPU time waited
  // for a CPU; one that slept does not.
  RunData run = cputime_run({}, 0.0);
  set_cells(run, Quantized::off_cpu_time, [](std::size_t r, std::size_t) { return r < 2 ? 0.001 : 0.0; });
  run.ranks[0].run_queue_delay_s = 0.15;  // of 0.2 s off the CPU
  run.ranks[1].run_queue_delay_s = 0.05;
  const std::vector<std::uint8_t> waiting = waiting_rows(run, std::vector<std::uint8_t>(run.detail.ranks.size(), 0));
  CHECK(waiting[0] == 1);
  CHECK(waiting[1] == 0);
  // Taking turns on an oversubscribed node: the run queue is the job's own.
  CHECK(waiting_rows(run, std::vector<std::uint8_t>(run.detail.ranks.size(), 1))[0] == 0);
  // Two ranks waited 3 ms each: one after another only as far as the
  // polling beyond its ordinary level shows it; at most their sum.
  CHECK(serial_waits(0.003, 0.006, 0.0005, 0.0005) == Approx(0.003));  // no polling: they overlapped
  CHECK(serial_waits(0.003, 0.006, 0.0025, 0.0005) == Approx(0.005));
  CHECK(serial_waits(0.003, 0.006, 0.0200, 0.0005) == Approx(0.006));
}
