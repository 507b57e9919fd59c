// `tremor watch`: one refresh shown as a block redrawn on a terminal, one
// line per refresh elsewhere, a JSON Lines object (--json) or the Prometheus
// textfile (--prom, written beside and renamed over: never read half-written).
#include <signal.h>
#include <unistd.h>

#include <climits>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>

#include "cli_watch.hpp"
#include "tremor/json_text.hpp"

namespace tremor::cli::watch {
namespace {
using nlohmann::json;

std::string fixed(const json& value, int decimals) {
  if (!value.is_number()) return "?";
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", decimals, value.get<double>());
  return text;
}

std::string text_of(const json& value) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_number_integer() || value.is_number_unsigned()) return std::to_string(value.get<long long>());
  return "?";
}

std::string upper(std::string text) {
  for (char& c : text) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return text;
}

// The parts of a refresh, each a short phrase; joined by "  " on one line or
// one per line in the terminal's block.
std::vector<std::string> phrases(const json& r) {
  std::vector<std::string> out;
  out.push_back("tremor watch " + text_of(r.value("time_utc", json())) + "  " + text_of(r.value("stem", json())) +
                "  " + text_of(r.value("state", json())));
  if (r.contains("stalled_ranks") && !r["stalled_ranks"].empty()) {
    std::string ranks;
    for (const json& rank : r["stalled_ranks"]) ranks += (ranks.empty() ? "" : ",") + text_of(rank);
    out.push_back("no append for " + fixed(r.value("stalled_for_s", json()), 0) + " s from rank(s) " + ranks +
                  ": the job seems stalled or dead");
  }
  if (r.contains("note")) out.push_back(text_of(r["note"]));
  if (r.contains("headline_lines")) {
    for (const json& line : r["headline_lines"]) out.push_back(text_of(line));
    return out;
  }
  if (r.contains("problem")) {
    out.push_back("no figure yet: " + text_of(r["problem"]));
    return out;
  }
  if (!r.contains("segments")) return out;
  out.push_back("elapsed " + fixed(r.value("elapsed_s", json()), 0) + " s, " + text_of(r["segments"]) +
                " segments on every rank (" + fixed(r.value("run_time_s", json()), 1) + " s)");
  if (!r.value("estimate_possible", false)) {
    out.push_back("no estimate yet: " + text_of(r.value("no_estimate_reason", json())));
    return out;
  }
  const json& ci = r["lost_percent_ci"];
  out.push_back("lost " + fixed(r["lost_percent"], 1) + " % (95 % interval " + fixed(ci.is_array() ? ci[0] : json(), 1) +
                "-" + fixed(ci.is_array() ? ci[1] : json(), 1) + " %) " + upper(text_of(r["class"])));
  if (r["slow_rank"].is_object()) {
    const json& rank = r["slow_rank"];
    out.push_back("slow rank " + text_of(rank["rank"]) + " (" + text_of(rank["hostname"]) + ", " +
                  fixed(rank["lost_percent"], 1) + " %)");
  } else if (r.value("slowest_rank", json()).is_object()) {
    const json& rank = r["slowest_rank"];
    out.push_back("slowest rank " + text_of(rank["rank"]) + " (" + text_of(rank["hostname"]) + ", waited for " +
                  fixed(rank["impact_s"], 1) + " s)");
  }
  if (r["slow_node"].is_object()) {
    out.push_back("slow node " + text_of(r["slow_node"]["hostname"]) + " (" + fixed(r["slow_node"]["lost_percent"], 1) +
                  " %)");
  } else if (r.value("slowest_node", json()).is_object()) {
    out.push_back("slowest node " + text_of(r["slowest_node"]["hostname"]) + " (waited for " +
                  fixed(r["slowest_node"]["impact_s"], 1) + " s)");
  }
  if (r["open_episode"].is_object())
    out.push_back("episode open since " + fixed(r["open_episode"]["start_s"], 1) + " s (" +
                  text_of(r["open_episode"]["start_utc"]) + ")");
  if (r["components"].is_object()) {
    const json& lost = r["components"]["lost"];
    out.push_back("lost time: compute " + fixed(lost["compute"], 1) + " pp, MPI " + fixed(lost["mpi"], 1) +
                  " pp, I/O " + fixed(lost["io"], 1) + " pp");
  }
  return out;
}

// A label value escaped as the exposition format asks (\\, \" and \n).
std::string label(const std::string& value) {
  std::string out;
  for (const char c : value) {
    if (c == '\\') out += "\\\\";
    else if (c == '"') out += "\\\"";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

std::string sample(double value) {
  if (std::isnan(value)) return "NaN";
  char text[64];
  std::snprintf(text, sizeof text, "%.17g", value);
  return text;
}

// The temporary Prometheus file being written, removed by a signal that ends
// the watch meanwhile (only async-signal-safe calls in the handler).
char pending_temporary[PATH_MAX] = {};

void remove_pending_and_die(int signal_number) {
  if (pending_temporary[0] != '\0') unlink(pending_temporary);
  signal(signal_number, SIG_DFL);
  raise(signal_number);
}

}  // namespace

void remove_temporary_on_signals() {
  for (const int signal_number : {SIGTERM, SIGINT, SIGHUP}) signal(signal_number, remove_pending_and_die);
}

void show(Display& display, const json& refresh) {
  if (display.json) {
    std::cout << json_text(refresh) << '\n' << std::flush;
    return;
  }
  const std::vector<std::string> parts = phrases(refresh);
  if (display.terminal) {
    // Up to the previous block's first line, then clear to the screen's end.
    if (display.drawn > 0) std::cout << "\033[" << display.drawn << "F\033[J";
    for (const std::string& part : parts) std::cout << part << '\n';
    display.drawn = parts.size();
  } else {
    std::string line;
    for (const std::string& part : parts) line += (line.empty() ? "" : "  ") + part;
    std::cout << line << '\n';
  }
  std::cout.flush();
}

std::string prometheus_text(const json& r) {
  const std::string job = label(r.value("job", std::string()));
  std::ostringstream out;
  out << "# HELP tremor_lost_ratio Share of the run time lost to interference so far (host=\"all\": the whole job)\n"
      << "# TYPE tremor_lost_ratio gauge\n";
  if (r.value("estimate_possible", false) && r["lost_percent"].is_number()) {
    out << "tremor_lost_ratio{job=\"" << job << "\",host=\"all\"} " << sample(r["lost_percent"].get<double>() / 100.0)
        << '\n';
    for (const json& host : r.value("hosts", json::array()))
      out << "tremor_lost_ratio{job=\"" << job << "\",host=\"" << label(host["hostname"].get<std::string>()) << "\"} "
          << sample(host["lost_percent"].get<double>() / 100.0) << '\n';
  }
  out << "# HELP tremor_node_impact_seconds Time the run waited for the node at interfered boundaries so far\n"
      << "# TYPE tremor_node_impact_seconds gauge\n";
  if (r.contains("stragglers") && r["stragglers"].is_object()) {
    for (const json& node : r["stragglers"]["nodes"])
      out << "tremor_node_impact_seconds{job=\"" << job << "\",host=\"" << label(node["hostname"].get<std::string>())
          << "\"} " << sample(node["impact_s"].is_number() ? node["impact_s"].get<double>() : NAN) << '\n';
  }
  out << "# HELP tremor_segments_total Segments every rank has recorded so far\n"
      << "# TYPE tremor_segments_total counter\n";
  if (r.contains("segments") && r["segments"].is_number())
    out << "tremor_segments_total{job=\"" << job << "\"} " << r["segments"].get<std::uint64_t>() << '\n';
  return out.str();
}

bool write_and_rename(const std::filesystem::path& file, const std::filesystem::path& temporary, const json& refresh,
                      std::string& error);

bool write_prometheus(const std::filesystem::path& file, const json& refresh, std::string& error) {
  const std::filesystem::path temporary = file.string() + ".tmp-" + std::to_string(getpid());
  if (temporary.string().size() >= sizeof pending_temporary) {
    error = "the path " + temporary.string() + " is too long";
    return false;
  }
  sigset_t ending, previous;
  sigemptyset(&ending);
  for (const int signal_number : {SIGTERM, SIGINT, SIGHUP}) sigaddset(&ending, signal_number);
  pthread_sigmask(SIG_BLOCK, &ending, &previous);
  std::memcpy(pending_temporary, temporary.c_str(), temporary.string().size() + 1);
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  const bool written = write_and_rename(file, temporary, refresh, error);
  pthread_sigmask(SIG_BLOCK, &ending, &previous);
  pending_temporary[0] = '\0';
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  return written;
}

bool write_and_rename(const std::filesystem::path& file, const std::filesystem::path& temporary, const json& refresh,
                      std::string& error) {
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out << prometheus_text(refresh);
    out.flush();
    if (!out) {
      error = "cannot write " + temporary.string();
      std::error_code ignored;
      std::filesystem::remove(temporary, ignored);
      return false;
    }
  }
  if (std::rename(temporary.c_str(), file.c_str()) != 0) {
    error = "cannot rename " + temporary.string() + " to " + file.string() + ": " + std::strerror(errno);
    std::error_code ignored;
    std::filesystem::remove(temporary, ignored);
    return false;
  }
  return true;
}

}  // namespace tremor::cli::watch
