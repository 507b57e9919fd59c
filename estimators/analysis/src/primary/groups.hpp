// The groups the primary model fits (docs/statistics-primary.md, "Groups"):
// the usable (work, signature) groups, stranded segments joined to their
// nearest one, each split by the group of the segment before it (the
// indicator of a recurring place in the application's cycle), and each
// group's first segment set apart (the warm-up indicator).
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "tremor/analysis/run_analysis.hpp"

namespace tremor::analysis::detail {

struct PrimaryGroup {
  std::size_t parent = 0;              // index into RunAnalysis::groups
  std::vector<std::size_t> members;    // those the model fits, ascending
  std::optional<std::size_t> warm_up;  // the group's first segment, set apart

  // Every segment of the group, the warm-up one included (measured delays).
  std::vector<std::size_t> all_members() const;
};

// A usable group is split only when the subgroups large enough to stand
// alone keep at least this share of its segments (a code without a stable
// cycle keeps its groups whole): see the derivation in statistics-primary.md.
inline constexpr double kMinSplitCoverage = 0.9;
// Groups larger than this set their first (warm-up) segment apart: with
// fewer, the warm-up indicator would leave too few segments for an anchor.
inline constexpr std::size_t kMinMembersForWarmUp = 3;

// The subgroups of the usable groups under `membership` (primary_membership:
// stranded segments with the group they join). Subgroups of fewer than
// `min_size` members join the largest subgroup of their group; `split_off`
// (one flag per segment) marks the segments of the other subgroups.
std::vector<PrimaryGroup> split_by_previous_group(const RunAnalysis& analysis, std::span<const std::int64_t> membership,
                                                  std::size_t min_size, std::vector<std::uint8_t>& split_off);

// Sets each group's first segment apart as warm-up (groups of more than
// kMinMembersForWarmUp); returns how many were.
std::size_t set_warm_up_apart(std::vector<PrimaryGroup>& groups);

}  // namespace tremor::analysis::detail
