// Ranks taking turns on a node's CPUs beside another process: what their
// turns lost to it beyond the CPU time it took (docs/statistics-primary.md,
// "Ranks taking turns").
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace tremor::analysis::detail {

// Another process shared a segment's CPUs when it took more than this share
// of them there (`foreign` over its time): one read period of the thread
// clock over the reading window (docs/statistics-primary.md, "Crowded nodes").
inline constexpr double kSharedCpuNoise = 0.01;

// Per segment, the time lost beside another process on a node whose ranks
// take turns (0 where none): for the segments it shared (`foreign`: per
// segment the CPU time it took over the node's CPUs), their times (`time_s`:
// the ranks' mean own segment time, SharedNodeTime) beyond what they
// need, at least `needed` (per segment, its ranks' work over the node's CPUs:
// SharedNodeTime::work_s). Per group, `modelled` are the segments its mean is read
// from (the warm-up one left out; at least `min_reference` of them) and
// `all` those it applies to.
struct SharedTurnsLoss {
  std::vector<double> loss_s;              // per segment
  std::vector<std::uint8_t> referenced;    // per segment: its loss was read against its group's unshared segments
  double unreferenced_s = 0.0;             // summed over the segments charged with no reference
};
SharedTurnsLoss shared_turns_loss(std::span<const double> time_s, const std::vector<std::vector<std::size_t>>& modelled,
                                  const std::vector<std::vector<std::size_t>>& all, std::span<const double> foreign,
                                  std::span<const double> needed, std::size_t min_reference);

}  // namespace tremor::analysis::detail
