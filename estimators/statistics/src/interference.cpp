#include "tremor/estimators/interference.hpp"

#include <algorithm>
#include <cmath>

#include "tremor/estimators/order_statistics.hpp"

namespace tremor::estimators {

MadInterference detect_mad_interference(std::span<const double> durations, const MadOptions& options) {
  MadInterference result;
  result.interfered.assign(durations.size(), 0);
  result.impact.assign(durations.size(), 0.0);
  if (durations.empty()) return result;
  result.median = median(durations);
  result.mad = std::max(median_absolute_deviation(durations, result.median), options.minimum_mad);
  result.threshold = result.median + options.factor * result.mad;
  for (std::size_t i = 0; i < durations.size(); ++i) {
    if (durations[i] > result.threshold) {  // strict: t == threshold is not interfered
      result.interfered[i] = 1;
      result.impact[i] = durations[i] - result.threshold;
      result.total_impact += result.impact[i];
      ++result.interfered_count;
    }
  }
  return result;
}

double run_interference_percent(double total_impact, double run_time) {
  if (!(run_time > 0.0) || !std::isfinite(run_time)) return 0.0;
  return 100.0 * total_impact / run_time;
}

ContinuousInterference continuous_interference(std::span<const double> durations) {
  ContinuousInterference result;
  if (durations.empty()) return result;
  result.median = median(durations);
  result.baseline = *std::min_element(durations.begin(), durations.end());
  result.impact = static_cast<double>(durations.size()) * (result.median - result.baseline);
  return result;
}

InterferenceClass classify_interference(double percent, const ClassBoundaries& boundaries) {
  if (percent < boundaries.medium_from) return InterferenceClass::low;
  if (percent > boundaries.high_above) return InterferenceClass::high;
  return InterferenceClass::medium;
}

std::string_view to_string(InterferenceClass interference_class) {
  switch (interference_class) {
    case InterferenceClass::low:
      return "low";
    case InterferenceClass::medium:
      return "medium";
    case InterferenceClass::high:
      return "high";
  }
  return "unknown";
}

double high_interference_probability(double percent, const LogisticParameters& parameters) {
  const double z = -parameters.steepness * (percent - parameters.midpoint);
  // Only exp of a non-positive argument is evaluated, so nothing overflows.
  if (z <= 0.0) return 1.0 / (1.0 + std::exp(z));
  const double e = std::exp(-z);
  return e / (1.0 + e);
}

}  // namespace tremor::estimators
