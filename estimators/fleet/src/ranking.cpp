#include "tremor/fleet/ranking.hpp"

#include <algorithm>
#include <cmath>

namespace tremor::fleet {

double wilson_lower(long long successes, long long trials, double z) {
  if (trials <= 0) return 0.0;
  const double n = static_cast<double>(trials);
  const double p = static_cast<double>(successes) / n;
  const double z2 = z * z;
  const double centre = p + z2 / (2.0 * n);
  const double margin = z * std::sqrt(p * (1.0 - p) / n + z2 / (4.0 * n * n));
  return std::max(0.0, (centre - margin) / (1.0 + z2 / n));
}

std::vector<NodeScore> rank_nodes(const std::vector<NodeCounts>& nodes) {
  long long runs = 0, slow_runs = 0;
  for (const NodeCounts& node : nodes) {
    runs += node.runs;
    slow_runs += node.slow_runs;
  }
  const double baseline = runs > 0 ? static_cast<double>(slow_runs) / static_cast<double>(runs) : 0.0;
  std::vector<NodeScore> scores;
  scores.reserve(nodes.size());
  for (const NodeCounts& node : nodes) {
    NodeScore score{node};
    score.slow_share = node.runs > 0 ? static_cast<double>(node.slow_runs) / static_cast<double>(node.runs) : 0.0;
    score.wilson_low = wilson_lower(node.slow_runs, node.runs);
    score.baseline_share = baseline;
    score.score = score.wilson_low - baseline;
    scores.push_back(std::move(score));
  }
  std::ranges::sort(scores, [](const NodeScore& a, const NodeScore& b) {
    if (a.score != b.score) return a.score > b.score;
    if (a.counts.slow_runs != b.counts.slow_runs) return a.counts.slow_runs > b.counts.slow_runs;
    return a.counts.node < b.counts.node;
  });
  return scores;
}

}  // namespace tremor::fleet
