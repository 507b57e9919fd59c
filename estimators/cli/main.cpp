// `tremor`: offline command-line tool. Subcommands register themselves from
// their own source files; add a command by adding one line to the list below.
#include <array>
#include <exception>
#include <iostream>

#include "commands.hpp"

namespace {
using Registration = void (*)(CLI::App&);
constexpr Registration kCommandRegistrations[] = {
    &tremor::cli::register_fit,
    &tremor::cli::register_predict,
#ifdef TREMOR_WITH_ANALYSIS  // set by estimators/analysis when segments is built
    &tremor::cli::register_analyze,
    &tremor::cli::register_config,
#endif
};
}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Tremor: interference estimation for MPI runs"};
  app.set_version_flag("--version", std::string("tremor ") + TREMOR_VERSION);
  app.require_subcommand(1);
  for (const Registration register_command : kCommandRegistrations) register_command(app);
  try {
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
