#include "sample_input.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string_view>

#include "commands.hpp"

namespace tremor::cli {
namespace {

std::string_view trim(std::string_view text) {
  const auto first = text.find_first_not_of(" \t\r\v\f");
  if (first == std::string_view::npos) return {};
  const auto last = text.find_last_not_of(" \t\r\v\f");
  return text.substr(first, last - first + 1);
}

// A sample line is a number and perhaps a comment: anything longer (a binary
// or NUL-filled file without line breaks) is refused before it fills memory.
constexpr std::size_t kMaxLineChars = 4096;

// std::getline, but at most kMaxLineChars per line.
bool read_line(std::istream& input, std::string& line, const std::string& where) {
  line.clear();
  std::streambuf* buffer = input.rdbuf();
  for (int c = buffer->sbumpc(); c != std::char_traits<char>::eof(); c = buffer->sbumpc()) {
    if (c == '\n') return true;
    if (line.size() == kMaxLineChars) {
      throw CommandFailure(where + ": line longer than " + std::to_string(kMaxLineChars) + " characters",
                           Exit::bad_input);
    }
    line.push_back(static_cast<char>(c));
  }
  return !line.empty();
}

}  // namespace

std::vector<double> parse_sample(std::istream& input, const std::string& source_name, std::size_t minimum_count) {
  std::vector<double> values;
  std::string line;
  for (std::size_t line_number = 1; read_line(input, line, source_name + ":" + std::to_string(line_number));
       ++line_number) {
    std::string_view text = line;
    if (const auto comment = text.find('#'); comment != std::string_view::npos) {
      text = text.substr(0, comment);
    }
    text = trim(text);
    if (text.empty()) continue;
    double value = 0.0;
    // from_chars rejects an explicit '+', which people do write.
    const std::string_view digits = text.starts_with('+') ? text.substr(1) : text;
    const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    const std::string where = source_name + ":" + std::to_string(line_number);
    if (error == std::errc::result_out_of_range) {
      throw CommandFailure(where + ": number out of the double range: '" + std::string(text) + "'", Exit::bad_input);
    }
    if (error != std::errc() || end != digits.data() + digits.size()) {
      throw CommandFailure(where + ": not a number: '" + std::string(text) + "'", Exit::bad_input);
    }
    if (!std::isfinite(value)) {
      throw CommandFailure(where + ": not a finite number: '" + std::string(text) + "'", Exit::bad_input);
    }
    values.push_back(value);
  }
  if (input.bad()) throw CommandFailure(source_name + ": read error", Exit::bad_input);
  if (values.size() < minimum_count) {
    throw CommandFailure(source_name + ": " + std::to_string(values.size()) + " value(s); at least " +
                             std::to_string(minimum_count) + " are needed",
                         Exit::bad_input);
  }
  const auto [smallest, largest] = std::minmax_element(values.begin(), values.end());
  if (*smallest == *largest) {
    throw CommandFailure(source_name + ": all values are equal; there is no distribution to fit", Exit::bad_input);
  }
  return values;
}

std::vector<double> read_sample(const std::string& path, std::size_t minimum_count) {
  if (path == "-") return parse_sample(std::cin, "<stdin>", minimum_count);
  // Not a FIFO or device: reading one could block forever or never end.
  std::error_code error;
  if (std::filesystem::exists(path, error) && !std::filesystem::is_regular_file(path, error)) {
    throw CommandFailure(path + ": not a regular file (give '-' to read standard input)", Exit::bad_input);
  }
  std::ifstream file(path);
  if (!file) throw CommandFailure(path + ": cannot open the file", Exit::bad_input);
  return parse_sample(file, path, minimum_count);
}

}  // namespace tremor::cli
