// `tremor`: offline command-line tool. Subcommands register themselves from
// their own source files; add a command by adding one line to the list below.
#include <algorithm>
#include <array>
#include <exception>
#include <iostream>
#include <string>
#include <string_view>
#include <vector>

#include "commands.hpp"

namespace {
using Registration = void (*)(CLI::App&);
// One line per command (clang-format would pack them).
// clang-format off
constexpr Registration kCommandRegistrations[] = {
    &tremor::cli::register_fit,
    &tremor::cli::register_predict,
    &tremor::cli::register_plot,
#ifdef TREMOR_WITH_ANALYSIS  // set by estimators/analysis when segments is built
    &tremor::cli::register_analyze,
    &tremor::cli::register_config,
    &tremor::cli::register_compare,
    &tremor::cli::register_export,
    &tremor::cli::register_watch,
    &tremor::cli::register_fleet,
#endif
};
// clang-format on

// `tremor --help` ends with the exit statuses, from their table.
std::string exit_status_footer() {
  std::string text = "Exit status (every command):";
  for (const tremor::cli::ExitCodeInfo& info : tremor::cli::kExitCodes) {
    const std::string number = std::to_string(tremor::cli::status(info.code));
    text += "\n  " + std::string(3 - std::min<std::size_t>(3, number.size()), ' ') + number + "  " +
            std::string(info.meaning);
  }
  return text;
}
}  // namespace

int main(int argc, char** argv) {
  using tremor::cli::Exit;
  CLI::App app{"Tremor: interference estimation for MPI runs"};
  app.set_version_flag("--version", std::string("tremor ") + TREMOR_VERSION);
  app.footer(exit_status_footer());
  app.require_subcommand(1);
  for (const Registration register_command : kCommandRegistrations) register_command(app);
  try {
    // Everything after `plot` is tremor-plot's, `--` included (CLI11 would consume it).
    if (argc >= 2 && std::string_view(argv[1]) == tremor::cli::kPlotCommand) {
      tremor::cli::run_plot(std::vector<std::string>(argv + 2, argv + argc));
    }
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    // --help and --version are "errors" with status 0; every other one is a usage error.
    return app.exit(error) == 0 ? status(Exit::ok) : status(Exit::usage);
  } catch (const tremor::cli::CommandFailure& failure) {
    if (*failure.what() != '\0') std::cerr << "tremor: error: " << failure.what() << '\n';
    return failure.exit_code();
  } catch (const std::exception& error) {
    std::cerr << "tremor: internal error: " << error.what() << '\n';
    return status(Exit::internal);
  }
  return status(Exit::ok);
}
