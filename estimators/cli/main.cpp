// `tremor`: offline command-line tool. Subcommands register themselves from
// their own source files; add a command by adding one line to the list below.
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
#endif
};
// clang-format on
}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Tremor: interference estimation for MPI runs"};
  app.set_version_flag("--version", std::string("tremor ") + TREMOR_VERSION);
  app.require_subcommand(1);
  for (const Registration register_command : kCommandRegistrations) register_command(app);
  try {
    // Everything after `plot` is tremor-plot's, `--` included (CLI11 would consume it).
    if (argc >= 2 && std::string_view(argv[1]) == tremor::cli::kPlotCommand) {
      tremor::cli::run_plot(std::vector<std::string>(argv + 2, argv + argc));
    }
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    return app.exit(error);
  } catch (const tremor::cli::CommandFailure& failure) {
    if (*failure.what() != '\0') std::cerr << "tremor: error: " << failure.what() << '\n';
    return failure.exit_code();
  } catch (const std::exception& error) {
    std::cerr << "tremor: internal error: " << error.what() << '\n';
    return 70;
  }
  return 0;
}
