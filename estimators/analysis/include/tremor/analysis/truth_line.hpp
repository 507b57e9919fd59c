// The truth of an injected run, beside Tremor's estimate: what a stacked
// libtremor-inject planted (its own running totals, gathered per rank at
// MPI_Finalize into RankInfo::injected_s) and what the machine's other
// processes took (the kernel's run-queue delay, RankInfo::run_queue_delay_s).
// Neither figure comes from Tremor's estimate. Definitions: injector/README.md.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tremor/run_data.hpp"

namespace tremor::analysis {

// The report's JSON key of truth_json (null when no injector was loaded).
inline constexpr const char* kInjectorTruthKey = "injector_truth";

struct InjectorTruth {
  // Per rank: the time it spent in planted delays, s (0 for a rank where the
  // injector ran but delayed nothing; NaN where it was not loaded).
  std::vector<double> injected_s;
  // Per rank: the kernel's run-queue delay of its MPI_Init thread from
  // MPI_Init to MPI_Finalize, s; NaN where not measured.
  std::vector<double> run_queue_delay_s;
  double run_time_s = 0.0;  // MPI_Init to MPI_Finalize, the longest rank
};

// The run's figures, or nullopt when no rank had the injector loaded.
std::optional<InjectorTruth> injector_truth(const RunData& run);

// "Planted by the injector: ..." wrapped to at most 80 columns and 3 lines,
// ending in a newline. The injector's figure is the largest per-rank total (what the run
// loses if all of that rank's delays lie on its critical path), with the sum
// over ranks when several ranks were delayed; the machine's figure is the
// largest per-rank run-queue delay.
std::string truth_line(const InjectorTruth& truth);

// Every figure of the line, per rank and aggregated (NaN written as null).
nlohmann::json truth_json(const InjectorTruth& truth);

// For the report: the text's last line(s), "" when no injector was loaded.
std::string injector_truth_text(const RunData& run);
// For the JSON report's kInjectorTruthKey: truth_json, or null when no
// injector was loaded.
nlohmann::json injector_truth_json(const RunData& run);

}  // namespace tremor::analysis
