// Unit tests of the injector's configuration table and validators.
#include <catch2/catch.hpp>

#include <map>
#include <string>

#include "tremor/inject_config.hpp"

using namespace tremor::inject;

namespace {
std::map<std::string, std::string> g_environment;
const char* lookup(const char* name) {
  const auto found = g_environment.find(name);
  return found == g_environment.end() ? nullptr : found->second.c_str();
}
}  // namespace

TEST_CASE("defaults leave injection off") {
  g_environment.clear();
  const ParseResult result = parse_config(&lookup, 0, 4);
  REQUIRE(result.ok);
  CHECK_FALSE(result.config.injecting());
  CHECK_FALSE(result.config.has_window());
  CHECK(result.config.probability == 0.01);
  CHECK(result.config.families == kAllFamilies);
  g_environment["TREMOR_INJECT_MEAN_US"] = "250";
  CHECK(parse_config(&lookup, 0, 4).config.injecting());
  g_environment["TREMOR_INJECT_PROBABILITY"] = "0";
  CHECK_FALSE(parse_config(&lookup, 0, 4).config.injecting());
}

TEST_CASE("every setting has a name, a default and a meaning") {
  for (const SettingInfo& setting : kSettings) {
    CHECK(setting.name.starts_with("TREMOR_"));
    CHECK_FALSE(setting.default_value.empty());
    CHECK(setting.meaning.size() > 20);
  }
  CHECK(info(Setting::seed).name == "TREMOR_INJECT_SEED");
}

TEST_CASE("rank selections") {
  bool selected = false;
  CHECK(parse_rank_selection("all", 7, selected));
  CHECK(selected);
  CHECK(parse_rank_selection("0,2-3", 3, selected));
  CHECK(selected);
  CHECK(parse_rank_selection("0,2-3", 1, selected));
  CHECK_FALSE(selected);
  CHECK(parse_rank_selection(" 5 ", 5, selected));
  CHECK(selected);
  for (const char* bad : {"", "3-1", "-1", "1,,2", "a", "1-", "2-x", "0 2"}) {
    INFO(bad);
    CHECK_FALSE(parse_rank_selection(bad, 0, selected));
  }
}

TEST_CASE("call families") {
  unsigned mask = 0;
  CHECK(parse_families("p2p,posix", mask));
  CHECK(mask == (p2p | posix));
  CHECK(parse_families(" rma , mpiio", mask));
  CHECK(mask == (rma | mpiio));
  CHECK(parse_families("all", mask));
  CHECK(mask == kAllFamilies);
  // The documented default names every family.
  CHECK(parse_families(info(Setting::calls).default_value, mask));
  CHECK(mask == kAllFamilies);
  CHECK_FALSE(parse_families("p2p,disk", mask));
  CHECK_FALSE(parse_families("", mask));
  CHECK_FALSE(parse_families("coll,", mask));
}

TEST_CASE("numbers are validated") {
  double value = -1;
  CHECK(parse_probability("0.25", value));
  CHECK(value == 0.25);
  CHECK_FALSE(parse_probability("1.5", value));
  CHECK_FALSE(parse_probability("nan", value));
  CHECK_FALSE(parse_nonnegative("-3", 10, value));
  CHECK_FALSE(parse_nonnegative("inf", 1e9, value));
  CHECK_FALSE(parse_nonnegative("12us", 1e9, value));
  std::uint64_t seed = 0;
  CHECK(parse_seed("18446744073709551615", seed));
  CHECK(seed == 18446744073709551615ull);
  CHECK_FALSE(parse_seed("-1", seed));
  CHECK_FALSE(parse_seed("18446744073709551616", seed));
}

TEST_CASE("a bad value names the variable and disables injection") {
  g_environment = {{"TREMOR_INJECT_MEAN_US", "100"}, {"TREMOR_INJECT_MODE", "nap"}};
  const ParseResult result = parse_config(&lookup, 0, 4);
  CHECK_FALSE(result.ok);
  CHECK(result.error.find("TREMOR_INJECT_MODE='nap'") != std::string::npos);
  CHECK(result.error.find("disabled") != std::string::npos);
}

TEST_CASE("time window") {
  g_environment = {{"TREMOR_INJECT_AFTER_S", "2"}, {"TREMOR_INJECT_FOR_S", "inf"}};
  ParseResult result = parse_config(&lookup, 0, 4);
  REQUIRE(result.ok);
  CHECK(result.config.has_window());
  CHECK_FALSE(result.config.has_end);
  g_environment = {{"TREMOR_INJECT_FOR_S", "1.5"}};
  result = parse_config(&lookup, 0, 4);
  REQUIRE(result.ok);
  CHECK(result.config.has_end);
  CHECK(result.config.for_s == 1.5);
  g_environment = {{"TREMOR_INJECT_FOR_S", "0"}};
  CHECK_FALSE(parse_config(&lookup, 0, 4).ok);
}

TEST_CASE("a slowdown injects on its own, on the selected ranks only") {
  g_environment = {{"TREMOR_INJECT_SLOWDOWN", "0.25"}, {"TREMOR_INJECT_PROBABILITY", "0"}};
  ParseResult result = parse_config(&lookup, 0, 4);
  REQUIRE(result.ok);
  CHECK(result.config.slowdown == 0.25);
  CHECK_FALSE(result.config.random_delays());
  CHECK(result.config.injecting());
  g_environment = {{"TREMOR_INJECT_SLOWDOWN", "0.25"}, {"TREMOR_INJECT_RANKS", "1"}};
  CHECK_FALSE(parse_config(&lookup, 0, 4).config.injecting());
  CHECK(parse_config(&lookup, 1, 4).config.injecting());
  for (const char* bad : {"-0.1", "101", "slow", "nan"}) {
    INFO(bad);
    g_environment = {{"TREMOR_INJECT_SLOWDOWN", bad}};
    CHECK_FALSE(parse_config(&lookup, 0, 4).ok);
  }
}

TEST_CASE("a trace logs on every rank without injecting") {
  g_environment = {{"TREMOR_INJECT_TRACE", "coll"}};
  ParseResult result = parse_config(&lookup, 0, 4);
  REQUIRE(result.ok);
  CHECK(result.config.traced == coll);
  CHECK_FALSE(result.config.injecting());
  CHECK(result.config.logging());
  g_environment = {{"TREMOR_INJECT_TRACE", "coll,p2p"}, {"TREMOR_INJECT_MEAN_US", "100"}, {"TREMOR_INJECT_RANKS", "1"}};
  result = parse_config(&lookup, 0, 4);
  REQUIRE(result.ok);
  CHECK(result.config.traced == (coll | p2p));
  CHECK_FALSE(result.config.injecting());
  CHECK(result.config.logging());
  g_environment = {{"TREMOR_INJECT_TRACE", "none"}};
  CHECK(parse_config(&lookup, 0, 4).config.traced == 0);
  CHECK_FALSE(parse_config(&lookup, 0, 4).config.logging());
  for (const char* bad : {"coll,", "disk", "none,coll"}) {
    INFO(bad);
    g_environment = {{"TREMOR_INJECT_TRACE", bad}};
    CHECK_FALSE(parse_config(&lookup, 0, 4).ok);
  }
}

TEST_CASE("every bad value is named in the one message") {
  const std::map<std::string, std::string> bad_values{
      {"TREMOR_INJECT_MEAN_US", "fast"},   {"TREMOR_INJECT_SD_US", "-5"},     {"TREMOR_INJECT_PROBABILITY", "1.5"},
      {"TREMOR_INJECT_CALLS", "p2p,disk"}, {"TREMOR_INJECT_RANKS", "3-1"},    {"TREMOR_INJECT_SEED", "-1"},
      {"TREMOR_INJECT_MODE", "nap"},       {"TREMOR_INJECT_AFTER_S", "soon"}, {"TREMOR_INJECT_FOR_S", "0"},
      {"TREMOR_INJECT_SLOWDOWN", "-1"},    {"TREMOR_INJECT_TRACE", "coll,disk"}};
  for (const auto& [name, value] : bad_values) {
    INFO(name << "=" << value);
    g_environment = {{"TREMOR_INJECT_MEAN_US", "100"}};
    g_environment[name] = value;
    const ParseResult result = parse_config(&lookup, 0, 4);
    CHECK_FALSE(result.ok);
    CHECK(result.error.find(name + "='" + value + "'") != std::string::npos);
    CHECK(result.error.find('\n') == std::string::npos);
  }
}

TEST_CASE("TREMOR_INJECT_RANKS may name only ranks of the run") {
  for (const char* ranks : {"1", "0-1", "all", "1,0"}) {
    INFO(ranks);
    g_environment = {{"TREMOR_INJECT_MEAN_US", "250"}, {"TREMOR_INJECT_RANKS", ranks}};
    CHECK(parse_config(&lookup, 0, 2).ok);
  }
  for (const auto& [ranks, largest] : {std::pair{"99", "99"}, std::pair{"0-5", "5"}, std::pair{"0,2", "2"}}) {
    INFO(ranks);
    g_environment = {{"TREMOR_INJECT_MEAN_US", "250"}, {"TREMOR_INJECT_RANKS", ranks}};
    const ParseResult result = parse_config(&lookup, 1, 2);
    CHECK_FALSE(result.ok);
    CHECK(result.error.find(std::string("TREMOR_INJECT_RANKS='") + ranks + "' names rank " + largest +
                            ", but this run has 2 processes (ranks 0-1)") != std::string::npos);
  }
}

TEST_CASE("a bad value with control characters or of any length stays one short line") {
  g_environment = {{"TREMOR_INJECT_MODE", "nap\nnow\r"}};
  ParseResult result = parse_config(&lookup, 0, 2);
  CHECK_FALSE(result.ok);
  CHECK(result.error.find("TREMOR_INJECT_MODE='nap?now?'") != std::string::npos);
  CHECK(result.error.find('\n') == std::string::npos);
  g_environment = {{"TREMOR_INJECT_CALLS", std::string(5000, 'x')}};
  result = parse_config(&lookup, 0, 2);
  CHECK_FALSE(result.ok);
  CHECK(result.error.find(std::string(80, 'x') + "...'") != std::string::npos);
  CHECK(result.error.size() < 400);
}
