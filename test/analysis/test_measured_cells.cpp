// Measured delays per rank (estimators/analysis/src/measured_cells.cpp): time
// off the CPU inside the boundary collective, the slack that excuses it, and
// a rank's I/O against the ranks that did the same I/O.
#include <algorithm>
#include <catch2/catch.hpp>
#include <functional>
#include <numeric>
#include <set>

#include "synthetic_run.hpp"
#include "tremor/analysis/analysis.hpp"
#include "tremor/analysis/report.hpp"

using namespace tremor;
using namespace tremor::analysis;
using tremor::test::SyntheticGroup;
using tremor::test::SyntheticSpec;

namespace {

AnalysisParameters quick_parameters() {
  AnalysisParameters parameters;
  parameters.replicas = 50;
  return parameters;
}

// Sets every detail cell of a metric to value(row, segment), with one exact bin per value.
void set_cells(RunData& run, Quantized metric, const std::function<double(std::size_t, std::size_t)>& value) {
  const std::size_t rows = run.detail.ranks.size();
  const std::size_t n = run.detail.segments;
  std::set<double> values;
  for (std::size_t r = 0; r < rows; ++r) {
    for (std::size_t s = 0; s < n; ++s) values.insert(value(r, s));
  }
  BinTable& bins = run.global_bins[tremor::index(metric)];
  bins.clear();
  for (const double v : values) bins.push_back(Bin{v, 1, v, v, static_cast<std::uint16_t>(bins.size())});
  std::vector<std::uint16_t>& index = run.detail.global_index[tremor::index(metric)];
  for (std::size_t r = 0; r < rows; ++r) {
    for (std::size_t s = 0; s < n; ++s) {
      const auto found = std::lower_bound(values.begin(), values.end(), value(r, s));
      index[r * n + s] = static_cast<std::uint16_t>(std::distance(values.begin(), found));
    }
  }
}

// One group of 200 segments of 10 ms on 4 ranks, with the CPU-time counter:
// `work_ns` of CPU time in each (a busy code: all of it by default).
RunData cputime_run(const std::vector<std::size_t>& delayed, double delay_s, double work_ns = 1e7) {
  SyntheticSpec spec;
  spec.groups = {SyntheticGroup{work_ns, 0.010, 200}};
  spec.counter_source = "thread_cputime";
  for (const std::size_t s : delayed) spec.delays.push_back({s, delay_s, 1});
  RunData run = tremor::test::synthetic_run(spec);
  run.meta.schema_version = 3;
  run.meta.counter_unit = "ns";
  return run;
}

// Segment 0 reads the input: its own signature (no usable group) and the
// same files, calls and bytes on every rank.
FeatureVector input_read_features() {
  FeatureVector reading{};
  reading[tremor::index(Feature::coll_all_to_all)] = 1;
  reading[tremor::index(Feature::io_opens)] = 3;
  reading[tremor::index(Feature::io_reads)] = 40;
  reading[tremor::index(Feature::io_bytes_read)] = 1 << 20;
  return reading;
}

// A CPU-time run whose segment 0, 1.99 s longer, reads the input on every rank.
RunData input_read_run(double work_ns = 1e7) {
  RunData run = cputime_run({0}, 1.99, work_ns);
  run.segments.signature[0] = 0x5010;
  const auto input_entry = static_cast<std::uint32_t>(run.detail.signatures.size());
  for (std::size_t r = 0; r < run.detail.ranks.size(); ++r) {
    run.detail.signatures.push_back(input_read_features());
    run.detail.signature_index[r * run.detail.segments] = input_entry - run.detail.signature_offset[r];
  }
  return run;
}

// Puts every rank on one node of `cpus` CPUs.
void one_node(RunData& run, const char* cpus) {
  for (RankInfo& rank : run.ranks) rank.node_id = 0;
  run.environment.nodes.resize(1);
  const auto cpu_count = static_cast<std::size_t>(
      std::find(tremor::kNodeFacts.begin(), tremor::kNodeFacts.end(), "cpu_count") - tremor::kNodeFacts.begin());
  run.environment.nodes[0].facts[cpu_count] = cpus;
}

// 4 ranks taking turns on one node of 2 CPUs, busy (computing 2 ms, or
// polling) whenever they run, over 200 segments: how the scheduler
// interleaves them sets each segment's duration, most near 5 ms, some up to
// 20. Every rank is off the CPU half of each segment, all of it waiting for a
// CPU (run queue).
RunData taking_turns_run() {
  SyntheticSpec spec;
  spec.groups = {SyntheticGroup{2e6, 0.010, 200}};
  spec.counter_source = "thread_cputime";
  spec.relative_pattern = {-0.5, -0.48, 0.4, -0.5, 1.0, -0.46, 0.2, -0.5, 0.7, -0.49};
  RunData run = tremor::test::synthetic_run(spec);
  run.meta.schema_version = 3;
  run.meta.counter_unit = "ns";
  one_node(run, "2");
  for (double& wait : run.segments.late_wait_s) wait = 2e-6;
  set_cells(run, Quantized::wait_time, [](std::size_t, std::size_t) { return 2e-6; });
  return run;
}

// Each rank's off-CPU time in segment s is off(s); all of it run-queue delay.
// Each rank's own segment time is the segment's.
void set_turns(RunData& run, const std::function<double(std::size_t)>& off) {
  set_cells(run, Quantized::duration, [&](std::size_t, std::size_t s) { return run.segments.duration_s[s]; });
  set_cells(run, Quantized::off_cpu_time, [&](std::size_t, std::size_t s) { return off(s); });
  for (RankInfo& rank : run.ranks) {
    rank.run_queue_delay_s = 0.0;
    for (std::size_t s = 0; s < run.segments.size(); ++s) rank.run_queue_delay_s += off(s);
  }
}

}  // namespace

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
  CHECK(result.rank_excess_s == Approx(0.2).epsilon(0.02));
  CHECK(result.boundary_excess_s == Approx(0.2).epsilon(0.02));
  CHECK(result.measured_delay_s == Approx(0.2).epsilon(0.02));
  CHECK(result.lost_percent == Approx(truth).margin(0.5));
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
  CHECK(result.rank_excess_s < 1e-6);
  CHECK(result.lost_percent < 0.5);
  // The same 3 ms off the CPU on the rank the others waited for is lost time.
  set_cells(run, Quantized::wait_time, [](std::size_t r, std::size_t) { return r == 0 ? 2e-6 : 0.003 + 2e-6; });
  for (std::size_t s = 0; s < 200; ++s) run.segments.duration_s[s] += 0.003;
  run.meta.run_time_s += 200 * 0.003;
  CHECK(analyze_run(run, quick_parameters()).rank_excess_s == Approx(0.6).epsilon(0.02));
}

TEST_CASE("no charge leaves a segment shorter than its work", "[analysis]") {
  // Beside another process, every other segment: rank 0 (10 ms of CPU time)
  // is descheduled 1 ms, so the segment lasts 11 ms; rank 1 (5 ms of CPU
  // time), which waited for a CPU over the run, is off it 5 ms while it
  // waits for rank 0 at the boundary. Charging rank 1's 5 ms would leave the
  // segment 6 ms, less than the 10 ms of work it did.
  std::vector<std::size_t> delayed;
  for (std::size_t s = 0; s < 200; s += 2) delayed.push_back(s);
  RunData run = cputime_run(delayed, 0.001);
  const auto is_delayed = [](std::size_t s) { return s % 2 == 0; };
  for (double& wait : run.segments.late_wait_s) wait = 2e-6;
  set_cells(run, Quantized::work, [](std::size_t r, std::size_t) { return r == 1 ? 5e6 : 1e7; });
  set_cells(run, Quantized::wait_time,
            [&](std::size_t r, std::size_t s) { return r == 1 ? (is_delayed(s) ? 0.006 : 0.005) : 2e-6; });
  set_cells(run, Quantized::off_cpu_time, [&](std::size_t r, std::size_t s) {
    return !is_delayed(s) ? 0.0 : r == 0 ? 0.001 : r == 1 ? 0.005 : 0.0;
  });
  for (RankInfo& rank : run.ranks) rank.run_queue_delay_s = rank.rank == 0 ? 0.1 : rank.rank == 1 ? 0.5 : 0.0;
  // Start-up and shutdown outside the segments take 0.5 s: the run's own
  // bound (its time less its work) does not bind.
  run.meta.run_time_s += 0.5;
  const RunAnalysis result = analyze_run(run, quick_parameters());
  REQUIRE(result.estimate_possible);
  CHECK(result.waiting_ranks >= 2);
  CHECK(result.rank_excess_s == Approx(100 * 0.005).epsilon(0.02));  // measured, but not all of it lost
  CHECK(result.lost_percent == Approx(100.0 * 100 * 0.001 / run.meta.run_time_s).margin(0.5));
}

TEST_CASE("no charge leaves a segment shorter than its busiest rank's work", "[analysis]") {
  // As above, but only rank 0 computes 10 ms per segment; the three others
  // compute 5 ms (the median rank's work) and, having waited for a CPU over
  // the run, are off it 5 ms while they wait for rank 0 at the boundary.
  // The segment lost rank 0's 1 ms: charged 5 ms it would be 6 ms long, less
  // than rank 0's work.
  std::vector<std::size_t> delayed;
  for (std::size_t s = 0; s < 200; s += 2) delayed.push_back(s);
  RunData run = cputime_run(delayed, 0.001);
  const auto is_delayed = [](std::size_t s) { return s % 2 == 0; };
  for (double& wait : run.segments.late_wait_s) wait = 2e-6;
  for (double& work : run.segments.work) work = 5e6;  // the median over the detail ranks
  set_cells(run, Quantized::work, [](std::size_t r, std::size_t) { return r == 0 ? 1e7 : 5e6; });
  set_cells(run, Quantized::wait_time,
            [&](std::size_t r, std::size_t s) { return r != 0 ? (is_delayed(s) ? 0.006 : 0.005) : 2e-6; });
  set_cells(run, Quantized::off_cpu_time,
            [&](std::size_t r, std::size_t s) { return !is_delayed(s) ? 0.0 : r == 0 ? 0.001 : 0.005; });
  for (RankInfo& rank : run.ranks) rank.run_queue_delay_s = rank.rank == 0 ? 0.1 : 0.5;
  run.meta.run_time_s += 0.5;
  const RunAnalysis result = analyze_run(run, quick_parameters());
  REQUIRE(result.estimate_possible);
  CHECK(result.waiting_ranks >= 3);
  CHECK(result.lost_percent == Approx(100.0 * 100 * 0.001 / run.meta.run_time_s).margin(0.5));
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
  CHECK(result.segment_primary_group[0] < 0);
  CHECK(result.io_peer_excess_s == Approx(1.99).epsilon(0.01));
  CHECK(result.segment_lost_s[0] == Approx(1.99).epsilon(0.01));
  // Every rank as slow: no rank to compare with, nothing measured.
  set_cells(run, Quantized::io_time, [](std::size_t, std::size_t s) { return s == 0 ? 2.0 : 0.0; });
  CHECK(analyze_run(run, quick_parameters()).segment_lost_s[0] < 1e-3);
  // Rank 1 read more than the others: its time is its own.
  set_cells(run, Quantized::io_time, io);
  FeatureVector more = reading;
  more[tremor::index(Feature::io_bytes_read)] *= 200;
  run.detail.signatures.push_back(more);
  run.detail.signature_index[1 * run.detail.segments] =
      static_cast<std::uint32_t>(run.detail.signatures.size() - 1) - run.detail.signature_offset[1];
  CHECK(analyze_run(run, quick_parameters()).segment_lost_s[0] < 1e-3);
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
  CHECK(sleeping.measured_delay_s == Approx(50 * 0.004).epsilon(0.05));
  for (RankInfo& rank : run.ranks) rank.run_queue_delay_s = 0.2;  // of 0.2 s off the CPU
  const RunAnalysis waiting = analyze_run(run, quick_parameters());
  CHECK(waiting.waiting_ranks == 4);  // ranks 2 and 3: never off the CPU
  CHECK(waiting.lost_percent == Approx(truth).margin(0.5));
  for (const std::size_t s : delayed) CHECK(waiting.segment_lost_s[s] <= run.segments.duration_s[s]);
}

TEST_CASE("ranks taking turns on an oversubscribed node: what one slept beyond its run-queue delay is lost",
          "[analysis]") {
  // 4 ranks on one node of 2 CPUs: every rank waits 1-3 ms per segment for a
  // CPU (its run-queue delay), which is the job's own; rank 1 also sleeps 1 ms
  // inside the collective in 9 of 10 segments. The turns spread too much for
  // a clean level to show that.
  std::vector<std::size_t> delayed;
  for (std::size_t s = 0; s < 200; ++s) {
    if (s % 10 != 0) delayed.push_back(s);
  }
  RunData run = cputime_run(delayed, 0.001, 4e6);  // 4 ranks' 4 ms fit 2 CPUs in 10 ms
  one_node(run, "2");
  const auto asleep = [](std::size_t r, std::size_t s) { return r == 1 && s % 10 != 0; };
  for (double& wait : run.segments.late_wait_s) wait = 2e-6;
  set_cells(run, Quantized::wait_time, [](std::size_t, std::size_t) { return 2e-6; });
  const auto turns = [](std::size_t r, std::size_t s) {
    return 0.001 * (1.0 + 0.2 * static_cast<double>((7 * r + 13 * s) % 11));
  };
  set_cells(run, Quantized::off_cpu_time,
            [&](std::size_t r, std::size_t s) { return turns(r, s) + (asleep(r, s) ? 0.001 : 0.0); });
  for (std::size_t r = 0; r < 4; ++r) {
    run.ranks[r].run_queue_delay_s = 0.0;
    for (std::size_t s = 0; s < 200; ++s) run.ranks[r].run_queue_delay_s += turns(r, s);
  }
  const double truth = 100.0 * static_cast<double>(delayed.size()) * 0.001 / run.meta.run_time_s;
  const RunAnalysis result = analyze_run(run, quick_parameters());
  REQUIRE(result.estimate_possible);
  CHECK(result.waiting_ranks == 0);  // the job's own turns: the run queue is not used for waiting
  CHECK(result.lost_percent == Approx(truth).margin(1.0));
  // Nobody slept: the turns alone are not charged.
  set_cells(run, Quantized::off_cpu_time, turns);
  for (const std::size_t s : delayed) run.segments.duration_s[s] -= 0.001;
  run.meta.run_time_s -= static_cast<double>(delayed.size()) * 0.001;
  CHECK(analyze_run(run, quick_parameters()).lost_percent < 0.5);
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
  CHECK(result.io_peer_excess_s == Approx(200 * 0.0028).epsilon(0.02));
  CHECK(result.lost_percent == Approx(100.0 * 200 * 0.0028 / run.meta.run_time_s).margin(1.0));
  // 3 times as long: the spread of one file system, not a stall.
  set_cells(run, Quantized::io_time, io(0.0006));
  CHECK(analyze_run(run, quick_parameters()).io_peer_excess_s == 0.0);
  // Rank 1 writes another file, a quarter of rank 2's writes and bytes, in
  // 3 ms: at rank 2's speed it takes at most rank 2's time (one file each).
  FeatureVector smaller = writing;
  smaller[tremor::index(Feature::io_writes)] = 1;
  smaller[tremor::index(Feature::io_bytes_written)] = 16384;
  run.detail.signatures[run.detail.signature_offset[1]] = smaller;
  set_cells(run, Quantized::io_time, io(0.003));
  CHECK(analyze_run(run, quick_parameters()).io_peer_excess_s == Approx(200 * 0.0028).epsilon(0.02));
}

TEST_CASE("ranks taking turns: their own turns cost nothing; another process costs the CPU time it took",
          "[analysis]") {
  RunData run = taking_turns_run();
  const std::vector<double> clean = run.segments.duration_s;
  set_turns(run, [&](std::size_t s) { return 0.5 * clean[s]; });
  const RunAnalysis alone = analyze_run(run, quick_parameters());
  REQUIRE(alone.estimate_possible);
  CHECK(alone.taking_turns);
  CHECK(alone.lost_percent < 0.5);  // the durations spread by half: their lower part is no clean level
  // The interval reaches the most the work allows: 4 ranks' 2 ms on 2 CPUs
  // take at least 4 ms a segment, not the median rank's 2 ms.
  CHECK(alone.work_critical_path_s == Approx(200 * 0.004).epsilon(0.01));
  const double turns_bound = 100.0 * (run.meta.run_time_s - 200 * 0.004) / run.meta.run_time_s;
  CHECK(alone.lost_percent_low == Approx(alone.lost_percent));
  CHECK(alone.lost_percent_high == Approx(turns_bound).margin(0.5));
  // Segments 50-149: another busy process shares the node and takes a fifth
  // of its CPU time; they last 25 % longer and each rank is off 60 % of them.
  double lost = 0.0;
  for (std::size_t s = 50; s < 150; ++s) {
    run.segments.duration_s[s] = 1.25 * clean[s];
    lost += 0.25 * clean[s];
  }
  run.meta.run_time_s += lost;
  set_turns(run, [&](std::size_t s) { return (s >= 50 && s < 150 ? 0.6 : 0.5) * run.segments.duration_s[s]; });
  const RunAnalysis shared = analyze_run(run, quick_parameters());
  CHECK(shared.foreign_cpu_loss_s == Approx(lost).epsilon(0.01));
  // Read over 10 short segments either side, the share reaches 10 segments
  // past each edge of the span, where each is charged at least its share.
  CHECK(shared.lost_percent == Approx(100.0 * lost / run.meta.run_time_s).margin(1.0));
  CHECK(shared.lost_percent_high ==
        Approx(100.0 * (run.meta.run_time_s - 200 * 0.004) / run.meta.run_time_s).margin(0.5));
}

TEST_CASE("ranks taking turns beside another process: their polling for descheduled ranks is lost too", "[analysis]") {
  // The process takes a fifth of the node's CPU time where it runs, but the
  // segments last twice as long: ranks waiting for a descheduled one poll on.
  RunData run = taking_turns_run();
  const std::vector<double> clean = run.segments.duration_s;
  const double clean_run_s = run.meta.run_time_s;
  const auto beside = [&](std::size_t from, std::size_t to) {
    RunData shared = run;
    double lost = 0.0;
    for (std::size_t s = from; s < to; ++s) {
      shared.segments.duration_s[s] = 2.0 * clean[s];
      lost += clean[s];
    }
    shared.meta.run_time_s = clean_run_s + lost;
    set_turns(shared, [&](std::size_t s) { return (s >= from && s < to ? 0.6 : 0.5) * shared.segments.duration_s[s]; });
    return std::pair{shared, lost};
  };
  // For a window (segments 50-149): the rest of each group tells what a segment needs.
  const auto [window, window_lost] = beside(50, 150);
  const RunAnalysis part = analyze_run(window, quick_parameters());
  CHECK(part.foreign_cpu_loss_s == Approx(0.4 * window_lost).epsilon(0.01));
  CHECK(part.lost_percent == Approx(100.0 * window_lost / window.meta.run_time_s).margin(1.0));
  CHECK(part.lost_percent_low == Approx(100.0 * 0.4 * window_lost / window.meta.run_time_s).margin(0.5));
  // For the whole run nothing tells: each segment is charged its time beyond
  // its ranks' work over the CPUs (4 ms), the most the work allows; what
  // their own turns cost (1-16 ms a segment here) is charged too.
  const auto [whole, whole_lost] = beside(0, 200);
  const RunAnalysis all = analyze_run(whole, quick_parameters());
  const double bound = 100.0 * (whole.meta.run_time_s - 200 * 0.004) / whole.meta.run_time_s;
  CHECK(all.lost_percent >= 100.0 * whole_lost / whole.meta.run_time_s);
  CHECK(all.lost_percent == Approx(bound).margin(0.5));
  // The report says what was charged with nothing to compare with, the job's
  // own turns included; for the window nothing was.
  const auto says_bound = [](const RunData& r, const RunAnalysis& a) {
    std::string text = render_text_report(r, a, "run.h5");
    std::replace(text.begin(), text.end(), '\n', ' ');
    text.erase(std::unique(text.begin(), text.end(), [](char x, char y) { return x == ' ' && y == ' '; }), text.end());
    return text.find("so what the ranks' own turns cost there is included.") != std::string::npos;
  };
  CHECK(says_bound(whole, all));
  CHECK_FALSE(says_bound(window, part));
}

TEST_CASE("ranks taking turns beside another process: charged in the ranks' own time, as the run is", "[analysis]") {
  // Ranks leave each boundary apart: rank r's own segment time is (1 - r/10)
  // of the segment's duration (the longest rank's), so the durations sum to
  // 1/0.85 of the run. Segments 50-149 take twice as long beside a busy loop.
  RunData run = taking_turns_run();
  const std::vector<double> clean = run.segments.duration_s;
  double lost = 0.0;
  for (std::size_t s = 50; s < 150; ++s) {
    run.segments.duration_s[s] = 2.0 * clean[s];
    lost += 0.85 * clean[s];
  }
  const auto own = [&](std::size_t r, std::size_t s) {
    return (1.0 - 0.1 * static_cast<double>(r)) * run.segments.duration_s[s];
  };
  run.meta.run_time_s = 0.0;
  for (const double duration : run.segments.duration_s) run.meta.run_time_s += 0.85 * duration;
  const auto off = [&](std::size_t r, std::size_t s) { return (s >= 50 && s < 150 ? 0.7 : 0.5) * own(r, s); };
  set_cells(run, Quantized::duration, own);
  set_cells(run, Quantized::off_cpu_time, off);
  for (std::size_t r = 0; r < run.ranks.size(); ++r) {  // all of it run-queue delay
    run.ranks[r].run_queue_delay_s = 0.0;
    for (std::size_t s = 0; s < run.segments.size(); ++s) run.ranks[r].run_queue_delay_s += off(r, s);
  }
  const RunAnalysis result = analyze_run(run, quick_parameters());
  REQUIRE(result.taking_turns);
  // Charged in the segments' durations it would read 1/0.85 of that (39 %).
  CHECK(result.lost_percent == Approx(100.0 * lost / run.meta.run_time_s).margin(1.5));
}

TEST_CASE("ranks taking turns: a write outlasting every turn is a stall, one within a turn is not", "[analysis]") {
  // Ranks 1 and 2 write the same file in every segment; rank 2 takes 0.2 ms.
  RunData run = taking_turns_run();
  const std::vector<double> clean = run.segments.duration_s;
  set_turns(run, [&](std::size_t s) { return 0.5 * clean[s]; });
  FeatureVector writing{};
  writing[tremor::index(Feature::coll_all_to_all)] = 1;
  writing[tremor::index(Feature::bytes_sent)] = 8;
  writing[tremor::index(Feature::io_writes)] = 4;
  writing[tremor::index(Feature::io_bytes_written)] = 65536;
  for (const std::size_t r : {1, 2}) run.detail.signatures[run.detail.signature_offset[r]] = writing;
  const auto io = [](double rank_1) {
    return [rank_1](std::size_t r, std::size_t) { return r == 1 ? rank_1 : r == 2 ? 0.0002 : 0.0; };
  };
  // 2.2 ms, 11 times rank 2's, but shorter than the 2.5-10 ms each rank
  // waits for its turns: it may have waited for one inside the call.
  set_cells(run, Quantized::io_time, io(0.0022));
  CHECK(analyze_run(run, quick_parameters()).io_peer_excess_s == 0.0);
  // 30 ms on every 10th segment: no turn explains it.
  for (std::size_t s = 0; s < 200; s += 10) run.segments.duration_s[s] += 0.0298;
  run.meta.run_time_s += 20 * 0.0298;
  set_cells(run, Quantized::io_time, [](std::size_t r, std::size_t s) {
    return r == 1 ? (s % 10 == 0 ? 0.030 : 0.0022) : r == 2 ? 0.0002 : 0.0;
  });
  const RunAnalysis stalled = analyze_run(run, quick_parameters());
  CHECK(stalled.io_peer_excess_s == Approx(20 * 0.0298).epsilon(0.01));
  CHECK(stalled.lost_percent == Approx(100.0 * 20 * 0.0298 / run.meta.run_time_s).margin(0.5));
}

TEST_CASE("ranks taking turns: what a rank slept bounds the loss from below, once", "[analysis]") {
  // 4 ranks on 2 CPUs, each off the CPU 1 ms per segment by turns (4 ms of
  // work in 10). Rank 1 sleeps 1.99 s reading the input in segment 0 (no
  // usable group), where the others read the same in 10 ms: an I/O stall,
  // and what it slept over the run (/ranks/slept_s). Both measure the same 1.99 s.
  RunData run = input_read_run(4e6);
  one_node(run, "2");
  set_cells(run, Quantized::io_time, [](std::size_t r, std::size_t s) { return s != 0 ? 0.0 : r == 1 ? 2.0 : 0.01; });
  set_cells(run, Quantized::wait_time, [](std::size_t r, std::size_t s) { return s == 0 && r != 1 ? 1.99 : 2e-6; });
  set_turns(run, [](std::size_t) { return 0.001; });
  for (RankInfo& rank : run.ranks) rank.slept_s = rank.rank == 1 ? 1.99 : 0.0;
  const RunAnalysis result = analyze_run(run, quick_parameters());
  REQUIRE(result.estimate_possible);
  CHECK(result.taking_turns);
  CHECK(result.lost_percent == Approx(100.0 * 1.99 / run.meta.run_time_s).margin(0.5));
  // Slept elsewhere too: the rest of what it slept is lost where it was off the CPU.
  run.ranks[1].slept_s = 2.19;
  CHECK(analyze_run(run, quick_parameters()).lost_percent == Approx(100.0 * 2.19 / run.meta.run_time_s).margin(0.5));
}

TEST_CASE("ranks taking turns: two ranks asleep in different segments both cost the run", "[analysis]") {
  // Rank 1 sleeps 1 ms in every even segment, rank 2 in every odd one; each
  // segment waits for the one asleep in it: 200 ms in all, 100 ms each. Their
  // turns are short here (1 % of each segment), so where each slept shows.
  // (Where turns are much longer than the sleeps, a rank's sleep is spread
  // over all its segments and the estimate falls toward the one that slept
  // most.)
  RunData run = taking_turns_run();
  const std::vector<double> clean = run.segments.duration_s;
  for (std::size_t s = 0; s < 200; ++s) run.segments.duration_s[s] += 0.001;
  run.meta.run_time_s += 0.2;
  const auto asleep = [](std::size_t r, std::size_t s) { return (r == 1 && s % 2 == 0) || (r == 2 && s % 2 == 1); };
  set_cells(run, Quantized::off_cpu_time,
            [&](std::size_t r, std::size_t s) { return 0.01 * clean[s] + (asleep(r, s) ? 0.001 : 0.0); });
  for (RankInfo& rank : run.ranks) {
    rank.run_queue_delay_s = 0.0;
    for (std::size_t s = 0; s < 200; ++s) rank.run_queue_delay_s += 0.01 * clean[s];
    rank.slept_s = rank.rank == 1 || rank.rank == 2 ? 0.1 : 0.0;
  }
  const RunAnalysis result = analyze_run(run, quick_parameters());
  REQUIRE(result.estimate_possible);
  CHECK(result.lost_percent == Approx(100.0 * 0.2 / run.meta.run_time_s).margin(1.0));
}

TEST_CASE("another process beside the whole run: two ranks waiting for a CPU in turn in every segment of a group",
          "[analysis]") {
  // A co-runner on the ranks' cores: in every segment of the 10 ms group
  // rank 0 and then rank 1 are descheduled 4 ms each, one after the other,
  // while the ranks on the CPU poll for them, so each takes 18 ms; the 5 ms
  // group is spared. No segment of the first group is clean, and its lowest
  // durations hold the waits too: only the summed waits show the loss.
  SyntheticSpec spec;
  spec.groups = {SyntheticGroup{1e7, 0.010, 100}, SyntheticGroup{5e6, 0.005, 100}};
  spec.counter_source = "thread_cputime";
  const auto chained = [](std::size_t s) { return s % 2 == 0; };  // the 10 ms group's segments
  for (std::size_t s = 0; s < 200; s += 2) spec.delays.push_back({s, 0.008, 1});
  RunData run = tremor::test::synthetic_run(spec);
  run.meta.schema_version = 3;
  run.meta.counter_unit = "ns";
  for (double& wait : run.segments.late_wait_s) wait = 2e-6;
  set_cells(run, Quantized::duration, [&](std::size_t, std::size_t s) { return run.segments.duration_s[s]; });
  set_cells(run, Quantized::work, [&](std::size_t, std::size_t s) { return run.segments.work[s]; });
  set_cells(run, Quantized::wait_time,
            [&](std::size_t r, std::size_t s) { return r == 0 && chained(s) ? 0.008 + 2e-6 : 2e-6; });
  set_cells(run, Quantized::off_cpu_time,
            [&](std::size_t r, std::size_t s) { return r < 2 && chained(s) ? 0.004 : 0.0; });
  for (RankInfo& rank : run.ranks) rank.run_queue_delay_s = 0.4;  // of 0.4 s off the CPU
  const RunAnalysis result = analyze_run(run, quick_parameters());
  REQUIRE(result.estimate_possible);
  CHECK(result.waiting_ranks == 4);
  const double truth = 100.0 * 100 * 0.008 / run.meta.run_time_s;
  CHECK(result.lost_percent == Approx(truth).margin(0.5));
  CHECK(result.work_critical_path_s == Approx(100 * 0.010 + 100 * 0.005).epsilon(1e-6));

  SECTION("descheduled at the same time, nobody polling: their waits overlap") {
    // The machine stalled 4 ms in each of those segments, both ranks at once.
    for (std::size_t s = 0; s < 200; s += 2) run.segments.duration_s[s] -= 0.004;
    run.meta.run_time_s -= 100 * 0.004;
    set_cells(run, Quantized::duration, [&](std::size_t, std::size_t s) { return run.segments.duration_s[s]; });
    set_cells(run, Quantized::wait_time, [](std::size_t, std::size_t) { return 2e-6; });
    const RunAnalysis stalled = analyze_run(run, quick_parameters());
    CHECK(stalled.lost_percent == Approx(100.0 * 100 * 0.004 / run.meta.run_time_s).margin(0.5));
  }
  SECTION("ranks leaving the boundaries apart: the segments overlap, the run lost at most its time beyond the work") {
    // Each rank's segment runs from its own previous exit, so the segments'
    // maxima add up to more than the run when the exits are skewed.
    run.meta.run_time_s -= 0.2;
    const RunAnalysis skewed = analyze_run(run, quick_parameters());
    const double most_s = run.meta.run_time_s - (100 * 0.010 + 100 * 0.005);
    const double most = 100.0 * most_s / run.meta.run_time_s;
    CHECK(skewed.lost_percent == Approx(most).margin(1e-6));
    CHECK(skewed.lost_percent_high <= most + 1e-9);
    const double charged = std::accumulate(skewed.segment_lost_s.begin(), skewed.segment_lost_s.end(), 0.0);
    CHECK(charged == Approx(most_s).epsilon(1e-6));
  }
}

TEST_CASE(
    "two ranks waiting for a CPU in turn in a segment of no group: their waits add up, up to its time beyond "
    "the work",
    "[analysis]") {
  // Segment 0 (its own signature, no usable group) does 10 ms of work and
  // takes 1.99 s more: ranks 0 and 1 were each descheduled 0.995 s, one
  // after the other.
  RunData run = input_read_run();
  set_cells(run, Quantized::wait_time, [](std::size_t r, std::size_t s) { return s == 0 && r == 0 ? 1.99 : 2e-6; });
  set_cells(run, Quantized::off_cpu_time, [](std::size_t r, std::size_t s) { return s == 0 && r < 2 ? 0.995 : 0.0; });
  for (RankInfo& rank : run.ranks) rank.run_queue_delay_s = 0.995;
  const RunAnalysis result = analyze_run(run, quick_parameters());
  REQUIRE(result.estimate_possible);
  CHECK(result.segment_primary_group[0] < 0);
  CHECK(result.segment_lost_s[0] == Approx(1.99).epsilon(0.01));
  // Descheduled at the same time (the whole machine stalled), the segment
  // took 0.995 s beyond its work, and that is all it lost.
  run.segments.duration_s[0] -= 0.995;
  run.meta.run_time_s -= 0.995;
  CHECK(analyze_run(run, quick_parameters()).segment_lost_s[0] == Approx(0.995).epsilon(0.01));
}

TEST_CASE("ranks descheduled at the same time while the others wait for a busier rank: their waits overlap",
          "[analysis]") {
  // Segments of 10 ms, 4 of them work on every rank and the rest
  // communication. In every segment the machine stalls 3 ms with ranks 0 and
  // 1 off the CPU at once. In 3 of 4 segments ranks 1-3 have 1 ms of work
  // where rank 0 has 4: they poll 3 ms more for rank 0, which holds up no
  // one beyond it.
  std::vector<std::size_t> every(200);
  std::iota(every.begin(), every.end(), std::size_t{0});
  RunData run = cputime_run(every, 0.003, 4e6);
  const auto lighter = [](std::size_t r, std::size_t s) { return r > 0 && s % 4 != 0; };
  for (double& wait : run.segments.late_wait_s) wait = 2e-6;
  set_cells(run, Quantized::duration, [&](std::size_t, std::size_t s) { return run.segments.duration_s[s]; });
  set_cells(run, Quantized::work, [&](std::size_t r, std::size_t s) { return lighter(r, s) ? 1e6 : 4e6; });
  set_cells(run, Quantized::wait_time, [&](std::size_t r, std::size_t s) { return lighter(r, s) ? 0.003 : 2e-6; });
  set_cells(run, Quantized::off_cpu_time, [](std::size_t r, std::size_t) { return r < 2 ? 0.003 : 0.0; });
  for (RankInfo& rank : run.ranks) rank.run_queue_delay_s = 0.6;  // of 0.6 s off the CPU
  const RunAnalysis result = analyze_run(run, quick_parameters());
  REQUIRE(result.estimate_possible);
  CHECK(result.waiting_ranks == 4);
  CHECK(result.lost_percent == Approx(100.0 * 200 * 0.003 / run.meta.run_time_s).margin(0.5));
}
