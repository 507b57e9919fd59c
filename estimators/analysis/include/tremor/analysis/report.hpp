// The end-of-run report in its three forms: JSON (schema in docs/report.md),
// text for people (<= 80 columns) and /analysis in the HDF5 run file; and the
// one entry point the profiler calls at MPI_Finalize on rank 0.
#pragma once
#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "tremor/analysis/analysis.hpp"
#include "tremor/config.hpp"
#include "tremor/run_data.hpp"
#include "tremor/run_file.hpp"

namespace tremor::analysis {

inline constexpr int kReportSchemaVersion = 1;

// `output_file`: the run file the report belongs to ("" when none was saved).
nlohmann::json report_json(const RunData& run, const RunAnalysis& analysis, const std::string& output_file);

// Header first: traffic light and the key sentence, then groups, stragglers,
// predictions and warnings. Every line is at most 80 columns.
std::string render_text_report(const RunData& run, const RunAnalysis& analysis, const std::string& output_file);

// Writes /analysis (per-segment classes, groups, fits, predictions, warnings,
// parameters and the JSON text). False with appender.error() on failure.
bool write_analysis(RunFileAppender& appender, const RunAnalysis& analysis, const nlohmann::json& report);

// Analyses `run`, appends /analysis to `h5` (if given), writes the JSON report
// to `json_path` (if given; the file must already exist, reserved empty) and
// prints text / JSON / both / nothing on `text_out` per config.report
// (stderr when text_out is null). Never throws: a failure prints one line.
void report_run(const RunData& run, const Config& config, const std::optional<std::filesystem::path>& h5,
                const std::optional<std::filesystem::path>& json_path, std::FILE* text_out) noexcept;

}  // namespace tremor::analysis
