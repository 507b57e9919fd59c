// The fleet's ranking, report reader and page view (estimators/fleet).
#include <catch2/catch.hpp>

#include "tremor/fleet/ranking.hpp"
#include "tremor/fleet/record.hpp"
#include "tremor/fleet/view.hpp"

using namespace tremor::fleet;
using nlohmann::json;

// Reference values from the closed form (p + z²/2n − z·sqrt(p(1−p)/n + z²/4n²)) / (1 + z²/n),
// z = 1.959964, evaluated by hand; fails a normal (Wald) interval, which gives 0.506 for 7 of 9 and 1 for 1 of 1.
TEST_CASE("Wilson lower bound matches the closed form", "[fleet]") {
  CHECK(wilson_lower(1, 1) == Approx(0.20654).epsilon(1e-4));
  CHECK(wilson_lower(7, 9) == Approx(0.45258).epsilon(1e-4));
  CHECK(wilson_lower(0, 10) == 0.0);
  CHECK(wilson_lower(0, 0) == 0.0);
}

// The rule. Fails a ranking by the raw slow share (1/1 = 100 % beats 7/9 = 78 %)
// and one by slow runs without the interval's width only if the counts were reversed;
// also fails a sort in the wrong direction.
TEST_CASE("A node slow in its only run does not outrank one slow in 7 of 9", "[fleet]") {
  std::vector<NodeCounts> nodes{{"once", 1, 1, 2.0, 0, 0}, {"often", 9, 7, 50.0, 0, 0}};
  for (int i = 0; i < 20; ++i) nodes.push_back({"clean" + std::to_string(i), 9, 0, 0.0, 0, 0});
  const std::vector<NodeScore> ranked = rank_nodes(nodes);
  REQUIRE(ranked.size() == nodes.size());
  CHECK(ranked[0].counts.node == "often");
  CHECK(ranked[1].counts.node == "once");
  // Baseline: 8 slow node-runs of 1 + 9 + 180 node-runs. Fails a baseline of the nodes' mean share.
  CHECK(ranked[0].baseline_share == Approx(8.0 / 190.0));
  CHECK(ranked[0].score == Approx(wilson_lower(7, 9) - 8.0 / 190.0));
  CHECK(ranked.back().score < 0.0);
}

json minimal_report() {
  return {{"schema_version", 1},
          {"tremor_version", "0.7.0"},
          {"output_file", "/runs/app-1.h5"},
          {"run_id", "20261201T000000.000Z-a-8"},
          {"start_utc", "2026-12-01T10:00:00.500Z"},
          {"hosts", {"a", "b"}},
          {"application", "app"},
          {"run_time_s", 10.0},
          {"lost_percent", 5.0},
          {"world_size", 8},
          {"stragglers",
           {{"nodes", {{{"hostname", "b"}, {"impact_s", 0.4}}, {{"hostname", "a"}, {"impact_s", 0.1}}}},
            {"ranks", {{{"rank", 5}, {"hostname", "b"}, {"impact_s", 0.4}}}}}},
          {"diagnosis", {{"slow_nodes", {{{"hostname", "b"}}}}, {"slow_ranks", {{{"rank", 5}, {"hostname", "b"}}}}}}};
}

// Fails a reader that takes the slow node from stragglers.nodes (both nodes are
// listed there) or that keys by the output file instead of the run id.
TEST_CASE("A report becomes a run record", "[fleet]") {
  const ParsedReport parsed = parse_report(minimal_report());
  REQUIRE(parsed.record);
  const RunRecord& run = *parsed.record;
  CHECK(run.key == "20261201T000000.000Z-a-8");
  CHECK(run.run_file == "app-1.h5");
  CHECK(run.start_unix == Approx(1796119200.5));
  REQUIRE(run.nodes.size() == 2);
  CHECK_FALSE(run.nodes[0].slow);
  CHECK(run.nodes[1].slow);
  CHECK(run.nodes[1].wait_s == Approx(0.4));
  REQUIRE(run.ranks.size() == 1);
  CHECK(run.ranks[0].slow);
}

// Fails a reader that ignores the contract's job object (the run would be keyed by run_id).
TEST_CASE("A report with a job id is keyed by the scheduler and job id", "[fleet]") {
  json report = minimal_report();
  report["job"] = {{"scheduler", "slurm"}, {"id", "1234"}, {"name", "x"}, {"user", nullptr}, {"nodelist", "a,b"}};
  const ParsedReport parsed = parse_report(report);
  REQUIRE(parsed.record);
  CHECK(parsed.record->key == "slurm:1234");
}

// Fails a reader that indexes any JSON object (foreign files would become empty runs).
TEST_CASE("Foreign JSON and reports without hosts are refused with a reason", "[fleet]") {
  CHECK_FALSE(parse_report(json{{"hello", 1}}).record);
  CHECK_FALSE(parse_report(json::array({1, 2})).record);
  json old = minimal_report();
  old.erase("hosts");
  const ParsedReport parsed = parse_report(old);
  CHECK_FALSE(parsed.record);
  CHECK(parsed.problem.find("run file") != std::string::npos);
}

// Fails a view that fills days a node did not run with 0 (the contract wants null)
// or that orders rows other than by the ranking.
TEST_CASE("The fleet view has a heat map by ranked node and day, and the ranking table", "[fleet]") {
  const std::vector<NodeScore> ranked = rank_nodes({{"b", 4, 3, 9.0, 0, 0}, {"a", 20, 0, 0.0, 0, 0}});
  const long long day = day_number(1796119200.0);
  const std::vector<NodeDay> days{{"a", day, 2, 0.5}, {"b", day, 2, 7.0}, {"b", day + 1, 2, 2.0}};
  const json view = fleet_view(ranked, days);
  CHECK(view["marker"] == kFleetHtmlMarker);
  const json& heatmap = view["blocks"][1]["heatmap"];
  CHECK(heatmap["rows"] == json({"b", "a"}));
  CHECK(heatmap["columns"] == json({"2026-12-01", "2026-12-02"}));
  CHECK(heatmap["values"] == json::parse("[[7.0, 2.0], [0.5, null]]"));
  CHECK(heatmap["unit"] == "s");
  const json& table = view["blocks"][3]["table"];
  CHECK(table["rows"].size() == 2);
  CHECK(table["rows"][0][0] == "b");
  CHECK(table["highlighted"] == json({0}));
}

// Fails a median of the unsorted values or an interquartile range from
// nearest ranks (numpy's default, type 7, interpolates).
TEST_CASE("Lost % per application and day: median and quartiles", "[fleet]") {
  std::vector<RunRow> runs;
  for (const double lost : {9.0, 1.0, 3.0, 7.0}) runs.push_back({"k", "app", "", 1796119200.0, 10.0, lost, 2});
  runs.push_back({"k", "app", "", 1796119200.0, 10.0, std::nullopt, 2});
  const std::vector<ApplicationDay> days = application_days(runs);
  REQUIRE(days.size() == 1);
  CHECK(days[0].runs == 5);
  CHECK(days[0].estimated == 4);
  CHECK(days[0].median == Approx(5.0));
  CHECK(days[0].q1 == Approx(2.5));
  CHECK(days[0].q3 == Approx(7.5));
}
