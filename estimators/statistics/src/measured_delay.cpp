#include "tremor/estimators/measured_delay.hpp"

#include <algorithm>
#include <boost/math/special_functions/erf.hpp>
#include <cmath>
#include <limits>
#include <numbers>

namespace tremor::estimators {
namespace {

double normal_quantile(double probability) { return -std::numbers::sqrt2 * boost::math::erfc_inv(2.0 * probability); }

double clean_value(double value) { return std::isfinite(value) && value > 0.0 ? value : 0.0; }

// Quantile (nearest rank) of values partially reordered in place: a
// selection, not a sort (10^7 cells at 10^6 segments of many detail ranks).
double select_quantile(std::vector<double>& values, double q) {
  const auto last = static_cast<double>(values.size() - 1);
  const auto rank = static_cast<std::ptrdiff_t>(std::llround(std::clamp(q, 0.0, 1.0) * last));
  std::nth_element(values.begin(), values.begin() + rank, values.end());
  return values[static_cast<std::size_t>(rank)];
}

}  // namespace

MeasuredDelayGroup measured_excess(std::span<const double> cells, std::size_t ranks, std::size_t segments,
                                   const MeasuredDelayOptions& options, std::span<const std::uint8_t> waiting_rows) {
  MeasuredDelayGroup group;
  if (ranks == 0 || segments == 0 || cells.size() < ranks * segments) return group;
  // The level needs no more than 2^18 cells: beyond, every k-th.
  constexpr std::size_t kMaxLevelCells = std::size_t{1} << 18;
  const std::size_t count = ranks * segments;
  const std::size_t stride = std::max<std::size_t>(1, count / kMaxLevelCells);
  std::vector<double> values;
  values.reserve(count / stride + 1);
  for (std::size_t i = 0; i < count; i += stride) values.push_back(clean_value(cells[i]));
  // Clean cells are normal around the level: the two low quantiles give the
  // spread, the upper one of them plus its normal score the level.
  const double low = select_quantile(values, options.low_quantile);
  const double high = select_quantile(values, options.clean_quantile);
  const double z_low = normal_quantile(options.low_quantile);
  const double z_high = normal_quantile(options.clean_quantile);
  group.clean_spread_s = std::max(options.minimum_spread_s, (high - low) / (z_high - z_low));
  group.clean_level_s = std::max(0.0, high - z_high * group.clean_spread_s);
  const double threshold =
      std::min(options.threshold_cap_s, group.clean_level_s + options.jitter_in_spreads * group.clean_spread_s);
  group.threshold_s = threshold;
  group.charge_level_s = std::min(group.clean_level_s, threshold);
  // Time spent runnable without a CPU is never the application's own sleep.
  const double waiting_threshold = std::min(threshold, waiting_threshold_s(options));
  group.excess_s.assign(segments, 0.0);
  const bool any_waiting = std::find(waiting_rows.begin(), waiting_rows.end(), std::uint8_t{1}) != waiting_rows.end();
  if (any_waiting) group.waiting_sum_s.assign(segments, 0.0);
  // A cell over the threshold is charged its excess over the clean level, as
  // the primary model charges a delay its excess over the intrinsic time: the
  // jitter allowance decides whether a cell was delayed, not how much.
  for (std::size_t r = 0; r < ranks; ++r) {
    const bool waiting = r < waiting_rows.size() && waiting_rows[r] != 0;
    const double row_threshold = waiting ? waiting_threshold : threshold;
    const double row_level = waiting ? 0.0 : group.charge_level_s;
    for (std::size_t s = 0; s < segments; ++s) {
      const double excess = excess_over_level(clean_value(cells[r * segments + s]), row_threshold, row_level);
      group.excess_s[s] = std::max(group.excess_s[s], excess);
      if (waiting) group.waiting_sum_s[s] += std::max(0.0, excess);
    }
  }
  for (const double excess : group.excess_s) {
    group.total_excess_s += excess;
    if (excess > 0.0) ++group.charged_segments;
  }
  // Var of a sample q-quantile: q (1 - q) / (n f(x_q)^2), f normal with the clean spread.
  const double q = options.clean_quantile;
  const double density = std::exp(-0.5 * z_high * z_high) / std::sqrt(2.0 * std::numbers::pi);
  group.level_standard_error_s =
      group.clean_spread_s * std::sqrt(q * (1.0 - q) / static_cast<double>(values.size())) / density;
  return group;
}

double waiting_threshold_s(const MeasuredDelayOptions& options) {
  return options.jitter_in_spreads * options.minimum_spread_s;
}

bool off_cpu_mostly_waiting(double run_queue_delay_s, double off_cpu_total_s, double waiting_share) {
  if (!std::isfinite(run_queue_delay_s) || !std::isfinite(off_cpu_total_s) || run_queue_delay_s < 0.0) return false;
  return off_cpu_total_s <= 0.0 || run_queue_delay_s >= waiting_share * off_cpu_total_s;
}

namespace {

// The time `rank` would take at the speed of `peer`: infinite when the peer
// did not do some kind of I/O the rank did (no comparison).
double time_at_speed_of(const RankIo& rank, const RankIo& peer) {
  double ratio = 0.0;
  for (std::size_t k = 0; k < rank.amounts.size(); ++k) {
    if (!(rank.amounts[k] > 0.0)) continue;
    if (!(peer.amounts[k] > 0.0)) return std::numeric_limits<double>::infinity();
    ratio = std::max(ratio, rank.amounts[k] / peer.amounts[k]);
  }
  return peer.time_s * ratio;
}

bool has_io(const RankIo& rank) {
  return std::any_of(rank.amounts.begin(), rank.amounts.end(), [](double amount) { return amount > 0.0; });
}

}  // namespace

void io_stalls(std::span<const RankIo> ranks, double stall_factor, std::vector<double>& beyond) {
  beyond.assign(ranks.size(), 0.0);
  double longest_turn = 0.0;
  for (const RankIo& rank : ranks) {
    if (rank.takes_turns && has_io(rank)) longest_turn = std::max(longest_turn, rank.off_cpu_s);
  }
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    if (!has_io(ranks[r]) || !std::isfinite(ranks[r].time_s)) continue;
    double expected = std::numeric_limits<double>::infinity();
    for (std::size_t p = 0; p < ranks.size(); ++p) {
      if (p != r && has_io(ranks[p]) && ranks[p].time_s >= 0.0)
        expected = std::min(expected, time_at_speed_of(ranks[r], ranks[p]));
    }
    if (!std::isfinite(expected) || ranks[r].time_s < stall_factor * expected) continue;
    const double excess = ranks[r].time_s - expected;
    if (ranks[r].takes_turns && excess <= longest_turn) continue;
    beyond[r] = excess;
  }
}

NodeCpuTime node_cpu_time(double cpus, std::span<const double> own_duration_s, std::span<const double> off_cpu_s,
                          std::span<const double> slept_cap_s) {
  NodeCpuTime node;
  if (!(cpus > 0.0) || own_duration_s.empty()) return node;
  double ran_or_slept = 0.0;
  double duration_sum = 0.0;
  for (std::size_t r = 0; r < own_duration_s.size(); ++r) {
    const double duration = std::isfinite(own_duration_s[r]) ? std::max(0.0, own_duration_s[r]) : 0.0;
    const double off_value = r < off_cpu_s.size() ? off_cpu_s[r] : duration;
    const double off = std::clamp(std::isfinite(off_value) ? off_value : duration, 0.0, duration);
    // Unknown (absent, NaN): it may have slept all its time off the CPU.
    const double cap = r < slept_cap_s.size() && !std::isnan(slept_cap_s[r]) ? std::max(0.0, slept_cap_s[r]) : off;
    ran_or_slept += (duration - off) + std::min(off, cap);
    duration_sum += duration;
  }
  node.capacity_s = cpus * duration_sum / static_cast<double>(own_duration_s.size());
  node.free_s = node.capacity_s - ran_or_slept;
  return node;
}

std::vector<double> foreign_cpu_share(std::span<const NodeCpuTime> segments, double alone_capacity_s,
                                      std::size_t half_window) {
  const std::size_t n = segments.size();
  std::vector<double> share(n, 0.0);
  const auto read_share = [](double free_s, double capacity_s) {
    return capacity_s > 0.0 ? std::clamp(free_s / capacity_s, 0.0, 1.0) : 0.0;
  };
  // The short segments, in order, with prefix sums: each window's sums in O(1).
  std::vector<std::size_t> short_segments;
  std::vector<double> capacity{0.0};
  std::vector<double> free{0.0};
  for (std::size_t s = 0; s < n; ++s) {
    const NodeCpuTime& time = segments[s];
    if (!(time.capacity_s > 0.0)) continue;
    if (time.capacity_s >= alone_capacity_s) {
      share[s] = read_share(time.free_s, time.capacity_s);
      continue;
    }
    short_segments.push_back(s);
    capacity.push_back(capacity.back() + time.capacity_s);
    free.push_back(free.back() + time.free_s);
  }
  const std::size_t m = short_segments.size();
  for (std::size_t i = 0; i < m; ++i) {
    const std::size_t first = i > half_window ? i - half_window : 0;
    const std::size_t end = std::min(m, i + half_window + 1);
    share[short_segments[i]] = read_share(free[end] - free[first], capacity[end] - capacity[first]);
  }
  return share;
}

}  // namespace tremor::estimators
