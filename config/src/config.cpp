#include "tremor/config.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <sstream>

namespace tremor {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

std::optional<double> to_double(std::string_view text) {
  text = trim(text);
  if (text.empty() || text.size() > 64) return std::nullopt;
  std::string copy(text);
  char* end = nullptr;
  errno = 0;
  const double value = std::strtod(copy.c_str(), &end);
  if (errno != 0 || end != copy.c_str() + copy.size() || !std::isfinite(value)) return std::nullopt;
  return value;
}

template <typename Int>
std::optional<Int> to_integer(std::string_view text) {
  text = trim(text);
  Int value{};
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc{} || ptr != text.data() + text.size()) return std::nullopt;
  return value;
}

std::string format_double(double v) {
  std::ostringstream out;
  out << v;
  return out.str();
}

std::optional<std::string> parse_bool(std::string_view text, bool& out) {
  text = trim(text);
  if (text == "1" || text == "yes" || text == "on" || text == "true") {
    out = true;
    return std::nullopt;
  }
  if (text == "0" || text == "no" || text == "off" || text == "false") {
    out = false;
    return std::nullopt;
  }
  return "must be 1/0, yes/no, on/off or true/false";
}

std::string describe(const ValueRange& range) {
  return (range.low_open ? "(" : "[") + format_double(range.low) + ", " + format_double(range.high) + "]";
}

std::optional<std::string> parse_real_in(std::string_view text, double& out, const ValueRange& range) {
  const auto value = to_double(text);
  if (!value) return "is not a number";
  if (!range.contains(*value)) return "must be in " + describe(range);
  out = *value;
  return std::nullopt;
}

std::optional<std::string> parse_int_in(std::string_view text, int& out, const ValueRange& range) {
  const auto value = to_integer<long long>(text);
  if (!value) return "is not a whole number";
  if (!range.contains(static_cast<double>(*value))) {
    return "must be between " + std::to_string(static_cast<long long>(range.low)) + " and " +
           std::to_string(static_cast<long long>(range.high));
  }
  out = static_cast<int>(*value);
  return std::nullopt;
}

// The valid values, each once: the parsers below and Setting::range use them.
constexpr ValueRange kMadFactorRange{0.0, 100.0, true};
constexpr ValueRange kClusterThresholdRange{0.0, 10.0, true};
constexpr ValueRange kMinGroupRange{3.0, 1000000.0};
constexpr ValueRange kScaleFactorRange{1.0, 1e9, true};
constexpr ValueRange kReplicasRange{1.0, 1000000.0};
constexpr ValueRange kDetailRanksRange{1.0, 65536.0};
constexpr ValueRange kSpillIntervalRange{0.0, 86400.0};
constexpr ValueRange kFinalizeLimitRange{0.0, 86400.0, true};
constexpr ValueRange kAnalysisThreadsRange{0.0, 256.0};

std::optional<std::string> parse_scales(std::string_view text, Config& c) {
  std::vector<double> scales;
  std::string_view rest = text;
  while (true) {
    const auto comma = rest.find(',');
    const auto item = trim(rest.substr(0, comma));
    const auto value = to_double(item);
    if (!value || !kScaleFactorRange.contains(*value)) return "must be a comma-separated list of factors > 1 (e.g. 2,4,8)";
    scales.push_back(*value);
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  if (scales.size() > kMaxScaleFactors) return "lists more than " + std::to_string(kMaxScaleFactors) + " factors";
  c.scales = std::move(scales);
  return std::nullopt;
}

std::string render_scales(const Config& c) {
  std::string out;
  for (double s : c.scales) out += (out.empty() ? "" : ",") + format_double(s);
  return out;
}

// A comma-separated list of report format names (lower case); the analysis'
// registry of formatters judges the names, at the end of the run.
std::optional<std::string> parse_report(std::string_view text, Config& c) {
  text = trim(text);
  const bool well_formed = !text.empty() && text.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_-, ") ==
                                                std::string_view::npos;
  if (!well_formed) return "must be a comma-separated list of report formats, e.g. text or text,json";
  c.report = std::string(text);
  return std::nullopt;
}

std::optional<std::string> parse_report_detail(std::string_view text, Config& c) {
  text = trim(text);
  if (text == "short")
    c.report_detail = ReportDetail::short_report;
  else if (text == "full")
    c.report_detail = ReportDetail::full_report;
  else
    return "must be short or full";
  return std::nullopt;
}

std::optional<std::string> parse_log_level(std::string_view text, Config& c) {
  text = trim(text);
  static constexpr std::array levels{"off", "error", "warn", "info", "debug", "trace"};
  for (const char* level : levels) {
    if (text == level) {
      c.log_level = level;
      return std::nullopt;
    }
  }
  return "must be off, error, warn, info, debug or trace";
}

std::optional<std::string> parse_output_dir(std::string_view text, Config& c) {
  text = trim(text);
  if (text.empty()) return "is empty";
  if (text.size() > 3000) return "is longer than 3000 characters";
  for (char ch : text) {
    if (static_cast<unsigned char>(ch) < 0x20) return "contains control characters";
  }
  c.output_dir = std::string(text);
  return std::nullopt;
}

std::optional<std::string> parse_counters(std::string_view text, Config& c) {
  if (text.size() > 1024) return "is longer than 1024 characters";
  for (char ch : text) {
    if (static_cast<unsigned char>(ch) < 0x20) return "contains control characters";
  }
  c.counters = std::string(trim(text));
  return std::nullopt;
}

std::optional<std::string> parse_seed(std::string_view text, Config& c) {
  const auto value = to_integer<std::uint64_t>(text);
  if (!value) return "must be a non-negative whole number below 2^64";
  c.seed = *value;
  return std::nullopt;
}

std::optional<std::string> parse_spill_interval(std::string_view text, Config& c) {
  text = trim(text);
  if (text == "off") {
    c.spill_interval_s = -1.0;
    return std::nullopt;
  }
  const auto value = to_double(text);
  if (!value || !kSpillIntervalRange.contains(*value)) return "must be seconds in " + describe(kSpillIntervalRange) + " or off";
  c.spill_interval_s = *value;
  return std::nullopt;
}

std::optional<std::string> parse_finalize_limit(std::string_view text, Config& c) {
  text = trim(text);
  if (text == "off") {
    c.finalize_limit_s = -1.0;
    return std::nullopt;
  }
  const auto value = to_double(text);
  if (!value || !kFinalizeLimitRange.contains(*value)) return "must be seconds in " + describe(kFinalizeLimitRange) + " or off";
  c.finalize_limit_s = *value;
  return std::nullopt;
}

constexpr std::array kSettingTable{
    Setting{"TREMOR_ENABLE", "Set to 0 to load Tremor but record nothing.", std::nullopt,
            [](std::string_view t, Config& c) { return parse_bool(t, c.enabled); },
            [](const Config& c) { return std::string(c.enabled ? "1" : "0"); }},
    Setting{"TREMOR_OUTPUT_DIR", "Directory for the HDF5 file and JSON report (never overwritten).", std::nullopt,
            parse_output_dir, [](const Config& c) { return c.output_dir; }},
    Setting{"TREMOR_COUNTERS",
            "PAPI events tried in order for the work counter (empty: PAPI_FP_INS,PAPI_TOT_INS; 'cputime': thread CPU "
            "time, the fallback, its clock read at most once per ms with context-switch records between where perf "
            "allows; 'cputime_syscall': the same with the clock read on every call; 'oncpu': thread CPU time from "
            "context-switch records only, steal time counted). SDE events are named sde:::LIBRARY::COUNTER.",
            std::nullopt,
            parse_counters, [](const Config& c) { return c.counters; }},
    Setting{"TREMOR_REPORT",
            "End-of-run report on rank 0's stderr: a comma-separated list of text, json, chrome (a Chrome trace: "
            "docs/trace.md) (both: text,json; none: no report). An unknown name: one line at the end of the run, then "
            "text.",
            std::nullopt, parse_report, [](const Config& c) { return c.report; }},
    Setting{"TREMOR_REPORT_DETAIL",
            "Text report: short (a screenful: headline, where, when, what, prediction, worst warnings) or full "
            "(every table; tremor analyze --full).",
            std::nullopt, parse_report_detail,
            [](const Config& c) { return std::string(to_string(c.report_detail)); }},
    Setting{"TREMOR_LOG_LEVEL", "Log level: off, error, warn, info (one start-up line), debug, trace.", std::nullopt,
            parse_log_level, [](const Config& c) { return c.log_level; }},
    Setting{"TREMOR_MAD_FACTOR",
            "A segment is interfered when its duration exceeds median + factor x MAD of its group.", kMadFactorRange,
            [](std::string_view t, Config& c) { return parse_real_in(t, c.mad_factor, kMadFactorRange); },
            [](const Config& c) { return format_double(c.mad_factor); }},
    Setting{"TREMOR_CLUSTER_THRESHOLD", "Relative distance below which work values join one cluster.",
            kClusterThresholdRange,
            [](std::string_view t, Config& c) { return parse_real_in(t, c.cluster_threshold, kClusterThresholdRange); },
            [](const Config& c) { return format_double(c.cluster_threshold); }},
    Setting{"TREMOR_MIN_GROUP", "Groups with fewer segments are not used for estimation.", kMinGroupRange,
            [](std::string_view t, Config& c) { return parse_int_in(t, c.min_group, kMinGroupRange); },
            [](const Config& c) { return std::to_string(c.min_group); }},
    Setting{"TREMOR_SCALES", "Process-count factors for the run-time predictions.", kScaleFactorRange, parse_scales,
            render_scales},
    Setting{"TREMOR_BOOTSTRAP_REPLICAS",
            "Bootstrap replicas per prediction (the interference interval always uses 200).", kReplicasRange,
            [](std::string_view t, Config& c) { return parse_int_in(t, c.bootstrap_replicas, kReplicasRange); },
            [](const Config& c) { return std::to_string(c.bootstrap_replicas); }},
    Setting{"TREMOR_ANALYSIS_THREADS",
            "Threads of the analysis, at MPI_Finalize on rank 0 and in tremor analyze (0: the CPUs the process may "
            "run on, at MPI_Finalize with those of rank 0's node's other ranks, which wait; at most 8; 1: one "
            "thread). Any count gives the same report.",
            kAnalysisThreadsRange,
            [](std::string_view t, Config& c) { return parse_int_in(t, c.analysis_threads, kAnalysisThreadsRange); },
            [](const Config& c) { return std::to_string(c.analysis_threads); }},
    Setting{"TREMOR_SEED", "Seed of every random draw of the analysis (same seed, same report).", std::nullopt,
            parse_seed, [](const Config& c) { return std::to_string(c.seed); }},
    Setting{"TREMOR_DETAIL_RANKS",
            "At most this many ranks keep per-segment detail in the file (evenly spaced).", kDetailRanksRange,
            [](std::string_view t, Config& c) { return parse_int_in(t, c.detail_ranks, kDetailRanksRange); },
            [](const Config& c) { return std::to_string(c.detail_ranks); }},
    Setting{"TREMOR_SPILL_INTERVAL",
            "Seconds between appends of recorded segments to the crash-recovery spill files (0: every boundary; off: "
            "no spill).",
            kSpillIntervalRange, parse_spill_interval,
            [](const Config& c) {
              return c.spill_interval_s < 0 ? std::string("off") : format_double(c.spill_interval_s);
            }},
    Setting{"TREMOR_FINALIZE_LIMIT",
            "Seconds Tremor's end-of-run work (gather, run file, analysis) may take once every rank reached "
            "MPI_Finalize; past it Tremor stops, says so, keeps the spill files for tremor analyze --recover and lets "
            "MPI_Finalize proceed (off: no limit).",
            kFinalizeLimitRange, parse_finalize_limit,
            [](const Config& c) {
              return c.finalize_limit_s < 0 ? std::string("off") : format_double(c.finalize_limit_s);
            }},
};

std::string printable(std::string_view text) {
  std::string out;
  for (char ch : text.substr(0, 80)) out += (static_cast<unsigned char>(ch) < 0x20 ? '?' : ch);
  if (text.size() > 80) out += "...";
  return out;
}

// Reads NAME=VALUE lines ('#' comments) of a TREMOR_CONFIG file. Only a
// regular file of at most kMaxConfigFileBytes is read: a FIFO would block
// MPI_Init forever, /dev/zero would never end. O_NONBLOCK keeps the open of a
// FIFO from blocking before fstat can tell what it is.
std::map<std::string, std::string, std::less<>> read_config_file(const std::string& path,
                                                                 std::vector<std::string>& messages) {
  std::map<std::string, std::string, std::less<>> values;
  const std::string ignored = "; using the environment and defaults only";
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    messages.push_back("TREMOR_CONFIG='" + printable(path) + "' cannot be opened (" + std::strerror(errno) + ")" +
                       ignored);
    return values;
  }
  struct stat status {};
  std::string text;
  std::string problem;
  if (::fstat(fd, &status) != 0) {
    problem = std::string("cannot be examined (") + std::strerror(errno) + ")";
  } else if (!S_ISREG(status.st_mode)) {
    problem = "is not a regular file";
  } else if (status.st_size > static_cast<off_t>(kMaxConfigFileBytes)) {
    problem = "is larger than " + std::to_string(kMaxConfigFileBytes >> 20) + " MiB";
  } else {
    // In chunks, as long as it is: a buffer of the largest size, zeroed at
    // every MPI_Init, would cost more than a small file's whole reading. One
    // byte beyond the bound is enough to refuse a file that grew since fstat.
    char chunk[16384];
    while (text.size() <= kMaxConfigFileBytes) {
      const ssize_t got = ::read(fd, chunk, sizeof chunk);
      if (got < 0 && errno == EINTR) continue;
      if (got < 0) problem = std::string("cannot be read (") + std::strerror(errno) + ")";
      if (got <= 0) break;
      text.append(chunk, static_cast<std::size_t>(got));
    }
    if (text.size() > kMaxConfigFileBytes) problem = "is larger than " + std::to_string(kMaxConfigFileBytes >> 20) + " MiB";
  }
  ::close(fd);
  if (!problem.empty()) {
    messages.push_back("TREMOR_CONFIG='" + printable(path) + "' " + problem + ignored);
    return values;
  }
  parse_config_text(text, values, messages);
  return values;
}

}  // namespace

void parse_config_text(std::string_view text, std::map<std::string, std::string, std::less<>>& values,
                       std::vector<std::string>& messages) {
  int number = 0;
  while (!text.empty() && number < kMaxConfigFileLines) {
    ++number;
    const auto end = text.find('\n');
    const std::string_view line = trim(text.substr(0, end));
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
    if (line.empty() || line.front() == '#') continue;
    const auto eq = line.find('=');
    if (eq == std::string_view::npos) {
      messages.push_back("TREMOR_CONFIG line " + std::to_string(number) + " is not NAME=VALUE; ignored");
      continue;
    }
    values[std::string(trim(line.substr(0, eq)))] = std::string(trim(line.substr(eq + 1)));
  }
}

std::span<const Setting> settings() { return kSettingTable; }

const Setting* find_setting(std::string_view name) {
  for (const Setting& setting : kSettingTable) {
    if (setting.name == name) return &setting;
  }
  return nullptr;
}

const Config& default_config() {
  // Never destroyed: read at an MPI_Finalize an exit-time destructor may call.
  static const Config& defaults = *new Config();
  return defaults;
}

std::string default_text(const Setting& setting) { return setting.render(default_config()); }

std::string_view to_string(ReportDetail detail) {
  return detail == ReportDetail::full_report ? "full" : "short";
}

EnvLookup process_environment() {
  return [](std::string_view name) -> std::optional<std::string> {
    const char* value = std::getenv(std::string(name).c_str());
    if (!value) return std::nullopt;
    return std::string(value);
  };
}

ConfigResult load_config(const EnvLookup& lookup) {
  ConfigResult result;
  std::map<std::string, std::string, std::less<>> from_file;
  if (const auto path = lookup("TREMOR_CONFIG"); path && !path->empty()) {
    from_file = read_config_file(*path, result.messages);
  }
  for (const Setting& setting : kSettingTable) {
    std::optional<std::string> text = lookup(setting.name);
    if (!text) {
      if (const auto it = from_file.find(setting.name); it != from_file.end()) text = it->second;
    }
    if (!text) continue;
    if (auto error = setting.parse(*text, result.config)) {
      result.messages.push_back(std::string(setting.name) + "='" + printable(*text) + "' " + *error +
                                "; using the default '" + default_text(setting) + "'");
    }
  }
  return result;
}

std::vector<std::pair<std::string, std::string>> effective_configuration(const Config& config) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const Setting& setting : kSettingTable) out.emplace_back(setting.name, setting.render(config));
  return out;
}

namespace {

// Edits (insert, delete, replace, swap of neighbours) between two names.
std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.size()][b.size()];
}

bool tool_reads(std::string_view name) {
  for (std::string_view known : kToolEnvironment) {
    if (known.ends_with('_') ? name.starts_with(known) : name == known) return true;
  }
  return false;
}

// The known name a likely typo meant, or "": at most 3 edits (a unit suffix
// left out, as in TREMOR_INJECT_MEAN), and fewer than a third of the part
// after TREMOR_ (TREMOR_X is no typo of TREMOR_SEED).
std::string_view closest_name(std::string_view name, std::span<const std::string_view> known) {
  std::string_view closest;
  std::size_t best = 4;
  for (std::string_view candidate : known) {
    const std::size_t distance = edit_distance(name, candidate);
    if (distance < best && 3 * distance < candidate.size() - 7) {
      best = distance;
      closest = candidate;
    }
  }
  return closest;
}

std::string not_a_setting(std::string_view name, std::span<const std::string_view> known) {
  const std::string_view closest = closest_name(name, known);
  return printable(name) + " is not a Tremor setting (ignored)" +
         (closest.empty() ? "; tremor config lists the settings" : "; did you mean " + std::string(closest) + "?");
}

std::vector<std::string_view> table_names() {
  std::vector<std::string_view> names;
  for (const Setting& setting : kSettingTable) names.push_back(setting.name);
  return names;
}

}  // namespace

std::vector<std::string> unknown_name_messages(std::span<const std::string> names,
                                               std::span<const std::string_view> also_known) {
  std::vector<std::string_view> known = table_names();
  known.insert(known.end(), also_known.begin(), also_known.end());
  for (std::string_view name : kToolEnvironment) {
    if (!name.ends_with('_')) known.push_back(name);
  }
  std::vector<std::string> messages;
  for (const std::string& name : names) {
    if (!name.starts_with("TREMOR_") || tool_reads(name) ||
        std::find(known.begin(), known.end(), name) != known.end())
      continue;
    messages.push_back(not_a_setting(name, known));
  }
  return messages;
}

std::vector<std::string> config_file_names(const EnvLookup& lookup) {
  std::vector<std::string> names;
  const auto path = lookup("TREMOR_CONFIG");
  if (!path || path->empty()) return names;
  std::vector<std::string> said_by_load_config;
  for (const auto& entry : read_config_file(*path, said_by_load_config))
    if (!entry.first.empty()) names.push_back(entry.first);
  return names;
}

std::vector<std::string> config_file_name_messages(std::span<const std::string> names,
                                                   std::span<const std::string_view> environment_only) {
  const std::vector<std::string_view> known = table_names();
  std::vector<std::string> messages;
  for (const std::string& name : names) {
    if (find_setting(name) != nullptr) continue;
    const bool read_elsewhere =
        tool_reads(name) || std::find(environment_only.begin(), environment_only.end(), name) != environment_only.end();
    messages.push_back("TREMOR_CONFIG file: " + (read_elsewhere ? printable(name) + " is read from the environment only "
                                                                                    "(ignored in the file)"
                                                                : not_a_setting(name, known)));
  }
  return messages;
}

}  // namespace tremor
