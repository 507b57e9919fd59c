// Interference detection and run classification (docs/statistics.md#mad-rule,
// #continuous-interference, #classification).
//
// Two separate measures are reported for a group of comparable segments:
//  * 4·MAD interference: segments slower than median + factor·MAD are
//    interfered; their impact is the excess over that threshold.
//  * Continuous interference (our definition, not in the source): a slowdown
//    that hits *every* segment of a group moves the whole distribution, so the
//    4·MAD rule cannot see it. We measure it as the displacement of the group
//    median above the group's fastest segment, counted once per segment:
//        continuous_impact = n · (median − min).
//    The fastest segment is the best evidence of the undisturbed duration.
//    Natural jitter also separates median and min, so this is an upper bound
//    of persistent interference; it must be reported apart from the 4·MAD figure and never
//    added to it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace tremor::estimators {

struct MadOptions {
  double factor = 4.0;       ///< threshold = median + factor · MAD
  double minimum_mad = 0.0;  ///< optional guard (e.g. timer resolution); 0 = off, as in the source
};

struct MadInterference {
  double median = 0.0;
  double mad = 0.0;  ///< unscaled; max(MAD, minimum_mad)
  double threshold = 0.0;
  std::vector<std::uint8_t> interfered;  ///< per item: t > threshold (strict)
  std::vector<double> impact;            ///< per item: t − threshold when interfered, else 0
  double total_impact = 0.0;
  std::size_t interfered_count = 0;
};

/// 4·MAD rule over the durations of one group. An empty input gives zeros.
MadInterference detect_mad_interference(std::span<const double> durations, const MadOptions& options = {});

/// 100 · total_impact / run_time; 0 when run_time <= 0 or not finite.
double run_interference_percent(double total_impact, double run_time);

struct ContinuousInterference {
  double median = 0.0;
  double baseline = 0.0;  ///< fastest duration of the group
  double impact = 0.0;    ///< n · (median − baseline)
};
ContinuousInterference continuous_interference(std::span<const double> durations);

enum class InterferenceClass { low, medium, high };

struct ClassBoundaries {
  double medium_from = 7.5;  ///< x < 7.5 → low
  double high_above = 15.0;  ///< x > 15 → high; both boundaries are medium
};
InterferenceClass classify_interference(double percent, const ClassBoundaries& boundaries = {});
std::string_view to_string(InterferenceClass interference_class);

struct LogisticParameters {
  double steepness = 0.35;
  double midpoint = 11.25;
};
/// p = 1 / (1 + exp(−k(x − x0))), evaluated without overflow for any x.
double high_interference_probability(double percent, const LogisticParameters& parameters = {});

}  // namespace tremor::estimators
