// The analysis gives the same numbers, digit for digit, on 1 and on 4
// threads (TREMOR_ANALYSIS_THREADS): the interference interval's replicas and
// the predictions' per-group bootstraps run in parallel, every draw made in
// its serial order. 90 usable groups: more than one batch of groups per
// thread (estimators::parallel_in_order), and the replica plan gives them
// fewer distinct replicas than the run has. Fails for an implementation
// whose groups or replicas share one engine across threads (the draws then
// depend on which thread gets there first) or that adds the groups' replicas
// to the totals out of group order (the sums round differently).
#include <bit>
#include <catch2/catch.hpp>
#include <cstdint>

#include "synthetic_run.hpp"
#include "tremor/analysis/analysis.hpp"

using namespace tremor;
using namespace tremor::analysis;

namespace {

RunData many_groups_run() {
  test::SyntheticSpec spec;
  spec.world_size = 4;
  spec.ranks_per_node = 2;
  spec.detail_ranks = 4;
  spec.groups.clear();
  for (int g = 0; g < 90; ++g) spec.groups.push_back({1e6 * (1.0 + 0.5 * g), 0.002 * (1.0 + 0.5 * g), 24});
  spec.relative_pattern = {-0.011, 0.004, -0.002, 0.013, 0.0, -0.007, 0.009, 0.002, -0.004};
  for (std::size_t s = 3; s < 90 * 24; s += 37) spec.delays.push_back({s, 0.001 * static_cast<double>(s % 7 + 1), 1});
  return test::synthetic_run(spec);
}

std::uint64_t bits(double value) { return std::bit_cast<std::uint64_t>(value); }

}  // namespace

TEST_CASE("the analysis's interval and predictions are the same on 1 and on 4 threads", "[threads]") {
  const RunData run = many_groups_run();
  AnalysisParameters parameters;
  parameters.threads = 1;
  const RunAnalysis serial = analyze_run(run, parameters);
  parameters.threads = 4;
  const RunAnalysis parallel = analyze_run(run, parameters);
  REQUIRE(serial.predictions.size() >= 9);  // 3 factors x (nonparametric, pwm, mom), plus per-rank variants
  REQUIRE(serial.predictions.size() == parallel.predictions.size());
  CHECK(serial.predictions.front().group_replicas_min < 1000);  // the plan took fewer: replica choice exercised
  for (std::size_t i = 0; i < serial.predictions.size(); ++i) {
    const Prediction& a = serial.predictions[i];
    const Prediction& b = parallel.predictions[i];
    INFO(a.method << " at " << a.factor);
    CHECK(a.method == b.method);
    CHECK(bits(a.median_s) == bits(b.median_s));
    CHECK(bits(a.ci_low_s) == bits(b.ci_low_s));
    CHECK(bits(a.ci_high_s) == bits(b.ci_high_s));
    CHECK(bits(a.pi_low_s) == bits(b.pi_low_s));
    CHECK(bits(a.pi_high_s) == bits(b.pi_high_s));
    CHECK(bits(a.monte_carlo_error_s) == bits(b.monte_carlo_error_s));
    CHECK(a.replicas_failed == b.replicas_failed);
  }
  CHECK(serial.primary.lost_percent_low < serial.primary.lost_percent_high);
  CHECK(bits(serial.primary.lost_percent_low) == bits(parallel.primary.lost_percent_low));
  CHECK(bits(serial.primary.lost_percent_high) == bits(parallel.primary.lost_percent_high));
}
