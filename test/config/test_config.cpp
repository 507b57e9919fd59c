// The configuration table: defaults, valid values, and one clear message per
// bad value with the default kept.
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <fstream>
#include <map>

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
    CHECK(effective[i].second == tremor::settings()[i].default_value);
  }
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
  CHECK(result.config.report == tremor::ReportFormat::both);
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
      {"TREMOR_BOOTSTRAP_REPLICAS", {"10", "1e3", "-1000"}},
      {"TREMOR_SEED", {"-1", "1e5", "18446744073709551616", "seed"}},
      {"TREMOR_REPORT", {"TEXT", "", "html"}},
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
