// One run at a larger process count, simulated from a law of its segment
// maxima, and the totals of a run over its groups, replica by replica
// (docs/statistics.md#prediction). The spread of the expected totals over
// the bootstrap replicas is the CI of the expected run time; the spread of
// the simulated runs adds the draw of one run: the prediction interval.
#pragma once

#include <cstddef>
#include <limits>
#include <random>
#include <span>
#include <vector>

#include "tremor/estimators/gev.hpp"

namespace tremor::estimators {

/// A group's simulated sum draws at most this many maxima; beyond, the sum of
/// n is extrapolated from them as n·μ + (n/c)^h·(S_c − c·μ) (μ the law's mean,
/// h = 1/2 with a finite variance, −k for a GEV tail with k < −1/2, where
/// centred sums grow as n^−k), so mean and variance stay those of n draws
/// while the cost does not grow with the run length.
inline constexpr std::size_t kExactRunDraws = 32;

/// The law of one segment maximum at the base size: a GEV (Hosking), or the
/// empirical law of a sorted sample (which must outlive the law).
struct MaximumLaw {
  bool empirical = false;
  GevParams gev;
  std::span<const double> sorted_sample;
  /// A GEV fitted to durations may reach below 0 (k < 0, ξ + α/k < 0): such draws count as 0.
  double lowest = -std::numeric_limits<double>::infinity();
};

/// Standard exponential draws E shared by every factor of one simulated run
/// (common random numbers: a run's sums grow with the factor).
struct RunDraws {
  std::vector<double> exponential;      // E_j
  std::vector<double> log_exponential;  // ln E_j
  void draw(std::size_t segments, std::mt19937_64& engine);
};

/// Sum of `segments` independent maxima at `factor`, each the maximum of
/// `factor` draws of the law: the law's quantile at exp(−E/factor). For a GEV
/// this is max-stability (shape k, scale α·f^−k, location ξ + α(1 − f^−k)/k).
double simulated_run_sum(const MaximumLaw& law, double factor, std::size_t segments, const RunDraws& draws);

/// Bootstrap replicas of one group, per factor and replica in draw order.
struct GroupReplicas {
  std::size_t segments = 0;                   ///< n: the group's segments in the run
  std::vector<std::vector<double>> expected;  ///< [factor][replica]: E[max at the factor] of the replica's law
  std::vector<std::vector<double>> one_run;   ///< [factor][replica]: one simulated run's sum of n maxima
  std::vector<std::size_t> failed;            ///< per factor: replicas whose own fit could not project
  std::vector<double> points;                 ///< per factor: the estimate on the full sample
  /// The replicas computed: 0 when every replica is its own draw, else the
  /// replicas above were taken (with replacement) from this many (take_replicas).
  std::size_t distinct = 0;
};

/// Which of `distinct` computed replicas each of the run's `replicas` takes:
/// each in turn when distinct >= replicas, else uniform draws with
/// replacement from `engine`. A group bootstrapped with fewer replicas than
/// the run's other groups then still adds one value to every run replica.
std::vector<std::size_t> replica_choice(std::size_t distinct, std::size_t replicas, std::mt19937_64& engine);
/// The group's replicas in `choice`'s order (failures counted among the taken
/// ones); `distinct` records how many there were to take from.
GroupReplicas take_replicas(const GroupReplicas& group, std::span<const std::size_t> choice);
/// Per-factor replica values (e.g. a latency growth) in `choice`'s order.
std::vector<std::vector<double>> take_replicas(const std::vector<std::vector<double>>& per_factor,
                                               std::span<const std::size_t> choice);

/// The expected run time (median, CI) and one run's prediction interval.
struct RunInterval {
  double median = 0.0;
  double ci_low = 0.0;
  double ci_high = 0.0;
  double pi_low = 0.0;
  double pi_high = 0.0;
  /// Monte Carlo standard error of the interval ends (the larger of the CI's
  /// and the PI's): the finite number of replicas, and groups whose replicas
  /// were taken from fewer distinct ones (take_replicas), move the ends by about this much.
  double monte_carlo_error = 0.0;
};

/// T = scale·(fixed + Σ_groups n_g·(x_g + offset_g)), summed replica by
/// replica (groups are resampled independently, so the r-th replicas of all
/// groups form one replica of the run).
class RunTotals {
 public:
  explicit RunTotals(std::size_t factors)
      : expected_(factors),
        one_run_(factors),
        failed_(factors, 0),
        group_replicas_(factors, 0),
        shift_expected_(factors, 0.0),
        shift_one_run_(factors, 0.0) {}
  /// `offset` is added to every one of the group's segments (e.g. a collective's latency).
  /// A group without replicas, or with another replica count, makes the totals unavailable.
  /// A group with `distinct` replicas adds the variance of its mean over them to the Monte Carlo error.
  void add(const GroupReplicas& group, double offset = 0.0);
  /// Adds segments·per_segment[f][r] to replica r at factor f of both the
  /// expected and the simulated totals: a per-segment term with bootstrap
  /// replicas of its own (the collective's latency growth). Call after the
  /// groups; another shape makes the totals unavailable.
  /// `distinct` as for GroupReplicas (0: every replica its own draw).
  void add_per_segment(std::size_t segments, const std::vector<std::vector<double>>& per_segment,
                       std::size_t distinct = 0);
  [[nodiscard]] bool available() const { return available_ && started_; }
  /// Replicas that fell back, summed over the groups.
  [[nodiscard]] std::size_t failed(std::size_t factor) const { return failed_[factor]; }
  /// The share of the groups' replicas that fell back, in [0, 1].
  [[nodiscard]] double fallback_share(std::size_t factor) const {
    return group_replicas_[factor] > 0
               ? static_cast<double>(failed_[factor]) / static_cast<double>(group_replicas_[factor])
               : 0.0;
  }
  [[nodiscard]] std::size_t replicas() const { return expected_.empty() ? 0 : expected_.front().size(); }
  /// Percentile CI of the expected totals and prediction interval of the
  /// simulated ones (0 replicas of one_run: the PI is the CI); every
  /// deviation from its median is multiplied by `widening` (√VIF).
  [[nodiscard]] std::vector<RunInterval> summarize(double fixed, double scale, double ci, double widening = 1.0) const;

 private:
  std::vector<std::vector<double>> expected_, one_run_;
  std::vector<std::size_t> failed_;
  std::vector<std::size_t> group_replicas_;  // replicas summed over the groups
  // Per factor: Σ Var(group's replicas)/distinct over the groups with fewer
  // distinct replicas than the run's, for the expected and the simulated totals.
  std::vector<double> shift_expected_, shift_one_run_;
  bool available_ = true;
  bool started_ = false;
};

}  // namespace tremor::estimators
