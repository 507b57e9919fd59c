// What lost the time (docs/report.md, "diagnosis.components"): the run and its
// lost time split into compute, MPI and file I/O, in percent of the run time.
//
// Run: per rank, exact totals over the whole run (compute = duration − MPI −
// I/O), averaged over ranks. Lost: each segment's charged time is split by
// which of its last-arriving detail rank's own components grew beyond that
// group's typical values, so time others spent waiting for a late rank counts
// toward what made that rank late, never toward "network". The collective's
// least wait beyond its typical latency counts toward MPI.
#include <algorithm>
#include <array>
#include <cmath>

#include "analysis_internal.hpp"

namespace tremor::analysis::detail {
namespace {

enum Part : std::size_t { kCompute = 0, kMpi = 1, kIo = 2, kParts = 3 };
using Parts = std::array<double, kParts>;

double rep(const RunData& run, Quantized metric, std::size_t cell) {
  const std::size_t m = index(metric);
  const std::uint16_t bin = run.detail.global_index[m][cell];
  return bin < run.global_bins[m].size() ? run.global_bins[m][bin].rep() : 0.0;
}

// The last detail rank to arrive at segment s's boundary (least wait in it)
// and its own components: compute, MPI outside the boundary, I/O; the
// collective's least wait (over all ranks) goes to MPI.
Parts late_rank_parts(const RunData& run, std::size_t s) {
  const std::size_t rows = run.detail.ranks.size();
  const std::size_t columns = run.detail.segments;
  std::size_t late = 0;
  double least_wait = INFINITY;
  for (std::size_t r = 0; r < rows; ++r) {
    const double wait = rep(run, Quantized::wait_time, r * columns + s);
    if (wait < least_wait) {
      least_wait = wait;
      late = r;
    }
  }
  const std::size_t cell = late * columns + s;
  const double duration = rep(run, Quantized::duration, cell);
  const double mpi = rep(run, Quantized::mpi_time, cell);
  const double io = rep(run, Quantized::io_time, cell);
  const double wait = rep(run, Quantized::wait_time, cell);
  const double collective = s < run.segments.late_wait_s.size() ? run.segments.late_wait_s[s] : wait;
  return {std::max(0.0, duration - mpi - io), std::max(0.0, mpi - wait) + collective, io};
}

// A component's typical value in a group: a low quantile of its members, which
// stays on undelayed segments while at least that share of them is undelayed
// (the posterior charges a little to nearly every segment, so "charged
// nothing" cannot pick them).
constexpr double kTypicalQuantile = 0.05;

double low_quantile(std::vector<double> values) {
  if (values.empty()) return 0.0;
  const auto at =
      values.begin() + static_cast<std::ptrdiff_t>(kTypicalQuantile * static_cast<double>(values.size() - 1));
  std::nth_element(values.begin(), at, values.end());
  return *at;
}

}  // namespace

void split_components(const RunData& run, RunAnalysis& analysis) {
  ComponentSplit& split = analysis.components;
  split = {};
  const double run_time = analysis.run_time_s;
  if (!(run_time > 0.0)) return;
  // The run: exact per-rank totals.
  Parts run_parts{};
  std::size_t ranks = 0;
  for (const QuantizedValues& totals : run.raw_totals) {
    const double mpi = totals[index(Quantized::mpi_time)];
    const double io = totals[index(Quantized::io_time)];
    run_parts[kCompute] += std::max(0.0, totals[index(Quantized::duration)] - mpi - io);
    run_parts[kMpi] += mpi;
    run_parts[kIo] += io;
    ++ranks;
  }
  if (ranks > 0) {
    for (double& part : run_parts) part = 100.0 * part / static_cast<double>(ranks) / run_time;
    split.run_available = true;
    split.run = {run_parts[kCompute], run_parts[kMpi], run_parts[kIo]};
  }
  // The lost time: needs the detail ranks of every segment.
  const std::size_t n = analysis.segment_count;
  if (run.detail.ranks.empty() || run.detail.segments != n || analysis.segment_impact_s.size() != n) return;
  std::vector<Parts> parts(n);
  for (std::size_t s = 0; s < n; ++s) parts[s] = late_rank_parts(run, s);
  std::vector<Parts> typical(analysis.groups.size(), Parts{});
  for (std::size_t g = 0; g < analysis.groups.size(); ++g) {
    std::array<std::vector<double>, kParts> values;
    for (const std::size_t s : analysis.groups[g].members) {
      if (s < n) {
        for (std::size_t k = 0; k < kParts; ++k) values[k].push_back(parts[s][k]);
      }
    }
    for (std::size_t k = 0; k < kParts; ++k) typical[g][k] = low_quantile(std::move(values[k]));
  }
  Parts lost{};
  double unattributed = 0.0;
  for (std::size_t s = 0; s < n; ++s) {
    const double charged = analysis.segment_impact_s[s];
    const std::int64_t g = analysis.segment_group[s];
    if (!(charged > 0.0) || g < 0) continue;
    Parts growth{};
    double total = 0.0;
    for (std::size_t k = 0; k < kParts; ++k) {
      growth[k] = std::max(0.0, parts[s][k] - typical[static_cast<std::size_t>(g)][k]);
      total += growth[k];
    }
    if (!(total > 0.0)) {
      unattributed += charged;
      continue;
    }
    for (std::size_t k = 0; k < kParts; ++k) lost[k] += charged * growth[k] / total;
  }
  split.lost_available = true;
  split.lost = {100.0 * lost[kCompute] / run_time, 100.0 * lost[kMpi] / run_time, 100.0 * lost[kIo] / run_time};
  split.lost_unattributed = 100.0 * unattributed / run_time;
}

}  // namespace tremor::analysis::detail
