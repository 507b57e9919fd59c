// The read side of the fleet database: the ranking's counts, runs, a node's
// runs, the heat map's node-days and the CSV export.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>

#include "statement.hpp"
#include "tremor/fleet/store.hpp"

namespace tremor::fleet {
namespace {

constexpr const char* kTables[] = {"meta", "runs", "nodes", "run_nodes", "run_ranks", "node_days"};

// RFC 4180 field; text always quoted so that an empty text is told from NULL (an empty field).
std::string csv_field(sqlite3_stmt* statement, int column) {
  switch (sqlite3_column_type(statement, column)) {
    case SQLITE_NULL:
      return {};
    case SQLITE_INTEGER:
      return std::to_string(sqlite3_column_int64(statement, column));
    case SQLITE_FLOAT: {
      // The shortest text that reads back as the same double.
      const double value = sqlite3_column_double(statement, column);
      char text[40];
      for (int digits = 15; digits <= 17; ++digits) {
        std::snprintf(text, sizeof text, "%.*g", digits, value);
        if (std::strtod(text, nullptr) == value) break;
      }
      return text;
    }
    default: {
      const auto* raw = sqlite3_column_text(statement, column);
      std::string value = raw ? reinterpret_cast<const char*>(raw) : "", quoted = "\"";
      for (const char c : value) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
      return quoted + "\"";
    }
  }
}

RunRow run_row(const Statement& select) {
  RunRow row;
  row.key = select.text(0);
  row.application = select.text(1);
  row.job_id = select.text(2);
  row.start_unix = select.real(3);
  row.run_time_s = select.real(4);
  if (!select.null(5)) row.lost_percent = select.real(5);
  row.node_count = static_cast<int>(select.integer(6));
  return row;
}

}  // namespace

std::vector<NodeCounts> FleetStore::node_counts(long long since_day) const {
  // Grouped by both node columns, so that PostgreSQL runs it too (docs/fleet.md).
  Statement select(db_,
                   "SELECT n.name, SUM(d.runs), SUM(d.slow_runs), SUM(d.slow_wait_ms), MIN(d.first_unix), "
                   "MAX(d.last_unix) FROM node_days d JOIN nodes n ON n.id = d.node WHERE d.day >= ? "
                   "GROUP BY n.id, n.name HAVING SUM(d.runs) > 0");
  select.bind(1, since_day);
  std::vector<NodeCounts> nodes;
  while (select.step()) {
    nodes.push_back({select.text(0), select.integer(1), select.integer(2), static_cast<double>(select.integer(3)) / 1e3,
                     select.real(4), select.real(5)});
  }
  return nodes;
}

std::vector<RunRow> FleetStore::runs(const std::string& application) const {
  Statement select(db_,
                   "SELECT run_key, application, job_id, start_unix, run_time_s, lost_percent, node_count FROM runs "
                   "WHERE ?1 = '' OR application = ?1 ORDER BY application, start_unix");
  select.bind(1, application);
  std::vector<RunRow> rows;
  while (select.step()) rows.push_back(run_row(select));
  return rows;
}

std::vector<RunRow> FleetStore::node_runs(const std::string& node) const {
  Statement select(db_,
                   "SELECT r.run_key, r.application, r.job_id, r.start_unix, r.run_time_s, r.lost_percent, "
                   "r.node_count, rn.slow, rn.wait_ms FROM run_nodes rn JOIN runs r ON r.id = rn.run "
                   "WHERE rn.node = (SELECT id FROM nodes WHERE name = ?) ORDER BY r.start_unix");
  select.bind(1, node);
  std::vector<RunRow> rows;
  while (select.step()) {
    RunRow row = run_row(select);
    row.slow = select.integer(7) != 0;
    row.wait_s = static_cast<double>(select.integer(8)) / 1e3;
    rows.push_back(std::move(row));
  }
  return rows;
}

std::vector<NodeDay> FleetStore::node_days(long long since_day) const {
  Statement select(db_,
                   "SELECT n.name, d.day, d.runs, d.wait_ms FROM node_days d JOIN nodes n ON n.id = d.node "
                   "WHERE d.day >= ? AND d.runs > 0 ORDER BY d.day");
  select.bind(1, since_day);
  std::vector<NodeDay> days;
  while (select.step()) {
    days.push_back(
        {select.text(0), select.integer(1), select.integer(2), static_cast<double>(select.integer(3)) / 1e3});
  }
  return days;
}

long long FleetStore::count(const std::string& table) const {
  Statement select(db_, ("SELECT COUNT(*) FROM " + table).c_str());
  return select.step() ? select.integer(0) : 0;
}

std::vector<std::string> FleetStore::export_csv(const std::filesystem::path& directory) const {
  // Every table's header first: a file already there is replaced only when it
  // is this export's own (the same header), and nothing is written otherwise.
  std::vector<std::string> headers;
  for (const char* table : kTables) {
    Statement select(db_, ("SELECT * FROM " + std::string(table) + " LIMIT 0").c_str());
    std::string header;
    for (int c = 0; c < sqlite3_column_count(select.get()); ++c)
      header += (c ? "," : "") + std::string(sqlite3_column_name(select.get(), c));
    const std::filesystem::path path = directory / (std::string(table) + ".csv");
    std::error_code code;
    if (std::filesystem::exists(path, code)) {
      std::ifstream existing(path, std::ios::binary);
      std::string first_line;
      std::getline(existing, first_line);
      if (first_line != header)
        throw FleetError("will not write " + path.string() + ": it exists and is not this export's " + table +
                         " table; remove it or choose another directory");
    }
    headers.push_back(std::move(header));
  }
  std::filesystem::create_directories(directory);
  std::vector<std::string> written;
  for (std::size_t t = 0; t < std::size(kTables); ++t) {
    const std::string table = kTables[t];
    const std::filesystem::path path = directory / (table + ".csv");
    std::ofstream out(path, std::ios::binary);
    Statement select(db_, ("SELECT * FROM " + table).c_str());
    const int columns = sqlite3_column_count(select.get());
    out << headers[t] << '\n';
    while (select.step()) {
      for (int c = 0; c < columns; ++c) out << (c ? "," : "") << csv_field(select.get(), c);
      out << '\n';
    }
    if (!out.flush()) throw FleetError("cannot write " + path.string());
    written.push_back(path.string());
  }
  return written;
}

}  // namespace tremor::fleet
