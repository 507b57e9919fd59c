// `tremor compare`: several runs of one application side by side. Pure: the
// runs are already read and analysed; the first run is the reference every
// other run is compared with (docs/report.md, "tremor compare").
#pragma once
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "tremor/analysis/formatters.hpp"

#include "tremor/analysis/analysis.hpp"
#include "tremor/run_data.hpp"

namespace tremor::analysis {

struct ComparedRun {
  std::string name;  // in the verdicts and the JSON (the file stem)
  const RunData* run = nullptr;
  const RunAnalysis* analysis = nullptr;
};

struct RunRow {
  std::string name;
  std::string label;  // A, B, C ... in the tables: file stems are long
  std::string file;   // as named on the command line (compare_runs sets the name)
  int processes = 0;
  double run_time_s = 0.0;
  bool estimate_possible = false;
  double lost_percent = 0.0;
  double lost_percent_low = 0.0;
  double lost_percent_high = 0.0;
  double intrinsic_run_time_s = 0.0;
  std::string interference_class;
};

// One usable group of the reference run and its counterparts.
struct GroupComparison {
  std::string label;      // "#<group number in the reference's report> <closing call> <signature>"
  std::size_t group = 0;  // its number in `tremor analyze`'s report of the reference run
  std::string closing_call;
  std::size_t segments = 0;
  std::vector<std::optional<double>> lost_s;       // per run: the group's lost time (primary estimate)
  double impact_s = 0.0;                           // the largest of lost_s: groups are listed by it
  std::string matched_by;                          // per run: "signature", "closing call" or "" (no match)
  std::vector<std::optional<double>> intrinsic_s;  // per run (index 0 = reference)
  std::vector<std::optional<double>> change_percent;
};

// Speed of one node: median over its detail ranks of (time outside MPI and
// I/O) / work, non-interfered segments only.
struct NodeDrift {
  std::string hostname;
  std::vector<std::optional<double>> seconds_per_work;  // per run
  std::vector<std::optional<double>> change_percent;
};

struct EnvironmentDifference {
  std::string field;                // "governor", "governor@host", "variable OMP_NUM_THREADS", ...
  std::vector<std::string> values;  // per run, "(absent)" when missing
};

struct PredictionCheck {
  std::string from_run;  // the smaller run that predicted
  std::string to_run;    // the larger run that was measured
  std::string method;
  double factor = 0.0;
  double processes = 0.0;
  double median_s = 0.0;
  double ci_low_s = 0.0;  // CI of the expected run time
  double ci_high_s = 0.0;
  double pi_low_s = 0.0;  // prediction interval for one run
  double pi_high_s = 0.0;
  double actual_s = 0.0;
  bool inside = false;     // the actual run time lies in the prediction interval
  bool inside_ci = false;  // ... in the CI of the expected run time
  bool headline = false;   // the smaller run's headline method
};

struct Verdict {
  bool available = false;
  std::string reference;
  std::string compared;
  double intrinsic_change_percent = 0.0;  // compared vs reference
  double uncertainty_percent = 0.0;       // half-width from the lost-time intervals
  double total_change_percent = 0.0;      // of the measured run times
  double interference_share = 0.0;        // of the run-time difference explained by lost time, [0, 1]
  double tolerance_percent = 0.0;         // run-to-run variation not called a difference
  bool intrinsic_differs = false;         // |intrinsic change| > max(uncertainty, tolerance)
  std::string text;                       // one line
};

struct Comparison {
  std::vector<RunRow> runs;
  std::vector<GroupComparison> groups;  // largest impact first, then largest share of the reference run
  std::vector<NodeDrift> nodes;
  std::string node_drift_unavailable;  // why nodes is empty, "" otherwise
  std::vector<EnvironmentDifference> environment;
  std::vector<PredictionCheck> predictions;
  std::string predictions_note;   // e.g. why no prediction matched a larger run
  std::vector<Verdict> verdicts;  // each later run against the reference, in order
  // Runs that are not of the reference's program (another program name, or at
  // the same process count no group with a signature of the reference's): one
  // sentence each; such a run gets no intrinsic verdict.
  std::vector<std::string> warnings;
};

// The lost-time intervals only cover the uncertainty within each run; the
// intrinsic run time of repeated clean runs of the same binary on the same
// machine also varies from run to run (clock, placement, caches;
// docs/report.md, "tremor compare"). Intrinsic changes within this tolerance
// are not called a difference (--tolerance sets it; lower it on quiet,
// pinned machines).
inline constexpr double kDefaultIntrinsicTolerancePercent = 5.0;

// Needs at least two runs, each with run and analysis set.
Comparison compare_runs(const std::vector<ComparedRun>& runs,
                        double tolerance_percent = kDefaultIntrinsicTolerancePercent);

// Pieces of compare_runs, exposed for tests.
Verdict compare_intrinsic(const RunRow& reference, const RunRow& compared,
                          double tolerance_percent = kDefaultIntrinsicTolerancePercent);
// Why `compared` is not a run of `reference`'s program ("" when it is): the
// program names (the command line's first word, without its directory)
// differ, or both ran on as many processes and no usable group of the
// reference has a usable counterpart with its communication and I/O signature.
std::string program_mismatch(const ComparedRun& reference, const ComparedRun& compared);
// Per detail rank's node: median (time outside MPI and I/O) / work; empty with
// `why` set when the run has no usable detail.
std::vector<std::pair<std::string, double>> node_speeds(const RunData& run, const RunAnalysis& analysis,
                                                        std::string& why);

// Group rows the text shows (the largest impact first); the JSON and the page hold them all.
inline constexpr std::size_t kCompareTextGroups = 10;
// Longest line of the text output.
inline constexpr std::size_t kCompareTextColumns = 100;

// The compare page's generator tag: `compare --html` replaces only a file that carries it.
inline constexpr std::string_view kCompareHtmlMarker = "<meta name=\"generator\" content=\"tremor compare\">";

// Renderings (compare_output.cpp): all three show the same tables (the text
// only the first kCompareTextGroups groups, and says how many more). Text
// names runs A, B, ... with a legend line per file, marks values that differ
// from the reference run with `*` (and says so) and keeps lines within
// kCompareTextColumns; the HTML page is self-contained and highlights them.
// The page is drawn by Tremor's one HTML renderer (the run page's, in
// tremor-plot) from compare_view: the same tables as blocks
// (html_view.hpp), the cells highlighted that differ from the reference.
nlohmann::json compare_json(const Comparison& comparison);
std::string render_compare_text(const Comparison& comparison);
nlohmann::json compare_view(const Comparison& comparison);
std::string render_compare_html(const Comparison& comparison);  // throws HtmlRendererFailure

// The comparison's registry of formatters (text first: the default): text,
// json and html; `tremor compare --format` names its entries.
using CompareFormatter = Formatter<Comparison>;
std::span<const CompareFormatter> compare_formatters();

}  // namespace tremor::analysis
