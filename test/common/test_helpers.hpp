// Helpers shared by the analysis tests, defined once: a file's text, the
// longest line of a report and the analysis parameters that keep bootstraps
// quick.
#pragma once

#include <algorithm>
#include <cstddef>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "tremor/analysis/parameters.hpp"

namespace tremor::test {

// The whole content of a file ("" when it cannot be read).
inline std::string file_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Code points of the longest line (the reports use a few UTF-8 characters).
inline std::size_t longest_line(const std::string& text) {
  std::size_t longest = 0, current = 0;
  for (const char ch : text) {
    if (ch == '\n') {
      longest = std::max(longest, current);
      current = 0;
    } else if ((static_cast<unsigned char>(ch) & 0xC0) != 0x80) {
      ++current;
    }
  }
  return std::max(longest, current);
}

// The default parameters with fewer bootstrap replicas (the default is 1000).
inline analysis::AnalysisParameters quick_parameters(int replicas = 50) {
  analysis::AnalysisParameters parameters;
  parameters.replicas = replicas;
  return parameters;
}

}  // namespace tremor::test
