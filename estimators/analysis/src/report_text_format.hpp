// Shared by the short and the full text report: printf into a string, word
// wrap to 80 columns (bytes, so a multi-byte character only makes a line
// shorter), and the words for the class, the partial run and the clock.
#pragma once
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <ctime>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "tremor/analysis/report.hpp"
#include "tremor/estimators/interference.hpp"

namespace tremor::analysis::text {

inline constexpr std::size_t kWidth = 80;

inline std::string format(const char* pattern, ...) __attribute__((format(printf, 1, 2)));
inline std::string format(const char* pattern, ...) {
  char buffer[512];
  va_list arguments;
  va_start(arguments, pattern);
  std::vsnprintf(buffer, sizeof buffer, pattern, arguments);
  va_end(arguments);
  return buffer;
}

// Greedy word wrap to kWidth columns; continuation lines get `indent`.
inline std::vector<std::string> wrapped_lines(const std::string& text, const std::string& indent = "  ") {
  std::vector<std::string> lines;
  std::istringstream words(text);
  std::string word;
  std::string line;
  const auto is_blank = [&] { return line.empty() || line == indent; };
  while (words >> word) {
    while (word.size() > kWidth - indent.size()) {  // a very long path: hard break
      if (!is_blank()) lines.push_back(line);
      line = lines.empty() ? "" : indent;
      const std::size_t room = kWidth - line.size();
      lines.push_back(line + word.substr(0, room));
      word.erase(0, room);
      line = indent;
    }
    if (!is_blank() && line.size() + 1 + word.size() > kWidth) {
      lines.push_back(line);
      line = indent;
    }
    line += is_blank() ? word : " " + word;
  }
  if (!is_blank()) lines.push_back(line);
  return lines;
}

inline void wrap(std::ostringstream& out, const std::string& text, const std::string& indent = "  ") {
  for (const std::string& line : wrapped_lines(text, indent)) out << line << '\n';
}

// As wrap, in at most `most` lines: a longer text ends in "..." where it is
// cut. Returns the lines printed.
inline std::size_t wrap_at_most(std::ostringstream& out, const std::string& text, std::size_t most,
                                const std::string& indent = "  ") {
  std::vector<std::string> lines = wrapped_lines(text, indent);
  if (lines.size() > most) {
    lines.resize(most);
    std::string& last = lines.back();
    while (last.size() + 4 > kWidth) {
      const std::size_t space = last.find_last_of(' ');
      last.erase(space == std::string::npos || space <= indent.size() ? kWidth - 4 : space);
    }
    last += " ...";
  }
  for (const std::string& line : lines) out << line << '\n';
  return lines.size();
}

inline const char* light(estimators::InterferenceClass interference_class) {
  switch (interference_class) {
    case estimators::InterferenceClass::low:
      return "GREEN";
    case estimators::InterferenceClass::medium:
      return "YELLOW";
    case estimators::InterferenceClass::high:
      return "RED";
  }
  return "GREEN";
}

inline std::string upper(std::string_view text) {
  std::string out(text);
  for (char& ch : out) ch = static_cast<char>(ch >= 'a' && ch <= 'z' ? ch - 'a' + 'A' : ch);
  return out;
}

inline std::string partial_reason_text(const std::string& code) {
  if (code == "abort") return "reason: MPI_Abort";
  if (code == "exit_without_finalize") return "reason: exit without MPI_Finalize";
  if (code == "finalize_unsaved") return "reason: MPI_Finalize ran but the run file was not written";
  return "reason: unknown, killed by a signal or the walltime";
}

inline std::string clock_text(double unix_seconds) {
  if (!std::isfinite(unix_seconds) || unix_seconds <= 0.0) return "";
  const auto whole = static_cast<std::time_t>(std::floor(unix_seconds));
  std::tm parts{};
  gmtime_r(&whole, &parts);
  return format("%02d:%02d:%02d", parts.tm_hour, parts.tm_min, parts.tm_sec);
}

// "1 process", "2 processes".
inline std::string counted(std::size_t count, const char* one, const char* many) {
  return std::to_string(count) + " " + (count == 1 ? one : many);
}

// What the interval counts and how often such intervals hold the truth (by
// design; docs/accuracy.md measures it), beside the interval itself.
inline std::string interval_meaning(double ci) {
  return format("it counts the delays Tremor sees (from other processes, or injected) plus the machine's own "
                "share; %.0f %% of such intervals hold the true lost share.",
                100.0 * ci);
}

}  // namespace tremor::analysis::text

namespace tremor::analysis {

// The default report (report_text_short.cpp); render_text_report chooses.
std::string render_short_text_report(const RunData& run, const RunAnalysis& analysis, const std::string& output_file);

// The Where line(s) of the short report: at most `most` lines naming the
// ranks and nodes the others waited for, then one "Imbalance:" line for ranks
// with more work (never lost time).
void append_where_lines(std::ostringstream& out, const Diagnosis& diagnosis, std::size_t most);

}  // namespace tremor::analysis
