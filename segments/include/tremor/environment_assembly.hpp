// One RunEnvironment from the per-rank collections (tremor/environment.hpp),
// for the finalize gather and crash recovery. Apart from environment.hpp as
// it needs the ranks' node numbering (RankInfo of run_data.hpp), which itself
// holds a RunEnvironment.
#pragma once
#include <vector>

#include "tremor/environment.hpp"
#include "tremor/run_data.hpp"

namespace tremor {

// Node and rank tables from every rank's collection (per_rank[r] of rank r;
// ranks from assign_nodes). Facts a node's ranks did not send are unknown.
RunEnvironment assemble_environment(const std::vector<RankInfo>& ranks,
                                    const std::vector<ProcessEnvironment>& per_rank);

}  // namespace tremor
