#include "tremor/fleet/record.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <map>

namespace tremor::fleet {
namespace {

using nlohmann::json;

// Beside the named ranks, the few ranks the run waited for most: enough to
// follow a node's ranks, at a bounded size per run (docs/fleet.md).
constexpr std::size_t kTopStragglerRanks = 4;

std::string text_or_empty(const json& object, const char* key) {
  const auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

double number_or_zero(const json& object, const char* key) {
  const auto it = object.find(key);
  return it != object.end() && it->is_number() ? it->get<double>() : 0.0;
}

const json& array_at(const json& object, const char* key) {
  static const json empty = json::array();
  if (!object.is_object()) return empty;
  const auto it = object.find(key);
  return it != object.end() && it->is_array() ? *it : empty;
}

// "slurm:1234" (".step" when known) from the report's job object, else "".
std::string job_key(const json& report) {
  const auto job = report.find("job");
  if (job == report.end() || !job->is_object()) return {};
  const std::string id = text_or_empty(*job, "id");
  if (id.empty()) return {};
  std::string scheduler = text_or_empty(*job, "scheduler");
  const std::string step = text_or_empty(*job, "step");
  return (scheduler.empty() ? std::string("job") : scheduler) + ":" + id + (step.empty() ? "" : "." + step);
}

void read_nodes(const json& report, RunRecord& record) {
  std::map<std::string, std::size_t> index;
  for (const json& host : report["hosts"]) {
    if (index.emplace(host.get<std::string>(), record.nodes.size()).second) record.nodes.push_back({host, false, 0.0});
  }
  for (const json& node : array_at(report["stragglers"], "nodes")) {
    if (const auto it = index.find(text_or_empty(node, "hostname")); it != index.end()) {
      record.nodes[it->second].wait_s = number_or_zero(node, "impact_s");
    }
  }
  for (const json& node : array_at(report["diagnosis"], "slow_nodes")) {
    if (const auto it = index.find(text_or_empty(node, "hostname")); it != index.end())
      record.nodes[it->second].slow = true;
  }
}

void read_ranks(const json& report, RunRecord& record) {
  std::map<int, RankEntry> ranks;
  const json& stragglers = array_at(report["stragglers"], "ranks");
  for (std::size_t i = 0; i < stragglers.size() && i < kTopStragglerRanks; ++i) {
    const json& rank = stragglers[i];
    if (!rank.contains("rank") || !rank["rank"].is_number_integer()) continue;
    const int id = rank["rank"].get<int>();
    ranks[id] = {id, text_or_empty(rank, "hostname"), false, number_or_zero(rank, "impact_s")};
  }
  for (const json& rank : array_at(report["diagnosis"], "slow_ranks")) {
    if (!rank.contains("rank") || !rank["rank"].is_number_integer()) continue;
    const int id = rank["rank"].get<int>();
    RankEntry& entry = ranks[id];
    entry.rank = id;
    entry.node = text_or_empty(rank, "hostname");
    entry.slow = true;
  }
  for (auto& [id, entry] : ranks) record.ranks.push_back(std::move(entry));
}

// Why `report` is not an indexable report, or "" when it is.
std::string problem_of(const json& report) {
  if (!report.is_object()) return "not a JSON object";
  if (!report.contains("schema_version") || !report.contains("tremor_version")) return "not a Tremor report";
  if (!report.contains("run_id") || !report["run_id"].is_string() || !report.contains("hosts")) {
    return "a Tremor report without run_id and hosts (written before 0.7.0): index its run file instead";
  }
  const json& hosts = report["hosts"];
  if (!hosts.is_array() || hosts.empty() || !std::ranges::all_of(hosts, [](const json& h) { return h.is_string(); })) {
    return "hosts is not a list of host names";
  }
  if (!report.contains("run_time_s") || !(report["run_time_s"].is_number() || report["run_time_s"].is_null())) {
    return "run_time_s missing";
  }
  return {};
}

}  // namespace

ParsedReport parse_report(const json& report) {
  if (std::string problem = problem_of(report); !problem.empty()) return {std::nullopt, std::move(problem)};
  RunRecord record;
  record.run_id = report["run_id"].get<std::string>();
  record.job_id = job_key(report);
  record.key = record.job_id.empty() ? record.run_id : record.job_id;
  record.application = text_or_empty(report, "application");
  const std::string output = text_or_empty(report, "output_file");
  record.run_file = output.substr(output.find_last_of('/') + 1);
  record.start_unix = parse_utc(text_or_empty(report, "start_utc")).value_or(0.0);
  record.run_time_s = number_or_zero(report, "run_time_s");
  if (const auto it = report.find("lost_percent"); it != report.end() && it->is_number()) {
    record.lost_percent = it->get<double>();
  }
  if (const auto it = report.find("world_size"); it != report.end() && it->is_number_integer()) {
    record.world_size = it->get<int>();
  }
  read_nodes(report, record);
  read_ranks(report, record);
  return {std::move(record), {}};
}

std::optional<double> parse_utc(const std::string& text) {
  std::tm parts{};
  int millis = 0;
  if (std::sscanf(text.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d.%3dZ", &parts.tm_year, &parts.tm_mon, &parts.tm_mday,
                  &parts.tm_hour, &parts.tm_min, &parts.tm_sec, &millis) < 6) {
    return std::nullopt;
  }
  parts.tm_year -= 1900;
  parts.tm_mon -= 1;
  return static_cast<double>(timegm(&parts)) + millis / 1000.0;
}

long long day_number(double unix_seconds) { return static_cast<long long>(std::floor(unix_seconds / 86400.0)); }

std::string utc_day(double unix_seconds) {
  const auto whole = static_cast<std::time_t>(day_number(unix_seconds) * 86400);
  std::tm parts{};
  gmtime_r(&whole, &parts);
  char text[32];
  std::snprintf(text, sizeof text, "%04d-%02d-%02d", parts.tm_year + 1900, parts.tm_mon + 1, parts.tm_mday);
  return text;
}

}  // namespace tremor::fleet
