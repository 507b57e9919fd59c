#include "tremor/estimators/order_statistics.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace tremor::estimators {
namespace {

// Median of a scratch buffer that may be reordered.
double median_of_scratch(std::vector<double>& scratch) {
  const std::size_t n = scratch.size();
  if (n == 0) return std::numeric_limits<double>::quiet_NaN();
  const auto middle = scratch.begin() + static_cast<std::ptrdiff_t>(n / 2);
  std::nth_element(scratch.begin(), middle, scratch.end());
  const double upper = *middle;
  if (n % 2 == 1) return upper;
  // The lower middle is the largest element of the left part.
  const double lower = *std::max_element(scratch.begin(), middle);
  return std::midpoint(lower, upper);  // 0.5 * (lower + upper) overflows near the double maximum
}

}  // namespace

double median(std::span<const double> values) {
  std::vector<double> scratch(values.begin(), values.end());
  return median_of_scratch(scratch);
}

double median_absolute_deviation(std::span<const double> values, double centre) {
  std::vector<double> deviations(values.size());
  std::transform(values.begin(), values.end(), deviations.begin(),
                 [centre](double value) { return std::fabs(value - centre); });
  return median_of_scratch(deviations);
}

PercentileIndices percentile_ci_indices(std::size_t replica_count, double ci) {
  if (replica_count == 0) return {};
  const double n = static_cast<double>(replica_count);
  constexpr double kRoundingSlack = 1e-9;
  const double lo = std::floor(n * (1.0 - ci) / 2.0 + kRoundingSlack);
  const double hi = std::floor(n * (1.0 + ci) / 2.0 + kRoundingSlack);
  const std::size_t last = replica_count - 1;
  return {std::min(last, static_cast<std::size_t>(std::max(0.0, lo))),
          std::min(last, static_cast<std::size_t>(std::max(0.0, hi)))};
}

PercentileSummary summarize_replicas(std::vector<double>& replicas, double ci) {
  if (replicas.empty()) {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    return {nan, nan, nan};
  }
  std::sort(replicas.begin(), replicas.end());
  const std::size_t n = replicas.size();
  const double middle = n % 2 == 1 ? replicas[n / 2] : std::midpoint(replicas[n / 2 - 1], replicas[n / 2]);
  const PercentileIndices indices = percentile_ci_indices(n, ci);
  return {middle, replicas[indices.lo], replicas[indices.hi]};
}

}  // namespace tremor::estimators
