// The run report's formatters (one registry: text, JSON, Chrome trace) and report_run, the
// profiler's single call at MPI_Finalize, which writes through them.
#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <exception>

#include "tremor/analysis/chrome_trace.hpp"
#include "tremor/analysis/report.hpp"
#include "tremor/json_text.hpp"

namespace tremor::analysis {

namespace detail {
std::vector<std::string_view> split_format_list(std::string_view list) {
  std::vector<std::string_view> items;
  constexpr std::string_view blanks = " \t\r\n";
  while (true) {
    const std::size_t comma = list.find(',');
    std::string_view item = list.substr(0, comma);
    const std::size_t first = item.find_first_not_of(blanks);
    item = first == std::string_view::npos ? std::string_view{}
                                           : item.substr(first, item.find_last_not_of(blanks) - first + 1);
    if (!item.empty()) items.push_back(item);
    if (comma == std::string_view::npos) return items;
    list.remove_prefix(comma + 1);
  }
}
}  // namespace detail

namespace {

std::string render_text(const ReportInput& input) {
  return render_text_report(input.run, input.analysis, input.output_file, input.detail);
}

std::string render_json(const ReportInput& input) { return json_text(input.json, 2) + "\n"; }

// The first entry is the default, and what a bad TREMOR_REPORT falls back to.
constexpr std::array<ReportFormatter, 3> kReportFormatters{{
    {"text", ".txt", render_text},
    {"json", ".json", render_json},
    {"chrome", ".trace.json", render_chrome_trace_default},  // docs/trace.md; `tremor export` has its options
}};

bool write_all(std::FILE* stream, const std::string& text) {
  return std::fwrite(text.data(), 1, text.size(), stream) == text.size();
}

// The JSON file was reserved empty (O_EXCL) by the profiler: open it without
// O_CREAT so a vanished reservation is an error, never a new file elsewhere.
bool write_reserved_file(const std::filesystem::path& path, const std::string& text, std::string& error) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
  if (fd < 0) {
    error = path.string() + ": " + std::strerror(errno);
    return false;
  }
  std::size_t written = 0;
  while (written < text.size()) {
    const ssize_t n = ::write(fd, text.data() + written, text.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      error = path.string() + ": " + std::strerror(errno);
      ::close(fd);
      return false;
    }
    written += static_cast<std::size_t>(n);
  }
  if (::close(fd) != 0) {
    error = path.string() + ": " + std::strerror(errno);
    return false;
  }
  return true;
}

}  // namespace

std::span<const ReportFormatter> report_formatters() { return kReportFormatters; }

void report_run(const RunData& run, const Config& config, const std::optional<std::filesystem::path>& h5,
                const std::optional<std::filesystem::path>& json_path, std::FILE* text_out) noexcept {
  std::FILE* stream = text_out ? text_out : stderr;
  try {
    const RunAnalysis analysis = analyze_run(run, parameters_from_config(config));
    const std::string output_file = h5 ? h5->string() : "";
    const ReportInput input{run, analysis, output_file, config.report_detail, report_json(run, analysis, output_file)};
    if (h5) {
      std::string error;
      std::optional<RunFileAppender> appender = RunFileAppender::open(*h5, error);
      if (!appender) {
        std::fprintf(stream, "[tremor] cannot add /analysis to %s: %s\n", h5->c_str(), error.c_str());
      } else if (!write_analysis(*appender, analysis, input.json) || !appender->close()) {
        std::fprintf(stream, "[tremor] cannot add /analysis to %s: %s\n", h5->c_str(), appender->error().c_str());
      }
    }
    if (json_path) {
      std::string error;
      if (!write_reserved_file(*json_path, render_json(input), error)) {
        std::fprintf(stream, "[tremor] cannot write the JSON report: %s\n", error.c_str());
      }
    }
    const FormatChoice<ReportInput> choice = choose_formats(report_formatters(), config.report);
    if (!choice.problem.empty()) {
      std::fprintf(stream, "[tremor] TREMOR_REPORT='%.80s' %s; printing %s\n", config.report.c_str(),
                   choice.problem.c_str(), std::string(choice.formatters.front()->name).c_str());
    }
    for (const ReportFormatter* formatter : choice.formatters) write_all(stream, formatter->render(input));
    std::fflush(stream);
  } catch (const std::exception& error) {
    std::fprintf(stream, "[tremor] analysis failed: %s\n", error.what());
  } catch (...) {
    std::fprintf(stream, "[tremor] analysis failed: unknown error\n");
  }
}

}  // namespace tremor::analysis
