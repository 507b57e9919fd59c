// Unique output names: no run ever overwrites another's files
// (docs/design.md#never-hurt-the-host).
#pragma once
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tremor {

struct ReservedOutput {
  std::string stem;                          // e.g. "lulesh-12345-4242-0"
  std::vector<std::filesystem::path> paths;  // directory/stem + each extension, in order
};

// Reserves directory/<program>-<job id or yyyymmdd-hhmmss (UTC)>-<pid>-<n><ext>
// for every extension (e.g. {".h5", ".json"}), creating each file empty with
// O_CREAT|O_EXCL so that two processes can never get the same name. n starts
// at 0 and increases until every extension is free (a partial reservation is
// undone before retrying). program is reduced to its basename and characters
// outside [A-Za-z0-9._-] become '_'; so does the job id. Write the .h5 with
// write_run(..., ExistingFile::fill_empty_reservation) and open the others
// without O_TRUNC being needed (they are empty).
std::optional<ReservedOutput> reserve_output_files(const std::filesystem::path& directory, std::string_view program,
                                                   std::string_view job_id,
                                                   std::span<const std::string_view> extensions, std::string& error);

}  // namespace tremor
