// libFuzzer harness: arbitrary bytes as a run file through everything
// `tremor analyze` does with it (read_run and its checks of sizes and values,
// the stored configuration, --bins, the analysis and both reports). The
// reader must return a reason or valid data; no input may crash, leak or hit
// undefined behaviour.
#include <cstdlib>

#include "fuzz_support.hpp"
#include "tremor/analysis/analysis.hpp"
#include "tremor/analysis/parameters.hpp"
#include "tremor/analysis/report.hpp"
#include "tremor/json_text.hpp"
#include "tremor/program_merge.hpp"
#include "tremor/run_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::filesystem::path path = tremor::fuzz::scratch_file("run.h5");
  if (!tremor::fuzz::write_bytes(path, tremor::fuzz::as_text(data, size))) return 0;
  std::string error;
  auto run = tremor::read_run(path, error);
  std::filesystem::remove(path);
  if (!run) return 0;
  // `tremor analyze --bins N`, for inputs of odd length.
  if (size % 2 == 1) tremor::coarsen_to_paper_bins(*run, 64);
  tremor::analysis::ParameterOverrides overrides;
  // The stored replica count may legitimately be 10^6; a handful exercises the
  // same code per input without making every input a long run.
  overrides.replicas = 8;
  const auto parameters = tremor::analysis::parameters_from_stored_configuration(run->meta.configuration, overrides);
  const auto result = tremor::analysis::analyze_run(*run, parameters);
  const std::string text = tremor::analysis::render_text_report(*run, result, "fuzz.h5") +
                           tremor::analysis::render_text_report(*run, result, "fuzz.h5", tremor::ReportDetail::full_report);
  const std::string json = tremor::json_text(tremor::analysis::report_json(*run, result, "fuzz.h5"), 2);
  if (text.empty() || json.empty()) std::abort();  // every readable run gets a report
  return 0;
}
