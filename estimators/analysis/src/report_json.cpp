// JSON form of the report; field meanings in docs/report.md.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>

#include "tremor/analysis/report.hpp"
#include "tremor/analysis/truth_line.hpp"
#include "tremor/estimators/interference.hpp"

namespace tremor::analysis {
namespace {

using nlohmann::json;

// JSON has no NaN or infinity: such a value is written as null.
json number(double value) { return std::isfinite(value) ? json(value) : json(nullptr); }

std::string hex(std::uint64_t value) {
  char text[19];
  std::snprintf(text, sizeof text, "0x%016llx", static_cast<unsigned long long>(value));
  return text;
}

json fit_json(const GevSummary& fit) {
  if (!fit.usable) return {{"usable", false}, {"flags", fit.flags}};
  return {{"usable", true},     {"loc", number(fit.loc)}, {"scale", number(fit.scale)},
          {"k", number(fit.k)}, {"type", fit.type},       {"flags", fit.flags}};
}

json groups_json(const RunAnalysis& analysis) {
  json groups = json::array();
  for (std::size_t g = 0; g < analysis.groups.size(); ++g) {
    const GroupResult& group = analysis.groups[g];
    if (!group.usable) continue;
    groups.push_back({{"index", g},
                      {"cluster", group.cluster},
                      {"signature", hex(group.signature)},
                      {"segments", group.members.size()},
                      {"work_min", number(group.work_min)},
                      {"work_max", number(group.work_max)},
                      {"time_s", number(group.time_s)},
                      {"median_s", number(group.median_s)},
                      {"mad_s", number(group.mad_s)},
                      {"threshold_s", number(group.threshold_s)},
                      {"interfered", group.interfered},
                      {"impact_s", number(group.impact_s)},
                      {"continuous_impact_s", number(group.continuous_impact_s)},
                      {"intrinsic_s", number(group.intrinsic_s)},
                      {"lost_s", number(group.lost_s)},
                      {"gev",
                       {{"pwm", fit_json(group.pwm)},
                        {"mom", fit_json(group.mom)},
                        {"chosen", group.chosen_fit},
                        {"disagree", group.fits_disagree}}}});
  }
  return groups;
}

json stragglers_json(const RunAnalysis& analysis) {
  json ranks = json::array();
  for (const RankImpact& rank : analysis.stragglers) {
    ranks.push_back({{"rank", rank.rank},
                     {"node_id", rank.node_id},
                     {"hostname", rank.hostname},
                     {"segments", rank.segments},
                     {"impact_s", number(rank.impact_s)}});
  }
  json nodes = json::array();
  for (const NodeImpact& node : analysis.nodes) {
    nodes.push_back({{"node_id", node.node_id},
                     {"hostname", node.hostname},
                     {"segments", node.segments},
                     {"impact_s", number(node.impact_s)}});
  }
  return {{"ranks", ranks}, {"nodes", nodes}};
}

json prediction_json(const Prediction& prediction) {
  return {{"method", prediction.method},
          {"factor", number(prediction.factor)},
          {"processes", number(prediction.processes)},
          {"median_s", number(prediction.median_s)},
          {"ci_low_s", number(prediction.ci_low_s)},
          {"ci_high_s", number(prediction.ci_high_s)},
          {"pi_low_s", number(prediction.pi_low_s)},
          {"pi_high_s", number(prediction.pi_high_s)},
          {"replicas_failed", prediction.replicas_failed},
          {"variance_inflation", number(prediction.variance_inflation)},
          {"monte_carlo_error_s", number(prediction.monte_carlo_error_s)},
          {"group_replicas_min", prediction.group_replicas_min}};
}

json predictions_json(const RunAnalysis& analysis) {
  json predictions = json::array();
  for (const Prediction& prediction : analysis.predictions) predictions.push_back(prediction_json(prediction));
  return predictions;
}

// The headline: the method's rows, one per size (null without predictions).
json headline_json(const RunAnalysis& analysis) {
  const PredictionHeadline& headline = analysis.prediction_headline;
  if (headline.method.empty()) return nullptr;
  json rows = json::array();
  for (const Prediction& prediction : analysis.predictions) {
    if (prediction.method == headline.method) rows.push_back(prediction_json(prediction));
  }
  return {{"method", headline.method}, {"reason", headline.reason}, {"predictions", rows}};
}

json warnings_json(const RunAnalysis& analysis) {
  json warnings = json::array();
  for (const Warning& warning : analysis.warnings) {
    json cases = json::array();
    for (const WarningCase& item : warning.cases) {
      json values = json::object();
      for (const auto& [name, value] : item.values) values[name] = number(value);
      cases.push_back({{"subject", item.subject},
                       {"severity", number(item.severity)},
                       {"detail", item.detail},
                       {"values", values}});
    }
    warnings.push_back({{"code", warning.code},
                        {"message", warning.message},
                        {"count", std::max<std::size_t>(1, warning.cases.size())},
                        {"cases", cases}});
  }
  return warnings;
}

json components_json(const ComponentShares& shares) {
  return {{"compute", number(shares.compute)}, {"mpi", number(shares.mpi)}, {"io", number(shares.io)}};
}

// Wall clock as ISO 8601 UTC with milliseconds, or null.
json utc_text(double unix_seconds) {
  if (!std::isfinite(unix_seconds) || unix_seconds <= 0.0) return nullptr;
  const auto whole = static_cast<std::time_t>(std::floor(unix_seconds));
  std::tm parts{};
  gmtime_r(&whole, &parts);
  char text[96];
  const int millis = std::clamp(static_cast<int>((unix_seconds - static_cast<double>(whole)) * 1e3), 0, 999);
  std::snprintf(text, sizeof text, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", parts.tm_year + 1900, parts.tm_mon + 1,
                parts.tm_mday, parts.tm_hour, parts.tm_min, parts.tm_sec, millis);
  return text;
}

// Every rank, in rank order: its interference charge and the others' wait for
// its extra work (% of the run), and its work over the others' median.
json diagnosis_ranks_json(const Diagnosis& diagnosis) {
  json lost = json::array(), imbalance = json::array(), work = json::array();
  for (const double value : diagnosis.rank_lost_percent) lost.push_back(number(value));
  for (const double value : diagnosis.rank_imbalance_percent) imbalance.push_back(number(value));
  for (const double value : diagnosis.rank_work_ratio) work.push_back(number(value));
  return {{"lost_percent", lost}, {"imbalance_percent", imbalance}, {"work_ratio", work}};
}

json diagnosis_json(const Diagnosis& diagnosis) {
  if (!diagnosis.available) return nullptr;
  json ranks = json::array();
  for (const SlowRank& rank : diagnosis.slow_ranks) {
    ranks.push_back({{"rank", rank.rank},
                     {"node", rank.node_id},
                     {"hostname", rank.hostname},
                     {"lost_percent", number(rank.lost_percent)},
                     {"last_share", number(rank.last_share)},
                     {"last_segments", rank.last_segments},
                     {"kind", rank.kind},
                     {"time_ratio", number(rank.time_ratio)},
                     {"work_ratio", number(rank.work_ratio)}});
  }
  json nodes = json::array();
  for (const SlowNode& node : diagnosis.slow_nodes) {
    nodes.push_back({{"node", node.node_id},
                     {"hostname", node.hostname},
                     {"ranks", node.ranks},
                     {"lost_percent", number(node.lost_percent)},
                     {"last_share", number(node.last_share)},
                     {"last_segments", node.last_segments},
                     {"kind", node.kind},
                     {"time_ratio", number(node.time_ratio)},
                     {"work_ratio", number(node.work_ratio)}});
  }
  json imbalanced = json::array();
  for (const ImbalancedRank& rank : diagnosis.imbalanced_ranks) {
    imbalanced.push_back({{"rank", rank.rank},
                          {"node", rank.node_id},
                          {"hostname", rank.hostname},
                          {"extra_work", number(rank.extra_work)},
                          {"wait_percent", number(rank.wait_percent)},
                          {"last_share", number(rank.last_share)}});
  }
  json episodes = json::array();
  for (const Episode& episode : diagnosis.episodes) {
    episodes.push_back({{"start_s", number(episode.start_s)},
                        {"end_s", number(episode.end_s)},
                        {"start_utc", utc_text(episode.start_unix)},
                        {"end_utc", utc_text(episode.end_unix)},
                        {"first_segment", episode.first_segment},
                        {"last_segment", episode.last_segment},
                        {"lost_percent", number(episode.lost_percent)},
                        {"ranks", episode.ranks}});
  }
  return {{"slow_ranks", ranks},
          {"slow_nodes", nodes},
          {"named_above_percent", number(diagnosis.named_above_percent)},
          {"imbalanced_ranks", imbalanced},
          {"ranks", diagnosis_ranks_json(diagnosis)},
          {"episodes", episodes},
          {"components",
           {{"run", components_json(diagnosis.run_components)}, {"lost", components_json(diagnosis.lost_components)}}}};
}

// The limits and the logistic behind `class` and `probability_high` (the analysis uses their
// defaults), so that campaigns score estimates as Tremor does without typing them again.
json classification_json() {
  const estimators::ClassBoundaries limits;
  const estimators::LogisticParameters logistic;
  return {{"medium_from_percent", limits.medium_from},
          {"high_above_percent", limits.high_above},
          {"logistic_steepness", logistic.steepness},
          {"logistic_midpoint_percent", logistic.midpoint}};
}

// The batch job (docs/report.md): null when no scheduler is known (no job,
// or a file written before the job record); a field the scheduler did not
// set is null.
json job_json(const RunMetadata& meta) {
  const JobRecord& job = meta.job;
  if (job.scheduler.empty()) return nullptr;
  auto text = [](const std::optional<std::string>& value) { return value ? json(*value) : json(nullptr); };
  return {{"scheduler", job.scheduler},
          {"id", meta.job_id.empty() ? json(nullptr) : json(meta.job_id)},
          {"name", text(job.name)},
          {"user", text(job.user)},
          {"nodelist", text(job.nodelist)},
          {"step", text(job.step)}};
}

// The run's hosts in node-id order (each node's first rank's hostname).
json hosts_json(const RunData& run) {
  std::vector<std::string> hosts;
  for (const RankInfo& rank : run.ranks) {
    if (rank.node_id < 0) continue;
    const auto node = static_cast<std::size_t>(rank.node_id);
    if (node >= hosts.size()) hosts.resize(node + 1);
    if (hosts[node].empty()) hosts[node] = rank.hostname;
  }
  return hosts;
}

// The application's file name: node 0's resolved binary, else the command line's first word.
json application_json(const RunData& run) {
  std::string path;
  if (run.environment.recorded()) path = run.environment.nodes.front().fact("binary_path");
  if (path.empty() || path.starts_with("unknown"))
    path = run.meta.command_line.substr(0, run.meta.command_line.find(' '));
  const std::string name = path.substr(path.find_last_of('/') + 1);
  return name.empty() ? json(nullptr) : json(name);
}

// A run's id from its content, not its file name, so that the run file and
// its report give the same id wherever they lie: rank 0's MPI_Init exit
// (UTC, ms), rank 0's host and the world size ("20261207T101500.123Z-n01-64").
std::string run_id_text(const RunData& run) {
  const json start = utc_text(run.meta.start_time_unix);
  std::string stamp = start.is_string() ? start.get<std::string>() : std::string("unknown");
  std::erase_if(stamp, [](char c) { return c == '-' || c == ':'; });
  const std::string host = run.ranks.empty() ? std::string("unknown") : run.ranks.front().hostname;
  return stamp + "-" + host + "-" + std::to_string(run.meta.world_size);
}

}  // namespace

json report_json(const RunData& run, const RunAnalysis& analysis, const std::string& output_file) {
  const bool ok = analysis.estimate_possible;
  std::size_t usable_segments = 0;
  for (const GroupResult& group : analysis.groups) {
    if (group.usable) usable_segments += group.members.size();
  }
  const AnalysisParameters& p = analysis.parameters;
  return {
      {"schema_version", kReportSchemaVersion},
      {"tremor_version", run.meta.tremor_version},
      {"output_file", output_file},
      {"run_id", run_id_text(run)},
      {"start_utc", utc_text(run.meta.start_time_unix)},
      {"hosts", hosts_json(run)},
      {"application", application_json(run)},
      {"partial", run.meta.partial},
      {"partial_reason", run.meta.partial ? json(run.meta.partial_reason) : json(nullptr)},
      {"estimate_possible", ok},
      {"no_estimate_reason", ok ? json(nullptr) : json(analysis.no_estimate_reason)},
      {"method", p.method},
      {"interference_percent", ok ? number(analysis.interference_percent) : json(nullptr)},
      {"lost_percent", ok ? number(analysis.primary.lost_percent) : json(nullptr)},
      {"lost_percent_ci",
       ok ? json::array({number(analysis.primary.lost_percent_low), number(analysis.primary.lost_percent_high)})
          : json(nullptr)},
      {"intrinsic_run_time_s", ok ? number(analysis.primary.intrinsic_run_time_s) : json(nullptr)},
      {"paper_mad4_percent", ok ? number(analysis.paper_mad4_percent) : json(nullptr)},
      {"primary", ok ? json{{"groups", analysis.primary.subgroups},
                            {"recurring_segments", analysis.primary.recurring_segments},
                            {"warm_up_segments", analysis.primary.warm_up_segments},
                            {"clean_relative_spread", number(analysis.primary.clean_relative_spread)},
                            {"delay_probability", number(analysis.primary.delay_probability)},
                            {"relative_delay_mean", number(analysis.primary.relative_delay_mean)},
                            {"unexplained_spread_ratio", number(analysis.primary.unexplained_spread_ratio)},
                            {"most_segments_delayed", analysis.primary.most_segments_delayed},
                            {"off_cpu_measured", analysis.primary.off_cpu_measured},
                            {"rank_excess_s", number(analysis.primary.evidence.rank_excess_s)},
                            {"io_peer_excess_s", number(analysis.primary.evidence.io_peer_excess_s)},
                            {"waiting_ranks", analysis.primary.waiting_ranks},
                            {"taking_turns", analysis.primary.taking_turns},
                            {"foreign_cpu_loss_s", number(analysis.primary.evidence.foreign_cpu_loss_s)},
                            {"shared_turns_loss_s", number(analysis.primary.evidence.shared_turns_loss_s)},
                            {"oversubscription_percent", number(analysis.primary.oversubscription_percent)},
                            {"interval_replicas", analysis.primary.interval_replicas},
                            {"boundary_excess_s", number(analysis.primary.evidence.boundary_excess_s)},
                            {"measured_delay_s", number(analysis.primary.evidence.measured_delay_s)},
                            {"measured_added_s", number(analysis.primary.evidence.measured_added_s)},
                            {"work_critical_path_s", number(analysis.primary.work_critical_path_s)}}
                     : json(nullptr)},
      {"continuous_interference_percent", ok ? number(analysis.continuous_interference_percent) : json(nullptr)},
      {"class", ok ? json(estimators::to_string(analysis.interference_class)) : json(nullptr)},
      {"probability_high", ok ? number(analysis.probability_high) : json(nullptr)},
      {"classification", classification_json()},
      {"run_time_s", number(analysis.run_time_s)},
      {"job", job_json(run.meta)},
      {"world_size", run.meta.world_size},
      {"node_count", run.meta.node_count},
      {"segments", analysis.segment_count},
      {"usable_segments", usable_segments},
      {"usable_time_percent", number(100.0 * analysis.usable_time_fraction)},
      {"boundary_rate_hz", analysis.run_time_s > 0.0
                               ? number(static_cast<double>(analysis.segment_count) / analysis.run_time_s)
                               : json(nullptr)},
      {"signature_fallback", analysis.signature_fallback},
      {"groups", groups_json(analysis)},
      {"unused_groups", analysis.groups.size() - analysis.usable_groups},
      {"interfered_segments", analysis.interfered_segments},
      {"stragglers", stragglers_json(analysis)},
      {"diagnosis", diagnosis_json(analysis.diagnosis)},
      {"prediction_headline", headline_json(analysis)},
      {"prediction_scaling", {{"mode", kPredictionScaling}, {"assumption", kPredictionAssumption}}},
      {"predictions", predictions_json(analysis)},
      {"warnings", warnings_json(analysis)},
      {kInjectorTruthKey, injector_truth_json(run)},
      {"counter_source", to_string(run.meta.counter_source)},
      {"counter_unit", run.meta.counter_unit},
      {"parameters",
       {{"mad_factor", p.mad_factor},
        {"cluster_threshold", p.cluster_threshold},
        {"min_group", p.min_group},
        {"scales", p.scales},
        {"replicas", p.replicas},
        {"seed", p.seed},
        {"ci", p.ci},
        {"method", p.method}}},
  };
}

}  // namespace tremor::analysis
