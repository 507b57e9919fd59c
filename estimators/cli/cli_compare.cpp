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
// HDF5 can crash on corrupted files (see cli_analyze.cpp), so the work runs in
// a child process; a child killed by a signal is reported as an unreadable file.
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <memory>

#include "commands.hpp"
#include "option_values.hpp"
#include "output_file.hpp"
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

void compare_in_child(const CompareCommandOptions& options) {
  if (options.paths.size() < 2) {
    throw CommandFailure("give at least two run files to compare (the first is the reference)", Exit::usage);
  }
  std::vector<std::filesystem::path> inputs(options.paths.begin(), options.paths.end());
  if (!options.html_path.empty()) {  // refused before the long part, checked again at the write
    const std::string refusal = output_refusal(options.html_path, analysis::kCompareHtmlMarker, inputs);
    if (!refusal.empty()) throw CommandFailure("will not write " + options.html_path + ": " + refusal, Exit::output);
  }
  std::vector<RunData> runs;
  std::vector<analysis::RunAnalysis> analyses;
  runs.reserve(options.paths.size());
  analyses.reserve(options.paths.size());
  std::vector<analysis::ComparedRun> compared;
  for (const std::string& path : options.paths) {
    std::string error;
    std::optional<RunData> run = read_run(path, error);
    if (!run) throw CommandFailure(path + ": not a readable Tremor run file: " + error, Exit::bad_input);
    std::vector<std::string> messages;
    const analysis::AnalysisParameters parameters =
        analysis::parameters_from_stored_configuration(run->meta.configuration, options.overrides, &messages);
    for (const std::string& message : messages) std::cerr << "tremor: note: " << path << ": " << message << '\n';
    runs.push_back(std::move(*run));
    analyses.push_back(analysis::analyze_run(runs.back(), parameters));
    compared.push_back({std::filesystem::path(path).stem().string(), &runs.back(), &analyses.back()});
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
  std::cout.flush();
  std::cerr.flush();
  const pid_t child = fork();
  if (child < 0) {
    throw CommandFailure(std::string("cannot start the reader process: ") + std::strerror(errno), Exit::internal);
  }
  if (child == 0) {
    const int code = exit_code_of([&] { compare_in_child(options); });
    std::cout.flush();
    std::cerr.flush();
    _exit(code);
  }
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status)) {
    if (WEXITSTATUS(status) != 0) throw CommandFailure("", static_cast<Exit>(WEXITSTATUS(status)));  // said why
    return;
  }
  throw CommandFailure(std::string("reading or comparing the run files failed (") +
                           strsignal(WIFSIGNALED(status) ? WTERMSIG(status) : 0) + "); is one of them corrupted?",
                       Exit::bad_input);
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
