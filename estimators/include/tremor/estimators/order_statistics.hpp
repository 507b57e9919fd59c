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

}  // namespace tremor::estimators
