// TREMOR_COUNTERS parsing and specs that must never hurt the host.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "tremor/counters/counter_source.hpp"

using tremor::counters::open_counter_source;
using tremor::counters::parse_counter_spec;
using tremor::CounterKind;

TEST_CASE("spec items are trimmed and empty items dropped", "[counters][spec]") {
  CHECK(parse_counter_spec("  a , ,b,,\tc  ") == std::vector<std::string>{"a", "b", "c"});
  CHECK(parse_counter_spec("sde:::Lib::x") == std::vector<std::string>{"sde:::Lib::x"});
  CHECK(parse_counter_spec(",,,").empty());
}

TEST_CASE("a blank spec means the default order", "[counters][spec]") {
  const std::vector<std::string> expected{"PAPI_FP_INS", "PAPI_TOT_INS"};
  CHECK(parse_counter_spec("") == expected);
  CHECK(parse_counter_spec(" \t ") == expected);
}

TEST_CASE("garbage specs fall back or open, never crash", "[counters][spec]") {
  std::string many_items;
  for (int i = 0; i < 100; ++i) many_items += "NOT_AN_EVENT_" + std::to_string(i) + ",";
  const std::vector<std::string> specs{",,,",
                                       " , , ",
                                       ";;;",
                                       "sde:::",
                                       ":::",
                                       "perf::",
                                       "::::::::",
                                       "PAPI_TOT_INS:u=1:k=1:::",
                                       std::string(5000, 'A'),
                                       std::string(2000, ','),
                                       "sde:::" + std::string(3000, 'x') + "::y",
                                       "name with spaces",
                                       "\xff\xfe\x01",
                                       "PAPI_FP_INS;PAPI_TOT_INS",
                                       many_items};
  for (const std::string& spec : specs) {
    INFO("spec of " << spec.size() << " characters starting " << spec.substr(0, 40));
    const auto opened = open_counter_source(spec);
    const std::uint64_t first = opened.source.read();
    CHECK(opened.source.read() >= first);
    CHECK_FALSE(opened.source.events().empty());
    if (opened.source.kind() == CounterKind::thread_cputime) {
      CHECK_FALSE(opened.explanation.empty());
      for (const auto& rejection : opened.rejections) CHECK_FALSE(rejection.reason.empty());
    }
  }
}

TEST_CASE("overlong names and overlong lists are rejected with a reason", "[counters][spec]") {
  const auto long_name = open_counter_source(std::string(5000, 'A'));
  REQUIRE(long_name.rejections.size() == 1);
  CHECK_THAT(long_name.rejections[0].reason, Catch::Contains("longer than"));

  std::string many_items;
  for (int i = 0; i < 40; ++i) many_items += "NOT_AN_EVENT_" + std::to_string(i) + ",";
  const auto many = open_counter_source(many_items);
  CHECK(many.source.kind() == CounterKind::thread_cputime);
  REQUIRE(many.rejections.size() == 33);
  CHECK_THAT(many.rejections.back().reason, Catch::Contains("not tried"));
}
