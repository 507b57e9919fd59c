// Subcommands of the `tremor` tool. Each lives in its own cli_<name>.cpp and
// is added to kCommandRegistrations in main.cpp (one line per command).
#pragma once

#include <CLI/CLI.hpp>
#include <stdexcept>
#include <string>

namespace tremor::cli {

/// Thrown by a command on unusable input; main prints it on stderr and exits
/// with `exit_code`, so no command ever prints a NaN or crashes. An empty
/// message means the reason was already printed (by `tremor analyze`'s reader process).
class CommandFailure : public std::runtime_error {
 public:
  explicit CommandFailure(const std::string& message, int exit_code = 1)
      : std::runtime_error(message), exit_code_(exit_code) {}
  [[nodiscard]] int exit_code() const { return exit_code_; }

 private:
  int exit_code_;
};

void register_fit(CLI::App& app);
void register_predict(CLI::App& app);
void register_analyze(CLI::App& app);
void register_config(CLI::App& app);

}  // namespace tremor::cli
