// Shared by the libFuzzer harnesses. A harness's behaviour must depend on its
// input only, so that a fixed seed and run count give the same verdict on
// every machine: scratch files have names of one length whatever the process
// id, and reports name a fixed file.
#pragma once
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace tremor::fuzz {

// Separates the run files of one input of the compare harness (and of its
// seeds, made by make_corpus.py); HDF5 files do not contain it.
inline constexpr std::string_view kRunSeparator{"\0TREMOR-FUZZ-NEXT-RUN\0", 22};

// A scratch file of this process: /dev/shm when it exists (off the disk).
inline std::filesystem::path scratch_file(std::string_view tag) {
  const std::filesystem::path shm("/dev/shm");
  const std::filesystem::path dir = std::filesystem::is_directory(shm) ? shm : std::filesystem::path("/tmp");
  char name[96];
  std::snprintf(name, sizeof name, "tremor-fuzz-%010ld-%.*s", static_cast<long>(::getpid()),
                static_cast<int>(tag.size()), tag.data());
  return dir / name;
}

inline bool write_bytes(const std::filesystem::path& path, std::string_view bytes) {
  std::FILE* out = std::fopen(path.c_str(), "wb");
  if (!out) return false;
  const bool ok = std::fwrite(bytes.data(), 1, bytes.size(), out) == bytes.size();
  return std::fclose(out) == 0 && ok;
}

inline std::string_view as_text(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// The pieces of `bytes` between separators.
inline std::vector<std::string_view> split(std::string_view bytes, std::string_view separator) {
  std::vector<std::string_view> pieces;
  while (true) {
    const std::size_t at = bytes.find(separator);
    pieces.push_back(bytes.substr(0, at));
    if (at == std::string_view::npos) return pieces;
    bytes.remove_prefix(at + separator.size());
  }
}

}  // namespace tremor::fuzz
