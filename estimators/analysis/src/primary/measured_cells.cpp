#include "measured_cells.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <limits>

#include "../node_cpus.hpp"
#include "tremor/estimators/measured_delay.hpp"

namespace tremor::analysis::detail {
namespace {

// A rank's I/O counts as stalled from this many times the fastest rank that did the same.
constexpr double kIoStallFactor = 10.0;
// The share of a node's CPUs other processes took: a segment whose ranks'
// mean own time is at least kForeignShareAloneS is read alone; a shorter one
// over its kForeignShareHalfWindow nearest short neighbours on either side
// (estimators::foreign_cpu_share): one short segment's reading is mostly the
// skew of the ranks' own segment bounds (up to a time slice) when many take turns.
constexpr double kForeignShareAloneS = 0.05;
constexpr std::size_t kForeignShareHalfWindow = 10;

constexpr std::array kIoFeatures = {Feature::io_opens,  Feature::io_closes,     Feature::io_reads,
                                    Feature::io_writes, Feature::io_bytes_read, Feature::io_bytes_written};

// The node of a detail row (past the node table when not known).
std::size_t node_of_row(const RunData& run, std::size_t row) {
  const auto rank = static_cast<std::size_t>(run.detail.ranks[row]);
  if (rank >= run.ranks.size() || run.ranks[rank].node_id < 0) return run.environment.nodes.size();
  return static_cast<std::size_t>(run.ranks[rank].node_id);
}

// One detail rank's off-CPU time summed over the run, s.
double off_cpu_total_s(const RunData& run, std::size_t row) {
  const DetailCells off_cpu(run, Quantized::off_cpu_time);
  double total = 0.0;
  for (std::size_t s = 0; s < run.detail.segments; ++s) total += off_cpu(row, s);
  return total;
}

// What a detail rank slept over the run, s (NaN when not known): measured
// from the recorder's start to MPI_Finalize (wall time less time on and waiting for a
// CPU), else its off-CPU time in the segments less its run-queue delay, which
// reads short: the run queue also holds waits outside the segments'
// off-CPU time (in I/O calls, short collectives).
double slept_over_run_s(const RunData& run, std::size_t row) {
  const auto rank = static_cast<std::size_t>(run.detail.ranks[row]);
  if (rank >= run.ranks.size()) return std::nan("");
  const RankInfo& info = run.ranks[rank];
  if (std::isfinite(info.slept_s)) return info.slept_s;
  return std::isfinite(info.run_queue_delay_s) ? off_cpu_total_s(run, row) - info.run_queue_delay_s : std::nan("");
}

// The I/O of a signature: its amounts in kIoFeatures' order.
std::array<double, 6> io_amounts(const FeatureVector& features) {
  std::array<double, 6> amounts{};
  for (std::size_t k = 0; k < kIoFeatures.size(); ++k)
    amounts[k] = static_cast<double>(features[tremor::index(kIoFeatures[k])]);
  return amounts;
}

}  // namespace

bool off_cpu_measured(const RunData& run) {
  return run.meta.schema_version >= 2 && measures_cpu_time(run.meta.counter_source) && !run.detail.ranks.empty() &&
         run.detail.segments == run.segments.size();
}

std::vector<double> longest_polling(const RunData& run, std::span<const std::size_t> segments) {
  std::vector<double> longest(segments.size(), 0.0);
  const DetailCells duration(run, Quantized::duration);
  const DetailCells work(run, Quantized::work, 1e-9);
  const DetailCells off_cpu(run, Quantized::off_cpu_time);
  const DetailCells io(run, Quantized::io_time);
  if (!duration.complete() || !work.complete() || !off_cpu.complete() || !io.complete()) return longest;
  const std::size_t rows = duration.rows();
  // A rank with less work and I/O than the busiest waits for that rank
  // anyway: its polling counts from the busiest rank's work and I/O on.
  std::vector<double> busiest(segments.size(), 0.0);
  for (std::size_t r = 0; r < rows; ++r) {
    for (std::size_t j = 0; j < segments.size(); ++j)
      busiest[j] = std::max(busiest[j], work(r, segments[j]) + io(r, segments[j]));
  }
  for (std::size_t r = 0; r < rows; ++r) {
    for (std::size_t j = 0; j < segments.size(); ++j) {
      const std::size_t s = segments[j];
      longest[j] = std::max(longest[j], duration(r, s) - busiest[j] - off_cpu(r, s));
    }
  }
  return longest;
}

double serial_waits(double worst_s, double summed_s, double polling_s, double clean_polling_s) {
  return worst_s + std::clamp(std::min(summed_s - worst_s, polling_s - clean_polling_s), 0.0, summed_s);
}

double late_wait(const RunData& run, std::size_t segment) {
  return segment < run.segments.late_wait_s.size() ? run.segments.late_wait_s[segment] : 0.0;
}

std::vector<std::uint8_t> oversubscribed_rows(const RunData& run) {
  const std::vector<NodeCpus> nodes = node_cpus(run);
  std::vector<std::uint8_t> rows(run.detail.ranks.size(), 0);
  for (std::size_t r = 0; r < rows.size(); ++r) {
    const std::size_t node = node_of_row(run, r);
    rows[r] = node < nodes.size() && nodes[node].oversubscribed();
  }
  return rows;
}

namespace {

// Per node the job oversubscribes and whose ranks are all detail ranks, its
// detail rows; empty for every other node (the CPU time of all its ranks is needed).
std::vector<std::vector<std::size_t>> shared_node_rows(const RunData& run, const std::vector<NodeCpus>& nodes) {
  std::vector<std::vector<std::size_t>> rows_of(nodes.size());
  for (std::size_t r = 0; r < run.detail.ranks.size(); ++r) {
    if (const std::size_t node = node_of_row(run, r); node < nodes.size()) rows_of[node].push_back(r);
  }
  for (std::size_t node = 0; node < nodes.size(); ++node) {
    if (!nodes[node].oversubscribed() || static_cast<long>(rows_of[node].size()) != nodes[node].ranks)
      rows_of[node].clear();
  }
  return rows_of;
}

}  // namespace

SharedNodeTime shared_node_time(const RunData& run) {
  const std::vector<NodeCpus> nodes = node_cpus(run);
  const std::vector<std::vector<std::size_t>> rows_of = shared_node_rows(run, nodes);
  const std::size_t n = std::min(run.detail.segments, run.segments.size());
  SharedNodeTime shared;
  shared.time_s.assign(run.segments.duration_s.begin(), run.segments.duration_s.end());
  shared.foreign_loss_s.assign(run.detail.segments, 0.0);
  shared.work_s.assign(run.detail.segments, 0.0);
  std::vector<double> longest(n, -1.0);  // the ranks' mean own time, the largest over nodes
  std::vector<double> own_duration;
  std::vector<double> off_cpu;
  std::vector<double> slept;
  std::vector<double> node_time(n, 0.0);
  std::vector<estimators::NodeCpuTime> times;
  const DetailCells own_durations(run, Quantized::duration);
  const DetailCells off_cpu_times(run, Quantized::off_cpu_time);
  const DetailCells work(run, Quantized::work);
  for (std::size_t node = 0; node < nodes.size(); ++node) {
    const std::vector<std::size_t>& rows = rows_of[node];
    if (rows.empty()) continue;
    slept.clear();
    for (const std::size_t r : rows) slept.push_back(slept_over_run_s(run, r));
    const auto cpus = static_cast<double>(nodes[node].cpus);
    times.clear();
    times.reserve(n);
    own_duration.resize(rows.size());
    off_cpu.resize(rows.size());
    for (std::size_t s = 0; s < n; ++s) {
      double work_ns = 0.0;
      for (std::size_t k = 0; k < rows.size(); ++k) {
        own_duration[k] = own_durations(rows[k], s);
        off_cpu[k] = off_cpu_times(rows[k], s);
        work_ns += work(rows[k], s);
      }
      shared.work_s[s] = std::max(shared.work_s[s], 1e-9 * work_ns / cpus);
      times.push_back(estimators::node_cpu_time(cpus, own_duration, off_cpu, slept));
      node_time[s] = std::min(run.segments.duration_s[s], times.back().capacity_s / cpus);
      longest[s] = std::max(longest[s], node_time[s]);
    }
    // The first segment is not read: each rank's starts at its own exit from
    // MPI_Init, and the early ones wait, asleep, for the last.
    if (!times.empty()) times.front() = {};
    const std::vector<double> share =
        estimators::foreign_cpu_share(times, cpus * kForeignShareAloneS, kForeignShareHalfWindow);
    for (std::size_t s = 0; s < n; ++s)
      shared.foreign_loss_s[s] = std::max(shared.foreign_loss_s[s], share[s] * node_time[s]);
  }
  for (std::size_t s = 0; s < n; ++s) {
    if (longest[s] >= 0.0) shared.time_s[s] = longest[s];
  }
  return shared;
}

std::vector<std::uint8_t> waiting_rows(const RunData& run, std::span<const std::uint8_t> oversubscribed) {
  std::vector<std::uint8_t> waiting(run.detail.ranks.size(), 0);
  for (std::size_t r = 0; r < waiting.size(); ++r) {
    const auto rank = static_cast<std::size_t>(run.detail.ranks[r]);
    if (rank >= run.ranks.size() || (r < oversubscribed.size() && oversubscribed[r])) continue;
    if (!std::isfinite(run.ranks[rank].run_queue_delay_s)) continue;  // not measured: nothing to compare
    waiting[r] = estimators::off_cpu_mostly_waiting(run.ranks[rank].run_queue_delay_s, off_cpu_total_s(run, r)) ? 1 : 0;
  }
  return waiting;
}

MeasuredCells::MeasuredCells(const RunData& run, std::span<const std::uint8_t> waiting,
                             std::span<const std::uint8_t> oversubscribed)
    : run_(run),
      waiting_(waiting),
      oversubscribed_(oversubscribed),
      off_cpu_(run, Quantized::off_cpu_time),
      wait_(run, Quantized::wait_time),
      io_(run, Quantized::io_time) {
  for (const FeatureVector& features : run.detail.signatures) {
    io_amounts_.push_back(io_amounts(features));
    const std::array<double, 6>& amounts = io_amounts_.back();
    io_present_.push_back(std::any_of(amounts.begin(), amounts.end(), [](double a) { return a > 0.0; }) ? 1 : 0);
  }
}

const std::array<double, 6>* MeasuredCells::io_amounts_of(std::size_t row, std::size_t segment) const {
  const DetailRanks& detail = run_.detail;
  const std::size_t cell = row * detail.segments + segment;
  if (cell >= detail.signature_index.size() || row >= detail.signature_offset.size()) return nullptr;
  const std::size_t entry = std::size_t{detail.signature_offset[row]} + detail.signature_index[cell];
  return entry < io_amounts_.size() && io_present_[entry] != 0 ? &io_amounts_[entry] : nullptr;
}

double MeasuredCells::column(std::size_t segment, std::vector<double>& column, bool with_io) {
  const std::size_t rows = run_.detail.ranks.size();
  column.assign(rows, 0.0);
  // Ranks that did the same I/O, or every kind of I/O a rank did: the
  // fastest of them, scaled to the rank's amounts, took what it costs.
  double largest_io = 0.0;
  if (with_io) {
    // Only the rows that did I/O (most segments have none or one).
    io_ranks_.clear();
    io_rows_.clear();
    for (std::size_t r = 0; r < rows; ++r) {
      const std::array<double, 6>* amounts = io_amounts_of(r, segment);
      if (amounts == nullptr) continue;
      estimators::RankIo& io = io_ranks_.emplace_back();
      io.amounts = *amounts;
      io.time_s = io_(r, segment);
      io.takes_turns = shares_cpus(r);
      if (io.takes_turns) io.off_cpu_s = off_cpu_(r, segment);
      io_rows_.push_back(r);
    }
    if (io_ranks_.size() >= 2) {
      estimators::io_stalls(io_ranks_, kIoStallFactor, io_beyond_);
      for (std::size_t i = 0; i < io_rows_.size(); ++i) {
        column[io_rows_[i]] = io_beyond_[i];
        largest_io = std::max(largest_io, io_beyond_[i]);
      }
    }
  }
  for (std::size_t r = 0; r < rows; ++r) {
    // Ranks taking turns on their node's CPUs are off them by turns: only their I/O counts.
    const double off_cpu = shares_cpus(r) ? 0.0 : off_cpu_(r, segment);
    column[r] = less_slack(r, segment, column[r] + off_cpu);
  }
  return largest_io;
}

double MeasuredCells::less_slack(std::size_t row, std::size_t segment, double measured) const {
  if (measured <= 0.0) return 0.0;  // most cells: nothing to take the slack from
  if (row < waiting_.size() && waiting_[row] != 0) return measured;
  const double slack = std::max(0.0, wait_(row, segment) - late_wait(run_, segment));
  return std::max(0.0, measured - slack);
}

double MeasuredCells::off_cpu_less_slack(std::size_t row, std::size_t segment) const {
  return less_slack(row, segment, off_cpu_(row, segment));
}

SleptOnSharedCpus slept_on_shared_cpus(const RunData& run, std::span<const std::uint8_t> oversubscribed,
                                       const MeasuredCells& measured) {
  const std::size_t rows = run.detail.ranks.size();
  const std::size_t n = run.detail.segments;
  SleptOnSharedCpus result;
  std::vector<double> cells(n);
  for (std::size_t r = 0; r < rows && r < oversubscribed.size(); ++r) {
    if (!oversubscribed[r]) continue;
    const double slept = slept_over_run_s(run, r);
    if (!(slept > 0.0)) continue;
    double weight = 0.0;
    for (std::size_t s = 0; s < n; ++s) weight += cells[s] = measured.off_cpu_less_slack(r, s);
    if (!(weight > 0.0)) continue;
    // Its sleep, spread over the segments where it was off the CPU; a
    // segment waits for the rank that slept most in it.
    if (result.where.empty()) result.where.assign(n, 0.0);
    for (std::size_t s = 0; s < n; ++s) result.where[s] = std::max(result.where[s], slept * cells[s] / weight);
  }
  for (const double share : result.where) result.slept_s += share;
  return result;
}

std::pair<double, double> run_measured_level(const RunData& run, std::span<const std::size_t> segments,
                                             MeasuredCells& measured) {
  constexpr std::size_t kMaxCells = std::size_t{1} << 17;
  const std::size_t rows = run.detail.ranks.size();
  if (segments.empty() || rows == 0) return {0.0, std::numeric_limits<double>::infinity()};
  const std::size_t stride = std::max<std::size_t>(1, segments.size() * rows / kMaxCells);
  std::vector<double> cells;
  std::vector<double> column;
  for (std::size_t j = 0; j < segments.size(); j += stride) {
    measured.column(segments[j], column, false);
    cells.insert(cells.end(), column.begin(), column.end());
  }
  const estimators::MeasuredDelayGroup level = estimators::measured_excess(cells, 1, cells.size());
  return {level.charge_level_s, level.threshold_s};
}

}  // namespace tremor::analysis::detail
