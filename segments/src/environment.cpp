// The run environment's model: the per-process text form and the CPU lists
// (tremor/environment.hpp).
#include "tremor/environment.hpp"

#include <algorithm>
#include <charconv>

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
