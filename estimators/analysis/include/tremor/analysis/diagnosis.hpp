// Where, when and what (docs/report.md#diagnosis): which ranks and nodes the
// others waited for, the time windows in which segments ran slower than their
// intrinsic time, and which component (compute, MPI, file I/O) the run and the
// lost time went to. Pure: a function of the RunData and the primary estimate.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "tremor/analysis/run_analysis.hpp"
#include "tremor/run_data.hpp"

namespace tremor::analysis {

// Thresholds (docs/report.md#diagnosis).
inline constexpr double kMinNamedPercent = 1.0;        // excess over an equal share of the waiting
inline constexpr double kLoadedWorkShare = 0.5;        // extra work explains this share of the extra time
inline constexpr double kMinLoadedWorkExcess = 0.02;   // and is at least 2 %
inline constexpr std::size_t kMinEpisodeSegments = 5;  // shortest window, segments
inline constexpr double kMinEpisodeLostPercent = 1.0;  // least time lost in a window, % of run
inline constexpr double kEpisodeMinSlowdown = 0.1;     // mean normalised slowdown inside a window
inline constexpr std::size_t kMaxEpisodeIntervals = 256;
inline constexpr std::size_t kMaxEpisodeRanks = 8;
inline constexpr std::size_t kMaxSpeedBins = 400;

namespace diagnosis_math {

// Median (lower middle) of a sorted sample with one occurrence of `value`
// removed; NaN when nothing is left.
double median_excluding(std::span<const double> sorted, double value);

// "loaded" when extra work explains at least kLoadedWorkShare of the extra
// time (and is at least kMinLoadedWorkExcess), else "slow".
std::string rank_kind(double time_ratio, double work_ratio);

// Half-open interval [begin, end) of a series with its mean.
struct Interval {
  std::size_t begin = 0;
  std::size_t end = 0;
  double mean = 0.0;
};

// Change points of a series in [0, 1] (values outside are clamped): greedy
// binary segmentation under a Bernoulli (quasi-)likelihood, a split kept while
// it gains more than 2 log n, each part at least `min_length` long, at most
// `max_intervals` parts. Returns the parts in order, covering the series.
std::vector<Interval> bernoulli_segmentation(std::span<const double> series, std::size_t min_length,
                                             std::size_t max_intervals);

// The parts of bernoulli_segmentation of a normalised slowdown series with
// mean >= kEpisodeMinSlowdown and at least `min_length` values, adjacent ones merged.
std::vector<Interval> slow_windows(std::span<const double> series, std::size_t min_length);

}  // namespace diagnosis_math

// Needs analyze_run's primary estimate (segment_lost_s, segment_primary_group,
// segment_delay_probability, primary_intrinsic_s).
Diagnosis diagnose_run(const RunData& run, const RunAnalysis& analysis);

}  // namespace tremor::analysis
