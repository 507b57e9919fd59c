// The Chrome trace form of a run (chrome_trace.hpp): its processes, threads,
// slices and counters on a synthetic two-node run, the 1 M-event note, and
// the report registry's "chrome" entry. The format itself is validated on a
// real run by check_chrome_trace.py (analysis.chrome_trace.*).
#include <catch2/catch.hpp>
#include <map>
#include <set>
#include <stdexcept>

#include "synthetic_run.hpp"
#include "test_helpers.hpp"
#include "tremor/analysis/chrome_trace.hpp"

using namespace tremor;
using namespace tremor::analysis;
using nlohmann::json;

namespace {

tremor::test::SyntheticSpec two_nodes(std::size_t detail_ranks) {
  tremor::test::SyntheticSpec spec;
  spec.groups = {tremor::test::SyntheticGroup{1e6, 0.010, 60}, tremor::test::SyntheticGroup{5e6, 0.025, 60}};
  spec.delays = {{10, 0.08, 3}, {51, 0.08, 3}, {70, 0.06, 3}};
  spec.world_size = 4;
  spec.ranks_per_node = 2;
  spec.detail_ranks = detail_ranks;
  return spec;
}

struct Rendered {
  RunData run;
  RunAnalysis analysis;
  json trace;
  ChromeTrace raw;
};

Rendered render(std::size_t detail_ranks, const ChromeTraceOptions& options = {}) {
  Rendered out{tremor::test::synthetic_run(two_nodes(detail_ranks)), {}, {}, {}};
  out.analysis = analyze_run(out.run, tremor::test::quick_parameters());
  const std::string file = "run.h5";
  const ReportInput input{out.run, out.analysis, file, ReportDetail{}, report_json(out.run, out.analysis, file)};
  out.raw = render_chrome_trace(input, options);
  out.trace = json::parse(out.raw.json);
  return out;
}

// (pid, tid) -> thread name, and pid -> process name.
std::map<std::pair<std::int64_t, std::int64_t>, std::string> thread_names(const json& trace) {
  std::map<std::pair<std::int64_t, std::int64_t>, std::string> names;
  for (const json& e : trace["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "thread_name") names[{e["pid"], e["tid"]}] = e["args"]["name"];
  }
  return names;
}

}  // namespace

// Fails a trace with one process per rank instead of per node, ids of 0
// (Perfetto's idle task), a slice count other than segments x detail ranks,
// a segment's lost time on every rank, and a counter on the wrong node.
TEST_CASE("chrome trace: a process per node, a thread per detail rank, excess adding up", "[report][chrome]") {
  const Rendered r = render(4);
  std::map<std::int64_t, std::string> processes;
  for (const json& e : r.trace["traceEvents"]) {
    CHECK(e["pid"].get<std::int64_t>() > 0);
    CHECK(e["tid"].get<std::int64_t>() > 0);
    if (e["ph"] == "M" && e["name"] == "process_name") processes[e["pid"]] = e["args"]["name"];
  }
  CHECK(processes.size() == 3);  // two nodes and Tremor
  const auto names = thread_names(r.trace);
  std::map<std::int64_t, std::set<std::string>> threads_of_pid;
  for (const auto& [key, name] : names) threads_of_pid[key.first].insert(name);
  for (std::int32_t rank = 0; rank < 4; ++rank) {
    const std::int64_t pid = r.run.ranks[rank].node_id + 1;
    CHECK(threads_of_pid[pid].contains("rank " + std::to_string(rank)));
    CHECK(processes[pid] == r.run.ranks[rank].hostname);
  }
  std::size_t rank_slices = 0;
  double excess = 0.0;
  std::map<std::int64_t, double> counter_sum;
  for (const json& e : r.trace["traceEvents"]) {
    if (e["ph"] == "C") counter_sum[e["pid"]] += e["args"]["lost %"].get<double>();
    if (e["ph"] != "X" || !names.at({e["pid"], e["tid"]}).starts_with("rank ")) continue;
    ++rank_slices;
    excess += e["args"]["excess_s"].get<double>();
  }
  CHECK(rank_slices == r.analysis.segment_count * 4);
  REQUIRE(r.analysis.estimate_possible);
  const double lost_s = r.analysis.run_time_s - r.analysis.primary.intrinsic_run_time_s;
  CHECK(lost_s > 0.1);
  CHECK(excess == Approx(lost_s).margin(1e-9));
  const std::int64_t late_node = r.run.ranks[3].node_id + 1;
  CHECK(counter_sum[late_node] > 0.0);
  for (const auto& [pid, sum] : counter_sum) {
    if (pid != late_node) CHECK(sum < 0.1 * counter_sum[late_node]);
  }
  CHECK(r.trace["otherData"]["lost_percent"].get<double>() == Approx(r.analysis.primary.lost_percent));
  CHECK(r.trace["otherData"]["class"] == std::string(estimators::to_string(r.analysis.interference_class)));
}

// Fails threads for ranks without detail, a --ranks filter that keeps other
// ranks, or one that accepts a rank the run has no detail of.
TEST_CASE("chrome trace: only detail ranks, and only those asked for", "[report][chrome]") {
  const Rendered some = render(2);
  std::set<std::string> shown;
  for (const auto& [key, name] : thread_names(some.trace)) shown.insert(name);
  std::set<std::string> expected{"Tremor"};
  for (const std::int32_t rank : some.run.detail.ranks) expected.insert("rank " + std::to_string(rank));
  CHECK(shown == expected);

  ChromeTraceOptions options;
  options.ranks = {some.run.detail.ranks.back()};
  const Rendered one = render(2, options);
  shown.clear();
  for (const auto& [key, name] : thread_names(one.trace)) shown.insert(name);
  CHECK(shown == std::set<std::string>{"Tremor", "rank " + std::to_string(options.ranks.front())});

  std::int32_t missing = 0;
  while (std::find(some.run.detail.ranks.begin(), some.run.detail.ranks.end(), missing) != some.run.detail.ranks.end()) {
    ++missing;
  }
  options.ranks = {missing};
  CHECK_THROWS_AS(render(2, options), std::invalid_argument);
}

// Fails an exporter that never names the way out above the event limit, or always does.
TEST_CASE("chrome trace: above the event limit a note names --ranks and --from/--to", "[report][chrome]") {
  CHECK(render(4).raw.note.empty());
  ChromeTraceOptions options;
  options.event_limit = 10;
  const Rendered r = render(4, options);
  CHECK(r.raw.events > 10);
  CHECK(r.raw.events == r.trace["traceEvents"].size());
  CHECK_THAT(r.raw.note, Catch::Contains("--ranks") && Catch::Contains("--from") && Catch::Contains("--to"));
  CHECK_THAT(r.raw.note, Catch::Contains(std::to_string(r.raw.events)));
}

// Fails a registry entry that renders something else than the export's default form.
TEST_CASE("chrome trace: the report registry's entry is the default export", "[report][chrome][formats]") {
  const Rendered r = render(4);
  const std::string file = "run.h5";
  const ReportInput input{r.run, r.analysis, file, ReportDetail{}, report_json(r.run, r.analysis, file)};
  const ReportFormatter* chrome = find_format(report_formatters(), "chrome");
  REQUIRE(chrome);
  CHECK(chrome->suffix == ".trace.json");
  CHECK(chrome->render(input) == r.raw.json);
  CHECK(r.raw.json.find(kChromeTraceMarker) < 200);  // output_file.hpp looks for it near the start
}
