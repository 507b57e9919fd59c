// The conditions a run was taken in (docs/schema.md, "/environment"): the
// machine (CPU, SMT, frequency governor and limits, turbo, kernel, OS), the
// libraries (MPI, PAPI, HDF5), the application binary, each rank's CPU
// affinity and the environment variables that change performance.
//
// Each process collects its facts once, at MPI_Init (environment_probe.hpp),
// as name/value strings; a fact that cannot be read holds "unknown: <reason>".
// Node facts come from one rank per node, process facts from every rank. The
// finalize gather and crash recovery both turn the per-rank collections into
// one RunEnvironment with assemble_environment() (environment_assembly.hpp).
#pragma once
#include <array>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tremor {

// A fact that could not be read: "unknown: <reason>".
std::string unknown_fact(std::string_view reason);
bool is_unknown(std::string_view value);

using EnvironmentFact = std::pair<std::string, std::string>;  // name, value

// Node facts, in the order of the /environment/nodes datasets. Frequencies in
// MHz, counts as decimal integers, smt and turbo "on" or "off"; core_cpus lists
// each physical core's logical CPUs ("0,4;1,5"); binary_* are those of the
// node's first rank (ranks that differ are listed in RunEnvironment::differences).
inline constexpr std::array<std::string_view, 19> kNodeFacts = {"cpu_model",
                                                                "cpu_count",
                                                                "core_count",
                                                                "core_cpus",
                                                                "smt",
                                                                "governor",
                                                                "frequency_min_mhz",
                                                                "frequency_max_mhz",
                                                                "frequency_current_mhz",
                                                                "turbo",
                                                                "kernel_release",
                                                                "os_release",
                                                                "mpi_library_version",
                                                                "papi_version",
                                                                "hdf5_version",
                                                                "binary_path",
                                                                "binary_size",
                                                                "binary_mtime",
                                                                "binary_build_id"};
// Collected by every rank (the node's first rank's values are its node's).
inline constexpr std::array<std::string_view, 4> kProcessFacts = {"binary_path", "binary_size", "binary_mtime",
                                                                  "binary_build_id"};

// What one process collected at MPI_Init.
struct ProcessEnvironment {
  std::vector<EnvironmentFact> node;       // kNodeFacts minus binary_*; empty unless this rank collected its node's
  std::vector<EnvironmentFact> process;    // kProcessFacts
  std::string affinity;                    // CPU list ("0-3,8") or unknown_fact(...)
  std::vector<EnvironmentFact> variables;  // performance-relevant environment variables, sorted by name
  bool truncated = false;                  // variables were cut to bound the gather
};

// One line per fact ("n.", "p.", "a", "v." prefixes); backslashes and line
// breaks inside values are escaped, so the text is one line per fact and can
// travel in the spill header. At most max_bytes: variables past it are left
// out and `truncated` is set.
std::string encode_environment(const ProcessEnvironment& environment,
                               std::size_t max_bytes = std::numeric_limits<std::size_t>::max());
// Tolerant: lines it does not understand are skipped.
ProcessEnvironment decode_environment(std::string_view text);

struct NodeEnvironment {
  std::string hostname;
  std::array<std::string, kNodeFacts.size()> facts;  // by kNodeFacts
  const std::string& fact(std::string_view name) const;
};

struct RankEnvironment {
  std::int32_t rank = 0;
  std::string hostname;
  std::string affinity;          // CPU list or "unknown: ..."
  std::string shares_cpu_with;   // ranks on the node whose affinity overlaps this one's ("1,3"), "" if none
  std::string shares_core_with;  // ranks with no common CPU but one on the same physical core, "" if none
};

struct NodeVariable {
  std::int32_t node = 0;  // index into RunEnvironment::nodes
  std::string name;
  std::string value;
};

// A process fact or variable of one rank that differs from its node's.
struct RankDifference {
  std::int32_t rank = 0;
  std::string name;
  std::string value;  // "(unset)" when the node has the variable and the rank not
};

struct RunEnvironment {
  std::vector<NodeEnvironment> nodes;  // by node id (RankInfo::node_id)
  std::vector<RankEnvironment> ranks;  // world_size entries
  std::vector<NodeVariable> variables;
  std::vector<RankDifference> differences;
  bool recorded() const { return !nodes.empty(); }
};

// "0-3,8,10-11" -> {0,1,2,3,8,10,11}; false on anything else (empty text too).
bool parse_cpu_list(std::string_view text, std::vector<int>& cpus);
// Sorted, deduplicated, ranges collapsed.
std::string format_cpu_list(std::vector<int> cpus);

}  // namespace tremor
