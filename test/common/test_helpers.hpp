// Helpers shared by the analysis tests, defined once: the longest line of a
// report and the analysis parameters that keep bootstraps quick.
#pragma once

#include <algorithm>
#include <cstddef>
#include <string>

#include "tremor/analysis/parameters.hpp"

namespace tremor::test {

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
