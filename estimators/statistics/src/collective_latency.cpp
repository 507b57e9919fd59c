#include "tremor/estimators/collective_latency.hpp"

#include <algorithm>
#include <cmath>

#include "sorted_resample.hpp"

namespace tremor::estimators {

double collective_rounds(double processes) {
  // Process counts are integers; the rounding keeps 2^j exactly j rounds.
  const double count = std::round(processes);
  return count > 1.0 ? std::ceil(std::log2(count)) : 0.0;
}

double collective_latency_growth(double latency_s, double processes, double factor) {
  const double base_rounds = collective_rounds(processes);
  if (!(base_rounds > 0.0) || !(factor > 1.0) || !std::isfinite(latency_s)) return 0.0;
  return latency_s * (collective_rounds(factor * processes) - base_rounds) / base_rounds;
}

namespace {

// Delays only add time, so the collective's own cost is the low end of the
// least waits (a rank descheduled inside the collective, or ranks taking
// turns on a core, lengthen many of them); the 5 % quantile is the anchor
// the primary estimator uses for intrinsic durations (docs/statistics-primary.md).
constexpr double kCleanQuantile = 0.05;

// Linear interpolation between order statistics (Hyndman & Fan type 7) of ascending values.
double low_quantile(std::span<const double> sorted) {
  const double position = kCleanQuantile * static_cast<double>(sorted.size() - 1);
  const auto below = static_cast<std::size_t>(position);
  const double low = sorted[below];
  if (below + 1 >= sorted.size()) return low;
  const double high = sorted[below + 1];
  return low + (position - static_cast<double>(below)) * (high - low);
}

}  // namespace

std::vector<double> collective_latency_replicas(std::span<const double> least_waits, double processes,
                                                std::size_t replicas, std::mt19937_64& engine) {
  std::vector<double> finite;
  for (const double wait : least_waits)
    if (std::isfinite(wait)) finite.push_back(std::max(0.0, wait));
  if (finite.empty() || !(collective_rounds(processes) > 0.0)) return {};
  detail::SortedResampler resampler(finite);
  std::vector<double> drawn;
  std::vector<double> latencies(replicas);
  for (double& latency : latencies) {
    resampler.draw(drawn, engine);
    latency = low_quantile(drawn);
  }
  return latencies;
}

std::vector<std::vector<double>> collective_latency_growth_of(std::span<const double> latencies, double processes,
                                                             std::span<const double> factors, std::size_t replicas) {
  std::vector<std::vector<double>> growth(factors.size(), std::vector<double>(replicas, 0.0));
  if (latencies.empty()) return growth;
  for (std::size_t r = 0; r < replicas && r < latencies.size(); ++r) {
    for (std::size_t f = 0; f < factors.size(); ++f)
      growth[f][r] = collective_latency_growth(latencies[r], processes, factors[f]);
  }
  return growth;
}

std::vector<std::vector<double>> collective_latency_growth_replicas(std::span<const double> least_waits,
                                                                    double processes, std::span<const double> factors,
                                                                    std::size_t replicas, std::mt19937_64& engine) {
  return collective_latency_growth_of(collective_latency_replicas(least_waits, processes, replicas, engine), processes,
                                      factors, replicas);
}

}  // namespace tremor::estimators
