// `tremor analyze FILE.h5 [--mad-factor X --cluster-threshold X --min-group N
//   --scales 2,4,8 --replicas N --seed S --method primary|mad4 --bins N] [--json | --full] [--fail-on medium|high]`
// `tremor analyze --recover STEM|FILE.spill... [--output-dir DIR] [...]`
// Reads a run file, analyses it with the stored effective configuration
// (command-line values override it) and prints the same report as the
// profiler prints at MPI_Finalize. With --recover (or .spill arguments) the
// run is rebuilt from crash-recovery spill files, saved as a new run file
// marked partial, and the report says PARTIAL. --check only reads and
// validates the file. Exit codes (exit_codes.hpp): bad_input for unreadable or
// invalid run or spill files, gate when the class reached --fail-on.
// The file is read and analysed in a child process (reader_process.hpp).
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <memory>
#include <stdexcept>

#include "commands.hpp"
#include "option_values.hpp"
#include "reader_process.hpp"
#include "tremor/analysis/report.hpp"
#include "tremor/config.hpp"
#include "tremor/program_merge.hpp"
#include "tremor/run_file.hpp"
#include "tremor/spill.hpp"

namespace tremor::cli {
namespace {

struct AnalyzeCommandOptions {
  std::vector<std::string> paths;
  bool recover = false;
  std::string output_dir;
  analysis::ParameterOverrides overrides;
  bool json = false;            // --json: --format json
  std::string format = "text";  // --format: report formats, comma-separated
  bool full = false;            // --full: every table of the text report
  bool check_only = false;
  std::string fail_on;
  unsigned read_timeout_s = 0;  // 0: 60 s + 1 s per MiB of file
  std::size_t paper_bins = 0;   // 0: the file's log codes as they are
};

unsigned read_time_limit(const AnalyzeCommandOptions& options) {
  return cli::read_time_limit(options.paths.empty() ? std::string() : options.paths.front(), options.read_timeout_s);
}

// The run file a JSON report (written beside it at the end of a run) was
// made from: its "output_file", found as written or beside the report, else
// the .h5 of the same stem; empty if none exists.
std::string run_file_of_report(const std::filesystem::path& report) {
  namespace fs = std::filesystem;
  std::vector<fs::path> candidates;
  std::error_code error;
  if (fs::file_size(report, error) <= (std::uintmax_t{64} << 20) && !error) {
    std::ifstream in(report);
    const nlohmann::json parsed = nlohmann::json::parse(in, nullptr, false);
    if (parsed.is_object() && parsed.contains("output_file") && parsed["output_file"].is_string()) {
      const fs::path written = parsed["output_file"].get<std::string>();
      if (!written.empty()) candidates.insert(candidates.end(), {written, report.parent_path() / written.filename()});
    }
  }
  candidates.push_back(fs::path(report).replace_extension(".h5"));
  for (const fs::path& candidate : candidates) {
    if (fs::is_regular_file(candidate, error)) return candidate.string();
  }
  return {};
}

// `tremor analyze run.json`: the JSON report is not the run file; name the .h5 to analyse.
void refuse_json_report(const std::string& path) {
  if (!path.ends_with(".json")) return;
  const std::string run_file = run_file_of_report(path);
  throw CommandFailure(path + " is a JSON report, not a run file; " +
                           (run_file.empty() ? std::string("analyse the .h5 run file written with it")
                                             : "analyse its run file: tremor analyze " + run_file),
                       Exit::bad_input);
}

int severity(estimators::InterferenceClass interference_class) {
  switch (interference_class) {
    case estimators::InterferenceClass::low:
      return 0;
    case estimators::InterferenceClass::medium:
      return 1;
    case estimators::InterferenceClass::high:
      return 2;
  }
  return 0;
}

bool names_spill(const std::vector<std::string>& paths) {
  for (const std::string& path : paths) {
    if (path.ends_with(kSpillExtension)) return true;
  }
  return false;
}

// --full, else TREMOR_REPORT_DETAIL as the profiler reads it (a bad value:
// one note, the default).
ReportDetail report_detail(const AnalyzeCommandOptions& options) {
  if (options.full) return ReportDetail::full_report;
  Config config;
  const Setting* setting = find_setting("TREMOR_REPORT_DETAIL");
  const std::optional<std::string> value = process_environment()("TREMOR_REPORT_DETAIL");
  if (setting && value) {
    if (const auto error = setting->parse(*value, config)) {
      std::cerr << "tremor: note: TREMOR_REPORT_DETAIL='" << value->substr(0, 80) << "' " << *error << "; using the default '"
                << default_text(*setting) << "'\n";
    }
  }
  return config.report_detail;
}

// The whole command, run in the child; `read_done` gets one byte once the input is read.
void analyze_in_child(const AnalyzeCommandOptions& options, int read_done) {
  std::string error;
  std::optional<RunData> run;
  std::string shown_path;
  if (options.recover || names_spill(options.paths)) {
    RecoveredInput recovered = recover_from_spills(options.paths, options.output_dir);
    run = std::move(recovered.run);
    if (recovered.saved) shown_path = recovered.saved->string();
    signal_read_done(read_done);
  } else {
    if (options.paths.size() != 1) {
      throw CommandFailure("give one run file (or --recover with spill files)", Exit::usage);
    }
    shown_path = options.paths.front();
    refuse_json_report(shown_path);
    run = read_run_within(shown_path, read_time_limit(options), read_done, error);
  }
  if (!run) throw CommandFailure(shown_path + ": not a readable Tremor run file: " + error, Exit::bad_input);
  if (options.check_only) return;
  if (options.paper_bins > 0) coarsen_to_paper_bins(*run, options.paper_bins);
  std::vector<std::string> messages;
  const analysis::AnalysisParameters parameters =
      analysis::parameters_from_stored_configuration(run->meta.configuration, options.overrides, &messages);
  for (const std::string& message : messages) std::cerr << "tremor: note: " << message << '\n';
  const analysis::RunAnalysis result = analysis::analyze_run(*run, parameters);
  const auto chosen = analysis::choose_formats(analysis::report_formatters(), options.json ? "json" : options.format);
  const bool text = std::ranges::any_of(chosen.formatters, [](const auto* f) { return f->name == "text"; });
  const analysis::ReportInput input{*run, result, shown_path, text ? report_detail(options) : ReportDetail{},
                                    analysis::report_json(*run, result, shown_path)};
  if (run->meta.partial && !shown_path.empty()) {  // the recovered file gets its /analysis too
    std::optional<RunFileAppender> appender = RunFileAppender::open(shown_path, error);
    if (!appender || !analysis::write_analysis(*appender, result, input.json) || !appender->close()) {
      std::cerr << "tremor: warning: cannot add /analysis to " << shown_path << ": "
                << (appender ? appender->error() : error) << '\n';
    }
  }
  for (const analysis::ReportFormatter* formatter : chosen.formatters) std::cout << formatter->render(input);
  std::cout.flush();
  if (!options.fail_on.empty() && result.estimate_possible) {
    const int limit = options.fail_on == "high" ? 2 : 1;
    if (severity(result.interference_class) >= limit) {
      throw CommandFailure("interference class " + std::string(estimators::to_string(result.interference_class)) +
                               " reached --fail-on " + options.fail_on,
                           Exit::gate);
    }
  }
}

std::string shown_input(const AnalyzeCommandOptions& options) {
  return options.paths.empty() ? std::string("the input") : options.paths.front();
}

void run_analyze(const AnalyzeCommandOptions& options) {
  if (options.check_only && (options.recover || names_spill(options.paths))) {
    throw CommandFailure("--check reads one run file, not spill files", Exit::usage);
  }
  run_in_reader_process(shown_input(options), read_time_limit(options), "the analysis",
                        [&](int read_done) { analyze_in_child(options, read_done); });
}

}  // namespace

void register_analyze(CLI::App& app) {
  auto options = std::make_shared<AnalyzeCommandOptions>();
  CLI::App* command =
      app.add_subcommand("analyze", "Analyse a Tremor run file (.h5) and print the interference report");
  command
      ->add_option("files", options->paths,
                   "Run file written by the profiler; with --recover, spill files or their common stem")
      ->required();
  command->add_flag("--recover", options->recover,
                    "Rebuild a run that ended without MPI_Finalize from its spill files (<stem>.r<rank>.spill)");
  command->add_option("--output-dir", options->output_dir,
                      "Where --recover saves the recovered run file (default: the spill files' directory)");
  command->add_flag("--check", options->check_only,
                    "Only read and validate the run file: no output, exit 0 if it is a valid run file (tremor-plot "
                    "checks its input this way)");
  add_analysis_overrides(command, options->overrides);
  command
      ->add_option_function<std::string>(
          "--method", [options](const std::string& v) { options->overrides.method = v; },
          "Headline estimate: primary (lost time against the intrinsic duration, default) or mad4 (the paper's "
          "median + 4 MAD rule); both are always reported")
      ->check(CLI::IsMember({"primary", "mad4"}));
  add_whole_option(
      command, "--bins", [options](std::uint64_t v) { options->paper_bins = static_cast<std::size_t>(v); },
      "Merge each metric's values into N program-wide bins first, as the paper does with 512 (default: the file's "
      "log codes, within 1/2048)",
      1, 65536);
  CLI::Option* json =
      command->add_flag("--json", options->json, "Print the JSON report instead of text (--format json)");
  command
      ->add_option("--format", options->format,
                   "Report formats to print, comma-separated, in order: " +
                       analysis::format_names(analysis::report_formatters()) + " (default: text)")
      ->check(
          [](const std::string& list) { return analysis::choose_formats(analysis::report_formatters(), list).problem; })
      ->excludes(json);
  command->add_flag("--full", options->full,
                    "Print the full text report: every table (groups, all methods, stragglers) and every warning "
                    "(default: TREMOR_REPORT_DETAIL, else a screenful)");
  command->add_option("--fail-on", options->fail_on, "Exit with status 3 when the class is at least this")
      ->check(CLI::IsMember({"medium", "high"}));
  add_whole_option(
      command, "--read-timeout", [options](std::uint64_t v) { options->read_timeout_s = static_cast<unsigned>(v); },
      "Give up reading the file after this many seconds (default: 60 + 1 per MiB)", 1, 86400);
  command->callback([options] { run_analyze(*options); });
}

namespace {

// The range of the setting an option overrides, from the configuration table.
RealRange setting_range(std::string_view name) {
  const Setting* setting = find_setting(name);
  if (!setting || !setting->range) throw std::logic_error(std::string(name) + " is not a numeric setting");
  return {setting->range->low, setting->range->high, setting->range->low_open};
}

void add_whole_setting_option(CLI::App* command, const std::string& option, std::function<void(std::uint64_t)> store,
                              const std::string& help, std::string_view setting) {
  const RealRange range = setting_range(setting);
  add_whole_option(command, option, std::move(store), help, static_cast<std::uint64_t>(range.low),
                   static_cast<std::uint64_t>(range.high));
}

}  // namespace

void add_analysis_overrides(CLI::App* command, analysis::ParameterOverrides& o) {
  add_real_option(command, "--mad-factor", [&o](double v) { o.mad_factor = v; },
                  "Interfered above median + X * MAD (default: stored TREMOR_MAD_FACTOR)",
                  setting_range("TREMOR_MAD_FACTOR"));
  add_real_option(command, "--cluster-threshold", [&o](double v) { o.cluster_threshold = v; },
                  "Relative work distance joining a cluster", setting_range("TREMOR_CLUSTER_THRESHOLD"));
  add_whole_setting_option(
      command, "--min-group", [&o](std::uint64_t v) { o.min_group = static_cast<int>(v); }, "Smallest usable group",
      "TREMOR_MIN_GROUP");
  add_real_list_option(
      command, "--scales", [&o](const std::vector<double>& v) { o.scales = v; },
      "Process-count factors of the predictions, e.g. 2,4,8", setting_range("TREMOR_SCALES"), kMaxScaleFactors);
  add_whole_setting_option(
      command, "--replicas", [&o](std::uint64_t v) { o.replicas = static_cast<int>(v); }, "Bootstrap replicas per prediction",
      "TREMOR_BOOTSTRAP_REPLICAS");
  add_whole_setting_option(
      command, "--threads", [&o](std::uint64_t v) { o.threads = static_cast<int>(v); },
      "Analysis threads, 0: the CPUs available, at most 8 (default: TREMOR_ANALYSIS_THREADS)", "TREMOR_ANALYSIS_THREADS");
  // TREMOR_SEED takes every unsigned 64-bit value.
  add_whole_option(
      command, "--seed", [&o](std::uint64_t v) { o.seed = v; }, "Seed of every random draw", 0,
      std::numeric_limits<std::uint64_t>::max());
}

}  // namespace tremor::cli
