// Maxima bootstraps (docs/statistics.md#bootstraps) and parametric GEV bootstraps that
// project maxima to larger process counts with EMMA.
//
// Randomness: callers pass a std::mt19937_64 (e.g. seeded with seed ^ rank);
// indices are drawn with uniform_int_distribution<std::size_t>(0, K − 1), so a
// seed reproduces the same result everywhere.
#pragma once

#include <cstddef>
#include <cstdint>
#include <random>
#include <span>
#include <vector>

#include "tremor/estimators/gev_fit.hpp"
#include "tremor/estimators/order_statistics.hpp"
#include "tremor/estimators/run_simulation.hpp"

namespace tremor::estimators {

inline constexpr std::size_t kDefaultReplicas = 1000;
inline constexpr double kDefaultConfidence = 0.95;

/// CI of the sample maximum by resampling K maxima with replacement.
/// It can never exceed the observed maximum (the bootstrap of a maximum is
/// inconsistent): do not present it as a CI of a population maximum.
struct MaximaBootstrap {
  PercentileSummary summary;
  bool degenerate = false;  ///< K < 2: CI = [y1, y1]
  std::size_t dropped_non_finite = 0;
};
MaximaBootstrap bootstrap_sample_maximum(std::span<const double> maxima, std::size_t replicas, double ci,
                                         std::mt19937_64& engine);
/// Same, replaying a stored row-major index matrix (replicas × K) for conformance tests.
/// An index >= K makes the result degenerate rather than reading out of bounds.
MaximaBootstrap bootstrap_sample_maximum_replay(std::span<const double> maxima,
                                                std::span<const std::size_t> index_matrix, double ci);

struct ScalePrediction {
  double factor = 1.0;         ///< scale factor m (process count multiplier)
  double point = 0.0;          ///< estimate on the original sample
  PercentileSummary replicas;  ///< median and CI over bootstrap replicas
  std::size_t replicas_used = 0;
  std::size_t replicas_failed = 0;  ///< replicas whose own fit could not project (they took the fallback)
  /// With BootstrapOptions::segments = n > 0: the sum of n maxima at the factor. `run_expected`
  /// summarizes n × the replicas' expected maximum (its CI: that of the expected sum), `one_run`
  /// one simulated run per replica (its interval: a prediction interval for one run's sum).
  PercentileSummary run_expected;
  PercentileSummary one_run;
};

struct BootstrapOptions {
  std::size_t replicas = kDefaultReplicas;
  double ci = kDefaultConfidence;
  std::size_t segments = 0;  ///< > 0: each replica also simulates one run of this many segments
};

/// Non-parametric projection: resample the sample, evaluate empirical_expected_maximum at m.
/// Bounded by the sample maximum. Empty result when no finite value is given.
std::vector<ScalePrediction> nonparametric_projection(std::span<const double> sample, std::span<const double> factors,
                                                      const BootstrapOptions& options, std::mt19937_64& engine);

/// Parametric bootstrap: resample with replacement, refit (PWM or MOM), project with EMMA to m.
/// A replica whose refit is unusable or whose projection is invalid takes the fallback order of
/// docs/statistics.md#validity-and-fallback (the other GEV method, then the empirical expected maximum) and is counted
/// in replicas_failed; it is never skipped, which would bias the interval against the extremes
/// that break fits. `point` is the same estimate on the full sample.
std::vector<ScalePrediction> parametric_projection(std::span<const double> sample, std::span<const double> factors,
                                                   FitMethod method, const BootstrapOptions& options,
                                                   std::mt19937_64& engine);

/// The replicas behind the projections above, kept per replica so that groups
/// can be summed replica by replica (RunTotals). With `segments` > 0 each
/// replica also simulates one run of that many maxima from the law its value
/// came from (the refit GEV scaled by max-stability, the fallback's law, or
/// the resample), drawn from an engine seeded by one draw of `engine`.
GroupReplicas nonparametric_replicas(std::span<const double> sample, std::span<const double> factors,
                                     std::size_t replicas, std::size_t segments, std::mt19937_64& engine);
GroupReplicas parametric_replicas(std::span<const double> sample, std::span<const double> factors, FitMethod method,
                                  std::size_t replicas, std::size_t segments, std::mt19937_64& engine);

/// Per-rank maxima with the rank's placement.
struct RankSamples {
  std::vector<double> values;
  std::int32_t node_id = 0;
  std::int32_t local_rank = 0;
};

/// Inter-node variant: for each node, the samples of its ranks are pooled and
/// bootstrapped with `replicas_per_partition` replicas; all replicas are pooled.
std::vector<ScalePrediction> inter_node_projection(std::span<const RankSamples> ranks, std::span<const double> factors,
                                                   FitMethod method, std::size_t replicas_per_partition, double ci,
                                                   std::mt19937_64& engine);
/// Intra-node variant: partitions by local rank across nodes instead of by node.
std::vector<ScalePrediction> intra_node_projection(std::span<const RankSamples> ranks, std::span<const double> factors,
                                                   FitMethod method, std::size_t replicas_per_partition, double ci,
                                                   std::mt19937_64& engine);
/// The replicas of the two variants (partitions in key order, replicas pooled).
enum class RankPartition { node, local_rank };
GroupReplicas partitioned_replicas(std::span<const RankSamples> ranks, std::span<const double> factors,
                                   FitMethod method, RankPartition partition, std::size_t replicas_per_partition,
                                   std::size_t segments, std::mt19937_64& engine);

}  // namespace tremor::estimators
