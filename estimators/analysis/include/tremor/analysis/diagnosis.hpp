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

#include "tremor/run_data.hpp"

namespace tremor::analysis {

struct RunAnalysis;

// A rank (or node) the others waited for, named when its charge exceeds an
// equal share of all waiting by kMinNamedPercent of the run.
struct SlowRank {
  std::int32_t rank = 0;
  std::int32_t node_id = 0;
  std::string hostname;
  double lost_percent = 0.0;      // 100 * time the others waited for it / run time
  double last_share = 0.0;        // share of all segments it arrived last
  std::size_t last_segments = 0;  // segments it arrived last
  std::string kind;               // "slow" (same work, more time) or "loaded" (more work)
  double time_ratio = 0.0;        // its time outside MPI / the other ranks' median (NaN unknown)
  double work_ratio = 0.0;        // its work / the other ranks' median (NaN unknown)
};
struct SlowNode {
  std::int32_t node_id = 0;
  std::string hostname;
  std::size_t ranks = 0;
  double lost_percent = 0.0;
  double last_share = 0.0;
  std::size_t last_segments = 0;
  std::string kind;
  double time_ratio = 0.0;  // per-rank means of the node against the other nodes' median
  double work_ratio = 0.0;
};

// A contiguous window in which segments ran slower than their intrinsic time.
struct Episode {
  std::size_t first_segment = 0;
  std::size_t last_segment = 0;  // inclusive
  double start_s = 0.0;          // since MPI_Init
  double end_s = 0.0;
  double start_unix = 0.0;  // wall clock (NaN when the run's start is unknown)
  double end_unix = 0.0;
  double lost_percent = 0.0;        // primary charges inside the window / run time
  std::vector<std::int32_t> ranks;  // last at its delayed boundaries, most often first
};

struct ComponentShares {  // percent of the run time
  double compute = 0.0;
  double mpi = 0.0;
  double io = 0.0;
};

// Normalised speed (intrinsic / actual) per detail rank and time bin.
struct SpeedMap {
  std::vector<std::int32_t> ranks;  // rows
  std::vector<double> edges_s;      // bins + 1 edges, s since MPI_Init
  std::vector<double> speed;        // rows x bins, row-major; NaN where no usable segment
};

struct Diagnosis {
  bool available = false;            // false without an estimate or without detail ranks
  std::vector<SlowRank> slow_ranks;  // descending lost_percent
  std::vector<SlowNode> slow_nodes;
  std::vector<Episode> episodes;  // in time order
  ComponentShares run_components;
  ComponentShares lost_components;  // sums to about lost_percent
  SpeedMap speed;
  // Every rank, in rank order (for /analysis/diagnosis/ranks).
  std::vector<double> rank_last_share;
  std::vector<double> rank_lost_percent;
  std::vector<double> rank_time_ratio;
  std::vector<double> rank_work_ratio;
};

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
