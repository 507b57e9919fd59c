#include "shared_turns.hpp"

#include <algorithm>
#include <cstdint>

namespace tremor::analysis::detail {

// Why: beside another process, ranks that take turns poll for a descheduled
// rank and lose more than the CPU time the process took
// (docs/statistics-primary.md, "Crowded nodes").
// Reference: the mean time of the group's segments outside the span the
// process shared, when there are a usable group's worth of them.
// Charge: the shared segments' times beyond it, summed with their signs (the
// job's own turns are no delays), at least the CPU time the process took;
// without a reference, the time beyond the ranks' work over the node's CPUs.
SharedTurnsLoss shared_turns_loss(std::span<const double> time_s, const std::vector<std::vector<std::size_t>>& modelled,
                                  const std::vector<std::vector<std::size_t>>& all, std::span<const double> foreign,
                                  std::span<const double> needed, std::size_t min_reference) {
  const std::size_t n = std::min(time_s.size(), foreign.size());
  SharedTurnsLoss result;
  result.loss_s.assign(n, 0.0);
  std::vector<double>& loss = result.loss_s;
  const auto shared = [&](std::size_t s) { return s < n && foreign[s] > kSharedCpuNoise * time_s[s]; };
  std::size_t first = n;
  std::size_t last = 0;
  for (std::size_t s = 0; s < n; ++s) {
    if (!shared(s)) continue;
    first = std::min(first, s);
    last = s;
  }
  if (first == n) return result;
  const auto inside = [&](std::size_t s) { return s >= first && s <= last; };
  const auto needs = [&](std::size_t s) { return s < needed.size() ? needed[s] : 0.0; };
  result.referenced.assign(n, 0);
  std::vector<std::uint8_t>& referenced = result.referenced;
  for (std::size_t g = 0; g < modelled.size() && g < all.size(); ++g) {
    double sum = 0.0;
    std::size_t count = 0;
    for (const std::size_t s : modelled[g]) {
      if (s >= n || inside(s)) continue;
      sum += time_s[s];
      ++count;
    }
    if (count == 0 || count < min_reference) continue;
    const double mean = sum / static_cast<double>(count);
    const auto beyond_reference = [&](std::size_t s) { return time_s[s] - std::max(mean, needs(s)); };
    double signed_sum = 0.0;  // beyond the reference, with signs
    double foreign_sum = 0.0;
    double positive_sum = 0.0;  // each at least its foreign CPU time
    for (const std::size_t s : all[g]) {
      if (s >= n) continue;
      referenced[s] = 1;
      if (!shared(s)) continue;
      const double beyond = beyond_reference(s);
      signed_sum += beyond;
      foreign_sum += foreign[s];
      positive_sum += std::max(foreign[s], beyond);
    }
    // Each shared segment keeps its foreign CPU time and a share of the rest.
    const double share = positive_sum > foreign_sum
                             ? std::clamp((signed_sum - foreign_sum) / (positive_sum - foreign_sum), 0.0, 1.0)
                             : 0.0;
    for (const std::size_t s : all[g]) {
      if (!shared(s)) continue;
      loss[s] = foreign[s] + share * std::max(0.0, beyond_reference(s) - foreign[s]);
    }
  }
  for (std::size_t s = first; s <= last; ++s) {
    if (!shared(s) || referenced[s]) continue;
    loss[s] = std::max(foreign[s], time_s[s] - needs(s));
    result.unreferenced_s += loss[s];
  }
  return result;
}

}  // namespace tremor::analysis::detail
