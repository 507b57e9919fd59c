// What the end-of-run analysis finds (RunAnalysis and its parts), shared by
// the analysis steps, the report and `tremor compare`. Types only: the steps
// that fill them are declared in analysis.hpp and diagnosis.hpp.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "tremor/analysis/diagnosis_types.hpp"
#include "tremor/analysis/parameters.hpp"
#include "tremor/analysis/primary.hpp"
#include "tremor/estimators/interference.hpp"

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
  // PrimaryEstimate::subgroups): intrinsic duration and lost time.
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
  // Monte Carlo standard error of the interval ends (finite replicas; groups
  // given fewer distinct replicas, predictions.cpp's replica plan).
  double monte_carlo_error_s = 0.0;
  std::size_t group_replicas_min = 0;  // the fewest distinct replicas a group had
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
  // The headline: primary.lost_percent (method "primary") or paper_mad4_percent ("mad4").
  double interference_percent = 0.0;
  PrimaryEstimate primary;  // the primary estimate (primary.hpp)
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
  Diagnosis diagnosis;  // where, when and what (diagnosis_types.hpp)
};

}  // namespace tremor::analysis
