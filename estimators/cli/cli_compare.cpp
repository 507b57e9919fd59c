// `tremor compare RUN.h5 RUN.h5 ... [--json | --format text,json,html] [--html FILE] [--tolerance PCT]
//   [--seed S --replicas N ...]`
// Reads and analyses each run file (stored configuration, command-line values
// override it) and compares every run with the first: run table, intrinsic
// segment time per group, node speed, environment differences, predictions of
// smaller runs against larger ones and a one-line verdict (none for runs of
// another program). Exit codes (exit_codes.hpp): usage for fewer than two
// files, bad_input for a file that is not a valid run file, output when the
// --html page may not or cannot be written.
//
// HDF5 can crash or hang on corrupted files, so the work runs in a reader
// process (reader_process.hpp): a child killed while reading, or reading past
// the files' time limit, is reported as an unreadable file.
#include <unistd.h>

#include <filesystem>
#include <iostream>
#include <memory>

#include "commands.hpp"
#include "option_values.hpp"
#include "output_file.hpp"
#include "reader_process.hpp"
#include "tremor/analysis/compare.hpp"
#include "tremor/analysis/html_view.hpp"
#include "tremor/run_file.hpp"

namespace tremor::cli {
namespace {

struct CompareCommandOptions {
  std::vector<std::string> paths;
  analysis::ParameterOverrides overrides;
  bool json = false;            // --json: --format json
  std::string format = "text";  // --format: formats to print, comma-separated
  std::string html_path;
  double tolerance_percent = analysis::kDefaultIntrinsicTolerancePercent;
};

// A formatter's text; the HTML page comes from tremor-plot (html_view.hpp), which may be missing.
std::string rendered(const analysis::CompareFormatter& formatter, const analysis::Comparison& comparison) {
  try {
    return formatter.render(comparison);
  } catch (const analysis::HtmlRendererFailure& failure) {
    throw CommandFailure(std::string("no ") + std::string(formatter.name) + " page: " + failure.what() +
                             (failure.renderer_missing() ? " (install Tremor with its scripts, or put tremor-plot on PATH)"
                                                         : ""),
                         failure.renderer_missing() ? Exit::missing_program : Exit::internal);
  }
}

// The read's time limit: each file's (reader_process.hpp), summed.
unsigned read_time_limit(const CompareCommandOptions& options) {
  unsigned limit_s = 0;
  for (const std::string& path : options.paths) limit_s += cli::read_time_limit(path, 0);
  return limit_s;
}

void compare_in_child(const CompareCommandOptions& options, int read_done) {
  std::vector<std::filesystem::path> inputs(options.paths.begin(), options.paths.end());
  if (!options.html_path.empty()) {  // refused before the long part, checked again at the write
    const std::string refusal = output_refusal(options.html_path, analysis::kCompareHtmlMarker, inputs);
    if (!refusal.empty()) throw CommandFailure("will not write " + options.html_path + ": " + refusal, Exit::output);
  }
  std::vector<RunData> runs;
  runs.reserve(options.paths.size());
  alarm(read_time_limit(options));  // SIGALRM ends a read that never returns
  for (const std::string& path : options.paths) {
    std::string error;
    std::optional<RunData> run = read_run(path, error);
    if (!run) throw CommandFailure(path + ": not a readable Tremor run file: " + error, Exit::bad_input);
    runs.push_back(std::move(*run));
  }
  alarm(0);
  signal_read_done(read_done);
  std::vector<analysis::RunAnalysis> analyses;
  analyses.reserve(runs.size());
  std::vector<analysis::ComparedRun> compared;
  for (std::size_t r = 0; r < runs.size(); ++r) {
    std::vector<std::string> messages;
    const analysis::AnalysisParameters parameters =
        analysis::parameters_from_stored_configuration(runs[r].meta.configuration, options.overrides, &messages);
    for (const std::string& message : messages) {
      std::cerr << "tremor: note: " << options.paths[r] << ": " << message << '\n';
    }
    analyses.push_back(analysis::analyze_run(runs[r], parameters));
    compared.push_back({std::filesystem::path(options.paths[r]).stem().string(), &runs[r], &analyses.back()});
  }
  analysis::Comparison comparison = analysis::compare_runs(compared, options.tolerance_percent);
  for (std::size_t r = 0; r < comparison.runs.size(); ++r) comparison.runs[r].file = options.paths[r];  // as given
  if (!options.html_path.empty()) {
    const analysis::CompareFormatter* html = analysis::find_format(analysis::compare_formatters(), "html");
    write_output_file(options.html_path, rendered(*html, comparison), analysis::kCompareHtmlMarker, inputs);
  }
  const auto chosen = analysis::choose_formats(analysis::compare_formatters(), options.json ? "json" : options.format);
  for (const analysis::CompareFormatter* formatter : chosen.formatters) std::cout << rendered(*formatter, comparison);
  std::cout.flush();
}

void run_compare(const CompareCommandOptions& options) {
  if (options.paths.size() < 2) {
    throw CommandFailure("give at least two run files to compare (the first is the reference)", Exit::usage);
  }
  std::string shown = options.paths.front();
  for (std::size_t r = 1; r < options.paths.size(); ++r) shown += " or " + options.paths[r];
  run_in_reader_process(shown, read_time_limit(options), "the comparison",
                        [&](int read_done) { compare_in_child(options, read_done); });
}

}  // namespace

void register_compare(CLI::App& app) {
  auto options = std::make_shared<CompareCommandOptions>();
  CLI::App* command = app.add_subcommand(
      "compare", "Compare Tremor run files: intrinsic run time, interference, node speed, environment");
  // Not ->required(): a missing or single file gets this command's own message (a usage error).
  command->add_option("files", options->paths, "Run files (.h5); the first is the reference");
  CLI::Option* json =
      command->add_flag("--json", options->json, "Print the comparison as JSON instead of text (--format json)");
  command
      ->add_option("--format", options->format,
                   "Formats to print, comma-separated, in order: " +
                       analysis::format_names(analysis::compare_formatters()) + " (default: text)")
      ->check([](const std::string& list) {
        return analysis::choose_formats(analysis::compare_formatters(), list).problem;
      })
      ->excludes(json);
  command
      ->add_option("--html", options->html_path,
                   "Also write a self-contained HTML page to FILE (replaces only a page compare wrote)")
      ->type_name("FILE");
  add_real_option(command, "--tolerance", [options](double v) { options->tolerance_percent = v; },
                  "Intrinsic run times closer than this many percent count as equal (run-to-run variation; default 5)",
                  {0.0, 100.0, false});
  add_analysis_overrides(command, options->overrides);
  command->callback([options] { run_compare(*options); });
}

}  // namespace tremor::cli
