// How many CPUs each node gives the job, and whether the job puts more ranks
// on it than that (its ranks then take turns on the CPUs). One rule for the
// environment warning and for the measured delays.
#pragma once
#include <string>
#include <vector>

#include "tremor/run_data.hpp"

namespace tremor::analysis {

struct NodeCpus {
  long cpus = 0;   // the CPUs the job's ranks may run on; 0 when not known
  long ranks = 0;  // the job's ranks on the node
  bool oversubscribed() const { return cpus > 0 && ranks > cpus; }
};

// A count fact of /environment (`cpu_count`): its value, or -1 when unknown
// or not a number.
long count_fact(const std::string& fact);

// Per node of /environment/nodes: the union of its ranks' affinity masks when
// every mask is known, else the node's online CPU count (`cpu_count`).
std::vector<NodeCpus> node_cpus(const RunData& run);

}  // namespace tremor::analysis
