// Runs and helpers shared by the tests of measured delays
// (test_measured_cells.cpp, test_taking_turns.cpp).
#pragma once
#include <algorithm>
#include <functional>
#include <set>

#include "synthetic_run.hpp"
#include "test_helpers.hpp"
#include "tremor/analysis/analysis.hpp"

namespace tremor::test::measured {

using namespace tremor::analysis;
using tremor::test::quick_parameters;

// Sets every detail cell of a metric to value(row, segment), with one exact bin per value.
inline void set_cells(RunData& run, Quantized metric, const std::function<double(std::size_t, std::size_t)>& value) {
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
inline RunData cputime_run(const std::vector<std::size_t>& delayed, double delay_s, double work_ns = 1e7) {
  SyntheticSpec spec;
  spec.groups = {SyntheticGroup{work_ns, 0.010, 200}};
  spec.counter_source = tremor::CounterKind::thread_cputime;
  for (const std::size_t s : delayed) spec.delays.push_back({s, delay_s, 1});
  RunData run = tremor::test::synthetic_run(spec);
  run.meta.schema_version = 3;
  run.meta.counter_unit = "ns";
  return run;
}

// Segment 0 reads the input: its own signature (no usable group) and the
// same files, calls and bytes on every rank.
inline FeatureVector input_read_features() {
  FeatureVector reading{};
  reading[tremor::index(Feature::coll_all_to_all)] = 1;
  reading[tremor::index(Feature::io_opens)] = 3;
  reading[tremor::index(Feature::io_reads)] = 40;
  reading[tremor::index(Feature::io_bytes_read)] = 1 << 20;
  return reading;
}

// A CPU-time run whose segment 0, 1.99 s longer, reads the input on every rank.
inline RunData input_read_run(double work_ns = 1e7) {
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
inline void one_node(RunData& run, const char* cpus) {
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
inline RunData taking_turns_run() {
  SyntheticSpec spec;
  spec.groups = {SyntheticGroup{2e6, 0.010, 200}};
  spec.counter_source = tremor::CounterKind::thread_cputime;
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
inline void set_turns(RunData& run, const std::function<double(std::size_t)>& off) {
  set_cells(run, Quantized::duration, [&](std::size_t, std::size_t s) { return run.segments.duration_s[s]; });
  set_cells(run, Quantized::off_cpu_time, [&](std::size_t, std::size_t s) { return off(s); });
  for (RankInfo& rank : run.ranks) {
    rank.run_queue_delay_s = 0.0;
    for (std::size_t s = 0; s < run.segments.size(); ++s) rank.run_queue_delay_s += off(s);
  }
}

}  // namespace tremor::test::measured
