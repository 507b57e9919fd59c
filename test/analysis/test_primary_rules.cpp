// The primary estimate's rules that the model alone does not give
// (estimators/analysis/src/primary/rules.hpp, docs/statistics-primary.md "Rules").
#include <catch2/catch.hpp>
#include <vector>

#include "primary/rules.hpp"

using namespace tremor::analysis::detail;

TEST_CASE("run floor: what the charges miss goes where the ranks slept, up to each segment's duration", "[rules]") {
  // Known wrong: not taking the charges off (0.004 added), or no cap by the
  // segment's duration (0.003 added).
  SourceReading slept;
  slept.total_s = 0.004;
  slept.delay_s = {0.0, 1.0, 1.0};
  const std::vector<double> duration{0.010, 0.001, 0.010};
  std::vector<double> lost{0.001, 0.0, 0.0};
  std::vector<std::uint8_t> interfered(3, 0);
  CHECK(add_run_floor(slept, duration, lost, interfered) == Approx(0.0025));
  CHECK(lost[1] == Approx(0.001));
  CHECK(lost[2] == Approx(0.0015));
  CHECK(interfered == std::vector<std::uint8_t>{0, 1, 1});
  // Charges that already hold the floor: nothing added.
  slept.total_s = 0.001;
  CHECK(add_run_floor(slept, duration, lost, interfered) == 0.0);
}

TEST_CASE("deconvolution floor: the fit sees the rest, never below the first fit's intrinsic time", "[rules]") {
  // Known wrong: the plain rest x - m (0.006, 0.001), or no least share (0).
  CHECK(deconvolved_duration(0.010, 0.004, 0.008) == Approx(0.008));
  CHECK(deconvolved_duration(0.010, 0.001, 0.008) == Approx(0.009));
  CHECK(deconvolved_duration(0.005, 0.004, 0.008) == Approx(0.005));  // never above the duration
  CHECK(deconvolved_duration(0.010, 0.020, 0.0) == Approx(kLeastDeconvolvedShare * 0.010));
}

TEST_CASE("What split: the I/O stall, then the collective's wait, shrunk and within the lost time", "[rules]") {
  // Known wrong: not shrunk (0.002 of I/O), or the collective's wait not
  // bounded by what the I/O stall leaves (0.002).
  const std::vector<double> lost{0.002, 0.001};
  std::vector<float> io{0.002F, 0.0F};
  std::vector<float> collective{0.004F, 0.004F};
  split_what(lost, 0.5, io, collective);
  CHECK(io[0] == Approx(0.001));
  CHECK(collective[0] == Approx(0.001));
  CHECK(io[1] == 0.0F);
  CHECK(collective[1] == Approx(0.001));
}

TEST_CASE("measured-only interval: the measured delay less two level errors to it plus what is apart", "[rules]") {
  // Known wrong: leaving out the part reported apart (high 0.014), or a negative low end.
  const tremor::estimators::LostInterval interval = measured_only_interval(0.010, 0.005, 0.002);
  CHECK(interval.low == Approx(0.006));
  CHECK(interval.high == Approx(0.019));
  CHECK(measured_only_interval(0.001, 0.0, 0.002).low == 0.0);
}

TEST_CASE("interfered: more likely delayed than not, with a positive charge", "[rules]") {
  // Known wrong: the probability alone, or a strict threshold.
  CHECK(is_delayed(0.5, 0.001));
  CHECK_FALSE(is_delayed(0.49, 0.001));
  CHECK_FALSE(is_delayed(0.9, 0.0));
}
