// The configuration table: defaults, valid values, and one clear message per
// bad value with the default kept.
#include <sys/stat.h>

#include <array>
#include <catch2/catch.hpp>
#include <cstdio>
#include <fstream>
#include <cmath>
#include <map>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "tremor/config.hpp"

namespace {

tremor::EnvLookup environment(std::map<std::string, std::string> values) {
  return [values = std::move(values)](std::string_view name) -> std::optional<std::string> {
    const auto it = values.find(std::string(name));
    if (it == values.end()) return std::nullopt;
    return it->second;
  };
}

}  // namespace

TEST_CASE("defaults match the table") {
  const auto result = tremor::load_config(environment({}));
  CHECK(result.messages.empty());
  const auto effective = tremor::effective_configuration(result.config);
  REQUIRE(effective.size() == tremor::settings().size());
  for (std::size_t i = 0; i < effective.size(); ++i) {
    CHECK(effective[i].first == tremor::settings()[i].name);
    CHECK(effective[i].second == tremor::default_text(tremor::settings()[i]));
  }
}

// The typed defaults of Config are the one copy; their text must parse back to
// the same value and lie in the setting's own range, or the default column,
// `tremor config` and a stored configuration would say something else.
TEST_CASE("each default's text parses back to the default and lies in its range") {
  const std::map<std::string_view, std::string_view> expected{
      {"TREMOR_ENABLE", "1"},          {"TREMOR_OUTPUT_DIR", "."},         {"TREMOR_COUNTERS", ""},
      {"TREMOR_REPORT", "text"},       {"TREMOR_LOG_LEVEL", "info"},       {"TREMOR_MAD_FACTOR", "4"},
      {"TREMOR_CLUSTER_THRESHOLD", "0.1"}, {"TREMOR_MIN_GROUP", "5"},      {"TREMOR_SCALES", "2,4,8"},
      {"TREMOR_BOOTSTRAP_REPLICAS", "1000"}, {"TREMOR_SEED", "20260101"}, {"TREMOR_DETAIL_RANKS", "256"},
      {"TREMOR_SPILL_INTERVAL", "1"},  {"TREMOR_FINALIZE_LIMIT", "60"},   {"TREMOR_REPORT_DETAIL", "short"},
      {"TREMOR_ANALYSIS_THREADS", "0"}};
  REQUIRE(tremor::settings().size() == expected.size());
  for (const tremor::Setting& setting : tremor::settings()) {
    INFO(setting.name);
    REQUIRE(expected.count(setting.name) == 1);
    const std::string text = tremor::default_text(setting);
    CHECK(text == expected.at(setting.name));  // the documented defaults (README) stay put
    // Parsed into a config that differs everywhere else, the text gives the default back.
    tremor::Config other = tremor::load_config(environment({{"TREMOR_ENABLE", "0"},
                                                            {"TREMOR_OUTPUT_DIR", "/elsewhere"},
                                                            {"TREMOR_COUNTERS", "cputime"},
                                                            {"TREMOR_REPORT", "none"},
                                                            {"TREMOR_REPORT_DETAIL", "full"},
                                                            {"TREMOR_LOG_LEVEL", "trace"},
                                                            {"TREMOR_MAD_FACTOR", "7"},
                                                            {"TREMOR_CLUSTER_THRESHOLD", "0.5"},
                                                            {"TREMOR_MIN_GROUP", "9"},
                                                            {"TREMOR_SCALES", "3"},
                                                            {"TREMOR_BOOTSTRAP_REPLICAS", "200"},
                                                            {"TREMOR_ANALYSIS_THREADS", "3"},
                                                            {"TREMOR_SEED", "7"},
                                                            {"TREMOR_DETAIL_RANKS", "3"},
                                                            {"TREMOR_SPILL_INTERVAL", "off"},
                                                            {"TREMOR_FINALIZE_LIMIT", "off"}}))
                                .config;
    REQUIRE(setting.render(other) != text);
    CHECK_FALSE(setting.parse(text, other).has_value());
    CHECK(setting.render(other) == text);
    if (setting.range) {
      std::size_t start = 0;
      while (start <= text.size()) {  // each item of a list
        const std::size_t comma = std::min(text.find(',', start), text.size());
        CHECK(setting.range->contains(std::stod(text.substr(start, comma - start))));
        start = comma + 1;
      }
    }
  }
}

TEST_CASE("a numeric setting accepts its range's ends and refuses what lies beyond them") {
  int checked = 0;
  for (const tremor::Setting& setting : tremor::settings()) {
    if (!setting.range) continue;
    const tremor::ValueRange range = *setting.range;
    INFO(setting.name);
    const auto parses = [&](double value) {
      std::ostringstream text;
      text.precision(17);
      text << value;
      tremor::Config config;
      return !setting.parse(text.str(), config).has_value();
    };
    CHECK(parses(range.high));
    CHECK_FALSE(parses(range.high + 1));
    CHECK(parses(range.low) != range.low_open);
    CHECK_FALSE(parses(range.low - 1));
    // The smallest number above an open end (a normal one: strtod refuses subnormals).
    if (range.low_open) CHECK(parses(range.low == 0.0 ? 1e-300 : std::nextafter(range.low, range.high)));
    ++checked;
  }
  CHECK(checked == 9);
  CHECK(tremor::find_setting("TREMOR_MAD_FACTOR") == &tremor::settings()[6]);  // after TREMOR_REPORT_DETAIL
  CHECK(tremor::find_setting("TREMOR_NO_SUCH_SETTING") == nullptr);
}

TEST_CASE("valid values are used") {
  const auto result = tremor::load_config(environment({{"TREMOR_MAD_FACTOR", "3.5"},
                                                       {"TREMOR_SCALES", " 2, 16 ,1.5"},
                                                       {"TREMOR_REPORT", "both"},
                                                       {"TREMOR_SEED", "18446744073709551615"},
                                                       {"TREMOR_ENABLE", "off"},
                                                       {"TREMOR_MIN_GROUP", "7"},
                                                       {"TREMOR_SPILL_INTERVAL", "0.25"},
                                                       {"TREMOR_FINALIZE_LIMIT", "2.5"}}));
  CHECK(result.messages.empty());
  CHECK(result.config.mad_factor == 3.5);
  CHECK(result.config.scales == std::vector<double>{2.0, 16.0, 1.5});
  CHECK(result.config.report == "both");
  CHECK(tremor::load_config(environment({{"TREMOR_REPORT", "text, json"}})).config.report == "text, json");
  CHECK(result.config.seed == 18446744073709551615ULL);
  CHECK_FALSE(result.config.enabled);
  CHECK(result.config.min_group == 7);
  CHECK(result.config.spill_interval_s == 0.25);
  CHECK(result.config.finalize_limit_s == 2.5);
  CHECK(tremor::load_config(environment({{"TREMOR_FINALIZE_LIMIT", "off"}})).config.finalize_limit_s < 0);
  CHECK(tremor::load_config(environment({{"TREMOR_SPILL_INTERVAL", "off"}})).config.spill_interval_s < 0);
  CHECK(tremor::load_config(environment({{"TREMOR_SPILL_INTERVAL", "0"}})).config.spill_interval_s == 0.0);
}

TEST_CASE("each bad value gets one message naming it and keeps the default") {
  const tremor::Config defaults;
  const std::map<std::string, std::vector<std::string>> bad{
      {"TREMOR_MAD_FACTOR", {"", "abc", "-1", "0", "1e309", "nan", "4x"}},
      {"TREMOR_CLUSTER_THRESHOLD", {"0", "-0.1", "11", "inf"}},
      {"TREMOR_MIN_GROUP", {"2", "-5", "1.5", "99999999999999999999"}},
      {"TREMOR_SCALES", {"", "1", "0.5", "2,,4", "2,x", "-2"}},
      {"TREMOR_BOOTSTRAP_REPLICAS", {"0", "1e3", "-1000", "1000001"}},
      {"TREMOR_SEED", {"-1", "1e5", "18446744073709551616", "seed"}},
      {"TREMOR_REPORT", {"TEXT", "", "text;json"}},  // unknown names: test_report_formats.cpp
      {"TREMOR_LOG_LEVEL", {"loud", ""}},
      {"TREMOR_ENABLE", {"2", "", "maybe"}},
      {"TREMOR_OUTPUT_DIR", {"", std::string("a\x01b")}},
      {"TREMOR_DETAIL_RANKS", {"0", "65537"}},
      {"TREMOR_COUNTERS", {std::string("PAPI_TOT_INS\n")}},
      {"TREMOR_SPILL_INTERVAL", {"", "-1", "86401", "OFF", "1s", "nan"}},
      {"TREMOR_FINALIZE_LIMIT", {"", "0", "-1", "86401", "60s", "inf"}},
  };
  for (const auto& [name, values] : bad) {
    for (const auto& value : values) {
      INFO(name << "='" << value << "'");
      const auto result = tremor::load_config(environment({{name, value}}));
      REQUIRE(result.messages.size() == 1);
      CHECK(result.messages[0].find(name) != std::string::npos);
      CHECK(result.messages[0].find("using the default") != std::string::npos);
      CHECK(tremor::effective_configuration(result.config) == tremor::effective_configuration(defaults));
    }
  }
}

TEST_CASE("TREMOR_CONFIG file values, overridden by the environment") {
  const std::string path = "tremor_config_test.conf";
  {
    std::ofstream out(path);
    out << "# comment\nTREMOR_MAD_FACTOR = 5\nTREMOR_MIN_GROUP=9\nnot a setting line\n";
  }
  const auto result = tremor::load_config(environment({{"TREMOR_CONFIG", path}, {"TREMOR_MIN_GROUP", "6"}}));
  CHECK(result.config.mad_factor == 5.0);
  CHECK(result.config.min_group == 6);
  REQUIRE(result.messages.size() == 1);  // the malformed line
  CHECK(result.messages[0].find("line 4") != std::string::npos);
  std::remove(path.c_str());
  const auto missing = tremor::load_config(environment({{"TREMOR_CONFIG", "/nonexistent/tremor.conf"}}));
  REQUIRE(missing.messages.size() == 1);
  CHECK(missing.messages[0].find("TREMOR_CONFIG") != std::string::npos);
}

TEST_CASE("TREMOR_CONFIG reads only a regular file of at most 1 MiB, with one message otherwise") {
  const std::string fifo = "tremor_config_test.fifo";
  std::remove(fifo.c_str());
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  const std::string big = "tremor_config_test_big.conf";
  {
    std::ofstream out(big);
    out << "TREMOR_MIN_GROUP=9\n" << std::string(tremor::kMaxConfigFileBytes, '#') << '\n';
  }
  // A FIFO with no writer would block the open and then the read forever (in
  // MPI_Init); /dev/zero would never end; neither is read, nor is a directory.
  for (const std::string& path : {fifo, std::string("/dev/zero"), std::string("."), big}) {
    const auto result = tremor::load_config(environment({{"TREMOR_CONFIG", path}}));
    INFO(path);
    REQUIRE(result.messages.size() == 1);
    CHECK(result.messages[0].find("TREMOR_CONFIG='" + path + "'") == 0);
    const bool too_large = path == big;
    CHECK(result.messages[0].find(too_large ? "is larger than 1 MiB" : "is not a regular file") != std::string::npos);
    CHECK(result.config.min_group == tremor::Config{}.min_group);
  }
  std::remove(fifo.c_str());
  std::remove(big.c_str());
}

TEST_CASE("TREMOR_CONFIG file of exactly the limit is read") {
  const std::string path = "tremor_config_test_limit.conf";
  {
    const std::string setting = "TREMOR_MIN_GROUP=9\n";
    std::ofstream out(path);
    out << setting << std::string(tremor::kMaxConfigFileBytes - setting.size() - 1, '#') << '\n';
  }
  const auto result = tremor::load_config(environment({{"TREMOR_CONFIG", path}}));
  CHECK(result.messages.empty());
  CHECK(result.config.min_group == 9);
  std::remove(path.c_str());
}

// Fails an implementation that checks the environment only (no file names),
// that suggests a setting the file cannot hold, or that calls a name read
// from the environment only a typo.
TEST_CASE("each name of a TREMOR_CONFIG file that no setting reads gets one message") {
  const std::string path = "tremor_config_test_names.conf";
  {
    std::ofstream out(path);
    out << "TREMOR_MIN_GROUP=9\nTREMOR_DETAIL_RANK=4\nTREMOR_INJECT_SEED=3\nTREMOR_BANANA=1\n"
           "TREMOR_CONFIG=other.conf\nTREMOR_DETAIL_RANK=5\n";
  }
  const auto names = tremor::config_file_names(environment({{"TREMOR_CONFIG", path}}));
  CHECK(names == std::vector<std::string>{"TREMOR_BANANA", "TREMOR_CONFIG", "TREMOR_DETAIL_RANK", "TREMOR_INJECT_SEED",
                                          "TREMOR_MIN_GROUP"});
  const std::array<std::string_view, 1> injector{"TREMOR_INJECT_SEED"};
  const auto messages = tremor::config_file_name_messages(names, injector);
  REQUIRE(messages.size() == 4);
  CHECK(messages[0] ==
        "TREMOR_CONFIG file: TREMOR_BANANA is not a Tremor setting (ignored); tremor config lists the settings");
  CHECK(messages[1] == "TREMOR_CONFIG file: TREMOR_CONFIG is read from the environment only (ignored in the file)");
  CHECK(messages[2] ==
        "TREMOR_CONFIG file: TREMOR_DETAIL_RANK is not a Tremor setting (ignored); did you mean TREMOR_DETAIL_RANKS?");
  CHECK(messages[3] ==
        "TREMOR_CONFIG file: TREMOR_INJECT_SEED is read from the environment only (ignored in the file)");
  // The run goes on: the file's settings apply, the unknown names change nothing.
  const auto loaded = tremor::load_config(environment({{"TREMOR_CONFIG", path}}));
  CHECK(loaded.messages.empty());
  CHECK(loaded.config.min_group == 9);
  CHECK(loaded.config.detail_ranks == tremor::Config{}.detail_ranks);
  std::remove(path.c_str());
  CHECK(tremor::config_file_names(environment({})).empty());
  CHECK(tremor::config_file_names(environment({{"TREMOR_CONFIG", "/nonexistent/tremor.conf"}})).empty());
}
