// Steps of analyze_run shared between its source files.
#pragma once
#include <cstdint>
#include <random>
#include <span>
#include <vector>

#include "tremor/analysis/run_analysis.hpp"
#include "tremor/run_data.hpp"

namespace tremor::analysis::detail {

// An engine per purpose (group, method), derived from the run seed, so one
// result never depends on how many draws another step made.
std::mt19937_64 engine_for(std::uint64_t seed, std::uint64_t stream);

// At most `limit` values: evenly spaced order statistics of the sorted input,
// always keeping the minimum and maximum. Deterministic; a bootstrap on it
// sees the spread of a smaller sample, so its interval is conservative.
std::vector<double> quantile_subsample(std::vector<double> values, std::size_t limit);

// GEV fits and run-time predictions for the usable groups (predictions.cpp).
void fit_groups_and_predict(const RunData& run, RunAnalysis& analysis);

// One warning for a kind raised per item (a group, a method): `summary`, then
// the worst cases and how many more; the cases are kept worst first
// (warning_cases.cpp).
void add_warning_cases(RunAnalysis& analysis, std::string code, std::string summary, std::vector<WarningCase> cases);

}  // namespace tremor::analysis::detail
