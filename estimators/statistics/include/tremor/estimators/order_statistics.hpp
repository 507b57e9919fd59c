// Order statistics shared by the estimators (docs/statistics.md#bootstraps, #mad-rule).
#pragma once

#include <cstddef>
#include <span>
#include <vector>

namespace tremor::estimators {

/// Median; for even n the mean of the two middle values. NaN for an empty input.
/// O(n) (selection on a copy).
double median(std::span<const double> values);

/// Median absolute deviation from `centre`, unscaled (no 1.4826 factor).
double median_absolute_deviation(std::span<const double> values, double centre);

/// 0-based indices into an ascending array of `replica_count` bootstrap replicas:
/// lo = floor(n(1-ci)/2 + 1e-9), hi = min(n-1, floor(n(1+ci)/2 + 1e-9)).
/// The 1e-9 absorbs rounding such as 100*(1-0.9)/2 = 4.999999999999999.
struct PercentileIndices {
  std::size_t lo = 0;
  std::size_t hi = 0;
};
PercentileIndices percentile_ci_indices(std::size_t replica_count, double ci);

struct PercentileSummary {
  double median = 0.0;  ///< median of the replicas
  double ci_low = 0.0;
  double ci_high = 0.0;
};
/// Sorts `replicas` in place and applies percentile_ci_indices. Requires a non-empty input.
PercentileSummary summarize_replicas(std::vector<double>& replicas, double ci);

/// E[max of m draws with replacement from the sample]:
/// Σ_j y(j)·[(j/K)^m − ((j−1)/K)^m] over the ascending sample. Requires a sorted span.
double empirical_expected_maximum(std::span<const double> sorted_sample, double m);

/// Var[max of m draws with replacement from the sample], same weights as
/// empirical_expected_maximum: the spread of one future maximum at scale m
/// (not of its estimate). Requires a sorted span; NaN when empty.
double empirical_maximum_variance(std::span<const double> sorted_sample, double m);

}  // namespace tremor::estimators
