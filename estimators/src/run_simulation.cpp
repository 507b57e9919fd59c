#include "tremor/estimators/run_simulation.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "tremor/estimators/bootstrap.hpp"
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
  }
  started_ = true;
}

void RunTotals::add_per_segment(std::size_t segments, const std::vector<std::vector<double>>& per_segment) {
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
  }
}

std::vector<RunInterval> RunTotals::summarize(double fixed, double scale, double ci, double widening) const {
  std::vector<RunInterval> intervals;
  if (!available()) return intervals;
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
    intervals.push_back({expected.median, expected.ci_low, expected.ci_high, one_run.ci_low, one_run.ci_high});
  }
  return intervals;
}

}  // namespace tremor::estimators
