// A fresh, empty directory for one test, removed with everything in it when
// the object goes out of scope (also when a failed REQUIRE unwinds the test).
#pragma once

#include <stdlib.h>  // mkdtemp

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <system_error>

namespace tremor::test {

class TempDir {
 public:
  // The directory is <temp>/<prefix>-XXXXXX: the prefix tells whose it is if a
  // crashed test leaves it behind; mkdtemp makes the name unique across processes.
  explicit TempDir(const std::string& prefix = "tremor-test") {
    std::string name = (std::filesystem::temp_directory_path() / (prefix + "-XXXXXX")).string();
    if (::mkdtemp(name.data()) == nullptr) {
      throw std::runtime_error("cannot create a directory " + name + ": " + std::strerror(errno));
    }
    path_ = name;
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  [[nodiscard]] const std::filesystem::path& path() const { return path_; }

  // Writes text to path()/relative, creating the folders on the way.
  void write(const std::filesystem::path& relative, const std::string& text) const {
    std::filesystem::create_directories((path_ / relative).parent_path());
    std::ofstream(path_ / relative) << text;
  }

 private:
  std::filesystem::path path_;
};

}  // namespace tremor::test
