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
// Groups are resampled independently, so the r-th bootstrap replicas of all
// groups form one replica of the run: the totals are summed replica by
// replica and their percentiles give the CI of the expected run time.
//
// One run, not its mean. Each replica also simulates one run at the larger
// size: every segment of a group draws its maximum at f from the replica's
// law (the refit GEV scaled by max-stability, or the resample), the draws are
// summed and the unassessed time added. The percentiles of these totals are
// the prediction interval for one run: they hold both the uncertainty of the
// fit and the run-to-run spread of the sum of segment maxima.
//
// The collective's latency. A segment's maximum holds its closing collective
// at the base size's latency, which a tree collective over f·P processes
// exceeds: each segment adds the growth of estimators/collective_latency
// (α·(⌈log2 fP⌉ − ⌈log2 P⌉), α the low end of the least waits of the run's
// segments closing with the group's call over ⌈log2 P⌉), bootstrapped from
// those least waits in both intervals.
//
// Dependence. Both treat a run's segments as independent. On a shared machine
// slow periods last several segments, so segment times are positively
// autocorrelated and the variance of their sum is several times the iid
// value. The variance inflation factor (VIF, Newey–West long-run variance over
// the iid variance, estimators/long_run_variance) of the usable-group
// segments' residuals from their group mean, in segment order (the mean
// removes the groups' levels, which are not dependence), widens both
// intervals' half-widths by √VIF. The same factor is assumed for the run at
// the larger scale.
//
// Fallback. A parametric replica whose fit breaks (typically on the replicas
// holding the sample's extremes) takes the other GEV method, then the
// non-parametric value, and is counted in replicas_failed; a large share
// raises `fit_misses_extremes`, which points to the non-parametric method.
//
// Cost. Bootstraps run on at most kMaxBootstrapSample evenly spaced order
// statistics per group (see quantile_subsample) and a simulated run draws at
// most estimators::kExactRunDraws maxima per group, so 10^6 segments cost
// about as much as 10^3; the fits themselves use the whole group.
//
// Replica plan. Real applications have hundreds of groups, and replicas ×
// groups × methods bootstraps took longer than the run. A run's replicas need
// not all be distinct per group: a group bootstrapped B_g < R times gives each
// of the R run replicas one of its B_g (drawn with replacement,
// estimators::take_replicas), so totals and intervals keep their form and
// only the Monte Carlo error grows, by the variance of the group's mean over
// B_g draws. Within a budget of bootstrap work the plan gives B_g ∝ the
// group's standard error (n_g·sd_g/√sample, Neyman's allocation, which
// minimizes Σ Var_g/B_g), between kFewestGroupReplicas and R; a run within
// the budget at R (every run of few groups) is bootstrapped exactly as
// before. Each prediction states the resulting error (monte_carlo_error_s,
// docs/scale-prediction.md#monte-carlo-error).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <string>

#include "analysis_internal.hpp"
#include "detail_cells.hpp"
#include "tremor/analysis/analysis.hpp"
#include "tremor/estimators/bootstrap.hpp"
#include "tremor/estimators/collective_latency.hpp"
#include "tremor/estimators/gev_fit.hpp"
#include "tremor/estimators/long_run_variance.hpp"
#include "tremor/estimators/order_statistics.hpp"
#include "tremor/estimators/parallel.hpp"

namespace tremor::analysis::detail {
namespace {

namespace est = tremor::estimators;

enum Stream : std::uint64_t {
  kNonparametric = 1,
  kPwm = 2,
  kMom = 3,
  kInterNode = 4,
  kIntraNode = 5,
  kLatency = 6,
  kReplicaChoice = 7
};

// The budget of bootstrap work per method, in sample values drawn (a replica
// of a group costs its bootstrap sample plus kReplicaOverhead values' worth of
// fitting, projecting and simulating): 1000 replicas of 60 groups of 30
// segments (docs/analysis-time.md).
constexpr double kReplicaBudget = 60.0 * 1000.0 * (30.0 + 60.0);
constexpr double kReplicaOverhead = 60.0;
// The fewest distinct replicas a group gets: the standard error of its mean
// over them is a tenth of its own spread.
constexpr std::size_t kFewestGroupReplicas = 100;

// Per usable group, the distinct replicas to compute (see Replica plan).
std::vector<std::size_t> plan_replicas(const std::vector<double>& standard_errors, const std::vector<double>& costs,
                                       std::size_t replicas) {
  const std::size_t groups = standard_errors.size();
  const std::size_t fewest = std::min(replicas, kFewestGroupReplicas);
  double full = 0.0;
  for (const double cost : costs) full += cost * static_cast<double>(replicas);
  if (full <= kReplicaBudget) return std::vector<std::size_t>(groups, replicas);
  const auto plan_at = [&](double per_error) {
    std::vector<std::size_t> plan(groups);
    double work = 0.0;
    for (std::size_t g = 0; g < groups; ++g) {
      const double wanted = std::ceil(per_error * standard_errors[g]);
      plan[g] = std::clamp(static_cast<std::size_t>(std::min(wanted, static_cast<double>(replicas))), fewest,
                           replicas);
      work += costs[g] * static_cast<double>(plan[g]);
    }
    return std::make_pair(plan, work);
  };
  double largest = 0.0;
  for (const double error : standard_errors) largest = std::max(largest, error);
  if (!(largest > 0.0) || plan_at(0.0).second >= kReplicaBudget) return plan_at(0.0).first;
  // The replicas grow with per_error; bisect for the largest within the budget.
  double low = 0.0, high = static_cast<double>(replicas) / largest * 2.0;
  // Groups of no spread stay at the fewest, so the budget may never be reached.
  for (int doubling = 0; doubling < 64 && plan_at(high).second <= kReplicaBudget; ++doubling) high *= 2.0;
  for (int step = 0; step < 50; ++step) {
    const double middle = 0.5 * (low + high);
    (plan_at(middle).second <= kReplicaBudget ? low : high) = middle;
  }
  return plan_at(low).first;
}

// The group's standard error as the plan weighs it: n·sd/√(bootstrap sample).
double group_standard_error(const std::vector<double>& sample, std::size_t segments) {
  if (sample.size() < 2) return 0.0;
  double mean = 0.0;
  for (const double v : sample) mean += v;
  mean /= static_cast<double>(sample.size());
  double squares = 0.0;
  for (const double v : sample) squares += (v - mean) * (v - mean);
  const double sd = std::sqrt(squares / static_cast<double>(sample.size() - 1));
  return static_cast<double>(segments) * sd / std::sqrt(static_cast<double>(sample.size()));
}

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

std::string text(const char* pattern, double a, double b = 0.0, double c = 0.0) {
  char buffer[400];
  std::snprintf(buffer, sizeof buffer, pattern, a, b, c);
  return buffer;
}

// Per detail rank, per usable group: the time until the rank arrived at the
// closing collective (duration − wait, from global bin representatives).
std::vector<std::vector<est::RankSamples>> per_rank_arrivals(const RunData& run, const RunAnalysis& analysis) {
  const DetailRanks& detail = run.detail;
  const std::size_t segments = detail.segments;
  const DetailCells durations(run, Quantized::duration);
  const DetailCells waits(run, Quantized::wait_time);
  const std::size_t rank_count = detail.ranks.size();
  std::vector<std::vector<est::RankSamples>> result;
  if (segments != analysis.segment_count || !durations.complete() || !waits.complete()) {
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
        const auto duration = durations.find(r, segment);
        const auto wait = waits.find(r, segment);
        if (duration && wait) values.push_back(*duration - *wait);
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
// maxima that are merely not GEV break far less often
// (docs/statistics.md#validity-and-fallback). A third separates the two.
constexpr double kFallbackShareWarning = 1.0 / 3.0;

double worst_fallback_share(const est::RunTotals& totals, std::size_t factors) {
  double worst = 0.0;
  for (std::size_t f = 0; f < factors; ++f) worst = std::max(worst, totals.fallback_share(f));
  return worst;
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
  char message[320];
  std::snprintf(message, sizeof message,
                "Segment times are autocorrelated (slow and fast periods last several segments): the variance of "
                "their sum is %.1f times the independent value%s, so the prediction intervals are %.2f times as "
                "wide as for independent segments.",
                inflation.factor, inflation.capped ? " (capped)" : "", std::sqrt(inflation.factor));
  analysis.warnings.push_back({"autocorrelated_segments", message});
}

struct Calibration {
  double other = 0.0;  // Σ duration_upper of segments outside usable groups
  double scale = 1.0;  // run_time / Σ duration_upper of all segments
};

// The cases of the warnings raised per method.
struct MethodCases {
  std::vector<WarningCase> unavailable, misses_extremes;
};

void add_total(RunAnalysis& analysis, const std::string& method, const est::RunTotals& totals,
               const Calibration& calibration, double world_size, double variance_inflation,
               std::size_t group_replicas_min, MethodCases& cases) {
  if (!totals.available()) {
    cases.unavailable.push_back({method, 1.0, "a group had no valid replica"});
    return;
  }
  const auto& scales = analysis.parameters.scales;
  const double ci = std::clamp(analysis.parameters.ci, 0.5, 0.999999);
  const std::vector<est::RunInterval> intervals =
      totals.summarize(calibration.other, calibration.scale, ci, std::sqrt(variance_inflation));
  for (std::size_t f = 0; f < scales.size() && f < intervals.size(); ++f) {
    const est::RunInterval& interval = intervals[f];
    analysis.predictions.push_back({method, scales[f], scales[f] * world_size, interval.median, interval.ci_low,
                                    interval.ci_high, interval.pi_low, interval.pi_high, totals.failed(f),
                                    variance_inflation, interval.monte_carlo_error, group_replicas_min});
  }
  const double share = worst_fallback_share(totals, scales.size());
  if (share > kFallbackShareWarning) {
    cases.misses_extremes.push_back(
        {method, share, text("%.0f %% of its replicas", 100.0 * share), {{"fallback_share", share}}});
  }
}

// The least waits of all segments, per closing call.
std::map<std::uint16_t, std::vector<double>> least_waits_by_call(const SegmentTable& segments) {
  std::map<std::uint16_t, std::vector<double>> waits;
  const std::size_t count = std::min(segments.late_wait_s.size(), segments.closing_call.size());
  for (std::size_t s = 0; s < count; ++s) waits[segments.closing_call[s]].push_back(segments.late_wait_s[s]);
  return waits;
}

// The closing call most of the members end with (the smallest index on a tie).
std::uint16_t most_frequent_call(const SegmentTable& segments, const std::vector<std::size_t>& members) {
  std::map<std::uint16_t, std::size_t> counts;
  for (const std::size_t s : members)
    if (s < segments.closing_call.size()) ++counts[segments.closing_call[s]];
  std::uint16_t best = 0;
  std::size_t most = 0;
  for (const auto& [call, n] : counts) {
    if (n > most) {
      best = call;
      most = n;
    }
  }
  return best;
}

// One usable group's bootstrap replicas per method, and its collective's
// latency growth.
struct GroupBootstraps {
  est::GroupReplicas nonparametric, pwm, mom;
  std::vector<std::vector<double>> growth;
};

// Per usable group, what the headline rule reads.
struct GroupFacts {
  double time_s = 0.0;
  // PWM's fit of the whole sample: usable, n >= 15, |k| <= 0.5 (the PWM
  // polynomial's validated range) and a valid projection at every factor.
  bool pwm_supported = false;
};

// The headline (docs/statistics.md#prediction): PWM unless the data do not
// support a GEV fit. The data are judged by PWM's fit of the whole sample:
// Hosking, Wallis & Wood validated PWM for n >= 15 and |k| <= 0.5, and the
// fit must project at every factor; "most of the assessed time" is half.
// Replicas that fall back (resamples that duplicate an extreme break their
// own fits) take the other method's or the resample's value, so they shape
// PWM's interval, not the validity of its fit: their share is reported, and
// warned about above a third, but does not choose the method.
void choose_headline(RunAnalysis& analysis, const std::vector<GroupFacts>& facts, const est::RunTotals& pwm) {
  const auto has = [&](const std::string& method) {
    return std::any_of(analysis.predictions.begin(), analysis.predictions.end(),
                       [&](const Prediction& p) { return p.method == method; });
  };
  double assessed = 0.0, supported = 0.0;
  for (const GroupFacts& group : facts) {
    assessed += group.time_s;
    if (group.pwm_supported) supported += group.time_s;
  }
  const double supported_share = assessed > 0.0 ? supported / assessed : 0.0;
  const double fallback_share = worst_fallback_share(pwm, analysis.parameters.scales.size());
  PredictionHeadline& headline = analysis.prediction_headline;
  if (has("pwm") && supported_share >= 0.5) {
    headline = {"pwm", text("fits usable with n >= 15 and |k| <= 0.5 for %.0f %% of the assessed time, %.0f %% of "
                            "replicas fell back",
                            100.0 * supported_share, 100.0 * fallback_share)};
  } else if (has("nonparametric")) {
    headline.method = "nonparametric";
    headline.reason = has("pwm") ? text("PWM fits usable with n >= 15 and |k| <= 0.5 for only %.0f %% of the "
                                        "assessed time",
                                        100.0 * supported_share)
                                 : "PWM made no prediction";
  }
}

// PWM and MOM disagree (docs/statistics.md#validity-and-fallback): how far
// apart they put the group's total at 16× the processes (the rule's own EMMA(16)),
// in % of the run time, orders the cases.
WarningCase disagreement_case(std::size_t g, const GroupResult& group, const est::FallbackFit& fits, double run_time) {
  const double apart = static_cast<double>(group.members.size()) *
                       std::fabs(est::emma(fits.pwm.params, 16.0) - est::emma(fits.mom.params, 16.0));
  const double percent = run_time > 0.0 ? 100.0 * apart / run_time : 0.0;
  return {"group " + std::to_string(g),
          percent,
          text("k %+.2f vs %+.2f, %.2f %% of the run apart at 16x", fits.pwm.params.k, fits.mom.params.k, percent),
          {{"group", static_cast<double>(g)},
           {"segments", static_cast<double>(group.members.size())},
           {"k_pwm", fits.pwm.params.k},
           {"k_mom", fits.mom.params.k},
           {"apart_percent_of_run", percent}}};
}

}  // namespace

void fit_groups_and_predict(const RunData& run, RunAnalysis& analysis) {
  const AnalysisParameters& parameters = analysis.parameters;
  const std::vector<double>& factors = parameters.scales;
  const auto replicas = static_cast<std::size_t>(std::max(1, parameters.replicas));
  const double world_size = static_cast<double>(std::max(1, run.meta.world_size));
  est::RunTotals nonparametric(factors.size()), pwm(factors.size()), mom(factors.size());
  Calibration calibration;
  double all_segments = 0.0;
  for (const double upper : run.segments.duration_upper_s) all_segments += upper;
  calibration.other = all_segments;
  if (all_segments > 0.0 && analysis.run_time_s > 0.0) calibration.scale = analysis.run_time_s / all_segments;
  std::vector<double> group_late_wait;  // per usable group, median wait of the late rank
  std::vector<GroupFacts> facts;        // per usable group
  // Per usable group, the least waits of every segment of the run that closes
  // with the group's collective (its most frequent closing call): the
  // collective's cost is the call's, and more segments give a cleaner low end.
  const std::map<std::uint16_t, std::vector<double>> call_waits = least_waits_by_call(run.segments);
  std::vector<std::vector<double>> group_least_waits;
  std::vector<std::size_t> group_index;  // per usable group, its index in analysis.groups
  // Per usable group: replicas of the per-segment growth of the collective's
  // latency. The per-rank variants ask for at most as many replicas as the
  // group's own bootstrap: their growth is read from the latencies kept then
  // (a prefix of the same draws, est::collective_latency_replicas).
  std::vector<std::vector<double>> group_latencies;  // per usable group, its replicas' base latencies
  std::vector<std::size_t> latency_replicas;         // per usable group, how many were drawn
  const auto latency_growth = [&](std::size_t usable, std::size_t count) {
    if (latency_replicas[usable] < count) {
      auto engine = engine_for(parameters.seed, group_index[usable] * 8 + kLatency);
      group_latencies[usable] = est::collective_latency_replicas(group_least_waits[usable], world_size, count, engine);
      latency_replicas[usable] = count;
    }
    return est::collective_latency_growth_of(group_latencies[usable], world_size, factors, count);
  };
  std::vector<WarningCase> disagreements;
  double disagreeing_time = 0.0, assessed_time = 0.0;
  std::vector<std::vector<double>> samples;  // per usable group, the bootstrap sample
  std::vector<double> standard_errors, costs;  // per usable group, for the replica plan
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
    const auto call = call_waits.find(most_frequent_call(run.segments, group.members));
    group_least_waits.push_back(
        call == call_waits.end() ? std::vector<double>{} : quantile_subsample(call->second, kMaxBootstrapSample));
    group_index.push_back(g);
    const est::FallbackFit fits = est::fit_with_fallback(maxima);
    group.pwm = summarize_fit(fits.pwm);
    group.mom = summarize_fit(fits.mom);
    group.chosen_fit = std::string(est::to_string(fits.chosen.method));
    group.fits_disagree = fits.disagreement;
    assessed_time += group.time_s;
    if (fits.disagreement) {
      disagreements.push_back(disagreement_case(g, group, fits, analysis.run_time_s));
      disagreeing_time += group.time_s;
    }
    const bool pwm_projects = std::all_of(factors.begin(), factors.end(), [&](double factor) {
      return est::project_expected_maximum(fits.pwm, factor).valid;
    });
    facts.push_back({group.time_s, fits.pwm.usable() && pwm_projects &&
                                       (fits.pwm.flags & (est::kLowN | est::kPwmKOutOfRange)) == 0});
    if (factors.empty()) continue;
    samples.push_back(quantile_subsample(std::move(maxima), kMaxBootstrapSample));
    standard_errors.push_back(group_standard_error(samples.back(), group.members.size()));
    costs.push_back(static_cast<double>(samples.back().size()) + kReplicaOverhead);
  }
  const std::vector<std::size_t> plan = plan_replicas(standard_errors, costs, replicas);
  group_latencies.resize(group_index.size());
  latency_replicas.assign(group_index.size(), 0);
  const std::size_t group_replicas_min = plan.empty() ? replicas : *std::min_element(plan.begin(), plan.end());
  // The run replicas' picks among a group's distinct ones (identity at R).
  const auto choice = [&](std::size_t usable, std::size_t distinct, std::size_t count) {
    auto engine = engine_for(parameters.seed, group_index[usable] * 8 + kReplicaChoice);
    return est::replica_choice(distinct, count, engine);
  };
  // Each group's bootstraps draw from engines of their own (seed, group,
  // method): groups run in parallel and are added in group order.
  const int threads = est::analysis_threads(parameters.threads);
  const auto bootstrap_group = [&](std::size_t usable) {
    const std::size_t g = group_index[usable];
    const std::vector<double>& sample = samples[usable];
    const std::size_t segments = analysis.groups[g].members.size();
    const std::size_t distinct = plan[usable];
    const std::vector<std::size_t> picks = choice(usable, distinct, replicas);
    const auto taken = [&](est::GroupReplicas group) {
      return distinct < replicas ? est::take_replicas(group, picks) : group;
    };
    GroupBootstraps out;
    auto engine = engine_for(parameters.seed, g * 8 + kNonparametric);
    out.nonparametric = taken(est::nonparametric_replicas(sample, factors, distinct, segments, engine));
    engine = engine_for(parameters.seed, g * 8 + kPwm);
    out.pwm = taken(est::parametric_replicas(sample, factors, est::FitMethod::pwm, distinct, segments, engine));
    engine = engine_for(parameters.seed, g * 8 + kMom);
    out.mom = taken(est::parametric_replicas(sample, factors, est::FitMethod::mom, distinct, segments, engine));
    out.growth = latency_growth(usable, distinct);
    if (distinct < replicas) out.growth = est::take_replicas(out.growth, picks);
    return out;
  };
  est::parallel_in_order<GroupBootstraps>(samples.size(), threads, bootstrap_group,
                                          [&](std::size_t usable, const GroupBootstraps& group) {
                                            const std::size_t segments = analysis.groups[group_index[usable]].members.size();
                                            const std::size_t distinct = plan[usable];
                                            nonparametric.add(group.nonparametric);
                                            pwm.add(group.pwm);
                                            mom.add(group.mom);
                                            for (est::RunTotals* totals : {&nonparametric, &pwm, &mom})
                                              totals->add_per_segment(segments, group.growth,
                                                                      distinct < replicas ? distinct : 0);
                                          });
  if (!disagreements.empty()) {
    std::string summary =
        text(disagreements.size() == 1 ? "PWM and MOM GEV fits disagree in %.0f group (%.1f %% of the assessed time); "
                                         "treat its predictions with care."
                                       : "PWM and MOM GEV fits disagree in %.0f groups (%.1f %% of the assessed time); "
                                         "treat their predictions with care.",
             static_cast<double>(disagreements.size()),
             assessed_time > 0.0 ? 100.0 * disagreeing_time / assessed_time : 0.0);
    add_warning_cases(analysis, "fit_disagreement", std::move(summary), std::move(disagreements));
  }
  if (factors.empty()) return;
  const est::VarianceInflation inflation = segment_time_inflation(run, analysis);
  const double vif = inflation.factor;
  analysis.prediction_variance_inflation = vif;
  warn_if_autocorrelated(analysis, inflation);
  MethodCases cases;
  add_total(analysis, "nonparametric", nonparametric, calibration, world_size, vif, group_replicas_min, cases);
  add_total(analysis, "pwm", pwm, calibration, world_size, vif, group_replicas_min, cases);
  add_total(analysis, "mom", mom, calibration, world_size, vif, group_replicas_min, cases);
  choose_headline(analysis, facts, pwm);

  // Per-rank variants: each sample is one rank's arrival, so f× processes
  // is the maximum of f·P arrivals; the late rank's wait (the collective's own
  // latency) is added back per segment.
  std::set<std::int32_t> nodes;
  bool shared_node = false;
  for (const RankInfo& info : run.ranks) {
    nodes.insert(info.node_id);
    shared_node = shared_node || info.local_rank > 0;
  }
  const std::vector<std::vector<est::RankSamples>> arrivals =
      nodes.size() > 1 || shared_node ? per_rank_arrivals(run, analysis) : std::vector<std::vector<est::RankSamples>>{};
  if (arrivals.size() == group_late_wait.size() && !arrivals.empty()) {
    std::vector<double> rank_factors;
    for (const double factor : factors) rank_factors.push_back(factor * world_size);
    auto per_rank_variant = [&](const std::string& method, est::RankPartition partition, std::size_t partitions) {
      est::RunTotals totals(factors.size());
      const std::size_t shares = std::max<std::size_t>(1, partitions);
      const std::size_t run_replicas = std::max<std::size_t>(1, replicas / shares) * shares;
      struct RankBootstraps {
        est::GroupReplicas group;
        std::vector<std::vector<double>> growth;
        std::size_t distinct = 0;
      };
      const auto bootstrap_ranks = [&](std::size_t usable) {
        const std::size_t g = group_index[usable];
        const bool by_node = partition == est::RankPartition::node;
        auto engine = engine_for(parameters.seed, g * 8 + (by_node ? kInterNode : kIntraNode));
        const std::size_t segments = analysis.groups[g].members.size();
        const std::size_t per_partition = std::max<std::size_t>(1, std::min(plan[usable], replicas) / shares);
        RankBootstraps out;
        out.distinct = per_partition * shares;
        out.group = est::partitioned_replicas(arrivals[usable], rank_factors, est::FitMethod::pwm, partition,
                                              per_partition, segments, engine);
        out.growth = latency_growth(usable, out.distinct);
        if (out.distinct < run_replicas) {
          const std::vector<std::size_t> picks = choice(usable, out.distinct, run_replicas);
          out.group = est::take_replicas(out.group, picks);
          out.growth = est::take_replicas(out.growth, picks);
        }
        return out;
      };
      est::parallel_in_order<RankBootstraps>(
          group_index.size(), threads, bootstrap_ranks, [&](std::size_t usable, const RankBootstraps& group) {
            const std::size_t segments = analysis.groups[group_index[usable]].members.size();
            totals.add(group.group, group_late_wait[usable]);
            totals.add_per_segment(segments, group.growth, group.distinct < run_replicas ? group.distinct : 0);
          });
      add_total(analysis, method, totals, calibration, world_size, vif, group_replicas_min, cases);
    };
    if (nodes.size() > 1) per_rank_variant("pwm-internode", est::RankPartition::node, nodes.size());
    if (shared_node) {
      std::set<std::int32_t> local_ranks;
      for (const RankInfo& info : run.ranks) local_ranks.insert(info.local_rank);
      per_rank_variant("pwm-intranode", est::RankPartition::local_rank, local_ranks.size());
    }
  }
  if (!cases.unavailable.empty()) {
    add_warning_cases(analysis, "prediction_unavailable",
                      "No prediction from some methods: a group had no valid bootstrap replica.",
                      std::move(cases.unavailable));
  }
  if (!cases.misses_extremes.empty()) {
    add_warning_cases(analysis, "fit_misses_extremes",
                      "A GEV fit could not project more than a third of its bootstrap replicas (they took the "
                      "fallback: the other GEV method, then the non-parametric value): the segment maxima hold "
                      "extremes that resampled fits do not reproduce (e.g. rare long delays), and the method's "
                      "interval mixes in the fallback's values; the headline names the method the data support.",
                      std::move(cases.misses_extremes));
  }
}

}  // namespace tremor::analysis::detail
