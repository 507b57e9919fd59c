// The rules of the primary estimate that the generative model alone does not
// give, one function each; each names the section of
// docs/statistics-primary.md ("Rules") that derives it.
#pragma once
#include <cstdint>
#include <span>
#include <vector>

#include "evidence.hpp"
#include "tremor/estimators/intrinsic.hpp"
#include "tremor/estimators/lost_interval.hpp"
#include "tremor/run_data.hpp"

namespace tremor::analysis::detail {

// A deconvolved duration keeps at least this share of its duration.
inline constexpr double kLeastDeconvolvedShare = 1e-3;

// Work covariate ("Rules": work covariate). With the CPU-time counter a
// segment that did more work than its group's median (`medians`, per group)
// is compared less that excess; `durations` and `work` are per group.
void apply_work_covariate(const std::vector<std::vector<double>>& work, std::span<const double> medians,
                          std::vector<std::vector<double>>& durations);

// Intrinsic floor ("Rules": intrinsic floor): a clean segment lasts at least
// its group's median CPU time (`median_work_ns`), s.
double intrinsic_floor(double median_work_ns);

// Deconvolution floor ("Rules": deconvolution floor): what the fit sees of a
// segment of duration `duration_s` with measured delay `measured_s`: the rest,
// never below its group's first-fit intrinsic time (nor its duration, if
// shorter), and at least kLeastDeconvolvedShare of the duration.
double deconvolved_duration(double duration_s, double measured_s, double first_intrinsic_s);

// Empty slab where ranks take turns ("Rules": interleaving only): the
// durations identify no delay, so nothing is charged from them and each
// group's intrinsic time is its mean (`durations`, per group).
void interleaving_only(std::span<const std::span<const double>> durations, estimators::IntrinsicEstimate& estimate);

// Interfered segment ("Rules": interfered): more likely delayed than not,
// with a positive posterior charge.
bool is_delayed(double probability, double lost_s);

// Run floor ("Rules": run floor): what the charges (`lost`, per segment) miss
// of `floor.total_s` goes where `floor.delay_s` puts it, up to each
// segment's duration; the segments it reaches are interfered. Returns the
// time added.
double add_run_floor(const SourceReading& floor, std::span<const double> duration_s, std::vector<double>& lost,
                     std::vector<std::uint8_t>& interfered);

// Critical-path work ("Rules": lost-time bound): per segment its median
// rank's CPU time, or on nodes whose ranks take turns their summed work over
// the node's CPUs (`shared_work_s`) if that is more; summed, s.
double work_on_critical_path(const RunData& run, std::span<const double> shared_work_s);

// Interval where ranks take turns ("Rules": measured-only interval): the
// measured delay less two level errors, to it plus what is reported apart
// plus two level errors.
estimators::LostInterval measured_only_interval(double measured_s, double apart_s, double level_sd_s);

// The What split ("What the lost time hit"): per segment, its I/O stall and
// then its collective's least wait, each shrunk with the charges (`shrink`)
// and at most what is left of its lost time.
void split_what(std::span<const double> lost_s, double shrink, std::vector<float>& io_stall_s,
                std::vector<float>& collective_wait_s);

}  // namespace tremor::analysis::detail
