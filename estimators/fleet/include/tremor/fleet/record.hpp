// One run as the fleet database keeps it, read from a JSON report
// (`tremor analyze --json` or the report written beside the run file).
#pragma once
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace tremor::fleet {

struct NodeEntry {
  std::string name;
  bool slow = false;    // in diagnosis.slow_nodes: the node the others waited for
  double wait_s = 0.0;  // stragglers.nodes impact_s: time lost in segments it was late in
};

struct RankEntry {
  int rank = 0;
  std::string node;
  bool slow = false;  // in diagnosis.slow_ranks
  double wait_s = 0.0;
};

struct RunRecord {
  std::string key;  // job "scheduler:id[.step]" when the report has a job id, else run_id
  std::string run_id;
  std::string job_id;
  std::string application;
  std::string run_file;  // file name of the report's output_file ("" if none)
  std::string source;    // the file it was indexed from (set by the indexer)
  double start_unix = 0.0;
  double run_time_s = 0.0;
  std::optional<double> lost_percent;  // null without an estimate
  int world_size = 0;
  std::vector<NodeEntry> nodes;  // every node of the run
  std::vector<RankEntry> ranks;  // only the ranks that matter (record.cpp)
};

// The record, or why the JSON is not a Tremor report the fleet can index.
struct ParsedReport {
  std::optional<RunRecord> record;
  std::string problem;
};
ParsedReport parse_report(const nlohmann::json& report);

// "2026-12-07T10:15:00.123Z" -> Unix seconds; nullopt on anything else.
std::optional<double> parse_utc(const std::string& text);
// Unix seconds -> "2026-12-07" (UTC day).
std::string utc_day(double unix_seconds);
// Unix seconds -> whole UTC days since 1970-01-01.
long long day_number(double unix_seconds);

}  // namespace tremor::fleet
