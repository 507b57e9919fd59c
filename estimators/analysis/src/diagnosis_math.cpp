// The pure pieces of the diagnosis: medians without one member, a segment's
// wait split into interference and imbalance, the naming rule, and the change
// points of the normalised slowdown series.
#include <algorithm>
#include <cmath>
#include <limits>
#include <queue>

#include "tremor/analysis/diagnosis.hpp"

namespace tremor::analysis::diagnosis_math {
namespace {

// -2 log-likelihood of `count` Bernoulli values summing to `sum` at their mean.
double bernoulli_cost(double sum, double count) {
  if (count <= 0.0) return 0.0;
  const double p = std::clamp(sum / count, 0.0, 1.0);
  double cost = 0.0;
  if (p > 0.0) cost -= sum * std::log(p);
  if (p < 1.0) cost -= (count - sum) * std::log1p(-p);
  return 2.0 * cost;
}

struct Candidate {
  std::size_t begin = 0;
  std::size_t end = 0;
  std::size_t split = 0;  // 0: no admissible split
  double gain = 0.0;
  bool operator<(const Candidate& other) const { return gain < other.gain; }
};

Candidate best_split(const std::vector<double>& prefix, std::size_t begin, std::size_t end, std::size_t min_length) {
  Candidate candidate{begin, end, 0, -std::numeric_limits<double>::infinity()};
  if (end - begin < 2 * min_length) return candidate;
  const double total = prefix[end] - prefix[begin];
  const double whole = bernoulli_cost(total, static_cast<double>(end - begin));
  for (std::size_t k = begin + min_length; k + min_length <= end; ++k) {
    const double left = prefix[k] - prefix[begin];
    const double gain = whole - bernoulli_cost(left, static_cast<double>(k - begin)) -
                        bernoulli_cost(total - left, static_cast<double>(end - k));
    if (gain > candidate.gain) {
      candidate.gain = gain;
      candidate.split = k;
    }
  }
  return candidate;
}

}  // namespace

double median_excluding(std::span<const double> sorted, double value) {
  const std::size_t n = sorted.size();
  if (n < 2) return std::numeric_limits<double>::quiet_NaN();
  const std::size_t middle = (n - 2) / 2;  // lower middle of the n - 1 left
  const auto position =
      static_cast<std::size_t>(std::lower_bound(sorted.begin(), sorted.end(), value) - sorted.begin());
  // Removing an element at or before the middle shifts the middle one up.
  return position <= middle ? sorted[middle + 1] : sorted[middle];
}

namespace {

// median_without into a caller's buffer: split_wait runs once per segment, and
// a fresh vector per call was a fifth of a 10^5-segment analysis.
double median_without(std::span<const double> values, std::size_t skip, std::vector<double>& others) {
  others.clear();
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i != skip && std::isfinite(values[i])) others.push_back(values[i]);
  }
  if (others.empty()) return std::numeric_limits<double>::quiet_NaN();
  const auto middle = others.begin() + static_cast<std::ptrdiff_t>((others.size() - 1) / 2);
  std::nth_element(others.begin(), middle, others.end());
  return *middle;
}

}  // namespace

double median_without(std::span<const double> values, std::size_t skip) {
  std::vector<double> others;
  return median_without(values, skip, others);
}

WaitSplit split_wait(std::span<const double> busy, std::span<const double> need, std::size_t late) {
  WaitSplit split;
  if (late >= busy.size() || busy.size() != need.size() || !std::isfinite(busy[late])) return split;
  thread_local std::vector<double> scratch;  // the analysis may run segments on several threads
  thread_local std::vector<double> beyond_need;
  const double others_busy = median_without(busy, late, scratch);
  if (!std::isfinite(others_busy)) return split;
  split.wait = std::max(0.0, busy[late] - others_busy);
  beyond_need.resize(busy.size());
  for (std::size_t r = 0; r < busy.size(); ++r) beyond_need[r] = busy[r] - need[r];
  const double others_beyond = median_without(beyond_need, late, scratch);
  const double others_need = median_without(need, late, scratch);
  if (std::isfinite(others_beyond) && std::isfinite(beyond_need[late])) {
    split.interference = std::clamp(beyond_need[late] - others_beyond, 0.0, split.wait);
  }
  if (std::isfinite(others_need) && std::isfinite(need[late])) {
    split.imbalance = std::clamp(need[late] - others_need, 0.0, split.wait - split.interference);
  }
  return split;
}

bool named_charge(double charge, double total, double weight, double run_time_s) {
  if (!(run_time_s > 0.0) || !(charge > 0.0)) return false;
  return 100.0 * (charge - weight * total) / run_time_s > kMinNamedExcessPercent;
}

std::vector<Interval> bernoulli_segmentation(std::span<const double> series, std::size_t min_length,
                                             std::size_t max_intervals) {
  const std::size_t n = series.size();
  std::vector<Interval> parts;
  if (n == 0) return parts;
  min_length = std::max<std::size_t>(1, min_length);
  std::vector<double> prefix(n + 1, 0.0);
  for (std::size_t i = 0; i < n; ++i) {
    const double value = std::isfinite(series[i]) ? std::clamp(series[i], 0.0, 1.0) : 0.0;
    prefix[i + 1] = prefix[i] + value;
  }
  // Each change point costs two parameters (level and place) in BIC terms.
  const double penalty = 2.0 * std::log(static_cast<double>(std::max<std::size_t>(n, 2)));
  std::priority_queue<Candidate> open;
  open.push(best_split(prefix, 0, n, min_length));
  std::vector<Candidate> done;
  while (!open.empty()) {
    Candidate top = open.top();
    open.pop();
    if (top.split == 0 || top.gain <= penalty || done.size() + open.size() + 2 > max_intervals) {
      done.push_back(top);
      continue;
    }
    open.push(best_split(prefix, top.begin, top.split, min_length));
    open.push(best_split(prefix, top.split, top.end, min_length));
  }
  std::sort(done.begin(), done.end(), [](const Candidate& a, const Candidate& b) { return a.begin < b.begin; });
  for (const Candidate& part : done) {
    const double mean = (prefix[part.end] - prefix[part.begin]) / static_cast<double>(part.end - part.begin);
    parts.push_back({part.begin, part.end, mean});
  }
  return parts;
}

std::vector<Interval> slow_windows(std::span<const double> series, std::size_t min_length) {
  std::vector<Interval> windows;
  for (const Interval& part : bernoulli_segmentation(series, min_length, kMaxEpisodeIntervals)) {
    if (part.mean < kEpisodeMinSlowdown || part.end - part.begin < min_length) continue;
    if (!windows.empty() && windows.back().end == part.begin) {
      Interval& last = windows.back();
      const auto a = static_cast<double>(last.end - last.begin);
      const auto b = static_cast<double>(part.end - part.begin);
      last.mean = (last.mean * a + part.mean * b) / (a + b);
      last.end = part.end;
    } else {
      windows.push_back(part);
    }
  }
  return windows;
}

}  // namespace tremor::analysis::diagnosis_math
