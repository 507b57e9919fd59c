// The fleet database: SQLite, tables meta, runs, nodes, run_nodes, run_ranks
// and node_days (columns in docs/fleet.md). Several processes, also on
// several hosts, may write one database at once: WAL journal where the file
// system allows it, a busy timeout, and an error that says so where the file
// system cannot lock.
#pragma once
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tremor/fleet/error.hpp"
#include "tremor/fleet/ranking.hpp"
#include "tremor/fleet/record.hpp"

struct sqlite3;

namespace tremor::fleet {

class Statement;
inline constexpr int kFleetSchemaVersion = 1;

struct RunRow {
  std::string key, application, job_id;
  double start_unix = 0.0, run_time_s = 0.0;
  std::optional<double> lost_percent;
  int node_count = 0;
  bool slow = false;    // show: the node was the one the others waited for
  double wait_s = 0.0;  // show: time lost waiting for the node
};

struct NodeDay {
  std::string node;
  long long day = 0;  // day_number
  long long runs = 0;
  double wait_s = 0.0;
};

class FleetStore {
 public:
  // Opens or creates the database; `journal_note` says which journal it uses and why.
  FleetStore(const std::filesystem::path& path, std::string& journal_note);
  ~FleetStore();
  FleetStore(const FleetStore&) = delete;
  FleetStore& operator=(const FleetStore&) = delete;

  // Write transactions (BEGIN IMMEDIATE: the write lock at once, so two
  // writers wait in the busy handler instead of deadlocking).
  void begin();
  void commit();
  void rollback();
  // Stores a run in the open transaction, replacing an earlier copy of the
  // same key (idempotent); all or nothing (a savepoint).
  void put_run(const RunRecord& run);
  // Whether a run with this run file name is stored (an .h5 whose report was indexed).
  bool has_run_file(const std::string& file_name);

  std::vector<NodeCounts> node_counts(long long since_day) const;
  std::vector<RunRow> runs(const std::string& application) const;
  std::vector<RunRow> node_runs(const std::string& node) const;
  std::vector<NodeDay> node_days(long long since_day) const;
  // One CSV per table (header row, NULL as an empty field) in `directory`; the tables' names.
  std::vector<std::string> export_csv(const std::filesystem::path& directory) const;
  long long count(const std::string& table) const;

 private:
  void exec(const char* sql) const;
  void create_schema();
  void set_up(const std::filesystem::path& path, std::string& journal_note);
  void choose_journal(const std::filesystem::path& path, std::string& note);
  void check_locking(const std::filesystem::path& path);
  long long node_id(const std::string& name);
  struct DayDelta {
    long long runs = 0, slow_runs = 0, wait_ms = 0, slow_wait_ms = 0;
    double first_unix = 0.0, last_unix = 0.0;  // of added runs; 0: none added
  };
  using DayDeltas = std::map<std::pair<long long, long long>, DayDelta>;  // by (node, day)
  void forget_run(long long run, DayDeltas& deltas);
  void flush_days();
  void merge(const DayDeltas& deltas);
  Statement& cached(const char* sql);
  sqlite3* db_ = nullptr;
  std::map<const char*, std::unique_ptr<Statement>> statements_;  // by the SQL's address
  std::map<std::string, long long> node_ids_;                     // cleared on rollback
  // node_days changes of the open transaction, written at commit: one
  // upsert per node and day instead of one per node and run.
  DayDeltas pending_days_;
};

}  // namespace tremor::fleet
