// /analysis in the run file, and report_run: the profiler's single call.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <exception>

#include "tremor/analysis/report.hpp"

namespace tremor::analysis {
namespace {

template <typename T, typename Get>
std::vector<T> column(const std::vector<GroupResult>& groups, Get get) {
  std::vector<T> values;
  for (const GroupResult& group : groups) {
    if (group.usable) values.push_back(static_cast<T>(get(group)));
  }
  return values;
}

bool write_groups(RunFileAppender& out, const RunAnalysis& analysis) {
  const auto& groups = analysis.groups;
  constexpr std::string_view path = "/analysis/groups";
  std::vector<std::int64_t> indices;
  std::vector<std::string> signatures;
  std::vector<std::string> chosen;
  for (std::size_t g = 0; g < groups.size(); ++g) {
    if (!groups[g].usable) continue;
    indices.push_back(static_cast<std::int64_t>(g));
    signatures.push_back(std::to_string(groups[g].signature));
    chosen.push_back(groups[g].chosen_fit);
  }
  auto real = [&](std::string_view name, auto get) { return out.write(path, name, column<double>(groups, get)); };
  auto integer = [&](std::string_view name, auto get) {
    return out.write(path, name, column<std::int64_t>(groups, get));
  };
  return out.write(path, "index", indices) && out.write(path, "signature", signatures) &&
         integer("segments", [](const GroupResult& g) { return g.members.size(); }) &&
         real("median_s", [](const GroupResult& g) { return g.median_s; }) &&
         real("mad_s", [](const GroupResult& g) { return g.mad_s; }) &&
         real("threshold_s", [](const GroupResult& g) { return g.threshold_s; }) &&
         integer("interfered", [](const GroupResult& g) { return g.interfered; }) &&
         real("impact_s", [](const GroupResult& g) { return g.impact_s; }) &&
         real("continuous_impact_s", [](const GroupResult& g) { return g.continuous_impact_s; }) &&
         real("intrinsic_s", [](const GroupResult& g) { return g.intrinsic_s; }) &&
         real("lost_s", [](const GroupResult& g) { return g.lost_s; }) &&
         integer("pwm_usable", [](const GroupResult& g) { return g.pwm.usable ? 1 : 0; }) &&
         real("pwm_loc", [](const GroupResult& g) { return g.pwm.loc; }) &&
         real("pwm_scale", [](const GroupResult& g) { return g.pwm.scale; }) &&
         real("pwm_k", [](const GroupResult& g) { return g.pwm.k; }) &&
         integer("mom_usable", [](const GroupResult& g) { return g.mom.usable ? 1 : 0; }) &&
         real("mom_loc", [](const GroupResult& g) { return g.mom.loc; }) &&
         real("mom_scale", [](const GroupResult& g) { return g.mom.scale; }) &&
         real("mom_k", [](const GroupResult& g) { return g.mom.k; }) &&
         integer("fits_disagree", [](const GroupResult& g) { return g.fits_disagree ? 1 : 0; }) &&
         out.write(path, "chosen_fit", chosen);
}

bool write_predictions(RunFileAppender& out, const RunAnalysis& analysis) {
  constexpr std::string_view path = "/analysis/predictions";
  std::vector<std::string> method;
  std::vector<double> factor, processes, median, low, high, inflation;
  for (const Prediction& p : analysis.predictions) {
    method.push_back(p.method);
    factor.push_back(p.factor);
    processes.push_back(p.processes);
    median.push_back(p.median_s);
    low.push_back(p.ci_low_s);
    high.push_back(p.ci_high_s);
    inflation.push_back(p.variance_inflation);
  }
  return out.write(path, "method", method) && out.write(path, "factor", factor) &&
         out.write(path, "processes", processes) && out.write(path, "median_s", median) &&
         out.write(path, "ci_low_s", low) && out.write(path, "ci_high_s", high) &&
         out.write(path, "variance_inflation", inflation);
}

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

bool write_analysis(RunFileAppender& out, const RunAnalysis& analysis, const nlohmann::json& report) {
  std::vector<std::int64_t> group(analysis.segment_group.begin(), analysis.segment_group.end());
  std::vector<std::int64_t> segment_class;
  segment_class.reserve(analysis.segment_class.size());
  for (const SegmentClass c : analysis.segment_class) segment_class.push_back(static_cast<std::int64_t>(c));
  std::vector<std::string> warning_codes, warning_messages;
  for (const Warning& warning : analysis.warnings) {
    warning_codes.push_back(warning.code);
    warning_messages.push_back(warning.message);
  }
  const AnalysisParameters& p = analysis.parameters;
  const bool ok = analysis.estimate_possible;
  return out.write("/analysis/segments", "group", group) && out.write("/analysis/segments", "class", segment_class) &&
         out.write("/analysis/segments", "impact_s", analysis.segment_impact_s) &&
         out.write("/analysis/segments", "lost_s", analysis.segment_lost_s) &&
         out.write("/analysis/segments", "mad4_impact_s", analysis.segment_mad4_impact_s) &&
         write_groups(out, analysis) && write_predictions(out, analysis) &&
         out.write("/analysis/warnings", "code", warning_codes) &&
         out.write("/analysis/warnings", "message", warning_messages) &&
         out.set_integer("/analysis", "report_schema_version", kReportSchemaVersion) &&
         out.set_integer("/analysis", "estimate_possible", ok ? 1 : 0) &&
         out.set_text("/analysis", "no_estimate_reason", analysis.no_estimate_reason) &&
         out.set_number("/analysis", "interference_percent", analysis.interference_percent) &&
         out.set_text("/analysis", "method", p.method) &&
         out.set_number("/analysis", "lost_percent", analysis.lost_percent) &&
         out.set_number("/analysis", "lost_percent_low", analysis.lost_percent_low) &&
         out.set_number("/analysis", "lost_percent_high", analysis.lost_percent_high) &&
         out.set_number("/analysis", "intrinsic_run_time_s", analysis.intrinsic_run_time_s) &&
         out.set_number("/analysis", "paper_mad4_percent", analysis.paper_mad4_percent) &&
         out.set_number("/analysis", "continuous_interference_percent", analysis.continuous_interference_percent) &&
         out.set_text("/analysis", "class", ok ? estimators::to_string(analysis.interference_class) : "none") &&
         out.set_number("/analysis", "probability_high", analysis.probability_high) &&
         out.set_integer("/analysis", "signature_fallback", analysis.signature_fallback ? 1 : 0) &&
         // The seed is unsigned 64-bit: stored as text so no value is lost.
         out.set_text("/analysis", "seed", std::to_string(p.seed)) &&
         out.set_number("/analysis", "mad_factor", p.mad_factor) &&
         out.set_number("/analysis", "cluster_threshold", p.cluster_threshold) &&
         out.set_integer("/analysis", "min_group", p.min_group) &&
         out.set_integer("/analysis", "replicas", p.replicas) && out.set_number("/analysis", "ci", p.ci) &&
         out.write_text("/analysis", "report_json", report.dump());
}

void report_run(const RunData& run, const Config& config, const std::optional<std::filesystem::path>& h5,
                const std::optional<std::filesystem::path>& json_path, std::FILE* text_out) noexcept {
  std::FILE* stream = text_out ? text_out : stderr;
  try {
    const RunAnalysis analysis = analyze_run(run, parameters_from_config(config));
    const std::string output_file = h5 ? h5->string() : "";
    const nlohmann::json report = report_json(run, analysis, output_file);
    if (h5) {
      std::string error;
      std::optional<RunFileAppender> appender = RunFileAppender::open(*h5, error);
      if (!appender) {
        std::fprintf(stream, "[tremor] cannot add /analysis to %s: %s\n", h5->c_str(), error.c_str());
      } else if (!write_analysis(*appender, analysis, report) || !appender->close()) {
        std::fprintf(stream, "[tremor] cannot add /analysis to %s: %s\n", h5->c_str(), appender->error().c_str());
      }
    }
    if (json_path) {
      std::string error;
      if (!write_reserved_file(*json_path, report.dump(2) + "\n", error)) {
        std::fprintf(stream, "[tremor] cannot write the JSON report: %s\n", error.c_str());
      }
    }
    const bool text = config.report == ReportFormat::text || config.report == ReportFormat::both;
    const bool json = config.report == ReportFormat::json || config.report == ReportFormat::both;
    if (text) write_all(stream, render_text_report(run, analysis, output_file));
    if (json) write_all(stream, report.dump(2) + "\n");
    std::fflush(stream);
  } catch (const std::exception& error) {
    std::fprintf(stream, "[tremor] analysis failed: %s\n", error.what());
  } catch (...) {
    std::fprintf(stream, "[tremor] analysis failed: unknown error\n");
  }
}

}  // namespace tremor::analysis
