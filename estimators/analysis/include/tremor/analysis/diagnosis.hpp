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

// Thresholds (docs/report.md#diagnosis, docs/statistics.md#where).
// A rank (node) is named slow when its charge exceeds an equal share of all
// charges by this much, % of the run: above the largest excess of clean runs
// (validation/where/calibration.csv, derived by validation/where/threshold.py).
inline constexpr double kMinNamedExcessPercent = 4.4;
inline constexpr double kMinImbalanceWork = 0.02;     // a rank with at least 2 % more work than the others' median
inline constexpr double kMinImbalancePercent = 1.0;   // that the others waited for at least 1 % of the run
inline constexpr std::size_t kWorkRateCells = 4096;   // cells sampled per group for its time per unit of work
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

// Median (lower middle) of `values` without the element at `skip`; NaN when
// nothing is left.
double median_without(std::span<const double> values, std::size_t skip);

// How the others' wait for the late rank of one segment divides (seconds).
// busy: each detail row's time outside MPI; need: the time its work needs
// at its group's time per unit of work (0 without a work counter). The wait
// is the late row's busy time beyond the others' median; its interference
// part is the late row's time beyond its need, less the others' median of
// that, and its imbalance part is the late row's extra need over the others'
// median, each clamped so that the two add to at most the wait.
struct WaitSplit {
  double wait = 0.0;
  double interference = 0.0;
  double imbalance = 0.0;
};
WaitSplit split_wait(std::span<const double> busy, std::span<const double> need, std::size_t late);

// Whether a charge is named: above an equal share (`weight` of the total,
// the rank's or node's part of the ranks) by more than kMinNamedExcessPercent
// of the run. Charges and total in seconds.
bool named_charge(double charge, double total, double weight, double run_time_s);

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
