// The output interface: a formatter is one named entry {name, file suffix,
// render} in a registry, and a comma-separated list of names (TREMOR_REPORT,
// `tremor analyze --format`, `tremor compare --format`) picks entries from it.
// Adding an output format is one entry in a registry and one test
// (test/analysis/test_report_formats.cpp checks every entry).
#pragma once
#include <algorithm>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tremor::analysis {

template <typename Input>
struct Formatter {
  std::string_view name;    // as listed in TREMOR_REPORT / --format
  std::string_view suffix;  // of a file holding this form, e.g. ".json"
  std::string (*render)(const Input& input);
};

// The formatters a list names, in its order, each once. "both" stands for
// "text,json" and "none" for nothing (the values TREMOR_REPORT took first).
template <typename Input>
struct FormatChoice {
  std::vector<const Formatter<Input>*> formatters;
  std::string problem;  // empty, or why the list was refused (formatters then holds the default)
};

// The registry's names, comma-separated, for messages and help texts.
template <typename Input>
std::string format_names(std::span<const Formatter<Input>> registry) {
  std::string names;
  for (const Formatter<Input>& entry : registry) names += (names.empty() ? "" : ", ") + std::string(entry.name);
  return names;
}

namespace detail {
// The items of a comma-separated list, blanks around them removed, empty ones left out.
std::vector<std::string_view> split_format_list(std::string_view list);
}  // namespace detail

// The registry's entry called `name`, or null.
template <typename Input>
const Formatter<Input>* find_format(std::span<const Formatter<Input>> registry, std::string_view name) {
  for (const Formatter<Input>& entry : registry) {
    if (entry.name == name) return &entry;
  }
  return nullptr;
}

// The formatters `list` names. A list naming an unknown format, or no format
// at all, gets one message in `problem` and the registry's first entry (the
// safe default), so a bad setting never costs the run its report.
template <typename Input>
FormatChoice<Input> choose_formats(std::span<const Formatter<Input>> registry, std::string_view list) {
  FormatChoice<Input> choice;
  const auto add = [&](std::string_view name) {
    const Formatter<Input>* entry = find_format(registry, name);
    const auto& chosen = choice.formatters;
    if (entry && std::find(chosen.begin(), chosen.end(), entry) == chosen.end()) choice.formatters.push_back(entry);
    return entry != nullptr;
  };
  const std::vector<std::string_view> items = detail::split_format_list(list);
  for (const std::string_view item : items) {
    const bool known = item == "none" || (item == "both" ? add("text") && add("json") : add(item));
    if (!known) {
      choice.problem = "names an unknown format '" + std::string(item.substr(0, 40)) + "'";
      break;
    }
  }
  if (items.empty()) choice.problem = "names no format";
  if (!choice.problem.empty()) {
    choice.problem += " (known: " + format_names(registry) + "; both = text,json; none)";
    choice.formatters = {&registry.front()};
  }
  return choice;
}

}  // namespace tremor::analysis
