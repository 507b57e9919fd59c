// Each source of measured evidence of the primary model alone
// (estimators/analysis/src/primary/evidence.hpp: one signature, one table),
// and the one place they meet.
#include <algorithm>
#include <array>
#include <catch2/catch.hpp>
#include <numeric>
#include <string_view>
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

// What a source reads of a run modelled as one group with a first-fit
// intrinsic time of 10 ms; per-rank facts as given.
struct Inputs {
  explicit Inputs(const RunData& of) : run(of) {}

  const RunData& run;
  std::vector<PrimaryGroup> groups = one_group(run.segments.size());
  std::vector<double> intrinsic{0.010};
  std::vector<std::int32_t> membership = std::vector<std::int32_t>(run.segments.size(), 0);
  std::vector<std::uint8_t> oversubscribed = std::vector<std::uint8_t>(run.detail.ranks.size(), 0);
  std::vector<std::uint8_t> waiting;
  SharedNodeTime nodes;

  EvidenceInputs get(bool off_cpu_measured, bool most_segments_delayed, bool taking_turns) const {
    return {run,     groups, intrinsic,        {},        membership,           oversubscribed, waiting,
            nodes,   off_cpu_measured, most_segments_delayed, taking_turns, 5};
  }
};

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
  const Inputs inputs{run};
  const SourceReading evidence = rank_evidence(inputs.get(true, false, false));
  REQUIRE(evidence.delay_s.size() == 200);
  CHECK(evidence.delay_s[0] == Approx(0.002).epsilon(0.01));
  CHECK(evidence.delay_s[1] == 0.0);  // rank 0's 3 ms off the CPU were all slack
  CHECK(sum(evidence.delay_s) == Approx(100 * 0.002).epsilon(0.01));
  CHECK(evidence.total_s == Approx(sum(evidence.delay_s)));
  CHECK(evidence.io_stall_s.size() == 200);  // read per segment, though none stalled
  CHECK(evidence.io_stall_total_s == 0.0);
  // Without off-CPU time measured (a PAPI counter), no rank evidence.
  Inputs unmeasured{run};
  unmeasured.oversubscribed.clear();
  CHECK(sum(rank_evidence(unmeasured.get(false, false, false)).delay_s) == 0.0);
}

TEST_CASE("collective evidence: the least wait beyond the collective's latency", "[evidence]") {
  RunData run = cputime_run({}, 0.0);
  for (std::size_t s = 0; s < 200; ++s) run.segments.late_wait_s[s] = (s % 4 == 0 ? 0.001 : 0.0) + 5e-6;
  const SourceReading evidence = collective_evidence(Inputs{run}.get(true, false, false));
  CHECK(evidence.delay_s[0] == Approx(0.001).epsilon(0.01));
  CHECK(evidence.delay_s[1] == 0.0);
  CHECK(evidence.total_s == Approx(50 * 0.001).epsilon(0.01));
  CHECK(evidence.level_variance_s2 >= 0.0);
}

TEST_CASE("foreign CPU evidence: what another process took on a node whose ranks take turns", "[evidence]") {
  RunData run = taking_turns_run();
  const std::vector<double> clean = run.segments.duration_s;
  for (std::size_t s = 50; s < 150; ++s) run.segments.duration_s[s] = 1.25 * clean[s];
  set_turns(run, [&](std::size_t s) { return (s >= 50 && s < 150 ? 0.6 : 0.5) * run.segments.duration_s[s]; });
  Inputs inputs{run};
  inputs.nodes = shared_node_time(run);
  const SourceReading evidence = foreign_cpu_evidence(inputs.get(true, false, true));
  double lost = 0.0;
  for (std::size_t s = 50; s < 150; ++s) lost += 0.25 * clean[s];
  CHECK(sum(evidence.delay_s) == Approx(lost).epsilon(0.01));
  CHECK(evidence.total_s == Approx(lost).epsilon(0.01));
  CHECK(evidence.delay_s[10] == 0.0);
  // Not taking turns: no reading at all.
  CHECK(foreign_cpu_evidence(inputs.get(true, false, false)).delay_s.empty());
}

TEST_CASE("slept evidence: what ranks taking turns slept, spread where they were off the CPU", "[evidence]") {
  RunData run = taking_turns_run();
  set_turns(run, [&](std::size_t s) { return 0.5 * run.segments.duration_s[s]; });
  Inputs inputs{run};
  inputs.oversubscribed.assign(run.detail.ranks.size(), 1);
  CHECK(slept_evidence(inputs.get(true, false, true)).total_s == 0.0);  // never asleep: nothing
  run.ranks[2].slept_s = 0.3;
  const SourceReading slept = slept_evidence(inputs.get(true, false, true));
  CHECK(slept.total_s == Approx(0.3).epsilon(1e-9));
  CHECK(sum(slept.delay_s) == Approx(0.3).epsilon(1e-9));
  CHECK(slept_evidence(inputs.get(true, false, false)).total_s == 0.0);  // read only where ranks take turns
}

TEST_CASE("combine_evidence: overlapping sources count once, never beyond the segment less its work", "[evidence]") {
  // Known wrong: summing the sources (0.004 in segment 0), or no cap (0.004 in segment 2).
  SourceReading rank;
  rank.delay_s = {0.002, 0.0, 0.004, 0.0};
  SourceReading collective;
  collective.delay_s = {0.002, 0.001, 0.0, 0.0};
  SourceReading foreign;
  foreign.delay_s = {0.0, 0.0, 0.0, 0.003};
  SourceReading turns;
  turns.delay_s = {0.0, 0.0, 0.0, 0.005};
  SourceReading unread;  // a source that read nothing (empty) adds nothing
  const std::vector<const SourceReading*> readings{&rank, &collective, &foreign, &turns, &unread};
  const std::vector<double> duration{0.015, 0.011, 0.0105, 0.015};
  const std::vector<double> work{0.010, 0.010, 0.010, 0.010};
  const std::vector<double> measured = combine_evidence(readings, duration, work);
  CHECK(measured[0] == Approx(0.002));  // the rank asleep inside the collective: both see it
  CHECK(measured[1] == Approx(0.001));
  CHECK(measured[2] == Approx(0.0005));  // at most the segment less its work
  CHECK(measured[3] == Approx(0.005));
}

TEST_CASE("shared-turns evidence: turns beside another process, and what has no reference apart", "[evidence]") {
  // Every segment shared with another process that took a fifth of the
  // node: no unshared segment of the group to compare with, so the time
  // beyond the ranks' work is reported apart and nothing is charged.
  // Known wrong: charging it (delay_s), or dropping it (apart_s empty).
  RunData run = taking_turns_run();
  set_turns(run, [&](std::size_t s) { return 0.6 * run.segments.duration_s[s]; });
  Inputs inputs{run};
  inputs.nodes = shared_node_time(run);
  const SourceReading beside_all = shared_turns_evidence(inputs.get(true, false, true));
  REQUIRE(beside_all.apart_s.size() == run.segments.size());
  CHECK(sum(beside_all.delay_s) == 0.0);
  CHECK(sum(beside_all.apart_s) > 0.0);
  // The process beside half the run: the other half is the reference, and
  // the shared segments are charged their time beyond it.
  RunData half = taking_turns_run();
  const std::vector<double> clean = half.segments.duration_s;
  for (std::size_t s = 100; s < 200; ++s) half.segments.duration_s[s] = 1.25 * clean[s];
  set_turns(half, [&](std::size_t s) { return (s >= 100 ? 0.6 : 0.5) * half.segments.duration_s[s]; });
  Inputs referenced{half};
  referenced.nodes = shared_node_time(half);
  const SourceReading shared = shared_turns_evidence(referenced.get(true, false, true));
  CHECK(shared.delay_s[10] == 0.0);
  CHECK(sum(shared.delay_s) > 0.0);
  CHECK(shared.total_s == Approx(sum(shared.delay_s)));
  CHECK(sum(shared.apart_s) == 0.0);
  CHECK(shared_turns_evidence(referenced.get(true, false, false)).delay_s.empty());  // not taking turns
}

namespace {

// Stand-in sources of the one signature, for the table's own test.
SourceReading first_source(const EvidenceInputs&) {
  SourceReading reading;
  reading.delay_s = {0.002, 0.0, 0.004, 0.0};
  reading.total_s = 0.006;
  reading.level_variance_s2 = 1e-6;
  reading.io_stall_s = {0.001, 0.0, 0.0, 0.0};
  reading.io_stall_total_s = 0.001;
  return reading;
}

SourceReading collective_source(const EvidenceInputs&) {
  SourceReading reading;
  reading.delay_s = {0.001, 0.003, 0.0, 0.0};
  reading.total_s = 0.004;
  reading.level_variance_s2 = 2e-6;
  reading.apart_s = {0.0, 0.0, 0.0, 0.007};
  return reading;
}

SourceReading floor_source(const EvidenceInputs&) {
  SourceReading reading;
  reading.delay_s = {0.0, 0.0, 0.0, 1.0};
  reading.total_s = 0.5;
  return reading;
}

}  // namespace

TEST_CASE("gather_evidence: every row of a source table read, combined and reported as its row says", "[evidence]") {
  // Known wrong: summing the largest sources, sending a total to another
  // field than its row's, combining a run floor with the others, or
  // dropping a row's level variance or apart time.
  RunData run;
  run.segments.duration_s = {0.010, 0.010, 0.003, 0.010};
  const Inputs inputs{run};
  const std::array sources{
      EvidenceSource{"first", first_source, EvidenceRole::largest, EvidenceHit::unknown, &EvidenceTotals::rank_excess_s},
      EvidenceSource{"collective", collective_source, EvidenceRole::largest, EvidenceHit::closing_collective,
                     &EvidenceTotals::boundary_excess_s},
      EvidenceSource{"floor", floor_source, EvidenceRole::run_floor, EvidenceHit::unknown,
                     &EvidenceTotals::foreign_cpu_loss_s},
  };
  const MeasuredEvidence evidence = gather_evidence(inputs.get(true, false, false), sources);
  REQUIRE(evidence.measured_s.size() == 4);
  CHECK(evidence.measured_s[0] == Approx(0.002));
  CHECK(evidence.measured_s[1] == Approx(0.003));
  CHECK(evidence.measured_s[2] == Approx(0.003));  // at most the duration (no work counter)
  CHECK(evidence.measured_s[3] == 0.0);            // the run floor is applied after the charges
  CHECK(evidence.totals.rank_excess_s == Approx(0.006));
  CHECK(evidence.totals.boundary_excess_s == Approx(0.004));
  CHECK(evidence.totals.foreign_cpu_loss_s == 0.0);
  CHECK(evidence.totals.io_peer_excess_s == Approx(0.001));
  CHECK(evidence.level_variance_s2 == Approx(3e-6));
  CHECK(evidence.apart_s == Approx(0.007));
  REQUIRE(evidence.run_floors.size() == 1);
  CHECK(evidence.run_floors[0].reading.total_s == 0.5);
  CHECK(evidence.run_floors[0].total == &EvidenceTotals::foreign_cpu_loss_s);
  REQUIRE(evidence.collective_wait_s.size() == 4);
  CHECK(evidence.collective_wait_s[1] == Approx(0.003F));
  CHECK(evidence.collective_wait_s[0] == Approx(0.001F));  // only the closing_collective row
  CHECK(evidence.io_stall_s[0] == Approx(0.001F));
}

TEST_CASE("kEvidenceSources: one row per source, each read on a run with nothing measured", "[evidence]") {
  // Known wrong: a row whose source reads a clean run as delayed, or whose
  // per-segment reading is neither empty nor one value per segment.
  const RunData run = cputime_run({}, 0.0);
  const Inputs inputs{run};
  std::vector<std::string_view> names;
  for (const EvidenceSource& source : kEvidenceSources) {
    INFO(source.name);
    const SourceReading reading = source.read(inputs.get(true, false, false));
    CHECK((reading.delay_s.empty() || reading.delay_s.size() == run.segments.size()));
    CHECK(sum(reading.delay_s) == 0.0);
    CHECK(reading.total_s == 0.0);
    CHECK(std::find(names.begin(), names.end(), source.name) == names.end());
    names.push_back(source.name);
  }
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

TEST_CASE("work_is_cpu_time: the counter kind decides, not its unit's spelling", "[evidence]") {
  // Known wrong: testing the unit string (a CPU-time run whose file spells
  // its unit otherwise would lose every CPU-time rule).
  RunData run = cputime_run({}, 0.0);
  run.meta.counter_unit = "ns of CPU time";
  CHECK(work_is_cpu_time(run));
  run.meta.counter_source = CounterKind::thread_oncpu;
  CHECK(work_is_cpu_time(run));
  run.meta.counter_source = CounterKind::papi;
  run.meta.counter_unit = "ns";
  CHECK_FALSE(work_is_cpu_time(run));
}
