// The accelerated EM (IntrinsicOptions::em_accelerate, SQUAREM in
// intrinsic.cpp) reaches the plain EM's fixed point, and in fewer steps: with
// a step budget too small for the plain EM it lands nearer that point. Fails
// for an extrapolation that moves the wrong way, skips the settling step,
// leaves the parameters' range, or stops early.
#include <catch2/catch.hpp>
#include <cmath>
#include <random>
#include <span>
#include <vector>

#include "tremor/estimators/intrinsic.hpp"

using namespace tremor::estimators;

namespace {

// 8 groups of 400 segments: 2 % jitter, a share `delayed` of the segments
// delayed by `mean_delay` of their time on average.
std::vector<std::vector<double>> planted(double delayed, double mean_delay, std::uint64_t seed) {
  std::mt19937_64 engine(seed);
  std::normal_distribution<double> jitter(0.0, 0.02);
  std::bernoulli_distribution is_delayed(delayed);
  std::exponential_distribution<double> delay(1.0 / mean_delay);
  std::vector<std::vector<double>> groups(8);
  for (std::size_t g = 0; g < groups.size(); ++g) {
    const double intrinsic = 0.001 * static_cast<double>(g + 1);
    for (int i = 0; i < 400; ++i)
      groups[g].push_back(intrinsic * (1.0 + jitter(engine) + (is_delayed(engine) ? delay(engine) : 0.0)));
  }
  return groups;
}

IntrinsicEstimate fitted(const std::vector<std::vector<double>>& groups, bool accelerate, int steps, double tolerance) {
  const std::vector<std::span<const double>> spans(groups.begin(), groups.end());
  IntrinsicOptions options;
  options.em_accelerate = accelerate;
  options.em_iterations = steps;
  options.em_tolerance = tolerance;
  options.charge_segments = false;
  return estimate_intrinsic(spans, options);
}

double distance(const IntrinsicEstimate& a, const IntrinsicEstimate& b) {
  return std::fabs(a.delay_probability - b.delay_probability) +
         std::fabs(a.relative_delay_mean - b.relative_delay_mean) / std::max(1.0, b.relative_delay_mean) +
         std::fabs(a.relative_spread - b.relative_spread) / b.relative_spread;
}

}  // namespace

TEST_CASE("the accelerated EM reaches the plain EM's fixed point, and sooner", "[intrinsic]") {
  struct Case {
    double delayed, mean_delay;
    std::uint64_t seed;
  };
  const Case cases[] = {{0.05, 0.5, 1}, {0.15, 0.05, 2}, {0.5, 0.2, 3}, {0.02, 3.0, 4}, {0.3, 0.08, 5}};
  int nearer = 0;
  for (const Case& c : cases) {
    const auto groups = planted(c.delayed, c.mean_delay, c.seed);
    const IntrinsicEstimate plain = fitted(groups, false, 5000, 1e-12);
    const IntrinsicEstimate fast = fitted(groups, true, 5000, 1e-12);
    INFO("delayed " << c.delayed << " mean delay " << c.mean_delay << ": p " << plain.delay_probability << " / "
                    << fast.delay_probability << ", tau " << plain.relative_delay_mean << " / "
                    << fast.relative_delay_mean << ", sigma " << plain.relative_spread << " / " << fast.relative_spread);
    CHECK(distance(fast, plain) < 1e-6);
    for (std::size_t g = 0; g < groups.size(); ++g)
      CHECK(std::fabs(fast.groups[g].baseline - plain.groups[g].baseline) < 1e-9 * plain.groups[g].baseline);
    // Six EM steps each: the accelerated one lands nearer the fixed point.
    const double plain_short = distance(fitted(groups, false, 6, 1e-12), plain);
    const double fast_short = distance(fitted(groups, true, 6, 1e-12), plain);
    INFO("after 6 steps: plain " << plain_short << ", accelerated " << fast_short);
    CHECK(fast_short <= plain_short);
    if (fast_short < 0.5 * plain_short) ++nearer;
  }
  // Where the plain EM has not converged within 6 steps, the acceleration shows.
  CHECK(nearer >= 2);
}

// The refits' bins (IntrinsicOptions::em_bin_width_in_spreads, sigma / 64)
// move the converged fit by far less than the refits' tolerance (1e-4), while
// bins 64 times as wide move it measurably: the bins are what the EM sees.
TEST_CASE("the EM on residuals merged into bins of sigma / 64 lands on the fit of the residuals themselves",
          "[intrinsic]") {
  struct Case {
    double delayed, mean_delay;
    std::uint64_t seed;
  };
  const Case cases[] = {{0.05, 0.5, 11}, {0.15, 0.05, 12}, {0.5, 0.2, 13}, {0.02, 3.0, 14}, {0.3, 0.08, 15}};
  double widest_fine = 0.0;
  double widest_coarse = 0.0;
  for (const Case& c : cases) {
    const auto groups = planted(c.delayed, c.mean_delay, c.seed);
    const std::vector<std::span<const double>> spans(groups.begin(), groups.end());
    IntrinsicOptions options;
    options.em_tolerance = 1e-12;
    options.em_iterations = 5000;
    options.em_accelerate = true;
    options.charge_segments = false;
    const IntrinsicEstimate exact = estimate_intrinsic(spans, options);
    options.em_bin_width_in_spreads = 1.0 / 64.0;
    const IntrinsicEstimate fine = estimate_intrinsic(spans, options);
    options.em_bin_width_in_spreads = 1.0;
    const IntrinsicEstimate coarse = estimate_intrinsic(spans, options);
    widest_fine = std::max(widest_fine, distance(fine, exact));
    widest_coarse = std::max(widest_coarse, distance(coarse, exact));
  }
  INFO("largest distance with bins of sigma / 64: " << widest_fine << ", of sigma: " << widest_coarse);
  CHECK(widest_fine < 5e-5);
  CHECK(widest_coarse > 10.0 * widest_fine);
}
