#include "environment_warnings.hpp"

#include "node_cpus.hpp"

#include <algorithm>
#include <map>
#include <string>

namespace tremor::analysis {
namespace {

// "a, b and 3 more"
std::string list_of(const std::vector<std::string>& items, std::size_t shown = 3) {
  std::string out;
  for (std::size_t i = 0; i < items.size() && i < shown; ++i) {
    if (i > 0) out += i + 1 == items.size() ? " and " : ", ";
    out += items[i];
  }
  if (items.size() > shown) out += " and " + std::to_string(items.size() - shown) + " more";
  return out;
}

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = std::min(text.find(separator, start), text.size());
    if (end > start) parts.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return parts;
}

struct NodeRanks {
  std::vector<std::int32_t> ranks;
  std::vector<std::int32_t> unpinned;
};

}  // namespace

std::vector<Warning> environment_warnings(const RunData& run) {
  std::vector<Warning> warnings;
  const RunEnvironment& env = run.environment;
  if (!env.recorded()) return warnings;

  std::map<std::string, std::string> unknown;  // fact -> first reason
  auto note_unknown = [&](const std::string& fact, const std::string& value, const std::string& host) {
    if (!is_unknown(value) || unknown.contains(fact)) return;
    std::string_view reason = value;
    if (reason.starts_with("unknown: ")) reason.remove_prefix(9);
    unknown[fact] = host + ": " + std::string(reason.empty() ? "not recorded" : reason);
  };

  std::vector<NodeRanks> per_node(env.nodes.size());
  for (std::size_t r = 0; r < env.ranks.size() && r < run.ranks.size(); ++r) {
    const std::int32_t node = run.ranks[r].node_id;
    if (node < 0 || static_cast<std::size_t>(node) >= env.nodes.size()) continue;
    NodeRanks& on_node = per_node[static_cast<std::size_t>(node)];
    const RankEnvironment& rank = env.ranks[r];
    on_node.ranks.push_back(rank.rank);
    std::vector<int> cpus;
    note_unknown("affinity", rank.affinity, rank.hostname);
    if (!parse_cpu_list(rank.affinity, cpus)) continue;
    const long cpu_count = count_fact(env.nodes[static_cast<std::size_t>(node)].fact("cpu_count"));
    if (cpu_count > 1 && static_cast<long>(cpus.size()) >= cpu_count) on_node.unpinned.push_back(rank.rank);
  }

  const std::vector<NodeCpus> loads = node_cpus(run);
  std::vector<std::string> governors, turbo, oversubscribed, smt_shared;
  std::vector<std::int32_t> unpinned;
  std::size_t ranks_seen = 0;
  for (std::size_t n = 0; n < env.nodes.size(); ++n) {
    const NodeEnvironment& node = env.nodes[n];
    const NodeRanks& on_node = per_node[n];
    ranks_seen += on_node.ranks.size();
    for (const char* fact : {"governor", "turbo", "cpu_count", "core_cpus"})
      note_unknown(fact, node.fact(fact), node.hostname);

    const std::string& governor = node.fact("governor");
    if (!is_unknown(governor)) {
      const auto names = split(governor, ',');
      if (std::ranges::any_of(names, [](const std::string& name) { return name != "performance"; }))
        governors.push_back(node.hostname + " (" + governor + ")");
    }
    if (node.fact("turbo") == "on") turbo.push_back(node.hostname);

    if (n < loads.size() && loads[n].oversubscribed())
      oversubscribed.push_back(node.hostname + " (" + std::to_string(loads[n].ranks) + " ranks on " +
                               std::to_string(loads[n].cpus) + " CPUs)");
    unpinned.insert(unpinned.end(), on_node.unpinned.begin(), on_node.unpinned.end());
  }
  for (const RankEnvironment& rank : env.ranks) {
    if (rank.shares_core_with.empty()) continue;
    smt_shared.push_back(std::to_string(rank.rank) + " with " + rank.shares_core_with);
  }

  auto warn = [&](std::string code, std::string message) { warnings.push_back({std::move(code), std::move(message)}); };
  if (!governors.empty())
    warn("environment_governor", "CPU frequency governor other than 'performance' on " + list_of(governors) +
                                     ": the clock follows the load, so segment times vary with it.");
  if (!turbo.empty())
    warn("environment_turbo", "Turbo boost is on on " + list_of(turbo) +
                                  ": the clock depends on temperature and on how many cores are busy, so "
                                  "times vary from run to run.");
  if (!unpinned.empty()) {
    std::vector<std::string> names;
    for (std::int32_t r : unpinned) names.push_back(std::to_string(r));
    warn("environment_unpinned", std::to_string(unpinned.size()) + " of " + std::to_string(ranks_seen) +
                                     " ranks are not pinned (their affinity is every CPU of the node): rank" +
                                     (unpinned.size() > 1 ? "s " : " ") + list_of(names, 8) +
                                     ". The scheduler may move them, which shows up as interference.");
  }
  if (!oversubscribed.empty())
    warn("environment_oversubscribed",
         "More ranks than CPUs on " + list_of(oversubscribed) +
             ": ranks take turns on the CPUs. With the CPU-time counter only measured delays are charged "
             "there; with a PAPI counter the turns show up as interference.");
  if (!smt_shared.empty())
    warn("environment_smt_shared",
         "Ranks share physical cores as SMT siblings (rank " + list_of(smt_shared) + "): each slows the other down.");
  if (!unknown.empty()) {
    std::vector<std::string> facts;
    for (const auto& [fact, reason] : unknown) facts.push_back(fact);
    warn("environment_unknown", "Could not read " + list_of(facts, 8) + " (e.g. " + unknown.begin()->second +
                                    "); no warning about " + (facts.size() > 1 ? "them" : "it") + " is possible.");
  }
  return warnings;
}

}  // namespace tremor::analysis
