// Each analysis setting's default and valid range is typed once, in the
// configuration table (tremor/config.hpp). These cases fail when a copy
// appears and drifts: AnalysisParameters{} against the table's defaults, and
// the ranges of `tremor analyze`'s options against the table's ranges.
#include <sys/wait.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <string>

#include "synthetic_run.hpp"
#include "temp_dir.hpp"
#include "tremor/analysis/parameters.hpp"
#include "tremor/config.hpp"
#include "tremor/run_file.hpp"

namespace fs = std::filesystem;
using namespace tremor;
using tremor::analysis::AnalysisParameters;

TEST_CASE("AnalysisParameters{} holds the configuration table's defaults", "[parameters]") {
  // The table's default texts, parsed by the table's own parsers.
  std::vector<std::pair<std::string, std::string>> stored;
  for (const Setting& setting : settings()) stored.emplace_back(setting.name, default_text(setting));
  std::vector<std::string> messages;
  const AnalysisParameters from_table = analysis::parameters_from_stored_configuration(stored, {}, &messages);
  CHECK(messages.empty());
  const AnalysisParameters defaults;
  CHECK(defaults.mad_factor == from_table.mad_factor);
  CHECK(defaults.cluster_threshold == from_table.cluster_threshold);
  CHECK(defaults.min_group == from_table.min_group);
  CHECK(defaults.scales == from_table.scales);
  CHECK(defaults.replicas == from_table.replicas);
  CHECK(defaults.seed == from_table.seed);
  // A run file without a stored configuration is analysed with the same numbers.
  const AnalysisParameters unstored = analysis::parameters_from_stored_configuration({}, {});
  CHECK(unstored.mad_factor == defaults.mad_factor);
  CHECK(unstored.scales == defaults.scales);
  CHECK(unstored.replicas == defaults.replicas);
}

namespace {

// Exit status of `tremor analyze --check FILE OPTION VALUE`: 0 when the value
// is accepted (the file is then only checked), 1 (usage) when refused.
int analyze_check(const fs::path& file, const std::string& option, const std::string& value) {
  const std::string command =
      std::string(TREMOR_CLI) + " analyze --check " + file.string() + " " + option + " " + value + " >/dev/null 2>&1";
  const int raw = std::system(command.c_str());
  return WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
}

std::string number_text(double value, bool whole) {
  std::ostringstream text;
  text.precision(17);
  if (whole) {
    text << static_cast<long long>(value);
  } else {
    text << value;
  }
  return text.str();
}

}  // namespace

TEST_CASE("tremor analyze's options accept exactly their settings' ranges", "[parameters][cli]") {
  tremor::test::TempDir dir;
  const fs::path file = dir.path() / "run.h5";
  std::string error;
  REQUIRE(write_run(file, tremor::test::synthetic_run({}), error));
  REQUIRE(analyze_check(file, "--seed", "1") == 0);

  struct OptionOfSetting {
    std::string option;
    std::string_view setting;
    bool whole;
  };
  const std::vector<OptionOfSetting> options{{"--mad-factor", "TREMOR_MAD_FACTOR", false},
                                             {"--cluster-threshold", "TREMOR_CLUSTER_THRESHOLD", false},
                                             {"--min-group", "TREMOR_MIN_GROUP", true},
                                             {"--scales", "TREMOR_SCALES", false},
                                             {"--replicas", "TREMOR_BOOTSTRAP_REPLICAS", true}};
  for (const OptionOfSetting& entry : options) {
    INFO(entry.option);
    const Setting* setting = find_setting(entry.setting);
    REQUIRE(setting != nullptr);
    REQUIRE(setting->range);
    const ValueRange range = *setting->range;
    CHECK(analyze_check(file, entry.option, number_text(range.high, entry.whole)) == 0);
    CHECK(analyze_check(file, entry.option, number_text(range.high + 1, entry.whole)) == 1);
    CHECK(analyze_check(file, entry.option, number_text(range.low, entry.whole)) == (range.low_open ? 1 : 0));
    if (range.low_open) {
      CHECK(analyze_check(file, entry.option, number_text(range.low == 0.0 ? 1e-300 : std::nextafter(range.low, range.high),
                                                          entry.whole)) == 0);
    } else {
      CHECK(analyze_check(file, entry.option, number_text(range.low - 1, entry.whole)) == 1);
    }
  }
}
