// The interval of the primary estimate (docs/statistics-primary.md,
// "Interval"): every source of uncertainty of the lost time.
//
// The truth is this run's lost time, a realised sum. Its estimate errs by
//  - the fitted model (baselines, sigma, pi, tau, which mode the spread of
//    the work chose): a block bootstrap over each group's segments in time
//    order refits everything, and each replica charges the run's own
//    segments under its refit; replicas fit m of a group's n segments
//    (m-out-of-n, Bickel, Goetze & van Zwet 1997), their deviation scaled by
//    sqrt(m / n), so the cost does not grow with the run;
//  - which segments were delayed and by how much given their times: a
//    normal draw with the summed posterior variance;
//  - the measured delays' clean levels: a normal draw with their standard error.
// The 2.5 % and 97.5 % quantiles of the replicas give the interval; it is
// not forced to contain the point.
#pragma once
#include <cstddef>
#include <random>
#include <span>

#include "tremor/estimators/intrinsic.hpp"

namespace tremor::estimators {

struct LostIntervalOptions {
  int replicas = 200;
  double ci = 0.95;
  /// A group is refitted from at most this many of its segments per replica.
  std::size_t refit_sample = 256;
  /// Charges are summed over at most this many evenly spaced quantiles of a group.
  std::size_t charge_sample = 512;
  /// EM iterations of a replica's refit (it starts from the fit's own shape).
  int refit_em_iterations = 25;
  /// Baseline <-> mixture refinements of a replica's refit.
  int refit_outer_iterations = 2;
  /// False only in tests: the model held at its point (the anchors redrawn,
  /// sigma, pi and tau fixed, the interval made to contain the point), an
  /// interval known to cover the truth too rarely.
  bool refit = true;
};

/// Percentile interval of `estimate.total_lost` plus `measured_s` (the
/// measured delays added to it, with standard error `measured_sd_s`).
/// `groups`, `work` and `baseline_floor` are what estimate_intrinsic was
/// given (groups' values in time order).
LostInterval lost_interval(std::span<const std::span<const double>> groups, std::span<const std::span<const double>> work,
                           std::span<const double> baseline_floor, const IntrinsicEstimate& estimate, double measured_s,
                           double measured_sd_s, std::mt19937_64& engine, const LostIntervalOptions& options = {},
                           const IntrinsicOptions& model = {});

}  // namespace tremor::estimators
