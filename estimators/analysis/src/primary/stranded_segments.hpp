// Segments the work clustering strands outside every usable group by a
// small difference of work: the primary estimate models them with the
// nearest usable group of their signature (docs/statistics-primary.md,
// "Groups").
#pragma once
#include <cstdint>
#include <vector>

#include "tremor/analysis/run_analysis.hpp"
#include "tremor/run_data.hpp"

namespace tremor::analysis::detail {

// A stranded segment joins a usable group when its work lies within this
// many cluster thresholds of the group's work range.
inline constexpr double kStrandedReach = 2.0;

// Per segment, the group the primary estimate models it with: its own
// (RunAnalysis::segment_group), except that a segment of an unusable group
// joins the usable group of the same signature whose work range is nearest,
// within kStrandedReach cluster thresholds of it (relative gap, as the
// clustering measures it), and, unless `heavier_joins`, only if its work is
// not above that range (a heavier segment is told from a delayed one only
// where its extra CPU time is measured and taken off).
std::vector<std::int64_t> primary_membership(const RunData& run, const RunAnalysis& analysis, double cluster_threshold,
                                             bool heavier_joins);

}  // namespace tremor::analysis::detail
