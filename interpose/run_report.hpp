// Analyses a gathered run and reports it: /analysis in the HDF5 file, the
// JSON report beside it, the text report on stderr (TREMOR_REPORT).
#pragma once
#include <filesystem>
#include <optional>

#include "tremor/config.hpp"
#include "tremor/run_data.hpp"

namespace tremor::interpose {

void report_run(const RunData& run, const Config& config, const std::optional<std::filesystem::path>& h5_path,
                const std::optional<std::filesystem::path>& json_path);

}  // namespace tremor::interpose
