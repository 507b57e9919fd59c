// Per detail rank and segment: the delay measured directly, and the facts
// that decide how it is read (docs/statistics-primary.md, "Measured delays").
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "../detail_cells.hpp"
#include "tremor/estimators/measured_delay.hpp"
#include "tremor/run_data.hpp"

namespace tremor::analysis::detail {

// Off-CPU time is measured when the work counter reads CPU time, in files that have it.
bool off_cpu_measured(const RunData& run);

// Per listed segment, the longest time a detail rank spent on the CPU there
// beyond the busiest rank's work and I/O, s (CPU-time counter): polling in
// MPI calls that no rank's work explains, which grows while the rank it
// waits for is descheduled. Read row by row (the detail cells are stored
// rank-major).
std::vector<double> longest_polling(const RunData& run, std::span<const std::size_t> segments);

// A segment's waits for a CPU that lie one after another on its critical
// path: the worst rank's own (`worst_s`), and of the others' (`summed_s` in
// all) as much as a rank was seen polling for the rest beyond
// `clean_polling_s` (its ordinary level). Ranks descheduled one after
// another hold each other up, the one on the CPU polling meanwhile; ranks
// descheduled at the same time (the machine stalled) hold no one up, and
// their waits overlap.
double serial_waits(double worst_s, double summed_s, double polling_s, double clean_polling_s);

// The least wait over ranks in a segment's closing collective, s.
double late_wait(const RunData& run, std::size_t segment);

// Per detail rank: whether it ran on a node the job oversubscribes (more
// ranks than CPUs): its ranks then take turns on them.
std::vector<std::uint8_t> oversubscribed_rows(const RunData& run);

// Per detail rank: whether its off-CPU time was mostly spent runnable, waiting
// for a CPU (its run-queue delay over the run against its summed off-CPU
// time), on a node the job does not oversubscribe itself.
std::vector<std::uint8_t> waiting_rows(const RunData& run, std::span<const std::uint8_t> oversubscribed);

// Per segment, on the nodes the job oversubscribes whose ranks are all detail
// ranks. Charges there are in the ranks' mean own time, as the run time is:
// their longest times, summed over segments, exceed it where they take turns.
struct SharedNodeTime {
  // The ranks' mean own segment time, the largest over such nodes (at most
  // the segment's duration); the segment's duration where no node qualifies.
  std::vector<double> time_s;
  // The time the run lost, at least, to other processes: the share of the
  // node's CPUs they took around the segment (estimators::foreign_cpu_share
  // over its neighbours) times that node's time; the largest over nodes.
  // Zeros where no node qualifies.
  std::vector<double> foreign_loss_s;
  // With the CPU-time counter, the least time a segment's work needs: the
  // ranks' summed work over the node's CPUs; the largest over nodes.
  std::vector<double> work_s;
};
SharedNodeTime shared_node_time(const RunData& run);

// Per detail rank, one segment's measured delay that cost the segment time:
// its off-CPU time (none for a rank on a node the job oversubscribes: it is
// off the CPU by turns), plus (with `with_io`) its I/O stall: its I/O time
// beyond what it would have taken at the speed of the fastest detail rank
// that did every kind of I/O it did in that segment, when it took 10 times
// as long or more (estimators::io_stalls), less its slack (its wait in the boundary beyond the least one: it arrived
// before the last rank, so time lost before that cost nothing). A rank that
// waited for a CPU (`waiting`) keeps its slack: descheduled while it waits, it
// may hold up a rank that needs it to progress (a rendezvous). `column` gets
// one value per row.
class MeasuredCells {
 public:
  MeasuredCells(const RunData& run, std::span<const std::uint8_t> waiting,
                std::span<const std::uint8_t> oversubscribed);
  // Returns the largest I/O part over the rows (before the slack).
  double column(std::size_t segment, std::vector<double>& column, bool with_io);
  // A row's off-CPU time in a segment less its slack, whether or not it shares CPUs.
  double off_cpu_less_slack(std::size_t row, std::size_t segment) const;

 private:
  // The I/O amounts of a row's signature in a segment; null when it did none.
  const std::array<double, 6>* io_amounts_of(std::size_t row, std::size_t segment) const;
  double less_slack(std::size_t row, std::size_t segment, double measured) const;
  bool shares_cpus(std::size_t row) const { return row < oversubscribed_.size() && oversubscribed_[row] != 0; }

  const RunData& run_;
  std::span<const std::uint8_t> waiting_;
  std::span<const std::uint8_t> oversubscribed_;
  std::vector<std::array<double, 6>> io_amounts_;  // per detail signature entry
  std::vector<std::uint8_t> io_present_;           // per entry: any I/O at all
  DetailCells off_cpu_;
  DetailCells wait_;
  DetailCells io_;
  std::vector<estimators::RankIo> io_ranks_;  // the rows with I/O in the last column
  std::vector<std::size_t> io_rows_;          // their rows
  std::vector<double> io_beyond_;             // their stalls
};

// What the detail ranks on oversubscribed nodes slept, and where. Ranks
// taking turns are runnable: what a rank slept is its time neither on a CPU
// nor waiting for one from the recorder's start to MPI_Finalize (older
// files: its off-CPU time less its run-queue delay). Each rank's sleep is
// spread over the segments by its measured cells (off the CPU, less slack);
// `where` holds per segment the largest share over ranks, and `slept_s`
// their sum (at least the largest single sleep). Zero and empty when no
// rank qualifies (no such node, nothing measured).
struct SleptOnSharedCpus {
  double slept_s = 0.0;
  std::vector<double> where;
};
SleptOnSharedCpus slept_on_shared_cpus(const RunData& run, std::span<const std::uint8_t> oversubscribed,
                                       const MeasuredCells& measured);

// The measured-delay charge level (MeasuredDelayGroup::charge_level_s) and
// threshold (level + jitter) of the whole run, from the cells of the listed
// segments (every k-th segment beyond 2^17 cells: a level needs no more);
// {0, infinity} without any.
std::pair<double, double> run_measured_level(const RunData& run, std::span<const std::size_t> segments,
                                             MeasuredCells& measured);

}  // namespace tremor::analysis::detail
