// Loading the numpy/scipy reference vectors and comparing with tolerances.
#pragma once

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

namespace tremor::test {

inline nlohmann::json load_reference(const std::string& file_name) {
  const std::string path = std::string(TREMOR_REFERENCE_DIR) + "/" + file_name;
  std::ifstream input(path);
  if (!input) throw std::runtime_error("cannot open reference file " + path);
  return nlohmann::json::parse(input);
}

/// |actual − expected| <= relative·|expected| + absolute.
inline bool close(double actual, double expected, double relative, double absolute = 1e-300) {
  return std::fabs(actual - expected) <= relative * std::fabs(expected) + absolute;
}

inline constexpr double kClosedFormTolerance = 1e-9;
inline constexpr double kFitTolerance = 1e-6;

}  // namespace tremor::test
