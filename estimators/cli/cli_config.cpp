// `tremor config`: every TREMOR_* setting with its default and meaning, from
// the configuration table itself (and the injector's table when present).
#include <iostream>
#include <string>

#include "commands.hpp"
#include "tremor/config.hpp"
#if __has_include("tremor/inject_config.hpp")
#include "tremor/inject_config.hpp"
#define TREMOR_HAVE_INJECT_CONFIG 1
#endif

namespace tremor::cli {
namespace {

void print_setting(std::string_view name, std::string_view default_value, std::string_view meaning) {
  std::cout << name << " (default: '" << default_value << "')\n    " << meaning << '\n';
}

void run_config() {
  std::cout << "Profiler settings (environment variables, or NAME=VALUE lines in the file named by "
               "TREMOR_CONFIG):\n";
  for (const Setting& setting : settings()) print_setting(setting.name, setting.default_value, setting.meaning);
#ifdef TREMOR_HAVE_INJECT_CONFIG
  std::cout << "\nInjector settings (libtremor-inject):\n";
  for (const inject::SettingInfo& setting : inject::kSettings) {
    print_setting(setting.name, setting.default_value, setting.meaning);
  }
#endif
}

}  // namespace

void register_config(CLI::App& app) {
  CLI::App* command = app.add_subcommand("config", "List every TREMOR_* setting with its default and meaning");
  command->callback(run_config);
}

}  // namespace tremor::cli
