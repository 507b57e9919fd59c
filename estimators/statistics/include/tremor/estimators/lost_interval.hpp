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
//  - the measured delays: their clean levels' standard error, and what the
//    durations say of them (measured_error_variance): a normal draw.
// The 2.5 % and 97.5 % quantiles of the replicas give the interval; it is
// not forced to contain the point.
#pragma once
#include <cstddef>
#include <random>
#include <span>

#include "tremor/estimators/intrinsic.hpp"

namespace tremor::estimators {

// The interval's bootstrap replicas. Fixed: the interval's coverage was
// measured with 200 by the accuracy campaigns (docs/statistics-primary.md),
// and TREMOR_BOOTSTRAP_REPLICAS sets the predictions' replicas only.
inline constexpr int kIntervalReplicas = 200;

struct LostIntervalOptions {
  int replicas = kIntervalReplicas;
  double ci = 0.95;
  /// A group is refitted from at most this many of its segments per replica.
  std::size_t refit_sample = 256;
  /// Charges are summed over at most this many evenly spaced quantiles of a group.
  std::size_t charge_sample = 512;
  /// A replica's refit starts its EM at the run's own p and tau,
  /// extrapolates its steps (SQUAREM, intrinsic.hpp) and stops when p, tau
  /// and sigma change by less than refit_em_tolerance (relative for tau and
  /// sigma) or after refit_em_iterations EM steps. On the 63 replays the
  /// interval's ends lie within 0.01 pp (1.2 % of the width) of fully
  /// converged refits' (tolerance 1e-9), below the 200 replicas' own Monte
  /// Carlo error (about 5 % of the width at each end);
  /// docs/statistics-primary.md, Interval.
  double refit_em_tolerance = 1e-4;
  int refit_em_iterations = 25;
  /// A replica's EM runs on its residuals merged into bins of this many
  /// low-side spreads (IntrinsicOptions::em_bin_width_in_spreads).
  double refit_em_bin_width_in_spreads = 1.0 / 64.0;
  /// Baseline <-> mixture refinements of a replica's refit.
  int refit_outer_iterations = 2;
  /// False only in tests: the model held at its point (the anchors redrawn,
  /// sigma, pi and tau fixed, the interval made to contain the point), an
  /// interval known to cover the truth too rarely.
  bool refit = true;
  /// Threads refitting replicas (0: automatic; estimators/parallel.hpp);
  /// any count gives the same interval, digit for digit.
  int threads = 1;
};

/// Percentile interval of `estimate.total_lost` plus `measured_s` (the
/// measured delays added to it, with standard error `measured_sd_s`).
/// `groups`, `work` and `baseline_floor` are what estimate_intrinsic was
/// given (groups' values in time order).
LostInterval lost_interval(std::span<const std::span<const double>> groups, std::span<const std::span<const double>> work,
                           std::span<const double> baseline_floor, const IntrinsicEstimate& estimate, double measured_s,
                           double measured_sd_s, std::mt19937_64& engine, const LostIntervalOptions& options = {},
                           const IntrinsicOptions& model = {});

/// One segment charged a measured delay, read against its duration: what the
/// duration leaves beyond its group's intrinsic time, the measured delay and
/// the model's posterior delay (`residual_s`, signed), and the variance the
/// model itself gives that residual (its clean jitter's, (sigma x baseline)^2,
/// plus the posterior delay's).
struct MeasuredResidual {
  double residual_s = 0.0;
  double model_variance_s2 = 0.0;
};

/// The mean square error of the measured delays' sum. Over the measured
/// segments the durations give a second reading of the same delays; where the
/// two disagree beyond the model's own variance, the measurement erred (it
/// read time the segments did not lose, or missed time they did). Method of
/// moments: each segment's own error from the residuals' spread beyond the
/// model's variance; an error all segments share from their squared sum
/// beyond that (one draw). Measurements the durations bear out leave the
/// interval as it was.
double measured_error_variance(std::span<const MeasuredResidual> residuals);

}  // namespace tremor::estimators
