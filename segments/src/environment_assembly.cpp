// The node and rank tables of a run's environment from every rank's
// collection (tremor/environment_assembly.hpp).
#include "tremor/environment_assembly.hpp"

#include <algorithm>
#include <map>
#include <set>

namespace tremor {
namespace {

std::string join_ranks(const std::vector<std::int32_t>& ranks) {
  std::string out;
  for (std::int32_t r : ranks) out += (out.empty() ? "" : ",") + std::to_string(r);
  return out;
}

// The physical core of each CPU from a node's core_cpus fact ("0,2;1,3").
std::map<int, int> core_of_cpu(const std::string& core_cpus) {
  std::map<int, int> core;
  if (is_unknown(core_cpus)) return core;
  int index = 0;
  std::string_view rest = core_cpus;
  while (!rest.empty()) {
    const std::size_t end = rest.find(';');
    std::vector<int> cpus;
    if (parse_cpu_list(rest.substr(0, end), cpus))
      for (int cpu : cpus) core[cpu] = index;
    ++index;
    rest.remove_prefix(end == std::string_view::npos ? rest.size() : end + 1);
  }
  return core;
}

// shares_cpu_with / shares_core_with of every rank, node by node.
void find_shared_cores(RunEnvironment& env, const std::vector<RankInfo>& ranks) {
  std::map<std::int32_t, std::vector<std::size_t>> by_node;
  for (std::size_t r = 0; r < ranks.size(); ++r) by_node[ranks[r].node_id].push_back(r);
  for (const auto& [node, members] : by_node) {
    const auto core = node >= 0 && static_cast<std::size_t>(node) < env.nodes.size()
                          ? core_of_cpu(env.nodes[static_cast<std::size_t>(node)].fact("core_cpus"))
                          : std::map<int, int>{};
    std::vector<std::vector<int>> cpus(members.size());
    std::vector<bool> known(members.size());
    for (std::size_t i = 0; i < members.size(); ++i) known[i] = parse_cpu_list(env.ranks[members[i]].affinity, cpus[i]);
    for (std::size_t i = 0; i < members.size(); ++i) {
      if (!known[i]) continue;
      std::vector<std::int32_t> same_cpu, same_core;
      std::set<int> my_cores;
      for (int cpu : cpus[i])
        if (const auto it = core.find(cpu); it != core.end()) my_cores.insert(it->second);
      for (std::size_t j = 0; j < members.size(); ++j) {
        if (j == i || !known[j]) continue;
        const bool overlap =
            std::ranges::any_of(cpus[j], [&](int cpu) { return std::ranges::binary_search(cpus[i], cpu); });
        const bool sibling = std::ranges::any_of(cpus[j], [&](int cpu) {
          const auto it = core.find(cpu);
          return it != core.end() && my_cores.contains(it->second);
        });
        if (overlap) {
          same_cpu.push_back(ranks[members[j]].rank);
        } else if (sibling) {
          same_core.push_back(ranks[members[j]].rank);
        }
      }
      env.ranks[members[i]].shares_cpu_with = join_ranks(same_cpu);
      env.ranks[members[i]].shares_core_with = join_ranks(same_core);
    }
  }
}

const std::string* find_fact(const std::vector<EnvironmentFact>& facts, std::string_view name) {
  for (const auto& [key, value] : facts)
    if (key == name) return &value;
  return nullptr;
}

}  // namespace

RunEnvironment assemble_environment(const std::vector<RankInfo>& ranks,
                                    const std::vector<ProcessEnvironment>& per_rank) {
  RunEnvironment env;
  std::int32_t node_count = 0;
  for (const RankInfo& info : ranks) node_count = std::max(node_count, info.node_id + 1);
  env.nodes.resize(static_cast<std::size_t>(node_count));
  for (NodeEnvironment& node : env.nodes) node.facts.fill(unknown_fact("not collected on this node"));
  std::vector<std::int32_t> first_rank(env.nodes.size(), -1);
  std::vector<bool> has_node_facts(env.nodes.size(), false);
  const auto empty = ProcessEnvironment{};
  auto collected = [&](std::size_t r) -> const ProcessEnvironment& {
    return r < per_rank.size() ? per_rank[r] : empty;
  };

  for (std::size_t r = 0; r < ranks.size(); ++r) {
    const RankInfo& info = ranks[r];
    if (info.node_id < 0) continue;
    const auto n = static_cast<std::size_t>(info.node_id);
    NodeEnvironment& node = env.nodes[n];
    const ProcessEnvironment& mine = collected(r);
    if (first_rank[n] < 0) {
      first_rank[n] = static_cast<std::int32_t>(r);
      node.hostname = info.hostname;
      for (std::string_view name : kProcessFacts)
        if (const std::string* value = find_fact(mine.process, name))
          node.facts[static_cast<std::size_t>(std::ranges::find(kNodeFacts, name) - kNodeFacts.begin())] = *value;
      for (const auto& [name, value] : mine.variables) env.variables.push_back({info.node_id, name, value});
    } else {
      // Process facts and variables that differ from the node's first rank.
      const ProcessEnvironment& first = collected(static_cast<std::size_t>(first_rank[n]));
      for (const auto& [name, value] : mine.process) {
        const std::string* reference = find_fact(first.process, name);
        if (reference == nullptr || *reference != value) env.differences.push_back({info.rank, name, value});
      }
      // A truncated list (a bounded gather) proves neither presence nor absence.
      if (!first.truncated)
        for (const auto& [name, value] : mine.variables) {
          const std::string* reference = find_fact(first.variables, name);
          if (reference == nullptr || *reference != value) env.differences.push_back({info.rank, name, value});
        }
      if (!mine.truncated && !first.truncated)
        for (const auto& [name, value] : first.variables)
          if (find_fact(mine.variables, name) == nullptr) env.differences.push_back({info.rank, name, "(unset)"});
    }
    if (!has_node_facts[n] && !mine.node.empty()) {
      has_node_facts[n] = true;
      for (std::size_t i = 0; i < kNodeFacts.size(); ++i) {
        if (std::ranges::find(kProcessFacts, kNodeFacts[i]) != kProcessFacts.end()) continue;
        const std::string* value = find_fact(mine.node, kNodeFacts[i]);
        node.facts[i] = value ? *value : unknown_fact("not collected");
      }
    }
    env.ranks.push_back(
        {info.rank, info.hostname, mine.affinity.empty() ? unknown_fact("not collected") : mine.affinity, "", ""});
  }
  find_shared_cores(env, ranks);
  return env;
}

}  // namespace tremor
