// analyze_run on synthetic runs with planted interference: exact interfered
// segments, percentages, classes, stragglers, fallbacks and no-estimate cases.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>

#include "synthetic_run.hpp"
#include "test_helpers.hpp"
#include "tremor/analysis/analysis.hpp"
#include "tremor/analysis/report.hpp"

using namespace tremor;
using namespace tremor::analysis;
using tremor::test::PlantedDelay;
using tremor::test::SyntheticGroup;
using tremor::test::SyntheticSpec;
using tremor::test::quick_parameters;

namespace {

// Independent reference of docs/statistics.md#mad-rule on one group (sort-based).
struct Reference {
  double threshold = 0.0;
  std::vector<std::size_t> interfered;
  double impact = 0.0;
};
double sorted_median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}
Reference reference_mad(const RunData& run, const std::vector<std::size_t>& members, double factor) {
  std::vector<double> durations;
  for (const std::size_t s : members) durations.push_back(run.segments.duration_s[s]);
  const double med = sorted_median(durations);
  std::vector<double> deviations;
  for (const double d : durations) deviations.push_back(std::fabs(d - med));
  Reference ref;
  ref.threshold = med + factor * sorted_median(deviations);
  for (const std::size_t s : members) {
    if (run.segments.duration_s[s] > ref.threshold) {
      ref.interfered.push_back(s);
      ref.impact += run.segments.duration_s[s] - ref.threshold;
    }
  }
  return ref;
}

std::vector<std::size_t> members_of(const SyntheticSpec& spec, std::size_t group) {
  const auto group_of = tremor::test::synthetic_group_of(spec);
  std::vector<std::size_t> members;
  for (std::size_t s = 0; s < group_of.size(); ++s) {
    if (group_of[s] == group) members.push_back(s);
  }
  return members;
}

// Two groups of 100 segments (10 ms and 25 ms); delays planted in both.
SyntheticSpec planted_spec(double extra_s) {
  SyntheticSpec spec;
  spec.groups = {SyntheticGroup{1e6, 0.010, 100}, SyntheticGroup{5e6, 0.025, 100}};
  spec.delays = {{10, extra_s, 3}, {51, extra_s, 3}, {120, 3 * extra_s, 1}};
  return spec;
}

}  // namespace

TEST_CASE("planted delays are found exactly, with percent, class and p(high)", "[analysis]") {
  struct Case {
    double extra_s;
    estimators::InterferenceClass expected;
  };
  const Case cases[] = {{0.005, estimators::InterferenceClass::low},
                        {0.080, estimators::InterferenceClass::medium},
                        {0.250, estimators::InterferenceClass::high}};
  for (const Case& c : cases) {
    const SyntheticSpec spec = planted_spec(c.extra_s);
    const RunData run = tremor::test::synthetic_run(spec);
    const RunAnalysis result = analyze_run(run, quick_parameters(200));
    REQUIRE(result.estimate_possible);
    REQUIRE(result.usable_groups == 2);
    CHECK_FALSE(result.signature_fallback);

    const Reference a = reference_mad(run, members_of(spec, 0), 4.0);
    const Reference b = reference_mad(run, members_of(spec, 1), 4.0);
    std::vector<std::size_t> expected = a.interfered;
    expected.insert(expected.end(), b.interfered.begin(), b.interfered.end());
    std::sort(expected.begin(), expected.end());
    CHECK(expected == std::vector<std::size_t>{10, 51, 120});
    CHECK(result.interfered_segments == expected);

    // The paper's figure, kept beside the headline: excess over median + 4 MAD.
    const double percent = 100.0 * (a.impact + b.impact) / run.meta.run_time_s;
    CHECK(result.paper_mad4_percent == Approx(percent).epsilon(1e-12));
    CHECK(result.segment_mad4_impact_s[120] == Approx(run.segments.duration_s[120] - a.threshold));
    // The headline is the primary estimate: each planted delay in full (the
    // clean segments sit within 0.2 % of the intrinsic duration), closer to
    // the truth than the paper's figure, which loses 4 MAD per delay.
    const double truth = 100.0 * 5.0 * c.extra_s / run.meta.run_time_s;  // extra, extra and 3 x extra
    CHECK(result.interference_percent == result.primary.lost_percent);
    CHECK(result.primary.lost_percent == Approx(truth).epsilon(0.01));
    CHECK(std::fabs(result.primary.lost_percent - truth) < std::fabs(percent - truth));
    CHECK(result.primary.lost_percent_low <= result.primary.lost_percent);
    CHECK(result.primary.lost_percent_high >= result.primary.lost_percent);
    CHECK(result.primary.intrinsic_run_time_s == Approx(run.meta.run_time_s * (1.0 - result.primary.lost_percent / 100.0)));
    CHECK(result.interference_class == c.expected);
    const double p_high = 1.0 / (1.0 + std::exp(-0.35 * (result.primary.lost_percent - 11.25)));
    CHECK(result.probability_high == Approx(p_high).epsilon(1e-12));
    CHECK(result.segment_class[10] == SegmentClass::interfered);
    CHECK(result.segment_class[11] == SegmentClass::normal);
    CHECK(result.segment_impact_s[120] == Approx(3.0 * c.extra_s).epsilon(0.01));
    CHECK(result.segment_impact_s[11] < 1e-4 * c.extra_s);
  }
}

TEST_CASE("method mad4 (--method mad4) makes the paper's figure the headline", "[analysis]") {
  const SyntheticSpec spec = planted_spec(0.08);
  const RunData run = tremor::test::synthetic_run(spec);
  AnalysisParameters parameters = quick_parameters(200);
  parameters.method = "mad4";
  const RunAnalysis mad4 = analyze_run(run, parameters);
  const RunAnalysis primary = analyze_run(run, quick_parameters(200));
  CHECK(mad4.interference_percent == mad4.paper_mad4_percent);
  CHECK(mad4.paper_mad4_percent == primary.paper_mad4_percent);
  CHECK(mad4.primary.lost_percent == primary.primary.lost_percent);
  CHECK(mad4.probability_high == Approx(1.0 / (1.0 + std::exp(-0.35 * (mad4.paper_mad4_percent - 11.25)))));
  CHECK(mad4.segment_impact_s == mad4.segment_mad4_impact_s);
  CHECK(primary.segment_impact_s == primary.primary.segment_lost_s);
  CHECK(mad4.interfered_segments == std::vector<std::size_t>{10, 51, 120});
  const auto json = report_json(run, mad4, "x.h5");
  CHECK(json["method"] == "mad4");
  CHECK(json["interference_percent"] == json["paper_mad4_percent"]);
}

TEST_CASE("most segments of a group delayed: the primary estimate keeps its anchor", "[analysis]") {
  // One group of 60 segments, 70 % of them 2 ms late; a second group clean.
  SyntheticSpec spec;
  spec.groups = {SyntheticGroup{1e6, 0.010, 60}, SyntheticGroup{5e6, 0.025, 60}};
  const auto members = members_of(spec, 0);
  double planted = 0.0;
  for (std::size_t i = 0; i < members.size(); ++i) {
    if (i % 10 < 7) {
      spec.delays.push_back({members[i], 0.002, 1});
      planted += 0.002;
    }
  }
  const RunData run = tremor::test::synthetic_run(spec);
  const RunAnalysis result = analyze_run(run, quick_parameters(200));
  REQUIRE(result.estimate_possible);
  const double truth = 100.0 * planted / run.meta.run_time_s;
  CHECK(result.primary.lost_percent == Approx(truth).margin(0.5));
  CHECK(result.paper_mad4_percent < 0.5 * truth);  // median and MAD moved with the delays
}

TEST_CASE("delays inside the closing collective are measured by its least wait", "[analysis]") {
  // Half the segments 2 ms late, the delay spent inside the closing collective
  // by every rank (the collective's least wait over ranks).
  SyntheticSpec spec;
  spec.groups = {SyntheticGroup{1e6, 0.010, 100}};
  for (std::size_t s = 0; s < 100; s += 2) spec.delays.push_back({s, 0.002, 1});
  RunData run = tremor::test::synthetic_run(spec);
  for (std::size_t s = 0; s < 100; ++s) run.segments.late_wait_s[s] = (s % 2 == 0 ? 0.002 : 0.0) + 2e-6;
  const RunAnalysis measured = analyze_run(run, quick_parameters(200));
  REQUIRE(measured.estimate_possible);
  CHECK(measured.primary.evidence.boundary_excess_s == Approx(50 * 0.002).epsilon(0.02));
  const double truth = 100.0 * 50 * 0.002 / run.meta.run_time_s;
  CHECK(measured.primary.lost_percent == Approx(truth).margin(0.5));
  // The collective at its own latency throughout: nothing measured.
  for (double& wait : run.segments.late_wait_s) wait = 2e-6;
  CHECK(analyze_run(run, quick_parameters(200)).primary.evidence.boundary_excess_s < 1e-6);
}

TEST_CASE("90 % of the closing collectives late: their least wait is measured from the lowest segments",
          "[analysis]") {
  // The work varies a little, the durations far more: most segments were
  // delayed, and the collective's clean latency is read below its 8 % quantile.
  SyntheticSpec spec;
  spec.groups = {SyntheticGroup{1e6, 0.010, 400}};
  std::size_t delayed = 0;
  for (std::size_t s = 0; s < 400; ++s) {
    if (s % 10 != 0) {
      spec.delays.push_back({s, 0.002, 1});
      ++delayed;
    }
  }
  RunData run = tremor::test::synthetic_run(spec);
  for (std::size_t s = 0; s < 400; ++s) {
    run.segments.work[s] = 1e6 * (1.0 + 1e-3 * static_cast<double>(static_cast<int>(s % 5) - 2));
    run.segments.late_wait_s[s] = (s % 10 != 0 ? 0.002 : 0.0) + 2e-6 * (1.0 + 0.1 * static_cast<double>(s % 3));
  }
  const RunAnalysis measured = analyze_run(run, quick_parameters(200));
  REQUIRE(measured.estimate_possible);
  CHECK(measured.primary.most_segments_delayed);
  CHECK(measured.primary.evidence.boundary_excess_s == Approx(static_cast<double>(delayed) * 0.002).epsilon(0.02));
  const double truth = 100.0 * static_cast<double>(delayed) * 0.002 / run.meta.run_time_s;
  CHECK(measured.primary.lost_percent == Approx(truth).margin(1.0));
}

TEST_CASE("a node shared with another job: off-CPU time on every segment, charged when the run queue shows it",
          "[analysis]") {
  // Every rank off the CPU for 3 ms in every segment, which the durations
  // carry; segment 0 stands alone (its own signature, no usable group).
  SyntheticSpec spec;
  spec.groups = {SyntheticGroup{1e6, 0.010, 200}};
  for (std::size_t s = 0; s < 200; ++s) spec.delays.push_back({s, 0.003, 1});
  RunData run = tremor::test::synthetic_run(spec);
  run.meta.schema_version = 3;
  run.meta.counter_source = tremor::CounterKind::thread_cputime;
  run.segments.signature[0] = 0x5010;
  BinTable& bins = run.global_bins[tremor::index(Quantized::off_cpu_time)];
  bins = {Bin{0.0, 1, 0.0, 0.0, 0}, Bin{0.003, 1, 0.003, 0.003, 1}};
  for (auto& cell : run.detail.global_index[tremor::index(Quantized::off_cpu_time)]) cell = 1;
  const double truth = 100.0 * 200 * 0.003 / run.meta.run_time_s;
  // Without the run queue (older files, other kernels) a level that never
  // moves reads as the application's own: only the durations speak.
  const RunAnalysis unmeasured = analyze_run(run, quick_parameters(200));
  REQUIRE(unmeasured.estimate_possible);
  CHECK(unmeasured.primary.off_cpu_measured);
  CHECK(unmeasured.primary.waiting_ranks == 0);
  CHECK(unmeasured.primary.lost_percent < 0.5 * truth);
  for (RankInfo& rank : run.ranks) rank.run_queue_delay_s = 0.5;  // of 0.6 s off the CPU
  const RunAnalysis waiting = analyze_run(run, quick_parameters(200));
  CHECK(waiting.primary.waiting_ranks == 4);
  CHECK(waiting.primary.lost_percent == Approx(truth).margin(1.0));
  CHECK(waiting.primary.segment_lost_s[0] == Approx(0.003).epsilon(0.01));
  // The report says what was measured: 4 ranks waited 0.5 s each.
  std::string text = render_text_report(run, waiting, "", ReportDetail::full_report);  // the Measured: line
  for (std::size_t wrap = text.find("\n  "); wrap != std::string::npos; wrap = text.find("\n  ", wrap))
    text.replace(wrap, 3, " ");  // the report wraps long lines
  CHECK(text.find("4 of 4 detail ranks waited 2.000 s in all for a CPU (run queue)") != std::string::npos);
  CHECK(render_text_report(run, unmeasured, "", ReportDetail::full_report).find("for a CPU") == std::string::npos);
  // Two ranks per node on nodes of one CPU: the ranks take turns, and their
  // run-queue delay is the job's own.
  run.environment.nodes.resize(2);
  const auto cpu_count = static_cast<std::size_t>(
      std::find(tremor::kNodeFacts.begin(), tremor::kNodeFacts.end(), "cpu_count") - tremor::kNodeFacts.begin());
  for (auto& node : run.environment.nodes) node.facts[cpu_count] = "1";
  CHECK(analyze_run(run, quick_parameters(200)).primary.waiting_ranks == 0);
  for (auto& node : run.environment.nodes) node.facts[cpu_count] = "2";
  CHECK(analyze_run(run, quick_parameters(200)).primary.waiting_ranks == 4);
  // A rank that sleeps on its own (little run-queue delay) keeps its level.
  for (RankInfo& rank : run.ranks) rank.run_queue_delay_s = 0.05;
  CHECK(analyze_run(run, quick_parameters(200)).primary.waiting_ranks == 0);
}

TEST_CASE("each group's first segment is warm-up: a slow first pass is not charged, a delay there if measured",
          "[analysis]") {
  SyntheticSpec spec;
  spec.groups = {SyntheticGroup{1e6, 0.010, 100}, SyntheticGroup{2e6, 0.020, 100}};
  spec.delays = {{0, 0.004, 1}, {1, 0.006, 1}};  // the first segment of each group: file creation, first touch
  const RunData run = tremor::test::synthetic_run(spec);
  const RunAnalysis result = analyze_run(run, quick_parameters(200));
  REQUIRE(result.estimate_possible);
  CHECK(result.primary.warm_up_segments == 2);
  CHECK(result.primary.segment_lost_s[0] == 0.0);
  CHECK(result.primary.segment_lost_s[1] == 0.0);
  CHECK(result.primary.lost_percent < 0.1);
  CHECK(result.primary.segment_primary_group[0] >= 0);  // still in its group for the diagnosis
  // A delay the collective's least wait measures is charged there all the same.
  RunData measured = run;
  measured.segments.late_wait_s[0] = 0.004 + 1e-6;
  CHECK(analyze_run(measured, quick_parameters(200)).primary.segment_lost_s[0] == Approx(0.004).epsilon(0.02));
  // The same delay later in the group is interference.
  spec.delays = {{40, 0.004, 1}};
  CHECK(analyze_run(tremor::test::synthetic_run(spec), quick_parameters(200)).primary.segment_lost_s[40] > 0.003);
}

TEST_CASE("a small group delayed on every segment reads its collective's latency from the other groups",
          "[analysis]") {
  // Two groups closing with the same collective: 90 % of the large one's and
  // all of the small one's segments 2 ms late inside it. The small group has
  // no clean latency of its own.
  SyntheticSpec spec;
  spec.groups = {SyntheticGroup{1e6, 0.010, 300}, SyntheticGroup{3e6, 0.030, 12}};
  RunData run = tremor::test::synthetic_run(spec);
  const std::vector<std::size_t> group_of = tremor::test::synthetic_group_of(spec);
  double planted = 0.0;
  std::size_t seen_large = 0;
  for (std::size_t s = 0; s < run.segments.size(); ++s) {
    const bool late = group_of[s] == 1 || seen_large++ % 10 != 0;
    run.segments.work[s] = (group_of[s] == 0 ? 1e6 : 3e6) * (1.0 + 1e-3 * static_cast<double>(static_cast<int>(s % 5) - 2));
    run.segments.late_wait_s[s] = (late ? 0.002 : 0.0) + 2e-6 * (1.0 + 0.1 * static_cast<double>(s % 3));
    run.segments.closing_call[s] = 1;
    if (late) {
      run.segments.duration_s[s] += 0.002;
      run.meta.run_time_s += 0.002;
      planted += 0.002;
    }
  }
  run.segments.duration_upper_s = run.segments.duration_s;
  const RunAnalysis result = analyze_run(run, quick_parameters(200));
  REQUIRE(result.estimate_possible);
  CHECK(result.primary.most_segments_delayed);
  CHECK(result.primary.evidence.boundary_excess_s == Approx(planted).epsilon(0.03));
}

TEST_CASE("a slow iteration after every checkpoint is intrinsic, not interference", "[analysis]") {
  // Every 10th segment writes a checkpoint (its own signature); the segment
  // after it is 30 % slower in every run, at the same place in the cycle.
  SyntheticSpec spec;
  spec.groups = {SyntheticGroup{1e6, 0.010, 300}};
  const RunData base = tremor::test::synthetic_run(spec);
  RunData run = base;
  double recurring = 0.0;
  for (std::size_t s = 0; s < run.segments.size(); ++s) {
    if (s % 10 == 0) run.segments.signature[s] = 0x5eed;
    if (s % 10 == 1) {
      run.segments.duration_s[s] += 0.003;
      recurring += 0.003;
    }
  }
  run.meta.run_time_s += recurring;
  const RunAnalysis result = analyze_run(run, quick_parameters(200));
  REQUIRE(result.estimate_possible);
  CHECK(result.primary.lost_percent < 0.2);
  CHECK(result.primary.subgroups >= 2);
  // The paper's rule, blind to the cycle, counts the recurring slowdown.
  CHECK(result.paper_mad4_percent > 2.0);  // of the 2.9 % the recurring slowdown adds
}

TEST_CASE("with the CPU-time counter a segment that did more work is not delayed, one off the CPU is",
          "[analysis]") {
  // 10 ms segments whose CPU time varies as an application's own steps do:
  // most at 10 ms, one in five 0.3-0.9 ms heavier, and as much longer.
  SyntheticSpec spec;
  spec.groups = {SyntheticGroup{1e7, 0.010, 300}};
  spec.counter_source = tremor::CounterKind::thread_cputime;
  RunData run = tremor::test::synthetic_run(spec);
  run.meta.schema_version = 3;
  run.meta.counter_unit = "ns";
  double heavier = 0.0;
  for (std::size_t s = 0; s < run.segments.size(); ++s) {
    const double extra_s = s % 5 == 2 ? 0.0003 * static_cast<double>(1 + s % 3) : 0.0;
    run.segments.work[s] += 1e9 * extra_s;
    run.segments.duration_s[s] += extra_s;
    heavier += extra_s;
  }
  run.meta.run_time_s += heavier;
  const RunAnalysis own = analyze_run(run, quick_parameters(200));
  REQUIRE(own.estimate_possible);
  CHECK(own.primary.lost_percent < 0.3);  // of the 1.2 % the heavier steps add
  // The same run with 2 ms more on every 20th segment, its work unchanged: delayed.
  for (std::size_t s = 7; s < run.segments.size(); s += 20) run.segments.duration_s[s] += 0.002;
  run.meta.run_time_s += 15 * 0.002;
  const RunAnalysis delayed = analyze_run(run, quick_parameters(200));
  CHECK(delayed.primary.lost_percent == Approx(100.0 * 15 * 0.002 / run.meta.run_time_s).margin(0.3));
}

TEST_CASE("stragglers: the late rank and its node carry the impact", "[analysis]") {
  const SyntheticSpec spec = planted_spec(0.08);
  const RunData run = tremor::test::synthetic_run(spec);
  const RunAnalysis result = analyze_run(run, quick_parameters(200));
  REQUIRE(result.stragglers.size() == 2);
  // Rank 1 was late at one segment delayed by 3x, rank 3 at two delayed by 1x.
  const double rank1 = result.segment_impact_s[120];
  const double rank3 = result.segment_impact_s[10] + result.segment_impact_s[51];
  CHECK(result.stragglers[0].rank == 1);
  CHECK(result.stragglers[0].segments == 1);
  CHECK(result.stragglers[0].impact_s == Approx(rank1));
  CHECK(result.stragglers[1].rank == 3);
  CHECK(result.stragglers[1].segments == 2);
  CHECK(result.stragglers[1].impact_s == Approx(rank3));
  CHECK(result.stragglers[0].impact_s >= result.stragglers[1].impact_s);
  // Rank 1 lives on node 0, rank 3 on node 1.
  for (const RankImpact& straggler : result.stragglers) {
    CHECK(straggler.node_id == straggler.rank / 2);
    CHECK(straggler.hostname == "node" + std::to_string(straggler.rank / 2));
  }
  REQUIRE(result.nodes.size() == 2);
  CHECK(result.nodes[0].impact_s + result.nodes[1].impact_s == Approx(rank1 + rank3));
}

TEST_CASE("small groups are unused and reduce coverage", "[analysis]") {
  SyntheticSpec spec;
  spec.groups = {SyntheticGroup{1e6, 0.010, 60}, SyntheticGroup{9e6, 0.5, 3}};
  const RunData run = tremor::test::synthetic_run(spec);
  const RunAnalysis result = analyze_run(run, quick_parameters(200));
  REQUIRE(result.estimate_possible);
  CHECK(result.usable_groups == 1);
  CHECK(result.groups.size() == 2);
  const auto small = members_of(spec, 1);
  for (const std::size_t s : small) CHECK(result.segment_class[s] == SegmentClass::unused);
  // 1.5 s of 2.1 s lies in the unused group: the coverage warning is given.
  const bool warned = std::any_of(result.warnings.begin(), result.warnings.end(),
                                  [](const Warning& w) { return w.code == "low_coverage"; });
  CHECK(warned);
  CHECK(result.usable_time_fraction == Approx(0.6 / run.meta.run_time_s).epsilon(1e-9));
}

TEST_CASE("differing exact signatures fall back to median detail-rank features", "[analysis]") {
  SyntheticSpec spec = planted_spec(0.08);
  spec.unique_exact_signatures = true;
  const RunData run = tremor::test::synthetic_run(spec);
  const RunAnalysis result = analyze_run(run, quick_parameters(200));
  REQUIRE(result.estimate_possible);
  CHECK(result.signature_fallback);
  CHECK(result.usable_groups == 2);
  CHECK(result.interfered_segments == std::vector<std::size_t>{10, 51, 120});
  const bool warned = std::any_of(result.warnings.begin(), result.warnings.end(),
                                  [](const Warning& w) { return w.code == "signature_fallback"; });
  CHECK(warned);
}

TEST_CASE("runs without an estimate still give a report with the reason", "[analysis]") {
  SECTION("a single segment: no global collective") {
    SyntheticSpec spec;
    spec.groups = {SyntheticGroup{1e6, 2.0, 1}};
    const RunData run = tremor::test::synthetic_run(spec);
    const RunAnalysis result = analyze_run(run, quick_parameters(200));
    CHECK_FALSE(result.estimate_possible);
    CHECK_THAT(result.no_estimate_reason, Catch::Contains("no global collective"));
    const auto json = report_json(run, result, "x.h5");
    CHECK(json["class"].is_null());
    CHECK(json["interference_percent"].is_null());
    CHECK(json["estimate_possible"] == false);
    CHECK_THAT(render_text_report(run, result, "x.h5"), Catch::Contains("No interference estimate possible"));
  }
  SECTION("too few segments") {
    SyntheticSpec spec;
    spec.groups = {SyntheticGroup{1e6, 0.1, 3}};
    const RunAnalysis result = analyze_run(tremor::test::synthetic_run(spec), quick_parameters(200));
    CHECK_FALSE(result.estimate_possible);
    CHECK_THAT(result.no_estimate_reason, Catch::Contains("too few segments (3)"));
  }
  SECTION("no usable group") {
    SyntheticSpec spec;
    spec.groups = {SyntheticGroup{1e6, 0.1, 4}, SyntheticGroup{1e8, 0.1, 4}};
    const RunAnalysis result = analyze_run(tremor::test::synthetic_run(spec), quick_parameters(200));
    CHECK_FALSE(result.estimate_possible);
    CHECK_THAT(result.no_estimate_reason, Catch::Contains("no group of at least 5"));
    CHECK(result.predictions.empty());
  }
  SECTION("an empty run") {
    RunData run;
    const RunAnalysis result = analyze_run(run, quick_parameters(200));
    CHECK_FALSE(result.estimate_possible);
    CHECK_THAT(result.no_estimate_reason, Catch::Contains("no segment"));
    CHECK_FALSE(render_text_report(run, result, "").empty());
  }
}

TEST_CASE("warnings: few segments, fast boundaries, CPU-time counter", "[analysis]") {
  SyntheticSpec spec;
  spec.groups = {SyntheticGroup{1e6, 0.001, 20}};
  spec.counter_source = tremor::CounterKind::thread_cputime;
  const RunAnalysis result = analyze_run(tremor::test::synthetic_run(spec), quick_parameters(200));
  std::vector<std::string> codes;
  for (const Warning& w : result.warnings) codes.push_back(w.code);
  CHECK(std::count(codes.begin(), codes.end(), "few_segments") == 1);
  CHECK(std::count(codes.begin(), codes.end(), "boundary_rate") == 1);  // 1000 Hz
  CHECK(std::count(codes.begin(), codes.end(), "counter_fallback") == 1);
  const auto caveat = std::find_if(result.warnings.begin(), result.warnings.end(),
                                   [](const Warning& w) { return w.code == "counter_fallback"; });
  CHECK_THAT(caveat->message, Catch::Contains("memory-bandwidth"));
  CHECK_THAT(caveat->message, !Catch::Contains("context-switch records"));

  // The clock read at most every ms, records between: short steal is named.
  RunData assisted = tremor::test::synthetic_run(spec);
  assisted.meta.counter_events = {"CLOCK_THREAD_CPUTIME_ID", "PERF_RECORD_SWITCH"};
  const RunAnalysis with_records = analyze_run(assisted, quick_parameters(200));
  const auto noted = std::find_if(with_records.warnings.begin(), with_records.warnings.end(),
                                  [](const Warning& w) { return w.code == "counter_fallback"; });
  REQUIRE(noted != with_records.warnings.end());
  CHECK_THAT(noted->message, Catch::Contains("context-switch records") && Catch::Contains("steal"));
}

TEST_CASE("predictions: every method and factor, ordered intervals", "[analysis]") {
  const SyntheticSpec spec = planted_spec(0.02);
  const RunData run = tremor::test::synthetic_run(spec);
  const RunAnalysis result = analyze_run(run, quick_parameters(200));
  // 4 ranks on 2 nodes, 2 per node: both per-rank variants apply.
  for (const std::string method : {"nonparametric", "pwm", "mom", "pwm-internode", "pwm-intranode"}) {
    std::vector<Prediction> rows;
    for (const Prediction& p : result.predictions) {
      if (p.method == method) rows.push_back(p);
    }
    INFO(method);
    REQUIRE(rows.size() == 3);
    for (std::size_t f = 0; f < rows.size(); ++f) {
      CHECK(rows[f].processes == Approx(4.0 * rows[f].factor));
      CHECK(rows[f].ci_low_s <= rows[f].median_s);
      CHECK(rows[f].median_s <= rows[f].ci_high_s);
      CHECK(rows[f].pi_low_s < rows[f].median_s);
      CHECK(rows[f].median_s < rows[f].pi_high_s);
      CHECK(rows[f].median_s > 0.0);
      if (f > 0) CHECK(rows[f].median_s >= rows[f - 1].median_s);
    }
  }
  // The non-parametric maximum cannot exceed every segment at its group maximum.
  double bound = run.meta.run_time_s;
  for (const GroupResult& group : result.groups) {
    double largest = 0.0;
    for (const std::size_t s : group.members) {
      largest = std::max(largest, run.segments.duration_upper_s[s]);
      bound -= run.segments.duration_upper_s[s];
    }
    bound += largest * static_cast<double>(group.members.size());
  }
  for (const Prediction& p : result.predictions) {
    if (p.method == "nonparametric") CHECK(p.ci_high_s <= bound * (1 + 1e-12));
  }
}

TEST_CASE("one isolated extreme among the maxima: the report says the GEV fit misses it", "[analysis]") {
  // 150 regular 20 ms segments and one 200 ms delay (a rare long sleep): PWM
  // breaks on the ~63 % of replicas that draw it, which take the fallback.
  SyntheticSpec spec;
  spec.groups = {SyntheticGroup{1e6, 0.020, 150}};
  // Smooth bounded-tail maxima (GEV k = 0.2 quantiles, SD ≈ 6 %), like Normal sleeps.
  for (int j = 0; j < 25; ++j) {
    const double f = (j + 0.5) / 25.0;
    spec.relative_pattern.push_back(0.06 * (1.0 - std::pow(-std::log(f), 0.2)) / 0.2);
  }
  spec.delays = {{70, 0.18, 1}};
  const RunAnalysis result = analyze_run(tremor::test::synthetic_run(spec), quick_parameters(200));
  const auto warned = [&](const std::string& method) {
    return std::any_of(result.warnings.begin(), result.warnings.end(), [&](const Warning& w) {
      return w.code == "fit_misses_extremes" &&
             std::any_of(w.cases.begin(), w.cases.end(), [&](const WarningCase& c) { return c.subject == method; });
    });
  };
  CHECK(warned("pwm"));
  CHECK_FALSE(warned("nonparametric"));
  for (const Prediction& p : result.predictions) {
    INFO(p.method << " ×" << p.factor);
    CHECK(std::isfinite(p.median_s));
    if (p.method == "pwm") CHECK(3 * p.replicas_failed > static_cast<std::size_t>(quick_parameters(200).replicas));
  }
  // The headline follows the data: PWM's fit of the whole sample misses the
  // extreme too, so the non-parametric method leads.
  REQUIRE(result.groups.size() == 1);
  CHECK_FALSE(result.groups.front().pwm.usable);
  CHECK(result.prediction_headline.method == "nonparametric");
  CHECK_THAT(result.prediction_headline.reason, Catch::Contains("for only 0 % of the assessed time"));
  // Without the delay the same group is regular: no warning.
  spec.delays.clear();
  const RunAnalysis regular = analyze_run(tremor::test::synthetic_run(spec), quick_parameters(200));
  CHECK(std::none_of(regular.warnings.begin(), regular.warnings.end(),
                     [](const Warning& w) { return w.code == "fit_misses_extremes"; }));
  CHECK(regular.prediction_headline.method == "pwm");
}

TEST_CASE("same seed, same report, another seed, other bootstrap draws", "[analysis]") {
  const RunData run = tremor::test::synthetic_run(planted_spec(0.08));
  AnalysisParameters parameters = quick_parameters(200);
  const std::string first = report_json(run, analyze_run(run, parameters), "f.h5").dump();
  const std::string second = report_json(run, analyze_run(run, parameters), "f.h5").dump();
  CHECK(first == second);
  parameters.seed += 1;
  const std::string other = report_json(run, analyze_run(run, parameters), "f.h5").dump();
  CHECK(first != other);
}

TEST_CASE("parameters come from the stored configuration, overrides win", "[analysis]") {
  std::vector<std::pair<std::string, std::string>> stored = {{"TREMOR_MAD_FACTOR", "3"},
                                                             {"TREMOR_SCALES", "2,16"},
                                                             {"TREMOR_SEED", "77"},
                                                             {"TREMOR_MIN_GROUP", "banana"},
                                                             {"TREMOR_UNKNOWN", "1"}};
  std::vector<std::string> messages;
  AnalysisParameters p = parameters_from_stored_configuration(stored, {}, &messages);
  CHECK(p.mad_factor == 3.0);
  CHECK(p.scales == std::vector<double>{2.0, 16.0});
  CHECK(p.seed == 77);
  CHECK(p.min_group == 5);
  REQUIRE(messages.size() == 1);
  CHECK_THAT(messages[0], Catch::Contains("TREMOR_MIN_GROUP"));
  ParameterOverrides overrides;
  overrides.mad_factor = 6.0;
  overrides.seed = 5;
  p = parameters_from_stored_configuration(stored, overrides);
  CHECK(p.mad_factor == 6.0);
  CHECK(p.seed == 5);
  CHECK(p.scales == std::vector<double>{2.0, 16.0});
}
