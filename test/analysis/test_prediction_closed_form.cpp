// Predictions of a whole run against closed forms: two groups of different
// sizes whose segment maxima are exact quantiles of a known law, a few
// segments outside any group, and a run time 10 % above the sum of the
// segment maxima (so the calibration c = 1.1 matters). The expected maximum
// of f Gumbel draws is ξ + α(γ + ln f) (EMMA is exact there), of f Normal
// draws μ + σ·e_f; one run's spread adds Σ n_g·Var[maximum at f] to the
// variance of the expected total.
#include <catch2/catch.hpp>
#include <cmath>
#include <functional>

#include "find_prediction.hpp"
#include "synthetic_run.hpp"
#include "tremor/analysis/analysis.hpp"

using namespace tremor;
using namespace tremor::analysis;

namespace {

constexpr double kEulerGamma = 0.5772156649015329;
constexpr double kPi = 3.141592653589793;
constexpr double kCalibration = 1.1;
constexpr std::size_t kSizes[] = {400, 200};
constexpr double kOtherSegment_s = 0.1;  // each of the 3 segments of the unusable group

// Φ⁻¹ by bisection on erfc: only the test's reference, not Tremor's code.
double normal_quantile(double p) {
  double low = -10.0, high = 10.0;
  for (int i = 0; i < 200; ++i) {
    const double middle = 0.5 * (low + high);
    (0.5 * std::erfc(-middle / std::sqrt(2.0)) < p ? low : high) = middle;
  }
  return 0.5 * (low + high);
}

// Each usable group's maxima are `quantile((j + 0.5) / n)` in a scrambled
// order (j·7919 mod n: no autocorrelation), the unusable group's are 0.1 s.
RunData run_with_maxima(const std::function<double(std::size_t group, double p)>& quantile) {
  test::SyntheticSpec spec;
  spec.groups = {{1e6, 0.020, kSizes[0]}, {5e6, 0.050, kSizes[1]}, {9e6, kOtherSegment_s, 3}};
  RunData run = test::synthetic_run(spec);
  const std::vector<std::size_t> group_of = test::synthetic_group_of(spec);
  std::vector<std::size_t> seen(3, 0);
  double sum = 0.0;
  for (std::size_t s = 0; s < group_of.size(); ++s) {
    const std::size_t g = group_of[s];
    double& upper = run.segments.duration_upper_s[s];
    if (g < 2) {
      const std::size_t n = kSizes[g];
      const std::size_t j = (seen[g]++ * 7919) % n;
      upper = quantile(g, (static_cast<double>(j) + 0.5) / static_cast<double>(n));
    }
    sum += upper;
  }
  run.meta.run_time_s = kCalibration * sum;
  return run;
}

AnalysisParameters parameters() {
  AnalysisParameters p;  // scales 2, 4, 8; 1000 replicas
  p.seed = 5;
  return p;
}

}  // namespace

TEST_CASE("PWM predictions of Gumbel maxima: the closed form, calibrated, weighted by group size",
          "[prediction][closed-form]") {
  const double loc[] = {0.020, 0.050}, scale[] = {0.001, 0.004};
  const RunData run =
      run_with_maxima([&](std::size_t g, double p) { return loc[g] - scale[g] * std::log(-std::log(p)); });
  const RunAnalysis analysis = analyze_run(run, parameters());
  REQUIRE(analysis.prediction_variance_inflation < 1.3);
  const double widening = std::sqrt(analysis.prediction_variance_inflation);
  for (const double factor : {2.0, 4.0, 8.0}) {
    double expected = 3 * kOtherSegment_s, run_variance = 0.0;
    for (std::size_t g = 0; g < 2; ++g) {
      expected += static_cast<double>(kSizes[g]) * (loc[g] + scale[g] * (kEulerGamma + std::log(factor)));
      run_variance += static_cast<double>(kSizes[g]) * scale[g] * scale[g] * kPi * kPi / 6.0;  // Gumbel: any f
    }
    expected *= kCalibration;
    const Prediction& pwm = tremor::test::find_prediction(analysis, "pwm", factor);
    INFO("factor " << factor << ": predicted " << pwm.median_s << " s, closed form " << expected << " s");
    CHECK(pwm.median_s == Approx(expected).epsilon(3e-3));
    CHECK(pwm.pi_low_s < pwm.ci_low_s);
    CHECK(pwm.pi_high_s > pwm.ci_high_s);
    // Variances add: each simulated run spreads about its replica's expected
    // total, so the prediction interval's half-width² less the CI's is one
    // run's spread, (z·c)²·Σ n_g·Var[one maximum].
    const double ci_half = 0.5 * (pwm.ci_high_s - pwm.ci_low_s) / widening;
    const double pi_half = 0.5 * (pwm.pi_high_s - pwm.pi_low_s) / widening;
    const double one_run = std::pow(1.959964 * kCalibration, 2) * run_variance;
    CHECK(pi_half * pi_half - ci_half * ci_half == Approx(one_run).epsilon(0.3));
  }
  CHECK(analysis.prediction_headline.method == "pwm");
}

TEST_CASE("non-parametric predictions of Normal maxima: the expected maximum of f Normal draws",
          "[prediction][closed-form]") {
  const double mean[] = {0.020, 0.050}, sd[] = {0.001, 0.0025};
  // Mean and variance of the maximum of f standard Normal draws (Harter 1961).
  struct Moments {
    double factor, mean, variance;
  };
  const std::vector<Moments> maximum = {
      {2.0, 0.5641896, 0.6816901}, {4.0, 1.0293754, 0.4916606}, {8.0, 1.4236003, 0.3729600}};
  const RunData run = run_with_maxima([&](std::size_t g, double p) { return mean[g] + sd[g] * normal_quantile(p); });
  const RunAnalysis analysis = analyze_run(run, parameters());
  REQUIRE(analysis.prediction_variance_inflation < 1.3);
  const double widening = std::sqrt(analysis.prediction_variance_inflation);
  for (const Moments& m : maximum) {
    double expected = 3 * kOtherSegment_s, run_variance = 0.0;
    for (std::size_t g = 0; g < 2; ++g) {
      expected += static_cast<double>(kSizes[g]) * (mean[g] + sd[g] * m.mean);
      run_variance += static_cast<double>(kSizes[g]) * sd[g] * sd[g] * m.variance;
    }
    expected *= kCalibration;
    const Prediction& nonparametric = tremor::test::find_prediction(analysis, "nonparametric", m.factor);
    INFO("factor " << m.factor << ": predicted " << nonparametric.median_s << " s, closed form " << expected << " s");
    CHECK(nonparametric.median_s == Approx(expected).epsilon(2e-3));
    // Variances add, as above.
    const double ci_half = 0.5 * (nonparametric.ci_high_s - nonparametric.ci_low_s) / widening;
    const double pi_half = 0.5 * (nonparametric.pi_high_s - nonparametric.pi_low_s) / widening;
    const double one_run = std::pow(1.959964 * kCalibration, 2) * run_variance;
    CHECK(pi_half * pi_half - ci_half * ci_half == Approx(one_run).epsilon(0.3));
  }
}
