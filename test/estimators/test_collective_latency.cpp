// The growth of a tree collective's latency with the process count
// (docs/statistics.md#collective-latency): ⌈log2 P⌉ rounds, α from the low
// end of the base run's least waits.
#include <catch2/catch.hpp>

#include <algorithm>
#include <random>
#include <vector>

#include "tremor/estimators/collective_latency.hpp"

namespace est = tremor::estimators;

TEST_CASE("a tree collective takes ceil(log2 P) rounds", "[collective-latency]") {
  CHECK(est::collective_rounds(1) == 0.0);
  CHECK(est::collective_rounds(2) == 1.0);
  CHECK(est::collective_rounds(4) == 2.0);
  CHECK(est::collective_rounds(5) == 3.0);
  CHECK(est::collective_rounds(32) == 5.0);
  CHECK(est::collective_rounds(33) == 6.0);
  CHECK(est::collective_rounds(1024) == 10.0);
}

TEST_CASE("the latency grows by the added rounds at the base run's cost per round", "[collective-latency]") {
  // 2 ms over 4 processes is 1 ms a round: 32 processes take 5 rounds, 3 more.
  CHECK(est::collective_latency_growth(2e-3, 4, 8) == Approx(3e-3));
  CHECK(est::collective_latency_growth(2e-3, 4, 2) == Approx(1e-3));
  // 6 → 12 processes: 3 → 4 rounds.
  CHECK(est::collective_latency_growth(3e-3, 6, 2) == Approx(1e-3));
  // Nothing to learn from one process, nothing to add at the same size.
  CHECK(est::collective_latency_growth(2e-3, 1, 8) == 0.0);
  CHECK(est::collective_latency_growth(2e-3, 4, 1) == 0.0);
}

TEST_CASE("bootstrap replicas of the growth resample the low end of the least waits", "[collective-latency]") {
  const std::vector<double> factors = {1.0, 2.0, 8.0};
  std::mt19937_64 engine(7);
  // Constant waits: every replica is the closed form.
  const std::vector<double> constant(50, 2e-3);
  const auto fixed = est::collective_latency_growth_replicas(constant, 4, factors, 100, engine);
  REQUIRE(fixed.size() == 3);
  for (const double growth : fixed[0]) CHECK(growth == 0.0);
  for (const double growth : fixed[2]) CHECK(growth == Approx(3e-3));
  // The collective costs 2 ms (±0.5 %) over 4 processes; in 3 of every 4
  // segments ranks taking turns on a core lengthen it by 1–30 ms. The
  // lengthened waits are interference, not the collective's cost: the growth
  // stays that of 2 ms (a median or mean would read 5–10 times more).
  std::vector<double> waits;
  for (int j = 0; j < 200; ++j) {
    const double clean = 2e-3 * (1.0 + 0.005 * ((j * 7) % 11) / 10.0);
    waits.push_back(j % 4 == 0 ? clean : clean + 1e-3 + 29e-3 * ((j * 13) % 50) / 49.0);
  }
  const auto replicas = est::collective_latency_growth_replicas(waits, 4, factors, 400, engine);
  std::vector<double> at8 = replicas[2];
  std::sort(at8.begin(), at8.end());
  CHECK(at8.front() > 3e-3 * 0.99);
  CHECK(at8.back() < 3e-3 * 1.01);
  CHECK(at8.front() < at8.back());  // the quantile's uncertainty
  // No waits or one process: no growth.
  CHECK(est::collective_latency_growth_replicas({}, 4, factors, 10, engine)[2] == std::vector<double>(10, 0.0));
  CHECK(est::collective_latency_growth_replicas(constant, 1, factors, 10, engine)[2] == std::vector<double>(10, 0.0));
}
