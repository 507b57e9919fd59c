#include "tremor/estimators/run_simulation.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "tremor/estimators/order_statistics.hpp"

namespace tremor::estimators {
namespace {

// One maximum of `factor` draws: the law's quantile at exp(−E/factor).
double one_maximum(const MaximumLaw& law, double factor, double log_factor, double exponential,
                   double log_exponential) {
  if (law.empirical) {
    const std::size_t count = law.sorted_sample.size();
    const double level = std::exp(-exponential / factor);
    const auto rank = static_cast<std::size_t>(std::ceil(static_cast<double>(count) * level));
    return law.sorted_sample[std::clamp<std::size_t>(rank, 1, count) - 1];
  }
  const GevParams& p = law.gev;
  // y = −ln(−ln F) = ln f − ln E; x = ξ − α·expm1(−k y)/k (docs/statistics.md#parameterisation).
  const double value = std::fabs(p.k) < kGumbelBranchK
                           ? p.loc + p.scale * (log_factor - log_exponential)
                           : p.loc - p.scale * std::expm1(p.k * (log_exponential - log_factor)) / p.k;
  return std::max(value, law.lowest);
}

double law_mean(const MaximumLaw& law, double factor) {
  return law.empirical ? empirical_expected_maximum(law.sorted_sample, factor)
                       : exact_expected_maximum(law.gev, factor);
}

}  // namespace

void RunDraws::draw(std::size_t segments, std::mt19937_64& engine) {
  const std::size_t count = std::min(segments, kExactRunDraws);
  exponential.resize(count);
  log_exponential.resize(count);
  for (std::size_t j = 0; j < count; ++j) {
    // U in (0, 1), never 0 or 1, so E is finite and positive.
    const double uniform = (static_cast<double>(engine() >> 11) + 0.5) / 9007199254740992.0;
    exponential[j] = -std::log(uniform);
    log_exponential[j] = std::log(exponential[j]);
  }
}

double simulated_run_sum(const MaximumLaw& law, double factor, std::size_t segments, const RunDraws& draws) {
  const std::size_t exact = std::min(segments, draws.exponential.size());
  if (exact == 0 || (law.empirical && law.sorted_sample.empty())) {
    return segments == 0 ? 0.0 : std::numeric_limits<double>::quiet_NaN();
  }
  const double log_factor = std::log(factor);
  double sum = 0.0;
  for (std::size_t j = 0; j < exact; ++j) {
    sum += one_maximum(law, factor, log_factor, draws.exponential[j], draws.log_exponential[j]);
  }
  if (segments == exact) return sum;
  const double ratio = static_cast<double>(segments) / static_cast<double>(exact);
  const double growth = std::pow(ratio, law.empirical ? 0.5 : std::max(0.5, -law.gev.k));
  const double mean = law_mean(law, factor);
  if (!std::isfinite(mean)) return growth * sum;  // k <= −1: no mean, sums grow as n^−k
  return static_cast<double>(segments) * mean + growth * (sum - static_cast<double>(exact) * mean);
}

std::vector<std::size_t> replica_choice(std::size_t distinct, std::size_t replicas, std::mt19937_64& engine) {
  std::vector<std::size_t> choice(replicas);
  if (distinct >= replicas || distinct == 0) {
    for (std::size_t r = 0; r < replicas; ++r) choice[r] = r;
    return choice;
  }
  std::uniform_int_distribution<std::size_t> pick(0, distinct - 1);
  for (std::size_t& index : choice) index = pick(engine);
  return choice;
}

namespace {

std::vector<double> taken(const std::vector<double>& values, std::span<const std::size_t> choice) {
  std::vector<double> result;
  result.reserve(choice.size());
  for (const std::size_t index : choice) {
    if (index < values.size()) result.push_back(values[index]);
  }
  return result;
}

// The variance of the values' mean over `distinct` draws (0 when every
// replica is its own draw: the percentiles' own error covers it).
double mean_shift_variance(const std::vector<double>& values, std::size_t distinct) {
  if (distinct == 0 || distinct >= values.size() || values.size() < 2) return 0.0;
  double mean = 0.0;
  for (const double v : values) mean += v;
  mean /= static_cast<double>(values.size());
  double squares = 0.0;
  for (const double v : values) squares += (v - mean) * (v - mean);
  return squares / static_cast<double>(values.size() - 1) / static_cast<double>(distinct);
}

// The standard error of the (1 − ci)/2 percentile of `count` normal draws of
// standard deviation `sd`: √(p(1 − p)/count)/φ(z_p).
double percentile_standard_error(double sd, double ci, std::size_t count) {
  if (count < 2 || !(sd > 0.0)) return 0.0;
  const double p = 0.5 * (1.0 - ci);
  // z_p by bisection on the normal tail (erfc), to 1e-9: no table, no library.
  double low = 0.0, high = 10.0;
  for (int i = 0; i < 60; ++i) {
    const double middle = 0.5 * (low + high);
    (0.5 * std::erfc(middle / std::sqrt(2.0)) > p ? low : high) = middle;
  }
  const double z = 0.5 * (low + high);
  const double density = std::exp(-0.5 * z * z) / std::sqrt(2.0 * 3.141592653589793);
  return sd * std::sqrt(p * (1.0 - p) / static_cast<double>(count)) / density;
}

double standard_deviation(const std::vector<double>& values) {
  if (values.size() < 2) return 0.0;
  double mean = 0.0;
  for (const double v : values) mean += v;
  mean /= static_cast<double>(values.size());
  double squares = 0.0;
  for (const double v : values) squares += (v - mean) * (v - mean);
  return std::sqrt(squares / static_cast<double>(values.size() - 1));
}

}  // namespace

GroupReplicas take_replicas(const GroupReplicas& group, std::span<const std::size_t> choice) {
  GroupReplicas result;
  result.segments = group.segments;
  result.points = group.points;
  result.failed.assign(group.failed.size(), 0);
  result.distinct = group.expected.empty() ? 0 : group.expected.front().size();
  result.expected.resize(group.expected.size());
  result.one_run.resize(group.one_run.size());
  for (std::size_t f = 0; f < group.expected.size(); ++f) {
    result.expected[f] = taken(group.expected[f], choice);
    if (f < group.one_run.size()) result.one_run[f] = taken(group.one_run[f], choice);
    // Which replicas failed is not kept: the taken ones fail in the same share.
    if (f < group.failed.size() && result.distinct > 0) {
      result.failed[f] = static_cast<std::size_t>(std::llround(static_cast<double>(group.failed[f]) *
                                                                static_cast<double>(choice.size()) /
                                                                static_cast<double>(result.distinct)));
    }
  }
  return result;
}

std::vector<std::vector<double>> take_replicas(const std::vector<std::vector<double>>& per_factor,
                                               std::span<const std::size_t> choice) {
  std::vector<std::vector<double>> result;
  result.reserve(per_factor.size());
  for (const std::vector<double>& values : per_factor) result.push_back(taken(values, choice));
  return result;
}

void RunTotals::add(const GroupReplicas& group, double offset) {
  const auto segments = static_cast<double>(group.segments);
  if (group.expected.size() != expected_.size() || group.failed.size() != expected_.size()) {
    available_ = false;
    return;
  }
  for (std::size_t f = 0; f < expected_.size(); ++f) {
    const std::vector<double>& expected = group.expected[f];
    if (expected.empty() || (started_ && expected.size() != expected_[f].size())) {
      available_ = false;
      return;
    }
    if (!started_) {
      expected_[f].assign(expected.size(), 0.0);
      one_run_[f].assign(expected.size(), 0.0);
    }
    const bool simulated = f < group.one_run.size() && group.one_run[f].size() == expected.size();
    for (std::size_t r = 0; r < expected.size(); ++r) {
      expected_[f][r] += segments * (expected[r] + offset);
      // A group without simulated runs adds its expected value (no spread of one run).
      one_run_[f][r] += (simulated ? group.one_run[f][r] : segments * expected[r]) + segments * offset;
    }
    failed_[f] += group.failed[f];
    group_replicas_[f] += expected.size();
    if (group.distinct > 0 && group.distinct < expected.size()) {
      std::vector<double> totals(expected.size()), runs(expected.size());
      for (std::size_t r = 0; r < expected.size(); ++r) {
        totals[r] = segments * (expected[r] + offset);
        runs[r] = (simulated ? group.one_run[f][r] : segments * expected[r]) + segments * offset;
      }
      shift_expected_[f] += mean_shift_variance(totals, group.distinct);
      shift_one_run_[f] += mean_shift_variance(runs, group.distinct);
    }
  }
  started_ = true;
}

void RunTotals::add_per_segment(std::size_t segments, const std::vector<std::vector<double>>& per_segment,
                                std::size_t distinct) {
  if (!started_ || per_segment.size() != expected_.size()) {
    available_ = false;
    return;
  }
  const auto count = static_cast<double>(segments);
  for (std::size_t f = 0; f < expected_.size(); ++f) {
    if (per_segment[f].size() != expected_[f].size()) {
      available_ = false;
      return;
    }
    for (std::size_t r = 0; r < expected_[f].size(); ++r) {
      expected_[f][r] += count * per_segment[f][r];
      one_run_[f][r] += count * per_segment[f][r];
    }
    if (distinct > 0 && distinct < per_segment[f].size()) {
      std::vector<double> totals(per_segment[f].size());
      for (std::size_t r = 0; r < totals.size(); ++r) totals[r] = count * per_segment[f][r];
      const double shift = mean_shift_variance(totals, distinct);
      shift_expected_[f] += shift;
      shift_one_run_[f] += shift;
    }
  }
}

std::vector<RunInterval> RunTotals::summarize(double fixed, double scale, double ci, double widening) const {
  std::vector<RunInterval> intervals;
  if (!available()) return intervals;
  // The ends' Monte Carlo error: the percentile's own over the run's
  // replicas, and the mean shifts of groups with fewer distinct replicas.
  const auto end_error = [&](const std::vector<double>& replicas, double shift) {
    std::vector<double> totals(replicas.size());
    for (std::size_t r = 0; r < replicas.size(); ++r) totals[r] = scale * (fixed + replicas[r]);
    const double own = percentile_standard_error(standard_deviation(totals), ci, totals.size());
    return widening * std::sqrt(own * own + scale * scale * shift);
  };
  const auto interval = [&](const std::vector<double>& replicas) {
    std::vector<double> totals(replicas.size());
    for (std::size_t r = 0; r < replicas.size(); ++r) totals[r] = scale * (fixed + replicas[r]);
    const PercentileSummary summary = summarize_replicas(totals, ci);
    // A run takes no less than no time: a widened interval stops at 0 s.
    return PercentileSummary{summary.median, std::max(0.0, summary.median - widening * (summary.median - summary.ci_low)),
                             summary.median + widening * (summary.ci_high - summary.median)};
  };
  for (std::size_t f = 0; f < expected_.size(); ++f) {
    const PercentileSummary expected = interval(expected_[f]);
    const PercentileSummary one_run = interval(one_run_[f]);
    const double error =
        std::max(end_error(expected_[f], shift_expected_[f]), end_error(one_run_[f], shift_one_run_[f]));
    intervals.push_back(
        {expected.median, expected.ci_low, expected.ci_high, one_run.ci_low, one_run.ci_high, error});
  }
  return intervals;
}

}  // namespace tremor::estimators
