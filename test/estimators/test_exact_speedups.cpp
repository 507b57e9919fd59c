// The analysis's speed-ups that must leave every number as it was
// (docs/analysis-time.md): each is checked, bit for bit, against the direct
// computation it replaces.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <random>
#include <vector>

#include "../../estimators/statistics/src/sorted_resample.hpp"
#include "tremor/estimators/collective_latency.hpp"
#include "tremor/estimators/delay_posterior.hpp"

namespace est = tremor::estimators;

namespace {

constexpr double kLogRootTwoPi = 0.91893853320467274178;

double reference_mills(double z) {
  if (z > -8.0) return std::exp(-0.5 * z * z - kLogRootTwoPi) / (0.5 * std::erfc(-z / std::numbers::sqrt2));
  const double inverse_square = 1.0 / (z * z);
  return -z / (1.0 - inverse_square + 3.0 * inverse_square * inverse_square);
}

// The posterior as one call computes it, every logarithm in place.
est::SegmentPosterior reference_posterior(double r, double sigma, double p, double tau) {
  const double log_clean = std::log1p(-p) - 0.5 * (r / sigma) * (r / sigma) - std::log(sigma) - kLogRootTwoPi;
  const double ratio = sigma / tau;
  const double shifted = r - sigma * ratio;
  const double z = shifted / sigma;
  const double cdf = z > -30.0 ? 0.5 * std::erfc(-z / std::numbers::sqrt2) : 0.0;
  const double log_cdf = z > -30.0 ? std::log(cdf) : -0.5 * z * z - kLogRootTwoPi - std::log(-z);
  const double log_delayed = std::log(p) - std::log(tau) + 0.5 * ratio * ratio - r / tau + log_cdf;
  const double difference = log_clean - log_delayed;
  const double probability = difference > 700.0 ? 0.0 : 1.0 / (1.0 + std::exp(difference));
  const double mills = z > -8.0 ? std::exp(-0.5 * z * z - kLogRootTwoPi) / cdf : reference_mills(z);
  return {probability, probability * std::max(0.0, shifted + sigma * mills)};
}

// The EM's clean second moment, its Mills ratio at (r - sigma^2 / tau) / sigma.
double reference_clean_square(double r, double sigma, double p, double tau) {
  const double probability = reference_posterior(r, sigma, p, tau).probability;
  const double m = r - sigma * sigma / tau;
  const double lambda = reference_mills(m / sigma);
  const double mean_u = std::max(0.0, m + sigma * lambda);
  const double variance_u = std::max(0.0, sigma * sigma * (1.0 - (m / sigma) * lambda - lambda * lambda));
  const double delayed = (r - mean_u) * (r - mean_u) + variance_u;
  return (1.0 - probability) * r * r + probability * delayed;
}

}  // namespace

// Known-wrong: one constant log(1 - p) - log(sigma) (another rounding), or
// the posterior's Mills ratio reused when sigma (sigma / tau) and
// sigma^2 / tau round apart; both change last digits here.
TEST_CASE("DelayPosterior gives one call's posterior and clean moment, bit for bit", "[exact]") {
  std::size_t shared = 0;
  std::size_t apart = 0;
  for (double sigma = 0.0013; sigma < 0.05; sigma *= 1.37) {
    for (const double tau : {4.1 * sigma, 0.03, 0.2, 0.77}) {
      const double p = 0.0371;
      (sigma * (sigma / tau) == sigma * sigma / tau ? shared : apart) += 1;
      const est::DelayPosterior posterior(sigma, p, tau);
      for (double r = -0.2; r < 1.5; r += 0.0137) {
        const est::SegmentPosterior expected = reference_posterior(r, sigma, p, tau);
        const est::DelayPosterior::WithCleanSquare got = posterior.with_clean_square(r);
        CHECK(got.posterior.probability == expected.probability);
        CHECK(got.posterior.delay == expected.delay);
        CHECK(posterior.probability(r) == expected.probability);
        CHECK(got.clean_square == reference_clean_square(r, sigma, p, tau));
      }
    }
  }
  REQUIRE(shared > 0);  // both paths of the clean moment were taken
  REQUIRE(apart > 0);
}

// Known-wrong: counting picks by source index instead of rank (the source
// unsorted), or a different number of picks (the engine then moves on apart).
TEST_CASE("SortedResampler draws what resampling and sorting would, from the same picks", "[exact]") {
  std::mt19937_64 make(11);
  std::lognormal_distribution<double> value(0.0, 0.5);
  std::vector<double> source(97);
  for (double& x : source) x = value(make);
  source[5] = source[40];  // repeated values keep their count
  std::mt19937_64 engine(3);
  std::mt19937_64 reference_engine(3);
  est::detail::SortedResampler resampler(source);
  std::vector<double> drawn;
  for (int replica = 0; replica < 20; ++replica) {
    std::uniform_int_distribution<std::size_t> pick(0, source.size() - 1);
    std::vector<double> expected(source.size());
    for (double& x : expected) x = source[pick(reference_engine)];
    std::sort(expected.begin(), expected.end());
    resampler.draw(drawn, engine);
    REQUIRE(drawn == expected);
  }
  CHECK(engine() == reference_engine());
}

// Known-wrong: latencies that depend on how many replicas are asked for
// (e.g. drawn by factor, or in another order): the per-rank variants then
// read other replicas than their own draws would give.
TEST_CASE("collective latency replicas: fewer replicas are a prefix of more", "[exact]") {
  std::vector<double> waits;
  for (int i = 0; i < 60; ++i) waits.push_back(1e-5 * (1.0 + 0.37 * ((i * 17) % 23)));
  const std::vector<double> factors{2.0, 4.0, 8.0};
  std::mt19937_64 more_engine(5);
  const std::vector<double> more = est::collective_latency_replicas(waits, 4.0, 80, more_engine);
  std::mt19937_64 fewer_engine(5);
  const std::vector<std::vector<double>> fewer = est::collective_latency_growth_replicas(waits, 4.0, factors, 30, fewer_engine);
  REQUIRE(more.size() == 80);
  CHECK(est::collective_latency_growth_of(more, 4.0, factors, 30) == fewer);
  CHECK(fewer[2][7] > 0.0);
}
