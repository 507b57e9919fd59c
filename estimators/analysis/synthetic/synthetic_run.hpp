// Synthetic RunData with planted structure, for the analysis tests and the
// benchmark: groups of segments with known work, signature and durations.
#pragma once
#include <cstdint>
#include <vector>

#include "tremor/run_data.hpp"

namespace tremor::test {

struct SyntheticGroup {
  double work = 1e6;
  double base_duration_s = 0.01;
  std::size_t segments = 100;
};

struct PlantedDelay {
  std::size_t segment = 0;  // index in the interleaved segment table
  double extra_s = 0.0;
  std::int32_t late_rank = 0;
};

struct SyntheticSpec {
  std::vector<SyntheticGroup> groups{SyntheticGroup{}};
  std::vector<PlantedDelay> delays;
  std::int32_t world_size = 4;
  std::int32_t ranks_per_node = 2;
  std::size_t detail_ranks = 4;          // <= world_size
  double overhead_s = 0.0;               // run time beyond the segments
  bool unique_exact_signatures = false;  // every segment its own signature (fallback case)
  CounterKind counter_source = CounterKind::papi;
  std::vector<double> relative_pattern;  // cycled relative deviations; empty: the 5-value default
};

// Segments are interleaved round-robin over the groups (segment s belongs to
// group s % groups while that group has members left). Durations follow a
// fixed pattern base·(1 + {−2,−1,0,1,2}·1e-3) (or spec.relative_pattern) plus
// the planted delays.
RunData synthetic_run(const SyntheticSpec& spec);

// Group of each segment in synthetic_run's table.
std::vector<std::size_t> synthetic_group_of(const SyntheticSpec& spec);

}  // namespace tremor::test
