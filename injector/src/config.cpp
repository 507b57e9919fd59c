// Parsing and validation of the TREMOR_INJECT_* settings (see inject_config.hpp).
#include "tremor/inject_config.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>

namespace tremor::inject {
namespace {

std::string_view trim(std::string_view text) {
  constexpr std::string_view kSpace = " \t\r\n";
  const auto first = text.find_first_not_of(kSpace);
  if (first == std::string_view::npos) return {};
  const auto last = text.find_last_not_of(kSpace);
  return text.substr(first, last - first + 1);
}

bool parse_double(std::string_view text, double& out) {
  text = trim(text);
  double value = 0.0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc{} || end != text.data() + text.size() || !std::isfinite(value)) return false;
  out = value;
  return true;
}

// A value as the message shows it: one line (control characters as '?'), at most 80 bytes.
std::string printable(std::string_view text) {
  std::string out;
  for (const char ch : text.substr(0, 80)) out += static_cast<unsigned char>(ch) < 0x20 ? '?' : ch;
  if (text.size() > 80) out += "...";
  return out;
}

bool parse_int(std::string_view text, long long& out) {
  text = trim(text);
  long long value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc{} || end != text.data() + text.size() || text.empty()) return false;
  out = value;
  return true;
}

}  // namespace

bool parse_nonnegative(std::string_view text, double max_value, double& out) {
  double value = 0.0;
  if (!parse_double(text, value) || value < 0.0 || value > max_value) return false;
  out = value;
  return true;
}

bool parse_probability(std::string_view text, double& out) { return parse_nonnegative(text, 1.0, out); }

bool parse_families(std::string_view text, unsigned& out) {
  unsigned mask = 0;
  while (true) {
    const auto comma = text.find(',');
    const auto item = trim(text.substr(0, comma));
    if (item == "p2p")
      mask |= p2p;
    else if (item == "coll")
      mask |= coll;
    else if (item == "rma")
      mask |= rma;
    else if (item == "mpiio")
      mask |= mpiio;
    else if (item == "posix")
      mask |= posix;
    else if (item == "all")
      mask |= kAllFamilies;
    else
      return false;  // also rejects empty items such as "p2p,,coll"
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  out = mask;
  return true;
}

bool parse_rank_selection(std::string_view text, int rank, bool& selected, long long* largest) {
  if (trim(text) == "all") {
    selected = true;
    if (largest != nullptr) *largest = -1;
    return true;
  }
  bool found = false;
  long long most = -1;
  while (true) {
    const auto comma = text.find(',');
    const auto item = trim(text.substr(0, comma));
    const auto dash = item.find('-', 1);  // position 0 would be a minus sign
    long long first = 0;
    long long last = 0;
    if (dash == std::string_view::npos) {
      if (!parse_int(item, first)) return false;
      last = first;
    } else if (!parse_int(item.substr(0, dash), first) || !parse_int(item.substr(dash + 1), last)) {
      return false;
    }
    if (first < 0 || last < first) return false;
    if (rank >= first && rank <= last) found = true;
    most = std::max(most, last);
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  selected = found;
  if (largest != nullptr) *largest = most;
  return true;
}

bool parse_seed(std::string_view text, std::uint64_t& out) {
  text = trim(text);
  std::uint64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc{} || end != text.data() + text.size() || text.empty()) return false;
  out = value;
  return true;
}

ParseResult parse_config(EnvLookup lookup, int rank, int world_size) {
  ParseResult result;
  Config& config = result.config;
  constexpr double kMaxDelayUs = 1e8;  // 100 s per call: anything longer is a typo

  for (std::size_t index = 0; index < kSettings.size(); ++index) {
    const auto setting = static_cast<Setting>(index);
    const SettingInfo& setting_info = kSettings[index];
    const char* raw = lookup(std::string(setting_info.name).c_str());
    if (raw == nullptr || trim(raw).empty()) continue;  // unset or empty: default
    const std::string_view text = raw;
    bool valid = true;
    const char* expected = "";
    switch (setting) {
      case Setting::mean_us:
      case Setting::sd_us:
        valid = parse_nonnegative(text, kMaxDelayUs, setting == Setting::mean_us ? config.mean_us : config.sd_us);
        expected = "a number of microseconds in [0, 1e8]";
        break;
      case Setting::probability:
        valid = parse_probability(text, config.probability);
        expected = "a probability in [0, 1]";
        break;
      case Setting::calls:
        valid = parse_families(text, config.families);
        expected = "a comma list of p2p, coll, rma, mpiio, posix or all";
        break;
      case Setting::ranks: {
        long long largest = -1;
        valid = parse_rank_selection(text, rank, config.rank_selected, &largest);
        expected = "all or a list of ranks and ranges such as 0,2-3";
        if (valid && largest >= world_size) {
          result.ok = false;
          result.error = "tremor-inject: " + std::string(setting_info.name) + "='" + printable(text) +
                         "' names rank " + std::to_string(largest) + ", but this run has " +
                         std::to_string(world_size) + (world_size == 1 ? " process (rank 0)" : " processes (ranks 0-") +
                         (world_size == 1 ? "" : std::to_string(world_size - 1) + ")") +
                         "; interference injection is disabled for this run, the application runs unchanged.";
          return result;
        }
        break;
      }
      case Setting::seed:
        valid = parse_seed(text, config.seed);
        expected = "an unsigned 64-bit integer";
        break;
      case Setting::mode:
        if (trim(text) == "sleep")
          config.mode = DelayMode::sleep;
        else if (trim(text) == "spin")
          config.mode = DelayMode::spin;
        else
          valid = false;
        expected = "sleep or spin";
        break;
      case Setting::after_s:
        valid = parse_nonnegative(text, 1e9, config.after_s);
        expected = "a number of seconds >= 0";
        break;
      case Setting::for_s:
        if (trim(text) == "inf") {
          config.has_end = false;
        } else {
          valid = parse_nonnegative(text, 1e9, config.for_s) && config.for_s > 0.0;
          config.has_end = valid;
        }
        expected = "a number of seconds > 0, or inf";
        break;
      case Setting::slowdown:
        valid = parse_nonnegative(text, 100.0, config.slowdown);
        expected = "a factor in [0, 100]";
        break;
      case Setting::trace:
        if (trim(text) == "none")
          config.traced = 0;
        else
          valid = parse_families(text, config.traced);
        expected = "none or a comma list of p2p, coll, rma, mpiio, posix or all";
        break;
      case Setting::output_dir:
        config.output_dir = std::string(text);
        break;
      case Setting::count_:
        break;
    }
    if (!valid) {
      result.ok = false;
      result.error = "tremor-inject: " + std::string(setting_info.name) + "='" + printable(text) +
                     "' is invalid (expected " + expected +
                     "); interference injection is disabled for this run, the application runs unchanged.";
      return result;
    }
  }
  return result;
}

}  // namespace tremor::inject
