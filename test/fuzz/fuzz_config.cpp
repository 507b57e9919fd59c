// libFuzzer harness: the profiler's settings as read at MPI_Init. The input's
// bytes up to the first NUL are the TREMOR_CONFIG file (NAME=VALUE lines);
// those after it are the environment, one NAME=VALUE per line, which takes
// precedence over the file. Every setting goes through its parser and
// renderer; bad lines or values must end as one-line messages, never as a
// crash.
#include <cstdlib>
#include <map>
#include <optional>

#include "fuzz_support.hpp"
#include "tremor/config.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::filesystem::path path = tremor::fuzz::scratch_file("settings.conf");
  const std::string_view input = tremor::fuzz::as_text(data, size);
  const std::size_t nul = input.find('\0');
  if (!tremor::fuzz::write_bytes(path, input.substr(0, nul))) return 0;
  std::map<std::string, std::string, std::less<>> environment;
  if (nul != std::string_view::npos) {
    for (const std::string_view line : tremor::fuzz::split(input.substr(nul + 1), "\n")) {
      const std::size_t eq = line.find('=');
      if (eq != std::string_view::npos) environment[std::string(line.substr(0, eq))] = line.substr(eq + 1);
    }
  }
  const tremor::ConfigResult result = tremor::load_config([&](std::string_view name) -> std::optional<std::string> {
    if (name == "TREMOR_CONFIG") return path.string();
    if (const auto it = environment.find(name); it != environment.end()) return it->second;
    return std::nullopt;
  });
  std::filesystem::remove(path);
  // Every setting is rendered, whatever was read, and every message is one line.
  if (tremor::effective_configuration(result.config).size() != tremor::settings().size()) std::abort();
  for (const std::string& message : result.messages)
    if (message.empty() || message.find('\n') != std::string::npos) std::abort();
  return 0;
}
