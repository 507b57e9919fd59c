#include "tremor/fleet/view.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <set>

namespace tremor::fleet {
namespace {

using nlohmann::json;

std::string fixed(double value, int digits) {
  char text[48];
  std::snprintf(text, sizeof text, "%.*f", digits, value);
  return text;
}

ApplicationDay summarise(const std::string& application, const std::string& day, std::vector<double>& lost,
                         long long runs) {
  std::ranges::sort(lost);
  return {
      application,         day, runs, static_cast<long long>(lost.size()), quantile(lost, 0.5), quantile(lost, 0.25),
      quantile(lost, 0.75)};
}

json ranking_table(const std::vector<NodeScore>& ranking) {
  json rows = json::array();
  for (const NodeScore& node : ranking) {
    rows.push_back({node.counts.node, std::to_string(node.counts.runs), std::to_string(node.counts.slow_runs),
                    fixed(node.slow_share, 3), fixed(node.wilson_low, 3), fixed(node.score, 3),
                    fixed(node.counts.lost_s, 1)});
  }
  json highlighted = json::array();
  for (std::size_t i = 0; i < ranking.size(); ++i) {
    if (ranking[i].score > 0.0) highlighted.push_back(i);
  }
  return {{"header", {"node", "runs", "slow runs", "slow share", "Wilson low", "score", "lost s"}},
          {"rows", rows},
          {"highlighted", highlighted},
          {"text_columns", 1}};
}

}  // namespace

double quantile(const std::vector<double>& ascending, double q) {
  if (ascending.empty()) return std::numeric_limits<double>::quiet_NaN();
  const double position = q * static_cast<double>(ascending.size() - 1);
  const auto below = static_cast<std::size_t>(std::floor(position));
  const std::size_t above = std::min(below + 1, ascending.size() - 1);
  return ascending[below] + (position - static_cast<double>(below)) * (ascending[above] - ascending[below]);
}

std::vector<ApplicationDay> application_days(const std::vector<RunRow>& runs) {
  std::vector<ApplicationDay> days;
  std::vector<double> lost;
  long long count = 0;
  std::string application, day;
  for (const RunRow& run : runs) {
    const std::string name = run.application.empty() ? "(unknown)" : run.application;
    const std::string run_day = utc_day(run.start_unix);
    if (count > 0 && (name != application || run_day != day)) {
      days.push_back(summarise(application, day, lost, count));
      lost.clear();
      count = 0;
    }
    application = name;
    day = run_day;
    ++count;
    if (run.lost_percent) lost.push_back(*run.lost_percent);
  }
  if (count > 0) days.push_back(summarise(application, day, lost, count));
  return days;
}

json fleet_view(const std::vector<NodeScore>& ranking, const std::vector<NodeDay>& days, const ViewLimits& limits) {
  std::vector<std::string> rows;
  std::map<std::string, std::size_t> row_of;
  for (const NodeScore& node : ranking) {
    if (rows.size() == limits.nodes) break;
    row_of[node.counts.node] = rows.size();
    rows.push_back(node.counts.node);
  }
  std::set<long long> day_set;
  for (const NodeDay& day : days) day_set.insert(day.day);
  std::vector<long long> columns(day_set.begin(), day_set.end());
  if (columns.size() > limits.days) columns.erase(columns.begin(), columns.end() - static_cast<long>(limits.days));
  std::map<long long, std::size_t> column_of;
  json column_names = json::array();
  for (const long long day : columns) {
    column_of[day] = column_names.size();
    column_names.push_back(utc_day(static_cast<double>(day) * 86400.0));
  }
  json values = json::array();
  for (std::size_t i = 0; i < rows.size(); ++i) values.push_back(json(std::vector<json>(columns.size(), nullptr)));
  for (const NodeDay& day : days) {
    const auto row = row_of.find(day.node);
    const auto column = column_of.find(day.day);
    if (row == row_of.end() || column == column_of.end() || day.runs <= 0) continue;
    values[row->second][column->second] = day.wait_s;
  }
  json blocks = json::array();
  blocks.push_back({{"heading", "Lost time per node and day"}});
  blocks.push_back({{"heatmap",
                     {{"rows", rows},
                      {"columns", column_names},
                      {"values", values},
                      {"unit", "s"},
                      {"caption", "lost time per node and day"}}}});
  blocks.push_back({{"heading", "Nodes ranked by score (Wilson lower bound of the slow share less the fleet's)"}});
  blocks.push_back({{"table", ranking_table(ranking)}});
  return {{"title", "Tremor fleet"}, {"marker", kFleetHtmlMarker}, {"blocks", blocks}};
}

}  // namespace tremor::fleet
