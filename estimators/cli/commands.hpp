// Subcommands of the `tremor` tool. Each lives in its own cli_<name>.cpp and
// is added to kCommandRegistrations in main.cpp (one line per command).
#pragma once

#include <CLI/CLI.hpp>
#include <exception>
#include <filesystem>
#include <iostream>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#if TREMOR_WITH_ANALYSIS
#include "tremor/analysis/parameters.hpp"
#include "tremor/run_data.hpp"
#endif
#include "exit_codes.hpp"

namespace tremor::cli {

/// Thrown by a command on unusable input or output; main prints it on stderr
/// and exits with `exit_code` (exit_codes.hpp), so no command ever prints a NaN
/// or crashes. An empty message means the reason was already printed (by the
/// reader process of `tremor analyze` or `compare`).
class CommandFailure : public std::runtime_error {
 public:
  CommandFailure(const std::string& message, Exit exit_code) : std::runtime_error(message), exit_code_(exit_code) {}
  [[nodiscard]] int exit_code() const { return status(exit_code_); }

 private:
  Exit exit_code_;
};

/// Runs a command's body (in the reader child process) and turns its failure
/// into the exit code, printing why on stderr.
template <typename Body>
int exit_code_of(Body&& body) {
  try {
    body();
  } catch (const CommandFailure& failure) {
    std::cerr << "tremor: error: " << failure.what() << '\n';
    return failure.exit_code();
  } catch (const std::exception& error) {
    std::cerr << "tremor: internal error: " << error.what() << '\n';
    return status(Exit::internal);
  }
  return status(Exit::ok);
}

#if TREMOR_WITH_ANALYSIS
struct RecoveredInput {
  RunData run;                                 // meta.partial set
  std::optional<std::filesystem::path> saved;  // the new run file, if it could be written
};
// Reads one run's spill files (stems or .spill paths), merges them and saves
// the result as a new run file in output_dir (default: the spills' directory).
// Throws CommandFailure (Exit::bad_input) on unusable files.
RecoveredInput recover_from_spills(const std::vector<std::string>& names, const std::string& output_dir);
#endif

void register_fit(CLI::App& app);
void register_predict(CLI::App& app);
void register_plot(CLI::App& app);
// `tremor plot ARGS`: replaces this process with tremor-plot ARGS; throws
// CommandFailure (Exit::missing_program) if tremor-plot cannot be found or run.
inline constexpr const char* kPlotCommand = "plot";
[[noreturn]] void run_plot(const std::vector<std::string>& arguments);
void register_analyze(CLI::App& app);
#if TREMOR_WITH_ANALYSIS
// --mad-factor, --cluster-threshold, --min-group, --scales, --replicas, --seed
// of analyze and compare (strict values: option_values.hpp).
void add_analysis_overrides(CLI::App* command, analysis::ParameterOverrides& overrides);
#endif
void register_config(CLI::App& app);
void register_compare(CLI::App& app);
// `tremor export`: a run as a Chrome trace (docs/trace.md).
void register_export(CLI::App& app);
// `tremor watch`: a running job followed through its spill files (cli_watch.cpp).
void register_watch(CLI::App& app);
// `tremor fleet`: many runs in one database; the nodes that slow jobs down (cli_fleet.cpp).
void register_fleet(CLI::App& app);

}  // namespace tremor::cli
