// /analysis in the run file, and report_run: the profiler's single call.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <exception>

#include "tremor/analysis/report.hpp"
#include "tremor/json_text.hpp"

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
  std::vector<double> factor, processes, median, low, high, pi_low, pi_high, inflation;
  for (const Prediction& p : analysis.predictions) {
    method.push_back(p.method);
    factor.push_back(p.factor);
    processes.push_back(p.processes);
    median.push_back(p.median_s);
    low.push_back(p.ci_low_s);
    high.push_back(p.ci_high_s);
    pi_low.push_back(p.pi_low_s);
    pi_high.push_back(p.pi_high_s);
    inflation.push_back(p.variance_inflation);
  }
  return out.write(path, "method", method) && out.write(path, "factor", factor) &&
         out.write(path, "processes", processes) && out.write(path, "median_s", median) &&
         out.write(path, "ci_low_s", low) && out.write(path, "ci_high_s", high) &&
         out.write(path, "pi_low_s", pi_low) && out.write(path, "pi_high_s", pi_high) &&
         out.write(path, "variance_inflation", inflation) &&
         out.set_text(path, "headline_method", analysis.prediction_headline.method) &&
         out.set_text(path, "scaling", kPredictionScaling) &&
         out.set_text(path, "headline_reason", analysis.prediction_headline.reason);
}

// One row per kind of warning (with its case count), one row per case below.
bool write_warnings(RunFileAppender& out, const RunAnalysis& analysis) {
  std::vector<std::string> codes, messages, case_codes, subjects, details;
  std::vector<std::int64_t> counts;
  std::vector<double> severities;
  for (const Warning& warning : analysis.warnings) {
    codes.push_back(warning.code);
    messages.push_back(warning.message);
    counts.push_back(static_cast<std::int64_t>(std::max<std::size_t>(1, warning.cases.size())));
    for (const WarningCase& item : warning.cases) {
      case_codes.push_back(warning.code);
      subjects.push_back(item.subject);
      details.push_back(item.detail);
      severities.push_back(item.severity);
    }
  }
  constexpr std::string_view path = "/analysis/warnings";
  constexpr std::string_view cases = "/analysis/warnings/cases";
  return out.write(path, "code", codes) && out.write(path, "message", messages) && out.write(path, "count", counts) &&
         out.write(cases, "code", case_codes) && out.write(cases, "subject", subjects) &&
         out.write(cases, "detail", details) && out.write(cases, "severity", severities);
}

bool write_slow(RunFileAppender& out, const Diagnosis& diagnosis) {
  constexpr std::string_view ranks_path = "/analysis/diagnosis/slow_ranks";
  std::vector<std::int64_t> rank, node, last;
  std::vector<std::string> hostname, kind;
  std::vector<double> lost, share;
  for (const SlowRank& r : diagnosis.slow_ranks) {
    rank.push_back(r.rank);
    node.push_back(r.node_id);
    hostname.push_back(r.hostname);
    lost.push_back(r.lost_percent);
    share.push_back(r.last_share);
    last.push_back(static_cast<std::int64_t>(r.last_segments));
    kind.push_back(r.kind);
  }
  if (!(out.write(ranks_path, "rank", rank) && out.write(ranks_path, "node", node) &&
        out.write(ranks_path, "hostname", hostname) && out.write(ranks_path, "lost_percent", lost) &&
        out.write(ranks_path, "last_share", share) && out.write(ranks_path, "last_segments", last) &&
        out.write(ranks_path, "kind", kind))) {
    return false;
  }
  constexpr std::string_view nodes_path = "/analysis/diagnosis/slow_nodes";
  node.clear(), last.clear(), hostname.clear(), kind.clear(), lost.clear(), share.clear();
  std::vector<std::int64_t> members;
  for (const SlowNode& n : diagnosis.slow_nodes) {
    node.push_back(n.node_id);
    hostname.push_back(n.hostname);
    members.push_back(static_cast<std::int64_t>(n.ranks));
    lost.push_back(n.lost_percent);
    share.push_back(n.last_share);
    last.push_back(static_cast<std::int64_t>(n.last_segments));
    kind.push_back(n.kind);
  }
  return out.write(nodes_path, "node", node) && out.write(nodes_path, "hostname", hostname) &&
         out.write(nodes_path, "ranks", members) && out.write(nodes_path, "lost_percent", lost) &&
         out.write(nodes_path, "last_share", share) && out.write(nodes_path, "last_segments", last) &&
         out.write(nodes_path, "kind", kind);
}

bool write_episodes(RunFileAppender& out, const Diagnosis& diagnosis) {
  constexpr std::string_view path = "/analysis/diagnosis/episodes";
  std::vector<double> start, end, start_unix, end_unix, lost;
  std::vector<std::int64_t> first, last;
  std::vector<std::string> ranks;
  for (const Episode& e : diagnosis.episodes) {
    start.push_back(e.start_s);
    end.push_back(e.end_s);
    start_unix.push_back(e.start_unix);
    end_unix.push_back(e.end_unix);
    lost.push_back(e.lost_percent);
    first.push_back(static_cast<std::int64_t>(e.first_segment));
    last.push_back(static_cast<std::int64_t>(e.last_segment));
    std::string list;
    for (const std::int32_t rank : e.ranks) list += (list.empty() ? "" : ",") + std::to_string(rank);
    ranks.push_back(list);
  }
  return out.write(path, "start_s", start) && out.write(path, "end_s", end) &&
         out.write(path, "start_unix", start_unix) && out.write(path, "end_unix", end_unix) &&
         out.write(path, "lost_percent", lost) && out.write(path, "first_segment", first) &&
         out.write(path, "last_segment", last) && out.write(path, "ranks", ranks);
}

// Every rank's figures, the component splits and the speed map.
bool write_diagnosis(RunFileAppender& out, const Diagnosis& diagnosis) {
  constexpr std::string_view root = "/analysis/diagnosis";
  if (!out.set_integer(root, "available", diagnosis.available ? 1 : 0)) return false;
  if (!diagnosis.available) return true;
  std::vector<std::int64_t> ranks(diagnosis.rank_last_share.size());
  for (std::size_t p = 0; p < ranks.size(); ++p) ranks[p] = static_cast<std::int64_t>(p);
  constexpr std::string_view all = "/analysis/diagnosis/ranks";
  const ComponentShares& run = diagnosis.run_components;
  const ComponentShares& lost = diagnosis.lost_components;
  constexpr std::string_view components = "/analysis/diagnosis/components";
  const std::vector<std::string> names = {"compute", "mpi", "io"};
  const SpeedMap& map = diagnosis.speed;
  constexpr std::string_view speed = "/analysis/diagnosis/speed";
  const std::vector<std::int64_t> rows(map.ranks.begin(), map.ranks.end());
  return out.write(all, "rank", ranks) && out.write(all, "last_share", diagnosis.rank_last_share) &&
         out.write(all, "lost_percent", diagnosis.rank_lost_percent) &&
         out.write(all, "time_ratio", diagnosis.rank_time_ratio) &&
         out.write(all, "work_ratio", diagnosis.rank_work_ratio) && write_slow(out, diagnosis) &&
         write_episodes(out, diagnosis) && out.write(components, "name", names) &&
         out.write(components, "run_percent", std::vector<double>{run.compute, run.mpi, run.io}) &&
         out.write(components, "lost_percent", std::vector<double>{lost.compute, lost.mpi, lost.io}) &&
         out.write(speed, "ranks", rows) && out.write(speed, "edges_s", map.edges_s) &&
         out.write(speed, "speed", map.speed);
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
  // Per-segment charges in single precision (7 digits): the largest part of a
  // long run's file, and read only by the plots.
  auto single = [](const std::vector<double>& values) { return std::vector<float>(values.begin(), values.end()); };
  const AnalysisParameters& p = analysis.parameters;
  const bool ok = analysis.estimate_possible;
  return out.write("/analysis/segments", "group", group) && out.write("/analysis/segments", "class", segment_class) &&
         out.write("/analysis/segments", "impact_s", std::span<const float>(single(analysis.segment_impact_s))) &&
         out.write("/analysis/segments", "lost_s", std::span<const float>(single(analysis.primary.segment_lost_s))) &&
         out.write("/analysis/segments", "mad4_impact_s", std::span<const float>(single(analysis.segment_mad4_impact_s))) &&
         write_groups(out, analysis) && write_predictions(out, analysis) && write_diagnosis(out, analysis.diagnosis) &&
         write_warnings(out, analysis) && out.set_integer("/analysis", "report_schema_version", kReportSchemaVersion) &&
         out.set_integer("/analysis", "estimate_possible", ok ? 1 : 0) &&
         out.set_text("/analysis", "no_estimate_reason", analysis.no_estimate_reason) &&
         out.set_number("/analysis", "interference_percent", analysis.interference_percent) &&
         out.set_text("/analysis", "method", p.method) &&
         out.set_number("/analysis", "lost_percent", analysis.primary.lost_percent) &&
         out.set_number("/analysis", "lost_percent_low", analysis.primary.lost_percent_low) &&
         out.set_number("/analysis", "lost_percent_high", analysis.primary.lost_percent_high) &&
         out.set_number("/analysis", "intrinsic_run_time_s", analysis.primary.intrinsic_run_time_s) &&
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
         out.write_text("/analysis", "report_json", json_text(report));
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
      if (!write_reserved_file(*json_path, json_text(report, 2) + "\n", error)) {
        std::fprintf(stream, "[tremor] cannot write the JSON report: %s\n", error.c_str());
      }
    }
    const bool text = config.report == ReportFormat::text || config.report == ReportFormat::both;
    const bool json = config.report == ReportFormat::json || config.report == ReportFormat::both;
    if (text) write_all(stream, render_text_report(run, analysis, output_file, config.report_detail));
    if (json) write_all(stream, json_text(report, 2) + "\n");
    std::fflush(stream);
  } catch (const std::exception& error) {
    std::fprintf(stream, "[tremor] analysis failed: %s\n", error.what());
  } catch (...) {
    std::fprintf(stream, "[tremor] analysis failed: unknown error\n");
  }
}

}  // namespace tremor::analysis
