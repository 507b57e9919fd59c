// The gap-heap quantizer against the full-scan implementation it replaced
// (quantizer_reference.hpp): same ids, same bins bit for bit, same final bin
// of every sample, over streams built to produce ties (integers, arithmetic
// progressions), repeated values whose rep drifts by rounding (until two bins
// share a rep, as tick-valued times do at boundaries), huge and
// negative values whose sums overflow, and non-finite values.
#include <catch2/catch.hpp>

#include <bit>
#include <cmath>
#include <functional>
#include <limits>
#include <random>
#include <vector>

#include "quantizer_reference.hpp"
#include "tremor/quantizer.hpp"

using tremor::StreamingQuantizer;

namespace {

bool same_bits(double a, double b) { return std::bit_cast<std::uint64_t>(a) == std::bit_cast<std::uint64_t>(b); }

// Feeds the stream to both and compares; returns the number of differences.
std::size_t differences(std::size_t max_bins, const std::vector<double>& stream) {
  tremor::test::ScanQuantizer reference(max_bins);
  StreamingQuantizer fast(max_bins);
  std::size_t different = 0;
  for (const double value : stream) different += reference.insert(value) != fast.insert(value);
  const tremor::BinTable expected = reference.bins();
  const tremor::BinTable actual = fast.bins();
  if (expected.size() != actual.size()) return different + 1;
  for (std::size_t i = 0; i < expected.size(); ++i) {
    different += !same_bits(expected[i].sum, actual[i].sum) || expected[i].count != actual[i].count ||
                 !same_bits(expected[i].min, actual[i].min) || !same_bits(expected[i].max, actual[i].max);
  }
  std::vector<StreamingQuantizer::Id> dense(fast.ids_issued());
  fast.dense_indices(dense);
  const std::vector<std::size_t> expected_dense = reference.dense_all();
  for (std::size_t id = 0; id < dense.size(); ++id) different += dense[id] != expected_dense[id];
  return different;
}

using Stream = std::function<double(std::mt19937_64&, std::size_t)>;

}  // namespace

TEST_CASE("Gap heap gives exactly the full scan's bins, ids and tie-breaking", "[quantizer]") {
  const double huge = std::numeric_limits<double>::max();
  const std::vector<std::pair<const char*, Stream>> streams{
      {"log-normal", [](std::mt19937_64& e, std::size_t) { return std::lognormal_distribution<double>(-7, 1)(e); }},
      {"small integers (equal gaps)",
       [](std::mt19937_64& e, std::size_t) {
         return static_cast<double>(std::uniform_int_distribution<int>(0, 600)(e));
       }},
      {"arithmetic progression, shuffled tails",
       [](std::mt19937_64& e, std::size_t i) {
         return i % 2 ? 0.25 * static_cast<double>(i)
                      : 0.25 * static_cast<double>(std::uniform_int_distribution<int>(0, 2000)(e));
       }},
      {"repeated decimals (reps drift by rounding)",
       [](std::mt19937_64& e, std::size_t) {
         return 0.1 * static_cast<double>(std::uniform_int_distribution<int>(1, 300)(e)) +
                1e-17 * std::uniform_int_distribution<int>(0, 3)(e);
       }},
      {"tick-valued times (repeats drift into bins of equal rep)",
       [](std::mt19937_64& e, std::size_t) {
         // A narrow core of ~100 tick counts repeated many times, and a rare wide tail that fills the table.
         const double spread = std::bernoulli_distribution(0.02)(e) ? 1.0 : 0.005;
         const double ticks = std::round(std::lognormal_distribution<double>(std::log(3000.0), spread)(e));
         return ticks * (1.0 / 2.4e9);
       }},
      {"negative and positive, wide range",
       [](std::mt19937_64& e, std::size_t) {
         const double magnitude = std::pow(10.0, std::uniform_real_distribution<double>(-300, 300)(e));
         return std::bernoulli_distribution(0.5)(e) ? magnitude : -magnitude;
       }},
      {"huge values whose sums overflow",
       [huge](std::mt19937_64& e, std::size_t) {
         const int pick = std::uniform_int_distribution<int>(0, 5)(e);
         if (pick == 0) return huge;
         if (pick == 1) return -huge;
         if (pick == 2) return huge / 2;
         return std::uniform_real_distribution<double>(-1e300, 1e300)(e);
       }},
      {"non-finite and zeros mixed in",
       [](std::mt19937_64& e, std::size_t) {
         const int pick = std::uniform_int_distribution<int>(0, 9)(e);
         if (pick == 0) return std::numeric_limits<double>::quiet_NaN();
         if (pick == 1) return -std::numeric_limits<double>::infinity();
         if (pick == 2) return 0.0;
         if (pick == 3) return -0.0;
         return std::normal_distribution<double>(0, 1)(e);
       }},
      {"one value forever, then a spread",
       [](std::mt19937_64& e, std::size_t i) { return i < 3000 ? 0.3 : std::exponential_distribution<double>(1)(e); }},
  };
  for (const auto& [name, draw] : streams) {
    for (const std::size_t max_bins : {1, 2, 3, 5, 16, 255, 256}) {
      for (std::uint64_t seed = 1; seed <= 3; ++seed) {
        INFO(name << ", max_bins " << max_bins << ", seed " << seed);
        std::mt19937_64 engine(seed);
        std::vector<double> stream(6000);
        for (std::size_t i = 0; i < stream.size(); ++i) stream[i] = draw(engine, i);
        CHECK(differences(max_bins, stream) == 0);
      }
    }
  }
}

TEST_CASE("A copied quantizer continues exactly like the original", "[quantizer]") {
  std::mt19937_64 engine(5);
  std::lognormal_distribution<double> draw(0.0, 1.0);
  StreamingQuantizer original(64);
  for (int i = 0; i < 3000; ++i) original.insert(draw(engine));
  StreamingQuantizer copy(original);
  StreamingQuantizer assigned(8);
  assigned = original;
  std::size_t different = 0;
  for (int i = 0; i < 3000; ++i) {
    const double value = draw(engine);
    const auto id = original.insert(value);
    different += copy.insert(value) != id;
    different += assigned.insert(value) != id;
  }
  CHECK(different == 0);
  CHECK(copy.bins().size() == original.bins().size());
  for (std::size_t i = 0; i < original.bins().size(); ++i) {
    CHECK(copy.bins()[i].sum == original.bins()[i].sum);
    CHECK(assigned.bins()[i].count == original.bins()[i].count);
  }
}
