// The end-of-run analysis (docs/design.md#data-flow,
// docs/statistics.md): a pure function of a RunData and AnalysisParameters. No MPI,
// no logging, no clock; every random draw comes from engines seeded from
// AnalysisParameters::seed, so the same file and parameters give bit-identical
// numbers in process and in `tremor analyze`. The result types are in
// run_analysis.hpp, the diagnosis step in diagnosis.hpp.
#pragma once
#include <cstddef>

#include "tremor/analysis/parameters.hpp"
#include "tremor/analysis/run_analysis.hpp"
#include "tremor/run_data.hpp"

namespace tremor::analysis {

// Thresholds of the warnings and fallbacks (documented in docs/report.md).
inline constexpr double kMaxBoundaryRateHz = 200.0;
inline constexpr std::size_t kMinSegmentsForTrust = 50;
inline constexpr double kMinUsableTimeFraction = 0.5;
// Exact signatures are replaced by median detail-rank features when fewer than
// this fraction of segments lands in usable groups.
inline constexpr double kSignatureFallbackBelow = 0.5;
// Bootstraps resample at most this many values per group (a seeded random
// subsample of larger groups) so the cost does not grow with the run length.
inline constexpr std::size_t kMaxBootstrapSample = 400;

RunAnalysis analyze_run(const RunData& run, const AnalysisParameters& parameters);

}  // namespace tremor::analysis
