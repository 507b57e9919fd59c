// Measured off-CPU time as direct evidence of interference
// (docs/statistics-primary.md, "Measured: time off the CPU").
//
// Per segment and rank, the recorder measures the wall time before the
// boundary that the thread spent off the CPU (wall − thread CPU time, I/O
// calls excluded). A busy MPI code is on the CPU nearly all the time: what it
// spends off it was taken by something else (other processes, the hypervisor)
// or by a sleep inside a call. An application may also sleep on purpose, so
// each group's own clean level is removed first.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

namespace tremor::estimators {

struct OffCpuOptions {
  /// The group's clean level and spread come from these low quantiles of its
  /// (rank, segment) cells: at least a quarter of the cells must be clean,
  /// which holds for one slow rank among two or more.
  double low_quantile = 0.05;
  double clean_quantile = 0.25;
  /// Off-CPU time within this many clean spreads above the clean level is jitter.
  double jitter_in_spreads = 3.0;
  /// Floor of the clean spread, s: timer and quantization resolution.
  double minimum_spread_s = 2e-6;
};

struct OffCpuGroup {
  double clean_level_s = 0.0;  ///< expected off-CPU time of a clean cell
  double clean_spread_s = 0.0;
  std::vector<double> excess_s;  ///< per segment: the largest excess over its ranks, >= 0
  double total_excess_s = 0.0;
};

/// `cells` is one group's off-CPU times, row-major [ranks x segments]; non-finite
/// or negative values count as 0. Empty input gives an empty result.
OffCpuGroup off_cpu_excess(std::span<const double> cells, std::size_t ranks, std::size_t segments,
                           const OffCpuOptions& options = {});

}  // namespace tremor::estimators
