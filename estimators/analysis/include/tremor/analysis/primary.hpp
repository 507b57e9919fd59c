// The primary interference estimate of a run (docs/statistics-primary.md):
// one generative model of a segment's time, fitted to the run, and what it
// says the run lost. Returned by the estimator; RunAnalysis::primary holds it.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace tremor::analysis {

// What the measured evidence added up to, summed over segments (s). Each
// source is one likelihood term of the model (evidence.hpp).
struct EvidenceTotals {
  double rank_excess_s = 0.0;      // the worst detail rank's off-CPU time and I/O stall beyond their clean levels
  double io_peer_excess_s = 0.0;   // the I/O-stall part: I/O time beyond a rank that did the same I/O
  double boundary_excess_s = 0.0;  // the closing collective's least wait beyond its latency
  double foreign_cpu_loss_s = 0.0;  // CPU time other processes took on nodes whose ranks take turns
  // Beside another process on such nodes: the segments' time beyond their
  // group's unshared segments.
  double shared_turns_loss_s = 0.0;
  double measured_delay_s = 0.0;  // the combined measured delay (evidence.hpp: combine_evidence), summed
  double measured_added_s = 0.0;  // the measured delays in the lost time (slept time added where it fell short)
};

struct PrimaryEstimate {
  double lost_percent = 0.0;  // of the run time
  double lost_percent_low = 0.0;  // 95 % (parameters.ci) interval
  double lost_percent_high = 0.0;
  double intrinsic_run_time_s = 0.0;  // run time - lost time
  // Ranks outnumber the CPUs of a node and take turns on them: the time the
  // turns cost that cannot be told from what another process made them cost
  // (no segment of the group ran without it). Reported apart, never in
  // lost_percent (issue: oversubscription is not external interference).
  double oversubscription_percent = 0.0;
  // Per segment (kept for every segment): the lost time, the primary
  // subgroup (-1 outside usable groups) and its posterior P(delayed).
  std::vector<double> segment_lost_s;
  std::vector<std::int32_t> segment_primary_group;
  std::vector<float> segment_delay_probability;
  // Per segment, the part of its lost time measured as an I/O stall (the
  // diagnosis books it to file I/O wherever the other ranks waited it out).
  std::vector<float> segment_io_stall_s;
  // Per segment, the part of its lost time measured as its closing
  // collective's least wait beyond the collective's latency: every rank was
  // held inside that MPI call, so the diagnosis books it to MPI.
  std::vector<float> segment_collective_wait_s;
  // Per segment: whether it was more likely delayed than not, or measured
  // delayed (the primary method's interfered segments). analyze_run takes it
  // out once it has set the segments' classes (empty in RunAnalysis::primary).
  std::vector<std::uint8_t> segment_interfered;
  // Per RunAnalysis group, over its primary subgroups (GroupResult::lost_s
  // and intrinsic_s): the lost time, and the size-weighted mean intrinsic duration.
  std::vector<double> group_lost_s;
  std::vector<double> group_intrinsic_s;
  std::vector<double> subgroup_intrinsic_s;  // per primary subgroup, s
  std::size_t subgroups = 0;                 // groups after splitting by the previous segment's group
  std::size_t recurring_segments = 0;        // in split-off subgroups: compared with the same place in the cycle
  std::size_t warm_up_segments = 0;          // each group's first segment: its own indicator, not charged
  // The pooled model: clean spread sigma, delay probability pi, mean delay
  // tau (relative to the intrinsic duration).
  double clean_relative_spread = 0.0;
  double delay_probability = 0.0;
  double relative_delay_mean = 0.0;
  double unexplained_spread_ratio = 0.0;  // durations' spread / work's (0: no work column)
  bool most_segments_delayed = false;     // the clean spread was read from the lowest values only
  bool off_cpu_measured = false;          // the run file has off-CPU time per segment and detail rank
  std::size_t waiting_ranks = 0;          // detail ranks whose off-CPU time was mostly run-queue delay
  bool taking_turns = false;              // the job oversubscribes a node: its ranks take turns on the CPUs
  EvidenceTotals evidence;
  // CPU-time counter: the work on the critical path, summed; the run lost at
  // most its run time less this (0: not known).
  double work_critical_path_s = 0.0;
  std::size_t interval_replicas = 0;  // bootstrap replicas behind the interval
};

}  // namespace tremor::analysis
