#include "tremor/estimators/long_run_variance.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

namespace tremor::estimators {
namespace {

// γ̂_j with divisor n (the biased form keeps the Bartlett sum non-negative).
// Four partial sums let the compiler overlap the multiply-adds (the lag loop
// is the estimator's whole cost: n·m).
double autocovariance(const std::vector<double>& centred, std::size_t lag) {
  const std::size_t n = centred.size();
  const double* lead = centred.data() + lag;
  const double* trail = centred.data();
  const std::size_t count = n - lag;
  double sums[4] = {0.0, 0.0, 0.0, 0.0};
  std::size_t t = 0;
  for (; t + 4 <= count; t += 4) {
    for (std::size_t k = 0; k < 4; ++k) sums[k] += lead[t + k] * trail[t + k];
  }
  for (; t < count; ++t) sums[0] += lead[t] * trail[t];
  return ((sums[0] + sums[1]) + (sums[2] + sums[3])) / static_cast<double>(n);
}

// Newey–West (1994) automatic Bartlett lag, limited to ⌊4·n^{1/3}⌋ (and n − 1).
std::size_t automatic_bandwidth(const std::vector<double>& centred, double gamma0) {
  const double n = static_cast<double>(centred.size());
  const std::size_t limit = std::min(centred.size() - 1, static_cast<std::size_t>(std::floor(4.0 * std::cbrt(n))));
  const std::size_t preliminary =
      std::clamp<std::size_t>(static_cast<std::size_t>(std::floor(4.0 * std::pow(n / 100.0, 2.0 / 9.0))), 1, limit);
  double s0 = gamma0;
  double s1 = 0.0;
  for (std::size_t j = 1; j <= preliminary; ++j) {
    const double gamma = autocovariance(centred, j);
    s0 += 2.0 * gamma;
    s1 += 2.0 * static_cast<double>(j) * gamma;
  }
  if (!(s0 > 0.0)) return preliminary;
  const double lag = 1.1447 * std::cbrt((s1 / s0) * (s1 / s0)) * std::cbrt(n);
  if (!std::isfinite(lag)) return limit;
  return std::min(limit, static_cast<std::size_t>(std::floor(lag)));
}

}  // namespace

VarianceInflation variance_inflation_factor(std::span<const double> series) {
  VarianceInflation result;
  std::vector<double> values;
  values.reserve(series.size());
  for (const double value : series) {
    if (std::isfinite(value)) {
      values.push_back(value);
    } else {
      ++result.dropped_non_finite;
    }
  }
  result.length = values.size();
  if (values.size() < kMinVarianceInflationLength) return result;
  double mean = 0.0;
  for (const double value : values) mean += value;
  mean /= static_cast<double>(values.size());
  for (double& value : values) value -= mean;
  const double gamma0 = autocovariance(values, 0);
  result.iid_variance = gamma0;
  // A constant series has nothing to inflate; a relative SD below 1e-12 is
  // the rounding of its mean.
  if (!(gamma0 > 1e-24 * mean * mean)) return result;
  const std::size_t bandwidth = automatic_bandwidth(values, gamma0);
  double omega = gamma0;
  for (std::size_t j = 1; j <= bandwidth; ++j) {
    const double weight = 1.0 - static_cast<double>(j) / static_cast<double>(bandwidth + 1);
    omega += 2.0 * weight * autocovariance(values, j);
  }
  result.long_run_variance = omega;
  result.bandwidth = bandwidth;
  result.estimated = true;
  result.ratio = omega / gamma0;
  result.capped = result.ratio > kMaxVarianceInflation;
  result.factor = std::clamp(result.ratio, 1.0, kMaxVarianceInflation);
  return result;
}

}  // namespace tremor::estimators
