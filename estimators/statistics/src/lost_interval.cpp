#include "tremor/estimators/lost_interval.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <vector>

#include "tremor/estimators/order_statistics.hpp"
#include "tremor/estimators/parallel.hpp"

namespace tremor::estimators {
namespace {

// Every k-th value of `values` (time order kept), at most `limit` of them.
std::vector<double> systematic_sample(std::span<const double> values, std::size_t limit) {
  if (values.size() <= limit || limit == 0) return {values.begin(), values.end()};
  std::vector<double> chosen;
  chosen.reserve(limit);
  const double step = static_cast<double>(values.size()) / static_cast<double>(limit);
  for (std::size_t i = 0; i < limit; ++i) chosen.push_back(values[static_cast<std::size_t>(step * static_cast<double>(i))]);
  return chosen;
}

// Evenly spaced order statistics of the finite, positive values (at most `limit`).
std::vector<double> charge_sample(std::span<const double> values, std::size_t limit) {
  std::vector<double> sorted;
  for (const double x : values) {
    if (std::isfinite(x) && x > 0.0) sorted.push_back(x);
  }
  std::sort(sorted.begin(), sorted.end());
  if (sorted.size() <= limit || limit < 2) return sorted;
  std::vector<double> chosen(limit);
  const double step = static_cast<double>(sorted.size() - 1) / static_cast<double>(limit - 1);
  for (std::size_t i = 0; i < limit; ++i) chosen[i] = sorted[static_cast<std::size_t>(std::llround(step * static_cast<double>(i)))];
  return chosen;
}

// The lost time the model charges a group's sample (weighted to the group).
double charged(std::span<const double> sample, double weight, double baseline, double sigma, double p, double tau) {
  if (!(baseline > 0.0)) return 0.0;
  const DelayPosterior posterior_of(sigma, p, tau);
  double lost = 0.0;
  for (const double x : sample) lost += baseline * posterior_of(x / baseline - 1.0).delay;
  return weight * lost;
}

// Moving blocks of length `block` drawn with replacement until they hold
// `length` values: the blocks' first indices, in draw order.
void draw_block_starts(std::size_t length, std::size_t block, std::mt19937_64& engine, std::vector<std::uint32_t>& starts) {
  starts.clear();
  if (length == 0) return;
  block = std::clamp<std::size_t>(block, 1, length);
  std::uniform_int_distribution<std::size_t> start(0, length - block);
  for (std::size_t drawn = 0; drawn < length; drawn += block) starts.push_back(static_cast<std::uint32_t>(start(engine)));
}

// The resample those blocks make of `values` (and of `paired`, when it is as long).
void block_resample(std::span<const double> values, std::span<const double> paired, std::size_t block,
                    std::span<const std::uint32_t> starts, std::vector<double>& out, std::vector<double>& paired_out) {
  const std::size_t n = values.size();
  out.clear();
  paired_out.clear();
  if (n == 0) return;
  block = std::clamp<std::size_t>(block, 1, n);
  for (const std::size_t first : starts) {
    for (std::size_t i = first; i < first + block && out.size() < n; ++i) {
      out.push_back(values[i]);
      if (paired.size() == n) paired_out.push_back(paired[i]);
    }
  }
}

// What one replica draws, in the order the serial bootstrap drew it: each
// group's block starts, then the posterior's and the measured delays' normals.
struct ReplicaDraws {
  std::vector<std::vector<std::uint32_t>> starts;  // per group
  double posterior_normal = 0.0;
  double measured_normal = 0.0;
};

// Replicas whose draws are held at once: all of them unless their block
// starts would pass this many bytes (runs of thousands of groups).
constexpr std::size_t kDrawBatchBytes = std::size_t{16} << 20;

// Every replica's total, by `total` from its draws. Every draw comes from
// `engine` in this thread, replica by replica, in the serial order (a batch
// at a time); only the refits run in parallel, each writing its own total.
std::vector<double> replica_totals(std::size_t replicas, int threads, const std::vector<std::vector<double>>& refit_values,
                                   const std::vector<std::size_t>& blocks, std::mt19937_64& engine,
                                   const std::function<double(const ReplicaDraws&)>& total) {
  const std::size_t group_count = refit_values.size();
  std::size_t starts_per_replica = 0;
  for (std::size_t g = 0; g < group_count; ++g)
    starts_per_replica += refit_values[g].size() / std::max<std::size_t>(1, blocks[g]) + 1;
  // At least one replica per thread, at most all of them.
  const std::size_t batch =
      std::clamp<std::size_t>(kDrawBatchBytes / (starts_per_replica * sizeof(std::uint32_t) + 1),
                              std::min(static_cast<std::size_t>(threads), replicas), replicas);
  std::normal_distribution<double> unit(0.0, 1.0);
  std::vector<ReplicaDraws> draws(batch);
  std::vector<double> totals(replicas);
  for (std::size_t first = 0; first < replicas; first += batch) {
    const std::size_t count = std::min(batch, replicas - first);
    for (std::size_t r = 0; r < count; ++r) {
      ReplicaDraws& drawn = draws[r];
      drawn.starts.resize(group_count);
      for (std::size_t g = 0; g < group_count; ++g)
        draw_block_starts(refit_values[g].size(), blocks[g], engine, drawn.starts[g]);
      drawn.posterior_normal = unit(engine);
      drawn.measured_normal = unit(engine);
    }
    parallel_for(count, threads, [&](std::size_t r) { totals[first + r] = total(draws[r]); });
  }
  return totals;
}

}  // namespace

LostInterval lost_interval(std::span<const std::span<const double>> groups, std::span<const std::span<const double>> work,
                           std::span<const double> baseline_floor, const IntrinsicEstimate& estimate, double measured_s,
                           double measured_sd_s, std::mt19937_64& engine, const LostIntervalOptions& options,
                           const IntrinsicOptions& model) {
  const double point = estimate.total_lost + measured_s;
  if (options.replicas < 2 || groups.size() != estimate.groups.size()) return {point, point};
  if (!options.refit) {
    LostInterval held = bootstrap_lost_interval(groups, estimate, engine, options.replicas, options.ci, model);
    return {held.low + measured_s, held.high + measured_s};
  }
  const std::size_t group_count = groups.size();
  const double sigma = estimate.relative_spread;
  const double p = estimate.delay_probability;
  const double tau = estimate.relative_delay_mean;
  // The run's own segments, charged under each replica's model.
  std::vector<std::vector<double>> charge_samples(group_count);
  std::vector<double> charge_weight(group_count, 0.0);
  double posterior_variance = 0.0;
  double point_charged = 0.0;
  std::size_t total_n = 0;
  std::size_t total_m = 0;
  std::vector<std::vector<double>> refit_values(group_count);
  std::vector<std::vector<double>> refit_work(group_count);
  const bool with_work = work.size() == group_count;
  for (std::size_t g = 0; g < group_count; ++g) {
    charge_samples[g] = charge_sample(groups[g], options.charge_sample);
    const std::size_t valid = charge_samples[g].size();
    charge_weight[g] = valid ? static_cast<double>(valid) : 0.0;
    if (valid) charge_weight[g] = static_cast<double>(std::count_if(groups[g].begin(), groups[g].end(), [](double x) {
                                    return std::isfinite(x) && x > 0.0;
                                  })) / static_cast<double>(valid);
    const double baseline = estimate.groups[g].baseline;
    point_charged += charged(charge_samples[g], charge_weight[g], baseline, sigma, p, tau);
    for (const double x : charge_samples[g]) {
      if (baseline > 0.0)
        posterior_variance += charge_weight[g] * baseline * baseline * delay_posterior_variance(x / baseline - 1.0, sigma, p, tau);
    }
    refit_values[g] = systematic_sample(groups[g], options.refit_sample);
    if (with_work && work[g].size() == groups[g].size()) refit_work[g] = systematic_sample(work[g], options.refit_sample);
    total_n += groups[g].size();
    total_m += refit_values[g].size();
  }
  // A replica fitted on m of n segments varies sqrt(n / m) times as much as one on all of them.
  const double scale = total_n > 0 ? std::sqrt(static_cast<double>(total_m) / static_cast<double>(total_n)) : 1.0;
  IntrinsicOptions refit_model = model;
  // A replica differs from the run by sampling noise only: its EM starts
  // from the run's fit, extrapolates its steps (SQUAREM) and stops once p,
  // tau and sigma move by less than refit_em_tolerance
  // (docs/statistics-primary.md, Interval).
  refit_model.em_iterations = options.refit_em_iterations;
  refit_model.em_tolerance = options.refit_em_tolerance;
  refit_model.em_start_probability = p;
  refit_model.em_start_delay_mean = tau;
  refit_model.em_accelerate = true;
  refit_model.em_bin_width_in_spreads = options.refit_em_bin_width_in_spreads;
  refit_model.outer_iterations = options.refit_outer_iterations;
  refit_model.charge_segments = false;  // a replica reads its pooled parameters and baselines only
  std::vector<std::size_t> blocks(group_count);
  for (std::size_t g = 0; g < group_count; ++g)
    blocks[g] = static_cast<std::size_t>(std::ceil(std::cbrt(static_cast<double>(refit_values[g].size()))));
  // Refits the replica from its draws; independent of every other replica.
  const auto replica_total = [&](const ReplicaDraws& drawn) {
    std::vector<std::vector<double>> resampled(group_count);
    std::vector<std::vector<double>> resampled_work(group_count);
    std::vector<std::span<const double>> spans(group_count);
    std::vector<std::span<const double>> work_spans(group_count);
    for (std::size_t g = 0; g < group_count; ++g) {
      block_resample(refit_values[g], refit_work[g], blocks[g], drawn.starts[g], resampled[g], resampled_work[g]);
      spans[g] = resampled[g];
      work_spans[g] = resampled_work[g];
    }
    const IntrinsicEstimate refit = estimate_intrinsic(
        spans, refit_model, with_work ? std::span<const std::span<const double>>(work_spans) : std::span<const std::span<const double>>{},
        baseline_floor);
    // The refit's baselines come from m segments: their deviation is scaled
    // like the pooled parameters'.
    double replica_charged = 0.0;
    for (std::size_t g = 0; g < group_count; ++g) {
      const double base = estimate.groups[g].baseline;
      const double baseline = base + scale * (refit.groups[g].baseline - base);
      replica_charged += charged(charge_samples[g], charge_weight[g], baseline,
                                 std::max(1e-12, sigma + scale * (refit.relative_spread - sigma)),
                                 std::clamp(p + scale * (refit.delay_probability - p), 1e-9, 1.0 - 1e-9),
                                 std::max(1e-12, tau + scale * (refit.relative_delay_mean - tau)));
    }
    const double deviation = replica_charged - point_charged;
    return point + deviation + std::sqrt(posterior_variance) * drawn.posterior_normal +
           measured_sd_s * drawn.measured_normal;
  };
  std::vector<double> totals =
      replica_totals(static_cast<std::size_t>(options.replicas), analysis_threads(options.threads), refit_values, blocks,
                     engine, replica_total);
  const PercentileSummary summary = summarize_replicas(totals, options.ci);
  return {std::max(0.0, summary.ci_low), std::max(0.0, summary.ci_high)};
}

double measured_error_variance(std::span<const MeasuredResidual> residuals) {
  double sum = 0.0;
  double expected = 0.0;
  std::size_t n = 0;
  for (const MeasuredResidual& residual : residuals) {
    if (!std::isfinite(residual.residual_s) || !std::isfinite(residual.model_variance_s2)) continue;
    sum += residual.residual_s;
    expected += std::max(0.0, residual.model_variance_s2);
    ++n;
  }
  if (n == 0) return 0.0;
  const double mean = sum / static_cast<double>(n);
  double spread = 0.0;
  for (const MeasuredResidual& residual : residuals) {
    if (!std::isfinite(residual.residual_s) || !std::isfinite(residual.model_variance_s2)) continue;
    spread += (residual.residual_s - mean) * (residual.residual_s - mean);
  }
  // The segments' own errors: the residuals' spread beyond the model's.
  const double independent =
      n > 1 ? std::max(0.0, spread / static_cast<double>(n - 1) - expected / static_cast<double>(n)) * static_cast<double>(n)
            : 0.0;
  // An error every segment shares: the residuals' squared sum beyond that and the model's share.
  const double shared = std::max(0.0, sum * sum - expected - independent);
  return independent + shared;
}

}  // namespace tremor::estimators
