// The primary interference estimate on plain vectors with planted truth:
// clean jitter, sparse bursts, most of a group delayed, low outliers, and the
// interval; the paper's 4·MAD figure is computed beside it where it fails.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <random>
#include <span>
#include <vector>

#include "tremor/estimators/interference.hpp"
#include "tremor/estimators/intrinsic.hpp"

using namespace tremor::estimators;

namespace {

struct Planted {
  std::vector<std::vector<double>> groups;
  double truth = 0.0;  // total planted delay, s
  double total = 0.0;  // total duration, s
};

// Groups of n segments at 10, 20, 30 ... ms with normal relative jitter;
// each segment is delayed with probability `share` by an exponential delay
// of mean `relative_delay` times its group's duration.
template <typename Engine = std::mt19937_64>
Planted planted_groups(std::uint64_t seed, std::size_t group_count, std::size_t n, double jitter, double share,
                       double relative_delay) {
  Engine engine(static_cast<typename Engine::result_type>(seed));
  std::normal_distribution<double> noise(0.0, jitter);
  std::bernoulli_distribution delayed(share);
  std::exponential_distribution<double> delay(1.0 / relative_delay);
  Planted planted;
  for (std::size_t g = 0; g < group_count; ++g) {
    const double intrinsic = 0.010 * static_cast<double>(g + 1);
    std::vector<double>& values = planted.groups.emplace_back();
    for (std::size_t i = 0; i < n; ++i) {
      double x = intrinsic * (1.0 + noise(engine));
      if (delayed(engine)) {
        const double extra = intrinsic * delay(engine);
        x += extra;
        planted.truth += extra;
      }
      values.push_back(x);
      planted.total += x;
    }
  }
  return planted;
}

std::vector<std::span<const double>> spans(const std::vector<std::vector<double>>& groups) {
  return {groups.begin(), groups.end()};
}

double mad4_total(const std::vector<std::vector<double>>& groups) {
  double total = 0.0;
  for (const auto& group : groups) total += detect_mad_interference(group).total_impact;
  return total;
}

}  // namespace

TEST_CASE("Blom scores: symmetric, and the minimum of 22 lies 1.91 below the mean", "[intrinsic]") {
  CHECK(blom_normal_score(1, 22) == Approx(-1.91).margin(0.01));
  CHECK(blom_normal_score(2, 20) == Approx(-blom_normal_score(19, 20)).margin(1e-12));
  CHECK(blom_normal_score(3, 5) == Approx(0.0).margin(1e-12));
  CHECK(blom_normal_score(0, 5) == 0.0);
  CHECK(blom_normal_score(6, 5) == 0.0);
}

TEST_CASE("posterior: jitter is not a delay, a large excess is charged almost in full", "[intrinsic]") {
  const double sigma = 0.01, p = 0.1, tau = 0.2;
  const SegmentPosterior jitter = delay_posterior(0.0, sigma, p, tau);
  CHECK(jitter.probability < 0.05);
  CHECK(jitter.delay < 1e-3);
  const SegmentPosterior burst = delay_posterior(0.5, sigma, p, tau);
  CHECK(burst.probability > 0.999);
  CHECK(burst.delay == Approx(0.5 - sigma * sigma / tau).epsilon(1e-6));
  // The charge grows with the excess and never goes negative.
  double previous = 0.0;
  for (double r = -0.05; r < 0.3; r += 0.005) {
    const double delay = delay_posterior(r, sigma, p, tau).delay;
    CHECK(delay >= previous - 1e-15);
    previous = delay;
  }
  CHECK(delay_posterior_variance(0.5, sigma, p, tau) == Approx(sigma * sigma).epsilon(0.01));
  CHECK(delay_posterior(std::nan(""), sigma, p, tau).delay == 0.0);
}

// The bounds of the cases below are |mean| + 4σ of the estimate's error over
// 80 simulations of each case's data (seeds 1-40 of std::mt19937_64 and of
// std::minstd_rand, 2026-11-26), written beside each; the paper's 4·MAD is the
// known-wrong estimator where most segments are delayed.
TEST_CASE("clean jitter only: about nothing is lost", "[intrinsic]") {
  for (const std::uint64_t seed : {1u, 2u, 3u}) {
    const Planted run = planted_groups(seed, 4, 60, 0.01, 0.0, 0.1);
    const IntrinsicEstimate estimate = estimate_intrinsic(spans(run.groups));
    // Simulated: mean 0.0016 %, σ 0.0053 pp.
    CHECK(100.0 * estimate.total_lost / run.total < 0.0016 + 4 * 0.0053);
    // The pooled clean spread is the planted 1 %.
    CHECK(estimate.relative_spread == Approx(0.01).margin(0.003));
    for (std::size_t g = 0; g < 4; ++g) {
      CHECK(estimate.groups[g].baseline == Approx(0.010 * static_cast<double>(g + 1)).epsilon(0.01));
    }
  }
}

TEST_CASE("sparse bursts count in full, not minus 4 MAD", "[intrinsic]") {
  for (const std::uint64_t seed : {11u, 12u, 13u}) {
    const Planted run = planted_groups(seed, 4, 50, 0.01, 0.05, 0.5);
    REQUIRE(run.truth > 0.0);
    const IntrinsicEstimate estimate = estimate_intrinsic(spans(run.groups));
    // Simulated relative error: mean -0.0036, σ 0.0132.
    CHECK(estimate.total_lost == Approx(run.truth).epsilon(0.0036 + 4 * 0.0132));
    // The paper's rule loses 4 MAD on each detected delay.
    CHECK(mad4_total(run.groups) < estimate.total_lost);
  }
}

TEST_CASE("most of a group delayed: the anchor stays on the clean segments", "[intrinsic]") {
  // Simulated error, pp: mean -0.04, σ 0.17 (30 %); -0.03, 0.27 (50 %); -0.08,
  // 0.36 (70 %). The paper's 4·MAD at 70 %: -9.8 pp, σ 1.9.
  const auto bound_pp = [](double share) {
    return share < 0.4 ? 0.04 + 4 * 0.17 : share < 0.6 ? 0.03 + 4 * 0.27 : 0.08 + 4 * 0.36;
  };
  for (const double share : {0.3, 0.5, 0.7}) {
    for (const std::uint64_t seed : {21u, 22u, 23u}) {
      const Planted run = planted_groups(seed, 3, 22, 0.01, share, 0.2);
      const IntrinsicEstimate estimate = estimate_intrinsic(spans(run.groups));
      const double truth_percent = 100.0 * run.truth / run.total;
      const double error_pp = 100.0 * estimate.total_lost / run.total - truth_percent;
      INFO("share " << share << " seed " << seed << " truth " << truth_percent << " %");
      CHECK(std::fabs(error_pp) < bound_pp(share));
      if (share >= 0.7) CHECK(100.0 * mad4_total(run.groups) / run.total < truth_percent - bound_pp(share));
    }
  }
}

// Work values that fill the clean durations: the same relative jitter, no delays.
std::vector<std::vector<double>> work_like(std::uint64_t seed, const Planted& run, double jitter) {
  std::mt19937_64 engine(seed);
  std::normal_distribution<double> noise(0.0, jitter);
  std::vector<std::vector<double>> work;
  for (const auto& group : run.groups) {
    auto& values = work.emplace_back();
    for (std::size_t i = 0; i < group.size(); ++i) values.push_back(1e6 * (1.0 + noise(engine)));
  }
  return work;
}

TEST_CASE("90 % of the segments delayed: the work's spread shows the durations' is not jitter", "[intrinsic]") {
  for (const std::uint64_t seed : {31u, 32u, 33u}) {
    const Planted run = planted_groups(seed, 2, 200, 0.01, 0.9, 0.3);
    const auto work = work_like(seed + 100, run, 0.01);
    const std::vector<std::span<const double>> work_spans(work.begin(), work.end());
    const IntrinsicEstimate with_work = estimate_intrinsic(spans(run.groups), {}, work_spans);
    const double truth_percent = 100.0 * run.truth / run.total;
    INFO("seed " << seed << " truth " << truth_percent << " %, spread ratio " << with_work.unexplained_spread_ratio);
    CHECK(with_work.lower_start_chosen);
    CHECK(with_work.unexplained_spread_ratio > 3.0);
    // Simulated error: mean -0.04 pp, σ 0.34 pp.
    CHECK(std::fabs(100.0 * with_work.total_lost / run.total - truth_percent) < 0.04 + 4 * 0.34);
    // Durations alone cannot tell 90 % delayed from 10 % fast: the default
    // start reads the delays as the clean spread.
    const IntrinsicEstimate without_work = estimate_intrinsic(spans(run.groups));
    CHECK_FALSE(without_work.lower_start_chosen);
    CHECK(without_work.unexplained_spread_ratio == 0.0);
  }
}

// Durations proportional to work that varies by `work_jitter` (a CPU-time
// counter on a busy machine), 90 % of the segments delayed by a normal
// 1 ± 0.3 ms (a sleep in one rank's collective) on 4 and 8 ms segments.
struct ProportionalRun {
  std::vector<std::vector<double>> durations, work;
  double truth = 0.0, total = 0.0;
};

ProportionalRun proportional_run(std::uint64_t seed, double work_jitter, double share) {
  std::mt19937_64 engine(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::bernoulli_distribution delayed(share);
  ProportionalRun run;
  for (int g = 0; g < 2; ++g) {
    auto& durations = run.durations.emplace_back();
    auto& work = run.work.emplace_back();
    for (int i = 0; i < 400; ++i) {
      const double relative_work = 1.0 + work_jitter * normal(engine);
      double x = 0.004 * (g + 1) * (1.0 + 0.005 * normal(engine)) * relative_work;
      if (delayed(engine)) {
        const double extra = std::max(0.0, 0.001 + 0.0003 * normal(engine));
        x += extra;
        run.truth += extra;
      }
      durations.push_back(x);
      work.push_back(1e6 * relative_work);
      run.total += x;
    }
  }
  return run;
}

TEST_CASE("90 % delayed while the work itself varies by 1-2 %: the clean spread stays near the work's",
          "[intrinsic]") {
  // A clean spread allowed up to 3 work spreads, and a share near 1 that left
  // a single "clean" segment for the anchor, read 8.6-11 % here for 13 %.
  // Seeds 1-20 of std::mt19937_64, every one.
  constexpr std::uint64_t kSeeds = 20;
  for (const double work_jitter : {0.005, 0.01, 0.02}) {
    std::uint64_t missed = 0;
    for (std::uint64_t seed = 1; seed <= kSeeds; ++seed) {
      const ProportionalRun run = proportional_run(seed, work_jitter, 0.9);
      const std::vector<std::span<const double>> groups(run.durations.begin(), run.durations.end());
      const std::vector<std::span<const double>> work(run.work.begin(), run.work.end());
      const IntrinsicEstimate estimate = estimate_intrinsic(groups, {}, work);
      const double truth_percent = 100.0 * run.truth / run.total;
      INFO("work jitter " << work_jitter << " seed " << seed << " truth " << truth_percent << " %, ratio "
                          << estimate.unexplained_spread_ratio << ", spread " << estimate.relative_spread);
      // At 2 % the durations' spread is only about 3 work spreads and the
      // ratio's test can miss: over seeds 1-100, 4 (8, 60, 61, 95) read
      // 2.73-2.96, take the default start and read about 13 pp low (the
      // spread taken for jitter); counted below, not excused silently.
      if (work_jitter > 0.015 && !estimate.lower_start_chosen) {
        ++missed;
        continue;
      }
      CHECK(estimate.lower_start_chosen);
      // Simulated error: mean +0.22 pp, σ 0.17 (work jitter 0.5 %); -0.36, 0.24 (1 %).
      // At 2 % the other seeds' error has median -1.0 pp and 5-95 % quantiles
      // -1.7 and -0.2 pp (seeds 1-100): 2 pp is kept there.
      const double bound_pp = work_jitter < 0.007 ? 0.22 + 4 * 0.17 : work_jitter < 0.015 ? 0.36 + 4 * 0.24 : 2.0;
      CHECK(std::fabs(100.0 * estimate.total_lost / run.total - truth_percent) < bound_pp);
    }
    // One of seeds 1-20 misses at 2 % (seed 8); two would be a rate well
    // above the 4 % of seeds 1-100.
    INFO("work jitter " << work_jitter);
    CHECK(missed <= 1);
  }
}

TEST_CASE("clean groups with their work: the default start, about nothing lost", "[intrinsic]") {
  for (const std::uint64_t seed : {41u, 42u, 43u}) {
    const Planted run = planted_groups(seed, 2, 200, 0.01, 0.0, 0.3);
    const auto work = work_like(seed + 100, run, 0.01);
    const std::vector<std::span<const double>> work_spans(work.begin(), work.end());
    const IntrinsicEstimate estimate = estimate_intrinsic(spans(run.groups), {}, work_spans);
    INFO("seed " << seed << ", spread ratio " << estimate.unexplained_spread_ratio);
    CHECK_FALSE(estimate.lower_start_chosen);
    CHECK(estimate.unexplained_spread_ratio < 2.0);
    // Simulated: mean 0.0012 %, σ 0.0051 pp.
    CHECK(100.0 * estimate.total_lost / run.total < 0.0012 + 4 * 0.0051);
  }
}

// The tolerance is 4σ of the primary estimate's error on this data,
// re-simulated with three generators (std::mt19937_64, std::minstd_rand,
// std::ranlux48), 30 seeds each (2026-11-26): mean -0.0025 pp, σ at most
// 0.0041 pp, so |mean| + 4σ = 0.019 pp. The paper's rule loses 4 MAD of each
// burst: -0.107 to -0.137 pp on the same runs, far outside.
template <typename Engine>
void check_2khz_like_run(std::uint64_t seed) {
  constexpr double kTolerancePp = 0.0025 + 4 * 0.0041;
  const Planted run = planted_groups<Engine>(seed, 2, 20000, 0.05, 0.01, 1.0);
  const IntrinsicEstimate estimate = estimate_intrinsic(spans(run.groups));
  const double truth_percent = 100.0 * run.truth / run.total;
  const double mad4_percent = 100.0 * mad4_total(run.groups) / run.total;
  INFO("seed " << seed << ": truth " << truth_percent << " %, 4·MAD " << mad4_percent << " %");
  CHECK(100.0 * estimate.total_lost / run.total == Approx(truth_percent).margin(kTolerancePp));
  CHECK(std::fabs(mad4_percent - truth_percent) > kTolerancePp);
}

TEST_CASE("2 kHz-like run: many short segments, heavy jitter, rare bursts", "[intrinsic]") {
  for (const std::uint64_t seed : {31u, 32u}) {
    check_2khz_like_run<std::mt19937_64>(seed);
    check_2khz_like_run<std::minstd_rand>(seed);
    check_2khz_like_run<std::ranlux48>(seed);
  }
}

TEST_CASE("a low outlier does not pull the baseline down", "[intrinsic]") {
  Planted run = planted_groups(41, 3, 30, 0.01, 0.0, 0.1);
  const IntrinsicEstimate before = estimate_intrinsic(spans(run.groups));
  run.groups[0][5] = 0.002;  // a timer glitch: a fifth of the intrinsic time
  const IntrinsicEstimate after = estimate_intrinsic(spans(run.groups));
  CHECK(after.groups[0].baseline == Approx(before.groups[0].baseline).epsilon(0.01));
  CHECK(after.total_lost < 0.001 * run.total);
}

TEST_CASE("the interval holds the planted truth and the point, seeded, it repeats", "[intrinsic]") {
  const Planted run = planted_groups(51, 3, 40, 0.01, 0.4, 0.2);
  const auto groups = spans(run.groups);
  const IntrinsicEstimate estimate = estimate_intrinsic(groups);
  std::mt19937_64 engine(7);
  const LostInterval interval = bootstrap_lost_interval(groups, estimate, engine, 400, 0.95);
  CHECK(interval.low <= estimate.total_lost);
  CHECK(interval.high >= estimate.total_lost);
  CHECK(interval.low <= run.truth);
  CHECK(interval.high >= run.truth);
  CHECK(interval.high - interval.low < 0.5 * run.truth);
  std::mt19937_64 again(7);
  const LostInterval repeated = bootstrap_lost_interval(groups, estimate, again, 400, 0.95);
  CHECK(repeated.low == interval.low);
  CHECK(repeated.high == interval.high);
}

TEST_CASE("degenerate input: empty groups, single values, bad numbers", "[intrinsic]") {
  const std::vector<std::vector<double>> groups = {{}, {0.5}, {0.1, 0.1, 0.1, 0.1, 0.1}, {NAN, -1.0, 0.2, 0.2}};
  const IntrinsicEstimate estimate = estimate_intrinsic(spans(groups));
  REQUIRE(estimate.groups.size() == 4);
  CHECK(estimate.groups[1].baseline == 0.5);
  CHECK(estimate.groups[2].baseline == Approx(0.1).epsilon(1e-3));
  CHECK(std::isfinite(estimate.total_lost));
  CHECK(estimate.total_lost < 1e-3);
  CHECK(estimate.lost[3][0] == 0.0);
  CHECK(estimate.lost[3][1] == 0.0);
  const IntrinsicEstimate none = estimate_intrinsic({});
  CHECK(none.total_lost == 0.0);
}
