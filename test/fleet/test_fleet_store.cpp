// The fleet database (estimators/fleet/src/store*.cpp) on a temporary file.
#include <sqlite3.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>

#include "tremor/fleet/store.hpp"

using namespace tremor::fleet;

namespace {

struct TemporaryDatabase {
  std::filesystem::path path;
  TemporaryDatabase() {
    char name[] = "/tmp/tremor-fleet-test-XXXXXX";
    const int descriptor = mkstemp(name);
    close(descriptor);
    path = name;
    std::filesystem::remove(path);
  }
  ~TemporaryDatabase() {
    for (const char* suffix : {"", "-wal", "-shm", "-journal"}) std::filesystem::remove(path.string() + suffix);
  }
};

RunRecord run(const std::string& key, double start, const std::string& slow) {
  RunRecord record;
  record.key = record.run_id = key;
  record.application = "app";
  record.start_unix = start;
  record.run_time_s = 10.0;
  record.lost_percent = 4.0;
  for (const char* node : {"a", "b", "c"}) record.nodes.push_back({node, node == slow, node == slow ? 1.5 : 0.0});
  record.ranks.push_back({2, slow, true, 1.5});
  return record;
}

std::vector<NodeCounts> counts(const FleetStore& store) {
  std::vector<NodeCounts> nodes = store.node_counts(0);
  std::ranges::sort(nodes, [](const NodeCounts& x, const NodeCounts& y) { return x.node < y.node; });
  return nodes;
}

}  // namespace

// Fails an INSERT without replacing the earlier copy (run_nodes rows or the
// per-day counts would double) and a replacement that forgets the old node-days.
TEST_CASE("Storing a run again changes nothing, a changed copy replaces it", "[fleet]") {
  TemporaryDatabase database;
  std::string journal;
  FleetStore store(database.path, journal);
  CHECK(journal == "journal WAL");
  for (int pass = 0; pass < 2; ++pass) {
    store.begin();
    store.put_run(run("r1", 1796119200.0, "b"));
    store.put_run(run("r2", 1796119300.0, "b"));
    store.commit();
  }
  CHECK(store.count("runs") == 2);
  CHECK(store.count("run_nodes") == 6);
  CHECK(store.count("run_ranks") == 2);
  std::vector<NodeCounts> nodes = counts(store);
  REQUIRE(nodes.size() == 3);
  CHECK(nodes[1].runs == 2);
  CHECK(nodes[1].slow_runs == 2);
  CHECK(nodes[1].lost_s == Approx(3.0));
  // r2 again, now slow on c and a day later: b loses one slow run, c gains one.
  store.begin();
  store.put_run(run("r2", 1796119300.0 + 86400.0, "c"));
  store.commit();
  nodes = counts(store);
  CHECK(nodes[1].slow_runs == 1);
  CHECK(nodes[2].slow_runs == 1);
  CHECK(nodes[2].runs == 2);
  CHECK(store.count("runs") == 2);
  CHECK(store.node_days(0).size() == 6);
  CHECK(store.node_runs("c").size() == 2);
}

// Fails a store that keeps what it wrote before a rollback (a half-indexed batch).
TEST_CASE("A rolled-back batch leaves nothing behind", "[fleet]") {
  TemporaryDatabase database;
  std::string journal;
  FleetStore store(database.path, journal);
  store.begin();
  store.put_run(run("r1", 1796119200.0, "a"));
  store.rollback();
  CHECK(store.count("runs") == 0);
  CHECK(store.count("run_nodes") == 0);
  CHECK(store.node_counts(0).empty());
  store.begin();
  store.put_run(run("r1", 1796119200.0, "a"));
  store.commit();
  CHECK(counts(store)[0].slow_runs == 1);
}

// Fails a store that accepts a database of another schema version.
TEST_CASE("A database of another schema version is refused", "[fleet]") {
  TemporaryDatabase database;
  std::string journal;
  { FleetStore store(database.path, journal); }
  {
    FleetStore store(database.path, journal);
    CHECK(store.count("meta") == 1);
  }
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(database.path.c_str(), &db) == SQLITE_OK);
  CHECK(sqlite3_exec(db, "UPDATE meta SET value='99' WHERE key='schema_version'", nullptr, nullptr, nullptr) ==
        SQLITE_OK);
  sqlite3_close(db);
  CHECK_THROWS_AS(FleetStore(database.path, journal), FleetError);
}
