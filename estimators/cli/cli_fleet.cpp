// `tremor fleet index PATH... [--db FILE] [--strict]`: JSON reports and run
// files, directories searched recursively, into the fleet database. A run
// file is analysed (in a reader child, as `tremor analyze --json` does) only
// when no report of it is indexed: its report is the fast path.
#include "cli_fleet.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string_view>

#include "commands.hpp"
#include "reader_process.hpp"
#include "tremor/analysis/report.hpp"
#include "tremor/fleet/store.hpp"
#include "tremor/json_text.hpp"

namespace tremor::cli {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr std::uintmax_t kMaxReportBytes = std::uintmax_t{64} << 20;
// What the reader child writes instead of a report when it cannot read the run file.
constexpr std::string_view kUnreadable = "unreadable: ";
constexpr std::size_t kBatchRuns = 2000;              // runs per transaction, at most
constexpr auto kBatchTime = std::chrono::seconds(1);  // and held at most this long: other writers wait

struct IndexOptions {
  std::vector<std::string> paths;
  std::string database;
  bool strict = false;
};

struct InputFiles {
  std::vector<fs::path> reports, run_files;
};

void add_input(const fs::path& path, InputFiles& files) {
  if (path.extension() == ".json") files.reports.push_back(path);
  if (path.extension() == ".h5") files.run_files.push_back(path);
}

InputFiles input_files(const std::vector<std::string>& paths) {
  InputFiles files;
  for (const std::string& name : paths) {
    std::error_code error;
    if (fs::is_directory(name, error)) {
      for (auto it = fs::recursive_directory_iterator(name, fs::directory_options::skip_permission_denied, error);
           !error && it != fs::recursive_directory_iterator(); it.increment(error)) {
        if (it->is_regular_file(error)) add_input(it->path(), files);
      }
    } else if (fs::exists(name, error)) {
      if (fs::path(name).extension() != ".json" && fs::path(name).extension() != ".h5") {
        files.reports.push_back(name);  // named outright: read as a report, refused if it is none
      } else {
        add_input(name, files);
      }
    } else {
      throw CommandFailure(name + ": no such file or directory", Exit::bad_input);
    }
  }
  std::ranges::sort(files.reports);
  std::ranges::sort(files.run_files);
  return files;
}

// The report of a JSON file, or why it cannot be indexed.
fleet::ParsedReport read_report(const fs::path& path) {
  std::error_code error;
  const std::uintmax_t size = fs::file_size(path, error);
  if (error) return {std::nullopt, "cannot read: " + error.message()};
  if (size > kMaxReportBytes) return {std::nullopt, "larger than 64 MiB: not a Tremor report"};
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  const nlohmann::json report = nlohmann::json::parse(text.str(), nullptr, false);
  if (report.is_discarded()) return {std::nullopt, "damaged: not valid JSON"};
  return fleet::parse_report(report);
}

// The report of a run file, made in a reader child as `tremor analyze --json` makes it.
fleet::ParsedReport analyse_run_file(const fs::path& path) {
  char name[] = "/tmp/tremor-fleet-XXXXXX";
  const int descriptor = mkstemp(name);
  if (descriptor < 0) return {std::nullopt, "cannot create a temporary file"};
  close(descriptor);
  fleet::ParsedReport parsed;
  try {
    run_in_reader_process(path.string(), read_time_limit(path.string(), 0), "the analysis", [&](int read_done) {
      std::string error;
      const std::optional<RunData> run =
          read_run_within(path.string(), read_time_limit(path.string(), 0), read_done, error);
      if (!run) {  // said on the skipped line, not as an error of the command
        std::ofstream(name) << kUnreadable << error;
        return;
      }
      const analysis::AnalysisParameters parameters =
          analysis::parameters_from_stored_configuration(run->meta.configuration, {}, nullptr);
      const analysis::RunAnalysis result = analysis::analyze_run(*run, parameters);
      std::ofstream(name) << json_text(analysis::report_json(*run, result, path.string()), -1);
    });
    std::ifstream in(name);
    const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    const nlohmann::json report = nlohmann::json::parse(text, nullptr, false);
    if (text.starts_with(kUnreadable)) {
      parsed = {std::nullopt, "not a readable Tremor run file: " + text.substr(kUnreadable.size())};
    } else {
      parsed = report.is_discarded() ? fleet::ParsedReport{std::nullopt, "the analysis wrote no report"}
                                     : fleet::parse_report(report);
    }
  } catch (const CommandFailure& failure) {
    parsed = {std::nullopt, std::string("damaged or not a run file") + (*failure.what() ? ": " : "") + failure.what()};
  }
  std::remove(name);
  return parsed;
}

// Progress on stderr: every second on a terminal, else every 10 % of the files.
class Progress {
 public:
  explicit Progress(std::size_t total) : total_(total), terminal_(isatty(STDERR_FILENO) != 0) {}
  void update(std::size_t done, std::size_t runs) {
    const Clock::time_point now = Clock::now();
    const bool due = terminal_ ? now - shown_ >= std::chrono::seconds(1) : done * 10 / total_ > step_;
    if (!due || total_ < 100) return;
    shown_ = now;
    step_ = done * 10 / total_;
    std::cerr << "tremor fleet: " << done << " of " << total_ << " files, " << runs << " runs"
              << (terminal_ ? "\r" : "\n");
    std::cerr.flush();
  }
  void finish() const {
    if (terminal_ && total_ >= 100) std::cerr << '\n';
  }

 private:
  std::size_t total_;
  bool terminal_;
  std::size_t step_ = 0;
  Clock::time_point shown_ = Clock::now();
};

class Indexer {
 public:
  Indexer(fleet::FleetStore& store, bool strict) : store_(store), strict_(strict) {}
  void add(const fs::path& path, fleet::ParsedReport parsed) {
    if (!parsed.record) return skip(path, parsed.problem);
    parsed.record->source = path.string();
    if (!open_) {
      store_.begin();
      open_ = true;
      opened_ = Clock::now();
      in_batch_ = 0;
    }
    try {
      store_.put_run(*parsed.record);
    } catch (const fleet::FleetError& error) {
      return skip(path, std::string("not stored: ") + error.what());
    }
    ++runs_;
    if (++in_batch_ >= kBatchRuns || Clock::now() - opened_ >= kBatchTime) commit();
  }
  void commit() {
    if (open_) store_.commit();
    open_ = false;
  }
  std::size_t runs() const { return runs_; }
  std::size_t skipped() const { return skipped_; }

 private:
  void skip(const fs::path& path, const std::string& why) {
    std::cerr << "tremor fleet: skipped " << path.string() << ": " << why << '\n';
    ++skipped_;
    if (!strict_) return;
    commit();  // the runs before it are whole; --strict stops here
    throw CommandFailure("--strict: " + path.string() + " could not be indexed", Exit::bad_input);
  }
  fleet::FleetStore& store_;
  bool strict_;
  bool open_ = false;
  Clock::time_point opened_;
  std::size_t in_batch_ = 0, runs_ = 0, skipped_ = 0;
};

void run_index(const IndexOptions& options) {
  const InputFiles files = input_files(options.paths);
  const std::string database = options.database.empty() ? default_fleet_database() : options.database;
  std::string journal;
  try {
    fleet::FleetStore store(database, journal);
    Indexer indexer(store, options.strict);
    Progress progress(files.reports.size() + files.run_files.size());
    std::size_t done = 0, duplicates = 0;
    for (const fs::path& report : files.reports) {
      indexer.add(report, read_report(report));
      progress.update(++done, indexer.runs());
    }
    indexer.commit();
    for (const fs::path& run_file : files.run_files) {
      if (store.has_run_file(run_file.filename().string())) {
        ++duplicates;  // its report is indexed: the same run, not analysed again
      } else {
        indexer.add(run_file, analyse_run_file(run_file));
        indexer.commit();
      }
      progress.update(++done, indexer.runs());
    }
    progress.finish();
    std::cerr << "tremor fleet: " << indexer.runs() << " runs indexed into " << database << " (" << journal << "); "
              << indexer.skipped() << " files skipped, " << duplicates
              << " run files already indexed from their reports\n";
  } catch (const fleet::FleetError& error) {
    throw CommandFailure(error.what(), Exit::output);
  }
}

}  // namespace

std::string default_fleet_database() {
  const char* set = std::getenv("TREMOR_FLEET_DB");
  return set && *set ? set : "tremor-fleet.db";
}

void register_fleet(CLI::App& app) {
  CLI::App* fleet =
      app.add_subcommand("fleet", "Index many runs into one database and rank the nodes that slow jobs down");
  fleet->require_subcommand(1);
  auto options = std::make_shared<IndexOptions>();
  CLI::App* index = fleet->add_subcommand("index", "Index JSON reports and run files (directories recursively)");
  index->add_option("paths", options->paths, "JSON reports, run files (.h5) or directories")->required();
  index->add_option("--db", options->database, "Database file (default: $TREMOR_FLEET_DB, else tremor-fleet.db)");
  index->add_flag("--strict", options->strict, "A damaged or foreign file is fatal (exit 2) instead of skipped");
  index->callback([options] { run_index(*options); });
  register_fleet_queries(fleet);
}

}  // namespace tremor::cli
