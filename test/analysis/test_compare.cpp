// `tremor compare`'s pure logic (compare.hpp) on hand-made rows and synthetic runs.
#include <algorithm>
#include <catch2/catch.hpp>

#include "synthetic_run.hpp"
#include "tremor/analysis/compare.hpp"

using namespace tremor;
using namespace tremor::analysis;
using tremor::test::SyntheticGroup;
using tremor::test::SyntheticSpec;

namespace {

// Whether a table block of the compare view holds `text` in a cell marked as differing.
bool view_highlights(const nlohmann::json& view, const std::string& text) {
  for (const nlohmann::json& block : view["blocks"]) {
    if (!block.contains("table")) continue;
    const nlohmann::json& table = block["table"];
    for (std::size_t r = 0; r < table["rows"].size(); ++r) {
      for (std::size_t c = 0; c < table["rows"][r].size(); ++c) {
        if (table["rows"][r][c] == text && table["highlighted"][r][c] == true) return true;
      }
    }
  }
  return false;
}

// Whether the view has a paragraph of that class starting with `text`.
bool view_has_paragraph(const nlohmann::json& view, const std::string& css_class, const std::string& text) {
  return std::any_of(view["blocks"].begin(), view["blocks"].end(), [&](const nlohmann::json& block) {
    return block.contains("paragraph") && block.value("class", "") == css_class &&
           block["paragraph"].get<std::string>().starts_with(text);
  });
}

RunRow row(const std::string& name, double run_time_s, double lost, double low, double high) {
  RunRow result;
  result.name = name;
  result.processes = 2;
  result.run_time_s = run_time_s;
  result.estimate_possible = true;
  result.lost_percent = lost;
  result.lost_percent_low = low;
  result.lost_percent_high = high;
  result.intrinsic_run_time_s = run_time_s * (1.0 - lost / 100.0);
  return result;
}

struct AnalysedRun {
  RunData run;
  RunAnalysis analysis;
};

AnalysedRun analysed(const SyntheticSpec& spec) {
  AnalysedRun result{tremor::test::synthetic_run(spec), {}};
  AnalysisParameters parameters;
  parameters.replicas = 50;
  result.analysis = analyze_run(result.run, parameters);
  return result;
}

}  // namespace

TEST_CASE("compare: a slower run without interference is intrinsically slower", "[compare]") {
  const Verdict verdict = compare_intrinsic(row("A", 10.0, 0.1, 0.0, 0.2), row("B", 11.0, 0.1, 0.0, 0.2));
  REQUIRE(verdict.available);
  CHECK(verdict.intrinsic_differs);
  CHECK(verdict.intrinsic_change_percent == Approx(10.0).margin(0.01));
  // Half-widths 0.1 % each, in quadrature, times the ratio 1.1.
  CHECK(verdict.uncertainty_percent == Approx(100.0 * 1.1 * std::sqrt(2.0) * 0.001 / 0.999).epsilon(1e-9));
  CHECK(verdict.interference_share == Approx(0.1 * 0.01 / 1.0).margin(1e-3));
  CHECK(verdict.text ==
        "B is 10.0 % (±0.2) slower than A intrinsically; interference explains none of the "
        "run-time difference (10.0 %)");
}

TEST_CASE("compare: a difference made of lost time is interference", "[compare]") {
  const Verdict verdict = compare_intrinsic(row("clean", 10.0, 0.5, 0.3, 0.7), row("noisy", 11.5, 13.5, 12.0, 15.0));
  REQUIRE(verdict.available);
  CHECK_FALSE(verdict.intrinsic_differs);
  CHECK(std::fabs(verdict.intrinsic_change_percent) < verdict.uncertainty_percent);
  CHECK(verdict.interference_share == Approx(1.0).margin(0.02));
  CHECK(verdict.text.starts_with("the difference is interference: noisy's run time is 15.0 % longer than clean's"));
}

TEST_CASE("compare: partly interference, faster, agreeing and unavailable verdicts", "[compare]") {
  // 20 % longer, of which 1 s of the 2 s is lost time.
  const Verdict partial = compare_intrinsic(row("A", 10.0, 0.0, 0.0, 0.1), row("B", 12.0, 100.0 / 12.0, 8.0, 8.6));
  CHECK(partial.intrinsic_differs);
  CHECK(partial.interference_share == Approx(0.5).margin(1e-9));
  CHECK(partial.text.find("interference explains about 50 %") != std::string::npos);
  const Verdict faster = compare_intrinsic(row("A", 10.0, 0.0, 0.0, 0.1), row("B", 9.0, 0.0, 0.0, 0.1));
  CHECK(faster.text.starts_with("B is 10.0 % (±0.1) faster than A"));
  const Verdict same = compare_intrinsic(row("A", 10.0, 1.0, 0.0, 2.0), row("B", 10.05, 1.0, 0.0, 2.0));
  CHECK(same.text.starts_with("B and A agree"));
  // 2 % intrinsic change, 0.05 % statistical uncertainty: within the default
  // run-to-run tolerance the 12 % longer run is interference, without it not.
  const RunRow clean = row("A", 10.0, 0.0, 0.0, 0.05);
  const RunRow noisy = row("B", 11.2, 100.0 * (1.0 - 10.2 / 11.2), 8.9, 8.95);
  const Verdict tolerated = compare_intrinsic(clean, noisy);
  CHECK_FALSE(tolerated.intrinsic_differs);
  CHECK(tolerated.text.ends_with("intrinsic times agree within ±5.0 %"));
  const Verdict strict = compare_intrinsic(clean, noisy, 0.0);
  CHECK(strict.intrinsic_differs);
  CHECK(strict.text.starts_with("B is 2.0 % (±0.0) slower than A intrinsically; interference explains about 83 %"));
  RunRow without = row("B", 10.0, 0.0, 0.0, 0.0);
  without.estimate_possible = false;
  const Verdict none = compare_intrinsic(row("A", 10.0, 0.0, 0.0, 0.1), without);
  CHECK_FALSE(none.available);
  CHECK(none.text == "no verdict: B has no interference estimate");
}

TEST_CASE("compare: groups, node speed, environment and predictions of synthetic runs", "[compare]") {
  SyntheticSpec reference_spec;
  reference_spec.groups = {SyntheticGroup{1e6, 0.010, 120}, SyntheticGroup{3e6, 0.030, 120}};
  SyntheticSpec slower_spec = reference_spec;
  slower_spec.groups = {SyntheticGroup{1e6, 0.012, 120}, SyntheticGroup{3e6, 0.030, 120}};
  AnalysedRun reference = analysed(reference_spec);
  AnalysedRun slower = analysed(slower_spec);
  REQUIRE(reference.analysis.estimate_possible);
  reference.run.environment.nodes = {NodeEnvironment{"node0", {}}, NodeEnvironment{"node1", {}}};
  slower.run.environment.nodes = reference.run.environment.nodes;
  slower.run.environment.nodes[1].facts[5] = "performance";  // governor on one node
  slower.run.environment.variables = {{0, "OMP_NUM_THREADS", "4"}, {1, "OMP_NUM_THREADS", "4"}};

  const Comparison comparison =
      compare_runs({{"ref", &reference.run, &reference.analysis}, {"slow", &slower.run, &slower.analysis}});
  REQUIRE(comparison.runs.size() == 2);
  CHECK(comparison.runs[1].name == "slow");
  // Groups: the 3e6 group (largest time) first, unchanged; the 1e6 group 20 % slower.
  REQUIRE(comparison.groups.size() == 2);
  CHECK(comparison.groups[0].matched_by == "signature");
  CHECK(*comparison.groups[0].change_percent[1] == Approx(0.0).margin(0.5));
  CHECK(*comparison.groups[1].change_percent[1] == Approx(20.0).margin(0.5));
  // Node speed: both nodes of the slower run need more time per work unit.
  CHECK(comparison.node_drift_unavailable.empty());
  REQUIRE(comparison.nodes.size() == 2);
  for (const NodeDrift& node : comparison.nodes) CHECK(*node.change_percent[1] > 3.0);
  // Environment: the governor of node1 and the new variable, nothing else.
  // The governor is compared per node because the slower run's nodes disagree.
  REQUIRE(comparison.environment.size() == 2);
  CHECK(comparison.environment[0].field == "governor@node1");
  CHECK(comparison.environment[0].values == std::vector<std::string>{"", "performance"});
  CHECK(comparison.environment[1].field == "variable OMP_NUM_THREADS");
  CHECK(comparison.environment[1].values == std::vector<std::string>{"(absent)", "4"});
  CHECK(comparison.predictions.empty());
  CHECK(comparison.predictions_note == "all runs have the same number of processes");
  CHECK(comparison.verdicts.at(0).intrinsic_differs);
  CHECK(comparison.verdicts.at(0).intrinsic_change_percent > 3.0);

  const std::string text = render_compare_text(comparison);
  CHECK(text.find("*performance") != std::string::npos);
  CHECK(text.find("Verdict: slow is ") != std::string::npos);
  // The page's view (drawn by tremor-plot; test/ux/check_html_view.py checks the drawing).
  const nlohmann::json view = compare_view(comparison);
  CHECK(view_highlights(view, "performance"));
  CHECK_FALSE(view_highlights(view, "(absent)"));  // the reference's own value is not marked
  CHECK(view["marker"] == std::string(kCompareHtmlMarker));
  const nlohmann::json json = compare_json(comparison);
  CHECK(json["verdicts"][0]["text"] == comparison.verdicts.at(0).text);
  CHECK(comparison.groups[0].label.starts_with("#"));

  // Three runs: one verdict per later run, each against the reference.
  const Comparison three = compare_runs({{"ref", &reference.run, &reference.analysis},
                                         {"slow", &slower.run, &slower.analysis},
                                         {"again", &reference.run, &reference.analysis}});
  REQUIRE(three.verdicts.size() == 2);
  CHECK(three.verdicts[0].compared == "slow");
  CHECK(three.verdicts[1].compared == "again");
  CHECK_FALSE(three.verdicts[1].intrinsic_differs);
  CHECK(compare_json(three)["verdicts"].size() == 2);
  CHECK(json["groups"].size() == 2);
}

TEST_CASE("compare: a smaller run's predictions are checked against a larger run", "[compare]") {
  // The smaller run: 200 segments of 10 ms x (1 + {-2,-1,0,1,2} x 1e-3),
  // 2 s. With twice the ranks a segment takes the largest of more such
  // values: the larger run lasts between 2 s and 2.004 s (every segment at
  // +0.2 %). The 4-process run planted here takes the middle, 2.002 s
  // (segments of 10.01 ms): every prediction must hold it. A third takes
  // 3 s (15 ms segments), 50 % beyond what any prediction may say.
  SyntheticSpec small_spec;
  small_spec.world_size = 2;
  small_spec.detail_ranks = 2;
  small_spec.groups = {SyntheticGroup{1e6, 0.010, 200}};
  SyntheticSpec large_spec = small_spec;
  large_spec.world_size = 4;
  large_spec.detail_ranks = 4;
  large_spec.groups = {SyntheticGroup{1e6, 0.01001, 200}};
  SyntheticSpec slower_spec = large_spec;
  slower_spec.groups = {SyntheticGroup{1e6, 0.015, 200}};
  constexpr double kSmallS = 2.0;
  constexpr double kActualS = 2.002;
  constexpr double kSlowerS = 3.0;
  AnalysedRun small = analysed(small_spec);
  AnalysedRun large = analysed(large_spec);
  AnalysedRun slower = analysed(slower_spec);
  REQUIRE_FALSE(small.analysis.predictions.empty());
  const Comparison comparison = compare_runs({{"small", &small.run, &small.analysis},
                                              {"large", &large.run, &large.analysis},
                                              {"slower", &slower.run, &slower.analysis}});
  REQUIRE_FALSE(comparison.predictions.empty());
  std::size_t checked_large = 0, checked_slower = 0;
  for (const PredictionCheck& check : comparison.predictions) {
    INFO(check.method << " to " << check.to_run << ": median " << check.median_s << " s, PI [" << check.pi_low_s << ", "
                      << check.pi_high_s << "], CI [" << check.ci_low_s << ", " << check.ci_high_s << "]");
    CHECK(check.from_run == "small");
    CHECK(check.processes == Approx(4.0));
    CHECK(check.pi_low_s <= check.ci_low_s);
    CHECK(check.ci_low_s <= check.median_s);
    CHECK(check.median_s <= check.ci_high_s);
    CHECK(check.ci_high_s <= check.pi_high_s);
    // Within 1 % of the smaller run's 2 s (the maxima grow by at most 0.2 %).
    CHECK(check.median_s == Approx(kSmallS).epsilon(0.01));
    if (check.to_run == "large") {
      ++checked_large;
      CHECK(check.actual_s == Approx(kActualS).epsilon(1e-12));
      CHECK(check.inside);
    } else {
      ++checked_slower;
      CHECK(check.to_run == "slower");
      CHECK(check.actual_s == Approx(kSlowerS).epsilon(1e-12));
      CHECK_FALSE(check.inside);
      CHECK_FALSE(check.inside_ci);
    }
  }
  CHECK(checked_large == checked_slower);
  // One size predicted: one row of the smaller run's headline method per larger run.
  CHECK(std::count_if(comparison.predictions.begin(), comparison.predictions.end(),
                      [](const PredictionCheck& check) { return check.headline; }) == 2);
  CHECK(comparison.predictions_note.find("small has no prediction") == std::string::npos);
  CHECK_THROWS(compare_runs({{"small", &small.run, &small.analysis}}));
}

TEST_CASE("compare: runs of another program get a warning and no intrinsic verdict", "[compare]") {
  SyntheticSpec spec;
  spec.groups = {SyntheticGroup{1e6, 0.010, 120}, SyntheticGroup{3e6, 0.030, 120}};
  AnalysedRun reference = analysed(spec);
  AnalysedRun other = analysed(spec);
  reference.run.meta.command_line = "/home/me/bin/lulesh -s 30";
  other.run.meta.command_line = "./lulesh -s 40";  // the same program, other arguments: compared
  const ComparedRun first{"ref", &reference.run, &reference.analysis};
  CHECK(program_mismatch(first, {"other", &other.run, &other.analysis}).empty());
  Comparison comparison = compare_runs({first, {"other", &other.run, &other.analysis}});
  CHECK(comparison.warnings.empty());
  CHECK(comparison.verdicts.at(0).available);
  REQUIRE_FALSE(comparison.environment.empty());
  CHECK(comparison.environment[0].field == "command_line");

  other.run.meta.command_line = "/usr/bin/amg -n 30";
  comparison = compare_runs({first, {"other", &other.run, &other.analysis}});
  REQUIRE(comparison.warnings.size() == 1);
  CHECK(comparison.warnings[0] == "other is a run of another program than ref (amg, not lulesh)");
  CHECK_FALSE(comparison.verdicts.at(0).available);
  CHECK(comparison.verdicts.at(0).text == "no verdict: " + comparison.warnings[0]);
  CHECK(render_compare_text(comparison).starts_with("Warning: other is a run of another program"));
  CHECK(compare_json(comparison)["warnings"][0] == comparison.warnings[0]);
  CHECK(view_has_paragraph(compare_view(comparison), "warning", "Warning: other is a run"));

  // Same name, same process count, but no group with a signature of the reference's.
  other.run.meta.command_line = reference.run.meta.command_line;
  for (GroupResult& group : other.analysis.groups) group.signature ^= 0x5555;
  comparison = compare_runs({first, {"other", &other.run, &other.analysis}});
  REQUIRE(comparison.warnings.size() == 1);
  CHECK(comparison.warnings[0].find("shares no group signature") != std::string::npos);
  CHECK_FALSE(comparison.verdicts.at(0).available);
}

TEST_CASE("compare: the page's view carries names and command lines as they are, for the renderer to escape",
          "[compare]") {
  SyntheticSpec spec;
  spec.groups = {SyntheticGroup{1e6, 0.010, 120}};
  AnalysedRun reference = analysed(spec);
  AnalysedRun other = analysed(spec);
  reference.run.meta.command_line = "./app --title '<b>x</b>'";
  other.run.meta.command_line = "./app --title \"<script>alert(1)</script>\" & more";
  const Comparison comparison = compare_runs(
      {{"<i>ref</i>", &reference.run, &reference.analysis}, {"o&o", &other.run, &other.analysis}});
  REQUIRE_FALSE(comparison.environment.empty());  // the command lines differ: they are shown
  // Text, never markup: a view that escaped here would be escaped twice by tremor-plot
  // (test/ux/check_html_view.py plants markup in a view and checks the page).
  const std::string view = compare_view(comparison).dump();
  for (const char* raw : {"<script>alert(1)</script>", "<b>x</b>", "<i>ref</i>", "o&o", "& more"}) {
    INFO(raw);
    CHECK(view.find(raw) != std::string::npos);
  }
  CHECK(view.find("&lt;") == std::string::npos);
  CHECK(view.find("&amp;") == std::string::npos);
}
