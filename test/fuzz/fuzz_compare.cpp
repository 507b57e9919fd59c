// libFuzzer harness: `tremor compare`'s path. The input holds several run
// files separated by kRunSeparator; each readable one is analysed and the
// first two or more go through compare_runs and the text, JSON and HTML
// outputs. No input may crash, leak or hit undefined behaviour.
#include <cstdlib>
#include <deque>

#include "fuzz_support.hpp"
#include "tremor/analysis/compare.hpp"
#include "tremor/analysis/parameters.hpp"
#include "tremor/json_text.hpp"
#include "tremor/run_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  constexpr std::size_t kMostRuns = 4;
  static const std::filesystem::path path = tremor::fuzz::scratch_file("compare.h5");
  const auto pieces = tremor::fuzz::split(tremor::fuzz::as_text(data, size), tremor::fuzz::kRunSeparator);
  if (pieces.size() < 2 || pieces.size() > kMostRuns) return 0;
  std::deque<tremor::RunData> runs;  // stable addresses for ComparedRun
  std::deque<tremor::analysis::RunAnalysis> analyses;
  std::vector<tremor::analysis::ComparedRun> compared;
  tremor::analysis::ParameterOverrides overrides;
  overrides.replicas = 8;  // as in fuzz_run_file
  for (std::size_t i = 0; i < pieces.size(); ++i) {
    if (!tremor::fuzz::write_bytes(path, pieces[i])) return 0;
    std::string error;
    auto run = tremor::read_run(path, error);
    std::filesystem::remove(path);
    if (!run) return 0;  // `tremor compare` stops at the first unreadable file
    const auto parameters = tremor::analysis::parameters_from_stored_configuration(run->meta.configuration, overrides);
    runs.push_back(std::move(*run));
    analyses.push_back(tremor::analysis::analyze_run(runs.back(), parameters));
    compared.push_back({"run" + std::to_string(i), &runs.back(), &analyses.back()});
  }
  const auto comparison = tremor::analysis::compare_runs(compared, tremor::analysis::kDefaultIntrinsicTolerancePercent);
  const std::string text = tremor::analysis::render_compare_text(comparison);
  const std::string json = tremor::json_text(tremor::analysis::compare_json(comparison), 2);
  // The page's view: what the page shows (drawn by tremor-plot, not run here).
  const std::string view = tremor::json_text(tremor::analysis::compare_view(comparison));
  if (text.empty() || json.empty() || view.empty()) std::abort();  // every comparison is shown
  return 0;
}
