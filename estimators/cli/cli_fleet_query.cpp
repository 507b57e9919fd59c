// The answering subcommands of `tremor fleet`: nodes (the ranking, and the
// drain lines it suggests), runs (lost % per application and day), show
// NODE, export --csv DIR and html -o FILE.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <iostream>
#include <string>
#include <vector>

#include "cli_fleet.hpp"
#include "commands.hpp"
#include "option_values.hpp"
#include "output_file.hpp"
#include "text_format.hpp"
#include "tremor/analysis/html_view.hpp"
#include "tremor/fleet/view.hpp"
#include "tremor/json_text.hpp"

namespace tremor::cli {
namespace {

using nlohmann::json;

constexpr unsigned kDrainMinRuns = 5;  // --suggest-drain without --min-runs

json number(double value) { return std::isfinite(value) ? json(value) : json(nullptr); }

// --since: "30d", "12h", "2w" before now, or a date "2026-11-30"; whole UTC days (node_days).
long long since_day(const std::string& since) {
  if (since.empty()) return std::numeric_limits<long long>::min();
  if (const auto start = fleet::parse_utc(since + "T00:00:00.000Z")) return fleet::day_number(*start);
  char unit = 0;
  double amount = 0.0;
  char extra = 0;
  if (std::sscanf(since.c_str(), "%lf%c%c", &amount, &unit, &extra) != 2 || amount < 0.0 ||
      (unit != 'd' && unit != 'h' && unit != 'w')) {
    throw CommandFailure("--since " + since + ": give 30d, 12h, 2w or a date 2026-11-30", Exit::usage);
  }
  const double seconds = amount * (unit == 'h' ? 3600.0 : unit == 'd' ? 86400.0 : 7 * 86400.0);
  const double now = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  return fleet::day_number(now - seconds);
}

fleet::FleetStore open_store(const FleetQueryOptions& options, std::string& journal) {
  const std::string path = options.database.empty() ? default_fleet_database() : options.database;
  if (!std::filesystem::exists(path)) {
    throw CommandFailure("no fleet database " + path + ": index runs first (tremor fleet index DIR --db " + path + ")",
                         Exit::bad_input);
  }
  try {
    return fleet::FleetStore(path, journal);
  } catch (const fleet::FleetError& error) {
    throw CommandFailure(error.what(), Exit::bad_input);
  }
}

std::vector<fleet::NodeScore> ranking(const fleet::FleetStore& store, const FleetQueryOptions& options) {
  std::vector<fleet::NodeScore> scores = fleet::rank_nodes(store.node_counts(since_day(options.since)));
  std::erase_if(scores,
                [&](const fleet::NodeScore& s) { return s.counts.runs < static_cast<long long>(options.min_runs); });
  return scores;
}

json node_json(const fleet::NodeScore& node) {
  return {{"node", node.counts.node},
          {"runs", node.counts.runs},
          {"slow_runs", node.counts.slow_runs},
          {"slow_share", number(node.slow_share)},
          {"wilson_low", number(node.wilson_low)},
          {"baseline_share", number(node.baseline_share)},
          {"score", number(node.score)},
          {"lost_s", number(node.counts.lost_s)},
          {"first_utc", utc_text(node.counts.first_unix)},
          {"last_utc", utc_text(node.counts.last_unix)}};
}

void print_drain(const std::vector<fleet::NodeScore>& scores, const FleetQueryOptions& options) {
  for (const fleet::NodeScore& node : scores) {
    if (node.score <= options.threshold) continue;
    std::cout << "scontrol update NodeName=" << node.counts.node << " State=DRAIN Reason=\"tremor: slow in "
              << node.counts.slow_runs << " of " << node.counts.runs << " runs since "
              << fleet::utc_day(node.counts.first_unix) << "\"\n";
  }
}

// One table for the text and CSV forms: CSV joins the cells with commas; the
// text form aligns each column (text to the left, numbers to the right).
void print_table(const std::vector<std::string>& csv_header, const std::vector<std::string>& text_header,
                 const std::vector<std::vector<std::string>>& rows, bool csv) {
  if (csv) {
    auto print_csv = [](const std::vector<std::string>& row) {
      for (std::size_t c = 0; c < row.size(); ++c) std::cout << (c ? "," : "") << row[c];
      std::cout << '\n';
    };
    print_csv(csv_header);
    for (const auto& row : rows) print_csv(row);
    return;
  }
  std::vector<std::size_t> width(text_header.size(), 0);
  std::vector<bool> numeric(text_header.size(), true);
  for (std::size_t c = 0; c < text_header.size(); ++c) width[c] = text_header[c].size();
  for (const auto& row : rows) {
    for (std::size_t c = 0; c < row.size() && c < width.size(); ++c) {
      width[c] = std::max(width[c], row[c].size());
      if (row[c].find_first_not_of("0123456789.-") != std::string::npos) numeric[c] = false;
    }
  }
  auto print_row = [&](const std::vector<std::string>& row) {
    std::string line;
    for (std::size_t c = 0; c < row.size() && c < width.size(); ++c) {
      const std::string pad(width[c] - row[c].size(), ' ');
      line += (c ? "  " : "") + (numeric[c] ? pad + row[c] : row[c] + (c + 1 < row.size() ? pad : ""));
    }
    std::cout << line << '\n';
  };
  print_row(text_header);
  for (const auto& row : rows) print_row(row);
}

void run_nodes(const FleetQueryOptions& options) {
  std::string journal;
  fleet::FleetStore store = open_store(options, journal);
  const std::vector<fleet::NodeScore> scores = ranking(store, options);
  if (options.suggest_drain) return print_drain(scores, options);
  if (options.json) {
    json out = json::array();
    for (const fleet::NodeScore& node : scores) out.push_back(node_json(node));
    std::cout << json_text(out, 2) << '\n';
    return;
  }
  std::vector<std::vector<std::string>> rows;
  for (const fleet::NodeScore& node : scores) {
    rows.push_back({node.counts.node, std::to_string(node.counts.runs), std::to_string(node.counts.slow_runs),
                    fixed(node.slow_share, 3), fixed(node.wilson_low, 3), fixed(node.baseline_share, 3),
                    fixed(node.score, 3), fixed(node.counts.lost_s, 1), utc_text(node.counts.first_unix),
                    utc_text(node.counts.last_unix)});
  }
  print_table({"node", "runs", "slow_runs", "slow_share", "wilson_low", "baseline_share", "score", "lost_s",
               "first_utc", "last_utc"},
              {"node", "runs", "slow_runs", "slow_share", "wilson_low", "baseline", "score", "lost_s", "first_utc",
               "last_utc"},
              rows, options.csv);
}

void run_runs(const FleetQueryOptions& options) {
  std::string journal;
  const fleet::FleetStore store = open_store(options, journal);
  const std::vector<fleet::ApplicationDay> days = fleet::application_days(store.runs(options.application));
  if (options.json) {
    json out = json::array();
    for (const fleet::ApplicationDay& day : days) {
      out.push_back({{"application", day.application},
                     {"day", day.day},
                     {"runs", day.runs},
                     {"estimated", day.estimated},
                     {"median_lost_percent", number(day.median)},
                     {"q1_lost_percent", number(day.q1)},
                     {"q3_lost_percent", number(day.q3)},
                     {"iqr_lost_percent", number(day.q3 - day.q1)}});
    }
    std::cout << json_text(out, 2) << '\n';
    return;
  }
  std::vector<std::vector<std::string>> rows;
  for (const fleet::ApplicationDay& day : days) {
    rows.push_back({day.application, day.day, std::to_string(day.runs), std::to_string(day.estimated),
                    fixed(day.median, 2), fixed(day.q1, 2), fixed(day.q3, 2), fixed(day.q3 - day.q1, 2)});
  }
  print_table({"application", "day", "runs", "estimated", "median_lost_percent", "q1_lost_percent", "q3_lost_percent",
               "iqr_lost_percent"},
              {"application", "day", "runs", "estimated", "median_lost_%", "q1", "q3", "iqr"}, rows, options.csv);
}

void run_show(const FleetQueryOptions& options) {
  std::string journal;
  const fleet::FleetStore store = open_store(options, journal);
  const std::vector<fleet::RunRow> runs = store.node_runs(options.node);
  if (runs.empty()) throw CommandFailure("node " + options.node + " is in no indexed run", Exit::bad_input);
  if (options.json) {
    json out = json::array();
    for (const fleet::RunRow& run : runs) {
      out.push_back({{"run", run.key},
                     {"start_utc", utc_text(run.start_unix)},
                     {"application", run.application},
                     {"nodes", run.node_count},
                     {"run_time_s", number(run.run_time_s)},
                     {"lost_percent", run.lost_percent ? number(*run.lost_percent) : json(nullptr)},
                     {"slow", run.slow},
                     {"wait_s", number(run.wait_s)}});
    }
    std::cout << json_text(out, 2) << '\n';
    return;
  }
  std::vector<std::vector<std::string>> rows;
  for (const fleet::RunRow& run : runs) {
    rows.push_back({utc_text(run.start_unix), run.key, run.application.empty() ? "-" : run.application,
                    std::to_string(run.node_count), fixed(run.run_time_s, 2),
                    run.lost_percent ? fixed(*run.lost_percent, 2) : "-", run.slow ? "yes" : "no",
                    fixed(run.wait_s, 3)});
  }
  const std::vector<std::string> header{"start_utc", "run", "application", "nodes", "run_time_s", "lost_%", "slow",
                                        "wait_s"};
  print_table(header, header, rows, false);
}

void run_export(const FleetQueryOptions& options) {
  std::string journal;
  const fleet::FleetStore store = open_store(options, journal);
  try {
    for (const std::string& file : store.export_csv(options.directory)) std::cout << file << '\n';
  } catch (const std::exception& error) {
    throw CommandFailure(error.what(), Exit::output);
  }
}

void run_html(const FleetQueryOptions& options) {
  std::string journal;
  const fleet::FleetStore store = open_store(options, journal);
  const json view = fleet::fleet_view(ranking(store, options), store.node_days(since_day(options.since)));
  std::string page;
  try {
    page = analysis::render_html_view(view);
  } catch (const analysis::HtmlRendererFailure& failure) {
    throw CommandFailure(std::string("no fleet page: ") + failure.what(),
                         failure.renderer_missing() ? Exit::missing_program : Exit::internal);
  }
  write_output_file(options.output, page, fleet::kFleetHtmlMarker, {});
}

void add_database(CLI::App* command, FleetQueryOptions& options) {
  command->add_option("--db", options.database, "Database file (default: $TREMOR_FLEET_DB, else tremor-fleet.db)");
}

void add_format(CLI::App* command, FleetQueryOptions& options) {
  CLI::Option* csv = command->add_flag("--csv", options.csv, "Comma-separated values with a header row");
  command->add_flag("--json", options.json, "A JSON array")->excludes(csv);
}

void add_window(CLI::App* command, FleetQueryOptions& options) {
  command->add_option("--since", options.since, "Only runs started since: 30d, 12h, 2w or a date (whole UTC days)");
  command->add_option("--min-runs", options.min_runs,
                      "Only nodes used by at least N runs (default 1; with --suggest-drain 5)");
}

}  // namespace

void register_fleet_queries(CLI::App* fleet) {
  auto options = std::make_shared<FleetQueryOptions>();
  CLI::App* nodes = fleet->add_subcommand("nodes", "Rank the nodes by how often the others waited for them");
  add_database(nodes, *options);
  add_format(nodes, *options);
  add_window(nodes, *options);
  nodes->add_flag("--suggest-drain", options->suggest_drain,
                  "Print (never run) an scontrol drain line for each node scoring above --threshold");
  // A score is a share less a share: within [-1, 1].
  add_real_option(nodes, "--threshold", [options](double value) { options->threshold = value; },
                  "Score above which --suggest-drain names a node (default 0.1)", RealRange{-1.0, 1.0});
  nodes->callback([options, nodes] {
    if (options->suggest_drain && nodes->count("--min-runs") == 0) options->min_runs = kDrainMinRuns;
    run_nodes(*options);
  });
  CLI::App* runs = fleet->add_subcommand("runs", "Lost % per application and day: median and interquartile range");
  add_database(runs, *options);
  add_format(runs, *options);
  runs->add_option("--app", options->application, "Only this application (the executable's file name)");
  runs->callback([options] { run_runs(*options); });
  CLI::App* show = fleet->add_subcommand("show", "The runs that used one node");
  show->add_option("node", options->node, "Host name")->required();
  add_database(show, *options);
  show->add_flag("--json", options->json, "A JSON array");
  show->callback([options] { run_show(*options); });
  CLI::App* export_command = fleet->add_subcommand("export", "Every table as CSV, to load into another database");
  export_command->add_option("--csv", options->directory, "Directory for the CSV files (one per table)")->required();
  add_database(export_command, *options);
  export_command->callback([options] { run_export(*options); });
  CLI::App* html = fleet->add_subcommand("html", "A page with the node-by-day heat map of lost time and the ranking");
  html->add_option("-o,--output", options->output, "HTML file to write")->required();
  add_database(html, *options);
  add_window(html, *options);
  html->callback([options] { run_html(*options); });
}

}  // namespace tremor::cli
