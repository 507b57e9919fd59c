// The primary estimate (docs/statistics-primary.md): every usable group is
// split by the group of the segment before it, so a slowdown that recurs at
// the same place in the application's cycle (the iteration after its own
// checkpoint write) is compared with itself once it occurred min_group times;
// the intrinsic estimator then charges each segment its posterior expected delay.
#include <algorithm>
#include <cstdlib>
#include <limits>
#include <map>
#include <numeric>
#include <optional>
#include <utility>

#include "analysis_internal.hpp"
#include "tremor/estimators/interference.hpp"
#include "tremor/estimators/intrinsic.hpp"
#include "tremor/estimators/measured_delay.hpp"
#include "measured_cells.hpp"
#include "shared_turns.hpp"
#include "stranded_segments.hpp"

namespace tremor::analysis::detail {
namespace {

namespace est = tremor::estimators;

// A usable group is split only when the subgroups large enough to stand alone
// keep at least this share of its segments; otherwise (no stable cycle) it stays whole.
constexpr double kMinSplitCoverage = 0.9;
// The interval's replicas, at most: it needs percentiles, not the GEV tails.
constexpr int kMaxIntervalReplicas = 200;
constexpr std::uint64_t kIntervalStream = 0x7072696d617279ULL;
// Lower of the two quantiles the collective's clean latency is read from when
// most segments were delayed (the upper is the intrinsic estimator's low start).
constexpr double kMostDelayedLowQuantile = 0.02;
// A level of polling (its 2 % quantile) is read from at most this many
// segments (every k-th beyond): 80 below it suffice.
constexpr std::size_t kMaxPollingLevelSegments = std::size_t{1} << 12;
// Groups larger than this set their first (warm-up) segment apart.
constexpr std::size_t kMinMembersForWarmUp = 3;

struct PrimaryGroup {
  std::size_t parent = 0;              // index into RunAnalysis::groups
  std::vector<std::size_t> members;    // those the intrinsic estimator models
  std::optional<std::size_t> warm_up;  // the group's first segment, set apart

  // Every segment of the group, the warm-up one included (measured delays).
  std::vector<std::size_t> all_members() const {
    std::vector<std::size_t> all = members;
    if (warm_up) all.insert(std::lower_bound(all.begin(), all.end(), *warm_up), *warm_up);
    return all;
  }
};

// Returns the subgroups of the usable groups, their members and each
// segment's previous group read from `membership` (primary_membership:
// stranded segments with the group they join). Segments of subgroups too small to stand alone are
// too few to show a recurring pattern: they join the largest subgroup of
// their group. `split_off` marks the segments of the other subgroups.
std::vector<PrimaryGroup> split_by_previous_group(const RunAnalysis& analysis, std::span<const std::int64_t> membership,
                                                  std::size_t min_size, std::vector<std::uint8_t>& split_off) {
  std::vector<std::vector<std::size_t>> members_of(analysis.groups.size());
  for (std::size_t segment = 0; segment < membership.size(); ++segment) {
    const std::int64_t g = membership[segment];
    if (g >= 0 && static_cast<std::size_t>(g) < members_of.size())
      members_of[static_cast<std::size_t>(g)].push_back(segment);
  }
  std::vector<PrimaryGroup> result;
  for (std::size_t g = 0; g < analysis.groups.size(); ++g) {
    if (!analysis.groups[g].usable) continue;
    const std::vector<std::size_t>& group_members = members_of[g];
    std::map<std::int64_t, std::vector<std::size_t>> by_previous;
    for (const std::size_t segment : group_members) {
      const std::int64_t previous = segment == 0 ? -2 : membership[segment - 1];
      by_previous[previous].push_back(segment);
    }
    std::size_t covered = 0;
    std::vector<std::size_t>* largest = nullptr;
    for (auto& [previous, members] : by_previous) {
      if (members.size() >= min_size) covered += members.size();
      if (!largest || members.size() > largest->size()) largest = &members;
    }
    if (by_previous.size() == 1 ||
        static_cast<double>(covered) < kMinSplitCoverage * static_cast<double>(group_members.size())) {
      result.push_back({g, group_members, std::nullopt});
      continue;
    }
    std::vector<std::size_t> main = *largest;
    for (auto& [previous, members] : by_previous) {
      if (&members == largest) continue;
      if (members.size() >= min_size) {
        for (const std::size_t segment : members) split_off[segment] = 1;
        result.push_back({g, std::move(members), std::nullopt});
      } else {
        main.insert(main.end(), members.begin(), members.end());
      }
    }
    std::sort(main.begin(), main.end());
    result.push_back({g, std::move(main), std::nullopt});
  }
  return result;
}

// The first time a code path runs it is often slower on its own: pages touched
// for the first time, a file created rather than rewritten, connections the
// MPI library opens lazily. Each group's first segment is therefore left out
// of the intrinsic estimate (no posterior charge); the measured delays still
// apply to it. Returns how many were set apart.
std::size_t set_warm_up_apart(std::vector<PrimaryGroup>& groups) {
  std::size_t apart = 0;
  for (PrimaryGroup& group : groups) {
    if (group.members.size() <= kMinMembersForWarmUp) continue;
    const auto first = std::min_element(group.members.begin(), group.members.end());
    group.warm_up = *first;
    group.members.erase(first);
    ++apart;
  }
  return apart;
}

// The work counter reads thread CPU time, in ns.
bool work_is_cpu_time(const RunData& run) { return run.meta.counter_source != "papi" && run.meta.counter_unit == "ns"; }

// What a segment takes at least, s: its busiest detail rank's CPU time (the
// median rank's without per-rank detail; 0 with another work counter). A
// co-runner that inflates a rank's CPU time inflates its duration as much,
// so this bounds only what a measured delay (time off the CPU) may be charged.
// Read per charge: a per-segment table would raise the analysis's peak memory.
double segment_work_floor_s(const RunData& run, const CellValues& work, std::size_t segment) {
  if (!work_is_cpu_time(run) || segment >= run.segments.work.size()) return 0.0;
  double busiest = run.segments.work[segment];
  if (segment < run.detail.segments) {
    for (std::size_t r = 0; r < run.detail.ranks.size(); ++r) busiest = std::max(busiest, work(r, segment));
  }
  return 1e-9 * busiest;
}

// Per member of the group: the worst detail rank's measured excess (off the
// CPU, I/O stalls). Adds the members' largest I/O parts to `io_peer_s`.
est::MeasuredDelayGroup rank_excess(const RunData& run, std::span<const std::size_t> members,
                                    std::span<const std::uint8_t> waiting, MeasuredCells& measured, double& io_peer_s) {
  const std::size_t rows = run.detail.ranks.size();
  const std::size_t n = members.size();
  std::vector<double> cells(rows * n, 0.0);
  std::vector<double> column;
  for (std::size_t j = 0; j < n; ++j) {
    io_peer_s += measured.column(members[j], column, true);
    for (std::size_t r = 0; r < rows; ++r) cells[r * n + j] = column[r];
  }
  return est::measured_excess(cells, rows, n, {}, waiting);
}

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

// Per closing call: the least-wait threshold read from the lowest 2-8 % of all
// segments that close with it, over every group. A small group whose segments
// were all delayed has no clean latency of its own; the same collective in
// the other groups has one.
std::map<std::int32_t, double> pooled_latency_thresholds(const RunData& run, const std::vector<PrimaryGroup>& groups) {
  std::map<std::int32_t, std::vector<double>> by_call;
  for (const PrimaryGroup& group : groups) {
    for (const std::size_t segment : group.all_members())
      by_call[closing_call(run, segment)].push_back(late_wait(run, segment));
  }
  std::map<std::int32_t, double> thresholds;
  for (const auto& [call, cells] : by_call) {
    thresholds[call] = est::measured_excess(cells, 1, cells.size(), most_delayed_options()).threshold_s;
  }
  return thresholds;
}

// Per member: the least wait in the closing collective above its clean latency.
// When most segments were delayed (the durations spread far more than their
// work), the clean latency is read from the lowest 2-8 % of the group, as the
// intrinsic estimator reads its clean spread, and is at most the one pooled
// over all groups closing with the same call; otherwise from 5-25 % of the group.
est::MeasuredDelayGroup boundary_excess(const RunData& run, std::span<const std::size_t> members, bool most_delayed,
                                        std::optional<double> pooled_threshold) {
  std::vector<double> cells;
  cells.reserve(members.size());
  for (const std::size_t segment : members) cells.push_back(late_wait(run, segment));
  est::MeasuredDelayOptions options;
  if (most_delayed) options = most_delayed_options();
  if (most_delayed && pooled_threshold) options.threshold_cap_s = *pooled_threshold;
  return est::measured_excess(cells, 1, cells.size(), options);
}

// Ranks that take turns on an oversubscribed node have no clean level, but
// what they slept is known: the run lost at least what their sleeps cost
// along the segments (SleptOnSharedCpus). What the charges so far miss of it
// goes where they slept, up to each segment's duration. Returns the time
// added.
double add_slept_on_shared_cpus(const SleptOnSharedCpus& slept, const RunData& run, RunAnalysis& analysis,
                                std::vector<double>& measured_at, std::vector<std::uint8_t>& interfered) {
  const double lost = std::accumulate(analysis.segment_lost_s.begin(), analysis.segment_lost_s.end(), 0.0);
  const double weight = std::accumulate(slept.where.begin(), slept.where.end(), 0.0);
  if (!(slept.slept_s > lost) || !(weight > 0.0)) return 0.0;
  const double missing = slept.slept_s - lost;
  double added = 0.0;
  for (std::size_t segment = 0; segment < slept.where.size(); ++segment) {
    const double room = run.segments.duration_s[segment] - analysis.segment_lost_s[segment];
    const double extra = std::min(room, missing * slept.where[segment] / weight);
    if (extra <= 0.0) continue;
    analysis.rank_excess_s += extra;
    measured_at[segment] += extra;
    analysis.segment_lost_s[segment] += extra;
    added += extra;
    interfered[segment] = 1;
  }
  return added;
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

// Per member of a group with ranks waiting for a CPU: its serial waits
// (serial_waits), the ordinary polling read from the group's least, or the
// run's if less: a group whose every segment waited for a CPU (another
// process beside the whole run) has no clean level of its own.
std::vector<double> group_serial_waits(const RunData& run, std::span<const std::size_t> members,
                                       const est::MeasuredDelayGroup& ranks, double run_clean_polling_s) {
  std::vector<double> serial;
  if (ranks.waiting_sum_s.size() != members.size()) return serial;
  const double clean_polling = std::min(polling_level(run, members), run_clean_polling_s);
  // Only a segment where a second rank waited for a CPU has a chain to read.
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

// The run's ordinary polling (a segment of no group has none of its own):
// the low quantile of the longest polling over the grouped segments.
double run_clean_polling(const RunData& run, const std::vector<PrimaryGroup>& groups) {
  std::vector<std::size_t> segments;
  for (const PrimaryGroup& group : groups) segments.insert(segments.end(), group.members.begin(), group.members.end());
  return polling_level(run, segments);
}

// The intrinsic time a group's serial waits are capped by: the group's
// baseline, or the typical segment with its serial waits taken out if that
// is less. When another process shares the cores for the whole run, every
// segment waited for a CPU, the lowest durations included, and the baseline
// holds the waits; what the segments took beyond it then misses them. The
// cap is at least the group's median work (`floor_s`).
double intrinsic_without_waits(const RunData& run, std::span<const std::size_t> members,
                               std::span<const double> serial_s, double intrinsic_s, double floor_s) {
  if (serial_s.size() != members.size() || members.empty()) return intrinsic_s;
  std::vector<double> unwaited;
  unwaited.reserve(members.size());
  for (std::size_t j = 0; j < members.size(); ++j)
    unwaited.push_back(run.segments.duration_s[members[j]] - serial_s[j]);
  return std::min(intrinsic_s, std::max(floor_s, upper_middle(unwaited)));
}

// Each segment is charged at least its measured delay: the larger of the
// excess of its worst detail rank (off the CPU, or slower I/O than a rank
// that did the same) and the collective's excess. They
// overlap: a rank off the CPU inside the collective delays every rank's exit,
// so the least wait holds that time too. Returns the time this adds to the
// posterior delays.
double charge_measured(const RunData& run, const std::vector<PrimaryGroup>& groups,
                       std::span<const std::uint8_t> oversubscribed, std::span<const double> work_floor_s,
                       const SharedNodeTime& node, RunAnalysis& analysis, std::vector<std::uint8_t>& interfered) {
  double added = 0.0;
  std::vector<double> measured_at(analysis.segment_count, 0.0);  // each segment's measured delay
  // A segment lasts at least its busiest rank's work (CPU-time counter; 0
  // otherwise): no charge leaves it less.
  const CellValues work_cells(run, Quantized::work);
  auto charge = [&](std::size_t segment, double measured) {
    if (!(measured > 0.0)) return;
    measured = std::min(measured, run.segments.duration_s[segment] - segment_work_floor_s(run, work_cells, segment));
    measured_at[segment] = std::max(measured_at[segment], measured);
    if (measured > analysis.segment_lost_s[segment]) {
      added += measured - analysis.segment_lost_s[segment];
      analysis.segment_lost_s[segment] = measured;
      interfered[segment] = 1;
    }
  };
  const std::map<std::int32_t, double> pooled =
      analysis.most_segments_delayed ? pooled_latency_thresholds(run, groups) : std::map<std::int32_t, double>{};
  const std::vector<std::uint8_t> waiting =
      analysis.off_cpu_measured ? waiting_rows(run, oversubscribed) : std::vector<std::uint8_t>{};
  analysis.waiting_ranks = static_cast<std::size_t>(std::count(waiting.begin(), waiting.end(), 1));
  // Per rank evidence needs every segment of the detail ranks.
  const bool per_rank = !run.detail.ranks.empty() && run.detail.segments == run.segments.size();
  MeasuredCells measured(run, waiting, oversubscribed);
  std::optional<double> clean_polling;  // the run's ordinary polling, read once when needed
  for (std::size_t i = 0; i < groups.size(); ++i) {
    const std::vector<std::size_t> members = groups[i].all_members();
    const double intrinsic = i < analysis.primary_intrinsic_s.size() ? analysis.primary_intrinsic_s[i] : 0.0;
    std::optional<double> pooled_threshold;
    if (const auto found = pooled.find(closing_call(run, members.front())); found != pooled.end())
      pooled_threshold = found->second;
    const est::MeasuredDelayGroup ranks = analysis.off_cpu_measured
                                              ? rank_excess(run, members, waiting, measured, analysis.io_peer_excess_s)
                                              : est::MeasuredDelayGroup{};
    const est::MeasuredDelayGroup boundary =
        boundary_excess(run, members, analysis.most_segments_delayed, pooled_threshold);
    analysis.rank_excess_s += ranks.total_excess_s;
    analysis.boundary_excess_s += boundary.total_excess_s;
    if (!ranks.waiting_sum_s.empty() && !clean_polling) clean_polling = run_clean_polling(run, groups);
    const std::vector<double> serial = group_serial_waits(run, members, ranks, clean_polling.value_or(0.0));
    const double waits_cap_s =
        intrinsic_without_waits(run, members, serial, intrinsic, i < work_floor_s.size() ? work_floor_s[i] : 0.0);
    for (std::size_t j = 0; j < members.size(); ++j) {
      double rank = ranks.excess_s.empty() ? 0.0 : ranks.excess_s[j];
      // Ranks descheduled one after another (each holding up the other, as
      // in a rendezvous) add up along the segment's critical path, up to what
      // the segment took beyond its intrinsic time.
      if (!serial.empty()) {
        const double beyond = run.segments.duration_s[members[j]] - waits_cap_s;
        rank = std::max(rank, std::min(serial[j], beyond));
      }
      const double late = boundary.excess_s.empty() ? 0.0 : boundary.excess_s[j];
      charge(members[j], std::max(rank, late));
    }
  }
  if (analysis.taking_turns) {  // implies per-rank evidence
    const std::vector<double>& foreign = node.foreign_loss_s;
    for (std::size_t segment = 0; segment < foreign.size(); ++segment) {
      if (!(foreign[segment] > 0.0)) continue;
      analysis.foreign_cpu_loss_s += foreign[segment];
      charge(segment, foreign[segment]);
    }
    std::vector<std::vector<std::size_t>> modelled;
    std::vector<std::vector<std::size_t>> all;
    for (const PrimaryGroup& group : groups) {
      modelled.push_back(group.members);
      all.push_back(group.all_members());
    }
    const double before = added;
    const auto min_reference = static_cast<std::size_t>(std::max(1, analysis.parameters.min_group));
    const SharedTurnsLoss shared = shared_turns_loss(node.time_s, modelled, all, foreign, node.work_s, min_reference);
    const std::vector<double>& turns = shared.loss_s;
    analysis.shared_turns_unreferenced_s = shared.unreferenced_s;
    for (std::size_t segment = 0; segment < turns.size(); ++segment) {
      if (!(turns[segment] > 0.0)) continue;
      analysis.shared_turns_loss_s += turns[segment];
      charge(segment, turns[segment]);
    }
    analysis.shared_turns_added_s = added - before;
  }
  // Segments in no usable group (the first one, rare phases) have no clean
  // level of their own: they take the run's, read from the grouped cells; the
  // time a rank spent waiting for a CPU needs none. Ranks that take turns on
  // their node's CPUs with the job's own ranks count only their I/O against
  // the ranks that did the same I/O (MeasuredCells). Without off-CPU time
  // (a PAPI work counter) only the I/O is compared: its clean level is 0.
  const double waiting_threshold = est::waiting_threshold_s(est::MeasuredDelayOptions{});
  std::vector<std::size_t> grouped;
  for (const PrimaryGroup& group : groups) {
    const std::vector<std::size_t> members = group.all_members();
    grouped.insert(grouped.end(), members.begin(), members.end());
  }
  const auto [run_level, run_threshold] = analysis.off_cpu_measured ? run_measured_level(run, grouped, measured)
                                                                      : std::pair{0.0, waiting_threshold};
  std::vector<double> column;
  for (std::size_t segment = 0; per_rank && segment < analysis.segment_count; ++segment) {
    if (analysis.segment_primary_group[segment] >= 0) continue;
    analysis.io_peer_excess_s += measured.column(segment, column, true);
    double excess = 0.0;
    double waiting_sum = 0.0;
    for (std::size_t r = 0; r < column.size(); ++r) {
      const bool row_waiting = r < waiting.size() && waiting[r];
      const double row_excess = row_waiting ? est::excess_over_level(column[r], waiting_threshold, 0.0)
                                            : est::excess_over_level(column[r], run_threshold, run_level);
      excess = std::max(excess, row_excess);
      if (row_waiting) waiting_sum += std::max(0.0, row_excess);
    }
    // As in the groups, waits for a CPU one after another add up along the
    // critical path, up to what the segment took beyond its work (it has no
    // intrinsic time: the run's ordinary polling stands for its own).
    if (waiting_sum > excess) {
      if (!clean_polling) clean_polling = run_clean_polling(run, groups);
      const double serial =
          serial_waits(excess, waiting_sum, longest_polling(run, std::span(&segment, 1)).front(), *clean_polling);
      excess = std::max(excess, std::min(serial, run.segments.duration_s[segment] -
                                                     segment_work_floor_s(run, work_cells, segment)));
    }
    analysis.rank_excess_s += excess;
    charge(segment, excess);
  }
  // Last: the lower bound compares with every charge made so far.
  if (analysis.off_cpu_measured)  // implies per-rank evidence
    added += add_slept_on_shared_cpus(slept_on_shared_cpus(run, oversubscribed, measured), run, analysis, measured_at,
                                      interfered);
  analysis.measured_delay_s = std::accumulate(measured_at.begin(), measured_at.end(), 0.0);
  return added;
}

// Per group, its upper middle work value (0 for an empty group).
std::vector<double> group_work_medians(const std::vector<std::vector<double>>& work) {
  std::vector<double> medians;
  for (std::vector<double> values : work) medians.push_back(values.empty() ? 0.0 : upper_middle(values));
  return medians;
}

// With the CPU-time counter (work in ns), a segment that did more work than
// its group's median spent that much more CPU time of its own: it is compared
// with the others less that excess, so an application's own heavier
// iterations (LAMMPS steps that vary in CPU time) are not delays. Slowing
// of the CPU itself (cache, memory bandwidth) inflates CPU time as well and
// is then not charged (docs/statistics-primary.md).
void remove_work_excess(const std::vector<std::vector<double>>& work, std::span<const double> medians,
                        std::vector<std::vector<double>>& durations) {
  for (std::size_t i = 0; i < durations.size() && i < work.size(); ++i) {
    if (work[i].size() != durations[i].size() || work[i].empty()) continue;
    for (std::size_t j = 0; j < durations[i].size(); ++j) {
      const double excess_s = 1e-9 * (work[i][j] - medians[i]);
      if (excess_s > 0.0 && durations[i][j] > excess_s) durations[i][j] -= excess_s;
    }
  }
}

// Ranks that take turns on a node's CPUs (the job oversubscribes it) stretch
// segments by how the scheduler happens to interleave them, run after run: a
// segment of 0.02 ms of work lasts 2 to 9 ms in clean runs. The durations'
// spread is then no evidence of interference, and only measured delays are
// charged: sleep, I/O stalls, late collectives and the CPU time other
// processes took on the node. A group's intrinsic duration is then its mean.
void drop_posterior_charges(std::span<const std::span<const double>> durations, est::IntrinsicEstimate& estimate) {
  for (std::vector<double>& lost : estimate.lost) std::fill(lost.begin(), lost.end(), 0.0);
  for (std::vector<double>& probability : estimate.probability) std::fill(probability.begin(), probability.end(), 0.0);
  for (std::size_t i = 0; i < estimate.groups.size() && i < durations.size(); ++i) {
    est::GroupIntrinsic& group = estimate.groups[i];
    group.lost = 0.0;
    group.interfered_share = 0.0;
    if (!durations[i].empty())
      group.baseline =
          std::accumulate(durations[i].begin(), durations[i].end(), 0.0) / static_cast<double>(durations[i].size());
  }
  estimate.total_lost = 0.0;
}

}  // namespace

std::vector<std::uint8_t> estimate_primary(const RunData& run, RunAnalysis& analysis) {
  const std::size_t n = analysis.segment_count;
  analysis.segment_lost_s.assign(n, 0.0);
  analysis.segment_primary_group.assign(n, -1);
  analysis.segment_delay_probability.assign(n, 0.0F);
  std::vector<std::uint8_t> interfered(n, 0);
  std::vector<std::uint8_t> split_off(n, 0);
  const auto min_size = static_cast<std::size_t>(std::max(1, analysis.parameters.min_group));
  const bool has_work = run.segments.work.size() == run.segments.duration_s.size();
  const bool cpu_time_work = has_work && work_is_cpu_time(run);
  const std::vector<std::int64_t> membership = primary_membership(run, analysis, cpu_time_work);
  std::vector<PrimaryGroup> groups = split_by_previous_group(analysis, membership, min_size, split_off);
  analysis.warm_up_segments = set_warm_up_apart(groups);
  analysis.primary_groups = groups.size();
  analysis.recurring_segments = static_cast<std::size_t>(std::count(split_off.begin(), split_off.end(), 1));

  std::vector<std::vector<double>> durations(groups.size());
  std::vector<std::vector<double>> work(groups.size());
  for (std::size_t i = 0; i < groups.size(); ++i) {
    for (const std::size_t segment : groups[i].members) {
      durations[i].push_back(run.segments.duration_s[segment]);
      if (has_work) work[i].push_back(run.segments.work[segment]);
    }
  }
  const std::vector<double> work_medians = cpu_time_work ? group_work_medians(work) : std::vector<double>{};
  if (cpu_time_work) remove_work_excess(work, work_medians, durations);
  const std::vector<std::span<const double>> spans(durations.begin(), durations.end());
  const std::vector<std::span<const double>> work_spans(work.begin(), work.end());
  // With the CPU-time counter (work in ns) a clean segment lasts at least its
  // work: the median work of each group floors its intrinsic duration.
  std::vector<double> baseline_floor;
  for (const double median : work_medians) baseline_floor.push_back(1e-9 * median);
  est::IntrinsicEstimate estimate = est::estimate_intrinsic(
      spans, {}, has_work ? std::span(work_spans) : std::span<const std::span<const double>>{}, baseline_floor);
  analysis.off_cpu_measured = off_cpu_measured(run);
  const std::vector<std::uint8_t> oversubscribed = oversubscribed_rows(run);
  analysis.taking_turns =
      analysis.off_cpu_measured && std::find(oversubscribed.begin(), oversubscribed.end(), 1) != oversubscribed.end();
  if (analysis.taking_turns) drop_posterior_charges(spans, estimate);
  analysis.unexplained_spread_ratio = estimate.unexplained_spread_ratio;
  analysis.most_segments_delayed = estimate.lower_start_chosen;
  analysis.clean_relative_spread = estimate.relative_spread;
  analysis.delay_probability = estimate.delay_probability;
  analysis.primary_intrinsic_s.clear();
  for (const est::GroupIntrinsic& group : estimate.groups) analysis.primary_intrinsic_s.push_back(group.baseline);
  analysis.relative_delay_mean = estimate.relative_delay_mean;

  std::vector<double> intrinsic_weight(analysis.groups.size(), 0.0);
  for (std::size_t i = 0; i < groups.size(); ++i) {
    GroupResult& parent = analysis.groups[groups[i].parent];
    for (std::size_t j = 0; j < groups[i].members.size(); ++j) {
      const std::size_t segment = groups[i].members[j];
      analysis.segment_lost_s[segment] = estimate.lost[i][j];
      analysis.segment_primary_group[segment] = static_cast<std::int32_t>(i);
      analysis.segment_delay_probability[segment] = static_cast<float>(estimate.probability[i][j]);
      interfered[segment] = estimate.probability[i][j] >= 0.5 && estimate.lost[i][j] > 0.0;
    }
    if (groups[i].warm_up) analysis.segment_primary_group[*groups[i].warm_up] = static_cast<std::int32_t>(i);
    parent.lost_s += estimate.groups[i].lost;
    const auto size = static_cast<double>(groups[i].members.size());
    parent.intrinsic_s += size * estimate.groups[i].baseline;
    intrinsic_weight[groups[i].parent] += size;
  }
  for (std::size_t g = 0; g < analysis.groups.size(); ++g) {
    if (intrinsic_weight[g] > 0.0) analysis.groups[g].intrinsic_s /= intrinsic_weight[g];
  }

  // Ranks taking turns on a node's CPUs take at least their summed work over them.
  const SharedNodeTime shared_nodes = analysis.taking_turns ? shared_node_time(run) : SharedNodeTime{};
  const std::vector<double>& shared_work = shared_nodes.work_s;
  const double measured_added =
      charge_measured(run, groups, oversubscribed, baseline_floor, shared_nodes, analysis, interfered);
  analysis.measured_added_s = measured_added;

  const double run_time = analysis.run_time_s;
  // Segment durations are maxima over ranks, and their sum exceeds the run
  // when ranks leave the boundaries at different times: the lost time cannot
  // exceed the run, nor, with the CPU-time counter, the run less the work on
  // its critical path. Each segment took at least its median rank's CPU time
  // (/segments/work); the median, not the largest, because a co-runner that
  // pollutes the caches inflates CPU time, and the largest most; ranks
  // taking turns, at least their summed work over the node's CPUs.
  analysis.work_critical_path_s = 0.0;
  if (cpu_time_work) {
    for (std::size_t s = 0; s < run.segments.work.size(); ++s)
      analysis.work_critical_path_s +=
          std::max(1e-9 * run.segments.work[s], s < shared_work.size() ? shared_work[s] : 0.0);
  }
  const double most_lost = std::max(0.0, run_time - analysis.work_critical_path_s);
  const double total_lost = estimate.total_lost + measured_added;
  const double lost = run_time > 0.0 ? std::min(total_lost, most_lost) : total_lost;
  // The segments' charges shrink with it, so where and when add up to the whole.
  if (lost < total_lost && total_lost > 0.0) {
    for (double& segment_lost : analysis.segment_lost_s) segment_lost *= lost / total_lost;
  }
  std::mt19937_64 engine = engine_for(analysis.parameters.seed, kIntervalStream);
  const int replicas = std::clamp(analysis.parameters.replicas, 2, kMaxIntervalReplicas);
  // Ranks taking turns have no posterior charges to resample: the measured
  // delays are the low end, and the high end is the most the work allows,
  // since what their turns cost beyond that (polling while a rank is
  // descheduled) is not told from what another process made them cost.
  est::LostInterval interval =
      analysis.taking_turns ? est::LostInterval{-analysis.shared_turns_added_s, most_lost - measured_added}
                            : est::bootstrap_lost_interval(spans, estimate, engine, replicas, analysis.parameters.ci);
  // The measured off-CPU time is not resampled: it shifts the interval.
  interval.low += measured_added;
  interval.high += measured_added;
  analysis.lost_percent = est::run_interference_percent(lost, run_time);
  analysis.lost_percent_low = std::min(analysis.lost_percent, est::run_interference_percent(interval.low, run_time));
  analysis.lost_percent_high =
      std::min(est::run_interference_percent(most_lost, run_time),
               std::max(analysis.lost_percent, est::run_interference_percent(interval.high, run_time)));
  analysis.intrinsic_run_time_s = std::max(0.0, run_time - lost);
  return interfered;
}

}  // namespace tremor::analysis::detail
