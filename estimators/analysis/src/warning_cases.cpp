// A warning raised once per item (a PWM/MOM disagreement per group, a broken
// fit per method) is reported once per kind: a run with 400 groups must not
// print 400 lines (docs/report.md). And the one order of importance the text
// report lists them in.
#include <algorithm>
#include <array>
#include <string>

#include "analysis_internal.hpp"
#include "tremor/analysis/report.hpp"

namespace tremor::analysis::detail {
namespace {
constexpr std::size_t kWorstListed = 3;
}  // namespace

void add_warning_cases(RunAnalysis& analysis, std::string code, std::string summary, std::vector<WarningCase> cases) {
  if (cases.empty()) return;
  std::stable_sort(cases.begin(), cases.end(),
                   [](const WarningCase& a, const WarningCase& b) { return a.severity > b.severity; });
  std::string message = std::move(summary);
  message += cases.size() > 1 ? " Worst: " : " Case: ";
  for (std::size_t i = 0; i < cases.size() && i < kWorstListed; ++i) {
    if (i > 0) message += "; ";
    message += cases[i].subject;
    if (!cases[i].detail.empty()) message += " (" + cases[i].detail + ")";
  }
  if (cases.size() > kWorstListed) message += "; " + std::to_string(cases.size() - kWorstListed) + " more";
  message += ".";
  analysis.warnings.push_back({std::move(code), std::move(message), std::move(cases)});
}

}  // namespace tremor::analysis::detail

namespace tremor::analysis {
namespace {

// Most important first: what makes the headline itself doubtful (no
// estimate, ranks taking turns, little of the run assessed, too few segments,
// the counter), then what makes a wrong rank or node look slow, then the
// predictions' doubts, then notes. A code missing here ranks after all of
// them, in the order it was raised (docs/report.md, "Warnings").
constexpr std::array kWarningImportance{
    "no_estimate",
    "environment_oversubscribed",
    "low_coverage",
    "few_segments",
    "signature_fallback",
    "boundary_rate",
    "environment_smt_shared",
    "environment_unpinned",
    "environment_governor",
    "environment_turbo",
    "fit_misses_extremes",
    "prediction_unavailable",
    "autocorrelated_segments",
    "fit_disagreement",
    "counter_fallback",
    "environment_unknown",
};

std::size_t importance_rank(const std::string& code) {
  const auto* found = std::find(kWarningImportance.begin(), kWarningImportance.end(), code);
  return static_cast<std::size_t>(found - kWarningImportance.begin());
}

}  // namespace

std::vector<const Warning*> warnings_by_importance(const RunAnalysis& analysis) {
  std::vector<const Warning*> ordered;
  for (const Warning& warning : analysis.warnings) ordered.push_back(&warning);
  std::stable_sort(ordered.begin(), ordered.end(), [](const Warning* a, const Warning* b) {
    return importance_rank(a->code) < importance_rank(b->code);
  });
  return ordered;
}

}  // namespace tremor::analysis
