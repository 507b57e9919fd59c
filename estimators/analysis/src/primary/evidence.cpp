#include "evidence.hpp"

#include <algorithm>
#include <map>
#include <numeric>
#include <optional>

#include "shared_turns.hpp"
#include "tremor/estimators/intrinsic.hpp"
#include "tremor/estimators/measured_delay.hpp"

namespace tremor::analysis::detail {
namespace {

namespace est = tremor::estimators;

// Lower of the two quantiles the collective's clean latency is read from when
// most segments were delayed (the upper is the intrinsic model's low start):
// the same reading the clean spread then gets.
constexpr double kMostDelayedLowQuantile = 0.02;
// A level of polling (its 2 % quantile) is read from at most this many
// segments (every k-th beyond): 80 below it suffice.
constexpr std::size_t kMaxPollingLevelSegments = std::size_t{1} << 12;

std::int32_t closing_call(const RunData& run, std::size_t segment) {
  return segment < run.segments.closing_call.size() ? static_cast<std::int32_t>(run.segments.closing_call[segment])
                                                    : -1;
}

est::MeasuredDelayOptions most_delayed_options() {
  est::MeasuredDelayOptions options;
  options.low_quantile = kMostDelayedLowQuantile;
  options.clean_quantile = est::IntrinsicOptions{}.low_start_spread_quantile;
  return options;
}

// The kMostDelayedLowQuantile quantile (nearest rank below) of `values`, reordered; 0 when empty.
double low_quantile(std::vector<double>& values) {
  if (values.empty()) return 0.0;
  const auto low =
      values.begin() + static_cast<std::ptrdiff_t>(kMostDelayedLowQuantile * static_cast<double>(values.size() - 1));
  std::nth_element(values.begin(), low, values.end());
  return *low;
}

// The upper middle value of `values`, reordered (the caller checks it is not empty).
double upper_middle(std::vector<double>& values) {
  const auto middle = values.begin() + static_cast<std::ptrdiff_t>(values.size() / 2);
  std::nth_element(values.begin(), middle, values.end());
  return *middle;
}

// The ordinary level of the longest polling over `segments`: its low
// quantile, read from at most kMaxPollingLevelSegments of them (every k-th).
double polling_level(const RunData& run, std::span<const std::size_t> segments) {
  const std::size_t stride = std::max<std::size_t>(1, segments.size() / kMaxPollingLevelSegments);
  std::vector<std::size_t> sampled;
  for (std::size_t j = 0; j < segments.size(); j += stride) sampled.push_back(segments[j]);
  std::sort(sampled.begin(), sampled.end());  // the cells are read row by row
  std::vector<double> polling = longest_polling(run, sampled);
  return low_quantile(polling);
}

// The run's ordinary polling (a segment of no group has none of its own).
double run_clean_polling(const RunData& run, const std::vector<PrimaryGroup>& groups) {
  std::vector<std::size_t> segments;
  for (const PrimaryGroup& group : groups) segments.insert(segments.end(), group.members.begin(), group.members.end());
  return polling_level(run, segments);
}

// Per member of a group with ranks waiting for a CPU: its serial waits, the
// ordinary polling read from the group's least, or the run's if less.
std::vector<double> group_serial_waits(const RunData& run, std::span<const std::size_t> members,
                                       const est::MeasuredDelayGroup& ranks, double run_clean_polling_s) {
  std::vector<double> serial;
  if (ranks.waiting_sum_s.size() != members.size()) return serial;
  const double clean_polling = std::min(polling_level(run, members), run_clean_polling_s);
  std::vector<std::size_t> chained;
  std::vector<std::size_t> chained_at;
  for (std::size_t j = 0; j < members.size(); ++j) {
    if (ranks.waiting_sum_s[j] > ranks.excess_s[j]) {
      chained.push_back(members[j]);
      chained_at.push_back(j);
    }
  }
  const std::vector<double> polling = longest_polling(run, chained);
  serial.assign(ranks.excess_s.begin(), ranks.excess_s.end());
  for (std::size_t k = 0; k < chained.size(); ++k) {
    const std::size_t j = chained_at[k];
    serial[j] = serial_waits(ranks.excess_s[j], ranks.waiting_sum_s[j], polling[k], clean_polling);
  }
  return serial;
}

// The intrinsic time a group's serial waits are capped by: its intrinsic
// duration, or its typical segment less its serial waits if that is less
// (another process beside the whole run leaves the waits in every segment,
// the lowest included), at least the group's median work.
double intrinsic_without_waits(const RunData& run, std::span<const std::size_t> members,
                               std::span<const double> serial_s, double intrinsic_s, double floor_s) {
  if (serial_s.size() != members.size() || members.empty()) return intrinsic_s;
  std::vector<double> unwaited;
  unwaited.reserve(members.size());
  for (std::size_t j = 0; j < members.size(); ++j)
    unwaited.push_back(run.segments.duration_s[members[j]] - serial_s[j]);
  return std::min(intrinsic_s, std::max(floor_s, upper_middle(unwaited)));
}

// Per closing call: the least-wait threshold read from the lowest 2-8 % of
// all segments that close with it, over every group.
std::map<std::int32_t, double> pooled_latency_thresholds(const RunData& run, const std::vector<PrimaryGroup>& groups) {
  std::map<std::int32_t, std::vector<double>> by_call;
  for (const PrimaryGroup& group : groups) {
    for (const std::size_t segment : group.all_members())
      by_call[closing_call(run, segment)].push_back(late_wait(run, segment));
  }
  std::map<std::int32_t, double> thresholds;
  for (const auto& [call, cells] : by_call)
    thresholds[call] = est::measured_excess(cells, 1, cells.size(), most_delayed_options()).threshold_s;
  return thresholds;
}

}  // namespace

bool has_rank_detail(const RunData& run) {
  return !run.detail.ranks.empty() && run.detail.segments == run.segments.size();
}

bool work_is_cpu_time(const RunData& run) {
  return measures_cpu_time(run.meta.counter_source);
}

std::vector<double> segment_work_floors(const RunData& run) {
  const std::size_t n = run.segments.size();
  std::vector<double> floor(n, 0.0);
  if (!work_is_cpu_time(run) || run.segments.work.size() != n) return floor;
  const DetailCells work(run, Quantized::work, 1e-9);
  for (std::size_t s = 0; s < n; ++s) floor[s] = 1e-9 * run.segments.work[s];
  for (std::size_t r = 0; r < work.rows(); ++r) {
    for (std::size_t s = 0; s < n && s < work.segments(); ++s) floor[s] = std::max(floor[s], work(r, s));
  }
  return floor;
}


namespace {

// The rank cells of every model group against the group's own clean level;
// the run's ordinary polling is read once, when first needed.
void grouped_rank_evidence(const EvidenceInputs& in, MeasuredCells& measured, std::optional<double>& clean_polling,
                           SourceReading& out) {
  const RunData& run = in.run;
  const std::size_t rows = run.detail.ranks.size();
  std::vector<double> column;
  for (std::size_t i = 0; i < in.groups.size(); ++i) {
    const std::vector<std::size_t> members = in.groups[i].all_members();
    std::vector<double> cells(rows * members.size(), 0.0);
    for (std::size_t j = 0; j < members.size(); ++j) {
      out.io_stall_s[members[j]] = measured.column(members[j], column, true);
      out.io_stall_total_s += out.io_stall_s[members[j]];
      for (std::size_t r = 0; r < rows; ++r) cells[r * members.size() + j] = column[r];
    }
    const est::MeasuredDelayGroup ranks = est::measured_excess(cells, rows, members.size(), {}, in.waiting);
    out.total_s += ranks.total_excess_s;
    const double level_error = static_cast<double>(ranks.charged_segments) * ranks.level_standard_error_s;
    out.level_variance_s2 += level_error * level_error;
    if (!ranks.waiting_sum_s.empty() && !clean_polling) clean_polling = run_clean_polling(run, in.groups);
    const std::vector<double> serial = group_serial_waits(run, members, ranks, clean_polling.value_or(0.0));
    const double intrinsic = i < in.intrinsic_s.size() ? in.intrinsic_s[i] : 0.0;
    const double cap_s =
        intrinsic_without_waits(run, members, serial, intrinsic, i < in.work_floor_s.size() ? in.work_floor_s[i] : 0.0);
    for (std::size_t j = 0; j < members.size(); ++j) {
      double rank = ranks.excess_s.empty() ? 0.0 : ranks.excess_s[j];
      // Ranks descheduled one after another (each holding up the other, as
      // in a rendezvous) add up along the critical path, up to what the
      // segment took beyond its intrinsic time.
      if (!serial.empty()) rank = std::max(rank, std::min(serial[j], run.segments.duration_s[members[j]] - cap_s));
      out.delay_s[members[j]] = rank;
    }
  }
}

// Segments of no group have no clean level of their own: the run's, read
// from the grouped cells; a rank waiting for a CPU needs none. Without
// off-CPU time (a PAPI work counter) only the I/O is compared: its level is 0.
void ungrouped_rank_evidence(const EvidenceInputs& in, MeasuredCells& measured, std::optional<double>& clean_polling,
                             SourceReading& out) {
  const RunData& run = in.run;
  const double waiting_threshold = est::waiting_threshold_s(est::MeasuredDelayOptions{});
  std::vector<std::size_t> grouped;
  for (const PrimaryGroup& group : in.groups) {
    const std::vector<std::size_t> members = group.all_members();
    grouped.insert(grouped.end(), members.begin(), members.end());
  }
  const auto [run_level, run_threshold] =
      in.off_cpu_measured ? run_measured_level(run, grouped, measured) : std::pair{0.0, waiting_threshold};
  const std::vector<double> floors = segment_work_floors(run);
  std::vector<double> column;
  for (std::size_t segment = 0; segment < run.segments.size(); ++segment) {
    if (segment < in.segment_group.size() && in.segment_group[segment] >= 0) continue;
    out.io_stall_s[segment] = measured.column(segment, column, true);
    out.io_stall_total_s += out.io_stall_s[segment];
    double excess = 0.0;
    double waiting_sum = 0.0;
    for (std::size_t r = 0; r < column.size(); ++r) {
      const bool row_waiting = r < in.waiting.size() && in.waiting[r];
      const double row_excess = row_waiting ? est::excess_over_level(column[r], waiting_threshold, 0.0)
                                            : est::excess_over_level(column[r], run_threshold, run_level);
      excess = std::max(excess, row_excess);
      if (row_waiting) waiting_sum += std::max(0.0, row_excess);
    }
    // Waits for a CPU one after another add up, up to what the segment took
    // beyond its work (the run's ordinary polling stands for its own).
    if (waiting_sum > excess) {
      if (!clean_polling) clean_polling = run_clean_polling(run, in.groups);
      const double serial =
          serial_waits(excess, waiting_sum, longest_polling(run, std::span(&segment, 1)).front(), *clean_polling);
      excess = std::max(excess, std::min(serial, run.segments.duration_s[segment] - floors[segment]));
    }
    out.total_s += excess;
    out.delay_s[segment] = excess;
  }
}

double sum(const std::vector<double>& values) { return std::accumulate(values.begin(), values.end(), 0.0); }

// The first reading's value, then the larger of it and each next one's
// (std::max over a list, as NaN-safe as it); zeros where a reading is empty.
double largest_at(std::span<const SourceReading* const> readings, std::size_t segment,
                  std::vector<double> SourceReading::* values) {
  double largest = 0.0;
  for (std::size_t k = 0; k < readings.size(); ++k) {
    const std::vector<double>& v = readings[k]->*values;
    const double value = segment < v.size() ? v[segment] : 0.0;
    if (k == 0 || largest < value) largest = value;
  }
  return largest;
}

// Per segment, the largest of `values` over `readings`, as float (the What
// split's precision); zeros without any reading.
std::vector<float> largest_as_float(std::span<const SourceReading* const> readings,
                                    std::vector<double> SourceReading::* values, std::size_t n) {
  std::vector<float> largest(n, 0.0F);
  if (readings.empty()) return largest;
  for (std::size_t s = 0; s < n; ++s) largest[s] = static_cast<float>(largest_at(readings, s, values));
  return largest;
}

}  // namespace

SourceReading rank_evidence(const EvidenceInputs& in) {
  const std::size_t n = in.run.segments.size();
  SourceReading out;
  out.delay_s.assign(n, 0.0);
  out.io_stall_s.assign(n, 0.0);
  if (!has_rank_detail(in.run)) return out;
  MeasuredCells measured(in.run, in.waiting, in.oversubscribed);
  std::optional<double> clean_polling;
  if (in.off_cpu_measured) grouped_rank_evidence(in, measured, clean_polling, out);
  ungrouped_rank_evidence(in, measured, clean_polling, out);
  return out;
}

SourceReading collective_evidence(const EvidenceInputs& in) {
  const RunData& run = in.run;
  SourceReading out;
  out.delay_s.assign(run.segments.size(), 0.0);
  const std::map<std::int32_t, double> pooled = in.most_segments_delayed ? pooled_latency_thresholds(run, in.groups)
                                                                         : std::map<std::int32_t, double>{};
  std::vector<double> cells;
  for (const PrimaryGroup& group : in.groups) {
    const std::vector<std::size_t> members = group.all_members();
    cells.clear();
    for (const std::size_t segment : members) cells.push_back(late_wait(run, segment));
    est::MeasuredDelayOptions options;
    if (in.most_segments_delayed) {
      options = most_delayed_options();
      if (const auto found = pooled.find(closing_call(run, members.front())); found != pooled.end())
        options.threshold_cap_s = found->second;
    }
    const est::MeasuredDelayGroup boundary = est::measured_excess(cells, 1, cells.size(), options);
    out.total_s += boundary.total_excess_s;
    const double level_error = static_cast<double>(boundary.charged_segments) * boundary.level_standard_error_s;
    out.level_variance_s2 += level_error * level_error;
    for (std::size_t j = 0; j < members.size() && j < boundary.excess_s.size(); ++j)
      out.delay_s[members[j]] = boundary.excess_s[j];
  }
  return out;
}

SourceReading foreign_cpu_evidence(const EvidenceInputs& in) {
  SourceReading out;
  if (!in.taking_turns) return out;  // empty: nothing read (the common case keeps no memory for it)
  const std::size_t n = in.run.segments.size();
  const std::vector<double>& foreign = in.shared_nodes.foreign_loss_s;
  out.delay_s.assign(n, 0.0);
  for (std::size_t s = 0; s < foreign.size() && s < n; ++s) out.delay_s[s] = std::max(0.0, foreign[s]);
  out.total_s = sum(out.delay_s);
  return out;
}

SourceReading shared_turns_evidence(const EvidenceInputs& in) {
  SourceReading out;
  if (!in.taking_turns) return out;
  const std::size_t n = in.run.segments.size();
  const SharedNodeTime& node = in.shared_nodes;
  out.delay_s.assign(n, 0.0);
  out.apart_s.assign(n, 0.0);
  std::vector<std::vector<std::size_t>> modelled;
  std::vector<std::vector<std::size_t>> all;
  for (const PrimaryGroup& group : in.groups) {
    modelled.push_back(group.members);
    all.push_back(group.all_members());
  }
  const SharedTurnsLoss shared =
      shared_turns_loss(node.time_s, modelled, all, node.foreign_loss_s, node.work_s, std::max<std::size_t>(1, in.min_group));
  for (std::size_t s = 0; s < shared.loss_s.size() && s < n; ++s) {
    if (s < shared.referenced.size() && shared.referenced[s]) {
      out.delay_s[s] = shared.loss_s[s];
    } else {
      const double foreign = s < node.foreign_loss_s.size() ? std::max(0.0, node.foreign_loss_s[s]) : 0.0;
      out.apart_s[s] = std::max(0.0, shared.loss_s[s] - foreign);
    }
  }
  out.total_s = sum(out.delay_s);
  return out;
}

SourceReading slept_evidence(const EvidenceInputs& in) {
  SourceReading out;
  if (!in.taking_turns) return out;
  const MeasuredCells measured(in.run, {}, in.oversubscribed);
  SleptOnSharedCpus slept = slept_on_shared_cpus(in.run, in.oversubscribed, measured);
  out.delay_s = std::move(slept.where);
  out.total_s = slept.slept_s;
  return out;
}

std::vector<double> combine_evidence(std::span<const SourceReading* const> largest, std::span<const double> duration_s,
                                     std::span<const double> work_floor_s) {
  const std::size_t n = duration_s.size();
  std::vector<double> measured(n, 0.0);
  if (largest.empty()) return measured;
  for (std::size_t s = 0; s < n; ++s) {
    const double delay = largest_at(largest, s, &SourceReading::delay_s);
    if (!(delay > 0.0)) continue;
    const double room = duration_s[s] - (s < work_floor_s.size() ? work_floor_s[s] : 0.0);
    measured[s] = std::max(0.0, std::min(delay, room));
  }
  return measured;
}

MeasuredEvidence gather_evidence(const EvidenceInputs& in, std::span<const EvidenceSource> sources) {
  MeasuredEvidence evidence;
  std::vector<SourceReading> readings;
  std::vector<const SourceReading*> largest;
  std::vector<const SourceReading*> collective;
  readings.reserve(sources.size());
  for (const EvidenceSource& source : sources) {
    SourceReading& reading = readings.emplace_back(source.read(in));
    evidence.level_variance_s2 += reading.level_variance_s2;
    evidence.totals.io_peer_excess_s += reading.io_stall_total_s;
    evidence.apart_s += sum(reading.apart_s);
    if (source.role == EvidenceRole::run_floor) {
      evidence.run_floors.push_back({std::move(reading), source.total});
      continue;
    }
    evidence.totals.*source.total += reading.total_s;
    largest.push_back(&reading);
    if (source.hit == EvidenceHit::closing_collective) collective.push_back(&reading);
  }
  const std::size_t n = in.run.segments.size();
  evidence.measured_s = combine_evidence(largest, in.run.segments.duration_s, segment_work_floors(in.run));
  std::vector<const SourceReading*> with_io;
  for (const SourceReading* reading : largest) {
    if (!reading->io_stall_s.empty()) with_io.push_back(reading);
  }
  evidence.io_stall_s = largest_as_float(with_io, &SourceReading::io_stall_s, n);
  evidence.collective_wait_s = largest_as_float(collective, &SourceReading::delay_s, n);
  return evidence;
}

}  // namespace tremor::analysis::detail
