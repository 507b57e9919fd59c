#include "run_report.hpp"

#include <cstdio>
#include <string>

namespace tremor::interpose {

// Interim report until the analysis library is wired in: what was recorded.
void report_run(const RunData& run, const Config& config, const std::optional<std::filesystem::path>& h5_path,
                const std::optional<std::filesystem::path>& json_path) {
  if (config.report == ReportFormat::none) return;
  std::fprintf(stderr, "[tremor] %zu segments on %d processes in %.3f s; data: %s\n", run.segments.size(),
               run.meta.world_size, run.meta.run_time_s, h5_path ? h5_path->c_str() : "(not saved)");
  (void)json_path;
}

}  // namespace tremor::interpose
