// Output files of the offline tools (compare --html; tremor-plot follows the
// same rules in scripts/tremor_plot/output.py). An output may replace only a
// regular file that is Tremor's own output of the same kind (it carries the
// kind's marker near its start), never one of the command's inputs. It is
// written to a temporary file in the same directory and renamed over the
// path, so a failure (full disk, quota) leaves the old file or nothing.
#pragma once
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace tremor::cli {

// "" when `path` may be written; otherwise why not.
std::string output_refusal(const std::filesystem::path& path, std::string_view marker,
                           const std::vector<std::filesystem::path>& inputs);

// Checks output_refusal, then writes `content` atomically. Throws
// CommandFailure(Exit::output) with one line on refusal or failure.
void write_output_file(const std::filesystem::path& path, std::string_view content, std::string_view marker,
                       const std::vector<std::filesystem::path>& inputs);

}  // namespace tremor::cli
