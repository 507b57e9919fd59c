// Measured delays as direct evidence of interference
// (docs/statistics-primary.md, "Measured delays").
//
// Two per-segment measurements show a delay without comparing a segment with
// others of its group:
// - off-CPU time before the boundary, per segment and rank (wall − thread CPU
//   time, I/O calls excluded): a busy MPI code is on the CPU nearly all the
//   time, and what it spends off it was taken by something else (other
//   processes, the hypervisor) or by a sleep inside a call;
// - the least wait in the closing collective over all ranks: the time the
//   collective took beyond the last rank's arrival, which no rank's lateness
//   explains.
// Both have a clean level of their own (an application may sleep; a
// collective has a latency), so each group's clean level is removed first.
#pragma once

#include <cstddef>
#include <array>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

namespace tremor::estimators {

struct MeasuredDelayOptions {
  /// The group's clean level and spread come from these low quantiles of its
  /// (rank, segment) cells: at least a quarter of the cells must be clean,
  /// which holds for one slow rank among two or more.
  double low_quantile = 0.05;
  double clean_quantile = 0.25;
  /// Off-CPU time within this many clean spreads above the clean level is jitter.
  double jitter_in_spreads = 3.0;
  /// Floor of the clean spread, s: timer and quantization resolution.
  double minimum_spread_s = 2e-6;
  /// The threshold (clean level + jitter) is at most this, s: a clean level
  /// known from elsewhere when the group itself may have none.
  double threshold_cap_s = std::numeric_limits<double>::infinity();
};

struct MeasuredDelayGroup {
  double clean_level_s = 0.0;  ///< expected off-CPU time of a clean cell
  double clean_spread_s = 0.0;
  double threshold_s = 0.0;      ///< what a cell must exceed to count (rows not waiting)
  /// What a counted cell is charged beyond: the clean level, at most the
  /// threshold (which a cap may set below the group's own level).
  double charge_level_s = 0.0;
  std::vector<double> excess_s;  ///< per segment: the largest excess over its ranks, >= 0
  /// Per segment: the excesses of the waiting rows summed (empty without waiting rows).
  std::vector<double> waiting_sum_s;
  double total_excess_s = 0.0;
  /// Standard error of the charge level (the asymptotic standard error of
  /// the clean quantile it is read from), and the segments charged over it:
  /// the total excess errs by up to their product.
  double level_standard_error_s = 0.0;
  std::size_t charged_segments = 0;
};

/// `cells` is one group's measured times, row-major [ranks x segments] (one row
/// for a per-segment measure); non-finite or negative values count as 0. A
/// cell above the threshold has an excess over the clean level (the threshold
/// decides that it was delayed, not how much); the excess of a segment is the
/// largest over its ranks. Empty input gives an
/// empty result. Rows marked in `waiting_rows` (one flag per row, or empty)
/// are known to have spent their off-CPU time runnable, waiting for a CPU:
/// their clean level is 0 and their spread the floor, whatever the others'.
MeasuredDelayGroup measured_excess(std::span<const double> cells, std::size_t ranks, std::size_t segments,
                                   const MeasuredDelayOptions& options = {},
                                   std::span<const std::uint8_t> waiting_rows = {});

/// A measured cell's charge: over `threshold` it was delayed, and is charged
/// its excess over the clean `level`; otherwise nothing.
inline double excess_over_level(double value, double threshold, double level) {
  return value > threshold ? value - level : 0.0;
}

/// What a cell of a waiting row must exceed: the jitter over the spread floor.
double waiting_threshold_s(const MeasuredDelayOptions& options);

/// Whether a rank's off-CPU time was mostly spent waiting for a CPU: its
/// run-queue delay over the run (schedstat) is at least
/// `waiting_share` of its summed off-CPU time. False when not measured (NaN).
bool off_cpu_mostly_waiting(double run_queue_delay_s, double off_cpu_total_s, double waiting_share = 0.5);

/// One rank's I/O in one segment.
struct RankIo {
  double time_s = 0.0;
  /// Opens, closes, reads, writes, bytes read, bytes written.
  std::array<double, 6> amounts{};
  /// Its time off the CPU in the segment when it takes turns on its node's
  /// CPUs with other ranks of the job (`takes_turns`); else unused.
  double off_cpu_s = 0.0;
  bool takes_turns = false;
};

/// Per rank of one segment (`beyond`, one value each): its I/O time beyond
/// what it would have taken at the speed of the fastest other rank that did
/// every kind of I/O it did (that rank's time x the largest ratio of their
/// amounts; identical I/O gives that rank's time), when it took at least
/// `stall_factor` times that, else 0. A rank that takes turns on the CPUs
/// waits for a turn inside an I/O call as anywhere else: its excess counts
/// only when it outlasts the longest time off the CPU of any rank with I/O
/// there. Ranks without I/O, or with no rank to compare with, get 0.
void io_stalls(std::span<const RankIo> ranks, double stall_factor, std::vector<double>& beyond);

/// One segment on a node the job oversubscribes (more ranks than CPUs): the
/// node's CPU time over it and what the job's ranks left of it.
struct NodeCpuTime {
  double capacity_s = 0.0;  // cpus x the ranks' mean own segment time
  double free_s = 0.0;      // capacity less what the ranks ran or may have slept; signed
};

/// What the job's ranks on a node left of its CPUs in one segment. Each rank's
/// own segment time (`own_duration_s`: from its exit of the previous boundary
/// to its exit of this one) less its off-CPU time is what it ran; a CPU stands
/// idle only while a rank sleeps (the others are runnable: they compute or
/// poll), so what a rank may have slept (its off-CPU time, at most
/// `slept_cap_s`: its sleep over the run; all of it when not known) is not
/// free either. Ranks' own segments start and end at different times, so a
/// segment may read below 0 and its neighbour as far above: `free_s` keeps
/// its sign, to be summed over neighbours (foreign_cpu_share). Off-CPU
/// time that is not finite or beyond the rank's time reads as all of it.
NodeCpuTime node_cpu_time(double cpus, std::span<const double> own_duration_s, std::span<const double> off_cpu_s,
                          std::span<const double> slept_cap_s);

/// Per segment, the share of the node's CPUs other processes took (free CPU
/// time over capacity, clamped to [0, 1]). A segment of at least
/// `alone_capacity_s` is read alone: the ranks' skew between boundaries (up
/// to a time slice) is small against it. A shorter one is mostly skew alone,
/// so its free time and capacity are summed with its `half_window` nearest
/// short neighbours on either side; long ones are left out, so that what a
/// long segment shows is not spread over the short ones around it. A segment
/// of no capacity has no reading: 0, and no part of any window.
std::vector<double> foreign_cpu_share(std::span<const NodeCpuTime> segments, double alone_capacity_s,
                                      std::size_t half_window);

}  // namespace tremor::estimators
