// A warning raised once per item (a PWM/MOM disagreement per group, a broken
// fit per method) is reported once per kind: a run with 400 groups must not
// print 400 lines (docs/report.md).
#include <algorithm>
#include <string>

#include "analysis_internal.hpp"

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
