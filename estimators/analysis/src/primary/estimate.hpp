// The primary estimate's steps (docs/statistics-primary.md): the model's
// groups with a first fit on the durations alone (primary_model), the
// measured evidence (evidence.hpp: gather_evidence), then the estimate
// (estimate_primary: fit, charge, bound, interval). Each step returns its own
// result; analyze_run stores the estimate.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "evidence.hpp"
#include "groups.hpp"
#include "measured_cells.hpp"
#include "tremor/analysis/parameters.hpp"
#include "tremor/analysis/primary.hpp"
#include "tremor/analysis/run_analysis.hpp"
#include "tremor/run_data.hpp"

namespace tremor::analysis::detail {

// The run as the model sees it, before any evidence is read.
struct PrimaryModel {
  std::vector<PrimaryGroup> groups;
  std::vector<std::int32_t> segment_group;  // per segment: its model group, -1 outside usable groups
  std::size_t parent_groups = 0;            // RunAnalysis::groups.size()
  std::size_t recurring_segments = 0;
  std::size_t warm_up_segments = 0;
  std::size_t min_group = 1;
  double run_time_s = 0.0;
  // Per group, its members' durations (less their work excess with the
  // CPU-time counter) and work (empty without a work column).
  std::vector<std::vector<double>> durations;
  std::vector<std::vector<double>> work;
  bool has_work = false;
  bool cpu_time_work = false;
  std::vector<double> work_floor_s;  // per group: its median CPU-time work, s (empty: no such counter)
  // The first fit, on the durations alone.
  std::vector<double> first_intrinsic_s;  // per group
  double unexplained_spread_ratio = 0.0;
  bool most_segments_delayed = false;
  // The run's nodes.
  bool off_cpu_measured = false;
  bool taking_turns = false;
  std::vector<std::uint8_t> oversubscribed;  // per detail rank
  std::vector<std::uint8_t> waiting;         // per detail rank (empty: off-CPU time not measured)
  SharedNodeTime shared_nodes;               // empty unless taking turns
};

// Needs the groups and the 4 MAD step of `analysis` done.
PrimaryModel primary_model(const RunData& run, const RunAnalysis& analysis, const AnalysisParameters& parameters);

// What the evidence sources read of the model.
EvidenceInputs evidence_inputs(const RunData& run, const PrimaryModel& model);

// The estimate from the model and its evidence (both consumed): lost time,
// interval, intrinsic run time, per-segment charges, and per RunAnalysis
// group its lost and intrinsic time.
PrimaryEstimate estimate_primary(const RunData& run, PrimaryModel model, MeasuredEvidence evidence,
                                 const AnalysisParameters& parameters);

}  // namespace tremor::analysis::detail
