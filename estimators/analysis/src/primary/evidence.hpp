// The directly measured evidence of the primary model
// (docs/statistics-primary.md, "Measured evidence"): one function per
// source, all of one signature, listed in one table (kEvidenceSources), and
// the one place they are combined. Each reads, per segment, a lower bound of
// the segment's delay above a clean level of its own (an application may
// sleep, a collective has a latency).
//
// Adding a source: write `SourceReading <name>_evidence(const EvidenceInputs&)`,
// add its row to kEvidenceSources, test it in test/analysis/test_evidence.cpp.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "groups.hpp"
#include "measured_cells.hpp"
#include "tremor/analysis/primary.hpp"
#include "tremor/run_data.hpp"

namespace tremor::analysis::detail {

// What every source reads: the run, its model groups, the first fit and the
// per-rank facts of the run's nodes.
struct EvidenceInputs {
  const RunData& run;
  const std::vector<PrimaryGroup>& groups;
  std::span<const double> intrinsic_s;   // per group: its intrinsic duration (the first fit)
  std::span<const double> work_floor_s;  // per group: its median CPU-time work, s (empty: no such counter)
  std::span<const std::int32_t> segment_group;  // per segment: its model group, -1 for none
  std::span<const std::uint8_t> oversubscribed;  // per detail rank: oversubscribed_rows
  std::span<const std::uint8_t> waiting;         // per detail rank: waiting_rows (empty: off-CPU time not measured)
  const SharedNodeTime& shared_nodes;            // shared_node_time where ranks take turns, else empty
  bool off_cpu_measured = false;
  bool most_segments_delayed = false;
  bool taking_turns = false;
  std::size_t min_group = 5;
};

// What one source read. Empty vectors: nothing read.
struct SourceReading {
  std::vector<double> delay_s;     // per segment, s
  double total_s = 0.0;            // the source's own sum (its EvidenceTotals entry)
  double level_variance_s2 = 0.0;  // variance of total_s from its clean levels' standard errors
  // Per segment, the part of delay_s that was an I/O stall (before slack),
  // and its sum: the diagnosis books it to file I/O.
  std::vector<double> io_stall_s;
  double io_stall_total_s = 0.0;
  // Per segment, time measured that cannot be told from the job's own turns
  // on its CPUs: reported apart (PrimaryEstimate::oversubscription_percent).
  std::vector<double> apart_s;
};

using EvidenceSourceFunction = SourceReading (*)(const EvidenceInputs&);

// How a source's reading enters the measured delay.
enum class EvidenceRole : std::uint8_t {
  // Per segment, the largest of these sources: they measure the same time.
  largest,
  // A lower bound of the run's summed loss, applied after every charge:
  // what the charges miss of total_s goes where delay_s puts it.
  run_floor,
};

// What part of the segment a reading is known to have hit (the What split).
enum class EvidenceHit : std::uint8_t {
  unknown,
  closing_collective,  // every rank was held inside the closing MPI call
};

struct EvidenceSource {
  std::string_view name;
  EvidenceSourceFunction read;
  EvidenceRole role;
  EvidenceHit hit;
  double EvidenceTotals::* total;  // where its sum is reported
};

// Time off the CPU (less slack), I/O stalls against the ranks that did the
// same I/O, and waits for a CPU one after another on the critical path:
// per segment the worst detail rank's excess over its group's clean level
// (the run's for segments of no group).
SourceReading rank_evidence(const EvidenceInputs& in);

// The closing collective's least wait over ranks beyond its clean latency
// (from the group's lowest 5-25 %, or 2-8 % and at most the latency pooled
// over all groups closing with the same call when most segments were delayed).
SourceReading collective_evidence(const EvidenceInputs& in);

// On nodes whose ranks take turns: the CPU time other processes took.
SourceReading foreign_cpu_evidence(const EvidenceInputs& in);

// On nodes whose ranks take turns: the segments' time beside another process
// beyond their group's unshared segments; where a group has none, the time
// beyond the ranks' work (less the CPU time the process took) is apart_s.
SourceReading shared_turns_evidence(const EvidenceInputs& in);

// What ranks taking turns slept over the run (total_s), and where (delay_s:
// SleptOnSharedCpus::where).
SourceReading slept_evidence(const EvidenceInputs& in);

// Every source, in the order they are read and combined.
inline constexpr std::array kEvidenceSources{
    EvidenceSource{"rank", rank_evidence, EvidenceRole::largest, EvidenceHit::unknown, &EvidenceTotals::rank_excess_s},
    EvidenceSource{"collective", collective_evidence, EvidenceRole::largest, EvidenceHit::closing_collective,
                   &EvidenceTotals::boundary_excess_s},
    EvidenceSource{"foreign_cpu", foreign_cpu_evidence, EvidenceRole::largest, EvidenceHit::unknown,
                   &EvidenceTotals::foreign_cpu_loss_s},
    EvidenceSource{"shared_turns", shared_turns_evidence, EvidenceRole::largest, EvidenceHit::unknown,
                   &EvidenceTotals::shared_turns_loss_s},
    EvidenceSource{"slept", slept_evidence, EvidenceRole::run_floor, EvidenceHit::unknown,
                   &EvidenceTotals::rank_excess_s},
};

// A run_floor reading, kept until the charges it bounds are known.
struct RunFloor {
  SourceReading reading;
  double EvidenceTotals::* total;
};

// Every source's reading, combined: what the estimator takes.
struct MeasuredEvidence {
  std::vector<double> measured_s;  // per segment: the combined measured delay (combine_evidence)
  std::vector<float> io_stall_s;   // per segment: the largest I/O-stall part over the sources
  std::vector<float> collective_wait_s;  // per segment: the largest closing_collective reading
  EvidenceTotals totals;                 // the largest sources' sums (run floors are added when applied)
  double level_variance_s2 = 0.0;        // summed over the sources
  double apart_s = 0.0;                  // summed over the sources and segments
  std::vector<RunFloor> run_floors;      // in table order
};

// The one place the largest sources meet: per segment, the largest of their
// readings (they measure the same time: a rank off the CPU inside the
// collective delays every rank's exit, so the least wait holds it too; the
// CPU others took is time the ranks were off it), at most the segment's
// duration less its busiest rank's work (`work_floor_s`, per segment).
std::vector<double> combine_evidence(std::span<const SourceReading* const> largest, std::span<const double> duration_s,
                                     std::span<const double> work_floor_s);

// Reads every source of `sources` and combines them (combine_evidence);
// keeps per segment only what the estimator needs.
MeasuredEvidence gather_evidence(const EvidenceInputs& in, std::span<const EvidenceSource> sources = kEvidenceSources);

// Per segment, the least time it takes: its busiest detail rank's CPU time
// (the median rank's without per-rank detail); zeros with another work counter.
std::vector<double> segment_work_floors(const RunData& run);

// The work counter reads thread CPU time (its kind's unit: ns).
bool work_is_cpu_time(const RunData& run);

// Whether the run has a detail cell per rank and segment.
bool has_rank_detail(const RunData& run);

}  // namespace tremor::analysis::detail
