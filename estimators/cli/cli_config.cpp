// `tremor config`: every TREMOR_* setting with its default and meaning, from
// the profiler's configuration table and the injector's settings table.
// `--markdown profiler|injector|exit-codes` prints one table as the README's
// Markdown (scripts/update-generated-docs.sh pastes it between the README's
// markers); exit-codes is the commands' exit statuses (exit_codes.hpp).
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "commands.hpp"
#include "tremor/config.hpp"
#include "tremor/inject_settings.hpp"

namespace tremor::cli {
namespace {

struct SettingRow {
  std::string_view name;
  std::string default_value;
  std::string_view meaning;
};

std::vector<SettingRow> profiler_rows() {
  std::vector<SettingRow> rows;
  for (const Setting& setting : settings()) rows.push_back({setting.name, default_text(setting), setting.meaning});
  return rows;
}

std::vector<SettingRow> injector_rows() {
  std::vector<SettingRow> rows;
  for (const inject::SettingInfo& setting : inject::kSettings) {
    rows.push_back({setting.name, std::string(setting.default_value), setting.meaning});
  }
  return rows;
}

void print_plain(const std::vector<SettingRow>& rows) {
  for (const SettingRow& row : rows) {
    std::cout << row.name << " (default: '" << row.default_value << "')\n    " << row.meaning << '\n';
  }
}

// A table cell: a '|' would end the cell, a line break the row.
std::string markdown_cell(std::string_view text) {
  std::string cell;
  for (const char c : text) {
    if (c == '|')
      cell += "\\|";
    else if (c == '\n')
      cell += ' ';
    else
      cell += c;
  }
  return cell;
}

void print_markdown(const std::vector<SettingRow>& rows) {
  std::cout << "| variable | default | meaning |\n|---|---|---|\n";
  for (const SettingRow& row : rows) {
    const std::string default_cell =
        row.default_value.empty() ? "*(empty)*" : "`" + markdown_cell(row.default_value) + "`";
    std::cout << "| `" << row.name << "` | " << default_cell << " | " << markdown_cell(row.meaning) << " |\n";
  }
}

void print_exit_codes_markdown() {
  std::cout << "| status | meaning |\n|---|---|\n";
  for (const ExitCodeInfo& info : kExitCodes) {
    std::cout << "| " << status(info.code) << " | " << markdown_cell(info.meaning) << " |\n";
  }
}

void run_config(const std::string& markdown) {
  if (markdown == "exit-codes") {
    print_exit_codes_markdown();
    return;
  }
  if (markdown == "profiler") {
    print_markdown(profiler_rows());
    return;
  }
  if (markdown == "injector") {
    print_markdown(injector_rows());
    return;
  }
  std::cout << "Profiler settings (environment variables, or NAME=VALUE lines in the file named by "
               "TREMOR_CONFIG):\n";
  print_plain(profiler_rows());
  std::cout << "\nInjector settings (libtremor-inject):\n";
  print_plain(injector_rows());
}

}  // namespace

void register_config(CLI::App& app) {
  CLI::App* command = app.add_subcommand("config", "List every TREMOR_* setting with its default and meaning");
  auto markdown = std::make_shared<std::string>();
  command
      ->add_option("--markdown", *markdown,
                   "Print one table as Markdown, as in the README: a settings table (| variable | default | "
                   "meaning |) or the commands' exit statuses")
      ->check(CLI::IsMember({"profiler", "injector", "exit-codes"}));
  command->callback([markdown] { run_config(*markdown); });
}

}  // namespace tremor::cli
