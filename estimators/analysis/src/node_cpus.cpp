#include "node_cpus.hpp"

#include <algorithm>
#include <set>
#include <string>

#include "tremor/environment.hpp"

namespace tremor::analysis {

long count_fact(const std::string& fact) {
  if (is_unknown(fact)) return -1;
  try {
    return std::stol(fact);
  } catch (...) {
    return -1;
  }
}

std::vector<NodeCpus> node_cpus(const RunData& run) {
  const RunEnvironment& env = run.environment;
  std::vector<NodeCpus> nodes(env.nodes.size());
  std::vector<std::set<int>> masks(nodes.size());
  std::vector<bool> masks_known(nodes.size(), true);
  std::vector<int> cpus;
  for (std::size_t r = 0; r < run.ranks.size(); ++r) {
    const std::int32_t node = run.ranks[r].node_id;
    if (node < 0 || static_cast<std::size_t>(node) >= nodes.size()) continue;
    const auto n = static_cast<std::size_t>(node);
    ++nodes[n].ranks;
    if (r >= env.ranks.size() || !parse_cpu_list(env.ranks[r].affinity, cpus)) {
      masks_known[n] = false;
      continue;
    }
    masks[n].insert(cpus.begin(), cpus.end());
  }
  for (std::size_t n = 0; n < nodes.size(); ++n) {
    if (masks_known[n] && !masks[n].empty()) {
      nodes[n].cpus = static_cast<long>(masks[n].size());
      continue;
    }
    nodes[n].cpus = std::max(0L, count_fact(env.nodes[n].fact("cpu_count")));
  }
  return nodes;
}

}  // namespace tremor::analysis
