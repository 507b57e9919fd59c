// libFuzzer harness: arbitrary bytes as the TREMOR_CONFIG file (NAME=VALUE
// lines) read by the profiler at MPI_Init, through every setting's parser and
// renderer. Bad lines or values must end as messages, never as a crash.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "tremor/config.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::string path =
      (std::filesystem::temp_directory_path() / ("tremor-fuzz-config-" + std::to_string(::getpid()))).string();
  std::FILE* out = std::fopen(path.c_str(), "wb");
  if (!out) return 0;
  const bool written = std::fwrite(data, 1, size, out) == size;
  if (std::fclose(out) != 0 || !written) return 0;
  const tremor::ConfigResult result = tremor::load_config([](std::string_view name) -> std::optional<std::string> {
    if (name == "TREMOR_CONFIG") return path;
    return std::nullopt;
  });
  std::size_t rendered = 0;
  for (const auto& [name, value] : tremor::effective_configuration(result.config))
    rendered += name.size() + value.size();
  for (const std::string& message : result.messages) rendered += message.size();
  std::filesystem::remove(path);
  if (rendered == 0) std::abort();  // every setting is always rendered
  return 0;
}
