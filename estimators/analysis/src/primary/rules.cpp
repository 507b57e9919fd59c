#include "rules.hpp"

#include <algorithm>
#include <numeric>

namespace tremor::analysis::detail {

namespace est = tremor::estimators;

// Slowing of the CPU itself (cache, memory bandwidth) inflates CPU time as
// well and is then not charged.
void apply_work_covariate(const std::vector<std::vector<double>>& work, std::span<const double> medians,
                          std::vector<std::vector<double>>& durations) {
  for (std::size_t i = 0; i < durations.size() && i < work.size(); ++i) {
    if (work[i].size() != durations[i].size() || work[i].empty()) continue;
    for (std::size_t j = 0; j < durations[i].size(); ++j) {
      const double excess_s = 1e-9 * (work[i][j] - medians[i]);
      if (excess_s > 0.0 && durations[i][j] > excess_s) durations[i][j] -= excess_s;
    }
  }
}

double intrinsic_floor(double median_work_ns) { return 1e-9 * median_work_ns; }

// A measured delay is read against the segment's own clean level, not its
// group's: one that reads more than the duration shows must not pull the
// anchor, and with it every other segment's charge. Its charge is bounded by
// the work floor anyway; the least share keeps a value the model can place.
double deconvolved_duration(double duration_s, double measured_s, double first_intrinsic_s) {
  return std::max({kLeastDeconvolvedShare * duration_s, duration_s - measured_s, std::min(duration_s, first_intrinsic_s)});
}

void interleaving_only(std::span<const std::span<const double>> durations, est::IntrinsicEstimate& estimate) {
  for (std::vector<double>& lost : estimate.lost) std::fill(lost.begin(), lost.end(), 0.0);
  for (std::vector<double>& probability : estimate.probability) std::fill(probability.begin(), probability.end(), 0.0);
  for (std::size_t i = 0; i < estimate.groups.size() && i < durations.size(); ++i) {
    est::GroupIntrinsic& group = estimate.groups[i];
    group.lost = 0.0;
    group.interfered_share = 0.0;
    if (!durations[i].empty())
      group.baseline =
          std::accumulate(durations[i].begin(), durations[i].end(), 0.0) / static_cast<double>(durations[i].size());
  }
  estimate.total_lost = 0.0;
  estimate.delay_probability = 0.0;
}

bool is_delayed(double probability, double lost_s) { return probability >= 0.5 && lost_s > 0.0; }

double add_run_floor(const SourceReading& floor, std::span<const double> duration_s, std::vector<double>& lost,
                     std::vector<std::uint8_t>& interfered) {
  const double charged = std::accumulate(lost.begin(), lost.end(), 0.0);
  const std::vector<double>& where = floor.delay_s;
  const double weight = std::accumulate(where.begin(), where.end(), 0.0);
  if (!(floor.total_s > charged) || !(weight > 0.0)) return 0.0;
  const double missing = floor.total_s - charged;
  double added = 0.0;
  for (std::size_t segment = 0; segment < where.size() && segment < lost.size(); ++segment) {
    const double extra = std::min(duration_s[segment] - lost[segment], missing * where[segment] / weight);
    if (!(extra > 0.0)) continue;
    lost[segment] += extra;
    added += extra;
    interfered[segment] = 1;
  }
  return added;
}

double work_on_critical_path(const RunData& run, std::span<const double> shared_work_s) {
  double work_s = 0.0;
  for (std::size_t s = 0; s < run.segments.work.size(); ++s)
    work_s += std::max(1e-9 * run.segments.work[s], s < shared_work_s.size() ? shared_work_s[s] : 0.0);
  return work_s;
}

est::LostInterval measured_only_interval(double measured_s, double apart_s, double level_sd_s) {
  return {std::max(0.0, measured_s - 2.0 * level_sd_s), measured_s + apart_s + 2.0 * level_sd_s};
}

void split_what(std::span<const double> lost_s, double shrink, std::vector<float>& io_stall_s,
                std::vector<float>& collective_wait_s) {
  const std::size_t n = lost_s.size();
  io_stall_s.resize(n, 0.0F);
  collective_wait_s.resize(n, 0.0F);
  for (std::size_t s = 0; s < n; ++s) {
    io_stall_s[s] = static_cast<float>(std::min(lost_s[s], shrink * io_stall_s[s]));
    collective_wait_s[s] = static_cast<float>(std::min(lost_s[s] - io_stall_s[s], shrink * collective_wait_s[s]));
  }
}

}  // namespace tremor::analysis::detail
