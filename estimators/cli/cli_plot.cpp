// `tremor plot ARGS...`: the HTML/PNG report of a run file. The report is the
// Python program tremor-plot; like `git <command>` running git-<command>, this
// command only finds it and replaces itself with it, so ARGS, --help, output
// and exit code are tremor-plot's own.
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <string>
#include <system_error>
#include <vector>

#include "commands.hpp"

namespace tremor::cli {
namespace {

constexpr const char* kPlotProgram = "tremor-plot";

// The tremor-plot of the same install (same bin/) or build tree (the build puts
// a copy beside the tremor executable), so one build's tools go together.
std::filesystem::path plot_program_beside_this_executable() {
  std::error_code error;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
  if (error) return {};
  std::filesystem::path beside = self.parent_path() / kPlotProgram;
  if (!std::filesystem::is_regular_file(beside, error) || ::access(beside.c_str(), X_OK) != 0) return {};
  return beside;
}

}  // namespace

void run_plot(const std::vector<std::string>& arguments) {
  std::vector<char*> argv;
  argv.reserve(arguments.size() + 2);
  argv.push_back(const_cast<char*>(kPlotProgram));
  for (const std::string& argument : arguments) argv.push_back(const_cast<char*>(argument.c_str()));
  argv.push_back(nullptr);
  std::cout.flush();

  const std::filesystem::path beside = plot_program_beside_this_executable();
  if (!beside.empty()) {
    ::execv(beside.c_str(), argv.data());
  } else {
    ::execvp(kPlotProgram, argv.data());
  }
  const int exec_error = errno;  // exec returns only on failure
  if (exec_error == ENOENT) {
    throw CommandFailure(std::string(kPlotProgram) + " not found beside the tremor executable nor on PATH " +
                             "(install Tremor with its scripts, or put tremor-plot on PATH)",
                         Exit::missing_program);
  }
  throw CommandFailure(
      "cannot run " + (beside.empty() ? std::string(kPlotProgram) : beside.string()) + ": " + std::strerror(exec_error),
      Exit::missing_program);
}

void register_plot(CLI::App& app) {
  CLI::App* command = app.add_subcommand(
      kPlotCommand,
      "Render a run file as a self-contained HTML page and/or PNG charts (runs tremor-plot; see plot --help)");
  // Everything after `plot`, --help included, belongs to tremor-plot.
  command->set_help_flag();
  command->prefix_command();
  // main normally runs `tremor plot` before CLI11 sees it (CLI11 would eat a
  // `--`); this covers any other spelling CLI11 accepts.
  command->callback([command] { run_plot(command->remaining()); });
}

}  // namespace tremor::cli
