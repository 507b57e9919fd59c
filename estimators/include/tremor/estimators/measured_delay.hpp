// Measured delays as direct evidence of interference
// (docs/statistics-primary.md, "Measured delays").
//
// Two per-segment measurements show a delay without comparing a segment with
// others of its group:
// - off-CPU time before the boundary, per segment and rank (wall − thread CPU
//   time, I/O calls excluded): a busy MPI code is on the CPU nearly all the
//   time, and what it spends off it was taken by something else (other
//   processes, the hypervisor) or by a sleep inside a call;
// - the least wait in the closing collective over all ranks: the time the
//   collective took beyond the last rank's arrival, which no rank's lateness
//   explains.
// Both have a clean level of their own (an application may sleep; a
// collective has a latency), so each group's clean level is removed first.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

namespace tremor::estimators {

struct MeasuredDelayOptions {
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

struct MeasuredDelayGroup {
  double clean_level_s = 0.0;  ///< expected off-CPU time of a clean cell
  double clean_spread_s = 0.0;
  std::vector<double> excess_s;  ///< per segment: the largest excess over its ranks, >= 0
  double total_excess_s = 0.0;
};

/// `cells` is one group's measured times, row-major [ranks x segments] (one row
/// for a per-segment measure); non-finite or negative values count as 0. The
/// excess of a segment is the largest over its ranks. Empty input gives an
/// empty result.
MeasuredDelayGroup measured_excess(std::span<const double> cells, std::size_t ranks, std::size_t segments,
                                   const MeasuredDelayOptions& options = {});

}  // namespace tremor::estimators
