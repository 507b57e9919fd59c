// The short text report, the default: one screenful (kShortReportMaxLines
// lines of at most 80 columns) in plain words. Every part before the warnings
// has a fixed most lines, 25 together at worst (a partial, oversubscribed,
// injected run with everything to say); the warnings take what is left, most
// important first, and the rest are counted ("n more in the JSON"). The full report
// (report_text.cpp) keeps every table.
#include <algorithm>
#include <cmath>
#include <sstream>

#include "report_text_format.hpp"
#include "tremor/analysis/report.hpp"
#include "tremor/analysis/truth_line.hpp"

namespace tremor::analysis {
namespace {

using text::counted;
using text::format;
using text::kWidth;
using text::wrap_at_most;

constexpr std::size_t kWarningsShown = 3;
constexpr std::size_t kLinesPerWarning = 2;
constexpr std::size_t kTruthLines = 3;
constexpr std::size_t kRanksNamed = 2;  // in the Where line; the rest counted

// A run time at a precision people read: 3 significant digits, no exponent.
std::string seconds(double value) {
  if (!std::isfinite(value)) return "?";
  const double magnitude = std::fabs(value);
  return format("%.*f s", magnitude >= 100.0 ? 0 : magnitude >= 10.0 ? 1 : 2, value);
}

// Lines as an 80-column terminal shows them: a longer line (a long run file
// path) takes the lines it wraps to.
std::size_t line_count(const std::ostringstream& out) {
  const std::string text = out.str();
  std::size_t lines = 0, start = 0;
  for (std::size_t end = text.find('\n'); end != std::string::npos; start = end + 1, end = text.find('\n', start)) {
    const std::size_t length = end - start;
    lines += length == 0 ? 1 : (length + kWidth - 1) / kWidth;
  }
  return lines;
}

void headline(std::ostringstream& out, const RunData& run, const RunAnalysis& analysis) {
  out << "=== Tremor: interference report (more: tremor analyze --full) "
      << std::string(kWidth - 63, '=') << '\n';
  if (run.meta.partial) {
    wrap_at_most(out, "PARTIAL RUN (" + text::partial_reason_text(run.meta.partial_reason) +
                          "): only the segments every rank recorded before the crash.", 1);
  }
  if (!analysis.estimate_possible) {
    out << "[GREY] NO ESTIMATE\n";
    wrap_at_most(out, "No interference estimate possible: " + analysis.no_estimate_reason + ".", 3);
    return;
  }
  const std::string level = text::upper(estimators::to_string(analysis.interference_class));
  const PrimaryEstimate& primary = analysis.primary;
  int decimals = 1;
  const std::string interval = interval_text(primary.lost_percent_low, primary.lost_percent_high, &decimals);
  const bool mad4 = analysis.parameters.method == "mad4";
  out << "[" << text::light(analysis.interference_class) << "] " << level << '\n';
  wrap_at_most(out,
               format("%.*f %% of this run was lost to interference \u2014 %s, p(high) = %.2f", mad4 ? 1 : decimals,
                      analysis.interference_percent, level.c_str(), analysis.probability_high),
               1);
  const std::string lead = mad4 ? format("(4\u00b7MAD rule; Tremor's own estimate %.*f %%) ", decimals,
                                         primary.lost_percent)
                                : std::string();
  wrap_at_most(out,
               lead + format("%.0f %% interval %s: ", 100.0 * analysis.parameters.ci, interval.c_str()) +
                   text::interval_meaning(analysis.parameters.ci),
               3);
  if (primary.taking_turns) {
    wrap_at_most(out,
                 format("Oversubscribed: ranks outnumber their node's CPUs and take turns on them; %.1f %% of the "
                        "run went to such turns (reported apart, not in the figure above).",
                        primary.oversubscription_percent),
                 2);
  }
}

void run_lines(std::ostringstream& out, const RunData& run, const RunAnalysis& analysis, const std::string& file) {
  std::string text =
      "Run: " + seconds(analysis.run_time_s) + ", " +
      counted(static_cast<std::size_t>(std::max(0, run.meta.world_size)), "process", "processes") + " on " +
      counted(static_cast<std::size_t>(std::max(0, run.meta.node_count)), "node", "nodes");
  if (analysis.estimate_possible) text += "; " + seconds(analysis.primary.intrinsic_run_time_s) + " without the lost time";
  wrap_at_most(out, text + ".", 2);
  if (file.empty()) return;
  // Whole, however long: the path is what the reader copies.
  out << "Data: " << file << '\n';
}

std::string rank_words(const SlowRank& rank) {
  std::string text = format("rank %d (node %d %s: last at %.0f %% of the boundaries, %.1f %% of the run%s)",
                            rank.rank, rank.node_id, rank.hostname.c_str(), 100.0 * rank.last_share, rank.lost_percent,
                            rank.kind == "loaded" ? ", more work" : "");
  return text;
}

}  // namespace

// Where: the ranks and nodes the others waited for beyond their share, then,
// apart, ranks that have more work (the application's load imbalance, never
// lost time). At most `most` lines for the first, one for the imbalance.
void append_where_lines(std::ostringstream& out, const Diagnosis& diagnosis, std::size_t most) {
  std::string where;
  if (diagnosis.slow_ranks.empty() && diagnosis.slow_nodes.empty()) {
    where = "Where: no rank or node kept the others waiting beyond its share.";
  } else {
    std::string named;
    for (std::size_t i = 0; i < diagnosis.slow_ranks.size() && i < kRanksNamed; ++i)
      named += (named.empty() ? "" : ", ") + rank_words(diagnosis.slow_ranks[i]);
    if (diagnosis.slow_ranks.size() > kRanksNamed)
      named += format(" and %zu more ranks", diagnosis.slow_ranks.size() - kRanksNamed);
    for (const SlowNode& node : diagnosis.slow_nodes) {
      named += (named.empty() ? "" : "; ") +
               format("node %d %s (%zu ranks, %.1f %% of the run)", node.node_id, node.hostname.c_str(), node.ranks,
                      node.lost_percent);
    }
    where = "Where: the others waited for " + named + ".";
  }
  wrap_at_most(out, where, most);
  if (diagnosis.imbalanced_ranks.empty()) return;
  const ImbalancedRank& rank = diagnosis.imbalanced_ranks.front();
  std::string imbalance = format("Imbalance: rank %d has %.0f %% more work; the others waited %.1f %% of the run for "
                                 "it (not lost time)",
                                 rank.rank, 100.0 * rank.extra_work, rank.wait_percent);
  if (diagnosis.imbalanced_ranks.size() > 1) imbalance += format(", %zu more ranks", diagnosis.imbalanced_ranks.size() - 1);
  wrap_at_most(out, imbalance + ".", 1);
}

namespace {

void when_what_lines(std::ostringstream& out, const Diagnosis& diagnosis) {
  if (diagnosis.episodes.empty()) {
    wrap_at_most(out, "When: no slow window; any delays are spread over the run.", 2);
  } else {
    const auto worst = std::max_element(diagnosis.episodes.begin(), diagnosis.episodes.end(),
                                        [](const Episode& a, const Episode& b) { return a.lost_percent < b.lost_percent; });
    const std::string clock = text::clock_text(worst->start_unix);
    std::string text = diagnosis.episodes.size() == 1 ? std::string("When: one slow window, ")
                                                      : format("When: %zu slow windows; the worst ", diagnosis.episodes.size());
    text += format("%.2f-%.2f s after MPI_Init%s, %.1f %% of the run", worst->start_s, worst->end_s,
                   clock.empty() ? "" : (" (" + clock + " UTC)").c_str(), worst->lost_percent);
    if (!worst->ranks.empty()) text += format(", rank %d last", worst->ranks.front());
    wrap_at_most(out, text + ".", 2);
  }
  const ComponentShares& lost = diagnosis.lost_components;
  const ComponentShares& whole = diagnosis.run_components;
  wrap_at_most(out,
               format("What: lost %.1f %% of the run in computation, %.1f %% in MPI, %.1f %% in file I/O (of the run: "
                      "%.0f %%, %.0f %%, %.0f %%).",
                      lost.compute, lost.mpi, lost.io, whole.compute, whole.mpi, whole.io),
               2);
}

// The headline method's time per size with its prediction interval, after
// the assumption every prediction makes.
void prediction_lines(std::ostringstream& out, const RunAnalysis& analysis) {
  const PredictionHeadline& headline = analysis.prediction_headline;
  if (headline.method.empty()) return;
  std::string sizes;
  for (const Prediction& p : analysis.predictions) {
    if (p.method != headline.method) continue;
    sizes += (sizes.empty() ? "" : "; ") + format("%g processes ", p.processes) + seconds(p.median_s) + " (" +
             seconds(p.pi_low_s) + " to " + seconds(p.pi_high_s) + ")";
  }
  wrap_at_most(out,
               format("Predicted run time, assuming weak scaling (each process keeps its work), %.0f %% range for "
                      "one run: ",
                      100.0 * analysis.parameters.ci) +
                   sizes + ".",
               3);
}

// The truth of an injected run, at most kTruthLines lines.
void truth_lines(std::ostringstream& out, const RunData& run) {
  std::istringstream lines(injector_truth_text(run));
  std::string line;
  for (std::size_t shown = 0; shown < kTruthLines && std::getline(lines, line); ++shown) out << line << '\n';
}

// The most important warnings in the lines left; each at most two lines.
void warning_lines(std::ostringstream& out, const RunAnalysis& analysis, std::size_t left) {
  const std::vector<const Warning*> ordered = warnings_by_importance(analysis);
  if (ordered.empty() || left == 0) return;
  if (left == 1) {
    wrap_at_most(out, format("Warnings: %zu, listed in the JSON report (and with --full).", ordered.size()), 1);
    return;
  }
  if (left >= 3) {
    out << '\n';
    --left;
  }
  const std::size_t shown = std::min({ordered.size(), kWarningsShown, left - 1});
  if (shown == ordered.size()) {
    out << "Warnings:\n";
  } else {
    out << format("Warnings: the %zu most important; %zu more in the JSON report (and with --full):\n", shown,
                  ordered.size() - shown);
  }
  left -= 1;
  for (std::size_t i = 0; i < shown; ++i) {
    const std::size_t room = std::min(kLinesPerWarning, left - (shown - 1 - i));
    left -= wrap_at_most(out, "- " + ordered[i]->message, room, "    ");
  }
}

}  // namespace

std::string render_short_text_report(const RunData& run, const RunAnalysis& analysis, const std::string& output_file) {
  std::ostringstream out;
  headline(out, run, analysis);
  run_lines(out, run, analysis, output_file);
  if (analysis.estimate_possible) {
    // The blank line only where the rarer lines above left room for it.
    if (!run.meta.partial && !analysis.primary.taking_turns) out << '\n';
    const Diagnosis& diagnosis = analysis.diagnosis;
    if (diagnosis.available) {
      append_where_lines(out, diagnosis, 2);
      when_what_lines(out, diagnosis);
    } else {
      out << "Where, when, what: not diagnosed (the run file has no per-rank detail).\n";
    }
    prediction_lines(out, analysis);
  }
  // An injected run's report ends with its truth; the warnings get the lines between.
  std::ostringstream truth;
  truth_lines(truth, run);
  const std::size_t used = line_count(out) + line_count(truth);
  warning_lines(out, analysis, used < kShortReportMaxLines ? kShortReportMaxLines - used : 0);
  out << truth.str();
  return out.str();
}

}  // namespace tremor::analysis
