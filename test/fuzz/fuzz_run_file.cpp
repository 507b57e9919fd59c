// libFuzzer harness: arbitrary bytes as a run file through everything
// `tremor analyze` does with it (read_run, the stored configuration, the
// analysis and both reports). The reader must return a reason or valid data;
// no input may crash, leak or hit undefined behaviour.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "tremor/analysis/analysis.hpp"
#include "tremor/analysis/parameters.hpp"
#include "tremor/analysis/report.hpp"
#include "tremor/run_file.hpp"

namespace {

std::filesystem::path scratch_file() {
  // One file per fuzzing process, rewritten for every input; /dev/shm keeps it off the disk.
  const std::filesystem::path shm("/dev/shm");
  const std::filesystem::path dir = std::filesystem::is_directory(shm) ? shm : std::filesystem::temp_directory_path();
  return dir / ("tremor-fuzz-run-" + std::to_string(::getpid()) + ".h5");
}

bool write_bytes(const std::filesystem::path& path, const std::uint8_t* data, std::size_t size) {
  std::FILE* out = std::fopen(path.c_str(), "wb");
  if (!out) return false;
  const bool ok = std::fwrite(data, 1, size, out) == size;
  return std::fclose(out) == 0 && ok;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::filesystem::path path = scratch_file();
  if (!write_bytes(path, data, size)) return 0;
  std::string error;
  const auto run = tremor::read_run(path, error);
  std::filesystem::remove(path);
  if (!run) return 0;
  tremor::analysis::ParameterOverrides overrides;
  // The stored replica count may legitimately be 10^6; a handful exercises the
  // same code per input without making every input a long run.
  overrides.replicas = 8;
  const auto parameters = tremor::analysis::parameters_from_stored_configuration(run->meta.configuration, overrides);
  const auto result = tremor::analysis::analyze_run(*run, parameters);
  const std::string text = tremor::analysis::render_text_report(*run, result, path.string());
  const std::string json = tremor::analysis::report_json(*run, result, path.string()).dump();
  if (text.empty() || json.empty()) std::abort();  // every readable run gets a report
  return 0;
}
