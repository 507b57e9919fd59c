// The fixed log code (tremor/log_code.hpp), the per-process code column and
// the program-wide merges, against the reference vectors
// (test/reference/vectors_quantization.json) and the code's own promises.
#include <catch2/catch.hpp>

#include <cmath>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <random>

#include "tremor/code_column.hpp"
#include "tremor/program_merge.hpp"

using tremor::BinTable;
using tremor::CodeColumn;
using tremor::CodeScale;
using tremor::decode_value;
using tremor::encode_value;
using tremor::kMaxCode;

namespace {

nlohmann::json load_vectors() {
  std::ifstream in(std::string(TREMOR_REFERENCE_DIR) + "/vectors_quantization.json");
  REQUIRE(in.good());
  return nlohmann::json::parse(in);
}

void require_bins_match(const BinTable& actual, const nlohmann::json& expected) {
  REQUIRE(actual.size() == expected.size());
  for (std::size_t i = 0; i < actual.size(); ++i) {
    CHECK(actual[i].rep() == Approx(expected[i]["rep"].get<double>()).epsilon(1e-12));
    CHECK(actual[i].count == expected[i]["count"].get<std::uint64_t>());
    CHECK(actual[i].min == expected[i]["min"].get<double>());
    CHECK(actual[i].max == expected[i]["max"].get<double>());
    if (expected[i].contains("code")) CHECK(actual[i].code == expected[i]["code"].get<std::uint16_t>());
  }
}

std::vector<int> as_ints(const std::vector<std::uint16_t>& values) { return {values.begin(), values.end()}; }

}  // namespace

TEST_CASE("Codes and their values match the reference vectors", "[code]") {
  const auto vectors = load_vectors();
  for (const auto& c : vectors["codes"]) {
    const CodeScale scale = c["scale"] == "seconds" ? CodeScale::seconds : CodeScale::count;
    const double value = c["value"].get<double>();
    INFO(c["scale"].get<std::string>() << " " << value);
    CHECK(encode_value(value, scale) == c["code"].get<std::uint16_t>());
    CHECK(decode_value(encode_value(value, scale), scale) == c["decoded"].get<double>());
  }
}

TEST_CASE("Every code decodes inside its own interval, in ascending order", "[code]") {
  for (const CodeScale scale : {CodeScale::seconds, CodeScale::count}) {
    double previous = -1.0;
    for (unsigned code = 0; code <= kMaxCode; ++code) {
      const double value = decode_value(static_cast<std::uint16_t>(code), scale);
      REQUIRE(value > previous);
      REQUIRE(encode_value(value, scale) == code);
      previous = value;
    }
  }
}

TEST_CASE("Relative error at most 1/2048 from 1 ns to 1e5 s, counts below 2048 exact", "[code]") {
  std::mt19937_64 engine(17);
  std::uniform_real_distribution<double> decades(-9.0, 5.0);
  for (int i = 0; i < 200000; ++i) {
    const double seconds = std::pow(10.0, decades(engine));
    const double decoded = decode_value(encode_value(seconds, CodeScale::seconds), CodeScale::seconds);
    REQUIRE(std::abs(decoded - seconds) <= seconds / 2048.0);
  }
  for (double count = 0; count < 2048; ++count)
    REQUIRE(decode_value(encode_value(count, CodeScale::count), CodeScale::count) == count);
  std::uniform_real_distribution<double> powers(11.0, 62.0);
  for (int i = 0; i < 200000; ++i) {
    const double count = std::floor(std::exp2(powers(engine)));
    const double decoded = decode_value(encode_value(count, CodeScale::count), CodeScale::count);
    REQUIRE(std::abs(decoded - count) <= count / 2048.0);
  }
}

TEST_CASE("Non-finite, negative and huge values", "[code]") {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  for (const CodeScale scale : {CodeScale::seconds, CodeScale::count}) {
    CHECK(encode_value(std::numeric_limits<double>::quiet_NaN(), scale) == 0);
    CHECK(encode_value(kInf, scale) == 0);
    CHECK(encode_value(-kInf, scale) == 0);
    CHECK(encode_value(-3.0, scale) == 0);
    CHECK(encode_value(1e300, scale) == kMaxCode);
  }
  CodeColumn column(CodeScale::seconds);
  for (double v : {1.0, std::numeric_limits<double>::quiet_NaN(), kInf, 2.0}) REQUIRE(column.append(v));
  CHECK(column.non_finite_count() == 2);
  const auto result = column.finalize();
  REQUIRE(result.bins.size() == 3);
  CHECK(result.bins[0].rep() == 0.0);
  CHECK(result.bins[0].count == 2);
  CHECK(result.index == std::vector<std::uint16_t>{1, 0, 0, 2});
}

TEST_CASE("Per-process tables, the exact program merge and the paper's bins match the vectors", "[code][merge]") {
  const auto vectors = load_vectors();
  std::vector<BinTable> tables;
  for (const auto& process : vectors["per_process"]) {
    INFO("rank " << process["rank"].get<int>());
    CodeColumn column(CodeScale::seconds);
    for (double v : process["stream"]) REQUIRE(column.append(v));
    for (std::size_t i = 0; i < column.size(); ++i) CHECK(column.code(i) == process["codes"][i].get<std::uint16_t>());
    const auto result = column.finalize();
    require_bins_match(result.bins, process["bins"]);
    CHECK(as_ints(result.index) == process["final_index_of_each_sample"].get<std::vector<int>>());
    tables.push_back(result.bins);
  }
  const auto program = tremor::merge_program_bins(tables);
  require_bins_match(program.bins, vectors["program_bins"]);
  const auto paper = tremor::merge_closest_bins(tables, vectors["paper_global_max_bins"].get<std::size_t>());
  require_bins_match(paper.bins, vectors["paper_bins"]);
  for (std::size_t r = 0; r < tables.size(); ++r) {
    CHECK(as_ints(program.local_to_global[r]) ==
          vectors["per_process"][r]["code_local_to_global"].get<std::vector<int>>());
    CHECK(as_ints(paper.local_to_global[r]) ==
          vectors["per_process"][r]["paper_local_to_global"].get<std::vector<int>>());
  }
}

TEST_CASE("The program merge equals one column holding every rank's values", "[code][merge]") {
  std::mt19937_64 engine(23);
  std::lognormal_distribution<double> draw(-7.0, 1.0);
  std::vector<BinTable> tables;
  CodeColumn all(CodeScale::seconds);
  for (int r = 0; r < 16; ++r) {
    CodeColumn column(CodeScale::seconds);
    for (int i = 0; i < 3000; ++i) {
      const double v = r % 5 == 0 ? 1e-3 * static_cast<double>(i % 7) : draw(engine);
      REQUIRE(column.append(v));
      REQUIRE(all.append(v));
    }
    tables.push_back(column.finalize().bins);
  }
  const auto merged = tremor::merge_program_bins(tables);
  const auto expected = all.finalize().bins;
  REQUIRE(merged.bins.size() == expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    REQUIRE(merged.bins[i].code == expected[i].code);
    REQUIRE(merged.bins[i].count == expected[i].count);
    REQUIRE(merged.bins[i].sum == expected[i].sum);  // bit for bit: value x count on both sides
  }
  for (std::size_t r = 0; r < tables.size(); ++r)
    for (std::size_t i = 0; i < tables[r].size(); ++i)
      REQUIRE(merged.bins[merged.local_to_global[r][i]].code == tables[r][i].code);
}

TEST_CASE("A million values: counts exact, every value within 1/2048 of its bin", "[code]") {
  constexpr std::size_t n = 1'000'000;
  std::mt19937_64 engine(2024);
  std::lognormal_distribution<double> draw(-6.0, 2.0);
  std::vector<double> values(n);
  for (double& v : values) v = draw(engine);
  CodeColumn column(CodeScale::seconds);
  for (double v : values) REQUIRE(column.append(v));
  const auto result = column.finalize();
  std::uint64_t count = 0;
  for (const auto& bin : result.bins) count += bin.count;
  CHECK(count == n);
  for (std::size_t i = 1; i < result.bins.size(); ++i) REQUIRE(result.bins[i - 1].rep() < result.bins[i].rep());
  std::size_t outside = 0;
  std::vector<std::uint64_t> hits(result.bins.size(), 0);
  for (std::size_t i = 0; i < n; ++i) {
    const double rep = result.bins[result.index[i]].rep();
    outside += values[i] >= 1e-9 && std::abs(rep - values[i]) > values[i] / 2048.0;
    ++hits[result.index[i]];
  }
  CHECK(outside == 0);
  for (std::size_t b = 0; b < result.bins.size(); ++b) CHECK(hits[b] == result.bins[b].count);
}
