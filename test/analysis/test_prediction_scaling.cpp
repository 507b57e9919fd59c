// What changes with the process count beyond more maxima per segment: the
// closing collective's latency, constructed to grow as log2 P (the truth the
// prediction must find), and the headline's choice of method on a sample
// whose PWM fit is valid although many of its bootstrap replicas break.
#include <catch2/catch.hpp>
#include <cmath>
#include <functional>
#include <string>

#include "find_prediction.hpp"
#include "synthetic_run.hpp"
#include "test_helpers.hpp"
#include "tremor/analysis/analysis.hpp"

using namespace tremor;
using namespace tremor::analysis;

namespace {

constexpr double kEulerGamma = 0.5772156649015329;

// One group of `segments` whose maxima are value(p) at p = (j + 0.5)/n in a
// scrambled order (j·7919 mod n), least waits wait(j); run time = Σ maxima.
RunData run_with(std::size_t segments, const std::function<double(double)>& value,
                 const std::function<double(std::size_t)>& wait) {
  test::SyntheticSpec spec;
  spec.groups = {{1e6, 0.020, segments}};
  spec.world_size = 4;
  RunData run = test::synthetic_run(spec);
  double sum = 0.0;
  for (std::size_t s = 0; s < segments; ++s) {
    const std::size_t j = (s * 7919) % segments;
    run.segments.duration_upper_s[s] = value((static_cast<double>(j) + 0.5) / static_cast<double>(segments));
    run.segments.late_wait_s[s] = wait(j);
    sum += run.segments.duration_upper_s[s];
  }
  run.meta.run_time_s = sum;
  return run;
}

}  // namespace

TEST_CASE("a collective whose latency grows as log2 P: the prediction adds the growth",
          "[prediction][collective-latency]") {
  // Truth: at P ranks a segment is the maximum of the ranks' arrivals, a
  // Gumbel(20 ms, 1 ms) over 4 ranks, plus the Allreduce's α·log2 P with
  // α = 0.5 ms. At f·4 ranks it is Gumbel(20 ms + ln f ms, 1 ms) + α·log2(4f).
  constexpr std::size_t kSegments = 400;
  constexpr double kLoc = 0.020, kScale = 0.001, kAlpha = 0.5e-3;
  const auto arrival = [&](double p) { return kLoc - kScale * std::log(-std::log(p)); };
  // The base run's least waits: α·log2 4 = 1 ms (+0–0.4 % jitter), and in
  // every third segment a rank taking turns lengthens it by 2 ms (interference,
  // which stays in the measured durations, not part of the collective's cost).
  const auto least_wait = [&](std::size_t j) {
    return 2.0 * kAlpha * (1.0 + 1e-3 * static_cast<double>(j % 5)) + (j % 3 == 0 ? 2e-3 : 0.0);
  };
  const RunData run = run_with(kSegments, [&](double p) { return arrival(p) + 2.0 * kAlpha; }, least_wait);
  // The same maxima with a negligible collective: no growth to add.
  const RunData flat = run_with(kSegments, [&](double p) { return arrival(p) + 2.0 * kAlpha; },
                                [](std::size_t) { return 1e-9; });
  AnalysisParameters parameters = test::quick_parameters(400);
  parameters.seed = 3;
  const RunAnalysis analysis = analyze_run(run, parameters);
  const RunAnalysis without = analyze_run(flat, parameters);
  for (const double factor : {2.0, 4.0, 8.0}) {
    const double truth = static_cast<double>(kSegments) *
                         (kLoc + kScale * (kEulerGamma + std::log(factor)) + kAlpha * std::log2(4.0 * factor));
    const Prediction& pwm = tremor::test::find_prediction(analysis, "pwm", factor);
    INFO("factor " << factor << ": predicted " << pwm.median_s << " s, truth " << truth << " s");
    CHECK(pwm.median_s == Approx(truth).epsilon(3e-3));
    CHECK(pwm.pi_low_s < truth);
    CHECK(pwm.pi_high_s > truth);
    // Every method adds n·α·log2 f, and so do both intervals.
    const double growth = static_cast<double>(kSegments) * kAlpha * std::log2(factor);
    for (const std::string method : {"nonparametric", "pwm", "mom"}) {
      const Prediction& with_growth = tremor::test::find_prediction(analysis, method, factor);
      const Prediction& no_growth = tremor::test::find_prediction(without, method, factor);
      INFO(method);
      CHECK(with_growth.median_s - no_growth.median_s == Approx(growth).epsilon(0.05));
      CHECK(with_growth.ci_low_s - no_growth.ci_low_s == Approx(growth).epsilon(0.1));
      CHECK(with_growth.pi_high_s - no_growth.pi_high_s == Approx(growth).epsilon(0.1));
    }
  }
}

TEST_CASE("headline: PWM when its fit of the whole sample is valid, however many replicas fall back",
          "[prediction][headline]") {
  // 97 smooth maxima (Normal quantiles, 11 ms ± 0.7 ms), two fast segments
  // (8 ms) and one long delay (38.5 ms). PWM fits the whole sample (k ≈ −0.2,
  // every value inside the support), but the resamples that miss the fast
  // segments or repeat the delay put values outside their own fit's support
  // (47 % of 1000 in an independent check) and fall back.
  const auto normal_quantile = [](double p) {  // bisection on erfc: the test's own reference
    double low = -10.0, high = 10.0;
    for (int i = 0; i < 200; ++i) {
      const double middle = 0.5 * (low + high);
      (0.5 * std::erfc(-middle / std::sqrt(2.0)) < p ? low : high) = middle;
    }
    return 0.5 * (low + high);
  };
  const auto value = [&](double p) {
    const auto j = static_cast<std::size_t>(p * 100.0);
    if (j < 2) return 0.008;
    if (j == 99) return 0.0385;
    return 0.011 + 0.0007 * normal_quantile((static_cast<double>(j - 2) + 0.5) / 97.0);
  };
  const RunData run = run_with(100, value, [](std::size_t) { return 1e-6; });
  AnalysisParameters parameters = test::quick_parameters(400);
  parameters.seed = 9;
  const RunAnalysis analysis = analyze_run(run, parameters);
  REQUIRE(analysis.groups.size() == 1);
  const GroupResult& group = analysis.groups.front();
  REQUIRE(group.pwm.usable);
  REQUIRE(std::fabs(group.pwm.k) <= 0.5);
  // The premise: more than a third of PWM's replicas fell back.
  const Prediction& pwm = tremor::test::find_prediction(analysis, "pwm", 2.0);
  REQUIRE(3 * pwm.replicas_failed > static_cast<std::size_t>(parameters.replicas));
  CHECK(analysis.prediction_headline.method == "pwm");
  CHECK_THAT(analysis.prediction_headline.reason, Catch::Contains("replicas fell back"));

  // With the fast segments at 11 ms and a second delay, the whole sample
  // breaks PWM's support (k ≈ −0.52): the headline takes the non-parametric
  // method and says why.
  const RunData broken = run_with(
      100, [&](double p) { return p < 0.02 ? 0.011 : p >= 0.98 ? 0.0385 : value(p); },
      [](std::size_t) { return 1e-6; });
  const RunAnalysis unsupported = analyze_run(broken, parameters);
  INFO("k " << unsupported.groups.front().pwm.k << ", usable " << unsupported.groups.front().pwm.usable);
  CHECK(unsupported.prediction_headline.method == "nonparametric");
  CHECK_THAT(unsupported.prediction_headline.reason, Catch::Contains("for only 0 %"));
}
