// Warnings about the conditions of the run (/environment) that make its
// timings less trustworthy; codes in docs/report.md.
#pragma once
#include <vector>

#include "tremor/analysis/run_analysis.hpp"
#include "tremor/run_data.hpp"

namespace tremor::analysis {

// None for a run without /environment (files of older builds). An unknown
// fact never gives a warning of its own; at most one "environment_unknown"
// note says which facts could not be read.
std::vector<Warning> environment_warnings(const RunData& run);

}  // namespace tremor::analysis
