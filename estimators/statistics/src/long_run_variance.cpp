#include "tremor/estimators/long_run_variance.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

namespace tremor::estimators {
namespace {

// γ̂_j for j in [first, last], divisor n (the biased form keeps the Bartlett
// sum non-negative). The lags are summed block by block, so each block of the
// series is read from cache once for all lags instead of once per lag: at
// 10^6 segments and ~150 lags one pass per lag was memory-bound (~0.1 s).
std::vector<double> autocovariances(const std::vector<double>& centred, std::size_t first, std::size_t last) {
  constexpr std::size_t kBlock = 2048;
  const std::size_t n = centred.size();
  const double* x = centred.data();
  std::vector<double> sums(last - first + 1, 0.0);
  for (std::size_t begin = 0; begin < n; begin += kBlock) {
    const std::size_t block_end = std::min(n, begin + kBlock);
    for (std::size_t lag = first; lag <= last && begin + lag < n; ++lag) {
      const std::size_t end = std::min(block_end, n - lag);
      // Four partial sums let the compiler overlap the multiply-adds.
      double partial[4] = {0.0, 0.0, 0.0, 0.0};
      std::size_t t = begin;
      for (; t + 4 <= end; t += 4) {
        for (std::size_t k = 0; k < 4; ++k) partial[k] += x[t + k + lag] * x[t + k];
      }
      for (; t < end; ++t) partial[0] += x[t + lag] * x[t];
      sums[lag - first] += (partial[0] + partial[1]) + (partial[2] + partial[3]);
    }
  }
  for (double& sum : sums) sum /= static_cast<double>(n);
  return sums;
}

// Newey–West (1994) automatic Bartlett lag, limited to ⌊4·n^{1/3}⌋ (and n − 1).
// `gammas` holds γ̂_0..γ̂_p for the preliminary lag p on return.
std::size_t automatic_bandwidth(const std::vector<double>& centred, std::vector<double>& gammas) {
  const double n = static_cast<double>(centred.size());
  const std::size_t limit = std::min(centred.size() - 1, static_cast<std::size_t>(std::floor(4.0 * std::cbrt(n))));
  const std::size_t preliminary =
      std::clamp<std::size_t>(static_cast<std::size_t>(std::floor(4.0 * std::pow(n / 100.0, 2.0 / 9.0))), 1, limit);
  const std::vector<double> more = autocovariances(centred, 1, preliminary);
  gammas.insert(gammas.end(), more.begin(), more.end());
  double s0 = gammas[0];
  double s1 = 0.0;
  for (std::size_t j = 1; j <= preliminary; ++j) {
    s0 += 2.0 * gammas[j];
    s1 += 2.0 * static_cast<double>(j) * gammas[j];
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
  std::vector<double> gammas = autocovariances(values, 0, 0);
  const double gamma0 = gammas[0];
  result.iid_variance = gamma0;
  // A constant series has nothing to inflate; a relative SD below 1e-12 is
  // the rounding of its mean.
  if (!(gamma0 > 1e-24 * mean * mean)) return result;
  const std::size_t bandwidth = automatic_bandwidth(values, gammas);
  if (bandwidth + 1 > gammas.size()) {
    const std::vector<double> more = autocovariances(values, gammas.size(), bandwidth);
    gammas.insert(gammas.end(), more.begin(), more.end());
  }
  double omega = gamma0;
  for (std::size_t j = 1; j <= bandwidth; ++j) {
    const double weight = 1.0 - static_cast<double>(j) / static_cast<double>(bandwidth + 1);
    omega += 2.0 * weight * gammas[j];
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
