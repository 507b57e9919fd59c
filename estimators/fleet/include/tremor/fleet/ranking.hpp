// The node ranking of `tremor fleet nodes`: a node's slow share against the
// fleet's, scored by the lower end of its 95 % Wilson interval so that one
// slow run in one never outranks seven in nine (docs/fleet.md).
#pragma once
#include <string>
#include <vector>

namespace tremor::fleet {

// Lower bound of the Wilson score interval of `successes` in `trials` (z = 1.96: 95 %); 0 for no trials.
double wilson_lower(long long successes, long long trials, double z = 1.959963984540054);

struct NodeCounts {
  std::string node;
  long long runs = 0;       // runs that used the node
  long long slow_runs = 0;  // runs in which it was the node the others waited for
  double lost_s = 0.0;      // time those runs lost waiting for it
  double first_unix = 0.0;  // first and last run start seen
  double last_unix = 0.0;
};

struct NodeScore {
  NodeCounts counts;
  double slow_share = 0.0;
  double wilson_low = 0.0;
  double baseline_share = 0.0;
  double score = 0.0;  // wilson_low - baseline_share
};

// Scores every node against the baseline (all slow node-runs over all
// node-runs), highest score first; ties by more slow runs, then by name.
std::vector<NodeScore> rank_nodes(const std::vector<NodeCounts>& nodes);

}  // namespace tremor::fleet
