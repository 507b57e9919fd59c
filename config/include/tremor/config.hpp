// The one configuration table (docs/design.md#one-table-per-concept). Every TREMOR_* setting is one
// entry: name, meaning, valid range, parser and renderer; its default is the
// value in a default-constructed Config, rendered. Parsing, the validation
// messages, `tremor config`, the README table, the command-line ranges of
// `tremor analyze` and `compare`, the analysis defaults and the effective
// configuration saved in every output file all come from kSettings.
#pragma once
#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tremor {

// How much the text report says: a screenful (the headline, where / when /
// what, the prediction, the worst warnings) or every table.
enum class ReportDetail { short_report, full_report };

// Most process-count factors TREMOR_SCALES (and --scales) may list.
inline constexpr std::size_t kMaxScaleFactors = 32;

// Each default is typed here once; the table's default column, the analysis
// parameters' defaults (AnalysisParameters) and `tremor config` read it.
struct Config {
  bool enabled = true;
  std::string output_dir = ".";
  std::string counters;  // empty: the counter layer's default order
  std::string report = "text";  // TREMOR_REPORT: report format names, comma-separated
  ReportDetail report_detail = ReportDetail::short_report;
  std::string log_level = "info";
  double mad_factor = 4.0;
  double cluster_threshold = 0.1;
  int min_group = 5;
  std::vector<double> scales{2.0, 4.0, 8.0};
  int bootstrap_replicas = 1000;
  // Threads of the analysis; 0: automatic (estimators::analysis_threads).
  int analysis_threads = 0;
  std::uint64_t seed = 20260101;
  int detail_ranks = 256;
  // Crash-recovery spill: seconds between appends of the buffered segments
  // (0: at every boundary); negative: no spill.
  double spill_interval_s = 1.0;
  // Seconds Tremor's end-of-run work may take once every rank reached
  // MPI_Finalize; past it Tremor stops and MPI_Finalize proceeds. Negative: no limit.
  double finalize_limit_s = 60.0;
};

// The values a numeric setting accepts (for a list, each item): [low, high],
// or (low, high] when low_open.
struct ValueRange {
  double low = 0.0;
  double high = 0.0;
  bool low_open = false;
  [[nodiscard]] constexpr bool contains(double value) const {
    return (low_open ? value > low : value >= low) && value <= high;
  }
};

struct Setting {
  std::string_view name;
  std::string_view meaning;
  // Numeric settings only; the command-line options that override a setting
  // take the same range.
  std::optional<ValueRange> range;
  // Parses text into config; returns an error sentence on a bad value.
  std::optional<std::string> (*parse)(std::string_view text, Config& config);
  // Renders the value in use, for the effective configuration.
  std::string (*render)(const Config& config);
};

std::span<const Setting> settings();
// The entry named `name`; nullptr when there is none.
const Setting* find_setting(std::string_view name);
// The default-constructed Config, built once.
const Config& default_config();
// The default as text: render(default_config()).
std::string default_text(const Setting& setting);

// Looks a variable up; returns nullopt when unset. Injected so tests need no
// real environment.
using EnvLookup = std::function<std::optional<std::string>(std::string_view)>;
EnvLookup process_environment();

struct ConfigResult {
  Config config;
  // One clear sentence per rejected value: "TREMOR_X='v' is ...; using default 'd'".
  std::vector<std::string> messages;
};

// Reads every setting; a missing or bad value keeps its default. If
// TREMOR_CONFIG names a file of NAME=VALUE lines, those are read first and
// the environment overrides them. The file must be a regular file of at most
// kMaxConfigFileBytes; anything else (a FIFO, a device, a directory, a larger
// file) is not read, with one message, and the defaults apply.
ConfigResult load_config(const EnvLookup& lookup);

inline constexpr std::size_t kMaxConfigFileBytes = std::size_t{1} << 20;
inline constexpr int kMaxConfigFileLines = 10000;  // lines after these are ignored

// The NAME=VALUE lines of a settings file's text (trimmed; '#' starts a
// comment line); a line without '=' adds a message and is ignored.
void parse_config_text(std::string_view text, std::map<std::string, std::string, std::less<>>& values,
                       std::vector<std::string>& messages);

// Every setting with the value in use, in table order.
std::vector<std::pair<std::string, std::string>> effective_configuration(const Config& config);


// TREMOR_* names that no part of Tremor reads, from `names` (the process's
// environment): one message each, with the closest known name when it is a
// likely typo ("TREMOR_OUTPUTDIR is not a Tremor setting (ignored); did you
// mean TREMOR_OUTPUT_DIR?"). Known: the settings table, `also_known` (another
// table, e.g. the injector's), and the names the tools and scripts read
// (kToolEnvironment).
std::vector<std::string> unknown_name_messages(std::span<const std::string> names,
                                               std::span<const std::string_view> also_known);
// The names a TREMOR_CONFIG file sets, sorted, each once; none when the
// variable is unset or the file cannot be read (load_config says why).
std::vector<std::string> config_file_names(const EnvLookup& lookup);
// The names of a TREMOR_CONFIG file that no setting reads, one message each:
// a typo as unknown_name_messages says it, with the closest setting of the
// table ("TREMOR_CONFIG file: TREMOR_DETAIL_RANK is not a Tremor setting
// (ignored); did you mean TREMOR_DETAIL_RANKS?"); a name read from the
// environment only (`environment_only`, e.g. the injector's table, and the
// tools' names) says so.
std::vector<std::string> config_file_name_messages(std::span<const std::string> names,
                                                   std::span<const std::string_view> environment_only);
// Environment names read by the scripts and tools rather than the settings
// table (TREMOR_CONFIG names a settings file); prefixes end in '_'.
inline constexpr std::array<std::string_view, 8> kToolEnvironment{
    "TREMOR_CONFIG", "TREMOR_LIBDIR", "TREMOR_PYTHON", "TREMOR_PLOT_TOOL", "TREMOR_BIN", "TREMOR_TEST_NEEDS",
    "TREMOR_TEST_PRELOAD_RANKS_ONLY", "TREMOR_MUTANTS_"};
std::string_view to_string(ReportDetail detail);  // "short" or "full"

}  // namespace tremor
