#include <catch2/catch.hpp>

#include <cmath>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <random>

#include "naive_reference.hpp"
#include "tremor/program_merge.hpp"
#include "tremor/quantizer.hpp"

using tremor::BinTable;
using tremor::QuantizedColumn;
using tremor::StreamingQuantizer;

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
  }
}

}  // namespace

TEST_CASE("Ben-Haim & Tom-Tov example gives 2 | 9.5 | 19.33 | 32.67 | 45", "[quantizer]") {
  const auto vectors = load_vectors()["single"];
  StreamingQuantizer quantizer(vectors["max_bins"].get<std::size_t>());
  QuantizedColumn column(vectors["max_bins"].get<std::size_t>());
  std::vector<std::uint16_t> ids;
  for (double v : vectors["stream"]) {
    ids.push_back(quantizer.insert(v));
    column.append(v);
  }
  CHECK(ids == vectors["returned_ids"].get<std::vector<std::uint16_t>>());
  require_bins_match(quantizer.bins(), vectors["bins"]);
  const std::vector<double> reps{2.0, 9.5, 58.0 / 3.0, 98.0 / 3.0, 45.0};
  for (std::size_t i = 0; i < reps.size(); ++i) CHECK(quantizer.bins()[i].rep() == Approx(reps[i]));
  const auto result = column.finalize();
  CHECK(std::vector<int>(result.index.begin(), result.index.end()) ==
        vectors["final_index_of_each_sample"].get<std::vector<int>>());
}

TEST_CASE("Per-process and program-wide reference vectors", "[quantizer][merge]") {
  const auto vectors = load_vectors();
  std::vector<BinTable> tables;
  for (const auto& process : vectors["per_process"]) {
    QuantizedColumn column(process["max_bins"].get<std::size_t>());
    for (double v : process["stream"]) REQUIRE(column.append(v));
    const auto result = column.finalize();
    INFO("rank " << process["rank"].get<int>());
    require_bins_match(result.bins, process["bins"]);
    CHECK(std::vector<int>(result.index.begin(), result.index.end()) ==
          process["final_index_of_each_sample"].get<std::vector<int>>());
    tables.push_back(result.bins);
  }
  const auto merged = tremor::merge_program_bins(tables, vectors["global_max_bins"].get<std::size_t>());
  require_bins_match(merged.bins, vectors["global_bins"]);
  for (std::size_t r = 0; r < tables.size(); ++r)
    CHECK(std::vector<int>(merged.local_to_global[r].begin(), merged.local_to_global[r].end()) ==
          vectors["per_process"][r]["local_to_global"].get<std::vector<int>>());
}

TEST_CASE("Fast quantizer equals the naive one bit for bit, across id renumberings", "[quantizer]") {
  // 200000 continuous values create ~200000 ids: three renumbering epochs.
  for (std::size_t max_bins : {std::size_t{1}, std::size_t{3}, std::size_t{256}}) {
    INFO("max_bins " << max_bins);
    std::mt19937_64 engine(max_bins);
    std::lognormal_distribution<double> draw(0.0, 1.5);
    std::uniform_int_distribution<int> coarse(0, 20);
    tremor::test::NaiveQuantizer naive{max_bins, {}, {}};
    QuantizedColumn column(max_bins);
    std::vector<std::uint32_t> naive_ids;
    const std::size_t n = max_bins == 256 ? 200000 : 20000;
    for (std::size_t i = 0; i < n; ++i) {
      // Mix continuous values with repeated ones to exercise exact-rep hits.
      const double v = i % 3 == 0 ? static_cast<double>(coarse(engine)) : draw(engine);
      naive_ids.push_back(naive.insert(v));
      REQUIRE(column.append(v));
    }
    const auto result = column.finalize();
    REQUIRE(tremor::test::same_bins(result.bins, naive.table()));
    if (max_bins == 256) {  // alone, the quantizer retires ids instead of renumbering: same bins
      StreamingQuantizer alone(max_bins);
      engine.seed(max_bins);
      draw.reset();
      coarse.reset();
      for (std::size_t i = 0; i < n; ++i) alone.insert(i % 3 == 0 ? static_cast<double>(coarse(engine)) : draw(engine));
      CHECK(tremor::test::same_bins(alone.bins(), result.bins));
    }
    const auto dense = naive.dense_all();
    std::size_t mismatches = 0;
    for (std::size_t i = 0; i < n; ++i) mismatches += result.index[i] != dense[naive_ids[i]];
    CHECK(mismatches == 0);
  }
}

TEST_CASE("A million inserts keep count exact, sum within its rounding bound, values inside their bin", "[quantizer]") {
  constexpr std::size_t n = 1'000'000;
  std::mt19937_64 engine(2024);
  std::lognormal_distribution<double> draw(-6.0, 2.0);
  std::vector<double> values(n);
  for (double& v : values) v = draw(engine);
  QuantizedColumn column;
  for (double v : values) REQUIRE(column.append(v));
  const auto result = column.finalize();
  REQUIRE(result.bins.size() == StreamingQuantizer::kMaxBins);

  std::uint64_t count = 0;
  double bin_sum = 0.0, abs_sum = 0.0;
  long double exact_sum = 0.0L;
  for (const auto& bin : result.bins) {
    count += bin.count;
    bin_sum += bin.sum;
  }
  for (double v : values) {
    exact_sum += v;
    abs_sum += std::abs(v);
  }
  CHECK(count == n);
  // Every bin sum is a tree of at most n additions of positive values, so the
  // total error is at most (n + bins) * u * sum|x| with u = 2^-53.
  const double bound = static_cast<double>(n + result.bins.size()) * std::ldexp(1.0, -53) * abs_sum;
  CHECK(std::abs(bin_sum - static_cast<double>(exact_sum)) <= bound);

  for (std::size_t i = 1; i < result.bins.size(); ++i) REQUIRE(result.bins[i - 1].rep() < result.bins[i].rep());
  std::size_t outside = 0;
  std::vector<std::uint64_t> hits(result.bins.size(), 0);
  for (std::size_t i = 0; i < n; ++i) {
    const auto& bin = result.bins[result.index[i]];
    outside += values[i] < bin.min || values[i] > bin.max;
    ++hits[result.index[i]];
  }
  CHECK(outside == 0);
  for (std::size_t b = 0; b < result.bins.size(); ++b) CHECK(hits[b] == result.bins[b].count);
}

TEST_CASE("Non-finite values are counted and stored as zero", "[quantizer]") {
  QuantizedColumn column(4);
  for (double v : {1.0, std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity(), 2.0})
    REQUIRE(column.append(v));
  CHECK(column.quantizer().non_finite_count() == 2);
  const auto result = column.finalize();
  REQUIRE(result.bins.size() == 3);
  CHECK(result.bins[0].rep() == 0.0);
  CHECK(result.bins[0].count == 2);
  CHECK(result.index[1] == 0);
}
