// Reading a sample: one number per line, '-' = stdin, blank lines and '#' comments allowed.
#pragma once

#include <istream>
#include <string>
#include <vector>

namespace tremor::cli {

/// Reads and validates a sample. Throws CommandFailure naming the file and line
/// (missing file, non-numeric or non-finite value) or the reason (fewer than
/// `minimum_count` values, all values equal).
std::vector<double> read_sample(const std::string& path, std::size_t minimum_count = 3);
std::vector<double> parse_sample(std::istream& input, const std::string& source_name, std::size_t minimum_count);

}  // namespace tremor::cli
