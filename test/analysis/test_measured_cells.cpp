// Measured delays per rank (estimators/analysis/src/measured_cells.cpp): time
// off the CPU inside the boundary collective, the slack that excuses it, and
// a rank's I/O against the ranks that did the same I/O. Ranks taking turns
// on their node's CPUs: test_taking_turns.cpp.
#include <catch2/catch.hpp>
#include <functional>
#include <vector>

#include "measured_cells_fixtures.hpp"

using namespace tremor;
using namespace tremor::analysis;
using namespace tremor::test::measured;

TEST_CASE("a rank asleep inside the boundary collective: measured once, though the least wait holds it too",
          "[analysis]") {
  // Every other segment, rank 1 is off the CPU for 2 ms inside the closing
  // collective; every rank's exit waits for it, so the least wait is 2 ms too.
  std::vector<std::size_t> delayed;
  for (std::size_t s = 0; s < 200; s += 2) delayed.push_back(s);
  RunData run = cputime_run(delayed, 0.002);
  const auto late = [](std::size_t s) { return s % 2 == 0 ? 0.002 + 2e-6 : 2e-6; };
  for (std::size_t s = 0; s < 200; ++s) run.segments.late_wait_s[s] = late(s);
  set_cells(run, Quantized::wait_time, [&](std::size_t, std::size_t s) { return late(s); });
  set_cells(run, Quantized::off_cpu_time,
            [](std::size_t r, std::size_t s) { return r == 1 && s % 2 == 0 ? 0.002 : 0.0; });
  const RunAnalysis result = analyze_run(run, quick_parameters());
  REQUIRE(result.estimate_possible);
  const double truth = 100.0 * 100 * 0.002 / run.meta.run_time_s;
  CHECK(result.primary.evidence.rank_excess_s == Approx(0.2).epsilon(0.02));
  CHECK(result.primary.evidence.boundary_excess_s == Approx(0.2).epsilon(0.02));
  CHECK(result.primary.evidence.measured_delay_s == Approx(0.2).epsilon(0.02));
  CHECK(result.primary.lost_percent == Approx(truth).margin(0.5));
}

TEST_CASE("a rank off the CPU while it waited for a later rank is not charged", "[analysis]") {
  // Rank 0 always arrives 3 ms before the others and its MPI library sleeps
  // while it waits (off the CPU for those 3 ms): the run lost nothing.
  RunData run = cputime_run({}, 0.0);
  for (double& wait : run.segments.late_wait_s) wait = 2e-6;
  set_cells(run, Quantized::wait_time, [](std::size_t r, std::size_t) { return r == 0 ? 0.003 + 2e-6 : 2e-6; });
  set_cells(run, Quantized::off_cpu_time, [](std::size_t r, std::size_t) { return r == 0 ? 0.003 : 0.0; });
  const RunAnalysis result = analyze_run(run, quick_parameters());
  REQUIRE(result.estimate_possible);
  CHECK(result.primary.evidence.rank_excess_s < 1e-6);
  CHECK(result.primary.lost_percent < 0.5);
  // The same 3 ms off the CPU on the rank the others waited for is lost time.
  set_cells(run, Quantized::wait_time, [](std::size_t r, std::size_t) { return r == 0 ? 2e-6 : 0.003 + 2e-6; });
  for (std::size_t s = 0; s < 200; ++s) run.segments.duration_s[s] += 0.003;
  run.meta.run_time_s += 200 * 0.003;
  CHECK(analyze_run(run, quick_parameters()).primary.evidence.rank_excess_s == Approx(0.6).epsilon(0.02));
}

namespace {

// Beside another process, every other segment: rank 0 (10 ms of CPU time) is
// descheduled 1 ms, so the segment lasts 11 ms. The ranks for which
// `waits(rank)` holds compute 5 ms, waited for a CPU over the run, and are
// off it 5 ms while they wait for rank 0 at the boundary; the others compute
// 10 ms. Start-up and shutdown outside the segments take 0.5 s, so the run's
// own bound (its time less its work) does not bind.
RunData rank_zero_descheduled_run(const std::function<bool(std::size_t)>& waits) {
  std::vector<std::size_t> delayed;
  for (std::size_t s = 0; s < 200; s += 2) delayed.push_back(s);
  RunData run = cputime_run(delayed, 0.001);
  const auto is_delayed = [](std::size_t s) { return s % 2 == 0; };
  for (double& wait : run.segments.late_wait_s) wait = 2e-6;
  set_cells(run, Quantized::work, [&](std::size_t r, std::size_t) { return waits(r) ? 5e6 : 1e7; });
  set_cells(run, Quantized::wait_time,
            [&](std::size_t r, std::size_t s) { return waits(r) ? (is_delayed(s) ? 0.006 : 0.005) : 2e-6; });
  set_cells(run, Quantized::off_cpu_time, [&](std::size_t r, std::size_t s) {
    return !is_delayed(s) ? 0.0 : r == 0 ? 0.001 : waits(r) ? 0.005 : 0.0;
  });
  for (RankInfo& rank : run.ranks) {
    const auto r = static_cast<std::size_t>(rank.rank);
    rank.run_queue_delay_s = r == 0 ? 0.1 : waits(r) ? 0.5 : 0.0;
  }
  run.meta.run_time_s += 0.5;
  return run;
}

}  // namespace

TEST_CASE("no charge leaves a segment shorter than its work", "[analysis]") {
  // Rank 1 alone waits: charging its 5 ms would leave the segment 6 ms, less
  // than the 10 ms of work it did.
  RunData run = rank_zero_descheduled_run([](std::size_t r) { return r == 1; });
  const RunAnalysis result = analyze_run(run, quick_parameters());
  REQUIRE(result.estimate_possible);
  CHECK(result.primary.waiting_ranks >= 2);
  CHECK(result.primary.evidence.rank_excess_s == Approx(100 * 0.005).epsilon(0.02));  // measured, but not all of it lost
  CHECK(result.primary.lost_percent == Approx(100.0 * 100 * 0.001 / run.meta.run_time_s).margin(0.5));
}

TEST_CASE("no charge leaves a segment shorter than its busiest rank's work", "[analysis]") {
  // Ranks 1-3 wait, so 5 ms is the median rank's work and only rank 0 computes
  // 10 ms. The segment lost rank 0's 1 ms: charged 5 ms it would be 6 ms long,
  // less than rank 0's work.
  RunData run = rank_zero_descheduled_run([](std::size_t r) { return r != 0; });
  for (double& work : run.segments.work) work = 5e6;  // the median over the detail ranks
  const RunAnalysis result = analyze_run(run, quick_parameters());
  REQUIRE(result.estimate_possible);
  CHECK(result.primary.waiting_ranks >= 3);
  CHECK(result.primary.lost_percent == Approx(100.0 * 100 * 0.001 / run.meta.run_time_s).margin(0.5));
}

TEST_CASE("a slow read of the input on one rank, in a segment of no group, against the ranks that read the same",
          "[analysis]") {
  // Segment 0 reads the input (its own signature, no usable group): the same
  // files, calls and bytes on every rank; rank 1 takes 2 s, the others 10 ms
  // and then wait for it in the collective.
  RunData run = input_read_run();
  const FeatureVector reading = input_read_features();
  const auto io = [](std::size_t r, std::size_t s) { return s != 0 ? 0.0 : r == 1 ? 2.0 : 0.01; };
  set_cells(run, Quantized::io_time, io);
  set_cells(run, Quantized::wait_time, [](std::size_t r, std::size_t s) { return s == 0 && r != 1 ? 1.99 : 2e-6; });
  const RunAnalysis result = analyze_run(run, quick_parameters());
  REQUIRE(result.estimate_possible);
  CHECK(result.primary.segment_primary_group[0] < 0);
  CHECK(result.primary.evidence.io_peer_excess_s == Approx(1.99).epsilon(0.01));
  CHECK(result.primary.segment_lost_s[0] == Approx(1.99).epsilon(0.01));
  // The stall is I/O on the critical path, though the others waited it out in MPI.
  const Diagnosis& what = result.diagnosis;
  REQUIRE(what.available);
  const double lost_parts = what.lost_components.compute + what.lost_components.mpi + what.lost_components.io;
  CHECK(lost_parts == Approx(result.primary.lost_percent).epsilon(0.05));
  CHECK(what.lost_components.io >= 0.9 * lost_parts);
  // Every rank as slow: no rank to compare with, nothing measured.
  set_cells(run, Quantized::io_time, [](std::size_t, std::size_t s) { return s == 0 ? 2.0 : 0.0; });
  CHECK(analyze_run(run, quick_parameters()).primary.segment_lost_s[0] < 1e-3);
  // Rank 1 read more than the others: its time is its own.
  set_cells(run, Quantized::io_time, io);
  FeatureVector more = reading;
  more[tremor::index(Feature::io_bytes_read)] *= 200;
  run.detail.signatures.push_back(more);
  run.detail.signature_index[1 * run.detail.segments] =
      static_cast<std::uint32_t>(run.detail.signatures.size() - 1) - run.detail.signature_offset[1];
  CHECK(analyze_run(run, quick_parameters()).primary.segment_lost_s[0] < 1e-3);
}

TEST_CASE("two ranks waiting for a CPU in turn: their time off the CPU adds up, up to the segment's excess",
          "[analysis]") {
  // Every 4th segment, rank 0 reaches the collective at once and waits 8 ms
  // there, 4 of them descheduled; rank 1 needs rank 0 to progress its
  // messages and is itself descheduled 4 ms: the segment took 8 ms more.
  // Both ranks spent that time runnable (run queue) on a shared node.
  std::vector<std::size_t> delayed;
  for (std::size_t s = 1; s < 200; s += 4) delayed.push_back(s);
  RunData run = cputime_run(delayed, 0.008);
  const auto hit = [](std::size_t s) { return s % 4 == 1; };
  for (double& wait : run.segments.late_wait_s) wait = 2e-6;
  set_cells(run, Quantized::wait_time,
            [&](std::size_t r, std::size_t s) { return r == 0 && hit(s) ? 0.008 + 2e-6 : 2e-6; });
  set_cells(run, Quantized::off_cpu_time, [&](std::size_t r, std::size_t s) { return r < 2 && hit(s) ? 0.004 : 0.0; });
  const double truth = 100.0 * 50 * 0.008 / run.meta.run_time_s;
  // Without run-queue evidence rank 0's time off the CPU fell in its slack.
  const RunAnalysis sleeping = analyze_run(run, quick_parameters());
  REQUIRE(sleeping.estimate_possible);
  CHECK(sleeping.primary.evidence.measured_delay_s == Approx(50 * 0.004).epsilon(0.05));
  for (RankInfo& rank : run.ranks) rank.run_queue_delay_s = 0.2;  // of 0.2 s off the CPU
  const RunAnalysis waiting = analyze_run(run, quick_parameters());
  CHECK(waiting.primary.waiting_ranks == 4);  // ranks 2 and 3: never off the CPU
  CHECK(waiting.primary.lost_percent == Approx(truth).margin(0.5));
  for (const std::size_t s : delayed) CHECK(waiting.primary.segment_lost_s[s] <= run.segments.duration_s[s]);
}

TEST_CASE("a write stalled on every segment of a group, against a rank that wrote the same or more", "[analysis]") {
  // Every segment, ranks 1 and 2 write the same file (same calls and bytes);
  // rank 2 takes 0.2 ms, rank 1 is stalled to 3 ms (15 times as long) and
  // the others wait for it. No segment of the group is clean.
  std::vector<std::size_t> all(200);
  std::iota(all.begin(), all.end(), std::size_t{0});
  RunData run = cputime_run(all, 0.0028);
  FeatureVector writing{};
  writing[tremor::index(Feature::coll_all_to_all)] = 1;
  writing[tremor::index(Feature::bytes_sent)] = 8;
  writing[tremor::index(Feature::io_opens)] = 1;
  writing[tremor::index(Feature::io_writes)] = 4;
  writing[tremor::index(Feature::io_bytes_written)] = 65536;
  for (const std::size_t r : {1, 2}) {
    run.detail.signatures[run.detail.signature_offset[r]] = writing;  // the group's one entry
  }
  const auto io = [](double stalled) {
    return [stalled](std::size_t r, std::size_t) { return r == 1 ? stalled : r == 2 ? 0.0002 : 0.0; };
  };
  for (double& wait : run.segments.late_wait_s) wait = 2e-6;
  set_cells(run, Quantized::wait_time, [](std::size_t r, std::size_t) { return r == 1 ? 2e-6 : 0.0028; });
  set_cells(run, Quantized::io_time, io(0.003));
  const RunAnalysis result = analyze_run(run, quick_parameters());
  REQUIRE(result.estimate_possible);
  CHECK(result.primary.evidence.io_peer_excess_s == Approx(200 * 0.0028).epsilon(0.02));
  CHECK(result.primary.lost_percent == Approx(100.0 * 200 * 0.0028 / run.meta.run_time_s).margin(1.0));
  // 3 times as long: the spread of one file system, not a stall.
  set_cells(run, Quantized::io_time, io(0.0006));
  CHECK(analyze_run(run, quick_parameters()).primary.evidence.io_peer_excess_s == 0.0);
  // Rank 1 writes another file, a quarter of rank 2's writes and bytes, in
  // 3 ms: at rank 2's speed it takes at most rank 2's time (one file each).
  FeatureVector smaller = writing;
  smaller[tremor::index(Feature::io_writes)] = 1;
  smaller[tremor::index(Feature::io_bytes_written)] = 16384;
  run.detail.signatures[run.detail.signature_offset[1]] = smaller;
  set_cells(run, Quantized::io_time, io(0.003));
  CHECK(analyze_run(run, quick_parameters()).primary.evidence.io_peer_excess_s == Approx(200 * 0.0028).epsilon(0.02));
}
