#include "tremor/estimators/intrinsic.hpp"

#include <algorithm>
#include <array>
#include <boost/math/special_functions/erf.hpp>
#include <cmath>
#include <cstdint>
#include <numbers>

#include "tremor/estimators/order_statistics.hpp"

namespace tremor::estimators {
namespace {

double normal_quantile(double probability) { return -std::numbers::sqrt2 * boost::math::erfc_inv(2.0 * probability); }

// One group's finite, positive durations in ascending order.
std::vector<double> sorted_valid(std::span<const double> values) {
  std::vector<double> sorted;
  sorted.reserve(values.size());
  for (const double value : values) {
    if (std::isfinite(value) && value > 0.0) sorted.push_back(value);
  }
  std::sort(sorted.begin(), sorted.end());
  return sorted;
}

// Clean members expected in a group of n with interfered share p (at least 1,
// and at least the share the options assume clean).
std::size_t clean_count(std::size_t n, double interfered_share, const IntrinsicOptions& options) {
  const double clean = std::round(static_cast<double>(n) *
                                  std::max(1.0 - interfered_share, std::clamp(options.minimum_clean_share, 0.0, 1.0)));
  return std::clamp<std::size_t>(static_cast<std::size_t>(std::max(clean, 1.0)), 1, std::max<std::size_t>(n, 1));
}

// 1-based rank of the anchoring order statistic.
std::size_t anchor_rank(std::size_t n, std::size_t clean, const IntrinsicOptions& options) {
  if (n < 4) return 1;
  const auto by_quantile = static_cast<std::size_t>(std::ceil(options.anchor_quantile * static_cast<double>(clean)));
  return std::min(n, std::max(options.anchor_rank, by_quantile));
}

// Intrinsic duration from the anchor: x_(k) = mu (1 + sigma z_k) with z_k the
// expected normal score of rank k among the clean members.
double anchored_baseline(std::span<const double> sorted, double sigma, double interfered_share,
                         const IntrinsicOptions& options) {
  const std::size_t n = sorted.size();
  if (n == 0) return 0.0;
  const std::size_t clean = clean_count(n, interfered_share, options);
  const std::size_t k = anchor_rank(n, clean, options);
  if (k == 1 && n < 4) return sorted[0];
  const double z = blom_normal_score(k, std::max(clean, k));
  return sorted[k - 1] / std::max(0.5, 1.0 + sigma * z);
}

// Relative clean spread from two low order statistics of the clean members;
// 0 when the group has too few of them.
double low_side_spread(std::span<const double> sorted, double interfered_share, const IntrinsicOptions& options) {
  const std::size_t n = sorted.size();
  if (n < 4) return 0.0;
  const std::size_t clean = clean_count(n, interfered_share, options);
  const std::size_t k = anchor_rank(n, clean, options);
  const auto upper_rank =
      std::max(k + 2, static_cast<std::size_t>(std::ceil(options.spread_quantile * static_cast<double>(clean))));
  if (upper_rank > clean || upper_rank > n) return 0.0;
  const double z_low = blom_normal_score(k, clean);
  const double z_high = blom_normal_score(upper_rank, clean);
  const double x_low = sorted[k - 1];
  const double x_high = sorted[upper_rank - 1];
  // Solve x_low = mu (1 + s z_low), x_high = mu (1 + s z_high) for s.
  const double denominator = x_low * z_high - x_high * z_low;
  if (!(denominator > 0.0)) return 0.0;
  return std::max(0.0, (x_high - x_low) / denominator);
}

struct WeightedValue {
  double value;
  double weight;
};

double weighted_median(std::vector<WeightedValue> values) {
  if (values.empty()) return 0.0;
  std::sort(values.begin(), values.end(), [](const auto& a, const auto& b) { return a.value < b.value; });
  double total = 0.0;
  for (const auto& v : values) total += v.weight;
  double running = 0.0;
  for (const auto& v : values) {
    running += v.weight;
    if (running >= 0.5 * total) return v.value;
  }
  return values.back().value;
}

// Evenly spaced quantiles of a sorted group (all of it when small enough).
std::vector<double> fit_sample(std::span<const double> sorted, std::size_t limit) {
  if (sorted.size() <= limit || limit < 2) return {sorted.begin(), sorted.end()};
  std::vector<double> chosen(limit);
  const double step = static_cast<double>(sorted.size() - 1) / static_cast<double>(limit - 1);
  for (std::size_t i = 0; i < limit; ++i) {
    chosen[i] = sorted[static_cast<std::size_t>(std::llround(step * static_cast<double>(i)))];
  }
  return chosen;
}

struct MixtureFit {
  double p = 0.0;
  double tau = 0.0;
  double sigma = 0.0;
};

// The EM's fixed point in fewer steps: SQUAREM (Varadhan & Roland 2008,
// scheme S3). From two EM steps it extrapolates along their differences
// (measured in the units of the convergence test: p, tau / max(1, tau),
// sigma / sigma), with a step length bounded as in the SQUAREM package
// (from 1, 4-fold each time the bound binds), projects into the
// parameters' range and takes one EM step from there, which settles it. A
// fixed point of that step is the plain EM's. Every EM step counts against
// options.em_iterations.
template <typename Step, typename Converged>
MixtureFit accelerated_em(MixtureFit fit, const Step& step, const Converged& converged, double low_side_sigma,
                          double sigma_cap, const IntrinsicOptions& options) {
  int steps = 0;
  double step_max = 1.0;
  while (steps < options.em_iterations) {
    const MixtureFit first = step(fit);
    if (++steps >= options.em_iterations || converged(first, fit)) return first;
    const MixtureFit second = step(first);
    if (++steps >= options.em_iterations || converged(second, first)) return second;
    const double tau_unit = std::max(1.0, fit.tau);
    const double sigma_unit = fit.sigma;
    const auto moved = [&](const MixtureFit& to, const MixtureFit& from) {
      return std::array<double, 3>{to.p - from.p, (to.tau - from.tau) / tau_unit, (to.sigma - from.sigma) / sigma_unit};
    };
    const std::array<double, 3> r = moved(first, fit);
    const std::array<double, 3> last = moved(second, first);
    const std::array<double, 3> v{last[0] - r[0], last[1] - r[1], last[2] - r[2]};
    const auto norm = [](const std::array<double, 3>& x) { return std::sqrt(x[0] * x[0] + x[1] * x[1] + x[2] * x[2]); };
    // The step length |alpha| >= 1 (1: two plain steps), at most step_max,
    // which grows 4-fold each time it binds (the SQUAREM package's default).
    const double length = std::min(step_max, norm(v) > 0.0 ? std::max(1.0, norm(r) / norm(v)) : 1.0);
    if (length == step_max) step_max *= 4.0;
    const double alpha = -length;
    const auto extrapolate = [&](std::size_t i) { return -2.0 * alpha * r[i] + alpha * alpha * v[i]; };
    MixtureFit jumped;
    jumped.p = std::clamp(fit.p + extrapolate(0), 1e-6, 1.0 - 1e-6);
    jumped.sigma = options.fit_clean_spread ? std::clamp(fit.sigma + sigma_unit * extrapolate(2), low_side_sigma, sigma_cap)
                                            : fit.sigma;
    jumped.tau = std::max(options.minimum_delay_in_spreads * jumped.sigma, fit.tau + tau_unit * extrapolate(1));
    if (!(std::isfinite(jumped.p) && std::isfinite(jumped.tau) && std::isfinite(jumped.sigma))) {
      fit = second;
      continue;
    }
    const MixtureFit settled = step(jumped);
    ++steps;
    if (converged(settled, jumped)) return settled;
    fit = settled;
  }
  return fit;
}

// The residuals merged into bins `width` wide on a grid from the smallest,
// each bin its members' total weight at their weighted mean, in ascending
// order. The mean keeps every term that is linear in the residual exact. A
// grid far wider than the residuals are many (a long tail) is swept in sorted
// order instead, each bin starting at its first value.
std::vector<WeightedValue> merged_into_bins(std::span<const WeightedValue> residuals, double width) {
  std::vector<WeightedValue> bins;
  if (residuals.empty()) return bins;
  const auto [lowest, highest] = std::minmax_element(residuals.begin(), residuals.end(),
                                                     [](const auto& a, const auto& b) { return a.value < b.value; });
  const double span = (highest->value - lowest->value) / width;
  if (std::isfinite(span) && span < 4.0 * static_cast<double>(residuals.size()) + 1024.0) {
    std::vector<WeightedValue> grid(static_cast<std::size_t>(span) + 1, WeightedValue{0.0, 0.0});  // {weighted sum, weight}
    for (const WeightedValue& r : residuals) {
      WeightedValue& cell = grid[std::min(grid.size() - 1, static_cast<std::size_t>((r.value - lowest->value) / width))];
      cell.value += r.weight * r.value;
      cell.weight += r.weight;
    }
    for (const WeightedValue& cell : grid) {
      if (cell.weight > 0.0) bins.push_back({cell.value / cell.weight, cell.weight});
    }
    return bins;
  }
  std::vector<WeightedValue> sorted(residuals.begin(), residuals.end());
  std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.value < b.value; });
  double start = 0.0;
  double weighted_sum = 0.0;
  double weight = 0.0;
  for (const WeightedValue& r : sorted) {
    if (weight > 0.0 && r.value >= start + width) {
      bins.push_back({weighted_sum / weight, weight});
      weight = 0.0;
      weighted_sum = 0.0;
    }
    if (weight == 0.0) start = r.value;
    weighted_sum += r.weight * r.value;
    weight += r.weight;
  }
  if (weight > 0.0) bins.push_back({weighted_sum / weight, weight});
  return bins;
}

// EM for p, tau and sigma of the normal-exponential mixture; sigma stays at
// least the low-side spread, which the clean jitter's upper tail may exceed.
MixtureFit fit_mixture(std::span<const WeightedValue> all_residuals, double low_side_sigma, double sigma_cap,
                       const IntrinsicOptions& options) {
  std::vector<WeightedValue> bins;
  if (options.em_bin_width_in_spreads > 0.0 && low_side_sigma > 0.0)
    bins = merged_into_bins(all_residuals, options.em_bin_width_in_spreads * low_side_sigma);
  const std::span<const WeightedValue> residuals = bins.empty() ? all_residuals : std::span<const WeightedValue>(bins);
  double sigma = low_side_sigma;
  double tau_floor = options.minimum_delay_in_spreads * sigma;
  double large_sum = 0.0;
  double large_weight = 0.0;
  double total_weight = 0.0;
  for (const auto& r : residuals) {
    total_weight += r.weight;
    if (r.value > 3.0 * sigma) {
      large_sum += r.weight * r.value;
      large_weight += r.weight;
    }
  }
  MixtureFit fit{0.1, large_weight > 0.0 ? std::max(tau_floor, large_sum / large_weight) : 5.0 * sigma, sigma};
  if (options.em_start_probability > 0.0) {
    fit.p = std::clamp(options.em_start_probability, 1e-6, 1.0 - 1e-6);
    fit.tau = std::max(tau_floor, options.em_start_delay_mean);
  }
  if (!(total_weight > 0.0)) return {0.0, tau_floor, sigma};
  // A group's residuals are sorted and a bootstrap resample repeats values:
  // each distinct value's terms are computed once per iteration, in a loop of
  // their own (independent calls overlap), then summed in the residuals' order.
  std::vector<double> distinct;
  std::vector<std::uint32_t> distinct_of(residuals.size());
  for (std::size_t i = 0; i < residuals.size(); ++i) {
    if (i == 0 || residuals[i].value != residuals[i - 1].value) distinct.push_back(residuals[i].value);
    distinct_of[i] = static_cast<std::uint32_t>(distinct.size() - 1);
  }
  std::vector<DelayPosterior::WithCleanSquare> terms(distinct.size());
  // One EM step from `at`.
  const auto step = [&](const MixtureFit& at) {
    double probability_sum = 0.0;
    double delay_sum = 0.0;
    double square_sum = 0.0;
    const DelayPosterior posterior_of(at.sigma, at.p, at.tau);
    for (std::size_t d = 0; d < distinct.size(); ++d) {
      terms[d] = options.fit_clean_spread ? posterior_of.with_clean_square(distinct[d])
                                          : DelayPosterior::WithCleanSquare{posterior_of(distinct[d]), 0.0};
    }
    for (std::size_t i = 0; i < residuals.size(); ++i) {
      const WeightedValue& r = residuals[i];
      const DelayPosterior::WithCleanSquare& term = terms[distinct_of[i]];
      probability_sum += r.weight * term.posterior.probability;
      delay_sum += r.weight * term.posterior.delay;
      if (options.fit_clean_spread) square_sum += r.weight * term.clean_square;
    }
    MixtureFit next;
    next.p = std::clamp(probability_sum / total_weight, 1e-6, 1.0 - 1e-6);
    next.sigma = options.fit_clean_spread
                     ? std::min(sigma_cap, std::max(low_side_sigma, std::sqrt(square_sum / total_weight)))
                     : at.sigma;
    const double floor = options.minimum_delay_in_spreads * next.sigma;
    next.tau = probability_sum > 0.0 ? std::max(floor, delay_sum / probability_sum) : floor;
    return next;
  };
  const auto converged = [&](const MixtureFit& next, const MixtureFit& from) {
    return std::fabs(next.p - from.p) < options.em_tolerance &&
           std::fabs(next.tau - from.tau) < options.em_tolerance * std::max(1.0, from.tau) &&
           std::fabs(next.sigma - from.sigma) < options.em_tolerance * from.sigma;
  };
  if (!options.em_accelerate) {
    for (int iteration = 0; iteration < options.em_iterations; ++iteration) {
      const MixtureFit next = step(fit);
      const bool done = converged(next, fit);
      fit = next;
      if (done) break;
    }
    return fit;
  }
  return accelerated_em(fit, step, converged, low_side_sigma, sigma_cap, options);
}

}  // namespace

double blom_normal_score(std::size_t i, std::size_t n) {
  if (n == 0 || i == 0 || i > n) return 0.0;
  return normal_quantile((static_cast<double>(i) - 0.375) / (static_cast<double>(n) + 0.25));
}

namespace {

// One fit of the pooled model: baselines, shares and the mixture.
struct ModelFit {
  double sigma = 0.0;
  MixtureFit mixture;
  std::vector<double> baseline;
  std::vector<double> share;
};

// Relative spread of ascending, finite, positive values from two of their
// quantiles: their distance over the normal scores' distance (`scores`),
// divided by the median.
double relative_quantile_spread(std::span<const double> values, double low, double high, double scores) {
  if (values.size() < 8) return 0.0;
  auto at = [&](double q) {
    return values[static_cast<std::size_t>(std::llround(q * static_cast<double>(values.size() - 1)))];
  };
  const double median = at(0.5);
  return median > 0.0 ? (at(high) - at(low)) / scores / median : 0.0;
}

struct QuantileSpreads {
  double quartile = 0.0;  // robust relative spread from the quartiles (IQR / 1.349 / median)
  // The same read on the low side (5 % to 25 %), where the anchor and the
  // clean spread are read: delays (which only add time) or a cold cache after
  // one (which adds work) barely move it in the work.
  double low_side = 0.0;
};

// Both spreads of one group's ascending, finite, positive values (the normal
// scores once per process: erfc_inv is costly and every refit reads them).
QuantileSpreads quantile_spreads(std::span<const double> sorted) {
  static const double quartile_scores = normal_quantile(0.75) - normal_quantile(0.25);
  static const double low_side_scores = normal_quantile(0.25) - normal_quantile(0.05);
  return {relative_quantile_spread(sorted, 0.25, 0.75, quartile_scores),
          relative_quantile_spread(sorted, 0.05, 0.25, low_side_scores)};
}

struct WorkSpread {
  double work = 0.0;   // size-weighted median over groups of the work's relative spread (quartiles)
  double ratio = 0.0;  // the larger of the quartile and the low-side (duration spread / work spread)
};

// Size-weighted medians over groups of spread(durations) / spread(work), for
// both spreads: the quartiles see delays on half the segments or a window,
// the low side (5 % to 25 %) 90 % of the segments delayed even when a cold
// cache after each delay widens the work's quartiles. 0 and 0 without work values.
WorkSpread work_spread(const std::vector<std::vector<double>>& sorted, std::span<const std::span<const double>> work) {
  if (work.size() != sorted.size()) return {};
  std::vector<WeightedValue> work_spreads;
  std::vector<WeightedValue> quartile_ratios;
  std::vector<WeightedValue> low_side_ratios;
  for (std::size_t g = 0; g < sorted.size(); ++g) {
    const QuantileSpreads of_work = quantile_spreads(sorted_valid(work[g]));
    const QuantileSpreads of_durations = quantile_spreads(sorted[g]);
    const auto size = static_cast<double>(sorted[g].size());
    if (of_work.quartile > 0.0 && of_durations.quartile > 0.0) {
      quartile_ratios.push_back({of_durations.quartile / of_work.quartile, size});
      work_spreads.push_back({of_work.quartile, size});
    }
    if (of_work.low_side > 0.0 && of_durations.low_side > 0.0)
      low_side_ratios.push_back({of_durations.low_side / of_work.low_side, size});
  }
  return {weighted_median(std::move(work_spreads)),
          std::max(weighted_median(std::move(quartile_ratios)), weighted_median(std::move(low_side_ratios)))};
}

// sigma_floor and sigma_cap bound the pooled clean spread (from the work's spread).
ModelFit fit_model(const std::vector<std::vector<double>>& sorted, const std::vector<std::vector<double>>& samples,
                   const IntrinsicOptions& options, double sigma_floor, double sigma_cap,
                   std::span<const double> baseline_floor) {
  auto floored = [&](std::size_t g, double baseline) {
    return g < baseline_floor.size() && baseline_floor[g] > baseline ? baseline_floor[g] : baseline;
  };
  const std::size_t group_count = sorted.size();
  ModelFit fit;
  fit.share.assign(group_count, 0.0);
  fit.baseline.assign(group_count, 0.0);
  double sigma = options.minimum_relative_spread;
  MixtureFit mixture{0.0, options.minimum_delay_in_spreads * sigma, sigma};
  std::vector<WeightedValue> residuals;
  for (int outer = 0; outer < std::max(1, options.outer_iterations); ++outer) {
    std::vector<WeightedValue> spreads;
    for (std::size_t g = 0; g < group_count; ++g) {
      const double spread = low_side_spread(sorted[g], fit.share[g], options);
      if (spread > 0.0) spreads.push_back({spread, static_cast<double>(sorted[g].size())});
    }
    sigma = std::clamp(weighted_median(std::move(spreads)), std::max(options.minimum_relative_spread, sigma_floor),
                       std::max(options.minimum_relative_spread, sigma_cap));
    residuals.clear();
    for (std::size_t g = 0; g < group_count; ++g) {
      const double baseline = floored(g, anchored_baseline(sorted[g], sigma, fit.share[g], options));
      fit.baseline[g] = baseline;
      if (samples[g].empty() || !(baseline > 0.0)) continue;
      const double weight = static_cast<double>(sorted[g].size()) / static_cast<double>(samples[g].size());
      for (const double x : samples[g]) {
        // Far below the clean side: a low outlier (timer glitch, skipped work), not jitter.
        const double r = x / baseline - 1.0;
        if (r >= -options.low_outlier_in_spreads * sigma) residuals.push_back({r, weight});
      }
    }
    mixture = fit_mixture(residuals, sigma, std::max(sigma, sigma_cap), options);
    sigma = mixture.sigma;
    const DelayPosterior share_posterior(sigma, mixture.p, mixture.tau);
    for (std::size_t g = 0; g < group_count; ++g) {
      if (options.fit_clean_spread)
        fit.baseline[g] = floored(g, anchored_baseline(sorted[g], sigma, fit.share[g], options));
      const double baseline = fit.baseline[g];
      if (samples[g].empty() || !(baseline > 0.0)) continue;
      double probability = 0.0;
      double previous = 0.0;
      double term = 0.0;
      for (std::size_t i = 0; i < samples[g].size(); ++i) {
        const double x = samples[g][i];
        if (i == 0 || x != previous) term = share_posterior.probability(x / baseline - 1.0);  // sorted: repeats adjacent
        previous = x;
        probability += term;
      }
      fit.share[g] = probability / static_cast<double>(samples[g].size());
    }
  }
  fit.sigma = sigma;
  fit.mixture = mixture;
  return fit;
}

}  // namespace

IntrinsicEstimate estimate_intrinsic(std::span<const std::span<const double>> groups, const IntrinsicOptions& options,
                                     std::span<const std::span<const double>> work,
                                     std::span<const double> baseline_floor) {
  IntrinsicEstimate estimate;
  const std::size_t group_count = groups.size();
  estimate.groups.resize(group_count);
  if (options.charge_segments) {
    estimate.lost.resize(group_count);
    estimate.probability.resize(group_count);
  }
  std::vector<std::vector<double>> sorted(group_count);
  std::vector<std::vector<double>> samples(group_count);
  for (std::size_t g = 0; g < group_count; ++g) {
    sorted[g] = sorted_valid(groups[g]);
    samples[g] = fit_sample(sorted[g], options.fit_sample_per_group);
  }
  // When the durations spread far more than the work that filled them, their
  // spread is not clean jitter: most segments were delayed, and the clean
  // spread is read from the lowest values only (docs/statistics-primary.md).
  // The work's own spread also bounds the clean spread from below: a clean
  // duration varies at least as much as the work in it.
  ModelFit fit;
  const WorkSpread spread = work_spread(sorted, work);
  estimate.unexplained_spread_ratio = spread.ratio;
  estimate.work_relative_spread = spread.work;
  const double floor = options.clean_spread_floor_in_work_spreads * spread.work;
  constexpr double kNoCap = 1e300;
  if (options.low_start_spread_quantile > 0.0 && spread.ratio > options.maximum_unexplained_spread_ratio) {
    IntrinsicOptions low_start = options;
    low_start.spread_quantile = options.low_start_spread_quantile;
    low_start.minimum_clean_share = std::max(options.minimum_clean_share, options.low_start_spread_quantile);
    fit = fit_model(sorted, samples, low_start, floor, options.most_delayed_spread_cap_in_work_spreads * spread.work,
                    baseline_floor);
    estimate.lower_start_chosen = true;
  } else {
    fit = fit_model(sorted, samples, options, floor, kNoCap, baseline_floor);
  }
  const double sigma = fit.sigma;
  const MixtureFit& mixture = fit.mixture;
  for (std::size_t g = 0; g < group_count; ++g) estimate.groups[g].baseline = fit.baseline[g];
  estimate.relative_spread = sigma;
  estimate.delay_probability = mixture.p;
  estimate.relative_delay_mean = mixture.tau;
  if (!options.charge_segments) return estimate;
  for (std::size_t g = 0; g < group_count; ++g)
    estimate.groups[g].relative_spread_own = low_side_spread(sorted[g], fit.share[g], options);
  const DelayPosterior posterior_of(sigma, mixture.p, mixture.tau);
  for (std::size_t g = 0; g < group_count; ++g) {
    GroupIntrinsic& group = estimate.groups[g];
    const double baseline = group.baseline;
    estimate.lost[g].assign(groups[g].size(), 0.0);
    estimate.probability[g].assign(groups[g].size(), 0.0);
    if (!(baseline > 0.0)) continue;
    double probability_sum = 0.0;
    for (std::size_t i = 0; i < groups[g].size(); ++i) {
      const double x = groups[g][i];
      if (!std::isfinite(x) || !(x > 0.0)) continue;
      const SegmentPosterior posterior = posterior_of(x / baseline - 1.0);
      estimate.lost[g][i] = baseline * posterior.delay;
      estimate.probability[g][i] = posterior.probability;
      group.lost += estimate.lost[g][i];
      probability_sum += posterior.probability;
    }
    group.interfered_share = groups[g].empty() ? 0.0 : probability_sum / static_cast<double>(groups[g].size());
    estimate.total_lost += group.lost;
  }
  return estimate;
}

LostInterval bootstrap_lost_interval(std::span<const std::span<const double>> groups, const IntrinsicEstimate& estimate,
                                     std::mt19937_64& engine, int replicas, double ci, const IntrinsicOptions& options,
                                     std::size_t sample_limit) {
  if (replicas < 2 || groups.size() != estimate.groups.size()) return {estimate.total_lost, estimate.total_lost};
  const double sigma = estimate.relative_spread;
  const double p = estimate.delay_probability;
  const double tau = estimate.relative_delay_mean;
  // The delays of this run are what they are: the uncertainty is in the
  // baselines (resampled) and in each segment's delay given its time.
  const DelayPosterior posterior_of(sigma, p, tau);
  auto charged = [&](std::span<const double> members, double baseline) {
    double lost = 0.0;
    if (!(baseline > 0.0)) return lost;
    for (const double x : members) lost += baseline * posterior_of(x / baseline - 1.0).delay;
    return lost;
  };
  std::vector<std::vector<double>> samples(groups.size());
  double posterior_variance = 0.0;
  for (std::size_t g = 0; g < groups.size(); ++g) {
    const double baseline = estimate.groups[g].baseline;
    if (!(baseline > 0.0)) continue;
    samples[g] = fit_sample(sorted_valid(groups[g]), sample_limit);
    const double weight =
        static_cast<double>(groups[g].size()) / static_cast<double>(std::max<std::size_t>(1, samples[g].size()));
    for (const double x : samples[g]) {
      posterior_variance += weight * baseline * baseline * delay_posterior_variance(x / baseline - 1.0, sigma, p, tau);
    }
  }
  std::normal_distribution<double> posterior_noise(0.0, std::sqrt(posterior_variance));
  std::vector<double> totals(static_cast<std::size_t>(replicas), estimate.total_lost);
  for (double& total : totals) total += posterior_noise(engine);
  std::vector<double> resample;
  for (std::size_t g = 0; g < groups.size(); ++g) {
    const std::vector<double>& sample = samples[g];
    if (sample.size() < 2) continue;
    const double weight = static_cast<double>(groups[g].size()) / static_cast<double>(sample.size());
    const double share = estimate.groups[g].interfered_share;
    const double on_sample = charged(sample, estimate.groups[g].baseline);
    std::uniform_int_distribution<std::size_t> pick(0, sample.size() - 1);
    resample.resize(sample.size());
    for (double& total : totals) {
      for (double& value : resample) value = sample[pick(engine)];
      std::sort(resample.begin(), resample.end());
      total += weight * (charged(sample, anchored_baseline(resample, sigma, share, options)) - on_sample);
    }
  }
  const PercentileSummary summary = summarize_replicas(totals, ci);
  return {std::max(0.0, std::min(summary.ci_low, estimate.total_lost)), std::max(summary.ci_high, estimate.total_lost)};
}

}  // namespace tremor::estimators
