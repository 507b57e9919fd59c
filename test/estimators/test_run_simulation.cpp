// One simulated run at a larger size against closed forms, and the coverage of
// the prediction interval for one run in simulation: segment maxima over P
// ranks of known per-rank laws, the larger run drawn from the same laws at
// f·P ranks. A confidence interval of the expected run time used as a
// prediction interval must fail the same check.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <random>
#include <vector>

#include "tremor/estimators/bootstrap.hpp"
#include "tremor/estimators/gev.hpp"
#include "tremor/estimators/run_simulation.hpp"

namespace est = tremor::estimators;

namespace {

constexpr double kPi = 3.141592653589793;

// Portable draws (the standard distributions' algorithms are implementation-defined).
double uniform_open(std::mt19937_64& engine) {
  return (static_cast<double>(engine() >> 11) + 0.5) / 9007199254740992.0;
}
double standard_normal(std::mt19937_64& engine) {
  const double u1 = uniform_open(engine), u2 = uniform_open(engine);
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * kPi * u2);
}

struct MomentsOf {
  double mean = 0.0, variance = 0.0;
};
MomentsOf moments(const std::vector<double>& values) {
  MomentsOf m;
  for (const double v : values) m.mean += v;
  m.mean /= static_cast<double>(values.size());
  for (const double v : values) m.variance += (v - m.mean) * (v - m.mean);
  m.variance /= static_cast<double>(values.size() - 1);
  return m;
}

// Var of a GEV (Hosking): α²(Γ(1+2k) − Γ(1+k)²)/k², α²π²/6 at k = 0.
double gev_variance(const est::GevParams& p) {
  if (p.k == 0.0) return p.scale * p.scale * kPi * kPi / 6.0;
  const double g1 = std::tgamma(1.0 + p.k), g2 = std::tgamma(1.0 + 2.0 * p.k);
  return p.scale * p.scale * (g2 - g1 * g1) / (p.k * p.k);
}

// Mean and variance of many simulated run sums of one law.
MomentsOf simulated_sums(const est::MaximumLaw& law, double factor, std::size_t segments, std::uint64_t seed) {
  std::mt19937_64 engine(seed);
  est::RunDraws draws;
  std::vector<double> sums;
  for (int run = 0; run < 20000; ++run) {
    draws.draw(segments, engine);
    sums.push_back(est::simulated_run_sum(law, factor, segments, draws));
  }
  return moments(sums);
}

}  // namespace

TEST_CASE("a simulated run has the mean and variance of n maxima at the factor", "[simulation]") {
  // Max-stability: the maximum of f GEV(ξ, α, k) draws is GEV(ξ + α(1 − f^−k)/k, α f^−k, k).
  for (const est::GevParams params :
       {est::GevParams{10.0, 1.0, 0.0}, est::GevParams{10.0, 1.0, 0.2}, est::GevParams{10.0, 1.0, -0.2}}) {
    for (const double factor : {1.0, 8.0}) {
      for (const std::size_t segments : {std::size_t{20}, std::size_t{500}}) {  // exact, then extrapolated
        INFO("k " << params.k << " factor " << factor << " segments " << segments);
        const MomentsOf result = simulated_sums({false, params, {}}, factor, segments, 11);
        const double n = static_cast<double>(segments);
        const est::GevParams at_factor{params.k == 0.0
                                           ? params.loc + params.scale * std::log(factor)
                                           : params.loc + params.scale * (1.0 - std::pow(factor, -params.k)) / params.k,
                                       params.scale * std::pow(factor, -params.k), params.k};
        const double variance = n * gev_variance(at_factor);
        CHECK(result.mean ==
              Approx(n * est::exact_expected_maximum(params, factor)).margin(5.0 * std::sqrt(variance / 20000.0)));
        CHECK(result.variance == Approx(variance).epsilon(0.06));
      }
    }
  }
  // The empirical law: maxima of f values drawn with replacement.
  std::vector<double> sample;
  for (int j = 1; j <= 50; ++j) sample.push_back(std::sqrt(static_cast<double>(j)));
  for (const std::size_t segments : {std::size_t{10}, std::size_t{300}}) {
    const MomentsOf result = simulated_sums({true, {}, sample}, 4.0, segments, 12);
    const double n = static_cast<double>(segments);
    const double variance = n * est::empirical_maximum_variance(sample, 4.0);
    CHECK(result.mean ==
          Approx(n * est::empirical_expected_maximum(sample, 4.0)).margin(5.0 * std::sqrt(variance / 20000.0)));
    CHECK(result.variance == Approx(variance).epsilon(0.06));
  }
}

TEST_CASE("simulated runs grow with the factor and keep a Gumbel law's closed form", "[simulation]") {
  // Gumbel: E[max of f] = ξ + α(γ + ln f) exactly, and EMMA equals it.
  const est::GevParams gumbel{5.0, 0.5, 0.0};
  std::mt19937_64 engine(3);
  est::RunDraws draws;
  for (int run = 0; run < 200; ++run) {
    draws.draw(50, engine);
    double previous = -INFINITY;
    for (const double factor : {1.0, 2.0, 4.0, 8.0}) {
      const double sum = est::simulated_run_sum({false, gumbel, {}}, factor, 50, draws);
      CHECK(sum > previous);  // the same draws serve every factor
      previous = sum;
    }
  }
  for (const double factor : {2.0, 4.0, 8.0}) {
    const double closed_form = 5.0 + 0.5 * (est::kEulerGamma + std::log(factor));
    CHECK(est::emma(gumbel, factor) == Approx(closed_form).epsilon(1e-14));
    CHECK(simulated_sums({false, gumbel, {}}, factor, 40, 4).mean == Approx(40.0 * closed_form).epsilon(2e-3));
  }
}

namespace {

// One base run's segment maxima over `ranks` ranks, per-rank values from `draw`.
std::vector<double> segment_maxima(const std::function<double(std::mt19937_64&)>& draw, std::size_t segments,
                                   std::size_t ranks, std::mt19937_64& engine) {
  std::vector<double> maxima(segments);
  for (double& maximum : maxima) {
    maximum = -INFINITY;
    for (std::size_t r = 0; r < ranks; ++r) maximum = std::max(maximum, draw(engine));
  }
  return maxima;
}

double run_total(const std::vector<double>& maxima) {
  double total = 0.0;
  for (const double value : maxima) total += value;
  return total;
}

struct Coverage {
  std::vector<double> prediction, confidence;              // per factor: share of runs inside
  std::vector<double> prediction_width, confidence_width;  // per factor: median of (high − low) / median
};

double median_of(std::vector<double> values) {
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(values.size() / 2), values.end());
  return values[values.size() / 2];
}

// Share of `replicates` larger runs whose total lies in the interval
// predicted from an independent base run, per factor.
Coverage coverage(const std::function<double(std::mt19937_64&)>& draw, bool parametric, std::uint64_t seed) {
  constexpr std::size_t kSegments = 100, kRanks = 4, kReplicates = 200, kReplicas = 1000;
  const std::vector<double> factors{1.0, 2.0, 4.0, 8.0};
  Coverage result{std::vector<double>(factors.size()), std::vector<double>(factors.size()), {}, {}};
  std::vector<std::vector<double>> prediction_widths(factors.size()), confidence_widths(factors.size());
  std::mt19937_64 truth(seed), bootstrap(seed + 1);
  for (std::size_t replicate = 0; replicate < kReplicates; ++replicate) {
    const std::vector<double> base = segment_maxima(draw, kSegments, kRanks, truth);
    est::RunTotals totals(factors.size());
    totals.add(parametric
                   ? est::parametric_replicas(base, factors, est::FitMethod::pwm, kReplicas, kSegments, bootstrap)
                   : est::nonparametric_replicas(base, factors, kReplicas, kSegments, bootstrap));
    const std::vector<est::RunInterval> intervals = totals.summarize(0.0, 1.0, 0.95);
    REQUIRE(intervals.size() == factors.size());
    for (std::size_t f = 0; f < factors.size(); ++f) {
      const auto ranks = static_cast<std::size_t>(factors[f]) * kRanks;
      const double actual = run_total(segment_maxima(draw, kSegments, ranks, truth));
      const est::RunInterval& interval = intervals[f];
      result.prediction[f] += (interval.pi_low <= actual && actual <= interval.pi_high) ? 1.0 : 0.0;
      result.confidence[f] += (interval.ci_low <= actual && actual <= interval.ci_high) ? 1.0 : 0.0;
      prediction_widths[f].push_back((interval.pi_high - interval.pi_low) / interval.median);
      confidence_widths[f].push_back((interval.ci_high - interval.ci_low) / interval.median);
    }
  }
  for (std::size_t f = 0; f < factors.size(); ++f) {
    result.prediction[f] /= kReplicates;
    result.confidence[f] /= kReplicates;
    result.prediction_width.push_back(median_of(prediction_widths[f]));
    result.confidence_width.push_back(median_of(confidence_widths[f]));
  }
  return result;
}

}  // namespace

// Base runs of 100 segments over 4 ranks, predicted at 1, 2, 4 and 8 times
// the ranks (1x: another run of the same size). Docs: docs/scale-prediction.md.
TEST_CASE("prediction intervals for one run cover it, confidence intervals do not", "[simulation][coverage]") {
  struct Law {
    const char* name;
    std::function<double(std::mt19937_64&)> draw;
  };
  const std::vector<Law> laws = {
      {"normal", [](std::mt19937_64& e) { return 0.020 + 0.002 * standard_normal(e); }},
      {"lognormal", [](std::mt19937_64& e) { return 0.020 * std::exp(0.3 * standard_normal(e) - 0.045); }},
      // Gumbel-tailed: an exponential tail above 20 ms.
      {"gumbel", [](std::mt19937_64& e) { return 0.020 - 0.002 * std::log(-std::log(uniform_open(e))); }},
  };
  std::uint64_t seed = 100;
  for (const Law& law : laws) {
    for (const bool parametric : {true, false}) {
      const Coverage result = coverage(law.draw, parametric, seed += 10);
      for (std::size_t f = 0; f < result.prediction.size(); ++f) {
        INFO(law.name << (parametric ? " pwm" : " nonparametric") << " factor " << (1 << f) << ": PI covers "
                      << result.prediction[f] << " (width " << 100.0 * result.prediction_width[f] << " %), CI covers "
                      << result.confidence[f] << " (width " << 100.0 * result.confidence_width[f] << " %)");
        // The non-parametric maxima never exceed the base run's largest: 8x
        // beyond 100 maxima it under-covers (0.86-0.92 measured), as documented.
        if (parametric || f < 3) CHECK(result.prediction[f] >= 0.9);
        CHECK(result.prediction[f] >= result.confidence[f]);
        CHECK(result.prediction_width[f] > result.confidence_width[f]);
      }
      // The CI describes the expected run time only: as an interval for one
      // run it fails the same target, most clearly at the same size, where the
      // run's own spread weighs as much as the estimate's.
      CHECK(result.confidence[0] < 0.9);
    }
  }
}

TEST_CASE("the fallback share is of the groups' replicas, never above one", "[simulation]") {
  // Two groups of 10 replicas: every replica of the first fell back at the
  // first factor, none of the second; 5 of each at the second factor.
  const auto group = [](std::vector<std::size_t> failed) {
    est::GroupReplicas replicas;
    replicas.segments = 3;
    replicas.expected.assign(2, std::vector<double>(10, 1.0));
    replicas.failed = std::move(failed);
    return replicas;
  };
  est::RunTotals totals(2);
  totals.add(group({10, 5}));
  totals.add(group({0, 5}));
  CHECK(totals.failed(0) == 10);
  CHECK(totals.fallback_share(0) == Approx(0.5));
  CHECK(totals.fallback_share(1) == Approx(0.5));
  totals.add(group({10, 10}));
  CHECK(totals.fallback_share(0) == Approx(20.0 / 30.0));
  CHECK(totals.fallback_share(1) <= 1.0);
}

// A run of 40 groups whose replicas are Normal draws (sd 1 each, so the run's
// expected total has sd √40): per seed, each group computes only 25 distinct
// replicas and the run's 400 take theirs from them (take_replicas). The ends
// then move between seeds by the stated Monte Carlo error: the percentiles'
// own error over 400 replicas and the groups' mean shifts over 25 draws, the
// larger part. An error without the shifts understates the spread by half.
TEST_CASE("the stated Monte Carlo error is the spread of the interval ends over seeds", "[simulation][monte-carlo]") {
  constexpr std::size_t kGroups = 40, kDistinct = 25, kReplicas = 400, kSeeds = 200;
  std::vector<double> lows, stated;
  for (std::uint64_t seed = 1; seed <= kSeeds; ++seed) {
    std::mt19937_64 engine(seed);
    est::RunTotals totals(1);
    for (std::size_t g = 0; g < kGroups; ++g) {
      est::GroupReplicas group;
      group.segments = 1;
      group.expected.assign(1, {});
      group.one_run.assign(1, {});
      group.failed.assign(1, 0);
      for (std::size_t r = 0; r < kDistinct; ++r) {
        group.expected[0].push_back(standard_normal(engine));
        group.one_run[0].push_back(group.expected[0].back());
      }
      const std::vector<std::size_t> picks = est::replica_choice(kDistinct, kReplicas, engine);
      totals.add(est::take_replicas(group, picks));
    }
    // 100 s beside the groups: the ends stay positive (a run takes no less than no time).
    const std::vector<est::RunInterval> intervals = totals.summarize(100.0, 1.0, 0.95);
    REQUIRE(intervals.size() == 1);
    lows.push_back(intervals[0].ci_low);
    stated.push_back(intervals[0].monte_carlo_error);
  }
  double mean = 0.0, squares = 0.0, stated_mean = 0.0;
  for (const double low : lows) mean += low / kSeeds;
  for (const double low : lows) squares += (low - mean) * (low - mean);
  for (const double error : stated) stated_mean += error / kSeeds;
  const double spread = std::sqrt(squares / (kSeeds - 1));
  // Own error ≈ 2.67·√40/√400 = 0.84, shifts √(40/25) = 1.26: about 1.5 together, 0.84 alone.
  CHECK(stated_mean == Approx(spread).epsilon(0.25));
}

TEST_CASE("replicas taken from fewer keep the run's count and the fallback share", "[simulation][monte-carlo]") {
  std::mt19937_64 engine(3);
  const std::vector<std::size_t> all = est::replica_choice(10, 10, engine);
  CHECK(all == std::vector<std::size_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
  const std::vector<std::size_t> picks = est::replica_choice(4, 1000, engine);
  REQUIRE(picks.size() == 1000);
  CHECK(*std::max_element(picks.begin(), picks.end()) == 3);
  est::GroupReplicas group;
  group.segments = 2;
  group.expected = {{1.0, 2.0, 3.0, 4.0}};
  group.one_run = {{10.0, 20.0, 30.0, 40.0}};
  group.failed = {1};
  const est::GroupReplicas taken = est::take_replicas(group, picks);
  CHECK(taken.distinct == 4);
  REQUIRE(taken.expected[0].size() == 1000);
  for (std::size_t r = 0; r < picks.size(); ++r) {
    CHECK(taken.expected[0][r] == group.expected[0][picks[r]]);
    CHECK(taken.one_run[0][r] == group.one_run[0][picks[r]]);
  }
  CHECK(taken.failed[0] == 250);
}
