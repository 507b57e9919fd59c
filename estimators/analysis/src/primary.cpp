// The primary estimate (docs/statistics-primary.md): every usable group is
// split by the group of the segment before it, so a slowdown that recurs at
// the same place in the application's cycle (the iteration after its own
// checkpoint write) is compared with itself once it occurred min_group times;
// the intrinsic estimator then charges each segment its posterior expected delay.
#include <algorithm>
#include <map>

#include "analysis_internal.hpp"
#include "tremor/estimators/interference.hpp"
#include "tremor/estimators/intrinsic.hpp"

namespace tremor::analysis::detail {
namespace {

namespace est = tremor::estimators;

// A usable group is split only when the subgroups large enough to stand alone
// keep at least this share of its segments; otherwise (no stable cycle) it stays whole.
constexpr double kMinSplitCoverage = 0.9;
// The interval's replicas, at most: it needs percentiles, not the GEV tails.
constexpr int kMaxIntervalReplicas = 200;
constexpr std::uint64_t kIntervalStream = 0x7072696d617279ULL;

struct PrimaryGroup {
  std::size_t parent = 0;  // index into RunAnalysis::groups
  std::vector<std::size_t> members;
};

// Returns the subgroups. Segments of subgroups too small to stand alone are
// too few to show a recurring pattern: they join the largest subgroup of
// their group. `split_off` marks the segments of the other subgroups.
std::vector<PrimaryGroup> split_by_previous_group(const RunAnalysis& analysis, std::size_t min_size,
                                                  std::vector<std::uint8_t>& split_off) {
  std::vector<PrimaryGroup> result;
  for (std::size_t g = 0; g < analysis.groups.size(); ++g) {
    const GroupResult& group = analysis.groups[g];
    if (!group.usable) continue;
    std::map<std::int64_t, std::vector<std::size_t>> by_previous;
    for (const std::size_t segment : group.members) {
      const std::int64_t previous = segment == 0 ? -2 : analysis.segment_group[segment - 1];
      by_previous[previous].push_back(segment);
    }
    std::size_t covered = 0;
    std::vector<std::size_t>* largest = nullptr;
    for (auto& [previous, members] : by_previous) {
      if (members.size() >= min_size) covered += members.size();
      if (!largest || members.size() > largest->size()) largest = &members;
    }
    if (by_previous.size() == 1 ||
        static_cast<double>(covered) < kMinSplitCoverage * static_cast<double>(group.members.size())) {
      result.push_back({g, group.members});
      continue;
    }
    std::vector<std::size_t> main = *largest;
    for (auto& [previous, members] : by_previous) {
      if (&members == largest) continue;
      if (members.size() >= min_size) {
        for (const std::size_t segment : members) split_off[segment] = 1;
        result.push_back({g, std::move(members)});
      } else {
        main.insert(main.end(), members.begin(), members.end());
      }
    }
    std::sort(main.begin(), main.end());
    result.push_back({g, std::move(main)});
  }
  return result;
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
  const std::vector<PrimaryGroup> groups = split_by_previous_group(analysis, min_size, split_off);
  analysis.primary_groups = groups.size();
  analysis.recurring_segments = static_cast<std::size_t>(std::count(split_off.begin(), split_off.end(), 1));

  std::vector<std::vector<double>> durations(groups.size());
  for (std::size_t i = 0; i < groups.size(); ++i) {
    for (const std::size_t segment : groups[i].members) durations[i].push_back(run.segments.duration_s[segment]);
  }
  const std::vector<std::span<const double>> spans(durations.begin(), durations.end());
  const est::IntrinsicEstimate estimate = est::estimate_intrinsic(spans);
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
    parent.lost_s += estimate.groups[i].lost;
    const auto size = static_cast<double>(groups[i].members.size());
    parent.intrinsic_s += size * estimate.groups[i].baseline;
    intrinsic_weight[groups[i].parent] += size;
  }
  for (std::size_t g = 0; g < analysis.groups.size(); ++g) {
    if (intrinsic_weight[g] > 0.0) analysis.groups[g].intrinsic_s /= intrinsic_weight[g];
  }

  const double run_time = analysis.run_time_s;
  // Segment durations are maxima over ranks: the lost time cannot exceed the run.
  const double lost = run_time > 0.0 ? std::min(estimate.total_lost, run_time) : estimate.total_lost;
  std::mt19937_64 engine = engine_for(analysis.parameters.seed, kIntervalStream);
  const int replicas = std::clamp(analysis.parameters.replicas, 2, kMaxIntervalReplicas);
  const est::LostInterval interval =
      est::bootstrap_lost_interval(spans, estimate, engine, replicas, analysis.parameters.ci);
  analysis.lost_percent = est::run_interference_percent(lost, run_time);
  analysis.lost_percent_low = std::min(analysis.lost_percent, est::run_interference_percent(interval.low, run_time));
  analysis.lost_percent_high =
      std::min(100.0, std::max(analysis.lost_percent, est::run_interference_percent(interval.high, run_time)));
  analysis.intrinsic_run_time_s = std::max(0.0, run_time - lost);
  return interfered;
}

}  // namespace tremor::analysis::detail
