// Rank 0's end-of-run analysis may use the CPUs of its node's other ranks:
// they wait for its outcome in MPI_Finalize, sleeping between polls
// (finalize_exchange.cpp), so their cores are idle. A launcher that binds
// each rank to one core (Open MPI with 2 ranks or fewer) would otherwise
// leave the analysis one thread (docs/analysis-time.md, Threads).
#pragma once

#include <sched.h>

#include <string>
#include <vector>

#include "tremor/run_data.hpp"

namespace tremor::interpose {

// The CPUs of the ranks on `rank`'s node (same host name), as the gathered
// environment recorded each rank's affinity at MPI_Init; empty when any of
// them is unknown.
inline std::vector<int> node_rank_cpus(const RunEnvironment& environment, std::int32_t rank) {
  std::vector<int> all;
  if (rank < 0 || static_cast<std::size_t>(rank) >= environment.ranks.size()) return {};
  const std::string& host = environment.ranks[static_cast<std::size_t>(rank)].hostname;
  for (const RankEnvironment& other : environment.ranks) {
    if (other.hostname != host) continue;
    std::vector<int> cpus;
    if (!parse_cpu_list(other.affinity, cpus)) return {};
    all.insert(all.end(), cpus.begin(), cpus.end());
  }
  return all;
}

// For its lifetime the calling thread (and the threads it starts, which
// inherit its mask) may run on `cpus` as well as on its own; the old mask is
// restored after. Nothing changes where the kernel refuses the mask.
class WidenedAffinity {
 public:
  explicit WidenedAffinity(const std::vector<int>& cpus) noexcept {
    CPU_ZERO(&old_);
    if (cpus.empty() || sched_getaffinity(0, sizeof old_, &old_) != 0) return;
    cpu_set_t wider = old_;
    for (const int cpu : cpus) {
      if (cpu >= 0 && cpu < CPU_SETSIZE) CPU_SET(cpu, &wider);
    }
    if (CPU_EQUAL(&wider, &old_)) return;
    widened_ = sched_setaffinity(0, sizeof wider, &wider) == 0;
  }
  ~WidenedAffinity() {
    if (widened_) sched_setaffinity(0, sizeof old_, &old_);
  }
  WidenedAffinity(const WidenedAffinity&) = delete;
  WidenedAffinity& operator=(const WidenedAffinity&) = delete;
  bool widened() const noexcept { return widened_; }

 private:
  cpu_set_t old_;
  bool widened_ = false;
};

}  // namespace tremor::interpose
