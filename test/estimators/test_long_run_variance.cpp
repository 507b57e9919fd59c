// Variance inflation factor (Newey–West Bartlett long-run variance with the
// Newey–West 1994 automatic lag) on series with known dependence.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "tremor/estimators/long_run_variance.hpp"

namespace est = tremor::estimators;

namespace {
// x_t = φ x_{t−1} + ε_t, started from the stationary distribution.
std::vector<double> ar1(std::size_t n, double phi, std::uint64_t seed) {
  std::mt19937_64 engine(seed);
  std::normal_distribution<double> noise(0.0, 1.0);
  std::vector<double> series(n);
  double x = noise(engine) / std::sqrt(1.0 - phi * phi);
  for (double& value : series) {
    value = 10.0 + x;
    x = phi * x + noise(engine);
  }
  return series;
}
}  // namespace

TEST_CASE("VIF: hand-computed short series", "[long_run_variance]") {
  // Reference by direct numpy sums of the documented formulas: L = 2,
  // s0 = 0.258541…, s1 = 0.078078…, m = ⌊1.1447·(s1/s0)^{2/3}·24^{1/3}⌋ = 1.
  const std::vector<double> series{3.1, 2.9, 3.4, 3.6, 3.3, 3.0, 2.7, 2.8, 3.2, 3.5, 3.9, 3.7,
                                   3.1, 2.6, 2.5, 2.9, 3.3, 3.4, 3.8, 3.6, 3.0, 2.8, 3.1, 3.2};
  const est::VarianceInflation vif = est::variance_inflation_factor(series);
  CHECK(vif.estimated);
  CHECK(vif.length == 24);
  CHECK(vif.bandwidth == 1);
  CHECK(vif.iid_variance == Approx(0.13805555555555554).epsilon(1e-12));
  CHECK(vif.long_run_variance == Approx(0.2195023148148148).epsilon(1e-12));
  CHECK(vif.ratio == Approx(1.5899564050972503).epsilon(1e-12));
  CHECK(vif.factor == vif.ratio);
}

TEST_CASE("VIF: iid series stays near 1", "[long_run_variance]") {
  for (const std::uint64_t seed : {1u, 2u, 3u}) {
    const est::VarianceInflation vif = est::variance_inflation_factor(ar1(20000, 0.0, seed));
    INFO("seed " << seed << " ratio " << vif.ratio << " lag " << vif.bandwidth);
    CHECK(vif.estimated);
    CHECK(vif.ratio == Approx(1.0).margin(0.1));
    CHECK(vif.factor >= 1.0);
    CHECK(vif.factor < 1.1);
  }
}

TEST_CASE("VIF: AR(1) with phi = 0.5 approaches (1 + phi)/(1 - phi) = 3", "[long_run_variance]") {
  for (const std::uint64_t seed : {11u, 12u}) {
    const est::VarianceInflation vif = est::variance_inflation_factor(ar1(100000, 0.5, seed));
    INFO("seed " << seed << " ratio " << vif.ratio << " lag " << vif.bandwidth);
    // Bartlett bias ≈ −2·Σ jφ^j/(m+1) = −4/(m+1) ≈ −0.06 at m ≈ 64; SD ≈ 0.09.
    CHECK(vif.factor == Approx(3.0).margin(0.3));
    CHECK(vif.bandwidth > 20);
    CHECK(vif.bandwidth <= 185);  // ⌊4·(10⁵)^{1/3}⌋
  }
  // Shorter, as in a run of a few hundred segments: still clearly above 1.
  const est::VarianceInflation short_run = est::variance_inflation_factor(ar1(300, 0.5, 13));
  CHECK(short_run.factor > 1.8);
}

TEST_CASE("VIF: negative dependence never narrows, a trend is capped", "[long_run_variance]") {
  std::vector<double> alternating;
  for (int i = 0; i < 200; ++i) alternating.push_back(i % 2 ? 1.0 : -1.0);
  const est::VarianceInflation negative = est::variance_inflation_factor(alternating);
  CHECK(negative.estimated);
  CHECK(negative.ratio < 1.0);
  CHECK(negative.factor == 1.0);

  std::vector<double> ramp;
  for (int i = 0; i < 100000; ++i) ramp.push_back(0.01 * i);
  const est::VarianceInflation trend = est::variance_inflation_factor(ramp);
  CHECK(trend.capped);
  CHECK(trend.ratio > est::kMaxVarianceInflation);
  CHECK(trend.factor == est::kMaxVarianceInflation);
  CHECK(trend.bandwidth == 185);  // the rule asks for more; the limit ⌊4·(10⁵)^{1/3}⌋
}

TEST_CASE("VIF: constant, short, empty and non-finite input", "[long_run_variance]") {
  const est::VarianceInflation constant = est::variance_inflation_factor(std::vector<double>(100, 0.0223));
  CHECK_FALSE(constant.estimated);
  CHECK(constant.factor == 1.0);
  CHECK(constant.length == 100);

  const std::vector<double> dependent = ar1(100000, 0.9, 5);
  const std::span<const double> first(dependent.data(), est::kMinVarianceInflationLength - 1);
  const est::VarianceInflation short_series = est::variance_inflation_factor(first);
  CHECK_FALSE(short_series.estimated);
  CHECK(short_series.factor == 1.0);
  CHECK(est::variance_inflation_factor(std::vector<double>{}).factor == 1.0);

  // NaN and infinity are dropped; the rest keeps its order and dependence.
  std::vector<double> holes = ar1(2000, 0.5, 7);
  const est::VarianceInflation clean = est::variance_inflation_factor(holes);
  holes.insert(holes.begin() + 10, std::numeric_limits<double>::quiet_NaN());
  holes.push_back(std::numeric_limits<double>::infinity());
  const est::VarianceInflation dropped = est::variance_inflation_factor(holes);
  CHECK(dropped.dropped_non_finite == 2);
  CHECK(dropped.length == 2000);
  CHECK(dropped.factor == clean.factor);
  CHECK(std::isfinite(dropped.factor));
}
