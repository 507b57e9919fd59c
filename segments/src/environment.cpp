// The run environment's model: the per-process text form and the assembly of
// node and rank tables (tremor/environment.hpp).
#include "tremor/environment.hpp"

#include <algorithm>
#include <charconv>
#include <map>
#include <set>

#include "tremor/run_data.hpp"

namespace tremor {
namespace {

constexpr std::string_view kUnknown = "unknown";

std::string escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else {
      out += c;
    }
  }
  return out;
}

std::string unescape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\\' || i + 1 == text.size()) {
      out += text[i];
      continue;
    }
    const char next = text[++i];
    out += next == 'n' ? '\n' : next == 'r' ? '\r' : next;
  }
  return out;
}

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

std::string unknown_fact(std::string_view reason) { return std::string(kUnknown) + ": " + std::string(reason); }

bool is_unknown(std::string_view value) { return value.empty() || value.starts_with(kUnknown); }

std::string encode_environment(const ProcessEnvironment& environment, std::size_t max_bytes) {
  std::string text;
  auto line = [&text](std::string_view prefix, std::string_view name, std::string_view value) {
    text.append(prefix).append(name).append("=").append(escape(value)).append("\n");
  };
  for (const auto& [name, value] : environment.node) line("n.", name, value);
  for (const auto& [name, value] : environment.process) line("p.", name, value);
  line("a", "", environment.affinity);
  bool truncated = environment.truncated;
  for (const auto& [name, value] : environment.variables) {
    const std::size_t before = text.size();
    line("v.", name, value);
    if (text.size() > max_bytes) {
      text.resize(before);
      truncated = true;
      break;
    }
  }
  if (truncated) text += "t=1\n";
  return text;
}

ProcessEnvironment decode_environment(std::string_view text) {
  ProcessEnvironment environment;
  environment.affinity = unknown_fact("not collected");
  while (!text.empty()) {
    const std::size_t newline = text.find('\n');
    const std::string_view line = text.substr(0, newline);
    text.remove_prefix(newline == std::string_view::npos ? text.size() : newline + 1);
    const std::size_t eq = line.find('=');
    if (eq == std::string_view::npos) continue;
    const std::string_view key = line.substr(0, eq);
    std::string value = unescape(line.substr(eq + 1));
    if (key.starts_with("n.") && key.size() > 2) {
      environment.node.emplace_back(std::string(key.substr(2)), std::move(value));
    } else if (key.starts_with("p.") && key.size() > 2) {
      environment.process.emplace_back(std::string(key.substr(2)), std::move(value));
    } else if (key.starts_with("v.") && key.size() > 2) {
      environment.variables.emplace_back(std::string(key.substr(2)), std::move(value));
    } else if (key == "a") {
      environment.affinity = std::move(value);
    } else if (key == "t") {
      environment.truncated = true;
    }
  }
  return environment;
}

const std::string& NodeEnvironment::fact(std::string_view name) const {
  // Never destroyed: read at an MPI_Finalize an exit-time destructor may call.
  static const std::string& missing = *new std::string(unknown_fact("no such fact"));
  for (std::size_t i = 0; i < kNodeFacts.size(); ++i)
    if (kNodeFacts[i] == name) return facts[i];
  return missing;
}

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

bool parse_cpu_list(std::string_view text, std::vector<int>& cpus) {
  cpus.clear();
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.remove_suffix(1);
  if (text.empty()) return false;
  constexpr int kMaxCpu = 1 << 20;
  while (!text.empty()) {
    const std::size_t comma = text.find(',');
    const std::string_view item = text.substr(0, comma);
    text.remove_prefix(comma == std::string_view::npos ? text.size() : comma + 1);
    const std::size_t dash = item.find('-');
    int first = 0, last = 0;
    const std::string_view low = item.substr(0, dash);
    const std::string_view high = dash == std::string_view::npos ? low : item.substr(dash + 1);
    const auto a = std::from_chars(low.data(), low.data() + low.size(), first);
    const auto b = std::from_chars(high.data(), high.data() + high.size(), last);
    if (low.empty() || high.empty() || a.ec != std::errc{} || a.ptr != low.data() + low.size() || b.ec != std::errc{} ||
        b.ptr != high.data() + high.size() || first < 0 || last < first || last >= kMaxCpu) {
      cpus.clear();
      return false;
    }
    for (int cpu = first; cpu <= last; ++cpu) cpus.push_back(cpu);
  }
  std::ranges::sort(cpus);
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  return true;
}

std::string format_cpu_list(std::vector<int> cpus) {
  std::ranges::sort(cpus);
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  std::string out;
  for (std::size_t i = 0; i < cpus.size();) {
    std::size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(cpus[i]);
    if (j > i) out += "-" + std::to_string(cpus[j]);
    i = j + 1;
  }
  return out;
}

}  // namespace tremor
