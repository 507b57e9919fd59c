#include "tremor/estimators/order_statistics.hpp"

#include <algorithm>
#include <array>
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

namespace {

// The weights ((j/K)^m - ((j-1)/K)^m) of empirical_expected_maximum depend on
// the sample size and m only, and a bootstrap asks for the same few pairs
// (one per scale factor) again and again: the last few are kept per thread.
// The arithmetic is the same, so the result is bit for bit the same.
const std::vector<double>& maximum_weights(std::size_t count, double m) {
  struct Entry {
    std::size_t count = 0;
    double m = std::numeric_limits<double>::quiet_NaN();
    std::vector<double> weights;
  };
  constexpr std::size_t kEntries = 8;
  thread_local std::array<Entry, kEntries> cache;
  thread_local std::size_t next = 0;
  for (const Entry& entry : cache)
    if (entry.count == count && entry.m == m) return entry.weights;
  Entry& entry = cache[next];
  next = (next + 1) % kEntries;
  entry.weights.resize(count);
  const double k = static_cast<double>(count);
  double previous_cdf_power = 0.0;  // ((j-1)/K)^m
  for (std::size_t j = 1; j <= count; ++j) {
    const double cdf_power = std::pow(static_cast<double>(j) / k, m);
    entry.weights[j - 1] = cdf_power - previous_cdf_power;
    previous_cdf_power = cdf_power;
  }
  entry.count = count;
  entry.m = m;
  return entry.weights;
}

}  // namespace

double empirical_expected_maximum(std::span<const double> sorted_sample, double m) {
  const std::size_t count = sorted_sample.size();
  if (count == 0) return std::numeric_limits<double>::quiet_NaN();
  const std::vector<double>& weights = maximum_weights(count, m);
  double expected = 0.0;
  for (std::size_t j = 0; j < count; ++j) expected += sorted_sample[j] * weights[j];
  return expected;
}

double empirical_maximum_variance(std::span<const double> sorted_sample, double m) {
  const std::size_t count = sorted_sample.size();
  if (count == 0) return std::numeric_limits<double>::quiet_NaN();
  const double mean = empirical_expected_maximum(sorted_sample, m);
  const double k = static_cast<double>(count);
  double variance = 0.0;  // centred sum: no cancellation for tightly spread maxima
  double previous_cdf_power = 0.0;
  for (std::size_t j = 1; j <= count; ++j) {
    const double cdf_power = std::pow(static_cast<double>(j) / k, m);
    const double deviation = sorted_sample[j - 1] - mean;
    variance += deviation * deviation * (cdf_power - previous_cdf_power);
    previous_cdf_power = cdf_power;
  }
  return variance;
}

}  // namespace tremor::estimators
