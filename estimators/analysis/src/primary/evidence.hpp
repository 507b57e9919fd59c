// The directly measured evidence of the primary model
// (docs/statistics-primary.md, "Measured evidence"): one function per
// source, each per segment, and the one place they are combined. Each is a
// lower bound of the segment's delay that its own clean level was taken
// from (an application may sleep, a collective has a latency).
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "groups.hpp"
#include "measured_cells.hpp"
#include "shared_turns.hpp"
#include "tremor/run_data.hpp"

namespace tremor::analysis::detail {

// What every source reads: the run, its model groups and the first fit.
struct EvidenceInputs {
  const RunData& run;
  const std::vector<PrimaryGroup>& groups;
  std::span<const double> intrinsic_s;   // per group: its intrinsic duration (the first fit)
  std::span<const double> work_floor_s;  // per group: its median CPU-time work, s (empty: no such counter)
  std::span<const std::int32_t> segment_group;  // per segment: its model group, -1 for none
  bool off_cpu_measured = false;
  bool most_segments_delayed = false;
  bool taking_turns = false;
  std::size_t min_group = 5;
};

// Per segment, s (zeros where a source has nothing; the crowded-node
// sources are empty on runs without such a node).
struct MeasuredEvidence {
  std::vector<double> rank_s;          // rank_evidence
  std::vector<double> io_s;            // rank_evidence: the largest I/O stall over the detail ranks (before slack)
  std::vector<double> collective_s;    // collective_evidence
  std::vector<double> foreign_cpu_s;   // foreign_cpu_evidence
  std::vector<double> shared_turns_s;  // foreign_cpu_evidence: turns lost beside another process
  // The part of shared_turns_s with no unshared segment of its group to
  // compare with: the job's own turns cannot be told from what the other
  // process cost them there. Reported apart (PrimaryEstimate::oversubscription_percent).
  std::vector<double> unreferenced_s;
  SleptOnSharedCpus slept;              // slept_evidence
  double io_peer_s = 0.0;               // the I/O-stall part of rank_s, summed
  double rank_total_s = 0.0;            // rank_s before serial waits, summed
  double collective_total_s = 0.0;
  std::size_t waiting_ranks = 0;
  // Variance of the summed evidence from its clean levels' standard errors (s^2).
  double level_variance_s2 = 0.0;
};

// Time off the CPU (less slack), I/O stalls against the ranks that did the
// same I/O, and waits for a CPU one after another on the critical path:
// per segment the worst detail rank's excess over its group's clean level
// (the run's for segments of no group). Fills rank_s, io_peer_s,
// rank_total_s and waiting_ranks of `out`.
void rank_evidence(const EvidenceInputs& in, std::span<const std::uint8_t> oversubscribed, MeasuredEvidence& out);

// The closing collective's least wait over ranks beyond its clean latency
// (from the group's lowest 5-25 %, or 2-8 % and at most the latency pooled
// over all groups closing with the same call when most segments were delayed).
// `total_s` and `level_variance_s2`, when given, receive the summed excess and
// the variance its clean levels leave it.
std::vector<double> collective_evidence(const EvidenceInputs& in, double* total_s = nullptr,
                                        double* level_variance_s2 = nullptr);

// On nodes whose ranks take turns: the CPU time other processes took, and
// the segments' time beyond their group's unshared segments beside them.
// Fills foreign_cpu_s, shared_turns_s and unreferenced_s of `out`.
void foreign_cpu_evidence(const EvidenceInputs& in, const SharedNodeTime& node, MeasuredEvidence& out);

// What ranks taking turns slept over the run, and where (SleptOnSharedCpus).
SleptOnSharedCpus slept_evidence(const RunData& run, std::span<const std::uint8_t> oversubscribed);

// The one place the sources meet: per segment, the measured delay is the
// largest of the rank, collective, foreign-CPU and shared-turns evidence
// (they measure the same time: a rank off the CPU inside the collective
// delays every rank's exit, so the least wait holds it too; the CPU others
// took is time the ranks were off it), less the unreferenced part (reported
// apart), and at most the segment's duration less its busiest rank's work
// (`work_floor_s`, per segment).
std::vector<double> combine_evidence(const MeasuredEvidence& evidence, std::span<const double> duration_s,
                                     std::span<const double> work_floor_s);

// Per segment, the least time it takes: its busiest detail rank's CPU time
// (the median rank's without per-rank detail); zeros with another work counter.
std::vector<double> segment_work_floors(const RunData& run);

// The work counter reads thread CPU time, in ns.
bool work_is_cpu_time(const RunData& run);

}  // namespace tremor::analysis::detail
