#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <sstream>
#include <utility>

#include "analysis_internal.hpp"
#include "environment_warnings.hpp"
#include "primary/estimate.hpp"
#include "tremor/analysis/analysis.hpp"
#include "tremor/analysis/diagnosis.hpp"
#include "tremor/estimators/clustering.hpp"
#include "tremor/estimators/interference.hpp"

namespace tremor::analysis {
namespace {

namespace est = tremor::estimators;

std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

std::string format_number(double value, int precision = 3) {
  std::ostringstream out;
  out.precision(precision);
  out << value;
  return out.str();
}

std::vector<GroupResult> build_groups(const RunData& run, std::span<const std::uint64_t> signatures,
                                      const AnalysisParameters& parameters) {
  const auto min_size = static_cast<std::size_t>(std::max(1, parameters.min_group));
  const est::Clustering clustering =
      est::cluster_by_relative_distance(run.segments.work, est::ClusterOptions{parameters.cluster_threshold, min_size});
  std::vector<GroupResult> groups;
  for (est::SignatureGroup& group : est::group_by_signature(clustering, signatures, min_size)) {
    GroupResult result;
    result.cluster = group.cluster;
    result.signature = group.signature;
    result.usable = group.usable;
    result.members = std::move(group.members);
    result.work_min = std::numeric_limits<double>::infinity();
    result.work_max = -std::numeric_limits<double>::infinity();
    for (const std::size_t segment : result.members) {
      result.work_min = std::min(result.work_min, run.segments.work[segment]);
      result.work_max = std::max(result.work_max, run.segments.work[segment]);
      result.time_s += run.segments.duration_s[segment];
    }
    groups.push_back(std::move(result));
  }
  return groups;
}

double usable_segment_fraction(const std::vector<GroupResult>& groups, std::size_t segments) {
  std::size_t in_usable = 0;
  for (const GroupResult& group : groups) {
    if (group.usable) in_usable += group.members.size();
  }
  return segments ? static_cast<double>(in_usable) / static_cast<double>(segments) : 0.0;
}

// Per segment, the (lower) median over the detail ranks of every feature,
// hashed. Exact per-process signatures differ when ranks do different
// communication (e.g. halo sizes at the domain edge); the medians describe
// the typical rank and stay equal across iterations. Empty if the detail
// matrices do not cover the segment table.
std::vector<std::uint64_t> median_feature_signatures(const DetailRanks& detail, std::size_t segments) {
  const std::size_t rank_count = detail.ranks.size();
  if (rank_count == 0 || detail.segments != segments || detail.signature_index.size() != rank_count * segments ||
      detail.signature_offset.size() != rank_count) {
    return {};
  }
  std::vector<std::uint64_t> result(segments);
  std::vector<std::uint64_t> column(rank_count);
  std::vector<const FeatureVector*> rows(rank_count);
  for (std::size_t segment = 0; segment < segments; ++segment) {
    for (std::size_t r = 0; r < rank_count; ++r) {
      const std::size_t entry =
          std::size_t{detail.signature_offset[r]} + detail.signature_index[r * segments + segment];
      if (entry >= detail.signatures.size()) return {};
      rows[r] = &detail.signatures[entry];
    }
    std::uint64_t hash = 0x84222325cbf29ce4ULL;
    for (std::size_t feature = 0; feature < kFeatureCount; ++feature) {
      for (std::size_t r = 0; r < rank_count; ++r) column[r] = (*rows[r])[feature];
      const auto middle = column.begin() + static_cast<std::ptrdiff_t>((rank_count - 1) / 2);
      std::nth_element(column.begin(), middle, column.end());
      hash = splitmix64(hash ^ *middle);
    }
    result[segment] = hash;
  }
  return result;
}

// The paper's rule per group; its flags are returned, its charges kept in segment_mad4_impact_s.
std::vector<std::uint8_t> detect_mad4_interference(const RunData& run, RunAnalysis& analysis) {
  std::vector<std::uint8_t> flagged(analysis.segment_count, 0);
  const est::MadOptions mad{analysis.parameters.mad_factor, 0.0};
  double total_impact = 0.0;
  double continuous_impact = 0.0;
  double usable_time = 0.0;
  std::vector<double> durations;
  for (std::size_t g = 0; g < analysis.groups.size(); ++g) {
    GroupResult& group = analysis.groups[g];
    for (const std::size_t segment : group.members) {
      analysis.segment_group[segment] = static_cast<std::int64_t>(g);
    }
    if (!group.usable) continue;
    ++analysis.usable_groups;
    durations.clear();
    for (const std::size_t segment : group.members) durations.push_back(run.segments.duration_s[segment]);
    const est::MadInterference result = est::detect_mad_interference(durations, mad);
    group.median_s = result.median;
    group.mad_s = result.mad;
    group.threshold_s = result.threshold;
    group.interfered = result.interfered_count;
    group.impact_s = result.total_impact;
    group.continuous_impact_s = est::continuous_interference(durations).impact;
    for (std::size_t i = 0; i < group.members.size(); ++i) {
      const std::size_t segment = group.members[i];
      flagged[segment] = result.interfered[i];
      analysis.segment_mad4_impact_s[segment] = result.impact[i];
    }
    total_impact += result.total_impact;
    continuous_impact += group.continuous_impact_s;
    usable_time += group.time_s;
  }
  const double run_time = analysis.run_time_s;
  // Segment durations are maxima over ranks, so with skewed boundary exits
  // their sum can exceed the run's wall time by a little: cap the share.
  analysis.usable_time_fraction = run_time > 0.0 ? std::min(1.0, usable_time / run_time) : 0.0;
  analysis.paper_mad4_percent = est::run_interference_percent(total_impact, run_time);
  analysis.continuous_interference_percent = est::run_interference_percent(continuous_impact, run_time);
  return flagged;
}

// Both estimates, then the headline (parameters.method) with its class,
// probability, per-segment charges and interfered segments.
void detect_interference(const RunData& run, const AnalysisParameters& parameters, RunAnalysis& analysis) {
  analysis.segment_mad4_impact_s.assign(analysis.segment_count, 0.0);
  const std::vector<std::uint8_t> mad4_flags = detect_mad4_interference(run, analysis);
  detail::PrimaryModel model = detail::primary_model(run, analysis, parameters);
  detail::MeasuredEvidence evidence = detail::gather_evidence(detail::evidence_inputs(run, model));
  analysis.primary = detail::estimate_primary(run, std::move(model), std::move(evidence), parameters);
  for (std::size_t g = 0; g < analysis.groups.size(); ++g) {
    analysis.groups[g].lost_s = analysis.primary.group_lost_s[g];
    analysis.groups[g].intrinsic_s = analysis.primary.group_intrinsic_s[g];
  }
  // Only the classes below read them: not kept in the result.
  const std::vector<std::uint8_t> primary_flags = std::exchange(analysis.primary.segment_interfered, {});
  const bool mad4 = analysis.parameters.method == "mad4";
  analysis.interference_percent = mad4 ? analysis.paper_mad4_percent : analysis.primary.lost_percent;
  analysis.segment_impact_s = mad4 ? analysis.segment_mad4_impact_s : analysis.primary.segment_lost_s;
  const std::vector<std::uint8_t>& flags = mad4 ? mad4_flags : primary_flags;
  for (std::size_t segment = 0; segment < analysis.segment_count; ++segment) {
    if (analysis.segment_group[segment] < 0 || !analysis.groups[analysis.segment_group[segment]].usable) continue;
    analysis.segment_class[segment] = flags[segment] ? SegmentClass::interfered : SegmentClass::normal;
    if (flags[segment]) analysis.interfered_segments.push_back(segment);
  }
  analysis.interference_class = est::classify_interference(analysis.interference_percent);
  analysis.probability_high = est::high_interference_probability(analysis.interference_percent);
}

void localize_stragglers(const RunData& run, RunAnalysis& analysis) {
  std::map<std::int32_t, const RankInfo*> rank_info;
  for (const RankInfo& info : run.ranks) rank_info[info.rank] = &info;
  std::map<std::int32_t, RankImpact> by_rank;
  std::map<std::int32_t, NodeImpact> by_node;
  const auto& late_rank = run.segments.late_rank;
  for (const std::size_t segment : analysis.interfered_segments) {
    if (segment >= late_rank.size()) continue;
    const std::int32_t rank = late_rank[segment];
    const double impact = analysis.segment_impact_s[segment];
    RankImpact& entry = by_rank[rank];
    entry.rank = rank;
    if (const auto it = rank_info.find(rank); it != rank_info.end()) {
      entry.node_id = it->second->node_id;
      entry.hostname = it->second->hostname;
    } else {
      entry.node_id = -1;
    }
    ++entry.segments;
    entry.impact_s += impact;
    NodeImpact& node = by_node[entry.node_id];
    node.node_id = entry.node_id;
    node.hostname = entry.hostname;
    ++node.segments;
    node.impact_s += impact;
  }
  for (auto& [rank, entry] : by_rank) analysis.stragglers.push_back(std::move(entry));
  for (auto& [node_id, entry] : by_node) analysis.nodes.push_back(std::move(entry));
  // stable_sort on maps already ordered by id: ties stay in id order.
  std::stable_sort(analysis.stragglers.begin(), analysis.stragglers.end(),
                   [](const RankImpact& a, const RankImpact& b) { return a.impact_s > b.impact_s; });
  std::stable_sort(analysis.nodes.begin(), analysis.nodes.end(),
                   [](const NodeImpact& a, const NodeImpact& b) { return a.impact_s > b.impact_s; });
}

std::string no_estimate_reason(const RunAnalysis& analysis) {
  const std::size_t n = analysis.segment_count;
  const std::string min_group = std::to_string(analysis.parameters.min_group);
  if (n == 0) return "no segment was recorded";
  if (n == 1) {
    return "the run had no global collective (a single segment), so no segments can be compared";
  }
  if (n < static_cast<std::size_t>(analysis.parameters.min_group)) {
    return "too few segments (" + std::to_string(n) + ") to form a group of " + min_group;
  }
  if (!(analysis.run_time_s > 0.0)) return "the run time is unknown";
  if (analysis.usable_groups == 0) {
    return "no group of at least " + min_group +
           " segments with similar work and identical "
           "communication/I-O signature";
  }
  return "";
}

void add_warnings(const RunData& run, RunAnalysis& analysis) {
  auto warn = [&](std::string code, std::string message) {
    analysis.warnings.push_back({std::move(code), std::move(message)});
  };
  const std::size_t n = analysis.segment_count;
  if (!analysis.estimate_possible) warn("no_estimate", "No estimate possible: " + analysis.no_estimate_reason + ".");
  if (analysis.run_time_s > 0.0) {
    const double rate = static_cast<double>(n) / analysis.run_time_s;
    if (rate > kMaxBoundaryRateHz) {
      warn("boundary_rate", "Boundaries every " + format_number(1e3 / rate) + " ms (" + format_number(rate) +
                                " Hz > 200 Hz): timer and bin resolution limit the accuracy.");
    }
  }
  if (n >= 2 && n < kMinSegmentsForTrust) {
    warn("few_segments", "Only " + std::to_string(n) + " segments (< 50): medians, MADs and fits are rough.");
  }
  if (analysis.estimate_possible && analysis.usable_time_fraction < kMinUsableTimeFraction) {
    warn("low_coverage", "Only " + format_number(100.0 * analysis.usable_time_fraction) +
                             " % of the run time lies in usable groups; the rest is not assessed.");
  }
  if (measures_cpu_time(run.meta.counter_source)) {
    std::string text =
        "No hardware counters: work is measured as thread CPU time. It ignores descheduled time "
        "(CPU contention shows as longer segments) but memory-bandwidth stalls inflate it, so "
        "bandwidth interference may be under-counted.";
    const bool switch_records =
        std::ranges::find(run.meta.counter_events, "PERF_RECORD_SWITCH") != run.meta.counter_events.end();
    if (run.meta.counter_source == CounterKind::thread_cputime && switch_records)
      text +=
          " The thread clock is read at most every millisecond, context-switch records fill in between: "
          "in a virtual machine, steal shorter than that may count as work in one segment and is taken "
          "back from the next.";
    if (run.meta.counter_source == CounterKind::thread_oncpu)
      text +=
          " From context-switch records (TREMOR_COUNTERS=oncpu): in a virtual machine, time the "
          "hypervisor took the CPU away (steal) counts as work too.";
    warn("counter_fallback", text);
  }
  if (analysis.signature_fallback) {
    warn("signature_fallback",
         "Exact communication signatures left most segments in small groups; groups use the median "
         "features of the detail ranks instead.");
  }
  for (Warning& warning : environment_warnings(run)) analysis.warnings.push_back(std::move(warning));
}

}  // namespace

namespace detail {

std::mt19937_64 engine_for(std::uint64_t seed, std::uint64_t stream) {
  return std::mt19937_64(splitmix64(seed ^ splitmix64(stream)));
}

std::vector<double> quantile_subsample(std::vector<double> values, std::size_t limit) {
  if (values.size() <= limit || limit < 2) {
    std::sort(values.begin(), values.end());
    return values;
  }
  // The order statistics at `limit` evenly spaced ranks, as a full sort would
  // give them, found by recursive selection: O(n log limit), not O(n log n).
  std::vector<std::size_t> ranks(limit);
  const double step = static_cast<double>(values.size() - 1) / static_cast<double>(limit - 1);
  for (std::size_t i = 0; i < limit; ++i) ranks[i] = static_cast<std::size_t>(std::llround(step * static_cast<double>(i)));
  auto select = [&values, &ranks](auto& self, std::size_t low, std::size_t high, std::size_t first,
                                  std::size_t last) -> void {  // values[low, high), ranks[first, last)
    if (first >= last) return;
    const std::size_t middle = first + (last - first) / 2;
    const std::size_t at = ranks[middle];
    std::nth_element(values.begin() + static_cast<std::ptrdiff_t>(low), values.begin() + static_cast<std::ptrdiff_t>(at),
                     values.begin() + static_cast<std::ptrdiff_t>(high));
    std::size_t left_end = middle;
    while (left_end > first && ranks[left_end - 1] == at) --left_end;
    std::size_t right_begin = middle + 1;
    while (right_begin < last && ranks[right_begin] == at) ++right_begin;
    self(self, low, at, first, left_end);
    self(self, at + 1, high, right_begin, last);
  };
  select(select, 0, values.size(), 0, limit);
  std::vector<double> chosen(limit);
  for (std::size_t i = 0; i < limit; ++i) chosen[i] = values[ranks[i]];
  return chosen;
}

}  // namespace detail

RunAnalysis analyze_run(const RunData& run, const AnalysisParameters& parameters) {
  RunAnalysis analysis;
  analysis.parameters = parameters;
  analysis.run_time_s = run.meta.run_time_s;
  const SegmentTable& table = run.segments;
  const std::size_t n = table.size();
  analysis.segment_count = n;
  analysis.segment_group.assign(n, -1);
  analysis.segment_class.assign(n, SegmentClass::unused);
  analysis.segment_impact_s.assign(n, 0.0);

  const bool table_consistent =
      table.work.size() == n && table.signature.size() == n && table.duration_upper_s.size() == n;
  if (n >= 2 && table_consistent) {
    analysis.groups = build_groups(run, table.signature, parameters);
    if (usable_segment_fraction(analysis.groups, n) < kSignatureFallbackBelow) {
      const std::vector<std::uint64_t> medians = median_feature_signatures(run.detail, n);
      if (!medians.empty()) {
        std::vector<GroupResult> fallback = build_groups(run, medians, parameters);
        if (usable_segment_fraction(fallback, n) > usable_segment_fraction(analysis.groups, n)) {
          analysis.groups = std::move(fallback);
          analysis.signature_fallback = true;
        }
      }
    }
    detect_interference(run, parameters, analysis);
  }
  analysis.no_estimate_reason =
      table_consistent ? no_estimate_reason(analysis) : "the segment table's columns have different lengths";
  analysis.estimate_possible = analysis.no_estimate_reason.empty();
  if (analysis.estimate_possible) {
    localize_stragglers(run, analysis);
    detail::fit_groups_and_predict(run, analysis);
    analysis.diagnosis = diagnose_run(run, analysis);
  }
  add_warnings(run, analysis);
  return analysis;
}

}  // namespace tremor::analysis
