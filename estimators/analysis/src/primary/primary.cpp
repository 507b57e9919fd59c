// The primary estimate (docs/statistics-primary.md): one model of a
// segment's time, fitted to the run. Per model group (groups.hpp) a segment
// lasts its group's intrinsic time (work as a covariate) times clean jitter,
// plus what the measured evidence shows it lost (evidence.hpp, a known part
// of its time), plus a delay the durations alone show (spike and slab:
// Bernoulli(pi) x Exp(tau)). The fit charges each segment its measured delay
// and its posterior expected delay; the interval refits it all (lost_interval.hpp).
#include <algorithm>
#include <numeric>

#include "../analysis_internal.hpp"
#include "evidence.hpp"
#include "groups.hpp"
#include "stranded_segments.hpp"
#include "tremor/estimators/interference.hpp"
#include "tremor/estimators/intrinsic.hpp"
#include "tremor/estimators/lost_interval.hpp"

namespace tremor::analysis::detail {
namespace {

namespace est = tremor::estimators;

constexpr std::uint64_t kIntervalStream = 0x7072696d617279ULL;
// A deconvolved duration keeps at least this share of its duration: a
// measured delay that reads (nearly) the whole segment leaves a value the
// model can still place (its charge is bounded by the work floor anyway).
constexpr double kLeastDeconvolvedShare = 1e-3;

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

// Work is a covariate of the intrinsic time. With the CPU-time counter (work
// in ns) its coefficient is known: a segment that did more work than its
// group's median spent that much more CPU time of its own, so it is compared
// with the others less that excess (an application's own heavier iterations
// are not delays). Slowing of the CPU itself (cache, memory bandwidth)
// inflates CPU time as well and is then not charged.
void apply_work_covariate(const std::vector<std::vector<double>>& work, std::span<const double> medians,
                          std::vector<std::vector<double>>& durations) {
  for (std::size_t i = 0; i < durations.size() && i < work.size(); ++i) {
    if (work[i].size() != durations[i].size() || work[i].empty()) continue;
    for (std::size_t j = 0; j < durations[i].size(); ++j) {
      const double excess_s = 1e-9 * (work[i][j] - medians[i]);
      if (excess_s > 0.0 && durations[i][j] > excess_s) durations[i][j] -= excess_s;
    }
  }
}

// Ranks that take turns on a node's CPUs: the scheduler's interleaving adds
// to every segment a term as large as the delays
// (docs/statistics-primary.md, "Crowded nodes"), so the durations identify
// no delay and their slab is empty: only the measured evidence is charged.
// A group's intrinsic time is then its mean, jitter and interleaving included.
void interleaving_only(std::span<const std::span<const double>> durations, est::IntrinsicEstimate& estimate) {
  for (std::vector<double>& lost : estimate.lost) std::fill(lost.begin(), lost.end(), 0.0);
  for (std::vector<double>& probability : estimate.probability) std::fill(probability.begin(), probability.end(), 0.0);
  for (std::size_t i = 0; i < estimate.groups.size() && i < durations.size(); ++i) {
    est::GroupIntrinsic& group = estimate.groups[i];
    group.lost = 0.0;
    group.interfered_share = 0.0;
    if (!durations[i].empty())
      group.baseline =
          std::accumulate(durations[i].begin(), durations[i].end(), 0.0) / static_cast<double>(durations[i].size());
  }
  estimate.total_lost = 0.0;
  estimate.delay_probability = 0.0;
}

// What ranks taking turns slept bounds the loss from below: what the charges
// so far miss of it goes where they slept, up to each segment's duration.
// Returns the time added.
double add_slept(const SleptOnSharedCpus& slept, const RunData& run, std::vector<double>& lost,
                 std::vector<std::uint8_t>& interfered) {
  const double charged = std::accumulate(lost.begin(), lost.end(), 0.0);
  const double weight = std::accumulate(slept.where.begin(), slept.where.end(), 0.0);
  if (!(slept.slept_s > charged) || !(weight > 0.0)) return 0.0;
  const double missing = slept.slept_s - charged;
  double added = 0.0;
  for (std::size_t segment = 0; segment < slept.where.size() && segment < lost.size(); ++segment) {
    const double extra = std::min(run.segments.duration_s[segment] - lost[segment], missing * slept.where[segment] / weight);
    if (!(extra > 0.0)) continue;
    lost[segment] += extra;
    added += extra;
    interfered[segment] = 1;
  }
  return added;
}

}  // namespace

std::vector<std::uint8_t> estimate_primary(const RunData& run, const AnalysisParameters& parameters,
                                           RunAnalysis& analysis) {
  const std::size_t n = analysis.segment_count;
  PrimaryEstimate& out = analysis.primary;
  out.segment_lost_s.assign(n, 0.0);
  out.segment_primary_group.assign(n, -1);
  out.segment_delay_probability.assign(n, 0.0F);
  std::vector<std::uint8_t> interfered(n, 0);
  std::vector<std::uint8_t> split_off(n, 0);
  const auto min_size = static_cast<std::size_t>(std::max(1, parameters.min_group));
  const bool has_work = run.segments.work.size() == run.segments.duration_s.size();
  const bool cpu_time_work = has_work && work_is_cpu_time(run);

  // The model's groups: stranded segments joined, recurring places and warm-up apart.
  const std::vector<std::int64_t> membership =
      primary_membership(run, analysis, parameters.cluster_threshold, cpu_time_work);
  std::vector<PrimaryGroup> groups = split_by_previous_group(analysis, membership, min_size, split_off);
  out.warm_up_segments = set_warm_up_apart(groups);
  out.subgroups = groups.size();
  out.recurring_segments = static_cast<std::size_t>(std::count(split_off.begin(), split_off.end(), 1));
  for (std::size_t i = 0; i < groups.size(); ++i) {
    for (const std::size_t segment : groups[i].all_members()) out.segment_primary_group[segment] = static_cast<std::int32_t>(i);
  }

  std::vector<std::vector<double>> durations(groups.size());
  std::vector<std::vector<double>> work(groups.size());
  for (std::size_t i = 0; i < groups.size(); ++i) {
    for (const std::size_t segment : groups[i].members) {
      durations[i].push_back(run.segments.duration_s[segment]);
      if (has_work) work[i].push_back(run.segments.work[segment]);
    }
  }
  const std::vector<double> work_medians = cpu_time_work ? group_work_medians(work) : std::vector<double>{};
  if (cpu_time_work) apply_work_covariate(work, work_medians, durations);
  // A clean segment lasts at least the CPU time in it: the median work floors its group's intrinsic time.
  std::vector<double> baseline_floor;
  for (const double median : work_medians) baseline_floor.push_back(1e-9 * median);
  const std::vector<std::span<const double>> work_spans(work.begin(), work.end());
  const std::span<const std::span<const double>> work_given =
      has_work ? std::span(work_spans) : std::span<const std::span<const double>>{};

  // First fit, on the durations alone: the intrinsic times the evidence's
  // caps need, and whether most segments were delayed.
  std::vector<std::span<const double>> spans(durations.begin(), durations.end());
  std::vector<double> first_intrinsic;
  {  // only its intrinsic times and flags are kept (its per-segment charges would add to the peak memory)
    const est::IntrinsicEstimate first = est::estimate_intrinsic(spans, {}, work_given, baseline_floor);
    for (const est::GroupIntrinsic& group : first.groups) first_intrinsic.push_back(group.baseline);
    out.unexplained_spread_ratio = first.unexplained_spread_ratio;
    out.most_segments_delayed = first.lower_start_chosen;
  }
  out.off_cpu_measured = off_cpu_measured(run);
  const std::vector<std::uint8_t> oversubscribed = oversubscribed_rows(run);
  out.taking_turns =
      out.off_cpu_measured && std::find(oversubscribed.begin(), oversubscribed.end(), 1) != oversubscribed.end();

  // The measured evidence, one source at a time, combined in one place.
  const EvidenceInputs inputs{run,          groups, first_intrinsic, baseline_floor, out.segment_primary_group,
                              out.off_cpu_measured, out.most_segments_delayed, out.taking_turns, min_size};
  MeasuredEvidence evidence;
  rank_evidence(inputs, oversubscribed, evidence);
  double collective_variance = 0.0;
  evidence.collective_s = collective_evidence(inputs, &evidence.collective_total_s, &collective_variance);
  evidence.level_variance_s2 += collective_variance;
  // Ranks taking turns on a node's CPUs take at least their summed work over them.
  const SharedNodeTime shared_nodes = out.taking_turns ? shared_node_time(run) : SharedNodeTime{};
  foreign_cpu_evidence(inputs, shared_nodes, evidence);
  const std::vector<double> measured = combine_evidence(evidence, run.segments.duration_s, segment_work_floors(run));
  out.waiting_ranks = evidence.waiting_ranks;
  out.evidence.rank_excess_s = evidence.rank_total_s;
  out.evidence.io_peer_excess_s = evidence.io_peer_s;
  out.evidence.boundary_excess_s = evidence.collective_total_s;
  out.evidence.foreign_cpu_loss_s = std::accumulate(evidence.foreign_cpu_s.begin(), evidence.foreign_cpu_s.end(), 0.0);
  out.evidence.shared_turns_loss_s =
      std::accumulate(evidence.shared_turns_s.begin(), evidence.shared_turns_s.end(), 0.0);
  const double unreferenced_s = std::accumulate(evidence.unreferenced_s.begin(), evidence.unreferenced_s.end(), 0.0);
  // Only the totals, the I/O stalls and the collectives' least waits (for the
  // What split) are kept: the other per-segment sources would add to the
  // analysis's peak memory.
  out.segment_io_stall_s.assign(evidence.io_s.begin(), evidence.io_s.end());
  out.segment_collective_wait_s.assign(evidence.collective_s.begin(), evidence.collective_s.end());
  for (std::vector<double>* source : {&evidence.rank_s, &evidence.io_s, &evidence.collective_s, &evidence.foreign_cpu_s,
                                      &evidence.shared_turns_s, &evidence.unreferenced_s})
    std::vector<double>().swap(*source);

  // The model proper: the measured delay is a known part of each segment's
  // time, so the intrinsic times, the jitter and the delays the durations
  // show are fitted to what is left of it. A measured delay is a lower bound
  // of the segment's delay read against its own clean level, not its
  // group's: what is left is never put below the group's intrinsic time
  // (a measurement that reads more than the duration shows would otherwise
  // pull the anchor, and with it every other segment's charge).
  // What each measured segment leaves of its duration, before the floors
  // below, for the measured delays' own error (in the members' order).
  std::vector<float> left_by_measured;
  for (std::size_t i = 0; i < groups.size(); ++i) {
    const double intrinsic = i < first_intrinsic.size() ? first_intrinsic[i] : 0.0;
    for (std::size_t j = 0; j < groups[i].members.size(); ++j) {
      const double m = measured[groups[i].members[j]];
      if (!(m > 0.0)) continue;
      const double x = durations[i][j];
      left_by_measured.push_back(static_cast<float>(x - m));
      durations[i][j] = std::max({kLeastDeconvolvedShare * x, x - m, std::min(x, intrinsic)});
    }
  }
  spans.assign(durations.begin(), durations.end());
  est::IntrinsicEstimate estimate = est::estimate_intrinsic(spans, {}, work_given, baseline_floor);
  if (out.taking_turns) interleaving_only(spans, estimate);
  out.clean_relative_spread = estimate.relative_spread;
  out.delay_probability = estimate.delay_probability;
  out.relative_delay_mean = estimate.relative_delay_mean;
  out.subgroup_intrinsic_s.clear();
  for (const est::GroupIntrinsic& group : estimate.groups) out.subgroup_intrinsic_s.push_back(group.baseline);

  // The measured delays read against the durations the refit explains.
  std::vector<est::MeasuredResidual> residuals;
  residuals.reserve(left_by_measured.size());
  {
    std::size_t next = 0;
    const double sigma = estimate.relative_spread;
    for (std::size_t i = 0; i < groups.size() && i < estimate.groups.size(); ++i) {
      const double baseline = estimate.groups[i].baseline;
      for (std::size_t j = 0; j < groups[i].members.size(); ++j) {
        if (!(measured[groups[i].members[j]] > 0.0) || next >= left_by_measured.size()) continue;
        const double left = left_by_measured[next++];
        double variance = sigma * sigma * baseline * baseline;
        if (baseline > 0.0)
          variance += baseline * baseline *
                      est::delay_posterior_variance(durations[i][j] / baseline - 1.0, sigma, estimate.delay_probability,
                                                    estimate.relative_delay_mean);
        residuals.push_back({left - baseline - estimate.lost[i][j], variance});
      }
    }
  }
  std::vector<float>().swap(left_by_measured);
  const double measured_error_s2 = out.taking_turns ? 0.0 : est::measured_error_variance(residuals);
  std::vector<est::MeasuredResidual>().swap(residuals);

  // Each segment: its measured delay plus its posterior expected delay.
  std::vector<double>& lost = out.segment_lost_s;
  double measured_total = 0.0;
  for (std::size_t s = 0; s < n; ++s) {
    lost[s] = measured[s];
    measured_total += measured[s];
    if (measured[s] > 0.0) interfered[s] = 1;
  }
  std::vector<double> intrinsic_weight(analysis.groups.size(), 0.0);
  for (std::size_t i = 0; i < groups.size(); ++i) {
    GroupResult& parent = analysis.groups[groups[i].parent];
    for (std::size_t j = 0; j < groups[i].members.size(); ++j) {
      const std::size_t segment = groups[i].members[j];
      lost[segment] += estimate.lost[i][j];
      out.segment_delay_probability[segment] = static_cast<float>(estimate.probability[i][j]);
      if (estimate.probability[i][j] >= 0.5 && estimate.lost[i][j] > 0.0) interfered[segment] = 1;
    }
    parent.lost_s += estimate.groups[i].lost;
    for (const std::size_t segment : groups[i].all_members()) parent.lost_s += measured[segment];
    const auto size = static_cast<double>(groups[i].members.size());
    parent.intrinsic_s += size * estimate.groups[i].baseline;
    intrinsic_weight[groups[i].parent] += size;
  }
  for (std::size_t g = 0; g < analysis.groups.size(); ++g) {
    if (intrinsic_weight[g] > 0.0) analysis.groups[g].intrinsic_s /= intrinsic_weight[g];
  }
  // Last: what ranks taking turns slept bounds everything charged so far from below.
  double slept_added = 0.0;
  if (out.off_cpu_measured && out.taking_turns) {
    evidence.slept = slept_evidence(run, oversubscribed);
    slept_added = add_slept(evidence.slept, run, lost, interfered);
  }
  out.evidence.rank_excess_s += slept_added;
  out.evidence.measured_delay_s = measured_total + slept_added;
  out.evidence.measured_added_s = measured_total + slept_added;

  // Segment durations are maxima over ranks, and their sum exceeds the run
  // when ranks leave the boundaries apart: the lost time is at most the run
  // time, and with the CPU-time counter at most the run less the work on its
  // critical path (each segment's median rank's CPU time; ranks taking turns,
  // their summed work over the node's CPUs if that is more).
  const double run_time = analysis.run_time_s;
  out.work_critical_path_s = 0.0;
  if (cpu_time_work) {
    const std::vector<double>& shared_work = shared_nodes.work_s;
    for (std::size_t s = 0; s < run.segments.work.size(); ++s)
      out.work_critical_path_s += std::max(1e-9 * run.segments.work[s], s < shared_work.size() ? shared_work[s] : 0.0);
  }
  const double most_lost = std::max(0.0, run_time - out.work_critical_path_s);
  const double total_lost = std::accumulate(lost.begin(), lost.end(), 0.0);
  const double bounded = run_time > 0.0 ? std::min(total_lost, most_lost) : total_lost;
  const double shrink = bounded < total_lost && total_lost > 0.0 ? bounded / total_lost : 1.0;
  if (shrink < 1.0) {
    for (double& segment_lost : lost) segment_lost *= shrink;
  }

  // The interval: the model refitted by block bootstrap, each segment's
  // posterior, the measured levels' errors and what the durations say of the
  // measured delays (lost_interval.hpp). Ranks
  // taking turns have no slab to refit: their measured delays are the low
  // end, and what another process made their own turns cost (reported apart)
  // may belong to the loss as well.
  std::mt19937_64 engine = engine_for(parameters.seed, kIntervalStream);
  out.interval_replicas = static_cast<std::size_t>(est::kIntervalReplicas);
  const double measured_part = measured_total + slept_added;
  const double level_sd = std::sqrt(evidence.level_variance_s2 + measured_error_s2);
  est::LostInterval interval;
  if (out.taking_turns) {
    interval = {std::max(0.0, measured_part - 2.0 * level_sd), measured_part + unreferenced_s + 2.0 * level_sd};
  } else {
    est::LostIntervalOptions options;
    options.ci = parameters.ci;
    options.threads = parameters.threads;
    interval = est::lost_interval(spans, work_given, baseline_floor, estimate, measured_part, level_sd, engine, options);
  }
  const auto percent = [&](double seconds) { return est::run_interference_percent(seconds, run_time); };
  out.lost_percent = percent(bounded);
  out.lost_percent_low = std::min(percent(shrink * interval.low), percent(most_lost));
  out.lost_percent_high = std::min(percent(shrink * interval.high), percent(most_lost));
  out.oversubscription_percent = percent(unreferenced_s);
  out.intrinsic_run_time_s = std::max(0.0, run_time - bounded);
  out.segment_io_stall_s.resize(n, 0.0F);
  out.segment_collective_wait_s.resize(n, 0.0F);
  for (std::size_t s = 0; s < n; ++s) {
    out.segment_io_stall_s[s] = static_cast<float>(std::min(lost[s], shrink * out.segment_io_stall_s[s]));
    out.segment_collective_wait_s[s] = static_cast<float>(
        std::min(lost[s] - out.segment_io_stall_s[s], shrink * out.segment_collective_wait_s[s]));
  }
  return interfered;
}

}  // namespace tremor::analysis::detail
