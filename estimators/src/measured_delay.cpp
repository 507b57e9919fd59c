#include "tremor/estimators/measured_delay.hpp"

#include <algorithm>
#include <boost/math/special_functions/erf.hpp>
#include <cmath>
#include <numbers>

namespace tremor::estimators {
namespace {

double normal_quantile(double probability) { return -std::numbers::sqrt2 * boost::math::erfc_inv(2.0 * probability); }

double clean_value(double value) { return std::isfinite(value) && value > 0.0 ? value : 0.0; }

// Quantile of sorted values (nearest rank).
double quantile_of_sorted(const std::vector<double>& sorted, double q) {
  const auto last = static_cast<double>(sorted.size() - 1);
  return sorted[static_cast<std::size_t>(std::llround(std::clamp(q, 0.0, 1.0) * last))];
}

}  // namespace

MeasuredDelayGroup measured_excess(std::span<const double> cells, std::size_t ranks, std::size_t segments,
                                   const MeasuredDelayOptions& options, std::span<const std::uint8_t> waiting_rows) {
  MeasuredDelayGroup group;
  if (ranks == 0 || segments == 0 || cells.size() < ranks * segments) return group;
  std::vector<double> sorted(cells.begin(), cells.begin() + static_cast<std::ptrdiff_t>(ranks * segments));
  for (double& value : sorted) value = clean_value(value);
  std::sort(sorted.begin(), sorted.end());
  // Clean cells are normal around the level: the two low quantiles give the
  // spread, the upper one of them plus its normal score the level.
  const double low = quantile_of_sorted(sorted, options.low_quantile);
  const double high = quantile_of_sorted(sorted, options.clean_quantile);
  const double z_low = normal_quantile(options.low_quantile);
  const double z_high = normal_quantile(options.clean_quantile);
  group.clean_spread_s = std::max(options.minimum_spread_s, (high - low) / (z_high - z_low));
  group.clean_level_s = std::max(0.0, high - z_high * group.clean_spread_s);
  const double threshold =
      std::min(options.threshold_cap_s, group.clean_level_s + options.jitter_in_spreads * group.clean_spread_s);
  group.threshold_s = threshold;
  // Time spent runnable without a CPU is never the application's own sleep.
  const double waiting_threshold = std::min(threshold, waiting_threshold_s(options));
  group.excess_s.assign(segments, 0.0);
  const bool any_waiting = std::find(waiting_rows.begin(), waiting_rows.end(), std::uint8_t{1}) != waiting_rows.end();
  if (any_waiting) group.waiting_sum_s.assign(segments, 0.0);
  for (std::size_t r = 0; r < ranks; ++r) {
    const bool waiting = r < waiting_rows.size() && waiting_rows[r] != 0;
    for (std::size_t s = 0; s < segments; ++s) {
      const double excess = clean_value(cells[r * segments + s]) - (waiting ? waiting_threshold : threshold);
      group.excess_s[s] = std::max(group.excess_s[s], excess);
      if (waiting) group.waiting_sum_s[s] += std::max(0.0, excess);
    }
  }
  for (const double excess : group.excess_s) group.total_excess_s += excess;
  return group;
}

double waiting_threshold_s(const MeasuredDelayOptions& options) {
  return options.jitter_in_spreads * options.minimum_spread_s;
}

bool off_cpu_mostly_waiting(double run_queue_delay_s, double off_cpu_total_s, double waiting_share) {
  if (!std::isfinite(run_queue_delay_s) || !std::isfinite(off_cpu_total_s) || run_queue_delay_s < 0.0) return false;
  return off_cpu_total_s <= 0.0 || run_queue_delay_s >= waiting_share * off_cpu_total_s;
}

}  // namespace tremor::estimators
