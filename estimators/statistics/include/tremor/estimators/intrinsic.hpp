// Tremor's primary interference estimate: the time a run lost, measured
// against each group's intrinsic duration (docs/statistics-primary.md).
//
// Model, per group g of comparable segments, in units of the group's
// intrinsic duration mu_g:
//     x / mu_g - 1 = v + B * u,   v ~ N(0, sigma^2), B ~ Bernoulli(p), u ~ Exp(mean tau)
// (the normal-exponential composed error of stochastic frontier analysis).
// sigma, p and tau are shared by all groups; mu_g is anchored on a low order
// statistic, which delays cannot move down, corrected by the expected distance
// of that order statistic below the clean mean (Blom's approximation). Each
// segment is charged its posterior expected delay E[B*u | x] (Jondrow et al.
// 1982), so clean jitter sums to about zero and a large delay counts in full.
#pragma once

#include <cstddef>
#include <random>
#include <span>
#include <vector>

#include "tremor/estimators/delay_posterior.hpp"

namespace tremor::estimators {

struct IntrinsicOptions {
  /// 1-based order statistic that anchors a small group: the 2nd smallest
  /// value, so one low outlier (a timer glitch, skipped work) does not move it.
  std::size_t anchor_rank = 2;
  /// Larger groups anchor on this quantile of their clean segments instead,
  /// which is far less noisy than an extreme and as safe from delays.
  double anchor_quantile = 0.05;
  /// Each group's clean spread is read between the anchor and this quantile of its clean segments.
  double spread_quantile = 0.25;
  /// When the durations' relative spread exceeds the work's by more than this
  /// factor (size-weighted median over groups, the larger of the quartile and
  /// the low-side (5 %-25 %) ratio), most segments were delayed and the clean
  /// spread is read only up to low_start_spread_quantile (0 turns this off).
  /// 3 lies three standard deviations of the log-ratio above 1
  /// (docs/statistics-primary.md#constants).
  double maximum_unexplained_spread_ratio = 3.0;
  double low_start_spread_quantile = 0.08;
  /// The anchor assumes at least this share of a group clean, whatever the
  /// mixture says; when most segments were delayed, at least
  /// low_start_spread_quantile (the spread is read up to there): a share near
  /// 1 would otherwise put the anchor above the clean segments' median.
  double minimum_clean_share = 0.0;
  /// The pooled clean spread is at least this many times the work's relative
  /// spread; when most segments were delayed, at most most_delayed_spread_cap_in_work_spreads times.
  double clean_spread_floor_in_work_spreads = 1.0;
  double most_delayed_spread_cap_in_work_spreads = 1.5;
  /// Floor of the pooled relative clean spread (timer resolution, bins).
  double minimum_relative_spread = 2e-4;
  /// The mean delay is at least this many clean spreads: smaller "delays"
  /// cannot be told from jitter and would only turn its skew into lost time.
  double minimum_delay_in_spreads = 4.0;
  /// Values more than this many low-side spreads below the baseline are low
  /// outliers and stay out of the mixture fit.
  double low_outlier_in_spreads = 5.0;
  /// The mixture is fitted on at most this many evenly spaced quantiles per
  /// group (weighted by the group's size), so its cost does not grow with the run.
  std::size_t fit_sample_per_group = 2000;
  /// The mixture also fits the clean spread (at least the low-side one), so
  /// a right-skewed clean jitter widens the clean part instead of counting as delays.
  bool fit_clean_spread = true;
  int outer_iterations = 3;  ///< baseline <-> mixture refinements
  /// False: the estimate holds the pooled parameters and the baselines only
  /// (no per-segment charges, no group shares or own spreads), for refits
  /// that read nothing else (lost_interval.hpp).
  bool charge_segments = true;
  int em_iterations = 200;
  double em_tolerance = 1e-9;
  /// Where the EM starts: p and tau of an earlier fit (p 0: its own start,
  /// p 0.1 and tau the large residuals' mean). A bootstrap replica starts
  /// from the run's own fit, which it differs from by sampling noise only.
  double em_start_probability = 0.0;
  double em_start_delay_mean = 0.0;
  /// The EM extrapolates its steps (SQUAREM, intrinsic.cpp): the same fixed
  /// point in fewer steps where plain EM crawls (a bootstrap refit).
  bool em_accelerate = false;
  /// > 0: the EM runs on the residuals merged into bins this many low-side
  /// spreads wide, each bin its members' weight at their weighted mean: its
  /// cost per step follows the bins, not the run (a bootstrap refit of a run
  /// of thousands of groups). The posterior's terms are smooth on the scale
  /// of sigma, so a bin of sigma / 64 moves a fit by far less than the
  /// refits' tolerance (docs/statistics-primary.md, Interval).
  double em_bin_width_in_spreads = 0.0;
};

struct GroupIntrinsic {
  double baseline = 0.0;             ///< intrinsic (clean mean) duration, s
  double lost = 0.0;                 ///< sum of the members' posterior delays, s
  double interfered_share = 0.0;     ///< mean posterior probability of a delay
  double relative_spread_own = 0.0;  ///< this group's low-side relative spread (0: too few clean values)
};

struct IntrinsicEstimate {
  double relative_spread = 0.0;      ///< pooled sigma (clean spread / intrinsic duration)
  double delay_probability = 0.0;    ///< pooled p
  double relative_delay_mean = 0.0;  ///< pooled tau (mean delay / intrinsic duration)
  std::vector<GroupIntrinsic> groups;
  std::vector<std::vector<double>> lost;         ///< [group][member] posterior expected delay, s
  std::vector<std::vector<double>> probability;  ///< [group][member] posterior P(delayed)
  double total_lost = 0.0;
  double unexplained_spread_ratio = 0.0;  ///< duration spread / work spread (0: no work given)
  double work_relative_spread = 0.0;      ///< the work's pooled relative spread (0: no work given)
  bool lower_start_chosen = false;        ///< the spread was read from the lowest values only
};

/// Expected value of the i-th smallest (1-based) of n standard normal draws,
/// Blom's approximation Phi^-1((i - 0.375) / (n + 0.25)).
double blom_normal_score(std::size_t i, std::size_t n);

/// The estimate over groups of durations (s). Groups may be empty; a group of
/// one value is its own baseline. Non-finite or non-positive durations are
/// ignored for the fit and charged nothing.
/// `work`, when given, holds each group's work values (any unit) in the same
/// shape: it tells whether the durations' spread is clean jitter.
/// `baseline_floor`, when given, is per group the least intrinsic duration
/// possible (s): the CPU time a clean segment must spend (a segment cannot
/// take less wall time than the CPU time in it).
IntrinsicEstimate estimate_intrinsic(std::span<const std::span<const double>> groups,
                                     const IntrinsicOptions& options = {},
                                     std::span<const std::span<const double>> work = {},
                                     std::span<const double> baseline_floor = {});

struct LostInterval {
  double low = 0.0;
  double high = 0.0;
};

/// Percentile interval of total_lost for this run: each replica resamples every
/// group to redraw its anchor, charges the group's members against it, and adds
/// a normal draw with the summed posterior variance of the segments' delays
/// (the pooled model held fixed). Groups larger than `sample_limit` are
/// resampled and charged through an evenly spaced subsample weighted by n / m.
LostInterval bootstrap_lost_interval(std::span<const std::span<const double>> groups, const IntrinsicEstimate& estimate,
                                     std::mt19937_64& engine, int replicas, double ci,
                                     const IntrinsicOptions& options = {}, std::size_t sample_limit = 1000);

}  // namespace tremor::estimators
