// Prediction intervals under autocorrelated segment times: the same maxima in
// time order (slow periods lasting several segments) and shuffled give the
// same medians, but the ordered run's intervals are wider by √(VIF ratio).
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <random>

#include "synthetic_run.hpp"
#include "analysis_internal.hpp"
#include "tremor/analysis/analysis.hpp"

using namespace tremor;
using namespace tremor::analysis;
using tremor::test::SyntheticGroup;
using tremor::test::SyntheticSpec;

namespace {

// 300 relative deviations of an AR(1) with φ = 0.7 (SD ≈ 2 %): long-run over
// iid variance (1 + φ)/(1 − φ) ≈ 5.7.
std::vector<double> autocorrelated_pattern() {
  std::mt19937_64 engine(8);
  std::normal_distribution<double> noise(0.0, 0.02 * std::sqrt(1.0 - 0.49));
  std::vector<double> pattern;
  double x = 0.0;
  for (int i = 0; i < 300; ++i) {
    x = 0.7 * x + noise(engine);
    pattern.push_back(x);
  }
  return pattern;
}

RunAnalysis analyze_pattern(const std::vector<double>& pattern) {
  SyntheticSpec spec;
  spec.groups = {SyntheticGroup{1e6, 0.022, pattern.size()}};
  spec.relative_pattern = pattern;
  AnalysisParameters parameters;
  parameters.replicas = 200;
  return analyze_run(tremor::test::synthetic_run(spec), parameters);
}

bool warned(const RunAnalysis& analysis) {
  return std::any_of(analysis.warnings.begin(), analysis.warnings.end(),
                     [](const Warning& w) { return w.code == "autocorrelated_segments"; });
}

}  // namespace

TEST_CASE("autocorrelated segment times widen the prediction intervals", "[analysis][dependence]") {
  const std::vector<double> ordered_pattern = autocorrelated_pattern();
  std::vector<double> shuffled_pattern = ordered_pattern;
  std::shuffle(shuffled_pattern.begin(), shuffled_pattern.end(), std::mt19937_64(3));
  const RunAnalysis ordered = analyze_pattern(ordered_pattern);
  const RunAnalysis shuffled = analyze_pattern(shuffled_pattern);

  INFO("VIF ordered " << ordered.prediction_variance_inflation << ", shuffled "
                      << shuffled.prediction_variance_inflation);
  CHECK(ordered.prediction_variance_inflation > 2.5);
  CHECK(shuffled.prediction_variance_inflation < 1.3);  // iid: (nearly) the independent interval
  CHECK(warned(ordered));
  CHECK_FALSE(warned(shuffled));

  // Same values, so the same fits and bootstraps: only the widening differs.
  REQUIRE(ordered.predictions.size() == shuffled.predictions.size());
  REQUIRE_FALSE(ordered.predictions.empty());
  const double widening = std::sqrt(ordered.prediction_variance_inflation / shuffled.prediction_variance_inflation);
  for (std::size_t i = 0; i < ordered.predictions.size(); ++i) {
    const Prediction& a = ordered.predictions[i];
    const Prediction& b = shuffled.predictions[i];
    INFO(a.method << " x" << a.factor);
    CHECK(a.variance_inflation == ordered.prediction_variance_inflation);
    CHECK(a.median_s == Approx(b.median_s).epsilon(1e-12));
    CHECK(a.ci_high_s - a.median_s == Approx(widening * (b.ci_high_s - b.median_s)).epsilon(1e-9));
    CHECK(a.median_s - a.ci_low_s == Approx(widening * (b.median_s - b.ci_low_s)).epsilon(1e-9));
    CHECK(a.ci_high_s - a.ci_low_s > 1.4 * (b.ci_high_s - b.ci_low_s));
  }
}

TEST_CASE("group levels are not mistaken for autocorrelation", "[analysis][dependence]") {
  // Two groups, 10 ms and 25 ms, in blocks of 20 segments: the raw durations
  // are strongly autocorrelated, the residuals from the group means are not.
  SyntheticSpec spec;
  spec.groups = {SyntheticGroup{1e6, 0.010, 200}, SyntheticGroup{5e6, 0.025, 200}};
  std::mt19937_64 engine(4);
  std::normal_distribution<double> noise(0.0, 0.01);
  for (int i = 0; i < 200; ++i) spec.relative_pattern.push_back(noise(engine));
  RunData run = tremor::test::synthetic_run(spec);
  // Reorder the interleaved segments into blocks: 20 of one group, 20 of the other.
  const std::vector<std::size_t> group_of = tremor::test::synthetic_group_of(spec);
  std::vector<std::size_t> members[2];
  for (std::size_t s = 0; s < group_of.size(); ++s) members[group_of[s]].push_back(s);
  std::vector<std::size_t> order;
  for (std::size_t block = 0; block < 10; ++block) {
    for (std::size_t g = 0; g < 2; ++g) {
      for (std::size_t i = 0; i < 20; ++i) order.push_back(members[g][block * 20 + i]);
    }
  }
  const auto permute = [&](auto& column) {
    auto copy = column;
    for (std::size_t i = 0; i < order.size(); ++i) column[i] = copy[order[i]];
  };
  permute(run.segments.duration_s);
  permute(run.segments.duration_upper_s);
  permute(run.segments.work);
  permute(run.segments.signature);
  AnalysisParameters parameters;
  parameters.replicas = 100;
  const RunAnalysis result = analyze_run(run, parameters);
  REQUIRE(result.usable_groups == 2);
  REQUIRE_FALSE(result.predictions.empty());
  CHECK(result.prediction_variance_inflation < 1.5);
  CHECK_FALSE(warned(result));
}

TEST_CASE("quantile_subsample picks the same order statistics as a full sort", "[prediction]") {
  std::mt19937_64 engine(5);
  std::lognormal_distribution<double> draw(-6.0, 1.0);
  std::uniform_int_distribution<int> coarse(0, 9);
  for (const std::size_t n : {std::size_t{1}, std::size_t{7}, std::size_t{100}, std::size_t{5000}}) {
    for (const std::size_t limit : {std::size_t{1}, std::size_t{2}, std::size_t{8}, std::size_t{99}, std::size_t{4096}}) {
      std::vector<double> values(n);
      for (std::size_t i = 0; i < n; ++i) values[i] = i % 3 == 0 ? 1e-3 * coarse(engine) : draw(engine);  // with ties
      std::vector<double> sorted = values;
      std::sort(sorted.begin(), sorted.end());
      std::vector<double> expected = sorted;
      if (n > limit && limit >= 2) {
        expected.resize(limit);
        const double step = static_cast<double>(n - 1) / static_cast<double>(limit - 1);
        for (std::size_t i = 0; i < limit; ++i)
          expected[i] = sorted[static_cast<std::size_t>(std::llround(step * static_cast<double>(i)))];
      }
      INFO("n " << n << " limit " << limit);
      CHECK(tremor::analysis::detail::quantile_subsample(values, limit) == expected);
    }
  }
}
