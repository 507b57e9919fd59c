#include "stranded_segments.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

namespace tremor::analysis::detail {
namespace {

// The gap from `work` to [low, high] over the smaller magnitude of the two
// values it is measured between (the clustering's relative distance); 0
// inside the range, infinite when that magnitude is 0.
double relative_gap(double work, double low, double high) {
  if (work >= low && work <= high) return 0.0;
  const double edge = work < low ? low : high;
  const double smaller = std::min(std::fabs(work), std::fabs(edge));
  if (smaller == 0.0) return std::numeric_limits<double>::infinity();
  return std::fabs(work - edge) / smaller;
}

}  // namespace

// The clustering cuts the sorted work values wherever neighbours differ by the
// threshold, so a segment whose work sits just past a group's edge forms a
// cluster of its own, too small to be used; a run recorded again, or its
// values stored a digit coarser, may put it back. Modelled with its group it
// is charged as its neighbours are, instead of only what was measured on it.
std::vector<std::int64_t> primary_membership(const RunData& run, const RunAnalysis& analysis, double cluster_threshold,
                                             bool heavier_joins) {
  std::vector<std::int64_t> membership(analysis.segment_group.begin(), analysis.segment_group.end());
  std::multimap<std::uint64_t, std::size_t> usable_by_signature;
  for (std::size_t g = 0; g < analysis.groups.size(); ++g) {
    if (analysis.groups[g].usable) usable_by_signature.emplace(analysis.groups[g].signature, g);
  }
  const double reach = kStrandedReach * cluster_threshold;
  for (std::size_t segment = 0; segment < membership.size(); ++segment) {
    const std::int64_t own = membership[segment];
    if (own < 0 || static_cast<std::size_t>(own) >= analysis.groups.size()) continue;
    const GroupResult& group = analysis.groups[static_cast<std::size_t>(own)];
    if (group.usable) continue;
    if (segment >= run.segments.work.size()) continue;
    const double work = run.segments.work[segment];
    double nearest = std::numeric_limits<double>::infinity();
    const auto [first, last] = usable_by_signature.equal_range(group.signature);
    for (auto it = first; it != last; ++it) {
      const GroupResult& candidate = analysis.groups[it->second];
      if (!heavier_joins && work > candidate.work_max) continue;
      const double gap = relative_gap(work, candidate.work_min, candidate.work_max);
      if (gap < reach && gap < nearest) {
        nearest = gap;
        membership[segment] = static_cast<std::int64_t>(it->second);
      }
    }
  }
  return membership;
}

}  // namespace tremor::analysis::detail
