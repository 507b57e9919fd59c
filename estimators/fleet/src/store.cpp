#include "tremor/fleet/store.hpp"

#include <sys/vfs.h>

#include <algorithm>
#include <chrono>
#include <thread>
#include <cmath>
#include <cstdlib>

#include "statement.hpp"

namespace tremor::fleet {
namespace {

constexpr int kBusyTimeoutMs = 30000;

constexpr const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS runs(id INTEGER PRIMARY KEY, run_key TEXT NOT NULL UNIQUE, run_id TEXT NOT NULL,
  job_id TEXT, application TEXT, run_file TEXT, start_unix REAL NOT NULL, run_time_s REAL, lost_percent REAL,
  world_size INTEGER, node_count INTEGER, slow_nodes INTEGER, source TEXT);
CREATE INDEX IF NOT EXISTS runs_start ON runs(start_unix);
CREATE INDEX IF NOT EXISTS runs_run_file ON runs(run_file);
CREATE TABLE IF NOT EXISTS nodes(id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);
CREATE TABLE IF NOT EXISTS run_nodes(run INTEGER NOT NULL, node INTEGER NOT NULL, slow INTEGER NOT NULL,
  wait_ms INTEGER NOT NULL, PRIMARY KEY(run, node)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS run_nodes_node ON run_nodes(node);
CREATE TABLE IF NOT EXISTS run_ranks(run INTEGER NOT NULL, rank INTEGER NOT NULL, node INTEGER, slow INTEGER NOT NULL,
  wait_ms INTEGER NOT NULL, PRIMARY KEY(run, rank)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS node_days(node INTEGER NOT NULL, day INTEGER NOT NULL, runs INTEGER NOT NULL,
  slow_runs INTEGER NOT NULL, wait_ms INTEGER NOT NULL, slow_wait_ms INTEGER NOT NULL, first_unix REAL,
  last_unix REAL, PRIMARY KEY(node, day)) WITHOUT ROWID;
)sql";

// File systems whose hosts do not share WAL's memory index (statfs f_type):
// NFS, SMB/CIFS, Lustre, GPFS, BeeGFS, CephFS, FUSE.
bool network_file_system(const std::filesystem::path& directory, std::string& name) {
  struct statfs info {};
  if (statfs(directory.c_str(), &info) != 0) return false;
  switch (static_cast<unsigned long>(info.f_type)) {
    case 0x6969UL:
      name = "NFS";
      return true;
    case 0x517BUL:
    case 0xFF534D42UL:
    case 0xFE534D42UL:
      name = "SMB";
      return true;
    case 0x0BD00BD0UL:
      name = "Lustre";
      return true;
    case 0x47504653UL:
      name = "GPFS";
      return true;
    case 0x19830326UL:
      name = "BeeGFS";
      return true;
    case 0x00C36400UL:
      name = "CephFS";
      return true;
    case 0x65735546UL:
      name = "FUSE";
      return true;
    default:
      return false;
  }
}

long long milliseconds(double seconds) { return std::llround(std::isfinite(seconds) ? seconds * 1000.0 : 0.0); }

bool lock_failure(int code) {
  const int primary = code & 0xff;
  return primary == SQLITE_IOERR || primary == SQLITE_PROTOCOL || primary == SQLITE_NOLFS || primary == SQLITE_CANTOPEN;
}

}  // namespace

FleetStore::FleetStore(const std::filesystem::path& path, std::string& journal_note) {
  if (sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) != SQLITE_OK) {
    const std::string message = db_ ? sqlite3_errmsg(db_) : "out of memory";
    sqlite3_close(db_);
    throw FleetError("cannot open " + path.string() + ": " + message);
  }
  sqlite3_extended_result_codes(db_, 1);
  sqlite3_busy_timeout(db_, kBusyTimeoutMs);
  try {
    // 64 MiB of page cache instead of SQLite's 2 MiB: the run_nodes(node)
    // index is written all over the file, and each batch would reread it
    // (20000 runs of 64 nodes: 6.1 s instead of 8.4 s, docs/fleet.md).
    exec("PRAGMA cache_size=-65536");
    set_up(path, journal_note);
  } catch (...) {
    statements_.clear();
    sqlite3_close(db_);
    throw;
  }
}

FleetStore::~FleetStore() {
  statements_.clear();
  sqlite3_close(db_);
}

void FleetStore::exec(const char* sql) const {
  char* message = nullptr;
  if (sqlite3_exec(db_, sql, nullptr, nullptr, &message) != SQLITE_OK) {
    const std::string text = message ? message : sqlite3_errmsg(db_);
    sqlite3_free(message);
    throw FleetError(text);
  }
}

// Journal, lock check and schema. Writers that open a new database at the
// same moment can get "database is locked" at once from the journal-mode
// switch (SQLite calls no busy handler there), so the set-up is retried
// until the busy timeout has passed.
void FleetStore::set_up(const std::filesystem::path& path, std::string& journal_note) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kBusyTimeoutMs);
  for (;;) {
    try {
      choose_journal(path, journal_note);
      check_locking(path);
      create_schema();
      return;
    } catch (const FleetError&) {
      if ((sqlite3_extended_errcode(db_) & 0xff) != SQLITE_BUSY || std::chrono::steady_clock::now() > deadline) throw;
      statements_.clear();
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
}

void FleetStore::choose_journal(const std::filesystem::path& path, std::string& note) {
  std::string file_system;
  const std::filesystem::path directory = path.has_parent_path() ? path.parent_path() : ".";
  if (network_file_system(directory, file_system)) {
    exec("PRAGMA journal_mode=DELETE");
    note = "journal DELETE: " + file_system + " cannot share WAL's index between hosts";
    return;
  }
  std::string chosen;
  {
    Statement current(db_, "PRAGMA journal_mode");  // another writer may have switched it already
    if (current.step()) chosen = current.text(0);
  }
  if (chosen != "wal") {
    Statement mode(db_, "PRAGMA journal_mode=WAL");
    chosen = mode.step() ? mode.text(0) : std::string();
  }
  if (chosen == "wal") {
    exec("PRAGMA synchronous=NORMAL");
    note = "journal WAL";
    return;
  }
  exec("PRAGMA journal_mode=DELETE");
  note = "journal DELETE: the file system refused WAL";
}

// One empty write transaction: where the file system cannot lock, say so
// here instead of in the middle of indexing.
void FleetStore::check_locking(const std::filesystem::path& path) {
  const int status = sqlite3_exec(db_, "BEGIN IMMEDIATE; COMMIT;", nullptr, nullptr, nullptr);
  if (status == SQLITE_OK) return;
  const std::string message = sqlite3_errmsg(db_);
  sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
  if ((status & 0xff) == SQLITE_BUSY) {
    throw FleetError(path.string() + " stayed locked by another writer for " + std::to_string(kBusyTimeoutMs / 1000) +
                     " s (" + message + ")");
  }
  if (lock_failure(status)) {
    throw FleetError("cannot lock " + path.string() + " (" + message +
                     "): its file system has no working file locks; put the database on a local or lock-capable "
                     "file system");
  }
  throw FleetError("cannot write " + path.string() + ": " + message);
}

void FleetStore::create_schema() {
  begin();
  try {
    exec(kSchema);
    Statement version(db_, "SELECT value FROM meta WHERE key='schema_version'");
    if (version.step()) {
      if (version.text(0) != std::to_string(kFleetSchemaVersion)) {
        throw FleetError("database schema version " + version.text(0) + ", this tremor reads version " +
                         std::to_string(kFleetSchemaVersion));
      }
    } else {
      Statement insert(db_, "INSERT INTO meta(key, value) VALUES('schema_version', ?)");
      insert.bind(1, std::to_string(kFleetSchemaVersion)).run();
    }
    commit();
  } catch (...) {
    rollback();
    throw;
  }
}

Statement& FleetStore::cached(const char* sql) {
  std::unique_ptr<Statement>& statement = statements_[sql];
  if (!statement) statement = std::make_unique<Statement>(db_, sql);
  statement->reset();
  return *statement;
}

void FleetStore::begin() {
  pending_days_.clear();
  exec("BEGIN IMMEDIATE");
}
void FleetStore::commit() {
  flush_days();
  exec("COMMIT");
}
void FleetStore::rollback() {
  sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
  node_ids_.clear();
  pending_days_.clear();
}

void FleetStore::merge(const DayDeltas& deltas) {
  for (const auto& [key, delta] : deltas) {
    DayDelta& total = pending_days_[key];
    total.runs += delta.runs;
    total.slow_runs += delta.slow_runs;
    total.wait_ms += delta.wait_ms;
    total.slow_wait_ms += delta.slow_wait_ms;
    if (delta.runs > 0 || delta.first_unix > 0.0) {
      total.first_unix = total.first_unix > 0.0 ? std::min(total.first_unix, delta.first_unix) : delta.first_unix;
      total.last_unix = std::max(total.last_unix, delta.last_unix);
    }
  }
}

long long FleetStore::node_id(const std::string& name) {
  if (const auto it = node_ids_.find(name); it != node_ids_.end()) return it->second;
  cached("INSERT OR IGNORE INTO nodes(name) VALUES(?)").bind(1, name).run();
  Statement& select = cached("SELECT id FROM nodes WHERE name=?");
  select.bind(1, name);
  if (!select.step()) fail(db_, "node " + name + " vanished");
  const long long id = select.integer(0);
  select.reset();
  return node_ids_[name] = id;
}

// Takes a stored run's rows out of run_nodes and run_ranks, and its counts out of node_days (via `deltas`).
void FleetStore::forget_run(long long run, DayDeltas& deltas) {
  Statement& old = cached(
      "SELECT rn.node, rn.slow, rn.wait_ms, CAST(floor(r.start_unix / 86400.0) AS INTEGER) FROM run_nodes rn "
      "JOIN runs r ON r.id = rn.run WHERE rn.run=?");
  old.bind(1, run);
  while (old.step()) {
    DayDelta& delta = deltas[{old.integer(0), old.integer(3)}];
    delta.runs -= 1;
    delta.slow_runs -= old.integer(1);
    delta.wait_ms -= old.integer(2);
    delta.slow_wait_ms -= old.integer(1) * old.integer(2);
  }
  old.reset();
  cached("DELETE FROM run_nodes WHERE run=?").bind(1, run).run();
  cached("DELETE FROM run_ranks WHERE run=?").bind(1, run).run();
}

void FleetStore::flush_days() {
  for (const auto& [key, delta] : pending_days_) {
    cached(
        "INSERT INTO node_days(node, day, runs, slow_runs, wait_ms, slow_wait_ms, first_unix, last_unix) "
        "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) ON CONFLICT(node, day) DO UPDATE SET runs=runs+?3, "
        "slow_runs=slow_runs+?4, wait_ms=wait_ms+?5, slow_wait_ms=slow_wait_ms+?6, "
        "first_unix=CASE WHEN ?3 > 0 THEN min(coalesce(first_unix, ?7), ?7) ELSE first_unix END, "
        "last_unix=CASE WHEN ?3 > 0 THEN max(coalesce(last_unix, ?8), ?8) ELSE last_unix END")
        .bind(1, key.first)
        .bind(2, key.second)
        .bind(3, delta.runs)
        .bind(4, delta.slow_runs)
        .bind(5, delta.wait_ms)
        .bind(6, delta.slow_wait_ms)
        .bind(7, delta.first_unix)
        .bind(8, delta.last_unix)
        .run();
  }
  pending_days_.clear();
  cached("DELETE FROM node_days WHERE runs<=0").run();
}

void FleetStore::put_run(const RunRecord& run) {
  exec("SAVEPOINT run");
  try {
    long long slow_nodes = 0;
    for (const NodeEntry& node : run.nodes) slow_nodes += node.slow ? 1 : 0;
    Statement& existing = cached("SELECT id FROM runs WHERE run_key=?");
    existing.bind(1, run.key);
    const std::optional<long long> old = existing.step() ? std::optional(existing.integer(0)) : std::nullopt;
    existing.reset();
    DayDeltas deltas;
    if (old) forget_run(*old, deltas);
    Statement& upsert = cached(
        "INSERT INTO runs(run_key, run_id, job_id, application, run_file, start_unix, run_time_s, lost_percent, "
        "world_size, node_count, slow_nodes, source) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12) "
        "ON CONFLICT(run_key) DO UPDATE SET run_id=?2, job_id=?3, application=?4, run_file=?5, start_unix=?6, "
        "run_time_s=?7, lost_percent=?8, world_size=?9, node_count=?10, slow_nodes=?11, source=?12 RETURNING id");
    upsert.bind(1, run.key).bind(2, run.run_id).bind_text_or_null(3, run.job_id).bind_text_or_null(4, run.application);
    upsert.bind_text_or_null(5, run.run_file).bind(6, run.start_unix).bind(7, run.run_time_s).bind(8, run.lost_percent);
    upsert.bind(9, static_cast<long long>(run.world_size)).bind(10, static_cast<long long>(run.nodes.size()));
    upsert.bind(11, slow_nodes).bind_text_or_null(12, run.source);
    if (!upsert.step()) fail(db_, "run " + run.key + " not stored");
    const long long id = upsert.integer(0);
    upsert.reset();
    const long long day = day_number(run.start_unix);
    for (const NodeEntry& node : run.nodes) {
      const long long node_key = node_id(node.name), wait = milliseconds(node.wait_s), slow = node.slow ? 1 : 0;
      cached("INSERT INTO run_nodes(run, node, slow, wait_ms) VALUES(?, ?, ?, ?)")
          .bind(1, id)
          .bind(2, node_key)
          .bind(3, slow)
          .bind(4, wait)
          .run();
      DayDelta& delta = deltas[{node_key, day}];
      delta.runs += 1;
      delta.slow_runs += slow;
      delta.wait_ms += wait;
      delta.slow_wait_ms += slow * wait;
      delta.first_unix = delta.first_unix > 0.0 ? std::min(delta.first_unix, run.start_unix) : run.start_unix;
      delta.last_unix = std::max(delta.last_unix, run.start_unix);
    }
    for (const RankEntry& rank : run.ranks) {
      Statement& insert = cached("INSERT INTO run_ranks(run, rank, node, slow, wait_ms) VALUES(?, ?, ?, ?, ?)");
      insert.bind(1, id).bind(2, static_cast<long long>(rank.rank));
      if (rank.node.empty())
        sqlite3_bind_null(insert.get(), 3);
      else
        insert.bind(3, node_id(rank.node));
      insert.bind(4, static_cast<long long>(rank.slow ? 1 : 0)).bind(5, milliseconds(rank.wait_s)).run();
    }
    exec("RELEASE run");
    merge(deltas);
  } catch (...) {
    sqlite3_exec(db_, "ROLLBACK TO run; RELEASE run;", nullptr, nullptr, nullptr);
    node_ids_.clear();
    throw;
  }
}

bool FleetStore::has_run_file(const std::string& file_name) {
  Statement& select = cached("SELECT 1 FROM runs WHERE run_file=? LIMIT 1");
  select.bind(1, file_name);
  const bool found = select.step();
  select.reset();
  return found;
}

}  // namespace tremor::fleet
