#include "run_report.hpp"

#include <cstdio>

#include "tremor/analysis/report.hpp"

namespace tremor::interpose {

void report_run(const RunData& run, const Config& config, const std::optional<std::filesystem::path>& h5_path,
                const std::optional<std::filesystem::path>& json_path) {
  analysis::report_run(run, config, h5_path, json_path, stderr);
}

}  // namespace tremor::interpose
