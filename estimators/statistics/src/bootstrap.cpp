#include "tremor/estimators/bootstrap.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <vector>

#include "sorted_resample.hpp"

namespace tremor::estimators {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::vector<double> finite_values(std::span<const double> sample) {
  std::vector<double> finite;
  finite.reserve(sample.size());
  for (const double value : sample) {
    if (std::isfinite(value)) finite.push_back(value);
  }
  return finite;
}

GevFit fit_by(FitMethod method, std::span<const double> sample) {
  return method == FitMethod::mom ? fit_mom(sample) : fit_pwm(sample);
}

FitMethod other_gev_method(FitMethod method) { return method == FitMethod::mom ? FitMethod::pwm : FitMethod::mom; }

// Projections of one sample with the fallback order of docs/statistics.md#validity-and-fallback:
// the method's own fit, else the other GEV method, else the empirical
// expected maximum (no GEV). `fell_back[f]` tells whether factor f needed it;
// `laws[f]` (when given) is the law factor f's value came from.
// Why every replica gets a value: a fit breaks on the replicas that hold the
// sample's extremes (support violation); skipping them conditions the
// bootstrap on those extremes' absence and drags the interval below them.
std::vector<double> projections_with_fallback(std::vector<double>& sample, std::span<const double> factors,
                                              FitMethod method, std::vector<bool>& fell_back,
                                              std::vector<MaximumLaw>* laws = nullptr) {
  const GevFit own = fit_by(method, sample);
  std::vector<double> values(factors.size(), kNaN);
  fell_back.assign(factors.size(), false);
  std::optional<GevFit> other;
  bool sorted = false;
  for (std::size_t f = 0; f < factors.size(); ++f) {
    Projection projection = project_expected_maximum(own, factors[f]);
    const GevFit* law = &own;
    if (!projection.valid) {
      fell_back[f] = true;
      if (!other) other = fit_by(other_gev_method(method), sample);
      projection = project_expected_maximum(*other, factors[f]);
      law = &*other;
    }
    if (!projection.valid) {
      if (!sorted) std::sort(sample.begin(), sample.end());
      sorted = true;
      projection = {empirical_expected_maximum(sample, factors[f]), true};
      law = nullptr;
    }
    values[f] = projection.value;
    if (laws) {
      const double lowest = law && law->data_non_negative() ? 0.0 : -std::numeric_limits<double>::infinity();
      (*laws)[f] = law ? MaximumLaw{false, law->params, {}, lowest} : MaximumLaw{true, {}, sample};
    }
  }
  return values;
}

GroupReplicas empty_replicas(std::size_t factors, std::size_t segments) {
  GroupReplicas group;
  group.segments = segments;
  group.expected.resize(factors);
  group.one_run.resize(factors);
  group.failed.assign(factors, 0);
  group.points.assign(factors, kNaN);
  return group;
}

// Per-factor replica values of the parametric bootstrap, appended to `group`
// (with one simulated run each when group.segments > 0).
void append_parametric_replicas(const std::vector<double>& sample, std::span<const double> factors, FitMethod method,
                                std::size_t replicas, std::mt19937_64& engine, std::mt19937_64& simulation,
                                GroupReplicas& group) {
  if (sample.empty()) return;
  std::vector<double> drawn;
  std::vector<bool> replica_fell_back;
  std::vector<MaximumLaw> laws(factors.size());
  RunDraws draws;
  detail::SortedResampler resampler(sample);  // the fits read the resample sorted
  for (std::size_t replica = 0; replica < replicas; ++replica) {
    resampler.draw(drawn, engine);
    const std::vector<double> values =
        projections_with_fallback(drawn, factors, method, replica_fell_back, group.segments ? &laws : nullptr);
    if (group.segments) draws.draw(group.segments, simulation);
    for (std::size_t f = 0; f < factors.size(); ++f) {
      group.expected[f].push_back(values[f]);
      if (replica_fell_back[f]) ++group.failed[f];
      if (group.segments) group.one_run[f].push_back(simulated_run_sum(laws[f], factors[f], group.segments, draws));
    }
  }
}

// The simulated runs draw from their own engine, seeded by one draw of the
// bootstrap's, so they do not shift its resampling.
std::mt19937_64 simulation_engine(std::size_t segments, std::mt19937_64& engine) {
  return segments ? std::mt19937_64(engine()) : std::mt19937_64();
}

std::vector<ScalePrediction> summarize(std::span<const double> factors, const GroupReplicas& group, double ci) {
  std::vector<ScalePrediction> predictions(factors.size());
  for (std::size_t f = 0; f < factors.size(); ++f) {
    ScalePrediction& prediction = predictions[f];
    prediction.factor = factors[f];
    prediction.point = group.points[f];
    prediction.replicas_used = group.expected[f].size();
    prediction.replicas_failed = group.failed[f];
    std::vector<double> values = group.expected[f];
    prediction.replicas = summarize_replicas(values, ci);
    if (group.segments == 0 || group.one_run[f].size() != group.expected[f].size()) continue;
    for (double& value : values) value *= static_cast<double>(group.segments);
    prediction.run_expected = summarize_replicas(values, ci);
    std::vector<double> runs = group.one_run[f];
    prediction.one_run = summarize_replicas(runs, ci);
  }
  return predictions;
}

std::vector<double> parametric_points(std::span<const double> sample, std::span<const double> factors,
                                      FitMethod method) {
  if (sample.empty()) return std::vector<double>(factors.size(), kNaN);
  std::vector<double> copy(sample.begin(), sample.end());
  std::vector<bool> fell_back;
  return projections_with_fallback(copy, factors, method, fell_back);
}

}  // namespace

MaximaBootstrap bootstrap_sample_maximum(std::span<const double> maxima, std::size_t replicas, double ci,
                                         std::mt19937_64& engine) {
  const std::vector<double> finite = finite_values(maxima);
  MaximaBootstrap result;
  result.dropped_non_finite = maxima.size() - finite.size();
  if (finite.size() < 2 || replicas == 0) {
    const double only = finite.empty() ? kNaN : finite.front();
    result.degenerate = true;
    result.summary = {only, only, only};
    return result;
  }
  std::uniform_int_distribution<std::size_t> pick(0, finite.size() - 1);
  std::vector<double> maxima_of_replicas(replicas);
  for (double& replica_max : maxima_of_replicas) {
    double largest = -std::numeric_limits<double>::infinity();
    for (std::size_t draw = 0; draw < finite.size(); ++draw) {
      largest = std::max(largest, finite[pick(engine)]);
    }
    replica_max = largest;
  }
  result.summary = summarize_replicas(maxima_of_replicas, ci);
  return result;
}

MaximaBootstrap bootstrap_sample_maximum_replay(std::span<const double> maxima,
                                                std::span<const std::size_t> index_matrix, double ci) {
  MaximaBootstrap result;
  const std::size_t k = maxima.size();
  const bool indices_in_range =
      std::all_of(index_matrix.begin(), index_matrix.end(), [k](std::size_t index) { return index < k; });
  if (k < 2 || index_matrix.size() < k || !indices_in_range) {
    const double only = maxima.empty() ? kNaN : maxima.front();
    result.degenerate = true;
    result.summary = {only, only, only};
    return result;
  }
  std::vector<double> maxima_of_replicas;
  for (std::size_t row = 0; row + k <= index_matrix.size(); row += k) {
    double largest = -std::numeric_limits<double>::infinity();
    for (std::size_t draw = 0; draw < k; ++draw) {
      largest = std::max(largest, maxima[index_matrix[row + draw]]);
    }
    maxima_of_replicas.push_back(largest);
  }
  result.summary = summarize_replicas(maxima_of_replicas, ci);
  return result;
}

GroupReplicas nonparametric_replicas(std::span<const double> sample, std::span<const double> factors,
                                     std::size_t replicas, std::size_t segments, std::mt19937_64& engine) {
  GroupReplicas group = empty_replicas(factors.size(), segments);
  std::vector<double> sorted = finite_values(sample);
  if (sorted.empty()) return group;
  std::sort(sorted.begin(), sorted.end());
  for (std::size_t f = 0; f < factors.size(); ++f) group.points[f] = empirical_expected_maximum(sorted, factors[f]);
  std::mt19937_64 simulation = simulation_engine(segments, engine);
  std::vector<double> drawn;
  RunDraws draws;
  detail::SortedResampler resampler(sorted);
  for (std::size_t replica = 0; replica < replicas; ++replica) {
    resampler.draw(drawn, engine);
    if (segments) draws.draw(segments, simulation);
    const MaximumLaw law{true, {}, drawn};
    for (std::size_t f = 0; f < factors.size(); ++f) {
      group.expected[f].push_back(empirical_expected_maximum(drawn, factors[f]));
      if (segments) group.one_run[f].push_back(simulated_run_sum(law, factors[f], segments, draws));
    }
  }
  return group;
}

GroupReplicas parametric_replicas(std::span<const double> sample, std::span<const double> factors, FitMethod method,
                                  std::size_t replicas, std::size_t segments, std::mt19937_64& engine) {
  const std::vector<double> finite = finite_values(sample);
  GroupReplicas group = empty_replicas(factors.size(), segments);
  group.points = parametric_points(finite, factors, method);
  std::mt19937_64 simulation = simulation_engine(segments, engine);
  append_parametric_replicas(finite, factors, method, replicas, engine, simulation, group);
  return group;
}

GroupReplicas partitioned_replicas(std::span<const RankSamples> ranks, std::span<const double> factors,
                                   FitMethod method, RankPartition partition, std::size_t replicas_per_partition,
                                   std::size_t segments, std::mt19937_64& engine) {
  // std::map keeps partitions in key order, so a seed gives the same draws
  // whatever the order of the ranks.
  std::map<std::int32_t, std::vector<double>> partitions;
  std::vector<double> all_values;
  for (const RankSamples& rank : ranks) {
    std::vector<double>& values = partitions[partition == RankPartition::node ? rank.node_id : rank.local_rank];
    for (const double value : rank.values) {
      if (!std::isfinite(value)) continue;
      values.push_back(value);
      all_values.push_back(value);
    }
  }
  GroupReplicas group = empty_replicas(factors.size(), segments);
  group.points = parametric_points(all_values, factors, method);
  std::mt19937_64 simulation = simulation_engine(segments, engine);
  for (const auto& [key, values] : partitions) {
    append_parametric_replicas(values, factors, method, replicas_per_partition, engine, simulation, group);
  }
  return group;
}

std::vector<ScalePrediction> nonparametric_projection(std::span<const double> sample, std::span<const double> factors,
                                                      const BootstrapOptions& options, std::mt19937_64& engine) {
  if (finite_values(sample).empty()) return {};
  return summarize(factors, nonparametric_replicas(sample, factors, options.replicas, options.segments, engine),
                   options.ci);
}

std::vector<ScalePrediction> parametric_projection(std::span<const double> sample, std::span<const double> factors,
                                                   FitMethod method, const BootstrapOptions& options,
                                                   std::mt19937_64& engine) {
  return summarize(factors, parametric_replicas(sample, factors, method, options.replicas, options.segments, engine),
                   options.ci);
}

std::vector<ScalePrediction> inter_node_projection(std::span<const RankSamples> ranks, std::span<const double> factors,
                                                   FitMethod method, std::size_t replicas_per_partition, double ci,
                                                   std::mt19937_64& engine) {
  return summarize(factors,
                   partitioned_replicas(ranks, factors, method, RankPartition::node, replicas_per_partition, 0, engine),
                   ci);
}

std::vector<ScalePrediction> intra_node_projection(std::span<const RankSamples> ranks, std::span<const double> factors,
                                                   FitMethod method, std::size_t replicas_per_partition, double ci,
                                                   std::mt19937_64& engine) {
  return summarize(
      factors,
      partitioned_replicas(ranks, factors, method, RankPartition::local_rank, replicas_per_partition, 0, engine), ci);
}

}  // namespace tremor::estimators
