// Several analysed runs side by side (compare.hpp).
#include "tremor/analysis/compare.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <stdexcept>

#include "detail_cells.hpp"

namespace tremor::analysis {
namespace {

// Relative changes below this share of the run time are not called a difference
// of the run times at all (the verdict's wording only).
constexpr double kShareNegligible = 0.05;
// A prediction is for a measured run when its process count is this close.
constexpr double kProcessTolerance = 0.5;

std::string format_number(double value, int decimals) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", decimals, value);
  return text;
}

double median_of(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

// A, B, ... Z, then R27, R28 ...
std::string run_label(std::size_t position) {
  return position < 26 ? std::string(1, static_cast<char>('A' + position)) : "R" + std::to_string(position + 1);
}

RunRow run_row(const ComparedRun& compared, std::size_t position) {
  const RunAnalysis& analysis = *compared.analysis;
  return RunRow{.name = compared.name,
                .label = run_label(position),
                .file = compared.name,
                .processes = compared.run->meta.world_size,
                .run_time_s = analysis.run_time_s,
                .estimate_possible = analysis.estimate_possible,
                .lost_percent = analysis.primary.lost_percent,
                .lost_percent_low = analysis.primary.lost_percent_low,
                .lost_percent_high = analysis.primary.lost_percent_high,
                .intrinsic_run_time_s = analysis.primary.intrinsic_run_time_s,
                .interference_class = std::string(estimators::to_string(analysis.interference_class))};
}

std::string closing_call_name(const RunData& run, const GroupResult& group) {
  if (group.members.empty() || group.members.front() >= run.segments.closing_call.size()) return "?";
  const std::size_t call = run.segments.closing_call[group.members.front()];
  return call < run.meta.call_names.size() ? run.meta.call_names[call] : "?";
}

double work_middle(const GroupResult& group) { return 0.5 * (group.work_min + group.work_max); }

// Distance of two positive quantities on a log scale (0 = equal).
double log_distance(double a, double b) {
  if (a <= 0.0 || b <= 0.0) return a == b ? 0.0 : 1e9;
  return std::fabs(std::log(a / b));
}

// For each usable reference group, the index of its counterpart in `other`
// (or -1): first same signature and similar work, then, for those left, same
// closing call and the same rank in the order of intrinsic duration.
std::vector<std::pair<std::int64_t, std::string>> match_groups(const ComparedRun& reference, const ComparedRun& other,
                                                               const std::vector<std::size_t>& reference_groups) {
  const auto& mine = reference.analysis->groups;
  const auto& theirs = other.analysis->groups;
  std::vector<std::pair<std::int64_t, std::string>> matches(reference_groups.size(), {-1, ""});
  std::vector<bool> taken(theirs.size(), false);
  // Same signature: pair in the order of work when both runs have the same
  // number of such groups (a uniformly larger problem keeps the order), else
  // nearest work first.
  std::map<std::uint64_t, std::vector<std::size_t>> mine_by_signature, theirs_by_signature;
  for (std::size_t i = 0; i < reference_groups.size(); ++i) {
    mine_by_signature[mine[reference_groups[i]].signature].push_back(i);
  }
  for (std::size_t j = 0; j < theirs.size(); ++j) {
    if (theirs[j].usable) theirs_by_signature[theirs[j].signature].push_back(j);
  }
  for (auto& [signature, indices] : mine_by_signature) {
    const auto found = theirs_by_signature.find(signature);
    if (found == theirs_by_signature.end()) continue;
    std::vector<std::size_t>& candidates = found->second;
    if (candidates.size() == indices.size()) {
      std::sort(indices.begin(), indices.end(), [&](std::size_t a, std::size_t b) {
        return work_middle(mine[reference_groups[a]]) < work_middle(mine[reference_groups[b]]);
      });
      std::sort(candidates.begin(), candidates.end(),
                [&](std::size_t a, std::size_t b) { return work_middle(theirs[a]) < work_middle(theirs[b]); });
      for (std::size_t k = 0; k < indices.size(); ++k) {
        taken[candidates[k]] = true;
        matches[indices[k]] = {static_cast<std::int64_t>(candidates[k]), "signature"};
      }
      continue;
    }
    for (const std::size_t i : indices) {
      std::int64_t best = -1;
      double best_distance = 0.0;
      for (const std::size_t j : candidates) {
        if (taken[j]) continue;
        const double distance = log_distance(work_middle(mine[reference_groups[i]]), work_middle(theirs[j]));
        if (best < 0 || distance < best_distance) {
          best = static_cast<std::int64_t>(j);
          best_distance = distance;
        }
      }
      if (best >= 0) {
        taken[static_cast<std::size_t>(best)] = true;
        matches[i] = {best, "signature"};
      }
    }
  }
  // Fallback: per closing call, pair the remaining groups in order of intrinsic duration.
  std::map<std::string, std::vector<std::size_t>> left_mine, left_theirs;
  for (std::size_t i = 0; i < reference_groups.size(); ++i) {
    if (matches[i].first < 0) left_mine[closing_call_name(*reference.run, mine[reference_groups[i]])].push_back(i);
  }
  for (std::size_t j = 0; j < theirs.size(); ++j) {
    if (!taken[j] && theirs[j].usable) left_theirs[closing_call_name(*other.run, theirs[j])].push_back(j);
  }
  for (auto& [call, indices] : left_mine) {
    auto found = left_theirs.find(call);
    if (found == left_theirs.end()) continue;
    std::vector<std::size_t>& candidates = found->second;
    std::sort(indices.begin(), indices.end(), [&](std::size_t a, std::size_t b) {
      return mine[reference_groups[a]].intrinsic_s < mine[reference_groups[b]].intrinsic_s;
    });
    std::sort(candidates.begin(), candidates.end(),
              [&](std::size_t a, std::size_t b) { return theirs[a].intrinsic_s < theirs[b].intrinsic_s; });
    for (std::size_t k = 0; k < std::min(indices.size(), candidates.size()); ++k) {
      matches[indices[k]] = {static_cast<std::int64_t>(candidates[k]), "closing call"};
    }
  }
  return matches;
}

std::vector<GroupComparison> compare_groups(const std::vector<ComparedRun>& runs) {
  const ComparedRun& reference = runs.front();
  std::vector<std::size_t> reference_groups;
  for (std::size_t g = 0; g < reference.analysis->groups.size(); ++g) {
    if (reference.analysis->groups[g].usable) reference_groups.push_back(g);
  }
  std::vector<GroupComparison> result(reference_groups.size());
  for (std::size_t i = 0; i < reference_groups.size(); ++i) {
    const GroupResult& group = reference.analysis->groups[reference_groups[i]];
    char signature[32];
    std::snprintf(signature, sizeof signature, "%016llx", static_cast<unsigned long long>(group.signature));
    result[i].group = reference_groups[i];
    result[i].closing_call = closing_call_name(*reference.run, group);
    result[i].label = "#" + std::to_string(reference_groups[i]) + " " + result[i].closing_call + " " + signature;
    result[i].segments = group.members.size();
    result[i].intrinsic_s.push_back(group.intrinsic_s);
    result[i].change_percent.push_back(0.0);
    result[i].lost_s.push_back(group.lost_s);
    result[i].impact_s = group.lost_s;
  }
  for (std::size_t r = 1; r < runs.size(); ++r) {
    const auto matches = match_groups(reference, runs[r], reference_groups);
    for (std::size_t i = 0; i < matches.size(); ++i) {
      GroupComparison& row = result[i];
      if (matches[i].first < 0) {
        row.intrinsic_s.emplace_back();
        row.change_percent.emplace_back();
        row.lost_s.emplace_back();
        continue;
      }
      if (row.matched_by.empty() || matches[i].second == "closing call") row.matched_by = matches[i].second;
      const GroupResult& counterpart = runs[r].analysis->groups[static_cast<std::size_t>(matches[i].first)];
      row.intrinsic_s.push_back(counterpart.intrinsic_s);
      row.lost_s.push_back(counterpart.lost_s);
      row.impact_s = std::max(row.impact_s, counterpart.lost_s);
      const double mine = *row.intrinsic_s.front();
      row.change_percent.push_back(mine > 0.0 ? std::optional<double>(100.0 * (counterpart.intrinsic_s / mine - 1.0))
                                              : std::nullopt);
    }
  }
  // The groups that lost most in any run first (a real application has
  // hundreds, most losing nothing), then the largest share of the reference run.
  const auto& groups = reference.analysis->groups;
  std::stable_sort(result.begin(), result.end(), [&](const GroupComparison& a, const GroupComparison& b) {
    if (a.impact_s != b.impact_s) return a.impact_s > b.impact_s;
    return groups[a.group].time_s > groups[b.group].time_s;
  });
  return result;
}

void compare_nodes(const std::vector<ComparedRun>& runs, Comparison& result) {
  const RunMetadata& first = runs.front().run->meta;
  for (const ComparedRun& run : runs) {
    if (run.run->meta.counter_source != first.counter_source || run.run->meta.counter_unit != first.counter_unit) {
      result.node_drift_unavailable = "the runs count work differently (" + runs.front().name + ": " +
                                      std::string(to_string(first.counter_source)) + ", " + run.name + ": " +
                                      std::string(to_string(run.run->meta.counter_source)) + ")";
      return;
    }
  }
  std::map<std::string, std::vector<std::optional<double>>> by_host;
  for (std::size_t r = 0; r < runs.size(); ++r) {
    std::string why;
    const auto speeds = node_speeds(*runs[r].run, *runs[r].analysis, why);
    if (speeds.empty()) {
      result.node_drift_unavailable = runs[r].name + ": " + why;
      return;
    }
    for (const auto& [host, speed] : speeds) {
      auto& values = by_host[host];
      values.resize(runs.size());
      values[r] = speed;
    }
  }
  for (auto& [host, values] : by_host) {
    NodeDrift drift;
    drift.hostname = host;
    drift.seconds_per_work = values;
    for (const auto& value : values) {
      const auto& reference = values.front();
      drift.change_percent.push_back(value && reference && *reference > 0.0
                                         ? std::optional<double>(100.0 * (*value / *reference - 1.0))
                                         : std::nullopt);
    }
    result.nodes.push_back(std::move(drift));
  }
}

// Field name -> host -> value of one run's conditions (host "" for run-wide
// fields). Variables a node lacks read "(unset)".
using HostValues = std::map<std::string, std::string>;
std::map<std::string, HostValues> environment_fields(const RunData& run) {
  std::map<std::string, HostValues> fields;
  fields["mpi_flavour"][""] = run.meta.mpi_flavour;
  fields["counter_source"][""] = to_string(run.meta.counter_source);
  fields["tremor_version"][""] = run.meta.tremor_version;
  fields["command_line"][""] = run.meta.command_line;
  std::set<std::string> hosts;
  for (const RankInfo& rank : run.ranks) hosts.insert(rank.hostname);
  std::string host_list;
  for (const std::string& host : hosts) host_list += (host_list.empty() ? "" : ",") + host;
  fields["hosts"][""] = host_list;
  const RunEnvironment& environment = run.environment;
  for (std::size_t f = 0; f < kNodeFacts.size(); ++f) {
    for (const NodeEnvironment& node : environment.nodes)
      fields[std::string(kNodeFacts[f])][node.hostname] = node.facts[f];
  }
  std::set<std::string> variable_names;
  for (const NodeVariable& variable : environment.variables) variable_names.insert(variable.name);
  for (const std::string& name : variable_names) {
    for (const NodeEnvironment& node : environment.nodes) fields["variable " + name][node.hostname] = "(unset)";
  }
  for (const NodeVariable& variable : environment.variables) {
    if (variable.node < 0 || static_cast<std::size_t>(variable.node) >= environment.nodes.size()) continue;
    fields["variable " + variable.name][environment.nodes[static_cast<std::size_t>(variable.node)].hostname] =
        variable.value;
  }
  return fields;
}

bool one_value(const HostValues& values) {
  return std::all_of(values.begin(), values.end(),
                     [&](const auto& entry) { return entry.second == values.begin()->second; });
}

// A field with one value on every node of every run is compared by its name
// alone, so runs on different hosts of the same kind compare cleanly; a field
// whose nodes disagree in any run is compared per node ("name@host").
std::vector<EnvironmentDifference> compare_environment(const std::vector<ComparedRun>& runs) {
  std::vector<std::map<std::string, HostValues>> per_run;
  std::map<std::string, bool> split;  // field name -> compared per node
  for (const ComparedRun& run : runs) {
    per_run.push_back(environment_fields(*run.run));
    for (const auto& [name, values] : per_run.back()) split[name] = split[name] || !one_value(values);
  }
  std::map<std::string, std::vector<std::string>> rows;  // shown field -> per run
  const auto value_of = [&](std::size_t r, const std::string& field) -> std::string& {
    auto& values = rows[field];
    values.resize(runs.size(), "(absent)");
    return values[r];
  };
  for (const auto& [name, by_node] : split) {
    for (std::size_t r = 0; r < runs.size(); ++r) {
      const auto found = per_run[r].find(name);
      if (found == per_run[r].end() || found->second.empty()) {
        value_of(r, name);  // the row exists, this run lacks it
        continue;
      }
      if (!by_node) {
        value_of(r, name) = found->second.begin()->second;
      } else {
        for (const auto& [host, value] : found->second) value_of(r, name + "@" + host) = value;
      }
    }
  }
  std::vector<EnvironmentDifference> result;
  for (auto& [field, values] : rows) {
    values.resize(runs.size(), "(absent)");
    const std::string& first = values.front();  // clang cannot capture a structured binding
    const bool differs =
        std::any_of(values.begin(), values.end(), [&first](const std::string& value) { return value != first; });
    if (differs) result.push_back({field, std::move(values)});
  }
  return result;
}

std::string program_name(const std::string& command_line) {
  const std::string first = command_line.substr(0, command_line.find(' '));
  const auto slash = first.rfind('/');
  return slash == std::string::npos ? first : first.substr(slash + 1);
}

std::set<std::uint64_t> usable_signatures(const RunAnalysis& analysis) {
  std::set<std::uint64_t> signatures;
  for (const GroupResult& group : analysis.groups) {
    if (group.usable) signatures.insert(group.signature);
  }
  return signatures;
}

void check_predictions(const std::vector<ComparedRun>& runs, Comparison& result) {
  bool sizes_differ = false;
  for (const ComparedRun& small : runs) {
    for (const ComparedRun& large : runs) {
      const int from = small.run->meta.world_size;
      const int to = large.run->meta.world_size;
      if (to <= from) continue;
      sizes_differ = true;
      bool found = false;
      for (const Prediction& prediction : small.analysis->predictions) {
        if (std::fabs(prediction.processes - to) > kProcessTolerance) continue;
        found = true;
        const double actual = large.analysis->run_time_s;
        result.predictions.push_back({small.name, large.name, prediction.method, prediction.factor,
                                      prediction.processes, prediction.median_s, prediction.ci_low_s,
                                      prediction.ci_high_s, prediction.pi_low_s, prediction.pi_high_s, actual,
                                      actual >= prediction.pi_low_s && actual <= prediction.pi_high_s,
                                      actual >= prediction.ci_low_s && actual <= prediction.ci_high_s,
                                      prediction.method == small.analysis->prediction_headline.method});
      }
      if (!found) {
        if (!result.predictions_note.empty()) result.predictions_note += "; ";
        result.predictions_note +=
            small.name + " has no prediction for " + std::to_string(to) + " processes (" + large.name + ")";
      }
    }
  }
  if (!sizes_differ) result.predictions_note = "all runs have the same number of processes";
}

}  // namespace

std::vector<std::pair<std::string, double>> node_speeds(const RunData& run, const RunAnalysis& analysis,
                                                        std::string& why) {
  const DetailRanks& detail = run.detail;
  const std::size_t segments = detail.segments;
  const std::size_t rank_count = detail.ranks.size();
  const detail::DetailCells durations(run, Quantized::duration);
  const detail::DetailCells mpi_times(run, Quantized::mpi_time);
  const detail::DetailCells io_times(run, Quantized::io_time);
  const detail::DetailCells works(run, Quantized::work);
  if (rank_count == 0 || segments == 0) {
    why = "the run file has no per-rank detail";
    return {};
  }
  if (!durations.complete() || !mpi_times.complete() || !io_times.complete() || !works.complete()) {
    why = "the per-rank detail is incomplete";
    return {};
  }
  std::map<std::int32_t, std::string> host_of;
  for (const RankInfo& rank : run.ranks) host_of[rank.rank] = rank.hostname;
  std::map<std::string, std::vector<double>> per_host;
  const bool classified = analysis.segment_class.size() == segments;
  for (std::size_t r = 0; r < rank_count; ++r) {
    double outside = 0.0;
    double work = 0.0;
    for (std::size_t s = 0; s < segments; ++s) {
      if (classified && analysis.segment_class[s] == SegmentClass::interfered) continue;
      const auto duration = durations.find(r, s);
      const auto mpi = mpi_times.find(r, s);
      const auto io = io_times.find(r, s);
      const auto segment_work = works.find(r, s);
      if (!duration || !mpi || !io || !segment_work) continue;
      outside += std::max(0.0, *duration - *mpi - *io);
      work += *segment_work;
    }
    const auto host = host_of.find(detail.ranks[r]);
    if (work > 0.0 && host != host_of.end()) per_host[host->second].push_back(outside / work);
  }
  if (per_host.empty()) {
    why = "no detail rank recorded any work";
    return {};
  }
  std::vector<std::pair<std::string, double>> result;
  for (auto& [host, values] : per_host) result.emplace_back(host, median_of(std::move(values)));
  return result;
}

std::string program_mismatch(const ComparedRun& reference, const ComparedRun& compared) {
  const std::string mine = program_name(reference.run->meta.command_line);
  const std::string theirs = program_name(compared.run->meta.command_line);
  if (mine != theirs) {
    return compared.name + " is a run of another program than " + reference.name + " (" + theirs + ", not " + mine +
           ")";
  }
  if (reference.run->meta.world_size != compared.run->meta.world_size) return "";  // signatures scale with it
  const std::set<std::uint64_t> reference_signatures = usable_signatures(*reference.analysis);
  const std::set<std::uint64_t> compared_signatures = usable_signatures(*compared.analysis);
  if (reference_signatures.empty() || compared_signatures.empty()) return "";  // no verdict anyway
  for (const std::uint64_t signature : reference_signatures) {
    if (compared_signatures.contains(signature)) return "";
  }
  return compared.name + " shares no group signature (communication and I/O per segment) with " + reference.name +
         ": another program or input";
}

Verdict compare_intrinsic(const RunRow& reference, const RunRow& compared, double tolerance_percent) {
  Verdict verdict;
  verdict.reference = reference.name;
  verdict.compared = compared.name;
  verdict.tolerance_percent = tolerance_percent;
  for (const RunRow* row : {&reference, &compared}) {
    if (!row->estimate_possible || row->intrinsic_run_time_s <= 0.0) {
      verdict.text = "no verdict: " + row->name + " has no interference estimate";
      return verdict;
    }
  }
  // The intrinsic run time's interval follows from the lost-time interval;
  // relative half-widths of the two runs add in quadrature for their ratio.
  const auto relative_half_width = [](const RunRow& row) {
    const double low = row.run_time_s * (1.0 - row.lost_percent_high / 100.0);
    const double high = row.run_time_s * (1.0 - row.lost_percent_low / 100.0);
    return 0.5 * (high - low) / row.intrinsic_run_time_s;
  };
  verdict.available = true;
  const double ratio = compared.intrinsic_run_time_s / reference.intrinsic_run_time_s;
  verdict.intrinsic_change_percent = 100.0 * (ratio - 1.0);
  verdict.uncertainty_percent =
      100.0 * ratio * std::hypot(relative_half_width(reference), relative_half_width(compared));
  verdict.total_change_percent = 100.0 * (compared.run_time_s / reference.run_time_s - 1.0);
  const double run_time_difference = compared.run_time_s - reference.run_time_s;
  const double lost_difference =
      (compared.run_time_s - compared.intrinsic_run_time_s) - (reference.run_time_s - reference.intrinsic_run_time_s);
  verdict.interference_share =
      run_time_difference != 0.0 ? std::clamp(lost_difference / run_time_difference, 0.0, 1.0) : 0.0;
  const double margin = std::max(verdict.uncertainty_percent, tolerance_percent);
  verdict.intrinsic_differs = std::fabs(verdict.intrinsic_change_percent) > margin;
  const std::string uncertainty = format_number(verdict.uncertainty_percent, 1);
  const std::string agreement = format_number(margin, 1);
  if (verdict.intrinsic_differs) {
    const double share = verdict.interference_share;
    verdict.text =
        compared.name + " is " + format_number(std::fabs(verdict.intrinsic_change_percent), 1) + " % (±" + uncertainty +
        ") " + (verdict.intrinsic_change_percent > 0 ? "slower" : "faster") + " than " + reference.name +
        " intrinsically; interference explains " +
        (share < kShareNegligible ? std::string("none") : "about " + format_number(100.0 * share, 0) + " %") +
        " of the run-time difference (" + format_number(verdict.total_change_percent, 1) + " %)";
  } else if (std::fabs(verdict.total_change_percent) > margin) {
    verdict.text = "the difference is interference: " + compared.name + "'s run time is " +
                   format_number(std::fabs(verdict.total_change_percent), 1) + " % " +
                   (verdict.total_change_percent > 0 ? "longer" : "shorter") + " than " + reference.name +
                   "'s, intrinsic times agree within ±" + agreement + " %";
  } else {
    verdict.text = compared.name + " and " + reference.name + " agree: run times differ by " +
                   format_number(verdict.total_change_percent, 1) + " %, intrinsic times within ±" + agreement + " %";
  }
  return verdict;
}

Comparison compare_runs(const std::vector<ComparedRun>& runs, double tolerance_percent) {
  if (runs.size() < 2) throw std::invalid_argument("compare_runs needs at least two runs");
  for (const ComparedRun& run : runs) {
    if (!run.run || !run.analysis) throw std::invalid_argument("compare_runs: run without data or analysis");
  }
  Comparison result;
  for (std::size_t r = 0; r < runs.size(); ++r) result.runs.push_back(run_row(runs[r], r));
  result.groups = compare_groups(runs);
  compare_nodes(runs, result);
  result.environment = compare_environment(runs);
  check_predictions(runs, result);
  for (std::size_t r = 1; r < result.runs.size(); ++r) {
    const std::string mismatch = program_mismatch(runs.front(), runs[r]);
    if (mismatch.empty()) {
      result.verdicts.push_back(compare_intrinsic(result.runs.front(), result.runs[r], tolerance_percent));
      continue;
    }
    result.warnings.push_back(mismatch);
    Verdict verdict;
    verdict.reference = result.runs.front().name;
    verdict.compared = result.runs[r].name;
    verdict.tolerance_percent = tolerance_percent;
    verdict.text = "no verdict: " + mismatch;
    result.verdicts.push_back(std::move(verdict));
  }
  return result;
}

}  // namespace tremor::analysis
