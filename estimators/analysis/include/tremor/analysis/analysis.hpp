// The end-of-run analysis (docs/design.md#data-flow,
// docs/statistics.md): a pure function of a RunData and AnalysisParameters. No MPI,
// no logging, no clock; every random draw comes from engines seeded from
// AnalysisParameters::seed, so the same file and parameters give bit-identical
// numbers in process and in `tremor analyze`.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "tremor/analysis/diagnosis.hpp"
#include "tremor/analysis/parameters.hpp"
#include "tremor/estimators/interference.hpp"
#include "tremor/run_data.hpp"

namespace tremor::analysis {

enum class SegmentClass : std::uint8_t { unused = 0, normal = 1, interfered = 2 };

struct GevSummary {
  bool usable = false;
  double loc = 0.0;
  double scale = 0.0;
  double k = 0.0;
  std::string type;   // gumbel / frechet / weibull ("" when unusable)
  std::string flags;  // estimators::describe_fit_flags
};

// Segments of one work cluster that share a signature.
struct GroupResult {
  std::size_t cluster = 0;
  std::uint64_t signature = 0;
  std::vector<std::size_t> members;  // segment indices, ascending
  bool usable = false;               // members >= min_group
  double work_min = 0.0;
  double work_max = 0.0;
  double time_s = 0.0;  // sum of member durations
  // Filled for usable groups only:
  double median_s = 0.0;
  double mad_s = 0.0;
  double threshold_s = 0.0;
  std::size_t interfered = 0;
  double impact_s = 0.0;
  double continuous_impact_s = 0.0;
  // Primary estimate (summed over the group's primary subgroups, see
  // RunAnalysis::primary_groups): intrinsic duration and lost time.
  double intrinsic_s = 0.0;  // size-weighted mean of the subgroups' intrinsic durations
  double lost_s = 0.0;
  GevSummary pwm;
  GevSummary mom;
  std::string chosen_fit;  // pwm / mom / empirical_maximum
  bool fits_disagree = false;
};

// Impact attributed to the rank that arrived last at interfered boundaries.
struct RankImpact {
  std::int32_t rank = 0;
  std::int32_t node_id = 0;
  std::string hostname;
  std::size_t segments = 0;
  double impact_s = 0.0;
};
struct NodeImpact {
  std::int32_t node_id = 0;
  std::string hostname;
  std::size_t segments = 0;
  double impact_s = 0.0;
};

// Predicted total run time at `factor` times the processes.
struct Prediction {
  std::string method;  // nonparametric, pwm, mom, pwm-internode, pwm-intranode
  double factor = 1.0;
  double processes = 0.0;
  double median_s = 0.0;  // the expected run time (bootstrap median)
  double ci_low_s = 0.0;  // CI of the expected run time
  double ci_high_s = 0.0;
  double pi_low_s = 0.0;  // prediction interval for one run at that size
  double pi_high_s = 0.0;
  std::size_t replicas_failed = 0;  // summed over groups
  double variance_inflation = 1.0;  // segment-time VIF that widened both intervals (×√VIF)
};

// The method the headline prediction comes from, and why (predictions.cpp).
struct PredictionHeadline {
  std::string method;  // "" when no method predicted
  std::string reason;
};

// One case of a warning raised per item (a group, a method).
struct WarningCase {
  std::string subject;                                      // e.g. "group 12", "pwm"
  double severity = 0.0;                                    // larger is worse: cases are kept worst first
  std::string detail;                                       // a few words for people
  std::vector<std::pair<std::string, double>> values = {};  // named figures, for the JSON
};

struct Warning {
  std::string code;     // stable identifier, e.g. "few_segments"
  std::string message;  // one sentence for people; with cases: their count and the worst ones
  std::vector<WarningCase> cases = {};  // every case, worst first; empty for a run-wide warning
};

struct RunAnalysis {
  AnalysisParameters parameters;
  std::size_t segment_count = 0;
  double run_time_s = 0.0;
  std::string counter_source;
  bool estimate_possible = false;
  std::string no_estimate_reason;   // set when !estimate_possible
  bool signature_fallback = false;  // groups built from median detail-rank features
  // Per segment:
  std::vector<std::int64_t> segment_group;  // index into groups, -1 when none
  std::vector<SegmentClass> segment_class;
  std::vector<double> segment_impact_s;          // of the headline method
  std::vector<std::size_t> interfered_segments;  // ascending
  std::vector<GroupResult> groups;
  std::size_t usable_groups = 0;
  double usable_time_fraction = 0.0;  // of run time, inside usable groups
  // The headline: lost_percent (method "primary") or paper_mad4_percent ("mad4").
  double interference_percent = 0.0;
  // Primary estimate: time lost against each group's intrinsic duration.
  double lost_percent = 0.0;
  double lost_percent_low = 0.0;  // 95 % (parameters.ci) interval
  double lost_percent_high = 0.0;
  double intrinsic_run_time_s = 0.0;   // run time - lost time
  std::vector<double> segment_lost_s;  // primary, per segment
  // Compact (they are kept for every segment): the primary subgroup (-1 outside
  // usable groups), its posterior P(delayed), and each subgroup's intrinsic duration.
  std::vector<std::int32_t> segment_primary_group;
  std::vector<float> segment_delay_probability;
  std::vector<double> primary_intrinsic_s;  // per primary subgroup
  std::size_t primary_groups = 0;           // groups after splitting by the previous segment's signature
  std::size_t recurring_segments = 0;       // in split-off subgroups: compared with the same place in the cycle only
  std::size_t warm_up_segments = 0;    // each group's first segment, set apart as warm-up (not charged by the model)
  double clean_relative_spread = 0.0;  // pooled mixture: sigma, p, tau (relative to the intrinsic duration)
  double delay_probability = 0.0;
  double relative_delay_mean = 0.0;
  double unexplained_spread_ratio = 0.0;  // durations' spread / work's (0: no work column)
  bool most_segments_delayed = false;     // the clean spread was read from the lowest values only
  bool off_cpu_measured = false;          // the run file has off-CPU time per segment and detail rank
  std::size_t waiting_ranks = 0;          // detail ranks whose off-CPU time was mostly run-queue delay
  // The job oversubscribes a node: its ranks take turns on the CPUs, so the
  // durations' spread is not evidence; only measured delays are charged.
  bool taking_turns = false;
  double foreign_cpu_loss_s = 0.0;  // sum over segments of the CPU others took on such nodes, over their CPUs
  // Sum over the segments another process shared of their time beyond their
  // group's unshared segments (or their work over the CPUs); and how much
  // that added to every other charge.
  double shared_turns_loss_s = 0.0;
  double shared_turns_added_s = 0.0;
  // The part of shared_turns_loss_s charged to segments with no unshared
  // segment of their group to compare with: their time beyond their work,
  // which holds what the ranks' own turns cost there.
  double shared_turns_unreferenced_s = 0.0;
  double rank_excess_s = 0.0;      // sum over segments of the worst detail rank's off-CPU + I/O excess
  double io_peer_excess_s = 0.0;   // sum over segments of the largest I/O time beyond a rank doing the same
  double boundary_excess_s = 0.0;  // sum over segments of the collective's least wait above its latency
  double measured_delay_s = 0.0;   // sum over segments of the larger of the two (they overlap)
  double measured_added_s = 0.0;   // what both added to the lost time beyond the durations' evidence
  // CPU-time counter: the median detail rank's work per segment, summed; the
  // run lost at most its run time less this (0: not known).
  double work_critical_path_s = 0.0;
  // The paper's figure: excess over median + 4 MAD in (cluster, signature) groups.
  double paper_mad4_percent = 0.0;
  std::vector<double> segment_mad4_impact_s;
  double continuous_interference_percent = 0.0;
  estimators::InterferenceClass interference_class = estimators::InterferenceClass::low;
  double probability_high = 0.0;
  std::vector<RankImpact> stragglers;  // descending impact
  std::vector<NodeImpact> nodes;       // descending impact
  std::vector<Prediction> predictions;
  PredictionHeadline prediction_headline;
  // Long-run / iid variance of the segment times (autocorrelation), in [1, 10];
  // 1 without predictions or with too few segments.
  double prediction_variance_inflation = 1.0;
  std::vector<Warning> warnings;
  Diagnosis diagnosis;  // where, when and what (diagnosis.hpp)
};

// Thresholds of the warnings and fallbacks (documented in docs/report.md).
inline constexpr double kMaxBoundaryRateHz = 200.0;
inline constexpr std::size_t kMinSegmentsForTrust = 50;
inline constexpr double kMinUsableTimeFraction = 0.5;
// Exact signatures are replaced by median detail-rank features when fewer than
// this fraction of segments lands in usable groups.
inline constexpr double kSignatureFallbackBelow = 0.5;
// Bootstraps resample at most this many values per group (a seeded random
// subsample of larger groups) so the cost does not grow with the run length.
inline constexpr std::size_t kMaxBootstrapSample = 400;

RunAnalysis analyze_run(const RunData& run, const AnalysisParameters& parameters);

}  // namespace tremor::analysis
