// The primary estimate (docs/statistics-primary.md): one model of a
// segment's time, fitted to the run. Per model group (groups.hpp) a segment
// lasts its group's intrinsic time (work as a covariate) times clean jitter,
// plus what the measured evidence shows it lost (evidence.hpp, a known part
// of its time), plus a delay the durations alone show (spike and slab:
// Bernoulli(pi) x Exp(tau)). The steps: the model (groups, covariates, a
// first fit), then fit, charge, bound and interval, each returning its own
// result. The rules the model alone does not give are the named functions of
// rules.hpp.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <utility>

#include "../analysis_internal.hpp"
#include "estimate.hpp"
#include "rules.hpp"
#include "stranded_segments.hpp"
#include "tremor/estimators/interference.hpp"
#include "tremor/estimators/intrinsic.hpp"
#include "tremor/estimators/lost_interval.hpp"

namespace tremor::analysis::detail {
namespace {

namespace est = tremor::estimators;

constexpr std::uint64_t kIntervalStream = 0x7072696d617279ULL;

// Per group, its upper middle work value (0 for an empty group).
std::vector<double> group_work_medians(const std::vector<std::vector<double>>& work) {
  std::vector<double> medians;
  for (std::vector<double> values : work) {
    if (values.empty()) {
      medians.push_back(0.0);
      continue;
    }
    const auto middle = values.begin() + static_cast<std::ptrdiff_t>(values.size() / 2);
    std::nth_element(values.begin(), middle, values.end());
    medians.push_back(*middle);
  }
  return medians;
}

// The model's groups: stranded segments joined, recurring places and warm-up apart.
void model_groups(const RunData& run, const RunAnalysis& analysis, const AnalysisParameters& parameters,
                  PrimaryModel& model) {
  model.min_group = static_cast<std::size_t>(std::max(1, parameters.min_group));
  model.parent_groups = analysis.groups.size();
  model.run_time_s = analysis.run_time_s;
  model.has_work = run.segments.work.size() == run.segments.duration_s.size();
  model.cpu_time_work = model.has_work && work_is_cpu_time(run);
  std::vector<std::uint8_t> split_off(analysis.segment_count, 0);
  const std::vector<std::int64_t> membership =
      primary_membership(run, analysis, parameters.cluster_threshold, model.cpu_time_work);
  model.groups = split_by_previous_group(analysis, membership, model.min_group, split_off);
  model.warm_up_segments = set_warm_up_apart(model.groups);
  model.recurring_segments = static_cast<std::size_t>(std::count(split_off.begin(), split_off.end(), 1));
  model.segment_group.assign(analysis.segment_count, -1);
  for (std::size_t i = 0; i < model.groups.size(); ++i) {
    for (const std::size_t segment : model.groups[i].all_members())
      model.segment_group[segment] = static_cast<std::int32_t>(i);
  }
}

// Per group, its members' durations and work, and the work covariate.
void model_covariates(const RunData& run, PrimaryModel& model) {
  model.durations.assign(model.groups.size(), {});
  model.work.assign(model.groups.size(), {});
  for (std::size_t i = 0; i < model.groups.size(); ++i) {
    for (const std::size_t segment : model.groups[i].members) {
      model.durations[i].push_back(run.segments.duration_s[segment]);
      if (model.has_work) model.work[i].push_back(run.segments.work[segment]);
    }
  }
  const std::vector<double> work_medians = model.cpu_time_work ? group_work_medians(model.work) : std::vector<double>{};
  if (model.cpu_time_work) apply_work_covariate(model.work, work_medians, model.durations);
  for (const double median : work_medians) model.work_floor_s.push_back(intrinsic_floor(median));
}

// The work columns as the intrinsic fit takes them (none without a work column).
std::vector<std::span<const double>> work_spans(const PrimaryModel& model) {
  if (!model.has_work) return {};
  return {model.work.begin(), model.work.end()};
}

// What the model fits: its durations, at most what the measured evidence
// leaves of them, and whatever the fit says of them.
struct ModelFit {
  std::vector<std::vector<double>> durations;  // per group: what the fit saw
  est::IntrinsicEstimate estimate;
  double measured_error_s2 = 0.0;  // the measured delays' own error, as the durations show it
};

// Per measured segment (in the members' order): the duration less the
// measured delay, before deconvolved_duration's floors.
std::vector<float> left_by_measured(const PrimaryModel& model, std::span<const double> measured) {
  std::vector<float> left;
  for (std::size_t i = 0; i < model.groups.size(); ++i) {
    for (std::size_t j = 0; j < model.groups[i].members.size(); ++j) {
      const double m = measured[model.groups[i].members[j]];
      if (m > 0.0) left.push_back(static_cast<float>(model.durations[i][j] - m));
    }
  }
  return left;
}

// The measured delays read against the durations the fit explains
// (est::measured_error_variance): per measured segment, what is left of it
// beyond its intrinsic time and posterior delay, and that residual's variance.
double measured_error(const PrimaryModel& model, std::span<const double> measured, const ModelFit& fit,
                      std::span<const float> left_by_measured) {
  std::vector<est::MeasuredResidual> residuals;
  residuals.reserve(left_by_measured.size());
  std::size_t next = 0;
  const est::IntrinsicEstimate& estimate = fit.estimate;
  const double sigma = estimate.relative_spread;
  for (std::size_t i = 0; i < model.groups.size() && i < estimate.groups.size(); ++i) {
    const double baseline = estimate.groups[i].baseline;
    for (std::size_t j = 0; j < model.groups[i].members.size(); ++j) {
      if (!(measured[model.groups[i].members[j]] > 0.0) || next >= left_by_measured.size()) continue;
      const double left = left_by_measured[next++];
      double variance = sigma * sigma * baseline * baseline;
      if (baseline > 0.0)
        variance += baseline * baseline *
                    est::delay_posterior_variance(fit.durations[i][j] / baseline - 1.0, sigma,
                                                  estimate.delay_probability, estimate.relative_delay_mean);
      residuals.push_back({left - baseline - estimate.lost[i][j], variance});
    }
  }
  return est::measured_error_variance(residuals);
}

// Fit: the measured delay is a known part of each segment's time, so the
// intrinsic times, the jitter and the delays the durations show are fitted
// to what is left of it (deconvolved_duration). Takes the model's durations.
ModelFit fit_model(PrimaryModel& model, std::span<const double> measured) {
  const std::vector<float> left = model.taking_turns ? std::vector<float>{} : left_by_measured(model, measured);
  ModelFit fit;
  fit.durations = std::move(model.durations);
  for (std::size_t i = 0; i < model.groups.size(); ++i) {
    const double intrinsic = i < model.first_intrinsic_s.size() ? model.first_intrinsic_s[i] : 0.0;
    for (std::size_t j = 0; j < model.groups[i].members.size(); ++j) {
      const double m = measured[model.groups[i].members[j]];
      if (m > 0.0) fit.durations[i][j] = deconvolved_duration(fit.durations[i][j], m, intrinsic);
    }
  }
  const std::vector<std::span<const double>> spans(fit.durations.begin(), fit.durations.end());
  fit.estimate = est::estimate_intrinsic(spans, {}, work_spans(model), model.work_floor_s);
  if (model.taking_turns) {
    interleaving_only(spans, fit.estimate);  // no slab, and the measured delays are the low end as they stand
  } else {
    fit.measured_error_s2 = measured_error(model, measured, fit, left);
  }
  return fit;
}

// What each segment is charged, and each RunAnalysis group.
struct Charges {
  std::vector<double> lost_s;  // per segment
  std::vector<std::uint8_t> interfered;
  std::vector<float> delay_probability;
  std::vector<double> group_lost_s;       // per RunAnalysis group
  std::vector<double> group_intrinsic_s;  // per RunAnalysis group
  double measured_s = 0.0;                // the measured delays, summed
  std::vector<double> floor_added_s;      // per run floor (MeasuredEvidence::run_floors): what it added
  double floors_added_s = 0.0;            // their sum
};

// Per RunAnalysis group: its subgroups' lost time (posterior and measured)
// and their size-weighted mean intrinsic duration.
void charge_groups(const PrimaryModel& model, const ModelFit& fit, std::span<const double> measured, Charges& charges) {
  charges.group_lost_s.assign(model.parent_groups, 0.0);
  charges.group_intrinsic_s.assign(model.parent_groups, 0.0);
  std::vector<double> weight(model.parent_groups, 0.0);
  for (std::size_t i = 0; i < model.groups.size(); ++i) {
    const std::size_t parent = model.groups[i].parent;
    charges.group_lost_s[parent] += fit.estimate.groups[i].lost;
    for (const std::size_t segment : model.groups[i].all_members()) charges.group_lost_s[parent] += measured[segment];
    const auto size = static_cast<double>(model.groups[i].members.size());
    charges.group_intrinsic_s[parent] += size * fit.estimate.groups[i].baseline;
    weight[parent] += size;
  }
  for (std::size_t g = 0; g < model.parent_groups; ++g) {
    if (weight[g] > 0.0) charges.group_intrinsic_s[g] /= weight[g];
  }
}

// Charge: each segment its measured delay plus its posterior expected
// delay; last, the run floors (what ranks taking turns slept) bound
// everything charged so far from below.
Charges charge(const RunData& run, const PrimaryModel& model, const ModelFit& fit, const MeasuredEvidence& evidence) {
  const std::size_t n = evidence.measured_s.size();
  Charges charges;
  charges.lost_s = evidence.measured_s;
  charges.interfered.assign(n, 0);
  charges.delay_probability.assign(n, 0.0F);
  for (std::size_t s = 0; s < n; ++s) {
    charges.measured_s += evidence.measured_s[s];
    if (evidence.measured_s[s] > 0.0) charges.interfered[s] = 1;
  }
  const est::IntrinsicEstimate& estimate = fit.estimate;
  for (std::size_t i = 0; i < model.groups.size(); ++i) {
    for (std::size_t j = 0; j < model.groups[i].members.size(); ++j) {
      const std::size_t segment = model.groups[i].members[j];
      charges.lost_s[segment] += estimate.lost[i][j];
      charges.delay_probability[segment] = static_cast<float>(estimate.probability[i][j]);
      if (is_delayed(estimate.probability[i][j], estimate.lost[i][j])) charges.interfered[segment] = 1;
    }
  }
  charge_groups(model, fit, evidence.measured_s, charges);
  for (const RunFloor& floor : evidence.run_floors) {
    const double added = add_run_floor(floor.reading, run.segments.duration_s, charges.lost_s, charges.interfered);
    charges.floor_added_s.push_back(added);
    charges.floors_added_s += added;
  }
  return charges;
}

// Bound: the lost time is at most the run time, and with the CPU-time
// counter at most the run less the work on its critical path (lost_time_bound).
struct Bound {
  double work_critical_path_s = 0.0;
  double most_lost_s = 0.0;  // the bound
  double lost_s = 0.0;       // the charges summed, bounded
  double shrink = 1.0;       // every charge's factor (bounded / summed)
};

Bound bound(const RunData& run, const PrimaryModel& model, std::span<const double> lost) {
  Bound result;
  if (model.cpu_time_work) result.work_critical_path_s = work_on_critical_path(run, model.shared_nodes.work_s);
  const double run_time = model.run_time_s;
  result.most_lost_s = std::max(0.0, run_time - result.work_critical_path_s);
  const double total_lost = std::accumulate(lost.begin(), lost.end(), 0.0);
  result.lost_s = run_time > 0.0 ? std::min(total_lost, result.most_lost_s) : total_lost;
  result.shrink = result.lost_s < total_lost && total_lost > 0.0 ? result.lost_s / total_lost : 1.0;
  return result;
}

// Interval: the model refitted by block bootstrap, each segment's posterior,
// the measured levels' errors and what the durations say of the measured
// delays (lost_interval.hpp); ranks taking turns have no slab to refit
// (measured_only_interval).
est::LostInterval interval(const PrimaryModel& model, const ModelFit& fit, const MeasuredEvidence& evidence,
                           double measured_part, const AnalysisParameters& parameters) {
  const double level_sd = std::sqrt(evidence.level_variance_s2 + fit.measured_error_s2);
  if (model.taking_turns) return measured_only_interval(measured_part, evidence.apart_s, level_sd);
  std::mt19937_64 engine = engine_for(parameters.seed, kIntervalStream);
  est::LostIntervalOptions options;
  options.ci = parameters.ci;
  options.threads = parameters.threads;
  const std::vector<std::span<const double>> spans(fit.durations.begin(), fit.durations.end());
  return est::lost_interval(spans, work_spans(model), model.work_floor_s, fit.estimate, measured_part, level_sd, engine,
                            options);
}

// The model's own figures and the evidence's totals.
void describe_fit(const PrimaryModel& model, const ModelFit& fit, const MeasuredEvidence& evidence,
                  const Charges& charges, PrimaryEstimate& out) {
  out.subgroups = model.groups.size();
  out.recurring_segments = model.recurring_segments;
  out.warm_up_segments = model.warm_up_segments;
  out.unexplained_spread_ratio = model.unexplained_spread_ratio;
  out.most_segments_delayed = model.most_segments_delayed;
  out.off_cpu_measured = model.off_cpu_measured;
  out.taking_turns = model.taking_turns;
  out.waiting_ranks = static_cast<std::size_t>(std::count(model.waiting.begin(), model.waiting.end(), 1));
  out.clean_relative_spread = fit.estimate.relative_spread;
  out.delay_probability = fit.estimate.delay_probability;
  out.relative_delay_mean = fit.estimate.relative_delay_mean;
  for (const est::GroupIntrinsic& group : fit.estimate.groups) out.subgroup_intrinsic_s.push_back(group.baseline);
  out.evidence = evidence.totals;
  for (std::size_t k = 0; k < evidence.run_floors.size() && k < charges.floor_added_s.size(); ++k)
    out.evidence.*evidence.run_floors[k].total += charges.floor_added_s[k];
  out.evidence.measured_delay_s = charges.measured_s + charges.floors_added_s;
  out.evidence.measured_added_s = charges.measured_s + charges.floors_added_s;
}

}  // namespace

PrimaryModel primary_model(const RunData& run, const RunAnalysis& analysis, const AnalysisParameters& parameters) {
  PrimaryModel model;
  model_groups(run, analysis, parameters, model);
  model_covariates(run, model);
  {  // the first fit: only its intrinsic times and flags are kept (its per-segment charges would add to the peak memory)
    const std::vector<std::span<const double>> spans(model.durations.begin(), model.durations.end());
    const est::IntrinsicEstimate first = est::estimate_intrinsic(spans, {}, work_spans(model), model.work_floor_s);
    for (const est::GroupIntrinsic& group : first.groups) model.first_intrinsic_s.push_back(group.baseline);
    model.unexplained_spread_ratio = first.unexplained_spread_ratio;
    model.most_segments_delayed = first.lower_start_chosen;
  }
  model.off_cpu_measured = off_cpu_measured(run);
  model.oversubscribed = oversubscribed_rows(run);
  model.taking_turns = model.off_cpu_measured &&
                       std::find(model.oversubscribed.begin(), model.oversubscribed.end(), 1) != model.oversubscribed.end();
  if (model.off_cpu_measured && has_rank_detail(run)) model.waiting = waiting_rows(run, model.oversubscribed);
  // Ranks taking turns on a node's CPUs take at least their summed work over them.
  if (model.taking_turns) model.shared_nodes = shared_node_time(run);
  return model;
}

EvidenceInputs evidence_inputs(const RunData& run, const PrimaryModel& model) {
  return EvidenceInputs{run,
                        model.groups,
                        model.first_intrinsic_s,
                        model.work_floor_s,
                        model.segment_group,
                        model.oversubscribed,
                        model.waiting,
                        model.shared_nodes,
                        model.off_cpu_measured,
                        model.most_segments_delayed,
                        model.taking_turns,
                        model.min_group};
}

PrimaryEstimate estimate_primary(const RunData& run, PrimaryModel model, MeasuredEvidence evidence,
                                 const AnalysisParameters& parameters) {
  const ModelFit fit = fit_model(model, evidence.measured_s);
  Charges charges = charge(run, model, fit, evidence);
  const Bound bounded = bound(run, model, charges.lost_s);
  const est::LostInterval lost =
      interval(model, fit, evidence, charges.measured_s + charges.floors_added_s, parameters);

  PrimaryEstimate out;
  describe_fit(model, fit, evidence, charges, out);
  out.interval_replicas = static_cast<std::size_t>(est::kIntervalReplicas);
  out.work_critical_path_s = bounded.work_critical_path_s;
  const auto percent = [&](double seconds) { return est::run_interference_percent(seconds, model.run_time_s); };
  out.lost_percent = percent(bounded.lost_s);
  out.lost_percent_low = std::min(percent(bounded.shrink * lost.low), percent(bounded.most_lost_s));
  out.lost_percent_high = std::min(percent(bounded.shrink * lost.high), percent(bounded.most_lost_s));
  out.oversubscription_percent = percent(evidence.apart_s);
  out.intrinsic_run_time_s = std::max(0.0, model.run_time_s - bounded.lost_s);
  out.segment_lost_s = std::move(charges.lost_s);
  if (bounded.shrink < 1.0) {
    for (double& segment_lost : out.segment_lost_s) segment_lost *= bounded.shrink;
  }
  out.segment_io_stall_s = std::move(evidence.io_stall_s);
  out.segment_collective_wait_s = std::move(evidence.collective_wait_s);
  split_what(out.segment_lost_s, bounded.shrink, out.segment_io_stall_s, out.segment_collective_wait_s);
  out.segment_primary_group = std::move(model.segment_group);
  out.segment_delay_probability = std::move(charges.delay_probability);
  out.segment_interfered = std::move(charges.interfered);
  out.group_lost_s = std::move(charges.group_lost_s);
  out.group_intrinsic_s = std::move(charges.group_intrinsic_s);
  return out;
}

}  // namespace tremor::analysis::detail
