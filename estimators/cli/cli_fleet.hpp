// `tremor fleet`: runs of many jobs in one SQLite database, and which nodes
// slow jobs down again and again (docs/fleet.md). cli_fleet.cpp registers the
// subcommands and indexes; cli_fleet_query.cpp answers.
#pragma once
#include <CLI/CLI.hpp>
#include <string>

namespace tremor::cli {

struct FleetQueryOptions {
  std::string database;
  std::string since;  // "30d", "12h" or a date "2026-11-30"; "" = all
  unsigned min_runs = 1;
  bool csv = false;
  bool json = false;
  bool suggest_drain = false;
  double threshold = 0.0;  // drain suggested for score > threshold
  std::string application;
  std::string node;
  std::string directory;  // export
  std::string output;     // html
};

// TREMOR_FLEET_DB, else tremor-fleet.db in the working directory.
std::string default_fleet_database();
void register_fleet_queries(CLI::App* fleet);

}  // namespace tremor::cli
