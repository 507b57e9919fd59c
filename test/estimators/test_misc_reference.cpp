// Clustering, 4·MAD, logistic and bootstrap against their reference vectors,
// and a small-sample study compared with vectors_stability_n15.json.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <random>

#include "reference_vectors.hpp"
#include "tremor/estimators/bootstrap.hpp"
#include "tremor/estimators/clustering.hpp"
#include "tremor/estimators/gev_fit.hpp"
#include "tremor/estimators/interference.hpp"

namespace est = tremor::estimators;
using tremor::test::close;
using tremor::test::kClosedFormTolerance;

TEST_CASE("relative-distance clustering matches vectors_clustering", "[clustering][reference]") {
  const auto vectors = tremor::test::load_reference("vectors_clustering.json");
  for (const auto& c : vectors["cases"]) {
    SECTION(c["name"].get<std::string>()) {
      const std::vector<double> input = c["input"];
      const est::ClusterOptions options{c["threshold"], c["min_size"]};
      const est::Clustering clustering = est::cluster_by_relative_distance(input, options);
      REQUIRE(clustering.clusters.size() == c["clusters"].size());
      for (std::size_t i = 0; i < clustering.clusters.size(); ++i) {
        const auto& expected = c["clusters"][i];
        const est::Cluster& cluster = clustering.clusters[i];
        std::vector<double> members;
        for (const std::size_t index : clustering.members(cluster)) members.push_back(input[index]);
        CHECK(members == expected["members"].get<std::vector<double>>());
        CHECK(cluster.size == expected["size"].get<std::size_t>());
        CHECK(cluster.usable == expected["used"].get<bool>());
        CHECK(close(cluster.mean, expected["mean"], kClosedFormTolerance));
        CHECK(cluster.min == members.front());
        CHECK(cluster.max == members.back());
      }
    }
  }
}

TEST_CASE("4·MAD interference matches vectors_mad", "[interference][reference]") {
  const auto vectors = tremor::test::load_reference("vectors_mad.json");
  for (const auto& c : vectors["cases"]) {
    SECTION(c["name"].get<std::string>()) {
      const std::vector<double> times = c["times"];
      const auto result = est::detect_mad_interference(times, {.factor = c["nmad"]});
      CHECK(close(result.median, c["median"], kClosedFormTolerance));
      CHECK(close(result.mad, c["mad"], kClosedFormTolerance, 1e-15));
      CHECK(close(result.threshold, c["threshold"], kClosedFormTolerance));
      const std::vector<bool> expected_flags = c["interfered"];
      for (std::size_t i = 0; i < times.size(); ++i) {
        CHECK(static_cast<bool>(result.interfered[i]) == expected_flags[i]);
        CHECK(close(result.impact[i], c["impact"][i], kClosedFormTolerance, 1e-12));
      }
      CHECK(close(result.total_impact, c["total_impact"], kClosedFormTolerance, 1e-12));
      CHECK(close(est::run_interference_percent(result.total_impact, c["total_run_time"]), c["interference_percent"],
                  kClosedFormTolerance, 1e-12));
    }
  }
  CHECK(est::run_interference_percent(1.0, 0.0) == 0.0);
}

TEST_CASE("logistic probability and classes match vectors_logistic", "[classification][reference]") {
  const auto vectors = tremor::test::load_reference("vectors_logistic.json");
  CHECK(close(est::high_interference_probability(7.5), vectors["checks"]["p7_5"], 1e-12));
  CHECK(est::high_interference_probability(11.25) == 0.5);
  CHECK(close(est::high_interference_probability(7.5) + est::high_interference_probability(15.0), 1.0, 1e-15));
  for (const auto& row : vectors["cases"]) {
    const double x = row["x"];
    INFO("x=" << x);
    CHECK(close(est::high_interference_probability(x), row["p"], kClosedFormTolerance));
    CHECK(est::to_string(est::classify_interference(x)) == row["cls"].get<std::string>());
  }
}

TEST_CASE("maxima bootstrap: index rule, replay and exact law", "[bootstrap][reference]") {
  const auto vectors = tremor::test::load_reference("vectors_bootstrap.json");
  for (const auto& row : vectors["index_table"]) {
    const auto indices = est::percentile_ci_indices(row["nboot"], row["ci"]);
    INFO("n=" << row["nboot"].get<int>() << " ci=" << row["ci"].get<double>());
    CHECK(indices.lo == row["lo"].get<std::size_t>());
    CHECK(indices.hi == row["hi"].get<std::size_t>());
  }
  const std::vector<double> sample = vectors["sample"];
  const auto& replay = vectors["replay"];
  std::vector<std::size_t> flat;
  for (const auto& row : replay["resample_indices"]) {
    for (const auto& index : row) flat.push_back(index.get<std::size_t>());
  }
  const auto replayed = est::bootstrap_sample_maximum_replay(sample, flat, vectors["ci"]);
  CHECK(replayed.summary.ci_low == replay["lower"].get<double>());
  CHECK(replayed.summary.ci_high == replay["upper"].get<double>());

  // Exact law: P(T* = max) = 1 − (1 − 1/K)^K; with many replicas the CI tends to
  // [y(17), y(20)] (P(T* <= y(16)) = 0.0115 and P(T* <= y(17)) = 0.0388 straddle 2.5 %).
  std::mt19937_64 engine(12345);
  constexpr std::size_t kReplicas = 20000;
  const auto result = est::bootstrap_sample_maximum(sample, kReplicas, vectors["ci"], engine);
  CHECK(result.summary.ci_low == vectors["exact_percentile_ci_infinite_B"]["lower"].get<double>());
  CHECK(result.summary.ci_high == vectors["exact_percentile_ci_infinite_B"]["upper"].get<double>());
  std::mt19937_64 replay_engine(12345);
  std::uniform_int_distribution<std::size_t> pick(0, sample.size() - 1);
  std::size_t at_maximum = 0;
  const double sample_max = *std::max_element(sample.begin(), sample.end());
  for (std::size_t replica = 0; replica < kReplicas; ++replica) {
    double largest = -1e300;
    for (std::size_t draw = 0; draw < sample.size(); ++draw) largest = std::max(largest, sample[pick(replay_engine)]);
    at_maximum += largest == sample_max;
  }
  const double p = vectors["prob_boot_max_equals_sample_max"];
  const double standard_error = std::sqrt(p * (1 - p) / kReplicas);
  CHECK(std::fabs(static_cast<double>(at_maximum) / kReplicas - p) < 4 * standard_error);

  // The exact law gives E[T*] = the empirical expected maximum of K draws.
  std::vector<double> sorted = sample;
  std::sort(sorted.begin(), sorted.end());
  const auto& cdf = vectors["exact_bootstrap_max_cdf_at_order_stats"];
  double expected_from_law = 0.0, previous = 0.0;
  for (std::size_t j = 0; j < sorted.size(); ++j) {
    expected_from_law += sorted[j] * (cdf[j].get<double>() - previous);
    previous = cdf[j];
  }
  CHECK(close(est::empirical_expected_maximum(sorted, static_cast<double>(sorted.size())), expected_from_law, 1e-12));

  const std::vector<std::size_t> out_of_range(sample.size(), sample.size());
  CHECK(est::bootstrap_sample_maximum_replay(sample, out_of_range, 0.95).degenerate);

  const auto single = est::bootstrap_sample_maximum(std::vector<double>{3.0}, 100, 0.95, engine);
  CHECK(single.degenerate);
  CHECK(single.summary.ci_low == 3.0);
  CHECK(single.summary.ci_high == 3.0);
}

TEST_CASE("n = 15 behaviour agrees with vectors_stability_n15 (Gumbel)", "[gev][stability]") {
  // Both sides are simulations: 800 samples here, `reps` in the study. Each
  // statistic must agree within four standard errors of the difference.
  const auto study = tremor::test::load_reference("vectors_stability_n15.json")["study"]["gumbel"];
  std::mt19937_64 engine(2024);
  std::uniform_real_distribution<double> uniform(1e-15, 1.0 - 1e-15);
  constexpr int kSamples = 800;
  const double inverse_sizes = 1.0 / kSamples + 1.0 / study["reps"].get<double>();
  std::vector<double> pwm_k, mom_k;
  int disagreements = 0;
  std::vector<double> sample(15);
  for (int s = 0; s < kSamples; ++s) {
    for (double& value : sample) value = est::gev_quantile({10.0, 1.0, 0.0}, uniform(engine));
    const auto both = est::fit_with_fallback(sample);
    pwm_k.push_back(both.pwm.params.k);
    mom_k.push_back(both.mom.params.k);
    disagreements += both.disagreement;
  }
  auto check_k_distribution = [&](const std::vector<double>& values, const nlohmann::json& expected) {
    double mean = 0, squares = 0;
    for (double v : values) mean += v;
    mean /= static_cast<double>(values.size());
    for (double v : values) squares += (v - mean) * (v - mean);
    const double sd = std::sqrt(squares / static_cast<double>(values.size() - 1));
    const double expected_sd = expected["k_sd"];
    CHECK(std::fabs(mean - expected["k_mean"].get<double>()) < 4 * expected_sd * std::sqrt(inverse_sizes));
    // Relative standard error of a sample SD: sqrt((kurtosis - 1) / (4 N)).
    const double sd_relative_error = std::sqrt((expected["k_kurtosis"].get<double>() - 1) / 4 * inverse_sizes);
    CHECK(std::fabs(sd / expected_sd - 1.0) < 4 * sd_relative_error);
  };
  check_k_distribution(pwm_k, study["pwm"]);
  check_k_distribution(mom_k, study["mom"]);
  // The disagreement limits sit above the null distribution's q95: a rare flag on Gumbel samples.
  const double rate = study["pwm_minus_mom"]["disagreement_rate"];
  const double floor_rate = std::max(rate, 1.0 / kSamples);  // a zero rate would allow no flag at all
  const double rate_error = std::sqrt(floor_rate * (1 - floor_rate) * inverse_sizes);
  CHECK(std::fabs(static_cast<double>(disagreements) / kSamples - rate) < 4 * rate_error);
}

TEST_CASE("variance of a future maximum matches full enumeration", "[bootstrap]") {
  // Every ordered draw of m = 3 values from a 4-value sample, equally likely.
  const std::vector<double> sorted{1.0, 2.0, 2.5, 7.0};
  double sum = 0.0, sum_squares = 0.0;
  int draws = 0;
  for (double a : sorted)
    for (double b : sorted)
      for (double c : sorted) {
        const double largest = std::max({a, b, c});
        sum += largest;
        sum_squares += largest * largest;
        ++draws;
      }
  const double mean = sum / draws;
  const double variance = sum_squares / draws - mean * mean;
  CHECK(std::fabs(est::empirical_expected_maximum(sorted, 3.0) - mean) < 1e-12);
  CHECK(std::fabs(est::empirical_maximum_variance(sorted, 3.0) - variance) < 1e-12);
  // One value: no spread; m = 1: the plain sample variance (population form).
  CHECK(est::empirical_maximum_variance(std::vector<double>{4.0}, 8.0) == 0.0);
  CHECK(std::fabs(est::empirical_maximum_variance(sorted, 1.0) - (1.0 + 4.0 + 6.25 + 49.0) / 4 +
                  std::pow((1.0 + 2.0 + 2.5 + 7.0) / 4, 2)) < 1e-12);
  CHECK(std::isnan(est::empirical_maximum_variance(std::vector<double>{}, 2.0)));
}
