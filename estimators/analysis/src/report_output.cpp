// /analysis in the run file: each table is one description (a list of
// columns: name, type, accessor), written by one function.
#include <cstdint>
#include <initializer_list>

#include "tremor/analysis/report.hpp"
#include "tremor/json_text.hpp"

namespace tremor::analysis {
namespace {

// One column of a report table: its name and, by the one accessor set, its
// type (a dataset of int64, double or strings) and how a row gives it.
template <typename Row>
struct Column {
  std::string_view name;
  std::int64_t (*integer)(const Row&) = nullptr;
  double (*real)(const Row&) = nullptr;
  std::string (*text)(const Row&) = nullptr;
};

template <typename Row, typename T>
std::vector<T> column_values(const std::vector<Row>& rows, T (*get)(const Row&)) {
  std::vector<T> values;
  values.reserve(rows.size());
  for (const Row& row : rows) values.push_back(get(row));
  return values;
}

template <typename Row>
bool write_column(RunFileAppender& out, std::string_view path, const std::vector<Row>& rows,
                  const Column<Row>& column) {
  if (column.integer) return out.write(path, column.name, column_values(rows, column.integer));
  if (column.real) return out.write(path, column.name, column_values(rows, column.real));
  return out.write(path, column.name, column_values(rows, column.text));
}

// The table at `path`: one dataset per column, one element per row.
template <typename Row>
bool write_table(RunFileAppender& out, std::string_view path, const std::vector<Row>& rows,
                 std::initializer_list<Column<Row>> columns) {
  for (const Column<Row>& column : columns) {
    if (!write_column(out, path, rows, column)) return false;
  }
  return true;
}

// A row of a table whose rows are positions in the analysis' vectors.
template <typename Source>
struct Position {
  const Source* source;
  std::size_t at;
};

template <typename Source>
std::vector<Position<Source>> positions(const Source& source, std::size_t count) {
  std::vector<Position<Source>> rows;
  for (std::size_t at = 0; at < count; ++at) rows.push_back({&source, at});
  return rows;
}

// Per-segment columns: the analysis' own vectors, written whole (those a run
// without an estimate never filled stay empty), so not a row description.
// The charges in single precision (7 digits): the largest part of a long
// run's file, and read only by the plots.
bool write_segments(RunFileAppender& out, const RunAnalysis& analysis) {
  constexpr std::string_view path = "/analysis/segments";
  const std::vector<std::int64_t> group(analysis.segment_group.begin(), analysis.segment_group.end());
  std::vector<std::int64_t> segment_class;
  for (const SegmentClass c : analysis.segment_class) segment_class.push_back(static_cast<std::int64_t>(c));
  const auto single = [](const std::vector<double>& values) {
    return std::vector<float>(values.begin(), values.end());
  };
  return out.write(path, "group", group) && out.write(path, "class", segment_class) &&
         out.write(path, "impact_s", std::span<const float>(single(analysis.segment_impact_s))) &&
         out.write(path, "lost_s", std::span<const float>(single(analysis.primary.segment_lost_s))) &&
         out.write(path, "mad4_impact_s", std::span<const float>(single(analysis.segment_mad4_impact_s)));
}

struct GroupRow {
  std::size_t index;
  const GroupResult* group;
};
bool write_groups(RunFileAppender& out, const RunAnalysis& analysis) {
  std::vector<GroupRow> rows;
  for (std::size_t g = 0; g < analysis.groups.size(); ++g) {
    if (analysis.groups[g].usable) rows.push_back({g, &analysis.groups[g]});
  }
  using R = const GroupRow&;
  return write_table<GroupRow>(
      out, "/analysis/groups", rows,
      {{.name = "index", .integer = [](R r) { return static_cast<std::int64_t>(r.index); }},
       {.name = "signature", .text = [](R r) { return std::to_string(r.group->signature); }},
       {.name = "segments", .integer = [](R r) { return static_cast<std::int64_t>(r.group->members.size()); }},
       {.name = "median_s", .real = [](R r) { return r.group->median_s; }},
       {.name = "mad_s", .real = [](R r) { return r.group->mad_s; }},
       {.name = "threshold_s", .real = [](R r) { return r.group->threshold_s; }},
       {.name = "interfered", .integer = [](R r) { return static_cast<std::int64_t>(r.group->interfered); }},
       {.name = "impact_s", .real = [](R r) { return r.group->impact_s; }},
       {.name = "continuous_impact_s", .real = [](R r) { return r.group->continuous_impact_s; }},
       {.name = "intrinsic_s", .real = [](R r) { return r.group->intrinsic_s; }},
       {.name = "lost_s", .real = [](R r) { return r.group->lost_s; }},
       {.name = "pwm_usable", .integer = [](R r) -> std::int64_t { return r.group->pwm.usable ? 1 : 0; }},
       {.name = "pwm_loc", .real = [](R r) { return r.group->pwm.loc; }},
       {.name = "pwm_scale", .real = [](R r) { return r.group->pwm.scale; }},
       {.name = "pwm_k", .real = [](R r) { return r.group->pwm.k; }},
       {.name = "mom_usable", .integer = [](R r) -> std::int64_t { return r.group->mom.usable ? 1 : 0; }},
       {.name = "mom_loc", .real = [](R r) { return r.group->mom.loc; }},
       {.name = "mom_scale", .real = [](R r) { return r.group->mom.scale; }},
       {.name = "mom_k", .real = [](R r) { return r.group->mom.k; }},
       {.name = "fits_disagree", .integer = [](R r) -> std::int64_t { return r.group->fits_disagree ? 1 : 0; }},
       {.name = "chosen_fit", .text = [](R r) { return r.group->chosen_fit; }}});
}

bool write_predictions(RunFileAppender& out, const RunAnalysis& analysis) {
  constexpr std::string_view path = "/analysis/predictions";
  using R = const Prediction&;
  return write_table<Prediction>(out, path, analysis.predictions,
                                 {{.name = "method", .text = [](R p) { return p.method; }},
                                  {.name = "factor", .real = [](R p) { return p.factor; }},
                                  {.name = "processes", .real = [](R p) { return p.processes; }},
                                  {.name = "median_s", .real = [](R p) { return p.median_s; }},
                                  {.name = "ci_low_s", .real = [](R p) { return p.ci_low_s; }},
                                  {.name = "ci_high_s", .real = [](R p) { return p.ci_high_s; }},
                                  {.name = "pi_low_s", .real = [](R p) { return p.pi_low_s; }},
                                  {.name = "pi_high_s", .real = [](R p) { return p.pi_high_s; }},
                                  {.name = "variance_inflation", .real = [](R p) { return p.variance_inflation; }}}) &&
         out.set_text(path, "headline_method", analysis.prediction_headline.method) &&
         out.set_text(path, "scaling", kPredictionScaling) &&
         out.set_text(path, "headline_reason", analysis.prediction_headline.reason);
}

// One row per kind of warning (with its case count), one row per case below.
struct CaseRow {
  const Warning* warning;
  const WarningCase* item;
};
bool write_warnings(RunFileAppender& out, const RunAnalysis& analysis) {
  std::vector<CaseRow> cases;
  for (const Warning& warning : analysis.warnings) {
    for (const WarningCase& item : warning.cases) cases.push_back({&warning, &item});
  }
  using W = const Warning&;
  using C = const CaseRow&;
  return write_table<Warning>(
             out, "/analysis/warnings", analysis.warnings,
             {{.name = "code", .text = [](W w) { return w.code; }},
              {.name = "message", .text = [](W w) { return w.message; }},
              {.name = "count",
               .integer = [](W w) { return static_cast<std::int64_t>(std::max<std::size_t>(1, w.cases.size())); }}}) &&
         write_table<CaseRow>(out, "/analysis/warnings/cases", cases,
                              {{.name = "code", .text = [](C c) { return c.warning->code; }},
                               {.name = "subject", .text = [](C c) { return c.item->subject; }},
                               {.name = "detail", .text = [](C c) { return c.item->detail; }},
                               {.name = "severity", .real = [](C c) { return c.item->severity; }}});
}

bool write_slow(RunFileAppender& out, const Diagnosis& diagnosis) {
  using R = const SlowRank&;
  using N = const SlowNode&;
  return write_table<SlowRank>(
             out, "/analysis/diagnosis/slow_ranks", diagnosis.slow_ranks,
             {{.name = "rank", .integer = [](R r) -> std::int64_t { return r.rank; }},
              {.name = "node", .integer = [](R r) -> std::int64_t { return r.node_id; }},
              {.name = "hostname", .text = [](R r) { return r.hostname; }},
              {.name = "lost_percent", .real = [](R r) { return r.lost_percent; }},
              {.name = "last_share", .real = [](R r) { return r.last_share; }},
              {.name = "last_segments", .integer = [](R r) { return static_cast<std::int64_t>(r.last_segments); }},
              {.name = "kind", .text = [](R r) { return r.kind; }}}) &&
         write_table<SlowNode>(
             out, "/analysis/diagnosis/slow_nodes", diagnosis.slow_nodes,
             {{.name = "node", .integer = [](N n) -> std::int64_t { return n.node_id; }},
              {.name = "hostname", .text = [](N n) { return n.hostname; }},
              {.name = "ranks", .integer = [](N n) { return static_cast<std::int64_t>(n.ranks); }},
              {.name = "lost_percent", .real = [](N n) { return n.lost_percent; }},
              {.name = "last_share", .real = [](N n) { return n.last_share; }},
              {.name = "last_segments", .integer = [](N n) { return static_cast<std::int64_t>(n.last_segments); }},
              {.name = "kind", .text = [](N n) { return n.kind; }}});
}

std::string rank_list(const Episode& episode) {
  std::string list;
  for (const std::int32_t rank : episode.ranks) list += (list.empty() ? "" : ",") + std::to_string(rank);
  return list;
}

bool write_episodes(RunFileAppender& out, const Diagnosis& diagnosis) {
  using E = const Episode&;
  return write_table<Episode>(
      out, "/analysis/diagnosis/episodes", diagnosis.episodes,
      {{.name = "start_s", .real = [](E e) { return e.start_s; }},
       {.name = "end_s", .real = [](E e) { return e.end_s; }},
       {.name = "start_unix", .real = [](E e) { return e.start_unix; }},
       {.name = "end_unix", .real = [](E e) { return e.end_unix; }},
       {.name = "lost_percent", .real = [](E e) { return e.lost_percent; }},
       {.name = "first_segment", .integer = [](E e) { return static_cast<std::int64_t>(e.first_segment); }},
       {.name = "last_segment", .integer = [](E e) { return static_cast<std::int64_t>(e.last_segment); }},
       {.name = "ranks", .text = rank_list}});
}

using RankRow = Position<Diagnosis>;
struct ComponentRow {
  std::string name;
  double run_percent;
  double lost_percent;
};

// Every rank's figures, the component splits and the speed map (a matrix, not a table).
bool write_diagnosis(RunFileAppender& out, const Diagnosis& diagnosis) {
  constexpr std::string_view root = "/analysis/diagnosis";
  if (!out.set_integer(root, "available", diagnosis.available ? 1 : 0)) return false;
  if (!diagnosis.available) return true;
  using R = const RankRow&;
  using C = const ComponentRow&;
  const ComponentShares& run = diagnosis.run_components;
  const ComponentShares& lost = diagnosis.lost_components;
  const std::vector<ComponentRow> components = {
      {"compute", run.compute, lost.compute}, {"mpi", run.mpi, lost.mpi}, {"io", run.io, lost.io}};
  const SpeedMap& map = diagnosis.speed;
  constexpr std::string_view speed = "/analysis/diagnosis/speed";
  const std::vector<std::int64_t> rows(map.ranks.begin(), map.ranks.end());
  return write_table<RankRow>(out, "/analysis/diagnosis/ranks", positions(diagnosis, diagnosis.rank_last_share.size()),
                              {{.name = "rank", .integer = [](R r) { return static_cast<std::int64_t>(r.at); }},
                               {.name = "last_share", .real = [](R r) { return r.source->rank_last_share[r.at]; }},
                               {.name = "lost_percent", .real = [](R r) { return r.source->rank_lost_percent[r.at]; }},
                               {.name = "time_ratio", .real = [](R r) { return r.source->rank_time_ratio[r.at]; }},
                               {.name = "work_ratio", .real = [](R r) { return r.source->rank_work_ratio[r.at]; }}}) &&
         write_slow(out, diagnosis) && write_episodes(out, diagnosis) &&
         write_table<ComponentRow>(out, "/analysis/diagnosis/components", components,
                                   {{.name = "name", .text = [](C c) { return c.name; }},
                                    {.name = "run_percent", .real = [](C c) { return c.run_percent; }},
                                    {.name = "lost_percent", .real = [](C c) { return c.lost_percent; }}}) &&
         out.write(speed, "ranks", rows) && out.write(speed, "edges_s", map.edges_s) &&
         out.write(speed, "speed", map.speed);
}

// The run-wide figures and parameters: attributes of /analysis, one
// description like a table's columns, for the one row that is the run.
bool write_run_attributes(RunFileAppender& out, const RunAnalysis& analysis) {
  constexpr std::string_view path = "/analysis";
  using A = const RunAnalysis&;
  const std::initializer_list<Column<RunAnalysis>> attributes = {
      {.name = "report_schema_version", .integer = [](A) -> std::int64_t { return kReportSchemaVersion; }},
      {.name = "estimate_possible", .integer = [](A a) -> std::int64_t { return a.estimate_possible ? 1 : 0; }},
      {.name = "no_estimate_reason", .text = [](A a) { return a.no_estimate_reason; }},
      {.name = "interference_percent", .real = [](A a) { return a.interference_percent; }},
      {.name = "method", .text = [](A a) { return a.parameters.method; }},
      {.name = "lost_percent", .real = [](A a) { return a.primary.lost_percent; }},
      {.name = "lost_percent_low", .real = [](A a) { return a.primary.lost_percent_low; }},
      {.name = "lost_percent_high", .real = [](A a) { return a.primary.lost_percent_high; }},
      {.name = "intrinsic_run_time_s", .real = [](A a) { return a.primary.intrinsic_run_time_s; }},
      {.name = "paper_mad4_percent", .real = [](A a) { return a.paper_mad4_percent; }},
      {.name = "continuous_interference_percent", .real = [](A a) { return a.continuous_interference_percent; }},
      {.name = "class",
       .text =
           [](A a) { return a.estimate_possible ? std::string(estimators::to_string(a.interference_class)) : "none"; }},
      {.name = "probability_high", .real = [](A a) { return a.probability_high; }},
      {.name = "signature_fallback", .integer = [](A a) -> std::int64_t { return a.signature_fallback ? 1 : 0; }},
      // The seed is unsigned 64-bit: stored as text so no value is lost.
      {.name = "seed", .text = [](A a) { return std::to_string(a.parameters.seed); }},
      {.name = "mad_factor", .real = [](A a) { return a.parameters.mad_factor; }},
      {.name = "cluster_threshold", .real = [](A a) { return a.parameters.cluster_threshold; }},
      {.name = "min_group", .integer = [](A a) -> std::int64_t { return a.parameters.min_group; }},
      {.name = "replicas", .integer = [](A a) -> std::int64_t { return a.parameters.replicas; }},
      {.name = "ci", .real = [](A a) { return a.parameters.ci; }}};
  for (const Column<RunAnalysis>& attribute : attributes) {
    const bool written = attribute.integer ? out.set_integer(path, attribute.name, attribute.integer(analysis))
                         : attribute.real  ? out.set_number(path, attribute.name, attribute.real(analysis))
                                           : out.set_text(path, attribute.name, attribute.text(analysis));
    if (!written) return false;
  }
  return true;
}

}  // namespace

bool write_analysis(RunFileAppender& out, const RunAnalysis& analysis, const nlohmann::json& report) {
  return write_segments(out, analysis) && write_groups(out, analysis) && write_predictions(out, analysis) &&
         write_diagnosis(out, analysis.diagnosis) && write_warnings(out, analysis) &&
         write_run_attributes(out, analysis) && out.write_text("/analysis", "report_json", json_text(report));
}

}  // namespace tremor::analysis
