// GEV fits per usable group and predictions of the total run time at larger
// process counts (docs/statistics.md#prediction).
//
// Samples. A segment's duration is already a maximum over the P ranks, so f×
// processes make each segment the maximum of f such maxima: the expected
// maximum at m = f of the group's segment maxima. Maxima must come from raw
// values or bin maxima, never from bin representatives (means of merged
// values, which shrink the tail; docs/statistics.md#quantization), so fits and projections
// use duration_upper_s (max over ranks of the duration bin max). The same
// column is subtracted from the run time, so the non-parametric prediction at
// f = 1 reproduces the run time exactly.
//
// Combination. prediction(f) = c · (Σ_other duration_upper
//                                  + Σ_groups n_g · E_g[max at m = f]),
// with c = run_time / Σ_all duration_upper. Segment durations are maxima over
// ranks, so when ranks leave the boundaries at different times (descheduled
// ranks, more ranks than cores) their sum exceeds the wall time; predicting
// the ratio and calibrating it to the run time keeps the prediction at f = 1
// equal to the run time and never subtracts more than was measured.
// The median adds the per-group medians; the interval adds the per-group
// interval bounds. Adding bounds is conservative (it assumes all groups sit at
// their bound together), which we prefer to an optimistic interval.
//
// One run, not its mean. The bootstrap bounds are those of the expected total;
// a single run at the larger scale also draws its own n_g maxima. Their spread
// (Σ_g n_g · Var[max of f draws from the group's maxima]) is added in
// quadrature to each half-width, so the interval is a prediction interval for
// one run's time, which is what users compare it with.
//
// Dependence. Both terms above treat a run's segments as independent. On a
// shared machine slow periods last several segments, so segment times are
// positively autocorrelated and the variance of their sum (and of their mean)
// is several times the iid value. The variance inflation factor (VIF, Newey–
// West long-run variance over the iid variance, estimators/long_run_variance)
// of the usable-group segments' residuals from their group mean, in segment
// order (the mean removes the groups' levels, which are not dependence),
// scales both: bootstrap half-widths by √VIF (estimation of the expected
// total) and the one-run variance by VIF, i.e. every half-width by √VIF.
// The same factor is assumed for the run at the larger scale.
//
// Fallback. A parametric replica whose fit breaks (typically on the replicas
// holding the sample's extremes) takes the other GEV method, then the
// non-parametric value, and is counted in replicas_failed; a large share
// raises `fit_misses_extremes`, which points to the non-parametric method.
//
// Cost. Bootstraps run on at most kMaxBootstrapSample evenly spaced order
// statistics per group (see quantile_subsample), so 10^6 segments cost about
// as much as 10^3; the fits themselves use the whole group.
#include <algorithm>
#include <boost/math/distributions/normal.hpp>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <string>

#include "analysis_internal.hpp"
#include "tremor/estimators/bootstrap.hpp"
#include "tremor/estimators/gev_fit.hpp"
#include "tremor/estimators/long_run_variance.hpp"
#include "tremor/estimators/order_statistics.hpp"

namespace tremor::analysis::detail {
namespace {

namespace est = tremor::estimators;

enum Stream : std::uint64_t { kNonparametric = 1, kPwm = 2, kMom = 3, kInterNode = 4, kIntraNode = 5 };

GevSummary summarize_fit(const est::GevFit& fit) {
  GevSummary summary;
  summary.usable = fit.usable();
  summary.loc = fit.params.loc;
  summary.scale = fit.params.scale;
  summary.k = fit.params.k;
  summary.flags = est::describe_fit_flags(fit.flags);
  if (summary.usable) summary.type = std::string(est::to_string(est::classify_gev_type(fit.params.k)));
  return summary;
}

// Running totals of one method over the groups, per factor.
struct MethodTotals {
  std::vector<double> median, low, high;
  std::vector<double> run_variance;  // Σ_g n_g · Var[one segment maximum at the factor]
  std::vector<std::size_t> failed;   // replicas whose own fit could not project (fallback used)
  std::vector<std::size_t> used;
  bool available = true;
  explicit MethodTotals(std::size_t factors)
      : median(factors), low(factors), high(factors), run_variance(factors), failed(factors), used(factors) {}

  void add_run_variance(std::span<const double> per_segment_variance, double count) {
    for (std::size_t f = 0; f < run_variance.size() && f < per_segment_variance.size(); ++f) {
      if (std::isfinite(per_segment_variance[f])) run_variance[f] += count * per_segment_variance[f];
    }
  }

  void add(const std::vector<est::ScalePrediction>& group, double count, double extra_per_segment) {
    if (group.size() != median.size()) {
      available = false;
      return;
    }
    for (std::size_t f = 0; f < group.size(); ++f) {
      if (group[f].replicas_used == 0) available = false;
      median[f] += count * (group[f].replicas.median + extra_per_segment);
      low[f] += count * (group[f].replicas.ci_low + extra_per_segment);
      high[f] += count * (group[f].replicas.ci_high + extra_per_segment);
      failed[f] += group[f].replicas_failed;
      used[f] += group[f].replicas_used;
    }
  }
};

// Per detail rank, per usable group: the time until the rank arrived at the
// closing collective (duration − wait, from global bin representatives).
std::vector<std::vector<est::RankSamples>> per_rank_arrivals(const RunData& run, const RunAnalysis& analysis) {
  const DetailRanks& detail = run.detail;
  const std::size_t segments = detail.segments;
  const auto& durations = detail.global_index[index(Quantized::duration)];
  const auto& waits = detail.global_index[index(Quantized::wait_time)];
  const BinTable& duration_bins = run.global_bins[index(Quantized::duration)];
  const BinTable& wait_bins = run.global_bins[index(Quantized::wait_time)];
  const std::size_t rank_count = detail.ranks.size();
  std::vector<std::vector<est::RankSamples>> result;
  if (segments != analysis.segment_count || durations.size() != rank_count * segments ||
      waits.size() != rank_count * segments) {
    return result;
  }
  std::map<std::int32_t, const RankInfo*> rank_info;
  for (const RankInfo& info : run.ranks) rank_info[info.rank] = &info;
  const std::size_t per_rank_limit =
      std::max<std::size_t>(8, kMaxBootstrapSample / std::max<std::size_t>(1, rank_count));
  for (const GroupResult& group : analysis.groups) {
    if (!group.usable) continue;
    std::vector<est::RankSamples> ranks;
    for (std::size_t r = 0; r < rank_count; ++r) {
      est::RankSamples samples;
      if (const auto it = rank_info.find(detail.ranks[r]); it != rank_info.end()) {
        samples.node_id = it->second->node_id;
        samples.local_rank = it->second->local_rank;
      }
      std::vector<double> values;
      for (const std::size_t segment : group.members) {
        const std::size_t cell = r * segments + segment;
        if (durations[cell] >= duration_bins.size() || waits[cell] >= wait_bins.size()) continue;
        values.push_back(duration_bins[durations[cell]].rep() - wait_bins[waits[cell]].rep());
      }
      samples.values = quantile_subsample(std::move(values), per_rank_limit);
      ranks.push_back(std::move(samples));
    }
    result.push_back(std::move(ranks));
  }
  return result;
}

// One extreme among K maxima is drawn into 1 − (1 − 1/K)^K ≈ 63 % of the
// replicas, so a fit that breaks on it breaks on about that share. Smooth
// maxima that are merely not GEV break far less often (scale campaign: ≤ 15 %
// for Normal, lognormal and constant sleeps; ≤ 2.2 % for GEV samples,
// docs/statistics.md#validity-and-fallback). A third separates the two.
constexpr double kFallbackShareWarning = 1.0 / 3.0;

void warn_if_fit_misses_extremes(RunAnalysis& analysis, const std::string& method, const MethodTotals& totals) {
  double worst = 0.0;
  for (std::size_t f = 0; f < totals.used.size(); ++f) {
    if (totals.used[f] > 0) worst = std::max(worst, static_cast<double>(totals.failed[f]) / totals.used[f]);
  }
  if (worst <= kFallbackShareWarning) return;
  analysis.warnings.push_back(
      {"fit_misses_extremes",
       method + ": the GEV fit could not project " + std::to_string(static_cast<int>(std::lround(100.0 * worst))) +
           " % of the bootstrap replicas (they took the fallback: the other GEV method, then the non-parametric "
           "value). The segment maxima hold extremes this fit does not reproduce (e.g. rare long delays); prefer "
           "the non-parametric prediction."});
}

// Residuals of the usable-group segments from their group's mean
// duration_upper, in segment order.
est::VarianceInflation segment_time_inflation(const RunData& run, const RunAnalysis& analysis) {
  const std::vector<double>& upper = run.segments.duration_upper_s;
  std::vector<double> group_mean(analysis.groups.size(), 0.0);
  for (std::size_t g = 0; g < analysis.groups.size(); ++g) {
    const GroupResult& group = analysis.groups[g];
    if (!group.usable || group.members.empty()) continue;
    for (const std::size_t segment : group.members) group_mean[g] += upper[segment];
    group_mean[g] /= static_cast<double>(group.members.size());
  }
  std::vector<double> residuals;
  const std::size_t segments = std::min(upper.size(), analysis.segment_group.size());
  for (std::size_t segment = 0; segment < segments; ++segment) {
    const std::int64_t g = analysis.segment_group[segment];
    if (g < 0 || !analysis.groups[static_cast<std::size_t>(g)].usable) continue;
    residuals.push_back(upper[segment] - group_mean[static_cast<std::size_t>(g)]);
  }
  return est::variance_inflation_factor(residuals);
}

// Above this VIF the report warns: the intervals are then at least √2 ≈ 1.4
// times as wide as the iid ones.
constexpr double kAutocorrelationWarningAbove = 2.0;

void warn_if_autocorrelated(RunAnalysis& analysis, const est::VarianceInflation& inflation) {
  if (!(inflation.factor > kAutocorrelationWarningAbove)) return;
  char text[320];
  std::snprintf(text, sizeof text,
                "Segment times are autocorrelated (slow and fast periods last several segments): the variance of "
                "their sum is %.1f times the independent value%s, so the prediction intervals are %.2f times as "
                "wide as for independent segments.",
                inflation.factor, inflation.capped ? " (capped)" : "", std::sqrt(inflation.factor));
  analysis.warnings.push_back({"autocorrelated_segments", text});
}

struct Calibration {
  double other = 0.0;  // Σ duration_upper of segments outside usable groups
  double scale = 1.0;  // run_time / Σ duration_upper of all segments
};

void add_total(RunAnalysis& analysis, const std::string& method, const MethodTotals& totals,
               const Calibration& calibration, double world_size, double variance_inflation) {
  const auto total = [&](double groups) { return calibration.scale * (calibration.other + groups); };
  if (!totals.available) {
    analysis.warnings.push_back(
        {"prediction_unavailable", "No usable " + method + " prediction: a group had no valid replica."});
    return;
  }
  const auto& scales = analysis.parameters.scales;
  const double ci = std::clamp(analysis.parameters.ci, 0.5, 0.999999);
  const double z = boost::math::quantile(boost::math::normal(), 0.5 + ci / 2.0);
  const double widening = std::sqrt(variance_inflation);
  for (std::size_t f = 0; f < scales.size(); ++f) {
    const double median = totals.median[f];
    const double run_spread = z * std::sqrt(std::max(0.0, totals.run_variance[f]));
    const double below = widening * std::hypot(std::max(0.0, median - totals.low[f]), run_spread);
    const double above = widening * std::hypot(std::max(0.0, totals.high[f] - median), run_spread);
    // The groups' segments cannot take less than no time: a wide interval stops at 0 rather than below.
    const double lowest = std::max(0.0, median - below);
    analysis.predictions.push_back({method, scales[f], scales[f] * world_size, total(median), total(lowest),
                                    total(median + above), totals.failed[f], variance_inflation});
  }
  warn_if_fit_misses_extremes(analysis, method, totals);
}

}  // namespace

void fit_groups_and_predict(const RunData& run, RunAnalysis& analysis) {
  const AnalysisParameters& parameters = analysis.parameters;
  const std::vector<double>& factors = parameters.scales;
  const est::BootstrapOptions options{static_cast<std::size_t>(std::max(1, parameters.replicas)), parameters.ci};
  const double world_size = static_cast<double>(std::max(1, run.meta.world_size));
  MethodTotals nonparametric(factors.size()), pwm(factors.size()), mom(factors.size());
  Calibration calibration;
  double all_segments = 0.0;
  for (const double upper : run.segments.duration_upper_s) all_segments += upper;
  calibration.other = all_segments;
  if (all_segments > 0.0 && analysis.run_time_s > 0.0) calibration.scale = analysis.run_time_s / all_segments;
  std::vector<double> group_late_wait;                      // per usable group, median wait of the late rank
  std::vector<std::vector<double>> group_segment_variance;  // per usable group and factor
  for (std::size_t g = 0; g < analysis.groups.size(); ++g) {
    GroupResult& group = analysis.groups[g];
    if (!group.usable) continue;
    std::vector<double> maxima;
    std::vector<double> late_waits;
    for (const std::size_t segment : group.members) {
      maxima.push_back(run.segments.duration_upper_s[segment]);
      calibration.other -= run.segments.duration_upper_s[segment];
      if (segment < run.segments.late_wait_s.size()) late_waits.push_back(run.segments.late_wait_s[segment]);
    }
    group_late_wait.push_back(late_waits.empty() ? 0.0 : est::median(late_waits));
    const est::FallbackFit fits = est::fit_with_fallback(maxima);
    group.pwm = summarize_fit(fits.pwm);
    group.mom = summarize_fit(fits.mom);
    group.chosen_fit = std::string(est::to_string(fits.chosen.method));
    group.fits_disagree = fits.disagreement;
    if (factors.empty()) continue;
    const std::vector<double> sample = quantile_subsample(std::move(maxima), kMaxBootstrapSample);
    const double count = static_cast<double>(group.members.size());
    std::vector<double> sorted_sample = sample;
    std::sort(sorted_sample.begin(), sorted_sample.end());
    std::vector<double> segment_variance;
    for (const double factor : factors)
      segment_variance.push_back(est::empirical_maximum_variance(sorted_sample, factor));
    group_segment_variance.push_back(segment_variance);
    for (MethodTotals* totals : {&nonparametric, &pwm, &mom}) totals->add_run_variance(segment_variance, count);
    auto engine = engine_for(parameters.seed, g * 8 + kNonparametric);
    nonparametric.add(est::nonparametric_projection(sample, factors, options, engine), count, 0.0);
    engine = engine_for(parameters.seed, g * 8 + kPwm);
    pwm.add(est::parametric_projection(sample, factors, est::FitMethod::pwm, options, engine), count, 0.0);
    engine = engine_for(parameters.seed, g * 8 + kMom);
    mom.add(est::parametric_projection(sample, factors, est::FitMethod::mom, options, engine), count, 0.0);
  }
  if (factors.empty()) return;
  const est::VarianceInflation inflation = segment_time_inflation(run, analysis);
  const double vif = inflation.factor;
  analysis.prediction_variance_inflation = vif;
  warn_if_autocorrelated(analysis, inflation);
  add_total(analysis, "nonparametric", nonparametric, calibration, world_size, vif);
  add_total(analysis, "pwm", pwm, calibration, world_size, vif);
  add_total(analysis, "mom", mom, calibration, world_size, vif);

  // Per-rank variants: each sample is one rank's arrival, so f× processes
  // is the maximum of f·P arrivals; the late rank's wait (the collective's own
  // latency) is added back per segment.
  std::set<std::int32_t> nodes;
  bool shared_node = false;
  for (const RankInfo& info : run.ranks) {
    nodes.insert(info.node_id);
    shared_node = shared_node || info.local_rank > 0;
  }
  if (nodes.size() < 2 && !shared_node) return;
  const std::vector<std::vector<est::RankSamples>> arrivals = per_rank_arrivals(run, analysis);
  if (arrivals.size() != group_late_wait.size() || arrivals.empty()) return;
  std::vector<double> rank_factors;
  for (const double factor : factors) rank_factors.push_back(factor * world_size);
  auto per_rank_variant = [&](const std::string& method, bool inter_node, std::size_t partitions) {
    MethodTotals totals(factors.size());
    const std::size_t replicas_per_partition =
        std::max<std::size_t>(1, options.replicas / std::max<std::size_t>(1, partitions));
    std::size_t usable_index = 0;
    for (std::size_t g = 0; g < analysis.groups.size(); ++g) {
      if (!analysis.groups[g].usable) continue;
      auto engine = engine_for(parameters.seed, g * 8 + (inter_node ? kInterNode : kIntraNode));
      const auto& ranks = arrivals[usable_index];
      const auto projection = inter_node ? est::inter_node_projection(ranks, rank_factors, est::FitMethod::pwm,
                                                                      replicas_per_partition, parameters.ci, engine)
                                         : est::intra_node_projection(ranks, rank_factors, est::FitMethod::pwm,
                                                                      replicas_per_partition, parameters.ci, engine);
      const double count = static_cast<double>(analysis.groups[g].members.size());
      totals.add(projection, count, group_late_wait[usable_index]);
      if (usable_index < group_segment_variance.size())
        totals.add_run_variance(group_segment_variance[usable_index], count);
      ++usable_index;
    }
    add_total(analysis, method, totals, calibration, world_size, vif);
  };
  if (nodes.size() > 1) per_rank_variant("pwm-internode", true, nodes.size());
  if (shared_node) {
    std::set<std::int32_t> local_ranks;
    for (const RankInfo& info : run.ranks) local_ranks.insert(info.local_rank);
    per_rank_variant("pwm-intranode", false, local_ranks.size());
  }
}

}  // namespace tremor::analysis::detail
