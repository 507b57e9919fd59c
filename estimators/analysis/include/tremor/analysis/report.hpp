// The end-of-run report in its three forms: JSON (schema in docs/report.md),
// text for people (<= 80 columns) and /analysis in the HDF5 run file; and the
// one entry point the profiler calls at MPI_Finalize on rank 0.
#pragma once
#include <cstdio>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tremor/analysis/analysis.hpp"
#include "tremor/analysis/formatters.hpp"
#include "tremor/config.hpp"
#include "tremor/run_data.hpp"
#include "tremor/run_file.hpp"

namespace tremor::analysis {

inline constexpr int kReportSchemaVersion = 1;

// `output_file`: the run file the report belongs to ("" when none was saved).
nlohmann::json report_json(const RunData& run, const RunAnalysis& analysis, const std::string& output_file);

// The text report, every line at most 80 columns. Short (the default): at most
// kShortReportMaxLines lines: the headline with its interval and what the
// interval means, where / when / what, the prediction with its scaling
// assumption and the most important warnings. Full: every table as well
// (TREMOR_REPORT_DETAIL=full, tremor analyze --full).
std::string render_text_report(const RunData& run, const RunAnalysis& analysis, const std::string& output_file,
                               ReportDetail detail = ReportDetail::short_report);

inline constexpr std::size_t kShortReportMaxLines = 25;

// What every prediction assumes (text report, JSON `prediction_scaling`,
// /analysis/predictions@scaling): weak scaling.
inline constexpr const char* kPredictionScaling = "weak";
inline constexpr const char* kPredictionAssumption =
    "each process keeps its work (weak scaling): at f times the processes the whole problem is f times larger";

// The run's warnings, most important first (the order is defined once, in
// warning_cases.cpp); the text report prints them in this order.
std::vector<const Warning*> warnings_by_importance(const RunAnalysis& analysis);

// The lost share's interval as printed: the fewest decimals (1 to 3) at which
// its two ends differ, e.g. "3.31-3.34 %", or "3.300 % (interval < 0.001 pp
// wide)" when they differ at none. `decimals` gets the count used.
std::string interval_text(double low_percent, double high_percent, int* decimals = nullptr);

// Writes /analysis (per-segment classes, groups, fits, predictions, warnings,
// parameters and the JSON text). False with appender.error() on failure.
bool write_analysis(RunFileAppender& appender, const RunAnalysis& analysis, const nlohmann::json& report);

// What a run report's formatter renders: the run, its analysis and its JSON
// form (built once: the run file and the JSON file carry it too).
struct ReportInput {
  const RunData& run;
  const RunAnalysis& analysis;
  const std::string& output_file;  // the run file ("" when none was saved)
  ReportDetail detail;             // of the text form
  nlohmann::json json;             // report_json(run, analysis, output_file)
};
using ReportFormatter = Formatter<ReportInput>;

// The run report's registry (text first: the default); TREMOR_REPORT and
// `tremor analyze --format` name its entries.
std::span<const ReportFormatter> report_formatters();

// Analyses `run`, appends /analysis to `h5` (if given), writes the JSON report
// to `json_path` (if given; the file must already exist, reserved empty) and
// prints on `text_out` (stderr when null) each form config.report lists (an
// unknown name: one line, then the default). Never throws: a failure prints one line.
void report_run(const RunData& run, const Config& config, const std::optional<std::filesystem::path>& h5,
                const std::optional<std::filesystem::path>& json_path, std::FILE* text_out) noexcept;

}  // namespace tremor::analysis
